/* gst-zerocopy: the CPU backend's worker threads (zcparallel.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "zcparallel.h"

#include <condition_variable>
#include <mutex>
#include <vector>

namespace zc {
namespace detail {

namespace {

/* Threads started once per process and reused for every frame: starting
 * threads per call would allocate stacks per frame. One batch runs at a time
 * (concurrent callers take turns); the calling thread works on the batch
 * too, so a pool that could not start any thread still completes it. */
class WorkerPool
{
public:
  static WorkerPool &
  get()
  {
    static WorkerPool pool;
    return pool;
  }

  /* Runs fn(ctx, t) for every t in [0, n) and returns when all are done.
   * A plain function and context: nothing is allocated per call. */
  void
  run(size_t n, ShareTask fn, void *ctx)
  {
    std::lock_guard<std::mutex> turn(run_lock_);
    std::unique_lock<std::mutex> lk(m_);
    fn_ = fn;
    ctx_ = ctx;
    n_ = n;
    next_ = 0;
    pending_ = n;
    gen_++;
    cv_work_.notify_all();
    work(lk, gen_);
    cv_done_.wait(lk, [this] { return pending_ == 0; });
    fn_ = nullptr;
  }

  ~WorkerPool()
  {
    {
      std::lock_guard<std::mutex> lk(m_);
      quit_ = true;
    }
    cv_work_.notify_all();
    for (std::thread &t : threads_)
      t.join();
  }

private:
  WorkerPool()
  {
    unsigned n = std::thread::hardware_concurrency();
    for (unsigned i = 1; i < n; i++) {
      try {
        threads_.emplace_back([this] { loop(); });
      } catch (...) {
        break; /* fewer workers; the caller picks up the rest */
      }
    }
  }

  /* Takes shares of batch `gen` until none is left; m_ held on entry/exit. */
  void
  work(std::unique_lock<std::mutex> &lk, uint64_t gen)
  {
    while (gen_ == gen && next_ < n_) {
      size_t t = next_++;
      ShareTask fn = fn_;
      void *ctx = ctx_;
      lk.unlock();
      fn(ctx, t);
      lk.lock();
      if (--pending_ == 0)
        cv_done_.notify_all();
    }
  }

  void
  loop()
  {
    std::unique_lock<std::mutex> lk(m_);
    uint64_t seen = gen_;
    for (;;) {
      cv_work_.wait(lk, [&] { return quit_ || gen_ != seen; });
      if (quit_)
        return;
      seen = gen_;
      work(lk, seen);
    }
  }

  std::mutex run_lock_;
  std::mutex m_;
  std::condition_variable cv_work_;
  std::condition_variable cv_done_;
  ShareTask fn_ = nullptr;
  void *ctx_ = nullptr;
  size_t n_ = 0;
  size_t next_ = 0;
  size_t pending_ = 0;
  uint64_t gen_ = 0;
  bool quit_ = false;
  std::vector<std::thread> threads_;
};

} // namespace

void
run_shares(size_t n, ShareTask fn, void *ctx)
{
  WorkerPool::get().run(n, fn, ctx);
}

} // namespace detail
} // namespace zc

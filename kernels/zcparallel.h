/* gst-zerocopy: the CPU backend's split of a frame between threads.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Private to kernels/. The work of a call is cut into shares run by
 * worker threads started once per process (one per core besides the
 * caller, zcparallel.cpp) and by the calling thread, which returns when
 * all are done. Rows (of pixels, of blocks, of bands) are cut into
 * contiguous shares. The output never depends on the cut.
 */
#ifndef GST_ZC_KERNELS_PARALLEL_H
#define GST_ZC_KERNELS_PARALLEL_H

#include <cstddef>
#include <cstdint>
#include <thread>

namespace zc {
namespace detail {

/* Threads for a job of `rows` rows costing about `work_per_row` each (any
 * unit) when a thread is worth `min_work` of them: n_threads (0 = all
 * cores), at most one per row and one per min_work. */
inline unsigned
parallel_threads(int64_t rows, unsigned n_threads, int64_t work_per_row,
                 int64_t min_work)
{
  int64_t n = n_threads ? n_threads : std::thread::hardware_concurrency();
  if (n < 1)
    n = 1;
  if (rows < n)
    n = rows;
  if (min_work > 0 && work_per_row > 0) {
    const int64_t worth = (rows * work_per_row + min_work - 1) / min_work;
    if (worth < n)
      n = worth;
  }
  return n < 1 ? 1u : (unsigned)n;
}

using ShareTask = void (*)(void *ctx, size_t share);

/* Runs fn(ctx, t) for every t in [0, n) on the worker threads and the
 * calling thread, and returns when all are done: nothing is started or
 * allocated per call. One call at a time runs (concurrent callers take
 * turns); a share must not call it again. */
void run_shares(size_t n, ShareTask fn, void *ctx);

/* fn(begin, end) over [0, rows), cut into `threads` shares
 * (parallel_threads()). */
template <class F>
void
parallel_rows(int rows, unsigned threads, const F &fn)
{
  if (threads <= 1 || rows <= 1) {
    if (rows > 0)
      fn(0, rows);
    return;
  }
  struct Cut
  {
    const F *fn;
    int64_t rows;
    unsigned n;
  } cut{&fn, rows, threads};
  run_shares(threads, [](void *ctx, size_t t) {
    const Cut *c = static_cast<const Cut *>(ctx);
    (*c->fn)((int)(c->rows * (int64_t)t / c->n),
             (int)(c->rows * (int64_t)(t + 1) / c->n));
  }, &cut);
}

} // namespace detail
} // namespace zc

#endif /* GST_ZC_KERNELS_PARALLEL_H */

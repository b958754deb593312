/* gst-zerocopy: the CPU backend's split of a frame between threads.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Private to kernels/. Rows (of pixels, of blocks, of bands) are cut into
 * contiguous shares, one per thread started for the call; the calling
 * thread takes the last share. The output never depends on the split.
 */
#ifndef GST_ZC_KERNELS_PARALLEL_H
#define GST_ZC_KERNELS_PARALLEL_H

#include <cstdint>
#include <thread>
#include <vector>

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

/* fn(begin, end) over [0, rows) on `threads` threads (parallel_threads()).
 * A thread that cannot be started has its share run by the caller. */
template <class F>
void
parallel_rows(int rows, unsigned threads, const F &fn)
{
  if (threads <= 1 || rows <= 1) {
    if (rows > 0)
      fn(0, rows);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  int next = 0;
  for (unsigned t = 0; t < threads; t++) {
    const int end = (int)((int64_t)rows * (t + 1) / threads);
    const int begin = next;
    next = end;
    if (t + 1 == threads) {
      fn(begin, end);
      break;
    }
    try {
      pool.emplace_back([&fn, begin, end] { fn(begin, end); });
    } catch (...) {
      fn(begin, end);
    }
  }
  for (std::thread &th : pool)
    th.join();
}

} // namespace detail
} // namespace zc

#endif /* GST_ZC_KERNELS_PARALLEL_H */

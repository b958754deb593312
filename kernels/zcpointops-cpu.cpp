/* gst-zerocopy: the CPU point pass (apply_lut_cpu*()).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "zcpointops.h"
#include "zcpointops-common.h"
#include "zcparallel.h"

#include <thread>

namespace zc {

namespace {

/* Below this many bytes per share, handing work to a pool thread (a
 * wake-up) costs more than the work it takes over (a table look-up a byte
 * is cheap). */
constexpr size_t kMinBytesPerThread = 256 * 1024;

constexpr unsigned kMaxPlanes = 3;

size_t
job_bytes(const PlaneJob &job)
{
  return (size_t)job.rows * job.row_bytes;
}

void
apply_rows(const PlaneJob &job, const LutSet &luts, uint32_t first_row,
           uint32_t end_row)
{
  const uint8_t *tables = &luts.lut[0][0];
  const uint32_t n = job.row_bytes;

  for (uint32_t r = first_row; r < end_row; r++) {
    const uint8_t *s = job.src + (size_t)r * job.src_stride;
    uint8_t *d = job.dst + (size_t)r * job.dst_stride;
    uint32_t x = 0;

    /* Unrolled by 4 so that each table index is a constant. In place, each
     * byte is read before it is written and by the same iteration. */
    for (; x + 4 <= n; x += 4) {
      uint8_t b0 = s[x], b1 = s[x + 1], b2 = s[x + 2], b3 = s[x + 3];
      d[x] = detail::lut_apply_byte(tables, 0, b0);
      d[x + 1] = detail::lut_apply_byte(tables, 1, b1);
      d[x + 2] = detail::lut_apply_byte(tables, 2, b2);
      d[x + 3] = detail::lut_apply_byte(tables, 3, b3);
    }
    for (; x < n; x++)
      d[x] = detail::lut_apply_byte(tables, x, s[x]);
  }
}

/* The planes seen as one sequence of rows, cut by byte count: a share
 * [begin, end) owns every row whose first byte (counted in that sequence)
 * falls inside it. Adjacent shares thus partition the rows exactly. */
void
apply_share(const PlaneJob *jobs, const LutSet *luts, unsigned n_planes,
            size_t begin, size_t end)
{
  size_t base = 0;

  for (unsigned i = 0; i < n_planes; i++) {
    const PlaneJob &job = jobs[i];
    const size_t rb = job.row_bytes;
    const size_t bytes = job_bytes(job);

    if (bytes > 0 && begin < base + bytes && end > base) {
      /* First row starting at or after `begin`, first row at or after `end`. */
      size_t r0 = begin > base ? (begin - base + rb - 1) / rb : 0;
      size_t r1 = end - base >= bytes ? job.rows : (end - base + rb - 1) / rb;
      if (r0 < r1)
        apply_rows(job, luts[i], (uint32_t)r0, (uint32_t)r1);
    }
    base += bytes;
  }
}

/* Where share t of n starts (share n starts at total): as even as integer
 * division allows, without overflow. */
size_t
share_edge(size_t total, size_t n, size_t t)
{
  return total / n * t + total % n * t / n;
}


} // namespace

void
apply_lut_cpu_planes(const PlaneJob *jobs, const LutSet *luts,
                     unsigned n_planes, unsigned n_threads)
{
  if (!jobs || !luts || n_planes == 0 || n_planes > kMaxPlanes)
    return;

  size_t total = 0;
  size_t total_rows = 0;
  for (unsigned i = 0; i < n_planes; i++) {
    if (!detail::plane_job_is_valid(jobs[i]))
      return;
    total += job_bytes(jobs[i]);
    if (job_bytes(jobs[i]) > 0)
      total_rows += jobs[i].rows;
  }
  if (total == 0)
    return;

  size_t n = n_threads;
  if (n == 0)
    n = std::thread::hardware_concurrency();
  if (n == 0)
    n = 1;
  if (n > total_rows)
    n = total_rows;
  if (n > 1) {
    size_t worth = (total + kMinBytesPerThread - 1) / kMinBytesPerThread;
    if (n > worth)
      n = worth;
  }

  if (n <= 1) {
    apply_share(jobs, luts, n_planes, 0, total);
    return;
  }

  struct Batch
  {
    const PlaneJob *jobs;
    const LutSet *luts;
    unsigned n_planes;
    size_t total, n;
  } batch{jobs, luts, n_planes, total, n};
  detail::run_shares(n, [](void *ctx, size_t t) {
    auto *b = static_cast<Batch *>(ctx);
    apply_share(b->jobs, b->luts, b->n_planes, share_edge(b->total, b->n, t),
                share_edge(b->total, b->n, t + 1));
  }, &batch);
}

void
apply_lut_cpu(const PlaneJob &job, const LutSet &luts, unsigned n_threads)
{
  apply_lut_cpu_planes(&job, &luts, 1, n_threads);
}

} // namespace zc

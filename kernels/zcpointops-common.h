/* gst-zerocopy: the per-byte step shared by the CPU and CUDA point passes.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Private to kernels/. Both zcpointops-cpu.cpp and zcpointops.cu go through
 * these helpers, so the two backends cannot drift apart.
 */
#ifndef GST_ZC_KERNELS_POINTOPS_COMMON_H
#define GST_ZC_KERNELS_POINTOPS_COMMON_H

#include <cstdint>

#include "zcpointops.h"

#ifdef __CUDACC__
#define ZC_HD __host__ __device__
#else
#define ZC_HD
#endif

namespace zc {
namespace detail {

/* `tables` points at 4 consecutive 256-byte tables (a LutSet's lut[0..3], in
 * host or shared memory); `offset` is the byte's offset from its row start. */
ZC_HD inline uint8_t
lut_apply_byte(const uint8_t *tables, uint32_t offset, uint8_t v)
{
  return tables[((offset & 3u) << 8) | v];
}

/* Four bytes at a row offset that is a multiple of 4, packed as a
 * little-endian word (byte at the lowest address in bits 0..7), which is
 * what a 32-bit load yields on every host and GPU CUDA runs on. */
ZC_HD inline uint32_t
lut_apply_word(const uint8_t *tables, uint32_t w)
{
  return uint32_t(lut_apply_byte(tables, 0, uint8_t(w)))
         | uint32_t(lut_apply_byte(tables, 1, uint8_t(w >> 8))) << 8
         | uint32_t(lut_apply_byte(tables, 2, uint8_t(w >> 16))) << 16
         | uint32_t(lut_apply_byte(tables, 3, uint8_t(w >> 24))) << 24;
}

/* The PlaneJob rules of zcpointops.h, checked the same way by both
 * backends. An empty job (no rows or no bytes per row) is valid. */
inline bool
plane_job_is_valid(const PlaneJob &job)
{
  if (job.rows == 0 || job.row_bytes == 0)
    return true;
  if (!job.src || !job.dst)
    return false;
  if (job.rows > 1
      && (job.src_stride < job.row_bytes || job.dst_stride < job.row_bytes))
    return false;
  if (job.src == job.dst && job.src_stride != job.dst_stride)
    return false;
  return true;
}

} // namespace detail
} // namespace zc

#endif /* GST_ZC_KERNELS_POINTOPS_COMMON_H */

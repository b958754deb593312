/* gst-zerocopy: per-byte point operations (brightness, contrast, gamma,
 * invert) as 256-entry lookup tables, applied on the CPU or with CUDA.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Pure compute: no GStreamer headers. The CPU and CUDA paths index the same
 * tables through the same helper (zcpointops-common.h), so their output is
 * bit-identical for any input.
 *
 * Builds with a plain C++17 compiler; the CUDA entry points (and the CUDA
 * runtime header they need) appear only when GST_ZC_HAVE_CUDA is non-zero.
 */
#ifndef GST_ZC_KERNELS_POINTOPS_H
#define GST_ZC_KERNELS_POINTOPS_H

#include <cstddef>
#include <cstdint>

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace zc {

/* Parameters of zcfilter's point operation. The one definition of its
 * arithmetic, for an input byte v (0..255), all in double precision:
 *
 *   x = v / 255.0;
 *   y = (x - 0.5) * contrast + 0.5 + brightness;
 *   y = clamp(y, 0, 1);
 *   y = pow(y, 1.0 / gamma);
 *   if (invert) y = 1.0 - y;
 *   out = (uint8_t) floor(y * 255.0 + 0.5)
 *
 * Meaningful ranges: gamma > 0 and finite, the others finite. Outside them
 * build_point_lut() still yields a table (a NaN after clamp counts as 0, a
 * result of pow() above 1 counts as 1) instead of undefined behaviour. */
struct PointParams
{
  double brightness = 0.0;
  double contrast = 1.0;
  double gamma = 1.0;
  bool invert = false;
};

/* Fills lut[v] with the formula above for every v. Host only. */
void build_point_lut(const PointParams &p, uint8_t lut[256]);

/* lut[v] = v. */
void build_identity_lut(uint8_t lut[256]);

/* lut[v] = 255 - v. */
void build_invert_lut(uint8_t lut[256]);

/* True when build_point_lut(p) maps every v to itself (computed by building
 * the table and comparing it, so rounding is taken into account): the
 * caller may then skip the pass altogether. */
bool point_params_are_identity(const PointParams &p);

/* Four tables for one plane: byte k of a row (k counted from the row start)
 * goes through lut[k % 4]. For RGBA-like packed formats that is one table
 * per channel; for single-channel planes fill all four with the same table. */
struct LutSet
{
  uint8_t lut[4][256];
};

/* One plane: `rows` rows of `row_bytes` bytes, the first at src (dst), the
 * next one `src_stride` (`dst_stride`) bytes further. Bytes between
 * row_bytes and the stride are never read nor written.
 *
 * src may equal dst (in place); then the strides must be equal too. Apart
 * from that exact case the two regions must not overlap. Out of place, the
 * strides may differ. A stride must be >= row_bytes when rows > 1. */
struct PlaneJob
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_stride;
  size_t dst_stride;
  uint32_t row_bytes;
  uint32_t rows;
};

/* Applies `luts` to one plane on the CPU and returns when done.
 * n_threads: 0 = std::thread::hardware_concurrency(), 1 = only the calling
 * thread; the count is lowered for small planes (fewer rows than threads,
 * or too few bytes for a thread to pay off). The work is split into that
 * many shares, run by a process-wide pool of threads started on first use
 * (never per call) together with the calling thread. A job that breaks the
 * PlaneJob rules (null pointer, stride < row_bytes) is left untouched. */
void apply_lut_cpu(const PlaneJob &job, const LutSet &luts, unsigned n_threads);

/* Same for up to 3 planes, jobs[i] going through luts[i], in one pass
 * (one set of threads shared by all planes). n_planes > 3 does nothing. */
void apply_lut_cpu_planes(const PlaneJob *jobs, const LutSet *luts,
                          unsigned n_planes, unsigned n_threads);

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
/* The most planes apply_lut_cuda_planes() takes in one launch. */
constexpr unsigned kMaxLutPlanes = 3;

/* Enqueues the pass over one plane on `stream` on the current device and
 * returns at once, without synchronising. src/dst are device-accessible
 * pointers: device memory, managed memory, or the device pointer of mapped
 * pinned host memory (cudaHostGetDevicePointer).
 *
 * Returns: cudaSuccess, the error of a CUDA call made to prepare the launch,
 * cudaErrorInvalidValue for a job that breaks the PlaneJob rules or is larger
 * than 2^31 work items (2 GiB at worst), or the launch error
 * (cudaGetLastError() right after the launch). Errors of the kernel's
 * execution surface at the next synchronisation, as always with CUDA. Zero
 * rows or zero row_bytes: returns cudaSuccess and enqueues nothing. */
cudaError_t apply_lut_cuda(const PlaneJob &job, const LutSet &luts,
                           cudaStream_t stream);

/* Up to kMaxLutPlanes planes in ONE launch (NV12: 2 jobs, I420: 3 jobs,
 * RGBA: 1 job), jobs[i] going through luts[i]. Empty jobs are skipped;
 * returns as apply_lut_cuda(), and cudaErrorInvalidValue for n_planes == 0
 * or > kMaxLutPlanes. */
cudaError_t apply_lut_cuda_planes(const PlaneJob *jobs, const LutSet *luts,
                                  unsigned n_planes, cudaStream_t stream);
#endif

} // namespace zc

#endif /* GST_ZC_KERNELS_POINTOPS_H */

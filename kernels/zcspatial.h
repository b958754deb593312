/* gst-zerocopy: spatial video effects (gaussian blur, unsharp mask, sobel
 * edges) on the CPU or with CUDA.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Pure compute: no GStreamer headers. Both backends run the same
 * __host__ __device__ arithmetic (zcspatial-common.h), in integers only,
 * so the CPU and CUDA outputs are bit-identical for any input.
 *
 * What is filtered, per format:
 *  - packed RGB (RGBA ... xBGR, RGB, BGR): R, G and B, each on its own; the
 *    alpha or padding byte is copied from the source;
 *  - GRAY8, GRAY16_LE: the one channel;
 *  - Y'CbCr (NV12, NV21, I420, YV12, Y42B, Y444, YUY2, UYVY, P010_10LE,
 *    I420_10LE): blur filters luma and both chroma planes (chroma with sigma
 *    divided by the subsampling factor on each axis: sigma / 2 horizontally
 *    for 4:2:2 and 4:2:0, sigma / 2 vertically for 4:2:0); sharpen filters
 *    luma and copies chroma; edges filters luma and sets chroma to neutral
 *    (128, or 512 at 10 bits).
 * Sample values: 8-bit samples as they are; GRAY16_LE 16 bits; P010_10LE
 * the top 10 bits of each little-endian word (the low 6 are ignored and
 * written as 0); I420_10LE the low 10 bits (the top 6 ignored, written as
 * 0). Copied samples (alpha, padding, chroma in sharpen) are copied bit for
 * bit. Bytes that are no sample of the picture (row padding past the row
 * size, the unused luma byte of an odd-width YUY2/UYVY frame's last
 * macropixel) are never written.
 *
 * The arithmetic, with D the sample depth (8, 10 or 16 bits), m = 2^D - 1
 * and every border clamp-to-edge (a coordinate outside the plane reads the
 * nearest edge sample):
 *
 * Gaussian taps (blur, and the unsharp mask's blur): for sigma s > 0 the
 * radius is r = ceil(3 s) (1..48); w[t] = round(65536 g(t) / sum g), g(t) =
 * exp(-t^2 / (2 s^2)) for |t| <= r, and the centre tap absorbs the rounding
 * remainder so that the 2r + 1 integer weights sum to exactly 65536.
 * Separable, horizontal then vertical, in unsigned 32-bit integers:
 *   H(x, y) = sum_t w[t] v(x + t, y)                  (16 fraction bits)
 *   I(x, y) = (H + 2^(D-1)) >> D                      (16-bit intermediate,
 *                                                      16 - D fraction bits)
 *   V(x, y) = sum_t w[t] I(x, y + t)                  (32 - D fraction bits)
 *   blur    = min(m, (V + 2^(31-D)) >> (32-D))        (round half up)
 * None of these sums can overflow 32 bits.
 *
 * Unsharp mask, A = round(256 amount) (0..2048), with the blur V above
 * taken at 8 fraction bits, B8 = (V + 2^(23-D)) >> (24-D):
 *   out = clamp(v + floor((A ((v << 8) - B8) + 2^15) / 2^16), 0, m)
 * i.e. v + amount (v - blur(v)) rounded half up, computed in 64 bits.
 *
 * Sobel: gx = (v[x+1][y-1] + 2 v[x+1][y] + v[x+1][y+1]) - (same at x-1),
 * gy = (v[x-1][y+1] + 2 v[x][y+1] + v[x+1][y+1]) - (same at y-1);
 *   out = min(m, (isqrt(gx^2 + gy^2) + 2) >> 2)
 * with isqrt the exact integer square root: round(sqrt(gx^2 + gy^2) / 4),
 * clamped to m (only diagonal edges steeper than m / sqrt 2 saturate).
 *
 * Builds with a plain C++17 compiler; the CUDA entry point appears only when
 * GST_ZC_HAVE_CUDA is non-zero.
 */
#ifndef GST_ZC_KERNELS_SPATIAL_H
#define GST_ZC_KERNELS_SPATIAL_H

#include "zcconvert.h"

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace zc {

/* What zcfilter's spatial stage does; all off by default. Valid ranges are
 * checked whether or not the effect is on (NaN and infinities are
 * invalid). */
struct SpatialParams
{
  float blur_sigma = 0.0f;    /* gaussian blur, 0 = off, valid 0..16 */
  float sharpen = 0.0f;       /* unsharp-mask amount, 0 = off, valid 0..8 */
  float sharpen_sigma = 1.0f; /* sigma of the unsharp mask's blur, 0.1..16 */
  bool edges = false;         /* sobel gradient magnitude */
};

/* True when at least one effect is on (blur_sigma > 0, sharpen > 0 or
 * edges): otherwise the spatial stage is an identity the caller may skip. */
bool spatial_is_active(const SpatialParams &p);

/* Number of effects that are on (0..3): one pass each. */
int spatial_n_passes(const SpatialParams &p);

/* Applies the effects that are on, in the order blur, sharpen, edges, from
 * src into dst on the CPU, and returns when done. With no effect on, dst
 * becomes a copy of src. src, dst and, when spatial_n_passes(p) > 1,
 * scratch (ignored otherwise, may be null) have the same format and size
 * and must not overlap. n_threads: 0 = std::thread::hardware_concurrency(),
 * 1 = only the calling thread; the output does not depend on it.
 *
 * Returns: false, writing nothing, when the request is invalid: a frame
 * empty, above 65536 on a side, with a null plane or a stride below its row
 * size; formats or sizes that differ; a missing scratch frame; overlapping
 * frames; a parameter out of its range. */
bool spatial_cpu(const FrameDesc &src, const FrameDesc &dst,
                 const FrameDesc *scratch, const SpatialParams &p,
                 unsigned n_threads);

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
/* Enqueues the effects on `stream` and returns at once: one launch per
 * effect and plane (a copy per plane when no effect is on), nothing
 * allocated, no synchronisation. Plane pointers must be device-accessible.
 *
 * Returns: cudaErrorInvalidValue where spatial_cpu() would return false
 * (nothing enqueued), else the first launch error (cudaGetLastError() after
 * each launch). */
cudaError_t spatial_cuda(const FrameDesc &src, const FrameDesc &dst,
                         const FrameDesc *scratch, const SpatialParams &p,
                         cudaStream_t stream);
#endif

} // namespace zc

#endif /* GST_ZC_KERNELS_SPATIAL_H */

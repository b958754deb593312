/* gst-zerocopy: one-pass video conversion (format, colour matrix and range,
 * crop, orientation, nearest, bilinear or bicubic scaling, borders) on the
 * CPU or with CUDA.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Pure compute: no GStreamer headers. Every output block (a pixel, or the
 * 2x1 / 2x2 pixels sharing a chroma sample of a subsampled output) is
 * produced by the same __host__ __device__ code (zcconvert-common.h) on
 * both backends, in integer arithmetic only, so the CPU and CUDA outputs
 * are bit-identical.
 *
 * At the same size, without crop, orientation, placement or effects, the
 * output is what GStreamer 1.22's videoconvert outputs with dither=none
 * (its GstVideoConverter: default options but linear resampling of at
 * most 2 taps, one thread; chroma site "none" on both sides), bit for bit
 * for every pair of the formats below, odd sizes included
 * (tests/kernels/test-convert.cpp checks all 22 x 22 pairs on random
 * frames, within 1 code value on 8-bit outputs, exactly on deeper ones).
 * Like videoconvert, that takes one of two routes, chosen in the plan:
 *
 * A. videoconvert's fast paths (video-converter.c transforms[] and
 *    video_converter_lookup_fastpath()), for the pairs and conditions
 *    where GStreamer 1.22 takes them:
 *     - I420/YV12 -> the 10 RGB formats, any matrices: chroma replicated
 *       (each sample serves its 2x2 pixels, no filtering), colour with the
 *       8-bit ORC Y'CbCr -> R'G'B' of step 3 below;
 *     - with the same Matrix on both sides (range not converted, as
 *       GStreamer): I420/YV12 -> YUY2/UYVY (chroma replicated vertically);
 *       YUY2/UYVY -> I420/YV12 (the two rows' chroma averaged,
 *       (a + b + 1) >> 1) and -> Y444 (replicated); between I420/YV12,
 *       Y42B and Y444, each chroma plane resized as convert_scale_planes()
 *       does: exact halvings averaged, otherwise GstVideoScaler with the
 *       linear resampler limited to 2 taps, as the videoconvert element
 *       configures it, GStreamer's taps, roundings and pass order included
 *       (zcconvert-common.h has the arithmetic).
 *    The other fast paths among these formats (copies, repacks, Y42B ->
 *    YUY2, Y444 -> YUY2, UYVY -> GRAY8, ...) give the generic result.
 *    Scaling, crop and placement are outside the fast paths here (also
 *    where GStreamer would keep one), and so is the threaded split of
 *    GStreamer's planar scaler (n-threads > 1 may pick the other pass
 *    order for some rows).
 * B. otherwise GstVideoConverter's generic (line) pipeline with dither
 *    none, which with crop, orientation, scaling or placement is always the
 *    route:
 *  1. unpack to 8 bits (8-bit formats) or 16 bits (GRAY16, P010,
 *     I420_10LE; 10-bit values are widened as (v << 6) | (v >> 4), P010
 *     words as v | (v >> 10), their 6 low bits not masked);
 *  2. chroma: when source and destination differ in subsampling, or the
 *     picture is cropped, oriented, scaled or placed, subsampled source
 *     chroma is upsampled with video-chroma.c's 2x interstitial filters
 *     (horizontal, then vertical), and destination chroma is the
 *     (a + b + 1) >> 1 average over the two rows of its block, then over
 *     its two columns (a row or column past the frame edge is left out).
 *     With the same subsampling on both sides and nothing moved, chroma is
 *     carried sample for sample (no filtering), as GStreamer does;
 *  3. colour: nothing when both frames are RGB, or both Y'CbCr/GRAY with
 *     the same Matrix (GStreamer then converts neither matrix nor RANGE,
 *     only the depth). Otherwise one 3x3+offset matrix, coefficients
 *     rint(256 m), from source to destination code values (through
 *     R'G'B', with each side's matrix and range), applied as GStreamer
 *     applies it: (sum + offset) >> 8, except at 8 bits for Y'CbCr ->
 *     R'G'B' and matrices that may leave 0..255, which take GStreamer's
 *     ORC 16-bit lane arithmetic (offsets ignored: with a limited-range
 *     side, a code value or two from the exact result, as videoconvert).
 *     8 -> 16 bits is (v << 8) | v, 16 -> 8 bits drops the low byte (no
 *     dithering). No transfer-function or primaries conversion;
 *  4. alpha: carried from the source (0xff when it has none); the padding
 *     byte of RGBx-like formats counts as alpha on both sides, as in
 *     GStreamer.
 *
 * Builds with a plain C++17 compiler; the CUDA entry point appears only when
 * GST_ZC_HAVE_CUDA is non-zero.
 */
#ifndef GST_ZC_KERNELS_CONVERT_H
#define GST_ZC_KERNELS_CONVERT_H

#include "zcformats.h"

#include <cstddef>
#include <cstdint>

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace zc {

/* Pixel formats, named and laid out as GstVideoFormat's of the same name.
 * Plane order is GStreamer's (YV12: plane 1 is V, plane 2 is U). 16-bit
 * samples are little-endian; P010_10LE keeps its 10 bits in the top of
 * each word, I420_10LE in the bottom. */
enum class PixFmt { ZC_FORMATS(ZC_FORMAT_X_NAME, ZC_FORMAT_X_NAME) };
constexpr int kNumPixFmts = 0 ZC_FORMATS(ZC_FORMAT_X_COUNT, ZC_FORMAT_X_COUNT);
/* Every format, in PixFmt's order (for loops over the formats) */
#define ZC_FORMAT_X_PIXFMT(name, ...) PixFmt::name,
inline constexpr PixFmt kAllPixFmts[kNumPixFmts] = {
    ZC_FORMATS(ZC_FORMAT_X_PIXFMT, ZC_FORMAT_X_PIXFMT)};
#undef ZC_FORMAT_X_PIXFMT

/* Y'CbCr matrix of YUV and GRAY frames (ignored for RGB frames). */
enum class Matrix { BT601, BT709, BT2020 };

/* One frame. planes[i] and strides[i] (bytes) for i < number of planes of
 * fmt; the rest are ignored. full_range applies to YUV and GRAY frames (RGB
 * is always full range). For convert_cuda() the plane pointers must be
 * device-accessible (device memory, managed memory, or the device pointer
 * of mapped pinned host memory). over_bus: the planes are host memory
 * that the GPU reaches over the bus (mapped pinned memory, managed memory
 * kept on the host); convert_cuda() chooses its kernels for a destination
 * so placed (see convert_cuda()). */
struct FrameDesc
{
  PixFmt fmt = PixFmt::RGBA;
  int width = 0;
  int height = 0;
  uint8_t *planes[3] = {nullptr, nullptr, nullptr};
  size_t strides[3] = {0, 0, 0};
  Matrix matrix = Matrix::BT709;
  bool full_range = false;
  bool over_bus = false;
};

enum class Sampling { Nearest, Bilinear, Bicubic };

/* videoflip's methods, applied to the cropped source. */
enum class Orientation {
  Identity, Rotate90R, Rotate180, Rotate90L, FlipH, FlipV,
  UL_LR /* transpose */, UR_LL /* anti-transpose */
};

/* What to do per frame. The source rectangle is the frame minus the crop
 * margins; it is oriented (videoflip's methods: Rotate90R = clockwise,
 * UL_LR = transpose), then scaled to dst_w x dst_h and written at
 * (dst_x, dst_y) of the destination; dst_w == 0 or dst_h == 0 means the
 * whole destination. Destination pixels outside that rectangle are set to
 * border_argb (0xAARRGGBB, converted to the destination's colour space at
 * 8 bits as GStreamer's border line). Chroma of a subsampled source is
 * upsampled over the whole source frame, before cropping. For subsampled
 * destinations dst_x/dst_y/dst_w/dst_h are best kept multiples of the
 * subsampling: a chroma sample that straddles the edge averages the
 * pixels on both sides.
 *
 * Scaling (only when the oriented crop and the destination rectangle differ
 * in size):
 *  - Sampling::Nearest: the source pixel under the centre of the output
 *    pixel, floor((2u + 1) * in / (2 * out)); identical to GStreamer's
 *    nearest resampler;
 *  - Sampling::Bilinear: GStreamer's linear resampler taps, centre to
 *    centre on both axes: T = max(2, ceil(2 in / out)) taps, a triangle
 *    T/2 source pixels wide (a plain 2-tap bilinear when enlarging, an
 *    averaging filter when shrinking), edge pixels repeated, computed in
 *    exact integers and rounded once, before the colour step. GStreamer's
 *    own 8-bit horizontal enlarging steps corner to corner instead
 *    (tests/kernels/test-convert.cpp has the tolerance);
 *  - Sampling::Bicubic: GStreamer's cubic resampler with its default
 *    B = C = 1/3 (Mitchell-Netravali; GstVideoConverter's default
 *    resampler, videoscale method=mitchell): T = max(4, ceil(4 in / out))
 *    taps (at most `in`), centre to centre on both axes, edge pixels
 *    repeated; one exact 2D sum rounded once and clamped (the negative
 *    lobes overshoot), before the colour step. Away from the borders, on
 *    smooth content, it stays within a few code values of
 *    GstVideoConverter's cubic output (the test's tolerance): GStreamer
 *    rounds its 8-bit taps to 6 bits, rounds between its passes, and at
 *    phases whose 6-bit taps cannot sum to 64 keeps a 65/64 gain; zc has
 *    none of these.
 * Same format in and out, same matrix, no effects, the whole destination
 * (videoflip's and videoscale's situation): the planes move on their own,
 * as those elements move them (kernels/zcplanar-common.h), never through
 * 4:4:4. Orientation and nearest scaling are bit for bit videoflip's and
 * videoscale's; bilinear and bicubic scaling without crop or orientation of
 * the 8-bit formats and GRAY16_LE follow videoscale's GstVideoScaler per
 * plane (method=bilinear: the linear resampler limited to 2 taps, so no
 * averaging when shrinking; method=mitchell: cubic on luma / RGB / packed
 * 4:2:2, linear chroma planes), its taps and roundings reproduced in
 * integers: 8-bit frames match away from the borders, GRAY16_LE bicubic
 * comes within a few 16-bit code values
 * (tests/check/elements/zcfilter-compare.cpp).
 * Point effects: see below; they leave the conversion as it is. */
struct ConvertParams
{
  Sampling sampling = Sampling::Nearest;
  Orientation orientation = Orientation::Identity;
  int crop_left = 0, crop_top = 0, crop_right = 0, crop_bottom = 0;
  int dst_x = 0, dst_y = 0, dst_w = 0, dst_h = 0;
  uint32_t border_argb = 0xff000000u;
  /* Point effects, as GStreamer 1.22's elements define them: a step on
   * the destination's code values once converted (the picture only, not
   * the border), i.e. what "videobalance ! gamma" would output after the
   * conversion, then an invert:
   *  - brightness (-1..1), contrast (0..2), saturation (0..2), hue (-1..1,
   *    half-turns) as videobalance, on 8-bit code values whatever the
   *    range and matrix; a subsampled destination's chroma samples are
   *    transformed once each. grayscale is saturation 0;
   *  - gamma (0.01..10) as the gamma element, after those: a table on luma;
   *  - on R'G'B' destinations, as both elements: each of the two stages
   *    that is set goes to Y'CbCr and back with BT.601 limited-range
   *    integer matrices (whatever the caps), its tables in between;
   *  - invert: 255 - v on R'G'B'; on Y'CbCr and GRAY, Y' = (black + white)
   *    - Y in the destination's range and C' = 256 - C (clamped).
   * Bit-exact with the elements (videobalance's rint ties included) on
   * 8-bit destinations. GRAY16, P010 and I420_10LE: luma through the
   * same curve without its roundings, exact at each 8-bit code (257 k)
   * and linear between them; chroma on the 10-bit values (centre 512).
   * The formulas: kernels/zceffects-common.h. double, as the elements'
   * properties: 0.3 and 0.3f differ by a code value in videobalance's
   * rounding. */
  double brightness = 0.0, contrast = 1.0, saturation = 1.0, hue = 0.0;
  double gamma = 1.0;
  bool invert = false, grayscale = false;
};

/* Planes of a format (1..3). */
int pixfmt_n_planes(PixFmt fmt);

/* Bytes per row and rows of plane `plane` of a width x height frame (the
 * minimum stride and the row count to allocate). */
size_t pixfmt_plane_row_bytes(PixFmt fmt, int plane, int width);
int pixfmt_plane_rows(PixFmt fmt, int plane, int height);

/* The GStreamer name of a format ("NV12"). */
const char *pixfmt_name(PixFmt fmt);

/* Converts src into dst on the CPU and returns when done. src and dst must
 * not overlap. n_threads: 0 = std::thread::hardware_concurrency(), 1 = only
 * the calling thread; rows are split evenly between the calling thread and
 * the process's worker threads, started once at first use (zcparallel.h),
 * fewer for small frames. The output does not depend on the thread count.
 * Common requests (repacks, point effects alone, linear scaling and
 * conversions of 8-bit frames, with or without point effects) take routes
 * written for the CPU; they write the same bytes as the per-block code
 * (convert_cpu_reference()).
 *
 * Returns: false, writing nothing, when the request is invalid or not
 * implemented: empty frames or sides above 65536, null planes, strides
 * below the row size, an unknown enum value, a negative or over-large crop,
 * a destination rectangle outside the frame, effects out of their ranges,
 * bilinear or bicubic shrinking by more than 64 on an axis. */
bool convert_cpu(const FrameDesc &src, const FrameDesc &dst,
                 const ConvertParams &p, unsigned n_threads);

/* Steps of a chain of point effects at most (effects_chain_cpu()). */
constexpr int kMaxEffectSteps = 8;

/* Point effects of several steps, one after the other, as a chain of
 * zcfilters applies them: the bytes of convert_cpu(src, dst, steps[0])
 * followed by convert_cpu(dst, dst, steps[i]) for each next step, in one
 * pass over the frame (each chunk of pixels goes through every step before
 * it is stored; tables of one kind are composed into one). Each step must
 * be point effects alone (ConvertParams with no crop, orientation, scaling
 * or destination rectangle) on src and dst of one format and size; src
 * may be dst (in place). n_steps: 1 to kMaxEffectSteps.
 *
 * Returns: false, writing nothing, for any other request (including one
 * convert_cpu() would take, such as a conversion). */
bool effects_chain_cpu(const FrameDesc &src, const FrameDesc &dst,
                       const ConvertParams *steps, int n_steps,
                       unsigned n_threads);

/* convert_cpu() as the CUDA kernels compute it: every output block
 * through the shared per-block code, never a fast route. The reference the
 * fast routes are tested against. */
bool convert_cpu_reference(const FrameDesc &src, const FrameDesc &dst,
                           const ConvertParams &p, unsigned n_threads);

/* Which way convert_cpu() takes for a request: "repack", "effects",
 * "scale", "planar" or "move" (a route written for the CPU; "scale" runs
 * the point effects too), one of those with "+effects" ("move+effects":
 * the route, then the point effects in place on its output), "blocks"
 * (the per-block code), or NULL for a request it refuses. For tests and
 * benchmarks. */
const char *convert_cpu_route(const FrameDesc &src, const FrameDesc &dst,
                              const ConvertParams &p);

/* For tests: convert_cpu() on one thread, run the way convert_cuda() runs
 * it where the request is not of the family that convert_cpu_fast420()
 * replays. Each tile's source rows are first copied into a buffer (as the
 * kernel copies them into shared memory) and read only from there; every
 * read is checked against the copied span. *tiled: whether the request
 * is tiled (if not, it runs as convert_cpu()). smem_limit: the shared
 * memory a tile may take, 0 for what convert_cuda() takes where the device allows
 * it (a device that allows less, sm_53 or sm_62, gets smaller tiles).
 * Returns false where convert_cpu() would, or when a read fell outside its
 * tile's copy. */
bool convert_cpu_tiled(const FrameDesc &src, const FrameDesc &dst,
                       const ConvertParams &p, bool *tiled,
                       int smem_limit = 0);

/* For tests: convert_cpu() on one thread, run the way convert_cuda() runs
 * a request of the 4:2:0 to R'G'B' family (NV12, NV21, I420, YV12 to a
 * 4-byte R'G'B' format, upright, filling the destination; not scaled,
 * or bilinear): the same per-pixel and per-tile steps, each tile's reads
 * checked against its staged copy. *mode: 0 where the family's
 * paths do not take the request (then nothing is written: convert_cuda()
 * runs it as convert_cpu_tiled() does), 1 same size with chroma
 * replicated, 2 bilinear, 3 same size (or a crop) with chroma upsampled.
 * smem_limit as for convert_cpu_tiled(). Returns false where convert_cpu()
 * would, or when a read fell outside its tile's copy. */
bool convert_cpu_fast420(const FrameDesc &src, const FrameDesc &dst,
                         const ConvertParams &p, int *mode,
                         int smem_limit = 0);

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
/* Enqueues the conversion on `stream` (one launch, one thread per output
 * block) and returns at once. The 4:2:0 to R'G'B' paths
 * (zcconvert-fast420.h) run only into a destination in device memory:
 * into one over the bus (dst.over_bus) the generic tiles write more of
 * the bus's bandwidth when many streams convert at once (32 streams of
 * NV12 1080p to RGBA 720p flat out on an H100: 84-90% of the bus against
 * 76%), while the 4:2:0 paths' lead, in compute, hides behind the bus.
 *
 * Returns: cudaErrorInvalidValue where convert_cpu() would return false
 * for an invalid request, cudaErrorNotSupported for a valid but not
 * implemented one, else the launch error (cudaGetLastError() right after
 * the launch). */
cudaError_t convert_cuda(const FrameDesc &src, const FrameDesc &dst,
                         const ConvertParams &p, cudaStream_t stream);

/* For tests and benchmarks: where the conversion kernels loaded for the
 * current device read their plan. "parameter": as a __grid_constant__
 * kernel parameter; "device memory": from a slot of device memory written
 * on the launch's stream (architectures below sm_70, toolkits before 11.7,
 * or -Dcuda-grid-constant=disabled). NULL when the device cannot say. */
const char *convert_cuda_plan_source();
#endif

} // namespace zc

#endif /* GST_ZC_KERNELS_CONVERT_H */

/* gst-zerocopy: the CUDA spatial effects.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One launch per effect and layer (a plane, or the luma / chroma bytes of
 * a packed 4:2:2 plane). Every block owns a tile of output elements:
 *  - blur and sharpen, 4-byte RGB pixels (RGBA ... xBGR) with a radius of
 *    1..8 and a 16-byte aligned source: rgb4_separable_kernel(), a 32 x 112
 *    tile, registers sliding over the taps in both passes (below);
 *  - blur and sharpen, everything else: separable_kernel(), a 32 x 32 tile;
 *    the horizontal pass runs over the tile's rows plus the vertical radius
 *    above and below (one thread per column, a warp reading a row's
 *    consecutive elements, the taps' reuse served by L1) into shared
 *    memory as the 16-bit intermediate; after one barrier the vertical
 *    pass reads it back and writes the tile. A radius of 1..6 on both axes
 *    is a template argument (the unrolled taps become immediate operands),
 *    other radii loop;
 *  - edges: the tile plus a one-element halo is loaded once into shared
 *    memory, then each output reads its 3x3 neighbourhood there;
 *  - layers with nothing to filter (chroma in sharpen and edges): a copy or
 *    a fill, one thread per element.
 * Aligned 4-byte pixels are read and written as one 32-bit word, the
 * channels of a pixel handled by one thread. The per-sample arithmetic is
 * the CPU's (zcspatial-common.h), integer-only, so the output is
 * bit-identical to spatial_cpu(). Nothing is allocated and nothing waits:
 * the plan travels as kernel parameters.
 */
#include "zcspatial.h"
#include "zcspatial-common.h"

#include <cuda_runtime.h>

namespace zc {
namespace {

using detail::SpLayer;
using detail::SpPass;
using detail::SpTaps;

constexpr int kTileW = 32; /* one warp per row */
constexpr int kTileH = 32;
constexpr int kRowsPerPass = 8; /* thread rows: each thread does 4 rows */

static_assert(sizeof(SpLayer) + 2 * sizeof(SpTaps) + 16 <= 4096,
              "kernel parameters must stay within 4 KiB");

/* Blur (mode kSpBlur) or unsharp mask (kSpSharpen) of one layer. RT > 0:
 * both radii are RT. Dynamic shared memory: (kTileH + 2 ry) rows of kTileW
 * elements of NCH 16-bit intermediates. */
template <int NCH, int RT>
__global__ void
__launch_bounds__(kTileW *kRowsPerPass)
    separable_kernel(const SpLayer L, const SpTaps TX, const SpTaps TY,
                     int32_t mode, int32_t amount_q8)
{
  extern __shared__ __align__(16) unsigned char sp_smem[];
  uint16_t *inter = reinterpret_cast<uint16_t *>(sp_smem);

  const int rx = RT > 0 ? RT : TX.r;
  const int ry = RT > 0 ? RT : TY.r;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;

  /* Horizontal pass over plane rows y0 - ry .. y0 + kTileH + ry - 1
   * (clamped); columns past the plane's edge compute a copy of the last
   * one, never used. */
  const int xs = min(x0 + tx, L.w - 1);
  for (int r = ty; r < kTileH + 2 * ry; r += kRowsPerPass) {
    const int y = detail::sp_clamp(y0 - ry + r, 0, L.h - 1);
    uint32_t h[NCH];
    detail::sp_hpass<NCH>(L, TX, rx, L.src + (size_t)y * L.sstride, xs, h);
    uint16_t *o = inter + ((size_t)r * kTileW + tx) * NCH;
    for (int c = 0; c < NCH; c++)
      o[c] = (uint16_t)h[c];
  }
  __syncthreads();

  const int x = x0 + tx;
  if (x >= L.w)
    return;
  for (int k = 0; k < kTileH / kRowsPerPass; k++) {
    const int ly = ty + k * kRowsPerPass;
    const int y = y0 + ly;
    if (y >= L.h)
      break;
    const uint8_t *srow = L.src + (size_t)y * L.sstride;
    uint8_t *drow = L.dst + (size_t)y * L.dstride;
    uint32_t in[NCH], out[NCH];
    if (mode == detail::kSpSharpen)
      detail::sp_load<NCH>(L, srow, x, in);
    for (int c = 0; c < NCH; c++) {
      out[c] = 0;
      if (L.role[c] != detail::kSpFilter)
        continue;
      const uint16_t *col = inter + ((size_t)(ly + ry) * kTileW + tx) * NCH + c;
      const uint32_t V = detail::sp_fold(TY.w, ry, [&](int t) {
        return (uint32_t)col[(ptrdiff_t)t * kTileW * NCH];
      });
      out[c] = mode == detail::kSpSharpen
                   ? detail::sp_sharpen_out(L, amount_q8, in[c], V)
                   : detail::sp_blur_out(L, V);
    }
    detail::sp_store<NCH>(L, srow, drow, x, out);
  }
}

/* The fast path for 4-byte RGB pixels (RGBA ... xBGR) with a radius of
 * 1..kFastMaxR on both axes: blur and sharpen. Same integers as
 * separable_kernel() (and the CPU), organised so that each loaded pixel is
 * unpacked once and each weight is an immediate:
 *  - horizontal: a thread computes 8 consecutive pixels of one row from a
 *    window of 24 pixels read as six 16-byte loads (clamped 32-bit loads
 *    near the left and right edges), sliding the taps over registers;
 *    the three 16-bit intermediates go to shared memory, one plane per
 *    channel, 8 pixels per 16-byte store;
 *  - vertical: a thread computes kFastRowsPerThread rows of one column from
 *    a window of kFastRowsPerThread + 2 R intermediates per channel, reads
 *    the source pixel once (it carries the alpha byte, and the value for
 *    sharpen), and writes each pixel as one coalesced 32-bit store. */
constexpr int kFastMaxR = 8;
constexpr int kFastRowsPerThread = 14;
constexpr int kFastTileH = kRowsPerPass * kFastRowsPerThread; /* 112 */
constexpr int kFastRows = 128; /* >= kFastTileH + 2 kFastMaxR */
static_assert(kFastTileH + 2 * kFastMaxR <= kFastRows, "fast tile rows");
static_assert(kTileW == 32 && kRowsPerPass == 8, "fast tile mapping");

template <int R, bool ALPHA_FIRST>
__global__ void
__launch_bounds__(kTileW *kRowsPerPass)
    rgb4_separable_kernel(const SpLayer L, const SpTaps T, int32_t mode,
                          int32_t amount_q8)
{
  /* inter[c][row][x]: the horizontal results of channel c. */
  __shared__ __align__(16) uint16_t inter[3][kFastRows][kTileW];
  constexpr int kFirstShift = ALPHA_FIRST ? 8 : 0; /* of filtered channel 0 */

  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kFastTileH;
  const int g = threadIdx.y * kTileW + threadIdx.x;
  const int seg = g & 3; /* which 8 pixels of the tile's row */
  const int rr = g >> 2; /* 0..63 */
  const int xs = x0 + 8 * seg;

  if (xs < L.w) {
    for (int r = rr; r < kFastTileH + 2 * R; r += 64) {
      const int y = detail::sp_clamp(y0 - R + r, 0, L.h - 1);
      const uint8_t *row = L.src + (size_t)y * L.sstride;
      /* p[i] is pixel xs - 8 + i (clamped to the row). */
      uint32_t p[24];
      if (xs - 8 >= 0 && xs + 16 <= L.w) {
        const uint4 *q = reinterpret_cast<const uint4 *>(row) + (xs - 8) / 4;
#pragma unroll
        for (int k = 0; k < 6; k++) {
          const uint4 u = q[k];
          p[4 * k] = u.x;
          p[4 * k + 1] = u.y;
          p[4 * k + 2] = u.z;
          p[4 * k + 3] = u.w;
        }
      } else {
        const uint32_t *q = reinterpret_cast<const uint32_t *>(row);
#pragma unroll
        for (int i = 8 - R; i < 16 + R; i++)
          p[i] = q[detail::sp_clamp(xs - 8 + i, 0, L.w - 1)];
      }
#pragma unroll
      for (int c = 0; c < 3; c++) {
        const int sh = kFirstShift + 8 * c;
        uint32_t h[8];
#pragma unroll
        for (int k = 0; k < 8; k++) {
          h[k] = detail::sp_fold(
              T.w, R, [&](int t) { return (p[8 + k + t] >> sh) & 0xffu; });
          h[k] = (h[k] + (1u << 7)) >> 8; /* sp_hpass() at depth 8 */
        }
        uint4 o;
        o.x = h[0] | (h[1] << 16);
        o.y = h[2] | (h[3] << 16);
        o.z = h[4] | (h[5] << 16);
        o.w = h[6] | (h[7] << 16);
        *reinterpret_cast<uint4 *>(&inter[c][r][8 * seg]) = o;
      }
    }
  }
  __syncthreads();

  const int x = x0 + threadIdx.x;
  const int ly0 = threadIdx.y * kFastRowsPerThread;
  if (x >= L.w)
    return;
  /* The source pixels: alpha (or padding) byte and the sharpen input. */
  uint32_t out[kFastRowsPerThread];
#pragma unroll
  for (int k = 0; k < kFastRowsPerThread; k++) {
    const int y = min(y0 + ly0 + k, L.h - 1);
    out[k] = *reinterpret_cast<const uint32_t *>(L.src + (size_t)y * L.sstride
                                                 + (size_t)x * 4);
  }
#pragma unroll
  for (int c = 0; c < 3; c++) {
    const int sh = kFirstShift + 8 * c;
    uint32_t win[kFastRowsPerThread + 2 * R];
#pragma unroll
    for (int i = 0; i < kFastRowsPerThread + 2 * R; i++)
      win[i] = inter[c][ly0 + i][threadIdx.x];
#pragma unroll
    for (int k = 0; k < kFastRowsPerThread; k++) {
      const uint32_t V
          = detail::sp_fold(T.w, R, [&](int t) { return win[R + k + t]; });
      const uint32_t o = mode == detail::kSpSharpen ? detail::sp_sharpen_out(
                             L, amount_q8, (out[k] >> sh) & 0xffu, V)
                                                    : detail::sp_blur_out(L, V);
      out[k] = (out[k] & ~(0xffu << sh)) | (o << sh);
    }
  }
#pragma unroll
  for (int k = 0; k < kFastRowsPerThread; k++) {
    const int y = y0 + ly0 + k;
    if (y < L.h)
      *reinterpret_cast<uint32_t *>(L.dst + (size_t)y * L.dstride
                                    + (size_t)x * 4)
          = out[k];
  }
}

/* Sobel of one layer: the tile and a one-element halo, as 16-bit values. */
template <int NCH>
__global__ void
__launch_bounds__(kTileW *kRowsPerPass) sobel_kernel(const SpLayer L)
{
  constexpr int kW = kTileW + 2, kH = kTileH + 2;
  __shared__ uint16_t tile[kH][kW][NCH];

  const int tx = threadIdx.x, ty = threadIdx.y;
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;
  for (int i = ty * kTileW + tx; i < kW * kH; i += kTileW * kRowsPerPass) {
    const int ly = i / kW, lx = i % kW;
    const int y = detail::sp_clamp(y0 - 1 + ly, 0, L.h - 1);
    const int x = detail::sp_clamp(x0 - 1 + lx, 0, L.w - 1);
    uint32_t v[NCH];
    detail::sp_load<NCH>(L, L.src + (size_t)y * L.sstride, x, v);
    for (int c = 0; c < NCH; c++)
      tile[ly][lx][c] = (uint16_t)v[c];
  }
  __syncthreads();

  const int x = x0 + tx;
  if (x >= L.w)
    return;
  for (int k = 0; k < kTileH / kRowsPerPass; k++) {
    const int ly = ty + k * kRowsPerPass;
    const int y = y0 + ly;
    if (y >= L.h)
      break;
    uint32_t out[NCH];
    for (int c = 0; c < NCH; c++) {
      int32_t nb[3][3];
      for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
          nb[a][b] = tile[ly + a][tx + b][c];
      out[c] = L.role[c] == detail::kSpFilter ? detail::sp_sobel_out(L, nb) : 0;
    }
    detail::sp_store<NCH>(L, L.src + (size_t)y * L.sstride,
                          L.dst + (size_t)y * L.dstride, x, out);
  }
}

/* A layer with nothing to filter: copies or sets every channel. */
template <int NCH>
__global__ void
__launch_bounds__(kTileW *kRowsPerPass) fill_kernel(const SpLayer L)
{
  const int x = blockIdx.x * kTileW + threadIdx.x;
  const int y = blockIdx.y * kRowsPerPass + threadIdx.y;
  if (x >= L.w || y >= L.h)
    return;
  const uint32_t zero[NCH] = {};
  detail::sp_store<NCH>(L, L.src + (size_t)y * L.sstride,
                        L.dst + (size_t)y * L.dstride, x, zero);
}

dim3
tile_grid(const SpLayer &L, int tile_h)
{
  return dim3((unsigned)((L.w + kTileW - 1) / kTileW),
              (unsigned)((L.h + tile_h - 1) / tile_h));
}

/* clang-format 14 would split the launch chevrons into "> > >". */
// clang-format off
template <int NCH, int RT>
void
launch_separable(const SpPass &P, const SpLayer &L, cudaStream_t stream)
{
  const SpTaps &TX = P.taps[L.tx], &TY = P.taps[L.ty];
  const size_t shm =
      (size_t)(kTileH + 2 * TY.r) * kTileW * NCH * sizeof(uint16_t);
  separable_kernel<NCH, RT>
      <<<tile_grid(L, kTileH), dim3(kTileW, kRowsPerPass), shm, stream>>>(
          L, TX, TY, P.mode, P.amount_q8);
}

/* The fast kernel's conditions: 4-byte pixels of 8-bit R, G, B and a
 * copied byte (first or last), the source 16-byte aligned for its vector
 * loads. */
bool
rgb4_fast(const SpLayer &L)
{
  return L.word4 && L.nch == 4 && L.nfilter == 3
         && (L.role[0] == detail::kSpCopy || L.role[3] == detail::kSpCopy)
         && ((uintptr_t)L.src & 15) == 0 && (L.sstride & 15) == 0;
}

template <int R>
void
launch_rgb4_r(const SpPass &P, const SpLayer &L, cudaStream_t stream)
{
  const dim3 grid((unsigned)((L.w + kTileW - 1) / kTileW),
                  (unsigned)((L.h + kFastTileH - 1) / kFastTileH));
  const dim3 block(kTileW, kRowsPerPass);
  const SpTaps &T = P.taps[L.tx];
  if (L.role[0] == detail::kSpCopy)
    rgb4_separable_kernel<R, true><<<grid, block, 0, stream>>>(
        L, T, P.mode, P.amount_q8);
  else
    rgb4_separable_kernel<R, false><<<grid, block, 0, stream>>>(
        L, T, P.mode, P.amount_q8);
}

void
launch_rgb4(const SpPass &P, const SpLayer &L, int r, cudaStream_t stream)
{
  switch (r) {
  case 1: launch_rgb4_r<1>(P, L, stream); break;
  case 2: launch_rgb4_r<2>(P, L, stream); break;
  case 3: launch_rgb4_r<3>(P, L, stream); break;
  case 4: launch_rgb4_r<4>(P, L, stream); break;
  case 5: launch_rgb4_r<5>(P, L, stream); break;
  case 6: launch_rgb4_r<6>(P, L, stream); break;
  case 7: launch_rgb4_r<7>(P, L, stream); break;
  default: launch_rgb4_r<8>(P, L, stream); break;
  }
}

template <int NCH>
void
launch_layer(const SpPass &P, const SpLayer &L, cudaStream_t stream)
{
  const dim3 block(kTileW, kRowsPerPass);
  if (L.nfilter == 0) {
    fill_kernel<NCH><<<tile_grid(L, kRowsPerPass), block, 0, stream>>>(L);
    return;
  }
  if (P.mode == detail::kSpEdges) {
    sobel_kernel<NCH><<<tile_grid(L, kTileH), block, 0, stream>>>(L);
    return;
  }
  const int rx = P.taps[L.tx].r, ry = P.taps[L.ty].r;
  if (NCH == 4 && rgb4_fast(L) && rx == ry && rx >= 1 && rx <= kFastMaxR) {
    launch_rgb4(P, L, rx, stream);
    return;
  }
  switch (rx == ry ? rx : 0) {
  case 1: launch_separable<NCH, 1>(P, L, stream); break;
  case 2: launch_separable<NCH, 2>(P, L, stream); break;
  case 3: launch_separable<NCH, 3>(P, L, stream); break;
  case 4: launch_separable<NCH, 4>(P, L, stream); break;
  case 5: launch_separable<NCH, 5>(P, L, stream); break;
  case 6: launch_separable<NCH, 6>(P, L, stream); break;
  default: launch_separable<NCH, 0>(P, L, stream); break;
  }
}
// clang-format on

} // namespace

cudaError_t
spatial_cuda(const FrameDesc &src, const FrameDesc &dst,
             const FrameDesc *scratch, const SpatialParams &p,
             cudaStream_t stream)
{
  detail::SpPlan plan;
  if (!detail::spatial_plan(src, dst, scratch, p, &plan))
    return cudaErrorInvalidValue;

  if (plan.n_passes == 0) {
    for (int i = 0; i < pixfmt_n_planes(src.fmt); i++) {
      const size_t rb = pixfmt_plane_row_bytes(src.fmt, i, src.width);
      const int rows = pixfmt_plane_rows(src.fmt, i, src.height);
      /* A one-row plane may come with stride 0, which cudaMemcpy2D
       * refuses. */
      const cudaError_t err
          = rows == 1
                ? cudaMemcpyAsync(dst.planes[i], src.planes[i], rb,
                                  cudaMemcpyDefault, stream)
                : cudaMemcpy2DAsync(dst.planes[i], dst.strides[i],
                                    src.planes[i], src.strides[i], rb,
                                    (size_t)rows, cudaMemcpyDefault, stream);
      if (err != cudaSuccess)
        return err;
    }
    return cudaSuccess;
  }

  for (int i = 0; i < plan.n_passes; i++) {
    const SpPass &P = plan.passes[i];
    for (int li = 0; li < P.n_layers; li++) {
      const SpLayer &L = P.layers[li];
      switch (L.nch) {
      case 1:
        launch_layer<1>(P, L, stream);
        break;
      case 2:
        launch_layer<2>(P, L, stream);
        break;
      case 3:
        launch_layer<3>(P, L, stream);
        break;
      default:
        launch_layer<4>(P, L, stream);
        break;
      }
      const cudaError_t err = cudaGetLastError();
      if (err != cudaSuccess)
        return err;
    }
  }
  return cudaSuccess;
}

} // namespace zc

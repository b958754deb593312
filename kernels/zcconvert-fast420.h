/* gst-zerocopy: the CUDA conversion's paths from 4:2:0 to R'G'B'.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * NV12, NV21, I420 and YV12 (8 bits) to a 4-byte R'G'B' format (RGBA,
 * BGRx, ARGB, ...), upright, over the whole destination: what a camera or
 * a decoder hands a display or a model, the conversion most pipelines
 * run. The generic kernels (zcconvert.cu) serve every pair through
 * convert_block(), and each pixel pays for the formats it is not. Here
 * the same values, bit for bit (the tests compare them with
 * convert_cpu()), from code that knows the family:
 *
 *  - same size, I420 and YV12 (videoconvert's fast path: chroma
 *    replicated, GStreamer's 8-bit matrix): a thread converts 4 x 2
 *    pixels from its luma and chroma words and stores 16 bytes a row;
 *  - not scaled, chroma upsampled (NV12 and NV21; I420 and YV12 when
 *    cropped): tiles of 128 x 8 pixels whose source rows are staged in
 *    shared memory (as below), a thread converting 4 adjacent pixels of a
 *    row;
 *  - bilinear scaling: a thread block takes a tile of 128 x 8 output
 *    pixels; one thread finds the source pixels the tile reads, the
 *    block stages their rows in shared memory in wide loads (as the
 *    generic tiles do), decodes each source pixel once (chroma upsampled,
 *    the three 8-bit samples in one word) and fills the tile's tap
 *    tables; then a thread filters 4 adjacent pixels of a row and stores
 *    them in 16 bytes.
 *
 * The steps take a pixel, a tile or a table entry, so that
 * convert_cpu_fast420() (zcconvert-cpu-tiled.cpp) replays them on the
 * CPU for the tests. Nothing here indexes a small array with a value the
 * compiler cannot see (a plane number, a format's offset): such an array
 * goes to local memory on the GPU.
 */
#ifndef GST_ZC_KERNELS_CONVERT_FAST420_H
#define GST_ZC_KERNELS_CONVERT_FAST420_H

#include "zcconvert-common.h"

#include <cstring>

/* Unrolled in nvcc's device pass (the host compilers warn of a pragma
 * they do not know). */
#ifdef __CUDA_ARCH__
#define ZC_UNROLL _Pragma("unroll")
#else
#define ZC_UNROLL
#endif

namespace zc {
namespace detail {

/* kFast420Same: the same picture, chroma replicated (videoconvert's
 * I420 to R'G'B' fast path), straight from the frame; kFast420Linear:
 * bilinear scaling, in tiles; kFast420Upsampled: the picture not scaled
 * (a crop of it, perhaps), chroma upsampled, in tiles. */
enum Fast420Mode {
  kFast420Off,
  kFast420Same,
  kFast420Linear,
  kFast420Upsampled
};

/* A thread block: kFastThreadsX x kFastThreadsY threads, each converting
 * kFastPx adjacent pixels of kFastSameRows rows (same size) or of one row
 * (scaled). */
constexpr int kFastThreadsX = 32;
constexpr int kFastThreadsY = 8;
constexpr int kFastPx = 4;
constexpr int kFastSameRows = 2;
constexpr int kFastTileW = kFastThreadsX * kFastPx;
constexpr int kFastTileH = kFastThreadsY;

/* Whether the plan's formats, colour steps and placement are the
 * family's: an 8-bit 4:2:0 source, a 4-byte 8-bit R'G'B' destination,
 * upright, filling the destination. */
ZC_HD inline bool
fast420_family(const Plan &P)
{
  const FmtInfo &s = P.si, &d = P.di;
  return (s.kind == kSemiYuv || s.kind == kPlanarYuv) && s.bits == 8
         && s.ws == 1 && s.hs == 1 && d.kind == kPackedRgb && d.bits == 8
         && d.pstride == 4 && d.off[0] >= 0 && d.off[1] >= 0
         && d.off[2] >= 0 && d.off[3] >= 0 && P.depth == 8 && !P.cscale
         && !P.pl.mode && P.orient == 0 && P.rx == 0 && P.ry == 0
         && P.rw == P.dw && P.rh == P.dh;
}

/* Up to 4 bytes at p as a little-endian word: one load where aligned. */
ZC_HD inline uint32_t
load_le(const uint8_t *p, int n)
{
  if (n == 4 && (reinterpret_cast<uintptr_t>(p) & 3) == 0)
    return *reinterpret_cast<const uint32_t *>(p);
  uint32_t w = 0;
  for (int i = 0; i < n; i++)
    w |= uint32_t(p[i]) << (8 * i);
  return w;
}

/* n (1..4) 4-byte pixels at p: one 16-byte store where it can, 32-bit
 * stores where aligned, else bytes (byte stores into mapped host memory
 * cross the bus as partial writes). */
ZC_HD inline void
store_rgb32(uint8_t *p, const uint32_t w[4], int n)
{
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (n == 4 && (a & 15) == 0) {
#ifdef __CUDA_ARCH__
    *reinterpret_cast<uint4 *>(p) = make_uint4(w[0], w[1], w[2], w[3]);
#else
    std::memcpy(p, w, 16);
#endif
    return;
  }
  ZC_UNROLL
  for (int i = 0; i < 4; i++) {
    if (i >= n)
      break;
    if ((a & 3) == 0) {
      reinterpret_cast<uint32_t *>(p)[i] = w[i];
    } else {
      for (int k = 0; k < 4; k++)
        p[4 * i + k] = uint8_t(w[i] >> (8 * k));
    }
  }
}

/* A converted pixel (Y'CbCr at 8 bits) -> its destination word: the
 * colour step, the effects, the packing, as out_pixel() and
 * convert_block() do them for the family. */
ZC_HD inline uint32_t
fast420_word(const Plan &P, Px s, int x, int y)
{
  s = colour_step(P, s);
  if (P.fx.active && in_picture(P, x, y))
    effects_pixel(P.fx, s.c);
  return rgb32_word(P.di, s);
}

/* ---- same size ------------------------------------------------------- */

/* Pixels x0..x0+3 of rows y0 and y0 + 1 (those inside the frame) of a
 * planar source (I420, YV12: the only ones videoconvert's fast path
 * takes); x0 a multiple of 4, y0 even. As fetch() without chroma
 * upsampling: pixel x of row y takes chroma sample x / 2 of chroma row
 * y / 2. */
ZC_HD inline void
fast420_same_quad(const Plan &P, int x0, int y0)
{
  const FmtInfo &f = P.si;
  const int n = P.dw - x0 < kFastPx ? P.dw - x0 : kFastPx;
  /* chroma samples x0 / 2 .. (x0 + n - 1) / 2 of chroma row y0 / 2 */
  const int k0 = x0 >> 1, nk = ((x0 + n - 1) >> 1) - k0 + 1;
  const size_t cr = (size_t)(y0 >> 1);
  uint32_t us[2], vs[2];
  const uint8_t *pu = f.off[1] == 1 ? P.sp[1] : P.sp[2];
  const uint8_t *pv = f.off[2] == 1 ? P.sp[1] : P.sp[2];
  const size_t su = f.off[1] == 1 ? P.ss[1] : P.ss[2];
  const size_t sv = f.off[2] == 1 ? P.ss[1] : P.ss[2];
  const uint32_t wu = load_le(pu + cr * su + k0, nk);
  const uint32_t wv = load_le(pv + cr * sv + k0, nk);
  ZC_UNROLL
  for (int k = 0; k < 2; k++) {
    us[k] = (wu >> (8 * k)) & 0xffu;
    vs[k] = (wv >> (8 * k)) & 0xffu;
  }
  for (int j = 0; j < kFastSameRows; j++) {
    const int y = y0 + j;
    if (y >= P.dh)
      break;
    const uint32_t luma =
        load_le(P.sp[0] + (size_t)y * P.ss[0] + (size_t)x0, n);
    uint32_t w[kFastPx] = {0, 0, 0, 0};
    /* unrolled, so that w, us and vs stay in registers */
    ZC_UNROLL
    for (int i = 0; i < kFastPx; i++) {
      if (i < n) {
        const Px s = {{(luma >> (8 * i)) & 0xffu, us[i >> 1], vs[i >> 1],
                       0xffu}};
        w[i] = fast420_word(P, s, x0 + i, y);
      }
    }
    store_rgb32(P.dp[0] + (size_t)y * P.ds[0] + (size_t)x0 * 4, w, n);
  }
}

/* ---- bilinear ---------------------------------------------------------- */

/* A tile's staged source rows (shared memory on the GPU): plane q's byte
 * `byte` of row `row` is at base[q] + (row - row0[q]) * pitch[q] + (byte -
 * byte0[q]). The planes in named fields, picked with conditionals: see
 * the top of this file. */
struct Fast420Src
{
  const uint8_t *b0, *b1, *b2;
  int p0, p1, p2, r0, r1, r2, o0, o1, o2;

  ZC_HD const uint8_t *
  at(int plane, int row, size_t byte) const
  {
    const uint8_t *b = plane == 0 ? b0 : (plane == 1 ? b1 : b2);
    const int p = plane == 0 ? p0 : (plane == 1 ? p1 : p2);
    const int r = plane == 0 ? r0 : (plane == 1 ? r1 : r2);
    const int o = plane == 0 ? o0 : (plane == 1 ? o1 : o2);
    return b + (size_t)(row - r) * p + ((int)byte - o);
  }

  ZC_HD void
  set(int plane, const uint8_t *base, int pitch, const PlaneSpan &s)
  {
    if (plane == 0) {
      b0 = base; p0 = pitch; r0 = s.row0; o0 = s.byte0;
    } else if (plane == 1) {
      b1 = base; p1 = pitch; r1 = s.row0; o1 = s.byte0;
    } else {
      b2 = base; p2 = pitch; r2 = s.row0; o2 = s.byte0;
    }
  }
};

/* Chroma sample k of chroma row r, as chroma_raw() reads an 8-bit 4:2:0
 * source. */
template <class Src>
ZC_HD inline void
chroma420(const Plan &P, const Src &src, int k, int r, uint32_t *u,
          uint32_t *v)
{
  const FmtInfo &f = P.si;
  if (f.kind == kSemiYuv) {
    const uint8_t *p = src.at(1, r, (size_t)k * 2);
    *u = p[f.off[1]];
    *v = p[f.off[2]];
  } else {
    *u = *src.at(f.off[1], r, (size_t)k);
    *v = *src.at(f.off[2], r, (size_t)k);
  }
}

/* Chroma row r upsampled at pixel column x (th: up2_taps(x, P.sw)), as
 * chroma_row(). */
template <class Src>
ZC_HD inline void
chroma420_row(const Plan &P, const Src &src, const Taps &th, int r,
              uint32_t *u, uint32_t *v)
{
  uint32_t ua, va;
  chroma420(P, src, th.a, r, &ua, &va);
  if (th.mode == 0) {
    *u = ua;
    *v = va;
    return;
  }
  uint32_t ub, vb;
  chroma420(P, src, th.b, r, &ub, &vb);
  *u = blend(th, ua, ub);
  *v = blend(th, va, vb);
}

/* Source pixel (x, y), chroma upsampled: Y | U << 8 | V << 16, the
 * samples fetch() returns for the family with chroma_up. */
template <class Src>
ZC_HD inline uint32_t
fetch420(const Plan &P, const Src &src, int x, int y)
{
  const uint32_t luma = *src.at(0, y, (size_t)x);
  const Taps th = up2_taps(x, P.sw), tv = up2_taps(y, P.sh);
  uint32_t u, v;
  chroma420_row(P, src, th, tv.a, &u, &v);
  if (tv.mode != 0) {
    uint32_t ub, vb;
    chroma420_row(P, src, th, tv.b, &ub, &vb);
    u = blend(tv, u, ub);
    v = blend(tv, v, vb);
  }
  return luma | (u << 8) | (v << 16);
}

/* What one thread finds for the whole tile: the oriented source pixels
 * it reads (ab, as tile_oriented()) and each plane's staged span. */
struct Fast420Span
{
  int ab[4];
  PlaneSpan sp[3];
  int n;     /* planes */
  int reads; /* 0: the tile reads nothing (past the frame) */
};

ZC_HD inline void
fast420_span(const Plan &P, const TileGeom &g, int tx, int ty, Fast420Span *s)
{
  s->reads = tile_oriented(P, g, tx, ty, s->ab);
  s->n = s->reads ? tile_spans(P, g, s->ab, s->sp) : 0;
}

/* A tile's memory: the staged rows (from offset 0), the decoded source
 * pixels (pitch a row, from (a0, b0)) and the tap tables of its output
 * columns and rows (from (x0, y0)). */
struct Fast420Tile
{
  uint32_t *dec;
  int a0, b0, pitch;
  int32_t *cols, *rows;
  int cs, rs;
  int x0, y0;
};

ZC_HD inline Fast420Tile
fast420_tile(const TileGeom &g, int tx, int ty, uint8_t *smem,
             const Fast420Span &s)
{
  Fast420Tile t;
  t.dec = reinterpret_cast<uint32_t *>(smem + g.dec_offset);
  t.a0 = s.ab[0];
  t.b0 = s.ab[1];
  t.pitch = s.ab[2] - s.ab[0] + 1;
  t.cols = reinterpret_cast<int32_t *>(smem + g.tab_offset);
  t.rows = t.cols + (size_t)kFastTileW * g.tab_cs;
  t.cs = g.tab_cs;
  t.rs = g.tab_rs;
  t.x0 = tx * kFastTileW;
  t.y0 = ty * kFastTileH;
  return t;
}

/* Table entries: the tile's columns, then its rows. */
constexpr int kFast420Entries = kFastTileW + kFastTileH;

/* Entry i of the tile's tap tables (fill_filter_taps()); an entry past
 * the destination is never read. */
ZC_HD inline void
fast420_fill_entry(const Plan &P, const Fast420Tile &t, int i)
{
  if (i < kFastTileW) {
    const int u = t.x0 + i;
    if (u < P.rw)
      fill_filter_taps(P, u, P.rw, P.ow, t.cols + (size_t)i * t.cs);
  } else {
    const int v = t.y0 + i - kFastTileW;
    if (v < P.rh)
      fill_filter_taps(P, v, P.rh, P.oh, t.rows + (size_t)(v - t.y0) * t.rs);
  }
}

/* Decoded pixel i of the tile (row by row from (a0, b0)). */
template <class Src>
ZC_HD inline void
fast420_decode(const Plan &P, const Fast420Tile &t, const Src &src, int i)
{
  const int b = i / t.pitch, a = i - b * t.pitch;
  t.dec[i] = fetch420(P, src, P.cx + t.a0 + a, P.cy + t.b0 + b);
}

/* Pixels x..x+3 of row y (those inside the frame), from the decoded
 * pixels and the tap tables: sample_tabled()'s sums over 8-bit samples
 * (a row of taps in 32 bits: fast420_plan() checked that it fits), then
 * out_pixel()'s colour step. Alpha is 0xff: every weight of a full-alpha
 * sum cancels. */
ZC_HD inline void
fast420_linear_quad(const Plan &P, const Fast420Tile &t, int x, int y)
{
  if (y >= P.dh || x >= P.dw)
    return;
  const int n = P.dw - x < kFastPx ? P.dw - x : kFastPx;
  const int32_t *ty = t.rows + (size_t)(y - t.y0) * t.rs;
  uint32_t w[kFastPx] = {0, 0, 0, 0};
  ZC_UNROLL
  for (int k = 0; k < kFastPx; k++) {
    if (k >= n)
      break;
    const int32_t *tx = t.cols + (size_t)(x + k - t.x0) * t.cs;
    int64_t acc0 = 0, acc1 = 0, acc2 = 0;
    for (int j = 0; j < ty[1]; j++) {
      const int32_t wy = ty[3 + j];
      if (!wy)
        continue;
      const uint32_t *row =
          t.dec + (size_t)(clamp_index(ty[0] + j, P.oh) - t.b0) * t.pitch;
      int32_t h0 = 0, h1 = 0, h2 = 0;
      for (int i = 0; i < tx[1]; i++) {
        const int32_t wx = tx[3 + i];
        const uint32_t s = row[clamp_index(tx[0] + i, P.ow) - t.a0];
        h0 += wx * (int32_t)(s & 0xffu);
        h1 += wx * (int32_t)((s >> 8) & 0xffu);
        h2 += wx * (int32_t)((s >> 16) & 0xffu);
      }
      acc0 += (int64_t)wy * h0;
      acc1 += (int64_t)wy * h1;
      acc2 += (int64_t)wy * h2;
    }
    const int64_t W = (int64_t)tx[2] * ty[2];
    const float inv = 1.0f / (float)W;
    const Px s = {{tabled_sample(acc0, W, inv, 0xff),
                   tabled_sample(acc1, W, inv, 0xff),
                   tabled_sample(acc2, W, inv, 0xff), 0xffu}};
    w[k] = fast420_word(P, s, x + k, y);
  }
  store_rgb32(P.dp[0] + (size_t)y * P.ds[0] + (size_t)x * 4, w, n);
}

/* Pixels x..x+3 of row y (those inside the frame), the picture not
 * scaled: out_pixel()'s nearest sample of the oriented source, which is
 * source pixel (cx + x, cy + y), chroma upsampled. */
template <class Src>
ZC_HD inline void
fast420_upsampled_quad(const Plan &P, const Src &src, int x, int y)
{
  if (y >= P.dh || x >= P.dw)
    return;
  const int n = P.dw - x < kFastPx ? P.dw - x : kFastPx;
  uint32_t w[kFastPx] = {0, 0, 0, 0};
  ZC_UNROLL
  for (int k = 0; k < kFastPx; k++) {
    if (k >= n)
      break;
    const uint32_t v = fetch420(P, src, P.cx + x + k, P.cy + y);
    const Px s = {{v & 0xffu, (v >> 8) & 0xffu, (v >> 16) & 0xffu, 0xffu}};
    w[k] = fast420_word(P, s, x + k, y);
  }
  store_rgb32(P.dp[0] + (size_t)y * P.ds[0] + (size_t)x * 4, w, n);
}

/* Which path the plan takes and, for the tiled ones, its tiling
 * (host only, zcconvert-tiling.cpp): kFast420Off where the family or its
 * bounds do not apply (a row of taps that may not sum in 32 bits, a tile
 * larger than smem_limit bytes) and into a destination over the bus
 * (convert_cuda() says why). For kFast420Same only grid_x and grid_y
 * are set; kFast420Upsampled's tiles hold the staged rows alone
 * (decoded 0). */
Fast420Mode fast420_plan(const Plan &P, int smem_limit, TileGeom *g);

} // namespace detail
} // namespace zc

#endif /* GST_ZC_KERNELS_CONVERT_FAST420_H */

/* gst-zerocopy: the tiling of the CUDA conversion (tile_geom()).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host code: how convert_cuda() cuts the destination into tiles whose
 * source spans fit in shared memory. zcconvert.cu launches with it, and
 * convert_cpu_tiled() (zcconvert-cpu-tiled.cpp) replays it on the CPU for
 * the tests; the CPU backend proper never tiles.
 */
#include "zcconvert-common.h"
#include "zcconvert-fast420.h"

#include <cstring>

namespace zc {
namespace detail {

namespace {

/* The most oriented source pixels that one tile's output pixels
 * [x0, x0 + tile_px) of an axis read (n outputs placed at offset `at` in a
 * destination of dst_len pixels, over m inputs), over every tile of that
 * axis. */
int
max_axis_span(const Plan &P, int dst_len, int tile_px, int at, int n, int m)
{
  int best = 0;
  for (int x0 = 0; x0 < dst_len; x0 += tile_px) {
    int x1 = x0 + tile_px - 1;
    x1 = x1 < dst_len - 1 ? x1 : dst_len - 1;
    const int u0 = (x0 > at ? x0 : at) - at;
    const int u1 = (x1 < at + n - 1 ? x1 : at + n - 1) - at;
    if (u0 > u1)
      continue;
    int lo, hi;
    axis_span(P, u0, u1, n, m, &lo, &hi);
    best = hi - lo + 1 > best ? hi - lo + 1 : best;
  }
  return best;
}

int
round16(int v)
{
  return (v + 15) & ~15;
}

} // namespace

bool
tile_geom(const Plan &P, int smem_limit, TileGeom *g)
{
  if (P.cscale || P.pl.mode)
    return false;
  const FmtInfo &f = P.si;
  std::memset(g, 0, sizeof(*g));
  if (P.linear || P.cubic) {
    /* a tap table holds weights and their sum in 32 bits: a linear
     * weight is at most taps * n, a cubic one below 2^15; and a row of
     * taps over 8-bit samples may sum in 32 bits when its weights' sum,
     * times 255, stays below 2^31 */
    for (int axis = 0; axis < 2; axis++) {
      const int64_t n = axis ? P.rh : P.rw, m = axis ? P.oh : P.ow;
      const int64_t taps = filter_taps_max(P, (int)n, (int)m);
      const int64_t wmax = P.linear ? taps * n : (int64_t)1 << 15;
      if (taps * wmax > INT32_MAX)
        return false;
      if (axis == 0)
        g->narrow = f.bits == 8 && taps * wmax * 255 <= INT32_MAX;
    }
  }
  g->n_planes = f.kind == kSemiYuv ? 2 : (f.kind == kPlanarYuv ? 3 : 1);
  for (int p = 0; p < g->n_planes; p++) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(P.sp[p]) | P.ss[p];
    g->vec[p] = a % 16 == 0 ? 16 : (a % 4 == 0 ? 4 : 1);
  }
  const bool swap = orient_swaps_axes(P.orient);
  const int bw = 1 << P.di.ws, bh = 1 << P.di.hs;
  for (int rpt = 4; rpt >= 1; rpt /= 2) {
    g->rows_per_thread = rpt;
    g->tile_bx = kTileThreadsX;
    g->tile_by = kTileThreadsY * rpt;
    g->grid_x = (P.blocks_x + g->tile_bx - 1) / g->tile_bx;
    g->grid_y = (P.blocks_y + g->tile_by - 1) / g->tile_by;
    const int sa = max_axis_span(P, P.dw, g->tile_bx * bw, P.rx, P.rw, P.ow);
    const int sb = max_axis_span(P, P.dh, g->tile_by * bh, P.ry, P.rh, P.oh);
    const int W = swap ? sb : sa, H = swap ? sa : sb;
    /* bounds of source_spans() for a W x H rectangle anywhere */
    int bytes[3], rows[3];
    bytes[0] = W * f.pstride;
    rows[0] = H;
    if (f.kind == kPacked422) {
      bytes[0] = ((W >> 1) + 4) * 4;
    } else if (g->n_planes > 1) {
      const int k = (W >> f.ws) + 4;
      bytes[1] = bytes[2] = k * f.pstride * (f.kind == kSemiYuv ? 2 : 1);
      rows[1] = rows[2] = (H >> f.hs) + 4;
    }
    int64_t total = 0;
    for (int p = 0; p < g->n_planes; p++) {
      g->pitch[p] = round16(bytes[p] + 2 * g->vec[p]);
      g->rows[p] = rows[p];
      total += (int64_t)g->pitch[p] * g->rows[p];
    }
    /* a filter reads each oriented source pixel several times: decode
     * them once (8 bytes each), and make its taps once per output column
     * and row (tap tables, 32-bit values) */
    g->decoded = P.linear || P.cubic;
    g->dec_w = sa;
    g->dec_h = sb;
    g->dec_offset = (int)total;
    if (g->decoded) {
      total += (int64_t)sa * sb * 8;
      g->tab_offset = (int)total;
      g->tab_cs = 3 + filter_taps_max(P, P.rw, P.ow);
      g->tab_rs = 3 + filter_taps_max(P, P.rh, P.oh);
      total += 4 * ((int64_t)g->tile_bx * bw * g->tab_cs
                    + (int64_t)g->tile_by * bh * g->tab_rs);
    }
    if (total <= smem_limit) {
      g->smem = (int)total;
      return true;
    }
  }
  return false;
}

Fast420Mode
fast420_plan(const Plan &P, int smem_limit, TileGeom *g)
{
  std::memset(g, 0, sizeof(*g));
  /* into host memory the generic tiles (convert_cuda()) */
  if (!fast420_family(P) || P.dst_over_bus)
    return kFast420Off;
  const bool identity = !P.linear && !P.cubic && P.cx == 0 && P.cy == 0
                        && P.cw == P.dw && P.ch == P.dh && P.sw == P.dw
                        && P.sh == P.dh;
  /* chroma replicated: videoconvert's I420 to R'G'B' fast path, planar
   * sources only (fast420_same_quad()) */
  if (identity && !P.chroma_up && P.si.kind == kPlanarYuv) {
    g->grid_x = (P.dw + kFastTileW - 1) / kFastTileW;
    g->grid_y = (P.dh + kFastTileH * kFastSameRows - 1)
                / (kFastTileH * kFastSameRows);
    return kFast420Same;
  }
  const bool scaled = P.rw != P.ow || P.rh != P.oh;
  if (P.cubic || !P.chroma_up || (scaled && !P.linear))
    return kFast420Off;
  /* a weight and a table's sum in 32 bits; a row of taps over 8-bit
   * samples too (fast420_linear_quad()) */
  for (int axis = 0; P.linear && axis < 2; axis++) {
    const int64_t n = axis ? P.rh : P.rw, m = axis ? P.oh : P.ow;
    const int64_t taps = filter_taps_max(P, (int)n, (int)m);
    if (taps * taps * n * 255 > INT32_MAX)
      return kFast420Off;
  }
  const FmtInfo &f = P.si;
  g->n_planes = f.kind == kSemiYuv ? 2 : 3;
  for (int p = 0; p < g->n_planes; p++) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(P.sp[p]) | P.ss[p];
    g->vec[p] = a % 16 == 0 ? 16 : (a % 4 == 0 ? 4 : 1);
  }
  g->rows_per_thread = 1;
  g->tile_bx = kFastTileW;
  g->tile_by = kFastTileH;
  g->grid_x = (P.dw + kFastTileW - 1) / kFastTileW;
  g->grid_y = (P.dh + kFastTileH - 1) / kFastTileH;
  const int sa = max_axis_span(P, P.dw, kFastTileW, 0, P.rw, P.ow);
  const int sb = max_axis_span(P, P.dh, kFastTileH, 0, P.rh, P.oh);
  /* bounds of tile_spans() for an sa x sb rectangle anywhere, as in
   * tile_geom() */
  const int bytes[3] = {sa, ((sa >> 1) + 4) * (f.kind == kSemiYuv ? 2 : 1),
                        (sa >> 1) + 4};
  const int rows[3] = {sb, (sb >> 1) + 4, (sb >> 1) + 4};
  int64_t total = 0;
  for (int p = 0; p < g->n_planes; p++) {
    g->pitch[p] = round16(bytes[p] + 2 * g->vec[p]);
    g->rows[p] = rows[p];
    total += (int64_t)g->pitch[p] * g->rows[p];
  }
  g->dec_w = sa;
  g->dec_h = sb;
  g->dec_offset = (int)total;
  if (P.linear) {
    g->decoded = 1;
    g->narrow = 1;
    total += round16(4 * sa * sb);
    g->tab_offset = (int)total;
    g->tab_cs = 3 + filter_taps_max(P, P.rw, P.ow);
    g->tab_rs = 3 + filter_taps_max(P, P.rh, P.oh);
    total += 4 * ((int64_t)kFastTileW * g->tab_cs
                  + (int64_t)kFastTileH * g->tab_rs);
  }
  if (total > smem_limit)
    return kFast420Off;
  g->smem = (int)total;
  return P.linear ? kFast420Linear : kFast420Upsampled;
}

} // namespace detail
} // namespace zc

/* gst-zerocopy: the move route of the CPU backend (zcconvert-fast.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Same-format requests that only move samples (videoflip's orientations,
 * crops, nearest scaling, and a bilinear method at the same size, whose
 * taps are then one pixel of weight 1): the per-block code finds the
 * source of every output pixel with nearest_index() and orient_map() and
 * of every chroma sample with planar_chroma(), then stores the values it
 * read, unchanged (no colour step, no effects). Every orientation maps
 * the output's columns to one source axis and its rows to the other, so
 * here each plane gets two tables (per output column, per output row) and
 * each row is a gather of whole samples (a pixel of packed R'G'B', a
 * luma byte, a chroma byte or a semi-planar U-V pair).
 *
 * Taken: packed R'G'B', GRAY8, GRAY16_LE, and the 8-bit planar and
 * semi-planar formats (4:4:4 per pixel; 4:2:0 and 4:2:2 through the
 * planar paths' chroma mapping), without placement. Left to the per-block
 * code: packed 4:2:2, 10-bit formats, 4:2:2 turned by a quarter (its
 * chroma pairs are averaged), a picture placed with borders.
 */
#include "zcconvert-fast.h"
#include "zcparallel.h"

#include <cstring>
#include <vector>

namespace zc {
namespace detail {

namespace {

/* Output samples per thread below which another thread does not pay. */
constexpr int64_t kMinSamplesPerThread = 64 * 1024;

/* One plane of the move: output sample (x, y) is source sample
 * (col[x], row[y]), or (row[y], col[x]) where the orientation swaps the
 * axes; `bytes` bytes a sample. */
struct MovePlane
{
  const uint8_t *src;
  size_t ss;
  uint8_t *dst;
  size_t ds;
  int bytes, w, h;
  bool swap;
  std::vector<int32_t> col, row;
};

template <int B>
void
move_row(const MovePlane &m, int y)
{
  uint8_t *d = m.dst + (size_t)y * m.ds;
  const int32_t *col = m.col.data();
  if (!m.swap) {
    const uint8_t *s = m.src + (size_t)m.row[y] * m.ss;
    for (int x = 0; x < m.w; x++)
      std::memcpy(d + (size_t)B * x, s + (size_t)B * col[x], B);
    return;
  }
  const uint8_t *s = m.src + (size_t)B * m.row[y];
  for (int x = 0; x < m.w; x++)
    std::memcpy(d + (size_t)B * x, s + (size_t)col[x] * m.ss, B);
}

void
run_plane(const MovePlane &m, unsigned n_threads)
{
  void (*row)(const MovePlane &, int) = m.bytes == 1   ? move_row<1>
                                        : m.bytes == 2 ? move_row<2>
                                        : m.bytes == 3 ? move_row<3>
                                                       : move_row<4>;
  const unsigned n
      = parallel_threads(m.h, n_threads, m.w, kMinSamplesPerThread);
  parallel_rows(m.h, n, [&m, row](int y0, int y1) {
    for (int y = y0; y < y1; y++)
      row(m, y);
  });
}

/* The plane of whole pixels (packed R'G'B', GRAY, luma, or a 4:4:4
 * chroma plane: the same mapping), as out_pixel() reads it. */
void
pixel_maps(const Plan &P, MovePlane *m)
{
  m->w = P.dw;
  m->h = P.dh;
  m->swap = orient_swaps_axes(P.orient);
  m->col.resize(P.dw);
  m->row.resize(P.dh);
  int sx, sy;
  for (int x = 0; x < P.dw; x++) {
    orient_to_source(P, nearest_index(x, P.rw, P.ow), 0, &sx, &sy);
    m->col[x] = m->swap ? sy : sx;
  }
  for (int y = 0; y < P.dh; y++) {
    orient_to_source(P, 0, nearest_index(y, P.rh, P.oh), &sx, &sy);
    m->row[y] = m->swap ? sx : sy;
  }
}

/* A subsampled chroma plane, as planar_chroma() reads it (kPlanarMove,
 * kPlanarNearest; not 4:2:2 turned), in chroma samples. */
void
chroma_maps(const Plan &P, MovePlane *m)
{
  const PlanarPlan &Q = P.pl;
  const int ws = Q.si.ws, hs = Q.si.hs;
  m->w = Q.pc_dw;
  m->h = Q.pc_dh;
  m->swap = orient_swaps_axes(Q.orient);
  m->col.resize(m->w);
  m->row.resize(m->h);
  const bool nearest = Q.mode == kPlanarNearest;
  int sx, sy;
  for (int bx = 0; bx < m->w; bx++) {
    const int a = nearest ? planar_nearest(bx, Q.pc_dw, Q.pc_w) : bx;
    planar_to_source(Q, a << ws, 0, &sx, &sy);
    m->col[bx] = m->swap ? sy >> hs : sx >> ws;
  }
  for (int by = 0; by < m->h; by++) {
    const int b = nearest ? planar_nearest(by, Q.pc_dh, Q.pc_h) : by;
    planar_to_source(Q, 0, b << hs, &sx, &sy);
    m->row[by] = m->swap ? sx >> ws : sy >> hs;
  }
}

MovePlane
plane(const Plan &P, int p, int bytes)
{
  MovePlane m;
  m.src = P.sp[p];
  m.ss = P.ss[p];
  m.dst = P.dp[p];
  m.ds = P.ds[p];
  m.bytes = bytes;
  return m;
}

} // namespace

bool
fast_move(const Plan &P, unsigned n_threads, bool run)
{
  const FmtInfo &f = P.si;
  const bool unscaled = P.rw == P.ow && P.rh == P.oh;
  if (!same_format(f, P.di) || P.fx.active || P.matrix_mode != kMatrixNone
      || P.cscale || P.cubic || (P.linear && !unscaled) || f.wide10
      || f.kind == kPacked422 || P.rx || P.ry || P.rw != P.dw
      || P.rh != P.dh)
    return false;
  const bool sub = f.ws || f.hs;
  if (sub) {
    if (P.pl.mode != kPlanarMove && P.pl.mode != kPlanarNearest)
      return false;
    if (f.ws != f.hs && orient_swaps_axes(P.pl.orient))
      return false;
  } else if (P.pl.mode != kPlanarOff) {
    return false;
  }
  if (f.bits != 8 && f.kind != kGray)
    return false;
  if (!run)
    return true;

  try {
    MovePlane luma = plane(P, 0, f.kind == kPackedRgb ? f.pstride : f.bits / 8);
    pixel_maps(P, &luma);
    run_plane(luma, n_threads);
    if (f.kind == kPlanarYuv) {
      for (int c = 1; c <= 2; c++) {
        MovePlane m = plane(P, f.off[c], 1);
        if (sub)
          chroma_maps(P, &m);
        else
          pixel_maps(P, &m);
        run_plane(m, n_threads);
      }
    } else if (f.kind == kSemiYuv) {
      MovePlane m = plane(P, 1, 2);
      chroma_maps(P, &m);
      run_plane(m, n_threads);
    }
  } catch (...) {
    /* (the tables' memory: the per-block code then writes every byte) */
    return false;
  }
  return true;
}

} // namespace detail
} // namespace zc

/* gst-zerocopy: convert_cpu_tiled() and convert_cpu_fast420(), the CUDA
 * conversion's tiling and its 4:2:0 to R'G'B' paths replayed on the CPU,
 * for the tests.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * In an object of its own, so that the plugin, which never tiles, links
 * neither this nor tile_geom() and fast420_plan() (zcconvert-tiling.cpp);
 * tests/kernels/test-convert.cpp calls it.
 */
#include "zcconvert.h"
#include "zcconvert-common.h"
#include "zcconvert-fast420.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace zc {

namespace {

/* Copies plane q's span sp of the frame into dst, pitch bytes a row, as
 * the kernels stage it in shared memory. */
void
copy_span(const detail::Plan &P, int q, const detail::PlaneSpan &sp,
          uint8_t *dst, int pitch)
{
  for (int r = 0; r < sp.rows; r++)
    std::memcpy(dst + (size_t)r * pitch,
                P.sp[q] + (size_t)(sp.row0 + r) * P.ss[q] + sp.byte0,
                (size_t)sp.bytes);
}

/* TileSrc that also checks every read against the staged span. */
struct CheckedTileSrc
{
  static constexpr bool kTile = true, kDecoded = false;
  detail::TileSrc t;
  int rows[3], bytes[3];
  bool *bad;

  const uint8_t *
  at(int plane, int row, size_t byte) const
  {
    const int r = row - t.row0[plane], b = (int)byte - t.byte0[plane];
    if (plane < 0 || plane > 2 || r < 0 || r >= rows[plane] || b < 0
        || b >= bytes[plane]) {
      static const uint8_t zero[4] = {0, 0, 0, 0};
      *bad = true;
      return zero;
    }
    return t.at(plane, row, byte);
  }
};

/* DecodedSrc that also checks every read against the decoded span. */
struct CheckedDecodedSrc
{
  static constexpr bool kTile = true, kDecoded = true;
  detail::DecodedSrc d;
  int w, h;
  bool *bad;

  detail::Px
  px(int a, int b) const
  {
    if (a < d.a0 || b < d.b0 || a - d.a0 >= w || b - d.b0 >= h) {
      *bad = true;
      return detail::Px{{0, 0, 0, 0}};
    }
    return d.px(a, b);
  }

  const int32_t *
  col_taps(int u) const
  {
    return checked(d.col_taps(u), u + d.rx - d.x0, g->tile_bx * (1 << P->di.ws),
                   d.cs);
  }

  const int32_t *
  row_taps(int v) const
  {
    return checked(d.row_taps(v), v + d.ry - d.y0, g->tile_by * (1 << P->di.hs),
                   d.rs);
  }

  const detail::Plan *P;
  const detail::TileGeom *g;
  int narrow;

private:
  /* an entry of the tile, filled, within its stride */
  const int32_t *
  checked(const int32_t *e, int i, int n, int stride) const
  {
    static const int32_t one[4] = {0, 1, 1, 1};
    if (i < 0 || i >= n || e[1] < 1 || e[1] > stride - 3) {
      *bad = true;
      return one;
    }
    return e;
  }
};

/* Fast420Src that also checks every read against the staged span. */
struct CheckedFast420Src
{
  detail::Fast420Src t;
  int row0[3], rows[3], byte0[3], bytes[3];
  bool *bad;

  const uint8_t *
  at(int plane, int row, size_t byte) const
  {
    if (plane < 0 || plane > 2 || row < row0[plane]
        || row >= row0[plane] + rows[plane] || (int)byte < byte0[plane]
        || (int)byte >= byte0[plane] + bytes[plane]) {
      static const uint8_t zero[4] = {0, 0, 0, 0};
      *bad = true;
      return zero;
    }
    return t.at(plane, row, byte);
  }
};

} // namespace

bool
convert_cpu_fast420(const FrameDesc &src, const FrameDesc &dst,
                    const ConvertParams &p, int *mode, int smem_limit)
{
  using namespace detail;
  Plan P;
  if (build_plan(src, dst, p, &P) != kPlanOk)
    return false;
  TileGeom g;
  *mode = fast420_plan(P, smem_limit > 0 ? smem_limit : kTileSmemLimit, &g);
  if (*mode == kFast420Off)
    return true;
  if (*mode == kFast420Same) {
    for (int y = 0; y < P.dh; y += kFastSameRows)
      for (int x = 0; x < P.dw; x += kFastPx)
        fast420_same_quad(P, x, y);
    return true;
  }
  std::vector<uint8_t> smem((size_t)g.smem);
  bool bad = false;
  for (int ty = 0; ty < g.grid_y; ty++) {
    for (int tx = 0; tx < g.grid_x; tx++) {
      /* stale bytes from the last tile must not be read */
      std::fill(smem.begin(), smem.end(), (uint8_t)0xa5);
      Fast420Span span;
      fast420_span(P, g, tx, ty, &span);
      if (!span.reads)
        continue;
      const Fast420Tile t = fast420_tile(g, tx, ty, smem.data(), span);
      if (t.pitch > g.dec_w || span.ab[3] - span.ab[1] + 1 > g.dec_h)
        return false; /* the bound in fast420_plan() is wrong */
      for (int i = 0; g.decoded && i < kFast420Entries; i++)
        fast420_fill_entry(P, t, i);
      CheckedFast420Src cs;
      std::memset(&cs, 0, sizeof(cs));
      cs.bad = &bad;
      uint8_t *base = smem.data();
      for (int q = 0; q < span.n; q++) {
        const PlaneSpan &sp = span.sp[q];
        if (sp.rows > g.rows[q] || sp.bytes > g.pitch[q])
          return false; /* the bound in fast420_plan() is wrong */
        copy_span(P, q, sp, base, g.pitch[q]);
        cs.t.set(q, base, g.pitch[q], sp);
        cs.row0[q] = sp.row0;
        cs.rows[q] = sp.rows;
        cs.byte0[q] = sp.byte0;
        cs.bytes[q] = sp.bytes;
        base += (size_t)g.rows[q] * g.pitch[q];
      }
      const int n = g.decoded ? t.pitch * (span.ab[3] - span.ab[1] + 1) : 0;
      for (int i = 0; i < n; i++)
        fast420_decode(P, t, cs, i);
      for (int j = 0; j < kFastThreadsY; j++)
        for (int i = 0; i < kFastThreadsX; i++) {
          if (g.decoded)
            fast420_linear_quad(P, t, t.x0 + i * kFastPx, t.y0 + j);
          else
            fast420_upsampled_quad(P, cs, t.x0 + i * kFastPx, t.y0 + j);
        }
    }
  }
  return !bad;
}

bool
convert_cpu_tiled(const FrameDesc &src, const FrameDesc &dst,
                  const ConvertParams &p, bool *tiled, int smem_limit)
{
  using namespace detail;
  Plan P;
  if (build_plan(src, dst, p, &P) != kPlanOk)
    return false;
  TileGeom g;
  *tiled = tile_geom(P, smem_limit > 0 ? smem_limit : kTileSmemLimit, &g);
  if (!*tiled) {
    /* as convert_cuda() runs an untiled plan: every block through
     * convert_block() */
    return convert_cpu_reference(src, dst, p, 1);
  }
  std::vector<uint8_t> smem((size_t)g.smem);
  bool bad = false;
  for (int ty = 0; ty < g.grid_y; ty++) {
    for (int tx = 0; tx < g.grid_x; tx++) {
      /* stale bytes from the last tile must not be read */
      std::fill(smem.begin(), smem.end(), (uint8_t)0xa5);
      CheckedTileSrc cs;
      std::memset(&cs, 0, sizeof(cs));
      cs.bad = &bad;
      PlaneSpan sp[3];
      int ab[4];
      const bool reads = tile_oriented(P, g, tx, ty, ab);
      if (reads) {
        const int n = tile_spans(P, g, ab, sp);
        uint8_t *base = smem.data();
        for (int q = 0; q < n; q++) {
          if (sp[q].rows > g.rows[q] || sp[q].bytes > g.pitch[q])
            return false; /* the bound in tile_geom() is wrong */
          cs.t.base[q] = base;
          cs.t.pitch[q] = g.pitch[q];
          cs.t.row0[q] = sp[q].row0;
          cs.t.byte0[q] = sp[q].byte0;
          cs.rows[q] = sp[q].rows;
          cs.bytes[q] = sp[q].bytes;
          copy_span(P, q, sp[q], base, g.pitch[q]);
          base += (size_t)g.rows[q] * g.pitch[q];
        }
      }
      CheckedDecodedSrc cd;
      std::memset(&cd, 0, sizeof(cd));
      cd.bad = &bad;
      cd.P = &P;
      cd.g = &g;
      if (g.decoded) {
        cd.d.dec = reinterpret_cast<uint32_t *>(smem.data() + g.dec_offset);
        cd.d.pitch = g.dec_w;
        tile_tables(P, g, tx, ty, smem.data(), &cd.d);
        cd.narrow = cd.d.narrow;
        for (int i = 0; i < tile_table_entries(P, g); i++)
          fill_tile_entry(P, g, cd.d, i);
        if (reads) {
          cd.d.a0 = ab[0];
          cd.d.b0 = ab[1];
          cd.w = ab[2] - ab[0] + 1;
          cd.h = ab[3] - ab[1] + 1;
          if (cd.w > g.dec_w || cd.h > g.dec_h)
            return false; /* the bound in tile_geom() is wrong */
          for (int b = ab[1]; b <= ab[3]; b++)
            for (int a = ab[0]; a <= ab[2]; a++)
              cd.d.store(a, b, oriented_px(P, cs, a, b));
        }
      }
      for (int j = 0; j < g.tile_by; j++) {
        const int by = ty * g.tile_by + j;
        if (by >= P.blocks_y)
          break;
        const RowCtx rc = row_ctx(P, by);
        for (int i = 0; i < g.tile_bx; i++) {
          const int bx = tx * g.tile_bx + i;
          if (bx >= P.blocks_x)
            break;
          if (g.decoded)
            convert_block(P, cd, rc, bx, by);
          else
            convert_block(P, cs, rc, bx, by);
        }
      }
    }
  }
  return !bad;
}

} // namespace zc

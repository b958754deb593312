/* gst-zerocopy: the repack route of the CPU backend (zcconvert-fast.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Between the 8-bit 4:2:0 layouts (NV12, NV21, I420, YV12), same colour,
 * nothing moved: the luma rows copied, the chroma samples moved between
 * planes (repack_420()).
 *
 * Between packed R'G'B' formats at the same size, with nothing moved and no
 * effect, convert_block() takes each pixel's R, G, B and alpha (the padding
 * byte of xRGB-like formats counts as alpha; 0xff from a 3-byte format) and
 * stores them at the destination's places, the colour untouched. Here the
 * same permutation runs on whole rows: 32-bit words with loop-invariant
 * shifts (which compilers vectorise) when both formats have 4 bytes, bytes
 * otherwise.
 */
#include "zcconvert-fast.h"
#include "zcparallel.h"

#include <cstring>

namespace zc {
namespace detail {

namespace {

/* Pixels per thread below which another thread does not pay. */
constexpr int64_t kMinPixelsPerThread = 64 * 1024;

/* One row of 4-byte pixels: each destination byte k takes source byte
 * sel[k] (shift 8 sel[k]) or is 0xff (in `fill`). */
void
row_4to4(const uint8_t *s, uint8_t *d, int w, const int sel[4], uint32_t fill)
{
  unsigned sh[4];
  uint32_t keep[4];
  for (int k = 0; k < 4; k++) {
    sh[k] = sel[k] >= 0 ? 8u * (unsigned)sel[k] : 0u;
    keep[k] = sel[k] >= 0 ? 0xffu : 0u;
  }
  const unsigned s0 = sh[0], s1 = sh[1], s2 = sh[2], s3 = sh[3];
  const uint32_t k0 = keep[0], k1 = keep[1] << 8, k2 = keep[2] << 16,
                 k3 = keep[3] << 24;
  if ((reinterpret_cast<uintptr_t>(s) & 3) == 0
      && (reinterpret_cast<uintptr_t>(d) & 3) == 0) {
    const uint32_t *in = reinterpret_cast<const uint32_t *>(s);
    uint32_t *out = reinterpret_cast<uint32_t *>(d);
    for (int x = 0; x < w; x++) {
      const uint32_t v = in[x];
      out[x] = ((v >> s0) & k0) | (((v >> s1) << 8) & k1)
               | (((v >> s2) << 16) & k2) | (((v >> s3) << 24) & k3) | fill;
    }
    return;
  }
  for (int x = 0; x < w; x++) {
    uint32_t v;
    std::memcpy(&v, s + 4 * (size_t)x, 4);
    const uint32_t o = ((v >> s0) & k0) | (((v >> s1) << 8) & k1)
                       | (((v >> s2) << 16) & k2) | (((v >> s3) << 24) & k3)
                       | fill;
    std::memcpy(d + 4 * (size_t)x, &o, 4);
  }
}

/* row_4to4() with the permutation known to the compiler: constant shifts,
 * which GCC vectorises with SSE2 too (the shifts by variables above need
 * AVX2's per-lane shifts). */
template <int S0, int S1, int S2, int S3>
void
row_perm(const uint8_t *s, uint8_t *d, int w, uint32_t fill)
{
  for (int x = 0; x < w; x++) {
    uint32_t v;
    std::memcpy(&v, s + 4 * (size_t)x, 4);
    const uint32_t o = ((v >> (8 * S0)) & 0xffu)
                       | (((v >> (8 * S1)) & 0xffu) << 8)
                       | (((v >> (8 * S2)) & 0xffu) << 16)
                       | (((v >> (8 * S3)) & 0xffu) << 24) | fill;
    std::memcpy(d + 4 * (size_t)x, &o, 4);
  }
}

using Row4 = void (*)(const uint8_t *, uint8_t *, int, uint32_t);

template <int S0, int S1, int S2, int S3>
void
match_perm(const int sel[4], Row4 *row)
{
  if (!*row && sel[0] == S0 && sel[1] == S1 && sel[2] == S2 && sel[3] == S3)
    *row = row_perm<S0, S1, S2, S3>;
}

/* The loop for a permutation of the four bytes (every pair of 4-byte
 * R'G'B' formats), or null. */
Row4
perm_row(const int sel[4])
{
  Row4 row = nullptr;
  match_perm<0, 1, 2, 3>(sel, &row);
  match_perm<0, 1, 3, 2>(sel, &row);
  match_perm<0, 2, 1, 3>(sel, &row);
  match_perm<0, 2, 3, 1>(sel, &row);
  match_perm<0, 3, 1, 2>(sel, &row);
  match_perm<0, 3, 2, 1>(sel, &row);
  match_perm<1, 0, 2, 3>(sel, &row);
  match_perm<1, 0, 3, 2>(sel, &row);
  match_perm<1, 2, 0, 3>(sel, &row);
  match_perm<1, 2, 3, 0>(sel, &row);
  match_perm<1, 3, 0, 2>(sel, &row);
  match_perm<1, 3, 2, 0>(sel, &row);
  match_perm<2, 0, 1, 3>(sel, &row);
  match_perm<2, 0, 3, 1>(sel, &row);
  match_perm<2, 1, 0, 3>(sel, &row);
  match_perm<2, 1, 3, 0>(sel, &row);
  match_perm<2, 3, 0, 1>(sel, &row);
  match_perm<2, 3, 1, 0>(sel, &row);
  match_perm<3, 0, 1, 2>(sel, &row);
  match_perm<3, 0, 2, 1>(sel, &row);
  match_perm<3, 1, 0, 2>(sel, &row);
  match_perm<3, 1, 2, 0>(sel, &row);
  match_perm<3, 2, 0, 1>(sel, &row);
  match_perm<3, 2, 1, 0>(sel, &row);
  return row;
}

/* Any other pair (3 bytes on one side or both). */
void
row_bytes(const uint8_t *s, int sps, uint8_t *d, int dps, int w,
          const int sel[4])
{
  for (int x = 0; x < w; x++, s += sps, d += dps)
    for (int k = 0; k < dps; k++)
      d[k] = sel[k] >= 0 ? s[sel[k]] : 0xff;
}

/* One chroma row of a 4:2:0 frame: U and V of sample k at u[S k], v[S k]
 * (S = 1 planar, 2 semi-planar). */
template <int SI, int SO>
void
move_chroma_row(const uint8_t *__restrict su, const uint8_t *__restrict sv,
           uint8_t *__restrict du, uint8_t *__restrict dv, int n)
{
  for (int k = 0; k < n; k++) {
    du[SO * k] = su[SI * k];
    dv[SO * k] = sv[SI * k];
  }
}

/* Between the 8-bit 4:2:0 layouts (NV12, NV21, I420, YV12) with the same
 * colour, nothing moved, no effect: convert_block() stores each luma
 * sample as read and each block's chroma as its first pixel reads it,
 * which at the same subsampling is the block's own chroma sample. */
bool
repack_420(const Plan &P, unsigned n_threads, bool run)
{
  const FmtInfo &s = P.si, &d = P.di;
  auto is_420 = [](const FmtInfo &f) {
    return (f.kind == kPlanarYuv || f.kind == kSemiYuv) && f.bits == 8
           && f.ws == 1 && f.hs == 1;
  };
  if (!is_420(s) || !is_420(d) || P.fx.active || P.matrix_mode != kMatrixNone
      || P.cscale || P.pl.mode || P.chroma_up || P.chroma_down
      || !plan_moves_nothing(P))
    return false;
  if (!run)
    return true;
  /* the chroma of sample k: plane, byte offset, step */
  auto at = [](const FmtInfo &f, int c, int *plane, int *off) {
    *plane = f.kind == kSemiYuv ? 1 : f.off[c];
    *off = f.kind == kSemiYuv ? f.off[c] : 0;
  };
  int spu, sou, spv, sov, dpu, dou, dpv, dov;
  at(s, 1, &spu, &sou);
  at(s, 2, &spv, &sov);
  at(d, 1, &dpu, &dou);
  at(d, 2, &dpv, &dov);
  const bool ssemi = s.kind == kSemiYuv, dsemi = d.kind == kSemiYuv;
  void (*crow)(const uint8_t *, const uint8_t *, uint8_t *, uint8_t *, int)
      = ssemi ? (dsemi ? move_chroma_row<2, 2> : move_chroma_row<2, 1>)
              : (dsemi ? move_chroma_row<1, 2> : move_chroma_row<1, 1>);
  const int w = P.dw, h = P.dh, cw = (w + 1) / 2, ch = (h + 1) / 2;
  const unsigned n = parallel_threads(ch, n_threads, 3 * (int64_t)cw * 2,
                                      kMinPixelsPerThread);
  parallel_rows(ch, n, [&](int r0, int r1) {
    for (int y = 2 * r0; y < 2 * r1 && y < h; y++)
      std::memcpy(P.dp[0] + (size_t)y * P.ds[0], P.sp[0] + (size_t)y * P.ss[0],
                  (size_t)w);
    for (int r = r0; r < r1; r++)
      crow(P.sp[spu] + (size_t)r * P.ss[spu] + sou,
           P.sp[spv] + (size_t)r * P.ss[spv] + sov,
           P.dp[dpu] + (size_t)r * P.ds[dpu] + dou,
           P.dp[dpv] + (size_t)r * P.ds[dpv] + dov, cw);
  });
  return true;
}

} // namespace

bool
fast_repack(const Plan &P, unsigned n_threads, bool run)
{
  if (repack_420(P, n_threads, run))
    return true;
  if (P.si.kind != kPackedRgb || P.di.kind != kPackedRgb || P.fx.active
      || P.matrix_mode != kMatrixNone || !plan_moves_nothing(P))
    return false;
  if (!run)
    return true;

  /* sel[destination byte] = source byte, or -1 for 0xff */
  int sel[4] = {-1, -1, -1, -1};
  for (int c = 0; c < 4; c++)
    if (P.di.off[c] >= 0)
      sel[P.di.off[c]] = c < 3 || P.si.off[3] >= 0 ? P.si.off[c] : -1;
  uint32_t fill = 0;
  for (int k = 0; k < 4; k++)
    if (sel[k] < 0)
      fill |= 0xffu << (8 * k);

  const int w = P.dw;
  const int sps = P.si.pstride, dps = P.di.pstride;
  const Row4 perm = sps == 4 && dps == 4 ? perm_row(sel) : nullptr;
  const unsigned n = parallel_threads(P.dh, n_threads, w, kMinPixelsPerThread);
  parallel_rows(P.dh, n, [&](int y0, int y1) {
    for (int y = y0; y < y1; y++) {
      const uint8_t *s = P.sp[0] + (size_t)y * P.ss[0];
      uint8_t *d = P.dp[0] + (size_t)y * P.ds[0];
      if (perm)
        perm(s, d, w, fill);
      else if (sps == 4 && dps == 4)
        row_4to4(s, d, w, sel, fill);
      else
        row_bytes(s, sps, d, dps, w, sel);
    }
  });
  return true;
}

} // namespace detail
} // namespace zc

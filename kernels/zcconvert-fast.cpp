/* gst-zerocopy: the repack route of the CPU backend (zcconvert-fast.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later
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

/* Any other pair (3 bytes on one side or both). */
void
row_bytes(const uint8_t *s, int sps, uint8_t *d, int dps, int w,
          const int sel[4])
{
  for (int x = 0; x < w; x++, s += sps, d += dps)
    for (int k = 0; k < dps; k++)
      d[k] = sel[k] >= 0 ? s[sel[k]] : 0xff;
}

} // namespace

bool
fast_repack(const Plan &P, unsigned n_threads, bool run)
{
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
  const unsigned n = parallel_threads(P.dh, n_threads, w, kMinPixelsPerThread);
  parallel_rows(P.dh, n, [&](int y0, int y1) {
    for (int y = y0; y < y1; y++) {
      const uint8_t *s = P.sp[0] + (size_t)y * P.ss[0];
      uint8_t *d = P.dp[0] + (size_t)y * P.ds[0];
      if (sps == 4 && dps == 4)
        row_4to4(s, d, w, sel, fill);
      else
        row_bytes(s, sps, d, dps, w, sel);
    }
  });
  return true;
}

} // namespace detail
} // namespace zc

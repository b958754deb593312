/* gst-zerocopy: the scaling route of the CPU backend (zcconvert-fast.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Bilinear scaling (Sampling::Bilinear) of 8-bit frames, without
 * orientation. convert_block() makes each output pixel with
 * sample_linear(): for each tap row, the sum of wx * s over the tap
 * columns, every source pixel fetched (and its chroma upsampled) again for
 * every tap it serves; then acc = sum wy * (sum wx * s), one exact integer,
 * rounded once: (acc + W / 2) / W with W = wsum_x * wsum_y. The same acc
 * comes out of any order of the terms, so here it is made separably:
 *
 *  1. each source row the band of output rows needs is decoded once per
 *     thread into the values fetch() returns (luma; chroma upsampled over
 *     the whole frame with the interstitial filters, horizontal first,
 *     then vertical, the same edge rules, or each sample replicated
 *     where the plan does not upsample; alpha), one array per channel,
 *     and kept in a ring while output rows still read it;
 *  2. per output row, the vertical sums sum wy * s of every source column
 *     that the row's taps reach (vectorised over the columns);
 *  3. per output pixel, the horizontal sum of those: acc. Where the ratio
 *     is an integer, every column away from the edges has the same taps at
 *     a fixed stride, and that loop is written for it;
 *  4. the rounding, without a division per pixel (see divide_row());
 *  5. the colour step with zcconvert-common.h's own functions, and the
 *     store, as convert_block() stores (borders included); into a
 *     subsampled destination two rows at a time where it is 4:2:0, each
 *     block's chroma averaged (or its first pixel's) as there;
 *  6. the point effects, if any, on the rows just stored, a few at a time
 *     while they are in the cache (effects_after_rows(): the effects
 *     route's tables and loops, in place on the picture).
 *
 * No intermediate is rounded. The types of the sums are chosen per request
 * from the largest sums the taps allow (ScaleTier), so none can overflow;
 * a request whose sums would not fit in the widest tier is left to the
 * per-block code, as is everything else (other depths, orientation,
 * effects on a picture off the chroma blocks, the planar paths that the
 * same-format requests take).
 *
 * Two exact reductions keep the numbers small. sample_linear() sums the
 * weights over the taps before the edge clamp, so taps that clamp onto the
 * same pixel merge into one with their summed weight; and one output
 * sample's weights on one axis share a factor g (a halving: weights
 * 1920 * (1, 3, 3, 1)), which divides acc by gx * gy and W by the same:
 * with a = acc / g, V = W / g (g = gx gy) and a = qV + r, 0 <= r < V,
 * (g a + floor(g V / 2)) / (g V) = q + [g r >= g V - floor(g V / 2)]
 * = q + [g r >= ceil(g V / 2)] = q + [r >= V / 2] = q + [r >= ceil(V / 2)]
 * (g r is an integer), which is (a + floor(V / 2)) / V: the same quotient.
 */
#include "zcconvert-fast.h"
#include "zcparallel.h"

#include <atomic>
#include <cstring>
#include <numeric>
#include <vector>

namespace zc {
namespace detail {

namespace {

/* Output pixels per thread below which another thread does not pay. */
constexpr int64_t kMinPixelsPerThread = 64 * 1024;

/* Destination block rows stored before the point effects run on them:
 * a few, so that they are still in the cache */
constexpr int kEffectsRows = 4;

/* The taps of every output sample of one axis (n outputs over m inputs),
 * as sample_linear() takes them: consecutive inputs first[u] ..
 * first[u] + cnt[u] - 1 after the edge clamp (clamped taps merged), their
 * weights divided by their common factor, and wsum[u], the sum of the
 * weights before the clamp divided by the same factor. */
struct FilterAxis
{
  int n = 0, m = 0;
  int lo = 0, hi = 0; /* inputs read by any output */
  int tmax = 0;       /* taps of an output, at most */
  std::vector<int32_t> first, cnt;
  std::vector<uint32_t> w; /* tmax a sample, 0 past cnt[u] */
  std::vector<uint64_t> wsum;
  uint64_t wsum_max = 0;
  /* the same taps as windows of `span` inputs: start[u] (from lo) on,
   * weights ww[u span + i], 0 where the window is wider than the taps: one
   * loop length for every output */
  int span = 0;
  std::vector<int32_t> start;
  std::vector<uint32_t> ww;
  /* where the ratio m / n is an integer f: outputs [reg0, reg1) all have
   * the taps reg_w[0 .. reg_t) at inputs f u + reg_a on (reg1 == reg0
   * when there are none, or f has no loop of its own) */
  int reg_f = 0, reg_t = 0, reg_a = 0, reg0 = 0, reg1 = 0;
  uint32_t reg_w[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
};

void
build_axis(int n, int m, FilterAxis *a)
{
  a->n = n;
  a->m = m;
  a->tmax = (int)(linear_taps(0, n, m).S / n);
  a->first.assign(n, 0);
  a->cnt.assign(n, 0);
  a->w.assign((size_t)n * a->tmax, 0);
  a->wsum.assign(n, 0);
  a->lo = m;
  a->hi = -1;
  std::vector<int64_t> raw(a->tmax);
  for (int u = 0; u < n; u++) {
    const LinearTaps t = linear_taps(u, n, m);
    int64_t wsum = 0;
    int c = 0, prev = -1;
    for (int k = t.k0; k <= t.k1; k++) {
      const int64_t wk = linear_weight(t, k);
      wsum += wk;
      const int idx = clamp_index(k, m);
      if (c > 0 && idx == prev) {
        raw[c - 1] += wk;
        continue;
      }
      if (c == 0)
        a->first[u] = idx;
      raw[c++] = wk;
      prev = idx;
    }
    int64_t g = 0;
    for (int i = 0; i < c; i++)
      g = std::gcd(g, raw[i]);
    /* (the merged weights sum to wsum, so g divides it) */
    a->cnt[u] = c;
    for (int i = 0; i < c; i++)
      a->w[(size_t)u * a->tmax + i] = (uint32_t)(raw[i] / g);
    a->wsum[u] = (uint64_t)(wsum / g);
    a->wsum_max = a->wsum[u] > a->wsum_max ? a->wsum[u] : a->wsum_max;
    a->lo = a->first[u] < a->lo ? a->first[u] : a->lo;
    const int last = a->first[u] + c - 1;
    a->hi = last > a->hi ? last : a->hi;
  }

  const int wid = a->hi - a->lo + 1;
  a->span = a->tmax < wid ? a->tmax : wid;
  a->start.assign(n, 0);
  a->ww.assign((size_t)n * a->span, 0);
  for (int u = 0; u < n; u++) {
    /* the taps lie in [lo, hi], so a window of span <= wid inputs
     * holding them fits there too */
    const int f0 = a->first[u] - a->lo;
    const int s0 = f0 < wid - a->span ? f0 : wid - a->span;
    a->start[u] = s0;
    for (int i = 0; i < a->cnt[u]; i++)
      a->ww[(size_t)u * a->span + (f0 - s0) + i]
          = a->w[(size_t)u * a->tmax + i];
  }

  /* An integer ratio f (m = f n): T taps at f u + a for every output away
   * from the edges (f = 2: 1, 3, 3, 1 over 2u - 1 .. 2u + 2). Only the
   * (f, T) pairs that h_regular() is instantiated for. */
  if (m % n)
    return;
  const int f = m / n, mid = n / 2;
  const int T = a->cnt[mid];
  if (!((f == 1 && T == 1) || (f == 2 && T == 4) || (f == 3 && T == 5)
        || (f == 4 && T == 8)))
    return;
  const int off = a->first[mid] - f * mid;
  const uint32_t *ref = &a->w[(size_t)mid * a->tmax];
  auto regular = [&](int u) {
    if (a->cnt[u] != T || a->first[u] != f * u + off
        || a->wsum[u] != a->wsum[mid])
      return false;
    return std::memcmp(&a->w[(size_t)u * a->tmax], ref, T * sizeof(uint32_t))
           == 0;
  };
  int u0 = mid, u1 = mid + 1;
  while (u0 > 0 && regular(u0 - 1))
    u0--;
  while (u1 < n && regular(u1))
    u1++;
  a->reg_f = f;
  a->reg_t = T;
  a->reg_a = off;
  a->reg0 = u0;
  a->reg1 = u1;
  for (int i = 0; i < T; i++)
    a->reg_w[i] = ref[i];
}

/* The arithmetic of a request, from the largest reduced weight sums of its
 * axes (Wx, Wy; W = Wx Wy at most) and 8-bit samples: vertical sums are at
 * most 255 Wy, acc at most 255 W, and the rounding needs N = acc +
 * floor(W / 2) + 1/2 < 2^21 in float, 2^50 in double (divide_row()):
 *  - kNarrow16: everything in 16 bits: 256 W <= 2^16 (a halving: W = 64);
 *  - kNarrow: vertical sums in 16 bits (255 Wy < 2^16), acc in 32, float:
 *    256 W <= 2^21;
 *  - kMid: the same with 32-bit vertical sums;
 *  - kWide: 32-bit vertical sums (255 Wy < 2^32), 64-bit acc, double:
 *    256 W <= 2^50.
 * Beyond that (shrinks near 64x between large coprime sizes on both
 * axes), the per-block code. */
enum ScaleTier { kNoTier, kNarrow16, kNarrow, kMid, kWide };

ScaleTier
pick_tier(const FilterAxis &h, const FilterAxis &v)
{
  const uint64_t wy = v.wsum_max, wx = h.wsum_max;
  if (wx >= ((uint64_t)1 << 30) || wy >= ((uint64_t)1 << 24))
    return kNoTier;
  const uint64_t W = wx * wy;
  if (256 * W <= ((uint64_t)1 << 16))
    return kNarrow16;
  if (256 * W <= ((uint64_t)1 << 21))
    return 255 * wy <= 0xffff ? kNarrow : kMid;
  if (256 * W <= ((uint64_t)1 << 50))
    return kWide;
  return kNoTier;
}

/* The types of a tier: vertical sums and their weights (VT), horizontal
 * weights (WT), acc (AT), the rounding's float (FT) and the signed
 * integer it converts through (SI, as wide as AT's values need). A
 * product WT * VT is made in AT: 16 x 16 -> 32 bits is one vector
 * multiply pair, where a full 32-bit product is not (SSE2 has none). */
template <class V, class W, class A, class F, class S> struct Arith
{
  using VT = V;
  using WT = W;
  using AT = A;
  using FT = F;
  using SI = S;
};
using Arith16 = Arith<uint16_t, uint16_t, uint16_t, float, int32_t>;
using ArithNarrow = Arith<uint16_t, uint16_t, uint32_t, float, int32_t>;
using ArithMid = Arith<uint32_t, uint32_t, uint32_t, float, int32_t>;
using ArithWide = Arith<uint32_t, uint32_t, uint64_t, double, int64_t>;

/* ---- decoding source rows ------------------------------------------------
 * The values fetch() returns for source pixels X0 .. X1 of a row, one
 * channel in an array. */

/* out[i] = p[S i] (a channel of interleaved samples). */
template <int S>
void
deinterleave(const uint8_t *__restrict p, int n, uint8_t *__restrict out)
{
  for (int i = 0; i < n; i++)
    out[i] = p[S * i];
}

/* chroma_row() for pixels X0 .. X1 of a line of sw pixels, from the line's
 * chroma samples c[S (k - kb)] (the samples those pixels read, from kb
 * on): the 2x interstitial filter. Away from the edges,
 * samples k and k + 1 make pixels 2k + 1 ((3a + b + 2) >> 2) and 2k + 2
 * ((a + 3b + 2) >> 2), which up2_taps() and blend() give too; the edge
 * pixels go through those functions themselves. */
template <int S>
void
upsample_h(const uint8_t *__restrict c, int kb, int sw, int X0, int X1,
           uint8_t *__restrict out)
{
  auto at = [&](int x) {
    const Taps t = up2_taps(x, sw);
    return (uint8_t)blend(t, c[S * (t.a - kb)], c[S * (t.b - kb)]);
  };
  int x = X0;
  if (x <= X1 && !(x & 1)) {
    out[x - X0] = at(x);
    x++;
  }
  /* pairs (2k + 1, 2k + 2) with 2k + 2 <= X1 and 2k + 1 < sw - 1 */
  const int k0 = (x - 1) >> 1;
  int k1 = X1 >= 2 ? (X1 - 2) >> 1 : -1;
  const int kmax = sw >= 3 ? (sw - 3) >> 1 : -1;
  k1 = k1 < kmax ? k1 : kmax;
  /* (x = 2k + 1 is out[2k + 1 - X0]) */
  uint8_t *o = out + (2 * k0 + 1 - X0);
  const uint8_t *ci = c + S * (k0 - kb);
  for (int i = 0; i <= k1 - k0; i++) {
    const uint32_t a = ci[S * i], b = ci[S * (i + 1)];
    o[2 * i] = (uint8_t)((3 * a + b + 2) >> 2);
    o[2 * i + 1] = (uint8_t)((a + 3 * b + 2) >> 2);
  }
  if (k1 >= k0)
    x = 2 * k1 + 3;
  for (; x <= X1; x++)
    out[x - X0] = at(x);
}

/* Pixels X0 .. X0 + n - 1 of a 4:2:x line, each its chroma sample
 * c[S (x >> 1)] as it is (no filter). */
template <int S>
void
replicate_h(const uint8_t *__restrict c, int X0, int n,
            uint8_t *__restrict out)
{
  for (int i = 0; i < n; i++)
    out[i] = c[S * ((X0 + i) >> 1)];
}

/* The vertical step of fetch()'s chroma upsampling: blend() with the row
 * taps' mode as weights (mode 0: (4a + 2) >> 2 = a). */
void
blend_rows(const uint8_t *__restrict a, const uint8_t *__restrict b, int mode,
           int n, uint8_t *__restrict out)
{
  const uint16_t wa = mode == 0 ? 4 : (mode == 1 ? 3 : 1);
  const uint16_t wb = (uint16_t)(4 - wa);
  /* (16-bit lanes: at most 4 * 255 + 2) */
  for (int i = 0; i < n; i++)
    out[i] = (uint8_t)((uint16_t)(wa * a[i] + wb * b[i] + 2) >> 2);
}

/* ---- the sums ------------------------------------------------------------ */

/* out[x] (+)= sum of w[j] r[j][x] over G rows. VT holds the result (the
 * tier guarantees it). */
template <class VT, int G>
void
v_group(const uint8_t *const *r, const VT *w, int n, bool init,
        VT *__restrict out)
{
  const uint8_t *__restrict p[G];
  VT k[G];
  for (int g = 0; g < G; g++) {
    p[g] = r[g];
    k[g] = w[g];
  }
  if (init) {
    for (int x = 0; x < n; x++) {
      VT s = 0;
      for (int g = 0; g < G; g++)
        s += (VT)(k[g] * p[g][x]);
      out[x] = s;
    }
  } else {
    for (int x = 0; x < n; x++) {
      VT s = out[x];
      for (int g = 0; g < G; g++)
        s += (VT)(k[g] * p[g][x]);
      out[x] = s;
    }
  }
}

template <class VT>
void
v_pass(const uint8_t *const *r, const VT *w, int taps, int n, VT *out)
{
  for (int i = 0; i < taps;) {
    const int g = taps - i >= 4 ? 4 : taps - i;
    const bool init = i == 0;
    switch (g) {
    case 4:
      v_group<VT, 4>(r + i, w + i, n, init, out);
      break;
    case 3:
      v_group<VT, 3>(r + i, w + i, n, init, out);
      break;
    case 2:
      v_group<VT, 2>(r + i, w + i, n, init, out);
      break;
    default:
      v_group<VT, 1>(r + i, w + i, n, init, out);
      break;
    }
    i += g;
  }
}

/* acc[u] for outputs [u0, u1) from their windows of S inputs (S = 0:
 * ax.span, for the wide windows); vs[i] is the vertical sum of input
 * lo + i. A gather: each output its own taps. */
template <class A, int S>
void
h_window(const FilterAxis &ax, const typename A::WT *__restrict w,
         const typename A::VT *__restrict vs, int u0, int u1,
         typename A::AT *__restrict acc)
{
  using AT = typename A::AT;
  const int span = S ? S : ax.span;
  const int32_t *start = ax.start.data();
  for (int u = u0; u < u1; u++) {
    const typename A::VT *p = vs + start[u];
    const typename A::WT *wu = w + (size_t)u * span;
    AT s = 0;
    for (int i = 0; i < span; i++)
      s += (AT)((AT)wu[i] * (AT)p[i]);
    acc[u] = s;
  }
}

template <class A>
void
h_windows(const FilterAxis &ax, const typename A::WT *w,
          const typename A::VT *vs, int u0, int u1, typename A::AT *acc)
{
  switch (ax.span) {
  case 1:
    h_window<A, 1>(ax, w, vs, u0, u1, acc);
    break;
  case 2:
    h_window<A, 2>(ax, w, vs, u0, u1, acc);
    break;
  case 3:
    h_window<A, 3>(ax, w, vs, u0, u1, acc);
    break;
  case 4:
    h_window<A, 4>(ax, w, vs, u0, u1, acc);
    break;
  case 5:
    h_window<A, 5>(ax, w, vs, u0, u1, acc);
    break;
  case 6:
    h_window<A, 6>(ax, w, vs, u0, u1, acc);
    break;
  default:
    h_window<A, 0>(ax, w, vs, u0, u1, acc);
    break;
  }
}

/* acc[u] for the outputs with the same T taps at stride F. */
template <class A, int F, int T>
void
h_regular(const FilterAxis &ax, const typename A::VT *__restrict vs,
          typename A::AT *__restrict acc)
{
  using AT = typename A::AT;
  typename A::WT w[T];
  for (int i = 0; i < T; i++)
    w[i] = (typename A::WT)ax.reg_w[i];
  const typename A::VT *p = vs + (ax.reg_a - ax.lo);
  for (int u = ax.reg0; u < ax.reg1; u++) {
    AT s = 0;
    for (int i = 0; i < T; i++)
      s += (AT)((AT)w[i] * (AT)p[F * u + i]);
    acc[u] = s;
  }
}

template <class A>
void
h_pass(const FilterAxis &ax, const typename A::WT *w, const typename A::VT *vs,
       typename A::AT *acc)
{
  int r0 = ax.reg0, r1 = ax.reg1;
  switch (ax.reg_f * 16 + ax.reg_t) {
  case 1 * 16 + 1:
    h_regular<A, 1, 1>(ax, vs, acc);
    break;
  case 2 * 16 + 4:
    h_regular<A, 2, 4>(ax, vs, acc);
    break;
  case 3 * 16 + 5:
    h_regular<A, 3, 5>(ax, vs, acc);
    break;
  case 4 * 16 + 8:
    h_regular<A, 4, 8>(ax, vs, acc);
    break;
  default:
    r0 = r1 = 0;
    break;
  }
  h_windows<A>(ax, w, vs, 0, r0, acc);
  h_windows<A>(ax, w, vs, r1, ax.n, acc);
}

/* q[u] = (acc[u] + W / 2) / W, W = Wx(u) Wy, without a division. Per row,
 * half[u] = floor(W / 2) + 1/2 and r[u] = fl(fl(1 / Wx) fl(1 / Wy)) (the
 * reciprocals correctly rounded: IEEE division); then N = acc + half[u]
 * is exact in FT (a multiple of 1/2 below 2^21, or 2^50 in double) and
 * p = fl(N r[u]) is N / W times four factors (1 + d), |d| <= e (float:
 * e = 2^-24, double: 2^-53), so |p - N / W| < 4.0001 e N / W. With
 * acc + floor(W / 2) = qW + r, 0 <= r < W, N / W = q + (r + 1/2) / W lies
 * 1 / (2W) or more from the integers: p truncates to q whenever
 * 4.0001 e N < 1/2, i.e. N < 2^21 / 1.0001 (float) or 2^50 / 1.0001
 * (double). The tiers bound W: N <= 255.5 W + 1/2 with 256 W <= 2^21
 * (2^50). (A sum, then a product: nothing to fuse into a multiply-add.) */
template <class A>
void
divide_row(const typename A::AT *__restrict acc,
           const typename A::FT *__restrict half,
           const typename A::FT *__restrict r, int n, uint8_t *__restrict q)
{
  using FT = typename A::FT;
  using SI = typename A::SI;
  for (int u = 0; u < n; u++)
    q[u] = (uint8_t)(SI)(((FT)(SI)acc[u] + half[u]) * r[u]);
}

/* ---- colour and store ---------------------------------------------------- */

/* Where each of a pixel's 4 values goes in its 32-bit word: the bytes of a
 * packed destination pixel (little-endian, as convert_block() stores it),
 * or Y, U, V in bytes 0, 1, 2 for the planar stores. keep is 0 for a value
 * that is not stored. */
struct WordLayout
{
  unsigned sh[4];
  uint32_t keep[4];
};

inline uint32_t
pack_word(const WordLayout &L, const uint32_t c[4])
{
  return ((c[0] & L.keep[0]) << L.sh[0]) | ((c[1] & L.keep[1]) << L.sh[1])
         | ((c[2] & L.keep[2]) << L.sh[2]) | ((c[3] & L.keep[3]) << L.sh[3]);
}

/* out_pixel()'s colour step at depth 8 (no widening either way) on the
 * samples q[0..3][u], into words. */
template <int Mode>
void
colour_row(const Plan &P, const uint8_t *const q[4], int n, const WordLayout &L,
           uint32_t *__restrict words)
{
  const uint8_t *__restrict q0 = q[0], *__restrict q1 = q[1],
                            *__restrict q2 = q[2], *__restrict q3 = q[3];
  const unsigned s0 = L.sh[0], s1 = L.sh[1], s2 = L.sh[2], s3 = L.sh[3];
  const uint32_t k0 = L.keep[0], k1 = L.keep[1], k2 = L.keep[2], k3 = L.keep[3];
  for (int u = 0; u < n; u++) {
    Px s;
    s.c[0] = q0[u];
    s.c[1] = q1[u];
    s.c[2] = q2[u];
    s.c[3] = q3[u];
    if (Mode == kMatrixFloor)
      s = apply_matrix(P, s);
    else if (Mode == kMatrixOrc8)
      s = apply_orc_matrix8(P, s);
    else if (Mode == kMatrixAyuvArgb)
      s = apply_ayuv_argb(P, s);
    words[u] = ((s.c[0] & k0) << s0) | ((s.c[1] & k1) << s1)
               | ((s.c[2] & k2) << s2) | ((s.c[3] & k3) << s3);
  }
}

/* Whether apply_matrix() at depth 8 computes in 32 bits what it computes
 * in 64, with 16-bit coefficients: |m| < 2^15 a coefficient and |offset|
 * <= 2^28 keep every sum of three 8-bit samples below 2^31 (the matrices
 * of 8-bit conversions are a few hundred). */
bool
floor_matrix_fits_32(const Plan &P)
{
  if (P.depth != 8)
    return false;
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) {
      if (P.m[i][j] < INT16_MIN || P.m[i][j] > INT16_MAX)
        return false;
    }
    if (P.m[i][3] < -(1 << 28) || P.m[i][3] > (1 << 28))
      return false;
  }
  return true;
}

/* colour_row<kMatrixFloor>() in 32-bit sums of 16-bit products with the
 * coefficients held in registers: the same sums, shifts and clamps
 * (floor_matrix_fits_32()), a loop the compiler vectorises with 16-bit
 * multiplies. */
void
colour_row_floor32(const Plan &P, const uint8_t *const q[4], int n,
                   const WordLayout &L, uint32_t *__restrict words)
{
  const uint8_t *__restrict q0 = q[0], *__restrict q1 = q[1],
                            *__restrict q2 = q[2], *__restrict q3 = q[3];
  const int16_t m00 = (int16_t)P.m[0][0], m01 = (int16_t)P.m[0][1],
                m02 = (int16_t)P.m[0][2], m10 = (int16_t)P.m[1][0],
                m11 = (int16_t)P.m[1][1], m12 = (int16_t)P.m[1][2],
                m20 = (int16_t)P.m[2][0], m21 = (int16_t)P.m[2][1],
                m22 = (int16_t)P.m[2][2];
  const int32_t m03 = (int32_t)P.m[0][3], m13 = (int32_t)P.m[1][3],
                m23 = (int32_t)P.m[2][3];
  const unsigned s0 = L.sh[0], s1 = L.sh[1], s2 = L.sh[2], s3 = L.sh[3];
  const uint32_t k0 = L.keep[0], k1 = L.keep[1], k2 = L.keep[2], k3 = L.keep[3];
  for (int u = 0; u < n; u++) {
    const int16_t a = q0[u], b = q1[u], c = q2[u];
    int32_t r0 = ((int32_t)(m00 * a) + (int32_t)(m01 * b) + (int32_t)(m02 * c)
                  + m03) >> 8;
    int32_t r1 = ((int32_t)(m10 * a) + (int32_t)(m11 * b) + (int32_t)(m12 * c)
                  + m13) >> 8;
    int32_t r2 = ((int32_t)(m20 * a) + (int32_t)(m21 * b) + (int32_t)(m22 * c)
                  + m23) >> 8;
    r0 = r0 < 0 ? 0 : (r0 > 255 ? 255 : r0);
    r1 = r1 < 0 ? 0 : (r1 > 255 ? 255 : r1);
    r2 = r2 < 0 ? 0 : (r2 > 255 ? 255 : r2);
    words[u] = (((uint32_t)r0 & k0) << s0) | (((uint32_t)r1 & k1) << s1)
               | (((uint32_t)r2 & k2) << s2) | (((uint32_t)q3[u] & k3) << s3);
  }
}

/* ---- the request --------------------------------------------------------- */

struct ScaleJob
{
  const Plan *P;
  FilterAxis hx, vy;
  ScaleTier tier;
  int nch;          /* channels filtered: 1 (GRAY8), 3, 4 (R'G'B'A) */
  uint8_t cfill[4]; /* the others' values (fetch(): 128 chroma, 255 alpha) */
  int X0, wid;      /* source pixels read: cx + hx.lo on, wid of them */
  int ring;         /* decoded rows kept */
  bool unit;        /* one tap of weight 1 an output on both axes (a
                       conversion at the same size): the sums are the
                       decoded values themselves */
  bool floor32;     /* kMatrixFloor in 32-bit lanes (floor_matrix_fits_32) */
  WordLayout L;
  uint32_t border_word;
};

/* What a thread keeps between rows. */
template <class A> struct Band
{
  using VT = typename A::VT;
  using AT = typename A::AT;
  using FT = typename A::FT;

  const ScaleJob &J;
  const Plan &P;
  /* the ring of decoded rows, row b in slot b % ring: tag = b (a row of
   * the cropped picture), ch = its channels (into buf, or into the frame
   * where a plane holds them as they are); the rows of one output row are
   * consecutive, at most `ring` of them, and move down with it, so none is
   * evicted while still needed */
  std::vector<int> tag;
  std::vector<const uint8_t *> ch;
  std::vector<uint8_t> buf;
  /* horizontally upsampled chroma rows of a 4:2:0 source, by parity */
  int ctag[2] = { -1, -1 };
  std::vector<uint8_t> cbuf;
  std::vector<uint8_t> tmp;
  std::vector<VT> vs;
  std::vector<AT> acc;
  std::vector<uint8_t> q;
  std::vector<uint32_t> words, words2, border;
  /* the horizontal windows' weights; per output column Wx, fl(1 / Wx)
   * and the 1/2 of floor(W / 2) + 1/2 for an odd and an even Wy; per row,
   * divide_row()'s half and r (recip) */
  std::vector<typename A::WT> hw;
  std::vector<FT> wxf, rx, plus_wy_odd, plus_wy_even, half, recip;

  explicit Band(const ScaleJob &job)
      : J(job), P(*job.P), tag(job.ring, -1), ch((size_t)job.ring * 4),
        buf((size_t)job.ring * 4 * job.wid), vs(job.wid), acc(job.hx.n),
        q((size_t)4 * job.hx.n), words(job.P->dw, job.border_word),
        words2(job.P->di.hs ? job.P->dw : 0, job.border_word),
        border(job.P->dw, job.border_word), hw(job.hx.ww.size()), wxf(job.hx.n),
        rx(job.hx.n), plus_wy_odd(job.hx.n), plus_wy_even(job.hx.n, (FT)0.5),
        half(job.hx.n), recip(job.hx.n)
  {
    rows.resize(J.vy.tmax);
    wv.resize(J.vy.tmax);
    slots.resize(J.vy.tmax);
    if (P.si.hs)
      cbuf.resize((size_t)4 * J.wid);
    /* pixels X0 .. X1 read chroma samples (X0 >> 1) - 1 .. (X1 >> 1) + 1 */
    if (P.si.kind == kSemiYuv)
      tmp.resize((size_t)2 * ((J.wid >> 1) + 4));
    for (int c = J.nch; c < 4; c++)
      std::memset(&q[(size_t)c * J.hx.n], J.cfill[c], J.hx.n);
    for (size_t i = 0; i < hw.size(); i++)
      hw[i] = (typename A::WT)J.hx.ww[i];
    for (int u = 0; u < J.hx.n; u++) {
      wxf[u] = (FT)J.hx.wsum[u];
      rx[u] = (FT)1 / wxf[u];
      plus_wy_odd[u] = (J.hx.wsum[u] & 1) ? (FT)0 : (FT)0.5;
    }
  }

  /* chroma_row() of chroma row r (a 4:2:x source) for X0 .. X1, U into
   * u, V into v. */
  void chroma_line(int r, uint8_t *u, uint8_t *v)
  {
    const FmtInfo &f = P.si;
    const int X0 = J.X0, X1 = J.X0 + J.wid - 1;
    switch (f.kind) {
    case kPlanarYuv:
      upsample_h<1>(P.sp[f.off[1]] + (size_t)r * P.ss[f.off[1]], 0, P.sw, X0,
                    X1, u);
      upsample_h<1>(P.sp[f.off[2]] + (size_t)r * P.ss[f.off[2]], 0, P.sw, X0,
                    X1, v);
      break;
    case kSemiYuv: {
      /* the pairs the line reads, split first: contiguous samples make
       * the filter loop simple to vectorise */
      const int cw = (P.sw + 1) >> 1;
      int k0 = (X0 >> 1) - 1, k1 = (X1 >> 1) + 1;
      k0 = k0 < 0 ? 0 : k0;
      k1 = k1 > cw - 1 ? cw - 1 : k1;
      const uint8_t *row = P.sp[1] + (size_t)r * P.ss[1] + (size_t)2 * k0;
      uint8_t *tu = tmp.data(), *tv = tu + tmp.size() / 2;
      deinterleave<2>(row + f.off[1], k1 - k0 + 1, tu);
      deinterleave<2>(row + f.off[2], k1 - k0 + 1, tv);
      upsample_h<1>(tu, k0, P.sw, X0, X1, u);
      upsample_h<1>(tv, k0, P.sw, X0, X1, v);
      break;
    }
    default: { /* kPacked422: U and V of macropixel k at bytes 4k + off */
      const uint8_t *row = P.sp[0] + (size_t)r * P.ss[0];
      upsample_h<4>(row + f.off[1], 0, P.sw, X0, X1, u);
      upsample_h<4>(row + f.off[3], 0, P.sw, X0, X1, v);
      break;
    }
    }
  }

  /* fetch()'s chroma where the plan does not upsample it (videoconvert's
   * fast paths at the same size: I420 to R'G'B', YUY2 to Y444): pixel x
   * reads sample x >> 1 of chroma row r, U into u, V into v. */
  void chroma_replicated(int r, uint8_t *__restrict u, uint8_t *__restrict v)
  {
    const FmtInfo &f = P.si;
    switch (f.kind) {
    case kPlanarYuv:
      replicate_h<1>(P.sp[f.off[1]] + (size_t)r * P.ss[f.off[1]], J.X0, J.wid,
                     u);
      replicate_h<1>(P.sp[f.off[2]] + (size_t)r * P.ss[f.off[2]], J.X0, J.wid,
                     v);
      break;
    case kSemiYuv: {
      const uint8_t *row = P.sp[1] + (size_t)r * P.ss[1];
      replicate_h<2>(row + f.off[1], J.X0, J.wid, u);
      replicate_h<2>(row + f.off[2], J.X0, J.wid, v);
      break;
    }
    default: { /* kPacked422 */
      const uint8_t *row = P.sp[0] + (size_t)r * P.ss[0];
      replicate_h<4>(row + f.off[1], J.X0, J.wid, u);
      replicate_h<4>(row + f.off[3], J.X0, J.wid, v);
      break;
    }
    }
  }

  /* The horizontally upsampled chroma row r (4:2:0), computed once. */
  const uint8_t *chroma_cached(int r)
  {
    uint8_t *slot = &cbuf[(size_t)(r & 1) * 2 * J.wid];
    if (ctag[r & 1] != r) {
      chroma_line(r, slot, slot + J.wid);
      ctag[r & 1] = r;
    }
    return slot;
  }

  /* Decodes row b of the cropped picture into slot s. */
  void decode(int b, int s)
  {
    const FmtInfo &f = P.si;
    const int sy = P.cy + b;
    const int X0 = J.X0, n = J.wid;
    const uint8_t **c = &ch[(size_t)s * 4];
    uint8_t *d = &buf[(size_t)s * 4 * n];
    switch (f.kind) {
    case kPackedRgb: {
      const uint8_t *row
          = P.sp[0] + (size_t)sy * P.ss[0] + (size_t)X0 * f.pstride;
      for (int k = 0; k < J.nch; k++) {
        if (f.pstride == 4)
          deinterleave<4>(row + f.off[k], n, d + (size_t)k * n);
        else
          deinterleave<3>(row + f.off[k], n, d + (size_t)k * n);
        c[k] = d + (size_t)k * n;
      }
      return;
    }
    case kPacked422: {
      /* luma of pixel x at byte 2x + off[0] (off[2] = off[0] + 2 in both
       * YUY2 and UYVY) */
      const uint8_t *row = P.sp[0] + (size_t)sy * P.ss[0];
      deinterleave<2>(row + 2 * (size_t)X0 + f.off[0], n, d);
      c[0] = d;
      if (P.chroma_up)
        chroma_line(sy, d + n, d + 2 * (size_t)n);
      else
        chroma_replicated(sy, d + n, d + 2 * (size_t)n);
      c[1] = d + n;
      c[2] = d + 2 * (size_t)n;
      return;
    }
    default:
      break;
    }
    c[0] = P.sp[0] + (size_t)sy * P.ss[0] + X0;
    if (f.kind == kGray)
      return;
    if (!f.ws) {
      /* 4:4:4: fetch() reads the sample under the pixel */
      c[1] = P.sp[f.off[1]] + (size_t)sy * P.ss[f.off[1]] + X0;
      c[2] = P.sp[f.off[2]] + (size_t)sy * P.ss[f.off[2]] + X0;
      return;
    }
    c[1] = d + n;
    c[2] = d + 2 * (size_t)n;
    if (!P.chroma_up) {
      chroma_replicated(sy >> f.hs, d + n, d + 2 * (size_t)n);
      return;
    }
    if (!f.hs) {
      chroma_line(sy, d + n, d + 2 * (size_t)n);
      return;
    }
    const Taps t = up2_taps(sy, P.sh);
    const uint8_t *ca = chroma_cached(t.a);
    const uint8_t *cb = chroma_cached(t.b);
    blend_rows(ca, cb, t.mode, n, d + n);
    blend_rows(ca + n, cb + n, t.mode, n, d + 2 * (size_t)n);
  }

  const uint8_t *const *row(int b)
  {
    const int s = b % J.ring;
    if (tag[s] != b) {
      decode(b, s);
      tag[s] = b;
    }
    return &ch[(size_t)s * 4];
  }

  /* Destination row y from its words. */
  void store(int y, const uint32_t *w)
  {
    const FmtInfo &f = P.di;
    uint8_t *d = P.dp[0] + (size_t)y * P.ds[0];
    const int n = P.dw;
    if (f.kind == kPackedRgb && f.pstride == 4) {
      std::memcpy(d, w, (size_t)4 * n);
    } else if (f.kind == kPackedRgb) {
      for (int x = 0; x < n; x++) {
        d[3 * x] = (uint8_t)w[x];
        d[3 * x + 1] = (uint8_t)(w[x] >> 8);
        d[3 * x + 2] = (uint8_t)(w[x] >> 16);
      }
    } else {
      for (int x = 0; x < n; x++)
        d[x] = (uint8_t)w[x];
      if (f.kind == kGray)
        return;
      uint8_t *du = P.dp[f.off[1]] + (size_t)y * P.ds[f.off[1]];
      uint8_t *dv = P.dp[f.off[2]] + (size_t)y * P.ds[f.off[2]];
      for (int x = 0; x < n; x++) {
        du[x] = (uint8_t)(w[x] >> 8);
        dv[x] = (uint8_t)(w[x] >> 16);
      }
    }
  }

  /* What row_words() keeps from one row to the next */
  std::vector<const uint8_t *> rows;
  std::vector<VT> wv;
  std::vector<const uint8_t *const *> slots;
  uint64_t wy_row = 0;

  /* The words of destination row y: the border's, or its pixels' (into
   * w, whose columns outside the picture hold the border). */
  const uint32_t *row_words(int y, uint32_t *w)
  {
    if (y < P.ry || y >= P.ry + P.rh)
      return border.data();
    const FilterAxis &hx = J.hx, &vy = J.vy;
    const int nh = hx.n;
    const uint8_t *qs[4];
    for (int c = 0; c < 4; c++)
      qs[c] = &q[(size_t)c * nh];
    const int v = y - P.ry;
    const int taps = vy.cnt[v];
    for (int i = 0; i < taps; i++)
      wv[i] = (VT)vy.w[(size_t)v * vy.tmax + i];
    const uint64_t wy = vy.wsum[v];
    if (wy != wy_row) {
      /* (the rows away from the edges share one Wy, or take a few in
       * turn) floor(W / 2) + 1/2 is W / 2 + 1/2 for an even W = Wx Wy,
       * W / 2 for an odd one; all exact in FT (W <= 2^42), whether or
       * not the compiler fuses the multiply and the add */
      const FT ry = (FT)1 / (FT)wy, hy = (FT)wy * (FT)0.5;
      const FT *plus = (wy & 1) ? plus_wy_odd.data() : plus_wy_even.data();
      for (int u = 0; u < nh; u++) {
        half[u] = wxf[u] * hy + plus[u];
        recip[u] = rx[u] * ry;
      }
      wy_row = wy;
    }
    /* the tap rows, decoded unless the ring has them */
    for (int i = 0; i < taps; i++)
      slots[i] = row(vy.first[v] + i);
    const uint8_t *src[4] = { qs[0], qs[1], qs[2], qs[3] };
    if (J.unit) {
      for (int c = 0; c < J.nch; c++)
        src[c] = slots[0][c];
    } else {
      for (int c = 0; c < J.nch; c++) {
        for (int i = 0; i < taps; i++)
          rows[i] = slots[i][c];
        v_pass<VT>(rows.data(), wv.data(), taps, J.wid, vs.data());
        h_pass<A>(hx, hw.data(), vs.data(), acc.data());
        divide_row<A>(acc.data(), half.data(), recip.data(), nh,
                      &q[(size_t)c * nh]);
      }
    }
    uint32_t *o = w + P.rx;
    switch (P.matrix_mode) {
    case kMatrixFloor:
      if (J.floor32)
        colour_row_floor32(P, src, nh, J.L, o);
      else
        colour_row<kMatrixFloor>(P, src, nh, J.L, o);
      break;
    case kMatrixOrc8:
      colour_row<kMatrixOrc8>(P, src, nh, J.L, o);
      break;
    case kMatrixAyuvArgb:
      colour_row<kMatrixAyuvArgb>(P, src, nh, J.L, o);
      break;
    default:
      colour_row<kMatrixNone>(P, src, nh, J.L, o);
      break;
    }
    return w;
  }

  /* Destination rows [y0, y1), one pixel a block. */
  void run(int y0, int y1)
  {
    for (int y = y0; y < y1; y++)
      store(y, row_words(y, words.data()));
  }

  /* Destination block rows [b0, b1) of a subsampled destination: its
   * rows' luma, and the chroma of each block as convert_block() takes it
   * (the first pixel's where both sides have the same subsampling, else
   * the average of its rows, then of its columns; a row or column past
   * the frame left out). The words hold Y, U, V in bytes 0, 1, 2. */
  void run_blocks(int b0, int b1)
  {
    const FmtInfo &f = P.di;
    const int bw = 1 << f.ws, bh = 1 << f.hs;
    const int nbx = (P.dw + bw - 1) / bw;
    for (int by = b0; by < b1; by++) {
      const int y = by * bh;
      const uint32_t *w0 = row_words(y, words.data());
      const uint32_t *w1 = bh == 2 && y + 1 < P.dh
                               ? row_words(y + 1, words2.data())
                               : nullptr;
      int bx = 0;
      if (f.kind != kPacked422) {
        store_luma(y, w0);
        if (w1)
          store_luma(y + 1, w1);
        if (P.chroma_down && bw == 2)
          bx = store_chroma_pairs(by, w0, w1);
      }
      for (; bx < nbx; bx++) {
        const int x0 = bx * bw;
        const bool two = bw == 2 && x0 + 1 < P.dw;
        uint32_t u, v;
        if (!P.chroma_down) {
          u = (w0[x0] >> 8) & 0xff;
          v = (w0[x0] >> 16) & 0xff;
        } else {
          uint32_t cu[2], cv[2];
          for (int i = 0; i < (two ? 2 : 1); i++) {
            cu[i] = (w0[x0 + i] >> 8) & 0xff;
            cv[i] = (w0[x0 + i] >> 16) & 0xff;
            if (w1) {
              cu[i] = avg2(cu[i], (w1[x0 + i] >> 8) & 0xff);
              cv[i] = avg2(cv[i], (w1[x0 + i] >> 16) & 0xff);
            }
          }
          u = two ? avg2(cu[0], cu[1]) : cu[0];
          v = two ? avg2(cv[0], cv[1]) : cv[0];
        }
        store_chroma(by, bx, u, v, w0[x0] & 0xff,
                     (two ? w0[x0 + 1] : w0[x0]) & 0xff);
      }
    }
  }

  /* The blocks of two columns of block row by, for a planar or semi-planar
   * destination whose chroma is averaged: the loop of run_blocks() without
   * its per-block choices (the same averages in the same order: the rows
   * of each column, then the two columns). Returns how many blocks it
   * stored, from the first. */
  int store_chroma_pairs(int by, const uint32_t *w0, const uint32_t *w1)
  {
    const FmtInfo &f = P.di;
    const int pairs = P.dw / 2;
    if (f.kind == kPlanarYuv) {
      uint8_t *__restrict du = P.dp[f.off[1]] + (size_t)by * P.ds[f.off[1]];
      uint8_t *__restrict dv = P.dp[f.off[2]] + (size_t)by * P.ds[f.off[2]];
      chroma_pairs(w0, w1, pairs, [&](int bx, uint32_t u, uint32_t v) {
        du[bx] = (uint8_t)u;
        dv[bx] = (uint8_t)v;
      });
    } else {
      /* one 16-bit store a block: U and V in the bytes their offsets say */
      uint8_t *__restrict p = P.dp[1] + (size_t)by * P.ds[1];
      const unsigned su = f.off[1] == 0 ? 0 : 8, sv = 8 - su;
      chroma_pairs(w0, w1, pairs, [&](int bx, uint32_t u, uint32_t v) {
        const uint16_t uv = (uint16_t)((u << su) | (v << sv));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(p + 2 * bx, &uv, 2);
#else
        p[2 * bx] = (uint8_t)uv;
        p[2 * bx + 1] = (uint8_t)(uv >> 8);
#endif
      });
    }
    return pairs;
  }

  /* U and V of @pairs blocks, to put(bx, u, v) */
  template <class Put>
  static void chroma_pairs(const uint32_t *__restrict w0,
                           const uint32_t *__restrict w1, int pairs,
                           const Put &put)
  {
    if (w1) {
      for (int bx = 0; bx < pairs; bx++) {
        const uint32_t a0 = w0[2 * bx], a1 = w0[2 * bx + 1];
        const uint32_t b0 = w1[2 * bx], b1 = w1[2 * bx + 1];
        const uint32_t u0 = avg2((a0 >> 8) & 0xff, (b0 >> 8) & 0xff);
        const uint32_t u1 = avg2((a1 >> 8) & 0xff, (b1 >> 8) & 0xff);
        const uint32_t v0 = avg2((a0 >> 16) & 0xff, (b0 >> 16) & 0xff);
        const uint32_t v1 = avg2((a1 >> 16) & 0xff, (b1 >> 16) & 0xff);
        put(bx, avg2(u0, u1), avg2(v0, v1));
      }
    } else {
      for (int bx = 0; bx < pairs; bx++) {
        const uint32_t a0 = w0[2 * bx], a1 = w0[2 * bx + 1];
        put(bx, avg2((a0 >> 8) & 0xff, (a1 >> 8) & 0xff),
            avg2((a0 >> 16) & 0xff, (a1 >> 16) & 0xff));
      }
    }
  }

  /* Luma of destination row y (a planar or semi-planar destination) */
  void store_luma(int y, const uint32_t *w)
  {
    /* (byte stores may alias P: the width in a local, or it is read again
     * every pixel and the loop stays scalar) */
    uint8_t *__restrict d = P.dp[0] + (size_t)y * P.ds[0];
    const uint32_t *__restrict ws = w;
    const int n = P.dw;
    for (int x = 0; x < n; x++)
      d[x] = (uint8_t)ws[x];
  }

  /* Chroma sample (bx, by); for packed 4:2:2 the macropixel, with its two
   * luma values (the second repeating the first at an odd width). */
  void store_chroma(int by, int bx, uint32_t u, uint32_t v, uint32_t y0,
                    uint32_t y1)
  {
    const FmtInfo &f = P.di;
    switch (f.kind) {
    case kPlanarYuv:
      P.dp[f.off[1]][(size_t)by * P.ds[f.off[1]] + bx] = (uint8_t)u;
      P.dp[f.off[2]][(size_t)by * P.ds[f.off[2]] + bx] = (uint8_t)v;
      break;
    case kSemiYuv: {
      uint8_t *p = P.dp[1] + (size_t)by * P.ds[1] + (size_t)2 * bx;
      p[f.off[1]] = (uint8_t)u;
      p[f.off[2]] = (uint8_t)v;
      break;
    }
    default: { /* kPacked422 */
      uint8_t *p = P.dp[0] + (size_t)by * P.ds[0] + (size_t)4 * bx;
      p[f.off[0]] = (uint8_t)y0;
      p[f.off[1]] = (uint8_t)u;
      p[f.off[2]] = (uint8_t)y1;
      p[f.off[3]] = (uint8_t)v;
      break;
    }
    }
  }
};

/* Whether every output of the axis is input lo + u alone, weight 1. */
bool
unit_axis(const FilterAxis &a)
{
  for (int u = 0; u < a.n; u++)
    if (a.cnt[u] != 1 || a.wsum[u] != 1 || a.w[(size_t)u * a.tmax] != 1
        || a.first[u] != a.lo + u)
      return false;
  return true;
}

/* Whether the route takes the plan (and fills J when it does). */
bool
prepare(const Plan &P, ScaleJob *J)
{
  const FmtInfo &s = P.si, &d = P.di;
  /* Unscaled, the per-block code takes the pixel under each output pixel
   * (nearest_index() is then the identity), which is what the linear taps
   * give at one output per input: a single tap of weight 1. So the route
   * also takes conversions at the same size (NV12 to RGBA), whatever the
   * method. */
  const bool unscaled = P.rw == P.ow && P.rh == P.oh;
  if (!(P.linear || unscaled) || P.cubic || P.orient != 0
      || (P.fx.active && !effects_after_takes(P)) || P.cscale
      || P.pl.mode != kPlanarOff || P.depth != 8 || s.bits != 8 || d.bits != 8)
    return false;
  /* any 8-bit source; chroma upsampled as fetch() does when scaling, or
   * replicated where the plan says so (videoconvert's fast paths) */
  /* any 8-bit destination: its chroma made as convert_block() makes it
   * (not where videoconvert's planar chroma scaler would) */
  if (d.kind != kPackedRgb && d.kind != kGray && d.kind != kPlanarYuv
      && d.kind != kSemiYuv && d.kind != kPacked422)
    return false;

  J->P = &P;
  build_axis(P.rw, P.ow, &J->hx);
  build_axis(P.rh, P.oh, &J->vy);
  J->tier = pick_tier(J->hx, J->vy);
  if (J->tier == kNoTier)
    return false;

  J->nch = s.kind == kPackedRgb ? (s.off[3] >= 0 ? 4 : 3)
                                : (s.kind == kGray ? 1 : 3);
  J->cfill[0] = 0;
  J->cfill[1] = J->cfill[2] = 128;
  J->cfill[3] = 255;
  J->X0 = P.cx + J->hx.lo;
  J->wid = J->hx.hi - J->hx.lo + 1;
  J->unit = unit_axis(J->hx) && unit_axis(J->vy) && J->hx.n == J->wid;
  J->floor32 = P.matrix_mode == kMatrixFloor && floor_matrix_fits_32(P);
  int ring = 0;
  for (int v = 0; v < J->vy.n; v++)
    ring = J->vy.cnt[v] > ring ? J->vy.cnt[v] : ring;
  J->ring = ring;

  WordLayout &L = J->L;
  for (int c = 0; c < 4; c++) {
    L.sh[c] = 0;
    L.keep[c] = 0;
  }
  if (d.kind == kPackedRgb) {
    for (int c = 0; c < 4; c++) {
      if (d.off[c] >= 0) {
        L.sh[c] = 8u * (unsigned)d.off[c];
        L.keep[c] = 0xff;
      }
    }
  } else {
    const int n = d.kind == kGray ? 1 : 3;
    for (int c = 0; c < n; c++) {
      L.sh[c] = 8u * c;
      L.keep[c] = 0xff;
    }
  }
  const uint32_t b[4] = { P.border[0], P.border[1], P.border[2], P.border[3] };
  J->border_word = pack_word(L, b);
  return true;
}

/* The conversion on the threads; false if a thread could not get its
 * scratch memory (its band then holds whatever it had written). */
template <class A>
bool
run_job(const ScaleJob &J, const EffectsAfter *fx, unsigned n_threads)
{
  const Plan &P = *J.P;
  /* (a subsampled destination is cut into rows of blocks) */
  const bool sub = P.di.ws || P.di.hs;
  const int bh = 1 << P.di.hs;
  const int rows = sub ? (P.dh + bh - 1) / bh : P.dh;
  const int64_t work
      = ((int64_t)P.dw + (int64_t)J.wid * P.oh / P.dh) * (sub ? bh : 1);
  const unsigned n = parallel_threads(rows, n_threads, work, kMinPixelsPerThread);
  std::atomic<bool> ok{ true };
  parallel_rows(rows, n, [&J, &ok, sub, fx](int r0, int r1) {
    /* (an exception must not leave a worker thread) */
    try {
      Band<A> band(J);
      /* (a row of a destination that is not subsampled is a block row) */
      const int step = fx ? kEffectsRows : r1 - r0;
      for (int r = r0; r < r1; r += step) {
        const int e = r1 - r < step ? r1 : r + step;
        if (sub)
          band.run_blocks(r, e);
        else
          band.run(r, e);
        if (fx)
          effects_after_rows(*fx, r, e);
      }
    } catch (...) {
      ok = false;
    }
  });
  return ok;
}

} // namespace

bool
fast_scale(const Plan &P, unsigned n_threads, bool run)
{
  /* Memory for the tap tables and the rows is all that can fail here.
   * Then the route declines and convert_cpu() runs the per-block code,
   * which needs none, over the whole frame: it writes every byte that
   * this route writes, so a band already done makes no difference. */
  try {
    ScaleJob J;
    if (!prepare(P, &J))
      return false;
    if (!run)
      return true;
    /* the effects' tables, before any byte is written */
    const EffectsAfter *fx = nullptr;
    if (P.fx.active && !(fx = effects_after_prepare(P)))
      return false;
    switch (J.tier) {
    case kNarrow16:
      return run_job<Arith16>(J, fx, n_threads);
    case kNarrow:
      return run_job<ArithNarrow>(J, fx, n_threads);
    case kMid:
      return run_job<ArithMid>(J, fx, n_threads);
    default:
      return run_job<ArithWide>(J, fx, n_threads);
    }
  } catch (...) {
    return false;
  }
}

} // namespace detail
} // namespace zc

/* gst-zerocopy: same-format geometry plane by plane, as videoflip and
 * videoscale do it.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Private to kernels/: zcconvert-common.h includes it before its Plan,
 * which carries a PlanarPlan; the CPU and CUDA conversions share it.
 * Integer only on the device side; the host part (planar_setup()) reads
 * GStreamer's tap counts the way GStreamer computes them, in doubles.
 *
 * With the same format on both sides and nothing but geometry to do
 * (orientation, crop, scaling: videoflip's and videoscale's situation),
 * GStreamer never takes chroma to 4:4:4 and back: it treats each plane as
 * a picture of its own (videoscale: video-converter.c's
 * convert_scale_planes() fast path, one GstVideoScaler per plane and
 * axis). Upsampling and re-averaging chroma would differ from it by up to
 * the full range on busy content, so build_plan() selects this instead:
 *  - orientation (gstvideoflip.c): a 4:2:0 chroma plane (planar or
 *    semi-planar) gets the luma formula at its own size, (w + 1) / 2 by
 *    (h + 1) / 2; that is the chroma sample of the source pixel under the
 *    block's first output pixel, odd sizes included. 4:2:2 flipped
 *    (horizontal, vertical, 180): the same. 4:2:2 turned by a quarter (the
 *    four methods that swap the axes, gst_video_flip_y422()): an output
 *    pair's chroma is the floor average (a + b) >> 1 of the chroma of the
 *    source pixels under its two output pixels (one alone at an odd output
 *    width) (kPlanarMove);
 *  - nearest scaling: each oriented chroma plane scaled on its own with
 *    the nearest resampler, floor((2i + 1) in / (2 out)) at chroma
 *    resolution, as luma (kPlanarNearest; also inside videoscale's merged
 *    packed 4:2:2 scaler);
 *  - bilinear and bicubic scaling, without crop or orientation
 *    (PlanarPlan::scale): every plane through GstVideoScaler's own
 *    arithmetic, for the formats videoscale scales plane by plane (the
 *    8-bit ones, GRAY16_LE): videoscale's method=bilinear is the linear
 *    resampler limited to 2 taps at every ratio (no averaging when
 *    shrinking); method=mitchell the cubic one (B = C = 1/3) on luma, RGB
 *    and packed 4:2:2, but the linear one without a tap limit on the
 *    chroma planes of planar and semi-planar formats (the converter's
 *    chroma-resampler default). Per axis: the resampler's taps rounded to
 *    the kernel's precision (6 bits for 8-bit n-tap kernels, 8 for the
 *    8-bit vertical 2-tap one, 12 at 16 bits) with GStreamer's rounding
 *    bias search (the largest remainders get the missing units); the 8-bit
 *    horizontal 2-tap kernels of single-component planes and 4-byte pixels
 *    step corner to corner in 16.16 instead; each pass rounded to the
 *    sample depth as the ORC kernels round it, horizontal or vertical pass
 *    first as gst_video_scaler_2d() picks; exact halvings of planes with
 *    one byte per sample averaged ((a + b + 1) >> 1, rows first). The taps
 *    are derived in integers (the cubic kernel in units of 2^-14), not in
 *    GStreamer's doubles: where a weight falls on a rounding boundary the
 *    two can part by one unit of a tap.
 */
#ifndef GST_ZC_KERNELS_PLANAR_COMMON_H
#define GST_ZC_KERNELS_PLANAR_COMMON_H

#include <cstddef>
#include <cstdint>
#if !defined(__CUDACC__)
#include <cmath>
#endif

namespace zc {
namespace detail {

enum PlanarMode : uint8_t {
  kPlanarOff,     /* the 4:4:4 pipeline of zcconvert-common.h */
  kPlanarMove,    /* chroma oriented / cropped per plane, not scaled */
  kPlanarNearest, /* chroma oriented, cropped, nearest-scaled per plane */
  kPlanarScale,   /* every plane through GstVideoScaler's arithmetic */
};

/* How one axis of one plane produces an output sample. */
enum PlanarKernel : uint8_t {
  kPkCopy,    /* same size */
  kPkNearest, /* one tap */
  kPkHalve,   /* (a + b + 1) >> 1 of samples 2j, 2j + 1 */
  kPkLerpInc, /* 8-bit horizontal 2-tap: 16.16 position, 8-bit fraction,
                 (a (256 - f) + b f) >> 8 */
  kPkStep8,   /* 8-bit vertical 2-tap: a + (((b - a) w1 + 128) >> 8) */
  kPkSum6,    /* 8-bit n-tap: clamp((sum + 32) >> 6) */
  kPkH16,     /* 16-bit horizontal: (sum + 4096) >> 12 with 2 taps, else
                 (sum + 4095) >> 12; clamped */
  kPkStep16,  /* 16-bit vertical 2-tap: a + (((b - a) w1 + 4096) >> 12) */
  kPkSum16,   /* 16-bit vertical n-tap: (sum + 4095) >> 12, clamped */
};

/* More taps than this (shrinking by more than 8 with the cubic filter, 16
 * with the unlimited linear one) leave the planar scaler to the generic
 * path. */
constexpr int kMaxPlanarTaps = 32;

struct PlanarAxis
{
  uint8_t kernel; /* PlanarKernel */
  uint8_t cubic;  /* filter: 0 linear, 1 cubic (B = C = 1/3) */
  uint8_t taps;   /* taps after the clamp to `in` */
  uint8_t full;   /* taps before it: the filter is full / 2 samples wide
                     on each side (linear: full / 2 overall) */
  int32_t in, out;
  int32_t inc;    /* kPkLerpInc: 16.16 step, corner to corner */
};

struct PlanarPlan
{
  uint8_t mode;       /* PlanarMode */
  uint8_t h_first[2]; /* kPlanarScale: per plane, horizontal pass first */
  FmtInfo si;
  const uint8_t *sp[3];
  size_t ss[3];
  /* The cropped source (cx, cy, cw, ch), its orientation, its size once
   * oriented (ow, oh); chroma plane sizes of the oriented source (pc_w,
   * pc_h) and of the destination (pc_dw, pc_dh). */
  int cx, cy, cw, ch, orient, ow, oh;
  int pc_w, pc_h, pc_dw, pc_dh;
  /* kPlanarScale: [0] luma, gray, RGB or packed 4:2:2 luma; [1] chroma */
  PlanarAxis ax[2], ay[2];
};

/* videoflip's mapping: pixel (a, b) of a W x H rectangle at (cx, cy) of
 * the source, oriented by `orient` -> pixel (*sx, *sy) of the source. */
ZC_HD inline void
orient_map(int orient, int cx, int cy, int W, int H, int a, int b, int *sx,
           int *sy)
{
  int x, y;
  switch (orient) {
  case (int)Orientation::Rotate90R: x = b; y = H - 1 - a; break;
  case (int)Orientation::Rotate180: x = W - 1 - a; y = H - 1 - b; break;
  case (int)Orientation::Rotate90L: x = W - 1 - b; y = a; break;
  case (int)Orientation::FlipH: x = W - 1 - a; y = b; break;
  case (int)Orientation::FlipV: x = a; y = H - 1 - b; break;
  case (int)Orientation::UL_LR: x = b; y = a; break;
  case (int)Orientation::UR_LL: x = W - 1 - b; y = H - 1 - a; break;
  default: x = a; y = b; break;
  }
  *sx = cx + x;
  *sy = cy + y;
}

/* The filter taps of one output sample start at input xi (T of them, over
 * an input of n samples); the weights raw[0..T) of those that fall outside
 * the input are added to the edge sample's, as GStreamer's resampler
 * folds them. Returns the first input sample of the folded taps. */
ZC_HD inline int
fold_edge_taps(int64_t *raw, int T, int xi, int n)
{
  int o = xi;
  if (xi < 0) {
    const int sh = -xi;
    for (int l = 0; l < sh; l++)
      raw[sh] += raw[l];
    for (int l = 0; l < T - sh; l++)
      raw[l] = raw[sh + l];
    for (int l = T - sh; l < T; l++)
      raw[l] = 0;
    o = 0;
  }
  if (xi > n - T) {
    const int sh = xi - (n - T);
    for (int l = 0; l < sh; l++)
      raw[T - sh - 1] += raw[T - sh + l];
    for (int l = 0; l < T - sh; l++)
      raw[T - 1 - l] = raw[T - 1 - sh - l];
    for (int l = 0; l < sh; l++)
      raw[l] = 0;
    o = n - T;
  }
  return o;
}

ZC_HD inline bool
orient_swaps_axes(int orient)
{
  return orient == (int)Orientation::Rotate90R
         || orient == (int)Orientation::Rotate90L
         || orient == (int)Orientation::UL_LR
         || orient == (int)Orientation::UR_LL;
}

/* Pixel (a, b) of the oriented, cropped source -> pixel of the source
 * (videoflip's mapping; the same as the 4:4:4 path's). */
ZC_HD inline void
planar_to_source(const PlanarPlan &Q, int a, int b, int *sx, int *sy)
{
  orient_map(Q.orient, Q.cx, Q.cy, Q.cw, Q.ch, a, b, sx, sy);
}

/* A sample at the unpack depth (8 or 16 bits; 10-bit samples widened as
 * the 4:4:4 path widens them, so that its store gives them back as they
 * were: the planar scaler never sees 10-bit formats, orientation and
 * nearest scaling only move them). */
ZC_HD inline uint32_t
planar_rd(const FmtInfo &f, const uint8_t *p)
{
  if (f.bits == 8)
    return *p;
  uint32_t v = uint32_t(p[0]) | (uint32_t(p[1]) << 8);
  if (f.wide10 == k10Lsb) {
    v &= 0x3ffu;
    return (v << 6) | (v >> 4);
  }
  if (f.wide10 == k10Msb)
    return v | (v >> 10);
  return v;
}

/* Component `comp` (0: Y / gray / R, 1: U / G, 2: V / B, 3: A) of sample
 * (k, r) of the source plane that holds it (chroma in chroma samples). */
ZC_HD inline uint32_t
planar_read(const PlanarPlan &Q, int comp, int k, int r)
{
  const FmtInfo &f = Q.si;
  switch (f.kind) {
  case kPackedRgb: {
    if (f.off[comp] < 0)
      return 0xffu;
    return Q.sp[0][(size_t)r * Q.ss[0] + (size_t)k * f.pstride + f.off[comp]];
  }
  case kPacked422: {
    const uint8_t *row = Q.sp[0] + (size_t)r * Q.ss[0];
    if (comp == 0)
      return row[(size_t)(k >> 1) * 4 + f.off[(k & 1) * 2]];
    return row[(size_t)k * 4 + f.off[comp == 1 ? 1 : 3]];
  }
  case kSemiYuv: {
    if (comp == 0)
      return planar_rd(f, Q.sp[0] + (size_t)r * Q.ss[0] + (size_t)k * f.pstride);
    return planar_rd(f, Q.sp[1] + (size_t)r * Q.ss[1]
                            + ((size_t)k * 2 + f.off[comp]) * f.pstride);
  }
  case kPlanarYuv: {
    const int pl = comp == 0 ? 0 : f.off[comp];
    return planar_rd(f, Q.sp[pl] + (size_t)r * Q.ss[pl] + (size_t)k * f.pstride);
  }
  default: /* kGray */
    return planar_rd(f, Q.sp[0] + (size_t)r * Q.ss[0] + (size_t)k * f.pstride);
  }
}

/* ---- orientation and nearest scaling of chroma ------------------------ */

/* Sample (a, b) of the oriented, cropped source's chroma plane. The crop's
 * left and top are multiples of the subsampling (planar_setup() checks). */
ZC_HD inline void
planar_chroma_at(const PlanarPlan &Q, int a, int b, uint32_t *u, uint32_t *v)
{
  const int ws = Q.si.ws, hs = Q.si.hs;
  int sx, sy;
  if (ws != hs && orient_swaps_axes(Q.orient)) {
    /* 4:2:2 turned: the pair's two pixels come from two source rows */
    planar_to_source(Q, 2 * a, b, &sx, &sy);
    *u = planar_read(Q, 1, sx >> ws, sy >> hs);
    *v = planar_read(Q, 2, sx >> ws, sy >> hs);
    if (2 * a + 1 < Q.ow) {
      planar_to_source(Q, 2 * a + 1, b, &sx, &sy);
      *u = (*u + planar_read(Q, 1, sx >> ws, sy >> hs)) >> 1;
      *v = (*v + planar_read(Q, 2, sx >> ws, sy >> hs)) >> 1;
    }
    return;
  }
  planar_to_source(Q, a << ws, b << hs, &sx, &sy);
  *u = planar_read(Q, 1, sx >> ws, sy >> hs);
  *v = planar_read(Q, 2, sx >> ws, sy >> hs);
}

ZC_HD inline int
planar_nearest(int j, int out, int in)
{
  return (int)(((int64_t)(2 * j + 1) * in) / (2 * (int64_t)out));
}

/* ---- GstVideoScaler, one output sample -------------------------------- */

struct PlanarTaps
{
  int off, n;
  int32_t w[kMaxPlanarTaps]; /* kPkLerpInc: w[1] = fraction */
};

ZC_HD inline int64_t
planar_floor_div(int64_t a, int64_t b)
{
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* 18 times the Mitchell-Netravali kernel (B = C = 1/3) at a = a14 / 2^14. */
ZC_HD inline int64_t
planar_cubic(int64_t a14)
{
  if (a14 >= (int64_t)2 << 14)
    return 0;
  const int64_t a2 = (a14 * a14) >> 14, a3 = (a2 * a14) >> 14;
  if (a14 <= (int64_t)1 << 14)
    return 21 * a3 - 36 * a2 + ((int64_t)16 << 14);
  return -7 * a3 + 36 * a2 - 60 * a14 + ((int64_t)32 << 14);
}

/* The sign of GStreamer's rounding error in the centre of output j, x =
 * ((0.5 + j) / out) * in - 0.5 in doubles, against the exact (2j + 1) in
 * / (2 out) - 1/2: the two roundings of IEEE binary64 (to nearest, ties
 * to even) done in integers. Only asked where it decides between taps of
 * equal weight (rare), so its 128-bit arithmetic costs nothing overall. */
ZC_HD inline int
planar_x_error_sign(int in, int out, int j)
{
  typedef unsigned __int128 u128;
  const uint64_t A = 2 * (uint64_t)j + 1, B = 2 * (uint64_t)out;
  /* q = fl(A / B) = Mq 2^-s, 2^52 <= Mq <= 2^53 */
  int s = 52;
  while (((u128)A << s) < ((u128)B << 52))
    s++;
  while (s > 0 && ((u128)A << s) >= ((u128)B << 53))
    s--;
  const u128 num = (u128)A << s;
  u128 mq = num / B;
  const u128 rq = num % B;
  if (2 * rq > B || (2 * rq == B && (mq & 1)))
    mq++;
  /* p = fl(q in) = P 2^(r - s) */
  const u128 pm = mq * (u128)(uint64_t)in;
  int len = 0;
  for (u128 t = pm; t; t >>= 1)
    len++;
  const int r = len > 53 ? len - 53 : 0;
  u128 pp = pm >> r;
  if (r) {
    const u128 rem = pm & (((u128)1 << r) - 1), half = (u128)1 << (r - 1);
    if (rem > half || (rem == half && (pp & 1)))
      pp++;
  }
  /* compare P 2^r B with A in 2^s */
  const u128 lhs = (pp * B) << r;
  const u128 rhs = ((u128)A * (u128)(uint64_t)in) << s;
  return lhs > rhs ? 1 : (lhs < rhs ? -1 : 0);
}

/* GstVideoResampler's taps of output j (video-resampler.c
 * resampler_calculate_taps()), in integers: centre x = (j + 1/2) in / out
 * - 1/2 (no - 1/2 with one tap) clamped to [0, in - 1], taps from
 * floor(x) - (taps - 1) / 2 on, weights normalised, taps outside the input
 * folded onto the edge; then rounded to `prec` bits as
 * resampler_convert_coeff() does (floor(bias + w 2^prec) with the bias
 * that makes them sum to 2^prec: the largest remainders round up). */
ZC_HD inline void
planar_resampler_taps(const PlanarAxis &a, int j, int prec, PlanarTaps *t)
{
  const int T = a.taps;
  const int64_t D = 2 * (int64_t)a.out;
  int64_t xn = (2 * (int64_t)j + 1) * a.in - (T > 1 ? a.out : 0);
  const int64_t xmax = (int64_t)(a.in - 1) * D;
  xn = xn < 0 ? 0 : (xn > xmax ? xmax : xn);
  const int xi = (int)(xn / D) - (T - 1) / 2;
  const int64_t S = D * a.full;
  int64_t raw[kMaxPlanarTaps];
  int64_t sum = 0;
  for (int l = 0; l < T; l++) {
    int64_t d = xn - (int64_t)(xi + l) * D;
    d = d < 0 ? -d : d;
    if (a.cubic)
      raw[l] = planar_cubic(((4 * d) << 14) / S);
    else
      raw[l] = S - 2 * d > 0 ? S - 2 * d : 0;
    sum += raw[l];
  }
  const int o = fold_edge_taps(raw, T, xi, a.in);
  t->off = o;
  t->n = T;
  if (sum == 0)
    sum = 1;
  const int64_t M = (int64_t)1 << prec;
  int64_t rem[kMaxPlanarTaps];
  int64_t total = 0;
  for (int l = 0; l < T; l++) {
    const int64_t q = planar_floor_div(raw[l] * M, sum);
    t->w[l] = (int32_t)q;
    rem[l] = raw[l] * M - q * sum;
    total += q;
  }
  /* The bias search of resampler_convert_coeff(): with the bias at b,
   * tap l rounds up when its remainder is at least (1 - b) sum, so the
   * largest remainders take the missing units. Between equal remainders
   * GStreamer's doubles decide:
   *  - its centre x can be off the exact one by an ulp: then the tap whose
   *    weight that error raises is the larger (the kernel falls with the
   *    distance, the cubic one rises again past 10/7 of its unit);
   *  - else floor(b + v) reaches the next integer k + 1 at a smaller bias
   *    where k + 1 has a coarser ulp: the tap with the larger
   *    floor(log2(k)) rounds up first;
   *  - taps equal in all of that (1/18, 16/18, 1/18 of the cubic kernel on
   *    a source pixel) round together: where they straddle the count no
   *    bias gives 2^prec, and GStreamer's search ends with all of them
   *    rounded up (4, 57, 4: a gain of 65/64), as here. */
  int bin[kMaxPlanarTaps], gain[kMaxPlanarTaps];
  bool tie = false;
  for (int l = 0; l < T; l++) {
    int b = -1;
    for (int64_t q = t->w[l] < 0 ? -(int64_t)t->w[l] : t->w[l]; q > 0; q >>= 1)
      b++;
    bin[l] = b;
    gain[l] = 0;
    for (int m = 0; m < l; m++)
      tie = tie || (rem[l] > 0 && rem[m] == rem[l]);
  }
  if (tie && T > 1) {
    const int e = planar_x_error_sign(a.in, a.out, j);
    if (e && xn > 0 && xn < xmax) {
      for (int l = 0; l < T; l++) {
        const int64_t sd = (int64_t)(o + l) * D - xn; /* > 0: right of x */
        const int64_t ad = sd < 0 ? -sd : sd;
        const bool falls = !a.cubic || 28 * ad < 10 * S;
        const int dir = (sd > 0 ? 1 : (sd < 0 ? -1 : 0)) * (falls ? 1 : -1);
        gain[l] = dir * e;
      }
    }
  }
  bool up[kMaxPlanarTaps];
  for (int l = 0; l < T; l++)
    up[l] = false;
  int last = -1;
  for (int64_t k = total; k < M; k++) {
    int best = -1;
    for (int l = 0; l < T; l++) {
      if (up[l])
        continue;
      if (best < 0 || rem[l] > rem[best]
          || (rem[l] == rem[best]
              && (gain[l] > gain[best]
                  || (gain[l] == gain[best] && bin[l] > bin[best]))))
        best = l;
    }
    if (best < 0)
      break;
    up[best] = true;
    last = best;
  }
  if (last >= 0 && rem[last] > 0)
    for (int l = 0; l < T; l++)
      if (rem[l] == rem[last] && gain[l] == gain[last] && bin[l] == bin[last])
        up[l] = true;
  for (int l = 0; l < T; l++)
    t->w[l] += up[l] ? 1 : 0;
}

ZC_HD inline void
planar_axis_taps(const PlanarAxis &a, int j, PlanarTaps *t)
{
  switch (a.kernel) {
  case kPkCopy:
    t->off = j;
    t->n = 1;
    return;
  case kPkNearest:
    /* one tap: the resampler's offset, floor((j + 1/2) in / out) */
    t->off = planar_nearest(j, a.out, a.in);
    t->n = 1;
    return;
  case kPkHalve:
    t->off = 2 * j;
    t->n = 2;
    return;
  case kPkLerpInc: {
    /* video_orc_resample_h_2tap_1u8_lq / _4u8_lq (ldreslinb/l) */
    const int64_t pos = (int64_t)j * a.inc;
    t->off = (int)(pos >> 16);
    t->n = 2;
    t->w[1] = (int32_t)((pos >> 8) & 0xff);
    return;
  }
  case kPkStep8:
    planar_resampler_taps(a, j, 8, t);
    return;
  case kPkSum6:
    planar_resampler_taps(a, j, 6, t);
    return;
  default: /* 16-bit kernels */
    planar_resampler_taps(a, j, 12, t);
    return;
  }
}

ZC_HD inline uint32_t
planar_eval(int kernel, const PlanarTaps &t, const uint32_t *s)
{
  switch (kernel) {
  case kPkHalve:
    return (s[0] + s[1] + 1) >> 1;
  case kPkLerpInc:
    return (s[0] * (256u - (uint32_t)t.w[1]) + s[1] * (uint32_t)t.w[1]) >> 8;
  case kPkStep8:
    /* the rounded step stays between a and b: ORC's 16-bit and 8-bit
     * wrap-arounds never show */
    return (uint32_t)((int32_t)s[0]
                      + ((((int32_t)s[1] - (int32_t)s[0]) * t.w[1] + 128)
                         >> 8));
  case kPkSum6: {
    int32_t acc = 0;
    for (int l = 0; l < t.n; l++)
      acc += t.w[l] * (int32_t)s[l];
    acc = (int32_t)(int16_t)acc; /* 16-bit lanes (no overflow in range) */
    acc = (acc + 32) >> 6;
    return (uint32_t)(acc < 0 ? 0 : (acc > 255 ? 255 : acc));
  }
  case kPkH16:
  case kPkSum16: {
    int64_t acc = 0;
    for (int l = 0; l < t.n; l++)
      acc += (int64_t)t.w[l] * (int64_t)s[l];
    /* video_orc_resample_h_2tap_u16 adds 4096, scaletaps_u16 4095 */
    acc = (acc + (kernel == kPkH16 && t.n == 2 ? 4096 : 4095)) >> 12;
    return (uint32_t)(acc < 0 ? 0 : (acc > 65535 ? 65535 : acc));
  }
  case kPkStep16: {
    int64_t acc = (int64_t)s[0]
                  + ((((int64_t)s[1] - (int64_t)s[0]) * t.w[1] + 4096) >> 12);
    return (uint32_t)(acc < 0 ? 0 : (acc > 65535 ? 65535 : acc));
  }
  default: /* copy, nearest */
    return s[0];
  }
}

/* Output sample (i, j) of component `comp` of plane `plane` (0: luma /
 * gray / RGB, 1: chroma), both passes. */
ZC_HD inline uint32_t
planar_scaled(const PlanarPlan &Q, int plane, int comp, int i, int j)
{
  const PlanarAxis &ah = Q.ax[plane], &av = Q.ay[plane];
  PlanarTaps th, tv;
  planar_axis_taps(ah, i, &th);
  planar_axis_taps(av, j, &tv);
  uint32_t s[kMaxPlanarTaps], mid[kMaxPlanarTaps];
  if (Q.h_first[plane]) {
    for (int l = 0; l < tv.n; l++) {
      for (int m = 0; m < th.n; m++)
        s[m] = planar_read(Q, comp, th.off + m, tv.off + l);
      mid[l] = planar_eval(ah.kernel, th, s);
    }
    return planar_eval(av.kernel, tv, mid);
  }
  for (int m = 0; m < th.n; m++) {
    for (int l = 0; l < tv.n; l++)
      s[l] = planar_read(Q, comp, th.off + m, tv.off + l);
    mid[m] = planar_eval(av.kernel, tv, s);
  }
  return planar_eval(ah.kernel, th, mid);
}

/* Destination pixel (x, y), PlanarPlan::scale: luma / gray / R'G'B'A in
 * c[0..3] at the stored depth (chroma comes from planar_chroma()). */
ZC_HD inline void
planar_pixel(const PlanarPlan &Q, int x, int y, uint32_t c[4])
{
  if (Q.si.kind == kPackedRgb) {
    for (int k = 0; k < 4; k++)
      c[k] = planar_scaled(Q, 0, k, x, y);
    return;
  }
  c[0] = planar_scaled(Q, 0, 0, x, y);
  c[1] = c[2] = 1u << (Q.si.bits - 1);
  c[3] = Q.si.bits == 8 ? 0xffu : 0xffffu;
}

/* Chroma of output block (bx, by) (= destination chroma sample). */
ZC_HD inline void
planar_chroma(const PlanarPlan &Q, int bx, int by, uint32_t *u, uint32_t *v)
{
  if (Q.mode == kPlanarScale) {
    *u = planar_scaled(Q, 1, 1, bx, by);
    *v = planar_scaled(Q, 1, 2, bx, by);
    return;
  }
  int a = bx, b = by;
  if (Q.mode == kPlanarNearest) {
    a = planar_nearest(bx, Q.pc_dw, Q.pc_w);
    b = planar_nearest(by, Q.pc_dh, Q.pc_h);
  }
  planar_chroma_at(Q, a, b, u, v);
}

#if !defined(__CUDACC__)
/* ---- host: choosing the path and GStreamer's tap counts --------------- */

/* One scaled axis as gst_video_resampler_init() sizes it (the doubles are
 * GStreamer's: its tap count is a ceil() of a double quotient). forced:
 * the caller's tap count (0: from the ratio). Returns false when it needs
 * more taps than kMaxPlanarTaps. */
inline bool
planar_axis_setup(PlanarAxis *a, int in, int out, bool cubic, int max_taps,
                  int forced, uint8_t kernel2, uint8_t kerneln)
{
  *a = PlanarAxis{};
  a->in = in;
  a->out = out;
  a->cubic = cubic;
  if (in == out) {
    a->kernel = kPkCopy;
    return true;
  }
  const double scale_factor = in / (double)out;
  const double fx = scale_factor > 1.0 ? (1.0 / scale_factor) * 1.0 : 1.0;
  const double envelope = cubic ? 2.0 : 1.0;
  int n = forced < max_taps ? forced : max_taps;
  if (n == 0) {
    const double dx = std::ceil(2.0 * envelope / fx);
    n = dx < 0 ? 0 : (dx > max_taps ? max_taps : (int)dx);
  }
  if (n < 1 || n > 255)
    return false;
  a->full = (uint8_t)n;
  const int T = n > in ? in : n;
  if (T > kMaxPlanarTaps)
    return false;
  a->taps = (uint8_t)T;
  a->kernel = T == 1 ? (uint8_t)kPkNearest : (T == 2 ? kernel2 : kerneln);
  a->inc = out == 1 ? 0 : (int32_t)((((int64_t)in - 1) << 16) / (out - 1) - 1);
  return true;
}

/* One plane of a multi-plane frame (or GRAY) through setup_scale():
 * copy, halve (one byte per sample, linear method) or the scalers. */
inline bool
planar_plane_setup(PlanarAxis *ax, PlanarAxis *ay, uint8_t *h_first, int iw,
                   int ih, int ow, int oh, bool cubic, int max_taps,
                   bool can_halve, uint8_t hkernel2, uint8_t hkerneln,
                   uint8_t vkernel2, uint8_t vkerneln)
{
  const bool halve = can_halve && !cubic;
  bool hv_halve = false;
  if (halve) {
    if (iw == ow)
      hv_halve = ih == 2 * oh;
    else if (ih == oh)
      hv_halve = iw == 2 * ow;
    else
      hv_halve = iw == 2 * ow && ih == 2 * oh;
  }
  if (hv_halve) {
    *ax = PlanarAxis{};
    *ay = PlanarAxis{};
    ax->in = iw;
    ax->out = ow;
    ay->in = ih;
    ay->out = oh;
    ax->kernel = iw == ow ? kPkCopy : kPkHalve;
    ay->kernel = ih == oh ? kPkCopy : kPkHalve;
    *h_first = 0; /* video_orc_planar_chroma_444_420: rows first */
    return true;
  }
  if (!planar_axis_setup(ax, iw, ow, cubic, max_taps, 0, hkernel2, hkerneln)
      || !planar_axis_setup(ay, ih, oh, cubic, max_taps, 0, vkernel2,
                            vkerneln))
    return false;
  /* gst_video_scaler_2d(): horizontal first unless the last output row
   * starts further down than there are output rows */
  *h_first = 1;
  if (ax->kernel != kPkCopy && ay->kernel != kPkCopy) {
    PlanarTaps t;
    planar_axis_taps(*ay, oh - 1, &t);
    *h_first = t.off <= oh;
  }
  return true;
}

/* Fills P->pl (P: the Plan of zcconvert-common.h, its geometry and colour
 * already set) where the same format, an untouched colour and no
 * placement let the planes move or scale on their own. */
template <class PlanT>
inline void
planar_setup(const FrameDesc &src, const FrameDesc &dst,
             const ConvertParams &p, bool effects, int matrix_none, PlanT *P)
{
  PlanarPlan &Q = P->pl;
  Q = PlanarPlan{};
  if (src.fmt != dst.fmt || effects || !matrix_none || P->rx || P->ry
      || P->rw != dst.width || P->rh != dst.height)
    return;
  const FmtInfo &f = P->si;
  const int ws = f.ws, hs = f.hs;
  if ((P->cx & ((1 << ws) - 1)) || (P->cy & ((1 << hs) - 1)))
    return;
  Q.si = f;
  for (int i = 0; i < 3; i++) {
    Q.sp[i] = P->sp[i];
    Q.ss[i] = P->ss[i];
  }
  Q.cx = P->cx;
  Q.cy = P->cy;
  Q.cw = P->cw;
  Q.ch = P->ch;
  Q.orient = P->orient;
  Q.ow = P->ow;
  Q.oh = P->oh;
  Q.pc_w = (P->ow + (1 << ws) - 1) >> ws;
  Q.pc_h = (P->oh + (1 << hs) - 1) >> hs;
  Q.pc_dw = (P->rw + (1 << ws) - 1) >> ws;
  Q.pc_dh = (P->rh + (1 << hs) - 1) >> hs;
  const bool scaling = P->rw != P->ow || P->rh != P->oh;
  const bool sub = ws || hs;
  if (!scaling || p.sampling == Sampling::Nearest) {
    Q.mode = !sub ? kPlanarOff : (scaling ? kPlanarNearest : kPlanarMove);
    return;
  }
  /* bilinear / bicubic: videoscale's situation only (its planes are not
   * cropped or turned), formats it scales plane by plane */
  if (P->orient || P->cx || P->cy || P->cw != src.width
      || P->ch != src.height || f.wide10)
    return;
  const bool cubic = p.sampling == Sampling::Bicubic;
  const int max_taps = cubic ? 128 : 2;
  const int iw = src.width, ih = src.height, ow = P->rw, oh = P->rh;
  const int icw = (iw + (1 << ws) - 1) >> ws, ich = (ih + (1 << hs) - 1) >> hs;
  const int ocw = (ow + (1 << ws) - 1) >> ws, och = (oh + (1 << hs) - 1) >> hs;
  bool ok = false;
  switch (f.kind) {
  case kPackedRgb:
    /* one plane: video_scale_h_2tap_4u8 (corner to corner) for 4-byte
     * pixels, the n-tap kernel for 3-byte ones */
    ok = planar_plane_setup(&Q.ax[0], &Q.ay[0], &Q.h_first[0], iw, ih, ow, oh,
                            cubic, max_taps, false,
                            f.pstride == 4 ? kPkLerpInc : kPkSum6, kPkSum6,
                            kPkStep8, kPkSum6);
    break;
  case kGray:
    if (f.bits == 16)
      ok = planar_plane_setup(&Q.ax[0], &Q.ay[0], &Q.h_first[0], iw, ih, ow,
                              oh, cubic, max_taps, false, kPkH16, kPkH16,
                              kPkStep16, kPkSum16);
    else
      ok = planar_plane_setup(&Q.ax[0], &Q.ay[0], &Q.h_first[0], iw, ih, ow,
                              oh, cubic, max_taps, true, kPkLerpInc, kPkSum6,
                              kPkStep8, kPkSum6);
    break;
  case kPlanarYuv:
  case kSemiYuv:
    /* luma: the element's method; chroma: the converter's chroma
     * resampler (linear), with the element's tap limit (none for
     * mitchell). Semi-planar chroma: two bytes per sample, no halving,
     * the n-tap horizontal kernel. */
    ok = planar_plane_setup(&Q.ax[0], &Q.ay[0], &Q.h_first[0], iw, ih, ow, oh,
                            cubic, max_taps, true, kPkLerpInc, kPkSum6,
                            kPkStep8, kPkSum6)
         && planar_plane_setup(
             &Q.ax[1], &Q.ay[1], &Q.h_first[1], icw, ich, ocw, och, false,
             max_taps, f.kind == kPlanarYuv,
             f.kind == kPlanarYuv ? kPkLerpInc : kPkSum6, kPkSum6, kPkStep8,
             kPkSum6);
    break;
  case kPacked422: {
    /* one plane, gst_video_scaler_combine_packed_YUV(): luma and chroma
     * horizontal scalers of the same tap count zipped (n-tap kernel), one
     * vertical scaler for the row */
    ok = planar_plane_setup(&Q.ax[0], &Q.ay[0], &Q.h_first[0], iw, ih, ow, oh,
                            cubic, max_taps, false, kPkSum6, kPkSum6,
                            kPkStep8, kPkSum6);
    if (ok) {
      if (iw == ow)
        Q.ax[1] = PlanarAxis{kPkCopy, 0, 0, 0, icw, ocw, 0};
      else
        ok = planar_axis_setup(&Q.ax[1], icw, ocw, cubic, max_taps,
                               Q.ax[0].taps, kPkSum6, kPkSum6)
             && Q.ax[1].taps == Q.ax[0].taps;
      Q.ay[1] = Q.ay[0];
      Q.h_first[1] = Q.h_first[0];
    }
    break;
  }
  default:
    break;
  }
  if (ok)
    Q.mode = kPlanarScale;
}
#endif /* !__CUDACC__ */

} // namespace detail
} // namespace zc

#endif /* GST_ZC_KERNELS_PLANAR_COMMON_H */

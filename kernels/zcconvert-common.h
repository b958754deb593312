/* gst-zerocopy: the per-block step shared by the CPU and CUDA conversions.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Private to kernels/. zcconvert-plan.cpp builds a Plan on the host
 * (formats, integer colour matrix, geometry); both backends then call
 * convert_block() for every output block, so they cannot drift apart.
 * Integer arithmetic only: the results do not depend on the compiler's
 * floating-point contraction.
 */
#ifndef GST_ZC_KERNELS_CONVERT_COMMON_H
#define GST_ZC_KERNELS_CONVERT_COMMON_H

#include <cstddef>
#include <cstdint>

#include "zcconvert.h"
#include "zceffects-common.h"

#ifndef ZC_HD
#ifdef __CUDACC__
#define ZC_HD __host__ __device__
#else
#define ZC_HD
#endif
#endif

namespace zc {
namespace detail {

enum FmtKind : uint8_t {
  kPackedRgb,  /* 3 or 4 bytes per pixel, off[] = R, G, B, A/x (-1: none) */
  kGray,       /* 1 or 2 bytes per pixel */
  kPlanarYuv,  /* Y, U, V planes; off[1] / off[2] = plane of U / V */
  kSemiYuv,    /* Y plane, interleaved chroma plane; off[1] / off[2] =
                  byte of U / V in a chroma pair */
  kPacked422,  /* 4-byte macropixels; off[] = Y0, U, Y1, V */
};

enum Wide10 : uint8_t { kNot10, k10Msb, k10Lsb };

struct FmtInfo
{
  uint8_t kind;
  uint8_t bits;    /* unpack depth: 8 or 16 */
  uint8_t pstride; /* bytes per pixel (packed rgb, gray) or per sample */
  uint8_t ws, hs;  /* log2 chroma subsampling */
  uint8_t wide10;
  int8_t off[4];
};

ZC_HD inline FmtInfo
fmt_info(PixFmt f)
{
  switch (f) {
#define ZC_FMT_INFO(name, kind, bits, pstride, ws, hs, wide10, o0, o1, o2, o3) \
  case PixFmt::name: return {kind, bits, pstride, ws, hs, wide10, {o0, o1, o2, o3}};
    ZC_FORMATS(ZC_FMT_INFO, ZC_FMT_INFO)
#undef ZC_FMT_INFO
  }
  return {kPackedRgb, 8, 4, 0, 0, kNot10, {0, 1, 2, 3}};
}

/* A PixFmt this library knows (a value of the enum). Host only. */
inline bool
fmt_valid(PixFmt f)
{
  return (int)f >= 0 && (int)f < kNumPixFmts;
}

ZC_HD inline bool
fmt_is_yuv(const FmtInfo &f)
{
  return f.kind != kPackedRgb;
}

/* One axis of GStreamer's per-plane chroma scaler (video-converter.c
 * setup_scale() and convert_scale_planes(), GstVideoScaler on GRAY8 planes
 * with the linear resampler), as videoconvert runs it between planar
 * formats of different subsampling at the same picture size. */
enum AxisMode : uint8_t {
  kAxisCopy,   /* same size: sample j */
  kAxisHalve,  /* exactly half: (a + b + 1) >> 1 of samples 2j, 2j + 1 */
  kAxisScaler, /* GstVideoScaler with GstVideoResampler's linear taps */
};

/* Integer taps of one output sample whose double-precision derivation in
 * GStreamer (float rounding, then its search for a rounding bias that makes
 * the taps sum to 1) ends elsewhere than the exact rational rounding of
 * axis_taps(); found and recorded by build_plan(). */
struct TapException
{
  int32_t j;
  uint16_t off;
  int16_t w1; /* the second tap (the first is 256 - w1) */
};

/* Only the vertical 2-tap kernel has exceptions (the horizontal one does
 * not use the resampler's taps). They come in numbers only when the
 * chroma output height is an odd multiple of 256: then nearly every row's
 * weight is half-way (at most 128 differ from the rounding here). */
constexpr int kMaxTapExceptions = 160;

struct ScaleAxis
{
  uint8_t mode;       /* AxisMode */
  uint8_t horizontal; /* GStreamer's horizontal and vertical kernels differ */
  uint8_t taps;       /* taps after clamping to the input size (1, 2) */
  uint8_t taps_full;  /* taps before that clamp: the filter is taps_full / 2
                         input samples wide */
  int32_t in, out;
  int32_t inc;        /* horizontal 2-tap: 16.16 step, corner to corner */
};

} // namespace detail
} // namespace zc

#include "zcplanar-common.h"

namespace zc {
namespace detail {

/* Everything a block needs, passed by value to the kernel. */
struct Plan
{
  FmtInfo si, di;
  const uint8_t *sp[3];
  size_t ss[3];
  int sw, sh;
  uint8_t *dp[3];
  size_t ds[3];
  int dw, dh;

  int depth;       /* working depth of the matrix step: 8 or 16 */
  int matrix_mode; /* MatrixMode */
  int64_t m[3][4]; /* rint(256 * coefficient) */
  int chroma_up;   /* upsample subsampled source chroma (else replicate) */
  int chroma_down; /* average a block's chroma (else take its first pixel) */
  /* videoconvert's planar fast path (convert_scale_planes): destination
   * chroma straight from the source chroma planes, axis by axis.
   * cscale_h_first: with a scaler on both axes, the horizontal pass runs
   * first (GStreamer picks the order from the sizes,
   * gst_video_scaler_2d()). */
  int cscale;
  int cscale_h_first;
  ScaleAxis cax, cay;
  int32_t n_exc; /* GStreamer's own taps where they part from cay's */
  TapException exc[kMaxTapExceptions];

  /* Geometry: the cropped source (cx, cy, cw, ch); its size once oriented
   * (ow, oh); the destination rectangle (rx, ry, rw, rh). */
  int cx, cy, cw, ch;
  int orient;
  int linear; /* 1: linear filter (scaling with Sampling::Bilinear) */
  int cubic;  /* 1: cubic filter (scaling with Sampling::Bicubic) */
  int ow, oh;
  int rx, ry, rw, rh;
  uint32_t border[4]; /* at the destination's unpack depth */
  /* The point effects, on the destination's code values inside the
   * destination rectangle (zceffects-common.h). */
  EffectsPlan fx;

  /* Same format, geometry only: planes moved or scaled on their own
   * (zcplanar-common.h). */
  PlanarPlan pl;

  int blocks_x, blocks_y;
  int dst_over_bus; /* FrameDesc::over_bus of the destination */
};

struct Px
{
  uint32_t c[4]; /* Y/R, U/G, V/B, A */
};

/* Where the per-block code reads the source's bytes: byte `byte` of row
 * `row` of plane `plane`. FrameSrc reads the frame itself; the CUDA
 * conversion may give a block its own copy of the rows it needs instead
 * (TileSrc, zcconvert.cu), read with the same code. */
struct FrameSrc
{
  static constexpr bool kTile = false, kDecoded = false;
  const Plan *P;

  ZC_HD const uint8_t *
  at(int plane, int row, size_t byte) const
  {
    return P->sp[plane] + (size_t)row * P->ss[plane] + byte;
  }
};

ZC_HD inline uint32_t
rd16(const uint8_t *p)
{
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8);
}

ZC_HD inline void
wr16(uint8_t *p, uint32_t v)
{
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}

/* A sample of a YUV plane, widened to the unpack depth. */
ZC_HD inline uint32_t
rd_sample(const FmtInfo &f, const uint8_t *p)
{
  if (f.bits == 8)
    return *p;
  uint32_t v = rd16(p);
  if (f.wide10 == k10Lsb) {
    v &= 0x3ffu;
    return (v << 6) | (v >> 4);
  }
  if (f.wide10 == k10Msb)
    return v | (v >> 10); /* the low 6 bits are not masked, as GStreamer */
  return v;
}

/* Chroma of chroma sample (k, r), not interpolated. */
template <class Src>
ZC_HD inline void
chroma_raw(const Plan &P, const Src &src, int k, int r, uint32_t *u,
           uint32_t *v)
{
  const FmtInfo &f = P.si;
  switch (f.kind) {
  case kPlanarYuv: {
    *u = rd_sample(f, src.at(f.off[1], r, (size_t)k * f.pstride));
    *v = rd_sample(f, src.at(f.off[2], r, (size_t)k * f.pstride));
    break;
  }
  case kSemiYuv: {
    const uint8_t *p = src.at(1, r, (size_t)k * 2 * f.pstride);
    *u = rd_sample(f, p + f.off[1] * f.pstride);
    *v = rd_sample(f, p + f.off[2] * f.pstride);
    break;
  }
  case kPacked422: {
    const uint8_t *p = src.at(0, r, (size_t)k * 4);
    *u = p[f.off[1]];
    *v = p[f.off[3]];
    break;
  }
  default:
    *u = *v = 1u << (f.bits - 1);
    break;
  }
}

/* The 2x interstitial upsampling filters of GStreamer's video-chroma.c. */
ZC_HD inline uint32_t
filt31(uint32_t a, uint32_t b)
{
  return (3 * a + b + 2) >> 2;
}

/* Output position x of a 2x upsampled line of n = (w + 1) / 2 samples: the
 * two input samples it is made of and whether it is a blend (and which
 * way). Pixel 0, and pixel w-1 when w is even, repeat the edge sample. */
struct Taps
{
  int a, b;
  int mode; /* 0: sample a; 1: (3a + b) / 4; 2: (a + 3b) / 4 */
};

ZC_HD inline Taps
up2_taps(int x, int w)
{
  if (x == 0)
    return {0, 0, 0};
  if (x & 1) {
    int k = (x - 1) >> 1;
    if (x < w - 1)
      return {k, k + 1, 1};
    return {k, k, 0};
  }
  return {(x >> 1) - 1, x >> 1, 2};
}

ZC_HD inline uint32_t
blend(const Taps &t, uint32_t a, uint32_t b)
{
  return t.mode == 0 ? a : (t.mode == 1 ? filt31(a, b) : filt31(b, a));
}

/* Horizontally upsampled chroma of chroma row r at pixel column x. */
template <class Src>
ZC_HD inline void
chroma_row(const Plan &P, const Src &src, int r, int x, uint32_t *u,
           uint32_t *v)
{
  if (!P.si.ws) {
    chroma_raw(P, src, x, r, u, v);
    return;
  }
  Taps t = up2_taps(x, P.sw);
  uint32_t ua, va, ub, vb;
  chroma_raw(P, src, t.a, r, &ua, &va);
  if (t.mode == 0) {
    *u = ua;
    *v = va;
    return;
  }
  chroma_raw(P, src, t.b, r, &ub, &vb);
  *u = blend(t, ua, ub);
  *v = blend(t, va, vb);
}

/* One source pixel at the source's unpack depth, chroma upsampled. */
template <class Src>
ZC_HD inline Px
fetch(const Plan &P, const Src &src, int x, int y)
{
  const FmtInfo &f = P.si;
  Px o;
  const uint32_t maxv = f.bits == 8 ? 0xffu : 0xffffu;
  o.c[3] = maxv;

  if (f.kind == kPackedRgb) {
    const uint8_t *p = src.at(0, y, (size_t)x * f.pstride);
    o.c[0] = p[f.off[0]];
    o.c[1] = p[f.off[1]];
    o.c[2] = p[f.off[2]];
    if (f.off[3] >= 0)
      o.c[3] = p[f.off[3]];
    return o;
  }

  if (f.kind == kPacked422)
    o.c[0] = *src.at(0, y, (size_t)(x >> 1) * 4 + f.off[(x & 1) * 2]);
  else
    o.c[0] = rd_sample(f, src.at(0, y, (size_t)x * f.pstride));

  if (f.kind == kGray || P.cscale || P.pl.mode) {
    /* (with cscale the block's chroma comes from chroma_scaled(), and
     * the colour step is nothing) */
    o.c[1] = o.c[2] = 1u << (f.bits - 1);
    return o;
  }

  if (!P.chroma_up) {
    chroma_raw(P, src, x >> f.ws, y >> f.hs, &o.c[1], &o.c[2]);
    return o;
  }
  if (!f.hs) {
    chroma_row(P, src, y, x, &o.c[1], &o.c[2]);
    return o;
  }
  Taps t = up2_taps(y, P.sh);
  uint32_t ua, va, ub, vb;
  chroma_row(P, src, t.a, x, &ua, &va);
  if (t.mode == 0) {
    o.c[1] = ua;
    o.c[2] = va;
    return o;
  }
  chroma_row(P, src, t.b, x, &ub, &vb);
  o.c[1] = blend(t, ua, ub);
  o.c[2] = blend(t, va, vb);
  return o;
}

/* ---- videoconvert's planar chroma scaler ------------------------------- */

/* How the input samples of one output sample combine, as the GRAY8
 * kernels of GStreamer's video-scaler.c (its "LQ" 8-bit variants) do. */
enum TapKind : uint8_t {
  kTapNearest, /* sample off */
  kTapAvg2,    /* (a + b + 1) >> 1 (video_orc_planar_chroma_*) */
  kTapLerp8,   /* horizontal 2-tap: (a (256 - f) + b f) >> 8, f = w[1] */
  kTapStep8,   /* vertical 2-tap: a + (((b - a) w[1] + 128) >> 8), taps of
                  8 fractional bits */
  kTapSum6,    /* 3 or 4 taps: clamp((sum w[i] s[i] + 32) >> 6), taps of 6
                  fractional bits (GStreamer's n-tap kernels; not reached
                  while videoconvert limits its scalers to 2 taps) */
};

struct AxisTaps
{
  int off;  /* first input sample */
  int n;    /* input samples used */
  int kind; /* TapKind */
  int32_t w[4];
};

/* Rounds GstVideoResampler's linear taps for output j to `prec` fractional
 * bits, in exact integers (units of 1 / (2 out) input samples). As
 * video-resampler.c: the output centre x = (j + 1/2) in / out - 1/2 (no
 * -1/2 with one tap), clamped to [0, in - 1]; taps from floor(x) -
 * (taps - 1) / 2 on, weight max(0, 1 - |x - k| 2 / taps_full), normalised;
 * taps falling outside the input folded onto the edge sample; each
 * rounded to nearest (half up). GStreamer derives the same numbers in
 * doubles and then searches a rounding bias until they sum to 1 << prec;
 * where the two could part (a weight exactly half-way), build_plan()
 * records GStreamer's own result as an exception. */
ZC_HD inline void
resampler_linear_taps(const ScaleAxis &a, int j, int prec, int *off,
                      int32_t w[4])
{
  const int T = a.taps;
  const int64_t D = 2 * (int64_t)a.out;
  int64_t xn = (2 * (int64_t)j + 1) * a.in - (T > 1 ? a.out : 0);
  const int64_t xmax = (int64_t)(a.in - 1) * D;
  xn = xn < 0 ? 0 : (xn > xmax ? xmax : xn);
  const int xi = (int)(xn / D) - (T - 1) / 2;
  const int64_t S = D * a.taps_full;
  int64_t raw[4] = {0, 0, 0, 0};
  int64_t sum = 0;
  for (int l = 0; l < T; l++) {
    int64_t d = xn - (int64_t)(xi + l) * D;
    d = d < 0 ? -d : d;
    raw[l] = S - 2 * d > 0 ? S - 2 * d : 0;
    sum += raw[l];
  }
  *off = fold_edge_taps(raw, T, xi, a.in);
  const int64_t M = (int64_t)1 << prec;
  for (int l = 0; l < 4; l++)
    w[l] = l < T ? (int32_t)((2 * raw[l] * M + sum) / (2 * sum)) : 0;
}

/* The input samples and weights of output sample j on one axis, as
 * videoconvert's planar fast path runs that axis. */
ZC_HD inline AxisTaps
axis_taps(const ScaleAxis &a, int j, const TapException *exc = nullptr,
          int n_exc = 0)
{
  AxisTaps t;
  t.w[0] = t.w[1] = t.w[2] = t.w[3] = 0;
  if (a.mode == kAxisCopy) {
    t.off = j;
    t.n = 1;
    t.kind = kTapNearest;
    return t;
  }
  if (a.mode == kAxisHalve) {
    t.off = 2 * j;
    t.n = 2;
    t.kind = kTapAvg2;
    return t;
  }
  t.n = a.taps;
  if (a.taps == 2 && a.horizontal) {
    /* video_orc_resample_h_2tap_1u8_lq: not the resampler's taps but a
     * 16.16 position stepping corner to corner, 8-bit fraction. */
    const int64_t pos = (int64_t)j * a.inc;
    t.off = (int)(pos >> 16);
    t.w[1] = (int32_t)((pos >> 8) & 0xff);
    t.kind = kTapLerp8;
    return t;
  }
  const int prec = a.taps == 2 ? 8 : 6;
  t.kind = a.taps == 1 ? kTapNearest : (a.taps == 2 ? kTapStep8 : kTapSum6);
  resampler_linear_taps(a, j, prec, &t.off, t.w);
  for (int i = 0; i < n_exc; i++) {
    if (exc[i].j == j) {
      t.off = exc[i].off;
      t.w[0] = 256 - exc[i].w1;
      t.w[1] = exc[i].w1;
      break;
    }
  }
  return t;
}

ZC_HD inline uint32_t
tap_eval(const AxisTaps &t, const uint32_t *s)
{
  switch (t.kind) {
  case kTapAvg2:
    return (s[0] + s[1] + 1) >> 1;
  case kTapLerp8:
    return (s[0] * (256u - (uint32_t)t.w[1]) + s[1] * (uint32_t)t.w[1]) >> 8;
  case kTapStep8:
    /* the rounded step stays between a and b, so GStreamer's 16-bit and
     * 8-bit wrap-arounds never show */
    return (uint32_t)((int32_t)s[0]
                      + ((((int32_t)s[1] - (int32_t)s[0]) * t.w[1] + 128)
                         >> 8));
  case kTapSum6: {
    int32_t acc = 0;
    for (int l = 0; l < t.n; l++)
      acc += t.w[l] * (int32_t)s[l];
    acc = (acc + 32) >> 6;
    return (uint32_t)(acc < 0 ? 0 : (acc > 255 ? 255 : acc));
  }
  default:
    return s[0];
  }
}

/* Destination chroma sample (cx, cy) from the source chroma planes: one
 * axis after the other, each pass rounded to 8 bits, in the order
 * gst_video_scaler_2d() takes. */
ZC_HD inline void
chroma_scaled(const Plan &P, const AxisTaps &tv, int cx, uint32_t *u,
              uint32_t *v)
{
  const AxisTaps th = axis_taps(P.cax, cx);
  const FrameSrc src{&P};
  uint32_t iu[4], iv[4], su[4], sv[4];
  if (P.cscale_h_first) {
    for (int i = 0; i < tv.n; i++) {
      for (int k = 0; k < th.n; k++)
        chroma_raw(P, src, th.off + k, tv.off + i, &su[k], &sv[k]);
      iu[i] = tap_eval(th, su);
      iv[i] = tap_eval(th, sv);
    }
    *u = tap_eval(tv, iu);
    *v = tap_eval(tv, iv);
  } else {
    for (int k = 0; k < th.n; k++) {
      for (int i = 0; i < tv.n; i++)
        chroma_raw(P, src, th.off + k, tv.off + i, &su[i], &sv[i]);
      iu[k] = tap_eval(tv, su);
      iv[k] = tap_eval(tv, sv);
    }
    *u = tap_eval(th, iu);
    *v = tap_eval(th, iv);
  }
}

/* Pixel (a, b) of the oriented, cropped source -> pixel of the source,
 * with videoflip's mapping. */
ZC_HD inline void
orient_to_source(const Plan &P, int a, int b, int *sx, int *sy)
{
  orient_map(P.orient, P.cx, P.cy, P.cw, P.ch, a, b, sx, sy);
}

/* Nearest: the oriented source pixel under the centre of output pixel u
 * (in an output of n pixels over a source of m), as GStreamer's nearest
 * resampler picks it. */
ZC_HD inline int
nearest_index(int u, int n, int m)
{
  return (int)(((int64_t)(2 * u + 1) * m) / (2 * (int64_t)n));
}

/* Linear filter taps of output pixel u (n outputs over m inputs), in
 * integers so that both backends agree bit for bit. In units of 1/(2n)
 * source pixels the centre of u sits at c = (2u + 1) m - n and source
 * pixel k at 2nk. As GStreamer's linear resampler (video-resampler.c), the
 * filter has T = max(2, ceil(2m / n)) taps and is a triangle T/2 source
 * pixels wide: weight(k) = max(0, S - |c - 2nk|) with S = T n. */
struct LinearTaps
{
  int64_t c, S, step;
  int k0, k1; /* taps k0..k1 inclusive (before clamping to the edge) */
};

ZC_HD inline LinearTaps
linear_taps(int u, int n, int m)
{
  LinearTaps t;
  t.step = 2 * (int64_t)n;
  t.c = (int64_t)(2 * u + 1) * m - n;
  const int64_t taps = m > n ? (2 * (int64_t)m + n - 1) / n : 2;
  t.S = (taps < 2 ? 2 : taps) * (int64_t)n;
  /* k with |c - step k| < S: (c - S) / step < k < (c + S) / step. */
  int64_t lo = t.c - t.S, hi = t.c + t.S;
  /* floor division for possibly negative lo */
  int64_t k0 = lo >= 0 ? lo / t.step : -((-lo + t.step - 1) / t.step);
  t.k0 = (int)(k0 + 1);
  t.k1 = (int)((hi - 1) / t.step);
  if (hi - 1 < 0)
    t.k1 = -1;
  return t;
}

ZC_HD inline int64_t
linear_weight(const LinearTaps &t, int k)
{
  int64_t d = t.c - t.step * k;
  d = d < 0 ? -d : d;
  return d < t.S ? t.S - d : 0;
}

ZC_HD inline int
clamp_index(int k, int m)
{
  return k < 0 ? 0 : (k >= m ? m - 1 : k);
}

/* Pixel (a, b) of the oriented, cropped source at the source's unpack
 * depth: read and converted from the source's bytes, or, from a Src that
 * holds the source already so (DecodedSrc), read from there. */
template <class Src>
ZC_HD inline Px
oriented_px(const Plan &P, const Src &src, int a, int b)
{
  if constexpr (Src::kDecoded) {
    return src.px(a, b);
  } else {
    int sx, sy;
    orient_to_source(P, a, b, &sx, &sy);
    return fetch(P, src, sx, sy);
  }
}

/* Bilinear (area-aware when shrinking) sample at output pixel (u, v) of
 * the destination rectangle, at the source's unpack depth, rounded to
 * nearest once at the end. Edge pixels are repeated. */
template <class Src>
ZC_HD inline Px
sample_linear(const Plan &P, const Src &src, int u, int v)
{
  const LinearTaps tx = linear_taps(u, P.rw, P.ow);
  const LinearTaps ty = linear_taps(v, P.rh, P.oh);
  int64_t acc[4] = {0, 0, 0, 0};
  int64_t wsum_x = 0, wsum_y = 0;
  for (int kx = tx.k0; kx <= tx.k1; kx++)
    wsum_x += linear_weight(tx, kx);
  /* row by row: the exact integer sum of wx wy s, so the order of the
   * terms does not change the result */
  for (int ky = ty.k0; ky <= ty.k1; ky++) {
    const int64_t wy = linear_weight(ty, ky);
    if (!wy)
      continue;
    wsum_y += wy;
    const int b = clamp_index(ky, P.oh);
    int64_t h[4] = {0, 0, 0, 0};
    for (int kx = tx.k0; kx <= tx.k1; kx++) {
      const int64_t wx = linear_weight(tx, kx);
      if (!wx)
        continue;
      const Px s = oriented_px(P, src, clamp_index(kx, P.ow), b);
      for (int i = 0; i < 4; i++)
        h[i] += wx * s.c[i];
    }
    for (int i = 0; i < 4; i++)
      acc[i] += wy * h[i];
  }
  const int64_t W = wsum_x * wsum_y;
  Px o;
  for (int i = 0; i < 4; i++)
    o.c[i] = (uint32_t)((acc[i] + W / 2) / W);
  return o;
}

/* Cubic filter taps of output pixel u (n outputs over m inputs), as
 * GStreamer's cubic resampler (video-resampler.c, get_cubic_tap() with its
 * default B = C = 1/3) places them: T = max(4, ceil(4m / n)) taps, at most
 * m; the kernel stretched to T / 2 source pixels on each side (a plain
 * 4-tap cubic when enlarging, wider when shrinking); the output centre
 * c = (u + 1/2) m / n - 1/2 clamped to [0, m - 1]; taps from
 * floor(c) - (T - 1) / 2 on; positions outside the frame repeat the edge
 * pixel. In units of 1/(2n) source pixels: xn = 2n c, pixel k at 2nk. */
struct CubicTaps
{
  int64_t xn, D, Q; /* centre, pixel pitch, kernel scale (a = 4|d| / Q) */
  int k0, T;
};

ZC_HD inline CubicTaps
cubic_taps(int u, int n, int m)
{
  CubicTaps t;
  t.D = 2 * (int64_t)n;
  const int64_t full = m > n ? (4 * (int64_t)m + n - 1) / n : 4;
  t.T = (int)(full > m ? m : full);
  int64_t xn = (int64_t)(2 * u + 1) * m - (t.T > 1 ? n : 0);
  const int64_t xmax = (int64_t)(m - 1) * t.D;
  t.xn = xn < 0 ? 0 : (xn > xmax ? xmax : xn);
  t.Q = t.D * full;
  t.k0 = (int)(t.xn / t.D) - (t.T - 1) / 2;
  return t;
}

/* 18 times the Mitchell-Netravali kernel with B = C = 1/3 at source pixel
 * k, in units of 2^-14: for a = |x - k| scaled, (21a^3 - 36a^2 + 16) when
 * a <= 1, (-7a^3 + 36a^2 - 60a + 32) when a <= 2, else 0 (divided by 18:
 * the magnitude stays below 2^14 and the products of two weights and a
 * 16-bit sample summed over 64x64 taps fit in 64 bits). */
ZC_HD inline int64_t
cubic_weight(const CubicTaps &t, int k)
{
  int64_t d = t.xn - t.D * k;
  d = d < 0 ? -d : d;
  const int64_t a = ((4 * d) << 14) / t.Q;
  if (a >= (int64_t)2 << 14)
    return 0;
  const int64_t a2 = (a * a) >> 14, a3 = (a2 * a) >> 14;
  if (a <= (int64_t)1 << 14)
    return (21 * a3 - 36 * a2 + ((int64_t)16 << 14)) / 18;
  return (-7 * a3 + 36 * a2 - 60 * a + ((int64_t)32 << 14)) / 18;
}

/* Bicubic sample at output pixel (u, v) of the destination rectangle, at
 * the source's unpack depth: one exact 2D sum, normalised, rounded to
 * nearest once and clamped (the kernel's negative lobes can overshoot). */
template <class Src>
ZC_HD inline Px
sample_cubic(const Plan &P, const Src &src, int u, int v)
{
  const CubicTaps tx = cubic_taps(u, P.rw, P.ow);
  const CubicTaps ty = cubic_taps(v, P.rh, P.oh);
  constexpr int kCache = 16;
  int64_t wxs[kCache];
  int64_t wsum_x = 0, wsum_y = 0;
  for (int i = 0; i < tx.T; i++) {
    const int64_t w = cubic_weight(tx, tx.k0 + i);
    if (i < kCache)
      wxs[i] = w;
    wsum_x += w;
  }
  int64_t acc[4] = {0, 0, 0, 0};
  for (int j = 0; j < ty.T; j++) {
    const int64_t wy = cubic_weight(ty, ty.k0 + j);
    if (!wy)
      continue;
    wsum_y += wy;
    const int b = clamp_index(ty.k0 + j, P.oh);
    int64_t h[4] = {0, 0, 0, 0};
    for (int i = 0; i < tx.T; i++) {
      const int64_t wx = i < kCache ? wxs[i] : cubic_weight(tx, tx.k0 + i);
      if (!wx)
        continue;
      const Px s = oriented_px(P, src, clamp_index(tx.k0 + i, P.ow), b);
      for (int c = 0; c < 4; c++)
        h[c] += wx * (int64_t)s.c[c];
    }
    for (int c = 0; c < 4; c++)
      acc[c] += wy * h[c];
  }
  const int64_t W = wsum_x * wsum_y;
  const int64_t maxv = P.si.bits == 8 ? 0xff : 0xffff;
  Px o;
  for (int c = 0; c < 4; c++) {
    const int64_t r = acc[c] <= 0 ? 0 : (acc[c] + W / 2) / W;
    o.c[c] = (uint32_t)(r > maxv ? maxv : r);
  }
  return o;
}

/* ---- a filtered tile's tap tables ----------------------------------------
 *
 * The samplers above derive every tap's weight (and the taps themselves,
 * with 64-bit divisions) per output pixel. A filtered tile computes them
 * once per output column and row instead: an entry is {k0, n, wsum,
 * w[0..n-1]}, the first tap before the edge clamp, the number of taps,
 * their sum and the weights, as sample_linear() and sample_cubic() use
 * them. sample_tabled() then makes the same exact integer sums. */

/* Taps an entry holds at most, for an axis of n outputs over m inputs
 * (the same for every output sample). */
ZC_HD inline int
filter_taps_max(const Plan &P, int n, int m)
{
  if (P.linear)
    return (int)(linear_taps(0, n, m).S / n);
  return cubic_taps(0, n, m).T;
}

/* The entry of output sample u (n outputs over m inputs) into e, which
 * holds 3 + filter_taps_max() values. */
ZC_HD inline void
fill_filter_taps(const Plan &P, int u, int n, int m, int32_t *e)
{
  int32_t sum = 0;
  if (P.linear) {
    const LinearTaps t = linear_taps(u, n, m);
    e[0] = t.k0;
    e[1] = t.k1 - t.k0 + 1;
    for (int i = 0; i < e[1]; i++) {
      e[3 + i] = (int32_t)linear_weight(t, t.k0 + i);
      sum += e[3 + i];
    }
  } else {
    const CubicTaps t = cubic_taps(u, n, m);
    e[0] = t.k0;
    e[1] = t.T;
    for (int i = 0; i < t.T; i++) {
      e[3 + i] = (int32_t)cubic_weight(t, t.k0 + i);
      sum += e[3 + i];
    }
  }
  e[2] = sum;
}

/* floor(n / d) for n >= 0, d > 0, with inv about 1 / d: a float quotient
 * (within one of the answer while it stays below 2^20, as it does for
 * samples), corrected by the exact remainder. Exact in every case; far
 * cheaper on a GPU than a 64-bit division. */
ZC_HD inline int64_t
div_floor(int64_t n, int64_t d, float inv)
{
  int64_t q = (int64_t)((float)n * inv);
  int64_t r = n - q * d;
  while (r < 0) {
    q--;
    r += d;
  }
  while (r >= d) {
    q++;
    r -= d;
  }
  return q;
}

/* A filter's sum of weight * sample over its weights' sum W (inv about
 * 1 / W), rounded to nearest and clamped to 0..maxv. */
ZC_HD inline uint32_t
tabled_sample(int64_t acc, int64_t W, float inv, int64_t maxv)
{
  const int64_t r = acc <= 0 ? 0 : div_floor(acc + W / 2, W, inv);
  return (uint32_t)(r > maxv ? maxv : r);
}

/* The sample at output pixel (u, v) from the tap tables of src (a
 * DecodedSrc): what sample_linear() or sample_cubic() returns (the same
 * sums, the same rounding; a linear sum never needs the clamp). */
template <class Src>
ZC_HD inline Px
sample_tabled(const Plan &P, const Src &src, int u, int v)
{
  const int32_t *tx = src.col_taps(u), *ty = src.row_taps(v);
  int64_t acc[4] = {0, 0, 0, 0};
  for (int j = 0; j < ty[1]; j++) {
    const int32_t wy = ty[3 + j];
    if (!wy)
      continue;
    const int b = clamp_index(ty[0] + j, P.oh);
    if (src.narrow) {
      /* each row's sum fits in 32 bits (tile_geom()) */
      int32_t h[4] = {0, 0, 0, 0};
      for (int i = 0; i < tx[1]; i++) {
        const int32_t wx = tx[3 + i];
        const Px s = src.px(clamp_index(tx[0] + i, P.ow), b);
        for (int c = 0; c < 4; c++)
          h[c] += wx * (int32_t)s.c[c];
      }
      for (int c = 0; c < 4; c++)
        acc[c] += (int64_t)wy * h[c];
    } else {
      int64_t h[4] = {0, 0, 0, 0};
      for (int i = 0; i < tx[1]; i++) {
        const int32_t wx = tx[3 + i];
        const Px s = src.px(clamp_index(tx[0] + i, P.ow), b);
        for (int c = 0; c < 4; c++)
          h[c] += (int64_t)wx * (int32_t)s.c[c];
      }
      for (int c = 0; c < 4; c++)
        acc[c] += wy * h[c];
    }
  }
  const int64_t W = (int64_t)tx[2] * ty[2];
  const float inv = 1.0f / (float)W;
  const int64_t maxv = P.si.bits == 8 ? 0xff : 0xffff;
  Px o;
  for (int c = 0; c < 4; c++)
    o.c[c] = tabled_sample(acc[c], W, inv, maxv);
  return o;
}

enum MatrixMode {
  kMatrixNone,     /* same matrix (or both RGB): only the depth changes */
  kMatrixFloor,    /* (sum + offset) >> 8, clamped */
  kMatrixOrc8,     /* GStreamer's ORC 8-bit matrix (see below), used when
                      the result may leave 0..255 */
  kMatrixAyuvArgb, /* GStreamer's 8-bit Y'CbCr -> R'G'B' (see below) */
};

ZC_HD inline Px
apply_matrix(const Plan &P, const Px &s)
{
  const int64_t maxv = P.depth == 8 ? 0xff : 0xffff;
  Px t = s;
  for (int i = 0; i < 3; i++) {
    int64_t acc = (int64_t)P.m[i][0] * s.c[0] + (int64_t)P.m[i][1] * s.c[1]
                  + (int64_t)P.m[i][2] * s.c[2];
    /* >> on a negative value: arithmetic (floor) with every compiler that
     * CUDA supports, and required so since C++20. */
    acc = (acc + P.m[i][3]) >> 8;
    t.c[i] = (uint32_t)(acc < 0 ? 0 : (acc > maxv ? maxv : acc));
  }
  return t;
}

/* 16-bit lanes of GStreamer's ORC 8-bit matrix steps (video_orc_matrix8,
 * and video_orc_convert_AYUV_ARGB for Y'CbCr -> R'G'B'): each component
 * minus 128 as a signed byte, splatted to a 16-bit word (b << 8 | b),
 * multiplied keeping the high half (mulhsw), summed with 16-bit
 * wrap-around, saturated to a signed byte, plus 128. The offsets of the
 * matrix are not used (with a limited range side this lands a code value
 * or two away from the exact result; it is what videoconvert outputs). */
ZC_HD inline int32_t
orc_splat(uint32_t v)
{
  const uint32_t b = (v - 128u) & 0xffu;
  return (int32_t)(int16_t)(uint16_t)((b << 8) | b);
}

ZC_HD inline int32_t
orc_mulhsw(int32_t a, int32_t b)
{
  return (int32_t)(int16_t)((a * b) >> 16);
}

ZC_HD inline uint32_t
orc_sat(int32_t w)
{
  w = (int32_t)(int16_t)w;
  w = w < -128 ? -128 : (w > 127 ? 127 : w);
  return (uint32_t)(w + 128);
}

ZC_HD inline Px
apply_ayuv_argb(const Plan &P, const Px &s)
{
  const int32_t p1 = (int16_t)P.m[0][0], p2 = (int16_t)P.m[0][2],
                p3 = (int16_t)P.m[2][1], p4 = (int16_t)P.m[1][1],
                p5 = (int16_t)P.m[1][2];
  const int32_t wy = orc_mulhsw(orc_splat(s.c[0]), p1);
  const int32_t wu = orc_splat(s.c[1]), wv = orc_splat(s.c[2]);
  Px t = s;
  t.c[0] = orc_sat(wy + orc_mulhsw(wv, p2));
  t.c[2] = orc_sat(wy + orc_mulhsw(wu, p3));
  t.c[1] = orc_sat((int32_t)(int16_t)(wy + orc_mulhsw(wu, p4))
                   + orc_mulhsw(wv, p5));
  return t;
}

ZC_HD inline Px
apply_orc_matrix8(const Plan &P, const Px &s)
{
  const int32_t w[3] = {orc_splat(s.c[0]), orc_splat(s.c[1]),
                        orc_splat(s.c[2])};
  Px t = s;
  for (int i = 0; i < 3; i++) {
    int32_t acc = 0;
    for (int j = 0; j < 3; j++)
      acc = (int32_t)(int16_t)(acc + orc_mulhsw(w[j], (int16_t)P.m[i][j]));
    t.c[i] = orc_sat(acc);
  }
  return t;
}

/* A sampled source pixel (at the source's unpack depth) -> the
 * destination's colour at its unpack depth: the working depth, the
 * matrix, the destination's depth. */
ZC_HD inline Px
colour_step(const Plan &P, Px s)
{
  if (P.depth == 16 && P.si.bits == 8) {
    for (int i = 0; i < 4; i++)
      s.c[i] = (s.c[i] << 8) | s.c[i];
  }
  switch (P.matrix_mode) {
  case kMatrixFloor:
    s = apply_matrix(P, s);
    break;
  case kMatrixOrc8:
    s = apply_orc_matrix8(P, s);
    break;
  case kMatrixAyuvArgb:
    s = apply_ayuv_argb(P, s);
    break;
  default:
    break;
  }
  if (P.depth == 16 && P.di.bits == 8) {
    for (int i = 0; i < 4; i++)
      s.c[i] >>= 8;
  }
  return s;
}

/* Destination pixel (x, y) at the destination's unpack depth. */
template <class Src>
ZC_HD inline Px
out_pixel(const Plan &P, const Src &src, int x, int y)
{
  Px o;
  const int u = x - P.rx, v = y - P.ry;
  if (u < 0 || v < 0 || u >= P.rw || v >= P.rh) {
    for (int i = 0; i < 4; i++)
      o.c[i] = P.border[i];
    return o;
  }
  Px s;
  /* A tile holds only what its path reads (tile_geom()): the filtered
   * tiles decoded pixels, the others the source's bytes for nearest
   * sampling; neither runs the planar paths. Leaving the rest out keeps
   * each tiled kernel small. */
  if constexpr (Src::kDecoded) {
    s = sample_tabled(P, src, u, v);
  } else if constexpr (Src::kTile) {
    s = oriented_px(P, src, nearest_index(u, P.rw, P.ow),
                    nearest_index(v, P.rh, P.oh));
  } else if (P.pl.mode == kPlanarScale) {
    planar_pixel(P.pl, u, v, s.c);
  } else if (P.linear) {
    s = sample_linear(P, src, u, v);
  } else if (P.cubic) {
    s = sample_cubic(P, src, u, v);
  } else {
    s = oriented_px(P, src, nearest_index(u, P.rw, P.ow),
                    nearest_index(v, P.rh, P.oh));
  }

  return colour_step(P, s);
}

/* A sample at the destination's unpack depth -> its stored form. */
ZC_HD inline void
wr_sample(const FmtInfo &f, uint8_t *p, uint32_t v)
{
  if (f.bits == 8)
    *p = uint8_t(v);
  else if (f.wide10 == k10Lsb)
    wr16(p, v >> 6);
  else if (f.wide10 == k10Msb)
    wr16(p, v & 0xffc0u);
  else
    wr16(p, v);
}

ZC_HD inline uint32_t
avg2(uint32_t a, uint32_t b)
{
  return (a + b + 1) >> 1;
}

/* An 8-bit pixel of a 4-byte R'G'B' format as one little-endian word:
 * each sample at its byte (the padding byte of xRGB-like formats carries
 * alpha, as in GStreamer). */
ZC_HD inline uint32_t
rgb32_word(const FmtInfo &f, const Px &s)
{
  return (uint32_t(uint8_t(s.c[0])) << (8 * f.off[0]))
         | (uint32_t(uint8_t(s.c[1])) << (8 * f.off[1]))
         | (uint32_t(uint8_t(s.c[2])) << (8 * f.off[2]))
         | (uint32_t(uint8_t(s.c[3])) << (8 * f.off[3]));
}

/* What the blocks of one row share: the vertical taps of the chroma
 * scaler (the CPU computes them once per row, CUDA once per block). */
struct RowCtx
{
  AxisTaps tv;
};

ZC_HD inline RowCtx
row_ctx(const Plan &P, int by)
{
  RowCtx rc;
  if (P.cscale)
    rc.tv = axis_taps(P.cay, by, P.exc, P.n_exc);
  else
    rc.tv = AxisTaps{by, 1, kTapNearest, {0, 0, 0, 0}};
  return rc;
}

/* Whether destination pixel (x, y) is in the destination rectangle (not
 * the border, which the effects leave as it is). */
ZC_HD inline bool
in_picture(const Plan &P, int x, int y)
{
  return x >= P.rx && y >= P.ry && x - P.rx < P.rw && y - P.ry < P.rh;
}

/* Output block (bx, by): 1x1 pixel, 2x1 (4:2:2) or 2x2 (4:2:0); rc is
 * row_ctx(P, by); the source's bytes are read through src. */
template <class Src>
ZC_HD inline void
convert_block(const Plan &P, const Src &src, const RowCtx &rc, int bx,
              int by)
{
  const FmtInfo &f = P.di;
  const int bw = 1 << f.ws, bh = 1 << f.hs;
  const int x0 = bx * bw, y0 = by * bh;
  Px px[2][2];
  bool have[2][2] = {{false, false}, {false, false}};

  for (int j = 0; j < bh; j++) {
    for (int i = 0; i < bw; i++) {
      const int x = x0 + i, y = y0 + j;
      if (x >= P.dw || y >= P.dh)
        continue;
      have[j][i] = true;
      Px s = out_pixel(P, src, x, y);
      if (P.fx.active && in_picture(P, x, y))
        effects_pixel(P.fx, s.c);
      px[j][i] = s;

      uint8_t *row = P.dp[0] + (size_t)y * P.ds[0];
      switch (f.kind) {
      case kPackedRgb: {
        uint8_t *p = row + (size_t)x * f.pstride;
        if (f.pstride == 4 && (reinterpret_cast<uintptr_t>(p) & 3) == 0) {
          /* One 32-bit store (little-endian): byte stores into mapped host
           * memory go over the bus as partial writes, several times the
           * traffic. The padding byte of xRGB-like formats carries alpha,
           * as in GStreamer. */
          *reinterpret_cast<uint32_t *>(p) = rgb32_word(f, s);
          break;
        }
        p[f.off[0]] = uint8_t(s.c[0]);
        p[f.off[1]] = uint8_t(s.c[1]);
        p[f.off[2]] = uint8_t(s.c[2]);
        /* As GStreamer does, the padding byte of xRGB-like formats
         * carries the alpha channel (0xff unless the source has one). */
        if (f.off[3] >= 0)
          p[f.off[3]] = uint8_t(s.c[3]);
        break;
      }
      case kPacked422:
        /* the whole macropixel is stored with its chroma, below */
        break;
      default: {
        uint8_t *p = row + (size_t)x * f.pstride;
        if (f.bits == 8 && bw == 2) {
          /* 8-bit luma of a 2-wide block: one 16-bit store for the pair
           * (byte stores to mapped memory are partial writes on the bus) */
          if (i == 0 && x + 1 < P.dw)
            break;
          if (i == 1 && (reinterpret_cast<uintptr_t>(p - 1) & 1) == 0) {
            *reinterpret_cast<uint16_t *>(p - 1) = uint16_t(
                uint32_t(uint8_t(px[j][0].c[0])) | (uint32_t(uint8_t(s.c[0])) << 8));
            break;
          }
          if (i == 1)
            p[-1] = uint8_t(px[j][0].c[0]);
        }
        wr_sample(f, p, s.c[0]);
        break;
      }
      }
    }
  }

  if (f.kind == kPackedRgb || f.kind == kGray)
    return;

  /* Chroma: rows first, then columns; a missing row or column is not
   * averaged in. */
  uint32_t cu[2], cv[2];
  for (int i = 0; i < bw; i++) {
    cu[i] = cv[i] = 0;
    if (!have[0][i])
      continue;
    cu[i] = px[0][i].c[1];
    cv[i] = px[0][i].c[2];
    if (bh == 2 && have[1][i]) {
      cu[i] = avg2(cu[i], px[1][i].c[1]);
      cv[i] = avg2(cv[i], px[1][i].c[2]);
    }
  }
  uint32_t u = cu[0], v = cv[0];
  if (!Src::kTile && P.cscale) {
    chroma_scaled(P, rc.tv, bx, &u, &v);
  } else if (!Src::kTile && P.pl.mode) {
    planar_chroma(P.pl, bx, by, &u, &v);
  } else if (!P.chroma_down) {
    /* Same subsampling on both sides: the block's first pixel. */
    u = px[0][0].c[1];
    v = px[0][0].c[2];
  } else if (bw == 2 && have[0][1]) {
    u = avg2(cu[0], cu[1]);
    v = avg2(cv[0], cv[1]);
  }
  /* once per chroma sample, on its final value (as videobalance) */
  if (P.fx.active && in_picture(P, x0, y0))
    effects_chroma(P.fx, &u, &v);

  switch (f.kind) {
  case kPlanarYuv: {
    const size_t off = (size_t)bx * f.pstride;
    wr_sample(f, P.dp[f.off[1]] + (size_t)by * P.ds[f.off[1]] + off, u);
    wr_sample(f, P.dp[f.off[2]] + (size_t)by * P.ds[f.off[2]] + off, v);
    break;
  }
  case kSemiYuv: {
    uint8_t *p = P.dp[1] + (size_t)by * P.ds[1] + (size_t)bx * 2 * f.pstride;
    if (f.bits == 8 && (reinterpret_cast<uintptr_t>(p) & 1) == 0) {
      *reinterpret_cast<uint16_t *>(p) = uint16_t(
          (uint32_t(uint8_t(u)) << (8 * f.off[1])) | (uint32_t(uint8_t(v)) << (8 * f.off[2])));
      break;
    }
    wr_sample(f, p + f.off[1] * f.pstride, u);
    wr_sample(f, p + f.off[2] * f.pstride, v);
    break;
  }
  case kPacked422: {
    /* Y0 U Y1 V (or its permutation) in one 32-bit store when aligned. An
     * odd width: the last macropixel's second luma repeats the first. */
    uint8_t *p = P.dp[0] + (size_t)y0 * P.ds[0] + (size_t)bx * 4;
    const uint32_t y0v = uint8_t(px[0][0].c[0]);
    const uint32_t y1v = have[0][1] ? uint8_t(px[0][1].c[0]) : y0v;
    const uint32_t w = (y0v << (8 * f.off[0])) | (uint32_t(uint8_t(u)) << (8 * f.off[1]))
                       | (y1v << (8 * f.off[2])) | (uint32_t(uint8_t(v)) << (8 * f.off[3]));
    if ((reinterpret_cast<uintptr_t>(p) & 3) == 0) {
      *reinterpret_cast<uint32_t *>(p) = w;
    } else {
      for (int k = 0; k < 4; k++)
        p[k] = uint8_t(w >> (8 * k));
    }
    break;
  }
  default:
    break;
  }
}

ZC_HD inline void
convert_block(const Plan &P, const RowCtx &rc, int bx, int by)
{
  convert_block(P, FrameSrc{&P}, rc, bx, by);
}

ZC_HD inline void
convert_block(const Plan &P, int bx, int by)
{
  convert_block(P, row_ctx(P, by), bx, by);
}

/* ---- tiles: the CUDA conversion's staged reads --------------------------
 *
 * Read byte by byte, a mapped source costs one bus transaction per load,
 * and a scaling filter reads every source pixel (and upsamples its chroma)
 * once per tap. So the CUDA kernel gives each thread block a tile of
 * output blocks; the block first copies the source rows the tile reads
 * into shared memory, in wide coalesced loads (TileSrc reads that copy).
 * A filtered tile (bilinear, bicubic) then converts each oriented source
 * pixel it reads to the source's unpack depth once, chroma upsampled
 * (DecodedSrc), and the filter taps read those. Then the same
 * convert_block() runs on the copy. convert_cpu_tiled() runs the same
 * tiling on the CPU, so the geometry below is checked without a GPU.
 * Not for the planar paths (cscale, pl.mode), which read the frame
 * directly. */

constexpr int kTileThreadsX = 32;
constexpr int kTileThreadsY = 8;
/* Shared memory a tile may take: above 48 KiB a kernel must opt in
 * (cudaFuncAttributeMaxDynamicSharedMemorySize); every GPU from sm_75 on
 * allows 64 KiB a block or more. */
constexpr int kTileSmemDefault = 48 * 1024;
constexpr int kTileSmemLimit = 64 * 1024;

struct TileGeom
{
  int rows_per_thread; /* output block rows per thread: 4, 2 or 1 */
  int tile_bx, tile_by; /* output blocks per tile */
  int grid_x, grid_y;   /* tiles */
  int n_planes;
  int vec[3];   /* load width per plane: 16, 4 or 1 bytes */
  int pitch[3]; /* bytes per staged row (a multiple of 16) */
  int rows[3];  /* staged rows per plane, at most */
  int decoded;  /* 1: the filtered path's decoded pixels follow the rows */
  int dec_w, dec_h; /* oriented source pixels per tile, at most */
  int dec_offset;   /* where the decoded pixels start (16-byte aligned) */
  /* a filtered tile's tap tables (after the decoded pixels): an entry of
   * tab_cs 32-bit values per output column of the tile, then one of
   * tab_rs per output row */
  int tab_offset, tab_cs, tab_rs;
  int narrow; /* 1: a row of horizontal taps sums in 32 bits */
  int smem;     /* bytes */
};

/* Rows [row0, row0 + rows) of one plane, bytes [byte0, byte0 + bytes) of
 * each, byte0 a multiple of the plane's load width. */
struct PlaneSpan
{
  int row0, rows, byte0, bytes;
};

/* The oriented source pixels [lo, hi] that output pixels [u0, u1] of an
 * axis (n outputs over m inputs) read, as the samplers above pick them. */
ZC_HD inline void
axis_span(const Plan &P, int u0, int u1, int n, int m, int *lo, int *hi)
{
  if (P.linear) {
    *lo = clamp_index(linear_taps(u0, n, m).k0, m);
    *hi = clamp_index(linear_taps(u1, n, m).k1, m);
  } else if (P.cubic) {
    const CubicTaps t0 = cubic_taps(u0, n, m), t1 = cubic_taps(u1, n, m);
    *lo = clamp_index(t0.k0, m);
    *hi = clamp_index(t1.k0 + t1.T - 1, m);
  } else {
    *lo = nearest_index(u0, n, m);
    *hi = nearest_index(u1, n, m);
  }
}

/* The oriented source pixels (ab = a0, b0, a1, b1, inclusive) that the
 * destination pixels of tile (tx, ty) read; false if they are all
 * border. */
ZC_HD inline bool
tile_oriented(const Plan &P, const TileGeom &g, int tx, int ty, int ab[4])
{
  const int bw = 1 << P.di.ws, bh = 1 << P.di.hs;
  const int x0 = tx * g.tile_bx * bw, y0 = ty * g.tile_by * bh;
  int x1 = x0 + g.tile_bx * bw - 1, y1 = y0 + g.tile_by * bh - 1;
  x1 = x1 < P.dw - 1 ? x1 : P.dw - 1;
  y1 = y1 < P.dh - 1 ? y1 : P.dh - 1;
  const int u0 = (x0 > P.rx ? x0 : P.rx) - P.rx;
  const int u1 = (x1 < P.rx + P.rw - 1 ? x1 : P.rx + P.rw - 1) - P.rx;
  const int v0 = (y0 > P.ry ? y0 : P.ry) - P.ry;
  const int v1 = (y1 < P.ry + P.rh - 1 ? y1 : P.ry + P.rh - 1) - P.ry;
  if (u0 > u1 || v0 > v1)
    return false;
  axis_span(P, u0, u1, P.rw, P.ow, &ab[0], &ab[2]);
  axis_span(P, v0, v1, P.rh, P.oh, &ab[1], &ab[3]);
  return true;
}

/* The rows and bytes of each source plane that fetch() reads for the
 * oriented source pixels ab: luma (or packed pixels) under them, chroma
 * one sample beyond on each side (the upsampling filter's reach); byte0
 * rounded down and the length up to the plane's load width. Returns the
 * number of planes. */
ZC_HD inline int
tile_spans(const Plan &P, const TileGeom &g, const int ab[4], PlaneSpan s[3])
{
  int xa, ya, xb, yb;
  orient_to_source(P, ab[0], ab[1], &xa, &ya);
  orient_to_source(P, ab[2], ab[3], &xb, &yb);
  const int x0 = xa < xb ? xa : xb, y0 = ya < yb ? ya : yb;
  const int x1 = xa < xb ? xb : xa, y1 = ya < yb ? yb : ya;
  const FmtInfo &f = P.si;
  int n = 1;
  if (f.kind == kPackedRgb || f.kind == kGray) {
    s[0] = {y0, y1 - y0 + 1, x0 * f.pstride, (x1 - x0 + 1) * f.pstride};
  } else {
    const int cw = (P.sw + (1 << f.ws) - 1) >> f.ws;
    const int chh = (P.sh + (1 << f.hs) - 1) >> f.hs;
    int k0 = (x0 >> f.ws) - 1, k1 = (x1 >> f.ws) + 1;
    k0 = k0 < 0 ? 0 : k0;
    k1 = k1 > cw - 1 ? cw - 1 : k1;
    if (f.kind == kPacked422) {
      s[0] = {y0, y1 - y0 + 1, k0 * 4, (k1 - k0 + 1) * 4};
    } else {
      int c0 = (y0 >> f.hs) - 1, c1 = (y1 >> f.hs) + 1;
      c0 = c0 < 0 ? 0 : c0;
      c1 = c1 > chh - 1 ? chh - 1 : c1;
      s[0] = {y0, y1 - y0 + 1, x0 * f.pstride, (x1 - x0 + 1) * f.pstride};
      const int cb = f.kind == kSemiYuv ? 2 * f.pstride : f.pstride;
      s[1] = {c0, c1 - c0 + 1, k0 * cb, (k1 - k0 + 1) * cb};
      s[2] = s[1];
      n = f.kind == kSemiYuv ? 2 : 3;
    }
  }
  for (int p = 0; p < n; p++) {
    const int v = g.vec[p];
    const int end = s[p].byte0 + s[p].bytes;
    s[p].byte0 -= s[p].byte0 % v;
    s[p].bytes = (end - s[p].byte0 + v - 1) / v * v;
  }
  return n;
}

/* A tile's staged copy of the source (shared memory on the GPU). */
struct TileSrc
{
  static constexpr bool kTile = true, kDecoded = false;
  const uint8_t *base[3];
  int pitch[3], row0[3], byte0[3];

  ZC_HD const uint8_t *
  at(int plane, int row, size_t byte) const
  {
    return base[plane] + (size_t)(row - row0[plane]) * pitch[plane]
           + ((int)byte - byte0[plane]);
  }
};

/* A filtered tile's oriented source pixels, decoded: 4 samples of 16 bits
 * per pixel (two 32-bit words), from (a0, b0) on, `pitch` pixels a row;
 * and its tap tables, from destination pixel (x0, y0) on. */
struct DecodedSrc
{
  static constexpr bool kTile = true, kDecoded = true;
  uint32_t *dec;
  int a0, b0, pitch;
  int32_t *cols, *rows;
  int x0, y0, cs, rs;
  int rx, ry; /* the plan's destination rectangle origin */
  int narrow; /* TileGeom::narrow */

  ZC_HD const int32_t *
  col_taps(int u) const
  {
    return cols + (size_t)(u + rx - x0) * cs;
  }

  ZC_HD const int32_t *
  row_taps(int v) const
  {
    return rows + (size_t)(v + ry - y0) * rs;
  }

  ZC_HD Px
  px(int a, int b) const
  {
    const uint32_t *p = dec + 2 * ((size_t)(b - b0) * pitch + (a - a0));
    const uint32_t w0 = p[0], w1 = p[1];
    return Px{{w0 & 0xffffu, w0 >> 16, w1 & 0xffffu, w1 >> 16}};
  }

  ZC_HD void
  store(int a, int b, const Px &s) const
  {
    uint32_t *p = dec + 2 * ((size_t)(b - b0) * pitch + (a - a0));
    p[0] = s.c[0] | (s.c[1] << 16);
    p[1] = s.c[2] | (s.c[3] << 16);
  }
};

/* Points ds's tap tables into the tile's memory (smem) for tile (tx, ty). */
ZC_HD inline void
tile_tables(const Plan &P, const TileGeom &g, int tx, int ty, uint8_t *smem,
            DecodedSrc *ds)
{
  ds->cols = reinterpret_cast<int32_t *>(smem + g.tab_offset);
  ds->rows = ds->cols + (size_t)g.tile_bx * (1 << P.di.ws) * g.tab_cs;
  ds->cs = g.tab_cs;
  ds->rs = g.tab_rs;
  ds->x0 = tx * g.tile_bx * (1 << P.di.ws);
  ds->y0 = ty * g.tile_by * (1 << P.di.hs);
  ds->rx = P.rx;
  ds->ry = P.ry;
  ds->narrow = g.narrow;
}

/* Entries in a tile's tap tables: its output columns, then its rows. */
ZC_HD inline int
tile_table_entries(const Plan &P, const TileGeom &g)
{
  return g.tile_bx * (1 << P.di.ws) + g.tile_by * (1 << P.di.hs);
}

/* Fills entry i of ds's tables (a column, then the rows); an entry whose
 * pixel lies outside the destination rectangle is never read. */
ZC_HD inline void
fill_tile_entry(const Plan &P, const TileGeom &g, const DecodedSrc &ds, int i)
{
  const int ncols = g.tile_bx * (1 << P.di.ws);
  if (i < ncols) {
    const int u = ds.x0 + i - P.rx;
    if (u >= 0 && u < P.rw)
      fill_filter_taps(P, u, P.rw, P.ow, ds.cols + (size_t)i * ds.cs);
  } else {
    const int v = ds.y0 + (i - ncols) - P.ry;
    if (v >= 0 && v < P.rh)
      fill_filter_taps(P, v, P.rh, P.oh, ds.rows + (size_t)(i - ncols) * ds.rs);
  }
}

/* Chooses the tiling for a plan (host only, zcconvert-tiling.cpp): false
 * where it does not apply or no tile fits in smem_limit bytes. */
bool tile_geom(const Plan &P, int smem_limit, TileGeom *g);

enum PlanStatus { kPlanOk, kPlanInvalid, kPlanNotSupported };

/* Validates the request and fills the plan (host only,
 * zcconvert-plan.cpp). */
PlanStatus build_plan(const FrameDesc &src, const FrameDesc &dst,
                      const ConvertParams &p, Plan *plan);

} // namespace detail
} // namespace zc

#endif /* GST_ZC_KERNELS_CONVERT_COMMON_H */

/* gst-zerocopy: the point effects on destination code values, shared by the
 * CPU and CUDA conversions.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Private to kernels/. The effects (ConvertParams brightness, contrast,
 * saturation, hue, grayscale, gamma, invert) are defined, as the GStreamer
 * elements define them, on the code values of a frame: here those of the
 * destination, once the conversion has produced them, just before they are
 * stored. zceffects-plan.cpp builds an EffectsPlan on the host;
 * convert_block() calls effects_pixel() on each destination pixel and
 * effects_chroma() on each destination chroma sample (once per sample of a
 * subsampled frame, as videobalance transforms each sample of the chroma
 * planes once).
 * Integer arithmetic only at apply time, so the backends agree bit for bit.
 *
 * The stages, in this order (an element chain "videobalance ! gamma", then
 * the invert):
 *
 * 1. videobalance (GStreamer 1.22 gstvideobalance.c), on 8-bit code values
 *    whatever the range and matrix of the frame:
 *      luma    Y' = clamp(rint(16 + ((Y - 16) contrast + 255 brightness)))
 *      chroma  with i = U - 128, j = V - 128, c = cos(pi hue),
 *              s = sin(pi hue):
 *              U' = clamp(rint(128 + (i c + j s) saturation))
 *              V' = clamp(rint(128 + (-i s + j c) saturation))
 *    clamps to 0..255; rint rounds half to even. grayscale is saturation 0
 *    (U' = V' = 128). The luma table is computed in double on the host as
 *    videobalance computes it (bit-exact); the chroma transform is applied
 *    in 40-bit fixed point with sums within 2^-30 of a half rounded as
 *    exact halves (ties to even): bit-exact with the element for every
 *    setting tried, and at most 1 off in any case.
 * 2. gamma (gstgamma.c): Y' = floor(255 (Y / 255)^(1 / gamma) + 0.5), a
 *    table on the luma code value; chroma untouched.
 *    With both stages set, the luma goes through both tables in turn.
 * 3. invert, of R'G'B' (255 - v): on a Y'CbCr or GRAY destination its
 *    Y'CbCr equivalent in the destination's range, Y' = (black + white) -
 *    Y (255 - Y full range, 251 - Y limited range, clamped), C' = 256 - C
 *    (clamped to 255; 128 stays 128).
 *
 * R'G'B' destinations (all 8-bit), as both elements do it: each stage that
 * is set takes the pixel to Y'CbCr with BT.601 limited-range integer
 * matrices (whatever the caps say), floor shifts,
 *    Y = (66 R + 129 G + 25 B + 4096) >> 8
 *    U = (-38 R - 74 G + 112 B + 32768) >> 8
 *    V = (112 R - 94 G - 18 B + 32768) >> 8
 * (each clamped to 0..255: never needed, these stay within 16..239),
 * applies its tables, and comes back with
 *    R = (298 Y + 409 V - 57068) >> 8
 *    G = (298 Y - 100 U - 208 V + 34707) >> 8
 *    B = (298 Y + 516 U - 70870) >> 8
 * clamped to 0..255: videobalance then gamma are two round trips, exactly
 * the chain "videobalance ! gamma". Then invert: 255 - v.
 *
 * Deeper destinations (GRAY16_LE, P010_10LE, I420_10LE; values at 16 bits):
 *  - luma: the curve of stages 1 and 2 without their roundings, F(k) =
 *    255 (clamp(16 + (k - 16) contrast + 255 brightness) / 255)^(1/gamma),
 *    sampled at the 8-bit codes k as 257 F(k) (the 16-bit value of code k
 *    is 257 k) and joined by straight lines, so 16-bit values between two
 *    8-bit codes land between their results. Exact for brightness and
 *    contrast (a straight line); for gamma above 1 the chords sag below the
 *    curve near black (gamma 2.2: up to about 5 8-bit codes below 1/255);
 *  - chroma (10 bits in every format here): stage 1 on the 10-bit code
 *    values (centre 512, clamp 0..1023), the result widened back as
 *    (v << 6) | (v >> 4);
 *  - invert: Y' = K - Y with K = 65535 (full range) or 64319 (limited,
 *    (16 + 235) * 256 + 63), C' = 1024 - C on the 10-bit chroma (clamped to
 *    1023): 1023 - Y, 1004 - Y and 1024 - C exactly on 10-bit values.
 */
#ifndef GST_ZC_KERNELS_EFFECTS_COMMON_H
#define GST_ZC_KERNELS_EFFECTS_COMMON_H

#include <cstdint>

#include "zcconvert.h"

#ifndef ZC_HD
#ifdef __CUDACC__
#define ZC_HD __host__ __device__
#else
#define ZC_HD
#endif
#endif

namespace zc {
namespace detail {

/* Chroma coefficients: fractional bits, and how close to a half a sum must
 * be to count as one (the fixed-point error is below 2^-31 code values, a
 * double's in videobalance below 2^-40). */
constexpr int kFxShift = 40;
constexpr int64_t kFxTie = (int64_t)1 << 10;

struct EffectsPlan
{
  uint8_t active;     /* anything to do */
  uint8_t balance;    /* stage 1 (brightness, contrast, saturation, hue,
                         grayscale) */
  uint8_t gamma;      /* stage 2 */
  uint8_t invert;     /* stage 3 */
  uint8_t yuv;        /* destination is Y'CbCr or GRAY (else R'G'B') */
  uint8_t deep;       /* destination values at 16 bits */
  int32_t inv_y;      /* invert: Y' = inv_y - Y */
  int64_t cm[2][2];   /* (U', V') = centre + cm (i, j) / 2^kFxShift */
  uint8_t bal_y[256]; /* stage 1 luma table (identity when not set) */
  uint8_t gam_y[256]; /* stage 2 table (identity when not set) */
  uint16_t y16[256];  /* deep luma: 257 F(k) */
};

/* Fills `E` for a destination of the given kind (host only,
 * zceffects-plan.cpp). `p` must have passed the range checks of
 * build_plan(). */
void effects_build(const ConvertParams &p, bool dst_yuv, bool dst_deep,
                   bool dst_full_range, EffectsPlan *E);

ZC_HD inline int32_t
fx_clamp(int32_t v, int32_t maxv)
{
  return v < 0 ? 0 : (v > maxv ? maxv : v);
}

/* rint(s / 2^kFxShift), ties (within kFxTie) to even. */
ZC_HD inline int32_t
fx_round(int64_t s)
{
  const int64_t q = s >> kFxShift; /* floor: arithmetic shift */
  const int64_t d
      = s - q * ((int64_t)1 << kFxShift) - ((int64_t)1 << (kFxShift - 1));
  if (d > kFxTie)
    return (int32_t)(q + 1);
  if (d < -kFxTie)
    return (int32_t)q;
  return (int32_t)(q + (q & 1));
}

/* Stage 1 on one chroma pair of code values centred on `centre` (128 or
 * 512), clamped to 0..2 centre - 1. */
ZC_HD inline void
fx_balance_chroma(const EffectsPlan &E, int32_t centre, int32_t *u, int32_t *v)
{
  const int64_t i = *u - centre, j = *v - centre;
  const int32_t maxv = 2 * centre - 1;
  *u = fx_clamp(centre + fx_round(E.cm[0][0] * i + E.cm[0][1] * j), maxv);
  *v = fx_clamp(centre + fx_round(E.cm[1][0] * i + E.cm[1][1] * j), maxv);
}

/* One round trip of an R'G'B' pixel through videobalance's and gamma's
 * integer BT.601 matrices, `ytab` on the luma, stage 1 on the chroma when
 * `chroma`. */
ZC_HD inline void
fx_rgb_round_trip(const EffectsPlan &E, const uint8_t *ytab, bool chroma,
                  uint32_t c[3])
{
  const int32_t r = (int32_t)c[0], g = (int32_t)c[1], b = (int32_t)c[2];
  /* >> on a negative value: arithmetic (floor), as in GStreamer */
  int32_t y = fx_clamp((66 * r + 129 * g + 25 * b + 4096) >> 8, 255);
  int32_t u = fx_clamp((-38 * r - 74 * g + 112 * b + 32768) >> 8, 255);
  int32_t v = fx_clamp((112 * r - 94 * g - 18 * b + 32768) >> 8, 255);
  y = ytab[y];
  if (chroma)
    fx_balance_chroma(E, 128, &u, &v);
  c[0] = (uint32_t)fx_clamp((298 * y + 409 * v - 57068) >> 8, 255);
  c[1] = (uint32_t)fx_clamp((298 * y - 100 * u - 208 * v + 34707) >> 8, 255);
  c[2] = (uint32_t)fx_clamp((298 * y + 516 * u - 70870) >> 8, 255);
}

/* The luma of a Y'CbCr or GRAY destination pixel, at its unpack depth. */
ZC_HD inline uint32_t
effects_luma(const EffectsPlan &E, uint32_t y)
{
  if (!E.deep) {
    y = E.gam_y[E.bal_y[y & 0xffu]];
  } else if (E.balance || E.gamma) {
    const uint32_t k = y / 257, f = y - k * 257;
    y = E.y16[k];
    if (f) {
      const int32_t d = (int32_t)E.y16[k + 1] - (int32_t)y;
      const int32_t t = d * (int32_t)f;
      y = (uint32_t)((int32_t)y
                     + (t >= 0 ? (t + 128) / 257 : -((-t + 128) / 257)));
    }
  }
  if (E.invert)
    y = (uint32_t)(E.inv_y - (int32_t)y < 0 ? 0 : E.inv_y - (int32_t)y);
  return y;
}

/* The effects on one destination pixel before it is stored (c: Y/R, U/G,
 * V/B at the destination's unpack depth): all of them on R'G'B', the luma
 * part on Y'CbCr and GRAY (the chroma goes through effects_chroma()). */
ZC_HD inline void
effects_pixel(const EffectsPlan &E, uint32_t c[3])
{
  if (E.yuv) {
    c[0] = effects_luma(E, c[0]);
    return;
  }
  if (E.balance)
    fx_rgb_round_trip(E, E.bal_y, true, c);
  if (E.gamma)
    fx_rgb_round_trip(E, E.gam_y, false, c);
  if (E.invert) {
    for (int i = 0; i < 3; i++)
      c[i] = 255u - (c[i] & 0xffu);
  }
}

/* The effects on one destination chroma sample (Y'CbCr destinations),
 * before it is stored, at the destination's unpack depth. */
ZC_HD inline void
effects_chroma(const EffectsPlan &E, uint32_t *u, uint32_t *v)
{
  if (!E.balance && !E.invert)
    return;
  const int shift = E.deep ? 6 : 0;
  const int32_t centre = E.deep ? 512 : 128;
  int32_t cu = (int32_t)(*u >> shift), cv = (int32_t)(*v >> shift);
  if (E.balance)
    fx_balance_chroma(E, centre, &cu, &cv);
  if (E.invert) {
    cu = fx_clamp(2 * centre - cu, 2 * centre - 1);
    cv = fx_clamp(2 * centre - cv, 2 * centre - 1);
  }
  if (E.deep) {
    *u = ((uint32_t)cu << 6) | ((uint32_t)cu >> 4);
    *v = ((uint32_t)cv << 6) | ((uint32_t)cv >> 4);
  } else {
    *u = (uint32_t)cu;
    *v = (uint32_t)cv;
  }
}

} // namespace detail
} // namespace zc

#endif /* GST_ZC_KERNELS_EFFECTS_COMMON_H */

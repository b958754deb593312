/* gst-zerocopy: the host side of the point effects (zceffects-common.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The tables are computed in double with the very expressions of
 * GStreamer 1.22's videobalance (gst_video_balance_update_tables()) and
 * gamma (gst_gamma_calculate_tables()) elements, so that they are theirs
 * bit for bit.
 */
#include "zceffects-common.h"

#include <cmath>
#include <cstring>

namespace zc {
namespace detail {

void
effects_build(const ConvertParams &p, bool dst_yuv, bool dst_deep,
              bool dst_full_range, EffectsPlan *E)
{
  std::memset(E, 0, sizeof(*E));
  E->balance = p.brightness != 0.0 || p.contrast != 1.0 || p.saturation != 1.0
               || p.hue != 0.0 || p.grayscale;
  E->gamma = p.gamma != 1.0;
  E->invert = p.invert;
  E->active = E->balance || E->gamma || E->invert;
  E->yuv = dst_yuv;
  E->deep = dst_deep;
  E->inv_y = dst_deep ? (dst_full_range ? 65535 : (16 + 235) * 256 + 63)
                      : (dst_full_range ? 255 : 251);

  const double contrast = p.contrast, brightness = p.brightness;
  const double exponent = 1.0 / (double)p.gamma;
  for (int i = 0; i < 256; i++) {
    /* videobalance's tabley */
    double y = 16 + ((i - 16) * contrast + brightness * 255);
    y = y < 0 ? 0 : (y > 255 ? 255 : y);
    E->bal_y[i] = E->balance ? (uint8_t)std::rint(y) : (uint8_t)i;
    /* gamma's gamma_table */
    E->gam_y[i]
        = E->gamma
              ? (uint8_t)std::floor(255.0 * std::pow(i / 255.0, exponent) + 0.5)
              : (uint8_t)i;
    /* the same curve without the roundings, for 16-bit values */
    const double f = E->balance ? y : (double)i;
    const double g = E->gamma ? 255.0 * std::pow(f / 255.0, exponent) : f;
    const long q = std::lrint(257.0 * g);
    E->y16[i] = (uint16_t)(q < 0 ? 0 : (q > 65535 ? 65535 : q));
  }

  /* videobalance: u = 128 + (i cos + j sin) sat, v = 128 + (-i sin +
   * j cos) sat; grayscale is saturation 0 */
  const double pi = 3.14159265358979323846; /* G_PI */
  const double hc = std::cos(pi * p.hue), hs = std::sin(pi * p.hue);
  const double sat = p.grayscale ? 0.0 : (double)p.saturation;
  const double one = (double)((int64_t)1 << kFxShift);
  E->cm[0][0] = std::llrint(hc * sat * one);
  E->cm[0][1] = std::llrint(hs * sat * one);
  E->cm[1][0] = std::llrint(-hs * sat * one);
  E->cm[1][1] = std::llrint(hc * sat * one);
}

} // namespace detail
} // namespace zc

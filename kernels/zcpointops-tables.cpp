/* gst-zerocopy: the lookup tables of the point operations (zcpointops.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host code that both backends' callers use: apply_lut_cpu*() and
 * apply_lut_cuda*() take these tables as they are. Reads and writes no
 * pixel.
 */
#include "zcpointops.h"

#include <cmath>
#include <cstring>

namespace zc {

void
build_point_lut(const PointParams &p, uint8_t lut[256])
{
  for (int v = 0; v < 256; v++) {
    double x = v / 255.0;
    double y = (x - 0.5) * p.contrast + 0.5 + p.brightness;
    /* Written so that a NaN lands on 0 rather than passing through. */
    y = (y > 0.0) ? y : 0.0;
    y = (y < 1.0) ? y : 1.0;
    y = std::pow(y, 1.0 / p.gamma);
    /* Only reachable with gamma <= 0 or NaN (pow then gives inf or NaN):
     * keep the cast below defined. */
    y = (y > 0.0) ? y : 0.0;
    y = (y < 1.0) ? y : 1.0;
    if (p.invert)
      y = 1.0 - y;
    lut[v] = (uint8_t)std::floor(y * 255.0 + 0.5);
  }
}

void
build_identity_lut(uint8_t lut[256])
{
  for (int v = 0; v < 256; v++)
    lut[v] = (uint8_t)v;
}

void
build_invert_lut(uint8_t lut[256])
{
  for (int v = 0; v < 256; v++)
    lut[v] = (uint8_t)(255 - v);
}

bool
point_params_are_identity(const PointParams &p)
{
  uint8_t lut[256], ident[256];

  build_point_lut(p, lut);
  build_identity_lut(ident);
  return std::memcmp(lut, ident, sizeof(lut)) == 0;
}

} // namespace zc

/* gst-zerocopy: the format helpers of zcconvert.h (planes, row sizes,
 * names), read from the one format table (zcformats.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Both backends and the library's GPU passes size planes through these;
 * they sit in an object of their own so that a caller needing only them
 * links no conversion code.
 */
#include "zcconvert.h"
#include "zcconvert-common.h"

namespace zc {

namespace {

const char *const kNames[kNumPixFmts] = {
    ZC_FORMATS(ZC_FORMAT_X_STRING, ZC_FORMAT_X_STRING)};

} // namespace

int
pixfmt_n_planes(PixFmt fmt)
{
  if (!detail::fmt_valid(fmt))
    return 0;
  const detail::FmtInfo f = detail::fmt_info(fmt);
  switch (f.kind) {
  case detail::kPlanarYuv: return 3;
  case detail::kSemiYuv: return 2;
  default: return 1;
  }
}

size_t
pixfmt_plane_row_bytes(PixFmt fmt, int plane, int width)
{
  if (!detail::fmt_valid(fmt) || plane < 0 || plane >= pixfmt_n_planes(fmt)
      || width <= 0)
    return 0;
  const detail::FmtInfo f = detail::fmt_info(fmt);
  const size_t cw = (size_t)((width + (1 << f.ws) - 1) >> f.ws);
  switch (f.kind) {
  case detail::kPacked422: return cw * 4;
  case detail::kSemiYuv:
    return plane == 0 ? (size_t)width * f.pstride : cw * 2 * f.pstride;
  case detail::kPlanarYuv:
    return plane == 0 ? (size_t)width * f.pstride : cw * f.pstride;
  default: return (size_t)width * f.pstride;
  }
}

int
pixfmt_plane_rows(PixFmt fmt, int plane, int height)
{
  if (!detail::fmt_valid(fmt) || plane < 0 || plane >= pixfmt_n_planes(fmt)
      || height <= 0)
    return 0;
  const detail::FmtInfo f = detail::fmt_info(fmt);
  return plane == 0 ? height : (height + (1 << f.hs) - 1) >> f.hs;
}

const char *
pixfmt_name(PixFmt fmt)
{
  return detail::fmt_valid(fmt) ? kNames[(int)fmt] : "unknown";
}

} // namespace zc

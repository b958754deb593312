/* gst-zerocopy: the video formats, in one list.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Everything that names or describes the formats is made from this list:
 * zc::PixFmt and its names, the kernels' plane table (fmt_info()), the
 * caps of every pad (GST_ZC_FORMATS), the GstVideoFormat mapping, the check
 * of zckernel.cuh's ZC_FORMAT_* constants and the tests' lists. A format is
 * added here, with its per-pixel code in zcconvert-common.h, and nowhere
 * else (HACKING.md). tests/check/libs/zcformats.cpp compares every row with
 * GstVideoInfo.
 *
 * ZC_FORMATS(X, LAST) expands X (LAST for the last row) once per format:
 *   name     GStreamer's name: GST_VIDEO_FORMAT_<name>, caps format=<name>,
 *            zc::PixFmt::<name>, ZC_FORMAT_<name>
 *   kind     the layout (zcconvert-common.h, FmtKind)
 *   bits     the depth samples are unpacked to: 8 or 16
 *   pstride  bytes per pixel (packed R'G'B', GRAY) or per sample
 *   ws, hs   log2 of the chroma subsampling, horizontal and vertical
 *   wide10   where 10-bit samples keep their bits (Wide10)
 *   o0..o3   component places, as FmtKind says for the kind
 * The order is zc::PixFmt's: R'G'B' first, then GRAY, then Y'CbCr (tests
 * rely on it). No GStreamer here: kernels/ builds without it. */
#ifndef GST_ZC_KERNELS_FORMATS_H
#define GST_ZC_KERNELS_FORMATS_H

// clang-format off
#define ZC_FORMATS(X, LAST) \
  X(RGBA,      kPackedRgb, 8,  4, 0, 0, kNot10,  0,  1,  2,  3) \
  X(BGRA,      kPackedRgb, 8,  4, 0, 0, kNot10,  2,  1,  0,  3) \
  X(RGBx,      kPackedRgb, 8,  4, 0, 0, kNot10,  0,  1,  2,  3) \
  X(BGRx,      kPackedRgb, 8,  4, 0, 0, kNot10,  2,  1,  0,  3) \
  X(ARGB,      kPackedRgb, 8,  4, 0, 0, kNot10,  1,  2,  3,  0) \
  X(ABGR,      kPackedRgb, 8,  4, 0, 0, kNot10,  3,  2,  1,  0) \
  X(xRGB,      kPackedRgb, 8,  4, 0, 0, kNot10,  1,  2,  3,  0) \
  X(xBGR,      kPackedRgb, 8,  4, 0, 0, kNot10,  3,  2,  1,  0) \
  X(RGB,       kPackedRgb, 8,  3, 0, 0, kNot10,  0,  1,  2, -1) \
  X(BGR,       kPackedRgb, 8,  3, 0, 0, kNot10,  2,  1,  0, -1) \
  X(GRAY8,     kGray,      8,  1, 0, 0, kNot10,  0,  0,  0,  0) \
  X(GRAY16_LE, kGray,      16, 2, 0, 0, kNot10,  0,  0,  0,  0) \
  X(NV12,      kSemiYuv,   8,  1, 1, 1, kNot10,  0,  0,  1,  0) \
  X(NV21,      kSemiYuv,   8,  1, 1, 1, kNot10,  0,  1,  0,  0) \
  X(I420,      kPlanarYuv, 8,  1, 1, 1, kNot10,  0,  1,  2,  0) \
  X(YV12,      kPlanarYuv, 8,  1, 1, 1, kNot10,  0,  2,  1,  0) \
  X(Y42B,      kPlanarYuv, 8,  1, 1, 0, kNot10,  0,  1,  2,  0) \
  X(Y444,      kPlanarYuv, 8,  1, 0, 0, kNot10,  0,  1,  2,  0) \
  X(YUY2,      kPacked422, 8,  2, 1, 0, kNot10,  0,  1,  2,  3) \
  X(UYVY,      kPacked422, 8,  2, 1, 0, kNot10,  1,  0,  3,  2) \
  X(P010_10LE, kSemiYuv,   16, 2, 1, 1, k10Msb,  0,  0,  1,  0) \
  LAST(I420_10LE, kPlanarYuv, 16, 2, 1, 1, k10Lsb, 0,  1,  2,  0)
// clang-format on

/* Helpers for the common expansions */
#define ZC_FORMAT_X_NAME(name, ...) name,
#define ZC_FORMAT_X_COUNT(...) +1
#define ZC_FORMAT_X_STRING(name, ...) #name,
/* "RGBA, BGRA, ..., I420_10LE": ZC_FORMATS(ZC_FORMAT_X_LIST, ZC_FORMAT_X_LIST_LAST) */
#define ZC_FORMAT_X_LIST(name, ...) #name ", "
#define ZC_FORMAT_X_LIST_LAST(name, ...) #name

#endif /* GST_ZC_KERNELS_FORMATS_H */

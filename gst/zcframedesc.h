/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A GStreamer video frame as the kernels describe it (zc::FrameDesc): the
 * one mapping of format, matrix and range, header-only so that the plugin
 * and the bench programs share it.
 */
#pragma once

#include <gst/video/video.h>

#include <zcconvert.h>

namespace zc_gst {

/* The kernels' format of @f; false for one they do not have */
inline bool
pixfmt_from_video_format (GstVideoFormat f, zc::PixFmt * out)
{
  switch (f) {
#define ZC_MAP(name, ...) case GST_VIDEO_FORMAT_##name: \
      *out = zc::PixFmt::name; return true;
      ZC_FORMATS (ZC_MAP, ZC_MAP)
#undef ZC_MAP
    default:
      return false;
  }
}

/* The frame description of @info (planes not set); false for a format the
 * kernels do not have */
inline bool
frame_desc_from_info (const GstVideoInfo * info, zc::FrameDesc * d)
{
  if (!pixfmt_from_video_format (GST_VIDEO_INFO_FORMAT (info), &d->fmt))
    return false;
  d->width = GST_VIDEO_INFO_WIDTH (info);
  d->height = GST_VIDEO_INFO_HEIGHT (info);
  switch (info->colorimetry.matrix) {
    case GST_VIDEO_COLOR_MATRIX_BT709:
    case GST_VIDEO_COLOR_MATRIX_SMPTE240M:
      /* 240M converts as BT.709, the nearest matrix the kernel has */
      d->matrix = zc::Matrix::BT709;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT2020:
      d->matrix = zc::Matrix::BT2020;
      break;
    default:
      /* BT.601; RGB, FCC, unknown: BT.601, as GStreamer's converter
       * defaults */
      d->matrix = zc::Matrix::BT601;
      break;
  }
  d->full_range = info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255;
  return true;
}

/* The same with the planes of a frame laid out as @info at @data (a buffer
 * extracted or allocated whole) */
inline bool
frame_desc_at (const GstVideoInfo * info, guint8 * data, zc::FrameDesc * d)
{
  if (!frame_desc_from_info (info, d))
    return false;
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (info) && p < 3; p++) {
    d->planes[p] = data + GST_VIDEO_INFO_PLANE_OFFSET (info, p);
    d->strides[p] = (size_t) GST_VIDEO_INFO_PLANE_STRIDE (info, p);
  }
  return true;
}

/* The same with the planes of a mapped frame */
inline bool
frame_desc_of_frame (const GstVideoFrame * f, zc::FrameDesc * d)
{
  if (!frame_desc_from_info (&f->info, d))
    return false;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (f) && p < 3; p++) {
    d->planes[p] = (uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (f, p);
    d->strides[p] = (size_t) GST_VIDEO_FRAME_PLANE_STRIDE (f, p);
  }
  return true;
}

}  /* namespace zc_gst */

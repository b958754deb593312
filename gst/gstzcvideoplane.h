/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Plane geometry as kernels and copies see it. Inline, in a header of its
 * own: zcfilter's frame plan (zcfilterplan.cpp), which tests build without
 * the plugin, needs it as much as the copies and the executors do.
 */
#pragma once

#include <gst/video/video.h>

#include "gstzccompat.h"

G_BEGIN_DECLS

/* Plane @plane of @buf: from its video meta if any, else from @info */
static inline void
gst_zc_video_plane_layout (GstBuffer * buf, const GstVideoInfo * info,
    guint plane, gsize * offset, gsize * stride)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  if (meta) {
    *offset = meta->offset[plane];
    *stride = (gsize) meta->stride[plane];
  } else {
    *offset = GST_VIDEO_INFO_PLANE_OFFSET (info, plane);
    *stride = (gsize) GST_VIDEO_INFO_PLANE_STRIDE (info, plane);
  }
}

static inline guint32
gst_zc_video_plane_row_bytes (const GstVideoInfo * info, guint plane)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  gint comp[GST_VIDEO_MAX_COMPONENTS];
  gst_video_format_info_component (finfo, plane, comp);
  guint w = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH (finfo, comp[0],
      GST_VIDEO_INFO_WIDTH (info));
  /* Packed 4:2:2 rows hold whole macropixels: an odd width ends with a
   * Y0 U Y1 V group whose Y1 is padding */
  if (GST_VIDEO_FORMAT_INFO_W_SUB (finfo, 1) && GST_VIDEO_INFO_N_PLANES (info) == 1)
    w = GST_ROUND_UP_2 (w);
  return w * GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, comp[0]);
}

static inline guint32
gst_zc_video_plane_rows (const GstVideoInfo * info, guint plane)
{
  gint comp[GST_VIDEO_MAX_COMPONENTS];
  gst_video_format_info_component (info->finfo, plane, comp);
  return GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (info->finfo, comp[0],
      GST_VIDEO_INFO_HEIGHT (info));
}

G_END_DECLS

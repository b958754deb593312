/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the plugin uses from GStreamer releases newer than the oldest it
 * builds against (1.16), provided here for the older ones. Each entry does
 * what the newer GStreamer does; none changes what the elements do.
 * Included by gstzcbasetransform.h, so every element file has it.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

#if !GST_CHECK_VERSION(1, 20, 0)
/* 1.20 added per-element registration functions, so that a plugin (or a
 * static build) can register its elements one by one. Before it, the same
 * function is ours to define: gst_element_register_<name> (plugin). */
#define GST_ELEMENT_REGISTER_DECLARE(element) \
  gboolean gst_element_register_##element (GstPlugin * plugin);
#define GST_ELEMENT_REGISTER_DEFINE(element, name, rank, type) \
  gboolean gst_element_register_##element (GstPlugin * plugin) \
  { \
    return gst_element_register (plugin, name, rank, type); \
  }
#define GST_ELEMENT_REGISTER(element, plugin) \
  gst_element_register_##element (plugin)

/* 1.20: caps features holding one feature */
static inline GstCapsFeatures *
gst_caps_features_new_single (const gchar * feature)
{
  return gst_caps_features_new (feature, NULL);
}
#endif

#if !GST_CHECK_VERSION(1, 18, 0)
/* 1.18 lets a plugin mark the types of its properties and base classes for
 * the documentation cache (hotdoc); it has no effect at run time, so
 * before 1.18 there is nothing to mark. */
typedef enum
{
  GST_PLUGIN_API_FLAG_IGNORE_ENUM_MEMBERS = (1 << 0),
} GstPluginAPIFlags;

static inline void
gst_type_mark_as_plugin_api (GType type, GstPluginAPIFlags flags)
{
  (void) type;
  (void) flags;
}

/* 1.18: the components of @finfo stored in @plane, in component order,
 * then -1 up to GST_VIDEO_MAX_COMPONENTS. (1.16's format info has the
 * plane of each component, which is all this needs.) */
static inline void
gst_video_format_info_component (const GstVideoFormatInfo * finfo,
    guint plane, gint components[GST_VIDEO_MAX_COMPONENTS])
{
  guint n = 0;

  for (guint c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); c++) {
    if (GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) == plane)
      components[n++] = (gint) c;
  }
  for (; n < GST_VIDEO_MAX_COMPONENTS; n++)
    components[n] = -1;
}
#endif

G_END_DECLS

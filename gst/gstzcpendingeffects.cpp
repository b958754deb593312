/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcpendingeffects.h"

#include <new>

GType
gst_zc_pending_effects_meta_api_get_type (void)
{
  static GType type = 0;
  static const gchar *tags[] = {
    GST_META_TAG_VIDEO_STR, GST_META_TAG_VIDEO_COLORSPACE_STR, NULL
  };
  if (g_once_init_enter (&type)) {
    GType t = gst_meta_api_type_register ("GstZcPendingEffectsMetaAPI", tags);
    g_once_init_leave (&type, t);
  }
  return type;
}

static gboolean
pending_effects_meta_init (GstMeta * meta, gpointer, GstBuffer *)
{
  auto *m = reinterpret_cast < GstZcPendingEffectsMeta * >(meta);
  m->format = GST_VIDEO_FORMAT_UNKNOWN;
  m->width = m->height = 0;
  m->n_steps = 0;
  for (auto & s : m->steps)
    new (&s) zc::ConvertParams ();
  return TRUE;
}

static const GstMetaInfo *
pending_effects_meta_get_info (void)
{
  static const GstMetaInfo *info = NULL;
  if (g_once_init_enter (&info)) {
    /* no transform function: a copy of the frame does not carry the steps,
     * they belong to these very bytes */
    const GstMetaInfo *i =
        gst_meta_register (GST_ZC_PENDING_EFFECTS_META_API_TYPE,
        "GstZcPendingEffectsMeta", sizeof (GstZcPendingEffectsMeta),
        pending_effects_meta_init, NULL, NULL);
    g_once_init_leave (&info, i);
  }
  return info;
}

GstZcPendingEffectsMeta *
gst_buffer_get_zc_pending_effects_meta (GstBuffer * buffer)
{
  return reinterpret_cast < GstZcPendingEffectsMeta * >
      (gst_buffer_get_meta (buffer, GST_ZC_PENDING_EFFECTS_META_API_TYPE));
}

gboolean
gst_zc_pending_effects_meta_takes (const GstZcPendingEffectsMeta * meta,
    const GstVideoInfo * info)
{
  return meta->n_steps + 1 < (guint) zc::kMaxEffectSteps &&
      meta->format == GST_VIDEO_INFO_FORMAT (info) &&
      meta->width == GST_VIDEO_INFO_WIDTH (info) &&
      meta->height == GST_VIDEO_INFO_HEIGHT (info);
}

gboolean
gst_buffer_add_zc_pending_effects_step (GstBuffer * buffer,
    const GstVideoInfo * info, const zc::ConvertParams & step)
{
  g_return_val_if_fail (gst_buffer_is_writable (buffer), FALSE);
  GstZcPendingEffectsMeta *meta =
      gst_buffer_get_zc_pending_effects_meta (buffer);
  if (!meta) {
    meta = reinterpret_cast < GstZcPendingEffectsMeta * >
        (gst_buffer_add_meta (buffer, pending_effects_meta_get_info (),
            NULL));
    if (!meta)
      return FALSE;
    meta->format = GST_VIDEO_INFO_FORMAT (info);
    meta->width = GST_VIDEO_INFO_WIDTH (info);
    meta->height = GST_VIDEO_INFO_HEIGHT (info);
  }
  if (!gst_zc_pending_effects_meta_takes (meta, info))
    return FALSE;
  meta->steps[meta->n_steps++] = step;
  return TRUE;
}

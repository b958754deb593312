/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Point effects a zcfilter left on a frame for the next zcfilter of a
 * chain to run (CPU backend): the plugin's own meta, never copied, tagged
 * as depending on the picture and its colours so that elements that filter
 * metas by tags (GstBaseTransform's defaults) neither pass it on in an
 * ALLOCATION query nor keep it on a frame they write.
 *
 * A zcfilter on the CPU backend lists this meta's API in its answer to the
 * ALLOCATION query. An upstream zcfilter whose frame needs only point
 * effects at equal caps then adds its step to the frame's meta instead of
 * running it, and the zcfilter that takes the frame runs every step in one
 * pass (zc::effects_chain_cpu()) before or with its own work. The frame
 * keeps its format and size from the first step to the last, so the steps
 * are those of one frame description.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <zcconvert.h>

G_BEGIN_DECLS

#define GST_ZC_PENDING_EFFECTS_META_API_TYPE \
    (gst_zc_pending_effects_meta_api_get_type ())

typedef struct
{
  GstMeta meta;

  /* the frame the steps are for, as the first step saw it */
  GstVideoFormat format;
  gint width, height;
  /* the steps, in the order of the chain; never more than
   * zc::kMaxEffectSteps - 1, so the taker has room for its own */
  guint n_steps;
  zc::ConvertParams steps[zc::kMaxEffectSteps];
} GstZcPendingEffectsMeta;

GType gst_zc_pending_effects_meta_api_get_type (void);

/* The meta of @buffer, or NULL */
GstZcPendingEffectsMeta *gst_buffer_get_zc_pending_effects_meta (GstBuffer *
    buffer);

/* Adds @step to the meta of @buffer (writable), made for @info if the
 * frame has none. FALSE when the meta is for another frame description or
 * has no room left. */
gboolean gst_buffer_add_zc_pending_effects_step (GstBuffer * buffer,
    const GstVideoInfo * info, const zc::ConvertParams & step);

/* Whether a meta made for @info holds steps one more step could join:
 * room left, and the same frame description */
gboolean gst_zc_pending_effects_meta_takes (const GstZcPendingEffectsMeta *
    meta, const GstVideoInfo * info);

G_END_DECLS

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GstZcBaseTransform, the base class of zcupload, zcfilter, zcdownload and
 * zckernel (gstzcbasetransform.cpp), and what their pads' caps share.
 */
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <gst/zerocopy/zerocopy.h>

#include "gstzccompat.h"

#include <zcformats.h>

G_BEGIN_DECLS

#define GST_TYPE_ZC_BASE_TRANSFORM (gst_zc_base_transform_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstZcBaseTransform, gst_zc_base_transform,
    GST, ZC_BASE_TRANSFORM, GstBaseTransform)

/* The video formats every element handles (zcfilter converts between any
 * two of them). */
#define GST_ZC_FORMATS \
    "{ " ZC_FORMATS (ZC_FORMAT_X_LIST, ZC_FORMAT_X_LIST_LAST) " }"

/* Where the library was built with GStreamer's CUDA library, the pads that
 * take or give nvcodec's device memory add these caps (config.h) */
#if GST_ZC_HAVE_GST_CUDA
#define GST_ZC_CUDA_MEMORY_CAPS "; " GST_VIDEO_CAPS_MAKE_WITH_FEATURES \
    ("memory:CUDAMemory", GST_ZC_FORMATS)
#else
#define GST_ZC_CUDA_MEMORY_CAPS ""
#endif

/* Frames larger than this are refused at negotiation: a guard against
 * absurd caps (100000x100000) before anything pins gigabytes. */
#define GST_ZC_MAX_FRAME_BYTES (G_GUINT64_CONSTANT (1) << 30)

typedef struct _GstZcBaseTransformPrivate GstZcBaseTransformPrivate;

struct _GstZcBaseTransformClass
{
  GstBaseTransformClass parent_class;

  /* Called from set_caps once both infos are parsed and checked */
  gboolean (*set_info) (GstZcBaseTransform * self, GstCaps * incaps,
      GstVideoInfo * in_info, GstCaps * outcaps, GstVideoInfo * out_info);

  /* Adds the subclass's own counters to the stats structure (any thread) */
  void (*add_stats) (GstZcBaseTransform * self, GstStructure * stats);

  /* The element only works on a GPU (no CPU backend): without one, start()
   * fails with an error whatever memory-type and cpu-fallback say */
  gboolean needs_gpu;
};

/* The device and the negotiated frames: valid from start() to stop() */
GstZcContext * gst_zc_base_transform_get_context (GstZcBaseTransform * self);
gpointer gst_zc_base_transform_get_stream (GstZcBaseTransform * self);
gboolean gst_zc_base_transform_uses_gpu (GstZcBaseTransform * self);
const GstVideoInfo * gst_zc_base_transform_get_in_info (GstZcBaseTransform *
    self);
const GstVideoInfo * gst_zc_base_transform_get_out_info (GstZcBaseTransform *
    self);

/* The rest of the base class has a header per unit, for the elements to
 * include as they need them:
 *  gstzcallocation.h  the memory type, the pools, the ALLOCATION query
 *  gstzcframecopy.h   input checks, frame copies, foreign memory, and the
 *                     per-frame counters the stats property reads
 *  gstzcvideoplane.h  plane geometry as kernels and copies see it
 * Below, inline because they hold no state: caps helpers and a class
 * function. */

/**
 * gst_zc_caps_is_cuda_memory:
 *
 * Returns: whether the first structure of @caps has the memory:CUDAMemory
 *   feature of GStreamer's CUDA elements
 */
static inline gboolean
gst_zc_caps_is_cuda_memory (GstCaps * caps)
{
  if (!caps || gst_caps_is_empty (caps) || gst_caps_is_any (caps))
    return FALSE;
  GstCapsFeatures *f = gst_caps_get_features (caps, 0);
  return f && gst_caps_features_contains (f,
      GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY_NVCODEC);
}

/* Copies of @caps with every structure's features set to @feature alone
 * (NULL: system memory). */
static inline GstCaps *
gst_zc_caps_with_feature (GstCaps * caps, const gchar * feature)
{
  GstCaps *res = gst_caps_new_empty ();
  guint n = gst_caps_get_size (caps);

  for (guint i = 0; i < n; i++) {
    GstCapsFeatures *f = gst_caps_get_features (caps, i);
    if (f && gst_caps_features_is_any (f))
      continue;
    GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
    GstCapsFeatures *nf = feature ? gst_caps_features_new_single (feature) :
        gst_caps_features_new_empty ();
    res = gst_caps_merge_structure_full (res, s, nf);
  }
  return res;
}

/**
 * gst_zc_base_transform_sync_controlled_values:
 *
 * A before_transform for elements with controllable properties: controller
 * bindings follow the stream time of each frame, as in videobalance.
 */
static inline void
gst_zc_base_transform_sync_controlled_values (GstBaseTransform * trans,
    GstBuffer * buffer)
{
  /* a stream in bytes (appsrc's default) has no stream time */
  if (trans->segment.format != GST_FORMAT_TIME)
    return;
  GstClockTime ts = gst_segment_to_stream_time (&trans->segment,
      GST_FORMAT_TIME, GST_BUFFER_PTS (buffer));
  if (GST_CLOCK_TIME_IS_VALID (ts))
    gst_object_sync_values (GST_OBJECT (trans), ts);
}

G_END_DECLS

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
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

/* Valid from start() to stop() */
GstZcContext * gst_zc_base_transform_get_context (GstZcBaseTransform * self);
gpointer gst_zc_base_transform_get_stream (GstZcBaseTransform * self);
gboolean gst_zc_base_transform_uses_gpu (GstZcBaseTransform * self);
GstZcMemoryType gst_zc_base_transform_get_memory_type (GstZcBaseTransform * self);
GstZcMemoryType gst_zc_base_transform_get_pool_memory_type (GstZcBaseTransform * self);
const GstVideoInfo * gst_zc_base_transform_get_in_info (GstZcBaseTransform * self);
const GstVideoInfo * gst_zc_base_transform_get_out_info (GstZcBaseTransform * self);

void gst_zc_base_transform_count_buffer (GstZcBaseTransform * self,
    gsize bytes_copied);
void gst_zc_base_transform_count_staged (GstZcBaseTransform * self,
    gsize bytes);

GstBufferPool * gst_zc_base_transform_new_pool (GstZcBaseTransform * self,
    GstCaps * caps, guint min_buffers, GstZcMemoryType memory_type,
    gboolean video_meta);
gboolean gst_zc_base_transform_decide_zc_pool (GstZcBaseTransform * self,
    GstQuery * query, GstZcMemoryType wanted, GstZcMemoryType fallback);
gboolean gst_zc_base_transform_propose_zc_pool (GstZcBaseTransform * self,
    GstQuery * query, GstZcMemoryType memory_type, gboolean video_meta);
gboolean gst_zc_base_transform_wants_video_meta (GstQuery * decide_query);
GstBufferPool * gst_zc_base_transform_new_cuda_pool (GstZcBaseTransform * self,
    GstCaps * caps, guint min, guint max, guint * size);

/* Class functions for subclasses to install (see their docs) */
gboolean gst_zc_base_transform_decide_zc_output (GstBaseTransform * trans,
    GstQuery * query);
void gst_zc_base_transform_sync_controlled_values (GstBaseTransform * trans,
    GstBuffer * buffer);

GstFlowReturn gst_zc_base_transform_check_input (GstZcBaseTransform * self,
    GstBuffer * inbuf);

GstFlowReturn gst_zc_base_transform_copy_frame (GstZcBaseTransform * self,
    GstBuffer * inbuf, GstBuffer * outbuf);

GstCaps * gst_zc_caps_with_feature (GstCaps * caps, const gchar * feature);

/* memory:CUDAMemory (GStreamer's CUDA elements) and foreign host memory */
gboolean gst_zc_caps_is_cuda_memory (GstCaps * caps);
gboolean gst_zc_base_transform_in_cuda_memory (GstZcBaseTransform * self);
gboolean gst_zc_base_transform_out_cuda_memory (GstZcBaseTransform * self);
GstAllocator * gst_zc_base_transform_get_wrap_allocator (GstZcBaseTransform * self,
    GstZcMemoryType memory_type);
void gst_zc_base_transform_count_adopted (GstZcBaseTransform * self,
    gsize registered);
GstBuffer * gst_zc_base_transform_import_output (GstZcBaseTransform * self,
    GstBuffer * outbuf);
GstFlowReturn gst_zc_base_transform_release_output (GstZcBaseTransform * self,
    GstBuffer * view);

gboolean gst_zc_buffer_is_device_memory (GstBuffer * buf);
gboolean gst_zc_buffer_gpu_writable (GstBuffer * buf);
GstZcMemory * gst_zc_buffer_gpu_memory (GstBuffer * buf, gint device);

/* Plane geometry as kernels and copies see it */
void gst_zc_video_plane_layout (GstBuffer * buf, const GstVideoInfo * info,
    guint plane, gsize * offset, gsize * stride);
guint32 gst_zc_video_plane_row_bytes (const GstVideoInfo * info, guint plane);
guint32 gst_zc_video_plane_rows (const GstVideoInfo * info, guint plane);

G_END_DECLS

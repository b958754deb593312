/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GstZcBaseTransform's allocation policy (gstzcallocation.cpp): the memory
 * type an element allocates in, the pools it proposes upstream and decides
 * on for its output (zero-copy, or nvcodec's CUDA memory), and the pools it
 * made, kept for a renegotiation back to caps it had. Valid from start() to
 * stop().
 */
#pragma once

#include "gstzcbasetransform.h"

G_BEGIN_DECLS

/* The most frames a shareable pool (frames for other processes) hands out */
#define GST_ZC_SHAREABLE_MAX_BUFFERS 16

GstZcMemoryType gst_zc_base_transform_get_memory_type (GstZcBaseTransform *
    self);
GstZcMemoryType gst_zc_base_transform_get_pool_memory_type (GstZcBaseTransform
    * self);

GstBufferPool * gst_zc_base_transform_new_pool (GstZcBaseTransform * self,
    GstCaps * caps, guint min_buffers, GstZcMemoryType memory_type,
    gboolean video_meta);
void gst_zc_base_transform_set_shareable_pools (GstZcBaseTransform * self,
    gboolean shareable);
gboolean gst_zc_base_transform_follow_shareable (GstZcBaseTransform * self,
    GstQuery * decide_query);
gboolean gst_zc_query_takes_files (GstQuery * query, gboolean ours_too);
GstBufferPool * gst_zc_base_transform_new_cuda_pool (GstZcBaseTransform * self,
    GstCaps * caps, guint min, guint max, guint * size);

gboolean gst_zc_base_transform_decide_zc_pool (GstZcBaseTransform * self,
    GstQuery * query, GstZcMemoryType wanted, GstZcMemoryType fallback);
gboolean gst_zc_base_transform_propose_zc_pool (GstZcBaseTransform * self,
    GstQuery * query, GstZcMemoryType memory_type, gboolean video_meta);
gboolean gst_zc_base_transform_wants_video_meta (GstQuery * decide_query);

/* Class functions for subclasses to install (see their docs) */
gboolean gst_zc_base_transform_propose_zc_input (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query);
gboolean gst_zc_base_transform_decide_zc_output (GstBaseTransform * trans,
    GstQuery * query);

G_END_DECLS

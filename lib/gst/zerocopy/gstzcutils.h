/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/zerocopy/zerocopy-prelude.h>
#include <gst/zerocopy/gstzccontext.h>

G_BEGIN_DECLS

/**
 * GST_ZC_CUDA_CONTEXT_TYPE:
 *
 * The #GstContext type under which GStreamer's CUDA elements share their
 * GstCudaContext.
 */
#define GST_ZC_CUDA_CONTEXT_TYPE "gst.cuda.context"

/* A #GstZcContext shared through GStreamer's context protocol */
GST_ZC_API
GstContext * gst_context_new_zc_context (GstZcContext * context);

GST_ZC_API
gboolean gst_context_get_zc_context (GstContext * context,
    GstZcContext ** zc_context);

GST_ZC_API
gboolean gst_zc_ensure_element_context (GstElement * element, gint device_id,
    GstZcContext ** zc_context, GError ** error);

GST_ZC_API
gboolean gst_zc_handle_set_context (GstElement * element, GstContext * context,
    gint device_id, GstZcContext ** zc_context);

GST_ZC_API
gboolean gst_zc_handle_context_query (GstElement * element, GstQuery * query,
    GstZcContext * zc_context);

/* The CUDA context shared with GStreamer's CUDA elements (nvcodec) */
GST_ZC_API
gpointer gst_zc_context_get_cuda_context (GstZcContext * context);

GST_ZC_API
gboolean gst_zc_handle_cuda_context_query (GstElement * element,
    GstQuery * query, GstZcContext * context);

GST_ZC_API
gint gst_zc_cuda_context_get_device_id (GstContext * context);

G_END_DECLS

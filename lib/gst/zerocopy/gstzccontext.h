/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/zerocopy/zerocopy-prelude.h>
#include <gst/zerocopy/gstzcmemorytype.h>

G_BEGIN_DECLS

/**
 * GST_ZC_CONTEXT_TYPE:
 *
 * The #GstContext type under which elements share a #GstZcContext.
 */
#define GST_ZC_CONTEXT_TYPE "gst.zerocopy.context"

#define GST_TYPE_ZC_CONTEXT (gst_zc_context_get_type ())
GST_ZC_API
G_DECLARE_FINAL_TYPE (GstZcContext, gst_zc_context, GST, ZC_CONTEXT, GstObject)

GST_ZC_API
GstZcContext * gst_zc_context_new (gint device_id, GError ** error);

GST_ZC_API
gboolean gst_zc_context_has_gpu (GstZcContext * context);

GST_ZC_API
gint gst_zc_context_get_device_id (GstZcContext * context);

GST_ZC_API
const gchar * gst_zc_context_get_device_name (GstZcContext * context);

GST_ZC_API
const gchar * gst_zc_context_get_no_gpu_reason (GstZcContext * context);

GST_ZC_API
gboolean gst_zc_context_is_integrated (GstZcContext * context);

GST_ZC_API
gboolean gst_zc_context_has_concurrent_managed_access (GstZcContext * context);

GST_ZC_API
gboolean gst_zc_context_can_map_host_memory (GstZcContext * context);

GST_ZC_API
GstZcMemoryType gst_zc_context_resolve_memory_type (GstZcContext * context,
    GstZcMemoryType requested);

GST_ZC_API
gpointer gst_zc_context_new_stream (GstZcContext * context);

GST_ZC_API
void gst_zc_context_free_stream (GstZcContext * context, gpointer stream);

GST_ZC_API
gboolean gst_zc_context_sync_stream (GstZcContext * context, gpointer stream);

G_END_DECLS

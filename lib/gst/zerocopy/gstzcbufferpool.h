/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/video/video.h>
#include <gst/zerocopy/zerocopy-prelude.h>
#include <gst/zerocopy/gstzcmemory.h>

G_BEGIN_DECLS

/**
 * GST_ZC_ROW_PITCH_ALIGN:
 *
 * Rows of pool buffers start on multiples of this many bytes when the
 * consumer of the pool understands #GstVideoMeta, so a warp's loads of a row
 * are whole, coalesced transactions. Pools of %GST_ZC_MEMORY_TYPE_SYSTEM
 * memory, which no kernel reads, keep GStreamer's default layout.
 */
#define GST_ZC_ROW_PITCH_ALIGN 128

/**
 * GST_ZC_BUFFER_POOL_OPTION_SHAREABLE:
 *
 * A pool configured with this option allocates its frames with
 * gst_zc_allocator_new_shareable(): memory other processes map from a file
 * descriptor (`unixfdsink`), registered with CUDA once per buffer. A pool
 * of managed or device memory ignores it.
 */
#define GST_ZC_BUFFER_POOL_OPTION_SHAREABLE "GstBufferPoolOptionZcShareable"

#define GST_TYPE_ZC_BUFFER_POOL (gst_zc_buffer_pool_get_type ())
GST_ZC_API
G_DECLARE_FINAL_TYPE (GstZcBufferPool, gst_zc_buffer_pool, GST, ZC_BUFFER_POOL,
    GstVideoBufferPool)

GST_ZC_API
GstBufferPool * gst_zc_buffer_pool_new (GstZcContext * context,
    GstZcMemoryType memory_type);

GST_ZC_API
GstZcContext * gst_zc_buffer_pool_get_context (GstZcBufferPool * pool);

GST_ZC_API
GstZcMemoryType gst_zc_buffer_pool_get_memory_type (GstZcBufferPool * pool);

GST_ZC_API
void gst_zc_buffer_pool_set_owner (GstZcBufferPool * pool, GstElement * owner);

GST_ZC_API
guint64 gst_zc_buffer_pool_get_bytes_held (GstZcBufferPool * pool);

G_END_DECLS

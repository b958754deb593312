/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/zerocopy/zerocopy-prelude.h>
#include <gst/zerocopy/gstzccontext.h>

G_BEGIN_DECLS

/**
 * GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY_NVCODEC:
 *
 * The caps feature of GStreamer's own CUDA elements (nvcodec's decoders,
 * cudaupload, cudaconvertscale, ...): device memory of a GstCudaContext.
 */
#define GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY_NVCODEC "memory:CUDAMemory"

/* Foreign host memory, registered with CUDA and used in place */
GST_ZC_API
GstBuffer * gst_zc_buffer_adopt_host (GstAllocator * mapped_allocator,
    GstBuffer * buffer, guint64 max_registered_bytes,
    gsize * registered_now);

GST_ZC_API
guint64 gst_zc_registered_bytes (void);

GST_ZC_API
guint64 gst_zc_wrapped_buffers_made (void);

/* GStreamer's CUDA library (gstreamer-cuda-1.0), where it was built in */
GST_ZC_API
gboolean gst_zc_have_cuda_memory_interop (void);

GST_ZC_API
gboolean gst_zc_buffer_is_cuda_memory (GstBuffer * buffer);

GST_ZC_API
GstBuffer * gst_zc_buffer_import_cuda (GstAllocator * device_allocator,
    GstBuffer * buffer, gboolean writable);

GST_ZC_API
GstBufferPool * gst_zc_cuda_buffer_pool_new (GstZcContext * context);

G_END_DECLS

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/zerocopy/zerocopy-prelude.h>
#include <gst/zerocopy/gstzcmemorytype.h>
#include <gst/zerocopy/gstzccontext.h>

G_BEGIN_DECLS

/**
 * GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY:
 *
 * Caps feature of buffers whose memory is a #GstZcMemory: CPU-mappable and
 * addressable by the GPU at once.
 */
#define GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY "memory:CUDAZeroCopy"

/**
 * GST_ZC_ALLOCATOR_NAME:
 *
 * The name under which the default zero-copy allocator is registered
 * (gst_allocator_find()). It allocates `auto` memory on the first device.
 */
#define GST_ZC_ALLOCATOR_NAME "ZcMemory"

typedef struct _GstZcMemory GstZcMemory;
typedef struct _GstZcMemoryPrivate GstZcMemoryPrivate;

/**
 * GstZcMemory:
 *
 * A #GstMemory the CPU maps like any other and the GPU addresses through
 * gst_zc_memory_get_device_pointer(). Each memory carries a fence, recorded
 * after the GPU work that touched it: a CPU map waits on that fence and on
 * nothing else.
 */
struct _GstZcMemory
{
  GstMemory mem;

  /*< private >*/
  GstZcMemoryPrivate *priv;
  gpointer _gst_reserved[GST_PADDING];
};

#define GST_TYPE_ZC_ALLOCATOR (gst_zc_allocator_get_type ())
GST_ZC_API
G_DECLARE_FINAL_TYPE (GstZcAllocator, gst_zc_allocator, GST, ZC_ALLOCATOR,
    GstAllocator)

GST_ZC_API
void gst_zc_memory_init_once (void);

GST_ZC_API
gboolean gst_is_zc_memory (GstMemory * mem);

GST_ZC_API
gboolean gst_zc_buffer_is_zc (GstBuffer * buffer, GstZcContext * context);

GST_ZC_API
gpointer gst_zc_memory_get_device_pointer (GstZcMemory * mem);

GST_ZC_API
gpointer gst_zc_memory_get_host_pointer (GstZcMemory * mem);

GST_ZC_API
GstZcMemoryType gst_zc_memory_get_memory_type (GstZcMemory * mem);

GST_ZC_API
gint gst_zc_memory_get_fd (GstZcMemory * mem, gsize * offset);

GST_ZC_API
guint64 gst_zc_memory_get_bytes_in_use (GstZcMemoryType memory_type);

GST_ZC_API
guint64 gst_zc_memory_get_migrations (void);

GST_ZC_API
guint64 gst_zc_memory_get_pinned_bytes (void);

GST_ZC_API
guint64 gst_zc_memory_get_pinned_limit (void);

GST_ZC_API
void gst_zc_memory_set_pinned_limit (guint64 bytes);

GST_ZC_API
gint gst_zc_memory_get_device_id (GstZcMemory * mem);

GST_ZC_API
GstZcContext * gst_zc_memory_get_context (GstZcMemory * mem);

GST_ZC_API
gboolean gst_zc_memory_prepare_gpu (GstZcMemory * mem, gpointer stream);

GST_ZC_API
gboolean gst_zc_memory_set_gpu_fence (GstZcMemory * mem, gpointer stream);

GST_ZC_API
gboolean gst_zc_memory_wait_cpu (GstZcMemory * mem);

GST_ZC_API
GstAllocator * gst_zc_allocator_new (GstZcContext * context,
    GstZcMemoryType memory_type);

GST_ZC_API
GstAllocator * gst_zc_allocator_new_shareable (GstZcContext * context,
    GstZcMemoryType memory_type);

GST_ZC_API
gboolean gst_zc_allocator_is_shareable (GstZcAllocator * allocator);

GST_ZC_API
GstMemory * gst_zc_memory_new_wrapped (GstAllocator * allocator,
    gpointer host, gpointer device, gsize size, gboolean read_only,
    gpointer user_data, GDestroyNotify notify);

GST_ZC_API
void gst_zc_allocator_wait_released (GstAllocator * allocator);

GST_ZC_API
GstZcContext * gst_zc_allocator_get_context (GstZcAllocator * allocator);

GST_ZC_API
GstZcMemoryType gst_zc_allocator_get_memory_type (GstZcAllocator * allocator);

G_END_DECLS

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:gstzcbufferpool
 * @title: GstZcBufferPool
 * @short_description: a video buffer pool of zero-copy memory
 *
 * A #GstVideoBufferPool whose buffers are #GstZcMemory of one type on one
 * device, whatever allocator the configuration names. When the pool's user
 * takes #GstVideoMeta, rows start on #GST_ZC_ROW_PITCH_ALIGN bytes so a
 * warp's loads are whole lines. The pool allocates its minimum buffers when
 * activated and reuses them: pinned allocation is slow and stalls the
 * device, so nothing is allocated per frame once the pool is warm.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcbufferpool.h"

GST_DEBUG_CATEGORY_STATIC (gst_zc_buffer_pool_debug);
#define GST_CAT_DEFAULT gst_zc_buffer_pool_debug

struct _GstZcBufferPool
{
  GstVideoBufferPool parent;

  GstZcContext *context;
  GstZcMemoryType memory_type;
  GstAllocator *allocator;
};

G_DEFINE_TYPE (GstZcBufferPool, gst_zc_buffer_pool,
    GST_TYPE_VIDEO_BUFFER_POOL);

static gboolean
gst_zc_buffer_pool_set_config (GstBufferPool * pool, GstStructure * config)
{
  auto *self = GST_ZC_BUFFER_POOL (pool);
  GstAllocationParams params;
  GstAllocator *allocator = NULL;

  if (!gst_buffer_pool_config_get_allocator (config, &allocator, &params))
    gst_allocation_params_init (&params);
  /* Whatever allocator was asked for, buffers of this pool are ours */
  gst_buffer_pool_config_set_allocator (config, self->allocator, &params);

  /* Pitched rows serve the GPU's loads; ordinary system memory (the CPU
   * backend's) keeps GStreamer's default layout, which a consumer without
   * GstVideoMeta reads as it is (zcdownload then hands the frame on
   * instead of repacking it). */
  if (self->memory_type != GST_ZC_MEMORY_TYPE_SYSTEM &&
      gst_buffer_pool_config_has_option (config,
          GST_BUFFER_POOL_OPTION_VIDEO_META)) {
    GstVideoAlignment align;
    gst_video_alignment_reset (&align);
    if (gst_buffer_pool_config_has_option (config,
            GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT))
      gst_buffer_pool_config_get_video_alignment (config, &align);
    else
      gst_buffer_pool_config_add_option (config,
          GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
    for (guint i = 0; i < GST_VIDEO_MAX_PLANES; i++)
      align.stride_align[i] |= GST_ZC_ROW_PITCH_ALIGN - 1;
    gst_buffer_pool_config_set_video_alignment (config, &align);
    /* the data start must be at least as aligned as the rows */
    params.align |= GST_ZC_ROW_PITCH_ALIGN - 1;
    gst_buffer_pool_config_set_allocator (config, self->allocator, &params);
  }

  if (!GST_BUFFER_POOL_CLASS (gst_zc_buffer_pool_parent_class)->set_config
      (pool, config))
    return FALSE;

  GST_DEBUG_OBJECT (self, "configured for %s memory",
      gst_zc_memory_type_to_string (self->memory_type));
  return TRUE;
}

static void
gst_zc_buffer_pool_finalize (GObject * object)
{
  auto *self = GST_ZC_BUFFER_POOL (object);

  gst_clear_object (&self->allocator);
  gst_clear_object (&self->context);

  G_OBJECT_CLASS (gst_zc_buffer_pool_parent_class)->finalize (object);
}

static void
gst_zc_buffer_pool_class_init (GstZcBufferPoolClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gst_zc_buffer_pool_finalize;
  GST_BUFFER_POOL_CLASS (klass)->set_config = gst_zc_buffer_pool_set_config;

  GST_DEBUG_CATEGORY_INIT (gst_zc_buffer_pool_debug, "zcbufferpool", 0,
      "zero-copy buffer pool");
}

static void
gst_zc_buffer_pool_init (GstZcBufferPool *)
{
}

/**
 * gst_zc_buffer_pool_new:
 * @context: the device the buffers are for
 * @memory_type: the memory of the buffers, %GST_ZC_MEMORY_TYPE_AUTO resolved
 *   for @context
 *
 * Returns: (transfer full) (nullable): a new pool, or %NULL when
 *   @memory_type needs a GPU that @context does not have
 */
GstBufferPool *
gst_zc_buffer_pool_new (GstZcContext * context, GstZcMemoryType memory_type)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), NULL);

  GstAllocator *allocator = gst_zc_allocator_new (context, memory_type);
  if (!allocator)
    return NULL;

  auto *self = (GstZcBufferPool *) g_object_new (GST_TYPE_ZC_BUFFER_POOL,
      NULL);
  gst_object_ref_sink (self);
  self->context = (GstZcContext *) gst_object_ref (context);
  self->memory_type =
      gst_zc_allocator_get_memory_type (GST_ZC_ALLOCATOR (allocator));
  self->allocator = allocator;
  return GST_BUFFER_POOL_CAST (self);
}

/**
 * gst_zc_buffer_pool_get_context:
 * @pool: a #GstZcBufferPool
 *
 * Returns: (transfer none): the pool's context
 */
GstZcContext *
gst_zc_buffer_pool_get_context (GstZcBufferPool * pool)
{
  g_return_val_if_fail (GST_IS_ZC_BUFFER_POOL (pool), NULL);
  return pool->context;
}

/**
 * gst_zc_buffer_pool_get_memory_type:
 * @pool: a #GstZcBufferPool
 *
 * Returns: the memory type of the pool's buffers
 */
GstZcMemoryType
gst_zc_buffer_pool_get_memory_type (GstZcBufferPool * pool)
{
  g_return_val_if_fail (GST_IS_ZC_BUFFER_POOL (pool),
      GST_ZC_MEMORY_TYPE_AUTO);
  return pool->memory_type;
}

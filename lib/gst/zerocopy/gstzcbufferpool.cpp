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
#include "gstzccuda-private.h"
#include "gstzcmemory-private.h"

#include <atomic>

GST_DEBUG_CATEGORY_STATIC (gst_zc_buffer_pool_debug);
#define GST_CAT_DEFAULT gst_zc_buffer_pool_debug

struct _GstZcBufferPool
{
  GstVideoBufferPool parent;

  GstZcContext *context;
  GstZcMemoryType memory_type;
  GstAllocator *allocator;

  /* the element an allocation failure is posted from (weak) */
  GWeakRef owner;
  /* one ERROR per activation */
  gint error_posted;
  /* the bytes of the buffers this pool holds, free or out */
  std::atomic < guint64 > bytes_held;
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
  /* Frames for another process: the allocator that makes memfd blocks, for
   * the buffers allocated from now on */
  const gboolean shareable = gst_buffer_pool_config_has_option (config,
      GST_ZC_BUFFER_POOL_OPTION_SHAREABLE);
  if (shareable != gst_zc_allocator_is_shareable
      (GST_ZC_ALLOCATOR (self->allocator))) {
    GstAllocator *other = shareable ?
        gst_zc_allocator_new_shareable (self->context, self->memory_type) :
        gst_zc_allocator_new (self->context, self->memory_type);
    if (other) {
      gst_object_unref (self->allocator);
      self->allocator = other;
    } else {
      GST_DEBUG_OBJECT (self, "%s memory cannot be shared: frames stay "
          "in this process", gst_zc_memory_type_to_string (self->memory_type));
    }
  }
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

/* The bytes of a buffer's memories, as allocated */
static guint64
buffer_bytes (GstBuffer * buffer)
{
  guint64 bytes = 0;
  for (guint i = 0; i < gst_buffer_n_memory (buffer); i++)
    bytes += gst_buffer_peek_memory (buffer, i)->maxsize;
  return bytes;
}

/* What a buffer counted in bytes_held when it was allocated: its memories
 * may be replaced before it is freed */
static GQuark
counted_quark (void)
{
  static GQuark q = 0;
  if (!q)
    q = g_quark_from_static_string ("GstZcBufferPool.counted");
  return q;
}

/* What a user reads when a frame of this pool could not be had, and what
 * to do about it */
static gchar *
describe_failure (GstZcBufferPool * self, const GstZcAllocFailure * f)
{
  const GstZcMemoryType type = f->valid ? f->type : self->memory_type;
  const gchar *kind = type == GST_ZC_MEMORY_TYPE_MAPPED ?
      "pinned (mapped)" : type == GST_ZC_MEMORY_TYPE_SYSTEM ?
      "system (the CPU backend's)" : gst_zc_memory_type_to_string (type);
  const gboolean host = type == GST_ZC_MEMORY_TYPE_MAPPED ||
      type == GST_ZC_MEMORY_TYPE_SYSTEM;
  /* device memory is a way out only where there is a GPU */
  const gchar *way_out = type == GST_ZC_MEMORY_TYPE_MAPPED ? "Use fewer "
      "buffers (shorter queues), smaller frames, or memory-type=device" :
      "Use fewer buffers (shorter queues) or smaller frames";
  const gchar *held_kind = type == GST_ZC_MEMORY_TYPE_SYSTEM ?
      "host memory for frames" : "pinned memory";
  if (!f->valid)
    return g_strdup_printf ("Could not allocate a frame of %s memory. %s.",
        kind, way_out);
  gchar *call = f->call ? gst_zc_cuda_call_function (f->call) :
      g_strdup ("the allocation");
  gchar *text;
  /* after a kernel's fault every CUDA call fails: neither fewer buffers
   * nor another memory type helps */
  const gchar *lost = f->call ? gst_zc_cuda_lost_reason () : NULL;
  if (lost) {
    text = g_strdup_printf ("Could not allocate a frame of %s memory: %s "
        "failed because the CUDA context of this process is lost (%s, a "
        "kernel faulted): restart the process to use the GPU again.", kind,
        call, lost);
  } else if (f->bytes == 0) {
    text = g_strdup_printf ("Could not create the CUDA event that fences a "
        "frame: %s failed (%s).", call, f->reason ? f->reason : "?");
  } else if (f->over_limit) {
    text = g_strdup_printf ("Could not allocate %" G_GSIZE_FORMAT " bytes of "
        "%s memory for a frame: the process holds %" G_GUINT64_FORMAT
        " bytes of %s, and GST_ZC_PINNED_LIMIT caps it at %"
        G_GUINT64_FORMAT " bytes. %s, or raise the cap.", f->bytes, kind,
        f->held, held_kind, f->limit, way_out);
  } else {
    text = g_strdup_printf ("Could not allocate %" G_GSIZE_FORMAT " bytes of "
        "%s memory for a frame: %s failed (%s); the process holds %"
        G_GUINT64_FORMAT " bytes of %s. %s.", f->bytes, kind, call,
        f->reason ? f->reason : "?", f->held, host ? held_kind :
        type == GST_ZC_MEMORY_TYPE_MANAGED ? "managed memory" :
        "device memory", way_out);
  }
  g_free (call);
  return text;
}

/* Once per activation: an ERROR from the owner naming what failed */
static void
post_alloc_error (GstZcBufferPool * self)
{
  GstZcAllocFailure f = GstZcAllocFailure ();
  gst_zc_memory_take_alloc_failure (&f);
  if (!g_atomic_int_compare_and_exchange (&self->error_posted, 0, 1))
    return;
  gchar *text = describe_failure (self, &f);
  GST_WARNING_OBJECT (self, "%s", text);
  auto *owner = (GstElement *) g_weak_ref_get (&self->owner);
  if (owner) {
    GError *err = g_error_new_literal (GST_RESOURCE_ERROR, f.bytes ?
        GST_RESOURCE_ERROR_NO_SPACE_LEFT : GST_RESOURCE_ERROR_FAILED, text);
    gchar *debug = g_strdup_printf ("%s: %s", GST_OBJECT_NAME (self),
        f.call ? f.call : "no allocation call recorded");
    gst_element_post_message (owner, gst_message_new_error (GST_OBJECT (owner),
            err, debug));
    g_free (debug);
    g_error_free (err);
    gst_object_unref (owner);
  }
  g_free (text);
}

static gboolean
gst_zc_buffer_pool_start (GstBufferPool * pool)
{
  auto *self = GST_ZC_BUFFER_POOL (pool);
  g_atomic_int_set (&self->error_posted, 0);
  return GST_BUFFER_POOL_CLASS (gst_zc_buffer_pool_parent_class)->start (pool);
}

static GstFlowReturn
gst_zc_buffer_pool_alloc_buffer (GstBufferPool * pool, GstBuffer ** buffer,
    GstBufferPoolAcquireParams * params)
{
  auto *self = GST_ZC_BUFFER_POOL (pool);
  /* a failure below is the one post_alloc_error() reports */
  gst_zc_memory_take_alloc_failure (NULL);
  GstFlowReturn ret =
      GST_BUFFER_POOL_CLASS (gst_zc_buffer_pool_parent_class)->alloc_buffer
      (pool, buffer, params);
  if (ret == GST_FLOW_OK) {
    const guint64 bytes = buffer_bytes (*buffer);
    gst_mini_object_set_qdata (GST_MINI_OBJECT_CAST (*buffer),
        counted_quark (), new guint64 (bytes), [](gpointer p) {
          delete static_cast < guint64 * >(p);
        });
    self->bytes_held.fetch_add (bytes);
  }
  else if (ret == GST_FLOW_ERROR)
    post_alloc_error (self);
  return ret;
}

static void
gst_zc_buffer_pool_free_buffer (GstBufferPool * pool, GstBuffer * buffer)
{
  auto *self = GST_ZC_BUFFER_POOL (pool);
  auto *counted = static_cast < guint64 * >(gst_mini_object_get_qdata
      (GST_MINI_OBJECT_CAST (buffer), counted_quark ()));
  if (counted)
    self->bytes_held.fetch_sub (*counted);
  GST_BUFFER_POOL_CLASS (gst_zc_buffer_pool_parent_class)->free_buffer (pool,
      buffer);
}

static void
gst_zc_buffer_pool_finalize (GObject * object)
{
  auto *self = GST_ZC_BUFFER_POOL (object);

  g_weak_ref_clear (&self->owner);
  gst_clear_object (&self->allocator);
  gst_clear_object (&self->context);

  G_OBJECT_CLASS (gst_zc_buffer_pool_parent_class)->finalize (object);
}

static void
gst_zc_buffer_pool_class_init (GstZcBufferPoolClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gst_zc_buffer_pool_finalize;
  GST_BUFFER_POOL_CLASS (klass)->set_config = gst_zc_buffer_pool_set_config;
  GST_BUFFER_POOL_CLASS (klass)->start = gst_zc_buffer_pool_start;
  GST_BUFFER_POOL_CLASS (klass)->alloc_buffer =
      gst_zc_buffer_pool_alloc_buffer;
  GST_BUFFER_POOL_CLASS (klass)->free_buffer = gst_zc_buffer_pool_free_buffer;

  GST_DEBUG_CATEGORY_INIT (gst_zc_buffer_pool_debug, "zcbufferpool", 0,
      "zero-copy buffer pool");
}

static void
gst_zc_buffer_pool_init (GstZcBufferPool * self)
{
  g_weak_ref_init (&self->owner, NULL);
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

/**
 * gst_zc_buffer_pool_set_owner:
 * @pool: a #GstZcBufferPool
 * @owner: (nullable): the element the pool's buffers are for
 *
 * When the pool cannot allocate a buffer (pinned memory exhausted or over
 * the cap of gst_zc_memory_set_pinned_limit(), device memory exhausted, no
 * CUDA event for its fence), @owner posts one ERROR per activation that
 * names the bytes asked for, the bytes the process holds and the way out:
 * the element that would otherwise fail, the source that filled the pool,
 * can only say "Internal data stream error". The pool does not keep @owner
 * alive.
 */
void
gst_zc_buffer_pool_set_owner (GstZcBufferPool * pool, GstElement * owner)
{
  g_return_if_fail (GST_IS_ZC_BUFFER_POOL (pool));
  g_return_if_fail (owner == NULL || GST_IS_ELEMENT (owner));
  g_weak_ref_set (&pool->owner, owner);
}

/**
 * gst_zc_buffer_pool_get_bytes_held:
 * @pool: a #GstZcBufferPool
 *
 * Returns: the bytes of the buffers the pool holds now, free ones and those
 *   out in the pipeline (nothing once it is inactive)
 */
guint64
gst_zc_buffer_pool_get_bytes_held (GstZcBufferPool * pool)
{
  g_return_val_if_fail (GST_IS_ZC_BUFFER_POOL (pool), 0);
  return pool->bytes_held.load ();
}

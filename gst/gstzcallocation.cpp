/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * GstZcBaseTransform's allocation policy: a consumer picks the memory of its
 * input, so each element proposes a pool of its own memory type upstream;
 * for its output it keeps a zero-copy pool downstream offers on its device,
 * else makes its own. Pools it made are kept until stop(), so that a
 * renegotiation back to caps it had takes the same pool instead of pinning
 * fresh memory.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcallocation.h"

#include <gst/allocators/allocators.h>
#include "gstzcbasetransform-private.h"

#define GST_CAT_DEFAULT gst_zc_base_transform_debug

/* memory-type as start() resolved it: what this element allocates frames in */
GstZcMemoryType
gst_zc_base_transform_get_memory_type (GstZcBaseTransform * self)
{
  return get_priv (self)->resolved_type;
}

/* The memory of the output pool decide_allocation settled on (AUTO before) */
GstZcMemoryType
gst_zc_base_transform_get_pool_memory_type (GstZcBaseTransform * self)
{
  return get_priv (self)->pool_type;
}

/* A pool this element made before for @caps, @memory_type and @video_meta
 * that nobody else holds now (a pool in use by another element must not be
 * handed out twice: the first to let go would deactivate it under the
 * other). */
static GstBufferPool *
reuse_made_pool (ZcBaseTransformState * priv, GstCaps * caps,
    GstZcMemoryType memory_type, gboolean video_meta)
{
  for (auto & m : priv->made_pools) {
    if (m.type == memory_type && m.video_meta == video_meta &&
        m.shareable == priv->shareable_pools &&
        GST_OBJECT_REFCOUNT_VALUE (m.pool) == 1 &&
        gst_caps_is_equal (m.caps, caps))
      return (GstBufferPool *) gst_object_ref (m.pool);
  }
  return NULL;
}

/**
 * gst_zc_base_transform_new_pool:
 * @video_meta: whether the pool's consumer reads #GstVideoMeta: then its
 *   rows are pitched for the GPU (#GST_ZC_ROW_PITCH_ALIGN); without, they
 *   keep GStreamer's default layout, which any consumer reads as it is
 *
 * A pool of @memory_type for @caps, configured but not active: one this
 * element made before for the same caps when nobody holds it any more, else
 * a new one.
 */
GstBufferPool *
gst_zc_base_transform_new_pool (GstZcBaseTransform * self, GstCaps * caps,
    guint min_buffers, GstZcMemoryType memory_type, gboolean video_meta)
{
  auto *priv = get_priv (self);
  GstVideoInfo info;

  if (!priv->context || !gst_video_info_from_caps (&info, caps))
    return NULL;
  std::lock_guard < std::mutex > lk (priv->pools_lock);
  GstBufferPool *pool = reuse_made_pool (priv, caps, memory_type, video_meta);
  if (pool) {
    GST_DEBUG_OBJECT (self, "reusing pool %" GST_PTR_FORMAT, pool);
    return pool;
  }
  pool = gst_zc_buffer_pool_new (priv->context, memory_type);
  if (!pool)
    return NULL;
  /* an allocation that fails is this element's ERROR, whoever fills it */
  gst_zc_buffer_pool_set_owner (GST_ZC_BUFFER_POOL (pool), GST_ELEMENT (self));
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (&info),
      min_buffers, 0);
  if (video_meta)
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (priv->shareable_pools)
    gst_buffer_pool_config_add_option (config,
        GST_ZC_BUFFER_POOL_OPTION_SHAREABLE);
  if (!gst_buffer_pool_set_config (pool, config)) {
    GST_WARNING_OBJECT (self, "pool refused its configuration");
    gst_object_unref (pool);
    return NULL;
  }
  /* a few caps are remembered; the oldest pool nobody holds goes first */
  if (priv->made_pools.size () >= 8) {
    for (auto it = priv->made_pools.begin (); it != priv->made_pools.end ();
        ++it) {
      if (GST_OBJECT_REFCOUNT_VALUE (it->pool) == 1) {
        gst_object_unref (it->pool);
        gst_caps_unref (it->caps);
        priv->made_pools.erase (it);
        break;
      }
    }
  }
  priv->made_pools.push_back ({
      (GstBufferPool *) gst_object_ref (pool), gst_caps_ref (caps),
      memory_type, video_meta, priv->shareable_pools});
  return pool;
}

/**
 * gst_zc_base_transform_follow_shareable:
 * @decide_query: (nullable): downstream's answer to this element's
 *   ALLOCATION query
 *
 * For propose_allocation: the pools made from now on are shareable when
 * downstream's are, or downstream takes file descriptors, so that the
 * frames of a chain that ends in `unixfdsink` are files from the first
 * producer's pool on, whichever element writes them last.
 *
 * Returns: whether they are
 */
gboolean
gst_zc_base_transform_follow_shareable (GstZcBaseTransform * self,
    GstQuery * decide_query)
{
  gboolean shareable = FALSE;
  for (guint i = 0; decide_query && !shareable &&
      i < gst_query_get_n_allocation_pools (decide_query); i++) {
    GstBufferPool *pool = NULL;
    gst_query_parse_nth_allocation_pool (decide_query, i, &pool, NULL, NULL,
        NULL);
    if (pool && GST_IS_ZC_BUFFER_POOL (pool)) {
      GstStructure *config = gst_buffer_pool_get_config (pool);
      shareable = gst_buffer_pool_config_has_option (config,
          GST_ZC_BUFFER_POOL_OPTION_SHAREABLE);
      gst_structure_free (config);
    }
    gst_clear_object (&pool);
  }
  if (decide_query && !shareable)
    shareable = gst_zc_query_takes_files (decide_query, TRUE);
  gst_zc_base_transform_set_shareable_pools (self, shareable);
  return shareable;
}

/**
 * gst_zc_query_takes_files:
 * @query: an answered ALLOCATION query
 * @ours_too: a shareable #GstZcAllocator (an element of ours that follows
 *   unixfdsink) counts as well
 *
 * Returns: whether the answer names an allocator of files: a
 *   #GstFdAllocator (unixfdsink's memfd allocator), or with @ours_too a
 *   shareable #GstZcAllocator
 */
gboolean
gst_zc_query_takes_files (GstQuery * query, gboolean ours_too)
{
  gboolean files = FALSE;
  for (guint i = 0; !files && i < gst_query_get_n_allocation_params (query);
      i++) {
    GstAllocator *allocator = NULL;
    gst_query_parse_nth_allocation_param (query, i, &allocator, NULL);
    files = allocator && (GST_IS_FD_ALLOCATOR (allocator) || (ours_too &&
            GST_IS_ZC_ALLOCATOR (allocator) &&
            gst_zc_allocator_is_shareable (GST_ZC_ALLOCATOR (allocator))));
    gst_clear_object (&allocator);
  }
  return files;
}

/**
 * gst_zc_base_transform_set_shareable_pools:
 * @shareable: whether the pools made from now on allocate memory another
 *   process maps (#GST_ZC_BUFFER_POOL_OPTION_SHAREABLE)
 *
 * For an element whose downstream passes file descriptors (`unixfdsink`).
 */
void
gst_zc_base_transform_set_shareable_pools (GstZcBaseTransform * self,
    gboolean shareable)
{
  auto *priv = get_priv (self);
  std::lock_guard < std::mutex > lk (priv->pools_lock);
  priv->shareable_pools = shareable;
}

/**
 * gst_zc_base_transform_new_cuda_pool:
 * @caps: video caps of memory:CUDAMemory
 * @min: least buffers
 * @max: most buffers, 0 for no limit
 * @size: (out) (optional): the buffer size the pool settled on
 *
 * A GstCudaBufferPool of the CUDA context this element shares with nvcodec
 * (gst_zc_cuda_buffer_pool_new()), configured for @caps with video meta,
 * not active.
 *
 * Returns: (transfer full) (nullable): the pool; %NULL without a GPU,
 *   without gstreamer-cuda-1.0, or if the pool refused the configuration
 */
GstBufferPool *
gst_zc_base_transform_new_cuda_pool (GstZcBaseTransform * self,
    GstCaps * caps, guint min, guint max, guint * size)
{
  auto *priv = get_priv (self);
  GstVideoInfo info;

  if (!priv->context || !gst_video_info_from_caps (&info, caps))
    return NULL;
  GstBufferPool *pool = gst_zc_cuda_buffer_pool_new (priv->context);
  if (!pool)
    return NULL;
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (&info),
      min, max);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config)) {
    GST_WARNING_OBJECT (self, "the CUDA buffer pool refused its "
        "configuration for %" GST_PTR_FORMAT, caps);
    gst_object_unref (pool);
    return NULL;
  }
  if (size) {
    config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_get_params (config, NULL, size, NULL, NULL);
    gst_structure_free (config);
  }
  return pool;
}

/**
 * gst_zc_base_transform_wants_video_meta:
 * @decide_query: (nullable): the ALLOCATION query this element sent
 *   downstream, as propose_allocation receives it
 *
 * Whether to ask upstream for #GstVideoMeta: when the consumer downstream
 * reads it (or is not known yet). Rows pitched for the GPU are then free;
 * for a consumer that does not read it (fakesink, filesink, a plain
 * appsink) they would cost zcdownload a repack of every frame, so frames
 * keep GStreamer's default layout all along the chain.
 */
gboolean
gst_zc_base_transform_wants_video_meta (GstQuery * decide_query)
{
  return !decide_query || gst_query_find_allocation_meta (decide_query,
      GST_VIDEO_META_API_TYPE, NULL);
}

/**
 * gst_zc_base_transform_propose_zc_pool:
 * @video_meta: whether to take #GstVideoMeta, so that the pool's rows are
 *   pitched for the GPU: see gst_zc_base_transform_wants_video_meta()
 *
 * propose_allocation for elements whose input is best written straight into
 * zero-copy memory: a pool of @memory_type, its allocator, and video meta
 * when @video_meta.
 */
gboolean
gst_zc_base_transform_propose_zc_pool (GstZcBaseTransform * self,
    GstQuery * query, GstZcMemoryType memory_type, gboolean video_meta)
{
  auto *priv = get_priv (self);
  GstCaps *caps = NULL;
  gboolean need_pool = FALSE;
  GstVideoInfo info;

  gst_query_parse_allocation (query, &caps, &need_pool);
  if (!caps || !gst_video_info_from_caps (&info, caps) || !priv->context)
    return FALSE;
  if ((guint64) GST_VIDEO_INFO_SIZE (&info) > GST_ZC_MAX_FRAME_BYTES)
    return FALSE;

  GST_DEBUG_OBJECT (self, "proposing a pool of %s memory, %s video meta",
      gst_zc_memory_type_to_string (memory_type),
      video_meta ? "with" : "without");
  /* nvcodec's pools (below) pitch their rows whatever we say */
  if (video_meta || gst_zc_caps_is_cuda_memory (caps))
    gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);

  /* memory:CUDAMemory from nvcodec: a CUDA pool of the shared context, so
   * the producer's frames are ours to read in place */
  if (gst_zc_caps_is_cuda_memory (caps)) {
    guint size = 0;
    GstBufferPool *pool = need_pool ?
        gst_zc_base_transform_new_cuda_pool (self, caps, 2, 0, &size) : NULL;
    if (pool) {
      gst_query_add_allocation_pool (query, pool, size, 2, 0);
      gst_object_unref (pool);
    }
    return TRUE;
  }

  GstAllocator *allocator = gst_zc_allocator_new (priv->context,
      memory_type);
  if (allocator) {
    GstAllocationParams params;
    gst_allocation_params_init (&params);
    gst_query_add_allocation_param (query, allocator, &params);
    gst_object_unref (allocator);
  }

  if (need_pool) {
    /* Two in flight here and downstream; the producer adds its own */
    GstBufferPool *pool = gst_zc_base_transform_new_pool (self, caps, 2,
        memory_type, video_meta);
    if (!pool)
      return FALSE;
    GstStructure *config = gst_buffer_pool_get_config (pool);
    guint size = 0;
    gst_buffer_pool_config_get_params (config, NULL, &size, NULL, NULL);
    const gboolean shareable = gst_buffer_pool_config_has_option (config,
        GST_ZC_BUFFER_POOL_OPTION_SHAREABLE);
    gst_structure_free (config);
    /* Frames that go to other processes come back when those let go (a
     * frame queued in a socket holds its buffer): a bound, so that a slow
     * consumer holds the producer back instead of growing its pool */
    gst_query_add_allocation_pool (query, pool, size, 2,
        shareable ? GST_ZC_SHAREABLE_MAX_BUFFERS : 0);
    gst_object_unref (pool);
  }
  return TRUE;
}

/**
 * gst_zc_base_transform_propose_zc_input:
 *
 * A propose_allocation for elements whose input is best written straight
 * into their own memory: the consumer picks the memory of its input, so
 * upstream gets a pool of this element's memory type, with video meta when
 * the consumer downstream reads it. In passthrough GstBaseTransform
 * forwards the query downstream instead.
 */
gboolean
gst_zc_base_transform_propose_zc_input (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  if (gst_base_transform_is_passthrough (trans))
    return GST_BASE_TRANSFORM_CLASS (g_type_class_peek
        (GST_TYPE_BASE_TRANSFORM))->propose_allocation (trans, decide_query,
        query);
  gst_zc_base_transform_follow_shareable (base, decide_query);
  return gst_zc_base_transform_propose_zc_pool (base, query,
      gst_zc_base_transform_get_memory_type (base),
      gst_zc_base_transform_wants_video_meta (decide_query));
}

/* Output as memory:CUDAMemory: a GstCudaBufferPool of the CUDA context we
 * share with nvcodec (whatever pool downstream offered, which may be of
 * another context), so kernels write the frames in place */
static gboolean
decide_cuda_pool (GstZcBaseTransform * self, GstQuery * query, GstCaps * caps)
{
  auto *priv = get_priv (self);
  guint size = 0, min = 2, max = 0;
  gboolean have = gst_query_get_n_allocation_pools (query) > 0;
  if (have) {
    gst_query_parse_nth_allocation_pool (query, 0, NULL, NULL, &min, &max);
    min = MAX (min, 2u);
  }
  GstBufferPool *pool = gst_zc_base_transform_new_cuda_pool (self, caps, min,
      max, &size);
  if (!pool) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not create a CUDA buffer pool for memory:CUDAMemory output"),
        ("%s", !gst_zc_have_cuda_memory_interop ()?
            "built without gstreamer-cuda-1.0" : !priv->stream ? "no GPU" :
            "the pool refused its configuration (GST_DEBUG=zcbasetransform:2)"));
    return FALSE;
  }
  if (have)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  priv->pool_type = GST_ZC_MEMORY_TYPE_DEVICE;
  GST_DEBUG_OBJECT (self, "output pool: CUDA memory of the shared context");
  return TRUE;
}

/* decide_allocation for elements whose output is zero-copy memory: keep a
 * downstream zero-copy pool of our device (of @wanted type, unless AUTO:
 * then the consumer chooses), otherwise use our own of @fallback type. */
gboolean
gst_zc_base_transform_decide_zc_pool (GstZcBaseTransform * self,
    GstQuery * query, GstZcMemoryType wanted, GstZcMemoryType fallback)
{
  auto *priv = get_priv (self);
  GstCaps *caps = NULL;
  GstBufferPool *pool = NULL;
  guint size = 0, min = 0, max = 0;
  GstVideoInfo info;

  gst_query_parse_allocation (query, &caps, NULL);
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return FALSE;
  if (gst_zc_caps_is_cuda_memory (caps))
    return decide_cuda_pool (self, query, caps);

  /* Rows pitched for the GPU only for a consumer that reads video meta: one
   * that does not (zcdownload before fakesink, filesink, a plain appsink)
   * then takes the frames as they are instead of repacking them */
  gboolean video_meta = gst_query_find_allocation_meta (query,
      GST_VIDEO_META_API_TYPE, NULL);
  gboolean have = gst_query_get_n_allocation_pools (query) > 0;
  if (have)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  if (pool && (!GST_IS_ZC_BUFFER_POOL (pool) ||
          gst_zc_context_get_device_id (gst_zc_buffer_pool_get_context
              (GST_ZC_BUFFER_POOL (pool))) !=
          gst_zc_context_get_device_id (priv->context) ||
          (wanted != GST_ZC_MEMORY_TYPE_AUTO &&
              gst_zc_buffer_pool_get_memory_type (GST_ZC_BUFFER_POOL (pool))
              != wanted))) {
    gst_clear_object (&pool);
  }

  min = MAX (min, 2u);
  if (pool) {
    GstStructure *config = gst_buffer_pool_get_config (pool);
    size = MAX (size, (guint) GST_VIDEO_INFO_SIZE (&info));
    gst_buffer_pool_config_set_params (config, caps, size, min, max);
    if (video_meta)
      gst_buffer_pool_config_add_option (config,
          GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config (pool, config)) {
      /* the pool may have changed the config: take what it offers if it
       * still fits, else use our own */
      config = gst_buffer_pool_get_config (pool);
      if (!gst_buffer_pool_config_validate_params (config, caps, size, min,
              max) || !gst_buffer_pool_set_config (pool, config))
        gst_clear_object (&pool);
    }
  }
  if (!pool) {
    pool = gst_zc_base_transform_new_pool (self, caps, min, fallback,
        video_meta);
    if (!pool) {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Could not create a %s buffer pool for %" GST_PTR_FORMAT,
              gst_zc_memory_type_to_string (fallback), caps), (NULL));
      return FALSE;
    }
    max = 0;
  }
  priv->pool_type =
      gst_zc_buffer_pool_get_memory_type (GST_ZC_BUFFER_POOL (pool));
  GST_DEBUG_OBJECT (self, "output pool of %s memory",
      gst_zc_memory_type_to_string (priv->pool_type));

  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_params (config, NULL, &size, NULL, NULL);
  gst_structure_free (config);
  if (have)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return TRUE;
}

/**
 * gst_zc_base_transform_decide_zc_output:
 *
 * A decide_allocation for elements whose output is zero-copy memory of any
 * type: whatever zero-copy memory downstream asks for, else this element's
 * own. Not the default: zcupload asks for its own memory type, and
 * zcdownload (system memory out) takes GstBaseTransform's.
 */
gboolean
gst_zc_base_transform_decide_zc_output (GstBaseTransform * trans,
    GstQuery * query)
{
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  return gst_zc_base_transform_decide_zc_pool (base, query,
      GST_ZC_MEMORY_TYPE_AUTO, gst_zc_base_transform_get_memory_type (base));
}

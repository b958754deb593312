/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-zcdownload
 * @title: zcdownload
 *
 * Hands zero-copy frames to CPU elements without copying them: the buffer
 * that leaves is the one that came in, its memory relabelled as system
 * memory. The CPU side is safe because mapping a #GstZcMemory waits on the
 * fence of the GPU work that touched it, and on nothing else.
 *
 * Device memory (`memory-type=device` upstream) is the exception: it is
 * copied into pinned memory by the copy engines, asynchronously on the
 * element's stream, and counted as a copy.
 *
 * zcdownload asks upstream for #GstVideoMeta when downstream takes it: the
 * GPU steps before it then pitch their rows for coalesced loads. For a
 * consumer without it (fakesink, filesink, a plain appsink) the frames keep
 * GStreamer's default layout all along the chain instead. Only a frame
 * that still comes with padded rows (from a pool that is not ours, or
 * negotiated before downstream was known) is repacked into a tightly
 * packed system buffer (counted in `stats`).
 *
 * Into `unixfdsink` (GStreamer 1.24), which passes frames to other
 * processes as file descriptors, the frames leave as #GstFdMemory of the
 * same bytes: zcdownload sees the sink's memfd allocator and has the pools
 * upstream allocate each frame in a file (registered with CUDA once), waits
 * for the GPU work on a frame and hands the file on, without a copy
 * (docs/multiprocess.md).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc ! zcupload ! zcfilter gamma=2.2 ! \
 *     zcdownload ! videoconvert ! autovideosink
 * ]|
 *
 * Caps: sink `video/x-raw(memory:CUDAZeroCopy)`, src `video/x-raw`, same
 * format, size and rate.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcdownload.h"
#include "gstzcallocation.h"
#include "gstzcframecopy.h"

GST_DEBUG_CATEGORY_STATIC (gst_zc_download_debug);
#define GST_CAT_DEFAULT gst_zc_download_debug

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE_WITH_FEATURES
        (GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY, GST_ZC_FORMATS)));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (GST_ZC_FORMATS)));

struct _GstZcDownload
{
  GstZcBaseTransform parent;

  /* streaming thread only */
  gboolean downstream_video_meta;
  /* downstream passes file descriptors to another process (unixfdsink
   * proposes a memfd allocator): frames leave as GstFdMemory */
  gboolean downstream_fd;
  /* the output prepare_output_buffer made whole (a frame handed on as file
   * descriptors), for transform to pass, and whether it took a copy */
  GstBuffer *exported;
  gboolean exported_copied;
  /* mapped memory that device-memory frames are copied into, made at the
   * first such frame for the current caps, dropped when they change */
  GstBufferPool *staging_pool;
};

G_DEFINE_TYPE (GstZcDownload, gst_zc_download, GST_TYPE_ZC_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (zcdownload, "zcdownload", GST_RANK_NONE,
    GST_TYPE_ZC_DOWNLOAD);

static GstCaps *
gst_zc_download_transform_caps (GstBaseTransform *,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstCaps *res = gst_zc_caps_with_feature (caps, direction == GST_PAD_SINK ?
      NULL : GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY);

  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, res,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (res);
    res = tmp;
  }
  return res;
}

static void
drop_staging (GstZcDownload * self)
{
  if (self->staging_pool) {
    gst_buffer_pool_set_active (self->staging_pool, FALSE);
    gst_clear_object (&self->staging_pool);
  }
}

/* A packed frame of mapped memory for @inbuf's bytes, with its flags,
 * timestamps and metas: no video meta, so any consumer reads it */
static GstFlowReturn
acquire_staging (GstZcDownload * self, GstBuffer * inbuf, GstBuffer ** outbuf)
{
  auto *base = GST_ZC_BASE_TRANSFORM (self);

  if (!self->staging_pool) {
    GstVideoInfo info = *gst_zc_base_transform_get_out_info (base);
    GstCaps *caps = gst_video_info_to_caps (&info);
    /* pinned memory with a GPU; the CPU backend's repacks stay in system
     * memory */
    GstBufferPool *pool = gst_zc_buffer_pool_new
        (gst_zc_base_transform_get_context (base),
        gst_zc_base_transform_uses_gpu (base) ? GST_ZC_MEMORY_TYPE_MAPPED :
        GST_ZC_MEMORY_TYPE_SYSTEM);
    if (pool) {
      gst_zc_buffer_pool_set_owner (GST_ZC_BUFFER_POOL (pool),
          GST_ELEMENT (self));
      GstStructure *config = gst_buffer_pool_get_config (pool);
      gst_buffer_pool_config_set_params (config, caps,
          GST_VIDEO_INFO_SIZE (&info), 2,
          self->downstream_fd ? GST_ZC_SHAREABLE_MAX_BUFFERS : 0);
      if (self->downstream_fd)
        gst_buffer_pool_config_add_option (config,
            GST_ZC_BUFFER_POOL_OPTION_SHAREABLE);
      if (!gst_buffer_pool_set_config (pool, config) ||
          !gst_buffer_pool_set_active (pool, TRUE))
        gst_clear_object (&pool);
    }
    gst_caps_unref (caps);
    if (!pool) {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Could not create a staging pool"), (NULL));
      return GST_FLOW_ERROR;
    }
    self->staging_pool = pool;
  }
  GstFlowReturn ret = gst_buffer_pool_acquire_buffer (self->staging_pool,
      outbuf, NULL);
  if (ret == GST_FLOW_OK)
    gst_buffer_copy_into (*outbuf, inbuf, (GstBufferCopyFlags)
        (GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS |
            GST_BUFFER_COPY_META), 0, -1);
  return ret;
}

static gboolean
gst_zc_download_decide_allocation (GstBaseTransform * trans, GstQuery * query)
{
  auto *self = GST_ZC_DOWNLOAD (trans);

  self->downstream_video_meta =
      gst_query_find_allocation_meta (query, GST_VIDEO_META_API_TYPE, NULL);
  GST_DEBUG_OBJECT (self, "downstream %s GstVideoMeta",
      self->downstream_video_meta ? "takes" : "does not take");

  /* unixfdsink proposes its memfd allocator: the frames are for another
   * process, so the pools along the chain allocate in files */
  const gboolean fd = gst_zc_query_takes_files (query, FALSE);
  if (fd != self->downstream_fd) {
    GST_DEBUG_OBJECT (self, "downstream %s file descriptors",
        fd ? "takes" : "does not take");
    self->downstream_fd = fd;
    /* the staging pool's memory follows */
    drop_staging (self);
  }
  gst_zc_base_transform_set_shareable_pools (GST_ZC_BASE_TRANSFORM (self),
      fd);

  /* The system pool downstream offers only serves repacked frames */
  return GST_BASE_TRANSFORM_CLASS (gst_zc_download_parent_class)->
      decide_allocation (trans, query);
}

/* Video meta from upstream only if downstream reads it: without, no pool
 * along the chain pitches its rows, and the frames pass on as they are.
 * (GstBaseTransform's decide_allocation takes the video meta, memory
 * specific, out of @decide_query: what downstream said is kept above.) */
static gboolean
gst_zc_download_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  auto *self = GST_ZC_DOWNLOAD (trans);
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  return gst_zc_base_transform_propose_zc_pool (base, query,
      gst_zc_base_transform_get_memory_type (base),
      !decide_query || self->downstream_video_meta);
}

/* Whether downstream can read @buf as it is: packed rows, or video meta. */
static gboolean
readable_as_is (GstZcDownload * self, GstBuffer * buf)
{
  if (self->downstream_video_meta)
    return TRUE;

  const GstVideoInfo *info =
      gst_zc_base_transform_get_in_info (GST_ZC_BASE_TRANSFORM (self));
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  if (!meta)
    return TRUE;
  for (guint i = 0; i < meta->n_planes; i++) {
    if (meta->stride[i] != GST_VIDEO_INFO_PLANE_STRIDE (info, i) ||
        meta->offset[i] != GST_VIDEO_INFO_PLANE_OFFSET (info, i))
      return FALSE;
  }
  return TRUE;
}

/* A frame for another process: the same memory as file descriptors when it
 * is a file already (the pools upstream were made shareable), else copied
 * once into the staging pool's files, and counted */
static GstFlowReturn
prepare_fd_output (GstZcDownload * self, GstBuffer * inbuf,
    GstBuffer ** outbuf)
{
  auto *base = GST_ZC_BASE_TRANSFORM (self);
  GstBuffer *frame = NULL;
  gboolean copied = FALSE;

  if (gst_zc_buffer_is_shareable (inbuf)) {
    frame = gst_buffer_ref (inbuf);
  } else {
    GstFlowReturn ret = acquire_staging (self, inbuf, &frame);
    if (ret != GST_FLOW_OK)
      return ret;
    ret = gst_zc_base_transform_copy_frame (base, inbuf, frame);
    if (ret != GST_FLOW_OK) {
      gst_buffer_unref (frame);
      return ret;
    }
    copied = TRUE;
  }
  if (!gst_zc_buffer_is_shareable (frame)) {
    gst_buffer_unref (frame);
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Could not allocate a frame another process can map"),
        ("the staging pool's memory is not file-backed"));
    return GST_FLOW_ERROR;
  }
  GstBuffer *out = gst_zc_buffer_export_fd (frame);
  gst_buffer_unref (frame);
  if (!out) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("The GPU work on a frame failed; it was not handed on"), (NULL));
    return GST_FLOW_ERROR;
  }
  self->exported = out;
  self->exported_copied = copied;
  *outbuf = out;
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_zc_download_prepare_output_buffer (GstBaseTransform * trans,
    GstBuffer * inbuf, GstBuffer ** outbuf)
{
  auto *self = GST_ZC_DOWNLOAD (trans);

  self->exported = NULL;
  GstFlowReturn check = gst_zc_base_transform_check_input
      (GST_ZC_BASE_TRANSFORM (trans), inbuf);
  if (check != GST_FLOW_OK)
    return check;
  if (self->downstream_fd)
    return prepare_fd_output (self, inbuf, outbuf);
  if (gst_zc_buffer_is_device_memory (inbuf) &&
      gst_zc_base_transform_uses_gpu (GST_ZC_BASE_TRANSFORM (trans)))
    return acquire_staging (self, inbuf, outbuf);
  if (readable_as_is (self, inbuf)) {
    *outbuf = inbuf;
    return GST_FLOW_OK;
  }
  return GST_BASE_TRANSFORM_CLASS (gst_zc_download_parent_class)->
      prepare_output_buffer (trans, inbuf, outbuf);
}

static GstFlowReturn
gst_zc_download_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  auto *self = GST_ZC_DOWNLOAD (trans);
  auto *base = GST_ZC_BASE_TRANSFORM (trans);

  if (inbuf == outbuf) {
    gst_zc_base_transform_count_buffer (base, 0);
    return GST_FLOW_OK;
  }
  if (outbuf == self->exported) {
    /* made whole by prepare_output_buffer; a copy was counted there */
    self->exported = NULL;
    if (!self->exported_copied)
      gst_zc_base_transform_count_buffer (base, 0);
    return GST_FLOW_OK;
  }
  /* Device memory out into pinned memory with the copy engines (the
   * consumer's map waits on the fence), or a repack on the CPU for a
   * consumer that cannot read padded rows */
  return gst_zc_base_transform_copy_frame (base, inbuf, outbuf);
}

/* The staging pool holds frames of the output caps: new caps, new pool
 * (buffers of the old one still downstream keep it alive until they
 * return) */
static gboolean
gst_zc_download_set_info (GstZcBaseTransform * base, GstCaps *,
    GstVideoInfo *, GstCaps *, GstVideoInfo * out_info)
{
  auto *self = GST_ZC_DOWNLOAD (base);
  if (self->staging_pool) {
    GstStructure *config = gst_buffer_pool_get_config (self->staging_pool);
    GstCaps *caps = NULL;
    gst_buffer_pool_config_get_params (config, &caps, NULL, NULL, NULL);
    GstVideoInfo info;
    bool same = caps && gst_video_info_from_caps (&info, caps) &&
        gst_video_info_is_equal (&info, out_info);
    gst_structure_free (config);
    if (!same)
      drop_staging (self);
  }
  return TRUE;
}

static gboolean
gst_zc_download_stop (GstBaseTransform * trans)
{
  drop_staging (GST_ZC_DOWNLOAD (trans));
  return GST_BASE_TRANSFORM_CLASS (gst_zc_download_parent_class)->stop (trans);
}

static void
gst_zc_download_class_init (GstZcDownloadClass * klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Zero-copy CUDA download", "Filter/Video/Hardware",
      "Hands GPU-processed frames to CPU elements without a copy: the same "
      "memory, relabelled as system memory; a CPU map waits on the GPU "
      "fence. Example: ... ! zcfilter ! zcdownload ! videoconvert ! "
      "autovideosink",
      "gst-zerocopy maintainers");

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_zc_download_transform_caps);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_download_decide_allocation);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_download_propose_allocation);
  trans_class->prepare_output_buffer =
      GST_DEBUG_FUNCPTR (gst_zc_download_prepare_output_buffer);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_zc_download_transform);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_zc_download_stop);

  GST_ZC_BASE_TRANSFORM_CLASS (klass)->set_info =
      GST_DEBUG_FUNCPTR (gst_zc_download_set_info);

  GST_DEBUG_CATEGORY_INIT (gst_zc_download_debug, "zcdownload", 0,
      "zero-copy CUDA download");
}

static void
gst_zc_download_init (GstZcDownload *)
{
}

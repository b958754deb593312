/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * GstZcBaseTransform: what zcupload, zcfilter, zcdownload and zckernel
 * share: the device choice (device-id, memory-type, cpu-fallback), the
 * shared context (GstContext protocol), the element's CUDA stream, the
 * parsed video infos with their size guard, and the stats. Its pools are in
 * gstzcallocation.cpp, a frame's bytes in gstzcframecopy.cpp. The test
 * libs/zcfilterplan links this file without those two: it calls neither.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcbasetransform.h"
#include "gstzcbasetransform-private.h"
#include "gstzcgpuerror.h"

#include <mutex>

GST_DEBUG_CATEGORY (gst_zc_base_transform_debug);
#define GST_CAT_DEFAULT gst_zc_base_transform_debug

enum
{
  PROP_0,
  PROP_DEVICE_ID,
  PROP_MEMORY_TYPE,
  PROP_CPU_FALLBACK,
  PROP_STATS,
};

struct _GstZcBaseTransformPrivate
{
  ZcBaseTransformState *state;
};

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (GstZcBaseTransform, gst_zc_base_transform,
    GST_TYPE_BASE_TRANSFORM,
    G_ADD_PRIVATE (GstZcBaseTransform);
    GST_DEBUG_CATEGORY_INIT (gst_zc_base_transform_debug, "zcbasetransform",
        0, "zero-copy base transform"));

ZcBaseTransformState *
gst_zc_base_transform_get_state (GstZcBaseTransform * self)
{
  return static_cast < GstZcBaseTransformPrivate * >
      (gst_zc_base_transform_get_instance_private (self))->state;
}

/* The device to open: device-id, else (-1) the device of a gst.cuda.context
 * set on the element, if any. Called with priv->lock held. */
static gint
requested_device_locked (ZcBaseTransformState * priv)
{
  return priv->device_id >= 0 ? priv->device_id : priv->cuda_device_hint;
}

static GstStructure *
stats_structure (GstZcBaseTransform * self)
{
  auto *priv = get_priv (self);
  GstStructure *s;
  {
    std::lock_guard < std::mutex > lk (priv->lock);
    const ZcBaseTransformState::Stats & n = priv->stats;
    s = gst_structure_new ("application/x-zerocopy-stats",
        "buffers", G_TYPE_UINT64, n.buffers,
        "zero-copy-buffers", G_TYPE_UINT64, n.zero_copy_buffers,
        "copied-buffers", G_TYPE_UINT64, n.copied_buffers,
        "bytes-copied", G_TYPE_UINT64, n.bytes_copied,
        "bytes-staged", G_TYPE_UINT64, n.bytes_staged,
        "cuda-memory-buffers", G_TYPE_UINT64, n.cuda_memory_buffers,
        "adopted-buffers", G_TYPE_UINT64, n.adopted_buffers,
        "registrations", G_TYPE_UINT64, n.registrations,
        "bytes-registered", G_TYPE_UINT64, n.bytes_registered,
        "backend", G_TYPE_STRING, priv->stream ? "cuda" : "cpu",
        "device-name", G_TYPE_STRING, priv->context ?
        gst_zc_context_get_device_name (priv->context) : "none",
        "memory-type", G_TYPE_STRING,
        gst_zc_memory_type_to_string (priv->context ? priv->resolved_type :
            priv->memory_type), NULL);
  }
  /* what the pools this element made hold of the host memory that
   * GST_ZC_PINNED_LIMIT caps (pinned, or the CPU backend's system memory) */
  guint64 pinned = 0;
  {
    std::lock_guard < std::mutex > lk (priv->pools_lock);
    for (auto & m : priv->made_pools) {
      if (!GST_IS_ZC_BUFFER_POOL (m.pool))
        continue;
      auto *pool = GST_ZC_BUFFER_POOL (m.pool);
      const GstZcMemoryType t = gst_zc_buffer_pool_get_memory_type (pool);
      if (t == GST_ZC_MEMORY_TYPE_MAPPED || t == GST_ZC_MEMORY_TYPE_SYSTEM)
        pinned += gst_zc_buffer_pool_get_bytes_held (pool);
    }
  }
  gst_structure_set (s, "pinned-bytes", G_TYPE_UINT64, pinned, NULL);
  auto *klass = GST_ZC_BASE_TRANSFORM_GET_CLASS (self);
  if (klass->add_stats)
    klass->add_stats (self, s);
  return s;
}

static void
gst_zc_base_transform_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  auto *priv = get_priv (GST_ZC_BASE_TRANSFORM (object));
  std::lock_guard < std::mutex > lk (priv->lock);

  switch (prop_id) {
    case PROP_DEVICE_ID:
      priv->device_id = g_value_get_int (value);
      break;
    case PROP_MEMORY_TYPE:
      priv->memory_type = (GstZcMemoryType) g_value_get_enum (value);
      break;
    case PROP_CPU_FALLBACK:
      priv->cpu_fallback = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_zc_base_transform_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  auto *self = GST_ZC_BASE_TRANSFORM (object);
  auto *priv = get_priv (self);

  if (prop_id == PROP_STATS) {
    g_value_take_boxed (value, stats_structure (self));
    return;
  }

  std::lock_guard < std::mutex > lk (priv->lock);
  switch (prop_id) {
    case PROP_DEVICE_ID:
      g_value_set_int (value, priv->device_id);
      break;
    case PROP_MEMORY_TYPE:
      g_value_set_enum (value, priv->memory_type);
      break;
    case PROP_CPU_FALLBACK:
      g_value_set_boolean (value, priv->cpu_fallback);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_zc_base_transform_set_context (GstElement * element, GstContext * context)
{
  auto *priv = get_priv (GST_ZC_BASE_TRANSFORM (element));
  gint device_id;
  /* nvcodec's context names the GPU its elements run on: with device-id=-1
   * this element follows it */
  gint cuda_device = gst_zc_cuda_context_get_device_id (context);
  {
    std::lock_guard < std::mutex > lk (priv->lock);
    device_id = priv->device_id;
    if (cuda_device >= 0 && device_id < 0)
      priv->cuda_device_hint = cuda_device;
  }
  gst_zc_handle_set_context (element, context, device_id, &priv->context);

  GST_ELEMENT_CLASS (gst_zc_base_transform_parent_class)->set_context
      (element, context);
}

static gboolean
gst_zc_base_transform_query (GstBaseTransform * trans,
    GstPadDirection direction, GstQuery * query)
{
  auto *priv = get_priv (GST_ZC_BASE_TRANSFORM (trans));

  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT) {
    if (gst_zc_handle_context_query (GST_ELEMENT (trans), query,
            priv->context))
      return TRUE;
    /* nvcodec's elements ask their neighbours for a gst.cuda.context when
     * they open, which may be before this element has started: open the
     * device now, so both sides share its primary context */
    const gchar *type = NULL;
    if (gst_zc_have_cuda_memory_interop () &&
        gst_query_parse_context_type (query, &type) &&
        g_strcmp0 (type, GST_ZC_CUDA_CONTEXT_TYPE) == 0) {
      if (!priv->context) {
        gint device_id;
        {
          std::lock_guard < std::mutex > lk (priv->lock);
          device_id = requested_device_locked (priv);
        }
        gst_zc_ensure_element_context (GST_ELEMENT (trans), device_id,
            &priv->context, NULL);
      }
      return gst_zc_handle_cuda_context_query (GST_ELEMENT (trans), query,
          priv->context);
    }
  }

  /* An ALLOCATION query from upstream may make GstBaseTransform renegotiate
   * its own output and keep the allocation query it sent downstream. It
   * runs on upstream's streaming thread without this element's stream
   * lock, so while the element is being deactivated (set to READY in the
   * middle of a renegotiation) it could store that query after
   * deactivation released the previous one, and leak it. Under the
   * stream lock, deactivation waits for it; a flushing pad answers no. */
  if (GST_QUERY_TYPE (query) == GST_QUERY_ALLOCATION &&
      direction == GST_PAD_SINK) {
    GstPad *sinkpad = GST_BASE_TRANSFORM_SINK_PAD (trans);
    GST_PAD_STREAM_LOCK (sinkpad);
    gboolean ret = !GST_PAD_IS_FLUSHING (sinkpad) &&
        GST_BASE_TRANSFORM_CLASS (gst_zc_base_transform_parent_class)->query
        (trans, direction, query);
    GST_PAD_STREAM_UNLOCK (sinkpad);
    return ret;
  }

  return GST_BASE_TRANSFORM_CLASS (gst_zc_base_transform_parent_class)->query
      (trans, direction, query);
}

static GQuark
fallback_warned_quark (void)
{
  static GQuark q = g_quark_from_static_string ("gst-zc-cpu-fallback-warned");
  return q;
}

/* Without a GPU: whether the element goes on, on the CPU backend, as
 * memory-type and cpu-fallback allow (else an element error is posted) */
static gboolean
run_without_gpu (GstZcBaseTransform * self, GstZcMemoryType requested,
    gboolean cpu_fallback)
{
  GstZcContext *ctx = get_priv (self)->context;
  const gchar *why = gst_zc_context_get_no_gpu_reason (ctx);

  if (GST_ZC_BASE_TRANSFORM_GET_CLASS (self)->needs_gpu) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("%s runs CUDA kernels and needs a CUDA GPU, and there is none: "
            "%s", GST_ELEMENT_NAME (self), why),
        ("this element has no CPU backend: nothing would run the kernel"));
    return FALSE;
  }
  if (requested == GST_ZC_MEMORY_TYPE_MAPPED ||
      requested == GST_ZC_MEMORY_TYPE_MANAGED ||
      requested == GST_ZC_MEMORY_TYPE_DEVICE) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("memory-type=%s needs a CUDA device, and there is none",
            gst_zc_memory_type_to_string (requested)),
        ("%s. Use memory-type=auto to run on the CPU backend.", why));
    return FALSE;
  }
  if (requested == GST_ZC_MEMORY_TYPE_AUTO && !cpu_fallback) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No CUDA device, and cpu-fallback is disabled"), ("%s", why));
    return FALSE;
  }
  /* One warning per shared context, so one per pipeline */
  if (requested == GST_ZC_MEMORY_TYPE_AUTO &&
      !g_object_get_qdata (G_OBJECT (ctx), fallback_warned_quark ())) {
    g_object_set_qdata (G_OBJECT (ctx), fallback_warned_quark (),
        GINT_TO_POINTER (1));
    GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
        ("No CUDA device: gst-zerocopy runs on its CPU backend"),
        ("%s. Set cpu-fallback=false to make this an error.", why));
  }
  return TRUE;
}

static gboolean
gst_zc_base_transform_start (GstBaseTransform * trans)
{
  auto *self = GST_ZC_BASE_TRANSFORM (trans);
  auto *priv = get_priv (self);
  GError *err = NULL;
  gint device_id;
  GstZcMemoryType requested;
  gboolean cpu_fallback;

  {
    std::lock_guard < std::mutex > lk (priv->lock);
    device_id = requested_device_locked (priv);
    requested = priv->memory_type;
    cpu_fallback = priv->cpu_fallback;
    priv->stats = ZcBaseTransformState::Stats ();
  }

  if (!gst_zc_ensure_element_context (GST_ELEMENT (trans), device_id,
          &priv->context, &err)) {
    gst_zc_post_context_error (GST_ELEMENT (self), err, device_id);
    g_clear_error (&err);
    return FALSE;
  }

  GstZcContext *ctx = priv->context;
  if (!gst_zc_context_has_gpu (ctx) &&
      !run_without_gpu (self, requested, cpu_fallback)) {
    gst_clear_object (&priv->context);
    return FALSE;
  }

  GstZcMemoryType resolved =
      gst_zc_context_resolve_memory_type (ctx, requested);
  gpointer stream = NULL;
  if (resolved != GST_ZC_MEMORY_TYPE_SYSTEM) {
    stream = gst_zc_context_new_stream (ctx);
    if (!stream) {
      gst_zc_post_stream_error (GST_ELEMENT (self),
          gst_zc_context_get_device_name (ctx));
      gst_clear_object (&priv->context);
      return FALSE;
    }
  }

  /* Wrappers of foreign frames: host memory registered with CUDA (mapped)
   * and nvcodec's device memory; on the CPU backend, host memory the CPU
   * reads where it is (frames from another process) */
  if (stream) {
    priv->wrap_host = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_MAPPED);
    priv->wrap_device = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_DEVICE);
  } else {
    priv->wrap_host = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_SYSTEM);
  }
  priv->warned_foreign_cuda = FALSE;

  {
    std::lock_guard < std::mutex > lk (priv->lock);
    priv->stream = stream;
    priv->resolved_type = resolved;
    priv->pool_type = GST_ZC_MEMORY_TYPE_AUTO;  /* until decide_allocation */
  }
  GST_INFO_OBJECT (self, "started on %s, %s memory",
      gst_zc_context_get_device_name (ctx),
      gst_zc_memory_type_to_string (resolved));
  return TRUE;
}

static gboolean
check_frame_size (GstZcBaseTransform * self, const GstVideoInfo * info)
{
  if ((guint64) GST_VIDEO_INFO_SIZE (info) <= GST_ZC_MAX_FRAME_BYTES)
    return TRUE;
  GST_ELEMENT_ERROR (self, STREAM, FORMAT,
      ("Frame too large: %dx%d %s needs %" G_GSIZE_FORMAT " bytes, more than "
          "the %" G_GUINT64_FORMAT " bytes gst-zerocopy allocates per frame",
          GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
          GST_VIDEO_INFO_NAME (info), GST_VIDEO_INFO_SIZE (info),
          GST_ZC_MAX_FRAME_BYTES), (NULL));
  return FALSE;
}

/* gst_video_info_from_caps() refuses sizes whose byte count overflows; the
 * size guard above wants a clear message for those too, so recompute the
 * size in 64 bits from the raw caps before trusting the parser. */
static gboolean
parse_video_caps (GstZcBaseTransform * self, GstCaps * caps,
    GstVideoInfo * info)
{
  if (gst_video_info_from_caps (info, caps))
    return check_frame_size (self, info);

  const GstStructure *s = gst_caps_get_structure (caps, 0);
  gint w = 0, h = 0;
  if (gst_structure_get_int (s, "width", &w) &&
      gst_structure_get_int (s, "height", &h) && w > 0 && h > 0 &&
      (guint64) w * (guint64) h * 4 > GST_ZC_MAX_FRAME_BYTES) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Frame too large: %dx%d is more than gst-zerocopy allocates per "
            "frame (%" G_GUINT64_FORMAT " bytes)", w, h,
            GST_ZC_MAX_FRAME_BYTES), ("caps: %" GST_PTR_FORMAT, caps));
    return FALSE;
  }
  GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Invalid video caps"),
      ("%" GST_PTR_FORMAT, caps));
  return FALSE;
}

static gboolean
gst_zc_base_transform_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  auto *self = GST_ZC_BASE_TRANSFORM (trans);
  auto *priv = get_priv (self);
  auto *klass = GST_ZC_BASE_TRANSFORM_GET_CLASS (self);
  GstVideoInfo in_info, out_info;

  if (!parse_video_caps (self, incaps, &in_info) ||
      !parse_video_caps (self, outcaps, &out_info))
    return FALSE;

  priv->in_info = in_info;
  priv->out_info = out_info;
  priv->in_cuda = gst_zc_caps_is_cuda_memory (incaps);
  priv->out_cuda = gst_zc_caps_is_cuda_memory (outcaps);
  if (klass->set_info)
    return klass->set_info (self, incaps, &priv->in_info, outcaps,
        &priv->out_info);
  return TRUE;
}

static gboolean
gst_zc_base_transform_get_unit_size (GstBaseTransform *, GstCaps * caps,
    gsize * size)
{
  GstVideoInfo info;
  if (!gst_video_info_from_caps (&info, caps))
    return FALSE;
  *size = GST_VIDEO_INFO_SIZE (&info);
  return TRUE;
}

/* The output of every element is one frame of the other pad's caps, whatever
 * the padding of the input buffer (which get_unit_size cannot know). */
static gboolean
gst_zc_base_transform_transform_size (GstBaseTransform * trans,
    GstPadDirection, GstCaps *, gsize, GstCaps * othercaps, gsize * othersize)
{
  return gst_zc_base_transform_get_unit_size (trans, othercaps, othersize);
}

/* A frame in nvcodec's device memory becomes, without a copy, a device
 * #GstZcMemory the element works on like its own (it holds the original
 * until the GPU work on it is fenced done). In passthrough it stays as it
 * is. One of another CUDA context or GPU stays as it is too: the element
 * decides (zcupload copies it, zcfilter refuses it). */
static GstFlowReturn
gst_zc_base_transform_submit_input_buffer (GstBaseTransform * trans,
    gboolean is_discont, GstBuffer * input)
{
  auto *self = GST_ZC_BASE_TRANSFORM (trans);
  auto *priv = get_priv (self);
  if (priv->in_cuda && priv->wrap_device &&
      !gst_base_transform_is_passthrough (trans) &&
      gst_zc_buffer_is_cuda_memory (input)) {
    GstBuffer *view = gst_zc_buffer_import_cuda (priv->wrap_device, input,
        FALSE);
    if (view) {
      gst_buffer_unref (input);
      input = view;
      std::lock_guard < std::mutex > lk (priv->lock);
      priv->stats.cuda_memory_buffers++;
    } else if (!priv->warned_foreign_cuda) {
      priv->warned_foreign_cuda = TRUE;
      GST_WARNING_OBJECT (self, "memory:CUDAMemory of another CUDA context "
          "or GPU than this element's (device %d): it cannot be read in "
          "place", gst_zc_context_get_device_id (priv->context));
    }
  }
  return GST_BASE_TRANSFORM_CLASS (gst_zc_base_transform_parent_class)->
      submit_input_buffer (trans, is_discont, input);
}

/* zcupload and zcdownload keep the frame's geometry: every meta but the
 * memory layout (GstVideoMeta, which the output buffer has its own of)
 * stays valid on the output, the crop region in particular. */
static gboolean
gst_zc_base_transform_transform_meta (GstBaseTransform *, GstBuffer *,
    GstMeta * meta, GstBuffer *)
{
  return meta->info->api != GST_VIDEO_META_API_TYPE;
}

static gboolean
gst_zc_base_transform_stop (GstBaseTransform * trans)
{
  auto *priv = get_priv (GST_ZC_BASE_TRANSFORM (trans));
  gpointer stream;

  {
    std::lock_guard < std::mutex > lk (priv->lock);
    stream = priv->stream;
    priv->stream = nullptr;
  }
  /* Buffers still downstream keep their fences: events outlive the stream
   * they were recorded on, so destroying it needs no wait. */
  if (stream)
    gst_zc_context_free_stream (priv->context, stream);
  {
    std::lock_guard < std::mutex > lk (priv->pools_lock);
    for (auto & m : priv->made_pools) {
      gst_object_unref (m.pool);
      gst_caps_unref (m.caps);
    }
    priv->made_pools.clear ();
  }
  /* Wrapped frames of upstream (adopted, or nvcodec's) go back to their
   * owners once the GPU is done with them, on the allocator's thread:
   * none stays held past stop. */
  for (GstAllocator * a : {priv->wrap_host, priv->wrap_device})
    if (a)
      gst_zc_allocator_wait_released (a);
  gst_clear_object (&priv->wrap_host);
  gst_clear_object (&priv->wrap_device);
  gst_clear_object (&priv->context);
  return TRUE;
}

static void
gst_zc_base_transform_finalize (GObject * object)
{
  delete get_priv (GST_ZC_BASE_TRANSFORM (object));
  G_OBJECT_CLASS (gst_zc_base_transform_parent_class)->finalize (object);
}

static void
gst_zc_base_transform_class_init (GstZcBaseTransformClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_zc_base_transform_set_property;
  gobject_class->get_property = gst_zc_base_transform_get_property;
  gobject_class->finalize = gst_zc_base_transform_finalize;

  g_object_class_install_property (gobject_class, PROP_DEVICE_ID,
      g_param_spec_int ("device-id", "Device ID",
          "CUDA device to run on (-1 = the one the pipeline already shares, "
          "else the first)", -1, G_MAXINT,
          GST_ZC_BASE_TRANSFORM_DEFAULT_DEVICE_ID,
          (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
              GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property (gobject_class, PROP_MEMORY_TYPE,
      g_param_spec_enum ("memory-type", "Memory type",
          "Memory this element allocates frames in: auto picks mapped pinned "
          "memory on discrete GPUs and Jetson Xavier/Orin, managed memory on "
          "older Jetsons, and the CPU backend without a GPU",
          GST_TYPE_ZC_MEMORY_TYPE, GST_ZC_BASE_TRANSFORM_DEFAULT_MEMORY_TYPE,
          (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
              GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property (gobject_class, PROP_CPU_FALLBACK,
      g_param_spec_boolean ("cpu-fallback", "CPU fallback",
          "With memory-type=auto and no usable CUDA device, run on the CPU "
          "backend and post a warning (true), or fail with an error (false)",
          GST_ZC_BASE_TRANSFORM_DEFAULT_CPU_FALLBACK,
          (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
              GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property (gobject_class, PROP_STATS,
      g_param_spec_boxed ("stats", "Statistics",
          "Counters since start: buffers, zero-copy-buffers, copied-buffers, "
          "bytes-copied, bytes-staged (zcfilter: frame bytes the copy engines "
          "moved between mapped and device memory around its kernels), "
          "cuda-memory-buffers (frames of nvcodec's memory:CUDAMemory read or "
          "written in place), adopted-buffers, registrations and "
          "bytes-registered (zcupload: foreign system memory registered with "
          "CUDA and used in place) (guint64), pinned-bytes (what the pools "
          "this element made hold now of pinned memory, or on the CPU "
          "backend of system memory: the memory GST_ZC_PINNED_LIMIT caps) "
          "(guint64), "
          "and backend (cuda or cpu), device-name, memory-type (strings)", GST_TYPE_STRUCTURE,
          (GParamFlags) (G_PARAM_READABLE | G_PARAM_STATIC_STRINGS)));

  element_class->set_context =
      GST_DEBUG_FUNCPTR (gst_zc_base_transform_set_context);

  trans_class->start = GST_DEBUG_FUNCPTR (gst_zc_base_transform_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_zc_base_transform_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_zc_base_transform_set_caps);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_zc_base_transform_query);
  trans_class->submit_input_buffer =
      GST_DEBUG_FUNCPTR (gst_zc_base_transform_submit_input_buffer);
  trans_class->transform_size =
      GST_DEBUG_FUNCPTR (gst_zc_base_transform_transform_size);
  trans_class->get_unit_size =
      GST_DEBUG_FUNCPTR (gst_zc_base_transform_get_unit_size);
  trans_class->transform_meta =
      GST_DEBUG_FUNCPTR (gst_zc_base_transform_transform_meta);

  gst_type_mark_as_plugin_api (GST_TYPE_ZC_BASE_TRANSFORM,
      (GstPluginAPIFlags) 0);
  gst_type_mark_as_plugin_api (GST_TYPE_ZC_MEMORY_TYPE, (GstPluginAPIFlags) 0);
}

static void
gst_zc_base_transform_init (GstZcBaseTransform * self)
{
  static_cast < GstZcBaseTransformPrivate * >
      (gst_zc_base_transform_get_instance_private (self))->state =
      new ZcBaseTransformState;
}

GstZcContext *
gst_zc_base_transform_get_context (GstZcBaseTransform * self)
{
  return get_priv (self)->context;
}

gpointer
gst_zc_base_transform_get_stream (GstZcBaseTransform * self)
{
  return get_priv (self)->stream;
}

gboolean
gst_zc_base_transform_uses_gpu (GstZcBaseTransform * self)
{
  return get_priv (self)->stream != nullptr;
}

const GstVideoInfo *
gst_zc_base_transform_get_in_info (GstZcBaseTransform * self)
{
  return &get_priv (self)->in_info;
}

const GstVideoInfo *
gst_zc_base_transform_get_out_info (GstZcBaseTransform * self)
{
  return &get_priv (self)->out_info;
}


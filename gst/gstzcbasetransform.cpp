/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * GstZcBaseTransform: what zcupload, zcfilter and zcdownload share. It owns
 * the device choice (device-id, memory-type, cpu-fallback), the shared
 * context (GstContext protocol), the element's own CUDA stream, the parsed
 * video infos, the frame size guard and the stats.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcbasetransform.h"

#include <gst/zerocopy/gstzcgpupasses-private.h>

#include <mutex>
#include <vector>

GST_DEBUG_CATEGORY_STATIC (gst_zc_base_transform_debug);
#define GST_CAT_DEFAULT gst_zc_base_transform_debug

enum
{
  PROP_0,
  PROP_DEVICE_ID,
  PROP_MEMORY_TYPE,
  PROP_CPU_FALLBACK,
  PROP_STATS,
};

#define DEFAULT_DEVICE_ID -1
#define DEFAULT_MEMORY_TYPE GST_ZC_MEMORY_TYPE_AUTO
#define DEFAULT_CPU_FALLBACK TRUE

/* C++ state; GObject's private area holds only a pointer to it, because
 * GObject neither constructs nor destroys what it places there. */
struct ZcBaseTransformState
{
  std::mutex lock;              /* properties and stats */
  gint device_id = DEFAULT_DEVICE_ID;
  GstZcMemoryType memory_type = DEFAULT_MEMORY_TYPE;
  gboolean cpu_fallback = DEFAULT_CPU_FALLBACK;

  guint64 buffers = 0;
  guint64 zero_copy_buffers = 0;
  guint64 copied_buffers = 0;
  guint64 bytes_copied = 0;
  guint64 bytes_staged = 0;
  guint64 cuda_memory_buffers = 0;
  guint64 adopted_buffers = 0;
  guint64 registrations = 0;
  guint64 bytes_registered = 0;
  /* the device of a gst.cuda.context set on the element, for device-id=-1 */
  gint cuda_device_hint = -1;

  /* from start() to stop() */
  GstZcContext *context = nullptr;
  gpointer stream = nullptr;
  GstZcMemoryType resolved_type = GST_ZC_MEMORY_TYPE_SYSTEM;
  /* memory type of the output pool decide_allocation settled on */
  GstZcMemoryType pool_type = GST_ZC_MEMORY_TYPE_AUTO;

  GstVideoInfo in_info;
  GstVideoInfo out_info;
  /* the pads' memory is memory:CUDAMemory (set_caps) */
  gboolean in_cuda = FALSE;
  gboolean out_cuda = FALSE;
  /* allocators of the wrappers around foreign memory (start to stop) */
  GstAllocator *wrap_mapped = nullptr;
  GstAllocator *wrap_device = nullptr;
  gboolean warned_foreign_cuda = FALSE;

  /* Pools this element made (proposed upstream, or its own output pool),
   * kept so that a renegotiation to caps it already had takes the same pool
   * again instead of pinning fresh memory. Streaming thread; dropped at
   * stop(). */
  struct MadePool
  {
    GstBufferPool *pool;
    GstCaps *caps;
    GstZcMemoryType type;
    gboolean video_meta;
  };
  std::vector < MadePool > made_pools;
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

static inline ZcBaseTransformState *
get_priv (GstZcBaseTransform * self)
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
stats_structure_locked (GstZcBaseTransform * self)
{
  auto *priv = get_priv (self);
  gboolean gpu = priv->stream != nullptr;
  return gst_structure_new ("application/x-zerocopy-stats",
      "buffers", G_TYPE_UINT64, priv->buffers,
      "zero-copy-buffers", G_TYPE_UINT64, priv->zero_copy_buffers,
      "copied-buffers", G_TYPE_UINT64, priv->copied_buffers,
      "bytes-copied", G_TYPE_UINT64, priv->bytes_copied,
      "bytes-staged", G_TYPE_UINT64, priv->bytes_staged,
      "cuda-memory-buffers", G_TYPE_UINT64, priv->cuda_memory_buffers,
      "adopted-buffers", G_TYPE_UINT64, priv->adopted_buffers,
      "registrations", G_TYPE_UINT64, priv->registrations,
      "bytes-registered", G_TYPE_UINT64, priv->bytes_registered,
      "backend", G_TYPE_STRING, gpu ? "cuda" : "cpu",
      "device-name", G_TYPE_STRING, priv->context ?
      gst_zc_context_get_device_name (priv->context) : "none",
      "memory-type", G_TYPE_STRING,
      gst_zc_memory_type_to_string (priv->context ? priv->resolved_type :
          priv->memory_type), NULL);
}

static GstStructure *
stats_structure (GstZcBaseTransform * self)
{
  GstStructure *s;
  {
    std::lock_guard < std::mutex > lk (get_priv (self)->lock);
    s = stats_structure_locked (self);
  }
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

/* The consumer picks the memory of its input: upstream writes straight
 * into a pool of this element's memory type. In passthrough GstBaseTransform
 * forwards the query downstream instead. */
static gboolean
gst_zc_base_transform_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  if (gst_base_transform_is_passthrough (trans))
    return GST_BASE_TRANSFORM_CLASS (gst_zc_base_transform_parent_class)->
        propose_allocation (trans, decide_query, query);
  return gst_zc_base_transform_propose_zc_pool (base, query,
      gst_zc_base_transform_get_memory_type (base),
      gst_zc_base_transform_wants_video_meta (decide_query));
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
 * gst_zc_base_transform_decide_zc_output:
 *
 * A decide_allocation for elements whose output is zero-copy memory of any
 * type: whatever zero-copy memory downstream asks for, else this element's
 * own. Not the default: zcupload and zcdownload decide otherwise and chain
 * up to GstBaseTransform's.
 */
gboolean
gst_zc_base_transform_decide_zc_output (GstBaseTransform * trans,
    GstQuery * query)
{
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  return gst_zc_base_transform_decide_zc_pool (base, query,
      GST_ZC_MEMORY_TYPE_AUTO, gst_zc_base_transform_get_memory_type (base));
}

/**
 * gst_zc_base_transform_sync_controlled_values:
 *
 * A before_transform for elements with controllable properties: controller
 * bindings follow the stream time of each frame, as in videobalance.
 */
void
gst_zc_base_transform_sync_controlled_values (GstBaseTransform * trans,
    GstBuffer * buffer)
{
  GstClockTime ts = gst_segment_to_stream_time (&trans->segment,
      GST_FORMAT_TIME, GST_BUFFER_PTS (buffer));
  if (GST_CLOCK_TIME_IS_VALID (ts))
    gst_object_sync_values (GST_OBJECT (trans), ts);
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
      priv->cuda_memory_buffers++;
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

static GQuark
fallback_warned_quark (void)
{
  static GQuark q = g_quark_from_static_string ("gst-zc-cpu-fallback-warned");
  return q;
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
    priv->buffers = priv->zero_copy_buffers = 0;
    priv->copied_buffers = priv->bytes_copied = 0;
    priv->bytes_staged = 0;
    priv->cuda_memory_buffers = priv->adopted_buffers = 0;
    priv->registrations = priv->bytes_registered = 0;
  }

  if (!gst_zc_ensure_element_context (GST_ELEMENT (trans), device_id,
          &priv->context, &err)) {
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("%s", err ? err->message : "Could not open the CUDA device"),
        ("device-id=%d", device_id));
    g_clear_error (&err);
    return FALSE;
  }

  GstZcContext *ctx = priv->context;
  if (!gst_zc_context_has_gpu (ctx)) {
    const gchar *why = gst_zc_context_get_no_gpu_reason (ctx);
    if (GST_ZC_BASE_TRANSFORM_GET_CLASS (self)->needs_gpu) {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
          ("%s runs CUDA kernels and needs a CUDA GPU, and there is none: "
              "%s", GST_ELEMENT_NAME (self), why),
          ("this element has no CPU backend: nothing would run the kernel"));
      gst_clear_object (&priv->context);
      return FALSE;
    }
    if (requested == GST_ZC_MEMORY_TYPE_MAPPED ||
        requested == GST_ZC_MEMORY_TYPE_MANAGED ||
        requested == GST_ZC_MEMORY_TYPE_DEVICE) {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
          ("memory-type=%s needs a CUDA device, and there is none",
              gst_zc_memory_type_to_string (requested)),
          ("%s. Use memory-type=auto to run on the CPU backend.", why));
      gst_clear_object (&priv->context);
      return FALSE;
    }
    if (requested == GST_ZC_MEMORY_TYPE_AUTO && !cpu_fallback) {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
          ("No CUDA device, and cpu-fallback is disabled"), ("%s", why));
      gst_clear_object (&priv->context);
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
  }

  GstZcMemoryType resolved =
      gst_zc_context_resolve_memory_type (ctx, requested);
  gpointer stream = NULL;
  if (resolved != GST_ZC_MEMORY_TYPE_SYSTEM) {
    stream = gst_zc_context_new_stream (ctx);
    if (!stream) {
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
          ("Could not create a CUDA stream on %s",
              gst_zc_context_get_device_name (ctx)),
          ("see GST_DEBUG=zccontext:4 for the CUDA error"));
      gst_clear_object (&priv->context);
      return FALSE;
    }
  }

  /* Wrappers of foreign frames: host memory registered with CUDA (mapped)
   * and nvcodec's device memory */
  if (stream) {
    priv->wrap_mapped = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_MAPPED);
    priv->wrap_device = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_DEVICE);
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
  for (auto & m : priv->made_pools) {
    gst_object_unref (m.pool);
    gst_caps_unref (m.caps);
  }
  priv->made_pools.clear ();
  /* Wrapped frames of upstream (adopted, or nvcodec's) go back to their
   * owners once the GPU is done with them, on the allocator's thread:
   * none stays held past stop. */
  for (GstAllocator * a : {priv->wrap_mapped, priv->wrap_device})
    if (a)
      gst_zc_allocator_wait_released (a);
  gst_clear_object (&priv->wrap_mapped);
  gst_clear_object (&priv->wrap_device);
  gst_clear_object (&priv->context);
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

/* The output of every element is one frame of the other pad's caps, whatever
 * the padding of the input buffer (which get_unit_size cannot know). */
static gboolean
gst_zc_base_transform_transform_size (GstBaseTransform *, GstPadDirection,
    GstCaps *, gsize, GstCaps * othercaps, gsize * othersize)
{
  GstVideoInfo info;
  if (!gst_video_info_from_caps (&info, othercaps))
    return FALSE;
  *othersize = GST_VIDEO_INFO_SIZE (&info);
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

/* zcupload and zcdownload keep the frame's geometry: every meta but the
 * memory layout (GstVideoMeta, which the output buffer has its own of)
 * stays valid on the output, the crop region in particular. */
static gboolean
gst_zc_base_transform_transform_meta (GstBaseTransform *, GstBuffer *,
    GstMeta * meta, GstBuffer *)
{
  return meta->info->api != GST_VIDEO_META_API_TYPE;
}

static void
gst_zc_base_transform_finalize (GObject * object)
{
  auto *self = GST_ZC_BASE_TRANSFORM (object);
  auto *priv = get_priv (self);

  gst_clear_object (&priv->wrap_mapped);
  gst_clear_object (&priv->wrap_device);
  gst_clear_object (&priv->context);
  delete priv;

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
          "else the first)", -1, G_MAXINT, DEFAULT_DEVICE_ID,
          (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
              GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property (gobject_class, PROP_MEMORY_TYPE,
      g_param_spec_enum ("memory-type", "Memory type",
          "Memory this element allocates frames in: auto picks mapped pinned "
          "memory on discrete GPUs and Jetson Xavier/Orin, managed memory on "
          "older Jetsons, and the CPU backend without a GPU",
          GST_TYPE_ZC_MEMORY_TYPE, DEFAULT_MEMORY_TYPE,
          (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
              GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property (gobject_class, PROP_CPU_FALLBACK,
      g_param_spec_boolean ("cpu-fallback", "CPU fallback",
          "With memory-type=auto and no usable CUDA device, run on the CPU "
          "backend and post a warning (true), or fail with an error (false)",
          DEFAULT_CPU_FALLBACK,
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
          "CUDA and used in place) (guint64), "
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
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_base_transform_propose_allocation);
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
  gst_video_info_init (&get_priv (self)->in_info);
  gst_video_info_init (&get_priv (self)->out_info);
}

/* ---------------------------------------------------------------------- */

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

GstZcMemoryType
gst_zc_base_transform_get_memory_type (GstZcBaseTransform * self)
{
  return get_priv (self)->resolved_type;
}

GstZcMemoryType
gst_zc_base_transform_get_pool_memory_type (GstZcBaseTransform * self)
{
  return get_priv (self)->pool_type;
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

/**
 * gst_zc_base_transform_count_buffer:
 * @bytes_copied: bytes the CPU copied for this buffer, 0 for zero-copy
 */
void
gst_zc_base_transform_count_buffer (GstZcBaseTransform * self,
    gsize bytes_copied)
{
  auto *priv = get_priv (self);
  std::lock_guard < std::mutex > lk (priv->lock);
  priv->buffers++;
  if (bytes_copied) {
    priv->copied_buffers++;
    priv->bytes_copied += bytes_copied;
  } else {
    priv->zero_copy_buffers++;
  }
}

/* Bytes a kernel pass read through the copy engines into device memory
 * instead of over the bus from the kernel itself: the frame still crosses
 * the bus once, so this is not a frame copy (copied-buffers), but stats
 * show it. */
void
gst_zc_base_transform_count_staged (GstZcBaseTransform * self, gsize bytes)
{
  auto *priv = get_priv (self);
  std::lock_guard < std::mutex > lk (priv->lock);
  priv->bytes_staged += bytes;
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
  GstBufferPool *pool = reuse_made_pool (priv, caps, memory_type, video_meta);
  if (pool) {
    GST_DEBUG_OBJECT (self, "reusing pool %" GST_PTR_FORMAT, pool);
    return pool;
  }
  pool = gst_zc_buffer_pool_new (priv->context, memory_type);
  if (!pool)
    return NULL;
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, GST_VIDEO_INFO_SIZE (&info),
      min_buffers, 0);
  if (video_meta)
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
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
      memory_type, video_meta});
  return pool;
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
    gst_structure_free (config);
    gst_query_add_allocation_pool (query, pool, size, 2, 0);
    gst_object_unref (pool);
  }
  return TRUE;
}

/* Copies of @caps with every structure's features set to @feature alone
 * (NULL: system memory). */
GstCaps *
gst_zc_caps_with_feature (GstCaps * caps, const gchar * feature)
{
  GstCaps *res = gst_caps_new_empty ();
  guint n = gst_caps_get_size (caps);

  for (guint i = 0; i < n; i++) {
    GstCapsFeatures *f = gst_caps_get_features (caps, i);
    if (f && gst_caps_features_is_any (f))
      continue;
    GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
    GstCapsFeatures *nf = feature ? gst_caps_features_new_single (feature) :
        gst_caps_features_new_empty ();
    res = gst_caps_merge_structure_full (res, s, nf);
  }
  return res;
}

/* Plane @plane of @buf: from its video meta if any, else from @info */
void
gst_zc_video_plane_layout (GstBuffer * buf, const GstVideoInfo * info,
    guint plane, gsize * offset, gsize * stride)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
  if (meta) {
    *offset = meta->offset[plane];
    *stride = (gsize) meta->stride[plane];
  } else {
    *offset = GST_VIDEO_INFO_PLANE_OFFSET (info, plane);
    *stride = (gsize) GST_VIDEO_INFO_PLANE_STRIDE (info, plane);
  }
}

guint32
gst_zc_video_plane_row_bytes (const GstVideoInfo * info, guint plane)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  gint comp[GST_VIDEO_MAX_COMPONENTS];
  gst_video_format_info_component (finfo, plane, comp);
  guint w = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH (finfo, comp[0],
      GST_VIDEO_INFO_WIDTH (info));
  /* Packed 4:2:2 rows hold whole macropixels: an odd width ends with a
   * Y0 U Y1 V group whose Y1 is padding */
  if (GST_VIDEO_FORMAT_INFO_W_SUB (finfo, 1) && GST_VIDEO_INFO_N_PLANES (info) == 1)
    w = GST_ROUND_UP_2 (w);
  return w * GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, comp[0]);
}

guint32
gst_zc_video_plane_rows (const GstVideoInfo * info, guint plane)
{
  gint comp[GST_VIDEO_MAX_COMPONENTS];
  gst_video_format_info_component (info->finfo, plane, comp);
  return GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (info->finfo, comp[0],
      GST_VIDEO_INFO_HEIGHT (info));
}

/**
 * gst_zc_buffer_gpu_memory:
 * @device: a CUDA device
 *
 * Returns: (transfer none) (nullable): the GPU memory (not system memory)
 *   of @device that is all of @buf, or %NULL
 */
GstZcMemory *
gst_zc_buffer_gpu_memory (GstBuffer * buf, gint device)
{
  if (gst_buffer_n_memory (buf) != 1)
    return NULL;
  GstMemory *m = gst_buffer_peek_memory (buf, 0);
  if (!gst_is_zc_memory (m))
    return NULL;
  auto *zm = (GstZcMemory *) m;
  if (gst_zc_memory_get_memory_type (zm) == GST_ZC_MEMORY_TYPE_SYSTEM ||
      gst_zc_memory_get_device_id (zm) != device)
    return NULL;
  return zm;
}

/**
 * gst_zc_base_transform_copy_frame_gpu:
 * @inbuf: a frame of the input caps: GPU memory of this device, or any
 *   CPU-mappable buffer
 * @outbuf: a frame of the same format and size in GPU memory of this device
 *
 * Copies a frame with the copy engines, plane by plane (strides may differ),
 * on the element's stream: after the fences of both frames, and fencing both.
 * The host does not wait, except for a foreign input in pinned memory, which
 * the caller may release as soon as this returns.
 *
 * Returns: %FALSE with an element error posted on failure
 */
static gboolean
gst_zc_base_transform_copy_frame_gpu (GstZcBaseTransform * self,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  auto *priv = get_priv (self);
  /* not const: gst_video_frame_map() takes a non-const info before 1.20 */
  GstVideoInfo *info = &priv->in_info;
  gint dev = gst_zc_context_get_device_id (priv->context);
  GstZcMemory *in_mem = gst_zc_buffer_gpu_memory (inbuf, dev);
  GstZcMemory *out_mem = gst_zc_buffer_gpu_memory (outbuf, dev);
  GstVideoFrame in_frame;

  if (!out_mem || !priv->stream) {
    GST_ELEMENT_ERROR (self, CORE, FAILED,
        ("Internal error: GPU copy into memory that is not this device's"),
        (NULL));
    return FALSE;
  }
  if (!in_mem && !gst_video_frame_map (&in_frame, info, inbuf, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, RESOURCE, READ, ("Could not map input frame"),
        (NULL));
    return FALSE;
  }

  GstZcGpuPlaneCopy planes[GST_VIDEO_MAX_PLANES];
  guint n = GST_VIDEO_INFO_N_PLANES (info);
  auto *dst = (guint8 *) gst_zc_memory_get_device_pointer (out_mem);
  const guint8 *src = in_mem ?
      (const guint8 *) gst_zc_memory_get_device_pointer (in_mem) : NULL;
  for (guint i = 0; i < n; i++) {
    gsize in_off = 0, out_off;
    GstZcGpuPlaneCopy & p = planes[i];
    gst_zc_video_plane_layout (outbuf, info, i, &out_off, &p.dst_stride);
    p.dst = dst + out_off;
    if (in_mem) {
      gst_zc_video_plane_layout (inbuf, info, i, &in_off, &p.src_stride);
      p.src = src + in_off;
    } else {
      p.src = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&in_frame, i);
      p.src_stride = GST_VIDEO_FRAME_PLANE_STRIDE (&in_frame, i);
    }
    p.row_bytes = gst_zc_video_plane_row_bytes (info, i);
    p.rows = gst_zc_video_plane_rows (info, i);
  }
  GstZcGpuResult r;
  gboolean copied = gst_zc_gpu_copy_planes (dev, priv->stream, in_mem,
      out_mem, planes, n, &r);
  if (!in_mem)
    gst_video_frame_unmap (&in_frame);
  if (!copied) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("%s: %s", r.what, r.name),
        ("%s", r.detail));
    return FALSE;
  }
  return TRUE;
}

/**
 * gst_zc_base_transform_check_input:
 * @inbuf: a buffer that arrived on the sink pad
 *
 * Checks, before any kernel or copy touches it, that @inbuf holds a whole
 * frame of the negotiated input caps: every plane, at the offset and stride
 * its #GstVideoMeta (or the caps) give, ends inside the buffer.
 *
 * Returns: %GST_FLOW_OK, or %GST_FLOW_ERROR with one element error posted
 * that says how short the buffer is
 */
GstFlowReturn
gst_zc_base_transform_check_input (GstZcBaseTransform * self,
    GstBuffer * inbuf)
{
  auto *priv = get_priv (self);
  const GstVideoInfo *info = &priv->in_info;
  gsize size = gst_buffer_get_size (inbuf);
  GstVideoMeta *meta = gst_buffer_get_video_meta (inbuf);
  guint n = GST_VIDEO_INFO_N_PLANES (info);
  gsize need = 0;
  guint worst = 0;

  /* as gst_video_frame_map() has it: the meta's planes are the format's,
   * and it may describe a larger (padded) frame, not a smaller one */
  if (meta && (meta->n_planes != n ||
          meta->width < (guint) GST_VIDEO_INFO_WIDTH (info) ||
          meta->height < (guint) GST_VIDEO_INFO_HEIGHT (info))) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Buffer's video meta does not match the caps: %ux%u with %u "
            "plane(s), the caps say %dx%d %s", meta->width, meta->height,
            meta->n_planes, GST_VIDEO_INFO_WIDTH (info),
            GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_NAME (info)),
        ("%" GST_PTR_FORMAT, inbuf));
    return GST_FLOW_ERROR;
  }
  for (guint p = 0; p < n; p++) {
    gsize off, stride;
    gst_zc_video_plane_layout (inbuf, info, p, &off, &stride);
    guint32 rows = gst_zc_video_plane_rows (info, p);
    guint32 row = gst_zc_video_plane_row_bytes (info, p);
    if (rows == 0)
      continue;
    /* in 64 bits: a meta can hold any offset and stride */
    guint64 end = (guint64) off + (guint64) stride * (rows - 1) + row;
    if (stride < row)
      end = G_MAXUINT64;
    if (end > need) {
      need = (gsize) MIN (end, (guint64) G_MAXSIZE);
      worst = p;
    }
  }
  if (need <= size)
    return GST_FLOW_OK;
  GST_ELEMENT_ERROR (self, STREAM, FORMAT,
      ("Buffer too small for its caps: %" G_GSIZE_FORMAT " bytes, but a "
          "%dx%d %s frame%s needs %" G_GSIZE_FORMAT, size,
          GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
          GST_VIDEO_INFO_NAME (info), meta ? " with this buffer's video meta"
          : "", need),
      ("plane %u ends past the end of the buffer; refusing it before any "
          "kernel or copy reads it", worst));
  return GST_FLOW_ERROR;
}

/**
 * gst_zc_buffer_gpu_writable:
 *
 * Whether a kernel may write @buf in place: nobody else holds the buffer or
 * its memory, and no memory is read-only. GStreamer's writability leaves
 * the last out (it only stops write maps), and kernels write through device
 * pointers without a map: foreign memory registered read-only with CUDA
 * (adopted by zcupload) or a decoder's frame would fault or be changed
 * under its owner.
 */
gboolean
gst_zc_buffer_gpu_writable (GstBuffer * buf)
{
  if (!gst_buffer_is_writable (buf) || !gst_buffer_is_all_memory_writable (buf))
    return FALSE;
  for (guint i = 0; i < gst_buffer_n_memory (buf); i++) {
    if (GST_MEMORY_IS_READONLY (gst_buffer_peek_memory (buf, i)))
      return FALSE;
  }
  return TRUE;
}

/* Whether @buf is one memory of device type */
gboolean
gst_zc_buffer_is_device_memory (GstBuffer * buf)
{
  GstMemory *m = gst_buffer_peek_memory (buf, 0);
  return gst_buffer_n_memory (buf) == 1 && gst_is_zc_memory (m) &&
      gst_zc_memory_get_memory_type ((GstZcMemory *) m) ==
      GST_ZC_MEMORY_TYPE_DEVICE;
}

/**
 * gst_zc_base_transform_copy_frame:
 * @inbuf: a frame of the input caps
 * @outbuf: a frame of the same format and size
 *
 * Copies @inbuf into @outbuf and counts it in the stats as a copy: with the
 * copy engines, on the stream and fenced, when either side is device memory;
 * otherwise on the CPU through frame maps (which wait on the fences),
 * honouring both frames' strides.
 *
 * Returns: %GST_FLOW_OK, or %GST_FLOW_ERROR with an element error posted
 */
GstFlowReturn
gst_zc_base_transform_copy_frame (GstZcBaseTransform * self,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  auto *priv = get_priv (self);
  GstVideoFrame in_frame, out_frame;

  if (priv->stream && (gst_zc_buffer_is_device_memory (inbuf) ||
          gst_zc_buffer_is_device_memory (outbuf))) {
    if (!gst_zc_base_transform_copy_frame_gpu (self, inbuf, outbuf))
      return GST_FLOW_ERROR;
  } else {
    if (!gst_video_frame_map (&in_frame, &priv->in_info, inbuf,
            GST_MAP_READ)) {
      GST_ELEMENT_ERROR (self, RESOURCE, READ,
          ("Could not map the input frame for the CPU"),
          ("%" GST_PTR_FORMAT "; GPU work on it may have failed, see "
              "GST_DEBUG=zcmemory:2", inbuf));
      return GST_FLOW_ERROR;
    }
    if (!gst_video_frame_map (&out_frame, &priv->out_info, outbuf,
            GST_MAP_WRITE)) {
      gst_video_frame_unmap (&in_frame);
      GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
          ("Could not map the output frame"), (NULL));
      return GST_FLOW_ERROR;
    }
    /* Row by row over the bytes gst_zc_video_plane_row_bytes() counts:
     * gst_video_frame_copy() leaves out the last chroma pair of an odd
     * width of packed 4:2:2 */
    gboolean ok = GST_VIDEO_FRAME_N_PLANES (&in_frame) ==
        GST_VIDEO_FRAME_N_PLANES (&out_frame);
    for (guint p = 0; ok && p < GST_VIDEO_FRAME_N_PLANES (&in_frame); p++) {
      guint32 row = gst_zc_video_plane_row_bytes (&priv->in_info, p);
      guint32 rows = gst_zc_video_plane_rows (&priv->in_info, p);
      const guint8 *s = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA
          (&in_frame, p);
      guint8 *d = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&out_frame, p);
      gint ss = GST_VIDEO_FRAME_PLANE_STRIDE (&in_frame, p);
      gint ds = GST_VIDEO_FRAME_PLANE_STRIDE (&out_frame, p);
      for (guint32 y = 0; y < rows; y++)
        memcpy (d + (gsize) y * ds, s + (gsize) y * ss, row);
    }
    gst_video_frame_unmap (&out_frame);
    gst_video_frame_unmap (&in_frame);
    if (!ok) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not copy the frame"),
          (NULL));
      return GST_FLOW_ERROR;
    }
  }
  gst_zc_base_transform_count_buffer (self,
      GST_VIDEO_INFO_SIZE (&priv->out_info));
  return GST_FLOW_OK;
}

/**
 * gst_zc_caps_is_cuda_memory:
 *
 * Returns: whether the first structure of @caps has the memory:CUDAMemory
 *   feature of GStreamer's CUDA elements
 */
gboolean
gst_zc_caps_is_cuda_memory (GstCaps * caps)
{
  if (!caps || gst_caps_is_empty (caps) || gst_caps_is_any (caps))
    return FALSE;
  GstCapsFeatures *f = gst_caps_get_features (caps, 0);
  return f && gst_caps_features_contains (f,
      GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY_NVCODEC);
}

gboolean
gst_zc_base_transform_in_cuda_memory (GstZcBaseTransform * self)
{
  return get_priv (self)->in_cuda;
}

gboolean
gst_zc_base_transform_out_cuda_memory (GstZcBaseTransform * self)
{
  return get_priv (self)->out_cuda;
}

GstAllocator *
gst_zc_base_transform_get_wrap_allocator (GstZcBaseTransform * self,
    GstZcMemoryType memory_type)
{
  auto *priv = get_priv (self);
  return memory_type == GST_ZC_MEMORY_TYPE_DEVICE ? priv->wrap_device :
      priv->wrap_mapped;
}

/**
 * gst_zc_base_transform_count_adopted:
 * @registered: bytes registered with CUDA for this frame (0 when its memory
 *   was registered before)
 *
 * Counts a foreign host frame that is used in place (no copy).
 */
void
gst_zc_base_transform_count_adopted (GstZcBaseTransform * self,
    gsize registered)
{
  auto *priv = get_priv (self);
  std::lock_guard < std::mutex > lk (priv->lock);
  priv->adopted_buffers++;
  if (registered) {
    priv->registrations++;
    priv->bytes_registered += registered;
  }
}

/**
 * gst_zc_base_transform_import_output:
 * @outbuf: an output frame of one GstCudaMemory of the shared context
 *
 * The view of @outbuf that kernels and copies write: a device #GstZcMemory
 * over the same bytes. Give it back with
 * gst_zc_base_transform_release_output() before @outbuf leaves.
 *
 * Returns: (transfer full) (nullable): the view, or %NULL with an element
 *   error posted
 */
GstBuffer *
gst_zc_base_transform_import_output (GstZcBaseTransform * self,
    GstBuffer * outbuf)
{
  auto *priv = get_priv (self);
  GstBuffer *view = priv->wrap_device ?
      gst_zc_buffer_import_cuda (priv->wrap_device, outbuf, TRUE) : NULL;
  if (!view) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Could not write the output frame in CUDA memory"),
        ("the output buffer is not one GstCudaMemory of this element's "
            "CUDA context: %" GST_PTR_FORMAT, outbuf));
    return NULL;
  }
  std::lock_guard < std::mutex > lk (priv->lock);
  priv->cuda_memory_buffers++;
  return view;
}

/**
 * gst_zc_base_transform_release_output:
 * @view: (transfer full): what gst_zc_base_transform_import_output() gave
 *
 * Waits until the GPU work written into @view is done, then drops it: the
 * CUDA elements of GStreamer 1.22 read a frame they receive at once, on
 * their own stream, so it must be finished when it leaves.
 *
 * Returns: %GST_FLOW_OK, or %GST_FLOW_ERROR with an element error posted
 */
GstFlowReturn
gst_zc_base_transform_release_output (GstZcBaseTransform * self,
    GstBuffer * view)
{
  auto *mem = (GstZcMemory *) gst_buffer_peek_memory (view, 0);
  gboolean ok = gst_zc_memory_wait_cpu (mem);
  gst_buffer_unref (view);
  if (!ok) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("The GPU work on the output frame failed"),
        ("see GST_DEBUG=zcmemory:2 for the CUDA error"));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

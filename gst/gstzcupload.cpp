/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-zcupload
 * @title: zcupload
 *
 * Makes system-memory video GPU-visible without copying it where it can.
 * zcupload answers its upstream's ALLOCATION query with a #GstZcBufferPool,
 * so a producer that takes the pool (videotestsrc, appsrc pushing pool
 * buffers, software decoders, v4l2src io-mode=userptr) writes each frame
 * straight into pinned memory the GPU maps, and zcupload passes that buffer
 * on untouched: 0 bytes copied.
 *
 * A producer that keeps its own pool (a decoder, imagefreeze, most network
 * sources) writes system memory zcupload did not allocate. With `adopt`
 * (the default) zcupload registers that memory with CUDA the first time it
 * sees it (`cudaHostRegister`) and passes it on in place, as read-only
 * memory: kernels read it over the bus where it is (not with
 * `memory-type=device`, which copies every frame). The
 * registration stays with the memory until its owner frees it, so a pool
 * that recycles its buffers, or a source that repeats one frame, pays for
 * it once; `stats` counts `adopted-buffers`, `registrations` and
 * `bytes-registered`. Two heap allocations side by side share a page: a
 * frame uses its neighbour's registration for that page and registers the
 * rest. Past `adopt-max-bytes` registered in the process, for memory that
 * cannot be registered, or for memory over pages whose registration
 * outlived the memory it was made for, the frame is copied once into a
 * pool buffer, honouring its #GstVideoMeta strides, and counted in
 * `stats`.
 *
 * Frames from another process (`unixfdsrc`, GStreamer 1.24) come as a new
 * file descriptor each: zcupload knows their file by its identity, maps it
 * (and registers it with CUDA) the first time and uses every later frame of
 * that file in place, on the CPU backend too (docs/multiprocess.md).
 *
 * Where gst-zerocopy was built with GStreamer's CUDA library, zcupload also
 * takes `video/x-raw(memory:CUDAMemory)` from nvcodec's elements (NVDEC
 * decoders, cudaupload, cudaconvertscale): the decoder's device memory is
 * passed on as it is, in the CUDA context both sides share (the primary
 * context of the device, which zcupload hands to nvcodec when it asks its
 * neighbours), and counted as `cuda-memory-buffers`. Memory of another
 * context or GPU is copied, and counted.
 *
 * With `memory-type=device` the producer still writes into pinned memory,
 * and zcupload copies each frame into device memory with the copy engines,
 * asynchronously on its stream (counted as a copy): the explicit-copy path,
 * which a long GPU-only chain may prefer.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=RGBA ! zcupload ! \
 *     zcfilter invert=true ! zcdownload ! autovideosink
 * ]|
 * |[
 * gst-launch-1.0 filesrc location=in.mp4 ! decodebin ! videoconvert ! \
 *     video/x-raw,format=NV12 ! zcupload memory-type=managed ! \
 *     zcfilter brightness=0.1 ! zcdownload ! videoconvert ! autovideosink
 * ]|
 * |[
 * gst-launch-1.0 filesrc location=in.h264 ! h264parse ! nvh264dec ! \
 *     zcupload ! zcfilter ! \
 *     "video/x-raw(memory:CUDAZeroCopy),format=RGBA,width=1280,height=720" ! \
 *     zcdownload ! fakesink
 * ]|
 *
 * Caps: sink `video/x-raw` and `video/x-raw(memory:CUDAMemory)`, src
 * `video/x-raw(memory:CUDAZeroCopy)`, same format, size and rate.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcupload.h"
#include "gstzcallocation.h"
#include "gstzcframecopy.h"

GST_DEBUG_CATEGORY_STATIC (gst_zc_upload_debug);
#define GST_CAT_DEFAULT gst_zc_upload_debug

enum
{
  PROP_0,
  PROP_ADOPT,
  PROP_ADOPT_MAX_BYTES,
};

#define DEFAULT_ADOPT TRUE
#define DEFAULT_ADOPT_MAX_BYTES (G_GUINT64_CONSTANT (512) << 20)

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (GST_ZC_FORMATS)
        GST_ZC_CUDA_MEMORY_CAPS));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE_WITH_FEATURES
        (GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY, GST_ZC_FORMATS)));

struct _GstZcUpload
{
  GstZcBaseTransform parent;

  /* properties, under the object lock */
  gboolean adopt;
  guint64 adopt_max_bytes;

  /* files of frames from another process (unixfdsrc), start to stop */
  GstZcFdImports *imports;
};

G_DEFINE_TYPE (GstZcUpload, gst_zc_upload, GST_TYPE_ZC_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (zcupload, "zcupload", GST_RANK_NONE,
    GST_TYPE_ZC_UPLOAD);

static GstCaps *
gst_zc_upload_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstCaps *res = gst_zc_caps_with_feature (caps, direction == GST_PAD_SINK ?
      GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY : NULL);
  /* upstream may also give nvcodec's device memory */
  if (direction == GST_PAD_SRC && gst_zc_have_cuda_memory_interop ())
    res = gst_caps_merge (res, gst_zc_caps_with_feature (caps,
            GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY_NVCODEC));

  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, res,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (res);
    res = tmp;
  }
  GST_DEBUG_OBJECT (trans, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
      direction == GST_PAD_SINK ? "sink" : "src", caps, res);
  return res;
}

static gboolean
gst_zc_upload_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  GstZcMemoryType type = gst_zc_base_transform_get_memory_type (base);

  /* With device memory the producer still writes into pinned memory: the
   * staging side of the explicit copy */
  if (type == GST_ZC_MEMORY_TYPE_DEVICE)
    type = GST_ZC_MEMORY_TYPE_MAPPED;
  gst_zc_base_transform_follow_shareable (base, decide_query);
  return gst_zc_base_transform_propose_zc_pool (base, query, type,
      gst_zc_base_transform_wants_video_meta (decide_query));
}

static gboolean
gst_zc_upload_decide_allocation (GstBaseTransform * trans, GstQuery * query)
{
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  GstZcMemoryType type = gst_zc_base_transform_get_memory_type (base);

  /* The pool serves frames that must be copied (all of them with device
   * memory); frames of our own memory pass as they are */
  return gst_zc_base_transform_decide_zc_pool (base, query, type, type);
}

/* A foreign system-memory frame is adopted in place of a copy: registered
 * with CUDA once per memory, then passed on as mapped memory (the base class
 * has already wrapped nvcodec's memory:CUDAMemory frames) */
static GstFlowReturn
gst_zc_upload_submit_input_buffer (GstBaseTransform * trans,
    gboolean is_discont, GstBuffer * input)
{
  auto *self = GST_ZC_UPLOAD (trans);
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  GstAllocator *mapped = gst_zc_base_transform_get_wrap_allocator (base,
      GST_ZC_MEMORY_TYPE_MAPPED);
  gboolean adopt;
  guint64 max_bytes;

  GST_OBJECT_LOCK (self);
  adopt = self->adopt;
  max_bytes = self->adopt_max_bytes;
  GST_OBJECT_UNLOCK (self);

  /* memory-type=device copies every frame with the copy engines anyway */
  if (adopt && mapped && !gst_zc_base_transform_in_cuda_memory (base) &&
      gst_zc_base_transform_get_memory_type (base) !=
      GST_ZC_MEMORY_TYPE_DEVICE &&
      !gst_zc_buffer_is_zc (input, gst_zc_base_transform_get_context (base))) {
    gsize registered = 0;
    /* a frame of another process: its file mapped and registered once */
    GstBuffer *adopted = gst_zc_buffer_is_fd (input) ?
        gst_zc_buffer_import_fd (mapped, self->imports, input, max_bytes,
        &registered) :
        gst_zc_buffer_adopt_host (mapped, input, max_bytes, &registered);
    if (adopted) {
      if (registered)
        GST_DEBUG_OBJECT (self, "registered %" G_GSIZE_FORMAT " bytes of "
            "foreign memory", registered);
      gst_zc_base_transform_count_adopted (base, registered);
      gst_buffer_unref (input);
      input = adopted;
    }
  }
  return GST_BASE_TRANSFORM_CLASS (gst_zc_upload_parent_class)->
      submit_input_buffer (trans, is_discont, input);
}

static gboolean
is_direct (GstZcBaseTransform * base, GstBuffer * inbuf)
{
  if (gst_buffer_n_memory (inbuf) != 1 ||
      !gst_zc_buffer_is_zc (inbuf, gst_zc_base_transform_get_context (base)))
    return FALSE;
  /* memory-type=device: only device memory goes downstream */
  auto *mem = (GstZcMemory *) gst_buffer_peek_memory (inbuf, 0);
  return gst_zc_base_transform_get_memory_type (base) !=
      GST_ZC_MEMORY_TYPE_DEVICE ||
      gst_zc_memory_get_memory_type (mem) == GST_ZC_MEMORY_TYPE_DEVICE;
}

static GstFlowReturn
gst_zc_upload_prepare_output_buffer (GstBaseTransform * trans,
    GstBuffer * inbuf, GstBuffer ** outbuf)
{
  auto *base = GST_ZC_BASE_TRANSFORM (trans);

  /* a short frame is refused here, before it is forwarded as zero-copy or
   * copied */
  GstFlowReturn ret = gst_zc_base_transform_check_input (base, inbuf);
  if (ret != GST_FLOW_OK)
    return ret;
  if (is_direct (base, inbuf)) {
    *outbuf = inbuf;
    return GST_FLOW_OK;
  }
  return GST_BASE_TRANSFORM_CLASS (gst_zc_upload_parent_class)->
      prepare_output_buffer (trans, inbuf, outbuf);
}

static GstFlowReturn
gst_zc_upload_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  auto *base = GST_ZC_BASE_TRANSFORM (trans);

  if (inbuf == outbuf) {
    gst_zc_base_transform_count_buffer (base, 0);
    return GST_FLOW_OK;
  }
  /* A foreign frame into our pool: on the CPU into mapped memory, with the
   * copy engines into device memory */
  return gst_zc_base_transform_copy_frame (base, inbuf, outbuf);
}

static gboolean
gst_zc_upload_start (GstBaseTransform * trans)
{
  auto *self = GST_ZC_UPLOAD (trans);
  if (!GST_BASE_TRANSFORM_CLASS (gst_zc_upload_parent_class)->start (trans))
    return FALSE;
  self->imports = gst_zc_fd_imports_new ();
  return TRUE;
}

/* After the base class has waited for the wrapped frames to go back: a
 * mapping still used downstream goes with the last frame that uses it */
static gboolean
gst_zc_upload_stop (GstBaseTransform * trans)
{
  auto *self = GST_ZC_UPLOAD (trans);
  gboolean ret =
      GST_BASE_TRANSFORM_CLASS (gst_zc_upload_parent_class)->stop (trans);
  g_clear_pointer (&self->imports, gst_zc_fd_imports_free);
  return ret;
}

static void
gst_zc_upload_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  auto *self = GST_ZC_UPLOAD (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_ADOPT:
      self->adopt = g_value_get_boolean (value);
      break;
    case PROP_ADOPT_MAX_BYTES:
      self->adopt_max_bytes = g_value_get_uint64 (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_zc_upload_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  auto *self = GST_ZC_UPLOAD (object);

  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_ADOPT:
      g_value_set_boolean (value, self->adopt);
      break;
    case PROP_ADOPT_MAX_BYTES:
      g_value_set_uint64 (value, self->adopt_max_bytes);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_zc_upload_class_init (GstZcUploadClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_zc_upload_set_property;
  gobject_class->get_property = gst_zc_upload_get_property;

  g_object_class_install_property (gobject_class, PROP_ADOPT,
      g_param_spec_boolean ("adopt", "Adopt foreign memory",
          "Register system memory that is not from zcupload's pool with CUDA "
          "(cudaHostRegister, once per memory, kept until its owner frees "
          "it) and pass it on in place; false copies such frames",
          DEFAULT_ADOPT, (GParamFlags) (G_PARAM_READWRITE |
              G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
  g_object_class_install_property (gobject_class, PROP_ADOPT_MAX_BYTES,
      g_param_spec_uint64 ("adopt-max-bytes", "Most bytes adopted",
          "Most bytes of foreign memory the process keeps registered with "
          "CUDA at once (page-locked); frames beyond it are copied",
          0, G_MAXUINT64, DEFAULT_ADOPT_MAX_BYTES,
          (GParamFlags) (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
              GST_PARAM_MUTABLE_PLAYING)));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Zero-copy CUDA upload", "Filter/Video/Hardware",
      "Makes video GPU-visible: upstream writes into pinned memory the GPU "
      "maps, other system memory is registered with CUDA in place, and "
      "nvcodec's CUDAMemory is used where it is (0 copies); what cannot be "
      "is copied once and counted. "
      "Example: videotestsrc ! zcupload ! zcfilter invert=true ! zcdownload "
      "! autovideosink",
      "gst-zerocopy maintainers");

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_zc_upload_transform_caps);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_upload_propose_allocation);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_upload_decide_allocation);
  trans_class->prepare_output_buffer =
      GST_DEBUG_FUNCPTR (gst_zc_upload_prepare_output_buffer);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_zc_upload_transform);
  trans_class->submit_input_buffer =
      GST_DEBUG_FUNCPTR (gst_zc_upload_submit_input_buffer);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_zc_upload_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_zc_upload_stop);

  GST_DEBUG_CATEGORY_INIT (gst_zc_upload_debug, "zcupload", 0,
      "zero-copy CUDA upload");
}

static void
gst_zc_upload_init (GstZcUpload * self)
{
  self->adopt = DEFAULT_ADOPT;
  self->adopt_max_bytes = DEFAULT_ADOPT_MAX_BYTES;
}

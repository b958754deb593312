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
 * on untouched: 0 bytes copied. Any other buffer is copied once into a pool
 * buffer, honouring its #GstVideoMeta strides, and counted in `stats`.
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
 *
 * Caps: sink `video/x-raw`, src `video/x-raw(memory:CUDAZeroCopy)`, same
 * format, size and rate.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcupload.h"

GST_DEBUG_CATEGORY_STATIC (gst_zc_upload_debug);
#define GST_CAT_DEFAULT gst_zc_upload_debug

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (GST_ZC_FORMATS)));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE_WITH_FEATURES
        (GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY, GST_ZC_FORMATS)));

struct _GstZcUpload
{
  GstZcBaseTransform parent;
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
gst_zc_upload_propose_allocation (GstBaseTransform * trans, GstQuery *,
    GstQuery * query)
{
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  GstZcMemoryType type = gst_zc_base_transform_get_memory_type (base);

  /* With device memory the producer still writes into pinned memory: the
   * staging side of the explicit copy */
  if (type == GST_ZC_MEMORY_TYPE_DEVICE)
    type = GST_ZC_MEMORY_TYPE_MAPPED;
  return gst_zc_base_transform_propose_zc_pool (base, query, type);
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

static void
gst_zc_upload_class_init (GstZcUploadClass * klass)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Zero-copy CUDA upload", "Filter/Video/Hardware",
      "Makes video GPU-visible: upstream writes into pinned memory the GPU "
      "maps (0 copies); other buffers are copied once and counted. "
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

  GST_DEBUG_CATEGORY_INIT (gst_zc_upload_debug, "zcupload", 0,
      "zero-copy CUDA upload");
}

static void
gst_zc_upload_init (GstZcUpload *)
{
}

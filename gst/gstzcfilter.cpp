/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-zcfilter
 * @title: zcfilter
 *
 * A video converter, scaler, cropper, flipper and effect filter in one CUDA
 * kernel, working on zero-copy frames where the producer wrote them. Like
 * `videoconvertscale`, its two pads may differ in format, size,
 * colorimetry and pixel aspect ratio; every step (crop, orientation,
 * scaling, colour conversion, point effects, store) happens in one pass
 * that reads each input byte once and writes each output byte once. The
 * spatial effects (blur, sharpen, edges) take one more pass each, through a
 * frame of device memory.
 *
 * Order of operations per frame:
 *  1. crop: the #GstVideoCropMeta region of the input (if any), minus the
 *     `crop-*` margins;
 *  2. orientation (`video-direction`, videoflip's methods, `auto` follows
 *     the `image-orientation` tag);
 *  3. scaling to the output size (`method`), keeping the display aspect
 *     ratio with black borders when `add-borders` is set and the output's
 *     aspect ratio differs;
 *  4. colour conversion between the caps' formats, matrices (BT.601,
 *     BT.709, BT.2020) and ranges, then the point effects on the converted
 *     code values, as "videobalance ! gamma" would apply them: brightness,
 *     contrast, saturation, hue (videobalance's), gamma (the gamma
 *     element's, on luma), grayscale, invert;
 *  5. spatial effects on the output: gaussian blur, unsharp mask, sobel
 *     edges.
 * Without scaling, crop, orientation or effects the output equals
 * `videoconvert dither=none`'s to within one code value; see
 * docs/zcfilter.md for every tolerance against GStreamer's CPU elements.
 *
 * With equal caps on both pads and no effect, crop or orientation the
 * element is in passthrough: no kernel runs, nothing is copied. An invert
 * alone on an RGB or GRAY8 frame runs a table kernel in place when the
 * frame is writable and already in the memory downstream asked for.
 *
 * Each frame is planned once from one snapshot of the properties: a
 * property set while playing (from a UI thread, or a controller binding)
 * takes the next frame whole. Effects apply without renegotiation; crop and
 * orientation renegotiate the output caps, as videocrop and videoflip do.
 * Fixation follows videoconvertscale (display aspect ratio kept, closest
 * format). Bilinear and bicubic shrink at most 64 times per axis.
 *
 * Kernels are queued on the element's own CUDA stream after the input's
 * fence and record the output's fence; the streaming thread never waits
 * for the GPU. On a discrete GPU a zcfilter asks an upstream zcfilter for
 * device memory, so in a chain only the first step reads over the bus and
 * only the last (asked for mapped memory by zcdownload) writes over it.
 * On the CPU backend a zcfilter whose frame needs nothing but point
 * effects leaves them to the next zcfilter of the chain, which runs every
 * step in one pass over the frame: a chain of effects costs about one
 * element.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12,width=3840,height=2160 ! \
 *     zcupload ! zcfilter ! \
 *     "video/x-raw(memory:CUDAZeroCopy),format=RGBA,width=1920,height=1080" ! \
 *     zcdownload ! autovideosink
 * ]|
 * |[
 * gst-launch-1.0 v4l2src ! video/x-raw,format=YUY2 ! zcupload ! \
 *     zcfilter video-direction=180 brightness=0.1 saturation=1.3 \
 *     sharpen=0.8 ! zcdownload ! autovideosink
 * ]|
 *
 * Caps: `video/x-raw(memory:CUDAZeroCopy)` on both pads, any of the 22
 * formats; format, size, colorimetry and pixel aspect ratio may change.
 *
 * Where gst-zerocopy was built with GStreamer's CUDA library, both pads also
 * take `video/x-raw(memory:CUDAMemory)`, the device memory of nvcodec's
 * elements, in the CUDA context both sides share (the device's primary
 * context, handed to nvcodec when it asks its neighbours): the kernels read
 * a decoder's frame where it is, and write frames for cudadownload,
 * cudaconvertscale or an encoder straight into a CUDA pool. A frame leaves
 * as `memory:CUDAMemory` finished (nvcodec reads it on its own stream), so
 * that pad waits for the kernel of each frame; `memory:CUDAZeroCopy` frames
 * leave with their fence instead.
 * |[
 * gst-launch-1.0 filesrc location=in.h264 ! h264parse ! nvh264dec ! \
 *     zcfilter brightness=0.1 ! \
 *     "video/x-raw(memory:CUDAMemory),format=RGBA,width=1280,height=720" ! \
 *     cudadownload ! fakesink
 * ]|
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcfilter.h"
#include "gstzcfilter-private.h"
#include "gstzcallocation.h"
#include "gstzcframecopy.h"
#include "gstzcpendingeffects.h"
#include "zcfilterproperties.h"

#include <initializer_list>
#include <mutex>
#include <string>

GST_DEBUG_CATEGORY (gst_zc_filter_debug);
#define GST_CAT_DEFAULT gst_zc_filter_debug

using zcfilter::FramePlan;
using zcfilter::Geometry;
using zcfilter::Pass;
using zcfilter::Settings;

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE_WITH_FEATURES
        (GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY, GST_ZC_FORMATS)
        GST_ZC_CUDA_MEMORY_CAPS));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE_WITH_FEATURES
        (GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY, GST_ZC_FORMATS)
        GST_ZC_CUDA_MEMORY_CAPS));

/* The properties' ids, and the fields of Settings they set, are in
 * zcfilterproperties.h */
#define DEFAULT_METHOD ZC_FILTER_DEFAULT_METHOD
#define DEFAULT_ADD_BORDERS ZC_FILTER_DEFAULT_ADD_BORDERS
#define DEFAULT_CROP 0
#define DEFAULT_VIDEO_DIRECTION ZC_FILTER_DEFAULT_VIDEO_DIRECTION
#define DEFAULT_BRIGHTNESS ZC_FILTER_DEFAULT_BRIGHTNESS
#define DEFAULT_CONTRAST ZC_FILTER_DEFAULT_CONTRAST
#define DEFAULT_SATURATION ZC_FILTER_DEFAULT_SATURATION
#define DEFAULT_HUE ZC_FILTER_DEFAULT_HUE
#define DEFAULT_GAMMA ZC_FILTER_DEFAULT_GAMMA
#define DEFAULT_INVERT FALSE
#define DEFAULT_GRAYSCALE FALSE
#define DEFAULT_BLUR_SIGMA ZC_FILTER_DEFAULT_BLUR_SIGMA
#define DEFAULT_SHARPEN ZC_FILTER_DEFAULT_SHARPEN
#define DEFAULT_EDGES FALSE

static void gst_zc_filter_video_direction_init (GstVideoDirectionInterface *
    iface);

G_DEFINE_TYPE_WITH_CODE (GstZcFilter, gst_zc_filter,
    GST_TYPE_ZC_BASE_TRANSFORM,
    G_IMPLEMENT_INTERFACE (GST_TYPE_VIDEO_DIRECTION,
        gst_zc_filter_video_direction_init));
GST_ELEMENT_REGISTER_DEFINE (zcfilter, "zcfilter", GST_RANK_NONE,
    GST_TYPE_ZC_FILTER);

static void
gst_zc_filter_video_direction_init (GstVideoDirectionInterface *)
{
  /* the interface is its "video-direction" property, installed below */
}

/* ---- properties ------------------------------------------------------------ */

static void
gst_zc_filter_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  auto *self = GST_ZC_FILTER (object);
  auto *priv = self->priv;
  bool geometry_changed;

  {
    std::lock_guard < std::mutex > lk (priv->lock);
    Settings & s = priv->settings;
    Geometry before = s.geometry ();
    if (!zcfilter::set_property (s, prop_id, value)) {
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      return;
    }
    geometry_changed = s.geometry () != before;
  }
  /* Crop and orientation change the output caps: they take effect through
   * renegotiation at the next frame, as in videocrop and videoflip. Every
   * other property takes the next frame as it is: each frame is planned
   * from one snapshot of the settings (prepare_output_buffer()). */
  if (geometry_changed)
    gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
}

static void
gst_zc_filter_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  auto *priv = GST_ZC_FILTER (object)->priv;
  std::lock_guard < std::mutex > lk (priv->lock);
  if (!zcfilter::get_property (priv->settings, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

/* ---- caps ------------------------------------------------------------------ */

/* Any format, size, colorimetry and aspect ratio on the other pad; fixate
 * then keeps what it can of the input's, within what the converter can
 * reach. */
static GstCaps *
gst_zc_filter_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstCaps *open = gst_caps_new_empty ();
  guint n = gst_caps_get_size (caps);

  for (guint i = 0; i < n; i++) {
    GstStructure *st = gst_structure_copy (gst_caps_get_structure (caps, i));
    GstCapsFeatures *f = gst_caps_get_features (caps, i);
    gst_structure_set (st, "width", GST_TYPE_INT_RANGE, 1, G_MAXINT,
        "height", GST_TYPE_INT_RANGE, 1, G_MAXINT, NULL);
    if (gst_structure_has_field (st, "pixel-aspect-ratio"))
      gst_structure_set (st, "pixel-aspect-ratio", GST_TYPE_FRACTION_RANGE, 1,
          G_MAXINT, G_MAXINT, 1, NULL);
    gst_structure_remove_fields (st, "format", "colorimetry", "chroma-site",
        NULL);
    /* either memory on the other pad, ours first: CUDAMemory is for
     * nvcodec's elements; the template drops what was not built */
    if (f && (gst_caps_features_contains (f,
                GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY) ||
            gst_caps_features_contains (f,
                GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY_NVCODEC))) {
      GstStructure *st2 = gst_structure_copy (st);
      open = gst_caps_merge_structure_full (open, st,
          gst_caps_features_new_single (GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY));
      open = gst_caps_merge_structure_full (open, st2,
          gst_caps_features_new_single
          (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY_NVCODEC));
    } else {
      open = gst_caps_merge_structure_full (open, st,
          f ? gst_caps_features_copy (f) : NULL);
    }
  }

  GstPad *other = direction == GST_PAD_SINK ? GST_BASE_TRANSFORM_SRC_PAD
      (trans) : GST_BASE_TRANSFORM_SINK_PAD (trans);
  GstCaps *templ = gst_pad_get_pad_template_caps (other);
  GstCaps *res = gst_caps_intersect_full (open, templ,
      GST_CAPS_INTERSECT_FIRST);
  gst_caps_unref (open);
  gst_caps_unref (templ);

  if (filter) {
    GstCaps *tmp = gst_caps_intersect_full (filter, res,
        GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (res);
    res = tmp;
  }
  GST_LOG_OBJECT (trans, "%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, caps, res);
  return res;
}

static GstCaps *
gst_zc_filter_fixate_caps (GstBaseTransform * trans, GstPadDirection direction,
    GstCaps * caps, GstCaps * othercaps)
{
  auto *self = GST_ZC_FILTER (trans);
  Geometry g;
  GstZcFilterMethod method;
  {
    std::lock_guard < std::mutex > lk (self->priv->lock);
    g = self->priv->settings.geometry ();
    method = self->priv->settings.method;
    self->priv->fixated = g;
    self->priv->have_fixated = true;
  }

  othercaps = gst_caps_make_writable (gst_caps_truncate (othercaps));
  GstStructure *ins = gst_caps_get_structure (caps, 0);
  GstStructure *outs = gst_caps_get_structure (othercaps, 0);

  /* the input's format if the other side takes it, else the closest */
  const gchar *fmt = gst_structure_get_string (ins, "format");
  zcfilter::fixate_format (ins, outs);
  if (fmt)
    gst_structure_fixate_field_string (outs, "format", fmt);

  /* sizes the converter cannot reach are left out where the other side
   * allows others; a fixed size beyond them fails in set_info(), with the
   * limit named */
  gint in_w, in_h;
  if (gst_structure_get_int (ins, "width", &in_w) &&
      gst_structure_get_int (ins, "height", &in_h))
    zcfilter::limit_shrink (outs, direction, in_w, in_h, g, method);
  zcfilter::fixate_size (g, direction, ins, outs);

  /* Y'CbCr to Y'CbCr (and a format kept) keeps the colorimetry and the
   * chroma siting, as videoconvert does: equal caps stay equal, so the
   * element can pass through */
  const gchar *out_fmt = gst_structure_get_string (outs, "format");
  if (fmt && out_fmt) {
    const GstVideoFormatInfo *in_fi =
        gst_video_format_get_info (gst_video_format_from_string (fmt));
    const GstVideoFormatInfo *out_fi =
        gst_video_format_get_info (gst_video_format_from_string (out_fmt));
    bool keep = g_str_equal (fmt, out_fmt) || (in_fi && out_fi &&
        GST_VIDEO_FORMAT_INFO_IS_YUV (in_fi) &&
        GST_VIDEO_FORMAT_INFO_IS_YUV (out_fi));
    for (const gchar * field: { "colorimetry", "chroma-site" }) {
      const gchar *v = gst_structure_get_string (ins, field);
      if (keep && v && !gst_structure_has_field (outs, field))
        gst_structure_set (outs, field, G_TYPE_STRING, v, NULL);
    }
  }

  othercaps = gst_caps_fixate (othercaps);
  GST_DEBUG_OBJECT (self, "fixated to %" GST_PTR_FORMAT, othercaps);
  return othercaps;
}

static gboolean
gst_zc_filter_set_info (GstZcBaseTransform * base, GstCaps * incaps,
    GstVideoInfo * in_info, GstCaps * outcaps, GstVideoInfo * out_info)
{
  auto *self = GST_ZC_FILTER (base);
  auto *priv = self->priv;
  Settings s;
  Geometry g;
  {
    std::lock_guard < std::mutex > lk (priv->lock);
    s = priv->settings;
    g = priv->have_fixated ? priv->fixated : s.geometry ();
    priv->have_fixated = false;
  }

  std::string error;
  priv->configured = priv->planner.configure (in_info, out_info, g, s.method,
      &error);
  priv->have_plan = false;
  priv->hand_on = false;        /* until decide_allocation says */
  gst_zc_filter_drop_standby (priv);
  if (priv->cpu)
    priv->cpu->reset ();
  if (priv->cuda)
    priv->cuda->reset ();
  if (!priv->configured) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("%s", error.c_str ()),
        ("%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, incaps, outcaps));
    return FALSE;
  }

  /* Passthrough: equal caps, nothing to do for the settings of this
   * negotiation. Only ever changed here, on the streaming thread: a later
   * effect change is planned per frame (prepare_output_buffer()). */
  bool passthrough = priv->planner.caps_equal () && s.is_identity () &&
      gst_zc_caps_is_cuda_memory (incaps) ==
      gst_zc_caps_is_cuda_memory (outcaps);
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), passthrough);

  GST_DEBUG_OBJECT (self, "%s %dx%d -> %s %dx%d%s, crop %d/%d/%d/%d, "
      "direction %d", GST_VIDEO_INFO_NAME (in_info),
      GST_VIDEO_INFO_WIDTH (in_info), GST_VIDEO_INFO_HEIGHT (in_info),
      GST_VIDEO_INFO_NAME (out_info), GST_VIDEO_INFO_WIDTH (out_info),
      GST_VIDEO_INFO_HEIGHT (out_info), passthrough ? " (passthrough)" : "",
      g.crop_left, g.crop_right, g.crop_top, g.crop_bottom, g.direction);
  return TRUE;
}

/* ---- allocation ------------------------------------------------------------ */

static gboolean
gst_zc_filter_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  /* In passthrough the base classes forward the query downstream instead */
  if (gst_base_transform_is_passthrough (trans))
    return GST_BASE_TRANSFORM_CLASS (gst_zc_filter_parent_class)->
        propose_allocation (trans, decide_query, query);
  /* The consumer picks the memory of its input. Another GPU step upstream
   * should write into device memory on a discrete GPU: then only the first
   * step of a chain reads over the bus and only the last writes over it. */
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  GstZcMemoryType type = gst_zc_base_transform_get_memory_type (base);
  GstZcContext *ctx = gst_zc_base_transform_get_context (base);
  GstZcMemoryType requested;
  g_object_get (trans, "memory-type", &requested, NULL);
  /* Frames worked on in place go on downstream as they came: their rows
   * are pitched only if downstream takes video meta, and they are files
   * if downstream's are. Frames for another process stay files from the
   * first pool on: a device frame upstream would be copied into one at the
   * end of the chain. */
  const gboolean files =
      gst_zc_base_transform_follow_shareable (base, decide_query);
  if (requested == GST_ZC_MEMORY_TYPE_AUTO && ctx && !files &&
      gst_zc_base_transform_uses_gpu (base) &&
      !gst_zc_context_is_integrated (ctx))
    type = GST_ZC_MEMORY_TYPE_DEVICE;
  if (!gst_zc_base_transform_propose_zc_pool (base, query, type,
          gst_zc_base_transform_wants_video_meta (decide_query)))
    return FALSE;
  /* crop regions are applied by the kernel, at no cost */
  gst_query_add_allocation_meta (query, GST_VIDEO_CROP_META_API_TYPE, NULL);
  /* on the CPU backend, an upstream zcfilter may leave its point effects
   * to this one, which runs them with its own in one pass */
  if (!gst_zc_base_transform_uses_gpu (base))
    gst_query_add_allocation_meta (query,
        GST_ZC_PENDING_EFFECTS_META_API_TYPE, NULL);
  return TRUE;
}

static gboolean
gst_zc_filter_decide_allocation (GstBaseTransform * trans, GstQuery * query)
{
  auto *self = GST_ZC_FILTER (trans);
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  if (!gst_zc_base_transform_decide_zc_output (trans, query))
    return FALSE;
  self->priv->hand_on = !gst_zc_base_transform_uses_gpu (base) &&
      gst_query_find_allocation_meta (query,
      GST_ZC_PENDING_EFFECTS_META_API_TYPE, NULL) &&
      gst_zc_filter_next_is_zcfilter (self);
  GST_DEBUG_OBJECT (self, "point effects %s to the next zcfilter",
      self->priv->hand_on ? "left" : "not left");
  return TRUE;
}

/* The crop meta is consumed here (the kernel crops); other metas follow the
 * base class rules. */
static gboolean
gst_zc_filter_transform_meta (GstBaseTransform * trans, GstBuffer * outbuf,
    GstMeta * meta, GstBuffer * inbuf)
{
  if (meta->info->api == GST_VIDEO_CROP_META_API_TYPE)
    return FALSE;
  /* GstBaseTransform's rule (metas without tags), not zcbasetransform's,
   * which keeps geometry metas for elements that keep the geometry */
  auto *plain = GST_BASE_TRANSFORM_CLASS (g_type_class_peek
      (GST_TYPE_BASE_TRANSFORM));
  return plain->transform_meta (trans, outbuf, meta, inbuf);
}

/* ---- per frame ------------------------------------------------------------- */

/* prepare_output_buffer (gstzcfilter-output.cpp) plans each frame and picks
 * the buffer it is written into; transform() runs that plan. */

enum class Backend
{ GPU, CPU, WRONG_DEVICE };

/* The GPU runs the pass when this element has a stream and both frames are
 * single GPU memories of its device; system memory goes to the CPU. GPU
 * memory of another device is an error: its fence cannot be recorded on
 * this element's stream. */
static Backend
choose_backend (GstZcBaseTransform * base, GstBuffer * inbuf,
    GstBuffer * outbuf, gint * wrong_device)
{
  gint dev = gst_zc_context_get_device_id
      (gst_zc_base_transform_get_context (base));
  bool all_gpu = true;

  for (GstBuffer * b : { inbuf, outbuf }) {
    if (gst_buffer_n_memory (b) != 1) {
      all_gpu = false;
      continue;
    }
    GstMemory *m = gst_buffer_peek_memory (b, 0);
    if (!gst_is_zc_memory (m) ||
        gst_zc_memory_get_memory_type ((GstZcMemory *) m) ==
        GST_ZC_MEMORY_TYPE_SYSTEM) {
      all_gpu = false;
      continue;
    }
    gint mdev = gst_zc_memory_get_device_id ((GstZcMemory *) m);
    if (mdev != dev && gst_zc_base_transform_uses_gpu (base)) {
      *wrong_device = mdev;
      return Backend::WRONG_DEVICE;
    }
  }
  return all_gpu && gst_zc_base_transform_uses_gpu (base) ? Backend::GPU :
      Backend::CPU;
}

static GstFlowReturn transform_frame (GstZcFilter * self,
    const FramePlan & plan, GstBuffer * inbuf, GstBuffer * outbuf);

static GstFlowReturn
gst_zc_filter_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  auto *self = GST_ZC_FILTER (trans);
  auto *priv = self->priv;
  auto *base = GST_ZC_BASE_TRANSFORM (trans);

  if (!priv->have_plan) {
    GST_ELEMENT_ERROR (self, CORE, FAILED,
        ("Internal error: a frame reached transform without a plan"), (NULL));
    return GST_FLOW_ERROR;
  }
  priv->have_plan = false;
  const FramePlan & plan = priv->plan;
  if ((plan.pass == Pass::IDENTITY && !priv->chain.n && inbuf == outbuf) ||
      priv->handed_on) {
    gst_zc_base_transform_count_buffer (base, 0);
    return GST_FLOW_OK;
  }
  /* steps run here in place leave the frame done: nobody runs them again */
  if (priv->chain.n && inbuf == outbuf) {
    GstZcPendingEffectsMeta *pending =
        gst_buffer_get_zc_pending_effects_meta (outbuf);
    if (pending)
      gst_buffer_remove_meta (outbuf, (GstMeta *) pending);
  }
  /* nvcodec memory the base class could not wrap: of another CUDA context
   * or GPU, which kernels here cannot address */
  if (gst_zc_buffer_is_cuda_memory (inbuf)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("zcfilter received memory:CUDAMemory of another CUDA context or GPU "
            "than its own (device %d)", gst_zc_context_get_device_id
            (gst_zc_base_transform_get_context (base))),
        ("nvcodec's elements share zcfilter's context when they ask their "
            "neighbours for one; an application that sets its own "
            "gst.cuda.context, or a pipeline across GPUs, must put zcupload "
            "in front, which copies such frames"));
    return GST_FLOW_ERROR;
  }
  /* A frame leaving as memory:CUDAMemory is written through a view of its
   * GstCudaMemory, and finished before it leaves */
  GstBuffer *cuda_out = NULL;
  if (gst_zc_base_transform_out_cuda_memory (base)) {
    cuda_out = outbuf;
    outbuf = gst_zc_base_transform_import_output (base, cuda_out);
    if (!outbuf)
      return GST_FLOW_ERROR;
  }

  GstFlowReturn ret = transform_frame (self, plan, inbuf, outbuf);
  if (cuda_out) {
    GstFlowReturn r = gst_zc_base_transform_release_output (base, outbuf);
    if (ret == GST_FLOW_OK)
      ret = r;
  }
  return ret;
}

static GstFlowReturn
transform_frame (GstZcFilter * self, const FramePlan & plan,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  auto *priv = self->priv;
  auto *base = GST_ZC_BASE_TRANSFORM (self);

  /* an unchanged frame that must change memory */
  if (plan.pass == Pass::IDENTITY && !priv->chain.n)
    return gst_zc_base_transform_copy_frame (base, inbuf, outbuf);

  GstFlowReturn ret;
  gint wrong_device = -1;
  switch (choose_backend (base, inbuf, outbuf, &wrong_device)) {
    case Backend::WRONG_DEVICE:
      GST_ELEMENT_ERROR (self, STREAM, FAILED,
          ("zcfilter runs on CUDA device %d but received frames of CUDA "
              "device %d", gst_zc_context_get_device_id
              (gst_zc_base_transform_get_context (base)), wrong_device),
          ("Give the elements of one chain the same device-id, or put "
              "zcdownload ! zcupload between devices (that copies)."));
      return GST_FLOW_ERROR;
    case Backend::GPU:
      if (!priv->cuda)
        priv->cuda = zcfilter::make_cuda_executor (base);
      ret = priv->cuda->run (priv->planner, plan, priv->chain, inbuf, outbuf);
      break;
    case Backend::CPU:
    default:
      if (!priv->cpu)
        priv->cpu = zcfilter::make_cpu_executor (base);
      ret = priv->cpu->run (priv->planner, plan, priv->chain, inbuf, outbuf);
      break;
  }

  if (ret == GST_FLOW_OK)
    gst_zc_base_transform_count_buffer (base, 0);
  return ret;
}

/* image-orientation tags drive video-direction=auto, as in videoflip */
static gboolean
gst_zc_filter_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  auto *self = GST_ZC_FILTER (trans);

  if (GST_EVENT_TYPE (event) == GST_EVENT_TAG) {
    GstTagList *tags;
    gchar *orientation = NULL;
    gst_event_parse_tag (event, &tags);
    if (gst_tag_list_get_string (tags, GST_TAG_IMAGE_ORIENTATION,
            &orientation)) {
      GstVideoOrientationMethod m;
      if (!zcfilter::orientation_from_tag (orientation, &m))
        GST_WARNING_OBJECT (self, "unknown image-orientation %s", orientation);
      g_free (orientation);
      bool changed;
      {
        std::lock_guard < std::mutex > lk (self->priv->lock);
        Settings & s = self->priv->settings;
        changed = s.tag_direction != m &&
            s.direction == GST_VIDEO_ORIENTATION_AUTO;
        s.tag_direction = m;
      }
      if (changed) {
        GST_DEBUG_OBJECT (self, "orientation %d from the tags", m);
        gst_base_transform_reconfigure_src (trans);
      }
    }
  }
  return GST_BASE_TRANSFORM_CLASS (gst_zc_filter_parent_class)->sink_event
      (trans, event);
}

static gboolean
gst_zc_filter_stop (GstBaseTransform * trans)
{
  auto *priv = GST_ZC_FILTER (trans)->priv;
  /* the CUDA executor frees its device memory on the element's device,
   * which the base class releases in its stop() */
  priv->cuda.reset ();
  priv->cpu.reset ();
  gst_zc_filter_drop_standby (priv);
  priv->configured = false;
  priv->have_plan = false;
  return GST_BASE_TRANSFORM_CLASS (gst_zc_filter_parent_class)->stop (trans);
}

static void
gst_zc_filter_finalize (GObject * object)
{
  delete GST_ZC_FILTER (object)->priv;
  G_OBJECT_CLASS (gst_zc_filter_parent_class)->finalize (object);
}

static void
gst_zc_filter_class_init (GstZcFilterClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstZcBaseTransformClass *zc_class = GST_ZC_BASE_TRANSFORM_CLASS (klass);
  const GParamFlags flags = (GParamFlags) (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_CONTROLLABLE |
      GST_PARAM_MUTABLE_PLAYING);

  gobject_class->set_property = gst_zc_filter_set_property;
  gobject_class->get_property = gst_zc_filter_get_property;
  gobject_class->finalize = gst_zc_filter_finalize;

  g_object_class_install_property (gobject_class, PROP_METHOD,
      g_param_spec_enum ("method", "Scaling method",
          "How pixels are sampled when the size changes",
          GST_TYPE_ZC_FILTER_METHOD, DEFAULT_METHOD, flags));
  g_object_class_install_property (gobject_class, PROP_ADD_BORDERS,
      g_param_spec_boolean ("add-borders", "Add borders",
          "Keep the display aspect ratio when the output's differs, with "
          "black borders (as videoscale); false stretches the picture",
          DEFAULT_ADD_BORDERS, flags));
  g_object_class_install_property (gobject_class, PROP_CROP_LEFT,
      g_param_spec_int ("crop-left", "Crop left",
          "Columns removed on the left, after the buffer's GstVideoCropMeta (a change while "
          "playing renegotiates the output size)",
          0, G_MAXINT, DEFAULT_CROP, flags));
  g_object_class_install_property (gobject_class, PROP_CROP_RIGHT,
      g_param_spec_int ("crop-right", "Crop right",
          "Columns removed on the right, after the buffer's GstVideoCropMeta (a change while "
          "playing renegotiates the output size)",
          0, G_MAXINT, DEFAULT_CROP, flags));
  g_object_class_install_property (gobject_class, PROP_CROP_TOP,
      g_param_spec_int ("crop-top", "Crop top",
          "Rows removed at the top, after the buffer's GstVideoCropMeta (a change while "
          "playing renegotiates the output size)",
          0, G_MAXINT, DEFAULT_CROP, flags));
  g_object_class_install_property (gobject_class, PROP_CROP_BOTTOM,
      g_param_spec_int ("crop-bottom", "Crop bottom",
          "Rows removed at the bottom, after the buffer's GstVideoCropMeta (a change while "
          "playing renegotiates the output size)",
          0, G_MAXINT, DEFAULT_CROP, flags));
  g_object_class_override_property (gobject_class, PROP_VIDEO_DIRECTION,
      "video-direction");
  g_object_class_install_property (gobject_class, PROP_BRIGHTNESS,
      g_param_spec_double ("brightness", "Brightness",
          "Added to luma (videobalance): -1 is black, +1 white", -1.0, 1.0,
          DEFAULT_BRIGHTNESS, flags));
  g_object_class_install_property (gobject_class, PROP_CONTRAST,
      g_param_spec_double ("contrast", "Contrast",
          "Luma gain (videobalance): 0 flat, 1 unchanged, 2 double", 0.0, 2.0,
          DEFAULT_CONTRAST, flags));
  g_object_class_install_property (gobject_class, PROP_SATURATION,
      g_param_spec_double ("saturation", "Saturation",
          "Chroma gain (videobalance): 0 gray, 1 unchanged, 2 double", 0.0,
          2.0, DEFAULT_SATURATION, flags));
  g_object_class_install_property (gobject_class, PROP_HUE,
      g_param_spec_double ("hue", "Hue",
          "Chroma rotation in half turns (videobalance): -1..1, 0 unchanged",
          -1.0, 1.0, DEFAULT_HUE, flags));
  g_object_class_install_property (gobject_class, PROP_GAMMA,
      g_param_spec_double ("gamma", "Gamma",
          "Gamma on luma after brightness and contrast (the gamma element): "
          "out = in^(1/gamma), above 1 brightens the mid-tones", 0.01, 10.0,
          DEFAULT_GAMMA, flags));
  g_object_class_install_property (gobject_class, PROP_INVERT,
      g_param_spec_boolean ("invert", "Invert",
          "Negative image, applied last: 1 - v on R, G and B", DEFAULT_INVERT,
          flags));
  g_object_class_install_property (gobject_class, PROP_GRAYSCALE,
      g_param_spec_boolean ("grayscale", "Grayscale",
          "Drop the colour (chroma set to neutral)", DEFAULT_GRAYSCALE,
          flags));
  g_object_class_install_property (gobject_class, PROP_BLUR_SIGMA,
      g_param_spec_double ("blur-sigma", "Blur sigma",
          "Gaussian blur of the output, standard deviation in pixels (0 = "
          "off); one extra pass", 0.0, 16.0, DEFAULT_BLUR_SIGMA, flags));
  g_object_class_install_property (gobject_class, PROP_SHARPEN,
      g_param_spec_double ("sharpen", "Sharpen",
          "Unsharp-mask amount on luma (0 = off): out = in + amount * (in - "
          "blur(in, sigma 1)); one extra pass", 0.0, 8.0, DEFAULT_SHARPEN,
          flags));
  g_object_class_install_property (gobject_class, PROP_EDGES,
      g_param_spec_boolean ("edges", "Edges",
          "Replace the picture by its Sobel gradient magnitude (luma, or "
          "each of R, G, B); one extra pass", DEFAULT_EDGES, flags));
  g_object_class_install_property (gobject_class, PROP_N_THREADS,
      g_param_spec_uint ("n-threads", "Threads",
          "Threads the CPU backend uses per frame (0 = one per core); the "
          "frame is cut into bands of rows, and small frames use fewer. The "
          "output does not depend on it. The CUDA backend ignores it",
          0, G_MAXINT, ZC_FILTER_DEFAULT_N_THREADS, (GParamFlags)
          (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
              GST_PARAM_MUTABLE_PLAYING)));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Zero-copy CUDA video converter and filter",
      "Filter/Converter/Effect/Video/Scaler/Hardware",
      "Converts format and colorimetry, scales, crops, flips and applies "
      "colour and spatial effects in one CUDA kernel on GPU-mapped frames "
      "(CPU backend without a GPU). Example: videotestsrc ! zcupload ! "
      "zcfilter ! video/x-raw(memory:CUDAZeroCopy),format=RGBA,width=640 ! "
      "zcdownload ! autovideosink", "gst-zerocopy maintainers");

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = FALSE;
  trans_class->transform_caps =
      GST_DEBUG_FUNCPTR (gst_zc_filter_transform_caps);
  trans_class->fixate_caps = GST_DEBUG_FUNCPTR (gst_zc_filter_fixate_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_zc_filter_sink_event);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_filter_propose_allocation);
  trans_class->transform_meta =
      GST_DEBUG_FUNCPTR (gst_zc_filter_transform_meta);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_filter_decide_allocation);
  trans_class->before_transform =
      GST_DEBUG_FUNCPTR (gst_zc_base_transform_sync_controlled_values);
  trans_class->prepare_output_buffer =
      GST_DEBUG_FUNCPTR (gst_zc_filter_prepare_output_buffer);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_zc_filter_transform);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_zc_filter_stop);

  zc_class->set_info = GST_DEBUG_FUNCPTR (gst_zc_filter_set_info);

  gst_type_mark_as_plugin_api (GST_TYPE_ZC_FILTER_METHOD,
      (GstPluginAPIFlags) 0);

  GST_DEBUG_CATEGORY_INIT (gst_zc_filter_debug, "zcfilter", 0,
      "zero-copy CUDA video converter and filter");
}

static void
gst_zc_filter_init (GstZcFilter * self)
{
  self->priv = new GstZcFilterPrivate;
}

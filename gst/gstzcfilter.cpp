/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-zcfilter
 * @title: zcfilter
 *
 * Point operations on zero-copy frames, run by a CUDA kernel in place on the
 * memory the producer wrote: brightness, contrast, gamma and invert on the
 * R, G and B channels of RGB formats (alpha and padding bytes untouched),
 * and on luma for GRAY8, NV12 and I420 (chroma untouched, except that
 * invert maps every chroma byte v to 255 - v).
 *
 * For a byte v, with x = v / 255:
 * y = clamp ((x - 0.5) * contrast + 0.5 + brightness, 0, 1);
 * y = y ^ (1 / gamma); if invert, y = 1 - y; out = floor (255 y + 0.5).
 * The host builds that as a 256-entry table and the kernel applies it, so
 * the GPU and the CPU backend give the same bytes.
 *
 * The kernel waits on the input's fence on the element's own stream and
 * records the output's fence after it; the streaming thread never waits for
 * the GPU. With every property at its default the element is in passthrough
 * and runs nothing. A writable input already in the memory downstream asks
 * for is processed in place; otherwise the kernel reads the input and writes
 * a fresh pool buffer (no extra copy). On a discrete GPU a zcfilter asks an
 * upstream zcfilter for device memory, so in a chain only the first step
 * reads over the bus and only the last (asked for mapped memory by
 * zcdownload) writes over it.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=RGBA ! zcupload ! \
 *     zcfilter invert=true ! zcdownload ! autovideosink
 * ]|
 * |[
 * gst-launch-1.0 v4l2src ! video/x-raw,format=NV12 ! zcupload ! \
 *     zcfilter brightness=0.1 contrast=1.3 gamma=1.8 ! zcdownload ! \
 *     videoconvert ! autovideosink
 * ]|
 *
 * Caps: `video/x-raw(memory:CUDAZeroCopy)` on both pads, unchanged.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcfilter.h"

#include <zcpointops.h>
#include <gst/zerocopy/gstzccuda-private.h>

#include <mutex>

GST_DEBUG_CATEGORY_STATIC (gst_zc_filter_debug);
#define GST_CAT_DEFAULT gst_zc_filter_debug

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE_WITH_FEATURES
        (GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY, GST_ZC_FORMATS)));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE_WITH_FEATURES
        (GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY, GST_ZC_FORMATS)));

enum
{
  PROP_0,
  PROP_BRIGHTNESS,
  PROP_CONTRAST,
  PROP_GAMMA,
  PROP_INVERT,
};

#define DEFAULT_BRIGHTNESS 0.0
#define DEFAULT_CONTRAST 1.0
#define DEFAULT_GAMMA 1.0
#define DEFAULT_INVERT FALSE

/* At most three planes in the formats handled here (I420) */
#define MAX_PLANES 3

struct GstZcFilterPrivate
{
  std::mutex lock;              /* guards params and dirty */
  zc::PointParams params;
  bool dirty = true;

  /* streaming thread only: tables for the negotiated format */
  zc::LutSet luts[MAX_PLANES];
  bool plane_identity[MAX_PLANES] = { };
  guint n_planes = 0;
};

struct _GstZcFilter
{
  GstZcBaseTransform parent;
  GstZcFilterPrivate *priv;
};

G_DEFINE_TYPE (GstZcFilter, gst_zc_filter, GST_TYPE_ZC_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (zcfilter, "zcfilter", GST_RANK_NONE,
    GST_TYPE_ZC_FILTER);

/* Updates passthrough from the properties: no table work to do, no kernel */
static void
update_passthrough (GstZcFilter * self)
{
  zc::PointParams p;
  {
    std::lock_guard < std::mutex > lk (self->priv->lock);
    p = self->priv->params;
  }
  gboolean identity = zc::point_params_are_identity (p);
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  if (gst_base_transform_is_passthrough (trans) != identity) {
    GST_DEBUG_OBJECT (self, "passthrough %d", identity);
    gst_base_transform_set_passthrough (trans, identity);
    gst_base_transform_reconfigure_src (trans);
  }
}

static void
gst_zc_filter_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  auto *self = GST_ZC_FILTER (object);
  auto *priv = self->priv;

  {
    std::lock_guard < std::mutex > lk (priv->lock);
    switch (prop_id) {
      case PROP_BRIGHTNESS:
        priv->params.brightness = g_value_get_double (value);
        break;
      case PROP_CONTRAST:
        priv->params.contrast = g_value_get_double (value);
        break;
      case PROP_GAMMA:
        priv->params.gamma = g_value_get_double (value);
        break;
      case PROP_INVERT:
        priv->params.invert = g_value_get_boolean (value);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
        return;
    }
    priv->dirty = true;
  }
  update_passthrough (self);
}

static void
gst_zc_filter_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  auto *priv = GST_ZC_FILTER (object)->priv;
  std::lock_guard < std::mutex > lk (priv->lock);

  switch (prop_id) {
    case PROP_BRIGHTNESS:
      g_value_set_double (value, priv->params.brightness);
      break;
    case PROP_CONTRAST:
      g_value_set_double (value, priv->params.contrast);
      break;
    case PROP_GAMMA:
      g_value_set_double (value, priv->params.gamma);
      break;
    case PROP_INVERT:
      g_value_set_boolean (value, priv->params.invert);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
fill_luts (zc::LutSet & set, const uint8_t lut[256])
{
  for (auto & l : set.lut)
    memcpy (l, lut, 256);
}

/* Builds the per-plane tables for the negotiated format from @p */
static void
build_tables (GstZcFilter * self, const zc::PointParams & p)
{
  auto *priv = self->priv;
  const GstVideoInfo *info =
      gst_zc_base_transform_get_in_info (GST_ZC_BASE_TRANSFORM (self));
  const GstVideoFormatInfo *finfo = info->finfo;
  uint8_t point[256], identity[256], invert[256];

  zc::build_point_lut (p, point);
  zc::build_identity_lut (identity);
  zc::build_invert_lut (invert);

  priv->n_planes = GST_VIDEO_INFO_N_PLANES (info);
  if (GST_VIDEO_FORMAT_INFO_IS_RGB (finfo)) {
    /* one packed plane: R, G and B bytes through the table, the rest not */
    zc::LutSet & set = priv->luts[0];
    fill_luts (set, identity);
    for (guint c = 0; c < 3; c++) {
      guint off = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, c);
      memcpy (set.lut[off % 4], point, 256);
    }
    priv->plane_identity[0] = false;
  } else {
    /* GRAY8, NV12, I420: luma plane 0, chroma in the others */
    fill_luts (priv->luts[0], point);
    priv->plane_identity[0] = false;
    for (guint i = 1; i < priv->n_planes; i++) {
      fill_luts (priv->luts[i], p.invert ? invert : identity);
      priv->plane_identity[i] = !p.invert;
    }
  }
}

static gboolean
gst_zc_filter_set_info (GstZcBaseTransform * base, GstCaps *,
    GstVideoInfo * in_info, GstCaps *, GstVideoInfo *)
{
  auto *self = GST_ZC_FILTER (base);
  GST_DEBUG_OBJECT (self, "format %s %dx%d", GST_VIDEO_INFO_NAME (in_info),
      GST_VIDEO_INFO_WIDTH (in_info), GST_VIDEO_INFO_HEIGHT (in_info));
  std::lock_guard < std::mutex > lk (self->priv->lock);
  self->priv->dirty = true;
  return TRUE;
}

static gboolean
gst_zc_filter_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  /* In passthrough the base class forwards the query downstream instead */
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
  if (requested == GST_ZC_MEMORY_TYPE_AUTO && ctx &&
      gst_zc_base_transform_uses_gpu (base) &&
      !gst_zc_context_is_integrated (ctx))
    type = GST_ZC_MEMORY_TYPE_DEVICE;
  return gst_zc_base_transform_propose_zc_pool (base, query, type);
}

static gboolean
gst_zc_filter_decide_allocation (GstBaseTransform * trans, GstQuery * query)
{
  auto *base = GST_ZC_BASE_TRANSFORM (trans);

  /* whatever zero-copy memory downstream asks for, else our own */
  return gst_zc_base_transform_decide_zc_pool (base, query,
      GST_ZC_MEMORY_TYPE_AUTO, gst_zc_base_transform_get_memory_type (base));
}

static GstFlowReturn
gst_zc_filter_prepare_output_buffer (GstBaseTransform * trans,
    GstBuffer * inbuf, GstBuffer ** outbuf)
{
  /* In place when nobody else holds the frame and it already is in the
   * memory downstream asked for; otherwise the kernel reads the input and
   * writes a pool buffer, which costs no more than in place */
  if (gst_base_transform_is_passthrough (trans)) {
    *outbuf = inbuf;
    return GST_FLOW_OK;
  }
  GstZcMemoryType want = gst_zc_base_transform_get_pool_memory_type
      (GST_ZC_BASE_TRANSFORM (trans));
  GstMemory *mem = gst_buffer_peek_memory (inbuf, 0);
  bool same_memory = want == GST_ZC_MEMORY_TYPE_AUTO ||
      (gst_is_zc_memory (mem) &&
      gst_zc_memory_get_memory_type ((GstZcMemory *) mem) == want);
  if (same_memory && gst_buffer_is_writable (inbuf) &&
      gst_buffer_is_all_memory_writable (inbuf)) {
    *outbuf = inbuf;
    return GST_FLOW_OK;
  }
  return GST_BASE_TRANSFORM_CLASS (gst_zc_filter_parent_class)->
      prepare_output_buffer (trans, inbuf, outbuf);
}

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

#if GST_ZC_HAVE_CUDA
/* The library logs the failed call; the runtime also keeps it as this
 * thread's last error, which names it for the user. */
static GstFlowReturn
post_cuda_error (GstZcFilter * self, const gchar * what)
{
  cudaError_t err = cudaGetLastError ();
  GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("%s: %s", what,
          cudaGetErrorName (err)), ("%s", cudaGetErrorString (err)));
  return GST_FLOW_ERROR;
}

static GstFlowReturn
transform_gpu (GstZcFilter * self, GstBuffer * inbuf, GstBuffer * outbuf)
{
  auto *base = GST_ZC_BASE_TRANSFORM (self);
  auto *priv = self->priv;
  const GstVideoInfo *info = gst_zc_base_transform_get_in_info (base);
  gpointer stream = gst_zc_base_transform_get_stream (base);
  auto *in_mem = (GstZcMemory *) gst_buffer_peek_memory (inbuf, 0);
  auto *out_mem = (GstZcMemory *) gst_buffer_peek_memory (outbuf, 0);
  auto *in_dev = (const uint8_t *) gst_zc_memory_get_device_pointer (in_mem);
  auto *out_dev = (uint8_t *) gst_zc_memory_get_device_pointer (out_mem);
  bool in_place = inbuf == outbuf;

  zc::PlaneJob jobs[MAX_PLANES];
  zc::LutSet const *luts[MAX_PLANES];
  unsigned n = 0;
  for (guint i = 0; i < priv->n_planes; i++) {
    if (in_place && priv->plane_identity[i])
      continue;
    gsize in_off, in_stride, out_off, out_stride;
    gst_zc_video_plane_layout (inbuf, info, i, &in_off, &in_stride);
    gst_zc_video_plane_layout (outbuf, info, i, &out_off, &out_stride);
    jobs[n] = { in_dev + in_off, out_dev + out_off, in_stride, out_stride,
      gst_zc_video_plane_row_bytes (info, i), gst_zc_video_plane_rows (info, i) };
    luts[n] = &priv->luts[i];
    n++;
  }
  if (n == 0)
    return GST_FLOW_OK;

  /* The tables travel by value in the launch; gather them contiguously */
  zc::LutSet lut_copy[MAX_PLANES];
  for (unsigned i = 0; i < n; i++)
    lut_copy[i] = *luts[i];

  gst_zc::DeviceScope scope (gst_zc_memory_get_device_id (out_mem));
  if (!scope.ok ())
    return post_cuda_error (self, "Could not make the CUDA device current");
  if (!gst_zc_memory_prepare_gpu (in_mem, stream) ||
      (!in_place && !gst_zc_memory_prepare_gpu (out_mem, stream))) {
    return post_cuda_error (self, "Could not order GPU work after the "
        "frame's fence");
  }
  cudaError_t err = zc::apply_lut_cuda_planes (jobs, lut_copy, n,
      (cudaStream_t) stream);
  if (err != cudaSuccess) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("CUDA kernel launch failed: %s", cudaGetErrorName (err)),
        ("%s", cudaGetErrorString (err)));
    return GST_FLOW_ERROR;
  }
  /* Fence both: the input is read by the kernel, so its producer must not
   * refill it before the kernel is done */
  if (!gst_zc_memory_set_gpu_fence (out_mem, stream) ||
      (!in_place && !gst_zc_memory_set_gpu_fence (in_mem, stream))) {
    return post_cuda_error (self, "Could not record the GPU fence");
  }
  return GST_FLOW_OK;
}
#endif

static GstFlowReturn
transform_cpu (GstZcFilter * self, GstBuffer * inbuf, GstBuffer * outbuf)
{
  auto *base = GST_ZC_BASE_TRANSFORM (self);
  auto *priv = self->priv;
  const GstVideoInfo *info = gst_zc_base_transform_get_in_info (base);
  bool in_place = inbuf == outbuf;
  GstVideoFrame in_frame, out_frame;

  if (!gst_video_frame_map (&out_frame, info, outbuf, (GstMapFlags)
          (in_place ? GST_MAP_READWRITE : GST_MAP_WRITE))) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE, ("Could not map the frame"),
        (NULL));
    return GST_FLOW_ERROR;
  }
  if (!in_place && !gst_video_frame_map (&in_frame, info, inbuf,
          GST_MAP_READ)) {
    gst_video_frame_unmap (&out_frame);
    GST_ELEMENT_ERROR (self, RESOURCE, READ, ("Could not map the frame"),
        (NULL));
    return GST_FLOW_ERROR;
  }
  GstVideoFrame *src = in_place ? &out_frame : &in_frame;

  zc::PlaneJob jobs[MAX_PLANES];
  zc::LutSet luts[MAX_PLANES];
  unsigned n = 0;
  for (guint i = 0; i < priv->n_planes; i++) {
    if (in_place && priv->plane_identity[i])
      continue;
    jobs[n] = { (const uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (src, i),
      (uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&out_frame, i),
      (size_t) GST_VIDEO_FRAME_PLANE_STRIDE (src, i),
      (size_t) GST_VIDEO_FRAME_PLANE_STRIDE (&out_frame, i),
      gst_zc_video_plane_row_bytes (info, i), gst_zc_video_plane_rows (info, i) };
    luts[n] = priv->luts[i];
    n++;
  }
  zc::apply_lut_cpu_planes (jobs, luts, n, 0);

  if (!in_place)
    gst_video_frame_unmap (&in_frame);
  gst_video_frame_unmap (&out_frame);
  return GST_FLOW_OK;
}

static GstFlowReturn
gst_zc_filter_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  auto *self = GST_ZC_FILTER (trans);
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  auto *priv = self->priv;
  GstFlowReturn ret;

  {
    zc::PointParams p;
    bool dirty;
    {
      std::lock_guard < std::mutex > lk (priv->lock);
      p = priv->params;
      dirty = priv->dirty;
      priv->dirty = false;
    }
    if (dirty)
      build_tables (self, p);
  }

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
#if GST_ZC_HAVE_CUDA
      ret = transform_gpu (self, inbuf, outbuf);
      break;
#endif
    case Backend::CPU:
    default:
      ret = transform_cpu (self, inbuf, outbuf);
      break;
  }

  if (ret == GST_FLOW_OK)
    gst_zc_base_transform_count_buffer (base, 0);
  return ret;
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

  g_object_class_install_property (gobject_class, PROP_BRIGHTNESS,
      g_param_spec_double ("brightness", "Brightness",
          "Added to each channel (R, G, B, or luma) in 0..1 units, after "
          "contrast: -1 is black, +1 white", -1.0, 1.0, DEFAULT_BRIGHTNESS,
          flags));
  g_object_class_install_property (gobject_class, PROP_CONTRAST,
      g_param_spec_double ("contrast", "Contrast",
          "Scales each channel around mid-grey (0.5): 0 flat grey, 1 "
          "unchanged, 4 strongest", 0.0, 4.0, DEFAULT_CONTRAST, flags));
  g_object_class_install_property (gobject_class, PROP_GAMMA,
      g_param_spec_double ("gamma", "Gamma",
          "Gamma correction after brightness and contrast: out = in^(1/gamma);"
          " above 1 brightens the mid-tones", 0.01, 10.0, DEFAULT_GAMMA,
          flags));
  g_object_class_install_property (gobject_class, PROP_INVERT,
      g_param_spec_boolean ("invert", "Invert",
          "Negative image, applied last: v -> 255 - v on R, G, B or luma, "
          "and on chroma planes too", DEFAULT_INVERT, flags));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Zero-copy CUDA point filter", "Filter/Effect/Video/Hardware",
      "Brightness, contrast, gamma and invert by a CUDA kernel in place on "
      "GPU-mapped frames (CPU backend without a GPU). Example: videotestsrc "
      "! zcupload ! zcfilter invert=true ! zcdownload ! autovideosink",
      "gst-zerocopy maintainers");

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = FALSE;
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_filter_propose_allocation);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_filter_decide_allocation);
  trans_class->prepare_output_buffer =
      GST_DEBUG_FUNCPTR (gst_zc_filter_prepare_output_buffer);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_zc_filter_transform);

  zc_class->set_info = GST_DEBUG_FUNCPTR (gst_zc_filter_set_info);

  GST_DEBUG_CATEGORY_INIT (gst_zc_filter_debug, "zcfilter", 0,
      "zero-copy CUDA point filter");
}

static void
gst_zc_filter_init (GstZcFilter * self)
{
  self->priv = new GstZcFilterPrivate;
  /* all properties at their defaults: nothing to do until one changes */
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
}

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
 * Kernels are queued on the element's own CUDA stream after the input's
 * fence and record the output's fence; the streaming thread never waits
 * for the GPU. On a discrete GPU a zcfilter asks an upstream zcfilter for
 * device memory, so in a chain only the first step reads over the bus and
 * only the last (asked for mapped memory by zcdownload) writes over it.
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
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcfilter.h"

#include <zcconvert.h>
#include <zcpointops.h>
#include <zcspatial.h>
#include <gst/zerocopy/gstzccuda-private.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <vector>

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
  PROP_METHOD,
  PROP_ADD_BORDERS,
  PROP_CROP_LEFT,
  PROP_CROP_RIGHT,
  PROP_CROP_TOP,
  PROP_CROP_BOTTOM,
  PROP_VIDEO_DIRECTION,
  PROP_BRIGHTNESS,
  PROP_CONTRAST,
  PROP_SATURATION,
  PROP_HUE,
  PROP_GAMMA,
  PROP_INVERT,
  PROP_GRAYSCALE,
  PROP_BLUR_SIGMA,
  PROP_SHARPEN,
  PROP_EDGES,
};

#define DEFAULT_METHOD GST_ZC_FILTER_METHOD_BILINEAR
#define DEFAULT_ADD_BORDERS TRUE
#define DEFAULT_CROP 0
#define DEFAULT_VIDEO_DIRECTION GST_VIDEO_ORIENTATION_IDENTITY
#define DEFAULT_BRIGHTNESS 0.0
#define DEFAULT_CONTRAST 1.0
#define DEFAULT_SATURATION 1.0
#define DEFAULT_HUE 0.0
#define DEFAULT_GAMMA 1.0
#define DEFAULT_INVERT FALSE
#define DEFAULT_GRAYSCALE FALSE
#define DEFAULT_BLUR_SIGMA 0.0
#define DEFAULT_SHARPEN 0.0
#define DEFAULT_EDGES FALSE

/* Unsharp mask radius: the blur under `sharpen` */
#define SHARPEN_SIGMA 1.0f

#define GST_TYPE_ZC_FILTER_METHOD (gst_zc_filter_method_get_type ())
static GType
gst_zc_filter_method_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_ZC_FILTER_METHOD_NEAREST, "Nearest neighbour: the source pixel "
          "under the centre of each output pixel", "nearest-neighbour"},
    {GST_ZC_FILTER_METHOD_BILINEAR, "Bilinear: 2 taps when enlarging, an "
          "averaging triangle when shrinking (videoscale's bilinear)",
        "bilinear"},
    {GST_ZC_FILTER_METHOD_BICUBIC, "Bicubic: Mitchell-Netravali cubic, "
          "B = C = 1/3 (videoscale's mitchell)", "bicubic"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstZcFilterMethod", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/* Everything the properties set; copied whole per frame */
struct Settings
{
  GstZcFilterMethod method = DEFAULT_METHOD;
  gboolean add_borders = DEFAULT_ADD_BORDERS;
  gint crop_left = 0, crop_right = 0, crop_top = 0, crop_bottom = 0;
  GstVideoOrientationMethod direction = DEFAULT_VIDEO_DIRECTION;
  /* from the last image-orientation tag, used with direction=auto */
  GstVideoOrientationMethod tag_direction = GST_VIDEO_ORIENTATION_IDENTITY;
  gdouble brightness = DEFAULT_BRIGHTNESS;
  gdouble contrast = DEFAULT_CONTRAST;
  gdouble saturation = DEFAULT_SATURATION;
  gdouble hue = DEFAULT_HUE;
  gdouble gamma = DEFAULT_GAMMA;
  gboolean invert = DEFAULT_INVERT;
  gboolean grayscale = DEFAULT_GRAYSCALE;
  gdouble blur_sigma = DEFAULT_BLUR_SIGMA;
  gdouble sharpen = DEFAULT_SHARPEN;
  gboolean edges = DEFAULT_EDGES;

  GstVideoOrientationMethod active_direction () const
  {
    if (direction == GST_VIDEO_ORIENTATION_AUTO)
      return tag_direction;
    if (direction == GST_VIDEO_ORIENTATION_CUSTOM)
      return GST_VIDEO_ORIENTATION_IDENTITY;
    return direction;
  }
  bool has_crop () const
  {
    return crop_left || crop_right || crop_top || crop_bottom;
  }
  bool has_point_effects () const
  {
    return brightness != 0.0 || contrast != 1.0 || saturation != 1.0 ||
        hue != 0.0 || gamma != 1.0 || invert || grayscale;
  }
  bool same_point_effects (const Settings & o) const
  {
    return brightness == o.brightness && contrast == o.contrast &&
        saturation == o.saturation && hue == o.hue && gamma == o.gamma &&
        invert == o.invert && grayscale == o.grayscale;
  }
  zc::SpatialParams spatial () const
  {
    zc::SpatialParams p;
    p.blur_sigma = (float) blur_sigma;
    p.sharpen = (float) sharpen;
    p.sharpen_sigma = SHARPEN_SIGMA;
    p.edges = edges;
    return p;
  }
  bool has_spatial () const
  {
    return zc::spatial_is_active (spatial ());
  }
};

static bool
direction_swaps_axes (GstVideoOrientationMethod m)
{
  return m == GST_VIDEO_ORIENTATION_90R || m == GST_VIDEO_ORIENTATION_90L ||
      m == GST_VIDEO_ORIENTATION_UL_LR || m == GST_VIDEO_ORIENTATION_UR_LL;
}

/* Scratch frames for the spatial passes: device memory on the GPU, plain
 * memory on the CPU backend; sized for the output caps, allocated on the
 * first frame that needs them and kept until the caps change. */
struct Scratch
{
  guint8 *mem = nullptr;
  gsize frame_bytes = 0;
  guint n_frames = 0;
  bool on_device = false;
  std::vector < guint8 > host;
};

/* The copy engines' side of staging a mapped input (transform_gpu()): a
 * stream of its own and two device frames (in priv->stage), so that one
 * frame's copy runs while the kernel converts the one before. copied[k]:
 * the copy into frame k is done (the kernel waits for it); consumed[k]:
 * the kernel that read frame k is done (the next copy into k waits). */
struct Stager
{
  gpointer stream = nullptr;
  gpointer copied[2] = { nullptr, nullptr };
  gpointer consumed[2] = { nullptr, nullptr };
  guint next = 0;
};

struct GstZcFilterPrivate
{
  std::mutex lock;              /* guards settings */
  Settings settings;

  /* streaming thread only, from set_info */
  bool caps_equal = false;
  zc::FrameDesc in_desc;        /* planes filled per frame */
  zc::FrameDesc out_desc;
  gint in_par_n = 1, in_par_d = 1, out_par_n = 1, out_par_d = 1;
  /* the table kernel: valid for the point effects of lut_for */
  bool lut_valid = false;
  bool lut_built = false;
  Settings lut_for;
  zc::LutSet luts[GST_VIDEO_MAX_PLANES];
  guint n_planes = 0;
  Scratch scratch;              /* frames between passes (output caps) */
  Scratch stage;                /* the input, staged in device memory */
  Scratch unstage;              /* the output, before the copy to mapped */
  Stager stager;
  bool warned_crop = false;
};

struct _GstZcFilter
{
  GstZcBaseTransform parent;
  GstZcFilterPrivate *priv;
};

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

/* ---- formats ------------------------------------------------------------ */

static bool
pixfmt_from_video_format (GstVideoFormat f, zc::PixFmt * out)
{
  switch (f) {
#define ZC_MAP(name) case GST_VIDEO_FORMAT_##name: *out = zc::PixFmt::name; \
    return true
      ZC_MAP (RGBA);
      ZC_MAP (BGRA);
      ZC_MAP (RGBx);
      ZC_MAP (BGRx);
      ZC_MAP (ARGB);
      ZC_MAP (ABGR);
      ZC_MAP (xRGB);
      ZC_MAP (xBGR);
      ZC_MAP (RGB);
      ZC_MAP (BGR);
      ZC_MAP (GRAY8);
      ZC_MAP (GRAY16_LE);
      ZC_MAP (NV12);
      ZC_MAP (NV21);
      ZC_MAP (I420);
      ZC_MAP (YV12);
      ZC_MAP (Y42B);
      ZC_MAP (Y444);
      ZC_MAP (YUY2);
      ZC_MAP (UYVY);
      ZC_MAP (P010_10LE);
      ZC_MAP (I420_10LE);
#undef ZC_MAP
    default:
      return false;
  }
}

/* The frame description of @info, planes not yet set. Matrices the kernel
 * does not have map to the nearest one it has (logged). */
static bool
frame_desc_from_info (GstZcFilter * self, const GstVideoInfo * info,
    zc::FrameDesc * d)
{
  if (!pixfmt_from_video_format (GST_VIDEO_INFO_FORMAT (info), &d->fmt))
    return false;
  d->width = GST_VIDEO_INFO_WIDTH (info);
  d->height = GST_VIDEO_INFO_HEIGHT (info);
  switch (info->colorimetry.matrix) {
    case GST_VIDEO_COLOR_MATRIX_BT709:
      d->matrix = zc::Matrix::BT709;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT2020:
      d->matrix = zc::Matrix::BT2020;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT601:
      d->matrix = zc::Matrix::BT601;
      break;
    case GST_VIDEO_COLOR_MATRIX_SMPTE240M:
      GST_INFO_OBJECT (self, "SMPTE 240M matrix converted as BT.709");
      d->matrix = zc::Matrix::BT709;
      break;
    default:
      /* RGB, FCC, unknown: BT.601, as GStreamer's converter defaults */
      d->matrix = zc::Matrix::BT601;
      break;
  }
  d->full_range = info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255;
  return true;
}

/* ---- passthrough and settings --------------------------------------------- */

/* Passthrough when the caps are equal and nothing else is asked for.
 * Returns: whether passthrough changed */
static bool
update_passthrough (GstZcFilter * self, bool caps_equal)
{
  Settings s;
  {
    std::lock_guard < std::mutex > lk (self->priv->lock);
    s = self->priv->settings;
  }
  gboolean passthrough = caps_equal && !s.has_point_effects () &&
      !s.has_spatial () && !s.has_crop () &&
      s.active_direction () == GST_VIDEO_ORIENTATION_IDENTITY;
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  if (gst_base_transform_is_passthrough (trans) != passthrough) {
    GST_DEBUG_OBJECT (self, "passthrough %d", passthrough);
    gst_base_transform_set_passthrough (trans, passthrough);
    return true;
  }
  return false;
}

static void
gst_zc_filter_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  auto *self = GST_ZC_FILTER (object);
  auto *priv = self->priv;
  /* properties that change the output size renegotiate */
  bool renegotiate = false;

  {
    std::lock_guard < std::mutex > lk (priv->lock);
    Settings & s = priv->settings;
    switch (prop_id) {
      case PROP_METHOD:
        s.method = (GstZcFilterMethod) g_value_get_enum (value);
        break;
      case PROP_ADD_BORDERS:
        s.add_borders = g_value_get_boolean (value);
        break;
      case PROP_CROP_LEFT:
        s.crop_left = g_value_get_int (value);
        renegotiate = true;
        break;
      case PROP_CROP_RIGHT:
        s.crop_right = g_value_get_int (value);
        renegotiate = true;
        break;
      case PROP_CROP_TOP:
        s.crop_top = g_value_get_int (value);
        renegotiate = true;
        break;
      case PROP_CROP_BOTTOM:
        s.crop_bottom = g_value_get_int (value);
        renegotiate = true;
        break;
      case PROP_VIDEO_DIRECTION:
        s.direction = (GstVideoOrientationMethod) g_value_get_enum (value);
        renegotiate = true;
        break;
      case PROP_BRIGHTNESS:
        s.brightness = g_value_get_double (value);
        break;
      case PROP_CONTRAST:
        s.contrast = g_value_get_double (value);
        break;
      case PROP_SATURATION:
        s.saturation = g_value_get_double (value);
        break;
      case PROP_HUE:
        s.hue = g_value_get_double (value);
        break;
      case PROP_GAMMA:
        s.gamma = g_value_get_double (value);
        break;
      case PROP_INVERT:
        s.invert = g_value_get_boolean (value);
        break;
      case PROP_GRAYSCALE:
        s.grayscale = g_value_get_boolean (value);
        break;
      case PROP_BLUR_SIGMA:
        s.blur_sigma = g_value_get_double (value);
        break;
      case PROP_SHARPEN:
        s.sharpen = g_value_get_double (value);
        break;
      case PROP_EDGES:
        s.edges = g_value_get_boolean (value);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
        return;
    }
  }
  /* Entering or leaving passthrough changes the allocation (in passthrough
   * the upstream pool is downstream's); crop and orientation change the
   * output size: both renegotiate. Effects alone take the next frame. */
  if (update_passthrough (self, self->priv->caps_equal) || renegotiate)
    gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
}

static void
gst_zc_filter_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  auto *priv = GST_ZC_FILTER (object)->priv;
  std::lock_guard < std::mutex > lk (priv->lock);
  const Settings & s = priv->settings;

  switch (prop_id) {
    case PROP_METHOD:
      g_value_set_enum (value, s.method);
      break;
    case PROP_ADD_BORDERS:
      g_value_set_boolean (value, s.add_borders);
      break;
    case PROP_CROP_LEFT:
      g_value_set_int (value, s.crop_left);
      break;
    case PROP_CROP_RIGHT:
      g_value_set_int (value, s.crop_right);
      break;
    case PROP_CROP_TOP:
      g_value_set_int (value, s.crop_top);
      break;
    case PROP_CROP_BOTTOM:
      g_value_set_int (value, s.crop_bottom);
      break;
    case PROP_VIDEO_DIRECTION:
      g_value_set_enum (value, s.direction);
      break;
    case PROP_BRIGHTNESS:
      g_value_set_double (value, s.brightness);
      break;
    case PROP_CONTRAST:
      g_value_set_double (value, s.contrast);
      break;
    case PROP_SATURATION:
      g_value_set_double (value, s.saturation);
      break;
    case PROP_HUE:
      g_value_set_double (value, s.hue);
      break;
    case PROP_GAMMA:
      g_value_set_double (value, s.gamma);
      break;
    case PROP_INVERT:
      g_value_set_boolean (value, s.invert);
      break;
    case PROP_GRAYSCALE:
      g_value_set_boolean (value, s.grayscale);
      break;
    case PROP_BLUR_SIGMA:
      g_value_set_double (value, s.blur_sigma);
      break;
    case PROP_SHARPEN:
      g_value_set_double (value, s.sharpen);
      break;
    case PROP_EDGES:
      g_value_set_boolean (value, s.edges);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

/* ---- caps ------------------------------------------------------------------ */

/* Any format, size, colorimetry and aspect ratio on the other pad; fixate
 * then keeps what it can of the input's. */
static GstCaps *
gst_zc_filter_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstCaps *open = gst_caps_new_empty ();
  guint n = gst_caps_get_size (caps);

  for (guint i = 0; i < n; i++) {
    GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
    GstCapsFeatures *f = gst_caps_get_features (caps, i);
    gst_structure_set (s, "width", GST_TYPE_INT_RANGE, 1, G_MAXINT,
        "height", GST_TYPE_INT_RANGE, 1, G_MAXINT, NULL);
    if (gst_structure_has_field (s, "pixel-aspect-ratio"))
      gst_structure_set (s, "pixel-aspect-ratio", GST_TYPE_FRACTION_RANGE, 1,
          G_MAXINT, G_MAXINT, 1, NULL);
    gst_structure_remove_fields (s, "format", "colorimetry", "chroma-site",
        NULL);
    open = gst_caps_merge_structure_full (open, s,
        f ? gst_caps_features_copy (f) : NULL);
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

/* Width and height of @outs, keeping the display aspect ratio of the
 * (cropped, oriented) input where the other side leaves room, as
 * videoscale does. */
static void
fixate_size (GstZcFilter * self, GstPadDirection direction,
    GstStructure * ins, GstStructure * outs)
{
  Settings s;
  {
    std::lock_guard < std::mutex > lk (self->priv->lock);
    s = self->priv->settings;
  }
  gint in_w = 0, in_h = 0, par_n = 1, par_d = 1;
  if (!gst_structure_get_int (ins, "width", &in_w) ||
      !gst_structure_get_int (ins, "height", &in_h))
    return;
  gst_structure_get_fraction (ins, "pixel-aspect-ratio", &par_n, &par_d);
  if (direction == GST_PAD_SINK) {
    in_w = MAX (1, in_w - s.crop_left - s.crop_right);
    in_h = MAX (1, in_h - s.crop_top - s.crop_bottom);
  }
  if (direction_swaps_axes (s.active_direction ())) {
    std::swap (in_w, in_h);
    std::swap (par_n, par_d);
  }

  /* display aspect ratio of the input */
  gint dar_n, dar_d;
  if (!gst_util_fraction_multiply (in_w, in_h, par_n, par_d, &dar_n, &dar_d)) {
    dar_n = in_w;
    dar_d = in_h;
  }

  const GValue *w_val = gst_structure_get_value (outs, "width");
  const GValue *h_val = gst_structure_get_value (outs, "height");
  bool w_fixed = w_val && G_VALUE_HOLDS_INT (w_val);
  bool h_fixed = h_val && G_VALUE_HOLDS_INT (h_val);

  /* no aspect ratio on either side: square pixels, left implicit */
  if (!gst_structure_has_field (outs, "pixel-aspect-ratio") &&
      (par_n != par_d || gst_structure_has_field (ins, "pixel-aspect-ratio")))
    gst_structure_set (outs, "pixel-aspect-ratio", GST_TYPE_FRACTION, par_n,
        par_d, NULL);

  if (w_fixed && h_fixed) {
    /* the par that keeps the aspect ratio, if the other side allows it */
    gint w = g_value_get_int (w_val), h = g_value_get_int (h_val);
    gint n, d;
    if (gst_structure_has_field (outs, "pixel-aspect-ratio") &&
        gst_util_fraction_multiply (dar_n, dar_d, h, w, &n, &d))
      gst_structure_fixate_field_nearest_fraction (outs,
          "pixel-aspect-ratio", n, d);
    return;
  }

  if (gst_structure_has_field (outs, "pixel-aspect-ratio"))
    gst_structure_fixate_field_nearest_fraction (outs, "pixel-aspect-ratio",
        par_n, par_d);
  gint opar_n = 1, opar_d = 1;
  gst_structure_get_fraction (outs, "pixel-aspect-ratio", &opar_n, &opar_d);
  /* output width / height that keeps the DAR with the output par */
  gint num, den;
  if (!gst_util_fraction_multiply (dar_n, dar_d, opar_d, opar_n, &num, &den)) {
    num = in_w;
    den = in_h;
  }

  if (w_fixed) {
    gint w = g_value_get_int (w_val);
    gint h = (gint) gst_util_uint64_scale_int_round (w, den, num);
    gst_structure_fixate_field_nearest_int (outs, "height", MAX (h, 1));
  } else if (h_fixed) {
    gint h = g_value_get_int (h_val);
    gint w = (gint) gst_util_uint64_scale_int_round (h, num, den);
    gst_structure_fixate_field_nearest_int (outs, "width", MAX (w, 1));
  } else {
    /* keep the input height, width from the DAR */
    gint w = (gint) gst_util_uint64_scale_int_round (in_h, num, den);
    gst_structure_fixate_field_nearest_int (outs, "height", in_h);
    gst_structure_fixate_field_nearest_int (outs, "width", MAX (w, 1));
  }
}

static GstCaps *
gst_zc_filter_fixate_caps (GstBaseTransform * trans, GstPadDirection direction,
    GstCaps * caps, GstCaps * othercaps)
{
  auto *self = GST_ZC_FILTER (trans);

  othercaps = gst_caps_make_writable (gst_caps_truncate (othercaps));
  GstStructure *ins = gst_caps_get_structure (caps, 0);
  GstStructure *outs = gst_caps_get_structure (othercaps, 0);

  /* the input's format if the other side takes it */
  const gchar *fmt = gst_structure_get_string (ins, "format");
  if (fmt)
    gst_structure_fixate_field_string (outs, "format", fmt);

  fixate_size (self, direction, ins, outs);

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

/* ---- the table kernel ----------------------------------------------------- */

/* Bytes of one pattern period in @plane of @info's format: 1 for planar
 * samples, 2 for interleaved chroma pairs, 3 or 4 for packed pixels, 4 for
 * packed 4:2:2 macropixels */
static guint
plane_period (const GstVideoInfo * info, guint plane)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  guint period = 1;
  for (guint c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); c++) {
    if (GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) == plane)
      period = MAX (period, (guint) GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, c));
  }
  return period;
}

static void
frame_desc_of (const zc::FrameDesc & like, int w, int h,
    const GstVideoInfo * info, guint8 * mem, zc::FrameDesc * d)
{
  *d = like;
  d->width = w;
  d->height = h;
  for (guint p = 0; p < 3; p++) {
    bool has = p < GST_VIDEO_INFO_N_PLANES (info);
    d->planes[p] = has ? mem + GST_VIDEO_INFO_PLANE_OFFSET (info, p) : nullptr;
    d->strides[p] = has ? GST_VIDEO_INFO_PLANE_STRIDE (info, p) : 0;
  }
}

/* The point effects of @s as one 256-entry table per byte position of each
 * plane, when every output byte is a function of the same input byte alone
 * (an invert, or luma-only effects on Y'CbCr): then a table kernel gives
 * the converter's bytes, in place and with wide loads. The tables are read
 * off the converter itself on a probe frame (byte v of each position in
 * each sample) and checked against it on a random frame; any difference
 * and the converter runs instead. 8-bit formats only. */
static void
build_effect_luts (GstZcFilter * self, const Settings & s)
{
  auto *priv = self->priv;
  const GstVideoInfo *in = gst_zc_base_transform_get_in_info
      (GST_ZC_BASE_TRANSFORM (self));
  priv->lut_built = true;
  priv->lut_for = s;
  priv->lut_valid = false;
  if (!priv->caps_equal || !s.has_point_effects () ||
      GST_VIDEO_FORMAT_INFO_DEPTH (in->finfo, 0) != 8)
    return;

  zc::ConvertParams cp;
  cp.brightness = s.brightness;
  cp.contrast = s.contrast;
  cp.saturation = s.saturation;
  cp.hue = s.hue;
  cp.gamma = s.gamma;
  cp.invert = s.invert;
  cp.grayscale = s.grayscale;

  /* probe: 512 x 2 covers the 256 values in every position, 4:2:0 chroma
   * included */
  GstVideoInfo pi;
  gst_video_info_set_format (&pi, GST_VIDEO_INFO_FORMAT (in), 512, 2);
  pi.colorimetry = in->colorimetry;
  std::vector < guint8 > pin (pi.size), pout (pi.size);
  guint n_planes = GST_VIDEO_INFO_N_PLANES (&pi);
  for (guint p = 0; p < n_planes; p++) {
    guint period = plane_period (&pi, p);
    guint8 *row0 = pin.data () + GST_VIDEO_INFO_PLANE_OFFSET (&pi, p);
    gint rows = gst_zc_video_plane_rows (&pi, p);
    guint32 bytes = gst_zc_video_plane_row_bytes (&pi, p);
    if (bytes < 256 * period)
      return;
    for (gint y = 0; y < rows; y++)
      for (guint32 b = 0; b < bytes; b++)
        row0[y * GST_VIDEO_INFO_PLANE_STRIDE (&pi, p) + b] =
            (guint8) (b / period);
  }
  zc::FrameDesc sd, dd;
  frame_desc_of (priv->in_desc, 512, 2, &pi, pin.data (), &sd);
  frame_desc_of (priv->in_desc, 512, 2, &pi, pout.data (), &dd);
  if (!zc::convert_cpu (sd, dd, cp, 1))
    return;
  for (guint p = 0; p < n_planes; p++) {
    guint period = plane_period (&pi, p);
    const guint8 *row0 = pout.data () + GST_VIDEO_INFO_PLANE_OFFSET (&pi, p);
    for (guint k = 0; k < 4; k++)
      for (guint v = 0; v < 256; v++)
        priv->luts[p].lut[k][v] = row0[v * period + k % period];
  }

  /* check: a random frame through the tables and through the converter */
  GstVideoInfo ci;
  gst_video_info_set_format (&ci, GST_VIDEO_INFO_FORMAT (in), 96, 6);
  ci.colorimetry = in->colorimetry;
  std::vector < guint8 > cin (ci.size), cconv (ci.size), clut (ci.size);
  guint32 r = 0x9e3779b9u;
  for (auto & b:cin) {
    r = r * 1664525u + 1013904223u;
    b = (guint8) (r >> 24);
  }
  frame_desc_of (priv->in_desc, 96, 6, &ci, cin.data (), &sd);
  frame_desc_of (priv->in_desc, 96, 6, &ci, cconv.data (), &dd);
  if (!zc::convert_cpu (sd, dd, cp, 1))
    return;
  zc::PlaneJob jobs[3];
  for (guint p = 0; p < n_planes; p++) {
    gsize off = GST_VIDEO_INFO_PLANE_OFFSET (&ci, p);
    jobs[p] = { cin.data () + off, clut.data () + off,
      (size_t) GST_VIDEO_INFO_PLANE_STRIDE (&ci, p),
      (size_t) GST_VIDEO_INFO_PLANE_STRIDE (&ci, p),
      gst_zc_video_plane_row_bytes (&ci, p), gst_zc_video_plane_rows (&ci, p) };
  }
  zc::apply_lut_cpu_planes (jobs, priv->luts, n_planes, 1);
  for (guint p = 0; p < n_planes; p++) {
    gsize off = GST_VIDEO_INFO_PLANE_OFFSET (&ci, p);
    gsize stride = GST_VIDEO_INFO_PLANE_STRIDE (&ci, p);
    guint32 bytes = gst_zc_video_plane_row_bytes (&ci, p);
    for (guint y = 0; y < gst_zc_video_plane_rows (&ci, p); y++)
      if (memcmp (cconv.data () + off + y * stride,
              clut.data () + off + y * stride, bytes) != 0) {
        GST_DEBUG_OBJECT (self, "effects are not per byte here: converter");
        return;
      }
  }
  priv->n_planes = n_planes;
  priv->lut_valid = true;
  GST_DEBUG_OBJECT (self, "effects as tables on %u plane(s)", n_planes);
}

static void
scratch_release (GstZcFilter * self, Scratch & sc)
{
#if GST_ZC_HAVE_CUDA
  if (sc.on_device && sc.mem) {
    GstZcContext *ctx =
        gst_zc_base_transform_get_context (GST_ZC_BASE_TRANSFORM (self));
    gst_zc::DeviceScope scope (ctx ? gst_zc_context_get_device_id (ctx) : 0);
    /* cudaFree waits for the work queued on it */
    GST_ZC_CUDA_OK (cudaFree (sc.mem));
  }
#else
  (void) self;
#endif
  sc.mem = nullptr;
  sc.host.clear ();
  sc.host.shrink_to_fit ();
  sc.frame_bytes = 0;
  sc.n_frames = 0;
  sc.on_device = false;
}

static void
scratch_free (GstZcFilter * self)
{
  scratch_release (self, self->priv->scratch);
  scratch_release (self, self->priv->stage);
  scratch_release (self, self->priv->unstage);
#if GST_ZC_HAVE_CUDA
  Stager & st = self->priv->stager;
  GstZcContext *ctx =
      gst_zc_base_transform_get_context (GST_ZC_BASE_TRANSFORM (self));
  if (st.stream && ctx) {
    gst_zc::DeviceScope scope (gst_zc_context_get_device_id (ctx));
    for (guint k = 0; k < 2; k++) {
      /* (released once their work is done) */
      GST_ZC_CUDA_OK (cudaEventDestroy ((cudaEvent_t) st.copied[k]));
      GST_ZC_CUDA_OK (cudaEventDestroy ((cudaEvent_t) st.consumed[k]));
    }
    gst_zc_context_free_stream (ctx, st.stream);
  }
#endif
  self->priv->stager = Stager ();
}

static gboolean
gst_zc_filter_set_info (GstZcBaseTransform * base, GstCaps * incaps,
    GstVideoInfo * in_info, GstCaps * outcaps, GstVideoInfo * out_info)
{
  auto *self = GST_ZC_FILTER (base);
  auto *priv = self->priv;

  if (!frame_desc_from_info (self, in_info, &priv->in_desc) ||
      !frame_desc_from_info (self, out_info, &priv->out_desc)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Unsupported format"),
        ("%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, incaps, outcaps));
    return FALSE;
  }
  priv->in_par_n = GST_VIDEO_INFO_PAR_N (in_info);
  priv->in_par_d = MAX (GST_VIDEO_INFO_PAR_D (in_info), 1);
  priv->out_par_n = GST_VIDEO_INFO_PAR_N (out_info);
  priv->out_par_d = MAX (GST_VIDEO_INFO_PAR_D (out_info), 1);
  if (priv->in_par_n <= 0)
    priv->in_par_n = 1;
  if (priv->out_par_n <= 0)
    priv->out_par_n = 1;
  /* equal as video (a missing pixel-aspect-ratio is 1/1) */
  priv->caps_equal = gst_video_info_is_equal (in_info, out_info);
  priv->lut_built = false;
  scratch_free (self);
  priv->warned_crop = false;

  GST_DEBUG_OBJECT (self, "%s %dx%d -> %s %dx%d%s",
      GST_VIDEO_INFO_NAME (in_info), GST_VIDEO_INFO_WIDTH (in_info),
      GST_VIDEO_INFO_HEIGHT (in_info), GST_VIDEO_INFO_NAME (out_info),
      GST_VIDEO_INFO_WIDTH (out_info), GST_VIDEO_INFO_HEIGHT (out_info),
      priv->caps_equal ? " (same caps)" : "");
  update_passthrough (self, priv->caps_equal);
  return TRUE;
}

/* ---- allocation ------------------------------------------------------------ */

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
  if (!gst_zc_base_transform_propose_zc_pool (base, query, type))
    return FALSE;
  /* crop regions are applied by the kernel, at no cost */
  gst_query_add_allocation_meta (query, GST_VIDEO_CROP_META_API_TYPE, NULL);
  return TRUE;
}

static gboolean
gst_zc_filter_decide_allocation (GstBaseTransform * trans, GstQuery * query)
{
  auto *base = GST_ZC_BASE_TRANSFORM (trans);

  /* whatever zero-copy memory downstream asks for, else our own */
  return gst_zc_base_transform_decide_zc_pool (base, query,
      GST_ZC_MEMORY_TYPE_AUTO, gst_zc_base_transform_get_memory_type (base));
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

enum class Pass
{ LUT, CONVERT };

/* What one frame needs: the passes and their parameters */
struct FrameWork
{
  Pass pass = Pass::CONVERT;
  bool convert = true;          /* a conversion pass (else spatial only) */
  zc::ConvertParams cp;
  zc::SpatialParams sp;
  bool spatial = false;
};

static zc::Sampling
sampling_of (GstZcFilterMethod m)
{
  switch (m) {
    case GST_ZC_FILTER_METHOD_NEAREST:
      return zc::Sampling::Nearest;
    case GST_ZC_FILTER_METHOD_BICUBIC:
      return zc::Sampling::Bicubic;
    case GST_ZC_FILTER_METHOD_BILINEAR:
    default:
      return zc::Sampling::Bilinear;
  }
}

/* Destination rectangle that keeps the display aspect ratio of the
 * cropped, oriented source inside the output, centred, as videoscale's
 * add-borders does; the whole output when the ratios already agree. */
static void
fit_with_borders (GstZcFilter * self, int src_w, int src_h, bool swap,
    zc::ConvertParams * cp)
{
  auto *priv = self->priv;
  const int out_w = priv->out_desc.width, out_h = priv->out_desc.height;
  double par = (double) priv->in_par_n / priv->in_par_d;
  if (swap) {
    std::swap (src_w, src_h);
    par = 1.0 / par;
  }
  double out_par = (double) priv->out_par_n / priv->out_par_d;
  /* source display ratio, in output pixels */
  double ratio = src_w * par / (src_h * out_par);
  int w = out_w, h = out_h;
  if (ratio * out_h > out_w)
    h = (int) std::lround (out_w / ratio);
  else
    w = (int) std::lround (out_h * ratio);
  if (std::abs (w - out_w) <= 1 && std::abs (h - out_h) <= 1)
    return;                     /* same ratio: no borders */

  /* subsampled outputs keep the rectangle on chroma sample boundaries */
  zc::PixFmt f = priv->out_desc.fmt;
  bool sub_x = f == zc::PixFmt::NV12 || f == zc::PixFmt::NV21 ||
      f == zc::PixFmt::I420 || f == zc::PixFmt::YV12 ||
      f == zc::PixFmt::Y42B || f == zc::PixFmt::YUY2 ||
      f == zc::PixFmt::UYVY || f == zc::PixFmt::P010_10LE ||
      f == zc::PixFmt::I420_10LE;
  bool sub_y = sub_x && f != zc::PixFmt::Y42B && f != zc::PixFmt::YUY2 &&
      f != zc::PixFmt::UYVY;
  w = CLAMP (w, 1, out_w);
  h = CLAMP (h, 1, out_h);
  int x = (out_w - w) / 2, y = (out_h - h) / 2;
  if (sub_x && w > 1) {
    x &= ~1;
    w = MIN (w + (w & 1), out_w - x);
  }
  if (sub_y && h > 1) {
    y &= ~1;
    h = MIN (h + (h & 1), out_h - y);
  }
  cp->dst_x = x;
  cp->dst_y = y;
  cp->dst_w = w;
  cp->dst_h = h;
}

/* Fills @work for @inbuf from the settings; false (error posted) when the
 * crop leaves nothing. */
static bool
plan_frame (GstZcFilter * self, GstBuffer * inbuf, FrameWork * work,
    bool post_errors)
{
  auto *priv = self->priv;
  Settings s;
  {
    std::lock_guard < std::mutex > lk (priv->lock);
    s = priv->settings;
  }
  const int W = priv->in_desc.width, H = priv->in_desc.height;

  /* crop: the meta's region, then the properties' margins inside it */
  int left = 0, top = 0, right = 0, bottom = 0;
  GstVideoCropMeta *crop = gst_buffer_get_video_crop_meta (inbuf);
  if (crop && crop->width > 0 && crop->height > 0 &&
      crop->x + crop->width <= (guint) W && crop->y + crop->height <= (guint) H) {
    left = crop->x;
    top = crop->y;
    right = W - (int) (crop->x + crop->width);
    bottom = H - (int) (crop->y + crop->height);
  }
  left += s.crop_left;
  right += s.crop_right;
  top += s.crop_top;
  bottom += s.crop_bottom;
  if (left + right >= W || top + bottom >= H) {
    if (!post_errors)
      return false;
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Crop leaves no picture: %d+%d columns and %d+%d rows cropped from "
            "a %dx%d frame", left, right, top, bottom, W, H),
        ("crop-left/right/top/bottom plus the buffer's GstVideoCropMeta"));
    return false;
  }
  bool cropped = left || right || top || bottom;
  GstVideoOrientationMethod dir = s.active_direction ();

  work->cp = zc::ConvertParams ();
  work->cp.sampling = sampling_of (s.method);
  work->cp.orientation = (zc::Orientation) dir;
  work->cp.crop_left = left;
  work->cp.crop_right = right;
  work->cp.crop_top = top;
  work->cp.crop_bottom = bottom;
  work->cp.brightness = s.brightness;
  work->cp.contrast = s.contrast;
  work->cp.saturation = s.saturation;
  work->cp.hue = s.hue;
  work->cp.gamma = s.gamma;
  work->cp.invert = s.invert;
  work->cp.grayscale = s.grayscale;
  if (s.add_borders)
    fit_with_borders (self, W - left - right, H - top - bottom,
        direction_swaps_axes (dir), &work->cp);

  work->sp = s.spatial ();
  work->spatial = zc::spatial_is_active (work->sp);
  bool geometry_identity = !cropped && dir == GST_VIDEO_ORIENTATION_IDENTITY;
  bool same = priv->caps_equal && geometry_identity;

  if (same && !work->spatial && s.has_point_effects () &&
      (!priv->lut_built || !priv->lut_for.same_point_effects (s)))
    build_effect_luts (self, s);
  if (same && !work->spatial && s.has_point_effects () && priv->lut_valid) {
    work->pass = Pass::LUT;
    work->convert = false;
  } else {
    work->pass = Pass::CONVERT;
    /* equal caps and only spatial effects: no conversion pass */
    work->convert = !(same && !s.has_point_effects ());
  }
  return true;
}

static GstFlowReturn
gst_zc_filter_prepare_output_buffer (GstBaseTransform * trans,
    GstBuffer * inbuf, GstBuffer ** outbuf)
{
  auto *self = GST_ZC_FILTER (trans);
  if (gst_base_transform_is_passthrough (trans)) {
    *outbuf = inbuf;
    return GST_FLOW_OK;
  }
  /* The table kernel runs in place when nobody else holds the frame and it
   * already is in the memory downstream asked for; every other pass reads
   * the input and writes a pool buffer (no more bus traffic than in place) */
  FrameWork work;
  if (self->priv->caps_equal && plan_frame (self, inbuf, &work, false) &&
      work.pass == Pass::LUT) {
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
  }
  return GST_BASE_TRANSFORM_CLASS (gst_zc_filter_parent_class)->
      prepare_output_buffer (trans, inbuf, outbuf);
}

/* Lays out scratch frame @i like @like (format, size), rows 128-byte aligned */
static gsize
scratch_layout (const zc::FrameDesc & like, guint8 * base, zc::FrameDesc * d)
{
  *d = like;
  gsize off = 0;
  int n = zc::pixfmt_n_planes (like.fmt);
  for (int p = 0; p < 3; p++) {
    d->planes[p] = nullptr;
    d->strides[p] = 0;
  }
  for (int p = 0; p < n; p++) {
    gsize stride = GST_ROUND_UP_N (zc::pixfmt_plane_row_bytes (like.fmt, p,
            like.width), 128);
    d->planes[p] = base ? base + off : nullptr;
    d->strides[p] = stride;
    off += stride * zc::pixfmt_plane_rows (like.fmt, p, like.height);
  }
  return off;
}

/* @n_frames frames laid out like @like in @sc, on the device or in host
 * memory; allocated once per caps */
static bool
scratch_ensure (GstZcFilter * self, Scratch & sc, const zc::FrameDesc & like,
    guint n_frames, bool on_device)
{
  if (sc.n_frames >= n_frames && sc.on_device == on_device)
    return true;
  scratch_release (self, sc);
  zc::FrameDesc d;
  gsize frame = scratch_layout (like, nullptr, &d);
  gsize total = frame * n_frames;
  if (on_device) {
#if GST_ZC_HAVE_CUDA
    GstZcContext *ctx =
        gst_zc_base_transform_get_context (GST_ZC_BASE_TRANSFORM (self));
    gst_zc::DeviceScope scope (gst_zc_context_get_device_id (ctx));
    void *mem = nullptr;
    if (!scope.ok () || !GST_ZC_CUDA_OK (cudaMalloc (&mem, total)))
      return false;
    sc.mem = (guint8 *) mem;
#else
    return false;
#endif
  } else {
    sc.host.resize (total);
    sc.mem = sc.host.data ();
  }
  sc.frame_bytes = frame;
  sc.n_frames = n_frames;
  sc.on_device = on_device;
  GST_DEBUG_OBJECT (self, "%u scratch frame(s) of %" G_GSIZE_FORMAT
      " bytes in %s memory", n_frames, frame, on_device ? "device" : "host");
  return true;
}

static void
scratch_frame (const Scratch & sc, const zc::FrameDesc & like, guint i,
    zc::FrameDesc * d)
{
  scratch_layout (like, sc.mem + i * sc.frame_bytes, d);
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

static GstFlowReturn
post_kernel_error (GstZcFilter * self, const gchar * what, bool not_supported,
    const gchar * detail)
{
  if (not_supported) {
    GST_ELEMENT_ERROR (self, STREAM, NOT_IMPLEMENTED,
        ("%s: this combination is not implemented", what), ("%s", detail));
  } else {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("%s: invalid request (crop, borders or effect out of range)", what),
        ("%s", detail));
  }
  return GST_FLOW_ERROR;
}

#if GST_ZC_HAVE_CUDA
/* The library logs the failed call; the runtime also keeps it as this
 * thread's last error, which names it for the user. */
static GstFlowReturn
post_cuda_error (GstZcFilter * self, const gchar * what, cudaError_t err)
{
  if (err == cudaSuccess)
    err = cudaGetLastError ();
  GST_ELEMENT_ERROR (self, RESOURCE, FAILED, ("%s: %s", what,
          cudaGetErrorName (err)), ("%s", cudaGetErrorString (err)));
  return GST_FLOW_ERROR;
}

static void
frame_desc_planes_gpu (GstBuffer * buf, const GstVideoInfo * info,
    const zc::FrameDesc & like, zc::FrameDesc * d)
{
  auto *mem = (GstZcMemory *) gst_buffer_peek_memory (buf, 0);
  auto *base = (uint8_t *) gst_zc_memory_get_device_pointer (mem);
  *d = like;
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (info) && p < 3; p++) {
    gsize off, stride;
    gst_zc_video_plane_layout (buf, info, p, &off, &stride);
    d->planes[p] = base + off;
    d->strides[p] = stride;
  }
}

/* Whether the conversion kernel should read the input from a device-memory
 * copy made by the copy engines: for a frame in mapped host memory, unless
 * the kernel reads it once, in order, with 4-byte loads (a packed 4-byte RGB
 * format, nothing moved) and writes mapped memory too. The kernel's tiles
 * read mapped memory in wide loads, but it is compute-bound, and while it
 * computes the bus idles: the copy engines first are faster. Measured on an
 * H200 (zc-compute-bench, e3178f8): NV12 4K -> RGBA 1080p 0.59 ms staged
 * against 0.83 ms reading mapped memory; NV12 -> RGBA at 1080p 0.24 against
 * 0.28 ms. Into device memory (the first element of a chain) it always
 * stages: see transform_gpu(). */
static bool
should_stage_input (GstZcFilter * self, const FrameWork & work,
    GstZcMemory * in_mem, GstZcMemory * out_mem)
{
  auto *priv = self->priv;
  if (gst_zc_memory_get_memory_type (in_mem) != GST_ZC_MEMORY_TYPE_MAPPED)
    return false;
  if (gst_zc_memory_get_memory_type (out_mem) == GST_ZC_MEMORY_TYPE_DEVICE)
    return true;
  const zc::ConvertParams & cp = work.cp;
  bool moved = cp.crop_left || cp.crop_right || cp.crop_top ||
      cp.crop_bottom || cp.orientation != zc::Orientation::Identity ||
      cp.dst_w || priv->in_desc.width != priv->out_desc.width ||
      priv->in_desc.height != priv->out_desc.height;
  switch (priv->in_desc.fmt) {
    case zc::PixFmt::RGBA:
    case zc::PixFmt::BGRA:
    case zc::PixFmt::RGBx:
    case zc::PixFmt::BGRx:
    case zc::PixFmt::ARGB:
    case zc::PixFmt::ABGR:
    case zc::PixFmt::xRGB:
    case zc::PixFmt::xBGR:
      return moved;
    default:
      return true;
  }
}

/* The stager's stream and events, made once (the device is current). */
static bool
stager_ensure (GstZcFilter * self)
{
  Stager & st = self->priv->stager;
  if (st.stream)
    return true;
  GstZcContext *ctx =
      gst_zc_base_transform_get_context (GST_ZC_BASE_TRANSFORM (self));
  Stager made;
  bool ok = true;
  for (guint k = 0; k < 2 && ok; k++) {
    cudaEvent_t a = nullptr, b = nullptr;
    ok = GST_ZC_CUDA_OK (cudaEventCreateWithFlags (&a,
            cudaEventDisableTiming)) &&
        GST_ZC_CUDA_OK (cudaEventCreateWithFlags (&b,
            cudaEventDisableTiming));
    made.copied[k] = a;
    made.consumed[k] = b;
  }
  if (ok)
    made.stream = gst_zc_context_new_stream (ctx);
  if (!made.stream) {
    for (guint k = 0; k < 2; k++) {
      if (made.copied[k])
        cudaEventDestroy ((cudaEvent_t) made.copied[k]);
      if (made.consumed[k])
        cudaEventDestroy ((cudaEvent_t) made.consumed[k]);
    }
    return false;
  }
  st = made;
  return true;
}

/* Copies frame @src to @dst (same format and size) plane by plane, on the
 * copy engines, in @stream; adds the bytes moved to @bytes. */
static cudaError_t
copy_frame_async (const zc::FrameDesc & src, const zc::FrameDesc & dst,
    cudaStream_t stream, gsize * bytes)
{
  for (int p = 0; p < zc::pixfmt_n_planes (src.fmt); p++) {
    size_t row = zc::pixfmt_plane_row_bytes (src.fmt, p, src.width);
    int rows = zc::pixfmt_plane_rows (src.fmt, p, src.height);
    cudaError_t err = cudaMemcpy2DAsync (dst.planes[p], dst.strides[p],
        src.planes[p], src.strides[p], row, rows, cudaMemcpyDefault, stream);
    if (err != cudaSuccess)
      return err;
    *bytes += row * rows;
  }
  return cudaSuccess;
}

/* Where the kernels of one frame read and write, and what the copy engines
 * move around them. A kernel that reads or writes mapped memory holds its
 * SMs while the bus serves it, so in a chain (zcfilter ! zcfilter ...) the
 * first element's kernel, reading mapped memory, and the last one's,
 * writing it, could not run at the same time: a chain of three took the
 * two bus crossings one after the other (H200, 4K RGBA: 1.44 ms against
 * 0.87 ms for one element). So an element between mapped and device memory
 * moves the mapped side with the copy engines (one each way, running
 * beside each other and beside kernels) and runs its kernels on device
 * memory: the first element of a chain stages its input into its device
 * output (and works there in place), the last one runs into a device
 * frame and copies that to its mapped output. */
struct GpuRoute
{
  zc::FrameDesc src, dst;       /* what the kernels read and write */
  zc::FrameDesc out;            /* the output buffer */
  bool unstage = false;         /* dst is device scratch, copied to out */
};

static GstFlowReturn
transform_gpu (GstZcFilter * self, const FrameWork & work, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  auto *base = GST_ZC_BASE_TRANSFORM (self);
  auto *priv = self->priv;
  const GstVideoInfo *in_info = gst_zc_base_transform_get_in_info (base);
  const GstVideoInfo *out_info = gst_zc_base_transform_get_out_info (base);
  auto stream = (cudaStream_t) gst_zc_base_transform_get_stream (base);
  auto *in_mem = (GstZcMemory *) gst_buffer_peek_memory (inbuf, 0);
  auto *out_mem = (GstZcMemory *) gst_buffer_peek_memory (outbuf, 0);
  bool in_place = inbuf == outbuf;
  int n_passes = work.spatial ? zc::spatial_n_passes (work.sp) : 0;
  /* scratch: the converted frame before the spatial passes, and one more
   * between two spatial passes */
  guint n_scratch = (work.convert && work.spatial ? 1 : 0) +
      (n_passes > 1 ? 1 : 0);
  GstZcMemoryType in_type = gst_zc_memory_get_memory_type (in_mem);
  GstZcMemoryType out_type = gst_zc_memory_get_memory_type (out_mem);

  gst_zc::DeviceScope scope (gst_zc_memory_get_device_id (out_mem));
  if (!scope.ok ())
    return post_cuda_error (self, "Could not make the CUDA device current",
        cudaSuccess);
  if (n_scratch && !scratch_ensure (self, priv->scratch, priv->out_desc,
          n_scratch, true))
    return post_cuda_error (self, "Could not allocate device memory for the "
        "spatial effects", cudaSuccess);
  if (!gst_zc_memory_prepare_gpu (in_mem, stream) ||
      (!in_place && !gst_zc_memory_prepare_gpu (out_mem, stream)))
    return post_cuda_error (self, "Could not order GPU work after the "
        "frame's fence", cudaSuccess);

  GpuRoute r;
  frame_desc_planes_gpu (inbuf, in_info, priv->in_desc, &r.src);
  frame_desc_planes_gpu (outbuf, out_info, priv->out_desc, &r.out);
  r.dst = r.out;
  cudaError_t err = cudaSuccess;
  gsize staged = 0;
  gint slot = -1;               /* the stager's frame the kernel reads */
  if (!in_place && work.pass == Pass::LUT
      && in_type == GST_ZC_MEMORY_TYPE_MAPPED
      && out_type == GST_ZC_MEMORY_TYPE_DEVICE) {
    /* the first of a chain: the input into the output, the table there */
    err = copy_frame_async (r.src, r.dst, stream, &staged);
    r.src = r.dst;
  } else if (!in_place && work.convert
      && should_stage_input (self, work, in_mem, out_mem)) {
    /* on the stager's stream, into the frame the kernel before last read */
    zc::FrameDesc copy;
    if (!scratch_ensure (self, priv->stage, priv->in_desc, 2, true) ||
        !stager_ensure (self))
      return post_cuda_error (self, "Could not set up the input's staging "
          "(device memory, a stream and events)", cudaSuccess);
    Stager & st = priv->stager;
    slot = (gint) st.next;
    st.next ^= 1;
    auto cs = (cudaStream_t) st.stream;
    scratch_frame (priv->stage, priv->in_desc, slot, &copy);
    if (!gst_zc_memory_prepare_gpu (in_mem, cs))
      return post_cuda_error (self, "Could not order GPU work after the "
          "frame's fence", cudaSuccess);
    err = cudaStreamWaitEvent (cs, (cudaEvent_t) st.consumed[slot], 0);
    if (err == cudaSuccess)
      err = copy_frame_async (r.src, copy, cs, &staged);
    if (err == cudaSuccess)
      err = cudaEventRecord ((cudaEvent_t) st.copied[slot], cs);
    if (err == cudaSuccess)
      err = cudaStreamWaitEvent (stream, (cudaEvent_t) st.copied[slot], 0);
    r.src = copy;
  }
  if (err != cudaSuccess)
    return post_cuda_error (self, "Could not stage the input", err);
  if (!in_place && in_type == GST_ZC_MEMORY_TYPE_DEVICE
      && out_type == GST_ZC_MEMORY_TYPE_MAPPED) {
    /* the last of a chain */
    if (!scratch_ensure (self, priv->unstage, priv->out_desc, 1, true))
      return post_cuda_error (self, "Could not allocate device memory for "
          "the output", cudaSuccess);
    scratch_frame (priv->unstage, priv->out_desc, 0, &r.dst);
    r.unstage = true;
  }

  const char *what = "CUDA kernel launch failed";
  if (work.pass == Pass::LUT) {
    zc::PlaneJob jobs[3];
    for (guint p = 0; p < priv->n_planes; p++) {
      jobs[p] = { r.src.planes[p], r.dst.planes[p], r.src.strides[p],
        r.dst.strides[p], gst_zc_video_plane_row_bytes (in_info, p),
        gst_zc_video_plane_rows (in_info, p) };
    }
    err = zc::apply_lut_cuda_planes (jobs, priv->luts, priv->n_planes,
        stream);
  } else {
    zc::FrameDesc s0, s1;
    guint next = 0;
    const zc::FrameDesc *spatial_src = &r.src;
    if (work.convert) {
      if (work.spatial) {
        scratch_frame (priv->scratch, priv->out_desc, next++, &s0);
        spatial_src = &s0;
      }
      what = "Conversion kernel";
      err = zc::convert_cuda (r.src, work.spatial ? s0 : r.dst, work.cp,
          stream);
    }
    if (err == cudaSuccess && work.spatial) {
      const zc::FrameDesc *tmp = nullptr;
      if (n_passes > 1) {
        scratch_frame (priv->scratch, priv->out_desc, next++, &s1);
        tmp = &s1;
      }
      what = "Spatial effect kernel";
      err = zc::spatial_cuda (*spatial_src, r.dst, tmp, work.sp, stream);
    }
    if (err == cudaErrorNotSupported || err == cudaErrorInvalidValue)
      return post_kernel_error (self, what, err == cudaErrorNotSupported,
          cudaGetErrorString (err));
  }
  if (err != cudaSuccess)
    return post_cuda_error (self, what, err);
  if (slot >= 0) {
    err = cudaEventRecord ((cudaEvent_t) priv->stager.consumed[slot], stream);
    if (err != cudaSuccess)
      return post_cuda_error (self, "Could not record the GPU fence", err);
  }
  if (r.unstage) {
    err = copy_frame_async (r.dst, r.out, stream, &staged);
    if (err != cudaSuccess)
      return post_cuda_error (self, "Could not copy the output", err);
  }
  if (staged)
    gst_zc_base_transform_count_staged (base, staged);

  /* Fence both: the input is read by the kernel, so its producer must not
   * refill it before the kernel is done */
  if (!gst_zc_memory_set_gpu_fence (out_mem, stream) ||
      (!in_place && !gst_zc_memory_set_gpu_fence (in_mem, stream)))
    return post_cuda_error (self, "Could not record the GPU fence",
        cudaSuccess);
  return GST_FLOW_OK;
}
#endif

static void
frame_desc_planes_cpu (GstVideoFrame * frame, const zc::FrameDesc & like,
    zc::FrameDesc * d)
{
  *d = like;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (frame) && p < 3; p++) {
    d->planes[p] = (uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (frame, p);
    d->strides[p] = (size_t) GST_VIDEO_FRAME_PLANE_STRIDE (frame, p);
  }
}

static GstFlowReturn
transform_cpu (GstZcFilter * self, const FrameWork & work, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  auto *base = GST_ZC_BASE_TRANSFORM (self);
  auto *priv = self->priv;
  const GstVideoInfo *in_info = gst_zc_base_transform_get_in_info (base);
  const GstVideoInfo *out_info = gst_zc_base_transform_get_out_info (base);
  bool in_place = inbuf == outbuf;
  GstVideoFrame in_frame, out_frame;

  if (!gst_video_frame_map (&out_frame, out_info, outbuf, (GstMapFlags)
          (in_place ? GST_MAP_READWRITE : GST_MAP_WRITE))) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE, ("Could not map the frame"),
        (NULL));
    return GST_FLOW_ERROR;
  }
  if (!in_place && !gst_video_frame_map (&in_frame, in_info, inbuf,
          GST_MAP_READ)) {
    gst_video_frame_unmap (&out_frame);
    GST_ELEMENT_ERROR (self, RESOURCE, READ, ("Could not map the frame"),
        (NULL));
    return GST_FLOW_ERROR;
  }
  GstVideoFrame *src_frame = in_place ? &out_frame : &in_frame;
  GstFlowReturn ret = GST_FLOW_OK;

  if (work.pass == Pass::LUT) {
    zc::PlaneJob jobs[3];
    for (guint p = 0; p < priv->n_planes; p++) {
      jobs[p] = { (const uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (src_frame, p),
        (uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&out_frame, p),
        (size_t) GST_VIDEO_FRAME_PLANE_STRIDE (src_frame, p),
        (size_t) GST_VIDEO_FRAME_PLANE_STRIDE (&out_frame, p),
        gst_zc_video_plane_row_bytes (in_info, p),
        gst_zc_video_plane_rows (in_info, p) };
    }
    zc::apply_lut_cpu_planes (jobs, priv->luts, priv->n_planes, 0);
  } else {
    zc::FrameDesc src, dst, s0, s1;
    frame_desc_planes_cpu (src_frame, priv->in_desc, &src);
    frame_desc_planes_cpu (&out_frame, priv->out_desc, &dst);
    int n_passes = work.spatial ? zc::spatial_n_passes (work.sp) : 0;
    guint n_scratch = (work.convert && work.spatial ? 1 : 0) +
        (n_passes > 1 ? 1 : 0);
    guint next = 0;
    bool ok = true;
    const char *what = "Conversion";
    if (n_scratch)
      scratch_ensure (self, priv->scratch, priv->out_desc, n_scratch, false);
    const zc::FrameDesc *spatial_src = &src;
    if (work.convert) {
      if (work.spatial) {
        scratch_frame (priv->scratch, priv->out_desc, next++, &s0);
        spatial_src = &s0;
      }
      ok = zc::convert_cpu (src, work.spatial ? s0 : dst, work.cp, 0);
    }
    if (ok && work.spatial) {
      const zc::FrameDesc *tmp = nullptr;
      if (n_passes > 1) {
        scratch_frame (priv->scratch, priv->out_desc, next++, &s1);
        tmp = &s1;
      }
      what = "Spatial effect";
      ok = zc::spatial_cpu (*spatial_src, dst, tmp, work.sp, 0);
    }
    if (!ok)
      ret = post_kernel_error (self, what, work.cp.sampling ==
          zc::Sampling::Bicubic, "the CPU backend refused the request");
  }

  if (!in_place)
    gst_video_frame_unmap (&in_frame);
  gst_video_frame_unmap (&out_frame);
  return ret;
}

static GstFlowReturn
gst_zc_filter_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  auto *self = GST_ZC_FILTER (trans);
  auto *base = GST_ZC_BASE_TRANSFORM (trans);
  GstFlowReturn ret;

  FrameWork work;
  if (!plan_frame (self, inbuf, &work, true))
    return GST_FLOW_ERROR;

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
      ret = transform_gpu (self, work, inbuf, outbuf);
      break;
#endif
    case Backend::CPU:
    default:
      ret = transform_cpu (self, work, inbuf, outbuf);
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
      static const struct
      {
        const gchar *tag;
        GstVideoOrientationMethod method;
      } map[] = {
        {"rotate-0", GST_VIDEO_ORIENTATION_IDENTITY},
        {"rotate-90", GST_VIDEO_ORIENTATION_90R},
        {"rotate-180", GST_VIDEO_ORIENTATION_180},
        {"rotate-270", GST_VIDEO_ORIENTATION_90L},
        {"flip-rotate-0", GST_VIDEO_ORIENTATION_HORIZ},
        {"flip-rotate-90", GST_VIDEO_ORIENTATION_UL_LR},
        {"flip-rotate-180", GST_VIDEO_ORIENTATION_VERT},
        {"flip-rotate-270", GST_VIDEO_ORIENTATION_UR_LL},
      };
      GstVideoOrientationMethod m = GST_VIDEO_ORIENTATION_IDENTITY;
      bool known = false;
      for (const auto & e : map) {
        if (g_str_equal (orientation, e.tag)) {
          m = e.method;
          known = true;
        }
      }
      if (!known)
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
        update_passthrough (self, self->priv->caps_equal);
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
  scratch_free (GST_ZC_FILTER (trans));
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
          "Columns removed on the left, after the buffer's GstVideoCropMeta",
          0, G_MAXINT, DEFAULT_CROP, flags));
  g_object_class_install_property (gobject_class, PROP_CROP_RIGHT,
      g_param_spec_int ("crop-right", "Crop right",
          "Columns removed on the right, after the buffer's GstVideoCropMeta",
          0, G_MAXINT, DEFAULT_CROP, flags));
  g_object_class_install_property (gobject_class, PROP_CROP_TOP,
      g_param_spec_int ("crop-top", "Crop top",
          "Rows removed at the top, after the buffer's GstVideoCropMeta",
          0, G_MAXINT, DEFAULT_CROP, flags));
  g_object_class_install_property (gobject_class, PROP_CROP_BOTTOM,
      g_param_spec_int ("crop-bottom", "Crop bottom",
          "Rows removed at the bottom, after the buffer's GstVideoCropMeta",
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
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_filter_decide_allocation);
  trans_class->transform_meta =
      GST_DEBUG_FUNCPTR (gst_zc_filter_transform_meta);
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
  /* all properties at their defaults: nothing to do until caps differ or a
   * property changes */
  gst_base_transform_set_passthrough (GST_BASE_TRANSFORM (self), TRUE);
}

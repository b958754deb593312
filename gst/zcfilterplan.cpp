/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * zcfilter's frame plan (zcfilterplan.h): geometry, borders, the table
 * kernel's tables, and caps fixation.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "zcfilterplan.h"
#include "gstzcvideoplane.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace zcfilter {

/* ---- settings ------------------------------------------------------------ */

bool
Geometry::swaps_axes () const
{
  return direction == GST_VIDEO_ORIENTATION_90R ||
      direction == GST_VIDEO_ORIENTATION_90L ||
      direction == GST_VIDEO_ORIENTATION_UL_LR ||
      direction == GST_VIDEO_ORIENTATION_UR_LL;
}

Geometry
Settings::geometry () const
{
  Geometry g;
  g.crop_left = crop_left;
  g.crop_right = crop_right;
  g.crop_top = crop_top;
  g.crop_bottom = crop_bottom;
  if (direction == GST_VIDEO_ORIENTATION_AUTO)
    g.direction = tag_direction;
  else if (direction == GST_VIDEO_ORIENTATION_CUSTOM)
    g.direction = GST_VIDEO_ORIENTATION_IDENTITY;
  else
    g.direction = direction;
  return g;
}

bool
Settings::has_point_effects () const
{
  return brightness != 0.0 || contrast != 1.0 || saturation != 1.0 ||
      hue != 0.0 || gamma != 1.0 || invert || grayscale;
}

bool
Settings::same_point_effects (const Settings & o) const
{
  return brightness == o.brightness && contrast == o.contrast &&
      saturation == o.saturation && hue == o.hue && gamma == o.gamma &&
      invert == o.invert && grayscale == o.grayscale;
}

zc::SpatialParams
Settings::spatial () const
{
  zc::SpatialParams p;
  p.blur_sigma = (float) blur_sigma;
  p.sharpen = (float) sharpen;
  p.sharpen_sigma = ZC_FILTER_SHARPEN_SIGMA;
  p.edges = edges;
  return p;
}

bool
Settings::has_spatial () const
{
  return zc::spatial_is_active (spatial ());
}

bool
Settings::is_identity () const
{
  Geometry g = geometry ();
  return !has_point_effects () && !has_spatial () && !g.has_crop () &&
      g.direction == GST_VIDEO_ORIENTATION_IDENTITY;
}

/* ---- the planner ----------------------------------------------------------- */

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

static const gchar *
method_nick (GstZcFilterMethod m)
{
  switch (m) {
    case GST_ZC_FILTER_METHOD_NEAREST:
      return "nearest-neighbour";
    case GST_ZC_FILTER_METHOD_BICUBIC:
      return "bicubic";
    default:
      return "bilinear";
  }
}

/* Whether @method can scale a @src_w x @src_h picture (cropped, oriented)
 * into a @dst_w x @dst_h rectangle; *error says why not */
static bool
check_shrink (GstZcFilterMethod method, int src_w, int src_h, int dst_w,
    int dst_h, std::string * error)
{
  if (method == GST_ZC_FILTER_METHOD_NEAREST)
    return true;
  if ((gint64) src_w <= (gint64) ZC_FILTER_MAX_SHRINK * dst_w &&
      (gint64) src_h <= (gint64) ZC_FILTER_MAX_SHRINK * dst_h)
    return true;
  gchar *msg = g_strdup_printf ("Cannot shrink %dx%d to %dx%d with "
      "method=%s: the %s filter shrinks at most %d times per axis. Use "
      "method=nearest-neighbour, or scale in two steps (zcfilter ! zcfilter)",
      src_w, src_h, dst_w, dst_h, method_nick (method), method_nick (method),
      ZC_FILTER_MAX_SHRINK);
  *error = msg;
  g_free (msg);
  return false;
}

bool
FramePlanner::configure (const GstVideoInfo * in, const GstVideoInfo * out,
    const Geometry & geometry, GstZcFilterMethod method, std::string * error)
{
  in_info_ = *in;
  out_info_ = *out;
  geometry_ = geometry;
  tables_built_ = false;
  tables_valid_ = false;
  n_lut_planes_ = 0;
  if (!frame_desc_from_info (in, &in_desc_) ||
      !frame_desc_from_info (out, &out_desc_)) {
    *error = std::string ("Unsupported format: ") + GST_VIDEO_INFO_NAME (in)
        + " -> " + GST_VIDEO_INFO_NAME (out);
    return false;
  }
  in_par_n_ = GST_VIDEO_INFO_PAR_N (in) > 0 ? GST_VIDEO_INFO_PAR_N (in) : 1;
  in_par_d_ = MAX (GST_VIDEO_INFO_PAR_D (in), 1);
  out_par_n_ = GST_VIDEO_INFO_PAR_N (out) > 0 ? GST_VIDEO_INFO_PAR_N (out) : 1;
  out_par_d_ = MAX (GST_VIDEO_INFO_PAR_D (out), 1);
  /* equal as video (a missing pixel-aspect-ratio is 1/1) */
  caps_equal_ = gst_video_info_is_equal (in, out);

  const int W = in_desc_.width, H = in_desc_.height;
  if (geometry.crop_left + geometry.crop_right >= W ||
      geometry.crop_top + geometry.crop_bottom >= H) {
    gchar *msg = g_strdup_printf ("Crop leaves no picture: %d+%d columns and "
        "%d+%d rows cropped from a %dx%d frame", geometry.crop_left,
        geometry.crop_right, geometry.crop_top, geometry.crop_bottom, W, H);
    *error = msg;
    g_free (msg);
    return false;
  }
  int sw = W - geometry.crop_left - geometry.crop_right;
  int sh = H - geometry.crop_top - geometry.crop_bottom;
  if (geometry.swaps_axes ())
    std::swap (sw, sh);
  return check_shrink (method, sw, sh, out_desc_.width, out_desc_.height,
      error);
}

/* Destination rectangle that keeps the display aspect ratio of the
 * cropped, oriented source inside the output, centred, as videoscale's
 * add-borders does; the whole output when the ratios already agree. */
void
FramePlanner::fit_with_borders (int src_w, int src_h, bool swap,
    zc::ConvertParams * cp) const
{
  const int out_w = out_desc_.width, out_h = out_desc_.height;
  double par = (double) in_par_n_ / in_par_d_;
  if (swap) {
    std::swap (src_w, src_h);
    par = 1.0 / par;
  }
  double out_par = (double) out_par_n_ / out_par_d_;
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
  zc::PixFmt f = out_desc_.fmt;
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

bool
FramePlanner::plan (const Settings & s, const GstVideoCropMeta * meta,
    FramePlan * plan, std::string * error)
{
  const Geometry & g = geometry_;
  const int W = in_desc_.width, H = in_desc_.height;

  /* crop: the meta's region, then the negotiated margins inside it */
  int left = 0, top = 0, right = 0, bottom = 0;
  if (meta && meta->width > 0 && meta->height > 0 &&
      meta->x + meta->width <= (guint) W && meta->y + meta->height <= (guint) H) {
    left = meta->x;
    top = meta->y;
    right = W - (int) (meta->x + meta->width);
    bottom = H - (int) (meta->y + meta->height);
  }
  left += g.crop_left;
  right += g.crop_right;
  top += g.crop_top;
  bottom += g.crop_bottom;
  if (left + right >= W || top + bottom >= H) {
    gchar *msg = g_strdup_printf ("Crop leaves no picture: %d+%d columns and "
        "%d+%d rows cropped from a %dx%d frame (crop-* properties plus the "
        "buffer's GstVideoCropMeta)", left, right, top, bottom, W, H);
    *error = msg;
    g_free (msg);
    return false;
  }
  bool cropped = left || right || top || bottom;

  *plan = FramePlan ();
  plan->n_threads = s.n_threads;
  zc::ConvertParams & cp = plan->cp;
  cp.sampling = sampling_of (s.method);
  cp.orientation = (zc::Orientation) g.direction;
  cp.crop_left = left;
  cp.crop_right = right;
  cp.crop_top = top;
  cp.crop_bottom = bottom;
  cp.brightness = s.brightness;
  cp.contrast = s.contrast;
  cp.saturation = s.saturation;
  cp.hue = s.hue;
  cp.gamma = s.gamma;
  cp.invert = s.invert;
  cp.grayscale = s.grayscale;
  if (s.add_borders)
    fit_with_borders (W - left - right, H - top - bottom, g.swaps_axes (),
        &cp);

  int sw = W - left - right, sh = H - top - bottom;
  if (g.swaps_axes ())
    std::swap (sw, sh);
  int dw = cp.dst_w ? cp.dst_w : out_desc_.width;
  int dh = cp.dst_h ? cp.dst_h : out_desc_.height;
  if (!check_shrink (s.method, sw, sh, dw, dh, error))
    return false;

  plan->sp = s.spatial ();
  plan->spatial = zc::spatial_is_active (plan->sp);
  bool geometry_identity = !cropped &&
      g.direction == GST_VIDEO_ORIENTATION_IDENTITY;
  bool same = caps_equal_ && geometry_identity;
  plan->moves_pixels = !geometry_identity || cp.dst_w ||
      in_desc_.width != out_desc_.width || in_desc_.height != out_desc_.height;

  if (same && !plan->spatial && !s.has_point_effects ()) {
    plan->pass = Pass::IDENTITY;
    plan->convert = false;
    return true;
  }
  if (same && !plan->spatial) {
    plan->effects_only = !plan->moves_pixels;
    if (!tables_built_ || !tables_for_.same_point_effects (s))
      build_tables (s);
    if (tables_valid_) {
      plan->pass = Pass::LUT;
      plan->convert = false;
      return true;
    }
  }
  plan->pass = Pass::CONVERT;
  /* equal caps and only spatial effects: no conversion pass */
  plan->convert = !(same && !s.has_point_effects ());
  return true;
}

/* ---- the table kernel --------------------------------------------------- */

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
void
FramePlanner::build_tables (const Settings & s)
{
  const GstVideoInfo *in = &in_info_;
  tables_built_ = true;
  tables_for_ = s;
  tables_valid_ = false;
  if (!caps_equal_ || !s.has_point_effects () ||
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
  frame_desc_of (in_desc_, 512, 2, &pi, pin.data (), &sd);
  frame_desc_of (in_desc_, 512, 2, &pi, pout.data (), &dd);
  if (!zc::convert_cpu (sd, dd, cp, 1))
    return;
  for (guint p = 0; p < n_planes; p++) {
    guint period = plane_period (&pi, p);
    const guint8 *row0 = pout.data () + GST_VIDEO_INFO_PLANE_OFFSET (&pi, p);
    for (guint k = 0; k < 4; k++)
      for (guint v = 0; v < 256; v++)
        luts_[p].lut[k][v] = row0[v * period + k % period];
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
  frame_desc_of (in_desc_, 96, 6, &ci, cin.data (), &sd);
  frame_desc_of (in_desc_, 96, 6, &ci, cconv.data (), &dd);
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
  zc::apply_lut_cpu_planes (jobs, luts_, n_planes, 1);
  for (guint p = 0; p < n_planes; p++) {
    gsize off = GST_VIDEO_INFO_PLANE_OFFSET (&ci, p);
    gsize stride = GST_VIDEO_INFO_PLANE_STRIDE (&ci, p);
    guint32 bytes = gst_zc_video_plane_row_bytes (&ci, p);
    for (guint y = 0; y < gst_zc_video_plane_rows (&ci, p); y++)
      if (memcmp (cconv.data () + off + y * stride,
              clut.data () + off + y * stride, bytes) != 0)
        return;                 /* not per byte here: the converter runs */
  }
  n_lut_planes_ = n_planes;
  tables_valid_ = true;
}

/* ---- fixation ------------------------------------------------------------ */

/* @field of @s fixated to the nearest of @target; returns the value */
static gint
fixate_int (GstStructure * s, const gchar * field, gint target)
{
  gint v = target;
  gst_structure_fixate_field_nearest_int (s, field, MAX (target, 1));
  gst_structure_get_int (s, field, &v);
  return v;
}

/* The pixel aspect ratio field of @s fixated to the nearest of @n/@d */
static void
fixate_par (GstStructure * s, gint n, gint d, gint * out_n, gint * out_d)
{
  gst_structure_fixate_field_nearest_fraction (s, "pixel-aspect-ratio", n, d);
  if (!gst_structure_get_fraction (s, "pixel-aspect-ratio", out_n, out_d)) {
    *out_n = n;
    *out_d = d;
  }
}

/* @a * @b / @c as fractions (@a, @b, @c given as n/d pairs); false on
 * overflow */
static bool
frac_mul_div (gint an, gint ad, gint bn, gint bd, gint cn, gint cd, gint * n,
    gint * d)
{
  gint tn, td;
  return gst_util_fraction_multiply (an, ad, bn, bd, &tn, &td) &&
      gst_util_fraction_multiply (tn, td, cd, cn, n, d);
}

static gint
scale_round (gint v, gint num, gint den)
{
  if (num <= 0 || den <= 0)
    return v;
  return (gint) MIN (gst_util_uint64_scale_int_round (v, num, den),
      (guint64) G_MAXINT);
}

/* Size and pixel aspect ratio as videoscale fixates them: keep the display
 * aspect ratio of the input (after crop and orientation); keep its width
 * and height where the other side allows, adjusting the pixel aspect ratio
 * when that is free; else derive one side from the other. */
void
fixate_size (const Geometry & geometry, GstPadDirection direction,
    GstStructure * ins, GstStructure * outs)
{
  gint from_w = 0, from_h = 0, from_par_n = 1, from_par_d = 1;
  if (!gst_structure_get_int (ins, "width", &from_w) ||
      !gst_structure_get_int (ins, "height", &from_h))
    return;
  gst_structure_get_fraction (ins, "pixel-aspect-ratio", &from_par_n,
      &from_par_d);
  if (direction == GST_PAD_SINK) {
    from_w = MAX (1, from_w - geometry.crop_left - geometry.crop_right);
    from_h = MAX (1, from_h - geometry.crop_top - geometry.crop_bottom);
  }
  if (geometry.swaps_axes ()) {
    std::swap (from_w, from_h);
    std::swap (from_par_n, from_par_d);
  }

  /* A pixel aspect ratio missing downstream is free; upstream it is 1/1 */
  bool had_par = gst_structure_has_field (outs, "pixel-aspect-ratio");
  if (!had_par) {
    if (direction == GST_PAD_SINK) {
      gst_structure_set (outs, "pixel-aspect-ratio", GST_TYPE_FRACTION_RANGE,
          1, G_MAXINT, G_MAXINT, 1, NULL);
    } else {
      gst_structure_set (outs, "pixel-aspect-ratio", GST_TYPE_FRACTION, 1, 1,
          NULL);
      had_par = true;
    }
  }
  const GValue *par_val = gst_structure_get_value (outs, "pixel-aspect-ratio");
  bool par_fixed = gst_value_is_fixed (par_val);
  gint par_n = 1, par_d = 1;
  if (par_fixed) {
    par_n = gst_value_get_fraction_numerator (par_val);
    par_d = gst_value_get_fraction_denominator (par_val);
  }

  gint dar_n, dar_d;
  if (!gst_util_fraction_multiply (from_w, from_h, from_par_n, from_par_d,
          &dar_n, &dar_d)) {
    dar_n = from_w;
    dar_d = from_h;
  }

  auto finish =[&](gint w, gint h, gint pn, gint pd) {
    gst_structure_set (outs, "width", G_TYPE_INT, w, "height", G_TYPE_INT, h,
        NULL);
    if (had_par || pn != pd)
      gst_structure_set (outs, "pixel-aspect-ratio", GST_TYPE_FRACTION, pn, pd,
          NULL);
    else
      gst_structure_remove_field (outs, "pixel-aspect-ratio");
  };

  /* width / height of the display ratio in pixels of @pn/@pd (the input's
   * shape when that overflows) */
  auto ratio_for_par =[&](gint pn, gint pd, gint * rn, gint * rd) {
    if (!frac_mul_div (dar_n, dar_d, 1, 1, pn, pd, rn, rd)) {
      *rn = from_w;
      *rd = from_h;
    }
  };
  /* the par of @tmp nearest the one that keeps the display ratio at @pw x
   * @ph; whether it is that one */
  auto allowed_par =[&](GstStructure * tmp, gint pw, gint ph, gint * pn,
      gint * pd) {
    gint n, d;
    if (!frac_mul_div (dar_n, dar_d, ph, 1, pw, 1, &n, &d)) {
      n = 1;
      d = 1;
    }
    fixate_par (tmp, n, d, pn, pd);
    return *pn == n && *pd == d;
  };

  gint w = 0, h = 0;
  gst_structure_get_int (outs, "width", &w);
  gst_structure_get_int (outs, "height", &h);
  const GValue *wv = gst_structure_get_value (outs, "width");
  const GValue *hv = gst_structure_get_value (outs, "height");
  bool w_fixed = wv && G_VALUE_HOLDS_INT (wv);
  bool h_fixed = hv && G_VALUE_HOLDS_INT (hv);
  if (!w_fixed)
    w = 0;
  if (!h_fixed)
    h = 0;
  gint n, d, set_n, set_d;

  if (w && h) {
    /* only the pixel aspect ratio can follow */
    if (!par_fixed && frac_mul_div (dar_n, dar_d, h, 1, w, 1, &n, &d))
      fixate_par (outs, n, d, &set_n, &set_d);
    else {
      set_n = par_n;
      set_d = par_d;
    }
    finish (w, h, set_n, set_d);
    return;
  }

  if (h || w) {
    bool have_h = h != 0;
    /* the side not given, from the display ratio and a pixel aspect
     * ratio */
    auto derive_other =[&](gint pn, gint pd) {
      gint sn, sd;
      ratio_for_par (pn, pd, &sn, &sd);
      if (have_h)
        w = fixate_int (outs, "width", scale_round (h, sn, sd));
      else
        h = fixate_int (outs, "height", scale_round (w, sd, sn));
      finish (w, h, pn, pd);
    };
    if (par_fixed) {
      derive_other (par_n, par_d);
      return;
    }
    /* keep the input's other side and adjust the par, if allowed */
    GstStructure *tmp = gst_structure_copy (outs);
    gint set_w = have_h ? fixate_int (tmp, "width", from_w) : w;
    gint set_h = have_h ? h : fixate_int (tmp, "height", from_h);
    bool exact = allowed_par (tmp, set_w, set_h, &set_n, &set_d);
    gst_structure_free (tmp);
    if (exact) {
      finish (set_w, set_h, set_n, set_d);
      return;
    }
    /* else the side that keeps the ratio with the par that was allowed */
    derive_other (set_n, set_d);
    return;
  }

  if (par_fixed) {
    /* the scale factor from the par change */
    ratio_for_par (par_n, par_d, &n, &d);
    /* keep the input height (interlacing) ... */
    GstStructure *tmp = gst_structure_copy (outs);
    gint set_h = fixate_int (tmp, "height", from_h);
    gint want_w = scale_round (set_h, n, d);
    gint set_w = fixate_int (tmp, "width", want_w);
    gst_structure_free (tmp);
    if (set_w == want_w) {
      finish (set_w, set_h, par_n, par_d);
      return;
    }
    gint f_w = set_w, f_h = set_h;
    /* ... else the input width ... */
    tmp = gst_structure_copy (outs);
    set_w = fixate_int (tmp, "width", from_w);
    gint want_h = scale_round (set_w, d, n);
    set_h = fixate_int (tmp, "height", want_h);
    gst_structure_free (tmp);
    if (set_h == want_h) {
      finish (set_w, set_h, par_n, par_d);
      return;
    }
    /* ... else the one of the two whose ratio is closest */
    if ((gint64) set_w * ABS (set_h - want_h) <
        (gint64) ABS (f_w - want_w) * f_h) {
      f_w = set_w;
      f_h = set_h;
    }
    finish (f_w, f_h, par_n, par_d);
    return;
  }

  /* Nothing fixed: the input's width and height, and the par that keeps
   * the display ratio with them, if allowed */
  GstStructure *tmp = gst_structure_copy (outs);
  gint set_h = fixate_int (tmp, "height", from_h);
  gint set_w = fixate_int (tmp, "width", from_w);
  bool exact = allowed_par (tmp, set_w, set_h, &set_n, &set_d);
  gst_structure_free (tmp);
  if (exact) {
    finish (set_w, set_h, set_n, set_d);
    return;
  }
  /* else the width that keeps it with the allowed par and that height */
  gint sn, sd;
  if (frac_mul_div (dar_n, dar_d, 1, 1, set_n, set_d, &sn, &sd)) {
    gint want_w = scale_round (set_h, sn, sd);
    tmp = gst_structure_copy (outs);
    gint got_w = fixate_int (tmp, "width", want_w);
    gst_structure_free (tmp);
    if (got_w == want_w) {
      finish (got_w, set_h, set_n, set_d);
      return;
    }
    /* or the height with that width */
    gint want_h = scale_round (set_w, sd, sn);
    tmp = gst_structure_copy (outs);
    gint got_h = fixate_int (tmp, "height", want_h);
    gst_structure_free (tmp);
    if (got_h == want_h) {
      finish (set_w, got_h, set_n, set_d);
      return;
    }
  }
  /* the display ratio cannot be kept: the nearest of everything */
  finish (set_w, set_h, set_n, set_d);
}

/* What converting from @in to @out loses, scored as videoconvert scores it:
 * losses (colour, alpha, chroma resolution, depth) weigh more than mere
 * changes, and losing colour most. */
static guint
format_loss (const GstVideoFormatInfo * in, const GstVideoFormatInfo * out)
{
  enum
  {
    CHANGE = 1,
    COLORSPACE_LOSS = 2,
    DEPTH_LOSS = 4,
    ALPHA_LOSS = 8,
    CHROMA_W_LOSS = 16,
    CHROMA_H_LOSS = 32,
    COLOR_LOSS = 128,
  };
  if (in == out)
    return 0;
  guint loss = CHANGE;
  const guint space = GST_VIDEO_FORMAT_FLAG_YUV | GST_VIDEO_FORMAT_FLAG_RGB |
      GST_VIDEO_FORMAT_FLAG_GRAY;
  guint in_flags = GST_VIDEO_FORMAT_INFO_FLAGS (in);
  guint out_flags = GST_VIDEO_FORMAT_INFO_FLAGS (out);
  if ((in_flags & space) != (out_flags & space)) {
    loss += COLORSPACE_LOSS;
    if (out_flags & GST_VIDEO_FORMAT_FLAG_GRAY)
      loss += COLOR_LOSS;
  }
  /* a property that differs costs a change, and more where it is lost */
  auto weigh =[&loss](bool differs, bool lost, guint lost_cost) {
    if (differs)
      loss += CHANGE + (lost ? lost_cost : 0);
  };
  const guint alpha = GST_VIDEO_FORMAT_FLAG_ALPHA;
  weigh ((in_flags & alpha) != (out_flags & alpha), in_flags & alpha,
      ALPHA_LOSS);
  guint in_h = GST_VIDEO_FORMAT_INFO_H_SUB (in, 1);
  guint out_h = GST_VIDEO_FORMAT_INFO_H_SUB (out, 1);
  weigh (in_h != out_h, in_h < out_h, CHROMA_H_LOSS);
  guint in_w = GST_VIDEO_FORMAT_INFO_W_SUB (in, 1);
  guint out_w = GST_VIDEO_FORMAT_INFO_W_SUB (out, 1);
  weigh (in_w != out_w, in_w < out_w, CHROMA_W_LOSS);
  guint in_bits = GST_VIDEO_FORMAT_INFO_BITS (in);
  guint out_bits = GST_VIDEO_FORMAT_INFO_BITS (out);
  weigh (in_bits != out_bits, in_bits > out_bits, DEPTH_LOSS);
  return loss;
}

void
fixate_format (GstStructure * ins, GstStructure * outs)
{
  const gchar *fmt = gst_structure_get_string (ins, "format");
  const GValue *val = gst_structure_get_value (outs, "format");
  if (!fmt || !val || !GST_VALUE_HOLDS_LIST (val))
    return;
  const GstVideoFormatInfo *in_fi =
      gst_video_format_get_info (gst_video_format_from_string (fmt));
  if (!in_fi)
    return;
  const gchar *best = nullptr;
  guint best_loss = G_MAXUINT;
  for (guint i = 0; i < gst_value_list_get_size (val); i++) {
    const GValue *v = gst_value_list_get_value (val, i);
    if (!G_VALUE_HOLDS_STRING (v))
      continue;
    const gchar *cand = g_value_get_string (v);
    GstVideoFormat f = gst_video_format_from_string (cand);
    zc::PixFmt unused;
    if (!pixfmt_from_video_format (f, &unused))
      continue;
    guint loss = format_loss (in_fi, gst_video_format_get_info (f));
    if (loss < best_loss) {
      best_loss = loss;
      best = cand;
    }
  }
  if (best)
    gst_structure_set (outs, "format", G_TYPE_STRING, best, NULL);
}

/* @field of @s narrowed to [@lo, @hi] where it is an int or a range */
static void
narrow_int (GstStructure * s, const gchar * field, gint lo, gint hi)
{
  const GValue *v = gst_structure_get_value (s, field);
  if (!v || lo > hi)
    return;
  GValue range = G_VALUE_INIT, res = G_VALUE_INIT;
  g_value_init (&range, GST_TYPE_INT_RANGE);
  gst_value_set_int_range (&range, lo, hi);
  if (gst_value_intersect (&res, v, &range)) {
    gst_structure_set_value (s, field, &res);
    g_value_unset (&res);
  }
  g_value_unset (&range);
}

void
limit_shrink (GstStructure * s, GstPadDirection direction, gint w, gint h,
    const Geometry & geometry, GstZcFilterMethod method)
{
  if (method == GST_ZC_FILTER_METHOD_NEAREST)
    return;
  const gint k = ZC_FILTER_MAX_SHRINK;
  if (direction == GST_PAD_SINK) {
    /* @w x @h is the input: the output must be at least 1/k of the
     * cropped, oriented picture */
    w = MAX (1, w - geometry.crop_left - geometry.crop_right);
    h = MAX (1, h - geometry.crop_top - geometry.crop_bottom);
    if (geometry.swaps_axes ())
      std::swap (w, h);
    narrow_int (s, "width", (w + k - 1) / k, G_MAXINT);
    narrow_int (s, "height", (h + k - 1) / k, G_MAXINT);
  } else {
    /* @w x @h is the output: the input at most k times it, plus the crop */
    if (geometry.swaps_axes ())
      std::swap (w, h);
    gint64 max_w = (gint64) w * k + geometry.crop_left + geometry.crop_right;
    gint64 max_h = (gint64) h * k + geometry.crop_top + geometry.crop_bottom;
    narrow_int (s, "width", 1, (gint) MIN (max_w, (gint64) G_MAXINT));
    narrow_int (s, "height", 1, (gint) MIN (max_h, (gint64) G_MAXINT));
  }
}

} /* namespace zcfilter */

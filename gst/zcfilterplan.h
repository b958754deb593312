/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * zcfilter's frame plan: what one frame needs, worked out once from one
 * snapshot of the settings and the geometry the caps were negotiated with.
 * No element here: the plan is a pure function of its inputs, so tests
 * drive it without a pipeline (tests/check/libs/zcfilterplan.cpp).
 */
#pragma once

#include "gstzcfilter.h"

#include <zcconvert.h>
#include "zcframedesc.h"
#include <zcpointops.h>
#include <zcspatial.h>

#include <string>

namespace zcfilter {

#define ZC_FILTER_DEFAULT_METHOD GST_ZC_FILTER_METHOD_BILINEAR
#define ZC_FILTER_DEFAULT_ADD_BORDERS TRUE
#define ZC_FILTER_DEFAULT_VIDEO_DIRECTION GST_VIDEO_ORIENTATION_IDENTITY
#define ZC_FILTER_DEFAULT_BRIGHTNESS 0.0
#define ZC_FILTER_DEFAULT_CONTRAST 1.0
#define ZC_FILTER_DEFAULT_SATURATION 1.0
#define ZC_FILTER_DEFAULT_HUE 0.0
#define ZC_FILTER_DEFAULT_GAMMA 1.0
#define ZC_FILTER_DEFAULT_BLUR_SIGMA 0.0
#define ZC_FILTER_DEFAULT_SHARPEN 0.0
#define ZC_FILTER_DEFAULT_N_THREADS 0

/* Unsharp mask radius: the blur under `sharpen` */
#define ZC_FILTER_SHARPEN_SIGMA 1.0f

/* The converter's bilinear and bicubic filters shrink at most this many
 * times per axis (zcconvert.h); nearest-neighbour has no limit. */
#define ZC_FILTER_MAX_SHRINK 64

/* What changes the output caps: crop margins and orientation. Negotiation
 * uses the values of one snapshot, and every frame until the next
 * negotiation uses the same ones. */
struct Geometry
{
  gint crop_left = 0, crop_right = 0, crop_top = 0, crop_bottom = 0;
  /* the orientation in effect: auto resolved from the tags */
  GstVideoOrientationMethod direction = GST_VIDEO_ORIENTATION_IDENTITY;

  bool swaps_axes () const;
  bool has_crop () const
  {
    return crop_left || crop_right || crop_top || crop_bottom;
  }
  bool operator== (const Geometry & o) const
  {
    return crop_left == o.crop_left && crop_right == o.crop_right &&
        crop_top == o.crop_top && crop_bottom == o.crop_bottom &&
        direction == o.direction;
  }
  bool operator!= (const Geometry & o) const { return !(*this == o); }
};

/* Everything the properties set; copied whole, under the element's lock,
 * once per frame and once per negotiation */
struct Settings
{
  GstZcFilterMethod method = ZC_FILTER_DEFAULT_METHOD;
  gboolean add_borders = ZC_FILTER_DEFAULT_ADD_BORDERS;
  gint crop_left = 0, crop_right = 0, crop_top = 0, crop_bottom = 0;
  GstVideoOrientationMethod direction = ZC_FILTER_DEFAULT_VIDEO_DIRECTION;
  /* from the last image-orientation tag, used with direction=auto */
  GstVideoOrientationMethod tag_direction = GST_VIDEO_ORIENTATION_IDENTITY;
  gdouble brightness = ZC_FILTER_DEFAULT_BRIGHTNESS;
  gdouble contrast = ZC_FILTER_DEFAULT_CONTRAST;
  gdouble saturation = ZC_FILTER_DEFAULT_SATURATION;
  gdouble hue = ZC_FILTER_DEFAULT_HUE;
  gdouble gamma = ZC_FILTER_DEFAULT_GAMMA;
  gboolean invert = FALSE;
  gboolean grayscale = FALSE;
  gdouble blur_sigma = ZC_FILTER_DEFAULT_BLUR_SIGMA;
  gdouble sharpen = ZC_FILTER_DEFAULT_SHARPEN;
  gboolean edges = FALSE;
  /* threads of the CPU backend per frame: 0 = all cores */
  guint n_threads = ZC_FILTER_DEFAULT_N_THREADS;

  Geometry geometry () const;
  bool has_point_effects () const;
  bool same_point_effects (const Settings & o) const;
  zc::SpatialParams spatial () const;
  bool has_spatial () const;
  /* nothing to do on equal caps: no effect, crop or orientation */
  bool is_identity () const;
};

/* The passes of one frame */
enum class Pass
{
  IDENTITY,                     /* the input is the output: nothing runs */
  LUT,                          /* the table kernel, in place if allowed */
  CONVERT,                      /* conversion and/or spatial passes */
};

struct FramePlan
{
  Pass pass = Pass::CONVERT;
  bool convert = true;          /* a conversion pass (else spatial only) */
  zc::ConvertParams cp;
  bool spatial = false;
  zc::SpatialParams sp;
  /* the conversion moves pixels: crop, orientation, size or borders */
  bool moves_pixels = false;
  /* point effects alone at equal caps (cp then holds nothing else): a step
   * a chain of zcfilters on the CPU backend can run in one pass */
  bool effects_only = false;
  /* threads the CPU backend may use for this frame (0 = all cores) */
  guint n_threads = ZC_FILTER_DEFAULT_N_THREADS;
};

using zc_gst::frame_desc_from_info;
using zc_gst::pixfmt_from_video_format;

/* Plans frames for one negotiated pair of caps. Streaming thread only. */
class FramePlanner
{
public:
  /* Takes the negotiated caps and geometry. False, with *error set, when
   * no frame could be planned for them: an unsupported format, a crop that
   * leaves nothing, or a shrink beyond ZC_FILTER_MAX_SHRINK with a method
   * that has that limit. */
  bool configure (const GstVideoInfo * in, const GstVideoInfo * out,
      const Geometry & geometry, GstZcFilterMethod method,
      std::string * error);

  /* The plan for a frame with crop meta @meta (may be NULL) under @s. The
   * geometry is the negotiated one, whatever @s says of it. False, with
   * *error set, when the crop leaves nothing or the method cannot shrink
   * that much. */
  bool plan (const Settings & s, const GstVideoCropMeta * meta,
      FramePlan * plan, std::string * error);

  bool caps_equal () const { return caps_equal_; }
  const Geometry & geometry () const { return geometry_; }
  const zc::FrameDesc & in_desc () const { return in_desc_; }
  const zc::FrameDesc & out_desc () const { return out_desc_; }
  const GstVideoInfo * in_info () const { return &in_info_; }
  const GstVideoInfo * out_info () const { return &out_info_; }
  /* the tables of the last LUT plan, one per plane */
  const zc::LutSet * luts () const { return luts_; }
  guint n_lut_planes () const { return n_lut_planes_; }

private:
  void build_tables (const Settings & s);
  void fit_with_borders (int src_w, int src_h, bool swap,
      zc::ConvertParams * cp) const;

  GstVideoInfo in_info_, out_info_;
  zc::FrameDesc in_desc_, out_desc_;
  gint in_par_n_ = 1, in_par_d_ = 1, out_par_n_ = 1, out_par_d_ = 1;
  bool caps_equal_ = false;
  Geometry geometry_;

  /* the table kernel: valid for the point effects of tables_for_ */
  bool tables_built_ = false;
  bool tables_valid_ = false;
  Settings tables_for_;
  zc::LutSet luts_[GST_VIDEO_MAX_PLANES];
  guint n_lut_planes_ = 0;
};

/* Caps fixation as videoconvertscale does it */

/* Width, height and pixel aspect ratio of @outs from @ins (the caps on the
 * other pad), keeping the display aspect ratio of the cropped, oriented
 * picture where @outs leaves room. */
void fixate_size (const Geometry & geometry, GstPadDirection direction,
    GstStructure * ins, GstStructure * outs);

/* The format of @outs closest to @ins's: the one that loses least (alpha,
 * colour, depth, chroma resolution), the first of equals. */
void fixate_format (GstStructure * ins, GstStructure * outs);

/* Narrows the width and height of @s, the caps of the other pad, to what
 * the converter can reach from (@direction GST_PAD_SINK) or into
 * (GST_PAD_SRC) @w x @h with @method, where that leaves any value (a fixed
 * size out of reach stays, for set_info() to refuse with the reason). */
void limit_shrink (GstStructure * s, GstPadDirection direction, gint w,
    gint h, const Geometry & geometry, GstZcFilterMethod method);

} /* namespace zcfilter */

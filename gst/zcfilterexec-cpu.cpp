/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * zcfilter's CPU backend: the kernels' CPU twins on mapped video frames,
 * scratch frames in host memory between passes.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "zcfilterexec.h"
#include "gstzcvideoplane.h"

#include <gst/zerocopy/gstzcgpupasses-private.h>

#include <memory>
#include <vector>

/* zcfilter's category (gstzcfilter.cpp) */
GST_DEBUG_CATEGORY_EXTERN (gst_zc_filter_debug);
#define GST_CAT_DEFAULT gst_zc_filter_debug

namespace zcfilter {

GstFlowReturn
post_pass_error (GstZcBaseTransform * element, const gchar * what,
    bool not_supported, const gchar * detail)
{
  if (not_supported) {
    GST_ELEMENT_ERROR (element, STREAM, NOT_IMPLEMENTED,
        ("%s: this combination is not implemented", what), ("%s", detail));
  } else {
    GST_ELEMENT_ERROR (element, STREAM, FAILED,
        ("%s: invalid request (crop, borders or effect out of range)", what),
        ("%s", detail));
  }
  return GST_FLOW_ERROR;
}

static void
frame_desc_planes (GstVideoFrame * frame, const zc::FrameDesc & like,
    zc::FrameDesc * d)
{
  *d = like;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (frame) && p < 3; p++) {
    d->planes[p] = (uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (frame, p);
    d->strides[p] = (size_t) GST_VIDEO_FRAME_PLANE_STRIDE (frame, p);
  }
}

/* The point effects of @plan (effects_only) as one step of
 * zc::effects_chain_cpu(); false when it refuses them */
static bool
run_effects (GstVideoFrame * src_frame, GstVideoFrame * out_frame,
    const FramePlanner & planner, const FramePlan & plan)
{
  if (!plan.effects_only)
    return false;
  zc::FrameDesc src, dst;
  frame_desc_planes (src_frame, planner.in_desc (), &src);
  frame_desc_planes (out_frame, planner.out_desc (), &dst);
  return zc::effects_chain_cpu (src, dst, &plan.cp, 1, plan.n_threads);
}

class CpuExecutor:public FrameExecutor
{
public:
  explicit CpuExecutor (GstZcBaseTransform * element):element_ (element)
  {
  }

  void reset () override
  {
    scratch_.clear ();
    scratch_.shrink_to_fit ();
    chained_.clear ();
    chained_.shrink_to_fit ();
    route_ = nullptr;
  }

  GstFlowReturn run (const FramePlanner & planner, const FramePlan & plan,
      const EffectsChain & chain, GstBuffer * inbuf, GstBuffer * outbuf)
      override;

private:
  GstZcBaseTransform *element_;
  std::vector < guint8 > scratch_;      /* frames between passes */
  std::vector < guint8 > chained_;      /* an upstream chain's output, for
                                           the passes to read */
  const char *route_ = nullptr; /* the conversion's route last logged */

  void log_route (const zc::FrameDesc & src, const zc::FrameDesc & dst,
      const zc::ConvertParams & cp);
};

/* Which of the CPU's routes the conversion takes, when it changes and the
 * category logs at DEBUG: "blocks" (the per-block code, the slow one) where
 * a fast route was expected is the first thing to look for */
void
CpuExecutor::log_route (const zc::FrameDesc & src, const zc::FrameDesc & dst,
    const zc::ConvertParams & cp)
{
  if (gst_debug_category_get_threshold (GST_CAT_DEFAULT) < GST_LEVEL_DEBUG)
    return;
  const char *route = zc::convert_cpu_route (src, dst, cp);
  if (route == route_)
    return;
  route_ = route;
  GST_DEBUG_OBJECT (element_, "CPU conversion: %s %dx%d -> %s %dx%d, route "
      "%s", zc::pixfmt_name (src.fmt), src.width, src.height,
      zc::pixfmt_name (dst.fmt), dst.width, dst.height,
      route ? route : "(refused)");
}

GstFlowReturn
CpuExecutor::run (const FramePlanner & planner, const FramePlan & plan,
    const EffectsChain & chain, GstBuffer * inbuf, GstBuffer * outbuf)
{
  GstZcBaseTransform *self = element_;
  bool in_place = inbuf == outbuf;
  GstVideoFrame in_frame, out_frame;
  /* gst_video_frame_map() takes a non-const info before GStreamer 1.20 */
  GstVideoInfo in_info = *planner.in_info ();
  GstVideoInfo out_info = *planner.out_info ();

  if (!gst_video_frame_map (&out_frame, &out_info, outbuf, (GstMapFlags)
          (in_place ? GST_MAP_READWRITE : GST_MAP_WRITE))) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE, ("Could not map the frame"),
        (NULL));
    return GST_FLOW_ERROR;
  }
  if (!in_place && !gst_video_frame_map (&in_frame, &in_info, inbuf,
          GST_MAP_READ)) {
    gst_video_frame_unmap (&out_frame);
    GST_ELEMENT_ERROR (self, RESOURCE, READ, ("Could not map the frame"),
        (NULL));
    return GST_FLOW_ERROR;
  }
  GstVideoFrame *src_frame = in_place ? &out_frame : &in_frame;
  GstFlowReturn ret = GST_FLOW_OK;

  if (chain.n && chain.whole) {
    /* point effects alone, the chain's and this element's: one pass */
    zc::FrameDesc src, dst;
    frame_desc_planes (src_frame, planner.in_desc (), &src);
    frame_desc_planes (&out_frame, planner.out_desc (), &dst);
    if (!zc::effects_chain_cpu (src, dst, chain.steps, chain.n,
            plan.n_threads))
      ret = post_pass_error (self, "Point effects of a chain", false,
          "the CPU backend refused the chain's steps");
  } else if (plan.pass == Pass::LUT && run_effects (src_frame, &out_frame,
          planner, plan)) {
    /* the table kernel's bytes (its tables are the converter's), through
     * the effects route: wide loops, many times faster than a look-up a
     * byte */
  } else if (plan.pass == Pass::LUT) {
    zc::PlaneJob jobs[3];
    guint n = MIN (planner.n_lut_planes (), 3u);
    for (guint p = 0; p < n; p++) {
      jobs[p] = { (const uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (src_frame, p),
        (uint8_t *) GST_VIDEO_FRAME_PLANE_DATA (&out_frame, p),
        (size_t) GST_VIDEO_FRAME_PLANE_STRIDE (src_frame, p),
        (size_t) GST_VIDEO_FRAME_PLANE_STRIDE (&out_frame, p),
        gst_zc_video_plane_row_bytes (&in_info, p),
        gst_zc_video_plane_rows (&in_info, p) };
    }
    zc::apply_lut_cpu_planes (jobs, planner.luts (), n, plan.n_threads);
  } else {
    const zc::FrameDesc & like = planner.out_desc ();
    zc::FrameDesc src, dst, s0, s1;
    frame_desc_planes (src_frame, planner.in_desc (), &src);
    frame_desc_planes (&out_frame, like, &dst);
    int n_passes = plan.spatial ? zc::spatial_n_passes (plan.sp) : 0;
    /* the converted frame before the spatial passes, and one more between
     * two spatial passes */
    guint n_scratch = (plan.convert && plan.spatial ? 1 : 0) +
        (n_passes > 1 ? 1 : 0);
    gsize frame_bytes = gst_zc_frame_layout (like.fmt, like.width,
        like.height, nullptr, &s0);
    if (scratch_.size () < frame_bytes * n_scratch)
      scratch_.resize (frame_bytes * n_scratch);
    guint next = 0;
    auto scratch_frame =[&](zc::FrameDesc * d) {
      *d = like;
      gst_zc_frame_layout (like.fmt, like.width, like.height,
          scratch_.data () + frame_bytes * next++, d);
    };
    bool ok = true;
    const char *what = "Conversion";
    if (chain.n) {
      /* the upstream chain's point effects first, into a frame of the
       * input's layout that the passes then read */
      zc::FrameDesc chained = planner.in_desc ();
      gsize in_bytes = gst_zc_frame_layout (chained.fmt, chained.width,
          chained.height, nullptr, &chained);
      if (chained_.size () < in_bytes)
        chained_.resize (in_bytes);
      gst_zc_frame_layout (chained.fmt, chained.width, chained.height,
          chained_.data (), &chained);
      ok = zc::effects_chain_cpu (src, chained, chain.steps, chain.n,
          plan.n_threads);
      what = "Point effects of a chain";
      src = chained;
    }
    const zc::FrameDesc *spatial_src = &src;
    if (ok && plan.convert) {
      what = "Conversion";
      if (plan.spatial) {
        scratch_frame (&s0);
        spatial_src = &s0;
      }
      log_route (src, plan.spatial ? s0 : dst, plan.cp);
      ok = zc::convert_cpu (src, plan.spatial ? s0 : dst, plan.cp,
          plan.n_threads);
    }
    if (ok && plan.spatial) {
      const zc::FrameDesc *tmp = nullptr;
      if (n_passes > 1) {
        scratch_frame (&s1);
        tmp = &s1;
      }
      what = "Spatial effect";
      ok = zc::spatial_cpu (*spatial_src, dst, tmp, plan.sp, plan.n_threads);
    }
    if (!ok)
      ret = post_pass_error (self, what, plan.cp.sampling ==
          zc::Sampling::Bicubic, "the CPU backend refused the request");
  }

  if (!in_place)
    gst_video_frame_unmap (&in_frame);
  gst_video_frame_unmap (&out_frame);
  return ret;
}

std::unique_ptr < FrameExecutor > make_cpu_executor (GstZcBaseTransform *
    element)
{
  return std::unique_ptr < FrameExecutor > (new CpuExecutor (element));
}

} /* namespace zcfilter */

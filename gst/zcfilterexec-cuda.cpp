/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * zcfilter's CUDA backend: a frame plan handed to the library's GPU passes
 * (lib/gst/zerocopy/gstzcgpupasses-private.h), which own the kernels and
 * the CUDA runtime; this file only describes the frames and reports.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "zcfilterexec.h"
#include "gstzcframecopy.h"
#include "gstzcgpuerror.h"
#include "gstzcvideoplane.h"

#include <gst/zerocopy/gstzcgpupasses-private.h>

#include <memory>

namespace zcfilter {

/* @buf's single GPU memory, its planes at device addresses in @desc */
static GstZcGpuFrame
gpu_frame (GstBuffer * buf, const GstVideoInfo * info,
    const zc::FrameDesc & like, zc::FrameDesc * desc)
{
  GstZcGpuFrame f;
  f.mem = (GstZcMemory *) gst_buffer_peek_memory (buf, 0);
  auto *base = (uint8_t *) gst_zc_memory_get_device_pointer (f.mem);
  *desc = like;
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (info) && p < 3; p++) {
    gsize off, stride;
    gst_zc_video_plane_layout (buf, info, p, &off, &stride);
    desc->planes[p] = base + off;
    desc->strides[p] = stride;
  }
  f.desc = desc;
  return f;
}

class CudaExecutor:public FrameExecutor
{
public:
  explicit CudaExecutor (GstZcBaseTransform * element):element_ (element),
      passes_ (gst_zc_gpu_passes_new (gst_zc_context_get_device_id
          (gst_zc_base_transform_get_context (element))))
  {
  }
  ~CudaExecutor () override
  {
    gst_zc_gpu_passes_free (passes_);
  }

  void reset () override
  {
    gst_zc_gpu_passes_reset (passes_);
  }

  GstFlowReturn run (const FramePlanner & planner, const FramePlan & plan,
      const EffectsChain & chain, GstBuffer * inbuf, GstBuffer * outbuf)
      override;

private:
  GstZcBaseTransform *element_;
  GstZcGpuPasses *passes_;
};

GstFlowReturn
CudaExecutor::run (const FramePlanner & planner, const FramePlan & plan,
    const EffectsChain & chain, GstBuffer * inbuf, GstBuffer * outbuf)
{
  /* only zcfilters on the CPU backend take an upstream zcfilter's steps
   * (they alone offer gstzcpendingeffects.h's meta) */
  if (chain.n) {
    GST_ELEMENT_ERROR (element_, STREAM, FAILED,
        ("Point effects left by an upstream zcfilter reached the GPU "
            "backend"), ("%d steps", chain.n));
    return GST_FLOW_ERROR;
  }
  GstZcGpuPassRequest req = { };
  if (plan.pass == Pass::LUT) {
    req.luts = planner.luts ();
    req.n_lut_planes = MIN (planner.n_lut_planes (), 3u);
    for (guint p = 0; p < req.n_lut_planes; p++) {
      req.lut_row_bytes[p] = gst_zc_video_plane_row_bytes (planner.in_info (),
          p);
      req.lut_rows[p] = gst_zc_video_plane_rows (planner.in_info (), p);
    }
  } else {
    req.convert = plan.convert ? &plan.cp : NULL;
    req.spatial = plan.spatial ? &plan.sp : NULL;
    req.moves_pixels = plan.moves_pixels;
  }

  zc::FrameDesc in_desc, out_desc;
  GstZcGpuFrame in = gpu_frame (inbuf, planner.in_info (), planner.in_desc (),
      &in_desc);
  GstZcGpuFrame out = gpu_frame (outbuf, planner.out_info (),
      planner.out_desc (), &out_desc);
  GstZcGpuResult r;
  gst_zc_gpu_passes_run (passes_, &req, &in, &out, inbuf == outbuf,
      gst_zc_base_transform_get_stream (element_), &r);
  if (r.staged)
    gst_zc_base_transform_count_staged (element_, r.staged);
  switch (r.status) {
    case GST_ZC_GPU_OK:
      return GST_FLOW_OK;
    case GST_ZC_GPU_INVALID_REQUEST:
    case GST_ZC_GPU_NOT_SUPPORTED:
      return post_pass_error (element_, r.what,
          r.status == GST_ZC_GPU_NOT_SUPPORTED, r.detail);
    default:
      gst_zc_post_gpu_error (GST_ELEMENT (element_), r.what, r.name,
          r.detail);
      return GST_FLOW_ERROR;
  }
}

std::unique_ptr < FrameExecutor > make_cuda_executor (GstZcBaseTransform *
    element)
{
  return std::unique_ptr < FrameExecutor > (new CudaExecutor (element));
}

} /* namespace zcfilter */

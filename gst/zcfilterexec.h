/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * zcfilter's execution of a frame plan, behind one small interface: the CPU
 * backend (zcfilterexec-cpu.cpp) and the CUDA one (zcfilterexec-cuda.cpp,
 * which hands the passes to the library's GPU passes).
 */
#pragma once

#include "zcfilterplan.h"

#include <memory>

namespace zcfilter {

/* Point effects that upstream zcfilters left on the frame
 * (gstzcpendingeffects.h), for the CPU backend to run with the plan */
struct EffectsChain
{
  const zc::ConvertParams *steps = nullptr;
  int n = 0;
  /* the steps are all of the frame's work (the plan's own point effects,
   * if any, the last of them), at equal caps; else they run first, and
   * the plan's passes read what they wrote */
  bool whole = false;
};

class FrameExecutor
{
public:
  virtual ~FrameExecutor () = default;

  /* Drops what was sized for the previous caps (scratch frames) */
  virtual void reset () = 0;

  /* Runs @plan (Pass::IDENTITY only with a whole @chain) and @chain from
   * @inbuf into @outbuf, the same buffer when in place. On failure posts
   * an element error on @element and returns GST_FLOW_ERROR. */
  virtual GstFlowReturn run (const FramePlanner & planner,
      const FramePlan & plan, const EffectsChain & chain, GstBuffer * inbuf,
      GstBuffer * outbuf) = 0;
};

std::unique_ptr < FrameExecutor > make_cpu_executor (GstZcBaseTransform *
    element);
/* For GPU memory of the element's device, on its stream */
std::unique_ptr < FrameExecutor > make_cuda_executor (GstZcBaseTransform *
    element);

/* Posts the error of a pass the kernels refused */
GstFlowReturn post_pass_error (GstZcBaseTransform * element,
    const gchar * what, bool not_supported, const gchar * detail);

} /* namespace zcfilter */

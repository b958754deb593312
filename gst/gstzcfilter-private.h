/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * zcfilter's instance state, shared by the element (gstzcfilter.cpp) and
 * its output-buffer decision (gstzcfilter-output.cpp). Nothing else
 * includes it.
 */
#pragma once

#include "gstzcfilter.h"
#include "zcfilterexec.h"
#include "zcfilterplan.h"

#include <memory>
#include <mutex>

GST_DEBUG_CATEGORY_EXTERN (gst_zc_filter_debug);

struct GstZcFilterPrivate
{
  std::mutex lock;              /* guards settings and fixated */
  zcfilter::Settings settings;
  /* the geometry the last caps fixation used: set_info takes it, so that
   * frames use the crop and orientation their caps were made for */
  zcfilter::Geometry fixated;
  bool have_fixated = false;

  /* streaming thread only */
  zcfilter::FramePlanner planner;
  bool configured = false;
  /* the plan of the frame between prepare_output_buffer and transform */
  zcfilter::FramePlan plan;
  bool have_plan = false;
  std::unique_ptr < zcfilter::FrameExecutor > cpu;
  std::unique_ptr < zcfilter::FrameExecutor > cuda;
  /* CPU backend chains (gstzcpendingeffects.h): the next zcfilter takes
   * the point effects this one leaves on a frame (decide_allocation) */
  bool hand_on = false;
  /* the frame between prepare_output_buffer and transform: its point
   * effects were left to the next zcfilter; the steps it runs */
  bool handed_on = false;
  zc::ConvertParams steps[zc::kMaxEffectSteps];
  zcfilter::EffectsChain chain;
  /* output frames for the frames that leave passthrough before the next
   * negotiation gives the element its output pool */
  GstBufferPool *standby = nullptr;
};

struct _GstZcFilter
{
  GstZcBaseTransform parent;
  GstZcFilterPrivate *priv;
};

/* gstzcfilter-output.cpp: prepare_output_buffer, and what the element
 * needs of the output decision at negotiation and stop */
GstFlowReturn gst_zc_filter_prepare_output_buffer (GstBaseTransform * trans,
    GstBuffer * inbuf, GstBuffer ** outbuf);
bool gst_zc_filter_next_is_zcfilter (GstZcFilter * self);
void gst_zc_filter_drop_standby (GstZcFilterPrivate * priv);

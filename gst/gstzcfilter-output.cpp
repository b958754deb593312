/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * zcfilter's output-buffer decision (prepare_output_buffer): each frame is
 * planned, then written nowhere (it leaves as it came, or its point effects
 * go on to the next zcfilter of a CPU chain), in place, or into a buffer of
 * the output pool, or of a standby pool while the element is still
 * negotiated for passthrough.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcfilter-private.h"
#include "gstzcallocation.h"
#include "gstzcframecopy.h"
#include "gstzcpendingeffects.h"

#include <mutex>
#include <string>

#define GST_CAT_DEFAULT gst_zc_filter_debug

using zcfilter::FramePlan;
using zcfilter::Geometry;
using zcfilter::Pass;
using zcfilter::Settings;

/* Whether the frames this element pushes go to a zcfilter that works on
 * them, with nothing that reads or writes their pixels in between (a
 * capsfilter, a queue or a zcfilter in passthrough passes them as they
 * are). Elements that pass any meta on in the ALLOCATION query without
 * looking (textoverlay, for one) must not come between a frame's point
 * effects and the zcfilter that runs them. */
bool
gst_zc_filter_next_is_zcfilter (GstZcFilter * self)
{
  GstPad *pad = GST_BASE_TRANSFORM_SRC_PAD (self);
  gst_object_ref (pad);
  bool found = false;
  for (int hop = 0; hop < 8 && pad && !found; hop++) {
    GstPad *peer = gst_pad_get_peer (pad);
    gst_clear_object (&pad);
    if (!peer)
      break;
    GstElement *next = gst_pad_get_parent_element (peer);
    gst_object_unref (peer);
    if (!next)
      break;
    const gchar *type = G_OBJECT_TYPE_NAME (next);
    if (GST_IS_ZC_FILTER (next) &&
        !gst_base_transform_is_passthrough (GST_BASE_TRANSFORM (next)))
      found = true;
    else if (GST_IS_ZC_FILTER (next) || g_str_equal (type, "GstCapsFilter")
        || g_str_equal (type, "GstQueue"))
      pad = gst_element_get_static_pad (next, "src");
    gst_object_unref (next);
  }
  gst_clear_object (&pad);
  return found;
}

/* The standby pool serves the frames of one negotiation: the next one
 * (set_info) or stop() drops it */
void
gst_zc_filter_drop_standby (GstZcFilterPrivate * priv)
{
  if (priv->standby) {
    gst_buffer_pool_set_active (priv->standby, FALSE);
    gst_clear_object (&priv->standby);
  }
}

/* An output frame for a frame that must be transformed while the element
 * is still negotiated for passthrough (which has no output pool) */
static GstFlowReturn
acquire_standby (GstZcFilter * self, GstBuffer * inbuf, GstBuffer ** outbuf)
{
  auto *priv = self->priv;
  auto *trans = GST_BASE_TRANSFORM (self);
  auto *base = GST_ZC_BASE_TRANSFORM (self);
  if (!priv->standby) {
    GstCaps *caps = gst_pad_get_current_caps (GST_BASE_TRANSFORM_SRC_PAD
        (trans));
    if (caps && gst_zc_caps_is_cuda_memory (caps)) {
      priv->standby = gst_zc_base_transform_new_cuda_pool (base, caps, 2, 0,
          NULL);
    } else if (caps) {
      priv->standby = gst_zc_base_transform_new_pool (base, caps, 2,
          gst_zc_base_transform_get_memory_type (base), TRUE);
    }
    gst_clear_caps (&caps);
    if (priv->standby && !gst_buffer_pool_set_active (priv->standby, TRUE))
      gst_clear_object (&priv->standby);
    if (!priv->standby) {
      GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
          ("Could not create a buffer pool for the output"), (NULL));
      return GST_FLOW_ERROR;
    }
  }
  GstFlowReturn ret = gst_buffer_pool_acquire_buffer (priv->standby, outbuf,
      NULL);
  if (ret == GST_FLOW_OK)
    GST_BASE_TRANSFORM_GET_CLASS (trans)->copy_metadata (trans, inbuf,
        *outbuf);
  return ret;
}

static Settings
settings_snapshot (GstZcFilter * self)
{
  std::lock_guard < std::mutex > lk (self->priv->lock);
  return self->priv->settings;
}

/* A renegotiation that left the caps as they were (a crop or orientation
 * changed and changed back, an orientation that keeps the size) does not
 * call set_info(): the geometry its fixation used takes effect with the
 * next frame. Whether there is such a geometry, other than the planner's. */
static bool
take_refixated_geometry (GstZcFilterPrivate * priv, Geometry * fixated)
{
  std::lock_guard < std::mutex > lk (priv->lock);
  if (!priv->have_fixated)
    return false;
  *fixated = priv->fixated;
  priv->have_fixated = false;
  return *fixated != priv->planner.geometry ();
}

/* One snapshot of the settings, one plan per frame: the output decisions
 * below and the passes in transform() all follow it, so a property changed
 * meanwhile from another thread takes the next frame, whole. */
static GstFlowReturn
plan_frame (GstZcFilter * self, GstBuffer * inbuf)
{
  auto *priv = self->priv;
  Geometry fixated;
  bool refixated = take_refixated_geometry (priv, &fixated);
  Settings s = settings_snapshot (self);
  std::string error;

  if (refixated) {
    GstVideoInfo in_info = *priv->planner.in_info ();
    GstVideoInfo out_info = *priv->planner.out_info ();
    GST_DEBUG_OBJECT (self, "same caps, new geometry: crop %d/%d/%d/%d, "
        "direction %d", fixated.crop_left, fixated.crop_right,
        fixated.crop_top, fixated.crop_bottom, fixated.direction);
    if (!priv->planner.configure (&in_info, &out_info, fixated, s.method,
            &error)) {
      GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("%s", error.c_str ()),
          (NULL));
      return GST_FLOW_NOT_NEGOTIATED;
    }
  }
  if (!priv->planner.plan (s, gst_buffer_get_video_crop_meta (inbuf),
          &priv->plan, &error)) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("%s", error.c_str ()), (NULL));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* Point effects upstream zcfilters left on the frame (CPU backend chains)
 * were made for the frame they saw: on a frame of another format or size
 * they would run on the wrong bytes. */
static GstFlowReturn
take_pending_effects (GstZcFilter * self, GstBuffer * inbuf,
    GstZcPendingEffectsMeta ** pending)
{
  auto *priv = self->priv;
  const GstVideoInfo *in_info = priv->planner.in_info ();

  priv->handed_on = false;
  priv->chain = zcfilter::EffectsChain ();
  *pending = gst_buffer_get_zc_pending_effects_meta (inbuf);
  GstZcPendingEffectsMeta *p = *pending;
  if (p && (p->format != GST_VIDEO_INFO_FORMAT (in_info) ||
          p->width != GST_VIDEO_INFO_WIDTH (in_info) ||
          p->height != GST_VIDEO_INFO_HEIGHT (in_info))) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED,
        ("Point effects left by an upstream zcfilter are for another frame "
            "(%s %dx%d) than this element's input", gst_video_format_to_string
            (p->format), p->width, p->height), (NULL));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* CPU backend chains: the next zcfilter runs every point effect of the
 * chain in one pass with its own work, so the frame goes on as it came
 * when it needs nothing but the steps upstream left on it, or when its own
 * point effects can join them. */
static bool
leave_effects_to_next (GstZcFilter * self, GstBuffer * inbuf,
    GstZcPendingEffectsMeta * pending)
{
  auto *priv = self->priv;
  auto *base = GST_ZC_BASE_TRANSFORM (self);
  const FramePlan & plan = priv->plan;
  const GstVideoInfo *in_info = priv->planner.in_info ();
  bool passthrough = gst_base_transform_is_passthrough (GST_BASE_TRANSFORM
      (self));

  /* nothing to add: the steps go on to the next zcfilter */
  if (pending && plan.pass == Pass::IDENTITY &&
      (passthrough ? gst_zc_filter_next_is_zcfilter (self) : priv->hand_on))
    return true;
  if (plan.effects_only && !gst_zc_base_transform_uses_gpu (base) &&
      priv->hand_on && !passthrough &&
      !gst_zc_base_transform_out_cuda_memory (base) &&
      gst_buffer_is_writable (inbuf) &&
      (!pending || gst_zc_pending_effects_meta_takes (pending, in_info)) &&
      gst_buffer_add_zc_pending_effects_step (inbuf, in_info, plan.cp)) {
    GST_LOG_OBJECT (self, "point effects left to the next zcfilter");
    priv->handed_on = true;
    return true;
  }
  return false;
}

/* The point effects this element runs itself, in one pass: those upstream
 * left on the frame, then its own when they are all a CPU frame needs. */
static void
collect_effects_chain (GstZcFilter * self, GstZcPendingEffectsMeta * pending)
{
  auto *priv = self->priv;
  auto *base = GST_ZC_BASE_TRANSFORM (self);
  const FramePlan & plan = priv->plan;

  if (!pending && !(plan.effects_only &&
          !gst_zc_base_transform_uses_gpu (base) &&
          plan.pass == Pass::CONVERT &&
          !gst_zc_base_transform_out_cuda_memory (base)))
    return;
  int n = 0;
  for (guint i = 0; pending && i < pending->n_steps; i++)
    priv->steps[n++] = pending->steps[i];
  if (plan.effects_only)
    priv->steps[n++] = plan.cp;
  priv->chain.steps = priv->steps;
  priv->chain.n = n;
  priv->chain.whole = plan.pass == Pass::IDENTITY || plan.effects_only;
}

/* Nothing to do for this frame: it leaves as it came, in passthrough or
 * not (no kernel, no copy). Not as memory:CUDAMemory out of passthrough:
 * that needs a GstCudaMemory, so the frame is copied (counted). */
static bool
frame_leaves_as_is (GstZcFilter * self)
{
  auto *priv = self->priv;
  return priv->plan.pass == Pass::IDENTITY && !priv->chain.n &&
      (!gst_zc_base_transform_out_cuda_memory (GST_ZC_BASE_TRANSFORM (self))
      || gst_base_transform_is_passthrough (GST_BASE_TRANSFORM (self)));
}

/* Work to do while negotiated for passthrough (an effect switched on
 * since): this frame is transformed, into a standby pool until the next
 * negotiation (asked for here) gives the element its output pool */
static void
leave_passthrough (GstZcFilter * self)
{
  auto *trans = GST_BASE_TRANSFORM (self);
  if (!gst_base_transform_is_passthrough (trans))
    return;
  GST_DEBUG_OBJECT (self, "effects switched on: leaving passthrough");
  gst_base_transform_set_passthrough (trans, FALSE);
  gst_base_transform_reconfigure_src (trans);
}

/* The table kernel (and, on the CPU backend, point effects alone) runs
 * in place when nobody else holds the frame and it already is in the
 * memory downstream asked for; every other pass reads the input and
 * writes a pool buffer (no more bus traffic than in place) */
static bool
runs_in_place (GstZcFilter * self, GstBuffer * inbuf)
{
  auto *priv = self->priv;
  auto *base = GST_ZC_BASE_TRANSFORM (self);
  bool chain_alone = priv->chain.n && priv->chain.whole;

  if ((priv->plan.pass != Pass::LUT && !chain_alone) ||
      gst_zc_base_transform_out_cuda_memory (base))
    return false;
  GstZcMemoryType want = gst_zc_base_transform_get_pool_memory_type (base);
  GstMemory *mem = gst_buffer_peek_memory (inbuf, 0);
  bool same_memory = want == GST_ZC_MEMORY_TYPE_AUTO ||
      (gst_is_zc_memory (mem) &&
      gst_zc_memory_get_memory_type ((GstZcMemory *) mem) == want);
  return same_memory && gst_zc_buffer_gpu_writable (inbuf);
}

/* A buffer of the output pool; while negotiated for passthrough, which
 * has none, one of the standby pool */
static GstFlowReturn
acquire_output (GstZcFilter * self, GstBuffer * inbuf, GstBuffer ** outbuf)
{
  auto *trans = GST_BASE_TRANSFORM (self);
  GstBufferPool *pool = gst_base_transform_get_buffer_pool (trans);
  GstFlowReturn ret;

  if (pool)
    ret = GST_BASE_TRANSFORM_CLASS (g_type_class_peek
        (GST_TYPE_ZC_BASE_TRANSFORM))->prepare_output_buffer (trans, inbuf,
        outbuf);
  else
    ret = acquire_standby (self, inbuf, outbuf);
  gst_clear_object (&pool);
  return ret;
}

/* The frame is its own output: nothing is written, or the kernel writes
 * it in place */
static GstFlowReturn
output_is_input (GstZcFilter * self, GstBuffer * inbuf, GstBuffer ** outbuf)
{
  *outbuf = inbuf;
  self->priv->have_plan = true;
  return GST_FLOW_OK;
}

/* Plans the frame, then decides where it is written: nowhere (its point
 * effects go on to the next zcfilter, or it needs nothing), in place, or
 * into a buffer of the output pool. transform() runs the plan. */
GstFlowReturn
gst_zc_filter_prepare_output_buffer (GstBaseTransform * trans,
    GstBuffer * inbuf, GstBuffer ** outbuf)
{
  auto *self = GST_ZC_FILTER (trans);
  auto *priv = self->priv;
  GstZcPendingEffectsMeta *pending = NULL;

  priv->have_plan = false;
  if (!priv->configured) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("No caps were negotiated"),
        (NULL));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  GstFlowReturn ret = gst_zc_base_transform_check_input (GST_ZC_BASE_TRANSFORM
      (trans), inbuf);
  if (ret == GST_FLOW_OK)
    ret = plan_frame (self, inbuf);
  if (ret == GST_FLOW_OK)
    ret = take_pending_effects (self, inbuf, &pending);
  if (ret != GST_FLOW_OK)
    return ret;

  if (leave_effects_to_next (self, inbuf, pending))
    return output_is_input (self, inbuf, outbuf);
  collect_effects_chain (self, pending);
  if (frame_leaves_as_is (self))
    return output_is_input (self, inbuf, outbuf);
  leave_passthrough (self);
  if (runs_in_place (self, inbuf))
    return output_is_input (self, inbuf, outbuf);

  ret = acquire_output (self, inbuf, outbuf);
  priv->have_plan = ret == GST_FLOW_OK;
  return ret;
}

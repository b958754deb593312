/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The state of GstZcBaseTransform, shared by the three units that make the
 * base class: gstzcbasetransform.cpp (properties, stats, context, start and
 * stop, caps), gstzcallocation.cpp (pools) and gstzcframecopy.cpp (copies,
 * input checks, foreign memory). Elements never include it: they reach the
 * state through the functions of those units' headers.
 */
#pragma once

#include "gstzcbasetransform.h"

#include <mutex>
#include <vector>

/* One debug category for the three units, so that GST_DEBUG=zcbasetransform
 * (which the element errors name) shows all of the base class */
GST_DEBUG_CATEGORY_EXTERN (gst_zc_base_transform_debug);

#define GST_ZC_BASE_TRANSFORM_DEFAULT_DEVICE_ID -1
#define GST_ZC_BASE_TRANSFORM_DEFAULT_MEMORY_TYPE GST_ZC_MEMORY_TYPE_AUTO
#define GST_ZC_BASE_TRANSFORM_DEFAULT_CPU_FALLBACK TRUE

/* C++ state; GObject's private area holds only a pointer to it, because
 * GObject neither constructs nor destroys what it places there. */
struct ZcBaseTransformState
{
  std::mutex lock;              /* properties and stats */
  gint device_id = GST_ZC_BASE_TRANSFORM_DEFAULT_DEVICE_ID;
  GstZcMemoryType memory_type = GST_ZC_BASE_TRANSFORM_DEFAULT_MEMORY_TYPE;
  gboolean cpu_fallback = GST_ZC_BASE_TRANSFORM_DEFAULT_CPU_FALLBACK;

  /* the counters of the stats property, zeroed at start() */
  struct Stats
  {
    guint64 buffers = 0;
    guint64 zero_copy_buffers = 0;
    guint64 copied_buffers = 0;
    guint64 bytes_copied = 0;
    guint64 bytes_staged = 0;
    guint64 cuda_memory_buffers = 0;
    guint64 adopted_buffers = 0;
    guint64 registrations = 0;
    guint64 bytes_registered = 0;
  };
  Stats stats;
  /* the device of a gst.cuda.context set on the element, for device-id=-1 */
  gint cuda_device_hint = -1;

  /* from start() to stop() */
  GstZcContext *context = nullptr;
  gpointer stream = nullptr;
  GstZcMemoryType resolved_type = GST_ZC_MEMORY_TYPE_SYSTEM;
  /* memory type of the output pool decide_allocation settled on */
  GstZcMemoryType pool_type = GST_ZC_MEMORY_TYPE_AUTO;

  GstVideoInfo in_info;
  GstVideoInfo out_info;
  /* the pads' memory is memory:CUDAMemory (set_caps) */
  gboolean in_cuda = FALSE;
  gboolean out_cuda = FALSE;
  /* allocators of the wrappers around foreign memory (start to stop): host
   * memory (mapped with a GPU, system memory on the CPU backend) and
   * nvcodec's device memory */
  GstAllocator *wrap_host = nullptr;
  GstAllocator *wrap_device = nullptr;
  gboolean warned_foreign_cuda = FALSE;

  /* Pools this element made (proposed upstream, or its own output pool),
   * kept so that a renegotiation to caps it already had takes the same pool
   * again instead of pinning fresh memory. Streaming thread, and stats;
   * dropped at stop(). Under pools_lock. */
  struct MadePool
  {
    GstBufferPool *pool;
    GstCaps *caps;
    GstZcMemoryType type;
    gboolean video_meta;
    gboolean shareable;
  };
  std::vector < MadePool > made_pools;
  std::mutex pools_lock;
  /* the pools made from now on are shareable with another process (under
   * pools_lock): downstream takes file descriptors (unixfdsink) */
  gboolean shareable_pools = FALSE;

  ZcBaseTransformState ()
  {
    gst_video_info_init (&in_info);
    gst_video_info_init (&out_info);
  }
  /* A neighbour may share its context (set_context) with an element that
   * never starts: what stop() would drop goes with the element */
  ~ZcBaseTransformState ()
  {
    gst_clear_object (&wrap_host);
    gst_clear_object (&wrap_device);
    gst_clear_object (&context);
  }
};

/* The state of @self (gstzcbasetransform.cpp, which owns the private area) */
ZcBaseTransformState *gst_zc_base_transform_get_state (GstZcBaseTransform *
    self);

static inline ZcBaseTransformState *
get_priv (GstZcBaseTransform * self)
{
  return gst_zc_base_transform_get_state (self);
}

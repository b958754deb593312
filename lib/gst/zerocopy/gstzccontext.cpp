/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:gstzccontext
 * @title: GstZcContext
 * @short_description: the CUDA device the zero-copy elements work on
 *
 * A #GstZcContext names one CUDA device, or the CPU backend when there is
 * none, with the attributes that decide which memory pays on it. It knows no
 * allocator: gst_zc_allocator_new() makes one for a context. Elements share
 * one context per device through the helpers of gstzcutils.h.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzccontext.h"
#include "gstzccuda-private.h"

GST_DEBUG_CATEGORY_STATIC (gst_zc_context_debug);
#define GST_CAT_DEFAULT gst_zc_context_debug

struct _GstZcContext
{
  GstObject parent;

  gint device_id;
  gboolean has_gpu;
  gchar *device_name;
  gchar *no_gpu_reason;
  gboolean integrated;
  gboolean concurrent_managed;
  gboolean can_map_host;
  gint cc_major;
  gint cc_minor;
};

G_DEFINE_TYPE_WITH_CODE (GstZcContext, gst_zc_context, GST_TYPE_OBJECT,
    GST_DEBUG_CATEGORY_INIT (gst_zc_context_debug, "zccontext", 0,
        "zero-copy CUDA context"));

static void
gst_zc_context_finalize (GObject * object)
{
  GstZcContext *self = GST_ZC_CONTEXT (object);

  g_free (self->device_name);
  g_free (self->no_gpu_reason);

  G_OBJECT_CLASS (gst_zc_context_parent_class)->finalize (object);
}

static void
gst_zc_context_class_init (GstZcContextClass * klass)
{
  G_OBJECT_CLASS (klass)->finalize = gst_zc_context_finalize;
}

static void
gst_zc_context_init (GstZcContext * self)
{
  self->device_id = -1;
}

/**
 * gst_zc_context_new:
 * @device_id: the CUDA device index, or -1 for the first one
 * @error: (out) (optional): where to put the reason of a failure
 *
 * Opens a CUDA device. With no usable GPU (no device, no driver, or a build
 * without CUDA), returns a context of the CPU backend, whose
 * gst_zc_context_get_no_gpu_reason() says why. A @device_id that does not
 * exist while others do is an error.
 *
 * Returns: (transfer full) (nullable): a new context, or %NULL
 */
GstZcContext *
gst_zc_context_new (gint device_id, GError ** error)
{
  GstZcContext *self;

  self = (GstZcContext *) g_object_new (GST_TYPE_ZC_CONTEXT, NULL);
  gst_object_ref_sink (self);

#if GST_ZC_HAVE_CUDA
  int count = 0;
  cudaError_t err = cudaGetDeviceCount (&count);
  if (err != cudaSuccess) {
    self->no_gpu_reason = g_strdup_printf ("no usable CUDA driver or device: "
        "%s (%s)", cudaGetErrorName (err), cudaGetErrorString (err));
    /* clear the sticky runtime error state for later calls */
    cudaGetLastError ();
  } else if (count == 0) {
    self->no_gpu_reason = g_strdup ("no CUDA device found");
  } else {
    int dev = device_id < 0 ? 0 : device_id;
    if (dev >= count) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
          "CUDA device %d does not exist: this machine has %d CUDA device%s "
          "(0..%d)", device_id, count, count == 1 ? "" : "s", count - 1);
      gst_object_unref (self);
      return NULL;
    }

    gst_zc::DeviceScope scope (dev);
    cudaDeviceProp prop;
    int integrated = 0, concurrent = 0, can_map = 0;
    if (!scope.ok () ||
        !GST_ZC_CUDA_OK (cudaGetDeviceProperties (&prop, dev)) ||
        !GST_ZC_CUDA_OK (cudaDeviceGetAttribute (&integrated,
                cudaDevAttrIntegrated, dev)) ||
        !GST_ZC_CUDA_OK (cudaDeviceGetAttribute (&concurrent,
                cudaDevAttrConcurrentManagedAccess, dev)) ||
        !GST_ZC_CUDA_OK (cudaDeviceGetAttribute (&can_map,
                cudaDevAttrCanMapHostMemory, dev))) {
      err = cudaGetLastError ();
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_OPEN_READ,
          "Could not open CUDA device %d: %s (%s)", dev,
          cudaGetErrorName (err), cudaGetErrorString (err));
      gst_object_unref (self);
      return NULL;
    }

    self->has_gpu = TRUE;
    self->device_id = dev;
    self->device_name = g_strdup (prop.name);
    self->integrated = integrated != 0;
    self->concurrent_managed = concurrent != 0;
    self->can_map_host = can_map != 0;
    self->cc_major = prop.major;
    self->cc_minor = prop.minor;
    GST_INFO_OBJECT (self, "CUDA device %d: %s, compute %d.%d, %s, "
        "concurrent managed access %d, can map host memory %d", dev,
        prop.name, prop.major, prop.minor,
        integrated ? "integrated" : "discrete", concurrent, can_map);
  }
#else
  (void) device_id;
  (void) error;
  self->no_gpu_reason = g_strdup ("gst-zerocopy was built without CUDA");
#endif

  if (!self->has_gpu) {
    self->device_name = g_strdup ("CPU");
    GST_INFO_OBJECT (self, "CPU backend: %s", self->no_gpu_reason);
  }

  return self;
}

/**
 * gst_zc_context_has_gpu:
 * @context: a #GstZcContext
 *
 * Returns: whether @context drives a CUDA device (%FALSE: the CPU backend)
 */
gboolean
gst_zc_context_has_gpu (GstZcContext * context)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), FALSE);
  return context->has_gpu;
}

/**
 * gst_zc_context_get_device_id:
 * @context: a #GstZcContext
 *
 * Returns: the CUDA device index, or -1 for the CPU backend
 */
gint
gst_zc_context_get_device_id (GstZcContext * context)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), -1);
  return context->device_id;
}

/**
 * gst_zc_context_get_device_name:
 * @context: a #GstZcContext
 *
 * Returns: (transfer none): the GPU's name, or "CPU"
 */
const gchar *
gst_zc_context_get_device_name (GstZcContext * context)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), NULL);
  return context->device_name;
}

/**
 * gst_zc_context_get_no_gpu_reason:
 * @context: a #GstZcContext
 *
 * Returns: (transfer none) (nullable): why there is no GPU, or %NULL
 */
const gchar *
gst_zc_context_get_no_gpu_reason (GstZcContext * context)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), NULL);
  return context->no_gpu_reason;
}

/**
 * gst_zc_context_is_integrated:
 * @context: a #GstZcContext
 *
 * Returns: whether the GPU shares DRAM with the CPU (Jetson)
 */
gboolean
gst_zc_context_is_integrated (GstZcContext * context)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), FALSE);
  return context->integrated;
}

/**
 * gst_zc_context_has_concurrent_managed_access:
 * @context: a #GstZcContext
 *
 * Returns: whether CPU and GPU may touch managed memory at the same time,
 *   which is also what lets managed memory be prefetched, or stay on the
 *   host, mapped into the GPU
 */
gboolean
gst_zc_context_has_concurrent_managed_access (GstZcContext * context)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), FALSE);
  return context->concurrent_managed;
}

/**
 * gst_zc_context_can_map_host_memory:
 * @context: a #GstZcContext
 *
 * Returns: whether the device can address pinned host memory
 *   (%GST_ZC_MEMORY_TYPE_MAPPED); %FALSE for the CPU backend
 */
gboolean
gst_zc_context_can_map_host_memory (GstZcContext * context)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), FALSE);
  return context->can_map_host;
}

/**
 * gst_zc_context_resolve_memory_type:
 * @context: a #GstZcContext
 * @requested: the memory type asked for
 *
 * Turns %GST_ZC_MEMORY_TYPE_AUTO into the type that pays on this device:
 * mapped pinned memory on discrete GPUs and on integrated GPUs of compute
 * capability 7.2 and newer (I/O coherent, so pinned memory stays cached for
 * the CPU), managed memory on older integrated GPUs (where pinned memory is
 * uncached for the CPU), system memory without a GPU. Other types are
 * returned as they are.
 *
 * Returns: the memory type to allocate
 */
GstZcMemoryType
gst_zc_context_resolve_memory_type (GstZcContext * context,
    GstZcMemoryType requested)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), GST_ZC_MEMORY_TYPE_SYSTEM);

  if (requested != GST_ZC_MEMORY_TYPE_AUTO)
    return requested;
  if (!context->has_gpu)
    return GST_ZC_MEMORY_TYPE_SYSTEM;
  if (!context->integrated)
    return GST_ZC_MEMORY_TYPE_MAPPED;
  if (context->cc_major > 7 || (context->cc_major == 7 && context->cc_minor >= 2))
    return GST_ZC_MEMORY_TYPE_MAPPED;
  return GST_ZC_MEMORY_TYPE_MANAGED;
}

/**
 * gst_zc_context_new_stream:
 * @context: a #GstZcContext with a GPU
 *
 * Creates a non-blocking CUDA stream on the context's device.
 *
 * Returns: (transfer full) (nullable): a `cudaStream_t`, or %NULL on failure
 *   or without a GPU
 */
gpointer
gst_zc_context_new_stream (GstZcContext * context)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), NULL);
#if GST_ZC_HAVE_CUDA
  if (!context->has_gpu)
    return NULL;
  /* a failure below is the one gst_zc_cuda_last_failure() reports */
  gst_zc_cuda_forget_last_failure ();
  gst_zc::DeviceScope scope (context->device_id);
  cudaStream_t stream = nullptr;
  if (!scope.ok () ||
      !GST_ZC_CUDA_OK_OR_FAULT (STREAM, cudaStreamCreateWithFlags (&stream,
              cudaStreamNonBlocking)))
    return NULL;
  return stream;
#else
  return NULL;
#endif
}

/**
 * gst_zc_context_free_stream:
 * @context: a #GstZcContext
 * @stream: (transfer full) (nullable): a stream of gst_zc_context_new_stream()
 *
 * Destroys @stream once its queued work is done (without waiting for it).
 */
void
gst_zc_context_free_stream (GstZcContext * context, gpointer stream)
{
  g_return_if_fail (GST_IS_ZC_CONTEXT (context));
#if GST_ZC_HAVE_CUDA
  if (!stream)
    return;
  gst_zc::DeviceScope scope (context->device_id);
  GST_ZC_CUDA_OK (cudaStreamDestroy ((cudaStream_t) stream));
#else
  (void) stream;
#endif
}

/**
 * gst_zc_context_sync_stream:
 * @context: a #GstZcContext
 * @stream: (nullable): a stream of gst_zc_context_new_stream()
 *
 * Blocks until @stream is idle. Only for teardown and tests: the streaming
 * path orders work with fences instead.
 *
 * Returns: %FALSE if the stream reported an error
 */
gboolean
gst_zc_context_sync_stream (GstZcContext * context, gpointer stream)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), FALSE);
#if GST_ZC_HAVE_CUDA
  if (!stream)
    return TRUE;
  gst_zc::DeviceScope scope (context->device_id);
  return GST_ZC_CUDA_OK (cudaStreamSynchronize ((cudaStream_t) stream));
#else
  (void) stream;
  return TRUE;
#endif
}

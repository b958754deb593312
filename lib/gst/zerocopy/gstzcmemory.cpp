/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:gstzcmemory
 * @title: GstZcMemory
 * @short_description: memory the CPU and the GPU share without copies
 *
 * #GstZcAllocator hands out #GstZcMemory of one #GstZcMemoryType:
 *
 * - mapped: `cudaHostAlloc (cudaHostAllocMapped | cudaHostAllocPortable)`;
 *   kernels read and write it over the bus, in place.
 * - managed: `cudaMallocManaged`; where the device allows concurrent managed
 *   access it is prefetched to the GPU before kernels and back to the CPU
 *   before a CPU map; elsewhere (older Jetsons) it is attached to the
 *   working stream for the kernels and back to the host after them.
 * - system: page-aligned host memory for the CPU backend.
 * - device: `cudaMalloc`; a CPU map copies it into a pinned staging buffer
 *   (allocated at the first map and kept with the memory) after the fence,
 *   and a write map copies it back at unmap, fenced.
 *
 * Fence rules: a GPU user calls gst_zc_memory_prepare_gpu() on its stream
 * before its kernels (the stream waits on the memory's fence; the host does
 * not) and gst_zc_memory_set_gpu_fence() after them. A CPU map waits on the
 * fence, and on nothing else.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcmemory.h"
#include "gstzccuda-private.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <new>
#include <thread>
#include <vector>
#include <stdlib.h>
#include <string.h>

GST_DEBUG_CATEGORY_STATIC (gst_zc_memory_debug);
#define GST_CAT_DEFAULT gst_zc_memory_debug

/* Data starts on this boundary at least, whatever the caller asks: one
 * coalesced 128-byte line, and the 16-byte vectors the kernels load. */
#define ZC_MIN_ALIGN_MASK 255

struct _GstZcMemoryPrivate
{
  GstZcMemoryType type = GST_ZC_MEMORY_TYPE_SYSTEM;
  gint device_id = -1;
  gboolean concurrent_managed = FALSE;
  void *alloc_base = nullptr;   /* what the allocation call returned */
  guint8 *host = nullptr;       /* start of the GstMemory block (maxsize) */
  guint8 *device = nullptr;     /* the GPU's address of host[0] */
  gsize block_size = 0;
  std::mutex lock;
#if GST_ZC_HAVE_CUDA
  cudaEvent_t fence = nullptr;
  bool fence_pending = false;
  bool on_gpu = false;          /* managed, prefetched to the GPU */
  void *staging = nullptr;      /* device memory: pinned CPU view */
#endif
  /* Wrapped memory (gst_zc_memory_new_wrapped()): no allocation of ours;
   * @release gives the bytes back to their owner once the fence is done */
  GDestroyNotify release = nullptr;
  gpointer release_data = nullptr;
};

#if GST_ZC_HAVE_CUDA
/* A wrapped memory whose last user let go while the GPU may still read
 * it: its owner gets the bytes back once the fence is done. */
struct PendingRelease
{
  cudaEvent_t fence;
  int device_id;
  GDestroyNotify release;
  gpointer release_data;
};

/* The allocator's release thread waits on those fences, so that the
 * thread that dropped a wrapped memory (a streaming thread, right after
 * it queued the kernel that reads it) never waits for the GPU. */
struct ReleaseQueue
{
  std::mutex lock;
  std::condition_variable wake;         /* something pending, or stop */
  std::condition_variable drained;      /* nothing pending or in hand */
  std::deque < PendingRelease > pending;
  bool busy = false;            /* the thread holds one */
  bool stop = false;
  std::thread thread;
};
#endif

struct _GstZcAllocator
{
  GstAllocator parent;

  GstZcContext *context;
  GstZcMemoryType memory_type;
  /* The registered default allocator opens its device on first use */
  gboolean lazy;
  std::mutex *lock;
#if GST_ZC_HAVE_CUDA
  /* managed and device memory: where CPU maps queue their transfers */
  cudaStream_t transfer_stream;
  /* fences of wrapped memories that were freed, for the next ones: a
   * wrapper per frame must not create an event per frame (under lock) */
  std::vector < cudaEvent_t > *spare_fences;
  /* wrapped memories given back after their fence (created on first use,
   * under lock) */
  ReleaseQueue *releases;
#endif
};

/* The category comes with the type, so that gst_zc_allocator_new() may log
 * before the first instance (and so the class) exists. */
G_DEFINE_TYPE_WITH_CODE (GstZcAllocator, gst_zc_allocator, GST_TYPE_ALLOCATOR,
    GST_DEBUG_CATEGORY_INIT (gst_zc_memory_debug, "zcmemory", 0,
        "zero-copy CUDA memory"));

GType
gst_zc_memory_type_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_ZC_MEMORY_TYPE_AUTO, "Pick for the device: mapped on discrete GPUs "
          "and Jetson Xavier/Orin, managed on older Jetsons, system without "
          "a GPU", "auto"},
    {GST_ZC_MEMORY_TYPE_MAPPED, "Pinned host memory mapped into the GPU "
          "(cudaHostAlloc)", "mapped"},
    {GST_ZC_MEMORY_TYPE_MANAGED, "CUDA managed memory (cudaMallocManaged), "
          "prefetched where it is used", "managed"},
    {GST_ZC_MEMORY_TYPE_SYSTEM, "Page-aligned host memory, processed on the "
          "CPU", "system"},
    {GST_ZC_MEMORY_TYPE_DEVICE, "GPU memory (cudaMalloc), copied in and out "
          "through pinned staging with async copies", "device"},
    {0, NULL, NULL}
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstZcMemoryType", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/**
 * gst_zc_memory_type_to_string:
 * @type: a #GstZcMemoryType
 *
 * Returns: (transfer none): the nick of @type ("auto", "mapped", ...)
 */
const gchar *
gst_zc_memory_type_to_string (GstZcMemoryType type)
{
  GEnumClass *klass = (GEnumClass *) g_type_class_ref (GST_TYPE_ZC_MEMORY_TYPE);
  GEnumValue *v = g_enum_get_value (klass, type);
  const gchar *nick = v ? v->value_nick : "unknown";
  g_type_class_unref (klass);
  return nick;
}

static inline GstZcMemory *
root_of (GstZcMemory * mem)
{
  return mem->mem.parent ? (GstZcMemory *) mem->mem.parent : mem;
}

/* ---------------------------------------------------------------------- */
/* Raw allocations, one pair per memory type                              */
/* ---------------------------------------------------------------------- */

static bool
raw_alloc (GstZcMemoryPrivate * priv, gsize bytes)
{
  switch (priv->type) {
    case GST_ZC_MEMORY_TYPE_SYSTEM:{
      void *p = nullptr;
      if (posix_memalign (&p, 4096, bytes) != 0)
        return false;
      priv->alloc_base = p;
      return true;
    }
#if GST_ZC_HAVE_CUDA
    case GST_ZC_MEMORY_TYPE_MAPPED:{
      gst_zc::DeviceScope scope (priv->device_id);
      void *p = nullptr;
      if (!scope.ok () || !GST_ZC_CUDA_OK (cudaHostAlloc (&p, bytes,
                  cudaHostAllocMapped | cudaHostAllocPortable)))
        return false;
      priv->alloc_base = p;
      return true;
    }
    case GST_ZC_MEMORY_TYPE_MANAGED:{
      gst_zc::DeviceScope scope (priv->device_id);
      void *p = nullptr;
      if (!scope.ok () ||
          !GST_ZC_CUDA_OK (cudaMallocManaged (&p, bytes,
                  priv->concurrent_managed ? cudaMemAttachGlobal :
                  cudaMemAttachHost)))
        return false;
      priv->alloc_base = p;
      return true;
    }
    case GST_ZC_MEMORY_TYPE_DEVICE:{
      gst_zc::DeviceScope scope (priv->device_id);
      void *p = nullptr;
      if (!scope.ok () || !GST_ZC_CUDA_OK (cudaMalloc (&p, bytes)))
        return false;
      priv->alloc_base = p;
      return true;
    }
#endif
    default:
      return false;
  }
}

static void
raw_free (GstZcMemoryPrivate * priv)
{
#if GST_ZC_HAVE_CUDA
  if (priv->staging) {
    gst_zc::DeviceScope scope (priv->device_id);
    GST_ZC_CUDA_OK (cudaFreeHost (priv->staging));
    priv->staging = nullptr;
  }
#endif
  if (!priv->alloc_base)
    return;
  switch (priv->type) {
#if GST_ZC_HAVE_CUDA
    case GST_ZC_MEMORY_TYPE_MAPPED:{
      gst_zc::DeviceScope scope (priv->device_id);
      GST_ZC_CUDA_OK (cudaFreeHost (priv->alloc_base));
      break;
    }
    case GST_ZC_MEMORY_TYPE_MANAGED:
    case GST_ZC_MEMORY_TYPE_DEVICE:{
      gst_zc::DeviceScope scope (priv->device_id);
      GST_ZC_CUDA_OK (cudaFree (priv->alloc_base));
      break;
    }
#endif
    default:
      free (priv->alloc_base);
      break;
  }
  priv->alloc_base = nullptr;
}

/* ---------------------------------------------------------------------- */
/* Fences                                                                 */
/* ---------------------------------------------------------------------- */

#if GST_ZC_HAVE_CUDA
#if CUDART_VERSION >= 13000
static cudaError_t
prefetch (void *ptr, size_t bytes, int device, cudaStream_t stream)
{
  cudaMemLocation loc = { };
  if (device == cudaCpuDeviceId) {
    loc.type = cudaMemLocationTypeHost;
    loc.id = 0;
  } else {
    loc.type = cudaMemLocationTypeDevice;
    loc.id = device;
  }
  return cudaMemPrefetchAsync (ptr, bytes, loc, 0, stream);
}
#else
static cudaError_t
prefetch (void *ptr, size_t bytes, int device, cudaStream_t stream)
{
  return cudaMemPrefetchAsync (ptr, bytes, device, stream);
}
#endif
#endif

/**
 * gst_zc_memory_wait_cpu:
 * @mem: a #GstZcMemory
 *
 * Blocks until the GPU work fenced on @mem is done and, for managed memory,
 * until its pages are back on the CPU. gst_memory_map() does this itself.
 *
 * Returns: %FALSE if the GPU reported an error
 */
gboolean
gst_zc_memory_wait_cpu (GstZcMemory * mem)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), FALSE);
#if GST_ZC_HAVE_CUDA
  GstZcMemory *root = root_of (mem);
  GstZcMemoryPrivate *priv = root->priv;
  if (priv->type == GST_ZC_MEMORY_TYPE_SYSTEM)
    return TRUE;

  std::lock_guard < std::mutex > lk (priv->lock);
  if (!priv->fence_pending && !priv->on_gpu)
    return TRUE;

  gst_zc::DeviceScope scope (priv->device_id);
  if (!scope.ok ())
    return FALSE;
  if (priv->on_gpu) {
    /* The prefetch back waits on the GPU work, then the fence covers both */
    auto *alloc = (GstZcAllocator *) root->mem.allocator;
    cudaStream_t ts = alloc->transfer_stream;
    if (priv->fence_pending &&
        !GST_ZC_CUDA_OK (cudaStreamWaitEvent (ts, priv->fence, 0)))
      return FALSE;
    if (!GST_ZC_CUDA_OK (prefetch (priv->host, priv->block_size,
                cudaCpuDeviceId, ts)) ||
        !GST_ZC_CUDA_OK (cudaEventRecord (priv->fence, ts)))
      return FALSE;
    priv->on_gpu = false;
    priv->fence_pending = true;
  }
  if (!GST_ZC_CUDA_OK (cudaEventSynchronize (priv->fence)))
    return FALSE;
  priv->fence_pending = false;
#else
  (void) mem;
#endif
  return TRUE;
}

/**
 * gst_zc_memory_prepare_gpu:
 * @mem: a #GstZcMemory
 * @stream: the `cudaStream_t` the caller's kernels will run on
 *
 * Orders @stream after the GPU work already fenced on @mem, without blocking
 * the host, and brings managed memory to the GPU (prefetch, or stream
 * attachment where the device cannot share managed memory concurrently).
 * Call it before launching kernels that touch @mem.
 *
 * Returns: %FALSE if a CUDA call failed (logged)
 */
gboolean
gst_zc_memory_prepare_gpu (GstZcMemory * mem, gpointer stream)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), FALSE);
#if GST_ZC_HAVE_CUDA
  GstZcMemoryPrivate *priv = root_of (mem)->priv;
  auto s = (cudaStream_t) stream;
  if (priv->type == GST_ZC_MEMORY_TYPE_SYSTEM)
    return FALSE;

  std::lock_guard < std::mutex > lk (priv->lock);
  gst_zc::DeviceScope scope (priv->device_id);
  if (!scope.ok ())
    return FALSE;
  if (priv->fence_pending &&
      !GST_ZC_CUDA_OK (cudaStreamWaitEvent (s, priv->fence, 0)))
    return FALSE;
  if (priv->type == GST_ZC_MEMORY_TYPE_MANAGED) {
    if (priv->concurrent_managed) {
      if (!priv->on_gpu) {
        if (!GST_ZC_CUDA_OK (prefetch (priv->host, priv->block_size,
                    priv->device_id, s)))
          return FALSE;
        priv->on_gpu = true;
      }
    } else if (!GST_ZC_CUDA_OK (cudaStreamAttachMemAsync (s, priv->host, 0,
                cudaMemAttachSingle))) {
      return FALSE;
    }
  }
  return TRUE;
#else
  (void) mem;
  (void) stream;
  return FALSE;
#endif
}

/**
 * gst_zc_memory_set_gpu_fence:
 * @mem: a #GstZcMemory
 * @stream: the `cudaStream_t` the caller's kernels ran on
 *
 * Records @mem's fence after the work queued on @stream: CPU maps and later
 * GPU users wait on it. Call it after the kernels that read or write @mem,
 * reads included, so the producer does not overwrite bytes a kernel is
 * still reading.
 *
 * Returns: %FALSE if a CUDA call failed (logged)
 */
gboolean
gst_zc_memory_set_gpu_fence (GstZcMemory * mem, gpointer stream)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), FALSE);
#if GST_ZC_HAVE_CUDA
  GstZcMemoryPrivate *priv = root_of (mem)->priv;
  auto s = (cudaStream_t) stream;
  if (priv->type == GST_ZC_MEMORY_TYPE_SYSTEM)
    return FALSE;

  std::lock_guard < std::mutex > lk (priv->lock);
  gst_zc::DeviceScope scope (priv->device_id);
  if (!scope.ok ())
    return FALSE;
  /* Without concurrent managed access the CPU may not touch memory attached
   * to a stream with work queued: hand it back to the host once done. */
  if (priv->type == GST_ZC_MEMORY_TYPE_MANAGED && !priv->concurrent_managed &&
      !GST_ZC_CUDA_OK (cudaStreamAttachMemAsync (s, priv->host, 0,
              cudaMemAttachHost)))
    return FALSE;
  if (!GST_ZC_CUDA_OK (cudaEventRecord (priv->fence, s)))
    return FALSE;
  priv->fence_pending = true;
  return TRUE;
#else
  (void) mem;
  (void) stream;
  return FALSE;
#endif
}

/* ---------------------------------------------------------------------- */
/* GstAllocator                                                           */
/* ---------------------------------------------------------------------- */

/* Managed memory on a device that prefetches, and device memory, need a
 * stream for the CPU map's transfers; the allocator owns it so it outlives
 * its memories. */
static gboolean
ensure_transfer_stream (GstZcAllocator * self)
{
#if GST_ZC_HAVE_CUDA
  bool needs = self->memory_type == GST_ZC_MEMORY_TYPE_DEVICE ||
      (self->memory_type == GST_ZC_MEMORY_TYPE_MANAGED &&
      gst_zc_context_has_concurrent_managed_access (self->context));
  if (self->transfer_stream || !needs)
    return TRUE;
  gst_zc::DeviceScope scope (gst_zc_context_get_device_id (self->context));
  return scope.ok () &&
      GST_ZC_CUDA_OK (cudaStreamCreateWithFlags (&self->transfer_stream,
          cudaStreamNonBlocking));
#else
  (void) self;
  return TRUE;
#endif
}

static gboolean
ensure_context (GstZcAllocator * self)
{
  std::lock_guard < std::mutex > lk (*self->lock);
  if (self->context)
    return TRUE;
  GError *err = NULL;
  self->context = gst_zc_context_new (-1, &err);
  if (!self->context) {
    GST_ERROR_OBJECT (self, "no context: %s", err ? err->message : "?");
    g_clear_error (&err);
    return FALSE;
  }
  self->memory_type = gst_zc_context_resolve_memory_type (self->context,
      self->memory_type);
  if (!ensure_transfer_stream (self))
    return FALSE;
  GST_INFO_OBJECT (self, "default allocator opened %s, memory %s",
      gst_zc_context_get_device_name (self->context),
      gst_zc_memory_type_to_string (self->memory_type));
  return TRUE;
}

static GstMemory *
gst_zc_allocator_alloc (GstAllocator * allocator, gsize size,
    GstAllocationParams * params)
{
  auto *self = GST_ZC_ALLOCATOR (allocator);

  if (self->lazy && !ensure_context (self))
    return NULL;

  gsize align = params->align | ZC_MIN_ALIGN_MASK;
  gsize maxsize, bytes;
  /* prefix + size + padding, then room to align the data start */
  if (!g_size_checked_add (&maxsize, params->prefix, size) ||
      !g_size_checked_add (&maxsize, maxsize, params->padding) ||
      !g_size_checked_add (&bytes, maxsize, align) ||
      bytes > (gsize) G_MAXSSIZE) {
    GST_WARNING_OBJECT (self, "allocation of %" G_GSIZE_FORMAT " bytes "
        "(prefix %" G_GSIZE_FORMAT ", padding %" G_GSIZE_FORMAT
        ") overflows", size, params->prefix, params->padding);
    return NULL;
  }

  auto *priv = new (std::nothrow) GstZcMemoryPrivate;
  if (!priv)
    return NULL;
  priv->type = self->memory_type;
  priv->device_id = gst_zc_context_get_device_id (self->context);
  priv->concurrent_managed =
      gst_zc_context_has_concurrent_managed_access (self->context);

  if (!raw_alloc (priv, bytes)) {
    GST_WARNING_OBJECT (self, "could not allocate %" G_GSIZE_FORMAT
        " bytes of %s memory", bytes,
        gst_zc_memory_type_to_string (priv->type));
    delete priv;
    return NULL;
  }

  /* Align the data start (block + prefix), not the block start */
  guintptr base = (guintptr) priv->alloc_base;
  guintptr data = (base + params->prefix + align) & ~(guintptr) align;
  priv->host = (guint8 *) (data - params->prefix);
  priv->device = priv->host;
  priv->block_size = maxsize;
  /* device memory has no CPU address; maps go through staging */
  if (priv->type == GST_ZC_MEMORY_TYPE_DEVICE)
    priv->host = nullptr;

#if GST_ZC_HAVE_CUDA
  if (priv->type != GST_ZC_MEMORY_TYPE_SYSTEM) {
    gst_zc::DeviceScope scope (priv->device_id);
    if (priv->type == GST_ZC_MEMORY_TYPE_MAPPED) {
      /* With unified addressing the two match; without, offset the mapping */
      void *d = nullptr;
      if (GST_ZC_CUDA_OK (cudaHostGetDevicePointer (&d, priv->alloc_base, 0)))
        priv->device = (guint8 *) d + (priv->host - (guint8 *) priv->alloc_base);
    }
    if (!GST_ZC_CUDA_OK (cudaEventCreateWithFlags (&priv->fence,
                cudaEventDisableTiming | cudaEventBlockingSync))) {
      raw_free (priv);
      delete priv;
      return NULL;
    }
  }
#endif

  auto *mem = g_new0 (GstZcMemory, 1);
  mem->priv = priv;
  gst_memory_init (GST_MEMORY_CAST (mem), (GstMemoryFlags) params->flags,
      allocator, NULL, maxsize, align, params->prefix, size);

  if (priv->host) {
    if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
      memset (priv->host, 0, params->prefix);
    if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
      memset (priv->host + params->prefix + size, 0, params->padding);
  }
#if GST_ZC_HAVE_CUDA
  else {
    gst_zc::DeviceScope scope (priv->device_id);
    if (params->prefix && (params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED))
      GST_ZC_CUDA_OK (cudaMemset (priv->device, 0, params->prefix));
    if (params->padding && (params->flags & GST_MEMORY_FLAG_ZERO_PADDED))
      GST_ZC_CUDA_OK (cudaMemset (priv->device + params->prefix + size, 0,
              params->padding));
  }
#endif

  GST_LOG_OBJECT (self, "%p: %" G_GSIZE_FORMAT " bytes of %s memory, "
      "host %p device %p", mem, size,
      gst_zc_memory_type_to_string (priv->type), priv->host, priv->device);
  return GST_MEMORY_CAST (mem);
}

#if GST_ZC_HAVE_CUDA
static void
release_thread_main (GstZcAllocator * self, ReleaseQueue * q)
{
  std::unique_lock < std::mutex > lk (q->lock);
  for (;;) {
    q->wake.wait (lk,[q] {
          return q->stop || !q->pending.empty ();
        });
    if (q->pending.empty ())
      break;                    /* stopping, and everything given back */
    PendingRelease p = q->pending.front ();
    q->pending.pop_front ();
    q->busy = true;
    lk.unlock ();
    {
      gst_zc::DeviceScope scope (p.device_id);
      GST_ZC_CUDA_OK (cudaEventSynchronize (p.fence));
    }
    {
      std::lock_guard < std::mutex > alk (*self->lock);
      self->spare_fences->push_back (p.fence);
    }
    p.release (p.release_data);
    lk.lock ();
    q->busy = false;
    if (q->pending.empty ())
      q->drained.notify_all ();
  }
}

/* Hands @p to the release thread, which is started on first use */
static void
defer_release (GstZcAllocator * self, const PendingRelease & p)
{
  ReleaseQueue *q;
  {
    std::lock_guard < std::mutex > alk (*self->lock);
    if (!self->releases) {
      self->releases = new ReleaseQueue;
      self->releases->thread = std::thread (release_thread_main, self,
          self->releases);
    }
    q = self->releases;
  }
  std::lock_guard < std::mutex > lk (q->lock);
  q->pending.push_back (p);
  q->wake.notify_one ();
}
#endif

static void
gst_zc_allocator_free (GstAllocator *, GstMemory * memory)
{
  auto *mem = (GstZcMemory *) memory;

  if (!memory->parent) {
    GstZcMemoryPrivate *priv = mem->priv;
#if GST_ZC_HAVE_CUDA
    if (priv->fence) {
      gst_zc::DeviceScope scope (priv->device_id);
      auto *alloc = (GstZcAllocator *) memory->allocator;
      /* Memory goes back only when no buffer holds it; the GPU may still be
       * reading it for the last user. Bytes of another owner go back on
       * the release thread once that is done; our own blocks wait here,
       * before they are freed. */
      if (priv->release && priv->fence_pending) {
        defer_release (alloc, {priv->fence, priv->device_id, priv->release,
                priv->release_data});
        priv->release = nullptr;
      } else if (priv->release) {
        std::lock_guard < std::mutex > lk (*alloc->lock);
        alloc->spare_fences->push_back (priv->fence);
      } else {
        if (priv->fence_pending)
          GST_ZC_CUDA_OK (cudaEventSynchronize (priv->fence));
        GST_ZC_CUDA_OK (cudaEventDestroy (priv->fence));
      }
    }
#endif
    raw_free (priv);
    if (priv->release)
      priv->release (priv->release_data);
    delete priv;
  }
  g_free (mem);
}

#if GST_ZC_HAVE_CUDA
/* Device memory seen by the CPU: after the fence, the block is copied into
 * a pinned staging buffer that the memory keeps (allocated at its first
 * map, so not per frame once a pool is warm). */
static gpointer
map_device_memory (GstZcMemory * root)
{
  GstZcMemoryPrivate *priv = root->priv;
  auto *alloc = (GstZcAllocator *) root->mem.allocator;
  cudaStream_t ts = alloc->transfer_stream;

  std::lock_guard < std::mutex > lk (priv->lock);
  gst_zc::DeviceScope scope (priv->device_id);
  if (!scope.ok ())
    return NULL;
  if (!priv->staging &&
      !GST_ZC_CUDA_OK (cudaHostAlloc (&priv->staging, priv->block_size,
              cudaHostAllocPortable)))
    return NULL;
  if (priv->fence_pending &&
      !GST_ZC_CUDA_OK (cudaStreamWaitEvent (ts, priv->fence, 0)))
    return NULL;
  if (!GST_ZC_CUDA_OK (cudaMemcpyAsync (priv->staging, priv->device,
              priv->block_size, cudaMemcpyDeviceToHost, ts)) ||
      !GST_ZC_CUDA_OK (cudaEventRecord (priv->fence, ts)) ||
      !GST_ZC_CUDA_OK (cudaEventSynchronize (priv->fence)))
    return NULL;
  priv->fence_pending = false;
  return priv->staging;
}

/* A write map of device memory goes back at unmap; the fence orders the
 * next GPU user after the copy, without blocking here. */
static void
unmap_device_memory (GstZcMemory * root)
{
  GstZcMemoryPrivate *priv = root->priv;
  auto *alloc = (GstZcAllocator *) root->mem.allocator;
  cudaStream_t ts = alloc->transfer_stream;

  std::lock_guard < std::mutex > lk (priv->lock);
  gst_zc::DeviceScope scope (priv->device_id);
  if (scope.ok () &&
      GST_ZC_CUDA_OK (cudaMemcpyAsync (priv->device, priv->staging,
              priv->block_size, cudaMemcpyHostToDevice, ts)) &&
      GST_ZC_CUDA_OK (cudaEventRecord (priv->fence, ts)))
    priv->fence_pending = true;
}
#endif

static gpointer
gst_zc_memory_map_full (GstMemory * memory, GstMapInfo * info, gsize)
{
  auto *mem = (GstZcMemory *) memory;
  GstZcMemory *root = root_of (mem);
  (void) info;

#if GST_ZC_HAVE_CUDA
  if (root->priv->type == GST_ZC_MEMORY_TYPE_DEVICE) {
    gpointer p = map_device_memory (root);
    if (!p)
      GST_ERROR ("%p: could not copy device memory for the CPU", memory);
    return p;
  }
#endif
  if (!gst_zc_memory_wait_cpu (mem)) {
    GST_ERROR ("%p: GPU work on this memory failed; refusing the CPU map",
        memory);
    return NULL;
  }
  return root->priv->host;
}

static void
gst_zc_memory_unmap_full (GstMemory * memory, GstMapInfo * info)
{
#if GST_ZC_HAVE_CUDA
  GstZcMemory *root = root_of ((GstZcMemory *) memory);
  if (root->priv->type == GST_ZC_MEMORY_TYPE_DEVICE &&
      (info->flags & GST_MAP_WRITE))
    unmap_device_memory (root);
#else
  (void) memory;
  (void) info;
#endif
}

static GstMemory *
gst_zc_memory_share (GstMemory * memory, gssize offset, gssize size)
{
  auto *mem = (GstZcMemory *) memory;
  GstMemory *parent = memory->parent ? memory->parent : memory;

  if (size == -1)
    size = memory->size - offset;

  auto *sub = g_new0 (GstZcMemory, 1);
  sub->priv = root_of (mem)->priv;
  gst_memory_init (GST_MEMORY_CAST (sub),
      (GstMemoryFlags) (GST_MINI_OBJECT_FLAGS (parent) |
          GST_MINI_OBJECT_FLAG_LOCK_READONLY), memory->allocator, parent,
      memory->maxsize, memory->align, memory->offset + offset, size);
  return GST_MEMORY_CAST (sub);
}

static gboolean
gst_zc_memory_is_span (GstMemory * mem1, GstMemory * mem2, gsize * offset)
{
  if (mem1->parent != mem2->parent || !mem1->parent)
    return FALSE;
  if (offset)
    *offset = mem1->offset - mem1->parent->offset;
  return mem1->offset + mem1->size == mem2->offset;
}

static void
gst_zc_allocator_finalize (GObject * object)
{
  auto *self = GST_ZC_ALLOCATOR (object);

#if GST_ZC_HAVE_CUDA
  if (self->releases) {
    {
      std::lock_guard < std::mutex > lk (self->releases->lock);
      self->releases->stop = true;
      self->releases->wake.notify_one ();
    }
    self->releases->thread.join ();
    delete self->releases;
  }
  if (self->transfer_stream || !self->spare_fences->empty ()) {
    gst_zc::DeviceScope scope (gst_zc_context_get_device_id (self->context));
    if (self->transfer_stream)
      GST_ZC_CUDA_OK (cudaStreamDestroy (self->transfer_stream));
    for (cudaEvent_t e : *self->spare_fences)
      GST_ZC_CUDA_OK (cudaEventDestroy (e));
  }
  delete self->spare_fences;
#endif
  gst_clear_object (&self->context);
  delete self->lock;

  G_OBJECT_CLASS (gst_zc_allocator_parent_class)->finalize (object);
}

static void
gst_zc_allocator_class_init (GstZcAllocatorClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstAllocatorClass *alloc_class = GST_ALLOCATOR_CLASS (klass);

  gobject_class->finalize = gst_zc_allocator_finalize;
  alloc_class->alloc = gst_zc_allocator_alloc;
  alloc_class->free = gst_zc_allocator_free;
}

static void
gst_zc_allocator_init (GstZcAllocator * self)
{
  GstAllocator *alloc = GST_ALLOCATOR_CAST (self);

  self->lock = new std::mutex;
#if GST_ZC_HAVE_CUDA
  self->spare_fences = new std::vector < cudaEvent_t >;
  self->releases = nullptr;
#endif
  alloc->mem_type = GST_ZC_ALLOCATOR_NAME;
  alloc->mem_map_full = gst_zc_memory_map_full;
  alloc->mem_unmap_full = gst_zc_memory_unmap_full;
  alloc->mem_share = gst_zc_memory_share;
  alloc->mem_is_span = gst_zc_memory_is_span;
  /* mem_copy stays GStreamer's fallback: it maps (so waits on the fence),
   * allocates from this allocator and copies on the CPU. */
}

/**
 * gst_zc_allocator_new:
 * @context: (nullable): the device to allocate for; %NULL opens the first
 *   device (or the CPU backend) on the first allocation
 * @memory_type: the memory to allocate; %GST_ZC_MEMORY_TYPE_AUTO is resolved
 *   for @context's device
 *
 * Returns: (transfer full) (nullable): a new allocator, or %NULL when
 *   @memory_type needs a GPU that @context does not have
 */
GstAllocator *
gst_zc_allocator_new (GstZcContext * context, GstZcMemoryType memory_type)
{
  g_return_val_if_fail (context == NULL || GST_IS_ZC_CONTEXT (context), NULL);

  g_type_ensure (GST_TYPE_ZC_ALLOCATOR);
  if (context) {
    memory_type = gst_zc_context_resolve_memory_type (context, memory_type);
    if (memory_type != GST_ZC_MEMORY_TYPE_SYSTEM &&
        !gst_zc_context_has_gpu (context)) {
      GST_WARNING ("%s memory needs a CUDA device; %s",
          gst_zc_memory_type_to_string (memory_type),
          gst_zc_context_get_no_gpu_reason (context));
      return NULL;
    }
  }

  auto *self = (GstZcAllocator *) g_object_new (GST_TYPE_ZC_ALLOCATOR, NULL);
  gst_object_ref_sink (self);
  self->memory_type = memory_type;
  if (context) {
    self->context = (GstZcContext *) gst_object_ref (context);
  } else {
    self->lazy = TRUE;
  }

  if (context && !ensure_transfer_stream (self)) {
    gst_object_unref (self);
    return NULL;
  }
  return GST_ALLOCATOR_CAST (self);
}

/**
 * gst_zc_allocator_get_context:
 * @allocator: a #GstZcAllocator
 *
 * Returns: (transfer none) (nullable): the allocator's context, %NULL for the
 *   default allocator before its first allocation
 */
GstZcContext *
gst_zc_allocator_get_context (GstZcAllocator * allocator)
{
  g_return_val_if_fail (GST_IS_ZC_ALLOCATOR (allocator), NULL);
  return allocator->context;
}

/**
 * gst_zc_allocator_get_memory_type:
 * @allocator: a #GstZcAllocator
 *
 * Returns: the type of memory @allocator hands out
 */
GstZcMemoryType
gst_zc_allocator_get_memory_type (GstZcAllocator * allocator)
{
  g_return_val_if_fail (GST_IS_ZC_ALLOCATOR (allocator),
      GST_ZC_MEMORY_TYPE_AUTO);
  return allocator->memory_type;
}

/**
 * gst_zc_memory_init_once:
 *
 * Registers the default allocator as #GST_ZC_ALLOCATOR_NAME. It opens the
 * first CUDA device (or the CPU backend) at its first allocation, not here.
 * Safe to call more than once.
 */
void
gst_zc_memory_init_once (void)
{
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
    GstAllocator *alloc = gst_zc_allocator_new (NULL, GST_ZC_MEMORY_TYPE_AUTO);
    GST_OBJECT_FLAG_SET (alloc, GST_OBJECT_FLAG_MAY_BE_LEAKED);
    gst_allocator_register (GST_ZC_ALLOCATOR_NAME, alloc);
    g_once_init_leave (&done, 1);
  }
}

/**
 * gst_is_zc_memory:
 * @mem: (nullable): a #GstMemory
 *
 * Returns: whether @mem is a #GstZcMemory
 */
gboolean
gst_is_zc_memory (GstMemory * mem)
{
  return mem && mem->allocator && GST_IS_ZC_ALLOCATOR (mem->allocator);
}

/**
 * gst_zc_buffer_is_zc:
 * @buffer: a #GstBuffer
 * @context: the context of the element asking
 *
 * Returns: whether every memory of @buffer is a #GstZcMemory that @context's
 *   device (or, for the CPU backend, the CPU) can work on directly: GPU
 *   memory of that very device, or system memory for the CPU backend
 */
gboolean
gst_zc_buffer_is_zc (GstBuffer * buffer, GstZcContext * context)
{
  guint n = gst_buffer_n_memory (buffer);
  gint dev = gst_zc_context_get_device_id (context);
  gboolean gpu = gst_zc_context_has_gpu (context);

  if (n == 0)
    return FALSE;
  for (guint i = 0; i < n; i++) {
    GstMemory *m = gst_buffer_peek_memory (buffer, i);
    if (!gst_is_zc_memory (m))
      return FALSE;
    GstZcMemoryPrivate *priv = root_of ((GstZcMemory *) m)->priv;
    if (gpu) {
      /* Portable pinned memory is addressable from every device, but its
       * fence is an event of the device it was allocated for, and events
       * are recorded on streams of their own device only. */
      if (priv->type == GST_ZC_MEMORY_TYPE_SYSTEM || priv->device_id != dev)
        return FALSE;
    } else if (priv->type != GST_ZC_MEMORY_TYPE_SYSTEM) {
      return FALSE;
    }
  }
  return TRUE;
}

/**
 * gst_zc_memory_get_device_pointer:
 * @mem: (type Gst.Memory): a #GstZcMemory
 *
 * The address kernels use for the memory's first byte (its offset applied).
 * For system memory, the host address. Order GPU work on it with
 * gst_zc_memory_prepare_gpu() and gst_zc_memory_set_gpu_fence().
 *
 * Returns: (transfer none): the device address
 */
gpointer
gst_zc_memory_get_device_pointer (GstZcMemory * mem)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), NULL);
  return root_of (mem)->priv->device + mem->mem.offset;
}

/**
 * gst_zc_memory_get_host_pointer:
 * @mem: (type Gst.Memory): a #GstZcMemory
 *
 * The CPU address of the memory's first byte, without any fence wait: only
 * for callers that order access themselves. Others map the memory.
 *
 * Returns: (transfer none) (nullable): the host address, %NULL for device
 *   memory (the CPU reaches it only by mapping)
 */
gpointer
gst_zc_memory_get_host_pointer (GstZcMemory * mem)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), NULL);
  guint8 *host = root_of (mem)->priv->host;
  return host ? host + mem->mem.offset : NULL;
}

/**
 * gst_zc_memory_get_memory_type:
 * @mem: (type Gst.Memory): a #GstZcMemory
 *
 * Returns: the type of @mem (never %GST_ZC_MEMORY_TYPE_AUTO)
 */
GstZcMemoryType
gst_zc_memory_get_memory_type (GstZcMemory * mem)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem),
      GST_ZC_MEMORY_TYPE_AUTO);
  return root_of (mem)->priv->type;
}

/**
 * gst_zc_memory_get_device_id:
 * @mem: (type Gst.Memory): a #GstZcMemory
 *
 * Returns: the CUDA device @mem was allocated for, -1 for system memory
 */
gint
gst_zc_memory_get_device_id (GstZcMemory * mem)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), -1);
  return root_of (mem)->priv->device_id;
}

/**
 * gst_zc_memory_get_context:
 * @mem: (type Gst.Memory): a #GstZcMemory
 *
 * Returns: (transfer none): the context of the allocator of @mem
 */
GstZcContext *
gst_zc_memory_get_context (GstZcMemory * mem)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), NULL);
  return ((GstZcAllocator *) mem->mem.allocator)->context;
}

/**
 * gst_zc_allocator_wait_released:
 * @allocator: a #GstZcAllocator
 *
 * Waits until every memory of gst_zc_memory_new_wrapped() that no buffer
 * holds any more has been given back to its owner. Those go back once the
 * GPU work fenced on them is done, on a thread of the allocator; an
 * element that stops calls this so that no frame of its upstream stays
 * held after it.
 */
void
gst_zc_allocator_wait_released (GstAllocator * allocator)
{
  g_return_if_fail (GST_IS_ZC_ALLOCATOR (allocator));
#if GST_ZC_HAVE_CUDA
  auto *self = GST_ZC_ALLOCATOR (allocator);
  ReleaseQueue *q;
  {
    std::lock_guard < std::mutex > alk (*self->lock);
    q = self->releases;
  }
  if (!q)
    return;
  std::unique_lock < std::mutex > lk (q->lock);
  q->drained.wait (lk,[q] {
        return q->pending.empty () && !q->busy;
      });
#endif
}

/**
 * gst_zc_memory_new_wrapped:
 * @allocator: a #GstZcAllocator of mapped or device memory, with a context
 * @host: (nullable): the CPU address of the bytes (mapped memory), %NULL
 *   for device memory
 * @device: the GPU address of the same bytes, on @allocator's device
 * @size: how many bytes
 * @read_only: whether users may only read the bytes (the memory is then
 *   #GST_MEMORY_FLAG_READONLY)
 * @user_data: passed to @notify
 * @notify: called once no buffer holds the memory and the GPU work fenced
 *   on it is done: the bytes go back to their owner then. When that work
 *   was still running as the last buffer let go, @notify is called on the
 *   allocator's release thread (gst_zc_allocator_wait_released())
 *
 * Wraps bytes that are not this library's allocation but that the GPU can
 * address (host memory registered with CUDA, another library's device
 * memory) as a #GstZcMemory of @allocator's type, with a fence like any
 * other: kernels, copies and CPU maps treat it as their own memory. Its
 * fence event comes from the allocator's spares, so wrapping a frame per
 * frame creates no CUDA object once the first frames have gone.
 *
 * Returns: (transfer full) (nullable): the memory, or %NULL (a CUDA error,
 *   logged; @notify is not called then)
 */
GstMemory *
gst_zc_memory_new_wrapped (GstAllocator * allocator, gpointer host,
    gpointer device, gsize size, gboolean read_only, gpointer user_data,
    GDestroyNotify notify)
{
  g_return_val_if_fail (GST_IS_ZC_ALLOCATOR (allocator), NULL);
  auto *self = GST_ZC_ALLOCATOR (allocator);
  g_return_val_if_fail (self->context != NULL, NULL);
  g_return_val_if_fail (self->memory_type == GST_ZC_MEMORY_TYPE_MAPPED ||
      self->memory_type == GST_ZC_MEMORY_TYPE_DEVICE, NULL);
  g_return_val_if_fail ((host != NULL) ==
      (self->memory_type == GST_ZC_MEMORY_TYPE_MAPPED), NULL);
  g_return_val_if_fail (device != NULL && notify != NULL, NULL);

#if GST_ZC_HAVE_CUDA
  auto *priv = new (std::nothrow) GstZcMemoryPrivate;
  if (!priv)
    return NULL;
  priv->type = self->memory_type;
  priv->device_id = gst_zc_context_get_device_id (self->context);
  priv->host = (guint8 *) host;
  priv->device = (guint8 *) device;
  priv->block_size = size;
  {
    std::lock_guard < std::mutex > lk (*self->lock);
    if (!self->spare_fences->empty ()) {
      priv->fence = self->spare_fences->back ();
      self->spare_fences->pop_back ();
    }
  }
  if (!priv->fence) {
    gst_zc::DeviceScope scope (priv->device_id);
    if (!scope.ok () ||
        !GST_ZC_CUDA_OK (cudaEventCreateWithFlags (&priv->fence,
                cudaEventDisableTiming | cudaEventBlockingSync))) {
      delete priv;
      return NULL;
    }
  }
  priv->release = notify;
  priv->release_data = user_data;

  auto *mem = g_new0 (GstZcMemory, 1);
  mem->priv = priv;
  gst_memory_init (GST_MEMORY_CAST (mem), read_only ? GST_MEMORY_FLAG_READONLY :
      (GstMemoryFlags) 0, allocator, NULL, size, 0, 0, size);
  GST_LOG_OBJECT (self, "%p: wraps %" G_GSIZE_FORMAT " bytes, host %p "
      "device %p%s", mem, size, host, device, read_only ? ", read-only" : "");
  return GST_MEMORY_CAST (mem);
#else
  (void) host;
  (void) size;
  (void) read_only;
  (void) user_data;
  return NULL;
#endif
}

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:gstzcallocator
 * @title: GstZcAllocator
 * @short_description: the allocator of #GstZcMemory
 *
 * A #GstZcAllocator allocates #GstZcMemory of one #GstZcMemoryType on the
 * device of one #GstZcContext, made by gst_zc_allocator_new(), or, for the
 * default allocator registered as #GST_ZC_ALLOCATOR_NAME, on the first
 * device, opened at its first allocation. It honours #GstAllocationParams
 * (alignment, prefix, padding) and wraps bytes it did not allocate
 * (gst_zc_memory_new_wrapped()) as memory with a fence like its own.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcmemory-private.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <new>
#include <thread>
#include <vector>
#include <string.h>

#define GST_CAT_DEFAULT gst_zc_memory_debug

/* Data starts on this boundary at least, whatever the caller asks: one
 * coalesced 128-byte line, and the 16-byte vectors the kernels load. */
#define ZC_MIN_ALIGN_MASK 255

#if GST_ZC_HAVE_CUDA
/* A wrapped memory whose last user let go while the GPU may still read
 * it: its owner gets the bytes back once the fence is done. */
struct PendingRelease
{
  cudaEvent_t fence;
  int device_id;
  GDestroyNotify release;
  gpointer release_data;
  /* the fence was a freed memory's: a spare once done (else it stays with
   * the memory that still lives, gst_zc_memory_when_idle()) */
  bool spare_fence;
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
  /* blocks are memfd pages (gst_zc_allocator_new_shareable()) */
  gboolean shareable;
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
 * before the first instance (and so the class) exists; the memory unit logs
 * in it too, and no memory exists before this type does. */
G_DEFINE_TYPE_WITH_CODE (GstZcAllocator, gst_zc_allocator, GST_TYPE_ALLOCATOR,
    GST_DEBUG_CATEGORY_INIT (gst_zc_memory_debug, "zcmemory", 0,
        "zero-copy CUDA memory"));

/* The one check of a memory type against a context, for gst_zc_allocator_new()
 * and the default allocator's first allocation: resolves
 * %GST_ZC_MEMORY_TYPE_AUTO into @memory_type and says whether the device can
 * have that memory. */
static gboolean
check_memory_type (GstZcContext * context, GstZcMemoryType * memory_type)
{
  GstZcMemoryType type =
      gst_zc_context_resolve_memory_type (context, *memory_type);

  if (type != GST_ZC_MEMORY_TYPE_SYSTEM && !gst_zc_context_has_gpu (context)) {
    GST_WARNING ("%s memory needs a CUDA device; %s",
        gst_zc_memory_type_to_string (type),
        gst_zc_context_get_no_gpu_reason (context));
    return FALSE;
  }
  if (type == GST_ZC_MEMORY_TYPE_MAPPED &&
      !gst_zc_context_can_map_host_memory (context)) {
    GST_WARNING ("%s cannot map pinned host memory: no mapped memory",
        gst_zc_context_get_device_name (context));
    return FALSE;
  }
  *memory_type = type;
  return TRUE;
}

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
      GST_ZC_CUDA_OK_OR_FAULT (STREAM,
      cudaStreamCreateWithFlags (&self->transfer_stream,
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
  if (!check_memory_type (self->context, &self->memory_type) ||
      !ensure_transfer_stream (self)) {
    /* no allocation may pass the check later on this context */
    gst_clear_object (&self->context);
    return FALSE;
  }
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
  priv->shareable = self->shareable;
#if GST_ZC_HAVE_CUDA
  priv->transfer_stream = self->transfer_stream;
#endif

  if (!gst_zc_memory_alloc_block (priv, bytes)) {
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
    if (!GST_ZC_CUDA_OK_OR_FAULT (EVENT, cudaEventCreateWithFlags (&priv->fence,
                cudaEventDisableTiming | cudaEventBlockingSync))) {
      gst_zc_memory_note_cuda_failure (priv->type, 0);
      gst_zc_memory_free_block (priv);
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
      /* no frame's trip waits on a release: sleep at once rather than
       * poll (gst_zc_fence_wait()) and take a poller's CPU */
      gst_zc::DeviceScope scope (p.device_id);
      GST_ZC_CUDA_OK (cudaEventSynchronize (p.fence));
    }
    if (p.spare_fence) {
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
                priv->release_data, true});
        priv->release = nullptr;
      } else if (priv->release) {
        std::lock_guard < std::mutex > lk (*alloc->lock);
        alloc->spare_fences->push_back (priv->fence);
      } else {
        if (priv->fence_pending)
          GST_ZC_CUDA_OK (gst_zc_fence_wait (priv->fence));
        GST_ZC_CUDA_OK (cudaEventDestroy (priv->fence));
      }
    }
#endif
    gst_zc_memory_free_block (priv);
    if (priv->release)
      priv->release (priv->release_data);
    delete priv;
  }
  g_free (mem);
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
 * Makes an allocator, the only way there is: @memory_type is resolved with
 * gst_zc_context_resolve_memory_type() and checked against the device, so
 * that every type but %GST_ZC_MEMORY_TYPE_SYSTEM needs a GPU, and
 * %GST_ZC_MEMORY_TYPE_MAPPED one that can map pinned host memory
 * (gst_zc_context_can_map_host_memory()). Every call makes a new object;
 * each memory it hands out holds a reference to it.
 *
 * Returns: (transfer full) (nullable): a new allocator, or %NULL when
 *   @context's device cannot have @memory_type or a CUDA call failed
 *   (logged)
 */
GstAllocator *
gst_zc_allocator_new (GstZcContext * context, GstZcMemoryType memory_type)
{
  g_return_val_if_fail (context == NULL || GST_IS_ZC_CONTEXT (context), NULL);

  g_type_ensure (GST_TYPE_ZC_ALLOCATOR);
  if (context && !check_memory_type (context, &memory_type))
    return NULL;

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
 * gst_zc_allocator_new_shareable:
 * @context: the device to allocate for
 * @memory_type: %GST_ZC_MEMORY_TYPE_MAPPED or %GST_ZC_MEMORY_TYPE_SYSTEM
 *   (%GST_ZC_MEMORY_TYPE_AUTO where it resolves to one of them)
 *
 * Like gst_zc_allocator_new(), for memory that other processes can map:
 * each block is the pages of an anonymous file (memfd), mapped here and,
 * for mapped memory, registered with CUDA (`cudaHostRegister`) once, when
 * it is allocated. gst_zc_memory_get_fd() gives the file, which
 * `unixfdsink` (GStreamer 1.24) passes to another process. Managed and
 * device memory cannot be shared so.
 *
 * Returns: (transfer full) (nullable): a new allocator, or %NULL where
 *   @memory_type is not host memory, or gst_zc_allocator_new() fails
 */
GstAllocator *
gst_zc_allocator_new_shareable (GstZcContext * context,
    GstZcMemoryType memory_type)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), NULL);
  GstZcMemoryType type = gst_zc_context_resolve_memory_type (context,
      memory_type);
  if (type != GST_ZC_MEMORY_TYPE_MAPPED && type != GST_ZC_MEMORY_TYPE_SYSTEM)
    return NULL;
  GstAllocator *allocator = gst_zc_allocator_new (context, type);
  if (allocator)
    GST_ZC_ALLOCATOR (allocator)->shareable = TRUE;
  return allocator;
}

/**
 * gst_zc_allocator_is_shareable:
 * @allocator: a #GstZcAllocator
 *
 * Returns: whether @allocator was made by gst_zc_allocator_new_shareable()
 */
gboolean
gst_zc_allocator_is_shareable (GstZcAllocator * allocator)
{
  g_return_val_if_fail (GST_IS_ZC_ALLOCATOR (allocator), FALSE);
  return allocator->shareable;
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

/* With the allocator, not the memory: the context is the allocator's */
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

/* Calls @notify (@data) once the GPU work fenced on @memory (a memory of
 * gst_zc_memory_new_wrapped()) is done: at once when none is pending, else
 * on the allocator's release thread, the fence staying the memory's. For a
 * wrapper kept and handed out again (gstzcforeign), whose original goes
 * back to its owner per frame. */
void
gst_zc_memory_when_idle (GstMemory * memory, GDestroyNotify notify,
    gpointer data)
{
#if GST_ZC_HAVE_CUDA
  GstZcMemoryPrivate *priv = ((GstZcMemory *) memory)->priv;
  cudaEvent_t fence = nullptr;
  if (priv->fence) {
    std::lock_guard < std::mutex > lk (priv->lock);
    if (priv->fence_pending) {
      gst_zc::DeviceScope scope (priv->device_id);
      if (cudaEventQuery (priv->fence) == cudaErrorNotReady)
        fence = priv->fence;
      cudaGetLastError ();
    }
  }
  if (fence) {
    defer_release ((GstZcAllocator *) memory->allocator, {fence,
            priv->device_id, notify, data, false});
    return;
  }
#else
  (void) memory;
#endif
  notify (data);
}

/**
 * gst_zc_memory_new_wrapped:
 * @allocator: a #GstZcAllocator of mapped, device or system memory, with a
 *   context
 * @host: (nullable): the CPU address of the bytes (mapped and system
 *   memory), %NULL for device memory
 * @device: (nullable): the GPU address of the same bytes, on @allocator's
 *   device; %NULL for system memory (the CPU backend's, which no GPU reads)
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
 * frame creates no CUDA object once the first frames have gone. System
 * memory has no fence: @notify runs as the last buffer lets go.
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
  const GstZcMemoryType type = self->memory_type;
  g_return_val_if_fail (type == GST_ZC_MEMORY_TYPE_MAPPED ||
      type == GST_ZC_MEMORY_TYPE_DEVICE || type == GST_ZC_MEMORY_TYPE_SYSTEM,
      NULL);
  g_return_val_if_fail ((host != NULL) == (type != GST_ZC_MEMORY_TYPE_DEVICE),
      NULL);
  g_return_val_if_fail ((device != NULL) == (type != GST_ZC_MEMORY_TYPE_SYSTEM),
      NULL);
  g_return_val_if_fail (notify != NULL, NULL);

  auto *priv = new (std::nothrow) GstZcMemoryPrivate;
  if (!priv)
    return NULL;
  priv->type = type;
  priv->device_id = gst_zc_context_get_device_id (self->context);
  priv->host = (guint8 *) host;
  priv->device = (guint8 *) (device ? device : host);
  priv->block_size = size;
#if GST_ZC_HAVE_CUDA
  priv->transfer_stream = self->transfer_stream;
  if (type != GST_ZC_MEMORY_TYPE_SYSTEM) {
    std::lock_guard < std::mutex > lk (*self->lock);
    if (!self->spare_fences->empty ()) {
      priv->fence = self->spare_fences->back ();
      self->spare_fences->pop_back ();
    }
  }
  if (type != GST_ZC_MEMORY_TYPE_SYSTEM && !priv->fence) {
    gst_zc::DeviceScope scope (priv->device_id);
    if (!scope.ok () ||
        !GST_ZC_CUDA_OK_OR_FAULT (EVENT, cudaEventCreateWithFlags (&priv->fence,
                cudaEventDisableTiming | cudaEventBlockingSync))) {
      delete priv;
      return NULL;
    }
  }
#endif
  priv->release = notify;
  priv->release_data = user_data;

  auto *mem = g_new0 (GstZcMemory, 1);
  mem->priv = priv;
  gst_memory_init (GST_MEMORY_CAST (mem), read_only ? GST_MEMORY_FLAG_READONLY :
      (GstMemoryFlags) 0, allocator, NULL, size, 0, 0, size);
  GST_LOG_OBJECT (self, "%p: wraps %" G_GSIZE_FORMAT " bytes, host %p "
      "device %p%s", mem, size, host, device, read_only ? ", read-only" : "");
  return GST_MEMORY_CAST (mem);
}

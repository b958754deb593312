/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:gstzcforeign
 * @title: Foreign memory
 * @short_description: frames from other allocators, used in place
 *
 * Two kinds of frames reach gst-zerocopy without being its own memory, and
 * both can be used where they are instead of being copied:
 *
 * - System memory of a producer that did not take our pool (a decoder with
 *   its own pool, imagefreeze, a network source). gst_zc_buffer_adopt_host()
 *   registers its pages with CUDA (`cudaHostRegister`) the first time its
 *   #GstMemory is seen, wraps it as a read-only memory, and keeps the
 *   registration on that memory until it is freed, so a pool that recycles
 *   its memory, or a source that repeats one frame, pays once. The bytes
 *   registered by the process at once are capped by the caller.
 * - Device memory of GStreamer's own CUDA elements (`memory:CUDAMemory`,
 *   nvcodec's decoders, cudaupload, cudaconvertscale). Where the library
 *   was built with gstreamer-cuda-1.0, gst_zc_buffer_import_cuda() wraps a
 *   GstCudaMemory of the same CUDA context as ours (the device's primary
 *   context, which gst_zc_context_get_cuda_context() hands to nvcodec) so
 *   kernels read it, or write it, where it is.
 *
 * Either way the result is a buffer of one #GstZcMemory with its own fence:
 * kernels, copies and CPU maps need nothing else. It holds the original
 * buffer, so the producer gets its memory back only after the GPU work
 * fenced on the wrapper is done.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcforeign.h"
#include "gstzcforeign-private.h"
#include "gstzcmemory.h"
#include "gstzcmemory-private.h"
#include "gstzcutils.h"
#include "gstzccuda-private.h"

#include <gst/video/video.h>
#include <iterator>
#include <map>
#include <mutex>
#include <unistd.h>

#if GST_ZC_HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudamemory.h>
#include <gst/cuda/gstcudabufferpool.h>
#endif

GST_DEBUG_CATEGORY_STATIC (gst_zc_foreign_debug);
#define GST_CAT_DEFAULT gst_zc_foreign_debug

static void
init_debug (void)
{
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_zc_foreign_debug, "zcforeign", 0,
        "zero-copy use of foreign memory");
    g_once_init_leave (&done, 1);
  }
}

/* The memory is the same bytes, so the metas tagged "memory", which a copy
 * without the memory leaves out, hold too. */
GstBuffer *
gst_zc_buffer_new_around (GstMemory * memory, GstBuffer * original)
{
  GstBuffer *out = gst_buffer_new ();
  gst_buffer_append_memory (out, memory);
  gst_buffer_copy_into (out, original, (GstBufferCopyFlags)
      (GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS |
          GST_BUFFER_COPY_META), 0, -1);
  GstVideoMeta *vm = gst_buffer_get_video_meta (original);
  if (vm && !gst_buffer_get_video_meta (out)) {
    GstVideoMeta *copy = gst_buffer_add_video_meta_full (out, vm->flags,
        vm->format, vm->width, vm->height, vm->n_planes, vm->offset,
        vm->stride);
#if GST_CHECK_VERSION(1, 18, 0)
    if (copy)
      copy->alignment = vm->alignment;
#else
    (void) copy;
#endif
  }
  return out;
}

#if GST_ZC_HAVE_CUDA
/* What a wrapper holds of the original until its fence is done */
struct ForeignHold
{
  GstBuffer *buffer;
  GstMemory *memory;
  GstMapInfo info;
};

static void
foreign_hold_release (gpointer data)
{
  auto *hold = static_cast < ForeignHold * >(data);
  gst_memory_unmap (hold->memory, &hold->info);
  gst_buffer_unref (hold->buffer);
  delete hold;
}

/* @mem, one memory of @buffer, mapped with @flags and held with @buffer;
 * NULL if it cannot be mapped so */
static ForeignHold *
hold_mapped (GstBuffer * buffer, GstMemory * mem, GstMapFlags flags)
{
  auto *hold = new ForeignHold;
  if (!gst_memory_map (mem, &hold->info, flags)) {
    delete hold;
    return NULL;
  }
  hold->buffer = gst_buffer_ref (buffer);
  hold->memory = mem;
  return hold;
}

/* A buffer of one wrapper (allocator's type) over @hold's bytes at @host
 * and @device, which releases @hold once its fence is done; on failure
 * @hold is released at once and NULL returned */
static GstBuffer *
wrap_held (GstAllocator * allocator, ForeignHold * hold, gpointer host,
    gpointer device, gboolean read_only)
{
  GstMemory *wrapper = gst_zc_memory_new_wrapped (allocator, host, device,
      hold->info.size, read_only, hold, foreign_hold_release);
  if (!wrapper) {
    foreign_hold_release (hold);
    return NULL;
  }
  return gst_zc_buffer_new_around (wrapper, hold->buffer);
}
#endif /* GST_ZC_HAVE_CUDA */

/* ---------------------------------------------------------------------- */
/* Host memory: cudaHostRegister, kept on the memory                      */
/* ---------------------------------------------------------------------- */

#if GST_ZC_HAVE_CUDA
/* One cudaHostRegister() call: a page-aligned span. CUDA refuses a page
 * registered twice, and two allocations of a heap often share a page, so a
 * memory whose pages lie wholly inside a span uses that span. It may do so
 * only while the memory the span was registered for lives: its pages then
 * hold live bytes of that memory, so the allocator cannot have given them
 * back to the system, and mapped new ones at the same address, since the
 * registration. A span lives while a memory uses it. A memory that shares
 * only some of its pages with a span is not registered (the copy engines
 * do not copy across two registrations): it is copied, and tried again the
 * next time it comes, when that span may be gone. */
struct HostSpan
{
  guint8 *start = nullptr;      /* page-aligned */
  gsize length = 0;
  guint8 *device = nullptr;     /* the GPU's address of start */
  guint users = 0;              /* memories whose bytes it covers */
  bool creator_alive = true;
};

/* What a memory holds (its qdata) */
struct Registration
{
  HostSpan *span = nullptr;     /* NULL: CUDA refused the pages */
  bool created = false;         /* the span was registered for this memory */
};

static std::mutex registration_lock;
/* under registration_lock: the spans by start; their bytes are counted,
 * under the same lock, by gst_zc_memory_count_registered() */
static std::map < guintptr, HostSpan * >host_spans;

static GQuark
registration_quark (void)
{
  static GQuark q = g_quark_from_static_string ("gst-zc-host-registration");
  return q;
}

/* Runs when the registered memory is freed, before its bytes are */
static void
registration_free (gpointer data)
{
  auto *r = static_cast < Registration * >(data);
  HostSpan *s = r->span;
  bool created = r->created;
  delete r;
  if (!s)
    return;
  std::lock_guard < std::mutex > lk (registration_lock);
  if (created)
    s->creator_alive = false;
  if (--s->users > 0)
    return;
  cudaError_t err = cudaHostUnregister (s->start);
  if (err != cudaSuccess && err != cudaErrorCudartUnloading)
    GST_ZC_CUDA_OK (err);
  /* runs on whatever thread freed the memory: leave no error behind for
   * that thread's next launch check */
  cudaGetLastError ();
  host_spans.erase ((guintptr) s->start);
  gst_zc_memory_count_registered (s->length, FALSE);
  GST_LOG ("unregistered %" G_GSIZE_FORMAT " bytes at %p", s->length,
      s->start);
  delete s;
}

/* Why a memory's pages could not be made GPU-visible */
enum class SpanResult
{
  OK,
  OVER_LIMIT,                   /* try again later: other memory may go */
  BUSY,                         /* shares pages with a span it may not use:
                                   try again later */
  FAILED,                       /* CUDA refused: copy this memory always */
};

/* Under registration_lock: the span for the pages [start, end) into @r,
 * registered unless a span already holds them all */
static SpanResult
cover_pages (guint8 * start, guint8 * end, guint64 max_bytes,
    Registration * r, gsize * registered_now)
{
  auto it = host_spans.upper_bound ((guintptr) start);
  if (it != host_spans.begin ()) {
    HostSpan *s = std::prev (it)->second;
    if (s->start + s->length > start) {
      if (s->start + s->length < end || !s->creator_alive) {
        GST_DEBUG ("pages at %p share a page with the registration at %p, "
            "which they cannot use: copied", start, s->start);
        return SpanResult::BUSY;
      }
      s->users++;
      r->span = s;
      return SpanResult::OK;
    }
  }
  if (it != host_spans.end () && it->second->start < end) {
    GST_DEBUG ("pages at %p share a page with the registration at %p, "
        "which they cannot use: copied", start, it->second->start);
    return SpanResult::BUSY;
  }

  gsize length = end - start;
  const guint64 registered = gst_zc_memory_get_registered_bytes ();
  if (registered + length > max_bytes) {
    GST_DEBUG ("not registering %" G_GSIZE_FORMAT " bytes: %"
        G_GUINT64_FORMAT " registered, limit %" G_GUINT64_FORMAT, length,
        registered, max_bytes);
    return SpanResult::OVER_LIMIT;
  }
  /* the process's cap on pinned memory (gst_zc_memory_set_pinned_limit()) */
  const guint64 cap = gst_zc_memory_get_pinned_limit ();
  const guint64 held = gst_zc_memory_get_pinned_bytes ();
  if (cap && held + length > cap) {
    GST_DEBUG ("not registering %" G_GSIZE_FORMAT " bytes: %"
        G_GUINT64_FORMAT " pinned, cap %" G_GUINT64_FORMAT, length, held, cap);
    return SpanResult::OVER_LIMIT;
  }
  /* Not cudaHostRegisterReadOnly: copies from pages registered with it can
   * fail with cudaErrorInvalidValue (docs/design.md). The wrapper is a
   * read-only GstMemory instead, which no kernel of ours writes. */
  unsigned flags = cudaHostRegisterMapped | cudaHostRegisterPortable;
  cudaError_t err = GST_ZC_FAULT_OR (HOST_REGISTER, cudaErrorMemoryAllocation,
      cudaHostRegister (start, length, flags));
  void *d = nullptr;
  if (err != cudaSuccess ||
      !GST_ZC_CUDA_OK (cudaHostGetDevicePointer (&d, start, 0))) {
    if (err == cudaSuccess)
      cudaHostUnregister (start);
    /* locked memory exhausted, or pages registered by someone else: this
     * memory is copied, and not tried again */
    GST_DEBUG ("cannot register %" G_GSIZE_FORMAT " bytes at %p: %s",
        length, start, cudaGetErrorName (err));
    cudaGetLastError ();
    return SpanResult::FAILED;
  }
  auto *s = new HostSpan;
  s->start = start;
  s->length = length;
  s->device = (guint8 *) d;
  s->users = 1;
  host_spans[(guintptr) start] = s;
  gst_zc_memory_count_registered (length, TRUE);
  r->span = s;
  r->created = true;
  if (registered_now)
    *registered_now = length;
  GST_DEBUG ("registered %" G_GSIZE_FORMAT " bytes at %p", length, start);
  return SpanResult::OK;
}
#endif

/**
 * gst_zc_buffer_adopt_host:
 * @mapped_allocator: a #GstZcAllocator of mapped memory: the wrapper's
 *   device and its fence's
 * @buffer: a frame in system memory that is not a #GstZcMemory
 * @max_registered_bytes: leave @buffer alone if registering it would take
 *   the bytes this process has registered at once beyond this
 * @registered_now: (out) (optional): the bytes this call registered, 0 if
 *   the memory was registered before
 *
 * Makes @buffer's system memory GPU-visible where it is: the first time its
 * #GstMemory is seen, its pages (the page-aligned span of the whole
 * allocation) are registered with `cudaHostRegister`, and the registration
 * stays with that memory until it is freed. Only one-memory buffers of GStreamer's system allocator are
 * adopted: their bytes stay where they are for the memory's life.
 *
 * Returns: (transfer full) (nullable): a read-only buffer of one mapped
 *   #GstZcMemory over the same bytes, holding @buffer until the GPU work
 *   fenced on it is done; %NULL where @buffer cannot be adopted (copy it)
 */
GstBuffer *
gst_zc_buffer_adopt_host (GstAllocator * mapped_allocator, GstBuffer * buffer,
    guint64 max_registered_bytes, gsize * registered_now)
{
  g_return_val_if_fail (GST_IS_ZC_ALLOCATOR (mapped_allocator), NULL);
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  init_debug ();
  if (registered_now)
    *registered_now = 0;

#if GST_ZC_HAVE_CUDA
  auto *zalloc = GST_ZC_ALLOCATOR (mapped_allocator);
  GstZcContext *ctx = gst_zc_allocator_get_context (zalloc);
  if (!ctx || !gst_zc_context_has_gpu (ctx) ||
      gst_zc_allocator_get_memory_type (zalloc) != GST_ZC_MEMORY_TYPE_MAPPED)
    return NULL;
  if (gst_buffer_n_memory (buffer) != 1)
    return NULL;
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  if (!mem->allocator ||
      g_strcmp0 (mem->allocator->mem_type, GST_ALLOCATOR_SYSMEM) != 0)
    return NULL;
  GstMemory *root = mem->parent ? mem->parent : mem;

  Registration *r;
  {
    std::lock_guard < std::mutex > lk (registration_lock);
    r = static_cast < Registration * >(gst_mini_object_get_qdata
        (GST_MINI_OBJECT_CAST (root), registration_quark ()));
    if (!r) {
      GstMapInfo info;
      if (!gst_memory_map (root, &info, GST_MAP_READ))
        return NULL;
      guintptr base = (guintptr) info.data - root->offset;
      gst_memory_unmap (root, &info);
      guintptr page = (guintptr) sysconf (_SC_PAGESIZE);
      guintptr start = base & ~(page - 1);
      guintptr end = (base + root->maxsize + page - 1) & ~(page - 1);

      gst_zc::DeviceScope scope (gst_zc_context_get_device_id (ctx));
      r = new Registration;
      switch (cover_pages ((guint8 *) start, (guint8 *) end,
              max_registered_bytes, r, registered_now)) {
        case SpanResult::OK:
        case SpanResult::FAILED:
          /* kept on the memory either way: a failure is not tried again */
          gst_mini_object_set_qdata (GST_MINI_OBJECT_CAST (root),
              registration_quark (), r, registration_free);
          break;
        case SpanResult::OVER_LIMIT:
        case SpanResult::BUSY:
          delete r;
          return NULL;
      }
    }
  }
  if (!r->span)
    return NULL;

  ForeignHold *hold = hold_mapped (buffer, mem, GST_MAP_READ);
  if (!hold)
    return NULL;
  guint8 *host = hold->info.data;
  return wrap_held (mapped_allocator, hold, host,
      r->span->device + (host - r->span->start), TRUE);
#else
  (void) max_registered_bytes;
  return NULL;
#endif
}

/**
 * gst_zc_registered_bytes:
 *
 * Returns: the bytes of foreign host memory registered with CUDA by
 *   gst_zc_buffer_adopt_host() and not yet released
 */
guint64
gst_zc_registered_bytes (void)
{
  return gst_zc_memory_get_registered_bytes ();
}

/* ---------------------------------------------------------------------- */
/* GstCudaMemory (nvcodec)                                                */
/* ---------------------------------------------------------------------- */

/**
 * gst_zc_have_cuda_memory_interop:
 *
 * Returns: whether this library was built with GStreamer's CUDA library,
 *   so that the functions below work
 */
gboolean
gst_zc_have_cuda_memory_interop (void)
{
  return GST_ZC_HAVE_GST_CUDA ? TRUE : FALSE;
}

/**
 * gst_zc_buffer_is_cuda_memory:
 * @buffer: a #GstBuffer
 *
 * Returns: whether @buffer is one GstCudaMemory
 */
gboolean
gst_zc_buffer_is_cuda_memory (GstBuffer * buffer)
{
#if GST_ZC_HAVE_GST_CUDA
  return gst_buffer_n_memory (buffer) == 1 &&
      gst_is_cuda_memory (gst_buffer_peek_memory (buffer, 0));
#else
  (void) buffer;
  return FALSE;
#endif
}

/**
 * gst_zc_buffer_import_cuda:
 * @device_allocator: a #GstZcAllocator of device memory
 * @buffer: a buffer of one GstCudaMemory
 * @writable: whether kernels will write the frame (an output frame)
 *
 * Wraps the device memory of @buffer, without a copy, when it belongs to
 * the CUDA context gst-zerocopy shares (gst_zc_context_get_cuda_context()
 * of the allocator's context). nvcodec hands over finished frames; where
 * the GstCudaMemory carries a stream of its own (GStreamer 1.24 and later)
 * the frame is synchronised first. A writable import marks the
 * GstCudaMemory as changed on the GPU when the wrapper goes.
 *
 * Returns: (transfer full) (nullable): a buffer of one device #GstZcMemory
 *   over the same bytes with @buffer's metas (and a #GstVideoMeta of the
 *   memory's layout if @buffer had none), holding @buffer until the GPU
 *   work fenced on it is done; %NULL for memory of another context or
 *   device (map it, which copies)
 */
GstBuffer *
gst_zc_buffer_import_cuda (GstAllocator * device_allocator,
    GstBuffer * buffer, gboolean writable)
{
  g_return_val_if_fail (GST_IS_ZC_ALLOCATOR (device_allocator), NULL);
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  init_debug ();
#if GST_ZC_HAVE_GST_CUDA
  auto *zalloc = GST_ZC_ALLOCATOR (device_allocator);
  GstZcContext *ctx = gst_zc_allocator_get_context (zalloc);
  if (!ctx || gst_zc_allocator_get_memory_type (zalloc) !=
      GST_ZC_MEMORY_TYPE_DEVICE || !gst_zc_buffer_is_cuda_memory (buffer))
    return NULL;
  auto *ours = (GstCudaContext *) gst_zc_context_get_cuda_context (ctx);
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  auto *cmem = GST_CUDA_MEMORY_CAST (mem);
  if (!ours || !cmem->context || gst_cuda_context_get_handle (cmem->context)
      != gst_cuda_context_get_handle (ours)) {
    GST_DEBUG ("GstCudaMemory %p of another CUDA context (%" GST_PTR_FORMAT
        "), not ours (%" GST_PTR_FORMAT ")", mem, cmem->context, ours);
    return NULL;
  }

  ForeignHold *hold = hold_mapped (buffer, mem, (GstMapFlags) (GST_MAP_READ |
          GST_MAP_CUDA | (writable ? GST_MAP_WRITE : 0)));
  if (!hold) {
    GST_WARNING ("could not map GstCudaMemory %p for CUDA", mem);
    return NULL;
  }
#if GST_CHECK_VERSION(1, 24, 0)
  gst_cuda_memory_sync (cmem);
#endif
  GstBuffer *out = wrap_held (device_allocator, hold, NULL, hold->info.data,
      !writable);
  if (out && !gst_buffer_get_video_meta (out)) {
    const GstVideoInfo *info = &cmem->info;
    gst_buffer_add_video_meta_full (out, GST_VIDEO_FRAME_FLAG_NONE,
        GST_VIDEO_INFO_FORMAT (info), GST_VIDEO_INFO_WIDTH (info),
        GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_N_PLANES (info),
        (gsize *) info->offset, (gint *) info->stride);
  }
  return out;
#else
  (void) buffer;
  (void) writable;
  return NULL;
#endif
}

/**
 * gst_zc_cuda_buffer_pool_new:
 * @context: a #GstZcContext with a GPU
 *
 * Returns: (transfer full) (nullable): a GstCudaBufferPool of the shared
 *   CUDA context (gst_zc_context_get_cuda_context()), for frames that leave
 *   as `memory:CUDAMemory`; not configured
 */
GstBufferPool *
gst_zc_cuda_buffer_pool_new (GstZcContext * context)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), NULL);
#if GST_ZC_HAVE_GST_CUDA
  auto *cuda = (GstCudaContext *) gst_zc_context_get_cuda_context (context);
  return cuda ? gst_cuda_buffer_pool_new (cuda) : NULL;
#else
  return NULL;
#endif
}

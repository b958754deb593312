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
#include "gstzchostspans-private.h"

#include <gst/video/video.h>
#include <atomic>
#include <mutex>
#include <string.h>
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

/* @vm (nullable) on @out, which has no video meta yet: the plane layout of
 * the same bytes, which a copy of metas without the memory leaves out */
static void
add_video_meta_of (GstBuffer * out, GstVideoMeta * vm)
{
  if (!vm || gst_buffer_get_video_meta (out))
    return;
  GstVideoMeta *copy = gst_buffer_add_video_meta_full (out, vm->flags,
      vm->format, vm->width, vm->height, vm->n_planes, vm->offset, vm->stride);
#if GST_CHECK_VERSION(1, 18, 0)
  if (copy)
    copy->alignment = vm->alignment;
#else
  (void) copy;
#endif
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
  add_video_meta_of (out, gst_buffer_get_video_meta (original));
  return out;
}

void
gst_zc_held_frame_release (GstZcHeldFrame * held)
{
  if (held->mapped)
    gst_memory_unmap (held->mapped, &held->info);
  if (held->buffer)
    gst_buffer_unref (held->buffer);
  if (held->release_extra)
    held->release_extra (held->extra);
  memset (held, 0, sizeof (*held));
}

/* A GstZcHeldFrame of its own allocation (g_new0), released and freed */
static void G_GNUC_UNUSED
held_frame_free (gpointer data)
{
  auto *held = static_cast < GstZcHeldFrame * >(data);
  gst_zc_held_frame_release (held);
  g_free (held);
}

/* ---------------------------------------------------------------------- */
/* Wrappers kept per foreign memory                                       */
/* ---------------------------------------------------------------------- */

/* Buffers of foreign frames made since the process started (the rest were
 * kept ones, handed out again) */
static std::atomic < guint64 > wrappers_made { 0 };

struct WrapperLink;

struct _GstZcRecycled
{
  std::atomic < int >refs { 1 };  /* the owner's, each link's, and the
                                   kept buffer's */
  std::mutex lock;
  GstBuffer *out = nullptr;     /* the kept buffer: the cache's reference
                                   while free, the user's while out */
  WrapperLink *link = nullptr;  /* its wrapper memory's */
  bool busy = false;            /* out, or its frame not yet given back */
  bool dropped = false;         /* the owner is gone */
};

/* What a wrapper memory made here holds (its release notify's data) */
struct WrapperLink
{
  GstZcRecycled *rec;
  GstMemory *memory;            /* the wrapper (no reference) */
  GstZcHeldFrame held;          /* the frame it wraps now, if any */
};

static void
recycled_unref (GstZcRecycled * rec)
{
  if (--rec->refs == 0)
    delete rec;
}

static void
recycled_unref_notify (gpointer data)
{
  recycled_unref (static_cast < GstZcRecycled * >(data));
}

static GQuark
recycled_quark (void)
{
  static GQuark q = g_quark_from_static_string ("gst-zc-recycled");
  return q;
}

GstZcRecycled *
gst_zc_recycled_new (void)
{
  return new GstZcRecycled;
}

#if GST_ZC_HAVE_CUDA
/* The recycling record kept on foreign memory @mem (qdata, dropped with
 * it), made at its first use; @lock guards the lookup. Its callers are the
 * CUDA backend's alone. */
static GstZcRecycled *
recycled_of (GstMemory * mem, std::mutex & lock)
{
  std::lock_guard < std::mutex > lk (lock);
  auto *rec = static_cast < GstZcRecycled * >(gst_mini_object_get_qdata
      (GST_MINI_OBJECT_CAST (mem), recycled_quark ()));
  if (!rec) {
    rec = gst_zc_recycled_new ();
    gst_mini_object_set_qdata (GST_MINI_OBJECT_CAST (mem), recycled_quark (),
        rec, gst_zc_recycled_drop);
  }
  return rec;
}
#endif

/* The wrapper memory is freed, its GPU work done: what it held goes back */
static void
link_gone (gpointer data)
{
  auto *link = static_cast < WrapperLink * >(data);
  GstZcRecycled *rec = link->rec;
  GstZcHeldFrame held;
  {
    std::lock_guard < std::mutex > lk (rec->lock);
    if (rec->link == link)
      rec->link = nullptr;      /* the kept buffer lost its wrapper */
    held = link->held;
  }
  gst_zc_held_frame_release (&held);
  delete link;
  recycled_unref (rec);
}

/* The kept buffer's user let go and the GPU is done with it: its frame
 * goes back to the producer, and the buffer is free again */
static void
frame_done (gpointer data)
{
  auto *link = static_cast < WrapperLink * >(data);
  GstZcRecycled *rec = link->rec;
  GstZcHeldFrame held;
  GstBuffer *orphan = nullptr;
  rec->refs++;
  {
    std::lock_guard < std::mutex > lk (rec->lock);
    held = link->held;
    memset (&link->held, 0, sizeof (link->held));
    rec->busy = false;
    /* the owner went meanwhile (it cannot while a frame holds it; kept
     * for safety): the kept buffer goes too */
    if (rec->dropped) {
      orphan = rec->out;
      rec->out = nullptr;
    }
  }
  gst_zc_held_frame_release (&held);
  if (orphan)
    gst_buffer_unref (orphan);
  recycled_unref (rec);
}

static gboolean
strip_all_but_video_meta (GstBuffer *, GstMeta ** meta, gpointer)
{
  if ((*meta)->info->api != GST_VIDEO_META_API_TYPE &&
      !GST_META_FLAG_IS_SET (*meta, GST_META_FLAG_LOCKED))
    *meta = NULL;
  return TRUE;
}

/* The kept buffer's last reference went: it is kept again, unless someone
 * else holds its wrapper memory (a copy of the buffer shares it) or its
 * owner is gone; then it goes, and its memory gives the frame back when
 * that goes. */
static gboolean
recycled_dispose (GstMiniObject * obj)
{
  auto *buf = (GstBuffer *) obj;
  auto *rec = (GstZcRecycled *) gst_mini_object_get_qdata (obj,
      recycled_quark ());
  GstMemory *mem = gst_buffer_n_memory (buf) == 1 ?
      gst_buffer_peek_memory (buf, 0) : NULL;
  std::unique_lock < std::mutex > lk (rec->lock);
  if (rec->out != buf || rec->dropped || !rec->link ||
      mem != rec->link->memory || GST_MINI_OBJECT_REFCOUNT_VALUE (mem) != 1) {
    if (rec->out == buf) {
      rec->out = nullptr;
      rec->link = nullptr;
      rec->busy = false;
    }
    return TRUE;
  }
  gst_buffer_ref (buf);
  WrapperLink *link = rec->link;
  lk.unlock ();
  /* no meta of the last frame stays while it waits (one may hold another
   * buffer, a parent's); a video meta holds nothing and may fit the next */
  gst_buffer_foreach_meta (buf, strip_all_but_video_meta, NULL);
  gst_zc_memory_when_idle (mem, frame_done, link);
  return FALSE;
}

void
gst_zc_recycled_drop (gpointer recycled)
{
  auto *rec = static_cast < GstZcRecycled * >(recycled);
  GstBuffer *out = nullptr;
  {
    std::lock_guard < std::mutex > lk (rec->lock);
    rec->dropped = true;
    if (!rec->busy) {
      out = rec->out;
      rec->out = nullptr;
    }
  }
  if (out)
    gst_buffer_unref (out);
  recycled_unref (rec);
}

/* Metas of the frame @out carried before go, but a video meta that
 * describes the next one too (@user_data) */
static gboolean
strip_meta (GstBuffer *, GstMeta ** meta, gpointer user_data)
{
  auto *next = static_cast < GstVideoMeta * >(user_data);
  if ((*meta)->info->api == GST_VIDEO_META_API_TYPE && next) {
    auto *vm = (GstVideoMeta *) * meta;
    if (vm->format == next->format && vm->width == next->width &&
        vm->height == next->height && vm->n_planes == next->n_planes &&
        memcmp (vm->offset, next->offset, sizeof (vm->offset)) == 0 &&
        memcmp (vm->stride, next->stride, sizeof (vm->stride)) == 0) {
      vm->flags = next->flags;
      return TRUE;
    }
  }
  if (!GST_META_FLAG_IS_SET (*meta, GST_META_FLAG_LOCKED))
    *meta = NULL;
  return TRUE;
}

/* @out, kept, made the buffer of @original's next frame, laid out as @vm
 * says (NULL: no video meta) */
static void
refresh (GstBuffer * out, GstBuffer * original, GstVideoMeta * vm)
{
  gst_buffer_foreach_meta (out, strip_meta, vm);
  gst_buffer_copy_into (out, original, (GstBufferCopyFlags)
      (GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS |
          GST_BUFFER_COPY_META), 0, -1);
  add_video_meta_of (out, vm);
}

/* Whether @mem, a kept wrapper, is still @allocator's over the same bytes */
static bool
still_fits (GstMemory * mem, GstAllocator * allocator, gpointer host,
    gpointer device, gsize size)
{
  auto *zmem = (GstZcMemory *) mem;
  return mem->allocator == allocator && mem->size == size &&
      gst_zc_memory_get_host_pointer (zmem) == host &&
      (!device || gst_zc_memory_get_device_pointer (zmem) == device);
}

GstBuffer *
gst_zc_recycled_wrap (GstZcRecycled * rec, GstAllocator * allocator,
    gpointer host, gpointer device, gsize size, GstBuffer * original,
    const GstZcHeldFrame * held, GstVideoMeta * layout)
{
  GstVideoMeta *vm = layout ? layout : gst_buffer_get_video_meta (original);
  GstBuffer *stale = nullptr;
  {
    std::lock_guard < std::mutex > lk (rec->lock);
    if (!rec->busy && rec->out && rec->link && !rec->dropped) {
      if (still_fits (rec->link->memory, allocator, host, device, size)) {
        GstBuffer *out = rec->out;
        rec->busy = true;
        rec->link->held = *held;
        refresh (out, original, vm);
        return out;
      }
      /* another allocator (the element restarted) or other bytes */
      stale = rec->out;
      rec->out = nullptr;
      rec->link = nullptr;
    }
  }
  if (stale)
    gst_buffer_unref (stale);

  auto *link = new WrapperLink { rec, nullptr, *held };
  rec->refs++;
  GstMemory *wrapper = gst_zc_memory_new_wrapped (allocator, host, device,
      size, TRUE, link, link_gone);
  if (!wrapper) {
    gst_zc_held_frame_release (&link->held);
    delete link;
    recycled_unref (rec);
    return NULL;
  }
  link->memory = wrapper;
  GstBuffer *out = gst_zc_buffer_new_around (wrapper, original);
  add_video_meta_of (out, vm);
  wrappers_made++;
  std::lock_guard < std::mutex > lk (rec->lock);
  if (!rec->out && !rec->busy && !rec->dropped) {
    /* kept from now on (else the same memory is out twice, as a source
     * that repeats a frame sends it: this one goes when it is done) */
    rec->out = out;
    rec->link = link;
    rec->busy = true;
    /* the buffer's own reference: its dispose reads it, whatever became of
     * its memory */
    rec->refs++;
    gst_mini_object_set_qdata (GST_MINI_OBJECT_CAST (out), recycled_quark (),
        rec, recycled_unref_notify);
    GST_MINI_OBJECT_CAST (out)->dispose = recycled_dispose;
  }
  return out;
}

/**
 * gst_zc_wrapped_buffers_made:
 *
 * How many buffers of foreign frames (gst_zc_buffer_adopt_host(),
 * gst_zc_buffer_import_fd(), gst_zc_buffer_import_cuda()) the process has
 * made. A host or file memory seen before hands out the one made for it
 * when it is free again, so once a recycling producer's memories have all
 * been seen this stays still: nothing is allocated per frame. So does a
 * frame of nvcodec's pools (a decoder's) read by our kernels; a frame of
 * theirs that our kernels write (an output into `memory:CUDAMemory`) is
 * wrapped anew each time: one buffer a frame.
 *
 * Returns: the count
 */
guint64
gst_zc_wrapped_buffers_made (void)
{
  return wrappers_made.load ();
}

GstZcHostRegistration
gst_zc_host_register (guint8 * start, gsize length,
    guint64 max_registered_bytes, guint8 ** device)
{
  init_debug ();
#if GST_ZC_HAVE_CUDA
  const guint64 registered = gst_zc_memory_get_registered_bytes ();
  if (registered + length > max_registered_bytes) {
    GST_DEBUG ("not registering %" G_GSIZE_FORMAT " bytes: %"
        G_GUINT64_FORMAT " registered, limit %" G_GUINT64_FORMAT, length,
        registered, max_registered_bytes);
    return GST_ZC_HOST_OVER_LIMIT;
  }
  /* the process's cap on pinned memory (gst_zc_memory_set_pinned_limit()) */
  const guint64 cap = gst_zc_memory_get_pinned_limit ();
  const guint64 held = gst_zc_memory_get_pinned_bytes ();
  if (cap && held + length > cap) {
    GST_DEBUG ("not registering %" G_GSIZE_FORMAT " bytes: %"
        G_GUINT64_FORMAT " pinned, cap %" G_GUINT64_FORMAT, length, held, cap);
    return GST_ZC_HOST_OVER_LIMIT;
  }
  /* Not cudaHostRegisterReadOnly: copies from pages registered with it can
   * fail with cudaErrorInvalidValue (docs/design.md). The wrappers are
   * read-only GstMemory instead, which no kernel of ours writes. */
  unsigned flags = cudaHostRegisterMapped | cudaHostRegisterPortable;
  cudaError_t err = GST_ZC_FAULT_OR (HOST_REGISTER, cudaErrorMemoryAllocation,
      cudaHostRegister (start, length, flags));
  void *d = nullptr;
  if (err != cudaSuccess ||
      !GST_ZC_CUDA_OK (cudaHostGetDevicePointer (&d, start, 0))) {
    if (err == cudaSuccess)
      cudaHostUnregister (start);
    GST_DEBUG ("cannot register %" G_GSIZE_FORMAT " bytes at %p: %s",
        length, start, cudaGetErrorName (err));
    cudaGetLastError ();
    return GST_ZC_HOST_REFUSED;
  }
  gst_zc_memory_count_registered (length, TRUE);
  *device = (guint8 *) d;
  GST_DEBUG ("registered %" G_GSIZE_FORMAT " bytes at %p", length, start);
  return GST_ZC_HOST_REGISTERED;
#else
  (void) start;
  (void) length;
  (void) max_registered_bytes;
  (void) device;
  return GST_ZC_HOST_REFUSED;
#endif
}

void
gst_zc_host_unregister (guint8 * start, gsize length)
{
  init_debug ();
#if GST_ZC_HAVE_CUDA
  cudaError_t err = cudaHostUnregister (start);
  if (err != cudaSuccess && err != cudaErrorCudartUnloading)
    GST_ZC_CUDA_OK (err);
  /* runs on whatever thread freed the memory: leave no error behind for
   * that thread's next launch check */
  cudaGetLastError ();
  gst_zc_memory_count_registered (length, FALSE);
  GST_LOG ("unregistered %" G_GSIZE_FORMAT " bytes at %p", length, start);
#else
  (void) start;
  (void) length;
#endif
}

/* ---------------------------------------------------------------------- */
/* Host memory: cudaHostRegister, kept on the memory                      */
/* ---------------------------------------------------------------------- */

#if GST_ZC_HAVE_CUDA
/* The spans registered for foreign memory (gstzchostspans-private.h): what
 * each memory uses is its qdata, a gst_zc::HostRegistration */
static_assert (gst_zc::kMaxHostSpans == GST_ZC_MAX_SEAMS + 1,
    "a wrapper keeps a seam between each two of its spans");

static std::mutex registration_lock;
/* under registration_lock; their bytes are counted, under the same lock,
 * by gst_zc_memory_count_registered() */
static gst_zc::HostSpans host_spans ((gsize) sysconf (_SC_PAGESIZE),
    gst_zc_host_register, gst_zc_host_unregister);

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
  auto *r = static_cast < gst_zc::HostRegistration * >(data);
  {
    std::lock_guard < std::mutex > lk (registration_lock);
    host_spans.release (r);
  }
  delete r;
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

  gst_zc::HostRegistration *r;
  {
    std::lock_guard < std::mutex > lk (registration_lock);
    r = static_cast < gst_zc::HostRegistration * >(gst_mini_object_get_qdata
        (GST_MINI_OBJECT_CAST (root), registration_quark ()));
    if (!r) {
      GstMapInfo info;
      if (!gst_memory_map (root, &info, GST_MAP_READ))
        return NULL;
      guint8 *base = info.data - root->offset;
      gst_memory_unmap (root, &info);

      gst_zc::DeviceScope scope (gst_zc_context_get_device_id (ctx));
      r = new gst_zc::HostRegistration;
      switch (host_spans.cover (base, root->maxsize, max_registered_bytes, r,
              registered_now)) {
        case gst_zc::SpanResult::OK:
        case gst_zc::SpanResult::FAILED:
          /* kept on the memory either way: a failure is not tried again */
          gst_mini_object_set_qdata (GST_MINI_OBJECT_CAST (root),
              registration_quark (), r, registration_free);
          break;
        case gst_zc::SpanResult::OVER_LIMIT:
        case gst_zc::SpanResult::BUSY:
          delete r;
          return NULL;
      }
    }
  }
  if (r->n == 0)
    return NULL;

  GstZcHeldFrame held;
  memset (&held, 0, sizeof (held));
  if (!gst_memory_map (mem, &held.info, GST_MAP_READ))
    return NULL;
  held.mapped = mem;
  held.buffer = gst_buffer_ref (buffer);
  guint8 *host = held.info.data;
  /* the wrapper kept for this memory, handed out again when it is free */
  GstZcRecycled *rec = recycled_of (root, registration_lock);
  guint8 *device = r->spans[0]->device + (host - r->spans[0]->start);
  gsize size = held.info.size;
  GstBuffer *out = gst_zc_recycled_wrap (rec, mapped_allocator, host, device,
      size, buffer, &held, NULL);
  if (out) {
    const guint8 *seams[GST_ZC_MAX_SEAMS];
    guint n = gst_zc::HostSpans::seams_within (r, device, size, seams);
    gst_zc_memory_set_seams (gst_buffer_peek_memory (out, 0), seams, n);
  }
  return out;
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

#if GST_ZC_HAVE_GST_CUDA
/* guards the kept wrapper (qdata) of each GstCudaMemory */
static std::mutex cuda_recycled_lock;
#endif

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
 * the frame is synchronised first. A frame our kernels only read (a
 * decoder's) gets the buffer made for its memory the last time, once that
 * buffer is free again: a recycling pool costs no allocation per frame
 * (gst_zc_wrapped_buffers_made()). A writable import is wrapped anew and
 * marks the GstCudaMemory as changed on the GPU when the wrapper goes.
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

  GstZcHeldFrame held;
  memset (&held, 0, sizeof (held));
  if (!gst_memory_map (mem, &held.info, (GstMapFlags) (GST_MAP_READ |
              GST_MAP_CUDA | (writable ? GST_MAP_WRITE : 0)))) {
    GST_WARNING ("could not map GstCudaMemory %p for CUDA", mem);
    return NULL;
  }
  held.mapped = mem;
  held.buffer = gst_buffer_ref (buffer);
#if GST_CHECK_VERSION(1, 24, 0)
  gst_cuda_memory_sync (cmem);
#endif
  /* The plane layout of nvcodec's frame (its pools add a video meta; the
   * memory's own info where one did not) */
  GstVideoMeta layout;
  GstVideoMeta *vm = gst_buffer_get_video_meta (buffer);
  if (!vm) {
    memset (&layout, 0, sizeof (layout));
    const GstVideoInfo *info = &cmem->info;
    layout.format = GST_VIDEO_INFO_FORMAT (info);
    layout.width = GST_VIDEO_INFO_WIDTH (info);
    layout.height = GST_VIDEO_INFO_HEIGHT (info);
    layout.n_planes = GST_VIDEO_INFO_N_PLANES (info);
    for (guint p = 0; p < layout.n_planes && p < GST_VIDEO_MAX_PLANES; p++) {
      layout.offset[p] = info->offset[p];
      layout.stride[p] = info->stride[p];
    }
    vm = &layout;
  }
  GstBuffer *out = NULL;
  if (!writable) {
    /* the wrapper kept for this memory of nvcodec's pool, handed out
     * again when it comes back: no allocation per frame */
    GstZcRecycled *rec = recycled_of (mem, cuda_recycled_lock);
    gpointer device = held.info.data;
    gsize size = held.info.size;
    out = gst_zc_recycled_wrap (rec, device_allocator, NULL, device, size,
        buffer, &held, vm);
  } else {
    /* an output frame, written by our kernels: a wrapper of its own, which
     * marks the GstCudaMemory changed on the GPU when it goes */
    auto *own = g_new (GstZcHeldFrame, 1);
    *own = held;
    GstMemory *wrapper = gst_zc_memory_new_wrapped (device_allocator, NULL,
        own->info.data, own->info.size, FALSE, own, held_frame_free);
    if (wrapper) {
      out = gst_zc_buffer_new_around (wrapper, buffer);
      add_video_meta_of (out, vm);
      wrappers_made++;
    } else {
      held_frame_free (own);
    }
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

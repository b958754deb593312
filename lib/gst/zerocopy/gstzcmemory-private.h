/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the allocator (gstzcallocator.cpp) and the memory object
 * (gstzcmemory.cpp) share: the memory's private state, its raw block and
 * the GstMemory vfuncs the allocator installs. The allocator calls into the
 * memory unit, never the other way round. Not installed.
 */
#pragma once

#include <gst/zerocopy/gstzcmemory.h>
#include "gstzccuda-private.h"

#include <mutex>

/* "zcmemory", for both units: defined by the memory unit, initialised with
 * the allocator's type, which every memory's existence implies */
GST_DEBUG_CATEGORY_EXTERN (gst_zc_memory_debug);

/* A foreign memory lies across at most three registrations: its first
 * page another memory's, its middle its own, its last page a third's */
#define GST_ZC_MAX_SEAMS 2

struct _GstZcMemoryPrivate
{
  GstZcMemoryType type = GST_ZC_MEMORY_TYPE_SYSTEM;
  gint device_id = -1;
  gboolean concurrent_managed = FALSE;
  void *alloc_base = nullptr;   /* what the allocation call returned */
  gsize alloc_bytes = 0;        /* and its size */
  guint8 *host = nullptr;       /* start of the GstMemory block (maxsize) */
  guint8 *device = nullptr;     /* the GPU's address of host[0] */
  gsize block_size = 0;
  /* shareable: the block is a memfd's pages (gst_zc_allocator_new_shareable()),
   * fd the file, which other processes map */
  bool shareable = false;
  int fd = -1;
  std::mutex lock;
#if GST_ZC_HAVE_CUDA
  cudaEvent_t fence = nullptr;
  bool fence_pending = false;
  bool on_gpu = false;          /* managed, prefetched to the GPU */
  bool managed_on_host = false; /* managed, kept on the host, GPU-mapped */
  void *staging = nullptr;      /* device memory: pinned CPU view */
  /* the allocator's, for CPU maps' transfers; the allocator outlives its
   * memories (each holds a reference to it) */
  cudaStream_t transfer_stream = nullptr;
#endif
  /* Wrapped memory (gst_zc_memory_new_wrapped()): no allocation of ours;
   * @release gives the bytes back to their owner once the fence is done */
  GDestroyNotify release = nullptr;
  gpointer release_data = nullptr;
  /* Wrapped foreign host memory over more than one registration: the
   * device addresses where one ends and the next begins, ascending, which
   * copies must not cross (gstzccopysplit-private.h) */
  const guint8 *seams[GST_ZC_MAX_SEAMS] = { };
  guint n_seams = 0;
};

G_BEGIN_DECLS

/* Why this thread's last allocation of a frame failed: what was asked, the
 * call that failed and its reason (static strings), and the bytes of that
 * kind the process held then (gst_zc_memory_get_pinned_bytes() for host
 * memory) */
typedef struct
{
  gboolean valid;
  GstZcMemoryType type;
  gsize bytes;
  const gchar *call;
  const gchar *reason;
  gboolean over_limit;          /* refused by the cap, not by the system */
  guint64 held;
  guint64 limit;
} GstZcAllocFailure;

G_GNUC_INTERNAL
void gst_zc_memory_note_alloc_failure (GstZcMemoryType type, gsize bytes,
    const gchar * call, const gchar * reason, gboolean over_limit);

/* Foreign memory registered with CUDA (@registered) or released: part of
 * gst_zc_memory_get_pinned_bytes() */
G_GNUC_INTERNAL
void gst_zc_memory_count_registered (gsize bytes, gboolean registered);

/* What gst_zc_memory_count_registered() adds up to */
G_GNUC_INTERNAL
guint64 gst_zc_memory_get_registered_bytes (void);

/* The same, from the CUDA call that failed last on this thread
 * (gst_zc_cuda_last_failure()); @bytes 0 for the frame's fence event */
G_GNUC_INTERNAL
void gst_zc_memory_note_cuda_failure (GstZcMemoryType type, gsize bytes);

/* Copies out and clears this thread's record; FALSE if there was none */
G_GNUC_INTERNAL
gboolean gst_zc_memory_take_alloc_failure (GstZcAllocFailure * failure);

/* Allocates @bytes of @priv->type on @priv->device_id into
 * @priv->alloc_base; FALSE on failure (logged) */
G_GNUC_INTERNAL
gboolean gst_zc_memory_alloc_block (GstZcMemoryPrivate * priv, gsize bytes);

/* Frees what gst_zc_memory_alloc_block() and CPU maps allocated */
G_GNUC_INTERNAL
void gst_zc_memory_free_block (GstZcMemoryPrivate * priv);

/* @notify (@data) once the GPU work fenced on the wrapped @memory is done
 * (the allocator unit) */
G_GNUC_INTERNAL
void gst_zc_memory_when_idle (GstMemory * memory, GDestroyNotify notify,
    gpointer data);

/* The GstAllocator vfuncs of a #GstZcMemory */
G_GNUC_INTERNAL
gpointer gst_zc_memory_map_full (GstMemory * memory, GstMapInfo * info,
    gsize maxsize);
G_GNUC_INTERNAL
void gst_zc_memory_unmap_full (GstMemory * memory, GstMapInfo * info);
G_GNUC_INTERNAL
GstMemory * gst_zc_memory_share (GstMemory * memory, gssize offset,
    gssize size);
G_GNUC_INTERNAL
gboolean gst_zc_memory_is_span (GstMemory * mem1, GstMemory * mem2,
    gsize * offset);

/* Where the copy engines must cut a copy whose source is @mem: @n (at most
 * %GST_ZC_MAX_SEAMS) ascending device addresses at which one host
 * registration of a wrapped foreign memory ends and the next begins. Set
 * before the memory is handed out; the same for the memory's life. */
G_GNUC_INTERNAL
void gst_zc_memory_set_seams (GstMemory * mem, const guint8 * const * seams,
    guint n);

/* Whether @mem's root wraps bytes that are not ours
 * (gst_zc_memory_new_wrapped(): a decoder's or another library's frame) */
G_GNUC_INTERNAL
gboolean gst_zc_memory_is_wrapped (GstZcMemory * mem);

/* Whether the GPU reaches @mem's bytes over the bus: mapped memory, and
 * managed memory kept on the host */
G_GNUC_INTERNAL
gboolean gst_zc_memory_is_over_bus (GstZcMemory * mem);

/* What gst_zc_memory_set_seams() set on @mem's root (none for memory of
 * ours); returns the count and points @seams at them */
G_GNUC_INTERNAL
guint gst_zc_memory_get_seams (GstZcMemory * mem,
    const guint8 * const ** seams);

G_END_DECLS

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:gstzcfd
 * @title: Frames across processes
 * @short_description: frames as file descriptors, both ways, without copies
 *
 * GStreamer 1.24's `unixfdsink` and `unixfdsrc` pass a frame to another
 * process as the file descriptors of its memories, with no copy when the
 * memory is file-backed (#GstFdMemory). gst-zerocopy meets them on both
 * sides:
 *
 * - **Producer.** A pool configured with
 *   %GST_ZC_BUFFER_POOL_OPTION_SHAREABLE allocates each frame in the pages
 *   of an anonymous file (memfd), registered with CUDA once when it is
 *   allocated (gst_zc_allocator_new_shareable()). gst_zc_buffer_export_fd()
 *   waits for the GPU work on such a frame and hands it on as a buffer of
 *   #GstFdMemory over the same file, which `unixfdsink` sends as it is.
 *   The #GstFdMemory is made once per frame of the pool and reused.
 * - **Consumer.** What `unixfdsrc` receives is a new descriptor (and a new
 *   #GstFdMemory) per frame, even when the producer's pool sends the same
 *   few files over and over. gst_zc_buffer_import_fd() knows a file by its
 *   identity (device and inode), not by the descriptor or the address of a
 *   mapping: the first time it sees a file it maps the whole file and, with
 *   a GPU, registers the mapping with CUDA; every later frame of that file
 *   uses that mapping and registration. The result is a read-only
 *   #GstZcMemory over the frame's bytes, holding the received buffer (so
 *   the producer gets its frame back only when the consumer is done).
 *   The mappings live in a #GstZcFdImports, which the consumer frees when it
 *   stops; a file not seen for a while (a producer that renegotiated) is let
 *   go earlier.
 *
 * The file-descriptor memory API (#GstFdMemory) exists since GStreamer 1.6;
 * only `unixfdsink` and `unixfdsrc` need 1.24.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcfd.h"
#include "gstzcforeign-private.h"
#include "gstzcmemory-private.h"
#include "gstzccuda-private.h"

#include <gst/allocators/allocators.h>

#include <atomic>
#include <map>
#include <mutex>
#include <utility>

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

GST_DEBUG_CATEGORY_STATIC (gst_zc_fd_debug);
#define GST_CAT_DEFAULT gst_zc_fd_debug

static void
init_debug (void)
{
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_zc_fd_debug, "zcfd", 0,
        "zero-copy frames as file descriptors");
    g_once_init_leave (&done, 1);
  }
}

/* ---------------------------------------------------------------------- */
/* Producer                                                               */
/* ---------------------------------------------------------------------- */

/* The GstFdMemory of a shareable memory, made at its first export and kept
 * on it (qdata) until it is freed */
static GQuark
fd_view_quark (void)
{
  static GQuark q = g_quark_from_static_string ("gst-zc-fd-view");
  return q;
}

static std::mutex export_lock;

static GstAllocator *
fd_allocator (void)
{
  static GstAllocator *allocator = NULL;
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
    allocator = gst_fd_allocator_new ();
    GST_OBJECT_FLAG_SET (allocator, GST_OBJECT_FLAG_MAY_BE_LEAKED);
    g_once_init_leave (&done, 1);
  }
  return allocator;
}

/**
 * gst_zc_buffer_is_shareable:
 * @buffer: a #GstBuffer
 *
 * Returns: whether every memory of @buffer is a #GstZcMemory of a file
 *   (gst_zc_memory_get_fd()), which gst_zc_buffer_export_fd() hands on
 *   without a copy
 */
gboolean
gst_zc_buffer_is_shareable (GstBuffer * buffer)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), FALSE);
  const guint n = gst_buffer_n_memory (buffer);
  if (n == 0)
    return FALSE;
  for (guint i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);
    if (!gst_is_zc_memory (mem) ||
        gst_zc_memory_get_fd ((GstZcMemory *) mem, NULL) < 0)
      return FALSE;
  }
  return TRUE;
}

/* A #GstFdMemory over @mem's bytes, in the file where they lie; NULL if it
 * cannot be made */
static GstMemory *
fd_view_of (GstMemory * mem)
{
  gsize block_offset = 0;
  const gint fd = gst_zc_memory_get_fd ((GstZcMemory *) mem, &block_offset);
  GstMemory *root = mem->parent ? mem->parent : mem;
  const gsize offset = block_offset + mem->offset;

  std::lock_guard < std::mutex > lk (export_lock);
  auto *view = (GstMemory *) gst_mini_object_get_qdata (GST_MINI_OBJECT_CAST
      (root), fd_view_quark ());
  if (!view) {
    /* the descriptor stays the memory's: the view does not close it */
    view = gst_fd_allocator_alloc (fd_allocator (), fd,
        block_offset + root->maxsize, GST_FD_MEMORY_FLAG_DONT_CLOSE);
    if (!view)
      return NULL;
    gst_mini_object_set_qdata (GST_MINI_OBJECT_CAST (root), fd_view_quark (),
        view, (GDestroyNotify) gst_memory_unref);
  }
  if (GST_MINI_OBJECT_REFCOUNT_VALUE (view) == 1) {
    /* nobody else holds it (the last frame that went out in it is back):
     * it is this frame's now */
    gst_memory_resize (view, (gssize) offset - (gssize) view->offset,
        mem->size);
    return gst_memory_ref (view);
  }
  /* the same memory out twice at once (a tee upstream): a view of the view */
  return gst_memory_share (view, (gssize) offset - (gssize) view->offset,
      mem->size);
}

/**
 * gst_zc_buffer_export_fd:
 * @buffer: a shareable buffer (gst_zc_buffer_is_shareable())
 *
 * Waits for the GPU work fenced on @buffer's memories (the other process
 * reads them without fences), then makes a buffer of #GstFdMemory over the
 * same files and bytes, with @buffer's flags, timestamps and metas, holding
 * @buffer (a #GstParentBufferMeta) until it goes: `unixfdsink` sends its
 * descriptors and keeps it until every consumer is done with the frame, so
 * @buffer goes back to its pool only then.
 *
 * Returns: (transfer full) (nullable): the buffer, or %NULL when the GPU
 *   work on @buffer failed or a view could not be made
 */
GstBuffer *
gst_zc_buffer_export_fd (GstBuffer * buffer)
{
  g_return_val_if_fail (gst_zc_buffer_is_shareable (buffer), NULL);
  init_debug ();

  GstBuffer *out = NULL;
  const guint n = gst_buffer_n_memory (buffer);
  for (guint i = 0; i < n; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);
    if (!gst_zc_memory_wait_cpu ((GstZcMemory *) mem)) {
      GST_WARNING ("the GPU work on %p failed: not exported", mem);
      gst_clear_buffer (&out);
      return NULL;
    }
    GstMemory *view = fd_view_of (mem);
    if (!view) {
      gst_clear_buffer (&out);
      return NULL;
    }
    if (!out)
      out = gst_zc_buffer_new_around (view, buffer);
    else
      gst_buffer_append_memory (out, view);
  }
  gst_buffer_add_parent_buffer_meta (out, buffer);
  return out;
}

/* ---------------------------------------------------------------------- */
/* Consumer                                                               */
/* ---------------------------------------------------------------------- */

/* A file seen before: one mapping of the whole of it, and one registration
 * with CUDA where there is a GPU. Held by the table and by each wrapper of
 * its bytes. */
struct FileImport
{
  std::atomic < int >refs { 1 };
  guint8 *map = nullptr;
  gsize length = 0;
  guint8 *device = nullptr;     /* registered: the GPU's address of map */
  bool registered = false;
  bool refused = false;         /* CUDA would not register it: copy */
  int device_id = -1;
  guint64 last_use = 0;
  /* the wrapper buffer kept for each frame's place in the file (offset,
   * size), under the table's lock */
  std::map < std::pair < gsize, gsize >, GstZcRecycled * >recycled;
};

static void
file_import_unref (FileImport * f)
{
  if (--f->refs > 0)
    return;
  /* no frame of it is out: the kept wrappers are free, and go */
  for (auto & kv : f->recycled)
    gst_zc_recycled_drop (kv.second);
#if GST_ZC_HAVE_CUDA
  if (f->registered) {
    gst_zc::DeviceScope scope (f->device_id);
    gst_zc_host_unregister (f->map, f->length);
  }
#endif
  munmap (f->map, f->length);
  GST_LOG ("released the mapping of %" G_GSIZE_FORMAT " bytes at %p",
      f->length, f->map);
  delete f;
}

/* A file: its device and inode */
typedef std::pair < dev_t, ino_t > FileKey;

/**
 * GstZcFdImports:
 *
 * The files a consumer has seen (gst_zc_buffer_import_fd()): one mapping
 * and registration each. Made when the consumer starts and freed when it
 * stops; a file that no frame has used for a while (#ZC_FD_IDLE_FRAMES
 * imports of other files) is let go before.
 */
struct _GstZcFdImports
{
  std::mutex lock;
  std::map < FileKey, FileImport * >files;
  guint64 clock = 0;
};

/* A file that as many imports of other files have passed by has left the
 * producer's pool */
#define ZC_FD_IDLE_FRAMES 512

/**
 * gst_zc_fd_imports_new: (skip)
 *
 * Returns: (transfer full): an empty table of imported files
 */
GstZcFdImports *
gst_zc_fd_imports_new (void)
{
  init_debug ();
  return new GstZcFdImports;
}

/**
 * gst_zc_fd_imports_free: (skip)
 * @imports: (transfer full): a table of gst_zc_fd_imports_new()
 *
 * Lets go of every file: each mapping and registration goes as soon as no
 * frame uses it any more.
 */
void
gst_zc_fd_imports_free (GstZcFdImports * imports)
{
  if (!imports)
    return;
  for (auto & kv : imports->files)
    file_import_unref (kv.second);
  delete imports;
}

/**
 * gst_zc_fd_imports_get_n_files: (skip)
 * @imports: a table of gst_zc_fd_imports_new()
 *
 * Returns: how many files the table holds a mapping of
 */
guint
gst_zc_fd_imports_get_n_files (GstZcFdImports * imports)
{
  g_return_val_if_fail (imports != NULL, 0);
  std::lock_guard < std::mutex > lk (imports->lock);
  return (guint) imports->files.size ();
}

/**
 * gst_zc_buffer_is_fd:
 * @buffer: a #GstBuffer
 *
 * Returns: whether @buffer is one #GstFdMemory (what `unixfdsrc` makes)
 */
gboolean
gst_zc_buffer_is_fd (GstBuffer * buffer)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), FALSE);
  return gst_buffer_n_memory (buffer) == 1 &&
      gst_is_fd_memory (gst_buffer_peek_memory (buffer, 0));
}

/* Under imports->lock: files unused for ZC_FD_IDLE_FRAMES imports */
static void
drop_idle (GstZcFdImports * imports)
{
  for (auto it = imports->files.begin (); it != imports->files.end ();) {
    if (it->second->last_use + ZC_FD_IDLE_FRAMES < imports->clock) {
      GST_DEBUG ("file %" G_GUINT64_FORMAT " unused for %d frames: let go",
          (guint64) it->first.second, ZC_FD_IDLE_FRAMES);
      file_import_unref (it->second);
      it = imports->files.erase (it);
    } else {
      ++it;
    }
  }
}

/* Why a file could not be imported */
enum class ImportResult
{
  OK,
  OVER_LIMIT,                   /* not now: other memory may go */
  FAILED,                       /* not this file: copy its frames */
};

/* Maps the file of @fd, @length bytes, and registers the mapping when
 * @device_id is a GPU's */
static ImportResult
map_file (int fd, gsize length, int device_id, guint64 max_registered_bytes,
    FileImport * f, gsize * registered_now)
{
  void *p = mmap (nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    p = mmap (nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    GST_DEBUG ("cannot map %" G_GSIZE_FORMAT " bytes of fd %d: %s", length,
        fd, g_strerror (errno));
    return ImportResult::FAILED;
  }
  f->map = (guint8 *) p;
  f->length = length;
  f->device_id = device_id;
  if (device_id < 0)
    return ImportResult::OK;

#if GST_ZC_HAVE_CUDA
  gst_zc::DeviceScope scope (device_id);
  switch (gst_zc_host_register (f->map, length, max_registered_bytes,
          &f->device)) {
    case GST_ZC_HOST_REGISTERED:
      f->registered = true;
      if (registered_now)
        *registered_now = length;
      return ImportResult::OK;
    case GST_ZC_HOST_OVER_LIMIT:
      return ImportResult::OVER_LIMIT;
    case GST_ZC_HOST_REFUSED:
      /* kept, so that its frames are copied without trying again */
      f->refused = true;
      return ImportResult::OK;
  }
  return ImportResult::FAILED;
#else
  (void) max_registered_bytes;
  (void) registered_now;
  return ImportResult::FAILED;
#endif
}

static void
file_import_release (gpointer data)
{
  file_import_unref (static_cast < FileImport * >(data));
}

/**
 * gst_zc_buffer_import_fd: (skip)
 * @allocator: a #GstZcAllocator of mapped memory (with a GPU) or of system
 *   memory (the CPU backend): the wrapper's
 * @imports: the consumer's table of files (gst_zc_fd_imports_new())
 * @buffer: a buffer of one #GstFdMemory (gst_zc_buffer_is_fd())
 * @max_registered_bytes: leave @buffer alone if registering its file would
 *   take the bytes this process has registered at once beyond this
 * @registered_now: (out) (optional): the bytes this call registered, 0
 *   when the file was registered before
 *
 * Uses a frame received from another process where it lies: the first
 * frame of a file maps the whole file (and registers the mapping with CUDA
 * where there is a GPU), later frames of the same file, by its identity,
 * reuse both. Nothing is mapped or registered per frame after that.
 *
 * Returns: (transfer full) (nullable): a read-only buffer of one
 *   #GstZcMemory over the same bytes with @buffer's metas, holding @buffer
 *   until no buffer holds the wrapper and the GPU work fenced on it is
 *   done; %NULL where @buffer cannot be imported (copy it)
 */
GstBuffer *
gst_zc_buffer_import_fd (GstAllocator * allocator, GstZcFdImports * imports,
    GstBuffer * buffer, guint64 max_registered_bytes, gsize * registered_now)
{
  g_return_val_if_fail (GST_IS_ZC_ALLOCATOR (allocator), NULL);
  g_return_val_if_fail (imports != NULL, NULL);
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  if (registered_now)
    *registered_now = 0;
  if (!gst_zc_buffer_is_fd (buffer))
    return NULL;

  auto *zalloc = GST_ZC_ALLOCATOR (allocator);
  GstZcContext *ctx = gst_zc_allocator_get_context (zalloc);
  const GstZcMemoryType type = gst_zc_allocator_get_memory_type (zalloc);
  if (!ctx || (type != GST_ZC_MEMORY_TYPE_MAPPED &&
          type != GST_ZC_MEMORY_TYPE_SYSTEM))
    return NULL;
  const int device_id = type == GST_ZC_MEMORY_TYPE_MAPPED ?
      gst_zc_context_get_device_id (ctx) : -1;

  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  const int fd = gst_fd_memory_get_fd (mem);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) != 0 || st.st_size <= 0)
    return NULL;
  /* the memory's bytes in the file: a GstFdMemory maps the file from its
   * start, so its offset is the file's */
  const gsize offset = mem->offset;
  const gsize size = mem->size;
  if (offset + size > (gsize) st.st_size)
    return NULL;

  FileImport *file;
  GstZcRecycled *rec;
  {
    std::lock_guard < std::mutex > lk (imports->lock);
    imports->clock++;
    const FileKey key (st.st_dev, st.st_ino);
    auto it = imports->files.find (key);
    if (it != imports->files.end () && (it->second->length < offset + size ||
            it->second->device_id != device_id)) {
      /* the file grew, or another device's: map it again */
      file_import_unref (it->second);
      imports->files.erase (it);
      it = imports->files.end ();
    }
    if (it == imports->files.end ()) {
      drop_idle (imports);
      file = new FileImport;
      switch (map_file (fd, (gsize) st.st_size, device_id,
              max_registered_bytes, file, registered_now)) {
        case ImportResult::OK:
          break;
        case ImportResult::OVER_LIMIT:
          munmap (file->map, file->length);
          delete file;
          return NULL;
        case ImportResult::FAILED:
          delete file;
          return NULL;
      }
      imports->files[key] = file;
      GST_DEBUG ("file %" G_GUINT64_FORMAT ": %" G_GSIZE_FORMAT " bytes "
          "mapped at %p%s", (guint64) st.st_ino, file->length, file->map,
          file->registered ? ", registered" : "");
    } else {
      file = it->second;
    }
    file->last_use = imports->clock;
    if (file->refused)
      return NULL;
    file->refs++;
    auto &slot = file->recycled[std::make_pair (offset, size)];
    if (!slot)
      slot = gst_zc_recycled_new ();
    rec = slot;
  }

  /* the received buffer, and the file's mapping, until the frame is done */
  GstZcHeldFrame held;
  memset (&held, 0, sizeof (held));
  held.buffer = gst_buffer_ref (buffer);
  held.release_extra = file_import_release;
  held.extra = file;
  return gst_zc_recycled_wrap (rec, allocator, file->map + offset,
      file->registered ? file->device + offset : NULL, size, buffer, &held,
      NULL);
}

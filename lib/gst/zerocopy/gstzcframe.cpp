/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:gstzcframe
 * @title: GstZcFrame
 * @short_description: A video frame's planes for NumPy, PyTorch and CUDA
 *   array consumers, in place
 *
 * gst_zc_frame_map() maps a buffer's planes for the CPU: each plane's
 * address, stride and layout (rows, columns, channels, bytes a sample) are
 * what `__array_interface__` and DLPack describe. A CPU map waits for the
 * GPU work fenced on the frame's memory, as gst_memory_map() does.
 *
 * gst_zc_frame_new_for_gpu() maps nothing: its planes' device addresses are
 * for the caller's kernels. gst_zc_frame_wait_on_stream() orders the
 * caller's stream after the GPU work already fenced on the frame, without
 * blocking the host; gst_zc_frame_record_on_stream() fences the frame after
 * the caller's work, so the next element waits for it.
 *
 * A write map asks for each memory to be writable (held by this buffer
 * alone), not the buffer: a language binding holds a reference of its own
 * on the buffer a pad probe sees, and the frame is written in place there,
 * as a C probe would.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcframe.h"
#include "gstzcmemory.h"

GST_DEBUG_CATEGORY_STATIC (gst_zc_frame_debug);
#define GST_CAT_DEFAULT gst_zc_frame_debug

struct _GstZcFrame
{
  gint ref_count;
  GstBuffer *buffer;
  GstVideoInfo info;
  gboolean mapped;
  gboolean writable;
  guint n_mems;
  GstMapInfo maps[GST_VIDEO_MAX_PLANES];
  /* per plane: which memory, the offset inside it, the stride */
  guint plane_mem[GST_VIDEO_MAX_PLANES];
  gsize plane_skip[GST_VIDEO_MAX_PLANES];
  gint stride[GST_VIDEO_MAX_PLANES];
};

G_DEFINE_BOXED_TYPE_WITH_CODE (GstZcFrame, gst_zc_frame, gst_zc_frame_ref,
    gst_zc_frame_unref, GST_DEBUG_CATEGORY_INIT (gst_zc_frame_debug, "zcframe",
        0, "gst-zerocopy frames for language bindings"));

/* Finds each plane's memory and offset in it, from the buffer's video meta
 * or @info's layout. */
static gboolean
locate_planes (GstZcFrame * f, GError ** error)
{
  GstVideoMeta *meta = gst_buffer_get_video_meta (f->buffer);
  const guint n_planes = GST_VIDEO_INFO_N_PLANES (&f->info);
  f->n_mems = gst_buffer_n_memory (f->buffer);
  if (f->n_mems == 0 || f->n_mems > GST_VIDEO_MAX_PLANES) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
        "a buffer of %u memories cannot be a frame here", f->n_mems);
    return FALSE;
  }
  if (meta && meta->n_planes != n_planes) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS,
        "the buffer's video meta has %u planes, the caps %u", meta->n_planes,
        n_planes);
    return FALSE;
  }
  for (guint p = 0; p < n_planes; p++) {
    const gsize offset = meta ? meta->offset[p] :
        GST_VIDEO_INFO_PLANE_OFFSET (&f->info, p);
    const gint stride = meta ? meta->stride[p] :
        GST_VIDEO_INFO_PLANE_STRIDE (&f->info, p);
    guint rows, cols, ch, sb;
    f->stride[p] = stride;
    gst_zc_frame_get_plane_layout (f, p, &rows, &cols, &ch, &sb);
    const gsize bytes = (gsize) stride * (rows - 1) + (gsize) cols * ch * sb;
    guint idx, len;
    gsize skip;
    if (!gst_buffer_find_memory (f->buffer, offset, bytes, &idx, &len, &skip)
        || len != 1) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
          "plane %u (%" G_GSIZE_FORMAT " bytes at %" G_GSIZE_FORMAT
          ") is not inside one memory of the buffer (%" G_GSIZE_FORMAT
          " bytes)", p, bytes, offset, gst_buffer_get_size (f->buffer));
      return FALSE;
    }
    f->plane_mem[p] = idx;
    f->plane_skip[p] = skip;
  }
  return TRUE;
}

static GstZcFrame *
frame_new (GstBuffer * buffer, const GstVideoInfo * info, gboolean writable,
    GError ** error)
{
  GstZcFrame *f = g_new0 (GstZcFrame, 1);
  f->ref_count = 1;
  f->buffer = gst_buffer_ref (buffer);
  f->info = *info;
  f->writable = writable;
  if (!locate_planes (f, error)) {
    gst_zc_frame_unref (f);
    return NULL;
  }
  if (writable) {
    for (guint i = 0; i < f->n_mems; i++) {
      /* not gst_memory_is_writable(): it asks the buffer's refcount too */
      GstMemory *mem = gst_buffer_peek_memory (buffer, i);
      const gboolean ok = !GST_MEMORY_IS_READONLY (mem) &&
          gst_memory_lock (mem, GST_LOCK_FLAG_WRITE);
      if (ok)
        gst_memory_unlock (mem, GST_LOCK_FLAG_WRITE);
      if (!ok) {
        g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_AUTHORIZED,
            "memory %u of the buffer is read-only or shared with another "
            "buffer: map it for reading, or write into a copy", i);
        gst_zc_frame_unref (f);
        return NULL;
      }
    }
  }
  return f;
}

/**
 * gst_zc_frame_map:
 * @buffer: a buffer holding a frame described by @info
 * @info: the frame's layout (from the caps); the buffer's #GstVideoMeta,
 *   where it has one, gives the planes' offsets and strides
 * @flags: %GST_MAP_READ, or %GST_MAP_READ | %GST_MAP_WRITE
 * @error: (allow-none): where a reason goes
 *
 * Maps @buffer's memories for the CPU, after the GPU work fenced on them,
 * and keeps @buffer alive and mapped until the frame's last reference goes.
 * Device memory is copied into pinned memory for the CPU, and back after a
 * write map: the one kind that is not seen in place.
 *
 * Returns: (transfer full) (nullable): the frame, or %NULL with @error set
 */
GstZcFrame *
gst_zc_frame_map (GstBuffer * buffer, const GstVideoInfo * info,
    GstMapFlags flags, GError ** error)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  g_return_val_if_fail (info != NULL, NULL);
  GstZcFrame *f = frame_new (buffer, info, (flags & GST_MAP_WRITE) != 0,
      error);
  if (!f)
    return NULL;
  for (guint i = 0; i < f->n_mems; i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);
    if (!gst_memory_map (mem, &f->maps[i], flags)) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
          "memory %u of the buffer could not be mapped%s (the log of the "
          "zcmemory category says why)", i,
          (flags & GST_MAP_WRITE) ? " for writing" : "");
      for (guint j = 0; j < i; j++)
        gst_memory_unmap (gst_buffer_peek_memory (buffer, j), &f->maps[j]);
      f->n_mems = 0;
      gst_zc_frame_unref (f);
      return NULL;
    }
  }
  f->mapped = TRUE;
  return f;
}

/**
 * gst_zc_frame_new_for_gpu:
 * @buffer: a buffer of #GstZcMemory on a GPU
 * @info: the frame's layout (from the caps)
 * @writable: whether the caller's kernels write the frame
 * @error: (allow-none): where a reason goes
 *
 * A frame whose planes' device addresses are for the caller's kernels,
 * with nothing mapped for the CPU. Before the kernels, order their stream
 * with gst_zc_frame_wait_on_stream(); after them, fence the frame with
 * gst_zc_frame_record_on_stream().
 *
 * Returns: (transfer full) (nullable): the frame, or %NULL with @error set
 *   (system memory, or memory that is not a #GstZcMemory)
 */
GstZcFrame *
gst_zc_frame_new_for_gpu (GstBuffer * buffer, const GstVideoInfo * info,
    gboolean writable, GError ** error)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  g_return_val_if_fail (info != NULL, NULL);
  for (guint i = 0; i < gst_buffer_n_memory (buffer); i++) {
    GstMemory *mem = gst_buffer_peek_memory (buffer, i);
    if (!gst_is_zc_memory (mem)) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
          "the frame is in %s memory, which no GPU addresses: put zcupload "
          "before this point (caps feature memory:CUDAZeroCopy)",
          mem->allocator ? mem->allocator->mem_type : "unknown");
      return NULL;
    }
    if (gst_zc_memory_get_memory_type ((GstZcMemory *) mem) ==
        GST_ZC_MEMORY_TYPE_SYSTEM) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
          "the frame is in system memory of the CPU backend (no CUDA device): "
          "no GPU addresses it");
      return NULL;
    }
  }
  return frame_new (buffer, info, writable, error);
}

/**
 * gst_zc_frame_ref:
 * @frame: a #GstZcFrame
 *
 * Returns: (transfer full): @frame
 */
GstZcFrame *
gst_zc_frame_ref (GstZcFrame * frame)
{
  g_return_val_if_fail (frame != NULL, NULL);
  g_atomic_int_inc (&frame->ref_count);
  return frame;
}

/**
 * gst_zc_frame_unref:
 * @frame: (transfer full): a #GstZcFrame
 *
 * Drops a reference; the last one unmaps the buffer and lets it go.
 */
void
gst_zc_frame_unref (GstZcFrame * frame)
{
  g_return_if_fail (frame != NULL);
  if (!g_atomic_int_dec_and_test (&frame->ref_count))
    return;
  if (frame->mapped) {
    for (guint i = 0; i < frame->n_mems; i++)
      gst_memory_unmap (gst_buffer_peek_memory (frame->buffer, i),
          &frame->maps[i]);
  }
  gst_buffer_unref (frame->buffer);
  g_free (frame);
}

/**
 * gst_zc_frame_get_buffer:
 * @frame: a #GstZcFrame
 *
 * Returns: (transfer none): the frame's buffer
 */
GstBuffer *
gst_zc_frame_get_buffer (GstZcFrame * frame)
{
  g_return_val_if_fail (frame != NULL, NULL);
  return frame->buffer;
}

/**
 * gst_zc_frame_is_mapped:
 * @frame: a #GstZcFrame
 *
 * Returns: whether the planes are mapped for the CPU (gst_zc_frame_map())
 */
gboolean
gst_zc_frame_is_mapped (GstZcFrame * frame)
{
  g_return_val_if_fail (frame != NULL, FALSE);
  return frame->mapped;
}

/**
 * gst_zc_frame_is_writable:
 * @frame: a #GstZcFrame
 *
 * Returns: whether the frame was mapped, or made for the GPU, for writing
 */
gboolean
gst_zc_frame_is_writable (GstZcFrame * frame)
{
  g_return_val_if_fail (frame != NULL, FALSE);
  return frame->writable;
}

/**
 * gst_zc_frame_get_n_planes:
 * @frame: a #GstZcFrame
 *
 * Returns: the number of planes
 */
guint
gst_zc_frame_get_n_planes (GstZcFrame * frame)
{
  g_return_val_if_fail (frame != NULL, 0);
  return GST_VIDEO_INFO_N_PLANES (&frame->info);
}

/**
 * gst_zc_frame_get_plane_data:
 * @frame: a #GstZcFrame
 * @plane: a plane index
 *
 * Returns: the CPU address of the plane's first sample; 0 for a frame made
 *   with gst_zc_frame_new_for_gpu()
 */
guintptr
gst_zc_frame_get_plane_data (GstZcFrame * frame, guint plane)
{
  g_return_val_if_fail (frame != NULL, 0);
  g_return_val_if_fail (plane < gst_zc_frame_get_n_planes (frame), 0);
  if (!frame->mapped)
    return 0;
  return (guintptr) (frame->maps[frame->plane_mem[plane]].data +
      frame->plane_skip[plane]);
}

/**
 * gst_zc_frame_get_plane_stride:
 * @frame: a #GstZcFrame
 * @plane: a plane index
 *
 * Returns: the bytes from one row of the plane to the next
 */
gint
gst_zc_frame_get_plane_stride (GstZcFrame * frame, guint plane)
{
  g_return_val_if_fail (frame != NULL, 0);
  g_return_val_if_fail (plane < gst_zc_frame_get_n_planes (frame), 0);
  return frame->stride[plane];
}

/**
 * gst_zc_frame_get_plane_layout:
 * @frame: a #GstZcFrame
 * @plane: a plane index
 * @rows: (out): the plane's rows
 * @columns: (out): its samples a row, per channel (pixels, or 4:2:x chroma
 *   pairs)
 * @channels: (out): the samples a column (4 for RGBA, 2 for NV12's chroma
 *   and for YUY2, 1 for a plane of one component)
 * @sample_bytes: (out): the bytes a sample (2 for GRAY16 and P010)
 *
 * The plane as an array of rows x columns x channels samples, rows
 * gst_zc_frame_get_plane_stride() bytes apart.
 */
void
gst_zc_frame_get_plane_layout (GstZcFrame * frame, guint plane, guint * rows,
    guint * columns, guint * channels, guint * sample_bytes)
{
  g_return_if_fail (frame != NULL);
  g_return_if_fail (plane < gst_zc_frame_get_n_planes (frame));
  const GstVideoInfo *info = &frame->info;
  /* the plane's widest component sets the columns: Y of YUY2, U of NV12 */
  gint comp = -1;
  for (gint c = 0; c < (gint) GST_VIDEO_INFO_N_COMPONENTS (info); c++) {
    if (GST_VIDEO_INFO_COMP_PLANE (info, c) != plane)
      continue;
    if (comp < 0 || GST_VIDEO_INFO_COMP_WIDTH (info, c) >
        GST_VIDEO_INFO_COMP_WIDTH (info, comp))
      comp = c;
  }
  g_assert (comp >= 0);
  const guint sb = (GST_VIDEO_INFO_COMP_DEPTH (info, comp) + 7) / 8;
  const guint pstride = GST_VIDEO_INFO_COMP_PSTRIDE (info, comp);
  *rows = GST_VIDEO_INFO_COMP_HEIGHT (info, comp);
  *columns = GST_VIDEO_INFO_COMP_WIDTH (info, comp);
  *sample_bytes = sb;
  *channels = pstride / sb;
}

static GstZcMemory *
plane_memory (GstZcFrame * frame, guint plane)
{
  GstMemory *mem = gst_buffer_peek_memory (frame->buffer,
      frame->plane_mem[plane]);
  return gst_is_zc_memory (mem) ? (GstZcMemory *) mem : NULL;
}

/**
 * gst_zc_frame_get_memory_type:
 * @frame: a #GstZcFrame
 *
 * Returns: the kind of memory the frame's first plane is in;
 *   %GST_ZC_MEMORY_TYPE_SYSTEM also for memory that is not a #GstZcMemory
 */
GstZcMemoryType
gst_zc_frame_get_memory_type (GstZcFrame * frame)
{
  g_return_val_if_fail (frame != NULL, GST_ZC_MEMORY_TYPE_SYSTEM);
  GstZcMemory *mem = plane_memory (frame, 0);
  return mem ? gst_zc_memory_get_memory_type (mem) : GST_ZC_MEMORY_TYPE_SYSTEM;
}

/**
 * gst_zc_frame_get_device_id:
 * @frame: a #GstZcFrame
 *
 * Returns: the CUDA device of the frame's memory, -1 where no GPU
 *   addresses it
 */
gint
gst_zc_frame_get_device_id (GstZcFrame * frame)
{
  g_return_val_if_fail (frame != NULL, -1);
  GstZcMemory *mem = plane_memory (frame, 0);
  if (!mem || gst_zc_memory_get_memory_type (mem) == GST_ZC_MEMORY_TYPE_SYSTEM)
    return -1;
  return gst_zc_memory_get_device_id (mem);
}

/**
 * gst_zc_frame_get_plane_device_data:
 * @frame: a #GstZcFrame
 * @plane: a plane index
 * @error: (allow-none): where a reason goes
 *
 * Returns: the address the GPU reaches the plane's first sample at, or 0
 *   with @error set where no GPU addresses the frame's memory
 */
guintptr
gst_zc_frame_get_plane_device_data (GstZcFrame * frame, guint plane,
    GError ** error)
{
  g_return_val_if_fail (frame != NULL, 0);
  g_return_val_if_fail (plane < gst_zc_frame_get_n_planes (frame), 0);
  GstZcMemory *mem = plane_memory (frame, plane);
  if (!mem || gst_zc_memory_get_memory_type (mem) == GST_ZC_MEMORY_TYPE_SYSTEM) {
    g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
        "plane %u is in memory no GPU addresses (%s)", plane,
        mem ? "system memory of the CPU backend" : "not a GstZcMemory");
    return 0;
  }
  return (guintptr) gst_zc_memory_get_device_pointer (mem) +
      frame->plane_skip[plane];
}

/* Calls @fn on each distinct GPU memory of the frame. */
static gboolean
for_each_gpu_memory (GstZcFrame * frame, gpointer stream,
    gboolean (*fn) (GstZcMemory *, gpointer), const gchar * what,
    GError ** error)
{
  for (guint i = 0; i < gst_buffer_n_memory (frame->buffer); i++) {
    GstMemory *m = gst_buffer_peek_memory (frame->buffer, i);
    if (!gst_is_zc_memory (m) ||
        gst_zc_memory_get_memory_type ((GstZcMemory *) m) ==
        GST_ZC_MEMORY_TYPE_SYSTEM) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND,
          "memory %u of the frame is not on a GPU: nothing to %s", i, what);
      return FALSE;
    }
    if (!fn ((GstZcMemory *) m, stream)) {
      g_set_error (error, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED,
          "a CUDA call failed to %s (the log of the zcmemory category has "
          "its error)", what);
      return FALSE;
    }
  }
  return TRUE;
}

/**
 * gst_zc_frame_wait_on_stream:
 * @frame: a #GstZcFrame
 * @stream: the caller's `cudaStream_t`, 0 for the legacy default stream
 * @error: (allow-none): where a reason goes
 *
 * Orders @stream after the GPU work fenced on the frame (and brings managed
 * memory to the GPU), without blocking the host. Call it before the
 * caller's kernels read or write the frame.
 *
 * Returns: %TRUE, or %FALSE with @error set
 */
gboolean
gst_zc_frame_wait_on_stream (GstZcFrame * frame, guintptr stream,
    GError ** error)
{
  g_return_val_if_fail (frame != NULL, FALSE);
  return for_each_gpu_memory (frame, (gpointer) stream,
      gst_zc_memory_prepare_gpu, "wait for", error);
}

/**
 * gst_zc_frame_record_on_stream:
 * @frame: a #GstZcFrame
 * @stream: the `cudaStream_t` the caller's kernels ran on
 * @error: (allow-none): where a reason goes
 *
 * Fences the frame after the work queued on @stream: the next element, and
 * any CPU map, waits for it. Call it after the caller's kernels, reads
 * included.
 *
 * Returns: %TRUE, or %FALSE with @error set
 */
gboolean
gst_zc_frame_record_on_stream (GstZcFrame * frame, guintptr stream,
    GError ** error)
{
  g_return_val_if_fail (frame != NULL, FALSE);
  return for_each_gpu_memory (frame, (gpointer) stream,
      gst_zc_memory_set_gpu_fence, "fence", error);
}

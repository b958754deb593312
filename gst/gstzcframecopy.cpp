/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * What GstZcBaseTransform does with the bytes of a frame: checks that an
 * input buffer holds the frame its caps promise, copies a frame between
 * memories (the copy engines where a side is device memory, the CPU
 * otherwise), and wraps foreign memory (host memory zcupload adopts,
 * nvcodec's output frames) so kernels and copies address it like the
 * element's own.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcframecopy.h"
#include "gstzcbasetransform-private.h"
#include "gstzcgpuerror.h"
#include "gstzcvideoplane.h"

#include <gst/zerocopy/gstzcgpupasses-private.h>

#include <cstring>
#include <mutex>

#define GST_CAT_DEFAULT gst_zc_base_transform_debug

/**
 * gst_zc_base_transform_check_input:
 * @inbuf: a buffer that arrived on the sink pad
 *
 * Checks, before any kernel or copy touches it, that @inbuf holds a whole
 * frame of the negotiated input caps: every plane, at the offset and stride
 * its #GstVideoMeta (or the caps) give, ends inside the buffer.
 *
 * Returns: %GST_FLOW_OK, or %GST_FLOW_ERROR with one element error posted
 * that says how short the buffer is
 */
GstFlowReturn
gst_zc_base_transform_check_input (GstZcBaseTransform * self,
    GstBuffer * inbuf)
{
  auto *priv = get_priv (self);
  const GstVideoInfo *info = &priv->in_info;
  gsize size = gst_buffer_get_size (inbuf);
  GstVideoMeta *meta = gst_buffer_get_video_meta (inbuf);
  guint n = GST_VIDEO_INFO_N_PLANES (info);
  gsize need = 0;
  guint worst = 0;

  /* as gst_video_frame_map() has it: the meta's planes are the format's,
   * and it may describe a larger (padded) frame, not a smaller one */
  if (meta && (meta->n_planes != n ||
          meta->width < (guint) GST_VIDEO_INFO_WIDTH (info) ||
          meta->height < (guint) GST_VIDEO_INFO_HEIGHT (info))) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT,
        ("Buffer's video meta does not match the caps: %ux%u with %u "
            "plane(s), the caps say %dx%d %s", meta->width, meta->height,
            meta->n_planes, GST_VIDEO_INFO_WIDTH (info),
            GST_VIDEO_INFO_HEIGHT (info), GST_VIDEO_INFO_NAME (info)),
        ("%" GST_PTR_FORMAT, inbuf));
    return GST_FLOW_ERROR;
  }
  for (guint p = 0; p < n; p++) {
    gsize off, stride;
    gst_zc_video_plane_layout (inbuf, info, p, &off, &stride);
    guint32 rows = gst_zc_video_plane_rows (info, p);
    guint32 row = gst_zc_video_plane_row_bytes (info, p);
    if (rows == 0)
      continue;
    /* in 64 bits: a meta can hold any offset and stride */
    guint64 end = (guint64) off + (guint64) stride * (rows - 1) + row;
    if (stride < row)
      end = G_MAXUINT64;
    if (end > need) {
      need = (gsize) MIN (end, (guint64) G_MAXSIZE);
      worst = p;
    }
  }
  if (need <= size)
    return GST_FLOW_OK;
  GST_ELEMENT_ERROR (self, STREAM, FORMAT,
      ("Buffer too small for its caps: %" G_GSIZE_FORMAT " bytes, but a "
          "%dx%d %s frame%s needs %" G_GSIZE_FORMAT, size,
          GST_VIDEO_INFO_WIDTH (info), GST_VIDEO_INFO_HEIGHT (info),
          GST_VIDEO_INFO_NAME (info), meta ? " with this buffer's video meta"
          : "", need),
      ("plane %u ends past the end of the buffer; refusing it before any "
          "kernel or copy reads it", worst));
  return GST_FLOW_ERROR;
}

/**
 * gst_zc_buffer_gpu_memory:
 * @device: a CUDA device
 *
 * Returns: (transfer none) (nullable): the GPU memory (not system memory)
 *   of @device that is all of @buf, or %NULL
 */
GstZcMemory *
gst_zc_buffer_gpu_memory (GstBuffer * buf, gint device)
{
  if (gst_buffer_n_memory (buf) != 1)
    return NULL;
  GstMemory *m = gst_buffer_peek_memory (buf, 0);
  if (!gst_is_zc_memory (m))
    return NULL;
  auto *zm = (GstZcMemory *) m;
  if (gst_zc_memory_get_memory_type (zm) == GST_ZC_MEMORY_TYPE_SYSTEM ||
      gst_zc_memory_get_device_id (zm) != device)
    return NULL;
  return zm;
}

/* Whether @buf is one memory of device type */
gboolean
gst_zc_buffer_is_device_memory (GstBuffer * buf)
{
  GstMemory *m = gst_buffer_peek_memory (buf, 0);
  return gst_buffer_n_memory (buf) == 1 && gst_is_zc_memory (m) &&
      gst_zc_memory_get_memory_type ((GstZcMemory *) m) ==
      GST_ZC_MEMORY_TYPE_DEVICE;
}

/**
 * gst_zc_buffer_gpu_writable:
 *
 * Whether a kernel may write @buf in place: nobody else holds the buffer or
 * its memory, and no memory is read-only. GStreamer's writability leaves
 * the last out (it only stops write maps), and kernels write through device
 * pointers without a map: foreign memory registered read-only with CUDA
 * (adopted by zcupload) or a decoder's frame would fault or be changed
 * under its owner.
 */
gboolean
gst_zc_buffer_gpu_writable (GstBuffer * buf)
{
  if (!gst_buffer_is_writable (buf) || !gst_buffer_is_all_memory_writable (buf))
    return FALSE;
  for (guint i = 0; i < gst_buffer_n_memory (buf); i++) {
    if (GST_MEMORY_IS_READONLY (gst_buffer_peek_memory (buf, i)))
      return FALSE;
  }
  return TRUE;
}

/**
 * gst_zc_base_transform_copy_frame_gpu:
 * @inbuf: a frame of the input caps: GPU memory of this device, or any
 *   CPU-mappable buffer
 * @outbuf: a frame of the same format and size in GPU memory of this device
 *
 * Copies a frame with the copy engines, plane by plane (strides may differ),
 * on the element's stream: after the fences of both frames, and fencing both.
 * The host does not wait, except for a foreign input in pinned memory, which
 * the caller may release as soon as this returns.
 *
 * Returns: %FALSE with an element error posted on failure
 */
static gboolean
gst_zc_base_transform_copy_frame_gpu (GstZcBaseTransform * self,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  auto *priv = get_priv (self);
  /* not const: gst_video_frame_map() takes a non-const info before 1.20 */
  GstVideoInfo *info = &priv->in_info;
  gint dev = gst_zc_context_get_device_id (priv->context);
  GstZcMemory *in_mem = gst_zc_buffer_gpu_memory (inbuf, dev);
  GstZcMemory *out_mem = gst_zc_buffer_gpu_memory (outbuf, dev);
  GstVideoFrame in_frame;

  if (!out_mem || !priv->stream) {
    GST_ELEMENT_ERROR (self, CORE, FAILED,
        ("Internal error: GPU copy into memory that is not this device's"),
        (NULL));
    return FALSE;
  }
  if (!in_mem && !gst_video_frame_map (&in_frame, info, inbuf, GST_MAP_READ)) {
    GST_ELEMENT_ERROR (self, RESOURCE, READ, ("Could not map input frame"),
        (NULL));
    return FALSE;
  }

  GstZcGpuPlaneCopy planes[GST_VIDEO_MAX_PLANES];
  guint n = GST_VIDEO_INFO_N_PLANES (info);
  auto *dst = (guint8 *) gst_zc_memory_get_device_pointer (out_mem);
  const guint8 *src = in_mem ?
      (const guint8 *) gst_zc_memory_get_device_pointer (in_mem) : NULL;
  for (guint i = 0; i < n; i++) {
    gsize in_off = 0, out_off;
    GstZcGpuPlaneCopy & p = planes[i];
    gst_zc_video_plane_layout (outbuf, info, i, &out_off, &p.dst_stride);
    p.dst = dst + out_off;
    if (in_mem) {
      gst_zc_video_plane_layout (inbuf, info, i, &in_off, &p.src_stride);
      p.src = src + in_off;
    } else {
      p.src = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&in_frame, i);
      p.src_stride = GST_VIDEO_FRAME_PLANE_STRIDE (&in_frame, i);
    }
    p.row_bytes = gst_zc_video_plane_row_bytes (info, i);
    p.rows = gst_zc_video_plane_rows (info, i);
  }
  GstZcGpuResult r;
  gboolean copied = gst_zc_gpu_copy_planes (dev, priv->stream, in_mem,
      out_mem, planes, n, &r);
  if (!in_mem)
    gst_video_frame_unmap (&in_frame);
  if (!copied) {
    gst_zc_post_gpu_error (GST_ELEMENT (self), r.what, r.name, r.detail);
    return FALSE;
  }
  return TRUE;
}

/**
 * gst_zc_base_transform_copy_frame:
 * @inbuf: a frame of the input caps
 * @outbuf: a frame of the same format and size
 *
 * Copies @inbuf into @outbuf and counts it in the stats as a copy: with the
 * copy engines, on the stream and fenced, when either side is device memory;
 * otherwise on the CPU through frame maps (which wait on the fences),
 * honouring both frames' strides.
 *
 * Returns: %GST_FLOW_OK, or %GST_FLOW_ERROR with an element error posted
 */
GstFlowReturn
gst_zc_base_transform_copy_frame (GstZcBaseTransform * self,
    GstBuffer * inbuf, GstBuffer * outbuf)
{
  auto *priv = get_priv (self);
  GstVideoFrame in_frame, out_frame;

  if (priv->stream && (gst_zc_buffer_is_device_memory (inbuf) ||
          gst_zc_buffer_is_device_memory (outbuf))) {
    if (!gst_zc_base_transform_copy_frame_gpu (self, inbuf, outbuf))
      return GST_FLOW_ERROR;
  } else {
    if (!gst_video_frame_map (&in_frame, &priv->in_info, inbuf,
            GST_MAP_READ)) {
      GST_ELEMENT_ERROR (self, RESOURCE, READ,
          ("Could not map the input frame for the CPU"),
          ("%" GST_PTR_FORMAT "; GPU work on it may have failed, see "
              "GST_DEBUG=zcmemory:2", inbuf));
      return GST_FLOW_ERROR;
    }
    if (!gst_video_frame_map (&out_frame, &priv->out_info, outbuf,
            GST_MAP_WRITE)) {
      gst_video_frame_unmap (&in_frame);
      GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
          ("Could not map the output frame"), (NULL));
      return GST_FLOW_ERROR;
    }
    /* Row by row over the bytes gst_zc_video_plane_row_bytes() counts:
     * gst_video_frame_copy() leaves out the last chroma pair of an odd
     * width of packed 4:2:2 */
    gboolean ok = GST_VIDEO_FRAME_N_PLANES (&in_frame) ==
        GST_VIDEO_FRAME_N_PLANES (&out_frame);
    for (guint p = 0; ok && p < GST_VIDEO_FRAME_N_PLANES (&in_frame); p++) {
      guint32 row = gst_zc_video_plane_row_bytes (&priv->in_info, p);
      guint32 rows = gst_zc_video_plane_rows (&priv->in_info, p);
      const guint8 *s = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA
          (&in_frame, p);
      guint8 *d = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&out_frame, p);
      gint ss = GST_VIDEO_FRAME_PLANE_STRIDE (&in_frame, p);
      gint ds = GST_VIDEO_FRAME_PLANE_STRIDE (&out_frame, p);
      for (guint32 y = 0; y < rows; y++)
        memcpy (d + (gsize) y * ds, s + (gsize) y * ss, row);
    }
    gst_video_frame_unmap (&out_frame);
    gst_video_frame_unmap (&in_frame);
    if (!ok) {
      GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Could not copy the frame"),
          (NULL));
      return GST_FLOW_ERROR;
    }
  }
  gst_zc_base_transform_count_buffer (self,
      GST_VIDEO_INFO_SIZE (&priv->out_info));
  return GST_FLOW_OK;
}

/**
 * gst_zc_base_transform_count_buffer:
 * @bytes_copied: bytes the CPU copied for this buffer, 0 for zero-copy
 */
void
gst_zc_base_transform_count_buffer (GstZcBaseTransform * self,
    gsize bytes_copied)
{
  auto *priv = get_priv (self);
  std::lock_guard < std::mutex > lk (priv->lock);
  priv->stats.buffers++;
  if (bytes_copied) {
    priv->stats.copied_buffers++;
    priv->stats.bytes_copied += bytes_copied;
  } else {
    priv->stats.zero_copy_buffers++;
  }
}

/* Bytes a kernel pass read through the copy engines into device memory
 * instead of over the bus from the kernel itself: the frame still crosses
 * the bus once, so this is not a frame copy (copied-buffers), but stats
 * show it. */
void
gst_zc_base_transform_count_staged (GstZcBaseTransform * self, gsize bytes)
{
  auto *priv = get_priv (self);
  std::lock_guard < std::mutex > lk (priv->lock);
  priv->stats.bytes_staged += bytes;
}

/* Whether the sink (in) or source (out) pad's caps are memory:CUDAMemory */
gboolean
gst_zc_base_transform_in_cuda_memory (GstZcBaseTransform * self)
{
  return get_priv (self)->in_cuda;
}

gboolean
gst_zc_base_transform_out_cuda_memory (GstZcBaseTransform * self)
{
  return get_priv (self)->out_cuda;
}

GstAllocator *
gst_zc_base_transform_get_wrap_allocator (GstZcBaseTransform * self,
    GstZcMemoryType memory_type)
{
  auto *priv = get_priv (self);
  return memory_type == GST_ZC_MEMORY_TYPE_DEVICE ? priv->wrap_device :
      priv->wrap_host;
}

/**
 * gst_zc_base_transform_count_adopted:
 * @registered: bytes registered with CUDA for this frame (0 when its memory
 *   was registered before)
 *
 * Counts a foreign host frame that is used in place (no copy).
 */
void
gst_zc_base_transform_count_adopted (GstZcBaseTransform * self,
    gsize registered)
{
  auto *priv = get_priv (self);
  std::lock_guard < std::mutex > lk (priv->lock);
  priv->stats.adopted_buffers++;
  if (registered) {
    priv->stats.registrations++;
    priv->stats.bytes_registered += registered;
  }
}

/**
 * gst_zc_base_transform_import_output:
 * @outbuf: an output frame of one GstCudaMemory of the shared context
 *
 * The view of @outbuf that kernels and copies write: a device #GstZcMemory
 * over the same bytes. Give it back with
 * gst_zc_base_transform_release_output() before @outbuf leaves.
 *
 * Returns: (transfer full) (nullable): the view, or %NULL with an element
 *   error posted
 */
GstBuffer *
gst_zc_base_transform_import_output (GstZcBaseTransform * self,
    GstBuffer * outbuf)
{
  auto *priv = get_priv (self);
  GstBuffer *view = priv->wrap_device ?
      gst_zc_buffer_import_cuda (priv->wrap_device, outbuf, TRUE) : NULL;
  if (!view) {
    GST_ELEMENT_ERROR (self, RESOURCE, WRITE,
        ("Could not write the output frame in CUDA memory"),
        ("the output buffer is not one GstCudaMemory of this element's "
            "CUDA context: %" GST_PTR_FORMAT, outbuf));
    return NULL;
  }
  std::lock_guard < std::mutex > lk (priv->lock);
  priv->stats.cuda_memory_buffers++;
  return view;
}

/**
 * gst_zc_base_transform_release_output:
 * @view: (transfer full): what gst_zc_base_transform_import_output() gave
 *
 * Waits until the GPU work written into @view is done, then drops it: the
 * CUDA elements of GStreamer 1.22 read a frame they receive at once, on
 * their own stream, so it must be finished when it leaves.
 *
 * Returns: %GST_FLOW_OK, or %GST_FLOW_ERROR with an element error posted
 */
GstFlowReturn
gst_zc_base_transform_release_output (GstZcBaseTransform * self,
    GstBuffer * view)
{
  auto *mem = (GstZcMemory *) gst_buffer_peek_memory (view, 0);
  gboolean ok = gst_zc_memory_wait_cpu (mem);
  gst_buffer_unref (view);
  if (!ok) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("The GPU work on the output frame failed"),
        ("see GST_DEBUG=zcmemory:2 for the CUDA error"));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

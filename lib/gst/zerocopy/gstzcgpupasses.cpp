/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * The GPU passes of the elements (see gstzcgpupasses-private.h): where the
 * kernels of one frame read and write, what the copy engines move around
 * them, and the device memory, stream and events that takes.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcgpupasses-private.h"
#include "gstzccuda-private.h"
#include "gstzccopysplit-private.h"
#include "gstzcmemory-private.h"

GST_DEBUG_CATEGORY_STATIC (gst_zc_gpu_passes_debug);
#define GST_CAT_DEFAULT gst_zc_gpu_passes_debug

static void
ensure_debug_category (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    GST_DEBUG_CATEGORY_INIT (gst_zc_gpu_passes_debug, "zcgpupasses", 0,
        "zero-copy GPU passes");
    g_once_init_leave (&once, 1);
  }
}

#if GST_ZC_HAVE_CUDA

/* Device frames laid out like a frame description, rows 128-byte aligned,
 * allocated on the first frame that needs them and kept until the caps
 * change (gst_zc_gpu_passes_reset()). */
struct DeviceFrames
{
  guint8 *mem = nullptr;
  gsize frame_bytes = 0;
  guint n_frames = 0;
  zc::PixFmt fmt = zc::PixFmt::RGBA;
  int width = 0, height = 0;
};

/* The copy engines' side of staging a mapped input: a stream of its own and
 * two device frames, so that one frame's copy runs while the kernel
 * converts the one before. copied[k]: the copy into frame k is done (the
 * kernel waits for it); consumed[k]: the kernel that read frame k is done
 * (the next copy into k waits). */
struct Stager
{
  cudaStream_t stream = nullptr;
  cudaEvent_t copied[2] = { nullptr, nullptr };
  cudaEvent_t consumed[2] = { nullptr, nullptr };
  guint next = 0;
};

struct _GstZcGpuPasses
{
  gint device = 0;
  DeviceFrames scratch;         /* frames between passes (output layout) */
  DeviceFrames stage;           /* the input, staged in device memory */
  DeviceFrames unstage;         /* the output, before the copy to mapped */
  Stager stager;
};

static void
frames_release (DeviceFrames & f)
{
  /* cudaFree waits for the work queued on it */
  if (f.mem)
    GST_ZC_CUDA_OK (cudaFree (f.mem));
  f = DeviceFrames ();
}

/* @n frames like @like (format, size) in @f, reallocated when the layout
 * or count grew */
static bool
frames_ensure (DeviceFrames & f, const zc::FrameDesc & like, guint n)
{
  if (f.mem && f.n_frames >= n && f.fmt == like.fmt &&
      f.width == like.width && f.height == like.height)
    return true;
  frames_release (f);
  zc::FrameDesc d = like;
  gsize bytes = gst_zc_frame_layout (like.fmt, like.width, like.height, nullptr, &d);
  void *mem = nullptr;
  if (!GST_ZC_CUDA_OK_OR_FAULT (DEVICE_ALLOC, cudaMalloc (&mem, bytes * n)))
    return false;
  f.mem = (guint8 *) mem;
  f.frame_bytes = bytes;
  f.n_frames = n;
  f.fmt = like.fmt;
  f.width = like.width;
  f.height = like.height;
  GST_DEBUG ("%u device frame(s) of %" G_GSIZE_FORMAT " bytes", n, bytes);
  return true;
}

/* Frame @i of @f, with the colour description of @like */
static zc::FrameDesc
frames_get (const DeviceFrames & f, const zc::FrameDesc & like, guint i)
{
  zc::FrameDesc d = like;
  gst_zc_frame_layout (f.fmt, f.width, f.height, f.mem + i * f.frame_bytes, &d);
  return d;
}

static void
stager_release (Stager & st)
{
  for (guint k = 0; k < 2; k++) {
    /* (released once their work is done) */
    if (st.copied[k])
      GST_ZC_CUDA_OK (cudaEventDestroy (st.copied[k]));
    if (st.consumed[k])
      GST_ZC_CUDA_OK (cudaEventDestroy (st.consumed[k]));
  }
  if (st.stream)
    GST_ZC_CUDA_OK (cudaStreamDestroy (st.stream));
  st = Stager ();
}

static bool
stager_ensure (Stager & st)
{
  if (st.stream)
    return true;
  bool ok = true;
  for (guint k = 0; k < 2 && ok; k++) {
    ok = GST_ZC_CUDA_OK_OR_FAULT (EVENT,
        cudaEventCreateWithFlags (&st.copied[k], cudaEventDisableTiming)) &&
        GST_ZC_CUDA_OK_OR_FAULT (EVENT,
        cudaEventCreateWithFlags (&st.consumed[k], cudaEventDisableTiming));
  }
  if (ok)
    ok = GST_ZC_CUDA_OK_OR_FAULT (STREAM,
        cudaStreamCreateWithFlags (&st.stream, cudaStreamNonBlocking));
  if (!ok)
    stager_release (st);
  return ok;
}

static void
passes_release (GstZcGpuPasses * passes)
{
  gst_zc::DeviceScope scope (passes->device);
  frames_release (passes->scratch);
  frames_release (passes->stage);
  frames_release (passes->unstage);
  stager_release (passes->stager);
}

static gboolean
set_failure (GstZcGpuResult * r, GstZcGpuStatus status, const char *what,
    const char *name, const char *detail)
{
  r->status = status;
  r->what = what;
  g_strlcpy (r->name, name, sizeof (r->name));
  g_strlcpy (r->detail, detail, sizeof (r->detail));
  return FALSE;
}

static gboolean
cuda_failure (GstZcGpuResult * r, const char *what, cudaError_t err)
{
  /* the failed call was logged; the runtime also keeps it as this thread's
   * last error, which names it */
  if (err == cudaSuccess)
    err = cudaGetLastError ();
  gst_zc_cuda_note_error (err, cudaGetErrorName (err));
  return set_failure (r, GST_ZC_GPU_CUDA_ERROR, what, cudaGetErrorName (err),
      cudaGetErrorString (err));
}

/* One copy on the copy engines, in @stream, cut at the seams of @src_mem
 * (a foreign memory over more than one registration), if any */
static cudaError_t
copy_2d_async (const gst_zc::Copy2D & c, GstZcMemory * src_mem,
    cudaStream_t stream)
{
  const guint8 *const *seams = nullptr;
  guint n_seams = src_mem ? gst_zc_memory_get_seams (src_mem, &seams) : 0;
  return gst_zc::split_copy_at_seams (c, seams, n_seams, cudaSuccess,
      [stream](const gst_zc::Copy2D & p) {
        if (p.rows == 1)
          return cudaMemcpyAsync (p.dst, p.src, p.row_bytes,
              cudaMemcpyDefault, stream);
        return cudaMemcpy2DAsync (p.dst, p.dst_stride, p.src, p.src_stride,
            p.row_bytes, p.rows, cudaMemcpyDefault, stream);
      });
}

/* Copies @n plane copies in @stream, those laid out one after the other
 * in both memories joined into one call (each call costs the CPU a few
 * microseconds and the copy engine a gap), each cut at @src_mem's seams */
static cudaError_t
copy_planes_async (const gst_zc::Copy2D * planes, int n, GstZcMemory * src_mem,
    cudaStream_t stream)
{
  int i = 0;
  while (i < n) {
    gst_zc::Copy2D c = planes[i++];
    while (i < n && gst_zc::join_packed (c, planes[i]))
      i++;
    gst_zc::flatten_packed (c);
    cudaError_t err = copy_2d_async (c, src_mem, stream);
    if (err != cudaSuccess)
      return err;
  }
  return cudaSuccess;
}

/* Copies frame @src (the bytes of @src_mem, or NULL for memory of ours) to
 * @dst (same format and size) on the copy engines, in @stream, a copy a
 * plane or one for planes packed one after the other (copy_planes_async());
 * adds the bytes moved to @bytes. */
static cudaError_t
copy_frame_async (const zc::FrameDesc & src, GstZcMemory * src_mem,
    const zc::FrameDesc & dst, cudaStream_t stream, gsize * bytes)
{
  gst_zc::Copy2D planes[3];
  const int n = zc::pixfmt_n_planes (src.fmt);
  gsize moved = 0;
  for (int p = 0; p < n; p++) {
    size_t row = zc::pixfmt_plane_row_bytes (src.fmt, p, src.width);
    int rows = zc::pixfmt_plane_rows (src.fmt, p, src.height);
    planes[p] = { (const uint8_t *) src.planes[p], (size_t) src.strides[p],
      (uint8_t *) dst.planes[p], (size_t) dst.strides[p], row, (size_t) rows
    };
    moved += row * rows;
  }
  cudaError_t err = copy_planes_async (planes, n, src_mem, stream);
  if (err == cudaSuccess)
    *bytes += moved;
  return err;
}

/* Whether the conversion kernel should read the input from a device-memory
 * copy made by the copy engines: for a frame in mapped host memory, unless
 * the kernel reads it once, in order, with 4-byte loads (a packed 4-byte RGB
 * format, nothing moved) and writes mapped memory too. The kernel's tiles
 * read mapped memory in wide loads, but it is compute-bound, and while it
 * computes the bus idles: the copy engines first are faster, when scaling
 * and at the same size alike. Into device memory (the first element of a
 * chain) it always stages. */
static bool
should_stage_input (const GstZcGpuPassRequest * req,
    const zc::FrameDesc & in, GstZcMemoryType in_type,
    GstZcMemoryType out_type)
{
  if (in_type != GST_ZC_MEMORY_TYPE_MAPPED)
    return false;
  if (out_type == GST_ZC_MEMORY_TYPE_DEVICE)
    return true;
  switch (in.fmt) {
    case zc::PixFmt::RGBA:
    case zc::PixFmt::BGRA:
    case zc::PixFmt::RGBx:
    case zc::PixFmt::BGRx:
    case zc::PixFmt::ARGB:
    case zc::PixFmt::ABGR:
    case zc::PixFmt::xRGB:
    case zc::PixFmt::xBGR:
      return req->moves_pixels;
    default:
      return true;
  }
}

/* Where the kernels of one frame read and write, and what the copy engines
 * move around them. A kernel that reads or writes mapped memory holds its
 * SMs while the bus serves it, so in a chain (zcfilter ! zcfilter ...) the
 * first element's kernel, reading mapped memory, and the last one's,
 * writing it, could not run at the same time: a chain would take its two
 * bus crossings one after the other. So an element between mapped and
 * device memory moves the mapped side with the copy engines (one each way,
 * running beside each other and beside kernels) and runs its kernels on
 * device memory: the first element of a chain stages its input into its
 * device output (and works there in place), the last one runs into a
 * device frame and copies that to its mapped output. A decoder's device
 * frame (wrapped, not ours) heads no chain of ours: from it the kernel
 * writes the mapped output itself, one crossing of the bus with nothing
 * queued after the kernel, so the frame reaches its reader sooner
 * (docs/performance.md has the trips). */
gboolean
gst_zc_gpu_passes_run (GstZcGpuPasses * passes,
    const GstZcGpuPassRequest * req, const GstZcGpuFrame * in_frame,
    const GstZcGpuFrame * out_frame, gboolean in_place, gpointer stream_ptr,
    GstZcGpuResult * res)
{
  auto stream = (cudaStream_t) stream_ptr;
  const GstZcGpuFrame & in = *in_frame, &out = *out_frame;
  int n_passes = req->spatial ? zc::spatial_n_passes (*req->spatial) : 0;
  /* scratch: the converted frame before the spatial passes, and one more
   * between two spatial passes */
  guint n_scratch = (req->convert && req->spatial ? 1 : 0) +
      (n_passes > 1 ? 1 : 0);
  GstZcMemoryType in_type = gst_zc_memory_get_memory_type (in.mem);
  GstZcMemoryType out_type = gst_zc_memory_get_memory_type (out.mem);
  gst_zc_gpu_result_init (res);

  gst_zc::DeviceScope scope (passes->device);
  if (!scope.ok ())
    return cuda_failure (res, "Could not make the CUDA device current",
        cudaSuccess);
  if (n_scratch && !frames_ensure (passes->scratch, *out.desc, n_scratch))
    return cuda_failure (res, "Could not allocate device memory for the "
        "spatial effects", cudaSuccess);
  if (!gst_zc_memory_prepare_gpu (in.mem, stream) ||
      (!in_place && !gst_zc_memory_prepare_gpu (out.mem, stream)))
    return cuda_failure (res, "Could not order GPU work after the frame's "
        "fence", cudaSuccess);

  zc::FrameDesc src = *in.desc, dst = *out.desc;
  dst.over_bus = gst_zc_memory_is_over_bus (out.mem);
  bool unstage = false;         /* dst is a device frame, copied to out */
  cudaError_t err = cudaSuccess;
  gint slot = -1;               /* the stager's frame the kernel reads */
  if (!in_place && req->luts && in_type == GST_ZC_MEMORY_TYPE_MAPPED &&
      out_type == GST_ZC_MEMORY_TYPE_DEVICE) {
    /* the first of a chain: the input into the output, the table there */
    err = copy_frame_async (src, in.mem, dst, stream, &res->staged);
    src = dst;
  } else if (!in_place && req->convert &&
      should_stage_input (req, *in.desc, in_type, out_type)) {
    /* on the stager's stream, into the frame the kernel before last read */
    Stager & st = passes->stager;
    if (!frames_ensure (passes->stage, *in.desc, 2) || !stager_ensure (st))
      return cuda_failure (res, "Could not set up the input's staging "
          "(device memory, a stream and events)", cudaSuccess);
    slot = (gint) st.next;
    st.next ^= 1;
    zc::FrameDesc copy = frames_get (passes->stage, *in.desc, slot);
    if (!gst_zc_memory_prepare_gpu (in.mem, st.stream))
      return cuda_failure (res, "Could not order GPU work after the frame's "
          "fence", cudaSuccess);
    err = cudaStreamWaitEvent (st.stream, st.consumed[slot], 0);
    if (err == cudaSuccess)
      err = copy_frame_async (src, in.mem, copy, st.stream, &res->staged);
    if (err == cudaSuccess)
      err = cudaEventRecord (st.copied[slot], st.stream);
    if (err == cudaSuccess)
      err = cudaStreamWaitEvent (stream, st.copied[slot], 0);
    src = copy;
  }
  if (err != cudaSuccess)
    return cuda_failure (res, "Could not stage the input", err);
  if (!in_place && in_type == GST_ZC_MEMORY_TYPE_DEVICE &&
      out_type == GST_ZC_MEMORY_TYPE_MAPPED &&
      !gst_zc_memory_is_wrapped (in.mem)) {
    /* the last of a chain */
    if (!frames_ensure (passes->unstage, *out.desc, 1))
      return cuda_failure (res, "Could not allocate device memory for the "
          "output", cudaSuccess);
    dst = frames_get (passes->unstage, *out.desc, 0);
    unstage = true;
  }

  const char *what = "CUDA kernel launch failed";
  if (req->luts) {
    zc::PlaneJob jobs[3];
    for (guint p = 0; p < req->n_lut_planes && p < 3; p++) {
      jobs[p] = { src.planes[p], dst.planes[p], src.strides[p],
        dst.strides[p], req->lut_row_bytes[p], req->lut_rows[p] };
    }
    what = "Table kernel";
    err = GST_ZC_FAULT_OR (LAUNCH, cudaErrorLaunchOutOfResources,
        zc::apply_lut_cuda_planes (jobs, req->luts, req->n_lut_planes,
            stream));
  } else {
    const zc::FrameDesc *spatial_src = &src;
    zc::FrameDesc s0, s1;
    guint next = 0;
    if (req->convert) {
      if (req->spatial) {
        s0 = frames_get (passes->scratch, *out.desc, next++);
        spatial_src = &s0;
      }
      what = "Conversion kernel";
      err = GST_ZC_FAULT_OR (LAUNCH, cudaErrorLaunchOutOfResources,
          zc::convert_cuda (src, req->spatial ? s0 : dst, *req->convert,
              stream));
    }
    if (err == cudaSuccess && req->spatial) {
      const zc::FrameDesc *tmp = nullptr;
      if (n_passes > 1) {
        s1 = frames_get (passes->scratch, *out.desc, next++);
        tmp = &s1;
      }
      what = "Spatial effect kernel";
      err = GST_ZC_FAULT_OR (LAUNCH, cudaErrorLaunchOutOfResources,
          zc::spatial_cuda (*spatial_src, dst, tmp, *req->spatial, stream));
    }
    if (err == cudaErrorNotSupported || err == cudaErrorInvalidValue)
      return set_failure (res, err == cudaErrorNotSupported ?
          GST_ZC_GPU_NOT_SUPPORTED : GST_ZC_GPU_INVALID_REQUEST, what,
          cudaGetErrorName (err), cudaGetErrorString (err));
  }
  if (err != cudaSuccess)
    return cuda_failure (res, what, err);
  if (slot >= 0) {
    err = cudaEventRecord (passes->stager.consumed[slot], stream);
    if (err != cudaSuccess)
      return cuda_failure (res, "Could not record the GPU fence", err);
  }
  if (unstage) {
    err = copy_frame_async (dst, nullptr, *out.desc, stream, &res->staged);
    if (err != cudaSuccess)
      return cuda_failure (res, "Could not copy the output", err);
  }

  /* Fence both: the input is read by the kernel, so its producer must not
   * refill it before the kernel is done */
  if (!gst_zc_memory_set_gpu_fence (out.mem, stream) ||
      (!in_place && !gst_zc_memory_set_gpu_fence (in.mem, stream)))
    return cuda_failure (res, "Could not record the GPU fence", cudaSuccess);
  return TRUE;
}

gboolean
gst_zc_gpu_copy_planes (gint device, gpointer stream_ptr,
    GstZcMemory * in_mem, GstZcMemory * out_mem,
    const GstZcGpuPlaneCopy * planes, guint n, GstZcGpuResult * res)
{
  auto stream = (cudaStream_t) stream_ptr;
  ensure_debug_category ();
  gst_zc_gpu_result_init (res);
  gst_zc::Copy2D copies[4];     /* a video frame has at most four planes */
  if (n > G_N_ELEMENTS (copies))
    return set_failure (res, GST_ZC_GPU_INVALID_REQUEST, "GPU frame copy",
        "too many planes", "a frame has at most four planes");
  gst_zc::DeviceScope scope (device);
  bool ok = scope.ok () && gst_zc_memory_prepare_gpu (out_mem, stream) &&
      (!in_mem || gst_zc_memory_prepare_gpu (in_mem, stream));
  cudaError_t err = cudaSuccess;
  for (guint i = 0; i < n; i++) {
    const GstZcGpuPlaneCopy & p = planes[i];
    copies[i] = { (const uint8_t *) p.src, p.src_stride,
      (uint8_t *) p.dst, p.dst_stride, p.row_bytes, p.rows
    };
  }
  if (ok) {
    err = copy_planes_async (copies, (int) n, in_mem, stream);
    ok = err == cudaSuccess;
  }
  bool foreign_pinned = false;
  if (ok && !in_mem && n > 0) {
    /* From pageable memory the call returns once the source is staged;
     * from someone else's pinned memory it does not, and that buffer is
     * released when we return. */
    cudaPointerAttributes attr;
    foreign_pinned = cudaPointerGetAttributes (&attr, planes[0].src) ==
        cudaSuccess && attr.type != cudaMemoryTypeUnregistered;
    cudaGetLastError ();
  }
  ok = ok && gst_zc_memory_set_gpu_fence (out_mem, stream) &&
      (!in_mem || gst_zc_memory_set_gpu_fence (in_mem, stream));
  if (ok && foreign_pinned)
    ok = gst_zc_memory_wait_cpu (out_mem);
  if (!ok)
    return cuda_failure (res, "GPU frame copy failed", err);
  return TRUE;
}

#else /* !GST_ZC_HAVE_CUDA */

struct _GstZcGpuPasses
{
  gint device = 0;
};

static void
passes_release (GstZcGpuPasses *)
{
}

static gboolean
not_built (GstZcGpuResult * r, const char *what)
{
  gst_zc_gpu_result_init (r);
  r->status = GST_ZC_GPU_NOT_BUILT;
  r->what = what;
  g_strlcpy (r->name, "not built", sizeof (r->name));
  g_strlcpy (r->detail, "gst-zerocopy was built without the CUDA backend",
      sizeof (r->detail));
  return FALSE;
}

gboolean
gst_zc_gpu_passes_run (GstZcGpuPasses *, const GstZcGpuPassRequest *,
    const GstZcGpuFrame *, const GstZcGpuFrame *, gboolean, gpointer,
    GstZcGpuResult * result)
{
  return not_built (result, "GPU passes");
}

gboolean
gst_zc_gpu_copy_planes (gint, gpointer, GstZcMemory *, GstZcMemory *,
    const GstZcGpuPlaneCopy *, guint, GstZcGpuResult * result)
{
  return not_built (result, "GPU frame copy");
}

#endif /* GST_ZC_HAVE_CUDA */

gsize
gst_zc_frame_layout (zc::PixFmt fmt, int width, int height, guint8 * base,
    zc::FrameDesc * d)
{
  gsize off = 0;
  int n = zc::pixfmt_n_planes (fmt);
  d->fmt = fmt;
  d->width = width;
  d->height = height;
  for (int p = 0; p < 3; p++) {
    d->planes[p] = nullptr;
    d->strides[p] = 0;
  }
  for (int p = 0; p < n; p++) {
    gsize stride = GST_ROUND_UP_N (zc::pixfmt_plane_row_bytes (fmt, p,
            width), 128);
    d->planes[p] = base ? base + off : nullptr;
    d->strides[p] = stride;
    off += stride * zc::pixfmt_plane_rows (fmt, p, height);
  }
  return off;
}

GstZcGpuPasses *
gst_zc_gpu_passes_new (gint device)
{
  ensure_debug_category ();
  auto *passes = new _GstZcGpuPasses ();
  passes->device = device;
  return passes;
}

void
gst_zc_gpu_passes_reset (GstZcGpuPasses * passes)
{
  if (passes)
    passes_release (passes);
}

void
gst_zc_gpu_passes_free (GstZcGpuPasses * passes)
{
  if (!passes)
    return;
  passes_release (passes);
  delete passes;
}

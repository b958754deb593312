/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The GPU side of the elements: frame copies on the copy engines and
 * zcfilter's kernel passes (table, conversion, spatial effects) with the
 * device frames, streams and events they need. They live in the library so
 * that one CUDA runtime serves the whole process: the library links it, the
 * plugin calls these functions and never the runtime itself. Not installed.
 *
 * Plain C structs cross this boundary, by pointer; the kernels' own plans
 * (zc::FrameDesc, zc::ConvertParams, zc::SpatialParams, zc::LutSet) are
 * pointed to, so a caller includes the kernels' headers. Every function
 * here exists in a build without CUDA too, and then fails with
 * GST_ZC_GPU_NOT_BUILT.
 */
#pragma once

#include <gst/zerocopy/gstzcmemory.h>
#include <gst/zerocopy/gstzccontext.h>

#include <zcconvert.h>
#include <zcpointops.h>
#include <zcspatial.h>

G_BEGIN_DECLS

typedef enum
{
  GST_ZC_GPU_OK,
  GST_ZC_GPU_CUDA_ERROR,        /* a CUDA call failed: see name, detail */
  GST_ZC_GPU_INVALID_REQUEST,   /* the kernel refused the parameters */
  GST_ZC_GPU_NOT_SUPPORTED,     /* valid, but not implemented on the GPU */
  GST_ZC_GPU_NOT_BUILT,         /* built without the CUDA backend */
} GstZcGpuStatus;

/* What went wrong, in words for an element error message. Filled by the
 * functions below, which own no part of it: @what is a static string, the
 * rest is copied in (cut at the array's size). */
typedef struct _GstZcGpuResult
{
  GstZcGpuStatus status;
  const gchar *what;            /* the step: "Conversion kernel", ... */
  gchar name[128];              /* the CUDA error's name */
  gchar detail[512];            /* its description */
  gsize staged;                 /* bytes the copy engines moved */
} GstZcGpuResult;

/* A result that says nothing went wrong yet: where the library's functions
 * that fill one start */
static inline void
gst_zc_gpu_result_init (GstZcGpuResult * r)
{
  r->status = GST_ZC_GPU_OK;
  r->what = "";
  r->name[0] = '\0';
  r->detail[0] = '\0';
  r->staged = 0;
}

/* One frame as the kernels see it: its memory (fences) and its planes at
 * device addresses */
typedef struct _GstZcGpuFrame
{
  GstZcMemory *mem;
  const zc::FrameDesc *desc;
} GstZcGpuFrame;

/* The passes of one frame, from zcfilter's frame plan: the table kernel
 * alone (@luts set), or a conversion (@convert set), spatial passes
 * (@spatial set) or both. Zero-initialise it, then set what is wanted. */
typedef struct _GstZcGpuPassRequest
{
  const zc::LutSet *luts;       /* one table per plane */
  guint n_lut_planes;
  guint32 lut_row_bytes[3];
  guint32 lut_rows[3];

  const zc::ConvertParams *convert;
  const zc::SpatialParams *spatial;     /* after the conversion, if any */
  /* the conversion moves pixels (crop, orientation, size, borders): then
   * the kernel reads a mapped input in a scattered order */
  gboolean moves_pixels;
} GstZcGpuPassRequest;

/* Lays out a @fmt frame of @width x @height at @base (may be NULL), rows
 * 128-byte aligned: the scratch frames between passes, on either backend.
 * Returns: its size in bytes */
GST_ZC_API
gsize gst_zc_frame_layout (zc::PixFmt fmt, int width, int height,
    guint8 * base, zc::FrameDesc * d);

typedef struct _GstZcGpuPasses GstZcGpuPasses;

/* State for the passes of one element on @device: device frames sized for
 * the current caps, the staging stream and its events. Made lazily, freed
 * by gst_zc_gpu_passes_reset() (caps change) and _free(). */
GST_ZC_API
GstZcGpuPasses * gst_zc_gpu_passes_new (gint device);
GST_ZC_API
void gst_zc_gpu_passes_free (GstZcGpuPasses * passes);
GST_ZC_API
void gst_zc_gpu_passes_reset (GstZcGpuPasses * passes);

/* Queues the passes of @req from @in to @out on @stream, after both frames'
 * fences, and fences both. @in_place: @in and @out are the same frame.
 * Returns: TRUE on success; @result says what failed otherwise, and counts
 * the bytes staged either way */
GST_ZC_API
gboolean gst_zc_gpu_passes_run (GstZcGpuPasses * passes,
    const GstZcGpuPassRequest * req, const GstZcGpuFrame * in,
    const GstZcGpuFrame * out, gboolean in_place, gpointer stream,
    GstZcGpuResult * result);

/* One plane of a frame copy */
typedef struct _GstZcGpuPlaneCopy
{
  const guint8 *src;
  gsize src_stride;
  guint8 *dst;
  gsize dst_stride;
  gsize row_bytes;
  guint rows;
} GstZcGpuPlaneCopy;

/* Copies @n planes on @stream of @device with the copy engines, after the
 * fences of @in_mem (may be NULL: a CPU-mapped foreign source) and
 * @out_mem, and fences both. A foreign source in pinned memory is waited
 * for (its owner may release it as soon as this returns).
 * Returns: TRUE on success; @result says what failed otherwise */
GST_ZC_API
gboolean gst_zc_gpu_copy_planes (gint device, gpointer stream,
    GstZcMemory * in_mem, GstZcMemory * out_mem,
    const GstZcGpuPlaneCopy * planes, guint n, GstZcGpuResult * result);

G_END_DECLS

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The GPU side of the elements: frame copies on the copy engines and
 * zcfilter's kernel passes (table, conversion, spatial effects) with the
 * device frames, streams and events they need. They live in the library so
 * that one CUDA runtime serves the whole process: the library links it, the
 * plugin calls these functions and never the runtime itself. Not installed;
 * C++ only (the plans are the kernels' own structs).
 *
 * Every function here exists in a build without CUDA too, and then fails
 * with GST_ZC_GPU_NOT_BUILT.
 */
#pragma once

#include <gst/zerocopy/gstzcmemory.h>
#include <gst/zerocopy/gstzccontext.h>

#include <zcconvert.h>
#include <zcpointops.h>
#include <zcspatial.h>

#include <string>

typedef enum
{
  GST_ZC_GPU_OK,
  GST_ZC_GPU_CUDA_ERROR,        /* a CUDA call failed: see name, detail */
  GST_ZC_GPU_INVALID_REQUEST,   /* the kernel refused the parameters */
  GST_ZC_GPU_NOT_SUPPORTED,     /* valid, but not implemented on the GPU */
  GST_ZC_GPU_NOT_BUILT,         /* built without the CUDA backend */
} GstZcGpuStatus;

/* What went wrong, in words for an element error message */
struct GstZcGpuResult
{
  GstZcGpuStatus status = GST_ZC_GPU_OK;
  const char *what = "";        /* the step: "Conversion kernel", ... */
  std::string name;             /* the CUDA error's name */
  std::string detail;           /* its description */
  gsize staged = 0;             /* bytes the copy engines moved */

  bool ok () const { return status == GST_ZC_GPU_OK; }
};

/* One frame as the kernels see it: its memory (fences) and its planes at
 * device addresses */
struct GstZcGpuFrame
{
  GstZcMemory *mem = nullptr;
  zc::FrameDesc desc;
};

/* The passes of one frame, from zcfilter's frame plan */
struct GstZcGpuPassRequest
{
  bool lut = false;             /* the table kernel alone */
  const zc::LutSet *luts = nullptr;
  guint n_lut_planes = 0;
  guint32 lut_row_bytes[3] = { 0, 0, 0 };
  guint32 lut_rows[3] = { 0, 0, 0 };

  bool convert = false;         /* a conversion pass */
  zc::ConvertParams cp;
  bool spatial = false;         /* spatial passes after it */
  zc::SpatialParams sp;
  /* the conversion moves pixels (crop, orientation, size, borders): then
   * the kernel reads a mapped input in a scattered order */
  bool moves_pixels = false;
};

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
 * fences, and fences both. @in_place: @in and @out are the same frame. */
GST_ZC_API
GstZcGpuResult gst_zc_gpu_passes_run (GstZcGpuPasses * passes,
    const GstZcGpuPassRequest & req, const GstZcGpuFrame & in,
    const GstZcGpuFrame & out, bool in_place, gpointer stream);

/* One plane of a frame copy */
struct GstZcGpuPlaneCopy
{
  const guint8 *src = nullptr;
  gsize src_stride = 0;
  guint8 *dst = nullptr;
  gsize dst_stride = 0;
  gsize row_bytes = 0;
  guint rows = 0;
};

/* Copies @n planes on @stream of @device with the copy engines, after the
 * fences of @in_mem (may be NULL: a CPU-mapped foreign source) and
 * @out_mem, and fences both. A foreign source in pinned memory is waited
 * for (its owner may release it as soon as this returns). */
GST_ZC_API
GstZcGpuResult gst_zc_gpu_copy_planes (gint device, gpointer stream,
    GstZcMemory * in_mem, GstZcMemory * out_mem,
    const GstZcGpuPlaneCopy * planes, guint n);

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Users' CUDA kernels (the zckernel element): compiled at run time with
 * NVRTC for the device's own architecture, or loaded precompiled (PTX,
 * cubin, fatbin), cached in memory and on disk, and launched on an
 * element's stream between the frames' fences. NVRTC and the CUDA driver
 * API are loaded with dlopen, so neither is a link dependency: without
 * NVRTC precompiled kernels still run. Not installed; C++ only.
 */
#pragma once

#include <gst/zerocopy/gstzcgpupasses-private.h>
#include <gst/zerocopy/zckernel.cuh>

#include <string>

typedef enum
{
  GST_ZC_KERNEL_SOURCE,         /* CUDA C++, compiled with NVRTC */
  GST_ZC_KERNEL_PTX,
  GST_ZC_KERNEL_CUBIN,
  GST_ZC_KERNEL_FATBIN,
} GstZcKernelKind;

/* Where a kernel came from at its last build */
typedef enum
{
  GST_ZC_KERNEL_ORIGIN_NONE,
  GST_ZC_KERNEL_ORIGIN_NVRTC,   /* compiled now */
  GST_ZC_KERNEL_ORIGIN_MEMORY_CACHE,    /* compiled before in this process */
  GST_ZC_KERNEL_ORIGIN_DISK_CACHE,      /* compiled before, found on disk */
  GST_ZC_KERNEL_ORIGIN_BINARY,  /* given precompiled */
} GstZcKernelOrigin;

GST_ZC_API
const char *gst_zc_kernel_origin_name (GstZcKernelOrigin origin);

/* Guesses the kind of a kernel file from its name: .ptx, .cubin, .fatbin
 * (or .fatbin.c), anything else is source */
GST_ZC_API
GstZcKernelKind gst_zc_kernel_kind_for_path (const char *path);

/* What to build */
struct GstZcKernelSpec
{
  GstZcKernelKind kind = GST_ZC_KERNEL_SOURCE;
  std::string name;             /* for messages: the file, or "source" */
  std::string text;             /* the source, or the binary's bytes */
  std::string entry = "process";
  std::string options;          /* extra NVRTC options, shell-quoted */
  std::string include_dir;      /* the source file's directory, or "" */
};

typedef struct _GstZcUserKernel GstZcUserKernel;

/* The outcome of a build */
struct GstZcKernelBuild
{
  GstZcUserKernel *kernel = nullptr;    /* owned by the caller */
  GstZcKernelOrigin origin = GST_ZC_KERNEL_ORIGIN_NONE;
  bool compile_error = false;   /* NVRTC refused the source: see log */
  std::string message;          /* what failed, one sentence */
  std::string detail;           /* for the debug text */
  std::string log;              /* NVRTC's log (errors and warnings) */
  std::string target;           /* "sm_90", "compute_87" (PTX) */
  double ms = 0;                /* compile or cache lookup, and load */
};

/* Builds @spec for @device: reads the caches, compiles on a miss, loads
 * the module and finds the entry. Blocking: call it off the streaming
 * thread (at start, or from a worker). */
GST_ZC_API
GstZcKernelBuild gst_zc_user_kernel_build (gint device,
    const GstZcKernelSpec & spec);

GST_ZC_API
void gst_zc_user_kernel_free (GstZcUserKernel * kernel);

/* The most threads a block of this kernel may have */
GST_ZC_API
guint gst_zc_user_kernel_max_threads (GstZcUserKernel * kernel);

/* One launch: the frames as the kernel sees them, their memories (fences) */
struct GstZcKernelLaunch
{
  ZcFrame in {};
  ZcFrame out {};
  ZcFrameInfo info {};
  const ZcParams *params = nullptr;
  GstZcMemory *in_mem = nullptr;
  GstZcMemory *out_mem = nullptr;       /* == in_mem in place */
  guint block_w = 32, block_h = 8;
};

/* Queues the kernel on @stream after the frames' fences and fences both.
 * A failure with sticky set means the device's context is lost for the
 * whole process (a kernel faulted: illegal address, ...). */
GST_ZC_API
GstZcGpuResult gst_zc_user_kernel_launch (GstZcUserKernel * kernel,
    const GstZcKernelLaunch & launch, gpointer stream, bool * sticky);

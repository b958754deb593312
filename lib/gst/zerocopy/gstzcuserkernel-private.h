/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Users' CUDA kernels (the zckernel element): compiled at run time with
 * NVRTC for the device's own architecture, or loaded precompiled (PTX,
 * cubin, fatbin), cached in memory and on disk, and launched on an
 * element's stream between the frames' fences. NVRTC and the CUDA driver
 * API are loaded with dlopen, so neither is a link dependency: without
 * NVRTC precompiled kernels still run. Not installed.
 *
 * Plain C structs cross this boundary, by pointer: what the caller gives
 * is read during the call only, and what the library returns is either
 * the caller's (the kernel) or freed by gst_zc_kernel_build_clear().
 */
#pragma once

#include <gst/zerocopy/gstzcgpupasses-private.h>
#include <gst/zerocopy/zckernel.cuh>

G_BEGIN_DECLS

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

/* What to build. Zero-initialise it, then set what is wanted; the
 * strings are the caller's, read during gst_zc_user_kernel_build() only. */
typedef struct _GstZcKernelSpec
{
  GstZcKernelKind kind;
  const gchar *name;            /* for messages: the file; NULL: "source" */
  const gchar *text;            /* the source, or the binary's bytes */
  gsize text_size;              /* bytes of @text, its NUL not counted */
  const gchar *entry;           /* the kernel's name; NULL: "process" */
  const gchar *options;         /* extra NVRTC options, shell-quoted, or NULL */
  const gchar *include_dir;     /* the source file's directory, or NULL */
} GstZcKernelSpec;

typedef struct _GstZcUserKernel GstZcUserKernel;

/* The outcome of a build. The strings are the library's, valid until
 * gst_zc_kernel_build_clear(); the kernel is the caller's. */
typedef struct _GstZcKernelBuild
{
  GstZcUserKernel *kernel;      /* NULL on failure; free it with
                                   gst_zc_user_kernel_free() */
  GstZcKernelOrigin origin;
  gboolean compile_error;       /* NVRTC refused the source: see log */
  gchar *message;               /* what failed, one sentence, or NULL */
  gchar *detail;                /* for the debug text, or NULL */
  gchar *log;                   /* NVRTC's log (errors and warnings), or NULL */
  gchar target[16];             /* "sm_90", "compute_87" (PTX from NVRTC),
                                   "ptx" or "binary" (given precompiled) */
  gdouble ms;                   /* compile or cache lookup, and load */
} GstZcKernelBuild;

/* Builds @spec for @device into @build: reads the caches, compiles on a
 * miss, loads the module and finds the entry. Blocking: call it off the
 * streaming thread (at start, or from a worker). Clear @build with
 * gst_zc_kernel_build_clear() whatever the outcome.
 * Returns: whether @build->kernel was made */
GST_ZC_API
gboolean gst_zc_user_kernel_build (gint device, const GstZcKernelSpec * spec,
    GstZcKernelBuild * build);

/* Frees the strings of @build (not its kernel) */
GST_ZC_API
void gst_zc_kernel_build_clear (GstZcKernelBuild * build);

GST_ZC_API
void gst_zc_user_kernel_free (GstZcUserKernel * kernel);

/* The most threads a block of this kernel may have */
GST_ZC_API
guint gst_zc_user_kernel_max_threads (GstZcUserKernel * kernel);

/* One launch: the frames as the kernel sees them, their memories (fences) */
typedef struct _GstZcKernelLaunch
{
  ZcFrame in;
  ZcFrame out;
  ZcFrameInfo info;
  const ZcParams *params;
  GstZcMemory *in_mem;
  GstZcMemory *out_mem;         /* == in_mem in place */
  guint block_w, block_h;       /* threads of a block */
} GstZcKernelLaunch;

/* Queues the kernel on @stream after the frames' fences and fences both.
 * On failure, @sticky says whether the device's context is lost for the
 * whole process (a kernel faulted: illegal address, ...).
 * Returns: TRUE on success; @result says what failed otherwise */
GST_ZC_API
gboolean gst_zc_user_kernel_launch (GstZcUserKernel * kernel,
    const GstZcKernelLaunch * launch, gpointer stream, gboolean * sticky,
    GstZcGpuResult * result);

G_END_DECLS

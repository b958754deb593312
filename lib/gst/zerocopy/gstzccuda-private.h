/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The one place where the library's C++ code meets the CUDA runtime: the
 * result check that logs into the caller's debug category, the test switch
 * that makes CUDA calls fail, and a guard that makes a device current for
 * a scope. Not installed.
 */
#pragma once

#include <gst/gst.h>
#include <gst/zerocopy/zerocopy-prelude.h>

G_BEGIN_DECLS

/* Fault injection, for tests: the CUDA paths of the library and the
 * plugin that a test can make fail. GST_ZC_FAULTS="PATH:N[,PATH:N...]" in
 * the environment (read at the first call), or gst_zc_fault_set(), makes
 * the Nth call of PATH (counted from then, 1 = the next one) fail with
 * that path's error, without making the call; "PATH:N+" makes every call
 * from the Nth on fail. PATH is one of the names below. */
typedef enum
{
  GST_ZC_FAULT_HOST_ALLOC,      /* "host-alloc": cudaHostAlloc */
  GST_ZC_FAULT_HOST_REGISTER,   /* "host-register": cudaHostRegister */
  GST_ZC_FAULT_DEVICE_ALLOC,    /* "device-alloc": cudaMalloc,
                                   cudaMallocManaged */
  GST_ZC_FAULT_STREAM,          /* "stream": cudaStreamCreate */
  GST_ZC_FAULT_EVENT,           /* "event": cudaEventCreate */
  GST_ZC_FAULT_LAUNCH,          /* "launch": a kernel launch */
  GST_ZC_FAULT_NVRTC_COMPILE,   /* "nvrtc-compile": nvrtcCompileProgram */
  GST_ZC_FAULT_MODULE_LOAD,     /* "module-load": cuModuleLoadData */
  GST_ZC_FAULT_N_PATHS
} GstZcFaultPath;

/* Replaces the faults armed (NULL or "": none). FALSE, and nothing armed,
 * when @spec does not parse. Exported for the plugin and the tests, not
 * installed. */
GST_ZC_API
gboolean gst_zc_fault_set (const gchar * spec);

/* Counts a call of @path; TRUE when it is to fail. */
GST_ZC_API
gboolean gst_zc_fault_hit (GstZcFaultPath path);

/* "host-alloc", ...; NULL for an unknown path */
GST_ZC_API
const gchar *gst_zc_fault_path_name (GstZcFaultPath path);

/* Whether CUDA error @code (runtime and driver API share the numbers) is
 * sticky: a kernel faulted, and the device's context is lost for the rest
 * of the process, every later CUDA call failing with it. */
GST_ZC_API
gboolean gst_zc_cuda_error_is_sticky (gint code);

/* Notes @code, named @name, if sticky: the first one stays */
GST_ZC_API
void gst_zc_cuda_note_error (gint code, const gchar * name);

/* NULL while the process's CUDA context is whole; else the name of the
 * sticky error that lost it ("cudaErrorIllegalAddress", ...) */
GST_ZC_API
const gchar *gst_zc_cuda_lost_reason (void);

/* The last CUDA call that failed on this thread: the call as written
 * ("cudaHostAlloc (&p, bytes, ...)"), the error's name and description,
 * all static; FALSE (and NULLs) if none has failed here. */
GST_ZC_API
gboolean gst_zc_cuda_last_failure (const gchar ** call, const gchar ** name,
    const gchar ** description);

/* The function of a call as gst_zc_cuda_last_failure() gives it
 * ("cudaHostAlloc" of "cudaHostAlloc (&p, bytes, ...)"), for a message;
 * NULL for NULL. Free with g_free(). */
GST_ZC_API
gchar *gst_zc_cuda_call_function (const gchar * call);

/* Forgets this thread's last failure: a caller about to report the next
 * one's */
GST_ZC_API
void gst_zc_cuda_forget_last_failure (void);

G_END_DECLS

/* @call, unless a fault is armed for @path: then @error, the call not
 * made. */
#define GST_ZC_FAULT_OR(path, error, call) \
    (G_UNLIKELY (gst_zc_fault_hit (GST_ZC_FAULT_##path)) ? (error) : (call))

#if GST_ZC_HAVE_CUDA
#include <cuda_runtime_api.h>

G_BEGIN_DECLS

/* Logs a failed CUDA call (name, description, call site) into @cat.
 * Returns TRUE on success. Exported for the plugin, not installed. */
GST_ZC_API
gboolean gst_zc_cuda_result (cudaError_t err, GstDebugCategory * cat,
    const gchar * file, const gchar * function, gint line, const gchar * what);

/* Waits for @fence (an event made with cudaEventBlockingSync) from the
 * host: polls it first, yielding the CPU between polls, for up to
 * GST_ZC_FENCE_SPIN_US microseconds (the environment, read once; default
 * GST_ZC_FENCE_SPIN_US_DEFAULT; 0 sleeps at once; each thread's poll
 * halves after a wait that outlasted the whole spin, is whole again
 * after one that the poll ended, and stays as it was after a fence done
 * at the first look: gstzcfencepoll-private.h), then sleeps in
 * cudaEventSynchronize. A sleeping thread is woken some tens of
 * microseconds after the GPU finished (docs/performance.md): on a frame's
 * trip that is a large share of the wait. At most a
 * quarter of the CPUs' threads poll at once (at least one); the others
 * sleep at once, so that many streams do not turn into busy CPUs.
 * Returns what cudaEventSynchronize or the last poll returned. Exported
 * for the plugin, not installed. */
#define GST_ZC_FENCE_SPIN_US_DEFAULT 1000
GST_ZC_API
cudaError_t gst_zc_fence_wait (cudaEvent_t fence);

G_END_DECLS

#define GST_ZC_CUDA_OK(call) \
    gst_zc_cuda_result ((call), GST_CAT_DEFAULT, __FILE__, GST_FUNCTION, \
        __LINE__, #call)

/* The runtime error an armed fault of @path stands for */
static inline cudaError_t
gst_zc_fault_cuda_error (GstZcFaultPath path)
{
  return path == GST_ZC_FAULT_LAUNCH ? cudaErrorLaunchOutOfResources :
      cudaErrorMemoryAllocation;
}

/* GST_ZC_CUDA_OK() of a call that a fault of @path can stand in for */
#define GST_ZC_CUDA_OK_OR_FAULT(path, call) \
    gst_zc_cuda_result (GST_ZC_FAULT_OR (path, \
            gst_zc_fault_cuda_error (GST_ZC_FAULT_##path), call), \
        GST_CAT_DEFAULT, __FILE__, GST_FUNCTION, __LINE__, #call)

namespace gst_zc {

/* Makes @device's primary context current on this thread for a scope: the
 * context of the CUDA runtime, and so of every stream, event, kernel and
 * allocation of the library. Whatever was current before is current again
 * at the end: another device's primary context (elements on different GPUs
 * sharing a thread), or a context that is no primary one, which would
 * otherwise take the runtime's calls (an application's own, current on the
 * thread that changes a pipeline's state, as PyCUDA's autoinit leaves one;
 * or another element's, left current on a streaming thread). That one
 * stays on the driver's stack, under ours, for the scope. Where the driver's context calls cannot be had from the runtime,
 * only the runtime's current device is set, as cudaSetDevice() sets it. */
class DeviceScope
{
public:
  explicit DeviceScope (int device);
  ~DeviceScope ();
  DeviceScope (const DeviceScope &) = delete;
  DeviceScope & operator= (const DeviceScope &) = delete;
  bool ok () const { return ok_; }

private:
  int prev_ = -1;               /* the device to set again, if set */
  bool pushed_ = false;         /* our primary context pushed, to pop */
  bool ok_ = false;
};

}  /* namespace gst_zc */

#endif /* GST_ZC_HAVE_CUDA */

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * The CUDA result check behind GST_ZC_CUDA_OK and the fault-injection
 * switch behind GST_ZC_FAULT_OR (gstzccuda-private.h). Every other unit
 * calls them and they call none of theirs, so they have a unit of their
 * own at the bottom of the library: the context, which checks its own CUDA
 * calls with them, is in turn called by the context-sharing helpers.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzccuda-private.h"
#include "gstzcfencepoll-private.h"

#if GST_ZC_HAVE_CUDA
#include <cuda.h>               /* the driver's types; its calls come from the runtime */
#endif

#include <atomic>
#include <sched.h>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

const char *const fault_names[GST_ZC_FAULT_N_PATHS] = {
  "host-alloc", "host-register", "device-alloc", "stream", "event",
  "launch", "nvrtc-compile", "module-load",
};

struct Fault
{
  gint64 nth = 0;               /* 0: not armed */
  bool from_nth_on = false;
  gint64 calls = 0;
};

std::mutex fault_lock;
Fault faults[GST_ZC_FAULT_N_PATHS];
/* any path armed: the only cost of the switch when none is */
std::atomic < bool > fault_any (false);
std::once_flag fault_env_once;

/* "PATH:N[+]" entries, comma-separated, into @out; false if one does not
 * parse */
bool
parse_faults (const gchar * spec, Fault * out)
{
  gchar **items = g_strsplit (spec, ",", -1);
  bool ok = true;
  for (gchar ** it = items; ok && *it; it++) {
    gchar *item = g_strstrip (*it);
    if (!*item)
      continue;
    gchar *colon = strchr (item, ':');
    ok = colon != NULL;
    if (!ok)
      break;
    *colon = '\0';
    int path = -1;
    for (int i = 0; i < GST_ZC_FAULT_N_PATHS; i++)
      if (g_str_equal (g_strstrip (item), fault_names[i]))
        path = i;
    gchar *end = NULL;
    const gint64 n = g_ascii_strtoll (colon + 1, &end, 10);
    const bool plus = end && *end == '+';
    ok = path >= 0 && n >= 1 && end != colon + 1 && *(plus ? end + 1 : end)
        == '\0';
    if (ok) {
      out[path].nth = n;
      out[path].from_nth_on = plus;
    }
  }
  g_strfreev (items);
  return ok;
}

gboolean
set_faults (const gchar * spec)
{
  Fault parsed[GST_ZC_FAULT_N_PATHS];
  const bool ok = !spec || parse_faults (spec, parsed);
  std::lock_guard < std::mutex > lk (fault_lock);
  bool any = false;
  for (int i = 0; i < GST_ZC_FAULT_N_PATHS; i++) {
    faults[i] = ok ? parsed[i] : Fault ();
    any = any || faults[i].nth > 0;
  }
  fault_any.store (any);
  return ok;
}

void
read_fault_env ()
{
  const gchar *env = g_getenv ("GST_ZC_FAULTS");
  if (env && !set_faults (env))
    g_warning ("GST_ZC_FAULTS=\"%s\" does not parse: no fault armed "
        "(PATH:N[+], comma-separated; paths: host-alloc, host-register, "
        "device-alloc, stream, event, launch, nvrtc-compile, module-load)",
        env);
}

}  /* namespace */

gboolean
gst_zc_fault_set (const gchar * spec)
{
  /* the environment first, so that it cannot replace this later */
  std::call_once (fault_env_once, read_fault_env);
  return set_faults (spec);
}

gboolean
gst_zc_fault_hit (GstZcFaultPath path)
{
  std::call_once (fault_env_once, read_fault_env);
  if (!fault_any.load (std::memory_order_relaxed) || path < 0 ||
      path >= GST_ZC_FAULT_N_PATHS)
    return FALSE;
  std::lock_guard < std::mutex > lk (fault_lock);
  Fault & f = faults[path];
  if (f.nth == 0)
    return FALSE;
  f.calls++;
  return f.from_nth_on ? f.calls >= f.nth : f.calls == f.nth;
}

gboolean
gst_zc_cuda_error_is_sticky (gint code)
{
  switch (code) {
    case 700:                  /* illegal address */
    case 702:                  /* launch timeout */
    case 710:                  /* device-side assert */
    case 714:                  /* hardware stack error */
    case 715:                  /* illegal instruction */
    case 716:                  /* misaligned address */
    case 717:                  /* invalid address space */
    case 718:                  /* invalid program counter */
    case 719:                  /* launch failure */
      return TRUE;
    default:
      return FALSE;
  }
}

static std::atomic < const gchar * >lost_reason (nullptr);

void
gst_zc_cuda_note_error (gint code, const gchar * name)
{
  if (!gst_zc_cuda_error_is_sticky (code))
    return;
  const gchar *expected = nullptr;
  /* interned: lives as long as the process, as the loss does */
  lost_reason.compare_exchange_strong (expected,
      g_intern_string (name ? name : "a sticky CUDA error"));
}

const gchar *
gst_zc_cuda_lost_reason (void)
{
  return lost_reason.load ();
}

const gchar *
gst_zc_fault_path_name (GstZcFaultPath path)
{
  return path >= 0 && path < GST_ZC_FAULT_N_PATHS ? fault_names[path] : NULL;
}

namespace {
/* what gst_zc_cuda_last_failure() hands out: static strings only */
struct LastFailure
{
  const gchar *call = nullptr;
  const gchar *name = nullptr;
  const gchar *description = nullptr;
};
thread_local LastFailure last_failure;
}

gboolean
gst_zc_cuda_last_failure (const gchar ** call, const gchar ** name,
    const gchar ** description)
{
  if (call)
    *call = last_failure.call;
  if (name)
    *name = last_failure.name;
  if (description)
    *description = last_failure.description;
  return last_failure.call != nullptr;
}

gchar *
gst_zc_cuda_call_function (const gchar * call)
{
  return call ? g_strndup (call, strcspn (call, " (")) : NULL;
}

void
gst_zc_cuda_forget_last_failure (void)
{
  last_failure = LastFailure ();
}

#if GST_ZC_HAVE_CUDA
gboolean
gst_zc_cuda_result (cudaError_t err, GstDebugCategory * cat,
    const gchar * file, const gchar * function, gint line, const gchar * what)
{
  if (err == cudaSuccess)
    return TRUE;
  last_failure.call = what;
  last_failure.name = cudaGetErrorName (err);
  last_failure.description = cudaGetErrorString (err);
  gst_zc_cuda_note_error (err, cudaGetErrorName (err));
#ifndef GST_DISABLE_GST_DEBUG
  gst_debug_log (cat, GST_LEVEL_WARNING, file, function, line, NULL,
      "CUDA call failed: %s: %s (%s)", what, cudaGetErrorName (err),
      cudaGetErrorString (err));
#else
  (void) cat;
  (void) file;
  (void) function;
  (void) line;
  (void) what;
#endif
  return FALSE;
}
#endif

#if GST_ZC_HAVE_CUDA
namespace {

gint64
fence_spin_us ()
{
  static gint64 spin = -1;
  static std::once_flag once;
  std::call_once (once,[] {
        const gchar *env = g_getenv ("GST_ZC_FENCE_SPIN_US");
        gint64 v = env ? g_ascii_strtoll (env, NULL, 10) :
            GST_ZC_FENCE_SPIN_US_DEFAULT;
        spin = CLAMP (v, 0, 10000);
      });
  return spin;
}

/* the threads polling a fence now, and how many may */
std::atomic < gint > fence_pollers (0);

gint
max_fence_pollers ()
{
  static const gint n = MAX (1, (gint) g_get_num_processors () / 4);
  return n;
}

/* This thread's poll budget (gstzcfencepoll-private.h): a thread whose
 * frames are big or queued behind many streams does not shorten the poll
 * of one whose frames are small */
thread_local int64_t poll_us = -1;

}  /* namespace */

cudaError_t
gst_zc_fence_wait (cudaEvent_t fence)
{
  const gint64 spin = fence_spin_us ();
  if (spin > 0 && fence_pollers.fetch_add (1) < max_fence_pollers ()) {
    const gint64 budget = gst_zc::fence_poll_budget (poll_us, spin);
    const gint64 start = g_get_monotonic_time ();
    const gint64 until = start + budget;
    cudaError_t err;
    bool first = true, done_at_once = false;
    do {
      err = cudaEventQuery (fence);
      if (err != cudaErrorNotReady) {
        done_at_once = first;
        break;
      }
      first = false;
      /* another thread that wants this CPU gets it */
      sched_yield ();
    } while (g_get_monotonic_time () < until);
    fence_pollers.fetch_sub (1);
    if (err != cudaErrorNotReady) {
      /* the poll ended it: within the budget */
      poll_us = gst_zc::fence_poll_after (poll_us, done_at_once, budget,
          false, budget, spin);
      return err;
    }
    /* leave no cudaErrorNotReady of the poll behind as this thread's
     * last error */
    cudaGetLastError ();
    err = cudaEventSynchronize (fence);
    poll_us = gst_zc::fence_poll_after (poll_us, false, budget, true,
        g_get_monotonic_time () - start, spin);
    return err;
  } else if (spin > 0) {
    fence_pollers.fetch_sub (1);
  }
  return cudaEventSynchronize (fence);
}

/* ---------------------------------------------------------------------- */
/* DeviceScope                                                            */
/* ---------------------------------------------------------------------- */

namespace {

/* The driver's context calls, taken from the runtime the library links
 * (no link to libcuda): all set, or all null where it cannot give them */
struct ContextCalls
{
  CUresult (CUDAAPI * get_current) (CUcontext *) = nullptr;
  CUresult (CUDAAPI * push) (CUcontext) = nullptr;
  CUresult (CUDAAPI * pop) (CUcontext *) = nullptr;
  CUresult (CUDAAPI * device_get) (CUdevice *, int) = nullptr;
  CUresult (CUDAAPI * primary_retain) (CUcontext *, CUdevice) = nullptr;
};

template < class F > bool
driver_entry (const char *name, F * fn)
{
  void *p = nullptr;
#if CUDART_VERSION >= 12050
  /* the calls as CUDA 11.4, the oldest toolkit the library builds with,
   * defined them (the names have not changed since) */
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion (name, &p, 11040, cudaEnableDefault,
          &found) != cudaSuccess || found != cudaDriverEntryPointSuccess)
    p = nullptr;
#else
  if (cudaGetDriverEntryPoint (name, &p, cudaEnableDefault) != cudaSuccess)
    p = nullptr;
#endif
  *fn = reinterpret_cast < F > (p);
  return p != nullptr;
}

const ContextCalls *
context_calls ()
{
  static const ContextCalls calls = [] {
    ContextCalls c;
    if (!driver_entry ("cuCtxGetCurrent", &c.get_current) ||
        !driver_entry ("cuCtxPushCurrent", &c.push) ||
        !driver_entry ("cuCtxPopCurrent", &c.pop) ||
        !driver_entry ("cuDeviceGet", &c.device_get) ||
        !driver_entry ("cuDevicePrimaryCtxRetain", &c.primary_retain))
      c = ContextCalls ();
    return c;
  } ();
  return calls.get_current ? &calls : nullptr;
}

constexpr int kMaxDevices = 64;
std::atomic < CUcontext > primaries[kMaxDevices];
std::mutex primaries_lock;

/* @device's primary context, retained once for the life of the process
 * (the runtime keeps it as long); NULL where it cannot be had */
CUcontext
primary_context (const ContextCalls & c, int device)
{
  if (device < 0 || device >= kMaxDevices)
    return nullptr;
  CUcontext have = primaries[device].load (std::memory_order_acquire);
  if (have)
    return have;
  std::lock_guard < std::mutex > lk (primaries_lock);
  have = primaries[device].load (std::memory_order_relaxed);
  CUdevice dev = 0;
  if (!have && c.device_get (&dev, device) == CUDA_SUCCESS &&
      c.primary_retain (&have, dev) == CUDA_SUCCESS)
    primaries[device].store (have, std::memory_order_release);
  return have;
}

}  /* namespace */

namespace gst_zc {

DeviceScope::DeviceScope (int device)
{
  const ContextCalls *c = context_calls ();
  CUcontext current = nullptr;
  if (c && c->get_current (&current) == CUDA_SUCCESS && current) {
    CUcontext primary = primary_context (*c, device);
    if (primary && primary == current) {
      ok_ = true;
      return;
    }
    if (primary && c->push (primary) == CUDA_SUCCESS) {
      pushed_ = ok_ = true;
      return;
    }
  }
  /* no context current yet (the runtime makes the primary one current at
   * its next call), or no driver calls */
  if (cudaGetDevice (&prev_) != cudaSuccess)
    prev_ = -1;
  ok_ = (prev_ == device) || cudaSetDevice (device) == cudaSuccess;
}

DeviceScope::~DeviceScope ()
{
  if (pushed_) {
    CUcontext ours = nullptr;
    context_calls ()->pop (&ours);
    return;
  }
  int cur = -1;
  if (prev_ >= 0 && cudaGetDevice (&cur) == cudaSuccess && cur != prev_)
    cudaSetDevice (prev_);
}

}  /* namespace gst_zc */
#endif

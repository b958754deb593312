/* gst-zerocopy: a second CUDA context in a benchmark's process.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "zc-second-context.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>

namespace zc_bench {

namespace {

/* The driver API's types, as far as this file needs them */
using CUresult = int;
using CUcontext = void *;
using CUdevice = int;
using CUdeviceptr = unsigned long long;

constexpr size_t kFrameBytes = 1920u * 1080u * 4u;
constexpr std::chrono::microseconds kPeriod (33333);

} // namespace

/* The entry points, looked up in libcuda by the names the driver has
 * exported since CUDA 4 (the _v2 ones) */
struct SecondContext::Driver
{
  void *lib = nullptr;
  CUresult (*init) (unsigned int) = nullptr;
  CUresult (*device_get) (CUdevice *, int) = nullptr;
  CUresult (*ctx_create) (CUcontext *, unsigned int, CUdevice) = nullptr;
  CUresult (*ctx_pop) (CUcontext *) = nullptr;
  CUresult (*ctx_push) (CUcontext) = nullptr;
  CUresult (*ctx_destroy) (CUcontext) = nullptr;
  CUresult (*mem_alloc) (CUdeviceptr *, size_t) = nullptr;
  CUresult (*mem_free) (CUdeviceptr) = nullptr;
  CUresult (*host_alloc) (void **, size_t) = nullptr;
  CUresult (*host_free) (void *) = nullptr;
  CUresult (*htod) (CUdeviceptr, const void *, size_t) = nullptr;
  CUresult (*dtoh) (void *, CUdeviceptr, size_t) = nullptr;

  template <class F>
  bool
  find (F *fn, const char *name, std::string *why)
  {
    *fn = reinterpret_cast<F> (dlsym (lib, name));
    if (!*fn)
      *why = std::string ("libcuda has no ") + name;
    return *fn != nullptr;
  }

  bool
  open (std::string *why)
  {
    lib = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *e = dlerror ();
      *why = e ? e : "libcuda.so.1: not found";
      return false;
    }
    return find (&init, "cuInit", why)
        && find (&device_get, "cuDeviceGet", why)
        && find (&ctx_create, "cuCtxCreate_v2", why)
        && find (&ctx_pop, "cuCtxPopCurrent_v2", why)
        && find (&ctx_push, "cuCtxPushCurrent_v2", why)
        && find (&ctx_destroy, "cuCtxDestroy_v2", why)
        && find (&mem_alloc, "cuMemAlloc_v2", why)
        && find (&mem_free, "cuMemFree_v2", why)
        && find (&host_alloc, "cuMemAllocHost_v2", why)
        && find (&host_free, "cuMemFreeHost", why)
        && find (&htod, "cuMemcpyHtoD_v2", why)
        && find (&dtoh, "cuMemcpyDtoH_v2", why);
  }
};

namespace {

/* false, with `why` set, when `r` is not CUDA_SUCCESS (0) */
bool
cu_ok (CUresult r, const char *what, std::string *why)
{
  if (r == 0)
    return true;
  char buf[96];
  snprintf (buf, sizeof buf, "%s: CUresult %d", what, r);
  *why = buf;
  return false;
}

} // namespace

SecondContext::SecondContext (const std::string &mode, int device)
{
  if (mode != "idle" && mode != "busy") {
    why_ = "--second-context takes idle or busy, not " + mode;
    return;
  }
  drv_ = new Driver;
  if (!drv_->open (&why_))
    return;
  CUdevice dev = 0;
  CUcontext made = nullptr, popped = nullptr;
  if (!cu_ok (drv_->init (0), "cuInit", &why_)
      || !cu_ok (drv_->device_get (&dev, device), "cuDeviceGet", &why_)
      || !cu_ok (drv_->ctx_create (&made, 0, dev), "cuCtxCreate", &why_))
    return;
  ctx_ = made;
  /* cuCtxCreate made it current on this thread: the runtime here would
   * use it instead of the primary context */
  if (!cu_ok (drv_->ctx_pop (&popped), "cuCtxPopCurrent", &why_))
    return;
  if (mode == "idle")
    return;
  if (!cu_ok (drv_->ctx_push (made), "cuCtxPushCurrent", &why_))
    return;
  void *host = nullptr;
  CUdeviceptr d = 0;
  const bool got = cu_ok (drv_->host_alloc (&host, kFrameBytes),
                          "cuMemAllocHost", &why_)
                   && cu_ok (drv_->mem_alloc (&d, kFrameBytes), "cuMemAlloc",
                             &why_);
  host_ = host;
  dev_ = d;
  drv_->ctx_pop (&popped);
  if (got)
    busy_ = std::thread ([this] () { busy_loop (); });
}

void
SecondContext::busy_loop ()
{
  CUcontext popped = nullptr;
  auto next = std::chrono::steady_clock::now ();
  while (!stop_.load ()) {
    if (drv_->ctx_push (ctx_) != 0)
      return;
    const bool ok = drv_->htod (dev_, host_, kFrameBytes) == 0
                    && drv_->dtoh (host_, dev_, kFrameBytes) == 0;
    drv_->ctx_pop (&popped);
    if (!ok)
      return;
    copies_++;
    next += kPeriod;
    std::this_thread::sleep_until (next);
  }
}

SecondContext::~SecondContext ()
{
  stop_ = true;
  if (busy_.joinable ())
    busy_.join ();
  if (drv_ && ctx_) {
    CUcontext popped = nullptr;
    if (drv_->ctx_push (ctx_) == 0) {
      if (dev_)
        drv_->mem_free (dev_);
      if (host_)
        drv_->host_free (host_);
      drv_->ctx_pop (&popped);
    }
    drv_->ctx_destroy (ctx_);
  }
  /* libcuda stays loaded: the runtime has it open too */
  delete drv_;
}

} // namespace zc_bench

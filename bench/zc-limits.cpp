/* gst-zerocopy: the raw limits (see zc-limits.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "zc-limits.h"

#include <zcpointops.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

#include <sched.h>

namespace zc_bench {

double
nearest_rank (const std::vector<double> &sorted, double p)
{
  if (p <= 0)
    return sorted.front ();
  const size_t rank = (size_t)std::ceil (p * sorted.size ());
  return sorted[std::min (sorted.size (), std::max (rank, (size_t)1)) - 1];
}

Timing
timing_of (std::vector<double> ms)
{
  Timing t;
  if (ms.empty ())
    return t;
  std::sort (ms.begin (), ms.end ());
  t.median_ms = ms[ms.size () / 2];
  t.min_ms = ms.front ();
  t.max_ms = ms.back ();
  t.p99_ms = nearest_rank (ms, 0.99);
  return t;
}

double
gigabytes_per_second (double bytes, double ms)
{
  return ms > 0.0 ? bytes / (ms * 1e-3) / 1e9 : 0.0;
}

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA

/* Logs nothing and never exits: the caller prints *error. */
#define LIMITS_CHECK(call)                                                     \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      *error = std::string (#call) + ": " + cudaGetErrorName (e_) + ": "       \
               + cudaGetErrorString (e_);                                      \
      return false;                                                            \
    }                                                                          \
  } while (0)

bool
gpu_available (std::string *device_name, std::string *why)
{
  int count = 0;
  cudaError_t e = cudaGetDeviceCount (&count);
  if (e != cudaSuccess || count == 0) {
    *why = e != cudaSuccess ? cudaGetErrorString (e) : "no CUDA device";
    return false;
  }
  cudaDeviceProp prop;
  /* cudaFree (0) creates the primary context; it stays until exit. */
  if ((e = cudaGetDeviceProperties (&prop, 0)) != cudaSuccess
      || (e = cudaFree (nullptr)) != cudaSuccess) {
    *why = cudaGetErrorString (e);
    return false;
  }
  *device_name = prop.name;
  return true;
}

namespace {

/* Everything one measurement allocates, released on every return path. */
struct Buffers
{
  cudaStream_t stream = nullptr, stream2 = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr, fork = nullptr, join = nullptr;
  uint8_t *pinned = nullptr, *pinned_dev = nullptr, *pinned2 = nullptr;
  uint8_t *managed = nullptr, *device = nullptr, *device2 = nullptr;

  ~Buffers ()
  {
    if (stream)
      cudaStreamSynchronize (stream);
    if (stream2)
      cudaStreamSynchronize (stream2);
    cudaFreeHost (pinned);
    cudaFreeHost (pinned2);
    cudaFree (managed);
    cudaFree (device);
    cudaFree (device2);
    for (cudaEvent_t e : { start, stop, fork, join })
      if (e)
        cudaEventDestroy (e);
    if (stream)
      cudaStreamDestroy (stream);
    if (stream2)
      cudaStreamDestroy (stream2);
  }
};

bool
time_runs (Buffers &b, int runs, const std::function<cudaError_t ()> &work,
           Timing *out, std::string *error)
{
  LIMITS_CHECK (work ()); /* warm up */
  LIMITS_CHECK (cudaStreamSynchronize (b.stream));
  std::vector<double> ms;
  for (int i = 0; i < runs; i++) {
    LIMITS_CHECK (cudaEventRecord (b.start, b.stream));
    LIMITS_CHECK (work ());
    LIMITS_CHECK (cudaEventRecord (b.stop, b.stream));
    LIMITS_CHECK (cudaEventSynchronize (b.stop));
    float t = 0.0f;
    LIMITS_CHECK (cudaEventElapsedTime (&t, b.start, b.stop));
    ms.push_back (t);
  }
  *out = timing_of (ms);
  return true;
}

} // namespace

bool
measure_limits (size_t row_bytes, size_t rows, bool rgba, int runs, Limits *out,
                std::string *error)
{
  const size_t bytes = row_bytes * rows;
  runs = std::max (runs, 1);
  *out = Limits ();
  out->bytes = bytes;

  Buffers b;
  LIMITS_CHECK (cudaSetDevice (0));
  LIMITS_CHECK (cudaStreamCreateWithFlags (&b.stream, cudaStreamNonBlocking));
  LIMITS_CHECK (cudaStreamCreateWithFlags (&b.stream2, cudaStreamNonBlocking));
  LIMITS_CHECK (cudaEventCreate (&b.start));
  LIMITS_CHECK (cudaEventCreate (&b.stop));
  LIMITS_CHECK (cudaEventCreateWithFlags (&b.fork, cudaEventDisableTiming));
  LIMITS_CHECK (cudaEventCreateWithFlags (&b.join, cudaEventDisableTiming));
  LIMITS_CHECK (cudaHostAlloc ((void **)&b.pinned, bytes,
                               cudaHostAllocMapped | cudaHostAllocPortable));
  LIMITS_CHECK (cudaHostGetDevicePointer ((void **)&b.pinned_dev, b.pinned, 0));
  LIMITS_CHECK (cudaMallocManaged ((void **)&b.managed, bytes));
  LIMITS_CHECK (cudaMalloc ((void **)&b.device, bytes));
  LIMITS_CHECK (cudaHostAlloc ((void **)&b.pinned2, bytes, cudaHostAllocPortable));
  LIMITS_CHECK (cudaMalloc ((void **)&b.device2, bytes));
  LIMITS_CHECK (cudaMemsetAsync (b.device2, 7, bytes, b.stream));
  std::fill (b.pinned, b.pinned + bytes, 7);
  std::fill (b.managed, b.managed + bytes, 7);

  zc::LutSet luts;
  for (auto &lut : luts.lut)
    zc::build_invert_lut (lut);
  if (rgba)
    zc::build_identity_lut (luts.lut[3]);
  auto lut_on = [&] (uint8_t *p) {
    zc::PlaneJob job{
      p, p, row_bytes, row_bytes, (uint32_t)row_bytes, (uint32_t)rows
    };
    return zc::apply_lut_cuda (job, luts, b.stream);
  };
  auto copy = [&] (uint8_t *dst, const uint8_t *src, cudaMemcpyKind kind) {
    return cudaMemcpyAsync (dst, src, bytes, kind, b.stream);
  };

  if (!time_runs (
          b, runs, [&] { return lut_on (b.pinned_dev); }, &out->mapped_in_place,
          error))
    return false;
#if CUDART_VERSION >= 13000
  cudaMemLocation loc = {};
  loc.type = cudaMemLocationTypeDevice;
  loc.id = 0;
  LIMITS_CHECK (cudaMemPrefetchAsync (b.managed, bytes, loc, 0, b.stream));
#else
  LIMITS_CHECK (cudaMemPrefetchAsync (b.managed, bytes, 0, b.stream));
#endif
  if (!time_runs (
          b, runs, [&] { return lut_on (b.managed); }, &out->managed_in_place,
          error)
      || !time_runs (
          b, runs, [&] { return lut_on (b.device); }, &out->device_in_place,
          error)
      || !time_runs (
          b, runs,
          [&] { return copy (b.device, b.pinned, cudaMemcpyHostToDevice); },
          &out->host_to_device, error)
      || !time_runs (
          b, runs,
          [&] { return copy (b.pinned, b.device, cudaMemcpyDeviceToHost); },
          &out->device_to_host, error)
      || !time_runs (
          b, runs,
          [&] {
            cudaError_t e = copy (b.device, b.pinned, cudaMemcpyHostToDevice);
            if (e == cudaSuccess)
              e = lut_on (b.device);
            if (e == cudaSuccess)
              e = copy (b.pinned, b.device, cudaMemcpyDeviceToHost);
            return e;
          },
          &out->copy_kernel_copy, error)
      || !time_runs (
          b, runs,
          [&] {
            /* in on this stream, out on the second one, at once; the
             * timing events on the first stream span both */
            cudaError_t e = cudaEventRecord (b.fork, b.stream);
            if (e == cudaSuccess)
              e = cudaStreamWaitEvent (b.stream2, b.fork, 0);
            if (e == cudaSuccess)
              e = cudaMemcpyAsync (b.pinned2, b.device2, bytes,
                                   cudaMemcpyDeviceToHost, b.stream2);
            if (e == cudaSuccess)
              e = copy (b.device, b.pinned, cudaMemcpyHostToDevice);
            if (e == cudaSuccess)
              e = cudaEventRecord (b.join, b.stream2);
            if (e == cudaSuccess)
              e = cudaStreamWaitEvent (b.stream, b.join, 0);
            return e;
          },
          &out->copies_both_ways, error))
    return false;

  LIMITS_CHECK (cudaStreamSynchronize (b.stream));
  /* Every pass inverts the inverted bytes: after any number of passes a byte
   * is 7 or 248, and alpha (RGBA) stays 7. Anything else is a kernel bug. */
  if ((b.pinned[0] != 7 && b.pinned[0] != 248)
      || (rgba && bytes > 3 && b.pinned[3] != 7)) {
    *error = "the kernel wrote wrong bytes (" + std::to_string (b.pinned[0])
             + ", " + std::to_string (bytes > 3 ? b.pinned[3] : 0) + ")";
    return false;
  }
  return true;
}

namespace {

/* @d's planes packed from @base, one after the other */
void
place_packed (zc::FrameDesc *d, uint8_t *base)
{
  for (int p = 0; p < zc::pixfmt_n_planes (d->fmt); p++) {
    d->planes[p] = base;
    d->strides[p] = zc::pixfmt_plane_row_bytes (d->fmt, p, d->width);
    base += d->strides[p] * (size_t)zc::pixfmt_plane_rows (d->fmt, p, d->height);
  }
}

} // namespace

bool
measure_paced_work (
    size_t in_row_bytes, size_t in_rows, size_t out_row_bytes,
    size_t out_rows, const FrameKernel &kernel, bool copy_in, int frames,
    bool time_kernel,
    const std::function<std::chrono::steady_clock::time_point (int)> &slot,
    const std::function<void ()> &ready, const std::function<void ()> &done,
    PacedWork *out, std::string *error)
{
  using Clock = std::chrono::steady_clock;
  const size_t in_bytes = in_row_bytes * in_rows;
  const size_t out_bytes = out_row_bytes * out_rows;
  const int warmup = 5;
  *out = PacedWork ();

  Buffers b;
  LIMITS_CHECK (cudaSetDevice (0));
  LIMITS_CHECK (cudaStreamCreateWithFlags (&b.stream, cudaStreamNonBlocking));
  LIMITS_CHECK (cudaEventCreate (&b.start));
  LIMITS_CHECK (cudaEventCreate (&b.stop));
  const size_t pinned_bytes = std::max (in_bytes, out_bytes);
  LIMITS_CHECK (cudaHostAlloc ((void **)&b.pinned, pinned_bytes,
                               cudaHostAllocPortable));
  LIMITS_CHECK (cudaMalloc ((void **)&b.device, in_bytes));
  LIMITS_CHECK (cudaMalloc ((void **)&b.device2, out_bytes));
  std::fill (b.pinned, b.pinned + pinned_bytes, 7);
  LIMITS_CHECK (cudaMemsetAsync (b.device, 7, in_bytes, b.stream));
  LIMITS_CHECK (cudaMemsetAsync (b.device2, 7, out_bytes, b.stream));
  LIMITS_CHECK (cudaStreamSynchronize (b.stream));

  zc::LutSet luts;
  for (auto &lut : luts.lut)
    zc::build_invert_lut (lut);
  const bool rgba_out = kernel.out.fmt == zc::PixFmt::RGBA;
  if (rgba_out)
    zc::build_identity_lut (luts.lut[3]);
  const zc::PlaneJob job{ b.device2,
                          b.device2,
                          out_row_bytes,
                          out_row_bytes,
                          (uint32_t)out_row_bytes,
                          (uint32_t)out_rows };
  zc::FrameDesc src = kernel.in, dst = kernel.out;
  zc::ConvertParams params;
  if (kernel.convert) {
    place_packed (&src, b.device);
    place_packed (&dst, b.device2);
    params.sampling = zc::Sampling::Bilinear;
    params.brightness = kernel.brightness;
  }

  if (time_kernel) {
    /* here the kernel's start and end */
    LIMITS_CHECK (cudaEventCreate (&b.fork));
    LIMITS_CHECK (cudaEventCreate (&b.join));
  }
  if (ready)
    ready ();
  std::vector<double> host_ms, gpu_ms, kernel_ms;
  for (int n = 0; n < warmup + frames; n++) {
    std::this_thread::sleep_until (slot (n));
    const Clock::time_point t0 = Clock::now ();
    LIMITS_CHECK (cudaEventRecord (b.start, b.stream));
    if (copy_in)
      LIMITS_CHECK (cudaMemcpyAsync (b.device, b.pinned, in_bytes,
                                     cudaMemcpyHostToDevice, b.stream));
    if (time_kernel)
      LIMITS_CHECK (cudaEventRecord (b.fork, b.stream));
    if (kernel.convert)
      LIMITS_CHECK (zc::convert_cuda (src, dst, params, b.stream));
    else
      LIMITS_CHECK (zc::apply_lut_cuda (job, luts, b.stream));
    if (time_kernel)
      LIMITS_CHECK (cudaEventRecord (b.join, b.stream));
    LIMITS_CHECK (cudaMemcpyAsync (b.pinned, b.device2, out_bytes,
                                   cudaMemcpyDeviceToHost, b.stream));
    LIMITS_CHECK (cudaEventRecord (b.stop, b.stream));
    cudaError_t e;
    while ((e = cudaEventQuery (b.stop)) == cudaErrorNotReady)
      sched_yield ();
    LIMITS_CHECK (e);
    const Clock::time_point t1 = Clock::now ();
    float t = 0.0f;
    LIMITS_CHECK (cudaEventElapsedTime (&t, b.start, b.stop));
    float k = 0.0f;
    if (time_kernel)
      LIMITS_CHECK (cudaEventElapsedTime (&k, b.fork, b.join));
    if (n >= warmup) {
      host_ms.push_back (
          std::chrono::duration<double, std::milli> (t1 - t0).count ());
      gpu_ms.push_back (t);
      if (time_kernel)
        kernel_ms.push_back (k);
    }
  }
  if (done)
    done ();
  out->host = timing_of (host_ms);
  out->gpu = timing_of (gpu_ms);
  out->kernel = timing_of (kernel_ms);
  /* the table inverts 7; the conversion into RGBA writes an opaque alpha */
  if (kernel.convert ? rgba_out && b.pinned[3] != 255
                     : b.pinned[0] != 7 && b.pinned[0] != 248) {
    *error = "the kernel wrote wrong bytes (" + std::to_string (b.pinned[0])
             + ", " + std::to_string (b.pinned[3]) + ")";
    return false;
  }
  return true;
}

#else /* no CUDA backend */

bool
gpu_available (std::string *, std::string *why)
{
  *why = "built without the CUDA backend";
  return false;
}

bool
measure_limits (size_t, size_t, bool, int, Limits *out, std::string *error)
{
  *out = Limits ();
  *error = "built without the CUDA backend";
  return false;
}

bool
measure_paced_work (
    size_t, size_t, size_t, size_t, const FrameKernel &, bool, int, bool,
    const std::function<std::chrono::steady_clock::time_point (int)> &,
    const std::function<void ()> &, const std::function<void ()> &,
    PacedWork *out, std::string *error)
{
  *out = PacedWork ();
  *error = "built without the CUDA backend";
  return false;
}

#endif

} // namespace zc_bench

/* gst-zerocopy: the bare kernel, timed with CUDA events.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The floor the elements are measured against: zcfilter's LUT kernel (invert)
 * in place on a W x H RGBA frame, in mapped pinned memory, in managed memory
 * (prefetched) and in device memory, plus a pinned cudaMemcpy each way for
 * the bus limit. Prints one line per case: median, min and max of R runs.
 *
 *   zc-kernel-bench [WIDTH HEIGHT [RUNS]]      (default 3840 2160 50)
 * Exits 77 without a GPU.
 */
#include <zcpointops.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#define CHECK(call)                                                        \
  do {                                                                     \
    cudaError_t e_ = (call);                                               \
    if (e_ != cudaSuccess) {                                               \
      fprintf (stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
          cudaGetErrorString (e_));                                        \
      exit (1);                                                            \
    }                                                                      \
  } while (0)

static void
report (const char *name, std::vector<float> ms, double bytes_moved)
{
  std::sort (ms.begin (), ms.end ());
  float med = ms[ms.size () / 2];
  printf ("%-34s median %7.3f ms  min %7.3f  max %7.3f  %6.1f GB/s\n", name,
      med, ms.front (), ms.back (), bytes_moved / (med * 1e-3) / 1e9);
}

static std::vector<float>
time_runs (int runs, cudaStream_t s, const std::function<void ()> &work)
{
  cudaEvent_t a, b;
  CHECK (cudaEventCreate (&a));
  CHECK (cudaEventCreate (&b));
  work ();                      /* warm up */
  CHECK (cudaStreamSynchronize (s));
  std::vector<float> ms;
  for (int i = 0; i < runs; i++) {
    CHECK (cudaEventRecord (a, s));
    work ();
    CHECK (cudaEventRecord (b, s));
    CHECK (cudaEventSynchronize (b));
    float t;
    CHECK (cudaEventElapsedTime (&t, a, b));
    ms.push_back (t);
  }
  CHECK (cudaEventDestroy (a));
  CHECK (cudaEventDestroy (b));
  return ms;
}

int
main (int argc, char **argv)
{
  int w = argc > 2 ? atoi (argv[1]) : 3840;
  int h = argc > 2 ? atoi (argv[2]) : 2160;
  int runs = argc > 3 ? atoi (argv[3]) : 50;
  int count = 0;
  if (cudaGetDeviceCount (&count) != cudaSuccess || count == 0) {
    printf ("zc-kernel-bench: no CUDA device, skipped\n");
    return 77;
  }
  cudaDeviceProp prop;
  CHECK (cudaGetDeviceProperties (&prop, 0));
  size_t stride = (size_t) w * 4, bytes = stride * h;
  printf ("%s, %dx%d RGBA (%.1f MB), %d runs\n", prop.name, w, h, bytes / 1e6,
      runs);

  cudaStream_t s;
  CHECK (cudaStreamCreateWithFlags (&s, cudaStreamNonBlocking));
  zc::LutSet luts;
  zc::build_invert_lut (luts.lut[0]);
  zc::build_invert_lut (luts.lut[1]);
  zc::build_invert_lut (luts.lut[2]);
  zc::build_identity_lut (luts.lut[3]);

  uint8_t *pinned, *pinned_dev, *managed, *device;
  CHECK (cudaHostAlloc ((void **) &pinned, bytes,
          cudaHostAllocMapped | cudaHostAllocPortable));
  CHECK (cudaHostGetDevicePointer ((void **) &pinned_dev, pinned, 0));
  CHECK (cudaMallocManaged ((void **) &managed, bytes));
  CHECK (cudaMalloc ((void **) &device, bytes));
  memset (pinned, 7, bytes);
  memset (managed, 7, bytes);

  auto lut_on = [&](uint8_t *p) {
    zc::PlaneJob job { p, p, stride, stride, (uint32_t) stride, (uint32_t) h };
    CHECK (zc::apply_lut_cuda (job, luts, s));
  };

  report ("kernel in place, mapped pinned", time_runs (runs, s,
          [&] { lut_on (pinned_dev); }), 2.0 * bytes);
#if CUDART_VERSION >= 13000
  cudaMemLocation loc = { };
  loc.type = cudaMemLocationTypeDevice;
  loc.id = 0;
  CHECK (cudaMemPrefetchAsync (managed, bytes, loc, 0, s));
#else
  CHECK (cudaMemPrefetchAsync (managed, bytes, 0, s));
#endif
  report ("kernel in place, managed (on GPU)", time_runs (runs, s,
          [&] { lut_on (managed); }), 2.0 * bytes);
  report ("kernel in place, device memory", time_runs (runs, s,
          [&] { lut_on (device); }), 2.0 * bytes);
  report ("cudaMemcpy pinned -> device", time_runs (runs, s, [&] {
            CHECK (cudaMemcpyAsync (device, pinned, bytes,
                    cudaMemcpyHostToDevice, s));}), bytes);
  report ("cudaMemcpy device -> pinned", time_runs (runs, s, [&] {
            CHECK (cudaMemcpyAsync (pinned, device, bytes,
                    cudaMemcpyDeviceToHost, s));}), bytes);
  report ("copy in + kernel + copy out", time_runs (runs, s, [&] {
            CHECK (cudaMemcpyAsync (device, pinned, bytes,
                    cudaMemcpyHostToDevice, s));
            lut_on (device);
            CHECK (cudaMemcpyAsync (pinned, device, bytes,
                    cudaMemcpyDeviceToHost, s));}), 2.0 * bytes);

  CHECK (cudaStreamSynchronize (s));
  /* Each pass inverts R, G, B: after any number of them a byte is 7 or 248,
   * and alpha stays 7. Anything else means the kernel wrote garbage. */
  if ((pinned[0] != 7 && pinned[0] != 248) || pinned[3] != 7) {
    fprintf (stderr, "zc-kernel-bench: wrong bytes %u %u\n", pinned[0],
        pinned[3]);
    return 1;
  }
  CHECK (cudaFreeHost (pinned));
  CHECK (cudaFree (managed));
  CHECK (cudaFree (device));
  CHECK (cudaStreamDestroy (s));
  return 0;
}

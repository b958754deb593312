/* gst-zerocopy: what the kernel test programs share (no GStreamer)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A check counter that prints each failure, random bytes from a seeded
 * generator, CUDA result checks, and a main that runs the CPU tests or,
 * with --gpu, the GPU tests (exit 77, "skipped", without a usable GPU), and
 * ends with the "N passed, M failed" line.
 */
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace zc_test {

inline int g_passed = 0;
inline int g_failed = 0;
inline std::mt19937 g_rng;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
inline bool
check(bool ok, const char *fmt, ...)
{
  if (ok) {
    g_passed++;
    return true;
  }
  g_failed++;
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "FAIL: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
  return false;
}

inline void
fill_random(uint8_t *p, size_t n)
{
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t i = 0; i < n; i++)
    p[i] = (uint8_t)byte(g_rng);
}

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
inline bool
cuda_ok(cudaError_t err, const char *what)
{
  return check(err == cudaSuccess, "%s: %s (%s)", what, cudaGetErrorName(err),
               cudaGetErrorString(err));
}

/* 0 when a CUDA device is there, else 77 after saying why. */
inline int
gpu_skip_code()
{
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    std::printf("SKIP: cudaGetDeviceCount failed: %s (%s)\n",
                cudaGetErrorName(err), cudaGetErrorString(err));
    return 77;
  }
  if (count == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  return 0;
}
#endif

/* The CPU tests, or with --gpu the GPU ones; 77 from either means skipped.
 * Exit status 1 when any check failed. */
inline int
run_main(int argc, char **argv, uint32_t seed, int (*cpu_tests)(),
         int (*gpu_tests)())
{
  const bool gpu = argc > 1 && std::strcmp(argv[1], "--gpu") == 0;
  int ret;

  g_rng.seed(seed);
  if (gpu) {
#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
    ret = gpu_skip_code();
    if (ret == 0)
      ret = gpu_tests();
#else
    (void)gpu_tests;
    std::printf("SKIP: built without CUDA\n");
    ret = 77;
#endif
  } else {
    ret = cpu_tests();
  }
  if (ret == 77)
    return 77;

  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return (ret != 0 || g_failed > 0) ? 1 : 0;
}

} // namespace zc_test

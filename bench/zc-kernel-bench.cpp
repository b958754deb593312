/* gst-zerocopy: the bare kernel, timed with CUDA events.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The floor the elements are measured against: zcfilter's LUT kernel (invert)
 * in place on a W x H RGBA frame, in mapped pinned memory, in managed memory
 * (prefetched) and in device memory, plus a pinned cudaMemcpy each way for
 * the bus limit. Prints one line per case: median, min and max of R runs.
 * The measuring is in zc-limits.cpp, shared with zc-bench.
 *
 *   zc-kernel-bench [WIDTH HEIGHT [RUNS]]      (default 3840 2160 50)
 * Exits 77 without a GPU, 1 on a CUDA error.
 */
#include "zc-limits.h"

#include <cstdio>
#include <cstdlib>

static void
report (const char *name, const zc_bench::Timing &t, double bytes_moved)
{
  printf ("%-34s median %7.3f ms  min %7.3f  max %7.3f  %6.1f GB/s\n", name,
          t.median_ms, t.min_ms, t.max_ms,
          zc_bench::gigabytes_per_second (bytes_moved, t.median_ms));
}

int
main (int argc, char **argv)
{
  int w = argc > 2 ? atoi (argv[1]) : 3840;
  int h = argc > 2 ? atoi (argv[2]) : 2160;
  int runs = argc > 3 ? atoi (argv[3]) : 50;
  if (w <= 0 || h <= 0 || runs <= 0) {
    fprintf (stderr, "usage: zc-kernel-bench [WIDTH HEIGHT [RUNS]]\n");
    return 2;
  }

  std::string name, error;
  if (!zc_bench::gpu_available (&name, &error)) {
    printf ("zc-kernel-bench: no CUDA device (%s), skipped\n", error.c_str ());
    return 77;
  }
  zc_bench::Limits l;
  const double bytes = (double)w * 4 * h;
  printf ("%s, %dx%d RGBA (%.1f MB), %d runs\n", name.c_str (), w, h,
          bytes / 1e6, runs);
  if (!zc_bench::measure_limits ((size_t)w * 4, (size_t)h, true, runs, &l,
                                 &error)) {
    fprintf (stderr, "zc-kernel-bench: %s\n", error.c_str ());
    return 1;
  }

  report ("kernel in place, mapped pinned", l.mapped_in_place, 2.0 * bytes);
  report ("kernel in place, managed (on GPU)", l.managed_in_place, 2.0 * bytes);
  report ("kernel in place, device memory", l.device_in_place, 2.0 * bytes);
  report ("cudaMemcpy pinned -> device", l.host_to_device, bytes);
  report ("cudaMemcpy device -> pinned", l.device_to_host, bytes);
  report ("copy in + kernel + copy out", l.copy_kernel_copy, 2.0 * bytes);
  return 0;
}

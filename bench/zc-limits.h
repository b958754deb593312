/* gst-zerocopy: the raw limits a frame's trip through the GPU is measured
 * against.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by zc-kernel-bench (prints them) and zc-bench (puts them next to
 * the pipelines, in the same run): zcfilter's LUT kernel (invert) in place on
 * one frame in mapped pinned, managed and device memory, a pinned cudaMemcpy
 * each way, and copy in + kernel + copy out. Each figure is timed with CUDA
 * events over a number of runs after one warm-up.
 *
 * No CUDA headers here, so that a program without nvcc includes it; built
 * without the CUDA backend, zc_limits_gpu_available() says so and
 * zc_limits_measure() fails.
 */
#ifndef GST_ZC_BENCH_LIMITS_H
#define GST_ZC_BENCH_LIMITS_H

#include <zcconvert.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace zc_bench {

struct Timing
{
  double median_ms = 0.0;
  double min_ms = 0.0;
  double max_ms = 0.0;
  double p99_ms = 0.0;
};

struct Limits
{
  size_t bytes = 0;        /* one frame: row_bytes * rows */
  Timing mapped_in_place;  /* kernel on mapped pinned memory, in place */
  Timing managed_in_place; /* kernel on managed memory prefetched to GPU */
  Timing device_in_place;  /* kernel on device memory */
  Timing host_to_device;   /* pinned cudaMemcpy */
  Timing device_to_host;   /* pinned cudaMemcpy */
  Timing copy_kernel_copy; /* pinned copy in + kernel + copy out */
  Timing copies_both_ways; /* a pinned copy in and another out at once, on
                              two streams (the two copy engines) */
};

/* The median, lowest, highest and p99 of @ms; zeros for none. */
Timing timing_of (std::vector<double> ms);

/* The @p-th quantile (0 to 1) of @sorted (ascending, not empty) by nearest
 * rank: the smallest value that at least that share of them reach; @p at
 * or below 0 gives the lowest. */
double nearest_rank (const std::vector<double> &sorted, double p);

/* GB/s (1e9 bytes) for @bytes moved in @ms; 0 when @ms is not positive. */
double gigabytes_per_second (double bytes, double ms);

/* True when this program was built with the CUDA backend and device 0 is
 * usable; then *device_name is its name. Otherwise *why says what is
 * missing. Keeps the device's primary context alive for the rest of the
 * process, so that pipelines started later do not pay for creating it. */
bool gpu_available (std::string *device_name, std::string *why);

/* Measures every figure of Limits on device 0 for a frame of @rows rows of
 * @row_bytes bytes, @runs times each. @rgba: the table inverts bytes 0-2 of
 * every 4 and leaves the 4th (alpha) alone, like zcfilter on RGBA; else it
 * inverts every byte (a luma or chroma plane). The traffic is the same.
 * Returns false with *error set on any CUDA error, or when the kernel wrote
 * bytes other than the expected ones. */
bool measure_limits (size_t row_bytes, size_t rows, bool rgba, int runs,
                     Limits *out, std::string *error);

/* The kernel of a frame's GPU work (measure_paced_work()): zcfilter's
 * table (invert) in place on the output frame, leaving the 4th byte of
 * RGBA alone, or zcfilter's conversion kernel from the input frame into
 * the output frame, as the element runs it for a change of format or
 * size: bilinear (its default method) and a brightness step when
 * @brightness is not 0. @in and @out: each frame's format, size, matrix
 * and range, without planes (measure_paced_work() lays its frames out
 * packed, planes one after the other). */
struct FrameKernel
{
  bool convert = false;
  zc::FrameDesc in, out;
  double brightness = 0.0;
};

/* One frame's GPU work, one frame at a time at a frame rate, as a bare
 * CUDA program sees it: a pinned copy of the input frame in (unless
 * @copy_in is false: the frame is on the GPU already, as a decoder's is),
 * @kernel from it (the table: on the output frame) into the output frame
 * in device memory, a pinned copy of the output out.
 * Frame n starts at @slot (n), after a sleep; *host is the time from the
 * first CUDA call to the host seeing the work done (polling, as a reader
 * that spins would), *gpu the same span in CUDA events. The first few
 * frames warm up and are not counted. @ready (if set) runs once the
 * buffers are allocated, before the first frame, and @done after the
 * last frame, before they are freed (allocations and frees wait on the
 * whole device: a caller timing other work beside can keep them apart).
 * At 30 fps the GPU and the driver
 * have gone idle between frames, and the same work takes longer than back
 * to back (a @slot in the past): this is the floor for a pipeline's trip
 * at that rate. */
struct PacedWork
{
  Timing host;
  Timing gpu;
  Timing kernel; /* the kernel alone, in CUDA events, with @time_kernel
                    (two more calls a frame); zeros without */
};
bool measure_paced_work (
    size_t in_row_bytes, size_t in_rows, size_t out_row_bytes,
    size_t out_rows, const FrameKernel &kernel, bool copy_in, int frames,
    bool time_kernel,
    const std::function<std::chrono::steady_clock::time_point (int)> &slot,
    const std::function<void ()> &ready, const std::function<void ()> &done,
    PacedWork *out, std::string *error);

} // namespace zc_bench

#endif /* GST_ZC_BENCH_LIMITS_H */

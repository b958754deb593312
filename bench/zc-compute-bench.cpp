/* gst-zerocopy: the compute kernels against GStreamer's CPU elements.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The compute kernels' benchmark, one run, on one machine:
 *  - NV12 3840x2160 -> RGBA 1920x1080, bilinear (zc::convert_cuda), and NV12
 *    1920x1080 -> RGBA 1920x1080, with source and destination both in
 *    mapped pinned host memory (read by the kernel; then "staged": copied
 *    into device memory by the copy engines first, the other way zcfilter
 *    can take; then "staged, 2 in flight": a run of STAGE_BATCH frames
 *    staged as zcfilter stages them, on a copy stream of its own into two
 *    device frames, one frame's copy beside the kernel of the one before,
 *    timed per frame), then both in device memory;
 *  - gaussian blur, sigma 2, RGBA 3840x2160 and 1920x1080
 *    (zc::spatial_cuda), device -> device and device -> mapped;
 * against, on the same machine and in the same run:
 *  - `videoconvertscale n-threads=T method=bilinear` for the conversions,
 *    `gaussianblur sigma=2` for the blur. gaussianblur takes AYUV only, so
 *    it blurs AYUV frames of the same size (4 bytes a pixel, like RGBA);
 *  - zc::convert_cpu / zc::spatial_cpu with T threads, for reference.
 *
 * GPU kernels: CUDA events around each launch, median (min-max) of RUNS
 * after one warm-up; before each timed launch, outside the events, a 256 MiB
 * memset evicts the frames from the L2 cache (50 MB on an H200 holds a
 * whole 1080p frame pair), so that device memory is really read. CPU
 * elements: appsrc pushes refs of 4 frames filled before the pipeline
 * starts; a pad probe on the element's sink pad and one on its src pad time
 * each frame inside the element, so neither the source nor the sink is
 * measured; median (min-max) over the frames after 2 warm-up frames (at
 * most FRAMES frames and about 3 s each). zc CPU functions: wall clock,
 * median of CPU-RUNS after one warm-up (fewer, but at least 3, past ~3 s).
 *
 * Bytes: what the kernel must read and write, split by memory: a frame read
 * once and written once (a spatial effect with P passes reads and writes P
 * frames, the ones between passes in device scratch memory). The limit
 * each GPU row is held against is measured in the same run: pinned PCIe
 * each way (cudaMemcpy) and both ways at once (zcfilter's LUT kernel in
 * place on mapped memory), all from bench/zc-limits.cpp at the size of the
 * frame read; and a device-to-device cudaMemcpy of the same byte count as
 * the row's device traffic, after the same L2 eviction. The limit time is
 * the largest of: mapped bytes read / H2D rate, written / D2H rate, both /
 * duplex rate, device bytes / device copy rate; %lim = limit time / kernel
 * time. Targets: a GPU row at least 10 times faster than the CPU
 * element, and a memory-bound kernel at 70 % of its limit or more. Each GPU
 * output is compared with the CPU twin's ("check").
 *
 * Without a GPU (or without the CUDA backend) the GPU rows say "no GPU" and
 * the CPU rows still run.
 *
 *   zc-compute-bench [--runs N] [--cpu-runs N] [--frames N] [--threads T]
 *                    [--only TEXT] [--out DIR]
 * Prints the table and, with --out, writes DIR/compute-bench.txt and
 * DIR/compute-bench.json. Exits 1 when something that should have run
 * failed, else 0.
 */
#include "zc-limits.h"

#include <zcconvert.h>
#include <zcspatial.h>

#include <gst/app/app.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
#include <cuda_runtime_api.h>
#define HAVE_CUDA 1
#else
#define HAVE_CUDA 0
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using zc_bench::Timing;
using zc_bench::timing_of;

struct Options
{
  int runs = 50, cpu_runs = 10, frames = 100;
  unsigned threads = std::max (1u, std::thread::hardware_concurrency ());
  std::string only, out;
};

/* ---- frames ------------------------------------------------------------- */

/* A frame's planes laid out one after the other from @base, rows packed
 * (stride = row bytes), as GStreamer lays them out for these sizes. */
zc::FrameDesc
make_desc (zc::PixFmt fmt, int w, int h, uint8_t *base, size_t *bytes)
{
  zc::FrameDesc d;
  d.fmt = fmt;
  d.width = w;
  d.height = h;
  d.matrix = zc::Matrix::BT709; /* GStreamer's default above 576 lines */
  d.full_range = false;
  size_t off = 0;
  for (int p = 0; p < zc::pixfmt_n_planes (fmt); p++) {
    d.strides[p] = zc::pixfmt_plane_row_bytes (fmt, p, w);
    d.planes[p] = base ? base + off : nullptr;
    off += d.strides[p] * zc::pixfmt_plane_rows (fmt, p, h);
  }
  if (bytes)
    *bytes = off;
  return d;
}

size_t
frame_bytes (zc::PixFmt fmt, int w, int h)
{
  size_t n = 0;
  make_desc (fmt, w, h, nullptr, &n);
  return n;
}

void
fill_pattern (uint8_t *p, size_t n, unsigned seed)
{
  uint32_t x = 2463534242u + seed;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13; /* xorshift: no smooth areas a kernel could profit from */
    x ^= x >> 17;
    x ^= x << 5;
    p[i] = (uint8_t)x;
  }
}

/* ---- the workloads and the table ---------------------------------------- */

enum class Kind { CONVERT, BLUR };

struct Workload
{
  std::string id, title;
  Kind kind;
  zc::PixFmt in_fmt, out_fmt;
  int in_w, in_h, out_w, out_h;
  /* the GStreamer CPU element: its description and caps */
  std::string element, in_caps, out_caps;
};

struct Traffic
{
  double mapped_read = 0, mapped_write = 0, device_read = 0, device_write = 0;
  double total () const
  {
    return mapped_read + mapped_write + device_read + device_write;
  }
};

struct Row
{
  const Workload *w = nullptr;
  std::string impl;
  bool gpu = false, reference = false; /* reference: the CPU element */
  std::string status;                  /* empty: ran; else why not */
  Timing t;
  Traffic bytes;
  double limit_ms = 0;    /* 0: no limit (CPU rows) */
  std::string limit_what; /* which limit binds */
  std::string check;      /* GPU output against the CPU twin */
  double speedup = NAN;   /* CPU element ms / this ms */
};

std::string
strf (const char *format, ...)
{
  char buf[512];
  va_list args;
  va_start (args, format);
  g_vsnprintf (buf, sizeof buf, format, args);
  va_end (args);
  return buf;
}

/* ---- GStreamer CPU elements --------------------------------------------- */

struct ElementRun
{
  int warmup = 2, max_frames = 100;
  double budget_s = 3.0;
  std::vector<GstBuffer *> ring;
  int pushed = 0;
  Clock::time_point first_timed;
  Clock::time_point t_in;
  std::vector<double> ms; /* streaming thread; read after EOS */
  int seen = 0;
};

void
element_need_data (GstAppSrc *src, guint, gpointer user_data)
{
  auto *run = (ElementRun *)user_data;
  const int timed = run->pushed - run->warmup;
  if (run->pushed == run->warmup)
    run->first_timed = Clock::now ();
  const bool over_budget
      = timed >= 3
        && std::chrono::duration<double> (Clock::now () - run->first_timed)
                   .count ()
               > run->budget_s;
  if (run->pushed >= run->warmup + run->max_frames || over_budget) {
    gst_app_src_end_of_stream (src);
    return;
  }
  GstBuffer *b = gst_buffer_ref (run->ring[run->pushed % run->ring.size ()]);
  run->pushed++;
  gst_app_src_push_buffer (src, b);
}

GstPadProbeReturn
element_in (GstPad *, GstPadProbeInfo *, gpointer user_data)
{
  ((ElementRun *)user_data)->t_in = Clock::now ();
  return GST_PAD_PROBE_OK;
}

GstPadProbeReturn
element_out (GstPad *, GstPadProbeInfo *, gpointer user_data)
{
  auto *run = (ElementRun *)user_data;
  if (run->seen++ >= run->warmup)
    run->ms.push_back (
        std::chrono::duration<double, std::milli> (Clock::now () - run->t_in)
            .count ());
  return GST_PAD_PROBE_OK;
}

/* Times @w's CPU element per frame. Returns false with *error set. */
bool
time_element (const Workload &w, const Options &o, Timing *out,
              std::string *error)
{
  GstCaps *in_caps = gst_caps_from_string (w.in_caps.c_str ());
  GstVideoInfo info;
  if (!in_caps || !gst_video_info_from_caps (&info, in_caps)) {
    *error = "bad caps " + w.in_caps;
    if (in_caps)
      gst_caps_unref (in_caps);
    return false;
  }
  std::string desc = "appsrc name=src format=time ! " + w.element
                     + " name=el ! " + w.out_caps
                     + " ! fakesink sync=false enable-last-sample=false";
  GError *err = nullptr;
  GstElement *pipeline = gst_parse_launch (desc.c_str (), &err);
  if (!pipeline || err) {
    *error = err ? err->message : "could not build " + desc;
    g_clear_error (&err);
    if (pipeline)
      gst_object_unref (pipeline);
    gst_caps_unref (in_caps);
    return false;
  }
  ElementRun run;
  run.max_frames = o.frames;
  for (unsigned i = 0; i < 4; i++) {
    GstBuffer *b = gst_buffer_new_allocate (
        nullptr, GST_VIDEO_INFO_SIZE (&info), nullptr);
    GstMapInfo map;
    gst_buffer_map (b, &map, GST_MAP_WRITE);
    fill_pattern (map.data, map.size, i);
    gst_buffer_unmap (b, &map);
    run.ring.push_back (b);
  }
  GstElement *src = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstElement *el = gst_bin_get_by_name (GST_BIN (pipeline), "el");
  gst_app_src_set_caps (GST_APP_SRC (src), in_caps);
  gst_caps_unref (in_caps);
  GstAppSrcCallbacks callbacks = {};
  callbacks.need_data = element_need_data;
  gst_app_src_set_callbacks (GST_APP_SRC (src), &callbacks, &run, nullptr);
  GstPad *sinkpad = gst_element_get_static_pad (el, "sink");
  GstPad *srcpad = gst_element_get_static_pad (el, "src");
  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_BUFFER, element_in, &run,
                     nullptr);
  gst_pad_add_probe (srcpad, GST_PAD_PROBE_TYPE_BUFFER, element_out, &run,
                     nullptr);

  GstBus *bus = gst_element_get_bus (pipeline);
  bool ok = gst_element_set_state (pipeline, GST_STATE_PLAYING)
            != GST_STATE_CHANGE_FAILURE;
  if (!ok)
    *error = "the pipeline did not start";
  while (ok) {
    GstMessage *msg = gst_bus_timed_pop_filtered (
        bus, 600 * GST_SECOND,
        (GstMessageType)(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
    if (!msg) {
      *error = "timed out";
      ok = false;
      break;
    }
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
      GError *e = nullptr;
      gst_message_parse_error (msg, &e, nullptr);
      *error = std::string (GST_OBJECT_NAME (GST_MESSAGE_SRC (msg))) + ": "
               + (e ? e->message : "error");
      g_clear_error (&e);
      ok = false;
    }
    gst_message_unref (msg);
    break;
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (sinkpad);
  gst_object_unref (srcpad);
  gst_object_unref (el);
  gst_object_unref (src);
  gst_object_unref (pipeline);
  for (GstBuffer *b : run.ring)
    gst_buffer_unref (b);
  if (ok && run.ms.empty ()) {
    *error = "no frame came out";
    ok = false;
  }
  if (ok)
    *out = timing_of (run.ms);
  return ok;
}

bool
have_element (const std::string &desc)
{
  std::string name = desc.substr (0, desc.find (' '));
  GstElementFactory *f = gst_element_factory_find (name.c_str ());
  if (f)
    gst_object_unref (f);
  return f != nullptr;
}

/* ---- the zc functions on the CPU ----------------------------------------- */

zc::SpatialParams
blur_params ()
{
  zc::SpatialParams p;
  p.blur_sigma = 2.0f;
  return p;
}

zc::ConvertParams
convert_params ()
{
  zc::ConvertParams p;
  p.sampling = zc::Sampling::Bilinear;
  return p;
}

/* Host buffers of the CPU twins; their outputs are the GPU rows' reference. */
struct HostFrames
{
  std::vector<uint8_t> in, out, scratch;
  zc::FrameDesc in_d, out_d, scratch_d;
};

void
host_frames (const Workload &w, HostFrames *h)
{
  size_t n_in = 0, n_out = 0;
  make_desc (w.in_fmt, w.in_w, w.in_h, nullptr, &n_in);
  make_desc (w.out_fmt, w.out_w, w.out_h, nullptr, &n_out);
  h->in.assign (n_in, 0);
  h->out.assign (n_out, 0);
  h->scratch.assign (n_out, 0);
  fill_pattern (h->in.data (), n_in, 7);
  h->in_d = make_desc (w.in_fmt, w.in_w, w.in_h, h->in.data (), nullptr);
  h->out_d = make_desc (w.out_fmt, w.out_w, w.out_h, h->out.data (), nullptr);
  h->scratch_d
      = make_desc (w.out_fmt, w.out_w, w.out_h, h->scratch.data (), nullptr);
}

int
blur_passes ()
{
  return std::max (1, zc::spatial_n_passes (blur_params ()));
}

/* Runs the CPU twin once; false when it refused the request. */
bool
run_cpu_twin (const Workload &w, HostFrames *h, unsigned threads)
{
  if (w.kind == Kind::CONVERT)
    return zc::convert_cpu (h->in_d, h->out_d, convert_params (), threads);
  return zc::spatial_cpu (h->in_d, h->out_d,
                          blur_passes () > 1 ? &h->scratch_d : nullptr,
                          blur_params (), threads);
}

/* ---- the GPU rows -------------------------------------------------------- */

#if HAVE_CUDA

#define GPU_CHECK(call)                                                        \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess) {                                                   \
      *error = std::string (#call) + ": " + cudaGetErrorName (e_);             \
      return false;                                                            \
    }                                                                          \
  } while (0)

constexpr size_t FLUSH_BYTES = 256u << 20;

/* Memory of one GPU row, released on every return path. */
struct GpuMem
{
  std::vector<void *> host, device;
  ~GpuMem ()
  {
    cudaDeviceSynchronize ();
    for (void *p : host)
      cudaFreeHost (p);
    for (void *p : device)
      cudaFree (p);
  }
  /* A frame in mapped pinned memory (@mapped) or device memory; returns the
   * pointer kernels use, or null. */
  uint8_t *alloc (size_t n, bool mapped)
  {
    void *p = nullptr, *dev = nullptr;
    if (mapped) {
      if (cudaHostAlloc (&p, n, cudaHostAllocMapped | cudaHostAllocPortable)
          != cudaSuccess)
        return nullptr;
      host.push_back (p);
      if (cudaHostGetDevicePointer (&dev, p, 0) != cudaSuccess)
        return nullptr;
      return (uint8_t *)dev;
    }
    if (cudaMalloc (&p, n) != cudaSuccess)
      return nullptr;
    device.push_back (p);
    return (uint8_t *)p;
  }
};

struct Gpu
{
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  void *flush = nullptr;
  ~Gpu ()
  {
    if (stream)
      cudaStreamSynchronize (stream);
    cudaFree (flush);
    if (start)
      cudaEventDestroy (start);
    if (stop)
      cudaEventDestroy (stop);
    if (stream)
      cudaStreamDestroy (stream);
  }
  bool init (std::string *error)
  {
    GPU_CHECK (cudaSetDevice (0));
    GPU_CHECK (cudaStreamCreateWithFlags (&stream, cudaStreamNonBlocking));
    GPU_CHECK (cudaEventCreate (&start));
    GPU_CHECK (cudaEventCreate (&stop));
    GPU_CHECK (cudaMalloc (&flush, FLUSH_BYTES));
    return true;
  }
  /* One warm-up, then @runs launches of @work, each after an L2 eviction
   * and timed alone with events. */
  bool time (int runs, const std::function<cudaError_t ()> &work, Timing *out,
             std::string *error)
  {
    GPU_CHECK (work ());
    GPU_CHECK (cudaStreamSynchronize (stream));
    std::vector<double> ms;
    for (int i = 0; i < runs; i++) {
      GPU_CHECK (cudaMemsetAsync (flush, i & 0xff, FLUSH_BYTES, stream));
      GPU_CHECK (cudaEventRecord (start, stream));
      GPU_CHECK (work ());
      GPU_CHECK (cudaEventRecord (stop, stream));
      GPU_CHECK (cudaEventSynchronize (stop));
      float t = 0;
      GPU_CHECK (cudaEventElapsedTime (&t, start, stop));
      ms.push_back (t);
    }
    *out = timing_of (ms);
    return true;
  }
};

/* Frames per timed launch of the "2 in flight" row. */
constexpr int STAGE_BATCH = 8;

/* What the "2 in flight" row stages with, as zcfilter does (its Stager): a
 * copy stream, and per device frame k the events copied[k] (the kernel
 * waits for it) and consumed[k] (the next copy into k waits for it). */
struct StagePipe
{
  cudaStream_t copy = nullptr;
  cudaEvent_t go = nullptr, copied[2] = {}, consumed[2] = {};
  ~StagePipe ()
  {
    if (copy)
      cudaStreamSynchronize (copy);
    for (cudaEvent_t e : { go, copied[0], copied[1], consumed[0], consumed[1] })
      if (e)
        cudaEventDestroy (e);
    if (copy)
      cudaStreamDestroy (copy);
  }
  bool init (std::string *error)
  {
    GPU_CHECK (cudaStreamCreateWithFlags (&copy, cudaStreamNonBlocking));
    for (cudaEvent_t *e : { &go, &copied[0], &copied[1], &consumed[0],
                            &consumed[1] })
      GPU_CHECK (cudaEventCreateWithFlags (e, cudaEventDisableTiming));
    return true;
  }
};

/* Copies the filled source frame to the row's source memory (device
 * memory or the device pointer of mapped memory: unified addressing). */
bool
upload (const std::vector<uint8_t> &host, uint8_t *dev, std::string *error)
{
  GPU_CHECK (cudaMemcpy (dev, host.data (), host.size (), cudaMemcpyDefault));
  return true;
}

std::string
compare (const std::vector<uint8_t> &want, uint8_t *dev, std::string *error)
{
  std::vector<uint8_t> got (want.size ());
  if (cudaMemcpy (got.data (), dev, got.size (), cudaMemcpyDefault)
      != cudaSuccess) {
    *error = "could not read the output back";
    return "?";
  }
  int worst = 0;
  size_t differ = 0;
  for (size_t i = 0; i < want.size (); i++) {
    int d = std::abs ((int)want[i] - (int)got[i]);
    worst = std::max (worst, d);
    differ += d != 0;
  }
  if (!worst)
    return "= CPU twin";
  return strf ("max diff %d (%.3f%% of bytes)", worst,
               100.0 * differ / want.size ());
}

/* The device-copy limit for @bytes of device traffic: a D2D cudaMemcpy of
 * half of them (read + write), after the same L2 eviction. */
bool
device_copy_ms (Gpu &gpu, int runs, double bytes, double *ms,
                std::string *error)
{
  const size_t n = (size_t)(bytes / 2);
  GpuMem mem;
  uint8_t *a = mem.alloc (n, false), *b = mem.alloc (n, false);
  if (!a || !b) {
    *error = "cudaMalloc for the device copy limit failed";
    return false;
  }
  Timing t;
  if (!gpu.time (
          runs,
          [&] {
            return cudaMemcpyAsync (b, a, n, cudaMemcpyDeviceToDevice,
                                    gpu.stream);
          },
          &t, error))
    return false;
  *ms = t.median_ms;
  return true;
}

#endif /* HAVE_CUDA */

/* Bus limits measured with zc-limits at the size of @w's source frame. */
struct BusRates
{
  double h2d = 0, d2h = 0, duplex = 0; /* GB/s */
};

/* Fills the limit of a GPU row from its traffic and the measured rates. */
[[maybe_unused]] void
set_limit (Row &r, const BusRates &bus, double device_copy_ms_)
{
  struct Term
  {
    const char *what;
    double ms;
  } terms[] = {
    { "PCIe H2D", bus.h2d > 0 ? r.bytes.mapped_read / bus.h2d / 1e6 : 0 },
    { "PCIe D2H", bus.d2h > 0 ? r.bytes.mapped_write / bus.d2h / 1e6 : 0 },
    { "PCIe duplex",
      bus.duplex > 0
          ? (r.bytes.mapped_read + r.bytes.mapped_write) / bus.duplex / 1e6
          : 0 },
    { "device copy", device_copy_ms_ },
  };
  r.limit_ms = 0;
  for (const auto &t : terms)
    if (t.ms > r.limit_ms) {
      r.limit_ms = t.ms;
      r.limit_what = t.what;
    }
}

/* ---- output ---------------------------------------------------------------
 */

std::string
num (const char *format, double v)
{
  return std::isfinite (v) ? strf (format, v) : "-";
}

std::string
json_str (const std::string &s)
{
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += std::string ("\\") + c;
    else if ((unsigned char)c >= 0x20)
      out += c;
  }
  return out + "\"";
}

std::string
json_num (double v)
{
  return std::isfinite (v) ? strf ("%.6g", v) : "null";
}

std::string
table (const std::vector<Row> &rows)
{
  std::string s
      = strf ("%-34s %-44s %25s %8s %7s %24s %5s %9s  %s\n", "workload",
              "implementation", "ms/frame med (min-max)", "MB r+w", "GB/s",
              "limit GB/s (bound)", "%lim", "vs CPU el", "check");
  const Workload *last = nullptr;
  for (const auto &r : rows) {
    if (last && r.w != last)
      s += "\n";
    s += strf ("%-34s %-44s ", r.w != last ? r.w->title.c_str () : "",
               r.impl.c_str ());
    last = r.w;
    if (!r.status.empty ()) {
      s += r.status + "\n";
      continue;
    }
    const double total = r.bytes.total ();
    s += strf ("%25s %8s %7s %24s %5s %9s  %s\n",
               (num ("%.3f", r.t.median_ms) + " (" + num ("%.3f", r.t.min_ms)
                + "-" + num ("%.3f", r.t.max_ms) + ")")
                   .c_str (),
               num ("%.1f", total / 1e6).c_str (),
               num ("%.1f", total / (r.t.median_ms * 1e6)).c_str (),
               r.limit_ms > 0 ? (num ("%.1f", total / (r.limit_ms * 1e6)) + " ("
                                 + r.limit_what + ")")
                                    .c_str ()
                              : "-",
               r.limit_ms > 0
                   ? num ("%.0f", 100.0 * r.limit_ms / r.t.median_ms).c_str ()
                   : "-",
               r.reference ? "1.00x" : (num ("%.2f", r.speedup) + "x").c_str (),
               r.check.c_str ());
  }
  return s;
}

std::string
targets (const std::vector<Row> &rows)
{
  std::string s = "\ntargets: GPU row >= 10x faster than the CPU element; a "
                  "memory-bound kernel >= 70% of its limit\n";
  bool any = false;
  for (const auto &r : rows) {
    if (!r.gpu || !r.status.empty ())
      continue;
    any = true;
    const double pct = 100.0 * r.limit_ms / r.t.median_ms;
    s += strf ("  %-34s %-36s speed %-4s (%6sx)   bandwidth %-4s (%3s%%)\n",
               r.w->title.c_str (), r.impl.c_str (),
               std::isfinite (r.speedup) ? (r.speedup >= 10 ? "PASS" : "FAIL")
                                         : "n/a",
               num ("%.1f", r.speedup).c_str (), pct >= 70 ? "PASS" : "FAIL",
               num ("%.0f", pct).c_str ());
  }
  if (!any)
    s += "  none: no GPU row ran\n";
  return s;
}

bool
write_json (const std::string &path, const std::vector<Row> &rows,
            const std::string &gpu, const Options &o,
            const std::map<std::string, BusRates> &bus)
{
  FILE *f = fopen (path.c_str (), "w");
  if (!f)
    return false;
  fprintf (f, "{\n  \"gpu\": %s,\n  \"threads\": %u,\n  \"gstreamer\": %s,\n",
           gpu.empty () ? "null" : json_str (gpu).c_str (), o.threads,
           json_str (gst_version_string ()).c_str ());
  fprintf (f,
           "  \"settings\": {\"runs\": %d, \"cpu_runs\": %d, "
           "\"frames\": %d},\n  \"bus_gbps\": {",
           o.runs, o.cpu_runs, o.frames);
  const char *sep = "";
  for (const auto &kv : bus) {
    fprintf (f, "%s%s: {\"h2d\": %s, \"d2h\": %s, \"duplex\": %s}", sep,
             json_str (kv.first).c_str (), json_num (kv.second.h2d).c_str (),
             json_num (kv.second.d2h).c_str (),
             json_num (kv.second.duplex).c_str ());
    sep = ", ";
  }
  fprintf (f, "},\n  \"rows\": [");
  sep = "\n";
  for (const auto &r : rows) {
    const bool ok = r.status.empty ();
    fprintf (
        f,
        "%s    {\"workload\": %s, \"implementation\": %s, \"gpu\": %s, "
        "\"status\": %s, \"ms_median\": %s, \"ms_min\": %s, \"ms_max\": %s, "
        "\"mapped_read\": %s, \"mapped_write\": %s, \"device_read\": %s, "
        "\"device_write\": %s, \"gbps\": %s, \"limit_ms\": %s, "
        "\"limit\": %s, \"percent_of_limit\": %s, \"speedup_vs_cpu_element\": "
        "%s, \"check\": %s}",
        sep, json_str (r.w->id).c_str (), json_str (r.impl).c_str (),
        r.gpu ? "true" : "false", json_str (ok ? "ok" : r.status).c_str (),
        json_num (ok ? r.t.median_ms : NAN).c_str (),
        json_num (ok ? r.t.min_ms : NAN).c_str (),
        json_num (ok ? r.t.max_ms : NAN).c_str (),
        json_num (r.bytes.mapped_read).c_str (),
        json_num (r.bytes.mapped_write).c_str (),
        json_num (r.bytes.device_read).c_str (),
        json_num (r.bytes.device_write).c_str (),
        json_num (ok ? r.bytes.total () / (r.t.median_ms * 1e6) : NAN).c_str (),
        json_num (r.limit_ms > 0 ? r.limit_ms : NAN).c_str (),
        json_str (r.limit_what).c_str (),
        json_num (ok && r.limit_ms > 0 ? 100.0 * r.limit_ms / r.t.median_ms
                                       : NAN)
            .c_str (),
        json_num (r.speedup).c_str (), json_str (r.check).c_str ());
    sep = ",\n";
  }
  fprintf (f, "\n  ]\n}\n");
  return fclose (f) == 0;
}

int
usage ()
{
  fprintf (stderr, "usage: zc-compute-bench [--runs N] [--cpu-runs N] "
                   "[--frames N] [--threads T] [--only TEXT] [--out DIR]\n");
  return 2;
}

} // namespace

int
main (int argc, char **argv)
{
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto number = [&] (int *out) {
      if (!v || atoi (v) < 1)
        return false;
      *out = atoi (v);
      i++;
      return true;
    };
    int threads = 0;
    if ((a == "--runs" && number (&o.runs))
        || (a == "--cpu-runs" && number (&o.cpu_runs))
        || (a == "--frames" && number (&o.frames))) {
    } else if (a == "--threads" && number (&threads)) {
      o.threads = (unsigned)threads;
    } else if ((a == "--only" || a == "--out") && v) {
      (a == "--only" ? o.only : o.out) = v;
      i++;
    } else {
      return usage ();
    }
  }
  gst_init (nullptr, nullptr);

  std::string gpu_name, no_gpu;
  const bool have_gpu = zc_bench::gpu_available (&gpu_name, &no_gpu);
  const std::string T = std::to_string (o.threads);
  std::string report = strf (
      "zc-compute-bench: %s; %u CPU threads (%u cores); %s; GPU: median of %d "
      "launches (CUDA events, L2 evicted before each); CPU elements: per "
      "frame, up to %d frames or ~3 s; zc CPU: median of up to %d\n",
      have_gpu ? gpu_name.c_str () : ("no GPU (" + no_gpu + ")").c_str (),
      o.threads, std::max (1u, std::thread::hardware_concurrency ()),
      gst_version_string (), o.runs, o.frames, o.cpu_runs);
#if HAVE_CUDA
  /* the conversion kernels' plan: a __grid_constant__ parameter, or
   * device memory (older toolkits and architectures, or
   * -Dcuda-grid-constant=disabled) */
  if (have_gpu) {
    const char *plan = zc::convert_cuda_plan_source ();
    report += strf ("conversion plan from: %s\n",
                    plan ? plan : "unknown (the device did not initialise)");
  }
#endif

  const std::string vcs
      = "videoconvertscale n-threads=" + T + " method=bilinear";
  const std::vector<Workload> all = {
    { "convert-4k", "NV12 4K > RGBA 1080p, bilinear", Kind::CONVERT,
      zc::PixFmt::NV12, zc::PixFmt::RGBA, 3840, 2160, 1920, 1080, vcs,
      "video/x-raw,format=NV12,width=3840,height=2160,framerate=30/1",
      "video/x-raw,format=RGBA,width=1920,height=1080" },
    { "convert-1080", "NV12 1080p > RGBA 1080p", Kind::CONVERT,
      zc::PixFmt::NV12, zc::PixFmt::RGBA, 1920, 1080, 1920, 1080, vcs,
      "video/x-raw,format=NV12,width=1920,height=1080,framerate=30/1",
      "video/x-raw,format=RGBA,width=1920,height=1080" },
    { "blur-4k", "gaussian blur sigma 2, 4K", Kind::BLUR, zc::PixFmt::RGBA,
      zc::PixFmt::RGBA, 3840, 2160, 3840, 2160, "gaussianblur sigma=2",
      "video/x-raw,format=AYUV,width=3840,height=2160,framerate=30/1",
      "video/x-raw,format=AYUV,width=3840,height=2160" },
    { "blur-1080", "gaussian blur sigma 2, 1080p", Kind::BLUR, zc::PixFmt::RGBA,
      zc::PixFmt::RGBA, 1920, 1080, 1920, 1080, "gaussianblur sigma=2",
      "video/x-raw,format=AYUV,width=1920,height=1080,framerate=30/1",
      "video/x-raw,format=AYUV,width=1920,height=1080" },
  };
  std::vector<const Workload *> work;
  for (const auto &w : all)
    if (o.only.empty () || w.id.find (o.only) != std::string::npos)
      work.push_back (&w);

  bool failed = false;
  std::vector<Row> rows;
  std::map<std::string, BusRates> bus; /* by source frame */

#if HAVE_CUDA
  Gpu gpu;
  std::string gpu_error;
  const bool gpu_ok = have_gpu && gpu.init (&gpu_error);
  if (have_gpu && !gpu_ok) {
    fprintf (stderr, "zc-compute-bench: %s\n", gpu_error.c_str ());
    failed = true;
  }
#else
  const bool gpu_ok = false;
#endif

  for (const Workload *w : work) {
    const size_t in_bytes = frame_bytes (w->in_fmt, w->in_w, w->in_h);
    const size_t out_bytes = frame_bytes (w->out_fmt, w->out_w, w->out_h);
    const int passes = w->kind == Kind::BLUR ? blur_passes () : 1;
    fprintf (stderr, "running %s\n", w->id.c_str ());

    /* 1. the GStreamer CPU element, the reference */
    Row ref;
    ref.w = w;
    ref.reference = true;
    ref.impl = w->element + (w->kind == Kind::BLUR ? " (AYUV)" : "");
    ref.bytes.device_read = in_bytes; /* "device" here: system memory */
    ref.bytes.device_write = out_bytes;
    std::string error;
    if (!have_element (w->element))
      ref.status = "not available (element not found)";
    else if (!time_element (*w, o, &ref.t, &error)) {
      ref.status = "FAILED: " + error;
      failed = true;
    }
    rows.push_back (ref);
    const double cpu_ms = ref.status.empty () ? ref.t.median_ms : NAN;

    /* 2. the CPU twin with T threads */
    HostFrames h;
    host_frames (*w, &h);
    Row twin;
    twin.w = w;
    twin.impl = std::string (w->kind == Kind::CONVERT ? "zc::convert_cpu"
                                                      : "zc::spatial_cpu")
                + " " + T + " threads";
    twin.bytes.device_read = (double)in_bytes * passes;
    twin.bytes.device_write = (double)out_bytes * passes;
    bool twin_ok = true;
    if (!run_cpu_twin (*w, &h, o.threads)) { /* warm-up */
      twin.status = "FAILED: the function refused the request";
      failed = true;
      twin_ok = false;
    } else {
      std::vector<double> ms;
      const auto began = Clock::now ();
      for (int i = 0; i < o.cpu_runs; i++) {
        if (i >= 3
            && std::chrono::duration<double> (Clock::now () - began).count ()
                   > 3.0)
          break; /* a slow twin: 3 runs and ~3 s are enough */
        auto t0 = Clock::now ();
        run_cpu_twin (*w, &h, o.threads);
        ms.push_back (
            std::chrono::duration<double, std::milli> (Clock::now () - t0)
                .count ());
      }
      twin.t = timing_of (ms);
      twin.speedup = cpu_ms / twin.t.median_ms;
    }
    rows.push_back (twin);
    (void)twin_ok; /* read by the GPU rows, when built with CUDA */

    /* 3. the GPU rows */
    struct Variant
    {
      const char *name;
      bool in_mapped, out_mapped;
      /* the source first copied into device memory by the copy engines
       * (cudaMemcpyAsync), then converted from there: what zcfilter does
       * with a mapped source other than 4-byte RGB read in place */
      bool staged;
      /* a run of frames staged as zcfilter stages them (StagePipe) */
      bool in_flight;
    };
    std::vector<Variant> variants;
    if (w->kind == Kind::CONVERT)
      variants = { { "mapped > mapped", true, true, false, false },
                   { "mapped > mapped, staged", true, true, true, false },
                   { "mapped > mapped, staged, 2 in flight", true, true, true,
                     true },
                   { "device > device", false, false, false, false } };
    else
      variants = { { "device > device", false, false, false, false },
                   { "device > mapped", false, true, false, false } };

    BusRates rates;
#if HAVE_CUDA
    if (gpu_ok) {
      zc_bench::Limits l;
      const bool rgba = w->in_fmt == zc::PixFmt::RGBA;
      const size_t row_bytes
          = zc::pixfmt_plane_row_bytes (w->in_fmt, 0, w->in_w);
      if (zc_bench::measure_limits (row_bytes, in_bytes / row_bytes, rgba,
                                    o.runs, &l, &error)) {
        rates.h2d = zc_bench::gigabytes_per_second (l.bytes,
                                                    l.host_to_device.median_ms);
        rates.d2h = zc_bench::gigabytes_per_second (l.bytes,
                                                    l.device_to_host.median_ms);
        rates.duplex = zc_bench::gigabytes_per_second (
            2.0 * l.bytes, l.mapped_in_place.median_ms);
        bus[w->title] = rates;
      } else {
        fprintf (stderr, "zc-compute-bench: limits for %s: %s\n",
                 w->id.c_str (), error.c_str ());
        failed = true;
      }
    }
#endif
    for (const auto &v : variants) {
      Row r;
      r.w = w;
      r.gpu = true;
      r.impl = std::string (w->kind == Kind::CONVERT ? "zc::convert_cuda "
                                                     : "zc::spatial_cuda ")
               + v.name;
      /* pass k reads the source (k = 0) or scratch, writes scratch or the
       * destination (k = P-1); scratch is device memory */
      const double fin = (double)in_bytes, fout = (double)out_bytes;
      (v.in_mapped ? r.bytes.mapped_read : r.bytes.device_read) += fin;
      (v.out_mapped ? r.bytes.mapped_write : r.bytes.device_write) += fout;
      r.bytes.device_read += (passes - 1) * fout;
      r.bytes.device_write += (passes - 1) * fout;
      if (v.staged) {
        r.bytes.device_read += fin;
        r.bytes.device_write += fin;
      }
      if (!have_gpu || !gpu_ok) {
        r.status = have_gpu ? "FAILED: CUDA setup" : "no GPU";
        rows.push_back (r);
        continue;
      }
#if HAVE_CUDA
      GpuMem mem;
      uint8_t *in = mem.alloc (in_bytes, v.in_mapped);
      uint8_t *out = mem.alloc (out_bytes, v.out_mapped);
      uint8_t *scratch = passes > 1 ? mem.alloc (out_bytes, false) : nullptr;
      uint8_t *stage = v.staged ? mem.alloc (in_bytes, false) : nullptr;
      uint8_t *stage2 = v.in_flight ? mem.alloc (in_bytes, false) : nullptr;
      StagePipe pipe;
      error.clear ();
      if (!in || !out || (passes > 1 && !scratch) || (v.staged && !stage)
          || (v.in_flight && (!stage2 || !pipe.init (&error)))) {
        r.status = "FAILED: allocation";
        failed = true;
        rows.push_back (r);
        continue;
      }
      zc::FrameDesc src = make_desc (w->in_fmt, w->in_w, w->in_h, in, nullptr);
      zc::FrameDesc dst
          = make_desc (w->out_fmt, w->out_w, w->out_h, out, nullptr);
      zc::FrameDesc tmp
          = make_desc (w->out_fmt, w->out_w, w->out_h, scratch, nullptr);
      (void)tmp;
      zc::FrameDesc staged
          = make_desc (w->in_fmt, w->in_w, w->in_h, stage, nullptr);
      const zc::FrameDesc staged2
          = make_desc (w->in_fmt, w->in_w, w->in_h, stage2, nullptr);
      std::function<cudaError_t ()> launch;
      if (v.in_flight) {
        launch = [&]() -> cudaError_t {
          cudaError_t err = cudaEventRecord (pipe.go, gpu.stream);
          if (err == cudaSuccess)
            err = cudaStreamWaitEvent (pipe.copy, pipe.go, 0);
          for (int f = 0; f < STAGE_BATCH && err == cudaSuccess; f++) {
            const int k = f & 1;
            err = cudaStreamWaitEvent (pipe.copy, pipe.consumed[k], 0);
            if (err == cudaSuccess)
              err = cudaMemcpyAsync (k ? stage2 : stage, in, in_bytes,
                                     cudaMemcpyDefault, pipe.copy);
            if (err == cudaSuccess)
              err = cudaEventRecord (pipe.copied[k], pipe.copy);
            if (err == cudaSuccess)
              err = cudaStreamWaitEvent (gpu.stream, pipe.copied[k], 0);
            if (err == cudaSuccess)
              err = zc::convert_cuda (k ? staged2 : staged, dst,
                                      convert_params (), gpu.stream);
            if (err == cudaSuccess)
              err = cudaEventRecord (pipe.consumed[k], gpu.stream);
          }
          return err;
        };
      } else if (v.staged) {
        launch = [&] {
          cudaError_t err = cudaMemcpyAsync (stage, in, in_bytes,
                                             cudaMemcpyDefault, gpu.stream);
          return err != cudaSuccess ? err
                                    : zc::convert_cuda (staged, dst,
                                                        convert_params (),
                                                        gpu.stream);
        };
      } else if (w->kind == Kind::CONVERT) {
        launch = [&] {
          return zc::convert_cuda (src, dst, convert_params (), gpu.stream);
        };
      } else {
        launch = [&] {
          return zc::spatial_cuda (src, dst, passes > 1 ? &tmp : nullptr,
                                   blur_params (), gpu.stream);
        };
      }
      double copy_ms = 0;
      const double dev_bytes = r.bytes.device_read + r.bytes.device_write;
      if (!upload (h.in, in, &error) || !gpu.time (o.runs, launch, &r.t, &error)
          || (dev_bytes > 0
              && !device_copy_ms (gpu, o.runs, dev_bytes, &copy_ms, &error))) {
        r.status = "FAILED: " + error;
        failed = true;
        rows.push_back (r);
        continue;
      }
      if (v.in_flight) { /* per frame */
        r.t.median_ms /= STAGE_BATCH;
        r.t.min_ms /= STAGE_BATCH;
        r.t.max_ms /= STAGE_BATCH;
      }
      set_limit (r, rates, copy_ms);
      r.speedup = cpu_ms / r.t.median_ms;
      r.check = twin_ok ? compare (h.out, out, &error) : "no CPU twin output";
      if (!error.empty ()) {
        r.check = error;
        failed = true;
      }
#endif
      rows.push_back (r);
    }
  }

  report += "\n" + table (rows);
  report += "\nlimits: measured in this run at the size of each workload's "
            "source frame (bench/zc-limits.cpp):\n";
  for (const auto &kv : bus)
    report += strf ("  %-34s pinned H2D %.1f GB/s, D2H %.1f GB/s, duplex "
                    "(LUT kernel in place on mapped) %.1f GB/s\n",
                    kv.first.c_str (), kv.second.h2d, kv.second.d2h,
                    kv.second.duplex);
  if (bus.empty ())
    report += "  n/a (no GPU)\n";
  report += strf (
      "  device copy: a device-to-device cudaMemcpy moving the row's device "
      "bytes, L2 evicted first.\n"
      "MB r+w: the source frame read and the destination written once; a "
      "spatial effect of P passes (P = %d for this blur) also writes and "
      "reads P-1 scratch frames in device memory. GB/s: MB r+w over "
      "ms/frame; %%lim: limit time / ms/frame.\n"
      "vs CPU el: the CPU element's ms/frame over this row's. The CPU "
      "element blurs AYUV (it takes nothing else), zc RGBA: same size.\n",
      blur_passes ());
  report += targets (rows);
  fputs (report.c_str (), stdout);

  if (!o.out.empty ()) {
    g_mkdir_with_parents (o.out.c_str (), 0755);
    const std::string txt = o.out + "/compute-bench.txt";
    const std::string json = o.out + "/compute-bench.json";
    FILE *f = fopen (txt.c_str (), "w");
    if (!f || fputs (report.c_str (), f) < 0 || fclose (f) != 0
        || !write_json (json, rows, gpu_name, o, bus)) {
      fprintf (stderr, "zc-compute-bench: could not write under %s\n",
               o.out.c_str ());
      failed = true;
    } else {
      fprintf (stderr, "zc-compute-bench: wrote %s, %s\n", txt.c_str (),
               json.c_str ());
    }
  }
  return failed ? 1 : 0;
}

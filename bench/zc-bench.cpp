/* gst-zerocopy: the benchmark harness.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs every case R times, each run a fresh pipeline instance, and prints one
 * table (median and min-max of ms/frame), optionally also as JSON and a PNG
 * chart (bench/chart.py). bench/run.sh is the one command that runs it all.
 *
 *   appsrc ! <pipeline under test> ! queue ! fakesink sync=false
 *
 * The source must not be what is measured. The harness's appsrc takes its
 * buffers from the pool the element after it proposes (an ALLOCATION query
 * on appsrc's src pad peer, as in examples/embed-appsrc.cpp) and fills each
 * pool buffer only the first time it meets its memory, so in steady state it
 * costs an acquire and a push. When downstream proposes no pool it pushes
 * refs of a ring of filled system buffers instead; an element that wants to
 * write then copies them, which is its real cost. The table says which.
 *
 * The sink maps each frame for reading, as a CPU consumer would (for GPU
 * frames that waits for the GPU work on them; nothing reads the bytes). The
 * same queue (SINK_QUEUE below, 3 buffers) sits before the sink in every
 * case, so that this wait happens on the sink's own thread while the
 * pipeline under test already works on the next frames, as it would in an
 * application with a consumer thread; without it every frame was
 * serialised: launch, wait for the GPU, only then take the next frame.
 * fakesink keeps no last sample (it would hold one pool buffer back).
 *
 * Timed: from the push of the first frame after the warm-up to the moment the
 * last one has been mapped at the sink; a run stops early, with at least 3
 * timed frames, once it has taken --run-seconds (default 30: a CPU-backend
 * conversion at 4K takes seconds a frame), and the table notes it. CPU time:
 * getrusage (RUSAGE_SELF), user + system, over the same frames, all threads.
 * The timed runs carry no tracer at all (its hooks push an event before every
 * buffer on every pad).
 *
 * Latency: after all timed runs, GStreamer's latency tracer (flags=element)
 * is instantiated and each case runs once more, paced: a frame is pushed
 * only when the previous one has been mapped at the sink, so the figures are
 * one frame's trip through an idle pipeline, not time spent waiting behind
 * other frames. The tracer's element latency is, for each element, the time
 * from the previous element starting to push a buffer to this element
 * starting to push it on: its processing on the streaming thread (for a GPU
 * element: the kernel launch, not the kernel). The GPU work itself shows at
 * the sink, as the wait in its map ("(sink map)"). "lat ms" is measured
 * directly in that run: the mean time from appsrc's push of a frame to the
 * end of its map at the sink, i.e. the per-element figures, the queue's
 * thread hand-off (tens of microseconds) and the map wait together: from the
 * frame entering the pipeline under test to its bytes being readable by the
 * CPU. "lat/proc" divides it by the case's own ms/frame (its processing
 * time per frame in the timed runs), for reading only: with the stages
 * overlapped a trip is longer than the time between frames by design, so
 * no target is set on it. For invert on mapped memory the summary divides
 * it by the bare kernel.
 *
 *   zc-bench [--quick] [--runs R] [--warmup N] [--frames-1080 N]
 *            [--frames-4k N] [--threads N] [--run-seconds S] [--only TEXT]
 *            [--no-latency]
 *            [--json FILE] [--png FILE]
 */
#include "zc-limits.h"

#include <gst/app/app.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#ifndef ZC_BENCH_CHART
#define ZC_BENCH_CHART "bench/chart.py"
#endif
/* The kernel of the zckernel case (bench/meson.build passes the source
 * tree's); $ZC_BENCH_INVERT_KERNEL overrides it */
#ifndef ZC_BENCH_INVERT_KERNEL
#define ZC_BENCH_INVERT_KERNEL "examples/kernels/invert.cu"
#endif

namespace {

using Clock = std::chrono::steady_clock;

/* Before the sink in every case; see above. No byte or time limit: a 4K
 * RGBA frame alone is over queue's default 10 MB. */
constexpr const char *SINK_QUEUE
    = "queue name=sinkqueue max-size-buffers=3 max-size-bytes=0 "
      "max-size-time=0";

struct Options
{
  int runs = 5, warmup = 30, frames_1080 = 300, frames_4k = 150;
  int limit_runs = 50;
  int run_seconds = 30; /* per run; a slower case times fewer frames */
  int threads = (int)std::max (1u, std::thread::hardware_concurrency ());
  bool latency = true;
  std::string only, json, png;
};

/* ---- latency tracer records, captured from the debug log ---------------- */

struct LatencyLog
{
  std::mutex lock;
  bool recording = false;
  /* element name, sum of ns, count; in the order the elements report,
   * which is the pipeline's order */
  std::vector<std::pair<std::string, std::pair<double, guint64> > > sum_ns;
} latency_log;

void
on_debug_log (GstDebugCategory *category, GstDebugLevel level,
              const gchar *file, const gchar *function, gint line,
              GObject *object, GstDebugMessage *message, gpointer)
{
  if (strcmp (gst_debug_category_get_name (category), "GST_TRACER") != 0) {
    gst_debug_log_default (category, level, file, function, line, object,
                           message, nullptr);
    return;
  }
  const gchar *text = gst_debug_message_get (message);
  if (!text || !g_str_has_prefix (text, "element-latency"))
    return;
  {
    std::lock_guard<std::mutex> guard (latency_log.lock);
    if (!latency_log.recording)
      return;
  }
  GstStructure *s = gst_structure_from_string (text, nullptr);
  if (!s)
    return;
  const gchar *element = gst_structure_get_string (s, "element");
  guint64 ns = 0;
  if (element && gst_structure_get_uint64 (s, "time", &ns)) {
    std::lock_guard<std::mutex> guard (latency_log.lock);
    auto &log = latency_log.sum_ns;
    auto it = std::find_if (log.begin (), log.end (),
                            [&] (const auto &e) { return e.first == element; });
    if (it == log.end ())
      it = log.insert (log.end (), { element, { 0.0, 0 } });
    it->second.first += (double)ns;
    it->second.second++;
  }
  gst_structure_free (s);
}

void
set_latency_logging (bool on)
{
  if (on)
    gst_debug_set_threshold_for_name ("GST_TRACER", GST_LEVEL_TRACE);
  else
    gst_debug_unset_threshold_for_name ("GST_TRACER");
  std::lock_guard<std::mutex> guard (latency_log.lock);
  latency_log.recording = false;
  latency_log.sum_ns.clear ();
}

/* Instantiates GStreamer's latency tracer with flags=element, as
 * GST_TRACERS="latency(flags=element)" would at gst_init. Its hooks stay for
 * the rest of the process (there is no way to remove them), so this comes
 * after the timed runs. GStreamer allows it while no pipeline is past READY,
 * which holds between two runs. Returns false when the tracer is missing. */
bool
start_latency_tracer ()
{
  static bool started = false;
  if (started)
    return true;
  GstPluginFeature *feature
      = gst_registry_lookup_feature (gst_registry_get (), "latency");
  if (!feature)
    return false;
  GstPluginFeature *loaded = gst_plugin_feature_load (feature);
  gst_object_unref (feature);
  if (!loaded || !GST_IS_TRACER_FACTORY (loaded)) {
    if (loaded)
      gst_object_unref (loaded);
    return false;
  }
  GType type = gst_tracer_factory_get_tracer_type (GST_TRACER_FACTORY (loaded));
  gst_object_unref (loaded);
  GObjectClass *klass = (GObjectClass *)g_type_class_ref (type);
  GParamSpec *flags = g_object_class_find_property (klass, "flags");
  GstTracer *tracer = nullptr;
  if (flags && G_IS_PARAM_SPEC_FLAGS (flags)) { /* newer GStreamer */
    GFlagsValue *element = g_flags_get_value_by_nick (
        G_PARAM_SPEC_FLAGS (flags)->flags_class, "element");
    if (element)
      tracer
          = (GstTracer *)g_object_new (type, "flags", element->value, nullptr);
  } else { /* up to 1.22: the tracer parses its "params" string */
    tracer
        = (GstTracer *)g_object_new (type, "params", "flags=element", nullptr);
  }
  g_type_class_unref (klass);
  if (!tracer)
    return false;
  /* The tracing subsystem keeps a ref per hook it registered. */
  gst_object_ref_sink (tracer);
  gst_object_unref (tracer);
  gst_debug_set_active (TRUE);
  return started = true;
}

/* ---- the cases ---------------------------------------------------------- */

enum class Bus {
  NONE,   /* CPU only */
  ZC,     /* decided by the zc elements' stats after the run */
  COPIES, /* cudaupload/cudadownload: frame in, frame out */
};

struct Frame
{
  std::string name; /* "1080p RGBA": also the key of its limits */
  GstVideoInfo info;
};

struct Row
{
  std::string test, label, middle; /* middle: between appsrc and fakesink */
  Frame in, out;
  Bus bus = Bus::NONE;
  int filters = 1;  /* zcfilters in the chain */
  int group = -1;   /* "common": the request, shared by its rows */
  std::string na;   /* not empty: not run, and why */
  std::string note; /* shown under the table */

  /* results */
  std::vector<double> ms, cpu_s;
  std::string source_mode, backend, memory_type, error;
  double copies_per_frame = 0.0;
  std::vector<std::pair<std::string, double> > latency_ms;
  double latency_total_ms = NAN; /* paced: push to mapped at the sink */
  double pcie_bytes = 0.0, gbps = 0.0, limit_gbps = 0.0;
};

Frame
make_frame (GstVideoFormat format, int w, int h)
{
  Frame f;
  gst_video_info_set_format (&f.info, format, w, h);
  f.info.fps_n = 30;
  f.info.fps_d = 1;
  f.name = std::string (h == 2160   ? "4K"
                        : h == 1080 ? "1080p"
                                    : std::to_string (h) + "p")
           + " " + gst_video_format_to_string (format);
  return f;
}

bool
have_factory (const char *name)
{
  GstElementFactory *f = gst_element_factory_find (name);
  if (f)
    gst_object_unref (f);
  return f != nullptr;
}

/* Whether zcupload's memory-type enum has the value nick @nick. */
bool
zc_memory_type_exists (const char *nick)
{
  GstElementFactory *f = gst_element_factory_find ("zcupload");
  if (!f)
    return false;
  GstPluginFeature *loaded = gst_plugin_feature_load (GST_PLUGIN_FEATURE (f));
  gst_object_unref (f);
  if (!loaded)
    return false;
  GType type
      = gst_element_factory_get_element_type (GST_ELEMENT_FACTORY (loaded));
  gst_object_unref (loaded);
  gpointer klass = g_type_class_ref (type);
  GParamSpec *pspec
      = g_object_class_find_property (G_OBJECT_CLASS (klass), "memory-type");
  bool found = pspec && G_IS_PARAM_SPEC_ENUM (pspec)
               && g_enum_get_value_by_nick (
                   G_PARAM_SPEC_ENUM (pspec)->enum_class, nick);
  g_type_class_unref (klass);
  return found;
}

/* examples/kernels/invert.cu: $ZC_BENCH_INVERT_KERNEL, else the source
 * tree's, else relative to the current folder (the repository root); ""
 * when none is there */
std::string
invert_kernel_path ()
{
  const gchar *env = g_getenv ("ZC_BENCH_INVERT_KERNEL");
  if (env && *env)
    return g_file_test (env, G_FILE_TEST_IS_REGULAR) ? env : "";
  for (const char *p : { ZC_BENCH_INVERT_KERNEL, "examples/kernels/invert.cu" })
    if (g_file_test (p, G_FILE_TEST_IS_REGULAR))
      return p;
  return "";
}

std::string
join_reasons (const std::vector<std::string> &why)
{
  std::string s;
  for (const auto &w : why)
    s += (s.empty () ? "" : "; ") + w;
  return s.empty () ? s : "not available (" + s + ")";
}

std::vector<Row>
make_rows (const Options &o, bool gpu)
{
  const bool have_zc = have_factory ("zcupload");
  const bool have_device = have_zc && zc_memory_type_exists ("device");
  const bool have_cuda_updown
      = have_factory ("cudaupload") && have_factory ("cudadownload");
  const std::string nt = "n-threads=" + std::to_string (o.threads);
  std::vector<Row> rows;

  auto add = [&] (const std::string &test, const Frame &in, const Frame &out,
                  const std::string &label, const std::string &middle, Bus bus,
                  std::vector<std::string> why) {
    Row r;
    r.test = test;
    r.in = in;
    r.out = out;
    r.label = label;
    r.middle = middle;
    r.bus = bus;
    if (!have_zc && middle.find ("zcupload") != std::string::npos)
      why.push_back ("zcupload not found: GST_PLUGIN_PATH=build/gst");
    r.na = join_reasons (why);
    rows.push_back (r);
    return &rows.back ();
  };
  std::vector<std::string> gpu_why;
  if (!gpu)
    gpu_why.push_back ("no GPU");
  auto device_why = gpu_why;
  if (!have_device)
    device_why.push_back ("memory-type=device not built yet");
  auto cuda_why = gpu_why;
  if (!have_cuda_updown)
    cuda_why.push_back ("cudaupload/cudadownload not registered");
  /* zckernel running examples/kernels/invert.cu: zcfilter invert=true's
   * bytes from a user's kernel, against the "zc" case next to it */
  const std::string invert_cu = invert_kernel_path ();
  auto kernel_why = gpu_why;
  if (!have_factory ("zckernel"))
    kernel_why.push_back ("zckernel not registered");
  if (invert_cu.empty ())
    kernel_why.push_back ("examples/kernels/invert.cu not found: set "
                          "ZC_BENCH_INVERT_KERNEL");
  const std::string zckernel_chain
      = "zcupload name=zcupload memory-type=mapped ! zckernel name=zckernel "
        "memory-type=mapped location=\""
        + invert_cu + "\" ! zcdownload name=zcdownload memory-type=mapped";

  /* zcupload ! zcfilter PROPS ! ... ! zcdownload, all with one memory-type
   * (nullptr: the default, auto) */
  auto zc_chain
      = [] (const std::vector<std::string> &filters, const char *mem) {
          std::string m = mem ? std::string (" memory-type=") + mem : "";
          std::string chain = "zcupload name=zcupload" + m;
          for (const auto &props : filters)
            chain += " ! zcfilter" + m + " " + props;
          return chain + " ! zcdownload name=zcdownload" + m;
        };
  const std::vector<std::string> one = { "name=zcfilter invert=true" };
  const std::vector<std::string> three
      = { "name=invert invert=true", "name=contrast contrast=1.2",
          "name=gamma gamma=1.5" };
  const std::vector<std::string> all_three
      = { "name=zcfilter invert=true contrast=1.2 gamma=1.5" };
  const char *updown = "cudaupload name=cudaupload ! "
                       "video/x-raw(memory:CUDAMemory) ! "
                       "cudadownload name=cudadownload";

  for (const char *test : { "invert", "chain3" }) {
    for (int h : { 1080, 2160 }) {
      for (GstVideoFormat fmt :
           { GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12 }) {
        Frame f = make_frame (fmt, h * 16 / 9, h);
        const bool rgba = fmt == GST_VIDEO_FORMAT_RGBA;
        if (strcmp (test, "invert") == 0) {
          add (test, f, f, "zc", zc_chain (one, nullptr), Bus::ZC, {});
          if (h == 2160 && rgba)
            add (test, f, f, "zckernel", zckernel_chain, Bus::ZC, kernel_why)
                ->note
                = "zckernel location=examples/kernels/invert.cu (compiled "
                  "with NVRTC at the first start, then from the cache), on "
                  "mapped memory";
          add (test, f, f, "zc device", zc_chain (one, "device"), Bus::ZC,
               device_why);
          add (test, f, f, "videobalance (1 thread)",
               "videobalance name=videobalance contrast=1.2 brightness=0.1",
               Bus::NONE, {})
              ->note
              = "videobalance has no n-threads: one thread";
          add (test, f, f,
               std::string ("videoconvert to ") + (rgba ? "BGRA " : "I420 ")
                   + nt,
               "videoconvert name=videoconvert " + nt
                   + " ! video/x-raw,format=" + (rgba ? "BGRA" : "I420"),
               Bus::NONE, {});
          add (test, f, f, "cudaupload ! cudadownload", updown, Bus::COPIES,
               cuda_why)
              ->note
              = "no CUDA point-op element in GStreamer: transfer only";
        } else {
          add (test, f, f, "zc x1", zc_chain (one, nullptr), Bus::ZC, {});
          add (test, f, f, "zc x1 all three", zc_chain (all_three, nullptr),
               Bus::ZC, {})
              ->note
              = "one zcfilter invert=true contrast=1.2 gamma=1.5, the work "
                "of the chain in one element";
          add (test, f, f, "zc x3", zc_chain (three, nullptr), Bus::ZC, {})
              ->filters
              = 3;
          add (test, f, f, "zc x3 device", zc_chain (three, "device"), Bus::ZC,
               device_why)
              ->filters
              = 3;
        }
      }
    }
  }

  /* convert-scale: NV12 4K to RGBA 1080p */
  Frame in = make_frame (GST_VIDEO_FORMAT_NV12, 3840, 2160);
  Frame out = make_frame (GST_VIDEO_FORMAT_RGBA, 1920, 1080);
  const std::string out_caps = "video/x-raw,format=RGBA,width=1920,height=1080";
  const char *cs = "convert-scale";
  /* zcfilter converts and scales between its caps; until it does, this
   * case fails to negotiate and is reported as failed. */
  auto zc_convert = [&] (const char *mem) {
    std::string m = mem ? std::string (" memory-type=") + mem : "";
    return "zcupload name=zcupload" + m + " ! zcfilter name=zcfilter " + nt + m
           + " ! video/x-raw(memory:CUDAZeroCopy),format=RGBA,width=1920,"
             "height=1080 ! zcdownload name=zcdownload"
           + m;
  };
  add (cs, in, out, "zc", zc_convert (nullptr), Bus::ZC, {});
  add (cs, in, out, "zc device", zc_convert ("device"), Bus::ZC, device_why);
  add (cs, in, out, "videoconvertscale " + nt,
       "videoconvertscale name=videoconvertscale " + nt + " ! " + out_caps,
       Bus::NONE,
       have_factory ("videoconvertscale")
           ? std::vector<std::string>{}
           : std::vector<std::string>{ "videoconvertscale not found" });
  add (cs, in, out, "videoconvert ! videoscale " + nt,
       "videoconvert name=videoconvert " + nt
           + " ! video/x-raw,format=RGBA ! videoscale name=videoscale " + nt
           + " ! " + out_caps,
       Bus::NONE, {});
  auto cuda_convert_why = cuda_why;
  if (!have_factory ("cudaconvert") || !have_factory ("cudascale"))
    cuda_convert_why.push_back ("cudaconvert/cudascale not registered");
  add (cs, in, out, "cudaupload ! cudaconvert ! cudascale",
       "cudaupload name=cudaupload ! cudaconvert name=cudaconvert ! "
       "video/x-raw(memory:CUDAMemory),format=RGBA ! cudascale "
       "name=cudascale ! video/x-raw(memory:CUDAMemory),width=1920,"
       "height=1080 ! cudadownload name=cudadownload",
       Bus::COPIES, cuda_convert_why);
  add (cs, in, in, "cudaupload ! cudadownload (no convert)", updown,
       Bus::COPIES, cuda_why)
      ->note
      = "the transfer a CUDA conversion would pay, without the work";

  /* balance: videobalance's four settings at 1080p, on the CPU backend
   * with one thread (videobalance's count) and with the CPU elements' */
  const std::string bal = "brightness=0.1 contrast=1.2 saturation=1.3 hue=0.2";
  for (GstVideoFormat fmt : { GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12 }) {
    Frame f = make_frame (fmt, 1920, 1080);
    add ("balance", f, f, "zc n-threads=1",
         zc_chain ({ "name=zcfilter n-threads=1 " + bal }, nullptr), Bus::ZC,
         {});
    add ("balance", f, f, "zc " + nt,
         zc_chain ({ "name=zcfilter " + nt + " " + bal }, nullptr), Bus::ZC,
         {});
    add ("balance", f, f, "videobalance (1 thread)",
         "videobalance name=videobalance " + bal, Bus::NONE, {})
        ->note
        = "balance: " + bal + " on every row";
  }

  /* repack: RGBA 4K to BGRA, a byte shuffle */
  {
    Frame rgba = make_frame (GST_VIDEO_FORMAT_RGBA, 3840, 2160);
    Frame bgra = make_frame (GST_VIDEO_FORMAT_BGRA, 3840, 2160);
    add ("repack", rgba, bgra, "zc " + nt,
         "zcupload name=zcupload ! zcfilter name=zcfilter " + nt
             + " ! video/x-raw(memory:CUDAZeroCopy),format=BGRA ! "
               "zcdownload name=zcdownload",
         Bus::ZC, {});
    add ("repack", rgba, bgra, "videoconvertscale " + nt,
         "videoconvertscale name=videoconvertscale " + nt
             + " ! video/x-raw,format=BGRA",
         Bus::NONE,
         have_factory ("videoconvertscale")
             ? std::vector<std::string>{}
             : std::vector<std::string>{ "videoconvertscale not found" });
  }

  /* common: everyday requests of CPU pipelines (into and out of R'G'B',
   * 4:2:2 to 4:2:0, scaling, orientation) at 1080p, against the CPU
   * element a user would write, the same thread count where it has one
   * (videoflip has none: it runs on one thread, and so does a second zc
   * row) */
  {
    struct Common
    {
      GstVideoFormat in;
      int iw, ih;
      GstVideoFormat out;
      int ow, oh;
      std::string zc_props, caps, cpu, cpu_label;
      bool one_thread;
    };
    auto fmt = [] (GstVideoFormat f) {
      return std::string (gst_video_format_to_string (f));
    };
    const GstVideoFormat RGBA = GST_VIDEO_FORMAT_RGBA,
                         NV12 = GST_VIDEO_FORMAT_NV12,
                         I420 = GST_VIDEO_FORMAT_I420,
                         YUY2 = GST_VIDEO_FORMAT_YUY2;
    const std::string vs = "videoscale name=videoscale " + nt + " method=";
    const std::string vc = "videoconvert name=videoconvert " + nt;
    const Common cases[] = {
      { I420, 1920, 1080, RGBA, 1920, 1080, "", "format=RGBA",
        vc + " ! video/x-raw,format=RGBA", "videoconvert " + nt, false },
      { RGBA, 1920, 1080, NV12, 1920, 1080, "", "format=NV12",
        vc + " ! video/x-raw,format=NV12", "videoconvert " + nt, false },
      { YUY2, 1920, 1080, NV12, 1920, 1080, "", "format=NV12",
        vc + " ! video/x-raw,format=NV12", "videoconvert " + nt, false },
      { NV12, 1920, 1080, I420, 1920, 1080, "", "format=I420",
        vc + " ! video/x-raw,format=I420", "videoconvert " + nt, false },
      { RGBA, 1920, 1080, RGBA, 1280, 720, "method=bilinear",
        "width=1280,height=720",
        vs + "bilinear ! video/x-raw,width=1280,height=720",
        "videoscale bilinear " + nt, false },
      { I420, 1920, 1080, I420, 1280, 720, "method=bilinear",
        "width=1280,height=720",
        vs + "bilinear ! video/x-raw,width=1280,height=720",
        "videoscale bilinear " + nt, false },
      { NV12, 1280, 720, NV12, 1920, 1080, "method=bilinear",
        "width=1920,height=1080",
        vs + "bilinear ! video/x-raw,width=1920,height=1080",
        "videoscale bilinear " + nt, false },
      { RGBA, 1920, 1080, RGBA, 1280, 720, "method=bicubic",
        "width=1280,height=720",
        vs + "mitchell ! video/x-raw,width=1280,height=720",
        "videoscale mitchell " + nt, false },
      { RGBA, 1920, 1080, RGBA, 1280, 720, "method=nearest-neighbour",
        "width=1280,height=720",
        vs + "nearest-neighbour ! video/x-raw,width=1280,height=720",
        "videoscale nearest-neighbour " + nt, false },
      { RGBA, 1920, 1080, RGBA, 1080, 1920, "video-direction=90r", "",
        "videoflip name=videoflip video-direction=90r",
        "videoflip 90r (1 thread)", true },
      { I420, 1920, 1080, I420, 1920, 1080, "video-direction=horiz", "",
        "videoflip name=videoflip video-direction=horiz",
        "videoflip horiz (1 thread)", true },
    };
    int group = 0;
    for (const Common &c : cases) {
      Frame in = make_frame (c.in, c.iw, c.ih);
      Frame out = make_frame (c.out, c.ow, c.oh);
      auto chain = [&] (const std::string &threads) {
        return "zcupload name=zcupload ! zcfilter name=zcfilter " + threads
               + (c.zc_props.empty () ? "" : " " + c.zc_props)
               + (c.caps.empty ()
                      ? std::string ()
                      : " ! video/x-raw(memory:CUDAZeroCopy)," + c.caps)
               + " ! zcdownload name=zcdownload";
      };
      const std::string what = (c.zc_props.empty () ? "to " + fmt (c.out)
                                                     : c.zc_props);
      if (c.one_thread)
        add ("common", in, out, "zc " + what + " n-threads=1",
             chain ("n-threads=1"), Bus::ZC, {})
            ->group
            = group;
      add ("common", in, out, "zc " + what + " " + nt, chain (nt), Bus::ZC,
           {})
          ->group
          = group;
      add ("common", in, out, c.cpu_label, c.cpu, Bus::NONE, {})->group
          = group;
      group++;
    }
  }

  if (!o.only.empty ())
    rows.erase (
        std::remove_if (
            rows.begin (), rows.end (),
            [&] (const Row &r) {
              return (r.test + " " + r.in.name + " " + r.label).find (o.only)
                     == std::string::npos;
            }),
        rows.end ());
  return rows;
}

/* ---- one run: the source, the sink probe, the pipeline ------------------ */

GQuark
filled_quark ()
{
  static GQuark q = g_quark_from_static_string ("zc-bench-filled");
  return q;
}

void
fill_frame (GstBuffer *buf, const GstVideoInfo *info)
{
  GstVideoFrame frame;
  /* gst_video_frame_map() takes a non-const info before GStreamer 1.20 */
  GstVideoInfo vi = *info;
  if (!gst_video_frame_map (&frame, &vi, buf, GST_MAP_WRITE))
    return;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
    guint8 *data = (guint8 *)GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
    gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
    gint rows = GST_VIDEO_FRAME_COMP_HEIGHT (&frame, p);
    gint row_bytes = GST_VIDEO_FRAME_COMP_WIDTH (&frame, p)
                     * GST_VIDEO_FRAME_COMP_PSTRIDE (&frame, p);
    for (gint y = 0; y < rows; y++)
      for (gint x = 0; x < row_bytes; x++)
        data[(gsize)y * stride + x] = (guint8)(x * 7 + y * 3 + p * 50);
  }
  gst_video_frame_unmap (&frame);
}

struct Run
{
  GstElement *appsrc = nullptr;
  GstVideoInfo info;
  /* warm-up frames and frames to push; the source lowers them when the
   * run's time budget is spent, the sink reads them */
  std::atomic<int> warmup{ 0 }, total{ 0 };
  Clock::time_point started;
  std::chrono::seconds budget{ 30 };
  bool latency = false;

  std::mutex lock; /* pool handover between the threads, and shutdown */
  GstBufferPool *pool = nullptr;
  bool we_activated_pool = false, pool_query_done = false;
  bool shutting_down = false;
  /* paced (latency runs): the source waits, under lock, until the sink has
   * mapped every frame pushed so far */
  bool paced = false;
  int mapped = 0;
  std::condition_variable frame_done;
  Clock::time_point t_push; /* paced: when the frame in flight was pushed */
  double trip_ns = 0.0;     /* paced: push to mapped at the sink, summed */

  /* streaming thread only, read by the main thread after EOS */
  std::vector<GstBuffer *> ring;
  int pushed = 0, received = 0;
  Clock::time_point t0, t1;
  double cpu0 = 0.0, cpu1 = 0.0, map_ns = 0.0;
  bool map_failed = false;
};

double
cpu_seconds ()
{
  struct rusage u;
  getrusage (RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec
         + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

GstBufferPool *
downstream_pool (Run *run)
{
  GstPad *srcpad = gst_element_get_static_pad (run->appsrc, "src");
  GstCaps *caps = gst_pad_get_current_caps (srcpad);
  GstBufferPool *pool = nullptr;
  guint size = 0, min = 0, max = 0;
  if (caps) {
    GstQuery *query = gst_query_new_allocation (caps, TRUE);
    if (gst_pad_peer_query (srcpad, query)
        && gst_query_get_n_allocation_pools (query) > 0)
      gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
    gst_query_unref (query);
  }
  gst_object_unref (srcpad);
  bool activated = false;
  if (pool && !gst_buffer_pool_is_active (pool)) {
    /* appsrc's own negotiation may have configured and activated it */
    GstStructure *config = gst_buffer_pool_get_config (pool);
    size = MAX (size, (guint)GST_VIDEO_INFO_SIZE (&run->info));
    gst_buffer_pool_config_set_params (config, caps, size, min, max);
    if (gst_buffer_pool_has_option (pool, GST_BUFFER_POOL_OPTION_VIDEO_META))
      gst_buffer_pool_config_add_option (config,
                                         GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config (pool, config)) {
      config = gst_buffer_pool_get_config (pool);
      if (!gst_buffer_pool_config_validate_params (config, caps, size, min, max)
          || !gst_buffer_pool_set_config (pool, config))
        gst_clear_object (&pool);
    }
    if (pool && !gst_buffer_pool_set_active (pool, TRUE))
      gst_clear_object (&pool);
    activated = pool != nullptr;
  }
  if (caps)
    gst_caps_unref (caps);
  std::lock_guard<std::mutex> guard (run->lock);
  run->pool = pool;
  run->we_activated_pool = activated;
  if (pool && run->shutting_down)
    gst_buffer_pool_set_flushing (pool, TRUE);
  return pool;
}

void
on_need_data (GstAppSrc *src, guint, gpointer user_data)
{
  Run *run = (Run *)user_data;
  /* A slow case (seconds a frame) keeps to the budget: half of it at most
   * for the warm-up, the rest for at least 3 timed frames. */
  if (run->pushed == 0)
    run->started = Clock::now ();
  else if (run->pushed < run->warmup
           && Clock::now () - run->started > run->budget / 2)
    run->warmup = run->pushed;
  else if (run->pushed > run->warmup + 2
           && Clock::now () - run->t0 > run->budget)
    run->total = run->pushed; /* out of time: these frames are the run */
  if (run->pushed == run->total) {
    gst_app_src_end_of_stream (src);
    return;
  }
  GstBufferPool *pool;
  bool first;
  {
    std::unique_lock<std::mutex> guard (run->lock);
    if (run->paced)
      run->frame_done.wait (guard, [run] {
        return run->shutting_down || run->mapped >= run->pushed;
      });
    if (run->shutting_down)
      return;
    first = !run->pool_query_done;
    run->pool_query_done = true;
    pool = run->pool;
  }
  if (first && !(pool = downstream_pool (run))) {
    for (int i = 0; i < 4; i++) {
      GstBuffer *b = gst_buffer_new_allocate (
          nullptr, GST_VIDEO_INFO_SIZE (&run->info), nullptr);
      fill_frame (b, &run->info);
      run->ring.push_back (b);
    }
  }

  GstBuffer *buf;
  if (pool) {
    if (gst_buffer_pool_acquire_buffer (pool, &buf, nullptr) != GST_FLOW_OK)
      return; /* flushing: shutting down */
    GstMiniObject *mem = GST_MINI_OBJECT (gst_buffer_peek_memory (buf, 0));
    if (!gst_mini_object_get_qdata (mem, filled_quark ())) {
      fill_frame (buf, &run->info);
      gst_mini_object_set_qdata (mem, filled_quark (), GINT_TO_POINTER (1),
                                 nullptr);
    }
  } else {
    buf = gst_buffer_ref (run->ring[run->pushed % run->ring.size ()]);
  }

  if (run->pushed == run->warmup) {
    run->cpu0 = cpu_seconds ();
    run->t0 = Clock::now ();
    std::lock_guard<std::mutex> guard (latency_log.lock);
    latency_log.recording = run->latency;
  }
  run->pushed++;
  run->t_push = Clock::now (); /* read by the sink after the queue's lock */
  gst_app_src_push_buffer (src, buf);
}

GstPadProbeReturn
on_sink_buffer (GstPad *, GstPadProbeInfo *info, gpointer user_data)
{
  Run *run = (Run *)user_data;
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  const int n = run->received++;
  auto before = Clock::now ();
  GstMapInfo map;
  if (gst_buffer_map (buf, &map, GST_MAP_READ))
    gst_buffer_unmap (buf, &map);
  else
    run->map_failed = true;
  const auto after = Clock::now ();
  if (n >= run->warmup) {
    /* the run ends at the last frame, whichever it turns out to be */
    run->t1 = after;
    run->cpu1 = cpu_seconds ();
    run->map_ns
        += std::chrono::duration<double, std::nano> (after - before).count ();
    if (run->paced)
      run->trip_ns
          += std::chrono::duration<double, std::nano> (after - run->t_push)
                 .count ();
  }
  if (n == run->total - 1) {
    std::lock_guard<std::mutex> guard (latency_log.lock);
    latency_log.recording = false;
  }
  if (run->paced) {
    std::lock_guard<std::mutex> guard (run->lock);
    run->mapped++;
    run->frame_done.notify_all ();
  }
  return GST_PAD_PROBE_OK;
}

std::set<std::string> warnings_seen;

/* Builds, runs and tears down one pipeline instance; fills @row's results
 * of one run (or row.error). */
bool
run_once (Row &row, const Options &o, bool latency)
{
  int frames = row.in.info.height >= 2160 ? o.frames_4k : o.frames_1080;
  GError *err = nullptr;
  std::string desc = "appsrc name=src format=time ! " + row.middle + " ! "
                     + SINK_QUEUE
                     + " ! fakesink name=sink sync=false "
                       "enable-last-sample=false";
  GstElement *pipeline = gst_parse_launch (desc.c_str (), &err);
  if (!pipeline || err) {
    row.error = err ? err->message : "could not build the pipeline";
    g_clear_error (&err);
    if (pipeline)
      gst_object_unref (pipeline);
    return false;
  }

  Run run;
  run.info = row.in.info;
  run.warmup = o.warmup;
  run.total = o.warmup + frames;
  run.budget = std::chrono::seconds (o.run_seconds);
  run.latency = latency;
  run.paced = latency;
  run.appsrc = gst_bin_get_by_name (GST_BIN (pipeline), "src");
  GstCaps *caps = gst_video_info_to_caps (&run.info);
  gst_app_src_set_caps (GST_APP_SRC (run.appsrc), caps);
  gst_caps_unref (caps);
  GstAppSrcCallbacks callbacks = {};
  callbacks.need_data = on_need_data;
  gst_app_src_set_callbacks (GST_APP_SRC (run.appsrc), &callbacks, &run,
                             nullptr);
  GstElement *sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  GstPad *sinkpad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_BUFFER, on_sink_buffer, &run,
                     nullptr);

  GstBus *bus = gst_element_get_bus (pipeline);
  bool done = gst_element_set_state (pipeline, GST_STATE_PLAYING)
              == GST_STATE_CHANGE_FAILURE;
  if (done) { /* the element that failed posted why */
    GstMessage *msg = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
    GError *e = nullptr;
    if (msg)
      gst_message_parse_error (msg, &e, nullptr);
    row.error = "the pipeline did not start";
    if (e)
      row.error += std::string (": ") + GST_OBJECT_NAME (GST_MESSAGE_SRC (msg))
                   + ": " + e->message;
    g_clear_error (&e);
    if (msg)
      gst_message_unref (msg);
  }
  const auto deadline = Clock::now () + std::chrono::seconds (120 + frames);
  while (!done) {
    GstMessage *msg = gst_bus_timed_pop_filtered (
        bus, 100 * GST_MSECOND,
        (GstMessageType)(GST_MESSAGE_EOS | GST_MESSAGE_ERROR
                         | GST_MESSAGE_WARNING));
    if (!msg) {
      if (Clock::now () > deadline) {
        row.error = "timed out";
        done = true;
      }
      continue;
    }
    GError *e = nullptr;
    if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_WARNING) {
      gst_message_parse_warning (msg, &e, nullptr);
      if (warnings_seen.insert (e->message).second)
        g_printerr ("note: %s: %s\n", GST_OBJECT_NAME (GST_MESSAGE_SRC (msg)),
                    e->message);
    } else if (GST_MESSAGE_TYPE (msg) == GST_MESSAGE_ERROR) {
      gchar *dbg = nullptr;
      gst_message_parse_error (msg, &e, &dbg);
      row.error = std::string (GST_OBJECT_NAME (GST_MESSAGE_SRC (msg))) + ": "
                  + e->message;
      /* "streaming stopped, reason not-negotiated (-4)" says more than
       * "Internal data stream error" */
      const gchar *reason = dbg ? strstr (dbg, "reason ") : nullptr;
      if (reason)
        row.error += std::string (" (") + reason + ")";
      g_free (dbg);
      done = true;
    } else {
      done = true; /* EOS */
    }
    g_clear_error (&e);
    gst_message_unref (msg);
  }

  /* Stats before stopping: the zc elements reset them at start. */
  guint64 copies = 0;
  GstIterator *it = gst_bin_iterate_elements (GST_BIN (pipeline));
  GValue item = G_VALUE_INIT;
  while (gst_iterator_next (it, &item) == GST_ITERATOR_OK) {
    GstElement *e = GST_ELEMENT (g_value_get_object (&item));
    GstElementFactory *f = gst_element_get_factory (e);
    const gchar *name = f ? GST_OBJECT_NAME (f) : "";
    if (g_str_has_prefix (name, "zc")) {
      GstStructure *stats = nullptr;
      g_object_get (e, "stats", &stats, nullptr);
      guint64 c = 0;
      if (stats && gst_structure_get_uint64 (stats, "copied-buffers", &c))
        copies += c;
      if (stats && strcmp (name, "zcupload") == 0) {
        row.backend = gst_structure_get_string (stats, "backend");
        row.memory_type = gst_structure_get_string (stats, "memory-type");
      }
      if (stats)
        gst_structure_free (stats);
    }
    g_value_reset (&item);
  }
  g_value_unset (&item);
  gst_iterator_free (it);

  {
    std::lock_guard<std::mutex> guard (run.lock);
    run.shutting_down = true;
    run.frame_done.notify_all ();
    if (run.pool)
      gst_buffer_pool_set_flushing (run.pool, TRUE);
  }
  gst_element_set_state (pipeline, GST_STATE_NULL);
  if (run.pool) {
    if (run.we_activated_pool)
      gst_buffer_pool_set_active (run.pool, FALSE);
    gst_object_unref (run.pool);
  }
  for (GstBuffer *b : run.ring)
    gst_buffer_unref (b);
  gst_object_unref (bus);
  gst_object_unref (sinkpad);
  gst_object_unref (sink);
  gst_object_unref (run.appsrc);
  gst_object_unref (pipeline);

  if (row.error.empty () && run.received != run.total)
    row.error = "only " + std::to_string (run.received) + " of "
                + std::to_string (run.total) + " frames arrived";
  if (row.error.empty () && run.map_failed)
    row.error = "the sink could not map a frame";
  if (!row.error.empty ())
    return false;

  row.source_mode = run.ring.empty () ? "pool" : "ring";
  row.copies_per_frame = (double)copies / run.total;
  if (run.total - run.warmup < frames || run.warmup < o.warmup) {
    row.note = row.test + " " + row.in.name + ": timed "
               + std::to_string (run.total - run.warmup) + " of "
               + std::to_string (frames) + " frames after "
               + std::to_string (run.warmup) + " of warm-up (--run-seconds "
               + std::to_string (o.run_seconds) + ")";
    frames = run.total - run.warmup;
  }
  if (latency) {
    std::lock_guard<std::mutex> guard (latency_log.lock);
    for (const auto &kv : latency_log.sum_ns)
      if (!g_str_has_prefix (kv.first.c_str (), "capsfilter"))
        row.latency_ms.push_back (
            { kv.first, kv.second.first / kv.second.second / 1e6 });
    row.latency_ms.push_back ({ "(sink map)", run.map_ns / frames / 1e6 });
    row.latency_total_ms = run.trip_ns / frames / 1e6;
  } else {
    row.ms.push_back (
        std::chrono::duration<double, std::milli> (run.t1 - run.t0).count ()
        / frames);
    row.cpu_s.push_back ((run.cpu1 - run.cpu0) / frames);
  }
  return true;
}

/* ---- results ------------------------------------------------------------ */

double
median (std::vector<double> v)
{
  if (v.empty ())
    return NAN;
  std::sort (v.begin (), v.end ());
  return v[v.size () / 2];
}

using LimitsMap = std::map<std::string, zc_bench::Limits>;

/* Bytes over PCIe per frame and the measured rate they are held against. */
void
set_bus_figures (Row &r, const LimitsMap &limits)
{
  const double in = GST_VIDEO_INFO_SIZE (&r.in.info);
  const double out = GST_VIDEO_INFO_SIZE (&r.out.info);
  auto li = limits.find (r.in.name), lo = limits.find (r.out.name);
  const bool have = li != limits.end () && lo != limits.end ();
  if (r.bus == Bus::ZC && r.backend == "cuda" && r.memory_type == "mapped") {
    /* the first zcfilter reads the frame across the bus and the last
     * writes it back (one filter: in place); between steps of a chain the
     * frame stays in device memory (discrete GPU). Held against the bare
     * in-place kernel, which uses both directions at once. */
    r.pcie_bytes = in + out;
    if (have)
      r.limit_gbps = zc_bench::gigabytes_per_second (
          2.0 * in, li->second.mapped_in_place.median_ms);
  } else if (r.bus == Bus::ZC && r.backend == "cuda"
             && r.memory_type == "device") {
    /* staged through pinned memory: in once, out once, however many steps */
    r.pcie_bytes = in + out;
    if (have)
      r.limit_gbps = zc_bench::gigabytes_per_second (
          in + out, li->second.copy_kernel_copy.median_ms);
  } else if (r.bus == Bus::COPIES) {
    r.pcie_bytes = in + out;
    if (have)
      r.limit_gbps = zc_bench::gigabytes_per_second (
          in + out, li->second.host_to_device.median_ms
                        + lo->second.device_to_host.median_ms);
  }
  r.gbps = zc_bench::gigabytes_per_second (r.pcie_bytes, median (r.ms));
}

std::string
fmt (const char *format, double v)
{
  if (std::isnan (v))
    return "-";
  char buf[64];
  g_snprintf (buf, sizeof buf, format, v);
  return buf;
}

std::string
latency_text (const Row &r)
{
  std::string s;
  for (const auto &kv : r.latency_ms)
    s += (s.empty () ? "" : " ") + kv.first + " " + fmt ("%.3f", kv.second);
  return s;
}

std::string
frame_text (const Row &r)
{
  return r.in.name == r.out.name ? r.in.name : r.in.name + ">" + r.out.name;
}

/* The case's latency (paced run) over its own ms/frame; NAN when either is
 * missing. */
double
latency_ratio (const Row &r)
{
  const double med = median (r.ms);
  return med > 0 ? r.latency_total_ms / med : NAN;
}

void
print_table (const std::vector<Row> &rows)
{
  printf ("%-13s %-20s %-40s %-4s %8s %22s %8s %8s %6s %5s %6s %7s %8s  %s\n",
          "case", "frame", "pipeline", "src", "fps", "ms/frame med (min-max)",
          "cpu ms/f", "PCIe MB", "GB/s", "%lim", "copy/f", "lat ms", "lat/proc",
          "latency ms (per element)");
  std::string last;
  for (const auto &r : rows) {
    if (r.test != last && !last.empty ())
      printf ("\n");
    last = r.test;
    std::string label = r.label;
    if (!r.backend.empty ())
      label += " [" + r.backend + " " + r.memory_type + "]";
    printf ("%-13s %-20s %-40s ", r.test.c_str (), frame_text (r).c_str (),
            label.c_str ());
    if (!r.na.empty () || !r.error.empty ()) {
      printf ("%s\n",
              r.na.empty () ? ("FAILED: " + r.error).c_str () : r.na.c_str ());
      continue;
    }
    const double med = median (r.ms);
    auto mm = std::minmax_element (r.ms.begin (), r.ms.end ());
    std::string range = fmt ("%.3f", med) + " (" + fmt ("%.3f", *mm.first) + "-"
                        + fmt ("%.3f", *mm.second) + ")";
    const bool bus = r.pcie_bytes > 0;
    printf ("%-4s %8s %22s %8s %8s %6s %5s %6s %7s %8s  %s\n",
            r.source_mode.c_str (), fmt ("%.1f", 1000.0 / med).c_str (),
            range.c_str (), fmt ("%.3f", median (r.cpu_s) * 1e3).c_str (),
            bus ? fmt ("%.1f", r.pcie_bytes / 1e6).c_str () : "-",
            bus ? fmt ("%.1f", r.gbps).c_str () : "-",
            bus && r.limit_gbps > 0
                ? fmt ("%.0f", 100.0 * r.gbps / r.limit_gbps).c_str ()
                : "-",
            fmt ("%.2f", r.copies_per_frame).c_str (),
            fmt ("%.3f", r.latency_total_ms).c_str (),
            fmt ("%.2f", latency_ratio (r)).c_str (),
            latency_text (r).c_str ());
  }
}

/* ---- targets for the zc elements on CUDA, from the rows of this run ------ */

struct Target
{
  std::string what;   /* "invert 4K RGBA: zc / bare kernel" */
  double value = NAN; /* NAN: could not be computed (a row missing) */
  double limit = NAN;
  bool at_most = true; /* value <= limit passes, else value >= limit */
  std::string detail;
  bool cpu = false; /* about the CPU backend (else the CUDA one) */
};

const Row *
find_row (const std::vector<Row> &rows, const std::string &test,
          const std::string &frame, const std::string &label)
{
  for (const auto &r : rows)
    if (r.test == test && r.in.name == frame && r.label == label
        && r.na.empty () && r.error.empty () && !r.ms.empty ()
        && (r.bus != Bus::ZC || r.backend == "cuda"))
      return &r;
  return nullptr;
}

std::vector<Target>
compute_targets (const std::vector<Row> &rows, const LimitsMap &limits)
{
  std::vector<Target> t;
  auto add = [&] (const std::string &what, double v, double limit, bool at_most,
                  const std::string &detail) {
    t.push_back ({ what, v, limit, at_most, detail });
  };
  std::vector<std::string> frames;
  for (const auto &r : rows)
    if (r.test == "invert"
        && std::find (frames.begin (), frames.end (), r.in.name)
               == frames.end ())
      frames.push_back (r.in.name);

  for (const auto &f : frames) {
    const Row *cuda = find_row (rows, "invert", f, "cudaupload ! cudadownload");
    auto lim = limits.find (f);
    for (const char *label : { "zc", "zc device", "zckernel" }) {
      const Row *zc = find_row (rows, "invert", f, label);
      if (!zc)
        continue;
      const std::string head = "invert " + f + " " + label + ": ";
      const double ms = median (zc->ms);
      if (lim != limits.end () && zc->memory_type == "mapped") {
        const double k = lim->second.mapped_in_place.median_ms;
        add (head + "ms/frame / bare kernel on mapped memory", ms / k, 1.2,
             true, fmt ("%.3f", ms) + " / " + fmt ("%.3f", k) + " ms");
        add (head + "lat ms / bare kernel", zc->latency_total_ms / k, 1.2, true,
             fmt ("%.3f", zc->latency_total_ms) + " / " + fmt ("%.3f", k)
                 + " ms");
      }
      if (cuda) {
        const double c = median (cuda->ms);
        add (head + "fps / fps of cudaupload ! cudadownload", c / ms, 3.0,
             false,
             fmt ("%.1f", 1000.0 / ms) + " / " + fmt ("%.1f", 1000.0 / c));
      }
      for (const auto &r : rows) {
        if (r.test != "invert" || r.in.name != f || r.bus != Bus::NONE
            || !r.na.empty () || !r.error.empty () || r.cpu_s.empty ())
          continue;
        const double mine = median (zc->cpu_s), theirs = median (r.cpu_s);
        add (head + "CPU s/frame / " + r.label, mine / theirs, 0.10, true,
             fmt ("%.3f", mine * 1e3) + " / " + fmt ("%.3f", theirs * 1e3)
                 + " ms");
      }
    }
  }
  for (const auto &f : frames) { /* a user's kernel within 1.05x of ours */
    const Row *zc = find_row (rows, "invert", f, "zc");
    const Row *zk = find_row (rows, "invert", f, "zckernel");
    if (!zc || !zk)
      continue;
    const double a = median (zk->ms), b = median (zc->ms);
    add ("invert " + f + ": zckernel / zc ms/frame", a / b, 1.05, true,
         fmt ("%.3f", a) + " / " + fmt ("%.3f", b) + " ms");
  }
  for (const auto &f : frames) {
    const Row *x1 = find_row (rows, "chain3", f, "zc x1");
    for (const char *label : { "zc x3", "zc x3 device" }) {
      const Row *x3 = find_row (rows, "chain3", f, label);
      if (!x1 || !x3)
        continue;
      const double a = median (x3->ms), b = median (x1->ms);
      add ("chain3 " + f + ": " + label + " / zc x1 ms/frame", a / b, 1.5, true,
           fmt ("%.3f", a) + " / " + fmt ("%.3f", b) + " ms");
    }
  }
  /* No target divides a frame's trip by ms/frame: with the stages
   * overlapped, a trip is longer than the time between frames by design,
   * and the lat/proc column shows the ratio for whoever wants it. */
  return t;
}

/* The CPU backend against the CPU elements, each ratio from one run of
 * both rows (medians of their runs): the zc row on the CPU backend. */
void
add_cpu_targets (const std::vector<Row> &rows, std::vector<Target> *t)
{
  auto cpu_row = [&] (const std::string &test, const std::string &frame,
                      const std::string &label) -> const Row * {
    for (const auto &r : rows)
      if (r.test == test && r.in.name == frame && r.label == label
          && r.na.empty () && r.error.empty () && !r.ms.empty ()
          && (r.bus != Bus::ZC || r.backend == "cpu"))
        return &r;
    return nullptr;
  };
  auto ratio = [&] (const std::string &what, const Row *a, const Row *b,
                    double limit) {
    if (!a || !b)
      return;
    const double x = median (a->ms), y = median (b->ms);
    Target tg{ what, x / y, limit, true,
               fmt ("%.3f", x) + " / " + fmt ("%.3f", y) + " ms" };
    tg.cpu = true;
    t->push_back (tg);
  };
  /* the CPU element of a test: the first row of that test whose label
   * starts with `element` */
  auto element_row = [&] (const std::string &test, const std::string &frame,
                          const std::string &element) -> const Row * {
    for (const auto &v : rows)
      if (v.test == test && v.in.name == frame && v.bus == Bus::NONE
          && v.label.rfind (element, 0) == 0)
        return cpu_row (test, frame, v.label);
    return nullptr;
  };
  {
    const Row *vcs = element_row ("convert-scale", "4K NV12",
                                  "videoconvertscale");
    ratio ("convert-scale 4K NV12>1080p RGBA: zc / "
               + (vcs ? vcs->label : std::string ("videoconvertscale"))
               + " ms/frame",
           cpu_row ("convert-scale", "4K NV12", "zc"), vcs, 1.25);
  }
  for (const auto &r : rows) {
    if (r.test == "repack" && r.bus == Bus::ZC) {
      for (const auto &v : rows)
        if (v.test == "repack" && v.bus == Bus::NONE)
          ratio ("repack 4K RGBA>BGRA: " + r.label + " / " + v.label
                     + " ms/frame",
                 cpu_row ("repack", r.in.name, r.label),
                 cpu_row ("repack", v.in.name, v.label), 1.25);
    }
  }
  for (const char *f : { "1080p RGBA", "1080p NV12" })
    for (const auto &r : rows)
      if (r.test == "balance" && r.in.name == f && r.bus == Bus::ZC)
        ratio (std::string ("balance ") + f + ": " + r.label
                   + " / videobalance ms/frame",
               cpu_row ("balance", f, r.label),
               cpu_row ("balance", f, "videobalance (1 thread)"), 1.0);
  for (const char *f : { "1080p RGBA", "1080p NV12", "4K RGBA", "4K NV12" }) {
    const Row *x3 = cpu_row ("chain3", f, "zc x3");
    ratio (std::string ("chain3 ") + f + ": zc x3 / zc x1 ms/frame", x3,
           cpu_row ("chain3", f, "zc x1"), 1.5);
    ratio (std::string ("chain3 ") + f + ": zc x3 / zc x1 all three ms/frame",
           x3, cpu_row ("chain3", f, "zc x1 all three"), 1.5);
  }
}

/* The everyday requests ("common"): each zc row on the CPU backend over
 * its CPU element's row, from the same run. No target: where they stand. */
void
print_common_ratios (const std::vector<Row> &rows)
{
  bool any = false;
  for (const auto &z : rows) {
    if (z.test != "common" || z.bus != Bus::ZC || z.ms.empty ()
        || z.backend != "cpu")
      continue;
    for (const auto &c : rows) {
      if (c.test != "common" || c.group != z.group || c.bus != Bus::NONE
          || c.ms.empty ())
        continue;
      if (!any)
        printf ("\neveryday requests on the CPU backend against the CPU "
                "element (ms/frame, same run; no target):\n");
      any = true;
      const std::string what = z.in.name + ">" + z.out.name + " " + z.label;
      printf ("  %-64s %7.3f / %-34s %7.3f = %5.2f\n", what.c_str (),
              median (z.ms), c.label.c_str (), median (c.ms),
              median (z.ms) / median (c.ms));
    }
  }
}

const char *
verdict (const Target &t)
{
  if (std::isnan (t.value))
    return "n/a";
  return (t.at_most ? t.value <= t.limit : t.value >= t.limit) ? "PASS"
                                                               : "FAIL";
}

void
print_targets (const std::vector<Target> &targets)
{
  auto print_one = [] (const Target &t) {
    printf ("  %-4s %-72s %7s (target %s %.2f)  %s\n", verdict (t),
            t.what.c_str (), fmt ("%.3f", t.value).c_str (),
            t.at_most ? "<=" : ">=", t.limit, t.detail.c_str ());
  };
  printf ("\ntargets: zc elements on CUDA close to the bare kernel, faster "
          "than cudaupload ! cudadownload, a fraction of the CPU elements' CPU "
          "time; chains and latency bounded:\n");
  bool any = false, any_cpu = false;
  for (const auto &t : targets) {
    any_cpu |= t.cpu;
    if (!t.cpu) {
      print_one (t);
      any = true;
    }
  }
  if (!any)
    printf ("  none: they are about the CUDA backend, and no zc case ran on "
            "it\n");
  if (!any_cpu)
    return;
  printf ("\ntargets of the CPU backend: as fast as the CPU elements with "
          "the same thread count (videoconvertscale within 1.25x, "
          "videobalance at least as fast), a chain of three within 1.5x of "
          "one filter:\n");
  for (const auto &t : targets)
    if (t.cpu)
      print_one (t);
}

std::string
json_str (const std::string &s)
{
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += std::string ("\\") + c;
    else if ((unsigned char)c < 0x20) {
      char esc[8];
      g_snprintf (esc, sizeof esc, "\\u%04x", (unsigned)c);
      out += esc;
    } else
      out += c;
  }
  return out + "\"";
}

std::string
json_num (double v)
{
  return std::isfinite (v) ? fmt ("%.6g", v) : "null";
}

bool
write_json (const std::string &path, const std::vector<Row> &rows,
            const LimitsMap &limits, const std::vector<Target> &targets,
            const Options &o, const std::string &gpu)
{
  FILE *f = fopen (path.c_str (), "w");
  if (!f)
    return false;
  fprintf (f, "{\n  \"gpu\": %s,\n  \"cpu_cores\": %d,\n",
           gpu.empty () ? "null" : json_str (gpu).c_str (), o.threads);
  fprintf (f, "  \"gstreamer\": %s,\n",
           json_str (gst_version_string ()).c_str ());
  fprintf (
      f,
      "  \"settings\": {\"runs\": %d, \"warmup\": %d, \"frames_1080p\": %d, "
      "\"frames_4k\": %d, \"sink\": %s},\n",
      o.runs, o.warmup, o.frames_1080, o.frames_4k,
      json_str (std::string (SINK_QUEUE)
                + " ! fakesink sync=false enable-last-sample=false")
          .c_str ());
  fprintf (f, "  \"limits\": [");
  const char *sep = "\n";
  for (const auto &kv : limits) {
    const auto &l = kv.second;
    auto t = [] (const zc_bench::Timing &x) {
      return "{\"median_ms\": " + json_num (x.median_ms)
             + ", \"min_ms\": " + json_num (x.min_ms)
             + ", \"max_ms\": " + json_num (x.max_ms) + "}";
    };
    fprintf (f,
             "%s    {\"frame\": %s, \"bytes\": %zu, \"mapped_in_place\": %s, "
             "\"device_in_place\": %s, \"host_to_device\": %s, "
             "\"device_to_host\": %s, \"copy_kernel_copy\": %s}",
             sep, json_str (kv.first).c_str (), l.bytes,
             t (l.mapped_in_place).c_str (), t (l.device_in_place).c_str (),
             t (l.host_to_device).c_str (), t (l.device_to_host).c_str (),
             t (l.copy_kernel_copy).c_str ());
    sep = ",\n";
  }
  fprintf (f, "\n  ],\n  \"rows\": [");
  sep = "\n";
  for (const auto &r : rows) {
    auto mm = std::minmax_element (r.ms.begin (), r.ms.end ());
    const bool ok = r.na.empty () && r.error.empty () && !r.ms.empty ();
    std::string runs, lat;
    for (double v : r.ms)
      runs += (runs.empty () ? "" : ", ") + json_num (v);
    for (const auto &kv : r.latency_ms)
      lat += (lat.empty () ? "" : ", ") + json_str (kv.first) + ": "
             + json_num (kv.second);
    const double med = median (r.ms);
    fprintf (
        f,
        "%s    {\"case\": %s, \"frame\": %s, \"out_frame\": %s, "
        "\"pipeline\": %s, \"label\": %s, \"status\": %s, "
        "\"source_mode\": %s, \"backend\": %s, \"memory_type\": %s, "
        "\"ms_per_frame_runs\": [%s], \"ms_per_frame\": %s, \"ms_min\": %s, "
        "\"ms_max\": %s, \"fps\": %s, \"cpu_s_per_frame\": %s, "
        "\"pcie_bytes_per_frame\": %s, \"gbps\": %s, \"limit_gbps\": %s, "
        "\"copies_per_frame\": %s, \"latency_ms\": {%s}, "
        "\"latency_total_ms\": %s, \"latency_ratio\": %s, \"note\": %s}",
        sep, json_str (r.test).c_str (), json_str (r.in.name).c_str (),
        json_str (r.out.name).c_str (), json_str (r.middle).c_str (),
        json_str (r.label).c_str (),
        json_str (ok               ? "ok"
                  : !r.na.empty () ? r.na
                                   : "error: " + r.error)
            .c_str (),
        json_str (r.source_mode).c_str (), json_str (r.backend).c_str (),
        json_str (r.memory_type).c_str (), runs.c_str (),
        json_num (ok ? med : NAN).c_str (),
        json_num (ok ? *mm.first : NAN).c_str (),
        json_num (ok ? *mm.second : NAN).c_str (),
        json_num (ok ? 1000.0 / med : NAN).c_str (),
        json_num (ok ? median (r.cpu_s) : NAN).c_str (),
        json_num (ok ? r.pcie_bytes : NAN).c_str (),
        json_num (ok && r.pcie_bytes > 0 ? r.gbps : NAN).c_str (),
        json_num (r.limit_gbps > 0 ? r.limit_gbps : NAN).c_str (),
        json_num (ok ? r.copies_per_frame : NAN).c_str (), lat.c_str (),
        json_num (ok ? r.latency_total_ms : NAN).c_str (),
        json_num (ok ? latency_ratio (r) : NAN).c_str (),
        json_str (r.note).c_str ());
    sep = ",\n";
  }
  fprintf (f, "\n  ],\n  \"targets\": [");
  sep = "\n";
  for (const auto &t : targets) {
    fprintf (f,
             "%s    {\"what\": %s, \"value\": %s, \"target\": %s, "
             "\"at_most\": %s, \"verdict\": %s, \"detail\": %s}",
             sep, json_str (t.what).c_str (), json_num (t.value).c_str (),
             json_num (t.limit).c_str (), t.at_most ? "true" : "false",
             json_str (verdict (t)).c_str (), json_str (t.detail).c_str ());
    sep = ",\n";
  }
  fprintf (f, "\n  ]\n}\n");
  return fclose (f) == 0;
}

/* Whether a child g_spawn_sync() waited for exited with status 0 */
bool
spawn_succeeded (gint status)
{
#if GLIB_CHECK_VERSION(2, 70, 0)
  return g_spawn_check_wait_status (status, nullptr);
#else
  return g_spawn_check_exit_status (status, nullptr);
#endif
}

int
usage ()
{
  g_printerr ("usage: zc-bench [--quick] [--runs R] [--warmup N] "
              "[--frames-1080 N] [--frames-4k N] [--threads N] "
              "[--run-seconds S] [--only TEXT] "
              "[--no-latency] [--json FILE] [--png FILE]\n");
  return 2;
}

} // namespace

int
main (int argc, char **argv)
{
  Options o;
  for (int i = 1; i < argc; i++) /* first, so that other options win */
    if (strcmp (argv[i], "--quick") == 0) {
      o.runs = 3;
      o.warmup = 5;
      o.frames_1080 = 30;
      o.frames_4k = 15;
      o.limit_runs = 10;
    }
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto number = [&] (int *out, int min = 1) {
      if (!v || atoi (v) < min)
        return false;
      *out = atoi (v);
      i++;
      return true;
    };
    if (a == "--quick") {
    } else if (a == "--no-latency") {
      o.latency = false;
    } else if ((a == "--runs" && number (&o.runs))
               || (a == "--warmup" && number (&o.warmup, 0))
               || (a == "--frames-1080" && number (&o.frames_1080))
               || (a == "--frames-4k" && number (&o.frames_4k))
               || (a == "--threads" && number (&o.threads))
               || (a == "--run-seconds" && number (&o.run_seconds))) {
    } else if ((a == "--only" || a == "--json" || a == "--png") && v) {
      (a == "--only" ? o.only : a == "--json" ? o.json : o.png) = v;
      i++;
    } else {
      return usage ();
    }
  }

  /* No tracer in the timed runs: the latency tracer is started after them
   * (start_latency_tracer), and one from the environment would weigh on
   * every frame. */
  g_unsetenv ("GST_TRACERS");
  gst_init (nullptr, nullptr);
  gst_debug_remove_log_function (gst_debug_log_default);
  gst_debug_add_log_function (on_debug_log, nullptr, nullptr);

  std::string gpu, no_gpu;
  const bool have_gpu = zc_bench::gpu_available (&gpu, &no_gpu);
  printf ("zc-bench: %s, %d CPU cores, %s; %d runs, warm-up %d, "
          "%d frames at 1080p, %d at 4K\n",
          have_gpu ? gpu.c_str () : ("no GPU (" + no_gpu + ")").c_str (),
          o.threads, gst_version_string (), o.runs, o.warmup, o.frames_1080,
          o.frames_4k);

  std::vector<Row> rows = make_rows (o, have_gpu);

  /* Raw limits for every frame size in the table, in this same run. */
  LimitsMap limits;
  if (have_gpu) {
    for (const auto &r : rows) {
      for (const Frame *f : { &r.in, &r.out }) {
        if (limits.count (f->name))
          continue;
        const bool rgba = GST_VIDEO_INFO_N_PLANES (&f->info) == 1;
        const size_t row_bytes = GST_VIDEO_INFO_PLANE_STRIDE (&f->info, 0);
        const size_t n = GST_VIDEO_INFO_SIZE (&f->info) / row_bytes;
        std::string error;
        if (!zc_bench::measure_limits (row_bytes, n, rgba, o.limit_runs,
                                       &limits[f->name], &error)) {
          g_printerr ("zc-bench: raw limits for %s: %s\n", f->name.c_str (),
                      error.c_str ());
          limits.erase (f->name);
        }
      }
    }
    printf (
        "\nraw limits (CUDA events, median of %d): %-24s %s\n", o.limit_runs,
        "pinned H2D / D2H GB/s",
        "kernel in place on mapped: ms, GB/s both ways; copy+kernel+copy ms");
    for (const auto &kv : limits) {
      const auto &l = kv.second;
      printf (
          "  %-12s %6.1f / %-6.1f   %7.3f ms %6.1f GB/s   %7.3f ms\n",
          kv.first.c_str (),
          zc_bench::gigabytes_per_second (l.bytes, l.host_to_device.median_ms),
          zc_bench::gigabytes_per_second (l.bytes, l.device_to_host.median_ms),
          l.mapped_in_place.median_ms,
          zc_bench::gigabytes_per_second (2.0 * l.bytes,
                                          l.mapped_in_place.median_ms),
          l.copy_kernel_copy.median_ms);
    }
  } else {
    printf ("\nraw limits: n/a (no GPU)\n");
  }
  printf ("\n");

  for (auto &r : rows) {
    if (!r.na.empty ())
      continue;
    g_printerr ("running %s %s %s\n", r.test.c_str (), r.in.name.c_str (),
                r.label.c_str ());
    bool ok = true;
    for (int i = 0; ok && i < o.runs; i++)
      ok = run_once (r, o, false);
    if (ok)
      set_bus_figures (r, limits);
    else
      g_printerr ("FAILED: %s %s %s: %s\n", r.test.c_str (), r.in.name.c_str (),
                  r.label.c_str (), r.error.c_str ());
  }

  /* Latency: one paced run per case that ran, with the tracer on. */
  if (o.latency && !start_latency_tracer ()) {
    g_printerr ("zc-bench: GStreamer's latency tracer is not available: no "
                "latency figures\n");
    o.latency = false;
  }
  for (auto &r : rows) {
    if (!o.latency || !r.na.empty () || !r.error.empty () || r.ms.empty ())
      continue;
    g_printerr ("latency %s %s %s\n", r.test.c_str (), r.in.name.c_str (),
                r.label.c_str ());
    set_latency_logging (true);
    if (!run_once (r, o, true)) {
      g_printerr ("zc-bench: latency run of %s %s %s failed: %s\n",
                  r.test.c_str (), r.in.name.c_str (), r.label.c_str (),
                  r.error.c_str ());
      r.error.clear (); /* the timed runs stand */
      r.latency_ms.clear ();
    }
    set_latency_logging (false);
  }

  print_table (rows);
  printf ("\nEvery case: appsrc ! <pipeline> ! %s ! fakesink sync=false "
          "enable-last-sample=false.\n",
          SINK_QUEUE);
  printf ("src: pool = appsrc pushes buffers of the pool the next element "
          "proposes, each filled once; ring = refs of %d filled system "
          "buffers.\n",
          4);
  printf ("ms/frame: first push after the warm-up to the last frame mapped "
          "for reading at the sink; fps from the median.\n"
          "cpu ms/f: getrusage (RUSAGE_SELF) user+sys over the same frames. "
          "PCIe MB, GB/s: bytes the case moves over the bus per frame; %%lim: "
          "of the raw limit above for the same pattern.\n"
          "latency: one extra run, paced (a frame enters when the previous "
          "one has been mapped at the sink), GStreamer's latency tracer "
          "(flags=element), mean over the timed frames; per element: from "
          "the previous element's push to its own (for GPU elements the "
          "launch, not the kernel); (sink map) = wait for the frame's GPU "
          "work at the sink.\n"
          "lat ms: paced run, mean of one frame's trip from appsrc's push "
          "to mapped at the sink (the elements' latencies, sinkqueue's "
          "hand-off and (sink map) together). lat/proc: lat ms / "
          "ms/frame.\n");
  std::vector<Target> targets = compute_targets (rows, limits);
  add_cpu_targets (rows, &targets);
  print_targets (targets);
  print_common_ratios (rows);
  std::set<std::string> notes;
  for (const auto &r : rows)
    if (!r.note.empty () && notes.insert (r.note).second)
      printf ("note: %s: %s\n", r.label.c_str (), r.note.c_str ());

  int rc = 0;
  std::string json = o.json;
  if (json.empty () && !o.png.empty ())
    json = o.png + ".json";
  if (!json.empty () && !write_json (json, rows, limits, targets, o, gpu)) {
    g_printerr ("zc-bench: could not write %s\n", json.c_str ());
    rc = 1;
  }
  if (!o.png.empty () && rc == 0) {
    const gchar *python = g_getenv ("PYTHON");
    const gchar *args[]
        = { python && *python ? python : "python3", ZC_BENCH_CHART,
            json.c_str (), o.png.c_str (), nullptr };
    gint status = 1;
    if (!g_spawn_sync (nullptr, (gchar **)args, nullptr, G_SPAWN_SEARCH_PATH,
                       nullptr, nullptr, nullptr, nullptr, &status, nullptr)
        || !spawn_succeeded (status))
      g_printerr ("zc-bench: %s did not write %s (python3 with matplotlib "
                  "needed; set PYTHON to choose the interpreter)\n",
                  ZC_BENCH_CHART, o.png.c_str ());
  }
  for (const auto &r : rows)
    if (!r.error.empty ())
      rc = 1;
  return rc;
}

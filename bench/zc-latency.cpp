/* gst-zerocopy: a frame's trip, live, as users measure it
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each case runs N pipelines at once in this process (--streams, default 1),
 * each fed by a live source paced at --fps (or flat out with --flat-out):
 *
 *   appsrc is-live=true ! <pipeline> ! appsink sync=false
 *
 * A frame's trip runs from the moment the source pushes it (appsrc's
 * source pad, from appsrc's own streaming thread) to the moment the sink
 * has it mapped for reading (the GPU work on it complete, since a CPU map
 * waits on the frame's fence): what an application that reads the result
 * sees. The hand-over before it, from this program's thread into
 * appsrc's queue and appsrc's thread waking to take it, is the harness's
 * and no pipeline's (a camera source pushes from its own thread), and is
 * the same for every pipeline; --stages prints it. The source pushes
 * buffers of the pool the first element proposes, each filled once when
 * the pool first hands it out, so that the source's own fill is not
 * measured; a pipeline that proposes no pool gets system memory. Rows
 * marked "foreign pool" model a decoder instead: the source pushes
 * buffers of a system-memory pool of its own (8 buffers, recycled), which
 * the pipeline must take as they come. Per case and pipeline: the trip's
 * median, p99 and max over the timed frames of every stream, each stream's frame rate, CPU time per
 * frame, threads, and the bytes gst-zerocopy's allocators hold, per stream.
 * A managed row says how many times a frame managed blocks were moved
 * between the host and the GPU after warm-up (gst_zc_memory_get_migrations():
 * 0 where managed memory stays on the host, 2 a frame a block prefetched)
 * and the process's page faults a frame: pages the driver moved to the GPU
 * behind the advice fault back when the CPU maps them. Both counts are the
 * process's, so with the cases at once they are the turn's.
 * --runs repeats each pipeline, interleaved with the others of its case;
 * the figures are medians over the runs with their range.
 *
 * The decode case starts from an H.264 file (--h264, 1080p at 30 fps, as
 * bench/make-h264.sh makes it) instead:
 *
 *   filesrc ! h264parse ! <decoder> ! identity sync=true ! <pipeline> ! appsink
 *
 * the same decoder in every pipeline (nvh264dec where there is one, else
 * avdec_h264 or openh264dec; --decoder picks), paced at the file's rate;
 * a frame's trip starts when it leaves the pacing identity, that is when
 * the decoder's frame is pushed on.
 *
 * With a GPU, each case first measures what its frame costs the GPU alone
 * (no GStreamer): "GPU work", a pinned copy of the input frame in (not for
 * a decoded frame, which is on the GPU already), the kernel the case's
 * zcfilter runs (the table for an effect at the same size, the conversion
 * kernel for a change of format or size) into device memory, a pinned
 * copy of the output frame out; one frame after another in CUDA events,
 * and live, --frames frames one at a time at --fps, from the first CUDA
 * call to the host seeing it done (polling). The live figure is what the
 * device row cannot go below at that rate (between frames the GPU and the
 * driver go idle, and the same work takes longer than one frame after
 * another), and its p99 against its median is the tail that this GPU and
 * host give a bare CUDA program with no thread to wake: a row's tail
 * beyond that ratio is the pipeline's own. And the bus
 * limit, the frames a second
 * that the input and output bytes allow at the bus's rate both ways at once
 * (a 33 MB frame: the faster of an in-place kernel on mapped memory and a
 * pinned copy each way on two streams; half of it each way, and the
 * frame's larger side, in or out, bounds it; flat out, measured again
 * after the runs and the higher of the two taken). Rows say how far
 * their median is above the GPU work and, flat out, what share of the bus
 * limit all streams together reach.
 *
 * --only keeps the rows whose "case pipeline" text holds one of the
 * |-separated strings (one ending in $: that the text ends with). --cases-at-once runs every case at the same time,
 * each in its own thread (its runs still interleaved), which takes as long
 * as the longest case instead of all of them. Live, each case's frames then
 * come at its own phase of the frame period (5 cases at 30 fps: 6.7 ms
 * apart; the decode case through its pipeline's base time), so that no two
 * cases' frames meet on the GPU and each trip is the trip alone, but for a
 * GPU that gets a frame every 6.7 ms instead of every 33. The cases also
 * take their turns together: each run's pipelines of every case (and each
 * case's GPU-work reference) start their frames together and are torn
 * down together once every case is done, so that no case's pipelines
 * starting or stopping (pinned allocations and frees, which wait on the
 * whole device) fall among another case's timed frames. A turn holds one
 * kind of row: ours of one memory type (a managed row's page faults hold
 * the GPU for milliseconds, and would land in a mapped or device row's
 * tail), nvcodec's, or the CPU elements'; a case with no row of that kind
 * sits the turn out. Then the process-wide
 * columns (CPU time, threads, bytes held, wraps) belong to all cases
 * together and are left out.
 *
 *   zc-latency [--fps F] [--frames N] [--warmup W] [--runs R] [--streams N]
 *              [--flat-out] [--cases-at-once] [--only TEXT|TEXT...]
 *              [--h264 FILE] [--decoder NAME] [--stages]
 *              [--second-context idle|busy]
 *
 * --second-context makes a CUDA context of the process's own through the
 * driver API, as nvcodec's elements do, before the rows, idle or copying
 * a frame each way at 30 fps in it (zc-second-context.h): whether another
 * context in the process, rather than nvcodec's pipelines, slows a row.
 *
 * A row that makes no progress for 30 s (no frame reaches a sink, or
 * making, starting or stopping one of its pipelines does not return) ends
 * the program with a line that names it and what it was doing (exit
 * status 3): a stalled pipeline cannot be stopped. Each row's median and
 * p99 go to stderr as each of its runs ends; the table comes at the end.
 *
 * --stages adds a line under each row: when each element of the pipeline
 * pushed the frame on (median ms after the trip's start), then when the
 * sink had it mapped: where a trip's time goes; and, for a live source,
 * how long appsrc's thread took to push a frame this program handed it,
 * and how late the host woke this program's source thread after each
 * frame's slot. That last is the host's own delay in waking a thread,
 * which lands in any pipeline's tail: a row whose source thread woke more
 * than 0.25 ms late (p99) says so, with or without --stages.
 */
#include <gst/app/app.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gst/zerocopy/zerocopy.h>

#include "../gst/zcframedesc.h"
#include "zc-limits.h"
#include "zc-second-context.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

/* With the cases at once, the case threads meet here: each run's
 * pipelines start their frames together, and are torn down together once
 * every case's run is done, so that no case's setup or teardown (pinned
 * allocations and frees, which wait on the whole device) falls among
 * another case's timed frames. Every thread arrives the same number of
 * times (a thread with no row to run at a turn arrives anyway). */
class Rendezvous
{
public:
  explicit Rendezvous (int parties) : parties_ (parties) {}

  void
  arrive_and_wait ()
  {
    std::unique_lock<std::mutex> lk (lock_);
    const long generation = generation_;
    if (++arrived_ == parties_) {
      arrived_ = 0;
      generation_++;
      cond_.notify_all ();
      return;
    }
    cond_.wait (lk, [&] { return generation_ != generation; });
  }

private:
  std::mutex lock_;
  std::condition_variable cond_;
  const int parties_;
  int arrived_ = 0;
  long generation_ = 0;
};

/* One turn at the rendezvous: arrive when ready to time frames, and again
 * when done with them; whatever is left arrives on the way out */
class Turn
{
public:
  explicit Turn (Rendezvous *r) : r_ (r) {}
  ~Turn ()
  {
    while (left_ > 0)
      next ();
  }
  Turn (const Turn &) = delete;
  Turn &operator= (const Turn &) = delete;

  void
  next ()
  {
    if (left_ > 0) {
      left_--;
      if (r_)
        r_->arrive_and_wait ();
    }
  }

private:
  Rendezvous *r_;
  int left_ = 2;
};

/* Ends the process with a line that names the row and what it was doing
 * when the row makes no progress for 30 s: a pipeline that hangs (an
 * element's deadlock, a GPU that never finishes its work) can be neither
 * stopped nor waited for. Progress is a step (a pipeline made, started or
 * stopped) or a frame reaching a sink; a wait for the other cases at the
 * rendezvous is not watched. */
class StallWatch
{
public:
  explicit StallWatch (std::string row)
      : row_ (std::move (row)), thread_ ([this] () { watch (); })
  {
  }
  ~StallWatch ()
  {
    {
      std::lock_guard<std::mutex> lk (lock_);
      done_ = true;
    }
    wake_.notify_all ();
    thread_.join ();
  }
  StallWatch (const StallWatch &) = delete;
  StallWatch &operator= (const StallWatch &) = delete;

  /* @doing: what the row does from now on, until the next step */
  void
  step (std::string doing)
  {
    std::lock_guard<std::mutex> lk (lock_);
    doing_ = std::move (doing);
    watched_ = true;
    at_ = Clock::now ();
  }
  /* @got of @total frames have reached the sinks */
  void
  frames (long got, long total)
  {
    std::lock_guard<std::mutex> lk (lock_);
    if (got != got_ || !watched_ || doing_ != "running") {
      got_ = got;
      at_ = Clock::now ();
    }
    total_ = total;
    doing_ = "running";
    watched_ = true;
  }
  /* not watched until the next step (a wait for the other cases) */
  void
  pause ()
  {
    std::lock_guard<std::mutex> lk (lock_);
    watched_ = false;
  }

private:
  void
  watch ()
  {
    const auto limit = std::chrono::seconds (30);
    std::unique_lock<std::mutex> lk (lock_);
    while (!done_) {
      wake_.wait_for (lk, std::chrono::milliseconds (200));
      if (done_ || !watched_ || Clock::now () - at_ < limit)
        continue;
      if (doing_ == "running")
        printf ("%s stalled: no frame reached a sink for %d s (%ld of %ld "
                "frames); giving up\n",
                row_.c_str (), (int)limit.count (), got_, total_);
      else
        printf ("%s stalled: %s took more than %d s; giving up\n",
                row_.c_str (), doing_.c_str (), (int)limit.count ());
      fflush (stdout);
      _exit (3);
    }
  }

  const std::string row_;
  std::mutex lock_;
  std::condition_variable wake_;
  bool done_ = false, watched_ = false;
  std::string doing_;
  long got_ = -1, total_ = 0;
  Clock::time_point at_ = Clock::now ();
  std::thread thread_; /* last: starts once the rest is set */
};

struct Options
{
  double fps = 30.0;
  int frames = 600;
  int warmup = 30;
  int runs = 3;
  int streams = 1;
  bool flat_out = false;
  bool cases_at_once = false; /* each case in its own thread, all at once */
  std::string only;           /* rows whose text has one of A|B|... */
  std::string h264 = "bench/media/ball-1080p-620.h264";
  std::string decoder; /* empty: the first of nvh264dec, avdec_h264, ... */
  bool stages = false; /* where the trip goes: each element's push */
  std::string second_context; /* empty, "idle" or "busy" */
  /* live: every case's frames fall on a grid of the frame period from
   * here, each case at its own phase (see next_slot()) */
  Clock::time_point epoch = Clock::now ();
  Rendezvous *rendezvous = nullptr; /* the cases at once */
  /* the cases at once: a run's turns, one for each kind of row (see
   * turn_kind()), in the order they first come */
  std::vector<std::string> turns;
};

/* One frame period at --fps */
Clock::duration
frame_period (const Options &o)
{
  return std::chrono::duration_cast<Clock::duration> (
      std::chrono::duration<double> (1.0 / o.fps));
}

/* The first of a case's frame slots, epoch + @phase + k periods, at or
 * after @t. With the cases at once each case has its own phase, spread
 * over the period, so that no two cases' frames meet on the GPU (their
 * trips are much shorter than the period) and each row's trip is what it
 * would be alone. */
Clock::time_point
next_slot (const Options &o, Clock::duration phase, Clock::time_point t)
{
  const Clock::duration period = frame_period (o);
  const Clock::time_point first = o.epoch + phase;
  if (t <= first)
    return first;
  const auto k = (t - first + period - Clock::duration (1)) / period;
  return first + k * period;
}

struct Pipeline
{
  std::string label;
  std::string middle;
  std::vector<std::string> needs; /* element factories */
  bool foreign = false; /* the source's own pool, not the proposed one */
};

/* The cases at once: the rows that take a turn together. Ours by label,
 * so that a managed row, whose page faults hold the GPU for milliseconds,
 * runs beside the other cases' managed rows and never beside a mapped or
 * device row; nvcodec's rows together, the CPU elements' together. */
std::string
turn_kind (const Pipeline &pl)
{
  if (pl.label.compare (0, 10, "cudaupload") == 0)
    return "nvcodec";
  if (pl.label.compare (0, 5, "video") == 0)
    return "cpu";
  return pl.label;
}

struct Case
{
  std::string name;
  std::string in_caps;  /* the frames the pipeline gets */
  std::string out_caps; /* the frames the sink maps */
  std::vector<Pipeline> pipelines;
  /* a decode case: the source up to the decoder's output, paced (no
   * appsrc); frames are counted in the order they come */
  std::string source;
  /* the kernel zcfilter runs on the case's frame, which the reference
   * measures: the conversion from in_caps to out_caps (with a brightness
   * step unless 0), else the table */
  bool converts = false;
  double brightness = 0.0;
};

/* Row p's turn: its kind, and which of the case's rows of that kind it is
 * (a case with two rows of a kind runs them in turns of their own) */
std::string
turn_key (const Case &c, size_t p)
{
  const std::string kind = turn_kind (c.pipelines[p]);
  int earlier = 0;
  for (size_t q = 0; q < p; q++)
    earlier += turn_kind (c.pipelines[q]) == kind;
  return earlier ? kind + " " + std::to_string (earlier + 1) : kind;
}

bool
have_factory (const std::string &name)
{
  GstElementFactory *f = gst_element_factory_find (name.c_str ());
  if (f)
    gst_object_unref (f);
  return f != nullptr;
}

/* The H.264 decoder of the decode case: @wanted, or the first there is */
std::string
pick_decoder (const std::string &wanted)
{
  if (!wanted.empty ())
    return wanted;
  for (const char *d : { "nvh264dec", "avdec_h264", "openh264dec" })
    if (have_factory (d))
      return d;
  return "avdec_h264";
}

std::vector<Case>
make_cases (const Options &o)
{
  const std::string out1080 = "video/x-raw,format=RGBA,width=1920,height=1080";
  auto zc_effect = [] (const char *mem) {
    std::string m = mem ? std::string (" memory-type=") + mem : "";
    return "zcupload" + m + " ! zcfilter invert=true" + m + " ! zcdownload" + m;
  };
  auto zc_convert = [&] (const char *mem) {
    std::string m = mem ? std::string (" memory-type=") + mem : "";
    return "zcupload" + m + " ! zcfilter" + m
           + " ! video/x-raw(memory:CUDAZeroCopy),format=RGBA,width=1920,"
             "height=1080 ! zcdownload"
           + m;
  };
  std::vector<Case> cases;
  for (const char *size : { "1080p", "4K" }) {
    const bool k4 = std::string (size) == "4K";
    Case c;
    c.name = std::string ("invert ") + size + " RGBA";
    c.in_caps = std::string ("video/x-raw,format=RGBA,width=")
                + (k4 ? "3840,height=2160" : "1920,height=1080");
    c.out_caps = c.in_caps;
    c.pipelines = {
      { "zc mapped", zc_effect (nullptr), { "zcupload" } },
      { "zc managed", zc_effect ("managed"), { "zcupload" } },
      { "zc device", zc_effect ("device"), { "zcupload" } },
      /* nvcodec has no effect element: its copy path, around where a
       * user's CUDA effect would go (without CUDAMemory caps between
       * them the two agree on system memory and do nothing) */
      { "cudaupload ! cudadownload",
        "cudaupload ! video/x-raw(memory:CUDAMemory) ! cudadownload",
        { "cudaupload", "cudadownload" } },
      /* the CPU's nearest per-pixel effect */
      { "videobalance", "videobalance brightness=-0.1", { "videobalance" } },
    };
    cases.push_back (c);
  }
  Case cs;
  cs.name = "NV12 4K > RGBA 1080p";
  cs.in_caps = "video/x-raw,format=NV12,width=3840,height=2160";
  cs.out_caps = out1080;
  cs.converts = true;
  cs.pipelines = {
    { "zc mapped", zc_convert (nullptr), { "zcupload" } },
    { "zc managed", zc_convert ("managed"), { "zcupload" } },
    { "zc device", zc_convert ("device"), { "zcupload" } },
    { "cudaupload ! cudaconvertscale ! cudadownload",
      "cudaupload ! cudaconvertscale ! video/x-raw(memory:CUDAMemory),"
      "format=RGBA,width=1920,height=1080 ! cudadownload",
      { "cudaupload", "cudaconvertscale", "cudadownload" } },
    { "videoconvertscale", "videoconvertscale ! " + out1080,
      { "videoconvertscale" } },
  };
  cases.push_back (cs);

  /* a camera's stream for an analytics or recording process: 1080p NV12
   * to RGBA 720p with an effect (the many-streams case, --streams N) */
  const std::string out720 = ",format=RGBA,width=1280,height=720";
  auto zc_stream = [&] (const char *mem) {
    std::string m = mem ? std::string (" memory-type=") + mem : "";
    return "zcupload" + m + " ! zcfilter brightness=-0.1" + m
           + " ! video/x-raw(memory:CUDAZeroCopy)" + out720 + " ! zcdownload"
           + m;
  };
  Case cm;
  cm.name = "NV12 1080p > RGBA 720p fx";
  cm.in_caps = "video/x-raw,format=NV12,width=1920,height=1080";
  cm.out_caps = "video/x-raw" + out720;
  cm.converts = true;
  cm.brightness = -0.1;
  cm.pipelines = {
    { "zc mapped", zc_stream (nullptr), { "zcupload" } },
    { "zc device", zc_stream ("device"), { "zcupload" } },
    /* a decoder's pool: frames that are not ours, adopted in place */
    { "zc mapped, foreign pool", zc_stream (nullptr), { "zcupload" }, true },
    /* nvcodec converts and scales; it has no effect element */
    { "cudaupload ! cudaconvertscale ! cudadownload",
      "cudaupload ! cudaconvertscale ! video/x-raw(memory:CUDAMemory)"
          + out720 + " ! cudadownload",
      { "cudaupload", "cudaconvertscale", "cudadownload" } },
    { "videoconvertscale ! videobalance",
      "videoconvertscale ! video/x-raw" + out720
          + " ! videobalance brightness=-0.1",
      { "videoconvertscale", "videobalance" } },
  };
  cases.push_back (cm);

  /* a decoder's frames to RGBA 720p: the same decoder in every pipeline */
  const std::string dec = pick_decoder (o.decoder);
  Case cd;
  cd.name = "H.264 1080p > RGBA 720p";
  cd.in_caps = "video/x-raw,format=NV12,width=1920,height=1080";
  cd.out_caps = "video/x-raw" + out720;
  cd.converts = true;
  cd.source = "filesrc location=\"" + o.h264
              + "\" ! video/x-h264,stream-format=byte-stream,framerate=30/1 "
                "! h264parse ! "
              + dec + " ! identity name=pace sync=true";
  auto zc_decoded = [&] (const char *mem) {
    std::string m = mem ? std::string (" memory-type=") + mem : "";
    return "zcupload" + m + " ! zcfilter" + m
           + " ! video/x-raw(memory:CUDAZeroCopy)" + out720 + " ! zcdownload"
           + m;
  };
  cd.pipelines = {
    { "zc mapped", zc_decoded (nullptr), { dec, "zcupload" } },
    { "zc device", zc_decoded ("device"), { dec, "zcupload" } },
    { "cudaupload ! cudaconvertscale ! cudadownload",
      "cudaupload ! cudaconvertscale ! video/x-raw(memory:CUDAMemory)"
          + out720 + " ! cudadownload",
      { dec, "cudaupload", "cudaconvertscale", "cudadownload" } },
    { "videoconvertscale", "videoconvertscale ! video/x-raw" + out720,
      { dec, "videoconvertscale" } },
  };
  if (!g_file_test (o.h264.c_str (), G_FILE_TEST_IS_REGULAR))
    for (auto &pl : cd.pipelines)
      pl.needs.push_back ("a file " + o.h264 + " (bench/make-h264.sh)");
  cases.push_back (cd);
  return cases;
}

/* ---- one stream: a live source, a pipeline, a sink that maps ---------- */

struct Stream
{
  GstElement *pipeline = nullptr;
  GstElement *appsrc = nullptr;
  GstVideoInfo info;
  GstCaps *caps = nullptr;
  GstBufferPool *pool = nullptr;
  std::set<GstMemory *> filled;
  bool foreign = false; /* a pool of the source's own (a decoder's) */
  bool ours_first = false; /* zcupload first: it proposes a pool */
  GstClockTime period = 0;
  int total = 0;
  std::vector<Clock::time_point> pushed; /* the trip's start */
  /* frame n from this program's push into appsrc to appsrc's push, ms */
  std::vector<double> handover_ms;
  /* live: how late this program's source thread woke for frame n, ms after
   * its slot: the host's own wake-up delay, which no pipeline can beat */
  std::vector<double> wake_ms;
  std::vector<double> trip_ms; /* index: frame number; NAN until mapped */
  std::atomic<int> received{ 0 };
  /* the decode case: frames numbered in the order they pass */
  bool by_order = false;
  int decoded = 0; /* the decoder's streaming thread */
  int paced = 0;   /* under lock */
  std::mutex lock;
  std::string error;
  /* --stages: when each element between the source and the sink pushed
   * frame n, ms after its trip started (NAN until then) */
  struct Stage
  {
    Stream *stream = nullptr;
    std::string name;
    int passed = 0; /* the decode case: frames counted in order */
    std::vector<double> at_ms;
  };
  std::vector<std::unique_ptr<Stage> > stages;
};

/* The decode case's frames into the pacing identity: an H.264 byte-stream
 * has no timestamps, so each frame gets its place at the file's rate */
GstPadProbeReturn
on_decoded (GstPad *, GstPadProbeInfo *info, gpointer data)
{
  auto *s = (Stream *)data;
  GstBuffer *buf = gst_buffer_make_writable (GST_PAD_PROBE_INFO_BUFFER (info));
  GST_PAD_PROBE_INFO_DATA (info) = buf;
  GST_BUFFER_PTS (buf) = (GstClockTime)s->decoded * s->period;
  GST_BUFFER_DTS (buf) = GST_CLOCK_TIME_NONE;
  GST_BUFFER_DURATION (buf) = s->period;
  s->decoded++;
  return GST_PAD_PROBE_OK;
}

/* The decode case's trip starts here: a frame leaving the pacing identity */
GstPadProbeReturn
on_paced (GstPad *, GstPadProbeInfo *, gpointer data)
{
  auto *s = (Stream *)data;
  const Clock::time_point now = Clock::now ();
  std::lock_guard<std::mutex> g (s->lock);
  if (s->paced < s->total)
    s->pushed[s->paced] = now;
  s->paced++;
  return GST_PAD_PROBE_OK;
}

/* The number of the frame of @s with timestamp @pts (the source stamps
 * frame n at n periods) */
int
frame_at (const Stream *s, GstClockTime pts)
{
  return (int)((pts + s->period / 2) / s->period);
}

/* A hand-over into appsrc longer than this (p99, ms) is frames queued
 * behind a pipeline slower than the source, not appsrc's thread waking */
constexpr double kQueuedMs = 1.0;

/* A source thread that woke later than this after its slot (p99, ms) says
 * the host itself was slow to wake threads: the row says so, since its
 * tail then holds the host's delays as well as the pipeline's */
constexpr double kLateWakeMs = 0.25;

/* A live source's trip starts here: appsrc pushing frame n from its own
 * thread; pushed[n] held the moment this program handed it over */
GstPadProbeReturn
on_source_push (GstPad *, GstPadProbeInfo *info, gpointer data)
{
  auto *s = (Stream *)data;
  const Clock::time_point now = Clock::now ();
  const GstClockTime pts = GST_BUFFER_PTS (GST_PAD_PROBE_INFO_BUFFER (info));
  if (!GST_CLOCK_TIME_IS_VALID (pts))
    return GST_PAD_PROBE_OK;
  const int n = frame_at (s, pts);
  std::lock_guard<std::mutex> g (s->lock);
  if (n >= 0 && n < s->total && s->pushed[n] != Clock::time_point ()) {
    s->handover_ms[n]
        = std::chrono::duration<double, std::milli> (now - s->pushed[n])
              .count ();
    s->pushed[n] = now;
  }
  return GST_PAD_PROBE_OK;
}

/* --stages: a frame leaving an element of the pipeline under test */
GstPadProbeReturn
on_stage (GstPad *, GstPadProbeInfo *info, gpointer data)
{
  auto *st = (Stream::Stage *)data;
  Stream *s = st->stream;
  const Clock::time_point now = Clock::now ();
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  const GstClockTime pts = GST_BUFFER_PTS (buf);
  int n = -1;
  if (s->by_order)
    n = st->passed++;
  else if (GST_CLOCK_TIME_IS_VALID (pts))
    n = frame_at (s, pts);
  std::lock_guard<std::mutex> g (s->lock);
  if (n >= 0 && n < s->total && s->pushed[n] != Clock::time_point ())
    st->at_ms[n]
        = std::chrono::duration<double, std::milli> (now - s->pushed[n])
              .count ();
  return GST_PAD_PROBE_OK;
}

/* --stages: a probe on the source pad of every element from the one after
 * @first up to the sink (capsfilters left out) */
void
watch_stages (Stream *s, GstElement *first)
{
  GstElement *e = GST_ELEMENT (gst_object_ref (first));
  while (true) {
    GstPad *src = gst_element_get_static_pad (e, "src");
    gst_object_unref (e);
    if (!src)
      return;
    GstPad *peer = gst_pad_get_peer (src);
    gst_object_unref (src);
    if (!peer)
      return;
    e = gst_pad_get_parent_element (peer);
    gst_object_unref (peer);
    if (!e)
      return;
    GstPad *out = gst_element_get_static_pad (e, "src");
    if (!out) { /* the sink */
      gst_object_unref (e);
      return;
    }
    GstElementFactory *f = gst_element_get_factory (e);
    const char *fname = f ? GST_OBJECT_NAME (f) : GST_OBJECT_NAME (e);
    if (!g_str_equal (fname, "capsfilter")) {
      auto st = std::make_unique<Stream::Stage> ();
      st->stream = s;
      st->name = fname;
      st->at_ms.assign (s->total, NAN);
      gst_pad_add_probe (out, GST_PAD_PROBE_TYPE_BUFFER, on_stage, st.get (),
                         nullptr);
      s->stages.push_back (std::move (st));
    }
    gst_object_unref (out);
  }
}

void
fill (GstBuffer *buf, const GstVideoInfo *info)
{
  GstVideoFrame frame;
  GstVideoInfo vi = *info;
  if (!gst_video_frame_map (&frame, &vi, buf, GST_MAP_WRITE))
    return;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
    auto *data = (guint8 *)GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
    const gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p);
    const gint rows = GST_VIDEO_FRAME_COMP_HEIGHT (&frame, p);
    for (gint y = 0; y < rows; y++)
      memset (data + (gsize)y * stride, (y * 7 + (int)p * 50) & 0xff,
              (gsize)stride);
  }
  gst_video_frame_unmap (&frame);
}

GstFlowReturn
on_sample (GstAppSink *sink, gpointer data)
{
  auto *s = (Stream *)data;
  GstSample *sample = gst_app_sink_pull_sample (sink);
  if (!sample)
    return GST_FLOW_EOS;
  GstBuffer *buf = gst_sample_get_buffer (sample);
  GstMapInfo map;
  /* mapped for reading: after the GPU work fenced on it */
  const bool mapped = gst_buffer_map (buf, &map, GST_MAP_READ);
  const Clock::time_point now = Clock::now ();
  if (mapped)
    gst_buffer_unmap (buf, &map);
  const GstClockTime pts = GST_BUFFER_PTS (buf);
  gst_sample_unref (sample);
  if (!mapped || (!s->by_order && !GST_CLOCK_TIME_IS_VALID (pts)))
    return GST_FLOW_ERROR;
  const int n = s->by_order ? s->received.load ()
                            : frame_at (s, pts);
  if (n >= 0 && n < s->total) {
    std::lock_guard<std::mutex> g (s->lock);
    s->trip_ms[n]
        = std::chrono::duration<double, std::milli> (now - s->pushed[n])
              .count ();
  }
  s->received++;
  return GST_FLOW_OK;
}

void
take_pool (Stream *s)
{
  guint size = 0, min = 0, max = 0;
  if (s->foreign) {
    /* a decoder's: system memory with video meta, 8 buffers recycled */
    s->pool = gst_video_buffer_pool_new ();
    GstStructure *config = gst_buffer_pool_get_config (s->pool);
    gst_buffer_pool_config_set_params (config, s->caps,
                                       GST_VIDEO_INFO_SIZE (&s->info), 8, 8);
    gst_buffer_pool_config_add_option (config,
                                       GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_buffer_pool_set_config (s->pool, config);
    gst_buffer_pool_set_active (s->pool, TRUE);
    return;
  }
  GstPad *pad = gst_element_get_static_pad (s->appsrc, "src");
  /* zcupload proposes its pool once it has its CUDA context: with many
   * streams starting at once that can take seconds, and a stream that gave
   * up would hand out foreign frames instead of the pool's */
  for (int tries = 0; !s->pool && tries < (s->ours_first ? 1000 : 1);
       tries++) {
    if (tries > 0)
      std::this_thread::sleep_for (std::chrono::milliseconds (10));
    GstQuery *q = gst_query_new_allocation (s->caps, TRUE);
    if (gst_pad_peer_query (pad, q)
        && gst_query_get_n_allocation_pools (q) > 0)
      gst_query_parse_nth_allocation_pool (q, 0, &s->pool, &size, &min,
                                           &max);
    gst_query_unref (q);
  }
  gst_object_unref (pad);
  if (!s->pool && s->ours_first)
    g_printerr ("zc-latency: zcupload proposed no pool in 10 s; this "
                "stream's frames come from a pool of its own (foreign)\n");
  if (!s->pool)
    s->pool = gst_video_buffer_pool_new ();
  if (!gst_buffer_pool_is_active (s->pool)) {
    GstStructure *config = gst_buffer_pool_get_config (s->pool);
    size = MAX (size, (guint)GST_VIDEO_INFO_SIZE (&s->info));
    gst_buffer_pool_config_set_params (config, s->caps, size, MAX (min, 4u),
                                       0);
    if (gst_buffer_pool_has_option (s->pool, GST_BUFFER_POOL_OPTION_VIDEO_META))
      gst_buffer_pool_config_add_option (config,
                                         GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config (s->pool, config)) {
      config = gst_buffer_pool_get_config (s->pool);
      gst_buffer_pool_set_config (s->pool, config);
    }
    gst_buffer_pool_set_active (s->pool, TRUE);
  }
}

/* The text of ERROR message @m (consumed) */
std::string
error_text (GstMessage *m)
{
  GError *err = nullptr;
  gchar *dbg = nullptr;
  gst_message_parse_error (m, &err, &dbg);
  std::string text = err ? err->message : "error";
  g_clear_error (&err);
  g_free (dbg);
  gst_message_unref (m);
  return text;
}

/* The text of the first ERROR waiting on @pipeline's bus; "" for none */
std::string
bus_error (GstElement *pipeline)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  gst_object_unref (bus);
  return m ? error_text (m) : "";
}

/* The source's thread: N frames at the stream's pace (or as fast as the
 * pipeline takes them), each stamped with its push time. */
void
push_frames (Stream *s, const Options &o, Clock::time_point start)
{
  const Clock::duration period = frame_period (o);
  for (int n = 0; n < s->total; n++) {
    if (!o.flat_out) {
      std::this_thread::sleep_until (start + n * period);
      s->wake_ms[n] = std::chrono::duration<double, std::milli> (
                          Clock::now () - (start + n * period))
                          .count ();
    } else /* flat out: at most 3 frames in flight */
      while (n - s->received.load () > 3)
        std::this_thread::sleep_for (std::chrono::microseconds (50));
    GstBuffer *buf = nullptr;
    if (n == 0) {
      /* the first frame (a warm-up one) negotiates the caps; then the
       * first element can answer the allocation query */
      buf = gst_buffer_new_allocate (nullptr, GST_VIDEO_INFO_SIZE (&s->info),
                                     nullptr);
      fill (buf, &s->info);
    } else {
      if (!s->pool) {
        GstPad *pad = gst_element_get_static_pad (s->appsrc, "src");
        for (int i = 0; i < 10000 && !gst_pad_has_current_caps (pad); i++)
          std::this_thread::sleep_for (std::chrono::milliseconds (1));
        gst_object_unref (pad);
        take_pool (s);
      }
      if (gst_buffer_pool_acquire_buffer (s->pool, &buf, nullptr)
          != GST_FLOW_OK)
        break;
      GstMemory *mem = gst_buffer_peek_memory (buf, 0);
      if (s->filled.insert (mem).second)
        fill (buf, &s->info);
    }
    GST_BUFFER_PTS (buf) = n * s->period;
    GST_BUFFER_DURATION (buf) = s->period;
    {
      std::lock_guard<std::mutex> g (s->lock);
      s->pushed[n] = Clock::now ();
    }
    if (gst_app_src_push_buffer (GST_APP_SRC (s->appsrc), buf) != GST_FLOW_OK)
      break;
  }
  gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
}

double
percentile (std::vector<double> v, double p)
{
  if (v.empty ())
    return NAN;
  std::sort (v.begin (), v.end ());
  return zc_bench::nearest_rank (v, p);
}

double
cpu_seconds ()
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec
         + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The process's page faults so far, minor and major: where managed memory
 * kept on the host was moved to the GPU by the driver behind the advice,
 * each CPU map faults its pages back */
guint64
page_faults ()
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return (guint64)ru.ru_minflt + (guint64)ru.ru_majflt;
}

int
threads ()
{
  int n = 0;
  if (DIR *d = opendir ("/proc/self/task")) {
    while (struct dirent *e = readdir (d))
      if (e->d_name[0] != '.')
        n++;
    closedir (d);
  }
  return n;
}

struct Result
{
  bool ok = false;
  std::string why;
  double med = NAN, p99 = NAN, max = NAN;
  double fps_min = NAN, fps_sum = NAN; /* slowest stream; all together */
  double cpu_ms = NAN;                 /* CPU time per frame, per stream */
  int threads = 0;
  double pinned_mib = NAN, device_mib = NAN, managed_mib = NAN,
         system_mib = NAN; /* per stream */
  int lost = 0;
  double copies = NAN; /* zcupload's copied buffers per frame, all streams */
  guint64 registrations = 0; /* zcupload's, all streams */
  /* buffers wrapping foreign frames made after warm-up, all streams: 0
   * when every frame reused the one made for its memory */
  guint64 wraps_late = 0;
  /* managed blocks moved between the host and the GPU after warm-up, per
   * frame of the row's streams; counted for the whole process, so with
   * the cases at once the turn's other rows' moves are in it too */
  double migrations = NAN;
  /* the process's page faults after warm-up, per frame of the row's
   * streams (the turn's, with the cases at once) */
  double page_faults = NAN;
  /* --stages: each element's push, median ms after the trip's start */
  std::vector<std::string> stage_names;
  std::vector<double> stage_med;
  /* a live source's hand-over into appsrc (not in the trip): median, p99 */
  double handover_med = NAN, handover_p99 = NAN;
  /* the source thread's wake-up after its slot (live): median, p99 */
  double wake_med = NAN, wake_p99 = NAN;
};

/* zcupload's counters in @pipeline, added to @copied, @buffers and @reg;
 * FALSE when it has no zcupload */
bool
upload_stats (GstElement *pipeline, guint64 *copied, guint64 *buffers,
              guint64 *reg)
{
  bool found = false;
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (pipeline));
  GValue v = G_VALUE_INIT;
  while (gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
    auto *e = (GstElement *)g_value_get_object (&v);
    GstElementFactory *f = gst_element_get_factory (e);
    if (f && g_str_equal (GST_OBJECT_NAME (f), "zcupload")) {
      GstStructure *st = nullptr;
      g_object_get (e, "stats", &st, NULL);
      guint64 c = 0, b = 0, r = 0;
      if (st) {
        gst_structure_get_uint64 (st, "copied-buffers", &c);
        gst_structure_get_uint64 (st, "buffers", &b);
        gst_structure_get_uint64 (st, "registrations", &r);
        gst_structure_free (st);
      }
      *copied += c;
      *buffers += b;
      *reg += r;
      found = true;
    }
    g_value_reset (&v);
  }
  g_value_unset (&v);
  gst_iterator_free (it);
  return found;
}

/* Sets @pipeline's base time so that running time 0 falls at @at, in
 * the system clock it is told to use: the decode case's pacing identity
 * then lets frame n go at @at + n periods, on the case's grid. */
void
set_base_time_at (GstElement *pipeline, Clock::time_point at)
{
  GstClock *clock = gst_system_clock_obtain ();
  const GstClockTime now_gst = gst_clock_get_time (clock);
  const Clock::time_point now = Clock::now ();
  const auto ahead
      = std::chrono::duration_cast<std::chrono::nanoseconds> (at - now);
  const GstClockTime base = now_gst + (GstClockTime)std::max<int64_t> (
                                          0, (int64_t)ahead.count ());
  gst_pipeline_use_clock (GST_PIPELINE (pipeline), clock);
  /* the application's base time, not one the pipeline picks when it
   * starts playing (GstElement's start time: NONE hands it over) */
  gst_element_set_start_time (pipeline, GST_CLOCK_TIME_NONE);
  gst_element_set_base_time (pipeline, base);
  GstIterator *it = gst_bin_iterate_recurse (GST_BIN (pipeline));
  GValue v = G_VALUE_INIT;
  while (gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
    gst_element_set_base_time (GST_ELEMENT (g_value_get_object (&v)), base);
    g_value_reset (&v);
  }
  g_value_unset (&v);
  gst_iterator_free (it);
  gst_object_unref (clock);
}

/* @phase: the case's place in the frame period (next_slot()) */
Result
run_once (const Case &c, const Pipeline &pl, const Options &o,
          Clock::duration phase)
{
  Result r;
  Turn turn (o.rendezvous);
  char row[128];
  snprintf (row, sizeof row, "%-26s %-46s", c.name.c_str (),
            pl.label.c_str ());
  StallWatch watch (row);
  const std::string of_n = " of " + std::to_string (o.streams);
  std::vector<std::unique_ptr<Stream> > streams;
  const int total = o.warmup + o.frames;
  for (int i = 0; i < o.streams; i++) {
    watch.step ("making pipeline " + std::to_string (i + 1) + of_n);
    auto s = std::make_unique<Stream> ();
    const std::string source
        = c.source.empty () ? "appsrc name=src is-live=true format=time "
                              "max-bytes=0 block=true ! "
                                  + c.in_caps + ",framerate="
                                  + std::to_string ((int)std::lround (o.fps))
                                  + "/1"
                            : c.source;
    std::string desc = source + " ! " + pl.middle
                       + " ! appsink name=sink sync=false max-buffers=8";
    GError *err = nullptr;
    s->pipeline = gst_parse_launch (desc.c_str (), &err);
    if (!s->pipeline) {
      r.why = err ? err->message : "parse error";
      g_clear_error (&err);
      return r;
    }
    s->total = total;
    s->foreign = pl.foreign;
    s->ours_first = pl.middle.rfind ("zcupload", 0) == 0;
    s->pushed.assign (total, Clock::time_point ());
    s->handover_ms.assign (total, NAN);
    s->wake_ms.assign (total, NAN);
    s->trip_ms.assign (total, NAN);
    if (c.source.empty ()) {
      s->appsrc = gst_bin_get_by_name (GST_BIN (s->pipeline), "src");
      GstPad *out = gst_element_get_static_pad (s->appsrc, "src");
      gst_pad_add_probe (out, GST_PAD_PROBE_TYPE_BUFFER, on_source_push,
                         s.get (), nullptr);
      gst_object_unref (out);
      s->caps = gst_caps_from_string (
          (c.in_caps + ",framerate="
           + std::to_string ((int)std::lround (o.fps)) + "/1")
              .c_str ());
      gst_app_src_set_caps (GST_APP_SRC (s->appsrc), s->caps);
      gst_video_info_from_caps (&s->info, s->caps);
      s->period = (GstClockTime)std::llround (GST_SECOND / o.fps);
    } else {
      s->by_order = true;
      s->period = GST_SECOND / 30; /* the file's rate */
      GstElement *pace = gst_bin_get_by_name (GST_BIN (s->pipeline), "pace");
      GstPad *in = gst_element_get_static_pad (pace, "sink");
      gst_pad_add_probe (in, GST_PAD_PROBE_TYPE_BUFFER, on_decoded, s.get (),
                         nullptr);
      gst_object_unref (in);
      GstPad *out = gst_element_get_static_pad (pace, "src");
      gst_pad_add_probe (out, GST_PAD_PROBE_TYPE_BUFFER, on_paced, s.get (),
                         nullptr);
      gst_object_unref (out);
      if (o.stages)
        watch_stages (s.get (), pace);
      gst_object_unref (pace);
    }
    if (o.stages && s->appsrc)
      watch_stages (s.get (), s->appsrc);
    GstElement *sink = gst_bin_get_by_name (GST_BIN (s->pipeline), "sink");
    GstAppSinkCallbacks cb = {};
    cb.new_sample = on_sample;
    gst_app_sink_set_callbacks (GST_APP_SINK (sink), &cb, s.get (), nullptr);
    gst_object_unref (sink);
    /* the decoder has time to open before its first frame is due; a late
     * start sends the first frames at once, and the warm-up takes them */
    if (!c.source.empty ())
      set_base_time_at (s->pipeline,
                        next_slot (o, phase,
                                   Clock::now ()
                                       + std::chrono::milliseconds (500)));
    watch.step ("starting pipeline " + std::to_string (i + 1) + of_n);
    if (gst_element_set_state (s->pipeline, GST_STATE_PLAYING)
        == GST_STATE_CHANGE_FAILURE) {
      r.why = "could not start: " + bus_error (s->pipeline);
    }
    streams.push_back (std::move (s));
  }
  watch.pause ();
  turn.next (); /* every case's pipelines are made */
  /* zcupload's copies from when every stream is past its warm-up, as the
   * wraps below: each stream's first frame is made before the pool is
   * known (it negotiates the caps), and is copied */
  guint64 copied_at_warmup = 0, uploaded_at_warmup = 0;
  if (r.why.empty ()) {
    const Clock::time_point t0
        = next_slot (o, phase, Clock::now () + std::chrono::milliseconds (50));
    std::vector<std::thread> pushers;
    const double cpu0 = cpu_seconds ();
    for (size_t i = 0; i < streams.size () && c.source.empty (); i++) {
      /* cameras are not in step: the streams' phases spread over a period */
      auto start = t0 + std::chrono::duration_cast<Clock::duration> (
                            std::chrono::duration<double> (
                                (double)i / streams.size () / o.fps));
      pushers.emplace_back (push_frames, streams[i].get (), std::cref (o),
                            start);
    }
    int sampled_threads = 0;
    double bytes[4] = { 0, 0, 0, 0 };
    bool sampled = false;
    /* wrapped buffers are counted for the whole process: from when every
     * stream is past its warm-up (a late starter's first frames are its
     * warm-up, not a wrap per frame) */
    bool wraps_sampled = false;
    guint64 wraps_at_warmup = 0, moved_at_warmup = 0, faults_at_warmup = 0;
    long received_at_warmup = 0;
    /* frames every stream's sink has had so far */
    auto received_all = [&] () {
      long n = 0;
      for (auto &t : streams)
        n += t->received.load ();
      return n;
    };
    auto all_warm = [&] () {
      for (auto &t : streams)
        if (t->received.load () <= o.warmup)
          return false;
      return true;
    };
    for (auto &s : streams) {
      GstBus *bus = gst_element_get_bus (s->pipeline);
      while (true) {
        GstMessage *m = gst_bus_timed_pop_filtered (
            bus, 100 * GST_MSECOND,
            (GstMessageType)(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
        watch.frames (received_all (), (long)total * (long)streams.size ());
        if (!sampled && s->received.load () > o.warmup) {
          sampled = true;
          sampled_threads = threads ();
          const GstZcMemoryType types[4]
              = { GST_ZC_MEMORY_TYPE_MAPPED, GST_ZC_MEMORY_TYPE_DEVICE,
                  GST_ZC_MEMORY_TYPE_MANAGED, GST_ZC_MEMORY_TYPE_SYSTEM };
          for (int k = 0; k < 4; k++)
            bytes[k] = (double)gst_zc_memory_get_bytes_in_use (types[k]);
        }
        if (!wraps_sampled && all_warm ()) {
          wraps_sampled = true;
          wraps_at_warmup = gst_zc_wrapped_buffers_made ();
          moved_at_warmup = gst_zc_memory_get_migrations ();
          faults_at_warmup = page_faults ();
          received_at_warmup = received_all ();
          guint64 reg = 0;
          for (auto &t : streams)
            upload_stats (t->pipeline, &copied_at_warmup,
                          &uploaded_at_warmup, &reg);
        }
        /* a decoded file plays on past the frames timed: stop there */
        if (!m && s->by_order && s->received.load () >= s->total)
          break;
        if (!m)
          continue;
        if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
          /* this message is the error: the bus has no other to pop */
          s->error = error_text (m);
          if (s->appsrc)
            gst_app_src_end_of_stream (GST_APP_SRC (s->appsrc));
          break;
        }
        gst_message_unref (m);
        break;
      }
      gst_object_unref (bus);
    }
    watch.step ("waiting for the sources' threads");
    for (auto &t : pushers)
      t.join ();
    const double cpu = cpu_seconds () - cpu0;
    std::vector<double> trips;
    double fps_min = INFINITY, fps_sum = 0;
    for (auto &s : streams) {
      if (!s->error.empty () && r.why.empty ())
        r.why = s->error;
      Clock::time_point first, last;
      int got = 0;
      for (int n = o.warmup; n < total; n++) {
        if (std::isnan (s->trip_ms[n])) {
          /* a decoded file may end before: frames never sent are not lost */
          if (s->pushed[n] != Clock::time_point ())
            r.lost++;
          continue;
        }
        trips.push_back (s->trip_ms[n]);
        auto done = s->pushed[n]
                    + std::chrono::duration_cast<Clock::duration> (
                        std::chrono::duration<double, std::milli> (
                            s->trip_ms[n]));
        if (!got++)
          first = done;
        last = done;
      }
      if (got > 1) {
        const double fps
            = (got - 1)
              / std::chrono::duration<double> (last - first).count ();
        fps_min = std::min (fps_min, fps);
        fps_sum += fps;
      }
    }
    if (r.why.empty () && !trips.empty ()) {
      r.ok = true;
      r.med = percentile (trips, 0.5);
      r.p99 = percentile (trips, 0.99);
      r.max = percentile (trips, 1.0);
      r.fps_min = fps_min;
      r.fps_sum = fps_sum;
      r.cpu_ms = cpu * 1e3 / ((double)total * o.streams);
      r.threads = sampled_threads;
      if (wraps_sampled) {
        r.wraps_late = gst_zc_wrapped_buffers_made () - wraps_at_warmup;
        const long received = received_all ();
        if (received > received_at_warmup) {
          const double frames = (double)(received - received_at_warmup);
          r.migrations = (double)(gst_zc_memory_get_migrations ()
                                  - moved_at_warmup)
                         / frames;
          r.page_faults = (double)(page_faults () - faults_at_warmup) / frames;
        }
      }
      const double mib = 1024.0 * 1024.0 * o.streams;
      r.pinned_mib = bytes[0] / mib;
      r.device_mib = bytes[1] / mib;
      r.managed_mib = bytes[2] / mib;
      r.system_mib = bytes[3] / mib;
      for (size_t k = 0; k < streams[0]->stages.size (); k++) {
        std::vector<double> at;
        for (auto &s : streams)
          if (k < s->stages.size ())
            for (int n = o.warmup; n < total; n++)
              if (!std::isnan (s->stages[k]->at_ms[n]))
                at.push_back (s->stages[k]->at_ms[n]);
        r.stage_names.push_back (streams[0]->stages[k]->name);
        r.stage_med.push_back (percentile (at, 0.5));
      }
      /* a per-frame figure of every stream's timed frames */
      auto timed = [&] (std::vector<double> Stream::*figure) {
        std::vector<double> v;
        for (auto &s : streams)
          for (int n = o.warmup; n < total; n++)
            if (!std::isnan (((*s).*figure)[n]))
              v.push_back (((*s).*figure)[n]);
        return v;
      };
      const std::vector<double> handover = timed (&Stream::handover_ms);
      r.handover_med = percentile (handover, 0.5);
      r.handover_p99 = percentile (handover, 0.99);
      const std::vector<double> wake = timed (&Stream::wake_ms);
      r.wake_med = percentile (wake, 0.5);
      r.wake_p99 = percentile (wake, 0.99);
    } else if (r.why.empty ()) {
      r.why = "no frame reached the sink";
    }
  }
  watch.pause ();
  turn.next (); /* every case's run is done */
  guint64 copied = 0, buffers = 0, reg = 0;
  bool have_upload = false;
  for (auto &s : streams)
    have_upload |= upload_stats (s->pipeline, &copied, &buffers, &reg);
  if (have_upload && buffers > uploaded_at_warmup) {
    r.copies = (double)(copied - copied_at_warmup)
               / (double)(buffers - uploaded_at_warmup);
    r.registrations = reg;
  }
  for (size_t i = 0; i < streams.size (); i++) {
    auto &s = streams[i];
    watch.step ("stopping pipeline " + std::to_string (i + 1) + of_n);
    gst_element_set_state (s->pipeline, GST_STATE_NULL);
    if (s->pool) {
      gst_buffer_pool_set_active (s->pool, FALSE);
      gst_object_unref (s->pool);
    }
    if (s->caps)
      gst_caps_unref (s->caps);
    if (s->appsrc)
      gst_object_unref (s->appsrc);
    gst_object_unref (s->pipeline);
  }
  return r;
}

/* The median of the runs' figures (the upper middle one for an even
 * number); @v not empty */
double
median_of (std::vector<double> v)
{
  std::sort (v.begin (), v.end ());
  return v[v.size () / 2];
}

/* The median of @runs' @figure over the runs that have it; NAN if none */
double
median_of_runs (const std::vector<Result> &runs, double Result::*figure)
{
  std::vector<double> v;
  for (const Result &r : runs)
    if (!std::isnan (r.*figure))
      v.push_back (r.*figure);
  return v.empty () ? NAN : median_of (v);
}

std::string
fmt_range (const std::vector<double> &v, const char *f)
{
  if (v.empty ())
    return "-";
  char buf[96];
  std::string fs = std::string (f) + " (" + f + "-" + f + ")";
  snprintf (buf, sizeof buf, fs.c_str (), median_of (v),
            *std::min_element (v.begin (), v.end ()),
            *std::max_element (v.begin (), v.end ()));
  return buf;
}

/* True when a row of @c is to run: --only names none, or one of its
 * |-separated strings is in "case pipeline" */
bool
row_selected (const Case &c, const Pipeline &pl, const Options &o)
{
  if (o.only.empty ())
    return true;
  const std::string row = c.name + " " + pl.label;
  gchar **alts = g_strsplit (o.only.c_str (), "|", -1);
  bool hit = false;
  for (gchar **a = alts; *a && !hit; a++) {
    std::string alt = *a;
    /* a trailing $: the row ends with it */
    if (!alt.empty () && alt.back () == '$') {
      alt.pop_back ();
      hit = row.size () >= alt.size ()
            && row.compare (row.size () - alt.size (), alt.size (), alt) == 0;
    } else {
      hit = !alt.empty () && row.find (alt) != std::string::npos;
    }
  }
  g_strfreev (alts);
  return hit;
}

bool
case_selected (const Case &c, const Options &o)
{
  for (const Pipeline &pl : c.pipelines)
    if (row_selected (c, pl, o))
      return true;
  return false;
}

/* A case's frames as its bare GPU work moves them (from its caps): each
 * frame's first plane as rows of bytes and the rest of the frame as more
 * rows of the same length (the traffic of a frame, for the raw limits), and
 * the kernel zcfilter runs between them */
struct CaseFrames
{
  size_t in_row = 0, in_rows = 0, out_row = 0, out_rows = 0;
  zc_bench::FrameKernel kernel;
};

/* What a case's frame costs the GPU alone: the floor of its device row, and
 * the bus limit flat-out streams are held against */
struct Reference
{
  bool ok = false;
  std::string why;
  CaseFrames frames;
  double gpu_work_ms = NAN; /* pinned copy in + kernel + pinned copy out,
                               one frame after the other (CUDA events) */
  double kernel_ms = NAN;   /* the kernel of it alone */
  /* the same, one frame at a time at --fps on the case's grid: the
   * host's view (first call to done seen) and the GPU's (events) */
  zc_bench::PacedWork paced;
  bool paced_ok = false;
  std::string paced_why;
  double bus_fps = NAN;     /* the larger of in and out at half the duplex
                               rate: a direction's share */
  double frame_bytes = NAN; /* the larger of in and out */
  double bus_fps_before = NAN, bus_fps_after = NAN; /* flat out, alone */
};

bool
video_info_of (const std::string &caps, GstVideoInfo *info)
{
  GstCaps *c = gst_caps_from_string (caps.c_str ());
  const bool ok = c && gst_video_info_from_caps (info, c);
  if (c)
    gst_caps_unref (c);
  return ok;
}

/* @info's first plane as rows of bytes, the rest of the frame as more rows
 * of the same length */
void
frame_rows (const GstVideoInfo *info, size_t *row_bytes, size_t *rows)
{
  *row_bytes = (size_t)GST_VIDEO_INFO_WIDTH (info)
               * GST_VIDEO_INFO_COMP_PSTRIDE (info, 0);
  *rows = (GST_VIDEO_INFO_SIZE (info) + *row_bytes - 1) / *row_bytes;
}

bool
case_frames (const Case &c, CaseFrames *f)
{
  GstVideoInfo in, out;
  if (!video_info_of (c.in_caps, &in) || !video_info_of (c.out_caps, &out)
      || !zc_gst::frame_desc_from_info (&in, &f->kernel.in)
      || !zc_gst::frame_desc_from_info (&out, &f->kernel.out))
    return false;
  frame_rows (&in, &f->in_row, &f->in_rows);
  frame_rows (&out, &f->out_row, &f->out_rows);
  f->kernel.convert = c.converts;
  f->kernel.brightness = c.brightness;
  return true;
}

/* Bytes a millisecond the bus moves both ways at once, on a 4K RGBA frame
 * (33 MB; on a frame of a few MB the start and ramp count): the faster of
 * an in-place kernel on mapped memory (the SMs move the bytes) and a pinned
 * copy each way at once (the two copy engines). With the kernel alone, 32
 * streams side by side went past such a "limit". 0 with *why set when it
 * cannot be measured. */
double
measure_duplex_rate (std::string *why)
{
  zc_bench::Limits big;
  if (!zc_bench::measure_limits (3840 * 4, 2160, true, 20, &big, why))
    return 0.0;
  const double both = 2.0 * (double)big.bytes;
  return std::max (both / big.mapped_in_place.median_ms,
                   both / big.copies_both_ways.median_ms);
}

/* The frame's GPU work of @c (its frames @f) in a bare CUDA program, frame
 * n at @slot (n) (zc_bench::measure_paced_work()) */
bool
measure_case_work (
    const Case &c, const CaseFrames &f, int frames, bool time_kernel,
    const std::function<Clock::time_point (int)> &slot,
    const std::function<void ()> &ready, const std::function<void ()> &done,
    zc_bench::PacedWork *work, std::string *why)
{
  /* a decoder's frames are on the GPU already: no copy in */
  return zc_bench::measure_paced_work (
      f.in_row, f.in_rows, f.out_row, f.out_rows, f.kernel,
      c.source.empty (), frames, time_kernel, slot, ready, done, work, why);
}

/* The case's frame, one at a time at --fps on the case's grid (@phase):
 * what the trip cannot go below at that rate */
void
measure_paced_reference (const Case &c, const Options &o,
                         Clock::duration phase, Reference *r)
{
  const Clock::duration period = frame_period (o);
  Turn turn (o.rendezvous);
  Clock::time_point first;
  r->paced_ok = measure_case_work (
      c, r->frames, std::max (o.frames, 30), false,
      [&] (int n) { return first + n * period; },
      [&] () {
        turn.next ();
        first = next_slot (o, phase,
                           Clock::now () + std::chrono::milliseconds (50));
      },
      [&] () { turn.next (); }, &r->paced, &r->paced_why);
}

/* @duplex_bytes_per_ms: measure_duplex_rate()'s, the same for every case */
Reference
measure_reference (const Case &c, double duplex_bytes_per_ms)
{
  Reference r;
  if (!case_frames (c, &r.frames)) {
    r.why = "bad caps";
    return r;
  }
  const CaseFrames &f = r.frames;
  /* one frame after the other, each started once the last is done, the
   * kernel timed on its own too */
  zc_bench::PacedWork back_to_back;
  if (!measure_case_work (
          c, f, 50, true, [] (int) { return Clock::time_point (); }, nullptr,
          nullptr, &back_to_back, &r.why))
    return r;
  r.ok = true;
  r.gpu_work_ms = back_to_back.gpu.median_ms;
  r.kernel_ms = back_to_back.kernel.median_ms;
  /* The duplex rate was measured with the same bytes each way: half of it
   * is what one direction moves while the other is busy too. A PCIe link's
   * directions do not lend each other lanes, so a frame that writes more
   * than it reads (NV12 1080p in, RGBA 720p out: 3.1 MB, 3.7 MB) is bound
   * by its output's direction, whatever the other has left. */
  r.frame_bytes
      = (double)std::max (f.in_row * f.in_rows, f.out_row * f.out_rows);
  r.bus_fps = duplex_bytes_per_ms / 2.0 * 1e3 / r.frame_bytes;
  return r;
}

/* Runs every selected row of @c, @o.runs times interleaved, and appends its
 * lines to @text; returns the number of rows that failed */
int
run_case (const Case &c, const Reference &ref_before, const Options &o,
          Clock::duration phase, std::string *text)
{
  Reference ref = ref_before;
  int failures = 0;
  char line[512];
  std::vector<std::vector<Result> > all (c.pipelines.size ());
  std::vector<std::string> why (c.pipelines.size ());
  for (size_t p = 0; p < c.pipelines.size (); p++) {
    if (!row_selected (c, c.pipelines[p], o))
      why[p] = "-";
    for (const std::string &f : c.pipelines[p].needs)
      if (why[p].empty () && !have_factory (f))
        why[p] = f + " not found";
  }
  if (!case_selected (c, o))
    return 0;
  if (ref.ok && !o.flat_out) {
    measure_paced_reference (c, o, phase, &ref);
  } else {
    Turn idle (o.rendezvous);
  }
  /* at once, every case takes every turn, running its row of that turn's
   * kind if it has one; else its rows one after another */
  const size_t turns = o.rendezvous ? o.turns.size () : c.pipelines.size ();
  for (int run = 0; run < o.runs; run++)
    for (size_t t = 0; t < turns; t++) {
      size_t p = t;
      if (o.rendezvous)
        for (p = 0; p < c.pipelines.size (); p++)
          if (why[p].empty () && turn_key (c, p) == o.turns[t])
            break;
      if (p >= c.pipelines.size () || !why[p].empty ()) {
        Turn idle (o.rendezvous);
        continue;
      }
      Result r = run_once (c, c.pipelines[p], o, phase);
      if (!r.ok) {
        why[p] = r.why;
        failures++;
        continue;
      }
      /* each run as it ends, on stderr: a run cut short by a time limit
       * still leaves the rows it finished (the table comes at the end) */
      fprintf (stderr,
               "zc-latency: run %d of %d: %s %s: median %.3f ms, p99 %.3f, "
               "slowest stream %.1f fps\n",
               run + 1, o.runs, c.name.c_str (),
               c.pipelines[p].label.c_str (), r.med, r.p99, r.fps_min);
      all[p].push_back (r);
    }
  /* Flat out, the limit is measured again once the runs are done, and the
   * higher of the two is the one the streams are held against: a limit
   * that measured low once would flatter them (it moves by some 5% from
   * one measurement to the next). Not while other cases run beside. */
  if (ref.ok && o.flat_out && !o.cases_at_once) {
    std::string why_not;
    const double after = measure_duplex_rate (&why_not);
    if (after > 0.0) {
      ref.bus_fps_before = ref.bus_fps;
      ref.bus_fps_after = after / 2.0 * 1e3 / ref.frame_bytes;
      ref.bus_fps = std::max (ref.bus_fps_before, ref.bus_fps_after);
    }
  }
  if (ref.ok) {
    char twice[96] = "";
    if (!std::isnan (ref.bus_fps_after))
      snprintf (twice, sizeof twice,
                "; the higher of %.0f before the runs and %.0f after",
                ref.bus_fps_before, ref.bus_fps_after);
    const char *kernel = c.converts ? "conversion" : "table";
    snprintf (line, sizeof line,
              "%-26s GPU work (%szcfilter's %s kernel, pinned copy out) one "
              "frame after another %.3f ms (CUDA events; the kernel %.3f), "
              "bus limit %.0f fps (duplex, each way%s)\n",
              c.name.c_str (),
              c.source.empty () ? "pinned copy in, " : "on the decoded frame, ",
              kernel, ref.gpu_work_ms, ref.kernel_ms, ref.bus_fps, twice);
    *text += line;
    if (ref.paced_ok)
      snprintf (line, sizeof line,
                "%-26s GPU work one frame every %.1f ms %.3f ms, p99 %.3f "
                "(%.2fx), %.3f-%.3f (first CUDA call to done seen by the "
                "host), %.3f in CUDA events: >GPU is against %.3f\n",
                c.name.c_str (), 1e3 / o.fps, ref.paced.host.median_ms,
                ref.paced.host.p99_ms,
                ref.paced.host.p99_ms / ref.paced.host.median_ms,
                ref.paced.host.min_ms, ref.paced.host.max_ms,
                ref.paced.gpu.median_ms, ref.paced.host.median_ms);
    else if (!o.flat_out)
      snprintf (line, sizeof line,
                "%-26s GPU work at %g fps not measured: %s\n",
                c.name.c_str (), o.fps, ref.paced_why.c_str ());
    else
      line[0] = '\0';
    *text += line;
  } else if (!ref.why.empty ()) {
    *text += c.name + " GPU work not measured: " + ref.why + "\n";
  }
  for (size_t p = 0; p < c.pipelines.size (); p++) {
    if (why[p] == "-")
      continue;
    if (!why[p].empty ()) {
      snprintf (line, sizeof line, "%-26s %-46s not run: %s\n",
                c.name.c_str (), c.pipelines[p].label.c_str (),
                why[p].c_str ());
      *text += line;
      continue;
    }
    std::vector<double> med, p99, mx, fps, total, cpu;
    int thr = 0, lost = 0;
    for (const Result &r : all[p]) {
      med.push_back (r.med);
      p99.push_back (r.p99);
      mx.push_back (r.max);
      fps.push_back (r.fps_min);
      total.push_back (r.fps_sum);
      cpu.push_back (r.cpu_ms);
      thr = std::max (thr, r.threads);
      lost += r.lost;
    }
    /* frames that queued in appsrc (a pipeline slower than the source)
     * waited before their trip started: the row says so */
    double queued = 0;
    for (const Result &r : all[p])
      if (!std::isnan (r.handover_p99))
        queued = std::max (queued, r.handover_p99);
    std::string late;
    if (lost)
      late += " (" + std::to_string (lost) + " frames lost)";
    if (queued > kQueuedMs) {
      snprintf (line, sizeof line, " (frames queued in appsrc before "
                "their trip: p99 %.1f ms)", queued);
      late += line;
    }
    const double wake_p99 = median_of_runs (all[p], &Result::wake_p99);
    if (wake_p99 > kLateWakeMs) {
      snprintf (line, sizeof line, " (the host woke the source's thread "
                "late: p99 %.2f ms after its slot)", wake_p99);
      late += line;
    }
    /* managed memory: whether frames moved between the host and the GPU
     * (prefetched) or stayed where they were */
    const double moved = median_of_runs (all[p], &Result::migrations);
    if (!std::isnan (moved)
        && (moved > 0
            || c.pipelines[p].label.find ("managed") != std::string::npos)) {
      const double faults = median_of_runs (all[p], &Result::page_faults);
      snprintf (line, sizeof line, " (managed memory moved between host and "
                "GPU %.2f times a frame, %.0f CPU page faults a frame%s)",
                moved, faults,
                o.cases_at_once ? ", the turn's rows together" : "");
      late += line;
    }
    const Result &last = all[p].back ();
    char copies[32] = "-";
    if (!std::isnan (last.copies))
      snprintf (copies, sizeof copies, "%.2f", last.copies);
    guint64 wraps = 0;
    for (const Result &r : all[p])
      wraps = std::max (wraps, r.wraps_late);
    char vs[32] = "-";
    if (ref.ok && o.flat_out)
      snprintf (vs, sizeof vs, "%.1f%%",
                100.0 * median_of (total) / ref.bus_fps);
    else if (ref.paced_ok)
      snprintf (vs, sizeof vs, "%+.3f",
                median_of (med) - ref.paced.host.median_ms);
    char process[128];
    if (!o.cases_at_once)
      snprintf (process, sizeof process,
                "%-8.3f %-7d %-9s %-6" G_GUINT64_FORMAT " %.1f %.1f %.1f %.1f",
                median_of (cpu), thr, copies, wraps, last.pinned_mib,
                last.device_mib, last.managed_mib, last.system_mib);
    else
      snprintf (process, sizeof process, "%-8s %-7s %-9s %-6s -", "-", "-",
                copies, "-");
    snprintf (line, sizeof line,
              "%-26s %-46s %-22s %-22s %-9.3f %-15s %-16s %-7s %s%s\n",
              c.name.c_str (), c.pipelines[p].label.c_str (),
              fmt_range (med, "%.3f").c_str (),
              fmt_range (p99, "%.3f").c_str (),
              *std::max_element (mx.begin (), mx.end ()),
              fmt_range (fps, "%.1f").c_str (),
              fmt_range (total, "%.0f").c_str (), vs, process, late.c_str ());
    *text += line;
    if (o.stages && !last.stage_names.empty ()) {
      /* where the trip goes: medians of the runs' medians */
      std::string st = "  pushed by";
      for (size_t k = 0; k < last.stage_names.size (); k++) {
        std::vector<double> v;
        for (const Result &r : all[p])
          if (k < r.stage_med.size ())
            v.push_back (r.stage_med[k]);
        snprintf (line, sizeof line, " %s %.3f,", last.stage_names[k].c_str (),
                  median_of (v));
        st += line;
      }
      snprintf (line, sizeof line, " mapped at the sink %.3f ms\n",
                median_of (med));
      *text += st + line;
      const double handover = median_of_runs (all[p], &Result::handover_med);
      if (!std::isnan (handover)) {
        snprintf (line, sizeof line,
                  "  before the trip: appsrc's thread pushed the frame %.3f "
                  "ms (p99 %.3f) after this program handed it over\n",
                  handover, median_of_runs (all[p], &Result::handover_p99));
        *text += line;
      }
      if (!std::isnan (wake_p99)) {
        snprintf (line, sizeof line,
                  "  the host: this program's source thread woke %.3f ms "
                  "(p99 %.3f) after its slot\n",
                  median_of_runs (all[p], &Result::wake_med), wake_p99);
        *text += line;
      }
    }
  }
  return failures;
}

} // namespace

int
main (int argc, char **argv)
{
  Options o;
  gst_init (&argc, &argv);
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&] () -> const char * {
      if (i + 1 >= argc) {
        fprintf (stderr, "zc-latency: %s needs a value\n", a.c_str ());
        exit (2);
      }
      return argv[++i];
    };
    if (a == "--fps")
      o.fps = atof (next ());
    else if (a == "--frames")
      o.frames = atoi (next ());
    else if (a == "--warmup")
      o.warmup = atoi (next ());
    else if (a == "--runs")
      o.runs = atoi (next ());
    else if (a == "--streams")
      o.streams = atoi (next ());
    else if (a == "--flat-out")
      o.flat_out = true;
    else if (a == "--cases-at-once")
      o.cases_at_once = true;
    else if (a == "--only")
      o.only = next ();
    else if (a == "--h264")
      o.h264 = next ();
    else if (a == "--decoder")
      o.decoder = next ();
    else if (a == "--stages")
      o.stages = true;
    else if (a == "--second-context")
      o.second_context = next ();
    else {
      fprintf (stderr,
               "usage: zc-latency [--fps F] [--frames N] [--warmup W] "
               "[--runs R] [--streams N] [--flat-out] [--cases-at-once] "
               "[--only TEXT|TEXT...] [--h264 FILE] [--decoder NAME] "
               "[--stages] [--second-context idle|busy]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (o.fps <= 0 || o.frames < 2 || o.runs < 1 || o.streams < 1) {
    fprintf (stderr, "zc-latency: bad options\n");
    return 2;
  }
  std::string device = "no GPU: the CPU backend";
  bool have_gpu = false;
  int device_id = 0;
  if (GstZcContext *ctx = gst_zc_context_new (-1, nullptr)) {
    if (gst_zc_context_has_gpu (ctx)) {
      device = gst_zc_context_get_device_name (ctx);
      device_id = gst_zc_context_get_device_id (ctx);
      std::string name, why;
      have_gpu = zc_bench::gpu_available (&name, &why);
    }
    gst_object_unref (ctx);
  }
  std::unique_ptr<zc_bench::SecondContext> second;
  if (!o.second_context.empty ()) {
    if (!have_gpu) {
      fprintf (stderr, "zc-latency: --second-context needs a GPU\n");
      return 2;
    }
    second.reset (new zc_bench::SecondContext (o.second_context, device_id));
    if (!second->ok ()) {
      fprintf (stderr, "zc-latency: --second-context: %s\n",
               second->why ().c_str ());
      return 2;
    }
  }
  char pace[32];
  snprintf (pace, sizeof pace, "%g fps", o.fps);
  const std::string beside =
      second ? ", beside a second CUDA context (" + o.second_context + ")"
             : std::string ();
  printf ("zc-latency: %s, %s, %d stream%s at %s, %d frames timed "
          "after %d, %d runs%s%s\n",
          device.c_str (), gst_version_string (), o.streams,
          o.streams > 1 ? "s" : "", o.flat_out ? "flat out" : pace, o.frames,
          o.warmup, o.runs,
          o.cases_at_once ? ", the cases at once (one thread each, each "
                            "at its own phase of the period)"
                          : "",
          beside.c_str ());
  printf ("trip: push at the source to mapped for reading at the sink, ms; "
          "median of the runs (range); fps: the slowest stream's and all "
          "streams' together; %s; copies/f: frames zcupload copied, per "
          "frame, after warm-up; wraps: buffers made around foreign frames "
          "after warm-up (0: none per frame)\n\n",
          o.flat_out ? "% bus: all streams' fps over the bus limit"
                     : ">GPU: median minus the GPU work one frame at a time "
                       "at that rate");
  printf ("%-26s %-46s %-22s %-22s %-9s %-15s %-16s %-7s %-8s %-7s %-9s "
          "%-6s %s\n",
          "case", "pipeline", "median", "p99", "max", "fps slowest",
          "fps total", o.flat_out ? "% bus" : ">GPU", "cpu ms/f", "threads",
          "copies/f", "wraps", "MiB/stream pinned dev managed sys");
  std::vector<Case> cases = make_cases (o);
  std::vector<Reference> refs (cases.size ());
  if (have_gpu) {
    std::string why;
    const double duplex = measure_duplex_rate (&why);
    for (size_t i = 0; i < cases.size (); i++) {
      if (!case_selected (cases[i], o))
        continue;
      if (duplex > 0.0)
        refs[i] = measure_reference (cases[i], duplex);
      else
        refs[i].why = why;
    }
  }
  std::vector<std::string> text (cases.size ());
  std::vector<int> failed (cases.size (), 0);
  /* at once: the cases' phases spread over the frame period, and their
   * threads meet at one rendezvous */
  std::vector<Clock::duration> phase (cases.size (), Clock::duration (0));
  std::unique_ptr<Rendezvous> rendezvous;
  if (o.cases_at_once) {
    std::vector<size_t> selected;
    for (size_t i = 0; i < cases.size (); i++)
      if (case_selected (cases[i], o)) {
        selected.push_back (i);
        for (size_t p = 0; p < cases[i].pipelines.size (); p++) {
          const std::string key = turn_key (cases[i], p);
          if (row_selected (cases[i], cases[i].pipelines[p], o)
              && std::find (o.turns.begin (), o.turns.end (), key)
                     == o.turns.end ())
            o.turns.push_back (key);
        }
      }
    for (size_t k = 0; k < selected.size (); k++)
      phase[selected[k]] = frame_period (o) * k / selected.size ();
    rendezvous.reset (new Rendezvous (std::max<int> ((int)selected.size (), 1)));
    o.rendezvous = rendezvous.get ();
  }
  o.epoch = Clock::now ();
  if (o.cases_at_once) {
    std::vector<std::thread> workers;
    for (size_t i = 0; i < cases.size (); i++)
      workers.emplace_back ([&, i] () {
        failed[i] = run_case (cases[i], refs[i], o, phase[i], &text[i]);
      });
    for (auto &t : workers)
      t.join ();
  } else {
    for (size_t i = 0; i < cases.size (); i++) {
      failed[i] = run_case (cases[i], refs[i], o, phase[i], &text[i]);
      fputs (text[i].c_str (), stdout);
      fflush (stdout);
      text[i].clear ();
    }
  }
  int failures = 0;
  for (size_t i = 0; i < cases.size (); i++) {
    fputs (text[i].c_str (), stdout);
    failures += failed[i];
  }
  if (second && o.second_context == "busy")
    printf ("the second context copied %ld frames each way\n",
            second->copies ());
  return failures ? 1 : 0;
}

/* gst-zerocopy: a soak, hours of a live pipeline with everything a long run
 * meets
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   zc-soak [--minutes M] [--period S] [--check-every N] [--out DIR]
 *
 * A Theora file (made at start, 10 s of 640x360 at 30/1), decoded on the
 * CPU and looped with segment seeks, is played in real time into a tee:
 *   conv: zcupload ! zcfilter (I420 to RGBA, scaled, bilinear) ! zcdownload
 *   fx:   zcupload ! zcfilter brightness ! zcfilter contrast !
 *         zcfilter invert ! zcdownload
 *   kernel (where a GPU is usable): zcupload ! zckernel (invert.cu) !
 *         zcdownload
 * Every period (60 s), in turn: a property change (brightness), a
 * renegotiation (conv's output size), a flushing seek to a random place and
 * a state cycle (READY and back). Every Nth frame that enters the tee is
 * kept, and when conv's and fx's outputs of it arrive they are compared
 * with zc::convert_cpu() and zc::effects_chain_cpu() on it, byte for byte
 * (the bytes the CUDA kernels write); frames around a change are left out.
 *
 * Every 5 s it records RSS, open fds, threads, the pinned, device, managed
 * and system bytes the library holds (gst_zc_memory_get_bytes_in_use())
 * and the frames so far: DIR/soak.csv, and DIR/soak.png (drawn here, encoded
 * with pngenc). It fails (exit 1) on an error message, a wrong frame, or
 * growth after the warm-up (the first fifth of the run, at least 2
 * minutes): a net rise of RSS above 8 MiB and 3 times the noise, of fds or
 * threads above 2, of the library's host (pinned and system) or device
 * bytes above their warm-up maximum. The plot's panels, top to bottom: RSS,
 * fds, threads, host bytes, device bytes, frames.
 */
#include <gst/app/app.h>
#include <gst/video/video.h>
#include <gst/zerocopy/zerocopy.h>

#include "zcconvert.h"
#include "../gst/zcframedesc.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace {

struct Options
{
  double minutes = 60;
  int period_s = 60;
  int check_every = 30;
  std::string out = "soak-out";
};

/* ------------------------------------------------------------------ */
/* Process metrics                                                    */
/* ------------------------------------------------------------------ */

struct Sample
{
  double t;                     /* s since start */
  double rss_mib;
  int fds, threads;
  double pinned_mib, device_mib, managed_mib, system_mib;
  guint64 frames;
};

double
rss_mib ()
{
  long pages = 0, resident = 0;
  FILE *f = fopen ("/proc/self/statm", "r");
  if (f) {
    if (fscanf (f, "%ld %ld", &pages, &resident) != 2)
      resident = 0;
    fclose (f);
  }
  return resident * (double) sysconf (_SC_PAGESIZE) / (1024.0 * 1024.0);
}

int
count_fds ()
{
  int n = 0;
  DIR *d = opendir ("/proc/self/fd");
  if (!d)
    return -1;
  while (readdir (d))
    n++;
  closedir (d);
  return n - 3;                 /* ., .. and the one opendir holds */
}

int
count_threads ()
{
  FILE *f = fopen ("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  int n = -1;
  while (fgets (line, sizeof line, f))
    if (sscanf (line, "Threads: %d", &n) == 1)
      break;
  fclose (f);
  return n;
}

double
mib (GstZcMemoryType t)
{
  return gst_zc_memory_get_bytes_in_use (t) / (1024.0 * 1024.0);
}

/* ------------------------------------------------------------------ */
/* Frame checks                                                       */
/* ------------------------------------------------------------------ */

struct Kept
{
  std::vector < guint8 > bytes;
  GstVideoInfo info;
  guint64 epoch;
  int seen = 0;                 /* branches that compared their output */
};

struct Checks
{
  std::mutex lock;
  int every = 30;               /* keep every Nth frame that enters */
  guint64 epoch = 0;            /* bumped at every change */
  guint64 entered = 0;
  std::map < GstClockTime, Kept > kept;
  /* what the references use, under the lock */
  double brightness = 0.1;
  guint64 checked = 0, wrong = 0, skipped = 0;
  std::string first_wrong;
};

GstPadProbeReturn
keep_input (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  Checks *c = static_cast < Checks * >(user_data);
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstCaps *caps = gst_pad_get_current_caps (pad);
  std::lock_guard < std::mutex > lk (c->lock);
  const bool keep = caps && c->entered++ % c->every == 0 &&
      GST_BUFFER_PTS_IS_VALID (buf) && c->kept.size () < 64;
  if (keep) {
    Kept k;
    gst_video_info_from_caps (&k.info, caps);
    k.bytes.resize (gst_buffer_get_size (buf));
    gst_buffer_extract (buf, 0, k.bytes.data (), k.bytes.size ());
    k.epoch = c->epoch;
    c->kept[GST_BUFFER_PTS (buf)] = std::move (k);
  }
  if (caps)
    gst_caps_unref (caps);
  return GST_PAD_PROBE_OK;
}

/* Compares one output sample of branch @conv (else fx) with the reference
 * of the kept input of the same PTS, if any. */
void
check_sample (Checks * c, GstSample * s, bool conv)
{
  GstBuffer *buf = gst_sample_get_buffer (s);
  GstVideoInfo out;
  if (!gst_video_info_from_caps (&out, gst_sample_get_caps (s)))
    return;
  std::lock_guard < std::mutex > lk (c->lock);
  auto it = c->kept.find (GST_BUFFER_PTS (buf));
  if (it == c->kept.end ())
    return;
  Kept & k = it->second;
  if (k.epoch != c->epoch) {
    c->skipped++;
    c->kept.erase (it);
    return;
  } else {
    std::vector < guint8 > ref (GST_VIDEO_INFO_SIZE (&out));
    zc::FrameDesc src, dst;
    bool ok = zc_gst::frame_desc_at (&k.info, k.bytes.data (), &src) &&
        zc_gst::frame_desc_at (&out, ref.data (), &dst);
    if (ok && conv) {
      zc::ConvertParams p;
      p.sampling = zc::Sampling::Bilinear;
      ok = zc::convert_cpu (src, dst, p, 0);
    } else if (ok) {
      zc::ConvertParams steps[3];
      steps[0].brightness = c->brightness;
      steps[1].contrast = 1.2;
      steps[2].invert = true;
      ok = zc::effects_chain_cpu (src, dst, steps, 3, 0);
    }
    /* the visible bytes of every row, through both layouts */
    GstVideoFrame f;
    bool same = ok && gst_video_frame_map (&f, &out, buf, GST_MAP_READ);
    if (same) {
      for (guint p = 0; same && p < GST_VIDEO_INFO_N_PLANES (&out); p++) {
        const gint rows = GST_VIDEO_INFO_COMP_HEIGHT (&out, p);
        const gint bytes = GST_VIDEO_INFO_COMP_WIDTH (&out, p) *
            GST_VIDEO_INFO_COMP_PSTRIDE (&out, p);
        for (gint y = 0; same && y < rows; y++)
          same = memcmp ((const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&f, p)
              + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&f, p),
              ref.data () + GST_VIDEO_INFO_PLANE_OFFSET (&out, p) +
              (gsize) y * GST_VIDEO_INFO_PLANE_STRIDE (&out, p), bytes) == 0;
      }
      gst_video_frame_unmap (&f);
    }
    c->checked++;
    if (!same) {
      c->wrong++;
      if (c->first_wrong.empty ()) {
        gchar *w = g_strdup_printf ("%s branch, frame at %" GST_TIME_FORMAT
            ", %dx%d", conv ? "conv" : "fx",
            GST_TIME_ARGS (GST_BUFFER_PTS (buf)), GST_VIDEO_INFO_WIDTH (&out),
            GST_VIDEO_INFO_HEIGHT (&out));
        c->first_wrong = w;
        g_free (w);
      }
    }
  }
  /* both branches compare with each kept frame; the second one drops it */
  if (++k.seen == 2)
    c->kept.erase (it);
}

GstFlowReturn
on_sample (GstAppSink * sink, gpointer user_data)
{
  Checks *c = static_cast < Checks * >(user_data);
  GstSample *s = gst_app_sink_pull_sample (sink);
  if (!s)
    return GST_FLOW_ERROR;
  check_sample (c, s, g_str_equal (GST_OBJECT_NAME (sink), "conv_sink"));
  gst_sample_unref (s);
  return GST_FLOW_OK;
}

/* Plays @p (if not playing yet) to EOS, an ERROR or @timeout, and stops
 * it; whether it reached EOS */
bool
play_to_eos (GstElement * p, GstClockTime timeout)
{
  gst_element_set_state (p, GST_STATE_PLAYING);
  GstBus *bus = gst_element_get_bus (p);
  GstMessage *m = gst_bus_timed_pop_filtered (bus, timeout,
      (GstMessageType) (GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  const bool ok = m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_EOS;
  if (m)
    gst_message_unref (m);
  gst_object_unref (bus);
  gst_element_set_state (p, GST_STATE_NULL);
  return ok;
}

/* ------------------------------------------------------------------ */
/* The plot: one panel per series, drawn into RGB and encoded by pngenc */
/* ------------------------------------------------------------------ */

struct Canvas
{
  int w, h;
  std::vector < guint8 > px;
  Canvas (int w_, int h_):w (w_), h (h_), px ((size_t) w_ * h_ * 3, 255) {}
  void dot (int x, int y, const guint8 * rgb)
  {
    if (x < 0 || y < 0 || x >= w || y >= h)
      return;
    memcpy (&px[((size_t) y * w + x) * 3], rgb, 3);
  }
  void line (int x0, int y0, int x1, int y1, const guint8 * rgb)
  {
    const int n = std::max (std::abs (x1 - x0), std::abs (y1 - y0)) + 1;
    for (int i = 0; i < n; i++)
      dot (x0 + (x1 - x0) * i / std::max (1, n - 1),
          y0 + (y1 - y0) * i / std::max (1, n - 1), rgb);
  }
};

bool
write_plot (const std::vector < Sample > &v, const std::string & path)
{
  const int W = 960, panel = 110, n_series = 6;
  Canvas cv (W, panel * n_series);
  const guint8 axis[3] = { 160, 160, 160 }, ink[3] = { 20, 70, 160 };
  if (v.size () < 2)
    return false;
  const double t_end = std::max (v.back ().t, 1.0);
  static const char *const names[] = { "RSS, MiB", "open fds", "threads",
    "host bytes of the library (pinned + system), MiB",
    "device bytes of the library (device + managed), MiB", "frames"
  };
  /* each panel's name and range, written by textoverlay where it exists */
  std::string labels;
  for (int s = 0; s < n_series; s++) {
    auto val =[&](const Sample & x) {
      switch (s) {
        case 0: return x.rss_mib;
        case 1: return (double) x.fds;
        case 2: return (double) x.threads;
        case 3: return x.pinned_mib + x.system_mib;
        case 4: return x.device_mib + x.managed_mib;
        default: return (double) x.frames;
      }
    };
    double lo = val (v[0]), hi = lo;
    for (const Sample & x:v) {
      lo = std::min (lo, val (x));
      hi = std::max (hi, val (x));
    }
    gchar *over = g_strdup_printf (", over %.0f s", t_end);
    gchar *label = g_strdup_printf (" ! textoverlay text=\"%s: %.4g to %.4g%s\" "
        "halignment=position valignment=position xpos=0.05 ypos=%.4f "
        "font-desc=\"Sans 9\" shaded-background=false", names[s], lo, hi,
        s == n_series - 1 ? over : "",
        (s * panel + 2) / (double) (panel * n_series));
    g_free (over);
    labels += label;
    g_free (label);
    if (hi - lo < 1e-9)
      hi = lo + 1;
    const int top = s * panel + 8, bottom = (s + 1) * panel - 8;
    cv.line (40, bottom, W - 10, bottom, axis);
    cv.line (40, top, 40, bottom, axis);
    int px = -1, py = -1;
    for (const Sample & x:v) {
      const int X = 40 + (int) ((W - 50) * x.t / t_end);
      const int Y = bottom - (int) ((bottom - top) * (val (x) - lo) /
          (hi - lo));
      if (px >= 0)
        cv.line (px, py, X, Y, ink);
      px = X;
      py = Y;
    }
  }
  /* appsrc ! [textoverlay ...] ! pngenc ! filesink */
  GstElementFactory *text = gst_element_factory_find ("textoverlay");
  if (text)
    gst_object_unref (text);
  else
    labels.clear ();
  gchar *desc = g_strdup_printf ("appsrc name=src format=time "
      "caps=video/x-raw,format=RGB,"
      "width=%d,height=%d,framerate=1/1 ! videoconvert%s ! videoconvert ! "
      "pngenc ! filesink location=\"%s\"", cv.w, cv.h, labels.c_str (),
      path.c_str ());
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  g_free (desc);
  if (!p) {
    g_clear_error (&err);
    return false;
  }
  GstElement *src = gst_bin_get_by_name (GST_BIN (p), "src");
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGB, cv.w, cv.h);
  GstBuffer *b = gst_buffer_new_allocate (NULL, GST_VIDEO_INFO_SIZE (&info),
      NULL);
  GstVideoFrame f;
  gst_video_frame_map (&f, &info, b, GST_MAP_WRITE);
  for (int y = 0; y < cv.h; y++)
    memcpy ((guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&f, 0) +
        (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&f, 0),
        &cv.px[(size_t) y * cv.w * 3], (size_t) cv.w * 3);
  gst_video_frame_unmap (&f);
  GST_BUFFER_PTS (b) = 0;
  GST_BUFFER_DURATION (b) = GST_SECOND;
  gst_element_set_state (p, GST_STATE_PLAYING);
  gst_app_src_push_buffer (GST_APP_SRC (src), b);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  const bool ok = play_to_eos (p, 10 * GST_SECOND);
  gst_object_unref (src);
  gst_object_unref (p);
  return ok;
}

/* ------------------------------------------------------------------ */
/* Growth                                                             */
/* ------------------------------------------------------------------ */

/* Least-squares slope and residual deviation of @y over @t */
void
fit (const std::vector < double >&t, const std::vector < double >&y,
    double *slope, double *noise)
{
  const double n = (double) t.size ();
  double st = 0, sy = 0, stt = 0, sty = 0;
  for (size_t i = 0; i < t.size (); i++) {
    st += t[i];
    sy += y[i];
    stt += t[i] * t[i];
    sty += t[i] * y[i];
  }
  const double d = n * stt - st * st;
  *slope = d > 0 ? (n * sty - st * sy) / d : 0;
  const double a = (sy - *slope * st) / n;
  double r = 0;
  for (size_t i = 0; i < t.size (); i++)
    r += std::pow (y[i] - (a + *slope * t[i]), 2);
  *noise = std::sqrt (r / std::max (1.0, n - 2));
}

/* The failures the samples after @warmup show; empty if none */
std::vector < std::string > growth (const std::vector < Sample > &v,
    double warmup)
{
  std::vector < std::string > out;
  std::vector < double >t, rss;
  int fds_first = -1, fds_last = -1, thr_first = -1, thr_last = -1;
  double pinned_max_warm = 0, device_max_warm = 0, pinned_last = 0,
      device_last = 0;
  for (const Sample & s:v) {
    if (s.t < warmup) {
      pinned_max_warm = std::max (pinned_max_warm, s.pinned_mib +
          s.system_mib);
      device_max_warm = std::max (device_max_warm, s.device_mib +
          s.managed_mib);
      continue;
    }
    t.push_back (s.t);
    rss.push_back (s.rss_mib);
    if (fds_first < 0) {
      fds_first = s.fds;
      thr_first = s.threads;
    }
    fds_last = s.fds;
    thr_last = s.threads;
    pinned_last = s.pinned_mib + s.system_mib;
    device_last = s.device_mib + s.managed_mib;
  }
  if (t.size () < 3) {
    out.push_back ("too short a run after the warm-up to judge growth");
    return out;
  }
  double slope, noise;
  fit (t, rss, &slope, &noise);
  const double rise = slope * (t.back () - t.front ());
  gchar *s;
  if (rise > 8.0 && rise > 3 * noise) {
    s = g_strdup_printf ("RSS grows: %.1f MiB over %.0f s after the warm-up "
        "(noise %.2f MiB)", rise, t.back () - t.front (), noise);
    out.push_back (s);
    g_free (s);
  }
  if (fds_last > fds_first + 2) {
    s = g_strdup_printf ("open fds grow: %d to %d", fds_first, fds_last);
    out.push_back (s);
    g_free (s);
  }
  if (thr_last > thr_first + 2) {
    s = g_strdup_printf ("threads grow: %d to %d", thr_first, thr_last);
    out.push_back (s);
    g_free (s);
  }
  if (pinned_last > pinned_max_warm + 0.5) {
    s = g_strdup_printf ("pinned and system memory of the library grow: "
        "%.1f MiB, at most %.1f in the warm-up", pinned_last,
        pinned_max_warm);
    out.push_back (s);
    g_free (s);
  }
  if (device_last > device_max_warm + 0.5) {
    s = g_strdup_printf ("device memory grows: %.1f MiB, at most %.1f in "
        "the warm-up", device_last, device_max_warm);
    out.push_back (s);
    g_free (s);
  }
  return out;
}

/* ------------------------------------------------------------------ */

std::string
make_media (const std::string & dir)
{
  const std::string path = dir + "/soak.mkv";
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=300 pattern=ball "
      "! video/x-raw,format=I420,width=640,height=360,framerate=30/1 ! "
      "theoraenc keyframe-auto=false keyframe-force=30 keyframe-freq=30 ! "
      "matroskamux ! filesink location=\"%s\"", path.c_str ());
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  g_free (desc);
  if (!p) {
    fprintf (stderr, "zc-soak: %s\n", err ? err->message : "?");
    g_clear_error (&err);
    return "";
  }
  const bool ok = play_to_eos (p, 60 * GST_SECOND);
  gst_object_unref (p);
  return ok ? path : "";
}

bool
gpu_usable ()
{
  GError *err = NULL;
  GstZcContext *ctx = gst_zc_context_new (-1, &err);
  const bool gpu = ctx && gst_zc_context_has_gpu (ctx);
  if (ctx)
    gst_object_unref (ctx);
  g_clear_error (&err);
  return gpu;
}

void
link_decoder (GstElement *, GstPad * pad, gpointer dec)
{
  GstPad *sink = gst_element_get_static_pad (GST_ELEMENT (dec), "sink");
  if (!gst_pad_is_linked (sink) && gst_pad_link (pad, sink) != GST_PAD_LINK_OK)
    g_printerr ("zc-soak: could not link the demuxer to the decoder\n");
  gst_object_unref (sink);
}

/* Loops the file: a segment seek, flushing or not, from @start */
bool
loop_from (GstElement * p, GstClockTime start, bool flush)
{
  return gst_element_seek (p, 1.0, GST_FORMAT_TIME, (GstSeekFlags)
      (GST_SEEK_FLAG_SEGMENT | (flush ? GST_SEEK_FLAG_FLUSH : 0)),
      GST_SEEK_TYPE_SET, start, GST_SEEK_TYPE_SET, 10 * GST_SECOND);
}

}                               // namespace

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--minutes" && v)
      o.minutes = g_ascii_strtod (argv[++i], NULL);
    else if (a == "--period" && v)
      o.period_s = std::max (5, atoi (argv[++i]));
    else if (a == "--check-every" && v)
      o.check_every = std::max (1, atoi (argv[++i]));
    else if (a == "--out" && v)
      o.out = argv[++i];
    else {
      fprintf (stderr, "usage: zc-soak [--minutes M] [--period S] "
          "[--check-every N] [--out DIR]\n");
      return 2;
    }
  }
  g_mkdir_with_parents (o.out.c_str (), 0755);
  const std::string media = make_media (o.out);
  if (media.empty ()) {
    fprintf (stderr, "zc-soak: could not make the Theora file (theoraenc, "
        "matroskamux: gst-plugins-base and -good)\n");
    return 2;
  }
  const bool gpu = gpu_usable ();
  std::string kernel;
  if (gpu)
    kernel = " t. ! queue max-size-buffers=4 ! zcupload ! zckernel "
        "location=\"" ZC_SOAK_INVERT_KERNEL "\" ! zcdownload ! "
        "fakesink sync=true";
  gchar *desc = g_strdup_printf ("filesrc location=\"%s\" ! matroskademux "
      "name=demux theoradec name=dec ! video/x-raw,format=I420 ! tee name=t "
      "t. ! queue max-size-buffers=4 ! zcupload ! zcfilter name=conv "
      "method=bilinear ! capsfilter name=convcaps caps=\"video/x-raw("
      GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY "),format=RGBA,width=480,height=270\" ! "
      "zcdownload ! appsink name=conv_sink sync=true "
      "t. ! queue max-size-buffers=4 ! zcupload ! zcfilter name=fx1 "
      "brightness=0.1 ! zcfilter contrast=1.2 ! zcfilter invert=true ! "
      "zcdownload ! appsink name=fx_sink sync=true%s", media.c_str (),
      kernel.c_str ());
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  g_free (desc);
  if (!p) {
    fprintf (stderr, "zc-soak: %s\n", err ? err->message : "?");
    return 2;
  }

  /* the demuxer makes its pad again after each READY: linked here, each
   * time (gst_parse_launch() links a pad only once) */
  GstElement *demux = gst_bin_get_by_name (GST_BIN (p), "demux");
  GstElement *dec = gst_bin_get_by_name (GST_BIN (p), "dec");
  g_signal_connect (demux, "pad-added", G_CALLBACK (link_decoder), dec);
  gst_object_unref (demux);

  Checks checks;
  checks.every = o.check_every;
  GstElement *tee = gst_bin_get_by_name (GST_BIN (p), "t");
  GstPad *tee_sink = gst_element_get_static_pad (tee, "sink");
  gst_pad_add_probe (tee_sink, GST_PAD_PROBE_TYPE_BUFFER, keep_input, &checks,
      NULL);
  gst_object_unref (tee_sink);
  gst_object_unref (tee);
  GstAppSinkCallbacks cb = { };
  cb.new_sample = on_sample;
  for (const char *name: {"conv_sink", "fx_sink"}) {
    GstElement *s = gst_bin_get_by_name (GST_BIN (p), name);
    gst_app_sink_set_callbacks (GST_APP_SINK (s), &cb, &checks, NULL);
    gst_object_unref (s);
  }
  GstElement *fx1 = gst_bin_get_by_name (GST_BIN (p), "fx1");
  GstElement *convcaps = gst_bin_get_by_name (GST_BIN (p), "convcaps");

  printf ("zc-soak: %.1f minutes, a change every %d s, %s; out %s\n",
      o.minutes, o.period_s, gpu ? "GPU (with zckernel)" : "CPU backend",
      o.out.c_str ());
  gst_element_set_state (p, GST_STATE_PAUSED);
  gst_element_get_state (p, NULL, NULL, 30 * GST_SECOND);
  loop_from (p, 0, true);
  gst_element_set_state (p, GST_STATE_PLAYING);

  std::vector < Sample > samples;
  std::vector < std::string > errors;
  std::mt19937 rng (7);
  const gint64 t0 = g_get_monotonic_time ();
  const double end_s = o.minutes * 60.0;
  double next_sample = 0, next_change = o.period_s;
  int change = 0;
  GstBus *bus = gst_element_get_bus (p);
  FILE *csv = fopen ((o.out + "/soak.csv").c_str (), "w");
  if (csv)
    fprintf (csv, "t_s,rss_mib,fds,threads,pinned_mib,device_mib,"
        "managed_mib,system_mib,frames,checked,wrong\n");
  while (true) {
    const double now = (g_get_monotonic_time () - t0) / 1e6;
    if (now >= end_s || !errors.empty ())
      break;
    GstMessage *m = gst_bus_timed_pop (bus, 100 * GST_MSECOND);
    if (m) {
      if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
        GError *e = NULL;
        gchar *dbg = NULL;
        gst_message_parse_error (m, &e, &dbg);
        errors.push_back (std::string (GST_OBJECT_NAME (m->src)) + ": " +
            e->message + " (" + (dbg ? dbg : "") + ")");
        g_clear_error (&e);
        g_free (dbg);
      } else if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_SEGMENT_DONE) {
        loop_from (p, 0, false);
      }
      gst_message_unref (m);
    }
    if (now >= next_sample) {
      Sample s;
      s.t = now;
      s.rss_mib = rss_mib ();
      s.fds = count_fds ();
      s.threads = count_threads ();
      s.pinned_mib = mib (GST_ZC_MEMORY_TYPE_MAPPED);
      s.device_mib = mib (GST_ZC_MEMORY_TYPE_DEVICE);
      s.managed_mib = mib (GST_ZC_MEMORY_TYPE_MANAGED);
      s.system_mib = mib (GST_ZC_MEMORY_TYPE_SYSTEM);
      guint64 checked, wrong;
      {
        std::lock_guard < std::mutex > lk (checks.lock);
        s.frames = checks.entered;
        checked = checks.checked;
        wrong = checks.wrong;
      }
      samples.push_back (s);
      if (csv) {
        fprintf (csv, "%.1f,%.2f,%d,%d,%.2f,%.2f,%.2f,%.2f,%" G_GUINT64_FORMAT
            ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "\n", s.t, s.rss_mib,
            s.fds, s.threads, s.pinned_mib, s.device_mib, s.managed_mib,
            s.system_mib, s.frames, checked, wrong);
        fflush (csv);
      }
      next_sample += 5;
    }
    if (now >= next_change) {
      next_change += o.period_s;
      {
        /* frames kept before a change are not checked: let them go (after
         * a flush some never come out) */
        std::lock_guard < std::mutex > lk (checks.lock);
        checks.epoch++;
        checks.skipped += checks.kept.size ();
        checks.kept.clear ();
      }
      switch (change++ % 4) {
        case 0:{                /* a property */
          const double b = std::uniform_real_distribution < double >(-0.3,
              0.3) (rng);
          g_object_set (fx1, "brightness", b, NULL);
          std::lock_guard < std::mutex > lk (checks.lock);
          checks.brightness = b;
          break;
        }
        case 1:{                /* renegotiation */
          const int w = change % 8 < 4 ? 320 : 480, h = w * 9 / 16;
          GstCaps *c = gst_caps_from_string ("video/x-raw("
              GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY "),format=RGBA");
          gst_caps_set_simple (c, "width", G_TYPE_INT, w, "height",
              G_TYPE_INT, h, NULL);
          g_object_set (convcaps, "caps", c, NULL);
          gst_caps_unref (c);
          break;
        }
        case 2:                /* a flushing seek somewhere */
          loop_from (p, std::uniform_int_distribution < int >(0, 9) (rng) *
              GST_SECOND, true);
          break;
        default:               /* a state cycle */
          gst_element_set_state (p, GST_STATE_READY);
          gst_element_get_state (p, NULL, NULL, 30 * GST_SECOND);
          gst_element_set_state (p, GST_STATE_PAUSED);
          gst_element_get_state (p, NULL, NULL, 30 * GST_SECOND);
          loop_from (p, 0, true);
          gst_element_set_state (p, GST_STATE_PLAYING);
          break;
      }
      std::lock_guard < std::mutex > lk (checks.lock);
      checks.epoch++;
    }
  }
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (dec);
  gst_object_unref (fx1);
  gst_object_unref (convcaps);
  gst_object_unref (p);
  if (csv)
    fclose (csv);

  const double warmup = std::max (120.0, end_s / 5);
  std::vector < std::string > grew = growth (samples, warmup);
  const bool png = write_plot (samples, o.out + "/soak.png");
  const Sample last = samples.empty ()? Sample { } : samples.back ();
  printf ("frames %" G_GUINT64_FORMAT ", checked %" G_GUINT64_FORMAT
      " (left out around changes %" G_GUINT64_FORMAT "), wrong %"
      G_GUINT64_FORMAT "\n", checks.entered, checks.checked, checks.skipped,
      checks.wrong);
  printf ("at the end: RSS %.1f MiB, %d fds, %d threads, pinned %.1f MiB, "
      "device %.1f MiB, managed %.1f MiB, system %.1f MiB; plot %s\n",
      last.rss_mib, last.fds, last.threads, last.pinned_mib, last.device_mib,
      last.managed_mib, last.system_mib,
      png ? (o.out + "/soak.png").c_str () : "not written");
  bool failed = false;
  for (const std::string & e:errors) {
    printf ("FAIL: error message: %s\n", e.c_str ());
    failed = true;
  }
  if (checks.wrong) {
    printf ("FAIL: %" G_GUINT64_FORMAT " wrong frames, the first: %s\n",
        checks.wrong, checks.first_wrong.c_str ());
    failed = true;
  }
  if (checks.checked == 0) {
    printf ("FAIL: no frame was checked\n");
    failed = true;
  }
  for (const std::string & g:grew) {
    printf ("FAIL: %s\n", g.c_str ());
    failed = true;
  }
  printf ("%s\n", failed ? "zc-soak: FAIL" : "zc-soak: PASS");
  return failed ? 1 : 0;
}

/* gst-zerocopy: zcfilter (and its neighbours) under conditions users meet
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *  - properties toggled from an application thread while PLAYING: every
 *    frame that comes out is, byte for byte, the output of one setting or
 *    the other (each taken alone, from the same pipeline, beforehand), never
 *    a mix (caps of one setting, pixels of the other, or a torn frame); no
 *    ERROR or WARNING but the CPU fallback's;
 *  - caps fixation: with open output caps zcfilter picks the format, size
 *    and pixel aspect ratio videoconvertscale picks (the oracle runs in the
 *    same test), and draws no black pillars where videoconvertscale has
 *    picture;
 *  - controller bindings (GstInterpolationControlSource) on zcfilter's
 *    properties take effect per frame, as they do on videobalance;
 *  - buffers smaller than their caps (or than their GstVideoMeta says) are
 *    refused with one clear ERROR ("too small"), nothing forwarded, no hang;
 *  - shrinking beyond the converter's 64x limit: nearest-neighbour runs,
 *    bilinear ends in an ERROR that names the limit and the way out, and
 *    open caps negotiate a size within the limit;
 *  - passthrough toggles do not make every renegotiation allocate a new
 *    buffer pool.
 *
 * The race cases run ZC_RACE_SECONDS (a double, default 7.5) each: about
 * 65 s for the whole program, within meson's 300 s (CK_FORK=no: GstCheck's
 * own per-test timeouts are not enforced). Longer races need meson test
 * --timeout-multiplier.
 */
#include "../zccheck.h"

#include <gst/app/app.h>
#include <gst/controller/controller.h>

#include <algorithm>
#include <set>
#include <atomic>

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

/* A static test pattern: every frame the same bytes, with structure in
 * both directions. (pattern=smpte is not static: the bottom right of its
 * lower band is random noise, new in every frame.) smpte-rp-219 is new in
 * GStreamer 1.20; before it, colors (every hue along x, brightness along
 * y) is the static pattern with structure both ways. */
static const gchar *
static_pattern (void)
{
  return zc_test_gst_at_least (1, 20) ? "smpte-rp-219" : "colors";
}

/* The one WARNING a machine without a GPU posts (the CPU fallback) */
#define CPU_FALLBACK_WARNING "No CUDA device: gst-zerocopy runs on its CPU backend"

/* Pops every ERROR and WARNING now on @pipeline's bus, except the CPU
 * fallback warning; appends "ERROR/WARNING from X: text" lines to
 * @problems. Returns how many ERRORs it found. */
static guint
drain_bus (GstElement * pipeline, std::string & problems)
{
  guint errors = 0;
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *m;
  while ((m = gst_bus_pop_filtered (bus,
              (GstMessageType) (GST_MESSAGE_ERROR | GST_MESSAGE_WARNING)))) {
    std::string text = zc_test_message_text (m);
    bool is_error = GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR;
    if (is_error || text.find (CPU_FALLBACK_WARNING) == std::string::npos) {
      problems += std::string (is_error ? "ERROR" : "WARNING") + " from " +
          GST_OBJECT_NAME (GST_MESSAGE_SRC (m)) + ": " + text + "\n";
      errors += is_error;
    }
    gst_message_unref (m);
  }
  gst_object_unref (bus);
  return errors;
}

/* Drops what @log holds (its messages hold their sources): before a
 * failing assertion, which leaves the scope without destructors */
static void
clear_log (ZcBusLog & log)
{
  for (GstMessage * m:log.errors)
    gst_message_unref (m);
  for (GstMessage * m:log.warnings)
    gst_message_unref (m);
  log.errors.clear ();
  log.warnings.clear ();
}

/* The visible bytes of every row of every plane equal (padding and strides
 * left out) */
static bool
frames_equal (GstVideoFrame * a, GstVideoFrame * b)
{
  if (GST_VIDEO_FRAME_FORMAT (a) != GST_VIDEO_FRAME_FORMAT (b) ||
      GST_VIDEO_FRAME_WIDTH (a) != GST_VIDEO_FRAME_WIDTH (b) ||
      GST_VIDEO_FRAME_HEIGHT (a) != GST_VIDEO_FRAME_HEIGHT (b))
    return false;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (a); p++) {
    gsize row_bytes;
    guint rows;
    zc_test_plane_geometry (&a->info, p, &row_bytes, &rows);
    const guint8 *pa = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (a, p);
    const guint8 *pb = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (b, p);
    gint sa = GST_VIDEO_FRAME_PLANE_STRIDE (a, p);
    gint sb = GST_VIDEO_FRAME_PLANE_STRIDE (b, p);
    for (guint y = 0; y < rows; y++) {
      if (memcmp (pa + (gsize) y * sa, pb + (gsize) y * sb, row_bytes) != 0)
        return false;
    }
  }
  return true;
}

static std::string
frame_shape (const GstVideoInfo * info)
{
  gchar *s = g_strdup_printf ("%s %dx%d", gst_video_format_to_string
      (GST_VIDEO_INFO_FORMAT (info)), GST_VIDEO_INFO_WIDTH (info),
      GST_VIDEO_INFO_HEIGHT (info));
  std::string ret (s);
  g_free (s);
  return ret;
}

/* One output frame of a setting, mapped for the whole test */
struct RefFrame
{
  std::string name;
  GstSample *sample = nullptr;
  GstVideoInfo info;
  GstVideoFrame frame;
  bool mapped = false;
  guint64 seen = 0;
  bool required = true;         /* must be seen in the race */

  RefFrame () = default;
  RefFrame (const RefFrame &) = delete;
  RefFrame & operator= (const RefFrame &) = delete;
  /* before a failing assertion: check leaves the scope by longjmp, without
   * running destructors */
  void release ()
  {
    if (mapped)
      gst_video_frame_unmap (&frame);
    mapped = false;
    if (sample)
      gst_sample_unref (sample);
    sample = nullptr;
  }
  ~RefFrame ()
  {
    release ();
  }
};

/* The first frame of @desc (a pipeline ending in "appsink name=sink"):
 * fails the test if none comes within 30 s. */
static void
load_reference (RefFrame & ref, const std::string & name,
    const std::string & desc)
{
  ref.name = name;
  GstElement *p = zc_test_parse (desc.c_str ());
  GstElement *sink = zc_test_get_by_name (p, "sink");
  gst_element_set_state (p, GST_STATE_PLAYING);
  ref.sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
      30 * GST_SECOND);
  std::string problems;
  drain_bus (p, problems);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (p);
  fail_unless (ref.sample != NULL && problems.empty (), "reference '%s': %s "
      "from %s:\n%s", name.c_str (), ref.sample ? "a frame, but" : "no frame",
      desc.c_str (), problems.c_str ());
  fail_unless (gst_video_info_from_caps (&ref.info,
          gst_sample_get_caps (ref.sample)));
  fail_unless (gst_video_frame_map (&ref.frame, &ref.info,
          gst_sample_get_buffer (ref.sample), GST_MAP_READ));
  ref.mapped = true;
}

/* The reference @sample equals (visible bytes, same format and size), or
 * -1. Adds the frame's shape to @shape. */
static gint
match_reference (GstSample * sample, std::vector < RefFrame * >&refs,
    std::string * shape = NULL)
{
  GstVideoInfo info;
  if (!gst_video_info_from_caps (&info, gst_sample_get_caps (sample)))
    return -1;
  if (shape)
    *shape = frame_shape (&info);
  GstVideoFrame f;
  if (!gst_video_frame_map (&f, &info, gst_sample_get_buffer (sample),
          GST_MAP_READ))
    return -1;
  gint found = -1;
  for (gsize i = 0; i < refs.size () && found < 0; i++) {
    if (frames_equal (&refs[i]->frame, &f))
      found = (gint) i;
  }
  gst_video_frame_unmap (&f);
  return found;
}

static gdouble
race_seconds (void)
{
  const gchar *env = g_getenv ("ZC_RACE_SECONDS");
  if (env && *env) {
    gdouble v = g_ascii_strtod (env, NULL);
    if (v > 0.0)
      return v;
  }
  return 7.5;
}

/* ---------------------------------------------------------------------- */
/* 1. Property toggling while PLAYING                                     */
/* ---------------------------------------------------------------------- */

enum RaceKind
{
  RACE_INVERT,
  RACE_BRIGHTNESS,
  RACE_BLUR,
  RACE_EDGES,
  RACE_CROP,
  RACE_DIRECTION,
};

struct RaceCase
{
  const gchar *name;
  const gchar *format;
  RaceKind kind;
  const gchar *props[2];        /* the two settings, for the references */
};

static const RaceCase race_cases[] = {
  {"invert RGBA", "RGBA", RACE_INVERT, {"invert=false", "invert=true"}},
  {"brightness RGBA", "RGBA", RACE_BRIGHTNESS,
      {"brightness=0.0", "brightness=0.3"}},
  {"blur-sigma RGBA", "RGBA", RACE_BLUR, {"blur-sigma=0.0", "blur-sigma=2.0"}},
  {"edges RGBA", "RGBA", RACE_EDGES, {"edges=false", "edges=true"}},
  {"crop RGBA", "RGBA", RACE_CROP, {"crop-left=0 crop-top=0",
          "crop-left=40 crop-top=20"}},
  {"video-direction RGBA", "RGBA", RACE_DIRECTION,
      {"video-direction=identity", "video-direction=90r"}},
  {"invert NV12", "NV12", RACE_INVERT, {"invert=false", "invert=true"}},
  {"brightness NV12", "NV12", RACE_BRIGHTNESS,
      {"brightness=0.0", "brightness=0.3"}},
};

/* Setting @which (0 or 1) of @kind on @f, as an application does */
static void
race_set (GstElement * f, RaceKind kind, int which)
{
  switch (kind) {
    case RACE_INVERT:
      g_object_set (f, "invert", which ? TRUE : FALSE, NULL);
      break;
    case RACE_BRIGHTNESS:
      g_object_set (f, "brightness", which ? 0.3 : 0.0, NULL);
      break;
    case RACE_BLUR:
      g_object_set (f, "blur-sigma", which ? 2.0 : 0.0, NULL);
      break;
    case RACE_EDGES:
      g_object_set (f, "edges", which ? TRUE : FALSE, NULL);
      break;
    case RACE_CROP:
      g_object_set (f, "crop-left", which ? 40 : 0, "crop-top", which ? 20 : 0,
          NULL);
      break;
    case RACE_DIRECTION:
      g_object_set (f, "video-direction", which ?
          GST_VIDEO_ORIENTATION_90R : GST_VIDEO_ORIENTATION_IDENTITY, NULL);
      break;
  }
}

struct Toggler
{
  GstElement *f;
  RaceKind kind;
  std::atomic < bool >stop { false };
  guint64 toggles = 0;
};

static gpointer
toggle_loop (gpointer data)
{
  auto *t = (Toggler *) data;
  int which = 1;
  while (!t->stop.load ()) {
    race_set (t->f, t->kind, which);
    which ^= 1;
    t->toggles++;
    g_thread_yield ();
  }
  return NULL;
}

static std::string
chain_desc (const gchar * format, const gchar * props, bool one_frame)
{
  gchar *s = g_strdup_printf ("videotestsrc pattern=%s"
      " is-live=false%s ! video/x-raw,format=%s,width=320,height=240 ! "
      "zcupload ! zcfilter name=f %s ! zcdownload ! appsink name=sink "
      "sync=false max-buffers=2", static_pattern (),
      one_frame ? " num-buffers=1" : "", format, props);
  std::string ret (s);
  g_free (s);
  return ret;
}

GST_START_TEST (test_race_property_toggle_never_gives_a_wrong_frame)
{
  /* __i__: the case (loop test) */
  const RaceCase & c = race_cases[__i__];
  const gdouble seconds = race_seconds ();

  /* The two settings' outputs; for the crop, also the two settings a
   * frame may catch between the two set_property calls of one
   * g_object_set (crop-left changed, crop-top not yet): those are right
   * frames of a setting that existed, just not required */
  RefFrame refs_store[4];
  std::vector < RefFrame * >refs;
  for (int k = 0; k < 2; k++) {
    load_reference (refs_store[k], c.props[k], chain_desc (c.format,
            c.props[k], true));
    refs.push_back (&refs_store[k]);
  }
  if (c.kind == RACE_CROP) {
    const gchar *mid[] = { "crop-left=40 crop-top=0", "crop-left=0 crop-top=20"
    };
    for (int k = 0; k < 2; k++) {
      load_reference (refs_store[2 + k], mid[k], chain_desc (c.format, mid[k],
              true));
      refs_store[2 + k].required = false;
      refs.push_back (&refs_store[2 + k]);
    }
  }
  /* the two settings must be told apart */
  fail_if (frames_equal (&refs[0]->frame, &refs[1]->frame),
      "%s: the two settings give the same frame", c.name);

  GstElement *p = zc_test_parse (chain_desc (c.format, c.props[0],
          false).c_str ());
  GstElement *f = zc_test_get_by_name (p, "f");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  fail_if (gst_element_set_state (p, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);

  Toggler t;
  t.f = f;
  t.kind = c.kind;
  GThread *thread = g_thread_new ("toggler", toggle_loop, &t);

  guint64 checked = 0, wrong = 0;
  std::string first_wrong, problems;
  std::map < std::string, guint64 > wrong_shapes;
  const gint64 start = g_get_monotonic_time ();
  gint64 end = start + (gint64) (seconds * G_USEC_PER_SEC);
  bool stalled = false;
  while (g_get_monotonic_time () < end) {
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        10 * GST_SECOND);
    if (!s) {
      stalled = true;
      break;
    }
    std::string shape;
    gint k = match_reference (s, refs, &shape);
    checked++;
    if (k < 0) {
      wrong++;
      wrong_shapes[shape]++;
      if (first_wrong.empty ())
        first_wrong = "frame " + std::to_string (checked - 1) + " (" + shape +
            ")";
    } else {
      refs[k]->seen++;
    }
    gst_sample_unref (s);
    if (drain_bus (p, problems) > 0)
      break;
  }
  gdouble elapsed = (g_get_monotonic_time () - start) / 1e6;
  t.stop.store (true);
  g_thread_join (thread);
  drain_bus (p, problems);
  std::string backend = zc_test_stat_string (f, "backend");
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (f);
  gst_object_unref (p);

  std::string per_setting;
  for (RefFrame * r:refs)
    per_setting += " '" + r->name + "' " + std::to_string (r->seen);
  std::string shapes;
  for (auto & kv:wrong_shapes)
    shapes += " " + kv.first + ": " + std::to_string (kv.second);
  g_print ("race %s: %.1f s of %.1f, %" G_GUINT64_FORMAT " toggles, %"
      G_GUINT64_FORMAT " frames checked, per setting:%s, matching none %"
      G_GUINT64_FORMAT "%s%s, zcfilter backend %s\n", c.name, elapsed,
      seconds, t.toggles, checked,
      per_setting.c_str (), wrong, wrong ? " (by shape:" : "",
      wrong ? (shapes + ")").c_str () : "", backend.c_str ());
  std::vector < std::pair < std::string, guint64 > >seen;
  for (RefFrame * r:refs)
    seen.emplace_back (r->required ? r->name : "", r->seen);
  for (RefFrame & r:refs_store)
    r.release ();

  fail_unless (problems.empty (), "%s: the bus reported:\n%s", c.name,
      problems.c_str ());
  fail_if (stalled, "%s: no frame for 10 s after %" G_GUINT64_FORMAT
      " frames", c.name, checked);
  fail_unless (wrong == 0, "%s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
      " frames match neither setting (first: %s; by shape:%s)", c.name, wrong,
      checked, first_wrong.c_str (), shapes.c_str ());
  fail_unless (checked >= 50, "%s: only %" G_GUINT64_FORMAT " frames in %.1f s",
      c.name, checked, seconds);
  for (auto & kv:seen) {
    if (!kv.first.empty ())
      fail_unless (kv.second > 0, "%s: no frame of setting '%s' in %"
          G_GUINT64_FORMAT " frames (per setting:%s)", c.name, kv.first.c_str (),
          checked, per_setting.c_str ());
  }
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* 2. Caps fixation as videoconvertscale does it                          */
/* ---------------------------------------------------------------------- */

struct FixationCase
{
  const gchar *in;              /* input caps */
  const gchar *out;             /* output caps fields (after the media type) */
  bool size_case;               /* check the picture for pillars/letterbox */
};

static const FixationCase fixation_cases[] = {
  {"video/x-raw,format=RGBA,width=640,height=480", "height=[100,200]", true},
  {"video/x-raw,format=RGBA,width=640,height=480", "width=[100,300]", true},
  {"video/x-raw,format=RGBA,width=640,height=480,pixel-aspect-ratio=1/1",
      "width=320", true},
  {"video/x-raw,format=RGBA,width=640,height=480",
      "height=240,pixel-aspect-ratio=[1/2,2/1]", true},
  {"video/x-raw,format=RGBA,width=1920,height=1080",
      "width=[1,1000],height=[1,500]", true},
  {"video/x-raw,format=NV12,width=640,height=480", "format={RGBA,I420}",
      false},
  {"video/x-raw,format=I420,width=640,height=480",
      "format={RGBA,BGRx,NV12}", false},
  {"video/x-raw,format=RGBA,width=640,height=480", "format={NV12,BGRx}",
      false},
  {"video/x-raw,format=GRAY8,width=640,height=480", "format={I420,RGBA}",
      false},
};

struct Negotiated
{
  GstCaps *caps = nullptr;      /* on the element's src pad */
  GstSample *sample = nullptr;  /* the frame at the end */
  std::string problems;

  Negotiated () = default;
  Negotiated (const Negotiated &) = delete;
  Negotiated & operator= (const Negotiated &) = delete;
  void release ()
  {
    gst_clear_caps (&caps);
    if (sample)
      gst_sample_unref (sample);
    sample = nullptr;
  }
  ~Negotiated ()
  {
    release ();
  }
};

/* One frame of "videotestsrc ! @in ! @middle (with an element named f) !
 * capsfilter @out ! @tail ! appsink": f's src caps and the frame */
static void
negotiate (const gchar * in, const gchar * middle, const std::string & out,
    const gchar * tail, Negotiated & n)
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=1 ! "
      "capsfilter name=in ! %s ! capsfilter name=out %s ! appsink name=sink "
      "sync=false", middle, tail);
  GstElement *p = zc_test_parse (desc);
  GstElement *cin = zc_test_get_by_name (p, "in");
  GstElement *cout = zc_test_get_by_name (p, "out");
  GstElement *f = zc_test_get_by_name (p, "f");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  GstCaps *ic = gst_caps_from_string (in);
  GstCaps *oc = gst_caps_from_string (out.c_str ());
  fail_unless (ic && oc, "bad caps %s / %s", in, out.c_str ());
  g_object_set (cin, "caps", ic, NULL);
  g_object_set (cout, "caps", oc, NULL);
  gst_caps_unref (ic);
  gst_caps_unref (oc);

  if (gst_element_set_state (p, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE)
    n.sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        30 * GST_SECOND);
  GstPad *src = gst_element_get_static_pad (f, "src");
  n.caps = gst_pad_get_current_caps (src);
  gst_object_unref (src);
  drain_bus (p, n.problems);
  if (!n.sample)
    n.problems += "no frame reached the sink\n";
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (f);
  gst_object_unref (cout);
  gst_object_unref (cin);
  gst_object_unref (p);
  g_free (desc);
}

static std::string
caps_field (GstCaps * caps, const gchar * field)
{
  if (!caps)
    return "(no caps)";
  const GValue *v = gst_structure_get_value (gst_caps_get_structure (caps, 0),
      field);
  if (!v)
    return "(none)";
  gchar *s = gst_value_serialize (v);
  std::string ret (s ? s : "?");
  g_free (s);
  return ret;
}

/* Whether a border line of an RGBA-ish frame is black: every pixel's R, G
 * and B (or luma for GRAY/YUV) at most 24. @column: a column (x = @pos),
 * else a row (y = @pos). */
static bool
line_is_black (GstVideoFrame * f, bool column, gint pos)
{
  gint w = GST_VIDEO_FRAME_WIDTH (f), h = GST_VIDEO_FRAME_HEIGHT (f);
  gint n = column ? h : w;
  const GstVideoFormatInfo *finfo = f->info.finfo;
  bool rgb = GST_VIDEO_FORMAT_INFO_IS_RGB (finfo);
  for (gint i = 0; i < n; i++) {
    gint x = column ? pos : i, y = column ? i : pos;
    guint comps[3] = { 0, 1, 2 };
    guint ncomp = rgb ? 3 : 1;
    for (guint k = 0; k < ncomp; k++) {
      guint c = comps[k];
      const guint8 *p = (const guint8 *) GST_VIDEO_FRAME_COMP_DATA (f, c) +
          (gsize) y * GST_VIDEO_FRAME_COMP_STRIDE (f, c) +
          (gsize) x * GST_VIDEO_FRAME_COMP_PSTRIDE (f, c);
      /* limited-range luma: black is 16 */
      if (*p > (rgb ? 24 : 40))
        return false;
    }
  }
  return true;
}

GST_START_TEST (test_fixation_matches_videoconvertscale)
{
  /* __i__: the case (loop test) */
  const FixationCase & c = fixation_cases[__i__];
  std::string zc_out = std::string ("video/x-raw(memory:CUDAZeroCopy),") +
      c.out;
  std::string ref_out = std::string ("video/x-raw,") + c.out;
  Negotiated zc, ref;
  /* videoconvertscale is new in GStreamer 1.22, where it took over the code
   * of videoconvert (format) and videoscale (size, pixel aspect ratio),
   * which both became its subclasses. Before 1.22 the same fixation is
   * those two in a row: videoconvert picks the format, videoscale the
   * size. */
  const gchar *oracle = zc_test_gst_at_least (1, 22) ?
      "videoconvertscale name=f" : "videoconvert ! videoscale name=f";
  negotiate (c.in, oracle, ref_out, "", ref);
  fail_unless (ref.caps != NULL && ref.sample != NULL && ref.problems.empty (),
      "%s -> %s: the oracle (videoconvertscale) did not negotiate: %s",
      c.in, ref_out.c_str (), ref.problems.c_str ());
  negotiate (c.in, "zcupload ! zcfilter name=f", zc_out, "! zcdownload", zc);

  gchar *ref_str = gst_caps_to_string (ref.caps);
  gchar *zc_str = zc.caps ? gst_caps_to_string (zc.caps) : g_strdup ("(none)");
  g_print ("fixation %s -> %s: videoconvertscale %s; zcfilter %s\n", c.in,
      c.out, ref_str, zc_str);

  std::string failures;
  if (!zc.caps || !zc.problems.empty ())
    failures += "zcfilter did not negotiate: " + zc.problems;
  else {
    for (const gchar * field: { "format", "width", "height",
          "pixel-aspect-ratio" }) {
      std::string a = caps_field (ref.caps, field);
      std::string b = caps_field (zc.caps, field);
      /* an absent pixel-aspect-ratio means 1/1 */
      if (g_str_equal (field, "pixel-aspect-ratio")) {
        if (a == "(none)")
          a = "1/1";
        if (b == "(none)")
          b = "1/1";
      }
      if (a != b)
        failures += std::string (field) + ": videoconvertscale " + a +
            ", zcfilter " + b + "\n";
    }
  }

  if (c.size_case && zc.sample) {
    GstVideoInfo ri, zi;
    GstVideoFrame rf, zf;
    fail_unless (gst_video_info_from_caps (&ri, gst_sample_get_caps
            (ref.sample)));
    fail_unless (gst_video_info_from_caps (&zi, gst_sample_get_caps
            (zc.sample)));
    fail_unless (gst_video_frame_map (&rf, &ri, gst_sample_get_buffer
            (ref.sample), GST_MAP_READ));
    fail_unless (gst_video_frame_map (&zf, &zi, gst_sample_get_buffer
            (zc.sample), GST_MAP_READ));
    struct
    {
      const gchar *name;
      bool column;
      bool last;
    } edges[] = {
      {"left column", true, false}, {"right column", true, true},
      {"top row", false, false}, {"bottom row", false, true},
    };
    for (auto & e:edges) {
      gint rpos = e.last ? (e.column ? ri.width : ri.height) - 1 : 0;
      gint zpos = e.last ? (e.column ? zi.width : zi.height) - 1 : 0;
      bool rb = line_is_black (&rf, e.column, rpos);
      bool zb = line_is_black (&zf, e.column, zpos);
      if (zb && !rb)
        failures += std::string ("zcfilter's ") + e.name + " is black "
            "(a border) where videoconvertscale's has picture\n";
    }
    gst_video_frame_unmap (&zf);
    gst_video_frame_unmap (&rf);
  }
  zc.release ();
  ref.release ();
  fail_unless (failures.empty (), "%s -> %s: zcfilter fixates differently "
      "from videoconvertscale (%s vs %s):\n%s", c.in, c.out, zc_str, ref_str,
      failures.c_str ());
  g_free (zc_str);
  g_free (ref_str);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* 3. Controller bindings                                                 */
/* ---------------------------------------------------------------------- */

/* brightness 0 at t=0, 0.25 at 100 ms, -0.25 at 200 ms, held in between
 * (the control source's 0..1 maps onto the property's -1..1) */
static void
bind_brightness (GstElement * e)
{
  GstControlSource *cs = gst_interpolation_control_source_new ();
  g_object_set (cs, "mode", GST_INTERPOLATION_MODE_NONE, NULL);
  GstTimedValueControlSource *tv = GST_TIMED_VALUE_CONTROL_SOURCE (cs);
  fail_unless (gst_timed_value_control_source_set (tv, 0, 0.5));
  fail_unless (gst_timed_value_control_source_set (tv, 100 * GST_MSECOND,
          0.625));
  fail_unless (gst_timed_value_control_source_set (tv, 200 * GST_MSECOND,
          0.375));
  fail_unless (gst_object_add_control_binding (GST_OBJECT (e),
          gst_direct_control_binding_new (GST_OBJECT (e), "brightness", cs)),
      "%s: cannot bind brightness", GST_ELEMENT_NAME (e));
  gst_object_unref (cs);
}

#define CONTROLLED_FRAMES 9

/* The 9 frames of "videotestsrc ! @middle (f: the bound element) ! appsink" */
static void
run_controlled (const gchar * middle, std::vector < GstSample * >&out,
    std::string & problems)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=%s"
      " num-buffers=%d ! "
      "video/x-raw,format=RGBA,width=64,height=48,framerate=30/1 ! %s ! "
      "appsink name=sink sync=false", static_pattern (), CONTROLLED_FRAMES,
      middle);
  GstElement *p = zc_test_parse (desc);
  GstElement *f = zc_test_get_by_name (p, "f");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  bind_brightness (f);
  gst_element_set_state (p, GST_STATE_PLAYING);
  for (int i = 0; i < CONTROLLED_FRAMES; i++) {
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        30 * GST_SECOND);
    if (!s)
      break;
    out.push_back (s);
  }
  drain_bus (p, problems);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (f);
  gst_object_unref (p);
  g_free (desc);
}

/* Largest per-byte difference of two RGBA frames (visible pixels) */
static guint
max_rgba_diff (GstSample * a, GstSample * b, gint * at_x, gint * at_y)
{
  GstVideoInfo ia, ib;
  GstVideoFrame fa, fb;
  fail_unless (gst_video_info_from_caps (&ia, gst_sample_get_caps (a)));
  fail_unless (gst_video_info_from_caps (&ib, gst_sample_get_caps (b)));
  fail_unless (GST_VIDEO_INFO_FORMAT (&ia) == GST_VIDEO_INFO_FORMAT (&ib) &&
      ia.width == ib.width && ia.height == ib.height, "%s vs %s",
      frame_shape (&ia).c_str (), frame_shape (&ib).c_str ());
  fail_unless (gst_video_frame_map (&fa, &ia, gst_sample_get_buffer (a),
          GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fb, &ib, gst_sample_get_buffer (b),
          GST_MAP_READ));
  guint max = 0;
  for (gint y = 0; y < ia.height; y++) {
    const guint8 *ra = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fa, 0) +
        (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&fa, 0);
    const guint8 *rb = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fb, 0) +
        (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&fb, 0);
    for (gint x = 0; x < 4 * ia.width; x++) {
      guint d = (guint) ABS ((gint) ra[x] - (gint) rb[x]);
      if (d > max) {
        max = d;
        *at_x = x / 4;
        *at_y = y;
      }
    }
  }
  gst_video_frame_unmap (&fb);
  gst_video_frame_unmap (&fa);
  return max;
}

GST_START_TEST (test_controller_binding_is_honoured)
{
  std::vector < GstSample * >zc, ref;
  std::string zc_problems, ref_problems;
  run_controlled ("videobalance name=f", ref, ref_problems);
  fail_unless (ref.size () == CONTROLLED_FRAMES && ref_problems.empty (),
      "the oracle (videobalance) gave %u frames: %s", (guint) ref.size (),
      ref_problems.c_str ());
  gint x = 0, y = 0;
  /* the oracle itself changes at 100 ms */
  fail_unless (max_rgba_diff (ref[0], ref[3], &x, &y) > 2,
      "videobalance's frame 3 equals its frame 0: the binding is broken");

  run_controlled ("zcupload ! zcfilter name=f ! zcdownload", zc, zc_problems);
  fail_unless (zc.size () == CONTROLLED_FRAMES && zc_problems.empty (),
      "zcfilter gave %u frames: %s", (guint) zc.size (), zc_problems.c_str ());

  /* Brightness on RGBA: 2 code values, as in zcfilter-compare.cpp */
  std::string failures;
  for (int i = 0; i < CONTROLLED_FRAMES; i++) {
    guint d = max_rgba_diff (ref[i], zc[i], &x, &y);
    if (d > 2) {
      gchar *s = g_strdup_printf ("frame %d (t=%.1f ms, brightness %s): "
          "max difference %u at %d,%d\n", i, i * 1000.0 / 30,
          i < 3 ? "0" : (i < 6 ? "0.25" : "-0.25"), d, x, y);
      failures += s;
      g_free (s);
    }
  }
  for (int i = 3; i < CONTROLLED_FRAMES; i++) {
    if (max_rgba_diff (zc[0], zc[i], &x, &y) == 0) {
      failures += "frame " + std::to_string (i) + " (t>=100 ms) equals frame "
          "0: the binding had no effect\n";
    }
  }
  for (GstSample * s:zc)
    gst_sample_unref (s);
  for (GstSample * s:ref)
    gst_sample_unref (s);
  fail_unless (failures.empty (), "zcfilter with a controlled brightness "
      "differs from videobalance (tolerance 2):\n%s", failures.c_str ());
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* 4. Short buffers                                                       */
/* ---------------------------------------------------------------------- */

static GstPadProbeReturn
count_buffers (GstPad *, GstPadProbeInfo *, gpointer user_data)
{
  g_atomic_int_inc ((gint *) user_data);
  return GST_PAD_PROBE_OK;
}

/* A zero-copy buffer of the elements' own context (@ctx): a 64x48 RGBA
 * frame's memory, then resized to @size bytes */
static GstBuffer *
zc_buffer_resized (GstZcContext * ctx, gsize size)
{
  GstAllocator *alloc = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
  fail_unless (alloc != NULL);
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGBA, 64, 48);
  GstMemory *mem = gst_allocator_alloc (alloc, info.size, NULL);
  fail_unless (mem != NULL && gst_is_zc_memory (mem));
  gst_object_unref (alloc);
  GstBuffer *b = gst_buffer_new ();
  gst_buffer_append_memory (b, mem);
  zc_test_fill_random (b, 77);
  gst_buffer_resize (b, 0, size);
  return b;
}

/* Pushes @buffer (taken) into "appsrc caps=@caps ! @chain" (sink named
 * "sink"), the elements sharing @ctx when not NULL; expects one ERROR from
 * a zc element (up, f or down) saying "too small", and no buffer at the
 * sink, within 10 s. */
static void
expect_too_small (const gchar * what, const gchar * caps, const gchar * chain,
    GstBuffer * buffer, GstZcContext * ctx)
{
  gchar *desc = g_strdup_printf ("appsrc name=src format=time ! %s", chain);
  GstElement *p = zc_test_parse (desc);
  GstElement *src = zc_test_get_by_name (p, "src");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  GstCaps *c = gst_caps_from_string (caps);
  g_object_set (src, "caps", c, NULL);
  gst_caps_unref (c);
  gint reached = 0;
  GstPad *sinkpad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_BUFFER, count_buffers,
      &reached, NULL);
  gst_object_unref (sinkpad);
  GstBus *bus = gst_element_get_bus (p);
  if (ctx)
    gst_bus_set_sync_handler (bus, zc_test_give_context, ctx, NULL);

  gint64 t0 = g_get_monotonic_time ();
  ZcBusLog log;
  if (gst_element_set_state (p, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    gst_buffer_unref (buffer);
    zc_test_collect (p, log, GST_SECOND);
  } else {
    GST_BUFFER_PTS (buffer) = 0;
    GST_BUFFER_DURATION (buffer) = GST_SECOND / 30;
    gst_app_src_push_buffer (GST_APP_SRC (src), buffer);
    gst_app_src_end_of_stream (GST_APP_SRC (src));
    zc_test_collect (p, log, 10 * GST_SECOND);
  }
  gdouble secs = (g_get_monotonic_time () - t0) / 1e6;
  std::string text = log.errors.empty ()? "" :
      zc_test_message_text (log.errors[0]);
  const gchar *from = log.errors.empty ()? "" :
      GST_OBJECT_NAME (GST_MESSAGE_SRC (log.errors[0]));
  g_print ("short buffer %s: %s after %.2f s%s%s, %d buffer(s) reached the "
      "sink\n", what, log.errors.empty ()? (log.eos ? "EOS" : "nothing") :
      "ERROR", secs, log.errors.empty ()? "" : (std::string (" from ") + from +
          ": " + text).c_str (), "", g_atomic_int_get (&reached));

  std::string from_s (from);
  gboolean timed_out = log.timed_out, eos = log.eos;
  gboolean errored = !log.errors.empty ();
  gst_element_set_state (p, GST_STATE_NULL);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  gst_object_unref (sink);
  gst_object_unref (src);
  gst_object_unref (p);
  g_free (desc);
  /* the log's messages hold their sources */
  clear_log (log);

  fail_if (timed_out, "%s: neither ERROR nor EOS within 10 s (hang)", what);
  fail_unless (errored, "%s: no ERROR (%s); %d buffer(s) reached the sink",
      what, eos ? "EOS" : "nothing", g_atomic_int_get (&reached));
  fail_unless (from_s == "up" || from_s == "f" || from_s == "down",
      "%s: the first ERROR is from %s, not a zc element: %s", what,
      from_s.c_str (), text.c_str ());
  fail_unless (zc_test_contains_nocase (text, "too small"), "%s: the ERROR "
      "does not say the buffer is too small: %s", what, text.c_str ());
  fail_unless (g_atomic_int_get (&reached) == 0, "%s: %d buffer(s) reached "
      "the sink", what, g_atomic_int_get (&reached));
}

#define RGBA_64x48 "video/x-raw,format=RGBA,width=64,height=48,framerate=30/1"
#define ZC_RGBA_64x48 "video/x-raw(memory:CUDAZeroCopy),format=RGBA,width=64,"\
    "height=48,framerate=30/1"

GST_START_TEST (test_short_system_buffer_refused_by_zcupload)
{
  GstBuffer *b = gst_buffer_new_allocate (NULL, 100, NULL);
  gst_buffer_memset (b, 0, 0x55, 100);
  expect_too_small ("(a) 100-byte system buffer into zcupload", RGBA_64x48,
      "zcupload name=up ! fakesink name=sink", b, NULL);
}

GST_END_TEST;

GST_START_TEST (test_short_zero_copy_buffer_refused_by_zcupload)
{
  /* The elements' own context: a buffer of its memory goes through
   * zcupload without a copy, so only a size check can catch it */
  GstZcContext *ctx = gst_zc_context_new (-1, NULL);
  fail_unless (ctx != NULL);
  expect_too_small ("(b) zero-copy buffer resized to 100 bytes into zcupload",
      RGBA_64x48, "zcupload name=up ! fakesink name=sink",
      zc_buffer_resized (ctx, 100), ctx);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_short_buffer_refused_by_zcfilter)
{
  GstBuffer *b = gst_buffer_new_allocate (NULL, 100, NULL);
  gst_buffer_memset (b, 0, 0x55, 100);
  expect_too_small ("(c) 100-byte buffer with zero-copy caps into zcfilter",
      ZC_RGBA_64x48, "zcfilter name=f invert=true ! zcdownload name=down ! "
      "fakesink name=sink", b, NULL);

  GstZcContext *ctx = gst_zc_context_new (-1, NULL);
  fail_unless (ctx != NULL);
  expect_too_small ("(c) zero-copy buffer resized to 100 bytes into zcfilter",
      ZC_RGBA_64x48, "zcfilter name=f invert=true ! zcdownload name=down ! "
      "fakesink name=sink", zc_buffer_resized (ctx, 100), ctx);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_video_meta_past_the_end_refused_by_zcupload)
{
  /* the right size for the caps, but rows 1024 bytes apart: row 47 would
   * start at 48128, past the 12288 bytes */
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_RGBA, 64, 48);
  GstBuffer *b = gst_buffer_new_allocate (NULL, info.size, NULL);
  gst_buffer_memset (b, 0, 0x55, info.size);
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0 };
  gint stride[GST_VIDEO_MAX_PLANES] = { 1024 };
  gst_buffer_add_video_meta_full (b, GST_VIDEO_FRAME_FLAG_NONE,
      GST_VIDEO_FORMAT_RGBA, 64, 48, 1, offset, stride);
  expect_too_small ("(d) video meta with stride 1024 on a 12288-byte buffer",
      RGBA_64x48, "zcupload name=up ! fakesink name=sink", b, NULL);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* 5. Shrinking beyond the converter's limit                              */
/* ---------------------------------------------------------------------- */

static std::string
shrink_desc (const gchar * method, const gchar * out)
{
  gchar *s = g_strdup_printf ("videotestsrc num-buffers=2 ! "
      "video/x-raw,format=RGBA,width=1920,height=1080 ! zcupload ! "
      "zcfilter name=f method=%s ! capsfilter name=out caps=\"%s\" ! "
      "zcdownload ! fakesink name=sink", method, out);
  std::string ret (s);
  g_free (s);
  return ret;
}

GST_START_TEST (test_shrink_nearest_has_no_limit)
{
  GstElement *p = zc_test_parse (shrink_desc ("nearest-neighbour",
          "video/x-raw(memory:CUDAZeroCopy),width=16,height=9").c_str ());
  ZcBusLog log;
  zc_test_play (p, log, 30 * GST_SECOND);
  gboolean ok = log.eos && log.errors.empty ();
  std::string what = log.describe ();
  clear_log (log);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  fail_unless (ok, "1920x1080 -> 16x9 nearest: %s", what.c_str ());
}

GST_END_TEST;

GST_START_TEST (test_shrink_bilinear_beyond_64_is_a_clear_error)
{
  GstElement *p = zc_test_parse (shrink_desc ("bilinear",
          "video/x-raw(memory:CUDAZeroCopy),width=16,height=9").c_str ());
  GstElement *sink = zc_test_get_by_name (p, "sink");
  gint reached = 0;
  GstPad *sinkpad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_BUFFER, count_buffers,
      &reached, NULL);
  gst_object_unref (sinkpad);
  ZcBusLog log;
  zc_test_play (p, log, 30 * GST_SECOND);
  std::string text = log.errors.empty ()? "" :
      zc_test_message_text (log.errors[0]);
  g_print ("shrink 1920x1080 -> 16x9 bilinear: %s%s; %d buffer(s) reached "
      "the sink\n", log.errors.empty ()? (log.eos ? "EOS" : "nothing") :
      "ERROR: ", text.c_str (), g_atomic_int_get (&reached));
  gboolean timed_out = log.timed_out, eos = log.eos;
  gboolean errored = !log.errors.empty ();
  clear_log (log);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (p);
  fail_if (timed_out, "no ERROR nor EOS within 30 s");
  fail_unless (errored, "1920x1080 -> 16x9 bilinear (120x shrink): no ERROR "
      "(%s, %d buffer(s) reached the sink)", eos ? "EOS" : "nothing",
      g_atomic_int_get (&reached));
  fail_unless (zc_test_contains_nocase (text, "64") &&
      zc_test_contains_nocase (text, "method"), "the ERROR does not name the "
      "64x limit and the method: %s", text.c_str ());
}

GST_END_TEST;

GST_START_TEST (test_shrink_limit_reflected_in_negotiation)
{
  GstElement *p = zc_test_parse (shrink_desc ("bilinear",
          "video/x-raw(memory:CUDAZeroCopy),width=[8,100],height=[8,100]").
      c_str ());
  GstElement *f = zc_test_get_by_name (p, "f");
  ZcBusLog log;
  zc_test_play (p, log, 30 * GST_SECOND);
  GstPad *src = gst_element_get_static_pad (f, "src");
  GstCaps *caps = gst_pad_get_current_caps (src);
  gst_object_unref (src);
  gboolean ok = log.eos && log.errors.empty ();
  std::string what = log.describe ();
  clear_log (log);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (f);
  gst_object_unref (p);
  if (!ok)
    gst_clear_caps (&caps);
  fail_unless (ok, "1920x1080 -> [8,100]x[8,100] bilinear: %s", what.c_str ());
  fail_unless (caps != NULL, "no caps on zcfilter's src pad");
  gint w = 0, h = 0;
  GstStructure *s = gst_caps_get_structure (caps, 0);
  gst_structure_get_int (s, "width", &w);
  gst_structure_get_int (s, "height", &h);
  g_print ("shrink 1920x1080 -> [8,100]x[8,100] bilinear: %dx%d\n", w, h);
  gst_caps_unref (caps);
  fail_unless (w >= 30 && h >= 17, "negotiated %dx%d: more than 64x smaller "
      "than 1920x1080 (at least 30x17)", w, h);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* 6. Pools survive passthrough toggles                                   */
/* ---------------------------------------------------------------------- */

/* The application maps frames through their GstVideoMeta (as
 * gst_video_frame_map does): say so in appsink's answer to the ALLOCATION
 * query, so zcdownload hands on its pool's buffers as they are, whatever
 * their strides */
static GstPadProbeReturn
accept_video_meta (GstPad *, GstPadProbeInfo * info, gpointer)
{
  GstQuery *q = GST_PAD_PROBE_INFO_QUERY (info);
  if (GST_QUERY_TYPE (q) != GST_QUERY_ALLOCATION)
    return GST_PAD_PROBE_OK;
  gst_query_add_allocation_meta (q, GST_VIDEO_META_API_TYPE, NULL);
  return GST_PAD_PROBE_HANDLED;
}

static void
forget_pool (gpointer live, GObject * pool)
{
  static_cast < std::set < GstBufferPool * >*>(live)->erase ((GstBufferPool *)
      pool);
}

/* The race cases toggled here: invert (a table kernel that runs in place
 * on the input buffer, so the output buffers are the input's), blur-sigma
 * (a pass that writes into buffers of the pool zcdownload gave zcfilter)
 * and video-direction (each toggle renegotiates between two caps: the pools
 * made for each are taken again) */
static const guint pool_cases[] = { 0, 2, 5 };

GST_START_TEST (test_pools_survive_passthrough_toggles)
{
  /* __i__: the case (loop test) */
  const RaceCase & c = race_cases[pool_cases[__i__]];
  const gchar *what = c.name;
  RefFrame refs_store[2];
  std::vector < RefFrame * >refs = { &refs_store[0], &refs_store[1] };
  for (int k = 0; k < 2; k++)
    load_reference (refs_store[k], c.props[k], chain_desc (c.format,
            c.props[k], true));

  ZcLeakCheck leaks;
  GstElement *p = zc_test_parse (chain_desc (c.format, c.props[0],
          false).c_str ());
  GstElement *f = zc_test_get_by_name (p, "f");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  GstPad *sinkpad = gst_element_get_static_pad (sink, "sink");
  gst_pad_add_probe (sinkpad, GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM,
      accept_video_meta, NULL, NULL);
  gst_object_unref (sinkpad);
  gst_element_set_state (p, GST_STATE_PLAYING);

  /* Pools seen, without holding them: a reference of ours would keep an
   * element from taking a pool it made back after a renegotiation. A weak
   * reference drops a pool from @live when it is finalized, so a new pool
   * at the same address counts again. */
  std::set < GstBufferPool * >live;
  guint n_pools = 0;
  guint64 frames = 0, wrong = 0, no_pool = 0;
  std::string problems, failure;
  int which = 0;
  for (int toggle = 0; toggle <= 20 && failure.empty (); toggle++) {
    if (toggle > 0) {
      which ^= 1;
      race_set (f, c.kind, which);
    }
    /* at least 3 frames of the new setting */
    int of_setting = 0, pulled = 0;
    while (of_setting < 3 && failure.empty ()) {
      GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
          10 * GST_SECOND);
      if (!s) {
        failure = "no frame for 10 s after toggle " + std::to_string (toggle);
        break;
      }
      frames++;
      pulled++;
      gint k = match_reference (s, refs);
      if (k < 0)
        wrong++;
      else if (k == which)
        of_setting++;
      GstBufferPool *pool = gst_sample_get_buffer (s)->pool;
      if (!pool)
        no_pool++;
      else if (live.insert (pool).second) {
        n_pools++;
        g_object_weak_ref (G_OBJECT (pool), forget_pool, &live);
      }
      gst_sample_unref (s);
      if (pulled > 300)
        failure = std::string (c.props[which]) + " not in effect after 300 "
            "frames (toggle " + std::to_string (toggle) + ")";
    }
    drain_bus (p, problems);
  }
  drain_bus (p, problems);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (f);
  gst_object_unref (p);
  /* (every pool is finalized with the pipeline: @live is empty here) */
  for (GstBufferPool * pool:live)
    g_object_weak_unref (G_OBJECT (pool), forget_pool, &live);
  for (RefFrame & r:refs_store)
    r.release ();

  g_print ("pools over 20 toggles, %s: %u distinct, %" G_GUINT64_FORMAT
      " frames, %" G_GUINT64_FORMAT " without a pool, %" G_GUINT64_FORMAT
      " matching neither setting\n", what, n_pools, frames, no_pool, wrong);
  fail_unless (failure.empty (), "%s: %s", what, failure.c_str ());
  fail_unless (problems.empty (), "%s: the bus reported:\n%s", what,
      problems.c_str ());
  fail_unless (wrong == 0, "%s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
      " frames match neither %s nor %s", what, wrong, frames, c.props[0],
      c.props[1]);
  fail_unless (no_pool == 0, "%s: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
      " frames reached the appsink outside a buffer pool", what, no_pool,
      frames);
  fail_unless (n_pools <= 3, "%s: %u distinct buffer pools over 20 "
      "passthrough toggles (at most 3 expected): each renegotiation "
      "allocated a new one", what, n_pools);

  std::string alive = leaks.alive_objects ();
  fail_unless (alive.empty (), "alive after the pipeline and its pools were "
      "released:\n%s", alive.c_str ());
}

GST_END_TEST;

static Suite *
zcfilter_robust_suite (void)
{
  Suite *s = suite_create ("zcfilter-robust");

  /* 8 race cases of ZC_RACE_SECONDS each, plus their references */
  TCase *race = zc_test_case ("race");
  suite_add_tcase (s, race);
  tcase_set_timeout (race, MAX (120, (gint) (race_seconds () * 4) + 60));
  tcase_add_loop_test (race,
      test_race_property_toggle_never_gives_a_wrong_frame, 0,
      G_N_ELEMENTS (race_cases));

  TCase *tc = zc_test_case ("general");
  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_loop_test (tc, test_fixation_matches_videoconvertscale, 0,
      G_N_ELEMENTS (fixation_cases));
  tcase_add_test (tc, test_controller_binding_is_honoured);
  tcase_add_test (tc, test_short_system_buffer_refused_by_zcupload);
  tcase_add_test (tc, test_short_zero_copy_buffer_refused_by_zcupload);
  tcase_add_test (tc, test_short_buffer_refused_by_zcfilter);
  tcase_add_test (tc, test_video_meta_past_the_end_refused_by_zcupload);
  tcase_add_test (tc, test_shrink_nearest_has_no_limit);
  tcase_add_test (tc, test_shrink_bilinear_beyond_64_is_a_clear_error);
  tcase_add_test (tc, test_shrink_limit_reflected_in_negotiation);
  tcase_add_loop_test (tc, test_pools_survive_passthrough_toggles, 0,
      G_N_ELEMENTS (pool_cases));
  return s;
}

GST_CHECK_MAIN (zcfilter_robust);

/* gst-zerocopy: seeks, trick modes and reverse playback through the elements
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A seekable file (Theora in Matroska, a key frame every 10 frames, made
 * once per program) is decoded on the CPU and goes through one of four
 * chains of our elements:
 *   convert:     I420 to RGBA (zcupload ! zcfilter ! zcdownload);
 *   chain:       three zcfilters (brightness, contrast, saturation);
 *   passthrough: equal caps, no effect;
 *   tee:         a tee whose first branch has our elements, the second a
 *                fakesink;
 * and, as the oracle, through the same pipeline with GStreamer's own
 * elements in their place (videoconvert, videobalance, identity). The same
 * seek is then made on both and what reaches the sink is recorded: every
 * segment (rate, applied rate, start, stop, time, flags), flush, buffer
 * (PTS, duration, DISCONT and GAP), gap and EOS, in order. The two records
 * must be equal: an element that cached a frame or a plan across a seek
 * would send a frame from before a flush after it, or out of order.
 *
 * Seeks made while PAUSED (the pipeline prerolled, then PLAYING to EOS), so
 * that what reaches the sink does not depend on timing: flushing;
 * a segment seek then, at SEGMENT_DONE, a non-flushing one; key-unit trick
 * modes at 2x to 32x; reverse playback; a stop position; a stop update
 * (non-flushing, start unchanged); and a pause in the middle of playback.
 */
#include "../zccheck.h"

#include <glib/gstdio.h>

static gchar *media_dir = NULL;
static gchar *media_path = NULL;

/* 60 frames at 30/1: 2 s; key frames at 0, 10, 20, ... */
static const gint kFrames = 60;

static const gchar *needed_elements[] = {
  "videotestsrc", "theoraenc", "theoradec", "matroskamux", "matroskademux",
  "filesrc", "filesink", "videoconvert", "videobalance", "identity", "tee",
  "queue", "fakesink",
};

static void
make_media (void)
{
  if (media_path)
    return;
  std::string missing;
  for (const gchar * name:needed_elements) {
    GstElementFactory *f = gst_element_factory_find (name);
    if (!f)
      missing += std::string (missing.empty ()? "" : ", ") + name;
    else
      gst_object_unref (f);
  }
  fail_unless (missing.empty (), "missing GStreamer elements: %s "
      "(gstreamer1.0-plugins-base and -good)", missing.c_str ());

  GError *err = NULL;
  media_dir = g_dir_make_tmp ("zc-seeks-XXXXXX", &err);
  fail_unless (media_dir != NULL, "%s", err ? err->message : "?");
  media_path = g_build_filename (media_dir, "seekable.mkv", NULL);
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d "
      "pattern=ball ! video/x-raw,format=I420,width=160,height=120,"
      "framerate=30/1 ! theoraenc keyframe-auto=false keyframe-force=10 "
      "keyframe-freq=10 ! matroskamux ! filesink location=\"%s\"", kFrames,
      media_path);
  GstElement *p = zc_test_parse (desc);
  g_free (desc);
  zc_test_play_to_eos (p);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
}

static void
remove_media (void)
{
  if (media_path)
    g_unlink (media_path);
  if (media_dir)
    g_rmdir (media_dir);
  g_free (media_path);
  g_free (media_dir);
  media_path = media_dir = NULL;
}

/* ---------------------------------------------------------------------- */
/* The chains                                                             */
/* ---------------------------------------------------------------------- */

struct Chain
{
  const gchar *name;
  const gchar *ours;            /* between the decoder and the sink */
  const gchar *oracle;
};

#define SIDE_BRANCH "queue max-size-buffers=0 max-size-bytes=0 " \
  "max-size-time=0 ! fakesink sync=false async=false"

static const Chain chains[] = {
  {"convert",
        "zcupload ! zcfilter ! "
        "video/x-raw(memory:CUDAZeroCopy),format=RGBA ! zcdownload ! "
        "video/x-raw,format=RGBA",
      "videoconvert ! video/x-raw,format=RGBA"},
  {"chain",
        "zcupload ! zcfilter brightness=0.1 ! zcfilter contrast=1.2 ! "
        "zcfilter saturation=0.8 ! zcdownload",
        "videobalance brightness=0.1 ! videobalance contrast=1.2 ! "
      "videobalance saturation=0.8"},
  {"passthrough", "zcupload ! zcfilter ! zcdownload", "identity"},
  /* The side branch never stops the tee and never waits for it: its
   * queue is unbounded (the file is 60 small frames) and its sink does
   * not preroll (async=false). Otherwise, in PAUSED, a full queue in one
   * branch blocks the tee while the other branch's sink waits for a frame
   * to preroll on, in GStreamer's elements as in ours. */
  {"tee", "tee name=t ! queue ! zcupload ! zcfilter invert=true ! "
        "zcdownload ! SINK t. ! " SIDE_BRANCH,
      "tee name=t ! queue ! videobalance contrast=0.5 ! SINK t. ! "
        SIDE_BRANCH},
};

/* What reached the sink, one line per event or buffer. */
struct Record
{
  std::mutex lock;
  std::vector < std::string > lines;

  void add (std::string line)
  {
    std::lock_guard < std::mutex > lk (lock);
    lines.push_back (std::move (line));
  }
  std::vector < std::string > take ()
  {
    std::lock_guard < std::mutex > lk (lock);
    return lines;
  }
};

static std::string
fmt_time (GstClockTime t)
{
  if (!GST_CLOCK_TIME_IS_VALID (t))
    return "none";
  gchar *s = g_strdup_printf ("%" GST_TIME_FORMAT, GST_TIME_ARGS (t));
  std::string out (s);
  g_free (s);
  return out;
}

static GstPadProbeReturn
record_probe (GstPad *, GstPadProbeInfo * info, gpointer user_data)
{
  Record *rec = static_cast < Record * >(user_data);
  if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_BUFFER) {
    GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER (info);
    std::string line = "buffer pts " + fmt_time (GST_BUFFER_PTS (b)) +
        " duration " + fmt_time (GST_BUFFER_DURATION (b));
    if (GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_DISCONT))
      line += " discont";
    if (GST_BUFFER_FLAG_IS_SET (b, GST_BUFFER_FLAG_GAP))
      line += " gap";
    rec->add (line);
    return GST_PAD_PROBE_OK;
  }
  GstEvent *e = GST_PAD_PROBE_INFO_EVENT (info);
  switch (GST_EVENT_TYPE (e)) {
    case GST_EVENT_SEGMENT:{
      const GstSegment *s;
      gst_event_parse_segment (e, &s);
      gchar *line = g_strdup_printf ("segment rate %g applied %g start %s "
          "stop %s time %s base %s flags 0x%x", s->rate, s->applied_rate,
          fmt_time (s->start).c_str (), fmt_time (s->stop).c_str (),
          fmt_time (s->time).c_str (), fmt_time (s->base).c_str (),
          (guint) s->flags);
      rec->add (line);
      g_free (line);
      break;
    }
    case GST_EVENT_GAP:{
      GstClockTime ts, dur;
      gst_event_parse_gap (e, &ts, &dur);
      rec->add ("gap " + fmt_time (ts) + " " + fmt_time (dur));
      break;
    }
    case GST_EVENT_FLUSH_START:
    case GST_EVENT_FLUSH_STOP:
    case GST_EVENT_EOS:
    case GST_EVENT_SEGMENT_DONE:
      rec->add (GST_EVENT_TYPE_NAME (e));
      break;
    default:
      break;
  }
  return GST_PAD_PROBE_OK;
}

/* ---------------------------------------------------------------------- */
/* The scenarios                                                          */
/* ---------------------------------------------------------------------- */

/* One pipeline under test: the file decoded, @middle, a recorded sink. */
struct Run
{
  GstElement *pipeline = NULL;
  std::string middle;
  Record rec;

  Run (const gchar * chain):middle (chain)
  {
    std::string m (middle);
    const std::string sink = "fakesink name=sink sync=false async=true";
    const size_t at = m.find ("SINK");
    if (at != std::string::npos)
      m.replace (at, 4, sink);
    else
      m += " ! " + sink;
    gchar *desc = g_strdup_printf ("filesrc location=\"%s\" ! "
        "matroskademux name=demux ! theoradec name=dec ! %s", media_path,
        m.c_str ());
    pipeline = zc_test_parse (desc);
    g_free (desc);
    GstElement *s = zc_test_get_by_name (pipeline, "sink");
    GstPad *pad = gst_element_get_static_pad (s, "sink");
    gst_pad_add_probe (pad, (GstPadProbeType) (GST_PAD_PROBE_TYPE_BUFFER |
            GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM |
            GST_PAD_PROBE_TYPE_EVENT_FLUSH), record_probe, &rec, NULL);
    gst_object_unref (pad);
    gst_object_unref (s);
  }

  ~Run ()
  {
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (pipeline);
  }

  /* Sets @state and waits until it is reached; fails on an error. */
  void set (GstState state)
  {
    GstStateChangeReturn r = gst_element_set_state (pipeline, state);
    fail_unless (r != GST_STATE_CHANGE_FAILURE, "%s", errors ().c_str ());
    r = gst_element_get_state (pipeline, NULL, NULL, 30 * GST_SECOND);
    fail_unless (r == GST_STATE_CHANGE_SUCCESS ||
        r == GST_STATE_CHANGE_NO_PREROLL, "state %s not reached: %s",
        gst_element_state_get_name (state), errors ().c_str ());
  }

  /* To the recorded sink, not the pipeline: a pipeline sends a seek to
   * each of its sinks, and behind a tee the demuxer then flushes once per
   * branch, the second flush landing wherever the first left the frames. */
  gboolean send_seek (gdouble rate, GstSeekFlags flags,
      GstSeekType start_type, GstClockTime start, GstSeekType stop_type,
      GstClockTime stop)
  {
    GstElement *s = zc_test_get_by_name (pipeline, "sink");
    gboolean ok = gst_element_seek (s, rate, GST_FORMAT_TIME, flags,
        start_type, start, stop_type, stop);
    gst_object_unref (s);
    return ok;
  }

  void seek (gdouble rate, GstSeekFlags flags, GstSeekType start_type,
      GstClockTime start, GstSeekType stop_type, GstClockTime stop)
  {
    fail_unless (send_seek (rate, flags, start_type, start, stop_type, stop),
        "seek refused: rate %g", rate);
    /* a flushing seek prerolls again */
    GstStateChangeReturn r = gst_element_get_state (pipeline, NULL, NULL,
        30 * GST_SECOND);
    fail_unless (r != GST_STATE_CHANGE_FAILURE && r != GST_STATE_CHANGE_ASYNC,
        "no preroll after the seek: %s", errors ().c_str ());
  }

  /* Waits for EOS or SEGMENT_DONE (@until), failing on an error. */
  void wait_for (GstMessageType until)
  {
    GstBus *bus = gst_element_get_bus (pipeline);
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 60 * GST_SECOND,
        (GstMessageType) (until | GST_MESSAGE_ERROR));
    gst_object_unref (bus);
    fail_unless (m != NULL, "timed out waiting for %s",
        gst_message_type_get_name (until));
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
      std::string text = zc_test_message_text (m);
      gst_message_unref (m);
      fail ("error instead of %s: %s", gst_message_type_get_name (until),
          text.c_str ());
    }
    gst_message_unref (m);
  }

  /* The frames the sink has received so far. */
  guint frames ()
  {
    std::vector < std::string > lines = rec.take ();
    return (guint) std::count_if (lines.begin (), lines.end (),
        [](const std::string & l) {
          return l.compare (0, 6, "buffer") == 0;
        });
  }

  std::string errors ()
  {
    ZcBusLog log;
    zc_test_collect (pipeline, log, 0);
    return "(" + middle + ") " + log.describe ();
  }
};

typedef void (*Scenario) (Run & run);

static const GstSeekFlags kFlush = GST_SEEK_FLAG_FLUSH;
static const GstClockTime kMs = GST_MSECOND;

static void
flushing_seek (Run & r)
{
  r.set (GST_STATE_PAUSED);
  r.seek (1.0, kFlush, GST_SEEK_TYPE_SET, 1000 * kMs, GST_SEEK_TYPE_NONE, 0);
  r.set (GST_STATE_PLAYING);
  r.wait_for (GST_MESSAGE_EOS);
}

static void
segment_then_non_flushing_seek (Run & r)
{
  r.set (GST_STATE_PAUSED);
  r.seek (1.0, (GstSeekFlags) (kFlush | GST_SEEK_FLAG_SEGMENT),
      GST_SEEK_TYPE_SET, 400 * kMs, GST_SEEK_TYPE_SET, 900 * kMs);
  r.set (GST_STATE_PLAYING);
  r.wait_for (GST_MESSAGE_SEGMENT_DONE);
  /* non-flushing: queued after what is already on its way */
  fail_unless (r.send_seek (1.0, GST_SEEK_FLAG_NONE, GST_SEEK_TYPE_SET,
          1300 * kMs, GST_SEEK_TYPE_SET, 1700 * kMs));
  r.wait_for (GST_MESSAGE_EOS);
}

static void
trick_mode (Run & r, gdouble rate)
{
  r.set (GST_STATE_PAUSED);
  r.seek (rate, (GstSeekFlags) (kFlush | GST_SEEK_FLAG_TRICKMODE |
          GST_SEEK_FLAG_TRICKMODE_KEY_UNITS), GST_SEEK_TYPE_SET, 0,
      GST_SEEK_TYPE_NONE, 0);
  r.set (GST_STATE_PLAYING);
  r.wait_for (GST_MESSAGE_EOS);
}

static void
reverse_playback (Run & r)
{
  r.set (GST_STATE_PAUSED);
  r.seek (-1.0, kFlush, GST_SEEK_TYPE_SET, 0, GST_SEEK_TYPE_SET, 1500 * kMs);
  r.set (GST_STATE_PLAYING);
  r.wait_for (GST_MESSAGE_EOS);
}

static void
seek_with_stop (Run & r)
{
  r.set (GST_STATE_PAUSED);
  r.seek (1.0, (GstSeekFlags) (kFlush | GST_SEEK_FLAG_ACCURATE),
      GST_SEEK_TYPE_SET, 500 * kMs, GST_SEEK_TYPE_SET, 1200 * kMs);
  r.set (GST_STATE_PLAYING);
  r.wait_for (GST_MESSAGE_EOS);
}

/* The stop update: a non-flushing seek sent to the demuxer from its own
 * streaming thread (its stream lock is recursive) as the decoder pushes
 * the first frame from 600 ms on after the flushing seek, so that it lands
 * at the same frame in every run. From another thread it would wait for
 * the streaming thread, which a PAUSED sink holds, and land wherever
 * playback had got to. Armed by the flush: with a queue downstream, the
 * decoder may have pushed frames past 600 ms before the seek. */
struct StopUpdate
{
  GstElement *demux;
  gboolean armed;               /* after the flush, until the seek is sent */
  gboolean sent;
  gboolean refused;             /* (checked by the test's thread) */
};

static GstPadProbeReturn
update_stop_probe (GstPad *, GstPadProbeInfo * info, gpointer user_data)
{
  StopUpdate *u = static_cast < StopUpdate * >(user_data);
  if (GST_PAD_PROBE_INFO_TYPE (info) & GST_PAD_PROBE_TYPE_EVENT_FLUSH) {
    if (GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) ==
        GST_EVENT_FLUSH_STOP && !u->sent)
      u->armed = TRUE;
    return GST_PAD_PROBE_OK;
  }
  GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER (info);
  if (!u->armed || !GST_CLOCK_TIME_IS_VALID (GST_BUFFER_PTS (b)) ||
      GST_BUFFER_PTS (b) < 600 * GST_MSECOND)
    return GST_PAD_PROBE_OK;
  /* the start stays, the stop moves earlier, nothing is flushed */
  GstEvent *seek = gst_event_new_seek (1.0, GST_FORMAT_TIME,
      GST_SEEK_FLAG_NONE, GST_SEEK_TYPE_NONE, 0, GST_SEEK_TYPE_SET,
      1000 * GST_MSECOND);
  u->armed = FALSE;
  u->sent = TRUE;
  u->refused = !gst_element_send_event (u->demux, seek);
  return GST_PAD_PROBE_OK;
}

static void
stop_update (Run & r)
{
  StopUpdate u = { zc_test_get_by_name (r.pipeline, "demux"), FALSE, FALSE,
    FALSE
  };
  GstElement *dec = zc_test_get_by_name (r.pipeline, "dec");
  GstPad *pad = gst_element_get_static_pad (dec, "src");
  const gulong probe = gst_pad_add_probe (pad, (GstPadProbeType)
      (GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_EVENT_FLUSH),
      update_stop_probe, &u, NULL);
  r.set (GST_STATE_PAUSED);
  r.seek (1.0, kFlush, GST_SEEK_TYPE_SET, 300 * kMs, GST_SEEK_TYPE_SET,
      1800 * kMs);
  r.set (GST_STATE_PLAYING);
  r.wait_for (GST_MESSAGE_EOS);
  gst_pad_remove_probe (pad, probe);
  gst_object_unref (pad);
  gst_object_unref (dec);
  gst_object_unref (u.demux);
  fail_unless (u.sent, "no frame from 600 ms on reached the decoder's pad");
  fail_unless (!u.refused, "the demuxer refused the stop update");
}

static void
pause_and_resume (Run & r)
{
  r.set (GST_STATE_PLAYING);
  const gint64 deadline = g_get_monotonic_time () + 30 * G_TIME_SPAN_SECOND;
  while (r.frames () < 20 && g_get_monotonic_time () < deadline)
    g_usleep (1000);
  r.set (GST_STATE_PAUSED);
  g_usleep (50 * 1000);
  r.set (GST_STATE_PLAYING);
  r.wait_for (GST_MESSAGE_EOS);
}

/* Runs @scenario on the chain's pipeline and on its oracle and compares
 * what their sinks received. */
static void
check_same_as_oracle (const Chain & c, const gchar * what,
    void (*scenario) (Run &, gdouble), gdouble arg)
{
  make_media ();
  std::vector < std::string > got[2];
  for (int k = 0; k < 2; k++) {
    Run run (k == 0 ? c.ours : c.oracle);
    scenario (run, arg);
    got[k] = run.rec.take ();
  }
  const std::vector < std::string > &ours = got[0], &oracle = got[1];
  if (g_getenv ("ZC_TEST_SEEKS_PRINT")) {
    g_print ("== %s, %s: %s\n", c.name, what, c.oracle);
    for (size_t j = 0; j < std::max (ours.size (), oracle.size ()); j++)
      g_print ("  %-60s | %s\n", j < ours.size ()? ours[j].c_str () : "",
          j < oracle.size ()? oracle[j].c_str () : "");
  }
  const guint frames = (guint) std::count_if (oracle.begin (), oracle.end (),
      [](const std::string & l) {
        return l.compare (0, 6, "buffer") == 0;
      });
  fail_unless (frames > 0, "%s, %s: the oracle received no frame", c.name,
      what);
  size_t i = 0;
  while (i < ours.size () && i < oracle.size () && ours[i] == oracle[i])
    i++;
  if (i == ours.size () && i == oracle.size ())
    return;
  std::string ctx;
  for (size_t j = i >= 3 ? i - 3 : 0; j < i; j++)
    ctx += "  both:   " + ours[j] + "\n";
  fail ("%s, %s: what reached the sink differs from %s at line %u of "
      "%u/%u\n%s  ours:   %s\n  oracle: %s", c.name, what, c.oracle,
      (guint) i, (guint) ours.size (), (guint) oracle.size (), ctx.c_str (),
      i < ours.size ()? ours[i].c_str () : "(nothing)",
      i < oracle.size ()? oracle[i].c_str () : "(nothing)");
}

static void
played_through (Run & r)
{
  r.set (GST_STATE_PLAYING);
  r.wait_for (GST_MESSAGE_EOS);
}

#define SCENARIO(fn) [](Run & r, gdouble) { fn (r); }

GST_START_TEST (test_flushing_seek_same_as_oracle)
{
  check_same_as_oracle (chains[__i__], "flushing seek to 1 s",
      SCENARIO (flushing_seek), 0);
}

GST_END_TEST;

GST_START_TEST (test_segment_seek_then_non_flushing_seek_same_as_oracle)
{
  check_same_as_oracle (chains[__i__], "segment seek, then non-flushing",
      SCENARIO (segment_then_non_flushing_seek), 0);
}

GST_END_TEST;

GST_START_TEST (test_key_unit_trick_modes_same_as_oracle)
{
  for (gdouble rate : {2.0, 4.0, 8.0, 16.0, 32.0}) {
    gchar *what = g_strdup_printf ("key-unit trick mode at %gx", rate);
    check_same_as_oracle (chains[__i__], what, trick_mode, rate);
    g_free (what);
  }
}

GST_END_TEST;

GST_START_TEST (test_reverse_playback_same_as_oracle)
{
  check_same_as_oracle (chains[__i__], "rate -1",
      SCENARIO (reverse_playback), 0);
}

GST_END_TEST;

GST_START_TEST (test_seek_with_stop_same_as_oracle)
{
  check_same_as_oracle (chains[__i__], "seek to 0.5 s, stop at 1.2 s",
      SCENARIO (seek_with_stop), 0);
}

GST_END_TEST;

GST_START_TEST (test_stop_update_same_as_oracle)
{
  check_same_as_oracle (chains[__i__], "stop moved from 1.8 s to 1 s",
      SCENARIO (stop_update), 0);
}

GST_END_TEST;

GST_START_TEST (test_pause_and_resume_same_as_oracle)
{
  check_same_as_oracle (chains[__i__], "paused after 20 frames, resumed",
      SCENARIO (pause_and_resume), 0);
  check_same_as_oracle (chains[__i__], "played through",
      SCENARIO (played_through), 0);
}

GST_END_TEST;

static Suite *
seeks_suite (void)
{
  Suite *s = suite_create ("seeks");
  TCase *tc = zc_test_case ("general");
  const gint n = G_N_ELEMENTS (chains);

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 240);
  tcase_add_unchecked_fixture (tc, NULL, remove_media);
  tcase_add_loop_test (tc, test_flushing_seek_same_as_oracle, 0, n);
  tcase_add_loop_test (tc,
      test_segment_seek_then_non_flushing_seek_same_as_oracle, 0, n);
  tcase_add_loop_test (tc, test_key_unit_trick_modes_same_as_oracle, 0, n);
  tcase_add_loop_test (tc, test_reverse_playback_same_as_oracle, 0, n);
  tcase_add_loop_test (tc, test_seek_with_stop_same_as_oracle, 0, n);
  tcase_add_loop_test (tc, test_stop_update_same_as_oracle, 0, n);
  tcase_add_loop_test (tc, test_pause_and_resume_same_as_oracle, 0, n);
  return s;
}

GST_CHECK_MAIN (seeks);

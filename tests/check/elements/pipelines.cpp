/* gst-zerocopy: whole chains, state changes, errors, context sharing, leaks
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Leak checks need the leaks tracer (GST_TRACERS=leaks, set by meson test):
 * per test through its activity tracking, and for the whole program at
 * gst_deinit(), where a leak is a g_warning that GstCheck makes fatal.
 */
#include "../zccheck.h"

#include <gst/app/app.h>

#include <sys/resource.h>

#define CHAIN "videotestsrc num-buffers=5 ! video/x-raw,format=RGBA,width=320,"\
    "height=240 ! zcupload name=up ! zcfilter name=f invert=true ! "\
    "zcdownload name=down ! fakesink name=sink"

/* ---------------------------------------------------------------------- */
/* Chains                                                                 */
/* ---------------------------------------------------------------------- */

GST_START_TEST (test_chain_inverts_without_copies)
{
  /* A solid colour so every output pixel is known. 640 wide: rows of the
   * pool are 128-byte aligned already, so appsink (no GstVideoMeta) needs
   * no repack either. Alpha 0x80, which invert must leave alone. Before
   * GStreamer 1.20, videotestsrc leaks a GstCaps in its fixate function
   * whenever the foreground colour is not opaque (its alpha-only caps are
   * never unreffed; seen on 1.18.4), which the leaks tracer fails the
   * program for: there the colour is opaque, and an alpha of 0xff still
   * shows an inverted alpha (0x00). */
  const guint alpha = zc_test_gst_at_least (1, 20) ? 0x80 : 0xff;
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=10 "
      "pattern=solid-color foreground-color=0x%02x204060 ! "
      "video/x-raw,format=RGBA,width=640,height=480 ! zcupload name=up ! "
      "zcfilter name=f invert=true ! zcdownload name=down ! "
      "appsink name=sink sync=false", alpha);
  GstElement *p = zc_test_parse (desc);
  g_free (desc);
  GstElement *sink = zc_test_get_by_name (p, "sink");
  gst_element_set_state (p, GST_STATE_PLAYING);
  for (int i = 0; i < 10; i++) {
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        30 * GST_SECOND);
    fail_unless (s != NULL, "frame %d missing", i);
    GstVideoInfo info;
    gst_video_info_from_caps (&info, gst_sample_get_caps (s));
    fail_unless_equals_int (GST_VIDEO_INFO_FORMAT (&info),
        GST_VIDEO_FORMAT_RGBA);
    GstVideoFrame f;
    fail_unless (gst_video_frame_map (&f, &info, gst_sample_get_buffer (s),
            GST_MAP_READ));
    gboolean ok = TRUE;
    for (gint y = 0; y < 480 && ok; y++) {
      const guint8 *row = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&f, 0)
          + y * GST_VIDEO_FRAME_PLANE_STRIDE (&f, 0);
      for (gint x = 0; x < 640 && ok; x++)
        ok = row[4 * x] == 255 - 0x20 && row[4 * x + 1] == 255 - 0x40 &&
            row[4 * x + 2] == 255 - 0x60 && row[4 * x + 3] == alpha;
    }
    gst_video_frame_unmap (&f);
    gst_sample_unref (s);
    fail_unless (ok, "frame %d is not the inverted colour", i);
  }
  ZcBusLog log;
  zc_test_collect (p, log, 30 * GST_SECOND);
  fail_unless (log.eos, "%s", log.describe ().c_str ());

  const gchar *names[] = { "up", "f", "down" };
  for (const gchar * n:names) {
    GstElement *e = zc_test_get_by_name (p, n);
    std::string stats = zc_test_stats_to_string (e);
    fail_unless (zc_test_stat (e, "buffers") == 10, "%s: %s", n,
        stats.c_str ());
    fail_unless (zc_test_stat (e, "copied-buffers") == 0, "%s: %s", n,
        stats.c_str ());
    fail_unless (zc_test_stat (e, "bytes-copied") == 0, "%s: %s", n,
        stats.c_str ());
    /* The stats strings are named: fail_unless_equals_string keeps the
     * pointer past the end of the full expression, which would free a
     * temporary std::string */
    std::string backend = zc_test_stat_string (e, "backend");
    fail_unless_equals_string (backend.c_str (), zc_test_expected_backend ());
    if (!zc_test_have_gpu ()) {
      std::string memory_type = zc_test_stat_string (e, "memory-type");
      fail_unless_equals_string (memory_type.c_str (), "system");
      std::string device_name = zc_test_stat_string (e, "device-name");
      fail_unless_equals_string (device_name.c_str (), "CPU");
    } else {
      fail_if (zc_test_stat_string (e, "memory-type") == "system");
    }
    gst_object_unref (e);
  }
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (p);
}

GST_END_TEST;

GST_START_TEST (test_chain_all_formats_through_videoconvert)
{
  /* Each format, negotiated from a converter, to EOS */
  const gchar *formats[] = { ZC_FORMATS (ZC_FORMAT_X_STRING,
        ZC_FORMAT_X_STRING) };
  for (const gchar * fmt:formats) {
    gchar *desc = g_strdup_printf ("videotestsrc num-buffers=3 ! "
        "video/x-raw,width=65,height=33 ! videoconvert ! "
        "video/x-raw,format=%s ! zcupload ! zcfilter gamma=1.5 ! "
        "zcdownload ! videoconvert ! fakesink", fmt);
    GstElement *p = zc_test_parse (desc);
    ZcBusLog log;
    zc_test_play (p, log);
    fail_unless (log.eos && log.errors.empty (), "%s: %s", fmt,
        log.describe ().c_str ());
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
    g_free (desc);
  }
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* State changes and leaks                                                */
/* ---------------------------------------------------------------------- */

GST_START_TEST (test_chain_50_state_cycles_no_leak)
{
  GstElement *p = zc_test_parse (CHAIN);
  /* One cycle first: process-wide singletons (clocks, task pools, cached
   * caps) are created once and are not leaks */
  zc_test_play_to_eos (p);
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (p);

  ZcLeakCheck leaks;
  p = zc_test_parse (CHAIN);
  for (int i = 0; i < 50; i++) {
    ZcBusLog log;
    zc_test_play (p, log);
    fail_unless (log.eos && log.errors.empty (), "cycle %d: %s", i,
        log.describe ().c_str ());
    fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
        GST_STATE_CHANGE_SUCCESS);
  }
  /* 5 buffers a cycle, counters kept or reset, but never more than 250 */
  GstElement *f = zc_test_get_by_name (p, "f");
  guint64 n = zc_test_stat (f, "buffers");
  fail_unless (n == 5 || n == 250 || n == 0, "zcfilter counted %"
      G_GUINT64_FORMAT " buffers", n);
  gst_object_unref (f);
  gst_object_unref (p);

  std::string alive = leaks.alive_objects ();
  fail_unless (alive.empty (), "alive after 50 cycles and unref:\n%s",
      alive.c_str ());
}

GST_END_TEST;

GST_START_TEST (test_elements_every_state_transition)
{
  /* Each element alone, unlinked, through every transition and back */
  const gchar *names[] = { "zcupload", "zcfilter", "zcdownload" };
  const GstState states[] = { GST_STATE_READY, GST_STATE_PAUSED,
    GST_STATE_PLAYING, GST_STATE_PAUSED, GST_STATE_READY, GST_STATE_NULL,
    GST_STATE_PLAYING, GST_STATE_NULL
  };
  for (const gchar * n:names) {
    GstElement *e = gst_element_factory_make (n, NULL);
    for (GstState s:states) {
      GstStateChangeReturn r = gst_element_set_state (e, s);
      fail_unless (r == GST_STATE_CHANGE_SUCCESS ||
          r == GST_STATE_CHANGE_NO_PREROLL || r == GST_STATE_CHANGE_ASYNC,
          "%s to %s: %s", n, gst_element_state_get_name (s),
          gst_element_state_change_return_get_name (r));
    }
    gst_object_unref (e);
  }
}

GST_END_TEST;

#define HELD_CHAIN "videotestsrc num-buffers=20 pattern=solid-color "\
    "foreground-color=0xff102030 ! video/x-raw,format=RGBA,width=256,"\
    "height=64 ! zcupload ! zcfilter invert=true ! zcdownload ! "\
    "appsink name=sink sync=false max-buffers=2 wait-on-eos=false"

GST_START_TEST (test_shutdown_with_buffers_held_downstream)
{
  /* Once through first: what lives for the whole process (clocks, task
   * pools, pad templates) is created then, not counted below */
  GstElement *p = zc_test_parse (HELD_CHAIN);
  GstElement *sink = zc_test_get_by_name (p, "sink");
  g_object_set (sink, "drop", TRUE, NULL);
  zc_test_play_to_eos (p);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (p);

  ZcLeakCheck leaks;
  p = zc_test_parse (HELD_CHAIN);
  sink = zc_test_get_by_name (p, "sink");
  gst_element_set_state (p, GST_STATE_PLAYING);
  std::vector < GstBuffer * >held;
  for (int i = 0; i < 3; i++) {
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        30 * GST_SECOND);
    fail_unless (s != NULL);
    held.push_back (gst_buffer_ref (gst_sample_get_buffer (s)));
    gst_sample_unref (s);
  }
  /* Tear everything down while the application still holds frames */
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (sink);
  gst_object_unref (p);

  /* The frames are still whole and readable */
  for (GstBuffer * b:held) {
    GstMapInfo map;
    fail_unless (gst_buffer_map (b, &map, GST_MAP_READ));
    fail_unless (map.size >= 256 * 64 * 4);
    fail_unless (map.data[0] == 255 - 0x10 && map.data[1] == 255 - 0x20 &&
        map.data[2] == 255 - 0x30 && map.data[3] == 0xff);
    gst_buffer_unmap (b, &map);
  }
  for (GstBuffer * b:held)
    gst_buffer_unref (b);

  /* ... and once released, the memory, pool and context go */
  std::string alive = leaks.alive_objects ();
  fail_unless (alive.empty (), "alive after the last frame was released:\n%s",
      alive.c_str ());
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* Context sharing                                                        */
/* ---------------------------------------------------------------------- */

static GstBusSyncReply
count_zc_have_context (GstBus *, GstMessage * m, gpointer user_data)
{
  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_HAVE_CONTEXT) {
    GstContext *c = NULL;
    gst_message_parse_have_context (m, &c);
    if (g_strcmp0 (gst_context_get_context_type (c), GST_ZC_CONTEXT_TYPE) == 0)
      g_atomic_int_inc ((gint *) user_data);
    gst_context_unref (c);
  }
  return GST_BUS_PASS;
}

static GstZcContext *
element_zc_context (GstElement * pipeline, const gchar * name)
{
  GstElement *e = zc_test_get_by_name (pipeline, name);
  GstContext *c = gst_element_get_context (e, GST_ZC_CONTEXT_TYPE);
  fail_unless (c != NULL, "%s has no %s context", name, GST_ZC_CONTEXT_TYPE);
  GstZcContext *zc = NULL;
  fail_unless (gst_context_get_zc_context (c, &zc));
  gst_context_unref (c);
  gst_object_unref (e);
  return zc;
}

GST_START_TEST (test_context_shared_between_elements)
{
  GstElement *p = zc_test_parse (CHAIN);
  GstBus *bus = gst_element_get_bus (p);
  gint have_context = 0;
  gst_bus_set_sync_handler (bus, count_zc_have_context, &have_context, NULL);
  fail_unless (gst_element_set_state (p,
          GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE);
  fail_unless (gst_element_get_state (p, NULL, NULL,
          30 * GST_SECOND) == GST_STATE_CHANGE_SUCCESS);

  fail_unless_equals_int (g_atomic_int_get (&have_context), 1);
  GstZcContext *up = element_zc_context (p, "up");
  GstZcContext *f = element_zc_context (p, "f");
  GstZcContext *down = element_zc_context (p, "down");
  fail_unless (up == f && f == down, "contexts differ: %p %p %p", up, f, down);
  fail_unless_equals_int (gst_zc_context_has_gpu (up), zc_test_have_gpu ());
  gst_object_unref (up);
  gst_object_unref (f);
  gst_object_unref (down);

  gst_element_set_state (p, GST_STATE_NULL);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
}

GST_END_TEST;

GST_START_TEST (test_context_provided_by_application_is_used)
{
  GstZcContext *app = gst_zc_context_new (-1, NULL);
  GstElement *p = zc_test_parse (CHAIN);
  GstBus *bus = gst_element_get_bus (p);
  gst_bus_set_sync_handler (bus, zc_test_give_context, app, NULL);
  ZcBusLog log;
  zc_test_play (p, log);
  fail_unless (log.eos, "%s", log.describe ().c_str ());
  const gchar *names[] = { "up", "f", "down" };
  for (const gchar * n:names) {
    GstZcContext *c = element_zc_context (p, n);
    fail_unless (c == app, "%s does not use the application's context", n);
    gst_object_unref (c);
  }
  gst_element_set_state (p, GST_STATE_NULL);
  gst_bus_set_sync_handler (bus, NULL, NULL, NULL);
  gst_object_unref (bus);
  gst_object_unref (p);
  gst_object_unref (app);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* Errors and the CPU fallback                                            */
/* ---------------------------------------------------------------------- */

/* @src_desc's output forced into @chain_desc's first element without the
 * link-time caps check, so the elements themselves must refuse the caps
 * while negotiating (gst-launch would already refuse to link them). */
static void
expect_not_negotiated (const gchar * src_desc, const gchar * chain_desc)
{
  gchar *desc = g_strdup_printf ("%s ! capsfilter name=cf  %s", src_desc,
      chain_desc);
  GstElement *p = zc_test_parse (desc);
  GstElement *cf = zc_test_get_by_name (p, "cf");
  GstElement *first = zc_test_get_by_name (p, "first");
  fail_unless (gst_element_link_pads_full (cf, "src", first, "sink",
          GST_PAD_LINK_CHECK_NOTHING));
  gst_object_unref (first);
  gst_object_unref (cf);

  ZcBusLog log;
  zc_test_play (p, log, 30 * GST_SECOND);
  fail_unless (!log.errors.empty (), "%s: no error: %s", desc,
      log.describe ().c_str ());
  GstMessage *m = log.errors[0];
  GQuark domain;
  gint code;
  std::string text = zc_test_message_text (m, &domain, &code);
  const GstStructure *details = NULL;
  gint flow = 0;
  gst_message_parse_error_details (m, &details);
  if (details)
    gst_structure_get_int (details, "flow-return", &flow);
  fail_unless ((domain == GST_STREAM_ERROR || domain == GST_CORE_ERROR) &&
      (flow == GST_FLOW_NOT_NEGOTIATED || code == GST_STREAM_ERROR_FORMAT ||
          code == GST_CORE_ERROR_NEGOTIATION ||
          zc_test_contains_nocase (text, "not-negotiated") ||
          zc_test_contains_nocase (text, "not negotiated")),
      "%s: not a negotiation error: %s", desc, text.c_str ());
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  g_free (desc);
}

/* What gst-launch users see: the link itself is refused */
static void
expect_link_refused (const gchar * desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  fail_unless (err != NULL, "%s: linked", desc);
  fail_unless (g_error_matches (err, GST_PARSE_ERROR, GST_PARSE_ERROR_LINK),
      "%s: %s", desc, err->message);
  g_error_free (err);
  if (p) {
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
  }
}

GST_START_TEST (test_error_not_negotiated_for_unsupported_format)
{
  /* formats outside the 22 every element takes */
  const gchar *ayuv = "videotestsrc num-buffers=2 ! video/x-raw,format=AYUV";
  const gchar *v210 = "videotestsrc num-buffers=2 ! video/x-raw,format=v210";
  expect_not_negotiated (ayuv, "zcupload name=first ! fakesink");
  expect_not_negotiated (v210, "zcupload name=first ! fakesink");
  expect_not_negotiated ("audiotestsrc num-buffers=2",
      "zcupload name=first ! fakesink");
  expect_not_negotiated (ayuv,
      "zcupload name=first ! zcfilter ! zcdownload ! fakesink");

  expect_link_refused ("videotestsrc ! video/x-raw,format=AYUV ! zcupload ! "
      "fakesink");
  expect_link_refused ("audiotestsrc ! zcupload ! fakesink");
  expect_link_refused ("videotestsrc ! zcfilter ! fakesink");
  expect_link_refused ("videotestsrc ! zcdownload ! fakesink");
}

GST_END_TEST;

GST_START_TEST (test_error_huge_frame_is_clear)
{
  const gchar *chains[] = { "zcupload name=e ! fakesink",
    "zcupload ! zcfilter invert=true ! zcdownload ! fakesink",
  };
  for (const gchar * chain:chains) {
    gchar *desc = g_strdup_printf ("appsrc name=src format=time "
        "caps=video/x-raw,format=RGBA,width=100000,height=100000,"
        "framerate=30/1 ! %s", chain);
    GstElement *p = zc_test_parse (desc);
    GstElement *src = zc_test_get_by_name (p, "src");
    fail_unless (gst_element_set_state (p,
            GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
    /* A token buffer makes appsrc push the caps */
    gst_app_src_push_buffer (GST_APP_SRC (src), gst_buffer_new_allocate (NULL,
            16, NULL));
    gst_app_src_end_of_stream (GST_APP_SRC (src));
    ZcBusLog log;
    zc_test_collect (p, log, 30 * GST_SECOND);
    fail_unless (!log.errors.empty (), "%s: no ERROR: %s", chain,
        log.describe ().c_str ());
    GstMessage *m = log.errors[0];
    std::string text = zc_test_message_text (m);
    fail_unless (g_str_has_prefix (GST_OBJECT_NAME (m->src), "zc") ||
        g_str_equal (GST_OBJECT_NAME (m->src), "e"),
        "%s: first error from %s, not a zc element: %s", chain,
        GST_OBJECT_NAME (m->src), text.c_str ());
    fail_unless (zc_test_contains_nocase (text, "too large") ||
        zc_test_contains_nocase (text, "too big"),
        "%s: error does not say the frame is too large: %s", chain,
        text.c_str ());
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (src);
    gst_object_unref (p);
    g_free (desc);
  }
  /* and nothing tried to hold 40 GB */
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  fail_unless (ru.ru_maxrss < 4L * 1024 * 1024, "peak RSS %ld KiB",
      ru.ru_maxrss);
}

GST_END_TEST;

/* The setup error of a chain whose elements cannot get their device */
static void
expect_setup_error (const gchar * props, const gchar * must_mention)
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=3 ! "
      "video/x-raw,format=RGBA,width=64,height=48 ! zcupload name=up %s ! "
      "zcfilter invert=true %s ! zcdownload %s ! fakesink", props, props,
      props);
  GstElement *p = zc_test_parse (desc);
  ZcBusLog log;
  GstStateChangeReturn r = gst_element_set_state (p, GST_STATE_PAUSED);
  zc_test_collect (p, log, 10 * GST_SECOND);
  fail_unless (r == GST_STATE_CHANGE_FAILURE || !log.errors.empty (),
      "%s: the pipeline started", desc);
  fail_unless (!log.errors.empty (), "%s: no ERROR message: %s", desc,
      log.describe ().c_str ());
  GQuark domain;
  std::string text = zc_test_message_text (log.errors[0], &domain);
  fail_unless (domain == GST_RESOURCE_ERROR, "%s: error not in the RESOURCE "
      "domain: %s", desc, text.c_str ());
  fail_unless (g_str_has_prefix (GST_OBJECT_NAME (log.errors[0]->src), "zc") ||
      g_str_equal (GST_OBJECT_NAME (log.errors[0]->src), "up"),
      "%s: error from %s", desc, GST_OBJECT_NAME (log.errors[0]->src));
  if (must_mention)
    fail_unless (zc_test_contains_nocase (text, must_mention),
        "%s: error does not mention '%s': %s", desc, must_mention,
        text.c_str ());
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  g_free (desc);
}

GST_START_TEST (test_error_no_gpu_with_cpu_fallback_false)
{
  if (zc_test_have_gpu ()) {
    /* A GPU host cannot lose its GPU: a device that does not exist is the
     * same user error, and must be as clear */
    gint bad = zc_test_nonexistent_device ();
    gchar *props = g_strdup_printf ("device-id=%d", bad);
    gchar *num = g_strdup_printf ("%d", bad);
    expect_setup_error (props, num);
    g_free (num);
    g_free (props);
    /* and cpu-fallback=false on a GPU host runs */
    GstElement *p = zc_test_parse ("videotestsrc num-buffers=3 ! zcupload "
        "cpu-fallback=false ! zcfilter cpu-fallback=false invert=true ! "
        "zcdownload cpu-fallback=false ! fakesink");
    zc_test_play_to_eos (p);
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
  } else {
    expect_setup_error ("cpu-fallback=false", NULL);
  }
}

GST_END_TEST;

GST_START_TEST (test_error_gpu_memory_types_without_gpu)
{
  const gchar *types[] = { "mapped", "managed" };
  for (const gchar * t:types) {
    gchar *props = g_strdup_printf ("memory-type=%s", t);
    if (zc_test_have_gpu ()) {
      /* On a GPU host both must work, and be what the stats say */
      gchar *desc = g_strdup_printf ("videotestsrc num-buffers=3 ! "
          "video/x-raw,format=NV12,width=64,height=48 ! zcupload name=up %s ! "
          "zcfilter name=f invert=true %s ! zcdownload %s ! fakesink", props,
          props, props);
      GstElement *p = zc_test_parse (desc);
      zc_test_play_to_eos (p);
      GstElement *f = zc_test_get_by_name (p, "f");
      std::string memory_type = zc_test_stat_string (f, "memory-type");
      fail_unless_equals_string (memory_type.c_str (), t);
      std::string backend = zc_test_stat_string (f, "backend");
      fail_unless_equals_string (backend.c_str (), "cuda");
      gst_object_unref (f);
      gst_element_set_state (p, GST_STATE_NULL);
      gst_object_unref (p);
      g_free (desc);
    } else {
      expect_setup_error (props, NULL);
    }
    g_free (props);
  }
}

GST_END_TEST;

GST_START_TEST (test_cpu_fallback_posts_one_warning)
{
  GstElement *p = zc_test_parse (CHAIN);
  ZcBusLog log;
  zc_test_play (p, log);
  fail_unless (log.eos && log.errors.empty (), "%s", log.describe ().c_str ());
  if (zc_test_have_gpu ()) {
    fail_unless (log.warnings.empty (), "warnings on a GPU host: %s",
        log.describe ().c_str ());
  } else {
    fail_unless_equals_int (log.warnings.size (), 1);
    std::string text = zc_test_message_text (log.warnings[0]);
    fail_unless (zc_test_contains_nocase (text, "cpu"),
        "the warning does not say the CPU is used: %s", text.c_str ());
  }
  const gchar *names[] = { "up", "f", "down" };
  for (const gchar * n:names) {
    GstElement *e = zc_test_get_by_name (p, n);
    std::string backend = zc_test_stat_string (e, "backend");
    fail_unless_equals_string (backend.c_str (), zc_test_expected_backend ());
    gst_object_unref (e);
  }
  gst_element_set_state (p, GST_STATE_NULL);

  /* A second run of the same pipeline: still at most one warning per run */
  ZcBusLog again;
  zc_test_play (p, again);
  fail_unless (again.eos, "%s", again.describe ().c_str ());
  fail_unless (again.warnings.size () <= 1, "%s", again.describe ().c_str ());
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
}

GST_END_TEST;

static Suite *
pipelines_suite (void)
{
  Suite *s = suite_create ("pipelines");
  TCase *tc = zc_test_case ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 240);
  tcase_add_test (tc, test_chain_inverts_without_copies);
  tcase_add_test (tc, test_chain_all_formats_through_videoconvert);
  tcase_add_test (tc, test_chain_50_state_cycles_no_leak);
  tcase_add_test (tc, test_elements_every_state_transition);
  tcase_add_test (tc, test_shutdown_with_buffers_held_downstream);
  tcase_add_test (tc, test_context_shared_between_elements);
  tcase_add_test (tc, test_context_provided_by_application_is_used);
  tcase_add_test (tc, test_error_not_negotiated_for_unsupported_format);
  tcase_add_test (tc, test_error_huge_frame_is_clear);
  tcase_add_test (tc, test_error_no_gpu_with_cpu_fallback_false);
  tcase_add_test (tc, test_error_gpu_memory_types_without_gpu);
  tcase_add_test (tc, test_cpu_fallback_posts_one_warning);
  return s;
}

GST_CHECK_MAIN (pipelines);

/* gst-zerocopy: pinned memory as a budget
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the pools hold shows in the elements' stats ("pinned-bytes") and in
 * gst_zc_memory_get_pinned_bytes(); GST_ZC_PINNED_LIMIT (or
 * gst_zc_memory_set_pinned_limit()) caps it for the process. A pipeline
 * whose pool would pass the cap ends in an ERROR from the element that
 * made the pool, naming the bytes asked for, the bytes held, the cap and
 * the way out, while a pipeline that already holds its memory plays on.
 * With a GPU the pools are pinned (mapped) memory; on the CPU backend the
 * cap covers their system memory, which stands in for it, so the same
 * program runs on both.
 */
#include "../zccheck.h"

#include <gst/zerocopy/zerocopy.h>

#include <cstdlib>

static const guint64 kEnvLimit = 3 * 1024 * 1024;

#define SMALL(n) "videotestsrc num-buffers=" n " pattern=ball ! " \
  "video/x-raw,format=RGBA,width=160,height=120 ! "
#define BIG "videotestsrc num-buffers=10 ! " \
  "video/x-raw,format=RGBA,width=1920,height=1080 ! "
#define CHAIN "zcupload name=up ! zcfilter invert=true ! zcdownload ! " \
  "video/x-raw,format=RGBA ! fakesink name=s signal-handoffs=true"

/* The number after @word in @text (0 if none) */
static guint64
number_after (const std::string & text, const gchar * word)
{
  const size_t at = text.find (word);
  if (at == std::string::npos)
    return 0;
  return g_ascii_strtoull (text.c_str () + at + strlen (word), NULL, 10);
}

static void
count_frame (GstElement *, GstBuffer *, GstPad *, gpointer data)
{
  g_atomic_int_inc ((gint *) data);
}

static void
preroll (GstElement * p)
{
  fail_if (gst_element_set_state (p, GST_STATE_PAUSED) ==
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (p, NULL, NULL,
          30 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);
}

/* First, while nothing else has asked: the environment sets the cap */
GST_START_TEST (test_environment_sets_the_cap)
{
  fail_unless_equals_uint64 (gst_zc_memory_get_pinned_limit (), kEnvLimit);
  gst_zc_memory_set_pinned_limit (0);
  fail_unless_equals_uint64 (gst_zc_memory_get_pinned_limit (), 0);
}

GST_END_TEST;

GST_START_TEST (test_stats_report_the_pinned_bytes_of_the_pools)
{
  gst_zc_memory_set_pinned_limit (0);
  const guint64 before = gst_zc_memory_get_pinned_bytes ();
  GstElement *p = zc_test_parse (SMALL ("30") CHAIN);
  preroll (p);
  GstElement *up = zc_test_get_by_name (p, "up");
  const guint64 pool = zc_test_stat (up, "pinned-bytes");
  g_print ("pinned-budget: zcupload's pools hold %" G_GUINT64_FORMAT
      " bytes, the process %" G_GUINT64_FORMAT " (%s backend)\n", pool,
      gst_zc_memory_get_pinned_bytes (), zc_test_expected_backend ());
  /* the pool zcupload proposed holds at least one frame, and the process
   * at least what its pools hold */
  fail_unless (pool >= 160 * 120 * 4, "pinned-bytes %" G_GUINT64_FORMAT,
      pool);
  fail_unless (gst_zc_memory_get_pinned_bytes () >= before + pool);
  gst_object_unref (up);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  /* stopped pipelines give it all back */
  fail_unless_equals_uint64 (gst_zc_memory_get_pinned_bytes (), before);
}

GST_END_TEST;

GST_START_TEST (test_over_the_cap_is_an_error_that_names_the_bytes)
{
  gst_zc_memory_set_pinned_limit (0);
  const guint64 before = gst_zc_memory_get_pinned_bytes ();

  /* the first pipeline holds its memory (prerolled) ... */
  GstElement *first = zc_test_parse (SMALL ("30") CHAIN);
  preroll (first);
  const guint64 held = gst_zc_memory_get_pinned_bytes ();
  fail_unless (held > before);

  /* ... and the cap leaves room for less than one 1080p frame more */
  const guint64 cap = held + 1024 * 1024;
  gst_zc_memory_set_pinned_limit (cap);
  GstElement *second = zc_test_parse (BIG CHAIN);
  ZcBusLog log;
  zc_test_play (second, log, 30 * GST_SECOND);
  fail_if (log.timed_out, "the second pipeline hangs");
  fail_unless (!log.eos && !log.errors.empty (),
      "the second pipeline did not fail: %s", log.describe ().c_str ());
  GstMessage *err = log.errors[0];
  const std::string text = zc_test_message_text (err);
  g_print ("pinned-budget: %s: %s\n", GST_OBJECT_NAME (err->src),
      text.c_str ());
  /* from the element whose pool it is, not the source's "Internal data
   * stream error" */
  fail_unless_equals_string (GST_OBJECT_NAME (err->src), "up");
  const guint64 asked = number_after (text, "allocate ");
  fail_unless (asked >= 1920 * 1080 * 4, "bytes asked for: %s", text.c_str ());
  fail_unless (number_after (text, "holds ") >= held, "bytes held: %s",
      text.c_str ());
  fail_unless (number_after (text, "caps it at ") == cap, "the cap: %s",
      text.c_str ());
  for (const gchar * way : {"GST_ZC_PINNED_LIMIT", "fewer buffers",
          "smaller frames"})
    fail_unless (zc_test_contains_nocase (text, way), "no '%s' in: %s", way,
        text.c_str ());
  /* device memory is a way out where there is a GPU */
  fail_unless_equals_int (zc_test_contains_nocase (text, "memory-type=device"),
      zc_test_have_gpu ());
  gst_element_set_state (second, GST_STATE_NULL);
  gst_object_unref (second);

  /* the first plays on to the end, under the same cap */
  GstElement *s = zc_test_get_by_name (first, "s");
  gint frames = 0;
  g_signal_connect (s, "handoff", G_CALLBACK (count_frame), &frames);
  gst_object_unref (s);
  ZcBusLog log1;
  zc_test_play (first, log1, 30 * GST_SECOND);
  fail_unless (log1.eos && log1.errors.empty (), "%s",
      log1.describe ().c_str ());
  /* the prerolled frame came before the count */
  fail_unless (g_atomic_int_get (&frames) >= 29, "%d frames",
      g_atomic_int_get (&frames));
  gst_element_set_state (first, GST_STATE_NULL);
  gst_object_unref (first);
  gst_zc_memory_set_pinned_limit (0);
  /* nothing of either is left held */
  fail_unless_equals_uint64 (gst_zc_memory_get_pinned_bytes (), before);
}

GST_END_TEST;

static Suite *
pinned_budget_suite (void)
{
  Suite *s = suite_create ("pinned-budget");
  TCase *tc = zc_test_case ("general");
  tcase_set_timeout (tc, 120);
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_environment_sets_the_cap);
  tcase_add_test (tc, test_stats_report_the_pinned_bytes_of_the_pools);
  tcase_add_test (tc, test_over_the_cap_is_an_error_that_names_the_bytes);
  return s;
}

int
main (int argc, char **argv)
{
  /* read at the library's first use of the cap */
  g_setenv ("GST_ZC_PINNED_LIMIT", "3MiB", TRUE);
  gst_check_init (&argc, &argv);
  return gst_check_run_suite (pinned_budget_suite (), "pinned-budget",
      __FILE__);
}

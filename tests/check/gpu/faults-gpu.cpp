/* gst-zerocopy: each CUDA path made to fail, in a pipeline on the GPU
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * With GST_ZC_FAULTS arming one path at a time (every call of it failing,
 * or one call in the middle of the stream), a pipeline that needs that path
 * must end, within the timeout, in one of two ways a user can act on:
 * frames that are right (a fallback: the CPU backend, a copy instead of a
 * registration, counted in stats), or an ERROR on the bus naming what
 * failed. Never a hang, a crash, a wrong frame or a leak (the leaks tracer
 * is on for every program of the suite). None of these paths is a sticky
 * error, so a healthy pipeline after each one runs on the GPU. Exits 77
 * (skipped, for meson) without a usable GPU.
 */
#include "../zccheck.h"

#include <gst/zerocopy/gstzccuda-private.h>

static const GstClockTime kTimeout = 30 * GST_SECOND;

struct Case
{
  const gchar *fault;           /* GST_ZC_FAULTS spec */
  const gchar *pipeline;        /* ends in fakesink name=s */
  const gchar *error_words;     /* in an ERROR, if the pipeline errs */
};

#define SRC "videotestsrc num-buffers=20 pattern=ball ! " \
  "video/x-raw,format=RGBA,width=96,height=64 ! "
#define INVERT "zcfilter invert=true ! zcdownload ! " \
  "video/x-raw,format=RGBA ! fakesink name=s signal-handoffs=true"

static const Case cases[] = {
  /* pinned memory: the pool cannot allocate */
  {"host-alloc:1+", SRC "zcupload memory-type=mapped ! " INVERT, "memory"},
  {"host-alloc:5", SRC "zcupload memory-type=mapped ! " INVERT, "memory"},
  /* device and managed memory */
  {"device-alloc:1+", SRC "zcupload memory-type=device ! " INVERT, "memory"},
  {"device-alloc:1+", SRC "zcupload memory-type=managed ! " INVERT, "memory"},
  /* streams and events at start */
  {"stream:1+", SRC "zcupload ! " INVERT, "stream"},
  {"event:1+", SRC "zcupload ! " INVERT, "event"},
  {"event:3", SRC "zcupload ! " INVERT, "event"},
  /* a launch that fails mid-stream */
  {"launch:1+", SRC "zcupload ! " INVERT, "launch"},
  {"launch:7", SRC "zcupload ! " INVERT, "launch"},
  /* foreign system memory: the registration fails, a copy instead */
  {"host-register:1+", SRC "zcupload adopt=true ! " INVERT, "register"},
  /* a user kernel: compile and load */
  {"nvrtc-compile:1+", SRC "zcupload ! zckernel "
        "location=" ZC_EXAMPLES_KERNEL_DIR "/invert.cu ! "
        "zcdownload ! video/x-raw,format=RGBA ! fakesink name=s "
        "signal-handoffs=true", "NVRTC"},
  {"module-load:1+", SRC "zcupload ! zckernel "
        "location=" ZC_EXAMPLES_KERNEL_DIR "/invert.cu ! "
        "zcdownload ! video/x-raw,format=RGBA ! fakesink name=s "
        "signal-handoffs=true", "load"},
};

/* What reached the sink: frames, and whether every one was the inverse of
 * the source's frame (the CPU reference of videotestsrc ! invert) */
struct Sink
{
  guint frames = 0;
  guint wrong = 0;
};

static void
on_handoff (GstElement *, GstBuffer * buf, GstPad *, gpointer data)
{
  auto *s = (Sink *) data;
  s->frames++;
  /* ball on black: every inverted pixel is 255 - x, so no byte of RGB can
   * be 0 where the source was black, and alpha stays 255 */
  GstMapInfo map;
  if (!gst_buffer_map (buf, &map, GST_MAP_READ)) {
    s->wrong++;
    return;
  }
  gboolean ok = map.data[3] == 255 && map.data[0] == 255 && map.data[1] == 255
      && map.data[2] == 255;    /* the corner pixel: black, inverted */
  gst_buffer_unmap (buf, &map);
  if (!ok)
    s->wrong++;
}

static void
run_case (const Case & c)
{
  fail_unless (gst_zc_fault_set (c.fault), "bad spec %s", c.fault);
  GstElement *p = zc_test_parse (c.pipeline);
  Sink sink;
  GstElement *s = zc_test_get_by_name (p, "s");
  g_signal_connect (s, "handoff", G_CALLBACK (on_handoff), &sink);
  gst_object_unref (s);
  ZcBusLog log;
  zc_test_play (p, log, kTimeout);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
  fail_unless (gst_zc_fault_set (NULL));

  g_print ("faults-gpu: %s: %s, %u frames, %u wrong%s%s\n", c.fault,
      log.eos ? "EOS" : log.errors.empty ()? "neither EOS nor ERROR" : "ERROR",
      sink.frames, sink.wrong, log.errors.empty ()? "" : ": ",
      log.errors.empty ()? "" : zc_test_message_text (log.errors[0]).c_str ());
  fail_if (log.timed_out, "%s: the pipeline did not end within %"
      GST_TIME_FORMAT, c.fault, GST_TIME_ARGS (kTimeout));
  fail_unless_equals_int (sink.wrong, 0);
  if (log.eos) {
    fail_unless_equals_int (sink.frames, 20);
  } else {
    fail_unless (!log.errors.empty (), "%s: no EOS and no ERROR", c.fault);
    gboolean named = FALSE;
    for (GstMessage * m:log.errors)
      named |= zc_test_contains_nocase (zc_test_message_text (m),
          c.error_words);
    fail_unless (named, "%s: no ERROR says '%s': %s", c.fault, c.error_words,
        log.describe ().c_str ());
  }

  /* nothing sticky: the next pipeline runs on the GPU, frames right */
  GstElement *after = zc_test_parse (SRC "zcupload ! zcfilter name=f "
      "invert=true ! zcdownload ! video/x-raw,format=RGBA ! fakesink name=s "
      "signal-handoffs=true");
  Sink sink2;
  s = zc_test_get_by_name (after, "s");
  g_signal_connect (s, "handoff", G_CALLBACK (on_handoff), &sink2);
  gst_object_unref (s);
  ZcBusLog log2;
  zc_test_play (after, log2, kTimeout);
  GstElement *f = zc_test_get_by_name (after, "f");
  std::string backend = zc_test_stat_string (f, "backend");
  gst_object_unref (f);
  gst_element_set_state (after, GST_STATE_NULL);
  gst_object_unref (after);
  fail_unless (log2.eos && sink2.frames == 20 && sink2.wrong == 0,
      "after %s: the next pipeline: %s", c.fault, log2.describe ().c_str ());
  fail_unless (backend == "cuda", "after %s: the next pipeline ran on %s",
      c.fault, backend.c_str ());
}

GST_START_TEST (test_each_path_falls_back_or_says_what_failed)
{
  run_case (cases[__i__]);
}

GST_END_TEST;

static Suite *
faults_gpu_suite (void)
{
  Suite *s = suite_create ("faults-gpu");
  TCase *tc = zc_test_case ("gpu");
  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_loop_test (tc, test_each_path_falls_back_or_says_what_failed, 0,
      G_N_ELEMENTS (cases));
  return s;
}

int
main (int argc, char **argv)
{
  gst_check_init (&argc, &argv);
  if (!zc_test_have_gpu ()) {
    g_print ("faults-gpu: no usable CUDA GPU here; skipped\n");
    return 77;
  }
  return gst_check_run_suite (faults_gpu_suite (), "faults-gpu", __FILE__);
}

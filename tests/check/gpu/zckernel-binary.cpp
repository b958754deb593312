/* gst-zerocopy: zckernel with precompiled kernels, without NVRTC
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * NVRTC is made unfindable (GST_ZC_NVRTC_LIBNAME names a file that does not
 * exist): a source kernel then fails at start with an ERROR that says NVRTC
 * is missing, and kernels built with nvcc (tests/kernels/zckernel/
 * meson.build: examples/kernels/invert.cu as a cubin for this device's
 * architecture and as a fatbin) still run, byte for byte what zcfilter
 * invert=true makes (its CPU reference, which zcfilter's own tests hold it
 * to). Last, a kernel that faults while another pipeline of the process
 * runs: an ERROR, both pipelines end within 5 s saying to restart the
 * process, and the process's CUDA context is lost for good, so a pipeline
 * started after it fails at its start with the same words (or runs on the
 * CPU backend), neither hanging nor crashing. Nothing can run on
 * the GPU after that test: it stays the last one added. Exits 77 (skipped,
 * for meson) without a usable GPU.
 */
#include "../zccheck.h"

#include <gst/app/app.h>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#if GST_ZC_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifndef ZC_TEST_KERNEL_BUILD_DIR
#error "tests/meson.build defines ZC_TEST_KERNEL_BUILD_DIR (the nvcc-built kernels)"
#endif

#define NO_NVRTC "/nonexistent/libnvrtc.so.99"

static const GstClockTime kTimeout = 30 * GST_SECOND;

/* Ends the program when a step outlasts @seconds: a CUDA call that hangs
 * after a fault cannot be interrupted, and meson's timeout would only say
 * "timeout" much later */
class Watchdog
{
public:
  Watchdog (guint seconds, const gchar * what)
  {
    thread_ = std::thread ([this, seconds, what]() {
          std::unique_lock < std::mutex > lk (lock_);
          if (!cond_.wait_for (lk, std::chrono::seconds (seconds),[this] {
                  return done_;})) {
            g_printerr ("zckernel-binary: %s did not finish within %u s: "
                "hung\n", what, seconds);
            _exit (1);
          }
        });
  }
  ~Watchdog ()
  {
    {
      std::lock_guard < std::mutex > lk (lock_);
      done_ = true;
    }
    cond_.notify_all ();
    thread_.join ();
  }
  Watchdog (const Watchdog &) = delete;
  Watchdog & operator= (const Watchdog &) = delete;

private:
  std::mutex lock_;
  std::condition_variable cond_;
  bool done_ = false;
  std::thread thread_;
};

/* A kernel built for this machine's device by the build, or "" (and why in
 * @why) when there is none for its architecture */
static std::string
built_kernel (const gchar * name, std::string * why)
{
  std::string file = name;
  if (g_str_has_suffix (name, "-sm")) {
#if GST_ZC_HAVE_CUDA
    /* the device the elements take with device-id=-1: the first */
    int dev = 0;
    int major = 0, minor = 0;
    fail_unless (cudaDeviceGetAttribute (&major,
            cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
        cudaDeviceGetAttribute (&minor, cudaDevAttrComputeCapabilityMinor,
            dev) == cudaSuccess);
    file += "_" + std::to_string (major * 10 + minor) + ".cubin";
#else
    *why = "built without CUDA";
    return "";
#endif
  }
  gchar *path = g_build_filename (ZC_TEST_KERNEL_BUILD_DIR, file.c_str (),
      NULL);
  std::string s (path);
  g_free (path);
  if (!g_file_test (s.c_str (), G_FILE_TEST_IS_REGULAR)) {
    *why = s + " was not built (meson's cuda-arch does not include this "
        "device's architecture?)";
    return "";
  }
  return s;
}

/* The pipeline's ERRORs: the first one, and those that follow it within a
 * second (several elements may notice one failure) */
static void
collect_errors (GstElement * p, ZcBusLog & log)
{
  zc_test_play (p, log, kTimeout);
  if (log.errors.empty ())
    return;
  GstBus *bus = gst_element_get_bus (p);
  while (GstMessage * m = gst_bus_timed_pop_filtered (bus, GST_SECOND,
          GST_MESSAGE_ERROR))
    log.errors.push_back (m);
  gst_object_unref (bus);
}

GST_START_TEST (test_source_kernel_without_nvrtc_is_an_error)
{
  GstElement *p = zc_test_parse ("videotestsrc num-buffers=3 ! "
      "video/x-raw,format=RGBA,width=64,height=48 ! zcupload ! "
      "zckernel name=k ! zcdownload ! fakesink");
  GstElement *k = zc_test_get_by_name (p, "k");
  g_object_set (k, "source", "#include <gst/zerocopy/zckernel.cuh>\n"
      "ZC_KERNEL (process) { }\n", NULL);
  ZcBusLog log;
  zc_test_play (p, log, kTimeout);
  fail_unless (!log.errors.empty (), "a source kernel started without "
      "NVRTC: %s%s", log.eos ? "EOS\n" : "", log.describe ().c_str ());
  GstMessage *m = log.errors[0];
  fail_unless (GST_MESSAGE_SRC (m) == GST_OBJECT (k), "%s",
      log.describe ().c_str ());
  std::string text = zc_test_message_text (m);
  for (const gchar * needle: { "NVRTC", "libnvrtc" })
    fail_unless (zc_test_contains_nocase (text, needle),
        "the ERROR does not say '%s': %s", needle, text.c_str ());
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (k);
  gst_object_unref (p);
}

GST_END_TEST;


/* Runs videotestsrc's snow through the kernel at @location and checks every
 * frame against zcfilter invert=true's reference */
static void
check_invert_binary (const std::string & location, GstVideoFormat format,
    gint width, gint height)
{
  const guint n_frames = 3;
  gchar *desc = g_strdup_printf ("videotestsrc pattern=snow num-buffers=%u ! "
      "video/x-raw,format=%s,width=%d,height=%d,framerate=30/1 ! "
      "zcupload name=up ! zckernel name=k location=\"%s\" ! zcdownload ! "
      "appsink name=sink sync=false", n_frames,
      gst_video_format_to_string (format), width, height, location.c_str ());
  GstElement *p = zc_test_parse (desc);
  GstElement *up = zc_test_get_by_name (p, "up");
  GstElement *k = zc_test_get_by_name (p, "k");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  std::vector < GstBuffer * >inputs;
  GstPad *pad = gst_element_get_static_pad (up, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER,
      zc_test_probe_keep_copy, &inputs, NULL);
  gst_object_unref (pad);
  const ZcFilterSetting *invert = NULL;
  for (const ZcFilterSetting & s:zc_filter_settings)
    if (g_str_equal (s.name, "invert"))
      invert = &s;
  fail_unless (invert != NULL);

  GstStateChangeReturn r = gst_element_set_state (p, GST_STATE_PLAYING);
  if (r == GST_STATE_CHANGE_FAILURE) {
    ZcBusLog log;
    zc_test_collect (p, log, GST_SECOND);
    fail_unless (FALSE, "%s did not start: %s", desc,
        log.describe ().c_str ());
  }
  for (guint i = 0; i < n_frames; i++) {
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        kTimeout);
    fail_unless (s != NULL, "%s: frame %u did not come out", desc, i);
    fail_unless (i < inputs.size ());
    GstVideoInfo info;
    GstVideoFrame fin, fout;
    fail_unless (gst_video_info_from_caps (&info, gst_sample_get_caps (s)));
    fail_unless (gst_video_frame_map (&fin, &info, inputs[i], GST_MAP_READ));
    fail_unless (gst_video_frame_map (&fout, &info, gst_sample_get_buffer (s),
            GST_MAP_READ));
    gchar *what = g_strdup_printf ("%s, %s %dx%d frame %u", location.c_str (),
        gst_video_format_to_string (format), width, height, i);
    std::string diff = zc_test_check_filter_output (*invert, &fin, &fout,
        what);
    g_free (what);
    gst_video_frame_unmap (&fout);
    gst_video_frame_unmap (&fin);
    gst_sample_unref (s);
    fail_unless (diff.empty (), "%s", diff.c_str ());
  }
  ZcBusLog log;
  zc_test_collect (p, log, kTimeout);
  fail_unless (log.eos, "%s: %s", desc, log.describe ().c_str ());

  std::string stats = zc_test_stats_to_string (k);
  fail_unless (zc_test_stat_string (k, "kernel-origin") == "binary", "%s",
      stats.c_str ());
  fail_unless (zc_test_stat (k, "nvrtc-compiles") == 0, "%s", stats.c_str ());
  fail_unless (zc_test_stat (k, "copied-buffers") == 0, "%s", stats.c_str ());

  gst_element_set_state (p, GST_STATE_NULL);
  for (GstBuffer * b:inputs)
    gst_buffer_unref (b);
  gst_object_unref (sink);
  gst_object_unref (k);
  gst_object_unref (up);
  gst_object_unref (p);
  g_free (desc);
}

GST_START_TEST (test_cubin_for_this_device_runs_without_nvrtc)
{
  std::string why;
  std::string cubin = built_kernel ("invert-sm", &why);
  if (cubin.empty ()) {
    g_print ("zckernel-binary: cubin case skipped: %s\n", why.c_str ());
    return;
  }
  check_invert_binary (cubin, GST_VIDEO_FORMAT_RGBA, 64, 48);
  check_invert_binary (cubin, GST_VIDEO_FORMAT_RGBA, 1920, 1080);
  check_invert_binary (cubin, GST_VIDEO_FORMAT_NV12, 33, 17);
}

GST_END_TEST;

GST_START_TEST (test_fatbin_runs_without_nvrtc)
{
  std::string why;
  std::string fatbin = built_kernel ("invert.fatbin", &why);
  fail_unless (!fatbin.empty (), "%s", why.c_str ());
  check_invert_binary (fatbin, GST_VIDEO_FORMAT_RGBA, 64, 48);
  check_invert_binary (fatbin, GST_VIDEO_FORMAT_I420, 33, 17);
}

GST_END_TEST;

/* PTX for the newest configured architecture: the driver compiles it for
 * the device when the module loads (no NVRTC either) */
GST_START_TEST (test_ptx_runs_without_nvrtc)
{
  std::string why;
  std::string ptx = built_kernel ("invert.ptx", &why);
  fail_unless (!ptx.empty (), "%s", why.c_str ());
  check_invert_binary (ptx, GST_VIDEO_FORMAT_BGRx, 33, 17);
  check_invert_binary (ptx, GST_VIDEO_FORMAT_GRAY8, 64, 48);
}

GST_END_TEST;

/* The last test of the program: after it, CUDA is gone for this process */
GST_START_TEST (test_faulting_kernel_ends_the_pipeline_and_the_context)
{
  std::string why;
  std::string cubin = built_kernel ("fault-sm", &why);
  if (cubin.empty ()) {
    g_print ("zckernel-binary: fault case skipped: %s\n", why.c_str ());
    return;
  }
  Watchdog watchdog (180, "the faulting kernel's test");

  /* a healthy pipeline beside it, in the same process, already running */
  GstElement *healthy = zc_test_parse ("videotestsrc is-live=true "
      "num-buffers=100000 ! video/x-raw,format=RGBA,width=64,height=48,"
      "framerate=100/1 ! zcupload ! zcfilter invert=true ! zcdownload ! "
      "fakesink name=s signal-handoffs=true");
  guint healthy_frames = 0;
  {
    GstElement *s = zc_test_get_by_name (healthy, "s");
    g_signal_connect (s, "handoff", G_CALLBACK (+[](GstElement *, GstBuffer *,
                GstPad *, gpointer n) {
              g_atomic_int_inc ((guint *) n);
            }), &healthy_frames);
    gst_object_unref (s);
  }
  fail_unless (gst_element_set_state (healthy, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  for (int i = 0; i < 500 && g_atomic_int_get (&healthy_frames) < 10; i++)
    g_usleep (10 * 1000);
  fail_unless (g_atomic_int_get (&healthy_frames) >= 10, "the healthy "
      "pipeline did not start: %u frames", healthy_frames);

  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=60 ! "
      "video/x-raw,format=RGBA,width=64,height=48 ! zcupload ! "
      "zckernel name=k location=\"%s\" ! zcdownload ! fakesink",
      cubin.c_str ());
  GstElement *p = zc_test_parse (desc);
  g_free (desc);
  ZcBusLog log;
  collect_errors (p, log);
  const gint64 faulted_at = g_get_monotonic_time ();
  g_print ("zckernel-binary: faulting kernel:\n%s%s", log.eos ? "EOS\n" : "",
      log.describe ().c_str ());
  fail_if (log.timed_out, "the faulting kernel's pipeline did not end within "
      "%" GST_TIME_FORMAT, GST_TIME_ARGS (kTimeout));
  fail_unless (!log.errors.empty (), "a faulting kernel reached EOS");
  gboolean said_faulted = FALSE, said_restart = FALSE;
  for (GstMessage * m:log.errors) {
    said_faulted |= zc_test_contains_nocase (zc_test_message_text (m),
        "faulted");
    said_restart |= zc_test_contains_nocase (zc_test_message_text (m),
        "restart the process");
  }
  fail_unless (said_faulted && said_restart, "no ERROR says the kernel "
      "faulted and the process must restart: %s", log.describe ().c_str ());
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);

  /* the healthy pipeline ends too, within 5 s, saying the same */
  {
    GstBus *bus = gst_element_get_bus (healthy);
    GstMessage *m = gst_bus_timed_pop_filtered (bus, 5 * GST_SECOND,
        (GstMessageType) (GST_MESSAGE_ERROR | GST_MESSAGE_EOS));
    gst_object_unref (bus);
    const double after_s = (g_get_monotonic_time () - faulted_at) / 1e6;
    fail_unless (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR, "the "
        "pipeline beside the faulting one %s within 5 s of the fault",
        m ? "reached EOS" : "did not end");
    std::string text = zc_test_message_text (m);
    g_print ("zckernel-binary: the pipeline beside it, %.2f s after the "
        "fault: %s\n", after_s, text.c_str ());
    fail_unless (zc_test_contains_nocase (text, "restart the process"),
        "the ERROR of the pipeline beside the faulting one does not say to "
        "restart the process: %s", text.c_str ());
    gst_message_unref (m);
    gst_element_set_state (healthy, GST_STATE_NULL);
    gst_object_unref (healthy);
  }

  /* the context is lost for the process: the next pipeline that uses the
   * GPU fails too, and says so, instead of hanging or crashing. (Reaching
   * EOS on the CPU backend would be honest too; on "cuda" it would be
   * frames nobody processed.) */
  p = zc_test_parse ("videotestsrc num-buffers=10 ! "
      "video/x-raw,format=RGBA,width=64,height=48 ! zcupload ! "
      "zcfilter name=f invert=true ! zcdownload ! fakesink name=s "
      "signal-handoffs=true");
  guint after_frames = 0;
  {
    GstElement *s = zc_test_get_by_name (p, "s");
    g_signal_connect (s, "handoff", G_CALLBACK (+[](GstElement *, GstBuffer *,
                GstPad *, gpointer n) {
              g_atomic_int_inc ((guint *) n);
            }), &after_frames);
    gst_object_unref (s);
  }
  ZcBusLog after;
  collect_errors (p, after);
  std::string backend;
  if (after.eos) {
    GstElement *f = zc_test_get_by_name (p, "f");
    backend = zc_test_stat_string (f, "backend");
    gst_object_unref (f);
  }
  g_print ("zckernel-binary: the next pipeline, after the fault:\n%s%s",
      after.eos ? ("EOS on the " + backend + " backend\n").c_str () : "",
      after.describe ().c_str ());
  fail_if (after.timed_out, "a pipeline after the fault did not end within "
      "%" GST_TIME_FORMAT, GST_TIME_ARGS (kTimeout));
  fail_unless (!after.errors.empty () || backend == "cpu", "a pipeline after "
      "the fault reached EOS on the %s backend, whose context is lost",
      backend.c_str ());
  /* at its start: no frame went through it */
  fail_unless (!after.errors.empty () ? after_frames == 0 : TRUE, "the "
      "pipeline after the fault ran %u frames before its ERROR: it should "
      "fail at start", after_frames);
  /* and it says what to do */
  for (GstMessage * m:after.errors)
    fail_unless (zc_test_contains_nocase (zc_test_message_text (m),
            "restart the process"), "the ERROR after the fault does not say "
        "to restart the process: %s", after.describe ().c_str ());
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (p);
}

GST_END_TEST;

static Suite *
zckernel_binary_suite (void)
{
  Suite *s = suite_create ("zckernel-binary");
  TCase *tc = zc_test_case ("gpu");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_source_kernel_without_nvrtc_is_an_error);
  tcase_add_test (tc, test_cubin_for_this_device_runs_without_nvrtc);
  tcase_add_test (tc, test_fatbin_runs_without_nvrtc);
  tcase_add_test (tc, test_ptx_runs_without_nvrtc);
  /* keep last: see above */
  tcase_add_test (tc, test_faulting_kernel_ends_the_pipeline_and_the_context);
  return s;
}

int
main (int argc, char **argv)
{
  /* read once, when zckernel first looks for NVRTC; and a cache of this run
   * (nothing compiles, but nothing should touch the user's either) */
  g_setenv ("GST_ZC_NVRTC_LIBNAME", NO_NVRTC, TRUE);
  gchar *cache = g_dir_make_tmp ("zckernel-cache-XXXXXX", NULL);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  gst_check_init (&argc, &argv);
  int ret;
  if (!zc_test_have_gpu ()) {
    g_print ("zckernel-binary: no usable CUDA GPU here; skipped\n");
    ret = 77;
  } else {
    ret = gst_check_run_suite (zckernel_binary_suite (), "zckernel-binary",
        __FILE__);
  }
  gchar *rm[] = { (gchar *) "rm", (gchar *) "-rf", cache, NULL };
  g_spawn_sync (NULL, rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
      NULL, NULL);
  g_free (cache);
  return ret;
}

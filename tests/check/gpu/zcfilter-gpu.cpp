/* gst-zerocopy: zcfilter's CUDA path with each GPU memory type
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The reference tests of elements/zcfilter.cpp with memory-type forced to
 * mapped and to managed on zcupload and zcfilter. Exits 77 (skipped, for
 * meson) without a usable GPU.
 */
#include "../zccheck.h"

GST_START_TEST (test_filter_matches_cpu_reference_mapped)
{
  zc_test_filter_setting_all_formats ((guint) __i__, "mapped");
}

GST_END_TEST;

GST_START_TEST (test_filter_matches_cpu_reference_managed)
{
  zc_test_filter_setting_all_formats ((guint) __i__, "managed");
}

GST_END_TEST;

GST_START_TEST (test_filter_matches_cpu_reference_device)
{
  /* zcupload copies the frame into device memory with the copy engines,
   * zcfilter works there, the test's map copies it back through staging */
  zc_test_filter_setting_all_formats ((guint) __i__, "device");
}

GST_END_TEST;

GST_START_TEST (test_filter_chain_runs_on_gpu_with_each_memory_type)
{
  const gchar *types[] = { "mapped", "managed" };
  for (const gchar * t:types) {
    gchar *desc = g_strdup_printf ("videotestsrc num-buffers=30 ! "
        "video/x-raw,format=NV12,width=1920,height=1080 ! "
        "zcupload name=up memory-type=%s ! "
        "zcfilter name=f memory-type=%s invert=true gamma=0.7 ! "
        "zcdownload name=down memory-type=%s ! fakesink", t, t, t);
    GstElement *p = zc_test_parse (desc);
    zc_test_play_to_eos (p);
    const gchar *names[] = { "up", "f", "down" };
    for (const gchar * n:names) {
      GstElement *e = zc_test_get_by_name (p, n);
      std::string stats = zc_test_stats_to_string (e);
      fail_unless (zc_test_stat_string (e, "backend") == "cuda", "%s %s: %s",
          t, n, stats.c_str ());
      fail_unless (zc_test_stat_string (e, "memory-type") == t, "%s %s: %s",
          t, n, stats.c_str ());
      fail_unless (zc_test_stat (e, "buffers") == 30, "%s %s: %s", t, n,
          stats.c_str ());
      fail_unless (zc_test_stat (e, "copied-buffers") == 0, "%s %s: %s", t, n,
          stats.c_str ());
      gst_object_unref (e);
    }
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
    g_free (desc);
  }
}

GST_END_TEST;

static Suite *
zcfilter_gpu_suite (void)
{
  Suite *s = suite_create ("zcfilter-gpu");
  TCase *tc = zc_test_case ("gpu");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 600);
  tcase_add_loop_test (tc, test_filter_matches_cpu_reference_mapped, 0,
      ZC_N_FILTER_SETTINGS);
  tcase_add_loop_test (tc, test_filter_matches_cpu_reference_managed, 0,
      ZC_N_FILTER_SETTINGS);
  tcase_add_loop_test (tc, test_filter_matches_cpu_reference_device, 0,
      ZC_N_FILTER_SETTINGS);
  tcase_add_test (tc, test_filter_chain_runs_on_gpu_with_each_memory_type);
  return s;
}

/* GST_CHECK_MAIN cannot report "skipped": exit 77 without a GPU */
int
main (int argc, char **argv)
{
  gst_check_init (&argc, &argv);
  if (!zc_test_have_gpu ()) {
    g_print ("zcfilter-gpu: no usable CUDA GPU here; skipped\n");
    return 77;
  }
  return gst_check_run_suite (zcfilter_gpu_suite (), "zcfilter-gpu",
      __FILE__);
}

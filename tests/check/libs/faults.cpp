/* gst-zerocopy: the fault-injection switch (GST_ZC_FAULTS)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The switch itself, without a GPU: which call of a path it fails, that the
 * other paths go on, what a malformed spec does, and that the environment
 * arms it; and which CUDA errors mark the process's context as lost. What
 * each armed path does to a pipeline needs the CUDA calls themselves: the
 * GPU programs test that.
 */
#include "../zccheck.h"

#include <gst/zerocopy/gstzccuda-private.h>

/* Which of the next @n calls of @path fail, as a string of 0 and 1 */
static std::string
hits (GstZcFaultPath path, int n)
{
  std::string s;
  for (int i = 0; i < n; i++)
    s += gst_zc_fault_hit (path) ? '1' : '0';
  return s;
}

/* The next @n calls of @path fail as @expected says. (The string is kept in
 * a variable: fail_unless_equals_string() copies the pointers it is given
 * into variables of its own and compares them in a later statement, after
 * a temporary string would be gone.) */
#define fail_unless_hits(path, n, expected)                      \
  G_STMT_START {                                                 \
    const std::string got_ = hits (path, n);                     \
    fail_unless_equals_string (got_.c_str (), expected);         \
  } G_STMT_END

/* First: the environment is read once, at the first use of the switch */
GST_START_TEST (test_environment_arms_the_switch)
{
  g_setenv ("GST_ZC_FAULTS", "stream:2, launch:1+", TRUE);
  fail_unless_hits (GST_ZC_FAULT_STREAM, 4, "0100");
  fail_unless_hits (GST_ZC_FAULT_LAUNCH, 3, "111");
  fail_unless_hits (GST_ZC_FAULT_EVENT, 3, "000");
  g_unsetenv ("GST_ZC_FAULTS");
  fail_unless (gst_zc_fault_set (NULL));
  fail_unless_hits (GST_ZC_FAULT_LAUNCH, 2, "00");
}

GST_END_TEST;

GST_START_TEST (test_nth_call_fails_once)
{
  fail_unless (gst_zc_fault_set ("host-alloc:3"));
  fail_unless_hits (GST_ZC_FAULT_HOST_ALLOC, 6, "001000");
  /* the count starts again when the switch is set again */
  fail_unless (gst_zc_fault_set ("host-alloc:1"));
  fail_unless_hits (GST_ZC_FAULT_HOST_ALLOC, 3, "100");
  fail_unless (gst_zc_fault_set (""));
}

GST_END_TEST;

GST_START_TEST (test_plus_fails_every_call_from_nth_on)
{
  fail_unless (gst_zc_fault_set ("device-alloc:2+"));
  fail_unless_hits (GST_ZC_FAULT_DEVICE_ALLOC, 5, "01111");
  fail_unless (gst_zc_fault_set (NULL));
}

GST_END_TEST;

GST_START_TEST (test_other_paths_go_on)
{
  fail_unless (gst_zc_fault_set ("event:1,module-load:1"));
  for (int p = 0; p < GST_ZC_FAULT_N_PATHS; p++) {
    const GstZcFaultPath path = (GstZcFaultPath) p;
    const bool armed = path == GST_ZC_FAULT_EVENT ||
        path == GST_ZC_FAULT_MODULE_LOAD;
    const std::string got = hits (path, 2);
    fail_unless (got == (armed ? "10" : "00"), "path %s: %s",
        gst_zc_fault_path_name (path), got.c_str ());
  }
  fail_unless (gst_zc_fault_set (NULL));
}

GST_END_TEST;

GST_START_TEST (test_every_path_has_a_name)
{
  const gchar *expected[] = { "host-alloc", "host-register", "device-alloc",
    "stream", "event", "launch", "nvrtc-compile", "module-load"
  };
  fail_unless_equals_int (G_N_ELEMENTS (expected), GST_ZC_FAULT_N_PATHS);
  for (int p = 0; p < GST_ZC_FAULT_N_PATHS; p++) {
    fail_unless_equals_string (gst_zc_fault_path_name ((GstZcFaultPath) p),
        expected[p]);
    gchar *spec = g_strdup_printf ("%s:1", expected[p]);
    fail_unless (gst_zc_fault_set (spec), "%s", spec);
    fail_unless (gst_zc_fault_hit ((GstZcFaultPath) p), "%s", spec);
    g_free (spec);
  }
  fail_unless (gst_zc_fault_path_name (GST_ZC_FAULT_N_PATHS) == NULL);
  fail_unless (gst_zc_fault_set (NULL));
}

GST_END_TEST;

GST_START_TEST (test_malformed_spec_arms_nothing)
{
  const gchar *bad[] = { "stream", "stream:", "stream:0", "stream:x",
    "stream:2x", "stream:-1", "streams:1", "stream:1,bogus:2", ":1"
  };
  for (const gchar * spec:bad) {
    fail_unless (gst_zc_fault_set ("event:1"));
    fail_if (gst_zc_fault_set (spec), "'%s' parsed", spec);
    fail_unless (hits (GST_ZC_FAULT_STREAM, 2) == "00", "'%s' armed stream",
        spec);
    fail_unless (hits (GST_ZC_FAULT_EVENT, 2) == "00",
        "'%s' left the earlier spec armed", spec);
  }
  fail_unless (gst_zc_fault_set (NULL));
}

GST_END_TEST;

/* Last: it marks the process's CUDA context as lost, for good */
GST_START_TEST (test_sticky_error_marks_the_context_lost)
{
  /* the kernel faults of CUDA's documentation, runtime and driver alike */
  for (gint code : {700, 702, 710, 714, 715, 716, 717, 718, 719})
    fail_unless (gst_zc_cuda_error_is_sticky (code), "%d", code);
  for (gint code : {0, 1, 2, 98, 101, 209, 999})
    fail_if (gst_zc_cuda_error_is_sticky (code), "%d", code);

  fail_unless (gst_zc_cuda_lost_reason () == NULL);
  gst_zc_cuda_note_error (2, "cudaErrorMemoryAllocation");
  fail_unless (gst_zc_cuda_lost_reason () == NULL);
  gst_zc_cuda_note_error (700, "cudaErrorIllegalAddress");
  fail_unless_equals_string (gst_zc_cuda_lost_reason (),
      "cudaErrorIllegalAddress");
  /* the first cause stays */
  gst_zc_cuda_note_error (719, "cudaErrorLaunchFailure");
  fail_unless_equals_string (gst_zc_cuda_lost_reason (),
      "cudaErrorIllegalAddress");
}

GST_END_TEST;

static Suite *
faults_suite (void)
{
  Suite *s = suite_create ("faults");
  TCase *tc = zc_test_case ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_environment_arms_the_switch);
  tcase_add_test (tc, test_nth_call_fails_once);
  tcase_add_test (tc, test_plus_fails_every_call_from_nth_on);
  tcase_add_test (tc, test_other_paths_go_on);
  tcase_add_test (tc, test_every_path_has_a_name);
  tcase_add_test (tc, test_malformed_spec_arms_nothing);
  tcase_add_test (tc, test_sticky_error_marks_the_context_lost);
  return s;
}

GST_CHECK_MAIN (faults);

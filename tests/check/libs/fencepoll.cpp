/* gst-zerocopy: how long a wait for the GPU polls before it sleeps
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A thread that maps a frame still being worked on waits for its fence:
 * it polls, then sleeps in cudaEventSynchronize, and a sleeping thread is
 * woken tens of microseconds after the GPU is done. The poll's budget
 * (lib/gst/zerocopy/gstzcfencepoll-private.h) is pure arithmetic, checked
 * here on sequences of waits such as a thread sees: what each wait would
 * poll, and whether the poll would have ended it or the thread slept.
 */
#include <gst/check/gstcheck.h>

#include "../../../lib/gst/zerocopy/gstzcfencepoll-private.h"

#include <vector>

using gst_zc::fence_poll_after;
using gst_zc::fence_poll_budget;
using gst_zc::kFencePollMinUs;

namespace {

constexpr int64_t kSpin = 1000;         /* GST_ZC_FENCE_SPIN_US's default */
constexpr int64_t kWakeUs = 60;         /* a sleeping thread woken late */

/* One thread's waits of @gpu_us each (the GPU done that long after the
 * wait began; 0: done before it): how many of them slept; @polled_us, if
 * given, gets the CPU time their polls took */
int
sleeps_over (const std::vector < int64_t > &gpu_us, int64_t * budget,
    int64_t * polled_us = nullptr)
{
  int slept = 0;
  for (int64_t gpu : gpu_us) {
    const int64_t poll = fence_poll_budget (*budget, kSpin);
    const bool sleeps = gpu > poll;
    const int64_t waited = sleeps ? gpu + kWakeUs : gpu;
    *budget = fence_poll_after (*budget, gpu == 0, poll, sleeps, waited,
        kSpin);
    slept += sleeps;
    if (polled_us)
      *polled_us += sleeps ? poll : gpu;
  }
  return slept;
}

}  /* namespace */

GST_START_TEST (test_first_wait_polls_the_whole_spin)
{
  fail_unless_equals_int64 (fence_poll_budget (-1, kSpin), kSpin);
  fail_unless_equals_int64 (fence_poll_budget (-1, 300), 300);
}

GST_END_TEST;

GST_START_TEST (test_waits_within_the_spin_never_sleep)
{
  /* 1080p frames: the GPU done 300-900 us after the map */
  int64_t budget = -1;
  std::vector < int64_t > waits;
  for (int i = 0; i < 600; i++)
    waits.push_back (300 + (i * 37) % 600);
  fail_unless_equals_int (sleeps_over (waits, &budget), 0);
  fail_unless_equals_int64 (budget, kSpin);
}

GST_END_TEST;

GST_START_TEST (test_one_slow_frame_does_not_leave_the_thread_sleeping)
{
  /* 4K frames at 900 us, one of them late (1.5 ms): that one sleeps, and
   * the next, on the halved poll; the 198 after them poll to their end */
  int64_t budget = -1;
  std::vector < int64_t > waits (300, 900);
  waits[100] = 1500;
  fail_unless_equals_int (sleeps_over (waits, &budget), 2);
  fail_unless_equals_int64 (budget, kSpin);

  /* even after a run of late ones */
  std::vector < int64_t > late (20, 3000);
  fail_unless_equals_int (sleeps_over (late, &budget), 20);
  fail_unless (budget < kSpin);
  std::vector < int64_t > again (50, 900);
  fail_unless_equals_int (sleeps_over (again, &budget), 1);
  fail_unless_equals_int64 (budget, kSpin);
}

GST_END_TEST;

GST_START_TEST (test_long_waits_stop_polling)
{
  /* many streams flat out: every wait some milliseconds. The poll halves
   * down to its least, so a wait costs the CPU at most that */
  int64_t budget = -1;
  std::vector < int64_t > waits (40, 4000);
  fail_unless_equals_int (sleeps_over (waits, &budget), 40);
  fail_unless_equals_int64 (fence_poll_budget (budget, kSpin),
      kFencePollMinUs);
  int64_t polled = 0;
  std::vector < int64_t > more (10, 4000);
  fail_unless_equals_int (sleeps_over (more, &budget, &polled), 10);
  fail_unless (polled <= 10 * kFencePollMinUs);
}

GST_END_TEST;

GST_START_TEST (test_frames_done_before_the_map_do_not_restart_the_poll)
{
  /* flat out, frames queued deep: half of them done by the time they are
   * mapped, the others some milliseconds off. The long ones keep the poll
   * at its least; the done ones, which did not poll, leave it there */
  int64_t budget = -1;
  std::vector < int64_t > warm (20, 4000);
  sleeps_over (warm, &budget);
  std::vector < int64_t > waits;
  for (int i = 0; i < 100; i++)
    waits.push_back (i % 2 ? 4000 : 0);
  int64_t polled = 0;
  fail_unless_equals_int (sleeps_over (waits, &budget, &polled), 50);
  fail_unless (polled <= 50 * kFencePollMinUs);
  fail_unless_equals_int64 (fence_poll_budget (budget, kSpin),
      kFencePollMinUs);

  /* and a first wait done at once leaves the thread with no budget yet:
   * its next wait polls the whole spin */
  budget = -1;
  std::vector < int64_t > first { 0 };
  sleeps_over (first, &budget);
  fail_unless_equals_int64 (fence_poll_budget (budget, kSpin), kSpin);
}

GST_END_TEST;

GST_START_TEST (test_poll_budget_stays_within_the_spin)
{
  fail_unless_equals_int64 (fence_poll_budget (5000, kSpin), kSpin);
  fail_unless_equals_int64 (fence_poll_budget (0, kSpin), kFencePollMinUs);
  /* a spin below the least poll is the poll */
  fail_unless_equals_int64 (fence_poll_budget (0, 10), 10);
  fail_unless_equals_int64 (fence_poll_budget (500, 10), 10);
}

GST_END_TEST;

static Suite *
fencepoll_suite (void)
{
  Suite *s = suite_create ("fencepoll");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_first_wait_polls_the_whole_spin);
  tcase_add_test (tc, test_waits_within_the_spin_never_sleep);
  tcase_add_test (tc, test_one_slow_frame_does_not_leave_the_thread_sleeping);
  tcase_add_test (tc, test_long_waits_stop_polling);
  tcase_add_test (tc, test_frames_done_before_the_map_do_not_restart_the_poll);
  tcase_add_test (tc, test_poll_budget_stays_within_the_spin);
  return s;
}

GST_CHECK_MAIN (fencepoll);

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * How long a thread's wait for a fence polls before it sleeps
 * (gst_zc_fence_wait()): the rule alone, pure arithmetic, no CUDA, so that
 * the tests check it on any machine. Not installed.
 *
 * Each thread keeps its own budget. A wait that outlasted the whole spin
 * (polled, slept, and was done only after the spin) halves it, down to
 * kFencePollMinUs, so that where waits are long anyway (many streams flat
 * out) polls stop costing CPU; a wait that the poll ended gives it back
 * whole, so that one slow frame does not leave the thread sleeping, and
 * woken tens of microseconds late, on every frame after it. A fence found
 * done at the first look leaves it as it was: that wait did not poll, and
 * says nothing of how long the next one should (flat out, frames queued
 * deep are often done by the time they are mapped, and each such frame
 * would otherwise hand the next long wait the whole spin to burn).
 */
#pragma once

#include <cstdint>

namespace gst_zc {

constexpr int64_t kFencePollMinUs = 20;

/* The poll of a thread's next wait, in microseconds, from its budget
 * @budget_us (negative: none yet) and the whole spin @spin_us (> 0) */
inline int64_t
fence_poll_budget (int64_t budget_us, int64_t spin_us)
{
  if (budget_us < 0)
    return spin_us;
  const int64_t lo = spin_us < kFencePollMinUs ? spin_us : kFencePollMinUs;
  return budget_us < lo ? lo : (budget_us > spin_us ? spin_us : budget_us);
}

/* The thread's budget after a wait whose fence was done at the first
 * look (@done_at_once), or else polled for up to @polled_us, then slept
 * (@slept) or not, and took @waited_us in all; @budget_us: the budget
 * before it (negative: none yet) */
inline int64_t
fence_poll_after (int64_t budget_us, bool done_at_once, int64_t polled_us,
    bool slept, int64_t waited_us, int64_t spin_us)
{
  if (done_at_once)
    return budget_us;
  return slept && waited_us > spin_us ? polled_us / 2 : spin_us;
}

}  /* namespace gst_zc */

/* gst-zerocopy: the CPU conversion (convert_cpu() and friends).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The CPU backend's executors: a plan from build_plan()
 * (zcconvert-plan.cpp) is offered to the fast routes (zcconvert-fast.h),
 * else run block by block on the worker threads (zcparallel.h).
 */
#include "zcconvert.h"
#include "zcconvert-common.h"
#include "zcconvert-fast.h"
#include "zcparallel.h"

namespace zc {

namespace {

void
run_rows(const detail::Plan &P, int by0, int by1)
{
  for (int by = by0; by < by1; by++) {
    const detail::RowCtx rc = detail::row_ctx(P, by);
    for (int bx = 0; bx < P.blocks_x; bx++)
      detail::convert_block(P, rc, bx, by);
  }
}

/* Below this many output blocks per thread, a thread costs more than it
 * saves. */
constexpr int64_t kMinBlocksPerThread = 16 * 1024;

void
run_blocks(const detail::Plan &P, unsigned n_threads)
{
  const unsigned n = detail::parallel_threads(P.blocks_y, n_threads,
                                              P.blocks_x, kMinBlocksPerThread);
  detail::parallel_rows(P.blocks_y, n, [&P](int begin, int end) {
    run_rows(P, begin, end);
  });
}

/* The fast routes (zcconvert-fast.h), in the order they are offered. */
using FastRoute = bool (*)(const detail::Plan &, unsigned, bool);
struct NamedRoute
{
  const char *name;
  FastRoute route;
};
constexpr NamedRoute kFastRoutes[] = {
  {"repack", detail::fast_repack},
  {"effects", detail::fast_effects},
  {"scale", detail::fast_scale},
  {"planar", detail::fast_planar},
  {"move", detail::fast_move},
};

} // namespace

bool
convert_cpu(const FrameDesc &src, const FrameDesc &dst, const ConvertParams &p,
            unsigned n_threads)
{
  detail::Plan P;
  if (detail::build_plan(src, dst, p, &P) != detail::kPlanOk)
    return false;
  for (const NamedRoute &r : kFastRoutes)
    if (r.route(P, n_threads, true))
      return true;
  run_blocks(P, n_threads);
  return true;
}

bool
effects_chain_cpu(const FrameDesc &src, const FrameDesc &dst,
                  const ConvertParams *steps, int n_steps, unsigned n_threads)
{
  if (!steps || n_steps < 1 || n_steps > kMaxEffectSteps)
    return false;
  detail::Plan P[kMaxEffectSteps];
  for (int i = 0; i < n_steps; i++) {
    /* after the first step, each reads what the one before wrote */
    if (detail::build_plan(i ? dst : src, dst, steps[i], &P[i])
        != detail::kPlanOk)
      return false;
  }
  return detail::fast_effects_steps(P, n_steps, n_threads);
}

bool
convert_cpu_reference(const FrameDesc &src, const FrameDesc &dst,
                      const ConvertParams &p, unsigned n_threads)
{
  detail::Plan P;
  if (detail::build_plan(src, dst, p, &P) != detail::kPlanOk)
    return false;
  run_blocks(P, n_threads);
  return true;
}

const char *
convert_cpu_route(const FrameDesc &src, const FrameDesc &dst,
                  const ConvertParams &p)
{
  detail::Plan P;
  if (detail::build_plan(src, dst, p, &P) != detail::kPlanOk)
    return nullptr;
  for (const NamedRoute &r : kFastRoutes)
    if (r.route(P, 1, false))
      return r.name;
  return "blocks";
}

} // namespace zc

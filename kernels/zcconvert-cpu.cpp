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

/* The fast routes (zcconvert-fast.h), in the order they are offered;
 * with_effects names one that runs a plan with point effects it does not
 * take itself, followed by them (route_then_effects()). */
using FastRoute = bool (*)(const detail::Plan &, unsigned, bool);
struct NamedRoute
{
  const char *name;
  const char *with_effects;
  FastRoute route;
};
constexpr NamedRoute kFastRoutes[] = {
  {"repack", "repack+effects", detail::fast_repack},
  {"effects", nullptr, detail::fast_effects}, /* (effects alone) */
  {"scale", "scale+effects", detail::fast_scale},
  {"planar", "planar+effects", detail::fast_planar},
  {"move", "move+effects", detail::fast_move},
};

/* A plan with point effects that no route takes: the route that takes it
 * without them (*Q, P with fx.active cleared), whose output the effects
 * then run on in place (effects_after_run()), which gives the bytes of
 * the per-block code. Null when there is none. */
const NamedRoute *
route_then_effects(const detail::Plan &P, detail::Plan *Q)
{
  if (!P.fx.active || !detail::effects_after_takes(P))
    return nullptr;
  *Q = P;
  Q->fx.active = 0;
  for (const NamedRoute &r : kFastRoutes)
    if (r.with_effects && r.route(*Q, 1, false))
      return &r;
  return nullptr;
}

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
  detail::Plan Q;
  if (const NamedRoute *r = route_then_effects(P, &Q)) {
    /* (the tables first: a route that ran could not be taken back) */
    const detail::EffectsAfter *fx = detail::effects_after_prepare(P);
    if (fx && r->route(Q, n_threads, true)) {
      detail::effects_after_run(*fx, n_threads);
      return true;
    }
  }
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
  detail::Plan Q;
  if (const NamedRoute *r = route_then_effects(P, &Q))
    return r->with_effects;
  return "blocks";
}

} // namespace zc

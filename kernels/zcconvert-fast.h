/* gst-zerocopy: the CPU backend's fast routes through a conversion plan.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Private to kernels/. convert_cpu() builds the plan (zcconvert-common.h)
 * and, before running convert_block() on every output block, offers it to
 * these routes in turn. Each one handles a family of common requests with
 * loops written for the CPU (per row, per plane, tables, separable
 * filters) and must write exactly the bytes convert_block() writes for
 * them: the per-block code stays the reference (the CUDA kernels run it),
 * and tests/kernels/fast-route-check.h (check_route(), in each route's
 * test-fast-*.cpp) runs both on random frames.
 *
 * Each route: with run == false, only whether it takes the plan; with
 * run == true, the conversion itself on n_threads threads (0 = all cores)
 * where it takes the plan, else nothing. Returns whether it takes it.
 */
#ifndef GST_ZC_KERNELS_CONVERT_FAST_H
#define GST_ZC_KERNELS_CONVERT_FAST_H

#include "zcconvert.h"
#include "zcconvert-common.h"

namespace zc {
namespace detail {

/* The whole source to the whole destination of the same size: no crop,
 * orientation, scaling or placement. */
inline bool
plan_moves_nothing(const Plan &P)
{
  return P.cx == 0 && P.cy == 0 && P.cw == P.sw && P.ch == P.sh
         && P.orient == 0 && P.rx == 0 && P.ry == 0 && P.sw == P.dw
         && P.sh == P.dh && P.rw == P.dw && P.rh == P.dh;
}

/* The same kind, depth and byte layout (a format and itself) */
inline bool
same_format(const FmtInfo &a, const FmtInfo &b)
{
  return a.kind == b.kind && a.bits == b.bits && a.pstride == b.pstride
         && a.ws == b.ws && a.hs == b.hs && a.wide10 == b.wide10
         && a.off[0] == b.off[0] && a.off[1] == b.off[1] && a.off[2] == b.off[2]
         && a.off[3] == b.off[3];
}

/* Packed R'G'B' to packed R'G'B' (and a format to itself), and between
 * the 8-bit 4:2:0 layouts with the same colour, same size, nothing moved,
 * no effects: bytes permuted (zcconvert-fast.cpp). */
bool fast_repack(const Plan &P, unsigned n_threads, bool run);

/* Point effects alone on a frame of one format and size, nothing moved
 * (zcfilter's brightness, contrast, saturation, hue, grayscale, gamma,
 * invert): per row with tables (zceffects-fast.cpp). */
bool fast_effects(const Plan &P, unsigned n_threads, bool run);

/* effects_chain_cpu(): steps[0] from its source into its destination, then
 * each next step on that destination, in one pass. False (nothing written)
 * unless every step is one fast_effects() takes, on frames of one format
 * and size. */
bool fast_effects_steps(const Plan *steps, int n, unsigned n_threads);

/* The point effects of a conversion, run on its destination's picture in
 * place once a route has stored it without them (that route ran P with
 * fx.active cleared): convert_block() hands effects_pixel() and
 * effects_chroma() the values it then stores, so where a stored sample is
 * that value (8-bit formats, GRAY16) the same tables give its bytes.
 * Also for a picture on chroma-block boundaries only (the blocks whose
 * first pixel it holds, which convert_block() runs through the effects,
 * are then whole blocks of the picture). zceffects-fast.cpp. */
struct EffectsAfter;

/* Whether effects_after_prepare() takes P's effects. */
bool effects_after_takes(const Plan &P);

/* The effects of P made ready on the calling thread (their tables built
 * or found in its caches): valid until the thread's next call, for
 * effects_after_rows() and effects_after_run() on any thread meanwhile.
 * Null when effects_after_takes() says no, or without memory. */
const EffectsAfter *effects_after_prepare(const Plan &P);

/* The effects on the picture's part of destination block rows [b0, b1)
 * (rows of chroma blocks; of pixels in 4:4:4 and 4:2:2 formats), which a
 * route has just stored. */
void effects_after_rows(const EffectsAfter &e, int b0, int b1);

/* The effects on the whole picture, on n_threads threads (0 = all). */
void effects_after_run(const EffectsAfter &e, unsigned n_threads);

/* Scaling of 8-bit frames with the linear filter, and conversions of
 * 8-bit frames at the same size: a separable pass per axis into exact
 * integer sums, then the colour step and the store, and the point effects
 * on each band of rows just stored (effects_after_rows()), while it is
 * still in the cache (zcscale-fast.cpp). */
bool fast_scale(const Plan &P, unsigned n_threads, bool run);

/* Same-format bilinear and bicubic scaling plane by plane, as videoscale
 * (PlanarPlan::scale): each axis's taps once, each pass once per row
 * (zcplanar-fast.cpp). */
bool fast_planar(const Plan &P, unsigned n_threads, bool run);

/* Same-format requests that only move samples (orientation, crop,
 * nearest scaling): a gather per row through two tables a plane
 * (zcmove-fast.cpp). */
bool fast_move(const Plan &P, unsigned n_threads, bool run);

} // namespace detail
} // namespace zc

#endif /* GST_ZC_KERNELS_CONVERT_FAST_H */

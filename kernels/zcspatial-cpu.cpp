/* gst-zerocopy: the CPU spatial effects (spatial_cpu()).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The CPU backend's executor: a plan from spatial_plan()
 * (zcspatial-plan.cpp), each pass's layers run by rows on the worker
 * threads (zcparallel.h).
 */
#include "zcspatial.h"
#include "zcparallel.h"
#include "zcspatial-common.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace zc {

namespace {

using detail::SpLayer;
using detail::SpPass;
using detail::SpPlan;
using detail::SpTaps;

/* Rows [y0, y1) of a blur or sharpen layer. ring holds 2 ry + 1 rows of
 * horizontal results, row yy (clamped) of the plane in slot yy mod n. */
template <int NCH>
void
cpu_separable(const SpPass &P, const SpLayer &L, int y0, int y1,
              std::vector<uint32_t> &ring)
{
  const SpTaps &TX = P.taps[L.tx], &TY = P.taps[L.ty];
  const int ry = TY.r, n = 2 * ry + 1;
  const size_t row_len = (size_t)L.w * NCH;
  ring.resize((size_t)n * row_len);
  int next = y0 - ry; /* first plane row not yet in the ring */
  auto slot = [&](int yy) {
    return ring.data() + (size_t)(((yy % n) + n) % n) * row_len;
  };
  for (int y = y0; y < y1; y++) {
    for (; next <= y + ry; next++) {
      const uint8_t *row
          = L.src + (size_t)detail::sp_clamp(next, 0, L.h - 1) * L.sstride;
      uint32_t *o = slot(next);
      for (int x = 0; x < L.w; x++)
        detail::sp_hpass<NCH>(L, TX, TX.r, row, x, o + (size_t)x * NCH);
    }
    const uint32_t *rows[2 * detail::kSpMaxRadius + 1];
    for (int t = -ry; t <= ry; t++)
      rows[t + ry] = slot(y + t);
    const uint8_t *srow = L.src + (size_t)y * L.sstride;
    uint8_t *drow = L.dst + (size_t)y * L.dstride;
    for (int x = 0; x < L.w; x++) {
      uint32_t in[NCH], out[NCH];
      if (P.mode == detail::kSpSharpen)
        detail::sp_load<NCH>(L, srow, x, in);
      for (int c = 0; c < NCH; c++) {
        if (L.role[c] != detail::kSpFilter) {
          out[c] = 0;
          continue;
        }
        const size_t i = (size_t)x * NCH + c;
        const uint32_t V
            = detail::sp_fold(TY.w, ry, [&](int t) { return rows[t + ry][i]; });
        out[c] = P.mode == detail::kSpSharpen
                     ? detail::sp_sharpen_out(L, P.amount_q8, in[c], V)
                     : detail::sp_blur_out(L, V);
      }
      detail::sp_store<NCH>(L, srow, drow, x, out);
    }
  }
}

template <int NCH>
void
cpu_sobel(const SpLayer &L, int y0, int y1)
{
  for (int y = y0; y < y1; y++) {
    const uint8_t *rows[3];
    for (int k = 0; k < 3; k++)
      rows[k]
          = L.src + (size_t)detail::sp_clamp(y + k - 1, 0, L.h - 1) * L.sstride;
    uint8_t *drow = L.dst + (size_t)y * L.dstride;
    for (int x = 0; x < L.w; x++) {
      uint32_t v[3][3][NCH];
      for (int k = 0; k < 3; k++)
        for (int j = 0; j < 3; j++)
          detail::sp_load<NCH>(
              L, rows[k], detail::sp_clamp(x + j - 1, 0, L.w - 1), v[k][j]);
      uint32_t out[NCH];
      for (int c = 0; c < NCH; c++) {
        int32_t nb[3][3];
        for (int k = 0; k < 3; k++)
          for (int j = 0; j < 3; j++)
            nb[k][j] = (int32_t)v[k][j][c];
        out[c]
            = L.role[c] == detail::kSpFilter ? detail::sp_sobel_out(L, nb) : 0;
      }
      detail::sp_store<NCH>(L, rows[1], drow, x, out);
    }
  }
}

/* Layers with nothing to filter (chroma in sharpen and edges). */
template <int NCH>
void
cpu_fill(const SpLayer &L, int y0, int y1)
{
  const uint32_t zero[4] = { 0, 0, 0, 0 };
  for (int y = y0; y < y1; y++)
    for (int x = 0; x < L.w; x++)
      detail::sp_store<NCH>(L, L.src + (size_t)y * L.sstride,
                            L.dst + (size_t)y * L.dstride, x, zero);
}

template <int NCH>
void
cpu_rows(const SpPass &P, const SpLayer &L, int y0, int y1,
         std::vector<uint32_t> &ring)
{
  if (L.nfilter == 0)
    cpu_fill<NCH>(L, y0, y1);
  else if (P.mode == detail::kSpEdges)
    cpu_sobel<NCH>(L, y0, y1);
  else
    cpu_separable<NCH>(P, L, y0, y1, ring);
}

void
cpu_layer_rows(const SpPass &P, const SpLayer &L, int y0, int y1,
               std::vector<uint32_t> &ring)
{
  switch (L.nch) {
  case 1:
    cpu_rows<1>(P, L, y0, y1, ring);
    break;
  case 2:
    cpu_rows<2>(P, L, y0, y1, ring);
    break;
  case 3:
    cpu_rows<3>(P, L, y0, y1, ring);
    break;
  default:
    cpu_rows<4>(P, L, y0, y1, ring);
    break;
  }
}

/* Below this many elements per thread, a thread costs more than it saves. */
constexpr int64_t kMinElemsPerThread = 64 * 1024;

/* One pass: every layer, rows split evenly between threads
 * (zcparallel.h), each share with its own ring of rows. */
void
cpu_pass(const SpPass &P, unsigned n_threads)
{
  for (int li = 0; li < P.n_layers; li++) {
    const SpLayer &L = P.layers[li];
    const unsigned n = detail::parallel_threads(L.h, n_threads, L.w,
                                                kMinElemsPerThread);
    detail::parallel_rows(L.h, n, [&P, &L](int begin, int end) {
      std::vector<uint32_t> ring;
      cpu_layer_rows(P, L, begin, end, ring);
    });
  }
}

void
copy_frame(const FrameDesc &src, const FrameDesc &dst)
{
  for (int i = 0; i < pixfmt_n_planes(src.fmt); i++) {
    const size_t rb = pixfmt_plane_row_bytes(src.fmt, i, src.width);
    for (int y = 0; y < pixfmt_plane_rows(src.fmt, i, src.height); y++)
      std::memcpy(dst.planes[i] + (size_t)y * dst.strides[i],
                  src.planes[i] + (size_t)y * src.strides[i], rb);
  }
}

} // namespace

bool
spatial_cpu(const FrameDesc &src, const FrameDesc &dst,
            const FrameDesc *scratch, const SpatialParams &p,
            unsigned n_threads)
{
  /* The plan is large (the taps); keep it off small thread stacks. */
  std::vector<SpPlan> plan(1);
  if (!detail::spatial_plan(src, dst, scratch, p, plan.data()))
    return false;
  if (plan[0].n_passes == 0) {
    copy_frame(src, dst);
    return true;
  }
  for (int i = 0; i < plan[0].n_passes; i++)
    cpu_pass(plan[0].passes[i], n_threads);
  return true;
}

} // namespace zc

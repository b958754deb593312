/* gst-zerocopy: spatial effect plans (zcspatial-common.h's SpPlan), for
 * both backends.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host code: validates a request and turns it into passes, layers and
 * integer taps, which the CPU (zcspatial-cpu.cpp) and the CUDA kernels
 * (zcspatial.cu) run alike. Reads and writes no pixel.
 */
#include "zcspatial.h"
#include "zcspatial-common.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace zc {

namespace {

using detail::SpLayer;
using detail::SpPass;
using detail::SpTaps;

bool
in_range(float v, float lo, float hi)
{
  return std::isfinite(v) && v >= lo && v <= hi;
}

bool
params_valid(const SpatialParams &p)
{
  return in_range(p.blur_sigma, 0.0f, 16.0f) && in_range(p.sharpen, 0.0f, 8.0f)
         && in_range(p.sharpen_sigma, 0.1f, 16.0f);
}

bool
frame_ok(const FrameDesc &f)
{
  if ((int)f.fmt < 0 || (int)f.fmt >= kNumPixFmts || f.width <= 0
      || f.height <= 0 || f.width > (1 << 16) || f.height > (1 << 16))
    return false;
  for (int i = 0; i < pixfmt_n_planes(f.fmt); i++) {
    if (!f.planes[i])
      return false;
    if (pixfmt_plane_rows(f.fmt, i, f.height) > 1
        && f.strides[i] < pixfmt_plane_row_bytes(f.fmt, i, f.width))
      return false;
  }
  return true;
}

bool
same_shape(const FrameDesc &a, const FrameDesc &b)
{
  return a.fmt == b.fmt && a.width == b.width && a.height == b.height;
}

/* Byte ranges of the planes of two frames intersect. */
bool
frames_overlap(const FrameDesc &a, const FrameDesc &b)
{
  for (int i = 0; i < pixfmt_n_planes(a.fmt); i++) {
    const uintptr_t a0 = (uintptr_t)a.planes[i];
    const uintptr_t a1
        = a0
          + a.strides[i] * (size_t)(pixfmt_plane_rows(a.fmt, i, a.height) - 1)
          + pixfmt_plane_row_bytes(a.fmt, i, a.width);
    for (int j = 0; j < pixfmt_n_planes(b.fmt); j++) {
      const uintptr_t b0 = (uintptr_t)b.planes[j];
      const uintptr_t b1
          = b0
            + b.strides[j] * (size_t)(pixfmt_plane_rows(b.fmt, j, b.height) - 1)
            + pixfmt_plane_row_bytes(b.fmt, j, b.width);
      if (a0 < b1 && b0 < a1)
        return true;
    }
  }
  return false;
}

/* The documented taps of sigma s > 0. */
void
gaussian_taps(double s, SpTaps *T)
{
  std::memset(T, 0, sizeof(*T));
  int r = (int)std::ceil(3.0 * s);
  if (r < 1)
    r = 1;
  if (r > detail::kSpMaxRadius)
    r = detail::kSpMaxRadius;
  double g[detail::kSpMaxRadius + 1], sum = 0.0;
  for (int t = 0; t <= r; t++) {
    g[t] = std::exp(-(double)t * t / (2.0 * s * s));
    sum += t == 0 ? g[t] : 2.0 * g[t];
  }
  int64_t total = 0;
  for (int t = 0; t <= r; t++) {
    T->w[t] = (uint32_t)std::llround(65536.0 * g[t] / sum);
    total += t == 0 ? T->w[t] : 2 * (int64_t)T->w[t];
  }
  T->w[0] = (uint32_t)((int64_t)T->w[0] + (65536 - total));
  T->r = r;
}

/* Identity taps (a layer that is not blurred along an axis never uses
 * them, but keep them well-defined). */
void
identity_taps(SpTaps *T)
{
  std::memset(T, 0, sizeof(*T));
  T->w[0] = 65536;
}

enum LayerKind { kMain, kChroma };

/* One layer over plane `plane` of frames s / d. */
SpLayer
make_layer(const FrameDesc &s, const FrameDesc &d, int plane, int w, int h,
           int pstride, int nch, bool wide, int depth, int shift,
           const int off[4])
{
  SpLayer L;
  std::memset(&L, 0, sizeof(L));
  L.src = s.planes[plane];
  L.dst = d.planes[plane];
  L.sstride = s.strides[plane];
  L.dstride = d.strides[plane];
  /* A single row may come with stride 0; no row but the first is read. */
  L.w = w;
  L.h = h;
  L.pstride = (uint8_t)pstride;
  L.nch = (uint8_t)nch;
  L.wide = wide;
  L.depth = (uint8_t)depth;
  L.shift = (uint8_t)shift;
  for (int c = 0; c < nch; c++)
    L.off[c] = (uint8_t)off[c];
  L.word4 = pstride == 4 && nch == 4 && !wide
            && (((uintptr_t)L.src | (uintptr_t)L.dst) & 3) == 0
            && ((L.sstride | L.dstride) & 3) == 0;
  return L;
}

void
set_roles(SpLayer *L, uint8_t role, int skip_channel)
{
  L->nfilter = 0;
  for (int c = 0; c < L->nch; c++) {
    L->role[c] = c == skip_channel ? (uint8_t)detail::kSpCopy : role;
    if (L->role[c] == detail::kSpFilter)
      L->nfilter++;
  }
}

/* The layers of one effect from s into d. */
void
build_pass(const FrameDesc &s, const FrameDesc &d, int mode, float sigma,
           float amount, SpPass *P)
{
  std::memset(P, 0, sizeof(*P));
  P->mode = mode;
  P->amount_q8 = (int32_t)std::lround(256.0 * (double)amount);
  const int W = s.width, H = s.height;
  const int cw2 = (W + 1) / 2, ch2 = (H + 1) / 2;

  /* Taps: 0 = main layers (both axes), 1 / 2 = chroma x / y. */
  int ws = 0, hs = 0; /* log2 chroma subsampling */
  switch (s.fmt) {
  case PixFmt::NV12:
  case PixFmt::NV21:
  case PixFmt::I420:
  case PixFmt::YV12:
  case PixFmt::P010_10LE:
  case PixFmt::I420_10LE:
    ws = hs = 1;
    break;
  case PixFmt::Y42B:
  case PixFmt::YUY2:
  case PixFmt::UYVY:
    ws = 1;
    break;
  default:
    break;
  }
  if (mode == detail::kSpEdges) {
    identity_taps(&P->taps[0]);
    identity_taps(&P->taps[1]);
    identity_taps(&P->taps[2]);
  } else {
    gaussian_taps(sigma, &P->taps[0]);
    gaussian_taps((double)sigma / (1 << ws), &P->taps[1]);
    gaussian_taps((double)sigma / (1 << hs), &P->taps[2]);
  }
  /* Chroma: blurred with its own taps, copied by sharpen, neutral for
   * edges. */
  const uint8_t chroma_role = mode == detail::kSpBlur      ? detail::kSpFilter
                              : mode == detail::kSpSharpen ? detail::kSpCopy
                                                           : detail::kSpConst;

  SpLayer *L = P->layers;
  int n = 0;
  auto add = [&](const SpLayer &l, LayerKind kind, int skip) {
    L[n] = l;
    if (kind == kMain) {
      set_roles(&L[n], detail::kSpFilter, skip);
      L[n].tx = L[n].ty = 0;
    } else {
      set_roles(&L[n], chroma_role, -1);
      L[n].tx = 1;
      L[n].ty = 2;
    }
    n++;
  };
  const int o0[4] = { 0, 1, 2, 3 };

  switch (s.fmt) {
  case PixFmt::RGBA:
  case PixFmt::BGRA:
  case PixFmt::RGBx:
  case PixFmt::BGRx:
    add(make_layer(s, d, 0, W, H, 4, 4, false, 8, 0, o0), kMain, 3);
    break;
  case PixFmt::ARGB:
  case PixFmt::ABGR:
  case PixFmt::xRGB:
  case PixFmt::xBGR:
    add(make_layer(s, d, 0, W, H, 4, 4, false, 8, 0, o0), kMain, 0);
    break;
  case PixFmt::RGB:
  case PixFmt::BGR:
    add(make_layer(s, d, 0, W, H, 3, 3, false, 8, 0, o0), kMain, -1);
    break;
  case PixFmt::GRAY8:
    add(make_layer(s, d, 0, W, H, 1, 1, false, 8, 0, o0), kMain, -1);
    break;
  case PixFmt::GRAY16_LE:
    add(make_layer(s, d, 0, W, H, 2, 1, true, 16, 0, o0), kMain, -1);
    break;
  case PixFmt::NV12:
  case PixFmt::NV21:
    add(make_layer(s, d, 0, W, H, 1, 1, false, 8, 0, o0), kMain, -1);
    add(make_layer(s, d, 1, cw2, ch2, 2, 2, false, 8, 0, o0), kChroma, -1);
    break;
  case PixFmt::P010_10LE: {
    const int uv[4] = { 0, 2, 0, 0 };
    add(make_layer(s, d, 0, W, H, 2, 1, true, 10, 6, o0), kMain, -1);
    add(make_layer(s, d, 1, cw2, ch2, 4, 2, true, 10, 6, uv), kChroma, -1);
    break;
  }
  case PixFmt::I420:
  case PixFmt::YV12:
  case PixFmt::Y42B:
  case PixFmt::Y444:
    add(make_layer(s, d, 0, W, H, 1, 1, false, 8, 0, o0), kMain, -1);
    for (int i = 1; i < 3; i++)
      add(make_layer(s, d, i, (W + (1 << ws) - 1) >> ws,
                     (H + (1 << hs) - 1) >> hs, 1, 1, false, 8, 0, o0),
          kChroma, -1);
    break;
  case PixFmt::I420_10LE:
    add(make_layer(s, d, 0, W, H, 2, 1, true, 10, 0, o0), kMain, -1);
    for (int i = 1; i < 3; i++)
      add(make_layer(s, d, i, cw2, ch2, 2, 1, true, 10, 0, o0), kChroma, -1);
    break;
  case PixFmt::YUY2:
  case PixFmt::UYVY: {
    const bool yuy2 = s.fmt == PixFmt::YUY2;
    const int y[4] = { yuy2 ? 0 : 1, 0, 0, 0 };
    const int uv[4] = { yuy2 ? 1 : 0, yuy2 ? 3 : 2, 0, 0 };
    add(make_layer(s, d, 0, W, H, 2, 1, false, 8, 0, y), kMain, -1);
    add(make_layer(s, d, 0, cw2, H, 4, 2, false, 8, 0, uv), kChroma, -1);
    break;
  }
  }
  for (int i = 0; i < n; i++)
    L[i].konst = L[i].depth == 8 ? 128 : (uint16_t)(512u << L[i].shift);
  P->n_layers = n;
}

} // namespace

bool
spatial_is_active(const SpatialParams &p)
{
  return spatial_n_passes(p) > 0;
}

int
spatial_n_passes(const SpatialParams &p)
{
  return (p.blur_sigma > 0.0f) + (p.sharpen > 0.0f) + (p.edges ? 1 : 0);
}

namespace detail {

bool
spatial_plan(const FrameDesc &src, const FrameDesc &dst,
             const FrameDesc *scratch, const SpatialParams &p, SpPlan *plan)
{
  if (!plan || !params_valid(p) || !frame_ok(src) || !frame_ok(dst)
      || !same_shape(src, dst) || frames_overlap(src, dst))
    return false;
  std::memset(plan, 0, sizeof(*plan));
  const int n = spatial_n_passes(p);
  if (n > 1
      && (!scratch || !frame_ok(*scratch) || !same_shape(src, *scratch)
          || frames_overlap(src, *scratch) || frames_overlap(dst, *scratch)))
    return false;

  /* Pass i writes dst when n - 1 - i is even, else scratch, so that the
   * last one lands in dst; each reads what the previous one wrote. */
  const FrameDesc *in = &src;
  int i = 0;
  auto next = [&](int mode, float sigma, float amount) {
    const FrameDesc *out = ((n - 1 - i) % 2 == 0) ? &dst : scratch;
    build_pass(*in, *out, mode, sigma, amount, &plan->passes[i]);
    in = out;
    i++;
  };
  if (p.blur_sigma > 0.0f)
    next(kSpBlur, p.blur_sigma, 0.0f);
  if (p.sharpen > 0.0f)
    next(kSpSharpen, p.sharpen_sigma, p.sharpen);
  if (p.edges)
    next(kSpEdges, 0.0f, 0.0f);
  plan->n_passes = n;
  return true;
}

} // namespace detail

} // namespace zc

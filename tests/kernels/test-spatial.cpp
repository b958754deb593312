/* gst-zerocopy: tests for kernels/zcspatial.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   test-spatial         the CPU effects against a straightforward
 *                        double-precision reference written here from the
 *                        header's description (every format, odd sizes,
 *                        borders), plus flat images, impulses, chaining,
 *                        thread counts and refused requests
 *   test-spatial --gpu   the CUDA effects against the CPU ones, bit for bit,
 *                        every format and effect combination at several sizes
 *                        (4K for a few), then rough timings on device memory;
 *                        exits 77 (skipped) without a usable GPU
 *
 * Tolerances against the reference (in code values of the sample's depth):
 * blur <= 1; sharpen <= 1 at 8 and 10 bits, <= 1 + ceil((1 + amount) / 2)
 * at 16 bits (the 16-bit intermediate has no fraction bits there); edges,
 * copied and neutral samples exact.
 */
#include "zcspatial.h"

#include "kernel-check.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using namespace zc_test;
using zc::PixFmt;

const PixFmt kAll[zc::kNumPixFmts]
    = { PixFmt::RGBA,      PixFmt::BGRA,     PixFmt::RGBx,  PixFmt::BGRx,
        PixFmt::ARGB,      PixFmt::ABGR,     PixFmt::xRGB,  PixFmt::xBGR,
        PixFmt::RGB,       PixFmt::BGR,      PixFmt::GRAY8, PixFmt::GRAY16_LE,
        PixFmt::NV12,      PixFmt::NV21,     PixFmt::I420,  PixFmt::YV12,
        PixFmt::Y42B,      PixFmt::Y444,     PixFmt::YUY2,  PixFmt::UYVY,
        PixFmt::P010_10LE, PixFmt::I420_10LE };

/* ---- frames and their samples, described independently of the code under
 * test ----------------------------------------------------------------------
 */

enum Kind { kMain, kChroma, kKeep }; /* filtered / chroma / alpha, padding */

/* One component of a format: the samples (x, y), x < w, y < h, at
 * plane + y * stride + x * pstride + off. */
struct Comp
{
  int plane, w, h, pstride, off;
  bool wide;
  int depth, shift;
  Kind kind;
  int sx, sy; /* chroma subsampling factors */
};

std::vector<Comp>
components(PixFmt f, int W, int H)
{
  const int cw = (W + 1) / 2, ch = (H + 1) / 2;
  std::vector<Comp> v;
  auto rgb4 = [&](int alpha) {
    for (int k = 0; k < 4; k++)
      v.push_back(
          { 0, W, H, 4, k, false, 8, 0, k == alpha ? kKeep : kMain, 1, 1 });
  };
  auto luma8 = [&]() {
    v.push_back({ 0, W, H, 1, 0, false, 8, 0, kMain, 1, 1 });
  };
  switch (f) {
  case PixFmt::RGBA:
  case PixFmt::BGRA:
  case PixFmt::RGBx:
  case PixFmt::BGRx:
    rgb4(3);
    break;
  case PixFmt::ARGB:
  case PixFmt::ABGR:
  case PixFmt::xRGB:
  case PixFmt::xBGR:
    rgb4(0);
    break;
  case PixFmt::RGB:
  case PixFmt::BGR:
    for (int k = 0; k < 3; k++)
      v.push_back({ 0, W, H, 3, k, false, 8, 0, kMain, 1, 1 });
    break;
  case PixFmt::GRAY8:
    luma8();
    break;
  case PixFmt::GRAY16_LE:
    v.push_back({ 0, W, H, 2, 0, true, 16, 0, kMain, 1, 1 });
    break;
  case PixFmt::NV12:
  case PixFmt::NV21:
    luma8();
    v.push_back({ 1, cw, ch, 2, 0, false, 8, 0, kChroma, 2, 2 });
    v.push_back({ 1, cw, ch, 2, 1, false, 8, 0, kChroma, 2, 2 });
    break;
  case PixFmt::I420:
  case PixFmt::YV12:
    luma8();
    v.push_back({ 1, cw, ch, 1, 0, false, 8, 0, kChroma, 2, 2 });
    v.push_back({ 2, cw, ch, 1, 0, false, 8, 0, kChroma, 2, 2 });
    break;
  case PixFmt::Y42B:
    luma8();
    v.push_back({ 1, cw, H, 1, 0, false, 8, 0, kChroma, 2, 1 });
    v.push_back({ 2, cw, H, 1, 0, false, 8, 0, kChroma, 2, 1 });
    break;
  case PixFmt::Y444:
    luma8();
    v.push_back({ 1, W, H, 1, 0, false, 8, 0, kChroma, 1, 1 });
    v.push_back({ 2, W, H, 1, 0, false, 8, 0, kChroma, 1, 1 });
    break;
  case PixFmt::YUY2:
  case PixFmt::UYVY: {
    const bool y = f == PixFmt::YUY2;
    v.push_back({ 0, W, H, 2, y ? 0 : 1, false, 8, 0, kMain, 1, 1 });
    v.push_back({ 0, cw, H, 4, y ? 1 : 0, false, 8, 0, kChroma, 2, 1 });
    v.push_back({ 0, cw, H, 4, y ? 3 : 2, false, 8, 0, kChroma, 2, 1 });
    break;
  }
  case PixFmt::P010_10LE:
    v.push_back({ 0, W, H, 2, 0, true, 10, 6, kMain, 1, 1 });
    v.push_back({ 1, cw, ch, 4, 0, true, 10, 6, kChroma, 2, 2 });
    v.push_back({ 1, cw, ch, 4, 2, true, 10, 6, kChroma, 2, 2 });
    break;
  case PixFmt::I420_10LE:
    v.push_back({ 0, W, H, 2, 0, true, 10, 0, kMain, 1, 1 });
    v.push_back({ 1, cw, ch, 2, 0, true, 10, 0, kChroma, 2, 2 });
    v.push_back({ 2, cw, ch, 2, 0, true, 10, 0, kChroma, 2, 2 });
    break;
  }
  return v;
}

/* A frame in ordinary memory; each row `pad` bytes longer than needed
 * (a multiple of 4 keeps 4-byte pixels aligned, which takes the 32-bit
 * path; an odd pad the byte path: both must give the same result), or
 * with pad < 0 rounded up to 64 bytes (the CUDA 16-byte-load path). */
struct Frame
{
  std::vector<uint8_t> data;
  zc::FrameDesc desc;

  void init(PixFmt f, int w, int h, int pad = 8)
  {
    desc = zc::FrameDesc();
    desc.fmt = f;
    desc.width = w;
    desc.height = h;
    size_t off[3] = { 0, 0, 0 }, total = 0;
    for (int i = 0; i < zc::pixfmt_n_planes(f); i++) {
      const size_t rb = zc::pixfmt_plane_row_bytes(f, i, w);
      desc.strides[i] = pad < 0 ? (rb + 63) / 64 * 64 : rb + pad;
      off[i] = total;
      total += (desc.strides[i] * zc::pixfmt_plane_rows(f, i, h) + 16 + 63) / 64
               * 64;
    }
    data.assign(total, 0);
    for (int i = 0; i < zc::pixfmt_n_planes(f); i++)
      desc.planes[i] = data.data() + off[i];
  }

  uint8_t *at(const Comp &c, int x, int y) const
  {
    return desc.planes[c.plane] + (size_t)y * desc.strides[c.plane]
           + (size_t)x * c.pstride + c.off;
  }
  uint32_t raw(const Comp &c, int x, int y) const
  {
    const uint8_t *p = at(c, x, y);
    return c.wide ? (uint32_t)p[0] | ((uint32_t)p[1] << 8) : p[0];
  }
  uint32_t get(const Comp &c, int x, int y) const
  {
    return (raw(c, x, y) >> c.shift) & ((1u << c.depth) - 1);
  }
  void set(const Comp &c, int x, int y, uint32_t v) const
  {
    uint8_t *p = at(c, x, y);
    const uint32_t w = v << c.shift;
    p[0] = (uint8_t)w;
    if (c.wide)
      p[1] = (uint8_t)(w >> 8);
  }
};

/* ---- the reference ---------------------------------------------------------
 */

/* The documented integer taps, w[t] for t = 0..r (symmetric). */
std::vector<double>
taps(double s)
{
  int r = (int)std::ceil(3.0 * s);
  if (r < 1)
    r = 1;
  std::vector<double> g(r + 1), w(r + 1);
  double sum = 0.0;
  for (int t = 0; t <= r; t++) {
    g[t] = std::exp(-(double)t * t / (2.0 * s * s));
    sum += (t ? 2.0 : 1.0) * g[t];
  }
  double total = 0.0;
  for (int t = 0; t <= r; t++) {
    w[t] = (double)std::llround(65536.0 * g[t] / sum);
    total += (t ? 2.0 : 1.0) * w[t];
  }
  w[0] += 65536.0 - total;
  for (double &x : w)
    x /= 65536.0;
  return w;
}

/* The exact gaussian, normalised over the same support. */
std::vector<double>
taps_exact(double s)
{
  int r = (int)std::ceil(3.0 * s);
  if (r < 1)
    r = 1;
  std::vector<double> g(r + 1);
  double sum = 0.0;
  for (int t = 0; t <= r; t++) {
    g[t] = std::exp(-(double)t * t / (2.0 * s * s));
    sum += (t ? 2.0 : 1.0) * g[t];
  }
  for (double &x : g)
    x /= sum;
  return g;
}

int
clampi(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

/* The blur of a component, unrounded, clamp-to-edge (zero_pad: samples
 * outside read 0, to show the borders matter). */
std::vector<double>
ref_blur(const Frame &f, const Comp &c, const std::vector<double> &wx,
         const std::vector<double> &wy, bool zero_pad = false)
{
  const int rx = (int)wx.size() - 1, ry = (int)wy.size() - 1;
  std::vector<double> h((size_t)c.w * c.h), o((size_t)c.w * c.h);
  for (int y = 0; y < c.h; y++)
    for (int x = 0; x < c.w; x++) {
      double s = 0.0;
      for (int t = -rx; t <= rx; t++) {
        const int xx = x + t;
        if (zero_pad && (xx < 0 || xx >= c.w))
          continue;
        s += wx[std::abs(t)] * f.get(c, clampi(xx, 0, c.w - 1), y);
      }
      h[(size_t)y * c.w + x] = s;
    }
  for (int y = 0; y < c.h; y++)
    for (int x = 0; x < c.w; x++) {
      double s = 0.0;
      for (int t = -ry; t <= ry; t++) {
        const int yy = y + t;
        if (zero_pad && (yy < 0 || yy >= c.h))
          continue;
        s += wy[std::abs(t)] * h[(size_t)clampi(yy, 0, c.h - 1) * c.w + x];
      }
      o[(size_t)y * c.w + x] = s;
    }
  return o;
}

double
ref_sobel(const Frame &f, const Comp &c, int x, int y)
{
  auto v = [&](int dx, int dy) {
    return (double)f.get(c, clampi(x + dx, 0, c.w - 1),
                         clampi(y + dy, 0, c.h - 1));
  };
  const double gx = (v(1, -1) + 2 * v(1, 0) + v(1, 1))
                    - (v(-1, -1) + 2 * v(-1, 0) + v(-1, 1));
  const double gy = (v(-1, 1) + 2 * v(0, 1) + v(1, 1))
                    - (v(-1, -1) + 2 * v(0, -1) + v(1, -1));
  return std::sqrt(gx * gx + gy * gy) / 4.0;
}

double
clampd(double v, double m)
{
  return v < 0 ? 0 : (v > m ? m : v);
}

void
fill_samples(Frame &f)
{
  fill_random(f.data.data(), f.data.size());
}

/* Bytes of the frame's buffer that hold samples of some component. */
std::vector<bool>
sample_bytes(const Frame &f)
{
  std::vector<bool> m(f.data.size(), false);
  for (const Comp &c : components(f.desc.fmt, f.desc.width, f.desc.height))
    for (int y = 0; y < c.h; y++)
      for (int x = 0; x < c.w; x++) {
        const size_t i = (size_t)(f.at(c, x, y) - f.data.data());
        m[i] = true;
        if (c.wide)
          m[i + 1] = true;
      }
  return m;
}

const char *
kind_name(Kind k)
{
  return k == kMain ? "main" : (k == kChroma ? "chroma" : "kept");
}

/* One effect on one frame, checked sample by sample against the
 * reference. Returns the largest difference seen on filtered samples. */
int
check_effect(PixFmt fmt, int W, int H, const zc::SpatialParams &p,
             bool exact_taps = false, int pad = 8)
{
  Frame src, dst;
  src.init(fmt, W, H, pad);
  dst.init(fmt, W, H, pad);
  fill_samples(src);
  fill_random(dst.data.data(), dst.data.size());
  const std::vector<uint8_t> before = dst.data;
  const char *name = zc::pixfmt_name(fmt);

  if (!check(zc::spatial_cpu(src.desc, dst.desc, nullptr, p, 1),
             "spatial_cpu %s %dx%d blur %g sharpen %g/%g edges %d", name, W, H,
             p.blur_sigma, p.sharpen, p.sharpen_sigma, p.edges))
    return 1 << 30;

  int worst = 0;
  for (const Comp &c : components(fmt, W, H)) {
    const uint32_t m = (1u << c.depth) - 1;
    int maxd = 0, bad = 0, off_by_one = 0;
    int tol = 0;
    std::vector<double> ref;
    bool filtered = c.kind == kMain || (c.kind == kChroma && p.blur_sigma > 0);
    if (c.kind == kMain && p.blur_sigma > 0) {
      const auto w = exact_taps ? taps_exact(p.blur_sigma) : taps(p.blur_sigma);
      ref = ref_blur(src, c, w, w);
      tol = 1;
    } else if (c.kind == kChroma && p.blur_sigma > 0) {
      ref = ref_blur(src, c, taps((double)p.blur_sigma / c.sx),
                     taps((double)p.blur_sigma / c.sy));
      tol = 1;
    } else if (c.kind == kMain && p.sharpen > 0) {
      const auto w = taps(p.sharpen_sigma);
      ref = ref_blur(src, c, w, w);
      const double a = std::lround(256.0 * p.sharpen) / 256.0;
      for (int y = 0; y < c.h; y++)
        for (int x = 0; x < c.w; x++) {
          double &r = ref[(size_t)y * c.w + x];
          const double v = src.get(c, x, y);
          r = clampd(v + a * (v - r), m);
        }
      tol = c.depth == 16 ? 1 + (int)std::ceil((1.0 + p.sharpen) / 2.0) : 1;
    } else if (c.kind == kMain && p.edges) {
      ref.resize((size_t)c.w * c.h);
      for (int y = 0; y < c.h; y++)
        for (int x = 0; x < c.w; x++)
          ref[(size_t)y * c.w + x] = clampd(ref_sobel(src, c, x, y), m);
      tol = 0;
    }
    for (int y = 0; y < c.h; y++)
      for (int x = 0; x < c.w; x++) {
        int d;
        if (c.kind == kKeep || (c.kind == kChroma && !filtered && !p.edges)) {
          d = dst.raw(c, x, y) != src.raw(c, x, y) ? 1 << 20 : 0; /* copy */
        } else if (c.kind == kChroma && !filtered) {
          d = dst.raw(c, x, y) != (c.depth == 8 ? 128u : 512u << c.shift)
                  ? 1 << 20
                  : 0; /* neutral */
        } else {
          /* round half up, as documented */
          const double r = std::floor(ref[(size_t)y * c.w + x] + 0.5);
          d = (int)std::fabs((double)dst.get(c, x, y) - r);
          /* the bits outside the value must be 0 */
          if ((dst.raw(c, x, y) & ~(m << c.shift)) != 0)
            d = 1 << 20;
        }
        if (d > tol)
          bad++;
        if (d == 1)
          off_by_one++;
        maxd = std::max(maxd, d);
      }
    /* Rounding is to nearest: at 8 and 10 bits the result is the rounded
     * reference but for the odd sample where the intermediate's rounding
     * tips it over (a bias of even a quarter code fails this). */
    const int n = c.w * c.h;
    if (filtered && c.depth <= 10)
      check(off_by_one <= n / 50 + 3,
            "%s %dx%d blur %g sharpen %g/%g edges %d, %s component at byte "
            "%d of plane %d: %d of %d samples off by one",
            name, W, H, p.blur_sigma, p.sharpen, p.sharpen_sigma, p.edges,
            kind_name(c.kind), c.off, c.plane, off_by_one, n);
    check(bad == 0,
          "%s %dx%d blur %g sharpen %g/%g edges %d, %s component at byte "
          "%d of plane %d: %d samples off by more than %d (max %d)",
          name, W, H, p.blur_sigma, p.sharpen, p.sharpen_sigma, p.edges,
          kind_name(c.kind), c.off, c.plane, bad, tol, maxd);
    if (filtered)
      worst = std::max(worst, maxd);
  }

  /* Nothing outside the samples was written. */
  const std::vector<bool> mask = sample_bytes(dst);
  size_t touched = 0;
  for (size_t i = 0; i < dst.data.size(); i++)
    if (!mask[i] && dst.data[i] != before[i])
      touched++;
  check(touched == 0, "%s %dx%d: %zu bytes outside the samples written", name,
        W, H, touched);
  return worst;
}

/* ---- CPU tests -------------------------------------------------------------
 */

void
test_every_format_against_reference()
{
  const int sizes[][2]
      = { { 1, 1 }, { 2, 3 }, { 7, 5 }, { 33, 17 }, { 64, 9 } };
  zc::SpatialParams blur_small, blur, blur_big, sharpen, sharpen_wide, edges;
  blur_small.blur_sigma = 0.4f;
  blur.blur_sigma = 2.0f;
  blur_big.blur_sigma = 5.3f;
  sharpen.sharpen = 1.5f;
  sharpen_wide.sharpen = 8.0f;
  sharpen_wide.sharpen_sigma = 3.0f;
  edges.edges = true;
  const zc::SpatialParams *all[]
      = { &blur_small, &blur, &blur_big, &sharpen, &sharpen_wide, &edges };
  for (PixFmt f : kAll)
    for (const auto &s : sizes)
      for (const zc::SpatialParams *p : all)
        for (int pad : { 8, 5 })
          check_effect(f, s[0], s[1], *p, false, pad);
}

/* Against the exact gaussian (not the quantised taps): 8-bit stays within
 * one code. */
void
test_blur_close_to_exact_gaussian()
{
  for (float s : { 0.7f, 2.0f, 16.0f }) {
    zc::SpatialParams p;
    p.blur_sigma = s;
    for (PixFmt f : { PixFmt::RGBA, PixFmt::GRAY8, PixFmt::I420 })
      check_effect(f, 120, 70, p, true);
  }
}

void
test_flat_stays_flat()
{
  for (PixFmt f : kAll) {
    Frame src, dst;
    const int W = 37, H = 23;
    src.init(f, W, H);
    dst.init(f, W, H);
    const std::vector<Comp> comps = components(f, W, H);
    std::vector<uint32_t> level;
    for (const Comp &c : comps) {
      const uint32_t v = (uint32_t)g_rng() & ((1u << c.depth) - 1);
      level.push_back(v);
      for (int y = 0; y < c.h; y++)
        for (int x = 0; x < c.w; x++)
          src.set(c, x, y, v);
    }
    zc::SpatialParams blur, sharpen, edges;
    blur.blur_sigma = 3.0f;
    sharpen.sharpen = 4.0f;
    sharpen.sharpen_sigma = 2.0f;
    edges.edges = true;
    for (const zc::SpatialParams *p : { &blur, &sharpen, &edges }) {
      check(zc::spatial_cpu(src.desc, dst.desc, nullptr, *p, 0),
            "spatial_cpu flat %s", zc::pixfmt_name(f));
      int bad = 0;
      for (size_t i = 0; i < comps.size(); i++) {
        const Comp &c = comps[i];
        uint32_t want = level[i];
        if (p->edges && c.kind == kMain)
          want = 0;
        else if (p->edges && c.kind == kChroma)
          want = c.depth == 8 ? 128 : 512;
        for (int y = 0; y < c.h; y++)
          for (int x = 0; x < c.w; x++)
            bad += dst.get(c, x, y) != want;
      }
      check(bad == 0, "flat %s (blur %g sharpen %g edges %d): %d samples moved",
            zc::pixfmt_name(f), p->blur_sigma, p->sharpen, p->edges, bad);
    }
  }
}

/* A single bright sample: the blur draws the kernel (the outer product of
 * the taps), symmetric, nothing past the radius. */
void
test_impulse_gives_kernel()
{
  for (PixFmt f : { PixFmt::GRAY8, PixFmt::GRAY16_LE }) {
    for (float s : { 1.0f, 2.5f }) {
      const int R = (int)std::ceil(3.0 * s), N = 2 * R + 11, c0 = N / 2;
      Frame src, dst;
      src.init(f, N, N);
      dst.init(f, N, N);
      const Comp c = components(f, N, N)[0];
      const uint32_t m = (1u << c.depth) - 1;
      src.set(c, c0, c0, m);
      zc::SpatialParams p;
      p.blur_sigma = s;
      check(zc::spatial_cpu(src.desc, dst.desc, nullptr, p, 1),
            "spatial_cpu impulse");
      const std::vector<double> w = taps(s);
      int bad = 0, asym = 0, outside = 0;
      for (int y = 0; y < N; y++)
        for (int x = 0; x < N; x++) {
          const int dx = x - c0, dy = y - c0;
          const uint32_t got = dst.get(c, x, y);
          if (std::abs(dx) > R || std::abs(dy) > R) {
            outside += got != 0;
            continue;
          }
          const double want = m * w[std::abs(dx)] * w[std::abs(dy)];
          bad += std::fabs(got - std::floor(want + 0.5)) > 1.0;
          asym += got != dst.get(c, c0 - dx, y) || got != dst.get(c, x, c0 - dy)
                  || got != dst.get(c, c0 + dy, c0 + dx);
        }
      check(bad == 0 && asym == 0 && outside == 0,
            "impulse %s sigma %g: %d off the kernel, %d asymmetric, %d past "
            "the radius",
            zc::pixfmt_name(f), s, bad, asym, outside);
    }
  }
  /* Sobel of an impulse of m: gx, gy = +-m or +-2m around it. */
  Frame src, dst;
  src.init(PixFmt::GRAY8, 9, 9);
  dst.init(PixFmt::GRAY8, 9, 9);
  const Comp c = components(PixFmt::GRAY8, 9, 9)[0];
  src.set(c, 4, 4, 200);
  zc::SpatialParams e;
  e.edges = true;
  zc::spatial_cpu(src.desc, dst.desc, nullptr, e, 1);
  /* (3,4): gx = 2*200 -> 400/4 = 100; (3,3): gx = gy = 200 ->
   * sqrt(2)*200/4 = 70.7 -> 71; the centre and far pixels: 0. */
  check(dst.get(c, 3, 4) == 100 && dst.get(c, 5, 4) == 100
            && dst.get(c, 4, 3) == 100 && dst.get(c, 3, 3) == 71
            && dst.get(c, 5, 5) == 71 && dst.get(c, 4, 4) == 0
            && dst.get(c, 1, 1) == 0,
        "sobel impulse: %u %u %u %u %u %u", dst.get(c, 3, 4), dst.get(c, 5, 4),
        dst.get(c, 4, 3), dst.get(c, 3, 3), dst.get(c, 4, 4), dst.get(c, 1, 1));
}

/* Clamp-to-edge: a bright left column stays bright after the blur (zero
 * padding would halve it), and matches the clamping reference. */
void
test_borders_clamp_to_edge()
{
  Frame src, dst;
  const int W = 9, H = 6;
  src.init(PixFmt::GRAY8, W, H);
  dst.init(PixFmt::GRAY8, W, H);
  const Comp c = components(PixFmt::GRAY8, W, H)[0];
  for (int y = 0; y < H; y++)
    src.set(c, 0, y, 240);
  zc::SpatialParams p;
  p.blur_sigma = 1.5f;
  zc::spatial_cpu(src.desc, dst.desc, nullptr, p, 1);
  const auto w = taps(1.5);
  const auto clamp_ref = ref_blur(src, c, w, w);
  const auto zero_ref = ref_blur(src, c, w, w, true);
  int bad = 0;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      bad += std::fabs(dst.get(c, x, y) - clamp_ref[(size_t)y * W + x]) > 1.0;
  check(bad == 0 && dst.get(c, 0, 0) > zero_ref[0] + 20,
        "borders: %d off the clamp-to-edge reference; corner %u, zero-padded "
        "%.1f",
        bad, dst.get(c, 0, 0), zero_ref[0]);
  /* Edges at a frame border of a flat image: nothing. */
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      src.set(c, x, y, 77);
  zc::SpatialParams e;
  e.edges = true;
  zc::spatial_cpu(src.desc, dst.desc, nullptr, e, 1);
  check(dst.get(c, 0, 0) == 0 && dst.get(c, W - 1, H - 1) == 0,
        "sobel on a flat border is not 0");
}

/* Chained effects through scratch equal the effects one at a time, and
 * the thread count does not change anything. */
void
test_chain_and_threads()
{
  for (PixFmt f : kAll) {
    const int W = 301, H = 157;
    Frame src, dst, scratch, a, b, ref;
    src.init(f, W, H);
    dst.init(f, W, H);
    scratch.init(f, W, H);
    a.init(f, W, H);
    b.init(f, W, H);
    ref.init(f, W, H);
    fill_samples(src);
    zc::SpatialParams all, blur, sharpen, edges;
    all.blur_sigma = blur.blur_sigma = 1.2f;
    all.sharpen = sharpen.sharpen = 2.0f;
    all.sharpen_sigma = sharpen.sharpen_sigma = 0.8f;
    all.edges = edges.edges = true;
    check(zc::spatial_cpu(src.desc, a.desc, nullptr, blur, 1)
              && zc::spatial_cpu(a.desc, b.desc, nullptr, sharpen, 1)
              && zc::spatial_cpu(b.desc, ref.desc, nullptr, edges, 1),
          "one at a time");
    for (unsigned threads : { 1u, 3u, 0u }) {
      std::memset(dst.data.data(), 0, dst.data.size());
      check(zc::spatial_cpu(src.desc, dst.desc, &scratch.desc, all, threads),
            "spatial_cpu chain");
      check(dst.data == ref.data, "%s: chained (%u threads) != one at a time",
            zc::pixfmt_name(f), threads);
    }
    /* Two effects: the scratch is used the other way round. */
    zc::SpatialParams two = all;
    two.edges = false;
    std::memset(dst.data.data(), 0, dst.data.size());
    check(zc::spatial_cpu(src.desc, dst.desc, &scratch.desc, two, 2)
              && dst.data == b.data,
          "%s: blur + sharpen != one at a time", zc::pixfmt_name(f));
  }
}

void
test_passes_and_identity()
{
  zc::SpatialParams p;
  check(!zc::spatial_is_active(p) && zc::spatial_n_passes(p) == 0,
        "defaults are inactive");
  p.edges = true;
  check(zc::spatial_is_active(p) && zc::spatial_n_passes(p) == 1, "edges");
  p.blur_sigma = 1.0f;
  p.sharpen = 0.5f;
  check(zc::spatial_n_passes(p) == 3, "three passes");

  /* Inactive: a copy. */
  Frame src, dst;
  src.init(PixFmt::NV12, 13, 7);
  dst.init(PixFmt::NV12, 13, 7);
  fill_samples(src);
  check(zc::spatial_cpu(src.desc, dst.desc, nullptr, zc::SpatialParams(), 0),
        "identity");
  int bad = 0;
  for (const Comp &c : components(PixFmt::NV12, 13, 7))
    for (int y = 0; y < c.h; y++)
      for (int x = 0; x < c.w; x++)
        bad += dst.raw(c, x, y) != src.raw(c, x, y);
  check(bad == 0, "inactive: not a copy (%d)", bad);
}

void
test_invalid_rejected()
{
  Frame src, dst, scratch;
  src.init(PixFmt::RGBA, 16, 8);
  dst.init(PixFmt::RGBA, 16, 8);
  scratch.init(PixFmt::RGBA, 16, 8);
  fill_samples(src);
  fill_random(dst.data.data(), dst.data.size());
  const std::vector<uint8_t> before = dst.data;

  auto refused = [&](const zc::FrameDesc &s, const zc::FrameDesc &d,
                     const zc::FrameDesc *sc, const zc::SpatialParams &p,
                     const char *what) {
    const bool ok = zc::spatial_cpu(s, d, sc, p, 0);
    check(!ok && dst.data == before, "not refused, or wrote: %s", what);
  };
  const float nan = std::nanf("");
  const float inf = INFINITY;
  zc::SpatialParams p;
  for (float v : { -0.1f, 16.5f, nan, inf }) {
    p = zc::SpatialParams();
    p.blur_sigma = v;
    refused(src.desc, dst.desc, nullptr, p, "blur_sigma");
  }
  for (float v : { -1.0f, 8.01f, nan }) {
    p = zc::SpatialParams();
    p.sharpen = v;
    refused(src.desc, dst.desc, nullptr, p, "sharpen");
  }
  for (float v : { 0.0f, 0.05f, 17.0f, nan }) {
    p = zc::SpatialParams();
    p.sharpen = 1.0f;
    p.sharpen_sigma = v;
    refused(src.desc, dst.desc, nullptr, p, "sharpen_sigma");
  }
  zc::SpatialParams good;
  good.blur_sigma = 1.0f;
  zc::SpatialParams two = good;
  two.edges = true;
  refused(src.desc, dst.desc, nullptr, two, "two passes, no scratch");
  refused(src.desc, dst.desc, &src.desc, two, "scratch is the source");
  refused(src.desc, dst.desc, &dst.desc, two, "scratch is the destination");
  refused(src.desc, src.desc, nullptr, good, "in place");
  zc::FrameDesc d;
  zc::FrameDesc s2 = src.desc;
  s2.planes[0] = dst.desc.planes[0] + 8;
  refused(s2, dst.desc, nullptr, good, "overlapping frames");
  d = dst.desc;
  d.fmt = PixFmt::BGRA;
  refused(src.desc, d, nullptr, good, "format mismatch");
  d = dst.desc;
  d.width = 15;
  refused(src.desc, d, nullptr, good, "size mismatch");
  d = dst.desc;
  d.strides[0] = 16 * 4 - 1;
  refused(src.desc, d, nullptr, good, "stride below the row size");
  d = dst.desc;
  d.planes[0] = nullptr;
  refused(src.desc, d, nullptr, good, "null plane");
  s2 = src.desc;
  s2.width = 0;
  d = dst.desc;
  d.width = 0;
  refused(s2, d, nullptr, good, "empty frame");
  s2 = src.desc;
  s2.fmt = (PixFmt)99;
  d = dst.desc;
  d.fmt = (PixFmt)99;
  refused(s2, d, nullptr, good, "unknown format");
  zc::FrameDesc sc = scratch.desc;
  sc.height = 7;
  refused(src.desc, dst.desc, &sc, two, "scratch size mismatch");
  /* The same frames are fine. */
  check(zc::spatial_cpu(src.desc, dst.desc, &scratch.desc, two, 0),
        "a valid request refused");
}

int
run_cpu_tests()
{
  test_passes_and_identity();
  test_invalid_rejected();
  test_flat_stays_flat();
  test_impulse_gives_kernel();
  test_borders_clamp_to_edge();
  test_every_format_against_reference();
  test_blur_close_to_exact_gaussian();
  test_chain_and_threads();
  return 0;
}

/* ---- GPU -------------------------------------------------------------------
 */

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA

/* A frame in mapped pinned memory, laid out like `like`. */
struct PinnedFrame
{
  uint8_t *host = nullptr;
  uint8_t *dev = nullptr;
  size_t size = 0;
  zc::FrameDesc desc;

  PinnedFrame() = default;
  PinnedFrame(const PinnedFrame &) = delete;
  PinnedFrame &operator=(const PinnedFrame &) = delete;
  ~PinnedFrame()
  {
    if (host)
      cudaFreeHost(host);
  }

  bool alloc(const Frame &like)
  {
    void *p = nullptr;
    if (!cuda_ok(cudaHostAlloc(&p, like.data.size(), cudaHostAllocMapped),
                 "cudaHostAlloc(mapped)"))
      return false;
    host = (uint8_t *)p;
    size = like.data.size();
    if (!cuda_ok(cudaHostGetDevicePointer((void **)&dev, p, 0),
                 "cudaHostGetDevicePointer"))
      return false;
    std::memcpy(host, like.data.data(), like.data.size());
    desc = like.desc;
    for (int i = 0; i < 3; i++)
      if (like.desc.planes[i])
        desc.planes[i] = dev + (like.desc.planes[i] - like.data.data());
    return true;
  }
};

/* CUDA against CPU, whole buffers (padding included: neither may write
 * it). */
void
gpu_case(PixFmt f, int W, int H, const zc::SpatialParams &p,
         cudaStream_t stream, int pad = 8)
{
  Frame src, cpu, scr;
  src.init(f, W, H, pad);
  cpu.init(f, W, H, pad);
  scr.init(f, W, H, pad);
  fill_samples(src);
  fill_random(cpu.data.data(), cpu.data.size());
  PinnedFrame s, d, sc;
  if (!s.alloc(src) || !d.alloc(cpu) || !sc.alloc(scr))
    return;
  if (!check(zc::spatial_cpu(src.desc, cpu.desc, &scr.desc, p, 0),
             "spatial_cpu %s", zc::pixfmt_name(f)))
    return;
  if (!cuda_ok(zc::spatial_cuda(s.desc, d.desc, &sc.desc, p, stream),
               "spatial_cuda")
      || !cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize"))
    return;
  size_t first = cpu.data.size();
  for (size_t i = 0; i < cpu.data.size(); i++)
    if (d.host[i] != cpu.data[i]) {
      first = i;
      break;
    }
  check(first == cpu.data.size(),
        "GPU != CPU: %s %dx%d blur %g sharpen %g/%g edges %d (first at byte "
        "%zu: %u vs %u)",
        zc::pixfmt_name(f), W, H, p.blur_sigma, p.sharpen, p.sharpen_sigma,
        p.edges, first, first < cpu.data.size() ? d.host[first] : 0,
        first < cpu.data.size() ? cpu.data[first] : 0);
}

/* Rough timing on device memory: microseconds per frame and the bandwidth
 * of the bytes read and written once, next to a device-to-device copy of
 * the same frame. */
void
gpu_timing(PixFmt f, int W, int H, const zc::SpatialParams &p, const char *what,
           cudaStream_t stream)
{
  Frame like;
  like.init(f, W, H, 0);
  const size_t n = like.data.size();
  uint8_t *a = nullptr, *b = nullptr, *c = nullptr;
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  if (!cuda_ok(cudaMalloc(&a, n), "cudaMalloc")
      || !cuda_ok(cudaMalloc(&b, n), "cudaMalloc")
      || !cuda_ok(cudaMalloc(&c, n), "cudaMalloc")
      || !cuda_ok(cudaEventCreate(&e0), "cudaEventCreate")
      || !cuda_ok(cudaEventCreate(&e1), "cudaEventCreate")) {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return;
  }
  cudaMemsetAsync(a, 0x5a, n, stream);
  auto desc = [&](uint8_t *base) {
    zc::FrameDesc d = like.desc;
    for (int i = 0; i < 3; i++)
      if (d.planes[i])
        d.planes[i] = base + (like.desc.planes[i] - like.data.data());
    return d;
  };
  const zc::FrameDesc sd = desc(a), dd = desc(b), cd = desc(c);
  const int iters = 20;
  float ms_fx = 0.0f, ms_copy = 0.0f;
  bool ok = cuda_ok(zc::spatial_cuda(sd, dd, &cd, p, stream), "warm-up");
  ok = ok && cuda_ok(cudaEventRecord(e0, stream), "cudaEventRecord");
  for (int i = 0; ok && i < iters; i++)
    ok = cuda_ok(zc::spatial_cuda(sd, dd, &cd, p, stream), "spatial_cuda");
  ok = ok && cuda_ok(cudaEventRecord(e1, stream), "cudaEventRecord")
       && cuda_ok(cudaEventSynchronize(e1), "cudaEventSynchronize")
       && cuda_ok(cudaEventElapsedTime(&ms_fx, e0, e1), "elapsed");
  ok = ok && cuda_ok(cudaEventRecord(e0, stream), "cudaEventRecord");
  for (int i = 0; ok && i < iters; i++)
    ok = cuda_ok(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, stream),
                 "cudaMemcpyAsync");
  ok = ok && cuda_ok(cudaEventRecord(e1, stream), "cudaEventRecord")
       && cuda_ok(cudaEventSynchronize(e1), "cudaEventSynchronize")
       && cuda_ok(cudaEventElapsedTime(&ms_copy, e0, e1), "elapsed");
  if (ok) {
    const double us = 1000.0 * ms_fx / iters,
                 us_copy = 1000.0 * ms_copy / iters;
    const int passes = std::max(1, zc::spatial_n_passes(p));
    /* Each pass reads and writes the frame once. */
    const double gbs = 2.0 * n * passes / (us * 1e3);
    const double gbs_copy = 2.0 * n / (us_copy * 1e3);
    std::printf("timing: %-28s %s %dx%d: %8.1f us/frame, %7.1f GB/s "
                "(d2d copy %7.1f GB/s, %3.0f%%)\n",
                what, zc::pixfmt_name(f), W, H, us, gbs, gbs_copy,
                100.0 * gbs / gbs_copy);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}

int
run_gpu_tests()
{
  cudaStream_t stream;
  if (!cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags"))
    return 1;

  /* Every format x every combination of the three effects (the radii
   * cover the unrolled 1..6 and the looped kernels, and chroma radii that
   * differ between the axes). */
  std::vector<zc::SpatialParams> combos;
  for (int mask = 0; mask < 8; mask++)
    for (int variant = 0; variant < 2; variant++) {
      zc::SpatialParams p;
      if (mask & 1)
        p.blur_sigma = variant ? 4.5f : 2.0f; /* r 14 / 7 luma, 6 / 3 chroma */
      if (mask & 2) {
        p.sharpen = variant ? 7.5f : 1.0f;
        p.sharpen_sigma = variant ? 0.3f : 1.7f; /* r 1 / 6 */
      }
      p.edges = (mask & 4) != 0;
      if (mask == 0 && variant)
        continue;
      combos.push_back(p);
    }
  const int sizes[][2] = { { 1, 1 },   { 2, 1 },   { 1, 3 },   { 5, 4 },
                           { 33, 17 }, { 67, 35 }, { 130, 71 } };
  for (PixFmt f : kAll)
    for (const auto &s : sizes)
      for (const zc::SpatialParams &p : combos)
        gpu_case(f, s[0], s[1], p, stream, (s[0] & 1) ? 5 : -1);

  /* The 4-byte RGB fast path (radius 1..8 on a 16-byte aligned source):
   * widths around its 8-pixel segments and 32-pixel tiles, heights around
   * its 112-row tiles, both alpha positions. */
  for (PixFmt f : { PixFmt::RGBA, PixFmt::xRGB, PixFmt::BGRx })
    for (float sigma : { 0.3f, 0.5f, 0.9f, 1.2f, 1.4f, 2.0f, 2.3f, 2.6f })
      for (int mode = 0; mode < 2; mode++) {
        zc::SpatialParams p; /* radius 1, 2, ... 8 */
        if (mode) {
          p.sharpen = 3.0f;
          p.sharpen_sigma = sigma;
        } else {
          p.blur_sigma = sigma;
        }
        for (const auto &s : { std::pair<int, int>{ 1, 1 },
                               { 7, 111 },
                               { 8, 112 },
                               { 31, 113 },
                               { 33, 2 },
                               { 100, 250 },
                               { 257, 9 } })
          gpu_case(f, s.first, s.second, p, stream, -1);
      }

  /* Large radius and sizes around the 32x32 tile, fewer formats. */
  zc::SpatialParams big;
  big.blur_sigma = 16.0f;
  for (PixFmt f :
       { PixFmt::RGBA, PixFmt::NV12, PixFmt::YUY2, PixFmt::GRAY16_LE })
    for (int w : { 31, 32, 33, 97 })
      gpu_case(f, w, 65, big, stream, -1);

  /* 4K. */
  zc::SpatialParams blur2;
  blur2.blur_sigma = 2.0f;
  zc::SpatialParams all;
  all.blur_sigma = 1.0f;
  all.sharpen = 2.0f;
  all.edges = true;
  gpu_case(PixFmt::RGBA, 3840, 2160, blur2, stream, -1);
  gpu_case(PixFmt::RGBA, 3840, 2160, blur2, stream, 4); /* generic kernel */
  gpu_case(PixFmt::NV12, 3840, 2160, all, stream, -1);

  /* Invalid: refused before anything is enqueued. */
  {
    Frame src, dst;
    src.init(PixFmt::RGBA, 8, 8);
    dst.init(PixFmt::RGBA, 8, 8);
    PinnedFrame s, d;
    if (s.alloc(src) && d.alloc(dst)) {
      zc::SpatialParams bad;
      bad.blur_sigma = 20.0f;
      check(zc::spatial_cuda(s.desc, d.desc, nullptr, bad, stream)
                == cudaErrorInvalidValue,
            "spatial_cuda accepted sigma 20");
      zc::SpatialParams two;
      two.blur_sigma = 1.0f;
      two.edges = true;
      check(zc::spatial_cuda(s.desc, d.desc, nullptr, two, stream)
                == cudaErrorInvalidValue,
            "spatial_cuda accepted two passes without scratch");
    }
  }

  /* Rough timings (not checked). */
  zc::SpatialParams sharpen, edges;
  sharpen.sharpen = 1.0f;
  edges.edges = true;
  gpu_timing(PixFmt::RGBA, 3840, 2160, blur2, "blur sigma 2", stream);
  gpu_timing(PixFmt::RGBA, 3840, 2160, sharpen, "sharpen 1 sigma 1", stream);
  gpu_timing(PixFmt::RGBA, 3840, 2160, edges, "edges", stream);
  gpu_timing(PixFmt::NV12, 3840, 2160, blur2, "blur sigma 2", stream);
  gpu_timing(PixFmt::RGBA, 3840, 2160, big, "blur sigma 16", stream);
  gpu_timing(PixFmt::RGBA, 3840, 2160, all, "blur 1 + sharpen 2 + edges",
             stream);

  cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}

#endif /* GST_ZC_HAVE_CUDA */

} // namespace

int
main(int argc, char **argv)
{
  return zc_test::run_main(argc, argv, 0x5a7141u, run_cpu_tests,
#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
                           run_gpu_tests
#else
                           nullptr
#endif
  );
}

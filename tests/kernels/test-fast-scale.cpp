/* gst-zerocopy: the scaling route against the per-block code
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Bilinear scaling of 8-bit frames (zcfilter's default method): every
 * source family the route takes (4:2:0 semi-planar and planar, 4:2:2
 * planar and packed, 4:4:4, GRAY8, packed R'G'B' with and without alpha)
 * into the 10 packed R'G'B' formats, GRAY8 and Y444, and into the
 * subsampled 8-bit formats (each block's chroma averaged); halvings (the
 * benchmark's NV12 -> RGBA, at 4K once), integer and odd ratios,
 * enlargements, one axis up and one down, one axis unscaled, conversions
 * at the same size (every source into every destination, and the ones
 * where videoconvert replicates chroma: I420 to R'G'B'), shrinks at
 * the 64x limit, odd sizes, crops, destination rectangles with borders,
 * padded and misaligned rows, 1, 2, 3 and all threads, the three
 * matrices in both ranges, and random requests mixing all of these; with
 * zcfilter's point effects too (each, and together), into every 8-bit
 * destination: byte for byte what convert_block() writes, and what the
 * conversion and then the effects on its output write. And what is
 * outside the route (other filters, orientation, effects on a picture off
 * the chroma blocks, deeper formats, same-format scaling) does not take
 * it.
 */
#include "fast-route-check.h"

using zc::Matrix;
using zc::PixFmt;
using namespace zc_test;

static const PixFmt rgb_formats[] = {
  PixFmt::RGBA, PixFmt::BGRA, PixFmt::RGBx, PixFmt::BGRx, PixFmt::ARGB,
  PixFmt::ABGR, PixFmt::xRGB, PixFmt::xBGR, PixFmt::RGB,  PixFmt::BGR,
};

static const PixFmt src_formats[] = {
  PixFmt::NV12, PixFmt::NV21, PixFmt::I420, PixFmt::YV12,  PixFmt::Y42B,
  PixFmt::Y444, PixFmt::YUY2, PixFmt::UYVY, PixFmt::GRAY8, PixFmt::RGBA,
  PixFmt::BGRx, PixFmt::ARGB, PixFmt::RGB,
};

static zc::ConvertParams
bilinear()
{
  zc::ConvertParams p;
  p.sampling = zc::Sampling::Bilinear;
  return p;
}

static std::string
size_name(int sw, int sh, int dw, int dh)
{
  return std::to_string(sw) + "x" + std::to_string(sh) + " -> "
         + std::to_string(dw) + "x" + std::to_string(dh);
}

/* One random source of (sf, sw, sh) into (df, dw, dh). */
static void
scale_case(PixFmt sf, int sw, int sh, PixFmt df, int dw, int dh,
           const zc::ConvertParams &p, unsigned threads, int pad = 0,
           int misalign = 0, Matrix sm = Matrix::BT709, bool sfull = false,
           const char *route = "scale", const char *what = "")
{
  HostFrame src(sf, sw, sh, pad, misalign, sm, sfull);
  src.randomize();
  const std::string name = std::string(zc::pixfmt_name(sf)) + " -> "
                           + zc::pixfmt_name(df) + " "
                           + size_name(sw, sh, dw, dh) + what;
  check_route(name.c_str(), src, df, dw, dh, p, route, threads, pad, misalign);
}

/* The benchmark's shape (a halving on both axes) at small sizes, and the
 * other ratios, for every source into a few destinations. */
static void
ratios()
{
  struct Ratio
  {
    int sw, sh, dw, dh;
  };
  const Ratio ratios[] = {
    { 128, 72, 64, 36 }, /* halving, the benchmark's shape */
    { 130, 74, 65, 37 }, /* halving, odd destination */
    { 99, 51, 33, 17 },  /* exactly 3, 5 taps */
    { 128, 64, 32, 16 }, /* exactly 4, 8 taps */
    { 64, 48, 33, 17 },  /* odd ratio */
    { 33, 17, 64, 40 },  /* enlarging */
    { 40, 30, 80, 15 },  /* one axis up, one down */
    { 50, 20, 25, 45 },  /* one axis down, one up */
    { 64, 48, 64, 24 },  /* only vertical */
    { 48, 30, 24, 30 },  /* only horizontal */
    { 37, 23, 19, 11 },  /* odd sizes */
    { 35, 19, 70, 37 },  /* odd sizes, enlarging */
    { 640, 12, 10, 6 },  /* the 64x limit, horizontally */
    { 12, 320, 7, 5 },   /* the 64x limit, vertically */
    { 16, 640, 16, 10 }, /* 64x vertically alone: 32-bit vertical sums */
    { 1, 1, 3, 2 },      /* a single pixel */
    { 5, 3, 1, 1 },      /* to a single pixel */
  };
  const PixFmt dsts[] = { PixFmt::RGBA, PixFmt::BGR, PixFmt::xRGB,
                          PixFmt::GRAY8, PixFmt::Y444 };
  unsigned threads = 1;
  for (const Ratio &r : ratios) {
    for (PixFmt s : src_formats) {
      for (PixFmt d : dsts) {
        /* (one format on both sides is videoscale's situation: the
         * planar path, which has its own route) */
        scale_case(s, r.sw, r.sh, d, r.dw, r.dh, bilinear(), threads, 0, 0,
                   Matrix::BT709, false, s == d ? "planar" : "scale");
        threads = threads % 3 + 1;
      }
    }
  }
}

/* NV12 into every packed R'G'B' format, with the matrices and ranges, odd
 * sizes, padded and misaligned rows and all thread counts. */
static void
nv12_to_rgb()
{
  const Matrix mats[] = { Matrix::BT601, Matrix::BT709, Matrix::BT2020 };
  const unsigned thread_counts[] = { 1, 2, 3, 0 };
  int i = 0;
  for (PixFmt d : rgb_formats) {
    for (Matrix m : mats) {
      for (bool full : { false, true }) {
        const unsigned t = thread_counts[i % 4];
        const int pad = (i % 3) * 5, misalign = i % 2;
        scale_case(PixFmt::NV12, 128, 72, d, 64, 36, bilinear(), t, pad,
                   misalign, m, full);
        scale_case(PixFmt::NV12, 99, 51, d, 33, 17, bilinear(), t, pad,
                   misalign, m, full);
        scale_case(PixFmt::NV12, 33, 17, d, 64, 40, bilinear(), t, pad,
                   misalign, m, full);
        scale_case(PixFmt::NV12, 301, 171, d, 160, 90, bilinear(), t, pad,
                   misalign, m, full);
        i++;
      }
    }
  }
  /* several bands of rows on each thread count */
  for (unsigned t : thread_counts)
    scale_case(PixFmt::NV12, 1280, 720, PixFmt::RGBA, 640, 360, bilinear(), t);
  scale_case(PixFmt::I420, 1920, 1080, PixFmt::BGRx, 1280, 720, bilinear(), 0);
  scale_case(PixFmt::NV12, 1280, 720, PixFmt::RGBA, 1920, 1080, bilinear(), 2);
}

/* Crops and destination rectangles: the border around the picture, the
 * picture's taps clamped at the crop's edges but its chroma upsampled over
 * the whole frame. */
static void
geometry()
{
  struct Geo
  {
    int cl, ct, cr, cb, x, y, w, h;
    uint32_t border;
  };
  const Geo geos[] = {
    { 0, 0, 0, 0, 3, 2, 40, 20, 0xff000000u },
    { 0, 0, 0, 0, 0, 5, 64, 26, 0x80102030u },
    { 7, 3, 5, 9, 0, 0, 0, 0, 0xff000000u },
    { 1, 1, 2, 2, 5, 0, 50, 36, 0x00ff8040u },
    { 10, 6, 3, 1, 1, 1, 61, 33, 0xffffffffu },
  };
  const PixFmt srcs[] = { PixFmt::NV12, PixFmt::I420, PixFmt::YUY2,
                          PixFmt::Y42B, PixFmt::RGBA, PixFmt::GRAY8 };
  const PixFmt dsts[] = { PixFmt::RGBA, PixFmt::RGB, PixFmt::Y444,
                          PixFmt::GRAY8, PixFmt::ABGR };
  unsigned t = 0;
  int k = 0;
  for (const Geo &g : geos) {
    zc::ConvertParams p = bilinear();
    p.crop_left = g.cl;
    p.crop_top = g.ct;
    p.crop_right = g.cr;
    p.crop_bottom = g.cb;
    p.dst_x = g.x;
    p.dst_y = g.y;
    p.dst_w = g.w;
    p.dst_h = g.h;
    p.border_argb = g.border;
    for (PixFmt s : srcs) {
      for (PixFmt d : dsts) {
        const std::string what
            = " crop " + std::to_string(g.cl) + "," + std::to_string(g.ct)
              + " at " + std::to_string(g.x) + "," + std::to_string(g.y);
        scale_case(s, 97, 75, d, 64, 40, p, t, k % 7, k % 3, Matrix::BT601,
                   k % 2, "scale", what.c_str());
        t = (t + 1) % 4;
        k++;
      }
    }
  }
}

/* Random requests: sizes, crops, destination rectangles, borders, rows,
 * matrices and thread counts drawn from the test's seeded generator. */
static void
random_requests()
{
  const PixFmt srcs[] = {
    PixFmt::NV12, PixFmt::NV21, PixFmt::I420, PixFmt::YV12,  PixFmt::Y42B,
    PixFmt::Y444, PixFmt::YUY2, PixFmt::UYVY, PixFmt::GRAY8, PixFmt::RGBA,
    PixFmt::BGRA, PixFmt::RGBx, PixFmt::ABGR, PixFmt::xBGR,  PixFmt::BGR,
  };
  const PixFmt dsts[] = {
    PixFmt::RGBA, PixFmt::BGRA, PixFmt::RGBx,  PixFmt::BGRx,
    PixFmt::ARGB, PixFmt::ABGR, PixFmt::xRGB,  PixFmt::xBGR,
    PixFmt::RGB,  PixFmt::BGR,  PixFmt::GRAY8, PixFmt::Y444,
    PixFmt::NV12, PixFmt::I420, PixFmt::YUY2,  PixFmt::Y42B,
  };
  auto rnd = [](int a, int b) {
    return std::uniform_int_distribution<int>(a, b)(g_rng);
  };
  for (int it = 0; it < 400; it++) {
    const PixFmt s = srcs[rnd(0, 14)], d = dsts[rnd(0, 15)];
    if (s == d)
      continue;
    const int sw = rnd(1, rnd(0, 3) ? 80 : 400);
    const int sh = rnd(1, rnd(0, 3) ? 60 : 200);
    zc::ConvertParams p = bilinear();
    if (rnd(0, 2) == 0) {
      p.crop_left = rnd(0, sw - 1);
      p.crop_right = rnd(0, sw - 1 - p.crop_left);
      p.crop_top = rnd(0, sh - 1);
      p.crop_bottom = rnd(0, sh - 1 - p.crop_top);
    }
    const int cw = sw - p.crop_left - p.crop_right;
    const int ch = sh - p.crop_top - p.crop_bottom;
    /* anything from the 64x shrink to twice the size, scaled on one axis
     * at least */
    const int rw = rnd((cw + 63) / 64, 2 * cw + 2);
    const int rh = rnd((ch + 63) / 64, 2 * ch + 2);
    if (rw == cw && rh == ch)
      continue;
    int dw = rw, dh = rh;
    if (rnd(0, 2) == 0) {
      dw += rnd(0, 9);
      dh += rnd(0, 9);
      p.dst_x = rnd(0, dw - rw);
      p.dst_y = rnd(0, dh - rh);
      p.dst_w = rw;
      p.dst_h = rh;
      p.border_argb = (uint32_t)g_rng();
    }
    HostFrame src(s, sw, sh, rnd(0, 7), rnd(0, 3), (Matrix)rnd(0, 2),
                  rnd(0, 1));
    src.randomize();
    char name[200];
    std::snprintf(name, sizeof name,
                  "random %d: %s %dx%d crop %d,%d,%d,%d -> %s %dx%d at "
                  "%d,%d %dx%d",
                  it, zc::pixfmt_name(s), sw, sh, p.crop_left, p.crop_top,
                  p.crop_right, p.crop_bottom, zc::pixfmt_name(d), dw, dh,
                  p.dst_x, p.dst_y, rw, rh);
    check_route(name, src, d, dw, dh, p, "scale", rnd(0, 3), rnd(0, 5),
                rnd(0, 3), (Matrix)rnd(0, 2), rnd(0, 1));
  }
}

/* Subsampled destinations (4:2:0 semi-planar and planar, 4:2:2 planar
 * and packed): each block's chroma averaged over its rows, then its
 * columns, a row or column past the frame left out; the first pixel's
 * where both sides have the same subsampling at the same size. Same
 * size, scaled, odd sizes (a last block of one row or column), crops and
 * placements with borders (averaged into the edge blocks). */
static void
subsampled()
{
  const PixFmt dsts[] = { PixFmt::NV12, PixFmt::NV21, PixFmt::I420,
                          PixFmt::YV12, PixFmt::Y42B, PixFmt::YUY2,
                          PixFmt::UYVY };
  const PixFmt srcs[] = { PixFmt::RGBA, PixFmt::BGRx, PixFmt::RGB,
                          PixFmt::ARGB, PixFmt::NV12, PixFmt::NV21,
                          PixFmt::I420, PixFmt::YV12, PixFmt::Y42B,
                          PixFmt::Y444, PixFmt::YUY2, PixFmt::UYVY,
                          PixFmt::GRAY8 };
  struct Shape
  {
    int sw, sh, dw, dh;
  };
  /* (at the same size a pair may take videoconvert's planar chroma
   * scaler instead, so only the scaled shapes are pinned) */
  const Shape same[] = { { 64, 36, 64, 36 }, { 37, 21, 37, 21 } };
  const Shape scaled[] = { { 128, 72, 64, 36 },
                           { 99, 51, 33, 17 },
                           { 33, 17, 64, 40 },
                           { 64, 48, 63, 21 } };
  unsigned t = 0;
  int k = 0;
  for (PixFmt sf : srcs) {
    for (PixFmt df : dsts) {
      if (sf == df)
        continue;
      for (const Shape &z : same)
        scale_case(sf, z.sw, z.sh, df, z.dw, z.dh, bilinear(), t % 4, k % 5,
                   k % 3, (Matrix)(k % 3), k & 1, "*", " same size");
      for (const Shape &z : scaled) {
        scale_case(sf, z.sw, z.sh, df, z.dw, z.dh, bilinear(), t % 4, k % 5,
                   k % 3, (Matrix)(k % 3), k & 1, "scale");
        t++;
        k++;
      }
    }
  }
  /* pairs whose same-size conversion is pinned: the first pixel's chroma
   * (I420 -> YUY2), averaged rows (YUY2 -> I420), R'G'B' into 4:2:0 and
   * 4:2:2, 4:2:2 into 4:2:0 (between 4:2:0 layouts with the same colour
   * it is the repack route's) */
  const PixFmt pinned[][2] = {
    { PixFmt::I420, PixFmt::YUY2 }, { PixFmt::YUY2, PixFmt::I420 },
    { PixFmt::YUY2, PixFmt::NV12 }, { PixFmt::UYVY, PixFmt::NV21 },
    { PixFmt::RGBA, PixFmt::NV12 }, { PixFmt::BGRx, PixFmt::I420 },
    { PixFmt::RGB, PixFmt::YUY2 },  { PixFmt::NV12, PixFmt::UYVY },
  };
  for (const auto &pr : pinned) {
    scale_case(pr[0], 64, 36, pr[1], 64, 36, bilinear(), 2, 0, 0,
               Matrix::BT709, false, "scale", " same size");
    scale_case(pr[0], 37, 21, pr[1], 37, 21, bilinear(), 3, 3, 1,
               Matrix::BT601, true, "scale", " same size, odd");
  }
  scale_case(PixFmt::RGBA, 1920, 1080, PixFmt::NV12, 1920, 1080, bilinear(), 0,
             0, 0, Matrix::BT709, false, "scale", " same size");
  scale_case(PixFmt::YUY2, 1920, 1080, PixFmt::NV12, 1920, 1080, bilinear(), 0,
             0, 0, Matrix::BT709, false, "scale", " same size");
  /* crops and placements, odd offsets: border pixels averaged in */
  zc::ConvertParams p = bilinear();
  p.crop_left = 5;
  p.crop_top = 3;
  p.dst_x = 3;
  p.dst_y = 1;
  p.dst_w = 51;
  p.dst_h = 27;
  p.border_argb = 0xff20c040u;
  for (PixFmt df : dsts)
    for (PixFmt sf : { PixFmt::RGBA, PixFmt::NV12, PixFmt::YUY2 })
      scale_case(sf, 70, 40, df, 58, 31, p, 2, 1, 0, Matrix::BT601, false,
                 "scale", " cropped and placed");
}

/* The benchmark itself, once: NV12 3840x2160 -> RGBA 1920x1080. */
static void
benchmark_case()
{
  scale_case(PixFmt::NV12, 3840, 2160, PixFmt::RGBA, 1920, 1080, bilinear(), 0);
}

/* Requests outside the route go to the per-block code (or their own
 * planar path), and still match it. */
static void
not_taken()
{
  zc::ConvertParams p = bilinear();
  p.sampling = zc::Sampling::Bicubic;
  scale_case(PixFmt::NV12, 64, 36, PixFmt::RGBA, 32, 18, p, 1, 0, 0,
             Matrix::BT709, false, "blocks", " bicubic");
  p = bilinear();
  p.sampling = zc::Sampling::Nearest;
  scale_case(PixFmt::NV12, 64, 36, PixFmt::RGBA, 32, 18, p, 1, 0, 0,
             Matrix::BT709, false, "blocks", " nearest");
  p = bilinear();
  p.orientation = zc::Orientation::Rotate90R;
  scale_case(PixFmt::NV12, 64, 36, PixFmt::RGBA, 18, 32, p, 1, 0, 0,
             Matrix::BT709, false, "blocks", " rotated");
  p = bilinear();
  p.orientation = zc::Orientation::FlipH;
  scale_case(PixFmt::NV12, 64, 36, PixFmt::RGBA, 32, 18, p, 1, 0, 0,
             Matrix::BT709, false, "blocks", " flipped");
  /* effects on a subsampled picture off its chroma blocks */
  p = bilinear();
  p.brightness = 0.25;
  p.dst_x = 1;
  p.dst_w = 30;
  scale_case(PixFmt::RGBA, 64, 36, PixFmt::NV12, 32, 18, p, 1, 0, 0,
             Matrix::BT709, false, "blocks", " brightness, placed off");
  /* effects on 10-bit destinations */
  p = bilinear();
  p.invert = true;
  scale_case(PixFmt::NV12, 64, 36, PixFmt::P010_10LE, 32, 18, p, 1, 0, 0,
             Matrix::BT709, false, "blocks", " inverted");
  /* deeper formats on either side */
  scale_case(PixFmt::P010_10LE, 64, 36, PixFmt::RGBA, 32, 18, bilinear(), 1, 0,
             0, Matrix::BT709, false, "blocks");
  scale_case(PixFmt::NV12, 64, 36, PixFmt::GRAY16_LE, 32, 18, bilinear(), 1, 0,
             0, Matrix::BT709, false, "blocks");

  /* same format: plane by plane as videoscale (zcplanar-common.h), which
   * is not what this route computes */
  HostFrame rgba(PixFmt::RGBA, 64, 36), nv12(PixFmt::NV12, 64, 36);
  const char *a = zc::convert_cpu_route(
      rgba.desc, HostFrame(PixFmt::RGBA, 32, 18).desc, bilinear());
  const char *b = zc::convert_cpu_route(
      nv12.desc, HostFrame(PixFmt::NV12, 32, 18).desc, bilinear());
  check(a && std::strcmp(a, "scale") != 0,
        "RGBA -> RGBA scaled takes the scale route");
  check(b && std::strcmp(b, "scale") != 0,
        "NV12 -> NV12 scaled takes the scale route");
  /* refused requests stay refused */
  const char *c = zc::convert_cpu_route(
      nv12.desc, HostFrame(PixFmt::RGBA, 32, 18).desc, [] {
        zc::ConvertParams q = bilinear();
        q.crop_left = 100;
        return q;
      }());
  check(c == nullptr, "an over-large crop is refused (%s)", c ? c : "null");
  const char *e
      = zc::convert_cpu_route(HostFrame(PixFmt::NV12, 650, 36).desc,
                              HostFrame(PixFmt::RGBA, 10, 18).desc, bilinear());
  check(e == nullptr, "a shrink past 64x is refused (%s)", e ? e : "null");
}

/* Conversions at the same size (no filtering: one tap of weight 1), any
 * method: every source into every destination the route takes. Which
 * route a pair takes depends on videoconvert's fast paths (repacks, I420
 * -> R'G'B' replicating chroma), so only the common ones are pinned. */
static void
same_size()
{
  const PixFmt dsts[] = { PixFmt::RGBA, PixFmt::BGRx, PixFmt::RGB,
                          PixFmt::ARGB, PixFmt::GRAY8, PixFmt::Y444 };
  unsigned threads = 0;
  for (PixFmt s : src_formats)
    for (PixFmt d : dsts)
      for (zc::Sampling m : { zc::Sampling::Nearest, zc::Sampling::Bilinear })
        if (s != d) {
          zc::ConvertParams p;
          p.sampling = m;
          scale_case(s, 37, 21, d, 37, 21, p, threads, 3, 1, Matrix::BT601,
                     true, "*", " same size");
          threads = (threads + 1) % 4;
        }
  for (PixFmt s : { PixFmt::NV12, PixFmt::NV21, PixFmt::YUY2, PixFmt::UYVY,
                    PixFmt::Y42B })
    for (PixFmt d : rgb_formats)
      scale_case(s, 64, 36, d, 64, 36, bilinear(), 2, 0, 0, Matrix::BT709,
                 false, "scale", " same size");
  /* videoconvert's fast paths that replicate each chroma sample instead
   * of upsampling it (I420 -> R'G'B' with its own arithmetic, YUY2 ->
   * Y444): the route decodes the chroma the same way */
  for (PixFmt s : { PixFmt::I420, PixFmt::YV12 })
    for (PixFmt d : rgb_formats)
      for (int w : { 64, 37 })
        scale_case(s, w, 21, d, w, 21, bilinear(), 2, w & 3, w & 1,
                   Matrix::BT601, w & 1, "scale", " same size, replicated");
  for (PixFmt s : { PixFmt::YUY2, PixFmt::UYVY })
    for (int w : { 64, 37 })
      scale_case(s, w, 21, PixFmt::Y444, w, 21, bilinear(), 3, w & 3, w & 1,
                 Matrix::BT709, false, "scale", " same size, replicated");
  scale_case(PixFmt::I420, 1920, 1080, PixFmt::RGBA, 1920, 1080, bilinear(), 0,
             0, 0, Matrix::BT709, false, "scale", " same size");
  scale_case(PixFmt::NV12, 1920, 1080, PixFmt::RGBA, 1920, 1080, bilinear(), 0,
             0, 0, Matrix::BT709, false, "scale", " same size");
  /* cropped to the destination's size, and placed with borders */
  zc::ConvertParams crop = bilinear();
  crop.crop_left = 6;
  crop.crop_top = 2;
  scale_case(PixFmt::NV12, 70, 38, PixFmt::RGBA, 64, 36, crop, 1, 0, 0,
             Matrix::BT709, false, "scale", " cropped, same size");
  zc::ConvertParams placed = bilinear();
  placed.dst_x = 4;
  placed.dst_y = 2;
  placed.dst_w = 64;
  placed.dst_h = 36;
  scale_case(PixFmt::NV12, 64, 36, PixFmt::RGBA, 72, 40, placed, 3, 0, 0,
             Matrix::BT709, false, "scale", " placed, same size");
}

/* zcfilter's point effects */
struct Fx
{
  const char *name;
  double brightness, contrast, saturation, hue, gamma;
  bool grayscale, invert;
};

static const Fx effect_settings[] = {
  { "brightness -0.1", -0.1, 1, 1, 0, 1, false, false },
  { "contrast 1.3", 0, 1.3, 1, 0, 1, false, false },
  { "saturation 1.4 hue 0.3", 0, 1, 1.4, 0.3, 1, false, false },
  { "hue -0.2", 0, 1, 1, -0.2, 1, false, false },
  { "grayscale", 0, 1, 1, 0, 1, true, false },
  { "gamma 2.2", 0, 1, 1, 0, 2.2, false, false },
  { "invert", 0, 1, 1, 0, 1, false, true },
  { "contrast 0.8 gamma 0.6 invert", 0, 0.8, 1, 0, 0.6, false, true },
  { "all", -0.15, 0.8, 0.7, -0.35, 1.7, true, true },
};

static zc::ConvertParams
with(const Fx &e, zc::ConvertParams p = bilinear())
{
  p.brightness = e.brightness;
  p.contrast = e.contrast;
  p.saturation = e.saturation;
  p.hue = e.hue;
  p.gamma = e.gamma;
  p.grayscale = e.grayscale;
  p.invert = e.invert;
  return p;
}

static bool
subsampled_format(PixFmt f)
{
  for (PixFmt s : { PixFmt::NV12, PixFmt::NV21, PixFmt::I420, PixFmt::YV12,
                    PixFmt::Y42B, PixFmt::YUY2, PixFmt::UYVY })
    if (f == s)
      return true;
  return false;
}

/* Point effects with the scaling or conversion (zcfilter brightness=-0.1
 * ! video/x-raw,format=RGBA,width=1280,height=720, where users compare
 * with videoconvertscale ! videobalance): the route runs the effects on
 * the rows it has just stored, not the per-block code. Every setting into
 * every 8-bit destination, scaled, enlarged, odd sizes, at the same size,
 * and placed with borders (which the effects leave alone): on the chroma
 * blocks, and off them, where a subsampled destination goes to the
 * per-block code. */
static void
effects()
{
  const PixFmt dsts[] = {
    PixFmt::RGBA,  PixFmt::BGRA, PixFmt::RGBx, PixFmt::BGRx, PixFmt::ARGB,
    PixFmt::ABGR,  PixFmt::xRGB, PixFmt::xBGR, PixFmt::RGB,  PixFmt::BGR,
    PixFmt::GRAY8, PixFmt::Y444, PixFmt::NV12, PixFmt::NV21, PixFmt::I420,
    PixFmt::YV12,  PixFmt::Y42B, PixFmt::YUY2, PixFmt::UYVY,
  };
  const PixFmt srcs[] = { PixFmt::NV12, PixFmt::I420,  PixFmt::YUY2,
                          PixFmt::RGBA, PixFmt::GRAY8, PixFmt::BGR };
  struct Shape
  {
    int sw, sh, dw, dh;
    const char *route; /* (at the same size, another route or the
                          per-block code may take a pair) */
  };
  const Shape shapes[] = {
    { 64, 36, 32, 18, "scale" },
    { 37, 21, 23, 13, "scale" },
    { 20, 12, 45, 27, "scale" },
    { 37, 21, 37, 21, "*" },
  };
  int k = 0;
  for (const Fx &e : effect_settings) {
    for (PixFmt d : dsts) {
      for (const Shape &z : shapes) {
        const PixFmt sf = srcs[k % 6];
        const std::string what = std::string(" ") + e.name;
        HostFrame src(sf, z.sw, z.sh, k % 5, k % 3, (Matrix)(k % 3), k & 1);
        src.randomize();
        const std::string name = std::string(zc::pixfmt_name(sf)) + " -> "
                                 + zc::pixfmt_name(d) + " "
                                 + size_name(z.sw, z.sh, z.dw, z.dh) + what;
        check_route(name.c_str(), src, d, z.dw, z.dh, with(e), z.route, k % 4,
                    k % 5, k % 3, (Matrix)((k + 1) % 3), k % 4 == 1);
        k++;
      }
      /* placed with borders: on the chroma blocks, and off them */
      zc::ConvertParams on = with(e);
      on.dst_x = 4;
      on.dst_y = 2;
      on.dst_w = 64;
      on.dst_h = 36;
      on.border_argb = 0xff20c040u;
      scale_case(srcs[k % 6], 97, 75, d, 72, 40, on, k % 4, k % 3, 0,
                 Matrix::BT601, k & 1, "scale",
                 (std::string(" placed, ") + e.name).c_str());
      zc::ConvertParams off = on;
      off.dst_x = 3;
      off.dst_y = 1;
      off.dst_w = 61;
      off.dst_h = 33;
      scale_case(srcs[k % 6], 97, 75, d, 72, 40, off, k % 4, 0, k % 3,
                 Matrix::BT709, false,
                 subsampled_format(d) ? "blocks" : "scale",
                 (std::string(" placed off the blocks, ") + e.name).c_str());
      k++;
    }
  }
  /* the requests of the report: HD into RGBA scaled and not, and into
   * NV12 scaled (the effects make it a conversion through 4:4:4, not
   * videoscale's plane by plane) */
  zc::ConvertParams b = with(effect_settings[0]);
  scale_case(PixFmt::NV12, 1920, 1080, PixFmt::RGBA, 1280, 720, b, 0, 0, 0,
             Matrix::BT709, false, "scale", " brightness");
  scale_case(PixFmt::NV12, 1920, 1080, PixFmt::RGBA, 1920, 1080, b, 0, 0, 0,
             Matrix::BT709, false, "scale", " brightness");
  scale_case(PixFmt::NV12, 1920, 1080, PixFmt::NV12, 1280, 720, b, 0, 0, 0,
             Matrix::BT709, false, "scale", " brightness");
}

/* One request with effects writes what the conversion alone followed by
 * the effects alone on its output write (zcfilter ! zcfilter
 * brightness=...), whichever routes they take: into another format, where
 * the conversion's plan does not depend on the effects. */
static void
effects_fused_as_split()
{
  struct Pair
  {
    PixFmt s, d;
    int sw, sh, dw, dh;
  };
  const Pair pairs[] = {
    { PixFmt::NV12, PixFmt::RGBA, 640, 360, 320, 180 },
    { PixFmt::NV12, PixFmt::RGBA, 160, 90, 160, 90 },
    { PixFmt::I420, PixFmt::BGRx, 99, 51, 33, 17 },
    { PixFmt::RGBA, PixFmt::NV12, 128, 72, 64, 36 },
    { PixFmt::YUY2, PixFmt::RGB, 33, 17, 64, 40 },
  };
  int k = 0;
  for (const Pair &pr : pairs) {
    HostFrame src(pr.s, pr.sw, pr.sh);
    src.randomize();
    for (const Fx &e : effect_settings) {
      const unsigned t = k++ % 4;
      HostFrame fused(pr.d, pr.dw, pr.dh), mid(pr.d, pr.dw, pr.dh),
          split(pr.d, pr.dw, pr.dh);
      const std::string name = std::string(zc::pixfmt_name(pr.s)) + " -> "
                               + zc::pixfmt_name(pr.d) + " "
                               + size_name(pr.sw, pr.sh, pr.dw, pr.dh) + " "
                               + e.name + ", fused and split";
      bool ok = zc::convert_cpu(src.desc, fused.desc, with(e), t)
                && zc::convert_cpu(src.desc, mid.desc, bilinear(), t)
                && zc::convert_cpu(mid.desc, split.desc,
                                   with(e, zc::ConvertParams()), t);
      if (!check(ok, "%s: refused", name.c_str()))
        continue;
      bool same = true;
      for (int p = 0; p < zc::pixfmt_n_planes(pr.d); p++)
        same = same
               && std::memcmp(fused.desc.planes[p], split.desc.planes[p],
                              fused.plane_bytes(p))
                      == 0;
      check(same, "%s: the bytes differ", name.c_str());
    }
  }
}

static int
cpu_tests()
{
  ratios();
  same_size();
  nv12_to_rgb();
  geometry();
  subsampled();
  random_requests();
  not_taken();
  effects();
  effects_fused_as_split();
  benchmark_case();
  return 0;
}

int
main(int argc, char **argv)
{
  return run_main(argc, argv, 4243, cpu_tests, [] { return 77; });
}

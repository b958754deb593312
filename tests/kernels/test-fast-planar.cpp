/* gst-zerocopy: the plane-by-plane scaling route against the per-block code
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Scaling with one format on both sides (videoscale's situation): every
 * format the planar scaler takes (the 10 packed R'G'B' formats, GRAY8,
 * GRAY16_LE, NV12, NV21, I420, YV12, Y42B, Y444, YUY2, UYVY), bilinear and
 * bicubic; halvings (averaged, rows first), shrinks by 2 to 8 and past
 * them (the vertical pass then goes first), enlargements, one axis
 * unscaled, odd sizes (the odd last macropixel of YUY2), a single pixel,
 * padded and misaligned rows, 1 to 4 and all threads, and random requests:
 * byte for byte what convert_block() writes. And what the planar scaler
 * does not do (crops, orientation, nearest, placement, effects, 10-bit
 * formats, another format out) does not take the route.
 */
#include "fast-route-check.h"

using zc::Matrix;
using zc::PixFmt;
using namespace zc_test;

static const PixFmt planar_formats[] = {
  PixFmt::RGBA, PixFmt::BGRA, PixFmt::RGBx,  PixFmt::BGRx,
  PixFmt::ARGB, PixFmt::ABGR, PixFmt::xRGB,  PixFmt::xBGR,
  PixFmt::RGB,  PixFmt::BGR,  PixFmt::GRAY8, PixFmt::GRAY16_LE,
  PixFmt::NV12, PixFmt::NV21, PixFmt::I420,  PixFmt::YV12,
  PixFmt::Y42B, PixFmt::Y444, PixFmt::YUY2,  PixFmt::UYVY,
};

static zc::ConvertParams
method(zc::Sampling s)
{
  zc::ConvertParams p;
  p.sampling = s;
  return p;
}

/* One random frame of f, sw x sh, scaled to dw x dh with p. */
static void
planar_case(PixFmt f, int sw, int sh, int dw, int dh,
            const zc::ConvertParams &p, unsigned threads, int pad = 0,
            int misalign = 0, const char *route = "planar",
            const char *what = "")
{
  HostFrame src(f, sw, sh, pad, misalign);
  src.randomize();
  const std::string name
      = std::string(zc::pixfmt_name(f)) + " " + std::to_string(sw) + "x"
        + std::to_string(sh) + " -> " + std::to_string(dw) + "x"
        + std::to_string(dh)
        + (p.sampling == zc::Sampling::Bicubic ? " bicubic" : " bilinear")
        + what;
  check_route(name.c_str(), src, f, dw, dh, p, route, threads, pad, misalign);
}

/* Every format through the ratios whose passes differ: which kernels run,
 * which pass goes first, how many taps. */
static void
ratios()
{
  struct Ratio
  {
    int sw, sh, dw, dh;
    const char *what;
  };
  const Ratio ratios[] = {
    { 128, 72, 64, 36, ", halving" },
    { 128, 72, 64, 72, ", halving across" },
    { 128, 72, 128, 36, ", halving down" },
    { 130, 74, 65, 37, ", halving to odd" },
    { 96, 54, 64, 36, ", two thirds" },
    { 99, 51, 33, 17, ", a third" },
    { 64, 96, 40, 12, ", an eighth down (vertical first)" },
    { 160, 150, 20, 10, ", past an eighth" },
    { 64, 36, 96, 54, ", enlarging" },
    { 33, 17, 64, 40, ", enlarging, odd" },
    { 64, 48, 64, 23, ", only vertical" },
    { 48, 30, 23, 30, ", only horizontal" },
    { 37, 23, 19, 11, ", odd sizes" },
    { 35, 19, 71, 37, ", odd sizes, enlarging" },
    { 1, 1, 3, 2, ", a single pixel" },
    { 5, 3, 1, 1, ", to a single pixel" },
  };
  unsigned threads = 1;
  int k = 0;
  for (const Ratio &r : ratios) {
    for (PixFmt f : planar_formats) {
      for (zc::Sampling m : { zc::Sampling::Bilinear, zc::Sampling::Bicubic }) {
        /* (a single-pixel frame of a subsampled format is refused on both
         * ways alike: planar_case() checks that they agree) */
        planar_case(f, r.sw, r.sh, r.dw, r.dh, method(m), threads, k % 5,
                    k % 3, "*", r.what);
        threads = threads % 4 + 1;
        k++;
      }
    }
  }
}

/* The common requests pinned to the route, at sizes where each thread
 * gets several rows, with all threads. */
static void
common()
{
  const zc::ConvertParams bl = method(zc::Sampling::Bilinear);
  const zc::ConvertParams bc = method(zc::Sampling::Bicubic);
  for (PixFmt f : planar_formats) {
    planar_case(f, 192, 108, 128, 72, bl, 0, 0, 0, "planar", ", 2/3");
    planar_case(f, 128, 72, 192, 108, bc, 0, 0, 0, "planar", ", 3/2");
    planar_case(f, 101, 61, 37, 23, bl, 2, 5, 1, "planar", ", odd");
    planar_case(f, 160, 90, 80, 45, bl, 3, 0, 0, "planar", ", halving");
    planar_case(f, 96, 200, 96, 30, bc, 4, 0, 0, "planar", ", vertical first");
  }
  planar_case(PixFmt::RGBA, 1920, 1080, 1280, 720, bl, 0, 0, 0, "planar");
  planar_case(PixFmt::NV12, 1280, 720, 1920, 1080, bl, 0, 0, 0, "planar");
  planar_case(PixFmt::I420, 1920, 1080, 1280, 720, bc, 0, 0, 0, "planar");
}

/* Random sizes, both methods, rows and threads from the test's seeded
 * generator. */
static void
random_requests()
{
  auto rnd = [](int a, int b) {
    return std::uniform_int_distribution<int>(a, b)(g_rng);
  };
  const int n_formats = (int)(sizeof(planar_formats) / sizeof(planar_formats[0]));
  for (int it = 0; it < 300; it++) {
    const PixFmt f = planar_formats[rnd(0, n_formats - 1)];
    const int sw = rnd(2, rnd(0, 3) ? 80 : 300);
    const int sh = rnd(2, rnd(0, 3) ? 60 : 200);
    const int dw = rnd((sw + 7) / 8, 2 * sw + 2);
    const int dh = rnd((sh + 7) / 8, 2 * sh + 2);
    if (dw == sw && dh == sh)
      continue;
    const zc::Sampling m
        = rnd(0, 1) ? zc::Sampling::Bilinear : zc::Sampling::Bicubic;
    planar_case(f, sw, sh, dw, dh, method(m), (unsigned)rnd(0, 4), rnd(0, 7),
                rnd(0, 3), "*", ", random");
  }
}

/* What the planar scaler leaves to the per-block code, or to the other
 * routes. */
static void
not_taken()
{
  const zc::ConvertParams bl = method(zc::Sampling::Bilinear);
  auto route = [](PixFmt sf, int sw, int sh, PixFmt df, int dw, int dh,
                  const zc::ConvertParams &p) {
    const char *r = zc::convert_cpu_route(HostFrame(sf, sw, sh).desc,
                                          HostFrame(df, dw, dh).desc, p);
    return std::string(r ? r : "(refused)");
  };
  zc::ConvertParams p = bl;
  p.crop_left = 4;
  check(route(PixFmt::RGBA, 64, 36, PixFmt::RGBA, 32, 18, p) != "planar",
        "a cropped scale does not take the planar route");
  p = bl;
  p.orientation = zc::Orientation::Rotate90R;
  check(route(PixFmt::I420, 64, 36, PixFmt::I420, 18, 32, p) != "planar",
        "a turned scale does not take the planar route");
  p = method(zc::Sampling::Nearest);
  check(route(PixFmt::NV12, 64, 36, PixFmt::NV12, 32, 18, p) != "planar",
        "nearest scaling does not take the planar route");
  p = bl;
  p.dst_x = 2;
  p.dst_w = 28;
  check(route(PixFmt::RGBA, 64, 36, PixFmt::RGBA, 32, 18, p) != "planar",
        "a placed picture does not take the planar route");
  p = bl;
  p.contrast = 1.5;
  check(route(PixFmt::RGBA, 64, 36, PixFmt::RGBA, 32, 18, p) != "planar",
        "a scale with effects does not take the planar route");
  check(route(PixFmt::P010_10LE, 64, 36, PixFmt::P010_10LE, 32, 18, bl)
            != "planar",
        "a 10-bit scale does not take the planar route");
  check(route(PixFmt::NV12, 64, 36, PixFmt::RGBA, 32, 18, bl) == "scale",
        "a scale into another format takes the scale route");
  check(route(PixFmt::RGBA, 64, 36, PixFmt::RGBA, 64, 36, bl) != "planar",
        "a same-size copy does not take the planar route");
  /* and they still match the per-block code */
  p = bl;
  p.crop_left = 4;
  planar_case(PixFmt::RGBA, 64, 36, 32, 18, p, 1, 0, 0, "*", ", cropped");
  p = bl;
  p.contrast = 1.5;
  planar_case(PixFmt::I420, 64, 36, 32, 18, p, 1, 0, 0, "*", ", contrast");
}

static int
cpu_tests()
{
  ratios();
  common();
  random_requests();
  not_taken();
  return 0;
}

int
main(int argc, char **argv)
{
  return run_main(argc, argv, 4247, cpu_tests, [] { return 77; });
}

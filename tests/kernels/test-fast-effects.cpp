/* gst-zerocopy: the point-effects route against the per-block code
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every format, a frame to itself with zcfilter's point effects (each
 * alone, together, at the ends of their ranges, and random settings), odd
 * and even sizes, padded and misaligned rows, several thread counts, full
 * and limited range: byte for byte what convert_block() writes, padding
 * left alone; also RGBA to RGBx and the like (one layout). And requests
 * that also move, scale or convert the picture, or have no effect, do not
 * take the route.
 */
#include "fast-route-check.h"

using zc::PixFmt;
using namespace zc_test;

struct Effects
{
  const char *name;
  float brightness, contrast, saturation, hue, gamma;
  bool grayscale, invert;
};

/* brightness, contrast, saturation, hue, gamma, grayscale, invert */
static const Effects fixed_effects[] = {
  {"brightness 0.1", 0.1f, 1, 1, 0, 1, false, false},
  {"contrast 1.2", 0, 1.2f, 1, 0, 1, false, false},
  {"saturation 1.3", 0, 1, 1.3f, 0, 1, false, false},
  {"hue 0.2", 0, 1, 1, 0.2f, 1, false, false},
  {"grayscale", 0, 1, 1, 0, 1, true, false},
  {"gamma 2.2", 0, 1, 1, 0, 2.2f, false, false},
  {"invert", 0, 1, 1, 0, 1, false, true},
  {"balance", 0.1f, 1.2f, 1.3f, 0.2f, 1, false, false},
  {"invert contrast gamma", 0, 1.3f, 1, 0, 0.6f, false, true},
  {"all", -0.15f, 0.8f, 0.7f, -0.35f, 1.7f, true, true},
  {"all but grayscale", 0.05f, 1.1f, 1.6f, 0.5f, 0.45f, false, true},
  {"brightness -1", -1, 1, 1, 0, 1, false, false},
  {"brightness 1", 1, 1, 1, 0, 1, false, false},
  {"contrast 0", 0, 0, 1, 0, 1, false, false},
  {"contrast 2", 0, 2, 1, 0, 1, false, false},
  {"saturation 0", 0, 1, 0, 0, 1, false, false},
  {"saturation 2", 0, 1, 2, 0, 1, false, false},
  {"hue -1", 0, 1, 1, -1, 1, false, false},
  {"hue 1", 0, 1, 1, 1, 1, false, false},
  {"hue 0.5", 0, 1, 1, 0.5f, 1, false, false},
  {"gamma 0.01", 0, 1, 1, 0, 0.01f, false, false},
  {"gamma 10", 0, 1, 1, 0, 10, false, false},
  {"extremes", 1, 2, 2, -1, 10, false, true},
  {"extremes 2", -1, 0, 0, 1, 0.01f, true, true},
  {"saturation 2 hue 0.25 gamma", 0, 1, 2, 0.25f, 3, false, false},
  /* chroma sums on exact halves (rounded to even) */
  {"saturation 0.5", 0, 1, 0.5f, 0, 1, false, false},
  {"saturation 1.5 hue 1", 0, 1, 1.5f, 1, 1, false, false},
  {"saturation 0.5 hue 0.5 invert", 0, 1, 0.5f, 0.5f, 1, false, true},
};

static zc::ConvertParams
params_of(const Effects &e)
{
  zc::ConvertParams p;
  p.brightness = e.brightness;
  p.contrast = e.contrast;
  p.saturation = e.saturation;
  p.hue = e.hue;
  p.gamma = e.gamma;
  p.grayscale = e.grayscale;
  p.invert = e.invert;
  return p;
}

/* A random setting: each effect on with probability 1/2. */
static zc::ConvertParams
random_params()
{
  zc::ConvertParams p;
  auto coin = [] { return std::uniform_int_distribution<int>(0, 1)(g_rng); };
  if (coin())
    p.brightness = uniform(-1, 1);
  if (coin())
    p.contrast = uniform(0, 2);
  if (coin())
    p.saturation = uniform(0, 2);
  if (coin())
    p.hue = uniform(-1, 1);
  if (coin())
    p.gamma = coin() ? uniform(0.01f, 1) : uniform(1, 10);
  p.grayscale = std::uniform_int_distribution<int>(0, 7)(g_rng) == 0;
  p.invert = coin();
  if (!p.invert && p.gamma == 1.0f && p.brightness == 0.0f)
    p.brightness = 0.25f; /* something to do */
  return p;
}

static const Size sizes[] = {
  {33, 17, 0, 0, 1},  {64, 48, 12, 0, 3},  {37, 5, 5, 1, 2},
  {1, 1, 0, 0, 1},    {2, 3, 3, 1, 0},     {1920, 8, 0, 0, 0},
  {640, 120, 4, 2, 3}, {1920, 40, 0, 0, 0},
};

/* One setting on every format and size (or the small sizes only). Y'CbCr
 * and GRAY frames three ways: limited range, full range, and a BT.601
 * limited-range source into a full-range destination (a frame of the same
 * format and matrix is not converted, but the invert is defined in the
 * destination's range). */
static void
check_setting(const std::string &what, const zc::ConvertParams &p,
              bool all_sizes)
{
  for (PixFmt f : zc::kAllPixFmts) {
    const int n_ranges = is_yuv(f) ? 3 : 1;
    for (const Size &z : sizes) {
      if (!all_sizes && z.w * z.h > 4096)
        continue;
      for (int r = 0; r < n_ranges; r++) {
        const bool sfull = r == 1, dfull = r >= 1;
        const zc::Matrix m = r == 2 ? zc::Matrix::BT601 : zc::Matrix::BT709;
        HostFrame src(f, z.w, z.h, z.pad, z.misalign, m, sfull);
        src.randomize();
        const std::string name = what + ": " + zc::pixfmt_name(f) + " "
                                 + std::to_string(z.w) + "x"
                                 + std::to_string(z.h) + " range "
                                 + std::to_string(r) + " threads "
                                 + std::to_string(z.threads);
        check_route(name.c_str(), src, f, z.w, z.h, p, "effects", z.threads,
                    z.pad, z.misalign, m, dfull);
      }
    }
  }
}

/* Requests the route must leave to others. */
static void
check_not_taken()
{
  zc::ConvertParams fx;
  fx.brightness = 0.1f;
  fx.hue = 0.2f;
  struct Case
  {
    const char *name;
    PixFmt sf, df;
    int dw, dh;
    zc::ConvertParams p;
    zc::Matrix sm, dm;
  };
  std::vector<Case> cases;
  auto add = [&](const char *name, PixFmt sf, PixFmt df, int dw, int dh,
                 const zc::ConvertParams &p,
                 zc::Matrix sm = zc::Matrix::BT709,
                 zc::Matrix dm = zc::Matrix::BT709) {
    cases.push_back(Case{name, sf, df, dw, dh, p, sm, dm});
  };
  zc::ConvertParams p = fx;
  p.crop_left = 2;
  add("RGBA cropped", PixFmt::RGBA, PixFmt::RGBA, 32, 18, p);
  add("NV12 cropped", PixFmt::NV12, PixFmt::NV12, 32, 18, p);
  p = fx;
  p.orientation = zc::Orientation::Rotate180;
  add("RGBA rotated", PixFmt::RGBA, PixFmt::RGBA, 34, 18, p);
  add("I420 rotated", PixFmt::I420, PixFmt::I420, 34, 18, p);
  p = fx;
  p.orientation = zc::Orientation::FlipH;
  add("NV12 flipped", PixFmt::NV12, PixFmt::NV12, 34, 18, p);
  p = fx;
  p.dst_x = 2;
  p.dst_w = 30;
  add("RGBA placed", PixFmt::RGBA, PixFmt::RGBA, 34, 18, p);
  add("NV12 placed", PixFmt::NV12, PixFmt::NV12, 34, 18, p);
  add("RGBA scaled", PixFmt::RGBA, PixFmt::RGBA, 17, 9, fx);
  add("NV12 scaled", PixFmt::NV12, PixFmt::NV12, 68, 36, fx);
  p = fx;
  p.sampling = zc::Sampling::Bilinear;
  add("RGBA scaled bilinear", PixFmt::RGBA, PixFmt::RGBA, 17, 9, p);
  add("RGBA -> BGRA", PixFmt::RGBA, PixFmt::BGRA, 34, 18, fx);
  add("NV12 -> I420", PixFmt::NV12, PixFmt::I420, 34, 18, fx);
  add("NV12 -> RGBA", PixFmt::NV12, PixFmt::RGBA, 34, 18, fx);
  add("I420 -> I420_10LE", PixFmt::I420, PixFmt::I420_10LE, 34, 18, fx);
  add("NV12 BT601 -> BT709", PixFmt::NV12, PixFmt::NV12, 34, 18, fx,
      zc::Matrix::BT601, zc::Matrix::BT709);
  add("RGBA no effect", PixFmt::RGBA, PixFmt::RGBA, 34, 18,
      zc::ConvertParams());
  add("NV12 no effect", PixFmt::NV12, PixFmt::NV12, 34, 18,
      zc::ConvertParams());

  for (const Case &c : cases) {
    HostFrame src(c.sf, 34, 18, 0, 0, c.sm);
    src.randomize();
    HostFrame dst(c.df, c.dw, c.dh, 0, 0, c.dm);
    const char *took = zc::convert_cpu_route(src.desc, dst.desc, c.p);
    check(took && std::strcmp(took, "effects") != 0,
          "%s: takes route %s, not the effects route", c.name,
          took ? took : "(refused)");
    /* and still converts as the reference does */
    const std::string name = std::string(c.name) + " (converted)";
    if (took)
      check_route(name.c_str(), src, c.df, c.dw, c.dh, c.p, took, 2, 0, 0,
                  c.dm, false);
  }
}

/* RGBA and RGBx (and the other pairs that differ only in naming their
 * fourth byte) are the same layout, the padding byte carrying alpha as in
 * GStreamer: the same bytes to move, so the route takes them. */
static void
check_alpha_padding()
{
  const PixFmt pairs[][2] = {
    {PixFmt::RGBA, PixFmt::RGBx}, {PixFmt::RGBx, PixFmt::RGBA},
    {PixFmt::BGRA, PixFmt::BGRx}, {PixFmt::ARGB, PixFmt::xRGB},
    {PixFmt::xBGR, PixFmt::ABGR},
  };
  const zc::ConvertParams p = params_of(fixed_effects[7]);
  for (const auto &fp : pairs) {
    HostFrame src(fp[0], 37, 9, 3, 1);
    src.randomize();
    const std::string name = std::string(zc::pixfmt_name(fp[0])) + " -> "
                             + zc::pixfmt_name(fp[1]);
    check_route(name.c_str(), src, fp[1], 37, 9, p, "effects", 2, 3, 1);
  }
}

/* Every R'G'B' value once (a 4096x4096 RGBA frame), through settings of
 * both R'G'B' round trips and the invert: the vector loops' sums and
 * look-ups against the per-block arithmetic on all 2^24 inputs. */
static void
check_every_rgb()
{
  HostFrame src(PixFmt::RGBA, 4096, 4096, 0, 0);
  uint8_t *px = src.desc.planes[0];
  for (uint32_t i = 0; i < 4096u * 4096u; i++) {
    px[4 * (size_t)i] = (uint8_t)i;
    px[4 * (size_t)i + 1] = (uint8_t)(i >> 8);
    px[4 * (size_t)i + 2] = (uint8_t)(i >> 16);
    px[4 * (size_t)i + 3] = (uint8_t)(i * 13);
  }
  /* invert contrast gamma; contrast 2; brightness 1; gamma 2.2 */
  for (int k : {8, 14, 12, 5})
    check_route((std::string("every R'G'B' value: ") + fixed_effects[k].name)
                    .c_str(),
                src, PixFmt::RGBA, 4096, 4096, params_of(fixed_effects[k]),
                "effects", 2);
}

static int
cpu_tests()
{
  for (const Effects &e : fixed_effects)
    check_setting(e.name, params_of(e), true);
  for (int i = 0; i < 24; i++)
    check_setting("random " + std::to_string(i), random_params(), i < 4);
  check_alpha_padding();
  check_every_rgb();
  check_not_taken();
  return 0;
}

int
main(int argc, char **argv)
{
  return run_main(argc, argv, 4243, cpu_tests, [] { return 77; });
}

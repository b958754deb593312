/* gst-zerocopy: the move route against the per-block code
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Same-format orientation, crop and nearest scaling (videoflip's and
 * videocrop's situations, videoscale's method=nearest-neighbour): the 10
 * packed R'G'B' formats, GRAY8, GRAY16_LE, NV12, NV21, I420, YV12, Y42B
 * (flips and half turns) and Y444, all eight orientations, crops (even
 * offsets for subsampled formats, where the planar paths take them),
 * nearest scaling up and down, the bilinear method at the same size, odd
 * sizes, padded and misaligned rows, 1 to 4 and all threads: byte for byte
 * what convert_block() writes; with point effects, the formats without
 * subsampling moved by the route and the effects then run on its output
 * ("move+effects"). And what does more than move samples (another format
 * out, filters, borders) or what the route leaves alone (packed 4:2:2,
 * 10-bit formats) does not take it.
 */
#include "fast-route-check.h"

using zc::Orientation;
using zc::PixFmt;
using namespace zc_test;

static const PixFmt move_formats[] = {
  PixFmt::RGBA, PixFmt::BGRA, PixFmt::RGBx,  PixFmt::BGRx,
  PixFmt::ARGB, PixFmt::ABGR, PixFmt::xRGB,  PixFmt::xBGR,
  PixFmt::RGB,  PixFmt::BGR,  PixFmt::GRAY8, PixFmt::GRAY16_LE,
  PixFmt::NV12, PixFmt::NV21, PixFmt::I420,  PixFmt::YV12,
  PixFmt::Y42B, PixFmt::Y444,
};

static const Orientation orientations[] = {
  Orientation::Identity, Orientation::Rotate90R, Orientation::Rotate180,
  Orientation::Rotate90L, Orientation::FlipH,    Orientation::FlipV,
  Orientation::UL_LR,    Orientation::UR_LL,
};

static bool
swaps(Orientation o)
{
  return o == Orientation::Rotate90R || o == Orientation::Rotate90L
         || o == Orientation::UL_LR || o == Orientation::UR_LL;
}

/* One random frame of f, sw x sh, into dw x dh with p; route as pinned. */
static void
move_case(PixFmt f, int sw, int sh, int dw, int dh, const zc::ConvertParams &p,
          unsigned threads, int pad, int misalign, const char *route,
          const char *what)
{
  HostFrame src(f, sw, sh, pad, misalign);
  src.randomize();
  const std::string name = std::string(zc::pixfmt_name(f)) + " "
                           + std::to_string(sw) + "x" + std::to_string(sh)
                           + " -> " + std::to_string(dw) + "x"
                           + std::to_string(dh) + " orientation "
                           + std::to_string((int)p.orientation) + what;
  check_route(name.c_str(), src, f, dw, dh, p, route, threads, pad, misalign);
}

/* Whether the route takes (f, o): 4:2:2 turned by a quarter averages its
 * chroma pairs, which the per-block code keeps. */
static const char *
expected(PixFmt f, Orientation o)
{
  return f == PixFmt::Y42B && swaps(o) ? "blocks" : "move";
}

/* Every format in every orientation: same size, cropped, nearest scaled
 * down and up, odd sizes. */
static void
orientations_and_crops()
{
  unsigned t = 0;
  int k = 0;
  for (PixFmt f : move_formats) {
    for (Orientation o : orientations) {
      const bool sw = swaps(o);
      zc::ConvertParams p;
      p.orientation = o;
      /* the bilinear method at the same size: one tap of weight 1 */
      if (o != Orientation::Identity)
        move_case(f, 64, 36, sw ? 36 : 64, sw ? 64 : 36, p, t++ % 5, k % 4,
                  k % 3, expected(f, o), ", same size");
      move_case(f, 37, 23, sw ? 23 : 37, sw ? 37 : 23, p, t++ % 5, 3, 1,
                o == Orientation::Identity ? "*" : expected(f, o),
                ", odd size");
      /* crops at even offsets (the planar paths take those) */
      zc::ConvertParams c = p;
      c.crop_left = 6;
      c.crop_top = 4;
      c.crop_right = 2;
      c.crop_bottom = 8;
      move_case(f, 70, 50, sw ? 38 : 62, sw ? 62 : 38, c, t++ % 5, 0, 0,
                "*", ", cropped");
      /* nearest scaling */
      zc::ConvertParams n = p;
      n.sampling = zc::Sampling::Nearest;
      move_case(f, 96, 54, sw ? 27 : 40, sw ? 40 : 27, n, t++ % 5, k % 5, 0,
                expected(f, o), ", nearest down");
      move_case(f, 33, 19, sw ? 50 : 70, sw ? 70 : 50, n, t++ % 5, 0, k % 3,
                expected(f, o), ", nearest up");
      move_case(f, 35, 21, sw ? 16 : 17, sw ? 17 : 16, n, t++ % 5, 1, 1,
                expected(f, o), ", nearest, odd");
      k++;
    }
  }
  /* the common requests at full size, all threads */
  zc::ConvertParams r;
  r.orientation = Orientation::Rotate90R;
  move_case(PixFmt::RGBA, 1920, 1080, 1080, 1920, r, 0, 0, 0, "move", "");
  r.orientation = Orientation::FlipH;
  move_case(PixFmt::I420, 1920, 1080, 1920, 1080, r, 0, 0, 0, "move", "");
  move_case(PixFmt::NV12, 1920, 1080, 1920, 1080, r, 0, 0, 0, "move", "");
  zc::ConvertParams n;
  n.sampling = zc::Sampling::Nearest;
  move_case(PixFmt::RGBA, 1920, 1080, 1280, 720, n, 0, 0, 0, "move", "");
}

/* Point effects with a move: the route on its own, then the effects
 * route's loops in place on its output, for the formats without
 * subsampling (a subsampled frame with effects is converted through
 * 4:4:4, which the route does not do). */
static void
moves_with_effects()
{
  zc::ConvertParams fx[4];
  fx[0].brightness = -0.1;
  fx[1].saturation = 1.4;
  fx[1].hue = 0.3;
  fx[2].gamma = 2.2;
  fx[2].invert = true;
  fx[3].invert = true;
  const PixFmt formats[]
      = { PixFmt::RGBA,  PixFmt::BGRx,      PixFmt::ARGB, PixFmt::RGB,
          PixFmt::GRAY8, PixFmt::GRAY16_LE, PixFmt::Y444 };
  unsigned t = 0;
  int k = 0;
  for (PixFmt f : formats) {
    for (Orientation o : { Orientation::Rotate90R, Orientation::FlipH,
                           Orientation::Rotate180 }) {
      const bool sw = swaps(o);
      zc::ConvertParams p = fx[k++ % 4];
      p.orientation = o;
      move_case(f, 37, 23, sw ? 23 : 37, sw ? 37 : 23, p, t++ % 5, 3, 1,
                "move+effects", ", with effects");
      p.sampling = zc::Sampling::Nearest;
      move_case(f, 96, 54, sw ? 27 : 40, sw ? 40 : 27, p, t++ % 5, k % 5, 0,
                "move+effects", ", nearest, with effects");
    }
  }
  zc::ConvertParams p = fx[0];
  p.orientation = Orientation::FlipH;
  move_case(PixFmt::NV12, 34, 18, 34, 18, p, 2, 0, 0, "blocks",
            ", with effects");
  p.orientation = Orientation::Rotate90L;
  move_case(PixFmt::RGBA, 1920, 1080, 1080, 1920, p, 0, 0, 0, "move+effects",
            ", with effects");
}

/* Outside the route. */
static void
not_taken()
{
  auto route = [](PixFmt sf, PixFmt df, const zc::ConvertParams &p, int dw,
                  int dh) {
    const char *r = zc::convert_cpu_route(HostFrame(sf, 64, 36).desc,
                                          HostFrame(df, dw, dh).desc, p);
    return std::string(r ? r : "(refused)");
  };
  zc::ConvertParams p;
  p.orientation = Orientation::FlipH;
  check(route(PixFmt::NV12, PixFmt::RGBA, p, 64, 36) != "move",
        "a flip into another format does not take the move route");
  check(route(PixFmt::YUY2, PixFmt::YUY2, p, 64, 36) != "move",
        "a packed 4:2:2 flip does not take the move route");
  check(route(PixFmt::P010_10LE, PixFmt::P010_10LE, p, 64, 36) != "move",
        "a 10-bit flip does not take the move route");
  zc::ConvertParams e = p;
  e.invert = true;
  check(route(PixFmt::RGBA, PixFmt::RGBA, e, 64, 36) != "move",
        "a flip with an effect does not take the move route");
  zc::ConvertParams b = p;
  b.dst_x = 2;
  b.dst_w = 60;
  check(route(PixFmt::RGBA, PixFmt::RGBA, b, 64, 36) != "move",
        "a placed picture does not take the move route");
  zc::ConvertParams s;
  s.sampling = zc::Sampling::Bilinear;
  check(route(PixFmt::RGBA, PixFmt::RGBA, s, 32, 18) == "planar",
        "bilinear scaling takes the planar route, not the move route");
  s.sampling = zc::Sampling::Bicubic;
  check(route(PixFmt::RGBA, PixFmt::RGBA, s, 32, 18) == "planar",
        "bicubic scaling takes the planar route, not the move route");
  /* at the same size no method filters: the pixel under each one */
  s.orientation = Orientation::Rotate180;
  check(route(PixFmt::GRAY8, PixFmt::GRAY8, s, 64, 36) == "move",
        "a half turn with the bicubic method at the same size is a move");
  /* and they still match */
  HostFrame y(PixFmt::YUY2, 64, 36);
  y.randomize();
  check_route("YUY2 flipped", y, PixFmt::YUY2, 64, 36, p, "*");
  HostFrame g(PixFmt::GRAY8, 64, 36);
  g.randomize();
  check_route("GRAY8 bicubic turned", g, PixFmt::GRAY8, 64, 36, s, "*");
}

static int
cpu_tests()
{
  orientations_and_crops();
  moves_with_effects();
  not_taken();
  return 0;
}

int
main(int argc, char **argv)
{
  return run_main(argc, argv, 4249, cpu_tests, [] { return 77; });
}

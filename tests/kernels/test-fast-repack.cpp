/* gst-zerocopy: the repack route against the per-block code
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every pair of the 10 packed R'G'B' formats and of the four 8-bit 4:2:0
 * layouts (each to itself included), odd and even sizes, padded and
 * misaligned rows, one to three and all threads: byte for byte what
 * convert_block() writes. And what is not a repack (moved, scaled, with an
 * effect, another matrix, from Y'CbCr to R'G'B') does not take
 * the route.
 */
#include "fast-route-check.h"

using zc::PixFmt;
using namespace zc_test;

/* Every pair of `fmts` at every size: byte for byte, by `route` (a format
 * to itself by `same`) */
static void
pairs(std::initializer_list<PixFmt> fmts, const char *route, const char *same)
{
  const Size sizes[] = {
    {33, 17, 0, 0, 1}, {64, 48, 12, 0, 3}, {37, 5, 5, 1, 2},
    {1920, 40, 0, 0, 0},
  };
  for (PixFmt s : fmts) {
    for (PixFmt d : fmts) {
      for (const Size &z : sizes) {
        HostFrame src(s, z.w, z.h, z.pad, z.misalign);
        src.randomize();
        std::string name = std::string(zc::pixfmt_name(s)) + " -> "
                           + zc::pixfmt_name(d) + " " + std::to_string(z.w)
                           + "x" + std::to_string(z.h);
        check_route(name.c_str(), src, d, z.w, z.h, zc::ConvertParams(),
                    s == d ? same : route, z.threads, z.pad, z.misalign);
      }
    }
  }
}

static int
cpu_tests()
{
  pairs({ PixFmt::RGBA, PixFmt::BGRA, PixFmt::RGBx, PixFmt::BGRx,
          PixFmt::ARGB, PixFmt::ABGR, PixFmt::xRGB, PixFmt::xBGR,
          PixFmt::RGB, PixFmt::BGR },
        "repack", "repack");
  /* The 8-bit 4:2:0 layouts among themselves: luma copied, chroma moved
   * between planes; odd sizes have a last chroma column and row of their
   * own (a format to itself is the planar paths' move) */
  pairs({ PixFmt::NV12, PixFmt::NV21, PixFmt::I420, PixFmt::YV12 }, "repack",
        "move");
  HostFrame big(PixFmt::NV12, 1920, 1080);
  big.randomize();
  check_route("NV12 -> I420 1920x1080", big, PixFmt::I420, 1920, 1080,
              zc::ConvertParams(), "repack", 0);
  /* another matrix is a colour step, not a repack */
  HostFrame bt601(PixFmt::NV12, 34, 18, 0, 0, zc::Matrix::BT601);
  bt601.randomize();
  check_route("NV12 BT.601 -> I420 BT.709", bt601, PixFmt::I420, 34, 18,
              zc::ConvertParams(), "scale");

  /* Not repacks: they go elsewhere */
  HostFrame rgba(PixFmt::RGBA, 33, 17);
  rgba.randomize();
  zc::ConvertParams moved;
  moved.orientation = zc::Orientation::Rotate180;
  check_route("RGBA -> BGRA rotated", rgba, PixFmt::BGRA, 33, 17, moved,
              "blocks");
  zc::ConvertParams cropped;
  cropped.crop_left = 3;
  /* (a crop at the same size is the scale route's: one tap a pixel) */
  check_route("RGBA -> BGRA cropped", rgba, PixFmt::BGRA, 30, 17, cropped,
              "scale");
  HostFrame nv12(PixFmt::NV12, 34, 18);
  nv12.randomize();
  const char *took = zc::convert_cpu_route(
      nv12.desc, HostFrame(PixFmt::RGBA, 34, 18).desc, zc::ConvertParams());
  check(took && std::strcmp(took, "repack") != 0,
        "NV12 -> RGBA takes the repack route");
  return 0;
}

int
main(int argc, char **argv)
{
  return run_main(argc, argv, 4242, cpu_tests, [] { return 77; });
}

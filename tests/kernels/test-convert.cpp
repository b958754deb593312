/* gst-zerocopy: tests for kernels/zcconvert.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   test-convert         the CPU conversion against GStreamer's
 *                        GstVideoConverter (dither=none), every format pair;
 *                        crop and orientation against a naive reference
 *   test-convert --gpu   the CUDA conversion against the CPU one, bit for
 *                        bit, on mapped pinned memory; exits 77 (skipped)
 *                        without a usable GPU
 *
 * The reference for same-size conversions is what videoconvert
 * dither=none outputs: GstVideoConverter with its default options, fast
 * paths on, one thread; every pair must be within 1 code value on 8-bit
 * outputs and exact on deeper ones. Where zc must take the generic line
 * pipeline (scaling, placement), the reference is the converter with its
 * fast paths turned off (GST_VIDEO_CONVERTER_OPT_DITHER_QUANTIZATION = 2,
 * which the generic path ignores when dithering is off). Chroma site
 * "none" (centred) on both sides.
 *
 * Prints each failure, a table of per-pair maximum differences, then
 * "N passed, M failed"; exits 1 on any failure.
 */
#include "zcconvert.h"

#include <gst/gst.h>
#include <gst/video/video.h>

#include <algorithm>
#include "kernel-check.h"

#include <array>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using namespace zc_test;


GstVideoFormat
gst_format(zc::PixFmt f)
{
  return gst_video_format_from_string(zc::pixfmt_name(f));
}

bool
is_rgb(zc::PixFmt f)
{
  return (int)f <= (int)zc::PixFmt::BGR;
}

bool
is_gray(zc::PixFmt f)
{
  return f == zc::PixFmt::GRAY8 || f == zc::PixFmt::GRAY16_LE;
}

/* Significant bits per component. */
int
comp_bits(zc::PixFmt f)
{
  switch (f) {
  case zc::PixFmt::GRAY16_LE: return 16;
  case zc::PixFmt::P010_10LE:
  case zc::PixFmt::I420_10LE: return 10;
  default: return 8;
  }
}

GstVideoColorMatrix
gst_matrix(zc::Matrix m)
{
  switch (m) {
  case zc::Matrix::BT601: return GST_VIDEO_COLOR_MATRIX_BT601;
  case zc::Matrix::BT2020: return GST_VIDEO_COLOR_MATRIX_BT2020;
  default: return GST_VIDEO_COLOR_MATRIX_BT709;
  }
}

/* A FrameDesc without its planes. */
zc::FrameDesc
desc_header(zc::PixFmt f, int w, int h, zc::Matrix m, bool full)
{
  zc::FrameDesc d;
  d.fmt = f;
  d.width = w;
  d.height = h;
  d.matrix = m;
  d.full_range = full;
  return d;
}

/* A frame in ordinary memory, laid out as GstVideoInfo says. */
struct Frame
{
  GstVideoInfo info;
  std::vector<uint8_t> data;
  zc::FrameDesc desc;

  void
  init(zc::PixFmt f, int w, int h, zc::Matrix m, bool full)
  {
    gst_video_info_set_format(&info, gst_format(f), w, h);
    info.chroma_site = GST_VIDEO_CHROMA_SITE_NONE;
    info.colorimetry.transfer = GST_VIDEO_TRANSFER_BT709;
    info.colorimetry.primaries = GST_VIDEO_COLOR_PRIMARIES_BT709;
    if (is_rgb(f)) {
      info.colorimetry.matrix = GST_VIDEO_COLOR_MATRIX_RGB;
      info.colorimetry.range = GST_VIDEO_COLOR_RANGE_0_255;
    } else {
      info.colorimetry.matrix = gst_matrix(m);
      info.colorimetry.range =
          full ? GST_VIDEO_COLOR_RANGE_0_255 : GST_VIDEO_COLOR_RANGE_16_235;
    }
    data.assign(info.size, 0);
    desc = desc_header(f, w, h, m, full);
    for (guint i = 0; i < GST_VIDEO_INFO_N_PLANES(&info) && i < 3; i++) {
      desc.planes[i] = data.data() + GST_VIDEO_INFO_PLANE_OFFSET(&info, i);
      desc.strides[i] = (size_t)GST_VIDEO_INFO_PLANE_STRIDE(&info, i);
    }
  }

  void
  map_gst(GstVideoFrame *vf)
  {
    std::memset(vf, 0, sizeof(*vf));
    vf->info = info;
    vf->flags = GST_VIDEO_FRAME_FLAG_NONE;
    for (guint i = 0; i < GST_VIDEO_INFO_N_PLANES(&info); i++)
      vf->data[i] = data.data() + GST_VIDEO_INFO_PLANE_OFFSET(&info, i);
  }
};

/* Converts with GStreamer's converter, no dithering. generic: turn the
 * fast paths off (a dither quantization other than 1 does that, and with
 * dithering off the generic path ignores it); else what videoconvert
 * dither=none does, fast paths included. */
bool
gst_convert(Frame &src, Frame &dst, GstStructure *extra, bool generic = true)
{
  GstStructure *cfg = gst_structure_new("zc-test",
      GST_VIDEO_CONVERTER_OPT_DITHER_METHOD, GST_TYPE_VIDEO_DITHER_METHOD,
      GST_VIDEO_DITHER_NONE,
      GST_VIDEO_CONVERTER_OPT_THREADS, G_TYPE_UINT, 1u, NULL);
  if (generic)
    gst_structure_set(cfg, GST_VIDEO_CONVERTER_OPT_DITHER_QUANTIZATION,
                      G_TYPE_UINT, 2u, NULL);
  else
    /* As the videoconvert element (1.22 videoconvertscale, default
     * method=bilinear) configures its converter: linear, at most 2 taps,
     * which its fast path's chroma-plane scalers inherit. */
    gst_structure_set(cfg, GST_VIDEO_CONVERTER_OPT_RESAMPLER_METHOD,
                      GST_TYPE_VIDEO_RESAMPLER_METHOD,
                      GST_VIDEO_RESAMPLER_METHOD_LINEAR,
                      GST_VIDEO_RESAMPLER_OPT_MAX_TAPS, G_TYPE_INT, 2, NULL);
  if (extra) {
    gst_structure_foreach(extra, [](GQuark id, const GValue *v, gpointer d) -> gboolean {
      gst_structure_id_set_value((GstStructure *)d, id, v);
      return TRUE;
    }, cfg);
  }
  GstVideoConverter *c = gst_video_converter_new(&src.info, &dst.info, cfg);
  if (!c)
    return false;
  GstVideoFrame in, out;
  src.map_gst(&in);
  dst.map_gst(&out);
  gst_video_converter_frame(c, &in, &out);
  gst_video_converter_free(c);
  return true;
}

/* Largest difference between two frames of the same layout, per component
 * in the format's own code values (10-bit values for P010/I420_10LE),
 * over the rectangle [x0, x1) x [y0, y1). Rows are unpacked with
 * GStreamer's own unpack functions (subsampled chroma is replicated, so a
 * chroma sample is seen once per pixel it covers). */
int
max_diff(const Frame &a, const Frame &b, int x0, int y0, int x1, int y1,
         long *n_over1 = nullptr, long *n_over0 = nullptr)
{
  const GstVideoFormatInfo *fi = a.info.finfo;
  const int w = GST_VIDEO_INFO_WIDTH(&a.info);
  const bool wide = GST_VIDEO_FORMAT_INFO_DEPTH(fi, 0) > 8;
  /* TRUNCATE_RANGE: a 10-bit value v unpacks as v << 6. */
  const int shift = wide ? 16 - (int)GST_VIDEO_FORMAT_INFO_DEPTH(fi, 0) : 0;
  std::vector<uint16_t> la(w * 4), lb(w * 4);
  std::vector<uint8_t> la8(w * 4), lb8(w * 4);
  gpointer pa[GST_VIDEO_MAX_PLANES], pb[GST_VIDEO_MAX_PLANES];
  gint st[GST_VIDEO_MAX_PLANES];
  for (guint i = 0; i < GST_VIDEO_INFO_N_PLANES(&a.info); i++) {
    pa[i] = (gpointer)(a.data.data() + GST_VIDEO_INFO_PLANE_OFFSET(&a.info, i));
    pb[i] = (gpointer)(b.data.data() + GST_VIDEO_INFO_PLANE_OFFSET(&b.info, i));
    st[i] = GST_VIDEO_INFO_PLANE_STRIDE(&a.info, i);
  }
  int worst = 0;
  for (int y = y0; y < y1; y++) {
    if (wide) {
      fi->unpack_func(fi, GST_VIDEO_PACK_FLAG_TRUNCATE_RANGE, la.data(), pa,
                      st, 0, y, w);
      fi->unpack_func(fi, GST_VIDEO_PACK_FLAG_TRUNCATE_RANGE, lb.data(), pb,
                      st, 0, y, w);
    } else {
      fi->unpack_func(fi, GST_VIDEO_PACK_FLAG_NONE, la8.data(), pa, st, 0, y,
                      w);
      fi->unpack_func(fi, GST_VIDEO_PACK_FLAG_NONE, lb8.data(), pb, st, 0, y,
                      w);
    }
    for (int x = x0; x < x1; x++) {
      for (int c = 0; c < 4; c++) {
        int d;
        if (wide)
          d = std::abs((int)(la[x * 4 + c] >> shift)
                       - (int)(lb[x * 4 + c] >> shift));
        else
          d = std::abs((int)la8[x * 4 + c] - (int)lb8[x * 4 + c]);
        if (n_over1 && d > 1)
          (*n_over1)++;
        if (n_over0 && d > 0)
          (*n_over0)++;
        worst = std::max(worst, d);
      }
    }
  }
  return worst;
}

/* ---- format pairs against GstVideoConverter ----------------------------- */

struct ColourCase
{
  zc::Matrix in_m, out_m;
  bool in_full, out_full;
};

std::vector<ColourCase>
colour_cases(zc::PixFmt in, zc::PixFmt out)
{
  std::vector<ColourCase> v;
  const bool in_yuv = !is_rgb(in), out_yuv = !is_rgb(out);
  const zc::Matrix ms[3] = {zc::Matrix::BT601, zc::Matrix::BT709,
                            zc::Matrix::BT2020};
  if (!in_yuv && !out_yuv) {
    v.push_back({zc::Matrix::BT709, zc::Matrix::BT709, true, true});
    return v;
  }
  for (zc::Matrix m : ms) {
    for (int r = 0; r < 4; r++) {
      const bool inf = r & 1, outf = r & 2;
      if (!in_yuv && inf)
        continue;
      if (!out_yuv && outf)
        continue;
      v.push_back({m, m, inf, outf});
    }
  }
  if (in_yuv && out_yuv && !is_gray(in) && !is_gray(out)) {
    /* A change of matrix between two YUV formats. */
    v.push_back({zc::Matrix::BT601, zc::Matrix::BT709, false, false});
    v.push_back({zc::Matrix::BT709, zc::Matrix::BT2020, true, false});
    v.push_back({zc::Matrix::BT2020, zc::Matrix::BT601, false, true});
  }
  return v;
}

/* Whether GStreamer 1.22's converter takes a fast path for a same-size,
 * uncropped conversion between two of these formats (video-converter.c,
 * transforms[] and video_converter_lookup_fastpath()): the pairs where
 * its output differs from its generic pipeline's. Plain copies and
 * repacks, which agree with the generic pipeline, are left out. */
bool
fastpath_pair(zc::PixFmt in, zc::PixFmt out, bool same_matrix)
{
  auto i420 = [](zc::PixFmt f) {
    return f == zc::PixFmt::I420 || f == zc::PixFmt::YV12;
  };
  auto yuy2 = [](zc::PixFmt f) {
    return f == zc::PixFmt::YUY2 || f == zc::PixFmt::UYVY;
  };
  auto sub = [](zc::PixFmt f) {
    return f == zc::PixFmt::I420 || f == zc::PixFmt::YV12 ? 2
           : f == zc::PixFmt::Y42B                        ? 1
           : f == zc::PixFmt::Y444                        ? 0
                                                           : -1;
  };
  if (i420(in) && is_rgb(out))
    return true; /* any matrices */
  if (!same_matrix)
    return false;
  return (i420(in) && yuy2(out))
         || (yuy2(in) && (i420(out) || out == zc::PixFmt::Y444))
         || (sub(in) >= 0 && sub(out) >= 0 && sub(in) != sub(out));
}

struct PairResult
{
  int max_diff = -1;    /* against videoconvert, every size and colour */
  int max_generic = -1; /* against the generic pipeline, fast-path pairs */
  long n_over0 = 0;
  long n_over1 = 0;
  long n_values = 0;
};

PairResult g_pairs[zc::kNumPixFmts][zc::kNumPixFmts];

/* The bound a pair must meet against videoconvert (dither=none), in output
 * code values: the product requirement, 1, on 8-bit outputs; outputs of
 * more than 8 bits (P010, I420_10LE in 10-bit values, GRAY16) are met
 * exactly (no fast path of GStreamer's writes them). */
int
pair_bound(zc::PixFmt out)
{
  return comp_bits(out) > 8 ? 0 : 1;
}

/* GStreamer 1.22 on aarch64 (ORC 0.4.33, seen under qemu-aarch64): the
 * NEON code ORC generates for GstVideoConverter's I420 -> BGRA and
 * I420 -> ARGB fast paths (YV12, BGRx and xRGB go through the same two)
 * writes other bytes than ORC's own C version of the same functions at
 * odd widths: 281 to 938 bytes of 31x17, 33x17 and 95x17 frames, by up to
 * 255, against none at even widths and none for I420 -> RGBA (compared
 * with ORC_CODE=backup). zc writes what the C version writes. For those
 * cases the reference is the converter's RGBA, put in the destination's
 * byte order by a second converter (a repack: no arithmetic). */
bool
neon_odd_width_bgra(zc::PixFmt in, zc::PixFmt out, int w)
{
#if defined(__aarch64__)
  return (w & 1) && (in == zc::PixFmt::I420 || in == zc::PixFmt::YV12)
         && (out == zc::PixFmt::BGRA || out == zc::PixFmt::BGRx
             || out == zc::PixFmt::ARGB || out == zc::PixFmt::xRGB);
#else
  (void)in;
  (void)out;
  (void)w;
  return false;
#endif
}

/* videoconvert's output for src into dst, through RGBA where
 * neon_odd_width_bgra() says so */
bool
gst_convert_videoconvert(Frame &src, Frame &dst, zc::PixFmt in, zc::PixFmt out)
{
  const int w = GST_VIDEO_INFO_WIDTH(&src.info);
  if (!neon_odd_width_bgra(in, out, w))
    return gst_convert(src, dst, nullptr, false);
  Frame rgba;
  rgba.init(zc::PixFmt::RGBA, w, GST_VIDEO_INFO_HEIGHT(&src.info),
            zc::Matrix::BT709, true);
  return gst_convert(src, rgba, nullptr, false)
         && gst_convert(rgba, dst, nullptr, false);
}

/* zc at the same size, no crop, orientation, scaling or effects, against
 * what videoconvert dither=none outputs: GstVideoConverter with its fast
 * paths on. `colours`: every colour case, or only the first. */
void
test_pair(zc::PixFmt in, zc::PixFmt out, int w, int h, bool colours = true)
{
  PairResult &pr = g_pairs[(int)in][(int)out];
  for (const ColourCase &cc : colour_cases(in, out)) {
    Frame src, ref, got;
    src.init(in, w, h, cc.in_m, cc.in_full);
    ref.init(out, w, h, cc.out_m, cc.out_full);
    got.init(out, w, h, cc.out_m, cc.out_full);
    fill_random(src.data.data(), src.data.size());
    if (!check(gst_convert_videoconvert(src, ref, in, out),
               "gst converter %s -> %s", zc::pixfmt_name(in),
               zc::pixfmt_name(out)))
      return;
    zc::ConvertParams p;
    if (!check(zc::convert_cpu(src.desc, got.desc, p, 0),
               "convert_cpu %s -> %s %dx%d", zc::pixfmt_name(in),
               zc::pixfmt_name(out), w, h))
      return;
    long over = 0, over0 = 0;
    int d = max_diff(ref, got, 0, 0, w, h, &over, &over0);
    pr.max_diff = std::max(pr.max_diff, d);
    pr.n_over1 += over;
    pr.n_over0 += over0;
    pr.n_values += (long)w * h * 4;
    check(d <= pair_bound(out),
          "%s -> %s %dx%d matrix %d->%d range %s->%s: max diff %d from "
          "videoconvert", zc::pixfmt_name(in), zc::pixfmt_name(out), w, h,
          (int)cc.in_m, (int)cc.out_m, cc.in_full ? "full" : "limited",
          cc.out_full ? "full" : "limited", d);
    if (fastpath_pair(in, out, cc.in_m == cc.out_m) && w * h < 100000) {
      /* For information: how far videoconvert's fast path is from its
       * own generic pipeline (which zc follows when it cannot take the
       * fast path: crop, orientation, scaling, effects). */
      Frame gen;
      gen.init(out, w, h, cc.out_m, cc.out_full);
      if (gst_convert(src, gen, nullptr, true))
        pr.max_generic = std::max(pr.max_generic,
                                  max_diff(gen, got, 0, 0, w, h));
    }
    if (!colours)
      break;
  }
}

void
test_all_pairs()
{
  const int sizes[][2] = {{1, 1}, {2, 2}, {3, 7}, {33, 17}, {16, 9}};
  for (zc::PixFmt in : zc::kAllPixFmts)
    for (zc::PixFmt out : zc::kAllPixFmts)
      for (const auto &s : sizes)
        test_pair(in, out, s[0], s[1]);

  /* The fast-path pairs at more sizes: odd and even sides, 1-pixel sides,
   * and an odd height whose chroma rows are 256 (511: GStreamer's 8-bit
   * vertical taps all half-way, rounded by its bias search). */
  const int fast_sizes[][2] = {{2, 1},   {1, 2},  {5, 1},    {1, 5},
                               {2, 3},   {3, 2},  {4, 4},    {31, 33},
                               {63, 95}, {95, 7}, {128, 64}, {127, 65},
                               {5, 511}};
  for (zc::PixFmt in : zc::kAllPixFmts)
    for (zc::PixFmt out : zc::kAllPixFmts)
      if (fastpath_pair(in, out, true))
        for (const auto &s : fast_sizes)
          test_pair(in, out, s[0], s[1], s[0] * s[1] < 1000);

  /* A large odd frame for a subset of pairs. */
  const zc::PixFmt big[] = {zc::PixFmt::RGBA, zc::PixFmt::NV12,
                            zc::PixFmt::I420, zc::PixFmt::YUY2,
                            zc::PixFmt::P010_10LE, zc::PixFmt::RGB};
  for (zc::PixFmt in : big)
    for (zc::PixFmt out : big)
      if (in != out)
        test_pair(in, out, 1921, 1081);
  const zc::PixFmt big_fast[][2] = {{zc::PixFmt::I420, zc::PixFmt::Y444},
                                    {zc::PixFmt::Y444, zc::PixFmt::YV12},
                                    {zc::PixFmt::Y42B, zc::PixFmt::I420},
                                    {zc::PixFmt::Y444, zc::PixFmt::Y42B},
                                    {zc::PixFmt::I420, zc::PixFmt::Y42B},
                                    {zc::PixFmt::Y42B, zc::PixFmt::Y444},
                                    {zc::PixFmt::UYVY, zc::PixFmt::YV12},
                                    {zc::PixFmt::YV12, zc::PixFmt::BGRx},
                                    {zc::PixFmt::I420, zc::PixFmt::UYVY}};
  for (const auto &f : big_fast) {
    test_pair(f[0], f[1], 1921, 1081, false);
    test_pair(f[0], f[1], 1280, 720, false);
  }
}

/* Where videoconvert's fast-path conditions do not hold (here: the
 * picture placed inside a larger frame with a border), zc takes the
 * generic pipeline, as GstVideoConverter does: the fast-path pairs
 * against the converter with fast paths off. */
void
test_fastpath_pairs_generic_elsewhere()
{
  int worst = 0;
  for (zc::PixFmt in : zc::kAllPixFmts) {
    for (zc::PixFmt out : zc::kAllPixFmts) {
      /* ARGB left out: GStreamer 1.22's generic pipeline draws the picture
       * one row too high there (ARGB is its working format, written in
       * place); odd sizes left out: see ConvertParams on placing pictures
       * in subsampled frames. */
      if (!fastpath_pair(in, out, true) || out == zc::PixFmt::ARGB)
        continue;
      for (const auto &s : {std::array<int, 2>{6, 4}, {32, 18}}) {
        const int w = s[0], h = s[1], W = w + 4, H = h + 6;
        Frame src, ref, got;
        src.init(in, w, h, zc::Matrix::BT709, false);
        ref.init(out, W, H, zc::Matrix::BT709, false);
        got.init(out, W, H, zc::Matrix::BT709, false);
        fill_random(src.data.data(), src.data.size());
        GstStructure *extra = gst_structure_new("x",
            GST_VIDEO_CONVERTER_OPT_DEST_X, G_TYPE_INT, 2,
            GST_VIDEO_CONVERTER_OPT_DEST_Y, G_TYPE_INT, 4,
            GST_VIDEO_CONVERTER_OPT_DEST_WIDTH, G_TYPE_INT, w,
            GST_VIDEO_CONVERTER_OPT_DEST_HEIGHT, G_TYPE_INT, h,
            GST_VIDEO_CONVERTER_OPT_FILL_BORDER, G_TYPE_BOOLEAN, TRUE, NULL);
        bool ok = gst_convert(src, ref, extra, true);
        gst_structure_free(extra);
        if (!check(ok, "gst placed %s -> %s", zc::pixfmt_name(in),
                   zc::pixfmt_name(out)))
          continue;
        zc::ConvertParams p;
        p.dst_x = 2;
        p.dst_y = 4;
        p.dst_w = w;
        p.dst_h = h;
        if (!check(zc::convert_cpu(src.desc, got.desc, p, 0),
                   "convert_cpu placed"))
          continue;
        const int d = max_diff(ref, got, 0, 0, W, H);
        worst = std::max(worst, d);
        check(d <= 1, "placed %s -> %s %dx%d in %dx%d: max diff %d from the "
              "generic pipeline", zc::pixfmt_name(in), zc::pixfmt_name(out),
              w, h, W, H, d);
      }
    }
  }
  std::printf("fast-path pairs, picture placed with a border (generic "
              "pipeline on both sides): max diff %d\n", worst);
}

void
print_pair_table()
{
  std::printf("\nmax |zc - videoconvert dither=none| per pair "
              "(GstVideoConverter with its fast paths), in output code "
              "values, same size, random frames (rows: input, columns: "
              "output):\n%-10s", "");
  for (zc::PixFmt out : zc::kAllPixFmts)
    std::printf(" %5.5s", zc::pixfmt_name(out));
  std::printf("\n");
  for (zc::PixFmt in : zc::kAllPixFmts) {
    std::printf("%-10.10s", zc::pixfmt_name(in));
    for (zc::PixFmt out : zc::kAllPixFmts)
      std::printf(" %5d", g_pairs[(int)in][(int)out].max_diff);
    std::printf("\n");
  }
  std::printf("\nthe pairs where videoconvert takes a fast path (zc follows "
              "it): max diff from videoconvert / (for information) from "
              "GstVideoConverter's generic pipeline, sizes below 100000 "
              "pixels:\n");
  int n = 0;
  for (zc::PixFmt in : zc::kAllPixFmts)
    for (zc::PixFmt out : zc::kAllPixFmts)
      if (fastpath_pair(in, out, true))
        std::printf("  %-5s -> %-5s %d / %3d%s", zc::pixfmt_name(in),
                    zc::pixfmt_name(out), g_pairs[(int)in][(int)out].max_diff,
                    g_pairs[(int)in][(int)out].max_generic,
                    ++n % 4 ? "" : "\n");
  long over = 0, over0 = 0, values = 0;
  for (auto &row : g_pairs)
    for (auto &pr : row) {
      over += pr.n_over1;
      over0 += pr.n_over0;
      values += pr.n_values;
    }
  std::printf("\nvalues that differ from videoconvert: %ld, by more than 1: "
              "%ld, of %ld\n\n", over0, over, values);
}

/* ---- crop and orientation against a naive reference --------------------- */

/* Where output pixel (x, y) of an oriented W x H image comes from, written
 * as videoflip's documentation states each method. */
void
naive_orient(zc::Orientation o, int W, int H, int x, int y, int *sx, int *sy)
{
  switch (o) {
  case zc::Orientation::Rotate90R: /* clockwise: out col = in row from the bottom */
    *sx = y;
    *sy = H - 1 - x;
    break;
  case zc::Orientation::Rotate180:
    *sx = W - 1 - x;
    *sy = H - 1 - y;
    break;
  case zc::Orientation::Rotate90L:
    *sx = W - 1 - y;
    *sy = x;
    break;
  case zc::Orientation::FlipH:
    *sx = W - 1 - x;
    *sy = y;
    break;
  case zc::Orientation::FlipV:
    *sx = x;
    *sy = H - 1 - y;
    break;
  case zc::Orientation::UL_LR:
    *sx = y;
    *sy = x;
    break;
  case zc::Orientation::UR_LL:
    *sx = W - 1 - y;
    *sy = H - 1 - x;
    break;
  default:
    *sx = x;
    *sy = y;
    break;
  }
}

/* The same rotations built from quarter turns and mirrors applied to a
 * real image, as a second opinion on naive_orient's formulas. */
std::vector<uint32_t>
apply_steps(const std::vector<uint32_t> &img, int W, int H, zc::Orientation o,
            int *ow, int *oh)
{
  auto rot_cw = [](const std::vector<uint32_t> &s, int w, int h) {
    std::vector<uint32_t> d((size_t)w * h);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        d[(size_t)x * h + (h - 1 - y)] = s[(size_t)y * w + x];
    return d;
  };
  auto mirror = [](const std::vector<uint32_t> &s, int w, int h) {
    std::vector<uint32_t> d((size_t)w * h);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        d[(size_t)y * w + (w - 1 - x)] = s[(size_t)y * w + x];
    return d;
  };
  std::vector<uint32_t> r = img;
  int w = W, h = H;
  auto turn = [&] {
    r = rot_cw(r, w, h);
    std::swap(w, h);
  };
  switch (o) {
  case zc::Orientation::Rotate90R: turn(); break;
  case zc::Orientation::Rotate180: turn(); turn(); break;
  case zc::Orientation::Rotate90L: turn(); turn(); turn(); break;
  case zc::Orientation::FlipH: r = mirror(r, w, h); break;
  case zc::Orientation::FlipV: turn(); turn(); r = mirror(r, w, h); break;
  case zc::Orientation::UL_LR: r = mirror(r, w, h); turn(); turn(); turn(); break;
  case zc::Orientation::UR_LL: r = mirror(r, w, h); turn(); break;
  default: break;
  }
  *ow = w;
  *oh = h;
  return r;
}

void
test_orientation_crop()
{
  const zc::Orientation all[] = {
    zc::Orientation::Identity, zc::Orientation::Rotate90R,
    zc::Orientation::Rotate180, zc::Orientation::Rotate90L,
    zc::Orientation::FlipH, zc::Orientation::FlipV, zc::Orientation::UL_LR,
    zc::Orientation::UR_LL};
  const int sizes[][2] = {{1, 1}, {5, 3}, {37, 23}, {64, 48}};
  const int crops[][4] = {{0, 0, 0, 0}, {1, 2, 3, 1}, {0, 1, 0, 0}};

  for (zc::Orientation o : all) {
    /* The two references agree with each other. */
    {
      const int W = 5, H = 3;
      std::vector<uint32_t> img(W * H);
      for (int i = 0; i < W * H; i++)
        img[i] = (uint32_t)i;
      int ow, oh;
      std::vector<uint32_t> r = apply_steps(img, W, H, o, &ow, &oh);
      bool same = true;
      for (int y = 0; y < oh; y++)
        for (int x = 0; x < ow; x++) {
          int sx, sy;
          naive_orient(o, W, H, x, y, &sx, &sy);
          same &= r[(size_t)y * ow + x] == img[(size_t)sy * W + sx];
        }
      check(same, "orientation %d: formula and quarter-turn references differ",
            (int)o);
    }
    for (zc::PixFmt f : {zc::PixFmt::RGBA, zc::PixFmt::BGR, zc::PixFmt::GRAY8,
                         zc::PixFmt::Y444, zc::PixFmt::GRAY16_LE}) {
      for (const auto &s : sizes) {
        for (const auto &c : crops) {
          const int cw = s[0] - c[0] - c[2], ch = s[1] - c[1] - c[3];
          if (cw <= 0 || ch <= 0)
            continue;
          const bool swap = o == zc::Orientation::Rotate90R
                            || o == zc::Orientation::Rotate90L
                            || o == zc::Orientation::UL_LR
                            || o == zc::Orientation::UR_LL;
          const int ow = swap ? ch : cw, oh = swap ? cw : ch;
          Frame src, got;
          src.init(f, s[0], s[1], zc::Matrix::BT709, true);
          got.init(f, ow, oh, zc::Matrix::BT709, true);
          fill_random(src.data.data(), src.data.size());
          zc::ConvertParams p;
          p.orientation = o;
          p.crop_left = c[0];
          p.crop_top = c[1];
          p.crop_right = c[2];
          p.crop_bottom = c[3];
          if (!check(zc::convert_cpu(src.desc, got.desc, p, 0),
                     "convert_cpu orientation %d", (int)o))
            continue;
          /* Same format, same colorimetry: every plane's sample at (x, y)
           * must be the source's at the mapped position. */
          const int bpp = f == zc::PixFmt::RGBA    ? 4
                          : f == zc::PixFmt::BGR   ? 3
                          : f == zc::PixFmt::GRAY16_LE ? 2
                                                   : 1;
          bool ok = true;
          for (int pl = 0; pl < zc::pixfmt_n_planes(f); pl++)
            for (int y = 0; y < oh; y++)
              for (int x = 0; x < ow; x++) {
                int sx, sy;
                naive_orient(o, cw, ch, x, y, &sx, &sy);
                sx += c[0];
                sy += c[1];
                const uint8_t *a = got.desc.planes[pl]
                                   + y * got.desc.strides[pl] + x * bpp;
                const uint8_t *b = src.desc.planes[pl]
                                   + sy * src.desc.strides[pl] + sx * bpp;
                ok &= std::memcmp(a, b, bpp) == 0;
              }
          check(ok, "%s %dx%d crop %d,%d,%d,%d orientation %d: mismatch",
                zc::pixfmt_name(f), s[0], s[1], c[0], c[1], c[2], c[3],
                (int)o);
        }
      }
    }
  }
}

/* ---- scaling and borders ----------------------------------------------- */

/* Nearest scaling against the converter with the nearest resampler, and a
 * destination rectangle with a border. */
void
test_nearest_and_border()
{
  const int cases[][4] = {{16, 16, 8, 8},   {17, 9, 33, 20}, {64, 48, 23, 31},
                          {100, 3, 7, 50},  {5, 5, 5, 5},    {640, 360, 1280, 720}};
  int worst = 0;
  for (const auto &c : cases) {
    Frame src, ref, got;
    src.init(zc::PixFmt::RGBA, c[0], c[1], zc::Matrix::BT709, true);
    ref.init(zc::PixFmt::RGBA, c[2], c[3], zc::Matrix::BT709, true);
    got.init(zc::PixFmt::RGBA, c[2], c[3], zc::Matrix::BT709, true);
    fill_random(src.data.data(), src.data.size());
    GstStructure *extra = gst_structure_new("x",
        GST_VIDEO_CONVERTER_OPT_RESAMPLER_METHOD,
        GST_TYPE_VIDEO_RESAMPLER_METHOD, GST_VIDEO_RESAMPLER_METHOD_NEAREST,
        NULL);
    bool ok = gst_convert(src, ref, extra);
    gst_structure_free(extra);
    if (!check(ok, "gst nearest"))
      continue;
    zc::ConvertParams p;
    if (!check(zc::convert_cpu(src.desc, got.desc, p, 0), "convert_cpu nearest"))
      continue;
    int d = max_diff(ref, got, 0, 0, c[2], c[3]);
    worst = std::max(worst, d);
    check(d == 0, "nearest %dx%d -> %dx%d: max diff %d", c[0], c[1], c[2],
          c[3], d);
  }
  std::printf("nearest scaling RGBA vs GstVideoConverter (nearest): max diff "
              "%d\n",
              worst);

  /* Border: a 20x10 destination, the picture at (4, 2) size 12x6. */
  for (zc::PixFmt f : {zc::PixFmt::RGBA, zc::PixFmt::BGRx, zc::PixFmt::Y444,
                       zc::PixFmt::NV12, zc::PixFmt::I420}) {
    Frame src, ref, got;
    src.init(zc::PixFmt::RGBA, 12, 6, zc::Matrix::BT709, true);
    ref.init(f, 20, 10, zc::Matrix::BT709, false);
    got.init(f, 20, 10, zc::Matrix::BT709, false);
    fill_random(src.data.data(), src.data.size());
    const uint32_t argb = 0xff20c080u;
    GstStructure *extra = gst_structure_new("x",
        GST_VIDEO_CONVERTER_OPT_DEST_X, G_TYPE_INT, 4,
        GST_VIDEO_CONVERTER_OPT_DEST_Y, G_TYPE_INT, 2,
        GST_VIDEO_CONVERTER_OPT_DEST_WIDTH, G_TYPE_INT, 12,
        GST_VIDEO_CONVERTER_OPT_DEST_HEIGHT, G_TYPE_INT, 6,
        GST_VIDEO_CONVERTER_OPT_FILL_BORDER, G_TYPE_BOOLEAN, TRUE,
        GST_VIDEO_CONVERTER_OPT_BORDER_ARGB, G_TYPE_UINT, argb, NULL);
    bool ok = gst_convert(src, ref, extra);
    gst_structure_free(extra);
    if (!check(ok, "gst border"))
      continue;
    zc::ConvertParams p;
    p.dst_x = 4;
    p.dst_y = 2;
    p.dst_w = 12;
    p.dst_h = 6;
    p.border_argb = argb;
    if (!check(zc::convert_cpu(src.desc, got.desc, p, 0), "convert_cpu border"))
      continue;
    int d = max_diff(ref, got, 0, 0, 20, 10);
    check(d <= 1, "border RGBA -> %s: max diff %d", zc::pixfmt_name(f), d);
    std::printf("border RGBA 12x6 into %s 20x10 at (4,2): max diff %d\n",
                zc::pixfmt_name(f), d);
  }
}

/* GStreamer before 1.18 scales I420 -> RGBA differently: the same
 * GstVideoConverter call (40x30 -> 100x70, cubic) on 1.16.3 and on 1.22
 * gives output rows up to 8 code values apart on identical input, and
 * 1921x1081 -> 1280x720 bilinear up to 10; the other pairs of
 * test_resampled() are unchanged there. Against that older reference the
 * I420 -> RGBA bound is kOldGstI420RgbaTolerance (measured 1.16.3: 10 and
 * 8); from 1.18 on the bounds below hold for every pair. */
constexpr int kOldGstI420RgbaTolerance = 10;

static bool
gst_before_1_18()
{
  guint major, minor, micro, nano;
  gst_version(&major, &minor, &micro, &nano);
  return major == 1 && minor < 18;
}

/* One zc sampling against one GStreamer resampler method on smooth
 * content, away from the frame edges (`reach`: how many source pixels the
 * kernel reaches on each side), per-format worst case printed and checked
 * against `tolerance` 8-bit code values (tolerance << (bits - 8) deeper). */
void
test_resampled(zc::Sampling sampling, GstVideoResamplerMethod method,
               const char *name, int reach, int base_tolerance,
               const std::vector<std::array<int, 4>> &cases,
               const std::vector<std::array<int, 4>> &wide_cases)
{
  const zc::PixFmt fmts[][2] = {{zc::PixFmt::RGBA, zc::PixFmt::RGBA},
                                {zc::PixFmt::I420, zc::PixFmt::RGBA},
                                {zc::PixFmt::RGBA, zc::PixFmt::NV12},
                                {zc::PixFmt::NV12, zc::PixFmt::NV12},
                                {zc::PixFmt::GRAY8, zc::PixFmt::GRAY8},
                                {zc::PixFmt::P010_10LE, zc::PixFmt::P010_10LE},
                                {zc::PixFmt::GRAY16_LE, zc::PixFmt::GRAY16_LE}};
  for (const auto &f : fmts) {
    int worst = 0;
    int tolerance = base_tolerance;
    if (f[0] == zc::PixFmt::I420 && f[1] == zc::PixFmt::RGBA
        && gst_before_1_18())
      tolerance = std::max(tolerance, kOldGstI420RgbaTolerance);
    std::vector<std::array<int, 4>> all = cases;
    if (comp_bits(f[0]) > 8)
      all.insert(all.end(), wide_cases.begin(), wide_cases.end());
    for (const auto &c : all) {
      Frame src, ref, got;
      src.init(f[0], c[0], c[1], zc::Matrix::BT709, false);
      ref.init(f[1], c[2], c[3], zc::Matrix::BT709, false);
      got.init(f[1], c[2], c[3], zc::Matrix::BT709, false);
      /* Smooth content (made as RGBA, then converted): on noise the two
       * filters' rounding differences would be all there is to see. */
      {
        Frame rgba;
        rgba.init(zc::PixFmt::RGBA, c[0], c[1], zc::Matrix::BT709, true);
        for (int y = 0; y < c[1]; y++)
          for (int x = 0; x < c[0]; x++)
            for (int k = 0; k < 4; k++)
              rgba.desc.planes[0][y * rgba.desc.strides[0] + x * 4 + k] =
                  (uint8_t)(128 + 90 * std::sin(x * (0.05 + 0.03 * k))
                            * std::cos(y * (0.07 - 0.01 * k)));
        if (!check(gst_convert(rgba, src, nullptr), "gst RGBA source"))
          continue;
      }
      GstStructure *extra = gst_structure_new("x",
          GST_VIDEO_CONVERTER_OPT_RESAMPLER_METHOD,
          GST_TYPE_VIDEO_RESAMPLER_METHOD, method, NULL);
      /* Same format: zc scales plane by plane as videoscale does
       * (convert_scale_planes(): method=bilinear limits the taps to 2,
       * method=mitchell does not); otherwise the generic pipeline. */
      const bool same = f[0] == f[1];
      if (same && sampling == zc::Sampling::Bicubic)
        gst_structure_set(extra, GST_VIDEO_RESAMPLER_OPT_MAX_TAPS, G_TYPE_INT,
                          128, NULL);
      bool ok = gst_convert(src, ref, extra, !same);
      gst_structure_free(extra);
      if (!check(ok, "gst %s", name))
        continue;
      zc::ConvertParams p;
      p.sampling = sampling;
      if (!check(zc::convert_cpu(src.desc, got.desc, p, 0),
                 "convert_cpu %s", name))
        continue;
      const int mx = reach * ((c[2] + c[0] - 1) / c[0]) + 2;
      const int my = reach * ((c[3] + c[1] - 1) / c[1]) + 2;
      /* 4:2:0 outputs: keep whole chroma blocks. */
      const int x0 = (mx + 1) & ~1, y0 = (my + 1) & ~1;
      int d = max_diff(ref, got, x0, y0, c[2] - x0, c[3] - y0);
      worst = std::max(worst, d);
      check(d <= tolerance << (comp_bits(f[1]) - 8),
            "%s %s %dx%d -> %s %dx%d: max diff %d", name,
            zc::pixfmt_name(f[0]), c[0], c[1], zc::pixfmt_name(f[1]), c[2],
            c[3], d);
    }
    std::printf("%s %s -> %s vs GstVideoConverter (%s), edges excluded: max "
                "diff %d (tolerance %d)\n", name, zc::pixfmt_name(f[0]),
                zc::pixfmt_name(f[1]), name, worst,
                tolerance << (comp_bits(f[1]) - 8));
  }
}

/* Bilinear scaling against the converter's linear resampler, away from
 * the frame edges (GStreamer folds edge taps differently).
 *
 * Only the cases where GStreamer filters with its resampler's centred
 * taps are compared: any shrinking, and enlarging vertically or at 16
 * bits. Its 8-bit horizontal 2-tap enlarging (video_scale_h_2tap_*u8)
 * steps through the source corner to corner ((in - 1) / (out - 1)) rather
 * than centre to centre, which is off by up to half a source pixel; zc
 * keeps the centred mapping on both axes and at every depth.
 *
 * The rounding differs too (GStreamer: integer taps, horizontal then
 * vertical passes, 8-bit "LQ" precision, before or after the matrix by
 * direction; zc: one exact 2D sum rounded once, before the matrix), so the
 * bound is a tolerance, on smooth content: kLinearTolerance 8-bit code
 * values, i.e. kLinearTolerance << (bits - 8) for deeper outputs. Measured
 * worst cases are printed; Y'CbCr -> R'G'B' shows the most (the matrix
 * amplifies chroma differences by up to 1.8). */
constexpr int kLinearTolerance = 5;

void
test_bilinear()
{
  test_resampled(zc::Sampling::Bilinear, GST_VIDEO_RESAMPLER_METHOD_LINEAR,
                 "bilinear", 1, kLinearTolerance,
                 {{64, 48, 33, 31},     {1280, 720, 640, 360},
                  {1921, 1081, 1280, 720}, {100, 80, 37, 29},
                  {33, 17, 33, 40},     {640, 360, 640, 720},
                  {200, 100, 150, 300}},
                 {{40, 30, 100, 70}, {640, 360, 1280, 720},
                  {640, 360, 1000, 500}});
}

/* Bicubic scaling against the converter's cubic resampler
 * (GstVideoResampler CUBIC with its default B = C = 1/3, as videoscale
 * method=mitchell sets it; 4 taps, more when shrinking), away from the
 * frame edges, enlarging and shrinking on both axes. zc sums exactly and rounds once; GStreamer
 * rounds its taps to 6 bits at 8 bits per sample (12 deeper), rounds
 * between its two passes, and where no rounding bias makes a phase's taps
 * sum to 64 it keeps taps that do not: at a phase that falls on a source
 * pixel, 1/18, 16/18, 1/18 become 4, 57, 4 (65/64), so those rows or
 * columns come out 1.6 % brighter (up to 4 code values at 255; seen on a
 * ramp). Measured worst case on smooth content, edges excluded: 6 8-bit
 * code values; 1 to 2 10-bit values for P010; about 24 for GRAY16 (16-bit
 * values). kCubicTolerance is that 6 (6 << (bits - 8) for deeper
 * outputs). */
constexpr int kCubicTolerance = 6;

void
test_bicubic()
{
  const std::vector<std::array<int, 4>> cases = {
      {64, 48, 33, 31},     {641, 361, 320, 180}, {961, 541, 640, 360},
      {100, 80, 37, 29},    {33, 17, 33, 40},     {320, 180, 320, 360},
      {200, 100, 150, 300}, {40, 30, 100, 70},    {320, 180, 640, 360},
      {320, 180, 500, 250}, {37, 29, 101, 77},    {300, 200, 71, 47}};
  test_resampled(zc::Sampling::Bicubic, GST_VIDEO_RESAMPLER_METHOD_CUBIC,
                 "bicubic", 2, kCubicTolerance, cases, {});
}

void
test_rejects()
{
  Frame a, b;
  a.init(zc::PixFmt::RGBA, 8, 8, zc::Matrix::BT709, true);
  b.init(zc::PixFmt::RGBA, 16, 16, zc::Matrix::BT709, true);
  zc::ConvertParams p;
  p.sampling = zc::Sampling::Bicubic;
  check(zc::convert_cpu(a.desc, b.desc, p, 1), "bicubic scaling is done");
  {
    Frame big;
    big.init(zc::PixFmt::RGBA, 1040, 8, zc::Matrix::BT709, true);
    check(!zc::convert_cpu(big.desc, b.desc, p, 1),
          "bicubic shrinking by more than 64 is refused");
  }
  p = zc::ConvertParams();
  p.gamma = 0.0f;
  check(!zc::convert_cpu(a.desc, b.desc, p, 1), "gamma 0 is refused");
  p = zc::ConvertParams();
  p.contrast = 3.0f;
  check(!zc::convert_cpu(a.desc, b.desc, p, 1),
        "contrast outside 0..2 is refused");
  p = zc::ConvertParams();
  p.crop_left = 8;
  check(!zc::convert_cpu(a.desc, b.desc, p, 1), "an empty crop is refused");
  p = zc::ConvertParams();
  p.dst_x = 10;
  p.dst_w = 8;
  check(!zc::convert_cpu(a.desc, b.desc, p, 1),
        "a destination rectangle outside the frame is refused");
  zc::FrameDesc bad = a.desc;
  bad.strides[0] = 4;
  check(!zc::convert_cpu(bad, b.desc, zc::ConvertParams(), 1),
        "a stride below the row size is refused");
}

/* ---- point effects against a double-precision reference ----------------- */

/* The effects are a step on the destination's code values: the output
 * with effects must be the output without them, put through the
 * elements' own formulas (GStreamer 1.22's videobalance and gamma, written
 * here again as they are written there, in double), then the invert. */
struct EffectsRef
{
  double b, c, s, h, g;
  bool balance, gamma, invert, full;
  int bal_y[256], gam_y[256];

  EffectsRef(const zc::ConvertParams &p, bool full_range)
  {
    b = p.brightness;
    c = p.contrast;
    s = p.grayscale ? 0.0 : p.saturation;
    h = p.hue;
    g = p.gamma;
    balance = b != 0.0 || c != 1.0 || p.saturation != 1.0 || h != 0.0
              || p.grayscale;
    gamma = g != 1.0;
    invert = p.invert;
    full = full_range;
    for (int i = 0; i < 256; i++) {
      bal_y[i] = (int)std::rint(std::clamp(luma_curve(i), 0.0, 255.0));
      gam_y[i] = (int)std::floor(255.0 * std::pow(i / 255.0, 1.0 / g) + 0.5);
    }
  }

  /* videobalance's luma before its rounding */
  double
  luma_curve(double y) const
  {
    return 16 + ((y - 16) * c + b * 255);
  }

  /* videobalance's chroma on code values centred on `mid` */
  void
  chroma(int mid, int *u, int *v) const
  {
    const double pi = 3.14159265358979323846;
    const double hc = std::cos(pi * h), hs = std::sin(pi * h);
    const int i = *u - mid, j = *v - mid;
    const double a = mid + ((i * hc + j * hs) * s);
    const double d = mid + ((-i * hs + j * hc) * s);
    *u = (int)std::rint(std::clamp(a, 0.0, 2.0 * mid - 1));
    *v = (int)std::rint(std::clamp(d, 0.0, 2.0 * mid - 1));
  }

  int
  luma8(int y) const
  {
    if (balance)
      y = bal_y[y];
    if (gamma)
      y = gam_y[y];
    if (invert)
      y = std::max(0, (full ? 255 : 251) - y);
    return y;
  }

  /* 16-bit luma: the curve without its roundings at the 8-bit codes
   * (257 k), straight lines between them */
  double
  luma16(int w) const
  {
    auto curve = [&](int k) {
      double y = balance ? std::clamp(luma_curve(k), 0.0, 255.0) : k;
      if (gamma)
        y = 255.0 * std::pow(y / 255.0, 1.0 / g);
      return 257.0 * y;
    };
    double y = w;
    if (balance || gamma) {
      const int k = std::min(254, w / 257);
      const double t = (w - 257.0 * k) / 257.0;
      y = curve(k) + (curve(k + 1) - curve(k)) * t;
    }
    if (invert)
      y = std::max(0.0, (full ? 65535.0 : 64319.0) - y);
    return y;
  }

  void
  chroma_invert(int mid, int *u, int *v) const
  {
    if (balance)
      chroma(mid, u, v);
    if (invert) {
      *u = std::min(2 * mid - *u, 2 * mid - 1);
      *v = std::min(2 * mid - *v, 2 * mid - 1);
    }
  }

  /* One round trip through the elements' integer BT.601 matrices */
  void
  rgb_pass(const int *ytab, bool with_chroma, int rgb[3]) const
  {
    const int r = rgb[0], gr = rgb[1], bl = rgb[2];
    int y = std::clamp((66 * r + 129 * gr + 25 * bl + 4096) >> 8, 0, 255);
    int u = std::clamp((-38 * r - 74 * gr + 112 * bl + 32768) >> 8, 0, 255);
    int v = std::clamp((112 * r - 94 * gr - 18 * bl + 32768) >> 8, 0, 255);
    y = ytab[y];
    if (with_chroma)
      chroma(128, &u, &v);
    rgb[0] = std::clamp((298 * y + 409 * v - 57068) >> 8, 0, 255);
    rgb[1] = std::clamp((298 * y - 100 * u - 208 * v + 34707) >> 8, 0, 255);
    rgb[2] = std::clamp((298 * y + 516 * u - 70870) >> 8, 0, 255);
  }

  void
  rgb(int c3[3]) const
  {
    if (balance)
      rgb_pass(bal_y, true, c3);
    if (gamma)
      rgb_pass(gam_y, false, c3);
    if (invert)
      for (int i = 0; i < 3; i++)
        c3[i] = 255 - c3[i];
  }
};

/* Sample `c` (Y/R, U/G, V/B, A) of pixel (x, y), or for c = 1, 2 of a
 * Y'CbCr format of chroma sample (x, y), in the format's code values
 * (10-bit formats: 10-bit values). */
uint8_t *
sample_at(const zc::FrameDesc &f, int c, int x, int y)
{
  uint8_t *r0 = f.planes[0] + (size_t)y * f.strides[0];
  switch (f.fmt) {
  case zc::PixFmt::RGBA: return r0 + 4 * x + c;
  case zc::PixFmt::BGR: return r0 + 3 * x + 2 - c;
  case zc::PixFmt::GRAY8: return r0 + x;
  case zc::PixFmt::GRAY16_LE: return r0 + 2 * x;
  case zc::PixFmt::Y444:
  case zc::PixFmt::I420:
    return f.planes[c] + (size_t)y * f.strides[c] + x;
  case zc::PixFmt::I420_10LE:
    return f.planes[c] + (size_t)y * f.strides[c] + 2 * x;
  case zc::PixFmt::NV12:
    return c ? f.planes[1] + (size_t)y * f.strides[1] + 2 * x + c - 1
             : r0 + x;
  case zc::PixFmt::P010_10LE:
    return c ? f.planes[1] + (size_t)y * f.strides[1] + 4 * x + 2 * (c - 1)
             : r0 + 2 * x;
  case zc::PixFmt::YUY2: return c ? r0 + 4 * x + 2 * c - 1 : r0 + 2 * x;
  default: return nullptr;
  }
}

int
read_sample(const zc::FrameDesc &f, int c, int x, int y)
{
  const uint8_t *p = sample_at(f, c, x, y);
  switch (f.fmt) {
  case zc::PixFmt::GRAY16_LE: return p[0] | (p[1] << 8);
  case zc::PixFmt::I420_10LE: return (p[0] | (p[1] << 8)) & 0x3ff;
  case zc::PixFmt::P010_10LE: return (p[0] | (p[1] << 8)) >> 6;
  default: return *p;
  }
}

void
test_effects()
{
  struct FmtCase
  {
    zc::PixFmt in, out;
    zc::Matrix mi, mo;
    bool fi, fo;
    bool placed; /* scaled into a rectangle, with a border */
  };
  using F = zc::PixFmt;
  const zc::Matrix k601 = zc::Matrix::BT601, k709 = zc::Matrix::BT709;
  const FmtCase fmts[] = {
    {F::RGBA, F::RGBA, k709, k709, true, true, false},
    {F::Y444, F::Y444, k709, k709, false, false, false},
    {F::RGBA, F::I420, k709, k709, true, false, false},
    {F::I420, F::BGR, k601, k709, false, true, false},
    {F::NV12, F::YUY2, k709, k709, false, false, false},
    {F::Y444, F::GRAY8, k601, k601, false, false, false},
    {F::GRAY8, F::GRAY16_LE, k709, k709, false, true, false},
    {F::GRAY16_LE, F::GRAY16_LE, k709, k709, false, false, false},
    {F::P010_10LE, F::P010_10LE, k709, k709, false, false, false},
    {F::I420_10LE, F::I420_10LE, k709, k709, true, true, false},
    {F::RGBA, F::NV12, k709, k709, true, false, true},
    {F::YUY2, F::RGBA, k709, k709, false, true, true}};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int worst8 = 0, worst_deep_luma = 0, worst_deep_chroma = 0;
  for (const FmtCase &fc : fmts) {
    const int W = 37, H = 21;
    for (int t = 0; t < 12; t++) {
      zc::ConvertParams p;
      if (fc.placed) {
        p.sampling = zc::Sampling::Bilinear;
        p.dst_x = 4;
        p.dst_y = 2;
        p.dst_w = 24;
        p.dst_h = 14;
        p.border_argb = 0xff204060u;
      }
      zc::ConvertParams plain = p;
      p.brightness = unit(g_rng) * 2.0 - 1.0;
      p.contrast = unit(g_rng) * 2.0;
      p.saturation = unit(g_rng) * 2.0;
      p.hue = unit(g_rng) * 2.0 - 1.0;
      p.invert = t % 3 == 1;
      p.grayscale = t % 4 == 2;
      if (t % 2 == 1)
        p.gamma = 0.3 + unit(g_rng) * 3.0;
      if (t == 0) { /* gentle: little clipping */
        p.brightness = 0.05;
        p.contrast = 0.9;
        p.saturation = 1.1;
        p.hue = 0.1;
      }
      if (t == 4) { /* only gamma; only invert */
        p = plain;
        p.gamma = 2.2;
      } else if (t == 7) {
        p = plain;
        p.invert = true;
      }
      Frame src, ref, got;
      src.init(fc.in, W, H, fc.mi, fc.fi);
      ref.init(fc.out, W, H, fc.mo, fc.fo);
      got.init(fc.out, W, H, fc.mo, fc.fo);
      fill_random(src.data.data(), src.data.size());
      if (fc.in == F::P010_10LE) /* 10 bits, the 6 low bits zero */
        for (size_t i = 0; i < src.data.size(); i += 2)
          src.data[i] &= 0xc0;
      if (!check(zc::convert_cpu(src.desc, ref.desc, plain, 0)
                     && zc::convert_cpu(src.desc, got.desc, p, 0),
                 "convert_cpu with effects"))
        continue;
      const EffectsRef E(p, fc.fo);
      const bool rgb = is_rgb(fc.out), gray = is_gray(fc.out);
      const int bits = comp_bits(fc.out);
      const int ws = (fc.out == F::Y444 || rgb || gray) ? 0 : 1;
      const int hs = (ws && fc.out != F::YUY2) ? 1 : 0;
      auto inside = [&](int x, int y) {
        return !fc.placed
               || (x >= p.dst_x && y >= p.dst_y && x < p.dst_x + p.dst_w
                   && y < p.dst_y + p.dst_h);
      };
      int d8 = 0, dl = 0, dc = 0;
      for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
          if (rgb) {
            int c3[3];
            for (int i = 0; i < 3; i++)
              c3[i] = read_sample(ref.desc, i, x, y);
            if (inside(x, y))
              E.rgb(c3);
            for (int i = 0; i < 3; i++)
              d8 = std::max(d8, std::abs(read_sample(got.desc, i, x, y)
                                         - c3[i]));
            if (fc.out == F::RGBA) /* alpha untouched */
              d8 = std::max(d8, std::abs(read_sample(got.desc, 3, x, y)
                                         - read_sample(ref.desc, 3, x, y)));
            continue;
          }
          int e = read_sample(ref.desc, 0, x, y);
          if (bits == 8) {
            if (inside(x, y))
              e = E.luma8(e);
            d8 = std::max(d8, std::abs(read_sample(got.desc, 0, x, y) - e));
          } else {
            /* 10-bit values as the converter widens them */
            const int w = bits == 16 ? e : (e << 6) | (e >> 4);
            const double r = inside(x, y) ? E.luma16(w) : w;
            const double want = bits == 16 ? r : std::floor(r / 64.0);
            dl = std::max(dl, (int)std::ceil(std::fabs(
                                  read_sample(got.desc, 0, x, y) - want)
                                  - 0.5));
          }
        }
      }
      if (!rgb && !gray) {
        const int cw = (W + (1 << ws) - 1) >> ws, ch = (H + (1 << hs) - 1) >> hs;
        for (int r = 0; r < ch; r++)
          for (int k = 0; k < cw; k++) {
            int u = read_sample(ref.desc, 1, k, r);
            int v = read_sample(ref.desc, 2, k, r);
            if (inside(k << ws, r << hs))
              E.chroma_invert(bits == 8 ? 128 : 512, &u, &v);
            const int d = std::max(std::abs(read_sample(got.desc, 1, k, r) - u),
                                   std::abs(read_sample(got.desc, 2, k, r) - v));
            (bits == 8 ? d8 : dc) = std::max(bits == 8 ? d8 : dc, d);
          }
      }
      worst8 = std::max(worst8, d8);
      worst_deep_luma = std::max(worst_deep_luma, dl);
      worst_deep_chroma = std::max(worst_deep_chroma, dc);
      check(d8 == 0 && dl <= 1 && dc == 0,
            "effects %s -> %s%s b=%.3f c=%.3f s=%.3f h=%.3f g=%.3f inv=%d "
            "gray=%d: max diff %d (8-bit), %d (deep luma), %d (deep chroma)",
            zc::pixfmt_name(fc.in), zc::pixfmt_name(fc.out),
            fc.placed ? " placed" : "", p.brightness, p.contrast,
            p.saturation, p.hue, p.gamma, p.invert, p.grayscale, d8, dl, dc);
    }
  }
  std::printf("point effects vs the elements' formulas: max diff %d (8-bit), "
              "%d (16/10-bit luma), %d (10-bit chroma)\n", worst8,
              worst_deep_luma, worst_deep_chroma);
}

/* The thread split does not change a byte. */
void
test_threads()
{
  Frame src, one, many;
  src.init(zc::PixFmt::NV12, 1921, 1081, zc::Matrix::BT709, false);
  one.init(zc::PixFmt::RGBA, 1280, 720, zc::Matrix::BT709, true);
  many.init(zc::PixFmt::RGBA, 1280, 720, zc::Matrix::BT709, true);
  fill_random(src.data.data(), src.data.size());
  zc::ConvertParams p;
  p.sampling = zc::Sampling::Bilinear;
  p.orientation = zc::Orientation::Rotate180;
  check(zc::convert_cpu(src.desc, one.desc, p, 1)
            && zc::convert_cpu(src.desc, many.desc, p, 7),
        "convert_cpu 1 and 7 threads");
  check(one.data == many.data, "1 thread and 7 threads give the same bytes");
}

/* ---- tiles ---------------------------------------------------------------- */

/* A frame with chosen strides and plane alignment: each row padded by
 * `pad` bytes, each plane starting `shift` bytes after a 16-byte boundary
 * (the CUDA conversion's load width follows that alignment). */
struct RawFrame
{
  std::vector<uint8_t> data;
  zc::FrameDesc desc;

  void
  init(zc::PixFmt f, int w, int h, int pad, int shift, zc::Matrix m, bool full)
  {
    desc = desc_header(f, w, h, m, full);
    size_t offs[3], total = 0;
    const int n = zc::pixfmt_n_planes(f);
    for (int i = 0; i < n; i++) {
      desc.strides[i] = zc::pixfmt_plane_row_bytes(f, i, w) + (size_t)pad;
      offs[i] = ((total + 15) & ~(size_t)15) + (size_t)shift;
      total = offs[i] + desc.strides[i] * (size_t)zc::pixfmt_plane_rows(f, i, h);
    }
    data.assign(total + 32, 0);
    /* vector storage is at least 16-byte aligned */
    for (int i = 0; i < n; i++)
      desc.planes[i] = data.data() + offs[i];
    fill_random(data.data(), data.size());
  }
};

struct TileCase
{
  zc::PixFmt in, out;
  int sw, sh, dw, dh;
  zc::Sampling sampling;
  int orientation;
  bool crop_and_place;
  bool tiled; /* whether the tiles fit in shared memory */
};

const TileCase kTileCases[] = {
  /* the benchmark's conversion and its neighbours */
  {zc::PixFmt::NV12, zc::PixFmt::RGBA, 3840, 2160, 1920, 1080,
   zc::Sampling::Bilinear, 0, false, true},
  {zc::PixFmt::NV12, zc::PixFmt::RGBA, 1920, 1080, 1920, 1080,
   zc::Sampling::Bilinear, 0, false, true},
  {zc::PixFmt::YUY2, zc::PixFmt::I420, 643, 361, 1280, 720,
   zc::Sampling::Bilinear, 1, true, true},
  {zc::PixFmt::BGR, zc::PixFmt::I420, 500, 300, 640, 360,
   zc::Sampling::Bicubic, 1, true, true},
  {zc::PixFmt::I420_10LE, zc::PixFmt::BGRx, 641, 359, 333, 177,
   zc::Sampling::Bicubic, 2, true, true},
  {zc::PixFmt::P010_10LE, zc::PixFmt::UYVY, 701, 397, 701, 397,
   zc::Sampling::Nearest, 3, true, true},
  {zc::PixFmt::Y42B, zc::PixFmt::GRAY16_LE, 511, 257, 1023, 515,
   zc::Sampling::Nearest, 5, false, true},
  {zc::PixFmt::GRAY8, zc::PixFmt::Y444, 97, 33, 13, 7,
   zc::Sampling::Bilinear, 4, true, true},
  /* shrinks whose filter tiles do not fit: the kernel reads the frame */
  {zc::PixFmt::RGBA, zc::PixFmt::NV12, 1283, 721, 321, 181,
   zc::Sampling::Bicubic, 0, false, false},
  {zc::PixFmt::RGB, zc::PixFmt::YV12, 333, 211, 97, 61,
   zc::Sampling::Bilinear, 6, true, false},
  {zc::PixFmt::UYVY, zc::PixFmt::NV21, 1921, 1081, 480, 270,
   zc::Sampling::Bicubic, 7, false, false},
  {zc::PixFmt::RGBA, zc::PixFmt::BGRA, 4096, 512, 64, 8,
   zc::Sampling::Bilinear, 0, false, false},
};

zc::ConvertParams
tile_params(const TileCase &c)
{
  zc::ConvertParams p;
  p.sampling = c.sampling;
  p.orientation = (zc::Orientation)c.orientation;
  if (c.crop_and_place) {
    p.crop_left = 5;
    p.crop_top = 2;
    p.crop_right = 3;
    p.crop_bottom = 7;
    p.dst_x = 3;
    p.dst_y = 2;
    p.dst_w = c.dw - 7;
    p.dst_h = c.dh - 5;
    p.border_argb = 0xff204060u;
  }
  return p;
}

const int kLayouts[][2] = {{0, 0}, {4, 4}, {1, 3}}; /* pad, shift */

/* One request converted by convert_cpu() and by `replay`, a run of the
 * CUDA conversion's way on the CPU, with every load width (16-byte
 * aligned planes, 4-byte, odd strides: kLayouts) and the shared memory of
 * a device with 64 KiB a block and of one with 48 KiB (sm_53, sm_62).
 * replay(src, dst, limit) returns -1 when a read left its tile's copy, 0
 * when it did not take the request (nothing to compare; it checks itself
 * that it should not have), 1 when the outputs must be equal. */
template <class Replay>
void
replay_against_cpu(zc::PixFmt in, int sw, int sh, zc::PixFmt out, int dw,
                   int dh, zc::Matrix src_matrix, const zc::ConvertParams &p,
                   const char *what, Replay replay)
{
  for (const auto &l : kLayouts) {
    RawFrame src, ref, got;
    src.init(in, sw, sh, l[0], l[1], src_matrix, false);
    ref.init(out, dw, dh, l[0], l[1], zc::Matrix::BT709, true);
    got.init(out, dw, dh, l[0], l[1], zc::Matrix::BT709, true);
    /* every run starts from the destination as it was before the
     * conversion, so a byte the replay leaves unwritten shows */
    const std::vector<uint8_t> before = ref.data;
    if (!check(zc::convert_cpu(src.desc, ref.desc, p, 1), "convert_cpu"))
      continue;
    for (const int limit : {0, 48 * 1024}) {
      std::copy(before.begin(), before.end(), got.data.begin());
      const int r = replay(src.desc, got.desc, limit);
      if (!check(r >= 0, "%s (limit %d) %s %dx%d -> %s %dx%d: a read left "
                 "its tile", what, limit, zc::pixfmt_name(in), sw, sh,
                 zc::pixfmt_name(out), dw, dh)
          || r == 0)
        continue;
      check(ref.data == got.data,
            "%s (limit %d) != convert_cpu: %s %dx%d -> %s %dx%d "
            "orientation %d pad %d shift %d",
            what, limit, zc::pixfmt_name(in), sw, sh, zc::pixfmt_name(out),
            dw, dh, (int)p.orientation, l[0], l[1]);
    }
  }
}

/* The CUDA kernel's tiling, run on the CPU: every tile reads only its
 * staged copy, the requests that should be tiled are, and the output
 * equals convert_cpu(). */
void
test_tiles()
{
  for (const TileCase &c : kTileCases) {
    const zc::ConvertParams p = tile_params(c);
    replay_against_cpu(
        c.in, c.sw, c.sh, c.out, c.dw, c.dh, zc::Matrix::BT601, p, "tiled",
        [&](const zc::FrameDesc &src, const zc::FrameDesc &dst, int limit) {
          bool tiled = false;
          if (!zc::convert_cpu_tiled(src, dst, p, &tiled, limit))
            return -1;
          if (limit == 0)
            check(tiled == c.tiled,
                  "%s %dx%d -> %s %dx%d: tiled %d, expected %d",
                  zc::pixfmt_name(c.in), c.sw, c.sh, zc::pixfmt_name(c.out),
                  c.dw, c.dh, (int)tiled, (int)c.tiled);
          return 1; /* untiled, it runs as convert_cpu() */
        });
  }
}

/* The CUDA conversion's 4:2:0 to R'G'B' paths (zcconvert-fast420.h). */
struct Fast420Case
{
  zc::PixFmt in, out;
  int sw, sh, dw, dh;
  zc::Sampling sampling;
  int crop;     /* crop 3 left, 2 top, 5 right, 1 bottom */
  int effects;  /* brightness, contrast, hue, invert */
  int mode;     /* the path it must take (zc::detail::Fast420Mode): 0 none,
                   1 same size with chroma replicated, 2 bilinear, 3 not
                   scaled with chroma upsampled */
};

const Fast420Case kFast420Cases[] = {
  /* the benchmarks' conversions */
  {zc::PixFmt::NV12, zc::PixFmt::RGBA, 1920, 1080, 1920, 1080,
   zc::Sampling::Nearest, 0, 0, 3},
  {zc::PixFmt::NV12, zc::PixFmt::RGBA, 1920, 1080, 1280, 720,
   zc::Sampling::Bilinear, 0, 1, 2},
  {zc::PixFmt::NV12, zc::PixFmt::RGBA, 3840, 2160, 1920, 1080,
   zc::Sampling::Bilinear, 0, 0, 2},
  /* the family's formats, odd sizes, crops, growing, a 2x shrink */
  {zc::PixFmt::NV21, zc::PixFmt::BGRx, 33, 17, 33, 17,
   zc::Sampling::Bilinear, 0, 1, 3},
  {zc::PixFmt::I420, zc::PixFmt::RGBA, 1920, 1080, 1920, 1080,
   zc::Sampling::Nearest, 0, 0, 1},
  {zc::PixFmt::I420, zc::PixFmt::ARGB, 1, 1, 1, 1, zc::Sampling::Nearest, 0,
   0, 1},
  {zc::PixFmt::YV12, zc::PixFmt::xBGR, 131, 7, 131, 7, zc::Sampling::Nearest,
   0, 1, 1},
  {zc::PixFmt::I420, zc::PixFmt::BGRA, 641, 361, 320, 180,
   zc::Sampling::Bilinear, 1, 0, 2},
  {zc::PixFmt::NV12, zc::PixFmt::RGBx, 33, 17, 130, 71,
   zc::Sampling::Bilinear, 0, 1, 2},
  {zc::PixFmt::YV12, zc::PixFmt::ABGR, 1281, 721, 639, 361,
   zc::Sampling::Bilinear, 1, 1, 2},
  {zc::PixFmt::NV21, zc::PixFmt::xRGB, 7, 5, 3, 2, zc::Sampling::Bilinear,
   0, 0, 2},
  {zc::PixFmt::NV12, zc::PixFmt::BGRA, 2000, 300, 1000, 150,
   zc::Sampling::Bilinear, 0, 0, 2},
  /* a crop, not scaled: chroma upsampled */
  {zc::PixFmt::NV12, zc::PixFmt::RGBA, 645, 363, 637, 360,
   zc::Sampling::Bilinear, 1, 0, 3},
  {zc::PixFmt::I420, zc::PixFmt::BGRx, 645, 363, 637, 360,
   zc::Sampling::Nearest, 1, 1, 3},
  /* not the family's: the generic kernels */
  {zc::PixFmt::NV12, zc::PixFmt::RGBA, 641, 361, 320, 180,
   zc::Sampling::Bicubic, 0, 0, 0},
  {zc::PixFmt::NV12, zc::PixFmt::RGBA, 641, 361, 320, 180,
   zc::Sampling::Nearest, 0, 0, 0},
  {zc::PixFmt::NV12, zc::PixFmt::RGB, 64, 32, 64, 32, zc::Sampling::Nearest,
   0, 0, 0},
  {zc::PixFmt::P010_10LE, zc::PixFmt::RGBA, 64, 32, 64, 32,
   zc::Sampling::Nearest, 0, 0, 0},
  {zc::PixFmt::Y42B, zc::PixFmt::RGBA, 64, 32, 32, 16,
   zc::Sampling::Bilinear, 0, 0, 0},
  {zc::PixFmt::I420_10LE, zc::PixFmt::RGBA, 64, 32, 32, 16,
   zc::Sampling::Bilinear, 0, 0, 0},
  {zc::PixFmt::NV12, zc::PixFmt::Y444, 64, 32, 32, 16,
   zc::Sampling::Bilinear, 0, 0, 0},
  /* shrinks whose tiles do not fit in shared memory */
  {zc::PixFmt::NV12, zc::PixFmt::RGBA, 4096, 512, 64, 8,
   zc::Sampling::Bilinear, 0, 0, 0},
  {zc::PixFmt::NV12, zc::PixFmt::BGRA, 2000, 300, 97, 61,
   zc::Sampling::Bilinear, 0, 0, 0},
};

zc::ConvertParams
fast420_params(const Fast420Case &c)
{
  zc::ConvertParams p;
  p.sampling = c.sampling;
  if (c.crop) {
    p.crop_left = 3;
    p.crop_top = 2;
    p.crop_right = 5;
    p.crop_bottom = 1;
  }
  if (c.effects) {
    p.brightness = -0.1;
    p.contrast = 1.2;
    p.hue = 0.2;
    p.invert = true;
  }
  return p;
}

/* The paths that convert_cuda() takes for the 4:2:0 to R'G'B' family, run
 * on the CPU: each case takes the path it should, every tile reads only
 * its staged copy, and the output equals convert_cpu()'s byte for byte.
 * Into a destination over the bus (mapped memory) the family goes to the
 * generic kernels, whose tiles keep more of the bus busy: the 4:2:0 paths
 * decline, and the generic replay gives convert_cpu()'s bytes. */
void
test_fast420()
{
  for (const Fast420Case &c : kFast420Cases) {
    const zc::ConvertParams p = fast420_params(c);
    for (const bool over_bus : {false, true}) {
      const int expected = over_bus ? 0 : c.mode;
      replay_against_cpu(
          c.in, c.sw, c.sh, c.out, c.dw, c.dh, zc::Matrix::BT709, p,
          over_bus ? "into host memory" : "4:2:0 path",
          [&](const zc::FrameDesc &src, const zc::FrameDesc &dst,
              int limit) {
            zc::FrameDesc out = dst;
            out.over_bus = over_bus;
            int mode = -1;
            if (!zc::convert_cpu_fast420(src, out, p, &mode, limit))
              return -1;
            /* a device with less shared memory may leave a tile to the
             * generic kernels */
            check(mode == expected || (limit > 0 && mode == 0),
                  "%s %dx%d -> %s %dx%d (limit %d%s): path %d, expected %d",
                  zc::pixfmt_name(c.in), c.sw, c.sh, zc::pixfmt_name(c.out),
                  c.dw, c.dh, limit, over_bus ? ", into host memory" : "",
                  mode, expected);
            if (mode != 0)
              return mode == expected ? 1 : 0;
            if (!over_bus)
              return 0; /* nothing written: nothing to compare */
            bool tiled = false;
            if (!zc::convert_cpu_tiled(src, out, p, &tiled, limit))
              return -1;
            return 1; /* untiled, it runs as convert_cpu() */
          });
    }
  }
}

int
run_cpu_tests()
{
  test_rejects();
  test_threads();
  test_effects();
  test_orientation_crop();
  test_nearest_and_border();
  test_bilinear();
  test_bicubic();
  test_tiles();
  test_fast420();
  test_fastpath_pairs_generic_elsewhere();
  test_all_pairs();
  print_pair_table();
  return 0;
}

/* ---- GPU ------------------------------------------------------------------ */

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA

/* A frame in mapped pinned memory, laid out like `like`. */
struct PinnedFrame
{
  uint8_t *host = nullptr;
  uint8_t *dev = nullptr;
  zc::FrameDesc desc;

  PinnedFrame() = default;
  PinnedFrame(const PinnedFrame &) = delete;
  PinnedFrame &operator=(const PinnedFrame &) = delete;
  ~PinnedFrame()
  {
    if (host)
      cudaFreeHost(host);
  }

  /* Frame or RawFrame */
  template <class F>
  bool
  alloc(const F &like)
  {
    void *p = nullptr;
    if (!cuda_ok(cudaHostAlloc(&p, like.data.size(), cudaHostAllocMapped),
                 "cudaHostAlloc(mapped)"))
      return false;
    host = (uint8_t *)p;
    if (!cuda_ok(cudaHostGetDevicePointer((void **)&dev, p, 0),
                 "cudaHostGetDevicePointer"))
      return false;
    std::memcpy(host, like.data.data(), like.data.size());
    desc = like.desc;
    for (int i = 0; i < 3; i++) {
      if (like.desc.planes[i])
        desc.planes[i] = dev + (like.desc.planes[i] - like.data.data());
    }
    return true;
  }
};

/* same_colour: the same matrix and range on both sides (videoconvert's
 * fast paths between Y'CbCr formats need the same matrix). */
void
gpu_case(zc::PixFmt in, zc::PixFmt out, int sw, int sh, int dw, int dh,
         const zc::ConvertParams &p, cudaStream_t stream,
         bool same_colour = false)
{
  Frame src, cpu;
  src.init(in, sw, sh, zc::Matrix::BT601, false);
  cpu.init(out, dw, dh, same_colour ? zc::Matrix::BT601 : zc::Matrix::BT709,
           !same_colour);
  fill_random(src.data.data(), src.data.size());
  fill_random(cpu.data.data(), cpu.data.size());
  PinnedFrame s, d;
  if (!s.alloc(src) || !d.alloc(cpu))
    return;
  if (!check(zc::convert_cpu(src.desc, cpu.desc, p, 0), "convert_cpu"))
    return;
  if (!cuda_ok(zc::convert_cuda(s.desc, d.desc, p, stream), "convert_cuda")
      || !cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize"))
    return;
  check(std::memcmp(d.host, cpu.data.data(), cpu.data.size()) == 0,
        "GPU != CPU: %s %dx%d -> %s %dx%d orientation %d", zc::pixfmt_name(in),
        sw, sh, zc::pixfmt_name(out), dw, dh, (int)p.orientation);
}

/* gpu_case() with every load width (kLayouts). */
void
gpu_layouts_case(zc::PixFmt in, int sw, int sh, zc::PixFmt out, int dw,
                 int dh, zc::Matrix src_matrix, const zc::ConvertParams &p,
                 cudaStream_t stream, const char *what, bool over_bus = false)
{
  for (const auto &l : kLayouts) {
    RawFrame src, cpu;
    src.init(in, sw, sh, l[0], l[1], src_matrix, false);
    cpu.init(out, dw, dh, l[0], l[1], zc::Matrix::BT709, true);
    PinnedFrame s, d;
    if (!s.alloc(src) || !d.alloc(cpu))
      continue;
    d.desc.over_bus = over_bus;
    if (!check(zc::convert_cpu(src.desc, cpu.desc, p, 0), "convert_cpu")
        || !cuda_ok(zc::convert_cuda(s.desc, d.desc, p, stream),
                    "convert_cuda")
        || !cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize"))
      continue;
    check(std::memcmp(d.host, cpu.data.data(), cpu.data.size()) == 0,
          "GPU != CPU (%s): %s %dx%d -> %s %dx%d orientation %d pad %d "
          "shift %d",
          what, zc::pixfmt_name(in), sw, sh, zc::pixfmt_name(out), dw, dh,
          (int)p.orientation, l[0], l[1]);
  }
}

/* Many conversions in flight at once on several streams, each with its own
 * plan, none waited for until all are queued: more launches than the
 * device-memory path has plan slots, so a slot is written again while
 * other streams still run. Each output must still be its own plan's.
 * ZC_EXPECT_PLAN_SOURCE (set by the build for -Dcuda-grid-constant=
 * disabled) names the path the kernels must take. */
void
test_plans_in_flight()
{
  const char *source = zc::convert_cuda_plan_source();
  std::printf("conversion plans: %s\n", source ? source : "(unknown)");
  const char *expect = std::getenv("ZC_EXPECT_PLAN_SOURCE");
  if (expect && *expect)
    check(source && std::strcmp(source, expect) == 0,
          "plan source %s, expected %s", source ? source : "(null)", expect);

  constexpr int kStreams = 4, kPerStream = 7;
  cudaStream_t streams[kStreams] = {};
  for (auto &st : streams)
    if (!cuda_ok(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking),
                 "cudaStreamCreateWithFlags"))
      return;
  struct Job
  {
    Frame src, cpu;
    PinnedFrame s, d;
    zc::ConvertParams p;
  };
  std::vector<std::unique_ptr<Job>> jobs;
  bool ok = true;
  for (int i = 0; i < kStreams * kPerStream && ok; i++) {
    auto j = std::make_unique<Job>();
    /* alternately tiled (bilinear shrink) and untiled (nearest with a
     * quarter turn), each with its own brightness and destination size */
    const bool filtered = i % 2 == 0;
    const int dw = 320 + 16 * i, dh = 180 + 8 * i;
    j->src.init(zc::PixFmt::NV12, 640, 360, zc::Matrix::BT601, false);
    j->cpu.init(zc::PixFmt::RGBA, dw, dh, zc::Matrix::BT709, true);
    fill_random(j->src.data.data(), j->src.data.size());
    fill_random(j->cpu.data.data(), j->cpu.data.size());
    j->p.sampling =
        filtered ? zc::Sampling::Bilinear : zc::Sampling::Nearest;
    j->p.orientation = filtered ? zc::Orientation::Identity
                                : zc::Orientation::Rotate90R;
    j->p.brightness = -0.3f + 0.025f * (float)i;
    ok = j->s.alloc(j->src) && j->d.alloc(j->cpu)
        && check(zc::convert_cpu(j->src.desc, j->cpu.desc, j->p, 0),
                 "convert_cpu");
    jobs.push_back(std::move(j));
  }
  for (int i = 0; ok && i < (int)jobs.size(); i++) {
    Job &j = *jobs[i];
    ok = cuda_ok(zc::convert_cuda(j.s.desc, j.d.desc, j.p,
                                  streams[i % kStreams]),
                 "convert_cuda (in flight)");
  }
  for (auto &st : streams)
    ok = cuda_ok(cudaStreamSynchronize(st), "cudaStreamSynchronize") && ok;
  for (int i = 0; ok && i < (int)jobs.size(); i++)
    check(std::memcmp(jobs[i]->d.host, jobs[i]->cpu.data.data(),
                      jobs[i]->cpu.data.size())
              == 0,
          "GPU != CPU with %d conversions in flight: conversion %d (stream %d)",
          (int)jobs.size(), i, i % kStreams);
  for (auto &st : streams)
    if (st)
      cuda_ok(cudaStreamDestroy(st), "cudaStreamDestroy");
}

int
run_gpu_tests()
{
  cudaStream_t stream;
  if (!cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags"))
    return 1;

  const int sizes[][2] = {{1, 1}, {3, 7}, {33, 17}, {1921, 1081}};
  zc::ConvertParams plain;
  for (zc::PixFmt in : zc::kAllPixFmts)
    for (zc::PixFmt out : zc::kAllPixFmts)
      for (const auto &s : sizes) {
        if (s[0] > 100 && (in != zc::PixFmt::NV12 && out != zc::PixFmt::NV12))
          continue;
        gpu_case(in, out, s[0], s[1], s[0], s[1], plain, stream);
      }

  /* videoconvert's fast paths (chroma scaler with its tap exceptions at
   * 31 and 63, halving, replication). */
  const int fast_sizes[][2] = {{3, 7},   {31, 63},     {64, 32},
                               {5, 511}, {1921, 1081}};
  for (zc::PixFmt in : zc::kAllPixFmts)
    for (zc::PixFmt out : zc::kAllPixFmts)
      if (fastpath_pair(in, out, true))
        for (const auto &s : fast_sizes)
          gpu_case(in, out, s[0], s[1], s[0], s[1], plain, stream, true);

  /* Crop, orientation, nearest scaling, border. */
  for (int o = 0; o <= (int)zc::Orientation::UR_LL; o++) {
    zc::ConvertParams p;
    p.orientation = (zc::Orientation)o;
    p.crop_left = 3;
    p.crop_top = 1;
    p.crop_right = 2;
    p.crop_bottom = 5;
    p.dst_x = 4;
    p.dst_y = 2;
    p.dst_w = 500;
    p.dst_h = 300;
    p.border_argb = 0xff102030u;
    gpu_case(zc::PixFmt::NV12, zc::PixFmt::RGBA, 641, 361, 640, 360, p, stream);
    gpu_case(zc::PixFmt::RGBA, zc::PixFmt::I420, 641, 361, 640, 360, p, stream);
    gpu_case(zc::PixFmt::P010_10LE, zc::PixFmt::NV12, 641, 361, 640, 360, p,
             stream);
    p.sampling = zc::Sampling::Bilinear;
    p.brightness = 0.1f;
    p.contrast = 1.2f;
    p.saturation = 0.7f;
    p.hue = 0.3f;
    p.invert = o & 1;
    p.gamma = (o & 2) ? 1.8f : 1.0f;
    gpu_case(zc::PixFmt::NV12, zc::PixFmt::RGBA, 641, 361, 640, 360, p, stream);
    gpu_case(zc::PixFmt::YUY2, zc::PixFmt::I420_10LE, 1921, 1081, 1280, 720,
             p, stream);
    gpu_case(zc::PixFmt::RGBx, zc::PixFmt::NV21, 300, 200, 1920, 1080, p,
             stream);
    p.sampling = zc::Sampling::Bicubic;
    gpu_case(zc::PixFmt::NV12, zc::PixFmt::RGBA, 641, 361, 640, 360, p, stream);
    gpu_case(zc::PixFmt::P010_10LE, zc::PixFmt::I420, 1921, 1081, 641, 361,
             p, stream);
    gpu_case(zc::PixFmt::BGR, zc::PixFmt::YUY2, 300, 200, 1001, 701, p,
             stream);
  }

  /* The tiled kernel with every load width (and the untiled one for the
   * shrinks whose tiles do not fit), against the CPU. */
  for (const TileCase &c : kTileCases)
    gpu_layouts_case(c.in, c.sw, c.sh, c.out, c.dw, c.dh, zc::Matrix::BT601,
                     tile_params(c), stream, "tiles");

  /* The 4:2:0 to R'G'B' paths, against the CPU; and the same requests
   * into a destination over the bus, which the generic kernels take. */
  for (const Fast420Case &c : kFast420Cases) {
    gpu_layouts_case(c.in, c.sw, c.sh, c.out, c.dw, c.dh, zc::Matrix::BT709,
                     fast420_params(c), stream, "4:2:0 path");
    gpu_layouts_case(c.in, c.sw, c.sh, c.out, c.dw, c.dh, zc::Matrix::BT709,
                     fast420_params(c), stream, "into host memory", true);
  }

  cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
  test_plans_in_flight();
  return 0;
}

#endif /* GST_ZC_HAVE_CUDA */

} // namespace

int
main(int argc, char **argv)
{
  gst_init(nullptr, nullptr);
  return zc_test::run_main(argc, argv, 0x5eedc0deu, run_cpu_tests,
#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
                           run_gpu_tests
#else
                           nullptr
#endif
  );
}

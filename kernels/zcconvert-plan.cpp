/* gst-zerocopy: conversion plans (zcconvert-common.h's Plan), for both
 * backends.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Host code: validates a request and turns it into the integer plan that
 * convert_block() runs, on the CPU (zcconvert-cpu.cpp) and in the CUDA
 * kernels (zcconvert.cu) alike. Reads and writes no pixel.
 */
#include "zcconvert.h"
#include "zcconvert-common.h"

#include <cmath>
#include <cstring>

namespace zc {

namespace {

/* 4x4 affine colour matrices acting on column vectors (c0, c1, c2, 1). */
struct Mat
{
  double m[4][4];
};

Mat
mat_identity()
{
  Mat r;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++)
      r.m[i][j] = i == j ? 1.0 : 0.0;
  return r;
}

/* a * b: b applied first. */
Mat
mat_mul(const Mat &a, const Mat &b)
{
  Mat r;
  for (int i = 0; i < 4; i++) {
    for (int j = 0; j < 4; j++) {
      double s = 0.0;
      for (int k = 0; k < 4; k++)
        s += a.m[i][k] * b.m[k][j];
      r.m[i][j] = s;
    }
  }
  return r;
}

void
kr_kb(Matrix mx, double *kr, double *kb)
{
  switch (mx) {
  case Matrix::BT601: *kr = 0.299; *kb = 0.114; break;
  case Matrix::BT2020: *kr = 0.2627; *kb = 0.0593; break;
  default: *kr = 0.2126; *kb = 0.0722; break;
  }
}

/* Offsets and scales of the code values at `depth` bits, as
 * gst_video_color_range_offsets() gives them. */
void
range_of(bool yuv, bool full, int depth, double off[3], double scale[3])
{
  const double maxv = (double)((1 << depth) - 1);
  if (!yuv) {
    for (int i = 0; i < 3; i++) {
      off[i] = 0.0;
      scale[i] = maxv;
    }
    return;
  }
  off[1] = off[2] = (double)(1 << (depth - 1));
  if (full) {
    off[0] = 0.0;
    scale[0] = scale[1] = scale[2] = maxv;
  } else {
    off[0] = (double)(1 << (depth - 4));
    scale[0] = (double)(219 << (depth - 8));
    scale[1] = scale[2] = (double)(224 << (depth - 8));
  }
}

Mat
mat_scale(double k)
{
  Mat r = mat_identity();
  for (int i = 0; i < 3; i++)
    r.m[i][i] = k;
  return r;
}

/* Code values -> [0, 1] (and [-0.5, 0.5] for chroma), with the float
 * reciprocals of GStreamer's compute_matrix_to_RGB(). */
Mat
mat_to_unit(bool yuv, bool full, int depth)
{
  double off[3], scale[3];
  range_of(yuv, full, depth, off, scale);
  Mat r = mat_identity();
  for (int i = 0; i < 3; i++) {
    const double k = (double)(1.0f / (float)scale[i]);
    r.m[i][i] = k;
    r.m[i][3] = -off[i] * k;
  }
  return r;
}

Mat
mat_from_unit(bool yuv, bool full, int depth)
{
  double off[3], scale[3];
  range_of(yuv, full, depth, off, scale);
  Mat r = mat_identity();
  for (int i = 0; i < 3; i++) {
    r.m[i][i] = (double)(float)scale[i];
    r.m[i][3] = off[i];
  }
  return r;
}

/* GStreamer's is_no_clip_matrix(): the 8 corners of the 8-bit cube stay in
 * 0..255. */
bool
matrix_never_clips(const int64_t m[3][4])
{
  for (int k = 0; k < 8; k++) {
    const int64_t c[3] = {(k & 4) ? 255 : 0, (k & 2) ? 255 : 0,
                          (k & 1) ? 255 : 0};
    for (int i = 0; i < 3; i++) {
      int64_t v = (m[i][0] * c[0] + m[i][1] * c[1] + m[i][2] * c[2] + m[i][3])
                  >> 8;
      if (v < 0 || v > 255)
        return false;
    }
  }
  return true;
}

Mat
mat_yuv_to_rgb(Matrix mx)
{
  double kr, kb;
  kr_kb(mx, &kr, &kb);
  const double kg = 1.0 - kr - kb;
  Mat r = mat_identity();
  r.m[0][0] = 1.0; r.m[0][1] = 0.0; r.m[0][2] = 2.0 * (1.0 - kr);
  r.m[1][0] = 1.0;
  r.m[1][1] = -2.0 * (1.0 - kb) * kb / kg;
  r.m[1][2] = -2.0 * (1.0 - kr) * kr / kg;
  r.m[2][0] = 1.0; r.m[2][1] = 2.0 * (1.0 - kb); r.m[2][2] = 0.0;
  return r;
}

Mat
mat_rgb_to_yuv(Matrix mx)
{
  double kr, kb;
  kr_kb(mx, &kr, &kb);
  const double kg = 1.0 - kr - kb;
  Mat r = mat_identity();
  r.m[0][0] = kr; r.m[0][1] = kg; r.m[0][2] = kb;
  r.m[1][0] = -kr / (2.0 * (1.0 - kb));
  r.m[1][1] = -kg / (2.0 * (1.0 - kb));
  r.m[1][2] = 0.5;
  r.m[2][0] = 0.5;
  r.m[2][1] = -kg / (2.0 * (1.0 - kr));
  r.m[2][2] = -kb / (2.0 * (1.0 - kr));
  return r;
}

bool
frame_ok(const FrameDesc &f)
{
  if (!detail::fmt_valid(f.fmt) || f.width <= 0 || f.height <= 0
      || f.width > (1 << 16) || f.height > (1 << 16))
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
effects_neutral(const ConvertParams &p)
{
  return p.brightness == 0.0f && p.contrast == 1.0f && p.saturation == 1.0f
         && p.hue == 0.0f && p.gamma == 1.0f && !p.invert && !p.grayscale;
}

bool
effects_valid(const ConvertParams &p)
{
  return std::isfinite(p.brightness) && std::isfinite(p.contrast)
         && std::isfinite(p.saturation) && std::isfinite(p.hue)
         && std::fabs(p.brightness) <= 1.0f && p.contrast >= 0.0f
         && p.contrast <= 2.0f && p.saturation >= 0.0f
         && p.saturation <= 2.0f && std::fabs(p.hue) <= 1.0f
         && std::isfinite(p.gamma) && p.gamma >= 0.01f && p.gamma <= 10.0f;
}

/* ---- videoconvert's fast paths (video-converter.c, transforms[]) ------ */

bool
is_i420_like(PixFmt f)
{
  return f == PixFmt::I420 || f == PixFmt::YV12;
}

bool
is_packed422(PixFmt f)
{
  return f == PixFmt::YUY2 || f == PixFmt::UYVY;
}

bool
is_planar8(PixFmt f)
{
  return f == PixFmt::I420 || f == PixFmt::YV12 || f == PixFmt::Y42B
         || f == PixFmt::Y444;
}

bool
is_rgb(PixFmt f)
{
  return detail::fmt_info(f).kind == detail::kPackedRgb;
}

/* The videoconvert element (1.22's videoconvertscale, default
 * method=bilinear) gives its converter GST_VIDEO_RESAMPLER_OPT_MAX_TAPS
 * = 2, which its chroma-plane scalers inherit: a plain 2-tap linear filter
 * even where a plane shrinks (a bare GstVideoConverter would use up to
 * 128, i.e. 4 taps for a halving). The element is what zc matches. */
constexpr int kVideoconvertMaxTaps = 2;

/* GstVideoResampler's tap count for the linear method
 * (gst_video_resampler_init()): a filter ceil(2 in / out) samples wide
 * when shrinking, 2 when enlarging, at most kVideoconvertMaxTaps; then at
 * most `in` taps. The double arithmetic is GStreamer's. */
void
resampler_linear_taps_count(int in, int out, int *taps, int *taps_full,
                            double *fx)
{
  const double scale_factor = in / (double)out;
  double f = scale_factor > 1.0 ? 1.0 / scale_factor : 1.0;
  int n = (int)std::ceil(2.0 * 1.0 / f);
  n = n < 0 ? 0 : (n > kVideoconvertMaxTaps ? kVideoconvertMaxTaps : n);
  *fx = 2.0 * 1.0 / n;
  *taps_full = n;
  *taps = n > in ? in : n;
}

/* GStreamer's own integer taps of output j (video-resampler.c
 * resampler_calculate_taps() with get_linear_tap(), then video-scaler.c
 * resampler_convert_coeff()): the same double operations in the same
 * order, so the same results on an IEEE machine, provided the compiler
 * does not fuse a multiply and an add (GStreamer's distribution builds
 * do not; GCC would with -march=native, hence the attribute). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
void
gst_linear_taps(int in, int out, int j, int prec, int *off, int32_t w[4])
{
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  int max_taps, taps_full;
  double fx;
  resampler_linear_taps_count(in, out, &max_taps, &taps_full, &fx);
  const int tap_offs = (max_taps - 1) / 2;
  const double corr = max_taps == 1 ? 0.0 : 0.5;
  const double ox = (0.5 + (double)j - 0.0) / out;
  double x = ox * (double)in - corr;
  x = x < 0 ? 0 : (x > in - 1 ? in - 1 : x);
  const int xi = (int)std::floor(x - tap_offs);
  double taps[4] = {0, 0, 0, 0};
  double weight = 0;
  for (int l = 0; l < max_taps; l++) {
    const double a = std::fabs(x - (xi + l)) * fx;
    taps[l] = a < 1.0 ? 1.0 - a : 0.0;
    weight += taps[l];
  }
  for (int l = 0; l < max_taps; l++)
    taps[l] /= weight;
  int o = xi;
  if (xi < 0) {
    const int sh = -xi;
    for (int l = 0; l < sh; l++)
      taps[sh] += taps[l];
    for (int l = 0; l < max_taps - sh; l++)
      taps[l] = taps[sh + l];
    for (int l = max_taps - sh; l < max_taps; l++)
      taps[l] = 0;
    o += sh;
  }
  if (xi > in - max_taps) {
    const int sh = xi - (in - max_taps);
    for (int l = 0; l < sh; l++)
      taps[max_taps - sh - 1] += taps[max_taps - sh + l];
    for (int l = 0; l < max_taps - sh; l++)
      taps[max_taps - 1 - l] = taps[max_taps - 1 - sh - l];
    for (int l = 0; l < sh; l++)
      taps[l] = 0;
    o -= sh;
  }
  *off = o;

  /* Round with a bias searched until the taps sum to 1 << prec. */
  const double mult = (double)(1 << prec);
  double l_offset = 0.0, h_offset = 1.0, offset = 0.5;
  for (int i = 0; i < 64; i++) {
    int sum = 0;
    for (int l = 0; l < max_taps; l++) {
      w[l] = (int16_t)std::floor(offset + taps[l] * mult);
      sum += w[l];
    }
    if (sum == (1 << prec) || l_offset == h_offset)
      break;
    if (sum < (1 << prec)) {
      if (offset > l_offset)
        l_offset = offset;
      offset += (h_offset - l_offset) / 2;
    } else {
      if (offset < h_offset)
        h_offset = offset;
      offset -= (h_offset - l_offset) / 2;
    }
  }
  for (int l = max_taps; l < 4; l++)
    w[l] = 0;
}

/* One axis of a chroma plane, in_size -> out_size, as setup_scale() picks
 * it: halve (when allowed: only when every scaled axis halves exactly),
 * else GstVideoScaler. Returns false when GStreamer's taps part from
 * axis_taps() at more places than the plan holds. */
bool
setup_axis(detail::ScaleAxis *a, int in, int out, bool horizontal,
           bool halve, detail::Plan *P)
{
  std::memset(a, 0, sizeof(*a));
  a->in = in;
  a->out = out;
  a->horizontal = horizontal;
  if (in == out) {
    a->mode = detail::kAxisCopy;
    return true;
  }
  if (halve) {
    a->mode = detail::kAxisHalve;
    return true;
  }
  a->mode = detail::kAxisScaler;
  int taps, taps_full;
  double fx;
  resampler_linear_taps_count(in, out, &taps, &taps_full, &fx);
  if (taps < 1 || taps > 2)
    return false;
  a->taps = (uint8_t)taps;
  a->taps_full = (uint8_t)taps_full;
  a->inc = out == 1 ? 0 : (int32_t)((((int64_t)in - 1) << 16) / (out - 1) - 1);
  if (taps == 1 || (taps == 2 && horizontal))
    return true;
  /* The vertical 2-tap kernel: its 8-bit taps, checked against
   * GStreamer's own derivation at every output row. */
  P->n_exc = 0;
  for (int j = 0; j < out; j++) {
    int o_gst, o_zc;
    int32_t w_gst[4], w_zc[4];
    gst_linear_taps(in, out, j, 8, &o_gst, w_gst);
    detail::resampler_linear_taps(*a, j, 8, &o_zc, w_zc);
    if (o_gst == o_zc && w_gst[1] == w_zc[1])
      continue;
    /* (kTapStep8 reads only the second tap: GStreamer's first does not
     * enter its arithmetic either) */
    if (P->n_exc == detail::kMaxTapExceptions)
      return false;
    detail::TapException &e = P->exc[P->n_exc++];
    e.j = j;
    e.off = (uint16_t)o_gst;
    e.w1 = (int16_t)w_gst[1];
  }
  return true;
}

/* The fast paths of GStreamer 1.22's videoconvert among this library's
 * formats, for a same-size, uncropped, unmoved picture
 * (video_converter_lookup_fastpath()). Sets the plan's chroma handling
 * and returns true where one applies; the colour step is already the one
 * GStreamer's fast path uses (kMatrixNone for the pairs that need the same
 * matrix, its 8-bit Y'CbCr -> R'G'B' otherwise). */
bool
plan_fastpath(const FrameDesc &src, const FrameDesc &dst, detail::Plan *P)
{
  const PixFmt in = src.fmt, out = dst.fmt;
  const bool same_matrix = src.matrix == dst.matrix;

  /* convert_I420_BGRA / _ARGB / _pack_ARGB: any matrices, chroma
   * replicated (ORC loadupdb), video_orc_convert_I420_ARGB's arithmetic,
   * which is the generic path's 8-bit AYUV -> ARGB one. */
  if (is_i420_like(in) && is_rgb(out)) {
    P->chroma_up = 0;
    P->matrix_mode = detail::kMatrixAyuvArgb;
    return true;
  }
  if (!same_matrix)
    return false;
  /* convert_I420_YUY2 / _UYVY: each chroma row serves two rows. */
  if (is_i420_like(in) && is_packed422(out)) {
    P->chroma_up = 0;
    return true;
  }
  /* convert_YUY2_I420 / UYVY_I420: chroma of two rows averaged
   * (avgub); convert_YUY2_Y444 / UYVY_Y444: chroma replicated. */
  if (is_packed422(in) && (is_i420_like(out) || out == PixFmt::Y444)) {
    P->chroma_up = 0;
    P->chroma_down = 1;
    return true;
  }
  /* convert_scale_planes: each chroma plane through the scaler, linear
   * chroma resampler, halving shortcuts where both scaled axes halve. */
  if (is_planar8(in) && is_planar8(out)) {
    const detail::FmtInfo &si = P->si, &di = P->di;
    if (si.ws == di.ws && si.hs == di.hs)
      return false; /* a plain copy, as the generic path */
    const int iw = (src.width + (1 << si.ws) - 1) >> si.ws;
    const int ih = (src.height + (1 << si.hs) - 1) >> si.hs;
    const int ow = (dst.width + (1 << di.ws) - 1) >> di.ws;
    const int oh = (dst.height + (1 << di.hs) - 1) >> di.hs;
    bool halve;
    if (iw == ow)
      halve = ih == 2 * oh;
    else if (ih == oh)
      halve = iw == 2 * ow;
    else
      halve = iw == 2 * ow && ih == 2 * oh;
    detail::Plan q = *P;
    if (!setup_axis(&q.cax, iw, ow, true, halve, &q)
        || !setup_axis(&q.cay, ih, oh, false, halve, &q))
      return false;
    q.cscale = 1;
    q.chroma_up = 0;
    /* gst_video_scaler_2d(): with both scalers, horizontal first unless
     * the last output row starts further down than there are output rows
     * (one thread: the whole plane is one task). */
    q.cscale_h_first = 0;
    if (q.cax.mode == detail::kAxisScaler
        && q.cay.mode == detail::kAxisScaler) {
      int off_last = 0;
      int32_t w[4];
      gst_linear_taps(ih, oh, oh - 1, 8, &off_last, w);
      q.cscale_h_first = (int64_t)ow * off_last <= (int64_t)ow * oh;
    }
    *P = q;
    return true;
  }
  return false;
}

} // namespace

namespace detail {

PlanStatus
build_plan(const FrameDesc &src, const FrameDesc &dst, const ConvertParams &p,
           Plan *P)
{
  if (!P || !frame_ok(src) || !frame_ok(dst))
    return kPlanInvalid;
  std::memset(P, 0, sizeof(*P));

  P->si = fmt_info(src.fmt);
  P->di = fmt_info(dst.fmt);
  for (int i = 0; i < 3; i++) {
    P->sp[i] = src.planes[i];
    P->ss[i] = src.strides[i];
    P->dp[i] = dst.planes[i];
    P->ds[i] = dst.strides[i];
  }
  P->sw = src.width;
  P->sh = src.height;
  P->dw = dst.width;
  P->dh = dst.height;
  P->dst_over_bus = dst.over_bus;

  /* Geometry. */
  if (p.crop_left < 0 || p.crop_top < 0 || p.crop_right < 0
      || p.crop_bottom < 0)
    return kPlanInvalid;
  P->cx = p.crop_left;
  P->cy = p.crop_top;
  P->cw = src.width - p.crop_left - p.crop_right;
  P->ch = src.height - p.crop_top - p.crop_bottom;
  if (P->cw <= 0 || P->ch <= 0)
    return kPlanInvalid;
  if ((int)p.orientation < 0 || (int)p.orientation > (int)Orientation::UR_LL
      || (int)p.sampling < 0 || (int)p.sampling > (int)Sampling::Bicubic)
    return kPlanInvalid;
  P->orient = (int)p.orientation;
  const bool swap = orient_swaps_axes(P->orient);
  P->ow = swap ? P->ch : P->cw;
  P->oh = swap ? P->cw : P->ch;
  P->rx = p.dst_x;
  P->ry = p.dst_y;
  P->rw = p.dst_w > 0 ? p.dst_w : dst.width;
  P->rh = p.dst_h > 0 ? p.dst_h : dst.height;
  if (p.dst_w < 0 || p.dst_h < 0 || P->rx < 0 || P->ry < 0
      || P->rx + P->rw > dst.width || P->ry + P->rh > dst.height)
    return kPlanInvalid;

  if (!effects_valid(p))
    return kPlanInvalid;
  const bool effects = !effects_neutral(p);
  const bool scaling = P->rw != P->ow || P->rh != P->oh;
  P->linear = p.sampling == Sampling::Bilinear && scaling;
  P->cubic = p.sampling == Sampling::Bicubic && scaling;
  /* Shrinking by more than 64 would need more than 129 (linear) or 257
   * (cubic) taps per axis (and could overflow the 64-bit sums); refuse
   * rather than crawl. */
  if ((P->linear || P->cubic)
      && ((int64_t)P->ow > 64 * (int64_t)P->rw
          || (int64_t)P->oh > 64 * (int64_t)P->rh))
    return kPlanNotSupported;

  /* Colour, as GstVideoConverter's chain_convert() and prepare_matrix()
   * build it. */
  const bool syuv = fmt_is_yuv(P->si), dyuv = fmt_is_yuv(P->di);
  const int in_bits = P->si.bits, out_bits = P->di.bits;
  P->depth = in_bits > out_bits ? in_bits : out_bits;
  /* Between two Y'CbCr frames with the same matrix GStreamer converts
   * neither matrix nor range, only the depth. */
  const bool same_matrix = syuv == dyuv && (!syuv || src.matrix == dst.matrix);
  P->matrix_mode = detail::kMatrixNone;
  if (!same_matrix) {
    Mat m = mat_identity();
    if (in_bits < out_bits)
      m = mat_mul(mat_scale(1.0 / (float)(1 << (out_bits - in_bits))), m);
    m = mat_mul(mat_to_unit(syuv, src.full_range, in_bits), m);
    if (syuv)
      m = mat_mul(mat_yuv_to_rgb(src.matrix), m);
    if (dyuv)
      m = mat_mul(mat_rgb_to_yuv(dst.matrix), m);
    m = mat_mul(mat_from_unit(dyuv, dst.full_range, out_bits), m);
    if (in_bits > out_bits)
      m = mat_mul(mat_scale((float)(1 << (in_bits - out_bits))), m);
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        P->m[i][j] = (int64_t)std::llrint(m.m[i][j] * 256.0);

    if (P->depth == 8 && syuv && !dyuv && P->m[0][0] == P->m[1][0]
        && P->m[1][0] == P->m[2][0] && P->m[0][1] == 0 && P->m[2][2] == 0)
      P->matrix_mode = detail::kMatrixAyuvArgb;
    else if (P->depth == 8 && !matrix_never_clips(P->m))
      P->matrix_mode = detail::kMatrixOrc8;
    else
      P->matrix_mode = detail::kMatrixFloor;
  }

  /* Chroma resampling: none when both sides have the same subsampling
   * (and the picture is not moved); GRAY and RGB count as 4:4:4. */
  const bool geometry_identity =
      P->cx == 0 && P->cy == 0 && P->cw == dst.width && P->ch == dst.height
      && P->orient == 0 && P->rx == 0 && P->ry == 0 && P->rw == dst.width
      && P->rh == dst.height && src.width == dst.width
      && src.height == dst.height;
  const bool same_sub = P->si.ws == P->di.ws && P->si.hs == P->di.hs;
  P->chroma_up = !(same_sub && geometry_identity);
  P->chroma_down = P->chroma_up;
  P->cscale = 0;
  /* Where videoconvert takes a fast path, do as it does. */
  if (geometry_identity)
    plan_fastpath(src, dst, P);

  /* The point effects: a step on the destination's code values, after
   * the conversion (as the elements they follow run after videoconvert). */
  if (effects)
    effects_build(p, dyuv, P->di.bits == 16, dst.full_range, &P->fx);
  /* Same format, only geometry: plane by plane, as videoflip and
   * videoscale (zcplanar-common.h). */
  if (!P->cscale)
    detail::planar_setup(src, dst, p, effects,
                         P->matrix_mode == detail::kMatrixNone, P);

  /* Border: 8-bit R'G'B' -> destination code values, as GStreamer's
   * border line (integer matrix at 8 bits, then widened). */
  {
    const uint32_t a = p.border_argb >> 24, r = (p.border_argb >> 16) & 0xff,
                   g = (p.border_argb >> 8) & 0xff, b = p.border_argb & 0xff;
    const int64_t rgb[3] = {r, g, b};
    uint32_t c[3] = {r, g, b};
    if (dyuv) {
      Mat bm = mat_mul(mat_rgb_to_yuv(dst.matrix), mat_scale(1.0 / 255.0));
      bm = mat_mul(mat_from_unit(true, dst.full_range, 8), bm);
      for (int i = 0; i < 3; i++) {
        int64_t acc = 0;
        for (int j = 0; j < 3; j++)
          acc += (int64_t)std::lrint(bm.m[i][j] * 256.0) * rgb[j];
        acc += std::lrint(bm.m[i][3] * 256.0);
        acc >>= 8;
        c[i] = (uint32_t)(acc < 0 ? 0 : acc > 255 ? 255 : acc);
      }
    }
    const uint32_t v[4] = {c[0], c[1], c[2], a};
    for (int i = 0; i < 4; i++)
      P->border[i] = P->di.bits == 8 ? v[i] : (v[i] << 8) | v[i];
  }

  P->blocks_x = (dst.width + (1 << P->di.ws) - 1) >> P->di.ws;
  P->blocks_y = (dst.height + (1 << P->di.hs) - 1) >> P->di.hs;
  return kPlanOk;
}

} // namespace detail
} // namespace zc

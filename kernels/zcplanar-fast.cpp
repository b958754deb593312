/* gst-zerocopy: the plane-by-plane scaling route of the CPU backend
 * (zcconvert-fast.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Same-format bilinear and bicubic scaling (videoscale's situation,
 * PlanarPlan::scale, zcplanar-common.h): the per-block code makes each
 * output sample with planar_scaled(), which derives both axes' taps (the
 * resampler's weights and GStreamer's rounding-bias search) and runs the
 * first pass on every tap row or column again for every sample. Both
 * passes are separable and their intermediate values are rounded to the
 * sample depth, so here each is computed once:
 *
 *  1. each axis's taps, once per frame (planar_axis_taps());
 *  2. horizontal pass first (gst_video_scaler_2d()'s usual order): every
 *     source row an output row needs through the horizontal kernel, kept
 *     in a ring while later output rows still read it; then the vertical
 *     kernel over those rows;
 *     vertical first (large vertical shrinks, halvings): the vertical
 *     kernel over the source rows, then the horizontal one;
 *  3. both through planar_eval(), the per-block code's own arithmetic,
 *     with the kernel fixed at compile time; the n-tap kernel of 8-bit
 *     samples (bicubic, kPkSum6) as its exact sums in 16-bit lanes,
 *     eight at a time, then finished as planar_eval() finishes them.
 *
 * The samples of a plane that share its taps are scaled together: the
 * four bytes of a 4-byte R'G'B' pixel (the padding byte too, as the
 * per-block code stores it), the three of a 3-byte one, the U and V bytes
 * of a semi-planar chroma sample, packed 4:2:2's U and V (one macropixel
 * a sample) apart from its luma. Each output byte is what convert_block()
 * stores there; at an odd packed 4:2:2 width the last macropixel's second
 * luma repeats its first, as there.
 */
#include "zcconvert-fast.h"
#include "zcparallel.h"

#include <atomic>
#include <cstring>
#include <vector>

namespace zc {
namespace detail {

namespace {

/* Output samples per thread below which another thread does not pay. */
constexpr int64_t kMinSamplesPerThread = 64 * 1024;

/* One plane's samples that share its taps: C values a sample at byte
 * offsets co[] from the sample, S bytes from one sample to the next. */
struct Lanes
{
  const uint8_t *src;
  size_t ss;
  uint8_t *dst;
  size_t ds;
  int S, C, co[4];
  int plane;       /* the axes: Q.ax[plane], Q.ay[plane] */
  int dup_last;    /* >= 0: at an odd output width, the byte offset past the
                      last sample that repeats its first value (packed 4:2:2
                      luma), else -1 */
};

/* Whether the C values of consecutive samples are consecutive bytes, in
 * order (the row is then its own array). */
bool
contiguous(const Lanes &L)
{
  if (L.S != L.C)
    return false;
  for (int c = 0; c < L.C; c++)
    if (L.co[c] != c)
      return false;
  return true;
}

/* Two taps of one output sample, packed (PlanarTaps holds room for
 * kMaxPlanarTaps: a row of those is mostly cache misses). */
struct Tap2
{
  int32_t off, w0, w1;
};

/* The taps of every output sample of one axis. */
struct AxisTable
{
  int kernel = kPkCopy;
  int tmax = 1; /* taps a sample, at most */
  std::vector<PlanarTaps> t;
  std::vector<Tap2> t2; /* the same, where tmax <= 2 */
  /* the same, kPkSum6: first input and tmax weights an output (0 past its
   * taps); for four-byte pixels (build_table()'s `four`) the weights as
   * w4 instead, two taps a row of eight: tap 2k's weight four times, then
   * tap 2k + 1's (0 past the taps) */
  std::vector<int32_t> offn, wn;
  std::vector<uint16_t> w4;
};

/* (four: the components of the samples, for w4) */
void
build_table(const PlanarAxis &a, bool four, AxisTable *tab)
{
  tab->kernel = a.kernel;
  tab->t.resize(a.out);
  tab->tmax = 1;
  for (int j = 0; j < a.out; j++) {
    planar_axis_taps(a, j, &tab->t[j]);
    tab->tmax = tab->t[j].n > tab->tmax ? tab->t[j].n : tab->tmax;
  }
  if (a.kernel == kPkSum6) {
    tab->offn.resize(a.out);
    for (int j = 0; j < a.out; j++)
      tab->offn[j] = tab->t[j].off;
    if (four) {
      const size_t per = (size_t)8 * ((tab->tmax + 1) / 2);
      tab->w4.assign((size_t)a.out * per, 0);
      for (int j = 0; j < a.out; j++)
        for (int l = 0; l < tab->t[j].n; l++)
          for (int c = 0; c < 4; c++)
            tab->w4[j * per + 4 * (size_t)l + c] = (uint16_t)tab->t[j].w[l];
    } else {
      tab->wn.assign((size_t)a.out * tab->tmax, 0);
      for (int j = 0; j < a.out; j++)
        for (int l = 0; l < tab->t[j].n; l++)
          tab->wn[(size_t)j * tab->tmax + l] = tab->t[j].w[l];
    }
  }
  if (tab->tmax <= 2) {
    tab->t2.resize(a.out);
    for (int j = 0; j < a.out; j++) {
      const PlanarTaps &t = tab->t[j];
      tab->t2[j] = { t.off, t.w[0], t.n > 1 ? t.w[1] : 0 };
    }
  }
}

/* Taps a kernel always has (0: as the table says). */
constexpr int
fixed_taps(int K)
{
  return K == kPkCopy || K == kPkNearest
             ? 1
             : (K == kPkHalve || K == kPkLerpInc || K == kPkStep8
                        || K == kPkStep16
                    ? 2
                    : 0);
}

/* out[i C + c] = kernel K over in[(t[i].off + l) C + c], l < n, for the n
 * output samples of a horizontal pass. */
template <int K, class VT>
void
h_pass(const VT *__restrict in, int C, const PlanarTaps *t, int n,
       VT *__restrict out)
{
  constexpr int F = fixed_taps(K);
  uint32_t s[kMaxPlanarTaps];
  for (int i = 0; i < n; i++) {
    const PlanarTaps &ti = t[i];
    const int taps = F ? F : ti.n;
    const VT *p = in + (size_t)ti.off * C;
    for (int c = 0; c < C; c++) {
      for (int l = 0; l < taps; l++)
        s[l] = p[(size_t)l * C + c];
      out[(size_t)i * C + c] = (VT)planar_eval(K, ti, s);
    }
  }
}

/* out[x] = kernel K over rows[l][x], l < taps, for x < len: a vertical
 * pass. */
template <int K, class VT>
void
v_pass(const VT *const *rows, const PlanarTaps &t, size_t len,
       VT *__restrict out)
{
  constexpr int F = fixed_taps(K);
  const int taps = F ? F : t.n;
  if (F == 2) {
    const VT *__restrict a = rows[0];
    const VT *__restrict b = rows[1];
    for (size_t x = 0; x < len; x++) {
      const uint32_t s[2] = { a[x], b[x] };
      out[x] = (VT)planar_eval(K, t, s);
    }
    return;
  }
  uint32_t s[kMaxPlanarTaps];
  for (size_t x = 0; x < len; x++) {
    for (int l = 0; l < taps; l++)
      s[l] = rows[l][x];
    out[x] = (VT)planar_eval(K, t, s);
  }
}

/* h_pass() for kernels of at most two taps (every bilinear one), with
 * the components a sample known: the loops the compiler unrolls. */
template <int K, class VT, int C>
void
h_pass2(const VT *__restrict in, const Tap2 *t2, int n, VT *__restrict out)
{
  PlanarTaps t;
  t.n = fixed_taps(K) ? fixed_taps(K) : 2;
  for (int i = 0; i < n; i++) {
    const Tap2 q = t2[i];
    t.off = q.off;
    t.w[0] = q.w0;
    t.w[1] = q.w1;
    const VT *p = in + (size_t)q.off * C;
    for (int c = 0; c < C; c++) {
      const uint32_t s[2] = { p[c], t.n > 1 ? p[C + c] : 0u };
      out[(size_t)i * C + c] = (VT)planar_eval(K, t, s);
    }
  }
}

/* planar_eval()'s kPkSum6 on the exact sum of its products (16-bit lanes
 * there: the sum of any 8-bit taps fits) */
inline uint8_t
finish_sum6(int32_t acc)
{
  acc = (int32_t)(int16_t)acc;
  acc = (acc + 32) >> 6;
  return (uint8_t)(acc < 0 ? 0 : (acc > 255 ? 255 : acc));
}

/* h_pass() for kPkSum6 (the bicubic kernel, and 3-byte pixels' bilinear
 * one) on 8-bit samples, from the packed table: the C sums of a sample
 * side by side. */
template <int C>
void
h_sum6(const uint8_t *__restrict in, const int32_t *offn,
       const int32_t *__restrict wn, int T, int n, uint8_t *__restrict out)
{
  for (int i = 0; i < n; i++) {
    const uint8_t *p = in + (size_t)offn[i] * C;
    const int32_t *w = wn + (size_t)i * T;
    int32_t acc[C] = {};
    for (int l = 0; l < T; l++)
      for (int c = 0; c < C; c++)
        acc[c] += w[l] * (int32_t)p[(size_t)l * C + c];
    for (int c = 0; c < C; c++)
      out[(size_t)i * C + c] = finish_sum6(acc[c]);
  }
}

using HSum6 = void (*)(const uint8_t *, const int32_t *, const int32_t *, int,
                       int, uint8_t *);

HSum6
pick_h_sum6(int C)
{
  switch (C) {
  case 1: return h_sum6<1>;
  case 2: return h_sum6<2>;
  case 3: return h_sum6<3>;
  default: return nullptr; /* four-byte pixels: h_sum6_4() */
  }
}

/* Eight lanes in GCC's and Clang's vector extensions (SSE2 or NEON
 * registers, whichever the target has). */
typedef uint8_t u8x8 __attribute__((vector_size(8)));
typedef uint16_t u16x8 __attribute__((vector_size(16)));
typedef int16_t i16x8 __attribute__((vector_size(16)));

inline u16x8
load8_u16(const uint8_t *p)
{
  u8x8 b;
  std::memcpy(&b, p, sizeof(b));
  return __builtin_convertvector(b, u16x8);
}

/* v_pass() for kPkSum6 on 8-bit samples, eight columns at a time: the
 * sums in 16-bit lanes, as the ORC kernel keeps them (planar_eval() takes
 * the low 16 bits of the exact sum, which wrapping sums give too), then
 * finished as finish_sum6(). */
inline void
v_sum6(const uint8_t *const *rows, const PlanarTaps &t, size_t len,
       uint8_t *__restrict out)
{
  size_t x = 0;
  const i16x8 zero = {}, top = zero + 255;
  for (; x + 8 <= len; x += 8) {
    u16x8 a = load8_u16(rows[0] + x) * (uint16_t)t.w[0];
    for (int l = 1; l < t.n; l++)
      a += load8_u16(rows[l] + x) * (uint16_t)t.w[l];
    /* (s + 32) >> 6 without leaving 16 bits: s = 64 q + r, 0 <= r < 64 */
    const i16x8 v = (i16x8)a;
    i16x8 q = (v >> 6) + (((v & 63) + 32) >> 6);
    q = q < zero ? zero : q;
    q = q > top ? top : q;
    const u8x8 o = __builtin_convertvector(q, u8x8);
    std::memcpy(out + x, &o, sizeof(o));
  }
  for (; x < len; x++) {
    int32_t acc = 0;
    for (int l = 0; l < t.n; l++)
      acc += t.w[l] * (int32_t)rows[l][x];
    out[x] = finish_sum6(acc);
  }
}

/* h_sum6() for four-byte pixels, two taps a vector: the eight bytes of
 * two neighbouring pixels times their weights (AxisTable::w4), in 16-bit
 * lanes as v_sum6(); the halves added at the end. */
inline void
h_sum6_4(const uint8_t *__restrict in, const int32_t *offn,
         const uint16_t *__restrict w4, int T, int n, uint8_t *__restrict out)
{
  const int pairs = T / 2;
  const size_t per = (size_t)8 * ((T + 1) / 2);
  for (int i = 0; i < n; i++) {
    const uint8_t *p = in + (size_t)offn[i] * 4;
    const uint16_t *w = w4 + (size_t)i * per;
    u16x8 a = {};
    for (int k = 0; k < pairs; k++) {
      u16x8 wk;
      std::memcpy(&wk, w + 8 * k, sizeof(wk));
      a += load8_u16(p + 8 * k) * wk;
    }
    for (int c = 0; c < 4; c++) {
      uint16_t acc = (uint16_t)(a[c] + a[c + 4]);
      if (T & 1)
        acc = (uint16_t)(acc + w[8 * pairs + c] * p[8 * pairs + c]);
      out[(size_t)i * 4 + c] = finish_sum6((int16_t)acc);
    }
  }
}

template <class VT>
using HPass = void (*)(const VT *, int, const PlanarTaps *, int, VT *);
template <class VT>
using HPass2 = void (*)(const VT *, const Tap2 *, int, VT *);

template <int K, class VT>
HPass2<VT>
pick_h2_c(int C)
{
  switch (C) {
  case 1: return h_pass2<K, VT, 1>;
  case 2: return h_pass2<K, VT, 2>;
  case 3: return h_pass2<K, VT, 3>;
  default: return h_pass2<K, VT, 4>;
  }
}

/* The two-tap pass for a kernel and C, or null: 8-bit samples, the
 * kernels bilinear scaling takes horizontally */
template <class VT>
HPass2<VT>
pick_h2(int kernel, int C, int tmax)
{
  if (sizeof(VT) != 1 || tmax > 2 || C < 1 || C > 4)
    return nullptr;
  switch (kernel) {
  case kPkCopy: return pick_h2_c<kPkCopy, VT>(C);
  case kPkNearest: return pick_h2_c<kPkNearest, VT>(C);
  case kPkHalve: return pick_h2_c<kPkHalve, VT>(C);
  case kPkLerpInc: return pick_h2_c<kPkLerpInc, VT>(C);
  case kPkSum6: return pick_h2_c<kPkSum6, VT>(C);
  default: return nullptr;
  }
}

template <class VT>
using VPass = void (*)(const VT *const *, const PlanarTaps &, size_t, VT *);

template <class VT>
HPass<VT>
pick_h(int kernel)
{
  switch (kernel) {
  case kPkCopy: return h_pass<kPkCopy, VT>;
  case kPkNearest: return h_pass<kPkNearest, VT>;
  case kPkHalve: return h_pass<kPkHalve, VT>;
  case kPkLerpInc: return h_pass<kPkLerpInc, VT>;
  case kPkStep8: return h_pass<kPkStep8, VT>;
  case kPkSum6: return h_pass<kPkSum6, VT>;
  case kPkH16: return h_pass<kPkH16, VT>;
  case kPkStep16: return h_pass<kPkStep16, VT>;
  default: return h_pass<kPkSum16, VT>;
  }
}

template <class VT>
VPass<VT>
pick_v(int kernel)
{
  switch (kernel) {
  case kPkCopy: return v_pass<kPkCopy, VT>;
  case kPkNearest: return v_pass<kPkNearest, VT>;
  case kPkHalve: return v_pass<kPkHalve, VT>;
  case kPkLerpInc: return v_pass<kPkLerpInc, VT>;
  case kPkStep8: return v_pass<kPkStep8, VT>;
  case kPkSum6: return v_pass<kPkSum6, VT>;
  case kPkH16: return v_pass<kPkH16, VT>;
  case kPkStep16: return v_pass<kPkStep16, VT>;
  default: return v_pass<kPkSum16, VT>;
  }
}

/* One group of lanes, its taps and passes. */
template <class VT> struct LaneJob
{
  const PlanarPlan &Q;
  Lanes L;
  AxisTable hx, vy;
  int iw, ih, ow, oh;
  bool h_first, direct;
  HPass<VT> h;
  HPass2<VT> h2;
  HSum6 hn = nullptr; /* h_sum6<C>(), C < 4 */
  bool h4 = false;    /* h_sum6_4() */
  VPass<VT> v;
  bool vn; /* v_sum6() */

  LaneJob(const PlanarPlan &q, const Lanes &lanes)
      : Q(q), L(lanes), iw(q.ax[lanes.plane].in), ih(q.ay[lanes.plane].in),
        ow(q.ax[lanes.plane].out), oh(q.ay[lanes.plane].out),
        h_first(q.h_first[lanes.plane] != 0),
        direct(sizeof(VT) == 1 && contiguous(lanes)),
        h(pick_h<VT>(q.ax[lanes.plane].kernel)),
        v(pick_v<VT>(q.ay[lanes.plane].kernel))
  {
    build_table(q.ax[L.plane], sizeof(VT) == 1 && L.C == 4, &hx);
    build_table(q.ay[L.plane], false, &vy);
    h2 = pick_h2<VT>(hx.kernel, L.C, hx.tmax);
    if (sizeof(VT) == 1 && hx.kernel == kPkSum6 && !h2) {
      h4 = L.C == 4;
      hn = pick_h_sum6(L.C);
    }
    vn = sizeof(VT) == 1 && vy.kernel == kPkSum6;
  }

  void h_row(const VT *in, VT *out) const
  {
    if (h2)
      h2(in, hx.t2.data(), ow, out);
    else if constexpr (sizeof(VT) == 1) {
      if (h4)
        h_sum6_4(in, hx.offn.data(), hx.w4.data(), hx.tmax, ow, out);
      else if (hn)
        hn(in, hx.offn.data(), hx.wn.data(), hx.tmax, ow, out);
      else
        h(in, L.C, hx.t.data(), ow, out);
    } else {
      h(in, L.C, hx.t.data(), ow, out);
    }
  }

  void v_row(const VT *const *rows, const PlanarTaps &t, size_t len,
             VT *out) const
  {
    if constexpr (sizeof(VT) == 1) {
      if (vn) {
        v_sum6(rows, t, len, out);
        return;
      }
    }
    v(rows, t, len, out);
  }

  /* Source row r's values, in order (into buf unless the row is its own
   * array). */
  const VT *gather(int r, VT *buf) const
  {
    const uint8_t *row = L.src + (size_t)r * L.ss;
    if (direct)
      return reinterpret_cast<const VT *>(row);
    for (int k = 0; k < iw; k++)
      for (int c = 0; c < L.C; c++)
        buf[(size_t)k * L.C + c] = (VT)planar_rd(
            Q.si, row + (size_t)k * L.S + L.co[c]);
    return buf;
  }

  /* The destination row's own array where the values can go there as they
   * are, else buf (then scatter()). */
  VT *out_row(int y, VT *buf) const
  {
    return direct ? reinterpret_cast<VT *>(L.dst + (size_t)y * L.ds) : buf;
  }

  void scatter(int y, const VT *vals) const
  {
    uint8_t *row = L.dst + (size_t)y * L.ds;
    if (!direct) {
      for (int k = 0; k < ow; k++)
        for (int c = 0; c < L.C; c++)
          wr_sample(Q.si, row + (size_t)k * L.S + L.co[c],
                    vals[(size_t)k * L.C + c]);
    }
    if (L.dup_last >= 0 && (ow & 1))
      row[(size_t)ow * L.S + L.dup_last] = row[(size_t)(ow - 1) * L.S + L.co[0]];
  }

  /* Output rows [y0, y1). */
  void run(int y0, int y1) const
  {
    const int C = L.C;
    const size_t in_len = (size_t)iw * C, out_len = (size_t)ow * C;
    const int ring = vy.tmax;
    std::vector<VT> out(out_len), gbuf(direct ? 0 : in_len);
    std::vector<const VT *> rows(ring);
    if (h_first) {
      /* horizontal results of source row b in slot b % ring */
      std::vector<VT> hbuf((size_t)ring * out_len);
      std::vector<int> tag(ring, -1);
      for (int y = y0; y < y1; y++) {
        const PlanarTaps &t = vy.t[y];
        for (int l = 0; l < t.n; l++) {
          const int b = t.off + l, s = b % ring;
          VT *slot = &hbuf[(size_t)s * out_len];
          if (tag[s] != b) {
            h_row(gather(b, gbuf.data()), slot);
            tag[s] = b;
          }
          rows[l] = slot;
        }
        VT *o = out_row(y, out.data());
        v_row(rows.data(), t, out_len, o);
        scatter(y, o);
      }
      return;
    }
    /* vertical first: source rows gathered into a ring (unless they are
     * their own arrays) */
    std::vector<VT> sbuf(direct ? 0 : (size_t)ring * in_len), mid(in_len);
    std::vector<int> tag(ring, -1);
    for (int y = y0; y < y1; y++) {
      const PlanarTaps &t = vy.t[y];
      for (int l = 0; l < t.n; l++) {
        const int b = t.off + l, s = b % ring;
        if (direct) {
          rows[l] = gather(b, nullptr);
          continue;
        }
        VT *slot = &sbuf[(size_t)s * in_len];
        if (tag[s] != b) {
          gather(b, slot);
          tag[s] = b;
        }
        rows[l] = slot;
      }
      v_row(rows.data(), t, in_len, mid.data());
      VT *o = out_row(y, out.data());
      h_row(mid.data(), o);
      scatter(y, o);
    }
  }
};

/* The groups of lanes of P (same format on both sides). */
int
plan_lanes(const Plan &P, Lanes out[3])
{
  const FmtInfo &f = P.si;
  auto lanes = [&](int plane_ptr, int axes, int S, int C, const int *co,
                   int dup_last) {
    Lanes L;
    L.src = P.sp[plane_ptr];
    L.ss = P.ss[plane_ptr];
    L.dst = P.dp[plane_ptr];
    L.ds = P.ds[plane_ptr];
    L.S = S;
    L.C = C;
    for (int c = 0; c < 4; c++)
      L.co[c] = c < C ? co[c] : 0;
    L.plane = axes;
    L.dup_last = dup_last;
    return L;
  };
  static const int seq[4] = { 0, 1, 2, 3 };
  const int ps = f.pstride;
  switch (f.kind) {
  case kPackedRgb:
    /* every byte of the pixel: planar_pixel() scales each component and
     * convert_block() stores each at its place (the padding byte of
     * xRGB-like formats is the alpha component there) */
    out[0] = lanes(0, 0, ps, ps, seq, -1);
    return 1;
  case kGray:
    out[0] = lanes(0, 0, ps, 1, seq, -1);
    return 1;
  case kPlanarYuv:
    out[0] = lanes(0, 0, ps, 1, seq, -1);
    out[1] = lanes(f.off[1], 1, ps, 1, seq, -1);
    out[2] = lanes(f.off[2], 1, ps, 1, seq, -1);
    return 3;
  case kSemiYuv:
    /* both bytes of a chroma pair, each stored back where it was */
    out[0] = lanes(0, 0, ps, 1, seq, -1);
    out[1] = lanes(1, 1, 2 * ps, 2, seq, -1);
    return 2;
  case kPacked422: {
    /* luma of pixel x at 2x + off[0]; U and V of macropixel k at
     * 4k + off[1], 4k + off[3] */
    const int y0[1] = { f.off[0] };
    const int uv[2] = { f.off[1], f.off[3] };
    out[0] = lanes(0, 0, 2, 1, y0, f.off[0]);
    out[1] = lanes(0, 1, 4, 2, uv, -1);
    return 2;
  }
  default:
    return 0;
  }
}

template <class VT>
bool
run_planes(const Plan &P, const Lanes *lanes, int n, unsigned n_threads)
{
  std::atomic<bool> ok{ true };
  for (int i = 0; i < n; i++) {
    const LaneJob<VT> job(P.pl, lanes[i]);
    const unsigned nt = parallel_threads(job.oh, n_threads,
                                         (int64_t)job.ow * job.L.C,
                                         kMinSamplesPerThread);
    parallel_rows(job.oh, nt, [&job, &ok](int y0, int y1) {
      /* (an exception must not leave a worker thread) */
      try {
        job.run(y0, y1);
      } catch (...) {
        ok = false;
      }
    });
    if (!ok)
      return false;
  }
  return true;
}

} // namespace

bool
fast_planar(const Plan &P, unsigned n_threads, bool run)
{
  /* (planar_setup() sets kPlanarScale only for one format on both sides,
   * no effects, no placement, and never for 10-bit formats) */
  if (P.pl.mode != kPlanarScale || P.fx.active)
    return false;
  Lanes lanes[3];
  const int n = plan_lanes(P, lanes);
  if (n == 0)
    return false;
  if (!run)
    return true;
  /* Memory for the taps and the rows is all that can fail here; then the
   * route declines and the per-block code writes every byte again. */
  try {
    return P.si.bits == 8 ? run_planes<uint8_t>(P, lanes, n, n_threads)
                          : run_planes<uint16_t>(P, lanes, n, n_threads);
  } catch (...) {
    return false;
  }
}

} // namespace detail
} // namespace zc

/* gst-zerocopy: the per-sample steps shared by the CPU and CUDA spatial
 * effects.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Private to kernels/. zcspatial-plan.cpp turns a request into a Plan (one
 * Pass per effect, one Layer per group of samples filtered alike, the
 * integer taps); both backends then call the functions below for every
 * output element, so their results cannot drift apart. Integer arithmetic only
 * (the one double, in sp_isqrt(), only seeds an exact integer search).
 */
#ifndef GST_ZC_KERNELS_SPATIAL_COMMON_H
#define GST_ZC_KERNELS_SPATIAL_COMMON_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "zcspatial.h"

#ifndef ZC_HD
#ifdef __CUDACC__
#define ZC_HD __host__ __device__
#else
#define ZC_HD
#endif
#endif

/* Unroll on the device (where a constant radius makes every weight an
 * immediate operand); the host compiler would only warn about the
 * pragma. */
#ifdef __CUDA_ARCH__
#define ZC_SP_UNROLL _Pragma("unroll")
#else
#define ZC_SP_UNROLL
#endif

namespace zc {
namespace detail {

constexpr int kSpMaxRadius = 48; /* ceil(3 * 16) */
constexpr int kSpWeightBits = 16;

enum SpMode : int32_t { kSpBlur, kSpSharpen, kSpEdges };

/* What a layer writes into each channel of its elements. */
enum SpRole : uint8_t {
  kSpFilter, /* the effect's output */
  kSpCopy,   /* the source sample, bit for bit */
  kSpConst,  /* Layer::konst (neutral chroma) */
};

/* Symmetric integer taps: w[0] is the centre, w[t] = w[-t]; they sum to
 * 2^kSpWeightBits. */
struct SpTaps
{
  int32_t r;
  uint32_t w[kSpMaxRadius + 1];
};

/* A 2-D array of elements within one plane: w x h elements, element x of
 * row y at src + y * sstride + x * pstride (and the same in dst). An element
 * holds nch samples (8-bit, or 16-bit little-endian when wide) at byte
 * offsets off[]; value = (sample >> shift) & (2^depth - 1). A layer writes
 * exactly the sample bytes of its channels, so the layers of a pass
 * partition the destination's picture bytes. */
struct SpLayer
{
  const uint8_t *src;
  uint8_t *dst;
  size_t sstride, dstride;
  int32_t w, h;
  uint8_t pstride, nch, wide, depth, shift;
  uint8_t nfilter; /* channels with role kSpFilter */
  uint8_t word4;   /* 4 8-bit channels in a 4-byte-aligned 32-bit word */
  uint8_t tx, ty;  /* Pass::taps index of the horizontal / vertical taps */
  uint8_t off[4];
  uint8_t role[4];
  uint16_t konst;
};

struct SpPass
{
  int32_t mode;      /* SpMode */
  int32_t amount_q8; /* sharpen: round(256 amount) */
  int32_t n_layers;
  SpLayer layers[3];
  SpTaps taps[3];
};

struct SpPlan
{
  int32_t n_passes;
  SpPass passes[3];
};

/* Validates the request and fills the plan (host only,
 * zcspatial-plan.cpp). An inactive request yields n_passes == 0 (the caller
 * copies). */
bool spatial_plan(const FrameDesc &src, const FrameDesc &dst,
                  const FrameDesc *scratch, const SpatialParams &p,
                  SpPlan *plan);

ZC_HD inline int
sp_clamp(int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

ZC_HD inline uint32_t
sp_max(const SpLayer &L)
{
  return (1u << L.depth) - 1u;
}

/* The nch values of element x of a row. */
template <int NCH>
ZC_HD inline void
sp_load(const SpLayer &L, const uint8_t *row, int x, uint32_t v[NCH])
{
  const uint8_t *e = row + (size_t)x * L.pstride;
  if (NCH == 4 && L.word4) {
    uint32_t word;
#ifdef __CUDA_ARCH__
    word = *(const uint32_t *)e;
#else
    std::memcpy(&word, e, 4);
#endif
    /* Little-endian: byte k of the element is bits 8k..8k+7. */
    for (int c = 0; c < NCH; c++)
      v[c] = (word >> (8 * L.off[c])) & 0xffu;
    return;
  }
  const uint32_t mask = sp_max(L);
  for (int c = 0; c < NCH; c++) {
    const uint8_t *s = e + L.off[c];
    const uint32_t word
        = L.wide ? (uint32_t)s[0] | ((uint32_t)s[1] << 8) : (uint32_t)s[0];
    v[c] = (word >> L.shift) & mask;
  }
}

/* Writes element x of a row: filtered channels from val[], the others
 * copied from the source element or set to the neutral value. */
template <int NCH>
ZC_HD inline void
sp_store(const SpLayer &L, const uint8_t *srow, uint8_t *drow, int x,
         const uint32_t val[NCH])
{
  const uint8_t *se = srow + (size_t)x * L.pstride;
  uint8_t *de = drow + (size_t)x * L.pstride;
  if (NCH == 4 && L.word4) {
    uint32_t word;
#ifdef __CUDA_ARCH__
    word = *(const uint32_t *)se;
#else
    std::memcpy(&word, se, 4);
#endif
    for (int c = 0; c < NCH; c++) {
      const int sh = 8 * L.off[c];
      if (L.role[c] == kSpFilter)
        word = (word & ~(0xffu << sh)) | (val[c] << sh);
      else if (L.role[c] == kSpConst)
        word = (word & ~(0xffu << sh)) | ((uint32_t)(L.konst & 0xff) << sh);
    }
#ifdef __CUDA_ARCH__
    *(uint32_t *)de = word;
#else
    std::memcpy(de, &word, 4);
#endif
    return;
  }
  for (int c = 0; c < NCH; c++) {
    const uint8_t *s = se + L.off[c];
    uint8_t *d = de + L.off[c];
    uint32_t word;
    if (L.role[c] == kSpFilter)
      word = val[c] << L.shift;
    else if (L.role[c] == kSpConst)
      word = L.konst;
    else
      word = L.wide ? (uint32_t)s[0] | ((uint32_t)s[1] << 8) : (uint32_t)s[0];
    d[0] = (uint8_t)word;
    if (L.wide)
      d[1] = (uint8_t)(word >> 8);
  }
}

/* sum_t w[t] get(t) over -r..r, folding the symmetric pairs. */
template <class Get>
ZC_HD inline uint32_t
sp_fold(const uint32_t *w, int r, Get get)
{
  uint32_t s = w[0] * get(0);
  ZC_SP_UNROLL
  for (int t = 1; t <= r; t++)
    s += w[t] * (get(-t) + get(t));
  return s;
}

/* The horizontal pass of element x of a row: I = (H + 2^(D-1)) >> D per
 * channel (16-bit values). r is T.r, passed apart so that a caller with a
 * constant radius gets it unrolled. */
template <int NCH>
ZC_HD inline void
sp_hpass(const SpLayer &L, const SpTaps &T, int r, const uint8_t *row, int x,
         uint32_t I[NCH])
{
  uint32_t v[NCH];
  sp_load<NCH>(L, row, x, v);
  for (int c = 0; c < NCH; c++)
    I[c] = T.w[0] * v[c];
  ZC_SP_UNROLL
  for (int t = 1; t <= r; t++) {
    uint32_t a[NCH], b[NCH];
    sp_load<NCH>(L, row, x - t < 0 ? 0 : x - t, a);
    sp_load<NCH>(L, row, x + t >= L.w ? L.w - 1 : x + t, b);
    for (int c = 0; c < NCH; c++)
      I[c] += T.w[t] * (a[c] + b[c]);
  }
  const uint32_t half = 1u << (L.depth - 1);
  for (int c = 0; c < NCH; c++)
    I[c] = (I[c] + half) >> L.depth;
}

/* The blurred sample from the vertical sum V (32 - D fraction bits). */
ZC_HD inline uint32_t
sp_blur_out(const SpLayer &L, uint32_t V)
{
  const uint32_t o = (V + (1u << (31 - L.depth))) >> (32 - L.depth);
  const uint32_t m = sp_max(L);
  return o > m ? m : o;
}

/* The unsharp mask of sample v, given the vertical sum V of its blur. */
ZC_HD inline uint32_t
sp_sharpen_out(const SpLayer &L, int32_t amount_q8, uint32_t v, uint32_t V)
{
  const uint32_t b8 = (V + (1u << (23 - L.depth))) >> (24 - L.depth);
  const int64_t d = (int64_t)(v << 8) - (int64_t)b8;
  /* floor((A d + 2^15) / 2^16) with an unsigned shift: A d > -2^40. */
  const int64_t q = (int64_t)(((uint64_t)((int64_t)amount_q8 * d
                                          + ((int64_t)1 << 40) + (1 << 15)))
                              >> 16)
                    - ((int64_t)1 << 24);
  const int64_t o = (int64_t)v + q;
  const int64_t m = (int64_t)sp_max(L);
  return (uint32_t)(o < 0 ? 0 : (o > m ? m : o));
}

/* Exact floor(sqrt(s)) for s < 2^52. */
ZC_HD inline uint32_t
sp_isqrt(uint64_t s)
{
  uint64_t r = (uint64_t)sqrt((double)s);
  while (r * r > s)
    r--;
  while ((r + 1) * (r + 1) <= s)
    r++;
  return (uint32_t)r;
}

/* Sobel magnitude from the 3x3 neighbourhood n[row][column] (row 0 above,
 * column 0 to the left). */
ZC_HD inline uint32_t
sp_sobel_out(const SpLayer &L, const int32_t n[3][3])
{
  const int64_t gx = (int64_t)(n[0][2] + 2 * n[1][2] + n[2][2])
                     - (n[0][0] + 2 * n[1][0] + n[2][0]);
  const int64_t gy = (int64_t)(n[2][0] + 2 * n[2][1] + n[2][2])
                     - (n[0][0] + 2 * n[0][1] + n[0][2]);
  const uint32_t o = (sp_isqrt((uint64_t)(gx * gx + gy * gy)) + 2) >> 2;
  const uint32_t m = sp_max(L);
  return o > m ? m : o;
}

} // namespace detail
} // namespace zc

#endif /* GST_ZC_KERNELS_SPATIAL_COMMON_H */

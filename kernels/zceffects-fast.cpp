/* gst-zerocopy: the point-effects route of the CPU backend (zcconvert-fast.h).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * zcfilter's brightness, contrast, saturation, hue, grayscale, gamma and
 * invert on a frame that is otherwise only copied: same format and size,
 * nothing moved, no colour step. convert_block() then reads each sample,
 * runs effects_pixel() / effects_chroma() (zceffects-common.h) on it and
 * stores it; with nothing moved and the same subsampling on both sides,
 * the chroma of a block is the source's own sample, not filtered. So every
 * output sample depends on its input sample(s) alone, and the route
 * replaces the arithmetic with tables built from the very same functions:
 *  - luma (Y'CbCr, GRAY): effects_luma() of each 8-bit code (256 entries,
 *    looked up two samples at a time, pair_table(), except in packed 4:2:2
 *    macropixels), or, for 16-bit samples, of each stored 16-bit word,
 *    read and written as rd_sample() and wr_sample() do (65536 entries);
 *  - 8-bit chroma: effects_chroma() of each (U, V) pair (65536 entries,
 *    videobalance's own approach), or a copy when it changes nothing;
 *    10-bit chroma (P010, I420_10LE): effects_chroma()'s arithmetic per
 *    sample (chroma16_row()), a 2D table over 10-bit pairs being too
 *    large;
 *  - R'G'B': each stage's round trip through the integer BT.601 matrices
 *    of fx_rgb_round_trip(), on chunks of pixels held apart per component
 *    so that the matrices vectorise; only the look-ups in the stage's
 *    tables (luma by pairs, chroma by (U, V)) stay scalar. Four-byte
 *    pixels without a chroma table take AVX-512 loops where the CPU has
 *    them (rgb4_row_avx512()), which look the luma up in registers, else
 *    AVX2 ones (rgb4_row_avx2()), which gather it from the pair table;
 *  - R'G'B' steps that are inverts alone: the R, G and B bytes flipped
 *    (or copied, for an even count) a whole pixel word at a time
 *    (invert_rgb_row()), whatever the CPU.
 * Building the (U, V) table costs a good part of what a frame then takes,
 * so each thread keeps the last table of each kind it built and builds
 * another only when the settings change.
 */
#include "zcconvert-fast.h"
#include "zcparallel.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

/* GCC and Clang on x86-64 (ELF): functions built for AVX2 beside the
 * baseline, picked at run time */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define ZC_HAVE_AVX2_CLONES 1
#define ZC_ALWAYS_INLINE __attribute__((always_inline))
#include <immintrin.h>
#else
#define ZC_HAVE_AVX2_CLONES 0
#define ZC_ALWAYS_INLINE
#endif

namespace zc {
namespace detail {

namespace {

/* Pixels per thread below which another thread does not pay. */
constexpr int64_t kMinPixelsPerThread = 32 * 1024;

/* R'G'B' pixels handled together: a fixed count, so that the loops over a
 * chunk have a trip count the compiler knows (GCC's -O2 vectorises only
 * such loops). */
constexpr int kChunk = 128;

/* The table slots of a chain's steps (chroma_table(), pair_table()) are
 * 0 .. kMaxEffectSteps - 1; the effects that follow another route
 * (effects_after_prepare()) take the next, so that frames of the two
 * kinds on one thread do not rebuild each other's tables. */
constexpr int kAfterSlot = kMaxEffectSteps;
constexpr int kSlots = kMaxEffectSteps + 1;

/* ---- tables kept between calls ------------------------------------------ */

/* What a 65536-entry table depends on. Keys are compared as bytes, so they
 * are built from zeroed memory (padding included). */
struct ChromaKey
{
  int64_t cm[2][2];
  uint8_t balance, invert;
};

struct Luma16Key
{
  uint16_t y16[256];
  int32_t inv_y;
  uint8_t balance, gamma, invert, wide10;
};

template <class Key> struct TableCache
{
  bool valid;
  Key key;
  uint16_t t[65536];
};

ChromaKey
chroma_key(const EffectsPlan &E, bool yuv)
{
  ChromaKey key;
  std::memset(&key, 0, sizeof(key));
  std::memcpy(key.cm, E.cm, sizeof(key.cm));
  key.balance = E.balance;
  key.invert = yuv && E.invert;
  return key;
}

Luma16Key
luma16_key(const EffectsPlan &E, const FmtInfo &f)
{
  Luma16Key key;
  std::memset(&key, 0, sizeof(key));
  std::memcpy(key.y16, E.y16, sizeof(key.y16));
  key.inv_y = E.inv_y;
  key.balance = E.balance;
  key.gamma = E.gamma;
  key.invert = E.invert;
  key.wide10 = f.wide10;
  return key;
}

/* The calling thread's table for `key`, filled by fill(t) when it is not
 * the one built last; null when there is no memory for it. The threads
 * of parallel_rows() only read it, and are joined before the caller
 * returns. */
template <class Key, class Fill>
const uint16_t *
cached_table(std::unique_ptr<TableCache<Key>> &slot, const Key &key,
             const Fill &fill)
{
  if (!slot) {
    slot.reset(new (std::nothrow) TableCache<Key>);
    if (!slot)
      return nullptr;
    slot->valid = false;
  }
  if (slot->valid && std::memcmp(&slot->key, &key, sizeof(Key)) == 0)
    return slot->t;
  fill(slot->t);
  std::memcpy(&slot->key, &key, sizeof(Key));
  slot->valid = true;
  return slot->t;
}

/* 8-bit chroma: entry u | v << 8 holds u' | v' << 8. With `yuv`, all of
 * effects_chroma() (balance, invert); else only stage 1's chroma, as
 * fx_rgb_round_trip() applies it. */
const uint16_t *
chroma_table(const EffectsPlan &E, bool yuv, int stage = 0)
{
  /* one per step of a chain (effects_chain_cpu()), one for kAfterSlot */
  thread_local std::unique_ptr<TableCache<ChromaKey>> slots[kSlots];
  std::unique_ptr<TableCache<ChromaKey>> &slot = slots[stage];
  return cached_table(slot, chroma_key(E, yuv), [&E, yuv](uint16_t *t) {
    for (uint32_t v = 0; v < 256; v++) {
      for (uint32_t u = 0; u < 256; u++) {
        uint32_t cu = u, cv = v;
        if (yuv) {
          effects_chroma(E, &cu, &cv);
        } else {
          int32_t iu = (int32_t)u, iv = (int32_t)v;
          fx_balance_chroma(E, 128, &iu, &iv);
          cu = (uint32_t)iu;
          cv = (uint32_t)iv;
        }
        t[u | v << 8] = (uint16_t)((cu & 0xffu) | (cv & 0xffu) << 8);
      }
    }
  });
}

/* 16-bit luma: entry w (a stored sample, its first byte low) holds the
 * stored result of effects_luma() on it. */
const uint16_t *
luma16_table(const EffectsPlan &E, const FmtInfo &f)
{
  thread_local std::unique_ptr<TableCache<Luma16Key>> slot;
  return cached_table(slot, luma16_key(E, f), [&E, &f](uint16_t *t) {
    for (uint32_t w = 0; w < 65536; w++) {
      const uint8_t in[2] = {(uint8_t)w, (uint8_t)(w >> 8)};
      uint8_t out[2] = {0, 0};
      wr_sample(f, out, effects_luma(E, rd_sample(f, in)));
      t[w] = (uint16_t)(out[0] | out[1] << 8);
    }
  });
}

/* 8-bit samples two at a time: entry b0 | b1 << 8 holds t[b0] | t[b1] << 8.
 * Half the look-ups of t itself, from a table that still sits in L2, and
 * cheap to build. */
struct PairKey
{
  uint8_t t[256];
};

const uint16_t *
pair_table(const uint8_t *t, int which = 0)
{
  /* two a slot (a step of a chain, kAfterSlot), for the two stages of an
   * R'G'B' frame */
  thread_local std::unique_ptr<TableCache<PairKey>> slots[2 * kSlots];
  std::unique_ptr<TableCache<PairKey>> &slot = slots[which];
  PairKey key;
  std::memcpy(key.t, t, sizeof(key.t));
  return cached_table(slot, key, [t](uint16_t *p) {
    for (uint32_t w = 0; w < 65536; w++)
      p[w] = (uint16_t)(t[w & 0xff] | t[w >> 8] << 8);
  });
}

/* Whether stage 1 leaves chroma as it is: cm is the identity (saturation
 * 1, hue 0), and 2^kFxShift i rounds to i exactly. */
bool
chroma_identity(const EffectsPlan &E)
{
  const int64_t one = (int64_t)1 << kFxShift;
  return E.cm[0][0] == one && E.cm[1][1] == one && E.cm[0][1] == 0
         && E.cm[1][0] == 0;
}

/* Steps of a chain on 8-bit chroma or 16-bit luma, where each is a
 * 65536-entry table of the same kind: one table for all of them, entry w
 * holding t_n[...t_1[w]], which is what the steps write one after the
 * other. Kept per thread, as the steps' own tables, and built again only
 * when a step changes. */
template <class Key> struct ComposedCache
{
  bool valid;
  int n;
  Key keys[kMaxEffectSteps];
  uint16_t t[65536];
};

/* `keys` and `n` describe the steps; table(i) returns step i's table
 * (null when out of memory, or for a step that leaves the values as they
 * are: it is skipped). */
template <class Key, class Table>
const uint16_t *
composed_table(std::unique_ptr<ComposedCache<Key>> &slot, const Key *keys,
               int n, const Table &table)
{
  if (!slot) {
    slot.reset(new (std::nothrow) ComposedCache<Key>);
    if (!slot)
      return nullptr;
    slot->valid = false;
  }
  if (slot->valid && slot->n == n
      && std::memcmp(slot->keys, keys, sizeof(Key) * (size_t)n) == 0)
    return slot->t;
  slot->valid = false;
  uint16_t *t = slot->t;
  for (uint32_t w = 0; w < 65536; w++)
    t[w] = (uint16_t)w;
  for (int i = 0; i < n; i++) {
    bool skip = false;
    const uint16_t *ti = table(i, &skip);
    if (skip)
      continue;
    if (!ti)
      return nullptr;
    for (uint32_t w = 0; w < 65536; w++)
      t[w] = ti[t[w]];
  }
  std::memcpy(slot->keys, keys, sizeof(Key) * (size_t)n);
  slot->n = n;
  slot->valid = true;
  return slot->t;
}

/* ---- table look-ups ----------------------------------------------------- */

/* Eight bytes as a little-endian word, so that a byte's place in it does
 * not depend on the machine. */
inline uint64_t
load_le64(const uint8_t *p)
{
  uint64_t v;
  std::memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

inline void
store_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  std::memcpy(p, &v, 8);
}

/* The look-ups below go four 16-bit keys (four pairs of 8-bit samples, or
 * four 16-bit samples) to a 64-bit word: one load and one store a word
 * instead of one a sample. Written as plain per-sample loops, GCC -O3
 * "vectorises" them by assembling vectors from scalar loads through the
 * stack, which stalls on store forwarding: slower than scalar code. */

/* 4 16-bit values through a 65536-entry table. */
inline uint64_t
lut16x4(uint64_t v, const uint16_t *t)
{
  return (uint64_t)t[v & 0xffff] | (uint64_t)t[(v >> 16) & 0xffff] << 16
         | (uint64_t)t[(v >> 32) & 0xffff] << 32 | (uint64_t)t[v >> 48] << 48;
}

/* Byte lanes: 8 U and 8 V (byte i of each word one chroma pair) through the
 * (U, V) table, in place. */
inline void
lut_uv8(uint64_t *u, uint64_t *v, const uint16_t *t)
{
  uint64_t ou = 0, ov = 0;
  for (int i = 0; i < 64; i += 8) {
    const uint32_t o = t[((*u >> i) & 0xff) | ((*v >> i) & 0xff) << 8];
    ou |= (uint64_t)(o & 0xff) << i;
    ov |= (uint64_t)(o >> 8) << i;
  }
  *u = ou;
  *v = ov;
}

/* ---- R'G'B' ------------------------------------------------------------- */

struct RgbStages
{
  const uint16_t *bal_y; /* stage 1's luma table (pair_table()), null
                            without stage 1 */
  const uint16_t *ctab;  /* stage 1's chroma (chroma_table()), null when it
                            is the identity */
  const uint16_t *gam_y; /* stage 2's (pair_table()), null without it */
  const uint8_t *bal8;   /* the AVX-512 loops' luma tables, 256 bytes */
  const uint8_t *gam8;   /* each (the pair tables unset there) */
  bool invert;
};

inline uint8_t
clamp255(int32_t v)
{
  return (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v));
}

/* fx_rgb_round_trip() on a chunk, in 16-bit lanes (8 a vector with SSE2
 * or NEON, against 4 for the 32-bit sums as written there). The forward
 * sums stay within 4096..61328 for any 8-bit R'G'B', so they are exact
 * modulo 2^16 and need no clamp. Each backward sum is split as 256 a + b
 * with b in 0..65535, so that its floor shift a + (b >> 8) fits too:
 *   298 Y + 409 V - 57068
 *     = 256 (Y + V - 223) + (42 Y + 153 V + 20)
 *   298 Y - 100 U - 208 V + 34707
 *     = 256 (Y - U - V + 135) + (42 Y + 156 U + 48 V + 147)
 *   298 Y + 516 U - 70870
 *     = 256 (Y + 2 U - 277) + (42 Y + 4 U + 42) */
ZC_ALWAYS_INLINE inline void
round_trip_body(uint8_t *__restrict r, uint8_t *__restrict g,
                uint8_t *__restrict b, const uint16_t *ytab,
                const uint16_t *ctab)
{
  uint8_t y[kChunk];
  uint16_t c[kChunk]; /* U | V << 8: the key of the chroma table */
  for (int k = 0; k < kChunk; k++) {
    const uint16_t R = r[k], G = g[k], B = b[k];
    const uint16_t u = (uint16_t)(112 * B - 38 * R - 74 * G + 32768) >> 8;
    const uint16_t v = (uint16_t)(112 * R - 94 * G - 18 * B + 32768) >> 8;
    y[k] = (uint8_t)((uint16_t)(66 * R + 129 * G + 25 * B + 4096) >> 8);
    c[k] = (uint16_t)(u | v << 8);
  }
  for (int k = 0; k < kChunk; k += 8) {
    uint64_t w;
    std::memcpy(&w, y + k, 8);
    w = lut16x4(w, ytab);
    std::memcpy(y + k, &w, 8);
  }
  if (ctab) {
    for (int k = 0; k < kChunk; k += 4) {
      uint64_t w;
      std::memcpy(&w, c + k, 8);
      w = lut16x4(w, ctab);
      std::memcpy(c + k, &w, 8);
    }
  }
  for (int k = 0; k < kChunk; k++) {
    const int16_t Y = y[k], U = (int16_t)(c[k] & 0xff),
                  V = (int16_t)(c[k] >> 8);
    const int16_t rr
        = (int16_t)(Y + V - 223 + ((uint16_t)(42 * Y + 153 * V + 20) >> 8));
    const int16_t gg
        = (int16_t)(Y - U - V + 135
                    + ((uint16_t)(42 * Y + 156 * U + 48 * V + 147) >> 8));
    const int16_t bb
        = (int16_t)(Y + 2 * U - 277 + ((uint16_t)(42 * Y + 4 * U + 42) >> 8));
    r[k] = clamp255(rr);
    g[k] = clamp255(gg);
    b[k] = clamp255(bb);
  }
}

/* round_trip_body() as compiled for the build's target, and, on x86-64,
 * for AVX2 too, taken when the CPU has it: twice the lanes for the sums,
 * which are most of an R'G'B' step's time (on x86-64 these loops take the
 * steps with a chroma table and three-byte pixels, the four-byte rest
 * going to the vector loops below). Both write the same bytes (integer
 * arithmetic); the tests run both, the baseline with ZC_CPU_SIMD=baseline
 * in the environment, AVX2 on a CPU with AVX-512 with ZC_CPU_SIMD=avx2. */
using RoundTrip = void (*)(uint8_t *, uint8_t *, uint8_t *, const uint16_t *,
                           const uint16_t *);

/* Whether ZC_CPU_SIMD lets loops built for `level` ("avx2", "avx512") run:
 * unset, everything the CPU has; "baseline", none; "avx2", AVX2 but not
 * AVX-512 (so that the tests reach each set of loops on one machine). */
[[maybe_unused]] bool
simd_allowed(const char *level)
{
  const char *simd = std::getenv("ZC_CPU_SIMD");
  if (!simd || !*simd)
    return true;
  if (std::strcmp(simd, "baseline") == 0)
    return false;
  if (std::strcmp(simd, "avx2") == 0)
    return std::strcmp(level, "avx2") == 0;
  return true;
}

void
round_trip_baseline(uint8_t *r, uint8_t *g, uint8_t *b, const uint16_t *ytab,
                    const uint16_t *ctab)
{
  round_trip_body(r, g, b, ytab, ctab);
}

#if ZC_HAVE_AVX2_CLONES
__attribute__((target("avx2"))) void
round_trip_avx2(uint8_t *r, uint8_t *g, uint8_t *b, const uint16_t *ytab,
                const uint16_t *ctab)
{
  round_trip_body(r, g, b, ytab, ctab);
}

/* Whether loops built for AVX2 may run (the CPU has it, ZC_CPU_SIMD lets
 * them) */
bool
have_avx2_rgb()
{
  __builtin_cpu_init();
  return simd_allowed("avx2") && __builtin_cpu_supports("avx2");
}
#endif

RoundTrip
pick_round_trip()
{
#if ZC_HAVE_AVX2_CLONES
  if (have_avx2_rgb())
    return round_trip_avx2;
#endif
  return round_trip_baseline;
}

const RoundTrip round_trip = pick_round_trip();

/* effects_pixel() on a chunk (an R'G'B' destination). */
void
rgb_stages(uint8_t *r, uint8_t *g, uint8_t *b, const RgbStages &st)
{
  if (st.bal_y)
    round_trip(r, g, b, st.bal_y, st.ctab);
  if (st.gam_y)
    round_trip(r, g, b, st.gam_y, nullptr);
  if (st.invert) {
    for (int k = 0; k < kChunk; k++) {
      r[k] = (uint8_t)(255 - r[k]);
      g[k] = (uint8_t)(255 - g[k]);
      b[k] = (uint8_t)(255 - b[k]);
    }
  }
}

/* One chunk of pixels of PS bytes, R, G, B at bytes OR, OG, OB, through
 * the stages of n_steps steps; the byte at OA (alpha or padding; none when
 * negative) is stored as read, as convert_block() stores the source's
 * alpha. `in` may be `out` (every byte is read before any is written).
 * (GCC vectorises these strided byte loops; Clang 14 leaves them scalar.
 * Whole 32-bit words and shifts would suit Clang better but slow GCC down
 * on RGBA.) */
template <int OR, int OG, int OB, int OA, int PS>
void
rgb_chunk(const uint8_t *in, uint8_t *out, const RgbStages *st, int n_steps)
{
  /* a: unused where the format has no alpha byte (GCC 9 says so) */
  uint8_t r[kChunk], g[kChunk], b[kChunk];
  [[maybe_unused]] uint8_t a[kChunk];
  for (int k = 0; k < kChunk; k++) {
    r[k] = in[k * PS + OR];
    g[k] = in[k * PS + OG];
    b[k] = in[k * PS + OB];
    if constexpr (OA >= 0)
      a[k] = in[k * PS + OA];
  }
  /* the steps of a chain one after the other, on the chunk */
  for (int i = 0; i < n_steps; i++)
    rgb_stages(r, g, b, st[i]);
  for (int k = 0; k < kChunk; k++) {
    out[k * PS + OR] = r[k];
    out[k * PS + OG] = g[k];
    out[k * PS + OB] = b[k];
    if constexpr (OA >= 0)
      out[k * PS + OA] = a[k];
  }
}

/* A row of w pixels of PS bytes, chunk by chunk; a last partial chunk
 * goes through a copy so that the chunk loops keep their fixed count. */
template <int OR, int OG, int OB, int OA, int PS>
void
rgb_row(const uint8_t *s, uint8_t *d, int w, const RgbStages *st, int n_steps)
{
  const auto chunk = rgb_chunk<OR, OG, OB, OA, PS>;
  int x = 0;
  for (; x + kChunk <= w; x += kChunk)
    chunk(s + (size_t)x * PS, d + (size_t)x * PS, st, n_steps);
  if (x < w) {
    uint8_t tin[kChunk * PS], tout[kChunk * PS];
    const size_t n = (size_t)(w - x) * PS;
    std::memset(tin, 0, sizeof(tin));
    std::memcpy(tin, s + (size_t)x * PS, n);
    chunk(tin, tout, st, n_steps);
    std::memcpy(d + (size_t)x * PS, tout, n);
  }
}

using RgbRow = void (*)(const uint8_t *, uint8_t *, int, const RgbStages *,
                        int);

RgbRow
rgb_row_for(const FmtInfo &f)
{
  const int8_t *o = f.off;
  if (f.pstride == 4) {
    if (o[0] == 0 && o[1] == 1 && o[2] == 2 && o[3] == 3)
      return rgb_row<0, 1, 2, 3, 4>; /* RGBA, RGBx */
    if (o[0] == 2 && o[1] == 1 && o[2] == 0 && o[3] == 3)
      return rgb_row<2, 1, 0, 3, 4>; /* BGRA, BGRx */
    if (o[0] == 1 && o[1] == 2 && o[2] == 3 && o[3] == 0)
      return rgb_row<1, 2, 3, 0, 4>; /* ARGB, xRGB */
    if (o[0] == 3 && o[1] == 2 && o[2] == 1 && o[3] == 0)
      return rgb_row<3, 2, 1, 0, 4>; /* ABGR, xBGR */
  } else if (f.pstride == 3 && o[3] < 0) {
    if (o[0] == 0 && o[1] == 1 && o[2] == 2)
      return rgb_row<0, 1, 2, -1, 3>; /* RGB */
    if (o[0] == 2 && o[1] == 1 && o[2] == 0)
      return rgb_row<2, 1, 0, -1, 3>; /* BGR */
  }
  return nullptr;
}

#if ZC_HAVE_AVX2_CLONES
/* ---- R'G'B' with AVX-512 ------------------------------------------------ */

/* The round trips of fx_rgb_round_trip() on 64 four-byte pixels at a time,
 * four vectors of 16, each pixel in its own 32-bit lane, as stored (no
 * unpacking):
 *  - forward sums by byte dot products (VNNI vpdpbusd), each sum then
 *    holding its 8-bit result in byte 1 of the lane (the sums stay within
 *    0..65535, so byte 1 is the floor shift). U and V: the pixel's bytes,
 *    unsigned, times signed byte weights. Y's weight 129 does not fit a
 *    signed byte, so there the weights are the unsigned side and the
 *    pixel the signed one, each byte flipped by its top bit (v - 128), the
 *    constant taking back 128 times the weights' sum;
 *  - the luma table: byte 1 of the four vectors' Y sums gathered into one
 *    register (two byte permutes and a blend), then 256 bytes in four
 *    registers looked up on all 64 (VBMI vpermi2b on the low 7 bits, the
 *    top bit picking the half);
 *  - backward sums by 16-bit pair products (vpdpwssd) of (Y', V) and
 *    (Y', U) pairs, each gathered with one byte permute from the looked-up
 *    bytes and the V (U) sum;
 *  - clamping by a saturating pack of each sum to 16 bits unsigned
 *    (0..65535), whose high byte is then the clamped floor shift,
 *    clamp(s >> 8, 0, 255); one byte permute takes those high bytes back to
 *    the pixel's byte order.
 * Integer arithmetic throughout: the same bytes as the loops above (the
 * tests run both). Only R'G'B' steps without a chroma table (saturation 1,
 * hue 0) take these loops. */
#define ZC_AVX512_TARGET                                                       \
  __attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vnni")))

/* Vectors of 16 pixels a block */
constexpr int kVecs = 4;

struct Rgb4Consts
{
  __m512i wy, wu, wv;           /* forward byte weights (wy unsigned) */
  __m512i flip;                 /* 0x80 in every byte */
  __m512i cy, cuv;              /* forward constants */
  __m512i idx_y;                /* byte 1 of each lane of two Y sums */
  __m512i idx_pair[kVecs];      /* (Y', 0, V or U, 0) of vector i */
  __m512i wr, wg1, wg2, wb;     /* backward pair weights */
  __m512i cr, cg, cb;           /* backward constants */
  __m512i repack;               /* high bytes of R, G, B words to pixels */
  __m512i rgb_bits;             /* 0xff on the R, G and B bytes */
  __mmask64 alpha;              /* the alpha (or padding) bytes */
};

/* A pixel's 32-bit lane holding v0, v1, v2 at bytes o0, o1, o2 (0 at the
 * fourth), as the lanes of the vector loops below read it */
inline int
lane_word(int o0, int8_t v0, int o1, int8_t v1, int o2, int8_t v2)
{
  uint8_t b[4] = { 0, 0, 0, 0 };
  b[o0] = (uint8_t)v0;
  b[o1] = (uint8_t)v1;
  b[o2] = (uint8_t)v2;
  return (int)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16
               | (uint32_t)b[3] << 24);
}

/* A lane of two 16-bit words, lo first */
inline int
pair_word(int16_t lo, int16_t hi)
{
  return (int)((uint32_t)(uint16_t)lo | (uint32_t)(uint16_t)hi << 16);
}

ZC_AVX512_TARGET inline __m512i
bytes_in_lane(int o0, int8_t v0, int o1, int8_t v1, int o2, int8_t v2)
{
  return _mm512_set1_epi32(lane_word(o0, v0, o1, v1, o2, v2));
}

ZC_AVX512_TARGET inline __m512i
pair(int16_t lo, int16_t hi)
{
  return _mm512_set1_epi32(pair_word(lo, hi));
}

/* Pixel bytes R, G, B at OR, OG, OB (alpha at the fourth), into @c in
 * place: GCC 9 returned such a struct through a temporary of its caller's
 * that it did not align to 64 bytes, and the aligned stores into it
 * crashed */
ZC_AVX512_TARGET void
rgb4_consts(Rgb4Consts &c, int OR, int OG, int OB)
{
  /* 66, 129, 25 as unsigned bytes (129 is -127 as a signed one) */
  c.wy = bytes_in_lane(OR, 66, OG, (int8_t)-127, OB, 25);
  c.wu = bytes_in_lane(OR, -38, OG, -74, OB, 112);
  c.wv = bytes_in_lane(OR, 112, OG, -94, OB, -18);
  c.flip = _mm512_set1_epi8((char)0x80);
  c.cy = _mm512_set1_epi32(4096 + 128 * (66 + 129 + 25));
  c.cuv = _mm512_set1_epi32(32768);
  uint8_t iy[64], pr[kVecs][64], rp[64];
  for (int j = 0; j < 64; j++) {
    /* byte 1 of lane j % 16 of the first sum (j % 32 < 16) or of the
     * second (indices from 64); both halves alike */
    const int k = j % 32;
    iy[j] = (uint8_t)((k < 16 ? 0 : 64) + 4 * (k % 16) + 1);
  }
  for (int i = 0; i < kVecs; i++) {
    for (int j = 0; j < 16; j++) {
      /* (the looked-up byte of pixel 16 i + j, 0, byte 1 of the V (U)
       * sum, 0); indices from 64 name the second source, whose bytes 2
       * and 3 are 0 */
      pr[i][4 * j] = (uint8_t)(16 * i + j);
      pr[i][4 * j + 1] = (uint8_t)(64 + 4 * j + 3);
      pr[i][4 * j + 2] = (uint8_t)(64 + 4 * j + 1);
      pr[i][4 * j + 3] = (uint8_t)(64 + 4 * j + 3);
    }
    c.idx_pair[i] = _mm512_loadu_si512(pr[i]);
  }
  for (int l = 0; l < 4; l++) {
    for (int j = 0; j < 4; j++) {
      /* in each 128-bit lane the packs hold R0..3 then G0..3 (first
       * source) and B0..3 (second) as words: their high bytes */
      uint8_t *px = rp + 16 * l + 4 * j;
      px[0] = px[1] = px[2] = px[3] = (uint8_t)(16 * l); /* any */
      px[OR] = (uint8_t)(16 * l + 2 * j + 1);
      px[OG] = (uint8_t)(16 * l + 8 + 2 * j + 1);
      px[OB] = (uint8_t)(64 + 16 * l + 2 * j + 1);
    }
  }
  c.idx_y = _mm512_loadu_si512(iy);
  c.repack = _mm512_loadu_si512(rp);
  c.wr = pair(298, 409);
  c.wg1 = pair(298, -100);
  c.wg2 = pair(0, -208);
  c.wb = pair(298, 516);
  c.cr = _mm512_set1_epi32(-57068);
  c.cg = _mm512_set1_epi32(34707);
  c.cb = _mm512_set1_epi32(-70870);
  c.rgb_bits = bytes_in_lane(OR, -1, OG, -1, OB, -1);
  const int OA = 6 - OR - OG - OB;
  uint64_t m = 0;
  for (int j = 0; j < 16; j++)
    m |= (uint64_t)1 << (4 * j + OA);
  c.alpha = (__mmask64)m;
}

/* 256 bytes as four registers, for lut256() */
struct Lut256
{
  __m512i t[4];
};

ZC_AVX512_TARGET inline Lut256
load_lut256(const uint8_t *t)
{
  Lut256 l;
  for (int i = 0; i < 4; i++)
    l.t[i] = _mm512_loadu_si512(t + 64 * i);
  return l;
}

ZC_AVX512_TARGET inline __m512i
lut256(const Lut256 &l, __m512i idx)
{
  const __m512i lo = _mm512_permutex2var_epi8(l.t[0], idx, l.t[1]);
  const __m512i hi = _mm512_permutex2var_epi8(l.t[2], idx, l.t[3]);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi);
}

/* One round trip of the block p[] through the luma table t */
ZC_AVX512_TARGET inline void
round_trip64(__m512i p[kVecs], const Lut256 &t, const Rgb4Consts &c)
{
  __m512i ys[kVecs], us[kVecs], vs[kVecs];
  for (int i = 0; i < kVecs; i++) {
    ys[i] = _mm512_dpbusd_epi32(c.cy, c.wy, _mm512_xor_si512(p[i], c.flip));
    us[i] = _mm512_dpbusd_epi32(c.cuv, p[i], c.wu);
    vs[i] = _mm512_dpbusd_epi32(c.cuv, p[i], c.wv);
  }
  const __m512i y01 = _mm512_permutex2var_epi8(ys[0], c.idx_y, ys[1]);
  const __m512i y23 = _mm512_permutex2var_epi8(ys[2], c.idx_y, ys[3]);
  const __m512i yl = lut256(
      t, _mm512_mask_blend_epi8((__mmask64)0xffffffff00000000ull, y01, y23));
  for (int i = 0; i < kVecs; i++) {
    const __m512i yv = _mm512_permutex2var_epi8(yl, c.idx_pair[i], vs[i]);
    const __m512i yu = _mm512_permutex2var_epi8(yl, c.idx_pair[i], us[i]);
    const __m512i r = _mm512_dpwssd_epi32(c.cr, yv, c.wr);
    const __m512i g
        = _mm512_dpwssd_epi32(_mm512_dpwssd_epi32(c.cg, yu, c.wg1), yv, c.wg2);
    const __m512i b = _mm512_dpwssd_epi32(c.cb, yu, c.wb);
    p[i] = _mm512_permutex2var_epi8(_mm512_packus_epi32(r, g), c.repack,
                                    _mm512_packus_epi32(b, b));
  }
}

/* A row of w four-byte pixels through the steps (rgb_row()'s contract;
 * every step's ctab null) */
ZC_AVX512_TARGET void
rgb4_row_avx512(const uint8_t *s, uint8_t *d, int w, const RgbStages *st,
                int n_steps, const Rgb4Consts &c)
{
  Lut256 bal[kMaxEffectSteps], gam[kMaxEffectSteps];
  for (int i = 0; i < n_steps; i++) {
    if (st[i].bal8)
      bal[i] = load_lut256(st[i].bal8);
    if (st[i].gam8)
      gam[i] = load_lut256(st[i].gam8);
  }
  for (int x = 0; x < w; x += 16 * kVecs) {
    __mmask16 k[kVecs];
    __m512i in[kVecs], p[kVecs];
    for (int i = 0; i < kVecs; i++) {
      const int n = w - x - 16 * i;
      k[i] = n >= 16 ? (__mmask16)0xffff
                     : (n > 0 ? (__mmask16)((1u << n) - 1) : (__mmask16)0);
      /* past the row: zeros, computed and not stored */
      in[i] = k[i] ? _mm512_maskz_loadu_epi32(k[i], s + 4 * (size_t)(x + 16 * i))
                   : _mm512_setzero_si512();
      p[i] = in[i];
    }
    for (int j = 0; j < n_steps; j++) {
      if (st[j].bal8)
        round_trip64(p, bal[j], c);
      if (st[j].gam8)
        round_trip64(p, gam[j], c);
      if (st[j].invert) {
        for (int i = 0; i < kVecs; i++)
          p[i] = _mm512_xor_si512(p[i], c.rgb_bits);
      }
    }
    for (int i = 0; i < kVecs; i++) {
      if (!k[i])
        break;
      /* the alpha byte as read, as rgb_chunk() stores it */
      _mm512_mask_storeu_epi32(d + 4 * (size_t)(x + 16 * i), k[i],
                               _mm512_mask_blend_epi8(c.alpha, p[i], in[i]));
    }
  }
}

/* ---- R'G'B' with AVX2 --------------------------------------------------- */

/* The same round trips on CPUs with AVX2 but not those AVX-512 loops: 8
 * four-byte pixels a vector, each in its own 32-bit lane:
 *  - forward sums as byte products summed in pairs (vpmaddubsw: within
 *    -28560..28560 for any pixel, so never saturated) then pairs of pairs
 *    (vpmaddwd by ones); Y with the weights as the unsigned side and the
 *    pixel, flipped by its top bit, as the signed one, as above;
 *  - the luma looked up by gathers (vpgatherdd) from its pair table
 *    (pair_table()), each lane reading the entry of its pixel's Y and of
 *    the Y of the same lane of a second vector: one gather for 16 pixels
 *    (faster than gathering 32-bit entries of the 256-byte table, one
 *    gather for 8, and than the chunk loops);
 *  - backward sums by 16-bit pair products (vpmaddwd) of (Y', V) and
 *    (Y', U) lanes;
 *  - the clamp and floor shift by an unsigned saturating pack to 16 bits
 *    and its high bytes, shuffled back to the pixel's byte order. */
struct Rgb4ConstsAvx2
{
  __m256i wy, wu, wv, flip, ones16;
  __m256i cy, cuv;
  __m256i wr, wg1, wg2, wb, cr, cg, cb;
  __m256i pick_rg, pick_b; /* high bytes of the packed words to pixels */
  __m256i alpha;           /* 0xff on the alpha (or padding) byte */
  __m256i rgb_bits;        /* 0xff on the R, G and B bytes */
};

/* Into @c in place, as rgb4_consts() */
__attribute__((target("avx2"))) void
rgb4_consts_avx2(Rgb4ConstsAvx2 &c, int OR, int OG, int OB)
{
  /* 129 as an unsigned byte */
  c.wy = _mm256_set1_epi32(lane_word(OR, 66, OG, (int8_t)-127, OB, 25));
  c.wu = _mm256_set1_epi32(lane_word(OR, -38, OG, -74, OB, 112));
  c.wv = _mm256_set1_epi32(lane_word(OR, 112, OG, -94, OB, -18));
  c.flip = _mm256_set1_epi8((char)0x80);
  c.ones16 = _mm256_set1_epi16(1);
  c.cy = _mm256_set1_epi32(4096 + 128 * (66 + 129 + 25));
  c.cuv = _mm256_set1_epi32(32768);
  c.wr = _mm256_set1_epi32(pair_word(298, 409));
  c.wg1 = _mm256_set1_epi32(pair_word(298, -100));
  c.wg2 = _mm256_set1_epi32(pair_word(0, -208));
  c.wb = _mm256_set1_epi32(pair_word(298, 516));
  c.cr = _mm256_set1_epi32(-57068);
  c.cg = _mm256_set1_epi32(34707);
  c.cb = _mm256_set1_epi32(-70870);
  uint8_t prg[32], pb[32];
  std::memset(prg, 0x80, sizeof(prg)); /* 0x80: a zero byte */
  std::memset(pb, 0x80, sizeof(pb));
  for (int l = 0; l < 2; l++) {
    for (int j = 0; j < 4; j++) {
      /* each 128-bit lane packs R0..3, G0..3 (first) and B0..3 (second)
       * as words */
      prg[16 * l + 4 * j + OR] = (uint8_t)(2 * j + 1);
      prg[16 * l + 4 * j + OG] = (uint8_t)(8 + 2 * j + 1);
      pb[16 * l + 4 * j + OB] = (uint8_t)(2 * j + 1);
    }
  }
  c.pick_rg = _mm256_loadu_si256((const __m256i *)prg);
  c.pick_b = _mm256_loadu_si256((const __m256i *)pb);
  c.rgb_bits = _mm256_set1_epi32(lane_word(OR, -1, OG, -1, OB, -1));
  c.alpha = _mm256_xor_si256(c.rgb_bits, _mm256_set1_epi32(-1));
}

/* The forward sums of 8 pixels */
struct Sums8
{
  __m256i y, u, v;
};

__attribute__((target("avx2"))) inline Sums8
forward8(__m256i p, const Rgb4ConstsAvx2 &c)
{
  Sums8 f;
  f.y = _mm256_add_epi32(
      c.cy, _mm256_madd_epi16(
                _mm256_maddubs_epi16(c.wy, _mm256_xor_si256(p, c.flip)),
                c.ones16));
  f.u = _mm256_add_epi32(
      c.cuv, _mm256_madd_epi16(_mm256_maddubs_epi16(p, c.wu), c.ones16));
  f.v = _mm256_add_epi32(
      c.cuv, _mm256_madd_epi16(_mm256_maddubs_epi16(p, c.wv), c.ones16));
  return f;
}

/* The backward half: yl holds Y' in each lane's low byte (the rest 0) */
__attribute__((target("avx2"))) inline __m256i
backward8(__m256i yl, const Sums8 &f, const Rgb4ConstsAvx2 &c)
{
  /* the sums are within 0..65535: byte 1 is the floor shift */
  const __m256i hi = _mm256_set1_epi32(0x00ff0000);
  const __m256i yv
      = _mm256_or_si256(yl, _mm256_and_si256(_mm256_slli_epi32(f.v, 8), hi));
  const __m256i yu
      = _mm256_or_si256(yl, _mm256_and_si256(_mm256_slli_epi32(f.u, 8), hi));
  const __m256i r = _mm256_add_epi32(c.cr, _mm256_madd_epi16(yv, c.wr));
  const __m256i g = _mm256_add_epi32(
      _mm256_add_epi32(c.cg, _mm256_madd_epi16(yu, c.wg1)),
      _mm256_madd_epi16(yv, c.wg2));
  const __m256i b = _mm256_add_epi32(c.cb, _mm256_madd_epi16(yu, c.wb));
  /* clamped to 0..65535, the high byte is clamp(s >> 8, 0, 255) */
  return _mm256_or_si256(
      _mm256_shuffle_epi8(_mm256_packus_epi32(r, g), c.pick_rg),
      _mm256_shuffle_epi8(_mm256_packus_epi32(b, b), c.pick_b));
}

/* One round trip of two vectors of 8 pixels through the pair table t2 of
 * a luma table (pair_table()): one gather looks up a pixel of each */
__attribute__((target("avx2"))) inline void
round_trip8x2(__m256i *p0, __m256i *p1, const uint16_t *t2,
              const Rgb4ConstsAvx2 &c)
{
  const Sums8 f0 = forward8(*p0, c), f1 = forward8(*p1, c);
  /* Y of the first in byte 0, of the second in byte 1; the sums' byte 1
   * is their Y, within 16..235 for any pixel, so the 4-byte read at entry
   * idx (scale 2) stays inside the table */
  const __m256i byte1 = _mm256_set1_epi32(0xff00);
  const __m256i idx = _mm256_or_si256(_mm256_srli_epi32(f0.y, 8),
                                      _mm256_and_si256(f1.y, byte1));
  const __m256i yy = _mm256_i32gather_epi32((const int *)t2, idx, 2);
  const __m256i byte0 = _mm256_set1_epi32(0xff);
  *p0 = backward8(_mm256_and_si256(yy, byte0), f0, c);
  *p1 = backward8(_mm256_and_si256(_mm256_srli_epi32(yy, 8), byte0), f1, c);
}

/* Vectors of 8 pixels a block: independent round trips side by side, for
 * the gathers' latency */
constexpr int kVecs8 = 4;

/* A row of w four-byte pixels through the steps (rgb_row()'s contract;
 * every step's ctab null, its pair tables set) */
__attribute__((target("avx2"))) void
rgb4_row_avx2(const uint8_t *s, uint8_t *d, int w, const RgbStages *st,
              int n_steps, const Rgb4ConstsAvx2 &c)
{
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int x = 0; x < w; x += 8 * kVecs8) {
    __m256i k[kVecs8], in[kVecs8], p[kVecs8];
    for (int i = 0; i < kVecs8; i++) {
      const int n = w - x - 8 * i;
      const uint8_t *sp = s + 4 * (size_t)(x + 8 * i);
      k[i] = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane);
      /* past the row: zeros, computed and not stored */
      in[i] = n >= 8 ? _mm256_loadu_si256((const __m256i *)sp)
                     : (n > 0 ? _mm256_maskload_epi32((const int *)sp, k[i])
                              : _mm256_setzero_si256());
    }
    for (int i = 0; i < kVecs8; i++)
      p[i] = in[i];
    for (int j = 0; j < n_steps; j++) {
      if (st[j].bal_y) {
        for (int i = 0; i < kVecs8; i += 2)
          round_trip8x2(&p[i], &p[i + 1], st[j].bal_y, c);
      }
      if (st[j].gam_y) {
        for (int i = 0; i < kVecs8; i += 2)
          round_trip8x2(&p[i], &p[i + 1], st[j].gam_y, c);
      }
      if (st[j].invert) {
        for (int i = 0; i < kVecs8; i++)
          p[i] = _mm256_xor_si256(p[i], c.rgb_bits);
      }
    }
    for (int i = 0; i < kVecs8; i++) {
      const int n = w - x - 8 * i;
      if (n <= 0)
        break;
      /* the alpha byte as read, as rgb_chunk() stores it */
      const __m256i o = _mm256_blendv_epi8(p[i], in[i], c.alpha);
      uint8_t *dp = d + 4 * (size_t)(x + 8 * i);
      if (n >= 8)
        _mm256_storeu_si256((__m256i *)dp, o);
      else
        _mm256_maskstore_epi32((int *)dp, k[i], o);
    }
  }
}

bool
have_avx512_rgb()
{
  __builtin_cpu_init();
  return simd_allowed("avx512") && __builtin_cpu_supports("avx512f")
         && __builtin_cpu_supports("avx512bw")
         && __builtin_cpu_supports("avx512vbmi")
         && __builtin_cpu_supports("avx512vnni");
}
#endif /* ZC_HAVE_AVX2_CLONES */

/* ---- Y'CbCr and GRAY ---------------------------------------------------- */

/* A row of 8-bit samples through t, or its pair table t2. */
void
luma8_row(const uint8_t *s, uint8_t *d, int w, const uint8_t *t,
          const uint16_t *t2)
{
  int x = 0;
  for (; x + 8 <= w; x += 8)
    store_le64(d + x, lut16x4(load_le64(s + x), t2));
  for (; x < w; x++)
    d[x] = t[s[x]];
}

void
luma16_row(const uint8_t *s, uint8_t *d, int w, const uint16_t *t)
{
  int x = 0;
  for (; x + 4 <= w; x += 4)
    store_le64(d + 2 * x, lut16x4(load_le64(s + 2 * x), t));
  for (; x < w; x++) {
    const uint16_t o = t[s[2 * x] | s[2 * x + 1] << 8];
    d[2 * x] = (uint8_t)o;
    d[2 * x + 1] = (uint8_t)(o >> 8);
  }
}

/* n chroma pairs of a semi-planar 8-bit row, U at byte OU of each pair
 * (the table's key is U | V << 8). */
template <int OU>
void
semi8_row(const uint8_t *s, uint8_t *d, int n, const uint16_t *t)
{
  constexpr int OV = 1 - OU;
  int k = 0;
  if constexpr (OU == 0) {
    /* NV12: a pair read as a little-endian 16-bit value is the key */
    for (; k + 4 <= n; k += 4)
      store_le64(d + 2 * k, lut16x4(load_le64(s + 2 * k), t));
  } else {
    for (; k + 4 <= n; k += 4) {
      const uint64_t w = load_le64(s + 2 * k);
      /* swap the bytes of each pair, in and out */
      const uint64_t m = 0x00ff00ff00ff00ffull;
      const uint64_t o = lut16x4(((w & m) << 8) | ((w >> 8) & m), t);
      store_le64(d + 2 * k, ((o & m) << 8) | ((o >> 8) & m));
    }
  }
  for (; k < n; k++) {
    const uint16_t o = t[s[2 * k + OU] | s[2 * k + OV] << 8];
    d[2 * k + OU] = (uint8_t)o;
    d[2 * k + OV] = (uint8_t)(o >> 8);
  }
}

void
planar8_row(const uint8_t *su, const uint8_t *sv, uint8_t *du, uint8_t *dv,
            int n, const uint16_t *t)
{
  int k = 0;
  for (; k + 8 <= n; k += 8) {
    uint64_t u = load_le64(su + k), v = load_le64(sv + k);
    lut_uv8(&u, &v, t);
    store_le64(du + k, u);
    store_le64(dv + k, v);
  }
  for (; k < n; k++) {
    const uint16_t o = t[su[k] | sv[k] << 8];
    du[k] = (uint8_t)o;
    dv[k] = (uint8_t)(o >> 8);
  }
}

/* One packed 4:2:2 macropixel (little-endian, Y0, U, Y1, V at bytes
 * O0..O3); chroma through `t`, or kept when null. With `odd`, the pixel of
 * Y1 is past the frame's edge, and convert_block() stores Y0 there too. */
template <int O0, int O1, int O2, int O3>
inline uint32_t
macropixel(uint32_t m, const uint8_t *ty, const uint16_t *t, bool odd = false)
{
  const uint32_t y0 = ty[(m >> 8 * O0) & 0xff];
  const uint32_t y1 = odd ? y0 : ty[(m >> 8 * O2) & 0xff];
  uint32_t u = (m >> 8 * O1) & 0xff, v = (m >> 8 * O3) & 0xff;
  if (t) {
    const uint32_t o = t[u | v << 8];
    u = o & 0xff;
    v = o >> 8;
  }
  return y0 << 8 * O0 | u << 8 * O1 | y1 << 8 * O2 | v << 8 * O3;
}

/* A packed 4:2:2 row of w pixels, two macropixels to a word. */
template <int O0, int O1, int O2, int O3>
void
packed422_row(const uint8_t *s, uint8_t *d, int w, const uint8_t *ty,
              const uint16_t *t)
{
  const int n = (w + 1) >> 1;
  int k = 0;
  for (; k + 2 <= n && 2 * k + 4 <= w; k += 2) {
    const uint64_t m = load_le64(s + 4 * (size_t)k);
    store_le64(
        d + 4 * (size_t)k,
        (uint64_t)macropixel<O0, O1, O2, O3>((uint32_t)m, ty, t)
            | (uint64_t)macropixel<O0, O1, O2, O3>((uint32_t)(m >> 32), ty, t)
                  << 32);
  }
  for (; k < n; k++) {
    const uint8_t *p = s + 4 * (size_t)k;
    uint8_t *q = d + 4 * (size_t)k;
    const uint32_t m = (uint32_t)p[0] | (uint32_t)p[1] << 8
                       | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    const uint32_t o = macropixel<O0, O1, O2, O3>(m, ty, t, 2 * k + 1 >= w);
    for (int i = 0; i < 4; i++)
      q[i] = (uint8_t)(o >> 8 * i);
  }
}

using Packed422Row = void (*)(const uint8_t *, uint8_t *, int, const uint8_t *,
                              const uint16_t *);

Packed422Row
packed422_row_for(const FmtInfo &f)
{
  const int8_t *o = f.off;
  if (o[0] == 0 && o[1] == 1 && o[2] == 2 && o[3] == 3)
    return packed422_row<0, 1, 2, 3>; /* YUY2 */
  if (o[0] == 1 && o[1] == 0 && o[2] == 3 && o[3] == 2)
    return packed422_row<1, 0, 3, 2>; /* UYVY */
  return nullptr;
}

/* fx_round() without branches: the same value. Its two tests go either
 * way at random on busy chroma, and their mispredictions would take most
 * of the time of a 10-bit chroma sample. */
inline int32_t
fx_round_flat(int64_t s)
{
  const int64_t q = s >> kFxShift;
  const int64_t d
      = s - q * ((int64_t)1 << kFxShift) - ((int64_t)1 << (kFxShift - 1));
  const int64_t up = d > kFxTie, tie = d >= -kFxTie && d <= kFxTie;
  return (int32_t)(q + up + (tie & q & 1));
}

/* The 10-bit chroma of n samples, read and written as convert_block()
 * does (rd_sample(), wr_sample()): effects_chroma() with E.deep, its
 * rounding through fx_round_flat(). (With neither stage 1 nor the invert,
 * effects_chroma() leaves the sample as read; the 10 bits kept here store
 * the same.) `step`: bytes between samples. The format's packing, W10
 * (its wide10), is a template argument so that the reads and writes lose
 * their tests. */
template <int W10>
void
chroma16_row(const EffectsPlan &E, const FmtInfo &fmt, const uint8_t *su,
             const uint8_t *sv, uint8_t *du, uint8_t *dv, int n, int step)
{
  FmtInfo f = fmt; /* the same, with what the compiler should know */
  f.bits = 16;
  f.wide10 = (uint8_t)W10;
  const int64_t m00 = E.cm[0][0], m01 = E.cm[0][1], m10 = E.cm[1][0],
                m11 = E.cm[1][1];
  const bool balance = E.balance, invert = E.invert;
  for (int k = 0; k < n; k++) {
    const size_t o = (size_t)k * step;
    int32_t cu = (int32_t)(rd_sample(f, su + o) >> 6);
    int32_t cv = (int32_t)(rd_sample(f, sv + o) >> 6);
    if (balance) {
      const int64_t i = cu - 512, j = cv - 512;
      cu = fx_clamp(512 + fx_round_flat(m00 * i + m01 * j), 1023);
      cv = fx_clamp(512 + fx_round_flat(m10 * i + m11 * j), 1023);
    }
    if (invert) {
      cu = fx_clamp(1024 - cu, 1023);
      cv = fx_clamp(1024 - cv, 1023);
    }
    wr_sample(f, du + o, ((uint32_t)cu << 6) | ((uint32_t)cu >> 4));
    wr_sample(f, dv + o, ((uint32_t)cv << 6) | ((uint32_t)cv >> 4));
  }
}

/* ---- the route ---------------------------------------------------------- */

/* Whether the route has loops for this (same-format) plan. */
bool
takes(const Plan &P)
{
  const FmtInfo &f = P.di;
  switch (f.kind) {
  case kPackedRgb:
    return f.bits == 8 && rgb_row_for(f) != nullptr;
  case kGray:
    return true;
  case kPlanarYuv:
    return true;
  case kSemiYuv:
    return f.off[1] + f.off[2] == 1;
  case kPacked422:
    return f.bits == 8 && f.ws == 1 && f.hs == 0
           && packed422_row_for(f) != nullptr;
  default:
    return false;
  }
}

/* A row of w R'G'B' pixels of ps (3 or 4) bytes whose steps are inverts
 * alone: R, G and B flipped when `flip` (an odd count of inverts), the
 * byte at oa (alpha or padding, 4-byte pixels) as read, as rgb_chunk()
 * stores it. Whole 32-bit words where the pixel is one, which the
 * compiler vectorises; `s` may be `d`. */
void
invert_rgb_row(const uint8_t *s, uint8_t *d, int w, int ps, int oa, bool flip)
{
  const size_t n = (size_t)w * ps;
  if (!flip) {
    if (s != d)
      std::memcpy(d, s, n);
    return;
  }
  if (ps != 4) {
    for (size_t i = 0; i < n; i++)
      d[i] = (uint8_t)~s[i];
    return;
  }
  uint8_t bytes[4] = { 0xff, 0xff, 0xff, 0xff };
  bytes[oa] = 0;
  uint32_t m;
  std::memcpy(&m, bytes, 4); /* the mask in the words' own byte order */
  for (size_t i = 0; i < n; i += 4) {
    uint32_t v;
    std::memcpy(&v, s + i, 4);
    v ^= m;
    std::memcpy(d + i, &v, 4);
  }
}

/* The pair tables of the steps' luma tables into st, from the pair slots
 * of table slots slot, slot + 1, ... (false when one could not be made) */
bool
set_pair_tables(const EffectsPlan *const *fx, int n, int slot, RgbStages *st)
{
  for (int i = 0; i < n; i++) {
    const EffectsPlan &E = *fx[i];
    const int which = 2 * (slot + i);
    st[i].bal_y = E.balance ? pair_table(E.bal_y, which) : nullptr;
    st[i].gam_y = E.gamma ? pair_table(E.gam_y, which + 1) : nullptr;
    if ((E.balance && !st[i].bal_y) || (E.gamma && !st[i].gam_y))
      return false;
  }
  return true;
}

/* Whether step E changes 8-bit chroma (else effects_chroma() leaves it) */
bool
changes_chroma(const EffectsPlan &E)
{
  return E.balance || E.invert;
}

using Chroma16Row = void (*)(const EffectsPlan &, const FmtInfo &,
                             const uint8_t *, const uint8_t *, uint8_t *,
                             uint8_t *, int, int);

/* The steps of a frame made ready to run: their tables (from the calling
 * thread's caches) and the loops picked for the format and the CPU.
 * rows() then runs them on any thread, until the thread that prepared
 * them prepares steps with other settings in the same table slots. */
struct EffectsSteps
{
  const EffectsPlan *fx[kMaxEffectSteps];
  int n;
  bool rgb;

  /* R'G'B': each chunk of pixels through every step before it is stored */
  enum RgbLoop { kFlip, kAvx512, kAvx2, kChunks } loop;
  RgbStages st[kMaxEffectSteps];
  bool flip;  /* kFlip (inverts alone): an odd number of them */
  RgbRow row; /* kChunks */
#if ZC_HAVE_AVX2_CLONES
  Rgb4Consts c512;
  Rgb4ConstsAvx2 c256;
#endif

  /* Y'CbCr and GRAY: tables of one kind composed (the luma tables, the
   * 8-bit (U, V) tables, the 16-bit luma tables), so that a sample is
   * looked up once whatever the number of steps; 10-bit chroma goes
   * through each step's arithmetic in turn, on the row just written */
  uint8_t ty8[256];
  const uint16_t *ty8x2, *ty16, *tc;
  Chroma16Row chroma16;
  Packed422Row row422;

  /* For P's destination format; the tables from slots slot, slot + 1, ...
   * False when a table could not be made. */
  bool prepare(const Plan &P, const EffectsPlan *const *steps, int n_steps,
               int slot);
  /* Block rows [b0, b1) of P's frames, source into destination (which
   * may be the source) */
  void rows(const Plan &P, int b0, int b1) const;
  /* Threads worth running rows() on all of P's block rows */
  unsigned threads(const Plan &P, unsigned n_threads) const;

private:
  bool prepare_rgb(const Plan &P, int slot);
  bool prepare_yuv(const Plan &P, int slot);
  void rgb_rows(const Plan &P, int y0, int y1) const;
  void yuv_rows(const Plan &P, int b0, int b1) const;
};

bool
EffectsSteps::prepare(const Plan &P, const EffectsPlan *const *steps,
                      int n_steps, int slot)
{
  n = n_steps;
  for (int i = 0; i < n; i++)
    fx[i] = steps[i];
  rgb = P.di.kind == kPackedRgb;
  return rgb ? prepare_rgb(P, slot) : prepare_yuv(P, slot);
}

bool
EffectsSteps::prepare_rgb(const Plan &P, int slot)
{
  for (RgbStages &s : st)
    s = RgbStages{};
  /* Inverts alone: a flip of the R, G and B bytes (or a copy), one pass
   * at the speed of memory */
  bool only_invert = true;
  flip = false;
  for (int i = 0; i < n; i++) {
    only_invert = only_invert && !fx[i]->balance && !fx[i]->gamma;
    flip = flip != (fx[i]->invert != 0);
  }
  if (only_invert) {
    loop = kFlip;
    return true;
  }
#if ZC_HAVE_AVX2_CLONES
  /* Four-byte pixels and no (U, V) table: the AVX-512 loops, which take
   * the 256-byte luma tables as they are (no pair tables built), or the
   * AVX2 ones */
  static const bool avx512 = have_avx512_rgb(), avx2 = have_avx2_rgb();
  bool vec = (avx512 || avx2) && P.di.pstride == 4;
  for (int i = 0; i < n && vec; i++)
    vec = !fx[i]->balance || chroma_identity(*fx[i]);
  if (vec) {
    for (int i = 0; i < n; i++) {
      const EffectsPlan &E = *fx[i];
      st[i].bal8 = E.balance ? E.bal_y : nullptr;
      st[i].gam8 = E.gamma ? E.gam_y : nullptr;
      st[i].invert = E.invert;
    }
    if (avx512) {
      loop = kAvx512;
      rgb4_consts(c512, P.di.off[0], P.di.off[1], P.di.off[2]);
      return true;
    }
    if (!set_pair_tables(fx, n, slot, st))
      return false;
    loop = kAvx2;
    rgb4_consts_avx2(c256, P.di.off[0], P.di.off[1], P.di.off[2]);
    return true;
  }
#endif
  if (!set_pair_tables(fx, n, slot, st))
    return false;
  for (int i = 0; i < n; i++) {
    const EffectsPlan &E = *fx[i];
    if (E.balance && !chroma_identity(E)) {
      st[i].ctab = chroma_table(E, false, slot + i);
      if (!st[i].ctab)
        return false;
    }
    st[i].invert = E.invert;
  }
  loop = kChunks;
  row = rgb_row_for(P.di);
  return row != nullptr;
}

bool
EffectsSteps::prepare_yuv(const Plan &P, int slot)
{
  const FmtInfo &f = P.di;
  const bool deep = f.bits == 16;
  ty8x2 = ty16 = tc = nullptr;
  if (deep && n == 1) {
    ty16 = luma16_table(*fx[0], f);
  } else if (deep) {
    thread_local std::unique_ptr<ComposedCache<Luma16Key>> composed;
    Luma16Key keys[kMaxEffectSteps];
    for (int i = 0; i < n; i++)
      keys[i] = luma16_key(*fx[i], f);
    ty16 = composed_table(composed, keys, n, [&](int i, bool *) {
      return luma16_table(*fx[i], f);
    });
  } else {
    for (uint32_t k = 0; k < 256; k++) {
      uint32_t v = k;
      for (int i = 0; i < n; i++)
        v = (uint32_t)effects_luma(*fx[i], v);
      ty8[k] = (uint8_t)v;
    }
    if (f.kind != kPacked422) {
      ty8x2 = pair_table(ty8, 2 * slot);
      if (!ty8x2)
        return false;
    }
  }
  if (deep && !ty16)
    return false;
  /* 8-bit chroma: through the table, or copied where effects_chroma()
   * leaves it (gamma alone) */
  int n_chroma = 0;
  for (int i = 0; i < n; i++)
    n_chroma += changes_chroma(*fx[i]) ? 1 : 0;
  if (f.kind != kGray && !deep && n_chroma == 1) {
    for (int i = 0; i < n; i++)
      if (changes_chroma(*fx[i]))
        tc = chroma_table(*fx[i], true, slot);
    if (!tc)
      return false;
  } else if (f.kind != kGray && !deep && n_chroma > 1) {
    thread_local std::unique_ptr<ComposedCache<ChromaKey>> composed;
    ChromaKey keys[kMaxEffectSteps];
    for (int i = 0; i < n; i++)
      keys[i] = chroma_key(*fx[i], true);
    tc = composed_table(composed, keys, n, [&](int i, bool *skip) {
      *skip = !changes_chroma(*fx[i]);
      return *skip ? nullptr : chroma_table(*fx[i], true, slot + i);
    });
    if (!tc)
      return false;
  }
  chroma16 = f.wide10 == k10Msb   ? chroma16_row<k10Msb>
             : f.wide10 == k10Lsb ? chroma16_row<k10Lsb>
                                  : chroma16_row<kNot10>;
  row422 = f.kind == kPacked422 ? packed422_row_for(f) : nullptr;
  return true;
}

void
EffectsSteps::rgb_rows(const Plan &P, int y0, int y1) const
{
  const int w = P.dw;
  for (int y = y0; y < y1; y++) {
    const uint8_t *s = P.sp[0] + (size_t)y * P.ss[0];
    uint8_t *d = P.dp[0] + (size_t)y * P.ds[0];
    switch (loop) {
    case kFlip:
      invert_rgb_row(s, d, w, P.di.pstride, P.di.off[3], flip);
      break;
#if ZC_HAVE_AVX2_CLONES
    case kAvx512:
      rgb4_row_avx512(s, d, w, st, n, c512);
      break;
    case kAvx2:
      rgb4_row_avx2(s, d, w, st, n, c256);
      break;
#endif
    default:
      row(s, d, w, st, n);
      break;
    }
  }
}

void
EffectsSteps::yuv_rows(const Plan &P, int b0, int b1) const
{
  const FmtInfo &f = P.di;
  const bool deep = f.bits == 16;
  const int w = P.dw, h = P.dh;
  const int cw = P.blocks_x; /* chroma samples a row */
  const int bh = 1 << f.hs;

  /* the luma rows of the block rows, then their chroma rows */
  const int y1 = b1 * bh < h ? b1 * bh : h;
  for (int y = b0 * bh; y < y1; y++) {
    const uint8_t *s = P.sp[0] + (size_t)y * P.ss[0];
    uint8_t *d = P.dp[0] + (size_t)y * P.ds[0];
    if (row422)
      row422(s, d, w, ty8, tc);
    else if (deep)
      luma16_row(s, d, w, ty16);
    else
      luma8_row(s, d, w, ty8, ty8x2);
  }
  for (int r = b0; r < b1; r++) {
    if (f.kind == kSemiYuv) {
      const uint8_t *s = P.sp[1] + (size_t)r * P.ss[1];
      uint8_t *d = P.dp[1] + (size_t)r * P.ds[1];
      if (deep) {
        for (int i = 0; i < n; i++, s = d)
          chroma16(*fx[i], f, s + f.off[1] * 2, s + f.off[2] * 2,
                   d + f.off[1] * 2, d + f.off[2] * 2, cw, 4);
      } else if (!tc) {
        if (s != d)
          std::memcpy(d, s, (size_t)cw * 2);
      } else if (f.off[1] == 0) {
        semi8_row<0>(s, d, cw, tc);
      } else {
        semi8_row<1>(s, d, cw, tc);
      }
    } else if (f.kind == kPlanarYuv) {
      const int pu = f.off[1], pv = f.off[2];
      const uint8_t *su = P.sp[pu] + (size_t)r * P.ss[pu];
      const uint8_t *sv = P.sp[pv] + (size_t)r * P.ss[pv];
      uint8_t *du = P.dp[pu] + (size_t)r * P.ds[pu];
      uint8_t *dv = P.dp[pv] + (size_t)r * P.ds[pv];
      if (deep) {
        for (int i = 0; i < n; i++, su = du, sv = dv)
          chroma16(*fx[i], f, su, sv, du, dv, cw, 2);
      } else if (!tc) {
        if (su != du)
          std::memcpy(du, su, (size_t)cw);
        if (sv != dv)
          std::memcpy(dv, sv, (size_t)cw);
      } else {
        planar8_row(su, sv, du, dv, cw, tc);
      }
    }
  }
}

void
EffectsSteps::rows(const Plan &P, int b0, int b1) const
{
  if (rgb)
    rgb_rows(P, b0, b1); /* (a block is a pixel) */
  else
    yuv_rows(P, b0, b1);
}

unsigned
EffectsSteps::threads(const Plan &P, unsigned n_threads) const
{
  const int64_t per_row = rgb ? (int64_t)P.dw * (loop == kFlip ? 1 : n)
                              : (int64_t)P.dw << P.di.hs;
  return parallel_threads(P.blocks_y, n_threads, per_row, kMinPixelsPerThread);
}

/* Whether the route takes P: nothing but the effects, the same format on
 * both sides (so no colour step and the same subsampling, chroma carried
 * sample for sample), nothing moved or scaled. */
bool
effects_alone(const Plan &P)
{
  return P.fx.active && P.matrix_mode == kMatrixNone && plan_moves_nothing(P)
         && same_format(P.si, P.di) && !P.linear && !P.cubic && !P.cscale
         && !P.pl.mode && !P.chroma_up && !P.chroma_down
         && P.fx.yuv == (fmt_is_yuv(P.di) ? 1 : 0)
         && P.fx.deep == (P.di.bits == 16 ? 1 : 0) && takes(P);
}

/* The steps fx[0..n) on P's frames, source into destination, on the
 * threads */
bool
run_steps(const Plan &P, const EffectsPlan *const *fx, int n,
          unsigned n_threads)
{
  EffectsSteps k;
  if (!k.prepare(P, fx, n, 0))
    return false;
  parallel_rows(P.blocks_y, k.threads(P, n_threads),
                [&](int b0, int b1) { k.rows(P, b0, b1); });
  return true;
}

} // namespace

bool
fast_effects(const Plan &P, unsigned n_threads, bool run)
{
  if (!effects_alone(P))
    return false;
  const EffectsPlan *fx = &P.fx;
  return !run || run_steps(P, &fx, 1, n_threads);
}

bool
fast_effects_steps(const Plan *steps, int n, unsigned n_threads)
{
  if (n < 1 || n > kMaxEffectSteps)
    return false;
  const EffectsPlan *fx[kMaxEffectSteps];
  for (int i = 0; i < n; i++) {
    /* every step on frames of the first one's format and size */
    if (!effects_alone(steps[i]) || !same_format(steps[i].di, steps[0].di)
        || steps[i].dw != steps[0].dw || steps[i].dh != steps[0].dh)
      return false;
    fx[i] = &steps[i].fx;
  }
  return run_steps(steps[0], fx, n, n_threads);
}

/* ---- after another route ------------------------------------------------ */

/* The destination's picture as a frame of its own, read and written in
 * place, and the effects made ready for it. */
struct EffectsAfter
{
  Plan view;
  int by0; /* the view's first block row in the destination */
  EffectsSteps steps;
};

bool
effects_after_takes(const Plan &P)
{
  const FmtInfo &f = P.di;
  /* the stored sample must be the value the effects see: not 10-bit
   * formats, whose stores drop the low bits of the luma */
  if (!P.fx.active || f.wide10 || P.fx.yuv != (fmt_is_yuv(f) ? 1 : 0)
      || P.fx.deep != (f.bits == 16 ? 1 : 0) || !takes(P))
    return false;
  /* The picture on chroma-block boundaries (or at the frame's edge): the
   * blocks whose first pixel it holds, whose chroma convert_block() runs
   * through the effects, are then the view's blocks. */
  auto on_blocks = [](int at, int n, int frame, int log2) {
    const int b = 1 << log2;
    return at % b == 0 && (n % b == 0 || at + n == frame);
  };
  return on_blocks(P.rx, P.rw, P.dw, f.ws) && on_blocks(P.ry, P.rh, P.dh, f.hs);
}

const EffectsAfter *
effects_after_prepare(const Plan &P)
{
  if (!effects_after_takes(P))
    return nullptr;
  /* (a few kilobytes, kept per thread as the tables are) */
  thread_local std::unique_ptr<EffectsAfter> slot;
  if (!slot) {
    slot.reset(new (std::nothrow) EffectsAfter);
    if (!slot)
      return nullptr;
  }
  EffectsAfter &e = *slot;
  const FmtInfo &f = P.di;
  Plan &V = e.view;
  V = P;
  V.si = f;
  for (int p = 0; p < 3; p++) {
    /* the picture's first sample in plane p */
    size_t x = 0;
    int y = 0;
    if (p == 0) {
      x = (size_t)P.rx * f.pstride;
      y = P.ry;
    } else if (f.kind == kPlanarYuv) {
      x = (size_t)(P.rx >> f.ws) * f.pstride;
      y = P.ry >> f.hs;
    } else if (f.kind == kSemiYuv && p == 1) {
      x = (size_t)(P.rx >> f.ws) * 2 * f.pstride;
      y = P.ry >> f.hs;
    }
    if (x || y)
      V.dp[p] = P.dp[p] + (size_t)y * P.ds[p] + x;
    V.sp[p] = V.dp[p];
    V.ss[p] = V.ds[p];
  }
  V.sw = V.dw = V.cw = V.ow = V.rw = P.rw;
  V.sh = V.dh = V.ch = V.oh = V.rh = P.rh;
  V.cx = V.cy = V.rx = V.ry = 0;
  V.blocks_x = (P.rw + (1 << f.ws) - 1) >> f.ws;
  V.blocks_y = (P.rh + (1 << f.hs) - 1) >> f.hs;
  e.by0 = P.ry >> f.hs;
  const EffectsPlan *fx = &V.fx;
  return e.steps.prepare(V, &fx, 1, kAfterSlot) ? &e : nullptr;
}

void
effects_after_rows(const EffectsAfter &e, int b0, int b1)
{
  b0 = b0 - e.by0 < 0 ? 0 : b0 - e.by0;
  b1 = b1 - e.by0 > e.view.blocks_y ? e.view.blocks_y : b1 - e.by0;
  if (b0 < b1)
    e.steps.rows(e.view, b0, b1);
}

void
effects_after_run(const EffectsAfter &e, unsigned n_threads)
{
  parallel_rows(e.view.blocks_y, e.steps.threads(e.view, n_threads),
                [&e](int b0, int b1) { e.steps.rows(e.view, b0, b1); });
}

} // namespace detail
} // namespace zc

/* gst-zerocopy: what the fast-route test programs share (no GStreamer)
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The CPU backend's fast routes (kernels/zcconvert-fast.h) must write the
 * bytes the per-block code writes. check_route() converts one seeded random
 * frame with zc::convert_cpu() and with zc::convert_cpu_reference() into
 * destinations pre-filled with the same random bytes, and compares every
 * byte of every plane (row padding included: a route must not write where
 * the reference does not). It also asserts which route convert_cpu() takes,
 * so a route that stopped taking its requests fails instead of passing on
 * the per-block code.
 */
#pragma once

#include "kernel-check.h"

#include <zcconvert.h>

#include <string>
#include <vector>

namespace zc_test {

/* Y'CbCr or GRAY (the formats after the R'G'B' ones) */
inline bool
is_yuv(zc::PixFmt f)
{
  return (int)f >= (int)zc::PixFmt::GRAY8;
}

inline float
uniform(float lo, float hi)
{
  return std::uniform_real_distribution<float>(lo, hi)(g_rng);
}

/* A frame size of the tests, with its row padding, misalignment and
 * thread count */
struct Size
{
  int w, h, pad, misalign;
  unsigned threads;
};

/* A frame in ordinary memory: planes one after the other, each row `pad`
 * bytes longer than it needs, the first plane `misalign` bytes past a
 * 64-byte boundary (to reach the unaligned loops). */
struct HostFrame
{
  std::vector<uint8_t> data;
  zc::FrameDesc desc;

  HostFrame(zc::PixFmt f, int w, int h, int pad = 0, int misalign = 0,
            zc::Matrix m = zc::Matrix::BT709, bool full = false)
  {
    desc.fmt = f;
    desc.width = w;
    desc.height = h;
    desc.matrix = m;
    desc.full_range = full;
    const int n = zc::pixfmt_n_planes(f);
    size_t offs[3] = {0, 0, 0}, size = (size_t)misalign;
    for (int p = 0; p < n; p++) {
      desc.strides[p] = zc::pixfmt_plane_row_bytes(f, p, w) + (size_t)pad;
      offs[p] = size;
      size += desc.strides[p] * (size_t)zc::pixfmt_plane_rows(f, p, h);
      size = (size + 63) & ~(size_t)63;
    }
    data.assign(size + 64, 0);
    uint8_t *base = data.data();
    base += (64 - (reinterpret_cast<uintptr_t>(base) & 63)) & 63;
    for (int p = 0; p < n; p++)
      desc.planes[p] = base + offs[p];
  }

  size_t
  plane_bytes(int p) const
  {
    return desc.strides[p] * (size_t)zc::pixfmt_plane_rows(desc.fmt, p,
                                                          desc.height);
  }

  void
  randomize()
  {
    for (int p = 0; p < zc::pixfmt_n_planes(desc.fmt); p++)
      fill_random(desc.planes[p], plane_bytes(p));
  }
};

/* src (already filled) into a dst of (dfmt, dw, dh) with p, by convert_cpu()
 * on n_threads threads and by the reference: byte-equal, and taken by the
 * route `route` ("repack", "effects", "scale", "planar", "move", "blocks",
 * or "*": any). */
inline bool
check_route(const char *name, const HostFrame &src, zc::PixFmt dfmt, int dw,
            int dh, const zc::ConvertParams &p, const char *route,
            unsigned n_threads = 0, int pad = 0, int misalign = 0,
            zc::Matrix dm = zc::Matrix::BT709, bool dfull = false)
{
  HostFrame fast(dfmt, dw, dh, pad, misalign, dm, dfull);
  HostFrame ref(dfmt, dw, dh, pad, misalign, dm, dfull);
  fast.randomize();
  for (int i = 0; i < zc::pixfmt_n_planes(dfmt); i++)
    std::memcpy(ref.desc.planes[i], fast.desc.planes[i], fast.plane_bytes(i));

  const char *took = zc::convert_cpu_route(src.desc, fast.desc, p);
  bool ok = check(took && (std::strcmp(route, "*") == 0
                           || std::strcmp(took, route) == 0),
                  "%s: takes route %s, expected %s", name,
                  took ? took : "(refused)", route);
  const bool a = zc::convert_cpu(src.desc, fast.desc, p, n_threads);
  const bool b = zc::convert_cpu_reference(src.desc, ref.desc, p, 1);
  ok = check(a && b, "%s: convert_cpu %d, reference %d", name, a, b) && ok;
  if (!a || !b)
    return false;
  for (int i = 0; i < zc::pixfmt_n_planes(dfmt); i++) {
    const size_t n = fast.plane_bytes(i);
    const uint8_t *x = fast.desc.planes[i], *y = ref.desc.planes[i];
    size_t at = n;
    for (size_t k = 0; k < n; k++) {
      if (x[k] != y[k]) {
        at = k;
        break;
      }
    }
    if (at != n) {
      const size_t stride = fast.desc.strides[i];
      ok = check(false, "%s: plane %d row %zu byte %zu: fast %u, reference %u",
                 name, i, at / stride, at % stride, x[at], y[at]);
      break;
    }
  }
  return ok;
}

} // namespace zc_test

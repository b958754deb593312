/* gst-zerocopy: tests for kernels/zcpointops (no GStreamer).
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   test-pointops         the LUT builders and the CPU pass
 *   test-pointops --gpu   the CUDA pass against the CPU pass, bit for bit;
 *                         exits 77 (skipped) without a usable GPU
 *
 * Prints each failure, then "N passed, M failed"; exits 1 on any failure.
 */
#include "zcpointops.h"
#include "kernel-check.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using namespace zc_test;

/* Four unrelated tables, so that a byte sent through the wrong one shows. */
zc::LutSet
random_luts()
{
  zc::LutSet l;
  fill_random(&l.lut[0][0], sizeof(l.lut));
  return l;
}

/* Index of the first differing byte, or -1. */
long
first_difference(const uint8_t *a, const uint8_t *b, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    if (a[i] != b[i])
      return (long)i;
  }
  return -1;
}

/* ---- LUT builders ------------------------------------------------------ */

/* The formula of zcpointops.h, written out again independently. */
uint8_t
formula(const zc::PointParams &p, int v)
{
  double x = v / 255.0;
  double y = (x - 0.5) * p.contrast + 0.5 + p.brightness;
  y = std::clamp(y, 0.0, 1.0);
  y = std::pow(y, 1.0 / p.gamma);
  if (p.invert)
    y = 1.0 - y;
  return (uint8_t)std::floor(y * 255.0 + 0.5);
}

void
test_point_lut_matches_formula()
{
  const double brightness[] = { -1.0, -0.3, 0.0, 0.5, 1.0 };
  const double contrast[] = { 0.0, 0.5, 1.0, 2.0, 4.0 };
  const double gamma[] = { 0.01, 0.5, 1.0, 2.2, 10.0 };

  for (double b : brightness)
    for (double c : contrast)
      for (double g : gamma)
        for (bool inv : { false, true }) {
          zc::PointParams p;
          p.brightness = b;
          p.contrast = c;
          p.gamma = g;
          p.invert = inv;
          uint8_t lut[256];
          zc::build_point_lut(p, lut);
          int bad = -1;
          for (int v = 0; v < 256 && bad < 0; v++) {
            if (lut[v] != formula(p, v))
              bad = v;
          }
          check(bad < 0,
                "point LUT b=%g c=%g g=%g invert=%d: lut[%d]=%d, formula %d", b,
                c, g, inv, bad, bad < 0 ? 0 : lut[bad],
                bad < 0 ? 0 : formula(p, bad));
        }
}

void
test_fixed_luts()
{
  uint8_t ident[256], inv[256], lut[256];
  zc::build_identity_lut(ident);
  zc::build_invert_lut(inv);
  bool ok_ident = true, ok_inv = true;
  for (int v = 0; v < 256; v++) {
    ok_ident = ok_ident && ident[v] == v;
    ok_inv = ok_inv && inv[v] == 255 - v;
  }
  check(ok_ident, "identity LUT maps v to v");
  check(ok_inv, "invert LUT maps v to 255 - v");

  zc::PointParams p;
  zc::build_point_lut(p, lut);
  check(std::memcmp(lut, ident, 256) == 0,
        "default parameters give the identity LUT");
  p.invert = true;
  zc::build_point_lut(p, lut);
  check(std::memcmp(lut, inv, 256) == 0, "invert alone gives the invert LUT");

  /* Brightness 1: everything white; contrast 0: everything mid-grey. */
  p = zc::PointParams();
  p.brightness = 1.0;
  zc::build_point_lut(p, lut);
  check(std::count(lut, lut + 256, 255) == 256, "brightness 1 is all 255");
  p = zc::PointParams();
  p.contrast = 0.0;
  zc::build_point_lut(p, lut);
  check(std::count(lut, lut + 256, 128) == 256, "contrast 0 is all 128");

  /* Out-of-range parameters still give defined tables. */
  p = zc::PointParams();
  p.gamma = -1.0;
  zc::build_point_lut(p, lut);
  check(lut[0] == 255 && lut[255] == 255,
        "gamma -1 clamps pow's infinity to 255 (got %d, %d)", lut[0], lut[255]);
  p = zc::PointParams();
  p.brightness = NAN;
  zc::build_point_lut(p, lut);
  check(std::count(lut, lut + 256, 0) == 256, "NaN brightness gives 0");
}

void
test_identity_detection()
{
  struct Case
  {
    double b, c, g;
    bool inv, identity;
  } cases[] = {
    { 0.0, 1.0, 1.0, false, true },
    /* Changes well below half a step round back to v. */
    { 0.001, 1.0, 1.0, false, true },
    { 0.0, 1.0001, 1.0, false, true },
    { 0.0, 1.0, 1.001, false, true },
    { 0.003, 1.0, 1.0, false, false },
    { -0.003, 1.0, 1.0, false, false },
    { 0.0, 1.02, 1.0, false, false },
    { 0.0, 1.0, 2.2, false, false },
    { 0.0, 1.0, 1.0, true, false },
    { 0.0, 0.0, 1.0, false, false },
  };
  for (const Case &c : cases) {
    zc::PointParams p;
    p.brightness = c.b;
    p.contrast = c.c;
    p.gamma = c.g;
    p.invert = c.inv;
    check(zc::point_params_are_identity(p) == c.identity,
          "identity detection b=%g c=%g g=%g invert=%d: expected %d", c.b, c.c,
          c.g, c.inv, c.identity);
  }
}

/* ---- plane layouts shared by the CPU and GPU tests --------------------- */

/* One plane in its own buffers: src at src_off in the source buffer, dst at
 * dst_off in the destination buffer (in place: the source buffer, src_off and
 * src_stride). Every buffer has kGuard extra bytes at its end. */
struct Layout
{
  uint32_t row_bytes;
  uint32_t rows;
  size_t src_stride;
  size_t dst_stride;
  size_t src_off;
  size_t dst_off;
  bool in_place;
};

constexpr size_t kGuard = 64;

size_t
span(size_t stride, uint32_t row_bytes, uint32_t rows)
{
  return rows ? (rows - 1) * stride + row_bytes : 0;
}

size_t
src_size(const Layout &l)
{
  return l.src_off + span(l.src_stride, l.row_bytes, l.rows) + kGuard;
}

size_t
dst_size(const Layout &l)
{
  return l.in_place
             ? 0
             : l.dst_off + span(l.dst_stride, l.row_bytes, l.rows) + kGuard;
}

std::string
describe(const Layout &l)
{
  char s[160];
  std::snprintf(s, sizeof(s),
                "%ux%u %s src_stride=%zu dst_stride=%zu "
                "src_off=%zu dst_off=%zu",
                l.row_bytes, l.rows, l.in_place ? "in place" : "out of place",
                l.src_stride, l.in_place ? l.src_stride : l.dst_stride,
                l.src_off, l.dst_off);
  return s;
}

/* Initial contents of a plane's buffers: random pixels, random padding and
 * guard bytes (which must come out unchanged). */
struct PlaneData
{
  Layout layout;
  zc::LutSet luts;
  std::vector<uint8_t> src;
  std::vector<uint8_t> dst;
};

PlaneData
make_plane(const Layout &l)
{
  PlaneData d;
  d.layout = l;
  if (l.in_place)
    d.layout.dst_stride = l.src_stride;
  d.luts = random_luts();
  d.src.resize(src_size(d.layout));
  d.dst.resize(dst_size(d.layout));
  fill_random(d.src.data(), d.src.size());
  fill_random(d.dst.data(), d.dst.size());
  return d;
}

zc::PlaneJob
job_for(const Layout &l, const uint8_t *src_base, uint8_t *dst_base)
{
  zc::PlaneJob j;
  j.src = src_base + l.src_off;
  j.dst = l.in_place ? const_cast<uint8_t *>(j.src) : dst_base + l.dst_off;
  j.src_stride = l.src_stride;
  j.dst_stride = l.in_place ? l.src_stride : l.dst_stride;
  j.row_bytes = l.row_bytes;
  j.rows = l.rows;
  return j;
}

/* What the buffer holding the output must contain afterwards, computed the
 * obvious way: byte x of a row through table x % 4, all else unchanged. */
std::vector<uint8_t>
naive_expected(const PlaneData &d)
{
  const Layout &l = d.layout;
  std::vector<uint8_t> out = l.in_place ? d.src : d.dst;
  const size_t out_off = l.in_place ? l.src_off : l.dst_off;
  for (uint32_t r = 0; r < l.rows; r++)
    for (uint32_t x = 0; x < l.row_bytes; x++)
      out[out_off + r * l.dst_stride + x]
          = d.luts.lut[x % 4][d.src[l.src_off + r * l.src_stride + x]];
  return out;
}

/* ---- CPU pass ---------------------------------------------------------- */

const Layout kCpuLayouts[] = {
  { 1, 1, 1, 1, 0, 0, false },
  { 1, 1, 1, 1, 0, 0, true },
  { 3, 7, 3, 3, 0, 0, false },
  { 3, 7, 3, 3, 1, 0, true },
  { 3, 7, 5, 11, 1, 3, false },
  { 1921, 1081, 1921, 1921, 0, 0, false },
  { 1921, 1081, 1921, 1921, 0, 0, true },
  /* Stride padding, different on each side. */
  { 1921, 1081, 1936, 2048, 0, 0, false },
  { 1921, 1081, 1937, 1925, 3, 1, false },
  { 1921, 1081, 2000, 0, 7, 0, true },
  /* RGBA rows, the 4-byte pattern with one table per channel. */
  { 640 * 4, 480, 640 * 4, 704 * 4, 0, 0, false },
  { 641 * 4, 33, 645 * 4, 645 * 4, 2, 2, true },
};

void
test_cpu_apply()
{
  for (const Layout &l : kCpuLayouts)
    for (unsigned threads : { 1u, 0u, 3u, 16u }) {
      PlaneData d = make_plane(l);
      std::vector<uint8_t> expected = naive_expected(d);
      const std::vector<uint8_t> src_before = d.src;
      zc::PlaneJob job = job_for(d.layout, d.src.data(), d.dst.data());

      zc::apply_lut_cpu(job, d.luts, threads);

      const std::vector<uint8_t> &out = l.in_place ? d.src : d.dst;
      long bad = first_difference(out.data(), expected.data(), out.size());
      check(bad < 0, "CPU %s threads=%u: byte %ld is %d, expected %d",
            describe(d.layout).c_str(), threads, bad, bad < 0 ? 0 : out[bad],
            bad < 0 ? 0 : expected[bad]);
      if (!l.in_place)
        check(d.src == src_before, "CPU %s threads=%u: source untouched",
              describe(d.layout).c_str(), threads);
    }
}

/* Planes of a YUV frame, each with its own tables and its own buffer. */
std::vector<Layout>
yuv_layouts(bool i420, uint32_t w, uint32_t h, bool in_place,
            size_t stride_align, size_t off)
{
  auto up = [stride_align](size_t v) {
    return (v + stride_align - 1) / stride_align * stride_align;
  };
  const uint32_t cw = (w + 1) / 2, ch = (h + 1) / 2;
  std::vector<Layout> ls;
  ls.push_back({ w, h, up(w), up(w) + stride_align, off, off, in_place });
  if (i420) {
    ls.push_back({ cw, ch, up(cw), up(cw), off, off, in_place });
    ls.push_back({ cw, ch, up(cw) + stride_align, up(cw), off, 0, in_place });
  } else {
    ls.push_back({ 2 * cw, ch, up(2 * cw), up(2 * cw), off, off, in_place });
  }
  return ls;
}

void
test_cpu_apply_planes()
{
  for (bool i420 : { false, true })
    for (bool in_place : { false, true })
      for (unsigned threads : { 1u, 0u, 5u }) {
        std::vector<PlaneData> planes;
        for (const Layout &l : yuv_layouts(i420, 1921, 1081, in_place, 4, 0))
          planes.push_back(make_plane(l));
        std::vector<zc::PlaneJob> jobs;
        std::vector<zc::LutSet> luts;
        std::vector<std::vector<uint8_t> > expected;
        for (PlaneData &d : planes) {
          jobs.push_back(job_for(d.layout, d.src.data(), d.dst.data()));
          luts.push_back(d.luts);
          expected.push_back(naive_expected(d));
        }

        zc::apply_lut_cpu_planes(jobs.data(), luts.data(),
                                 (unsigned)jobs.size(), threads);

        for (size_t i = 0; i < planes.size(); i++) {
          const std::vector<uint8_t> &out
              = in_place ? planes[i].src : planes[i].dst;
          check(out == expected[i], "CPU %s plane %zu of %zu, threads=%u",
                describe(planes[i].layout).c_str(), i, planes.size(), threads);
        }
      }
}

void
test_cpu_rejects_bad_jobs()
{
  PlaneData d = make_plane({ 16, 4, 16, 16, 0, 0, false });
  const std::vector<uint8_t> before = d.dst;

  zc::PlaneJob job = job_for(d.layout, d.src.data(), d.dst.data());
  job.dst_stride = 8;
  zc::apply_lut_cpu(job, d.luts, 1);
  check(d.dst == before, "CPU: a stride below row_bytes leaves dst alone");

  job = job_for(d.layout, d.src.data(), d.dst.data());
  job.rows = 0;
  zc::apply_lut_cpu(job, d.luts, 0);
  job.rows = 4;
  job.row_bytes = 0;
  zc::apply_lut_cpu(job, d.luts, 0);
  check(d.dst == before, "CPU: an empty job does nothing");
}

int
run_cpu_tests()
{
  test_point_lut_matches_formula();
  test_fixed_luts();
  test_identity_detection();
  test_cpu_apply();
  test_cpu_apply_planes();
  test_cpu_rejects_bad_jobs();
  return 0;
}

/* ---- CUDA pass --------------------------------------------------------- */

#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA

enum class MemKind { kMapped, kManaged, kDevice };

const char *
mem_kind_name(MemKind k)
{
  switch (k) {
  case MemKind::kMapped:
    return "mapped pinned";
  case MemKind::kManaged:
    return "managed";
  default:
    return "device";
  }
}

/* A buffer the GPU can access; `host` is what the CPU reads and writes:
 * the buffer itself (mapped, managed) or a staging copy (device). */
struct GpuBuffer
{
  MemKind kind = MemKind::kDevice;
  size_t size = 0;
  uint8_t *host = nullptr;
  uint8_t *dev = nullptr;

  GpuBuffer() = default;
  GpuBuffer(const GpuBuffer &) = delete;
  GpuBuffer &operator=(const GpuBuffer &) = delete;

  bool alloc(MemKind k, size_t n)
  {
    kind = k;
    size = n;
    if (n == 0)
      return true;
    void *p = nullptr;
    switch (k) {
    case MemKind::kMapped:
      if (!cuda_ok(cudaHostAlloc(&p, n, cudaHostAllocMapped),
                   "cudaHostAlloc(mapped)"))
        return false;
      host = (uint8_t *)p;
      return cuda_ok(cudaHostGetDevicePointer((void **)&dev, p, 0),
                     "cudaHostGetDevicePointer");
    case MemKind::kManaged:
      if (!cuda_ok(cudaMallocManaged(&p, n), "cudaMallocManaged"))
        return false;
      host = dev = (uint8_t *)p;
      return true;
    default:
      if (!cuda_ok(cudaMalloc(&p, n), "cudaMalloc"))
        return false;
      dev = (uint8_t *)p;
      host = new uint8_t[n];
      return true;
    }
  }

  bool upload(const std::vector<uint8_t> &v)
  {
    std::memcpy(host, v.data(), size);
    /* From pageable memory cudaMemcpy may return before the DMA has
     * landed, and the kernels run on a non-blocking stream, which is not
     * ordered after the legacy default stream: wait for the copy. */
    if (kind == MemKind::kDevice)
      return cuda_ok(cudaMemcpy(dev, host, size, cudaMemcpyHostToDevice),
                     "cudaMemcpy H2D")
             && cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return true;
  }

  /* After the GPU work has been synchronised. */
  bool download()
  {
    if (kind == MemKind::kDevice)
      return cuda_ok(cudaMemcpy(host, dev, size, cudaMemcpyDeviceToHost),
                     "cudaMemcpy D2H");
    return true;
  }

  ~GpuBuffer()
  {
    if (size == 0)
      return;
    switch (kind) {
    case MemKind::kMapped:
      if (host)
        cudaFreeHost(host);
      break;
    case MemKind::kManaged:
      if (dev)
        cudaFree(dev);
      break;
    default:
      if (dev)
        cudaFree(dev);
      delete[] host;
      break;
    }
  }
};

/* Runs the given planes through apply_lut_cuda (one plane) or
 * apply_lut_cuda_planes (any count, one launch) and compares every output
 * buffer, padding and guard bytes included, with the CPU pass on the same
 * input. */
void
gpu_case(MemKind kind, const std::vector<Layout> &layouts, bool use_planes,
         cudaStream_t stream)
{
  const size_t n = layouts.size();
  std::vector<PlaneData> planes;
  for (const Layout &l : layouts)
    planes.push_back(make_plane(l));

  /* The CPU result, the reference here. */
  std::vector<PlaneData> cpu = planes;
  std::vector<zc::PlaneJob> cpu_jobs;
  std::vector<zc::LutSet> luts;
  for (PlaneData &d : cpu) {
    cpu_jobs.push_back(job_for(d.layout, d.src.data(), d.dst.data()));
    luts.push_back(d.luts);
  }
  zc::apply_lut_cpu_planes(cpu_jobs.data(), luts.data(), (unsigned)n, 0);

  std::vector<GpuBuffer> src(n), dst(n);
  std::vector<zc::PlaneJob> jobs;
  for (size_t i = 0; i < n; i++) {
    if (!src[i].alloc(kind, planes[i].src.size())
        || !dst[i].alloc(kind, planes[i].dst.size())
        || !src[i].upload(planes[i].src) || !dst[i].upload(planes[i].dst))
      return;
    jobs.push_back(job_for(planes[i].layout, src[i].dev, dst[i].dev));
  }

  std::string what
      = std::string(mem_kind_name(kind))
        + (use_planes ? " apply_lut_cuda_planes" : " apply_lut_cuda");
  for (const Layout &l : layouts)
    what += " [" + describe(l) + "]";

  cudaError_t err;
  if (use_planes)
    err = zc::apply_lut_cuda_planes(jobs.data(), luts.data(), (unsigned)n,
                                    stream);
  else
    err = zc::apply_lut_cuda(jobs[0], luts[0], stream);
  if (!cuda_ok(err, what.c_str()))
    return;
  if (!cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize"))
    return;

  for (size_t i = 0; i < n; i++) {
    const bool in_place = planes[i].layout.in_place;
    GpuBuffer &out = in_place ? src[i] : dst[i];
    const std::vector<uint8_t> &want = in_place ? cpu[i].src : cpu[i].dst;
    if (!out.download())
      return;
    long bad = first_difference(out.host, want.data(), want.size());
    check(bad < 0, "GPU %s: plane %zu byte %ld is %d, CPU gave %d",
          what.c_str(), i, bad, bad < 0 ? 0 : out.host[bad],
          bad < 0 ? 0 : want[bad]);
    if (!in_place) {
      if (!src[i].download())
        return;
      check(std::memcmp(src[i].host, planes[i].src.data(), planes[i].src.size())
                == 0,
            "GPU %s: plane %zu source untouched", what.c_str(), i);
    }
  }
}

/* Layouts that select each access width: 16 (pointers and strides 16-aligned,
 * with and without a row tail), 4, and 1. */
const Layout kGpuLayouts[] = {
  { 1, 1, 1, 1, 0, 0, false },
  { 1, 1, 1, 1, 0, 0, true },
  { 3, 7, 3, 3, 0, 0, false },
  { 3, 7, 5, 11, 1, 3, false },
  { 3, 7, 16, 32, 0, 0, true },
  /* width 16, no tail / with a tail */
  { 3840 * 4, 64, 3840 * 4, 3840 * 4, 0, 0, true },
  { 3840 * 4, 64, 3840 * 4, 4096 * 4, 0, 16, false },
  { 1921, 1081, 1936, 2048, 0, 0, false },
  { 1921, 1081, 1936, 1936, 32, 0, true },
  /* width 4 */
  { 1920 * 4, 33, 1924 * 4, 1920 * 4, 4, 8, false },
  { 1921, 1081, 1924, 1924, 4, 0, true },
  { 17, 5, 20, 24, 0, 4, false },
  /* width 1 */
  { 1921, 1081, 1921, 1921, 0, 0, false },
  { 1921, 1081, 1921, 1925, 1, 2, false },
  { 1920 * 4, 33, 1920 * 4, 1920 * 4, 3, 0, true },
  /* 4K RGBA: many chunks per thread (the grid strides) */
  { 3840 * 4, 2160, 3840 * 4, 3840 * 4, 0, 0, true },
  { 3840 * 4, 2160, 3840 * 4, 3840 * 4, 0, 0, false },
};

void
test_gpu_errors(cudaStream_t stream)
{
  zc::LutSet luts = random_luts();
  zc::PlaneJob jobs[4] = {};
  check(zc::apply_lut_cuda(jobs[0], luts, stream) == cudaSuccess,
        "GPU: an empty job succeeds and does nothing");
  check(zc::apply_lut_cuda_planes(jobs, &luts, 0, stream)
            == cudaErrorInvalidValue,
        "GPU: zero planes is cudaErrorInvalidValue");
  zc::LutSet four[4] = { luts, luts, luts, luts };
  check(zc::apply_lut_cuda_planes(jobs, four, 4, stream)
            == cudaErrorInvalidValue,
        "GPU: four planes is cudaErrorInvalidValue");
  uint8_t dummy[64] = {};
  zc::PlaneJob bad = { dummy, dummy, 16, 32, 16, 2 };
  check(zc::apply_lut_cuda(bad, luts, stream) == cudaErrorInvalidValue,
        "GPU: in place with two strides is cudaErrorInvalidValue");
  bad = { dummy, dummy + 32, 8, 16, 16, 2 };
  check(zc::apply_lut_cuda(bad, luts, stream) == cudaErrorInvalidValue,
        "GPU: a stride below row_bytes is cudaErrorInvalidValue");
}

/* Not a check: a rough figure for whoever reads the log. */
void
report_timing(MemKind kind, bool in_place, cudaStream_t stream)
{
  const Layout l = { 3840 * 4, 2160, 3840 * 4, 3840 * 4, 0, 0, in_place };
  GpuBuffer src, dst;
  if (!src.alloc(kind, src_size(l)) || !dst.alloc(kind, src_size(l)))
    return;
  zc::LutSet luts = random_luts();
  zc::PlaneJob job = job_for(l, src.dev, dst.dev);
  cudaEvent_t start, stop;
  if (!cuda_ok(cudaEventCreate(&start), "cudaEventCreate"))
    return;
  if (!cuda_ok(cudaEventCreate(&stop), "cudaEventCreate")) {
    cudaEventDestroy(start);
    return;
  }
  const int iters = 20;
  float ms = 0.0f;
  bool ok = cuda_ok(zc::apply_lut_cuda(job, luts, stream), "warm-up")
            && cuda_ok(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int i = 0; ok && i < iters; i++)
    ok = cuda_ok(zc::apply_lut_cuda(job, luts, stream), "timed launch");
  ok = ok && cuda_ok(cudaEventRecord(stop, stream), "cudaEventRecord")
       && cuda_ok(cudaEventSynchronize(stop), "cudaEventSynchronize")
       && cuda_ok(cudaEventElapsedTime(&ms, start, stop),
                  "cudaEventElapsedTime");
  if (ok) {
    double per = ms / iters;
    double bytes = (double)l.row_bytes * l.rows;
    std::printf("info: 4K RGBA %s, %s memory: %.3f ms per pass, "
                "%.1f GB/s read + %.1f GB/s write\n",
                in_place ? "in place" : "out of place", mem_kind_name(kind),
                per, bytes / per / 1e6, bytes / per / 1e6);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

int
run_gpu_tests()
{
  cudaDeviceProp prop;
  if (cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"))
    std::printf("info: device 0: %s, sm_%d%d, %d SMs\n", prop.name, prop.major,
                prop.minor, prop.multiProcessorCount);

  cudaStream_t stream;
  if (!cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags"))
    return 1;

  test_gpu_errors(stream);
  for (MemKind kind :
       { MemKind::kMapped, MemKind::kManaged, MemKind::kDevice }) {
    for (const Layout &l : kGpuLayouts) {
      gpu_case(kind, { l }, false, stream);
      gpu_case(kind, { l }, true, stream);
    }
    for (bool in_place : { false, true }) {
      /* NV12 and I420, aligned (width 16 for every plane) and not. */
      gpu_case(kind, yuv_layouts(false, 3840, 2160, in_place, 64, 0), true,
               stream);
      gpu_case(kind, yuv_layouts(true, 3840, 2160, in_place, 64, 0), true,
               stream);
      gpu_case(kind, yuv_layouts(false, 1921, 1081, in_place, 4, 0), true,
               stream);
      gpu_case(kind, yuv_layouts(true, 1921, 1081, in_place, 1, 1), true,
               stream);
    }
  }

  for (MemKind kind : { MemKind::kMapped, MemKind::kDevice })
    for (bool in_place : { true, false })
      report_timing(kind, in_place, stream);

  cuda_ok(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}

#endif /* GST_ZC_HAVE_CUDA */

} // namespace

int
main(int argc, char **argv)
{
  return zc_test::run_main(argc, argv, 0x5eed1234u, run_cpu_tests,
#if defined(GST_ZC_HAVE_CUDA) && GST_ZC_HAVE_CUDA
                           run_gpu_tests
#else
                           nullptr
#endif
  );
}

/* gst-zerocopy: the CUDA point pass.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The pass is bound by memory traffic, usually over PCIe (pinned host memory
 * mapped into the GPU), where each request has a long latency. What
 * matters is how many bytes are in flight, so:
 *  - the tables travel as a kernel parameter (by value: no copy, no
 *    __constant__ symbol shared between concurrent launches) and each block
 *    moves them into shared memory once;
 *  - each thread reads 16 bytes (uint4) per access when pointers and strides
 *    allow it, else 4 bytes, else 1;
 *  - the grid is exactly as many blocks as fit on the device at once and
 *    strides over the work, so the tables are copied once per resident block
 *    and every block finishes at the same time.
 * Several planes go through one launch: the planes' chunks are numbered one
 * after the other and a work item finds its plane by comparing its number
 * with each plane's first chunk.
 */
#include "zcpointops.h"
#include "zcpointops-common.h"

#include <cuda_runtime.h>

#include <atomic>
#include <cstring>

namespace zc {
namespace {

constexpr int kBlockThreads = 256;
/* Chunks a thread loads before it uses the first: one, because on mapped
 * pinned memory a full device already has more reads in flight than the
 * link can serve, and more per thread only adds queueing (with 256- or
 * 512-thread blocks alike). Device memory does not care. */
constexpr int kChunksPerThread = 1;
/* Work items are numbered with 32-bit integers (cheap division on the GPU);
 * keeping the count below 2^31 leaves room for the grid stride. */
constexpr uint64_t kMaxWorkItems = 0x7fffffffu;

struct PlaneDesc
{
  const uint8_t *src;
  uint8_t *dst;
  size_t src_stride;
  size_t dst_stride;
  uint32_t row_bytes;
  uint32_t chunks_per_row;
  uint32_t first_chunk;
  uint32_t pad;
};

/* Passed by value: 3 KiB of tables plus the plane descriptions, inside the
 * 4 KiB that every supported architecture and CUDA version accepts. The
 * tables are words so that the copy to shared memory moves 4 bytes per
 * thread. */
struct LaunchParams
{
  uint32_t tables[kMaxLutPlanes][256];
  PlaneDesc planes[kMaxLutPlanes];
  uint32_t n_planes;
  uint32_t total_chunks;
};
static_assert(sizeof(LaunchParams) <= 4096,
              "kernel parameters must stay within 4 KiB");
static_assert(sizeof(LutSet) == sizeof(uint32_t) * 256,
              "a LutSet is 4 tables of 256 bytes");

/* One access of W bytes: its register type, load, store and table step. The
 * loads and stores are the streaming (.cs) kind: every byte is touched once,
 * so it should not push anything else out of the caches. */
template <int W> struct Chunk;

template <> struct Chunk<16>
{
  using T = uint4;
  static __device__ T load(const uint8_t *p)
  {
    return __ldcs(reinterpret_cast<const uint4 *>(p));
  }
  static __device__ void store(uint8_t *p, T v)
  {
    __stcs(reinterpret_cast<uint4 *>(p), v);
  }
  /* A 16-byte chunk starts at a multiple of 16 from the row start, so each
   * of its words starts at a multiple of 4. */
  static __device__ T apply(const uint8_t *tables, T v, uint32_t)
  {
    v.x = detail::lut_apply_word(tables, v.x);
    v.y = detail::lut_apply_word(tables, v.y);
    v.z = detail::lut_apply_word(tables, v.z);
    v.w = detail::lut_apply_word(tables, v.w);
    return v;
  }
};

template <> struct Chunk<4>
{
  using T = unsigned int;
  static __device__ T load(const uint8_t *p)
  {
    return __ldcs(reinterpret_cast<const unsigned int *>(p));
  }
  static __device__ void store(uint8_t *p, T v)
  {
    __stcs(reinterpret_cast<unsigned int *>(p), v);
  }
  static __device__ T apply(const uint8_t *tables, T v, uint32_t)
  {
    return detail::lut_apply_word(tables, v);
  }
};

template <> struct Chunk<1>
{
  using T = unsigned char;
  static __device__ T load(const uint8_t *p) { return __ldcs(p); }
  static __device__ void store(uint8_t *p, T v) { __stcs(p, v); }
  static __device__ T apply(const uint8_t *tables, T v, uint32_t offset)
  {
    return detail::lut_apply_byte(tables, offset, v);
  }
};

template <int W>
__global__ void
__launch_bounds__(kBlockThreads) lut_kernel(const LaunchParams p)
{
  using C = Chunk<W>;
  __shared__ uint32_t s_tables[kMaxLutPlanes * 256];

  const uint32_t n_planes = p.n_planes;
  for (uint32_t i = threadIdx.x; i < n_planes * 256; i += kBlockThreads)
    s_tables[i] = p.tables[i / 256][i % 256];
  __syncthreads();
  const uint8_t *s_bytes = reinterpret_cast<const uint8_t *>(s_tables);

  const uint32_t total = p.total_chunks;
  const uint32_t step = gridDim.x * kBlockThreads * kChunksPerThread;
  for (uint32_t base
       = blockIdx.x * kBlockThreads * kChunksPerThread + threadIdx.x;
       base < total; base += step) {
    typename C::T v[kChunksPerThread];
    uint8_t *dst[kChunksPerThread];
    uint32_t plane[kChunksPerThread];
    uint32_t offset[kChunksPerThread];

    /* Locate and load every chunk first: kChunksPerThread loads in flight. */
#pragma unroll
    for (int j = 0; j < kChunksPerThread; j++) {
      const uint32_t idx = base + j * kBlockThreads;
      dst[j] = nullptr;
      plane[j] = 0;
      offset[j] = 0;
      if (idx >= total)
        continue;

      uint32_t q = 0;
      if (n_planes > 1 && idx >= p.planes[1].first_chunk)
        q = 1;
      if (n_planes > 2 && idx >= p.planes[2].first_chunk)
        q = 2;
      const PlaneDesc &pl = p.planes[q];
      const uint32_t local = idx - pl.first_chunk;
      const uint32_t row = local / pl.chunks_per_row;
      const uint32_t off = (local - row * pl.chunks_per_row) * W;
      const uint8_t *s = pl.src + row * pl.src_stride + off;
      uint8_t *d = pl.dst + row * pl.dst_stride + off;

      if (W == 1 || off + W <= pl.row_bytes) {
        v[j] = C::load(s);
        dst[j] = d;
        plane[j] = q;
        offset[j] = off;
      } else {
        /* The last, partial chunk of a row whose length is not a multiple
         * of W: one thread per row, byte by byte. */
        const uint8_t *tables = s_bytes + q * sizeof(LutSet);
        for (uint32_t k = off; k < pl.row_bytes; k++)
          d[k - off] = detail::lut_apply_byte(tables, k, s[k - off]);
      }
    }

#pragma unroll
    for (int j = 0; j < kChunksPerThread; j++) {
      if (dst[j])
        C::store(dst[j], C::apply(s_bytes + plane[j] * sizeof(LutSet), v[j],
                                  offset[j]));
    }
  }
}

/* Blocks of lut_kernel<W> that fit on a device at once, cached per device:
 * the occupancy query is cheap but not free, and this runs per frame. */
constexpr int kCachedDevices = 64;
std::atomic<int> g_resident_blocks[kCachedDevices][3];

template <int W>
constexpr int
width_slot()
{
  return W == 16 ? 0 : (W == 4 ? 1 : 2);
}

template <int W>
cudaError_t
resident_blocks(int *out)
{
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess)
    return err;

  std::atomic<int> *slot = nullptr;
  if (device >= 0 && device < kCachedDevices) {
    slot = &g_resident_blocks[device][width_slot<W>()];
    int cached = slot->load(std::memory_order_relaxed);
    if (cached > 0) {
      *out = cached;
      return cudaSuccess;
    }
  }

  int sms = 0;
  err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err != cudaSuccess)
    return err;
  int per_sm = 0;
  err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, lut_kernel<W>,
                                                      kBlockThreads, 0);
  if (err != cudaSuccess)
    return err;

  int blocks = (sms > 0 ? sms : 1) * (per_sm > 0 ? per_sm : 1);
  /* Two threads may both compute it; they store the same value. */
  if (slot)
    slot->store(blocks, std::memory_order_relaxed);
  *out = blocks;
  return cudaSuccess;
}

template <int W>
cudaError_t
launch(const LaunchParams &params, cudaStream_t stream)
{
  int resident = 0;
  cudaError_t err = resident_blocks<W>(&resident);
  if (err != cudaSuccess)
    return err;

  const uint32_t per_block = kBlockThreads * kChunksPerThread;
  uint64_t blocks = (params.total_chunks + (uint64_t)per_block - 1) / per_block;
  if (blocks > (uint64_t)resident)
    blocks = resident;

  /* clang-format 14 would split the launch chevrons into "> > >". */
  // clang-format off
  lut_kernel<W><<<(unsigned)blocks, kBlockThreads, 0, stream>>>(params);
  // clang-format on
  return cudaGetLastError();
}

/* The widest access every non-empty plane allows: src, dst and (when there
 * is more than one row) both strides must be multiples of it. Row lengths
 * need not be: the tail of each row is done byte by byte. */
unsigned
common_width(const PlaneJob *jobs, unsigned n_planes)
{
  uintptr_t bits = 0;
  for (unsigned i = 0; i < n_planes; i++) {
    const PlaneJob &job = jobs[i];
    if (job.rows == 0 || job.row_bytes == 0)
      continue;
    bits |= reinterpret_cast<uintptr_t>(job.src)
            | reinterpret_cast<uintptr_t>(job.dst);
    if (job.rows > 1)
      bits |= job.src_stride | job.dst_stride;
  }
  if (bits % 16 == 0)
    return 16;
  if (bits % 4 == 0)
    return 4;
  return 1;
}

} // namespace

cudaError_t
apply_lut_cuda_planes(const PlaneJob *jobs, const LutSet *luts,
                      unsigned n_planes, cudaStream_t stream)
{
  if (!jobs || !luts || n_planes == 0 || n_planes > kMaxLutPlanes)
    return cudaErrorInvalidValue;
  for (unsigned i = 0; i < n_planes; i++) {
    if (!detail::plane_job_is_valid(jobs[i]))
      return cudaErrorInvalidValue;
  }

  const unsigned width = common_width(jobs, n_planes);

  /* Only non-empty planes go into the launch, each with its own tables. */
  LaunchParams params;
  std::memset(&params, 0, sizeof(params));
  uint64_t total = 0;
  unsigned n = 0;
  for (unsigned i = 0; i < n_planes; i++) {
    const PlaneJob &job = jobs[i];
    if (job.rows == 0 || job.row_bytes == 0)
      continue;
    PlaneDesc &pl = params.planes[n];
    pl.src = job.src;
    pl.dst = job.dst;
    pl.src_stride = job.src_stride;
    pl.dst_stride = job.dst_stride;
    pl.row_bytes = job.row_bytes;
    pl.chunks_per_row = (job.row_bytes + width - 1) / width;
    pl.first_chunk = (uint32_t)total;
    std::memcpy(params.tables[n], &luts[i], sizeof(LutSet));
    total += (uint64_t)pl.chunks_per_row * job.rows;
    if (total > kMaxWorkItems)
      return cudaErrorInvalidValue;
    n++;
  }
  if (n == 0)
    return cudaSuccess;
  params.n_planes = n;
  params.total_chunks = (uint32_t)total;

  switch (width) {
  case 16:
    return launch<16>(params, stream);
  case 4:
    return launch<4>(params, stream);
  default:
    return launch<1>(params, stream);
  }
}

cudaError_t
apply_lut_cuda(const PlaneJob &job, const LutSet &luts, cudaStream_t stream)
{
  return apply_lut_cuda_planes(&job, &luts, 1, stream);
}

} // namespace zc

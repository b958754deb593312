/* gst-zerocopy: the CUDA conversion.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One launch per frame, one thread per output block (a pixel, or the 2x1 /
 * 2x2 pixels that share a chroma sample), so every byte of the destination
 * is written once. The per-block code is the CPU's (zcconvert-common.h)
 * and uses integer arithmetic only, so the output is bit-identical to
 * convert_cpu().
 *
 * Where the tiling applies (tile_geom()), each thread block first copies
 * the source rows its tile reads into shared memory, 16 or 4 bytes per
 * load where the planes are aligned so, and the per-block code reads that
 * copy: the source, which may be mapped pinned host memory, crosses the
 * bus in full-width coalesced reads, about once, however many taps the
 * filter has. A filtered tile (bilinear, bicubic) also decodes each
 * oriented source pixel it reads once, chroma upsampled, for the taps to
 * read. Otherwise (the planar paths, or a shrink too steep for a tile)
 * the threads read the frame through the plan's pointers.
 */
#include "zcconvert.h"
#include "zcconvert-common.h"
#include "zcconvert-fast420.h"

#include <cuda_runtime.h>

#include <initializer_list>
#include <mutex>
#include <type_traits>

namespace zc {
namespace {

using detail::kTileThreadsX;
using detail::kTileThreadsY;

/* Where the kernels find their plan. It travels as a kernel parameter
 * (nothing to copy or free per frame), which the per-block code takes by
 * reference and indexes. Indexing a parameter in place needs
 * __grid_constant__ (CUDA 11.7, sm_70); without it every thread would first
 * copy the whole plan into local memory (many times slower). So the code
 * built for an older architecture, or by an older toolkit, or with
 * -Dcuda-grid-constant=disabled (ZC_NO_GRID_CONSTANT), finds the plan in
 * one of kPlanSlots slots in device memory instead, written on the
 * launch's stream just before it and reused only after the event recorded
 * behind the launch that last read it (a GPU-side wait, no host wait).
 * Each thread block first copies the slot into shared memory, one 16-byte
 * load a thread, and reads the plan there: no store to a frame can alias
 * shared memory, so the compiler keeps the plan's fields in registers
 * across the block's stores as it does a parameter's (read from global
 * memory, every store would force them to be read again). Not constant
 * memory: the threads of a warp index the plan's tables at different
 * places, which the constant cache serves one address at a time. The host
 * learns which of the two the loaded code does from the kernel's PTX
 * version, and the shared memory the copy takes from its attributes. */
#if !defined(ZC_NO_GRID_CONSTANT)                                              \
    && (__CUDACC_VER_MAJOR__ > 11                                              \
        || (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 7))
#define ZC_TOOLKIT_GRID_CONSTANT 1
#else
#define ZC_TOOLKIT_GRID_CONSTANT 0
#endif
#if ZC_TOOLKIT_GRID_CONSTANT                                                   \
    && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700)
#define ZC_GRID_CONSTANT __grid_constant__
#define ZC_PLAN_IN_PARAM 1
#else
#define ZC_GRID_CONSTANT
#define ZC_PLAN_IN_PARAM 0
#endif

static_assert(sizeof(detail::Plan) + sizeof(detail::TileGeom) + sizeof(int)
                  <= 4096,
              "kernel parameters must stay within 4 KiB");

struct alignas(16) PlanSlot
{
  detail::Plan plan;
  detail::TileGeom g;
};
static_assert(sizeof(PlanSlot) % 16 == 0, "a slot is copied in 16-byte words");
constexpr int kPlanSlots = 8;
__device__ PlanSlot g_plan_slots[kPlanSlots];

#if !ZC_PLAN_IN_PARAM
/* The block's copy of its launch's slot (see above). Every thread of the
 * block must call it: it ends with a barrier. */
__device__ __forceinline__ const PlanSlot &
block_slot(const PlanSlot *__restrict__ slot)
{
  constexpr int kWords = sizeof(PlanSlot) / 16;
  __shared__ uint4 words[kWords];
  const uint4 *src = reinterpret_cast<const uint4 *>(slot);
  const int n = blockDim.x * blockDim.y;
  for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < kWords; i += n)
    words[i] = __ldg(src + i);
  __syncthreads();
  return *reinterpret_cast<const PlanSlot *>(words);
}
#endif

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

__global__ void
__launch_bounds__(kBlockX *kBlockY)
    convert_kernel(const ZC_GRID_CONSTANT detail::Plan plan_param,
                   const PlanSlot *__restrict__ slot)
{
#if ZC_PLAN_IN_PARAM
  const detail::Plan &plan = plan_param;
  (void)slot;
#else
  const detail::Plan &plan = block_slot(slot).plan;
#endif
  const int bx = blockIdx.x * kBlockX + threadIdx.x;
  const int by = blockIdx.y * kBlockY + threadIdx.y;
  if (bx < plan.blocks_x && by < plan.blocks_y)
    detail::convert_block(plan, bx, by);
}

/* Copies `bytes` of each of `rows` rows from the frame into shared memory
 * in loads of V bytes, the block's threads striding over the chunks so
 * that a warp reads consecutive ones. */
template <int V>
__device__ void
stage_rows(const uint8_t *src, size_t stride, uint8_t *dst, int pitch, int rows,
           int bytes, int tid)
{
  using Word = typename std::conditional<
      V == 16, uint4, typename std::conditional<V == 4, uint32_t, uint8_t>::type>::type;
  const int chunks = bytes / V;
  const int total = chunks * rows;
  for (int i = tid; i < total; i += kTileThreadsX * kTileThreadsY) {
    const int r = i / chunks, c = i - r * chunks;
    *reinterpret_cast<Word *>(dst + (size_t)r * pitch + (size_t)c * V) =
        *reinterpret_cast<const Word *>(src + (size_t)r * stride + (size_t)c * V);
  }
}

/* Copies plane q's span sp of the frame into dst (g.pitch[q] bytes a
 * row) in loads of the plane's width, g.vec[q]; the span clamped to the
 * tile's bound (tile_geom() and fast420_plan() bound every tile's spans;
 * stay inside regardless). */
__device__ void
stage_plane(const detail::Plan &plan, const detail::TileGeom &g, int q,
            const detail::PlaneSpan &sp, uint8_t *dst, int tid)
{
  const int rows = min(sp.rows, g.rows[q]);
  const int bytes = min(sp.bytes, g.pitch[q]);
  const uint8_t *src = plan.sp[q] + (size_t)sp.row0 * plan.ss[q] + sp.byte0;
  if (g.vec[q] == 16)
    stage_rows<16>(src, plan.ss[q], dst, g.pitch[q], rows, bytes, tid);
  else if (g.vec[q] == 4)
    stage_rows<4>(src, plan.ss[q], dst, g.pitch[q], rows, bytes, tid);
  else
    stage_rows<1>(src, plan.ss[q], dst, g.pitch[q], rows, bytes, tid);
}

/* One tile per thread block: stage the source rows the tile reads (and,
 * for a filter, Decode: decode its oriented source pixels once), then
 * convert its output blocks from that copy. Two kernels, so that each
 * gets the registers its own path needs. Four blocks an SM: at most 64
 * registers a thread (with more, the filtered kernel fits only three
 * blocks an SM and is bound by latency). */
template <bool Decode>
__global__ void
__launch_bounds__(kTileThreadsX *kTileThreadsY, 4)
convert_tiled_kernel(const ZC_GRID_CONSTANT detail::Plan plan_param,
                     const ZC_GRID_CONSTANT detail::TileGeom g_param,
                     const PlanSlot *__restrict__ slot)
{
#if ZC_PLAN_IN_PARAM
  const detail::Plan &plan = plan_param;
  const detail::TileGeom &g = g_param;
  (void)slot;
#else
  const PlanSlot &copy = block_slot(slot);
  const detail::Plan &plan = copy.plan;
  const detail::TileGeom &g = copy.g;
#endif
  extern __shared__ __align__(16) uint8_t smem[];
  const int tid = threadIdx.y * kTileThreadsX + threadIdx.x;
  detail::TileSrc ts = {};
  int ab[4] = {0, 0, 0, 0};
  const bool reads = detail::tile_oriented(plan, g, blockIdx.x, blockIdx.y, ab);
  detail::DecodedSrc ds = {};
  if constexpr (Decode) {
    /* the tap tables, while the rows arrive */
    detail::tile_tables(plan, g, blockIdx.x, blockIdx.y, smem, &ds);
    const int n = detail::tile_table_entries(plan, g);
    for (int i = tid; i < n; i += kTileThreadsX * kTileThreadsY)
      detail::fill_tile_entry(plan, g, ds, i);
  }
  if (reads) {
    detail::PlaneSpan sp[3];
    const int n = detail::tile_spans(plan, g, ab, sp);
    uint8_t *base = smem;
    for (int q = 0; q < n; q++) {
      stage_plane(plan, g, q, sp[q], base, tid);
      ts.base[q] = base;
      ts.pitch[q] = g.pitch[q];
      ts.row0[q] = sp[q].row0;
      ts.byte0[q] = sp[q].byte0;
      base += (size_t)g.rows[q] * g.pitch[q];
    }
  }
  __syncthreads();

  /* (a tile never takes the planar chroma path, the only reader of the
   * row context) */
  const int bx = blockIdx.x * g.tile_bx + threadIdx.x;
  if constexpr (!Decode) {
    for (int k = 0; k < g.rows_per_thread; k++) {
      const int by = blockIdx.y * g.tile_by + k * kTileThreadsY + threadIdx.y;
      if (bx < plan.blocks_x && by < plan.blocks_y)
        detail::convert_block(plan, ts, detail::RowCtx{}, bx, by);
    }
    return;
  } else {
    ds.dec = reinterpret_cast<uint32_t *>(smem + g.dec_offset);
    ds.pitch = g.dec_w;
    ds.a0 = ab[0];
    ds.b0 = ab[1];
    if (reads) {
      const int w = min(ab[2] - ab[0] + 1, g.dec_w);
      const int h = min(ab[3] - ab[1] + 1, g.dec_h);
      for (int i = tid; i < w * h; i += kTileThreadsX * kTileThreadsY) {
        const int b = i / w, a = i - b * w;
        ds.store(ab[0] + a, ab[1] + b,
                 detail::oriented_px(plan, ts, ab[0] + a, ab[1] + b));
      }
    }
    __syncthreads();
    for (int k = 0; k < g.rows_per_thread; k++) {
      const int by = blockIdx.y * g.tile_by + k * kTileThreadsY + threadIdx.y;
      if (bx < plan.blocks_x && by < plan.blocks_y)
        detail::convert_block(plan, ds, detail::RowCtx{}, bx, by);
    }
  }
}

/* The 4:2:0 to R'G'B' paths (zcconvert-fast420.h). Same size: a thread
 * converts 4 x 2 pixels straight from the frame. */
__global__ void
__launch_bounds__(detail::kFastThreadsX *detail::kFastThreadsY)
    fast420_same_kernel(const ZC_GRID_CONSTANT detail::Plan plan_param,
                        const PlanSlot *__restrict__ slot)
{
#if ZC_PLAN_IN_PARAM
  const detail::Plan &plan = plan_param;
  (void)slot;
#else
  const detail::Plan &plan = block_slot(slot).plan;
#endif
  const int x0 = (blockIdx.x * detail::kFastThreadsX + threadIdx.x)
                 * detail::kFastPx;
  const int y0 = (blockIdx.y * detail::kFastThreadsY + threadIdx.y)
                 * detail::kFastSameRows;
  if (x0 < plan.dw && y0 < plan.dh)
    detail::fast420_same_quad(plan, x0, y0);
}

/* Tiles of 128 x 8 pixels a block (see zcconvert-fast420.h): Filter,
 * bilinear scaling; else the picture not scaled, chroma upsampled. */
template <bool Filter>
__global__ void
__launch_bounds__(detail::kFastThreadsX *detail::kFastThreadsY)
    fast420_tiled_kernel(const ZC_GRID_CONSTANT detail::Plan plan_param,
                         const ZC_GRID_CONSTANT detail::TileGeom g_param,
                         const PlanSlot *__restrict__ slot)
{
#if ZC_PLAN_IN_PARAM
  const detail::Plan &plan = plan_param;
  const detail::TileGeom &g = g_param;
  (void)slot;
#else
  const PlanSlot &copy = block_slot(slot);
  const detail::Plan &plan = copy.plan;
  const detail::TileGeom &g = copy.g;
#endif
  extern __shared__ __align__(16) uint8_t smem[];
  __shared__ detail::Fast420Span span;
  constexpr int kThreads = detail::kFastThreadsX * detail::kFastThreadsY;
  const int tid = threadIdx.y * detail::kFastThreadsX + threadIdx.x;
  if (tid == 0)
    detail::fast420_span(plan, g, blockIdx.x, blockIdx.y, &span);
  __syncthreads();
  if (!span.reads)
    return; /* the whole block: span is the same for every thread */
  const detail::Fast420Tile t =
      detail::fast420_tile(g, blockIdx.x, blockIdx.y, smem, span);
  if (Filter) {
    /* the tap tables, while the rows arrive */
    for (int i = tid; i < detail::kFast420Entries; i += kThreads)
      detail::fast420_fill_entry(plan, t, i);
  }
  detail::Fast420Src src = {};
  uint8_t *base = smem;
#pragma unroll
  for (int q = 0; q < 3; q++) {
    if (q < span.n) {
      stage_plane(plan, g, q, span.sp[q], base, tid);
      src.set(q, base, g.pitch[q], span.sp[q]);
      base += (size_t)g.rows[q] * g.pitch[q];
    }
  }
  __syncthreads();
  const int x = t.x0 + threadIdx.x * detail::kFastPx, y = t.y0 + threadIdx.y;
  if (!Filter) {
    detail::fast420_upsampled_quad(plan, src, x, y);
    return;
  }
  const int n = t.pitch * min(span.ab[3] - span.ab[1] + 1, g.dec_h);
  for (int i = tid; i < n; i += kThreads)
    detail::fast420_decode(plan, t, src, i);
  __syncthreads();
  detail::fast420_linear_quad(plan, t, x, y);
}

/* What the host knows of a device, learnt at its first conversion. */
struct DeviceState
{
  std::once_flag once;
  cudaError_t init_error = cudaSuccess;
  int smem_limit = 0;        /* dynamic shared memory a tile may take */
  int static_smem = 0;       /* the tiled kernels' own (the plan's copy) */
  bool plan_in_param = true; /* the loaded kernels read their parameter */
  std::mutex lock;           /* the slots' order: wait, write, launch, record */
  unsigned next = 0;
  PlanSlot *slots = nullptr; /* g_plan_slots on this device */
  cudaEvent_t slot_read[kPlanSlots] = {};
};

constexpr int kMaxDevices = 64;
DeviceState device_states[kMaxDevices];

cudaError_t
init_device(DeviceState &d, int device)
{
  int optin = 0;
  cudaError_t err = cudaDeviceGetAttribute(
      &optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (err != cudaSuccess)
    return err;
  cudaFuncAttributes attr;
  /* the kernels that take a tile's shared memory (typed: GCC 9 deduces
   * no initializer_list from two template-ids) */
  using TiledKernel = decltype(&convert_tiled_kernel<true>);
  const TiledKernel tiled[] = {convert_tiled_kernel<true>,
                               convert_tiled_kernel<false>,
                               fast420_tiled_kernel<true>,
                               fast420_tiled_kernel<false>};
  for (TiledKernel kernel : tiled) {
    err = cudaFuncGetAttributes(&attr, kernel);
    if (err != cudaSuccess)
      return err;
    if ((int)attr.sharedSizeBytes > d.static_smem)
      d.static_smem = (int)attr.sharedSizeBytes;
  }
  /* sm_53 and sm_62 (Jetson Nano, TX2) stop at the 48 KiB default; a
   * block's static and dynamic shared memory count together */
  int total =
      optin < detail::kTileSmemLimit ? optin : detail::kTileSmemLimit;
  if (total < detail::kTileSmemDefault)
    total = detail::kTileSmemDefault;
  d.smem_limit = total - d.static_smem;
  /* Set once, not before each launch (where they cost each frame several
   * microseconds of CPU, and the launch after them more). The filtered tiles
   * (four of up to ~56 KiB an SM, the launch bounds) need the largest
   * shared-memory carveout, which the driver otherwise picks for three;
   * the nearest ones and the 4:2:0 tiles keep the default (less L1 makes
   * them slower). All may take up to smem_limit of dynamic shared
   * memory. */
  err = cudaFuncSetAttribute(convert_tiled_kernel<true>,
                             cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared);
  for (TiledKernel kernel : tiled) {
    if (err == cudaSuccess &&
        d.static_smem + d.smem_limit > detail::kTileSmemDefault)
      err = cudaFuncSetAttribute(
          kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, d.smem_limit);
  }
  if (err != cudaSuccess)
    return err;
  err = cudaFuncGetAttributes(&attr, convert_kernel);
  if (err != cudaSuccess)
    return err;
  d.plan_in_param = ZC_TOOLKIT_GRID_CONSTANT && attr.ptxVersion >= 70;
  if (!d.plan_in_param) {
    err = cudaGetSymbolAddress(reinterpret_cast<void **>(&d.slots),
                               g_plan_slots);
    if (err != cudaSuccess)
      return err;
    for (auto &ev : d.slot_read) {
      err = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
      if (err != cudaSuccess)
        return err;
    }
  }
  return cudaSuccess;
}

/* Launches `launch(slot)` with the plan where the loaded code reads it
 * (slot: null when the plan is the parameter). */
template <typename Launch>
cudaError_t
launch_with_plan(DeviceState &d, const detail::Plan &plan,
                 const detail::TileGeom &g, cudaStream_t stream,
                 Launch launch)
{
  if (d.plan_in_param)
    return launch(nullptr);
  std::lock_guard<std::mutex> guard(d.lock);
  const int slot = (int)(d.next++ % kPlanSlots);
  /* the last launch that read this slot, on whatever stream, is done
   * before the slot is written again (an event never recorded is done) */
  cudaError_t err = cudaStreamWaitEvent(stream, d.slot_read[slot], 0);
  if (err != cudaSuccess)
    return err;
  PlanSlot staged;
  staged.plan = plan;
  staged.g = g;
  /* from pageable memory: returns once the bytes are staged */
  err = cudaMemcpyAsync(d.slots + slot, &staged, sizeof(staged),
                        cudaMemcpyHostToDevice, stream);
  if (err != cudaSuccess)
    return err;
  err = launch(d.slots + slot);
  if (err != cudaSuccess)
    return err;
  return cudaEventRecord(d.slot_read[slot], stream);
}

/* The state of the current device, set up at its first use. */
cudaError_t
current_device(DeviceState **out)
{
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess)
    return err;
  if (device < 0 || device >= kMaxDevices)
    return cudaErrorInvalidDevice;
  DeviceState &d = device_states[device];
  std::call_once(d.once, [&] { d.init_error = init_device(d, device); });
  *out = &d;
  return d.init_error;
}

} // namespace

const char *
convert_cuda_plan_source()
{
  DeviceState *d = nullptr;
  if (current_device(&d) != cudaSuccess)
    return nullptr;
  return d->plan_in_param ? "parameter" : "device memory";
}

cudaError_t
convert_cuda(const FrameDesc &src, const FrameDesc &dst, const ConvertParams &p,
             cudaStream_t stream)
{
  detail::Plan plan;
  switch (detail::build_plan(src, dst, p, &plan)) {
  case detail::kPlanOk:
    break;
  case detail::kPlanNotSupported:
    return cudaErrorNotSupported;
  default:
    return cudaErrorInvalidValue;
  }

  DeviceState *dev = nullptr;
  cudaError_t err = current_device(&dev);
  if (err != cudaSuccess)
    return err;
  DeviceState &d = *dev;

  /* clang-format 14 would split the launch chevrons into "> > >". */
  // clang-format off
  detail::TileGeom g = {};
  const dim3 fast_block(detail::kFastThreadsX, detail::kFastThreadsY);
  switch (detail::fast420_plan(plan, d.smem_limit, &g)) {
  case detail::kFast420Same:
    return launch_with_plan(d, plan, g, stream, [&](const PlanSlot *slot) {
      fast420_same_kernel<<<dim3((unsigned)g.grid_x, (unsigned)g.grid_y),
                            fast_block, 0, stream>>>(plan, slot);
      return cudaGetLastError();
    });
  case detail::kFast420Linear:
  case detail::kFast420Upsampled: {
    auto *kernel = g.decoded ? fast420_tiled_kernel<true>
                             : fast420_tiled_kernel<false>;
    return launch_with_plan(d, plan, g, stream, [&](const PlanSlot *slot) {
      kernel<<<dim3((unsigned)g.grid_x, (unsigned)g.grid_y), fast_block,
               (size_t)g.smem, stream>>>(plan, g, slot);
      return cudaGetLastError();
    });
  }
  default:
    break;
  }
  if (detail::tile_geom(plan, d.smem_limit, &g)) {
    /* its attributes were set once (init_device()) */
    auto *kernel = g.decoded ? convert_tiled_kernel<true>
                             : convert_tiled_kernel<false>;
    const dim3 block(kTileThreadsX, kTileThreadsY);
    const dim3 grid((unsigned)g.grid_x, (unsigned)g.grid_y);
    return launch_with_plan(d, plan, g, stream, [&](const PlanSlot *slot) {
      kernel<<<grid, block, (size_t)g.smem, stream>>>(plan, g, slot);
      return cudaGetLastError();
    });
  }
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((unsigned)((plan.blocks_x + kBlockX - 1) / kBlockX),
                  (unsigned)((plan.blocks_y + kBlockY - 1) / kBlockY));
  return launch_with_plan(d, plan, g, stream, [&](const PlanSlot *slot) {
    convert_kernel<<<grid, block, 0, stream>>>(plan, slot);
    return cudaGetLastError();
  });
  // clang-format on
}

} // namespace zc

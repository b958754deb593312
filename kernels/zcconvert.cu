/* gst-zerocopy: the CUDA conversion.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One launch per frame, one thread per output block (a pixel, or the 2x1 /
 * 2x2 pixels that share a chroma sample), so every byte of the destination
 * is written once. The source is read through the plan's pointers, which
 * may be mapped pinned host memory. The per-block code is the CPU's
 * (zcconvert-common.h) and uses integer arithmetic only, so the output is
 * bit-identical to convert_cpu().
 */
#include "zcconvert.h"
#include "zcconvert-common.h"

#include <cuda_runtime.h>

namespace zc {
namespace {

/* The plan travels as the kernel's parameter (by value: nothing to copy
 * or free per frame). __grid_constant__: the per-block code takes it by
 * reference and indexes its tables; without it every thread would first
 * copy the whole plan into local memory (measured: 30 times slower). */
static_assert(sizeof(detail::Plan) <= 4096,
              "kernel parameters must stay within 4 KiB");

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;

__global__ void
__launch_bounds__(kBlockX *kBlockY) convert_kernel(const __grid_constant__ detail::Plan plan)
{
  const int bx = blockIdx.x * kBlockX + threadIdx.x;
  const int by = blockIdx.y * kBlockY + threadIdx.y;
  if (bx < plan.blocks_x && by < plan.blocks_y)
    detail::convert_block(plan, bx, by);
}

} // namespace

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

  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((unsigned)((plan.blocks_x + kBlockX - 1) / kBlockX),
                  (unsigned)((plan.blocks_y + kBlockY - 1) / kBlockY));
  /* clang-format 14 would split the launch chevrons into "> > >". */
  // clang-format off
  convert_kernel<<<grid, block, 0, stream>>>(plan);
  // clang-format on
  return cudaGetLastError();
}

} // namespace zc

/* gst-zerocopy test kernel: faults on the GPU
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One thread stores to an address no allocation has: the launch ends with
 * cudaErrorIllegalAddress, a sticky error that leaves the process's CUDA
 * context unusable. zckernel must report it and end the pipeline; a test
 * program runs it last. Built with nvcc into fault-sm_XX.cubin.
 */
#include <gst/zerocopy/zckernel.cuh>

ZC_KERNEL (process)
{
  if (zc_x () == 0 && zc_y () == 0)
    *(volatile int *) 0x10 = 1;
}

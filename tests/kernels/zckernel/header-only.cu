/* zckernel.cuh alone, nothing before it: it must compile on its own with
 * nvcc (device code) and as host C++ (types only) */
#include <gst/zerocopy/zckernel.cuh>

#if defined(__CUDACC__)
ZC_KERNEL (process)
{
  int x = zc_x (), y = zc_y ();
  if (zc_inside (out, x, y) && in.family == ZC_FAMILY_RGB)
    zc_write_rgba (out, x, y, zc_read_rgba (in, x, y));
}
#endif

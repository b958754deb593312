#include <gst/zerocopy/zckernel.cuh>

struct Params { float gain; int offset; };    /* params="p, gain=(float)1.5, offset=(int)-20" */

ZC_KERNEL (process)
{
  const Params & p = zc_params < Params > (params);
  int x = zc_x (), y = zc_y ();
  if (!zc_inside (out, x, y) || in.family != ZC_FAMILY_RGB)
    return;
  ZcRGBA c = zc_read_rgba (in, x, y);
  c.r = (unsigned char) min (255, max (0, (int) (c.r * p.gain) + p.offset));
  c.g = (unsigned char) min (255, max (0, (int) (c.g * p.gain) + p.offset));
  c.b = (unsigned char) min (255, max (0, (int) (c.b * p.gain) + p.offset));
  zc_write_rgba (out, x, y, c);
}

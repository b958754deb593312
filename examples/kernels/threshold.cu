/* gst-zerocopy example kernel: black and white by a luma threshold that
 * the pipeline sets, and may change while playing:
 *   gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12 ! zcupload ! \
 *       zckernel location=examples/kernels/threshold.cu \
 *       params="p, level=(int)128, invert=(boolean)false" ! \
 *       zcdownload ! autovideosink
 * params fields arrive packed in order: two 4-byte values here.
 */
#include <gst/zerocopy/zckernel.cuh>

struct Params
{
  int level;                    /* luma code value: at or above is white */
  int invert;                   /* boolean: 0 or 1 */
};

ZC_KERNEL (process)
{
  const Params & p = zc_params < Params > (params);
  int x = zc_x (), y = zc_y ();
  if (!zc_inside (out, x, y) || out.family == ZC_FAMILY_OTHER)
    return;
  bool white;
  if (in.family == ZC_FAMILY_RGB) {
    ZcRGBA c = zc_read_rgba (in, x, y);
    /* BT.601 luma of the R'G'B' pixel, in 0..255 */
    white = (77 * c.r + 150 * c.g + 29 * c.b) / 256 >= p.level;
  } else {
    white = zc_read_luma (in, x, y) >= p.level;
  }
  if (p.invert)
    white = !white;
  if (out.family == ZC_FAMILY_RGB) {
    unsigned char v = white ? 255 : 0;
    ZcRGBA c = zc_read_rgba (in, x, y);
    c.r = c.g = c.b = v;
    zc_write_rgba (out, x, y, c);
    return;
  }
  zc_write_luma (out, x, y, white ? zc_luma_white (out) : zc_luma_black (out));
  if (zc_owns_chroma (out, x, y))
    zc_write_chroma (out, x, y, 128, 128);
}

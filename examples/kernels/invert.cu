/* gst-zerocopy example kernel: the negative, as zcfilter invert=true
 * makes it (the same bytes), on R'G'B', GRAY8 and 8-bit Y'CbCr frames.
 *   gst-launch-1.0 videotestsrc ! zcupload ! \
 *       zckernel location=examples/kernels/invert.cu ! zcdownload ! autovideosink
 */
#include <gst/zerocopy/zckernel.cuh>

ZC_KERNEL (process)
{
  int x = zc_x (), y = zc_y ();
  if (!zc_inside (out, x, y))
    return;
  if (in.family == ZC_FAMILY_RGB) {
    /* 255 - v on R, G and B; alpha kept */
    ZcRGBA p = zc_read_rgba (in, x, y);
    p.r = 255 - p.r;
    p.g = 255 - p.g;
    p.b = 255 - p.b;
    zc_write_rgba (out, x, y, p);
    return;
  }
  /* Y'CbCr and GRAY: luma mirrored within its range (black <-> white),
   * chroma about its centre; one thread per chroma sample writes it */
  int luma = zc_read_luma (in, x, y);
  zc_write_luma (out, x, y, zc_luma_black (in) + zc_luma_white (in) - luma);
  if (zc_owns_chroma (in, x, y)) {
    int u, v;
    zc_read_chroma (in, x, y, &u, &v);
    zc_write_chroma (out, x, y, 256 - u, 256 - v);
  }
}

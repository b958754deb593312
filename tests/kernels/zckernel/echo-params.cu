/* gst-zerocopy test kernel: copies the params block into the frame
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * For 8-bit R'G'B' frames of 4-byte pixels, 64 pixels wide at least, 2
 * rows high at least. Row 0, pixels 0-63: params.bytes (256 bytes); row 1,
 * pixel 0: params.size, pixel 1: params.n_fields (little-endian unsigned
 * ints); every other sample 0. A test compares the bytes with the packing
 * docs/zckernel.md promises.
 */
#include <gst/zerocopy/zckernel.cuh>

ZC_KERNEL (process)
{
  int x = zc_x (), y = zc_y ();
  if (!zc_inside (out, x, y))
    return;
  unsigned char *p = zc_sample (out, 0, x, y);
  unsigned int word = 0;
  if (y == 0 && x < ZC_PARAMS_MAX_BYTES / 4) {
    for (int i = 3; i >= 0; i--)
      word = (word << 8) | params.bytes[4 * x + i];
  } else if (y == 1 && x == 0) {
    word = params.size;
  } else if (y == 1 && x == 1) {
    word = params.n_fields;
  }
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char) (word >> (8 * i));
}

/* gst-zerocopy test kernel: writes what it was given, for the tests to read
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * For 8-bit R'G'B' frames of 4-byte pixels (RGBA, BGRx ...) at least 8
 * pixels wide. Every pixel gets the bytes, in memory order,
 *
 *   value & 255, frame_number & 255, FILL_TAG, 0xA5
 *
 * except the first 8 pixels of row 0, which hold a FillRecord (32 bytes):
 * what the kernel saw, whole. value is the first params field, an int
 * ("p, value=(int)10"), or -1 without params. FILL_TAG tells two builds of
 * this file apart (a test prepends "#define FILL_TAG 2"). Every sample is
 * written, so the output is the same in place and out of place.
 */
#include <gst/zerocopy/zckernel.cuh>

#ifndef FILL_TAG
#define FILL_TAG 1
#endif

struct FillParams
{
  int value;
};

struct FillRecord
{
  unsigned long long frame_number;
  long long pts;
  long long duration;
  int value;
  unsigned int tag;
};

ZC_KERNEL (process)
{
  int x = zc_x (), y = zc_y ();
  if (!zc_inside (out, x, y))
    return;
  int value = params.size >= sizeof (FillParams) ?
      zc_params < FillParams > (params).value : -1;
  unsigned char *p = zc_sample (out, 0, x, y);
  if (y == 0 && x < 8) {
    FillRecord r;
    r.frame_number = info.frame_number;
    r.pts = info.pts;
    r.duration = info.duration;
    r.value = value;
    r.tag = FILL_TAG;
    const unsigned char *bytes = (const unsigned char *) &r + 4 * x;
    for (int i = 0; i < 4; i++)
      p[i] = bytes[i];
    return;
  }
  p[0] = (unsigned char) value;
  p[1] = (unsigned char) info.frame_number;
  p[2] = FILL_TAG;
  p[3] = 0xA5;
}

/* gst-zerocopy test kernel: does not compile
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * NVRTC must refuse the line marked ZC_TEST_SYNTAX_ERROR; the test finds
 * that line's number in this file and expects it in the error's log.
 */
#include <gst/zerocopy/zckernel.cuh>

ZC_KERNEL (process)
{
  int x = zc_x (), y = zc_y ();
  int z = x + ;                 /* ZC_TEST_SYNTAX_ERROR */
  (void) y;
  (void) z;
}

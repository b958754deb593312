/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/gst.h>

#ifndef GST_ZC_API
# ifdef BUILDING_GST_ZEROCOPY
#  define GST_ZC_API __attribute__ ((visibility ("default"))) extern
# else
#  define GST_ZC_API extern
# endif
#endif

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gstzcbasetransform.h"

G_BEGIN_DECLS

#define GST_TYPE_ZC_FILTER (gst_zc_filter_get_type ())
G_DECLARE_FINAL_TYPE (GstZcFilter, gst_zc_filter, GST, ZC_FILTER,
    GstZcBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (zcfilter);

G_END_DECLS

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gstzcbasetransform.h"

G_BEGIN_DECLS

/**
 * GstZcFilterMethod:
 * @GST_ZC_FILTER_METHOD_NEAREST: the source pixel under each output pixel
 * @GST_ZC_FILTER_METHOD_BILINEAR: videoscale's bilinear filter
 * @GST_ZC_FILTER_METHOD_BICUBIC: Mitchell-Netravali cubic (B = C = 1/3)
 *
 * How zcfilter samples the source when the size changes.
 */
typedef enum
{
  GST_ZC_FILTER_METHOD_NEAREST = 0,
  GST_ZC_FILTER_METHOD_BILINEAR = 1,
  GST_ZC_FILTER_METHOD_BICUBIC = 2,
} GstZcFilterMethod;

#define GST_TYPE_ZC_FILTER_METHOD (gst_zc_filter_method_get_type ())
GType gst_zc_filter_method_get_type (void);

#define GST_TYPE_ZC_FILTER (gst_zc_filter_get_type ())
G_DECLARE_FINAL_TYPE (GstZcFilter, gst_zc_filter, GST, ZC_FILTER,
    GstZcBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (zcfilter);

G_END_DECLS

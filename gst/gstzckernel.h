/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gstzcbasetransform.h"

G_BEGIN_DECLS

#define GST_TYPE_ZC_KERNEL (gst_zc_kernel_get_type ())
G_DECLARE_FINAL_TYPE (GstZcKernel, gst_zc_kernel, GST, ZC_KERNEL,
    GstZcBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (zckernel);

G_END_DECLS

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gstzcbasetransform.h"

G_BEGIN_DECLS

#define GST_TYPE_ZC_UPLOAD (gst_zc_upload_get_type ())
G_DECLARE_FINAL_TYPE (GstZcUpload, gst_zc_upload, GST, ZC_UPLOAD,
    GstZcBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (zcupload);

G_END_DECLS

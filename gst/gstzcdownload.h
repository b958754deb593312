/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "gstzcbasetransform.h"

G_BEGIN_DECLS

#define GST_TYPE_ZC_DOWNLOAD (gst_zc_download_get_type ())
G_DECLARE_FINAL_TYPE (GstZcDownload, gst_zc_download, GST, ZC_DOWNLOAD,
    GstZcBaseTransform)

GST_ELEMENT_REGISTER_DECLARE (zcdownload);

G_END_DECLS

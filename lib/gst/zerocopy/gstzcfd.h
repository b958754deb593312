/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/zerocopy/zerocopy-prelude.h>
#include <gst/zerocopy/gstzcmemory.h>

G_BEGIN_DECLS

/* Producer: frames out as file descriptors */
GST_ZC_API
gboolean gst_zc_buffer_is_shareable (GstBuffer * buffer);

GST_ZC_API
GstBuffer * gst_zc_buffer_export_fd (GstBuffer * buffer);

/* Consumer: frames in from file descriptors, each file mapped and
 * registered once */
typedef struct _GstZcFdImports GstZcFdImports;

GST_ZC_API
GstZcFdImports * gst_zc_fd_imports_new (void);

GST_ZC_API
void gst_zc_fd_imports_free (GstZcFdImports * imports);

GST_ZC_API
guint gst_zc_fd_imports_get_n_files (GstZcFdImports * imports);

GST_ZC_API
gboolean gst_zc_buffer_is_fd (GstBuffer * buffer);

GST_ZC_API
GstBuffer * gst_zc_buffer_import_fd (GstAllocator * allocator,
    GstZcFdImports * imports, GstBuffer * buffer,
    guint64 max_registered_bytes, gsize * registered_now);

G_END_DECLS

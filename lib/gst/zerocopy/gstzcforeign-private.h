/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the units after gstzcforeign (gstzcfd) take from it. Not installed.
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* A new buffer of @memory (transfer full) with @original's flags,
 * timestamps and metas, its GstVideoMeta (a plane layout, which a copy
 * without the memory leaves out) carried over by hand */
G_GNUC_INTERNAL
GstBuffer * gst_zc_buffer_new_around (GstMemory * memory, GstBuffer * original);

G_END_DECLS

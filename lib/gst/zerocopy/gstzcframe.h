/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/zerocopy/zerocopy-prelude.h>
#include <gst/zerocopy/gstzcmemorytype.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/**
 * GstZcFrame:
 *
 * A video frame's planes, mapped for the CPU and, where its memory is a
 * #GstZcMemory on a GPU, addressable by the GPU: what a language binding
 * needs to describe the frame to NumPy, PyTorch or a CUDA array consumer
 * without a copy. A frame keeps its buffer alive and mapped until its last
 * reference goes.
 */
typedef struct _GstZcFrame GstZcFrame;

#define GST_TYPE_ZC_FRAME (gst_zc_frame_get_type ())
GST_ZC_API
GType gst_zc_frame_get_type (void);

GST_ZC_API
GstZcFrame * gst_zc_frame_map (GstBuffer * buffer, const GstVideoInfo * info,
    GstMapFlags flags, GError ** error);

GST_ZC_API
GstZcFrame * gst_zc_frame_new_for_gpu (GstBuffer * buffer,
    const GstVideoInfo * info, gboolean writable, GError ** error);

GST_ZC_API
gboolean gst_zc_frame_is_mapped (GstZcFrame * frame);

GST_ZC_API
GstZcFrame * gst_zc_frame_ref (GstZcFrame * frame);

GST_ZC_API
void gst_zc_frame_unref (GstZcFrame * frame);

GST_ZC_API
GstBuffer * gst_zc_frame_get_buffer (GstZcFrame * frame);

GST_ZC_API
gboolean gst_zc_frame_is_writable (GstZcFrame * frame);

GST_ZC_API
guint gst_zc_frame_get_n_planes (GstZcFrame * frame);

GST_ZC_API
guintptr gst_zc_frame_get_plane_data (GstZcFrame * frame, guint plane);

GST_ZC_API
gint gst_zc_frame_get_plane_stride (GstZcFrame * frame, guint plane);

GST_ZC_API
void gst_zc_frame_get_plane_layout (GstZcFrame * frame, guint plane,
    guint * rows, guint * columns, guint * channels, guint * sample_bytes);

GST_ZC_API
GstZcMemoryType gst_zc_frame_get_memory_type (GstZcFrame * frame);

GST_ZC_API
gint gst_zc_frame_get_device_id (GstZcFrame * frame);

GST_ZC_API
guintptr gst_zc_frame_get_plane_device_data (GstZcFrame * frame, guint plane,
    GError ** error);

GST_ZC_API
gboolean gst_zc_frame_wait_on_stream (GstZcFrame * frame, guintptr stream,
    GError ** error);

GST_ZC_API
gboolean gst_zc_frame_record_on_stream (GstZcFrame * frame, guintptr stream,
    GError ** error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (GstZcFrame, gst_zc_frame_unref)

G_END_DECLS

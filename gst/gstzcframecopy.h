/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What GstZcBaseTransform does with the bytes of a frame (gstzcframecopy.cpp):
 * the input check, frame copies between memories, the memory a kernel may
 * read or write, foreign memory wrapped for kernels and copies, and the
 * per-frame counters the stats property reads. Valid from start() to
 * stop(); plane geometry is in gstzcvideoplane.h.
 */
#pragma once

#include "gstzcbasetransform.h"

G_BEGIN_DECLS

GstFlowReturn gst_zc_base_transform_check_input (GstZcBaseTransform * self,
    GstBuffer * inbuf);

gboolean gst_zc_buffer_is_device_memory (GstBuffer * buf);
gboolean gst_zc_buffer_gpu_writable (GstBuffer * buf);
GstZcMemory * gst_zc_buffer_gpu_memory (GstBuffer * buf, gint device);

GstFlowReturn gst_zc_base_transform_copy_frame (GstZcBaseTransform * self,
    GstBuffer * inbuf, GstBuffer * outbuf);

void gst_zc_base_transform_count_buffer (GstZcBaseTransform * self,
    gsize bytes_copied);
void gst_zc_base_transform_count_staged (GstZcBaseTransform * self,
    gsize bytes);

/* Foreign host memory (zcupload adopts it) and nvcodec's memory:CUDAMemory */
gboolean gst_zc_base_transform_in_cuda_memory (GstZcBaseTransform * self);
gboolean gst_zc_base_transform_out_cuda_memory (GstZcBaseTransform * self);
GstAllocator * gst_zc_base_transform_get_wrap_allocator (GstZcBaseTransform * self,
    GstZcMemoryType memory_type);
void gst_zc_base_transform_count_adopted (GstZcBaseTransform * self,
    gsize registered);
GstBuffer * gst_zc_base_transform_import_output (GstZcBaseTransform * self,
    GstBuffer * outbuf);
GstFlowReturn gst_zc_base_transform_release_output (GstZcBaseTransform * self,
    GstBuffer * view);

G_END_DECLS

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/zerocopy/zerocopy-prelude.h>

G_BEGIN_DECLS

/**
 * GstZcMemoryType:
 * @GST_ZC_MEMORY_TYPE_AUTO: pick for the device: mapped on discrete GPUs and on
 *   integrated GPUs of compute capability 7.2 and newer, managed on older
 *   integrated GPUs, system memory when there is no GPU.
 * @GST_ZC_MEMORY_TYPE_MAPPED: pinned host memory mapped into the GPU's
 *   address space (cudaHostAlloc with cudaHostAllocMapped|Portable).
 * @GST_ZC_MEMORY_TYPE_MANAGED: CUDA managed memory (cudaMallocManaged):
 *   kept on the host and mapped into the GPU where the device shares
 *   managed memory concurrently (discrete GPUs;
 *   GST_ZC_MANAGED_PLACEMENT=prefetch migrates it to where it is used
 *   instead), attached to the kernels' stream and back where it does not
 *   (older Jetsons).
 * @GST_ZC_MEMORY_TYPE_SYSTEM: page-aligned host memory, processed by the CPU
 *   backend.
 * @GST_ZC_MEMORY_TYPE_DEVICE: GPU memory (cudaMalloc): kernels run at device
 *   bandwidth, the CPU sees it only through a pinned staging copy made at map
 *   time. What a chain of GPU steps wants between its steps, and the
 *   explicit-copy mode of zcupload/zcdownload.
 */
typedef enum
{
  GST_ZC_MEMORY_TYPE_AUTO = 0,
  GST_ZC_MEMORY_TYPE_MAPPED = 1,
  GST_ZC_MEMORY_TYPE_MANAGED = 2,
  GST_ZC_MEMORY_TYPE_SYSTEM = 3,
  GST_ZC_MEMORY_TYPE_DEVICE = 4,
} GstZcMemoryType;

#define GST_TYPE_ZC_MEMORY_TYPE (gst_zc_memory_type_get_type ())
GST_ZC_API
GType gst_zc_memory_type_get_type (void);

GST_ZC_API
const gchar * gst_zc_memory_type_to_string (GstZcMemoryType type);

G_END_DECLS

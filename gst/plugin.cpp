/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcupload.h"
#include "gstzcfilter.h"
#include "gstzcdownload.h"
#include "gstzckernel.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ret = FALSE;

  gst_zc_memory_init_once ();
  ret |= GST_ELEMENT_REGISTER (zcupload, plugin);
  ret |= GST_ELEMENT_REGISTER (zcfilter, plugin);
  ret |= GST_ELEMENT_REGISTER (zcdownload, plugin);
  ret |= GST_ELEMENT_REGISTER (zckernel, plugin);
  return ret;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, zerocopy,
    "Zero-copy video between CPU elements and CUDA kernels: pinned mapped or "
    "managed memory, negotiated as memory:CUDAZeroCopy",
    plugin_init, VERSION, GST_LICENSE, GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)

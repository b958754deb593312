/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The one place where the library's C++ code meets the CUDA runtime: the
 * result check that logs into the caller's debug category, and a guard that
 * makes a device current for a scope. Not installed.
 */
#pragma once

#include <gst/gst.h>
#include <gst/zerocopy/zerocopy-prelude.h>

#if GST_ZC_HAVE_CUDA
#include <cuda_runtime_api.h>

G_BEGIN_DECLS

/* Logs a failed CUDA call (name, description, call site) into @cat.
 * Returns TRUE on success. Exported for the plugin, not installed. */
GST_ZC_API
gboolean gst_zc_cuda_result (cudaError_t err, GstDebugCategory * cat,
    const gchar * file, const gchar * function, gint line, const gchar * what);

G_END_DECLS

#define GST_ZC_CUDA_OK(call) \
    gst_zc_cuda_result ((call), GST_CAT_DEFAULT, __FILE__, GST_FUNCTION, \
        __LINE__, #call)

namespace gst_zc {

/* Makes @device current on this thread for a scope and puts back whatever
 * was current before, so elements on different GPUs can share a thread. */
class DeviceScope
{
public:
  explicit DeviceScope (int device)
  {
    if (cudaGetDevice (&prev_) != cudaSuccess)
      prev_ = -1;
    ok_ = (prev_ == device) || cudaSetDevice (device) == cudaSuccess;
  }
  ~DeviceScope ()
  {
    int cur = -1;
    if (prev_ >= 0 && cudaGetDevice (&cur) == cudaSuccess && cur != prev_)
      cudaSetDevice (prev_);
  }
  DeviceScope (const DeviceScope &) = delete;
  DeviceScope & operator= (const DeviceScope &) = delete;
  bool ok () const { return ok_; }

private:
  int prev_ = -1;
  bool ok_ = false;
};

}  /* namespace gst_zc */

#endif /* GST_ZC_HAVE_CUDA */

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * The CUDA result check behind GST_ZC_CUDA_OK (gstzccuda-private.h). Every
 * other unit calls it and it calls none of theirs, so it has a unit of its
 * own at the bottom of the library: the context, which checks its own CUDA
 * calls with it, is in turn called by the context-sharing helpers.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzccuda-private.h"

#if GST_ZC_HAVE_CUDA
gboolean
gst_zc_cuda_result (cudaError_t err, GstDebugCategory * cat,
    const gchar * file, const gchar * function, gint line, const gchar * what)
{
  if (err == cudaSuccess)
    return TRUE;
#ifndef GST_DISABLE_GST_DEBUG
  gst_debug_log (cat, GST_LEVEL_WARNING, file, function, line, NULL,
      "CUDA call failed: %s: %s (%s)", what, cudaGetErrorName (err),
      cudaGetErrorString (err));
#else
  (void) cat;
  (void) file;
  (void) function;
  (void) line;
  (void) what;
#endif
  return FALSE;
}
#endif

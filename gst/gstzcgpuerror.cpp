/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * One wording for a lost CUDA context. After a sticky error (a kernel
 * faulted) every CUDA call of the process fails until it exits; an element
 * that meets such a failure, whichever call it was, says that the context
 * is lost and that the process must restart, rather than naming the call
 * that happened to notice.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcgpuerror.h"

#include <gst/zerocopy/gstzccuda-private.h>

#define LOST_TEXT "the CUDA context of this process is lost (%s, a kernel " \
    "faulted): restart the process to use the GPU again"

void
gst_zc_post_gpu_error (GstElement * element, const gchar * what,
    const gchar * name, const gchar * detail)
{
  const gchar *lost = gst_zc_cuda_lost_reason ();
  if (lost) {
    GST_ELEMENT_ERROR (element, RESOURCE, FAILED, ("%s: " LOST_TEXT, what,
            lost), ("%s: %s", name, detail));
  } else {
    GST_ELEMENT_ERROR (element, RESOURCE, FAILED, ("%s: %s", what, name),
        ("%s", detail));
  }
}

void
gst_zc_post_stream_error (GstElement * element, const gchar * device_name)
{
  const gchar *lost = gst_zc_cuda_lost_reason ();
  if (lost) {
    GST_ELEMENT_ERROR (element, RESOURCE, FAILED,
        ("Could not create a CUDA stream on %s: " LOST_TEXT, device_name,
            lost), ("a kernel faulted earlier in this process"));
  } else {
    /* the failed call was this thread's last (gst_zc_context_new_stream()) */
    const gchar *call = nullptr, *name = nullptr, *description = nullptr;
    gst_zc_cuda_last_failure (&call, &name, &description);
    if (name) {
      gchar *fn = gst_zc_cuda_call_function (call);
      GST_ELEMENT_ERROR (element, RESOURCE, FAILED,
          ("Could not create a CUDA stream on %s: %s failed (%s: %s)",
              device_name, fn, name, description), ("%s", call));
      g_free (fn);
    } else {
      GST_ELEMENT_ERROR (element, RESOURCE, FAILED,
          ("Could not create a CUDA stream on %s", device_name),
          ("see GST_DEBUG=zccontext:4 for the CUDA error"));
    }
  }
}

void
gst_zc_post_context_error (GstElement * element, const GError * err,
    gint device_id)
{
  const gchar *what = err ? err->message : "Could not open the CUDA device";
  const gchar *lost = gst_zc_cuda_lost_reason ();
  if (lost) {
    GST_ELEMENT_ERROR (element, RESOURCE, NOT_FOUND, ("%s: " LOST_TEXT, what,
            lost), ("device-id=%d", device_id));
  } else {
    GST_ELEMENT_ERROR (element, RESOURCE, NOT_FOUND, ("%s", what),
        ("device-id=%d", device_id));
  }
}

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The ERROR an element posts when a GPU step fails (gstzcgpuerror.cpp).
 */
#pragma once

#include <gst/gst.h>

G_BEGIN_DECLS

/* Posts on @element the ERROR of a failed GPU step: @what failed with CUDA
 * error @name, @detail for the debug text. Where the process's CUDA
 * context is lost (a kernel faulted, in this element or any other of the
 * process), the message says so and that only a new process can use the
 * GPU again, whatever the step was. */
G_GNUC_INTERNAL
void gst_zc_post_gpu_error (GstElement * element, const gchar * what,
    const gchar * name, const gchar * detail);

/* The same for an element that could not open its context (@err, may be
 * NULL) on @device_id when it started */
G_GNUC_INTERNAL
void gst_zc_post_context_error (GstElement * element, const GError * err,
    gint device_id);

/* The same for an element that could not create its CUDA stream on
 * @device_name when it started */
G_GNUC_INTERNAL
void gst_zc_post_stream_error (GstElement * element,
    const gchar * device_name);

G_END_DECLS

/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:gstzcutils
 * @title: Context sharing
 * @short_description: one #GstZcContext per device for a whole pipeline
 *
 * Elements of one pipeline that ask for the same device share one
 * #GstZcContext through GStreamer's context protocol (context query,
 * `need-context`, `have-context`) under the type #GST_ZC_CONTEXT_TYPE; each
 * element keeps its own CUDA stream. Where the library was built with
 * gstreamer-cuda-1.0, the same elements answer GStreamer's CUDA elements
 * (#GST_ZC_CUDA_CONTEXT_TYPE) with a GstCudaContext of the device's primary
 * context, so that both sides use one CUDA context per GPU.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcutils.h"
#include "gstzccuda-private.h"

#include <mutex>

#if GST_ZC_HAVE_GST_CUDA
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudaloader.h>
#include <gst/cuda/gstcudautils.h>
#endif

GST_DEBUG_CATEGORY_STATIC (gst_zc_utils_debug);
#define GST_CAT_DEFAULT gst_zc_utils_debug

static void
ensure_debug_category (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    GST_DEBUG_CATEGORY_INIT (gst_zc_utils_debug, "zcutils", 0,
        "zero-copy context sharing");
    g_once_init_leave (&once, 1);
  }
}

/**
 * gst_context_new_zc_context:
 * @context: a #GstZcContext
 *
 * Returns: (transfer full): a new persistent #GstContext carrying @context
 */
GstContext *
gst_context_new_zc_context (GstZcContext * context)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), NULL);

  GstContext *ctx = gst_context_new (GST_ZC_CONTEXT_TYPE, TRUE);
  GstStructure *s = gst_context_writable_structure (ctx);
  gst_structure_set (s, "context", GST_TYPE_ZC_CONTEXT, context,
      "device-id", G_TYPE_INT, gst_zc_context_get_device_id (context), NULL);
  return ctx;
}

/**
 * gst_context_get_zc_context:
 * @context: a #GstContext
 * @zc_context: (out) (transfer full): the #GstZcContext it carries
 *
 * Returns: whether @context is a zero-copy context with a #GstZcContext
 */
gboolean
gst_context_get_zc_context (GstContext * context, GstZcContext ** zc_context)
{
  g_return_val_if_fail (GST_IS_CONTEXT (context), FALSE);
  g_return_val_if_fail (zc_context != NULL, FALSE);

  if (g_strcmp0 (gst_context_get_context_type (context),
          GST_ZC_CONTEXT_TYPE) != 0)
    return FALSE;
  const GstStructure *s = gst_context_get_structure (context);
  return gst_structure_get (s, "context", GST_TYPE_ZC_CONTEXT, zc_context,
      NULL);
}

/**
 * gst_zc_handle_set_context:
 * @element: the element being given @context
 * @context: (nullable): a #GstContext of any type
 * @device_id: the device the element was asked for, -1 for any
 * @zc_context: (inout) (transfer full): the element's context
 *
 * For an element's set_context(): takes a zero-copy context when it is for a
 * device the element accepts and the element has none yet.
 *
 * Returns: whether @zc_context was set from @context
 */
gboolean
gst_zc_handle_set_context (GstElement * element, GstContext * context,
    gint device_id, GstZcContext ** zc_context)
{
  GstZcContext *other = NULL;

  g_return_val_if_fail (zc_context != NULL, FALSE);
  ensure_debug_category ();

  if (!context || *zc_context)
    return FALSE;
  if (!gst_context_get_zc_context (context, &other))
    return FALSE;
  gint other_id = gst_zc_context_get_device_id (other);
  /* A CPU-backend context only exists where no GPU does, so whatever
   * device was asked for, it is the one every element would open. */
  if (device_id >= 0 && gst_zc_context_has_gpu (other) &&
      other_id != device_id) {
    GST_DEBUG_OBJECT (element, "ignoring shared context of device %d: "
        "this element is set to device %d", other_id, device_id);
    gst_object_unref (other);
    return FALSE;
  }
  GST_DEBUG_OBJECT (element, "taking shared context of device %d (%s)",
      other_id, gst_zc_context_get_device_name (other));
  *zc_context = other;
  return TRUE;
}

/**
 * gst_zc_handle_context_query:
 * @element: the element answering
 * @query: a #GstQuery
 * @zc_context: (nullable): the element's context
 *
 * Answers a CONTEXT query of type #GST_ZC_CONTEXT_TYPE with @zc_context.
 *
 * Returns: whether @query was answered
 */
gboolean
gst_zc_handle_context_query (GstElement * element, GstQuery * query,
    GstZcContext * zc_context)
{
  const gchar *type;
  GstContext *old = NULL, *ctx;

  g_return_val_if_fail (GST_IS_QUERY (query), FALSE);
  ensure_debug_category ();

  if (GST_QUERY_TYPE (query) != GST_QUERY_CONTEXT || !zc_context)
    return FALSE;
  if (!gst_query_parse_context_type (query, &type) ||
      g_strcmp0 (type, GST_ZC_CONTEXT_TYPE) != 0)
    return FALSE;

  gint device_id = gst_zc_context_get_device_id (zc_context);
  gst_query_parse_context (query, &old);
  if (old) {
    ctx = gst_context_copy (old);
    gst_structure_set (gst_context_writable_structure (ctx), "context",
        GST_TYPE_ZC_CONTEXT, zc_context, "device-id", G_TYPE_INT, device_id,
        NULL);
  } else {
    ctx = gst_context_new_zc_context (zc_context);
  }
  gst_query_set_context (query, ctx);
  gst_context_unref (ctx);
  GST_DEBUG_OBJECT (element, "answered context query with device %d",
      device_id);
  return TRUE;
}

struct PeerQuery
{
  GstQuery *query;
  gboolean answered;
};

static gboolean
query_pad_peer (GstElement *, GstPad * pad, gpointer user_data)
{
  auto *pq = static_cast < PeerQuery * >(user_data);
  if (gst_pad_peer_query (pad, pq->query)) {
    pq->answered = TRUE;
    return FALSE;               /* stop iterating */
  }
  return TRUE;
}

/* Asks neighbours through @element's pads, downstream first. */
static void
query_neighbours (GstElement * element, gint device_id,
    GstZcContext ** zc_context)
{
  for (int upstream = 0; upstream < 2 && !*zc_context; upstream++) {
    PeerQuery pq = { gst_query_new_context (GST_ZC_CONTEXT_TYPE), FALSE };
    if (upstream)
      gst_element_foreach_sink_pad (element, query_pad_peer, &pq);
    else
      gst_element_foreach_src_pad (element, query_pad_peer, &pq);
    if (pq.answered) {
      GstContext *ctx = NULL;
      gst_query_parse_context (pq.query, &ctx);
      if (ctx && gst_zc_handle_set_context (element, ctx, device_id,
              zc_context))
        gst_element_set_context (element, ctx);
    }
    gst_query_unref (pq.query);
  }
}

/**
 * gst_zc_ensure_element_context:
 * @element: the element that needs a context
 * @device_id: the device it was asked for, -1 for any
 * @zc_context: (inout) (transfer full): the element's context
 * @error: (out) (optional): why no context could be made
 *
 * Finds a context to share, in this order: neighbours through a CONTEXT
 * query (downstream, then upstream), then the application or the bin through
 * a `need-context` message; failing those, opens the device and announces
 * the new context with `have-context`. The element's set_context() must call
 * gst_zc_handle_set_context(), which fills @zc_context during the message.
 *
 * Returns: whether @zc_context is set
 */
gboolean
gst_zc_ensure_element_context (GstElement * element, gint device_id,
    GstZcContext ** zc_context, GError ** error)
{
  g_return_val_if_fail (GST_IS_ELEMENT (element), FALSE);
  g_return_val_if_fail (zc_context != NULL, FALSE);
  ensure_debug_category ();

  if (*zc_context)
    return TRUE;

  query_neighbours (element, device_id, zc_context);
  if (*zc_context)
    return TRUE;

  /* The bin answers from contexts it has seen, or the application does, by
   * calling gst_element_set_context() from within the post. */
  gst_element_post_message (element,
      gst_message_new_need_context (GST_OBJECT_CAST (element),
          GST_ZC_CONTEXT_TYPE));
  if (*zc_context)
    return TRUE;

  GstZcContext *created = gst_zc_context_new (device_id, error);
  if (!created)
    return FALSE;

  GstContext *ctx = gst_context_new_zc_context (created);
  *zc_context = created;
  GST_INFO_OBJECT (element, "created context for %s (device %d)",
      gst_zc_context_get_device_name (created),
      gst_zc_context_get_device_id (created));
  gst_element_set_context (element, ctx);
  gst_element_post_message (element,
      gst_message_new_have_context (GST_OBJECT_CAST (element), ctx));
  return TRUE;
}

#if GST_ZC_HAVE_GST_CUDA
static GQuark
cuda_context_quark (void)
{
  static GQuark q = g_quark_from_static_string ("gst-zc-cuda-context");
  return q;
}

static std::mutex cuda_context_lock;
#endif

/**
 * gst_zc_context_get_cuda_context:
 * @context: a #GstZcContext
 *
 * The GstCudaContext of @context's device that gst-zerocopy shares with
 * GStreamer's CUDA elements: it wraps the device's primary context, the one
 * the CUDA runtime (and so every kernel and allocation of this library)
 * uses, so memory of either side is addressable by the other. Made at the
 * first call, then kept with @context: every later call returns the same
 * object, valid while @context lives.
 *
 * Returns: (transfer none) (nullable): a GstCudaContext, %NULL without a
 *   GPU or without gstreamer-cuda-1.0
 */
gpointer
gst_zc_context_get_cuda_context (GstZcContext * context)
{
  g_return_val_if_fail (GST_IS_ZC_CONTEXT (context), NULL);
  ensure_debug_category ();
#if GST_ZC_HAVE_GST_CUDA
  if (!gst_zc_context_has_gpu (context))
    return NULL;
  std::lock_guard < std::mutex > lk (cuda_context_lock);
  gpointer have = g_object_get_qdata (G_OBJECT (context), cuda_context_quark ());
  if (have)
    return have;
  if (!gst_cuda_load_library ()) {
    GST_WARNING ("GStreamer's CUDA library could not load the CUDA driver");
    return NULL;
  }
  gint dev = gst_zc_context_get_device_id (context);
  gst_zc::DeviceScope scope (dev);
  /* The runtime makes the primary context current on this thread: take its
   * handle off the driver's stack and put it back */
  if (!scope.ok () || !GST_ZC_CUDA_OK (cudaFree (nullptr)))
    return NULL;
  CUcontext primary = nullptr;
  CUdevice cudev = 0;
  if (CuCtxPopCurrent (&primary) != CUDA_SUCCESS || !primary) {
    GST_WARNING ("no current CUDA context after the runtime's initialisation");
    return NULL;
  }
  CuCtxPushCurrent (primary);
  if (CuDeviceGet (&cudev, dev) != CUDA_SUCCESS)
    return NULL;
  GstCudaContext *cuda = gst_cuda_context_new_wrapped (primary, cudev);
  if (!cuda)
    return NULL;
  GST_INFO ("GstCudaContext %" GST_PTR_FORMAT " wraps the primary context "
      "%p of device %d", cuda, primary, dev);
  g_object_set_qdata_full (G_OBJECT (context), cuda_context_quark (), cuda,
      (GDestroyNotify) gst_object_unref);
  return cuda;
#else
  return NULL;
#endif
}

/**
 * gst_zc_handle_cuda_context_query:
 * @element: the element answering
 * @query: a CONTEXT query
 * @context: (nullable): the element's #GstZcContext
 *
 * Answers a CONTEXT query of type #GST_ZC_CUDA_CONTEXT_TYPE (asked by
 * GStreamer's CUDA elements) with the GstCudaContext of @context, so that
 * both sides use one CUDA context per GPU.
 *
 * Returns: whether @query was answered
 */
gboolean
gst_zc_handle_cuda_context_query (GstElement * element, GstQuery * query,
    GstZcContext * context)
{
#if GST_ZC_HAVE_GST_CUDA
  const gchar *type;
  if (!context || GST_QUERY_TYPE (query) != GST_QUERY_CONTEXT ||
      !gst_query_parse_context_type (query, &type) ||
      g_strcmp0 (type, GST_ZC_CUDA_CONTEXT_TYPE) != 0)
    return FALSE;
  auto *cuda = (GstCudaContext *) gst_zc_context_get_cuda_context (context);
  return cuda && gst_cuda_handle_context_query (element, query, cuda);
#else
  (void) element;
  (void) query;
  (void) context;
  return FALSE;
#endif
}

/**
 * gst_zc_cuda_context_get_device_id:
 * @context: a #GstContext
 *
 * Returns: the CUDA device of a #GST_ZC_CUDA_CONTEXT_TYPE context (its
 *   GstCudaContext's `cuda-device-id`), or -1 for any other context
 */
gint
gst_zc_cuda_context_get_device_id (GstContext * context)
{
#if GST_ZC_HAVE_GST_CUDA
  if (!context || g_strcmp0 (gst_context_get_context_type (context),
          GST_ZC_CUDA_CONTEXT_TYPE) != 0)
    return -1;
  const GstStructure *s = gst_context_get_structure (context);
  GstCudaContext *cuda = NULL;
  if (!gst_structure_get (s, "gst.cuda.context", GST_TYPE_CUDA_CONTEXT,
          &cuda, NULL) || !cuda)
    return -1;
  guint dev = 0;
  g_object_get (cuda, "cuda-device-id", &dev, NULL);
  gst_object_unref (cuda);
  return (gint) dev;
#else
  (void) context;
  return -1;
#endif
}

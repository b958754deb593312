/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the units after gstzcforeign (gstzcfd) take from it. Not installed.
 */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

G_BEGIN_DECLS

/* A new buffer of @memory (transfer full) with @original's flags,
 * timestamps and metas, its GstVideoMeta (a plane layout, which a copy
 * without the memory leaves out) carried over by hand */
G_GNUC_INTERNAL
GstBuffer * gst_zc_buffer_new_around (GstMemory * memory, GstBuffer * original);

/* Host pages made GPU-visible (cudaHostRegister, mapped and portable), on
 * the current device, and counted in gst_zc_registered_bytes(): within
 * @max_registered_bytes registered by the process at once and the process's
 * pinned cap (gst_zc_memory_get_pinned_limit()), else OVER_LIMIT (try again
 * later); REFUSED when CUDA would not (locked memory exhausted, pages
 * registered by someone else; copy them), and always without CUDA */
typedef enum
{
  GST_ZC_HOST_REGISTERED,
  GST_ZC_HOST_OVER_LIMIT,
  GST_ZC_HOST_REFUSED,
} GstZcHostRegistration;

G_GNUC_INTERNAL
GstZcHostRegistration gst_zc_host_register (guint8 * start, gsize length,
    guint64 max_registered_bytes, guint8 ** device);

/* Undoes gst_zc_host_register(), on the current device, from any thread */
G_GNUC_INTERNAL
void gst_zc_host_unregister (guint8 * start, gsize length);

/* What a wrapper holds of the frame it wraps, until no one uses the
 * wrapper and the GPU work fenced on it is done: the frame's buffer, the
 * memory mapped to find its bytes (or NULL), and something else to let go
 * with them (or NULL). No allocation of its own. */
typedef struct
{
  GstBuffer *buffer;
  GstMemory *mapped;
  GstMapInfo info;
  GDestroyNotify release_extra;
  gpointer extra;
} GstZcHeldFrame;

G_GNUC_INTERNAL
void gst_zc_held_frame_release (GstZcHeldFrame * held);

/* The wrapper buffer of one foreign memory (or one frame's place in a
 * file), kept and handed out again each time that memory comes back, so
 * that a recycling producer costs no allocation per frame */
typedef struct _GstZcRecycled GstZcRecycled;

G_GNUC_INTERNAL
GstZcRecycled * gst_zc_recycled_new (void);

/* The owner of the memory goes: the kept buffer goes too (it is free then,
 * since a frame out holds the owner) */
G_GNUC_INTERNAL
void gst_zc_recycled_drop (gpointer recycled);

/* A read-only buffer of one wrapper of @allocator over @size bytes at
 * @host and @device, with @original's metadata, holding @held (transfer)
 * until no one uses it and its GPU work is done: @recycled's kept buffer
 * when it is free and still fits, else a new one (kept if none is). Its
 * video meta is @layout's, or @original's where @layout is NULL. NULL on
 * failure (@held released). */
G_GNUC_INTERNAL
GstBuffer * gst_zc_recycled_wrap (GstZcRecycled * recycled,
    GstAllocator * allocator, gpointer host, gpointer device, gsize size,
    GstBuffer * original, const GstZcHeldFrame * held,
    GstVideoMeta * layout);

G_END_DECLS

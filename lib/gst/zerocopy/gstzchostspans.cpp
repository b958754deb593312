/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The table of host page spans registered for foreign memory: see
 * gstzchostspans-private.h. No CUDA here: what registers pages is handed
 * in.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzchostspans-private.h"

#include <algorithm>
#include <iterator>

GST_DEBUG_CATEGORY_STATIC (gst_zc_host_spans_debug);
#define GST_CAT_DEFAULT gst_zc_host_spans_debug

static void
ensure_debug_category (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    GST_DEBUG_CATEGORY_INIT (gst_zc_host_spans_debug, "zchostspans", 0,
        "zero-copy registrations of foreign host memory");
    g_once_init_leave (&once, 1);
  }
}

namespace gst_zc {

/* The offset of a span's GPU addresses from its host addresses */
static inline gintptr
span_shift (const HostSpan * s)
{
  return (gintptr) ((guintptr) s->device - (guintptr) s->start);
}

SpanResult
HostSpans::cover (guint8 * bytes, gsize size, guint64 max_bytes,
    HostRegistration * r, gsize * registered_now)
{
  ensure_debug_category ();
  auto *start = (guint8 *) ((guintptr) bytes & ~(guintptr) (page - 1));
  auto *end = (guint8 *) (((guintptr) bytes + size + page - 1) &
      ~(guintptr) (page - 1));
  /* the spans that hold some of the pages, ascending */
  HostSpan *held[kMaxHostSpans];
  guint n_held = 0;
  auto it = spans.upper_bound ((guintptr) start);
  if (it != spans.begin ()) {
    HostSpan *s = std::prev (it)->second;
    if (s->start + s->length > start)
      held[n_held++] = s;
  }
  for (; it != spans.end () && it->second->start < end; ++it) {
    if (n_held == kMaxHostSpans) {
      GST_DEBUG ("pages at %p lie across more than %u registrations: copied",
          start, kMaxHostSpans);
      return SpanResult::BUSY;
    }
    held[n_held++] = it->second;
  }
  for (guint i = 0; i < n_held; i++) {
    HostSpan *s = held[i];
    if (!s->creator_alive) {
      GST_DEBUG ("pages at %p share a page with the registration at %p, "
          "whose memory has gone: copied until it goes", start, s->start);
      return SpanResult::BUSY;
    }
    if (span_shift (s) != 0 && (s->start > start || s->start + s->length <
            end)) {
      /* the spans would not be one range of GPU addresses */
      GST_DEBUG ("pages at %p share a page with the registration at %p, "
          "which is mapped elsewhere on the GPU: copied", start, s->start);
      return SpanResult::BUSY;
    }
  }

  /* the pages no span holds */
  guint8 *gap_start[kMaxHostSpans], *gap_end[kMaxHostSpans];
  guint n_gaps = 0;
  guint8 *at = start;
  for (guint i = 0; i <= n_held; i++) {
    guint8 *next = i < n_held ? std::max (held[i]->start, start) : end;
    if (next > at) {
      if (n_held + n_gaps == kMaxHostSpans) {
        GST_DEBUG ("pages at %p would lie across more than %u "
            "registrations: copied", start, kMaxHostSpans);
        return SpanResult::BUSY;
      }
      gap_start[n_gaps] = at;
      gap_end[n_gaps++] = next;
    }
    if (i < n_held)
      at = std::max (at, held[i]->start + held[i]->length);
  }

  HostSpan *made[kMaxHostSpans];
  guint n_made = 0;
  SpanResult result = SpanResult::OK;
  for (guint g = 0; g < n_gaps && result == SpanResult::OK; g++) {
    gsize length = gap_end[g] - gap_start[g];
    guint8 *d = nullptr;
    switch (register_pages (gap_start[g], length, max_bytes, &d)) {
      case GST_ZC_HOST_REGISTERED:
        break;
      case GST_ZC_HOST_OVER_LIMIT:
        result = SpanResult::OVER_LIMIT;
        continue;
      case GST_ZC_HOST_REFUSED:
        /* this memory is copied, and not tried again */
        result = SpanResult::FAILED;
        continue;
    }
    auto *s = new HostSpan;
    s->start = gap_start[g];
    s->length = length;
    s->device = d;
    made[n_made++] = s;
    if (n_held + n_gaps > 1 && span_shift (s) != 0) {
      GST_DEBUG ("pages at %p are mapped elsewhere on the GPU, and share "
          "pages with another registration: copied", gap_start[g]);
      result = SpanResult::BUSY;
    }
  }
  if (result != SpanResult::OK) {
    for (guint i = 0; i < n_made; i++) {
      unregister_pages (made[i]->start, made[i]->length);
      delete made[i];
    }
    return result;
  }

  /* held and made, merged in address order */
  guint h = 0, m = 0;
  gsize now = 0;
  while (h < n_held || m < n_made) {
    bool take_made = h == n_held ||
        (m < n_made && made[m]->start < held[h]->start);
    HostSpan *s = take_made ? made[m++] : held[h++];
    s->users++;
    if (take_made) {
      spans[(guintptr) s->start] = s;
      now += s->length;
    }
    r->created[r->n] = take_made;
    r->spans[r->n++] = s;
  }
  if (r->n > 1)
    GST_DEBUG ("pages at %p lie across %u registrations, %" G_GSIZE_FORMAT
        " bytes registered for them", start, r->n, now);
  if (registered_now)
    *registered_now = now;
  return SpanResult::OK;
}

void
HostSpans::release (HostRegistration * r)
{
  for (guint i = 0; i < r->n; i++) {
    HostSpan *s = r->spans[i];
    if (r->created[i])
      s->creator_alive = false;
    if (--s->users > 0)
      continue;
    unregister_pages (s->start, s->length);
    spans.erase ((guintptr) s->start);
    delete s;
  }
  *r = HostRegistration ();
}

guint
HostSpans::seams_within (const HostRegistration * r, const guint8 * device,
    gsize size, const guint8 ** seams)
{
  guint n = 0;
  for (guint i = 1; i < r->n; i++) {
    const guint8 *seam = r->spans[i]->device;
    if (seam > device && seam < device + size)
      seams[n++] = seam;
  }
  return n;
}

}                               /* namespace gst_zc */

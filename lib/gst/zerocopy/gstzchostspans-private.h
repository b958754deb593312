/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The table of host page spans registered for foreign memory
 * (gst_zc_buffer_adopt_host()): which spans a memory uses, which pages it
 * registers, when a span goes. What registers pages is handed in: CUDA in
 * the library (gst_zc_host_register()), a model of CUDA's rules in the
 * tests, so that the bookkeeping runs on any machine. Not installed.
 *
 * A span is one registration: a page-aligned range. CUDA refuses a page
 * registered twice, and two allocations of a heap often share a page, so a
 * memory uses the spans that already hold some of its pages and registers
 * only the pages no span holds. It may use a span only while the memory
 * the span was registered for lives: the pages they share then hold live
 * bytes of that memory, so the allocator cannot have given them back to
 * the system, and mapped new ones at the same address, since the
 * registration. A span lives while a memory uses it.
 *
 * A memory over more than one span (its first page the end of the memory
 * before it in the heap, its last the start of the one after) is one range
 * of GPU addresses only where registered pages are mapped at their host
 * addresses (where the host pointer is usable on the device); kernels read
 * across the spans there, and copies are cut at each seam between two
 * spans (the copy engines refuse a source that leaves its registration).
 * Elsewhere such a memory is refused (BUSY) until its neighbours go.
 */
#pragma once

#include <gst/gst.h>
#include "gstzcforeign-private.h"

#include <map>

namespace gst_zc {

/* A memory lies across at most three spans: its first page another
 * memory's, its middle its own, its last page a third's */
constexpr guint kMaxHostSpans = 3;

struct HostSpan
{
  guint8 *start = nullptr;      /* page-aligned */
  gsize length = 0;
  guint8 *device = nullptr;     /* the GPU's address of start */
  guint users = 0;              /* memories whose bytes it covers */
  bool creator_alive = true;
};

/* What one memory holds: the spans over its pages, ascending */
struct HostRegistration
{
  HostSpan *spans[kMaxHostSpans] = { };
  bool created[kMaxHostSpans] = { };    /* registered for this memory */
  guint n = 0;                  /* 0: the pages were refused */
};

/* Why a memory's pages could not be made GPU-visible */
enum class SpanResult
{
  OK,
  OVER_LIMIT,                   /* try again later: other memory may go */
  BUSY,                         /* shares pages with a span it may not use:
                                   try again later */
  FAILED,                       /* registration refused: copy this memory
                                   always */
};

/* Registers @length bytes at @start (page-aligned), within @max_bytes
 * registered at once, setting @device; gst_zc_host_register()'s contract */
typedef GstZcHostRegistration (*PageRegisterFunc) (guint8 * start,
    gsize length, guint64 max_bytes, guint8 ** device);
/* Undoes a registration of @length bytes at @start */
typedef void (*PageUnregisterFunc) (guint8 * start, gsize length);

/* Every method runs under the caller's lock, one lock for the table */
class HostSpans
{
public:
  /* @page: the system's page size, a power of two */
  HostSpans (gsize page, PageRegisterFunc reg, PageUnregisterFunc unreg)
  : page (page), register_pages (reg), unregister_pages (unreg)
  {
  }
  HostSpans (const HostSpans &) = delete;
  HostSpans & operator= (const HostSpans &) = delete;

  /* Covers the pages of the @size bytes at @bytes (a whole allocation)
   * into @r (empty): the spans that hold some of them used, the rest
   * registered; @registered_now (nullable) the bytes registered for it.
   * Nothing is kept unless OK. */
  SpanResult cover (guint8 * bytes, gsize size, guint64 max_bytes,
      HostRegistration * r, gsize * registered_now);

  /* The memory of @r goes: its spans lose a user, the last one
   * unregisters a span; @r is emptied */
  void release (HostRegistration * r);

  /* The device addresses strictly inside [@device, @device + @size) at
   * which one of @r's spans ends and the next begins, ascending, into
   * @seams (kMaxHostSpans - 1 of them at most); returns how many */
  static guint seams_within (const HostRegistration * r,
      const guint8 * device, gsize size, const guint8 ** seams);

  /* How many spans are registered */
  gsize size () const
  {
    return spans.size ();
  }

private:
  gsize page;
  PageRegisterFunc register_pages;
  PageUnregisterFunc unregister_pages;
  /* the spans by start */
  std::map < guintptr, HostSpan * >spans;
};

}                               /* namespace gst_zc */

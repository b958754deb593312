/* gst-zerocopy: which pages foreign memory registers, and which it shares
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The library's table of registered host spans
 * (lib/gst/zerocopy/gstzchostspans.cpp, compiled in here) with a model of
 * CUDA's registration rules in place of cudaHostRegister: a page is
 * registered once, a registration is undone whole, the process's limit
 * holds, and registered pages are mapped at their host addresses or, as a
 * second model, elsewhere. Heap-like layouts: frames back to back, each
 * starting on the last page of the one before. tests/check/gpu/
 * zcmemory-gpu.cpp does the same with CUDA on a GPU.
 */
#include <gst/check/gstcheck.h>

#include "../../../lib/gst/zerocopy/gstzchostspans-private.h"

#include <map>
#include <vector>

using gst_zc::HostRegistration;
using gst_zc::HostSpans;
using gst_zc::SpanResult;

namespace {

const gsize kPage = 4096;

/* The model of CUDA: registrations by start, their lengths */
std::map < guintptr, gsize > registered;
/* how far from its host address a registered page is on the GPU */
gintptr device_shift = 0;
/* a range someone else registered: refused, as CUDA refuses it */
guint8 *foreign_start = nullptr;
gsize foreign_length = 0;

gsize
registered_bytes ()
{
  gsize n = 0;
  for (auto & r:registered)
    n += r.second;
  return n;
}

GstZcHostRegistration
model_register (guint8 * start, gsize length, guint64 max_bytes,
    guint8 ** device)
{
  fail_unless ((guintptr) start % kPage == 0 && length % kPage == 0 &&
      length > 0, "an unaligned registration: %p, %" G_GSIZE_FORMAT, start,
      length);
  if (registered_bytes () + length > max_bytes)
    return GST_ZC_HOST_OVER_LIMIT;
  if (foreign_start && start < foreign_start + foreign_length &&
      foreign_start < start + length)
    return GST_ZC_HOST_REFUSED;
  /* a page registered twice: CUDA refuses it, the table must not ask */
  for (auto & r:registered) {
    guintptr s = r.first, e = r.first + r.second;
    fail_if ((guintptr) start < e && s < (guintptr) start + length,
        "pages at %p registered twice", start);
  }
  registered[(guintptr) start] = length;
  *device = start + device_shift;
  return GST_ZC_HOST_REGISTERED;
}

void
model_unregister (guint8 * start, gsize length)
{
  auto it = registered.find ((guintptr) start);
  fail_unless (it != registered.end () && it->second == length,
      "undoing a registration that was not made: %p", start);
  registered.erase (it);
}

/* The pages of @size bytes at @data, what the table should cover */
void
pages_of (guint8 * data, gsize size, guint8 ** start, guint8 ** end)
{
  *start = (guint8 *) ((guintptr) data & ~(kPage - 1));
  *end = (guint8 *) (((guintptr) data + size + kPage - 1) & ~(kPage - 1));
}

/* A memory of @size bytes at @data through @table */
struct Memory
{
  Memory (guint8 * d, gsize s)
  : data (d), size (s)
  {
  }
  guint8 *data;
  gsize size;
  HostRegistration reg;
  gsize now = 0;
};

SpanResult
cover (HostSpans & table, Memory & m, guint64 max = G_MAXUINT64)
{
  m.reg = HostRegistration ();
  m.now = 0;
  return table.cover (m.data, m.size, max, &m.reg, &m.now);
}

/* An address range of @pages pages that no one uses: only compared and
 * stored, never read or written */
guint8 *
address_space (gsize pages)
{
  static std::vector < guint8 > backing;
  backing.assign ((pages + 1) * kPage, 0);
  return (guint8 *) (((guintptr) backing.data () + kPage - 1) & ~(kPage -
          1));
}

void
reset_model ()
{
  registered.clear ();
  device_shift = 0;
  foreign_start = nullptr;
  foreign_length = 0;
}

}                               /* namespace */

GST_START_TEST (test_memory_alone_registers_its_pages)
{
  reset_model ();
  HostSpans table (kPage, model_register, model_unregister);
  guint8 *base = address_space (4);
  Memory a { base + 100, 2 * kPage + kPage / 2 };
  fail_unless (cover (table, a) == SpanResult::OK);
  fail_unless_equals_int (a.now, 3 * kPage);
  fail_unless_equals_int (a.reg.n, 1);
  fail_unless_equals_int (registered_bytes (), 3 * kPage);
  const guint8 *seams[2];
  fail_unless_equals_int (HostSpans::seams_within (&a.reg, a.data, a.size,
          seams), 0);
  table.release (&a.reg);
  fail_unless_equals_int (a.reg.n, 0);
  fail_unless_equals_int (registered_bytes (), 0);
  fail_unless_equals_int (table.size (), 0);
}

GST_END_TEST;

GST_START_TEST (test_memory_inside_a_span_uses_it_while_it_lives)
{
  reset_model ();
  HostSpans table (kPage, model_register, model_unregister);
  guint8 *base = address_space (4);
  Memory a { base, 2 * kPage + kPage / 2 };
  Memory c { base + kPage + 100, 200 };
  fail_unless (cover (table, a) == SpanResult::OK);
  fail_unless (cover (table, c) == SpanResult::OK);
  fail_unless_equals_int (c.now, 0);
  fail_unless (c.reg.spans[0] == a.reg.spans[0]);
  /* a goes: the span stays for c */
  table.release (&a.reg);
  fail_unless_equals_int (registered_bytes (), 3 * kPage);
  /* a new memory over a's old pages may not use it */
  Memory d { base, 2 * kPage + kPage / 2 };
  fail_unless (cover (table, d) == SpanResult::BUSY);
  fail_unless_equals_int (d.reg.n, 0);
  table.release (&c.reg);
  fail_unless_equals_int (registered_bytes (), 0);
  fail_unless (cover (table, d) == SpanResult::OK);
  fail_unless_equals_int (d.now, 3 * kPage);
  table.release (&d.reg);
  fail_unless_equals_int (table.size (), 0);
}

GST_END_TEST;

GST_START_TEST (test_heap_neighbours_share_pages_without_copies)
{
  /* A recycling pool's frames from the heap: 1.5 pages and a 16-byte
   * header each, back to back, so each starts on the last page of the one
   * before. Registered in order, in reverse, and middle last: every frame
   * is covered, every page registered once. */
  const gsize n = 8, size = kPage + kPage / 2, step = size + 16;
  for (int order = 0; order < 3; order++) {
    reset_model ();
    HostSpans table (kPage, model_register, model_unregister);
    guint8 *base = address_space (n * 2 + 2);
    std::vector < Memory > frames;
    for (gsize i = 0; i < n; i++)
      frames.push_back (Memory { base + 16 + i * step, size });
    std::vector < gsize > seq;
    for (gsize i = 0; i < n; i++)
      seq.push_back (order == 1 ? n - 1 - i : i);
    if (order == 2) {
      /* the even ones first, then each odd one between two live spans */
      seq.clear ();
      for (gsize i = 0; i < n; i += 2)
        seq.push_back (i);
      for (gsize i = 1; i < n; i += 2)
        seq.push_back (i);
    }
    gsize total = 0;
    for (gsize i:seq) {
      fail_unless (cover (table, frames[i]) == SpanResult::OK,
          "order %d: frame %u not covered", order, (unsigned) i);
      total += frames[i].now;
    }
    /* every page of the frames, once */
    guint8 *lo, *hi, *unused;
    pages_of (frames[0].data, frames[0].size, &lo, &unused);
    pages_of (frames[n - 1].data, frames[n - 1].size, &unused, &hi);
    const gsize all_pages = hi - lo;
    fail_unless_equals_int (total, all_pages);
    fail_unless_equals_int (registered_bytes (), all_pages);

    for (gsize i = 0; i < n; i++) {
      Memory & f = frames[i];
      /* the spans cover the frame's pages without a gap, and the seams
       * are the page boundaries inside it where one span meets the next */
      guint8 *start, *end;
      pages_of (f.data, f.size, &start, &end);
      fail_unless (f.reg.n >= 1 && f.reg.n <= 3);
      fail_unless (f.reg.spans[0]->start <= start);
      for (guint k = 1; k < f.reg.n; k++)
        fail_unless (f.reg.spans[k]->start ==
            f.reg.spans[k - 1]->start + f.reg.spans[k - 1]->length);
      const gst_zc::HostSpan * last_span = f.reg.spans[f.reg.n - 1];
      fail_unless (last_span->start + last_span->length >= end);
      const guint8 *seams[2];
      guint ns = HostSpans::seams_within (&f.reg, f.data, f.size, seams);
      fail_unless_equals_int (ns, f.reg.n - 1);
      for (guint k = 0; k < ns; k++) {
        fail_unless ((guintptr) seams[k] % kPage == 0);
        fail_unless (seams[k] > f.data && seams[k] < f.data + f.size);
      }
      /* in order, each frame after the first lies across two spans */
      if (order == 0 && i > 0)
        fail_unless_equals_int (f.reg.n, 2);
      /* middle last: an odd frame between two even ones lies across three */
      if (order == 2 && i % 2 == 1 && i + 1 < n)
        fail_unless_equals_int (f.reg.n, 3);
    }

    /* released in another order: every registration undone once */
    for (gsize i = 0; i < n; i++)
      table.release (&frames[(i * 3) % n].reg);
    fail_unless_equals_int (registered_bytes (), 0);
    fail_unless_equals_int (table.size (), 0);
  }
}

GST_END_TEST;

GST_START_TEST (test_span_of_a_gone_memory_is_not_shared)
{
  /* b shares a's last page; a goes, b keeps its span; e, new at a's
   * place, shares that page too but may not use a span whose memory went */
  reset_model ();
  HostSpans table (kPage, model_register, model_unregister);
  guint8 *base = address_space (6);
  Memory a { base + 16, kPage + kPage / 2 };
  Memory b { a.data + a.size + 16, kPage + kPage / 2 };
  fail_unless (cover (table, a) == SpanResult::OK);
  fail_unless (cover (table, b) == SpanResult::OK);
  fail_unless_equals_int (b.reg.n, 2);
  table.release (&a.reg);
  fail_unless_equals_int (registered_bytes (), 4 * kPage);
  Memory e { base + 16, kPage + kPage / 2 };
  fail_unless (cover (table, e) == SpanResult::BUSY);
  fail_unless_equals_int (registered_bytes (), 4 * kPage);
  table.release (&b.reg);
  fail_unless_equals_int (registered_bytes (), 0);
  fail_unless (cover (table, e) == SpanResult::OK);
  table.release (&e.reg);
}

GST_END_TEST;

GST_START_TEST (test_spans_mapped_apart_are_not_joined)
{
  /* Where registered pages are not at their host addresses on the GPU,
   * two spans are not one range: a neighbour-sharing memory waits, and
   * what it registered for the attempt is undone; a memory wholly inside
   * one span still uses it */
  reset_model ();
  device_shift = 1 << 20;
  HostSpans table (kPage, model_register, model_unregister);
  guint8 *base = address_space (6);
  Memory a { base + 16, kPage + kPage / 2 };
  Memory b { a.data + a.size + 16, kPage + kPage / 2 };
  Memory c { base + kPage + 32, 64 };
  fail_unless (cover (table, a) == SpanResult::OK);
  fail_unless (cover (table, b) == SpanResult::BUSY);
  fail_unless_equals_int (registered_bytes (), 2 * kPage);
  fail_unless (cover (table, c) == SpanResult::OK);
  fail_unless (c.reg.spans[0] == a.reg.spans[0]);
  table.release (&c.reg);
  table.release (&a.reg);
  fail_unless_equals_int (registered_bytes (), 0);
  fail_unless (cover (table, b) == SpanResult::OK);
  table.release (&b.reg);
  fail_unless_equals_int (table.size (), 0);

  /* a's span at its host address, b's new pages not: b's registration is
   * undone, and b waits */
  device_shift = 0;
  fail_unless (cover (table, a) == SpanResult::OK);
  device_shift = 1 << 20;
  fail_unless (cover (table, b) == SpanResult::BUSY);
  fail_unless_equals_int (registered_bytes (), 2 * kPage);
  fail_unless_equals_int (a.reg.spans[0]->users, 1);
  table.release (&a.reg);
  fail_unless_equals_int (registered_bytes (), 0);
}

GST_END_TEST;

GST_START_TEST (test_limit_and_refusal_keep_nothing)
{
  reset_model ();
  HostSpans table (kPage, model_register, model_unregister);
  guint8 *base = address_space (8);
  Memory a { base + 16, kPage + kPage / 2 };
  Memory b { a.data + a.size + 16, 3 * kPage };
  fail_unless (cover (table, a) == SpanResult::OK);
  /* b's own pages would pass the limit: over it, nothing kept */
  fail_unless (cover (table, b, 4 * kPage) == SpanResult::OVER_LIMIT);
  fail_unless_equals_int (b.reg.n, 0);
  fail_unless_equals_int (registered_bytes (), 2 * kPage);
  fail_unless_equals_int (a.reg.spans[0]->users, 1);
  /* someone else holds b's last page: refused for good */
  foreign_start = base + 4 * kPage;
  foreign_length = kPage;
  fail_unless (cover (table, b) == SpanResult::FAILED);
  fail_unless_equals_int (b.reg.n, 0);
  fail_unless_equals_int (registered_bytes (), 2 * kPage);
  fail_unless_equals_int (a.reg.spans[0]->users, 1);
  foreign_start = nullptr;
  fail_unless (cover (table, b) == SpanResult::OK);
  fail_unless_equals_int (b.now, 3 * kPage);
  table.release (&a.reg);
  table.release (&b.reg);
  fail_unless_equals_int (registered_bytes (), 0);
}

GST_END_TEST;

static Suite *
hostspans_suite (void)
{
  Suite *s = suite_create ("hostspans");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_memory_alone_registers_its_pages);
  tcase_add_test (tc, test_memory_inside_a_span_uses_it_while_it_lives);
  tcase_add_test (tc, test_heap_neighbours_share_pages_without_copies);
  tcase_add_test (tc, test_span_of_a_gone_memory_is_not_shared);
  tcase_add_test (tc, test_spans_mapped_apart_are_not_joined);
  tcase_add_test (tc, test_limit_and_refusal_keep_nothing);
  return s;
}

GST_CHECK_MAIN (hostspans);

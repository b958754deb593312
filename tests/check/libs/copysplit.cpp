/* gst-zerocopy: copies cut at registration seams
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A foreign frame adopted in place may lie across two or three host
 * registrations, and the copy engines refuse a source that leaves its
 * registration: the library cuts each plane's copy where it crosses a seam
 * (lib/gst/zerocopy/gstzccopysplit-private.h). The cutting is arithmetic,
 * checked here on host buffers with memcpy standing in for the copy
 * engine's row copies: every byte moved once, to the right place, no piece
 * across a seam. tests/check/gpu/zcmemory-gpu.cpp copies such a frame on
 * the GPU.
 */
#include <gst/check/gstcheck.h>

#include "../../../lib/gst/zerocopy/gstzccopysplit-private.h"

#include <cstring>
#include <vector>

using gst_zc::Copy2D;

namespace {

/* What the copy engine does with one piece */
void
run_piece (const Copy2D & p)
{
  for (size_t r = 0; r < p.rows; r++)
    memcpy (p.dst + r * p.dst_stride, p.src + r * p.src_stride, p.row_bytes);
}

/* The source bytes a piece reads: from its first byte to its last */
bool
piece_crosses (const Copy2D & p, const uint8_t * seam)
{
  const uint8_t *first = p.src;
  const uint8_t *last = p.src + (p.rows - 1) * p.src_stride + p.row_bytes;
  return seam > first && seam < last;
}

struct Cut
{
  std::vector < Copy2D > pieces;
};

Cut
cut (const Copy2D & c, const std::vector < const uint8_t *>&seams)
{
  Cut out;
  int r = gst_zc::split_copy_at_seams (c, seams.data (),
      (unsigned) seams.size (), 0,[&out](const Copy2D & p) {
        out.pieces.push_back (p);
        return 0;
      });
  fail_unless_equals_int (r, 0);
  return out;
}

}                               /* namespace */

GST_START_TEST (test_copy_without_seam_inside_is_one_piece)
{
  std::vector < uint8_t > src (64 * 102), dst (64 * 100);
  const uint8_t *first = src.data () + 64;
  Copy2D c = { first, 64, dst.data (), 64, 60, 100 };
  /* none, one before the first byte, one at it, one after the last */
  Cut none = cut (c, { });
  fail_unless_equals_int (none.pieces.size (), 1);
  Cut outside = cut (c, { first - 1, first, first + 99 * 64 + 60,
        first + 100 * 64
      });
  fail_unless_equals_int (outside.pieces.size (), 1);
  const Copy2D & p = outside.pieces[0];
  fail_unless (p.src == c.src && p.dst == c.dst && p.rows == c.rows &&
      p.row_bytes == c.row_bytes);
}

GST_END_TEST;

GST_START_TEST (test_nv12_luma_cut_where_the_heap_page_ends)
{
  /* A 1080p NV12 frame from the heap, 16 bytes into a page whose rest
   * another frame's registration holds: rows 0 and 1 lie before the page
   * ends, row 2 crosses it, the rest lie after */
  const size_t page = 4096, stride = 1920;
  std::vector < uint8_t > src (page + stride * 1080), dst (stride * 1080);
  const uint8_t *seam = src.data () + page;
  Copy2D c = { src.data () + 16, stride, dst.data (), stride, 1920, 1080 };
  Cut got = cut (c, { seam });
  fail_unless_equals_int (got.pieces.size (), 4);
  fail_unless (got.pieces[0].src == c.src);
  fail_unless_equals_int (got.pieces[0].rows, 2);
  fail_unless_equals_int (got.pieces[0].row_bytes, 1920);
  fail_unless (got.pieces[1].src == c.src + 2 * stride);
  fail_unless_equals_int (got.pieces[1].rows, 1);
  fail_unless_equals_int (got.pieces[1].row_bytes, page - 16 - 2 * stride);
  fail_unless (got.pieces[2].src == seam);
  fail_unless (got.pieces[2].dst == dst.data () + 2 * stride + (page - 16 -
          2 * stride));
  fail_unless_equals_int (got.pieces[2].rows, 1);
  fail_unless_equals_int (got.pieces[2].row_bytes, 1920 - (page - 16 -
          2 * stride));
  fail_unless (got.pieces[3].src == c.src + 3 * stride);
  fail_unless (got.pieces[3].dst == dst.data () + 3 * stride);
  fail_unless_equals_int (got.pieces[3].rows, 1077);
}

GST_END_TEST;

GST_START_TEST (test_cut_copies_move_every_byte_once)
{
  /* Many layouts: rows of 1 byte to three pages, padded strides, any
   * start in a page, one or two seams on page boundaries inside the
   * frame, in its padding or outside it */
  const size_t page = 4096;
  GRand *rng = g_rand_new_with_seed (20261206);
  for (int round = 0; round < 2000; round++) {
    size_t row_bytes = 1 + g_rand_int_range (rng, 0, 3 * page);
    size_t pad = g_rand_boolean (rng) ? 0 : g_rand_int_range (rng, 1, page);
    size_t rows = 1 + g_rand_int_range (rng, 0, 40);
    size_t stride = row_bytes + pad;
    size_t lead = g_rand_int_range (rng, 0, page);
    size_t extent = (rows - 1) * stride + row_bytes;
    std::vector < uint8_t > src (lead + extent + page);
    std::vector < uint8_t > dst (rows * stride, 0);
    std::vector < int >writes (rows * stride, 0);
    for (size_t i = 0; i < src.size (); i++)
      src[i] = (uint8_t) (i * 131 + round);

    /* seams: page boundaries of the source, counted from src[0] */
    size_t n_pages = (lead + extent) / page + 1;
    std::vector < const uint8_t *>seams;
    size_t first = g_rand_int_range (rng, 0, (gint32) n_pages + 1);
    seams.push_back (src.data () + first * page);
    if (g_rand_boolean (rng) && first < n_pages)
      seams.push_back (src.data () + (first + 1 +
              g_rand_int_range (rng, 0, (gint32) (n_pages - first))) * page);

    Copy2D c = { src.data () + lead, stride, dst.data (), stride, row_bytes,
      rows
    };
    Cut got = cut (c, seams);
    fail_unless (got.pieces.size () <= 1 + 3 * seams.size (),
        "round %d: %u pieces for %u seams", round,
        (unsigned) got.pieces.size (), (unsigned) seams.size ());
    for (const Copy2D & p:got.pieces) {
      for (const uint8_t * s:seams)
        fail_if (piece_crosses (p, s), "round %d: a piece crosses a seam",
            round);
      fail_unless (p.src_stride == stride && p.dst_stride == stride);
      fail_unless (p.row_bytes <= stride);
      for (size_t r = 0; r < p.rows; r++)
        for (size_t b = 0; b < p.row_bytes; b++)
          writes[p.dst + r * stride + b - dst.data ()]++;
      run_piece (p);
    }
    for (size_t r = 0; r < rows; r++) {
      size_t wrong = stride;
      for (size_t b = 0; b < stride && wrong == stride; b++)
        if (writes[r * stride + b] != (b < row_bytes ? 1 : 0))
          wrong = b;
      fail_unless (wrong == stride, "round %d: byte %u of row %u written "
          "%d times", round, (unsigned) wrong, (unsigned) r,
          wrong < stride ? writes[r * stride + wrong] : 0);
      fail_unless (memcmp (dst.data () + r * stride, c.src + r * stride,
              row_bytes) == 0, "round %d: row %u differs", round,
          (unsigned) r);
    }
  }
  g_rand_free (rng);
}

GST_END_TEST;

GST_START_TEST (test_cut_copy_stops_at_first_failure)
{
  std::vector < uint8_t > src (8192), dst (8192);
  Copy2D c = { src.data (), 100, dst.data (), 100, 100, 80 };
  int calls = 0;
  const uint8_t *seams[] = { src.data () + 4096 };
  int r = gst_zc::split_copy_at_seams (c, seams, 1, 0,[&calls](const Copy2D &) {
        return ++calls == 2 ? 11 : 0;
      });
  fail_unless_equals_int (r, 11);
  fail_unless_equals_int (calls, 2);
}

GST_END_TEST;

GST_START_TEST (test_packed_nv12_frame_is_one_copy_cut_at_two_seams)
{
  /* A 1080p NV12 frame packed as GStreamer's video pool lays it out (luma
   * rows 1920 bytes apart, chroma right after), from the heap across three
   * registrations, into a device frame of the same layout: one copy for
   * both planes, cut into three at the two seams, every byte in place */
  const size_t page = 4096, w = 1920, h = 1080, luma = w * h;
  const size_t frame = luma + luma / 2;
  std::vector < uint8_t > src (frame + 3 * page), dst (frame, 0);
  uint8_t *f = src.data () + page - 16;
  for (size_t i = 0; i < frame; i++)
    f[i] = (uint8_t) (i * 7 + i / 4099);
  const uint8_t *seams[] = { src.data () + page,
    src.data () + ((page - 16 + frame) / page) * page
  };
  Copy2D planes[2] = { {f, w, dst.data (), w, w, h},
  {f + luma, w, dst.data () + luma, w, w, h / 2}
  };
  Copy2D joined = planes[0];
  fail_unless (gst_zc::join_packed (joined, planes[1]));
  fail_unless (joined.src == f && joined.dst == dst.data ());
  fail_unless_equals_int (joined.rows, 1);
  fail_unless_equals_int (joined.row_bytes, frame);
  Cut got = cut (joined, { seams[0], seams[1] });
  fail_unless_equals_int (got.pieces.size (), 3);
  for (const Copy2D & p:got.pieces)
    run_piece (p);
  fail_unless (memcmp (dst.data (), f, frame) == 0);
}

GST_END_TEST;

GST_START_TEST (test_planes_apart_are_not_joined)
{
  std::vector < uint8_t > src (1 << 16), dst (1 << 16);
  const Copy2D luma = { src.data (), 64, dst.data (), 64, 64, 100 };
  /* padded rows on either side, a gap after the first plane on either
   * side, or the second plane before the first: two copies */
  const Copy2D apart[] = {
    {src.data () + 6400, 64, dst.data () + 6400, 80, 64, 50},
    {src.data () + 6400, 80, dst.data () + 6400, 64, 64, 50},
    {src.data () + 6464, 64, dst.data () + 6400, 64, 64, 50},
    {src.data () + 6400, 64, dst.data () + 6464, 64, 64, 50},
    {src.data () + 6400, 64, dst.data () + 6400, 64, 64, 0},
  };
  for (const Copy2D & b:apart) {
    Copy2D a = luma;
    fail_if (gst_zc::join_packed (a, b));
    fail_unless (a.src == luma.src && a.rows == luma.rows &&
        a.row_bytes == luma.row_bytes && a.src_stride == luma.src_stride);
  }
  /* a padded first plane is not packed either */
  Copy2D padded = { src.data (), 80, dst.data (), 80, 64, 100 };
  const Copy2D next = { src.data () + 8000, 64, dst.data () + 8000, 64, 64,
    50
  };
  fail_if (gst_zc::join_packed (padded, next));
  /* one row of any stride is packed; three planes join into one */
  Copy2D a = { src.data (), 999, dst.data (), 7, 100, 1 };
  const Copy2D b = { src.data () + 100, 64, dst.data () + 100, 64, 64, 10 };
  const Copy2D c = { src.data () + 740, 32, dst.data () + 740, 32, 32, 3 };
  fail_unless (gst_zc::join_packed (a, b));
  fail_unless (gst_zc::join_packed (a, c));
  fail_unless_equals_int (a.row_bytes, 100 + 640 + 96);
  fail_unless_equals_int (a.rows, 1);
}

GST_END_TEST;

GST_START_TEST (test_packed_plane_is_one_row_padded_is_not)
{
  /* An RGBA 720p plane packed on both sides (a device frame of the
   * library's layout into a mapped one): one linear copy of every byte,
   * cut at a seam like any one-row copy. Padded on either side: left as
   * rows. */
  const size_t row = 1280 * 4, rows = 720, bytes = row * rows;
  std::vector < uint8_t > src (bytes), dst (bytes, 0);
  for (size_t i = 0; i < bytes; i++)
    src[i] = (uint8_t) (i * 13 + i / 5003);
  Copy2D c = { src.data (), row, dst.data (), row, row, rows };
  fail_unless (gst_zc::flatten_packed (c));
  fail_unless_equals_int (c.rows, 1);
  fail_unless_equals_int (c.row_bytes, bytes);
  fail_unless (c.src == src.data () && c.dst == dst.data ());
  Cut got = cut (c, { src.data () + 3 * row + 17 });
  fail_unless_equals_int (got.pieces.size (), 2);
  for (const Copy2D & p:got.pieces)
    run_piece (p);
  fail_unless (memcmp (dst.data (), src.data (), bytes) == 0);
  /* already one row: nothing to do */
  fail_if (gst_zc::flatten_packed (c));
  const Copy2D padded[] = {
    {src.data (), row + 128, dst.data (), row, row, 100},
    {src.data (), row, dst.data (), row + 128, row, 100},
  };
  for (const Copy2D & p:padded) {
    Copy2D q = p;
    fail_if (gst_zc::flatten_packed (q));
    fail_unless (q.rows == 100 && q.row_bytes == row &&
        q.src_stride == p.src_stride && q.dst_stride == p.dst_stride);
  }
}

GST_END_TEST;

static Suite *
copysplit_suite (void)
{
  Suite *s = suite_create ("copysplit");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_copy_without_seam_inside_is_one_piece);
  tcase_add_test (tc, test_nv12_luma_cut_where_the_heap_page_ends);
  tcase_add_test (tc, test_cut_copies_move_every_byte_once);
  tcase_add_test (tc, test_cut_copy_stops_at_first_failure);
  tcase_add_test (tc, test_packed_nv12_frame_is_one_copy_cut_at_two_seams);
  tcase_add_test (tc, test_planes_apart_are_not_joined);
  tcase_add_test (tc, test_packed_plane_is_one_row_padded_is_not);
  return s;
}

GST_CHECK_MAIN (copysplit);

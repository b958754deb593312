/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A two-dimensional copy cut where its source crosses a seam: an address
 * at which one host registration ends and the next begins. A foreign
 * memory adopted in place (gst_zc_buffer_adopt_host()) may lie across two
 * or three registrations when its first or last page is another memory's;
 * kernels read across them, the copy engines do not (cudaMemcpy2DAsync
 * refuses a source that leaves its registration with cudaErrorInvalidValue).
 * Pure arithmetic, no CUDA: the tests check it on any machine. Not
 * installed.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace gst_zc {

/* What one cudaMemcpy2DAsync() moves: @rows rows of @row_bytes, @src_stride
 * and @dst_stride apart */
struct Copy2D
{
  const uint8_t *src;
  size_t src_stride;
  uint8_t *dst;
  size_t dst_stride;
  size_t row_bytes;
  size_t rows;
};

/* The bytes @c moves when its rows are packed in both source and
 * destination (one row, or strides equal to the row): one block each side.
 * 0 when they are not. */
inline size_t
packed_bytes (const Copy2D & c)
{
  if (c.rows == 1)
    return c.row_bytes;
  if (c.src_stride == c.row_bytes && c.dst_stride == c.row_bytes)
    return c.row_bytes * c.rows;
  return 0;
}

/* Makes @a, followed by @b, one copy of one row when both are packed
 * (packed_bytes()) and @b's source and destination begin where @a's end:
 * the planes of a frame laid out one after the other (NV12's luma and
 * chroma, I420's three) become one call. Returns whether it joined them;
 * @a is left alone when not. */
inline bool
join_packed (Copy2D & a, const Copy2D & b)
{
  const size_t na = packed_bytes (a), nb = packed_bytes (b);
  if (na == 0 || nb == 0 || a.src + na != b.src || a.dst + na != b.dst)
    return false;
  a.row_bytes = na + nb;
  a.src_stride = a.dst_stride = a.row_bytes;
  a.rows = 1;
  return true;
}

/* Makes a packed copy (packed_bytes()) of several rows one row: one linear
 * copy instead of a pitched one over the same bytes. Returns whether it
 * changed @c. */
inline bool
flatten_packed (Copy2D & c)
{
  const size_t n = packed_bytes (c);
  if (n == 0 || c.rows == 1)
    return false;
  c.row_bytes = n;
  c.src_stride = c.dst_stride = n;
  c.rows = 1;
  return true;
}

/* Calls @emit (const Copy2D &) for pieces of @c that together move exactly
 * what @c moves, none of whose source bytes lie on both sides of any of the
 * @n_seams addresses @seams (ascending): the rows wholly before a seam in
 * one piece, a row that crosses it cut there, the rest after. With no seam
 * inside the source, @c itself. Stops at the first @emit that does not
 * return @ok, and returns that; else @ok. */
template < typename Result, typename Emit > Result
split_copy_at_seams (const Copy2D & c, const uint8_t * const *seams,
    unsigned n_seams, Result ok, Emit emit)
{
  if (c.rows == 0 || c.row_bytes == 0)
    return ok;
  /* one row: its stride does not matter, and may be anything */
  const size_t stride = c.rows == 1 ? c.row_bytes : c.src_stride;
  const uintptr_t base = (uintptr_t) c.src;
  auto row_start =[&](size_t r)->uintptr_t {
    return base + r * stride;
  };
  /* whole rows [first, first + n) */
  auto rows_piece =[&](size_t first, size_t n)->Copy2D {
    Copy2D piece = c;
    piece.src = c.src + first * stride;
    piece.dst = c.dst + first * c.dst_stride;
    piece.rows = n;
    return piece;
  };
  size_t row = 0;               /* the first row not yet emitted */
  unsigned i = 0;
  while (row < c.rows && i < n_seams) {
    const uintptr_t seam = (uintptr_t) seams[i];
    if (seam <= row_start (row)) {
      i++;                      /* at or before what is left: no cut */
      continue;
    }
    if (seam >= row_start (c.rows - 1) + c.row_bytes)
      break;                    /* after the last byte: this and the rest */
    /* the rows that end at or before the seam */
    size_t end = row;
    if (row_start (row) + c.row_bytes <= seam) {
      end = (size_t) ((seam - base - c.row_bytes) / stride) + 1;
      if (end > c.rows)
        end = c.rows;
    }
    if (end > row) {
      Result r = emit ((const Copy2D &) rows_piece (row, end - row));
      if (r != ok)
        return r;
      row = end;
    }
    if (row < c.rows && row_start (row) < seam) {
      /* this row crosses the seam, and perhaps later ones: cut at each */
      const uintptr_t from_row = row_start (row);
      const uintptr_t row_end = from_row + c.row_bytes;
      uintptr_t from = from_row;
      bool last = false;
      while (!last) {
        uintptr_t to = row_end;
        if (i < n_seams && (uintptr_t) seams[i] < row_end)
          to = (uintptr_t) seams[i++];
        else
          last = true;
        if (to <= from)
          continue;
        Copy2D piece = c;
        piece.src = (const uint8_t *) from;
        piece.dst = c.dst + row * c.dst_stride + (from - from_row);
        piece.row_bytes = to - from;
        piece.rows = 1;
        Result r = emit ((const Copy2D &) piece);
        if (r != ok)
          return r;
        from = to;
      }
      row++;
    }
  }
  if (row == c.rows)
    return ok;
  return emit ((const Copy2D &) rows_piece (row, c.rows - row));
}

}                               /* namespace gst_zc */

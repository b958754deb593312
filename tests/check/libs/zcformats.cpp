/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The format table (kernels/zcformats.h) against GStreamer's own
 * description of each format (GstVideoFormatInfo, GstVideoInfo): planes,
 * rows, row bytes, subsampling, depth and the place of every component, at
 * odd sizes and with padded strides; and the caps every pad offers.
 */
#include <gst/check/gstcheck.h>
#include <gst/video/video.h>

#include "../../../gst/gstzcbasetransform.h"

#include <zcconvert.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

/* One row of the table, as the test reads it: the kinds by name, so that
 * the kernels' private header stays private */
struct Row
{
  const char *name;
  const char *kind;
  int bits, pstride, ws, hs;
  const char *wide10;
  int off[4];
};

#define ZC_TEST_ROW(name, kind, bits, pstride, ws, hs, wide10, o0, o1, o2, o3) \
  { #name, #kind, bits, pstride, ws, hs, #wide10, { o0, o1, o2, o3 } },
const Row kRows[] = { ZC_FORMATS (ZC_TEST_ROW, ZC_TEST_ROW) };
#undef ZC_TEST_ROW

const int kSizes[][2] = { {1, 1}, {2, 2}, {3, 7}, {33, 17}, {641, 361},
  {1920, 1080}
};

/* The first component GStreamer keeps in plane p (GStreamer 1.16 has no
 * gst_video_format_info_component()) */
int
component_in_plane (const GstVideoFormatInfo * finfo, int p)
{
  for (guint c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); c++)
    if ((int) GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) == p)
      return (int) c;
  return -1;
}

bool
is_packed_422 (const Row & r)
{
  return strcmp (r.kind, "kPacked422") == 0;
}

/* Bytes of a row of plane p that hold samples, as GStreamer lays them */
size_t
used_row_bytes (const Row & r, const GstVideoFormatInfo * finfo, int p,
    int width)
{
  if (is_packed_422 (r))        /* whole macropixels */
    return (size_t) GST_ROUND_UP_2 (width) * 2;
  /* (a semi-planar chroma plane: U's pixel stride covers the U-V pair) */
  int c = component_in_plane (finfo, p);
  size_t w = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH (finfo, c, width);
  return w * GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, c);
}

/* Which sample of a semi-planar chroma pair GStreamer's unpacking takes
 * for V: 0 or 1 */
int
semi_planar_v_sample (const GstVideoFormatInfo * finfo)
{
  const int sample = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, 1) / 2;
  guint8 y[8] = { 0 }, uv[8];
  memset (uv, 0x11, sample);    /* sample 0 */
  memset (uv + sample, 0xee, sample);   /* sample 1 */
  gpointer planes[GST_VIDEO_MAX_PLANES] = { y, uv };
  gint strides[GST_VIDEO_MAX_PLANES] = { 8, 8 };
  guint16 out[2 * 4] = { 0 };   /* AYUV or AYUV64, two pixels */
  finfo->unpack_func (finfo, GST_VIDEO_PACK_FLAG_NONE, out, planes, strides,
      0, 0, 2);
  guint v = finfo->unpack_format == GST_VIDEO_FORMAT_AYUV64 ? out[3] >> 8 :
      ((guint8 *) out)[3];
  return v == 0xee ? 1 : 0;
}

/* Checks the geometry of one frame layout: every plane of the table fits
 * GStreamer's plane, and the rows are GStreamer's rows */
void
check_layout (const Row & r, zc::PixFmt fmt, const GstVideoInfo * info,
    const char *what)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  const int w = GST_VIDEO_INFO_WIDTH (info), h = GST_VIDEO_INFO_HEIGHT (info);
  fail_unless_equals_int (zc::pixfmt_n_planes (fmt),
      (int) GST_VIDEO_INFO_N_PLANES (info));
  for (int p = 0; p < zc::pixfmt_n_planes (fmt); p++) {
    int c = component_in_plane (finfo, p);
    fail_unless (c >= 0, "%s %dx%d (%s): no component in plane %d",
        r.name, w, h, what, p);
    int rows = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (finfo, c, h);
    fail_unless (zc::pixfmt_plane_rows (fmt, p, h) == rows,
        "%s %dx%d (%s) plane %d: %d rows, GStreamer %d", r.name, w, h, what,
        p, zc::pixfmt_plane_rows (fmt, p, h), rows);
    size_t bytes = zc::pixfmt_plane_row_bytes (fmt, p, w);
    fail_unless (bytes == used_row_bytes (r, finfo, p, w),
        "%s %dx%d (%s) plane %d: %zu bytes a row, GStreamer %zu", r.name, w,
        h, what, p, bytes, used_row_bytes (r, finfo, p, w));
    size_t stride = (size_t) GST_VIDEO_INFO_PLANE_STRIDE (info, p);
    fail_unless (bytes <= stride, "%s %dx%d (%s) plane %d: %zu bytes a row "
        "over the stride %zu", r.name, w, h, what, p, bytes, stride);
    /* the plane's last row ends inside the frame, before the next plane */
    size_t end = GST_VIDEO_INFO_PLANE_OFFSET (info, p) + stride * (rows - 1)
        + bytes;
    size_t limit = p + 1 < (int) GST_VIDEO_INFO_N_PLANES (info) ?
        GST_VIDEO_INFO_PLANE_OFFSET (info, p + 1) : GST_VIDEO_INFO_SIZE (info);
    fail_unless (end <= limit, "%s %dx%d (%s) plane %d ends at %zu, past %zu",
        r.name, w, h, what, p, end, limit);
  }
}

}                               /* namespace */

GST_START_TEST (test_table_names_are_gstreamer_formats_in_order)
{
  fail_unless_equals_int ((int) G_N_ELEMENTS (kRows), zc::kNumPixFmts);
  fail_unless_equals_int (zc::kNumPixFmts, 22);
  for (int i = 0; i < zc::kNumPixFmts; i++) {
    fail_unless_equals_string (zc::pixfmt_name ((zc::PixFmt) i),
        kRows[i].name);
    fail_unless (gst_video_format_from_string (kRows[i].name) !=
        GST_VIDEO_FORMAT_UNKNOWN, "%s is no GStreamer format", kRows[i].name);
  }
}

GST_END_TEST;

GST_START_TEST (test_pad_caps_offer_every_format_of_the_table)
{
  GstCaps *caps = gst_caps_from_string (GST_VIDEO_CAPS_MAKE (GST_ZC_FORMATS));
  fail_unless (caps != NULL, "GST_ZC_FORMATS does not parse: %s",
      GST_ZC_FORMATS);
  const GValue *list =
      gst_structure_get_value (gst_caps_get_structure (caps, 0), "format");
  fail_unless (list && GST_VALUE_HOLDS_LIST (list));
  fail_unless_equals_int ((int) gst_value_list_get_size (list),
      zc::kNumPixFmts);
  for (int i = 0; i < zc::kNumPixFmts; i++) {
    fail_unless_equals_string (g_value_get_string (gst_value_list_get_value
            (list, i)), kRows[i].name);
  }
  gst_caps_unref (caps);
}

GST_END_TEST;

GST_START_TEST (test_each_format_describes_its_pixels_as_gstreamer)
{
  for (int i = 0; i < zc::kNumPixFmts; i++) {
    const Row & r = kRows[i];
    const GstVideoFormatInfo *finfo =
        gst_video_format_get_info (gst_video_format_from_string (r.name));
    const bool yuv = GST_VIDEO_FORMAT_INFO_IS_YUV (finfo);
    const bool rgb = GST_VIDEO_FORMAT_INFO_IS_RGB (finfo);
    const int depth = GST_VIDEO_FORMAT_INFO_DEPTH (finfo, 0);

    /* depth: samples unpack to 8 bits, or to 16 for 10 and 16 */
    fail_unless_equals_int (r.bits, depth > 8 ? 16 : 8);
    if (depth == 10) {
      /* P010 keeps the bits at the top of the word, I420_10LE at the
       * bottom */
      const char *want = GST_VIDEO_FORMAT_INFO_SHIFT (finfo, 0) ? "k10Msb" :
          "k10Lsb";
      fail_unless_equals_string (r.wide10, want);
    } else {
      fail_unless_equals_string (r.wide10, "kNot10");
    }

    /* subsampling of the chroma (component 1) */
    if (yuv) {
      fail_unless_equals_int (r.ws, GST_VIDEO_FORMAT_INFO_W_SUB (finfo, 1));
      fail_unless_equals_int (r.hs, GST_VIDEO_FORMAT_INFO_H_SUB (finfo, 1));
    } else {
      fail_unless (r.ws == 0 && r.hs == 0, "%s: subsampled", r.name);
    }

    /* bytes a pixel (or a sample) of the first plane */
    fail_unless_equals_int (r.pstride, GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo,
            0));

    /* where each component is */
    if (strcmp (r.kind, "kPackedRgb") == 0) {
      fail_unless (rgb, "%s: not R'G'B'", r.name);
      for (int c = 0; c < 3; c++)
        fail_unless_equals_int (r.off[c], GST_VIDEO_FORMAT_INFO_POFFSET (finfo,
                c));
      if (GST_VIDEO_FORMAT_INFO_HAS_ALPHA (finfo)) {
        fail_unless_equals_int (r.off[3], GST_VIDEO_FORMAT_INFO_POFFSET (finfo,
                3));
      } else if (r.pstride == 4) {
        /* the x byte: the one no colour component takes */
        fail_unless_equals_int (r.off[3], 6 - r.off[0] - r.off[1] - r.off[2]);
      } else {
        fail_unless_equals_int (r.off[3], -1);
      }
    } else if (strcmp (r.kind, "kGray") == 0) {
      fail_unless (GST_VIDEO_FORMAT_INFO_IS_GRAY (finfo), "%s: not GRAY",
          r.name);
    } else if (strcmp (r.kind, "kPlanarYuv") == 0) {
      fail_unless (yuv && GST_VIDEO_FORMAT_INFO_N_PLANES (finfo) == 3,
          "%s: not planar Y'CbCr", r.name);
      /* off[1], off[2]: the planes of U and V */
      fail_unless_equals_int (r.off[1], GST_VIDEO_FORMAT_INFO_PLANE (finfo,
              1));
      fail_unless_equals_int (r.off[2], GST_VIDEO_FORMAT_INFO_PLANE (finfo,
              2));
    } else if (strcmp (r.kind, "kSemiYuv") == 0) {
      fail_unless (yuv && GST_VIDEO_FORMAT_INFO_N_PLANES (finfo) == 2,
          "%s: not semi-planar Y'CbCr", r.name);
      /* off[1], off[2]: the sample of U and V in a chroma pair, as
       * GStreamer's own unpacking reads them (its poffset says 1 for
       * P010's V, a byte count that would split a 16-bit sample) */
      fail_unless_equals_int (r.off[1], 1 - semi_planar_v_sample (finfo));
      fail_unless_equals_int (r.off[2], semi_planar_v_sample (finfo));
    } else if (is_packed_422 (r)) {
      fail_unless (yuv && GST_VIDEO_FORMAT_INFO_N_PLANES (finfo) == 1,
          "%s: not packed Y'CbCr", r.name);
      /* off[]: Y0, U, Y1, V in a macropixel */
      fail_unless_equals_int (r.off[0], GST_VIDEO_FORMAT_INFO_POFFSET (finfo,
              0));
      fail_unless_equals_int (r.off[1], GST_VIDEO_FORMAT_INFO_POFFSET (finfo,
              1));
      fail_unless_equals_int (r.off[3], GST_VIDEO_FORMAT_INFO_POFFSET (finfo,
              2));
      fail_unless_equals_int (r.off[2], r.off[0] + 2);
    } else {
      fail ("%s: unknown kind %s", r.name, r.kind);
    }
  }
}

GST_END_TEST;

GST_START_TEST (test_planes_fit_gstreamer_layouts_at_odd_sizes_and_padding)
{
  for (int i = 0; i < zc::kNumPixFmts; i++) {
    const Row & r = kRows[i];
    const GstVideoFormat f = gst_video_format_from_string (r.name);
    for (const auto & s:kSizes) {
      GstVideoInfo info;
      fail_unless (gst_video_info_set_format (&info, f, s[0], s[1]));
      check_layout (r, (zc::PixFmt) i, &info, "default strides");

      /* padded: 64-byte strides and a border, as a pool that pitches rows
       * for the GPU lays them out */
      GstVideoAlignment align;
      gst_video_alignment_reset (&align);
      align.padding_right = 6;
      align.padding_bottom = 4;
      for (guint p = 0; p < GST_VIDEO_MAX_PLANES; p++)
        align.stride_align[p] = 63;
      fail_unless (gst_video_info_set_format (&info, f, s[0], s[1]));
      fail_unless (gst_video_info_align (&info, &align));
      /* the padded frame seen at its visible size */
      info.width = s[0];
      info.height = s[1];
      check_layout (r, (zc::PixFmt) i, &info, "padded strides");
      for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&info); p++)
        fail_unless (GST_VIDEO_INFO_PLANE_STRIDE (&info, p) % 64 == 0);
    }
  }
}

GST_END_TEST;

static Suite *
zcformats_suite (void)
{
  Suite *s = suite_create ("zcformats");
  TCase *tc = tcase_create ("table");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_table_names_are_gstreamer_formats_in_order);
  tcase_add_test (tc, test_pad_caps_offer_every_format_of_the_table);
  tcase_add_test (tc, test_each_format_describes_its_pixels_as_gstreamer);
  tcase_add_test (tc,
      test_planes_fit_gstreamer_layouts_at_odd_sizes_and_padding);
  return s;
}

GST_CHECK_MAIN (zcformats);

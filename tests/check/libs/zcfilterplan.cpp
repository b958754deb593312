/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * zcfilter's frame plan without a pipeline: what one frame needs for a
 * snapshot of the settings and the negotiated caps and geometry, and the
 * caps fixation, as a user would see them in the negotiated caps.
 */
#include <gst/check/gstcheck.h>

#include "../../../gst/zcfilterplan.h"

using zcfilter::FramePlan;
using zcfilter::FramePlanner;
using zcfilter::Geometry;
using zcfilter::Pass;
using zcfilter::Settings;

static GstVideoInfo
info_of (GstVideoFormat f, gint w, gint h)
{
  GstVideoInfo i;
  gst_video_info_set_format (&i, f, w, h);
  return i;
}

static FramePlan
plan_for (FramePlanner & p, const Settings & s)
{
  FramePlan plan;
  std::string err;
  fail_unless (p.plan (s, NULL, &plan, &err), "%s", err.c_str ());
  return plan;
}

GST_START_TEST (test_plan_identity_on_equal_caps_without_effects)
{
  GstVideoInfo i = info_of (GST_VIDEO_FORMAT_RGBA, 64, 48);
  FramePlanner p;
  std::string err;
  fail_unless (p.configure (&i, &i, Geometry (), GST_ZC_FILTER_METHOD_BILINEAR,
          &err), "%s", err.c_str ());
  Settings s;
  fail_unless (s.is_identity ());
  fail_unless (plan_for (p, s).pass == Pass::IDENTITY);
}

GST_END_TEST;

GST_START_TEST (test_plan_invert_is_a_table_and_blur_a_spatial_pass)
{
  GstVideoInfo i = info_of (GST_VIDEO_FORMAT_RGBA, 64, 48);
  FramePlanner p;
  std::string err;
  fail_unless (p.configure (&i, &i, Geometry (), GST_ZC_FILTER_METHOD_BILINEAR,
          &err));
  Settings s;
  s.invert = TRUE;
  FramePlan plan = plan_for (p, s);
  fail_unless (plan.pass == Pass::LUT);
  fail_unless_equals_int (p.n_lut_planes (), 1);
  /* the table of an invert: 255 - v on R, G, B; alpha kept */
  fail_unless_equals_int (p.luts ()[0].lut[0][10], 245);
  fail_unless_equals_int (p.luts ()[0].lut[3][10], 10);

  s.blur_sigma = 2.0;
  plan = plan_for (p, s);
  fail_unless (plan.pass == Pass::CONVERT);
  fail_unless (plan.spatial && plan.convert);

  s.invert = FALSE;
  plan = plan_for (p, s);
  fail_unless (plan.pass == Pass::CONVERT);
  fail_unless (plan.spatial && !plan.convert,
      "equal caps and only a blur: no conversion pass");
}

GST_END_TEST;

GST_START_TEST (test_plan_uses_negotiated_geometry_not_live_settings)
{
  GstVideoInfo in = info_of (GST_VIDEO_FORMAT_RGBA, 320, 240);
  GstVideoInfo out = info_of (GST_VIDEO_FORMAT_RGBA, 280, 220);
  Geometry g;
  g.crop_left = 40;
  g.crop_top = 20;
  FramePlanner p;
  std::string err;
  fail_unless (p.configure (&in, &out, g, GST_ZC_FILTER_METHOD_BILINEAR,
          &err));
  /* the settings say no crop (changed since negotiation): the frame still
   * gets the crop its caps were made for */
  Settings s;
  FramePlan plan = plan_for (p, s);
  fail_unless (plan.pass == Pass::CONVERT);
  fail_unless_equals_int (plan.cp.crop_left, 40);
  fail_unless_equals_int (plan.cp.crop_top, 20);
  fail_unless_equals_int (plan.cp.dst_w, 0);
}

GST_END_TEST;

GST_START_TEST (test_plan_refuses_crop_meta_plus_margins_leaving_nothing)
{
  GstVideoInfo i = info_of (GST_VIDEO_FORMAT_NV12, 64, 48);
  Geometry g;
  g.crop_left = 30;
  FramePlanner p;
  std::string err;
  GstVideoInfo o = info_of (GST_VIDEO_FORMAT_NV12, 34, 48);
  fail_unless (p.configure (&i, &o, g, GST_ZC_FILTER_METHOD_BILINEAR, &err));
  GstVideoCropMeta meta;
  memset (&meta, 0, sizeof (meta));
  meta.x = 40;
  meta.y = 0;
  meta.width = 24;
  meta.height = 48;
  FramePlan plan;
  fail_if (p.plan (Settings (), &meta, &plan, &err));
  fail_unless (g_strstr_len (err.c_str (), -1, "Crop leaves no picture"),
      "%s", err.c_str ());
}

GST_END_TEST;

GST_START_TEST (test_plan_names_the_shrink_limit)
{
  GstVideoInfo in = info_of (GST_VIDEO_FORMAT_RGBA, 1920, 1080);
  GstVideoInfo out = info_of (GST_VIDEO_FORMAT_RGBA, 16, 9);
  FramePlanner p;
  std::string err;
  fail_if (p.configure (&in, &out, Geometry (), GST_ZC_FILTER_METHOD_BICUBIC,
          &err));
  fail_unless (g_strstr_len (err.c_str (), -1, "at most 64 times"), "%s",
      err.c_str ());
  fail_unless (g_strstr_len (err.c_str (), -1, "method=nearest-neighbour"),
      "%s", err.c_str ());
  fail_unless (p.configure (&in, &out, Geometry (),
          GST_ZC_FILTER_METHOD_NEAREST, &err), "%s", err.c_str ());
}

GST_END_TEST;

/* Fixation of @outcaps from @incaps (sink to src) */
static GstStructure *
fixate (const gchar * incaps, const gchar * outcaps, const Geometry & g =
    Geometry ())
{
  GstCaps *ic = gst_caps_from_string (incaps);
  GstCaps *oc = gst_caps_from_string (outcaps);
  GstStructure *ins = gst_caps_get_structure (ic, 0);
  GstStructure *outs = gst_structure_copy (gst_caps_get_structure (oc, 0));
  zcfilter::fixate_format (ins, outs);
  zcfilter::fixate_size (g, GST_PAD_SINK, ins, outs);
  gst_caps_unref (ic);
  gst_caps_unref (oc);
  return outs;
}

GST_START_TEST (test_fixation_keeps_display_aspect_ratio)
{
  gint w, h, n, d;
  /* a height range and a free pixel aspect ratio: the width stays and the
   * pixels stretch, as videoscale does */
  GstStructure *s = fixate ("video/x-raw,width=640,height=480",
      "video/x-raw,width=[1,2147483647],height=[100,200]");
  fail_unless (gst_structure_get_int (s, "width", &w) &&
      gst_structure_get_int (s, "height", &h) &&
      gst_structure_get_fraction (s, "pixel-aspect-ratio", &n, &d));
  fail_unless_equals_int (w, 640);
  fail_unless_equals_int (h, 200);
  fail_unless (n == 5 && d == 12, "par %d/%d", n, d);
  gst_structure_free (s);

  /* square pixels asked for: the width follows the height fixated */
  s = fixate ("video/x-raw,width=640,height=480",
      "video/x-raw,width=[1,2147483647],height=[100,200],"
      "pixel-aspect-ratio=1/1");
  gst_structure_get_int (s, "width", &w);
  gst_structure_get_int (s, "height", &h);
  fail_unless_equals_int (h, 200);
  fail_unless_equals_int (w, 267);
  gst_structure_free (s);

  /* rotated by 90 degrees: the shape of the rotated picture */
  Geometry g;
  g.direction = GST_VIDEO_ORIENTATION_90R;
  s = fixate ("video/x-raw,width=640,height=480",
      "video/x-raw,width=[1,2147483647],height=[1,2147483647],"
      "pixel-aspect-ratio=1/1", g);
  gst_structure_get_int (s, "width", &w);
  gst_structure_get_int (s, "height", &h);
  fail_unless_equals_int (w, 480);
  fail_unless_equals_int (h, 640);
  gst_structure_free (s);
}

GST_END_TEST;

GST_START_TEST (test_fixation_picks_the_closest_format)
{
  struct
  {
    const gchar *in, *list, *want;
  } cases[] = {
    {"NV12", "{RGBA,I420}", "I420"},
    {"I420", "{RGBA,BGRx,NV12}", "NV12"},
    {"RGBA", "{NV12,BGRx}", "BGRx"},
    {"GRAY8", "{I420,RGBA}", "RGBA"},
    {"RGBA", "{GRAY8,I420}", "I420"},
  };
  for (auto & c:cases) {
    gchar *ic = g_strdup_printf ("video/x-raw,format=%s,width=64,height=48",
        c.in);
    gchar *oc = g_strdup_printf ("video/x-raw,format=%s,width=64,height=48",
        c.list);
    GstStructure *s = fixate (ic, oc);
    fail_unless_equals_string (gst_structure_get_string (s, "format"), c.want);
    gst_structure_free (s);
    g_free (ic);
    g_free (oc);
  }
}

GST_END_TEST;

static Suite *
zcfilterplan_suite (void)
{
  Suite *s = suite_create ("zcfilterplan");
  TCase *tc = tcase_create ("general");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_plan_identity_on_equal_caps_without_effects);
  tcase_add_test (tc, test_plan_invert_is_a_table_and_blur_a_spatial_pass);
  tcase_add_test (tc, test_plan_uses_negotiated_geometry_not_live_settings);
  tcase_add_test (tc, test_plan_refuses_crop_meta_plus_margins_leaving_nothing);
  tcase_add_test (tc, test_plan_names_the_shrink_limit);
  tcase_add_test (tc, test_fixation_keeps_display_aspect_ratio);
  tcase_add_test (tc, test_fixation_picks_the_closest_format);
  return s;
}

GST_CHECK_MAIN (zcfilterplan);

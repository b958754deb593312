/* gst-zerocopy: zcfilter
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Bit-exact against the CPU reference (zc::build_point_lut) for every
 * setting, format and a few sizes, on whichever backend "auto" picks here.
 */
#include "../zccheck.h"

GST_START_TEST (test_filter_matches_cpu_reference)
{
  /* __i__: the setting (loop test) */
  zc_test_filter_setting_all_formats ((guint) __i__, NULL);
}

GST_END_TEST;

/* Luma through the LUT, chroma kept, or inverted with invert */
static void
check_yuv_planes (GstVideoFormat format, const ZcFilterSetting & s)
{
  const gint w = 64, h = 36;
  gchar *desc = g_strdup_printf ("zcupload ! zcfilter brightness=%g "
      "contrast=%g gamma=%g invert=%s", s.brightness, s.contrast, s.gamma,
      s.invert ? "true" : "false");
  GstHarness *hr = gst_harness_new_parse (desc);
  g_free (desc);
  gst_harness_set_src_caps (hr, zc_test_raw_caps (format, w, h));
  GstVideoInfo info;
  gst_video_info_set_format (&info, format, w, h);
  GstBuffer *in = gst_buffer_new_allocate (NULL, info.size, NULL);
  /* A ramp, so every luma value is there and the LUT visibly changes it */
  GstVideoFrame fin;
  fail_unless (gst_video_frame_map (&fin, &info, in, GST_MAP_WRITE));
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&fin); p++) {
    gsize row_bytes;
    guint rows;
    zc_test_plane_geometry (&info, p, &row_bytes, &rows);
    guint8 *d = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fin, p);
    for (guint y = 0; y < rows; y++)
      for (gsize x = 0; x < row_bytes; x++)
        d[y * GST_VIDEO_FRAME_PLANE_STRIDE (&fin, p) + x] =
            (guint8) (y * row_bytes + x + 40 * p);
  }
  gst_video_frame_unmap (&fin);

  fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in)),
      GST_FLOW_OK);
  GstBuffer *out = gst_harness_try_pull (hr);
  fail_unless (out != NULL);
  GstCaps *oc = gst_pad_get_current_caps (hr->sinkpad);
  GstVideoInfo oinfo;
  gst_video_info_from_caps (&oinfo, oc);
  gst_caps_unref (oc);

  guint8 lut[256], chroma[256];
  zc_test_filter_luts (s, lut, chroma);
  GstVideoFrame fout;
  fail_unless (gst_video_frame_map (&fin, &info, in, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fout, &oinfo, out, GST_MAP_READ));
  std::string diff = zc_test_compare_frames (&fin, &fout, lut, chroma,
      s.name);
  /* and the luma did change: the reference is not the identity here */
  gboolean luma_changed = FALSE;
  const guint8 *yin = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fin, 0);
  const guint8 *yout = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fout, 0);
  for (gint x = 0; x < w; x++)
    luma_changed |= yin[x] != yout[x];
  gst_video_frame_unmap (&fout);
  gst_video_frame_unmap (&fin);
  fail_unless (diff.empty (), "%s", diff.c_str ());
  fail_unless (luma_changed, "%s: luma untouched",
      gst_video_format_to_string (format));

  gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_harness_teardown (hr);
}

GST_START_TEST (test_filter_nv12_i420_planes)
{
  const ZcFilterSetting bright = { "brightness0.2", 0.2, 1.0, 1.0, FALSE };
  const ZcFilterSetting gamma = { "gamma2+contrast1.5", 0.0, 1.5, 2.0, FALSE };
  const ZcFilterSetting inv = { "invert", 0.0, 1.0, 1.0, TRUE };
  const ZcFilterSetting mix = { "brightness-0.1+invert", -0.1, 1.0, 1.0, TRUE };
  const GstVideoFormat fmts[] = { GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420 };
  for (GstVideoFormat f:fmts) {
    check_yuv_planes (f, bright);
    check_yuv_planes (f, gamma);
    check_yuv_planes (f, inv);
    check_yuv_planes (f, mix);
  }
}

GST_END_TEST;

/* Records the buffers that reach zcfilter's sink pad */
static GstPadProbeReturn
remember_buffer (GstPad *, GstPadProbeInfo * info, gpointer user_data)
{
  auto *seen = (std::vector < GstBuffer * >*)user_data;
  seen->push_back (GST_PAD_PROBE_INFO_BUFFER (info));
  return GST_PAD_PROBE_OK;
}

GST_START_TEST (test_filter_passthrough_when_default)
{
  const GstVideoFormat fmts[] = { GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12,
    GST_VIDEO_FORMAT_GRAY8
  };
  for (GstVideoFormat fmt:fmts) {
    GstHarness *hr = gst_harness_new_parse ("zcupload ! zcfilter name=f");
    GstElement *f = gst_harness_find_element (hr, "zcfilter");
    GstPad *fsink = gst_element_get_static_pad (f, "sink");
    std::vector < GstBuffer * >seen;
    gst_pad_add_probe (fsink, GST_PAD_PROBE_TYPE_BUFFER, remember_buffer,
        &seen, NULL);
    gst_harness_set_src_caps (hr, zc_test_raw_caps (fmt, 33, 17));
    GstVideoInfo info;
    gst_video_info_set_format (&info, fmt, 33, 17);

    for (int i = 0; i < 3; i++) {
      GstBuffer *in = gst_buffer_new_allocate (NULL, info.size, NULL);
      zc_test_fill_random (in, 99 + i);
      fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in)),
          GST_FLOW_OK);
      GstBuffer *out = gst_harness_try_pull (hr);
      fail_unless (out != NULL);
      fail_unless_equals_int (seen.size (), i + 1);
      /* The very buffer zcupload produced, untouched */
      fail_unless (gst_buffer_peek_memory (out, 0) ==
          gst_buffer_peek_memory (seen.back (), 0),
          "%s: zcfilter with default properties did not pass the buffer "
          "through", gst_video_format_to_string (fmt));
      GstCaps *oc = gst_pad_get_current_caps (hr->sinkpad);
      GstVideoInfo oinfo;
      gst_video_info_from_caps (&oinfo, oc);
      gst_caps_unref (oc);
      GstVideoFrame fin, fout;
      fail_unless (gst_video_frame_map (&fin, &info, in, GST_MAP_READ));
      fail_unless (gst_video_frame_map (&fout, &oinfo, out, GST_MAP_READ));
      std::string diff = zc_test_compare_identical (&fin, &fout, "default");
      gst_video_frame_unmap (&fout);
      gst_video_frame_unmap (&fin);
      fail_unless (diff.empty (), "%s", diff.c_str ());
      gst_buffer_unref (out);
      gst_buffer_unref (in);
    }
    fail_unless (gst_base_transform_is_passthrough (GST_BASE_TRANSFORM (f)));
    fail_unless_equals_uint64 (zc_test_stat (f, "copied-buffers"), 0);
    fail_unless_equals_uint64 (zc_test_stat (f, "bytes-copied"), 0);
    gst_object_unref (fsink);
    gst_object_unref (f);
    gst_harness_teardown (hr);
  }
}

GST_END_TEST;

GST_START_TEST (test_filter_property_change_applies_to_next_frame)
{
  GstHarness *hr = gst_harness_new_parse ("zcupload ! zcfilter name=f");
  GstElement *f = gst_harness_find_element (hr, "zcfilter");
  gst_harness_set_src_caps (hr, zc_test_raw_caps (GST_VIDEO_FORMAT_BGRA, 16,
          16));
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_BGRA, 16, 16);
  const ZcFilterSetting steps[] = {
    {"default", 0.0, 1.0, 1.0, FALSE},
    {"invert", 0.0, 1.0, 1.0, TRUE},
    {"invert+gamma", 0.0, 1.0, 1.7, TRUE},
    {"default again", 0.0, 1.0, 1.0, FALSE},
  };
  for (const ZcFilterSetting & s:steps) {
    g_object_set (f, "brightness", s.brightness, "contrast", s.contrast,
        "gamma", s.gamma, "invert", s.invert, NULL);
    GstBuffer *in = gst_buffer_new_allocate (NULL, info.size, NULL);
    zc_test_fill_random (in, 5);
    fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in)),
        GST_FLOW_OK);
    GstBuffer *out = gst_harness_try_pull (hr);
    fail_unless (out != NULL);
    guint8 lut[256], chroma[256];
    zc_test_filter_luts (s, lut, chroma);
    GstCaps *oc = gst_pad_get_current_caps (hr->sinkpad);
    GstVideoInfo oinfo;
    gst_video_info_from_caps (&oinfo, oc);
    gst_caps_unref (oc);
    GstVideoFrame fin, fout;
    fail_unless (gst_video_frame_map (&fin, &info, in, GST_MAP_READ));
    fail_unless (gst_video_frame_map (&fout, &oinfo, out, GST_MAP_READ));
    std::string diff = zc_test_compare_frames (&fin, &fout, lut, chroma,
        s.name);
    gst_video_frame_unmap (&fout);
    gst_video_frame_unmap (&fin);
    fail_unless (diff.empty (), "%s", diff.c_str ());
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }
  gst_object_unref (f);
  gst_harness_teardown (hr);
}

GST_END_TEST;

GST_START_TEST (test_filter_properties_have_documented_ranges)
{
  GstElement *e = gst_element_factory_make ("zcfilter", NULL);
  fail_unless (e != NULL);
  GObjectClass *k = G_OBJECT_GET_CLASS (e);
  struct
  {
    const gchar *name;
    gdouble min, max, def;
  } doubles[] = {
    {"brightness", -1.0, 1.0, 0.0},
    {"contrast", 0.0, 4.0, 1.0},
    {"gamma", 0.01, 10.0, 1.0},
  };
  for (auto & d:doubles) {
    GParamSpec *ps = g_object_class_find_property (k, d.name);
    fail_unless (ps != NULL && G_IS_PARAM_SPEC_DOUBLE (ps), "no %s", d.name);
    auto *pd = G_PARAM_SPEC_DOUBLE (ps);
    fail_unless (pd->minimum == d.min && pd->maximum == d.max &&
        pd->default_value == d.def, "%s: [%g, %g] default %g", d.name,
        pd->minimum, pd->maximum, pd->default_value);
    fail_unless (ps->flags & G_PARAM_WRITABLE);
  }
  GParamSpec *ps = g_object_class_find_property (k, "invert");
  fail_unless (ps != NULL && G_IS_PARAM_SPEC_BOOLEAN (ps));
  fail_if (G_PARAM_SPEC_BOOLEAN (ps)->default_value);

  g_object_set (e, "brightness", -0.25, "contrast", 3.5, "gamma", 0.5,
      "invert", TRUE, NULL);
  gdouble b, c, g;
  gboolean inv;
  g_object_get (e, "brightness", &b, "contrast", &c, "gamma", &g, "invert",
      &inv, NULL);
  fail_unless (b == -0.25 && c == 3.5 && g == 0.5 && inv);
  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_filter_same_caps_in_and_out)
{
  GstHarness *hr = gst_harness_new_parse ("zcupload ! zcfilter invert=true");
  GstCaps *in_caps = zc_test_raw_caps (GST_VIDEO_FORMAT_xRGB, 20, 10);
  gst_harness_set_src_caps (hr, gst_caps_ref (in_caps));
  GstVideoInfo info;
  gst_video_info_from_caps (&info, in_caps);
  gst_harness_push (hr, gst_buffer_new_allocate (NULL, info.size, NULL));
  GstBuffer *out = gst_harness_try_pull (hr);
  fail_unless (out != NULL);
  GstCaps *oc = gst_pad_get_current_caps (hr->sinkpad);
  GstCaps *want = zc_test_raw_caps (GST_VIDEO_FORMAT_xRGB, 20, 10,
      GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY);
  fail_unless (gst_caps_is_equal_fixed (oc, want) || gst_caps_is_subset (oc,
          want), "output caps %" GST_PTR_FORMAT, oc);
  gst_caps_unref (want);
  gst_caps_unref (oc);
  gst_caps_unref (in_caps);
  gst_buffer_unref (out);
  gst_harness_teardown (hr);
}

GST_END_TEST;

static Suite *
zcfilter_suite (void)
{
  Suite *s = suite_create ("zcfilter");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  /* 1921x1081 frames of 11 formats per setting, on 2 cores */
  tcase_set_timeout (tc, 600);
  tcase_add_loop_test (tc, test_filter_matches_cpu_reference, 0,
      ZC_N_FILTER_SETTINGS);
  tcase_add_test (tc, test_filter_nv12_i420_planes);
  tcase_add_test (tc, test_filter_passthrough_when_default);
  tcase_add_test (tc, test_filter_property_change_applies_to_next_frame);
  tcase_add_test (tc, test_filter_properties_have_documented_ranges);
  tcase_add_test (tc, test_filter_same_caps_in_and_out);
  return s;
}

GST_CHECK_MAIN (zcfilter);

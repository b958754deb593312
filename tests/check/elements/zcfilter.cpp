/* gst-zerocopy: zcfilter
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Bit-exact against the CPU reference (zc::convert_cpu_reference: the
 * per-pixel code the CUDA kernel shares; the CPU backend's fast routes must
 * match it) for every effect setting, format and a few sizes, on whichever
 * backend "auto" picks here; conversion, scaling, crop and orientation as a
 * user sees them (caps, sizes, pixels); passthrough.
 * tests/check/elements/zcfilter-compare.cpp compares with GStreamer's own
 * elements.
 */
#include "../zccheck.h"

#include <zcspatial.h>

GST_START_TEST (test_filter_matches_cpu_reference)
{
  /* __i__: the setting (loop test) */
  zc_test_filter_setting_all_formats ((guint) __i__, NULL);
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
    GstCaps *oc = gst_pad_get_current_caps (hr->sinkpad);
    GstVideoInfo oinfo;
    gst_video_info_from_caps (&oinfo, oc);
    gst_caps_unref (oc);
    GstVideoFrame fin, fout;
    fail_unless (gst_video_frame_map (&fin, &info, in, GST_MAP_READ));
    fail_unless (gst_video_frame_map (&fout, &oinfo, out, GST_MAP_READ));
    std::string diff = zc_test_check_filter_output (s, &fin, &fout, s.name);
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
    {"contrast", 0.0, 2.0, 1.0},
    {"saturation", 0.0, 2.0, 1.0},
    {"hue", -1.0, 1.0, 0.0},
    {"gamma", 0.01, 10.0, 1.0},
    {"blur-sigma", 0.0, 16.0, 0.0},
    {"sharpen", 0.0, 8.0, 0.0},
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
  for (const gchar * name: { "invert", "grayscale", "edges" }) {
    GParamSpec *ps = g_object_class_find_property (k, name);
    fail_unless (ps != NULL && G_IS_PARAM_SPEC_BOOLEAN (ps), "no %s", name);
    fail_if (G_PARAM_SPEC_BOOLEAN (ps)->default_value, "%s", name);
  }
  GParamSpec *ab = g_object_class_find_property (k, "add-borders");
  fail_unless (ab && G_PARAM_SPEC_BOOLEAN (ab)->default_value);
  for (const gchar * name: { "crop-left", "crop-right", "crop-top",
        "crop-bottom" }) {
    GParamSpec *ps = g_object_class_find_property (k, name);
    fail_unless (ps != NULL && G_IS_PARAM_SPEC_INT (ps), "no %s", name);
    fail_unless (G_PARAM_SPEC_INT (ps)->minimum == 0 &&
        G_PARAM_SPEC_INT (ps)->default_value == 0, "%s", name);
  }
  /* videoscale's default method, videoflip's interface */
  GParamSpec *m = g_object_class_find_property (k, "method");
  fail_unless (m && G_IS_PARAM_SPEC_ENUM (m));
  GEnumValue *def = g_enum_get_value (G_PARAM_SPEC_ENUM (m)->enum_class,
      G_PARAM_SPEC_ENUM (m)->default_value);
  fail_unless_equals_string (def->value_nick, "bilinear");
  for (const gchar * nick: { "nearest-neighbour", "bilinear", "bicubic" })
    fail_unless (g_enum_get_value_by_nick (G_PARAM_SPEC_ENUM (m)->enum_class,
            nick) != NULL, "method %s", nick);
  fail_unless (GST_IS_VIDEO_DIRECTION (e));
  fail_unless (g_object_class_find_property (k, "video-direction") != NULL);

  g_object_set (e, "brightness", -0.25, "contrast", 1.5, "gamma", 0.5,
      "invert", TRUE, NULL);
  gdouble b, c, g;
  gboolean inv;
  g_object_get (e, "brightness", &b, "contrast", &c, "gamma", &g, "invert",
      &inv, NULL);
  fail_unless (b == -0.25 && c == 1.5 && g == 0.5 && inv);
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

/* One random frame of @in_fmt @w x @h through "zcupload ! zcfilter @props !
 * capsfilter @out_caps"; returns the output (NULL and a message in @err on
 * failure) with its caps' info in @out_info, the input in @in. */
static GstBuffer *
run_one_frame (GstVideoFormat in_fmt, gint w, gint h, const gchar * props,
    const gchar * out_caps, GstBuffer ** in, GstVideoInfo * in_info,
    GstVideoInfo * out_info, GstElement ** filter = NULL)
{
  gchar *desc = g_strdup_printf ("zcupload ! zcfilter name=f %s ! "
      "capsfilter caps=\"%s\"", props, out_caps ? out_caps :
      "video/x-raw(memory:CUDAZeroCopy)");
  GstHarness *hr = gst_harness_new_parse (desc);
  g_free (desc);
  gst_harness_set_src_caps (hr, zc_test_raw_caps (in_fmt, w, h));
  gst_video_info_set_format (in_info, in_fmt, w, h);
  *in = gst_buffer_new_allocate (NULL, in_info->size, NULL);
  zc_test_fill_random (*in, 7u * w + h);
  GstBuffer *out = NULL;
  if (gst_harness_push (hr, gst_buffer_ref (*in)) == GST_FLOW_OK)
    out = gst_harness_try_pull (hr);
  if (out) {
    GstCaps *oc = gst_pad_get_current_caps (hr->sinkpad);
    fail_unless (oc && gst_video_info_from_caps (out_info, oc));
    gst_caps_unref (oc);
  }
  if (filter)
    *filter = gst_harness_find_element (hr, "zcfilter");
  gst_harness_teardown (hr);
  return out;
}

/* The CPU reference for @p on @in, in the layout of @out_info */
static std::string
compare_with_reference (GstBuffer * in, const GstVideoInfo * in_info,
    GstBuffer * out, const GstVideoInfo * out_info,
    const zc::ConvertParams & p, const gchar * what)
{
  GstBuffer *exp = gst_buffer_new_allocate (NULL, out_info->size, NULL);
  GstVideoFrame fin, fout, fexp;
  fail_unless (zc_test_frame_map (&fin, in_info, in, GST_MAP_READ));
  fail_unless (zc_test_frame_map (&fout, out_info, out, GST_MAP_READ));
  fail_unless (zc_test_frame_map (&fexp, out_info, exp, GST_MAP_WRITE));
  zc::FrameDesc sd, dd;
  fail_unless (zc_test_frame_desc (&fin, &sd) &&
      zc_test_frame_desc (&fexp, &dd));
  fail_unless (zc::convert_cpu_reference (sd, dd, p, 1),
      "%s: reference refused", what);
  std::string diff = zc_test_compare_identical (&fexp, &fout, what);
  gst_video_frame_unmap (&fexp);
  gst_video_frame_unmap (&fout);
  gst_video_frame_unmap (&fin);
  gst_buffer_unref (exp);
  return diff;
}

GST_START_TEST (test_filter_converts_format_and_size_from_caps)
{
  struct
  {
    GstVideoFormat in;
    gint w, h;
    const gchar *caps;
    GstVideoFormat out;
    gint ow, oh;
  } cases[] = {
    {GST_VIDEO_FORMAT_NV12, 64, 36, "video/x-raw(memory:CUDAZeroCopy),"
          "format=RGBA", GST_VIDEO_FORMAT_RGBA, 64, 36},
    {GST_VIDEO_FORMAT_NV12, 128, 72, "video/x-raw(memory:CUDAZeroCopy),"
          "format=RGBA,width=64,height=36", GST_VIDEO_FORMAT_RGBA, 64, 36},
    {GST_VIDEO_FORMAT_YUY2, 33, 17, "video/x-raw(memory:CUDAZeroCopy),"
          "format=I420,width=66,height=34", GST_VIDEO_FORMAT_I420, 66, 34},
    {GST_VIDEO_FORMAT_BGRx, 40, 30, "video/x-raw(memory:CUDAZeroCopy),"
          "format=P010_10LE", GST_VIDEO_FORMAT_P010_10LE, 40, 30},
    /* only the width given: as in videoconvertscale, the height stays and
     * the pixel aspect ratio (free downstream) keeps the picture's shape */
    {GST_VIDEO_FORMAT_I420, 64, 36, "video/x-raw(memory:CUDAZeroCopy),"
          "width=32", GST_VIDEO_FORMAT_I420, 32, 36},
    /* with square pixels asked for, the height follows the width */
    {GST_VIDEO_FORMAT_I420, 64, 36, "video/x-raw(memory:CUDAZeroCopy),"
          "width=32,pixel-aspect-ratio=1/1", GST_VIDEO_FORMAT_I420, 32, 18},
  };
  for (auto & c:cases) {
    GstBuffer *in;
    GstVideoInfo ii, oi;
    GstBuffer *out = run_one_frame (c.in, c.w, c.h, "", c.caps, &in, &ii,
        &oi);
    fail_unless (out != NULL, "%s -> %s: no output", gst_video_format_to_string
        (c.in), c.caps);
    fail_unless_equals_int (GST_VIDEO_INFO_FORMAT (&oi), c.out);
    fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&oi), c.ow);
    fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&oi), c.oh);
    zc::ConvertParams p;
    p.sampling = zc::Sampling::Bilinear;
    std::string diff = compare_with_reference (in, &ii, out, &oi, p, c.caps);
    fail_unless (diff.empty (), "%s", diff.c_str ());
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }
}

GST_END_TEST;

/* n-threads cuts the CPU backend's work into bands; the bytes stay those of
 * the reference whatever the count (the CUDA backend ignores it) */
GST_START_TEST (test_filter_n_threads_does_not_change_the_output)
{
  const gchar *caps = "video/x-raw(memory:CUDAZeroCopy),format=RGBA,"
      "width=96,height=54";
  zc::ConvertParams p;
  p.sampling = zc::Sampling::Bilinear;
  p.contrast = 1.3;
  for (const gchar *threads : {"n-threads=0", "n-threads=1", "n-threads=3"}) {
    gchar *props = g_strdup_printf ("%s contrast=1.3", threads);
    GstBuffer *in;
    GstVideoInfo ii, oi;
    GstElement *f = NULL;
    GstBuffer *out = run_one_frame (GST_VIDEO_FORMAT_NV12, 192, 108, props,
        caps, &in, &ii, &oi, &f);
    fail_unless (out != NULL, "%s: no output", props);
    guint n = 99;
    g_object_get (f, "n-threads", &n, NULL);
    fail_unless_equals_int (n, atoi (threads + strlen ("n-threads=")));
    std::string diff = compare_with_reference (in, &ii, out, &oi, p, props);
    fail_unless (diff.empty (), "%s", diff.c_str ());
    gst_object_unref (f);
    gst_buffer_unref (out);
    gst_buffer_unref (in);
    g_free (props);
  }
}

GST_END_TEST;

/* @in (of @in_info) through "zcupload ! zcfilter ! capsfilter @mid_caps !
 * zcfilter @props"; the output, with its caps' info in @out_info */
static GstBuffer *
run_two_filters (GstBuffer * in, const GstVideoInfo * in_info,
    const gchar * mid_caps, const gchar * props, GstVideoInfo * out_info)
{
  gchar *desc = g_strdup_printf ("zcupload ! zcfilter name=f0 ! "
      "capsfilter caps=\"%s\" ! zcfilter name=f1 %s ! capsfilter "
      "caps=\"video/x-raw(memory:CUDAZeroCopy)\"", mid_caps, props);
  GstHarness *hr = gst_harness_new_parse (desc);
  g_free (desc);
  gst_harness_set_src_caps (hr, zc_test_raw_caps (GST_VIDEO_INFO_FORMAT
          (in_info), GST_VIDEO_INFO_WIDTH (in_info),
          GST_VIDEO_INFO_HEIGHT (in_info)));
  GstBuffer *out = NULL;
  if (gst_harness_push (hr, gst_buffer_ref (in)) == GST_FLOW_OK)
    out = gst_harness_try_pull (hr);
  if (out) {
    GstCaps *oc = gst_pad_get_current_caps (hr->sinkpad);
    fail_unless (oc && gst_video_info_from_caps (out_info, oc));
    gst_caps_unref (oc);
  }
  gst_harness_teardown (hr);
  return out;
}

/* Point effects in the zcfilter that converts and scales (zcfilter
 * brightness=-0.1 ! video/x-raw,format=RGBA,width=1280,height=720, which
 * users hold against videoconvertscale ! videobalance) give the bytes of
 * two zcfilters, one converting and one with the effects, and of the CPU
 * reference. On the CPU backend the conversion's own route runs them on
 * the rows it stores (tests/kernels/test-fast-scale.cpp pins the route). */
GST_START_TEST (test_filter_effects_with_conversion_match_two_filters)
{
  struct
  {
    GstVideoFormat in;
    gint w, h;
    const gchar *format;
    gint ow, oh;
    const gchar *props;
    double brightness, contrast, saturation, hue, gamma;
    gboolean grayscale, invert;
  } cases[] = {
    {GST_VIDEO_FORMAT_NV12, 192, 108, "RGBA", 128, 72, "brightness=-0.1",
        -0.1, 1, 1, 0, 1, FALSE, FALSE},
    {GST_VIDEO_FORMAT_NV12, 192, 108, "RGBA", 192, 108,
        "contrast=1.3 saturation=1.4 hue=0.2", 0, 1.3, 1.4, 0.2, 1, FALSE,
        FALSE},
    {GST_VIDEO_FORMAT_I420, 96, 54, "BGRx", 64, 36, "gamma=2.2 invert=true",
        0, 1, 1, 0, 2.2, FALSE, TRUE},
    {GST_VIDEO_FORMAT_NV12, 97, 55, "RGB", 65, 37,
        "grayscale=true brightness=0.2", 0.2, 1, 1, 0, 1, TRUE, FALSE},
    {GST_VIDEO_FORMAT_RGBA, 96, 54, "NV12", 64, 36,
        "saturation=0.5 contrast=0.8 invert=true", 0, 0.8, 0.5, 0, 1, FALSE,
        TRUE},
  };
  for (auto & c:cases) {
    gchar *caps = g_strdup_printf ("video/x-raw(memory:CUDAZeroCopy),"
        "format=%s,width=%d,height=%d", c.format, c.ow, c.oh);
    gchar *what = g_strdup_printf ("%s %dx%d -> %s, %s",
        gst_video_format_to_string (c.in), c.w, c.h, caps, c.props);
    GstBuffer *in;
    GstVideoInfo ii, oi, si;
    GstBuffer *fused = run_one_frame (c.in, c.w, c.h, c.props, caps, &in, &ii,
        &oi);
    fail_unless (fused != NULL, "%s: no output", what);
    GstBuffer *split = run_two_filters (in, &ii, caps, c.props, &si);
    fail_unless (split != NULL, "%s: no output from two zcfilters", what);
    fail_unless (gst_video_info_is_equal (&oi, &si), "%s: the two outputs "
        "differ in caps", what);

    GstVideoFrame ff, fs;
    fail_unless (zc_test_frame_map (&ff, &oi, fused, GST_MAP_READ));
    fail_unless (zc_test_frame_map (&fs, &si, split, GST_MAP_READ));
    std::string diff = zc_test_compare_identical (&fs, &ff, what);
    gst_video_frame_unmap (&fs);
    gst_video_frame_unmap (&ff);
    fail_unless (diff.empty (), "one zcfilter against two: %s", diff.c_str ());

    zc::ConvertParams p;
    p.sampling = zc::Sampling::Bilinear;
    p.brightness = c.brightness;
    p.contrast = c.contrast;
    p.saturation = c.saturation;
    p.hue = c.hue;
    p.gamma = c.gamma;
    p.grayscale = c.grayscale;
    p.invert = c.invert;
    diff = compare_with_reference (in, &ii, fused, &oi, p, what);
    fail_unless (diff.empty (), "%s", diff.c_str ());
    gst_buffer_unref (split);
    gst_buffer_unref (fused);
    gst_buffer_unref (in);
    g_free (what);
    g_free (caps);
  }
}

GST_END_TEST;

GST_START_TEST (test_filter_crop_properties_shrink_the_output)
{
  GstBuffer *in;
  GstVideoInfo ii, oi;
  GstBuffer *out = run_one_frame (GST_VIDEO_FORMAT_RGBA, 33, 17,
      "crop-left=2 crop-right=4 crop-top=1 crop-bottom=3", NULL, &in, &ii,
      &oi);
  fail_unless (out != NULL);
  fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&oi), 27);
  fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&oi), 13);
  /* no scaling: the very pixels of the cropped rectangle */
  GstVideoFrame fin, fout;
  fail_unless (gst_video_frame_map (&fin, &ii, in, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fout, &oi, out, GST_MAP_READ));
  for (gint y = 0; y < 13; y++) {
    const guint8 *s = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fin, 0) +
        (y + 1) * GST_VIDEO_FRAME_PLANE_STRIDE (&fin, 0) + 2 * 4;
    const guint8 *d = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fout, 0) +
        y * GST_VIDEO_FRAME_PLANE_STRIDE (&fout, 0);
    fail_unless (memcmp (s, d, 27 * 4) == 0, "row %d differs", y);
  }
  gst_video_frame_unmap (&fout);
  gst_video_frame_unmap (&fin);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
}

GST_END_TEST;

GST_START_TEST (test_filter_honours_crop_meta)
{
  GstHarness *hr = gst_harness_new_parse ("zcupload ! zcfilter saturation=0.5");
  gst_harness_set_src_caps (hr, zc_test_raw_caps (GST_VIDEO_FORMAT_I420, 64,
          36));
  GstVideoInfo ii;
  gst_video_info_set_format (&ii, GST_VIDEO_FORMAT_I420, 64, 36);
  GstBuffer *in = gst_buffer_new_allocate (NULL, ii.size, NULL);
  zc_test_fill_random (in, 31);
  GstVideoCropMeta *meta = gst_buffer_add_video_crop_meta (in);
  meta->x = 8;
  meta->y = 4;
  meta->width = 32;
  meta->height = 18;
  fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in)),
      GST_FLOW_OK);
  GstBuffer *out = gst_harness_try_pull (hr);
  fail_unless (out != NULL);
  /* consumed: the output is the region, scaled to the caps' size */
  fail_unless (gst_buffer_get_video_crop_meta (out) == NULL);
  GstVideoInfo oi;
  GstCaps *oc = gst_pad_get_current_caps (hr->sinkpad);
  gst_video_info_from_caps (&oi, oc);
  gst_caps_unref (oc);
  zc::ConvertParams p;
  p.sampling = zc::Sampling::Bilinear;
  p.saturation = 0.5f;
  p.crop_left = 8;
  p.crop_top = 4;
  p.crop_right = 64 - 40;
  p.crop_bottom = 36 - 22;
  std::string diff = compare_with_reference (in, &ii, out, &oi, p, "crop meta");
  fail_unless (diff.empty (), "%s", diff.c_str ());
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_harness_teardown (hr);
}

GST_END_TEST;

static guint32
rgba_at (GstVideoFrame * f, gint x, gint y)
{
  const guint8 *p = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (f, 0) +
      y * GST_VIDEO_FRAME_PLANE_STRIDE (f, 0) + 4 * x;
  guint32 v;
  memcpy (&v, p, 4);
  return v;
}

GST_START_TEST (test_filter_rotation_swaps_width_and_height)
{
  GstBuffer *in;
  GstVideoInfo ii, oi;
  GstBuffer *out = run_one_frame (GST_VIDEO_FORMAT_RGBA, 33, 17,
      "video-direction=90r", NULL, &in, &ii, &oi);
  fail_unless (out != NULL);
  fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&oi), 17);
  fail_unless_equals_int (GST_VIDEO_INFO_HEIGHT (&oi), 33);
  GstVideoFrame fin, fout;
  fail_unless (gst_video_frame_map (&fin, &ii, in, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fout, &oi, out, GST_MAP_READ));
  /* clockwise: the output's top-left is the input's bottom-left */
  for (gint y = 0; y < 33; y++)
    for (gint x = 0; x < 17; x++)
      fail_unless (rgba_at (&fout, x, y) == rgba_at (&fin, y, 16 - x),
          "pixel %d,%d", x, y);
  gst_video_frame_unmap (&fout);
  gst_video_frame_unmap (&fin);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
}

GST_END_TEST;

GST_START_TEST (test_filter_auto_direction_follows_orientation_tag)
{
  GstHarness *hr = gst_harness_new_parse ("zcupload ! zcfilter "
      "video-direction=auto");
  gst_harness_set_src_caps (hr, zc_test_raw_caps (GST_VIDEO_FORMAT_RGBA, 20,
          10));
  gst_harness_push_event (hr, gst_event_new_tag (gst_tag_list_new
          (GST_TAG_IMAGE_ORIENTATION, "rotate-180", NULL)));
  GstVideoInfo ii;
  gst_video_info_set_format (&ii, GST_VIDEO_FORMAT_RGBA, 20, 10);
  GstBuffer *in = gst_buffer_new_allocate (NULL, ii.size, NULL);
  zc_test_fill_random (in, 3);
  fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in)),
      GST_FLOW_OK);
  GstBuffer *out = gst_harness_try_pull (hr);
  fail_unless (out != NULL);
  GstVideoInfo oi;
  GstCaps *oc = gst_pad_get_current_caps (hr->sinkpad);
  gst_video_info_from_caps (&oi, oc);
  gst_caps_unref (oc);
  GstVideoFrame fin, fout;
  fail_unless (gst_video_frame_map (&fin, &ii, in, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fout, &oi, out, GST_MAP_READ));
  for (gint y = 0; y < 10; y++)
    for (gint x = 0; x < 20; x++)
      fail_unless (rgba_at (&fout, x, y) == rgba_at (&fin, 19 - x, 9 - y),
          "pixel %d,%d", x, y);
  gst_video_frame_unmap (&fout);
  gst_video_frame_unmap (&fin);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_harness_teardown (hr);
}

GST_END_TEST;

/* 16:9 into a square: black bars above and below with add-borders, none
 * without */
GST_START_TEST (test_filter_add_borders_keeps_aspect_ratio)
{
  for (int borders = 1; borders >= 0; borders--) {
    GstBuffer *in;
    GstVideoInfo ii, oi;
    GstBuffer *out = run_one_frame (GST_VIDEO_FORMAT_RGBA, 64, 36,
        borders ? "add-borders=true" : "add-borders=false",
        "video/x-raw(memory:CUDAZeroCopy),width=64,height=64,"
        "pixel-aspect-ratio=1/1", &in, &ii, &oi);
    fail_unless (out != NULL);
    GstVideoFrame fout;
    fail_unless (gst_video_frame_map (&fout, &oi, out, GST_MAP_READ));
    guint black_rows = 0;
    for (gint y = 0; y < 64; y++) {
      bool black = true;
      for (gint x = 0; x < 64; x++) {
        guint32 v = rgba_at (&fout, x, y);
        const guint8 *b = (const guint8 *) &v;
        black &= b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 255;
      }
      black_rows += black;
    }
    gst_video_frame_unmap (&fout);
    /* 64 * 9 / 16 = 36 picture rows, 28 border rows */
    fail_unless_equals_int (black_rows, borders ? 28 : 0);
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }
}

GST_END_TEST;

GST_START_TEST (test_filter_crop_larger_than_frame_is_an_error)
{
  GstHarness *hr = gst_harness_new_parse ("zcupload ! zcfilter name=f");
  GstElement *f = gst_harness_find_element (hr, "zcfilter");
  gst_harness_set_src_caps (hr, zc_test_raw_caps (GST_VIDEO_FORMAT_RGBA, 16,
          16));
  GstVideoInfo ii;
  gst_video_info_set_format (&ii, GST_VIDEO_FORMAT_RGBA, 16, 16);
  GstBuffer *in = gst_buffer_new_allocate (NULL, ii.size, NULL);
  /* a crop meta that leaves 4 columns, then 6 more from the property */
  GstVideoCropMeta *meta = gst_buffer_add_video_crop_meta (in);
  meta->x = 0;
  meta->y = 0;
  meta->width = 4;
  meta->height = 16;
  g_object_set (f, "crop-left", 2, "crop-right", 4, NULL);
  fail_unless_equals_int (gst_harness_push (hr, in), GST_FLOW_ERROR);
  gst_object_unref (f);
  gst_harness_teardown (hr);
}

GST_END_TEST;

GST_START_TEST (test_filter_different_caps_are_not_passthrough)
{
  GstBuffer *in;
  GstVideoInfo ii, oi;
  GstElement *f = NULL;
  GstBuffer *out = run_one_frame (GST_VIDEO_FORMAT_RGBA, 16, 16, "",
      "video/x-raw(memory:CUDAZeroCopy),format=BGRA", &in, &ii, &oi, &f);
  fail_unless (out != NULL);
  fail_if (gst_base_transform_is_passthrough (GST_BASE_TRANSFORM (f)));
  fail_unless_equals_uint64 (zc_test_stat (f, "buffers"), 1);
  fail_unless_equals_uint64 (zc_test_stat (f, "copied-buffers"), 0);
  GstVideoFrame fin, fout;
  fail_unless (gst_video_frame_map (&fin, &ii, in, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fout, &oi, out, GST_MAP_READ));
  guint32 a = rgba_at (&fin, 3, 5), b = rgba_at (&fout, 3, 5);
  const guint8 *pa = (const guint8 *) &a, *pb = (const guint8 *) &b;
  fail_unless (pa[0] == pb[2] && pa[1] == pb[1] && pa[2] == pb[0] &&
      pa[3] == pb[3]);
  gst_video_frame_unmap (&fout);
  gst_video_frame_unmap (&fin);
  gst_object_unref (f);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
}

GST_END_TEST;

/* Blur, sharpen and edges: the element's output equals the CPU reference
 * (the conversion, if any, then zc::spatial_cpu), for equal caps (no
 * conversion pass) and with a conversion before the spatial pass */
GST_START_TEST (test_filter_spatial_effects_match_reference)
{
  struct
  {
    const gchar *props;
    zc::SpatialParams sp;
    GstVideoFormat in;
    const gchar *caps;
  } cases[] = {
    {"blur-sigma=2", {2.0f, 0.0f, 1.0f, false}, GST_VIDEO_FORMAT_RGBA, NULL},
    {"sharpen=1.5", {0.0f, 1.5f, 1.0f, false}, GST_VIDEO_FORMAT_NV12, NULL},
    {"edges=true", {0.0f, 0.0f, 1.0f, true}, GST_VIDEO_FORMAT_I420, NULL},
    {"blur-sigma=1 sharpen=2 edges=true", {1.0f, 2.0f, 1.0f, true},
        GST_VIDEO_FORMAT_YUY2, NULL},
    {"blur-sigma=3", {3.0f, 0.0f, 1.0f, false}, GST_VIDEO_FORMAT_NV12,
        "video/x-raw(memory:CUDAZeroCopy),format=BGRx,width=40,height=24"},
  };
  for (auto & c:cases) {
    GstBuffer *in;
    GstVideoInfo ii, oi;
    GstBuffer *out = run_one_frame (c.in, 65, 37, c.props, c.caps, &in, &ii,
        &oi);
    fail_unless (out != NULL, "%s: no output", c.props);
    /* reference: convert (identity when the caps are equal), then spatial */
    GstBuffer *mid = gst_buffer_new_allocate (NULL, oi.size, NULL);
    GstBuffer *exp = gst_buffer_new_allocate (NULL, oi.size, NULL);
    GstBuffer *tmp = gst_buffer_new_allocate (NULL, oi.size, NULL);
    GstVideoFrame fin, fmid, fexp, ftmp, fout;
    fail_unless (gst_video_frame_map (&fin, &ii, in, GST_MAP_READ));
    fail_unless (gst_video_frame_map (&fmid, &oi, mid, GST_MAP_READWRITE));
    fail_unless (gst_video_frame_map (&fexp, &oi, exp, GST_MAP_WRITE));
    fail_unless (gst_video_frame_map (&ftmp, &oi, tmp, GST_MAP_WRITE));
    zc::FrameDesc sd, md, ed, td;
    fail_unless (zc_test_frame_desc (&fin, &sd) && zc_test_frame_desc (&fmid,
            &md) && zc_test_frame_desc (&fexp, &ed) &&
        zc_test_frame_desc (&ftmp, &td));
    zc::ConvertParams cp;
    cp.sampling = zc::Sampling::Bilinear;
    fail_unless (zc::convert_cpu_reference (sd, md, cp, 1));
    /* equal caps: the element runs no conversion pass (which matters for
     * the padding luma of an odd width of YUY2) */
    fail_unless (zc::spatial_cpu (c.caps ? md : sd, ed, &td, c.sp, 1),
        "%s: reference refused", c.props);
    fail_unless (gst_video_frame_map (&fout, &oi, out, GST_MAP_READ));
    std::string diff = zc_test_compare_identical (&fexp, &fout, c.props);
    /* and the effect did something */
    std::string same = zc_test_compare_identical (&fmid, &fout, c.props);
    gst_video_frame_unmap (&fout);
    gst_video_frame_unmap (&ftmp);
    gst_video_frame_unmap (&fexp);
    gst_video_frame_unmap (&fmid);
    gst_video_frame_unmap (&fin);
    fail_unless (diff.empty (), "%s", diff.c_str ());
    fail_if (same.empty (), "%s: output equals the unfiltered frame",
        c.props);
    gst_buffer_unref (tmp);
    gst_buffer_unref (exp);
    gst_buffer_unref (mid);
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }
}

GST_END_TEST;

/* ---- chains of zcfilters ------------------------------------------------ */

/* Whether @buf carries point effects an upstream zcfilter left for the
 * next one (the plugin's own meta, known here by its API's name only) */
static bool
has_pending_effects (GstBuffer * buf)
{
  gpointer state = NULL;
  while (GstMeta * m = gst_buffer_iterate_meta (buf, &state)) {
    if (g_str_equal (g_type_name (m->info->api),
            "GstZcPendingEffectsMetaAPI"))
      return true;
  }
  return false;
}

/* Records has_pending_effects() of each buffer reaching a pad */
static GstPadProbeReturn
record_pending_effects (GstPad *, GstPadProbeInfo * info, gpointer user_data)
{
  auto *seen = (std::vector < bool > *)user_data;
  seen->push_back (has_pending_effects (GST_PAD_PROBE_INFO_BUFFER (info)));
  return GST_PAD_PROBE_OK;
}

/* The steps of a chain one after the other through the CPU reference (each
 * zcfilter's own pass as the CUDA kernel makes it), against @fout. Steps
 * with no effect are left out, as the elements pass such frames on. */
static std::string
check_chain_output (GstVideoFrame * fin, GstVideoFrame * fout,
    const std::vector < ZcFilterSetting > &steps, const std::string & what)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FRAME_FORMAT (fin),
      GST_VIDEO_FRAME_WIDTH (fin), GST_VIDEO_FRAME_HEIGHT (fin));
  info.colorimetry = fin->info.colorimetry;
  GstBuffer *bufs[2] = { gst_buffer_new_allocate (NULL, info.size, NULL),
    gst_buffer_new_allocate (NULL, info.size, NULL)
  };
  GstVideoFrame f[2];
  fail_unless (gst_video_frame_map (&f[0], &info, bufs[0], GST_MAP_READWRITE));
  fail_unless (gst_video_frame_map (&f[1], &info, bufs[1], GST_MAP_READWRITE));
  zc::FrameDesc in, d[2];
  fail_unless (zc_test_frame_desc (fin, &in) && zc_test_frame_desc (&f[0],
          &d[0]) && zc_test_frame_desc (&f[1], &d[1]));
  /* the input, copied through an identity conversion */
  zc::ConvertParams copy;
  fail_unless (zc::convert_cpu_reference (in, d[0], copy, 1));
  int cur = 0;
  for (const ZcFilterSetting & s:steps) {
    zc::ConvertParams p = zc_test_convert_params (s);
    if (!p.invert && !p.grayscale && p.brightness == 0.0 && p.contrast == 1.0
        && p.saturation == 1.0 && p.hue == 0.0 && p.gamma == 1.0)
      continue;
    fail_unless (zc::convert_cpu_reference (d[cur], d[1 - cur], p, 1));
    cur = 1 - cur;
  }
  std::string diff = zc_test_compare_identical (&f[cur], fout, what.c_str ());
  gst_video_frame_unmap (&f[1]);
  gst_video_frame_unmap (&f[0]);
  gst_buffer_unref (bufs[1]);
  gst_buffer_unref (bufs[0]);
  return diff;
}

static void
set_effects (GstElement * f, const ZcFilterSetting & s)
{
  g_object_set (f, "brightness", s.brightness, "contrast", s.contrast,
      "gamma", s.gamma, "invert", s.invert, "saturation", s.saturation,
      "hue", s.hue, "grayscale", s.grayscale, NULL);
}

/* Pushes one random frame of @fmt through harness @h (whose zcfilters are
 * named f0, f1, ...) with @steps set on them, and checks the output
 * against the steps one after the other. Returns what the probe on the
 * last zcfilter's sink pad saw: whether the frame carried steps left to
 * it. */
static void
set_chain (GstHarness * h, const std::vector < ZcFilterSetting > &steps)
{
  GstBin *bin = GST_BIN (h->element);
  for (guint i = 0; i < steps.size (); i++) {
    gchar *name = g_strdup_printf ("f%u", i);
    GstElement *f = gst_bin_get_by_name (bin, name);
    fail_unless (f != NULL, "no %s", name);
    set_effects (f, steps[i]);
    gst_object_unref (f);
    g_free (name);
  }
}

static bool
run_chain_frame (GstHarness * h, GstVideoFormat fmt, gint w, gint hgt,
    const std::vector < ZcFilterSetting > &steps, std::vector < bool > &seen,
    guint32 seed, const std::string & what)
{
  set_chain (h, steps);
  GstVideoInfo info;
  gst_video_info_set_format (&info, fmt, w, hgt);
  GstBuffer *in = gst_buffer_new_allocate (NULL, info.size, NULL);
  zc_test_fill_random (in, seed);
  guint before = seen.size ();
  /* the harness gives up its reference: the chain may work in place */
  GstBuffer *keep = zc_test_system_copy (in);
  fail_unless_equals_int (gst_harness_push (h, in), GST_FLOW_OK);
  GstBuffer *out = gst_harness_try_pull (h);
  fail_unless (out != NULL, "%s: no output", what.c_str ());
  fail_unless_equals_int (seen.size (), before + 1);
  GstCaps *oc = gst_pad_get_current_caps (h->sinkpad);
  GstVideoInfo oinfo;
  fail_unless (gst_video_info_from_caps (&oinfo, oc));
  gst_caps_unref (oc);
  GstVideoFrame fin, fout;
  fail_unless (gst_video_frame_map (&fin, &info, keep, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fout, &oinfo, out, GST_MAP_READ));
  std::string diff = check_chain_output (&fin, &fout, steps, what);
  gst_video_frame_unmap (&fout);
  gst_video_frame_unmap (&fin);
  fail_unless (diff.empty (), "%s", diff.c_str ());
  /* the steps ran once: nothing is left on the frame that leaves */
  fail_if (has_pending_effects (out), "%s: the output still carries point "
      "effects to run", what.c_str ());
  gst_buffer_unref (out);
  gst_buffer_unref (keep);
  return seen.back ();
}

static GstHarness *
new_chain (guint n, const gchar * between, std::vector < bool > &seen)
{
  std::string desc = "zcupload";
  for (guint i = 0; i < n; i++) {
    if (i)
      desc += between;
    desc += " ! zcfilter name=f" + std::to_string (i);
  }
  GstHarness *h = gst_harness_new_parse (desc.c_str ());
  gchar *last = g_strdup_printf ("f%u", n - 1);
  GstElement *f = gst_bin_get_by_name (GST_BIN (h->element), last);
  GstPad *pad = gst_element_get_static_pad (f, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, record_pending_effects,
      &seen, NULL);
  gst_object_unref (pad);
  gst_object_unref (f);
  g_free (last);
  return h;
}

/* Three zcfilters of point effects (videobalance's and gamma's, invert):
 * the frame is what the three passes would make of it, on every format.
 * On the CPU backend the first two leave their steps to the third, which
 * runs all three in one pass; on the GPU each runs its own kernel. */
GST_START_TEST (test_filter_chain_runs_effects_in_one_pass)
{
  const std::vector < ZcFilterSetting > steps = {
    {"invert", 0.0, 1.0, 1.0, TRUE},
    {"contrast1.3+saturation1.4", 0.0, 1.3, 1.0, FALSE, 1.4},
    {"gamma0.7+hue0.2", 0.0, 1.0, 0.7, FALSE, 1.0, 0.2},
  };
  const bool cpu = !zc_test_have_gpu ();
  for (GstVideoFormat fmt:zc_filter_formats) {
    for (auto size : { std::make_pair (37, 19), std::make_pair (64, 32) }) {
      std::vector < bool > seen;
      GstHarness *h = new_chain (3, "", seen);
      /* set before the caps, as on a gst-launch line: the elements are
       * negotiated out of passthrough, for every frame to be fused */
      set_chain (h, steps);
      gst_harness_set_src_caps (h, zc_test_raw_caps (fmt, size.first,
              size.second));
      std::string what = std::string (gst_video_format_to_string (fmt)) +
          " " + std::to_string (size.first) + "x" +
          std::to_string (size.second);
      for (guint32 i = 0; i < 2; i++) {
        bool left = run_chain_frame (h, fmt, size.first, size.second, steps,
            seen, 77 + i, what);
        fail_unless (left == cpu, "%s: the frame %s point effects left to "
            "the last zcfilter, on the %s backend", what.c_str (),
            left ? "carried" : "did not carry", cpu ? "CPU" : "CUDA");
      }
      gst_harness_teardown (h);
    }
  }
}

GST_END_TEST;

/* Effects switched on and off in the middle of a chain while it plays:
 * every frame is what the settings of that frame make of it, whichever
 * zcfilter has nothing to do (it passes the steps on to the next zcfilter,
 * or runs them when it is the last). */
GST_START_TEST (test_filter_chain_follows_property_changes)
{
  const ZcFilterSetting none = { "none", 0.0, 1.0, 1.0, FALSE };
  const ZcFilterSetting inv = { "invert", 0.0, 1.0, 1.0, TRUE };
  const ZcFilterSetting con = { "contrast1.5", 0.0, 1.5, 1.0, FALSE };
  const ZcFilterSetting gam = { "gamma1.8", 0.0, 1.0, 1.8, FALSE };
  const ZcFilterSetting sat = { "saturation0.3", 0.0, 1.0, 1.0, FALSE, 0.3 };
  const std::vector < std::vector < ZcFilterSetting >> frames = {
    {inv, none, con},
    {inv, gam, con},
    {inv, gam, none},
    {none, none, none},
    {none, sat, none},
    {con, none, none},
    {inv, con, gam},
  };
  for (GstVideoFormat fmt:{GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12,
          GST_VIDEO_FORMAT_YUY2}) {
    std::vector < bool > seen;
    GstHarness *h = new_chain (3, "", seen);
    gst_harness_set_src_caps (h, zc_test_raw_caps (fmt, 33, 18));
    for (guint i = 0; i < frames.size (); i++) {
      std::string what = std::string (gst_video_format_to_string (fmt)) +
          " frame " + std::to_string (i);
      run_chain_frame (h, fmt, 33, 18, frames[i], seen, 300 + i, what);
    }
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

/* Only a zcfilter runs steps left to it: an element between two zcfilters
 * that could look at the pixels (identity here, which passes the
 * ALLOCATION query on as it is) means each zcfilter runs its own. */
GST_START_TEST (test_filter_chain_effects_not_left_across_other_elements)
{
  const std::vector < ZcFilterSetting > steps = {
    {"invert", 0.0, 1.0, 1.0, TRUE},
    {"contrast1.3", 0.0, 1.3, 1.0, FALSE},
  };
  for (const gchar *between : {" ! identity", " ! tee"}) {
    std::vector < bool > seen;
    GstHarness *h = new_chain (2, between, seen);
    set_chain (h, steps);
    gst_harness_set_src_caps (h, zc_test_raw_caps (GST_VIDEO_FORMAT_RGBA, 40,
            20));
    for (guint32 i = 0; i < 2; i++) {
      bool left = run_chain_frame (h, GST_VIDEO_FORMAT_RGBA, 40, 20, steps,
          seen, 500 + i, between);
      fail_if (left, "%s: a zcfilter left its effects across it", between);
    }
    gst_harness_teardown (h);
  }
}

GST_END_TEST;

static Suite *
zcfilter_suite (void)
{
  Suite *s = suite_create ("zcfilter");
  TCase *tc = zc_test_case ("general");

  suite_add_tcase (s, tc);
  /* 1921x1081 frames of 11 formats per setting, on 2 cores */
  tcase_set_timeout (tc, 600);
  tcase_add_loop_test (tc, test_filter_matches_cpu_reference, 0,
      ZC_N_FILTER_SETTINGS);
  tcase_add_test (tc, test_filter_passthrough_when_default);
  tcase_add_test (tc, test_filter_property_change_applies_to_next_frame);
  tcase_add_test (tc, test_filter_properties_have_documented_ranges);
  tcase_add_test (tc, test_filter_same_caps_in_and_out);
  tcase_add_test (tc, test_filter_converts_format_and_size_from_caps);
  tcase_add_test (tc, test_filter_n_threads_does_not_change_the_output);
  tcase_add_test (tc, test_filter_effects_with_conversion_match_two_filters);
  tcase_add_test (tc, test_filter_crop_properties_shrink_the_output);
  tcase_add_test (tc, test_filter_honours_crop_meta);
  tcase_add_test (tc, test_filter_rotation_swaps_width_and_height);
  tcase_add_test (tc, test_filter_auto_direction_follows_orientation_tag);
  tcase_add_test (tc, test_filter_add_borders_keeps_aspect_ratio);
  tcase_add_test (tc, test_filter_crop_larger_than_frame_is_an_error);
  tcase_add_test (tc, test_filter_different_caps_are_not_passthrough);
  tcase_add_test (tc, test_filter_spatial_effects_match_reference);
  tcase_add_test (tc, test_filter_chain_runs_effects_in_one_pass);
  tcase_add_test (tc, test_filter_chain_follows_property_changes);
  tcase_add_test (tc, test_filter_chain_effects_not_left_across_other_elements);
  return s;
}

GST_CHECK_MAIN (zcfilter);

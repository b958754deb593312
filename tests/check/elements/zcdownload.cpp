/* gst-zerocopy: zcdownload
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Downstream gets the same memory, unless it cannot read GstVideoMeta and
 * the strides are not the default ones: then one repack, counted.
 */
#include "../zccheck.h"

/* A harness around zcdownload fed with buffers of a GstZcBufferPool the
 * test makes itself (the test's context is given to the element, as a
 * neighbour would). @downstream_video_meta: whether the harness' sink says
 * it reads GstVideoMeta. */
struct DownloadFixture
{
  GstHarness *h = nullptr;
  GstZcContext *ctx = nullptr;
  GstBufferPool *pool = nullptr;
  GstVideoInfo info;

  DownloadFixture (GstVideoFormat fmt, gint w, gint hgt,
      gboolean downstream_video_meta, gboolean padded_strides)
  {
    ctx = gst_zc_context_new (-1, NULL);
    fail_unless (ctx != NULL);
    h = gst_harness_new ("zcdownload");
    GstContext *gctx = gst_context_new_zc_context (ctx);
    gst_element_set_context (h->element, gctx);
    gst_context_unref (gctx);
    if (downstream_video_meta)
      gst_harness_add_propose_allocation_meta (h, GST_VIDEO_META_API_TYPE,
          NULL);
    GstCaps *caps = zc_test_raw_caps (fmt, w, hgt,
        GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY);
    gst_video_info_from_caps (&info, caps);

    pool = gst_zc_buffer_pool_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
    GstStructure *config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, info.size, 2, 0);
    /* Padded rows, GST_ZC_ROW_PITCH_ALIGN as the pool pitches them for
     * the GPU, asked for here so that system memory has them too */
    if (padded_strides) {
      gst_buffer_pool_config_add_option (config,
          GST_BUFFER_POOL_OPTION_VIDEO_META);
      gst_buffer_pool_config_add_option (config,
          GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
      GstVideoAlignment align;
      gst_video_alignment_reset (&align);
      for (guint i = 0; i < GST_VIDEO_MAX_PLANES; i++)
        align.stride_align[i] = GST_ZC_ROW_PITCH_ALIGN - 1;
      gst_buffer_pool_config_set_video_alignment (config, &align);
    }
    fail_unless (gst_buffer_pool_set_config (pool, config));
    fail_unless (gst_buffer_pool_set_active (pool, TRUE));

    gst_harness_set_src_caps (h, caps);
  }

  ~DownloadFixture ()
  {
    gst_harness_teardown (h);
    gst_buffer_pool_set_active (pool, FALSE);
    gst_object_unref (pool);
    gst_object_unref (ctx);
  }

  GstBuffer *frame (guint32 seed)
  {
    GstBuffer *b = NULL;
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
        GST_FLOW_OK);
    zc_test_fill_random (b, seed);
    return b;
  }

  GstVideoInfo out_info ()
  {
    GstCaps *oc = gst_pad_get_current_caps (h->sinkpad);
    fail_unless (oc != NULL);
    GstCapsFeatures *f = gst_caps_get_features (oc, 0);
    fail_if (gst_caps_features_contains (f,
            GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY),
        "zcdownload output still says CUDAZeroCopy: %" GST_PTR_FORMAT, oc);
    GstVideoInfo oi;
    gst_video_info_from_caps (&oi, oc);
    gst_caps_unref (oc);
    return oi;
  }
};

static void
check_same_memory (GstVideoFormat fmt, gint w, gint h, gboolean meta_down,
    gboolean padded)
{
  DownloadFixture fx (fmt, w, h, meta_down, padded);
  for (int i = 0; i < 4; i++) {
    GstBuffer *in = fx.frame (i);
    GstMemory *in_mem = gst_buffer_peek_memory (in, 0);
    fail_unless_equals_int (gst_harness_push (fx.h, gst_buffer_ref (in)),
        GST_FLOW_OK);
    GstBuffer *out = gst_harness_try_pull (fx.h);
    fail_unless (out != NULL);
    fail_unless (gst_buffer_peek_memory (out, 0) == in_mem,
        "%s %dx%d: zcdownload did not hand on the same memory",
        gst_video_format_to_string (fmt), w, h);
    GstVideoInfo oi = fx.out_info ();
    GstVideoFrame fin, fout;
    fail_unless (gst_video_frame_map (&fin, &fx.info, in, GST_MAP_READ));
    fail_unless (gst_video_frame_map (&fout, &oi, out, GST_MAP_READ));
    std::string diff = zc_test_compare_identical (&fin, &fout, "download");
    gst_video_frame_unmap (&fout);
    gst_video_frame_unmap (&fin);
    fail_unless (diff.empty (), "%s", diff.c_str ());
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }
  std::string stats = zc_test_stats_to_string (fx.h->element);
  fail_unless (zc_test_stat (fx.h->element, "buffers") == 4, "%s",
      stats.c_str ());
  fail_unless (zc_test_stat (fx.h->element, "zero-copy-buffers") == 4, "%s",
      stats.c_str ());
  fail_unless (zc_test_stat (fx.h->element, "copied-buffers") == 0, "%s",
      stats.c_str ());
  fail_unless (zc_test_stat (fx.h->element, "bytes-copied") == 0, "%s",
      stats.c_str ());
}

GST_START_TEST (test_download_same_memory_no_copy)
{
  /* downstream reads GstVideoMeta: padded strides pass as they are */
  check_same_memory (GST_VIDEO_FORMAT_RGBA, 37, 13, TRUE, TRUE);
  check_same_memory (GST_VIDEO_FORMAT_I420, 37, 13, TRUE, TRUE);
  check_same_memory (GST_VIDEO_FORMAT_NV12, 1921, 1081, TRUE, TRUE);
}

GST_END_TEST;

GST_START_TEST (test_download_default_strides_need_no_meta_downstream)
{
  /* Default layout: no repack needed even for a consumer without
   * GstVideoMeta */
  check_same_memory (GST_VIDEO_FORMAT_RGBA, 37, 13, FALSE, FALSE);
  check_same_memory (GST_VIDEO_FORMAT_NV12, 64, 48, FALSE, FALSE);
  /* 128-byte aligned anyway: padded pool, same as default */
  check_same_memory (GST_VIDEO_FORMAT_RGBA, 640, 480, FALSE, TRUE);
}

GST_END_TEST;

static void
check_repack (GstVideoFormat fmt, gint w, gint h)
{
  DownloadFixture fx (fmt, w, h, FALSE, TRUE);
  GstVideoInfo def;
  gst_video_info_set_format (&def, fmt, w, h);
  GstBuffer *in = fx.frame (11);
  GstVideoMeta *meta = gst_buffer_get_video_meta (in);
  fail_unless (meta != NULL);
  gboolean padded = FALSE;
  for (guint p = 0; p < meta->n_planes; p++)
    padded |= meta->stride[p] != GST_VIDEO_INFO_PLANE_STRIDE (&def, p);
  fail_unless (padded, "test setup: the pool gave default strides");

  fail_unless_equals_int (gst_harness_push (fx.h, gst_buffer_ref (in)),
      GST_FLOW_OK);
  GstBuffer *out = gst_harness_try_pull (fx.h);
  fail_unless (out != NULL);
  /* A reader that ignores GstVideoMeta sees the default layout */
  GstVideoMeta *ometa = gst_buffer_get_video_meta (out);
  if (ometa) {
    for (guint p = 0; p < ometa->n_planes; p++) {
      fail_unless_equals_int (ometa->stride[p],
          GST_VIDEO_INFO_PLANE_STRIDE (&def, p));
      fail_unless_equals_uint64 (ometa->offset[p],
          GST_VIDEO_INFO_PLANE_OFFSET (&def, p));
    }
  }
  fail_unless (gst_buffer_get_size (out) >= def.size);
  GstVideoFrame fin, fout;
  fail_unless (gst_video_frame_map (&fin, &fx.info, in, GST_MAP_READ));
  /* Mapped with the default info, as such a reader would */
  GstBuffer *plain = gst_buffer_copy (out);
  while (gst_buffer_get_video_meta (plain))
    gst_buffer_remove_meta (plain, (GstMeta *) gst_buffer_get_video_meta (plain));
  fail_unless (gst_video_frame_map (&fout, &def, plain, GST_MAP_READ));
  std::string diff = zc_test_compare_identical (&fin, &fout, "repack");
  gst_video_frame_unmap (&fout);
  gst_video_frame_unmap (&fin);
  fail_unless (diff.empty (), "%s", diff.c_str ());

  std::string stats = zc_test_stats_to_string (fx.h->element);
  fail_unless (zc_test_stat (fx.h->element, "copied-buffers") == 1, "%s",
      stats.c_str ());
  fail_unless (zc_test_stat (fx.h->element, "bytes-copied") > 0, "%s",
      stats.c_str ());
  fail_unless (zc_test_stat (fx.h->element, "zero-copy-buffers") == 0, "%s",
      stats.c_str ());
  gst_buffer_unref (plain);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
}

GST_START_TEST (test_download_repacks_padded_strides_without_video_meta)
{
  check_repack (GST_VIDEO_FORMAT_RGBA, 37, 13);
  check_repack (GST_VIDEO_FORMAT_I420, 37, 13);
  check_repack (GST_VIDEO_FORMAT_NV12, 1921, 1081);
  check_repack (GST_VIDEO_FORMAT_GRAY8, 100, 3);
}

GST_END_TEST;

/* On the CPU backend (system memory) the frames zcfilter writes keep
 * GStreamer's default layout, so a consumer that does not read
 * GstVideoMeta (fakesink here, as filesink or a plain appsink) takes them
 * without a repack: I420's chroma rows and a rotated frame's rows would
 * be padded if pitched for a GPU. */
GST_START_TEST (test_download_cpu_frames_need_no_repack)
{
  const gchar *chains[] = {
    "video/x-raw,format=NV12,width=64,height=48 ! zcupload memory-type=system"
        " ! zcfilter memory-type=system ! "
        "video/x-raw(memory:CUDAZeroCopy),format=I420 ! ",
    "video/x-raw,format=RGBA,width=64,height=36 ! zcupload memory-type=system"
        " ! zcfilter memory-type=system video-direction=90r ! ",
    "video/x-raw,format=I420,width=37,height=13 ! zcupload memory-type=system"
        " ! zcfilter memory-type=system video-direction=horiz ! ",
  };
  for (const gchar *chain : chains) {
    gchar *desc = g_strdup_printf ("videotestsrc num-buffers=5 ! %s"
        "zcdownload name=d memory-type=system ! fakesink", chain);
    GstElement *p = zc_test_parse (desc);
    fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE);
    ZcBusLog log;
    zc_test_collect (p, log, 30 * GST_SECOND);
    fail_unless (log.eos && log.errors.empty (), "%s: %s", desc,
        log.describe ().c_str ());
    GstElement *d = zc_test_get_by_name (p, "d");
    std::string stats = zc_test_stats_to_string (d);
    fail_unless (zc_test_stat (d, "buffers") == 5, "%s: %s", desc,
        stats.c_str ());
    fail_unless (zc_test_stat (d, "copied-buffers") == 0, "%s: %s", desc,
        stats.c_str ());
    gst_object_unref (d);
    gst_element_set_state (p, GST_STATE_NULL);
    gst_object_unref (p);
    g_free (desc);
  }
}

GST_END_TEST;

GST_START_TEST (test_download_pad_templates)
{
  GstElement *e = gst_element_factory_make ("zcdownload", NULL);
  fail_unless (e != NULL);
  GstPad *sink = gst_element_get_static_pad (e, "sink");
  GstPad *src = gst_element_get_static_pad (e, "src");
  GstCaps *sc = gst_pad_get_pad_template_caps (sink);
  GstCaps *oc = gst_pad_get_pad_template_caps (src);
  GstCaps *sys = gst_caps_from_string ("video/x-raw,format=I420");
  GstCaps *zc = gst_caps_from_string
      ("video/x-raw(memory:CUDAZeroCopy),format=I420");
  fail_unless (gst_caps_can_intersect (sc, zc));
  fail_if (gst_caps_can_intersect (sc, sys));
  fail_unless (gst_caps_can_intersect (oc, sys));
  gst_caps_unref (zc);
  gst_caps_unref (sys);
  gst_caps_unref (oc);
  gst_caps_unref (sc);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (e);
}

GST_END_TEST;

static Suite *
zcdownload_suite (void)
{
  Suite *s = suite_create ("zcdownload");
  TCase *tc = zc_test_case ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 180);
  tcase_add_test (tc, test_download_same_memory_no_copy);
  tcase_add_test (tc, test_download_default_strides_need_no_meta_downstream);
  tcase_add_test (tc, test_download_repacks_padded_strides_without_video_meta);
  tcase_add_test (tc, test_download_cpu_frames_need_no_repack);
  tcase_add_test (tc, test_download_pad_templates);
  return s;
}

GST_CHECK_MAIN (zcdownload);

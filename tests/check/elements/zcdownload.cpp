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

/* The memory types a chain can run on here: system memory (the CPU
 * backend) everywhere, mapped and managed memory with a GPU */
static std::vector < const gchar * >
chain_memory_types (void)
{
  std::vector < const gchar * >types = { "system" };
  if (zc_test_have_gpu ()) {
    types.push_back ("mapped");
    types.push_back ("managed");
  }
  return types;
}

/* Chains from zcupload name=u to before zcdownload, with %1$s for the
 * memory type, each pinning its output format (a consumer that converts
 * must not make zcfilter convert instead): frames of another layout than
 * their input (I420's chroma rows of 32 or 19 bytes, a turned frame's rows
 * of 144), and a frame worked on in place in zcupload's buffer */
static const gchar *const download_chains[] = {
  "video/x-raw,format=NV12,width=64,height=48 ! zcupload name=u memory-type=%1$s"
      " ! zcfilter memory-type=%1$s ! "
      "video/x-raw(memory:CUDAZeroCopy),format=I420 ! ",
  "video/x-raw,format=RGBA,width=64,height=36 ! zcupload name=u memory-type=%1$s"
      " ! zcfilter memory-type=%1$s video-direction=90r ! "
      "video/x-raw(memory:CUDAZeroCopy),format=RGBA ! ",
  "video/x-raw,format=I420,width=37,height=13 ! zcupload name=u memory-type=%1$s"
      " ! zcfilter memory-type=%1$s video-direction=horiz ! "
      "video/x-raw(memory:CUDAZeroCopy),format=I420 ! ",
  "video/x-raw,format=I420,width=64,height=48 ! zcupload name=u memory-type=%1$s"
      " ! zcfilter memory-type=%1$s invert=true ! "
      "video/x-raw(memory:CUDAZeroCopy),format=I420 ! ",
};

/* What the chains' ALLOCATION queries and frames showed */
struct LayoutLog
{
  std::mutex lock;
  gint upload_queries = 0;
  gint upload_queries_with_meta = 0;
  gint frames = 0;
  gint pitched_frames = 0;
};

/* zcupload's ALLOCATION query, once answered: did downstream ask for
 * GstVideoMeta? */
static GstPadProbeReturn
record_upload_query (GstPad *, GstPadProbeInfo * info, gpointer user_data)
{
  auto *log = static_cast < LayoutLog * >(user_data);
  GstQuery *q = GST_PAD_PROBE_INFO_QUERY (info);
  if (GST_QUERY_TYPE (q) == GST_QUERY_ALLOCATION) {
    std::lock_guard < std::mutex > lk (log->lock);
    log->upload_queries++;
    if (gst_query_find_allocation_meta (q, GST_VIDEO_META_API_TYPE, NULL))
      log->upload_queries_with_meta++;
  }
  return GST_PAD_PROBE_OK;
}

/* A frame leaving zcdownload: are all its rows pitched for the GPU? */
static GstPadProbeReturn
record_frame_pitch (GstPad *, GstPadProbeInfo * info, gpointer user_data)
{
  auto *log = static_cast < LayoutLog * >(user_data);
  GstVideoMeta *meta =
      gst_buffer_get_video_meta (GST_PAD_PROBE_INFO_BUFFER (info));
  gboolean pitched = meta != NULL;
  for (guint i = 0; meta && i < meta->n_planes; i++)
    pitched &= meta->stride[i] % GST_ZC_ROW_PITCH_ALIGN == 0;
  std::lock_guard < std::mutex > lk (log->lock);
  log->frames++;
  if (pitched)
    log->pitched_frames++;
  return GST_PAD_PROBE_OK;
}

/* Runs each chain on each memory type into @consumer and checks:
 * zcdownload hands every frame on without a copy; the chain asked for video
 * meta exactly when @consumer reads it; and the frames came pitched for the
 * GPU exactly when it does and the memory is a GPU's. */
static void
check_chains_into (const gchar * consumer, gboolean consumer_reads_meta)
{
  for (const gchar *type : chain_memory_types ()) {
    for (const gchar *chain_fmt : download_chains) {
      gchar *chain = g_strdup_printf (chain_fmt, type);
      gchar *desc = g_strdup_printf ("videotestsrc num-buffers=5 ! %s"
          "zcdownload name=d memory-type=%s ! %s", chain, type, consumer);
      GstElement *p = zc_test_parse (desc);
      LayoutLog layout;
      GstElement *up = zc_test_get_by_name (p, "u");
      GstPad *upsrc = gst_element_get_static_pad (up, "src");
      gst_pad_add_probe (upsrc, (GstPadProbeType)
          (GST_PAD_PROBE_TYPE_QUERY_DOWNSTREAM | GST_PAD_PROBE_TYPE_PULL),
          record_upload_query, &layout, NULL);
      gst_object_unref (upsrc);
      gst_object_unref (up);
      GstElement *d = zc_test_get_by_name (p, "d");
      GstPad *dsrc = gst_element_get_static_pad (d, "src");
      gst_pad_add_probe (dsrc, GST_PAD_PROBE_TYPE_BUFFER, record_frame_pitch,
          &layout, NULL);
      gst_object_unref (dsrc);

      fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
          GST_STATE_CHANGE_FAILURE);
      ZcBusLog log;
      zc_test_collect (p, log, 30 * GST_SECOND);
      fail_unless (log.eos && log.errors.empty (), "%s: %s", desc,
          log.describe ().c_str ());
      std::string stats = zc_test_stats_to_string (d);
      fail_unless (zc_test_stat (d, "buffers") == 5, "%s: %s", desc,
          stats.c_str ());
      fail_unless (zc_test_stat (d, "copied-buffers") == 0, "%s: %s", desc,
          stats.c_str ());
      {
        std::lock_guard < std::mutex > lk (layout.lock);
        fail_unless (layout.upload_queries > 0, "%s: no ALLOCATION query "
            "from zcupload", desc);
        fail_unless (layout.upload_queries_with_meta ==
            (consumer_reads_meta ? layout.upload_queries : 0),
            "%s: %d of %d ALLOCATION queries from zcupload took video meta",
            desc, layout.upload_queries_with_meta, layout.upload_queries);
        gboolean gpu_memory = !g_str_equal (type, "system");
        fail_unless_equals_int (layout.frames, 5);
        fail_unless (layout.pitched_frames ==
            (consumer_reads_meta && gpu_memory ? 5 : 0),
            "%s: %d of 5 frames pitched", desc, layout.pitched_frames);
      }
      gst_object_unref (d);
      gst_element_set_state (p, GST_STATE_NULL);
      gst_object_unref (p);
      g_free (desc);
      g_free (chain);
    }
  }
}

/* A consumer that does not read GstVideoMeta (fakesink here, as filesink
 * or a plain appsink) takes the frames without a repack: zcdownload does
 * not ask for video meta, nor, through it, the steps before, so no pool
 * along the chain pitches its rows; every frame keeps GStreamer's default
 * layout. */
GST_START_TEST (test_download_frames_for_a_plain_consumer_need_no_repack)
{
  check_chains_into ("fakesink", FALSE);
}

GST_END_TEST;

/* A consumer that reads GstVideoMeta (videoconvert converting) gets the
 * rows pitched for the GPU's loads where the memory is a GPU's, again
 * without a repack */
GST_START_TEST (test_download_frames_for_a_video_meta_consumer_stay_pitched)
{
  check_chains_into ("videoconvert ! video/x-raw,format=BGRA ! fakesink",
      TRUE);
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
  tcase_add_test (tc, test_download_frames_for_a_plain_consumer_need_no_repack);
  tcase_add_test (tc,
      test_download_frames_for_a_video_meta_consumer_stay_pitched);
  tcase_add_test (tc, test_download_pad_templates);
  return s;
}

GST_CHECK_MAIN (zcdownload);

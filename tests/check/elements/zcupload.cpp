/* gst-zerocopy: zcupload
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Producers that take zcupload's pool write into zero-copy memory directly
 * (no copy); anything else is copied once, strides honoured, and counted.
 */
#include "../zccheck.h"

#include <gst/app/app.h>

#include <set>

/* ---------------------------------------------------------------------- */
/* Producers writing into the pool                                         */
/* ---------------------------------------------------------------------- */

/* The first frame videotestsrc produces for @caps_str, through
 * "videotestsrc ! caps [! zcupload] ! appsink". Returns the sample. */
static GstSample *
first_videotestsrc_frame (const gchar * caps_str, gboolean through_upload,
    GstElement ** pipeline_out)
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=5 pattern=smpte ! "
      "%s %s ! appsink name=sink sync=false wait-on-eos=false", caps_str,
      through_upload ? "! zcupload name=up" : "");
  GstElement *p = zc_test_parse (desc);
  g_free (desc);
  GstElement *sink = zc_test_get_by_name (p, "sink");
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_PLAYING),
      GST_STATE_CHANGE_ASYNC);
  GstSample *sample = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
      30 * GST_SECOND);
  gst_object_unref (sink);
  *pipeline_out = p;
  return sample;
}

static void
check_videotestsrc_zero_copies (const gchar * caps_str)
{
  GstElement *ref_p, *p;
  GstSample *ref = first_videotestsrc_frame (caps_str, FALSE, &ref_p);
  GstSample *got = first_videotestsrc_frame (caps_str, TRUE, &p);
  fail_unless (ref != NULL && got != NULL, "%s: no frame", caps_str);

  /* Same picture, whatever strides the pool gave videotestsrc */
  GstVideoInfo ref_info, got_info;
  fail_unless (gst_video_info_from_caps (&ref_info,
          gst_sample_get_caps (ref)));
  fail_unless (gst_video_info_from_caps (&got_info,
          gst_sample_get_caps (got)));
  GstCapsFeatures *f = gst_caps_get_features (gst_sample_get_caps (got), 0);
  fail_unless (gst_caps_features_contains (f,
          GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY), "%s: output caps %"
      GST_PTR_FORMAT, caps_str, gst_sample_get_caps (got));
  GstBuffer *gb = gst_sample_get_buffer (got);
  for (guint i = 0; i < gst_buffer_n_memory (gb); i++)
    fail_unless (gst_is_zc_memory (gst_buffer_peek_memory (gb, i)));
  GstVideoFrame rf, gf;
  fail_unless (gst_video_frame_map (&rf, &ref_info, gst_sample_get_buffer (ref),
          GST_MAP_READ));
  fail_unless (gst_video_frame_map (&gf, &got_info, gb, GST_MAP_READ));
  std::string diff = zc_test_compare_identical (&rf, &gf, caps_str);
  gst_video_frame_unmap (&gf);
  gst_video_frame_unmap (&rf);
  fail_unless (diff.empty (), "%s", diff.c_str ());
  gst_sample_unref (got);
  gst_sample_unref (ref);

  /* Let the rest run to EOS and count */
  ZcBusLog log;
  zc_test_collect (p, log, 30 * GST_SECOND);
  fail_unless (log.eos, "%s", log.describe ().c_str ());
  GstElement *up = zc_test_get_by_name (p, "up");
  std::string stats = zc_test_stats_to_string (up);
  fail_unless_equals_uint64 (zc_test_stat (up, "buffers"), 5);
  fail_unless (zc_test_stat (up, "zero-copy-buffers") == 5,
      "%s: %s", caps_str, stats.c_str ());
  fail_unless (zc_test_stat (up, "copied-buffers") == 0, "%s: %s", caps_str,
      stats.c_str ());
  fail_unless (zc_test_stat (up, "bytes-copied") == 0, "%s: %s", caps_str,
      stats.c_str ());
  /* Named: fail_unless_equals_string keeps the pointer past the end of
   * the full expression, which would free a temporary std::string */
  std::string backend = zc_test_stat_string (up, "backend");
  fail_unless_equals_string (backend.c_str (), zc_test_expected_backend ());
  gst_object_unref (up);

  gst_element_set_state (p, GST_STATE_NULL);
  gst_element_set_state (ref_p, GST_STATE_NULL);
  gst_object_unref (p);
  gst_object_unref (ref_p);
}

GST_START_TEST (test_upload_pool_taken_by_videotestsrc_zero_copies)
{
  const gchar *caps[] = {
    "video/x-raw,format=RGBA,width=320,height=240",
    "video/x-raw,format=BGRx,width=37,height=13",
    "video/x-raw,format=GRAY8,width=101,height=33",
    "video/x-raw,format=NV12,width=640,height=480",
    "video/x-raw,format=I420,width=37,height=13",
  };
  for (const gchar * c:caps)
    check_videotestsrc_zero_copies (c);
}

GST_END_TEST;

/* Asks appsrc's downstream for its pool, the way an application does
 * (examples/embed-appsrc.cpp), and makes it ready for @caps. */
static GstBufferPool *
downstream_pool (GstElement * appsrc, GstCaps * caps, gboolean * we_activated)
{
  GstPad *srcpad = gst_element_get_static_pad (appsrc, "src");
  GstQuery *query = gst_query_new_allocation (caps, TRUE);
  GstBufferPool *pool = NULL;
  guint size = 0, min = 0, max = 0;
  fail_unless (gst_pad_peer_query (srcpad, query),
      "zcupload did not answer the ALLOCATION query");
  fail_unless (gst_query_get_n_allocation_pools (query) > 0,
      "zcupload proposed no pool");
  gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  fail_unless (pool != NULL);
  fail_unless (GST_IS_ZC_BUFFER_POOL (pool), "proposed pool is a %s",
      G_OBJECT_TYPE_NAME (pool));
  /* appsink, downstream of zcupload here, does not read GstVideoMeta: nor
   * does zcupload ask for it, so the frames keep the default layout */
  gboolean video_meta = gst_query_find_allocation_meta (query,
      GST_VIDEO_META_API_TYPE, NULL);
  fail_if (video_meta, "zcupload takes GstVideoMeta for a consumer that "
      "does not");
  if (gst_query_get_n_allocation_params (query) > 0) {
    GstAllocator *alloc = NULL;
    GstAllocationParams params;
    gst_query_parse_nth_allocation_param (query, 0, &alloc, &params);
    fail_unless (alloc != NULL && GST_IS_ZC_ALLOCATOR (alloc),
        "proposed allocator is not the zero-copy one");
    gst_object_unref (alloc);
  } else {
    fail ("zcupload proposed no allocator");
  }
  gst_query_unref (query);
  gst_object_unref (srcpad);

  *we_activated = FALSE;
  if (!gst_buffer_pool_is_active (pool)) {
    GstVideoInfo info;
    gst_video_info_from_caps (&info, caps);
    size = MAX (size, (guint) info.size);
    GstStructure *config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, size, min, max);
    if (video_meta)
      gst_buffer_pool_config_add_option (config,
          GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config (pool, config)) {
      config = gst_buffer_pool_get_config (pool);
      fail_unless (gst_buffer_pool_config_validate_params (config, caps, size,
              min, max));
      fail_unless (gst_buffer_pool_set_config (pool, config));
    }
    fail_unless (gst_buffer_pool_set_active (pool, TRUE));
    *we_activated = TRUE;
  }
  return pool;
}

static void
wait_for_caps (GstElement * element, const gchar * pad_name)
{
  GstPad *pad = gst_element_get_static_pad (element, pad_name);
  GstCaps *caps = NULL;
  for (int i = 0; i < 3000 && !caps; i++) {
    caps = gst_pad_get_current_caps (pad);
    if (!caps)
      g_usleep (10000);
  }
  fail_unless (caps != NULL, "%s:%s never got caps",
      GST_ELEMENT_NAME (element), pad_name);
  gst_caps_unref (caps);
  gst_object_unref (pad);
}

GST_START_TEST (test_upload_pool_taken_by_appsrc_zero_copies)
{
  const gint n = 8;
  GstElement *p = zc_test_parse ("appsrc name=src format=time ! "
      "zcupload name=up ! appsink name=sink sync=false");
  GstElement *src = zc_test_get_by_name (p, "src");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  GstElement *up = zc_test_get_by_name (p, "up");
  GstCaps *caps = zc_test_raw_caps (GST_VIDEO_FORMAT_NV12, 200, 100);
  GstVideoInfo info;
  gst_video_info_from_caps (&info, caps);
  gst_app_src_set_caps (GST_APP_SRC (src), caps);

  fail_unless (gst_element_set_state (p,
          GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
  /* appsrc negotiates before it waits for data */
  wait_for_caps (up, "sink");

  gboolean we_activated;
  GstBufferPool *pool = downstream_pool (src, caps, &we_activated);
  std::set < GstMemory * >pushed;
  for (gint i = 0; i < n; i++) {
    GstBuffer *b = NULL;
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
        GST_FLOW_OK);
    pushed.insert (gst_buffer_peek_memory (b, 0));
    GstVideoFrame frame;
    fail_unless (gst_video_frame_map (&frame, &info, b, GST_MAP_WRITE));
    for (guint pl = 0; pl < GST_VIDEO_FRAME_N_PLANES (&frame); pl++) {
      gsize row_bytes;
      guint rows;
      zc_test_plane_geometry (&info, pl, &row_bytes, &rows);
      guint8 *d = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame, pl);
      for (guint y = 0; y < rows; y++)
        for (gsize x = 0; x < row_bytes; x++)
          d[(gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, pl) + x] =
              (guint8) (x + 3 * y + 17 * i + 50 * pl);
    }
    gst_video_frame_unmap (&frame);
    GST_BUFFER_PTS (b) = i * GST_SECOND / 30;
    GST_BUFFER_DURATION (b) = GST_SECOND / 30;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), b),
        GST_FLOW_OK);

    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        30 * GST_SECOND);
    fail_unless (s != NULL, "frame %d did not come out", i);
    GstBuffer *out = gst_sample_get_buffer (s);
    fail_unless (pushed.count (gst_buffer_peek_memory (out, 0)) == 1,
        "frame %d: output memory is not one the application wrote", i);
    GstVideoInfo out_info;
    gst_video_info_from_caps (&out_info, gst_sample_get_caps (s));
    fail_unless (gst_video_frame_map (&frame, &out_info, out, GST_MAP_READ));
    for (guint pl = 0; pl < GST_VIDEO_FRAME_N_PLANES (&frame); pl++) {
      gsize row_bytes;
      guint rows;
      zc_test_plane_geometry (&info, pl, &row_bytes, &rows);
      const guint8 *d = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame,
          pl);
      gboolean same = TRUE;
      for (guint y = 0; y < rows; y++)
        for (gsize x = 0; x < row_bytes; x++)
          same &= d[(gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, pl) + x]
              == (guint8) (x + 3 * y + 17 * i + 50 * pl);
      fail_unless (same, "frame %d plane %u differs from what was written", i,
          pl);
    }
    gst_video_frame_unmap (&frame);
    gst_sample_unref (s);
  }
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  ZcBusLog log;
  zc_test_collect (p, log, 30 * GST_SECOND);
  fail_unless (log.eos, "%s", log.describe ().c_str ());

  std::string stats = zc_test_stats_to_string (up);
  fail_unless (zc_test_stat (up, "buffers") == (guint64) n, "%s",
      stats.c_str ());
  fail_unless (zc_test_stat (up, "zero-copy-buffers") == (guint64) n, "%s",
      stats.c_str ());
  fail_unless (zc_test_stat (up, "copied-buffers") == 0, "%s", stats.c_str ());
  fail_unless (zc_test_stat (up, "bytes-copied") == 0, "%s", stats.c_str ());

  gst_element_set_state (p, GST_STATE_NULL);
  if (we_activated)
    gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  gst_caps_unref (caps);
  gst_object_unref (up);
  gst_object_unref (sink);
  gst_object_unref (src);
  gst_object_unref (p);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* Foreign buffers are copied                                             */
/* ---------------------------------------------------------------------- */

/* A system-memory buffer of @format with the given strides and plane
 * offsets (gaps between planes), random bytes everywhere. */
static GstBuffer *
foreign_buffer (GstVideoFormat format, gint w, gint h, const gint strides[],
    GstVideoInfo * info_out, guint32 seed)
{
  GstVideoInfo info;
  gst_video_info_set_format (&info, format, w, h);
  gsize offset[GST_VIDEO_MAX_PLANES] = { 0, };
  gint stride[GST_VIDEO_MAX_PLANES] = { 0, };
  gsize total = 0;
  for (guint p = 0; p < GST_VIDEO_INFO_N_PLANES (&info); p++) {
    gsize row_bytes;
    guint rows;
    zc_test_plane_geometry (&info, p, &row_bytes, &rows);
    fail_unless ((gsize) strides[p] >= row_bytes);
    offset[p] = total + 24;     /* a gap before each plane */
    stride[p] = strides[p];
    total = offset[p] + (gsize) strides[p] * rows;
    info.offset[p] = offset[p];
    info.stride[p] = stride[p];
  }
  info.size = total + 40;
  GstBuffer *b = gst_buffer_new_allocate (NULL, info.size, NULL);
  zc_test_fill_random (b, seed);
  gst_buffer_add_video_meta_full (b, GST_VIDEO_FRAME_FLAG_NONE, format, w, h,
      GST_VIDEO_INFO_N_PLANES (&info), offset, stride);
  *info_out = info;
  return b;
}

static void
check_foreign_copy (GstVideoFormat format, gint w, gint h,
    const gint strides[], gboolean adopt = FALSE)
{
  GstHarness *hr = gst_harness_new ("zcupload");
  g_object_set (hr->element, "adopt", adopt, NULL);
  /* adopted (registered with CUDA, used in place) only on a GPU */
  gboolean adopted = adopt && zc_test_have_gpu ();
  gst_harness_set_src_caps (hr, zc_test_raw_caps (format, w, h));
  GstVideoInfo in_info;
  GstBuffer *in = foreign_buffer (format, w, h, strides, &in_info, 42 + w);

  fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in)),
      GST_FLOW_OK);
  GstBuffer *out = gst_harness_try_pull (hr);
  fail_unless (out != NULL);
  fail_unless (gst_is_zc_memory (gst_buffer_peek_memory (out, 0)),
      "the output is not in zero-copy memory");

  GstCaps *out_caps = gst_pad_get_current_caps (hr->sinkpad);
  GstVideoInfo out_info;
  fail_unless (gst_video_info_from_caps (&out_info, out_caps));
  GstVideoFrame fin, fout;
  /* gst_video_frame_map takes the meta's strides; the info as well */
  fail_unless (gst_video_frame_map (&fin, &in_info, in, GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fout, &out_info, out, GST_MAP_READ));
  std::string diff = zc_test_compare_identical (&fin, &fout, "copy");
  gst_video_frame_unmap (&fout);
  gst_video_frame_unmap (&fin);
  fail_unless (diff.empty (), "%s", diff.c_str ());

  std::string stats = zc_test_stats_to_string (hr->element);
  fail_unless (zc_test_stat (hr->element, "buffers") == 1, "%s",
      stats.c_str ());
  fail_unless (zc_test_stat (hr->element, "copied-buffers") ==
      (adopted ? 0u : 1u), "%s", stats.c_str ());
  fail_unless (zc_test_stat (hr->element, "zero-copy-buffers") ==
      (adopted ? 1u : 0u), "%s", stats.c_str ());
  fail_unless (zc_test_stat (hr->element, "adopted-buffers") ==
      (adopted ? 1u : 0u), "%s", stats.c_str ());
  fail_unless ((zc_test_stat (hr->element, "bytes-copied") > 0) == !adopted,
      "%s", stats.c_str ());

  gst_caps_unref (out_caps);
  gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_harness_teardown (hr);
}

GST_START_TEST (test_upload_copies_foreign_buffer_with_odd_strides)
{
  const gint rgba[] = { 200 };
  check_foreign_copy (GST_VIDEO_FORMAT_RGBA, 37, 13, rgba);
  const gint gray[] = { 41 };
  check_foreign_copy (GST_VIDEO_FORMAT_GRAY8, 37, 13, gray);
  const gint i420[] = { 64, 40, 48 };
  check_foreign_copy (GST_VIDEO_FORMAT_I420, 37, 13, i420);
  const gint nv12[] = { 48, 56 };
  check_foreign_copy (GST_VIDEO_FORMAT_NV12, 37, 13, nv12);
  const gint nv12_big[] = { 2048, 1984 };
  check_foreign_copy (GST_VIDEO_FORMAT_NV12, 1921, 1081, nv12_big);
}

GST_END_TEST;

/* The same frames adopted: on a GPU their memory is registered and passed
 * on as it is, strides and all; the CPU backend copies them */
GST_START_TEST (test_upload_adopts_foreign_buffer_with_odd_strides)
{
  const gint rgba[] = { 200 };
  check_foreign_copy (GST_VIDEO_FORMAT_RGBA, 37, 13, rgba, TRUE);
  const gint i420[] = { 64, 40, 48 };
  check_foreign_copy (GST_VIDEO_FORMAT_I420, 37, 13, i420, TRUE);
  const gint nv12_big[] = { 2048, 1984 };
  check_foreign_copy (GST_VIDEO_FORMAT_NV12, 1921, 1081, nv12_big, TRUE);
}

GST_END_TEST;

GST_START_TEST (test_upload_copies_plain_system_buffer)
{
  /* No GstVideoMeta at all: default layout */
  GstHarness *hr = gst_harness_new ("zcupload");
  g_object_set (hr->element, "adopt", FALSE, NULL);
  gst_harness_set_src_caps (hr, zc_test_raw_caps (GST_VIDEO_FORMAT_I420, 64,
          48));
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FORMAT_I420, 64, 48);
  for (int i = 0; i < 3; i++) {
    GstBuffer *in = gst_buffer_new_allocate (NULL, info.size, NULL);
    zc_test_fill_random (in, 7 + i);
    fail_unless_equals_int (gst_harness_push (hr, gst_buffer_ref (in)),
        GST_FLOW_OK);
    GstBuffer *out = gst_harness_try_pull (hr);
    fail_unless (out != NULL);
    GstVideoFrame fin, fout;
    fail_unless (gst_video_frame_map (&fin, &info, in, GST_MAP_READ));
    fail_unless (gst_video_frame_map (&fout, &info, out, GST_MAP_READ));
    std::string diff = zc_test_compare_identical (&fin, &fout, "plain copy");
    gst_video_frame_unmap (&fout);
    gst_video_frame_unmap (&fin);
    fail_unless (diff.empty (), "%s", diff.c_str ());
    fail_unless (GST_BUFFER_PTS (out) == GST_BUFFER_PTS (in));
    gst_buffer_unref (out);
    gst_buffer_unref (in);
  }
  fail_unless_equals_uint64 (zc_test_stat (hr->element, "copied-buffers"), 3);
  /* at least the visible bytes of three frames */
  fail_unless (zc_test_stat (hr->element, "bytes-copied") >=
      3u * (64 * 48 + 2 * 32 * 24));
  gst_harness_teardown (hr);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* Cameras: what v4l2src io-mode=userptr requires of the pool             */
/* ---------------------------------------------------------------------- */

/* v4l2src io-mode=userptr captures into buffers of the downstream pool: the
 * driver gets each frame's address (user pointers: page-aligned for the
 * drivers that map them by pages), the single-planar API needs the planes
 * one after the other (plane i + 1 starts at plane i + bytesperline x its
 * rows, chroma bytesperline extrapolated from luma's), and the buffer must
 * hold sizeimage. Checked on buffers of the pool zcupload proposes, for the
 * common camera formats and sizes, with the pool's luma stride as
 * bytesperline. At these sizes the stride is also the unpadded row, which
 * drivers that cannot pad their rows (most UVC cameras) need. */
GST_START_TEST (test_upload_pool_fits_v4l2_userptr)
{
  const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_YUY2,
    GST_VIDEO_FORMAT_UYVY, GST_VIDEO_FORMAT_NV12
  };
  const gint sizes[][2] = { {640, 480}, {1280, 720}, {1920, 1080},
    {1024, 768}, {3840, 2160}
  };
  const gsize page = 4096;
  for (GstVideoFormat fmt : formats) {
    for (const auto & sz : sizes) {
      GstHarness *hr = gst_harness_new ("zcupload");
      GstCaps *caps = zc_test_raw_caps (fmt, sz[0], sz[1]);
      gst_harness_set_src_caps (hr, gst_caps_ref (caps));
      GstQuery *query = gst_query_new_allocation (caps, TRUE);
      fail_unless (gst_pad_peer_query (hr->srcpad, query));
      fail_unless (gst_query_get_n_allocation_pools (query) > 0);
      GstBufferPool *pool = NULL;
      guint size = 0, min = 0, max = 0;
      gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
      fail_unless (pool != NULL);
      /* what v4l2src does with it: its own size, video meta, its count */
      GstStructure *config = gst_buffer_pool_get_config (pool);
      GstVideoInfo info;
      fail_unless (gst_video_info_from_caps (&info, caps));
      gst_buffer_pool_config_set_params (config, caps, info.size, 4, 4);
      gst_buffer_pool_config_add_option (config,
          GST_BUFFER_POOL_OPTION_VIDEO_META);
      fail_unless (gst_buffer_pool_set_config (pool, config));
      fail_unless (gst_buffer_pool_set_active (pool, TRUE));

      GstBuffer *buf = NULL;
      fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &buf,
              NULL), GST_FLOW_OK);
      fail_unless_equals_int (gst_buffer_n_memory (buf), 1);
      GstVideoMeta *meta = gst_buffer_get_video_meta (buf);
      fail_unless (meta != NULL);
      GstVideoFrame frame;
      fail_unless (gst_video_frame_map (&frame, &info, buf, GST_MAP_WRITE));
      const gchar *what = gst_video_format_to_string (fmt);
      guintptr addr = (guintptr) GST_VIDEO_FRAME_PLANE_DATA (&frame, 0);
      fail_unless (addr % page == 0, "%s %dx%d: frame at %p, not "
          "page-aligned", what, sz[0], sz[1], (gpointer) addr);
      const GstVideoFormatInfo *finfo = info.finfo;
      gint bytesperline = GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
      gint unpadded = GST_VIDEO_INFO_PLANE_STRIDE (&info, 0);
      fail_unless_equals_int (bytesperline, unpadded);
      gsize sizeimage = 0;
      for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&frame); p++) {
        /* packed 4:2:2 has one plane; NV12's interleaved chroma plane has
         * the luma plane's bytesperline (as v4l2 extrapolates it) */
        gint estride = bytesperline;
        guint rows = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT (finfo, p, sz[1]);
        fail_unless_equals_int (GST_VIDEO_FRAME_PLANE_STRIDE (&frame, p),
            estride);
        if (p + 1 < GST_VIDEO_FRAME_N_PLANES (&frame)) {
          const guint8 *next = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA
              (&frame, p) + (gsize) estride * rows;
          fail_unless (next == GST_VIDEO_FRAME_PLANE_DATA (&frame, p + 1),
              "%s %dx%d: plane %u does not follow plane %u", what, sz[0],
              sz[1], p + 1, p);
        }
        sizeimage += (gsize) estride * rows;
      }
      gst_video_frame_unmap (&frame);
      fail_unless (gst_buffer_get_size (buf) >= sizeimage, "%s %dx%d: %"
          G_GSIZE_FORMAT " bytes, sizeimage %" G_GSIZE_FORMAT, what, sz[0],
          sz[1], gst_buffer_get_size (buf), sizeimage);

      gst_buffer_unref (buf);
      gst_buffer_pool_set_active (pool, FALSE);
      gst_object_unref (pool);
      gst_query_unref (query);
      gst_caps_unref (caps);
      gst_harness_teardown (hr);
    }
  }
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* Properties                                                             */
/* ---------------------------------------------------------------------- */

GST_START_TEST (test_upload_common_properties)
{
  const gchar *names[] = { "zcupload", "zcfilter", "zcdownload" };
  for (const gchar * name:names) {
    GstElement *e = gst_element_factory_make (name, NULL);
    fail_unless (e != NULL, "no element %s", name);
    GObjectClass *k = G_OBJECT_GET_CLASS (e);

    GParamSpec *ps = g_object_class_find_property (k, "device-id");
    fail_unless (ps && G_PARAM_SPEC_VALUE_TYPE (ps) == G_TYPE_INT);
    fail_unless_equals_int (G_PARAM_SPEC_INT (ps)->default_value, -1);
    fail_unless_equals_int (G_PARAM_SPEC_INT (ps)->minimum, -1);

    ps = g_object_class_find_property (k, "memory-type");
    fail_unless (ps && G_PARAM_SPEC_VALUE_TYPE (ps) == GST_TYPE_ZC_MEMORY_TYPE);
    fail_unless_equals_int (G_PARAM_SPEC_ENUM (ps)->default_value,
        GST_ZC_MEMORY_TYPE_AUTO);

    ps = g_object_class_find_property (k, "cpu-fallback");
    fail_unless (ps && G_PARAM_SPEC_VALUE_TYPE (ps) == G_TYPE_BOOLEAN);
    fail_unless (G_PARAM_SPEC_BOOLEAN (ps)->default_value);

    ps = g_object_class_find_property (k, "stats");
    fail_unless (ps && G_PARAM_SPEC_VALUE_TYPE (ps) == GST_TYPE_STRUCTURE);
    fail_unless (ps->flags & G_PARAM_READABLE);
    fail_if (ps->flags & G_PARAM_WRITABLE, "stats must be read-only");

    /* memory-type by nick, as gst-launch sets it */
    gst_util_set_object_arg (G_OBJECT (e), "memory-type", "system");
    gint mt;
    g_object_get (e, "memory-type", &mt, NULL);
    fail_unless_equals_int (mt, GST_ZC_MEMORY_TYPE_SYSTEM);

    /* Before anything ran: zero counters */
    fail_unless_equals_uint64 (zc_test_stat (e, "buffers"), 0);
    fail_unless_equals_uint64 (zc_test_stat (e, "zero-copy-buffers"), 0);
    fail_unless_equals_uint64 (zc_test_stat (e, "copied-buffers"), 0);
    fail_unless_equals_uint64 (zc_test_stat (e, "bytes-copied"), 0);
    gst_object_unref (e);
  }
}

GST_END_TEST;

GST_START_TEST (test_upload_pad_templates)
{
  GstElement *e = gst_element_factory_make ("zcupload", NULL);
  GstPad *sink = gst_element_get_static_pad (e, "sink");
  GstPad *src = gst_element_get_static_pad (e, "src");
  GstCaps *sc = gst_pad_get_pad_template_caps (sink);
  GstCaps *oc = gst_pad_get_pad_template_caps (src);
  GstCaps *sys = gst_caps_from_string ("video/x-raw,format=NV12");
  GstCaps *zc = gst_caps_from_string
      ("video/x-raw(memory:CUDAZeroCopy),format=NV12");
  fail_unless (gst_caps_can_intersect (sc, sys));
  fail_unless (gst_caps_can_intersect (oc, zc));
  fail_if (gst_caps_can_intersect (oc, sys));
  GstCaps *v210 = gst_caps_from_string ("video/x-raw,format=v210");
  fail_if (gst_caps_can_intersect (sc, v210));
  gst_caps_unref (v210);
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
zcupload_suite (void)
{
  Suite *s = suite_create ("zcupload");
  TCase *tc = zc_test_case ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 180);
  tcase_add_test (tc, test_upload_pool_taken_by_videotestsrc_zero_copies);
  tcase_add_test (tc, test_upload_pool_taken_by_appsrc_zero_copies);
  tcase_add_test (tc, test_upload_copies_foreign_buffer_with_odd_strides);
  tcase_add_test (tc, test_upload_adopts_foreign_buffer_with_odd_strides);
  tcase_add_test (tc, test_upload_copies_plain_system_buffer);
  tcase_add_test (tc, test_upload_pool_fits_v4l2_userptr);
  tcase_add_test (tc, test_upload_common_properties);
  tcase_add_test (tc, test_upload_pad_templates);
  return s;
}

GST_CHECK_MAIN (zcupload);

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * embed-appsrc: an application that draws its own frames and hands them to
 * the GPU without a copy.
 *
 *   appsrc ! zcupload ! zcfilter invert=true ! zcdownload ! appsink
 *
 * The one rule for zero copies from appsrc: do not allocate frames yourself.
 * A buffer from gst_buffer_new_allocate() lives in ordinary pageable memory
 * that the GPU cannot see, so zcupload has to copy it. zcupload proposes a
 * buffer pool of GPU-visible memory in the ALLOCATION query; take that pool
 * and write every frame straight into one of its buffers.
 *
 * appsrc does not hand its downstream pool to the application, so we ask for
 * it ourselves: an ALLOCATION query on appsrc's src pad peer, sent from the
 * first need-data callback. By then appsrc has pushed the caps we set and
 * zcupload is negotiated (a GstBaseTransform answers ALLOCATION only once it
 * has caps).
 *
 * The frames come back in appsink; the program checks that every pixel it
 * samples is inverted (R,G,B -> 255 - v, alpha untouched) and that zcupload
 * counted every buffer as zero-copy. Exit status 0 means both held.
 *
 *   GST_PLUGIN_PATH=build/gst build/examples/embed-appsrc
 */

#include <gst/gst.h>
#include <gst/app/app.h>
#include <gst/video/video.h>

#include <initializer_list>
#include <mutex>

namespace {

constexpr gint kWidth = 640;
constexpr gint kHeight = 480;
constexpr gint kFrames = 60;
constexpr gint kFpsN = 30;

/* The pattern the application draws: every channel differs, and alpha is
 * not 255 so that "alpha untouched" is a real check. */
struct Rgba
{
  guint8 r, g, b, a;
};

Rgba
source_pixel(gint x, gint y, gint frame)
{
  return Rgba{ (guint8)(x + frame), (guint8)(y * 2), (guint8)(x ^ y),
               (guint8)(0x40 + (frame & 0x3f)) };
}

struct App
{
  GstElement *appsrc = nullptr;
  GstVideoInfo info;

  /* Touched by the streaming thread (need-data) and, at shutdown, by the
   * main thread. */
  std::mutex lock;
  GstBufferPool *pool = nullptr;
  gboolean we_activated_pool = FALSE;
  gboolean pool_query_done = FALSE;
  gboolean shutting_down = FALSE;

  gint pushed = 0; /* streaming thread only */
  guint64 allocated_ourselves = 0;
};

/* Asks the element after appsrc for a buffer pool and makes it ready to hand
 * out buffers. Returns the pool (owned by @app) or nullptr if downstream
 * proposed none. Called from the streaming thread, where the serialized
 * ALLOCATION query belongs. */
GstBufferPool *
get_downstream_pool(App *app)
{
  GstPad *srcpad = gst_element_get_static_pad(app->appsrc, "src");
  GstCaps *caps = gst_pad_get_current_caps(srcpad);
  if (!caps) /* not negotiated: the query would not be answered */
  {
    gst_object_unref(srcpad);
    return nullptr;
  }

  GstQuery *query = gst_query_new_allocation(caps, TRUE);
  GstBufferPool *pool = nullptr;
  guint size = 0, min = 0, max = 0;
  gboolean video_meta = FALSE;
  if (gst_pad_peer_query(srcpad, query)
      && gst_query_get_n_allocation_pools(query) > 0) {
    gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, &min, &max);
    video_meta = gst_query_find_allocation_meta(query,
                                                GST_VIDEO_META_API_TYPE,
                                                nullptr);
  }
  gst_query_unref(query);
  gst_object_unref(srcpad);

  if (!pool) {
    gst_caps_unref(caps);
    return nullptr;
  }

  gboolean activated = FALSE;
  if (gst_buffer_pool_is_active(pool)) {
    /* appsrc's base class also sent an ALLOCATION query while negotiating
     * and may already have configured and activated this very pool; an
     * active pool refuses a new config, and needs none. */
  } else {
    size = MAX(size, (guint)GST_VIDEO_INFO_SIZE(&app->info));
    GstStructure *config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, size, min, max);
    /* Lets the pool attach a GstVideoMeta (padded strides, plane offsets)
     * that gst_video_frame_map() honours, when downstream asked for one:
     * it does when the consumer at the end reads video meta, so that the
     * rows can be pitched for the GPU; appsink here does not, and the
     * frames keep the default layout that it reads as it is. */
    if (video_meta
        && gst_buffer_pool_has_option(pool, GST_BUFFER_POOL_OPTION_VIDEO_META))
      gst_buffer_pool_config_add_option(config,
                                        GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config(pool, config)) {
      /* The pool adjusted the config; take its version if it still
       * fits our frames. */
      config = gst_buffer_pool_get_config(pool);
      if (!gst_buffer_pool_config_validate_params(config, caps, size, min, max)
          || !gst_buffer_pool_set_config(pool, config)) {
        g_printerr("embed-appsrc: the downstream pool rejected our "
                   "configuration\n");
        gst_object_unref(pool);
        gst_caps_unref(caps);
        return nullptr;
      }
    }
    if (!gst_buffer_pool_set_active(pool, TRUE)) {
      g_printerr("embed-appsrc: could not activate the downstream pool\n");
      gst_object_unref(pool);
      gst_caps_unref(caps);
      return nullptr;
    }
    activated = TRUE;
  }
  gst_caps_unref(caps);

  std::lock_guard<std::mutex> guard(app->lock);
  app->pool = pool;
  app->we_activated_pool = activated;
  if (app->shutting_down) /* main thread stopped us meanwhile */
    gst_buffer_pool_set_flushing(pool, TRUE);
  return pool;
}

void
fill_frame(GstVideoFrame *frame, gint n)
{
  guint8 *pixels = (guint8 *)GST_VIDEO_FRAME_PLANE_DATA(frame, 0);
  /* The stride comes from the buffer's GstVideoMeta: a GPU pool may pad
   * rows, so never assume width * 4. */
  gint stride = GST_VIDEO_FRAME_PLANE_STRIDE(frame, 0);
  for (gint y = 0; y < GST_VIDEO_FRAME_HEIGHT(frame); y++) {
    guint8 *row = pixels + (gsize)y * stride;
    for (gint x = 0; x < GST_VIDEO_FRAME_WIDTH(frame); x++) {
      Rgba p = source_pixel(x, y, n);
      row[4 * x + 0] = p.r;
      row[4 * x + 1] = p.g;
      row[4 * x + 2] = p.b;
      row[4 * x + 3] = p.a;
    }
  }
}

/* appsrc wants a frame: take a buffer from the downstream pool, draw into
 * it, push it. Nothing is allocated here in steady state. */
void
on_need_data(GstAppSrc *src, guint, gpointer user_data)
{
  App *app = (App *)user_data;

  if (app->pushed == kFrames) {
    gst_app_src_end_of_stream(src);
    return;
  }

  GstBufferPool *pool;
  gboolean first_call;
  {
    std::lock_guard<std::mutex> guard(app->lock);
    if (app->shutting_down)
      return;
    first_call = !app->pool_query_done;
    app->pool_query_done = TRUE;
    pool = app->pool;
  }
  if (first_call) {
    pool = get_downstream_pool(app);
    if (!pool)
      g_printerr("embed-appsrc: downstream proposed no buffer pool; "
                 "allocating frames ourselves (zcupload will copy them)\n");
  }

  GstBuffer *buf = nullptr;
  if (pool) {
    /* Blocks while every pool buffer is downstream; set_flushing() at
     * shutdown releases it. */
    if (gst_buffer_pool_acquire_buffer(pool, &buf, nullptr) != GST_FLOW_OK)
      return;
  } else {
    buf = gst_buffer_new_allocate(nullptr, GST_VIDEO_INFO_SIZE(&app->info),
                                  nullptr);
    gst_buffer_add_video_meta_full(buf, GST_VIDEO_FRAME_FLAG_NONE,
                                   GST_VIDEO_INFO_FORMAT(&app->info), kWidth,
                                   kHeight, GST_VIDEO_INFO_N_PLANES(&app->info),
                                   app->info.offset, app->info.stride);
    app->allocated_ourselves++;
  }

  GstVideoFrame frame;
  if (!gst_video_frame_map(&frame, &app->info, buf, GST_MAP_WRITE)) {
    g_printerr("embed-appsrc: could not map a buffer for writing\n");
    gst_buffer_unref(buf);
    gst_app_src_end_of_stream(src);
    return;
  }
  fill_frame(&frame, app->pushed);
  gst_video_frame_unmap(&frame);

  GST_BUFFER_PTS(buf)
      = gst_util_uint64_scale_int(app->pushed, GST_SECOND, kFpsN);
  GST_BUFFER_DURATION(buf) = gst_util_uint64_scale_int(1, GST_SECOND, kFpsN);
  app->pushed++;
  gst_app_src_push_buffer(src, buf); /* takes ownership */
}

/* Checks a few pixels of frame @n against the expected inversion. */
gboolean
check_frame(GstSample *sample, gint n)
{
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, gst_sample_get_caps(sample)))
    return FALSE;
  GstVideoFrame frame;
  if (!gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample),
                           GST_MAP_READ))
    return FALSE;

  const gint w = GST_VIDEO_FRAME_WIDTH(&frame);
  const gint h = GST_VIDEO_FRAME_HEIGHT(&frame);
  const gint probes[][2] = { { 0, 0 },         { w - 1, 0 },     { 0, h - 1 },
                             { w - 1, h - 1 }, { w / 2, h / 3 }, { 17, 101 } };
  const guint8 *pixels = (const guint8 *)GST_VIDEO_FRAME_PLANE_DATA(&frame, 0);
  const gint stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);

  gboolean ok = TRUE;
  for (const auto &xy : probes) {
    const gint x = xy[0], y = xy[1];
    const guint8 *p = pixels + (gsize)y * stride + 4 * x;
    Rgba in = source_pixel(x, y, n);
    Rgba want{ (guint8)(255 - in.r), (guint8)(255 - in.g), (guint8)(255 - in.b),
               in.a };
    if (p[0] != want.r || p[1] != want.g || p[2] != want.b || p[3] != want.a) {
      g_printerr("embed-appsrc: frame %d pixel (%d,%d) is "
                 "%u,%u,%u,%u, expected %u,%u,%u,%u\n",
                 n, x, y, p[0], p[1], p[2], p[3], want.r, want.g, want.b,
                 want.a);
      ok = FALSE;
    }
  }
  gst_video_frame_unmap(&frame);
  return ok;
}

gboolean
drain_bus(GstBus *bus)
{
  gboolean failed = FALSE;
  GstMessage *msg;
  while (
      (msg = gst_bus_pop_filtered(
           bus, (GstMessageType)(GST_MESSAGE_ERROR | GST_MESSAGE_WARNING)))) {
    GError *err = nullptr;
    gchar *debug = nullptr;
    gboolean is_error = GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR;
    if (is_error)
      gst_message_parse_error(msg, &err, &debug);
    else
      gst_message_parse_warning(msg, &err, &debug);
    g_printerr("%s from %s: %s\n%s%s%s", is_error ? "ERROR" : "warning",
               GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), err->message,
               debug ? "  debug: " : "", debug ? debug : "", debug ? "\n" : "");
    failed |= is_error;
    g_clear_error(&err);
    g_free(debug);
    gst_message_unref(msg);
  }
  return failed;
}

} // namespace

int
main(int argc, char **argv)
{
  gst_init(&argc, &argv);

  for (const char *name : { "zcupload", "zcfilter", "zcdownload" }) {
    GstElementFactory *f = gst_element_factory_find(name);
    if (!f) {
      g_printerr("embed-appsrc: element '%s' not found: set "
                 "GST_PLUGIN_PATH=<repo>/build/gst\n",
                 name);
      return 1;
    }
    gst_object_unref(f);
  }

  GError *err = nullptr;
  GstElement *pipeline = gst_parse_launch(
      "appsrc name=src format=time ! zcupload name=up ! "
      "zcfilter invert=true ! zcdownload ! appsink name=sink sync=false",
      &err);
  if (!pipeline || err) {
    g_printerr("embed-appsrc: could not build the pipeline: %s\n",
               err ? err->message : "unknown error");
    g_clear_error(&err);
    if (pipeline)
      gst_object_unref(pipeline);
    return 1;
  }

  App app;
  gst_video_info_set_format(&app.info, GST_VIDEO_FORMAT_RGBA, kWidth, kHeight);
  app.info.fps_n = kFpsN;
  app.info.fps_d = 1;
  app.appsrc = gst_bin_get_by_name(GST_BIN(pipeline), "src");
  GstElement *up = gst_bin_get_by_name(GST_BIN(pipeline), "up");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstBus *bus = gst_element_get_bus(pipeline);

  /* Caps go on appsrc before it starts, so that appsrc negotiates them
   * before its first need-data. */
  GstCaps *caps = gst_video_info_to_caps(&app.info);
  gst_app_src_set_caps(GST_APP_SRC(app.appsrc), caps);
  gst_caps_unref(caps);

  GstAppSrcCallbacks callbacks = {};
  callbacks.need_data = on_need_data;
  gst_app_src_set_callbacks(GST_APP_SRC(app.appsrc), &callbacks, &app, nullptr);

  gboolean failed = FALSE;
  if (gst_element_set_state(pipeline, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE) {
    g_printerr("embed-appsrc: the pipeline did not start\n");
    failed = TRUE;
  }

  gint received = 0;
  gboolean pixels_ok = TRUE;
  while (!failed) {
    GstSample *sample
        = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 100 * GST_MSECOND);
    if (sample) {
      pixels_ok &= check_frame(sample, received);
      received++;
      gst_sample_unref(sample);
    }
    failed = drain_bus(bus);
    if (!sample && gst_app_sink_is_eos(GST_APP_SINK(sink)))
      break;
  }

  guint64 buffers = 0, zero_copy = 0;
  GstStructure *stats = nullptr;
  g_object_get(up, "stats", &stats, nullptr);
  if (stats) {
    gst_structure_get_uint64(stats, "buffers", &buffers);
    gst_structure_get_uint64(stats, "zero-copy-buffers", &zero_copy);
    gst_structure_free(stats);
  }

  /* Release a need-data callback blocked in acquire_buffer(), then stop. */
  {
    std::lock_guard<std::mutex> guard(app.lock);
    app.shutting_down = TRUE;
    if (app.pool)
      gst_buffer_pool_set_flushing(app.pool, TRUE);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  failed |= drain_bus(bus);
  if (app.pool) {
    if (app.we_activated_pool)
      gst_buffer_pool_set_active(app.pool, FALSE);
    gst_object_unref(app.pool);
  }

  g_print("frames: %d of %d received, pixels %s\n", received, kFrames,
          pixels_ok ? "inverted as expected" : "WRONG");
  g_print("zero-copy: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " buffers\n",
          zero_copy, buffers);

  int rc = 0;
  if (failed || received != kFrames || !pixels_ok)
    rc = 1;
  else if (buffers == 0) {
    g_printerr("embed-appsrc: zcupload counted no buffers in its stats\n");
    rc = 1;
  } else if (zero_copy != buffers) {
    g_printerr("embed-appsrc: %" G_GUINT64_FORMAT
               " buffers were copied by zcupload%s\n",
               buffers - zero_copy,
               app.allocated_ourselves
                   ? " (frames were allocated by the application)"
                   : "");
    rc = 1;
  }

  gst_object_unref(bus);
  gst_object_unref(sink);
  gst_object_unref(up);
  gst_object_unref(app.appsrc);
  gst_object_unref(pipeline);
  return rc;
}

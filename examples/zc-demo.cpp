/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * zc-demo: runs test frames through the zerocopy elements and reports what
 * happened.
 *
 *   videotestsrc ! video/x-raw,format=RGBA ! zcupload ! zcfilter
 *                ! zcdownload ! appsink
 *
 * It prints the backend that ran (CUDA or the CPU fallback), frames per
 * second between the first and last frame that reached the application, how
 * many buffers were copied on the way (the point of the plugin: none), and
 * writes the middle frame as a PNG.
 *
 * Run it through tools/demo.sh, or by hand:
 *   GST_PLUGIN_PATH=build/gst build/examples/zc-demo --frames 100
 */

#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include <cinttypes>
#include <cstdio>
#include <string>

namespace {

struct Options
{
  gint width = 1920;
  gint height = 1080;
  gint frames = 300;
  gchar *output = nullptr;
};

/* What one element's `stats` property says. */
struct Stats
{
  guint64 buffers = 0;
  guint64 zero_copy = 0;
  guint64 copied = 0;
  guint64 bytes_copied = 0;
  std::string backend;
  std::string device_name;
  std::string memory_type;
};

Stats
read_stats(GstElement *element)
{
  Stats s;
  GstStructure *st = nullptr;
  g_object_get(element, "stats", &st, nullptr);
  if (!st)
    return s;
  gst_structure_get_uint64(st, "buffers", &s.buffers);
  gst_structure_get_uint64(st, "zero-copy-buffers", &s.zero_copy);
  gst_structure_get_uint64(st, "copied-buffers", &s.copied);
  gst_structure_get_uint64(st, "bytes-copied", &s.bytes_copied);
  if (const gchar *v = gst_structure_get_string(st, "backend"))
    s.backend = v;
  if (const gchar *v = gst_structure_get_string(st, "device-name"))
    s.device_name = v;
  if (const gchar *v = gst_structure_get_string(st, "memory-type"))
    s.memory_type = v;
  gst_structure_free(st);
  return s;
}

/* Prints an ERROR or WARNING message from the bus. Returns TRUE for an
 * error. */
gboolean
report_message(GstMessage *msg)
{
  GError *err = nullptr;
  gchar *debug = nullptr;
  gboolean is_error = GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR;

  if (is_error)
    gst_message_parse_error(msg, &err, &debug);
  else
    gst_message_parse_warning(msg, &err, &debug);

  g_printerr("%s from %s: %s\n", is_error ? "ERROR" : "warning",
             GST_OBJECT_NAME(GST_MESSAGE_SRC(msg)), err->message);
  if (debug)
    g_printerr("  debug: %s\n", debug);
  g_clear_error(&err);
  g_free(debug);
  return is_error;
}

/* Drains ERROR and WARNING messages waiting on the bus. Returns TRUE if one
 * was an error. */
gboolean
drain_bus(GstBus *bus)
{
  gboolean failed = FALSE;
  GstMessage *msg;
  while (
      (msg = gst_bus_pop_filtered(
           bus, (GstMessageType)(GST_MESSAGE_ERROR | GST_MESSAGE_WARNING)))) {
    failed |= report_message(msg);
    gst_message_unref(msg);
  }
  return failed;
}

gboolean
have_elements(const char *const *names, const char *hint)
{
  gboolean ok = TRUE;
  for (const char *const *n = names; *n; n++) {
    GstElementFactory *f = gst_element_factory_find(*n);
    if (!f) {
      g_printerr("zc-demo: element '%s' not found. %s\n", *n, hint);
      ok = FALSE;
    } else
      gst_object_unref(f);
  }
  return ok;
}

/* Copies @sample's frame out of the pipeline's pool into plain memory, so
 * that holding it until the end does not keep a pool buffer out of
 * circulation. Metadata (the GstVideoMeta with strides) comes along. */
GstSample *
copy_sample(GstSample *sample)
{
  GstBuffer *src = gst_sample_get_buffer(sample);
  GstMapInfo map;
  if (!gst_buffer_map(src, &map, GST_MAP_READ))
    return nullptr;
  GstBuffer *dst = gst_buffer_new_allocate(nullptr, map.size, nullptr);
  gst_buffer_fill(dst, 0, map.data, map.size);
  gst_buffer_unmap(src, &map);
  gst_buffer_copy_into(dst, src, GST_BUFFER_COPY_METADATA, 0, -1);
  GstSample *copy = gst_sample_new(dst, gst_sample_get_caps(sample),
                                   gst_sample_get_segment(sample), nullptr);
  gst_buffer_unref(dst);
  return copy;
}

gboolean
write_png(GstSample *sample, const char *path)
{
  GError *err = nullptr;
  GstCaps *png_caps = gst_caps_new_empty_simple("image/png");
  GstSample *png
      = gst_video_convert_sample(sample, png_caps, GST_CLOCK_TIME_NONE, &err);
  gst_caps_unref(png_caps);
  if (!png) {
    g_printerr("zc-demo: could not encode PNG: %s\n"
               "  (pngenc is in gstreamer1.0-plugins-good)\n",
               err ? err->message : "unknown error");
    g_clear_error(&err);
    return FALSE;
  }

  gboolean ok = FALSE;
  GstBuffer *buf = gst_sample_get_buffer(png);
  GstMapInfo map;
  if (gst_buffer_map(buf, &map, GST_MAP_READ)) {
    ok = g_file_set_contents(path, (const gchar *)map.data, (gssize)map.size,
                             &err);
    gst_buffer_unmap(buf, &map);
    if (!ok) {
      g_printerr("zc-demo: could not write %s: %s\n", path, err->message);
      g_clear_error(&err);
    }
  }
  gst_sample_unref(png);
  return ok;
}

} // namespace

int
main(int argc, char **argv)
{
  Options opt;
  GOptionEntry entries[] = {
    { "width", 0, 0, G_OPTION_ARG_INT, &opt.width, "Frame width (1920)", "W" },
    { "height", 0, 0, G_OPTION_ARG_INT, &opt.height, "Frame height (1080)",
      "H" },
    { "frames", 0, 0, G_OPTION_ARG_INT, &opt.frames,
      "Number of frames to process (300)", "N" },
    { "output", 0, 0, G_OPTION_ARG_FILENAME, &opt.output,
      "PNG file for the middle frame (zc-demo.png)", "FILE.png" },
    { nullptr, 0, 0, G_OPTION_ARG_NONE, nullptr, nullptr, nullptr },
  };

  GError *err = nullptr;
  GOptionContext *ctx
      = g_option_context_new("- run frames through zcupload ! zcfilter ! "
                             "zcdownload and report copies and speed");
  g_option_context_add_main_entries(ctx, entries, nullptr);
  g_option_context_add_group(ctx, gst_init_get_option_group());
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    g_printerr("zc-demo: %s\n", err->message);
    g_clear_error(&err);
    g_option_context_free(ctx);
    return 2;
  }
  g_option_context_free(ctx);
  if (opt.width < 16 || opt.height < 16 || opt.frames < 1) {
    g_printerr("zc-demo: --width and --height must be >= 16 and --frames "
               ">= 1\n");
    return 2;
  }
  const char *output = opt.output ? opt.output : "zc-demo.png";

  const char *const base_elements[]
      = { "videotestsrc", "appsink", "videoconvert", nullptr };
  const char *const zc_elements[]
      = { "zcupload", "zcfilter", "zcdownload", nullptr };
  gboolean ok = have_elements(
      base_elements,
      "Install gstreamer1.0-plugins-base (tools/setup.sh does).");
  ok &= have_elements(
      zc_elements, "The zerocopy plugin was not found: set "
                   "GST_PLUGIN_PATH=<repo>/build/gst, or run ./tools/demo.sh.");
  if (!ok)
    return 1;

  /* framerate=0/1 would make videotestsrc emit a single still frame; any
   * real rate works, as appsink sync=false runs the stream unthrottled. */
  gchar *desc = g_strdup_printf(
      "videotestsrc num-buffers=%d pattern=ball ! "
      "video/x-raw,format=RGBA,width=%d,height=%d,framerate=30/1 ! "
      "zcupload name=up ! zcfilter invert=true contrast=1.2 name=filter ! "
      "zcdownload name=down ! appsink name=sink sync=false",
      opt.frames, opt.width, opt.height);
  GstElement *pipeline = gst_parse_launch(desc, &err);
  g_free(desc);
  if (!pipeline || err) {
    g_printerr("zc-demo: could not build the pipeline: %s\n",
               err ? err->message : "unknown error");
    g_clear_error(&err);
    if (pipeline)
      gst_object_unref(pipeline);
    return 1;
  }

  GstElement *up = gst_bin_get_by_name(GST_BIN(pipeline), "up");
  GstElement *filter = gst_bin_get_by_name(GST_BIN(pipeline), "filter");
  GstElement *down = gst_bin_get_by_name(GST_BIN(pipeline), "down");
  GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstBus *bus = gst_element_get_bus(pipeline);

  g_print("zc-demo: %d frames of %dx%d RGBA through zcupload ! zcfilter "
          "invert=true contrast=1.2 ! zcdownload\n",
          opt.frames, opt.width, opt.height);

  gboolean failed = FALSE;
  if (gst_element_set_state(pipeline, GST_STATE_PLAYING)
      == GST_STATE_CHANGE_FAILURE) {
    g_printerr("zc-demo: the pipeline did not start\n");
    drain_bus(bus);
    failed = TRUE;
  }

  /* Pull every frame. try_pull with a timeout, not a blocking pull, so that
   * an error posted mid-stream is seen even if no EOS reaches the sink. */
  const gint middle = opt.frames / 2;
  gint n = 0;
  gint64 t_first = 0, t_last = 0, t_excluded = 0;
  GstSample *kept = nullptr;
  while (!failed) {
    GstSample *sample
        = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 100 * GST_MSECOND);
    if (sample) {
      gint64 now = g_get_monotonic_time();
      if (n == 0)
        t_first = now;
      t_last = now;
      if (n == middle) {
        kept = copy_sample(sample);
        /* Keep the demo's own copy out of the measured time. */
        t_excluded += g_get_monotonic_time() - now;
      }
      n++;
      gst_sample_unref(sample);
    }
    failed = drain_bus(bus);
    if (!sample && gst_app_sink_is_eos(GST_APP_SINK(sink)))
      break;
  }

  /* Stats are read before stopping: elements may reset them on start/stop. */
  Stats su = read_stats(up), sf = read_stats(filter), sd = read_stats(down);
  gst_element_set_state(pipeline, GST_STATE_NULL);
  failed |= drain_bus(bus);

  int rc = 0;
  if (failed) {
    g_printerr("zc-demo: the pipeline failed after %d of %d frames\n", n,
               opt.frames);
    rc = 1;
  } else {
    if (su.backend == "cuda")
      g_print("backend: CUDA (%s), memory: %s\n", su.device_name.c_str(),
              su.memory_type.c_str());
    else if (su.backend == "cpu")
      g_print("backend: CPU fallback (no CUDA device), memory: %s\n",
              su.memory_type.c_str());
    else
      g_print("backend: unknown (zcupload reported no stats)\n");

    g_print("frames: %d\n", n);
    double secs = (double)(t_last - t_first - t_excluded) / G_USEC_PER_SEC;
    if (n > 1 && secs > 0)
      g_print("fps: %.1f\n", (n - 1) / secs);
    else
      g_print("fps: n/a (too few frames to time)\n");

    guint64 copies = su.copied + sf.copied + sd.copied;
    guint64 bytes = su.bytes_copied + sf.bytes_copied + sd.bytes_copied;
    g_print("copies: %" G_GUINT64_FORMAT " buffers, %" G_GUINT64_FORMAT
            " bytes (zcupload %" G_GUINT64_FORMAT
            ", zcfilter %" G_GUINT64_FORMAT ", zcdownload %" G_GUINT64_FORMAT
            ")\n",
            copies, bytes, su.copied, sf.copied, sd.copied);

    if (n != opt.frames) {
      g_printerr("zc-demo: expected %d frames, got %d\n", opt.frames, n);
      rc = 1;
    }
    if (!kept) {
      g_printerr("zc-demo: no frame to write as PNG\n");
      rc = 1;
    } else if (write_png(kept, output))
      g_print("png: %s\n", output);
    else
      rc = 1;
  }

  if (kept)
    gst_sample_unref(kept);
  gst_object_unref(bus);
  gst_object_unref(sink);
  gst_object_unref(down);
  gst_object_unref(filter);
  gst_object_unref(up);
  gst_object_unref(pipeline);
  g_free(opt.output);
  return rc;
}

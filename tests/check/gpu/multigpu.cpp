/* gst-zerocopy: elements on more than one GPU
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * device-id=N puts an element's context, pool and stream on GPU N: a device
 * that does not exist fails cleanly at READY->PAUSED; two pipelines run at
 * once, one per GPU; elements of different devices do not share a context,
 * and zcupload copies frames of the other device; pinned memory is portable;
 * zcfilter refuses managed frames of another device. Exits 77 (skipped, for
 * meson) without a GPU; with one GPU only the first test runs.
 */
#include "../zccheck.h"

#include <gst/app/gstappsink.h>

#include <algorithm>

/* CUDA devices the runtime sees (set by main) */
static int n_devices = 0;

#if GST_ZC_HAVE_CUDA
#include <cuda_runtime_api.h>

/* Whether @text names CUDA device @dev in one of the usual ways */
static gboolean
mentions_device (const std::string & text, gint dev)
{
  gchar *forms[] = { g_strdup_printf ("device %d", dev),
    g_strdup_printf ("device-id=%d", dev), g_strdup_printf ("gpu %d", dev),
    g_strdup_printf ("cuda:%d", dev)
  };
  gboolean found = FALSE;
  for (gchar * f:forms) {
    found = found || zc_test_contains_nocase (text, f);
    g_free (f);
  }
  return found;
}

/* Pops @pipeline's bus until EOS, an ERROR or @timeout, and notes the device
 * of every zero-copy context an element announced (have-context). */
static void
collect_with_contexts (GstElement * pipeline, ZcBusLog & log,
    std::vector < gint > &devices, GstClockTime timeout)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  while (!log.eos && log.errors.empty ()) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, timeout,
        (GstMessageType) (GST_MESSAGE_EOS | GST_MESSAGE_ERROR |
            GST_MESSAGE_HAVE_CONTEXT));
    if (!m) {
      log.timed_out = TRUE;
      break;
    }
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
      log.errors.push_back (m);
      continue;
    }
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_HAVE_CONTEXT) {
      GstContext *ctx = NULL;
      GstZcContext *zc = NULL;
      gint dev = -1;
      gst_message_parse_have_context (m, &ctx);
      if (gst_context_get_zc_context (ctx, &zc)) {
        fail_unless (gst_structure_get_int (gst_context_get_structure (ctx),
                "device-id", &dev), "have-context without a device-id");
        fail_unless_equals_int (gst_zc_context_get_device_id (zc), dev);
        devices.push_back (dev);
        gst_object_unref (zc);
      }
      gst_context_unref (ctx);
    } else {
      log.eos = TRUE;
    }
    gst_message_unref (m);
  }
  gst_object_unref (bus);
}

/* "" when every pixel of @sample (RGBA) is @want, else the first that is
 * not */
static std::string
check_solid_rgba (GstSample * sample, const guint8 want[4])
{
  GstVideoInfo info;
  GstVideoFrame frame;
  if (!gst_video_info_from_caps (&info, gst_sample_get_caps (sample)) ||
      GST_VIDEO_INFO_FORMAT (&info) != GST_VIDEO_FORMAT_RGBA)
    return "output is not RGBA";
  if (!gst_video_frame_map (&frame, &info, gst_sample_get_buffer (sample),
          GST_MAP_READ))
    return "cannot map the output";
  std::string err;
  for (gint y = 0; y < GST_VIDEO_FRAME_HEIGHT (&frame) && err.empty (); y++) {
    const guint8 *row = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame,
        0) + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&frame, 0);
    for (gint x = 0; x < GST_VIDEO_FRAME_WIDTH (&frame); x++) {
      const guint8 *p = row + 4 * x;
      if (memcmp (p, want, 4) != 0) {
        gchar *msg = g_strdup_printf ("pixel (%d,%d) is %02x%02x%02x%02x, "
            "expected %02x%02x%02x%02x", x, y, p[0], p[1], p[2], p[3],
            want[0], want[1], want[2], want[3]);
        err = msg;
        g_free (msg);
        break;
      }
    }
  }
  gst_video_frame_unmap (&frame);
  return err;
}

/* The RGBA bytes zcfilter invert=true makes of videotestsrc's solid
 * @argb (foreground-color, 0xAARRGGBB): colour inverted, alpha kept */
static void
inverted_rgba (guint32 argb, guint8 out[4])
{
  out[0] = 255 - ((argb >> 16) & 0xff);
  out[1] = 255 - ((argb >> 8) & 0xff);
  out[2] = 255 - (argb & 0xff);
  out[3] = (argb >> 24) & 0xff;
}

/* The output's memory lives on @dev, by the library and by the runtime
 * (for pinned memory, the device that was current when it was allocated) */
static void
check_buffer_on_device (GstSample * sample, gint dev)
{
  GstMemory *mem = gst_buffer_peek_memory (gst_sample_get_buffer (sample), 0);
  fail_unless (gst_is_zc_memory (mem), "output is not zero-copy memory");
  auto *zmem = (GstZcMemory *) mem;
  fail_unless_equals_int (gst_zc_memory_get_device_id (zmem), dev);
  cudaPointerAttributes attr;
  fail_unless_equals_int (cudaPointerGetAttributes (&attr,
          gst_zc_memory_get_device_pointer (zmem)), cudaSuccess);
  fail_unless_equals_int (attr.device, dev);
}

static std::string
device_name (gint dev)
{
  cudaDeviceProp prop;
  fail_unless_equals_int (cudaGetDeviceProperties (&prop, dev), cudaSuccess);
  return prop.name;
}

GST_START_TEST (test_nonexistent_device_fails_cleanly)
{
  gint dev = n_devices;
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=3 ! "
      "video/x-raw,format=RGBA,width=64,height=48 ! zcupload device-id=%d ! "
      "zcfilter invert=true device-id=%d ! zcdownload device-id=%d ! "
      "fakesink", dev, dev, dev);
  GstElement *pipeline = zc_test_parse (desc);

  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  ZcBusLog log;
  zc_test_collect (pipeline, log, 5 * GST_SECOND);
  fail_unless (!log.errors.empty (), "no ERROR for device %d: %s", dev,
      log.describe ().c_str ());
  GstMessage *m = log.errors[0];
  GstElementFactory *f = gst_element_get_factory (GST_ELEMENT (m->src));
  fail_unless (f && g_str_has_prefix (GST_OBJECT_NAME (f), "zc"),
      "ERROR from %s, not a zc element", GST_OBJECT_NAME (m->src));
  GQuark domain = 0;
  std::string text = zc_test_message_text (m, &domain);
  fail_unless (domain == GST_RESOURCE_ERROR, "not a resource error: %s",
      text.c_str ());
  fail_unless (mentions_device (text, dev), "does not name device %d: %s",
      dev, text.c_str ());

  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (pipeline);
  g_free (desc);
}

GST_END_TEST;

#define TWO_PIPES_FRAMES 60

GST_START_TEST (test_two_pipelines_one_per_gpu)
{
  const guint32 colours[2] = { 0xff204080, 0xffc01060 };
  GstElement *pipes[2], *sinks[2];
  for (gint k = 0; k < 2; k++) {
    /* max-buffers=2: neither pipeline runs ahead to EOS while the test
     * pulls from the other, so both work at the same time */
    gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d "
        "pattern=solid-color foreground-color=%u ! "
        "video/x-raw,format=RGBA,width=1920,height=1080 ! "
        "zcupload name=up device-id=%d ! "
        "zcfilter name=f invert=true device-id=%d ! "
        "zcdownload name=down device-id=%d ! "
        "appsink name=sink sync=false max-buffers=2", TWO_PIPES_FRAMES,
        colours[k], k, k, k);
    pipes[k] = zc_test_parse (desc);
    sinks[k] = zc_test_get_by_name (pipes[k], "sink");
    g_free (desc);
  }
  for (gint k = 0; k < 2; k++)
    fail_if (gst_element_set_state (pipes[k], GST_STATE_PLAYING) ==
        GST_STATE_CHANGE_FAILURE);
  for (gint k = 0; k < 2; k++)
    fail_unless_equals_int (gst_element_get_state (pipes[k], NULL, NULL,
            30 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);

  gchar *smi = g_find_program_in_path ("nvidia-smi");
  for (gint i = 0; i < TWO_PIPES_FRAMES; i++) {
    for (gint k = 0; k < 2; k++) {
      GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sinks[k]),
          30 * GST_SECOND);
      fail_unless (s != NULL, "pipeline %d: no frame %d", k, i);
      check_buffer_on_device (s, k);
      if (i % 20 == 0 || i == TWO_PIPES_FRAMES - 1) {
        guint8 want[4];
        inverted_rgba (colours[k], want);
        std::string err = check_solid_rgba (s, want);
        fail_unless (err.empty (), "pipeline %d frame %d: %s", k, i,
            err.c_str ());
      }
      gst_sample_unref (s);
    }
    /* Informational: both GPUs should show work while both run */
    if (i == TWO_PIPES_FRAMES / 2 && smi) {
      gchar *out = NULL;
      if (g_spawn_command_line_sync ("nvidia-smi --query-gpu=index,"
              "utilization.gpu --format=csv", &out, NULL, NULL, NULL))
        g_print ("multigpu: while both pipelines run:\n%s", out);
      g_free (out);
    }
  }
  g_free (smi);

  for (gint k = 0; k < 2; k++) {
    ZcBusLog log;
    std::vector < gint > devices;
    collect_with_contexts (pipes[k], log, devices, 30 * GST_SECOND);
    fail_unless (log.eos && log.errors.empty (), "pipeline %d: %s", k,
        log.describe ().c_str ());
    /* One context for the whole pipeline, on its device */
    fail_unless_equals_int (devices.size (), 1);
    fail_unless_equals_int (devices[0], k);

    const gchar *names[] = { "up", "f", "down" };
    for (const gchar * n:names) {
      GstElement *e = zc_test_get_by_name (pipes[k], n);
      std::string stats = zc_test_stats_to_string (e);
      fail_unless_equals_uint64 (zc_test_stat (e, "copied-buffers"), 0);
      fail_unless (zc_test_stat_string (e, "backend") == "cuda", "%s",
          stats.c_str ());
      fail_unless (zc_test_stat_string (e, "device-name") == device_name (k),
          "pipeline %d, %s: %s", k, n, stats.c_str ());
      gst_object_unref (e);
    }
    gst_element_set_state (pipes[k], GST_STATE_NULL);
    gst_object_unref (sinks[k]);
    gst_object_unref (pipes[k]);
  }
}

GST_END_TEST;

#define MIXED_FRAMES 10

GST_START_TEST (test_elements_with_different_devices_do_not_share_context)
{
  const guint32 colour = 0xff3070d0;
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%d "
      "pattern=solid-color foreground-color=%u ! "
      "video/x-raw,format=RGBA,width=320,height=240 ! "
      "zcupload device-id=0 ! zcdownload device-id=0 ! "
      "zcupload name=u1 device-id=1 ! zcfilter invert=true device-id=1 ! "
      "zcdownload device-id=1 ! appsink name=sink sync=false max-buffers=2",
      MIXED_FRAMES, colour);
  GstElement *pipeline = zc_test_parse (desc);
  GstElement *sink = zc_test_get_by_name (pipeline, "sink");
  GstElement *u1 = zc_test_get_by_name (pipeline, "u1");

  /* The appsink holds pool buffers: pull while the pipeline runs */
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  guint8 want[4];
  inverted_rgba (colour, want);
  for (gint i = 0; i < MIXED_FRAMES; i++) {
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        30 * GST_SECOND);
    fail_unless (s != NULL, "no frame %d", i);
    check_buffer_on_device (s, 1);
    std::string err = check_solid_rgba (s, want);
    fail_unless (err.empty (), "frame %d: %s", i, err.c_str ());
    gst_sample_unref (s);
  }

  ZcBusLog log;
  std::vector < gint > devices;
  collect_with_contexts (pipeline, log, devices, 30 * GST_SECOND);
  fail_unless (log.eos && log.errors.empty (), "%s", log.describe ().c_str ());
  std::sort (devices.begin (), devices.end ());
  fail_unless (devices == std::vector < gint > ({0, 1}),
      "expected one context per device, got %u", (guint) devices.size ());

  /* Device 0's memory is not device 1's: u1 copies every frame */
  fail_unless_equals_uint64 (zc_test_stat (u1, "copied-buffers"),
      MIXED_FRAMES);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (u1);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
  g_free (desc);
}

GST_END_TEST;

GST_START_TEST (test_portable_pinned_memory_works_from_both_gpus)
{
  const gsize size = 1 << 20, off = 4096, len = 65536;
  GstZcContext *ctx0 = gst_zc_context_new (0, NULL);
  fail_unless (ctx0 && gst_zc_context_has_gpu (ctx0));
  GstAllocator *alloc = gst_zc_allocator_new (ctx0, GST_ZC_MEMORY_TYPE_MAPPED);
  fail_unless (alloc != NULL);
  GstMemory *mem = gst_allocator_alloc (alloc, size, NULL);
  fail_unless (mem != NULL);
  auto *zmem = (GstZcMemory *) mem;
  fail_unless_equals_int (gst_zc_memory_get_device_id (zmem), 0);

  GstMapInfo map;
  fail_unless (gst_memory_map (mem, &map, GST_MAP_WRITE));
  for (gsize i = 0; i < map.size; i++)
    map.data[i] = (guint8) (i * 7 + 3);
  gst_memory_unmap (mem, &map);

  /* Device 1 writes into device 0's pinned memory through its device
   * pointer: only portable memory is addressable there */
  fail_unless_equals_int (cudaSetDevice (1), cudaSuccess);
  cudaStream_t stream;
  fail_unless_equals_int (cudaStreamCreateWithFlags (&stream,
          cudaStreamNonBlocking), cudaSuccess);
  auto *dptr = (guint8 *) gst_zc_memory_get_device_pointer (zmem);
  fail_unless_equals_int (cudaMemsetAsync (dptr + off, 0x5a, len, stream),
      cudaSuccess);
  fail_unless_equals_int (cudaStreamSynchronize (stream), cudaSuccess);
  fail_unless_equals_int (cudaStreamDestroy (stream), cudaSuccess);
  fail_unless_equals_int (cudaSetDevice (0), cudaSuccess);

  fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
  gsize bad = G_MAXSIZE;
  for (gsize i = 0; i < map.size && bad == G_MAXSIZE; i++) {
    guint8 want = (i >= off && i < off + len) ? 0x5a : (guint8) (i * 7 + 3);
    if (map.data[i] != want)
      bad = i;
  }
  guint8 got = bad == G_MAXSIZE ? 0 : map.data[bad];
  gst_memory_unmap (mem, &map);
  fail_unless (bad == G_MAXSIZE, "byte %" G_GSIZE_FORMAT " is %u after "
      "device 1's memset", bad, got);

  gst_memory_unref (mem);
  gst_object_unref (alloc);
  gst_object_unref (ctx0);
}

GST_END_TEST;

GST_START_TEST (test_zcfilter_rejects_managed_frames_of_other_device)
{
  GstElement *pipeline = zc_test_parse ("videotestsrc num-buffers=3 ! "
      "video/x-raw,format=RGBA,width=64,height=48 ! "
      "zcupload memory-type=managed device-id=0 ! "
      "zcfilter name=f invert=true device-id=1 ! fakesink");
  ZcBusLog log;
  zc_test_play (pipeline, log, 30 * GST_SECOND);
  fail_unless (!log.errors.empty (), "zcfilter took device 0's frames: %s",
      log.describe ().c_str ());
  GstMessage *m = log.errors[0];
  std::string text = zc_test_message_text (m);
  fail_unless_equals_string (GST_OBJECT_NAME (m->src), "f");
  fail_unless (mentions_device (text, 0) && mentions_device (text, 1),
      "the ERROR does not name both devices: %s", text.c_str ());

  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_NULL),
      GST_STATE_CHANGE_SUCCESS);
  gst_object_unref (pipeline);
}

GST_END_TEST;
#endif /* GST_ZC_HAVE_CUDA */

static Suite *
multigpu_suite (void)
{
  Suite *s = suite_create ("multigpu");
  TCase *tc = zc_test_case ("gpu");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
#if GST_ZC_HAVE_CUDA
  tcase_add_test (tc, test_nonexistent_device_fails_cleanly);
  if (n_devices >= 2) {
    tcase_add_test (tc, test_two_pipelines_one_per_gpu);
    tcase_add_test (tc,
        test_elements_with_different_devices_do_not_share_context);
    tcase_add_test (tc, test_portable_pinned_memory_works_from_both_gpus);
    tcase_add_test (tc, test_zcfilter_rejects_managed_frames_of_other_device);
  }
#endif
  return s;
}

/* GST_CHECK_MAIN cannot report "skipped": exit 77 without a GPU */
int
main (int argc, char **argv)
{
  gst_check_init (&argc, &argv);
#if GST_ZC_HAVE_CUDA
  if (cudaGetDeviceCount (&n_devices) != cudaSuccess) {
    cudaGetLastError ();        /* clear the runtime's sticky error */
    n_devices = 0;
  }
#endif
  if (n_devices == 0) {
    g_print ("multigpu: no CUDA GPU here; skipped\n");
    return 77;
  }
  if (n_devices == 1)
    g_print ("multigpu: one GPU: only the nonexistent-device test runs\n");
  return gst_check_run_suite (multigpu_suite (), "multigpu", __FILE__);
}

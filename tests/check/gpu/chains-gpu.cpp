/* gst-zerocopy: memory chosen along GPU chains, and the device-memory mode
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The consumer of each GPU step picks the memory of that step's output
 * through the ALLOCATION query: a zcfilter asks an upstream zcfilter for
 * device memory (on a discrete GPU), zcdownload asks for mapped memory. So a
 * chain of three zcfilters reads over the bus once and writes over it once.
 * memory-type=device instead copies in and out with the copy engines.
 * Exits 77 (skipped, for meson) without a usable GPU.
 */
#include "../zccheck.h"

#include <gst/app/app.h>

#include <gst/app/gstappsink.h>

#if GST_ZC_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <map>

/* Records the memory type of every buffer leaving a pad */
struct MemoryTypes
{
  std::map < std::string, std::vector < GstZcMemoryType >> seen;
  GMutex lock;
};

static GstPadProbeReturn
record_memory_type (GstPad * pad, GstPadProbeInfo * info, gpointer user_data)
{
  auto *types = static_cast < MemoryTypes * >(user_data);
  GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER (info);
  GstMemory *m = gst_buffer_peek_memory (buf, 0);
  GstZcMemoryType t = gst_is_zc_memory (m) ?
      gst_zc_memory_get_memory_type ((GstZcMemory *) m) :
      GST_ZC_MEMORY_TYPE_AUTO;
  gchar *name = gst_object_get_name (GST_OBJECT (GST_PAD_PARENT (pad)));
  g_mutex_lock (&types->lock);
  types->seen[name].push_back (t);
  g_mutex_unlock (&types->lock);
  g_free (name);
  return GST_PAD_PROBE_OK;
}

static void
watch_src (GstElement * pipeline, const gchar * name, MemoryTypes * types)
{
  GstElement *e = zc_test_get_by_name (pipeline, name);
  GstPad *pad = gst_element_get_static_pad (e, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER, record_memory_type,
      types, NULL);
  gst_object_unref (pad);
  gst_object_unref (e);
}

/* Every pixel of every frame at the sink against @steps applied in turn by
 * the CPU reference (zc::convert_cpu_reference) to the same frame of the same
 * videotestsrc */
static void
check_frames (GstElement * pipeline, const zc::ConvertParams * steps,
    guint n_steps, guint n_frames)
{
  gchar *desc = g_strdup_printf ("videotestsrc num-buffers=%u pattern=smpte"
      " ! video/x-raw,format=RGBA,width=640,height=360 ! appsink name=sink",
      n_frames);
  GstElement *ref = zc_test_parse (desc);
  g_free (desc);
  GstElement *ref_sink = zc_test_get_by_name (ref, "sink");
  GstElement *sink = zc_test_get_by_name (pipeline, "sink");
  gst_element_set_state (ref, GST_STATE_PLAYING);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_PLAYING),
      GST_STATE_CHANGE_ASYNC);

  for (guint n = 0; n < n_frames; n++) {
    GstSample *r = gst_app_sink_pull_sample (GST_APP_SINK (ref_sink));
    GstSample *s = gst_app_sink_pull_sample (GST_APP_SINK (sink));
    fail_unless (r != NULL && s != NULL, "frame %u missing", n);
    GstVideoInfo info;
    GstVideoFrame rf, of;
    fail_unless (gst_video_info_from_caps (&info, gst_sample_get_caps (r)));
    /* the reference: the source frame through each step */
    GstBuffer *bufs[2] = { gst_buffer_copy_deep (gst_sample_get_buffer (r)),
      gst_buffer_new_allocate (NULL, info.size, NULL)
    };
    for (guint i = 0; i < n_steps; i++) {
      GstVideoFrame a, b;
      zc::FrameDesc da, db;
      fail_unless (gst_video_frame_map (&a, &info, bufs[i % 2], GST_MAP_READ));
      fail_unless (gst_video_frame_map (&b, &info, bufs[(i + 1) % 2],
              GST_MAP_WRITE));
      fail_unless (zc_test_frame_desc (&a, &da) && zc_test_frame_desc (&b,
              &db));
      fail_unless (zc::convert_cpu_reference (da, db, steps[i], 1));
      gst_video_frame_unmap (&b);
      gst_video_frame_unmap (&a);
    }
    fail_unless (gst_video_frame_map (&rf, &info, bufs[n_steps % 2],
            GST_MAP_READ));
    fail_unless (gst_video_frame_map (&of, &info, gst_sample_get_buffer (s),
            GST_MAP_READ));
    for (gint y = 0; y < info.height; y++) {
      const guint8 *a = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&rf, 0)
          + y * GST_VIDEO_FRAME_PLANE_STRIDE (&rf, 0);
      const guint8 *b = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&of, 0)
          + y * GST_VIDEO_FRAME_PLANE_STRIDE (&of, 0);
      for (gint x = 0; x < info.width * 4; x++) {
        guint8 want = a[x];
        fail_unless (b[x] == want, "frame %u pixel (%d,%d) byte %d: %u, want "
            "%u", n, x / 4, y, x % 4, b[x], want);
      }
    }
    gst_video_frame_unmap (&of);
    gst_video_frame_unmap (&rf);
    gst_buffer_unref (bufs[0]);
    gst_buffer_unref (bufs[1]);
    gst_sample_unref (s);
    gst_sample_unref (r);
  }
  gst_element_set_state (ref, GST_STATE_NULL);
  gst_object_unref (ref_sink);
  gst_object_unref (ref);
  gst_object_unref (sink);
}

#define SRC "videotestsrc num-buffers=12 pattern=smpte ! " \
    "video/x-raw,format=RGBA,width=640,height=360 ! "

GST_START_TEST (test_chain_of_three_keeps_device_memory_between_steps)
{
  GstElement *p = zc_test_parse (SRC "zcupload name=up ! "
      "zcfilter name=f1 invert=true ! zcfilter name=f2 contrast=1.5 ! "
      "zcfilter name=f3 gamma=1.5 ! zcdownload name=down ! "
      "appsink name=sink sync=false max-buffers=2");
  MemoryTypes types;
  g_mutex_init (&types.lock);
  for (const gchar * n: { "up", "f1", "f2", "f3" })
    watch_src (p, n, &types);

  zc::ConvertParams steps[3];
  steps[0].invert = true;
  steps[1].contrast = 1.5f;
  steps[2].gamma = 1.5f;
  check_frames (p, steps, 3, 12);
  gst_element_set_state (p, GST_STATE_NULL);

  GstZcContext *ctx = gst_zc_context_new (-1, NULL);
  gboolean discrete = !gst_zc_context_is_integrated (ctx);
  gst_object_unref (ctx);
  /* the source writes into mapped memory; between GPU steps the frame
   * stays in device memory (discrete GPU); the last step writes where
   * zcdownload's consumer reads */
  const std::pair < const gchar *, GstZcMemoryType > want[] = {
    {"up", GST_ZC_MEMORY_TYPE_MAPPED},
    {"f1", discrete ? GST_ZC_MEMORY_TYPE_DEVICE : GST_ZC_MEMORY_TYPE_MAPPED},
    {"f2", discrete ? GST_ZC_MEMORY_TYPE_DEVICE : GST_ZC_MEMORY_TYPE_MAPPED},
    {"f3", GST_ZC_MEMORY_TYPE_MAPPED},
  };
  for (auto & w:want) {
    auto &seen = types.seen[w.first];
    fail_unless_equals_int (seen.size (), 12);
    for (GstZcMemoryType t:seen)
      fail_unless (t == w.second, "%s pushed %s memory, want %s", w.first,
          gst_zc_memory_type_to_string (t),
          gst_zc_memory_type_to_string (w.second));
  }
  for (const gchar * n: { "up", "f1", "f2", "f3", "down" }) {
    GstElement *e = zc_test_get_by_name (p, n);
    fail_unless (zc_test_stat (e, "copied-buffers") == 0, "%s: %s", n,
        zc_test_stats_to_string (e).c_str ());
    gst_object_unref (e);
  }
  /* with device memory between the steps, the ends of the chain move the
   * mapped side on the copy engines: the first element its input, the last
   * its output, each frame once; the middle one nothing */
  const guint64 frame = 640 * 360 * 4;
  const std::pair < const gchar *, guint64 > staged[] = {
    {"f1", discrete ? 12 * frame : 0},
    {"f2", 0},
    {"f3", discrete ? 12 * frame : 0},
  };
  for (auto & w:staged) {
    GstElement *e = zc_test_get_by_name (p, w.first);
    fail_unless (zc_test_stat (e, "bytes-staged") == w.second, "%s: %s",
        w.first, zc_test_stats_to_string (e).c_str ());
    gst_object_unref (e);
  }
  gst_object_unref (p);
  g_mutex_clear (&types.lock);
}

GST_END_TEST;

GST_START_TEST (test_single_filter_works_in_place_on_mapped_memory)
{
  GstElement *p = zc_test_parse (SRC "zcupload name=up ! "
      "zcfilter name=f1 invert=true ! zcdownload name=down ! "
      "appsink name=sink sync=false max-buffers=2");
  MemoryTypes types;
  g_mutex_init (&types.lock);
  watch_src (p, "f1", &types);
  zc::ConvertParams step;
  step.invert = true;
  check_frames (p, &step, 1, 12);
  gst_element_set_state (p, GST_STATE_NULL);
  for (GstZcMemoryType t:types.seen["f1"])
    fail_unless (t == GST_ZC_MEMORY_TYPE_MAPPED, "f1 pushed %s memory",
        gst_zc_memory_type_to_string (t));
  /* nothing staged: the kernel reads and writes the mapped frames */
  GstElement *f1 = zc_test_get_by_name (p, "f1");
  fail_unless (zc_test_stat (f1, "bytes-staged") == 0, "%s",
      zc_test_stats_to_string (f1).c_str ());
  gst_object_unref (f1);
  gst_object_unref (p);
  g_mutex_clear (&types.lock);
}

GST_END_TEST;

GST_START_TEST (test_device_mode_copies_in_and_out)
{
  GstElement *p = zc_test_parse (SRC "zcupload name=up memory-type=device ! "
      "zcfilter name=f1 invert=true memory-type=device ! "
      "zcdownload name=down memory-type=device ! "
      "appsink name=sink sync=false max-buffers=2");
  MemoryTypes types;
  g_mutex_init (&types.lock);
  watch_src (p, "up", &types);
  watch_src (p, "f1", &types);
  zc::ConvertParams step;
  step.invert = true;
  check_frames (p, &step, 1, 12);
  gst_element_set_state (p, GST_STATE_NULL);
  for (const gchar * n: { "up", "f1" })
    for (GstZcMemoryType t:types.seen[n])
      fail_unless (t == GST_ZC_MEMORY_TYPE_DEVICE, "%s pushed %s memory", n,
          gst_zc_memory_type_to_string (t));
  /* one copy in, one copy out per frame, none in the filter */
  const gsize frame = 640 * 360 * 4;
  for (const gchar * n: { "up", "down" }) {
    GstElement *e = zc_test_get_by_name (p, n);
    fail_unless (zc_test_stat (e, "copied-buffers") == 12 &&
        zc_test_stat (e, "bytes-copied") == 12 * frame, "%s: %s", n,
        zc_test_stats_to_string (e).c_str ());
    gst_object_unref (e);
  }
  GstElement *f = zc_test_get_by_name (p, "f1");
  fail_unless (zc_test_stat (f, "copied-buffers") == 0);
  gst_object_unref (f);
  gst_object_unref (p);
  g_mutex_clear (&types.lock);
}

GST_END_TEST;

/* zcdownload copies device-memory frames into a staging pool of the output
 * caps: after a renegotiation to a larger frame, the new frames are whole
 * (a staging pool kept from the old caps would be too small) */
GST_START_TEST (test_device_staging_follows_a_caps_change)
{
  GstElement *p = zc_test_parse ("appsrc name=src format=time ! "
      "zcupload memory-type=device ! zcdownload name=down memory-type=device "
      "! appsink name=sink sync=false");
  GstElement *src = zc_test_get_by_name (p, "src");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  fail_unless_equals_int (gst_element_set_state (p, GST_STATE_PLAYING),
      GST_STATE_CHANGE_ASYNC);
  const gint sizes[][2] = { {64, 48}, {160, 120}, {64, 48} };
  guint32 seed = 1;
  for (auto & sz:sizes) {
    GstCaps *caps = zc_test_raw_caps (GST_VIDEO_FORMAT_RGBA, sz[0], sz[1]);
    g_object_set (src, "caps", caps, NULL);
    GstVideoInfo info;
    gst_video_info_from_caps (&info, caps);
    gst_caps_unref (caps);
    for (int i = 0; i < 3; i++, seed++) {
      GstBuffer *in = gst_buffer_new_allocate (NULL, info.size, NULL);
      zc_test_fill_random (in, seed);
      GST_BUFFER_PTS (in) = seed * GST_MSECOND;
      fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src),
              gst_buffer_ref (in)), GST_FLOW_OK);
      GstSample *sample = gst_app_sink_pull_sample (GST_APP_SINK (sink));
      fail_unless (sample != NULL, "%dx%d: no frame", sz[0], sz[1]);
      GstVideoInfo oi;
      fail_unless (gst_video_info_from_caps (&oi,
              gst_sample_get_caps (sample)));
      fail_unless_equals_int (GST_VIDEO_INFO_WIDTH (&oi), sz[0]);
      GstVideoFrame fin, fout;
      fail_unless (gst_video_frame_map (&fin, &info, in, GST_MAP_READ));
      fail_unless (gst_video_frame_map (&fout, &oi,
              gst_sample_get_buffer (sample), GST_MAP_READ));
      std::string diff = zc_test_compare_identical (&fin, &fout, "staged");
      gst_video_frame_unmap (&fout);
      gst_video_frame_unmap (&fin);
      fail_unless (diff.empty (), "%dx%d frame %d: %s", sz[0], sz[1], i,
          diff.c_str ());
      gst_sample_unref (sample);
      gst_buffer_unref (in);
    }
  }
  GstElement *down = zc_test_get_by_name (p, "down");
  fail_unless (zc_test_stat (down, "copied-buffers") == 9, "%s",
      zc_test_stats_to_string (down).c_str ());
  gst_object_unref (down);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (p);
}

GST_END_TEST;

#if GST_ZC_HAVE_CUDA
GST_START_TEST (test_device_memory_cpu_map_round_trip)
{
  GstZcContext *ctx = gst_zc_context_new (-1, NULL);
  GstAllocator *alloc = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_DEVICE);
  fail_unless (alloc != NULL);
  GstMemory *mem = gst_allocator_alloc (alloc, 1 << 20, NULL);
  auto *zmem = (GstZcMemory *) mem;
  fail_unless (gst_zc_memory_get_memory_type (zmem) ==
      GST_ZC_MEMORY_TYPE_DEVICE);
  fail_unless (gst_zc_memory_get_host_pointer (zmem) == NULL);

  /* CPU writes through staging; the GPU sees them after the fence */
  GstMapInfo map;
  fail_unless (gst_memory_map (mem, &map, GST_MAP_WRITE));
  memset (map.data, 0x11, map.size);
  gst_memory_unmap (mem, &map);

  gpointer stream = gst_zc_context_new_stream (ctx);
  fail_unless (gst_zc_memory_prepare_gpu (zmem, stream));
  auto *dev = (guint8 *) gst_zc_memory_get_device_pointer (zmem);
  fail_unless (cudaMemsetAsync (dev + 4096, 0x77, 8192,
          (cudaStream_t) stream) == cudaSuccess);
  fail_unless (gst_zc_memory_set_gpu_fence (zmem, stream));

  fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
  for (gsize i = 0; i < map.size; i++) {
    guint8 want = (i >= 4096 && i < 4096 + 8192) ? 0x77 : 0x11;
    fail_unless (map.data[i] == want, "byte %" G_GSIZE_FORMAT ": %u, want %u",
        i, map.data[i], want);
  }
  gst_memory_unmap (mem, &map);

  gst_zc_context_free_stream (ctx, stream);
  gst_memory_unref (mem);
  gst_object_unref (alloc);
  gst_object_unref (ctx);
}

GST_END_TEST;
#endif

static Suite *
chains_gpu_suite (void)
{
  Suite *s = suite_create ("chains-gpu");
  TCase *tc = zc_test_case ("gpu");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 300);
  tcase_add_test (tc, test_chain_of_three_keeps_device_memory_between_steps);
  tcase_add_test (tc, test_single_filter_works_in_place_on_mapped_memory);
  tcase_add_test (tc, test_device_mode_copies_in_and_out);
  tcase_add_test (tc, test_device_staging_follows_a_caps_change);
#if GST_ZC_HAVE_CUDA
  tcase_add_test (tc, test_device_memory_cpu_map_round_trip);
#endif
  return s;
}

/* GST_CHECK_MAIN cannot report "skipped": exit 77 without a GPU */
int
main (int argc, char **argv)
{
  gst_check_init (&argc, &argv);
  if (!zc_test_have_gpu ()) {
    g_print ("chains-gpu: no usable CUDA GPU here; skipped\n");
    return 77;
  }
  return gst_check_run_suite (chains_gpu_suite (), "chains-gpu", __FILE__);
}

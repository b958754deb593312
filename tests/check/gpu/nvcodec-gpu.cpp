/* gst-zerocopy: frames shared with GStreamer's own CUDA elements (nvcodec)
 * and frames of foreign system memory, without copies
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every case compares the pixels a pipeline delivers with the same pipeline
 * through the plain path (system memory into zcupload's pool), byte for
 * byte, and reads the elements' stats for what was copied:
 *
 * - nvh264dec's memory:CUDAMemory read in place by zcupload and zcfilter,
 *   in the CUDA context both sides share;
 * - cudaupload into zcfilter and zcfilter into cudadownload (CUDAMemory
 *   both ways);
 * - memory of a CUDA context of the application's, not the shared one:
 *   zcupload copies it (counted), zcfilter refuses it with a clear error;
 * - imagefreeze and a pool zcupload did not make: registered once per
 *   memory, then read in place.
 *
 * Exits 77 (skipped, for meson) without a GPU or without the nvcodec
 * interop built in; without nvcodec's elements (nvh264dec, cudaupload,
 * cudadownload) as well, unless ZC_TEST_REQUIRE_NVCODEC=1 (the GPU host's
 * run sets it), which makes their absence a failure.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "../zccheck.h"

#include <gst/app/gstappsink.h>
#include <gst/zerocopy/gstzcforeign.h>
#include <gst/zerocopy/gstzcutils.h>

#if GST_ZC_HAVE_GST_CUDA
#define GST_USE_UNSTABLE_API
#include <gst/cuda/gstcudacontext.h>
#include <gst/cuda/gstcudautils.h>
#endif

#if GST_ZC_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <string>
#include <vector>

#ifndef ZC_TEST_MEDIA_DIR
#error "ZC_TEST_MEDIA_DIR must name tests/media"
#endif

static const gchar *h264_file = ZC_TEST_MEDIA_DIR "/smpte-1080p-8.h264";

/* Every frame the appsink named "sink" receives, copied to system memory,
 * after the pipeline played to EOS; the pipeline is left playing, for
 * stop() */
static std::vector < GstSample * >
play_and_collect (GstElement * pipeline)
{
  std::vector < GstSample * >out;
  GstElement *sink = zc_test_get_by_name (pipeline, "sink");
  fail_unless (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  while (GstSample * s = gst_app_sink_pull_sample (GST_APP_SINK (sink))) {
    GstBuffer *copy = zc_test_system_copy (gst_sample_get_buffer (s));
    out.push_back (gst_sample_new (copy, gst_sample_get_caps (s), NULL,
            NULL));
    gst_buffer_unref (copy);
    gst_sample_unref (s);
  }
  ZcBusLog log;
  zc_test_collect (pipeline, log, 10 * GST_SECOND);
  fail_unless (log.eos && log.errors.empty (), "no EOS:\n%s",
      log.describe ().c_str ());
  gst_object_unref (sink);
  return out;
}

static void
free_samples (std::vector < GstSample * >&v)
{
  for (GstSample * s:v)
    gst_sample_unref (s);
  v.clear ();
}

/* The visible bytes of two frames, plane by plane and row by row */
static std::string
frame_difference (GstSample * a, GstSample * b)
{
  GstVideoInfo ia, ib;
  GstVideoFrame fa, fb;
  fail_unless (gst_video_info_from_caps (&ia, gst_sample_get_caps (a)));
  fail_unless (gst_video_info_from_caps (&ib, gst_sample_get_caps (b)));
  if (GST_VIDEO_INFO_FORMAT (&ia) != GST_VIDEO_INFO_FORMAT (&ib) ||
      ia.width != ib.width || ia.height != ib.height)
    return "different caps";
  fail_unless (gst_video_frame_map (&fa, &ia, gst_sample_get_buffer (a),
          GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fb, &ib, gst_sample_get_buffer (b),
          GST_MAP_READ));
  std::string diff;
  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (&fa) && diff.empty (); p++) {
    guint rows = GST_VIDEO_FRAME_COMP_HEIGHT (&fa, p);
    guint row = GST_VIDEO_FRAME_COMP_WIDTH (&fa, p) *
        GST_VIDEO_FRAME_COMP_PSTRIDE (&fa, p);
    for (guint y = 0; y < rows; y++) {
      const guint8 *ra = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fa, p) +
          (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&fa, p);
      const guint8 *rb = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&fb, p) +
          (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&fb, p);
      if (memcmp (ra, rb, row) != 0) {
        guint x = 0;
        while (ra[x] == rb[x])
          x++;
        diff = "plane " + std::to_string (p) + " row " + std::to_string (y) +
            " byte " + std::to_string (x) + ": " + std::to_string (ra[x]) +
            " vs " + std::to_string (rb[x]);
        break;
      }
    }
  }
  gst_video_frame_unmap (&fb);
  gst_video_frame_unmap (&fa);
  return diff;
}

/* Same number of frames, each the same bytes */
static void
assert_same_frames (std::vector < GstSample * >&got,
    std::vector < GstSample * >&want, const gchar * what)
{
  fail_unless (!want.empty (), "%s: the reference delivered no frame", what);
  fail_unless_equals_int (got.size (), want.size ());
  for (gsize i = 0; i < got.size (); i++) {
    std::string d = frame_difference (got[i], want[i]);
    fail_unless (d.empty (), "%s: frame %" G_GSIZE_FORMAT " differs: %s",
        what, i, d.c_str ());
  }
}

static void
stop (GstElement * pipeline)
{
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
}

static std::vector < GstSample * >
run (const std::string & desc, GstElement ** keep = NULL)
{
  GstElement *p = zc_test_parse (desc.c_str ());
  std::vector < GstSample * >frames = play_and_collect (p);
  if (keep)
    *keep = p;
  else
    stop (p);
  return frames;
}

/* ---------------------------------------------------------------------- */
/* nvh264dec's device memory                                              */
/* ---------------------------------------------------------------------- */

static const gchar *to_720p_rgba =
    "zcfilter name=f ! video/x-raw(memory:CUDAZeroCopy),format=RGBA,"
    "width=1280,height=720 ! zcdownload ! appsink name=sink sync=false";

GST_START_TEST (test_decoded_frames_read_in_place)
{
  std::string dec = std::string ("filesrc location=") + h264_file +
      " ! h264parse ! nvh264dec name=dec ! ";
  GstElement *p;
  std::vector < GstSample * >got = run (dec +
      "video/x-raw(memory:CUDAMemory) ! zcupload name=up ! " + to_720p_rgba,
      &p);
  std::vector < GstSample * >want = run (dec + "video/x-raw ! zcupload ! " +
      to_720p_rgba);

  assert_same_frames (got, want, "nvh264dec CUDAMemory vs system memory");
  fail_unless_equals_int (got.size (), 8);

  /* zcupload passed the decoder's memory on: nothing crossed the bus
   * between the decoder and zcfilter */
  GstElement *up = zc_test_get_by_name (p, "up");
  GstElement *f = zc_test_get_by_name (p, "f");
  GST_INFO ("zcupload: %s", zc_test_stats_to_string (up).c_str ());
  GST_INFO ("zcfilter: %s", zc_test_stats_to_string (f).c_str ());
  fail_unless_equals_int (zc_test_stat (up, "cuda-memory-buffers"), 8);
  fail_unless_equals_int (zc_test_stat (up, "zero-copy-buffers"), 8);
  fail_unless_equals_int (zc_test_stat (up, "bytes-copied"), 0);
  fail_unless_equals_int (zc_test_stat (f, "bytes-copied"), 0);
  /* from the decoder's frame the kernel wrote zcdownload's mapped frame
   * itself: no device frame between them, nothing on the copy engines */
  fail_unless_equals_int (zc_test_stat (f, "bytes-staged"), 0);
  gst_object_unref (f);
  gst_object_unref (up);
  stop (p);
  free_samples (got);
  free_samples (want);
}

GST_END_TEST;

/* The decoder was given the CUDA context zcupload shares: the primary
 * context of the device, the one gst-zerocopy's runtime uses */
GST_START_TEST (test_decoder_shares_our_cuda_context)
{
#if GST_ZC_HAVE_GST_CUDA
  std::string desc = std::string ("filesrc location=") + h264_file +
      " ! h264parse ! nvh264dec name=dec ! video/x-raw(memory:CUDAMemory) ! "
      "zcupload name=up ! fakesink";
  GstElement *p = zc_test_parse (desc.c_str ());
  fail_unless (gst_element_set_state (p, GST_STATE_PAUSED) !=
      GST_STATE_CHANGE_FAILURE);
  fail_unless_equals_int (gst_element_get_state (p, NULL, NULL,
          10 * GST_SECOND), GST_STATE_CHANGE_SUCCESS);

  GstElement *dec = zc_test_get_by_name (p, "dec");
  GstElement *up = zc_test_get_by_name (p, "up");
  GstCudaContext *theirs = NULL, *ours_cuda = NULL;
  GstZcContext *ours = NULL;

  GstQuery *q = gst_query_new_context (GST_ZC_CUDA_CONTEXT_TYPE);
  fail_unless (gst_element_query (dec, q), "nvh264dec has no CUDA context");
  GstContext *c = NULL;
  gst_query_parse_context (q, &c);
  fail_unless (gst_structure_get (gst_context_get_structure (c),
          GST_ZC_CUDA_CONTEXT_TYPE, GST_TYPE_CUDA_CONTEXT, &theirs, NULL));
  gst_query_unref (q);

  q = gst_query_new_context (GST_ZC_CONTEXT_TYPE);
  fail_unless (gst_element_query (up, q));
  gst_query_parse_context (q, &c);
  fail_unless (gst_context_get_zc_context (c, &ours));
  gst_query_unref (q);

  ours_cuda = (GstCudaContext *) gst_zc_context_get_cuda_context (ours);
  fail_unless (ours_cuda != NULL);
  fail_unless (gst_cuda_context_get_handle (theirs) ==
      gst_cuda_context_get_handle (ours_cuda),
      "nvh264dec runs in CUDA context %p, gst-zerocopy in %p",
      gst_cuda_context_get_handle (theirs),
      gst_cuda_context_get_handle (ours_cuda));
  guint their_dev = 99;
  g_object_get (theirs, "cuda-device-id", &their_dev, NULL);
  fail_unless_equals_int (their_dev, gst_zc_context_get_device_id (ours));

  gst_object_unref (theirs);
  gst_object_unref (ours);
  gst_object_unref (up);
  gst_object_unref (dec);
  stop (p);
#endif
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* cudaupload and cudadownload on either side of zcfilter                  */
/* ---------------------------------------------------------------------- */

static const gchar *src_nv12 =
    "videotestsrc num-buffers=6 pattern=smpte horizontal-speed=5 ! "
    "video/x-raw,format=NV12,width=640,height=360 ! ";
static const gchar *filter =
    "zcfilter name=f brightness=0.1 saturation=1.2 ! ";
static const gchar *rgba_small = "format=RGBA,width=320,height=180";

static std::string
plain_reference (void)
{
  return std::string (src_nv12) + "zcupload ! " + filter +
      "video/x-raw(memory:CUDAZeroCopy)," + rgba_small +
      " ! zcdownload ! appsink name=sink sync=false";
}

/* @head ! zcfilter ! @tail against the plain path: the same pixels, no copy
 * in zcfilter, and @cuda_buffers frames it read or wrote as CUDAMemory */
static void
check_cuda_chain (const std::string & head, const std::string & tail,
    guint64 cuda_buffers, const gchar * what)
{
  GstElement *p;
  std::vector < GstSample * >got = run (std::string (src_nv12) + head +
      filter + tail + " ! appsink name=sink sync=false", &p);
  std::vector < GstSample * >want = run (plain_reference ());
  assert_same_frames (got, want, what);

  GstElement *f = zc_test_get_by_name (p, "f");
  fail_unless_equals_int (zc_test_stat (f, "cuda-memory-buffers"),
      cuda_buffers);
  fail_unless_equals_int (zc_test_stat (f, "bytes-copied"), 0);
  gst_object_unref (f);
  stop (p);
  free_samples (got);
  free_samples (want);
}

static const gchar *from_cudaupload =
    "cudaupload ! video/x-raw(memory:CUDAMemory) ! ";

GST_START_TEST (test_cudaupload_into_zcfilter)
{
  check_cuda_chain (from_cudaupload, std::string
      ("video/x-raw(memory:CUDAZeroCopy),") + rgba_small + " ! zcdownload",
      6, "cudaupload ! zcfilter");
}

GST_END_TEST;

GST_START_TEST (test_zcfilter_into_cudadownload)
{
  check_cuda_chain ("zcupload ! ", std::string
      ("video/x-raw(memory:CUDAMemory),") + rgba_small +
      " ! cudadownload ! video/x-raw,format=RGBA", 6,
      "zcfilter ! cudadownload");
}

GST_END_TEST;

GST_START_TEST (test_cuda_memory_both_ways)
{
  /* every frame read and written as CUDAMemory: twice per frame */
  check_cuda_chain (from_cudaupload, std::string
      ("video/x-raw(memory:CUDAMemory),") + rgba_small +
      " ! cudadownload ! video/x-raw,format=RGBA", 12,
      "cudaupload ! zcfilter ! cudadownload");
}

GST_END_TEST;

/* cudaupload's pool hands the same few memories out again and again:
 * each is wrapped once, and every later frame in it reuses that wrapper
 * (no allocation per frame), with the frame's own pixels */
GST_START_TEST (test_recycled_cuda_frames_wrapped_once)
{
  const std::string src =
      "videotestsrc num-buffers=60 pattern=smpte horizontal-speed=5 ! "
      "video/x-raw,format=NV12,width=640,height=360 ! ";
  const std::string tail = std::string ("video/x-raw(memory:CUDAZeroCopy),") +
      rgba_small + " ! zcdownload ! appsink name=sink sync=false";
  guint64 before = gst_zc_wrapped_buffers_made ();
  std::vector < GstSample * >got = run (src + from_cudaupload + filter +
      tail);
  guint64 made = gst_zc_wrapped_buffers_made () - before;
  std::vector < GstSample * >want = run (src + "zcupload ! " + filter + tail);
  assert_same_frames (got, want, "cudaupload's recycled frames");
  fail_unless_equals_int (got.size (), 60);
  GST_INFO ("60 frames of cudaupload's pool, %" G_GUINT64_FORMAT
      " wrappers made", made);
  fail_unless (made >= 1 && made <= 12, "%" G_GUINT64_FORMAT " wrappers "
      "made for 60 frames of a recycling pool", made);
  free_samples (got);
  free_samples (want);
}

GST_END_TEST;

/* No effect, same caps, CUDAMemory to our memory: the frame is the
 * decoder's own, in place, and reads back the same */
GST_START_TEST (test_unchanged_frame_changes_memory)
{
  std::vector < GstSample * >got = run (std::string (src_nv12) +
      "cudaupload ! video/x-raw(memory:CUDAMemory) ! zcfilter ! "
      "video/x-raw(memory:CUDAZeroCopy) ! zcdownload ! "
      "appsink name=sink sync=false");
  std::vector < GstSample * >want = run (std::string (src_nv12) +
      "appsink name=sink sync=false");
  assert_same_frames (got, want, "CUDAMemory ! zcfilter (identity)");
  free_samples (got);
  free_samples (want);

  /* and the other way: our memory out as CUDAMemory is a copy, counted */
  GstElement *p;
  got = run (std::string (src_nv12) + "zcupload ! zcfilter name=f ! "
      "video/x-raw(memory:CUDAMemory) ! cudadownload ! video/x-raw ! "
      "appsink name=sink sync=false", &p);
  want = run (std::string (src_nv12) + "appsink name=sink sync=false");
  assert_same_frames (got, want, "zcfilter (identity) ! CUDAMemory");
  GstElement *f = zc_test_get_by_name (p, "f");
  fail_unless_equals_int (zc_test_stat (f, "copied-buffers"), 6);
  gst_object_unref (f);
  stop (p);
  free_samples (got);
  free_samples (want);
}

GST_END_TEST;

#if GST_ZC_HAVE_GST_CUDA
/* An application gives cudaupload a CUDA context of its own (not the
 * primary one): its memory is not addressable from gst-zerocopy's context */
static GstElement *
pipeline_with_foreign_context (const std::string & desc)
{
  GstElement *p = zc_test_parse (desc.c_str ());
  GstElement *up = zc_test_get_by_name (p, "cu");
  GstCudaContext *own = gst_cuda_context_new (0);
  fail_unless (own != NULL);
  GstContext *c = gst_context_new_cuda_context (own);
  gst_element_set_context (up, c);
  gst_context_unref (c);
  gst_object_unref (own);
  gst_object_unref (up);
  return p;
}
#endif

GST_START_TEST (test_foreign_context_is_copied_or_refused)
{
#if GST_ZC_HAVE_GST_CUDA
  /* zcupload copies it, counted, and the pixels are the same */
  GstElement *p = pipeline_with_foreign_context (std::string (src_nv12) +
      "cudaupload name=cu ! video/x-raw(memory:CUDAMemory) ! zcupload "
      "name=up ! " + filter + "video/x-raw(memory:CUDAZeroCopy)," +
      rgba_small + " ! zcdownload ! appsink name=sink sync=false");
  std::vector < GstSample * >got = play_and_collect (p);
  std::vector < GstSample * >want = run (plain_reference ());
  assert_same_frames (got, want, "foreign context through zcupload");
  GstElement *up = zc_test_get_by_name (p, "up");
  fail_unless_equals_int (zc_test_stat (up, "cuda-memory-buffers"), 0);
  fail_unless_equals_int (zc_test_stat (up, "copied-buffers"), 6);
  fail_unless (zc_test_stat (up, "bytes-copied") >= 6u * 640 * 360 * 3 / 2);
  gst_object_unref (up);
  stop (p);
  free_samples (got);
  free_samples (want);

  /* zcfilter cannot read it: an error that says what to do */
  p = pipeline_with_foreign_context (std::string (src_nv12) +
      "cudaupload name=cu ! video/x-raw(memory:CUDAMemory) ! " + filter +
      "video/x-raw(memory:CUDAZeroCopy)," + rgba_small +
      " ! zcdownload ! fakesink");
  ZcBusLog log;
  zc_test_play (p, log, 20 * GST_SECOND);
  fail_unless (!log.errors.empty (), "no error:\n%s", log.describe ().c_str ());
  std::string text = zc_test_message_text (log.errors[0]);
  fail_unless (zc_test_contains_nocase (text, "another CUDA context") &&
      zc_test_contains_nocase (text, "zcupload"), "%s", text.c_str ());
  stop (p);
#endif
}

GST_END_TEST;

#if GST_ZC_HAVE_GST_CUDA
/* An element upstream that leaves its own CUDA context current on the
 * streaming thread from the first buffer to the end of the stream */
struct ContextLeftCurrent
{
  GstCudaContext *context;
  gboolean pushed;
  gboolean popped_it;           /* at EOS, its context was the current one */
};

static GstPadProbeReturn
leave_context_current (GstPad *, GstPadProbeInfo * info, gpointer data)
{
  auto *c = (ContextLeftCurrent *) data;
  if ((info->type & GST_PAD_PROBE_TYPE_BUFFER) && !c->pushed)
    c->pushed = gst_cuda_context_push (c->context);
  else if ((info->type & GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM) &&
      GST_EVENT_TYPE (GST_PAD_PROBE_INFO_EVENT (info)) == GST_EVENT_EOS &&
      c->pushed) {
    CUcontext current = NULL;
    c->popped_it = gst_cuda_context_pop (&current) &&
        current == (CUcontext) gst_cuda_context_get_handle (c->context);
  }
  return GST_PAD_PROBE_OK;
}
#endif

/* A CUDA context that is no primary one, current on a thread that runs
 * the elements' code: an application's own on the thread that changes the
 * pipeline's state (PyCUDA's autoinit leaves one so), or an element's left
 * on the streaming thread. The elements' CUDA work still goes to the
 * runtime's primary context, which their streams and memory belong to:
 * the frames come out right, and that context is current on the thread
 * again afterwards. */
GST_START_TEST (test_context_current_on_the_thread_left_alone)
{
#if GST_ZC_HAVE_GST_CUDA
  const std::string desc = std::string (src_nv12) + "zcupload name=up ! " +
      filter + "video/x-raw(memory:CUDAZeroCopy)," + rgba_small +
      " ! zcdownload ! appsink name=sink sync=false";
  std::vector < GstSample * >want = run (desc);
  GstCudaContext *own = gst_cuda_context_new (0);
  fail_unless (own != NULL);
  CUcontext handle = (CUcontext) gst_cuda_context_get_handle (own);

  /* the application's, current while it plays the pipeline */
  fail_unless (gst_cuda_context_push (own));
  std::vector < GstSample * >got = run (desc);
  CUcontext current = NULL;
  fail_unless (gst_cuda_context_pop (&current));
  fail_unless (current == handle, "the application's CUDA context is no "
      "longer the current one after the pipeline ran");
  assert_same_frames (got, want, "an application's context current");
  free_samples (got);

  /* an element's, current on the streaming thread */
  GstElement *p = zc_test_parse (desc.c_str ());
  GstElement *up = zc_test_get_by_name (p, "up");
  GstPad *pad = gst_element_get_static_pad (up, "sink");
  ContextLeftCurrent left = { own, FALSE, FALSE };
  gst_pad_add_probe (pad, (GstPadProbeType) (GST_PAD_PROBE_TYPE_BUFFER |
          GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM), leave_context_current, &left,
      NULL);
  got = play_and_collect (p);
  stop (p);
  fail_unless (left.pushed);
  fail_unless (left.popped_it, "another context than the element's was "
      "current on the streaming thread at the end of the stream");
  assert_same_frames (got, want, "an element's context current");
  free_samples (got);
  free_samples (want);
  gst_object_unref (pad);
  gst_object_unref (up);
  gst_object_unref (own);
#endif
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* Foreign system memory: registered once, read in place                  */
/* ---------------------------------------------------------------------- */

static const gchar *to_small_rgba =
    "zcfilter name=f brightness=0.1 ! video/x-raw(memory:CUDAZeroCopy),"
    "format=RGBA,width=640,height=360 ! zcdownload ! "
    "appsink name=sink sync=false";
static const gchar *caps_720p_nv12 =
    "video/x-raw,format=NV12,width=1280,height=720,framerate=30/1 ! ";
/* one SMPTE frame, for imagefreeze to repeat */
static const std::string one_smpte_720p = std::string
    ("videotestsrc num-buffers=1 pattern=smpte ! ") + caps_720p_nv12;

GST_START_TEST (test_imagefreeze_registered_once)
{
  GstElement *p;
  std::vector < GstSample * >got = run (one_smpte_720p +
      "imagefreeze num-buffers=30 ! zcupload name=up ! " + to_small_rgba, &p);
  std::vector < GstSample * >want = run (one_smpte_720p +
      "zcupload ! " + to_small_rgba);
  fail_unless_equals_int (got.size (), 30);
  for (GstSample * s:got) {
    std::string d = frame_difference (s, want[0]);
    fail_unless (d.empty (), "imagefreeze frame differs: %s", d.c_str ());
  }
  GstElement *up = zc_test_get_by_name (p, "up");
  GST_INFO ("zcupload: %s", zc_test_stats_to_string (up).c_str ());
  fail_unless_equals_int (zc_test_stat (up, "registrations"), 1);
  fail_unless_equals_int (zc_test_stat (up, "adopted-buffers"), 30);
  fail_unless_equals_int (zc_test_stat (up, "zero-copy-buffers"), 30);
  fail_unless_equals_int (zc_test_stat (up, "bytes-copied"), 0);
  fail_unless (zc_test_stat (up, "bytes-registered") >= 1280 * 720 * 3 / 2);
  gst_object_unref (up);
  stop (p);
  free_samples (got);
  free_samples (want);
  /* the memory went with the pipeline, and its registration with it */
  fail_unless_equals_int (gst_zc_registered_bytes (), 0);
}

GST_END_TEST;

/* A producer with a pool of its own (identity drop-allocation keeps ours
 * from it): each of its memories is registered the first time, and moving
 * content shows the GPU reads each frame's bytes, not an older one's. Two
 * heap allocations side by side share a page (whether they are depends on
 * malloc's state): a memory uses the registration of its neighbour for
 * that page and registers the rest, so no frame is copied. Only where
 * registered pages are not mapped at their host addresses on the GPU is
 * such a memory copied instead. */
GST_START_TEST (test_recycled_pool_registered_per_memory)
{
  const gchar *src = "videotestsrc num-buffers=40 pattern=ball ! ";
  GstElement *p;
  fail_unless_equals_int (gst_zc_registered_bytes (), 0);
  std::vector < GstSample * >got = run (std::string (src) + caps_720p_nv12 +
      "identity drop-allocation=true ! zcupload name=up ! " + to_small_rgba,
      &p);
  std::vector < GstSample * >want = run (std::string (src) + caps_720p_nv12 +
      "zcupload ! " + to_small_rgba);
  assert_same_frames (got, want, "foreign pool");

  GstElement *up = zc_test_get_by_name (p, "up");
  GST_INFO ("zcupload: %s", zc_test_stats_to_string (up).c_str ());
  guint64 regs = zc_test_stat (up, "registrations");
  fail_unless (regs >= 1 && regs <= 8, "%" G_GUINT64_FORMAT
      " registrations for 40 frames of a recycling pool", regs);
  guint64 adopted = zc_test_stat (up, "adopted-buffers");
  guint64 copied = zc_test_stat (up, "copied-buffers");
  fail_unless (adopted >= 1, "no frame adopted");
  fail_unless_equals_int (adopted + copied, 40);
#if GST_ZC_HAVE_CUDA
  int host_pointer_ok = 0;
  if (cudaDeviceGetAttribute (&host_pointer_ok,
          cudaDevAttrCanUseHostPointerForRegisteredMem, 0) == cudaSuccess &&
      host_pointer_ok)
    fail_unless_equals_int (copied, 0);
#endif
  guint64 bytes_copied = zc_test_stat (up, "bytes-copied");
  fail_unless (bytes_copied >= copied * 1280 * 720 * 3 / 2 &&
      (bytes_copied == 0) == (copied == 0), "%" G_GUINT64_FORMAT
      " bytes copied for %" G_GUINT64_FORMAT " frames", bytes_copied, copied);
  gst_object_unref (up);
  stop (p);
  free_samples (got);
  free_samples (want);
  fail_unless_equals_int (gst_zc_registered_bytes (), 0);
}

GST_END_TEST;

GST_START_TEST (test_adoption_off_or_over_limit_copies)
{
  for (const gchar *prop : { "adopt=false", "adopt-max-bytes=4096" }) {
    GstElement *p;
    std::vector < GstSample * >got = run (one_smpte_720p +
        "imagefreeze num-buffers=5 ! zcupload name=up " + prop + " ! " +
        to_small_rgba, &p);
    std::vector < GstSample * >want = run (one_smpte_720p +
        "zcupload ! " + to_small_rgba);
    fail_unless_equals_int (got.size (), 5);
    fail_unless (frame_difference (got[4], want[0]).empty ());
    GstElement *up = zc_test_get_by_name (p, "up");
    fail_unless_equals_int (zc_test_stat (up, "registrations"), 0);
    fail_unless_equals_int (zc_test_stat (up, "adopted-buffers"), 0);
    fail_unless_equals_int (zc_test_stat (up, "copied-buffers"), 5);
    gst_object_unref (up);
    stop (p);
    free_samples (got);
    free_samples (want);
  }
}

GST_END_TEST;

static Suite *
nvcodec_gpu_suite (void)
{
  Suite *s = suite_create ("nvcodec-gpu");
  TCase *tc = zc_test_case ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_decoded_frames_read_in_place);
  tcase_add_test (tc, test_decoder_shares_our_cuda_context);
  tcase_add_test (tc, test_cudaupload_into_zcfilter);
  tcase_add_test (tc, test_zcfilter_into_cudadownload);
  tcase_add_test (tc, test_cuda_memory_both_ways);
  tcase_add_test (tc, test_recycled_cuda_frames_wrapped_once);
  tcase_add_test (tc, test_unchanged_frame_changes_memory);
  tcase_add_test (tc, test_foreign_context_is_copied_or_refused);
  tcase_add_test (tc, test_imagefreeze_registered_once);
  tcase_add_test (tc, test_recycled_pool_registered_per_memory);
  tcase_add_test (tc, test_adoption_off_or_over_limit_copies);
  /* last: where it fails, it may leave its context current on a thread */
  tcase_add_test (tc, test_context_current_on_the_thread_left_alone);
  return s;
}

/* GST_CHECK_MAIN cannot report "skipped": exit 77 where this cannot run */
int
main (int argc, char **argv)
{
  gst_check_init (&argc, &argv);
  if (!zc_test_have_gpu ()) {
    g_print ("nvcodec-gpu: no usable CUDA GPU here; skipped\n");
    return 77;
  }
  if (!gst_zc_have_cuda_memory_interop ()) {
    g_print ("nvcodec-gpu: built without gstreamer-cuda-1.0; skipped\n");
    return 77;
  }
  gboolean required = g_strcmp0 (g_getenv ("ZC_TEST_REQUIRE_NVCODEC"), "1")
      == 0;
  for (const gchar *name : { "nvh264dec", "cudaupload", "cudadownload",
          "h264parse", "imagefreeze" }) {
    GstElementFactory *f = gst_element_factory_find (name);
    if (!f) {
      g_print ("nvcodec-gpu: no %s element here%s\n", name,
          required ? " (ZC_TEST_REQUIRE_NVCODEC=1: failing)" : "; skipped");
      return required ? 1 : 77;
    }
    gst_object_unref (f);
  }
  return gst_check_run_suite (nvcodec_gpu_suite (), "nvcodec-gpu", __FILE__);
}

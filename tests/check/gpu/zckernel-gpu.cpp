/* gst-zerocopy: zckernel running users' kernels, compiled with NVRTC
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * examples/kernels/invert.cu against zcfilter invert=true, byte for byte,
 * on each memory type, without a copy; params, the frame number and the
 * timestamp as the kernel sees them, from a known frame on; compile, file
 * and entry errors as the bus reports them; the compile cache in memory and
 * on disk (a child process); a kernel replaced while playing, whole frames
 * of one or the other, and a broken replacement that leaves the old one
 * running; out of place and a shared (tee'd) input. The kernels are in
 * tests/kernels/zckernel/. Exits 77 (skipped, for meson) without a usable
 * GPU. zckernel-binary.cpp runs precompiled kernels without NVRTC.
 *
 * Kernels compile into a cache of this run (XDG_CACHE_HOME set in main()
 * before GLib reads it), never the user's.
 */
#include "../zccheck.h"

#include <gst/app/app.h>

#include <unistd.h>

#include <chrono>
#include <functional>

#ifndef ZC_TEST_KERNEL_SRC_DIR
#error "tests/meson.build defines ZC_TEST_KERNEL_SRC_DIR (tests/kernels/zckernel)"
#endif
#ifndef ZC_EXAMPLES_KERNEL_DIR
#error "tests/meson.build defines ZC_EXAMPLES_KERNEL_DIR (examples/kernels)"
#endif

/* Set in the environment of the child that looks for a kernel in the disk
 * cache (test_cache_in_memory_and_on_disk); its value is the kernel's nonce */
#define CACHE_CHILD_ENV "ZC_KERNEL_TEST_CACHE_CHILD"
#define CACHE_CHILD_MARK "zckernel-cache-child: disk-cache "

static const gchar *program_path;

static const GstClockTime kTimeout = 20 * GST_SECOND;

/* ---------------------------------------------------------------------- */
/* Kernels and pipelines                                                  */
/* ---------------------------------------------------------------------- */

static std::string
test_kernel (const gchar * name)
{
  gchar *p = g_build_filename (ZC_TEST_KERNEL_SRC_DIR, name, NULL);
  std::string s (p);
  g_free (p);
  return s;
}

static std::string
invert_kernel (void)
{
  gchar *p = g_build_filename (ZC_EXAMPLES_KERNEL_DIR, "invert.cu", NULL);
  std::string s (p);
  g_free (p);
  return s;
}

static std::string
read_text (const std::string & path)
{
  gchar *data = NULL;
  fail_unless (g_file_get_contents (path.c_str (), &data, NULL, NULL),
      "cannot read %s", path.c_str ());
  std::string s (data);
  g_free (data);
  return s;
}

/* What fill.cu writes into the first 8 pixels of row 0 */
struct FillRecord
{
  guint64 frame_number;
  gint64 pts;
  gint64 duration;
  gint32 value;
  guint32 tag;
};
static_assert (sizeof (FillRecord) == 32, "fill.cu's record");

/* Reads fill.cu's output: the record, and every other pixel checked
 * against it (one kernel wrote the whole frame). "" or what is wrong. */
static std::string
read_fill (GstSample * sample, FillRecord * rec)
{
  GstVideoInfo info;
  GstVideoFrame f;
  fail_unless (gst_video_info_from_caps (&info, gst_sample_get_caps (sample)));
  fail_unless (gst_video_frame_map (&f, &info, gst_sample_get_buffer (sample),
          GST_MAP_READ));
  const guint8 *data = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&f, 0);
  gint stride = GST_VIDEO_FRAME_PLANE_STRIDE (&f, 0);
  memcpy (rec, data, sizeof (*rec));
  const guint8 want[4] = { (guint8) rec->value, (guint8) rec->frame_number,
    (guint8) rec->tag, 0xA5
  };
  std::string err;
  for (gint y = 0; y < info.height && err.empty (); y++) {
    for (gint x = y == 0 ? 8 : 0; x < info.width && err.empty (); x++) {
      const guint8 *px = data + (gsize) y * stride + 4 * x;
      if (memcmp (px, want, 4) != 0)
        err = "pixel (" + std::to_string (x) + "," + std::to_string (y) +
            ") is " + std::to_string (px[0]) + "," + std::to_string (px[1]) +
            "," + std::to_string (px[2]) + " where the record says value " +
            std::to_string (rec->value) + ", frame " +
            std::to_string (rec->frame_number) + ", tag " +
            std::to_string (rec->tag);
    }
  }
  gst_video_frame_unmap (&f);
  return err;
}

/* appsrc ! zcupload ! zckernel ! zcdownload ! appsink, one frame at a time:
 * each push is pulled before the next, so a property set between two
 * push_pull () calls is set between two frames. */
struct KernelPipe
{
  GstElement *pipeline = nullptr, *src = nullptr, *sink = nullptr;
  GstElement *kernel = nullptr;
  GstVideoInfo info;

  KernelPipe (GstVideoFormat format, gint width, gint height,
      const gchar * memory_type = "mapped")
  {
    gchar *desc = g_strdup_printf ("appsrc name=src format=time ! "
        "zcupload memory-type=%s ! zckernel name=k memory-type=%s ! "
        "zcdownload memory-type=%s ! appsink name=sink sync=false",
        memory_type, memory_type, memory_type);
    pipeline = zc_test_parse (desc);
    g_free (desc);
    src = zc_test_get_by_name (pipeline, "src");
    sink = zc_test_get_by_name (pipeline, "sink");
    kernel = zc_test_get_by_name (pipeline, "k");
    GstCaps *caps = zc_test_raw_caps (format, width, height);
    gst_video_info_from_caps (&info, caps);
    g_object_set (src, "caps", caps, NULL);
    gst_caps_unref (caps);
  }
  KernelPipe (const KernelPipe &) = delete;
  KernelPipe & operator= (const KernelPipe &) = delete;

  /* "" or the bus's account of why it did not start */
  std::string start ()
  {
    if (gst_element_set_state (pipeline, GST_STATE_PLAYING) !=
        GST_STATE_CHANGE_FAILURE)
      return "";
    ZcBusLog log;
    zc_test_collect (pipeline, log, GST_SECOND);
    return "did not start: " + log.describe ();
  }

  /* A random frame in, its output out (NULL after kTimeout) */
  GstSample *push_pull (guint32 seed, GstClockTime pts,
      GstClockTime duration = GST_CLOCK_TIME_NONE)
  {
    GstBuffer *in = gst_buffer_new_allocate (NULL, info.size, NULL);
    zc_test_fill_random (in, seed);
    GST_BUFFER_PTS (in) = pts;
    GST_BUFFER_DURATION (in) = duration;
    fail_unless_equals_int (gst_app_src_push_buffer (GST_APP_SRC (src), in),
        GST_FLOW_OK);
    return gst_app_sink_try_pull_sample (GST_APP_SINK (sink), kTimeout);
  }

  ~KernelPipe ()
  {
    gst_element_set_state (pipeline, GST_STATE_NULL);
    gst_object_unref (kernel);
    gst_object_unref (sink);
    gst_object_unref (src);
    gst_object_unref (pipeline);
  }
};


/* The sample of @sample's frame, copied into system memory: the test holds
 * no pool buffer while the pipeline runs */
static GstSample *
sample_copy (GstSample * sample)
{
  GstBuffer *copy = zc_test_system_copy (gst_sample_get_buffer (sample));
  GstSample *s = gst_sample_new (copy, gst_sample_get_caps (sample), NULL,
      NULL);
  gst_buffer_unref (copy);
  return s;
}

static void
free_samples (std::vector < GstSample * >&samples)
{
  for (GstSample * s:samples)
    gst_sample_unref (s);
  samples.clear ();
}

/* Pulls @n frames from @sink and waits for EOS; "" or what went wrong */
static std::string
pull_to_eos (GstElement * pipeline, GstElement * sink, guint n,
    std::vector < GstSample * >&out)
{
  for (guint i = 0; i < n; i++) {
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        kTimeout);
    if (!s)
      break;
    out.push_back (sample_copy (s));
    gst_sample_unref (s);
  }
  ZcBusLog log;
  zc_test_collect (pipeline, log, kTimeout);
  if (!log.eos || !log.errors.empty () || out.size () != n)
    return std::to_string (out.size ()) + " of " + std::to_string (n) +
        " frames, then: " + (log.eos ? "EOS\n" : "") + log.describe ();
  return "";
}

/* ---------------------------------------------------------------------- */
/* invert.cu == zcfilter invert=true                                      */
/* ---------------------------------------------------------------------- */

struct InvertCase
{
  GstVideoFormat format;
  gint width, height;
  const gchar *memory_type;
};

static std::vector < InvertCase > invert_cases (void)
{
  std::vector < InvertCase > cases;
  const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_RGBA,
    GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12,
    GST_VIDEO_FORMAT_I420
  };
  const gint sizes[][2] = { {64, 48}, {33, 17} };
  for (const gchar * mem: { "mapped", "managed", "device" }) {
    for (GstVideoFormat f:formats)
      for (auto & s:sizes)
        cases.push_back ({f, s[0], s[1], mem});
    cases.push_back ({GST_VIDEO_FORMAT_RGBA, 1920, 1080, mem});
  }
  return cases;
}

struct KernelRun
{
  std::vector < GstBuffer * >inputs;    /* what zcupload got, copied */
  std::vector < GstSample * >outputs;   /* what zcdownload gave, copied */
  std::vector < GstMemory * >in_mems, out_mems;      /* at zckernel's pads */
  std::string error;
  std::string kernel_stats, upload_stats;
  guint64 kernel_copies = 0, kernel_bytes_copied = 0, upload_copies = 0;
  std::string kernel_memory_type;

    KernelRun () = default;
    KernelRun (const KernelRun &) = delete;
    KernelRun & operator= (const KernelRun &) = delete;
   ~KernelRun ()
  {
    for (GstBuffer * b:inputs)
      gst_buffer_unref (b);
    free_samples (outputs);
  }
};

static const guint kInvertFrames = 3;

/* videotestsrc pattern=snow ! zcupload ! zckernel @props ! zcdownload, all
 * with @c.memory_type: videotestsrc writes into zcupload's pool, the
 * kernel works there */
static void
run_kernel (const InvertCase & c, const std::string & props, KernelRun & run)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=snow num-buffers=%u ! "
      "video/x-raw,format=%s,width=%d,height=%d,framerate=30/1 ! "
      "zcupload name=up memory-type=%s ! zckernel name=k memory-type=%s %s ! "
      "zcdownload memory-type=%s ! appsink name=sink sync=false",
      kInvertFrames, gst_video_format_to_string (c.format), c.width, c.height,
      c.memory_type, c.memory_type, props.c_str (), c.memory_type);
  GstElement *p = zc_test_parse (desc);
  g_free (desc);
  GstElement *up = zc_test_get_by_name (p, "up");
  GstElement *k = zc_test_get_by_name (p, "k");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  GstPad *pad = gst_element_get_static_pad (up, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER,
      zc_test_probe_keep_copy, &run.inputs, NULL);
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (k, "sink");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER,
      zc_test_probe_record_memory, &run.in_mems, NULL);
  gst_object_unref (pad);
  pad = gst_element_get_static_pad (k, "src");
  gst_pad_add_probe (pad, GST_PAD_PROBE_TYPE_BUFFER,
      zc_test_probe_record_memory, &run.out_mems, NULL);
  gst_object_unref (pad);

  if (gst_element_set_state (p, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    ZcBusLog log;
    zc_test_collect (p, log, GST_SECOND);
    run.error = "zckernel's pipeline did not start: " + log.describe ();
  } else {
    run.error = pull_to_eos (p, sink, kInvertFrames, run.outputs);
    if (!run.error.empty ())
      run.error = "zckernel's pipeline: " + run.error;
  }
  if (run.error.empty ()) {
    run.kernel_stats = zc_test_stats_to_string (k);
    run.upload_stats = zc_test_stats_to_string (up);
    run.kernel_copies = zc_test_stat (k, "copied-buffers");
    run.kernel_bytes_copied = zc_test_stat (k, "bytes-copied");
    run.upload_copies = zc_test_stat (up, "copied-buffers");
    run.kernel_memory_type = zc_test_stat_string (k, "memory-type");
  }
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (k);
  gst_object_unref (up);
  gst_object_unref (p);
}

/* The same input frames, with the caps videotestsrc negotiated (@caps),
 * through zcfilter invert=true */
static std::string
run_zcfilter_invert (const InvertCase & c, GstCaps * caps,
    const std::vector < GstBuffer * >&inputs, std::vector < GstSample * >&out)
{
  gchar *desc = g_strdup_printf ("appsrc name=src format=time ! "
      "zcupload memory-type=%s ! zcfilter invert=true memory-type=%s ! "
      "zcdownload memory-type=%s ! appsink name=sink sync=false",
      c.memory_type, c.memory_type, c.memory_type);
  GstElement *p = zc_test_parse (desc);
  g_free (desc);
  GstElement *src = zc_test_get_by_name (p, "src");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  g_object_set (src, "caps", caps, NULL);
  std::string err;
  if (gst_element_set_state (p, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    err = "zcfilter's pipeline did not start";
  for (guint i = 0; err.empty () && i < inputs.size (); i++)
    if (gst_app_src_push_buffer (GST_APP_SRC (src),
            gst_buffer_ref (inputs[i])) != GST_FLOW_OK)
      err = "zcfilter's pipeline refused frame " + std::to_string (i);
  if (err.empty ()) {
    gst_app_src_end_of_stream (GST_APP_SRC (src));
    err = pull_to_eos (p, sink, inputs.size (), out);
    if (!err.empty ())
      err = "zcfilter's pipeline: " + err;
  }
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (src);
  gst_object_unref (p);
  return err;
}

static std::string
compare_samples (GstSample * a, GstSample * b, const gchar * what)
{
  GstVideoInfo ia, ib;
  GstVideoFrame fa, fb;
  fail_unless (gst_video_info_from_caps (&ia, gst_sample_get_caps (a)));
  fail_unless (gst_video_info_from_caps (&ib, gst_sample_get_caps (b)));
  fail_unless (gst_video_frame_map (&fa, &ia, gst_sample_get_buffer (a),
          GST_MAP_READ));
  fail_unless (gst_video_frame_map (&fb, &ib, gst_sample_get_buffer (b),
          GST_MAP_READ));
  std::string diff = zc_test_compare_identical (&fa, &fb, what);
  gst_video_frame_unmap (&fb);
  gst_video_frame_unmap (&fa);
  return diff;
}

/* Runs @c through invert.cu (with @props) and through zcfilter, and
 * compares them frame by frame; fills @run */
static void
check_invert_case (const InvertCase & c, const std::string & props,
    KernelRun & run)
{
  gchar *what = g_strdup_printf ("%s %dx%d memory-type=%s%s%s",
      gst_video_format_to_string (c.format), c.width, c.height,
      c.memory_type, props.empty ()? "" : " ", props.c_str ());
  std::string all = "location=\"" + invert_kernel () + "\" " + props;
  run_kernel (c, all, run);
  fail_unless (run.error.empty (), "%s: %s", what, run.error.c_str ());
  fail_unless_equals_int (run.inputs.size (), kInvertFrames);

  std::vector < GstSample * >expected;
  std::string err = run_zcfilter_invert (c,
      gst_sample_get_caps (run.outputs[0]), run.inputs, expected);
  fail_unless (err.empty (), "%s: %s", what, err.c_str ());
  for (guint i = 0; i < kInvertFrames; i++) {
    gchar *frame = g_strdup_printf ("%s, frame %u (input: zckernel's "
        "byte, got: zcfilter's)", what, i);
    std::string diff = compare_samples (run.outputs[i], expected[i], frame);
    g_free (frame);
    fail_unless (diff.empty (), "%s", diff.c_str ());
  }
  free_samples (expected);

  /* the kernel worked in the frames zcupload's pool gave videotestsrc */
  fail_unless (run.kernel_copies == 0 && run.kernel_bytes_copied == 0,
      "%s: zckernel copied: %s", what, run.kernel_stats.c_str ());
  fail_unless (run.kernel_memory_type == c.memory_type, "%s: %s", what,
      run.kernel_stats.c_str ());
  /* memory-type=device: zcupload copies each frame into device memory
   * (chains-gpu.cpp), so only mapped and managed are copy-free there */
  if (g_strcmp0 (c.memory_type, "device") != 0)
    fail_unless (run.upload_copies == 0, "%s: zcupload copied: %s", what,
        run.upload_stats.c_str ());
  g_free (what);
}

GST_START_TEST (test_invert_kernel_equals_zcfilter_invert)
{
  /* __i__: the case (loop test) */
  const InvertCase c = invert_cases ()[(guint) __i__];
  KernelRun run;
  check_invert_case (c, "", run);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* in-place                                                               */
/* ---------------------------------------------------------------------- */

GST_START_TEST (test_in_place_uses_the_input_frame)
{
  const InvertCase c = { GST_VIDEO_FORMAT_RGBA, 64, 48, "mapped" };
  KernelRun run;
  check_invert_case (c, "", run);
  fail_unless_equals_int (run.in_mems.size (), kInvertFrames);
  fail_unless_equals_int (run.out_mems.size (), kInvertFrames);
  for (guint i = 0; i < kInvertFrames; i++)
    fail_unless (run.in_mems[i] == run.out_mems[i], "frame %u: zckernel did "
        "not work in place on a writable frame (in-place=true)", i);
}

GST_END_TEST;

GST_START_TEST (test_out_of_place_gives_the_same_frames)
{
  const InvertCase cases[] = {
    {GST_VIDEO_FORMAT_RGBA, 64, 48, "mapped"},
    {GST_VIDEO_FORMAT_NV12, 33, 17, "mapped"},
    {GST_VIDEO_FORMAT_I420, 64, 48, "device"},
  };
  for (const InvertCase & c:cases) {
    KernelRun run;
    check_invert_case (c, "in-place=false", run);
    fail_unless_equals_int (run.out_mems.size (), kInvertFrames);
    for (guint i = 0; i < kInvertFrames; i++)
      fail_if (run.in_mems[i] == run.out_mems[i], "%s frame %u: in-place=false "
          "and the output is the input's memory",
          gst_video_format_to_string (c.format), i);
  }
}

GST_END_TEST;

/* A frame a tee gives to two branches is not writable: zckernel writes a
 * separate frame, and the other branch sees the input untouched */
GST_START_TEST (test_shared_input_is_left_untouched)
{
  gchar *desc = g_strdup_printf ("videotestsrc pattern=snow num-buffers=%u ! "
      "video/x-raw,format=RGBA,width=64,height=48,framerate=30/1 ! "
      "zcupload ! tee name=t "
      "t. ! queue ! zckernel name=k location=\"%s\" ! zcdownload ! "
      "appsink name=inverted sync=false "
      "t. ! queue ! zcdownload ! appsink name=original sync=false",
      kInvertFrames, invert_kernel ().c_str ());
  GstElement *p = zc_test_parse (desc);
  g_free (desc);
  GstElement *inverted = zc_test_get_by_name (p, "inverted");
  GstElement *original = zc_test_get_by_name (p, "original");
  fail_unless (gst_element_set_state (p, GST_STATE_PLAYING) !=
      GST_STATE_CHANGE_FAILURE);
  const ZcFilterSetting *invert = NULL;
  for (const ZcFilterSetting & s:zc_filter_settings)
    if (g_str_equal (s.name, "invert"))
      invert = &s;
  fail_unless (invert != NULL);

  for (guint i = 0; i < kInvertFrames; i++) {
    GstSample *a = gst_app_sink_try_pull_sample (GST_APP_SINK (inverted),
        kTimeout);
    GstSample *b = gst_app_sink_try_pull_sample (GST_APP_SINK (original),
        kTimeout);
    fail_unless (a && b, "frame %u missing on a branch", i);
    GstVideoInfo info;
    GstVideoFrame fa, fb;
    fail_unless (gst_video_info_from_caps (&info, gst_sample_get_caps (b)));
    fail_unless (gst_video_frame_map (&fb, &info, gst_sample_get_buffer (b),
            GST_MAP_READ));
    fail_unless (gst_video_frame_map (&fa, &info, gst_sample_get_buffer (a),
            GST_MAP_READ));
    /* the untouched branch is videotestsrc's frame; the other its
     * negative, as zcfilter's reference computes it */
    gchar *what = g_strdup_printf ("tee'd frame %u", i);
    std::string diff = zc_test_check_filter_output (*invert, &fb, &fa, what);
    g_free (what);
    gst_video_frame_unmap (&fa);
    gst_video_frame_unmap (&fb);
    fail_unless (diff.empty (), "%s", diff.c_str ());
    gst_sample_unref (a);
    gst_sample_unref (b);
  }
  ZcBusLog log;
  zc_test_collect (p, log, kTimeout);
  fail_unless (log.eos, "%s", log.describe ().c_str ());
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (original);
  gst_object_unref (inverted);
  gst_object_unref (p);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* params, frame number, timestamps                                       */
/* ---------------------------------------------------------------------- */

static void
set_params (GstElement * k, const gchar * text)
{
  GstStructure *s = gst_structure_from_string (text, NULL);
  fail_unless (s != NULL, "bad structure %s", text);
  g_object_set (k, "params", s, NULL);
  gst_structure_free (s);
}

GST_START_TEST (test_params_change_takes_the_next_frame)
{
  KernelPipe kp (GST_VIDEO_FORMAT_RGBA, 64, 48);
  g_object_set (kp.kernel, "location", test_kernel ("fill.cu").c_str (),
      NULL);
  set_params (kp.kernel, "p, value=(int)10");
  std::string err = kp.start ();
  fail_unless (err.empty (), "%s", err.c_str ());
  guint64 compiles = 0;

  for (guint i = 0; i < 8; i++) {
    if (i == 5) {
      compiles = zc_test_stat (kp.kernel, "nvrtc-compiles");
      set_params (kp.kernel, "p, value=(int)200");
    }
    GstClockTime pts = 1000 * GST_SECOND + i * 40 * GST_MSECOND + 7;
    /* the last frame without a duration: the kernel sees -1 */
    GstClockTime duration = i == 7 ? GST_CLOCK_TIME_NONE : 40 * GST_MSECOND;
    GstSample *s = kp.push_pull (i + 1, pts, duration);
    fail_unless (s != NULL, "frame %u did not come out", i);
    FillRecord rec;
    std::string bad = read_fill (s, &rec);
    fail_unless (bad.empty (), "frame %u: %s", i, bad.c_str ());
    gint want = i < 5 ? 10 : 200;
    fail_unless (rec.value == want, "frame %u: the kernel saw value %d, "
        "want %d", i, rec.value, want);
    fail_unless (rec.frame_number == i, "frame %u: frame_number %"
        G_GUINT64_FORMAT, i, rec.frame_number);
    fail_unless (rec.pts == (gint64) pts, "frame %u: pts %" G_GINT64_FORMAT
        ", want %" G_GUINT64_FORMAT, i, rec.pts, pts);
    gint64 want_duration = i == 7 ? -1 : (gint64) duration;
    fail_unless (rec.duration == want_duration, "frame %u: duration %"
        G_GINT64_FORMAT ", want %" G_GINT64_FORMAT, i, rec.duration,
        want_duration);
    fail_unless_equals_int (rec.tag, 1);
    gst_sample_unref (s);
  }
  /* a params change is not a new kernel */
  fail_unless_equals_uint64 (zc_test_stat (kp.kernel, "nvrtc-compiles"),
      compiles);
  fail_unless_equals_uint64 (zc_test_stat (kp.kernel, "kernel-swaps"), 0);
}

GST_END_TEST;

/* docs/zckernel.md's packing: field order, each at the next offset aligned
 * to its size, booleans as 4-byte 0/1 */
GST_START_TEST (test_params_are_packed_in_field_order)
{
  KernelPipe kp (GST_VIDEO_FORMAT_RGBA, 64, 2);
  g_object_set (kp.kernel, "location",
      test_kernel ("echo-params.cu").c_str (), NULL);
  set_params (kp.kernel, "p, a=(int)-5, b=(double)2.5, c=(boolean)true, "
      "d=(float)1.5, e=(guint64)1234605616436508552, f=(uint)7");
  std::string err = kp.start ();
  fail_unless (err.empty (), "%s", err.c_str ());
  GstSample *s = kp.push_pull (1, 0);
  fail_unless (s != NULL);

  GstVideoInfo info;
  GstVideoFrame f;
  fail_unless (gst_video_info_from_caps (&info, gst_sample_get_caps (s)));
  fail_unless (gst_video_frame_map (&f, &info, gst_sample_get_buffer (s),
          GST_MAP_READ));
  const guint8 *row0 = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&f, 0);
  const guint8 *row1 = row0 + GST_VIDEO_FRAME_PLANE_STRIDE (&f, 0);
  gint32 a, c;
  gdouble b;
  gfloat d;
  guint64 e;
  guint32 fu, size, n_fields;
  memcpy (&a, row0 + 0, 4);
  memcpy (&b, row0 + 8, 8);
  memcpy (&c, row0 + 16, 4);
  memcpy (&d, row0 + 20, 4);
  memcpy (&e, row0 + 24, 8);
  memcpy (&fu, row0 + 32, 4);
  memcpy (&size, row1 + 0, 4);
  memcpy (&n_fields, row1 + 4, 4);
  gst_video_frame_unmap (&f);
  gst_sample_unref (s);

  fail_unless (a == -5, "int at 0: %d", a);
  fail_unless (b == 2.5, "double at 8: %g", b);
  fail_unless (c == 1, "boolean at 16: %d", c);
  fail_unless (d == 1.5f, "float at 20: %g", d);
  fail_unless (e == G_GUINT64_CONSTANT (0x1122334455667788),
      "uint64 at 24: %" G_GINT64_MODIFIER "x", e);
  fail_unless (fu == 7, "uint at 32: %u", fu);
  fail_unless (size == 36, "params.size %u, want 36 (the bytes used)", size);
  fail_unless (n_fields == 6, "params.n_fields %u", n_fields);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* errors                                                                 */
/* ---------------------------------------------------------------------- */

/* The 1-based line of @path that holds @marker */
static gint
line_of (const std::string & path, const gchar * marker)
{
  std::string text = read_text (path);
  gint line = 1;
  for (gsize i = 0; i < text.size (); i++) {
    if (text.compare (i, strlen (marker), marker) == 0)
      return line;
    if (text[i] == '\n')
      line++;
  }
  fail_unless (FALSE, "%s has no %s", path.c_str (), marker);
  return 0;
}

/* A pipeline whose zckernel @setup configures ends, within kTimeout, with an
 * ERROR from zckernel whose text holds each of @needles */
static void
expect_kernel_error (const gchar * what,
    const std::function < void (GstElement *) > &setup,
    std::initializer_list < std::string > needles)
{
  GstElement *p = zc_test_parse ("videotestsrc num-buffers=3 ! "
      "video/x-raw,format=RGBA,width=64,height=48 ! zcupload ! "
      "zckernel name=k ! zcdownload ! fakesink");
  GstElement *k = zc_test_get_by_name (p, "k");
  setup (k);
  ZcBusLog log;
  zc_test_play (p, log, kTimeout);
  fail_if (log.timed_out, "%s: no ERROR within %" GST_TIME_FORMAT, what,
      GST_TIME_ARGS (kTimeout));
  fail_unless (!log.errors.empty (), "%s: no ERROR: %s%s", what,
      log.eos ? "EOS\n" : "", log.describe ().c_str ());
  GstMessage *m = log.errors[0];
  fail_unless (GST_MESSAGE_SRC (m) == GST_OBJECT (k), "%s: the ERROR came "
      "from %s: %s", what, GST_OBJECT_NAME (GST_MESSAGE_SRC (m)),
      log.describe ().c_str ());
  std::string text = zc_test_message_text (m);
  for (const std::string & n:needles)
    fail_unless (zc_test_contains_nocase (text, n.c_str ()),
        "%s: the ERROR does not say '%s': %s", what, n.c_str (),
        text.c_str ());
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (k);
  gst_object_unref (p);
}

GST_START_TEST (test_compile_error_names_the_line)
{
  std::string broken = test_kernel ("broken.cu");
  /* the marker as it ends the faulty line (the file's header names it too) */
  gint line = line_of (broken, "/* ZC_TEST_SYNTAX_ERROR */");
  expect_kernel_error ("broken.cu",[&](GstElement * k) {
        g_object_set (k, "location", broken.c_str (), NULL);},
      { "Could not compile", "(" + std::to_string (line) + "): error"});

  /* a source string: its own line numbers */
  const gchar *source = "#include <gst/zerocopy/zckernel.cuh>\n"
      "ZC_KERNEL (process)\n" "{ int = 1; }\n";
  expect_kernel_error ("source",[&](GstElement * k) {
        g_object_set (k, "source", source, NULL);},
      { "Could not compile", "(3): error"});
}

GST_END_TEST;

GST_START_TEST (test_missing_file_is_an_error)
{
  const gchar *path = "/nonexistent/zckernel-test/missing.cu";
  expect_kernel_error ("missing file",[&](GstElement * k) {
        g_object_set (k, "location", path, NULL);},
      { "Could not read", path});
}

GST_END_TEST;

GST_START_TEST (test_missing_entry_is_an_error)
{
  std::string fill = test_kernel ("fill.cu");
  expect_kernel_error ("entry=foo",[&](GstElement * k) {
        g_object_set (k, "location", fill.c_str (), "entry", "foo", NULL);},
      { "No kernel named 'foo'"});
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* the compile cache                                                      */
/* ---------------------------------------------------------------------- */

/* A kernel no cache can know before this run */
static std::string
cache_source (const gchar * nonce)
{
  return std::string ("/* zckernel cache test, nonce ") + nonce + " */\n"
      "#include <gst/zerocopy/zckernel.cuh>\n"
      "ZC_KERNEL (process)\n"
      "{\n"
      "  int x = zc_x (), y = zc_y ();\n"
      "  if (zc_inside (out, x, y))\n"
      "    *zc_sample (out, 0, x, y) = (unsigned char) (x ^ y);\n" "}\n";
}

struct CacheStart
{
  std::string origin;
  guint64 compiles = 0;
  gdouble ms = 0;
};

/* Plays one frame through a zckernel running @source; its stats */
static CacheStart
start_with_source (const std::string & source)
{
  GstElement *p = zc_test_parse ("videotestsrc num-buffers=1 ! "
      "video/x-raw,format=RGBA,width=64,height=48 ! zcupload ! "
      "zckernel name=k ! zcdownload ! fakesink");
  GstElement *k = zc_test_get_by_name (p, "k");
  g_object_set (k, "source", source.c_str (), NULL);
  zc_test_play_to_eos (p);
  CacheStart c;
  GstStructure *s = zc_test_get_stats (k);
  c.origin = gst_structure_get_string (s, "kernel-origin");
  fail_unless (gst_structure_get_uint64 (s, "nvrtc-compiles", &c.compiles));
  fail_unless (gst_structure_get_double (s, "kernel-build-ms", &c.ms));
  gst_structure_free (s);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (k);
  gst_object_unref (p);
  return c;
}

/* The child's whole test: a fresh process, the same XDG_CACHE_HOME */
GST_START_TEST (test_cache_child_finds_the_kernel_on_disk)
{
  CacheStart c = start_with_source (cache_source (g_getenv (CACHE_CHILD_ENV)));
  fail_unless (c.origin == "disk-cache" && c.compiles == 0, "a new process "
      "did not find the kernel on disk: origin %s, %" G_GUINT64_FORMAT
      " NVRTC compiles", c.origin.c_str (), c.compiles);
  g_print (CACHE_CHILD_MARK "%.3f ms\n", c.ms);
}

GST_END_TEST;

GST_START_TEST (test_cache_in_memory_and_on_disk)
{
  gchar *nonce = g_strdup_printf ("%d-%08x%08x", (int) getpid (),
      g_random_int (), g_random_int ());
  std::string source = cache_source (nonce);

  CacheStart first = start_with_source (source);
  fail_unless (first.origin == "nvrtc" && first.compiles == 1,
      "first start: origin %s, %" G_GUINT64_FORMAT " NVRTC compiles",
      first.origin.c_str (), first.compiles);
  CacheStart second = start_with_source (source);
  fail_unless (second.origin == "memory-cache" && second.compiles == 0,
      "second start in the same process: origin %s, %" G_GUINT64_FORMAT
      " NVRTC compiles", second.origin.c_str (), second.compiles);

  /* this program again, running only the child's test */
  gchar **env = g_get_environ ();
  env = g_environ_setenv (env, CACHE_CHILD_ENV, nonce, TRUE);
  /* the child runs its own suite, whatever test selection or log file the
   * parent was given */
  for (const gchar * v: { "GST_CHECKS", "GST_CHECKS_IGNORE", "CK_RUN_SUITE",
        "CK_RUN_CASE", "CK_LOG_FILE_NAME", "CK_XML_LOG_FILE_NAME",
        "CK_TAP_LOG_FILE_NAME" })
    env = g_environ_unsetenv (env, v);
  gchar *argv[] = { (gchar *) program_path, NULL };
  gchar *out = NULL, *err = NULL;
  gint status = 0;
  GError *error = NULL;
  gboolean spawned = g_spawn_sync (NULL, argv, env, G_SPAWN_DEFAULT, NULL,
      NULL, &out, &err, &status, &error);
  fail_unless (spawned, "could not run %s: %s", program_path,
      error ? error->message : "?");
  const gchar *mark = strstr (out, CACHE_CHILD_MARK);
#if GLIB_CHECK_VERSION(2, 70, 0)
  gboolean exited_ok = g_spawn_check_wait_status (status, NULL);
#else
  /* the same function, under its pre-2.70 name */
  gboolean exited_ok = g_spawn_check_exit_status (status, NULL);
#endif
  fail_unless (exited_ok && mark != NULL,
      "the child process failed:\n%s\n%s", out, err);
  gdouble disk_ms = g_ascii_strtod (mark + strlen (CACHE_CHILD_MARK), NULL);
  g_print ("zckernel build: nvrtc %.3f ms, memory-cache %.3f ms, disk-cache "
      "%.3f ms\n", first.ms, second.ms, disk_ms);

  g_free (out);
  g_free (err);
  g_strfreev (env);
  g_free (nonce);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* a new kernel while playing                                             */
/* ---------------------------------------------------------------------- */

struct SwapRun
{
  KernelPipe pipe { GST_VIDEO_FORMAT_RGBA, 64, 48 };
  guint n = 0;                  /* frames pushed so far */

  /* The next frame's record (the frame checked whole) */
  FillRecord next ()
  {
    GstSample *s = pipe.push_pull (n + 1, n * 10 * GST_MSECOND);
    fail_unless (s != NULL, "frame %u did not come out", n);
    FillRecord rec;
    std::string bad = read_fill (s, &rec);
    fail_unless (bad.empty (), "frame %u: %s", n, bad.c_str ());
    /* frame_number counts from start, not from the kernel's build */
    fail_unless (rec.frame_number == n, "frame %u has frame_number %"
        G_GUINT64_FORMAT, n, rec.frame_number);
    gst_sample_unref (s);
    n++;
    return rec;
  }
};

GST_START_TEST (test_new_source_while_playing_swaps_between_frames)
{
  SwapRun run;
  std::string fill = test_kernel ("fill.cu");
  g_object_set (run.pipe.kernel, "location", fill.c_str (), NULL);
  std::string err = run.pipe.start ();
  fail_unless (err.empty (), "%s", err.c_str ());
  for (int i = 0; i < 3; i++)
    fail_unless_equals_int (run.next ().tag, 1);

  /* the same kernel, tagging its frames 2 */
  std::string tag2 = "#define FILL_TAG 2\n" + read_text (fill);
  g_object_set (run.pipe.kernel, "source", tag2.c_str (), NULL);
  guint set_at = run.n, swapped_at = 0;
  auto deadline = std::chrono::steady_clock::now () + std::chrono::seconds (30);
  while (!swapped_at) {
    fail_unless (std::chrono::steady_clock::now () < deadline,
        "no frame of the new kernel 30 s after the change (%u frames)",
        run.n - set_at);
    guint tag = run.next ().tag;
    fail_unless (tag == 1 || tag == 2, "tag %u", tag);
    if (tag == 2)
      swapped_at = run.n - 1;
    else
      g_usleep (10 * 1000);
  }
  /* compiling takes longer than a frame: frames kept coming, from the old
   * kernel, while the new one was built off the streaming thread */
  fail_unless (swapped_at > set_at, "the first frame after the change was "
      "already the new kernel's: compiled on the streaming thread?");
  for (int i = 0; i < 3; i++)
    fail_unless_equals_int (run.next ().tag, 2);
  fail_unless_equals_uint64 (zc_test_stat (run.pipe.kernel, "kernel-swaps"),
      1);
  g_print ("zckernel swap: set before frame %u, new kernel from frame %u\n",
      set_at, swapped_at);

  /* a replacement that does not compile: a WARNING, the running kernel
   * stays */
  g_object_set (run.pipe.kernel, "source",
      read_text (test_kernel ("broken.cu")).c_str (), NULL);
  GstBus *bus = gst_element_get_bus (run.pipe.pipeline);
  GstMessage *warning = NULL;
  deadline = std::chrono::steady_clock::now () + std::chrono::seconds (30);
  while (!warning) {
    fail_unless (std::chrono::steady_clock::now () < deadline,
        "no WARNING 30 s after setting a broken source");
    fail_unless_equals_int (run.next ().tag, 2);
    GstMessage *m = gst_bus_pop_filtered (bus,
        (GstMessageType) (GST_MESSAGE_WARNING | GST_MESSAGE_ERROR));
    fail_if (m && GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR,
        "an ERROR for a broken replacement: %s",
        zc_test_message_text (m).c_str ());
    if (m)
      warning = m;
    else
      g_usleep (10 * 1000);
  }
  std::string text = zc_test_message_text (warning);
  fail_unless (zc_test_contains_nocase (text, "Could not compile"), "%s",
      text.c_str ());
  gst_message_unref (warning);
  for (int i = 0; i < 3; i++)
    fail_unless_equals_int (run.next ().tag, 2);
  fail_unless_equals_uint64 (zc_test_stat (run.pipe.kernel, "kernel-swaps"),
      1);
  GstMessage *error = gst_bus_pop_filtered (bus, GST_MESSAGE_ERROR);
  fail_unless (error == NULL, "%s", error ?
      zc_test_message_text (error).c_str () : "");
  gst_object_unref (bus);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */

static Suite *
zckernel_gpu_suite (void)
{
  Suite *s = suite_create ("zckernel-gpu");
  TCase *tc = zc_test_case ("gpu");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 600);
  tcase_add_loop_test (tc, test_invert_kernel_equals_zcfilter_invert, 0,
      (int) invert_cases ().size ());
  tcase_add_test (tc, test_in_place_uses_the_input_frame);
  tcase_add_test (tc, test_out_of_place_gives_the_same_frames);
  tcase_add_test (tc, test_shared_input_is_left_untouched);
  tcase_add_test (tc, test_params_change_takes_the_next_frame);
  tcase_add_test (tc, test_params_are_packed_in_field_order);
  tcase_add_test (tc, test_compile_error_names_the_line);
  tcase_add_test (tc, test_missing_file_is_an_error);
  tcase_add_test (tc, test_missing_entry_is_an_error);
  tcase_add_test (tc, test_cache_in_memory_and_on_disk);
  tcase_add_test (tc, test_new_source_while_playing_swaps_between_frames);
  return s;
}

static Suite *
zckernel_cache_child_suite (void)
{
  Suite *s = suite_create ("zckernel-gpu-cache-child");
  TCase *tc = zc_test_case ("child");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_cache_child_finds_the_kernel_on_disk);
  return s;
}

int
main (int argc, char **argv)
{
  program_path = argv[0];
  /* GLib reads XDG_CACHE_HOME once: set before anything asks for it. The
   * child of the cache test inherits the parent's. */
  gchar *cache = NULL;
  if (!g_getenv (CACHE_CHILD_ENV)) {
    cache = g_dir_make_tmp ("zckernel-cache-XXXXXX", NULL);
    g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  }
  gst_check_init (&argc, &argv);
  int ret;
  if (!zc_test_have_gpu ()) {
    g_print ("zckernel-gpu: no usable CUDA GPU here; skipped\n");
    ret = 77;
  } else if (!cache) {
    ret = gst_check_run_suite (zckernel_cache_child_suite (),
        "zckernel-gpu-cache-child", __FILE__);
  } else {
    ret = gst_check_run_suite (zckernel_gpu_suite (), "zckernel-gpu",
        __FILE__);
  }
  if (cache) {
    gchar *rm[] = { (gchar *) "rm", (gchar *) "-rf", cache, NULL };
    g_spawn_sync (NULL, rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
        NULL, NULL);
    g_free (cache);
  }
  return ret;
}

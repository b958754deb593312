/* gst-zerocopy: zcfilter against GStreamer's own CPU elements
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The same seeded random frames go through
 *   appsrc ! <GStreamer element> ! appsink
 * and
 *   appsrc ! zcupload ! zcfilter <same setting> !
 *       <the reference's output caps>(memory:CUDAZeroCopy) ! zcdownload !
 *       appsink
 * and the outputs are compared frame by frame, component by component
 * (each frame mapped as a GstVideoFrame, through its own strides), in the
 * output's code values:
 *  - videoconvert dither=none, every pair of the 22 formats, two sizes (one
 *    odd in both directions): within 1 code value at 8 bits (1 << (depth -
 *    8) for deeper outputs, i.e. one 8-bit step);
 *  - videoscale, each method (zcfilter's nearest-neighbour, bilinear and
 *    bicubic against videoscale's nearest-neighbour, bilinear and mitchell),
 *    up, down and mixed ratios: nearest exactly, everywhere; bilinear and
 *    bicubic within kScaleTolerance 8-bit code values, away from the
 *    borders (the filters' reach);
 *  - videoflip, all 8 methods: exactly;
 *  - videobalance (brightness, contrast, saturation, hue) and gamma: within
 *    2 code values, on every format those elements take.
 * And equal caps with no effect: passthrough, no kernel, no copy.
 *
 * Left out, as GStreamer 1.22 bugs rather than references: videobalance's
 * hue on YV12 (it takes plane 1 for U), videoflip's identity on packed
 * 4:2:2 at odd widths (it loses the last V). Before 1.22 (Debian 11 has
 * 1.18), where the elements differ, each test says what it expects there:
 * videoconvert's chroma at odd sizes (old_videoconvert_stretches_chroma),
 * videoflip without 10-bit formats, videoscale's boolean dither.
 *
 * The program runs on the backend this machine has (CPU without a GPU,
 * CUDA with one): the same expectations hold on both. A failing case names
 * the pair or setting, the worst component and position, and every other
 * failing case of the same test with its largest difference.
 */
#include "../zccheck.h"

#include <gst/app/app.h>

#include <algorithm>

/* ---------------------------------------------------------------------- */
/* Frames                                                                 */
/* ---------------------------------------------------------------------- */

static const GstVideoFormat all_formats[] = {
  GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx,
  GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_ARGB, GST_VIDEO_FORMAT_ABGR,
  GST_VIDEO_FORMAT_xRGB, GST_VIDEO_FORMAT_xBGR, GST_VIDEO_FORMAT_RGB,
  GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_GRAY16_LE,
  GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_NV21, GST_VIDEO_FORMAT_I420,
  GST_VIDEO_FORMAT_YV12, GST_VIDEO_FORMAT_Y42B, GST_VIDEO_FORMAT_Y444,
  GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY, GST_VIDEO_FORMAT_P010_10LE,
  GST_VIDEO_FORMAT_I420_10LE,
};

#define N_FORMATS G_N_ELEMENTS (all_formats)

/* Frames per comparison: each one different */
#define N_FRAMES 3

static const gchar *
fmt_name (GstVideoFormat f)
{
  return gst_video_format_to_string (f);
}

/* The samples deeper than 8 bits (GRAY16_LE, P010_10LE, I420_10LE) are
 * little-endian 16-bit words. They are read and written a byte at a time:
 * a guint16 access through a cast pointer (what GST_READ_UINT16_LE does on
 * x86) is undefined behaviour where the address is odd, and UBSan reports
 * it. */
static inline guint
read_le16 (const guint8 * p)
{
  return (guint) p[0] | ((guint) p[1] << 8);
}

static inline void
write_le16 (guint8 * p, guint v)
{
  p[0] = v & 0xff;
  p[1] = (v >> 8) & 0xff;
}

/* The first byte of component @c's sample at (@x, @y), in its own samples.
 * Not GST_VIDEO_FRAME_COMP_DATA: GStreamer's format table (1.22, and main
 * still) gives P010_10LE's V (and P012's, P016's) a pixel offset of 1 byte,
 * NV12's, which is the high byte of U; V's 16-bit sample is at byte 2 of
 * the 4-byte U,V pair. A sample deeper than 8 bits starts on an even byte,
 * so an odd offset there counts in samples. */
static guint8 *
comp_sample (const GstVideoFrame * f, guint c, gint x, gint y)
{
  const GstVideoFormatInfo *finfo = f->info.finfo;
  gsize off = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, c);
  if (GST_VIDEO_FORMAT_INFO_DEPTH (finfo, c) > 8 && (off & 1))
    off *= 2;
  return (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (f,
      GST_VIDEO_FORMAT_INFO_PLANE (finfo, c)) + off +
      (gsize) y * GST_VIDEO_FRAME_COMP_STRIDE (f, c) +
      (gsize) x * GST_VIDEO_FRAME_COMP_PSTRIDE (f, c);
}

/* Random samples in every component of every pixel, each a valid code
 * value of its depth (10-bit formats: the unused bits zero, as a camera
 * writes them); padding bytes random too. */
static void
fill_random_frame (GstBuffer * buffer, const GstVideoInfo * info, guint32 seed)
{
  zc_test_fill_random (buffer, seed);
  const GstVideoFormatInfo *finfo = info->finfo;
  if (GST_VIDEO_FORMAT_INFO_DEPTH (finfo, 0) <= 8 ||
      GST_VIDEO_FORMAT_INFO_DEPTH (finfo, 0) == 16)
    return;
  GstVideoFrame f;
  fail_unless (zc_test_frame_map (&f, info, buffer, GST_MAP_WRITE));
  for (guint c = 0; c < GST_VIDEO_FRAME_N_COMPONENTS (&f); c++) {
    const guint depth = GST_VIDEO_FORMAT_INFO_DEPTH (finfo, c);
    const guint shift = GST_VIDEO_FORMAT_INFO_SHIFT (finfo, c);
    for (gint y = 0; y < GST_VIDEO_FRAME_COMP_HEIGHT (&f, c); y++) {
      for (gint x = 0; x < GST_VIDEO_FRAME_COMP_WIDTH (&f, c); x++) {
        guint8 *p = comp_sample (&f, c, x, y);
        guint v = read_le16 (p) & ((1u << depth) - 1);
        write_le16 (p, v << shift);
      }
    }
  }
  gst_video_frame_unmap (&f);
}

/* ---------------------------------------------------------------------- */
/* Running a pipeline                                                     */
/* ---------------------------------------------------------------------- */

struct RunResult
{
  std::vector < GstBuffer * >buffers;
  GstCaps *caps = nullptr;      /* of the first output sample */
  std::string error;            /* "" when every frame came out */

  RunResult () = default;
  RunResult (const RunResult &) = delete;
  RunResult & operator= (const RunResult &) = delete;
  ~RunResult ()
  {
    for (GstBuffer * b:buffers)
      gst_buffer_unref (b);
    gst_clear_caps (&caps);
  }
};

/* Pushes @frames (not taken) with @caps through
 * "appsrc ! @middle ! appsink" and collects what comes out. @out_caps, when
 * not NULL, goes to the capsfilter named "out" in @middle. */
static void
run_pipeline (const std::string & middle, GstCaps * caps,
    const std::vector < GstBuffer * >&frames, RunResult & r,
    GstCaps * out_caps = NULL)
{
  std::string desc = "appsrc name=src format=time ! " + middle +
      " ! appsink name=sink sync=false wait-on-eos=false";
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc.c_str (), &err);
  if (!p || err) {
    r.error = "cannot build '" + middle + "': " + (err ? err->message : "?");
    g_clear_error (&err);
    if (p)
      gst_object_unref (p);
    return;
  }
  zc_test_track (p);
  GstElement *src = zc_test_get_by_name (p, "src");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  g_object_set (src, "caps", caps, NULL);
  if (out_caps) {
    GstElement *out = zc_test_get_by_name (p, "out");
    g_object_set (out, "caps", out_caps, NULL);
    gst_object_unref (out);
  }

  ZcBusLog log;
  GstStateChangeReturn sr = gst_element_set_state (p, GST_STATE_PLAYING);
  if (sr == GST_STATE_CHANGE_FAILURE) {
    zc_test_collect (p, log, GST_SECOND);
  } else {
    for (gsize i = 0; i < frames.size (); i++) {
      GstBuffer *b = gst_buffer_copy (frames[i]);
      GST_BUFFER_PTS (b) = gst_util_uint64_scale (i, GST_SECOND, 30);
      GST_BUFFER_DURATION (b) = GST_SECOND / 30;
      gst_app_src_push_buffer (GST_APP_SRC (src), b);
    }
    gst_app_src_end_of_stream (GST_APP_SRC (src));
    zc_test_collect (p, log, 60 * GST_SECOND);
  }
  /* Whatever reached the sink, even after an error */
  GstSample *s;
  while ((s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink), 0))) {
    r.buffers.push_back (gst_buffer_ref (gst_sample_get_buffer (s)));
    if (!r.caps)
      r.caps = gst_caps_ref (gst_sample_get_caps (s));
    gst_sample_unref (s);
  }
  if (!log.errors.empty ()) {
    /* "Internal data stream error (... streaming stopped, reason
     * not-negotiated)": the message and the last line of its details */
    GError *e = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error (log.errors[0], &e, &dbg);
    const gchar *last = dbg ? strrchr (dbg, '\n') : NULL;
    r.error = std::string ("ERROR from ") +
        GST_OBJECT_NAME (GST_MESSAGE_SRC (log.errors[0])) + ": " + e->message +
        " (" + (last ? last + 1 : (dbg ? dbg : "")) + ")";
    g_clear_error (&e);
    g_free (dbg);
  } else if (!log.eos)
    r.error = "no EOS: " + log.describe ();
  else if (r.buffers.size () != frames.size ())
    r.error = std::to_string (r.buffers.size ()) +
        " frames out of " + std::to_string (frames.size ());

  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (sink);
  gst_object_unref (p);
}

/* The reference's output caps for zcfilter's src pad: the same caps, with
 * the zero-copy feature. */
static GstCaps *
zc_out_caps (GstCaps * ref_caps)
{
  GstCaps *c = gst_caps_copy (ref_caps);
  gst_caps_set_features (c, 0,
      gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY, NULL));
  return c;
}

/* ---------------------------------------------------------------------- */
/* Comparing                                                              */
/* ---------------------------------------------------------------------- */

struct FrameDiff
{
  guint max = 0;                /* largest |ref - zc| in code values */
  guint over_tolerance = 0;     /* samples beyond the tolerance */
  guint comp = 0;               /* where the largest one is */
  gint x = 0, y = 0;            /* in samples of that component */
  guint ref = 0, got = 0;
  guint frame = 0;
};

static guint
read_comp (const GstVideoFrame * f, guint c, gint x, gint y)
{
  const guint8 *p = comp_sample (f, c, x, y);
  const guint depth = GST_VIDEO_FRAME_COMP_DEPTH (f, c);
  if (depth <= 8)
    return *p;
  return (read_le16 (p) >> GST_VIDEO_FORMAT_INFO_SHIFT (f->info.finfo,
          c)) & ((1u << depth) - 1);
}

/* Every component of @ref and @got (same format and size; with
 * @luma_only, of a YUV format, component 0 alone), leaving out
 * @margin_x / @margin_y pixels along each border (in the component's own
 * samples: a subsampled component leaves out the samples that any of those
 * pixels uses). @tol8 is in 8-bit code values: tol8 << (depth - 8) for
 * deeper components. */
static void
diff_frames (GstVideoFrame * ref, GstVideoFrame * got, gint margin_x,
    gint margin_y, guint tol8, guint frame, FrameDiff & d,
    bool luma_only = false)
{
  const GstVideoFormatInfo *finfo = ref->info.finfo;
  const guint n_comps = luma_only ? 1 : GST_VIDEO_FRAME_N_COMPONENTS (ref);
  for (guint c = 0; c < n_comps; c++) {
    const guint depth = GST_VIDEO_FRAME_COMP_DEPTH (ref, c);
    const guint tol = depth > 8 ? tol8 << (depth - 8) : tol8;
    const gint ws = GST_VIDEO_FORMAT_INFO_W_SUB (finfo, c);
    const gint hs = GST_VIDEO_FORMAT_INFO_H_SUB (finfo, c);
    /* samples any pixel inside the margin touches */
    const gint mx = margin_x ? ((margin_x + (1 << ws) - 1) >> ws) : 0;
    const gint my = margin_y ? ((margin_y + (1 << hs) - 1) >> hs) : 0;
    const gint w = GST_VIDEO_FRAME_COMP_WIDTH (ref, c);
    const gint h = GST_VIDEO_FRAME_COMP_HEIGHT (ref, c);
    for (gint y = my; y < h - my; y++) {
      for (gint x = mx; x < w - mx; x++) {
        const guint a = read_comp (ref, c, x, y), b = read_comp (got, c, x, y);
        const guint diff = a > b ? a - b : b - a;
        if (diff > tol)
          d.over_tolerance++;
        if (diff > d.max) {
          d.max = diff;
          d.comp = c;
          d.x = x;
          d.y = y;
          d.ref = a;
          d.got = b;
          d.frame = frame;
        }
      }
    }
  }
}

/* What one comparison found */
struct CaseResult
{
  std::string name;
  std::string error;            /* a pipeline failed, or caps differ */
  FrameDiff diff;
  guint tol8 = 0;

  bool ok () const
  {
    return error.empty () && diff.over_tolerance == 0;
  }

  std::string describe () const
  {
    if (!error.empty ())
      return name + ": " + (error.size () > 300 ? error.substr (0, 300) +
          "..." : error);
    gchar *s = g_strdup_printf ("%s: max diff %u (tolerance %u at 8 bits), "
        "%u samples over; worst: frame %u, component %u at (%d, %d): "
        "GStreamer %u, zcfilter %u", name.c_str (), diff.max, tol8,
        diff.over_tolerance, diff.frame, diff.comp, diff.x, diff.y, diff.ref,
        diff.got);
    std::string r (s);
    g_free (s);
    return r;
  }
};

/* Runs N_FRAMES random frames of @in_format, @w x @h (seeds @seed,
 * @seed + 1, ...) through "@ref_middle" and through
 * "zcupload ! zcfilter @zc_props ! <ref's caps> ! zcdownload", and compares
 * the outputs. */
static void
compare_with_reference (const std::string & ref_middle,
    const std::string & zc_props, GstVideoFormat in_format, gint w, gint h,
    guint32 seed, gint margin_x, gint margin_y, guint tol8, CaseResult & res,
    bool luma_only = false)
{
  res.tol8 = tol8;
  GstCaps *caps = zc_test_raw_caps (in_format, w, h);
  GstVideoInfo info;
  fail_unless (gst_video_info_from_caps (&info, caps));
  std::vector < GstBuffer * >frames;
  for (guint i = 0; i < N_FRAMES; i++) {
    GstBuffer *b = gst_buffer_new_allocate (NULL, info.size, NULL);
    fill_random_frame (b, &info, seed + i);
    frames.push_back (b);
  }

  RunResult ref, zc;
  run_pipeline (ref_middle, caps, frames, ref);
  if (!ref.error.empty ()) {
    /* the reference itself must work: a broken test, not a zcfilter bug */
    fail ("reference pipeline failed: %s", ref.error.c_str ());
  }
  std::string zc_middle = "zcupload ! zcfilter " + zc_props +
      " ! capsfilter name=out ! zcdownload";
  GstCaps *out_caps = zc_out_caps (ref.caps);
  run_pipeline (zc_middle, caps, frames, zc, out_caps);
  gst_caps_unref (out_caps);

  if (zc.error.empty ()) {
    GstVideoInfo ref_info, zc_info;
    fail_unless (gst_video_info_from_caps (&ref_info, ref.caps));
    if (!gst_video_info_from_caps (&zc_info, zc.caps) ||
        GST_VIDEO_INFO_FORMAT (&zc_info) != GST_VIDEO_INFO_FORMAT (&ref_info)
        || GST_VIDEO_INFO_WIDTH (&zc_info) != GST_VIDEO_INFO_WIDTH (&ref_info)
        || GST_VIDEO_INFO_HEIGHT (&zc_info) !=
        GST_VIDEO_INFO_HEIGHT (&ref_info)) {
      gchar *a = gst_caps_to_string (ref.caps);
      gchar *b = gst_caps_to_string (zc.caps);
      res.error = std::string ("output caps differ: GStreamer ") + a +
          ", zcfilter " + b;
      g_free (a);
      g_free (b);
    }
    for (guint i = 0; i < N_FRAMES && res.error.empty (); i++) {
      GstVideoFrame fr, fz;
      fail_unless (gst_video_frame_map (&fr, &ref_info, ref.buffers[i],
              GST_MAP_READ));
      fail_unless (gst_video_frame_map (&fz, &zc_info, zc.buffers[i],
              GST_MAP_READ));
      diff_frames (&fr, &fz, margin_x, margin_y, tol8, i, res.diff,
          luma_only);
      gst_video_frame_unmap (&fz);
      gst_video_frame_unmap (&fr);
    }
  } else {
    res.error = zc.error;
  }

  for (GstBuffer * b:frames)
    gst_buffer_unref (b);
  gst_caps_unref (caps);
}

/* Fails with every failing case of @results, worst first */
static void
fail_on_any (const gchar * what, std::vector < CaseResult > &results)
{
  std::vector < const CaseResult *>bad;
  for (const CaseResult & r:results)
    if (!r.ok ())
      bad.push_back (&r);
  if (bad.empty ())
    return;
  std::stable_sort (bad.begin (), bad.end (),
      [](const CaseResult * a, const CaseResult * b) {
        return a->error.empty () && b->error.empty () ?
            a->diff.max > b->diff.max : !a->error.empty () < !b->error.empty ();
      });
  std::string msg = std::string (what) + ": " + std::to_string (bad.size ()) +
      " of " + std::to_string (results.size ()) + " cases fail:";
  for (const CaseResult * r:bad)
    msg += "\n  " + r->describe ();
  /* libcheck refuses messages above 4 KiB: the whole list goes to stderr,
   * the failure carries its head */
  g_printerr ("%s\n", msg.c_str ());
  if (msg.size () > 3000)
    msg = msg.substr (0, 3000) + "\n  ... (the whole list is on stderr)";
  fail ("%s", msg.c_str ());
}

/* ---------------------------------------------------------------------- */
/* videoconvert                                                           */
/* ---------------------------------------------------------------------- */

/* Odd in both directions (4:2:0 and 4:2:2 formats with a half chroma
 * sample at the edge), and even */
static const gint convert_sizes[][2] = { {33, 17}, {64, 36} };

/* Before GStreamer 1.22 (seen on 1.18.4; 1.22 agrees with zcfilter),
 * videoconvert takes an 8-bit planar YUV format to one with more chroma
 * subsampling by resizing each chroma plane as a picture of its own: at an
 * odd width, Y444's 33 chroma samples are stretched onto I420's 17, sample
 * i read at (i + 0.5) * 33 / 17 - 0.5 instead of at 2i + 0.5, so the
 * chroma drifts off its luma, by up to half a pixel at the right edge (the
 * bottom for an odd height; random frames make that tens of code values).
 * zcfilter keeps the 4:2:x siting: chroma sample i covers pixels 2i and
 * 2i + 1, the last one alone at an odd size, as videoconvert 1.22 does.
 * Those cases compare the luma there, not the chroma. */
static bool
old_videoconvert_stretches_chroma (GstVideoFormat in, GstVideoFormat out,
    gint w, gint h)
{
  if (zc_test_gst_at_least (1, 22))
    return false;
  const GstVideoFormatInfo *fi = gst_video_format_get_info (in);
  const GstVideoFormatInfo *fo = gst_video_format_get_info (out);
  if (!GST_VIDEO_FORMAT_INFO_IS_YUV (fi) || !GST_VIDEO_FORMAT_INFO_IS_YUV (fo)
      || GST_VIDEO_FORMAT_INFO_N_PLANES (fi) != 3
      || GST_VIDEO_FORMAT_INFO_N_PLANES (fo) != 3
      || GST_VIDEO_FORMAT_INFO_DEPTH (fi, 0) != 8
      || GST_VIDEO_FORMAT_INFO_DEPTH (fo, 0) != 8)
    return false;
  return ((w & 1) && GST_VIDEO_FORMAT_INFO_W_SUB (fo, 1) >
      GST_VIDEO_FORMAT_INFO_W_SUB (fi, 1)) || ((h & 1) &&
      GST_VIDEO_FORMAT_INFO_H_SUB (fo, 1) > GST_VIDEO_FORMAT_INFO_H_SUB (fi,
          1));
}

/* GStreamer 1.22 on aarch64 (ORC 0.4.33, seen under qemu-aarch64): the
 * NEON code ORC generates for videoconvert's I420 -> BGRA and I420 -> ARGB
 * fast paths (YV12, BGRx and xRGB go through the same two) writes other
 * bytes than ORC's own C version of the same functions at odd widths: 281
 * to 938 bytes of 31x17, 33x17 and 95x17 frames, by up to 255, against
 * none at even widths and none for I420 -> RGBA (compared with
 * ORC_CODE=backup). zcfilter writes what the C version writes. For those
 * cases the reference is videoconvert's RGBA, put in the destination's
 * byte order by a second videoconvert (a repack: no arithmetic). */
static bool
neon_odd_width_bgra (GstVideoFormat in, GstVideoFormat out, gint w)
{
#if defined(__aarch64__)
  return (w & 1) && (in == GST_VIDEO_FORMAT_I420 ||
      in == GST_VIDEO_FORMAT_YV12) && (out == GST_VIDEO_FORMAT_BGRA ||
      out == GST_VIDEO_FORMAT_BGRx || out == GST_VIDEO_FORMAT_ARGB ||
      out == GST_VIDEO_FORMAT_xRGB);
#else
  (void) in;
  (void) out;
  (void) w;
  return false;
#endif
}

GST_START_TEST (test_convert_matches_videoconvert)
{
  /* __i__: the source format (loop test); every destination format */
  const GstVideoFormat in = all_formats[__i__];
  std::vector < CaseResult > results;
  for (guint o = 0; o < N_FORMATS; o++) {
    for (guint z = 0; z < G_N_ELEMENTS (convert_sizes); z++) {
      const gint w = convert_sizes[z][0], h = convert_sizes[z][1];
      CaseResult r;
      r.name = std::string (fmt_name (in)) + " -> " + fmt_name (all_formats[o])
          + " " + std::to_string (w) + "x" + std::to_string (h);
      std::string ref = std::string ("videoconvert dither=none ! "
          "video/x-raw,format=") + fmt_name (all_formats[o]);
      if (neon_odd_width_bgra (in, all_formats[o], w)) {
        ref = std::string ("videoconvert dither=none ! "
            "video/x-raw,format=RGBA ! ") + ref;
        g_print ("%s: through videoconvert's RGBA, its NEON I420 -> BGRA "
            "and ARGB code differing from its C code at odd widths\n",
            r.name.c_str ());
      }
      const bool luma_only = old_videoconvert_stretches_chroma (in,
          all_formats[o], w, h);
      if (luma_only) {
        r.name += " (luma only)";
        g_print ("%s: luma only, videoconvert before GStreamer 1.22 "
            "stretches the chroma planes\n", r.name.c_str ());
      }
      compare_with_reference (ref, "", in, w, h, 10000u * __i__ + 100u * o +
          10u * z, 0, 0, 1, r, luma_only);
      results.push_back (std::move (r));
    }
  }
  fail_on_any ("zcfilter vs videoconvert dither=none", results);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* videoscale                                                             */
/* ---------------------------------------------------------------------- */

/* 8-bit code values, away from the borders: the two implementations round
 * differently (GStreamer: integer taps of limited precision, horizontal and
 * vertical passes each rounded; the kernel: one exact sum rounded once). On
 * random frames the same taps land within 3 of each other (measured with
 * zc::convert_cpu's linear filter against videoscale's bilinear2); a filter
 * with other taps or phases lands tens of code values away. */
static const guint kScaleTolerance = 3;

/* GStreamer 1.22's cubic resampler gives other values on aarch64 than on
 * x86-64 for the same frame (99x51 to 33x17: 50 of 1683 bytes of RGB by
 * up to 4, 68 of 2244 of RGBA by up to 3, seen under qemu-aarch64; the
 * same with ORC_CODE=backup, so not ORC's code), while
 * zcfilter's are the same bytes on both (compared with a hash of its
 * output under qemu-aarch64). On aarch64 mitchell is compared with one
 * more code value of tolerance, the spread GStreamer adds there. */
static guint
scale_tolerance (const gchar * gst_method)
{
#if defined(__aarch64__)
  if (g_str_equal (gst_method, "mitchell"))
    return kScaleTolerance + 1;
#else
  (void) gst_method;
#endif
  return kScaleTolerance;
}

struct ScaleMethod
{
  const gchar *zc;              /* zcfilter's method */
  const gchar *gst;             /* videoscale's method of the same filter */
  gint taps;                    /* source pixels the filter spans, enlarging */
};

/* videoscale's "bilinear" is GStreamer's linear resampler limited to 2
 * taps at every ratio (no averaging when shrinking); its "bilinear2" is the
 * unlimited one. zcfilter's bilinear is compared with the element of the
 * same name. */
static const ScaleMethod scale_methods[] = {
  {"nearest-neighbour", "nearest-neighbour", 0},
  {"bilinear", "bilinear", 2},
  {"bicubic", "mitchell", 4},
};

static const GstVideoFormat scale_formats[] = {
  GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_RGB, GST_VIDEO_FORMAT_GRAY8,
  GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_YUY2,
  GST_VIDEO_FORMAT_Y444, GST_VIDEO_FORMAT_GRAY16_LE,
};

/* in w, h -> out w, h: up, down, one axis each way, 3x up, 3x down */
static const gint scale_cases[][4] = {
  {33, 17, 64, 40}, {64, 48, 33, 17}, {33, 17, 20, 31}, {40, 30, 120, 90},
  {99, 51, 33, 17},
};

/* Output pixels along one axis that a filter reaching @taps / 2 source
 * pixels either side of the centre can see past the border, plus one; even
 * so that 4:2:x chroma is left out whole. */
static gint
scale_margin (gint taps, gint in, gint out)
{
  if (taps == 0)
    return 0;
  const gint per_src = (out + in - 1) / in;
  const gint m = (taps / 2 + 1) * std::max (1, per_src);
  return (m + 1) & ~1;
}

GST_START_TEST (test_scale_matches_videoscale)
{
  /* __i__: the method (loop test) */
  const ScaleMethod & m = scale_methods[__i__];
  std::vector < CaseResult > results;
  for (guint f = 0; f < G_N_ELEMENTS (scale_formats); f++) {
    for (guint c = 0; c < G_N_ELEMENTS (scale_cases); c++) {
      const gint *sc = scale_cases[c];
      CaseResult r;
      gchar *name = g_strdup_printf ("%s %s %dx%d -> %dx%d", m.zc,
          fmt_name (scale_formats[f]), sc[0], sc[1], sc[2], sc[3]);
      r.name = name;
      g_free (name);
      /* No dithering. videoscale's dither is a GstVideoDitherMethod from
       * GStreamer 1.22 on; before, a boolean used by the Lanczos method
       * only (none of these), false by default */
      gchar *ref = g_strdup_printf ("videoscale method=%s dither=%s ! "
          "video/x-raw,width=%d,height=%d", m.gst,
          zc_test_gst_at_least (1, 22) ? "none" : "false", sc[2], sc[3]);
      std::string props = std::string ("method=") + m.zc;
      /* Nearest picks source pixels: exact, borders included */
      const gboolean nearest = m.taps == 0;
      compare_with_reference (ref, props, scale_formats[f], sc[0], sc[1],
          20000u + 1000u * __i__ + 10u * f + 100u * c,
          scale_margin (m.taps, sc[0], sc[2]),
          scale_margin (m.taps, sc[1], sc[3]),
          nearest ? 0 : scale_tolerance (m.gst), r);
      g_free (ref);
      results.push_back (std::move (r));
    }
  }
  fail_on_any ("zcfilter vs videoscale", results);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* videoflip                                                              */
/* ---------------------------------------------------------------------- */

/* The formats both elements take, 4:2:0 (planar, semi-planar, 10-bit) and
 * packed 4:2:2 among them */
static const GstVideoFormat flip_formats[] = {
  GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_xRGB,
  GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_GRAY16_LE, GST_VIDEO_FORMAT_Y444,
  GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YV12, GST_VIDEO_FORMAT_NV12,
  GST_VIDEO_FORMAT_NV21, GST_VIDEO_FORMAT_I420_10LE, GST_VIDEO_FORMAT_YUY2,
  GST_VIDEO_FORMAT_UYVY,
};

static const gint flip_sizes[][2] = { {33, 17}, {64, 36} };

GST_START_TEST (test_flip_matches_videoflip)
{
  /* __i__: the method, GstVideoOrientationMethod 0..7 (loop test) */
  std::vector < CaseResult > results;
  GEnumClass *k = (GEnumClass *)
      g_type_class_ref (GST_TYPE_VIDEO_ORIENTATION_METHOD);
  const gchar *method = g_enum_get_value (k, __i__)->value_nick;
  for (guint f = 0; f < G_N_ELEMENTS (flip_formats); f++) {
    /* videoflip takes 10-bit formats from GStreamer 1.22 on: before, there
     * is no reference for I420_10LE (the other twelve formats are
     * compared) */
    if (flip_formats[f] == GST_VIDEO_FORMAT_I420_10LE &&
        !zc_test_gst_at_least (1, 22)) {
      if (__i__ == 0)
        g_print ("videoflip: no I420_10LE before GStreamer 1.22, not "
            "compared\n");
      continue;
    }
    for (guint z = 0; z < G_N_ELEMENTS (flip_sizes); z++) {
      gint w = flip_sizes[z][0];
      const gint h = flip_sizes[z][1];
      /* videoflip's identity copies packed 4:2:2 rows as width * 2 bytes
       * (gst_video_frame_copy): at an odd width the last macropixel's V is
       * lost (left 0). A GStreamer bug, not a reference: an even width
       * there (its other methods write that V) */
      const GstVideoFormatInfo *fi =
          gst_video_format_get_info (flip_formats[f]);
      if (__i__ == GST_VIDEO_ORIENTATION_IDENTITY &&
          GST_VIDEO_FORMAT_INFO_N_PLANES (fi) == 1 &&
          GST_VIDEO_FORMAT_INFO_W_SUB (fi, 1))
        w += w & 1;
      CaseResult r;
      gchar *name = g_strdup_printf ("%s %s %dx%d", method,
          fmt_name (flip_formats[f]), w, h);
      r.name = name;
      g_free (name);
      std::string ref = std::string ("videoflip video-direction=") + method;
      std::string props = std::string ("video-direction=") + method;
      compare_with_reference (ref, props, flip_formats[f], w, h,
          30000u + 1000u * __i__ + 10u * f + z, 0, 0, 0, r);
      results.push_back (std::move (r));
    }
  }
  g_type_class_unref (k);
  fail_on_any ("zcfilter vs videoflip", results);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* videobalance and gamma                                                 */
/* ---------------------------------------------------------------------- */

/* The formats videobalance and gamma take, of the 22 */
static const GstVideoFormat balance_formats[] = {
  GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx,
  GST_VIDEO_FORMAT_BGRx, GST_VIDEO_FORMAT_ARGB, GST_VIDEO_FORMAT_ABGR,
  GST_VIDEO_FORMAT_xRGB, GST_VIDEO_FORMAT_xBGR, GST_VIDEO_FORMAT_RGB,
  GST_VIDEO_FORMAT_BGR, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_NV21,
  GST_VIDEO_FORMAT_I420, GST_VIDEO_FORMAT_YV12, GST_VIDEO_FORMAT_Y42B,
  GST_VIDEO_FORMAT_Y444, GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_UYVY,
};

struct BalanceSetting
{
  const gchar *name;
  gdouble brightness, contrast, saturation, hue;
};

static const BalanceSetting balance_settings[] = {
  {"brightness+0.3", 0.3, 1.0, 1.0, 0.0},
  {"brightness-0.25", -0.25, 1.0, 1.0, 0.0},
  {"contrast1.5", 0.0, 1.5, 1.0, 0.0},
  {"contrast0.6", 0.0, 0.6, 1.0, 0.0},
  {"saturation1.7", 0.0, 1.0, 1.7, 0.0},
  {"saturation0", 0.0, 1.0, 0.0, 0.0},
  {"hue+0.25", 0.0, 1.0, 1.0, 0.25},
  {"hue-0.6", 0.0, 1.0, 1.0, -0.6},
  {"brightness0.1+contrast1.2+saturation0.8+hue0.1", 0.1, 1.2, 0.8, 0.1},
};

GST_START_TEST (test_balance_matches_videobalance)
{
  /* __i__: the setting (loop test) */
  const BalanceSetting & s = balance_settings[__i__];
  std::vector < CaseResult > results;
  for (guint f = 0; f < G_N_ELEMENTS (balance_formats); f++) {
    /* videobalance's planar path takes plane 1 for U and plane 2 for V,
     * which YV12 has the other way round: its hue turns the wrong way (a
     * GStreamer bug, not a reference) */
    if (balance_formats[f] == GST_VIDEO_FORMAT_YV12 && s.hue != 0.0)
      continue;
    CaseResult r;
    r.name = std::string (s.name) + " " + fmt_name (balance_formats[f]) +
        " 33x17";
    gchar *props = g_strdup_printf ("brightness=%.17g contrast=%.17g "
        "saturation=%.17g hue=%.17g", s.brightness, s.contrast, s.saturation,
        s.hue);
    std::string ref = std::string ("videobalance ") + props;
    compare_with_reference (ref, props, balance_formats[f], 33, 17,
        40000u + 1000u * __i__ + 10u * f, 0, 0, 2, r);
    g_free (props);
    results.push_back (std::move (r));
  }
  fail_on_any ("zcfilter vs videobalance", results);
}

GST_END_TEST;

static const gdouble gamma_values[] = { 0.5, 1.3, 2.2 };

GST_START_TEST (test_gamma_matches_gamma_element)
{
  /* __i__: the gamma value (loop test) */
  const gdouble g = gamma_values[__i__];
  std::vector < CaseResult > results;
  for (guint f = 0; f < G_N_ELEMENTS (balance_formats); f++) {
    CaseResult r;
    gchar *props = g_strdup_printf ("gamma=%g", g);
    r.name = std::string (props) + " " + fmt_name (balance_formats[f]) +
        " 33x17";
    compare_with_reference (std::string ("gamma ") + props, props,
        balance_formats[f], 33, 17, 50000u + 1000u * __i__ + 10u * f, 0, 0, 2,
        r);
    g_free (props);
    results.push_back (std::move (r));
  }
  fail_on_any ("zcfilter vs gamma", results);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* Passthrough                                                            */
/* ---------------------------------------------------------------------- */

/* One format through "zcupload ! zcfilter <defaults> ! <same caps> !
 * zcdownload": "" or what went wrong. */
static std::string
check_passthrough (GstVideoFormat fmt)
{
  GstCaps *caps = zc_test_raw_caps (fmt, 33, 17);
  GstCaps *zc_caps = zc_test_raw_caps (fmt, 33, 17,
      GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY);
  /* Every property at its default, some of them set explicitly */
  GstElement *p = zc_test_parse ("appsrc name=src format=time ! zcupload ! "
      "zcfilter name=f brightness=0 contrast=1 saturation=1 hue=0 gamma=1 "
      "method=bilinear ! capsfilter name=out ! zcdownload ! "
      "appsink name=sink sync=false wait-on-eos=false");
  GstElement *src = zc_test_get_by_name (p, "src");
  GstElement *sink = zc_test_get_by_name (p, "sink");
  GstElement *f = zc_test_get_by_name (p, "f");
  GstElement *out_filter = zc_test_get_by_name (p, "out");
  g_object_set (out_filter, "caps", zc_caps, NULL);
  g_object_set (src, "caps", caps, NULL);
  /* What zcfilter gets and what it hands on (zcdownload may repack for an
   * appsink that takes no GstVideoMeta: not zcfilter's business) */
  GstPad *fsink = gst_element_get_static_pad (f, "sink");
  GstPad *fsrc = gst_element_get_static_pad (f, "src");
  std::vector < GstMemory * >in_mems, out_mems;
  gst_pad_add_probe (fsink, GST_PAD_PROBE_TYPE_BUFFER,
      zc_test_probe_record_memory, &in_mems, NULL);
  gst_pad_add_probe (fsrc, GST_PAD_PROBE_TYPE_BUFFER,
      zc_test_probe_record_memory, &out_mems, NULL);

  std::string err;
  const gchar *name = fmt_name (fmt);
  if (gst_element_set_state (p, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE)
    err = std::string (name) + ": cannot play";
  GstVideoInfo info;
  gst_video_info_from_caps (&info, caps);
  for (guint i = 0; i < N_FRAMES && err.empty (); i++) {
    GstBuffer *in = gst_buffer_new_allocate (NULL, info.size, NULL);
    fill_random_frame (in, &info, 60000u + 10u * fmt + i);
    GST_BUFFER_PTS (in) = gst_util_uint64_scale (i, GST_SECOND, 30);
    gst_app_src_push_buffer (GST_APP_SRC (src), gst_buffer_ref (in));
    GstSample *s = gst_app_sink_try_pull_sample (GST_APP_SINK (sink),
        30 * GST_SECOND);
    if (!s) {
      err = std::string (name) + ": frame " + std::to_string (i) + " missing";
    } else if (in_mems.size () != i + 1 || out_mems.size () != i + 1) {
      err = std::string (name) + ": " + std::to_string (in_mems.size ()) +
          " buffers into zcfilter, " + std::to_string (out_mems.size ()) +
          " out, after " + std::to_string (i + 1) + " frames";
    } else if (in_mems.back () != out_mems.back ()) {
      err = std::string (name) + ": zcfilter did not pass frame " +
          std::to_string (i) + " through (other memory out than in)";
    } else {
      GstVideoInfo oinfo;
      GstVideoFrame fin, fout;
      gst_video_info_from_caps (&oinfo, gst_sample_get_caps (s));
      FrameDiff d;
      if (gst_video_frame_map (&fin, &info, in, GST_MAP_READ)) {
        if (gst_video_frame_map (&fout, &oinfo, gst_sample_get_buffer (s),
                GST_MAP_READ)) {
          diff_frames (&fin, &fout, 0, 0, 0, i, d);
          gst_video_frame_unmap (&fout);
        }
        gst_video_frame_unmap (&fin);
      }
      if (d.max != 0) {
        gchar *m = g_strdup_printf ("%s: passthrough changed component %u at "
            "(%d, %d): %u -> %u", name, d.comp, d.x, d.y, d.ref, d.got);
        err = m;
        g_free (m);
      }
    }
    if (s)
      gst_sample_unref (s);
    gst_buffer_unref (in);
  }
  if (err.empty ()) {
    gst_app_src_end_of_stream (GST_APP_SRC (src));
    ZcBusLog log;
    zc_test_collect (p, log, 30 * GST_SECOND);
    if (!log.eos || !log.errors.empty ())
      err = std::string (name) + ": " + log.describe ();
  }
  if (err.empty () &&
      !gst_base_transform_is_passthrough (GST_BASE_TRANSFORM (f)))
    err = std::string (name) + ": zcfilter is not in passthrough";
  if (err.empty ()) {
    /* No copy, and no kernel: any kernel counter the stats have is 0 */
    GstStructure *st = zc_test_get_stats (f);
    for (gint n = 0; n < gst_structure_n_fields (st) && err.empty (); n++) {
      const gchar *field = gst_structure_nth_field_name (st, n);
      guint64 v = 0;
      if ((g_str_equal (field, "copied-buffers") ||
              g_str_equal (field, "bytes-copied") || strstr (field, "kernel"))
          && gst_structure_get_uint64 (st, field, &v) && v != 0)
        err = std::string (name) + ": stats " + field + " = " +
            std::to_string (v) + " in passthrough";
    }
    if (!gst_structure_has_field (st, "copied-buffers") ||
        !gst_structure_has_field (st, "bytes-copied"))
      err = std::string (name) + ": stats without copy counters";
    gst_structure_free (st);
  }

  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (fsrc);
  gst_object_unref (fsink);
  gst_object_unref (out_filter);
  gst_object_unref (f);
  gst_object_unref (sink);
  gst_object_unref (src);
  gst_object_unref (p);
  gst_caps_unref (zc_caps);
  gst_caps_unref (caps);
  return err;
}

GST_START_TEST (test_equal_caps_without_effects_pass_through)
{
  const GstVideoFormat fmts[] = { GST_VIDEO_FORMAT_RGBA, GST_VIDEO_FORMAT_NV12,
    GST_VIDEO_FORMAT_YUY2, GST_VIDEO_FORMAT_I420_10LE, GST_VIDEO_FORMAT_RGB
  };
  for (GstVideoFormat fmt:fmts) {
    std::string err = check_passthrough (fmt);
    fail_unless (err.empty (), "%s", err.c_str ());
  }
}

GST_END_TEST;

static Suite *
zcfilter_compare_suite (void)
{
  Suite *s = suite_create ("zcfilter-compare");
  TCase *tc = zc_test_case ("general");

  suite_add_tcase (s, tc);
  /* 22 x 22 x 2 pipeline pairs on 2 cores: about a minute */
  tcase_set_timeout (tc, 300);
  tcase_add_loop_test (tc, test_convert_matches_videoconvert, 0, N_FORMATS);
  tcase_add_loop_test (tc, test_scale_matches_videoscale, 0,
      G_N_ELEMENTS (scale_methods));
  tcase_add_loop_test (tc, test_flip_matches_videoflip, 0, 8);
  tcase_add_loop_test (tc, test_balance_matches_videobalance, 0,
      G_N_ELEMENTS (balance_settings));
  tcase_add_loop_test (tc, test_gamma_matches_gamma_element, 0,
      G_N_ELEMENTS (gamma_values));
  tcase_add_test (tc, test_equal_caps_without_effects_pass_through);
  return s;
}

GST_CHECK_MAIN (zcfilter_compare);

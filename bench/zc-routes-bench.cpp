/* gst-zerocopy: the CPU backend's routes against GStreamer's converter
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   zc-routes-bench [--threads N] [--runs N] [--only TEXT]
 *
 * For each everyday request the CPU backend has a route for, times
 * zc::convert_cpu() (the route, on the frame in memory, no elements) and
 * GstVideoConverter configured as videoconvert dither=none and videoscale
 * configure it (same thread count, same frames, same strides), and compares
 * their bytes. A route earns its lines where it is faster than the
 * converter by more than 1.1x, or where the converter writes other bytes:
 * the CPU backend must write the bytes the CUDA kernels write (the
 * per-block code). Where the converter writes the same bytes on this
 * machine and is not 1.1x slower, the request is a candidate for the
 * converter; "same bytes here" holds for this GStreamer on this
 * architecture only (the suites found the converter's bytes changing with
 * both). The verdict column says which.
 *
 * ms: median over --runs frames, the two alternating frame by frame.
 */
#include <gst/video/video.h>

#include "zcconvert.h"
#include "../gst/zcframedesc.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Request
{
  const char *name;
  GstVideoFormat in_fmt;
  int in_w, in_h;
  GstVideoFormat out_fmt;
  int out_w, out_h;
  zc::Sampling sampling;
};

const Request requests[] = {
  {"NV12 4K to RGBA 1080p, bilinear", GST_VIDEO_FORMAT_NV12,
   3840, 2160, GST_VIDEO_FORMAT_RGBA, 1920, 1080,
   zc::Sampling::Bilinear},
  {"RGBA 4K to BGRA", GST_VIDEO_FORMAT_RGBA, 3840, 2160,
   GST_VIDEO_FORMAT_BGRA, 3840, 2160,
   zc::Sampling::Nearest},
  {"I420 to RGBA", GST_VIDEO_FORMAT_I420, 1920, 1080,
   GST_VIDEO_FORMAT_RGBA, 1920, 1080,
   zc::Sampling::Nearest},
  {"RGBA to NV12", GST_VIDEO_FORMAT_RGBA, 1920, 1080,
   GST_VIDEO_FORMAT_NV12, 1920, 1080,
   zc::Sampling::Nearest},
  {"YUY2 to NV12", GST_VIDEO_FORMAT_YUY2, 1920, 1080,
   GST_VIDEO_FORMAT_NV12, 1920, 1080,
   zc::Sampling::Nearest},
  {"NV12 to I420", GST_VIDEO_FORMAT_NV12, 1920, 1080,
   GST_VIDEO_FORMAT_I420, 1920, 1080,
   zc::Sampling::Nearest},
  {"RGBA to 720p, bilinear", GST_VIDEO_FORMAT_RGBA, 1920,
   1080, GST_VIDEO_FORMAT_RGBA, 1280, 720,
   zc::Sampling::Bilinear},
  {"I420 to 720p, bilinear", GST_VIDEO_FORMAT_I420, 1920,
   1080, GST_VIDEO_FORMAT_I420, 1280, 720,
   zc::Sampling::Bilinear},
  {"NV12 720p to 1080p, bilinear", GST_VIDEO_FORMAT_NV12,
   1280, 720, GST_VIDEO_FORMAT_NV12, 1920, 1080,
   zc::Sampling::Bilinear},
  {"RGBA to 720p, bicubic", GST_VIDEO_FORMAT_RGBA, 1920,
   1080, GST_VIDEO_FORMAT_RGBA, 1280, 720,
   zc::Sampling::Bicubic},
  {"RGBA to 1366x768, bilinear", GST_VIDEO_FORMAT_RGBA,
   1920, 1080, GST_VIDEO_FORMAT_RGBA, 1366, 768,
   zc::Sampling::Bilinear},
  {"I420 to 1366x768, bilinear", GST_VIDEO_FORMAT_I420,
   1920, 1080, GST_VIDEO_FORMAT_I420, 1366, 768,
   zc::Sampling::Bilinear},
  {"RGBA to 1366x768, bicubic", GST_VIDEO_FORMAT_RGBA,
   1920, 1080, GST_VIDEO_FORMAT_RGBA, 1366, 768,
   zc::Sampling::Bicubic},
  {"RGBA 640x360 to 1080p, bilinear", GST_VIDEO_FORMAT_RGBA,
   640, 360, GST_VIDEO_FORMAT_RGBA, 1920, 1080,
   zc::Sampling::Bilinear},
  {"I420 1917x1079 to RGBA", GST_VIDEO_FORMAT_I420, 1917, 1079,
   GST_VIDEO_FORMAT_RGBA, 1917, 1079,
   zc::Sampling::Nearest},
  {"RGBA 1917x1079 to 1279x719, bilinear", GST_VIDEO_FORMAT_RGBA,
   1917, 1079, GST_VIDEO_FORMAT_RGBA, 1279, 719,
   zc::Sampling::Bilinear},
  {"I420 1917x1079 to 1279x719, bilinear", GST_VIDEO_FORMAT_I420,
   1917, 1079, GST_VIDEO_FORMAT_I420, 1279, 719,
   zc::Sampling::Bilinear},
  {"RGBA 1917x1079 to 1279x719, bicubic", GST_VIDEO_FORMAT_RGBA,
   1917, 1079, GST_VIDEO_FORMAT_RGBA, 1279, 719,
   zc::Sampling::Bicubic},
  {"I420 4K to RGBA", GST_VIDEO_FORMAT_I420, 3840, 2160,
   GST_VIDEO_FORMAT_RGBA, 3840, 2160,
   zc::Sampling::Nearest},
  {"RGBA to 720p, nearest", GST_VIDEO_FORMAT_RGBA, 1920,
   1080, GST_VIDEO_FORMAT_RGBA, 1280, 720,
   zc::Sampling::Nearest},
};

/* The converter's options as videoconvertscale sets them for
 * videoconvert dither=none and videoscale method=bilinear (linear, at most
 * 2 taps), mitchell (cubic, B = C = 1/3) and nearest-neighbour. */
GstStructure *
converter_config (zc::Sampling s, guint threads)
{
  GstVideoResamplerMethod method = GST_VIDEO_RESAMPLER_METHOD_NEAREST;
  if (s == zc::Sampling::Bilinear)
    method = GST_VIDEO_RESAMPLER_METHOD_LINEAR;
  else if (s == zc::Sampling::Bicubic)
    method = GST_VIDEO_RESAMPLER_METHOD_CUBIC;
  GstStructure *c = gst_structure_new ("GstVideoConvertConfig",
      GST_VIDEO_CONVERTER_OPT_RESAMPLER_METHOD,
      GST_TYPE_VIDEO_RESAMPLER_METHOD, method,
      GST_VIDEO_CONVERTER_OPT_DITHER_METHOD, GST_TYPE_VIDEO_DITHER_METHOD,
      GST_VIDEO_DITHER_NONE, GST_VIDEO_CONVERTER_OPT_THREADS, G_TYPE_UINT,
      threads, NULL);
  if (s == zc::Sampling::Bilinear)
    gst_structure_set (c, GST_VIDEO_RESAMPLER_OPT_MAX_TAPS, G_TYPE_INT, 2,
        NULL);
  if (s == zc::Sampling::Bicubic)
    gst_structure_set (c, GST_VIDEO_RESAMPLER_OPT_CUBIC_B, G_TYPE_DOUBLE,
        1.0 / 3.0, GST_VIDEO_RESAMPLER_OPT_CUBIC_C, G_TYPE_DOUBLE, 1.0 / 3.0,
        NULL);
  return c;
}

/* A mapped frame of @info and the zc view of it. */
struct Frame
{
  GstBuffer *buf = nullptr;
  GstVideoFrame frame;
  zc::FrameDesc desc;

  explicit Frame (GstVideoInfo * info)
  {
    buf = gst_buffer_new_allocate (nullptr, GST_VIDEO_INFO_SIZE (info),
        nullptr);
    gst_video_frame_map (&frame, info, buf, GST_MAP_READWRITE);
    zc_gst::frame_desc_of_frame (&frame, &desc);
  }
  Frame (const Frame &) = delete;
  Frame & operator= (const Frame &) = delete;
  ~Frame ()
  {
    gst_video_frame_unmap (&frame);
    gst_buffer_unref (buf);
  }
};

double
median (std::vector < double >v)
{
  std::sort (v.begin (), v.end ());
  return v.empty ()? 0.0 : v[v.size () / 2];
}

double
now_ms ()
{
  return std::chrono::duration < double, std::milli >
      (std::chrono::steady_clock::now ().time_since_epoch ()).count ();
}

}                               // namespace

int
main (int argc, char **argv)
{
  gst_init (&argc, &argv);
  guint threads = std::max (1u, std::thread::hardware_concurrency ());
  int runs = 30;
  std::string only;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--threads" && v) {
      threads = (guint) std::max (1, atoi (v));
      i++;
    } else if (a == "--runs" && v) {
      runs = std::max (1, atoi (v));
      i++;
    } else if (a == "--only" && v) {
      only = v;
      i++;
    } else {
      fprintf (stderr, "usage: zc-routes-bench [--threads N] [--runs N] "
          "[--only TEXT]\n");
      return 2;
    }
  }

  printf ("zc-routes-bench: %u threads, GStreamer %s; median of %d frames "
      "each, alternating\n\n", threads, gst_version_string (), runs);
  printf ("%-32s %-8s %9s %9s %6s  %-28s %s\n", "request", "route", "zc ms",
      "gst ms", "gst/zc", "bytes", "verdict");
  std::mt19937 rng (1);
  for (const Request & r:requests) {
    if (!only.empty () && std::string (r.name).find (only) == std::string::npos)
      continue;
    GstVideoInfo in_info, out_info;
    gst_video_info_set_format (&in_info, r.in_fmt, r.in_w, r.in_h);
    gst_video_info_set_format (&out_info, r.out_fmt, r.out_w, r.out_h);
    Frame src (&in_info);
    Frame ours (&out_info);
    Frame theirs (&out_info);
    guint8 *bytes = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&src.frame, 0);
    for (gsize i = 0; i < GST_VIDEO_INFO_SIZE (&in_info); i++)
      bytes[i] = (guint8) rng ();

    zc::ConvertParams p;
    p.sampling = r.sampling;
    const char *route = zc::convert_cpu_route (src.desc, ours.desc, p);
    GstVideoConverter *conv = gst_video_converter_new (&in_info, &out_info,
        converter_config (r.sampling, threads));
    if (!conv) {
      printf ("%-32s the converter refused the request\n", r.name);
      continue;
    }
    std::vector < double >t_zc, t_gst;
    bool ok = true;
    for (int i = 0; i < runs + 2 && ok; i++) {
      double t0 = now_ms ();
      ok = zc::convert_cpu (src.desc, ours.desc, p, threads);
      double t1 = now_ms ();
      gst_video_converter_frame (conv, &src.frame, &theirs.frame);
      double t2 = now_ms ();
      if (i >= 2) {             /* two frames to warm up */
        t_zc.push_back (t1 - t0);
        t_gst.push_back (t2 - t1);
      }
    }
    gst_video_converter_free (conv);
    if (!ok) {
      printf ("%-32s convert_cpu() refused the request\n", r.name);
      continue;
    }

    /* every plane's visible bytes */
    guint64 differ = 0, total = 0;
    int max_diff = 0;
    for (guint pl = 0; pl < GST_VIDEO_INFO_N_PLANES (&out_info); pl++) {
      gint rows = GST_VIDEO_INFO_COMP_HEIGHT (&out_info, pl);
      /* (plane p holds component p first in every format measured) */
      gint row_bytes = GST_VIDEO_INFO_COMP_WIDTH (&out_info, pl) *
          GST_VIDEO_INFO_COMP_PSTRIDE (&out_info, pl);
      for (gint y = 0; y < rows; y++) {
        const guint8 *a = (const guint8 *)
            GST_VIDEO_FRAME_PLANE_DATA (&ours.frame, pl) +
            (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&ours.frame, pl);
        const guint8 *b = (const guint8 *)
            GST_VIDEO_FRAME_PLANE_DATA (&theirs.frame, pl) +
            (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&theirs.frame, pl);
        for (gint x = 0; x < row_bytes; x++) {
          int d = std::abs ((int) a[x] - (int) b[x]);
          differ += d != 0;
          max_diff = std::max (max_diff, d);
        }
        total += (guint64) row_bytes;
      }
    }
    const double zc_ms = median (t_zc), gst_ms = median (t_gst);
    char same[64];
    if (differ == 0)
      snprintf (same, sizeof same, "same");
    else
      snprintf (same, sizeof same, "%.2f%% differ, by <= %d",
          100.0 * (double) differ / (double) total, max_diff);
    const char *verdict = differ != 0 ? "stays: other bytes" :
        zc_ms * 1.1 < gst_ms ? "stays: faster" :
        "candidate: same bytes here, not faster";
    printf ("%-32s %-8s %9.3f %9.3f %6.2f  %-28s %s\n", r.name, route, zc_ms,
        gst_ms, gst_ms / zc_ms, same, verdict);
    fflush (stdout);
  }
  return 0;
}

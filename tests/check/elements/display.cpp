/* gst-zerocopy: frames that end on a real display
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   videotestsrc ! zcupload ! zcfilter invert=true ! zcdownload !
 *       videoconvert ! ximagesink
 * draws into an X window of the test's (GstVideoOverlay); once the last
 * frame is shown the window's pixels are read back from the X server
 * (XGetImage) and compared, every pixel, with the same frame taken at an
 * appsink in the display's pixel format. The screenshot is also saved as
 * PNG (ZC_TEST_SCREENSHOT, default display-screenshot.png in the working
 * directory) to be looked at.
 *
 * Needs an X server: meson runs it under xvfb-run where that exists; without
 * DISPLAY it exits 77 (skipped). Runs on the backend this machine has.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "../zccheck.h"

#include <gst/app/app.h>
#include <gst/video/videooverlay.h>

#include <X11/Xlib.h>
#include <X11/Xutil.h>

#include <string>
#include <vector>

static const gint kWidth = 320;
static const gint kHeight = 240;
static const gint kFrames = 5;

/* The source and the GPU step both pipelines share */
static std::string
chain (void)
{
  return "videotestsrc num-buffers=" + std::to_string (kFrames) +
      " pattern=smpte ! video/x-raw,format=NV12,width=" +
      std::to_string (kWidth) + ",height=" + std::to_string (kHeight) +
      ",framerate=30/1 ! zcupload ! zcfilter invert=true ! zcdownload ! "
      "videoconvert ! ";
}

struct XWindowTarget
{
  Display *dpy = NULL;
  Window win = 0;
};

static void
open_window (XWindowTarget * s)
{
  s->dpy = XOpenDisplay (NULL);
  fail_unless (s->dpy != NULL, "cannot open display %s", g_getenv ("DISPLAY"));
  int scr = DefaultScreen (s->dpy);
  s->win = XCreateSimpleWindow (s->dpy, RootWindow (s->dpy, scr), 0, 0,
      kWidth, kHeight, 0, BlackPixel (s->dpy, scr), BlackPixel (s->dpy, scr));
  XMapRaised (s->dpy, s->win);
  XSync (s->dpy, False);
}

static void
close_window (XWindowTarget * s)
{
  XDestroyWindow (s->dpy, s->win);
  XCloseDisplay (s->dpy);
}

/* The window's pixels as 0xRRGGBB, row by row */
static std::vector < guint32 >
grab (XWindowTarget * s)
{
  XSync (s->dpy, False);
  XImage *img = XGetImage (s->dpy, s->win, 0, 0, kWidth, kHeight, AllPlanes,
      ZPixmap);
  fail_unless (img != NULL, "XGetImage failed");
  std::vector < guint32 > px ((gsize) kWidth * kHeight);
  for (gint y = 0; y < kHeight; y++) {
    for (gint x = 0; x < kWidth; x++) {
      unsigned long p = XGetPixel (img, x, y);
      auto channel =[&](unsigned long mask) -> guint32 {
        unsigned long v = p & mask;
        while (mask && !(mask & 1)) {
          mask >>= 1;
          v >>= 1;
        }
        return (guint32) (v * 255 / (mask ? mask : 1));
      };
      px[(gsize) y * kWidth + x] = (channel (img->red_mask) << 16) |
          (channel (img->green_mask) << 8) | channel (img->blue_mask);
    }
  }
  XDestroyImage (img);
  return px;
}

/* Saves 0xRRGGBB pixels as PNG with GStreamer's own encoder */
static void
save_png (const std::vector < guint32 > &px, const gchar * path)
{
  GstElement *p = zc_test_parse ((std::string ("appsrc name=src ! "
              "video/x-raw,format=xRGB,width=") + std::to_string (kWidth) +
          ",height=" + std::to_string (kHeight) + ",framerate=0/1 ! "
          "videoconvert ! pngenc ! filesink location=" + path).c_str ());
  GstElement *src = zc_test_get_by_name (p, "src");
  GstBuffer *b = gst_buffer_new_allocate (NULL, px.size () * 4, NULL);
  GstMapInfo m;
  gst_buffer_map (b, &m, GST_MAP_WRITE);
  for (gsize i = 0; i < px.size (); i++) {
    m.data[4 * i + 1] = (px[i] >> 16) & 0xff;
    m.data[4 * i + 2] = (px[i] >> 8) & 0xff;
    m.data[4 * i + 3] = px[i] & 0xff;
  }
  gst_buffer_unmap (b, &m);
  gst_element_set_state (p, GST_STATE_PLAYING);
  gst_app_src_push_buffer (GST_APP_SRC (src), b);
  gst_app_src_end_of_stream (GST_APP_SRC (src));
  zc_test_play_to_eos (p);
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (src);
  gst_object_unref (p);
}

/* Posts the window handle the moment ximagesink asks for one */
static GstBusSyncReply
give_window (GstBus *, GstMessage * m, gpointer user_data)
{
  if (gst_is_video_overlay_prepare_window_handle_message (m)) {
    auto *s = static_cast < XWindowTarget * >(user_data);
    gst_video_overlay_set_window_handle (GST_VIDEO_OVERLAY (GST_MESSAGE_SRC
            (m)), (guintptr) s->win);
  }
  return GST_BUS_PASS;
}

GST_START_TEST (test_ximagesink_shows_the_frame)
{
  XWindowTarget s;
  open_window (&s);

  /* The last frame, in the pixel format ximagesink negotiated */
  GstElement *show = zc_test_parse ((chain () +
          "ximagesink name=sink sync=false").c_str ());
  GstBus *bus = gst_element_get_bus (show);
  gst_bus_set_sync_handler (bus, give_window, &s, NULL);
  gst_object_unref (bus);
  ZcBusLog log;
  zc_test_play (show, log, 30 * GST_SECOND);
  fail_unless (log.eos && log.errors.empty (), "display pipeline:\n%s",
      log.describe ().c_str ());
  GstElement *sink = zc_test_get_by_name (show, "sink");
  GstPad *pad = gst_element_get_static_pad (sink, "sink");
  GstCaps *shown = gst_pad_get_current_caps (pad);
  fail_unless (shown != NULL);
  GstVideoInfo info;
  fail_unless (gst_video_info_from_caps (&info, shown));
  GST_INFO ("ximagesink took %" GST_PTR_FORMAT, shown);
  /* the window holds the last frame while the pipeline is not stopped */
  std::vector < guint32 > screen = grab (&s);
  gst_caps_unref (shown);
  gst_object_unref (pad);
  gst_object_unref (sink);
  gst_element_set_state (show, GST_STATE_NULL);
  gst_object_unref (show);

  const gchar *path = g_getenv ("ZC_TEST_SCREENSHOT");
  save_png (screen, path ? path : "display-screenshot.png");

  /* The same chain into an appsink, converted by the same videoconvert to
   * the same format, read as 0xRRGGBB */
  gchar *caps = g_strdup_printf ("video/x-raw,format=%s ! ",
      GST_VIDEO_INFO_NAME (&info));
  GstElement *ref = zc_test_parse ((chain () + caps +
          "appsink name=sink sync=false").c_str ());
  g_free (caps);
  GstElement *asink = zc_test_get_by_name (ref, "sink");
  gst_element_set_state (ref, GST_STATE_PLAYING);
  GstSample *last = NULL;
  while (GstSample * smp = gst_app_sink_pull_sample (GST_APP_SINK (asink))) {
    if (last)
      gst_sample_unref (last);
    last = smp;
  }
  fail_unless (last != NULL, "the reference pipeline gave no frame");
  GstVideoFrame f;
  fail_unless (gst_video_frame_map (&f, &info, gst_sample_get_buffer (last),
          GST_MAP_READ));
  const GstVideoFormatInfo *fi = f.info.finfo;
  guint mismatches = 0;
  std::string first;
  for (gint y = 0; y < kHeight; y++) {
    for (gint x = 0; x < kWidth; x++) {
      const guint8 *row = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&f, 0)
          + (gsize) y * GST_VIDEO_FRAME_PLANE_STRIDE (&f, 0);
      const guint8 *p = row + (gsize) x * GST_VIDEO_FRAME_COMP_PSTRIDE (&f, 0);
      guint32 want = ((guint32) p[GST_VIDEO_FORMAT_INFO_POFFSET (fi, 0)] << 16)
          | ((guint32) p[GST_VIDEO_FORMAT_INFO_POFFSET (fi, 1)] << 8) |
          p[GST_VIDEO_FORMAT_INFO_POFFSET (fi, 2)];
      guint32 got = screen[(gsize) y * kWidth + x];
      if (got != want && mismatches++ == 0) {
        gchar *d = g_strdup_printf ("(%d,%d): screen %06x, frame %06x", x, y,
            got, want);
        first = d;
        g_free (d);
      }
    }
  }
  gst_video_frame_unmap (&f);
  gst_sample_unref (last);
  gst_object_unref (asink);
  gst_element_set_state (ref, GST_STATE_NULL);
  gst_object_unref (ref);
  close_window (&s);

  fail_unless (mismatches == 0, "%u of %d pixels on screen differ from the "
      "frame, first at %s", mismatches, kWidth * kHeight, first.c_str ());
}

GST_END_TEST;

static Suite *
display_suite (void)
{
  Suite *s = suite_create ("display");
  TCase *tc = zc_test_case ("general");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_ximagesink_shows_the_frame);
  return s;
}

/* GST_CHECK_MAIN cannot report "skipped": exit 77 without an X server or
 * without ximagesink */
int
main (int argc, char **argv)
{
  gst_check_init (&argc, &argv);
  if (!g_getenv ("DISPLAY")) {
    g_print ("display: no X server (DISPLAY unset); skipped\n");
    return 77;
  }
  GstElementFactory *f = gst_element_factory_find ("ximagesink");
  if (!f) {
    g_print ("display: no ximagesink (gstreamer1.0-x); skipped\n");
    return 77;
  }
  gst_object_unref (f);
  return gst_check_run_suite (display_suite (), "display", __FILE__);
}

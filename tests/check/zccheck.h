/* gst-zerocopy test helpers
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by the GstCheck programs under tests/check/: which backend this
 * machine runs, element stats, bus logs, per-test leak checks through the
 * leaks tracer, and the CPU reference of zcfilter's arithmetic.
 *
 * Header-only (every function is inline or static) so that each test program
 * is one translation unit plus this file.
 */
#pragma once

#include <gst/check/gstcheck.h>
#include <gst/check/gstharness.h>
#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>
#include <gst/zerocopy/zerocopy.h>

#include <zcconvert.h>
#include "../../gst/zcframedesc.h"
#include <zcpointops.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

/* ---------------------------------------------------------------------- */
/* Backend                                                                */
/* ---------------------------------------------------------------------- */

/* Whether a CUDA GPU is usable here (cached). Asks the library the way the
 * elements do: a context for "any device" is a GPU context or the CPU one. */
static inline gboolean
zc_test_have_gpu (void)
{
  static gint cached = -1;
  if (cached < 0) {
    GError *err = NULL;
    GstZcContext *ctx = gst_zc_context_new (-1, &err);
    cached = ctx && gst_zc_context_has_gpu (ctx);
    if (ctx)
      gst_object_unref (ctx);
    g_clear_error (&err);
  }
  return cached;
}

/* A context of the first device (or the CPU backend's); fails the test
 * when there is none */
static inline GstZcContext *
zc_test_new_context (void)
{
  GError *err = NULL;
  GstZcContext *ctx = gst_zc_context_new (-1, &err);
  fail_unless (ctx != NULL, "no context: %s", err ? err->message : "?");
  g_clear_error (&err);
  return ctx;
}

/* The "backend" string the elements put in their stats on this machine */
static inline const gchar *
zc_test_expected_backend (void)
{
  return zc_test_have_gpu ()? "cuda" : "cpu";
}

/* The smallest device index that does not exist here (GPU machines only):
 * 7 unless this host has 8 GPUs or more. */
static inline gint
zc_test_nonexistent_device (void)
{
  for (gint dev = 7; dev < 1024; dev++) {
    GError *err = NULL;
    GstZcContext *ctx = gst_zc_context_new (dev, &err);
    g_clear_error (&err);
    if (!ctx)
      return dev;
    gst_object_unref (ctx);
  }
  return 1024;
}

/* A bus sync handler that answers the elements' need-context for the
 * zero-copy context with @user_data (a GstZcContext), as an application
 * that shares its own context does */
static inline GstBusSyncReply
zc_test_give_context (GstBus *, GstMessage * m, gpointer user_data)
{
  const gchar *type;
  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_NEED_CONTEXT &&
      gst_message_parse_context_type (m, &type) &&
      g_strcmp0 (type, GST_ZC_CONTEXT_TYPE) == 0) {
    GstContext *c = gst_context_new_zc_context ((GstZcContext *) user_data);
    gst_element_set_context (GST_ELEMENT (GST_MESSAGE_SRC (m)), c);
    gst_context_unref (c);
  }
  return GST_BUS_PASS;
}

/* ---------------------------------------------------------------------- */
/* Element stats                                                          */
/* ---------------------------------------------------------------------- */

static inline GstStructure *
zc_test_get_stats (GstElement * element)
{
  GstStructure *s = NULL;
  g_object_get (element, "stats", &s, NULL);
  fail_unless (s != NULL, "%s has no stats", GST_ELEMENT_NAME (element));
  return s;
}

static inline guint64
zc_test_stat (GstElement * element, const gchar * field)
{
  GstStructure *s = zc_test_get_stats (element);
  guint64 v = 0;
  gchar *str = gst_structure_to_string (s);
  gboolean found = gst_structure_get_uint64 (s, field, &v);
  fail_unless (found, "stats of %s has no guint64 '%s': %s",
      GST_ELEMENT_NAME (element), field, str);
  g_free (str);
  gst_structure_free (s);
  return v;
}

static inline std::string
zc_test_stat_string (GstElement * element, const gchar * field)
{
  GstStructure *s = zc_test_get_stats (element);
  const gchar *v = gst_structure_get_string (s, field);
  gchar *str = gst_structure_to_string (s);
  fail_unless (v != NULL, "stats of %s has no string '%s': %s",
      GST_ELEMENT_NAME (element), field, str);
  std::string ret (v);
  g_free (str);
  gst_structure_free (s);
  return ret;
}

static inline std::string
zc_test_stats_to_string (GstElement * element)
{
  GstStructure *s = zc_test_get_stats (element);
  gchar *str = gst_structure_to_string (s);
  std::string ret (str);
  g_free (str);
  gst_structure_free (s);
  return ret;
}

/* Whether the GStreamer this test runs against (whose elements are the
 * references some tests compare with) is @major.@minor or newer */
static inline gboolean
zc_test_gst_at_least (guint major, guint minor)
{
  guint ma, mi, micro, nano;
  gst_version (&ma, &mi, &micro, &nano);
  return ma > major || (ma == major && mi >= minor);
}

/* gst_video_frame_map() for a const @info: before GStreamer 1.20 it takes a
 * non-const one (it only reads it, into frame->info). */
static inline gboolean
zc_test_frame_map (GstVideoFrame * frame, const GstVideoInfo * info,
    GstBuffer * buf, GstMapFlags flags)
{
  GstVideoInfo copy = *info;
  return gst_video_frame_map (frame, &copy, buf, flags);
}

/* @buf's bytes in system memory, with its flags, timestamps and the plane
 * layout of its video meta. Not gst_buffer_copy_deep (): that allocates
 * from the zero-copy allocator again; and gst_buffer_copy_into () with
 * GST_BUFFER_COPY_METADATA alone leaves the video meta out (it is tagged
 * "memory", so it goes only with the memory), and the padded strides of a
 * zero-copy pool with it. */
static inline GstBuffer *
zc_test_system_copy (GstBuffer * buf)
{
  GstMapInfo map;
  fail_unless (gst_buffer_map (buf, &map, GST_MAP_READ));
  GstBuffer *copy = gst_buffer_new_allocate (NULL, map.size, NULL);
  gst_buffer_fill (copy, 0, map.data, map.size);
  gst_buffer_unmap (buf, &map);
  fail_unless (gst_buffer_copy_into (copy, buf, (GstBufferCopyFlags)
          (GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS), 0, -1));
  GstVideoMeta *vm = gst_buffer_get_video_meta (buf);
  if (vm)
    gst_buffer_add_video_meta_full (copy, vm->flags, vm->format, vm->width,
        vm->height, vm->n_planes, vm->offset, vm->stride);
  return copy;
}

/* Pad probes (GST_PAD_PROBE_TYPE_BUFFER) recording what crosses a pad:
 * a system-memory copy of each buffer (@user_data: a std::vector of
 * GstBuffer *, the caller unrefs them), or the GstMemory of each buffer,
 * to tell in place from not (@user_data: a std::vector of GstMemory *,
 * not reffed: compared by address only) */
static inline GstPadProbeReturn
zc_test_probe_keep_copy (GstPad *, GstPadProbeInfo * info, gpointer user_data)
{
  auto *copies = static_cast < std::vector < GstBuffer * >*>(user_data);
  copies->push_back (zc_test_system_copy (GST_PAD_PROBE_INFO_BUFFER (info)));
  return GST_PAD_PROBE_OK;
}

static inline GstPadProbeReturn
zc_test_probe_record_memory (GstPad *, GstPadProbeInfo * info,
    gpointer user_data)
{
  auto *mems = static_cast < std::vector < GstMemory * >*>(user_data);
  mems->push_back (gst_buffer_peek_memory (GST_PAD_PROBE_INFO_BUFFER (info),
          0));
  return GST_PAD_PROBE_OK;
}

/* ---------------------------------------------------------------------- */
/* Pipelines and their bus                                                */
/* ---------------------------------------------------------------------- */

/* The pipelines of zc_test_parse() that are still alive. A failed check
 * leaves the test function at once (with CK_FORK=no, as meson runs the
 * suites), so a pipeline it started may still be playing or paused at EOS;
 * its streaming threads would then keep the program from exiting (gst_check
 * waits for every task at the end). zc_test_case()'s teardown sets those
 * pipelines to NULL, so that the failure is reported, not a hang. */
static std::vector < GstElement * >zc_test_alive_pipelines;
static std::mutex zc_test_alive_lock;

static inline void
zc_test_pipeline_gone (gpointer, GObject * obj)
{
  std::lock_guard < std::mutex > lk (zc_test_alive_lock);
  auto &v = zc_test_alive_pipelines;
  v.erase (std::remove (v.begin (), v.end (), (GstElement *) obj), v.end ());
}

static inline void
zc_test_stop_left_pipelines (void)
{
  /* Runs on the test's thread, which holds the references the failed test
   * left: no pipeline of the list goes away meanwhile */
  std::vector < GstElement * >left;
  {
    std::lock_guard < std::mutex > lk (zc_test_alive_lock);
    left = zc_test_alive_pipelines;
  }
  for (GstElement * p:left) {
    GST_INFO ("stopping %s, left by the test", GST_OBJECT_NAME (p));
    gst_element_set_state (p, GST_STATE_NULL);
  }
}

/* tcase_create() with that teardown */
static inline TCase *
zc_test_case (const char *name)
{
  TCase *tc = tcase_create (name);
  tcase_add_checked_fixture (tc, NULL, zc_test_stop_left_pipelines);
  return tc;
}

/* Puts @p on the list zc_test_case()'s teardown stops (zc_test_parse()
 * does it for its pipelines); it leaves the list when it is finalized. */
static inline void
zc_test_track (GstElement * p)
{
  {
    std::lock_guard < std::mutex > lk (zc_test_alive_lock);
    zc_test_alive_pipelines.push_back (p);
  }
  g_object_weak_ref (G_OBJECT (p), zc_test_pipeline_gone, NULL);
}

static inline GstElement *
zc_test_parse (const gchar * desc)
{
  GError *err = NULL;
  GstElement *p = gst_parse_launch (desc, &err);
  fail_unless (p != NULL && err == NULL, "could not build '%s': %s", desc,
      err ? err->message : "?");
  zc_test_track (p);
  return p;
}

static inline GstElement *
zc_test_get_by_name (GstElement * bin, const gchar * name)
{
  GstElement *e = gst_bin_get_by_name (GST_BIN (bin), name);
  fail_unless (e != NULL, "no element named %s", name);
  return e;
}

/* What a pipeline posted until EOS, an ERROR or the timeout. */
struct ZcBusLog
{
  std::vector < GstMessage * >errors;
  std::vector < GstMessage * >warnings;
  gboolean eos = FALSE;
  gboolean timed_out = FALSE;

  ZcBusLog () = default;
  ZcBusLog (const ZcBusLog &) = delete;
  ZcBusLog & operator= (const ZcBusLog &) = delete;
  ~ZcBusLog ()
  {
    for (GstMessage * m:errors)
      gst_message_unref (m);
    for (GstMessage * m:warnings)
      gst_message_unref (m);
  }

  std::string describe () const
  {
    std::string out;
    for (GstMessage * m:errors) {
      GError *e = NULL;
      gchar *dbg = NULL;
      gst_message_parse_error (m, &e, &dbg);
      out += std::string ("ERROR from ") + GST_OBJECT_NAME (m->src) + ": " +
          e->message + " (" + (dbg ? dbg : "") + ")\n";
      g_clear_error (&e);
      g_free (dbg);
    }
    for (GstMessage * m:warnings) {
      GError *e = NULL;
      gchar *dbg = NULL;
      gst_message_parse_warning (m, &e, &dbg);
      out += std::string ("WARNING from ") + GST_OBJECT_NAME (m->src) + ": " +
          e->message + " (" + (dbg ? dbg : "") + ")\n";
      g_clear_error (&e);
      g_free (dbg);
    }
    if (timed_out)
      out += "timed out\n";
    return out;
  }
};

/* Pops messages until EOS or the first ERROR (collecting WARNINGs on the
 * way) or @timeout. Does not change the state. */
static inline void
zc_test_collect (GstElement * pipeline, ZcBusLog & log, GstClockTime timeout)
{
  GstBus *bus = gst_element_get_bus (pipeline);
  while (TRUE) {
    GstMessage *m = gst_bus_timed_pop_filtered (bus, timeout,
        (GstMessageType) (GST_MESSAGE_EOS | GST_MESSAGE_ERROR |
            GST_MESSAGE_WARNING));
    if (!m) {
      log.timed_out = TRUE;
      break;
    }
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_WARNING) {
      log.warnings.push_back (m);
      continue;
    }
    if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR) {
      log.errors.push_back (m);
      break;
    }
    log.eos = TRUE;
    gst_message_unref (m);
    break;
  }
  gst_object_unref (bus);
}

/* Plays @pipeline to EOS (or error/timeout) and returns what it posted.
 * Leaves the pipeline PLAYING (or wherever it stopped). */
static inline void
zc_test_play (GstElement * pipeline, ZcBusLog & log,
    GstClockTime timeout = 60 * GST_SECOND)
{
  GstStateChangeReturn r = gst_element_set_state (pipeline, GST_STATE_PLAYING);
  if (r == GST_STATE_CHANGE_FAILURE) {
    /* The reason is on the bus as an ERROR */
    zc_test_collect (pipeline, log, GST_SECOND);
    return;
  }
  zc_test_collect (pipeline, log, timeout);
}

/* Plays a pipeline to EOS and fails the test on anything else. */
static inline void
zc_test_play_to_eos (GstElement * pipeline)
{
  ZcBusLog log;
  zc_test_play (pipeline, log);
  fail_unless (log.eos && log.errors.empty (), "pipeline did not reach EOS:\n%s",
      log.describe ().c_str ());
}

/* The text of an ERROR/WARNING message: its message and its debug string */
static inline std::string
zc_test_message_text (GstMessage * m, GQuark * domain = NULL, gint * code =
    NULL)
{
  GError *e = NULL;
  gchar *dbg = NULL;
  if (GST_MESSAGE_TYPE (m) == GST_MESSAGE_ERROR)
    gst_message_parse_error (m, &e, &dbg);
  else
    gst_message_parse_warning (m, &e, &dbg);
  std::string out = std::string (e->message) + " | " + (dbg ? dbg : "");
  if (domain)
    *domain = e->domain;
  if (code)
    *code = e->code;
  g_clear_error (&e);
  g_free (dbg);
  return out;
}

static inline gboolean
zc_test_contains_nocase (const std::string & hay, const gchar * needle)
{
  gchar *h = g_ascii_strdown (hay.c_str (), -1);
  gchar *n = g_ascii_strdown (needle, -1);
  gboolean found = strstr (h, n) != NULL;
  g_free (h);
  g_free (n);
  return found;
}

/* ---------------------------------------------------------------------- */
/* Leak checks                                                            */
/* ---------------------------------------------------------------------- */

/* The leaks tracer, when GST_TRACERS enables it (meson test does for the
 * suites that check leaks). Besides the report at gst_deinit() (a
 * g_warning, which GstCheck turns into a failing exit status), its activity
 * tracking tells which objects one test created and left alive. */
static inline GstTracer *
zc_test_leaks_tracer (void)
{
  GstTracer *found = NULL;
  /* Before 1.18 there is no list of active tracers, and the leaks tracer
   * has no activity signals: only its report at gst_deinit() checks. */
#if GST_CHECK_VERSION(1, 18, 0)
  GList *tracers = gst_tracing_get_active_tracers ();
  for (GList * l = tracers; l; l = l->next) {
    if (!found && g_str_equal (G_OBJECT_TYPE_NAME (l->data), "GstLeaksTracer"))
      found = (GstTracer *) gst_object_ref (l->data);
  }
  g_list_free_full (tracers, gst_object_unref);
#endif
  return found;
}

struct ZcLeakCheck
{
  GstTracer *tracer = nullptr;

  ZcLeakCheck ()
  {
    tracer = zc_test_leaks_tracer ();
    if (tracer)
      g_signal_emit_by_name (tracer, "activity-start-tracking");
    else
      GST_INFO ("leaks tracer not active (GST_TRACERS=leaks): per-test leak "
          "check skipped");
  }
  ZcLeakCheck (const ZcLeakCheck &) = delete;
  ZcLeakCheck & operator= (const ZcLeakCheck &) = delete;

  /* Objects created since the constructor and still alive, one per line
   * ("type address"), or "" when there are none. Stops tracking. */
  std::string alive_objects ()
  {
    if (!tracer)
      return "";
    /* A task's thread drops its last reference to the GstTask after the
     * join returns; wait for the task threads to wind down first. */
    gst_task_cleanup_all ();
    GstStructure *cp = NULL;
    g_signal_emit_by_name (tracer, "activity-get-checkpoint", &cp);
    g_signal_emit_by_name (tracer, "activity-stop-tracking");
    gst_clear_object (&tracer);
    if (!cp)
      return "";

    /* created minus destroyed, by address: an address may be reused */
    std::map < std::string, int >net;
    std::map < std::string, std::string > type_of;
    const gchar *lists[] = { "objects-created-list", "objects-removed-list" };
    for (int k = 0; k < 2; k++) {
      const GValue *list = gst_structure_get_value (cp, lists[k]);
      guint n = list ? gst_value_list_get_size (list) : 0;
      for (guint i = 0; i < n; i++) {
        const GstStructure *o =
            gst_value_get_structure (gst_value_list_get_value (list, i));
        const gchar *addr = gst_structure_get_string (o, "address");
        const gchar *type = gst_structure_get_string (o, "type-name");
        if (!addr)
          continue;
        net[addr] += k == 0 ? 1 : -1;
        if (k == 0 && type)
          type_of[addr] = type;
      }
    }
    gst_structure_free (cp);

    std::string out;
    for (auto & kv:net) {
      if (kv.second > 0)
        out += type_of[kv.first] + " " + kv.first + "\n";
    }
    return out;
  }

  ~ZcLeakCheck ()
  {
    if (tracer) {
      g_signal_emit_by_name (tracer, "activity-stop-tracking");
      gst_object_unref (tracer);
    }
  }
};

/* ---------------------------------------------------------------------- */
/* Frames                                                                 */
/* ---------------------------------------------------------------------- */

static inline GstCaps *
zc_test_raw_caps (GstVideoFormat format, gint width, gint height,
    const gchar * feature = NULL)
{
  GstCaps *caps = gst_caps_new_simple ("video/x-raw",
      "format", G_TYPE_STRING, gst_video_format_to_string (format),
      "width", G_TYPE_INT, width, "height", G_TYPE_INT, height,
      "framerate", GST_TYPE_FRACTION, 30, 1, NULL);
  if (feature)
    gst_caps_set_features (caps, 0, gst_caps_features_new (feature, NULL));
  return caps;
}

/* Fills every byte of @buffer (padding included) from @seed */
static inline void
zc_test_fill_random (GstBuffer * buffer, guint32 seed)
{
  GstMapInfo map;
  fail_unless (gst_buffer_map (buffer, &map, GST_MAP_WRITE));
  std::mt19937 rng (seed);
  gsize i = 0;
  for (; i + 4 <= map.size; i += 4) {
    guint32 v = rng ();
    memcpy (map.data + i, &v, 4);
  }
  for (; i < map.size; i++)
    map.data[i] = (guint8) rng ();
  gst_buffer_unmap (buffer, &map);
}

/* What a byte of a plane is, for zcfilter's rules */
enum ZcByteKind
{
  ZC_BYTE_COLOUR,               /* R, G, B or luma: goes through the LUT */
  ZC_BYTE_CHROMA,               /* U, V: inverted by invert, else kept */
  ZC_BYTE_KEPT,                 /* alpha, x padding: never touched */
};

/* The kind of each byte of a pixel group of plane @plane (pstride bytes) */
static inline std::vector < ZcByteKind >
zc_test_plane_byte_kinds (const GstVideoFormatInfo * finfo, guint plane,
    gint * pstride)
{
  gint ps = 0;
  for (guint c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); c++) {
    if (GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) == plane)
      ps = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, c);
  }
  std::vector < ZcByteKind > kinds (ps, ZC_BYTE_KEPT);
  gboolean yuv = GST_VIDEO_FORMAT_INFO_IS_YUV (finfo);
  for (guint c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); c++) {
    if (GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) != plane)
      continue;
    guint off = GST_VIDEO_FORMAT_INFO_POFFSET (finfo, c);
    if (c == GST_VIDEO_COMP_A)
      kinds[off] = ZC_BYTE_KEPT;
    else if (yuv && (c == GST_VIDEO_COMP_U || c == GST_VIDEO_COMP_V))
      kinds[off] = ZC_BYTE_CHROMA;
    else
      kinds[off] = ZC_BYTE_COLOUR;  /* R, G, B, or Y (GRAY8 too) */
  }
  *pstride = ps;
  return kinds;
}

static inline void
zc_test_plane_geometry (const GstVideoInfo * info, guint plane,
    gsize * row_bytes, guint * rows)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  for (guint c = 0; c < GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo); c++) {
    if (GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) != plane)
      continue;
    gsize w = GST_VIDEO_INFO_COMP_WIDTH (info, c);
    /* packed 4:2:2: whole macropixels (an odd width's last Y is padding) */
    if (GST_VIDEO_FORMAT_INFO_W_SUB (finfo, 1) &&
        GST_VIDEO_INFO_N_PLANES (info) == 1)
      w = GST_ROUND_UP_2 (w);
    *row_bytes = w * GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, c);
    *rows = GST_VIDEO_INFO_COMP_HEIGHT (info, c);
    return;
  }
  *row_bytes = 0;
  *rows = 0;
}

/* Compares the visible bytes of two frames of the same format and size
 * (each with its own strides) through a per-kind mapping. Returns "" or a
 * description of the first mismatch. */
static inline std::string
zc_test_compare_frames (GstVideoFrame * in, GstVideoFrame * out,
    const guint8 colour_lut[256], const guint8 chroma_lut[256],
    const gchar * what)
{
  const GstVideoFormatInfo *finfo = in->info.finfo;
  guint8 kept_lut[256];
  for (int v = 0; v < 256; v++)
    kept_lut[v] = (guint8) v;

  if (GST_VIDEO_FRAME_FORMAT (in) != GST_VIDEO_FRAME_FORMAT (out) ||
      GST_VIDEO_FRAME_WIDTH (in) != GST_VIDEO_FRAME_WIDTH (out) ||
      GST_VIDEO_FRAME_HEIGHT (in) != GST_VIDEO_FRAME_HEIGHT (out))
    return std::string (what) + ": output frame has another format or size";

  for (guint p = 0; p < GST_VIDEO_FRAME_N_PLANES (in); p++) {
    gint pstride = 0;
    std::vector < ZcByteKind > kinds =
        zc_test_plane_byte_kinds (finfo, p, &pstride);
    const guint8 *luts[3] = { colour_lut, chroma_lut, kept_lut };
    gsize row_bytes;
    guint rows;
    zc_test_plane_geometry (&in->info, p, &row_bytes, &rows);
    const guint8 *src = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (in, p);
    const guint8 *dst = (const guint8 *) GST_VIDEO_FRAME_PLANE_DATA (out, p);
    gint ss = GST_VIDEO_FRAME_PLANE_STRIDE (in, p);
    gint ds = GST_VIDEO_FRAME_PLANE_STRIDE (out, p);
    /* an odd width of packed 4:2:2 ends with a padding luma: not a pixel */
    gsize padding = G_MAXSIZE;
    gint width = GST_VIDEO_FRAME_WIDTH (in);
    if (GST_VIDEO_FORMAT_INFO_W_SUB (finfo, 1) &&
        GST_VIDEO_FRAME_N_PLANES (in) == 1 && (width & 1))
      padding = (gsize) (width - 1) / 2 * 4 +
          GST_VIDEO_FORMAT_INFO_POFFSET (finfo, 0) + 2;
    for (guint y = 0; y < rows; y++) {
      const guint8 *s = src + (gsize) y * ss;
      const guint8 *d = dst + (gsize) y * ds;
      for (gsize x = 0; x < row_bytes; x++) {
        if (x == padding)
          continue;
        ZcByteKind k = kinds[x % pstride];
        guint8 want = luts[k][s[x]];
        if (d[x] != want) {
          static const gchar *names[] = { "colour/luma", "chroma", "alpha/x" };
          gchar *msg = g_strdup_printf ("%s: %s %dx%d plane %u row %u byte %"
              G_GSIZE_FORMAT " (%s): input %u, expected %u, got %u "
              "(in stride %d, out stride %d)", what,
              gst_video_format_to_string (GST_VIDEO_FRAME_FORMAT (in)),
              GST_VIDEO_FRAME_WIDTH (in), GST_VIDEO_FRAME_HEIGHT (in), p, y, x,
              names[k], s[x], want, d[x], ss, ds);
          std::string ret (msg);
          g_free (msg);
          return ret;
        }
      }
    }
  }
  return "";
}

/* Same bytes in both frames (visible area) */
static inline std::string
zc_test_compare_identical (GstVideoFrame * in, GstVideoFrame * out,
    const gchar * what)
{
  guint8 id[256];
  for (int v = 0; v < 256; v++)
    id[v] = (guint8) v;
  return zc_test_compare_frames (in, out, id, id, what);
}

/* ---------------------------------------------------------------------- */
/* zcfilter's reference                                                   */
/* ---------------------------------------------------------------------- */

struct ZcFilterSetting
{
  const gchar *name;
  gdouble brightness;
  gdouble contrast;
  gdouble gamma;
  gboolean invert;
  gdouble saturation = 1.0;
  gdouble hue = 0.0;
  gboolean grayscale = FALSE;
};

/* Every property alone, at both ends of its range, and mixes */
static const ZcFilterSetting zc_filter_settings[] = {
  {"brightness+0.3", 0.3, 1.0, 1.0, FALSE},
  {"brightness-0.45", -0.45, 1.0, 1.0, FALSE},
  {"brightness+1", 1.0, 1.0, 1.0, FALSE},
  {"contrast0.5", 0.0, 0.5, 1.0, FALSE},
  {"contrast1.7", 0.0, 1.7, 1.0, FALSE},
  {"contrast0", 0.0, 0.0, 1.0, FALSE},
  {"gamma0.45", 0.0, 1.0, 0.45, FALSE},
  {"gamma2.2", 0.0, 1.0, 2.2, FALSE},
  {"gamma0.01", 0.0, 1.0, 0.01, FALSE},
  {"invert", 0.0, 1.0, 1.0, TRUE},
  {"saturation0", 0.0, 1.0, 1.0, FALSE, 0.0},
  {"saturation1.8+hue0.3", 0.0, 1.0, 1.0, FALSE, 1.8, 0.3},
  {"hue-1", 0.0, 1.0, 1.0, FALSE, 1.0, -1.0},
  {"grayscale", 0.0, 1.0, 1.0, FALSE, 1.0, 0.0, TRUE},
  {"brightness0.1+contrast1.2+gamma0.8+invert", 0.1, 1.2, 0.8, TRUE},
  {"brightness-0.2+contrast2+gamma5+saturation0.5", -0.2, 2.0, 5.0, FALSE,
      0.5},
  {"contrast2+gamma10+invert+hue0.5", 0.05, 2.0, 10.0, TRUE, 1.0, 0.5},
};

#define ZC_N_FILTER_SETTINGS G_N_ELEMENTS (zc_filter_settings)

/* The 22 formats every element takes, from the one format table */
static const GstVideoFormat zc_filter_formats[] = {
#define ZC_TEST_FORMAT(name, ...) GST_VIDEO_FORMAT_##name,
  ZC_FORMATS (ZC_TEST_FORMAT, ZC_TEST_FORMAT)
#undef ZC_TEST_FORMAT
};
G_STATIC_ASSERT (G_N_ELEMENTS (zc_filter_formats) == 22);

/* The kernel's description of a mapped frame (format, matrix, range,
 * planes): the plugin's own mapping; false for a format the kernels do
 * not have. */
static inline bool
zc_test_frame_desc (GstVideoFrame * f, zc::FrameDesc * d)
{
  *d = zc::FrameDesc ();
  return zc_gst::frame_desc_of_frame (f, d);
}

static inline zc::ConvertParams
zc_test_convert_params (const ZcFilterSetting & s)
{
  zc::ConvertParams p;
  p.sampling = zc::Sampling::Bilinear;
  p.brightness = s.brightness;
  p.contrast = s.contrast;
  p.saturation = s.saturation;
  p.hue = s.hue;
  p.gamma = s.gamma;
  p.invert = s.invert;
  p.grayscale = s.grayscale;
  return p;
}

/* zcfilter's output for @s on @fin, by the CPU reference (zc::convert_cpu_reference,
 * the code the CUDA kernel shares), against the element's @fout, byte for
 * byte. Returns "" or the first difference. */
static inline std::string
zc_test_check_filter_output (const ZcFilterSetting & s, GstVideoFrame * fin,
    GstVideoFrame * fout, const gchar * what)
{
  /* the caps' layout: fout->info may carry the pool's padded strides */
  GstVideoInfo info;
  gst_video_info_set_format (&info, GST_VIDEO_FRAME_FORMAT (fout),
      GST_VIDEO_FRAME_WIDTH (fout), GST_VIDEO_FRAME_HEIGHT (fout));
  info.colorimetry = fout->info.colorimetry;
  GstBuffer *expected = gst_buffer_new_allocate (NULL, info.size, NULL);
  GstVideoFrame fexp;
  std::string result;
  if (!gst_video_frame_map (&fexp, &info, expected, GST_MAP_WRITE)) {
    gst_buffer_unref (expected);
    return std::string (what) + ": cannot map the reference frame";
  }
  zc::FrameDesc sd, dd;
  if (!zc_test_frame_desc (fin, &sd) || !zc_test_frame_desc (&fexp, &dd))
    result = std::string (what) + ": format unknown to the kernels";
  else if (!zc::convert_cpu_reference (sd, dd, zc_test_convert_params (s), 1))
    result = std::string (what) + ": the reference refused the request";
  else
    result = zc_test_compare_identical (&fexp, fout, what);
  gst_video_frame_unmap (&fexp);
  gst_buffer_unref (expected);
  return result;
}

/* Pushes a random frame of @format, @width x @height through
 * "zcupload ! zcfilter <setting>" (both with @memory_type when not NULL) in
 * a harness and compares the output, bit for bit and through its own
 * strides, with the CPU reference. Returns "" or what went wrong. */
static inline std::string
zc_test_run_filter_case (const ZcFilterSetting & s, GstVideoFormat format,
    gint width, gint height, const gchar * memory_type, guint32 seed)
{
  gchar *what = g_strdup_printf ("setting %s, %s %dx%d%s%s, seed %u", s.name,
      gst_video_format_to_string (format), width, height,
      memory_type ? ", memory-type=" : "", memory_type ? memory_type : "",
      seed);
  std::string result;
  gchar *mt = memory_type ? g_strdup_printf (" memory-type=%s", memory_type)
      : g_strdup ("");
  gchar *desc = g_strdup_printf ("zcupload name=up%s ! zcfilter name=f%s "
      "brightness=%.17g contrast=%.17g gamma=%.17g invert=%s "
      "saturation=%.17g hue=%.17g grayscale=%s", mt, mt, s.brightness,
      s.contrast, s.gamma, s.invert ? "true" : "false", s.saturation, s.hue,
      s.grayscale ? "true" : "false");
  GstHarness *h = gst_harness_new_parse (desc);
  GstCaps *caps = zc_test_raw_caps (format, width, height);
  gst_harness_set_src_caps (h, caps);

  GstVideoInfo in_info;
  gst_video_info_set_format (&in_info, format, width, height);
  GstBuffer *in = gst_buffer_new_allocate (NULL, in_info.size, NULL);
  zc_test_fill_random (in, seed);
  /* The test keeps a reference: the input is read-only for the elements */
  GstFlowReturn fr = gst_harness_push (h, gst_buffer_ref (in));
  GstBuffer *out = fr == GST_FLOW_OK ? gst_harness_try_pull (h) : NULL;

  if (fr != GST_FLOW_OK) {
    result = std::string (what) + ": push returned " + gst_flow_get_name (fr);
  } else if (!out) {
    result = std::string (what) + ": no output buffer";
  } else {
    GstCaps *out_caps = gst_pad_get_current_caps (h->sinkpad);
    GstVideoInfo out_info;
    GstVideoFrame fin, fout;
    if (!out_caps || !gst_video_info_from_caps (&out_info, out_caps)) {
      result = std::string (what) + ": no output caps";
    } else if (!gst_video_frame_map (&fin, &in_info, in, GST_MAP_READ)) {
      result = std::string (what) + ": cannot map input";
    } else {
      if (!gst_video_frame_map (&fout, &out_info, out, GST_MAP_READ)) {
        result = std::string (what) + ": cannot map output";
      } else {
        result = zc_test_check_filter_output (s, &fin, &fout, what);
        gst_video_frame_unmap (&fout);
      }
      gst_video_frame_unmap (&fin);
    }
    if (result.empty () && memory_type) {
      GstElement *f = gst_harness_find_element (h, "zcfilter");
      std::string used = zc_test_stat_string (f, "memory-type");
      if (used != memory_type)
        result = std::string (what) + ": zcfilter used memory " + used;
      gst_object_unref (f);
    }
    if (result.empty ()) {
      GstMemory *m = gst_buffer_peek_memory (out, 0);
      if (!gst_is_zc_memory (m))
        result = std::string (what) + ": output is not zero-copy memory";
    }
    if (out_caps)
      gst_caps_unref (out_caps);
  }

  if (out)
    gst_buffer_unref (out);
  gst_buffer_unref (in);
  gst_harness_teardown (h);
  g_free (desc);
  g_free (mt);
  g_free (what);
  return result;
}

/* Sizes of the reference tests: one pixel, odd small, odd larger (odd
 * widths and heights with 4:2:0 and 4:2:2 too) */
static const gint zc_filter_sizes[][2] = { {1, 1}, {3, 7}, {641, 361} };

/* Every format and size for one setting; fails the test on the first
 * mismatch. */
static inline void
zc_test_filter_setting_all_formats (guint setting, const gchar * memory_type)
{
  const ZcFilterSetting & s = zc_filter_settings[setting];
  for (guint f = 0; f < G_N_ELEMENTS (zc_filter_formats); f++) {
    for (guint z = 0; z < G_N_ELEMENTS (zc_filter_sizes); z++) {
      guint32 seed = 1000u * setting + 10u * f + z;
      std::string err = zc_test_run_filter_case (s, zc_filter_formats[f],
          zc_filter_sizes[z][0], zc_filter_sizes[z][1], memory_type, seed);
      fail_unless (err.empty (), "%s", err.c_str ());
    }
  }
}

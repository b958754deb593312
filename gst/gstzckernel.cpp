/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:element-zckernel
 * @title: zckernel
 *
 * Runs your own CUDA kernel on zero-copy frames, in place where the
 * producer wrote them. The kernel comes from a `.cu` file (`location`) or
 * a string (`source`), compiled at start with NVRTC for the GPU it runs on
 * and cached (in memory, and on disk under $XDG_CACHE_HOME/gst-zerocopy),
 * or from a precompiled `.ptx`, `.cubin` or `.fatbin` file, which needs no
 * NVRTC. The kernel includes `<gst/zerocopy/zckernel.cuh>` (NVRTC finds it
 * without any option) and is declared with `ZC_KERNEL (process)`:
 *
 * |[
 * #include <gst/zerocopy/zckernel.cuh>
 * ZC_KERNEL (process)
 * {
 *   int x = zc_x (), y = zc_y ();
 *   if (!zc_inside (out, x, y))
 *     return;
 *   ZcRGBA p = zc_read_rgba (in, x, y);
 *   p.r = 255 - p.r; p.g = 255 - p.g; p.b = 255 - p.b;
 *   zc_write_rgba (out, x, y, p);
 * }
 * ]|
 *
 * One thread per pixel, in blocks of `block-width` x `block-height`. In
 * place (the input frame is writable and `in-place` is set) `in` and `out`
 * are the same frame; otherwise `out` is a fresh frame from the output
 * pool. `params` (a structure with int, uint, float, double, gint64,
 * guint64 and boolean fields) reaches the kernel packed in field order, and
 * a change takes the next frame without recompiling. A new `source` or
 * `location` while playing is compiled on a worker thread and replaces the
 * running kernel between two frames; if it does not compile, the old
 * kernel keeps running and a warning carries NVRTC's log. The contract,
 * the params layout and a complete example: docs/zckernel.md.
 *
 * Errors end the pipeline with an ERROR message: a compile error (with
 * NVRTC's log and line numbers), a missing file or entry point, and a
 * kernel that faults on the GPU. A fault (an illegal address, ...) loses
 * the device's CUDA context for the whole process: every other pipeline
 * on that GPU in the process fails as well, and only a new process
 * recovers. zckernel has no CPU backend: without a GPU it fails at start.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=RGBA ! zcupload ! \
 *     zckernel location=examples/kernels/invert.cu ! zcdownload ! \
 *     autovideosink
 * ]|
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12 ! zcupload ! \
 *     zckernel location=examples/kernels/threshold.cu \
 *     params="p, level=(int)128" ! zcdownload ! autovideosink
 * ]|
 *
 * Caps: `video/x-raw(memory:CUDAZeroCopy)`, the same on both pads, any of
 * the 22 formats (the pixel helpers cover the 8-bit R'G'B', GRAY8 and
 * planar/semi-planar Y'CbCr ones; the others are reached plane by plane).
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzckernel.h"
#include "gstzcallocation.h"
#include "gstzcframecopy.h"
#include "gstzcgpuerror.h"
#include "gstzcvideoplane.h"

#include <gst/zerocopy/gstzcuserkernel-private.h>

#include <cstring>
#include <mutex>
#include <string>
#include <thread>

GST_DEBUG_CATEGORY_STATIC (gst_zc_kernel_debug);
#define GST_CAT_DEFAULT gst_zc_kernel_debug

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE_WITH_FEATURES
        (GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY, GST_ZC_FORMATS)));

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE_WITH_FEATURES
        (GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY, GST_ZC_FORMATS)));

enum
{
  PROP_0,
  PROP_LOCATION,
  PROP_SOURCE,
  PROP_ENTRY,
  PROP_COMPILE_OPTIONS,
  PROP_PARAMS,
  PROP_BLOCK_WIDTH,
  PROP_BLOCK_HEIGHT,
  PROP_IN_PLACE,
};

#define DEFAULT_ENTRY "process"
#define DEFAULT_BLOCK_WIDTH 32
#define DEFAULT_BLOCK_HEIGHT 8
#define DEFAULT_IN_PLACE TRUE

/* What the kernel is built from: one snapshot of the properties */
struct KernelSettings
{
  std::string location;
  std::string source;
  std::string entry = DEFAULT_ENTRY;
  std::string options;
};

struct GstZcKernelPrivate
{
  std::mutex lock;              /* everything below but the streaming state */
  KernelSettings settings;
  guint64 generation = 0;       /* bumped by each settings change */
  GstStructure *params = nullptr;
  ZcParams packed {};
  guint block_w = DEFAULT_BLOCK_WIDTH;
  guint block_h = DEFAULT_BLOCK_HEIGHT;
  gboolean in_place = DEFAULT_IN_PLACE;

  /* from start() to stop() */
  bool started = false;
  gint device = 0;
  GstZcUserKernel *pending = nullptr;   /* built by the worker, not yet used */
  std::thread worker;           /* builds changes made while started */
  bool worker_busy = false;

  /* stats */
  GstZcKernelOrigin origin = GST_ZC_KERNEL_ORIGIN_NONE;
  guint64 nvrtc_compiles = 0;
  gdouble build_ms = 0;
  guint64 swaps = 0;

  /* streaming thread */
  GstZcUserKernel *kernel = nullptr;
  guint64 frame_number = 0;
  bool lost = false;            /* a kernel faulted: the context is gone */
};

struct _GstZcKernel
{
  GstZcBaseTransform parent;
  GstZcKernelPrivate *priv;
};

#define gst_zc_kernel_parent_class parent_class
G_DEFINE_TYPE (GstZcKernel, gst_zc_kernel, GST_TYPE_ZC_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE (zckernel, "zckernel", GST_RANK_NONE,
    GST_TYPE_ZC_KERNEL);

/* ---- params ----------------------------------------------------------------- */

/* Packs @s into @out as docs/zckernel.md says: the fields in their order,
 * int, uint, float and boolean (0 or 1) in 4 bytes, double, int64 and
 * uint64 in 8, each aligned to its size. FALSE with @error on a field of
 * another type or too many bytes. */
static gboolean
pack_params (const GstStructure * s, ZcParams * out, std::string * error)
{
  ZcParams p {};
  gsize off = 0;
  gint n = s ? gst_structure_n_fields (s) : 0;
  for (gint i = 0; i < n; i++) {
    const gchar *name = gst_structure_nth_field_name (s, i);
    const GValue *v = gst_structure_get_value (s, name);
    GType t = G_VALUE_TYPE (v);
    gsize size = (t == G_TYPE_DOUBLE || t == G_TYPE_INT64 ||
        t == G_TYPE_UINT64) ? 8 : 4;
    off = GST_ROUND_UP_N (off, size);
    if (off + size > ZC_PARAMS_MAX_BYTES) {
      *error = std::string ("params take more than ") +
          G_STRINGIFY (ZC_PARAMS_MAX_BYTES) + " bytes at field '" + name +
          "'";
      return FALSE;
    }
    guint8 *dst = p.bytes + off;
    if (t == G_TYPE_INT) {
      gint32 x = g_value_get_int (v);
      memcpy (dst, &x, 4);
    } else if (t == G_TYPE_UINT) {
      guint32 x = g_value_get_uint (v);
      memcpy (dst, &x, 4);
    } else if (t == G_TYPE_FLOAT) {
      gfloat x = g_value_get_float (v);
      memcpy (dst, &x, 4);
    } else if (t == G_TYPE_BOOLEAN) {
      gint32 x = g_value_get_boolean (v) ? 1 : 0;
      memcpy (dst, &x, 4);
    } else if (t == G_TYPE_DOUBLE) {
      gdouble x = g_value_get_double (v);
      memcpy (dst, &x, 8);
    } else if (t == G_TYPE_INT64) {
      gint64 x = g_value_get_int64 (v);
      memcpy (dst, &x, 8);
    } else if (t == G_TYPE_UINT64) {
      guint64 x = g_value_get_uint64 (v);
      memcpy (dst, &x, 8);
    } else {
      *error = std::string ("params field '") + name + "' is a " +
          g_type_name (t) + "; kernels take int, uint, float, double, int64, "
          "uint64 and boolean";
      return FALSE;
    }
    off += size;
  }
  p.size = (guint) off;
  p.n_fields = (guint) n;
  *out = p;
  return TRUE;
}

/* ---- building ---------------------------------------------------------------- */

/* What a GstZcKernelSpec points to beside the settings */
struct SpecText
{
  std::string text;
  std::string include_dir;
};

/* The spec of @s: the file read (into @st), or the source; FALSE with an
 * error posted (as a warning when @warn: a change while playing) */
static gboolean
make_spec (GstZcKernel * self, const KernelSettings & s, GstZcKernelSpec * spec,
    SpecText * st, gboolean warn)
{
  spec->entry = s.entry.empty ()? DEFAULT_ENTRY : s.entry.c_str ();
  spec->options = s.options.c_str ();
  if (!s.location.empty ()) {
    gchar *data = NULL;
    gsize len = 0;
    GError *err = NULL;
    if (!g_file_get_contents (s.location.c_str (), &data, &len, &err)) {
      if (warn)
        GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
            ("Could not read the kernel file '%s': %s; the running kernel "
                "stays", s.location.c_str (), err->message), (NULL));
      else
        GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
            ("Could not read the kernel file '%s': %s", s.location.c_str (),
                err->message), (NULL));
      g_clear_error (&err);
      return FALSE;
    }
    st->text.assign (data, len);
    g_free (data);
    spec->text = st->text.c_str ();
    spec->text_size = st->text.size ();
    spec->kind = gst_zc_kernel_kind_for_path (s.location.c_str ());
    spec->name = s.location.c_str ();
    gchar *dir = g_path_get_dirname (s.location.c_str ());
    st->include_dir = dir;
    g_free (dir);
    spec->include_dir = st->include_dir.c_str ();
    return TRUE;
  }
  if (!s.source.empty ()) {
    spec->kind = GST_ZC_KERNEL_SOURCE;
    spec->name = "source";
    spec->text = s.source.c_str ();
    spec->text_size = s.source.size ();
    return TRUE;
  }
  if (warn)
    GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
        ("No kernel: set location or source; the running kernel stays"),
        (NULL));
  else
    GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
        ("No kernel: set location (a .cu, .ptx, .cubin or .fatbin file) or "
            "source (CUDA C++ text)"), (NULL));
  return FALSE;
}

/* Posts the failure of @b: an ERROR at start, a WARNING for a change while
 * playing (the running kernel stays) */
static void
post_build_failure (GstZcKernel * self, const GstZcKernelBuild & b,
    gboolean warn)
{
  std::string text = b.message ? b.message : "";
  if (b.log)
    text += std::string (":\n") + b.log;
  if (warn)
    text += "\nThe running kernel stays.";
  GQuark domain = b.compile_error ? GST_LIBRARY_ERROR : GST_RESOURCE_ERROR;
  gint code = b.compile_error ? (gint) GST_LIBRARY_ERROR_FAILED :
      (gint) GST_RESOURCE_ERROR_FAILED;
  gchar *msg = g_strdup (text.c_str ());
  gchar *dbg = g_strdup (b.detail);
  gst_element_message_full (GST_ELEMENT (self), warn ? GST_MESSAGE_WARNING :
      GST_MESSAGE_ERROR, domain, code, msg, dbg, __FILE__, GST_FUNCTION,
      __LINE__);
}

/* Builds the kernel of settings @s on @device; FALSE with the failure
 * posted (a WARNING when @warn) */
static gboolean
build (GstZcKernel * self, const KernelSettings & s, gint device,
    gboolean warn, GstZcUserKernel ** kernel)
{
  GstZcKernelSpec spec = { };
  SpecText st;
  if (!make_spec (self, s, &spec, &st, warn))
    return FALSE;
  GstZcKernelBuild b;
  gst_zc_user_kernel_build (device, &spec, &b);
  if (b.log)
    GST_INFO_OBJECT (self, "NVRTC's log for %s:\n%s", spec.name, b.log);
  if (!b.kernel) {
    post_build_failure (self, b, warn);
    gst_zc_kernel_build_clear (&b);
    return FALSE;
  }
  {
    auto *priv = self->priv;
    std::lock_guard < std::mutex > lk (priv->lock);
    priv->origin = b.origin;
    priv->build_ms = b.ms;
    if (b.origin == GST_ZC_KERNEL_ORIGIN_NVRTC)
      priv->nvrtc_compiles++;
  }
  GST_INFO_OBJECT (self, "kernel '%s' of %s: %s, %s, %.2f ms",
      spec.entry, spec.name, gst_zc_kernel_origin_name (b.origin), b.target,
      b.ms);
  *kernel = b.kernel;
  gst_zc_kernel_build_clear (&b);
  return TRUE;
}

/* A settings change while started: built on the worker thread, handed to
 * the streaming thread (pending), which swaps it in before its next frame.
 * One worker at a time: a change while it builds makes it build again
 * with the latest settings once done (the superseded kernel is dropped).
 * Called with the lock held. */
static void
rebuild_async (GstZcKernel * self)
{
  auto *priv = self->priv;
  priv->generation++;
  GST_DEBUG_OBJECT (self, "kernel settings changed while running: "
      "generation %" G_GUINT64_FORMAT, priv->generation);
  if (priv->worker_busy)
    return;                     /* it sees the new generation when done */
  if (priv->worker.joinable ()) {
    /* finished: it cleared worker_busy (or it is this very thread, ending:
     * a property set from a bus sync handler on its WARNING) */
    if (priv->worker.get_id () == std::this_thread::get_id ())
      priv->worker.detach ();
    else
      priv->worker.join ();
  }
  priv->worker_busy = true;
  priv->worker = std::thread ([self]() {
    auto *priv = self->priv;
    std::unique_lock < std::mutex > lk (priv->lock);
    while (priv->started) {
      KernelSettings s = priv->settings;
      guint64 generation = priv->generation;
      gint device = priv->device;
      lk.unlock ();
      GstZcUserKernel *k = nullptr;
      gboolean built = build (self, s, device, TRUE, &k);
      lk.lock ();
      if (generation != priv->generation) {
        gst_zc_user_kernel_free (k);
        continue;               /* changed meanwhile: build the latest */
      }
      if (built && priv->started) {
        gst_zc_user_kernel_free (priv->pending);
        priv->pending = k;
      } else {
        gst_zc_user_kernel_free (k);
      }
      break;
    }
    priv->worker_busy = false;
  });
}

/* ---- properties --------------------------------------------------------------- */

static void
gst_zc_kernel_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  auto *self = GST_ZC_KERNEL (object);
  auto *priv = self->priv;
  std::lock_guard < std::mutex > lk (priv->lock);
  bool rebuild = false;

  switch (prop_id) {
    case PROP_LOCATION:{
      const gchar *v = g_value_get_string (value);
      priv->settings.location = v ? v : "";
      if (v && *v)
        priv->settings.source.clear ();
      rebuild = true;
      break;
    }
    case PROP_SOURCE:{
      const gchar *v = g_value_get_string (value);
      priv->settings.source = v ? v : "";
      if (v && *v)
        priv->settings.location.clear ();
      rebuild = true;
      break;
    }
    case PROP_ENTRY:{
      const gchar *v = g_value_get_string (value);
      priv->settings.entry = v && *v ? v : DEFAULT_ENTRY;
      rebuild = true;
      break;
    }
    case PROP_COMPILE_OPTIONS:{
      const gchar *v = g_value_get_string (value);
      priv->settings.options = v ? v : "";
      rebuild = true;
      break;
    }
    case PROP_PARAMS:{
      const GstStructure *s = gst_value_get_structure (value);
      ZcParams packed;
      std::string error;
      if (!pack_params (s, &packed, &error)) {
        GST_ELEMENT_WARNING (self, LIBRARY, SETTINGS,
            ("Invalid params: %s; the previous params stay", error.c_str ()),
            (NULL));
        break;
      }
      if (priv->params)
        gst_structure_free (priv->params);
      priv->params = s ? gst_structure_copy (s) : nullptr;
      priv->packed = packed;
      break;
    }
    case PROP_BLOCK_WIDTH:
      priv->block_w = g_value_get_uint (value);
      break;
    case PROP_BLOCK_HEIGHT:
      priv->block_h = g_value_get_uint (value);
      break;
    case PROP_IN_PLACE:
      priv->in_place = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  if (rebuild && priv->started)
    rebuild_async (self);
}

static void
gst_zc_kernel_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  auto *priv = GST_ZC_KERNEL (object)->priv;
  std::lock_guard < std::mutex > lk (priv->lock);

  switch (prop_id) {
    case PROP_LOCATION:
      g_value_set_string (value, priv->settings.location.empty ()? NULL :
          priv->settings.location.c_str ());
      break;
    case PROP_SOURCE:
      g_value_set_string (value, priv->settings.source.empty ()? NULL :
          priv->settings.source.c_str ());
      break;
    case PROP_ENTRY:
      g_value_set_string (value, priv->settings.entry.c_str ());
      break;
    case PROP_COMPILE_OPTIONS:
      g_value_set_string (value, priv->settings.options.empty ()? NULL :
          priv->settings.options.c_str ());
      break;
    case PROP_PARAMS:
      gst_value_set_structure (value, priv->params);
      break;
    case PROP_BLOCK_WIDTH:
      g_value_set_uint (value, priv->block_w);
      break;
    case PROP_BLOCK_HEIGHT:
      g_value_set_uint (value, priv->block_h);
      break;
    case PROP_IN_PLACE:
      g_value_set_boolean (value, priv->in_place);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
}

static void
gst_zc_kernel_add_stats (GstZcBaseTransform * base, GstStructure * stats)
{
  auto *priv = GST_ZC_KERNEL (base)->priv;
  std::lock_guard < std::mutex > lk (priv->lock);
  gst_structure_set (stats,
      "kernel-origin", G_TYPE_STRING, gst_zc_kernel_origin_name (priv->origin),
      "nvrtc-compiles", G_TYPE_UINT64, priv->nvrtc_compiles,
      "kernel-build-ms", G_TYPE_DOUBLE, priv->build_ms,
      "kernel-swaps", G_TYPE_UINT64, priv->swaps, NULL);
}

/* ---- start and stop ----------------------------------------------------------- */

static void
join_worker (GstZcKernel * self)
{
  auto *priv = self->priv;
  std::thread worker;
  {
    std::lock_guard < std::mutex > lk (priv->lock);
    worker.swap (priv->worker);
  }
  if (!worker.joinable ())
    return;
  /* stopped from the worker itself (an application that sets the state
   * from a bus sync handler, on the worker's WARNING): it ends by itself */
  if (worker.get_id () == std::this_thread::get_id ())
    worker.detach ();
  else
    worker.join ();
}

static gboolean
gst_zc_kernel_start (GstBaseTransform * trans)
{
  auto *self = GST_ZC_KERNEL (trans);
  auto *priv = self->priv;
  auto *base = GST_ZC_BASE_TRANSFORM (trans);

  if (!GST_BASE_TRANSFORM_CLASS (parent_class)->start (trans))
    return FALSE;
  if (!gst_zc_base_transform_uses_gpu (base)) {
    GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
        ("zckernel runs on the GPU: memory-type=system cannot be used"),
        ("use auto, mapped, managed or device"));
    GST_BASE_TRANSFORM_CLASS (parent_class)->stop (trans);
    return FALSE;
  }

  gint device = gst_zc_context_get_device_id
      (gst_zc_base_transform_get_context (base));
  KernelSettings s;
  {
    std::lock_guard < std::mutex > lk (priv->lock);
    s = priv->settings;
    priv->device = device;
    priv->origin = GST_ZC_KERNEL_ORIGIN_NONE;
    priv->nvrtc_compiles = 0;
    priv->build_ms = 0;
    priv->swaps = 0;
  }
  /* Compiled here, before any frame: never on the streaming thread */
  GstZcUserKernel *k = nullptr;
  if (!build (self, s, device, FALSE, &k)) {
    GST_BASE_TRANSFORM_CLASS (parent_class)->stop (trans);
    return FALSE;
  }
  priv->kernel = k;
  priv->frame_number = 0;
  priv->lost = false;
  std::lock_guard < std::mutex > lk (priv->lock);
  priv->started = true;
  return TRUE;
}

static gboolean
gst_zc_kernel_stop (GstBaseTransform * trans)
{
  auto *self = GST_ZC_KERNEL (trans);
  auto *priv = self->priv;
  auto *base = GST_ZC_BASE_TRANSFORM (trans);

  {
    std::lock_guard < std::mutex > lk (priv->lock);
    priv->started = false;
  }
  join_worker (self);
  /* the modules go only once the launches queued with them are done */
  if (!priv->lost && gst_zc_base_transform_get_stream (base))
    gst_zc_context_sync_stream (gst_zc_base_transform_get_context (base),
        gst_zc_base_transform_get_stream (base));
  gst_zc_user_kernel_free (priv->kernel);
  priv->kernel = nullptr;
  {
    std::lock_guard < std::mutex > lk (priv->lock);
    gst_zc_user_kernel_free (priv->pending);
    priv->pending = nullptr;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->stop (trans);
}

/* ---- per frame ------------------------------------------------------------------- */

/* In place when the element may (in-place), nobody else holds the frame,
 * and it is GPU memory of this device of the type downstream asked for */
static GstFlowReturn
gst_zc_kernel_prepare_output_buffer (GstBaseTransform * trans,
    GstBuffer * inbuf, GstBuffer ** outbuf)
{
  auto *self = GST_ZC_KERNEL (trans);
  auto *priv = self->priv;
  auto *base = GST_ZC_BASE_TRANSFORM (trans);

  GstFlowReturn ret = gst_zc_base_transform_check_input (base, inbuf);
  if (ret != GST_FLOW_OK)
    return ret;
  gboolean in_place;
  {
    std::lock_guard < std::mutex > lk (priv->lock);
    in_place = priv->in_place;
  }
  GstZcMemory *mem = gst_zc_buffer_gpu_memory (inbuf, priv->device);
  GstZcMemoryType want = gst_zc_base_transform_get_pool_memory_type (base);
  if (in_place && mem && (want == GST_ZC_MEMORY_TYPE_AUTO ||
          gst_zc_memory_get_memory_type (mem) == want) &&
      gst_zc_buffer_gpu_writable (inbuf)) {
    *outbuf = inbuf;
    return GST_FLOW_OK;
  }
  return GST_BASE_TRANSFORM_CLASS (parent_class)->prepare_output_buffer
      (trans, inbuf, outbuf);
}

/* The frame view a kernel gets of @buf, whose memory is at @base on the
 * device (zckernel.cuh) */
static void
frame_view (GstBuffer * buf, const GstVideoInfo * info, guint8 * base,
    ZcFrame * f)
{
  const GstVideoFormatInfo *finfo = info->finfo;
  memset (f, 0, sizeof (*f));
  f->n_planes = GST_VIDEO_INFO_N_PLANES (info);
  f->format = GST_VIDEO_INFO_FORMAT (info);
  f->width = GST_VIDEO_INFO_WIDTH (info);
  f->height = GST_VIDEO_INFO_HEIGHT (info);
  f->depth = GST_VIDEO_FORMAT_INFO_DEPTH (finfo, 0);
  f->full_range = info->colorimetry.range == GST_VIDEO_COLOR_RANGE_0_255;
  for (guint p = 0; p < (guint) f->n_planes && p < 4; p++) {
    gsize off, stride;
    gint comp[GST_VIDEO_MAX_COMPONENTS];
    gst_zc_video_plane_layout (buf, info, p, &off, &stride);
    gst_video_format_info_component (finfo, p, comp);
    f->plane[p].data = base + off;
    f->plane[p].stride = (int) stride;
    f->plane[p].width = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH (finfo, comp[0],
        f->width);
    f->plane[p].height = (int) gst_zc_video_plane_rows (info, p);
    f->plane[p].pixel_stride = GST_VIDEO_FORMAT_INFO_PSTRIDE (finfo, comp[0]);
  }
  guint n_comp = GST_VIDEO_FORMAT_INFO_N_COMPONENTS (finfo);
  for (guint c = 0; c < 4; c++) {
    f->comp_plane[c] = c < n_comp ? GST_VIDEO_FORMAT_INFO_PLANE (finfo, c) :
        -1;
    f->comp_offset[c] = c < n_comp ? GST_VIDEO_FORMAT_INFO_POFFSET (finfo, c) :
        -1;
  }
  f->has_alpha = GST_VIDEO_FORMAT_INFO_HAS_ALPHA (finfo) ? 1 : 0;
  gboolean eight = f->depth == 8;
  if (GST_VIDEO_FORMAT_INFO_IS_RGB (finfo) && eight && f->n_planes == 1) {
    f->family = ZC_FAMILY_RGB;
    /* RGBx-like: the padding byte is component 3, the one no other uses */
    if (n_comp == 3 && f->plane[0].pixel_stride == 4) {
      f->comp_plane[3] = 0;
      f->comp_offset[3] = 6 - f->comp_offset[0] - f->comp_offset[1] -
          f->comp_offset[2];
    }
  } else if (GST_VIDEO_INFO_FORMAT (info) == GST_VIDEO_FORMAT_GRAY8) {
    f->family = ZC_FAMILY_GRAY;
  } else if (GST_VIDEO_FORMAT_INFO_IS_YUV (finfo) && eight &&
      f->n_planes >= 2) {
    f->family = ZC_FAMILY_YUV;
    f->chroma_shift_x = GST_VIDEO_FORMAT_INFO_W_SUB (finfo, 1);
    f->chroma_shift_y = GST_VIDEO_FORMAT_INFO_H_SUB (finfo, 1);
  } else {
    f->family = ZC_FAMILY_OTHER;
  }
}

/* A kernel built meanwhile by the worker (@pending) replaces the running
 * one here, between two frames */
static void
swap_in (GstZcKernel * self, GstZcUserKernel * pending)
{
  auto *priv = self->priv;
  auto *base = GST_ZC_BASE_TRANSFORM (self);
  /* the old module goes once the launches queued with it are done: once
   * per swap, not per frame */
  gst_zc_context_sync_stream (gst_zc_base_transform_get_context (base),
      gst_zc_base_transform_get_stream (base));
  gst_zc_user_kernel_free (priv->kernel);
  priv->kernel = pending;
  GST_INFO_OBJECT (self, "new kernel from frame %" G_GUINT64_FORMAT " on",
      priv->frame_number);
}

static GstFlowReturn
gst_zc_kernel_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  auto *self = GST_ZC_KERNEL (trans);
  auto *priv = self->priv;
  auto *base = GST_ZC_BASE_TRANSFORM (trans);

  if (priv->lost) {
    GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
        ("A CUDA kernel faulted before: the CUDA context of this process is "
            "lost, restart the process to use the GPU again"), (NULL));
    return GST_FLOW_ERROR;
  }
  /* one snapshot of what the application may change meanwhile */
  ZcParams params;
  guint bw, bh;
  GstZcUserKernel *pending;
  {
    std::lock_guard < std::mutex > lk (priv->lock);
    params = priv->packed;
    bw = priv->block_w;
    bh = priv->block_h;
    pending = priv->pending;
    priv->pending = nullptr;
    if (pending)
      priv->swaps++;
  }
  if (pending)
    swap_in (self, pending);
  guint max_threads = gst_zc_user_kernel_max_threads (priv->kernel);
  if (bw * bh > max_threads) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS,
        ("block-width x block-height is %u threads; this kernel allows at "
            "most %u in a block", bw * bh, max_threads), (NULL));
    return GST_FLOW_ERROR;
  }

  gsize copied = 0;
  GstZcMemory *in_mem = gst_zc_buffer_gpu_memory (inbuf, priv->device);
  GstZcMemory *out_mem = gst_zc_buffer_gpu_memory (outbuf, priv->device);
  if (!out_mem) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("The output frame is not GPU memory of CUDA device %d", priv->device),
        ("%" GST_PTR_FORMAT, outbuf));
    return GST_FLOW_ERROR;
  }
  GstBuffer *src = inbuf;
  if (!in_mem) {
    /* a frame the kernel cannot reach (system memory, another device):
     * copied into the output frame, which the kernel then works on */
    GstFlowReturn ret = gst_zc_base_transform_copy_frame (base, inbuf, outbuf);
    if (ret != GST_FLOW_OK)
      return ret;
    copied = GST_VIDEO_INFO_SIZE (gst_zc_base_transform_get_out_info (base));
    src = outbuf;
    in_mem = out_mem;
  }

  GstZcKernelLaunch l = { };
  frame_view (src, gst_zc_base_transform_get_in_info (base),
      (guint8 *) gst_zc_memory_get_device_pointer (in_mem), &l.in);
  frame_view (outbuf, gst_zc_base_transform_get_out_info (base),
      (guint8 *) gst_zc_memory_get_device_pointer (out_mem), &l.out);
  l.info.frame_number = priv->frame_number;
  l.info.pts = GST_BUFFER_PTS_IS_VALID (inbuf) ?
      (long long) GST_BUFFER_PTS (inbuf) : -1;
  l.info.duration = GST_BUFFER_DURATION_IS_VALID (inbuf) ?
      (long long) GST_BUFFER_DURATION (inbuf) : -1;
  l.params = &params;
  l.in_mem = in_mem;
  l.out_mem = out_mem;
  l.block_w = bw;
  l.block_h = bh;

  gboolean sticky = FALSE;
  GstZcGpuResult r;
  if (!gst_zc_user_kernel_launch (priv->kernel, &l,
          gst_zc_base_transform_get_stream (base), &sticky, &r)) {
    if (sticky) {
      priv->lost = true;
      GST_ELEMENT_ERROR (self, RESOURCE, FAILED,
          ("The CUDA kernel faulted on the GPU (%s): the CUDA context of "
              "this process is lost, restart the process to use the GPU "
              "again", r.name),
          ("%s. Noticed at frame %" G_GUINT64_FORMAT " (%s); the fault is in "
              "this or an earlier frame: compute-sanitizer finds where.",
              r.detail, priv->frame_number, r.what));
    } else {
      gst_zc_post_gpu_error (GST_ELEMENT (self), r.what, r.name, r.detail);
    }
    return GST_FLOW_ERROR;
  }
  priv->frame_number++;
  if (!copied)
    gst_zc_base_transform_count_buffer (base, 0);
  return GST_FLOW_OK;
}

/* ---- GObject ------------------------------------------------------------------ */

static void
gst_zc_kernel_finalize (GObject * object)
{
  auto *self = GST_ZC_KERNEL (object);
  join_worker (self);
  if (self->priv->params)
    gst_structure_free (self->priv->params);
  delete self->priv;
  G_OBJECT_CLASS (parent_class)->finalize (object);
}

static void
gst_zc_kernel_class_init (GstZcKernelClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstZcBaseTransformClass *zc_class = GST_ZC_BASE_TRANSFORM_CLASS (klass);
  const GParamFlags flags = (GParamFlags) (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  gobject_class->set_property = gst_zc_kernel_set_property;
  gobject_class->get_property = gst_zc_kernel_get_property;
  gobject_class->finalize = gst_zc_kernel_finalize;

  g_object_class_install_property (gobject_class, PROP_LOCATION,
      g_param_spec_string ("location", "Location",
          "The kernel's file: CUDA C++ source (.cu, compiled with NVRTC), or "
          "precompiled .ptx, .cubin or .fatbin (no NVRTC needed). Setting it "
          "clears source; while playing, the new kernel replaces the running "
          "one between two frames once built", NULL, flags));
  g_object_class_install_property (gobject_class, PROP_SOURCE,
      g_param_spec_string ("source", "Source",
          "The kernel's CUDA C++ source text, compiled with NVRTC (used when "
          "location is not set; setting it clears location)", NULL, flags));
  g_object_class_install_property (gobject_class, PROP_ENTRY,
      g_param_spec_string ("entry", "Entry point",
          "Name of the kernel to run, declared with ZC_KERNEL (name)",
          DEFAULT_ENTRY, flags));
  g_object_class_install_property (gobject_class, PROP_COMPILE_OPTIONS,
      g_param_spec_string ("compile-options", "Compile options",
          "Extra NVRTC options, shell-quoted (e.g. \"-DLEVEL=3 "
          "--use_fast_math\"); -I directories also hold included files",
          NULL, flags));
  g_object_class_install_property (gobject_class, PROP_PARAMS,
      g_param_spec_boxed ("params", "Parameters",
          "Values for the kernel, e.g. \"p, level=(int)3, gain=(float)1.5\": "
          "int, uint, float and boolean fields take 4 bytes, double, gint64 "
          "and guint64 8, packed in field order at their natural alignment "
          "(docs/zckernel.md); a change takes the next frame, without "
          "recompiling", GST_TYPE_STRUCTURE, flags));
  g_object_class_install_property (gobject_class, PROP_BLOCK_WIDTH,
      g_param_spec_uint ("block-width", "Block width",
          "Threads per block along x (one thread per pixel)", 1, 1024,
          DEFAULT_BLOCK_WIDTH, flags));
  g_object_class_install_property (gobject_class, PROP_BLOCK_HEIGHT,
      g_param_spec_uint ("block-height", "Block height",
          "Threads per block along y", 1, 1024, DEFAULT_BLOCK_HEIGHT, flags));
  g_object_class_install_property (gobject_class, PROP_IN_PLACE,
      g_param_spec_boolean ("in-place", "In place",
          "Run on the input frame when it is writable (in and out are then "
          "the same memory); false always gives the kernel a separate output "
          "frame, for kernels that read other pixels than they write",
          DEFAULT_IN_PLACE, flags));

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class,
      "Zero-copy user CUDA kernel", "Filter/Effect/Video/Hardware",
      "Runs your own CUDA kernel on GPU-mapped frames, in place: source "
      "compiled with NVRTC for this GPU and cached, or a precompiled "
      ".ptx/.cubin/.fatbin; the kernel includes <gst/zerocopy/zckernel.cuh>, "
      "see docs/zckernel.md for the contract. Example: videotestsrc ! "
      "zcupload ! zckernel location=invert.cu ! zcdownload ! autovideosink",
      "gst-zerocopy maintainers");

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = FALSE;
  trans_class->start = GST_DEBUG_FUNCPTR (gst_zc_kernel_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_zc_kernel_stop);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_base_transform_propose_zc_input);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_zc_base_transform_decide_zc_output);
  trans_class->before_transform =
      GST_DEBUG_FUNCPTR (gst_zc_base_transform_sync_controlled_values);
  trans_class->prepare_output_buffer =
      GST_DEBUG_FUNCPTR (gst_zc_kernel_prepare_output_buffer);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_zc_kernel_transform);

  zc_class->add_stats = gst_zc_kernel_add_stats;
  zc_class->needs_gpu = TRUE;

  GST_DEBUG_CATEGORY_INIT (gst_zc_kernel_debug, "zckernel", 0,
      "zero-copy user CUDA kernel");
}

static void
gst_zc_kernel_init (GstZcKernel * self)
{
  self->priv = new GstZcKernelPrivate ();
}

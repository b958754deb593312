/* gst-zerocopy: zckernel, what every machine can check
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The element as gst-inspect-1.0 shows it (properties and their defaults,
 * pad caps, stats), its properties read back, and what starting it does on
 * this machine: without a GPU it refuses to start with an ERROR that says it
 * needs one (it has no CPU backend, so nothing would run the kernel); with
 * one, a small source kernel compiles and the pipeline plays to EOS. What
 * the kernels compute is tests/check/gpu/zckernel-gpu.cpp's part.
 */
#include "../zccheck.h"

/* Compiles with NVRTC; touches nothing (in place, every frame stays) */
static const gchar *const kNoopSource =
    "#include <gst/zerocopy/zckernel.cuh>\n"
    "ZC_KERNEL (process)\n" "{\n" "}\n";

static GParamSpec *
find_property (GstElement * e, const gchar * name, GType pspec_type)
{
  GParamSpec *ps = g_object_class_find_property (G_OBJECT_GET_CLASS (e), name);
  fail_unless (ps != NULL, "zckernel has no property %s", name);
  fail_unless (G_TYPE_CHECK_INSTANCE_TYPE (ps, pspec_type),
      "zckernel's %s is a %s, want a %s", name, G_PARAM_SPEC_TYPE_NAME (ps),
      g_type_name (pspec_type));
  const gchar *blurb = g_param_spec_get_blurb (ps);
  fail_unless (blurb != NULL && *blurb != '\0', "%s has no blurb", name);
  return ps;
}

GST_START_TEST (test_kernel_properties_have_documented_defaults)
{
  GstElement *e = gst_element_factory_make ("zckernel", NULL);
  fail_unless (e != NULL, "zckernel is not registered");

  for (const gchar * name: { "location", "source", "compile-options" }) {
    GParamSpec *ps = find_property (e, name, G_TYPE_PARAM_STRING);
    const gchar *def = G_PARAM_SPEC_STRING (ps)->default_value;
    fail_unless (def == NULL || *def == '\0', "%s defaults to '%s'", name,
        def);
    fail_unless ((ps->flags & G_PARAM_READWRITE) == G_PARAM_READWRITE, "%s",
        name);
  }
  GParamSpec *entry = find_property (e, "entry", G_TYPE_PARAM_STRING);
  fail_unless_equals_string (G_PARAM_SPEC_STRING (entry)->default_value,
      "process");
  GParamSpec *params = find_property (e, "params", G_TYPE_PARAM_BOXED);
  fail_unless (params->value_type == GST_TYPE_STRUCTURE,
      "params holds a %s", g_type_name (params->value_type));
  GParamSpec *bw = find_property (e, "block-width", G_TYPE_PARAM_UINT);
  fail_unless_equals_int (G_PARAM_SPEC_UINT (bw)->default_value, 32);
  GParamSpec *bh = find_property (e, "block-height", G_TYPE_PARAM_UINT);
  fail_unless_equals_int (G_PARAM_SPEC_UINT (bh)->default_value, 8);
  GParamSpec *ip = find_property (e, "in-place", G_TYPE_PARAM_BOOLEAN);
  fail_unless (G_PARAM_SPEC_BOOLEAN (ip)->default_value);
  /* the base class's, as on zcfilter */
  find_property (e, "device-id", G_TYPE_PARAM_INT);
  find_property (e, "memory-type", G_TYPE_PARAM_ENUM);
  find_property (e, "cpu-fallback", G_TYPE_PARAM_BOOLEAN);
  find_property (e, "stats", G_TYPE_PARAM_BOXED);

  /* and the objects themselves say the same */
  gchar *loc = NULL, *src = NULL, *ent = NULL;
  GstStructure *p = NULL;
  guint w = 0, h = 0;
  gboolean in_place = FALSE;
  g_object_get (e, "location", &loc, "source", &src, "entry", &ent,
      "params", &p, "block-width", &w, "block-height", &h, "in-place",
      &in_place, NULL);
  fail_unless (loc == NULL && src == NULL && p == NULL);
  fail_unless_equals_string (ent, "process");
  fail_unless (w == 32 && h == 8 && in_place);
  g_free (ent);
  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_kernel_description_points_to_the_contract)
{
  GstElementFactory *f = gst_element_factory_find ("zckernel");
  fail_unless (f != NULL, "zckernel is not registered");
  const gchar *desc = gst_element_factory_get_metadata (f,
      GST_ELEMENT_METADATA_DESCRIPTION);
  fail_unless (desc != NULL && strstr (desc, "zckernel.md") != NULL,
      "the description does not name the kernel contract "
      "(docs/zckernel.md): %s", desc);
  gst_object_unref (f);
}

GST_END_TEST;

/* Both pads: video/x-raw(memory:CUDAZeroCopy) in the 22 formats */
GST_START_TEST (test_kernel_pads_take_every_format_in_zero_copy_memory)
{
  GstElementFactory *f = gst_element_factory_find ("zckernel");
  fail_unless (f != NULL);
  const GList *templates = gst_element_factory_get_static_pad_templates (f);
  fail_unless_equals_int (g_list_length ((GList *) templates), 2);
  for (const GList * l = templates; l; l = l->next) {
    auto *t = (GstStaticPadTemplate *) l->data;
    GstCaps *caps = gst_static_caps_get (&t->static_caps);
    fail_unless_equals_int (gst_caps_get_size (caps), 1);
    GstCapsFeatures *features = gst_caps_get_features (caps, 0);
    fail_unless (gst_caps_features_contains (features,
            GST_CAPS_FEATURE_MEMORY_CUDA_ZERO_COPY), "%s: %" GST_PTR_FORMAT,
        t->name_template, caps);
    const GValue *formats =
        gst_structure_get_value (gst_caps_get_structure (caps, 0), "format");
    fail_unless (formats && GST_VALUE_HOLDS_LIST (formats));
    fail_unless_equals_int (gst_value_list_get_size (formats),
        G_N_ELEMENTS (zc_filter_formats));
    for (GstVideoFormat fmt:zc_filter_formats) {
      const gchar *name = gst_video_format_to_string (fmt);
      gboolean found = FALSE;
      for (guint i = 0; i < gst_value_list_get_size (formats); i++)
        found |= g_strcmp0 (g_value_get_string (gst_value_list_get_value
                (formats, i)), name) == 0;
      fail_unless (found, "%s pad does not take %s", t->name_template, name);
    }
    gst_caps_unref (caps);
  }
  gst_object_unref (f);
}

GST_END_TEST;

GST_START_TEST (test_kernel_location_and_source_replace_each_other)
{
  GstElement *e = gst_element_factory_make ("zckernel", NULL);
  gchar *loc = NULL, *src = NULL;

  g_object_set (e, "location", "/some/kernel.cu", NULL);
  g_object_set (e, "source", kNoopSource, NULL);
  g_object_get (e, "location", &loc, "source", &src, NULL);
  fail_unless (loc == NULL, "location kept after setting source: %s", loc);
  fail_unless_equals_string (src, kNoopSource);
  g_free (src);

  g_object_set (e, "location", "/some/kernel.cubin", NULL);
  g_object_get (e, "location", &loc, "source", &src, NULL);
  fail_unless (src == NULL, "source kept after setting location");
  fail_unless_equals_string (loc, "/some/kernel.cubin");
  g_free (loc);
  gst_object_unref (e);
}

GST_END_TEST;

GST_START_TEST (test_kernel_params_read_back_as_set)
{
  GstElement *e = gst_element_factory_make ("zckernel", NULL);
  /* GStreamer's parser knows int64 fields as (gint64), not (int64) */
  GstStructure *want = gst_structure_from_string ("p, level=(int)-3, "
      "gain=(float)0.5, on=(boolean)true, scale=(double)2.25, "
      "big=(guint64)18446744073709551615, n=(uint)7, t=(gint64)-5", NULL);
  fail_unless (want != NULL);
  g_object_set (e, "params", want, NULL);
  GstStructure *got = NULL;
  g_object_get (e, "params", &got, NULL);
  fail_unless (got && gst_structure_is_equal (got, want),
      "params read back as %" GST_PTR_FORMAT, got);
  gst_structure_free (got);

  g_object_set (e, "params", NULL, NULL);
  g_object_get (e, "params", &got, NULL);
  fail_unless (got == NULL, "params not cleared: %" GST_PTR_FORMAT, got);
  gst_structure_free (want);
  gst_object_unref (e);
}

GST_END_TEST;

/* docs/zckernel.md: another field type is refused with a WARNING and the
 * previous params stay */
GST_START_TEST (test_kernel_params_of_other_types_are_refused)
{
  GstElement *pipeline = gst_pipeline_new (NULL);
  GstElement *e = gst_element_factory_make ("zckernel", NULL);
  gst_bin_add (GST_BIN (pipeline), e);
  GstStructure *good = gst_structure_from_string ("p, level=(int)3", NULL);
  GstStructure *bad = gst_structure_from_string ("p, level=(int)4, "
      "name=(string)hello", NULL);
  g_object_set (e, "params", good, NULL);
  g_object_set (e, "params", bad, NULL);

  GstStructure *got = NULL;
  g_object_get (e, "params", &got, NULL);
  fail_unless (got && gst_structure_is_equal (got, good),
      "a string field was taken: %" GST_PTR_FORMAT, got);
  GstBus *bus = gst_element_get_bus (pipeline);
  GstMessage *m = gst_bus_pop_filtered (bus, GST_MESSAGE_WARNING);
  fail_unless (m != NULL, "no WARNING for a string field in params");
  std::string text = zc_test_message_text (m);
  fail_unless (zc_test_contains_nocase (text, "name"),
      "the WARNING does not name the field: %s", text.c_str ());
  gst_message_unref (m);
  gst_object_unref (bus);
  gst_structure_free (got);
  gst_structure_free (bad);
  gst_structure_free (good);
  gst_object_unref (pipeline);
}

GST_END_TEST;

GST_START_TEST (test_kernel_stats_have_the_kernel_fields)
{
  GstElement *e = gst_element_factory_make ("zckernel", NULL);
  GstStructure *s = zc_test_get_stats (e);
  gchar *str = gst_structure_to_string (s);
  guint64 u = 1;
  gdouble ms = -1;
  fail_unless_equals_string (gst_structure_get_string (s, "kernel-origin"),
      "none");
  fail_unless (gst_structure_get_uint64 (s, "nvrtc-compiles", &u) && u == 0,
      "%s", str);
  fail_unless (gst_structure_get_uint64 (s, "kernel-swaps", &u) && u == 0,
      "%s", str);
  fail_unless (gst_structure_get_double (s, "kernel-build-ms", &ms), "%s",
      str);
  /* the base class's, as every zc element has them */
  for (const gchar * f: { "buffers", "zero-copy-buffers", "copied-buffers",
        "bytes-copied", "bytes-staged" })
    fail_unless (gst_structure_get_uint64 (s, f, &u), "no %s: %s", f, str);
  g_free (str);
  gst_structure_free (s);
  gst_object_unref (e);
}

GST_END_TEST;

static GstPadProbeReturn
count_buffer (GstPad *, GstPadProbeInfo *, gpointer user_data)
{
  g_atomic_int_inc ((gint *) user_data);
  return GST_PAD_PROBE_OK;
}

/* Without a GPU: an ERROR from zckernel at start, nothing passes (no
 * passthrough, no CPU fallback). With one: the same pipeline plays. */
GST_START_TEST (test_kernel_start_needs_a_gpu)
{
  GstElement *p = zc_test_parse ("videotestsrc num-buffers=2 ! "
      "video/x-raw,format=RGBA,width=64,height=48 ! zcupload ! "
      "zckernel name=k ! zcdownload ! fakesink");
  GstElement *k = zc_test_get_by_name (p, "k");
  g_object_set (k, "source", kNoopSource, NULL);
  gint passed = 0;
  GstPad *src = gst_element_get_static_pad (k, "src");
  gst_pad_add_probe (src, GST_PAD_PROBE_TYPE_BUFFER, count_buffer, &passed,
      NULL);
  gst_object_unref (src);

  ZcBusLog log;
  zc_test_play (p, log, 60 * GST_SECOND);
  if (!zc_test_have_gpu ()) {
    fail_unless (!log.errors.empty (), "zckernel started without a GPU: %s",
        log.describe ().c_str ());
    GstMessage *m = log.errors[0];
    fail_unless (GST_MESSAGE_SRC (m) == GST_OBJECT (k),
        "the ERROR came from %s, not zckernel: %s",
        GST_OBJECT_NAME (GST_MESSAGE_SRC (m)), log.describe ().c_str ());
    std::string text = zc_test_message_text (m);
    fail_unless (zc_test_contains_nocase (text, "needs a CUDA"),
        "the ERROR does not say zckernel needs a CUDA GPU: %s", text.c_str ());
    for (GstMessage * w:log.warnings)
      fail_if (GST_MESSAGE_SRC (w) == GST_OBJECT (k),
          "zckernel warned (a fallback?) instead of failing: %s",
          log.describe ().c_str ());
    fail_unless_equals_int (g_atomic_int_get (&passed), 0);
  } else {
    fail_unless (log.eos && log.errors.empty (), "%s",
        log.describe ().c_str ());
    fail_unless_equals_int (g_atomic_int_get (&passed), 2);
    fail_unless_equals_uint64 (zc_test_stat (k, "buffers"), 2);
    fail_if (zc_test_stat_string (k, "kernel-origin") == "none", "%s",
        zc_test_stats_to_string (k).c_str ());
  }
  gst_element_set_state (p, GST_STATE_NULL);
  gst_object_unref (k);
  gst_object_unref (p);
}

GST_END_TEST;

static Suite *
zckernel_suite (void)
{
  Suite *s = suite_create ("zckernel");
  TCase *tc = zc_test_case ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_kernel_properties_have_documented_defaults);
  tcase_add_test (tc, test_kernel_description_points_to_the_contract);
  tcase_add_test (tc, test_kernel_pads_take_every_format_in_zero_copy_memory);
  tcase_add_test (tc, test_kernel_location_and_source_replace_each_other);
  tcase_add_test (tc, test_kernel_params_read_back_as_set);
  tcase_add_test (tc, test_kernel_params_of_other_types_are_refused);
  tcase_add_test (tc, test_kernel_stats_have_the_kernel_fields);
  tcase_add_test (tc, test_kernel_start_needs_a_gpu);
  return s;
}

/* A GPU host compiles the kernel of test_kernel_start_needs_a_gpu: into a
 * cache of this run, not the user's */
int
main (int argc, char **argv)
{
  gchar *cache = g_dir_make_tmp ("zckernel-cache-XXXXXX", NULL);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  gst_check_init (&argc, &argv);
  int ret = gst_check_run_suite (zckernel_suite (), "zckernel", __FILE__);
  gchar *argv_rm[] = { (gchar *) "rm", (gchar *) "-rf", cache, NULL };
  g_spawn_sync (NULL, argv_rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
      NULL, NULL, NULL);
  g_free (cache);
  return ret;
}

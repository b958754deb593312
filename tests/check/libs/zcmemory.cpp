/* gst-zerocopy: allocator, memory, buffer pool and context API
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs on either backend: without a GPU the memory is "system", with one it
 * is what "auto" resolves to (mapped on discrete GPUs).
 */
#include "../zccheck.h"

#include <set>

/* ---------------------------------------------------------------------- */
/* Context                                                                */
/* ---------------------------------------------------------------------- */

GST_START_TEST (test_context_reports_backend)
{
  GstZcContext *ctx = zc_test_new_context ();

  if (zc_test_have_gpu ()) {
    fail_unless (gst_zc_context_has_gpu (ctx));
    fail_unless (gst_zc_context_get_device_id (ctx) >= 0);
    fail_unless (gst_zc_context_get_no_gpu_reason (ctx) == NULL);
    fail_if (g_str_equal (gst_zc_context_get_device_name (ctx), "CPU"));
    GstZcMemoryType t = gst_zc_context_resolve_memory_type (ctx,
        GST_ZC_MEMORY_TYPE_AUTO);
    fail_unless (t == GST_ZC_MEMORY_TYPE_MAPPED
        || t == GST_ZC_MEMORY_TYPE_MANAGED, "auto resolved to %d", t);
    if (!gst_zc_context_is_integrated (ctx))
      fail_unless_equals_int (t, GST_ZC_MEMORY_TYPE_MAPPED);
  } else {
    fail_if (gst_zc_context_has_gpu (ctx));
    fail_unless_equals_int (gst_zc_context_get_device_id (ctx), -1);
    fail_unless_equals_string (gst_zc_context_get_device_name (ctx), "CPU");
    const gchar *reason = gst_zc_context_get_no_gpu_reason (ctx);
    fail_unless (reason != NULL && reason[0] != '\0');
    fail_unless_equals_int (gst_zc_context_resolve_memory_type (ctx,
            GST_ZC_MEMORY_TYPE_AUTO), GST_ZC_MEMORY_TYPE_SYSTEM);
  }
  /* Explicit types are returned as they are */
  fail_unless_equals_int (gst_zc_context_resolve_memory_type (ctx,
          GST_ZC_MEMORY_TYPE_SYSTEM), GST_ZC_MEMORY_TYPE_SYSTEM);
  fail_unless_equals_int (gst_zc_context_resolve_memory_type (ctx,
          GST_ZC_MEMORY_TYPE_MANAGED), GST_ZC_MEMORY_TYPE_MANAGED);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_allocator_new_checks_memory_type_against_device)
{
  GstZcContext *ctx = zc_test_new_context ();

  if (zc_test_have_gpu ()) {
    /* The GPU counterpart: every type can be allocated */
    GstZcMemoryType types[] = { GST_ZC_MEMORY_TYPE_AUTO,
      GST_ZC_MEMORY_TYPE_MAPPED, GST_ZC_MEMORY_TYPE_MANAGED,
      GST_ZC_MEMORY_TYPE_SYSTEM
    };
    for (GstZcMemoryType t:types) {
      GstAllocator *a = gst_zc_allocator_new (ctx, t);
      fail_unless (a != NULL, "no allocator for %s",
          gst_zc_memory_type_to_string (t));
      gst_object_unref (a);
    }
    fail_unless (gst_zc_context_can_map_host_memory (ctx));
  } else {
    /* Without a GPU only system memory, whichever way it is asked for */
    fail_unless (gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_MAPPED) == NULL);
    fail_unless (gst_zc_allocator_new (ctx,
            GST_ZC_MEMORY_TYPE_MANAGED) == NULL);
    fail_unless (gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_DEVICE) == NULL);
    fail_unless (gst_zc_buffer_pool_new (ctx,
            GST_ZC_MEMORY_TYPE_MANAGED) == NULL);
    fail_if (gst_zc_context_can_map_host_memory (ctx));
    GstAllocator *a = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
    fail_unless (a != NULL);
    fail_unless_equals_int (gst_zc_allocator_get_memory_type
        (GST_ZC_ALLOCATOR (a)), GST_ZC_MEMORY_TYPE_SYSTEM);
    gst_object_unref (a);
  }
  gst_object_unref (ctx);
}

GST_END_TEST;

/* Transfer full: each call makes an object of its own, which the caller
 * holds alone, and which holds the context */
GST_START_TEST (test_allocator_new_returns_new_object)
{
  GstZcContext *ctx = zc_test_new_context ();
  GstAllocator *a = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
  GstAllocator *b = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);

  fail_unless (a != NULL && b != NULL);
  fail_if (a == b);
  fail_if (g_object_is_floating (a));
  ASSERT_OBJECT_REFCOUNT (a, "allocator", 1);
  ASSERT_OBJECT_REFCOUNT (b, "allocator", 1);
  fail_unless (gst_zc_allocator_get_context (GST_ZC_ALLOCATOR (a)) == ctx);

  /* the context lives while an allocator does */
  gst_object_unref (ctx);
  GstMemory *mem = gst_allocator_alloc (a, 4096, NULL);
  fail_unless (mem != NULL);
  fail_unless (gst_zc_memory_get_context ((GstZcMemory *) mem) ==
      gst_zc_allocator_get_context (GST_ZC_ALLOCATOR (a)));
  gst_memory_unref (mem);
  gst_object_unref (b);
  gst_object_unref (a);
}

GST_END_TEST;

GST_START_TEST (test_context_nonexistent_device)
{
  if (zc_test_have_gpu ()) {
    gint bad = zc_test_nonexistent_device ();
    GError *err = NULL;
    GstZcContext *ctx = gst_zc_context_new (bad, &err);
    fail_unless (ctx == NULL);
    fail_unless (err != NULL);
    fail_unless (err->domain == GST_RESOURCE_ERROR);
    gchar *num = g_strdup_printf ("%d", bad);
    fail_unless (strstr (err->message, num) != NULL,
        "error does not name device %d: %s", bad, err->message);
    g_free (num);
    g_error_free (err);
  } else {
    /* Without any GPU a device index means nothing: the CPU backend */
    GError *err = NULL;
    GstZcContext *ctx = gst_zc_context_new (7, &err);
    fail_unless (ctx != NULL && err == NULL);
    fail_if (gst_zc_context_has_gpu (ctx));
    gst_object_unref (ctx);
  }
}

GST_END_TEST;

GST_START_TEST (test_context_travels_in_gst_context)
{
  GstZcContext *ctx = zc_test_new_context ();
  GstContext *gctx = gst_context_new_zc_context (ctx);

  fail_unless_equals_string (gst_context_get_context_type (gctx),
      GST_ZC_CONTEXT_TYPE);
  fail_unless_equals_string (GST_ZC_CONTEXT_TYPE, "gst.zerocopy.context");
  fail_unless (gst_context_is_persistent (gctx));

  GstZcContext *back = NULL;
  fail_unless (gst_context_get_zc_context (gctx, &back));
  fail_unless (back == ctx);
  gst_object_unref (back);

  /* Another type is not ours */
  GstContext *other = gst_context_new ("gst.other.context", TRUE);
  back = NULL;
  fail_if (gst_context_get_zc_context (other, &back));
  fail_unless (back == NULL);
  gst_context_unref (other);

  /* set_context: taken when the element has none, for any device */
  GstElement *el = gst_element_factory_make ("identity", NULL);
  fail_unless (el != NULL);
  GstZcContext *mine = NULL;
  fail_unless (gst_zc_handle_set_context (el, gctx, -1, &mine));
  fail_unless (mine == ctx);
  /* ... and not again once it has one */
  fail_if (gst_zc_handle_set_context (el, gctx, -1, &mine));
  gst_object_unref (mine);

  /* ... nor for another device than the element's; but a CPU-backend
   * context (only made where there is no GPU) serves any device-id, so
   * that the elements of one pipeline share it */
  mine = NULL;
  gint other_dev = gst_zc_context_get_device_id (ctx) + 1;
  if (gst_zc_context_has_gpu (ctx)) {
    fail_if (gst_zc_handle_set_context (el, gctx, other_dev, &mine));
    fail_unless (mine == NULL);
  } else {
    fail_unless (gst_zc_handle_set_context (el, gctx, other_dev, &mine));
    fail_unless (mine == ctx);
    gst_clear_object (&mine);
  }

  /* Context query answered with the element's context */
  GstQuery *q = gst_query_new_context (GST_ZC_CONTEXT_TYPE);
  fail_if (gst_zc_handle_context_query (el, q, NULL));
  fail_unless (gst_zc_handle_context_query (el, q, ctx));
  GstContext *answer = NULL;
  gst_query_parse_context (q, &answer);
  fail_unless (answer != NULL);
  back = NULL;
  fail_unless (gst_context_get_zc_context (answer, &back));
  fail_unless (back == ctx);
  gst_object_unref (back);
  gst_query_unref (q);

  q = gst_query_new_context ("gst.other.context");
  fail_if (gst_zc_handle_context_query (el, q, ctx));
  gst_query_unref (q);

  gst_object_unref (el);
  gst_context_unref (gctx);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_memory_type_enum_nicks)
{
  GEnumClass *klass = (GEnumClass *) g_type_class_ref (GST_TYPE_ZC_MEMORY_TYPE);
  const gchar *nicks[] = { "auto", "mapped", "managed", "system" };
  GstZcMemoryType values[] = { GST_ZC_MEMORY_TYPE_AUTO,
    GST_ZC_MEMORY_TYPE_MAPPED, GST_ZC_MEMORY_TYPE_MANAGED,
    GST_ZC_MEMORY_TYPE_SYSTEM
  };
  for (guint i = 0; i < G_N_ELEMENTS (nicks); i++) {
    GEnumValue *v = g_enum_get_value_by_nick (klass, nicks[i]);
    fail_unless (v != NULL, "no nick %s", nicks[i]);
    fail_unless_equals_int (v->value, values[i]);
    fail_unless_equals_string (gst_zc_memory_type_to_string (values[i]),
        nicks[i]);
  }
  g_type_class_unref (klass);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* Allocator and memory                                                   */
/* ---------------------------------------------------------------------- */

GST_START_TEST (test_allocator_honours_params)
{
  GstZcContext *ctx = zc_test_new_context ();
  GstAllocator *alloc = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
  fail_unless (alloc != NULL);
  fail_unless_equals_string (alloc->mem_type, GST_ZC_ALLOCATOR_NAME);

  const gsize aligns[] = { 0, 7, 15, 63, 255, 1023, 4095 };
  const gsize prefixes[] = { 0, 1, 64, 100 };
  const gsize paddings[] = { 0, 3, 32 };
  const gsize sizes[] = { 1, 1000, 65537 };

  for (gsize align:aligns) {
    for (gsize prefix:prefixes) {
      for (gsize padding:paddings) {
        for (gsize size:sizes) {
          GstAllocationParams params;
          gst_allocation_params_init (&params);
          params.align = align;
          params.prefix = prefix;
          params.padding = padding;
          params.flags = (GstMemoryFlags) (GST_MEMORY_FLAG_ZERO_PREFIXED |
              GST_MEMORY_FLAG_ZERO_PADDED);
          GstMemory *mem = gst_allocator_alloc (alloc, size, &params);
          fail_unless (mem != NULL);
          fail_unless (gst_is_zc_memory (mem));
          fail_unless (gst_memory_is_type (mem, GST_ZC_ALLOCATOR_NAME));
          fail_unless_equals_uint64 (mem->size, size);
          fail_unless_equals_uint64 (mem->offset, prefix);
          fail_unless (mem->maxsize >= prefix + size + padding,
              "maxsize %" G_GSIZE_FORMAT " < %" G_GSIZE_FORMAT, mem->maxsize,
              prefix + size + padding);
          fail_unless (GST_MEMORY_FLAG_IS_SET (mem,
                  GST_MEMORY_FLAG_ZERO_PREFIXED));
          fail_unless (GST_MEMORY_FLAG_IS_SET (mem,
                  GST_MEMORY_FLAG_ZERO_PADDED));

          GstMapInfo map;
          fail_unless (gst_memory_map (mem, &map, GST_MAP_READWRITE));
          fail_unless_equals_uint64 (map.size, size);
          fail_unless (((guintptr) map.data & align) == 0,
              "data %p not aligned to %" G_GSIZE_FORMAT, map.data, align + 1);
          fail_unless (map.data == gst_zc_memory_get_host_pointer ((GstZcMemory
                      *) mem));
          for (gsize i = 1; i <= prefix; i++)
            fail_unless (map.data[-(gssize) i] == 0, "prefix byte not zero");
          for (gsize i = 0; i < padding; i++)
            fail_unless (map.data[size + i] == 0, "padding byte not zero");
          /* The whole block is ours to write */
          memset (map.data - prefix, 0xa5, prefix + size + padding);
          gst_memory_unmap (mem, &map);
          gst_memory_unref (mem);
        }
      }
    }
  }
  gst_object_unref (alloc);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_bytes_in_use_counts_every_block)
{
  GstZcContext *ctx = zc_test_new_context ();
  GstAllocator *alloc = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
  const GstZcMemoryType type =
      gst_zc_allocator_get_memory_type (GST_ZC_ALLOCATOR (alloc));
  const GstZcMemoryType other = type == GST_ZC_MEMORY_TYPE_DEVICE ?
      GST_ZC_MEMORY_TYPE_SYSTEM : GST_ZC_MEMORY_TYPE_DEVICE;
  const guint64 before = gst_zc_memory_get_bytes_in_use (type);
  const guint64 other_before = gst_zc_memory_get_bytes_in_use (other);

  GstMemory *a = gst_allocator_alloc (alloc, 100000, NULL);
  GstMemory *b = gst_allocator_alloc (alloc, 50000, NULL);
  fail_unless (a != NULL && b != NULL);
  /* a block is the memory's maxsize and the alignment's slack */
  const guint64 both = gst_zc_memory_get_bytes_in_use (type) - before;
  fail_unless (both >= a->maxsize + b->maxsize && both <= a->maxsize +
      b->maxsize + 2 * 4096, "%" G_GUINT64_FORMAT " bytes counted for %"
      G_GSIZE_FORMAT " + %" G_GSIZE_FORMAT, both, a->maxsize, b->maxsize);
  /* a view of a block is not a block */
  GstMemory *view = gst_memory_share (a, 10, 1000);
  fail_unless_equals_uint64 (gst_zc_memory_get_bytes_in_use (type) - before,
      both);
  gst_memory_unref (view);
  fail_unless_equals_uint64 (gst_zc_memory_get_bytes_in_use (other),
      other_before);

  gst_memory_unref (a);
  const guint64 left = gst_zc_memory_get_bytes_in_use (type) - before;
  fail_unless (left >= b->maxsize && left < both, "%" G_GUINT64_FORMAT
      " bytes left of %" G_GUINT64_FORMAT, left, both);
  gst_memory_unref (b);
  fail_unless_equals_uint64 (gst_zc_memory_get_bytes_in_use (type), before);
  fail_unless_equals_uint64 (gst_zc_memory_get_bytes_in_use
      (GST_ZC_MEMORY_TYPE_AUTO), 0);
  gst_object_unref (alloc);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_allocator_memory_type_and_pointers)
{
  GstZcContext *ctx = zc_test_new_context ();
  GstAllocator *alloc = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
  GstZcMemoryType want = gst_zc_context_resolve_memory_type (ctx,
      GST_ZC_MEMORY_TYPE_AUTO);
  fail_unless_equals_int (gst_zc_allocator_get_memory_type (GST_ZC_ALLOCATOR
          (alloc)), want);
  fail_unless (gst_zc_allocator_get_context (GST_ZC_ALLOCATOR (alloc)) == ctx);

  GstMemory *mem = gst_allocator_alloc (alloc, 4096, NULL);
  auto *zmem = (GstZcMemory *) mem;
  fail_unless_equals_int (gst_zc_memory_get_memory_type (zmem), want);
  fail_unless (gst_zc_memory_get_context (zmem) == ctx);
  fail_unless_equals_int (gst_zc_memory_get_device_id (zmem),
      gst_zc_context_get_device_id (ctx));
  fail_unless (gst_zc_memory_get_device_pointer (zmem) != NULL);
  fail_unless (gst_zc_memory_get_host_pointer (zmem) != NULL);
  if (!zc_test_have_gpu ())
    fail_unless (gst_zc_memory_get_device_pointer (zmem) ==
        gst_zc_memory_get_host_pointer (zmem));

  GstBuffer *buf = gst_buffer_new ();
  gst_buffer_append_memory (buf, mem);
  fail_unless (gst_zc_buffer_is_zc (buf, ctx));
  gst_buffer_unref (buf);

  /* System memory is not zero-copy memory */
  buf = gst_buffer_new_allocate (NULL, 4096, NULL);
  fail_if (gst_is_zc_memory (gst_buffer_peek_memory (buf, 0)));
  fail_if (gst_zc_buffer_is_zc (buf, ctx));
  gst_buffer_unref (buf);

  gst_object_unref (alloc);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_memory_share_and_copy)
{
  GstZcContext *ctx = zc_test_new_context ();
  GstAllocator *alloc = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
  GstMemory *mem = gst_allocator_alloc (alloc, 1000, NULL);
  GstMapInfo map;
  fail_unless (gst_memory_map (mem, &map, GST_MAP_WRITE));
  for (gsize i = 0; i < map.size; i++)
    map.data[i] = (guint8) (i * 7);
  gst_memory_unmap (mem, &map);

  GstMemory *sub = gst_memory_share (mem, 10, 100);
  fail_unless (sub != NULL && gst_is_zc_memory (sub));
  fail_unless_equals_uint64 (sub->size, 100);
  fail_unless ((guint8 *) gst_zc_memory_get_host_pointer ((GstZcMemory *) sub)
      == (guint8 *) gst_zc_memory_get_host_pointer ((GstZcMemory *) mem) + 10);
  fail_unless ((guint8 *) gst_zc_memory_get_device_pointer ((GstZcMemory *)
          sub) ==
      (guint8 *) gst_zc_memory_get_device_pointer ((GstZcMemory *) mem) + 10);
  fail_unless (gst_memory_map (sub, &map, GST_MAP_READ));
  for (gsize i = 0; i < map.size; i++)
    fail_unless (map.data[i] == (guint8) ((i + 10) * 7));
  gst_memory_unmap (sub, &map);

  GstMemory *copy = gst_memory_copy (mem, 0, -1);
  fail_unless (copy != NULL);
  fail_unless_equals_uint64 (copy->size, 1000);
  fail_unless (gst_memory_map (copy, &map, GST_MAP_READ));
  for (gsize i = 0; i < map.size; i++)
    fail_unless (map.data[i] == (guint8) (i * 7));
  gst_memory_unmap (copy, &map);

  gst_memory_unref (copy);
  gst_memory_unref (sub);
  gst_memory_unref (mem);
  gst_object_unref (alloc);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_allocator_outlives_its_memories)
{
  ZcLeakCheck leaks;
  GstZcContext *ctx = zc_test_new_context ();
  GstAllocator *alloc = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
  GstMemory *mem = gst_allocator_alloc (alloc, 1 << 20, NULL);
  /* The memory holds what it needs: the application may drop the rest */
  gst_object_unref (alloc);
  gst_object_unref (ctx);

  GstMapInfo map;
  fail_unless (gst_memory_map (mem, &map, GST_MAP_WRITE));
  memset (map.data, 0x5a, map.size);
  gst_memory_unmap (mem, &map);
  gst_memory_unref (mem);

  std::string alive = leaks.alive_objects ();
  fail_unless (alive.empty (), "left alive:\n%s", alive.c_str ());
}

GST_END_TEST;

GST_START_TEST (test_allocator_registered_by_name)
{
  gst_zc_memory_init_once ();
  gst_zc_memory_init_once ();   /* idempotent */

  GstAllocator *alloc = gst_allocator_find (GST_ZC_ALLOCATOR_NAME);
  fail_unless (alloc != NULL, "no allocator registered as %s",
      GST_ZC_ALLOCATOR_NAME);
  fail_unless (GST_IS_ZC_ALLOCATOR (alloc));

  GstMemory *mem = gst_allocator_alloc (alloc, 4096, NULL);
  fail_unless (mem != NULL && gst_is_zc_memory (mem));
  GstZcMemoryType t = gst_zc_memory_get_memory_type ((GstZcMemory *) mem);
  fail_if (t == GST_ZC_MEMORY_TYPE_AUTO);
  if (zc_test_have_gpu ())
    fail_if (t == GST_ZC_MEMORY_TYPE_SYSTEM);
  else
    fail_unless_equals_int (t, GST_ZC_MEMORY_TYPE_SYSTEM);
  GstMapInfo map;
  fail_unless (gst_memory_map (mem, &map, GST_MAP_WRITE));
  memset (map.data, 1, map.size);
  gst_memory_unmap (mem, &map);
  gst_memory_unref (mem);

  GstAllocator *again = gst_allocator_find (GST_ZC_ALLOCATOR_NAME);
  fail_unless (again == alloc);
  gst_object_unref (again);
  gst_object_unref (alloc);
}

GST_END_TEST;

/* ---------------------------------------------------------------------- */
/* Buffer pool                                                            */
/* ---------------------------------------------------------------------- */

static GstBufferPool *
configured_pool (GstZcContext * ctx, GstVideoFormat format, gint w, gint h,
    guint min, guint max, gboolean video_meta, GstVideoInfo * info_out)
{
  GstBufferPool *pool = gst_zc_buffer_pool_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
  fail_unless (pool != NULL);
  fail_unless (GST_IS_ZC_BUFFER_POOL (pool));
  GstCaps *caps = zc_test_raw_caps (format, w, h);
  GstVideoInfo info;
  fail_unless (gst_video_info_from_caps (&info, caps));
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, info.size, min, max);
  if (video_meta) {
    fail_unless (gst_buffer_pool_has_option (pool,
            GST_BUFFER_POOL_OPTION_VIDEO_META));
    gst_buffer_pool_config_add_option (config,
        GST_BUFFER_POOL_OPTION_VIDEO_META);
  }
  if (!gst_buffer_pool_set_config (pool, config)) {
    config = gst_buffer_pool_get_config (pool);
    fail_unless (gst_buffer_pool_config_validate_params (config, caps,
            info.size, min, max));
    fail_unless (gst_buffer_pool_set_config (pool, config));
  }
  gst_caps_unref (caps);
  if (info_out)
    *info_out = info;
  return pool;
}

GST_START_TEST (test_pool_preallocates_min_buffers_and_reuses)
{
  GstZcContext *ctx = zc_test_new_context ();
  const guint min = 4, max = 6;
  GstBufferPool *pool = configured_pool (ctx, GST_VIDEO_FORMAT_RGBA, 64, 48,
      min, max, TRUE, NULL);
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));

  /* The memories handed out the first time around, up to max */
  std::set < GstMemory * >seen;
  std::vector < GstBuffer * >held;
  for (guint i = 0; i < max; i++) {
    GstBuffer *b = NULL;
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
        GST_FLOW_OK);
    fail_unless (gst_zc_buffer_is_zc (b, ctx));
    seen.insert (gst_buffer_peek_memory (b, 0));
    held.push_back (b);
  }
  fail_unless_equals_int (seen.size (), max);

  /* max reached: no more without waiting */
  GstBufferPoolAcquireParams dontwait = { };
  dontwait.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  GstBuffer *extra = NULL;
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &extra,
          &dontwait), GST_FLOW_EOS);
  for (GstBuffer * b:held)
    gst_buffer_unref (b);
  held.clear ();

  /* Steady state: one at a time, and all at once, over and over: only the
   * same memories come back, nothing is allocated per frame. */
  for (int round = 0; round < 200; round++) {
    guint n = (round % 2) ? max : 1;
    for (guint i = 0; i < n; i++) {
      GstBuffer *b = NULL;
      fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
          GST_FLOW_OK);
      GstMemory *m = gst_buffer_peek_memory (b, 0);
      fail_unless (seen.count (m) == 1, "round %d: new memory %p", round, m);
      /* write it, as a producer would: must not make the pool drop it */
      GstMapInfo map;
      fail_unless (gst_buffer_map (b, &map, GST_MAP_WRITE));
      map.data[0] = (guint8) round;
      gst_buffer_unmap (b, &map);
      held.push_back (b);
    }
    for (GstBuffer * b:held)
      gst_buffer_unref (b);
    held.clear ();
  }

  fail_unless (gst_buffer_pool_set_active (pool, FALSE));
  gst_object_unref (pool);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_pool_preallocates_min_buffers_at_activation)
{
  /* The pool's min buffers exist as soon as it is active: the first min
   * acquisitions allocate nothing. Watched through the leaks tracer's
   * activity tracking (GstMemory is a mini object). */
  GstTracer *tracer = zc_test_leaks_tracer ();
  if (!tracer) {
    GST_INFO ("leaks tracer not active; skipped");
    return;
  }
  GstZcContext *ctx = zc_test_new_context ();
  const guint min = 3;
  GstBufferPool *pool = configured_pool (ctx, GST_VIDEO_FORMAT_NV12, 64, 48,
      min, 0, TRUE, NULL);
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));

  g_signal_emit_by_name (tracer, "activity-start-tracking");
  std::vector < GstBuffer * >held;
  for (guint i = 0; i < min; i++) {
    GstBuffer *b = NULL;
    fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
        GST_FLOW_OK);
    held.push_back (b);
  }
  GstStructure *cp = NULL;
  g_signal_emit_by_name (tracer, "activity-get-checkpoint", &cp);
  g_signal_emit_by_name (tracer, "activity-stop-tracking");
  const GValue *created = gst_structure_get_value (cp, "objects-created-list");
  guint n_mem = 0;
  for (guint i = 0; i < gst_value_list_get_size (created); i++) {
    const GstStructure *o =
        gst_value_get_structure (gst_value_list_get_value (created, i));
    const gchar *type = gst_structure_get_string (o, "type-name");
    if (g_strcmp0 (type, "GstMemory") == 0 || g_strcmp0 (type, "GstBuffer") == 0)
      n_mem++;
  }
  gst_structure_free (cp);
  fail_unless_equals_int (n_mem, 0);

  for (GstBuffer * b:held)
    gst_buffer_unref (b);
  fail_unless (gst_buffer_pool_set_active (pool, FALSE));
  gst_object_unref (pool);
  gst_object_unref (ctx);
  gst_object_unref (tracer);
}

GST_END_TEST;

/* Rows pitched for the GPU's loads where a kernel reads the memory (mapped,
 * managed, device); GStreamer's default layout in system memory, which
 * only the CPU backend reads, so that a consumer without GstVideoMeta can
 * take the frame as it is */
GST_START_TEST (test_pool_row_pitch_aligned_with_video_meta)
{
  GstZcContext *ctx = zc_test_new_context ();
  const GstVideoFormat formats[] = { GST_VIDEO_FORMAT_RGBA,
    GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_NV12, GST_VIDEO_FORMAT_I420
  };
  const gint sizes[][2] = { {37, 13}, {1, 1}, {1921, 1081}, {640, 480} };

  for (GstVideoFormat fmt:formats) {
    for (auto & wh:sizes) {
      GstVideoInfo info;
      GstBufferPool *pool = configured_pool (ctx, fmt, wh[0], wh[1], 1, 0,
          TRUE, &info);
      fail_unless (gst_buffer_pool_set_active (pool, TRUE));
      GstBuffer *b = NULL;
      fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
          GST_FLOW_OK);
      GstVideoMeta *meta = gst_buffer_get_video_meta (b);
      fail_unless (meta != NULL, "%s %dx%d: no video meta",
          gst_video_format_to_string (fmt), wh[0], wh[1]);
      fail_unless_equals_int (meta->n_planes, GST_VIDEO_INFO_N_PLANES (&info));

      const gboolean system =
          gst_zc_memory_get_memory_type ((GstZcMemory *)
          gst_buffer_peek_memory (b, 0)) == GST_ZC_MEMORY_TYPE_SYSTEM;
      GstVideoFrame frame;
      fail_unless (gst_video_frame_map (&frame, &info, b, GST_MAP_WRITE));
      for (guint p = 0; p < meta->n_planes; p++) {
        if (system)
          fail_unless (meta->stride[p] == GST_VIDEO_INFO_PLANE_STRIDE (&info,
                  p) && meta->offset[p] == GST_VIDEO_INFO_PLANE_OFFSET (&info,
                  p), "%s %dx%d plane %u: stride %d offset %" G_GSIZE_FORMAT
              " in system memory", gst_video_format_to_string (fmt), wh[0],
              wh[1], p, meta->stride[p], meta->offset[p]);
        else
          fail_unless (meta->stride[p] % GST_ZC_ROW_PITCH_ALIGN == 0,
              "%s %dx%d plane %u: stride %d", gst_video_format_to_string (fmt),
              wh[0], wh[1], p, meta->stride[p]);
        gsize row_bytes;
        guint rows;
        zc_test_plane_geometry (&info, p, &row_bytes, &rows);
        fail_unless ((gsize) meta->stride[p] >= row_bytes);
        guint8 *data = (guint8 *) GST_VIDEO_FRAME_PLANE_DATA (&frame, p);
        fail_unless (system
            || ((guintptr) data) % GST_ZC_ROW_PITCH_ALIGN == 0,
            "%s %dx%d plane %u starts at %p", gst_video_format_to_string (fmt),
            wh[0], wh[1], p, data);
        /* every row of the plane is there to write */
        for (guint y = 0; y < rows; y++)
          memset (data + (gsize) y * meta->stride[p], (int) y, row_bytes);
      }
      gst_video_frame_unmap (&frame);
      gst_buffer_unref (b);
      fail_unless (gst_buffer_pool_set_active (pool, FALSE));
      gst_object_unref (pool);
    }
  }
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_pool_default_layout_without_video_meta)
{
  /* A consumer that does not read GstVideoMeta gets the default strides */
  GstZcContext *ctx = zc_test_new_context ();
  GstVideoInfo info;
  GstBufferPool *pool = configured_pool (ctx, GST_VIDEO_FORMAT_I420, 37, 13,
      1, 0, FALSE, &info);
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  GstBuffer *b = NULL;
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
      GST_FLOW_OK);
  GstVideoMeta *meta = gst_buffer_get_video_meta (b);
  if (meta) {
    for (guint p = 0; p < meta->n_planes; p++) {
      fail_unless_equals_int (meta->stride[p], GST_VIDEO_INFO_PLANE_STRIDE
          (&info, p));
      fail_unless_equals_uint64 (meta->offset[p], GST_VIDEO_INFO_PLANE_OFFSET
          (&info, p));
    }
  }
  fail_unless (gst_buffer_get_size (b) >= info.size);
  gst_buffer_unref (b);
  fail_unless (gst_buffer_pool_set_active (pool, FALSE));
  gst_object_unref (pool);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_pool_buffers_survive_pool_deactivation)
{
  ZcLeakCheck leaks;
  GstZcContext *ctx = zc_test_new_context ();
  GstBufferPool *pool = configured_pool (ctx, GST_VIDEO_FORMAT_RGBA, 320, 240,
      2, 0, TRUE, NULL);
  fail_unless_equals_int (gst_zc_buffer_pool_get_memory_type
      (GST_ZC_BUFFER_POOL (pool)), gst_zc_context_resolve_memory_type (ctx,
          GST_ZC_MEMORY_TYPE_AUTO));
  fail_unless (gst_zc_buffer_pool_get_context (GST_ZC_BUFFER_POOL (pool)) ==
      ctx);
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  GstBuffer *b = NULL;
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
      GST_FLOW_OK);

  /* Shut the pool down while a buffer is out, drop every other reference */
  fail_unless (gst_buffer_pool_set_active (pool, FALSE));
  gst_object_unref (pool);
  gst_object_unref (ctx);

  GstMapInfo map;
  fail_unless (gst_buffer_map (b, &map, GST_MAP_WRITE));
  memset (map.data, 0x77, map.size);
  gst_buffer_unmap (b, &map);
  gst_buffer_unref (b);

  std::string alive = leaks.alive_objects ();
  fail_unless (alive.empty (), "left alive:\n%s", alive.c_str ());
}

GST_END_TEST;

static Suite *
zcmemory_suite (void)
{
  Suite *s = suite_create ("zcmemory");
  TCase *tc = zc_test_case ("general");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
  tcase_add_test (tc, test_context_reports_backend);
  tcase_add_test (tc, test_allocator_new_checks_memory_type_against_device);
  tcase_add_test (tc, test_allocator_new_returns_new_object);
  tcase_add_test (tc, test_context_nonexistent_device);
  tcase_add_test (tc, test_context_travels_in_gst_context);
  tcase_add_test (tc, test_memory_type_enum_nicks);
  tcase_add_test (tc, test_allocator_honours_params);
  tcase_add_test (tc, test_allocator_memory_type_and_pointers);
  tcase_add_test (tc, test_bytes_in_use_counts_every_block);
  tcase_add_test (tc, test_memory_share_and_copy);
  tcase_add_test (tc, test_allocator_outlives_its_memories);
  tcase_add_test (tc, test_allocator_registered_by_name);
  tcase_add_test (tc, test_pool_preallocates_min_buffers_and_reuses);
  tcase_add_test (tc, test_pool_preallocates_min_buffers_at_activation);
  tcase_add_test (tc, test_pool_row_pitch_aligned_with_video_meta);
  tcase_add_test (tc, test_pool_default_layout_without_video_meta);
  tcase_add_test (tc, test_pool_buffers_survive_pool_deactivation);
  return s;
}

GST_CHECK_MAIN (zcmemory);

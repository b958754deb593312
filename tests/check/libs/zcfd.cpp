/* gst-zerocopy: frames as file descriptors (gstzcfd), without unixfdsink:
 * the files a shareable pool allocates, the GstFdMemory a frame leaves as,
 * and a receiver's frames (a new descriptor each, as unixfdsrc makes them)
 * mapped once per file. Runs on either backend, on every GStreamer.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "../zccheck.h"

#include <gst/allocators/allocators.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

static GstBufferPool *
shareable_pool (GstZcContext * ctx, guint size, guint n)
{
  GstBufferPool *pool = gst_zc_buffer_pool_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
  fail_unless (pool != NULL);
  GstStructure *config = gst_buffer_pool_get_config (pool);
  GstCaps *caps = gst_caps_from_string ("video/x-raw,format=RGBA,width=64,"
      "height=32,framerate=30/1");
  gst_buffer_pool_config_set_params (config, caps, size, n, n);
  gst_buffer_pool_config_add_option (config,
      GST_ZC_BUFFER_POOL_OPTION_SHAREABLE);
  gst_caps_unref (caps);
  fail_unless (gst_buffer_pool_set_config (pool, config));
  fail_unless (gst_buffer_pool_set_active (pool, TRUE));
  return pool;
}

static ino_t
inode_of (int fd)
{
  struct stat st;
  fail_unless (fstat (fd, &st) == 0);
  return st.st_ino;
}

static guint
open_fds (void)
{
  guint n = 0;
  DIR *d = opendir ("/proc/self/fd");
  while (readdir (d))
    n++;
  closedir (d);
  return n;
}

/* What unixfdsrc makes of a frame it receives: a new descriptor of the same
 * file, a new GstFdMemory that closes it */
static GstBuffer *
received (GstAllocator * fd_alloc, GstBuffer * sent)
{
  GstMemory *mem = gst_buffer_peek_memory (sent, 0);
  gsize offset;
  gsize size = gst_memory_get_sizes (mem, &offset, NULL);
  GstMemory *in = gst_fd_allocator_alloc (fd_alloc,
      dup (gst_fd_memory_get_fd (mem)), offset + size,
      GST_FD_MEMORY_FLAG_NONE);
  gst_memory_resize (in, offset, size);
  GST_MINI_OBJECT_FLAG_SET (in, GST_MEMORY_FLAG_READONLY);
  GstBuffer *buf = gst_buffer_new ();
  gst_buffer_append_memory (buf, in);
  GST_BUFFER_PTS (buf) = GST_BUFFER_PTS (sent);
  return buf;
}

GST_START_TEST (test_shareable_pool_allocates_files)
{
  GstZcContext *ctx = zc_test_new_context ();
  GstBufferPool *pool = shareable_pool (ctx, 64 * 32 * 4, 2);
  GstBuffer *a = NULL, *b = NULL;
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &a, NULL),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
      GST_FLOW_OK);
  fail_unless (gst_zc_buffer_is_shareable (a));
  fail_unless (gst_zc_buffer_is_shareable (b));
  gsize off_a;
  int fd_a = gst_zc_memory_get_fd ((GstZcMemory *)
      gst_buffer_peek_memory (a, 0), &off_a);
  int fd_b = gst_zc_memory_get_fd ((GstZcMemory *)
      gst_buffer_peek_memory (b, 0), NULL);
  fail_unless (fd_a >= 0 && fd_b >= 0);
  fail_unless (inode_of (fd_a) != inode_of (fd_b), "two frames, one file");
  /* the file holds the frame: bytes written through a map are the file's */
  GstMapInfo map;
  fail_unless (gst_buffer_map (a, &map, GST_MAP_WRITE));
  memset (map.data, 0x5a, map.size);
  gst_buffer_unmap (a, &map);
  guint8 byte = 0;
  fail_unless_equals_int (pread (fd_a, &byte, 1, off_a +
          gst_buffer_peek_memory (a, 0)->offset), 1);
  fail_unless_equals_int (byte, 0x5a);
  gst_buffer_unref (a);
  gst_buffer_unref (b);

  /* a pool without the option is not */
  GstBufferPool *plain = gst_zc_buffer_pool_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
  GstStructure *config = gst_buffer_pool_get_config (plain);
  GstCaps *caps = gst_caps_from_string ("video/x-raw,format=RGBA,width=64,"
      "height=32,framerate=30/1");
  gst_buffer_pool_config_set_params (config, caps, 64 * 32 * 4, 1, 1);
  gst_caps_unref (caps);
  fail_unless (gst_buffer_pool_set_config (plain, config));
  fail_unless (gst_buffer_pool_set_active (plain, TRUE));
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (plain, &a, NULL),
      GST_FLOW_OK);
  fail_if (gst_zc_buffer_is_shareable (a));
  gst_buffer_unref (a);
  gst_buffer_pool_set_active (plain, FALSE);
  gst_object_unref (plain);

  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_export_is_the_same_file_and_reuses_its_view)
{
  GstZcContext *ctx = zc_test_new_context ();
  GstBufferPool *pool = shareable_pool (ctx, 64 * 32 * 4, 1);
  GstBuffer *frame = NULL;
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &frame, NULL),
      GST_FLOW_OK);
  GST_BUFFER_PTS (frame) = 42 * GST_MSECOND;
  int fd = gst_zc_memory_get_fd ((GstZcMemory *)
      gst_buffer_peek_memory (frame, 0), NULL);

  GstBuffer *out = gst_zc_buffer_export_fd (frame);
  fail_unless (out != NULL);
  fail_unless_equals_int (gst_buffer_n_memory (out), 1);
  GstMemory *view = gst_buffer_peek_memory (out, 0);
  fail_unless (gst_is_fd_memory (view));
  fail_unless_equals_int (inode_of (gst_fd_memory_get_fd (view)),
      inode_of (fd));
  fail_unless_equals_uint64 (view->size,
      gst_buffer_peek_memory (frame, 0)->size);
  fail_unless_equals_uint64 (GST_BUFFER_PTS (out), 42 * GST_MSECOND);
  /* the frame stays out of its pool while the exported buffer lives */
  gst_buffer_unref (frame);
  GstBuffer *other = NULL;
  GstBufferPoolAcquireParams params;
  memset (&params, 0, sizeof (params));
  params.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT;
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &other,
          &params), GST_FLOW_EOS);
  gst_buffer_unref (out);
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &frame,
          &params), GST_FLOW_OK);

  /* the next export of the same frame hands out the same view: nothing of
   * it is made per frame */
  GstBuffer *again = gst_zc_buffer_export_fd (frame);
  fail_unless (gst_buffer_peek_memory (again, 0) == view);
  /* and the same frame out twice at once gets a view of its own */
  GstBuffer *twice = gst_zc_buffer_export_fd (frame);
  fail_unless (gst_buffer_peek_memory (twice, 0) != view);
  fail_unless (gst_is_fd_memory (gst_buffer_peek_memory (twice, 0)));
  gst_buffer_unref (twice);
  gst_buffer_unref (again);
  gst_buffer_unref (frame);

  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_import_maps_each_file_once)
{
  GstZcContext *ctx = zc_test_new_context ();
  const guint fds_before = open_fds ();
  GstBufferPool *pool = shareable_pool (ctx, 64 * 32 * 4, 2);
  GstAllocator *fd_alloc = gst_fd_allocator_new ();
  GstAllocator *wrap = gst_zc_allocator_new (ctx, gst_zc_context_has_gpu (ctx)
      ? GST_ZC_MEMORY_TYPE_MAPPED : GST_ZC_MEMORY_TYPE_SYSTEM);
  GstZcFdImports *imports = gst_zc_fd_imports_new ();

  GstBuffer *a = NULL, *b = NULL;
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &a, NULL),
      GST_FLOW_OK);
  fail_unless_equals_int (gst_buffer_pool_acquire_buffer (pool, &b, NULL),
      GST_FLOW_OK);
  GstMapInfo map;
  fail_unless (gst_buffer_map (a, &map, GST_MAP_WRITE));
  memset (map.data, 0x11, map.size);
  gst_buffer_unmap (a, &map);
  GST_BUFFER_PTS (a) = 7 * GST_MSECOND;
  GstBuffer *sent_a = gst_zc_buffer_export_fd (a);
  GstBuffer *sent_b = gst_zc_buffer_export_fd (b);

  gpointer first_host = NULL;
  GstBuffer *first_out = NULL;
  guint64 made = 0;
  for (int i = 0; i < 5; i++) {
    GstBuffer *in = received (fd_alloc, sent_a);
    fail_unless (gst_zc_buffer_is_fd (in));
    gsize registered = 0;
    GstBuffer *imported = gst_zc_buffer_import_fd (wrap, imports, in,
        G_MAXUINT64, &registered);
    fail_unless (imported != NULL, "frame %d not imported", i);
    fail_unless (gst_zc_buffer_is_zc (imported, ctx));
    auto *zmem = (GstZcMemory *) gst_buffer_peek_memory (imported, 0);
    gpointer host = gst_zc_memory_get_host_pointer (zmem);
    if (i == 0) {
      first_host = host;
      first_out = imported;
      made = gst_zc_wrapped_buffers_made ();
      if (gst_zc_context_has_gpu (ctx))
        fail_unless (registered > 0, "the first frame registers its file");
    } else {
      fail_unless (host == first_host, "frame %d mapped again", i);
      fail_unless_equals_uint64 (registered, 0);
      /* the same place of the same file: the buffer made for it, again */
      fail_unless (imported == first_out, "frame %d wrapped anew", i);
      fail_unless_equals_uint64 (gst_zc_wrapped_buffers_made (), made);
    }
    fail_unless_equals_int (GST_BUFFER_PTS (imported), GST_BUFFER_PTS (in));
    if (gst_zc_context_has_gpu (ctx))
      fail_unless (gst_zc_memory_get_device_pointer (zmem) != NULL);
    fail_unless (gst_buffer_map (imported, &map, GST_MAP_READ));
    fail_unless_equals_int (map.data[0], 0x11);
    fail_unless_equals_int (map.data[map.size - 1], 0x11);
    gst_buffer_unmap (imported, &map);
    /* read-only: the producer's bytes */
    fail_unless (GST_MEMORY_IS_READONLY (zmem));
    fail_if (gst_memory_map ((GstMemory *) zmem, &map, GST_MAP_WRITE));
    /* the received buffer goes with the wrapper (the producer gets its
     * frame back then) */
    fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (in), 2);
    gst_buffer_unref (imported);
    fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (in), 1);
    gst_buffer_unref (in);
  }

  /* the same place out twice at once (a source that repeats a frame): a
   * buffer of its own for the second, which goes when it is done */
  GstBuffer *in1 = received (fd_alloc, sent_a);
  GstBuffer *in2 = received (fd_alloc, sent_a);
  GstBuffer *out1 = gst_zc_buffer_import_fd (wrap, imports, in1, G_MAXUINT64,
      NULL);
  GstBuffer *out2 = gst_zc_buffer_import_fd (wrap, imports, in2, G_MAXUINT64,
      NULL);
  fail_unless (out1 == first_out && out2 != first_out);
  fail_unless_equals_uint64 (gst_zc_wrapped_buffers_made (), made + 1);
  gst_buffer_unref (out2);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (in2), 1);
  /* a copy of the kept buffer shares its wrapper: that one is not kept,
   * and gives its frame back when the copy goes */
  GstBuffer *copy = gst_buffer_copy (out1);
  gst_buffer_unref (out1);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (in1), 2);
  gst_buffer_unref (copy);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (in1), 1);
  gst_buffer_unref (in1);
  gst_buffer_unref (in2);
  in1 = received (fd_alloc, sent_a);
  out1 = gst_zc_buffer_import_fd (wrap, imports, in1, G_MAXUINT64, NULL);
  fail_unless_equals_uint64 (gst_zc_wrapped_buffers_made (), made + 2);
  gst_buffer_unref (out1);
  gst_buffer_unref (in1);

  /* a meta of the frame that holds another buffer does not stay on the
   * kept buffer while it waits for the next frame */
  GstBuffer *other = gst_buffer_new ();
  in1 = received (fd_alloc, sent_a);
  gst_buffer_add_parent_buffer_meta (in1, other);
  out1 = gst_zc_buffer_import_fd (wrap, imports, in1, G_MAXUINT64, NULL);
  fail_unless (gst_buffer_get_parent_buffer_meta (out1) != NULL);
  gst_buffer_unref (out1);
  gst_buffer_unref (in1);
  fail_unless_equals_int (GST_MINI_OBJECT_REFCOUNT_VALUE (other), 1);
  gst_buffer_unref (other);
  fail_unless_equals_int (gst_zc_fd_imports_get_n_files (imports), 1);

  GstBuffer *in = received (fd_alloc, sent_b);
  GstBuffer *imported = gst_zc_buffer_import_fd (wrap, imports, in,
      G_MAXUINT64, NULL);
  fail_unless (imported != NULL);
  fail_unless_equals_int (gst_zc_fd_imports_get_n_files (imports), 2);

  /* a mapping in use outlives the table */
  gst_zc_fd_imports_free (imports);
  fail_unless (gst_buffer_map (imported, &map, GST_MAP_READ));
  gst_buffer_unmap (imported, &map);
  gst_buffer_unref (imported);
  gst_buffer_unref (in);
  gst_zc_allocator_wait_released (wrap);

  gst_buffer_unref (sent_a);
  gst_buffer_unref (sent_b);
  gst_buffer_unref (a);
  gst_buffer_unref (b);
  gst_buffer_pool_set_active (pool, FALSE);
  gst_object_unref (pool);
  gst_object_unref (fd_alloc);
  gst_object_unref (wrap);
  const gboolean gpu = gst_zc_context_has_gpu (ctx);
  gst_object_unref (ctx);
  /* every received descriptor closed, every file of the pool gone */
  fail_unless_equals_int (open_fds (), fds_before);
  if (gpu)
    fail_unless_equals_uint64 (gst_zc_registered_bytes (), 0);
}

GST_END_TEST;

GST_START_TEST (test_import_refuses_what_is_not_a_file)
{
  GstZcContext *ctx = zc_test_new_context ();
  GstAllocator *wrap = gst_zc_allocator_new (ctx, gst_zc_context_has_gpu (ctx)
      ? GST_ZC_MEMORY_TYPE_MAPPED : GST_ZC_MEMORY_TYPE_SYSTEM);
  GstZcFdImports *imports = gst_zc_fd_imports_new ();
  GstBuffer *sys = gst_buffer_new_allocate (NULL, 4096, NULL);
  fail_if (gst_zc_buffer_is_fd (sys));
  fail_unless (gst_zc_buffer_import_fd (wrap, imports, sys, G_MAXUINT64,
          NULL) == NULL);
  gst_buffer_unref (sys);
  gst_zc_fd_imports_free (imports);
  gst_object_unref (wrap);
  gst_object_unref (ctx);
}

GST_END_TEST;

static Suite *
zcfd_suite (void)
{
  Suite *s = suite_create ("zcfd");
  TCase *tc = tcase_create ("general");
  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_shareable_pool_allocates_files);
  tcase_add_test (tc, test_export_is_the_same_file_and_reuses_its_view);
  tcase_add_test (tc, test_import_maps_each_file_once);
  tcase_add_test (tc, test_import_refuses_what_is_not_a_file);
  return s;
}

GST_CHECK_MAIN (zcfd);

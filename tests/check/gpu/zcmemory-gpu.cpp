/* gst-zerocopy: what only a GPU can show about GstZcMemory
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Fences between GPU work and CPU maps, and between streams, for mapped and
 * managed memory. Exits 77 (skipped, for meson) without a usable GPU.
 */
#include "../zccheck.h"

#if GST_ZC_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <gst/zerocopy/gstzcgpupasses-private.h>

#include <cstring>
#include <unistd.h>
#include <vector>

/* Large enough that a few passes over it take milliseconds across the bus */
#define FENCE_BYTES (64u << 20)
#define FENCE_PASSES 9

static void
lut_set (zc::LutSet * set, gboolean invert, guint8 add)
{
  for (int k = 0; k < 4; k++)
    for (int v = 0; v < 256; v++)
      set->lut[k][v] = (guint8) ((invert ? 255 - v : v) + add);
}

/* Enqueues @passes in-place passes of @luts over the whole of @mem */
static void
enqueue_passes (GstZcMemory * mem, gsize bytes, const zc::LutSet & luts,
    int passes, cudaStream_t stream)
{
  zc::PlaneJob job = { };
  job.src = (const uint8_t *) gst_zc_memory_get_device_pointer (mem);
  job.dst = (uint8_t *) gst_zc_memory_get_device_pointer (mem);
  job.row_bytes = 1u << 20;
  job.rows = (uint32_t) (bytes >> 20);
  job.src_stride = job.dst_stride = job.row_bytes;
  for (int i = 0; i < passes; i++)
    fail_unless_equals_int (zc::apply_lut_cuda (job, luts, stream),
        cudaSuccess);
}

static void
check_map_waits_fence (GstZcMemoryType type)
{
  GstZcContext *ctx = gst_zc_context_new (-1, NULL);
  fail_unless (ctx && gst_zc_context_has_gpu (ctx));
  fail_unless_equals_int (cudaSetDevice (gst_zc_context_get_device_id (ctx)),
      cudaSuccess);
  GstAllocator *alloc = gst_zc_allocator_new (ctx, type);
  fail_unless (alloc != NULL, "no %s allocator",
      gst_zc_memory_type_to_string (type));
  GstMemory *mem = gst_allocator_alloc (alloc, FENCE_BYTES, NULL);
  fail_unless (mem != NULL);
  auto *zmem = (GstZcMemory *) mem;
  fail_unless_equals_int (gst_zc_memory_get_memory_type (zmem), type);

  GstMapInfo map;
  fail_unless (gst_memory_map (mem, &map, GST_MAP_WRITE));
  for (gsize i = 0; i < map.size; i++)
    map.data[i] = (guint8) (i * 13 + (i >> 12));
  gst_memory_unmap (mem, &map);

  cudaStream_t stream = (cudaStream_t) gst_zc_context_new_stream (ctx);
  fail_unless (stream != NULL);
  zc::LutSet inv;
  lut_set (&inv, TRUE, 0);
  fail_unless (gst_zc_memory_prepare_gpu (zmem, stream));
  enqueue_passes (zmem, FENCE_BYTES, inv, FENCE_PASSES, stream);
  fail_unless (gst_zc_memory_set_gpu_fence (zmem, stream));

  /* The work must still be running, or this test shows nothing */
  fail_unless_equals_int (cudaStreamQuery (stream), cudaErrorNotReady);

  /* A CPU map right away: it must see the result of every pass */
  fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
  fail_unless_equals_int (cudaStreamQuery (stream), cudaSuccess);
  gsize bad = G_MAXSIZE;
  for (gsize i = 0; i < map.size && bad == G_MAXSIZE; i++) {
    if (map.data[i] != (guint8) (255 - (guint8) (i * 13 + (i >> 12))))
      bad = i;
  }
  gst_memory_unmap (mem, &map);
  fail_unless (bad == G_MAXSIZE, "%s: byte %" G_GSIZE_FORMAT " read before "
      "the GPU finished", gst_zc_memory_type_to_string (type), bad);

  gst_zc_context_free_stream (ctx, stream);
  gst_memory_unref (mem);
  gst_object_unref (alloc);
  gst_object_unref (ctx);
}

GST_START_TEST (test_memory_cpu_map_waits_gpu_fence)
{
  check_map_waits_fence (GST_ZC_MEMORY_TYPE_MAPPED);
}

GST_END_TEST;

GST_START_TEST (test_managed_memory_cpu_map_waits_gpu_fence)
{
  check_map_waits_fence (GST_ZC_MEMORY_TYPE_MANAGED);
}

GST_END_TEST;

/* A second stream that calls prepare_gpu() runs after the first's fence */
static void
check_streams_ordered_by_fence (GstZcMemoryType type)
{
  GstZcContext *ctx = gst_zc_context_new (-1, NULL);
  fail_unless_equals_int (cudaSetDevice (gst_zc_context_get_device_id (ctx)),
      cudaSuccess);
  GstAllocator *alloc = gst_zc_allocator_new (ctx, type);
  GstMemory *mem = gst_allocator_alloc (alloc, FENCE_BYTES, NULL);
  auto *zmem = (GstZcMemory *) mem;
  GstMapInfo map;
  fail_unless (gst_memory_map (mem, &map, GST_MAP_WRITE));
  memset (map.data, 10, map.size);
  gst_memory_unmap (mem, &map);

  cudaStream_t a = (cudaStream_t) gst_zc_context_new_stream (ctx);
  cudaStream_t b = (cudaStream_t) gst_zc_context_new_stream (ctx);
  zc::LutSet inv, plus1;
  lut_set (&inv, TRUE, 0);
  lut_set (&plus1, FALSE, 1);

  fail_unless (gst_zc_memory_prepare_gpu (zmem, a));
  enqueue_passes (zmem, FENCE_BYTES, inv, FENCE_PASSES, a);  /* 10 -> 245 */
  fail_unless (gst_zc_memory_set_gpu_fence (zmem, a));
  fail_unless (gst_zc_memory_prepare_gpu (zmem, b));
  enqueue_passes (zmem, FENCE_BYTES, plus1, 1, b);   /* 245 -> 246 */
  fail_unless (gst_zc_memory_set_gpu_fence (zmem, b));

  fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
  gsize bad = G_MAXSIZE;
  for (gsize i = 0; i < map.size && bad == G_MAXSIZE; i++)
    if (map.data[i] != 246)
      bad = i;
  guint8 got = bad == G_MAXSIZE ? 0 : map.data[bad];
  gst_memory_unmap (mem, &map);
  fail_unless (bad == G_MAXSIZE, "%s: byte %" G_GSIZE_FORMAT " is %u, not 246: "
      "stream b did not wait for stream a", gst_zc_memory_type_to_string (type),
      bad, got);

  gst_zc_context_free_stream (ctx, a);
  gst_zc_context_free_stream (ctx, b);
  gst_memory_unref (mem);
  gst_object_unref (alloc);
  gst_object_unref (ctx);
}

GST_START_TEST (test_memory_streams_ordered_by_fence)
{
  check_streams_ordered_by_fence (GST_ZC_MEMORY_TYPE_MAPPED);
  check_streams_ordered_by_fence (GST_ZC_MEMORY_TYPE_MANAGED);
}

GST_END_TEST;

/* On a new stream of @ctx: FENCE_PASSES inverting passes over @mem, then
 * its fence. Returns the stream (the passes still running). */
static cudaStream_t
start_inverting_passes (GstZcContext * ctx, GstMemory * mem)
{
  cudaStream_t s = (cudaStream_t) gst_zc_context_new_stream (ctx);
  fail_unless (s != NULL);
  zc::LutSet inv;
  lut_set (&inv, TRUE, 0);
  fail_unless (gst_zc_memory_prepare_gpu ((GstZcMemory *) mem, s));
  enqueue_passes ((GstZcMemory *) mem, FENCE_BYTES, inv, FENCE_PASSES, s);
  fail_unless (gst_zc_memory_set_gpu_fence ((GstZcMemory *) mem, s));
  return s;
}

GST_START_TEST (test_memory_freed_with_gpu_work_pending)
{
  /* Dropping the last reference while kernels still use the memory must
   * wait for them, not free under their feet (no crash, no CUDA error). */
  GstZcContext *ctx = gst_zc_context_new (-1, NULL);
  fail_unless_equals_int (cudaSetDevice (gst_zc_context_get_device_id (ctx)),
      cudaSuccess);
  GstZcMemoryType types[] = { GST_ZC_MEMORY_TYPE_MAPPED,
    GST_ZC_MEMORY_TYPE_MANAGED
  };
  for (GstZcMemoryType t:types) {
    GstAllocator *alloc = gst_zc_allocator_new (ctx, t);
    GstMemory *mem = gst_allocator_alloc (alloc, FENCE_BYTES, NULL);
    cudaStream_t s = start_inverting_passes (ctx, mem);
    gst_memory_unref (mem);
    gst_object_unref (alloc);
    fail_unless (gst_zc_context_sync_stream (ctx, s));
    fail_unless_equals_int (cudaGetLastError (), cudaSuccess);
    gst_zc_context_free_stream (ctx, s);
  }
  gst_object_unref (ctx);
}

GST_END_TEST;

struct WrapOwner
{
  gint given_back;              /* atomic */
  guint8 *host;
};

static void
wrap_owner_give_back (gpointer data)
{
  g_atomic_int_set (&static_cast < WrapOwner * >(data)->given_back, 1);
}

GST_START_TEST (test_wrapped_memory_freed_without_waiting_for_gpu)
{
  /* A wrapped frame (adopted host memory, nvcodec's device memory) whose
   * last buffer goes away while kernels still read it: the thread that
   * lets go must not wait for them (it is the streaming thread that just
   * queued them); the owner gets its bytes back only once they are done,
   * and gst_zc_allocator_wait_released() waits for that. */
  GstZcContext *ctx = gst_zc_context_new (-1, NULL);
  fail_unless_equals_int (cudaSetDevice (gst_zc_context_get_device_id (ctx)),
      cudaSuccess);
  GstAllocator *alloc = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_MAPPED);
  WrapOwner owner = { 0, NULL };
  void *host = NULL, *dev = NULL;
  fail_unless_equals_int (cudaHostAlloc (&host, FENCE_BYTES,
          cudaHostAllocMapped), cudaSuccess);
  fail_unless_equals_int (cudaHostGetDevicePointer (&dev, host, 0),
      cudaSuccess);
  owner.host = (guint8 *) host;
  for (gsize i = 0; i < FENCE_BYTES; i++)
    owner.host[i] = (guint8) (i * 7);

  for (int round = 0; round < 3; round++) {
    g_atomic_int_set (&owner.given_back, 0);
    GstMemory *mem = gst_zc_memory_new_wrapped (alloc, host, dev,
        FENCE_BYTES, FALSE, &owner, wrap_owner_give_back);
    fail_unless (mem != NULL);
    cudaStream_t s = start_inverting_passes (ctx, mem);
    fail_unless_equals_int (cudaStreamQuery (s), cudaErrorNotReady);

    gint64 t0 = g_get_monotonic_time ();
    gst_memory_unref (mem);
    gint64 unref_us = g_get_monotonic_time () - t0;
    /* the passes take milliseconds across the bus; the unref did not
     * wait for them, and the owner has not got the bytes back yet */
    fail_unless_equals_int (cudaStreamQuery (s), cudaErrorNotReady);
    fail_if (g_atomic_int_get (&owner.given_back),
        "round %d: given back while the GPU still used the bytes", round);
    GST_INFO ("round %d: unref took %" G_GINT64_FORMAT " us", round,
        unref_us);

    gst_zc_allocator_wait_released (alloc);
    fail_unless (g_atomic_int_get (&owner.given_back),
        "round %d: not given back after wait_released", round);
    fail_unless_equals_int (cudaStreamQuery (s), cudaSuccess);
    fail_unless_equals_int (cudaGetLastError (), cudaSuccess);
    gst_zc_context_free_stream (ctx, s);
  }
  /* an odd number of inverting passes per round, three rounds: inverted */
  gsize bad = G_MAXSIZE;
  for (gsize i = 0; i < FENCE_BYTES && bad == G_MAXSIZE; i++)
    if (owner.host[i] != (guint8) (255 - (guint8) (i * 7)))
      bad = i;
  fail_unless (bad == G_MAXSIZE, "byte %" G_GSIZE_FORMAT " not inverted", bad);

  gst_object_unref (alloc);
  fail_unless_equals_int (cudaFreeHost (host), cudaSuccess);
  gst_object_unref (ctx);
}

GST_END_TEST;

static int
range_attribute (GstZcMemory * mem, gsize bytes, cudaMemRangeAttribute attr)
{
  int value = 0x7fff;
  fail_unless_equals_int (cudaMemRangeGetAttribute (&value, sizeof (value),
          attr, gst_zc_memory_get_device_pointer (mem), bytes), cudaSuccess);
  return value;
}

/* Where the device shares managed memory with the CPU concurrently, a frame
 * stays on the host, mapped into the GPU, and neither a kernel nor the CPU
 * map after it pays a transfer of the whole frame; with
 * GST_ZC_MANAGED_PLACEMENT=prefetch it is prefetched to the GPU for a
 * kernel and back for the CPU map. The pixels are right either way. */
GST_START_TEST (test_managed_memory_placement)
{
  GstZcContext *ctx = gst_zc_context_new (-1, NULL);
  fail_unless (ctx && gst_zc_context_has_gpu (ctx));
  if (!gst_zc_context_has_concurrent_managed_access (ctx)) {
    g_print ("%s: no concurrent managed access: attached, not mapped; "
        "nothing to check\n", gst_zc_context_get_device_name (ctx));
    gst_object_unref (ctx);
    return;
  }
  const gint dev = gst_zc_context_get_device_id (ctx);
  fail_unless_equals_int (cudaSetDevice (dev), cudaSuccess);
  const bool migrates =
      g_strcmp0 (g_getenv ("GST_ZC_MANAGED_PLACEMENT"), "prefetch") == 0;

  GstAllocator *alloc = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_MANAGED);
  const gsize bytes = 8u << 20;
  GstMemory *mem = gst_allocator_alloc (alloc, bytes, NULL);
  fail_unless (mem != NULL);
  auto *zmem = (GstZcMemory *) mem;
  GstMapInfo map;
  fail_unless (gst_memory_map (mem, &map, GST_MAP_WRITE));
  for (gsize i = 0; i < map.size; i++)
    map.data[i] = (guint8) (i * 7);
  gst_memory_unmap (mem, &map);

  cudaStream_t stream = (cudaStream_t) gst_zc_context_new_stream (ctx);
  zc::LutSet inv;
  lut_set (&inv, TRUE, 0);
  const guint64 moved_before = gst_zc_memory_get_migrations ();
  fail_unless (gst_zc_memory_prepare_gpu (zmem, stream));
  enqueue_passes (zmem, bytes, inv, 1, stream);
  fail_unless (gst_zc_memory_set_gpu_fence (zmem, stream));
  fail_unless (gst_memory_map (mem, &map, GST_MAP_READ));
  for (gsize i = 0; i < map.size; i += 4093)
    fail_unless_equals_int (map.data[i], 255 - (guint8) (i * 7));
  gst_memory_unmap (mem, &map);
  /* what the library says it moved: to the GPU and back, or nothing */
  fail_unless_equals_uint64 (gst_zc_memory_get_migrations () - moved_before,
      migrates ? 2 : 0);

  const int preferred = range_attribute (zmem, bytes,
      cudaMemRangeAttributePreferredLocation);
  const int prefetched = range_attribute (zmem, bytes,
      cudaMemRangeAttributeLastPrefetchLocation);
  if (migrates) {
    /* to the GPU and back, the CPU map last */
    fail_unless_equals_int (preferred, cudaInvalidDeviceId);
    fail_unless_equals_int (prefetched, cudaCpuDeviceId);
  } else {
    fail_unless_equals_int (preferred, cudaCpuDeviceId);
    fail_unless_equals_int (prefetched, cudaInvalidDeviceId);
    int accessed_by[4] = { -3, -3, -3, -3 };
    fail_unless_equals_int (cudaMemRangeGetAttribute (accessed_by,
            sizeof (accessed_by), cudaMemRangeAttributeAccessedBy,
            gst_zc_memory_get_device_pointer (zmem), bytes), cudaSuccess);
    fail_unless_equals_int (accessed_by[0], dev);
  }

  gst_zc_context_free_stream (ctx, stream);
  gst_memory_unref (mem);
  gst_object_unref (alloc);
  gst_object_unref (ctx);
}

GST_END_TEST;

GST_START_TEST (test_gpu_memory_types_and_device_pointers)
{
  GstZcContext *ctx = gst_zc_context_new (-1, NULL);
  gint dev = gst_zc_context_get_device_id (ctx);
  GstZcMemoryType types[] = { GST_ZC_MEMORY_TYPE_MAPPED,
    GST_ZC_MEMORY_TYPE_MANAGED, GST_ZC_MEMORY_TYPE_SYSTEM
  };
  for (GstZcMemoryType t:types) {
    GstAllocator *alloc = gst_zc_allocator_new (ctx, t);
    fail_unless (alloc != NULL);
    GstMemory *mem = gst_allocator_alloc (alloc, 1 << 16, NULL);
    auto *z = (GstZcMemory *) mem;
    fail_unless_equals_int (gst_zc_memory_get_memory_type (z), t);
    cudaPointerAttributes attr;
    fail_unless_equals_int (cudaPointerGetAttributes (&attr,
            gst_zc_memory_get_device_pointer (z)), cudaSuccess);
    GstBuffer *buf = gst_buffer_new ();
    gst_buffer_append_memory (buf, mem);
    if (t == GST_ZC_MEMORY_TYPE_MAPPED) {
      fail_unless_equals_int (attr.type, cudaMemoryTypeHost);
      fail_unless (gst_zc_buffer_is_zc (buf, ctx));
    } else if (t == GST_ZC_MEMORY_TYPE_MANAGED) {
      fail_unless_equals_int (attr.type, cudaMemoryTypeManaged);
      fail_unless_equals_int (gst_zc_memory_get_device_id (z), dev);
      fail_unless (gst_zc_buffer_is_zc (buf, ctx));
    } else {
      /* Pageable memory: the GPU elements must copy it */
      fail_unless_equals_int (attr.type, cudaMemoryTypeUnregistered);
      fail_if (gst_zc_buffer_is_zc (buf, ctx));
    }
    gst_buffer_unref (buf);
    gst_object_unref (alloc);
  }
  cudaGetLastError ();
  gst_object_unref (ctx);
}

GST_END_TEST;

/* ---- foreign host memory that shares pages ------------------------------ */

/* A buffer of one memory of GStreamer's system allocator over @size bytes
 * at @data (not owned) */
static GstBuffer *
sysmem_buffer_at (guint8 * data, gsize size)
{
  GstBuffer *b = gst_buffer_new ();
  gst_buffer_append_memory (b, gst_memory_new_wrapped ((GstMemoryFlags) 0,
          data, size, 0, size, NULL, NULL));
  return b;
}

/* The bytes a kernel reads at @adopted's device address equal @want */
static void
assert_gpu_reads (GstBuffer * adopted, const guint8 * want, const char *what)
{
  fail_unless (adopted != NULL, "%s: not adopted", what);
  auto *zmem = (GstZcMemory *) gst_buffer_peek_memory (adopted, 0);
  gsize size = gst_buffer_get_size (adopted);
  void *dev = nullptr;
  fail_unless_equals_int (cudaMalloc (&dev, size), cudaSuccess);
  zc::LutSet same;
  lut_set (&same, FALSE, 0);
  zc::PlaneJob job = { };
  job.src = (const uint8_t *) gst_zc_memory_get_device_pointer (zmem);
  job.dst = (uint8_t *) dev;
  job.row_bytes = (uint32_t) size;
  job.rows = 1;
  job.src_stride = job.dst_stride = job.row_bytes;
  fail_unless_equals_int (zc::apply_lut_cuda (job, same, 0), cudaSuccess);
  std::vector < guint8 > got (size);
  fail_unless_equals_int (cudaMemcpy (got.data (), dev, size,
          cudaMemcpyDeviceToHost), cudaSuccess);
  fail_unless_equals_int (cudaFree (dev), cudaSuccess);
  fail_unless (memcmp (got.data (), want, size) == 0,
      "%s: the GPU read other bytes", what);
}

/* @adopted copied by the copy engines as @rows rows of @row_bytes,
 * @stride apart, into device memory, reads @want in the same layout */
static void
assert_copy_engines_read (GstBuffer * adopted, GstAllocator * device_alloc,
    gsize row_bytes, gsize stride, guint rows, const guint8 * want,
    const char *what)
{
  auto *in = (GstZcMemory *) gst_buffer_peek_memory (adopted, 0);
  gsize bytes = (rows - 1) * stride + row_bytes;
  fail_unless (bytes <= gst_buffer_get_size (adopted));
  GstMemory *out = gst_allocator_alloc (device_alloc, bytes, NULL);
  fail_unless (out != NULL);
  auto *zout = (GstZcMemory *) out;
  GstZcGpuPlaneCopy plane = { };
  plane.src = (const guint8 *) gst_zc_memory_get_device_pointer (in);
  plane.src_stride = stride;
  plane.dst = (guint8 *) gst_zc_memory_get_device_pointer (zout);
  plane.dst_stride = stride;
  plane.row_bytes = row_bytes;
  plane.rows = rows;
  GstZcGpuResult res;
  fail_unless (gst_zc_gpu_copy_planes (gst_zc_memory_get_device_id (zout),
          NULL, in, zout, &plane, 1, &res), "%s: the copy failed: %s %s",
      what, res.name, res.detail);
  GstMapInfo map;
  fail_unless (gst_memory_map (out, &map, GST_MAP_READ));
  for (guint r = 0; r < rows; r++)
    fail_unless (memcmp (map.data + r * stride, want + r * stride,
            row_bytes) == 0, "%s: row %u copied wrong", what, r);
  gst_memory_unmap (out, &map);
  gst_memory_unref (out);
}

GST_START_TEST (test_foreign_memories_sharing_pages)
{
  /* Two allocations of a heap often share a page, which CUDA registers
   * once. A memory uses the registrations that hold some of its pages,
   * while the memories they were made for live, and registers the rest:
   * kernels read it across them, and copies of it are cut where they
   * meet. A registration lives while any memory uses it. */
  GstZcContext *ctx = gst_zc_context_new (-1, NULL);
  fail_unless (ctx && gst_zc_context_has_gpu (ctx));
  fail_unless_equals_int (cudaSetDevice (gst_zc_context_get_device_id (ctx)),
      cudaSuccess);
  int host_pointer_ok = 0;
  fail_unless_equals_int (cudaDeviceGetAttribute (&host_pointer_ok,
          cudaDevAttrCanUseHostPointerForRegisteredMem,
          gst_zc_context_get_device_id (ctx)), cudaSuccess);
  GstAllocator *mapped = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_MAPPED);
  GstAllocator *device = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_DEVICE);
  const gsize page = (gsize) sysconf (_SC_PAGESIZE);
  const guint64 no_cap = G_MAXUINT64;
  auto *block = (guint8 *) aligned_alloc (page, 5 * page);
  for (gsize i = 0; i < 5 * page; i++)
    block[i] = (guint8) (i * 7 + (i >> 12));
  fail_unless_equals_int (gst_zc_registered_bytes (), 0);

  /* a: pages 0 to half of 2; b: the rest of page 2 and page 3; c: within
   * page 1 */
  gsize a_size = 2 * page + page / 2, c_off = page + 100;
  gsize b_size = 4 * page - a_size;
  GstBuffer *a = sysmem_buffer_at (block, a_size);
  GstBuffer *b = sysmem_buffer_at (block + a_size, b_size);
  GstBuffer *c = sysmem_buffer_at (block + c_off, 200);
  gsize now = 0;
  GstBuffer *za = gst_zc_buffer_adopt_host (mapped, a, no_cap, &now);
  assert_gpu_reads (za, block, "a");
  fail_unless_equals_int (now, 3 * page);
  GstBuffer *zc = gst_zc_buffer_adopt_host (mapped, c, no_cap, &now);
  assert_gpu_reads (zc, block + c_off, "c, within a's pages");
  fail_unless_equals_int (now, 0);

  GstBuffer *zb = gst_zc_buffer_adopt_host (mapped, b, no_cap, &now);
  if (!host_pointer_ok) {
    /* two registrations are not one range of GPU addresses here */
    fail_if (zb, "b adopted across registrations mapped apart");
    gst_buffer_unref (b);
    b = NULL;
  } else {
    fail_unless (zb != NULL, "b, whose first page is a's, not adopted");
    /* only its own page is registered */
    fail_unless_equals_int (now, page);
    fail_unless_equals_int (gst_zc_registered_bytes (), 4 * page);
    assert_gpu_reads (zb, block + a_size, "b, across a's page and its own");
    /* rows that cross the page where the registrations meet */
    assert_copy_engines_read (zb, device, 1000, 1100, 5, block + a_size,
        "b by the copy engines");
  }

  /* a goes: its registration stays for c and b, which read through it */
  gst_buffer_unref (za);
  gst_buffer_unref (a);
  assert_gpu_reads (zc, block + c_off, "c after a went");
  if (zb)
    assert_gpu_reads (zb, block + a_size, "b after a went");
  /* a new memory over a's old pages may not use it: those pages could
   * have been given back to the system and mapped anew since */
  GstBuffer *d = sysmem_buffer_at (block, a_size);
  fail_if (gst_zc_buffer_adopt_host (mapped, d, no_cap, &now));

  /* e, in page 4, shares no page: a registration of its own, at once */
  GstBuffer *e = sysmem_buffer_at (block + 4 * page + 8, 300);
  GstBuffer *ze = gst_zc_buffer_adopt_host (mapped, e, no_cap, &now);
  assert_gpu_reads (ze, block + 4 * page + 8, "e");
  fail_unless_equals_int (now, page);
  gst_buffer_unref (ze);
  gst_buffer_unref (e);

  /* c and b go, and every registration with them: d is adopted */
  gst_buffer_unref (zc);
  gst_buffer_unref (c);
  if (zb) {
    gst_buffer_unref (zb);
    gst_buffer_unref (b);
  }
  fail_unless_equals_int (gst_zc_registered_bytes (), 0);
  GstBuffer *zd = gst_zc_buffer_adopt_host (mapped, d, no_cap, &now);
  assert_gpu_reads (zd, block, "d, once a's registration went");
  fail_unless_equals_int (now, 3 * page);
  gst_buffer_unref (zd);
  gst_buffer_unref (d);
  fail_unless_equals_int (gst_zc_registered_bytes (), 0);

  free (block);
  gst_object_unref (device);
  gst_object_unref (mapped);
  gst_object_unref (ctx);
}

GST_END_TEST;
#endif /* GST_ZC_HAVE_CUDA */

static Suite *
zcmemory_gpu_suite (void)
{
  Suite *s = suite_create ("zcmemory-gpu");
  TCase *tc = zc_test_case ("gpu");

  suite_add_tcase (s, tc);
  tcase_set_timeout (tc, 120);
#if GST_ZC_HAVE_CUDA
  tcase_add_test (tc, test_memory_cpu_map_waits_gpu_fence);
  tcase_add_test (tc, test_managed_memory_cpu_map_waits_gpu_fence);
  tcase_add_test (tc, test_managed_memory_placement);
  tcase_add_test (tc, test_memory_streams_ordered_by_fence);
  tcase_add_test (tc, test_memory_freed_with_gpu_work_pending);
  tcase_add_test (tc, test_wrapped_memory_freed_without_waiting_for_gpu);
  tcase_add_test (tc, test_gpu_memory_types_and_device_pointers);
  tcase_add_test (tc, test_foreign_memories_sharing_pages);
#endif
  return s;
}

/* GST_CHECK_MAIN cannot report "skipped": exit 77 without a GPU */
int
main (int argc, char **argv)
{
  gst_check_init (&argc, &argv);
  if (!zc_test_have_gpu ()) {
    g_print ("zcmemory-gpu: no usable CUDA GPU here; skipped\n");
    return 77;
  }
  return gst_check_run_suite (zcmemory_gpu_suite (), "zcmemory-gpu",
      __FILE__);
}

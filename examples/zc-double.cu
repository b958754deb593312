/* gst-zerocopy example: the classic zero-copy demo, done through the library.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One buffer from the zero-copy allocator: the CPU writes 42 into it, a CUDA
 * kernel doubles every byte in place, the CPU reads 84 back. There is no
 * cudaMemcpy anywhere: the kernel works on the very bytes the CPU wrote,
 * through their device address. The fence rules do the ordering:
 *
 *   gst_zc_memory_prepare_gpu()   the stream waits for earlier GPU work on
 *                                 the memory (and managed memory moves in)
 *   kernel<<<..., stream>>>       queued; the CPU does not wait
 *   gst_zc_memory_set_gpu_fence() the fence is recorded after the kernel
 *   gst_memory_map()              the CPU waits on that fence, nothing else
 *
 * Build: part of the project (build/examples/zc-double). Run it on a machine
 * with a CUDA GPU; without one it says so and exits 77 (skipped).
 */
/* nvcc before 12 defines __noinline__ as a macro, which GLib 2.74's
 * __has_attribute(__noinline__) test cannot take: keep it out of the way
 * while GLib's headers are read. */
#pragma push_macro("__noinline__")
#undef __noinline__
#include <gst/gst.h>
#include <gst/zerocopy/zerocopy.h>
#pragma pop_macro("__noinline__")

#include <cuda_runtime_api.h>

#include <cstdio>

__global__ void
double_bytes (unsigned char *data, size_t n)
{
  size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x;
  if (i < n)
    data[i] = (unsigned char) (data[i] * 2);
}

int
main (int argc, char **argv)
{
  const gsize n = 1 << 20;
  GError *err = NULL;

  gst_init (&argc, &argv);
  gst_zc_memory_init_once ();

  GstZcContext *ctx = gst_zc_context_new (-1, &err);
  if (!ctx) {
    g_printerr ("zc-double: %s\n", err->message);
    return 1;
  }
  if (!gst_zc_context_has_gpu (ctx)) {
    g_print ("zc-double: no CUDA GPU here (%s): nothing to show\n",
        gst_zc_context_get_no_gpu_reason (ctx));
    gst_object_unref (ctx);
    return 77;
  }

  GstAllocator *alloc = gst_zc_allocator_new (ctx, GST_ZC_MEMORY_TYPE_AUTO);
  GstMemory *mem = gst_allocator_alloc (alloc, n, NULL);
  auto *zmem = (GstZcMemory *) mem;
  g_print ("device: %s, memory: %s, %" G_GSIZE_FORMAT " bytes\n",
      gst_zc_context_get_device_name (ctx),
      gst_zc_memory_type_to_string (gst_zc_memory_get_memory_type (zmem)), n);

  /* 1. the CPU writes */
  GstMapInfo map;
  gst_memory_map (mem, &map, GST_MAP_WRITE);
  memset (map.data, 42, map.size);
  gst_memory_unmap (mem, &map);

  /* 2. the GPU doubles in place, on the same bytes */
  cudaStream_t stream = (cudaStream_t) gst_zc_context_new_stream (ctx);
  int rc = 1;
  if (stream && gst_zc_memory_prepare_gpu (zmem, stream)) {
    auto *dev = (unsigned char *) gst_zc_memory_get_device_pointer (zmem);
    double_bytes <<< (unsigned) ((n + 255) / 256), 256, 0, stream >>> (dev, n);
    cudaError_t e = cudaGetLastError ();
    if (e != cudaSuccess) {
      g_printerr ("zc-double: kernel launch: %s\n", cudaGetErrorString (e));
    } else if (gst_zc_memory_set_gpu_fence (zmem, stream)) {
      /* 3. the CPU reads: the map waits on the kernel's fence */
      if (gst_memory_map (mem, &map, GST_MAP_READ)) {
        gsize bad = 0;
        for (gsize i = 0; i < map.size; i++)
          bad += map.data[i] != 84;
        g_print ("first byte %u, last byte %u, %" G_GSIZE_FORMAT
            " bytes not 84: %s (no cudaMemcpy)\n", map.data[0],
            map.data[map.size - 1], bad, bad ? "FAILED" : "OK");
        rc = bad ? 1 : 0;
        gst_memory_unmap (mem, &map);
      } else {
        g_printerr ("zc-double: the GPU work failed (map refused)\n");
      }
    }
  } else {
    g_printerr ("zc-double: could not set up the stream\n");
  }

  gst_zc_context_free_stream (ctx, stream);
  gst_memory_unref (mem);
  gst_object_unref (alloc);
  gst_object_unref (ctx);
  return rc;
}

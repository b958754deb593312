/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/**
 * SECTION:gstzcmemory
 * @title: GstZcMemory
 * @short_description: memory the CPU and the GPU share without copies
 *
 * #GstZcAllocator hands out #GstZcMemory of one #GstZcMemoryType:
 *
 * - mapped: `cudaHostAlloc (cudaHostAllocMapped | cudaHostAllocPortable)`;
 *   kernels read and write it over the bus, in place.
 * - managed: `cudaMallocManaged`; where the device allows concurrent managed
 *   access it stays on the host, mapped into the GPU, which reaches it over
 *   the bus in place (GST_ZC_MANAGED_PLACEMENT=prefetch: prefetched to the
 *   GPU before kernels and back to the CPU before a CPU map, instead);
 *   elsewhere (older Jetsons) it is attached to the working stream for the
 *   kernels and back to the host after them.
 * - system: page-aligned host memory for the CPU backend.
 * - device: `cudaMalloc`; a CPU map copies it into a pinned staging buffer
 *   (allocated at the first map and kept with the memory) after the fence,
 *   and a write map copies it back at unmap, fenced.
 *
 * Fence rules: a GPU user calls gst_zc_memory_prepare_gpu() on its stream
 * before its kernels (the stream waits on the memory's fence; the host does
 * not) and gst_zc_memory_set_gpu_fence() after them. A CPU map waits on the
 * fence, and on nothing else.
 */
/*
 * This unit is the memory object: its block, its fence and its maps. The
 * allocator (gstzcallocator.cpp) sizes and aligns blocks, owns the streams
 * and events memories share, and gives wrapped bytes back; it calls into
 * this unit, never the reverse.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcmemory-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

GST_DEBUG_CATEGORY (gst_zc_memory_debug);
#define GST_CAT_DEFAULT gst_zc_memory_debug

static inline GstZcMemory *
root_of (GstZcMemory * mem)
{
  return mem->mem.parent ? (GstZcMemory *) mem->mem.parent : mem;
}

/* ---------------------------------------------------------------------- */
/* Raw allocations, one pair per memory type                              */
/* ---------------------------------------------------------------------- */

/* What the blocks of each type add up to (gst_zc_memory_get_bytes_in_use()),
 * device memory's pinned staging copies under mapped memory */
static std::atomic < guint64 > bytes_in_use[GST_ZC_MEMORY_TYPE_DEVICE + 1];

/* Managed blocks prefetched to the GPU or back to the host
 * (gst_zc_memory_get_migrations()) */
static std::atomic < guint64 > migrations (0);

/* System blocks from this size on are mapped for themselves */
static const gsize kMappedBlockMin = 64 * 1024;

static void
count_block (GstZcMemoryType type, gsize bytes, bool allocated)
{
  if ((int) type < 0 || type > GST_ZC_MEMORY_TYPE_DEVICE)
    return;
  if (allocated)
    bytes_in_use[type].fetch_add (bytes);
  else
    bytes_in_use[type].fetch_sub (bytes);
}

/* ---------------------------------------------------------------------- */
/* The cap on host memory, and why the last allocation failed             */
/* ---------------------------------------------------------------------- */

/* 0: no cap. Set from GST_ZC_PINNED_LIMIT on first use. */
static std::atomic < guint64 > pinned_limit (0);
static std::once_flag pinned_limit_once;
/* bytes allowed under the cap but not yet counted (allocations under way) */
static std::mutex budget_lock;
static guint64 host_reserved = 0;

static thread_local GstZcAllocFailure last_alloc_failure;

/* foreign memory registered with CUDA (gstzcforeign.cpp counts it here) */
static std::atomic < guint64 > registered_bytes (0);

void
gst_zc_memory_count_registered (gsize bytes, gboolean registered)
{
  if (registered)
    registered_bytes.fetch_add (bytes);
  else
    registered_bytes.fetch_sub (bytes);
}

guint64
gst_zc_memory_get_registered_bytes (void)
{
  return registered_bytes.load ();
}

/* "512M", "64MiB", "1G", "1048576": bytes; FALSE when it does not parse */
static gboolean
parse_bytes (const gchar * text, guint64 * bytes)
{
  gchar *end = nullptr;
  errno = 0;
  guint64 n = g_ascii_strtoull (text, &end, 10);
  if (errno || end == text)
    return FALSE;
  guint64 unit = 1;
  switch (g_ascii_toupper (*end)) {
    case 'K':
      unit = G_GUINT64_CONSTANT (1) << 10;
      end++;
      break;
    case 'M':
      unit = G_GUINT64_CONSTANT (1) << 20;
      end++;
      break;
    case 'G':
      unit = G_GUINT64_CONSTANT (1) << 30;
      end++;
      break;
    default:
      break;
  }
  if (unit > 1 && (g_str_equal (end, "iB") || g_str_equal (end, "B")))
    end += g_str_equal (end, "iB") ? 2 : 1;
  if (*end || (n && unit > G_MAXUINT64 / n))
    return FALSE;
  *bytes = n * unit;
  return TRUE;
}

static void
read_pinned_limit_env (void)
{
  const gchar *env = g_getenv ("GST_ZC_PINNED_LIMIT");
  guint64 bytes = 0;
  if (!env || !*env)
    return;
  if (!parse_bytes (env, &bytes)) {
    g_warning ("GST_ZC_PINNED_LIMIT=\"%s\" is not a size (bytes, or a "
        "number with K, M or G): no cap", env);
    return;
  }
  pinned_limit.store (bytes);
}

/* The host memory the cap covers: pinned (mapped) blocks, registered
 * foreign memory, and the CPU backend's system blocks, which stand in for
 * pinned memory where there is no GPU */
static guint64
host_bytes_held (void)
{
  return bytes_in_use[GST_ZC_MEMORY_TYPE_SYSTEM].load () +
      bytes_in_use[GST_ZC_MEMORY_TYPE_MAPPED].load () +
      registered_bytes.load ();
}

void
gst_zc_memory_note_alloc_failure (GstZcMemoryType type, gsize bytes,
    const gchar * call, const gchar * reason, gboolean over_limit)
{
  GstZcAllocFailure & f = last_alloc_failure;
  f.valid = TRUE;
  f.type = type;
  f.bytes = bytes;
  f.call = call;
  f.reason = reason;
  f.over_limit = over_limit;
  f.limit = gst_zc_memory_get_pinned_limit ();
  f.held = (type == GST_ZC_MEMORY_TYPE_SYSTEM ||
      type == GST_ZC_MEMORY_TYPE_MAPPED) ? host_bytes_held () :
      gst_zc_memory_get_bytes_in_use (type);
}

gboolean
gst_zc_memory_take_alloc_failure (GstZcAllocFailure * failure)
{
  const gboolean valid = last_alloc_failure.valid;
  if (valid && failure)
    *failure = last_alloc_failure;
  last_alloc_failure = GstZcAllocFailure ();
  return valid;
}

/* Takes @bytes of the cap for an allocation under way: FALSE (and the
 * failure noted) when they do not fit; *reserved says whether to give them
 * back with release_host() */
static gboolean
reserve_host (GstZcMemoryType type, gsize bytes, gboolean * reserved)
{
  *reserved = FALSE;
  const guint64 limit = gst_zc_memory_get_pinned_limit ();
  if (!limit)
    return TRUE;
  std::lock_guard < std::mutex > lk (budget_lock);
  if (host_bytes_held () + host_reserved + bytes > limit) {
    gst_zc_memory_note_alloc_failure (type, bytes, "GST_ZC_PINNED_LIMIT",
        "over the cap", TRUE);
    GST_WARNING ("%" G_GSIZE_FORMAT " bytes of %s memory would pass the cap "
        "of %" G_GUINT64_FORMAT " bytes", bytes,
        gst_zc_memory_type_to_string (type), limit);
    return FALSE;
  }
  host_reserved += bytes;
  *reserved = TRUE;
  return TRUE;
}

static void
release_host (gsize bytes, gboolean reserved)
{
  if (!reserved)
    return;
  std::lock_guard < std::mutex > lk (budget_lock);
  host_reserved -= bytes;
}

void
gst_zc_memory_note_cuda_failure (GstZcMemoryType type, gsize bytes)
{
  const gchar *call = nullptr, *name = nullptr, *description = nullptr;
  gst_zc_cuda_last_failure (&call, &name, &description);
  gst_zc_memory_note_alloc_failure (type, bytes, call,
      description ? description : name, FALSE);
}

/**
 * gst_zc_memory_get_pinned_bytes:
 *
 * The host memory of this process that the cap of
 * gst_zc_memory_set_pinned_limit() covers: pinned frames (mapped memory,
 * and the pinned copies CPU maps of device memory keep), foreign memory
 * registered with CUDA, and, on the CPU backend, the system memory of the
 * library's pools, which stands in for pinned memory there.
 *
 * Returns: bytes
 */
guint64
gst_zc_memory_get_pinned_bytes (void)
{
  return host_bytes_held ();
}

/**
 * gst_zc_memory_get_pinned_limit:
 *
 * Returns: the cap on gst_zc_memory_get_pinned_bytes() (from
 *   `GST_ZC_PINNED_LIMIT` or gst_zc_memory_set_pinned_limit()), 0 for none
 */
guint64
gst_zc_memory_get_pinned_limit (void)
{
  std::call_once (pinned_limit_once, read_pinned_limit_env);
  return pinned_limit.load ();
}

/**
 * gst_zc_memory_set_pinned_limit:
 * @bytes: the most host bytes the library may hold, 0 for no cap
 *
 * Caps the pinned host memory of the process (see
 * gst_zc_memory_get_pinned_bytes()), as the environment variable
 * `GST_ZC_PINNED_LIMIT` (bytes, or a number with K, M or G) does when the
 * process starts. Pinned memory cannot be swapped out: a process that takes
 * too much of it slows or stops the whole machine. An allocation that
 * would pass the cap fails: the element whose pool it is posts an ERROR
 * naming the bytes asked for and held; foreign memory that would pass it
 * is copied instead of registered. Memory already held is not given back.
 */
void
gst_zc_memory_set_pinned_limit (guint64 bytes)
{
  std::call_once (pinned_limit_once, read_pinned_limit_env);
  pinned_limit.store (bytes);
}

/* An anonymous file for a shareable block, closed on exec: memfd where the
 * kernel has it (Linux 3.17), else a file of /dev/shm unlinked at once */
static int
memfd_new (void)
{
#ifdef MFD_CLOEXEC
  int fd = memfd_create ("gst-zerocopy", MFD_CLOEXEC);
  if (fd >= 0 || errno != ENOSYS)
    return fd;
#endif
  gchar path[] = "/dev/shm/gst-zerocopy-XXXXXX";
  int tmp = g_mkstemp_full (path, O_RDWR | O_CLOEXEC, 0600);
  if (tmp >= 0)
    unlink (path);
  return tmp;
}

/* A shareable block: the pages of an anonymous file (memfd), which another
 * process maps from the file's descriptor, and for mapped memory
 * registered with CUDA once, for the block's life */
static gboolean
alloc_shared_block (GstZcMemoryPrivate * priv, gsize bytes)
{
  if (priv->type != GST_ZC_MEMORY_TYPE_SYSTEM &&
      priv->type != GST_ZC_MEMORY_TYPE_MAPPED)
    return FALSE;
  gboolean reserved;
  if (!reserve_host (priv->type, bytes, &reserved))
    return FALSE;
  const char *call = "memfd_create";
  void *p = MAP_FAILED;
  int fd = memfd_new ();
  if (fd >= 0) {
    call = "ftruncate";
    if (ftruncate (fd, (off_t) bytes) == 0) {
      call = "mmap";
      p = mmap (nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
  }
  if (p == MAP_FAILED) {
    gst_zc_memory_note_alloc_failure (priv->type, bytes, call,
        g_strerror (errno), FALSE);
    if (fd >= 0)
      close (fd);
    release_host (bytes, reserved);
    return FALSE;
  }
#if GST_ZC_HAVE_CUDA
  if (priv->type == GST_ZC_MEMORY_TYPE_MAPPED) {
    gst_zc::DeviceScope scope (priv->device_id);
    if (!scope.ok () || !GST_ZC_CUDA_OK_OR_FAULT (HOST_REGISTER,
            cudaHostRegister (p, bytes,
                cudaHostRegisterMapped | cudaHostRegisterPortable))) {
      gst_zc_memory_note_cuda_failure (priv->type, bytes);
      munmap (p, bytes);
      close (fd);
      release_host (bytes, reserved);
      return FALSE;
    }
  }
#endif
  priv->alloc_base = p;
  priv->alloc_bytes = bytes;
  priv->fd = fd;
  count_block (priv->type, bytes, true);
  release_host (bytes, reserved);
  return TRUE;
}

#if GST_ZC_HAVE_CUDA
/* Managed memory on a device with concurrent managed access stays on the
 * host, mapped into the GPU (preferred location the CPU, accessed by the
 * device): a kernel reads and writes it over the bus in place, as it does
 * mapped memory, and a CPU map waits on the fence alone. On every machine
 * start that measured both, that was as fast as prefetching or faster (on
 * an H100, 2.7-4.8x: docs/performance.md). GST_ZC_MANAGED_PLACEMENT=prefetch
 * migrates it instead, to the GPU before kernels and back before a CPU map,
 * two transfers of the whole frame: what pays for a kernel that makes many
 * passes over each frame. */
static bool
managed_on_host_wanted (void)
{
  static const bool wanted = [] {
    const gchar *env = g_getenv ("GST_ZC_MANAGED_PLACEMENT");
    if (env && !g_str_equal (env, "host") && !g_str_equal (env, "prefetch"))
      GST_WARNING ("GST_ZC_MANAGED_PLACEMENT=%s: not host or prefetch, "
          "managed memory stays on the host", env);
    return !env || !g_str_equal (env, "prefetch");
  } ();
  return wanted;
}

/* CUDA 13 names a place by a cudaMemLocation, earlier toolkits by an int
 * (cudaCpuDeviceId for the host) */
#if CUDART_VERSION >= 13000
static cudaMemLocation
location_of (int device)
{
  cudaMemLocation loc = { };
  if (device == cudaCpuDeviceId) {
    loc.type = cudaMemLocationTypeHost;
    loc.id = 0;
  } else {
    loc.type = cudaMemLocationTypeDevice;
    loc.id = device;
  }
  return loc;
}

static cudaError_t
advise (void *ptr, size_t bytes, cudaMemoryAdvise advice, int device)
{
  return cudaMemAdvise (ptr, bytes, advice, location_of (device));
}

static cudaError_t
prefetch (void *ptr, size_t bytes, int device, cudaStream_t stream)
{
  return cudaMemPrefetchAsync (ptr, bytes, location_of (device), 0, stream);
}
#else
static cudaError_t
advise (void *ptr, size_t bytes, cudaMemoryAdvise advice, int device)
{
  return cudaMemAdvise (ptr, bytes, advice, device);
}

static cudaError_t
prefetch (void *ptr, size_t bytes, int device, cudaStream_t stream)
{
  return cudaMemPrefetchAsync (ptr, bytes, device, stream);
}
#endif
#endif

gboolean
gst_zc_memory_alloc_block (GstZcMemoryPrivate * priv, gsize bytes)
{
  if (priv->shareable)
    return alloc_shared_block (priv, bytes);
  switch (priv->type) {
    case GST_ZC_MEMORY_TYPE_SYSTEM:{
      /* A frame-sized block straight from the kernel, given back on free:
       * from the heap, pools of frames made and dropped at each start or
       * renegotiation leave it fragmented (glibc raises its mmap threshold
       * after the first frees), and the process's RSS grows with every
       * state cycle. Small blocks stay on the heap. */
      void *p = nullptr;
      gboolean reserved;
      if (!reserve_host (priv->type, bytes, &reserved))
        return FALSE;
      if (bytes >= kMappedBlockMin) {
        p = mmap (nullptr, bytes, PROT_READ | PROT_WRITE,
            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
          gst_zc_memory_note_alloc_failure (priv->type, bytes, "mmap",
              g_strerror (errno), FALSE);
          release_host (bytes, reserved);
          return FALSE;
        }
      } else {
        const int err = posix_memalign (&p, 4096, bytes);
        if (err != 0) {
          gst_zc_memory_note_alloc_failure (priv->type, bytes,
              "posix_memalign", g_strerror (err), FALSE);
          release_host (bytes, reserved);
          return FALSE;
        }
      }
      priv->alloc_base = p;
      priv->alloc_bytes = bytes;
      count_block (priv->type, bytes, true);
      release_host (bytes, reserved);
      return TRUE;
    }
#if GST_ZC_HAVE_CUDA
    case GST_ZC_MEMORY_TYPE_MAPPED:{
      gst_zc::DeviceScope scope (priv->device_id);
      void *p = nullptr;
      gboolean reserved;
      if (!reserve_host (priv->type, bytes, &reserved))
        return FALSE;
      if (!scope.ok () || !GST_ZC_CUDA_OK_OR_FAULT (HOST_ALLOC,
              cudaHostAlloc (&p, bytes,
                  cudaHostAllocMapped | cudaHostAllocPortable))) {
        gst_zc_memory_note_cuda_failure (priv->type, bytes);
        release_host (bytes, reserved);
        return FALSE;
      }
      priv->alloc_base = p;
      priv->alloc_bytes = bytes;
      count_block (priv->type, bytes, true);
      release_host (bytes, reserved);
      return TRUE;
    }
    case GST_ZC_MEMORY_TYPE_MANAGED:{
      gst_zc::DeviceScope scope (priv->device_id);
      void *p = nullptr;
      if (!scope.ok () ||
          !GST_ZC_CUDA_OK_OR_FAULT (DEVICE_ALLOC,
              cudaMallocManaged (&p, bytes,
                  priv->concurrent_managed ? cudaMemAttachGlobal :
                  cudaMemAttachHost))) {
        gst_zc_memory_note_cuda_failure (priv->type, bytes);
        return FALSE;
      }
      /* Kept on the host and mapped into the GPU: advice only, so a
       * failure leaves the memory usable, migrating on faults */
      if (priv->concurrent_managed && managed_on_host_wanted ()) {
        priv->managed_on_host =
            GST_ZC_CUDA_OK (advise (p, bytes, cudaMemAdviseSetPreferredLocation,
                cudaCpuDeviceId)) &&
            GST_ZC_CUDA_OK (advise (p, bytes, cudaMemAdviseSetAccessedBy,
                priv->device_id));
        if (!priv->managed_on_host)
          GST_WARNING ("managed block of %" G_GSIZE_FORMAT " bytes could "
              "not be kept on the host: it migrates to the GPU and back "
              "each frame", bytes);
      }
      priv->alloc_base = p;
      priv->alloc_bytes = bytes;
      count_block (priv->type, bytes, true);
      return TRUE;
    }
    case GST_ZC_MEMORY_TYPE_DEVICE:{
      gst_zc::DeviceScope scope (priv->device_id);
      void *p = nullptr;
      if (!scope.ok () || !GST_ZC_CUDA_OK_OR_FAULT (DEVICE_ALLOC,
              cudaMalloc (&p, bytes))) {
        gst_zc_memory_note_cuda_failure (priv->type, bytes);
        return FALSE;
      }
      priv->alloc_base = p;
      priv->alloc_bytes = bytes;
      count_block (priv->type, bytes, true);
      return TRUE;
    }
#endif
    default:
      return FALSE;
  }
}

static void free_own_block (GstZcMemoryPrivate * priv);

void
gst_zc_memory_free_block (GstZcMemoryPrivate * priv)
{
#if GST_ZC_HAVE_CUDA
  if (priv->staging) {
    gst_zc::DeviceScope scope (priv->device_id);
    GST_ZC_CUDA_OK (cudaFreeHost (priv->staging));
    priv->staging = nullptr;
    count_block (GST_ZC_MEMORY_TYPE_MAPPED, priv->block_size, false);
  }
#endif
  if (!priv->alloc_base)
    return;
  if (priv->fd >= 0) {
#if GST_ZC_HAVE_CUDA
    if (priv->type == GST_ZC_MEMORY_TYPE_MAPPED) {
      gst_zc::DeviceScope scope (priv->device_id);
      GST_ZC_CUDA_OK (cudaHostUnregister (priv->alloc_base));
    }
#endif
    munmap (priv->alloc_base, priv->alloc_bytes);
    close (priv->fd);
    priv->fd = -1;
  } else {
    free_own_block (priv);
  }
  count_block (priv->type, priv->alloc_bytes, false);
  priv->alloc_base = nullptr;
  priv->alloc_bytes = 0;
}

/* What gst_zc_memory_alloc_block() took from the system or CUDA */
static void
free_own_block (GstZcMemoryPrivate * priv)
{
  switch (priv->type) {
#if GST_ZC_HAVE_CUDA
    case GST_ZC_MEMORY_TYPE_MAPPED:{
      gst_zc::DeviceScope scope (priv->device_id);
      GST_ZC_CUDA_OK (cudaFreeHost (priv->alloc_base));
      break;
    }
    case GST_ZC_MEMORY_TYPE_MANAGED:
    case GST_ZC_MEMORY_TYPE_DEVICE:{
      gst_zc::DeviceScope scope (priv->device_id);
      GST_ZC_CUDA_OK (cudaFree (priv->alloc_base));
      break;
    }
#endif
    default:
      if (priv->alloc_bytes >= kMappedBlockMin)
        munmap (priv->alloc_base, priv->alloc_bytes);
      else
        free (priv->alloc_base);
      break;
  }
}

/* ---------------------------------------------------------------------- */
/* Fences                                                                 */
/* ---------------------------------------------------------------------- */

/**
 * gst_zc_memory_wait_cpu:
 * @mem: a #GstZcMemory
 *
 * Blocks until the GPU work fenced on @mem is done and, for managed memory,
 * until its pages are back on the CPU. gst_memory_map() does this itself.
 *
 * Returns: %FALSE if the GPU reported an error
 */
gboolean
gst_zc_memory_wait_cpu (GstZcMemory * mem)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), FALSE);
#if GST_ZC_HAVE_CUDA
  GstZcMemory *root = root_of (mem);
  GstZcMemoryPrivate *priv = root->priv;
  if (priv->type == GST_ZC_MEMORY_TYPE_SYSTEM)
    return TRUE;

  std::lock_guard < std::mutex > lk (priv->lock);
  if (!priv->fence_pending && !priv->on_gpu)
    return TRUE;

  gst_zc::DeviceScope scope (priv->device_id);
  if (!scope.ok ())
    return FALSE;
  if (priv->on_gpu) {
    /* The prefetch back waits on the GPU work, then the fence covers both */
    cudaStream_t ts = priv->transfer_stream;
    if (priv->fence_pending &&
        !GST_ZC_CUDA_OK (cudaStreamWaitEvent (ts, priv->fence, 0)))
      return FALSE;
    if (!GST_ZC_CUDA_OK (prefetch (priv->host, priv->block_size,
                cudaCpuDeviceId, ts)) ||
        !GST_ZC_CUDA_OK (cudaEventRecord (priv->fence, ts)))
      return FALSE;
    migrations.fetch_add (1);
    priv->on_gpu = false;
    priv->fence_pending = true;
  }
  if (!GST_ZC_CUDA_OK (gst_zc_fence_wait (priv->fence)))
    return FALSE;
  priv->fence_pending = false;
#else
  (void) mem;
#endif
  return TRUE;
}

/**
 * gst_zc_memory_prepare_gpu:
 * @mem: a #GstZcMemory
 * @stream: the `cudaStream_t` the caller's kernels will run on
 *
 * Orders @stream after the GPU work already fenced on @mem, without blocking
 * the host, and brings managed memory to the GPU where it migrates
 * (GST_ZC_MANAGED_PLACEMENT=prefetch; stream attachment where the device
 * cannot share managed memory concurrently).
 * Call it before launching kernels that touch @mem.
 *
 * Returns: %FALSE if a CUDA call failed (logged)
 */
gboolean
gst_zc_memory_prepare_gpu (GstZcMemory * mem, gpointer stream)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), FALSE);
#if GST_ZC_HAVE_CUDA
  GstZcMemoryPrivate *priv = root_of (mem)->priv;
  auto s = (cudaStream_t) stream;
  if (priv->type == GST_ZC_MEMORY_TYPE_SYSTEM)
    return FALSE;

  std::lock_guard < std::mutex > lk (priv->lock);
  gst_zc::DeviceScope scope (priv->device_id);
  if (!scope.ok ())
    return FALSE;
  if (priv->fence_pending &&
      !GST_ZC_CUDA_OK (cudaStreamWaitEvent (s, priv->fence, 0)))
    return FALSE;
  if (priv->type == GST_ZC_MEMORY_TYPE_MANAGED && !priv->managed_on_host) {
    if (priv->concurrent_managed) {
      if (!priv->on_gpu) {
        if (!GST_ZC_CUDA_OK (prefetch (priv->host, priv->block_size,
                    priv->device_id, s)))
          return FALSE;
        migrations.fetch_add (1);
        priv->on_gpu = true;
      }
    } else if (!GST_ZC_CUDA_OK (cudaStreamAttachMemAsync (s, priv->host, 0,
                cudaMemAttachSingle))) {
      return FALSE;
    }
  }
  return TRUE;
#else
  (void) mem;
  (void) stream;
  return FALSE;
#endif
}

/**
 * gst_zc_memory_set_gpu_fence:
 * @mem: a #GstZcMemory
 * @stream: the `cudaStream_t` the caller's kernels ran on
 *
 * Records @mem's fence after the work queued on @stream: CPU maps and later
 * GPU users wait on it. Call it after the kernels that read or write @mem,
 * reads included, so the producer does not overwrite bytes a kernel is
 * still reading.
 *
 * Returns: %FALSE if a CUDA call failed (logged)
 */
gboolean
gst_zc_memory_set_gpu_fence (GstZcMemory * mem, gpointer stream)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), FALSE);
#if GST_ZC_HAVE_CUDA
  GstZcMemoryPrivate *priv = root_of (mem)->priv;
  auto s = (cudaStream_t) stream;
  if (priv->type == GST_ZC_MEMORY_TYPE_SYSTEM)
    return FALSE;

  std::lock_guard < std::mutex > lk (priv->lock);
  gst_zc::DeviceScope scope (priv->device_id);
  if (!scope.ok ())
    return FALSE;
  /* Without concurrent managed access the CPU may not touch memory attached
   * to a stream with work queued: hand it back to the host once done. */
  if (priv->type == GST_ZC_MEMORY_TYPE_MANAGED && !priv->concurrent_managed &&
      !GST_ZC_CUDA_OK (cudaStreamAttachMemAsync (s, priv->host, 0,
              cudaMemAttachHost)))
    return FALSE;
  if (!GST_ZC_CUDA_OK (cudaEventRecord (priv->fence, s)))
    return FALSE;
  priv->fence_pending = true;
  return TRUE;
#else
  (void) mem;
  (void) stream;
  return FALSE;
#endif
}

/* ---------------------------------------------------------------------- */
/* CPU maps and sub-memories                                              */
/* ---------------------------------------------------------------------- */

#if GST_ZC_HAVE_CUDA
/* Device memory seen by the CPU: after the fence, the block is copied into
 * a pinned staging buffer that the memory keeps (allocated at its first
 * map, so not per frame once a pool is warm). */
static gpointer
map_device_memory (GstZcMemory * root)
{
  GstZcMemoryPrivate *priv = root->priv;
  cudaStream_t ts = priv->transfer_stream;

  std::lock_guard < std::mutex > lk (priv->lock);
  gst_zc::DeviceScope scope (priv->device_id);
  if (!scope.ok ())
    return NULL;
  if (!priv->staging) {
    if (!GST_ZC_CUDA_OK_OR_FAULT (HOST_ALLOC,
            cudaHostAlloc (&priv->staging, priv->block_size,
                cudaHostAllocPortable)))
      return NULL;
    count_block (GST_ZC_MEMORY_TYPE_MAPPED, priv->block_size, true);
  }
  if (priv->fence_pending &&
      !GST_ZC_CUDA_OK (cudaStreamWaitEvent (ts, priv->fence, 0)))
    return NULL;
  if (!GST_ZC_CUDA_OK (cudaMemcpyAsync (priv->staging, priv->device,
              priv->block_size, cudaMemcpyDeviceToHost, ts)) ||
      !GST_ZC_CUDA_OK (cudaEventRecord (priv->fence, ts)) ||
      !GST_ZC_CUDA_OK (gst_zc_fence_wait (priv->fence)))
    return NULL;
  priv->fence_pending = false;
  return priv->staging;
}

/* A write map of device memory goes back at unmap; the fence orders the
 * next GPU user after the copy, without blocking here. */
static void
unmap_device_memory (GstZcMemory * root)
{
  GstZcMemoryPrivate *priv = root->priv;
  cudaStream_t ts = priv->transfer_stream;

  std::lock_guard < std::mutex > lk (priv->lock);
  gst_zc::DeviceScope scope (priv->device_id);
  if (scope.ok () &&
      GST_ZC_CUDA_OK (cudaMemcpyAsync (priv->device, priv->staging,
              priv->block_size, cudaMemcpyHostToDevice, ts)) &&
      GST_ZC_CUDA_OK (cudaEventRecord (priv->fence, ts)))
    priv->fence_pending = true;
}
#endif

gpointer
gst_zc_memory_map_full (GstMemory * memory, GstMapInfo * info, gsize)
{
  auto *mem = (GstZcMemory *) memory;
  GstZcMemory *root = root_of (mem);
  (void) info;

#if GST_ZC_HAVE_CUDA
  if (root->priv->type == GST_ZC_MEMORY_TYPE_DEVICE) {
    gpointer p = map_device_memory (root);
    if (!p)
      GST_ERROR ("%p: could not copy device memory for the CPU", memory);
    return p;
  }
#endif
  if (!gst_zc_memory_wait_cpu (mem)) {
    GST_ERROR ("%p: GPU work on this memory failed; refusing the CPU map",
        memory);
    return NULL;
  }
  return root->priv->host;
}

void
gst_zc_memory_unmap_full (GstMemory * memory, GstMapInfo * info)
{
#if GST_ZC_HAVE_CUDA
  GstZcMemory *root = root_of ((GstZcMemory *) memory);
  if (root->priv->type == GST_ZC_MEMORY_TYPE_DEVICE &&
      (info->flags & GST_MAP_WRITE))
    unmap_device_memory (root);
#else
  (void) memory;
  (void) info;
#endif
}

GstMemory *
gst_zc_memory_share (GstMemory * memory, gssize offset, gssize size)
{
  auto *mem = (GstZcMemory *) memory;
  GstMemory *parent = memory->parent ? memory->parent : memory;

  if (size == -1)
    size = memory->size - offset;

  auto *sub = g_new0 (GstZcMemory, 1);
  sub->priv = root_of (mem)->priv;
  gst_memory_init (GST_MEMORY_CAST (sub),
      (GstMemoryFlags) (GST_MINI_OBJECT_FLAGS (parent) |
          GST_MINI_OBJECT_FLAG_LOCK_READONLY), memory->allocator, parent,
      memory->maxsize, memory->align, memory->offset + offset, size);
  return GST_MEMORY_CAST (sub);
}

gboolean
gst_zc_memory_is_span (GstMemory * mem1, GstMemory * mem2, gsize * offset)
{
  if (mem1->parent != mem2->parent || !mem1->parent)
    return FALSE;
  if (offset)
    *offset = mem1->offset - mem1->parent->offset;
  return mem1->offset + mem1->size == mem2->offset;
}

/**
 * gst_is_zc_memory:
 * @mem: (nullable): a #GstMemory
 *
 * Returns: whether @mem is a #GstZcMemory
 */
gboolean
gst_is_zc_memory (GstMemory * mem)
{
  /* by the allocator's memory type, as gst_is_dmabuf_memory() does: the
   * memory unit sits below the allocator's and does not ask for its GType */
  return mem && mem->allocator &&
      g_strcmp0 (mem->allocator->mem_type, GST_ZC_ALLOCATOR_NAME) == 0;
}

/**
 * gst_zc_buffer_is_zc:
 * @buffer: a #GstBuffer
 * @context: the context of the element asking
 *
 * Returns: whether every memory of @buffer is a #GstZcMemory that @context's
 *   device (or, for the CPU backend, the CPU) can work on directly: GPU
 *   memory of that very device, or system memory for the CPU backend
 */
gboolean
gst_zc_buffer_is_zc (GstBuffer * buffer, GstZcContext * context)
{
  guint n = gst_buffer_n_memory (buffer);
  gint dev = gst_zc_context_get_device_id (context);
  gboolean gpu = gst_zc_context_has_gpu (context);

  if (n == 0)
    return FALSE;
  for (guint i = 0; i < n; i++) {
    GstMemory *m = gst_buffer_peek_memory (buffer, i);
    if (!gst_is_zc_memory (m))
      return FALSE;
    GstZcMemoryPrivate *priv = root_of ((GstZcMemory *) m)->priv;
    if (gpu) {
      /* Portable pinned memory is addressable from every device, but its
       * fence is an event of the device it was allocated for, and events
       * are recorded on streams of their own device only. */
      if (priv->type == GST_ZC_MEMORY_TYPE_SYSTEM || priv->device_id != dev)
        return FALSE;
    } else if (priv->type != GST_ZC_MEMORY_TYPE_SYSTEM) {
      return FALSE;
    }
  }
  return TRUE;
}

/**
 * gst_zc_memory_get_device_pointer:
 * @mem: (type Gst.Memory): a #GstZcMemory
 *
 * The address kernels use for the memory's first byte (its offset applied).
 * For system memory, the host address. Order GPU work on it with
 * gst_zc_memory_prepare_gpu() and gst_zc_memory_set_gpu_fence().
 *
 * Returns: (transfer none): the device address
 */
gpointer
gst_zc_memory_get_device_pointer (GstZcMemory * mem)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), NULL);
  return root_of (mem)->priv->device + mem->mem.offset;
}

void
gst_zc_memory_set_seams (GstMemory * mem, const guint8 * const *seams, guint n)
{
  g_return_if_fail (gst_is_zc_memory (mem));
  g_return_if_fail (n <= GST_ZC_MAX_SEAMS);
  GstZcMemoryPrivate *priv = root_of ((GstZcMemory *) mem)->priv;
  for (guint i = 0; i < n; i++)
    priv->seams[i] = seams[i];
  priv->n_seams = n;
}

gboolean
gst_zc_memory_is_wrapped (GstZcMemory * mem)
{
  return root_of (mem)->priv->release != nullptr;
}

gboolean
gst_zc_memory_is_over_bus (GstZcMemory * mem)
{
  const GstZcMemoryPrivate *priv = root_of (mem)->priv;
#if GST_ZC_HAVE_CUDA
  return priv->type == GST_ZC_MEMORY_TYPE_MAPPED ||
      (priv->type == GST_ZC_MEMORY_TYPE_MANAGED && priv->managed_on_host);
#else
  (void) priv;
  return FALSE;                 /* no GPU to reach it */
#endif
}

guint
gst_zc_memory_get_seams (GstZcMemory * mem, const guint8 * const **seams)
{
  GstZcMemoryPrivate *priv = root_of (mem)->priv;
  *seams = priv->seams;
  return priv->n_seams;
}

/**
 * gst_zc_memory_get_host_pointer:
 * @mem: (type Gst.Memory): a #GstZcMemory
 *
 * The CPU address of the memory's first byte, without any fence wait: only
 * for callers that order access themselves. Others map the memory.
 *
 * Returns: (transfer none) (nullable): the host address, %NULL for device
 *   memory (the CPU reaches it only by mapping)
 */
gpointer
gst_zc_memory_get_host_pointer (GstZcMemory * mem)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), NULL);
  guint8 *host = root_of (mem)->priv->host;
  return host ? host + mem->mem.offset : NULL;
}

/**
 * gst_zc_memory_get_fd:
 * @mem: (type Gst.Memory): a #GstZcMemory
 * @offset: (out) (optional): where the memory's block (the start of its
 *   maxsize bytes, before #GstMemory.offset) lies in the file
 *
 * The file of a shareable memory (gst_zc_allocator_new_shareable()): an
 * anonymous file (memfd) whose pages are the memory's, which another
 * process maps from the descriptor (`unixfdsink` sends it). The descriptor
 * stays the memory's: dup() it to keep it past the memory's life.
 *
 * Returns: the file descriptor, or -1 for memory that is not shareable
 */
gint
gst_zc_memory_get_fd (GstZcMemory * mem, gsize * offset)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), -1);
  GstZcMemoryPrivate *priv = root_of (mem)->priv;
  if (offset)
    *offset = priv->fd >= 0 ? (gsize) (priv->host -
        (guint8 *) priv->alloc_base) : 0;
  return priv->fd;
}

/**
 * gst_zc_memory_get_migrations:
 *
 * How many times this process's managed blocks were moved between the
 * host and the GPU: each prefetch of a block to the GPU before kernels,
 * and each back to the host before a CPU map. Managed memory kept on the
 * host and mapped into the GPU (the default where the device shares
 * managed memory concurrently) counts none; with
 * GST_ZC_MANAGED_PLACEMENT=prefetch a frame that a kernel works on and the
 * CPU then reads counts two. Page faults the driver serves by itself are
 * not counted.
 *
 * Returns: the count since the process started
 */
guint64
gst_zc_memory_get_migrations (void)
{
  return migrations.load ();
}

/**
 * gst_zc_memory_get_bytes_in_use:
 * @memory_type: a memory type (%GST_ZC_MEMORY_TYPE_AUTO gives 0)
 *
 * How many bytes of @memory_type the library's allocators hold in this
 * process now: the blocks of every live #GstZcMemory of that type, in
 * frames in flight and in the pools' free buffers alike. For
 * %GST_ZC_MEMORY_TYPE_MAPPED, all the pinned host memory they hold: mapped
 * frames and the pinned copies that CPU maps of device frames keep. Memory
 * wrapped with gst_zc_memory_new_wrapped() is its owner's, not counted.
 * Pinned memory cannot be swapped out: this is what the pipelines of the
 * process take from the machine's.
 *
 * Returns: bytes
 */
guint64
gst_zc_memory_get_bytes_in_use (GstZcMemoryType memory_type)
{
  if ((int) memory_type <= GST_ZC_MEMORY_TYPE_AUTO ||
      memory_type > GST_ZC_MEMORY_TYPE_DEVICE)
    return 0;
  return bytes_in_use[memory_type].load ();
}

/**
 * gst_zc_memory_get_memory_type:
 * @mem: (type Gst.Memory): a #GstZcMemory
 *
 * Returns: the type of @mem (never %GST_ZC_MEMORY_TYPE_AUTO)
 */
GstZcMemoryType
gst_zc_memory_get_memory_type (GstZcMemory * mem)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem),
      GST_ZC_MEMORY_TYPE_AUTO);
  return root_of (mem)->priv->type;
}

/**
 * gst_zc_memory_get_device_id:
 * @mem: (type Gst.Memory): a #GstZcMemory
 *
 * Returns: the CUDA device @mem was allocated for, -1 for system memory
 */
gint
gst_zc_memory_get_device_id (GstZcMemory * mem)
{
  g_return_val_if_fail (gst_is_zc_memory ((GstMemory *) mem), -1);
  return root_of (mem)->priv->device_id;
}


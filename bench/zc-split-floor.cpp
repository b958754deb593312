/* gst-zerocopy benchmark: the split chain's GPU work without GStreamer, in
 * one process and in two: what a second CUDA context costs by itself.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * bench/zc-multiprocess.py puts a chain split between two processes
 * (unixfdsink, unixfdsrc) beside the same chain in one. This program runs
 * the same shape of work with the CUDA runtime alone, so that what is left
 * of the gap is the GPU's and not the elements':
 *
 *  - the frames live in one memfd, mapped and registered with CUDA (mapped
 *    pinned memory) by each process that uses them, as the split chain's
 *    pool memory is;
 *  - a producer half converts each NV12 frame to RGBA as zcfilter does
 *    between mapped frames (the input staged in device memory by the copy
 *    engines, on a stream of their own; the conversion kernel writing the
 *    mapped output), a consumer half inverts the RGBA frame in place
 *    (zcfilter's table kernel on mapped memory);
 *  - each half launches on a CUDA stream of its own and hands each frame
 *    on from a second thread once its GPU work is done (as zcdownload
 *    behind a queue does); frames go from producer to consumer, and back
 *    to the producer for reuse, as slot numbers through two pipes; DEPTH
 *    frames are in flight.
 *
 * Modes, alternating RUNS times each (FRAMES frames a run):
 *   one     both halves in this process: one CUDA context, two streams
 *   two     the producer half in a child process (this program again):
 *           two CUDA contexts, which the GPU time-slices
 *   serial  (--serial) both halves in this process on ONE stream: the two
 *           halves' kernels never overlap, one context
 *
 * Prints frames a second at the consumer (first frame done to last), the
 * median and range of each mode, and two's ratio to one. After each run
 * every slot's frame is checked: the inverted conversion of the input.
 *
 *   zc-split-floor [--frames N] [--runs N] [--size WxH] [--depth K]
 *                  [--batch B] [--serial] [--only one|two|serial]
 * --batch hands frames on B at a time (each half's waiting thread writes
 * them once B are done), so that each half gets B frames' work queued at
 * once: whether longer turns of each context close the gap. K >= 2 B.
 * --only runs that mode alone (to trace it: bench/gputrace.py).
 * Exits 77 without a GPU, 1 on a CUDA error, a failed half or wrong bytes.
 */
#include "zc-limits.h"

#include <zcconvert.h>
#include <zcpointops.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <spawn.h>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace {

using Clock = std::chrono::steady_clock;

/* The input: a flat grey, so that every output pixel has one value */
constexpr uint8_t kLuma = 150, kChroma = 128;

struct Options
{
  int frames = 1500;
  int runs = 3;
  int width = 1920, height = 1080;
  int depth = 8;
  int batch = 1;
  bool serial = false;
  std::string only;
};

constexpr size_t
page_round (size_t bytes)
{
  return (bytes + 4095) / 4096 * 4096;
}

/* Where slot i's frames are in the memfd: its NV12 input, then its RGBA
 * output, each at a page boundary */
struct Layout
{
  int width = 0, height = 0, depth = 0;
  size_t nv12_bytes = 0, rgba_bytes = 0, slot_bytes = 0;

  Layout (int w, int h, int k)
      : width (w), height (h), depth (k), nv12_bytes ((size_t)w * h * 3 / 2),
        rgba_bytes ((size_t)w * h * 4),
        slot_bytes (page_round (nv12_bytes) + page_round (rgba_bytes))
  {
  }
  size_t total () const { return slot_bytes * depth; }
  size_t nv12_at (int slot) const { return slot_bytes * slot; }
  size_t rgba_at (int slot) const
  {
    return nv12_at (slot) + page_round (nv12_bytes);
  }
};

/* The memfd's mapping in this process, registered with CUDA for the
 * lifetime of the object */
class SharedFrames
{
public:
  SharedFrames (int fd, const Layout &l) : bytes_ (l.total ())
  {
    void *p = mmap (nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      why_ = std::string ("mmap: ") + strerror (errno);
      return;
    }
    host_ = (uint8_t *)p;
    cudaError_t e = cudaHostRegister (host_, bytes_, cudaHostRegisterMapped);
    if (e != cudaSuccess) {
      why_ = std::string ("cudaHostRegister: ") + cudaGetErrorString (e);
      return;
    }
    registered_ = true;
    void *dev = nullptr;
    e = cudaHostGetDevicePointer (&dev, host_, 0);
    if (e != cudaSuccess)
      why_
          = std::string ("cudaHostGetDevicePointer: ") + cudaGetErrorString (e);
    dev_ = (uint8_t *)dev;
  }
  ~SharedFrames ()
  {
    if (registered_)
      cudaHostUnregister (host_);
    if (host_)
      munmap (host_, bytes_);
  }
  SharedFrames (const SharedFrames &) = delete;
  SharedFrames &operator= (const SharedFrames &) = delete;

  const std::string &why () const { return why_; }
  uint8_t *host () const { return host_; }
  uint8_t *dev () const { return dev_; }

private:
  size_t bytes_;
  uint8_t *host_ = nullptr, *dev_ = nullptr;
  bool registered_ = false;
  std::string why_;
};

/* A half's CUDA objects, destroyed with it: its stream and one event a
 * slot; with @stage_bytes, what zcfilter stages a mapped NV12 input with
 * (lib/gst/zerocopy/gstzcgpupasses.cpp): a stream for the copy engines,
 * two device frames used in turn, and for each an event when it is staged
 * and one when the kernel has read it */
class HalfGpu
{
public:
  HalfGpu (int depth, size_t stage_bytes) : events_ (depth, nullptr)
  {
    if (!new_stream (&stream_))
      return;
    for (auto &e : events_)
      if (!new_event (&e))
        return;
    if (!stage_bytes || !new_stream (&stager_))
      return;
    for (int k = 0; k < 2; k++)
      if (!ok (cudaMalloc ((void **)&stage_[k], stage_bytes), "cudaMalloc")
          || !new_event (&staged_[k]) || !new_event (&consumed_[k]))
        return;
  }
  ~HalfGpu ()
  {
    for (int k = 0; k < 2; k++) {
      if (stage_[k])
        cudaFree (stage_[k]);
      if (staged_[k])
        cudaEventDestroy (staged_[k]);
      if (consumed_[k])
        cudaEventDestroy (consumed_[k]);
    }
    for (auto e : events_)
      if (e)
        cudaEventDestroy (e);
    if (stager_)
      cudaStreamDestroy (stager_);
    if (stream_)
      cudaStreamDestroy (stream_);
  }
  HalfGpu (const HalfGpu &) = delete;
  HalfGpu &operator= (const HalfGpu &) = delete;

  bool ok (cudaError_t e, const char *call)
  {
    if (e != cudaSuccess && why_.empty ())
      why_ = std::string (call) + ": " + cudaGetErrorString (e);
    return e == cudaSuccess;
  }
  const std::string &why () const { return why_; }
  cudaStream_t stream () const { return stream_; }
  cudaEvent_t event (int slot) const { return events_[slot]; }

  /* Queues the copy of @bytes at @src into staged frame @k (after the
   * kernel that last read it) and orders @s after the copy */
  bool stage (int k, const uint8_t *src, size_t bytes, cudaStream_t s)
  {
    return ok (cudaStreamWaitEvent (stager_, consumed_[k], 0),
               "cudaStreamWaitEvent")
           && ok (cudaMemcpyAsync (stage_[k], src, bytes, cudaMemcpyDefault,
                                   stager_),
                  "cudaMemcpyAsync")
           && ok (cudaEventRecord (staged_[k], stager_), "cudaEventRecord")
           && ok (cudaStreamWaitEvent (s, staged_[k], 0),
                  "cudaStreamWaitEvent");
  }
  /* Staged frame @k is free again once the work queued on @s is done */
  bool consumed (int k, cudaStream_t s)
  {
    return ok (cudaEventRecord (consumed_[k], s), "cudaEventRecord");
  }
  uint8_t *staged_frame (int k) const { return stage_[k]; }

private:
  bool new_stream (cudaStream_t *s)
  {
    return ok (cudaStreamCreateWithFlags (s, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags");
  }
  bool new_event (cudaEvent_t *e)
  {
    return ok (cudaEventCreateWithFlags (e, cudaEventDisableTiming),
               "cudaEventCreateWithFlags");
  }

  cudaStream_t stream_ = nullptr, stager_ = nullptr;
  std::vector<cudaEvent_t> events_;
  uint8_t *stage_[2] = { nullptr, nullptr };
  cudaEvent_t staged_[2] = { nullptr, nullptr };
  cudaEvent_t consumed_[2] = { nullptr, nullptr };
  std::string why_;
};

bool
read_slot (int fd, int *slot)
{
  ssize_t n;
  do
    n = read (fd, slot, sizeof *slot);
  while (n < 0 && errno == EINTR);
  return n == (ssize_t)sizeof *slot && *slot >= 0;
}

/* @n slots in one write (at most 64: below PIPE_BUF, so never split) */
bool
write_slots (int fd, const int *slots, int n)
{
  ssize_t r;
  do
    r = write (fd, slots, sizeof *slots * n);
  while (r < 0 && errno == EINTR);
  return r == (ssize_t)(sizeof *slots * n);
}

bool
write_slot (int fd, int slot)
{
  return write_slots (fd, &slot, 1);
}

/* The slots a half's launching thread hands to its waiting thread */
class SlotQueue
{
public:
  void push (int slot)
  {
    std::lock_guard<std::mutex> lk (lock_);
    slots_.push_back (slot);
    cond_.notify_one ();
  }
  int pop ()
  {
    std::unique_lock<std::mutex> lk (lock_);
    cond_.wait (lk, [this] { return !slots_.empty (); });
    int s = slots_.front ();
    slots_.pop_front ();
    return s;
  }

private:
  std::mutex lock_;
  std::condition_variable cond_;
  std::deque<int> slots_;
};

/* One half of the chain: reads a slot from @in_fd, queues its GPU work on
 * its stream, and from a second thread writes the slot to @out_fd once the
 * work is done, @frames times, @batch slots at a time (one write, the
 * last ones possibly fewer). @stream: a stream to share (--serial) or
 * nullptr for one of its own. @done_at: when each frame's work was seen
 * done (the consumer's figures). On failure writes -1 to @out_fd, so that
 * the other half stops too, and returns false with *why set. */
bool
run_half (bool producer, const Layout &l, uint8_t *dev, int in_fd, int out_fd,
          int frames, int batch, cudaStream_t stream,
          std::vector<Clock::time_point> *done_at, std::string *why)
{
  HalfGpu gpu (l.depth, producer ? l.nv12_bytes : 0);
  if (!gpu.why ().empty ()) {
    *why = gpu.why ();
    write_slot (out_fd, -1);
    return false;
  }
  cudaStream_t s = stream ? stream : gpu.stream ();

  zc::FrameDesc in, out;
  in.fmt = zc::PixFmt::NV12;
  out.fmt = zc::PixFmt::RGBA;
  in.width = out.width = l.width;
  in.height = out.height = l.height;
  in.strides[0] = in.strides[1] = (size_t)l.width;
  out.strides[0] = (size_t)l.width * 4;
  out.over_bus = true; /* the input is read from its staged copy */
  zc::ConvertParams params;
  params.sampling = zc::Sampling::Bilinear;
  zc::LutSet luts;
  for (int c = 0; c < 3; c++)
    zc::build_invert_lut (luts.lut[c]);
  zc::build_identity_lut (luts.lut[3]);

  SlotQueue queue;
  std::string wait_why;
  std::thread waiter ([&] {
    int done[64];
    int n_done = 0;
    for (int n = 0; n < frames; n++) {
      const int slot = queue.pop ();
      if (slot < 0)
        break;
      cudaError_t e = cudaEventSynchronize (gpu.event (slot));
      if (e != cudaSuccess) {
        wait_why
            = std::string ("cudaEventSynchronize: ") + cudaGetErrorString (e);
        write_slot (out_fd, -1);
        return;
      }
      if (done_at)
        done_at->push_back (Clock::now ());
      done[n_done++] = slot;
      if (n_done < batch && n + 1 < frames)
        continue;
      if (!write_slots (out_fd, done, n_done)) {
        wait_why = "the other half went away";
        return;
      }
      n_done = 0;
    }
  });

  bool ok = true;
  for (int n = 0; n < frames && ok; n++) {
    int slot;
    if (!read_slot (in_fd, &slot) || slot >= l.depth) {
      *why = "the other half stopped";
      ok = false;
      break;
    }
    uint8_t *rgba = dev + l.rgba_at (slot);
    if (producer) {
      const int k = n % 2;
      in.planes[0] = gpu.staged_frame (k);
      in.planes[1] = in.planes[0] + (size_t)l.width * l.height;
      out.planes[0] = rgba;
      ok = gpu.stage (k, dev + l.nv12_at (slot), l.nv12_bytes, s)
           && gpu.ok (zc::convert_cuda (in, out, params, s), "convert_cuda")
           && gpu.consumed (k, s);
    } else {
      const zc::PlaneJob job{ rgba,
                              rgba,
                              (size_t)l.width * 4,
                              (size_t)l.width * 4,
                              (uint32_t)l.width * 4,
                              (uint32_t)l.height };
      ok = gpu.ok (zc::apply_lut_cuda (job, luts, s), "apply_lut_cuda");
    }
    ok = ok
         && gpu.ok (cudaEventRecord (gpu.event (slot), s), "cudaEventRecord");
    if (ok)
      queue.push (slot);
    else if (why->empty ())
      *why = gpu.why ();
  }
  if (!ok)
    write_slot (out_fd, -1);
  queue.push (-1);
  waiter.join ();
  /* the waiter's failure first: the launcher may only have seen its echo
   * from the other half */
  if (!wait_why.empty ()) {
    *why = wait_why;
    ok = false;
  }
  return ok;
}

/* The grey a consumer's frame must hold in R, G and B: the CPU's
 * conversion of the input (the CUDA kernels write the same bytes), then
 * the inversion */
bool
expected_grey (uint8_t *grey)
{
  const int w = 16, h = 16;
  std::vector<uint8_t> nv12 (w * h * 3 / 2), rgba (w * h * 4);
  std::fill (nv12.begin (), nv12.begin () + w * h, kLuma);
  std::fill (nv12.begin () + w * h, nv12.end (), kChroma);
  zc::FrameDesc in, out;
  in.fmt = zc::PixFmt::NV12;
  in.width = out.width = w;
  in.height = out.height = h;
  in.planes[0] = nv12.data ();
  in.planes[1] = nv12.data () + w * h;
  in.strides[0] = in.strides[1] = w;
  out.planes[0] = rgba.data ();
  out.strides[0] = (size_t)w * 4;
  zc::ConvertParams params;
  params.sampling = zc::Sampling::Bilinear;
  if (!zc::convert_cpu (in, out, params, 1))
    return false;
  *grey = (uint8_t)(255 - rgba[0]);
  return rgba[1] == rgba[0] && rgba[2] == rgba[0] && rgba[3] == 255;
}

/* Every slot's RGBA frame is the expected grey, alpha 255 */
bool
frames_right (const uint8_t *host, const Layout &l, uint8_t grey,
              std::string *why)
{
  for (int slot = 0; slot < l.depth; slot++) {
    const uint8_t *p = host + l.rgba_at (slot);
    for (size_t i = 0; i < l.rgba_bytes; i++) {
      const uint8_t want = (i & 3) == 3 ? 255 : grey;
      if (p[i] != want) {
        *why = "slot " + std::to_string (slot) + ", byte " + std::to_string (i)
               + ": " + std::to_string (p[i]) + ", not "
               + std::to_string (want);
        return false;
      }
    }
  }
  return true;
}

/* A pipe whose ends are inherited across exec (the child producer's) */
struct Pipe
{
  int fd[2] = { -1, -1 };
  bool open () { return pipe (fd) == 0; }
  void close_end (int i)
  {
    if (fd[i] >= 0)
      close (fd[i]);
    fd[i] = -1;
  }
  ~Pipe ()
  {
    close_end (0);
    close_end (1);
  }
};

enum class Mode { One, Two, Serial };

const char *
mode_name (Mode m)
{
  return m == Mode::One   ? "one process"
         : m == Mode::Two ? "two processes"
                          : "one process, one stream";
}

/* One run of @mode: frames a second at the consumer, or a negative value
 * with *why set */
double
run_once (Mode mode, const Options &o, const char *self, uint8_t grey,
          std::string *why)
{
  const Layout l (o.width, o.height, o.depth);
  int fd = memfd_create ("zc-split-floor", 0);
  if (fd < 0 || ftruncate (fd, (off_t)l.total ()) != 0) {
    *why = std::string ("memfd: ") + strerror (errno);
    if (fd >= 0)
      close (fd);
    return -1;
  }
  double fps = -1;
  {
    SharedFrames frames (fd, l);
    Pipe ready, back; /* producer to consumer, consumer to producer */
    if (!frames.why ().empty ()) {
      *why = frames.why ();
    } else if (!ready.open () || !back.open ()) {
      *why = std::string ("pipe: ") + strerror (errno);
    } else {
      for (int slot = 0; slot < l.depth; slot++) {
        uint8_t *p = frames.host () + l.nv12_at (slot);
        memset (p, kLuma, (size_t)l.width * l.height);
        memset (p + (size_t)l.width * l.height, kChroma,
                l.nv12_bytes - (size_t)l.width * l.height);
        memset (frames.host () + l.rgba_at (slot), 0, l.rgba_bytes);
        write_slot (back.fd[1], slot); /* every slot free to start with */
      }
      std::vector<Clock::time_point> done;
      done.reserve (o.frames);
      std::string producer_why, consumer_why;
      bool producer_ok = true;
      pid_t child = -1;
      std::thread producer;
      cudaStream_t shared = nullptr;
      if (mode == Mode::Two) {
        const std::string args[]
            = { self,
                "--producer-half",
                std::to_string (fd),
                std::to_string (back.fd[0]),
                std::to_string (ready.fd[1]),
                "--frames",
                std::to_string (o.frames),
                "--size",
                std::to_string (o.width) + "x" + std::to_string (o.height),
                "--depth",
                std::to_string (o.depth),
                "--batch",
                std::to_string (o.batch) };
        std::vector<char *> argv;
        for (auto &a : args)
          argv.push_back (const_cast<char *> (a.c_str ()));
        argv.push_back (nullptr);
        const int err = posix_spawn (&child, self, nullptr, nullptr,
                                     argv.data (), environ);
        if (err != 0) {
          *why = std::string ("posix_spawn: ") + strerror (err);
          child = -1;
          producer_ok = false;
        }
        /* the child holds the write end now: its exit ends our reads */
        ready.close_end (1);
      } else {
        if (mode == Mode::Serial
            && cudaStreamCreateWithFlags (&shared, cudaStreamNonBlocking)
                   != cudaSuccess) {
          *why = "cudaStreamCreateWithFlags failed";
          producer_ok = false;
        } else {
          producer = std::thread ([&] {
            producer_ok
                = run_half (true, l, frames.dev (), back.fd[0], ready.fd[1],
                            o.frames, o.batch, shared, nullptr, &producer_why);
          });
        }
      }
      bool consumer_ok
          = producer_ok
            && run_half (false, l, frames.dev (), ready.fd[0], back.fd[1],
                         o.frames, o.batch, shared, &done, &consumer_why);
      if (producer.joinable ())
        producer.join ();
      if (child > 0) {
        int status = 0;
        while (waitpid (child, &status, 0) < 0 && errno == EINTR)
          ;
        producer_ok = WIFEXITED (status) && WEXITSTATUS (status) == 0;
        if (!producer_ok)
          producer_why = WIFSIGNALED (status)
                             ? "the producer process was killed by signal "
                                   + std::to_string (WTERMSIG (status))
                             : "the producer process failed (exit status "
                                   + std::to_string (WEXITSTATUS (status))
                                   + ")";
      }
      if (shared)
        cudaStreamDestroy (shared);
      if (!producer_ok && why->empty ())
        *why = "producer: " + producer_why;
      else if (!consumer_ok && why->empty ())
        *why = "consumer: " + consumer_why;
      else if (producer_ok && consumer_ok
               && frames_right (frames.host (), l, grey, why)) {
        const double s
            = std::chrono::duration<double> (done.back () - done.front ())
                  .count ();
        fps = s > 0 ? (o.frames - 1) / s : -1;
        if (fps < 0)
          *why = "no time between the first frame and the last";
      }
    }
  }
  close (fd);
  return fps;
}

bool
parse_size (const char *s, int *w, int *h)
{
  return sscanf (s, "%dx%d", w, h) == 2 && *w > 0 && *h > 0 && *w % 2 == 0
         && *h % 2 == 0;
}

int
usage ()
{
  fprintf (stderr,
           "usage: zc-split-floor [--frames N] [--runs N] [--size WxH] "
           "[--depth K] [--batch B] [--serial] [--only one|two|serial]\n"
           "  (K at least 2 B, at most 64)\n");
  return 2;
}

/* The child's side of --two: the producer half on the parent's memfd and
 * pipes, in a CUDA context of its own */
int
producer_main (int fd, int in_fd, int out_fd, const Options &o)
{
  const Layout l (o.width, o.height, o.depth);
  if (cudaSetDevice (0) != cudaSuccess) {
    fprintf (stderr, "zc-split-floor producer: no CUDA device\n");
    write_slot (out_fd, -1);
    return 1;
  }
  SharedFrames frames (fd, l);
  std::string why = frames.why ();
  if (why.empty ()
      && run_half (true, l, frames.dev (), in_fd, out_fd, o.frames, o.batch,
                   nullptr, nullptr, &why))
    return 0;
  if (!frames.why ().empty ())
    write_slot (out_fd, -1);
  fprintf (stderr, "zc-split-floor producer: %s\n", why.c_str ());
  return 1;
}

double
median (std::vector<double> v)
{
  std::sort (v.begin (), v.end ());
  return v[v.size () / 2];
}

void
print_row (const char *name, const std::vector<double> &fps)
{
  printf ("%-26s %9.1f fps (%.1f-%.1f)\n", name, median (fps),
          *std::min_element (fps.begin (), fps.end ()),
          *std::max_element (fps.begin (), fps.end ()));
}

} // namespace

int
main (int argc, char **argv)
{
  Options o;
  int half_fds[3] = { -1, -1, -1 };
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--frames" && has_value)
      o.frames = atoi (argv[++i]);
    else if (a == "--runs" && has_value)
      o.runs = atoi (argv[++i]);
    else if (a == "--depth" && has_value)
      o.depth = atoi (argv[++i]);
    else if (a == "--size" && has_value) {
      if (!parse_size (argv[++i], &o.width, &o.height))
        return usage ();
    } else if (a == "--serial")
      o.serial = true;
    else if (a == "--batch" && has_value)
      o.batch = atoi (argv[++i]);
    else if (a == "--only" && has_value)
      o.only = argv[++i];
    else if (a == "--producer-half" && i + 3 < argc) {
      for (int &fd : half_fds)
        fd = atoi (argv[++i]);
    } else
      return usage ();
  }
  /* every slot carries a frame, so that every slot's bytes are checked */
  if (o.frames < 2 || o.runs < 1 || o.depth < 1 || o.depth > 64
      || o.frames < o.depth || o.batch < 1 || o.depth < 2 * o.batch
      || !(o.only.empty () || o.only == "one" || o.only == "two"
           || o.only == "serial"))
    return usage ();
  /* a half that went away must not kill the other with SIGPIPE */
  signal (SIGPIPE, SIG_IGN);
  if (half_fds[0] >= 0)
    return producer_main (half_fds[0], half_fds[1], half_fds[2], o);

  std::string name, why;
  if (!zc_bench::gpu_available (&name, &why)) {
    printf ("zc-split-floor: no CUDA device (%s), skipped\n", why.c_str ());
    return 77;
  }
  uint8_t grey;
  if (!expected_grey (&grey)) {
    fprintf (stderr,
             "zc-split-floor: the CPU conversion of grey is not grey\n");
    return 1;
  }
  char self[4096];
  const ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    fprintf (stderr, "zc-split-floor: /proc/self/exe: %s\n", strerror (errno));
    return 1;
  }
  self[n] = '\0';

  printf ("%s, NV12 %dx%d to RGBA then inverted, on mapped memory in a "
          "memfd, %d frames in flight, handed on %d at a time, %d frames a "
          "run\n",
          name.c_str (), o.width, o.height, o.depth, o.batch, o.frames);
  std::vector<Mode> modes = { Mode::One, Mode::Two };
  if (o.serial)
    modes.push_back (Mode::Serial);
  if (!o.only.empty ())
    modes = { o.only == "one"   ? Mode::One
              : o.only == "two" ? Mode::Two
                                : Mode::Serial };
  std::vector<std::vector<double> > fps (modes.size ());
  for (int r = 0; r < o.runs; r++) {
    for (size_t m = 0; m < modes.size (); m++) {
      why.clear ();
      const double f = run_once (modes[m], o, self, grey, &why);
      if (f < 0) {
        fprintf (stderr, "zc-split-floor: %s: %s\n", mode_name (modes[m]),
                 why.c_str ());
        return 1;
      }
      printf ("run %d  %-26s %9.1f fps\n", r + 1, mode_name (modes[m]), f);
      fflush (stdout);
      fps[m].push_back (f);
    }
  }
  printf ("median (range) of %d runs, frames checked after each:\n", o.runs);
  for (size_t m = 0; m < modes.size (); m++)
    print_row (mode_name (modes[m]), fps[m]);
  if (modes.size () > 1)
    printf ("two processes / one process: %.2fx\n",
            median (fps[1]) / median (fps[0]));
  return 0;
}

/* gst-zerocopy: a second CUDA context in a benchmark's process.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * zc-latency --second-context MODE: a CUDA context of the process's own
 * beside the runtime's primary one, which our elements use, made through
 * the driver API as nvcodec's elements make theirs (cuCtxCreate). It
 * tells whether another context in the process is what slows a row (on
 * some machine starts, managed memory kept on the host took as long as
 * prefetched memory once nvcodec's rows shared the process):
 *
 *  - idle: the context is made before the rows and kept to the end;
 *  - busy: and a thread copies a 1080p RGBA frame (8 MiB) from pinned
 *    host memory to the device and back in it every 33.3 ms, as a
 *    cudaupload ! cudadownload pipeline at 30 fps would.
 *
 * libcuda is opened at run time, so the program links no driver library
 * and runs where the driver is missing (the context then reports why it
 * could not be made).
 */
#ifndef ZC_BENCH_SECOND_CONTEXT_H
#define ZC_BENCH_SECOND_CONTEXT_H

#include <atomic>
#include <string>
#include <thread>

namespace zc_bench {

class SecondContext
{
public:
  /* mode "idle" or "busy" on CUDA device `device` */
  SecondContext (const std::string &mode, int device);
  ~SecondContext ();
  SecondContext (const SecondContext &) = delete;
  SecondContext &operator= (const SecondContext &) = delete;

  bool ok () const { return why_.empty (); }
  /* what failed, when !ok() */
  const std::string &why () const { return why_; }
  /* frames the busy thread copied both ways */
  long copies () const { return copies_.load (); }

private:
  struct Driver;
  void busy_loop ();

  Driver *drv_ = nullptr;
  void *ctx_ = nullptr;       /* CUcontext */
  void *host_ = nullptr;      /* pinned, the busy mode's frame */
  unsigned long long dev_ = 0; /* CUdeviceptr */
  std::string why_;
  std::atomic<bool> stop_{false};
  std::atomic<long> copies_{0};
  std::thread busy_;
};

} // namespace zc_bench

#endif /* ZC_BENCH_SECOND_CONTEXT_H */

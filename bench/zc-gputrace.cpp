/* zc-gputrace: what the GPU did for one process, from CUPTI's activity
 * records. The CUDA driver loads it into any CUDA process (a gst-launch-1.0
 * pipeline, zc-latency, a Python producer) at cuInit:
 *
 *   CUDA_INJECTION64_PATH=build/bench/libzc-gputrace.so \
 *   ZC_GPUTRACE=/tmp/trace CMD ...
 *
 * It records every kernel, copy and memset of every CUDA context of the
 * process (nvcodec's included) and Unified Memory's events: bytes the driver
 * moved between host and GPU, GPU page fault groups, CPU page faults,
 * thrashing, throttling and remote maps. At exit it writes PREFIX.PID.csv,
 * one line a record, and prints a summary on stderr:
 *
 *   kind,start_ns,end_ns,queued_ns,submitted_ns,context,stream,bytes,name
 *
 * kind is kernel, memcpy-<HtoD|DtoH|...>, memset or um-<counter>; for um-
 * lines bytes is the counter's value (bytes moved, fault groups, ...), name
 * the address. queued and submitted (kernels): when the launch was queued
 * by the host and handed to the GPU, 0 where CUPTI did not say; the GPU ran
 * the kernel from start to end. Timestamps are CUPTI's, in ns, taken from
 * the GPU's timer: comparable between the processes of one machine.
 *
 * bench/gputrace.py reads the files of one or more processes and tells how
 * their GPU work interleaved and where Unified Memory moved pages.
 *
 * Tracing costs: a few microseconds a launch, and Unified Memory events make
 * the driver report each fault. Figures taken under it are for diagnosis,
 * not for performance tables.
 */
#include <cupti.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

constexpr size_t kBufferBytes = 8 << 20;
constexpr size_t kAlign = 8;
constexpr uint32_t kFlushPeriodMs = 200;

enum class Kind : uint8_t { KERNEL, MEMCPY, MEMSET, UM };

struct Record
{
  Kind kind;
  uint8_t sub;   /* copy kind or Unified Memory counter kind */
  uint32_t context;
  uint32_t stream;
  uint64_t start, end, queued, submitted;
  uint64_t value; /* bytes, or the counter's value */
  uint64_t address;
  int name;       /* kernels: index into names */
};

struct Trace
{
  std::mutex lock;
  std::vector<Record> records;
  std::vector<std::string> names;
  std::map<const char *, int> name_of;
  size_t dropped = 0;
  std::string prefix;
  bool written = false;
};

Trace &
trace ()
{
  static Trace *t = new Trace (); /* never destroyed: used at exit */
  return *t;
}

bool
ok (CUptiResult r, const char *what)
{
  if (r == CUPTI_SUCCESS)
    return true;
  const char *s = nullptr;
  cuptiGetResultString (r, &s);
  fprintf (stderr, "zc-gputrace: %s: %s\n", what, s ? s : "unknown error");
  return false;
}

void CUPTIAPI
buffer_requested (uint8_t **buffer, size_t *size, size_t *max_records)
{
  *buffer = static_cast<uint8_t *> (aligned_alloc (kAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

int
intern (Trace &t, const char *name)
{
  if (!name)
    name = "?";
  auto it = t.name_of.find (name);
  if (it != t.name_of.end ())
    return it->second;
  const int i = (int)t.names.size ();
  t.names.emplace_back (name);
  t.name_of.emplace (name, i);
  return i;
}

/* What kernel, copy and memset records have alike: where and when the GPU
 * ran them */
template <typename A>
void
take_span (Record &r, const A *a)
{
  r.context = a->contextId;
  r.stream = a->streamId;
  r.start = a->start;
  r.end = a->end;
}

void CUPTIAPI
buffer_completed (CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t,
                  size_t valid)
{
  Trace &t = trace ();
  std::lock_guard<std::mutex> lk (t.lock);
  CUpti_Activity *a = nullptr;
  while (cuptiActivityGetNextRecord (buffer, valid, &a) == CUPTI_SUCCESS) {
    Record r{};
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      auto *k = reinterpret_cast<CUpti_ActivityKernel10 *> (a);
      r.kind = Kind::KERNEL;
      take_span (r, k);
      r.queued = k->queued == CUPTI_TIMESTAMP_UNKNOWN ? 0 : k->queued;
      r.submitted = k->submitted == CUPTI_TIMESTAMP_UNKNOWN ? 0 : k->submitted;
      r.name = intern (t, k->name);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto *m = reinterpret_cast<CUpti_ActivityMemcpy6 *> (a);
      r.kind = Kind::MEMCPY;
      r.sub = m->copyKind;
      take_span (r, m);
      r.value = m->bytes;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto *m = reinterpret_cast<CUpti_ActivityMemset4 *> (a);
      r.kind = Kind::MEMSET;
      take_span (r, m);
      r.value = m->bytes;
      break;
    }
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER: {
      auto *u = reinterpret_cast<CUpti_ActivityUnifiedMemoryCounter3 *> (a);
      r.kind = Kind::UM;
      r.sub = (uint8_t)u->counterKind;
      r.start = u->start;
      r.end = u->end;
      r.value = u->value;
      r.address = u->address;
      break;
    }
    default:
      continue;
    }
    t.records.push_back (r);
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords (ctx, stream, &dropped) == CUPTI_SUCCESS)
    t.dropped += dropped;
  free (buffer);
}

const char *
copy_kind (uint8_t k)
{
  switch (k) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
  default: return "other";
  }
}

const char *const kUmNames[] = { "unknown", "bytes-htod", "bytes-dtoh",
  "cpu-page-fault", "gpu-page-fault", "thrashing", "throttling",
  "remote-map", "bytes-dtod" };
constexpr size_t kUmKinds = sizeof kUmNames / sizeof kUmNames[0];

const char *
um_kind (uint8_t k)
{
  return k < kUmKinds ? kUmNames[k] : "other";
}

/* The CSV and the summary, once: at exit, after the last flush */
void
write_out ()
{
  cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  Trace &t = trace ();
  std::lock_guard<std::mutex> lk (t.lock);
  if (t.written)
    return;
  t.written = true;
  const std::string path
      = t.prefix + "." + std::to_string ((long)getpid ()) + ".csv";
  FILE *f = fopen (path.c_str (), "w");
  if (!f) {
    fprintf (stderr, "zc-gputrace: cannot write %s: %s\n", path.c_str (),
             strerror (errno));
    return;
  }
  fprintf (f, "kind,start_ns,end_ns,queued_ns,submitted_ns,context,stream,"
              "bytes,name\n");
  std::sort (t.records.begin (), t.records.end (),
             [] (const Record &a, const Record &b) { return a.start < b.start; });
  std::map<uint32_t, std::pair<size_t, uint64_t>> per_context; /* n, ns */
  uint64_t um_sum[kUmKinds] = {};
  size_t um_n[kUmKinds] = {};
  for (const Record &r : t.records) {
    switch (r.kind) {
    case Kind::KERNEL:
      fprintf (f, "kernel,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                  ",%u,%u,0,\"%s\"\n", r.start, r.end, r.queued, r.submitted,
               r.context, r.stream, t.names[r.name].c_str ());
      break;
    case Kind::MEMCPY:
    case Kind::MEMSET:
      fprintf (f, "%s%s,%" PRIu64 ",%" PRIu64 ",0,0,%u,%u,%" PRIu64 ",\n",
               r.kind == Kind::MEMSET ? "memset" : "memcpy-",
               r.kind == Kind::MEMSET ? "" : copy_kind (r.sub), r.start,
               r.end, r.context, r.stream, r.value);
      break;
    case Kind::UM:
      fprintf (f, "um-%s,%" PRIu64 ",%" PRIu64 ",0,0,0,0,%" PRIu64
                  ",0x%" PRIx64 "\n", um_kind (r.sub), r.start, r.end,
               r.value, r.address);
      if (r.sub < kUmKinds) {
        um_sum[r.sub] += r.value;
        um_n[r.sub]++;
      }
      break;
    }
    if (r.kind != Kind::UM && r.end > r.start) {
      auto &c = per_context[r.context];
      c.first++;
      c.second += r.end - r.start;
    }
  }
  fclose (f);

  fprintf (stderr, "zc-gputrace: pid %ld: %zu records in %s (%zu dropped)\n",
           (long)getpid (), t.records.size (), path.c_str (), t.dropped);
  for (const auto &c : per_context)
    fprintf (stderr, "zc-gputrace:   context %u: %zu kernels, copies and "
                     "memsets, %.3f ms of GPU time\n", c.first,
             c.second.first, c.second.second / 1e6);
  for (size_t k = 1; k < kUmKinds; k++)
    if (um_n[k])
      fprintf (stderr, "zc-gputrace:   unified memory %s: %zu events, "
                       "value %" PRIu64 "\n", kUmNames[k], um_n[k], um_sum[k]);
}

void
enable_unified_memory_counters ()
{
  CUpti_ActivityUnifiedMemoryCounterConfig config[7] = {};
  const CUpti_ActivityUnifiedMemoryCounterKind kinds[7] = {
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP,
  };
  for (int i = 0; i < 7; i++) {
    config[i].scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
    config[i].kind = kinds[i];
    config[i].deviceId = 0;
    config[i].enable = 1;
  }
  /* where Unified Memory profiling is not supported (a virtual machine, a
   * device without it) the kernels and copies are still traced */
  if (ok (cuptiActivityConfigureUnifiedMemoryCounter (config, 7),
          "unified memory counters"))
    ok (cuptiActivityEnable (CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER),
        "unified memory activity");
}

} // namespace

/* Called by the CUDA driver at cuInit, where CUDA_INJECTION64_PATH names
 * this library */
extern "C" __attribute__ ((visibility ("default"))) int
InitializeInjection (void)
{
  static bool done = false;
  if (done)
    return 1;
  done = true;
  const char *prefix = getenv ("ZC_GPUTRACE");
  trace ().prefix = prefix && *prefix ? prefix : "zc-gputrace";
  if (!ok (cuptiActivityRegisterCallbacks (buffer_requested, buffer_completed),
           "activity callbacks"))
    return 0;
  enable_unified_memory_counters ();
  ok (cuptiActivityEnableLatencyTimestamps (1), "latency timestamps");
  if (!ok (cuptiActivityEnable (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
           "kernel activity"))
    return 0;
  ok (cuptiActivityEnable (CUPTI_ACTIVITY_KIND_MEMCPY), "copy activity");
  ok (cuptiActivityEnable (CUPTI_ACTIVITY_KIND_MEMSET), "memset activity");
  /* records reach the buffers as the process runs, so that an exit after
   * the driver's own teardown loses at most this much */
  ok (cuptiActivityFlushPeriod (kFlushPeriodMs), "flush period");
  atexit (write_out);
  return 1;
}

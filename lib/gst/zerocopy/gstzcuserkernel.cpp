/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * Users' kernels (see gstzcuserkernel-private.h): NVRTC and the driver API
 * through dlopen, the compile caches, module loading and the launch.
 *
 * Why the driver API: the runtime cannot load a module before CUDA 12
 * (cudaLibraryLoadData), and the build floor is 11.4. The driver calls run
 * in the device's primary context, the one the runtime (and so every other
 * element) uses, so streams, events and memory are shared as they are.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcuserkernel-private.h"
#include "gstzccuda-private.h"

#include <glib/gstdio.h>
#include <gst/video/video.h>
#include <zcformats.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#if GST_ZC_HAVE_CUDA
#include <cuda.h>
#include <nvrtc.h>
#include <dlfcn.h>
#endif

GST_DEBUG_CATEGORY_STATIC (gst_zc_user_kernel_debug);
#define GST_CAT_DEFAULT gst_zc_user_kernel_debug

static void
ensure_debug_category (void)
{
  static gsize once = 0;
  if (g_once_init_enter (&once)) {
    GST_DEBUG_CATEGORY_INIT (gst_zc_user_kernel_debug, "zcuserkernel", 0,
        "zero-copy user kernels: NVRTC, caches, launches");
    g_once_init_leave (&once, 1);
  }
}

const char *
gst_zc_kernel_origin_name (GstZcKernelOrigin origin)
{
  switch (origin) {
    case GST_ZC_KERNEL_ORIGIN_NVRTC:
      return "nvrtc";
    case GST_ZC_KERNEL_ORIGIN_MEMORY_CACHE:
      return "memory-cache";
    case GST_ZC_KERNEL_ORIGIN_DISK_CACHE:
      return "disk-cache";
    case GST_ZC_KERNEL_ORIGIN_BINARY:
      return "binary";
    case GST_ZC_KERNEL_ORIGIN_NONE:
    default:
      return "none";
  }
}

GstZcKernelKind
gst_zc_kernel_kind_for_path (const char *path)
{
  if (g_str_has_suffix (path, ".ptx"))
    return GST_ZC_KERNEL_PTX;
  if (g_str_has_suffix (path, ".cubin"))
    return GST_ZC_KERNEL_CUBIN;
  if (g_str_has_suffix (path, ".fatbin") || g_str_has_suffix (path,
          ".fatbin.c"))
    return GST_ZC_KERNEL_FATBIN;
  return GST_ZC_KERNEL_SOURCE;
}

/* The C structs of gstzcuserkernel-private.h as the code below works with
 * them: the request copied in, the outcome copied out at the end */
struct Spec
{
  GstZcKernelKind kind = GST_ZC_KERNEL_SOURCE;
  std::string name = "source";
  std::string text;
  std::string entry = "process";
  std::string options;
  std::string include_dir;
};

struct Build
{
  GstZcUserKernel *kernel = nullptr;
  GstZcKernelOrigin origin = GST_ZC_KERNEL_ORIGIN_NONE;
  bool compile_error = false;
  std::string message;
  std::string detail;
  std::string log;
  std::string target;
  double ms = 0;
};

static Spec
spec_from_c (const GstZcKernelSpec * c)
{
  Spec s;
  s.kind = c->kind;
  if (c->name)
    s.name = c->name;
  if (c->text)
    s.text.assign (c->text, c->text_size);
  if (c->entry && *c->entry)
    s.entry = c->entry;
  if (c->options)
    s.options = c->options;
  if (c->include_dir)
    s.include_dir = c->include_dir;
  return s;
}

static gchar *
dup_or_null (const std::string & str)
{
  return str.empty ()? NULL : g_strdup (str.c_str ());
}

static Build build_kernel (gint device, const Spec & spec);

gboolean
gst_zc_user_kernel_build (gint device, const GstZcKernelSpec * spec,
    GstZcKernelBuild * build)
{
  g_return_val_if_fail (spec != NULL && build != NULL, FALSE);
  ensure_debug_category ();

  Build b = build_kernel (device, spec_from_c (spec));
  build->kernel = b.kernel;
  build->origin = b.origin;
  build->compile_error = b.compile_error;
  build->message = dup_or_null (b.message);
  build->detail = dup_or_null (b.detail);
  build->log = dup_or_null (b.log);
  g_strlcpy (build->target, b.target.c_str (), sizeof (build->target));
  build->ms = b.ms;
  return b.kernel != NULL;
}

void
gst_zc_kernel_build_clear (GstZcKernelBuild * build)
{
  g_return_if_fail (build != NULL);
  g_clear_pointer (&build->message, g_free);
  g_clear_pointer (&build->detail, g_free);
  g_clear_pointer (&build->log, g_free);
}

#if GST_ZC_HAVE_CUDA

/* zckernel.cuh's text, as NVRTC gets it */
static const char zc_kernel_header[] =
#include "zckernel-cuh.inc"
    ;
#define ZC_KERNEL_HEADER_NAME "gst/zerocopy/zckernel.cuh"

/* The layout zckernel.cuh promises kernels: the format codes are
 * GstVideoFormat's */
#define ZC_CHECK_FORMAT_CODE(name, ...) \
    static_assert (ZC_FORMAT_##name == GST_VIDEO_FORMAT_##name, \
        "zckernel.cuh: ZC_FORMAT_" #name);
ZC_FORMATS (ZC_CHECK_FORMAT_CODE, ZC_CHECK_FORMAT_CODE)
#undef ZC_CHECK_FORMAT_CODE
static_assert (sizeof (ZcPlane) == 32, "ZcPlane layout");
static_assert (sizeof (ZcFrame) == 184, "ZcFrame layout");
static_assert (sizeof (ZcFrameInfo) == 24, "ZcFrameInfo layout");

/* ---- loading libraries ---------------------------------------------------- */

#define ZC_STR_(x) #x
#define ZC_STR(x) ZC_STR_(x)

/* Looks up @name (after the CUDA headers' macros, e.g. _v2) in @lib */
template < typename F > static bool
load_symbol (void *lib, const char *name, F * fn, std::string * missing)
{
  *fn = reinterpret_cast < F > (dlsym (lib, name));
  if (!*fn && missing->empty ())
    *missing = name;
  return *fn != nullptr;
}

#define LOAD(lib, sym, dst, missing) \
    load_symbol (lib, ZC_STR (sym), &(dst), missing)

/* The CUDA driver API: present wherever the driver is */
struct Driver
{
  bool ok = false;
  std::string error;
  decltype (&cuInit) Init;
  decltype (&cuDeviceGet) DeviceGet;
  decltype (&cuDevicePrimaryCtxRetain) PrimaryCtxRetain;
  decltype (&cuDevicePrimaryCtxRelease) PrimaryCtxRelease;
  decltype (&cuCtxPushCurrent) CtxPushCurrent;
  decltype (&cuCtxPopCurrent) CtxPopCurrent;
  decltype (&cuModuleLoadData) ModuleLoadData;
  decltype (&cuModuleUnload) ModuleUnload;
  decltype (&cuModuleGetFunction) ModuleGetFunction;
  decltype (&cuFuncGetAttribute) FuncGetAttribute;
  decltype (&cuLaunchKernel) LaunchKernel;
  decltype (&cuGetErrorName) GetErrorName;
  decltype (&cuGetErrorString) GetErrorString;
};

static const Driver &
driver (void)
{
  static Driver d;
  static std::once_flag once;
  std::call_once (once,[]() {
    void *lib = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *e = dlerror ();
      d.error = std::string ("could not load libcuda.so.1: ") + (e ? e : "?");
      return;
    }
    std::string missing;
    bool ok = LOAD (lib, cuInit, d.Init, &missing) &
        LOAD (lib, cuDeviceGet, d.DeviceGet, &missing) &
        LOAD (lib, cuDevicePrimaryCtxRetain, d.PrimaryCtxRetain, &missing) &
        LOAD (lib, cuDevicePrimaryCtxRelease, d.PrimaryCtxRelease, &missing) &
        LOAD (lib, cuCtxPushCurrent, d.CtxPushCurrent, &missing) &
        LOAD (lib, cuCtxPopCurrent, d.CtxPopCurrent, &missing) &
        LOAD (lib, cuModuleLoadData, d.ModuleLoadData, &missing) &
        LOAD (lib, cuModuleUnload, d.ModuleUnload, &missing) &
        LOAD (lib, cuModuleGetFunction, d.ModuleGetFunction, &missing) &
        LOAD (lib, cuFuncGetAttribute, d.FuncGetAttribute, &missing) &
        LOAD (lib, cuLaunchKernel, d.LaunchKernel, &missing) &
        LOAD (lib, cuGetErrorName, d.GetErrorName, &missing) &
        LOAD (lib, cuGetErrorString, d.GetErrorString, &missing);
    if (!ok) {
      d.error = "libcuda.so.1 has no " + missing;
      return;
    }
    CUresult r = d.Init (0);
    if (r != CUDA_SUCCESS) {
      d.error = "cuInit failed (" + std::to_string ((int) r) + ")";
      return;
    }
    d.ok = true;
  });
  return d;
}

static std::string
cu_error_text (CUresult r)
{
  const Driver & d = driver ();
  const char *name = nullptr, *desc = nullptr;
  if (d.ok) {
    d.GetErrorName (r, &name);
    d.GetErrorString (r, &desc);
  }
  return std::string (name ? name : "CUDA error " + std::to_string ((int) r))
      + ": " + (desc ? desc : "?");
}

/* NVRTC: optional; its absence only rules out source kernels */
struct Nvrtc
{
  bool ok = false;
  std::string error;            /* why not, with the names tried */
  std::string path;
  int major = 0, minor = 0;
  std::vector < int >archs;     /* the real architectures it emits */
  decltype (&nvrtcVersion) Version;
  decltype (&nvrtcCreateProgram) CreateProgram;
  decltype (&nvrtcDestroyProgram) DestroyProgram;
  decltype (&nvrtcCompileProgram) CompileProgram;
  decltype (&nvrtcGetProgramLogSize) GetProgramLogSize;
  decltype (&nvrtcGetProgramLog) GetProgramLog;
  decltype (&nvrtcGetPTXSize) GetPTXSize;
  decltype (&nvrtcGetPTX) GetPTX;
  decltype (&nvrtcGetCUBINSize) GetCUBINSize;
  decltype (&nvrtcGetCUBIN) GetCUBIN;
  decltype (&nvrtcGetErrorString) GetErrorString;
  decltype (&nvrtcGetNumSupportedArchs) GetNumSupportedArchs;
  decltype (&nvrtcGetSupportedArchs) GetSupportedArchs;
};

/* The NVRTC libraries to try: GST_ZC_NVRTC_LIBNAME alone when set, else
 * the sonames of this build's CUDA major version first and older ones
 * after, on the loader's path and then in the CUDA toolkit's directories */
static std::vector < std::string > nvrtc_candidates (void)
{
  std::vector < std::string > out;
  const gchar *env = g_getenv ("GST_ZC_NVRTC_LIBNAME");
  if (env && *env) {
    out.push_back (env);
    return out;
  }
  std::vector < std::string > names;
  int major = CUDART_VERSION / 1000;
  for (int m = major; m >= 11; m--)
    names.push_back ("libnvrtc.so." + std::string (m == 11 ? "11.2" :
            std::to_string (m)));
  names.push_back ("libnvrtc.so");
  std::vector < std::string > dirs = { "" };
#ifdef GST_ZC_CUDA_LIBDIR
  dirs.push_back (GST_ZC_CUDA_LIBDIR);
#endif
  dirs.push_back ("/usr/local/cuda/lib64");
  for (const auto & dir:dirs)
    for (const auto & n:names)
      out.push_back (dir.empty ()? n : dir + "/" + n);
  return out;
}

static const Nvrtc &
nvrtc (void)
{
  static Nvrtc n;
  static std::once_flag once;
  std::call_once (once,[]() {
    void *lib = nullptr;
    std::string tried;
    for (const auto & c:nvrtc_candidates ()) {
      lib = dlopen (c.c_str (), RTLD_NOW | RTLD_LOCAL);
      if (lib) {
        n.path = c;
        break;
      }
      tried += (tried.empty ()? "" : ", ") + c;
    }
    if (!lib) {
      n.error = "NVRTC (libnvrtc.so) is not available: tried " + tried;
      return;
    }
    std::string missing;
    bool ok = LOAD (lib, nvrtcVersion, n.Version, &missing) &
        LOAD (lib, nvrtcCreateProgram, n.CreateProgram, &missing) &
        LOAD (lib, nvrtcDestroyProgram, n.DestroyProgram, &missing) &
        LOAD (lib, nvrtcCompileProgram, n.CompileProgram, &missing) &
        LOAD (lib, nvrtcGetProgramLogSize, n.GetProgramLogSize, &missing) &
        LOAD (lib, nvrtcGetProgramLog, n.GetProgramLog, &missing) &
        LOAD (lib, nvrtcGetPTXSize, n.GetPTXSize, &missing) &
        LOAD (lib, nvrtcGetPTX, n.GetPTX, &missing) &
        LOAD (lib, nvrtcGetCUBINSize, n.GetCUBINSize, &missing) &
        LOAD (lib, nvrtcGetCUBIN, n.GetCUBIN, &missing) &
        LOAD (lib, nvrtcGetErrorString, n.GetErrorString, &missing) &
        LOAD (lib, nvrtcGetNumSupportedArchs, n.GetNumSupportedArchs,
        &missing) & LOAD (lib, nvrtcGetSupportedArchs, n.GetSupportedArchs,
        &missing);
    if (!ok) {
      n.error = "NVRTC at " + n.path + " is too old (no " + missing +
          "; CUDA 11.4 or newer is needed)";
      return;
    }
    n.Version (&n.major, &n.minor);
    int count = 0;
    if (n.GetNumSupportedArchs (&count) == NVRTC_SUCCESS && count > 0) {
      n.archs.resize (count);
      if (n.GetSupportedArchs (n.archs.data ()) != NVRTC_SUCCESS)
        n.archs.clear ();
    }
    n.ok = true;
    GST_INFO ("NVRTC %d.%d from %s, %zu architectures", n.major, n.minor,
        n.path.c_str (), n.archs.size ());
  });
  return n;
}

/* ---- caches ---------------------------------------------------------------- */

/* Compiled code by key, for this process: a second start (or a second
 * element) with the same source and target loads it without NVRTC */
static std::mutex memory_cache_lock;
static std::unordered_map < std::string, std::string > memory_cache;

static std::string
disk_cache_dir (void)
{
  gchar *dir = g_build_filename (g_get_user_cache_dir (), "gst-zerocopy",
      "kernels", NULL);
  std::string s (dir);
  g_free (dir);
  return s;
}

static bool
read_file (const std::string & path, std::string * out)
{
  gchar *data = nullptr;
  gsize len = 0;
  if (!g_file_get_contents (path.c_str (), &data, &len, nullptr))
    return false;
  out->assign (data, len);
  g_free (data);
  return true;
}

/* The local files @text includes ("x.h" or <x.h> found in @dirs), and the
 * ones they include, as (path, contents): part of the cache key, since
 * they change the binary */
static void
collect_includes (const std::string & text,
    const std::vector < std::string > &dirs, std::set < std::string > *seen,
    GChecksum * sum, int depth)
{
  if (depth > 16)
    return;
  gchar **lines = g_strsplit (text.c_str (), "\n", -1);
  for (gchar ** l = lines; *l; l++) {
    const gchar *p = *l;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p != '#')
      continue;
    p++;
    while (*p == ' ' || *p == '\t')
      p++;
    if (!g_str_has_prefix (p, "include"))
      continue;
    p += strlen ("include");
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p != '"' && *p != '<')
      continue;
    char close = *p == '"' ? '"' : '>';
    const gchar *end = strchr (p + 1, close);
    if (!end)
      continue;
    std::string name (p + 1, end - p - 1);
    if (name == ZC_KERNEL_HEADER_NAME)
      continue;
    for (const auto & d:dirs) {
      gchar *path = g_build_filename (d.c_str (), name.c_str (), NULL);
      std::string contents;
      bool found = read_file (path, &contents);
      std::string key (path);
      g_free (path);
      if (!found)
        continue;
      if (seen->insert (key).second) {
        g_checksum_update (sum, (const guchar *) key.c_str (), key.size () + 1);
        g_checksum_update (sum, (const guchar *) contents.data (),
            contents.size ());
        std::vector < std::string > sub = dirs;
        gchar *dir = g_path_get_dirname (key.c_str ());
        sub.insert (sub.begin (), dir);
        g_free (dir);
        collect_includes (contents, sub, seen, sum, depth + 1);
      }
      break;
    }
  }
  g_strfreev (lines);
}

/* ---- building ---------------------------------------------------------------- */

struct _GstZcUserKernel
{
  gint device = 0;
  CUcontext ctx = nullptr;      /* the device's primary context, retained */
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  guint max_threads = 1024;
  std::string entry;
};

/* Makes the kernel's context current for a scope */
class ContextScope
{
public:
  explicit ContextScope (CUcontext ctx)
  {
    ok_ = driver ().CtxPushCurrent (ctx) == CUDA_SUCCESS;
  }
  ~ContextScope ()
  {
    CUcontext prev;
    if (ok_)
      driver ().CtxPopCurrent (&prev);
  }
  ContextScope (const ContextScope &) = delete;
  ContextScope & operator= (const ContextScope &) = delete;
  bool ok () const { return ok_; }

private:
  bool ok_ = false;
};

static double
ms_since (std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration < double, std::milli > (
      std::chrono::steady_clock::now () - t0).count ();
}

static std::string
join_args (const std::vector < std::string > &args)
{
  std::string s;
  for (const auto & a:args)
    s += (s.empty ()? "" : " ") + a;
  return s;
}

/* Compiles @spec with NVRTC for @target (sm_XX: a cubin, compute_XX: PTX)
 * with @opts into @binary; false with @b's message and log on failure */
static bool
compile (const Nvrtc & nv, const Spec & spec,
    const std::vector < std::string > &opts, bool cubin, std::string * binary,
    Build * b)
{
  const char *header_names[] = { ZC_KERNEL_HEADER_NAME };
  const char *header_texts[] = { zc_kernel_header };
  gchar *base = spec.include_dir.empty ()? g_strdup ("source") :
      g_path_get_basename (spec.name.c_str ());
  nvrtcProgram prog = nullptr;
  nvrtcResult r = nv.CreateProgram (&prog, spec.text.c_str (), base, 1,
      header_texts, header_names);
  g_free (base);
  if (r != NVRTC_SUCCESS) {
    b->message = std::string ("NVRTC could not take the source: ") +
        nv.GetErrorString (r);
    return false;
  }
  std::vector < const char *>argv;
  for (const auto & o:opts)
    argv.push_back (o.c_str ());
  r = GST_ZC_FAULT_OR (NVRTC_COMPILE, NVRTC_ERROR_COMPILATION,
      nv.CompileProgram (prog, (int) argv.size (), argv.data ()));
  size_t log_size = 0;
  if (nv.GetProgramLogSize (prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    std::vector < char >log (log_size);
    if (nv.GetProgramLog (prog, log.data ()) == NVRTC_SUCCESS)
      b->log.assign (log.data ());
  }
  if (r != NVRTC_SUCCESS) {
    b->compile_error = true;
    b->message = "Could not compile the CUDA kernel in " + spec.name;
    b->detail = std::string (nv.GetErrorString (r)) + "; options: " +
        join_args (opts);
    nv.DestroyProgram (&prog);
    return false;
  }
  size_t size = 0;
  r = cubin ? nv.GetCUBINSize (prog, &size) : nv.GetPTXSize (prog, &size);
  if (r == NVRTC_SUCCESS) {
    binary->resize (size);
    r = cubin ? nv.GetCUBIN (prog, &(*binary)[0]) :
        nv.GetPTX (prog, &(*binary)[0]);
  }
  nv.DestroyProgram (&prog);
  if (r != NVRTC_SUCCESS || size == 0) {
    b->message = std::string ("NVRTC produced no code: ") +
        nv.GetErrorString (r);
    return false;
  }
  /* PTX comes with its NUL, which the string adds itself */
  if (!cubin && binary->back () == '\0')
    binary->pop_back ();
  return true;
}

/* The code for @spec: from the caches, or compiled (and then cached) */
static bool
get_code (gint device, const Spec & spec, std::string * binary, Build * b)
{
  if (spec.kind != GST_ZC_KERNEL_SOURCE) {
    *binary = spec.text;
    b->origin = GST_ZC_KERNEL_ORIGIN_BINARY;
    b->target = spec.kind == GST_ZC_KERNEL_PTX ? "ptx" : "binary";
    return true;
  }

  const Nvrtc & nv = nvrtc ();
  if (!nv.ok) {
    b->message = nv.error + ". Source kernels need it; compile the kernel "
        "with nvcc (-cubin, -ptx or -fatbin) and give the file as location";
    return false;
  }

  /* The target: the device's own architecture where this NVRTC emits code
   * for it (a cubin), else PTX for the newest one it has below that, which
   * the driver compiles on load */
  int cc_major = 0, cc_minor = 0;
  if (!GST_ZC_CUDA_OK (cudaDeviceGetAttribute (&cc_major,
              cudaDevAttrComputeCapabilityMajor, device)) ||
      !GST_ZC_CUDA_OK (cudaDeviceGetAttribute (&cc_minor,
              cudaDevAttrComputeCapabilityMinor, device))) {
    b->message = "Could not read the device's compute capability";
    return false;
  }
  int cc = cc_major * 10 + cc_minor;
  bool cubin = nv.archs.empty ();
  int arch = cc;
  if (!nv.archs.empty ()) {
    int best = 0;
    for (int a:nv.archs) {
      if (a == cc)
        cubin = true;
      if (a <= cc && a > best)
        best = a;
    }
    if (!cubin) {
      if (best == 0) {
        b->message = "NVRTC " + std::to_string (nv.major) + "." +
            std::to_string (nv.minor) + " cannot compile for this device "
            "(compute capability " + std::to_string (cc_major) + "." +
            std::to_string (cc_minor) + ")";
        return false;
      }
      arch = best;
    }
  }
  b->target = (cubin ? "sm_" : "compute_") + std::to_string (arch);

  std::vector < std::string > opts = {
    "--gpu-architecture=" + b->target, "-std=c++17", "-lineinfo",
  };
  std::vector < std::string > dirs;
  if (!spec.include_dir.empty ())
    dirs.push_back (spec.include_dir);
  if (!spec.options.empty ()) {
    gint argc = 0;
    gchar **argv = nullptr;
    GError *err = nullptr;
    if (!g_shell_parse_argv (spec.options.c_str (), &argc, &argv, &err)) {
      b->message = std::string ("Could not parse compile-options: ") +
          err->message;
      g_clear_error (&err);
      return false;
    }
    for (gint i = 0; i < argc; i++) {
      opts.push_back (argv[i]);
      if (g_str_has_prefix (argv[i], "-I") && argv[i][2])
        dirs.push_back (argv[i] + 2);
      else if (g_str_has_prefix (argv[i], "--include-path="))
        dirs.push_back (argv[i] + strlen ("--include-path="));
    }
    g_strfreev (argv);
  }
  for (const auto & d:dirs)
    opts.push_back ("--include-path=" + d);
#ifdef GST_ZC_CUDA_INCDIR
  if (g_file_test (GST_ZC_CUDA_INCDIR, G_FILE_TEST_IS_DIR))
    opts.push_back ("--include-path=" GST_ZC_CUDA_INCDIR);
#endif

  /* The key: everything that changes the binary */
  GChecksum *sum = g_checksum_new (G_CHECKSUM_SHA256);
  std::string head = "zckernel " ZC_STR (ZC_KERNEL_ABI_VERSION) " nvrtc " +
      std::to_string (nv.major) + "." + std::to_string (nv.minor) + " " +
      join_args (opts);
  g_checksum_update (sum, (const guchar *) head.c_str (), head.size () + 1);
  g_checksum_update (sum, (const guchar *) zc_kernel_header,
      sizeof (zc_kernel_header));
  g_checksum_update (sum, (const guchar *) spec.text.data (),
      spec.text.size ());
  std::set < std::string > seen;
  collect_includes (spec.text, dirs, &seen, sum, 0);
  std::string key = g_checksum_get_string (sum);
  g_checksum_free (sum);

  {
    std::lock_guard < std::mutex > lk (memory_cache_lock);
    auto it = memory_cache.find (key);
    if (it != memory_cache.end ()) {
      *binary = it->second;
      b->origin = GST_ZC_KERNEL_ORIGIN_MEMORY_CACHE;
      GST_DEBUG ("%s: %s from the memory cache", spec.name.c_str (),
          key.c_str ());
      return true;
    }
  }
  std::string dir = disk_cache_dir ();
  std::string file = dir + G_DIR_SEPARATOR_S + key + (cubin ? ".cubin" :
      ".ptx");
  if (read_file (file, binary) && !binary->empty ()) {
    b->origin = GST_ZC_KERNEL_ORIGIN_DISK_CACHE;
    GST_DEBUG ("%s: %s from the disk cache", spec.name.c_str (),
        file.c_str ());
  } else {
    GST_INFO ("%s: compiling with NVRTC %d.%d for %s", spec.name.c_str (),
        nv.major, nv.minor, b->target.c_str ());
    if (!compile (nv, spec, opts, cubin, binary, b))
      return false;
    b->origin = GST_ZC_KERNEL_ORIGIN_NVRTC;
    GError *err = nullptr;
    if (g_mkdir_with_parents (dir.c_str (), 0700) != 0 ||
        !g_file_set_contents (file.c_str (), binary->data (),
            binary->size (), &err)) {
      /* a read-only home is no reason to fail: the next start compiles */
      GST_WARNING ("could not write the kernel cache %s: %s", file.c_str (),
          err ? err->message : g_strerror (errno));
      g_clear_error (&err);
    }
  }
  std::lock_guard < std::mutex > lk (memory_cache_lock);
  memory_cache[key] = *binary;
  return true;
}

static Build
build_kernel (gint device, const Spec & spec)
{
  Build b;
  auto t0 = std::chrono::steady_clock::now ();
  const Driver & d = driver ();
  if (!d.ok) {
    b.message = "The CUDA driver API is not available";
    b.detail = d.error;
    return b;
  }
  gst_zc::DeviceScope scope (device);
  if (!scope.ok ()) {
    b.message = "Could not make CUDA device " + std::to_string (device) +
        " current";
    return b;
  }

  std::string binary;
  if (!get_code (device, spec, &binary, &b))
    return b;

  auto *k = new _GstZcUserKernel ();
  k->device = device;
  k->entry = spec.entry;
  CUdevice dev;
  CUresult r = d.DeviceGet (&dev, device);
  if (r == CUDA_SUCCESS)
    r = d.PrimaryCtxRetain (&k->ctx, dev);
  if (r != CUDA_SUCCESS) {
    b.message = "Could not use the device's CUDA context";
    b.detail = cu_error_text (r);
    delete k;
    return b;
  }
  {
    ContextScope cs (k->ctx);
    r = !cs.ok ()? CUDA_ERROR_INVALID_CONTEXT :
        GST_ZC_FAULT_OR (MODULE_LOAD, CUDA_ERROR_NO_BINARY_FOR_GPU,
        d.ModuleLoadData (&k->module, binary.c_str ()));
    if (r != CUDA_SUCCESS) {
      b.message = "Could not load the kernel code of " + spec.name +
          " on this device";
      b.detail = cu_error_text (r) + (spec.kind == GST_ZC_KERNEL_SOURCE ? "" :
          " (a .cubin runs only on the architecture it was built for; a "
          "fatbin needs code or PTX for this one)");
    } else {
      r = d.ModuleGetFunction (&k->function, k->module, spec.entry.c_str ());
      if (r != CUDA_SUCCESS) {
        b.message = "No kernel named '" + spec.entry + "' in " + spec.name +
            ": declare it with ZC_KERNEL (" + spec.entry + "), which makes "
            "it extern \"C\" __global__, or set entry";
        b.detail = cu_error_text (r);
      } else {
        int max_threads = 0;
        if (d.FuncGetAttribute (&max_threads,
                CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                k->function) == CUDA_SUCCESS && max_threads > 0)
          k->max_threads = (guint) max_threads;
      }
    }
  }
  if (r != CUDA_SUCCESS) {
    gst_zc_user_kernel_free (k);
    return b;
  }
  b.kernel = k;
  b.ms = ms_since (t0);
  GST_INFO ("%s: '%s' ready (%s, %s) in %.2f ms", spec.name.c_str (),
      spec.entry.c_str (), gst_zc_kernel_origin_name (b.origin),
      b.target.c_str (), b.ms);
  return b;
}

void
gst_zc_user_kernel_free (GstZcUserKernel * k)
{
  if (!k)
    return;
  const Driver & d = driver ();
  if (k->module) {
    /* the caller waited for the launches that use it */
    ContextScope cs (k->ctx);
    if (cs.ok ())
      d.ModuleUnload (k->module);
  }
  if (k->ctx) {
    CUdevice dev;
    if (d.DeviceGet (&dev, k->device) == CUDA_SUCCESS)
      d.PrimaryCtxRelease (dev);
  }
  delete k;
}

guint
gst_zc_user_kernel_max_threads (GstZcUserKernel * k)
{
  return k ? k->max_threads : 0;
}

static gboolean
launch_failure (GstZcGpuResult * r, const char *what, int code,
    const std::string & text, gboolean * sticky)
{
  r->status = GST_ZC_GPU_CUDA_ERROR;
  r->what = what;
  g_strlcpy (r->name, text.c_str (), sizeof (r->name));
  *sticky = gst_zc_cuda_error_is_sticky (code);
  gst_zc_cuda_note_error (code, text.c_str ());
  g_strlcpy (r->detail, *sticky ? "A kernel faulted on the GPU: CUDA's "
      "context on this device is lost for the rest of the process (a sticky "
      "error), so every later CUDA call in this process fails too" : "",
      sizeof (r->detail));
  return FALSE;
}

/* A failed runtime call: the runtime keeps its error as the last one */
static gboolean
runtime_failure (GstZcGpuResult * r, const char *what, gboolean * sticky)
{
  cudaError_t err = cudaGetLastError ();
  return launch_failure (r, what, err, std::string (cudaGetErrorName (err)) +
      ": " + cudaGetErrorString (err), sticky);
}

gboolean
gst_zc_user_kernel_launch (GstZcUserKernel * k, const GstZcKernelLaunch * l,
    gpointer stream, gboolean * sticky, GstZcGpuResult * result)
{
  const Driver & d = driver ();
  gst_zc_gpu_result_init (result);
  *sticky = FALSE;
  gst_zc::DeviceScope scope (k->device);
  bool in_place = l->in_mem == l->out_mem;
  if (!scope.ok () || !gst_zc_memory_prepare_gpu (l->in_mem, stream) ||
      (!in_place && !gst_zc_memory_prepare_gpu (l->out_mem, stream)))
    return runtime_failure (result, "Could not order the kernel after the "
        "frame's fence", sticky);

  CUresult r;
  {
    ContextScope cs (k->ctx);
    unsigned gx = (unsigned) ((l->in.width + l->block_w - 1) / l->block_w);
    unsigned gy = (unsigned) ((l->in.height + l->block_h - 1) / l->block_h);
    void *args[] = {
      (void *) &l->in, (void *) &l->out, (void *) &l->info,
      (void *) l->params
    };
    r = !cs.ok ()? CUDA_ERROR_INVALID_CONTEXT :
        GST_ZC_FAULT_OR (LAUNCH, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
        d.LaunchKernel (k->function, gx, gy, 1, l->block_w, l->block_h, 1, 0,
            (CUstream) stream, args, nullptr));
  }
  if (r != CUDA_SUCCESS)
    return launch_failure (result, "Could not launch the kernel", r,
        cu_error_text (r), sticky);
  if (!gst_zc_memory_set_gpu_fence (l->out_mem, stream) ||
      (!in_place && !gst_zc_memory_set_gpu_fence (l->in_mem, stream)))
    return runtime_failure (result, "Could not record the kernel's fence",
        sticky);
  return TRUE;
}

#else /* !GST_ZC_HAVE_CUDA */

struct _GstZcUserKernel
{
  int unused;
};

static Build
build_kernel (gint, const Spec &)
{
  Build b;
  b.message = "gst-zerocopy was built without the CUDA backend";
  return b;
}

void
gst_zc_user_kernel_free (GstZcUserKernel * k)
{
  delete k;
}

guint
gst_zc_user_kernel_max_threads (GstZcUserKernel *)
{
  return 0;
}

gboolean
gst_zc_user_kernel_launch (GstZcUserKernel *, const GstZcKernelLaunch *,
    gpointer, gboolean * sticky, GstZcGpuResult * result)
{
  gst_zc_gpu_result_init (result);
  *sticky = FALSE;
  result->status = GST_ZC_GPU_NOT_BUILT;
  result->what = "User kernel";
  g_strlcpy (result->name, "not built", sizeof (result->name));
  g_strlcpy (result->detail, "gst-zerocopy was built without the CUDA "
      "backend", sizeof (result->detail));
  return FALSE;
}

#endif /* GST_ZC_HAVE_CUDA */

#!/usr/bin/env python3
# gst-zerocopy: bench/gputrace.py and libzc-gputrace.so.
#
#   gputrace.py analysis GPUTRACE_PY
#       two processes' traces written by hand: the busy time, the context
#       changes and their gaps, the time two contexts ran at once and the
#       Unified Memory totals come out as counted by hand
#   gputrace.py gpu GPUTRACE_PY LIBZC_GPUTRACE GST_LAUNCH
#       a pipeline of ours under the tracer: its kernels are in the file
#       (exit 77 without a GPU)
# SPDX-License-Identifier: LGPL-2.1-or-later
import ctypes
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

HEADER = "kind,start_ns,end_ns,queued_ns,submitted_ns,context,stream,bytes,name\n"


def load(path):
    spec = importlib.util.spec_from_file_location("gputrace", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def expect(text, line):
    if line not in text:
        sys.exit("expected the line\n  %s\nin\n%s" % (line, text))


def analysis(gputrace):
    d = tempfile.mkdtemp(prefix="zc-gputrace-test-")
    # process 100: kernels 0-100 us and 300-400 us on context 1; a copy
    # beside the first; 8 MB moved to the GPU by Unified Memory, 3 GPU
    # fault groups
    with open(os.path.join(d, "t.100.csv"), "w") as f:
        f.write(HEADER)
        f.write('kernel,0,100000,0,0,1,7,0,"invert"\n')
        f.write("memcpy-HtoD,0,50000,0,0,1,8,4000000,\n")
        f.write('kernel,300000,400000,0,290000,1,7,0,"invert"\n')
        f.write("um-bytes-htod,10000,20000,0,0,0,0,8000000,0x1000\n")
        f.write("um-gpu-page-fault,10000,11000,0,0,0,0,3,0x1000\n")
    # process 200: kernels 120-220 us and 370-470 us, the second beside
    # process 100's for 30 us (as under MPS); a memset at 200-230 overlaps
    # its own kernel only
    with open(os.path.join(d, "t.200.csv"), "w") as f:
        f.write(HEADER)
        f.write('kernel,120000,220000,0,100000,1,9,0,"convert"\n')
        f.write("memset,200000,230000,0,0,1,9,64,\n")
        f.write('kernel,370000,470000,0,350000,1,9,0,"convert"\n')
    out = gputrace.summary([os.path.join(d, "t.100.csv"),
                            os.path.join(d, "t.200.csv")], 0)
    print(out)
    # the span: 0-470 us
    expect(out, "span 0.5 ms")
    expect(out, "process 100: 2 kernels, 1 copies (4.0 MB), contexts 100/1; "
                "kernels and memsets busy 42.6% of the span")
    # submitted to start: only the second kernel says when it was submitted
    expect(out, "  submitted to start: median 10.0 us")
    # each kernel with the context it ran in
    expect(out, "       2 x invert                                   in 100/1    "
                "median    100.0 us, total      0.2 ms")
    expect(out, "  unified memory bytes-htod: 1 events, 8.0 MB")
    expect(out, "  unified memory gpu-page-fault: 1 events, value 3")
    expect(out, "process 200: 2 kernels, 0 copies (0.0 MB), contexts 200/1; "
                "kernels and memsets busy 44.7% of the span")
    expect(out, "  submitted to start: median 20.0 us")
    # engine busy 0-100, 120-230, 300-470: 380 of 470 us; two contexts at
    # once 370-400
    expect(out, "all: kernels and memsets busy 80.9% of the span, two or "
                "more contexts at once 6.4%")
    # in start order: 100 (0), 200 (120), 200's memset (200), 100 (300),
    # 200 (370): 3 changes, gaps 20, 70 and -30 us; within a context -20
    expect(out, "  context changes: 3 (6383 a second); gap at a change "
                "median 20.0 us (p90 70.0), within a context median -20.0 us")
    # the first and the last 100 us left out (100-370 us): 200's kernel at
    # 120 and memset at 200, 100's kernel at 300: one change
    out = gputrace.summary([os.path.join(d, "t.100.csv"),
                            os.path.join(d, "t.200.csv")], 0.1)
    print(out)
    expect(out, "span 0.3 ms, 0.1 ms left out at each end")
    expect(out, "  context changes: 1 ")
    return 0


def have_gpu():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    n = ctypes.c_int(0)
    return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(n)) == 0 \
        and n.value > 0


def gpu(gputrace, library, gst_launch):
    if not have_gpu():
        print("skipped: no GPU")
        return 77
    launch = shutil.which(gst_launch)
    if not launch:
        sys.exit("%s not found" % gst_launch)
    d = tempfile.mkdtemp(prefix="zc-gputrace-test-")
    env = dict(os.environ, CUDA_INJECTION64_PATH=library,
               ZC_GPUTRACE=os.path.join(d, "trace"))
    frames = 30
    p = subprocess.run([launch, "-q", "videotestsrc", "num-buffers=%d" % frames,
                        "!", "video/x-raw,format=RGBA,width=640,height=360",
                        "!", "zcupload", "!", "zcfilter", "invert=true",
                        "!", "zcdownload", "!", "fakesink"],
                       env=env, stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=120)
    print(p.stderr)
    if p.returncode != 0:
        sys.exit("the pipeline failed under the tracer")
    files = glob.glob(os.path.join(d, "trace.*.csv"))
    if len(files) != 1:
        sys.exit("expected one trace file, found %s" % files)
    out = gputrace.summary(files, 0)
    print(out)
    line = [ln for ln in out.splitlines() if ln.startswith("process ")][0]
    kernels = int(line.split(":")[1].split()[0])
    # one invert a frame at least (the CPU backend would launch none)
    if kernels < frames:
        sys.exit("%d kernels traced for %d frames" % (kernels, frames))
    if "zc-gputrace: pid" not in p.stderr:
        sys.exit("the tracer printed no summary at exit")
    return 0


def main():
    gputrace = load(sys.argv[2])
    if sys.argv[1] == "analysis":
        return analysis(gputrace)
    return gpu(gputrace, sys.argv[3], sys.argv[4])


if __name__ == "__main__":
    sys.exit(main())

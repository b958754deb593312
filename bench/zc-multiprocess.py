#!/usr/bin/env python3
# gst-zerocopy benchmark: a chain split between two processes (unixfdsink,
# unixfdsrc) against the same chain in one process.
#
#   one process:   videotestsrc (NV12) ! zcupload ! zcfilter (to RGBA)
#                  ! zcdownload ! zcupload ! zcfilter invert ! zcdownload
#                  ! fakesink
#   two processes: the same, split between zcdownload and zcupload by
#                  unixfdsink | unixfdsrc
#   --socket:      also the split chain's two pipelines in one process,
#                  through the same socket: the frames' memory and the
#                  socket as in two processes, one CUDA context as in one
#                  process (which of the two sets the split chain's pace)
#
# Flat out (a source that is not live), FRAMES frames of WIDTHxHEIGHT a
# run; the frames a second the last element saw, from its first frame to
# the end of stream. The two run alternately, RUNS times each; medians and
# ranges, and the copies both processes' elements counted.
#
#   zc-multiprocess.py [--frames N] [--runs N] [--size WxH] [--queue [N]]
#                      [--staged] [--socket]
# --queue puts a queue (of N buffers, default 3) before each half's
# zcdownload, in both chains: the wait for a frame's GPU work (zcdownload's,
# before the frame leaves for the CPU or the other process) then runs on a
# thread of its own, beside the next frame's fill and launch.
# Needs GStreamer 1.26 (unixfdsink's wait-for-connection).
# SPDX-License-Identifier: LGPL-2.1-or-later
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

# the producer's half converts the camera's NV12 to RGBA, the consumer's
# inverts: work that the CPU backend cannot fold into one pass in one process
PRODUCER = ("zcupload name=p0 ! zcfilter name=p1 "
            "! video/x-raw(memory:CUDAZeroCopy),format=RGBA ! %s"
            "zcdownload name=p2")
CONSUMER = "zcupload name=c0 ! zcfilter name=c1 invert=true ! %szcdownload name=c2"


# --staged: each half's kernel works in device memory and a second zcfilter
# brings the frame back to mapped memory, so that the bus traffic runs on the
# copy engines (beside the other process's kernels) instead of inside
# kernels that read and write mapped memory (which the GPU time-slices
# between the two processes' CUDA contexts)
PRODUCER_STAGED = ("zcupload name=p0 ! zcfilter name=p1 memory-type=device "
                   "! video/x-raw(memory:CUDAZeroCopy),format=RGBA "
                   "! zcfilter name=px ! %szcdownload name=p2")
CONSUMER_STAGED = ("zcupload name=c0 ! zcfilter name=c1 invert=true "
                   "memory-type=device ! zcfilter name=cx ! %szcdownload name=c2")


def halves(queue, staged):
    q = "queue max-size-buffers=%d ! " % queue if queue else ""
    if staged:
        return PRODUCER_STAGED % q, CONSUMER_STAGED % q
    return PRODUCER % q, CONSUMER % q


def caps(size):
    w, h = size.split("x")
    return "video/x-raw,format=NV12,width=%s,height=%s,framerate=30/1" % (w, h)


def copies(pipe, prefix):
    names = ["%s%d" % (prefix, i) for i in range(3)] + [prefix + "x"]
    return sum(e.get_property("stats").get_value("copied-buffers")
               for e in map(pipe.get_by_name, names) if e)


def played_to_eos(pipe, seconds, what):
    """Waits for @pipe's end of stream; exits saying @what on an error."""
    msg = pipe.get_bus().timed_pop_filtered(
        seconds * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    if not msg or msg.type != Gst.MessageType.EOS:
        raise SystemExit("%s: %s" % (
            what, msg.parse_error()[0].message if msg else "timeout"))


def timed(pipe, prefix):
    """Plays @pipe to its end: frames a second at its sink, and copies."""
    first = []

    def probe(pad, info):
        first.append(time.monotonic())
        return Gst.PadProbeReturn.REMOVE

    pipe.get_by_name("sink").get_static_pad("sink").add_probe(
        Gst.PadProbeType.BUFFER, probe)
    pipe.set_state(Gst.State.PLAYING)
    played_to_eos(pipe, 600, "did not finish")
    end = time.monotonic()
    frames = pipe.get_by_name(prefix + "1").get_property("stats") \
        .get_value("buffers")
    n_copies = copies(pipe, prefix)
    pipe.set_state(Gst.State.NULL)
    return (frames - 1) / (end - first[0]), frames, n_copies


def one_process(args):
    pipe = Gst.parse_launch(
        "videotestsrc num-buffers=%d pattern=colors ! %s ! %s ! %s "
        "! fakesink name=sink sync=false"
        % ((args.frames, caps(args.size)) + halves(args.queue, args.staged)))
    fps, frames, c = timed(pipe, "c")
    return fps, frames, c + copies(pipe, "p")


def producer(socket, frames, size, queue, staged):
    pipe = producer_pipeline(socket, frames, size, queue, staged)
    pipe.set_state(Gst.State.PLAYING)
    played_to_eos(pipe, 600, "the producer did not finish")
    print(json.dumps({"copies": copies(pipe, "p")}), flush=True)
    pipe.set_state(Gst.State.NULL)
    return 0


def producer_pipeline(socket, frames, size, queue, staged):
    return Gst.parse_launch(
        "videotestsrc num-buffers=%d pattern=colors ! %s ! %s "
        "! unixfdsink socket-path=%s wait-for-connection=true sync=false"
        % (frames, caps(size), halves(queue, staged)[0], socket))


def consumer_pipeline(socket, args):
    return Gst.parse_launch(
        "unixfdsrc socket-path=%s ! %s ! fakesink name=sink sync=false"
        % (socket, halves(args.queue, args.staged)[1]))


def wait_for(path):
    while not os.path.exists(path):
        time.sleep(0.05)


def two_processes(args):
    socket = os.path.join(tempfile.mkdtemp(prefix="zc-mp-bench-"), "frames")
    prod = subprocess.Popen([sys.executable, __file__, "--producer", socket,
                             "--frames", str(args.frames), "--size", args.size]
                            + (["--queue", str(args.queue)] if args.queue else [])
                            + (["--staged"] if args.staged else []),
                            stdout=subprocess.PIPE, universal_newlines=True)
    wait_for(socket)
    fps, frames, c = timed(consumer_pipeline(socket, args), "c")
    line = prod.stdout.readline()
    if not line:
        raise SystemExit("the producer process failed (exit status %s)"
                         % prod.wait(timeout=60))
    prod_copies = json.loads(line)["copies"]
    prod.wait(timeout=60)
    os.rmdir(os.path.dirname(socket))
    return fps, frames, c + prod_copies


def one_process_socket(args):
    """The split chain's two pipelines in this process, through a socket."""
    socket = os.path.join(tempfile.mkdtemp(prefix="zc-mp-bench-"), "frames")
    prod = producer_pipeline(socket, args.frames, args.size, args.queue,
                             args.staged)
    prod.set_state(Gst.State.PLAYING)
    wait_for(socket)
    fps, frames, c = timed(consumer_pipeline(socket, args), "c")
    played_to_eos(prod, 60, "the producer did not finish")
    c += copies(prod, "p")
    prod.set_state(Gst.State.NULL)
    os.rmdir(os.path.dirname(socket))
    return fps, frames, c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=3000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--queue", type=int, nargs="?", const=3, default=0)
    ap.add_argument("--staged", action="store_true")
    ap.add_argument("--socket", action="store_true")
    ap.add_argument("--producer")
    args = ap.parse_args()
    Gst.init(None)
    if args.producer:
        return producer(args.producer, args.frames, args.size, args.queue,
                        args.staged)
    sink = Gst.ElementFactory.make("unixfdsink")
    if not sink or not sink.find_property("wait-for-connection"):
        print("skipped: needs unixfdsink with wait-for-connection "
              "(GStreamer 1.26); this is %s" % Gst.version_string())
        return 77

    # (an element's stats name its backend only once it has started)
    try:
        gi.require_version("GstZc", "1.0")
        from gi.repository import GstZc
        backend = "cuda" if GstZc.Context.new(-1).has_gpu() else "cpu"
    except (ImportError, ValueError):
        backend = "unknown (GstZc-1.0.typelib not on GI_TYPELIB_PATH)"
    print("# zc-multiprocess: %d frames of %s NV12 to RGBA, then invert, flat "
          "out, %s, %d runs each%s"
          % (args.frames, args.size, Gst.version_string(), args.runs,
             ", a queue of %d before each zcdownload" % args.queue
             if args.queue else "")
          + (", staged (kernels on device memory, the copy engines on the "
             "bus)" if args.staged else ""))
    chains = [("one process", one_process), ("two processes", two_processes)]
    if args.socket:
        chains.append(("one via socket", one_process_socket))
    results = {name: [] for name, _ in chains}
    for _ in range(args.runs):
        for name, fn in chains:
            fps, frames, c = fn(args)
            results[name].append(fps)
            print("%-14s %8.1f fps  %d frames  %d copies" % (name, fps, frames, c),
                  flush=True)
    print("# medians (range), frames a second at the last element; backend: "
          "%s" % backend)
    med = {}
    for name, v in results.items():
        med[name] = statistics.median(v)
        print("%-14s %8.1f (%.1f-%.1f)" % (name, med[name], min(v), max(v)))
    for name in results:
        if name != "one process":
            print("%s / one process: %.2fx"
                  % (name, med[name] / med["one process"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

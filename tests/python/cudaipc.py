#!/usr/bin/env python3
# gst-zerocopy: frames across processes in device memory through nvcodec's
# cudaipcsink and cudaipcsrc (GStreamer 1.24, discrete GPUs). The producer's
# zcfilter writes memory:CUDAMemory into cudaipcsink; the consumer's
# cudaipcsrc hands it to zcupload, which reads it in place (counted as
# cuda-memory-buffers), and a second zcfilter works on it. Every frame the
# consumer gets must be bit-exact with the same chain in one process.
# Exit 77 without a GPU or without the two elements.
# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import subprocess
import sys
import tempfile
import time

try:
    import gi

    gi.require_version("Gst", "1.0")
    from gi.repository import Gst  # noqa: E402
except (ImportError, ValueError) as e:
    print("skipped: %s" % e)
    sys.exit(77)

FRAMES = 120
SRC = ("videotestsrc is-live=true num-buffers=%d pattern=ball ! video/x-raw,format=NV12,"
       "width=640,height=360,framerate=30/1 ! zcupload ! zcfilter brightness=0.2 "
       "! video/x-raw(memory:CUDAMemory),format=RGBA" % FRAMES)
DST = ("zcupload name=up ! zcfilter invert=true ! zcdownload "
       "! appsink name=sink sync=false")


def frames_of(pipe):
    sink = pipe.get_by_name("sink")
    pipe.set_state(Gst.State.PLAYING)
    out = []
    while True:
        sample = sink.emit("try-pull-sample", 10 * Gst.SECOND)
        if sample is None:
            break
        buf = sample.get_buffer()
        ok, info = buf.map(Gst.MapFlags.READ)
        out.append(bytes(info.data))
        buf.unmap(info)
    stats = pipe.get_by_name("up").get_property("stats")
    pipe.set_state(Gst.State.NULL)
    return out, stats


def main():
    Gst.init(None)
    if len(sys.argv) > 2 and sys.argv[1] == "producer":
        pipe = Gst.parse_launch("%s ! cudaipcsink address=%s" % (SRC, sys.argv[2]))
        pipe.set_state(Gst.State.PLAYING)
        msg = pipe.get_bus().timed_pop_filtered(
            60 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
        pipe.set_state(Gst.State.NULL)
        return 0 if msg and msg.type == Gst.MessageType.EOS else 1

    for e in ("cudaipcsink", "cudaipcsrc"):
        if not Gst.ElementFactory.find(e):
            print("skipped: no %s (nvcodec, GStreamer 1.24)" % e)
            return 77
    # (an element's stats name its backend only once it has started)
    gi.require_version("GstZc", "1.0")
    from gi.repository import GstZc
    if not GstZc.Context.new(-1).has_gpu():
        print("skipped: no GPU")
        return 77

    reference, _ = frames_of(Gst.parse_launch("%s ! %s" % (SRC, DST)))
    address = os.path.join(tempfile.mkdtemp(prefix="zc-cudaipc-"), "ipc")
    prod = subprocess.Popen([sys.executable, __file__, "producer", address])
    for _ in range(100):
        if os.path.exists(address):
            break
        time.sleep(0.1)
    got, stats = frames_of(Gst.parse_launch(
        "cudaipcsrc address=%s ! %s" % (address, DST)))
    rc = prod.wait(timeout=60)

    ok = True
    # the consumer may join after the first frames, and a live producer may
    # drop one the consumer was not ready for: every frame it got must be
    # one of the reference's, byte for byte, in the reference's order
    where = {}
    for i, f in enumerate(reference):
        where.setdefault(f, i)
    idx = [where.get(f, -1) for f in got]
    exact = bool(got) and -1 not in idx and idx == sorted(idx) and \
        len(set(idx)) == len(idx)
    print("%d frames of %d received; bit-exact with one process: %s; "
          "cuda-memory-buffers %d, copied-buffers %d"
          % (len(got), FRAMES, bool(exact), stats.get_value("cuda-memory-buffers"),
             stats.get_value("copied-buffers")))
    if rc != 0 or len(got) < FRAMES // 2 or not exact:
        ok = False
    if stats.get_value("copied-buffers") != 0 or \
            stats.get_value("cuda-memory-buffers") != len(got):
        print("FAIL zcupload copied nvcodec's memory instead of reading it")
        ok = False
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

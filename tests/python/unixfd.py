#!/usr/bin/env python3
# gst-zerocopy: frames across processes through unixfdsink and unixfdsrc
# (GStreamer 1.24 and later), both sides zero-copy.
#
#   producer:  videotestsrc ! zcupload ! zcfilter invert=true ! zcdownload
#              ! unixfdsink            (frames in memfd files of our pool)
#   consumer:  unixfdsrc ! zcupload ! zcfilter invert=true ! zcdownload
#              ! appsink               (each file mapped once, by identity)
#
# Separate processes. The producer stamps a counter into each frame; every
# frame the consumer gets must be the source frame again (inverted twice),
# its counter larger than the last. After warm-up neither process copies
# (stats of every element of ours), the consumer registers, maps or wraps
# nothing more (but a file the producer's pools add), and RSS and open
# descriptors stay flat over 10,000 frames. A
# consumer killed mid-stream leaves the producer playing, and a new one gets
# frames; the producer's descriptors and RSS come back to where they were.
# With a GPU, a consumer whose zckernel faults ends alone: the producer and
# another consumer play on.
#
#   unixfd.py                         the test (starts the processes below)
#   unixfd.py producer SOCKET         (commands on stdin: stats, quit)
#   unixfd.py consumer SOCKET FRAMES  (prints "warm", then a JSON summary)
#   unixfd.py faulting SOCKET KERNEL  (prints the ERROR it ended with)
# SPDX-License-Identifier: LGPL-2.1-or-later
import json
import os
import re
import subprocess
import sys
import tempfile
import time

try:
    import gi

    gi.require_version("Gst", "1.0")
    gi.require_version("GstVideo", "1.0")
    gi.require_version("GstAllocators", "1.0")
    gi.require_version("GstZc", "1.0")
    from gi.repository import GLib, Gst, GstAllocators, GstVideo, GstZc  # noqa: E402
    import numpy  # noqa: E402
    import gstzc  # noqa: E402
except (ImportError, ValueError) as e:
    print("skipped: %s" % e)
    sys.exit(77)

W, H = 320, 240
CAPS = "video/x-raw,format=RGBA,width=%d,height=%d" % (W, H)
WARM = 1000
FRAME_KIB = (W * H * 4 + 1023) // 1024
STAT_KEYS = ("buffers", "copied-buffers", "registrations", "adopted-buffers")


def proc_usage():
    """This process's resident memory (KiB), its open descriptors, and how
    many of those are frames of our pools, from one listing: a frame's
    descriptor comes and goes while frames flow, so two listings would not
    agree. A descriptor that closes while it is read is left out of both
    counts."""
    rss = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    fds = frames = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        fds += 1
        frames += "gst-zerocopy" in target
    return rss, fds, frames


def element_stats(pipe):
    out = {}
    for name in ("up", "fx", "down"):
        s = pipe.get_by_name(name).get_property("stats")
        out[name] = {k: s.get_value(k) for k in STAT_KEYS}
        out[name]["backend"] = s.get_value("backend")
    return out


def run_once(launch, data=None):
    """The one frame @launch makes (from @data through appsrc)."""
    pipe = Gst.parse_launch(launch)
    if data is not None:
        src = pipe.get_by_name("src")
        src.set_property("caps", Gst.Caps.from_string(CAPS + ",framerate=30/1"))
        src.emit("push-buffer", Gst.Buffer.new_wrapped(data))
        src.emit("end-of-stream")
    pipe.set_state(Gst.State.PLAYING)
    sample = pipe.get_by_name("sink").emit("pull-sample")
    buf = sample.get_buffer()
    ok, info = buf.map(Gst.MapFlags.READ)
    out = bytes(info.data)
    buf.unmap(info)
    pipe.set_state(Gst.State.NULL)
    return out


def reference_frame():
    """What the consumer must see: the source frame (colors, which stands
    still) through the producer's zcfilter, then through the consumer's,
    each in a pipeline of its own."""
    produced = run_once(
        "videotestsrc num-buffers=1 pattern=colors ! %s ! zcupload ! zcfilter "
        "invert=true ! zcdownload ! appsink name=sink" % CAPS)
    consumed = run_once(
        "appsrc name=src format=time ! zcupload ! zcfilter invert=true ! zcdownload "
        "! appsink name=sink", produced)
    return numpy.frombuffer(consumed, dtype=numpy.uint8).reshape(H, W * 4)


def producer(socket):
    pipe = Gst.parse_launch(
        "videotestsrc is-live=true pattern=colors name=src ! %s,framerate=1000/1 "
        "! zcupload name=up ! zcfilter name=fx invert=true ! zcdownload name=down "
        "! unixfdsink socket-path=%s" % (CAPS, socket))
    counter = [0]

    def stamp(pad, pinfo):
        # the counter in the frame's first 8 bytes, written where the
        # source wrote the frame (zcupload's pool)
        buf = pinfo.get_buffer()
        with gstzc.Frame(buf, pad.get_current_caps(), writable=True) as f:
            pixels = numpy.asarray(f.planes[0])  # rows, columns, RGBA
            counter[0] += 1
            # in the alpha of the first 8 pixels, which invert leaves alone
            pixels[0, :8, 3] = numpy.frombuffer(
                counter[0].to_bytes(8, "little"), dtype=numpy.uint8)
        return Gst.PadProbeReturn.OK

    pipe.get_by_name("src").get_static_pad("src").add_probe(
        Gst.PadProbeType.BUFFER, stamp)
    loop = GLib.MainLoop()

    def on_message(bus, msg):
        if msg.type == Gst.MessageType.ERROR:
            err, dbg = msg.parse_error()
            print("ERROR %s %s" % (err.message, dbg), file=sys.stderr, flush=True)
            os._exit(1)
        elif msg.type == Gst.MessageType.EOS:
            loop.quit()

    bus = pipe.get_bus()
    bus.add_signal_watch()
    bus.connect("message", on_message)

    def on_stdin(channel, cond):
        line = sys.stdin.readline().strip()
        if line == "stats":
            rss, fds, frame_fds = proc_usage()
            print(json.dumps({"frames": counter[0], "rss": rss, "fds": fds,
                              "frame-files": frame_fds,
                              "stats": element_stats(pipe)}), flush=True)
            return True
        pipe.send_event(Gst.Event.new_eos())
        return False

    GLib.io_add_watch(GLib.IOChannel.unix_new(sys.stdin.fileno()),
                      GLib.PRIORITY_DEFAULT, GLib.IOCondition.IN |
                      GLib.IOCondition.HUP, on_stdin)
    pipe.set_state(Gst.State.PLAYING)
    loop.run()
    pipe.set_state(Gst.State.NULL)
    bus.remove_signal_watch()
    del pipe, bus
    # with GST_TRACERS=leaks, what is still alive is reported here
    Gst.deinit()
    return 0


def consumer(socket, frames):
    ref = reference_frame()
    pipe = Gst.parse_launch(
        "unixfdsrc name=src socket-path=%s ! zcupload name=up ! zcfilter "
        "name=fx invert=true ! zcdownload name=down ! appsink name=sink "
        "sync=false max-buffers=4" % socket)
    sink = pipe.get_by_name("sink")
    up = pipe.get_by_name("up")
    # The files received, by identity, counted as each frame leaves
    # unixfdsrc; what zcupload made of them counted as that frame leaves
    # zcupload. Both in the streaming thread, one frame after the other, so
    # that the snapshot at zcupload's WARM-th frame holds exactly the files
    # of the frames before it: nothing in flight between the counts.
    files = set()
    taken = [0]
    files_warm = {}

    def received(pad, info):
        buf = info.get_buffer()
        for i in range(buf.n_memory()):
            mem = buf.peek_memory(i)
            if GstAllocators.is_fd_memory(mem):
                st = os.fstat(GstAllocators.fd_memory_get_fd(mem))
                files.add((st.st_dev, st.st_ino))
        return Gst.PadProbeReturn.OK

    def counts():
        return {"files": len(files),
                "wrappers": GstZc.wrapped_buffers_made(),
                "registrations":
                    up.get_property("stats").get_value("registrations")}

    def took(pad, info):
        taken[0] += 1
        if taken[0] == WARM:
            files_warm.update(counts())
        return Gst.PadProbeReturn.OK

    pipe.get_by_name("src").get_static_pad("src").add_probe(
        Gst.PadProbeType.BUFFER, received)
    up.get_static_pad("src").add_probe(Gst.PadProbeType.BUFFER, took)
    pipe.set_state(Gst.State.PLAYING)
    last = 0
    wrong = []  # the first five
    n_wrong = 0
    series = []  # RSS every 1,000 frames
    got = 0
    warm = None
    while got < frames:
        sample = sink.emit("try-pull-sample", 10 * Gst.SECOND)
        if sample is None:
            break
        buf = sample.get_buffer()
        with gstzc.Frame(buf, sample.get_caps()) as f:
            a = numpy.asarray(f.planes[0]).reshape(H, W * 4)
            count = int.from_bytes(a[0, 3:32:4].tobytes(), "little")
            same = numpy.array_equal(a[0, 32:], ref[0, 32:]) and \
                numpy.array_equal(a[1:], ref[1:]) and \
                numpy.array_equal(a[0, :32].reshape(8, 4)[:, :3],
                                  ref[0, :32].reshape(8, 4)[:, :3])
        if not same or count <= last:
            wrong.append((got, count, last, same))
            del wrong[5:]
            n_wrong += 1
        last = count
        got += 1
        if got % 1000 == 0:
            series.append(proc_usage()[0])
        if got == WARM:
            rss, fds, frame_fds = proc_usage()
            warm = {"rss": rss, "fds": fds, "frame-fds": frame_fds,
                    "stats": element_stats(pipe),
                    "wrappers": GstZc.wrapped_buffers_made()}
            print("warm", flush=True)
    rss, fds, frame_fds = proc_usage()
    end = {"rss": rss, "fds": fds, "frame-fds": frame_fds,
           "stats": element_stats(pipe),
           "wrappers": GstZc.wrapped_buffers_made()}
    pipe.set_state(Gst.State.NULL)
    # streaming has stopped: every file counted went through zcupload
    files_end = counts()
    print(json.dumps({"frames": got, "wrong": n_wrong,
                      "first-wrong": wrong, "warm": warm, "end": end,
                      "files-warm": files_warm, "files-end": files_end,
                      "rss-series": series}),
          flush=True)
    return 0 if got == frames and not n_wrong else 1


def faulting(socket, kernel):
    """A consumer whose kernel faults: it must end with an ERROR that says
    the process must restart, and alone."""
    pipe = Gst.parse_launch(
        "unixfdsrc socket-path=%s ! zcupload ! zckernel location=%s "
        "cpu-fallback=false ! zcdownload ! fakesink" % (socket, kernel))
    pipe.set_state(Gst.State.PLAYING)
    msg = pipe.get_bus().timed_pop_filtered(
        30 * Gst.SECOND, Gst.MessageType.ERROR | Gst.MessageType.EOS)
    text = msg.parse_error()[0].message if msg and \
        msg.type == Gst.MessageType.ERROR else "no error"
    print(json.dumps({"error": text}), flush=True)
    pipe.set_state(Gst.State.NULL)
    return 0


def copies(before, after):
    return {n: after[n]["copied-buffers"] - before[n]["copied-buffers"]
            for n in after}


class Producer:
    def __init__(self, socket, log):
        # the leaks tracer reports the objects still alive at its
        # Gst.deinit() into @log
        env = dict(os.environ, GST_TRACERS="leaks", GST_DEBUG="GST_TRACER:7",
                   GST_DEBUG_NO_COLOR="1")
        self.log = log
        with open(log, "w") as err:
            self.p = subprocess.Popen([sys.executable, __file__, "producer",
                                       socket], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=err,
                                      env=env, universal_newlines=True)

    def leaks(self):
        with open(self.log) as f:
            return [line.strip()[-200:] for line in f
                    if re.search(r"object-alive, type-name=\(string\)(?!%s)",
                                 line) or "Leaks detected" in line]

    def stats(self):
        self.p.stdin.write("stats\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def quit(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        return self.p.wait(timeout=30)


def start_consumer(socket, frames):
    return subprocess.Popen([sys.executable, __file__, "consumer", socket,
                             str(frames)], stdout=subprocess.PIPE,
                            universal_newlines=True)


def flat(before, after):
    """The producer's descriptors and RSS, but for its pool's frames."""
    grown = after["frame-files"] - before["frame-files"]
    return (after["fds"] - after["frame-files"] <=
            before["fds"] - before["frame-files"] and
            after["rss"] - before["rss"] < 1024 + max(grown, 0) * FRAME_KIB)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    return cond


def main():
    if not Gst.ElementFactory.find("unixfdsink") or \
            not Gst.ElementFactory.find("unixfdsrc"):
        print("skipped: no unixfdsink/unixfdsrc (GStreamer %s; they came in "
              "1.24)" % Gst.version_string())
        return 77
    tmp = tempfile.mkdtemp(prefix="zc-unixfd-")
    socket = os.path.join(tmp, "frames")
    prod = Producer(socket, os.path.join(tmp, "producer.log"))
    ok = True
    try:
        for _ in range(100):
            if os.path.exists(socket):
                break
            time.sleep(0.1)
        ok &= check(os.path.exists(socket), "the producer listens on %s" % socket)

        # 10,000 frames into a consumer process
        cons = start_consumer(socket, 10000)
        ok &= check(cons.stdout.readline().strip() == "warm",
                    "the consumer warmed up (%d frames)" % WARM)
        p_warm = prod.stats()
        summary = json.loads(cons.stdout.readline())
        rc = cons.wait(timeout=120)
        p_end = prod.stats()
        warm, end = summary["warm"], summary["end"]
        print("consumer: %s" % json.dumps(summary))
        print("producer at the consumer's warm-up: %s" % json.dumps(p_warm))
        print("producer at its end: %s" % json.dumps(p_end))
        ok &= check(rc == 0 and summary["frames"] == 10000 and
                    summary["wrong"] == 0,
                    "10,000 frames, every one right (%d wrong)" % summary["wrong"])
        backend = end["stats"]["up"]["backend"]
        ok &= check(all(v == 0 for v in copies(warm["stats"], end["stats"]).values()),
                    "the consumer copied nothing after warm-up (%s backend): %s"
                    % (backend, copies(warm["stats"], end["stats"])))
        ok &= check(end["stats"]["up"]["adopted-buffers"] -
                    warm["stats"]["up"]["adopted-buffers"] ==
                    end["stats"]["up"]["buffers"] - warm["stats"]["up"]["buffers"],
                    "zcupload took every received frame in place")
        # a file is registered (GPU) and wrapped when it is first seen,
        # never per frame: after warm-up, only files first received after
        f_warm, f_end = summary["files-warm"], summary["files-end"]
        new_files = f_end["files"] - f_warm["files"]
        late = f_end["registrations"] - f_warm["registrations"]
        ok &= check(late <= new_files,
                    "registrations: %d in warm-up, %d after (%d files "
                    "received, %d of them first after warm-up)"
                    % (f_warm["registrations"], late, f_end["files"],
                       new_files))
        ok &= check(all(v == 0 for v in copies(p_warm["stats"], p_end["stats"]).values()),
                    "the producer copied nothing meanwhile: %s"
                    % copies(p_warm["stats"], p_end["stats"]))
        # a frame of a file seen before reuses the buffer made for it
        late = f_end["wrappers"] - f_warm["wrappers"]
        ok &= check(late <= new_files,
                    "wrapper buffers made: %d in warm-up, %d after (%d files "
                    "first received after warm-up)"
                    % (f_warm["wrappers"], late, new_files))
        # The producer's pool grows to the most frames ever out at once
        # (its consumers hold some) and keeps them: each is a file, open
        # in the producer and mapped in the consumer. Past that, nothing
        # may grow.
        # a received frame's descriptor stays open while the frame is in
        # the pipeline (at most the appsink's 4 and one an element): those
        # come and go. The others may differ by one between two moments
        # (GStreamer and the GPU driver open an eventfd or a socket of their
        # own when they first need one, and close some): a leak, per frame
        # or per file, would be more
        ok &= check(end["fds"] - end["frame-fds"] <=
                    warm["fds"] - warm["frame-fds"] + 1 and
                    end["frame-fds"] <= 8 and
                    end["rss"] - warm["rss"] < 1024 + new_files * FRAME_KIB,
                    "the consumer's descriptors %d -> %d (frames in flight "
                    "%d -> %d), RSS %d -> %d KiB (%d files first received "
                    "after warm-up)"
                    % (warm["fds"], end["fds"], warm["frame-fds"],
                       end["frame-fds"], warm["rss"], end["rss"], new_files))
        ok &= check(flat(p_warm, p_end),
                    "the producer's descriptors %d -> %d (%d -> %d frame "
                    "files), RSS %d -> %d KiB"
                    % (p_warm["fds"], p_end["fds"], p_warm["frame-files"],
                       p_end["frame-files"], p_warm["rss"], p_end["rss"]))
        # zcupload's and zcdownload's shareable pools: 16 frames out at most
        ok &= check(p_end["frame-files"] <= 2 * 16,
                    "the producer's pools hold %d frames" % p_end["frame-files"])

        # a consumer killed mid-stream, then a new one
        killed = start_consumer(socket, 1000000)
        killed.stdout.readline()
        killed.kill()
        killed.wait()
        time.sleep(1.0)
        p_after_kill = prod.stats()
        ok &= check(prod.p.poll() is None and
                    p_after_kill["frames"] > p_end["frames"],
                    "the producer plays on after its consumer was killed "
                    "(%d frames)" % p_after_kill["frames"])
        again = start_consumer(socket, 1500)
        again.stdout.readline()
        summary2 = json.loads(again.stdout.readline())
        rc2 = again.wait(timeout=60)
        ok &= check(rc2 == 0 and summary2["wrong"] == 0,
                    "a new consumer gets right frames (%d)" % summary2["frames"])
        time.sleep(1.0)
        p_last = prod.stats()
        print("producer after the new consumer: %s" % json.dumps(p_last))
        ok &= check(flat(p_end, p_last),
                    "the producer's descriptors %d -> %d (%d -> %d frame "
                    "files), RSS %d -> %d KiB across the kill"
                    % (p_end["fds"], p_last["fds"], p_end["frame-files"],
                       p_last["frame-files"], p_end["rss"], p_last["rss"]))
        # With a GPU: a consumer whose kernel faults ends alone
        if backend == "cuda":
            kernel = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  "..", "kernels", "zckernel", "fault.cu")
            healthy = start_consumer(socket, 3000)
            bad = subprocess.Popen([sys.executable, __file__, "faulting",
                                    socket, kernel], stdout=subprocess.PIPE,
                                   universal_newlines=True)
            started = time.monotonic()
            error = json.loads(bad.stdout.readline())["error"]
            bad.wait(timeout=30)
            took = time.monotonic() - started
            healthy.stdout.readline()
            summary3 = json.loads(healthy.stdout.readline())
            rc3 = healthy.wait(timeout=60)
            ok &= check("restart the process" in error and took < 30,
                        "the faulting consumer ended in %.1f s: %s" % (took, error))
            ok &= check(rc3 == 0 and summary3["wrong"] == 0,
                        "the other consumer got %d right frames meanwhile"
                        % summary3["frames"])
            ok &= check(prod.p.poll() is None, "the producer plays on")
        ok &= check(prod.quit() == 0, "the producer ends cleanly on EOS")
        leaks = prod.leaks()
        ok &= check(not leaks, "the producer's leaks tracer: %d objects alive "
                    "at its end %s" % (len(leaks), leaks[:3]))
    finally:
        if prod.p.poll() is None:
            prod.p.kill()
        for f in (socket, prod.log):
            try:
                os.unlink(f)
            except OSError:
                pass
        os.rmdir(tmp)
    return 0 if ok else 1


if __name__ == "__main__":
    Gst.init(None)
    if len(sys.argv) > 1 and sys.argv[1] == "producer":
        sys.exit(producer(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "consumer":
        sys.exit(consumer(sys.argv[2], int(sys.argv[3])))
    if len(sys.argv) > 1 and sys.argv[1] == "faulting":
        sys.exit(faulting(sys.argv[2], sys.argv[3]))
    sys.exit(main())

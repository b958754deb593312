#!/usr/bin/env python3
# gst-zerocopy: GPU views of frames through the gstzc module. For mapped,
# managed and device memory: the planes' addresses are device addresses of
# the memory type cudaPointerGetAttributes reports; over 1,000 frames a
# cudaMemsetAsync on the test's own stream through the view, then the
# fence, is what the next zcfilter reads and the sink sees, every frame,
# with no host synchronisation between. The CUDA runtime is reached with
# ctypes (no Python CUDA package is assumed). Exits 77 without a GPU.
# SPDX-License-Identifier: LGPL-2.1-or-later
import ctypes
import ctypes.util
import os
import sys

try:
    import gi

    gi.require_version("Gst", "1.0")
    gi.require_version("GstZc", "1.0")
    from gi.repository import Gst, GstZc  # noqa: E402
    import gstzc  # noqa: E402
except (ImportError, ValueError) as e:
    print("skipped: %s" % e)
    sys.exit(77)

# fewer under compute-sanitizer (ZC_TEST_FRAMES), which is slow
FRAMES = int(os.environ.get("ZC_TEST_FRAMES", "1000"))
W, H = 64, 48


def load_cudart():
    names = [ctypes.util.find_library("cudart"), "libcudart.so",
             "/usr/local/cuda/lib64/libcudart.so", "libcudart.so.13",
             "libcudart.so.12", "libcudart.so.11.0"]
    for n in names:
        if not n:
            continue
        try:
            return ctypes.CDLL(n)
        except OSError:
            continue
    return None


class PointerAttributes(ctypes.Structure):
    # cudaPointerAttributes (CUDA 11 and later); CUDA 13 added reserved
    # words, which the runtime writes: without them it writes past the end
    _fields_ = [("type", ctypes.c_int), ("device", ctypes.c_int),
                ("devicePointer", ctypes.c_void_p),
                ("hostPointer", ctypes.c_void_p),
                ("reserved", ctypes.c_long * 8)]


# cudaMemoryType
EXPECTED = {"mapped": 1, "device": 2, "managed": 3}


def check(cuda, memory_type):
    def ok(err, what):
        assert err == 0, "%s: CUDA error %d" % (what, err)

    stream = ctypes.c_void_p()
    ok(cuda.cudaStreamCreateWithFlags(ctypes.byref(stream), 1),
       "cudaStreamCreateWithFlags")
    s = stream.value or 0
    pipe = Gst.parse_launch(
        "videotestsrc num-buffers=%d ! video/x-raw,format=RGBA,width=%d,"
        "height=%d ! zcupload memory-type=%s ! identity name=id ! "
        "zcfilter invert=true ! zcdownload ! appsink name=sink sync=false "
        "max-buffers=4" % (FRAMES, W, H, memory_type))
    state = {"n": 0, "types": set(), "wrong": 0, "seen": 0}

    def probe(pad, info):
        value = 17 + state["n"] % 200
        state["n"] += 1
        buf = info.get_buffer()
        with gstzc.Frame(buf, pad.get_current_caps(), gpu=True,
                         writable=True, stream=s) as f:
            pl = f.planes[0]
            attrs = PointerAttributes()
            ok(cuda.cudaPointerGetAttributes(ctypes.byref(attrs),
                                             ctypes.c_void_p(pl.data)),
               "cudaPointerGetAttributes")
            state["types"].add(attrs.type)
            cai = pl.__cuda_array_interface__
            assert cai["data"][0] == pl.data and cai["stream"] == s
            ok(cuda.cudaMemsetAsync(ctypes.c_void_p(pl.data), value,
                                    ctypes.c_size_t(pl.stride * pl.rows),
                                    ctypes.c_void_p(s)), "cudaMemsetAsync")
            # leaving the block fences the frame from s: no host wait here
        return Gst.PadProbeReturn.OK

    pipe.get_by_name("id").get_static_pad("src").add_probe(
        Gst.PadProbeType.BUFFER, probe)
    sink = pipe.get_by_name("sink")
    pipe.set_state(Gst.State.PLAYING)
    for i in range(FRAMES):
        sample = sink.emit("pull-sample")
        assert sample is not None, "%s: %d frames of %d" % (memory_type, i,
                                                           FRAMES)
        want = 255 - (17 + i % 200)
        ok_, m = sample.get_buffer().map(Gst.MapFlags.READ)
        data = bytes(m.data)
        sample.get_buffer().unmap(m)
        rgb_ok = all(b == want for k, b in enumerate(data[:W * 4 * H])
                     if k % 4 != 3)
        state["seen"] += 1
        if not rgb_ok:
            state["wrong"] += 1
    pipe.set_state(Gst.State.NULL)
    cuda.cudaStreamDestroy(stream)
    print("%s: %d frames, %d wrong; cudaPointerGetAttributes type %s" % (
        memory_type, state["seen"], state["wrong"], sorted(state["types"])))
    assert state["wrong"] == 0
    assert state["types"] == {EXPECTED[memory_type]}, state["types"]


def main():
    Gst.init(None)
    ctx = GstZc.Context.new(-1)
    if not ctx.has_gpu():
        print("skipped: no GPU (%s)" % ctx.get_no_gpu_reason())
        return 77
    cuda = load_cudart()
    if cuda is None:
        print("skipped: no libcudart for ctypes")
        return 77
    for memory_type in ("mapped", "managed", "device"):
        check(cuda, memory_type)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

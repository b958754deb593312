#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""gst-zerocopy example: a CUDA consumer on its own stream, fenced, with no
host synchronisation.

Between zcupload and zcfilter, a pad probe opens each frame for the GPU,

    with gstzc.Frame(buf, caps, gpu=True, writable=True, stream=s) as f:
        cai = f.planes[0].__cuda_array_interface__
        ...  # GPU work on the stream s, on the frame in place

and hands the plane's ``__cuda_array_interface__`` (its device address,
shape, row stride and the stream ``s``) to a CUDA consumer that queues its
work on ``s``, the user's own non-blocking stream: opening the frame made
``s`` wait for the upload's fence, and leaving the ``with`` block records
the frame's fence after the work queued on ``s``. Neither blocks the host:
the probe returns at once, zcfilter's kernel (here ``invert=true``) waits
for the fence on the GPU, and only the sink's CPU map waits for the GPU to
be done. Each frame's RGBA bytes are set to a value of its own, so the
sink must see 255 minus that value in R, G and B, the value in alpha; the
example checks every frame:

    videotestsrc ! video/x-raw,format=RGBA ! zcupload memory-type=M
        ! identity (probe) ! zcfilter invert=true ! zcdownload ! appsink

The consumers (``--consumer``, default ``all``: each one available):

- ``ctypes``: the CUDA runtime itself (libcudart) through ctypes,
  ``cudaStreamCreateWithFlags`` and ``cudaMemset2DAsync``, which writes
  the frame's rows and leaves their padding (the stride). This one always
  works where the CUDA runtime is installed.
- ``cupy``: where CuPy is importable, a cupy.ndarray made from the
  interface's fields (``UnownedMemory``, strides and all) and filled on a
  ``cupy.cuda.Stream`` of the example's. Not ``cupy.asarray(plane)``:
  CuPy synchronises the host with the interface's stream when it imports
  one (unless ``CUPY_CUDA_ARRAY_INTERFACE_SYNC=0``), the wait this example
  shows how to avoid.

No Python CUDA library from Debian is used. On Debian 12 (bookworm, main),
``apt-cache policy python3-numba python3-pycuda python3-cupy`` finds:
python3-numba 0.56.4 (its CUDA target needs a CUDA toolkit's NVVM and
predates CUDA 12, supported from Numba 0.57 on); no candidate for
python3-pycuda (Debian ships it in contrib, built against Debian's own
CUDA toolkit); and no python3-cupy at all. Hence ctypes, as
tests/python/frames-gpu.py does.

It prints one line a consumer (frames, wrong frames, the memory type CUDA
reports for the plane's address, zcupload's copies) and exits 0 when every
frame is right, 1 otherwise, and 77, saying why, where it cannot run: no
GPU (or a build without the CUDA backend), no libcudart, no PyGObject.

Run it from the source tree, with a build in ``build/`` made with the CUDA
backend, on a machine with an NVIDIA GPU:

    PYTHONPATH=python GI_TYPELIB_PATH=build/lib/gst/zerocopy \\
    LD_LIBRARY_PATH=build/lib/gst/zerocopy GST_PLUGIN_PATH=build/gst \\
        python3 examples/python/cuda-fence.py --frames 300 \\
        [--memory-type auto|mapped|managed|device] \\
        [--consumer all|ctypes|cupy] [--width 320 --height 240]
"""

import argparse
import ctypes
import ctypes.util
import sys

try:
    import gi

    gi.require_version("Gst", "1.0")
    gi.require_version("GstZc", "1.0")
    from gi.repository import Gst, GstZc  # noqa: E402
    import gstzc  # noqa: E402
except (ImportError, ValueError) as e:
    print("skipped: %s (needs python3-gi, gir1.2-gst-plugins-base-1.0, the "
          "GstZc-1.0 typelib and the gstzc module on PYTHONPATH)" % e)
    sys.exit(77)

CUDA_STREAM_NON_BLOCKING = 1  # cudaStreamNonBlocking
# cudaMemoryType, as cudaPointerGetAttributes reports it
MEMORY_TYPES = {0: "unregistered", 1: "host (mapped)", 2: "device",
                3: "managed"}


def load_cudart():
    """The CUDA runtime, through ctypes, or None."""
    names = [ctypes.util.find_library("cudart"), "libcudart.so",
             "/usr/local/cuda/lib64/libcudart.so", "libcudart.so.13",
             "libcudart.so.12", "libcudart.so.11.0"]
    for name in names:
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


class PointerAttributes(ctypes.Structure):
    # cudaPointerAttributes (CUDA 11 and later). CUDA 13 added the reserved
    # words, which its runtime writes: without them it writes past the end
    _fields_ = [("type", ctypes.c_int), ("device", ctypes.c_int),
                ("devicePointer", ctypes.c_void_p),
                ("hostPointer", ctypes.c_void_p),
                ("reserved", ctypes.c_long * 8)]


def layout(cai):
    """From a __cuda_array_interface__: the address, the rows, the bytes of
    a row's samples, the stride between rows and the bytes the view spans
    (rows are packed samples, one stride apart)."""
    shape, strides = cai["shape"], cai["strides"]
    itemsize = int(cai["typestr"][2:])
    row_bytes = itemsize
    for n in shape[1:]:
        row_bytes *= n
    if strides is None:  # C-contiguous, as the interface allows
        strides = (row_bytes,)
    span = (shape[0] - 1) * strides[0] + row_bytes
    return cai["data"][0], shape[0], row_bytes, strides[0], span


class CudaError(RuntimeError):
    pass


class CtypesConsumer:
    """The CUDA runtime's own calls: a stream, cudaMemset2DAsync."""

    name = "ctypes"

    def __init__(self, cuda):
        self.cuda = cuda
        cuda.cudaGetErrorString.restype = ctypes.c_char_p
        cuda.cudaGetErrorString.argtypes = [ctypes.c_int]
        cuda.cudaStreamCreateWithFlags.argtypes = [
            ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
        cuda.cudaStreamDestroy.argtypes = [ctypes.c_void_p]
        cuda.cudaMemset2DAsync.argtypes = [
            ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_size_t,
            ctypes.c_size_t, ctypes.c_void_p]
        cuda.cudaPointerGetAttributes.argtypes = [
            ctypes.POINTER(PointerAttributes), ctypes.c_void_p]
        stream = ctypes.c_void_p()
        self.ok(cuda.cudaStreamCreateWithFlags(ctypes.byref(stream),
                                               CUDA_STREAM_NON_BLOCKING),
                "cudaStreamCreateWithFlags")
        self._stream = stream
        self.stream = stream.value or 0

    def ok(self, err, what):
        if err != 0:
            raise CudaError("%s: %s (%d)" % (
                what, self.cuda.cudaGetErrorString(err).decode(), err))

    def memory_type(self, address):
        attrs = PointerAttributes()
        self.ok(self.cuda.cudaPointerGetAttributes(ctypes.byref(attrs),
                                                   address),
                "cudaPointerGetAttributes")
        return MEMORY_TYPES.get(attrs.type, str(attrs.type))

    def fill(self, plane, cai, value):
        address, rows, row_bytes, stride, _ = layout(cai)
        # queued on the stream, which already waits for the frame's fence
        self.ok(self.cuda.cudaMemset2DAsync(address, stride, value,
                                            row_bytes, rows, cai["stream"]),
                "cudaMemset2DAsync")

    def close(self):
        self.cuda.cudaStreamDestroy(self._stream)


class CupyConsumer:
    """CuPy: an array on the frame's memory, filled on a CuPy stream."""

    name = "cupy"

    def __init__(self, cupy):
        self.cupy = cupy
        self._stream = cupy.cuda.Stream(non_blocking=True)
        self.stream = self._stream.ptr

    def memory_type(self, address):
        attrs = self.cupy.cuda.runtime.pointerGetAttributes(address)
        return MEMORY_TYPES.get(attrs.type, str(attrs.type))

    def fill(self, plane, cai, value):
        cp = self.cupy
        address, _, _, _, span = layout(cai)
        # the plane as the owner: the view keeps the frame mapped
        memory = cp.cuda.UnownedMemory(address, span, plane,
                                       plane.__dlpack_device__()[1])
        a = cp.ndarray(cai["shape"], dtype=cai["typestr"],
                       memptr=cp.cuda.MemoryPointer(memory, 0),
                       strides=cai["strides"])
        with self._stream:
            a.fill(value)

    def close(self):
        pass


def import_cupy():
    """CuPy, or the reason it is not there."""
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy, None
    except Exception as e:  # ImportError, or CuPy without its CUDA
        return None, "%s: %s" % (type(e).__name__, e)


def frame_value(n):
    """The byte written into frame n: not 0 or 255, never twice in a row."""
    return 17 + n % 200


def row_ok(frame_plane, value):
    """Whether every row of a CPU plane at the sink holds 255 - value in R,
    G and B and value in alpha (zcfilter's invert leaves alpha)."""
    want = bytes((255 - value, 255 - value, 255 - value, value)) * \
        frame_plane.columns
    for r in range(frame_plane.rows):
        row = ctypes.string_at(frame_plane.data + r * frame_plane.stride,
                               frame_plane.columns * 4)
        if row != want:
            return False
    return True


def run(consumer, args):
    """One pipeline with one consumer; returns (frames, wrong, memory
    type, zcupload's copies, an error or None)."""
    pipe = Gst.parse_launch(
        "videotestsrc num-buffers=%d ! "
        "video/x-raw,format=RGBA,width=%d,height=%d ! "
        "zcupload name=up memory-type=%s ! identity name=probe ! "
        "zcfilter invert=true ! zcdownload ! "
        "appsink name=sink sync=false max-buffers=4"
        % (args.frames, args.width, args.height, args.memory_type))
    values = {}  # each frame's value, by timestamp
    state = {"n": 0, "memory": None, "error": None}

    def probe(pad, info):
        if state["error"] is not None:
            return Gst.PadProbeReturn.DROP
        buf = info.get_buffer()
        value = frame_value(state["n"])
        state["n"] += 1
        values[buf.pts] = value
        try:
            with gstzc.Frame(buf, pad.get_current_caps(), gpu=True,
                             writable=True, stream=consumer.stream) as f:
                plane = f.planes[0]
                cai = plane.__cuda_array_interface__
                if state["memory"] is None:
                    state["memory"] = consumer.memory_type(cai["data"][0])
                consumer.fill(plane, cai, value)
                # leaving the block fences the frame from the stream: the
                # host does not wait here
        except Exception as e:  # an error ends the stream, not the program
            state["error"] = state["error"] or "%s: %s" % (
                type(e).__name__, e)
            return Gst.PadProbeReturn.DROP
        return Gst.PadProbeReturn.OK

    pipe.get_by_name("probe").get_static_pad("src").add_probe(
        Gst.PadProbeType.BUFFER, probe)
    sink = pipe.get_by_name("sink")
    pipe.set_state(Gst.State.PLAYING)
    seen = wrong = 0
    while state["error"] is None:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        value = values.pop(sample.get_buffer().pts)
        with gstzc.Frame.from_sample(sample) as frame:
            if not row_ok(frame.planes[0], value):
                wrong += 1
        seen += 1
    message = pipe.get_bus().pop_filtered(Gst.MessageType.ERROR)
    copies = pipe.get_by_name("up").get_property("stats").get_value(
        "copied-buffers")
    pipe.set_state(Gst.State.NULL)
    error = state["error"]
    if error is None and message is not None:
        err, debug = message.parse_error()
        error = "%s (%s)" % (err.message, debug)
    return seen, wrong, state["memory"], copies, error


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="A CUDA consumer writes frames in place on its own "
        "stream between zcupload and zcfilter, fenced, without host "
        "synchronisation.")
    ap.add_argument("--frames", type=int, default=300,
                    help="frames to run a consumer (default: 300)")
    ap.add_argument("--memory-type", default="auto",
                    choices=("auto", "mapped", "managed", "device"),
                    help="zcupload's memory (default: auto)")
    ap.add_argument("--consumer", default="all",
                    choices=("all", "ctypes", "cupy"),
                    help="the CUDA consumer (default: all: ctypes and, "
                    "where importable, CuPy)")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    args = ap.parse_args(argv)
    if args.frames < 1 or args.width < 1 or args.height < 1:
        ap.error("--frames, --width and --height must be at least 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    Gst.init(None)
    for name in ("zcupload", "zcfilter", "zcdownload"):
        if Gst.ElementFactory.find(name) is None:
            print("error: no element %s: set GST_PLUGIN_PATH to the "
                  "build's gst/ folder" % name)
            return 1
    context = GstZc.Context.new(-1)
    if not context.has_gpu():
        print("skipped: no GPU (%s): this example needs an NVIDIA GPU and "
              "a build with the CUDA backend" % context.get_no_gpu_reason())
        return 77

    consumers, missing = [], []
    if args.consumer in ("all", "ctypes"):
        cuda = load_cudart()
        if cuda is not None:
            consumers.append(CtypesConsumer(cuda))
        else:
            missing.append("no libcudart for ctypes (the CUDA runtime, "
                           "e.g. /usr/local/cuda/lib64/libcudart.so)")
    if args.consumer in ("all", "cupy"):
        cupy, why = import_cupy()
        if cupy is not None:
            consumers.append(CupyConsumer(cupy))
        else:
            missing.append("CuPy cannot be used (%s)" % why)
    if not consumers:
        print("skipped: %s" % "; ".join(missing))
        return 77
    for why in missing:
        print("not used: %s" % why)

    failed = False
    for consumer in consumers:
        try:
            seen, wrong, memory, copies, error = run(consumer, args)
        finally:
            consumer.close()
        print("%s: %d frames %dx%d RGBA written on the consumer's stream, "
              "fenced, %d wrong; memory-type=%s, CUDA reports %s memory; "
              "zcupload copies: %d" % (
                  consumer.name, seen, args.width, args.height, wrong,
                  args.memory_type, memory, copies))
        if error is not None:
            print("%s: error: %s" % (consumer.name, error))
            failed = True
        elif wrong or seen != args.frames:
            if seen != args.frames:
                print("%s: error: %d frames of %d reached the sink" % (
                    consumer.name, seen, args.frames))
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

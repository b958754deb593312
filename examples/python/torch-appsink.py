#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""gst-zerocopy example: frames from an appsink to PyTorch, without a copy.

Each sample the appsink hands over becomes a tensor through DLPack,
``torch.from_dlpack(frame.planes[0])``: a (rows, columns, 4) uint8 tensor
on the frame's own memory (its ``data_ptr()`` is the plane's address, which
the example asserts), kept alive by the tensor for as long as it exists.
PyTorch then computes each frame's mean per channel:

    videotestsrc pattern=solid-color foreground-color=COLOUR
        ! video/x-raw,format=RGBA ! zcupload ! zcfilter invert=true
        ! zcdownload ! appsink

The test pattern is known, one colour inverted by zcfilter, so the means
are too: 255 minus the colour's red, green and blue, its alpha as it is.
The example prints one line with the frames, the means and zcupload's
copies (0) and exits 0 when every frame is right and none was copied, 1
otherwise, 77 where PyTorch (python3-torch, 1.10 or newer for
``torch.from_dlpack``) or PyGObject is not installed.

The tensor is writable for PyTorch, which DLPack cannot tell otherwise,
but an appsink's frame is read-only: write through a ``writable=True``
frame in a pad probe instead (numpy-effect.py does).

Run it from the source tree, with a build in ``build/``:

    PYTHONPATH=python GI_TYPELIB_PATH=build/lib/gst/zerocopy \\
    LD_LIBRARY_PATH=build/lib/gst/zerocopy GST_PLUGIN_PATH=build/gst \\
        python3 examples/python/torch-appsink.py --frames 30 \\
        [--color 0xff3060c0] [--width 320 --height 240]
"""

import argparse
import sys

try:
    import gi

    gi.require_version("Gst", "1.0")
    from gi.repository import Gst  # noqa: E402
    import gstzc  # noqa: E402
except (ImportError, ValueError) as e:
    print("skipped: %s (needs python3-gi, gir1.2-gst-plugins-base-1.0 and "
          "the gstzc module on PYTHONPATH)" % e)
    sys.exit(77)

try:
    import torch
except ImportError:
    torch = None


def expected_means(color):
    """The per-channel means (R, G, B, A) of a frame of one colour
    (0xAARRGGBB, as videotestsrc's foreground-color) after zcfilter's
    invert, which leaves alpha."""
    a, r, g, b = [(color >> s) & 0xff for s in (24, 16, 8, 0)]
    return (255 - r, 255 - g, 255 - b, a)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="appsink frames to PyTorch through DLPack, without "
        "a copy, checked against a known pattern.")
    ap.add_argument("--frames", type=int, default=30,
                    help="frames to run (default: 30)")
    ap.add_argument("--color", type=lambda s: int(s, 0), default=0xff3060c0,
                    help="the frames' colour, 0xAARRGGBB "
                    "(default: 0xff3060c0)")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    args = ap.parse_args(argv)
    if args.frames < 1 or args.width < 1 or args.height < 1:
        ap.error("--frames, --width and --height must be at least 1")
    if not 0 <= args.color <= 0xffffffff:
        ap.error("--color is 0xAARRGGBB")
    return args


def main(argv=None):
    args = parse_args(argv)
    if torch is None or not hasattr(torch, "from_dlpack"):
        print("skipped: PyTorch with torch.from_dlpack (1.10 or newer) is "
              "not installed (apt install python3-torch)")
        return 77
    Gst.init(None)
    for name in ("zcupload", "zcfilter", "zcdownload"):
        if Gst.ElementFactory.find(name) is None:
            print("error: no element %s: set GST_PLUGIN_PATH to the "
                  "build's gst/ folder" % name)
            return 1

    pipe = Gst.parse_launch(
        "videotestsrc num-buffers=%d pattern=solid-color "
        "foreground-color=%d ! video/x-raw,format=RGBA,width=%d,height=%d ! "
        "zcupload name=up ! zcfilter invert=true ! zcdownload ! "
        "appsink name=sink sync=false max-buffers=4"
        % (args.frames, args.color, args.width, args.height))
    sink = pipe.get_by_name("sink")
    want = expected_means(args.color)
    pixels = args.width * args.height
    pipe.set_state(Gst.State.PLAYING)

    seen = wrong = copied = 0
    means = None
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        with gstzc.Frame.from_sample(sample) as frame:
            plane = frame.planes[0]
            t = torch.from_dlpack(plane)  # the frame's memory, uint8
            if t.data_ptr() != plane.data:
                copied += 1
            # exact sums in int64, then the means
            sums = torch.sum(t, dim=(0, 1), dtype=torch.int64)
            means = (sums.double() / pixels).tolist()
            if sums.tolist() != [m * pixels for m in want]:
                wrong += 1
                if wrong == 1:
                    print("frame %d: means %s, expected %s" % (
                        seen, ["%.2f" % m for m in means], list(want)))
            del t  # the tensor holds the frame until it goes
        seen += 1

    error = pipe.get_bus().pop_filtered(Gst.MessageType.ERROR)
    copies = pipe.get_by_name("up").get_property("stats").get_value(
        "copied-buffers")
    pipe.set_state(Gst.State.NULL)

    if error is not None:
        err, debug = error.parse_error()
        print("error: %s (%s)" % (err.message, debug))
        return 1
    print("torch-appsink: %d frames %dx%d RGBA into torch %s, %d wrong, "
          "mean RGBA %s; tensors copied: %d, zcupload copies: %d" % (
              seen, args.width, args.height, torch.__version__, wrong,
              "(%s)" % ", ".join("%.1f" % m for m in means or ()),
              copied, copies))
    if copied:
        print("error: torch.from_dlpack made %d copies" % copied)
        return 1
    if seen != args.frames:
        print("error: %d frames of %d reached the sink" % (seen, args.frames))
        return 1
    if wrong or copies:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

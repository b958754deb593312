#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""gst-zerocopy example: a video effect written in NumPy, in place.

A pad probe between zcupload and zcfilter opens each frame with
``gstzc.Frame(buffer, caps, writable=True)`` and changes its pixels through
``numpy.asarray(plane)``, a view of the frame's own memory: no copy in, no
copy out. Here it darkens (or inverts) a horizontal band, the upper middle
quarter of the picture; zcfilter then flips the frame upside down, so the
band must come out in the lower middle quarter, which shows that the next
element read what NumPy wrote:

    videotestsrc ! video/x-raw,format=RGBA ! zcupload ! identity (probe)
        ! zcfilter video-direction=vert ! zcdownload ! appsink

The example checks every frame at the appsink against the frame the probe
saw (a copy kept for the check alone), then prints one line with the
number of frames and the copies the elements counted in their ``stats``
(0). It exits 0 when every frame is right and no element copied one, 1
otherwise, 77 where PyGObject, GStreamer's typelibs or NumPy are missing.

Run it from the source tree, with a build in ``build/``:

    PYTHONPATH=python GI_TYPELIB_PATH=build/lib/gst/zerocopy \\
    LD_LIBRARY_PATH=build/lib/gst/zerocopy GST_PLUGIN_PATH=build/gst \\
        python3 examples/python/numpy-effect.py --frames 30 \\
        [--effect darken|invert] [--width 320 --height 240]
"""

import argparse
import sys

try:
    import gi

    gi.require_version("Gst", "1.0")
    from gi.repository import Gst  # noqa: E402
    import numpy  # noqa: E402
    import gstzc  # noqa: E402
except (ImportError, ValueError) as e:
    print("skipped: %s (needs python3-gi, gir1.2-gst-plugins-base-1.0, "
          "python3-numpy and the gstzc module on PYTHONPATH)" % e)
    sys.exit(77)


def band_of(rows):
    """The rows the effect changes: the upper middle quarter."""
    return slice(rows // 4, rows // 2)


def apply_effect(pixels, effect):
    """The effect itself, in place on an RGBA array (rows, columns, 4):
    ``pixels`` is the frame's memory, so nothing is copied."""
    band = pixels[band_of(pixels.shape[0]), :, :3]  # a view: alpha left
    if effect == "darken":
        band //= 2
    else:
        numpy.subtract(255, band, out=band)


def expected_frame(original, effect):
    """What the sink must see: the effect on the probe's frame, then
    zcfilter's vertical flip. Computed on a copy, apart from the effect."""
    want = original.copy()
    band = band_of(want.shape[0])
    if effect == "darken":
        want[band, :, :3] = original[band, :, :3] // 2
    else:
        want[band, :, :3] = 255 - original[band, :, :3]
    return want[::-1]


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="A NumPy effect in place between zcupload and "
        "zcfilter, checked at the sink.")
    ap.add_argument("--frames", type=int, default=30,
                    help="frames to run (default: 30)")
    ap.add_argument("--effect", choices=("darken", "invert"),
                    default="darken",
                    help="what to do to the band (default: darken)")
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--height", type=int, default=240)
    args = ap.parse_args(argv)
    if args.frames < 1 or args.width < 1 or args.height < 4:
        ap.error("--frames and --width must be at least 1, --height 4")
    return args


def main(argv=None):
    args = parse_args(argv)
    Gst.init(None)
    for name in ("zcupload", "zcfilter", "zcdownload"):
        if Gst.ElementFactory.find(name) is None:
            print("error: no element %s: set GST_PLUGIN_PATH to the "
                  "build's gst/ folder" % name)
            return 1

    pipe = Gst.parse_launch(
        "videotestsrc num-buffers=%d ! "
        "video/x-raw,format=RGBA,width=%d,height=%d ! "
        "zcupload name=up ! identity name=fx ! "
        "zcfilter name=filter video-direction=vert ! zcdownload name=down ! "
        "appsink name=sink sync=false max-buffers=4"
        % (args.frames, args.width, args.height))
    originals = {}  # the probe's frames before the effect, by timestamp
    not_in_place = []

    def probe(pad, info):
        buf = info.get_buffer()
        with gstzc.Frame(buf, pad.get_current_caps(), writable=True) as f:
            plane = f.planes[0]
            pixels = numpy.asarray(plane)  # (rows, columns, 4), the frame's
            if pixels.ctypes.data != plane.data or \
                    not pixels.flags.writeable:
                not_in_place.append(buf.pts)
            originals[buf.pts] = pixels.copy()  # for the check only
            apply_effect(pixels, args.effect)
        return Gst.PadProbeReturn.OK

    pipe.get_by_name("fx").get_static_pad("src").add_probe(
        Gst.PadProbeType.BUFFER, probe)
    sink = pipe.get_by_name("sink")
    pipe.set_state(Gst.State.PLAYING)

    seen = wrong = 0
    while True:
        sample = sink.emit("pull-sample")
        if sample is None:
            break
        pts = sample.get_buffer().pts
        with gstzc.Frame.from_sample(sample) as frame:
            got = numpy.asarray(frame.planes[0])
            want = expected_frame(originals.pop(pts), args.effect)
            if not numpy.array_equal(got, want):
                wrong += 1
                if wrong == 1:
                    r, c = [int(i[0]) for i in numpy.nonzero(
                        (got != want).any(axis=2))]
                    print("frame %d at the sink: row %d, column %d is %s, "
                          "expected %s" % (seen, r, c, got[r, c].tolist(),
                                           want[r, c].tolist()))
        seen += 1

    error = pipe.get_bus().pop_filtered(Gst.MessageType.ERROR)
    stats = {name: pipe.get_by_name(name).get_property("stats")
             for name in ("up", "filter", "down")}
    copies = {name: s.get_value("copied-buffers") for name, s in stats.items()}
    backend = stats["up"].get_value("backend")
    memory = stats["up"].get_value("memory-type")
    pipe.set_state(Gst.State.NULL)

    if error is not None:
        err, debug = error.parse_error()
        print("error: %s (%s)" % (err.message, debug))
        return 1
    print("numpy-effect: %d frames %dx%d RGBA, %s in place, %d wrong; "
          "copies: zcupload %d, zcfilter %d, zcdownload %d (%s backend, "
          "%s memory)" % (seen, args.width, args.height, args.effect, wrong,
                          copies["up"], copies["filter"], copies["down"],
                          backend, memory))
    if not_in_place:
        print("error: %d frames were not writable views of their buffer"
              % len(not_in_place))
        return 1
    if seen != args.frames:
        print("error: %d frames of %d reached the sink" % (seen, args.frames))
        return 1
    if wrong or any(copies.values()):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

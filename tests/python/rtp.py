#!/usr/bin/env python3
# gst-zerocopy: frames beyond one host, the recipe of docs/multiprocess.md:
# no transport of our own, GStreamer's encoder and RTP elements in between.
# A sender encodes what its zcfilter made (a software encoder, VP8) and
# sends RTP over UDP to 127.0.0.1; a receiver decodes into zcupload,
# inverts with zcfilter and checks what comes out: the frames arrive, and
# they are the sender's colour inverted (within the encoder's loss).
# SPDX-License-Identifier: LGPL-2.1-or-later
import sys

try:
    import gi

    gi.require_version("Gst", "1.0")
    from gi.repository import Gst  # noqa: E402
except (ImportError, ValueError) as e:
    print("skipped: %s" % e)
    sys.exit(77)

W, H, FRAMES = 320, 240, 60
# a grey the sender's zcfilter makes from black: brightness lifts Y
SENT_Y_MIN, SENT_Y_MAX = 100, 160


def main():
    Gst.init(None)
    for e in ("vp8enc", "vp8dec", "rtpvp8pay", "rtpvp8depay", "udpsrc",
              "udpsink", "rtpjitterbuffer"):
        if not Gst.ElementFactory.find(e):
            print("skipped: no %s (gstreamer1.0-plugins-good)" % e)
            return 77

    receiver = Gst.parse_launch(
        "udpsrc name=net port=0 address=127.0.0.1 caps=\"application/x-rtp,"
        "media=video,encoding-name=VP8,clock-rate=90000,payload=96\" "
        "! rtpjitterbuffer latency=50 ! rtpvp8depay ! vp8dec "
        "! zcupload name=up ! zcfilter name=fx invert=true ! zcdownload "
        "! video/x-raw,format=I420 ! appsink name=sink sync=false")
    receiver.set_state(Gst.State.PLAYING)
    receiver.get_state(5 * Gst.SECOND)
    port = receiver.get_by_name("net").get_property("port")
    assert port > 0, "udpsrc did not bind"

    # the sender: black lifted to grey by its own zcfilter, then encoded
    sender = Gst.parse_launch(
        "videotestsrc num-buffers=%d pattern=black ! video/x-raw,format=I420,"
        "width=%d,height=%d,framerate=30/1 ! zcupload ! zcfilter "
        "brightness=0.5 ! zcdownload ! vp8enc deadline=1 keyframe-max-dist=10 "
        "! rtpvp8pay ! udpsink host=127.0.0.1 port=%d"
        % (FRAMES, W, H, port))
    sender.set_state(Gst.State.PLAYING)
    msg = sender.get_bus().timed_pop_filtered(
        30 * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    assert msg and msg.type == Gst.MessageType.EOS, \
        "the sender did not finish: %s" % (msg.parse_error() if msg else "timeout")

    sink = receiver.get_by_name("sink")
    got, lumas = 0, []
    while True:
        sample = sink.emit("try-pull-sample", 2 * Gst.SECOND)
        if sample is None:
            break
        buf = sample.get_buffer()
        ok, info = buf.map(Gst.MapFlags.READ)
        y = bytes(info.data)[:W * H]
        buf.unmap(info)
        lumas.append(sum(y[::97]) / len(y[::97]))
        got += 1
    err = receiver.get_bus().pop_filtered(Gst.MessageType.ERROR)
    stats = receiver.get_by_name("fx").get_property("stats")
    receiver.set_state(Gst.State.NULL)
    sender.set_state(Gst.State.NULL)

    ok = True
    print("received %d of %d frames over RTP; mean Y of the first %s"
          % (got, FRAMES, [round(v) for v in lumas[:5]]))
    if err:
        print("FAIL the receiver posted an error: %s" % (err.parse_error(),))
        ok = False
    # UDP on loopback loses nothing in practice; the jitterbuffer may drop
    # the first frames before a key frame
    if got < FRAMES // 2:
        print("FAIL fewer than half the frames arrived")
        ok = False
    # the sender's grey Y (SENT_Y_MIN..MAX), inverted by the receiver
    bad = [v for v in lumas if not 255 - SENT_Y_MAX <= v <= 255 - SENT_Y_MIN]
    if bad:
        print("FAIL %d frames are not the sender's grey inverted: %s"
              % (len(bad), bad[:5]))
        ok = False
    if stats.get_value("buffers") != got:
        print("FAIL zcfilter processed %d frames, the sink got %d"
              % (stats.get_value("buffers"), got))
        ok = False
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/bin/sh
# gst-zerocopy across processes: the producer. A live 720p source is
# converted to RGBA by zcfilter (on the GPU where there is one) straight
# into frames that are memfd files; unixfdsink hands each frame's file to
# every consumer connected to SOCKET, without a copy, and takes the frame
# back when they are all done with it; the queue lets zcdownload wait for a
# frame's GPU work while the next one is made. Needs GStreamer 1.24
# (unixfdsink).
#   producer.sh [SOCKET]      FRAMES=N stops after N frames (default: never)
set -eu
socket=${1:-/tmp/gst-zerocopy-frames}
rm -f "$socket"
exec gst-launch-1.0 -e videotestsrc is-live=true pattern=ball \
    ${FRAMES:+num-buffers=$FRAMES} \
  ! video/x-raw,format=NV12,width=1280,height=720,framerate=30/1 \
  ! zcupload ! zcfilter \
  ! 'video/x-raw(memory:CUDAZeroCopy),format=RGBA' \
  ! queue ! zcdownload ! unixfdsink socket-path="$socket"

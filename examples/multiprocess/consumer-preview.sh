#!/bin/sh
# gst-zerocopy across processes: a consumer that previews the producer's
# frames at 640x360, a little brighter. unixfdsrc receives each frame as a
# file descriptor; zcupload maps each file of the producer's pool once (and
# registers it with CUDA once) and uses every later frame of it in place.
#   consumer-preview.sh [SOCKET]      SINK=fakesink for no window
set -eu
socket=${1:-/tmp/gst-zerocopy-frames}
exec gst-launch-1.0 unixfdsrc socket-path="$socket" \
  ! zcupload ! zcfilter brightness=0.1 \
  ! 'video/x-raw(memory:CUDAZeroCopy),width=640,height=360' \
  ! zcdownload ! videoconvert ! ${SINK:-autovideosink}

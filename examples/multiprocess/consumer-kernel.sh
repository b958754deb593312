#!/bin/sh
# gst-zerocopy across processes: a consumer that runs a user's CUDA kernel
# (examples/kernels/invert.cu) on the producer's frames where they lie. A
# kernel that faults loses the CUDA context of its process only: this
# consumer ends with an ERROR, the producer and the other consumers go on.
# Needs a GPU (zckernel has no CPU backend).
#   consumer-kernel.sh [SOCKET] [KERNEL.cu]      SINK=... (default fakesink)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
socket=${1:-/tmp/gst-zerocopy-frames}
kernel=${2:-$here/../kernels/invert.cu}
exec gst-launch-1.0 unixfdsrc socket-path="$socket" \
  ! zcupload ! zckernel location="$kernel" \
  ! zcdownload ! ${SINK:-fakesink}

#!/bin/sh
# gst-zerocopy across processes: the producer and its two consumers, each a
# process of its own, for FRAMES frames (default 150, 5 s); every process
# must end at the producer's end of stream. The kernel consumer runs where
# zckernel can (a GPU); elsewhere a second preview takes its place.
#   run.sh [FRAMES]
set -u
here=$(cd "$(dirname "$0")" && pwd)
frames=${1:-150}
gst-inspect-1.0 unixfdsink >/dev/null 2>&1 ||
  { echo "skipped: no unixfdsink (GStreamer $(gst-launch-1.0 --gst-version | sed 's/.* //'); it came in 1.24)"; exit 77; }
socket=$(mktemp -u /tmp/gst-zerocopy-frames.XXXXXX)
FRAMES=$frames "$here/producer.sh" "$socket" >/tmp/zc-mp-producer.$$ 2>&1 &
producer=$!
i=0
while [ ! -S "$socket" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$socket" ] || { echo "FAIL: the producer does not listen"; cat /tmp/zc-mp-producer.$$; kill $producer; exit 1; }
SINK=fakesink "$here/consumer-preview.sh" "$socket" >/tmp/zc-mp-preview.$$ 2>&1 &
preview=$!
if gst-launch-1.0 -q videotestsrc num-buffers=1 ! zcupload \
    ! zckernel location="$here/../kernels/invert.cu" cpu-fallback=false \
    ! fakesink >/dev/null 2>&1; then
  second=kernel
  SINK=fakesink "$here/consumer-kernel.sh" "$socket" >/tmp/zc-mp-second.$$ 2>&1 &
else
  second="preview (no GPU for zckernel)"
  SINK=fakesink "$here/consumer-preview.sh" "$socket" >/tmp/zc-mp-second.$$ 2>&1 &
fi
other=$!
status=0
for p in "producer:$producer:/tmp/zc-mp-producer.$$" "preview:$preview:/tmp/zc-mp-preview.$$" \
    "$second:$other:/tmp/zc-mp-second.$$"; do
  name=${p%%:*}; rest=${p#*:}; pid=${rest%%:*}; log=${rest#*:}
  if wait "$pid"; then
    echo "ok   $name ended at end of stream"
  else
    echo "FAIL $name:"; cat "$log"; status=1
  fi
  rm -f "$log"
done
exit $status

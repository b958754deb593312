#!/usr/bin/env bash
# H.264 test media for the decode pipelines of bench/nvcodec-peers.sh, made
# with this machine's GStreamer and x264enc (or openh264enc): videotestsrc pattern=ball (moving
# content, so the decoder has work to do), I420, 30/1, x264enc
# speed-preset=ultrafast tune=zerolatency key-int-max=30 bitrate=8000, written
# as an H.264 byte-stream (Annex B start codes, one access unit per buffer),
# which nvh264dec reads through h264parse:
#   OUTDIR/ball-1080p-20.h264    1920x1080,  20 frames
#   OUTDIR/ball-1080p-620.h264   1920x1080, 620 frames
#   OUTDIR/ball-720p-10.h264     1280x720,   10 frames (quick checks)
# Files that already exist are kept. Prints each file's size, frame count
# (access units, as h264parse counts them) and H.264 profile; with
# ultrafast, x264 writes constrained-baseline, which nvh264dec decodes.
#
#   bench/make-h264.sh OUTDIR          e.g. bench/make-h264.sh bench/media
set -euo pipefail
out=${1:?usage: bench/make-h264.sh OUTDIR}

# x264enc (gstreamer1.0-plugins-ugly), else openh264enc (gstreamer1.0-plugins-bad
# where Debian builds it), both constrained-baseline at these settings
encoder="x264enc speed-preset=ultrafast tune=zerolatency key-int-max=30 bitrate=8000"
if ! gst-inspect-1.0 x264enc >/dev/null 2>&1 && gst-inspect-1.0 openh264enc >/dev/null 2>&1; then
  encoder="openh264enc gop-size=30 bitrate=8000000 rate-control=bitrate"
fi
for e in videotestsrc ${encoder%% *} h264parse filesink; do
  if ! gst-inspect-1.0 "$e" >/dev/null 2>&1; then
    case $e in
    x264enc) echo "make-h264.sh: no x264enc here: apt-get install gstreamer1.0-plugins-ugly" >&2 ;;
    h264parse) echo "make-h264.sh: no h264parse here: apt-get install gstreamer1.0-plugins-bad" >&2 ;;
    *) echo "make-h264.sh: no $e here: apt-get install gstreamer1.0-tools gstreamer1.0-plugins-base" >&2 ;;
    esac
    exit 1
  fi
done
mkdir -p "$out"

make_one() {                    # $1 = file name, $2 = width, $3 = height, $4 = frames
  local f=$out/$1 tmp
  if [ -s "$f" ]; then
    echo "$f: exists, kept"
    return
  fi
  tmp=$f.part
  gst-launch-1.0 -q videotestsrc num-buffers="$4" pattern=ball \
    ! "video/x-raw,format=I420,width=$2,height=$3,framerate=30/1" \
    ! $encoder \
    ! video/x-h264,stream-format=byte-stream,alignment=au \
    ! h264parse ! video/x-h264,stream-format=byte-stream,alignment=au \
    ! filesink location="$tmp"
  mv "$tmp" "$f"
}

describe() {                    # $1 = file: size, access units, profile
  local f=$1 log frames profile
  log=$(gst-launch-1.0 -v filesrc location="$f" ! h264parse \
    ! video/x-h264,stream-format=byte-stream,alignment=au ! fakesink silent=false 2>&1)
  frames=$(grep -c 'fakesink0: last-message = chain' <<<"$log" || true)
  profile=$(grep -m1 -o 'profile=(string)[a-z0-9-]*' <<<"$log" | cut -d')' -f2 || true)
  printf '%s: %s bytes, %s frames, profile %s\n' "$f" "$(stat -c %s "$f")" "$frames" "${profile:-?}"
}

make_one ball-1080p-20.h264 1920 1080 20
make_one ball-1080p-620.h264 1920 1080 620
make_one ball-720p-10.h264 1280 720 10
for f in ball-1080p-20.h264 ball-1080p-620.h264 ball-720p-10.h264; do
  describe "$out/$f"
done

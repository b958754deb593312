#!/usr/bin/env bash
# Marginal milliseconds per frame of gst-launch-1.0 pipelines:
#   videotestsrc ! [zcupload ! zcfilter invert=true ! zcdownload !] fakesink
# at 1080p and 4K RGBA, against the same source into fakesink alone.
# Marginal = (time of N frames - time of 20 frames) / (N - 20), so start-up
# (CUDA context, pool allocation) is left out. Each case runs RUNS times;
# prints median, min and max. Needs gst-launch-1.0 and the built plugin.
#
#   GST_PLUGIN_PATH=build/gst bench/pipeline-ms.sh [RUNS] [N]
set -euo pipefail
runs=${1:-5}
n=${2:-620}
pattern=${PATTERN:-solid-color}

run_once() {                    # $1 = frames, $2 = caps, $3 = middle
  local t0 t1
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  gst-launch-1.0 -q videotestsrc num-buffers="$1" pattern="$pattern" ! "$2" \
    $3 fakesink sync=false >/dev/null
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000 ))  # microseconds
}

marginal() {                    # $1 = caps, $2 = middle; prints ms/frame runs
  local i small big
  for ((i = 0; i < runs; i++)); do
    small=$(run_once 20 "$1" "$2")
    big=$(run_once "$n" "$1" "$2")
    awk -v a="$small" -v b="$big" -v n="$n" 'BEGIN { printf "%.4f\n", (b - a) / 1000.0 / (n - 20) }'
  done
}

summary() {                     # stdin: one number a line
  sort -g | awk '{ v[NR] = $1 } END { printf "median %.3f ms  (min %.3f, max %.3f, %d runs)", v[int((NR + 1) / 2)], v[1], v[NR], NR }'
}

printf 'pattern=%s, %d frames against 20, %d runs each\n' "$pattern" "$n" "$runs"
for size in 1920x1080 3840x2160; do
  w=${size%x*}; h=${size#*x}
  caps="video/x-raw,format=RGBA,width=$w,height=$h,framerate=30/1"
  base=$(marginal "$caps" "!" | summary)
  for mt in auto managed; do
    chain="! zcupload memory-type=$mt ! zcfilter invert=true memory-type=$mt ! zcdownload memory-type=$mt !"
    zc=$(marginal "$caps" "$chain" | summary)
    printf '%s RGBA  videotestsrc ! fakesink:                          %s\n' "$size" "$base"
    printf '%s RGBA  ... ! zcupload ! zcfilter invert ! zcdownload (%s): %s\n' "$size" "$mt" "$zc"
  done
done

#!/usr/bin/env bash
# gst-zerocopy against NVIDIA's nvcodec elements: marginal milliseconds per
# frame and frames per second of gst-launch-1.0 pipelines, each nvcodec
# pipeline through the GStreamer this script finds (the one our plugin is
# built against) and, when PEER126 names a runner of GStreamer 1.26, through
# that too (our plugin loads only in the first). Row groups:
#   a  H.264 1080p decode to RGBA 720p, ending in system memory
#   b  H.264 1080p decode to RGBA 720p, staying in CUDAMemory
#   c  NV12 3840x2160 to RGBA 1920x1080, system memory in and out
#   d  NV12 3840x2160 to RGBA 1920x1080, CUDAMemory in and out
#   e  gst-zerocopy alone, c with foreign buffers: the pool source,
#      imagefreeze, a foreign recycling pool, and the same with zcupload adopt=false;
#      their runs interleaved (run 1 of each source, then run 2, ...)
# Marginal = (time of N frames - time of 20 frames) / (N - 20), so start-up
# (CUDA context, NVRTC, pools) is left out; the decode rows take their N and
# 20 frames from MEDIA/ball-1080p-620.h264 and MEDIA/ball-1080p-20.h264
# (bench/make-h264.sh MEDIA, run here first when they are missing and
# x264enc is installed). Each cell runs RUNS times; prints median, min and
# max ms/frame and the fps of the median, one line a cell, then a markdown
# table per group with zerocopy's speed-up (fps ratio) over each nvcodec. A
# pipeline that fails prints "failed: <first error line>" in its cell; the
# other cells still run.
#
#   bash bench/nvcodec-peers.sh [RUNS] [N]     (defaults 5, 620)
#
# Needs a machine with an NVIDIA GPU, GStreamer with nvcodec (h264parse for
# the decode rows; cudaconvertscale registers only with an NVRTC it knows)
# and the built plugin (ZC_BUILD, default build; GST_PLUGIN_PATH, if set,
# wins). Where GStreamer is not installed, a runtime bundle can provide it
# (e.g. `bash .gpu/run.sh bash bench/nvcodec-peers.sh`, with the bundle's
# NVRTC in GST_CUDA_NVRTC_LIBNAME); without PEER126 the 1.26 column reads
# "n/a".
# Env: ONLY=<letters> runs those groups (ONLY=ce), MEDIA (default
# bench/media), PEER126 (a script that runs a GStreamer 1.26 program, default
# .peers/gst-1.26/run.sh when present), TIMEOUT_S (per gst-launch-1.0 run,
# default 120). A cell costs about RUNS x (two gst-launch-1.0 runs): split
# the groups with ONLY when a call has a time limit.
set -euo pipefail
runs=${1:-5}
n=${2:-620}
only=${ONLY:-abcde}
media=${MEDIA:-bench/media}
peer=${PEER126:-.peers/gst-1.26/run.sh}
tmo=${TIMEOUT_S:-120}
export GST_PLUGIN_PATH=${GST_PLUGIN_PATH:-$PWD/${ZC_BUILD:-build}/gst}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nvcodec-peers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# GStreamer 1.26: its own registry (the caller's is 1.22's), none of the
# 1.22 bundle's plugin paths or libraries, and NVRTC 12 for its converters
# (.gpu/run.sh exports GST_CUDA_NVRTC_LIBNAME when prepare.sh --nvrtc12 made
# .gpu). Its run.sh puts its lib/ first for the 1.26 programs only.
have126=0
[ -f "$peer" ] && have126=1
reg126=$tmp/registry-1.26.bin
ld126=''
if [ -n "${GST_CUDA_NVRTC_LIBNAME:-}" ]; then
  ld126=$(dirname "$GST_CUDA_NVRTC_LIBNAME")
fi
IFS=: read -r -a ld_dirs <<<"${LD_LIBRARY_PATH:-}"
for d in "${ld_dirs[@]}"; do
  if [ -n "$d" ] && [ "$d" != "$ld126" ] && [ ! -e "$d/libgstreamer-1.0.so.0" ]; then
    ld126=${ld126:+$ld126:}$d
  fi
done

gst() {                         # $1 = 122 or 126, rest = gst-launch-1.0 or gst-inspect-1.0 and arguments
  local rt=$1
  shift
  if [ "$rt" = 126 ]; then
    env -u GST_PLUGIN_PATH -u GST_PLUGIN_PATH_1_0 -u GST_PLUGIN_SCANNER -u GST_PLUGIN_SCANNER_1_0 \
      GST_REGISTRY_1_0="$reg126" LD_LIBRARY_PATH="$ld126" \
      timeout "$tmo" bash "$peer" "$@"
  else
    timeout "$tmo" "$@"
  fi
}

run_once() {                    # $1 = runtime, $2 = pipeline; prints microseconds
  local t0 t1 rc=0              # on failure: returns 1, output in $tmp/log, status in $tmp/rc
  local -a argv
  read -r -a argv <<<"$2"       # split into words, no globbing
  t0=$(date +%s%N)
  gst "$1" gst-launch-1.0 -q "${argv[@]}" >"$tmp/log" 2>&1 || rc=$?
  t1=$(date +%s%N)
  echo "$rc" >"$tmp/rc"
  if [ "$rc" -ne 0 ] || grep -qE '^ERROR|erroneous pipeline' "$tmp/log"; then
    return 1
  fi
  echo $(( (t1 - t0) / 1000 ))
}

first_error() {                 # the failed run's first error line, and why it stopped
  local rc line reason
  rc=$(cat "$tmp/rc")
  if [ "$rc" = 124 ]; then
    echo "timed out after ${tmo}s"
    return
  fi
  line=$(grep -m1 -E 'ERROR|erroneous|rror' "$tmp/log" || true)
  [ -n "$line" ] || line=$(grep -m1 . "$tmp/log" || true)
  [ -n "$line" ] || line="exit status $rc, no output"
  reason=$(grep -m1 -oE 'stopped, reason [a-z-]+' "$tmp/log" || true)
  reason=${reason#stopped, }
  line=${line//from element \/GstPipeline:pipeline0\//}
  echo "${line:0:200}${reason:+ ($reason)}"
}

# $1 = pipeline with @N@ (frames) and @F@ (file), $2 = frames, $3 = file
at() {
  local p=${1//@N@/$2}
  echo "${p//@F@/$3}"
}

marginal() {                    # $1 = runtime, $2 = kind (src, dec), $3 = pipeline; ms/frame a line
  local i small big lo=20 hi=$n flo='' fhi=''
  if [ "$2" = dec ]; then
    hi=620 flo=$media/ball-1080p-20.h264 fhi=$media/ball-1080p-620.h264
  fi
  for ((i = 0; i < runs; i++)); do
    small=$(run_once "$1" "$(at "$3" "$lo" "$flo")") || return 1
    big=$(run_once "$1" "$(at "$3" "$hi" "$fhi")") || return 1
    awk -v a="$small" -v b="$big" -v n="$((hi - lo))" 'BEGIN { printf "%.4f\n", (b - a) / 1000.0 / n }'
  done
}

summary() {                     # stdin: one number a line; prints "MEDIAN|text"
  sort -g | awk '{ v[NR] = $1 } END {
    m = v[int((NR + 1) / 2)]
    fps = m > 0 ? sprintf("%.1f", 1000 / m) : "n/a"
    printf "%.3f|median %.3f ms (min %.3f, max %.3f, %d runs) | fps %s\n", m, m, v[1], v[NR], NR, fps }'
}

declare -A med cell title
declare -A rows
cols=(zc nv122 nv126)
declare -A colname=([zc]="gst-zerocopy (1.22)" [nv122]="nvcodec 1.22" [nv126]="nvcodec 1.26")

add_row() {                     # $1 = group, $2 = row: listed once, in order
  case $'\n'"${rows[$1]:-}" in
  *$'\n'"$2"$'\n'*) ;;
  *) rows[$1]+="$2"$'\n' ;;
  esac
}

# $1 = group, $2 = row, $3 = column, $4 = samples file or "failed: ..." text,
# $5 = note after the figures: fills the cell and the median, prints the line
record() {
  local g=$1 row=$2 col=$3 s res m=''
  if [[ $4 == failed:* ]]; then
    res=$4
    cell[$g|$row|$col]="failed"
  else
    s=$(summary <"$4")
    m=${s%%|*}
    res=${s#*|}$5
    cell[$g|$row|$col]=$(awk -v m="$m" 'BEGIN { if (m > 0) printf "%.3f ms, %.0f fps", m, 1000 / m; else printf "%.3f ms", m }')
  fi
  med[$g|$row|$col]=$m
  printf '%s %s | %s | %s\n' "$g" "$row" "${colname[$col]}" "$res"
}

# $1 = group, $2 = row, $3 = column (zc, nv122, nv126), $4 = kind (src, dec), $5 = pipeline
measure() {
  local g=$1 row=$2 col=$3 rt=122
  [ "$col" = nv126 ] && rt=126
  add_row "$g" "$row"
  if [ "$rt" = 126 ] && [ $have126 = 0 ]; then
    cell[$g|$row|$col]="n/a (no .peers)"
    med[$g|$row|$col]=''
    printf '%s %s | %s | %s\n' "$g" "$row" "${colname[$col]}" "n/a (no .peers)"
  elif marginal "$rt" "$4" "$5" >"$tmp/samples"; then
    record "$g" "$row" "$col" "$tmp/samples" ''
  else
    record "$g" "$row" "$col" "failed: $(first_error)" ''
  fi
}

# Like measure, for rows to be compared with each other: run by run in
# turn (run 1 of every row, then run 2, ...), so that the host's drift over
# a call (minutes, and up to a third in ms/frame) falls on all of them
# alike. $1 = group, $2 = column, $3 = kind, then row and pipeline pairs.
measure_interleaved() {
  local g=$1 col=$2 kind=$3 rt=122 i k saved=$runs
  shift 3
  [ "$col" = nv126 ] && rt=126
  local -a rnames=() pipes=() failed=()
  while (($#)); do
    rnames+=("$1")
    pipes+=("$2")
    shift 2
  done
  for k in "${!rnames[@]}"; do
    add_row "$g" "${rnames[$k]}"
    : >"$tmp/samples-$k"
    failed[$k]=''
  done
  runs=1
  for ((i = 0; i < saved; i++)); do
    for k in "${!rnames[@]}"; do
      [ -z "${failed[$k]}" ] || continue
      if ! marginal "$rt" "$kind" "${pipes[$k]}" >>"$tmp/samples-$k"; then
        failed[$k]="failed: $(first_error)"
      fi
    done
  done
  runs=$saved
  for k in "${!rnames[@]}"; do
    record "$g" "${rnames[$k]}" "$col" "${failed[$k]:-$tmp/samples-$k}" \
      ' (runs interleaved with the other rows)'
  done
}

ratio() {                       # $1 / $2 as "X.XXx", or "-" when either is missing
  if [ -z "$1" ] || [ -z "$2" ]; then
    echo "-"
  else
    awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2fx", a / b; else print "-" }'
  fi
}

table() {                       # $1 = group: rows x (zerocopy, nvcodec 1.22, nvcodec 1.26, speed-ups)
  local g=$1 row col line
  printf '\n### %s. %s\n\n' "$g" "${title[$g]}"
  echo "| pipeline | gst-zerocopy (1.22) | nvcodec 1.22 | nvcodec 1.26 | speed-up over nvcodec 1.22 | speed-up over nvcodec 1.26 |"
  echo "| --- | --- | --- | --- | --- | --- |"
  while IFS= read -r row; do
    [ -n "$row" ] || continue
    line="| $row |"
    for col in "${cols[@]}"; do
      line+=" ${cell[$g|$row|$col]:--} |"
    done
    line+=" $(ratio "${med[$g|$row|nv122]:-}" "${med[$g|$row|zc]:-}") |"
    line+=" $(ratio "${med[$g|$row|nv126]:-}" "${med[$g|$row|zc]:-}") |"
    echo "$line"
  done <<<"${rows[$g]:-}"
}

table_e() {                     # group e: one column, and each source's ms ratio to the pool source
  local row first
  first=$(head -n1 <<<"${rows[e]:-}")
  printf '\n### e. %s\n\n' "${title[e]}"
  echo "| source | gst-zerocopy (1.22) | ms/frame against (1) |"
  echo "| --- | --- | --- |"
  while IFS= read -r row; do
    [ -n "$row" ] || continue
    echo "| $row | ${cell[e|$row|zc]:--} | $(ratio "${med[e|$row|zc]:-}" "${med[e|$first|zc]:-}") |"
  done <<<"${rows[e]:-}"
}

want() { [[ $only == *"$1"* ]]; }

missing() {                     # $1 = 122 or 126, rest = elements; the missing ones, with hints
  local rt=$1 e list=''
  shift
  for e in "$@"; do
    if ! gst "$rt" gst-inspect-1.0 "$e" >/dev/null 2>&1; then
      case $e in
      h264parse) list+=" h264parse (1.22: prepare.sh videoparsersbad)" ;;
      cudaconvertscale) list+=" cudaconvertscale (NVRTC 12: prepare.sh --nvrtc12)" ;;
      *) list+=" $e" ;;
      esac
    fi
  done
  echo "${list:- nothing}"
}

# --- what is there ---------------------------------------------------------
printf '%d runs a cell; %d frames against 20 (decode: 620 against 20 from %s)\n' "$runs" "$n" "$media"
echo "1.22: $(gst 122 gst-launch-1.0 --version 2>&1 | sed -n 2p), plugin path $GST_PLUGIN_PATH"
echo "1.22 missing:$(missing 122 zcupload zcfilter zcdownload cudaupload cudadownload cudaconvertscale nvh264dec h264parse imagefreeze)"
if [ $have126 = 1 ]; then
  echo "1.26: $(gst 126 gst-launch-1.0 --version 2>&1 | sed -n 2p), NVRTC ${GST_CUDA_NVRTC_LIBNAME:-unset (cudaconvertscale needs NVRTC 12: prepare.sh --nvrtc12)}"
  echo "1.26 missing:$(missing 126 cudaupload cudadownload cudaconvertscale nvh264dec h264parse)"
else
  echo "1.26: n/a (no $peer)"
fi
if want a || want b; then
  for f in ball-1080p-20.h264 ball-1080p-620.h264; do
    if [ ! -s "$media/$f" ]; then
      bash "$(dirname "${BASH_SOURCE[0]}")/make-h264.sh" "$media" >/dev/null 2>&1 ||
        echo "no $media/$f, and bench/make-h264.sh could not make it here (no x264enc?): make it on a machine that has one"
      break
    fi
  done
fi
echo

# --- the pipelines ---------------------------------------------------------
dec='filesrc location=@F@ ! h264parse ! nvh264dec'
rgba720='format=RGBA,width=1280,height=720'
src='videotestsrc num-buffers=@N@ pattern=solid-color ! video/x-raw,format=NV12,width=3840,height=2160,framerate=30/1'
rgba1080='format=RGBA,width=1920,height=1080'
cuda='video/x-raw(memory:CUDAMemory)'
zcout="video/x-raw(memory:CUDAZeroCopy),$rgba1080 ! zcdownload ! fakesink sync=false"

title[a]="decode to RGBA 720p, ends in system memory"
title[b]="decode to RGBA 720p, stays in CUDAMemory"
title[c]="NV12 4K to RGBA 1080p, system memory in and out"
title[d]="NV12 4K to RGBA 1080p, CUDAMemory in and out"
title[e]="foreign buffers (gst-zerocopy only, 1.22)"

if want a; then
  row="decode, convert/scale, download"
  measure a "$row" zc dec "$dec ! zcupload ! zcfilter ! video/x-raw(memory:CUDAZeroCopy),$rgba720 ! zcdownload ! fakesink sync=false"
  p="$dec ! cudaconvertscale ! $cuda,$rgba720 ! cudadownload ! video/x-raw,format=RGBA ! fakesink sync=false"
  measure a "$row" nv122 dec "$p"
  measure a "$row" nv126 dec "$p"
  row="reference: decode alone"
  measure a "$row" nv122 dec "$dec ! $cuda ! fakesink sync=false"
  measure a "$row" nv126 dec "$dec ! $cuda ! fakesink sync=false"
fi

if want b; then
  row="decode, convert/scale"
  measure b "$row" zc dec "$dec ! zcfilter ! $cuda,$rgba720 ! fakesink sync=false"
  p="$dec ! cudaconvertscale ! $cuda,$rgba720 ! fakesink sync=false"
  measure b "$row" nv122 dec "$p"
  measure b "$row" nv126 dec "$p"
fi

if want c; then
  row="upload, convert/scale, download"
  measure c "$row" zc src "$src ! zcupload ! zcfilter ! $zcout"
  p="$src ! cudaupload ! $cuda ! cudaconvertscale ! $cuda,$rgba1080 ! cudadownload ! video/x-raw,format=RGBA ! fakesink sync=false"
  measure c "$row" nv122 src "$p"
  measure c "$row" nv126 src "$p"
  row="reference: source alone"
  measure c "$row" nv122 src "$src ! fakesink sync=false"
  measure c "$row" nv126 src "$src ! fakesink sync=false"
fi

if want d; then
  row="upload (nvcodec), convert/scale"
  measure d "$row" zc src "$src ! cudaupload ! $cuda ! zcfilter ! $cuda,$rgba1080 ! fakesink sync=false"
  p="$src ! cudaupload ! $cuda ! cudaconvertscale ! $cuda,$rgba1080 ! fakesink sync=false"
  measure d "$row" nv122 src "$p"
  measure d "$row" nv126 src "$p"
  row="reference: upload alone"
  measure d "$row" nv122 src "$src ! cudaupload ! $cuda ! fakesink sync=false"
  measure d "$row" nv126 src "$src ! cudaupload ! $cuda ! fakesink sync=false"
fi

if want e; then
  caps='video/x-raw,format=NV12,width=3840,height=2160,framerate=30/1'
  one='videotestsrc num-buffers=1 pattern=solid-color'
  measure_interleaved e zc src \
    "(1) pool source" "$src ! zcupload ! zcfilter ! $zcout" \
    "(2) imagefreeze" "$one ! $caps ! imagefreeze num-buffers=@N@ ! zcupload ! zcfilter ! $zcout" \
    "(3) foreign recycling pool" "$src ! identity drop-allocation=true ! zcupload ! zcfilter ! $zcout" \
    "(4) = (3), zcupload adopt=false" "$src ! identity drop-allocation=true ! zcupload adopt=false ! zcfilter ! $zcout"
  # How often (3)'s memory was registered, and how much staged, over N
  # frames: GST_DEBUG of the library's foreign-memory and filter code
  p3=$(at "$src ! identity drop-allocation=true ! zcupload ! zcfilter ! $zcout" "$n" '')
  read -r -a argv3 <<<"$p3"
  GST_DEBUG=zcforeign:5,zchostspans:5 timeout "$tmo" gst-launch-1.0 -q "${argv3[@]}" >"$tmp/e3.log" 2>&1 || true
  printf 'e (3) foreign recycling pool | registrations over %d frames | %s\n' "$n" \
    "$(grep -c 'registered [0-9]* bytes' "$tmp/e3.log" || true)"
  printf 'e (3) foreign recycling pool | not adopted (log lines: a frame copied, or a memory that could not be registered) | %s\n' \
    "$(grep -cE ': copied|copied until it goes|not registering|cannot register' "$tmp/e3.log" || true)"
  first="(1) pool source"
  while IFS= read -r row; do
    [ -n "$row" ] || continue
    printf 'e %s | against (1) | %s\n' "$row" "$(ratio "${med[e|$row|zc]:-}" "${med[e|$first|zc]:-}")"
  done <<<"${rows[e]}"
fi

# --- tables ----------------------------------------------------------------
for g in a b c d; do
  if want "$g"; then table "$g"; fi
done
if want e; then table_e; fi

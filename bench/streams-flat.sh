#!/usr/bin/env bash
# Many pipelines in one process, flat out: gst-zerocopy's rows against
# nvcodec's copy path, each in processes of its own, so that each runs with
# the GPU hardware queues it does best with.
#
# CUDA gives a process 8 hardware queues unless CUDA_DEVICE_MAX_CONNECTIONS
# (read when the process's CUDA context is made) asks for up to 32; with
# many pipelines, each with its own streams, more queues let more of their
# work run side by side (docs/performance.md, "Many streams in one
# process"). zc-latency runs every row in one process, so all rows would
# get the same setting; here each side gets its own process:
#   - gst-zerocopy's rows with CUDA_DEVICE_MAX_CONNECTIONS=C (--connections,
#     default 32: what docs/performance.md recommends for many pipelines);
#   - nvcodec's rows at the process default (nvcodec 1.22's 32 streams
#     crawl under 32 queues, too slowly to finish a run;
#     --peer-connections-too tries them once so, for at most 120 s, to
#     show it in the same run);
#   - with --default-too, gst-zerocopy's rows at the default as well.
# ROUNDS rounds, the processes alternating within each round; each process
# is one zc-latency run of FRAMES frames per stream, and measures the bus
# limit itself, before and after its run. Each process's output is kept
# under $OUT; the summary gives every run, then the medians (range), each
# run's share of its own process's bus limit, and the ratio of the medians.
#
#   bench/streams-flat.sh [--streams N] [--rounds R] [--frames F]
#       [--connections C] [--zc ROWS] [--peer ROWS] [--default-too]
#       [--peer-connections-too]
# ZC_LATENCY: the zc-latency to run (default build/bench/zc-latency); OUT:
# where the logs go (default /tmp). Exits 77 without a GPU.
set -uo pipefail
lat=${ZC_LATENCY:-$PWD/build/bench/zc-latency}
out=${OUT:-/tmp}
streams=32 rounds=3 frames=600 conns=32
zc_rows='fx zc mapped$'
peer_rows='fx cudaupload'
default_too=0 peer_conns_too=0
usage() {
  sed -n '/^#   bench/,/^# where/p' "$0" | sed 's/^# \{0,1\}//' >&2
}
while [ $# -gt 0 ]; do
  case $1 in
  --streams) streams=${2:?}; shift 2 ;;
  --rounds) rounds=${2:?}; shift 2 ;;
  --frames) frames=${2:?}; shift 2 ;;
  --connections) conns=${2:?}; shift 2 ;;
  --zc) zc_rows=${2:?}; shift 2 ;;
  --peer) peer_rows=${2:?}; shift 2 ;;
  --default-too) default_too=1; shift ;;
  --peer-connections-too) peer_conns_too=1; shift ;;
  -h | --help) usage; exit 0 ;;
  *) usage; exit 2 ;;
  esac
done
[ -x "$lat" ] || { echo "streams-flat: no $lat (build first)" >&2; exit 2; }
mkdir -p "$out"

# one zc-latency process: LOG CONNECTIONS(or "default") ROWS
one() {
  local log=$1 c=$2 rows=$3 rc
  if [ "$c" = default ]; then
    env -u CUDA_DEVICE_MAX_CONNECTIONS "$lat" --streams "$streams" --flat-out \
      --runs 1 --frames "$frames" --warmup 30 --only "$rows" > "$log" 2>&1
  else
    CUDA_DEVICE_MAX_CONNECTIONS=$c "$lat" --streams "$streams" --flat-out \
      --runs 1 --frames "$frames" --warmup 30 --only "$rows" > "$log" 2>&1
  fi
  rc=$?
  if grep -q "no GPU" "$log"; then
    echo "streams-flat: no GPU, skipped"
    exit 77
  fi
  echo "$(basename "$log"): rc=$rc"
  return 0
}

logs=()
for r in $(seq "$rounds"); do
  one "$out/streams-flat-$streams-zc-c$conns-$r.txt" "$conns" "$zc_rows"
  logs+=("$out/streams-flat-$streams-zc-c$conns-$r.txt")
  if [ "$default_too" = 1 ]; then
    one "$out/streams-flat-$streams-zc-default-$r.txt" default "$zc_rows"
    logs+=("$out/streams-flat-$streams-zc-default-$r.txt")
  fi
  one "$out/streams-flat-$streams-nvcodec-default-$r.txt" default "$peer_rows"
  logs+=("$out/streams-flat-$streams-nvcodec-default-$r.txt")
done
if [ "$peer_conns_too" = 1 ]; then
  # zc-latency ends a row that makes no progress for 30 s (exit 3, naming
  # it); one that crawls is ended by the timeout
  log=$out/streams-flat-$streams-nvcodec-c$conns.txt
  timeout 120 bash -c "$(declare -f one); lat='$lat' streams=$streams \
    frames=$frames one '$log' $conns '$peer_rows'"
  [ $? = 124 ] && echo "did not finish in 120 s" >> "$log"
  logs+=("$log")
fi

# The rows: per process, its setting (from the file name), the bus limit
# of its "GPU work" line, and each row's fps total, % bus and p99.
echo
echo "$streams streams flat out, $rounds rounds of one run of $frames frames a stream"
awk -v conns="$conns" '
  function setting(f) {
    if (f ~ /-c[0-9]+(-[0-9]+)?\.txt$/) return "CUDA_DEVICE_MAX_CONNECTIONS=" conns
    return "default queues"
  }
  function sorted_median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++)
      for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  FNR == 1 { limit = "" }
  /GPU work .*bus limit/ { match($0, /bus limit [0-9]+/); limit = substr($0, RSTART + 10, RLENGTH - 10) }
  /stalled|^did not finish/ { print "  " FILENAME ": " $0 }
  length($0) > 80 && substr($0, 28, 46) ~ /[a-z]/ && $0 !~ /^(case |trip|zc-latency: )/ && $0 !~ /GPU work/ {
    label = substr($0, 28, 46); sub(/ +$/, "", label)
    if (label == "" || label ~ /^pushed/) next
    n = split(substr($0, 75), t, " +")
    # median (range) p99 (range) max fps-slowest (range) fps-total (range) %bus ...
    fps = t[8]; share = t[10]; p99 = t[3]
    if (fps !~ /^[0-9.]+$/) next
    key = label " (" setting(FILENAME) ")"
    if (!(key in count)) order[++nkeys] = key
    k = ++count[key]
    vals[key, k] = fps
    printf "  %-60s %8s fps  %6s of %s  p99 %s ms\n", key, fps, share, (limit == "" ? "-" : limit), p99
  }
  END {
    print ""
    for (i = 1; i <= nkeys; i++) {
      key = order[i]; n = count[key]
      delete a
      lo = hi = vals[key, 1]
      for (k = 1; k <= n; k++) { a[k] = vals[key, k]; if (a[k] < lo) lo = a[k]; if (a[k] > hi) hi = a[k] }
      med[key] = sorted_median(a, n)
      printf "  %-60s median %.0f (%.0f-%.0f) fps, %d runs\n", key, med[key], lo, hi, n
    }
    for (i = 1; i <= nkeys; i++)
      for (j = 1; j <= nkeys; j++)
        if (order[i] ~ /zc / && order[j] ~ /cudaupload/ && med[order[j]] > 0)
          printf "  %s / %s: %.2fx\n", order[i], order[j], med[order[i]] / med[order[j]]
  }' "${logs[@]}"

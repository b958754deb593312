#!/usr/bin/env bash
# The GPU runs, on any machine with an NVIDIA GPU, its driver, GStreamer and
# a build of this project (ZC_BUILD), logs under $OUT (default /tmp):
#   bash bench/gpu-host.sh tests    # suite + compute-sanitizer
#   bash bench/gpu-host.sh figures  # pipeline ms/frame, kernel benches, examples
#   bash bench/gpu-host.sh bench    # zc-bench, every case (bench/run.sh)
#   bash bench/gpu-host.sh suite    # the suite alone, no sanitizer
#   bash bench/gpu-host.sh latency  # a frame's trip at 30 fps, every case
#   bash bench/gpu-host.sh streams  # many streams in one process
#       # (zc-latency; PEER=RUNNER adds nvcodec of a second GStreamer:
#       # RUNNER is a script that runs a program with it, e.g. the
#       # GStreamer 1.26 bundle's run.sh)
#   PY=PYTHON [MPS=1] bash bench/gpu-host.sh multiprocess
#       # frames across processes: python/unixfd, python/cudaipc,
#       # python/rtp and zc-multiprocess.py (MPS=1: once more under MPS),
#       # with a Python whose GStreamer (1.24 or later) has unixfd and
#       # PyGObject (tools/trixie-bundle.sh)
#   bash bench/gpu-host.sh compare BUILD_A BUILD_B [PASSES]
#       # NV12 4K to RGBA 1080p, kernel (zc-compute-bench) and pipeline
#       # (zc-bench), with the plugin and programs of each build in turn
#   [PASSES=N] bash bench/gpu-host.sh compare-latency ONLY ARM...
#       # zc-latency's rows ONLY (its --only), one run of 600 frames at
#       # 30 fps with each ARM in turn, N passes (default 3); an ARM is a
#       # build folder, with VAR=VALUE settings after a colon, separated by
#       # commas, if it wants them (build:GST_ZC_FENCE_SPIN_US=0), e.g. two
#       # builds of the library against each other on the managed rows;
#       # LATENCY_ARGS adds zc-latency arguments, e.g. "--streams 32
#       # --flat-out" (with CUDA_DEVICE_MAX_CONNECTIONS=32 in the
#       # environment) for the builds' aggregate flat out
#   bash bench/gpu-host.sh managed-placement [FRAMES]
#       # the RGBA 1080p invert's managed row, prefetched and kept on the
#       # host (GST_ZC_MANAGED_PLACEMENT=host), alone and with one other
#       # kind of row in the same process at once (mapped pinned memory,
#       # nvh264dec's decode case, nvcodec's cudaupload): which neighbour,
#       # if any, makes the host placement slow
#   bash bench/gpu-host.sh managed-contexts [FRAMES]
#       # every managed row, kept on the host, at once: alone, beside a
#       # second CUDA context of the process (zc-latency --second-context,
#       # idle and busy), beside nvcodec's rows, and beside ours mapped and
#       # nvcodec's: whether another context in the process is what slows
#       # managed memory on some machine starts
# Where GStreamer is not installed, a runtime bundle can provide it, e.g.
# `bash .gpu/run.sh bash bench/gpu-host.sh tests` (see HACKING.md).
# ZC_BUILD names the build folder (default build; a sm_90-only build such as
# build-gpu keeps the shipped folder small).
set -uo pipefail
out=${OUT:-/tmp}
phase=${1:-tests}
b=${ZC_BUILD:-build}
export GST_PLUGIN_PATH=$PWD/$b/gst
# the build's own library before any other on the path (a runtime bundle's)
export LD_LIBRARY_PATH=$PWD/$b/lib/gst/zerocopy${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

suite() {
  # nvcodec's elements are in the GStreamer bundle there: their absence is a
  # failure of gpu/nvcodec-gpu, not a skip
  export ZC_TEST_REQUIRE_NVCODEC=1
  meson test -C "$b" --no-rebuild --print-errorlogs > "$out/test.log" 2>&1
  echo "meson test ($b) rc=$?"
  grep -E "^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout):" "$out/test.log"
  grep -E "Checks:|[0-9]+ passed, [0-9]+ failed" "$b"/meson-logs/testlog.txt
  cp "$b"/meson-logs/testlog.txt "$out/testlog.txt"
}

# with_build BUILD CMD...: CMD with BUILD's library first (a runtime
# bundle's library path would otherwise give every build's plugin the same
# one), its plugin, and a registry of its own, so that no build hides
# another's
with_build() {
  local x=$1; shift
  LD_LIBRARY_PATH=$PWD/$x/lib/gst/zerocopy${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  GST_REGISTRY_1_0=/tmp/registry-${x//\//-}.bin GST_PLUGIN_PATH=$PWD/$x/gst "$@"
}

lat=$PWD/$b/bench/zc-latency
# zc-latency through the second GStreamer, nvcodec's rows only, its own
# registry; ARGS as for zc-latency
peer() {
  [ -n "${PEER:-}" ] || return 0
  GST_REGISTRY_1_0=${TMPDIR:-/tmp}/registry-peer.bin bash "$PEER" "$lat" "$@"
}

case $phase in
latency)
  # every case at 30 fps, 600 frames timed, 3 runs interleaved; the cases
  # at once (a thread each, each at its own phase of the frame period, so
  # that their frames do not meet on the GPU) so that it takes minutes,
  # not half an hour.
  # The GPU rows (ours and nvcodec's) first, then the CPU elements' rows
  # on their own: beside them (videobalance on 4K takes every core) the
  # GPU rows' tails were the CPU rows' doing.
  args=(--runs 3 --frames 600 --warmup 20 --cases-at-once)
  "$lat" "${args[@]}" --only 'zc |cudaupload' > "$out/latency-30fps.txt" 2>&1
  echo "zc-latency (GPU rows) rc=$?"
  cat "$out/latency-30fps.txt"
  "$lat" "${args[@]}" --only 'videobalance|videoconvertscale' \
    > "$out/latency-30fps-cpu.txt" 2>&1
  echo "zc-latency (CPU rows) rc=$?"
  cat "$out/latency-30fps-cpu.txt"
  if [ -n "${PEER:-}" ]; then
    peer "${args[@]}" --only cudaupload > "$out/latency-30fps-peer.txt" 2>&1
    echo "zc-latency (peer) rc=$?"
    cat "$out/latency-30fps-peer.txt"
  fi
  # the decode case again on its own: with the cases at once the GPU gets
  # a frame every 6.7 ms, alone every 33 ms, as with one camera
  h='H.264 1080p > RGBA 720p'
  alone=(--runs 3 --frames 600 --warmup 20 --stages)
  "$lat" "${alone[@]}" --only "$h zc|$h cudaupload" \
    > "$out/latency-h264-alone.txt" 2>&1
  echo "zc-latency (H.264 alone) rc=$?"
  cat "$out/latency-h264-alone.txt"
  if [ -n "${PEER:-}" ]; then
    peer "${alone[@]}" --only "$h cudaupload" \
      > "$out/latency-h264-alone-peer.txt" 2>&1
    echo "zc-latency (H.264 alone, peer) rc=$?"
    cat "$out/latency-h264-alone-peer.txt"
  fi
  ;;
streams)
  # a camera's stream (1080p NV12 to RGBA 720p with an effect), N at once
  # in one process. Live at 30 fps: 1 and 32 streams, 3 runs of 600
  # frames; 2 to 16, one run of 300. Flat out (pool buffers, filled once):
  # 1, 4, 16, 32 streams, against the bus limit measured in the same run.
  # The foreign pool against the pool source, flat out, 1 and 16 streams.
  rows='fx zc mapped$|fx cudaupload'
  for n in 1 32; do
    "$lat" --streams $n --runs 3 --frames 600 --warmup 20 --only "$rows" \
      > "$out/streams-live-$n.txt" 2>&1
    echo "zc-latency live $n streams rc=$?"; tail -n 2 "$out/streams-live-$n.txt"
  done
  for n in 2 4 8 16; do
    "$lat" --streams $n --runs 1 --frames 300 --warmup 20 --only "$rows" \
      > "$out/streams-live-$n.txt" 2>&1
    echo "zc-latency live $n streams rc=$?"; tail -n 2 "$out/streams-live-$n.txt"
  done
  for n in 1 4 16 32; do
    "$lat" --streams $n --runs 3 --frames 600 --warmup 30 --flat-out \
      --only "fx zc mapped|$rows" > "$out/streams-flat-$n.txt" 2>&1
    echo "zc-latency flat out $n streams rc=$?"; tail -n 3 "$out/streams-flat-$n.txt"
  done
  # the GPU's hardware queues: 8 unless the process asks for more. Ours
  # with 32 and at the default, nvcodec's at the default, each in
  # processes of their own, alternating; nvcodec's once more with 32
  # (its 32 streams crawled so at d2128f7 and 090d2d5)
  ZC_LATENCY=$lat bash bench/streams-flat.sh --streams 32 --rounds 3 \
    --default-too --peer-connections-too > "$out/streams-flat-32-queues.txt" 2>&1
  echo "streams-flat rc=$?"; sed -n '/streams flat out/,$p' "$out/streams-flat-32-queues.txt"
  if [ -n "${PEER:-}" ]; then
    for n in 1 32; do
      peer --streams $n --runs 3 --frames 600 --warmup 30 --flat-out \
        --only "fx cudaupload" > "$out/streams-flat-$n-peer.txt" 2>&1
      echo "zc-latency (peer) flat out $n streams rc=$?"; tail -n 1 "$out/streams-flat-$n-peer.txt"
    done
  fi
  ;;
multiprocess)
  py=${PY:-python3}
  # what meson gives the Python tests
  export GI_TYPELIB_PATH=$PWD/$b/lib/gst/zerocopy${GI_TYPELIB_PATH:+:$GI_TYPELIB_PATH}
  export PYTHONPATH=$PWD/python GST_PLUGIN_PATH_1_0=$PWD/$b/gst
  export GST_REGISTRY_1_0=${TMPDIR:-/tmp}/registry-multiprocess.bin
  "$py" -c 'import sys; from gi.repository import Gst; Gst.init(None); print(sys.version.split()[0], Gst.version_string())'
  for t in unixfd cudaipc rtp; do
    timeout 300 "$py" tests/python/$t.py > "$out/python-$t.log" 2>&1
    echo "python/$t rc=$?"; tail -n 30 "$out/python-$t.log"
  done
  # as written, then with queues before the zcdownloads; MPS=1 repeats the
  # queued one under NVIDIA's MPS (a daemon of this user, stopped after)
  timeout 300 "$py" bench/zc-multiprocess.py --frames 1500 --runs 3 \
    > "$out/zc-multiprocess.txt" 2>&1
  echo "zc-multiprocess rc=$?"; cat "$out/zc-multiprocess.txt"
  # (--socket: the split chain's two pipelines in one process as well)
  timeout 300 "$py" bench/zc-multiprocess.py --frames 1500 --runs 3 --queue 8 \
    --socket > "$out/zc-multiprocess-queue.txt" 2>&1
  echo "zc-multiprocess --queue 8 --socket rc=$?"; cat "$out/zc-multiprocess-queue.txt"
  if [ "${MPS:-0}" = 1 ] && command -v nvidia-cuda-mps-control >/dev/null; then
    export CUDA_MPS_PIPE_DIRECTORY=${TMPDIR:-/tmp}/zc-mps-pipe
    export CUDA_MPS_LOG_DIRECTORY=${TMPDIR:-/tmp}/zc-mps-log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d
    timeout 300 "$py" bench/zc-multiprocess.py --frames 1500 --runs 3 --queue \
      > "$out/zc-multiprocess-mps.txt" 2>&1
    echo "zc-multiprocess --queue, MPS rc=$?"; cat "$out/zc-multiprocess-mps.txt"
    echo quit | nvidia-cuda-mps-control
  fi
  ;;
suite)
  suite
  ;;
compare)
  # Each build's plugin with its own registry, so that neither hides the
  # other; the passes alternate the builds, so that a drift of the host
  # shows in both
  a=${2:?compare BUILD_A BUILD_B [PASSES]}; c=${3:?compare BUILD_A BUILD_B [PASSES]}
  for pass in $(seq "${4:-3}"); do
    for x in "$a" "$c"; do
      echo "== pass $pass: $x"
      with_build "$x" timeout 120 "$x"/bench/zc-compute-bench --only convert-4k \
        --runs 50 --cpu-runs 3 > "$out/compute-$x-$pass.txt" 2>&1
      echo "zc-compute-bench rc=$?"
      grep -E "^conversion plan|cuda|CUDA" "$out/compute-$x-$pass.txt" | grep -v "^zc-compute-bench"
      with_build "$x" timeout 120 "$x"/bench/zc-bench --only "convert-scale 4K NV12 zc" \
        --runs 5 --no-latency > "$out/bench-$x-$pass.txt" 2>&1
      echo "zc-bench rc=$?"
      grep -E "^convert-scale" "$out/bench-$x-$pass.txt"
    done
  done
  ;;
compare-latency)
  # as compare: the passes alternate the arms. Each build folder needs
  # only its lib/gst/zerocopy, gst and bench/zc-latency.
  only=${2:?compare-latency ONLY ARM...}
  shift 2
  [ $# -gt 0 ] || { echo "compare-latency ONLY ARM...: no ARM" >&2; exit 2; }
  for pass in $(seq "${PASSES:-3}"); do
    for arm in "$@"; do
      x=${arm%%:*}; settings=
      [ "$x" = "$arm" ] || settings=${arm#*:}
      name=latency-${arm//[^A-Za-z0-9_.=-]/-}-$pass
      # shellcheck disable=SC2086 # LATENCY_ARGS is a list of words
      with_build "$x" env ${settings//,/ } "$x"/bench/zc-latency --runs 1 \
        --frames 600 --warmup 20 --stages --only "$only" ${LATENCY_ARGS:-} \
        > "$out/$name.txt" 2>&1
      echo "== pass $pass: $arm: zc-latency rc=$?"
      grep -vE "^(zc-latency|trip|case)[: ]|^$|XDG_RUNTIME_DIR" "$out/$name.txt"
    done
  done
  ;;
managed-contexts)
  # one run of FRAMES frames (default 300) each, the cases at once, managed
  # memory kept on the host (the default)
  for c in alone idle busy nvcodec mapped-nvcodec; do
    only='zc managed$' extra=()
    case $c in
    idle | busy) extra=(--second-context "$c") ;;
    nvcodec) only="$only|cudaupload" ;;
    mapped-nvcodec) only="zc mapped\$|$only|cudaupload" ;;
    esac
    GST_ZC_MANAGED_PLACEMENT=host "$lat" --runs 1 --frames "${2:-300}" \
      --warmup 20 --cases-at-once --only "$only" ${extra[@]+"${extra[@]}"} \
      > "$out/managed-contexts-$c.txt" 2>&1
    echo "== $c: zc-latency rc=$?"
    grep -E " zc managed  | zc mapped  |second context copied" \
      "$out/managed-contexts-$c.txt"
  done
  ;;
managed-placement)
  # one run of FRAMES frames (default 300) each, the cases at once, every
  # process with a row of one other kind beside the managed row; the
  # placement alternates within each composition
  managed='invert 1080p RGBA zc managed$'
  n=0
  for beside in '' 'invert 1080p RGBA zc mapped$' \
      'H.264 1080p > RGBA 720p zc mapped$' 'invert 1080p RGBA cudaupload'; do
    n=$((n + 1))
    for placement in prefetch host; do
      name=managed-placement-$n-$placement
      GST_ZC_MANAGED_PLACEMENT=$placement "$lat" --runs 1 --frames "${2:-300}" \
        --warmup 20 --stages --cases-at-once \
        --only "$managed${beside:+|$beside}" > "$out/$name.txt" 2>&1
      echo "== beside: ${beside:-nothing}; $placement: zc-latency rc=$?"
      grep -A1 " zc managed  " "$out/$name.txt"
    done
  done
  ;;
tests)
  suite
  # compute-sanitizer on one pipeline test program, the GPU filter suite
  # and zcfilter's property races (a second per property: the sanitizer is
  # slow), with the environment meson gives them
  for t in elements/pipelines gpu/zcfilter-gpu elements/zcfilter-robust gpu/nvcodec-gpu; do
    log=$out/sanitizer-${t//\//-}.log
    ZC_RACE_SECONDS=${ZC_RACE_SECONDS:-1} meson test -C "$b" --no-rebuild --wrapper \
      "compute-sanitizer --tool memcheck --leak-check full --error-exitcode 3 --log-file $log.san" \
      "$t" > "$log" 2>&1
    echo "compute-sanitizer $t: rc=$? $(grep -hE '(ERROR|RACECHECK) SUMMARY' "$log.san" | tail -n1)"
  done
  # zckernel's invert kernel (NVRTC-compiled) against zcfilter, in place and
  # not, on every memory type: memcheck and racecheck
  for tool in memcheck racecheck; do
    log=$out/sanitizer-zckernel-$tool.log
    GST_CHECKS=test_invert_kernel_equals_zcfilter_invert,test_out_of_place_gives_the_same_frames \
      meson test -C "$b" --no-rebuild --wrapper \
      "compute-sanitizer --tool $tool --error-exitcode 3 --log-file $log.san" \
      gpu/zckernel-gpu > "$log" 2>&1
    echo "compute-sanitizer $tool gpu/zckernel-gpu: rc=$? $(grep -hE '(ERROR|RACECHECK) SUMMARY' "$log.san" | tail -n1)"
  done
  ;;
figures)
  gst-inspect-1.0 zerocopy > "$out/inspect.txt" 2>&1
  for ex in zc-double embed-appsrc; do
    echo "== $ex"; "$b"/examples/$ex 2>&1 | grep -v "^$" | tail -3
  done
  for size in "1920 1080" "3840 2160"; do
    set -- $size
    "$b"/examples/zc-demo --width "$1" --height "$2" --frames 200 --output "$out/zc-demo-$2.png"
  done
  "$b"/bench/zc-kernel-bench 1920 1080 50
  "$b"/bench/zc-kernel-bench 3840 2160 50
  # convert and blur kernels against videoconvertscale and
  # gaussianblur on 16 threads (under a minute; table in $out)
  "$b"/bench/zc-compute-bench --threads 16 --out "$out"
  echo "zc-compute-bench rc=$?"
  bash bench/pipeline-ms.sh 5 620
  ;;
bench)
  # zc-bench: every case 5 times, raw limits in the same run; table, JSON and
  # PNG under $out/bench (about 5 minutes)
  bash bench/run.sh --build "$PWD/$b" --out "$out/bench"
  echo "zc-bench rc=$?"
  ;;
esac

#!/usr/bin/env bash
# On the GPU host (through .gpu/run.sh): the examples, the kernel test and
# bench, the first figure, and compute-sanitizer on one pipeline. Logs to $OUT.
set -uo pipefail
out=${OUT:-/tmp}
export GST_PLUGIN_PATH=$PWD/build/gst
gst-inspect-1.0 zerocopy > "$out/inspect.txt" 2>&1
echo "== zc-double"; build/examples/zc-double; echo "rc=$?"
echo "== embed-appsrc"; build/examples/embed-appsrc 2>&1 | tail -4; echo "rc=$?"
echo "== zc-demo 1080p"; build/examples/zc-demo --frames 300 --output "$out/zc-demo.png"; echo "rc=$?"
echo "== zc-demo 4K"; build/examples/zc-demo --width 3840 --height 2160 --frames 200 --output "$out/zc-demo-4k.png"; echo "rc=$?"
echo "== kernel test"; build/tests/kernels/test-pointops --gpu 2>&1 | tail -15; echo "rc=$?"
echo "== kernel bench"; build/bench/zc-kernel-bench 1920 1080 50; build/bench/zc-kernel-bench 3840 2160 50
echo "== sanitizer"; compute-sanitizer --tool memcheck --leak-check full build/examples/zc-demo --frames 10 --width 640 --height 480 --output "$out/san.png" > "$out/sanitizer.log" 2>&1; echo "rc=$?"; tail -5 "$out/sanitizer.log"
echo "== first figure"; bash bench/first-figure.sh 3 320

#!/usr/bin/env bash
# The benchmark in one command: runs the already-built zc-bench (every case,
# several runs each) and writes DIR/bench.txt (the table), DIR/bench.json and
# DIR/bench.png. Builds nothing.
#
#   bench/run.sh [--quick] [--out DIR] [--build BUILDDIR] [-- ZC-BENCH ARGS]
#
# DIR defaults to bench/out, BUILDDIR to build (both from the repository
# root). On the GPU host, through the GStreamer bundle:
#   bash .gpu/run.sh bench/run.sh --out "$OUT"
# The chart needs python3 with matplotlib: installed with apt when missing
# and running as root, else skipped with a note.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$root/bench/out
build=$root/build
args=()
while (($#)); do
  case $1 in
    --quick) args+=(--quick) ;;
    --out) out=${2:?--out needs a folder}; shift ;;
    --build) build=${2:?--build needs a folder}; shift ;;
    --) shift; args+=("$@"); break ;;
    *) echo "usage: bench/run.sh [--quick] [--out DIR] [--build BUILDDIR] [-- ZC-BENCH ARGS]" >&2
       exit 2 ;;
  esac
  shift
done

bin=$build/bench/zc-bench
if [[ ! -x $bin ]]; then
  echo "run.sh: $bin not found: build first with tools/setup.sh" >&2
  exit 1
fi
mkdir -p "$out"

# The first python3 that has matplotlib (a pyenv or venv python3 first on
# PATH may lack the distribution's package); zc-bench runs it as $PYTHON.
find_python() {
  local p
  for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import matplotlib' >/dev/null 2>&1; then
      command -v "$p"
      return 0
    fi
  done
  return 1
}
png=()
if ! PYTHON=$(find_python); then
  if ((EUID == 0)) && command -v apt-get >/dev/null 2>&1; then
    echo "run.sh: installing python3-matplotlib for the chart" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends python3-matplotlib </dev/null >&2 ||
      { apt-get update -q </dev/null >&2 &&
        apt-get install -y -q --no-install-recommends python3-matplotlib </dev/null >&2; } ||
      true
  fi
  PYTHON=$(find_python) || echo "run.sh: note: no python3 with matplotlib" \
    "(apt-get install python3-matplotlib as root), so no chart" >&2
fi
[[ -n $PYTHON ]] && png=(--png "$out/bench.png")
export PYTHON

export GST_PLUGIN_PATH=$build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}
"$bin" "${args[@]}" --json "$out/bench.json" "${png[@]}" | tee "$out/bench.txt"
rc=${PIPESTATUS[0]}
echo "run.sh: wrote $out/bench.txt, $out/bench.json${PYTHON:+, $out/bench.png}" >&2
exit "$rc"

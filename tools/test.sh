#!/usr/bin/env bash
# Builds gst-zerocopy (tools/setup.sh) and runs its test suites. Extra
# arguments go to `meson test`, e.g. ./tools/test.sh --suite elements -v
# On a machine without a GPU the tests exercise the CPU backend.
set -euo pipefail

# shellcheck source=tools/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"   # leaves us in the repo root

echo "==> Testing: meson test -C build --print-errorlogs $*"
status=0
meson test -C build --print-errorlogs "$@" || status=$?
if ((status == 0)); then
  echo "==> Tests passed"
else
  echo "==> Tests FAILED (meson test exit status $status); full log: build/meson-logs/testlog.txt" >&2
fi
exit "$status"

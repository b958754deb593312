#!/usr/bin/env bash
# The README's commands where the users are, each in a fresh minimal Debian
# or Ubuntu chroot made from the committed HEAD (../shared/tools/fresh-debian.sh,
# tools/fresh-ubuntu.sh):
#
#   bookworm, bookworm-cuda, trixie, trixie-cuda, bullseye, bullseye-cuda
#       ./tools/test.sh (the README's test command), with and without the
#       CUDA toolkit visible
#   focal, focal-cuda, jammy, jammy-cuda, noble, noble-cuda
#       the same in fresh Ubuntu 20.04, 22.04 and 24.04 chroots made by
#       tools/fresh-ubuntu.sh (the bases of JetPack 5, 6 and 7: GStreamer
#       1.16, 1.20, 1.24, meson 0.53, 0.61, 1.3). The CUDA toolkit here is
#       13.0, which NVIDIA does not ship for Ubuntu 20.04 (JetPack 5 has
#       11.4): focal-cuda checks that meson 0.53 and GCC 9 build the CUDA
#       backend, not a system a user would have
#   aarch64
#       Debian 12: tools/cross-aarch64.sh, the CPU backend built for 64-bit
#       Arm with Debian's cross toolchain, its suites run under qemu-user
#   install
#       Debian 12: ./tools/make-deb.sh, the packages installed with apt, then
#       gst-inspect-1.0 zcfilter, a pipeline and the Python test through the
#       installed typelib, all without GST_PLUGIN_PATH
#
#   tools/matrix.sh [ROW ...]      (default: every row; logs in matrix-logs/)
#
# Each row takes 5 to 20 minutes on two cores: too slow for CI, which runs
# the Debian 12 row of ./tools/test.sh only. Prints one line a row, with the
# test counts meson printed, and exits non-zero if any row failed.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
fresh="${FRESH_DEBIAN:-$root/../shared/tools/fresh-debian.sh}"
[[ -x "$fresh" ]] || { echo "matrix.sh: no $fresh" >&2; exit 1; }
logs="$root/matrix-logs"
mkdir -p "$logs"

install_cmd='apt-get install -y -q --no-install-recommends dpkg-dev >/dev/null &&
./tools/make-deb.sh &&
apt-get install -y -q ./dist/gstreamer1.0-zerocopy_*.deb ./dist/libgstzerocopy-1.0-dev_*.deb &&
cd / && unset GST_PLUGIN_PATH GST_PLUGIN_PATH_1_0 &&
gst-inspect-1.0 zcfilter | head -n 12 &&
gst-launch-1.0 -q videotestsrc num-buffers=5 ! zcupload ! zcfilter invert=true ! zcdownload ! fakesink &&
echo "pipeline ok" &&
pkg-config --modversion gstreamer-zerocopy-1.0 &&
/usr/bin/python3 /root/gst-zerocopy/tests/gir/gstzc-gi.py'

rows=("$@")
((${#rows[@]})) || rows=(bookworm bookworm-cuda trixie trixie-cuda bullseye bullseye-cuda
  focal focal-cuda jammy jammy-cuda noble noble-cuda aarch64 install)

failed=0
for row in "${rows[@]}"; do
  suite=${row%-cuda}
  chroot_tool=$fresh
  args=(--suite "$suite")
  case $suite in
    focal|jammy|noble) chroot_tool=$root/tools/fresh-ubuntu.sh; args=(--release "$suite") ;;
  esac
  [[ "$row" == *-cuda ]] && args+=(--cuda)
  cmd='./tools/test.sh'
  if [[ "$row" == install ]]; then
    args=(--suite bookworm)
    cmd=$install_cmd
  elif [[ "$row" == aarch64 ]]; then
    args=(--suite bookworm)
    cmd='./tools/cross-aarch64.sh'
  fi
  log="$logs/$row.log"
  start=$(date +%s)
  "$chroot_tool" "${args[@]}" "$cmd" >"$log" 2>&1
  rc=$?
  secs=$(($(date +%s) - start))
  counts=$(grep -E '^(Ok|Fail|Skipped|Timeout): ' "$log" | tr -s ' ' | tr '\n' ' ')
  [[ "$row" == install ]] && counts=$(grep -E '^(pipeline ok|ok)$' "$log" | tr '\n' ' ')
  printf '%-14s %s  %4ss  %s\n' "$row" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL($rc)")" \
    "$secs" "$counts"
  ((rc == 0)) || failed=1
done
exit $failed

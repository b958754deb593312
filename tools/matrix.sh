#!/usr/bin/env bash
# The README's commands where the users are, each in a fresh minimal Debian
# or Ubuntu chroot made from the committed HEAD by tools/fresh-chroot.sh
# (needs root, debootstrap and the distributions' mirrors; nothing else
# beside the clone):
#
#   bookworm, trixie, bullseye (Debian 12, 13, 11)
#   focal, jammy, noble (Ubuntu 20.04, 22.04, 24.04: the bases of JetPack 5,
#   6 and 7)
#       ./tools/test.sh (the README's test command) without a CUDA toolkit
#   ROW-cuda
#       the same with this machine's /usr/local/cuda visible (NVIDIA's
#       toolkit, whatever version is installed here)
#   ROW-distro-cuda (bookworm, trixie, jammy, noble)
#       the same with the distribution's own toolkit installed with apt
#       (nvidia-cuda-toolkit from non-free or multiverse: CUDA 11.8, 12.4,
#       11.5, 12.0), the default architecture list
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
# Each row takes 5 to 40 minutes on two cores: too slow for CI, which runs
# the Debian 12 row of ./tools/test.sh only. Prints one line a row, with the
# test counts meson printed and the CUDA toolkit the build found, and exits
# non-zero if any row failed.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
fresh=$root/tools/fresh-chroot.sh
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
((${#rows[@]})) || rows=(bookworm bookworm-cuda bookworm-distro-cuda trixie trixie-cuda
  trixie-distro-cuda bullseye bullseye-cuda focal focal-cuda jammy jammy-cuda
  jammy-distro-cuda noble noble-cuda noble-distro-cuda aarch64 install)

failed=0
for row in "${rows[@]}"; do
  release=${row%%-*}
  args=(--release "$release")
  case $row in
    *-distro-cuda) args+=(--distro-cuda) ;;
    *-cuda) args+=(--cuda) ;;
  esac
  cmd='./tools/test.sh'
  if [[ "$row" == install ]]; then
    args=(--release bookworm)
    cmd=$install_cmd
  elif [[ "$row" == aarch64 ]]; then
    args=(--release bookworm)
    cmd='./tools/cross-aarch64.sh'
  fi
  log="$logs/$row.log"
  start=$(date +%s)
  "$fresh" "${args[@]}" "$cmd" >"$log" 2>&1
  rc=$?
  secs=$(($(date +%s) - start))
  counts=$(grep -E '^(Ok|Fail|Skipped|Timeout): ' "$log" | tr -s ' ' | tr '\n' ' ')
  [[ "$row" == install ]] && counts=$(grep -E '^(pipeline ok|ok)$' "$log" | tr '\n' ' ')
  toolkit=$(sed -n 's/^ *CUDA backend *: *//p' "$log" | tail -n 1)
  printf '%-20s %s  %4ss  %s %s\n' "$row" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL($rc)")" \
    "$secs" "$counts" "${toolkit:+ CUDA: $toolkit}"
  ((rc == 0)) || failed=1
done
exit $failed

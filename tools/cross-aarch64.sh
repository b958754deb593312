#!/usr/bin/env bash
# Builds gst-zerocopy's CPU backend for aarch64 (64-bit Arm: Jetson, Arm
# servers; there `char` is unsigned) with Debian's cross toolchain and runs
# its test suites under qemu-user, on an x86-64 Debian or Ubuntu machine.
# Installs the arm64 packages it needs (multiarch), so run it as root on a
# machine or chroot you can change: tools/matrix.sh runs it in a fresh
# Debian 12 chroot (row aarch64).
#
#   tools/cross-aarch64.sh [meson test arguments]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf '==> %s\n' "$*"; }
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  say "adding the arm64 architecture"
  dpkg --add-architecture arm64
fi
say "installing the cross toolchain, qemu-user and the arm64 GStreamer packages"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q </dev/null
apt-get install -y -q --no-install-recommends </dev/null \
  crossbuild-essential-arm64 qemu-user meson ninja-build pkg-config git \
  libgstreamer1.0-dev:arm64 libgstreamer-plugins-base1.0-dev:arm64 \
  gstreamer1.0-plugins-base:arm64 gstreamer1.0-plugins-good:arm64

b=build-aarch64
if [[ ! -f $b/meson-private/coredata.dat ]]; then
  say "configuring $b (CPU backend; no CUDA, no nvcodec, no introspection)"
  meson setup "$b" --cross-file tools/cross/aarch64-linux-gnu.ini \
    -Dcuda-backend=disabled -Dnvcodec=disabled -Dintrospection=disabled
fi
say "building"
ninja -C "$b"
file "$b/gst/libgstzerocopy.so"
say "testing under qemu-aarch64"
# qemu-user runs the test programs, but not the plugin scanner GStreamer
# would spawn: load plugins in the test process instead
export GST_REGISTRY_FORK=no
meson test -C "$b" --print-errorlogs --timeout-multiplier 8 "$@"

#!/usr/bin/env bash
# Prepares a machine to build gst-zerocopy and builds it into build/.
#
#   ./tools/setup.sh          run it directly, or
#   source tools/setup.sh     from another script (tools/demo.sh, tools/test.sh)
#                             so that the PATH holding nvcc carries over.
#
# On Debian 11/12/13 and Ubuntu it installs, with apt, only the packages that
# are missing. When a CUDA toolkit is found (/usr/local/cuda/bin/nvcc, or nvcc
# already on PATH) the CUDA backend is built as well; otherwise the CPU
# backend alone is built. Setting ZC_SKIP_APT=1 skips the package step,
# ZC_SETUP_NO_BUILD=1 the build (tools/make-deb.sh builds its own).

# Work in a function so that sourcing this file does not leave `set -e` and
# friends behind in an interactive shell; the callers set them themselves.
zc_setup_main() {
  local root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

  zc_say() { printf '==> %s\n' "$*"; }
  zc_die() {
    printf 'setup.sh: error: %s\n' "$*" >&2
    return 1
  }

  # -- 1. System packages ---------------------------------------------------
  local pkgs=(g++ meson ninja-build pkg-config git
    libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
    # the display test: ximagesink under a virtual X server
    libx11-dev gstreamer1.0-x xvfb xauth
    # GObject introspection of the library (GstZc-1.0), the gstzc Python
    # module's views and their tests
    gobject-introspection libgirepository1.0-dev python3-gi python3-numpy
    gstreamer1.0-tools gstreamer1.0-plugins-base
    gstreamer1.0-plugins-good gstreamer1.0-plugins-bad)
  # GStreamer's CUDA library, for the memory:CUDAMemory exchange with
  # nvcodec's elements: only where the CUDA backend is built (its -dev
  # package pulls in OpenCV's)
  if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
    pkgs+=(libgstreamer-plugins-bad1.0-dev)
  fi

  if [[ "${ZC_SKIP_APT:-0}" == 1 ]]; then
    zc_say "Packages: skipped (ZC_SKIP_APT=1)"
  elif command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    local missing=() p status
    for p in "${pkgs[@]}"; do
      status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
      [[ "$status" == "install ok installed" ]] || missing+=("$p")
    done
    if ((${#missing[@]} == 0)); then
      zc_say "Packages: all ${#pkgs[@]} required packages are installed"
    else
      zc_say "Packages: installing ${missing[*]}"
      local sudo=()
      if ((EUID != 0)); then
        command -v sudo >/dev/null 2>&1 ||
          zc_die "not root and no sudo; install as root: apt-get install ${missing[*]}" || return 1
        sudo=(sudo)
      fi
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null ||
        zc_die "apt-get update failed (network or apt sources?)" || return 1
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends "${missing[@]}" </dev/null ||
        zc_die "apt-get install ${missing[*]} failed" || return 1
    fi
  else
    zc_say "Packages: not a Debian/Ubuntu system; install by hand: ${pkgs[*]}"
  fi

  local tool
  for tool in g++ meson ninja pkg-config; do
    command -v "$tool" >/dev/null 2>&1 || zc_die "'$tool' not found on PATH" || return 1
  done
  # What this system cannot do, said before meson fails on it
  local have_gst
  have_gst="$(pkg-config --modversion gstreamer-1.0 2>/dev/null || true)"
  if [[ -n "$have_gst" ]] && ! pkg-config --exists 'gstreamer-1.0 >= 1.16'; then
    zc_die "GStreamer $have_gst is too old: gst-zerocopy needs 1.16 or newer (Debian 11, Ubuntu 20.04, JetPack 5 or newer)" ||
      return 1
  fi
  pkg-config --exists 'gstreamer-1.0 >= 1.16' gstreamer-video-1.0 gstreamer-app-1.0 ||
    zc_die "GStreamer >= 1.16 development files not found (libgstreamer1.0-dev, libgstreamer-plugins-base1.0-dev)" ||
    return 1
  local have_meson
  have_meson="$(meson --version)"
  if [[ "$(printf '%s\n' 0.53 "$have_meson" | sort -V | head -n 1)" != 0.53 ]]; then
    zc_die "meson $have_meson is too old: gst-zerocopy needs 0.53 or newer (Debian 11, Ubuntu 20.04 or newer have it)" ||
      return 1
  fi
  zc_say "GStreamer: $have_gst, meson: $have_meson"

  # -- 2. CUDA toolkit (optional) -------------------------------------------
  local nvcc_path="" cuda_version
  if command -v nvcc >/dev/null 2>&1; then
    nvcc_path="$(command -v nvcc)"
  elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
    nvcc_path=/usr/local/cuda/bin/nvcc
    export PATH="/usr/local/cuda/bin:$PATH"
  fi
  if [[ -n "$nvcc_path" ]]; then
    cuda_version="$("$nvcc_path" --version | sed -n 's/.*release \([0-9][0-9.]*\).*/\1/p')"
    zc_say "CUDA toolkit: ${cuda_version:-unknown version} ($nvcc_path)"
    # Debian's toolkit (nvidia-cuda-toolkit) brings libcuda1, which points
    # the system's libGL and libEGL at the NVIDIA driver's; without that
    # driver (a build machine) they point nowhere, and every program that
    # links GStreamer's GL library (nvcodec's, so ours) fails to link.
    local lib missing_gl=0
    if [[ "$(readlink /etc/alternatives/glx 2>/dev/null)" == /usr/lib/nvidia ]]; then
      for lib in libGL.so.1 libEGL.so.1; do
        compgen -G "/usr/lib/*-linux-gnu*/$lib" >/dev/null || missing_gl=1
      done
    fi
    if ((missing_gl)); then
      zc_die "the glx alternative points at the NVIDIA driver's libGL/libEGL, which are not installed. Install the driver (apt-get install nvidia-driver), or on a machine without an NVIDIA GPU take Mesa's: update-alternatives --set glx /usr/lib/mesa-diverted" ||
        return 1
    fi
  else
    zc_say "CUDA toolkit: not found; the CPU backend alone will be built"
  fi

  # -- 3. Configure and build -----------------------------------------------
  cd "$root" || return 1
  if [[ "${ZC_SETUP_NO_BUILD:-0}" == 1 ]]; then
    zc_say "Build: skipped (ZC_SETUP_NO_BUILD=1)"
    return 0
  fi
  if [[ -f build/meson-private/coredata.dat ]]; then
    zc_say "Configure: build/ already configured"
  else
    zc_say "Configure: meson setup build"
    meson setup build ||
      zc_die "meson setup failed; see build/meson-logs/meson-log.txt" || return 1
  fi
  # ninja, not `meson compile` (meson 0.54): the same build on Debian 11
  zc_say "Build: ninja -C build"
  ninja -C build ||
    zc_die "build failed; the compiler output above names the file" || return 1
  zc_say "Build: done (plugin in build/gst, examples in build/examples)"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  # Run as a program.
  set -euo pipefail
  zc_setup_main
else
  # Sourced: PATH changes (nvcc) stay with the caller; failure returns 1,
  # which ends a caller running under `set -e`.
  zc_setup_main || return 1
fi

#!/usr/bin/env bash
# Builds installable Debian packages of gst-zerocopy into dist/:
#   gstreamer1.0-zerocopy     the plugin (zcupload, zcfilter, zcdownload,
#                             zckernel), the library and its typelib
#   libgstzerocopy-1.0-dev    headers, pkg-config file (gstreamer-zerocopy-1.0),
#                             GstZc-1.0.gir
# Installed, the plugin sits in GStreamer's own plugin directory, so
# gst-inspect-1.0 zcfilter finds it without GST_PLUGIN_PATH.
#
#   ./tools/make-deb.sh        (from anywhere; runs tools/setup.sh first)
#   sudo apt-get install ./dist/gstreamer1.0-zerocopy_*.deb
#
# With a CUDA toolkit found (as setup.sh finds it) the packages carry the
# CUDA backend, built for the architectures of meson's cuda-arch option; the
# CUDA runtime is linked in statically, so they need only the NVIDIA driver
# at run time. Dependencies come from dpkg-shlibdeps.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=tools/setup.sh
ZC_SETUP_NO_BUILD=1 source "$root/tools/setup.sh"   # packages, PATH for nvcc
cd "$root"

die() { printf 'make-deb.sh: error: %s\n' "$*" >&2; exit 1; }
trap 'printf "make-deb.sh: error: line %s failed\n" "$LINENO" >&2' ERR
for tool in dpkg-deb dpkg-architecture dpkg-shlibdeps; do
  command -v "$tool" >/dev/null 2>&1 ||
    die "'$tool' not found (apt-get install dpkg-dev)"
done

arch=$(dpkg-architecture -qDEB_HOST_ARCH)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
version=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" meson.build | head -n1)
[[ -n "$version" ]] || die "no version in meson.build"
debrev=1

bdir=build-deb
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

echo "==> Configuring $bdir (prefix /usr, libdir lib/$multiarch)"
if [[ -d "$bdir" ]]; then
  meson setup --reconfigure "$bdir" --prefix=/usr --libdir="lib/$multiarch" \
    --buildtype=release -Dtests=disabled -Dexamples=disabled >/dev/null
else
  meson setup "$bdir" --prefix=/usr --libdir="lib/$multiarch" \
    --buildtype=release -Dtests=disabled -Dexamples=disabled >/dev/null
fi
echo "==> Building"
ninja -C "$bdir" >/dev/null
echo "==> Installing into a staging tree"
DESTDIR="$stage/root" meson install -C "$bdir" >/dev/null

# Split the staged tree into the two packages
run="$stage/run"
dev="$stage/dev"
mkdir -p "$run" "$dev"
movetree() {                    # $1 = path under the staged root, $2 = package tree
  local src="$stage/root/$1"
  [[ -e "$src" ]] || return 0
  mkdir -p "$2/$(dirname "$1")"
  mv "$src" "$2/$1"
}
libdir="usr/lib/$multiarch"
movetree "usr/include" "$dev"
movetree "$libdir/pkgconfig" "$dev"
movetree "usr/share/gir-1.0" "$dev"
# the unversioned link is for the linker: development files
movetree "$libdir/libgstzerocopy-1.0.so" "$dev"
# everything left is run time: the plugin, the library, the typelib
cp -a "$stage/root/." "$run/"
find "$run" -type f \( -name '*.so' -o -name '*.so.*' \) -exec strip --strip-unneeded {} +

# Dependencies of the shared objects, as Debian computes them
mkdir -p "$stage/shlibs/debian"
printf 'Source: gst-zerocopy\n\nPackage: gstreamer1.0-zerocopy\nArchitecture: any\n' \
  > "$stage/shlibs/debian/control"
mapfile -t objs < <(find "$run" -type f \( -name '*.so' -o -name '*.so.*' \))
# the plugin's use of our own library is this package's, not a dependency
shlibdeps=$(cd "$stage/shlibs" && dpkg-shlibdeps -O --ignore-missing-info \
  -l"$run/$libdir" "${objs[@]}" 2>"$stage/shlibdeps.err") ||
  die "dpkg-shlibdeps failed: $(cat "$stage/shlibdeps.err")"
depends=$(sed -n 's/^shlibs:Depends=//p' <<<"$shlibdeps")
[[ -n "$depends" ]] || die "dpkg-shlibdeps found no dependencies"

control() {                     # $1 = package, $2 = depends, $3 = summary, $4 = text
  local size
  size=$(du -sk "$5" | cut -f1)
  mkdir -p "$5/DEBIAN"
  cat >"$5/DEBIAN/control" <<EOF
Package: $1
Version: $version-$debrev
Architecture: $arch
Maintainer: gst-zerocopy maintainers <maintainers@gst-zerocopy.invalid>
Installed-Size: $size
Depends: $2
Section: libs
Priority: optional
Homepage: https://github.com/gst-zerocopy/gst-zerocopy
Description: $3
$4
EOF
}
control gstreamer1.0-zerocopy "$depends" \
  "GStreamer elements that share video frames with CUDA kernels without copies" \
  " zcupload, zcfilter, zcdownload and zckernel move video between CPU
 elements and CUDA kernels through pinned host memory mapped into the GPU,
 or managed memory, negotiated as memory:CUDAZeroCopy. Without a GPU the
 elements run on their CPU backend." "$run"
control libgstzerocopy-1.0-dev \
  "gstreamer1.0-zerocopy (= $version-$debrev), libgstreamer1.0-dev, libgstreamer-plugins-base1.0-dev" \
  "gst-zerocopy library: development files" \
  " Headers, pkg-config file (gstreamer-zerocopy-1.0) and GObject
 introspection data (GstZc-1.0) of the gst-zerocopy library." "$dev"

mkdir -p dist
for pkg in gstreamer1.0-zerocopy:"$run" libgstzerocopy-1.0-dev:"$dev"; do
  name=${pkg%%:*}
  tree=${pkg#*:}
  out="dist/${name}_${version}-${debrev}_${arch}.deb"
  dpkg-deb --root-owner-group --build "$tree" "$out" >/dev/null
  echo "==> $out ($(du -h "$out" | cut -f1))"
done

#!/usr/bin/env bash
# PyGObject for a machine that has python3 but not python3-gi (the GPU
# host: Ubuntu 24.04's python3 and numpy, no PyGObject, no way to install
# packages), beside a GStreamer runtime bundle:
#
#   sudo tools/python-bundle.sh OUT [RELEASE]      (RELEASE: noble)
#
# downloads RELEASE's python3-gi and the GLib it was built against (with
# apt-get download, in a minimal debootstrap chroot of RELEASE, cached in
# $TMPDIR), unpacks them into OUT with this machine's GStreamer typelibs
# (Gst, GstBase, GstVideo: the release of the bundled GStreamer), and
# writes OUT/env.sh. There, after the bundle's environment:
#
#   source OUT/env.sh      # PYTHONPATH, GI_TYPELIB_PATH, LD_LIBRARY_PATH
#
# The newer GLib goes first on the library path: GStreamer built against an
# older GLib runs on a newer one, PyGObject built against a newer one does
# not run on an older one. Needs root, debootstrap and RELEASE's mirror.
set -euo pipefail
out=${1:?usage: tools/python-bundle.sh OUT [RELEASE]}
release=${2:-noble}
mirror=${UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}
tmp=${TMPDIR:-/tmp}
root="$tmp/python-bundle-$release"
multiarch=x86_64-linux-gnu

if [[ ! -x "$root/usr/bin/apt-get" ]]; then
  echo "==> debootstrap $release into $root"
  debootstrap --variant=minbase --no-check-gpg "$release" "$root" "$mirror" >/dev/null
  echo "deb $mirror $release main universe" > "$root/etc/apt/sources.list"
  echo "deb $mirror $release-updates main universe" >> "$root/etc/apt/sources.list"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
pkgs=(python3-gi gir1.2-glib-2.0 libgirepository-1.0-1 libffi8)
# GLib's package is libglib2.0-0t64 from Ubuntu 24.04 on, libglib2.0-0 before
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin bash -c '
  set -e
  apt-get update -q >/dev/null
  glib=libglib2.0-0t64; apt-cache show $glib >/dev/null 2>&1 || glib=libglib2.0-0
  rm -rf /python-bundle-debs && mkdir /python-bundle-debs && cd /python-bundle-debs
  apt-get download -q '"${pkgs[*]}"' $glib 2>&1 | grep -v "unsandboxed" || true
  ls'

rm -rf "$out"
mkdir -p "$out/stage" "$out/lib" "$out/python" "$out/typelib"
for deb in "$root"/python-bundle-debs/*.deb; do dpkg-deb -x "$deb" "$out/stage"; done
cp -a "$out/stage/usr/lib/python3/dist-packages/gi" "$out/python/"
for l in libglib-2.0 libgobject-2.0 libgio-2.0 libgmodule-2.0 libgthread-2.0 \
  libgirepository-1.0 libffi; do
  cp -a "$out/stage/usr/lib/$multiarch/$l".so.* "$out/lib/" 2>/dev/null || true
done
cp -a "$out/stage/usr/lib/$multiarch/girepository-1.0/"*.typelib "$out/typelib/"
for t in Gst-1.0 GstBase-1.0 GstVideo-1.0 GstApp-1.0 GstAudio-1.0 GstTag-1.0; do
  f=/usr/lib/$multiarch/girepository-1.0/$t.typelib
  [[ -f $f ]] && cp "$f" "$out/typelib/"
done
rm -rf "$out/stage"
cat > "$out/env.sh" <<'EOF'
# source me after the GStreamer bundle's environment
_pb=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PYTHONPATH="$_pb/python${PYTHONPATH:+:$PYTHONPATH}"
export GI_TYPELIB_PATH="$_pb/typelib${GI_TYPELIB_PATH:+:$GI_TYPELIB_PATH}"
export LD_LIBRARY_PATH="$_pb/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset _pb
EOF
du -sh "$out" | awk '{print "==> " $2 ": " $1}'

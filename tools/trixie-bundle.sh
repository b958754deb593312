#!/usr/bin/env bash
# GStreamer 1.26 and Python 3.13 with PyGObject and NumPy, from Debian 13
# "trixie" packages, for a machine with an older glibc and no GStreamer (the
# GPU host: Ubuntu 24.04, glibc 2.39, no way to install packages). The
# bundle runs from one fixed place, /tmp/zc126, and nowhere else:
#
#   sudo tools/trixie-bundle.sh OUT.txz
#   (on the other machine)
#   mkdir -p /tmp/zc126 && tar -C /tmp/zc126 -xJf OUT.txz
#   source /tmp/zc126/env.sh   # PATH, GStreamer's and GI's paths; no LD_LIBRARY_PATH
#
# How: a minimal debootstrap chroot of trixie (cached in $TMPDIR, from this
# machine's Debian mirror) gets the packages with apt-get; the programs
# (gst-launch-1.0, gst-inspect-1.0, gst-plugin-scanner, python3.13), a
# chosen set of plugins, every GStreamer library, Python's standard library
# with lib-dynload, gi and numpy are copied out, with the shared-library
# closure of all of them as the chroot's ldd resolves it, glibc 2.41 and
# libstdc++ included (not NVIDIA's driver and toolkit libraries: the host
# has those, and the bundle's loader finds them through the host's
# ld.so.cache). Every ELF is stripped and patched: the programs' interpreter
# is /tmp/zc126/lib/ld-linux-x86-64.so.2 and every object's RUNPATH is
# /tmp/zc126/lib. So the bundle's processes, and the children they start
# (sys.executable), load the bundle's glibc without any LD_LIBRARY_PATH,
# and host programs started from them or beside them (bash, ls, meson) keep
# the host's.
#
# The trap: never put /tmp/zc126/lib on LD_LIBRARY_PATH. A host program
# would load glibc 2.41 with its own older loader and crash.
#
# Libraries built elsewhere (ours: built on Debian 12 against GStreamer
# 1.22, on LD_LIBRARY_PATH or found by GStreamer as a plugin) have no
# RUNPATH into the bundle: their dependencies are found by soname among
# the objects already loaded, else on the host. So the programs also list
# (DT_NEEDED) the libraries such a library links (GStreamer's core, base,
# video, allocators, CUDA and GL libraries, libstdc++, libgcc_s): they are
# loaded at start, and the host's copies (1.22 here, none on the GPU host)
# are never looked for.
#
# Needs root, debootstrap, xz, and the network to the mirror.
set -euo pipefail
out=${1:?usage: tools/trixie-bundle.sh OUT.txz}
[[ $out = /* ]] || out=$PWD/$out
prefix=/tmp/zc126
tmp=${TMPDIR:-/tmp}
root=$tmp/trixie-bundle-root
mirror=${DEBIAN_MIRROR:-$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources)}
multiarch=x86_64-linux-gnu
# in_root SCRIPT [ARGS]: bash -c SCRIPT _ ARGS in the chroot, clean environment
in_root() { local s=$1; shift; chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 bash -c "$s" _ "$@"; }
# ccp SRC... DEST: cp -rL in the chroot (absolute links point into it), chroot paths
ccp() { in_root 'cp -rL "$@"' "$@"; }

# Required plugins, then ones that are copied when the packages have them
plugins=(coreelements coretracers videotestsrc videoconvertscale videorate app
  audiotestsrc imagefreeze png videofilter udp rtp rtpmanager vpx
  videoparsersbad debugutilsbad nvcodec unixfd)
optional_plugins=(typefindfunctions playback audioconvert
  audioresample volume autodetect multifile isomp4 matroska
  videocrop videobox)
# Loaded at start by every bundled program, for libraries built elsewhere
preload=(libstdc++.so.6 libgcc_s.so.1 libgstreamer-1.0.so.0
  libgstbase-1.0.so.0 libgstvideo-1.0.so.0 libgstallocators-1.0.so.0
  libgstgl-1.0.so.0 libgstcuda-1.0.so.0)
# From the host, never bundled
host_only='^(libcuda|libnvcuvid|libnvidia-|libnvrtc|libcudart|libcublas|libnppi)'

pkgs=(gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly libopenh264-8
  python3 python3-gi python3-numpy gir1.2-gstreamer-1.0
  gir1.2-gst-plugins-base-1.0 gir1.2-gst-plugins-bad-1.0 patchelf binutils)

if [[ ! -x $root/usr/bin/apt-get ]]; then
  echo "==> debootstrap trixie into $root"
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
  debootstrap --variant=minbase trixie "$root" "$mirror" >"$tmp/debootstrap-trixie-bundle.log" 2>&1 ||
    { echo "debootstrap failed: $tmp/debootstrap-trixie-bundle.log" >&2; exit 2; }
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
echo "==> apt-get install in $root (log: $tmp/trixie-bundle-apt.log)"
in_root "apt-get update -q && apt-get install -y -q --no-install-recommends ${pkgs[*]}" \
  >"$tmp/trixie-bundle-apt.log" 2>&1 || { tail -20 "$tmp/trixie-bundle-apt.log" >&2; exit 2; }

stage=$root/zc126-stage          # /zc126-stage in the chroot
s=/zc126-stage
rm -rf "$stage"
mkdir -p "$stage"/{bin,libexec,lib/gstreamer-1.0,lib/girepository-1.0,lib/python3/dist-packages} \
  "$stage"/lib/gio/modules "$stage"/lib/gconv
u=/usr/lib/$multiarch

echo "==> programs, plugins, GStreamer libraries, typelibs"
ccp /usr/bin/{gst-launch-1.0,gst-inspect-1.0,python3.13} $s/bin/
ln -s python3.13 "$stage/bin/python3"
ccp $u/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner $s/libexec/
files=()
for p in "${plugins[@]}"; do files+=("$u/gstreamer-1.0/libgst$p.so"); done
for p in "${optional_plugins[@]}"; do
  f=$u/gstreamer-1.0/libgst$p.so
  if [[ -f $root$f ]]; then files+=("$f"); else echo "    (no $p plugin)"; fi
done
ccp "${files[@]}" $s/lib/gstreamer-1.0/
files=()
for f in "$root$u"/libgst*-1.0.so.0; do
  case ${f##*/} in libgstwebrtcnice-*|libgstva-*|libgstdxva-*) continue ;; esac
  files+=("${f#"$root"}")
done
ccp "${files[@]}" $s/lib/
ccp $u/girepository-1.0/. $s/lib/girepository-1.0/

echo "==> Python 3.13, gi, numpy"
ccp /usr/lib/python3.13 $s/lib/
rm -rf "$stage"/lib/python3.13/{test,idlelib,tkinter,ensurepip,turtledemo,pydoc_data,EXTERNALLY-MANAGED}
rm -f "$stage"/lib/python3.13/lib-dynload/{_test*,_xxtestfuzz*,_ctypes_test*,xxlimited*,xxsubtype*}
ccp /usr/lib/python3/dist-packages/{gi,numpy} $s/lib/python3/dist-packages/
find "$stage/lib/python3/dist-packages/numpy" -depth -type d -name tests -exec rm -rf {} +
find "$stage" -depth -type d -name __pycache__ -exec rm -rf {} +

is_elf() { [[ $(od -An -tx1 -N4 "$1" 2>/dev/null) = " 7f 45 4c 46" ]]; }
elves() { find "$stage" -type f | while read -r f; do is_elf "$f" && echo "${f#"$root"}"; done; }

echo "==> shared-library closure"
mapfile -t objs < <(elves)
# ldd in the chroot: its ld.so.cache and alternatives (libblas.so.3) decide
deps=$(in_root 'for f; do ldd "$f"; done' "${objs[@]}" |
  awk '/=> \// {print $1, $3} /=> not found/ {print $1, "NOTFOUND"}' | sort -u)
missing=$(awk '$2 == "NOTFOUND" {print $1}' <<<"$deps" | grep -Ev "$host_only" || true)
[[ -z $missing ]] || { echo "not found in the chroot: $missing" >&2; exit 1; }
while read -r soname path; do
  [[ $path = NOTFOUND ]] && continue
  [[ $soname =~ $host_only ]] && continue
  [[ -e $stage/lib/$soname ]] || ccp "$path" "$s/lib/$soname"
done <<<"$deps"
# glibc: the loader and what glibc itself loads by name (NSS's files and
# DNS are in libc since 2.34), and libraries some programs open at run time
ccp /usr/lib64/ld-linux-x86-64.so.2 $s/lib/ld-linux-x86-64.so.2
for l in libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libresolv.so.2 \
  libutil.so.1 libanl.so.1 libmvec.so.1 libnss_files.so.2 libnss_dns.so.2 \
  libgcc_s.so.1 libstdc++.so.6 libEGL.so.1 libGL.so.1 libGLX.so.0 libGLdispatch.so.0; do
  [[ -e $stage/lib/$l ]] || ccp "$u/$l" "$s/lib/$l"
done
for l in "${preload[@]}"; do [[ -e $stage/lib/$l ]] || { echo "no $l" >&2; exit 1; }; done

echo "==> strip, patchelf"
mapfile -t objs < <(elves)
# patchelf 0.18 aborts (shiftFile: splitIndex == -1) on the non-PIE python3.13
# given --add-needed with the other two, or after them: --add-needed first,
# alone, then the interpreter and RUNPATH
needed=$(printf -- '--add-needed %s ' "${preload[@]}")
in_root '
  set -e
  prefix=$1 needed=$2; shift 2
  for f; do
    case ${f##*/} in
      ld-linux-x86-64.so.2) continue ;;   # the loader: as it is
    esac
    strip --strip-unneeded "$f" 2>/dev/null || true
    case ${f##*/} in libc.so.6) continue ;; esac   # needs nothing but the loader
    case $f in
      /zc126-stage/bin/*|/zc126-stage/libexec/*)
        patchelf $needed "$f"
        patchelf --set-interpreter "$prefix/lib/ld-linux-x86-64.so.2" \
          --set-rpath "$prefix/lib" "$f" ;;
      *) patchelf --set-rpath "$prefix/lib" "$f" ;;
    esac
  done' "$prefix" "$needed" "${objs[@]}"

echo "==> env.sh, README.txt"
cat >"$stage/env.sh" <<EOF
# source me: GStreamer 1.26 and Python 3.13 of Debian 13, installed in $prefix
# (made by gst-zerocopy's tools/trixie-bundle.sh; see README.txt there).
# No LD_LIBRARY_PATH: never put $prefix/lib on it.
export PATH=$prefix/bin:\$PATH
export GST_PLUGIN_SYSTEM_PATH_1_0=$prefix/lib/gstreamer-1.0
export GST_PLUGIN_SCANNER_1_0=$prefix/libexec/gst-plugin-scanner
export GST_REGISTRY_1_0=\${GST_REGISTRY_1_0:-/tmp/zc126-registry.bin}
export GI_TYPELIB_PATH=$prefix/lib/girepository-1.0\${GI_TYPELIB_PATH:+:\$GI_TYPELIB_PATH}
# the host's GIO modules are built for its GLib: none
export GIO_MODULE_DIR=$prefix/lib/gio/modules
export GCONV_PATH=$prefix/lib/gconv
export PYTHONNOUSERSITE=1
EOF
versions=$(in_root "dpkg-query -W -f='\${Package} \${Version}\n' libc6 libstdc++6 libglib2.0-0t64 \
  libgstreamer1.0-0 gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad \
  gstreamer1.0-plugins-ugly libopenh264-8 python3.13 python3-gi python3-numpy libgirepository-1.0-1 2>/dev/null" || true)
cat >"$stage/README.txt" <<EOF
GStreamer 1.26 and Python 3.13 (PyGObject, NumPy) from Debian 13 "trixie",
with its own glibc, for $prefix only. Made by gst-zerocopy's
tools/trixie-bundle.sh on $(date -u +%Y-%m-%d).

  mkdir -p $prefix && tar -C $prefix -xJf zc126.txz
  source $prefix/env.sh
  gst-inspect-1.0 --version; python3 -c 'import gi, numpy'

Every program's interpreter is $prefix/lib/ld-linux-x86-64.so.2 and every
object's RUNPATH $prefix/lib: nothing needs LD_LIBRARY_PATH.

THE TRAP: never put $prefix/lib on LD_LIBRARY_PATH. Host programs (bash,
ls, the host's python) would load this glibc with their own loader and crash.

NVIDIA's libraries (libcuda, libnvcuvid, libnvidia-encode, libnvrtc) are not
here: the host's are found through its ld.so.cache (or LD_LIBRARY_PATH, for
/usr/local/cuda/lib64). Libraries built elsewhere against GStreamer (a
plugin on GST_PLUGIN_PATH, its library on LD_LIBRARY_PATH) get this
GStreamer: the programs load ${preload[*]}
at start, so those sonames are never looked for on the host.
Plugins: $(cd "$stage/lib/gstreamer-1.0" && ls | sed 's/^libgst//; s/\.so$//' | tr '\n' ' ')

Packages:
$versions
EOF

echo "==> $out"
mkdir -p "$(dirname "$out")"
# Left out, to keep the bundle and a device run's carry small: what the
# tests never load (H.264 encoders, Python's sqlite, dbm and OpenSSL modules
# with their libraries: hashlib falls back on its own; compiled bytecode:
# PYTHONDONTWRITEBYTECODE=1 there; NumPy's f2py and type stubs)
tar -C "$stage" --owner=0 --group=0 --exclude='__pycache__' \
  --exclude='lib/libx264*' --exclude='lib/libopenh264*' \
  --exclude='lib/gstreamer-1.0/libgstx264.so' --exclude='lib/gstreamer-1.0/libgstopenh264.so' \
  --exclude='lib/libsqlite3*' --exclude='lib/libdb-5*' --exclude='*_sqlite3*' \
  --exclude='*_dbm*' --exclude='*_gdbm*' --exclude='lib/libcrypto*' --exclude='lib/libssl*' \
  --exclude='*_ssl.cpython*' --exclude='*_hashlib.cpython*' --exclude='*/numpy/f2py' \
  --exclude='*.pyi' -cf - . | xz -T0 -9e >"$out.tmp"
mv "$out.tmp" "$out"
du -sh "$stage" | awk '{print "    unpacked: " $1}'
du -h "$out" | awk '{print "    packed:   " $1}'

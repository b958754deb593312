#!/usr/bin/env bash
# The README's commands on a fresh minimal Ubuntu, as a new user there would
# run them: a chroot made with debootstrap from archive.ubuntu.com (cached per
# release in $TMPDIR), the committed HEAD cloned into /root/gst-zerocopy,
# COMMAND run there as root.
#
#   tools/fresh-ubuntu.sh [--release focal|jammy|noble] [--cuda] [--keep] COMMAND
#
#   focal   Ubuntu 20.04: GStreamer 1.16.2, meson 0.53.2, gcc 9.4 (the
#           base of JetPack 5)
#   jammy   Ubuntu 22.04: GStreamer 1.20.3, meson 0.61.2, gcc 11.4 (JetPack 6)
#   noble   Ubuntu 24.04: GStreamer 1.24.2, meson 1.3.2, gcc 13.2 (JetPack 7)
#   --cuda  this machine's /usr/local/cuda is visible, read-only
#   --keep  leave the chroot in place and print its path
#
# Needs root and debootstrap. The first bootstrap of a release runs without
# a signature check of the archive (the machine that runs this has no
# Ubuntu keyring); apt inside the chroot then checks with the keyring the
# bootstrap installed. For testing only: nothing from the chroot is kept.
set -u
release=focal; cuda=0; keep=0
while [ $# -gt 1 ]; do
  case $1 in
    --release) release=$2; shift 2 ;;
    --cuda) cuda=1; shift ;;
    --keep) keep=1; shift ;;
    *) break ;;
  esac
done
cmd=${1:?usage: fresh-ubuntu.sh [--release focal|jammy|noble] [--cuda] [--keep] COMMAND}
case $release in focal|jammy|noble) ;; *) echo "fresh-ubuntu: unknown release $release" >&2; exit 2 ;; esac
src=$(git rev-parse --show-toplevel) || exit 2
mirror=${UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}
tmp=${TMPDIR:-/tmp}
base=$tmp/fresh-base-ubuntu-$release.tar
root=$tmp/fresh-root-ubuntu-$release-$$

if [ ! -f "$base" ]; then
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null ||
    { echo "fresh-ubuntu: no debootstrap" >&2; exit 2; }
  scripts=/usr/share/debootstrap/scripts
  # Older debootstraps lack a script for newer releases; every Ubuntu
  # release since 7.10 bootstraps the same way.
  [ -e "$scripts/$release" ] || ln -s gutsy "$scripts/$release"
  debootstrap --variant=minbase --no-check-gpg --components=main,universe \
    "$release" "$root" "$mirror" >"$tmp/debootstrap-ubuntu-$release.log" 2>&1 ||
    { echo "fresh-ubuntu: debootstrap failed: $tmp/debootstrap-ubuntu-$release.log" >&2; exit 2; }
  printf 'deb %s %s main universe\ndeb %s %s-updates main universe\n' \
    "$mirror" "$release" "$mirror" "$release" >"$root/etc/apt/sources.list"
  tar -C "$root" -cf "$base" . && rm -rf --one-file-system "$root"
fi

mkdir -p "$root" && tar -C "$root" -xf "$base"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
git clone -q "$src" "$root/root/gst-zerocopy"
for m in proc sys dev; do mount --bind /$m "$root/$m"; done
if [ $cuda = 1 ]; then
  mkdir -p "$root/usr/local/cuda"
  mount --bind -o ro /usr/local/cuda "$root/usr/local/cuda"
fi
chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -lc "cd /root/gst-zerocopy && $cmd"
rc=$?
if [ $keep = 1 ]; then
  echo "fresh-ubuntu: chroot kept at $root"
else
  for m in usr/local/cuda dev sys proc; do
    mountpoint -q "$root/$m" && umount "$root/$m"
  done
  rm -rf --one-file-system "$root"
fi
echo "fresh-ubuntu ($release, cuda=$cuda): rc=$rc"
exit $rc

#!/usr/bin/env bash
# The README's commands on a fresh minimal Debian or Ubuntu, as a new user
# there would run them: a chroot made with debootstrap (its base cached per
# release in $TMPDIR), the committed HEAD cloned into /root/gst-zerocopy,
# COMMAND run there as root.
#
#   tools/fresh-chroot.sh [--release NAME] [--cuda | --distro-cuda] [--keep] COMMAND
#
#   --release  Debian: bullseye (11), bookworm (12, the default), trixie (13);
#              Ubuntu: focal (20.04), jammy (22.04), noble (24.04)
#   --cuda     this machine's /usr/local/cuda is visible, read-only, as on a
#              machine where the user installed NVIDIA's toolkit
#   --distro-cuda
#              the distribution's own toolkit: the section it comes from
#              (Debian's non-free, Ubuntu's multiverse) is enabled and
#              `apt-get install nvidia-cuda-toolkit` runs before COMMAND
#              (nvcc in /usr/bin, the runtime in the multiarch library
#              directory); the chroot with the toolkit is cached too
#   --keep     leave the chroot in place and print its path
#
# Needs root, debootstrap and the network to the distribution's mirror
# (DEBIAN_MIRROR, UBUNTU_MIRROR). Ubuntu's first bootstrap runs without a
# signature check (a Debian host has no Ubuntu keyring); apt inside the
# chroot then checks with the keyring the bootstrap installed. For testing
# only: nothing from the chroot is kept but the cached bases.
set -u
release=bookworm; cuda=none; keep=0
while [ $# -gt 1 ]; do
  case $1 in
    --release|--suite) release=$2; shift 2 ;;
    --cuda) cuda=host; shift ;;
    --distro-cuda) cuda=distro; shift ;;
    --keep) keep=1; shift ;;
    *) break ;;
  esac
done
cmd=${1:?usage: fresh-chroot.sh [--release NAME] [--cuda | --distro-cuda] [--keep] COMMAND}
case $release in
  bullseye|bookworm|trixie)
    family=debian
    mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
    components=main; extra=contrib,non-free ;;
  focal|jammy|noble)
    family=ubuntu
    mirror=${UBUNTU_MIRROR:-http://archive.ubuntu.com/ubuntu}
    components=main,universe; extra=multiverse ;;
  *) echo "fresh-chroot: unknown release $release" >&2; exit 2 ;;
esac
src=$(git rev-parse --show-toplevel) || exit 2
tmp=${TMPDIR:-/tmp}
base=$tmp/fresh-base-$family-$release.tar
root=$tmp/fresh-root-$release-$$

write_sources() { # $1: root, $2: components (comma-separated)
  printf 'deb %s %s %s\ndeb %s %s-updates %s\n' "$mirror" "$release" "${2//,/ }" \
    "$mirror" "$release" "${2//,/ }" >"$1/etc/apt/sources.list"
}

mount_all() {
  for m in proc sys dev; do mount --bind /$m "$1/$m"; done
}
umount_all() {
  for m in usr/local/cuda dev sys proc; do
    mountpoint -q "$1/$m" && umount "$1/$m"
  done
}
in_chroot() { # $1: root, $2: command
  chroot "$1" /usr/bin/env -i HOME=/root TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -lc "$2"
}

if [ ! -f "$base" ]; then
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null ||
    { echo "fresh-chroot: no debootstrap" >&2; exit 2; }
  scripts=/usr/share/debootstrap/scripts
  opts=(--variant=minbase "--components=$components")
  if [ $family = ubuntu ]; then
    # Older debootstraps lack a script for newer releases; every Ubuntu
    # release since 7.10 bootstraps the same way.
    [ -e "$scripts/$release" ] || ln -s gutsy "$scripts/$release"
    opts+=(--no-check-gpg)
  fi
  debootstrap "${opts[@]}" "$release" "$root" "$mirror" >"$tmp/debootstrap-$release.log" 2>&1 ||
    { echo "fresh-chroot: debootstrap failed: $tmp/debootstrap-$release.log" >&2; exit 2; }
  write_sources "$root" "$components"
  tar -C "$root" -cf "$base" . && rm -rf --one-file-system "$root"
fi

if [ $cuda = distro ]; then
  # The toolkit is a few GiB of packages: install it once per release.
  tbase=$tmp/fresh-base-$family-$release-cuda.tar
  if [ ! -f "$tbase" ]; then
    mkdir -p "$root" && tar -C "$root" -xf "$base"
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
    write_sources "$root" "$components,$extra"
    mount_all "$root"
    # Debian's toolkit points libGL and libEGL at the NVIDIA driver's (the
    # glx alternative); a machine without the driver, as this one, takes
    # Mesa's, as tools/setup.sh tells a user to (Mesa's GL installed first,
    # so that its alternative exists).
    in_chroot "$root" 'export DEBIAN_FRONTEND=noninteractive;
      apt-get update -q &&
      apt-get install -y -q --no-install-recommends nvidia-cuda-toolkit libgl1 libegl1 &&
      if update-alternatives --list glx 2>/dev/null | grep -q mesa-diverted; then
        update-alternatives --set glx /usr/lib/mesa-diverted; fi &&
      apt-get clean' >"$tmp/toolkit-$release.log" 2>&1
    rc=$?
    umount_all "$root"
    if [ $rc != 0 ]; then
      rm -rf --one-file-system "$root"
      echo "fresh-chroot: installing nvidia-cuda-toolkit failed: $tmp/toolkit-$release.log" >&2
      exit 2
    fi
    tar -C "$root" -cf "$tbase" . && rm -rf --one-file-system "$root"
  fi
  base=$tbase
fi

mkdir -p "$root" && tar -C "$root" -xf "$base"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
git clone -q "$src" "$root/root/gst-zerocopy"
mount_all "$root"
if [ $cuda = host ]; then
  mkdir -p "$root/usr/local/cuda"
  mount --bind -o ro /usr/local/cuda "$root/usr/local/cuda"
fi
in_chroot "$root" "cd /root/gst-zerocopy && $cmd"
rc=$?
if [ $keep = 1 ]; then
  echo "fresh-chroot: chroot kept at $root (unmount proc, sys, dev and usr/local/cuda under it before removing it)"
else
  umount_all "$root"
  rm -rf --one-file-system "$root"
fi
echo "fresh-chroot ($release, cuda=$cuda): rc=$rc"
exit $rc

#!/bin/sh
# gst-zerocopy: runs a test program under xvfb-run where the machine has
# one, else as it is (the display test then skips itself: no X server).
# In a cross build meson names its exe_wrapper (qemu-user) in
# MESON_EXE_WRAPPER: the program runs through it, as meson would run it.
# SPDX-License-Identifier: LGPL-2.1-or-later
wrap=${MESON_EXE_WRAPPER:-}
if command -v xvfb-run >/dev/null 2>&1; then
  # shellcheck disable=SC2086 # the wrapper may be a command and its options
  exec xvfb-run -a -s "-screen 0 640x480x24" $wrap "$@"
fi
echo "with-xvfb.sh: no xvfb-run on this machine" >&2
# shellcheck disable=SC2086
exec $wrap "$@"

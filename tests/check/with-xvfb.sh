#!/bin/sh
# gst-zerocopy: runs a test program under xvfb-run where the machine has
# one, else as it is (the display test then skips itself: no X server).
# SPDX-License-Identifier: LGPL-2.1-or-later
if command -v xvfb-run >/dev/null 2>&1; then
  exec xvfb-run -a -s "-screen 0 640x480x24" "$@"
fi
echo "with-xvfb.sh: no xvfb-run on this machine" >&2
exec "$@"

#!/usr/bin/env bash
# Builds gst-zerocopy (tools/setup.sh) and runs the demo: videotestsrc frames
# go through zcupload ! zcfilter ! zcdownload; it prints the backend, frames
# per second and copies made, and writes one processed frame as a PNG.
#
#   ./tools/demo.sh [--width W] [--height H] [--frames N] [--output FILE.png]
set -euo pipefail

# shellcheck source=tools/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"   # leaves us in the repo root

demo=build/examples/zc-demo
if [[ ! -x "$demo" ]]; then
  echo "demo.sh: error: $demo was not built (is the 'examples' option disabled?" \
    "try: meson configure build -Dexamples=enabled)" >&2
  exit 1
fi

if [[ ! -e build/gst/libgstzerocopy.so ]]; then
  echo "demo.sh: error: the plugin build/gst/libgstzerocopy.so was not built" >&2
  exit 1
fi

echo "==> Running $demo $*"
GST_PLUGIN_PATH="$PWD/build/gst${GST_PLUGIN_PATH:+:$GST_PLUGIN_PATH}" exec "$demo" "$@"

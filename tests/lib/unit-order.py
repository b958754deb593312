#!/usr/bin/env python3
# gst-zerocopy: no unit of the library calls into a unit that calls back
# into it. The units come in the order of lib/gst/zerocopy/meson.build,
# and each may use only those before it; what a unit uses is read from the
# object files: the symbols it needs that another one defines.
# SPDX-License-Identifier: LGPL-2.1-or-later
import glob
import os
import shutil
import subprocess
import sys

# defined in the object itself; template instantiations are weak copies
# (W, V, u) that every object using them carries
STRONG = set("TDBRG")


def read_symbols(nm, obj):
    out = subprocess.run([nm, obj], check=True, stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == "U":
            needed.add(fields[1])
        elif len(fields) == 3 and fields[1] in STRONG:
            defined.add(fields[2])
    return defined, needed


def main():
    build_dir, units = sys.argv[1], sys.argv[2:]
    nm = shutil.which("nm")
    if not nm:
        print("skipped: no nm")
        return 77
    # the library's objects: <file>.p/ (meson 0.55 and later) or <id>@sha/
    objects = {}
    for obj in glob.glob(os.path.join(build_dir, "*", "*.cpp.o")):
        if "gstzerocopy" in os.path.basename(os.path.dirname(obj)):
            objects[os.path.basename(obj)[:-len(".cpp.o")]] = obj
    if not objects:
        print("skipped: no object files of the library under", build_dir)
        return 77
    if set(objects) != set(units):
        print("the unit list and the objects differ: listed only %s, "
              "built only %s" % (sorted(set(units) - set(objects)),
                                 sorted(set(objects) - set(units))))
        return 1

    defined, needed = {}, {}
    for unit, obj in objects.items():
        defined[unit], needed[unit] = read_symbols(nm, obj)
    owner = {}
    for unit, syms in defined.items():
        for s in syms:
            owner[s] = unit

    failed = False
    for i, unit in enumerate(units):
        uses = {}
        for s in needed[unit]:
            other = owner.get(s)
            if other and other != unit:
                uses.setdefault(other, []).append(s)
        print("%s -> %s" % (unit, ", ".join(
            u for u in units if u in uses) or "(none)"))
        for other in uses:
            if units.index(other) > i:
                failed = True
                print("  %s comes after %s and may not be used by it: %s"
                      % (other, unit, ", ".join(sorted(uses[other]))))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# gst-zerocopy: how the GPU work of one or more processes interleaved, from
# the files libzc-gputrace.so writes (bench/zc-gputrace.cpp).
#
#   gputrace.py [--skip-ms MS] TRACE.PID.csv [TRACE.PID.csv ...]
#
# Per process: kernels, copies and memsets, the GPU time they took, the
# busiest kernels, how long a kernel waited on the GPU between its
# submission and its start, and Unified Memory's events (bytes the driver
# moved each way, GPU fault groups, CPU faults, thrashing, remote maps).
#
# All processes together, on the GPU's execution engine (kernels and
# memsets; copies run on copy engines of their own): how long the GPU was
# busy over the span, how long two CUDA contexts' work ran at the same time
# (only under MPS, or within one process), and how often the GPU went from
# one context's kernel to another's, with the gap at such a change against
# the gap between two kernels of one context: what time-slicing between
# processes costs.
#
# --skip-ms leaves out the first and last MS milliseconds of the common span
# (start-up and teardown).
# SPDX-License-Identifier: LGPL-2.1-or-later
import argparse
import csv
import os
import statistics
import sys


def read(path):
    proc = os.path.basename(path).rsplit(".", 2)[-2] if path.endswith(".csv") else path
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append({
                "proc": proc,
                "kind": r["kind"],
                "start": int(r["start_ns"]),
                "end": int(r["end_ns"]),
                "queued": int(r["queued_ns"]),
                "submitted": int(r["submitted_ns"]),
                "context": "%s/%s" % (proc, r["context"]),
                "bytes": int(r["bytes"]),
                "name": r["name"],
            })
    return proc, rows


def union_ns(intervals):
    """Total length covered by the (start, end) intervals."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def concurrent_ns(intervals):
    """Time during which work of two or more different contexts ran:
    intervals are (start, end, context)."""
    events = []
    for s, e, c in intervals:
        events.append((s, 1, c))
        events.append((e, -1, c))
    events.sort(key=lambda x: (x[0], x[1]))
    active = {}
    total, last = 0, None
    for t, d, c in events:
        if last is not None and len(active) >= 2:
            total += t - last
        active[c] = active.get(c, 0) + d
        if active[c] == 0:
            del active[c]
        last = t
    return total


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def pct(xs, q):
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def on_engine(r):
    return r["kind"] == "kernel" or r["kind"] == "memset"


def summary(files, skip_ms):
    procs = [read(p) for p in files]
    rows = [r for _, rs in procs for r in rs]
    timed = [r for r in rows if not r["kind"].startswith("um-")]
    if not timed:
        return "no kernels or copies in %s\n" % ", ".join(files)
    t0 = min(r["start"] for r in timed) + int(skip_ms * 1e6)
    t1 = max(r["end"] for r in timed) - int(skip_ms * 1e6)
    if t1 <= t0:
        return "--skip-ms %g leaves nothing of a %.1f ms span\n" % (
            skip_ms, (t1 - t0) / 1e6 + 2 * skip_ms)
    inside = [r for r in rows if t0 <= r["start"] and r["start"] < t1]
    span = t1 - t0
    out = ["span %.1f ms%s" % (span / 1e6, ", %g ms left out at each end" % skip_ms
                               if skip_ms else "")]

    for proc, _ in procs:
        mine = [r for r in inside if r["proc"] == proc]
        kern = [r for r in mine if r["kind"] == "kernel"]
        copies = [r for r in mine if r["kind"].startswith("memcpy")]
        busy = union_ns([(r["start"], r["end"]) for r in mine if on_engine(r)])
        out.append("process %s: %d kernels, %d copies (%.1f MB), contexts %s; "
                   "kernels and memsets busy %.1f%% of the span" % (
                       proc, len(kern), len(copies),
                       sum(r["bytes"] for r in copies) / 1e6,
                       " ".join(sorted({r["context"] for r in kern + copies})),
                       100.0 * busy / span))
        waits = [(r["start"] - r["submitted"]) / 1e3 for r in kern if r["submitted"]]
        if waits:
            out.append("  submitted to start: median %.1f us, p90 %.1f, p99 %.1f"
                       % (median(waits), pct(waits, 0.9), pct(waits, 0.99)))
        # by context too: whose context a library's kernels ran in (another
        # context current on the launching thread takes the runtime's calls)
        by_name = {}
        for r in kern:
            by_name.setdefault((r["context"], r["name"]), []).append(
                (r["end"] - r["start"]) / 1e3)
        for (ctx, name), d in sorted(by_name.items(),
                                     key=lambda kv: -sum(kv[1]))[:8]:
            out.append("  %6d x %-40.40s in %-8s median %8.1f us, total %8.1f ms"
                       % (len(d), name, ctx, median(d), sum(d) / 1e3))
        um = {}
        for r in mine:
            if r["kind"].startswith("um-"):
                n, v = um.get(r["kind"], (0, 0))
                um[r["kind"]] = (n + 1, v + r["bytes"])
        for k in sorted(um):
            n, v = um[k]
            what = "%.1f MB" % (v / 1e6) if k.startswith("um-bytes") else "value %d" % v
            out.append("  unified memory %s: %d events, %s" % (k[3:], n, what))

    # all processes on the execution engine
    eng = sorted((r for r in inside if on_engine(r)), key=lambda r: r["start"])
    busy = union_ns([(r["start"], r["end"]) for r in eng])
    both = concurrent_ns([(r["start"], r["end"], r["context"]) for r in eng])
    out.append("all: kernels and memsets busy %.1f%% of the span, two or more "
               "contexts at once %.1f%%" % (100.0 * busy / span, 100.0 * both / span))
    changes, gap_change, gap_same = 0, [], []
    for a, b in zip(eng, eng[1:]):
        gap = (b["start"] - a["end"]) / 1e3
        if a["context"] != b["context"]:
            changes += 1
            gap_change.append(gap)
        else:
            gap_same.append(gap)
    if len({r["context"] for r in eng}) > 1:
        out.append("  context changes: %d (%.0f a second); gap at a change "
                   "median %.1f us (p90 %.1f), within a context median %.1f us "
                   "(p90 %.1f)" % (changes, changes / (span / 1e9),
                                   median(gap_change), pct(gap_change, 0.9),
                                   median(gap_same), pct(gap_same, 0.9)))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(
        description="how the GPU work of processes traced by libzc-gputrace.so interleaved")
    ap.add_argument("--skip-ms", type=float, default=0.0)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    missing = [f for f in args.files if not os.path.isfile(f)]
    if missing:
        sys.exit("gputrace.py: no trace file %s (was the process run with "
                 "CUDA_INJECTION64_PATH set to libzc-gputrace.so, on a GPU?)"
                 % missing[0])
    sys.stdout.write(summary(args.files, args.skip_ms))


if __name__ == "__main__":
    main()

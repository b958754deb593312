#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Draws zc-bench's JSON as a PNG: one panel per case, a bar per pipeline
and frame (median ms/frame, whiskers min-max), the CPU time per frame as a
thin bar under it. Rows that did not run are listed as n/a.

    python3 bench/chart.py bench.json bench.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display on the benchmark hosts
import matplotlib.pyplot as plt  # noqa: E402


def colour(label):
    if label.startswith("zc"):
        return "tab:green"
    if label.startswith("cuda"):
        return "tab:purple"
    return "tab:blue"


def main(src, dst):
    with open(src) as f:
        data = json.load(f)
    cases = []
    for row in data["rows"]:
        if row["case"] not in cases:
            cases.append(row["case"])
    heights = [max(1, len([r for r in data["rows"] if r["case"] == c]))
               for c in cases]
    fig, axes = plt.subplots(len(cases), 1, squeeze=False,
                             figsize=(11, 1.2 + 0.32 * sum(heights)),
                             gridspec_kw={"height_ratios": heights})
    for ax, case in zip(axes[:, 0], cases):
        rows = [r for r in data["rows"] if r["case"] == case]
        labels, ms, lo, hi, cpu, cols = [], [], [], [], [], []
        for r in rows:
            frame = r["frame"]
            if r.get("out_frame", frame) != frame:
                frame += " > " + r["out_frame"]
            name = "%s  %s" % (frame, r["label"])
            if r["backend"]:
                name += " [%s %s]" % (r["backend"], r["memory_type"])
            if r["status"].startswith("error: "):
                name += "  FAILED: " + r["status"][7:48]
            elif r["status"] != "ok":
                name += "  " + r["status"][:48]
            labels.append(name)
            ok = r["status"] == "ok"
            m = r["ms_per_frame"] if ok else 0.0
            ms.append(m)
            lo.append(m - r["ms_min"] if ok else 0.0)
            hi.append(r["ms_max"] - m if ok else 0.0)
            cpu.append(r["cpu_s_per_frame"] * 1e3 if ok else 0.0)
            cols.append(colour(r["label"]))
        y = list(range(len(rows)))
        ax.barh(y, ms, xerr=[lo, hi], color=cols, height=0.6,
                error_kw={"elinewidth": 1, "capsize": 2})
        ax.barh([v + 0.3 for v in y], cpu, color="grey", height=0.12)
        for v, m in zip(y, ms):
            if m > 0:
                ax.text(m, v, "  %.3f ms (%.0f fps)" % (m, 1000.0 / m),
                        va="center", fontsize=7)
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_title(case, fontsize=9, loc="left")
        ax.set_xlim(0, max(ms + cpu + [1e-3]) * 1.35)
    axes[-1, 0].set_xlabel("ms per frame, median (whiskers: min-max); "
                           "grey: CPU ms per frame")
    gpu = data.get("gpu") or "no GPU"
    fig.suptitle("zc-bench: %s, %d CPU cores, %s"
                 % (gpu, data["cpu_cores"], data["gstreamer"]), fontsize=10)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: chart.py BENCH.json OUT.png")
    sys.exit(main(sys.argv[1], sys.argv[2]))

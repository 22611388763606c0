#!/usr/bin/env python3
"""The A/B of scripts/device/h200_session.sh (its `ab` step): the same binaries from two builds,
alternating, side by side.

    tools/ab_summary.py DIR

DIR holds r<round>_<base|new>_<n>.csv files (the chapters' CSV schema). For each kernel, layout and
size it prints the median time of each run of each side, the new side's speed relative to the base
(base median / new median, over the runs' medians), and each side's % of its own cuBLAS row in the
same run (the spread of the baseline shows in it). A kernel row is matched by name across the sides,
except that `--rename OLD=NEW` pairs a base kernel with a new one of another name.
"""
import argparse
import csv
import glob
import os
import re
import statistics
from collections import defaultdict


def read(dirname):
    runs = defaultdict(lambda: defaultdict(list))  # (side) -> key -> [(median_ms, pct)]
    for path in sorted(glob.glob(os.path.join(dirname, "r*_*_*.csv"))):
        m = re.match(r"r(\d+)_(base|new)_(\d+)\.csv", os.path.basename(path))
        if not m:
            continue
        side = m.group(2)
        with open(path) as f:
            for row in csv.DictReader(f):
                if not row.get("median_ms"):
                    continue
                key = (row["kernel"], row["dtype"], row["layout"], f'{row["M"]}x{row["N"]}x{row["K"]}')
                pct = float(row["pct_of_cublas"]) if row.get("pct_of_cublas") else float("nan")
                runs[side][key].append((float(row["median_ms"]), pct))
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--rename", action="append", default=[], help="OLD=NEW: a base kernel's name on the new side")
    args = ap.parse_args()
    renames = dict(r.split("=", 1) for r in args.rename)
    runs = read(args.dir)
    base = {(renames.get(k[0], k[0]),) + k[1:]: v for k, v in runs["base"].items()}
    new = runs["new"]
    print(f"{'kernel':28} {'dtype':10} {'layout':6} {'size':18} {'base ms':>22} {'new ms':>22} {'new/base':>8} "
          f"{'%cuBLAS base':>14} {'%cuBLAS new':>14}")
    ratios = []
    for key in sorted(set(base) | set(new)):
        b, n = base.get(key, []), new.get(key, [])
        fmt = lambda xs: " ".join(f"{x[0]:.4f}" for x in xs) or "-"
        pct = lambda xs: " ".join(f"{x[1]:.1f}" for x in xs) or "-"
        ratio = ""
        if b and n and not key[0].startswith("cuBLAS"):
            r = statistics.median(x[0] for x in b) / statistics.median(x[0] for x in n)
            ratios.append(r)
            ratio = f"{r:.3f}"
        print(f"{key[0]:28} {key[1]:10} {key[2]:6} {key[3]:18} {fmt(b):>22} {fmt(n):>22} {ratio:>8} {pct(b):>14} {pct(n):>14}")
    if ratios:
        print(f"new/base speed over {len(ratios)} kernel rows: geometric mean "
              f"{statistics.geometric_mean(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}")


if __name__ == "__main__":
    main()

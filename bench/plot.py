#!/usr/bin/env python3
"""plot.py — throughput vs n from one or more gpuprim_bench --json files.

    python3 bench/plot.py [--all] [-o OUT.png] RUN.json [RUN2.json ...]
    python3 bench/plot.py --json RUN.json --json RUN2.json -o compare.png

One panel per (op, type): stats, trap_sample, trap_fn:x2, trap_fn:sin, sort (with the
sort_pairs reference in it); the ceiling rows become a horizontal line on the GB/s panels. x is n
(log2 axis), y the row's throughput (GB/s of input for reductions, Gpts/s for the
trapezoid of a function, Gkeys/s for sorts). Our implementations are drawn thick and solid,
CUB / Thrust thin and dashed; --all adds the seed baselines (dotted) and CPU qsort
(markers). Several files are told apart by line style and the legend prefix (device name
and date of each run). Only timed rows that passed validation are drawn.
Exit: 0 written, 1 no plottable rows, 2 bad arguments or unreadable JSON.
"""
import argparse
import json
import math
import os
import sys

ORDER = ["stats", "trap_sample", "trap_fn:x2", "trap_fn:sin", "sort", "sort_pairs"]
STYLES = ["-", "--", ":", "-."]
MARKERS = ["o", "s", "^", "D", "v", "P"]


def load(path):
    """Returns the parsed JSON of one run, or raises ValueError with a readable reason."""
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: {e}") from e
    if not isinstance(d, dict) or not isinstance(d.get("rows"), list):
        raise ValueError(f"{path}: not a gpuprim_bench JSON file (no 'rows' list)")
    return d


def run_label(d, path, several):
    """Legend prefix of one run: device name and date (plus the file name if needed)."""
    dev = (d.get("device") or {}).get("name") or "?"
    date = (d.get("date") or "")[:10]
    lab = f"{dev} {date}".strip()
    return f"{lab} [{os.path.basename(path)}]" if several else lab


def plottable(row, show_all):
    """True for a timed, valid row of an op we plot (ours and references; seeds with --all)."""
    if row.get("op") not in ORDER or not row.get("timed") or not row.get("valid"):
        return False
    t, n = row.get("throughput"), row.get("n")
    if not isinstance(t, (int, float)) or not isinstance(n, int) or t <= 0 or n <= 0:
        return False
    kind = row.get("kind")
    return kind in ("ours", "reference") or (show_all and kind in ("seed", "cpu"))


def main(argv=None):
    """Parses arguments, reads the runs, draws the panels and writes the PNG."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="gpuprim_bench --json outputs")
    ap.add_argument("--json", action="append", default=[], metavar="FILE",
                    help="a gpuprim_bench --json output (repeatable)")
    ap.add_argument("-o", "--out", default="gpuprim_bench.png", help="PNG to write")
    ap.add_argument("--all", action="store_true", help="also the seed baselines and CPU qsort")
    args = ap.parse_args(argv)
    paths = args.json + args.files
    if not paths:
        ap.error("give at least one JSON file")

    runs = []
    for p in paths:
        try:
            runs.append((p, load(p)))
        except ValueError as e:
            print(f"plot.py: {e}", file=sys.stderr)
            return 2

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: matplotlib is not installed (Debian/Ubuntu: apt-get install "
              "python3-matplotlib; or pip install matplotlib)", file=sys.stderr)
        return 2

    several = len(runs) > 1
    # series[(op, type)][(run index, impl)] = sorted [(n, throughput)]
    series, units, kinds = {}, {}, {}
    for ri, (p, d) in enumerate(runs):
        for r in d["rows"]:
            if not plottable(r, args.all):
                continue
            op = "sort" if r["op"] == "sort_pairs" else r["op"]  # SortPairs beside the sorts
            # trap_fn: one panel per integrand (the f32 seed row beside the f64 ones)
            key = (op, "" if op.startswith("trap_fn:") else r["type"])
            series.setdefault(key, {}).setdefault((ri, r["impl"]), []).append(
                (r["n"], float(r["throughput"])))
            units[key] = r.get("unit", "")
            kinds[r["impl"]] = r.get("kind")
    if not series:
        print("plot.py: no timed, valid rows to plot", file=sys.stderr)
        return 1

    keys = sorted(series, key=lambda k: (ORDER.index(k[0]), k[1]))
    ncols = 3
    nrows = math.ceil(len(keys) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.2 * ncols, 4.3 * nrows), squeeze=False)
    impls = sorted(kinds, key=lambda s: (kinds[s] != "ours", s))
    cmap = plt.get_cmap("tab20")
    colour = {impl: cmap(i % 20) for i, impl in enumerate(impls)}

    for ax, key in zip(axes.flat, keys):
        for (ri, impl), pts in sorted(series[key].items(), key=lambda kv: (kinds[kv[0][1]] != "ours", kv[0])):
            pts.sort()
            xs = [n for n, _ in pts]
            ys = [t for _, t in pts]
            kind = kinds[impl]
            ours = kind == "ours"
            style = STYLES[ri % len(STYLES)] if several else ("-" if ours else "--" if kind == "reference" else ":")
            label = f"{run_label(runs[ri][1], runs[ri][0], several)}: {impl}" if several else impl
            ax.plot(xs, ys, linestyle=style if kind != "cpu" else "none",
                    marker=MARKERS[ri % len(MARKERS)], markersize=4,
                    linewidth=2.6 if ours else 1.2, color=colour[impl], label=label)
        if units.get(key) == "GB/s":
            for ri, (p, d) in enumerate(runs):
                c = (d.get("ceilings") or {}).get("read_kernel_gbps")
                if isinstance(c, (int, float)) and c > 0:
                    ax.axhline(c, color="grey", linewidth=0.8, linestyle=STYLES[ri % len(STYLES)],
                               label=("read ceiling" + (f" ({run_label(d, p, True)})" if several else "")))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel(units.get(key, ""))
        ax.set_title(f"{key[0]}  {key[1]}".strip())
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6.5, loc="best")
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")

    title = "gpuprim_bench: throughput vs n (ours thick)"
    if not several:
        d = runs[0][1]
        title += f" — {run_label(d, runs[0][0], False)}, commit {str(d.get('git_commit', '?'))[:12]}"
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    try:
        fig.savefig(args.out, dpi=110)
    except OSError as e:
        print(f"plot.py: cannot write {args.out}: {e}", file=sys.stderr)
        return 2
    print(f"wrote {args.out} ({len(keys)} panels from {len(runs)} run(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""phases.py — whole jobs of gpuprim_mpi side by side on one generated file: for each named
variant (a set of options), REPS runs of `MPIRUN -np P gpuprim_mpi FILE OPTIONS --json R -q`,
then one table of medians over the runs: the process's wall time (the launcher with its
ranks), the report's total, startup and teardown, and every phase row that is not zero.
A last column compares each variant's wall with the first variant's.

usage: phases.py --bin BUILD [--work DIR] [--np 4] [--n 2^30] [--dtype f32] [--reps 3]
                 [--mpirun "mpirun --bind-to none"] [--json OUT.json] NAME=OPTIONS...

OPTIONS may name {out}, a file in DIR that is removed after each run. Example (issues 27 and
28's whole-job rows on the H200):
  python3 bench/phases.py --bin build_dev --work /tmp/ph --np 4 --n 2^30 \\
      sort='--out {out}' quantiles='--out {out} --quantiles 0.25,0.5,0.75' \\
      distinct='--out {out} --distinct' cumsum='--no-sort --cumsum --out {out}'
The driver needs only the standard library.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

ROWS = ("read", "upload", "reduce", "integrate", "scan", "local_sort", "rank_exchange",
        "verify", "distribution", "write")


def count(s):
    """'2^30', '1<<20' or a plain integer."""
    s = s.strip()
    if '^' in s:
        b, e = s.split('^')
        return int(b) ** int(e)
    return int(s)


def run_once(a, opts, rep_path, out_path):
    """One job; returns (wall seconds, report dict). Exits on a failed run."""
    cmd = shlex.split(a.mpirun) + ["-np", str(a.np), os.path.join(a.bin, "gpuprim_mpi"),
                                   a.input] + [o.replace("{out}", out_path) for o in opts] + \
        ["--json", rep_path, "-q", "--force"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t0
    print("run: %s: exit %d, wall %.3f s" % (" ".join(cmd), p.returncode, wall), flush=True)
    if p.returncode != 0:
        sys.exit("phases.py: the run failed:\n" + p.stdout[-2000:])
    with open(rep_path) as f:
        rep = json.load(f)
    if os.path.exists(out_path):
        os.remove(out_path)
    return wall, rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", default="/tmp/gpuprim_phases")
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--n", type=count, default=2 ** 30)
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mpirun", default="mpirun --bind-to none" +
                    (" --allow-run-as-root" if os.geteuid() == 0 else ""))
    ap.add_argument("--json")
    ap.add_argument("variants", nargs="+", help="NAME=OPTIONS")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    a.input = os.path.join(a.work, "in_%s_%d.h5" % (a.dtype, a.n))
    if not os.path.exists(a.input):
        subprocess.run(shlex.split(a.mpirun) + ["-np", str(a.np),
                       os.path.join(a.bin, "gpuprim_gen"), a.input, "--n", str(a.n),
                       "--dtype", a.dtype, "--seed", "30"], check=True)
    rows = []
    for v in a.variants:
        name, _, opts = v.partition("=")
        walls, reps = [], []
        for i in range(a.reps):
            w, r = run_once(a, shlex.split(opts), os.path.join(a.work, "%s_%d.json" % (name, i)),
                            os.path.join(a.work, "out.h5"))
            walls.append(w)
            reps.append(r["times_ms"])
        med = {k: statistics.median(t.get(k, 0.0) for t in reps) for k in reps[0]}
        rows.append(dict(name=name, options=opts, wall_s=statistics.median(walls), walls=walls,
                         times_ms=med))
    cols = ["total", "startup", "teardown"] + [k for k in ROWS
                                               if any(r["times_ms"].get(k, 0) > 0 for r in rows)]
    print("\n%d runs each, np %d, n %d %s, medians (ms; wall in s)" % (a.reps, a.np, a.n, a.dtype))
    print("%-12s %8s %9s" % ("variant", "wall", "x first") +
          "".join(" %10s" % c[:10] for c in cols))
    for r in rows:
        print("%-12s %8.3f %9.3f" % (r["name"], r["wall_s"], r["wall_s"] / rows[0]["wall_s"]) +
              "".join(" %10.1f" % r["times_ms"].get(c, 0.0) for c in cols))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(np=a.np, n=a.n, dtype=a.dtype, reps=a.reps, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()

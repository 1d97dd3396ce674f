#!/usr/bin/env python3
"""Determinism: the same input gives the same bits in every result on every run, and the
sorted output is the same bytes whatever the rank count.

usage: e2e_determinism.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR --backend cpu|cuda
                          [--nps 1,2,3,4,5] [--repeats 3]

Input: one h5py-written file, n = 100003 (odd) elements in each of
  f32  normal * 1e3 rounded to 1/8 (many ties), NaNs with several payloads, +-inf, -0.0, +0.0
  f64  +-10^u, u uniform in [-20, 20] (sums depend on the order of the additions), -0.0
  i64  uniform in [-2^62, 2^62) with repeated values (float64 sums round)
  x    float64 coordinates, increasing with random steps (for --x)
For each dataset, each rank count P in --nps and each of --repeats runs:
  A: gpuprim_mpi FILE --dataset D --x x --out A.h5 --argsort --json A.json   (default sort)
  B: gpuprim_mpi FILE --dataset D --out B.h5 --stable --argsort --reproducible --json B.json
Checks (numbers compared as exact bits, float.hex, and -0 kept apart from 0):
  - every result in the JSON is identical over the repeats of one P, in A and in B
    (all fields but the options, binding table, output name and times);
  - count, NaN count, min, max and the sort verdict are identical for every P;
  - B (--reproducible): sum, mean, L2 norm and the uniform-dx integral are identical for
    every P;
  - the sorted dataset of the output is byte-identical for every P and run, in A and in B
    (and A's equals B's: both ascending), and equals numpy's sort (NaN last, canonical);
  - A's argsort (unstable sort) is identical over the repeats of one P; B's (--stable) is
    identical for every P and equals numpy's stable order.
What is not promised, and only printed: A's float64 sum, mean, L2 norm and integrals across
rank counts (the rank-order combination of per-rank sums rounds differently for each P).
Exit 0 when all pass, 1 on a failure, 77 when --backend cuda finds no GPU.
"""
import hashlib
import json
import os
import sys
import time

import h5py
import numpy as np

np.seterr(all="ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import keys  # noqa: E402  (gpuprim's order keys)
from e2e_common import arg_parser, check, cuda_missing, fresh_dir, summary, tally, test_seed  # noqa: E402
from e2e_common import run_gpuprim as run  # noqa: E402  (gpuprim_mpi under mpirun: run(args, P, options))

N = 100003
# JSON fields that are not results: they name this run's files or time it
NOT_RESULTS = {"options", "binding", "out", "times_ms", "exchange_step_times"}
ORDER_FREE = ["count", "nan_count", "min", "max", "sorted", "sorted_verified",
              "sorted_descents", "dtype", "stored_type"]
REPRO = ["sum", "mean", "l2_norm", "integral"]


def load_json(path):
    """The report with every number as its exact text class: floats as float.hex, integers
    as their digits ("-0" stays apart from "0")."""
    with open(path) as f:
        return json.load(f, parse_float=lambda s: float(s).hex(), parse_int=lambda s: s)


def results(r):
    """The comparable part of a report."""
    out = {k: v for k, v in r.items() if k not in NOT_RESULTS}
    out["exchange_step_bytes"] = [s.get("bytes") for s in r.get("exchange_step_times", [])]
    return out


def diff_keys(a, b):
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def make_file(path, rng):
    f32 = np.round(rng.standard_normal(N) * 1e3 * 8) / 8
    f32 = f32.astype(np.float32)
    idx = rng.choice(N, 400, replace=False)
    bits = f32.view(np.uint32)
    bits[idx[:40]] = 0x7FC00000           # numpy's NaN
    bits[idx[40:60]] = 0xFFC00001         # negative NaN with a payload
    bits[idx[60:80]] = 0x7F800123         # signalling NaN payload
    f32[idx[80:100]] = np.inf
    f32[idx[100:120]] = -np.inf
    f32[idx[120:260]] = -0.0
    f32[idx[260:400]] = 0.0
    f64 = np.sign(rng.standard_normal(N)) * 10.0 ** rng.uniform(-20, 20, N)
    f64[rng.choice(N, 300, replace=False)] = -0.0
    i64 = rng.integers(-2**62, 2**62, N, dtype=np.int64)
    i64[rng.choice(N, 5000, replace=False)] = i64[:5000]  # ties
    x = np.cumsum(rng.uniform(0.0, 2.0, N))
    with h5py.File(path, "w") as f:
        f["f32"] = f32
        f["f64"] = f64
        f["i64"] = i64
        f["x"] = x
    return {"f32": f32, "f64": f64, "i64": i64}


def canonical_sorted(a, order):
    """a in `order`, NaNs as numpy's NaN bits (gpuprim writes every NaN so)."""
    s = a[order].copy()
    if s.dtype.kind == "f":
        s[np.isnan(s)] = np.nan
    return s


def sha(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


def main():
    ap = arg_parser(nps="1,2,3,4,5")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    nps = args.nps
    fresh_dir(args.work)
    seed = test_seed()
    print(f"e2e_determinism: nps={nps} repeats={args.repeats} backend={args.backend} "
          f"io={args.io or 'default'} seed={seed}", flush=True)
    if cuda_missing(args):
        return 77
    rng = np.random.default_rng(seed)
    path = os.path.join(args.work, "in.h5")
    data = make_file(path, rng)
    configs = {
        "A": ["--x", "x", "--argsort"],
        "B": ["--stable", "--argsort", "--reproducible"],
    }
    t0 = time.time()
    for ds, a in data.items():
        # res[cfg][P] = [results per repeat]; vals/args: [(P, rep, sha)]
        res = {c: {P: [] for P in nps} for c in configs}
        vals = {c: [] for c in configs}
        idxs = {c: [] for c in configs}
        files = {c: set() for c in configs}  # whole output files (printed, not promised)
        ref_vals = canonical_sorted(a, np.argsort(keys(a), kind="stable"))
        stable_order = np.lexsort((np.arange(N), keys(a)))
        for cfg, opts in configs.items():
            for P in nps:
                for rep in range(args.repeats):
                    tag = f"{ds} {cfg} P={P} run {rep + 1}"
                    rj = os.path.join(args.work, f"{ds}_{cfg}_{P}_{rep}.json")
                    out = os.path.join(args.work, f"{ds}_{cfg}_{P}_{rep}.h5")
                    p = run(args, P, [path, "--dataset", ds, "--backend", args.backend, "--quiet",
                                      "--json", rj, "--out", out, "--force"] + opts)
                    check(p.returncode == 0, f"{tag}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
                    if p.returncode:
                        continue
                    res[cfg][P].append(results(load_json(rj)))
                    with h5py.File(out, "r") as f:
                        v = f[ds][()]
                        i = f[ds + "_argsort"][()]
                    with open(out, "rb") as f:
                        files[cfg].add(hashlib.sha256(f.read()).hexdigest())
                    os.remove(out)
                    check(v.dtype == a.dtype, f"{tag}: stored type {v.dtype}, want {a.dtype}")
                    vals[cfg].append((P, rep, sha(v)))
                    idxs[cfg].append((P, rep, sha(i)))
                    if P == nps[0] and rep == 0:  # sanity, once per config: numpy's order
                        check(sha(v) == sha(ref_vals), f"{tag}: sorted values differ from numpy's sort")
                        if cfg == "B":
                            check(np.array_equal(i, stable_order),
                                  f"{tag}: --stable argsort differs from numpy's stable order")

            # every result identical over the repeats of one P
            for P in nps:
                runs = res[cfg][P]
                for k in range(1, len(runs)):
                    d = diff_keys(runs[0], runs[k])
                    check(not d, f"{ds} {cfg} P={P}: run {k + 1} differs from run 1 in {d}: "
                          + ", ".join(f"{x}: {runs[0].get(x)} vs {runs[k].get(x)}" for x in d[:4]))
            firsts = {P: res[cfg][P][0] for P in nps if res[cfg][P]}
            base_P = next(iter(firsts), None)
            fields = ORDER_FREE + (REPRO if cfg == "B" else [])
            for P, r in firsts.items():
                d = [x for x in fields if r.get(x) != firsts[base_P].get(x)]
                check(not d, f"{ds} {cfg}: P={P} differs from P={base_P} in {d}: "
                      + ", ".join(f"{x}: {firsts[base_P].get(x)} vs {r.get(x)}" for x in d))
            if cfg == "A":
                moved = [x for x in REPRO if len({r.get(x) for r in firsts.values()}) > 1]
                print(f"{ds} A (no --reproducible): {', '.join(moved) if moved else 'nothing'} "
                      f"differs between rank counts (not promised)", flush=True)
            # the sorted values: one byte string for every P and run
            hv = {h for _, _, h in vals[cfg]}
            check(len(hv) == 1, f"{ds} {cfg}: sorted values differ between runs or rank counts: "
                  + ", ".join(f"P={P} run {r + 1}: {h}" for P, r, h in vals[cfg]))
            # argsort: per P over the repeats (A), for every P (B)
            for P in nps:
                hi = {h for q, _, h in idxs[cfg] if q == P}
                check(len(hi) <= 1, f"{ds} {cfg} P={P}: argsort differs between repeats")
            if cfg == "B":
                print(f"{ds} B: the whole output files are "
                      f"{'byte-identical' if len(files[cfg]) == 1 else 'not byte-identical'} "
                      f"for every rank count (not promised)", flush=True)
                hi = {h for _, _, h in idxs[cfg]}
                check(len(hi) == 1, f"{ds} B: --stable argsort differs between rank counts: "
                      + ", ".join(f"P={P} run {r + 1}: {h}" for P, r, h in idxs[cfg]))
        check({h for _, _, h in vals["A"]} == {h for _, _, h in vals["B"]},
              f"{ds}: sorted values of the default and the --stable sort differ")
        print(f"{ds}: done, {time.time() - t0:.1f} s so far; {tally()}", flush=True)
    return summary(f", {time.time() - t0:.1f} s")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""End-to-end tests of the out-of-core sort: a sort whose shard does not fit in device memory
runs from host memory (device-sized runs, merged, exchanged and written from the host).

usage: e2e_ooc.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR --nps 1,2,3,4,5 --backend B

GPUPRIM_DEVICE_MEM_LIMIT (a test knob of the backends' mem_info) makes each rank's device
several times too small; GPUPRIM_HOST_MEM_LIMIT does the same for the host. On an
h5py-written file of N = 60013 elements (odd: the shards differ) of every element type (ties,
NaN, -0.0, +0.0, +-inf, the types' extremes), for every rank count in --nps:

- options: each type with a set of --descending, --stable, --argsort, --payload in device
  memory and out of core (the device 4x too small): the same bytes (sorted values; the
  argsort and the payload with --stable, and on the CPU backend always), both equal to
  numpy's order under gpuprim's conventions; the statistics the same (count, NaN count, min,
  max exactly; sum, mean and L2 norm bitwise on the CPU backend, to 1e-12 on CUDA); the
  --verbose plan of every rank (runs, run size) as the documented rule gives it; the JSON's
  sort_runs;
- the limits at which one run (a device that holds the shard but not the exchange's receive
  buffer), two runs with a run of one element (a shard of 4097 elements in runs of 4096),
  and many runs arise;
- out of core and in device memory mixed in one job: rank 0 without a limit (its shard fits
  the device whole: one run), the others with a tiny one (per-rank environments through
  mpirun's MPMD form);
- host memory short too (GPUPRIM_HOST_MEM_LIMIT): exit 7 and one line naming each tier's
  need and free memory, no output; a malformed GPUPRIM_HOST_MEM_LIMIT: exit 7, one line;
- the staging ring (GPUPRIM_READ_PIECE_BYTES=1000: 1000-byte pieces, the staging thread's
  copies through host pieces also on the CPU backend): the same bytes;
- --x and --reproducible out of core: the integral and the exact sums as in device memory;
- --cumsum and --cumulative-integral out of core (every integer type, float32 / float64 with
  NaN and infinities, --x, --dx, unequal shards): the same bytes as in device memory (integers,
  and floats on the CPU backend), else within twice the documented bound; an integer prefix
  that leaves its type: the same exit 4 and line;
- faults: a rank failing or killed in the run phase (runs), in the merge (merge) and in an
  out-of-core exchange step (xstep): the job ends within a minute, no output left.
Exit 0 when all pass, 77 when --backend cuda finds no GPU.
"""
import json
import math
import os
import re
import subprocess
import sys
import time

import h5py
import numpy as np

np.seterr(all="ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import jnum  # noqa: E402
from e2e_common import arg_parser, check, cuda_missing, fresh_dir, prog, run_gpuprim, summary, test_seed  # noqa: E402
from e2e_features import ref_order, same_values  # noqa: E402  (numpy's order under gpuprim's conventions)

N = 60013
TYPES = [("f32", np.float32), ("f64", np.float64), ("i32", np.int32), ("i64", np.int64),
         ("u32", np.uint32), ("u64", np.uint64)]
OPTS = [[], ["--descending"], ["--stable", "--argsort"],
        ["--descending", "--stable", "--argsort", "--payload", "pay"], ["--argsort"],
        ["--payload", "pay", "--stable"]]
RUN_MIN = 4096
PLAN_RE = re.compile(r"gpuprim_mpi: rank (\d+): plan: out of core: (\d+) runs? of (\d+) elements")
SHARE_RE = re.compile(r"gpuprim_mpi: rank (\d+): plan: in device memory: .* shared by (\d+) ranks?\)")
SHORT_RE = re.compile(r"^gpuprim_mpi: error: (.+):(/\S+): sorting (\d+) elements on rank (\d+) needs "
                      r"(\S+) GiB of device memory, (\S+) GiB free; out of core (\S+) GiB of host memory, "
                      r"(\S+) GiB free \((\d+) MiB of it pinned\), and (\S+) GiB of device memory \(use "
                      r"more GPUs or nodes: the ranks of a device or a node share its memory\)$")
KNOBS = ("GPUPRIM_DEVICE_MEM_LIMIT", "GPUPRIM_HOST_MEM_LIMIT", "GPUPRIM_FAULT",
         "GPUPRIM_READ_PIECE_BYTES", "GPUPRIM_HOST_THREADS")


# ---- the input and the reference ----------------------------------------------------------

def make_file(args, rng):
    path = os.path.join(args.work, "ooc.h5")
    with h5py.File(path, "w") as f:
        for name, dt in TYPES:
            if np.dtype(dt).kind == "f":
                a = np.round(rng.standard_normal(N) * 50, 1).astype(dt)  # many ties
                a[rng.choice(N, 97, replace=False)] = np.nan
                a[rng.choice(N, 41, replace=False)] = -0.0
                a[rng.choice(N, 43, replace=False)] = 0.0
                a[rng.choice(N, 5, replace=False)] = np.inf
                a[rng.choice(N, 5, replace=False)] = -np.inf
            else:
                info = np.iinfo(dt)
                a = rng.integers(max(info.min, -3000), 3000, N).astype(dt)
                a[rng.choice(N, 7, replace=False)] = info.min
                a[rng.choice(N, 7, replace=False)] = info.max
            f[name] = a
        f["pay"] = rng.integers(-2**31, 2**31 - 1, N, dtype=np.int32)
        f["x"] = np.cumsum(rng.random(N) + 0.01)
        f["y"] = np.sin(f["x"][()] / 300.0) * 5.0 + 1.0  # no NaN: a finite integral
        for P in args.nps:  # rank 0 holds 4097 elements, the others 4096
            f[f"t{P}"] = rng.standard_normal(4097 * P - (P - 1)).astype(np.float32)
        # 64-bit integers whose prefix sums fit (i64 and u64 above hold the types' extremes)
        f["si64"] = rng.integers(-2**40, 2**40, N, dtype=np.int64)
        f["su64"] = rng.integers(0, 2**40, N, dtype=np.uint64)
    return path


def shard(n, P, r):
    q, rem = divmod(n, P)
    return q + 1 if r < rem else q


def reference(a, opts, pay):
    """The outputs gpuprim writes: values (NaN as numpy's NaN), the argsort and the payload with
    --stable (else None: equal keys' positions are the backend's)."""
    stable = "--stable" in opts
    order = ref_order(a, "--descending" in opts, True)
    vals = a[order].copy()
    if vals.dtype.kind == "f":
        vals[np.isnan(vals)] = np.nan
    return {"values": vals, "argsort": order.astype(np.int64) if stable else None,
            "payload": pay[order] if stable else None}


# ---- running --------------------------------------------------------------------------------

def env_with(**kw):
    env = {k: v for k, v in os.environ.items() if k not in KNOBS}
    env.update({k: str(v) for k, v in kw.items() if v is not None})
    return env


def sort_cmd(args, path, dset, opts, out, rj, verbose=True):
    return [path, "--dataset", dset, "--backend", args.backend, "--out", out, "--force",
            "--json", rj] + (["--verbose"] if verbose else ["--quiet"]) + opts


def outputs(out):
    with h5py.File(out, "r") as f:
        return {k: f[k][()] for k in f}


def plans(stderr):
    """Every rank's out-of-core plan from --verbose: {rank: (runs, run size)}."""
    return {int(r): (int(k), int(e)) for r, k, e in PLAN_RE.findall(stderr)}


def usable(limit, share):
    """The device memory a rank counts as usable under GPUPRIM_DEVICE_MEM_LIMIT (docs/limits.md)."""
    a = limit // share
    return a - min(a // 8, 512 << 20)


def limit_for(target, share):
    """The smallest limit whose usable memory is at least target bytes."""
    lim = share * (target * 8 // 7)
    while usable(lim, share) < target:
        lim += share
    return lim


def expect_plan(cnt, per, use):
    """(runs, run size) of a shard of cnt elements, per bytes per device element, use usable."""
    if cnt * per <= use:
        return 1, max(cnt, 1)
    r = 1
    while r * 2 <= use // (2 * per):
        r *= 2
    r = max(r, RUN_MIN)
    return -(-cnt // r), r


def shares(args, path, P):
    """Every rank's device sharing (from an in-memory --verbose plan line)."""
    rj = os.path.join(args.work, "share.json")
    p = run_gpuprim(args, P, sort_cmd(args, path, "f32", [], os.path.join(args.work, "share.h5"), rj),
                    env=env_with())
    got = {int(r): int(k) for r, k in SHARE_RE.findall(p.stderr)}
    check(p.returncode == 0 and sorted(got) == list(range(P)),
          f"P={P}: in-memory plan lines of every rank: {p.stderr[-400:]}")
    return [got.get(r, P) for r in range(P)]


def inmem_need(P, esize, pairs, m):
    return m * (esize + (8 if pairs else 0)) * (2 if P > 1 else 1)


# ---- the checks -----------------------------------------------------------------------------

def same_outputs(a, b, names):
    return all(k in a and k in b and a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes()
               for k in names)


def check_outputs(tag, got, ref, dset, opts, data):
    """got (the out-of-core run's datasets) against numpy's reference."""
    check(same_values(got[dset], ref["values"]), f"{tag}: sorted values differ from numpy's order")
    asd = dset + "_argsort"
    if "--argsort" in opts:
        a = got.get(asd)
        ok = a is not None and np.array_equal(np.sort(a), np.arange(data.size))
        check(ok and same_values(data[a], ref["values"]), f"{tag}: argsort is not a sorting permutation")
        if ref["argsort"] is not None:
            check(a is not None and np.array_equal(a, ref["argsort"]), f"{tag}: stable argsort differs")
    if "--payload" in opts and ref["payload"] is not None:
        check(np.array_equal(got.get("pay"), ref["payload"]), f"{tag}: payload differs")


def check_stats(args, tag, a, b):
    """JSON statistics of the in-memory run a and the out-of-core run b."""
    for k in ("count", "nan_count", "sorted_verified", "order", "stable"):
        check(a[k] == b[k], f"{tag}: {k} {a[k]!r} in memory, {b[k]!r} out of core")
    for k in ("min", "max"):
        check(json.dumps(a[k]) == json.dumps(b[k]), f"{tag}: {k} {a[k]!r} vs {b[k]!r}")
    for k in ("sum", "mean", "l2_norm"):
        # the same text (also a non-finite one: a string, or null in a version-2 report), or
        # on CUDA, where the runs' sums group their terms otherwise, within 1e-12
        ok = json.dumps(a[k]) == json.dumps(b[k])
        if not ok and args.backend != "cpu" and a[k] is not None and b[k] is not None:
            x, y = float(jnum(a[k])), float(jnum(b[k]))
            ok = (math.isnan(x) and math.isnan(y)) or x == y or abs(x - y) <= 1e-12 * (abs(x) + 1)
        check(ok, f"{tag}: {k} {a[k]!r} in memory, {b[k]!r} out of core")
    check(a["sort_runs"] == 0 and b["sort_runs"] >= 1,
          f"{tag}: sort_runs {a['sort_runs']} in memory, {b['sort_runs']} out of core")


def pair(args, path, P, dset, opts, tag, limit=None, env_ooc=None, want_ooc=True):
    """The sort in device memory and under `limit` (or env_ooc); checks both ran, the second
    out of core, and the same bytes. Returns (in-memory json, ooc json, ooc outputs, ooc stderr)
    or None."""
    res = []
    for mode in ("mem", "ooc"):
        out = os.path.join(args.work, f"o_{mode}.h5")
        rj = os.path.join(args.work, f"o_{mode}.json")
        env = env_with() if mode == "mem" else (env_ooc or env_with(GPUPRIM_DEVICE_MEM_LIMIT=limit))
        p = run_gpuprim(args, P, sort_cmd(args, path, dset, opts, out, rj), env=env)
        if not check(p.returncode == 0, f"{tag} {mode}: exit {p.returncode}: {p.stderr[-500:]}"):
            return None
        res.append((json.load(open(rj)), outputs(out), p.stderr))
    (jm, om, _), (jo, oo, eo) = res
    check((jo["sort_runs"] >= 1) == want_ooc, f"{tag}: sort_runs {jo['sort_runs']}")
    stable = "--stable" in opts or args.backend == "cpu"
    names = [dset] + ([dset + "_argsort"] if "--argsort" in opts and stable else []) + \
        (["pay"] if "--payload" in opts and stable else [])
    check(same_outputs(om, oo, names), f"{tag}: out-of-core bytes differ from in-memory ({names})")
    return jm, jo, oo, eo, om


def test_options(args, path, data):
    for P in args.nps:
        sh = shares(args, path, P)
        for ti, (dset, dt) in enumerate(TYPES):
            opts = OPTS[(ti + P) % len(OPTS)]
            # out of core, auto is mpi (the host buffers); every other type puts them in the
            # node's shared window instead
            xport = "shared" if ti % 2 else "auto"
            if P > 1 and xport == "shared":
                opts = opts + ["--transport", "shared"]
            a = data[dset]
            pairs = any(o in opts for o in ("--stable", "--argsort", "--payload"))
            esize = a.dtype.itemsize
            m = -(-N // P)
            use = max(inmem_need(P, esize, pairs, m) // 4, 1)  # the device 4x too small
            limit = max(limit_for(use, s) for s in sh)
            tag = f"{dset} {' '.join(opts)} P={P}".replace("  ", " ")
            r = pair(args, path, P, dset, opts, tag, limit)
            if not r:
                continue
            jm, jo, oo, eo, _ = r
            check_outputs(tag, oo, reference(a, opts, data["pay"]), dset, opts, a)
            check_stats(args, tag, jm, jo)
            steps = {st["transport"] for st in jo["exchange_step_times"]}
            check(P == 1 or steps == {"shared" if xport == "shared" else "mpi"},
                  f"{tag}: out-of-core exchange transports {steps} under --transport {xport}")
            got = plans(eo)
            want = {rk: expect_plan(shard(N, P, rk), esize + (8 if pairs else 0), usable(limit, sh[rk]))
                    for rk in range(P)}
            check(got == want, f"{tag}: plans {got}, want {want}")
            check(jo["sort_runs"] == max(k for k, _ in want.values()),
                  f"{tag}: sort_runs {jo['sort_runs']}, plans {want}")
            print(f"{tag}: ok, runs per rank {[got.get(rk, (0, 0))[0] for rk in range(P)]}", flush=True)


def test_limits(args, path, data):
    """One run, two runs with a run of one element, many runs."""
    for P in args.nps:
        sh = shares(args, path, P)
        m = -(-N // P)
        cases = [("many", "f32", 1, ["--stable", "--argsort"])]
        if P > 1:  # the shard fits, the exchange's receive buffer does not: one run each
            cases.append(("single", "f32", max(limit_for(m * 4 * 3 // 2, s) for s in sh), []))
        cases.append(("two", f"t{P}", 1, ["--descending"]))
        for what, dset, limit, opts in cases:
            tag = f"{what} runs {dset} P={P}"
            r = pair(args, path, P, dset, opts, tag, limit)
            if not r:
                continue
            got = plans(r[3])
            n = data[dset].size
            if what == "single":
                ok = all(got.get(rk) == (1, shard(n, P, rk)) for rk in range(P))
            elif what == "two":  # rank 0: 4097 elements = 4096 + a run of one
                ok = got.get(0) == (2, RUN_MIN) and all(got.get(rk) == (1, RUN_MIN) for rk in range(1, P))
            else:
                ok = all(got.get(rk) == (-(-shard(n, P, rk) // RUN_MIN), RUN_MIN) for rk in range(P))
            check(ok, f"{tag}: plans {got}")
            check_outputs(tag, r[2], reference(data[dset], opts, data["pay"]), dset, opts, data[dset])


def run_mpmd(args, groups, argv, timeout=300):
    """mpirun's MPMD form: groups of (ranks, {variable: value or None to unset}), each running
    gpuprim_mpi argv with its environment."""
    io = ["--io", args.io] if args.io else []
    full = ["sh", args.mpirun]
    for i, (n, env) in enumerate(groups):
        sets = [x for k, v in env.items() for x in (["-u", k] if v is None else [f"{k}={v}"])]
        full += ([":"] if i else []) + ["-np", str(n), "env"] + sets + [prog(args, "gpuprim_mpi")] + io + argv
    return subprocess.run(full, capture_output=True, text=True, timeout=timeout, env=env_with())


def test_mixed(args, path, data):
    """Rank 0 in device memory (its whole shard: one run), the others out of core."""
    for P in [p for p in args.nps if p > 1]:
        for opts in ([], ["--stable", "--argsort", "--payload", "pay"]):
            tag = f"mixed P={P} {' '.join(opts)}"
            out, rj = os.path.join(args.work, "mx.h5"), os.path.join(args.work, "mx.json")
            ref_out, ref_rj = os.path.join(args.work, "mx_mem.h5"), os.path.join(args.work, "mx_mem.json")
            p0 = run_gpuprim(args, P, sort_cmd(args, path, "f64", opts, ref_out, ref_rj), env=env_with())
            p = run_mpmd(args, [(1, {"GPUPRIM_DEVICE_MEM_LIMIT": None}),
                                (P - 1, {"GPUPRIM_DEVICE_MEM_LIMIT": 1})],
                         sort_cmd(args, path, "f64", opts, out, rj))
            if not check(p.returncode == 0 and p0.returncode == 0,
                         f"{tag}: exit {p.returncode} / {p0.returncode}: {p.stderr[-500:]}"):
                continue
            got = plans(p.stderr)
            ok = got.get(0) == (1, shard(N, P, 0)) and \
                all(got.get(r) == (-(-shard(N, P, r) // RUN_MIN), RUN_MIN) for r in range(1, P))
            check(ok, f"{tag}: plans {got}")
            names = ["f64"] + (["f64_argsort", "pay"] if opts else [])
            check(same_outputs(outputs(ref_out), outputs(out), names), f"{tag}: bytes differ from in-memory")
            check(json.load(open(rj))["sort_runs"] == -(-shard(N, P, 1) // RUN_MIN), f"{tag}: sort_runs")


def error_lines(p):
    return [l for l in p.stderr.splitlines() if l.startswith("gpuprim_mpi: error")]


def left_over(args, name):
    return [f for f in os.listdir(args.work) if f.startswith(name) or ".gpuprim." in f]


def test_short(args, path):
    P = max(args.nps)
    out = os.path.join(args.work, "short.h5")
    cmd = [path, "--dataset", "f64", "--backend", args.backend, "--out", out, "--force", "--stable",
           "--argsort", "--quiet"]
    p = run_gpuprim(args, P, cmd, env=env_with(GPUPRIM_DEVICE_MEM_LIMIT=1, GPUPRIM_HOST_MEM_LIMIT=1000))
    errs = error_lines(p)
    check(p.returncode == 7 and len(errs) == 1, f"short on both: exit {p.returncode}, errors {errs}")
    mt = SHORT_RE.match(errs[0]) if errs else None
    check(mt is not None, f"short on both: the line {errs}")
    if mt:
        fname, dname, n, r = mt.group(1), mt.group(2), int(mt.group(3)), int(mt.group(4))
        m = -(-N // P)
        host = 2 * m * (8 + 8)  # the two host buffers of keys and positions, at least
        check(fname == path and dname == "/f64" and r == 0 and n == shard(N, P, 0), f"short: names {errs[0]}")
        need = inmem_need(P, 8, True, m) / 2**30
        check(abs(float(mt.group(5)) - need) <= 0.005 * need, f"short: device need {mt.group(5)} vs {need:.4g}")
        check(float(mt.group(7)) * 2**30 >= host * 0.99, f"short: host need {mt.group(7)} GiB < {host} bytes")
        check(float(mt.group(8)) * 2**30 <= 1000, f"short: host free {mt.group(8)} GiB")
    check(not left_over(args, "short.h5"), f"short: output left: {left_over(args, 'short.h5')}")
    p = run_gpuprim(args, P, cmd, env=env_with(GPUPRIM_DEVICE_MEM_LIMIT=1, GPUPRIM_HOST_MEM_LIMIT="12MiB"))
    errs = error_lines(p)
    check(p.returncode == 7 and len(errs) == 1 and "GPUPRIM_HOST_MEM_LIMIT" in errs[0],
          f"malformed GPUPRIM_HOST_MEM_LIMIT: exit {p.returncode}, errors {errs}")
    # a host limit alone does not stop a sort that fits the device
    p = run_gpuprim(args, P, cmd, env=env_with(GPUPRIM_HOST_MEM_LIMIT=1000))
    check(p.returncode == 0, f"host limit, device fits: exit {p.returncode}: {p.stderr[-300:]}")


def test_pieces_x(args, path, data):
    """The staging ring in 1000-byte pieces, and --x / --reproducible out of core."""
    for P in sorted({min(args.nps), max(args.nps)}):
        tag = f"pieces P={P}"
        r = pair(args, path, P, "i64", ["--stable", "--argsort", "--payload", "pay"], tag,
                 env_ooc=env_with(GPUPRIM_DEVICE_MEM_LIMIT=1, GPUPRIM_READ_PIECE_BYTES=1000))
        if r:
            check(r[1]["sort_runs"] > 1, f"{tag}: sort_runs {r[1]['sort_runs']}")
        tag = f"--x --reproducible P={P}"
        r = pair(args, path, P, "y", ["--x", "x", "--reproducible", "--descending"], tag, 1)
        if r:
            jm, jo = r[0], r[1]
            for k in ("sum", "mean", "l2_norm"):
                check(json.dumps(jm[k]) == json.dumps(jo[k]), f"{tag}: {k} {jm[k]!r} vs {jo[k]!r}")
            x, y = jm["integral"], jo["integral"]
            ok = x is not None and y is not None and math.isfinite(float(jnum(x)))
            ok = ok and (x == y or abs(float(jnum(x)) - float(jnum(y))) <= 1e-12 * abs(float(jnum(x))))
            check(ok, f"{tag}: integral {x!r} vs {y!r}")


def scan_bound(y, x, cumint):
    """The documented bound of each output of --cumsum (2^-45 times the prefix sums of |y|, NaN
    adding nothing) or --cumulative-integral (the same of |term|) of y (as float64)."""
    y = y.astype(np.float64)
    if cumint:
        h = np.diff(x) if x is not None else np.ones(y.size - 1)
        t = np.concatenate(([0.0], np.abs(h * (y[1:] + y[:-1]) / 2.0)))
    else:
        t = np.abs(y)
    return 2.0 ** -45 * np.cumsum(np.nan_to_num(t, nan=0.0))


def same_scan(args, a, b, y, x, cumint):
    """Two runs' scan outputs: the same bytes for integers and on the CPU backend (the visits'
    pieces keep the 64-element blocks of the in-memory call); else the same non-finite values
    and the finite ones within twice the documented bound (each is within it of the exact)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind != "f" or args.backend == "cpu":
        return a.tobytes() == b.tobytes()
    fin = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(a[~fin], b[~fin], equal_nan=True):
        return False
    return bool(np.all(np.abs(a[fin] - b[fin]) <= 2 * scan_bound(y, x, cumint)[fin]))


def test_scans(args, path, data):
    """--cumsum and --cumulative-integral out of core (the scan visits the host's copy of the
    shard, still in input order, before the runs are merged): the outputs and the JSON totals as
    in device memory, every integer type exactly (64-bit data whose prefix leaves the type: the
    same exit 4 and line in both), float32 / float64 with NaN and infinities, --x, --dx."""
    cases = [(d, ["--cumsum"], None) for d in ("f32", "i32", "u32", "si64", "su64")] + \
            [("f64", ["--cumsum", "--cumulative-integral", "--dx", "0.5"], None),
             ("y", ["--cumsum", "--cumulative-integral", "--x", "x", "--stable", "--argsort"], "x")]
    for P in sorted({min(args.nps), max(args.nps)}):
        for dset, opts, xname in cases + [(f"t{P}", ["--cumsum", "--cumulative-integral"], None)]:
            tag = f"scan {dset} {' '.join(opts)} P={P}"
            r = pair(args, path, P, dset, opts, tag, 1)
            if not r:
                continue
            jm, jo, oo, _, om = r
            y, x = data[dset], data[xname] if xname else None
            if "--dx" in opts:
                x = np.arange(y.size) * 0.5
            for suffix, cumint in (("_cumsum", 0), ("_cumint", 1)):
                name = dset + suffix
                if name not in om or name not in oo:
                    check(name not in om and name not in oo and (cumint or "--cumsum" not in opts),
                          f"{tag}: {name} missing")
                    continue
                check(same_scan(args, om[name], oo[name], y, x, cumint),
                      f"{tag}: {name} out of core differs from in memory")
            for k in ("cumsum_total", "cumint_last"):
                a, b = jm[k], jo[k]
                ok = json.dumps(a) == json.dumps(b)
                if not ok and args.backend != "cpu" and None not in (a, b) and y.dtype.kind == "f":
                    bound = scan_bound(y, x, k == "cumint_last")[-1]
                    ok = abs(float(jnum(a)) - float(jnum(b))) <= 2 * bound
                check(ok, f"{tag}: {k} {a!r} in memory, {b!r} out of core")
        for dset in ("i64", "u64"):  # the types' extremes: the prefix leaves the stored type
            errs = []
            for limit in (None, 1):
                out = os.path.join(args.work, "scan_ovf.h5")
                p = run_gpuprim(args, P, sort_cmd(args, path, dset, ["--cumsum"], out,
                                                  os.path.join(args.work, "ovf.json"), False),
                                env=env_with(GPUPRIM_DEVICE_MEM_LIMIT=limit))
                errs.append((p.returncode, error_lines(p)))
            # exit 4 and one line (a prefix that fits all along, unlikely: exit 0 in both)
            ok = errs[0][0] in (0, 4) and len(errs[0][1]) == (errs[0][0] == 4)
            check(ok and errs[0] == errs[1],
                  f"scan {dset} overflow P={P}: in memory {errs[0]}, out of core {errs[1]}")
        print(f"scans P={P}: ok", flush=True)


def test_dist(args, path, data):
    """--quantiles, --distinct and --histogram after an out-of-core sort (sorted.c's view of
    the host's sorted shard, pieces.c's visits of the host copy): the in-memory report's
    values, and numpy's distinct count."""
    opts = ["--quantiles", "0,0.1,0.5,0.999,1", "--distinct", "--histogram", "16"]
    for P in sorted({args.nps[0], args.nps[-1]}):
        sh = shares(args, path, P)
        for dset, _ in TYPES[:3]:
            a = data[dset]
            use = max(inmem_need(P, a.dtype.itemsize, False, -(-N // P)) // 4, 1)
            limit = max(limit_for(use, s) for s in sh)
            tag = f"{dset} --quantiles --distinct --histogram P={P}"
            r = pair(args, path, P, dset, opts, tag, limit)
            if not r:
                continue
            jm, jo = r[0], r[1]
            for k in ("quantiles", "distinct", "histogram", "non_finite"):
                check(json.dumps(jm.get(k)) == json.dumps(jo.get(k)),
                      f"{tag}: {k} {jm.get(k)!r} in memory, {jo.get(k)!r} out of core")
            fin = a[~np.isnan(a)] if a.dtype.kind == "f" else a
            check(jo["distinct"] == len(np.unique(fin)),
                  f"{tag}: distinct {jo['distinct']}, numpy {len(np.unique(fin))}")
            print(f"{tag}: ok", flush=True)


def test_faults(args, path):
    P = 3 if 3 in args.nps or max(args.nps) >= 3 else max(args.nps)
    if P < 2:
        return
    for fault, want in (("1:runs", 7), ("2:merge", 7), ("1:runs:kill", None), ("1:merge:kill", None),
                        ("1:xstep:kill", None), ("0:xstep", 7)):
        out = os.path.join(args.work, "fault.h5")
        t0 = time.time()
        p = run_gpuprim(args, P, [path, "--dataset", "f32", "--backend", args.backend, "--out", out,
                                  "--force", "--quiet", "--stable", "--argsort"],
                        timeout=120, env=env_with(GPUPRIM_DEVICE_MEM_LIMIT=1, GPUPRIM_FAULT=fault))
        took = time.time() - t0
        errs = error_lines(p)
        check(p.returncode == want if want else p.returncode != 0, f"fault {fault}: exit {p.returncode}")
        check(took < 60, f"fault {fault}: took {took:.1f} s")
        check(want is None or (len(errs) == 1 and "GPUPRIM_FAULT" in errs[0]),
              f"fault {fault}: want one error line naming the fault, got {errs}")
        check(not left_over(args, "fault.h5"), f"fault {fault}: output left: {left_over(args, 'fault.h5')}")


def main():
    args = arg_parser(nps="1,2,3,4,5").parse_args()
    fresh_dir(args.work)
    seed = test_seed()
    print(f"e2e_ooc: nps={args.nps} backend={args.backend} io={args.io or 'default'} seed={seed}", flush=True)
    if cuda_missing(args):
        return 77
    rng = np.random.default_rng(seed)
    path = make_file(args, rng)
    with h5py.File(path, "r") as f:
        data = {k: f[k][()] for k in f}
    test_options(args, path, data)
    test_limits(args, path, data)
    test_mixed(args, path, data)
    test_short(args, path)
    test_pieces_x(args, path, data)
    test_scans(args, path, data)
    test_dist(args, path, data)
    test_faults(args, path)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

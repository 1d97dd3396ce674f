#!/usr/bin/env python3
"""More than 2^31 elements per rank and in all: gpuprim_mpi on an h5py-written file that is
15 MB on disk but holds N = 2^31 + 37 elements per dataset, checked exactly in closed form.

usage: e2e_big_counts.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR --backend cpu|cuda
                         [--nps 1,2] [--sort]

The file has two chunked datasets of N elements, /i8 (int8, fill value -3) and /i32 (int32,
fill value -1000), chunks of 1000003 elements, and a contiguous one, /c32 (int32, fill value
0: its storage is one block of 4 N bytes, a hole on disk but for the written regions). Only
the chunks under four written regions exist: the start, the middle, a region across element 2^31 and the last 17 elements; every
other element reads as the fill value. The written values are small random integers plus
the extremes at known places: the maximum (127, INT32_MAX) in the middle and the minimum
(-128, INT32_MIN) past element 2^31, so a reader that stops at 2^31 gets min, sum and
count wrong. With W written elements w_i, the exact results are
    count = N,  sum = fill * (N - W) + sum w_i,  sum of squares = fill^2 * (N - W) + sum w_i^2
and min, max, first and last element are known; mean = sum / N and the uniform trapezoid
rule dx * (sum - (y_0 + y_(N-1)) / 2) follow from the exact sum, each rounded once (as
gpuprim does for integer data), and L2 = sqrt(sum of squares) in float64.

Runs (each checked bit for bit against those numbers, as float.hex):
  1. np = first of --nps (1: one rank holds all N > 2^31 elements, 8 GiB as int32, > 2 GiB
     read in one rank), /i8 (stored int8, read as i32: HDF5 converts), --no-sort, dx = 1;
     every partial sum is an integer below 2^53, so the float64 sum and sum of squares are
     exact and the default summation must give them exactly.
  2. np = second of --nps (2: N / 2 per rank, the global count > 2^31 across ranks), /i32
     (no conversion), --no-sort --reproducible --dx 0.25: the sum
     of squares (~9.2e18) is not exact in float64, so the exact (Kulisch) sums must be the
     correctly rounded values Python's int -> float gives.
  3. np = first of --nps, /c32 (--no-sort unless --sort): with the posix I/O driver one
     pread of 8 GiB into one rank's memory (in system calls of at most 1 GiB), with mpiio
     collective reads of 1 GiB pieces.
With --sort (the GPU twin; the CPU backend cannot sort 2^31 elements in 23 GB: the read
buffer, the device copy and the radix sort's scratch are 8 GiB each) both runs also sort:
the JSON must say sorted and verified (no descents, count and multiset hash kept), and run
1 writes --out, whose int8 values must be the expected runs of each value in order.

Memory: the CPU backend holds the shard once (4 * N bytes over all ranks, whatever the rank
count), and run 3 fills the page cache with the 4 * N bytes of /c32 (zeros, read from a
hole) besides; the test is skipped (exit 77) when /proc/meminfo's MemAvailable is below
2 * 4 * N bytes plus 1 GiB. The
runs take about a minute each on 2 cores (page faults of 16 GiB dominate).
Exit 0 when all pass, 1 on a failure, 77 when skipped (no GPU for --backend cuda, or too
little memory).
"""
import math
import os
import shutil
import sys
import time

import h5py
import numpy as np

import e2e_common
from e2e_common import arg_parser, check, cuda_missing, fresh_dir, run_gpuprim, summary, tally
from e2e_common import read_report  # noqa: E402

N = 2**31 + 37  # --n changes it (a quick try of the script on a small machine)
CHUNK = 1000003


def hexf(x):
    """Exact bits of a JSON number (or of "nan"/"inf" strings) for comparison."""
    return float(x).hex()


def mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


# ---- the input file ----------------------------------------------------------------------

def regions():
    """Written regions [a, b): the start, the middle, across element 2^31 (for a small --n:
    across N - 40), the end."""
    bound = 2**31 if N > 2**31 + 40 else N - 40
    return [(0, 1000), (N // 2 - 700, N // 2 + 300), (bound - 600, bound + 10), (N - 17, N)]


def make_dataset(f, name, dtype, fill, lo, hi, extreme_min, extreme_max, rng, chunked=True):
    """Writes dataset `name` (chunked, else contiguous: then fill must be 0, which HDF5 does
    not write, so the block stays a hole) and returns its closed-form facts (Python ints)."""
    if chunked:
        d = f.create_dataset(name, shape=(N,), dtype=dtype, chunks=(CHUNK,), fillvalue=fill)
    else:
        assert fill == 0
        d = f.create_dataset(name, shape=(N,), dtype=dtype)
    W = S = S2 = 0
    first = last = None
    vmin, vmax = fill, fill
    for k, (a, b) in enumerate(regions()):
        v = rng.integers(lo, hi + 1, b - a).astype(np.int64)
        if k == 1:
            v[700] = extreme_max          # at N // 2
        if k == 2:
            v[605] = extreme_min          # at 2^31 + 5: past the 2^31 boundary
        if a == 0:
            v[0] = 77                      # y_0: not the fill value
        if b == N:
            v[-1] = -101                   # y_(N-1)
        d[a:b] = v.astype(dtype)
        vi = [int(x) for x in v]
        W += len(vi)
        S += sum(vi)
        S2 += sum(x * x for x in vi)
        vmin = min(vmin, min(vi))
        vmax = max(vmax, max(vi))
        if a == 0:
            first = vi[0]
        if b == N:
            last = vi[-1]
    S += fill * (N - W)
    S2 += fill * fill * (N - W)
    return {"S": S, "S2": S2, "min": vmin, "max": vmax, "first": first, "last": last,
            "fill": fill, "W": W}


def make_file(path, rng):
    with h5py.File(path, "w") as f:
        facts = {
            "i8": make_dataset(f, "i8", np.int8, -3, -100, 100, -128, 127, rng),
            "i32": make_dataset(f, "i32", np.int32, -1000, -2**19, 2**19,
                                -2**31, 2**31 - 1, rng),
            "c32": make_dataset(f, "c32", np.int32, 0, -2**10, 2**10, -2**20, 2**20, rng,
                                chunked=False),
        }
    # the histogram of /i8 for the sorted output (value -> count)
    hist = {}
    with h5py.File(path, "r") as f:
        d = f["i8"]
        for a, b in regions():
            for x in d[a:b].tolist():
                hist[x] = hist.get(x, 0) + 1
    hist[-3] = hist.get(-3, 0) + (N - facts["i8"]["W"])
    facts["i8"]["hist"] = hist
    return facts


# ---- checks ------------------------------------------------------------------------------

def expect(facts, dx, rounded_squares):
    """The JSON values gpuprim must report, as float.hex / ints."""
    S, S2 = facts["S"], facts["S2"]
    if not rounded_squares:
        assert abs(S2) < 2**53  # the float64 sum of squares is exact only then
    s, s2 = float(S), float(S2)  # int -> float: correctly rounded, ties to even
    # integer data: the mean and the bracket of the rule from the exact sum, rounded once
    # (Python's int / int is correctly rounded)
    integral = dx * ((2 * S - facts["first"] - facts["last"]) / 2)
    return {"count": N, "nan_count": 0, "sum": s.hex(), "min": facts["min"],
            "max": facts["max"], "mean": (S / N).hex(),
            "l2_norm": math.sqrt(s2).hex(), "integral": integral.hex()}


def got_of(r):
    g = {"count": r.get("count"), "nan_count": r.get("nan_count"), "min": r.get("min"),
         "max": r.get("max")}
    for k in ("sum", "mean", "l2_norm", "integral"):
        g[k] = hexf(r[k]) if k in r else None
    return g


def check_sorted_file(path, facts, tag):
    """The sorted /i8: runs of each value, ascending, in slices of 2^27 elements."""
    hist = facts["hist"]
    vals = np.array(sorted(hist), dtype=np.int64)
    cnts = np.array([hist[v] for v in sorted(hist)], dtype=np.int64)
    ends = np.cumsum(cnts)
    starts = ends - cnts
    assert int(ends[-1]) == N, "the histogram does not add up to N"
    step = 2**27
    bad = 0
    with h5py.File(path, "r") as f:
        d = f["i8"]
        check(d.dtype == np.int8 and d.shape == (N,), f"{tag}: sorted dataset {d.dtype} {d.shape}")
        for a in range(0, N, step):
            b = min(N, a + step)
            lens = np.clip(np.minimum(ends, b) - np.maximum(starts, a), 0, None)
            exp = np.repeat(vals.astype(np.int8), lens)
            if not np.array_equal(d[a:b], exp):
                bad += 1
    check(bad == 0, f"{tag}: {bad} slices of the sorted output differ from the expected runs")


def small_sparse(args):
    """The same kind of sparse file at 3 MB in memory, np 1 and 3, every stored type that
    HDF5 reads without conversion: a collective read of unallocated chunks failed in HDF5
    1.10.8 (MPI_ERR_TYPE in MPI_File_set_view) whatever the size."""
    n, path = 3000017, os.path.join(args.work, "sparse.h5")
    with h5py.File(path, "w") as f:
        for name, dt, fill in (("i32", np.int32, -1000), ("f64", np.float64, 0.5),
                               ("u64", np.uint64, 7)):
            d = f.create_dataset(name, shape=(n,), dtype=dt, chunks=(100003,), fillvalue=fill)
            d[5:105] = np.arange(100, dtype=dt)
            d[n - 3:] = np.array([1, 2, 3], dtype=dt)
    for name, fill in (("i32", -1000), ("f64", 0.5), ("u64", 7)):
        want = fill * (n - 103) + sum(range(100)) + 6
        for P in (1, 3):
            rj = os.path.join(args.work, f"sparse_{name}_{P}.json")
            p, _ = run(args, P, [path, "--dataset", name, "--backend", args.backend, "--quiet",
                                 "--no-sort", "--json", rj])
            tag = f"sparse /{name} np {P}"
            check(p.returncode == 0, f"{tag}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
            if p.returncode == 0:
                r = read_report(rj)
                check(r["count"] == n and float(r["sum"]) == float(want),
                      f"{tag}: count {r['count']} sum {r['sum']}, want {n} and {want}")
    print(f"small sparse file: {tally()}", flush=True)


def run(args, P, cmd):
    """gpuprim_mpi CMD with P ranks (up to 50 minutes); returns (process, seconds)."""
    p = run_gpuprim(args, P, cmd, timeout=3000)
    return p, p.seconds


def main():
    ap = arg_parser(nps="1,2")
    ap.add_argument("--sort", action="store_true")
    ap.add_argument("--n", type=int, default=None, help="elements (default 2^31 + 37)")
    args = ap.parse_args()
    global N
    N = args.n or N
    if N < 5000:
        ap.error("--n must be at least 5000")
    nps = args.nps
    if len(nps) != 2:
        ap.error("--nps takes two rank counts")
    t_all = time.time()
    print(f"e2e_big_counts: N = {N}{' = 2^31 + 37' if N == 2**31 + 37 else ''}, nps = {nps}, backend {args.backend}, "
          f"io {args.io or 'default'}, sort {'on' if args.sort else 'off'}", flush=True)

    if cuda_missing(args):
        return 77
    fresh_dir(args.work)
    small_sparse(args)

    need = 2 * 4 * N + 2**30
    avail = mem_available()
    if avail is not None and avail < need:
        print(f"SKIP: MemAvailable {avail / 2**30:.1f} GiB < {need / 2**30:.1f} GiB needed "
              f"(the shard twice as int32)")
        return 77 if not e2e_common.FAILS else 1

    path = os.path.join(args.work, "big.h5")
    rng = np.random.default_rng(20261130)  # fixed: the expected values are closed forms anyway
    facts = make_file(path, rng)
    print(f"wrote {path}: {os.path.getsize(path)} bytes ({os.stat(path).st_blocks * 512} on disk), "
          f"3 datasets of {N} elements", flush=True)

    runs = [  # (P, dataset, options, dx, rounded squares)
        (nps[0], "i8", [], 1.0, False),
        (nps[1], "i32", ["--reproducible", "--dx", "0.25"], 0.25, True),
        (nps[0], "c32", [], 1.0, False),
    ]
    for k, (P, ds, opts, dx, rounded) in enumerate(runs):
        tag = f"np {P} /{ds}{' ' + ' '.join(opts) if opts else ''}"
        rj = os.path.join(args.work, f"r{k}.json")
        cmd = [path, "--dataset", ds, "--backend", args.backend, "--json", rj] + opts
        out = None
        if not args.sort:
            cmd.append("--no-sort")
        elif ds == "i8":
            out = os.path.join(args.work, "sorted.h5")
            cmd += ["--out", out, "--force"]
        p, secs = run(args, P, cmd)
        print(f"--- {tag}: exit {p.returncode}, {secs:.1f} s", flush=True)
        sys.stdout.write(p.stdout)
        if p.returncode:
            sys.stdout.write(p.stderr[-2000:])
        check(p.returncode == 0, f"{tag}: exit {p.returncode}")
        if p.returncode:
            continue
        r = read_report(rj)
        want = expect(facts[ds], dx, rounded)
        got = got_of(r)
        for key in want:
            check(got[key] == want[key], f"{tag}: {key} = {got[key]}, want {want[key]}")
        if args.sort:
            check(r.get("sorted") is True and r.get("sorted_verified") is True and
                  r.get("sorted_descents") == 0, f"{tag}: sort not verified: "
                  f"sorted={r.get('sorted')} verified={r.get('sorted_verified')} "
                  f"descents={r.get('sorted_descents')}")
            if out:
                t = time.time()
                check_sorted_file(out, facts[ds], tag)
                print(f"checked the sorted output in {time.time() - t:.1f} s", flush=True)
                os.remove(out)
    shutil.rmtree(args.work, ignore_errors=True)  # a 3 MB input; sorted.h5 is 2 GiB
    return summary(f", {time.time() - t_all:.1f} s in all")


if __name__ == "__main__":
    sys.exit(main())

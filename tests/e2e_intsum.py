#!/usr/bin/env python3
"""End-to-end tests of the exact integer sums and of --function over [a, b] in either order,
on h5py-written files, against Python's exact integers.

usage: e2e_intsum.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR --nps 1,2,...,8 --backend B

- integer data (int64, uint64, int32, uint32 and narrower types read as them) at the
  extremes (INT64_MAX, INT64_MIN, UINT64_MAX, mixed with small values, sums that pass 64
  bits), odd sizes (1, 2, primes, 2^k + 1), one big-endian: for every rank count the
  summary prints the sum as Python's `sum()` of the values in full decimal, the --json
  report holds it as a JSON integer with every digit, the mean is that sum / count rounded
  once (Python's int / int) and the uniform --dx integral is h * ((2 sum - y0 - y_last) / 2)
  rounded once, the same for every rank count; numpy's sum agrees where numpy is exact (no
  wrap-around: 32-bit and narrower types summed in int64, 64-bit types whose sum fits);
- with --reproducible the same exact sum, mean and integral (its exact superaccumulator
  path); with the sort on (the statistics with the multiset hash) the same; the chunked
  statistics (--no-sort with GPUPRIM_DEVICE_MEM_LIMIT=1: chunks of 4096 elements) the same;
- float data keep a float sum in the report (a JSON number with a fraction or exponent);
- --function NAME --a A --b B at P = 1, 2, 3: b < a gives minus the integral over [b, a]
  (integral and exact, bitwise), a = b gives 0, `--function x2 --a 3 --b 0` gives about -9
  (exact -9); a b - a that overflows is still a usage error (exit 2).
Exit 0 when all pass, 77 when --backend cuda finds no GPU.
"""
import os
import re
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import arg_parser, check, cuda_missing, fresh_dir, summary, test_seed  # noqa: E402
from e2e_common import read_report  # noqa: E402
from e2e_common import run_gpuprim as run  # noqa: E402  (gpuprim_mpi under mpirun: run(args, P, options))

I64_MAX, I64_MIN, U64_MAX = 2**63 - 1, -2**63, 2**64 - 1
DX = 0.375  # a spacing that is not a power of two: h * bracket rounds


def make_cases(work, rng):
    """Writes the integer datasets (one file each) with h5py; returns (name, path, values as
    Python ints, stored dtype) tuples."""
    def small(n, lo=-9, hi=10):
        return [int(v) for v in rng.integers(lo, hi, n)]

    cases = []
    n = 40009  # a prime; above 4096 elements per rank up to P = 9 (chunked runs)
    i64_mix = [I64_MAX] * 2800 + [I64_MIN] * 1200 + small(n - 4000)
    rng.shuffle(i64_mix)
    u64_mix = [U64_MAX] * 8000 + small(n - 8000, 0, 10)
    rng.shuffle(u64_mix)
    data = [
        ("i64_max_min_small", i64_mix, np.int64),                       # passes 2^64
        ("i64_all_max", [I64_MAX] * 4097, np.int64),                     # 2^k + 1
        ("i64_all_min", [I64_MIN] * 8193, np.int64),                     # -2^76 or so
        ("i64_alternating", [I64_MAX, I64_MIN] * 2500 + [I64_MAX], np.int64),
        ("i64_random_full", [int(v) for v in rng.integers(I64_MIN, I64_MAX, 65537, dtype=np.int64,
                                                          endpoint=True)], np.int64),
        ("i64_bigendian", [I64_MAX] * 33 + small(31), ">i8"),
        ("u64_max_small", u64_mix, np.uint64),                           # passes 2^64 by far
        ("u64_all_max", [U64_MAX] * 12289, np.uint64),
        ("u64_one", [U64_MAX], np.uint64),
        ("u64_two", [U64_MAX, 1], np.uint64),                            # exactly 2^64
        ("i32_extremes", [2**31 - 1] * 3000 + [-2**31] * 1000 + small(1001), np.int32),
        ("u32_extremes", [2**32 - 1] * 5003 + small(17, 0, 10), np.uint32),
        ("i16_read_as_i32", [int(v) for v in rng.integers(-2**15, 2**15, 4099)], np.int16),
        ("u16_read_as_u32", [2**16 - 1] * 1025, np.uint16),
        ("i8_small", [-128, 127, 5], np.int8),
    ]
    for name, vals, dt in data:
        path = os.path.join(work, name + ".h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("v", data=np.array(vals, dtype=dt))
        cases.append((name, path, vals, np.dtype(dt)))
    return cases


def summary_sum(stdout):
    """The text after "sum" in the summary table ("" when missing)."""
    m = re.search(r"^  sum +(\S+)", stdout, re.M)
    return m.group(1) if m else ""


def expected(vals):
    """(sum, mean, integral) as gpuprim must report them: the exact sum, the exact sum / n
    rounded once, DX times the exact bracket (2 sum - y0 - y_last) / 2 rounded once."""
    s = sum(vals)
    trap = DX * ((2 * s - vals[0] - vals[-1]) / 2) if len(vals) >= 2 else 0.0
    return s, s / len(vals), trap


def numpy_exact(vals, dt):
    """numpy's sum where it is exact (None otherwise): types of up to 32 bits summed in int64
    (or uint64), 64-bit types when the true sum fits their range (numpy wraps modulo 2^64)."""
    a = np.array(vals, dtype=dt)
    if dt.itemsize <= 4:
        return int(a.sum(dtype=np.uint64 if dt.kind == "u" else np.int64))
    s = sum(vals)
    lo, hi = (0, U64_MAX) if dt.kind == "u" else (I64_MIN, I64_MAX)
    return int(a.sum()) if lo <= s <= hi else None


def run_case(args, P, name, path, vals, dt, extra=(), env=None, tag=""):
    """One run; returns (sum, mean, integral, the JSON report) or None after a failed run."""
    rj = os.path.join(args.work, f"{name}_{P}{tag}.json")
    cmd = [path, "--backend", args.backend, "--dx", repr(DX), "--json", rj] + list(extra)
    p = run(args, P, cmd, env=env)
    what = f"{name} P={P}{tag}"
    if not check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[-300:]}"):
        return None
    r = read_report(rj)
    s, mean, trap = expected(vals)
    check(summary_sum(p.stdout) == str(s), f"{what}: summary sum {summary_sum(p.stdout)!r}, want {s}")
    check(type(r["sum"]) is int and r["sum"] == s, f"{what}: JSON sum {r['sum']!r}, want {s}")
    check(r["mean"] == mean, f"{what}: mean {r['mean']!r}, want {mean!r} (the exact sum / count)")
    check(type(r["mean"]) is float, f"{what}: JSON mean {r['mean']!r} reads as {type(r['mean']).__name__}, not float")
    check(r["integral"] == trap, f"{what}: integral {r['integral']!r}, want {trap!r}")
    return r["sum"], r["mean"], r["integral"], r


def test_int_sums(args, cases):
    for name, path, vals, dt in cases:
        ref = numpy_exact(vals, dt)
        if ref is not None:
            check(ref == sum(vals), f"{name}: numpy's exact sum {ref} differs from Python's {sum(vals)}")
        seen = {}
        for P in args.nps:
            got = run_case(args, P, name, path, vals, dt, extra=["--no-sort"])
            if got:
                seen[P] = got[:3]
        check(len(set(seen.values())) <= 1, f"{name}: results differ between rank counts: {seen}")
    # the other statistics paths on two files, at three rank counts
    ps = sorted({args.nps[0], args.nps[len(args.nps) // 2], args.nps[-1]})
    for name, path, vals, dt in [c for c in cases if c[0] in ("i64_max_min_small", "u64_max_small")]:
        big = os.path.join(args.work, name + "_sorted.h5")
        for P in ps:
            run_case(args, P, name, path, vals, dt, extra=["--no-sort", "--reproducible"], tag="_repro")
            run_case(args, P, name, path, vals, dt, extra=["--out", big, "--force"], tag="_sort")
            r = run_case(args, P, name, path, vals, dt, extra=["--no-sort"],
                         env=dict(os.environ, GPUPRIM_DEVICE_MEM_LIMIT="1"), tag="_chunked")
            if r:
                check(r[3]["chunks"] >= 2, f"{name} P={P}: not chunked ({r[3]['chunks']} chunks)")
    # the sum passes 64 bits where it should (else the cases would not test the carries)
    for name, path, vals, dt in cases:
        if name in ("i64_max_min_small", "i64_all_min", "u64_max_small", "u64_all_max", "u64_two"):
            check(not (I64_MIN <= sum(vals) <= U64_MAX), f"{name}: sum {sum(vals)} fits in 64 bits")


def test_float_sum_stays_float(args, rng):
    path = os.path.join(args.work, "f64.h5")
    a = rng.standard_normal(1001) * 1e3
    with h5py.File(path, "w") as f:
        f["v"] = a
    rj = os.path.join(args.work, "f64.json")
    p = run(args, args.nps[-1], [path, "--backend", args.backend, "--no-sort", "--quiet", "--json", rj])
    if check(p.returncode == 0, f"f64: exit {p.returncode}: {p.stderr[-300:]}"):
        r = read_report(rj)
        check(type(r["sum"]) is float, f"f64: JSON sum {r['sum']!r} is not a float")
        check(abs(r["sum"] - float(np.sum(a))) <= 1e-12 * float(np.sum(np.abs(a))), "f64: sum")


def function_run(args, P, fn, a, b, tag):
    rj = os.path.join(args.work, f"fn_{tag}_{P}.json")
    p = run(args, P, ["--function", fn, "--a", repr(a), "--b", repr(b), "--n", "100003",
                      "--backend", args.backend, "--json", rj])
    if not check(p.returncode == 0, f"function {fn} [{a}, {b}] P={P}: exit {p.returncode}: {p.stderr[-300:]}"):
        return None
    r = read_report(rj)
    return r["integral"], r["exact"], p.stdout


def test_function_order(args):
    cases = [("x2", 0.0, 3.0), ("sin", -1.0, 2.5), ("exp", -2.0, 1.0), ("gauss", -3.0, 0.5)]
    for P in (1, 2, 3):
        for fn, a, b in cases:
            fw = function_run(args, P, fn, a, b, f"{fn}_fw")
            bw = function_run(args, P, fn, b, a, f"{fn}_bw")
            if fw and bw:
                tag = f"function {fn} P={P}"
                check(bw[0] == -fw[0] and bw[0] != 0, f"{tag}: [b, a] gives {bw[0]!r}, [a, b] {fw[0]!r}")
                check(bw[1] == -fw[1], f"{tag}: exact [b, a] {bw[1]!r}, [a, b] {fw[1]!r}")
                check(abs(bw[0] - bw[1]) <= 1e-6 * abs(bw[1]), f"{tag}: reversed {bw[0]!r} vs exact {bw[1]!r}")
            eq = function_run(args, P, fn, a, a, f"{fn}_eq")
            if eq:
                check(eq[0] == 0.0 and eq[1] == 0.0, f"function {fn} P={P} a = b: {eq[0]!r}, exact {eq[1]!r}")
        x2 = function_run(args, P, "x2", 3.0, 0.0, "x2_3_0")
        if x2:
            check(x2[1] == -9.0 and abs(x2[0] + 9.0) < 1e-8, f"x2 from 3 to 0 P={P}: {x2[0]!r}, exact {x2[1]!r}")
            check(re.search(r"^  exact +-9$", x2[2], re.M) is not None, f"x2 from 3 to 0 P={P}: summary {x2[2]!r}")
    p = run(args, 1, ["--function", "x2", "--a", "1.5e308", "--b", "-1.5e308", "--backend", args.backend])
    check(p.returncode == 2 and "overflows" in p.stderr, f"b - a overflowing: exit {p.returncode}: {p.stderr[-300:]}")


def main():
    args = arg_parser(nps="1,2,3,4,5,6,7,8").parse_args()
    fresh_dir(args.work)
    seed = test_seed()
    print(f"e2e_intsum: nps={args.nps} backend={args.backend} io={args.io or 'default'} seed={seed}", flush=True)
    rng = np.random.default_rng(seed)
    if cuda_missing(args):
        return 77
    test_int_sums(args, make_cases(args.work, rng))
    test_float_sum_stays_float(args, rng)
    test_function_order(args)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""End-to-end tests of --cumsum and --cumulative-integral on h5py-written files, against exact
prefix sums (Python integers, the fractions' way: each float64 an exact integer multiple of
a common power of two, divided back with one rounding), numpy.nancumsum and
scipy.integrate.cumulative_trapezoid (its formula in numpy where scipy is missing).

usage: e2e_scan.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR --nps 1,2,...,8 --backend B
                   [--io posix|mpiio]

- every stored type (float16/32/64, big-endian, 8- to 64-bit integers of both signs):
  DATASET_cumsum float64 (floats) / int64 / uint64 and DATASET_cumint float64 in --out, every
  float output within 2^-45 * sum |term| of its exact prefix, integers exact;
- sizes 0, 1, 2, 31, 32, 33, 2^k +- 1, primes and 10^6, at rank counts that leave shards
  unequal and empty;
- NaN, +-inf and -0.0 on sums that are exact: the bits of numpy.nancumsum and of scipy's
  cumulative_trapezoid (NaN from a NaN sample on, +0.0 first);
- integer extremes: the largest prefixes that still fit, the first index whose prefix does
  not (also when it falls on another rank than the data that caused it): exit 4, one line
  naming it, no --out left;
- --x coordinates; the last cumulative integral against the printed integral; the summary's
  lines and the --json fields (an integer total as a JSON integer);
- on a device, shards longer than the 2^23-element sub-pieces (the download ring turning
  over inside a piece): numpy's and scipy's bits on exact sums;
- the chunked path (GPUPRIM_DEVICE_MEM_LIMIT=1): within the bound, and on the CPU backend the
  unchunked bits; the same bits over repeated runs at a fixed rank count; with the sort on,
  the sorted data beside the scans of the input order; the usage errors.
Exit 0 when all pass, 77 when --backend cuda finds no GPU.
"""
import json
import os
import re
import sys

import h5py
import numpy as np

np.seterr(all="ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import read_dtype  # noqa: E402  (the type gpuprim reads a stored type as)
from e2e_common import arg_parser, check, cuda_missing, fresh_dir, summary, test_seed  # noqa: E402
from e2e_common import run_gpuprim as run  # noqa: E402  (gpuprim_mpi under mpirun)

try:
    from scipy.integrate import cumulative_trapezoid
except ImportError:  # its formula: d * (y[1:] + y[:-1]) / 2.0, cumsum, initial 0
    def cumulative_trapezoid(y, x=None, dx=1.0, initial=None):
        d = np.diff(x) if x is not None else dx
        r = np.cumsum(d * (y[1:] + y[:-1]) / 2.0)
        return np.concatenate([[0.0], r]) if initial is not None else r

BOUND = 2.0 ** -45
DX = 0.375
I64_MAX, I64_MIN, U64_MAX = 2**63 - 1, -2**63, 2**64 - 1


def exact_prefix(terms):
    """The exact prefix sums of finite float64 terms, each rounded once to float64."""
    ratios = [v.as_integer_ratio() for v in terms.tolist()]
    k = max((q.bit_length() - 1 for _, q in ratios), default=0)
    s, den, out = 0, 1 << k, np.empty(len(ratios))
    for i, (p, q) in enumerate(ratios):
        s += p << (k - (q.bit_length() - 1))
        out[i] = s / den  # int / int: correctly rounded
    return out


def expected(terms, nan_poisons):
    """(exact prefixes, sum |term| prefixes, must-be-NaN, +inf, -inf, -0.0 masks) of a
    sequential float64 sum of terms (cumsum: NaN terms are +0.0, nan_poisons False)."""
    nan = np.isnan(terms)
    t = np.where(nan, 0.0, terms)
    pinf, ninf = np.maximum.accumulate(t == np.inf), np.maximum.accumulate(t == -np.inf)
    fin = np.where(np.isinf(t), 0.0, t)
    negz = np.minimum.accumulate((terms == 0) & np.signbit(terms) & ~nan) if len(t) else t
    bad = (pinf & ninf) | (np.maximum.accumulate(nan) if nan_poisons else np.zeros(len(t), bool))
    return exact_prefix(fin), np.cumsum(np.abs(fin)), bad, pinf & ~bad, ninf & ~bad, negz


def within(got, terms, nan_poisons=False):
    """The indices where got breaks the rule of a float scan of terms (empty: none)."""
    e, a, bad, pinf, ninf, negz = expected(terms, nan_poisons)
    ok = np.abs(got - e) <= BOUND * a + 2.0**-53 * np.abs(e)
    ok = np.where(bad, np.isnan(got), ok)
    ok = np.where(pinf, got == np.inf, ok)
    ok = np.where(ninf, got == -np.inf, ok)
    ok = np.where(negz.astype(bool), (got == 0) & np.signbit(got), ok)
    return np.flatnonzero(~ok)


def trap_terms(yf, x):
    """scipy's terms, +0.0 first (initial=0 stands before them)."""
    d = np.diff(x) if x is not None else DX
    return np.concatenate([[0.0], d * (yf[1:] + yf[:-1]) / 2.0]) if len(yf) else yf


def same_bits(a, b):
    """Float64 arrays equal bit for bit, NaNs of any payload alike."""
    na, nb = np.isnan(a), np.isnan(b)
    return a.shape == b.shape and np.array_equal(na, nb) and \
        np.array_equal(a[~na].view(np.uint64), b[~nb].view(np.uint64))


def write(args, name, v, x=None):
    path = os.path.join(args.work, name + ".h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("v", data=v)
        if x is not None:
            f.create_dataset("x", data=x)
    return path


def scan_run(args, P, path, tag, extra=(), env=None, xname=None, sort=False):
    """One run with both scans; returns (process, outputs dict, JSON) or None on failure."""
    out = os.path.join(args.work, f"{tag}_P{P}.h5")
    rj = os.path.join(args.work, f"{tag}_P{P}.json")
    cmd = [path, "--dataset", "v", "--backend", args.backend, "--cumsum", "--cumulative-integral",
           "--out", out, "--force", "--json", rj] + ([] if sort else ["--no-sort"]) + list(extra)
    cmd += ["--x", xname] if xname else ["--dx", repr(DX)]
    p = run(args, P, cmd, env=env)
    if not check(p.returncode == 0, f"{tag} P={P}: exit {p.returncode}: {p.stderr[-400:]}"):
        return None
    with h5py.File(out, "r") as f:
        got = {k: f[k][()] for k in f}
    return p, got, json.load(open(rj))


def check_scans(tag, v, got, x=None):
    """The two datasets of a run on v (stored values) against the references."""
    rt = read_dtype(v.dtype)
    a = v.astype(rt)
    yf = a.astype(np.float64)
    cs, ci = got.get("v_cumsum"), got.get("v_cumint")
    if not check(cs is not None and ci is not None and cs.shape == v.shape and ci.shape == v.shape,
                 f"{tag}: datasets {sorted(got)}"):
        return
    if a.dtype.kind == "f":
        check(cs.dtype == np.float64, f"{tag}: cumsum dtype {cs.dtype}")
        bad = within(cs, yf)
        check(len(bad) == 0, f"{tag}: cumsum off at {bad[:5]}: {cs[bad[:3]]} vs nancumsum "
                             f"{np.nancumsum(yf)[bad[:3]]}")
    else:
        want = np.int64 if a.dtype.kind == "i" else np.uint64
        ref = np.cumsum([int(t) for t in a.tolist()]) if len(a) else np.array([], dtype=object)
        check(cs.dtype == want and [int(t) for t in cs.tolist()] == [int(t) for t in ref.tolist()],
              f"{tag}: integer cumsum ({cs.dtype}) differs from Python's exact prefixes")
    check(ci.dtype == np.float64, f"{tag}: cumint dtype {ci.dtype}")
    bad = within(ci, trap_terms(yf, x), nan_poisons=True)
    check(len(bad) == 0 and (len(ci) == 0 or (ci[0] == 0 and not np.signbit(ci[0]))),
          f"{tag}: cumint off at {bad[:5]}: {ci[bad[:3]]}")
    if len(yf) >= 2:
        sc = cumulative_trapezoid(yf, x=x, dx=DX, initial=0) if x is not None else \
            cumulative_trapezoid(yf, dx=DX, initial=0)
        scale = np.cumsum(np.abs(np.nan_to_num(trap_terms(yf, x), posinf=0, neginf=0)))
        tol = (BOUND + len(yf) * 2.0**-53) * scale  # ours, and scipy's sequential sum's worst case
        ok = (ci == sc) | (np.isnan(ci) & np.isnan(sc)) | (np.abs(ci - sc) <= tol)
        check(bool(ok.all()), f"{tag}: cumint vs scipy at {np.flatnonzero(~ok)[:5]}")


def test_types(args, rng):
    types = [np.float32, np.float64, ">f8", np.float16, np.int8, np.int16, np.int32, ">i4",
             np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
    for dt in types:
        n = 1001
        # integers over half their range, the 64-bit ones over 2^52 (their sums fit)
        kind = np.dtype(dt).kind
        if kind == "f":
            v = (rng.standard_normal(n) * 100).astype(dt)
        else:
            lo, hi = np.iinfo(dt).min // 2, np.iinfo(dt).max // 2
            if np.dtype(dt).itemsize == 8:
                lo, hi = (0 if kind == "u" else -2**52), 2**52
            v = rng.integers(lo, hi, n, endpoint=True).astype(dt)
        path = write(args, f"type_{np.dtype(dt).str[1:]}", v)
        for P in sorted({args.nps[0], args.nps[-1]}):
            r = scan_run(args, P, path, f"type_{np.dtype(dt).str[1:]}")
            if r:
                check_scans(f"{np.dtype(dt)} P={P}", v, r[1])


def test_sizes(args, rng):
    sizes = [0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 129, 4095, 4096, 4097, 1009, 65537]
    for k, n in enumerate(sizes):
        v = rng.standard_normal(n)
        vi = rng.integers(-10**6, 10**6, n).astype(np.int32)
        x = np.cumsum(rng.random(n) + 0.01)
        pf, pi = write(args, f"size_f{n}", v, x), write(args, f"size_i{n}", vi)
        for P in sorted({args.nps[k % len(args.nps)], args.nps[(k + 3) % len(args.nps)]}):
            r = scan_run(args, P, pf, f"size_f{n}", xname="x")
            if r:
                check_scans(f"f64 n={n} P={P} --x", v, r[1], x)
                last = r[1]["v_cumint"][-1] if n else 0.0
                scale = np.sum(np.abs(trap_terms(v, x)))
                check(r[2]["cumint_last"] == last and
                      abs(last - r[2]["integral"]) <= BOUND * scale + 1e-300,
                      f"n={n} P={P}: last cumint {last!r}, JSON {r[2]['cumint_last']!r}, "
                      f"integral {r[2]['integral']!r}")
            r = scan_run(args, P, pi, f"size_i{n}")
            if r:
                check_scans(f"i32 n={n} P={P}", vi, r[1])
                check(r[2]["cumsum_total"] == int(np.sum(vi, dtype=np.int64)) and
                      type(r[2]["cumsum_total"]) is int, f"i32 n={n} P={P}: JSON total")


def test_special(args):
    """Exact sums (small integers, dx 3/8): the bits of nancumsum and of scipy."""
    v = np.array([-0.0, -0.0, 3, np.nan, -0.0, 5, np.inf, 2, -7, np.nan, 1, -np.inf, 4, 0.0] * 73)
    v[:3] = -0.0
    z = np.full(37, -0.0)
    for name, a in (("special", v), ("negzero", z), ("special_f32", v.astype(np.float32))):
        path = write(args, name, a)
        for P in args.nps:
            r = scan_run(args, P, path, name)
            if not r:
                continue
            yf = a.astype(np.float64)
            cs, ci = r[1]["v_cumsum"], r[1]["v_cumint"]
            check(same_bits(cs, np.nancumsum(yf)), f"{name} P={P}: cumsum is not numpy.nancumsum's "
                                                   f"bits: {cs[:8]} vs {np.nancumsum(yf)[:8]}")
            check(same_bits(ci, cumulative_trapezoid(yf, dx=DX, initial=0)),
                  f"{name} P={P}: cumint is not scipy's bits: {ci[:8]}")


def test_big(args, rng):
    n = 10**6
    v = (rng.standard_normal(n) * 1e3).astype(np.float32)
    v[::1000] = (rng.standard_normal(n // 1000) * 1e7).astype(np.float32)
    path = write(args, "big_f32", v)
    for P in sorted({1, args.nps[-1]}):
        r = scan_run(args, P, path, "big_f32")
        if r:
            check_scans(f"10^6 f32 P={P}", v, r[1])


def test_subpieces(args, rng):
    """Large shards on a device, two ways (ph_scan.c): with --no-sort the outputs stay in
    device memory for the write (outputs_on_device); with the sort after them they go down
    in sub-pieces of 2^23 elements through the download ring (dl_ring.h). Shards of
    2^23 + 6172 to 2^24 + 12345 elements, so that the ring turns over inside a piece. Small
    integers as float32 and dx 3/8 keep every prefix exact, so both outputs must be numpy's
    and scipy's bits (a sub-piece out of place, or one overwritten before it came down,
    cannot hide in the bound). The CPU backend writes each piece in one call: nothing to cut
    there."""
    if args.backend == "cpu":
        return
    n = 2**24 + 12345
    v = rng.integers(-1000, 1000, n, endpoint=True).astype(np.float32)
    path = write(args, "subpieces", v)
    yf = v.astype(np.float64)
    for P, sort in ((1, False), (2, False), (2, True)):
        tag = f"sub-pieces P={P}{' sorted' if sort else ''}"
        r = scan_run(args, P, path, "subpieces", sort=sort)
        if not r:
            continue
        cs, ci = r[1]["v_cumsum"], r[1]["v_cumint"]
        bad = np.flatnonzero(cs != np.cumsum(yf))
        check(len(bad) == 0, f"{tag}: cumsum differs at {bad[:5]}")
        bad = np.flatnonzero(ci != cumulative_trapezoid(yf, dx=DX, initial=0))
        check(len(bad) == 0, f"{tag}: cumint differs at {bad[:5]}")
        check(r[2]["cumint_last"] == ci[-1], f"{tag}: JSON cumint_last")
        if sort:
            check(np.array_equal(r[1]["v"], np.sort(v)), f"{tag}: the sorted values")


def test_overflow(args):
    ok_cases = [("fit_i64", np.array([I64_MAX - 1, 1], np.int64), I64_MAX),
                ("fit_i64_min", np.array([I64_MIN + 1, -1, 3, -3], np.int64), I64_MIN),
                ("fit_u64", np.array([U64_MAX - 3, 3, 0], np.uint64), U64_MAX)]
    for name, a, last in ok_cases:
        path = write(args, name, a)
        for P in sorted({1, 2, args.nps[-1]}):
            r = scan_run(args, P, path, name)
            if r:
                cs = r[1]["v_cumsum"]
                check(int(cs[-1]) == last and r[2]["cumsum_total"] == last,
                      f"{name} P={P}: last {int(cs[-1])}, JSON {r[2]['cumsum_total']}, want {last}")
                check(re.search(rf"^  cumsum +\S+ \([iu]64\), total {last}$", r[0].stdout, re.M),
                      f"{name} P={P}: summary line: {r[0].stdout[-300:]}")
    bad_cases = [("over_i64", np.array([I64_MAX - 1, 1, 1, -5], np.int64), 2),
                 ("over_i64_neg", np.array([I64_MIN, 5, -5, -1, 0, 0, 0, 0], np.int64), 3),
                 ("over_u64", np.array([U64_MAX] + [0] * 6 + [1], np.uint64), 7),
                 ("over_i32_many", np.full(8, 2**31 - 1, np.int32), None)]
    for name, a, idx in bad_cases:
        path = write(args, name, a)
        for P in sorted({1, 3, args.nps[-1]}):
            out = os.path.join(args.work, f"{name}_P{P}.h5")
            p = run(args, P, [path, "--backend", args.backend, "--no-sort", "--cumsum",
                              "--out", out])
            if idx is None:  # int32 sums never leave int64: fine
                check(p.returncode == 0, f"{name} P={P}: exit {p.returncode}")
                continue
            err = [l for l in p.stderr.splitlines() if "error" in l]
            left = os.path.exists(out)
            check(p.returncode == 4 and len(err) >= 1 and f"at index {idx} does not fit" in err[0]
                  and not left, f"{name} P={P}: exit {p.returncode}, {err[:1]}, left: {left}")


def test_chunked_determinism_sort(args, rng):
    n = 40009
    v = rng.standard_normal(n)
    x = np.cumsum(rng.random(n))
    path = write(args, "chunk", v, x)
    env = dict(os.environ, GPUPRIM_DEVICE_MEM_LIMIT="1")
    for P in sorted({1, 3, args.nps[-1]}):
        whole = scan_run(args, P, path, "chunk_whole", xname="x")
        r = scan_run(args, P, path, "chunk", xname="x", env=env)
        if not (r and whole):
            continue
        check(r[2]["chunks"] >= 2, f"chunked P={P}: {r[2]['chunks']} chunks")
        check_scans(f"chunked P={P}", v, r[1], x)
        if args.backend == "cpu":  # 4096-element chunks keep the 64-element blocks
            check(all(r[1][k].tobytes() == whole[1][k].tobytes() for k in ("v_cumsum", "v_cumint")),
                  f"chunked P={P}: not the unchunked bits")
    w = (rng.standard_normal(100003) * 10).astype(np.float32)
    path = write(args, "det", w)
    for P in sorted({2, args.nps[-1]}):
        runs = [scan_run(args, P, path, f"det{k}") for k in range(3)]
        if all(runs):
            check(all(r[1][k].tobytes() == runs[0][1][k].tobytes() for r in runs
                      for k in ("v_cumsum", "v_cumint")), f"determinism P={P}: bits differ")
    for P in sorted({1, 2, args.nps[-1]}):
        r = scan_run(args, P, path, "sorted", sort=True)
        if r:
            check(np.array_equal(r[1]["v"], np.sort(w)), f"sort + scans P={P}: sorted data")
            check_scans(f"sort + scans P={P}", w, r[1])


def test_usage(args):
    path = write(args, "usage", np.arange(10.0))
    for extra, what in ((["--cumsum"], "--cumsum writes a dataset of --out"),
                        (["--cumulative-integral", "--no-sort"], "--cumulative-integral writes"),
                        (["--no-sort", "--out", os.path.join(args.work, "u.h5")],
                         "--cumsum, --cumulative-integral or --histogram")):
        p = run(args, 1, [path, "--backend", args.backend] + extra)
        check(p.returncode == 2 and what in p.stderr,
              f"{extra}: exit {p.returncode}: {p.stderr[-200:]}")
    p = run(args, 1, ["--function", "x2", "--cumsum"])
    check(p.returncode == 2 and "--cumsum belongs to file mode" in p.stderr,
          f"--function --cumsum: {p.stderr[-200:]}")


def main():
    args = arg_parser(nps="1,2,3,4,5,6,7,8").parse_args()
    fresh_dir(args.work)
    seed = test_seed()
    print(f"e2e_scan: nps={args.nps} backend={args.backend} io={args.io or 'default'} "
          f"seed={seed}", flush=True)
    rng = np.random.default_rng(seed)
    if cuda_missing(args):
        return 77
    for test in (test_usage, test_special, test_overflow):
        test(args)
    for test in (test_types, test_sizes, test_big, test_subpieces, test_chunked_determinism_sort):
        test(args, rng)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

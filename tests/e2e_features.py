#!/usr/bin/env python3
"""End-to-end tests of --descending, --stable, --argsort, --payload and --reproducible on
h5py-written files, for several rank counts in one test, checked with numpy and math.fsum.

usage: e2e_features.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR --nps 1,3,4 --backend B
                       [--transport auto|shared|mpi [--compare-transport T]]

- order: values equal numpy's order under gpuprim's conventions (NaN last in both orders;
  -0.0 before +0.0 ascending, after it descending), every element type;
- --stable --argsort: the argsort equals numpy's stable order (value, then input position);
  without --stable, a[argsort] equals the sorted values and argsort is a permutation;
- --payload: the payload dataset comes back permuted by the argsort, in its own stored type;
- --transport T for every sort; with --compare-transport T2 each sort runs again with T2 and
  must write the same bytes (values, argsort, payload);
- --reproducible: sum, mean, L2 norm and integral are the same bits for every rank count,
  and the sum equals math.fsum (both correctly rounded) on adversarial data (1e-300..1e300,
  massive cancellation); the default float64 sum's error against math.fsum is printed and
  bounded by n * 2^-53 * sum|x|.
Exit 0 when all pass, 77 when --backend cuda finds no GPU.
"""
import math
import os
import sys

import h5py
import numpy as np

np.seterr(all="ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import keys, read_dtype  # noqa: E402  (the same order keys as the main e2e test)
from e2e_common import arg_parser, check, cuda_missing, fresh_dir, summary, test_seed  # noqa: E402
from e2e_common import read_report  # noqa: E402
from e2e_common import run_gpuprim as run  # noqa: E402  (gpuprim_mpi under mpirun: run(args, P, options))


def ref_order(a, descending, stable):
    """Input positions in gpuprim's order (stable: ties by position)."""
    k = keys(a).astype(np.uint64)
    if descending:
        # NaN keys (all ones) stay last; every other key is flipped
        top = np.uint64(0xFFFFFFFF if a.dtype.itemsize == 4 else 0xFFFFFFFFFFFFFFFF)
        isnan = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.size, bool)
        k = np.where(isnan, top, top - k)
    return np.lexsort((np.arange(a.size), k)) if stable else np.argsort(k, kind="stable")


def same_values(x, y):
    if x.dtype.kind != "f":
        return np.array_equal(x, y)
    nx, ny = np.isnan(x), np.isnan(y)
    u = np.uint32 if x.itemsize == 4 else np.uint64
    return np.array_equal(nx, ny) and np.array_equal(x[~nx].view(u), y[~ny].view(u))


def test_order(args, rng):
    cases = [("f64", np.float64), ("f32", np.float32), ("i32", ">i4"), ("i64", np.int64),
             ("u32", np.uint32), ("u64", np.uint64), ("i16", np.int16)]
    for name, dt in cases:
        n = 4099
        a = rng.integers(0, 40, n).astype(dt)  # many ties
        if np.dtype(dt).kind == "f":
            a = a.astype(dt)
            a[rng.choice(n, 60, replace=False)] = np.nan
            a[rng.choice(n, 30, replace=False)] = -0.0
            a[rng.choice(n, 30, replace=False)] = 0.0
            a[rng.choice(n, 10, replace=False)] = np.inf
            a[rng.choice(n, 10, replace=False)] = -np.inf
        path = os.path.join(args.work, f"ord_{name}.h5")
        pay = rng.integers(-2**40, 2**40, n).astype(np.int64)
        with h5py.File(path, "w") as f:
            f.create_dataset("v", data=a)
            f.create_dataset("p", data=pay)
        ar = a.astype(read_dtype(a.dtype))
        for desc in (False, True):
            for stable in (False, True):
                for P in args.nps:
                    out = os.path.join(args.work, f"ord_{name}_{int(desc)}{int(stable)}_{P}.h5")
                    cmd = [path, "--dataset", "v", "--backend", args.backend, "--quiet", "--out", out,
                           "--force", "--argsort", "--payload", "p"]
                    cmd += ["--descending"] if desc else []
                    cmd += ["--stable"] if stable else []
                    p = run(args, P, cmd + ["--transport", args.transport])
                    tag = f"{name} desc={desc} stable={stable} P={P}"
                    check(p.returncode == 0, f"{tag}: exit {p.returncode}: {p.stderr[-300:]}")
                    if p.returncode:
                        continue
                    with h5py.File(out, "r") as f:
                        v = f["v"][()].astype(read_dtype(a.dtype))
                        idx = f["v_argsort"][()]
                        pv = f["p"][()]
                        check(f["v"].dtype == a.dtype and f["p"].dtype == pay.dtype, f"{tag}: stored types")
                    order = ref_order(ar, desc, stable)
                    check(same_values(v, ar[order]), f"{tag}: values out of order")
                    check(np.array_equal(np.sort(idx), np.arange(n)), f"{tag}: argsort not a permutation")
                    check(same_values(ar[idx], v), f"{tag}: a[argsort] != sorted values")
                    check(np.array_equal(pv, pay[idx]), f"{tag}: payload not permuted with the values")
                    if stable:
                        check(np.array_equal(idx, order), f"{tag}: argsort differs from the stable order")
                    if args.compare_transport:
                        same_as_other_transport(args, P, cmd, out, tag)


def same_as_other_transport(args, P, cmd, out, tag):
    """The sort of cmd again with --transport args.compare_transport writes the same bytes."""
    other = args.compare_transport
    out2 = out + "." + other + ".h5"
    p = run(args, P, [out2 if c == out else c for c in cmd] + ["--transport", other])
    if not check(p.returncode == 0, f"{tag} --transport {other}: exit {p.returncode}: {p.stderr[-300:]}"):
        return
    with h5py.File(out, "r") as f, h5py.File(out2, "r") as g:
        for d in ("v", "v_argsort", "p"):
            check(f[d][()].tobytes() == g[d][()].tobytes(),
                  f"{tag}: {d} differs between --transport {args.transport} and {other}")


def test_reproducible(args, rng):
    n = 50021
    # adversarial: magnitudes 1e-300..1e300, +x/-x pairs that cancel, tiny survivors
    e = rng.uniform(-300, 300, n // 2)
    big = np.sign(rng.standard_normal(n // 2)) * 10.0 ** e
    a = np.concatenate([big, -big, rng.standard_normal(n - 2 * (n // 2)) * 1e-3])
    a[rng.choice(a.size, 5, replace=False)] *= 1.0 + 2.0 ** -40  # break some cancellations
    rng.shuffle(a)
    ints = rng.integers(-2**63, 2**63 - 1, 10007, dtype=np.int64)
    ints[:50] = np.iinfo(np.int64).max
    path = os.path.join(args.work, "adv.h5")
    with h5py.File(path, "w") as f:
        f["a"] = a
        f["i"] = ints
        f["f"] = rng.standard_normal(65537).astype(np.float32)
    for dset, exact in (("a", math.fsum(a)), ("i", float(sum(int(x) for x in ints))),
                        ("f", math.fsum(h5py.File(path, "r")["f"][()].astype(np.float64)))):
        got = {}
        plain = {}
        for P in args.nps:
            for repro in (True, False):
                rj = os.path.join(args.work, f"adv_{dset}_{P}_{int(repro)}.json")
                cmd = [path, "--dataset", dset, "--backend", args.backend, "--quiet", "--no-sort", "--json", rj]
                cmd += ["--reproducible"] if repro else []
                p = run(args, P, cmd)
                check(p.returncode == 0, f"adv {dset} P={P}: exit {p.returncode}: {p.stderr[-300:]}")
                if p.returncode == 0:
                    r = read_report(rj)
                    (got if repro else plain)[P] = (r["sum"], r["mean"], r["l2_norm"], r["integral"])
        vals = list(got.values())
        check(len(vals) == len(args.nps) and all(v == vals[0] for v in vals),
              f"adv {dset}: --reproducible results differ between rank counts: {got}")
        if vals:
            s = float(vals[0][0])
            check(s == exact, f"adv {dset}: reproducible sum {s!r} != math.fsum {exact!r}")
        y = h5py.File(path, "r")[dset][()].astype(np.float64)
        bound = y.size * 2.0 ** -53 * float(np.sum(np.abs(y)))
        for P, v in plain.items():
            err = abs(float(v[0]) - exact)
            print(f"adv {dset} P={P}: default float64 sum error {err:.3e} (bound {bound:.3e}); "
                  f"reproducible sum error {abs(float(vals[0][0]) - exact) if vals else float('nan'):.3e}")
            check(err <= bound, f"adv {dset} P={P}: default sum error {err} over bound {bound}")


def jnum(v):
    """A JSON number or one of the strings "nan", "inf", "-inf" as a float."""
    return float(v)


def test_trapezoid_edges(args):
    """The uniform --dx rule of samples with infinite or huge ends, against the exact
    values: inf - inf must not turn a +-inf integral into NaN, and y0 + y_{N-1} must not
    overflow where the integral does not."""
    inf = math.inf
    cases = [([inf, 1.0, 2.0], 1.0, inf), ([1.0, 2.0, inf], 1.0, inf), ([-inf, 1.0, 2.0], 1.0, -inf),
             ([inf, inf], 1.0, inf), ([inf, 1.0, 2.0], -0.5, -inf), ([inf, 1.0, -inf], 1.0, math.nan),
             ([1.7e308, -1.7e308, 1.7e308], 1.0, 0.0), ([1.0, 2.0, 3.0, 4.0], -0.5, -3.75)]
    for k, (y, dx, want) in enumerate(cases):
        path = os.path.join(args.work, f"trap{k}.h5")
        with h5py.File(path, "w") as f:
            f["y"] = np.array(y)
        for P in args.nps:
            for repro in (False, True):
                rj = os.path.join(args.work, f"trap{k}_{P}_{int(repro)}.json")
                cmd = [path, "--backend", args.backend, "--quiet", "--no-sort", "--dx", repr(dx),
                       "--json", rj] + (["--reproducible"] if repro else [])
                p = run(args, P, cmd)
                tag = f"trapezoid {y} dx {dx} P={P}{' --reproducible' if repro else ''}"
                if check(p.returncode == 0, f"{tag}: exit {p.returncode}: {p.stderr[-300:]}"):
                    got = jnum(read_report(rj)["integral"])
                    check(got == want or (math.isnan(want) and math.isnan(got)),
                          f"{tag}: integral {got!r}, want {want!r}")


def main():
    ap = arg_parser(nps="1,3,4")
    ap.add_argument("--transport", default="auto", choices=["auto", "shared", "mpi"])
    ap.add_argument("--compare-transport", default=None, choices=["auto", "shared", "mpi"])
    args = ap.parse_args()
    fresh_dir(args.work)
    seed = test_seed()
    print(f"e2e_features: nps={args.nps} backend={args.backend} transport={args.transport} "
          f"io={args.io or 'default'} seed={seed}", flush=True)
    rng = np.random.default_rng(seed)
    if cuda_missing(args):
        return 77
    test_order(args, rng)
    test_reproducible(args, rng)
    test_trapezoid_edges(args)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""End-to-end tests of the distribution of a dataset (--histogram N [--range A B],
--quantiles / --median, --distinct) on h5py-written files, against numpy.

usage: e2e_dist.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR --nps 1,3 --backend B
                   [--set full|ranks|chunked]

References (tests/np_dist_ref.py): the histogram is numpy 2's numpy.histogram of the finite
values (the edges, the bin rule with its corrections, the closed last bin; the float32 rule
of numpy 2, written with typed arrays so that numpy 1.x runs it too), checked against the
running numpy's own numpy.histogram where that is numpy 2, or where numpy 1.x agrees (float64
and integer data, float32 data with --range); the quantiles are numpy's nanquantile(a, [q])
(linear) bit for bit, checked against the running numpy's own where numpy's arithmetic does
not break down, and gpuprim's documented rule where it does (inf - inf, integers further apart
than their type, a float difference that overflows); the distinct count is
len(numpy.unique(non-NaN values)).

--set full (every rank count of --nps): every dtype, datasets of 0, 2, 1025 (values exactly on
  the bin edges), 4097 (all equal) and 100003 (a prime; NaN, +-inf, -0.0 and +0.0 among
  normals, or integers over the whole type with its extremes) elements, all-NaN and infinite
  data, the integer extremes; with the sort (histogram, quantiles at q = 0, 1, values that
  fall exactly on an element and between, --distinct, --out's DATASET_hist_counts and
  DATASET_hist_edges, --median) and, for most, without it (--no-sort: a --range, the radix
  select): the quantiles of both the same bits; --descending the same quantiles and count;
  refusals (too many bins for the data range, a float32 range outside float32): exit 2, one
  line naming the file and dataset, no output file; with --no-sort, --out holds only
  DATASET_hist_counts and DATASET_hist_edges.
--set ranks: a few datasets at every rank count (1 to 8: unequal shards, empty ones).
--set chunked: --no-sort with GPUPRIM_DEVICE_MEM_LIMIT (the shard in chunks, re-read for each
  pass): the same counts and quantile bits as unchunked, and as numpy.
Exit 0 when all pass, 77 when --backend cuda finds no GPU.
"""
import json
import math
import os
import struct
import sys

import h5py
import numpy as np

np.seterr(all="ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (arg_parser, check, cuda_missing, fresh_dir, read_report, run_gpuprim,  # noqa: E402
                        summary, test_seed)
from np_dist_ref import np2_histogram, numpy_is_2, quantile_ref  # noqa: E402

QS = [0.0, 1.0, 0.5, 0.25, 0.01, 0.99, 0.999, 1 / 3, 1e-9, 0.7]
TYPES = [np.float32, np.float64, np.int32, np.int64, np.uint32, np.uint64]
CHUNK_LIMIT = 1 << 20  # GPUPRIM_DEVICE_MEM_LIMIT of the chunked runs


def jnum(v):
    """A JSON number of the report (version 1's "nan", "inf", "-inf" as strings) as a float."""
    return float(v) if isinstance(v, str) else float(v)


def same(x, y, zero_sign=False):
    """x and y the same float (both NaN counts as the same); zero_sign: -0.0 != +0.0."""
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if zero_sign:
        return struct.pack("<d", x) == struct.pack("<d", y)
    return x == y


def nonnan(a):
    return a[~np.isnan(a)] if a.dtype.kind == "f" else a


# ---- the data ---------------------------------------------------------------------------------

def make_data(rng, t):
    """The datasets of type t: {name: array}."""
    d = {}
    if np.dtype(t).kind == "f":
        a = (rng.standard_normal(100003) * 100.0).astype(t)
        idx = rng.choice(a.size, 146, replace=False)
        a[idx[:37]] = np.nan
        a[idx[37:42]] = np.inf
        a[idx[42:46]] = -np.inf
        a[idx[46:96]] = -0.0
        a[idx[96:]] = 0.0
        d["rand"] = a
        e = (rng.standard_normal(1009) * 3.0).astype(t)
        edges = np2_histogram(e, 16)[1].astype(t)
        d["edges"] = np.concatenate([e, edges])  # values exactly on the bin edges
        d["equal"] = np.full(4097, 3.25, t)
        d["infs"] = np.array([-np.inf, np.inf, 1.0, np.nan, -np.inf, 2.5, np.nan], t)
        d["allnan"] = np.full(5, np.nan, t)
        d["n2"] = np.array([-0.0, 0.0], t)
    else:
        info = np.iinfo(t)
        a = rng.integers(info.min, info.max, 100003, dtype=t, endpoint=True)
        a[rng.choice(a.size, 20, replace=False)] = info.min
        a[rng.choice(a.size, 20, replace=False)] = info.max
        d["rand"] = a
        lo = 0 if info.min == 0 else -50
        d["edges"] = rng.integers(lo, lo + 101, 1025).astype(t)  # 100 bins of width 1
        d["equal"] = np.full(4097, 7, t)
        d["n2"] = np.array([info.min, info.max], t)
        d["extremes"] = np.array([info.min, info.max, info.min + 1, info.max - 1, 0, 1,
                                  info.max // 2, info.min // 2], t)
    d["n0"] = np.zeros(0, t)
    return d


def write_file(path, datasets):
    with h5py.File(path, "w") as f:
        for name, a in datasets.items():
            f[name] = a


# ---- running and checking -------------------------------------------------------------------

def check_layout(tag, raw, version):
    """The quantile values as report `version` writes them: a number, or a non-finite one as
    null named by its place in non_finite (2) or as its string in place (1)."""
    texts = ("nan", "inf", "-inf")
    nf = raw.get("non_finite")
    for i, g in enumerate(raw.get("quantiles") or []):
        v = g["value"]
        if version == 2:
            ok = (isinstance(v, float) and math.isfinite(v)) or (
                v is None and nf.get(f"quantiles[{i}].value") in texts)
        else:
            ok = (isinstance(v, float) and math.isfinite(v)) or v in texts
        check(ok, f"{tag}: report version {version}: quantiles[{i}].value {v!r} (non_finite {nf})")
    check((raw.get("report_version"), nf is None) == ((2, False) if version == 2 else (None, True)),
          f"{tag}: report version {version}: report_version {raw.get('report_version')}")


def run_json(args, P, path, dset, opts, tag, env=None, version=2):
    """gpuprim_mpi PATH --dataset DSET OPTS --json J --json-version VERSION --quiet: the report
    (read_report's: version 2's nulls back as floats), or None (a failed check) when the run
    failed."""
    js = os.path.join(args.work, "r.json")
    if os.path.exists(js):
        os.remove(js)
    p = run_gpuprim(args, P, [path, "--dataset", dset, "--backend", args.backend, "--quiet",
                              "--json", js, "--json-version", str(version)] + opts, env=env)
    if not check(p.returncode == 0, f"{tag}: exit {p.returncode}: {p.stderr.strip()[-400:]}"):
        return None
    with open(js) as f:
        check_layout(tag, json.load(f), version)
    return read_report(js)


def hist_refs(a, bins, rng):
    """(counts, edges, below, above) of the finite values' histogram, numpy 2's rule; below /
    above count the non-NaN values outside (the infinities too)."""
    fin = a[np.isfinite(a)] if a.dtype.kind == "f" else a
    c, e = np2_histogram(fin, bins, rng)
    nn = nonnan(a)
    if rng is None:
        below = int(np.sum(nn == -np.inf)) if a.dtype.kind == "f" else 0
        above = int(np.sum(nn == np.inf)) if a.dtype.kind == "f" else 0
        return c, e, below, above
    lo, hi = float(rng[0]), float(rng[1])
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    if a.dtype == np.float32:
        x, lo, hi = nn, np.float32(lo), np.float32(hi)
    else:
        x = nn.astype(np.float64)
    return c, e, int(np.sum(x < lo)), int(np.sum(x > hi))


def check_hist(tag, js, a, bins, rng):
    h = js.get("histogram")
    if not check(h is not None, f"{tag}: no histogram in --json"):
        return
    c, e, below, above = hist_refs(a, bins, rng)
    check(h["counts"] == [int(x) for x in c], f"{tag}: counts differ from numpy 2's rule in "
          f"{sum(1 for x, y in zip(h['counts'], c) if x != y)} bins")
    check(len(h["edges"]) == bins + 1 and all(same(jnum(x), float(y)) for x, y in zip(h["edges"], e)),
          f"{tag}: edges differ from numpy 2's")
    check(h["edge_dtype"] == ("f32" if a.dtype == np.float32 else "f64"), f"{tag}: edge dtype {h['edge_dtype']}")
    check((h["below"], h["above"]) == (below, above), f"{tag}: below/above {h['below']}/{h['above']}, want {below}/{above}")
    check(sum(h["counts"]) + h["below"] + h["above"] == len(nonnan(a)), f"{tag}: counts + below + above != non-NaN values")
    # the running numpy itself, where it computes numpy 2's answer
    fin = a[np.isfinite(a)] if a.dtype.kind == "f" else a
    if numpy_is_2() or a.dtype != np.float32 or rng is not None:
        nc, ne = np.histogram(fin, bins=bins, range=rng)
        check(h["counts"] == [int(x) for x in nc] and all(same(jnum(x), float(y)) for x, y in zip(h["edges"], ne)),
              f"{tag}: differs from numpy {np.__version__}'s numpy.histogram")


def check_quantiles(tag, js, a, qs):
    got = js.get("quantiles") or []
    if not check(len(got) == len(qs), f"{tag}: {len(got)} quantiles, want {len(qs)}"):
        return
    s = np.sort(nonnan(a))
    for g, q in zip(got, qs):
        want, rule = quantile_ref(s, q)
        v = jnum(g["value"])
        check(jnum(g["q"]) == q and same(v, want), f"{tag}: q={q!r}: {v!r}, want {want!r}"
              f"{' (the documented rule)' if rule else ''}")
        if not rule and s.size:
            npv = float(np.nanquantile(a, [q])[0])
            check(same(v, npv), f"{tag}: q={q!r}: {v!r}, numpy {np.__version__} {npv!r}")


def check_same_quantiles(tag, j1, j2):
    """Two runs' quantiles the same bits (with and without the sort; two layouts)."""
    a, b = j1.get("quantiles") or [], j2.get("quantiles") or []
    check(len(a) == len(b) and all(same(jnum(x["value"]), jnum(y["value"]), True) for x, y in zip(a, b)),
          f"{tag}: the quantiles differ between the runs: {[x['value'] for x in a]} vs {[y['value'] for y in b]}")


def check_out(tag, out, dset, js, a):
    """--out holds DATASET_hist_counts (int64) and DATASET_hist_edges (the bin type) as the
    report says."""
    with h5py.File(out, "r") as f:
        c, e = f[dset + "_hist_counts"], f[dset + "_hist_edges"]
        check(c.dtype == np.int64 and list(c[...]) == js["histogram"]["counts"], f"{tag}: --out counts")
        et = np.float32 if a.dtype == np.float32 else np.float64
        check(e.dtype == et and all(same(float(x), jnum(y)) for x, y in zip(e[...], js["histogram"]["edges"])),
              f"{tag}: --out edges ({e.dtype})")


# ---- the sets ---------------------------------------------------------------------------------

def qopt(qs):
    return ["--quantiles", ",".join(repr(q) for q in qs)]


def bins_of(name, a):
    return {"edges": 100 if a.dtype.kind in "iu" else 16, "equal": 5, "rand": 1000}.get(name, 3)


def run_dataset(args, P, path, name, a, unsorted=True, desc=False):
    """One dataset: the sorted run (histogram, quantiles, distinct, --out), and the --no-sort
    run (--range, the radix select) with the same quantile bits."""
    tag = f"P={P} {a.dtype}:{name}"
    bins = bins_of(name, a)
    out = os.path.join(args.work, "o.h5")
    if os.path.exists(out):
        os.remove(out)
    js = run_json(args, P, path, name, ["--histogram", str(bins), "--distinct", "--out", out]
                  + qopt(QS) + ["--median"], tag)
    if js:
        check_hist(tag, js, a, bins, None)
        check_quantiles(tag, js, a, QS)  # --median's 0.5 is in QS already: no new entry
        check(js.get("distinct") == len(np.unique(nonnan(a))), f"{tag}: distinct {js.get('distinct')}, "
              f"numpy.unique {len(np.unique(nonnan(a)))}")
        check_out(tag, out, "/" + name, js, a)
    if desc:
        jd = run_json(args, P, path, name, ["--descending", "--distinct"] + qopt(QS), tag + " --descending")
        if js and jd:
            check_same_quantiles(tag + " --descending", js, jd)
            check(jd.get("distinct") == js.get("distinct"), f"{tag} --descending: distinct {jd.get('distinct')}")
    if not unsorted:
        return
    fin = nonnan(a).astype(np.float64)
    fin = fin[np.isfinite(fin)]
    lo = float(np.quantile(fin, 0.2)) if fin.size else -1.0
    hi = float(np.quantile(fin, 0.9)) if fin.size else 1.0
    rng = (lo, hi)
    if os.path.exists(out):
        os.remove(out)
    # report version 1 here, 2 in the sorted run: both versions' quantiles the same bits
    jn = run_json(args, P, path, name, ["--no-sort", "--histogram", "7", "--range", repr(lo),
                                        repr(hi), "--out", out] + qopt(QS), tag + " --no-sort",
                  version=1)
    if jn:
        check_hist(tag + " --no-sort --range", jn, a, 7, rng)
        check_out(tag + " --no-sort", out, "/" + name, jn, a)
        with h5py.File(out, "r") as f:
            check(sorted(f.keys()) == sorted([name + "_hist_counts", name + "_hist_edges"]),
                  f"{tag} --no-sort: --out holds {sorted(f.keys())}, only the histogram's")
        check_quantiles(tag + " --no-sort", jn, a, QS)
        check(jn.get("quantiles_method") == "radix select" and jn.get("distinct") is None,
              f"{tag} --no-sort: method {jn.get('quantiles_method')}")
        if js:
            check_same_quantiles(tag + " sort vs --no-sort", js, jn)


def refusals(args, P, path):
    """Too many bins for the data range, and a float32 range outside float32: exit 2, one line
    naming the file and dataset, no output."""
    out = os.path.join(args.work, "refused.h5")
    for opts, why in ((["--histogram", "1000", "--dataset", "one"], "too many bins"),
                      (["--histogram", "4", "--range", "0", "1e39", "--dataset", "one"], "outside float32")):
        p = run_gpuprim(args, P, [path, "--backend", args.backend, "--quiet", "--out", out] + opts)
        lines = [l for l in p.stderr.splitlines() if "error" in l]
        check(p.returncode == 2 and len(lines) == 1 and f"{path}:/one: --histogram" in lines[0]
              and why in lines[0] and not os.path.exists(out),
              f"P={P} refusal ({why}): exit {p.returncode}, {lines}")


def set_full(args, rng):
    files = {}
    for t in TYPES:
        path = os.path.join(args.work, f"{np.dtype(t).name}.h5")
        files[t] = (path, make_data(rng, t))
        write_file(path, files[t][1])
    one = os.path.join(args.work, "one.h5")
    write_file(one, {"one": np.full(9, 1e8, np.float32)})
    for P in args.nps:
        for t in TYPES:
            path, data = files[t]
            for name, a in data.items():
                both = name in ("rand", "equal", "infs", "extremes", "allnan")
                run_dataset(args, P, path, name, a, unsorted=both,
                            desc=(name == "rand" and t == np.float64 and P == args.nps[0]))
        refusals(args, P, one)


def set_ranks(args, rng):
    data = {"f32": (rng.standard_normal(100003) * 10).astype(np.float32),
            "i64": rng.integers(-2**63, 2**63 - 1, 20011, dtype=np.int64, endpoint=True),
            "small5": np.array([3.0, -0.0, np.nan, 0.0, 3.0], np.float64)}
    data["f32"][::997] = np.nan
    path = os.path.join(args.work, "ranks.h5")
    write_file(path, data)
    for P in args.nps:
        for name, a in data.items():
            run_dataset(args, P, path, name, a)


def set_chunked(args, rng):
    a = rng.standard_normal(300007) * 1e3
    a[rng.choice(a.size, 101, replace=False)] = np.nan
    a[rng.choice(a.size, 7, replace=False)] = -np.inf
    b = (rng.standard_normal(300007) * 10).astype(np.float32)
    path = os.path.join(args.work, "chunked.h5")
    write_file(path, {"f64": a, "f32": b})
    env = dict(os.environ)
    env["GPUPRIM_DEVICE_MEM_LIMIT"] = str(CHUNK_LIMIT)
    for P in args.nps:
        for name, x in (("f64", a), ("f32", b)):
            tag = f"P={P} chunked {name}"
            opts = ["--no-sort", "--histogram", "1000"] + qopt(QS)
            jc = run_json(args, P, path, name, opts, tag, env=env)
            ju = run_json(args, P, path, name, opts, tag + " unchunked")
            if jc and ju:
                check(jc.get("chunks", 0) > 1, f"{tag}: {jc.get('chunks')} chunks (not chunked)")
                check_hist(tag, jc, x, 1000, None)
                check_quantiles(tag, jc, x, QS)
                check_same_quantiles(tag + " vs unchunked", jc, ju)
                check(jc["histogram"] == ju["histogram"], f"{tag}: histogram differs from unchunked")


def main():
    ap = arg_parser(nps="1,3")
    ap.add_argument("--set", choices=("full", "ranks", "chunked"), default="full")
    args = ap.parse_args()
    if cuda_missing(args):
        return 77
    fresh_dir(args.work)
    seed = test_seed()
    print(f"e2e_dist: --set {args.set}, seed {seed} (GPUPRIM_TEST_SEED), numpy {np.__version__}",
          flush=True)
    rng = np.random.default_rng(seed)
    {"full": set_full, "ranks": set_ranks, "chunked": set_chunked}[args.set](args, rng)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

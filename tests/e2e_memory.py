#!/usr/bin/env python3
"""End-to-end tests of the device-memory limits: chunked statistics and the sort's memory check.

usage: e2e_memory.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR --nps 1,3 --backend B

GPUPRIM_DEVICE_MEM_LIMIT=<bytes> (a test knob of the backends' mem_info) makes the device
report at most that much free memory. With 1 MiB, on an h5py-written file of 3000017 elements
(odd, so the shards differ in size), for every rank count in --nps:

- statistics only (--no-sort): f64 and f32 with NaNs, i64, and samples y with coordinates
  --x (and with --dx): the run goes through the device in chunks (one notice line: N > 1
  chunks of M bytes, M = elements * (element size + 8 with --x), a power of two of at least
  4096 elements); count, NaN count, min and max equal numpy and the unchunked run exactly;
  sum, mean, L2 norm and the trapezoid integral equal numpy to 1e-12 relative (of the sum of
  magnitudes); with --reproducible sum, mean, L2 norm and the uniform integral are the same
  bits as unchunked. The chunked - unchunked differences are printed.
- the sort (with --out; also --stable --argsort): exit 7, one error line "FILE:DATASET:
  sorting <n> elements on rank R needs X GiB of device memory, Y GiB free (use more GPUs or nodes: ranks on one device share it)"
  with n the rank's shard and X the documented formula, and no output file (nor a temporary
  one). With a limit well above the need the same sort succeeds.
- a malformed GPUPRIM_DEVICE_MEM_LIMIT: exit 7 and one error line naming it.
- the overlapped read + upload in pieces: with GPUPRIM_READ_PIECE_BYTES=1000 (pieces of 125
  or 250 elements, thousands of reads, with --io mpiio collective ones with empty ones on the
  shorter shards; on the CPU backend too through two host pieces, each upload overlapped with
  the next read and each download with the write of the piece before, as on CUDA) the
  statistics, the --x integral and the sorted output (written piece by piece) are the same
  bits as with the default pieces (one piece here).
Exit 0 when all pass, 77 when --backend cuda finds no GPU.
"""
import json
import math
import os
import re
import sys

import h5py
import numpy as np

np.seterr(all="ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import close, jnum, read_dtype  # noqa: E402  (the main e2e test's helpers)
from e2e_common import arg_parser, check, cuda_missing, fresh_dir, run_gpuprim, summary, test_seed  # noqa: E402
from e2e_common import read_report  # noqa: E402

LIMIT = 1 << 20          # the small device memory of the chunked runs, bytes
N = 3000017              # elements: odd, N % 3 = 2, so the shards of 3 ranks differ
CHUNK_RE = re.compile(r"processed in (\d+) chunks of (\d+) bytes \((\d+) elements")
SORT_RE = re.compile(r"^gpuprim_mpi: error: (.+):(/\S+): sorting (\d+) elements on rank (\d+) needs "
                     r"(\S+) GiB of device memory, (\S+) GiB free \(use more GPUs or nodes: ranks on one device share it\)$")


def run(args, P, cmd, limit=None, piece=None):
    """gpuprim_mpi CMD with P ranks; GPUPRIM_DEVICE_MEM_LIMIT=limit and
    GPUPRIM_READ_PIECE_BYTES=piece if given (no fault)."""
    env = dict(os.environ)
    for k in ("GPUPRIM_DEVICE_MEM_LIMIT", "GPUPRIM_FAULT", "GPUPRIM_READ_PIECE_BYTES"):
        env.pop(k, None)
    if limit is not None:
        env["GPUPRIM_DEVICE_MEM_LIMIT"] = str(limit)
    if piece is not None:
        env["GPUPRIM_READ_PIECE_BYTES"] = str(piece)
    return run_gpuprim(args, P, cmd, env=env)


def error_lines(p):
    return [l for l in p.stderr.splitlines() if l.startswith("gpuprim_mpi: error")]


def shard(n, P, r):
    q, rem = divmod(n, P)
    return q + 1 if r < rem else q


def make_file(args, rng):
    path = os.path.join(args.work, "mem.h5")
    a = rng.standard_normal(N) * 1e3 + 10.0
    a[rng.choice(N, 257, replace=False)] = np.nan
    a[rng.choice(N, 20, replace=False)] = -0.0
    x = np.cumsum(rng.random(N) + 0.01)
    with h5py.File(path, "w") as f:
        f["f64"] = a
        f32 = a.astype(np.float32)
        f32[rng.choice(N, 64, replace=False)] = np.nan
        f["f32"] = f32
        f.create_dataset("i64", data=rng.integers(-2**40, 2**40, N, dtype=np.int64),
                         chunks=(65536,))  # a chunked dataset too
        f["x"] = x
        f["y"] = np.sin(x / 5000.0) * 5.0 + 1.0
    return path


def reference(y, xs, dx):
    """numpy's results (float64) and the scales the comparisons are relative to."""
    yd = y.astype(np.float64)
    fin = ~np.isnan(yd)
    ref = {"count": y.size, "nan_count": int((~fin).sum())}
    ref["sum"] = float(np.sum(yd[fin]))
    ref["scale"] = float(np.sum(np.abs(yd[fin]))) + 1.0
    ref["min"], ref["max"] = y[fin].min(), y[fin].max()
    ref["mean"] = ref["sum"] / fin.sum()
    ref["l2"] = math.sqrt(float(np.sum(yd[fin] ** 2)))
    if (~fin).any():
        ref["integral"], ref["iscale"] = float("nan"), 1.0
    elif xs is not None:
        terms = (xs[1:] - xs[:-1]) * (yd[1:] + yd[:-1]) / 2
        ref["integral"], ref["iscale"] = float(np.sum(terms)), float(np.sum(np.abs(terms))) + 1.0
    else:
        ref["integral"] = float(np.sum((yd[1:] + yd[:-1]) / 2)) * dx
        ref["iscale"] = ref["scale"] * abs(dx)
    return ref


def same_num(a, b):
    a, b = float(jnum(a)), float(jnum(b))
    return (math.isnan(a) and math.isnan(b)) or a == b


def test_stats(args, path):
    cases = [("f64", []), ("f32", []), ("i64", []), ("y", ["--x", "x"]), ("y", ["--dx", "0.5"])]
    with h5py.File(path, "r") as f:
        data = {d: f[d][()] for d in ("f64", "f32", "i64", "y")}
        xs = f["x"][()]
    for dset, opts in cases:
        stored = data[dset].dtype
        y = data[dset].astype(read_dtype(stored))
        withx = "--x" in opts
        dx = float(opts[1]) if "--dx" in opts else 1.0
        ref = reference(y, xs if withx else None, dx)
        esize = np.dtype(read_dtype(stored)).itemsize
        for P in args.nps:
            tag = f"{dset} {' '.join(opts)} P={P}".replace("  ", " ")
            res = {}
            for mode in ("whole", "chunked", "whole-repro", "chunked-repro"):
                rj = os.path.join(args.work, f"st_{dset}_{len(opts)}_{P}_{mode}.json")
                cmd = [path, "--dataset", dset, "--backend", args.backend, "--no-sort", "--quiet",
                       "--json", rj] + opts + (["--reproducible"] if "repro" in mode else [])
                p = run(args, P, cmd, LIMIT if mode.startswith("chunked") else None)
                check(p.returncode == 0, f"{tag} {mode}: exit {p.returncode}: {p.stderr[-400:]}")
                if p.returncode:
                    continue
                res[mode] = read_report(rj)
                notes = CHUNK_RE.findall(p.stderr)
                if mode.startswith("whole"):
                    check(not notes, f"{tag} {mode}: chunked without a memory limit: {p.stderr[-300:]}")
                    check(res[mode]["chunks"] == 0, f"{tag} {mode}: JSON chunks {res[mode]['chunks']}, want 0")
                    continue
                check(len(notes) == 1, f"{tag} {mode}: want one chunk notice, stderr: {p.stderr[-400:]}")
                if len(notes) != 1:
                    continue
                nch, nbytes, elems = (int(v) for v in notes[0])
                check(res[mode]["chunks"] == nch and res[mode]["chunk_elements"] == elems,
                      f"{tag} {mode}: JSON chunks {res[mode]['chunks']} x {res[mode]['chunk_elements']}, "
                      f"notice {nch} x {elems}")
                m = shard(N, P, 0)
                check(nch > 1 and nch == -(-m // elems), f"{tag}: {nch} chunks of {elems} for a shard of {m}")
                check(elems >= 4096 and elems & (elems - 1) == 0, f"{tag}: chunk of {elems} elements")
                check(nbytes == elems * (esize + (8 if withx else 0)) and nbytes <= LIMIT,
                      f"{tag}: chunk of {nbytes} bytes for {elems} elements")
                if mode == "chunked":
                    print(f"{tag}: {nch} chunks of {nbytes} bytes ({elems} elements)")
            for mode, r in res.items():
                t = f"{tag} {mode}"
                check(r["count"] == ref["count"], f"{t}: count {r['count']} != {ref['count']}")
                check(r["nan_count"] == ref["nan_count"], f"{t}: nan_count {r['nan_count']} != {ref['nan_count']}")
                if y.dtype.kind == "f":
                    check(np.array(r["min"], dtype=y.dtype) == ref["min"], f"{t}: min {r['min']} vs {ref['min']}")
                    check(np.array(r["max"], dtype=y.dtype) == ref["max"], f"{t}: max {r['max']} vs {ref['max']}")
                else:
                    check(int(r["min"]) == int(ref["min"]) and int(r["max"]) == int(ref["max"]),
                          f"{t}: min/max {r['min']}/{r['max']} vs {ref['min']}/{ref['max']}")
                check(close(jnum(r["sum"]), ref["sum"], ref["scale"]), f"{t}: sum {r['sum']} vs {ref['sum']}")
                n_ok = ref["count"] - ref["nan_count"]
                check(close(jnum(r["mean"]), ref["mean"], ref["scale"] / n_ok), f"{t}: mean {r['mean']} vs {ref['mean']}")
                check(close(jnum(r["l2_norm"]), ref["l2"], ref["l2"]), f"{t}: L2 {r['l2_norm']} vs {ref['l2']}")
                check(close(jnum(r["integral"]), ref["integral"], ref["iscale"]),
                      f"{t}: integral {r['integral']} vs {ref['integral']}")
            for a, b in (("whole", "chunked"), ("whole-repro", "chunked-repro")):
                if a not in res or b not in res:
                    continue
                u, c = res[a], res[b]
                for k in ("count", "nan_count", "min", "max"):
                    check(same_num(u[k], c[k]) if k in ("min", "max") else u[k] == c[k],
                          f"{tag}: {k} chunked {c[k]} != unchunked {u[k]}")
                if a == "whole-repro":
                    keys = ["sum", "mean", "l2_norm"] + ([] if withx else ["integral"])
                    for k in keys:
                        check(same_num(u[k], c[k]), f"{tag} --reproducible: {k} chunked {c[k]!r} != unchunked {u[k]!r}")
                diffs = []
                for k in ("sum", "l2_norm", "integral"):
                    du, dc = float(jnum(u[k])), float(jnum(c[k]))
                    d = dc - du if not (math.isnan(du) and math.isnan(dc)) else 0.0
                    rel = abs(d) / abs(du) if du and not math.isnan(du) else 0.0
                    diffs.append(f"{k} {d:+.3e} (rel {rel:.1e})")
                print(f"{tag} {b} - {a}: " + ", ".join(diffs))
    # --verbose: every rank says how it went
    p = run(args, 3, [path, "--dataset", "f64", "--backend", args.backend, "--no-sort", "--verbose"], LIMIT)
    ranks = set(re.findall(r"gpuprim_mpi: rank (\d+): shard of (\d+) elements", p.stderr))
    check(p.returncode == 0 and {r for r, _ in ranks} == {"0", "1", "2"} and
          all(int(c) == shard(N, 3, int(r)) for r, c in ranks),
          f"--verbose chunked: per-rank lines {sorted(ranks)}; stderr {p.stderr[-400:]}")


def sort_need(args, P, esize, pairs):
    """The documented peak memory of a sort (docs/limits.md), on rank 0 (m = ceil(N/P) slots)."""
    m = -(-N // P)
    slot = esize + (8 if pairs else 0)
    need = m * slot * (2 if P > 1 else 1)  # the shard and the exchange's receive buffer
    return need


def test_sort(args, path):
    for P in args.nps:
        for extra, dset, esize in (([], "f32", 4), (["--stable", "--argsort"], "f64", 8), ([], "i64", 8)):
            out = os.path.join(args.work, f"sorted_{P}_{dset}.h5")
            cmd = [path, "--dataset", dset, "--backend", args.backend, "--quiet", "--out", out, "--force"] + extra
            tag = f"sort {dset} {' '.join(extra)} P={P}"
            p = run(args, P, cmd, LIMIT)
            errs = error_lines(p)
            check(p.returncode == 7, f"{tag}: exit {p.returncode}, want 7: {p.stderr[-400:]}")
            check(len(errs) == 1, f"{tag}: want one error line, got {errs}")
            mt = SORT_RE.match(errs[0]) if errs else None
            check(mt is not None, f"{tag}: message {errs}")
            if mt:
                fname, dname, n, r, x, y = mt.groups()
                need = sort_need(args, P, esize, bool(extra)) / 2**30
                check(fname == path and dname == "/" + dset, f"{tag}: names {fname}:{dname}")
                check(int(n) == shard(N, P, int(r)), f"{tag}: {n} elements on rank {r}")
                check(int(r) == 0 and abs(float(x) - need) <= 0.005 * need,
                      f"{tag}: needs {x} GiB, formula {need:.4g} GiB (rank {r})")
                check(float(y) < float(x) and float(y) * 2**30 <= LIMIT, f"{tag}: {y} GiB free")
            left = [f for f in os.listdir(args.work) if f.startswith(os.path.basename(out))]
            check(not left, f"{tag}: output left behind: {left}")
        # well above the need: the same sort runs (the check does not refuse what fits)
        out = os.path.join(args.work, f"sorted_ok_{P}.h5")
        limit = 16 * P * sort_need(args, P, 4, False)
        p = run(args, P, [path, "--dataset", "f32", "--backend", args.backend, "--quiet", "--out", out], limit)
        check(p.returncode == 0 and os.path.exists(out) and not CHUNK_RE.search(p.stderr),
              f"sort with a limit of {limit} bytes P={P}: exit {p.returncode}: {p.stderr[-300:]}")
        if p.returncode == 0:
            with h5py.File(out, "r") as f:
                got = f["f32"][()]
            want = np.sort(h5py.File(path, "r")["f32"][()])  # NaNs last, as gpuprim
            check(got.size == N and np.array_equal(got, want, equal_nan=True), f"sort P={P}: output differs")
    p = run(args, 2, [path, "--dataset", "f64", "--backend", args.backend, "--no-sort", "--quiet"], "12MiB")
    errs = error_lines(p)
    check(p.returncode == 7 and len(errs) == 1 and "GPUPRIM_DEVICE_MEM_LIMIT" in errs[0],
          f"malformed GPUPRIM_DEVICE_MEM_LIMIT: exit {p.returncode}, errors {errs}")


def test_pieces(args, path):
    """Small read pieces give the same bits as one piece: statistics, --x integral, sort."""
    keys = ("count", "nan_count", "sum", "min", "max", "mean", "l2_norm", "integral", "sorted_verified")
    for dset, opts in (("f32", []), ("y", ["--x", "x"]), ("i64", ["--stable", "--argsort"])):
        for P in args.nps:
            tag = f"pieces {dset} {' '.join(opts)} P={P}".replace("  ", " ")
            got = {}
            for mode, piece in (("one", None), ("small", 1000)):
                rj = os.path.join(args.work, f"pc_{dset}_{P}_{mode}.json")
                out = os.path.join(args.work, f"pc_{dset}_{P}_{mode}.h5")
                cmd = [path, "--dataset", dset, "--backend", args.backend, "--quiet", "--json", rj,
                       "--out", out, "--force"] + opts
                p = run(args, P, cmd, piece=piece)
                check(p.returncode == 0, f"{tag} {mode}: exit {p.returncode}: {p.stderr[-400:]}")
                if p.returncode:
                    break
                res = read_report(rj)
                with h5py.File(out, "r") as f:
                    outs = {k: f[k][()] for k in f}
                got[mode] = (res, outs)
            if len(got) != 2:
                continue
            (r1, o1), (r2, o2) = got["one"], got["small"]
            for k in keys:
                if k in r1:
                    check(json.dumps(r1[k]) == json.dumps(r2.get(k)),
                          f"{tag}: {k} {r1[k]!r} with one piece, {r2.get(k)!r} with 1000-byte pieces")
            check(sorted(o1) == sorted(o2) and all(np.array_equal(o1[k], o2[k], equal_nan=True) for k in o1),
                  f"{tag}: the sorted output differs between one piece and 1000-byte pieces")


def main():
    args = arg_parser(nps="1,3").parse_args()
    fresh_dir(args.work)
    seed = test_seed()
    print(f"e2e_memory: nps={args.nps} backend={args.backend} io={args.io or 'default'} seed={seed} limit={LIMIT} bytes", flush=True)
    rng = np.random.default_rng(seed)
    if cuda_missing(args):
        return 77
    path = make_file(args, rng)
    test_stats(args, path)
    test_sort(args, path)
    test_pieces(args, path)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

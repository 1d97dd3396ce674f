#!/usr/bin/env python3
"""End-to-end tests of the direct chunk path (io/h5_chunks.c) through gpuprim_mpi.

usage: e2e_chunks.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR --nps 1,2,3,5 --backend B
                     [--io IO]

Inputs written by h5py: float32 with gzip + shuffle in chunks of 65537 (a partial edge chunk),
big-endian float64 2-D with gzip + Fletcher-32 and partial edge chunks in both dimensions,
int16 with gzip and chunks never written (a fill value), uint8 3-D with shuffle only. For
every rank count in --nps:
  - the sorted output (--out, --stable --argsort) equals numpy's stable sort of the data as
    read (the positions too), and count, NaN count, sum, min, max equal numpy's;
  - GPUPRIM_DIRECT_CHUNKS=0 (H5Dread, as before), GPUPRIM_INFLATE_THREADS=1 and 64, and
    GPUPRIM_READ_PIECE_BYTES=40000 (many pieces: each piece's chunks decoded while the one
    before "uploads") give the same output bytes and the same statistics bits;
  - --no-sort under GPUPRIM_DEVICE_MEM_LIMIT=1 MiB (the statistics in device chunks, the
    file's chunks decoded across their bounds) gives the same count, min and max, and
    --cumsum there (the scan's two visits of the device chunks) the same bytes as through
    H5Dread (integer data: numpy's exact prefix sums);
  - a damaged chunk (garbage in a deflate stream; a failing Fletcher-32 checksum): exit 5,
    one error line naming the file, the dataset and the chunk's offset, no output file and
    no temporary one; the same for a read error in a decoding thread of rank P-1
    (GPUPRIM_FAULT=R:pread).
Exit 0 when all pass, 77 when --backend cuda finds no GPU.
"""
import os
import re
import sys

import h5py
import numpy as np

np.seterr(all="ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import keys, read_dtype  # noqa: E402  (the main e2e test's helpers)
from e2e_common import (SKIP, arg_parser, check, cuda_missing, fresh_dir,  # noqa: E402
                        read_report, run_gpuprim, summary, test_seed)

KNOBS = ("GPUPRIM_DIRECT_CHUNKS", "GPUPRIM_INFLATE_THREADS", "GPUPRIM_READ_PIECE_BYTES",
         "GPUPRIM_DEVICE_MEM_LIMIT", "GPUPRIM_FAULT")


def make_inputs(work, rng):
    """The inputs: (name, path, dataset) of each good one, and the damaged ones with the
    offset text of their bad chunk."""
    good, bad = [], []
    x = (rng.standard_normal(1000003) * 100).astype("<f4")
    x[rng.choice(x.size, 500, replace=False)] = np.nan
    x[:3] = [np.inf, -np.inf, -0.0]
    p = os.path.join(work, "f32.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("data", data=x, chunks=(65537,), shuffle=True, compression="gzip",
                         compression_opts=4)
    good.append(("f32 gzip+shuffle", p, "/data"))
    y = (rng.standard_normal((301, 77)) * 1e6).astype(">f8")
    p = os.path.join(work, "f64be2d.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("grid", data=y, chunks=(40, 16), fletcher32=True, compression="gzip")
    good.append(("f64 BE 2-D gzip+fletcher32", p, "/grid"))
    p = os.path.join(work, "i16fill.h5")
    with h5py.File(p, "w") as f:
        d = f.create_dataset("s", shape=(200000,), chunks=(9999,), dtype="<i2", fillvalue=-7,
                             compression="gzip", compression_opts=1)
        d[30000:90000] = rng.integers(-32768, 32767, 60000, dtype=np.int16)
        d[150000:150100] = 32767
    good.append(("i16 gzip, chunks never written", p, "/s"))
    p = os.path.join(work, "u8cube.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("c", data=rng.integers(0, 255, (33, 29, 31), dtype=np.uint8),
                         chunks=(4, 29, 7), shuffle=True)
    good.append(("u8 3-D shuffle", p, "/c"))

    def damage(path, dset, index, fn):
        """Rewrites stored chunk `index` with fn(its bytes); returns its offset as "[a, b]"."""
        with h5py.File(path, "r") as f:
            info = f[dset].id.get_chunk_info(index)
        with open(path, "r+b") as fh:
            fh.seek(info.byte_offset)
            old = fh.read(info.size)
            fh.seek(info.byte_offset)
            fh.write(fn(old))
        return "[" + ", ".join(str(v) for v in info.chunk_offset) + "]"

    p = os.path.join(work, "bad_gzip.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("data", data=x[:400000], chunks=(50000,), compression="gzip")
    at = damage(p, "/data", 5, lambda b: b[:64] + b"\x5a" * 100 + b[164:])
    bad.append(("garbage in a deflate stream", p, "/data", at))
    p = os.path.join(work, "bad_sum.h5")
    with h5py.File(p, "w") as f:
        f.create_dataset("grid", data=y, chunks=(40, 16), fletcher32=True, compression="gzip")
    at = damage(p, "/grid", 11, lambda b: b[:-1] + bytes([b[-1] ^ 1]))
    bad.append(("a failing Fletcher-32 checksum", p, "/grid", at))
    return good, bad


def gp_env(**knobs):
    env = dict(os.environ)
    for k in KNOBS:
        env.pop(k, None)
    env.update({k: str(v) for k, v in knobs.items()})
    return env


def run_sort(args, P, path, dset, out, jpath, **knobs):
    """gpuprim_mpi --out (stable, argsort) with the knobs; returns (process, report, sorted
    values, positions) or (process, None, None, None)."""
    for f in (out, jpath):
        if os.path.exists(f):
            os.remove(f)
    p = run_gpuprim(args, P, [path, "--dataset", dset, "--out", out, "--stable", "--argsort",
                              "--json", jpath, "-q", "--no-progress", "--backend", args.backend],
                    env=gp_env(**knobs))
    if p.returncode != 0:
        return p, None, None, None
    rep = read_report(jpath)
    with h5py.File(out, "r") as f:
        names = [k for k in f if isinstance(f[k], h5py.Dataset)]
        vals = f[[k for k in names if "argsort" not in k][0]][...]
        pos = f[[k for k in names if "argsort" in k][0]][...]
    return p, rep, vals, pos


STATS = ("count", "nan_count", "sum", "min", "max")


def stats_of(rep):
    """The report's STATS as text (repr: a NaN sum, of +inf and -inf, equals itself)."""
    return {k: repr(rep[k]) for k in STATS}


def check_good(args, P, name, path, dset, work):
    with h5py.File(path, "r") as f:
        a = f[dset][...].reshape(-1)
    a = a.astype(read_dtype(a.dtype))
    order = np.argsort(keys(a), kind="stable")
    out, jp = os.path.join(work, "out.h5"), os.path.join(work, "r.json")
    p, rep, vals, pos = run_sort(args, P, path, dset, out, jp)
    tag = f"{name}, {P} ranks"
    if not check(rep is not None, f"{tag}: exit {p.returncode}: {p.stderr.strip()[-400:]}"):
        return
    # (--out keeps the stored type: compare as read)
    check(vals.astype(a.dtype).tobytes() == a[order].tobytes() and np.array_equal(pos, order),
          f"{tag}: sorted output and positions equal numpy's")
    fa = a[~np.isnan(a)] if a.dtype.kind == "f" else a
    check(rep["count"] == a.size and rep["nan_count"] == a.size - fa.size and
          float(rep["min"]) == float(fa.min()) and float(rep["max"]) == float(fa.max()),
          f"{tag}: count, NaN count, min, max equal numpy's ({rep['count']}, {rep['min']}, "
          f"{rep['max']})")
    base = stats_of(rep)
    variants = [dict(GPUPRIM_DIRECT_CHUNKS=0), dict(GPUPRIM_INFLATE_THREADS=1),
                dict(GPUPRIM_INFLATE_THREADS=64), dict(GPUPRIM_READ_PIECE_BYTES=40000)]
    for kn in variants:
        p2, rep2, vals2, pos2 = run_sort(args, P, path, dset, out, jp, **kn)
        label = ", ".join(f"{k}={v}" for k, v in kn.items())
        if check(rep2 is not None, f"{tag}, {label}: exit {p2.returncode}: {p2.stderr[-400:]}"):
            check(vals2.tobytes() == vals.tobytes() and np.array_equal(pos2, pos) and
                  stats_of(rep2) == base,
                  f"{tag}, {label}: the same output bytes and statistics")
    jp2 = os.path.join(work, "m.json")
    p3 = run_gpuprim(args, P, [path, "--dataset", dset, "--no-sort", "--json", jp2, "-q",
                               "--no-progress", "--backend", args.backend],
                     env=gp_env(GPUPRIM_DEVICE_MEM_LIMIT=1 << 20))
    if check(p3.returncode == 0, f"{tag}, device chunks: exit {p3.returncode} {p3.stderr[-300:]}"):
        r3 = read_report(jp2)
        check(all(r3[k] == rep[k] for k in ("count", "nan_count", "min", "max")),
              f"{tag}, statistics in {r3.get('chunks')} device chunks: count, NaN count, min, "
              f"max as unchunked")
    check_scan(args, P, tag, path, dset, work, a)


def check_scan(args, P, tag, path, dset, work, a):
    """--cumsum under GPUPRIM_DEVICE_MEM_LIMIT=1 MiB: the scan visits the shard's device
    chunks twice (src/pieces.c, each visit's reader told the whole shard), and its output
    through the direct chunk path equals H5Dread's bit for bit (integer data: numpy's
    int64 / uint64 cumsum exactly)."""
    got = []
    for direct in (1, 0):
        so = os.path.join(work, "scan%d.h5" % direct)
        if os.path.exists(so):
            os.remove(so)
        p = run_gpuprim(args, P, [path, "--dataset", dset, "--no-sort", "--cumsum", "--out", so,
                                  "-q", "--no-progress", "--backend", args.backend],
                        env=gp_env(GPUPRIM_DEVICE_MEM_LIMIT=1 << 20,
                                   GPUPRIM_DIRECT_CHUNKS=direct))
        if not check(p.returncode == 0, f"{tag}, --cumsum, direct {direct}: exit "
                     f"{p.returncode} {p.stderr[-300:]}"):
            return
        with h5py.File(so, "r") as f:
            got.append(f[[k for k in f if k.endswith("_cumsum")][0]][...])
    check(got[0].tobytes() == got[1].tobytes(),
          f"{tag}, --cumsum in device chunks: the direct path's bytes equal H5Dread's")
    if a.dtype.kind in "iu":
        ref = np.cumsum(a.astype(np.int64 if a.dtype.kind == "i" else np.uint64))
        check(np.array_equal(got[0], ref), f"{tag}, --cumsum: numpy's exact prefix sums")


ERR = re.compile(r"^gpuprim_mpi: error: (.*)$", re.M)


def check_fails(args, P, tag, path, dset, work, want, **knobs):
    out, jp = os.path.join(work, "bad_out.h5"), os.path.join(work, "bad.json")
    p, rep, _, _ = run_sort(args, P, path, dset, out, jp, **knobs)
    lines = ERR.findall(p.stderr)
    ok = p.returncode == 5 and len(lines) == 1 and path in lines[0] and dset in lines[0] and \
        all(w in lines[0] for w in want)
    check(ok, f"{tag}, {P} ranks: exit 5 and one error line naming {path}, {dset}, "
          f"{' and '.join(want)} (exit {p.returncode}: {lines or p.stderr[-300:]})")
    left = [f for f in os.listdir(work) if f.startswith(".gpuprim") or f.startswith("bad_out")]
    check(not left and not os.path.exists(jp), f"{tag}, {P} ranks: no output left ({left})")


def main():
    ap = arg_parser(nps="1,2,3,5")
    args = ap.parse_args()
    if cuda_missing(args):
        return SKIP
    seed = test_seed()
    print(f"e2e_chunks: seed {seed} (GPUPRIM_TEST_SEED)", flush=True)
    rng = np.random.default_rng(seed)
    fresh_dir(args.work)
    good, bad = make_inputs(args.work, rng)
    for P in args.nps:
        for name, path, dset in good:
            check_good(args, P, name, path, dset, args.work)
        for name, path, dset, offset in bad:
            check_fails(args, P, name, path, dset, args.work, ["chunk at offset " + offset])
        if args.io != "mpiio":  # the hook is the posix driver's (mpiio ignores it)
            name, path, dset = good[0]
            check_fails(args, P, "a read error in a decoding thread", path, dset, args.work,
                        ["chunk at offset [", "Input/output error"],
                        GPUPRIM_FAULT=f"{P - 1}:pread")
    return summary()


if __name__ == "__main__":
    sys.exit(main())

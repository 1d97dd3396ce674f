#!/usr/bin/env python3
"""LZF end to end: gpuprim_mpi on files that h5py writes with compression="lzf" (h5py's own
filter, id 32000), checked with numpy; and h5py reading what gpuprim's LZF filter writes.

usage: e2e_lzf.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR --writer TEST_LZF
                  --plugin-dir DIR --built ON|OFF [--nps 1,2,3] [--backend cpu|cuda]
                  [--io posix|mpiio]

Run it with HDF5_PLUGIN_PATH naming a folder without an LZF plugin (tests/CMakeLists.txt
does), so that gpuprim's own filter is the one tested. The inputs (fresh random data, seed
printed; GPUPRIM_TEST_SEED reproduces), all written by h5py:
  - float32, float64 and int64 of odd sizes in odd chunks, LZF with and without shuffle: a
    compressible first part and a random rest (without shuffle LZF does not shrink those
    chunks, and HDF5 stores them as they are); the floats with NaN, +-inf and -0.0;
  - a 2-D float64 dataset with partial edge chunks, LZF + shuffle;
  - float64 whose LZF cd_values lack the chunk size (as early h5py wrote them).
For each and every rank count P of --nps:
    mpirun -np P gpuprim_mpi [--io IO] FILE --backend B --json R --out SORTED --quiet
must give numpy's count, NaN count, min and max exactly, its sum, mean and L2 norm to 1e-12
(relative to the sum of magnitudes), and numpy's sort bit for bit. Corrupt chunks (bytes of
a chunk, found with h5py's get_chunk_info, overwritten): the job ends with exit 5 and one
line naming the file, the dataset and "LZF chunk is corrupt" (or, with fletcher32, the
checksum, in HDF5's words or in the direct chunk path's, which reads these files where
gpuprim's filter is HDF5's), no other error output, no output file left. With HDF5_PLUGIN_PATH at
--plugin-dir (tests/lzf_plugin.c, a plugin for 32000 that only fails) the plugin is the
filter used. TEST_LZF FILE writes LZF datasets through gpuprim's filter; h5py must read
them as the formulas of tests/test_lzf.c give. --built OFF (no liblzf): every LZF read ends
with exit 5 and the line that says how to get LZF. Exit 0 when everything passes, 77 when
--backend cuda finds no GPU.
"""
import math
import os
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import close, jnum, read_dtype, ref_sorted  # noqa: E402  (the main e2e test's helpers)
from e2e_common import (arg_parser, check, cuda_missing, fresh_dir,  # noqa: E402
                        read_report, run_gpuprim, summary, test_seed)

np.seterr(all="ignore")

HOWTO = "install liblzf-dev and rebuild, or set HDF5_PLUGIN_PATH to a folder with an LZF plugin"


# ---- inputs (h5py) ---------------------------------------------------------------------

def with_specials(a, rng):
    """a (float, C-contiguous) with NaN, +-inf, -0.0 and 0.0 at random places of the second
    half of its flattening."""
    flat = a.reshape(-1)
    idx = rng.choice(np.arange(flat.size // 2, flat.size), 40, replace=False)
    flat[idx[:10]] = np.nan
    flat[idx[10:20]] = np.inf
    flat[idx[20:30]] = -np.inf
    flat[idx[30:35]] = -0.0
    flat[idx[35:]] = 0.0
    return a


def data_of(kind, n, rng):
    """n values of kind f32/f64/i64: a compressible first half (a ramp with repeats), a
    random second half."""
    h = n // 2
    if kind == "i64":
        return np.concatenate([np.arange(h, dtype=np.int64) // 3 - 1000,
                               rng.integers(-2**63, 2**63 - 1, n - h, dtype=np.int64)])
    dt = np.float32 if kind == "f32" else np.float64
    a = np.concatenate([(np.arange(h) // 5 * 0.25).astype(dt),
                        (rng.standard_normal(n - h) * 1e3).astype(dt)])
    return with_specials(a, rng)


def make_inputs(work, rng):
    """Writes the inputs with h5py; returns (name, path, data) for each."""
    cases = []

    def put(name, data, **kw):
        path = os.path.join(work, name + ".h5")
        with h5py.File(path, "w") as f:
            d = f.create_dataset("data", data=data, compression="lzf", **kw)
            masks = [d.id.get_chunk_info(k).filter_mask for k in range(d.id.get_num_chunks())]
        cases.append((name, path, data))
        return masks

    for kind, n, chunk in (("f32", 65537, 4099), ("f64", 100003, 3001), ("i64", 30011, 1013)):
        a = data_of(kind, n, rng)
        masks = put(f"{kind}_lzf", a, chunks=(chunk,))
        # the random chunks do not shrink: HDF5 keeps them as they are (filter-mask bit 0)
        check(0 in masks and 1 in masks, f"{kind}_lzf: chunk filter masks {sorted(set(masks))}, "
              "want compressed chunks and chunks stored as they are")
        put(f"{kind}_lzf_shuffle", a, chunks=(chunk,), shuffle=True)
    g = with_specials(rng.standard_normal((211, 53)), rng)
    g[:60] = np.arange(60 * 53).reshape(60, 53) // 7
    put("f64_2d_lzf_shuffle", g, chunks=(50, 20), shuffle=True)
    # early h5py's cd_values: (revision, LZF version) without the chunk size; written in a
    # child process, which unregisters h5py's LZF filter
    path = os.path.join(work, "f64_lzf_nosize.h5")
    a = data_of("f64", 20011, rng)
    np.save(path + ".npy", a)
    subprocess.run([sys.executable, os.path.abspath(__file__), "--write-nosize", path],
                   check=True)
    cases.append(("f64_lzf_nosize", path, a))
    return cases


def write_nosize(path):
    """Writes PATH.npy's float64 values to PATH:/data in chunks of 1000 with LZF cd_values
    (4, 0x0105) only: h5py's LZF filter compresses the chunks in a first file, and then,
    unregistered (so that no set_local adds the chunk size), the dataset is created with the
    filter set by hand and the compressed chunks copied in as they are."""
    a = np.load(path + ".npy")
    tmp = path + ".src.h5"
    with h5py.File(tmp, "w") as f:
        d = f.create_dataset("data", data=a, chunks=(1000,), compression="lzf")
        chunks = [d.id.read_direct_chunk((k,)) for k in range(0, a.size, 1000)]
    os.remove(tmp)
    h5py.h5z.unregister_filter(h5py.h5z.FILTER_LZF)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((1000,))
    dcpl.set_filter(h5py.h5z.FILTER_LZF, h5py.h5z.FLAG_OPTIONAL, (4, 0x0105))
    with h5py.File(path, "w") as f:
        did = h5py.h5d.create(f.id, b"data", h5py.h5t.IEEE_F64LE,
                              h5py.h5s.create_simple(a.shape), dcpl=dcpl)
        for k, (mask, raw) in enumerate(chunks):
            did.write_direct_chunk((k * 1000,), raw, mask)
        did.close()
        cd = f["data"].id.get_create_plist().get_filter(0)[2]
    assert tuple(cd) == (4, 0x0105), cd


def corrupt_inputs(work):
    """h5py-written files with a chunk's bytes overwritten: (name, path, reason in the line)."""
    ramp = np.arange(60000, dtype=np.float64) // 3
    cases = []

    def spoil(name, k, at, data, **kw):
        path = os.path.join(work, name + ".h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("data", data=ramp, chunks=(7001,), compression="lzf", **kw)
        with h5py.File(path, "r") as f:
            info = f["data"].id.get_chunk_info(k)
        assert info.filter_mask == 0
        with open(path, "r+b") as fh:
            fh.seek(info.byte_offset + (info.size + at if at < 0 else at))
            fh.write(data)
        return path

    lzf = "LZF chunk is corrupt"
    # its first bytes: a back reference before the start of the output
    cases.append(("corrupt_head", spoil("corrupt_head", 2, 0, b"\xff" * 16), lzf))
    # its last bytes: the stream no longer ends where the chunk does
    cases.append(("corrupt_tail", spoil("corrupt_tail", 5, -8, b"\x1f" * 8), lzf))
    # LZF has no checksum of its own; fletcher32 (checked before LZF runs) catches anything:
    # HDF5's line through H5Dread, gpuprim's through the direct chunk path (io/h5_filters.c)
    cases.append(("corrupt_fletcher32", spoil("corrupt_fletcher32", 3, 100, b"\x00" * 4,
                                              fletcher32=True),
                  ("data error detected by Fletcher32 checksum", "Fletcher-32 checksum mismatch")))
    return cases


# ---- checks ------------------------------------------------------------------------------

def gp_run(args, P, path, out, rj, env=None):
    cmd = [path, "--backend", args.backend, "--json", rj, "--out", out, "--quiet"]
    for f in (out, rj):
        if os.path.exists(f):
            os.remove(f)
    return run_gpuprim(args, P, cmd, timeout=300, env=env)


def check_good(args, P, name, path, a):
    """Statistics and the sorted output of gpuprim_mpi on PATH against numpy's of a."""
    tag = f"np {P}: {name}"
    rj = os.path.join(args.work, name + ".json")
    out = os.path.join(args.work, name + ".sorted.h5")
    p = gp_run(args, P, path, out, rj)
    if not check(p.returncode == 0, f"{tag}: exit {p.returncode}: {p.stderr.strip()[-400:]}"):
        return
    r = read_report(rj)
    y = np.ascontiguousarray(a).reshape(-1).astype(read_dtype(a.dtype))
    yd = y.astype(np.float64)
    fin = ~np.isnan(yd)
    scale = float(np.sum(np.abs(yd[np.isfinite(yd)]))) + 1.0
    check(r["count"] == y.size, f"{tag}: count {r['count']} != {y.size}")
    check(r["nan_count"] == int((~fin).sum()), f"{tag}: nan_count {r['nan_count']}")
    if y.dtype.kind == "i":  # exact integer sums
        check(int(r["sum"]) == int(sum(int(v) for v in y)), f"{tag}: sum {r['sum']}")
        check(int(r["min"]) == int(y.min()) and int(r["max"]) == int(y.max()),
              f"{tag}: min/max {r['min']} {r['max']}")
    else:
        ref = float(np.sum(yd[fin]))
        check(close(jnum(r["sum"]), ref, scale), f"{tag}: sum {r['sum']} vs {ref}")
        check(np.array(r["min"], dtype=y.dtype) == y[fin].min() and
              np.array(r["max"], dtype=y.dtype) == y[fin].max(),
              f"{tag}: min/max {r['min']} {r['max']} vs {y[fin].min()} {y[fin].max()}")
        check(close(jnum(r["mean"]), ref / fin.sum(), scale / fin.sum()), f"{tag}: mean")
        l2 = math.sqrt(float(np.sum(yd[fin] ** 2)))
        check(close(jnum(r["l2_norm"]), l2, l2), f"{tag}: L2 {r['l2_norm']} vs {l2}")
    with h5py.File(out, "r") as f:
        got = f[list(f.keys())[0]][()]
    want = ref_sorted(y)
    same = got.shape == want.shape and got.tobytes() == want.tobytes()
    if y.dtype.kind == "f" and not same:  # NaNs: any payload, the same places
        gn, wn = np.isnan(got), np.isnan(want)
        same = np.array_equal(gn, wn) and got[~gn].tobytes() == want[~wn].tobytes()
    check(same, f"{tag}: sorted output differs from numpy's sort")


def check_fails(args, P, name, path, reason, env=None):
    """gpuprim_mpi on PATH: exit 5, one error line naming the file, /data and reason (a
    string, or a tuple of which the line has one), no other error output, no output file
    left."""
    tag = f"np {P}: {name}"
    rj = os.path.join(args.work, name + ".json")
    out = os.path.join(args.work, name + ".sorted.h5")
    try:
        p = gp_run(args, P, path, out, rj, env=env)
    except subprocess.TimeoutExpired:
        check(False, f"{tag}: still running after 300 s (killed)")
        return
    check(p.returncode == 5, f"{tag}: exit {p.returncode}, want 5: {p.stderr.strip()[-400:]!r}")
    lines = p.stderr.splitlines()
    ours = [l for l in lines if l.startswith("gpuprim_mpi: error: ")]
    other = [l for l in lines if l not in ours and ("error" in l.lower() or "HDF5-DIAG" in l)]
    check(len(ours) == 1, f"{tag}: want one error line, got {ours}")
    check(not other, f"{tag}: other error output: {other[:5]}")
    want = [os.path.basename(path), "/data: read failed: "]
    reasons = reason if isinstance(reason, tuple) else (reason,)  # any one of them
    if ours:
        check(all(w in ours[0] for w in want) and any(r in ours[0] for r in reasons),
              f"{tag}: error line {ours[0]!r} lacks one of {want} or all of {reasons}")
    left = [f for f in (out, rj) if os.path.exists(f)]
    left += [f for f in os.listdir(args.work) if ".tmp" in f]
    check(not left, f"{tag}: files left behind: {left}")


def check_writer(args):
    """test_lzf FILE writes through gpuprim's LZF filter; h5py reads it back."""
    path = os.path.join(args.work, "written_by_gpuprim.h5")
    p = subprocess.run([args.writer, path], capture_output=True, text=True)
    print(p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "test_lzf: no output")
    if not check(p.returncode == 0, f"test_lzf: exit {p.returncode}: {p.stdout[-600:]}"):
        return
    if args.built != "ON":
        return
    x, noise = np.uint32(2463534242), np.empty(30011, dtype=np.uint32)
    for k in range(noise.size):  # xorshift32, as test_lzf.c
        x ^= np.uint32(x << np.uint32(13))
        x ^= np.uint32(x >> np.uint32(17))
        x ^= np.uint32(x << np.uint32(5))
        noise[k] = x
    i = np.arange(20011, dtype=np.int64)
    want = {
        "ramp_f64": np.arange(50021) * 0.5 - 1000.0,
        "noise_u32": noise,
        "shuffled_i64": (i * i) % 1000003 - 500000,
        "grid_f32": (np.arange(97 * 55, dtype=np.float32) * np.float32(0.25)).reshape(97, 55),
    }
    with h5py.File(path, "r") as f:
        for name, w in want.items():
            d = f[name]
            cd = d.id.get_create_plist().get_filter_by_id(h5py.h5z.FILTER_LZF)
            check(cd is not None and tuple(cd[1][:2]) == (4, 0x0105),
                  f"{name}: LZF cd_values {cd}")
            got = d[()]
            check(got.dtype == w.dtype and got.shape == w.shape and np.array_equal(got, w),
                  f"{name}: h5py reads other values than test_lzf.c wrote")


def main():
    ap = arg_parser(nps="1,2,3")
    ap.add_argument("--writer", required=True)
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--built", choices=("ON", "OFF"), required=True)
    args = ap.parse_args()
    if cuda_missing(args):
        return 77
    fresh_dir(args.work)
    seed = test_seed()
    print(f"seed {seed} (GPUPRIM_TEST_SEED={seed} reproduces); LZF built in: {args.built}; "
          f"HDF5_PLUGIN_PATH={os.environ.get('HDF5_PLUGIN_PATH', '(unset)')}", flush=True)
    rng = np.random.default_rng(seed)
    check_writer(args)
    cases = make_inputs(args.work, rng)
    bad = corrupt_inputs(args.work)
    plugin_env = dict(os.environ, HDF5_PLUGIN_PATH=os.path.abspath(args.plugin_dir))
    for P in args.nps:
        for name, path, a in cases:
            if args.built == "ON":
                check_good(args, P, name, path, a)
            else:
                check_fails(args, P, name, path, HOWTO)
        for name, path, reason in bad:  # (without liblzf the first chunk read fails)
            check_fails(args, P, name, path, reason if args.built == "ON" else HOWTO)
        # a plugin for 32000 that HDF5 finds is the filter used (gpuprim registers none)
        check_fails(args, P, "plugin", cases[0][1], "the test plugin for filter 32000 ran",
                    env=plugin_env)
    return summary()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write-nosize":
        write_nosize(sys.argv[2])
        sys.exit(0)
    sys.exit(main())

#!/usr/bin/python3
"""Writes gpuprim's HDF5 test inputs with an independent writer (h5py + numpy).

usage: /usr/bin/python3 tests/h5_fixtures.py OUTDIR
       /usr/bin/python3 tests/h5_fixtures.py --verify FILE DATASET REF GPDTYPE STORED

The first form writes the fixtures into OUTDIR and prints the path of every .h5 file it
wrote, one per line. Next to a fixture NAME.h5 it writes
  NAME.ref   the flattened (row-major) data converted by numpy to the gp_dtype the file
             must be read as, raw little-endian bytes;
  NAME.meta  one line "DATASET DTYPE N", e.g. "/data f64 100003".
misc_errors.h5 is for error tests only and has no .ref/.meta. The RNG seed comes from the
environment variable GPUPRIM_TEST_SEED (default 12345).

The second form checks with h5py that DATASET of FILE is 1-D, stored as numpy dtype STORED
(e.g. "<i2", ">i4", "<f8") and equal, converted to GPDTYPE, to the bytes of REF; exit 0 if so.
"""
import os
import sys

import h5py
import numpy as np

GP = {"f32": "<f4", "f64": "<f8", "i32": "<i4", "i64": "<i8", "u32": "<u4", "u64": "<u8"}


def gp_dtype_of(dt):
    """The gp_dtype io/h5io.h reads a stored numpy dtype as."""
    dt = np.dtype(dt)
    if dt.kind == "f":
        return "f32" if dt.itemsize <= 4 else "f64"
    if dt.kind in "iu":
        signed = dt.kind == "i"
        if dt.itemsize <= 4:
            return "i32" if signed else "u32"
        return "i64" if signed else "u64"
    raise ValueError("not numeric: %s" % dt)


def put_ref(outdir, name, dataset, data):
    gp = gp_dtype_of(data.dtype)
    flat = np.ascontiguousarray(data).reshape(-1).astype(GP[gp])
    with open(os.path.join(outdir, name + ".ref"), "wb") as f:
        f.write(flat.tobytes())
    with open(os.path.join(outdir, name + ".meta"), "w") as f:
        f.write("%s %s %d\n" % (dataset, gp, flat.size))


def specials_f64(rng, n):
    x = rng.standard_normal(n) * 1e3
    idx = rng.choice(n, size=600, replace=False)
    x[idx[:300]] = np.nan
    x[idx[300:400]] = np.inf
    x[idx[400:500]] = -np.inf
    x[idx[500:550]] = -0.0
    x[idx[550:]] = 0.0
    x[0], x[-1] = np.nan, -0.0
    x[1] = 5e-324  # smallest subnormal
    x[2] = -np.finfo(np.float64).max
    return x


def write_all(outdir, seed):
    rng = np.random.default_rng(seed)
    os.makedirs(outdir, exist_ok=True)
    written = []

    def path(name):
        p = os.path.join(outdir, name + ".h5")
        written.append(p)
        return p

    # chunked + gzip (+ shuffle) float64 with NaN, +-inf, -0.0
    x = specials_f64(rng, 100003)
    with h5py.File(path("f64_gzip"), "w") as f:
        f.create_dataset("data", data=x, chunks=(4096,), compression="gzip",
                         compression_opts=4, shuffle=True)
    put_ref(outdir, "f64_gzip", "/data", x)

    # big-endian int32 over the full range
    x = rng.integers(-2**31, 2**31, size=65537, dtype=np.int64).astype(">i4")
    x[:2] = [-2**31, 2**31 - 1]
    with h5py.File(path("i32_be"), "w") as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "i32_be", "/data", x)

    # 2-D float32
    x = rng.standard_normal((333, 77)).astype("<f4")
    with h5py.File(path("f32_2d"), "w") as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "f32_2d", "/data", x)

    # int16
    x = rng.integers(-2**15, 2**15, size=1000, dtype=np.int64).astype("<i2")
    x[:2] = [-2**15, 2**15 - 1]
    with h5py.File(path("i16"), "w") as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "i16", "/data", x)

    # float16 with specials, subnormals and the extremes
    x = (rng.standard_normal(4097) * 100).astype("<f2")
    x[:9] = np.array([np.inf, -np.inf, -0.0, 0.0, 65504.0, -65504.0, 6e-8, 6.1e-5, np.nan],
                     dtype="<f2")
    with h5py.File(path("f16"), "w") as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "f16", "/data", x)

    # uint64 near 2^64
    x = (np.uint64(2**64 - 1) - rng.integers(0, 10**6, size=1025).astype(np.uint64))
    x = x.astype("<u8")
    x[:3] = [0, 2**63, 2**64 - 1]
    with h5py.File(path("u64_big"), "w") as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "u64_big", "/data", x)

    # int64, n = 7
    x = np.array([-2**63, -1, 0, 1, 2**63 - 1, 123456789012345, -987654321098765],
                 dtype="<i8")
    with h5py.File(path("i64"), "w") as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "i64", "/data", x)

    # uint32, n = 1
    x = np.array([2**32 - 1], dtype="<u4")
    with h5py.File(path("u32_one"), "w") as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "u32_one", "/data", x)

    # two numeric datasets and a string one: the default dataset is ambiguous
    a = rng.standard_normal(10)
    b = rng.integers(-1000, 1000, size=10).astype("<i4")
    with h5py.File(path("ambiguous"), "w") as f:
        f.create_dataset("a", data=a)
        f.create_dataset("b", data=b)
        f.create_dataset("s", data=np.array([b"alpha", b"beta"], dtype="S8"))
    put_ref(outdir, "ambiguous", "/a", a)

    # empty float64
    x = np.zeros(0, dtype="<f8")
    with h5py.File(path("empty_f64"), "w") as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "empty_f64", "/data", x)

    # 3-D int8 in a group, plus a soft link to it (still one dataset)
    x = rng.integers(-128, 128, size=(4, 5, 6), dtype=np.int64).astype("i1")
    with h5py.File(path("i8_cube"), "w") as f:
        f.create_dataset("g/cube", data=x)
        f["cube_link"] = h5py.SoftLink("/g/cube")
    put_ref(outdir, "i8_cube", "/g/cube", x)

    # long double (x87 80-bit in 16 bytes on x86-64): read as f64
    x = (np.longdouble(1) / np.arange(1, 34, dtype=np.longdouble)) * np.longdouble(1e10)
    with h5py.File(path("ldouble"), "w") as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "ldouble", "/data", x)

    # error cases: x/y length mismatch, scalar, a filter the C library lacks (lzf), group
    with h5py.File(path("misc_errors"), "w") as f:
        f.create_dataset("x", data=np.linspace(0.0, 1.0, 99))
        f.create_dataset("y", data=np.linspace(0.0, 2.0, 100))
        f.create_dataset("scalar", data=np.int32(7))
        f.create_dataset("lzf", data=np.arange(1000, dtype="<f4"), chunks=(100,),
                         compression="lzf")
        f.create_dataset("s", data=b"text")
        f.create_group("grp")
    return written


def verify(file, dataset, ref, gpdtype, stored):
    with h5py.File(file, "r") as f:
        ds = f[dataset]
        if ds.ndim != 1:
            print("verify: %s %s: %d-D, need 1-D" % (file, dataset, ds.ndim))
            return 1
        if ds.dtype != np.dtype(stored):
            print("verify: %s %s: stored as %s, expected %s" % (file, dataset, ds.dtype.str,
                                                                 np.dtype(stored).str))
            return 1
        got = ds[()].astype(GP[gpdtype]).tobytes()
    with open(ref, "rb") as f:
        want = f.read()
    if got != want:
        print("verify: %s %s: data differ from %s (%d vs %d bytes)" % (file, dataset, ref,
                                                                       len(got), len(want)))
        return 1
    print("verify: %s %s: ok (%d bytes)" % (file, dataset, len(got)))
    return 0


def main(argv):
    if len(argv) == 7 and argv[1] == "--verify":
        return verify(*argv[2:])
    if len(argv) != 2 or argv[1].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    seed = int(os.environ.get("GPUPRIM_TEST_SEED", "12345"))
    for p in write_all(argv[1], seed):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

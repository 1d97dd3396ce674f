#!/usr/bin/python3
"""Writes gpuprim's HDF5 test inputs with an independent writer (h5py + numpy).

usage: /usr/bin/python3 tests/h5_fixtures.py OUTDIR
       /usr/bin/python3 tests/h5_fixtures.py --verify FILE DATASET REF GPDTYPE STORED
       /usr/bin/python3 tests/h5_fixtures.py --badinput OUTDIR

The first form writes the fixtures into OUTDIR and prints the path of every .h5 file it
wrote, one per line. Next to a fixture NAME.h5 it writes
  NAME.ref   the flattened (row-major) data converted by numpy to the gp_dtype the file
             must be read as, raw little-endian bytes;
  NAME.meta  one line "DATASET DTYPE N", e.g. "/data f64 100003".
misc_errors.h5 is for error tests only and has no .ref/.meta. The RNG seed comes from the
environment variable GPUPRIM_TEST_SEED (default 12345).

The --badinput form writes the inputs of tests/e2e_badinput.py (see write_badinput) and
prints their paths.

The second form checks with h5py that DATASET of FILE is 1-D, stored as numpy dtype STORED
(e.g. "<i2", ">i4", "<f8") and equal, converted to GPDTYPE, to the bytes of REF; exit 0 if so.
"""
import os
import sys

import h5py
import numpy as np

GP = {"f32": "<f4", "f64": "<f8", "i32": "<i4", "i64": "<i8", "u32": "<u4", "u64": "<u8"}


def gp_dtype_of(dt):
    """The gp_dtype include/gpuprim/h5io.h reads a stored numpy dtype as."""
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
    with np.errstate(over="ignore", under="ignore"):  # long double beyond float64: inf, 0
        flat = np.ascontiguousarray(data).reshape(-1).astype(GP[gp])
    with open(os.path.join(outdir, name + ".ref"), "wb") as f:
        f.write(flat.tobytes())
    with open(os.path.join(outdir, name + ".meta"), "w") as f:
        f.write("%s %s %d\n" % (dataset, gp, flat.size))


def unknown_filter_dataset(f, name, data, chunk):
    """Creates 1-D dataset NAME in the open h5py file f whose chunks (of `chunk` elements,
    dividing data's length) need filter 65000, of the private range and registered nowhere:
    HDF5 reads it as "required filter (name unavailable) is not registered". The filter is
    optional, so that HDF5 creates the dataset without having it; the chunks go in as they
    are (write_direct_chunk) with the filter marked as applied."""
    data = np.ascontiguousarray(data)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((chunk,))
    dcpl.set_filter(65000, h5py.h5z.FLAG_OPTIONAL, ())
    space = h5py.h5s.create_simple(data.shape)
    ftype = h5py.h5t.py_create(data.dtype)
    did = h5py.h5d.create(f.id, name.encode(), ftype, space, dcpl=dcpl)
    for k in range(0, data.size, chunk):
        did.write_direct_chunk((k,), data[k:k + chunk].tobytes(), 0)
    did.close()


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


def h5_namer(outdir):
    """Creates OUTDIR (if needed); returns (written, path): path(NAME) gives OUTDIR/NAME.h5 and
    appends it to the list written, which the writers return."""
    os.makedirs(outdir, exist_ok=True)
    written = []

    def path(name):
        p = os.path.join(outdir, name + ".h5")
        written.append(p)
        return p

    return written, path


def write_all(outdir, seed):
    rng = np.random.default_rng(seed)
    written, path = h5_namer(outdir)

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

    # 2-D float32 with NaN, LZF (h5py's own filter), partial edge chunks; its first 40 rows
    # a ramp (chunks that compress), the rest random (chunks that LZF does not shrink, stored
    # as they are)
    x = rng.standard_normal((301, 77)).astype("<f4")
    x[:40] = np.arange(40 * 77, dtype="<f4").reshape(40, 77)
    x[50, 3] = np.nan
    with h5py.File(path("f32_lzf"), "w") as f:
        f.create_dataset("data", data=x, chunks=(37, 16), compression="lzf")
    put_ref(outdir, "f32_lzf", "/data", x)

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

    # the layouts and offsets the POSIX reader treats apart: contiguous data behind a user
    # block (raw offsets count from the start of the file), compact, external raw storage,
    # chunked without a filter (2-D, partial edge chunks), contiguous never written (the
    # fill value), and contiguous conversions large enough for several pieces (float16 ->
    # float32 widening in place, long double -> float64 narrowing through a buffer)
    x = rng.standard_normal(50001).astype("<f4")
    with h5py.File(path("userblock"), "w", userblock_size=4096) as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "userblock", "/data", x)

    x = rng.integers(-2**31, 2**31, size=97, dtype=np.int64).astype("<i4")
    with h5py.File(path("compact"), "w") as f:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        d = h5py.h5d.create(f.id, b"data", h5py.h5t.STD_I32LE, h5py.h5s.create_simple(x.shape),
                            dcpl=dcpl)
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, x)
    put_ref(outdir, "compact", "/data", x)

    x = rng.standard_normal(12345) * 1e5
    raw = os.path.abspath(os.path.join(outdir, "external.raw"))
    with h5py.File(path("external"), "w") as f:
        f.create_dataset("data", shape=x.shape, dtype="<f8", external=[(raw, 0, x.nbytes)])
        f["data"][...] = x
    put_ref(outdir, "external", "/data", x)

    x = rng.integers(0, 2**16, size=(123, 45), dtype=np.int64).astype("<u2")
    with h5py.File(path("u16_chunk2d"), "w") as f:
        f.create_dataset("data", data=x, chunks=(10, 7))
    put_ref(outdir, "u16_chunk2d", "/data", x)

    x = np.full(777, 3.25, dtype="<f4")
    with h5py.File(path("unwritten"), "w") as f:
        f.create_dataset("data", shape=x.shape, dtype="<f4", fillvalue=3.25)
    put_ref(outdir, "unwritten", "/data", x)

    x = (rng.standard_normal(600001) * 300).astype("<f2")
    x[:4] = np.array([np.inf, -0.0, 65504.0, 6e-8], dtype="<f2")
    with h5py.File(path("f16_big"), "w") as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "f16_big", "/data", x)

    # magnitudes from 1e-400 to 1e400: float64's range, its overflow (inf) and underflow
    x = rng.standard_normal(100003).astype(np.longdouble) * \
        np.longdouble(10) ** rng.integers(-400, 400, size=100003)
    x[:3] = [np.longdouble(1) / 3, -np.longdouble(0.0), np.longdouble(2.5)]
    with h5py.File(path("ldouble_big"), "w") as f:
        f.create_dataset("data", data=x)
    put_ref(outdir, "ldouble_big", "/data", x)

    # an external link (named relatively) to a contiguous dataset of another file: the raw
    # data lie in the target file (no .meta: the default search does not follow it)
    x = rng.standard_normal(4099)
    with h5py.File(path("elink_target"), "w") as f:
        f.create_dataset("g/data", data=x)
    with h5py.File(path("elink"), "w") as f:
        f["via"] = h5py.ExternalLink("elink_target.h5", "/g/data")
    with open(os.path.join(outdir, "elink.ref"), "wb") as fh:
        fh.write(x.astype("<f8").tobytes())

    # error cases: x/y length mismatch, scalar, a filter no HDF5 has, group; and LZF, which
    # gpuprim reads (h5py's own filter; io/h5_lzf.c)
    with h5py.File(path("misc_errors"), "w") as f:
        f.create_dataset("x", data=np.linspace(0.0, 1.0, 99))
        f.create_dataset("y", data=np.linspace(0.0, 2.0, 100))
        f.create_dataset("scalar", data=np.int32(7))
        f.create_dataset("lzf", data=np.arange(1000, dtype="<f4"), chunks=(100,),
                         compression="lzf")
        unknown_filter_dataset(f, "unknown_filter", np.arange(1000, dtype="<f4"), 100)
        f.create_dataset("s", data=b"text")
        f.create_group("grp")
    return written


def write_badinput(outdir):
    """Writes the bad (and the unusual but valid) inputs of tests/e2e_badinput.py into
    OUTDIR; returns the paths of the files written.

    badinput.h5 holds, one dataset each: every non-numeric class (fixed and variable-length
    string, vlen of float64, compound, enum, object and region reference, opaque, array of
    float64), a scalar and a null (H5S_NULL) dataspace, empty 1-D and 2-D float64 datasets,
    dangling soft and external links (to a missing file, to a missing object, through a
    dangling soft link to a group), a soft link and external links that resolve (to
    badinput_ext.h5, named relatively), unlimited chunked 1-D and 2-D datasets written
    past their first extent (the 2-D one with chunks never written), chunked datasets with
    unwritten chunks and a fill value (plain and gzip), a group, a bitfield, and two
    virtual datasets (over badinput_ext.h5 and badinput_vsrc.h5; over badinput_ext.h5 and
    a missing file, whose part reads as the fill value). badinput_long1.h5 holds one
    dataset whose path has 1024 bytes, badinput_long2.h5 one of 1085 bytes beside /short;
    badinput_types.h5 holds /data beside a scalar and a null dataset, a bfloat16
    /other/bf16 (1.5, -2, 0.25, 3) and a long double /other/ld (1, 1/3, 2/3). The other files: badinput_none.h5 (no numeric
    dataset), badinput_several.h5 (three numeric ones, one in a group), badinput_trunc.h5
    (cut in half), badinput_corrupt.h5 (garbage inside one gzip chunk), badinput_filter.h5
    (a filter no HDF5 has) and badinput_text.h5 (not HDF5).
    """
    written, path = h5_namer(outdir)

    with h5py.File(path("badinput_ext"), "w") as f:
        f.create_dataset("data", data=np.arange(7, dtype="<i4") * 3 - 5)
        f.create_dataset("g/more", data=np.linspace(-1.0, 1.0, 11, dtype="<f4"))

    with h5py.File(path("badinput"), "w") as f:
        f.create_dataset("str_fixed", data=np.array([b"alpha", b"beta"], dtype="S8"))
        f.create_dataset("str_vlen", data=["alpha", "beta"], dtype=h5py.string_dtype())
        v = f.create_dataset("vlen_num", (3,), dtype=h5py.vlen_dtype(np.float64))
        v[0] = np.arange(3.0)
        v[2] = np.arange(1.0)
        f.create_dataset("compound", data=np.zeros(4, dtype=[("x", "<f8"), ("y", "<i4")]))
        f.create_dataset("enum", data=np.array([0, 1, 1], dtype="u1"),
                         dtype=h5py.enum_dtype({"OFF": 0, "ON": 1}, basetype="u1"))
        f.create_dataset("target", data=np.array([3.5, -1.0, 8.25, 0.0, 2.0]))
        r = f.create_dataset("objref", (2,), dtype=h5py.ref_dtype)
        r[0] = f["target"].ref
        r = f.create_dataset("regref", (2,), dtype=h5py.regionref_dtype)
        r[0] = f["target"].regionref[1:3]
        f.create_dataset("opaque", data=np.array([b"\x01\x02", b"\x03\x04"], dtype="V2"))
        f.create_dataset("array", (4,), dtype=np.dtype(("<f8", (3,))))
        f.create_dataset("scalar", data=np.float64(3.5))
        f.create_dataset("null", data=h5py.Empty("<f8"))
        f.create_dataset("empty", data=np.zeros(0, dtype="<f8"))
        f.create_dataset("empty2d", data=np.zeros((0, 4), dtype="<i2"))
        f["dangling_soft"] = h5py.SoftLink("/nowhere/data")
        f["dangling_ext_file"] = h5py.ExternalLink("badinput_missing.h5", "/data")
        f["dangling_ext_obj"] = h5py.ExternalLink("badinput_ext.h5", "/nope")
        f["dangling_grp"] = h5py.SoftLink("/nowhere")
        f["soft_ok"] = h5py.SoftLink("/target")
        f["ext_ok"] = h5py.ExternalLink("badinput_ext.h5", "/data")
        f["ext_grp"] = h5py.ExternalLink("badinput_ext.h5", "/g")
        u = f.create_dataset("unlim", shape=(10,), maxshape=(None,), chunks=(4,), dtype="<f8")
        u[:] = np.arange(10.0) * 1.5
        u.resize((13,))
        u[10:] = [100.0, -101.0, 102.0]
        u = f.create_dataset("unlim2d", shape=(2, 3), maxshape=(None, None), chunks=(2, 2),
                             dtype="<i8")
        u[:] = [[1, 2, 3], [4, 5, 6]]
        u.resize((3, 5))
        u[2, :] = [-7, 8, -9, 10, -11]  # chunks of rows 0-1, columns 3-4 never written
        u = f.create_dataset("sparse", shape=(40,), chunks=(4,), dtype="<f4", fillvalue=7.5)
        u[4:8] = [1, 2, 3, 4]
        u[30:33] = [-5, 6, -7]
        u = f.create_dataset("sparse_gzip", shape=(5000,), chunks=(256,), dtype="<i2",
                             compression="gzip", fillvalue=-3)
        u[1000:2000] = np.arange(1000, dtype="<i2") - 500
        f.create_group("grp")
        # a bitfield (h5py has no high-level dtype for it)
        h5py.h5d.create(f.id, b"bitfield", h5py.h5t.STD_B8LE, h5py.h5s.create_simple((3,)))
        # virtual datasets: over two files, and with one source file missing (fill value)
        lay = h5py.VirtualLayout(shape=(12,), dtype="<i4")
        lay[0:7] = h5py.VirtualSource("badinput_ext.h5", "data", shape=(7,))
        lay[7:12] = h5py.VirtualSource("badinput_vsrc.h5", "x", shape=(5,))
        f.create_virtual_dataset("vds", lay, fillvalue=-1)
        lay = h5py.VirtualLayout(shape=(10,), dtype="<i4")
        lay[0:7] = h5py.VirtualSource("badinput_ext.h5", "data", shape=(7,))
        lay[7:10] = h5py.VirtualSource("badinput_vmissing.h5", "x", shape=(3,))
        f.create_virtual_dataset("vds_missing", lay, fillvalue=-9)

    with h5py.File(path("badinput_vsrc"), "w") as f:
        f.create_dataset("x", data=np.array([40, -41, 42, 0, 13], dtype="<i4"))

    # dataset paths of 1024 bytes and more: alone, and beside a short one
    with h5py.File(path("badinput_long1"), "w") as f:
        f.create_dataset("L" * 1023, data=np.arange(3.0))
    with h5py.File(path("badinput_long2"), "w") as f:
        f.create_dataset("short", data=np.arange(3.0))
        g = f
        for i in range(120):
            g = g.create_group("grp%05d" % i)
        g.create_dataset("deep", data=np.arange(4.0))

    # the default dataset among a scalar and a null one (which are no candidates); a
    # bfloat16 and a long double dataset
    with h5py.File(path("badinput_types"), "w") as f:
        f.create_dataset("data", data=np.array([2.5, -1.0, 4.0]))
        f.create_dataset("scale", data=np.float64(3.0))
        f.create_dataset("nul", data=h5py.Empty("<f8"))
        bf = h5py.h5t.IEEE_F32LE.copy()
        bf.set_fields(15, 7, 8, 0, 7)
        bf.set_precision(16)
        bf.set_size(2)
        d = h5py.h5d.create(f.create_group("other").id, b"bf16", bf,
                            h5py.h5s.create_simple((4,)))
        # bfloat16 of 1.5, -2, 0.25, 3 (the top 16 bits of their float32)
        bits = (np.array([1.5, -2.0, 0.25, 3.0], "<f4").view("<u4") >> 16).astype("<u2")
        d.write(h5py.h5s.ALL, h5py.h5s.ALL, bits, mtype=bf)  # the raw bits
        f.create_dataset("other/ld", data=np.array([3, 1, 2], dtype=np.longdouble) / 3)

    with h5py.File(path("badinput_none"), "w") as f:
        f.create_dataset("names", data=np.array([b"a", b"b"], dtype="S4"))
        f.create_dataset("pairs", data=np.zeros(3, dtype=[("x", "<f8"), ("y", "<f8")]))

    with h5py.File(path("badinput_several"), "w") as f:
        f.create_dataset("a", data=np.arange(5.0))
        f.create_dataset("g/b", data=np.arange(3, dtype="<i4"))
        f.create_dataset("c", data=np.arange(4, dtype="<u2"))
        f.create_dataset("label", data=np.array([b"x"], dtype="S2"))

    x = np.arange(100000, dtype="<f8")
    p = path("badinput_trunc")
    with h5py.File(p, "w") as f:
        f.create_dataset("data", data=x)
    with open(p, "r+b") as fh:
        fh.truncate(os.path.getsize(p) // 2)

    p = path("badinput_corrupt")
    with h5py.File(p, "w") as f:
        f.create_dataset("data", data=x, chunks=(10000,), compression="gzip")
    with h5py.File(p, "r") as f:
        info = f["data"].id.get_chunk_info(3)
    with open(p, "r+b") as fh:
        fh.seek(info.byte_offset + 2)
        fh.write(b"\xff" * 64)

    with h5py.File(path("badinput_filter"), "w") as f:
        unknown_filter_dataset(f, "data", np.arange(1000, dtype="<f4"), 100)

    with open(path("badinput_text"), "w") as fh:
        fh.write("this is not HDF5\n")
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
    if len(argv) == 3 and argv[1] == "--badinput":
        for p in write_badinput(argv[2]):
            print(p)
        return 0
    if len(argv) != 2 or argv[1].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    seed = int(os.environ.get("GPUPRIM_TEST_SEED", "12345"))
    for p in write_all(argv[1], seed):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

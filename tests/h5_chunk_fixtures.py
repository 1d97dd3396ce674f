#!/usr/bin/python3
"""Writes the inputs of gpuprim's direct chunk reads (io/h5_chunks.c) with h5py + numpy.

usage: /usr/bin/python3 tests/h5_chunk_fixtures.py OUTDIR [--lzf ON|OFF]

Writes OUTDIR/chunks_*.h5 and OUTDIR/chunks.list, one line per dataset to read, its fields
separated by tabs: FILE DATASET HOW [OFFSET WORD]. HOW is "chunks" (the direct path must
read it: the same bytes as H5Dread), "hdf5" (it must go through H5Dread: another filter, a
user block), "bad" (a damaged chunk: the read must fail with GP_IO_EREAD naming the
chunk's OFFSET, e.g. "[20, 250]", and WORD of the reason), or "nolzf" (an LZF dataset in a
gpuprim built without liblzf, --lzf OFF: not the direct path, and the read fails with the
line that says how to get LZF). Datasets:
  - float32 1-D, 100003 elements in chunks of 4099 (a partial edge chunk), gzip levels 1
    and 9, each with and without shuffle and fletcher32;
  - every stored numeric type in both byte orders (int8 .. uint64, float16 .. float64, long
    double), gzip + shuffle, with NaN, +-inf, -0.0 and each type's extremes;
  - N-D: 2-D with partial edge chunks in both dimensions, 3-D chunks spanning whole rows
    (contiguous in the flattening) and not, a 4-D one, chunks of one element;
  - chunks never written (a fill value set, and the default 0), 1-D and 2-D, gzip;
  - chunked without a filter; a chunk written with its deflate skipped (filter mask 2);
  - an unlimited dataset extended past its first chunks; a dataset smaller than a chunk;
  - through H5Dread: scale-offset (alone, and before gzip), a file with a user block;
  - damaged: garbage inside a gzip chunk, a gzip chunk cut short, a Fletcher-32 checksum
    that fails, a stored chunk larger than any deflate of its chunk;
  - LZF (h5py's filter 32000): float32 1-D with and without shuffle, chunks that LZF
    shrinks and chunks it does not (stored as they are, the filter's mask bit set) in one
    dataset, with fletcher32, every integer and float type in both byte orders, 2-D and
    3-D with partial edge chunks, chunks never written; damaged: an LZF stream cut short,
    and one that decodes to more bytes than its chunk holds.
The seed is GPUPRIM_TEST_SEED (default 12345).
"""
import os
import sys

import h5py
import numpy as np

GZ = dict(compression="gzip")


def values(rng, dt, shape):
    """Random values of numpy dtype dt with its specials: NaN, +-inf, -0.0 and the extremes."""
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    if dt.kind == "f":
        x = (rng.standard_normal(n) * 1e3).astype(dt)
        fi = np.finfo(dt)
        sp = [np.nan, np.inf, -np.inf, -0.0, 0.0, fi.max, -fi.max, fi.tiny]
    else:
        ii = np.iinfo(dt)
        x = rng.integers(ii.min, ii.max, size=n, endpoint=True, dtype=dt.newbyteorder("="))
        sp = [ii.min, ii.max, 0, 1, ii.max - 1]
    x = x.astype(dt)
    if n >= 4 * len(sp):
        at = rng.choice(n, size=len(sp), replace=False)
        for k, v in zip(at, sp):
            x[k] = v
    return x.reshape(shape)


class Out:
    def __init__(self, outdir):
        self.dir = outdir
        self.lines = []
        os.makedirs(outdir, exist_ok=True)

    def path(self, name):
        return os.path.join(self.dir, name + ".h5")

    def add(self, name, dataset, how, offset=None, word=None):
        self.lines.append("\t".join([self.path(name), dataset, how] +
                                    ([offset, word] if offset else [])))


def write_good(out, rng):
    x = values(rng, "<f4", (100003,))
    with h5py.File(out.path("chunks_gzip"), "w") as f:
        for level in (1, 9):
            for shuffle in (False, True):
                for fl in (False, True):
                    name = "l%d%s%s" % (level, "_shuffle" if shuffle else "",
                                        "_fletcher" if fl else "")
                    f.create_dataset(name, data=x, chunks=(4099,), compression="gzip",
                                     compression_opts=level, shuffle=shuffle, fletcher32=fl)
                    out.add("chunks_gzip", "/" + name, "chunks")
        # many chunks (the window ahead of the reads), big ones
        f.create_dataset("many", data=values(rng, "<f8", (300001,)), chunks=(1000,),
                         shuffle=True, **GZ)
        out.add("chunks_gzip", "/many", "chunks")
        f.create_dataset("big", data=values(rng, "<f4", (1 << 20,)), chunks=(1 << 18,), **GZ)
        out.add("chunks_gzip", "/big", "chunks")

    types = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8"]
    with h5py.File(out.path("chunks_types"), "w") as f:
        for t in types:
            for order in "<>":
                dt = np.dtype(order + t)
                name = "%s%s" % (t, "_be" if order == ">" else "")
                f.create_dataset(name, data=values(rng, dt, (20011,)), chunks=(1999,),
                                 shuffle=True, **GZ)
                out.add("chunks_types", "/" + name, "chunks")
        ld = (rng.standard_normal(5003) * 1e3).astype(np.longdouble)
        ld[:4] = [np.nan, np.inf, -np.inf, -0.0]
        f.create_dataset("ldouble", data=ld, chunks=(700,), shuffle=True, fletcher32=True, **GZ)
        out.add("chunks_types", "/ldouble", "chunks")

    with h5py.File(out.path("chunks_nd"), "w") as f:
        specs = [("d2", "<f4", (37, 53), (8, 10)), ("d2_rows", "<i4", (41, 29), (1, 29)),
                 ("d2_tall", ">f8", (97, 3), (16, 1)),
                 ("d3_rows", "<f4", (9, 17, 13), (2, 17, 13)),
                 ("d3_planes", "<u2", (7, 17, 13), (1, 17, 13)),
                 ("d3", ">i8", (9, 11, 13), (4, 5, 6)),
                 ("d4", "<f8", (3, 5, 7, 4), (2, 2, 3, 4)), ("d2_one", "<i2", (13, 7), (1, 1))]
        for name, dt, shape, chunks in specs:
            f.create_dataset(name, data=values(rng, dt, shape), chunks=chunks, shuffle=True, **GZ)
            out.add("chunks_nd", "/" + name, "chunks")

    with h5py.File(out.path("chunks_fill"), "w") as f:
        d = f.create_dataset("fill1", shape=(50000,), chunks=(3001,), dtype="<f4",
                             fillvalue=-3.5, **GZ)
        d[:7000] = values(rng, "<f4", (7000,))        # chunks 0-2 (2 partly)
        d[20000:26000] = values(rng, "<f4", (6000,))  # chunks 6-8
        out.add("chunks_fill", "/fill1", "chunks")
        d = f.create_dataset("fill0", shape=(30000,), chunks=(4000,), dtype=">i4", **GZ)
        d[9000:15000] = np.arange(6000, dtype=">i4")
        out.add("chunks_fill", "/fill0", "chunks")
        d = f.create_dataset("fill2d", shape=(40, 30), chunks=(7, 8), dtype="<f8",
                             fillvalue=2.25, shuffle=True, **GZ)
        d[3:20, 5:17] = values(rng, "<f8", (17, 12))
        out.add("chunks_fill", "/fill2d", "chunks")

    with h5py.File(out.path("chunks_misc"), "w") as f:
        f.create_dataset("plain", data=values(rng, "<f8", (10007,)), chunks=(1000,))
        out.add("chunks_misc", "/plain", "chunks")
        f.create_dataset("plain2d", data=values(rng, ">u4", (23, 19)), chunks=(5, 4))
        out.add("chunks_misc", "/plain2d", "chunks")
        # chunk 2 written with its deflate skipped (filter 1 of shuffle, deflate): the
        # shuffled bytes stored as they are
        y = values(rng, "<i4", (8000,))
        d = f.create_dataset("masked", data=y, chunks=(1000,), shuffle=True, **GZ)
        raw = y[2000:3000].view(np.uint8).reshape(1000, 4).T.copy().tobytes()
        d.id.write_direct_chunk((2000,), raw, filter_mask=2)
        out.add("chunks_misc", "/masked", "chunks")
        d = f.create_dataset("unlim", shape=(5000,), maxshape=(None,), chunks=(1024,),
                             dtype="<f4", **GZ)
        d[:] = values(rng, "<f4", (5000,))
        d.resize((9000,))
        d[7000:] = values(rng, "<f4", (2000,))
        out.add("chunks_misc", "/unlim", "chunks")
        f.create_dataset("small", data=values(rng, "<f8", (17,)), chunks=(100,), maxshape=(None,),
                         **GZ)
        out.add("chunks_misc", "/small", "chunks")
        f.create_dataset("one", data=values(rng, "<u8", (1,)), chunks=(1,), **GZ)
        out.add("chunks_misc", "/one", "chunks")
        f.create_dataset("sofs", data=values(rng, "<i4", (5000,)), chunks=(500,),
                         scaleoffset=0)
        out.add("chunks_misc", "/sofs", "hdf5")
        f.create_dataset("sofs_gzip", data=values(rng, "<f8", (5000,)), chunks=(500,),
                         scaleoffset=3, **GZ)
        out.add("chunks_misc", "/sofs_gzip", "hdf5")

    with h5py.File(out.path("chunks_ub"), "w", userblock_size=512) as f:
        f.create_dataset("data", data=values(rng, "<f4", (5000,)), chunks=(500,), **GZ)
    out.add("chunks_ub", "/data", "hdf5")


def damage(path, dataset, index, fn):
    """Rewrites the stored bytes of chunk `index` of dataset in place: fn(bytes) -> bytes of
    the same length."""
    with h5py.File(path, "r") as f:
        info = f[dataset].id.get_chunk_info(index)
    with open(path, "r+b") as fh:
        fh.seek(info.byte_offset)
        old = fh.read(info.size)
        new = fn(old)
        assert len(new) == len(old)
        fh.seek(info.byte_offset)
        fh.write(new)


def cut_short(out, name, data, chunk, at, word, **filters):
    """A dataset whose chunk at `at` is stored cut to half its bytes (the direct chunk write),
    listed as "bad" with that offset and WORD."""
    with h5py.File(out.path(name), "w") as f:
        d = f.create_dataset("data", data=data, chunks=(chunk,), **filters)
        blob = d.id.read_direct_chunk((at,))[1]
        d.id.write_direct_chunk((at,), blob[: len(blob) // 2])
    out.add(name, "/data", "bad", "[%d]" % at, word)


def write_bad(out, rng):
    x = values(rng, "<f4", (100000,))
    # garbage in the middle of a deflate stream
    p = out.path("chunks_bad_corrupt")
    with h5py.File(p, "w") as f:
        f.create_dataset("data", data=x, chunks=(10000,), **GZ)
    damage(p, "/data", 4, lambda b: b[:100] + b"\xa5" * 200 + b[300:])
    out.add("chunks_bad_corrupt", "/data", "bad", "[40000]", "inflate")
    # a deflate stream cut short
    cut_short(out, "chunks_bad_short", x, 10000, 70000, "inflate", **GZ)
    # a Fletcher-32 checksum that fails: one stored byte changed
    p = out.path("chunks_bad_sum")
    with h5py.File(p, "w") as f:
        f.create_dataset("data", data=x.reshape(100, 1000), chunks=(10, 250), fletcher32=True,
                         shuffle=True, **GZ)
    damage(p, "/data", 9, lambda b: b[:50] + bytes([b[50] ^ 0x10]) + b[51:])
    out.add("chunks_bad_sum", "/data", "bad", "[20, 250]", "Fletcher-32")
    # a stored size no deflate of the chunk has
    p = out.path("chunks_bad_size")
    with h5py.File(p, "w") as f:
        d = f.create_dataset("data", data=x[:4000], chunks=(1000,), **GZ)
        d.id.write_direct_chunk((1000,), b"\x78\x9c" + b"\x00" * 20000)
    out.add("chunks_bad_size", "/data", "bad", "[1000]", "bytes stored")


def mixed(rng, dt, n, run):
    """n values of dt in runs of `run`: smooth ones (integers, so LZF shrinks their chunks)
    alternating with random ones (whose chunks LZF leaves as they are), with the specials."""
    x = values(rng, dt, (n,))
    smooth = (np.arange(n) // 7 % 100).astype(np.dtype(dt))
    keep = (np.arange(n) // run) % 2 == 0
    x[keep] = smooth[keep]
    return x


def write_lzf(out, rng, built):
    """The LZF datasets: "chunks" (or "nolzf" when gpuprim has no liblzf) and damaged ones
    ("bad"; none without liblzf)."""
    good = "chunks" if built else "nolzf"
    LZ = dict(compression="lzf")
    with h5py.File(out.path("chunks_lzf"), "w") as f:
        x = mixed(rng, "<f4", 100003, 3 * 4099)
        for shuffle in (False, True):
            for fl in (False, True):
                name = "mix%s%s" % ("_shuffle" if shuffle else "", "_fletcher" if fl else "")
                f.create_dataset(name, data=x, chunks=(4099,), shuffle=shuffle, fletcher32=fl,
                                 **LZ)
                out.add("chunks_lzf", "/" + name, good)
        for t in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8"]:
            for order in "<>":
                name = "%s%s" % (t, "_be" if order == ">" else "")
                f.create_dataset(name, data=mixed(rng, order + t, 20011, 3000), chunks=(1999,),
                                 shuffle=order == ">", **LZ)
                out.add("chunks_lzf", "/" + name, good)
        f.create_dataset("d2", data=mixed(rng, "<f8", 37 * 53, 200).reshape(37, 53),
                         chunks=(8, 10), **LZ)
        out.add("chunks_lzf", "/d2", good)
        f.create_dataset("d3", data=mixed(rng, ">i4", 9 * 11 * 13, 300).reshape(9, 11, 13),
                         chunks=(4, 5, 6), shuffle=True, **LZ)
        out.add("chunks_lzf", "/d3", good)
        d = f.create_dataset("fill", shape=(40000,), chunks=(3001,), dtype="<f4",
                             fillvalue=1.5, **LZ)
        d[5000:16000] = mixed(rng, "<f4", 11000, 2500)
        out.add("chunks_lzf", "/fill", good)
    if not built:
        return
    y = mixed(rng, "<f4", 40000, 40000)  # all smooth: every chunk an LZF stream
    cut_short(out, "chunks_bad_lzf_short", y, 4000, 12000, "LZF chunk is corrupt", **LZ)
    p = out.path("chunks_bad_lzf_long")
    with h5py.File(p, "w") as f:
        big = f.create_dataset("big", data=y, chunks=(8000,), **LZ)
        blob = big.id.read_direct_chunk((0,))[1]  # decodes to 32000 bytes
        d = f.create_dataset("data", data=y, chunks=(4000,), **LZ)
        d.id.write_direct_chunk((20000,), blob)
    out.add("chunks_bad_lzf_long", "/data", "bad", "[20000]", "LZF chunk is corrupt")


def main(argv):
    built = True
    if len(argv) == 4 and argv[2] == "--lzf" and argv[3] in ("ON", "OFF"):
        built = argv[3] == "ON"
        argv = argv[:2]
    if len(argv) != 2:
        print(__doc__)
        return 2
    out = Out(argv[1])
    rng = np.random.default_rng(int(os.environ.get("GPUPRIM_TEST_SEED", "12345")))
    write_good(out, rng)
    write_bad(out, rng)
    write_lzf(out, rng, built)
    with open(os.path.join(out.dir, "chunks.list"), "w") as f:
        f.write("\n".join(out.lines) + "\n")
    print("\n".join(sorted(set(l.split("\t")[0] for l in out.lines))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

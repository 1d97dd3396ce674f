#!/usr/bin/env python3
"""End-to-end tests of gpuprim_mpi / gpuprim_gen on files written by h5py, checked with numpy.

usage: e2e.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR --np P --backend cpu|cuda
              [--transport auto|shared|mpi [--compare-transport T]] [--cli]

For each input (fresh random data, seed printed; GPUPRIM_TEST_SEED reproduces) it runs
    mpirun -np P gpuprim_mpi FILE --backend B --transport T --json R.json --out SORTED.h5
and checks against numpy on the same file: count and NaN count exactly, min and max exactly,
sum / mean / L2 norm / trapezoid integral to 1e-12 relative (of the sum of magnitudes), and
the written file: one dataset of the input's element type whose values are numpy's sort of
the input, bit for bit (NaNs last, -0.0 before +0.0). With --compare-transport T2 it runs
each input again with --transport T2: the written values and every byte count the report
gives for the exchange must be the same. With --cli it checks the command-line contract
instead: exit codes and messages of bad input, faults (also inside an exchange step of
either transport, and a failed shared-transport setup), function mode, the generator.
Exit 0 when everything passes, 77 when --backend cuda finds no GPU.
"""
import math
import os
import sys
import time

import h5py
import numpy as np

from e2e_common import arg_parser, check, cuda_missing, fresh_dir, prog, run_mpi, summary, test_seed
from e2e_common import read_report  # noqa: E402

np.seterr(all="ignore")


def run(args, cmd, np_=None):
    """cmd under mpirun with --np ranks (np_ if given)."""
    return run_mpi(args, np_ or args.np, cmd)


# ---- numpy references ------------------------------------------------------------------

def read_dtype(stored):
    """The gp_dtype numpy type that gpuprim reads a stored type as."""
    k, size = stored.kind, stored.itemsize
    if k == "f":
        return np.float32 if size <= 4 else np.float64
    if k == "i":
        return np.int32 if size <= 4 else np.int64
    if k == "u":
        return np.uint32 if size <= 4 else np.uint64
    raise ValueError(stored)


def keys(a):
    """Order keys as gpuprim defines them (NaN last, -0.0 before +0.0)."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "f":
        ut = np.uint32 if a.dtype.itemsize == 4 else np.uint64
        bits = a.view(ut).copy()
        sign = ut(1) << ut(8 * a.dtype.itemsize - 1)
        neg = (bits & sign) != 0
        k = np.where(neg, ~bits, bits | sign).astype(ut)
        k[np.isnan(a)] = np.iinfo(ut).max
        return k
    if a.dtype.kind == "i":
        ut = np.uint32 if a.dtype.itemsize == 4 else np.uint64
        return a.view(ut) ^ (ut(1) << ut(8 * a.dtype.itemsize - 1))
    return a


def ref_sorted(a):
    return a[np.argsort(keys(a), kind="stable")]


def close(a, b, scale):
    a, b = jnum(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-12 * scale + 1e-300


def jnum(v):
    return float(v) if isinstance(v, str) else v


# ---- inputs ------------------------------------------------------------------------------

def make_inputs(work, rng):
    """Writes the input files with h5py. Returns (name, path, dataset, options) tuples."""
    cases = []

    def put(name, data, dset="data", dtype=None, **kw):
        path = os.path.join(work, name + ".h5")
        with h5py.File(path, "w") as f:
            f.create_dataset(dset, data=data, dtype=dtype, **kw)
        cases.append((name, path, None, []))
        return path

    n = 100003
    a = rng.standard_normal(n) * 1e3
    idx = rng.choice(n, 300, replace=False)
    a[idx[:100]] = np.nan
    a[idx[100:150]] = np.inf
    a[idx[150:200]] = -np.inf
    a[idx[200:250]] = -0.0
    a[idx[250:]] = 0.0
    put("f64_special_gzip", a, chunks=(4096,), compression="gzip", compression_opts=4, shuffle=True)
    put("f64_finite", rng.standard_normal(65537) * 1e6 + 3.0)
    put("f32_2d", rng.standard_normal((333, 77)).astype(np.float32))
    put("i32_bigendian", rng.integers(-2**31, 2**31, 65537).astype(">i4"))
    put("i16", rng.integers(-2**15, 2**15, 1000).astype(np.int16))
    put("f16", (rng.standard_normal(4097) * 100).astype(np.float16))
    put("u64_high", (np.uint64(2**64 - 1) - rng.integers(0, 2**40, 1025).astype(np.uint64)))
    put("i64_small", rng.integers(-2**62, 2**62, 7).astype(np.int64))
    put("u32_one", np.array([4000000000], dtype=np.uint32))
    put("u8_3d", rng.integers(0, 256, (4, 5, 6)).astype(np.uint8), dset="g/cube")
    put("f64_dups", rng.integers(0, 3, 2**14 + 1).astype(np.float64))
    put("f32_equal", np.full(2**10 - 1, 7.25, dtype=np.float32))
    put("i64_sorted", np.arange(-500, 1549, dtype=np.int64))
    put("u32_reversed", np.arange(4097, 0, -1, dtype=np.uint32))
    put("f32_big", rng.random(1000000, dtype=np.float32) - 0.5)
    put("f64_empty", np.zeros(0))
    # two numeric datasets: pick with --dataset; integrate over --x
    path = os.path.join(work, "xy.h5")
    x = np.cumsum(rng.random(10007) + 0.01)
    with h5py.File(path, "w") as f:
        f["x"] = x
        f["y"] = np.sin(x / 100.0) * 5.0
        f["label"] = np.bytes_("not numeric")
    cases.append(("xy_dx", path, "y", ["--dx", "0.25"]))
    cases.append(("xy_x", path, "y", ["--x", "x"]))
    return cases


def check_case(args, name, path, dset, opts):
    rj = os.path.join(args.work, name + ".json")
    out = os.path.join(args.work, name + ".sorted.h5")
    for f in (rj, out):
        if os.path.exists(f):
            os.remove(f)
    cmd = [prog(args, "gpuprim_mpi"), path, "--backend", args.backend, "--json", rj, "--out", out, "--quiet"]
    if dset:
        cmd += ["--dataset", dset]
    cmd += opts
    p = run(args, cmd + ["--transport", args.transport])
    check(p.returncode == 0, f"{name}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    if p.returncode != 0:
        return
    r = read_report(rj)
    with h5py.File(path, "r") as f:
        if dset is None:
            names = []
            f.visititems(lambda k, o: names.append(k) if isinstance(o, h5py.Dataset) else None)
            dset_path = names[0]
        else:
            dset_path = dset
        stored = f[dset_path].dtype
        y = f[dset_path][()].reshape(-1).astype(read_dtype(stored))
        xs = f["x"][()] if "--x" in opts else None
    yd = y.astype(np.float64)
    fin = ~np.isnan(yd)
    scale = float(np.sum(np.abs(yd[np.isfinite(yd)]))) + 1.0
    check(r["count"] == y.size, f"{name}: count {r['count']} != {y.size}")
    check(r["nan_count"] == int(np.isnan(yd).sum()), f"{name}: nan_count")
    ref_sum = float(np.sum(yd[fin])) if fin.any() else 0.0
    check(close(jnum(r["sum"]), ref_sum, scale), f"{name}: sum {r['sum']} vs {ref_sum}")
    if fin.any():
        mn, mx = y[fin].min(), y[fin].max()
        if y.dtype.kind == "f":
            # -0.0 is below +0.0 for gpuprim; numpy's min may pick either
            check(np.array(r["min"], dtype=y.dtype) == mn, f"{name}: min {r['min']} vs {mn}")
            check(np.array(r["max"], dtype=y.dtype) == mx, f"{name}: max {r['max']} vs {mx}")
        else:
            check(int(r["min"]) == int(mn), f"{name}: min {r['min']} vs {mn}")
            check(int(r["max"]) == int(mx), f"{name}: max {r['max']} vs {mx}")
        check(close(jnum(r["mean"]), ref_sum / fin.sum(), scale / fin.sum()), f"{name}: mean")
        l2 = math.sqrt(float(np.sum(yd[fin] ** 2)))
        check(close(jnum(r["l2_norm"]), l2, l2 + 1e-300), f"{name}: L2 {r['l2_norm']} vs {l2}")
    if y.size >= 2 and not np.isnan(yd).any():
        if xs is not None:
            ti = float(np.sum((xs[1:] - xs[:-1]) * (yd[1:] + yd[:-1]) / 2))
            sc = float(np.sum(np.abs((xs[1:] - xs[:-1]) * (yd[1:] + yd[:-1]) / 2))) + 1
        else:
            dx = float(opts[opts.index("--dx") + 1]) if "--dx" in opts else 1.0
            ti = float(np.sum((yd[1:] + yd[:-1]) / 2)) * dx
            sc = scale * abs(dx)
        check(close(jnum(r["integral"]), ti, sc), f"{name}: integral {r['integral']} vs {ti}")
    check(r["sorted"] and r["sorted_verified"], f"{name}: sorted/verified flags")
    # the written file: one dataset, the input's stored type, numpy's order
    with h5py.File(out, "r") as f:
        names = []
        f.visititems(lambda k, o: names.append(k) if isinstance(o, h5py.Dataset) else None)
        check(len(names) == 1, f"{name}: output holds {names}")
        d = f[names[0]]
        check(d.dtype == stored, f"{name}: output type {d.dtype} != input {stored}")
        got = d[()].reshape(-1).astype(read_dtype(stored))
    want = ref_sorted(y)
    if y.dtype.kind == "f":
        gn, wn = np.isnan(got), np.isnan(want)
        same = got.shape == want.shape and np.array_equal(gn, wn) and np.array_equal(
            got[~gn].view(np.uint32 if got.itemsize == 4 else np.uint64),
            want[~wn].view(np.uint32 if want.itemsize == 4 else np.uint64))
    else:
        same = np.array_equal(got, want)
    check(same, f"{name}: sorted output differs from numpy's sort")
    leftovers = [f for f in os.listdir(args.work) if ".tmp" in f]  # .gpuprim.PID.tmp
    check(not leftovers, f"{name}: temporary files left: {leftovers}")
    if args.compare_transport:
        compare_transport(args, name, cmd, out, rj, r)


def compare_transport(args, name, cmd, out, rj, r):
    """The same run with --transport args.compare_transport: the same written bytes (every
    dataset) and the same bytes moved by the exchange (in all and per step)."""
    other = args.compare_transport
    out2, rj2 = out + "." + other + ".h5", rj + "." + other + ".json"
    cmd2 = [out2 if c == out else rj2 if c == rj else c for c in cmd] + ["--transport", other]
    p = run(args, cmd2)
    if not check(p.returncode == 0, f"{name} --transport {other}: exit {p.returncode}: {p.stderr.strip()[-400:]}"):
        return
    r2 = read_report(rj2)

    def datasets(path):
        got = {}
        with h5py.File(path, "r") as f:
            f.visititems(lambda k, o: got.__setitem__(k, o[()].tobytes()) if isinstance(o, h5py.Dataset) else None)
        return got

    check(datasets(out) == datasets(out2),
          f"{name}: --transport {args.transport} and {other} wrote different bytes")
    steps = lambda x: [(s["bytes"]) for s in x.get("exchange_step_times", [])]  # noqa: E731
    check(r["exchange_bytes"] == r2["exchange_bytes"] and steps(r) == steps(r2),
          f"{name}: bytes moved differ between the transports: {r['exchange_bytes']} {steps(r)} "
          f"vs {r2['exchange_bytes']} {steps(r2)}")
    if args.np > 1 and r["sorted"]:
        want = {"auto": None, "shared": "shared", "mpi": "mpi"}
        for rep, tr in ((r, args.transport), (r2, other)):
            used = {s["transport"] for s in rep["exchange_step_times"]} - {"none"}
            check(want[tr] is None or used <= {want[tr]}, f"{name}: --transport {tr} ran steps {used}")


# ---- the command-line contract ---------------------------------------------------------

def check_drivers(args, rng):
    """--io posix and --io mpiio give the same results and the same output bytes, for a 2-D
    big-endian int16 input (converted on the way in and out) with --argsort, --payload and
    --x, at 3 ranks; --json names the drivers."""
    mpi = prog(args, "gpuprim_mpi")
    path = os.path.join(args.work, "drivers.h5")
    with h5py.File(path, "w") as f:
        f["t"] = rng.integers(-2**15, 2**15, size=(301, 7)).astype(">i2")
        f["id"] = np.arange(301 * 7, dtype="<u4") * 3
        f["x"] = np.cumsum(rng.random(301 * 7))
    got = {}
    for io in ("posix", "mpiio", "auto"):
        rj = os.path.join(args.work, f"drivers_{io}.json")
        out = os.path.join(args.work, f"drivers_{io}.sorted.h5")
        p = run(args, [mpi, path, "--dataset", "t", "--io", io, "--backend", args.backend, "--json", rj,
                       "--out", out, "--force", "--quiet", "--stable", "--argsort", "--payload", "id",
                       "--x", "x"], np_=3)
        check(p.returncode == 0, f"drivers --io {io}: exit {p.returncode}: {p.stderr[-300:]}")
        if p.returncode:
            return
        r = read_report(rj)
        check(r["options"]["io"] == io, f"drivers --io {io}: JSON options.io {r['options']['io']}")
        want = "mpiio" if io == "mpiio" else "posix"  # auto: posix on the test's file system
        check(r.get("io_read") == want and r.get("io_write") == want,
              f"drivers --io {io}: JSON io_read {r.get('io_read')} io_write {r.get('io_write')}, want {want}")
        with h5py.File(out, "r") as f:
            data = {k: (f[k].dtype.str, f[k][()].tobytes()) for k in ("t", "t_argsort", "id")}
        for k in ("times_ms", "exchange_step_times", "options", "io_read", "io_write", "out", "binding"):
            r.pop(k, None)
        got[io] = (r, data)
    check(got["posix"][0] == got["mpiio"][0] == got["auto"][0], "drivers: the JSON results differ")
    check(got["posix"][1] == got["mpiio"][1] == got["auto"][1], "drivers: the output datasets differ")
    check(got["posix"][1]["t"][0] == ">i2", f"drivers: output stored as {got['posix'][1]['t'][0]}")


def check_cli(args, rng):
    mpi = prog(args, "gpuprim_mpi")
    gen = prog(args, "gpuprim_gen")
    w = args.work

    def expect(cmd, code, text, what):
        p = run(args, cmd)
        err = p.stderr.strip()
        ok = p.returncode == code and (text is None or text in err)
        check(ok, f"cli {what}: exit {p.returncode} (want {code}), stderr: {err[-300:]!r}")
        if text is not None and code != 0:
            lines = [l for l in err.splitlines() if "error" in l]
            check(len(lines) == 1, f"cli {what}: want one error line, got {lines}")
        return p

    good = os.path.join(w, "good.h5")
    with h5py.File(good, "w") as f:
        f["data"] = rng.standard_normal(1000)
    amb = os.path.join(w, "amb.h5")
    with h5py.File(amb, "w") as f:
        f["a"] = np.arange(5.0)
        f["g/b"] = np.arange(3)
        f["s"] = np.bytes_("text")
    expect([mpi], 2, "no input file", "no arguments")
    expect([mpi, good, "--frobnicate"], 2, "unknown option", "unknown option")
    expect([mpi, "--function", "cos"], 2, "unknown function", "unknown function")
    expect([mpi, "--function", "sin", "--n", "0"], 2, "--n", "n = 0")
    expect([mpi, "--function", "sin", "--a", "1e308", "--b", "-1e308"], 2, "overflows", "b - a overflows")
    expect([mpi, good, "--dx", "0"], 2, "--dx", "dx = 0")
    expect([mpi, good, "--backend", "tpu"], 2, "--backend", "bad backend")
    expect([mpi, good, "--io", "lustre"], 2, "--io lustre: need auto, posix or mpiio", "bad --io")
    expect([mpi, "--function", "sin", "--io", "posix"], 2, "--io belongs to file mode", "--io in function mode")
    expect([mpi, os.path.join(w, "missing.h5")], 3, "missing.h5", "missing file")
    notfile = os.path.join(w, "text.h5")
    open(notfile, "w").write("this is not HDF5\n")
    expect([mpi, notfile], 3, "text.h5", "not an HDF5 file")
    expect([mpi, good, "--dataset", "nope"], 4, "nope", "missing dataset")
    p = expect([mpi, amb], 4, "--dataset", "ambiguous dataset")
    check("/a" in p.stderr and "/g/b" in p.stderr, "cli ambiguous: candidates listed")
    expect([mpi, amb, "--dataset", "s"], 4, "/s", "string dataset")
    expect([mpi, good, "--out", good, "--force"], 2, "input file", "--out equals input")
    jout = os.path.join(w, "json_fail_out.h5")
    expect([mpi, good, "--json", os.path.join(w, "no", "such", "dir", "r.json"), "--out", jout],
           6, "cannot write the JSON report", "unwritable --json")
    check(not os.path.exists(jout), "cli: unwritable --json leaves no --out file")
    existing = os.path.join(w, "exists.h5")
    open(existing, "w").write("keep me")
    expect([mpi, good, "--out", existing, "--backend", args.backend], 6, "exists", "existing --out")
    check(open(existing).read() == "keep me", "cli: existing output untouched")
    expect([mpi, good, "--out", existing, "--force", "--quiet", "--backend", args.backend], 0, None, "--force")
    with h5py.File(existing, "r") as f:
        check(np.array_equal(f["data"][()], np.sort(h5py.File(good, "r")["data"][()])), "cli: --force output sorted")
    # faults: one rank fails at a chosen phase (GPUPRIM_FAULT); the job must end within seconds
    # with one clear message, a non-zero exit and no output file
    # (alloc: a real allocation of 2^62 bytes fails in the backend: its own error line)
    # (exchange:segv: a real segmentation fault, whose fatal-signal line names the rank and
    # the phase before the launcher ends the job)
    # (tmpfile: SIGTERM to one rank while the temporary output file exists, as mpirun or
    # Slurm sends it; every rank guards that file, not only rank 0 that names it)
    # (xstep: inside the first exchange step, after the split, while a shared-transport partner
    # reads the failing rank's memory; xsetup: the shared transport's setup fails, an error
    # with --transport shared)
    # (pread, pwrite: a failed system call of the posix driver, EIO, on one rank only: the
    # ranks agree on it; the mpiio driver has no such hook; "+pieces": with
    # GPUPRIM_READ_PIECE_BYTES=1000, so that the data go through two host pieces, a write
    # failing with a download in flight)
    faults = [("2:alloc", 7, "auto"), ("1:read", 5, "auto"), ("2:reduce", 7, "auto"),
              ("0:sort", 7, "auto"), ("1:exchange", 7, "auto"), ("2:write", 6, "auto"),
              ("1:sort:kill", None, "auto"), ("2:tmpfile", None, "auto"), ("0:tmpfile", None, "auto"),
              ("0:xsetup", 7, "shared"), ("1:exchange:segv", None, "shared")]
    for tr in ("shared", "mpi"):
        faults += [("1:exchange:kill", None, tr), ("1:xstep", 7, tr), ("0:xstep:kill", None, tr),
                   ("2:xstep:kill", None, tr)]
    if args.io != "mpiio":
        faults += [("1:pread", 5, "auto"), ("2:pwrite", 6, "auto"), ("0:pwrite", 6, "auto"),
                   ("1:pwrite+pieces", 6, "auto"), ("2:pread+pieces", 5, "auto")]
    for fault, want, tr in faults:
        fo = os.path.join(w, "fault_out.h5")
        t0 = time.time()
        env = dict(os.environ, GPUPRIM_FAULT=fault.split("+")[0])
        if fault.endswith("+pieces"):
            env["GPUPRIM_READ_PIECE_BYTES"] = "1000"
        p = run_mpi(args, 3, [mpi, good, "--out", fo, "--quiet", "--backend", args.backend,
                              "--transport", tr],
                    timeout=120, env=env)
        fault = f"{fault} (--transport {tr})"
        took = time.time() - t0
        ours = [l for l in p.stderr.splitlines() if l.startswith("gpuprim_mpi: error")]
        check(p.returncode == want if want else p.returncode != 0,
              f"fault {fault}: exit {p.returncode}, want {want or 'non-zero'}")
        check(took < 60, f"fault {fault}: the job took {took:.1f} s to end")
        named = "cannot allocate" if ":alloc " in fault else \
            os.strerror(5) if "pread" in fault or "pwrite" in fault else "GPUPRIM_FAULT"
        check(want is None or (len(ours) == 1 and named in ours[0]),
              f"fault {fault}: want one error line naming the fault, got {ours}")
        check(not [f for f in os.listdir(w) if f.startswith("fault_out.h5") or ".gpuprim." in f],
              f"fault {fault}: output left behind: {os.listdir(w)}")
        if ":segv " in fault:
            check("gpuprim_mpi: rank 1: fatal signal 11 (SIGSEGV) in rank exchange" in p.stderr,
                  f"fault {fault}: no fatal-signal line naming the phase: {p.stderr[-600:]!r}")
        if ":tmpfile " in fault:
            check("the temporary output file was removed" in p.stderr,
                  f"fault {fault}: no line says the temporary file was removed: {p.stderr[-300:]!r}")
    # a fault at the end of MPI_Finalize (as Open MPI 4.1's own race there makes one, after the
    # job ended): one notice line, the job's exit status (0), its output complete
    fo = os.path.join(w, "finalize_out.h5")
    p = run_mpi(args, 3, [mpi, good, "--out", fo, "--quiet", "--backend", args.backend],
                timeout=120, env=dict(os.environ, GPUPRIM_FAULT="1:finalize:segv"))
    notes = [l for l in p.stderr.splitlines() if "inside MPI_Finalize, after the job ended" in l]
    check(p.returncode == 0 and len(notes) == 1 and notes[0].startswith(
          "gpuprim_mpi: notice: rank 1: signal 11 (SIGSEGV)") and notes[0].endswith("exit status 0"),
          f"finalize:segv: exit {p.returncode}, notices {notes}: {p.stderr[-400:]!r}")
    if p.returncode == 0:
        with h5py.File(fo, "r") as f:
            check(np.array_equal(f["data"][()], np.sort(h5py.File(good, "r")["data"][()])),
                  "finalize:segv: output sorted")
    # a shared transport that cannot be set up under --transport auto: a notice, then MPI (on
    # the CPU backend auto is mpi from the start: no shared setup, no notice; the library's
    # fallback is test mpi_pipeline_np3_auto_fallback)
    host = args.backend == "cpu"
    fo = os.path.join(w, "fallback_out.h5")
    rj = os.path.join(w, "fallback.json")
    p = run_mpi(args, 3, [mpi, good, "--out", fo, "--quiet", "--backend", args.backend, "--json", rj],
                timeout=120, env=dict(os.environ, GPUPRIM_FAULT="1:xsetup"))
    notes = [l for l in p.stderr.splitlines() if "shared-memory transport is not available" in l]
    check(p.returncode == 0 and (len(notes) == 0 if host else len(notes) == 1 and
                                 notes[0].startswith("gpuprim_mpi: notice: ") and "rank 1" in notes[0]),
          f"cli xsetup under auto: exit {p.returncode}, notices {notes}")
    if p.returncode == 0:
        with h5py.File(fo, "r") as f:
            check(np.array_equal(f["data"][()], np.sort(h5py.File(good, "r")["data"][()])),
                  "cli xsetup under auto: output sorted")
        used = {s["transport"] for s in read_report(rj)["exchange_step_times"]} - {"none"}
        check(used == {"mpi"}, f"cli xsetup under auto: steps went through {used}, not mpi")
    # partners on different nodes (GPUPRIM_EXCHANGE_NODE_RANKS makes "nodes" of that many
    # ranks): an error with --transport shared, shared and mpi steps under auto (CUDA; all
    # mpi on the CPU backend)
    p = run_mpi(args, 3, [mpi, good, "--quiet", "--backend", args.backend, "--transport", "shared"],
                timeout=120, env=dict(os.environ, GPUPRIM_EXCHANGE_NODE_RANKS="1"))
    lines = [l for l in p.stderr.splitlines() if l.startswith("gpuprim_mpi: error")]
    check(p.returncode == 7 and len(lines) == 1 and "--transport shared" in lines[0] and
          "on another node" in lines[0], f"cli --transport shared across nodes: exit {p.returncode}, {lines}")
    rj = os.path.join(w, "nodes.json")
    p = run_mpi(args, 4, [mpi, good, "--quiet", "--backend", args.backend, "--json", rj], timeout=120,
                env=dict(os.environ, GPUPRIM_EXCHANGE_NODE_RANKS="2"))
    if check(p.returncode == 0, f"cli auto across nodes: exit {p.returncode} {p.stderr[-300:]}"):
        used = [s["transport"] for s in read_report(rj)["exchange_step_times"]]
        want = ["mpi"] * 3 if host else ["shared", "mpi", "shared"]
        check(used == want, f"cli auto across nodes of 2: steps {used}, want {want}")
    expect([mpi, good, "--transport", "tcp"], 2, "--transport", "bad transport")
    expect([mpi, good, "--no-sort", "--transport", "mpi"], 2, "--transport", "--transport with --no-sort")
    check_drivers(args, rng)
    p = run(args, [mpi, "--help"], np_=1)
    check(p.returncode == 0 and "--function" in p.stdout, "cli --help")
    p = run(args, [mpi, "--version"], np_=1)
    check(p.returncode == 0 and "gpuprim_mpi" in p.stdout, "cli --version")
    p = run(args, [mpi, good, "--backend", args.backend, "--verbose", "--no-sort"])
    check(p.returncode == 0 and "rank" in p.stdout and "phase" in p.stdout and "skipped" in p.stdout,
          "cli --verbose --no-sort table")

    # function mode: known integrals, the same for every rank count
    known = [("x2", 0.0, 1.0, 1.0 / 3.0), ("sin", 0.0, math.pi, 2.0), ("exp", 0.0, 1.0, math.e - 1.0),
             ("gauss", -3.0, 3.0, math.sqrt(math.pi) * math.erf(3.0))]
    for fn, a, b, exact in known:
        vals = []
        for P in (1, 2, 3, 5, 8):
            rj = os.path.join(w, f"fn_{fn}_{P}.json")
            p = run(args, [mpi, "--function", fn, "--a", repr(a), "--b", repr(b), "--n", "1e6",
                           "--backend", args.backend, "--json", rj, "--quiet"], np_=P)
            check(p.returncode == 0, f"function {fn} P={P}: exit {p.returncode} {p.stderr[-300:]}")
            if p.returncode == 0:
                vals.append(read_report(rj)["integral"])
        h = (b - a) / 1e6
        for P, v in zip((1, 2, 3, 5, 8), vals):
            # trapezoid error ~ (b-a) h^2 max|f''| / 12
            check(abs(v - exact) < (b - a) * h * h * 3.0 + 1e-12, f"function {fn} P={P}: {v} vs {exact}")
        check(len(vals) == 5 and max(vals) - min(vals) <= 1e-13 * abs(exact) + 1e-15,
              f"function {fn}: rank counts disagree {vals}")
    p = run(args, [mpi, "--function", "sin", "--a", "0", "--b", "3.14159", "--n", "1000000", "--backend", args.backend])
    check(p.returncode == 0 and "integral" in p.stdout and "exact" in p.stdout, "function mode table")

    # the generator: every distribution, file independent of the rank count
    for dist, dt in [("uniform", "f32"), ("normal", "f64"), ("sorted", "i64"), ("reversed", "u32"),
                     ("few-unique", "i32"), ("with-nan", "f64"), ("uniform", "u64")]:
        outs = []
        for P in (1, 3):
            o = os.path.join(w, f"gen_{dist}_{dt}_{P}.h5")
            if os.path.exists(o):
                os.remove(o)
            p = run(args, [gen, o, "--n", "10007", "--dtype", dt, "--dist", dist, "--seed", "5"], np_=P)
            check(p.returncode == 0, f"gen {dist} {dt} P={P}: exit {p.returncode} {p.stderr[-300:]}")
            if p.returncode == 0:
                with h5py.File(o, "r") as f:
                    outs.append(f["data"][()])
        if len(outs) == 2:
            check(outs[0].size == 10007 and outs[0].dtype == np.dtype(
                {"f32": "f4", "f64": "f8", "i32": "i4", "i64": "i8", "u32": "u4", "u64": "u8"}[dt]),
                f"gen {dist} {dt}: size/type")
            check(outs[0].tobytes() == outs[1].tobytes(), f"gen {dist} {dt}: differs between -np 1 and -np 3")
            a = outs[0]
            if dist == "sorted":
                check(np.all(a[1:] >= a[:-1]), "gen sorted is sorted")
            if dist == "reversed":
                check(np.all(a[1:] <= a[:-1]), "gen reversed is reversed")
            if dist == "few-unique":
                check(len(np.unique(a)) <= 16, "gen few-unique")
            if dist == "with-nan":
                check(np.isnan(a).any(), "gen with-nan has NaNs")
            if dist == "normal":
                check(abs(a.mean()) < 0.1 and abs(a.std() - 1) < 0.1, "gen normal moments")
    expect([gen, os.path.join(w, "g.h5"), "--dtype", "i32", "--dist", "with-nan"], 2, None, "gen with-nan int")
    expect([gen, os.path.join(w, "g.h5"), "--dtype", "f16"], 2, None, "gen bad dtype")


def main():
    ap = arg_parser()
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--cli", action="store_true")
    ap.add_argument("--transport", default="auto", choices=["auto", "shared", "mpi"])
    ap.add_argument("--compare-transport", default=None, choices=["auto", "shared", "mpi"])
    args = ap.parse_args()
    fresh_dir(args.work)
    seed = test_seed()
    print(f"e2e: np={args.np} backend={args.backend} transport={args.transport} "
          f"io={args.io or 'default'} seed={seed} (GPUPRIM_TEST_SEED reproduces)", flush=True)
    rng = np.random.default_rng(seed)
    if cuda_missing(args):
        return 77
    if args.cli:
        check_cli(args, rng)
    else:
        for name, path, dset, opts in make_inputs(args.work, rng):
            check_case(args, name, path, dset, opts)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Bad input end to end: gpuprim_mpi on h5py-written files it must refuse, or read although
they are unusual.

usage: e2e_badinput.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR [--nps 1,3]
                       [--backend cpu|cuda] [--limit SECONDS]

The inputs come from tests/h5_fixtures.py (write_badinput). For every bad input and every
rank count P of --nps it runs
    mpirun -np P gpuprim_mpi FILE --dataset D --out OUT --json R --quiet --backend B
and checks: the exit code (2 options, 3 open, 4 dataset, 5 read); stderr has exactly one
"gpuprim_mpi: error: " line, naming the file, the dataset and the reason, and no other line
mentions an error (no HDF5 error stack); neither OUT nor R nor a temporary file is left; the
job ends within --limit seconds (a rank that does not leave is a failure, and the job is
killed). The inputs that must be read (a soft link and external links that resolve,
unlimited chunked datasets, chunks never written, empty datasets) are checked against h5py + numpy: count, sum,
min, max and the sorted --out file. Exit 0 when everything passes.
"""
import os
import shutil
import subprocess
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h5_fixtures  # noqa: E402  (the independent writer of the inputs)
from e2e_common import arg_parser, check, run_mpi, summary  # noqa: E402
from e2e_common import read_report  # noqa: E402


def run(args, P, cmd, env=None):
    """Runs cmd under mpirun with P ranks (env: the environment, default ours); returns
    (rc, stdout, stderr, seconds); rc None when it ran past --limit (run_mpi then kills
    mpirun and every rank)."""
    t0 = time.time()
    try:
        p = run_mpi(args, P, cmd, timeout=args.limit, env=env)
    except subprocess.TimeoutExpired:
        return None, "", "", time.time() - t0
    return p.returncode, p.stdout, p.stderr, p.seconds


def leftovers(outdir):
    return sorted(os.listdir(outdir))


# ---- the cases ----------------------------------------------------------------------------
# (name, file, options, exit code, strings the one error line must hold)
# The file name is always required too; dataset errors name the dataset's path.

def bad_cases(fx):
    B = os.path.join(fx, "badinput.h5")
    need = "need integer or float"
    cases = [
        # non-numeric classes
        ("string fixed", B, ["--dataset", "str_fixed"], 4,
         ["/str_fixed", "unsupported element class string", need]),
        ("string vlen", B, ["--dataset", "str_vlen"], 4,
         ["/str_vlen", "class string (variable-length", need]),
        ("vlen numeric", B, ["--dataset", "vlen_num"], 4,
         ["/vlen_num", "class variable-length (sequences of float64", need]),
        ("compound", B, ["--dataset", "compound"], 4,
         ["/compound", "class compound (fields x, y", need]),
        ("enum", B, ["--dataset", "enum"], 4, ["/enum", "class enum (members OFF, ON", need]),
        ("object reference", B, ["--dataset", "objref"], 4,
         ["/objref", "class reference (object references", need]),
        ("region reference", B, ["--dataset", "regref"], 4,
         ["/regref", "class reference (region references", need]),
        ("opaque", B, ["--dataset", "opaque"], 4, ["/opaque", "class opaque (2 bytes each", need]),
        ("array", B, ["--dataset", "array"], 4,
         ["/array", "class array (float64[3] per element", need]),
        ("bitfield", B, ["--dataset", "bitfield"], 4,
         ["/bitfield", "class bitfield (1 byte each", need]),
        # dataspaces
        ("scalar dataspace", B, ["--dataset", "scalar"], 4, ["/scalar", "scalar dataspace"]),
        ("null dataspace", B, ["--dataset", "null"], 4, ["/null", "null dataspace"]),
        # links whose target is missing
        ("dangling soft link", B, ["--dataset", "dangling_soft"], 4,
         ["/dangling_soft", "link target missing", "soft link -> /nowhere/data"]),
        ("dangling external link (file)", B, ["--dataset", "dangling_ext_file"], 4,
         ["/dangling_ext_file", "link target missing", "badinput_missing.h5:/data"]),
        ("dangling external link (object)", B, ["--dataset", "dangling_ext_obj"], 4,
         ["/dangling_ext_obj", "link target missing", "badinput_ext.h5:/nope"]),
        ("dangling soft link to a group", B, ["--dataset", "dangling_grp/x"], 4,
         ["/dangling_grp/x", "link target missing", "soft link /dangling_grp -> /nowhere"]),
        ("missing dataset behind an external link", B, ["--dataset", "ext_grp/nope"], 4,
         ["/ext_grp/nope", "no such dataset"]),
        # the same checks for --x and --payload
        ("--x of class compound", B, ["--dataset", "target", "--x", "compound"], 4,
         ["/compound", "class compound"]),
        ("--x through a dangling soft link", B, ["--dataset", "target", "--x", "dangling_soft"],
         4, ["/dangling_soft", "link target missing"]),
        ("--payload of class enum", B, ["--dataset", "target", "--payload", "enum"], 4,
         ["/enum", "class enum"]),
        ("--payload through a dangling external link", B,
         ["--dataset", "target", "--payload", "dangling_ext_obj"], 4,
         ["/dangling_ext_obj", "link target missing"]),
        # the default dataset
        ("no numeric dataset", os.path.join(fx, "badinput_none.h5"), [], 4,
         ["no numeric dataset in the file"]),
        ("several numeric datasets", os.path.join(fx, "badinput_several.h5"), [], 4,
         ["3 numeric datasets, choose one with --dataset", "/a", "/c", "/g/b"]),
        ("several numeric datasets and bad candidates", B, [], 4,
         ["numeric datasets, choose one with --dataset", "/target", "/unlim"]),
        # paths of 1024 bytes and more: never passed over for another dataset
        ("the one dataset's path too long", os.path.join(fx, "badinput_long1.h5"), [], 4,
         ["the numeric dataset's path has 1024 bytes, more than the 1023 supported"]),
        ("a dataset path too long beside a short one", os.path.join(fx, "badinput_long2.h5"),
         [], 4, ["2 numeric datasets, choose one with --dataset", "(a path of 1085 bytes)",
                 "/short"]),
        ("--dataset too long", B, ["--dataset", "L" * 1100], 4, ["dataset name too long"]),
        # a newline in a name keeps the error on one line
        ("newline in a dataset name", B, ["--dataset", "nl\nmissing"], 4,
         ["/nl?missing: no such dataset"]),
        # the checks that were there before
        ("missing file", os.path.join(fx, "badinput_nosuchfile.h5"), ["--dataset", "data"], 3,
         ["cannot open", "No such file or directory"]),
        ("directory as file", fx, [], 3, ["cannot open", "Is a directory"]),
        ("not HDF5", os.path.join(fx, "badinput_text.h5"), [], 3,
         ["cannot open", "not an HDF5 file"]),
        ("truncated file", os.path.join(fx, "badinput_trunc.h5"), [], 3,
         ["cannot open", "truncated file"]),
        ("missing dataset", B, ["--dataset", "nope"], 4, ["/nope", "no such dataset"]),
        # a missing dataset names the file's numeric datasets nearest to it: by the last
        # component, by edit distance; with none near, the few there are
        ("missing dataset, the nearest named", os.path.join(fx, "badinput_several.h5"),
         ["--dataset", "b"], 4, ["/b: no such dataset (did you mean /g/b?)"]),
        ("missing dataset, a typo in a group", os.path.join(fx, "badinput_several.h5"),
         ["--dataset", "/h/b"], 4, ["/h/b: no such dataset (did you mean /g/b?)"]),
        ("missing dataset, none near", os.path.join(fx, "badinput_several.h5"),
         ["--dataset", "/zzzzzz"], 4,
         ["/zzzzzz: no such dataset (numeric datasets in the file: /a, /c, /g/b)"]),
        ("--x missing, the nearest named", B, ["--dataset", "target", "--x", "targte"], 4,
         ["/targte: no such dataset (did you mean /target?) (--x)"]),
        ("group as dataset", B, ["--dataset", "grp"], 4, ["/grp", "not a dataset (a group)"]),
        ("empty dataset name", B, ["--dataset", ""], 4, ["empty dataset name"]),
        ("missing filter", os.path.join(fx, "badinput_filter.h5"), [], 5,
         ["/data", "read failed", "required filter (name unavailable) is not registered"]),
        ("corrupt chunk", os.path.join(fx, "badinput_corrupt.h5"), [], 5,
         ["/data", "read failed"]),
        # options
        ("unknown option", B, ["--dataset", "target", "--frobnicate"], 2,
         ["unknown option", "--frobnicate"]),
        # a misspelled option: the nearest of getopt_long's table
        ("misspelled --dataset", B, ["--datset", "target"], 2,
         ["unknown option --datset: did you mean --dataset? (see --help)"]),
        ("--Dataset", B, ["--Dataset", "target"], 2, ["did you mean --dataset?"]),
        ("--ouput", B, ["--dataset", "target", "--ouput", "o.h5"], 2,
         ["unknown option --ouput: did you mean --out?"]),
        ("--dx 0", B, ["--dataset", "target", "--dx", "0"], 2, ["--dx"]),
        ("--dataset without a value", B, ["--dataset"], 2, ["--dataset", "needs a value"]),
        ("--out is the input", B, ["--dataset", "target", "--out", B, "--force"], 2,
         ["is the input file"]),
        ("--out empty", B, ["--dataset", "target", "--out", ""], 2,
         ["--out: needs a file name, got an empty word"]),
        ("--json empty", B, ["--dataset", "target", "--json", ""], 2,
         ["--json: needs a file name, got an empty word"]),
        ("--x missing, named as --x", B, ["--dataset", "target", "--x", "nope"], 4,
         ["/nope: no such dataset (--x)"]),
        ("--payload missing, named as --payload", B, ["--dataset", "target", "--payload", "nope"],
         4, ["/nope: no such dataset (--payload)"]),
        # an option (or any word that starts with '-') where a name belongs: the value is
        # missing; refused before anything is written (a file "-q" would be left here)
        ("--out followed by an option", B, ["--dataset", "target", "--out", "-q"], 2,
         ["--out -q:", "may not start with '-'", "give ./-q"]),
        ("--json followed by an option", B, ["--dataset", "target", "--json", "--verbose"], 2,
         ["--json --verbose:", "give ./--verbose"]),
        ("--out of a name that starts with '-'", B, ["--dataset", "target", "--out", "-o.h5"], 2,
         ["--out -o.h5:", "give ./-o.h5"]),
        ("--dataset followed by an option", B, ["--dataset", "--quiet"], 2,
         ["--dataset --quiet:", "give /--quiet"]),
        ("--payload followed by an option", B, ["--dataset", "target", "--payload", "--argsort"],
         2, ["--payload --argsort:", "give /--argsort"]),
    ]
    if os.geteuid() != 0:
        noread = os.path.join(fx, "badinput_noread.h5")
        shutil.copy(os.path.join(fx, "badinput_ext.h5"), noread)
        os.chmod(noread, 0)
        cases.append(("unreadable file", noread, [], 3, ["cannot open", "Permission denied"]))
    else:
        print("note: running as root: the unreadable-file case is skipped (root reads anyway)")
    return cases


# option errors come before any file is touched: they name the option, not a file
OPTION_CODES = (2,)


def check_bad(args, fx, outdir, P, name, path, opts, code, needles):
    out = os.path.join(outdir, "out.h5")
    rj = os.path.join(outdir, "r.json")
    cmd = [os.path.join(args.bin, "gpuprim_mpi"), path, "--quiet", "--backend", args.backend,
           "--json", rj]
    if "--out" not in opts:
        cmd += ["--out", out]
    rc, _, err, _ = run(args, P, cmd + opts)
    tag = f"np {P}: {name}"
    if not check(rc is not None, f"{tag}: still running after {args.limit} s (killed)"):
        return
    check(rc == code, f"{tag}: exit {rc}, want {code}; stderr: {err.strip()[-400:]!r}")
    ours = [l for l in err.splitlines() if l.startswith("gpuprim_mpi: error: ")]
    other = [l for l in err.splitlines()
             if ("error" in l.lower() or "HDF5-DIAG" in l or l.lstrip().startswith("#0"))
             and l not in ours]
    check(len(ours) == 1, f"{tag}: want one error line, got {ours}")
    check(not other, f"{tag}: other error output on stderr: {other[:5]}")
    if ours:
        line = ours[0]
        want = list(needles)
        if code not in OPTION_CODES:
            want.append(os.path.basename(path.rstrip("/")))
        missing = [w for w in want if w not in line]
        check(not missing, f"{tag}: error line lacks {missing}: {line!r}")
    left = leftovers(outdir)
    check(not left, f"{tag}: files left behind: {left}")
    for f in left:
        os.remove(os.path.join(outdir, f))


def sorted_ref(a):
    """numpy's ascending sort of the flattened values (no NaNs in these inputs)."""
    return np.sort(np.ascontiguousarray(a).reshape(-1), kind="stable")


def check_good(args, fx, outdir, P, name, dset):
    B = os.path.join(fx, "badinput.h5")
    out = os.path.join(outdir, "out.h5")
    rj = os.path.join(outdir, "r.json")
    cmd = [os.path.join(args.bin, "gpuprim_mpi"), B, "--dataset", dset, "--quiet",
           "--backend", args.backend, "--json", rj, "--out", out]
    # run from outdir, not the fixtures' folder: relative external links resolve next to
    # their parent file
    rc, _, err, _ = run(args, P, cmd)
    tag = f"np {P}: {name}"
    if not check(rc is not None, f"{tag}: still running after {args.limit} s (killed)"):
        return
    if not check(rc == 0, f"{tag}: exit {rc}; stderr: {err.strip()[-400:]!r}"):
        return
    with h5py.File(B, "r") as f:  # h5py follows the soft and external links itself
        d = f[dset]
        stored = d.dtype
        shape = list(d.shape)
        y = d[()].reshape(-1)
    r = read_report(rj)
    check(r.get("shape") == shape, f"{tag}: shape {r.get('shape')} in the report, want {shape}")
    if len(shape) > 1:  # the summary line names the shape of a multi-dimensional dataset
        rc2, out2, _, _ = run(args, P, [os.path.join(args.bin, "gpuprim_mpi"), B, "--dataset",
                                           dset, "--no-sort", "--backend", args.backend])
        want = f" elements (shape {' x '.join(str(x) for x in shape)}, read flattened, row-major),"
        first = out2.splitlines()[0] if out2 else ""
        check(rc2 == 0 and want in first, f"{tag}: summary line {first!r} (exit {rc2}) lacks {want!r}")
    check(r["count"] == y.size, f"{tag}: count {r['count']} != {y.size}")
    check(r["nan_count"] == 0, f"{tag}: nan_count {r['nan_count']}")
    yd = y.astype(np.float64)
    check(float(r["sum"]) == float(np.sum(yd)), f"{tag}: sum {r['sum']} vs {np.sum(yd)}")
    if y.size:
        check(float(r["min"]) == float(yd.min()), f"{tag}: min {r['min']} vs {yd.min()}")
        check(float(r["max"]) == float(yd.max()), f"{tag}: max {r['max']} vs {yd.max()}")
    with h5py.File(out, "r") as f:
        names = []
        f.visititems(lambda k, o: names.append(k) if isinstance(o, h5py.Dataset) else None)
        check(names == [dset.lstrip("/")], f"{tag}: output holds {names}, want [{dset!r}]")
        if names:
            got = f[names[0]]
            check(got.dtype == stored, f"{tag}: output type {got.dtype} != input {stored}")
            check(got.shape == (y.size,), f"{tag}: output shape {got.shape}, want ({y.size},)")
            check(np.array_equal(got[()], sorted_ref(y)), f"{tag}: output differs from numpy's sort")
    for f in leftovers(outdir):
        if f not in ("out.h5", "r.json"):
            check(False, f"{tag}: unexpected file left: {f}")
        os.remove(os.path.join(outdir, f))


GOOD = [
    ("soft link that resolves", "soft_ok"),
    ("external link that resolves", "ext_ok"),
    ("dataset behind an external link to a group", "ext_grp/more"),
    ("unlimited chunked 1-D, read at its current size", "unlim"),
    ("unlimited chunked 2-D, read at its current size", "unlim2d"),
    ("chunks never written read as the fill value", "sparse"),
    ("gzip chunks never written read as the fill value", "sparse_gzip"),
    ("empty 1-D dataset (valid: count 0)", "empty"),
    ("empty 2-D dataset (valid: count 0)", "empty2d"),
    ("virtual dataset over two files (read serially on each rank)", "vds"),
    ("virtual dataset with a missing source file (its part reads as the fill value)",
     "vds_missing"),
]


def check_types(args, fx, outdir, P):
    """badinput_types.h5: without --dataset the candidates listed are the three numeric
    arrays, not the scalar and the null dataset; bfloat16 is named so and read exactly; a
    long double --out prints the float64 notice (also with --quiet) and holds np.sort of
    the values rounded to float64."""
    T = os.path.join(fx, "badinput_types.h5")
    exe = os.path.join(args.bin, "gpuprim_mpi")
    rj = os.path.join(outdir, "r.json")
    out = os.path.join(outdir, "out.h5")
    tag = f"np {P}: types"
    rc, _, err, _ = run(args, P, [exe, T, "--quiet", "--backend", args.backend])
    one_error(f"{tag}: candidates", rc, err, 4,
              ["3 numeric datasets, choose one with --dataset: /data, /other/bf16, /other/ld"])
    rc, so, err, _ = run(args, P, [exe, T, "--dataset", "other/bf16", "--no-sort", "--backend",
                                   args.backend, "--json", rj])
    first = so.splitlines()[0] if so else ""
    check(rc == 0 and "(bfloat16 little-endian, read as f32)" in first,
          f"{tag}: bfloat16: exit {rc}, summary {first!r}")
    if rc == 0:
        r = read_report(rj)
        check(float(r["sum"]) == 2.75 and float(r["min"]) == -2.0 and float(r["max"]) == 3.0,
              f"{tag}: bfloat16 sum/min/max {r['sum']} {r['min']} {r['max']}, want 2.75 -2 3")
        os.remove(rj)
    rc, _, err, _ = run(args, P, [exe, T, "--dataset", "other/ld", "--out", out, "--quiet",
                                  "--backend", args.backend])
    notes = [l for l in err.splitlines() if "notice:" in l and "rounded to float64" in l]
    check(rc == 0 and len(notes) == 1, f"{tag}: long double --out: exit {rc}, notices {notes}")
    if rc == 0:
        with h5py.File(T, "r") as f:
            ld = f["other/ld"][()]
        with h5py.File(out, "r") as f:
            got = f["other/ld"]
            check(got.dtype == ld.dtype, f"{tag}: long double out type {got.dtype}")
            want = np.sort(ld.astype(np.float64)).astype(ld.dtype)
            check(np.array_equal(got[()], want), f"{tag}: long double out {got[()]}, want {want}")
    for f in leftovers(outdir):
        os.remove(os.path.join(outdir, f))


def one_error(tag, rc, err, code, needles):
    """rc is code and stderr has one gpuprim_mpi error line holding every needle."""
    check(rc == code, f"{tag}: exit {rc}, want {code}; stderr: {err.strip()[-400:]!r}")
    ours = [l for l in err.splitlines() if l.startswith("gpuprim_mpi: error: ")]
    check(len(ours) == 1 and all(n in ours[0] for n in needles),
          f"{tag}: want one error line with {needles}, got {ours}")


def check_targets(args, fx, outdir, P):
    """Output targets: what --out and --json must refuse before any work (a FIFO, a
    symbolic link, a device, the input as --json, --json and --out naming one file), and
    what they must write (a 250-byte file name, a 600-byte path); then a full disk (a
    64 KiB tmpfs, where mount works) for --out (found by the space check before the data are
    read, and with that check passed blindly, GPUPRIM_FAULT=0:space, by the reservation at
    the write), for --json, and for --json after an --out elsewhere was written: exit 6
    naming the reason, nothing left (no --out either)."""
    d = os.path.join(outdir, "targets")
    os.makedirs(d)
    src = os.path.join(d, "in.h5")
    y = np.random.default_rng(P).standard_normal(100000).astype(np.float32)
    with h5py.File(src, "w") as f:
        f.create_dataset("data", data=y)
    before = open(src, "rb").read()
    exe = os.path.join(args.bin, "gpuprim_mpi")
    base = [exe, src, "--quiet", "--backend", args.backend]
    fifo = os.path.join(d, "fifo.h5")
    os.mkfifo(fifo)
    keep = os.path.join(d, "keep.h5")
    open(keep, "wb").write(b"not ours")
    cfg = os.path.join(d, "config.json")  # a user's JSON object, not a report
    open(cfg, "w").write('{"x": 1}\n')
    link = os.path.join(d, "link.h5")
    os.symlink("keep.h5", link)
    refuse = [
        ("--out FIFO --force", ["--out", fifo, "--force"], 6, ["is not a regular file"]),
        ("--out /dev/null --force", ["--out", "/dev/null", "--force"], 6, ["is not a regular file"]),
        ("--out symlink --force", ["--out", link, "--force"], 6, ["is a symbolic link"]),
        ("--out existing", ["--out", keep], 6, ["exists (use --force"]),
        # an existing file that is not a JSON report (here the keep.h5 bytes) is kept
        ("--json over data", ["--json", keep], 6, ["is not a JSON report", "not replaced",
                                                    "--force with --out replaces it"]),
        ("--json over a JSON object", ["--json", cfg], 6, ["is not a JSON report", "not replaced"]),
        ("--json is the input", ["--json", src], 2, ["--json", "is the input file"]),
        ("--json is --out", ["--out", os.path.join(d, "o.h5"), "--json",
                             os.path.join(d, ".", "o.h5")], 2, ["is the --out file"]),
        # --force governs --out only: alone, or with --json, it is a usage error
        ("--force without --out", ["--force"], 2, ["--force", "give --out FILE"]),
        ("--force with --json only", ["--force", "--json", os.path.join(d, "f.json")], 2,
         ["--force", "give --out FILE"]),
    ]
    for name, opts, code, needles in refuse:
        rc, _, err, _ = run(args, P, base + opts)
        one_error(f"np {P}: {name}", rc, err, code, needles)
    check(not os.path.exists(os.path.join(d, "f.json")), f"np {P}: --force --json: no report")
    check(open(keep, "rb").read() == b"not ours", f"np {P}: --json over data: the file is kept")
    check(open(cfg).read() == '{"x": 1}\n', f"np {P}: --json over a JSON object: the file is kept")
    # a payload whose output path lies inside the argsort's: exit 4, nothing written, and
    # found before the work: an injected failure of rank 0's read (GPUPRIM_FAULT, exit 5)
    # must not be reached
    coll = os.path.join(d, "coll.h5")
    with h5py.File(coll, "w") as f:
        f["a"] = y[:1000]
        f.create_group("a_argsort")["x"] = np.arange(1000)
    rc, _, err, _ = run(args, P, [exe, coll, "--quiet", "--backend", args.backend, "--dataset", "a",
                                  "--argsort", "--payload", "/a_argsort/x", "--out",
                                  os.path.join(d, "c.h5")],
                        env=dict(os.environ, GPUPRIM_FAULT="0:read"))
    one_error(f"np {P}: --payload inside the argsort's path", rc, err, 4,
              ["/a_argsort/x", "not inside or above"])
    check(not os.path.exists(os.path.join(d, "c.h5")), f"np {P}: payload clash: no output")
    # names that start with '-', spelled as the usage error suggests: ./-q and /-q
    with h5py.File(coll, "a") as f:
        f["-q"] = y[:1000]
    rc, _, err, _ = run(args, P, [exe, coll, "--quiet", "--backend", args.backend, "--dataset",
                                  "/-q", "--out", "./-q"])
    if check(rc == 0, f"np {P}: --dataset /-q --out ./-q: exit {rc}; {err.strip()[-300:]!r}"):
        with h5py.File("./-q", "r") as f:
            check(np.array_equal(f["-q"][()], np.sort(y[:1000])), f"np {P}: ./-q: sorted output")
    if os.path.exists("./-q"):
        os.remove("./-q")
    check(os.path.islink(link) and open(keep, "rb").read() == b"not ours",
          f"np {P}: the symbolic link and its target are untouched")
    check(os.path.exists(fifo) and not os.path.isfile(fifo), f"np {P}: the FIFO is still a FIFO")
    check(open(src, "rb").read() == before, f"np {P}: the input is untouched")
    import stat as _st
    check(_st.S_ISCHR(os.stat("/dev/null").st_mode), f"np {P}: /dev/null is still a device")
    # long names: a 250-byte file name, a path of three 199-byte folders
    deep = os.path.join(d, *(["d" * 199] * 3))
    os.makedirs(deep)
    for name, out in (("250-byte file name", os.path.join(d, "a" * 247 + ".h5")),
                      ("600-byte path", os.path.join(deep, "o.h5"))):
        rc, _, err, _ = run(args, P, base + ["--out", out])
        if check(rc == 0, f"np {P}: --out with a {name}: exit {rc}; {err.strip()[-300:]!r}"):
            with h5py.File(out, "r") as f:
                check(np.array_equal(f["data"][()], np.sort(y)), f"np {P}: {name}: sorted output")
        left = [f for f in os.listdir(os.path.dirname(out)) if ".tmp" in f]
        check(not left, f"np {P}: {name}: temporary files left: {left}")
    # a full disk
    full = os.path.join(d, "full")
    os.makedirs(full)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", full],
                       capture_output=True, text=True)
    if m.returncode != 0:
        print(f"note: np {P}: the full-disk case is skipped (cannot mount a tmpfs: "
              f"{(m.stderr or m.stdout).strip()[:120]})")
    else:
        # the last case: --out is written (elsewhere) before the report fails on the full
        # disk; the run fails, so --out must not appear either
        good_out = os.path.join(d, "o_ok.h5")
        try:
            for opts in (["--out", os.path.join(full, "o.h5")],
                         ["--no-sort", "--json", os.path.join(full, "r.json")],
                         ["--out", good_out, "--json", os.path.join(full, "r.json")]):
                if "--json" in opts:  # fill it, so that the report cannot be written
                    with open(os.path.join(full, "fill"), "wb") as f:
                        try:
                            f.write(b"x" * 65536)
                        except OSError:
                            pass
                # without --quiet: no summary may claim "written to" an --out that is gone
                rc, so, err, _ = run(args, P, [x for x in base if x != "--quiet"] + opts)
                if opts[0] == "--out" and "--json" not in opts:
                    # found before the data are read; then, with the check passed blindly
                    # (GPUPRIM_FAULT=0:space), by the reservation when the file is created
                    one_error(f"np {P}: full disk --out, checked first", rc, err, 6,
                              ["needs 531072 bytes", "free; nothing was read or written"])
                    rc, so, err, _ = run(args, P, [x for x in base if x != "--quiet"] + opts,
                                         env=dict(os.environ, GPUPRIM_FAULT="0:space"))
                one_error(f"np {P}: full disk {opts[-2]}", rc, err, 6, ["No space left on device"])
                check("written to" not in so, f"np {P}: full disk {opts[-2]}: the summary says "
                      f"'written to': {[l for l in so.splitlines() if 'written to' in l]}")
                left = [f for f in os.listdir(full) if f != "fill"]
                check(not left, f"np {P}: full disk {opts[-2]}: files left: {left}")
            left = [f for f in os.listdir(d) if f == "o_ok.h5" or ".tmp" in f]
            check(not left, f"np {P}: full disk --json after a good --out: files left: {left}")
        finally:
            subprocess.run(["umount", full])
    shutil.rmtree(d)


WRITER = r"""
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "w", libver=sys.argv[2])
f.create_dataset("grid/temp", data=np.arange(100000, dtype=np.float32))
print("ready", flush=True)
sys.stdin.read()  # held open, unflushed, until the test closes our stdin
f.close()
"""


def check_writing(args, outdir, P):
    """A file that h5py still holds open in "w" mode, unflushed (a child process): the one
    error line adds the likely cause, for the default format (the root group's object header
    not on disk yet: bad object header version number) and libver "latest" (the superblock's
    "already open for write" flags with posix; with mpiio the datasets' headers cannot be
    listed). Once the writer has closed it, the same command reads it."""
    exe = os.path.join(args.bin, "gpuprim_mpi")
    for libver in ("earliest", "latest"):
        path = os.path.join(outdir, f"writing_{libver}.h5")
        w = subprocess.Popen([sys.executable, "-c", WRITER, path, libver], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        try:
            ready = w.stdout.readline().strip()
            check(ready == "ready", f"np {P}: writer ({libver}) started: {ready!r}")
            rc, _, err, _ = run(args, P, [exe, path, "--quiet", "--no-sort", "--backend",
                                          args.backend])
            tag = f"np {P}: file still open for writing ({libver})"
            check(rc in (3, 4), f"{tag}: exit {rc}, want 3 or 4; {err.strip()[-300:]!r}")
            ours = [l for l in err.splitlines() if l.startswith("gpuprim_mpi: error: ")]
            good = len(ours) == 1 and "another program may still be writing" in ours[0]
            check(good and os.path.basename(path) in ours[0], f"{tag}: the cause: {ours}")
        finally:
            w.stdin.close()
            w.wait(timeout=60)
        rc, _, err, _ = run(args, P, [exe, path, "--quiet", "--no-sort", "--backend", args.backend])
        check(rc == 0, f"np {P}: the same file after its writer closed it ({libver}): exit {rc}; "
                       f"{err.strip()[-300:]!r}")
        os.remove(path)


def main():
    ap = arg_parser(nps="1,3")
    ap.add_argument("--limit", type=float, default=60.0,
                    help="seconds a job may take before it counts as hung")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.mpirun = os.path.abspath(args.mpirun)
    shutil.rmtree(args.work, ignore_errors=True)
    fx = os.path.join(os.path.abspath(args.work), "fixtures")
    outdir = os.path.join(os.path.abspath(args.work), "out")
    os.makedirs(outdir)
    h5_fixtures.write_badinput(fx)
    # run from the output folder: nothing may appear there but what a success writes
    os.chdir(outdir)
    nps = args.nps
    print(f"e2e_badinput: nps={nps} backend={args.backend} io={args.io or 'default'} limit={args.limit} s", flush=True)
    cases = bad_cases(fx)
    for P in nps:
        for name, path, opts, code, needles in cases:
            check_bad(args, fx, outdir, P, name, path, opts, code, needles)
        for name, dset in GOOD:
            check_good(args, fx, outdir, P, name, dset)
        check_types(args, fx, outdir, P)
        check_targets(args, fx, outdir, P)
        check_writing(args, outdir, P)
    return summary()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""cli_output.py — the documented surface of gpuprim_mpi: --help, --version, the man page
docs/gpuprim_mpi.md (gpuprim_mpi(1), which README.md points to), --verbose's binding table,
--json's options / binding / times and the --progress lines.

usage: cli_output.py --bin BUILD_DIR --mpirun tests/mpirun.sh --src SOURCE_DIR --work DIR

Every option that src/cli.c accepts must appear in --help and in docs/gpuprim_mpi.md, and so must every exit code. Exit 0 when every check passes.
"""
import argparse
import json
import os
import re
import subprocess
import sys

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def run(args, argv, np_=1, env=None):
    cmd = ["sh", args.mpirun, "-np", str(np_)] + argv
    e = dict(os.environ)
    e.pop("CUDA_VISIBLE_DEVICES", None)
    e.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=300)


def cli_options(src):
    """Every option of src/cli.c: the long names of its getopt_long table and its letters."""
    text = open(os.path.join(src, "src", "cli.c")).read()
    longs = re.findall(r'\{"([a-z][-a-z]*)", (?:no|required)_argument', text)
    m = re.search(r'g_short\[\] = "-:([a-z]*)"', text)
    return sorted({"--" + n for n in longs} | {"-" + c for c in (m.group(1) if m else "")})


def help_exit_codes(helptext):
    """--help's exit codes section as {code: meaning} (continuation lines joined)."""
    codes, last = {}, None
    section = helptext.split("exit codes", 1)[1] if "exit codes" in helptext else ""
    for line in section.splitlines()[1:]:
        m = re.match(r"^  (\d)  (\S.*)$", line)
        if m:
            last = int(m.group(1))
            codes[last] = m.group(2).strip()
        elif last is not None and re.match(r"^     \S", line):
            codes[last] += " " + line.strip()
    return codes


def man_section(src):
    """The man page, docs/gpuprim_mpi.md (README.md points to it)."""
    path = os.path.join(src, "docs", "gpuprim_mpi.md")
    text = open(path).read() if os.path.exists(path) else ""
    readme = open(os.path.join(src, "README.md")).read()
    return text if "docs/gpuprim_mpi.md" in readme else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    mpi = os.path.join(args.bin, "gpuprim_mpi")
    gen = os.path.join(args.bin, "gpuprim_gen")

    # --help: every option, the defaults, the exit codes
    opts = cli_options(args.src)
    check(len(opts) >= 20, f"found the options of src/cli.c ({len(opts)})")
    p = run(args, [mpi, "--help"])
    check(p.returncode == 0, "--help exits 0")
    helptext = p.stdout
    for o in opts:
        check(re.search(r"(^|[\s,])" + re.escape(o) + r"\b", helptext) is not None, f"--help lists {o}")
    check(helptext.count("default") >= 10, "--help gives the defaults")
    for code in range(9):
        check(re.search(rf"^\s+{code}\s+\S", helptext, re.M) is not None, f"--help explains exit code {code}")

    # docs/gpuprim_mpi.md, the man page (README.md points to it), has the same
    man = man_section(args.src)
    check(len(man) > 500, "docs/gpuprim_mpi.md is the gpuprim_mpi(1) page and README.md points to it")
    for o in opts:
        check(o in man, f"docs/gpuprim_mpi.md lists {o}")
    for code in range(9):
        check(re.search(rf"^\|\s*{code}\s*\|", man, re.M) is not None, f"docs/gpuprim_mpi.md explains exit code {code}")
    # the EXIT STATUS rows start with what --help says (both from src/exitcode.c's table; the
    # man page may add detail after it)
    hcodes = help_exit_codes(helptext)
    check(sorted(hcodes) == list(range(9)), f"--help lists exit codes 0..8 once each: {sorted(hcodes)}")
    for code, meaning in sorted(hcodes.items()):
        m = re.search(rf"^\|\s*{code}\s*\|\s*(.*?)\s*\|\s*$", man, re.M)
        row = re.sub(r"\[([^]]*)\]\([^)]*\)", r"\1", m.group(1)).replace("`", "") if m else ""
        check(row.startswith(meaning), f"docs/gpuprim_mpi.md EXIT STATUS {code} starts with --help's {meaning!r}: {row!r}")
    # the option syntax: a value after '=' and unambiguous prefixes, said in both places
    check("--out=FILE" in helptext and "--out=FILE" in man, "--help and docs/gpuprim_mpi.md say --out=FILE works")
    check("prefix" in helptext and "prefix" in man, "--help and docs/gpuprim_mpi.md say options may be abbreviated")
    for word in ("SYNOPSIS", "OPTIONS", "EXIT STATUS", "ENVIRONMENT"):
        check(word in man, f"docs/gpuprim_mpi.md has {word}")

    # --version: the version and the backends of the build
    p = run(args, [mpi, "--version"])
    lines = p.stdout.splitlines()
    check(p.returncode == 0 and len(lines) >= 2 and re.match(r"gpuprim_mpi \d+\.\d+\.\d+", lines[0]) is not None,
          f"--version first line: {lines[:1]}")
    check(any(re.fullmatch(r"CUDA backend: (yes|no)", l) for l in lines), "--version says CUDA backend: yes/no")
    version = lines[0].split(" ", 1)[1] if lines and " " in lines[0] else ""
    # built from a git checkout: the version names the commit the binary was built from (read
    # at build time, so a commit after configuring shows up after the next build)
    head = subprocess.run(["git", "-C", args.src, "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0 and head.stdout.strip():
        h = head.stdout.strip()
        m = re.fullmatch(r"\d+\.\d+\.\d+\+(?:.*-g)?([0-9a-f]{7,40})(-dirty)?", version)
        check(m is not None and h.startswith(m.group(1)),
              f"--version {version!r} names HEAD {h[:12]} (rebuild if the binary is older than the last commit)")

    # a file, three ranks, everything on
    data = os.path.join(args.work, "data.h5")
    p = run(args, [gen, data, "--n", "50000", "--force"], np_=2)
    check(p.returncode == 0, f"gpuprim_gen: {p.stderr[-300:]}")
    # a left-out --dataset value: a usage error, not a dataset named "--force"
    bad = os.path.join(args.work, "gen_bad.h5")
    p = run(args, [gen, bad, "--dataset", "--force"], np_=1)
    check(p.returncode == 2 and "--dataset --force: a dataset name may not start with '-'" in p.stderr
          and not os.path.exists(bad), f"gpuprim_gen --dataset --force: exit {p.returncode} {p.stderr[-300:]}")
    # getopt_long: --opt=value, an unambiguous prefix and -qv run; an ambiguous prefix is
    # one usage error naming the candidates
    p = run(args, [mpi, "--func=sin", "--n=2^10", "--a=-1", "-qv", "--backend=cpu"], np_=2)
    check(p.returncode == 0 and "rank" in p.stdout, f"--func=sin --n=2^10 --a=-1 -qv: exit {p.returncode} {p.stderr[-300:]}")
    p = run(args, [mpi, data, "--ver"], np_=1)
    errs = [l for l in p.stderr.splitlines() if "error" in l]
    check(p.returncode == 2 and len(errs) == 1 and "ambiguous option --ver" in errs[0] and
          "--verbose" in errs[0] and "--version" in errs[0], f"--ver: exit {p.returncode} {errs}")
    p = run(args, [mpi, data, "--force=yes", "--out", os.path.join(args.work, "f.h5")], np_=1)
    check(p.returncode == 2 and "option --force takes no value" in p.stderr, f"--force=yes: exit {p.returncode} {p.stderr[-300:]}")
    p = run(args, [gen, os.path.join(args.work, "gen_eq.h5"), "--n=1e3", "--dt=f64", "--force"], np_=1)
    check(p.returncode == 0 and "n=1000 dtype=f64" in p.stdout, f"gpuprim_gen --n=1e3 --dt=f64: exit {p.returncode} {p.stderr[-300:]}")
    p = run(args, [gen, "--help"], np_=1)
    check(p.returncode == 0 and re.search(r"Exit status: 0 success; 1 .*; 2 .*; 6 ", " ".join(p.stdout.split())) is not None,
          "gpuprim_gen --help lists its exit statuses")
    # function mode names the file-mode option that was given, not a list of five
    p = run(args, [mpi, "--function", "exp", "--reproducible"], np_=1)
    check(p.returncode == 2 and "error: --reproducible belongs to file mode" in p.stderr,
          f"--function exp --reproducible: exit {p.returncode} {p.stderr[-300:]}")
    rj = os.path.join(args.work, "r.json")
    p = run(args, [mpi, data, "--backend", "cpu", "--verbose", "--progress", "--json", rj], np_=3,
            env={"CUDA_VISIBLE_DEVICES": "0,1"})
    check(p.returncode == 0, f"run --verbose --progress --json: exit {p.returncode} {p.stderr[-300:]}")
    table = [l for l in p.stdout.splitlines() if re.match(r"\s*\d+\s+\S+\s+\d+\s+-?\d+\s", l)]
    check("CUDA_VISIBLE_DEVICES" in p.stdout and "pci bus id" in p.stdout, "--verbose table header")
    check(len(table) == 3 and all(l.rstrip().endswith("0,1") for l in table),
          f"--verbose table rows show CUDA_VISIBLE_DEVICES: {table}")
    phases = ["read", "upload", "reduce", "local sort", "rank exchange", "verify"]
    for ph in phases:
        check(len(re.findall(rf"^gpuprim_mpi: \[\s*[\d.]+ s\] {ph}\.\.\.$", p.stderr, re.M)) == 1,
              f"--progress (not a terminal): one line for {ph}")
    check(len(re.findall(r"\] finished$", p.stderr, re.M)) == 1, "--progress: one closing line")
    check("\r" not in p.stderr, "--progress (not a terminal): no carriage returns")
    r = json.load(open(rj))
    check(r.get("version") == version, f"--json version {r.get('version')!r} is --version's {version!r}")
    o = r.get("options", {})
    check(o.get("file") == data and o.get("backend") == "cpu" and o.get("progress") == "on" and
          o.get("verbose") is True and o.get("json") == rj and o.get("dataset") is None and
          o.get("dx") == 1 and o.get("no_sort") is False, f"--json options: {o}")
    b = r.get("binding", [])
    check(len(b) == 3 and [x.get("rank") for x in b] == [0, 1, 2], "--json binding: one entry per rank")
    keys = {"rank", "host", "local_rank", "local_size", "device", "name", "pci_bus_id", "cuda_visible_devices"}
    check(all(keys <= set(x) for x in b), f"--json binding fields {sorted(keys)}")
    check(all(x["device"] == -1 and x["name"] == "CPU" and x["pci_bus_id"] is None and
              x["cuda_visible_devices"] == "0,1" and x["local_size"] == 3 for x in b),
          f"--json binding values: {b}")
    check(sorted(x["local_rank"] for x in b) == [0, 1, 2], "--json binding local ranks")
    t = r.get("times_ms", {})
    check(all(k in t for k in phases + ["total", "write"]), f"--json keeps the phase times: {sorted(t)}")
    check(r.get("sorted_verified") is True and r.get("count") == 50000, "--json results")

    # defaults: no progress off a terminal, CUDA_VISIBLE_DEVICES unset shows as such
    rj2 = os.path.join(args.work, "r2.json")
    p = run(args, [mpi, data, "--backend", "cpu", "--verbose", "--no-sort", "--json", rj2], np_=2)
    check(p.returncode == 0 and "gpuprim_mpi: [" not in p.stderr, "no progress lines by default off a terminal")
    check("(unset)" in p.stdout, "--verbose shows an unset CUDA_VISIBLE_DEVICES")
    r2 = json.load(open(rj2))
    check([x["cuda_visible_devices"] for x in r2["binding"]] == [None, None], "--json: unset CVD is null")
    check(r2["options"]["progress"] == "auto" and r2["options"]["no_sort"] is True, "--json options defaults")
    p = run(args, [mpi, data, "--backend", "cpu", "--no-progress", "--progress", "--quiet", "--no-sort"], np_=1)
    check(p.returncode == 0 and "] read..." in p.stderr, "the last of --progress / --no-progress wins")
    p = run(args, [mpi, data, "--backend", "cpu", "--progress", "--no-progress", "--quiet", "--no-sort"], np_=1)
    check(p.returncode == 0 and "gpuprim_mpi: [" not in p.stderr, "--no-progress")
    p = run(args, [mpi, "--function", "sin", "--n", "1000", "--progress", "--quiet"], np_=2)
    check(p.returncode == 0 and "] integrate..." in p.stderr, "--progress in function mode")

    print(f"{'FAILED' if FAILS else 'passed'}: {len(FAILS)} failure(s)")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

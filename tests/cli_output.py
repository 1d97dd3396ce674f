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
import selectors
import signal
import subprocess
import sys
import time

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


def check_long_function(args, mpi):
    """--function sin --n 2^53 (about 2 years on one core) warns at its start, without
    --progress: one line with the estimate from the run's first second; the run is then
    stopped (SIGTERM to the launcher's group)."""
    cmd = ["sh", args.mpirun, "-np", "1", mpi, "--function", "sin", "--n", "2^53", "--backend",
           "cpu", "--quiet"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    line, t0 = "", time.time()
    try:
        sel = selectors.DefaultSelector()
        sel.register(p.stderr, selectors.EVENT_READ)
        while time.time() - t0 < 120 and "warning" not in line:
            if sel.select(timeout=1.0):
                line = p.stderr.readline()
                if not line:
                    break
    finally:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    secs = time.time() - t0
    m = re.match(r"gpuprim_mpi: warning: --function sin --n 9007199254740992 would take about "
                 r"([\d.]+) (years|days) \(estimated from its first ([\d.]+) s: [\d.]+ million "
                 r"points/s on this rank\); stop it \(Ctrl-C\) and lower --n, or use more ranks$",
                 line.strip())
    check(m is not None and float(m.group(3)) >= 1.0,
          f"--function sin --n 2^53: the estimate's warning at the start ({secs:.1f} s): {line!r}")


def check_json_versions(args, mpi, gen):
    """Version 2 (the default) writes NaN and infinities as null, each named in non_finite
    with its text, and non_nan_count; --json-version 1 writes the report as it was before
    report_version existed (the strings "nan", "inf", "-inf", times_ms keys with spaces);
    the summary labels count (NaNs included) and its values line (count - NaNs)."""
    nan = os.path.join(args.work, "nan.h5")
    p = run(args, [gen, nan, "--n", "20000", "--dist", "with-nan", "--dtype", "f64", "--force"])
    check(p.returncode == 0, f"gpuprim_gen --dist with-nan: {p.stderr[-300:]}")
    j1, j2 = os.path.join(args.work, "v1.json"), os.path.join(args.work, "v2.json")
    p = run(args, [mpi, nan, "--backend", "cpu", "--no-sort", "--json", j2], np_=2)
    check(p.returncode == 0, f"--json on NaN data: exit {p.returncode} {p.stderr[-300:]}")
    r2 = json.load(open(j2))
    cnt, nans = r2.get("count", -1), r2.get("nan_count", -1)
    m = re.search(r"^  count +(\d+) \(NaNs included\)$", p.stdout, re.M)
    v = re.search(r"^  values +(\d+) \(not NaN: ", p.stdout, re.M)
    check(m is not None and int(m.group(1)) == cnt and v is not None and
          int(v.group(1)) == cnt - nans and nans > 0 and r2.get("non_nan_count") == cnt - nans,
          f"summary: count (NaNs included) {m and m.group(1)}, values {v and v.group(1)}; JSON "
          f"count {cnt} nan_count {nans} non_nan_count {r2.get('non_nan_count')}")
    nf = r2.get("non_finite", {})
    check(r2.get("integral") is None and nf.get("integral") == "nan",
          f"version 2: the NaN integral is null, named in non_finite: {nf}")
    check(all(r2.get(k) is None and val in ("nan", "inf", "-inf") for k, val in nf.items()),
          f"version 2: every non_finite key is null in the report: {nf}")
    p = run(args, [mpi, nan, "--backend", "cpu", "--no-sort", "--json", j1, "--json-version", "1"],
            np_=2)
    check(p.returncode == 0, f"--json-version 1: exit {p.returncode} {p.stderr[-300:]}")
    r1 = json.load(open(j1))
    check("report_version" not in r1 and "non_finite" not in r1 and "non_nan_count" not in r1 and
          "json_version" not in r1.get("options", {}) and r1.get("integral") == "nan" and
          "local sort" in r1.get("times_ms", {}), f"--json-version 1: the layout before version 2")
    same = all(r1.get(k) == (nf[k] if k in nf else r2.get(k)) for k in r1
               if k not in ("options", "times_ms", "binding"))
    check(same, "--json-version 1 and 2 hold the same results")
    for bad, want in ((["--json-version", "3", "--json", j1], "--json-version 3: need 1 or 2"),
                      (["--json-version", "1"], "--json-version chooses the layout")):
        p = run(args, [mpi, nan, "--backend", "cpu"] + bad)
        check(p.returncode == 2 and want in p.stderr, f"{bad}: exit {p.returncode} {p.stderr[-200:]}")


def roff_plain(line):
    """A roff line as text: font changes dropped, escaped hyphens as hyphens, the macro name of
    a .B/.BR/.BI/.I/.IR line dropped and its quotes removed."""
    line = re.sub(r"\\f[BIRP]", "", line).replace("\\-", "-").replace("\\(em", "-")
    m = re.match(r"^\.(B|I|BR|BI|IB|RB|IR|RI)\s+(.*)$", line)
    if m:
        line = m.group(2).replace('"', "")
    return line


def roff_sections(path):
    """The sections of a roff man page: {".SH name": [its lines]}."""
    secs, cur = {}, None
    for line in open(path).read().splitlines():
        if line.startswith(".SH "):
            cur = line[4:].strip().strip('"')
            secs[cur] = []
        elif cur is not None:
            secs[cur].append(line)
    return secs


def roff_items(lines):
    """The .TP items of a section: [(head, body)] as plain text."""
    items, head, body, want_head = [], None, [], False
    for line in lines + [".TP"]:
        if line.startswith(".TP") or line.startswith(".SS") or line.startswith(".SH"):
            if head is not None:
                items.append((head, " ".join(body)))
            head, body, want_head = None, [], line.startswith(".TP")
        elif want_head:
            head, want_head = roff_plain(line), False
        elif head is not None and not line.startswith(".\\\""):
            if not re.match(r"^\.(PP|br|nf|fi)\b", line):
                body.append(roff_plain(line))
    return items


def check_man_roff(args, prog, opts, codes, md_opts, md_env=None):
    """docs/man/PROG.1, the installed man page: parses with groff without a warning, and its
    OPTIONS, EXIT STATUS (and ENVIRONMENT) agree with the program's option table, --help's
    exit codes and the Markdown reference."""
    path = os.path.join(args.src, "docs", "man", prog + ".1")
    check(os.path.exists(path), f"docs/man/{prog}.1 exists")
    if not os.path.exists(path):
        return
    g = subprocess.run(["groff", "-man", "-ww", "-z", path], capture_output=True, text=True)
    check(g.returncode == 0 and not g.stderr.strip(), f"groff reads {prog}.1 without warnings: "
          f"{g.stderr.strip()[:300]}")
    secs = roff_sections(path)
    for sec in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "SEE ALSO"):
        check(sec in secs, f"{prog}.1 has {sec}")
    heads = " ".join(h for h, _ in roff_items(secs.get("OPTIONS", [])))
    roff_opts = sorted(set(re.findall(r"(?<![\w-])(--?[a-z][-a-z0-9]*)", heads)))
    check(roff_opts == sorted(opts), f"{prog}.1 OPTIONS list the program's options: extra "
          f"{sorted(set(roff_opts) - set(opts))}, missing {sorted(set(opts) - set(roff_opts))}")
    check(sorted(md_opts) == sorted(opts), f"the Markdown reference of {prog} lists its options: "
          f"extra {sorted(set(md_opts) - set(opts))}, missing {sorted(set(opts) - set(md_opts))}")
    rcodes = {int(h): b for h, b in roff_items(secs.get("EXIT STATUS", [])) if h.strip().isdigit()}
    check(sorted(rcodes) == sorted(codes), f"{prog}.1 EXIT STATUS codes {sorted(rcodes)}, --help "
          f"{sorted(codes)}")
    for code, meaning in sorted(codes.items()):
        check(rcodes.get(code, "").startswith(meaning),
              f"{prog}.1 EXIT STATUS {code} starts with --help's {meaning!r}: {rcodes.get(code)!r}")
    if md_env is not None:
        env = sorted({w for h, _ in roff_items(secs.get("ENVIRONMENT", []))
                      for w in re.findall(r"[A-Z][A-Z0-9_]{3,}", h)})
        check(env == sorted(md_env), f"{prog}.1 ENVIRONMENT names the Markdown page's variables: "
              f"extra {sorted(set(env) - set(md_env))}, missing {sorted(set(md_env) - set(env))}")


def md_table_options(text, heading):
    """The options in the first column of the Markdown table after `heading`."""
    part = text.split(heading, 1)[1] if heading in text else ""
    rows = []
    for line in part.splitlines()[1:]:
        if line.startswith("|"):
            rows.append(line.split("|")[1])
        elif rows:
            break
    return sorted(set(re.findall(r"(?<![\w-])(--?[a-z][-a-z0-9]*)", " ".join(rows))))


def md_env(text):
    """The variables of docs/gpuprim_mpi.md's ENVIRONMENT table."""
    part = text.split("**ENVIRONMENT**", 1)[1].split("**EXIT STATUS**", 1)[0] if "**ENVIRONMENT**" in text else ""
    names = set()
    for line in part.splitlines():
        if line.startswith("| `"):
            names |= set(re.findall(r"`([A-Z][A-Z0-9_]{3,})`", line.split("|")[1]))
    return sorted(names)


def gen_exit_codes(helptext):
    """gpuprim_gen --help's "Exit status: 0 success; 1 ...; ..." as {code: meaning}."""
    flat = " ".join(helptext.split())
    part = flat.split("Exit status:", 1)[1].rstrip(".") if "Exit status:" in flat else ""
    return {int(m.group(1)): m.group(2).strip() for m in re.finditer(r"(\d) ([^;]+)", part)}


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
    # the installed roff pages (docs/man/) say the same as --help and the Markdown pages
    check_man_roff(args, "gpuprim_mpi", opts, hcodes,
                   md_table_options(man, "**OPTIONS**"), md_env(man))
    gen_src = open(os.path.join(args.src, "src", "gen.c")).read()
    gen_opts = sorted({"--" + n for n in re.findall(r'\{"([a-z][-a-z]*)", (?:no|required)_argument', gen_src)}
                      | {"-h"})
    gh = run(args, [gen, "--help"]).stdout
    for o in gen_opts:
        check(re.search(r"(^|[\s\[,])" + re.escape(o) + r"\b", gh) is not None, f"gpuprim_gen --help lists {o}")
    inp = open(os.path.join(args.src, "docs", "input.md")).read()
    check_man_roff(args, "gpuprim_gen", gen_opts, gen_exit_codes(gh),
                   md_table_options(inp, "## Test data: gpuprim_gen"))

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
    # getopt_long: --opt=value, an unambiguous prefix and -qv run (both letters taken, as the
    # report's options say; -q wins: nothing on stdout, not -v's binding table); an ambiguous
    # prefix is one usage error naming the candidates
    qj = os.path.join(args.work, "qv.json")
    p = run(args, [mpi, "--func=sin", "--n=2^10", "--a=-1", "-qv", "--backend=cpu", "--json", qj],
            np_=2)
    qo = json.load(open(qj)).get("options", {}) if p.returncode == 0 and os.path.exists(qj) else {}
    check(p.returncode == 0 and p.stdout == "" and qo.get("quiet") is True and
          qo.get("verbose") is True, f"--func=sin --n=2^10 --a=-1 -qv: exit {p.returncode} "
          f"stdout {p.stdout[:200]!r} options {qo} {p.stderr[-300:]}")
    p = run(args, [mpi, "--func=sin", "-q", "-v", "--backend=cpu"], np_=1)
    check(p.returncode == 0 and p.stdout == "", f"-q -v prints nothing on stdout: exit {p.returncode} "
          f"{p.stdout[:200]!r}")
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
    # the distribution's steps (histogram, then the select) are one line, its time row's name
    p = run(args, [mpi, data, "--backend", "cpu", "--no-sort", "--histogram", "4", "--median",
                   "--progress", "-q"], np_=2)
    starts = re.findall(r"^gpuprim_mpi: \[\s*[\d.]+ s\] (.*)\.\.\.$", p.stderr, re.M)
    check(p.returncode == 0 and starts.count("distribution") == 1 and "histogram" not in starts
          and "quantiles" not in starts, f"--progress names the distribution once: {starts}")
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
    keys2 = [ph.replace(" ", "_") for ph in phases]
    check(all(k in t for k in keys2 + ["total", "write"]) and not any(" " in k for k in t),
          f"--json (report version 2) keeps the phase times, keys without spaces: {sorted(t)}")
    check(r.get("report_version") == 2 and o.get("json_version") == 2 and
          r.get("non_finite") == {}, "--json is report version 2 by default, nothing non-finite")
    check(r.get("sorted_verified") is True and r.get("count") == 50000 and
          r.get("non_nan_count") == 50000, "--json results")
    check_json_versions(args, mpi, gen)

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
    check("warning" not in p.stderr, f"a short function run: no warning: {p.stderr[-200:]}")
    # the CPU fallback's notice (no GPU here, or no CUDA in the build) says once how to
    # choose the CPU without it; --backend cpu prints none
    notes = [l for l in p.stderr.splitlines() if "notice:" in l]
    if notes:
        check(len(notes) == 1 and notes[0].endswith("using the CPU backend (--backend cpu chooses "
                                                    "it without this notice)"),
              f"the fallback notice names --backend cpu: {notes}")
    p = run(args, [mpi, "--function", "sin", "--n", "1000", "--backend", "cpu", "--quiet"], np_=2)
    check(p.returncode == 0 and "notice" not in p.stderr, f"--backend cpu: no notice: {p.stderr[-200:]}")
    check_long_function(args, mpi)

    print(f"{'FAILED' if FAILS else 'passed'}: {len(FAILS)} failure(s)")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

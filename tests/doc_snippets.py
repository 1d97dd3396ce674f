#!/usr/bin/env python3
"""doc_snippets.py — the documentation's Python, run as written, on real reports: README.md's
worked example (the h5py writer, the mpirun command, the reader) and the report readers of
docs/output.md (version 2 and --json-version 1) and of the man page's EXAMPLES
(docs/man/gpuprim_mpi.1). The snippets are taken out of the documents each time, so a
change of the report that the documents do not follow fails here.

usage: doc_snippets.py --bin BUILD_DIR --mpirun tests/mpirun.sh --src SOURCE_DIR --work DIR

Checks: every snippet runs; what a reader prints is the report's own values (mean, integral,
the local sort's time); the README's pasted summary has the labels of the real one, in order,
and on the CPU backend its statistics are the real ones digit for digit; the README's printed
line is the reader's real output but for the time. Exit 0 when every check passes.
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILS.append(what)
    return ok


def code_blocks(text):
    """The ```python blocks of a Markdown text, in order."""
    return re.findall(r"^```python\n(.*?)^```$", text, re.M | re.S)


def indented_block(text, first):
    """The indented (4 spaces) block of a Markdown text whose first line starts with `first`,
    without the indent."""
    lines, out = text.splitlines(), []
    for i, line in enumerate(lines):
        if line.startswith("    " + first):
            for l in lines[i:]:
                if not l.startswith("    "):
                    break
                out.append(l[4:])
            break
    return out


def section(text, heading):
    """A Markdown section: from `heading` to the next heading of its level."""
    if heading not in text:
        return ""
    part = text.split(heading, 1)[1]
    level = heading.split(" ", 1)[0]
    m = re.search(rf"^{re.escape(level)} ", part, re.M)
    return part[: m.start()] if m else part


def run_py(code, cwd):
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def summary_rows(lines):
    """[(label, value)] of a summary: the rows "  LABEL   VALUE ..." (labels may hold one
    space, columns are two spaces or more apart)."""
    rows = []
    for l in lines:
        m = re.match(r"^  (\S+(?: \S+)?) {2,}(\S+)", l)
        if m:
            rows.append((m.group(1), m.group(2)))
    return rows


def reader_fields(out):
    """The reader's printed line: mean, integral, local-sort ms, then the arrays."""
    parts = out.split()
    return parts[:3], " ".join(parts[3:])


def check_readme(args, work, mpirun, mpi):
    readme = open(os.path.join(args.src, "README.md")).read()
    ex = section(readme, "## A worked example")
    blocks = code_blocks(ex)
    if not check(len(blocks) == 2, f"README's worked example has a writer and a reader snippet ({len(blocks)})"):
        return
    writer, reader = blocks
    p = run_py(writer, work)
    check(p.returncode == 0 and os.path.exists(os.path.join(work, "temps.h5")),
          f"README writer snippet: exit {p.returncode} {p.stderr[-300:]}")
    cmd = [l for l in ex.splitlines() if l.startswith("    mpirun ")]
    if not check(len(cmd) == 1, f"README's worked example has one mpirun line: {cmd}"):
        return
    words = cmd[0].split()
    words = ["sh", mpirun] + [mpi if w.endswith("/gpuprim_mpi") else w for w in words[1:]]
    p = subprocess.run(words, cwd=work, capture_output=True, text=True, timeout=600)
    if not check(p.returncode == 0, f"README command {' '.join(cmd[0].split())}: exit {p.returncode} {p.stderr[-300:]}"):
        return
    real = p.stdout.splitlines()
    pasted = indented_block(ex, "gpuprim_mpi: temps.h5:")
    check(len(pasted) > 10 and real and pasted[0] == real[0].replace(", backend cuda", ", backend cpu"),
          f"README's summary header is the real one:\n  {pasted[:1]}\n  {real[:1]}")
    rp, rr = summary_rows(pasted), summary_rows(real)
    check([l for l, _ in rp] == [l for l, _ in rr],
          f"README's summary rows are the real ones, in order:\n  {[l for l, _ in rp]}\n  {[l for l, _ in rr]}")
    cpu = real and real[0].endswith("backend cpu")
    stats = ("count", "nan count", "values", "sum", "min", "max", "mean", "L2 norm", "integral")
    if cpu:
        want, got = dict(rp), dict(rr)
        bad = [(k, want.get(k), got.get(k)) for k in stats if want.get(k) != got.get(k)]
        check(not bad, f"README's pasted statistics are this run's (CPU backend): {bad}")
    stderr_notes = [l for l in p.stderr.splitlines() if "notice:" in l]
    quoted = re.search(r"stderr says `(gpuprim_mpi: notice: [^`]*)`", " ".join(ex.split()))
    if stderr_notes and quoted:
        check(" ".join(stderr_notes[0].split()) == quoted.group(1),
              f"README quotes the notice as printed:\n  {quoted.group(1)}\n  {stderr_notes[0]}")
    p = run_py(reader, work)
    if not check(p.returncode == 0, f"README reader snippet: exit {p.returncode} {p.stderr[-400:]}"):
        return
    r = json.load(open(os.path.join(work, "run.json")))
    (mean, integral, ms), arrays = reader_fields(p.stdout)
    check(float(mean) == float(r["mean"]) and integral == "nan" and r["integral"] is None and
          float(ms) == r["times_ms"]["local_sort"],
          f"README reader prints the report's mean, integral and local sort: {p.stdout.strip()}")
    m = re.search(r"which prints\n\n    (.*)\n", ex)
    if check(m is not None, "README shows what the reader prints"):
        (pm, pi, _), parr = reader_fields(m.group(1))
        same = pi == integral and parr == arrays and (not cpu or pm == mean)
        check(same, f"README's printed line is the reader's output but for the time:\n  {m.group(1)}\n  {p.stdout.strip()}")


def check_output_md(args, work, mpirun, mpi):
    text = open(os.path.join(args.src, "docs", "output.md")).read()
    blocks = code_blocks(section(text, "## The `--json` report"))
    if not check(len(blocks) == 2, f"docs/output.md's report section has two readers ({len(blocks)})"):
        return
    data = os.path.join(work, "temps.h5")
    for version, code in (("2", blocks[0]), ("1", blocks[1])):
        rj = os.path.join(work, "run.json")
        p = subprocess.run(["sh", mpirun, "-np", "2", mpi, data, "--backend", "cpu", "--no-sort",
                            "--quiet", "--json", rj, "--json-version", version],
                           capture_output=True, text=True, timeout=600)
        if not check(p.returncode == 0, f"--json-version {version}: exit {p.returncode} {p.stderr[-300:]}"):
            continue
        r = json.load(open(rj))
        q = run_py(code, work)
        if not check(q.returncode == 0, f"docs/output.md version {version} reader: exit {q.returncode} {q.stderr[-400:]}"):
            continue
        vals = q.stdout.split()
        key = "local_sort" if version == "2" else "local sort"
        check(len(vals) == 3 and float(vals[0]) == float(r["mean"]) and math.isnan(float(vals[1]))
              and float(vals[2]) == r["times_ms"][key],
              f"docs/output.md version {version} reader prints mean, integral (nan), {key}: {q.stdout.strip()}")


def check_man(args, work, mpirun, mpi):
    """The man page's Python (EXAMPLES): the roff .nf block after "in Python", unescaped."""
    roff = open(os.path.join(args.src, "docs", "man", "gpuprim_mpi.1")).read()
    m = re.search(r"in Python.*?\n\.nf\n(.*?)\n\.fi", roff, re.S)
    if not check(m is not None, "the man page has a Python reader"):
        return
    code = m.group(1).replace("\\-", "-").replace("\\e", "\\")
    rj = os.path.join(work, "run.json")
    p = subprocess.run(["sh", mpirun, "-np", "1", mpi, os.path.join(work, "temps.h5"), "--backend",
                        "cpu", "--quiet", "--json", rj], capture_output=True, text=True, timeout=600)
    if not check(p.returncode == 0, f"run for the man page's reader: exit {p.returncode}"):
        return
    r = json.load(open(rj))
    q = run_py(code, work)
    vals = q.stdout.split()
    check(q.returncode == 0 and len(vals) == 2 and float(vals[0]) == float(r["mean"]) and
          float(vals[1]) == r["times_ms"]["local_sort"],
          f"the man page's reader: exit {q.returncode}, {q.stdout.strip()} {q.stderr[-300:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    mpirun = os.path.abspath(args.mpirun)
    mpi = os.path.join(os.path.abspath(args.bin), "gpuprim_mpi")
    check_readme(args, work, mpirun, mpi)
    check_output_md(args, work, mpirun, mpi)
    check_man(args, work, mpirun, mpi)
    print(f"{'FAILED' if FAILS else 'passed'}: {len(FAILS)} failure(s)")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

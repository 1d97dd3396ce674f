#!/usr/bin/env python3
"""ooc_bench.py — the out-of-core sort beside the in-device-memory sort and the peers, on one
file in one run: for each rank count, gpuprim_mpi in device memory, gpuprim_mpi with
GPUPRIM_DEVICE_MEM_LIMIT making each rank's device FACTOR times too small for its sort (so it
sorts out of core), then the short scripts users would write instead (h5py + numpy, h5py +
cupy, h5py + torch, where importable). Prints the phase times of both jobs (and out of core
each rank's staging, device and merge times, the slowest rank's), the peers' read / sort /
write times, the wall time of every process (the launcher with its ranks; a "run:" line as
each ends, with its command), and the ratios the issue's targets name.

usage: ooc_bench.py FILE --bin BUILD_DIR [--np 4,1] [--dataset D] [--factor 4] [--no-out]
                    [--extra "--stable --argsort"] [--peers numpy,cupy,torch|none]
                    [--python PY] [--mpirun "mpirun --bind-to none"] [--json OUT.json]

The driver needs only the standard library; the peers run under --python (default: this
interpreter) as `python -c CODE`. bench/ooc_h200.sh runs the lead's H200 set in one call.
"""
import argparse
import json
import math
import os
import re
import shlex
import subprocess
import sys
import time

SHARE_RE = re.compile(r"rank (\d+): plan: in device memory: .*shared by (\d+) ranks?\)")
RUNS_RE = re.compile(r"rank (\d+): out of core: (\d+) runs?: up ([\d.]+) s, device ([\d.]+) s, "
                     r"down ([\d.]+) s \(overlapped\); merge ([\d.]+) s on (\d+) threads?")
ROWS = ("alloc", "read", "upload", "reduce", "local sort", "rank exchange", "verify", "write",
        "total", "startup", "teardown")

PEER_CODE = r"""
import json, sys, time
kind, path, dset, out = sys.argv[1:5]
t0 = time.monotonic()
import h5py, numpy as np
if kind == "cupy":
    import cupy as xp
elif kind == "torch":
    import torch
t1 = time.monotonic()
with h5py.File(path, "r") as f:
    a = f[dset][...].reshape(-1)
t2 = time.monotonic()
err = None
try:
    if kind == "numpy":
        s = np.sort(a)
    elif kind == "cupy":
        s = xp.asnumpy(xp.sort(xp.asarray(a)))
    else:
        s = torch.sort(torch.from_numpy(a).cuda()).values.cpu().numpy()
except Exception as e:  # torch refuses more than INT_MAX elements
    s, err = None, str(e).splitlines()[0][:160]
t3 = time.monotonic()
if s is not None and out != "-":
    with h5py.File(out, "w") as g:
        g.create_dataset(dset, data=s)
t4 = time.monotonic()
print(json.dumps(dict(imports=t1 - t0, read=t2 - t1, sort=t3 - t2, write=t4 - t3, error=err)))
"""


def run(cmd, env=None, timeout=3600):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    return p, time.monotonic() - t0


def gp_job(a, P, extra, limit=None, verbose=True):
    """One gpuprim_mpi job: (report, stderr, wall seconds), or raises on failure."""
    jp = os.path.join(a.work, "ooc_bench.json")
    out = os.path.join(a.work, "ooc_bench_out.h5")
    cmd = shlex.split(a.mpirun) + ["-np", str(P), os.path.join(a.bin, "gpuprim_mpi"), a.file,
                                   "--json", jp, "--no-progress"] + shlex.split(extra)
    cmd += ["--dataset", a.dataset] if a.dataset else []
    cmd += [] if a.no_out else ["--out", out, "--force"]
    cmd += ["--verbose"] if verbose else ["--quiet"]
    env = dict(os.environ)
    env.pop("GPUPRIM_DEVICE_MEM_LIMIT", None)
    if limit is not None:
        env["GPUPRIM_DEVICE_MEM_LIMIT"] = str(limit)
    p, wall = run(cmd, env)
    # the whole process (the launcher and its ranks), printed as each run ends
    print("run: %s%s: exit %d, process wall %.3f s" % (
        " ".join(shlex.quote(c) for c in cmd),
        "  (GPUPRIM_DEVICE_MEM_LIMIT=%d)" % limit if limit is not None else "", p.returncode, wall),
        flush=True)
    if p.returncode != 0:
        raise RuntimeError("gpuprim_mpi at P=%d%s: exit %d: %s" % (
            P, " (out of core)" if limit else "", p.returncode, p.stderr[-600:]))
    with open(jp) as f:
        rep = json.load(f)
    if rep.get("sorted_verified") is not True:
        raise RuntimeError("gpuprim_mpi at P=%d: the sort was not verified" % P)
    if os.path.exists(out):
        os.remove(out)
    return rep, p.stderr, wall


def ooc_limit(rep, stderr, P, extra, factor):
    """GPUPRIM_DEVICE_MEM_LIMIT that makes each rank's usable device memory 1/factor of its
    in-memory need (docs/limits.md: the need b*m*(s + 8p); usable = limit/share less 1/8)."""
    share = max([int(k) for _, k in SHARE_RE.findall(stderr)] or [1])
    n, s = rep["count"], {"f32": 4, "i32": 4, "u32": 4}.get(rep["dtype"], 8)
    pairs = any(o in extra for o in ("--stable", "--argsort", "--payload"))
    m = -(-n // P)
    need = m * (s + (8 if pairs else 0)) * (2 if P > 1 else 1)
    target = need // factor
    return share * math.ceil(target * 8 / 7) + share, need, share


def phases(rep):
    """The rows in seconds, from either report version's keys ("local_sort" in version 2,
    "local sort" in version 1); 0 for a row the report lacks."""
    t = rep["times_ms"]
    return {k: t.get(k.replace(" ", "_"), t.get(k, 0.0)) / 1e3 for k in ROWS}


def runs_of(stderr):
    """The slowest rank's out-of-core times, and the most runs."""
    rows = [tuple(float(x) for x in r[1:]) for r in RUNS_RE.findall(stderr)]
    if not rows:
        return None
    keys = ("runs", "up", "device", "down", "merge", "threads")
    return {k: max(r[i] for r in rows) for i, k in enumerate(keys)}


def peer(a, kind, dset):
    out = "-" if a.no_out else os.path.join(a.work, "ooc_bench_peer.h5")
    p, wall = run([a.python, "-c", PEER_CODE, kind, a.file, dset, out])
    print("run: peer h5py + %s: exit %d, process wall %.3f s" % (kind, p.returncode, wall),
          flush=True)
    if os.path.exists(out):
        os.remove(out)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["?"])[-1][:160]
        return dict(error=last, wall=wall)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["wall"] = wall
    return r


def peer_ok(a, kind):
    mod = {"numpy": "numpy", "cupy": "cupy", "torch": "torch"}[kind]
    code = "import h5py, %s" % mod + ("; import torch; assert torch.cuda.is_available()"
                                      if kind == "torch" else "")
    return subprocess.run([a.python, "-c", code], capture_output=True).returncode == 0


def fmt(v):
    return "%9.3f" % v if isinstance(v, (int, float)) else "%9s" % v


def one_P(a, P, extra, res):
    rep, err, wall = gp_job(a, P, extra)
    limit, need, share = ooc_limit(rep, err, P, extra, a.factor)
    rep2, err2, wall2 = gp_job(a, P, extra, limit)
    m, o = phases(rep), phases(rep2)
    r = runs_of(err2) or {}
    print("\n== P=%d %s: %d elements (%s), in-memory need %.2f GiB per rank; out of core with "
          "GPUPRIM_DEVICE_MEM_LIMIT=%d (shared by %d: %.2f GiB usable), %d runs per rank"
          % (P, extra or "(no options)", rep["count"], rep["dtype"], need / 2**30, limit, share,
             need / a.factor / 2**30, rep2.get("sort_runs", 0)))
    print("%-16s %9s %9s %7s" % ("phase (s)", "in mem", "ooc", "ratio"))
    for k in ROWS:
        ratio = o[k] / m[k] if m[k] > 0 else float("nan")
        print("%-16s %s %s %7.2f" % (k, fmt(m[k]), fmt(o[k]), ratio))
    print("%-16s %s %s %7.2f" % ("process wall", fmt(wall), fmt(wall2), wall2 / wall))
    ls_m, ls_o = m["local sort"] + m["rank exchange"], o["local sort"] + o["rank exchange"]
    print("local sort + exchange: %.3f s in memory, %.3f s out of core (target <= 3.0 s at "
          "2^32); whole job %.2fx the in-memory one (target <= 1.5x)" % (ls_m, ls_o,
                                                                          o["total"] / m["total"]))
    if r:
        print("out of core, slowest rank: up %.3f s, device %.3f s, down %.3f s (overlapped), "
              "merge %.3f s on %d threads" % (r["up"], r["device"], r["down"], r["merge"],
                                              r["threads"]))
    res.append(dict(P=P, extra=extra, limit=limit, share=share, need=need, in_memory=m,
                    out_of_core=o, wall=wall, wall_ooc=wall2, runs=rep2.get("sort_runs"),
                    ooc_ranks=r, n=rep["count"], dtype=rep["dtype"], dataset=rep["dataset"]))
    return rep


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--bin", required=True, help="the build folder with gpuprim_mpi")
    ap.add_argument("--np", default="4,1")
    ap.add_argument("--dataset")
    ap.add_argument("--factor", type=int, default=4)
    ap.add_argument("--no-out", action="store_true", help="no --out (and the peers write nothing)")
    ap.add_argument("--extra", default="", help="more gpuprim_mpi options, e.g. '--stable --argsort'")
    ap.add_argument("--peers", default="numpy,cupy,torch")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--mpirun", default="mpirun --bind-to none" +
                    (" --allow-run-as-root" if os.geteuid() == 0 else ""))
    ap.add_argument("--work", default=os.getcwd())
    ap.add_argument("--json")
    a = ap.parse_args()
    res, peers, rep = [], {}, None
    for P in [int(x) for x in a.np.split(",")]:
        rep = one_P(a, P, a.extra, res)
    kinds = [] if a.peers == "none" else a.peers.split(",")
    for kind in kinds:
        if not peer_ok(a, kind):
            print("peer h5py + %s: not importable here (or no GPU)" % kind)
            continue
        r = peers[kind] = peer(a, kind, rep["dataset"])
        if r.get("error") and "read" not in r:
            print("peer h5py + %s: failed: %s (%.1f s)" % (kind, r["error"], r["wall"]))
            continue
        print("peer h5py + %-6s: read %.2f s, sort %.2f s%s, write %.2f s, process wall %.2f s"
              % (kind, r["read"], r["sort"], " (refused: %s)" % r["error"] if r["error"] else "",
                 r["write"], r["wall"]))
    for row in res:
        for kind, r in peers.items():
            if "read" in r and not r.get("error"):
                print("P=%d: the out-of-core job's wall %.2f s is %.1fx faster than h5py + %s "
                      "(target >= 5x for cupy)" % (row["P"], row["wall_ooc"], r["wall"] /
                                                   row["wall_ooc"], kind))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(file=a.file, rows=res, peers=peers), f, indent=1)


if __name__ == "__main__":
    main()

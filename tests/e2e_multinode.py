#!/usr/bin/env python3
"""gpuprim_mpi across several hosts simulated on one machine, against one-host runs.

usage: e2e_multinode.py --bin BUILD_DIR --mpirun MPIRUN_SH --work DIR [--backend cpu|cuda]
                        [--layouts 3+2,1+2+2]

Each layout (ranks per host, e.g. 3+2: ranks 0-2 on host nodea, 3-4 on nodeb) runs through
tests/multinode_launch.sh: one orted per host, each in a UTS namespace with that host name,
started by Open MPI's rsh launcher (tests/multinode_agent.sh), the names in a private
/etc/hosts. On an h5py-written float64 file (NaN, +-inf, -0.0, an odd size) it checks:
  - the --verbose binding table and the JSON's: each rank's host and node-local rank;
  - --io posix and --io mpiio: the --out file (sorted data and argsort, every byte, read
    with h5py) and the --json report (statistics, sort flags, bytes the exchange moved per
    step) equal a one-host run of the same rank count through tests/mpirun.sh;
  - the exchange's transport per step: the CPU backend's auto is mpi in every step; on the
    CUDA backend auto is shared (CUDA IPC) for pairs on one host and mpi (staged through
    host memory when the MPI is not CUDA-aware) for pairs on two, step by step as the
    network's partners and the layout give them;
  - --transport shared: exit 7, one line naming the lowest rank with a partner on another
    node and that partner;
  - where the layout is nodes of k consecutive ranks, GPUPRIM_EXCHANGE_NODE_RANKS=k on one
    host predicts the same transports and the same --transport shared error;
  - a rank of the second host killed (GPUPRIM_FAULT=R:exchange:kill, R:write:kill,
    R:xstep:kill): the whole job ends within seconds, with one gpuprim_mpi line, no output
    or temporary file, no process left; and stopped by SIGTERM while the temporary output
    file exists (R:tmpfile, --io posix and mpiio): no file left either.
Prints each run's bytes per step and transport. Exit 0 when everything passes; 77 (skipped)
with the reason when the hosts cannot be simulated here (tests/multinode_launch.sh --check:
no unshare rights, not Open MPI) or --backend cuda finds no GPU.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import h5py
import numpy as np

from e2e import ref_sorted
from e2e_common import (SKIP, arg_parser, check, cuda_missing, fresh_dir, prog, run_gpuprim,
                        run_mpi, summary, test_seed)

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH = os.path.join(HERE, "multinode_launch.sh")
HOST_NAMES = ["nodea", "nodeb", "nodec", "noded"]


# ---- the layouts and what the network does on them ------------------------------------------

def parse_layouts(text):
    """"3+2,1+2+2" -> [[3, 2], [1, 2, 2]]."""
    return [[int(c) for c in part.split("+")] for part in text.split(",")]


def host_of_ranks(counts):
    """The host name of each rank: the ranks fill the hosts in order."""
    return [HOST_NAMES[h] for h, c in enumerate(counts) for _ in range(c)]


def network_steps(P):
    """The exchange's steps as (k, j) pairs, in order (ranks/network.c's network, run by
    gp_exchange_run in ranks/exchange.c)."""
    P2 = 1
    while P2 < P:
        P2 <<= 1
    steps, k = [], 2
    while k <= P2:
        j = k >> 1
        while j > 0:
            steps.append((k, j))
            j >>= 1
        k <<= 1
    return steps


def partner(r, k, j):
    """partner_of of ranks/exchange.c: the mirror form of the bitonic network."""
    return r ^ (k - 1) if j == (k >> 1) else r ^ j


def step_transports(hosts):
    """The transport each step of --transport auto takes on the CUDA backend: shared for
    partners on one host, mpi across, "shared+mpi" for a step with both, "none" without pairs."""
    P, out = len(hosts), []
    for k, j in network_steps(P):
        kinds = {"shared" if hosts[r] == hosts[partner(r, k, j)] else "mpi"
                 for r in range(P) if partner(r, k, j) < P}
        out.append("shared+mpi" if len(kinds) == 2 else kinds.pop() if kinds else "none")
    return out


def off_node_error(hosts):
    """(rank, partner) that --transport shared names: the lowest rank with a partner on
    another host, and its first such partner in step order."""
    for r in range(len(hosts)):
        for k, j in network_steps(len(hosts)):
            q = partner(r, k, j)
            if q < len(hosts) and hosts[q] != hosts[r]:
                return r, q
    return None


def knob_k(counts):
    """k when the layout is nodes of k consecutive ranks (every host k, the last at most k),
    which GPUPRIM_EXCHANGE_NODE_RANKS=k models on one host; else None."""
    k = counts[0]
    return k if len(counts) > 1 and all(c == k for c in counts[:-1]) and counts[-1] <= k else None


# ---- runs ------------------------------------------------------------------------------------

def multi_args(args, counts):
    """A copy of args whose launcher is tests/multinode_launch.sh over the layout's hosts."""
    m = argparse.Namespace(**vars(args))
    m.mpirun = LAUNCH
    m.hosts = ",".join(f"{HOST_NAMES[h]}:{c}" for h, c in enumerate(counts))
    return m


def run_multi(margs, argv, extra_env=None, timeout=90):
    """run_gpuprim on the simulated hosts of margs (multi_args). A run past timeout seconds
    (stopped by run_mpi) comes back with exit 124 and a line saying so."""
    env = dict(os.environ, GPUPRIM_MULTINODE_HOSTS=margs.hosts, **(extra_env or {}))
    P = sum(int(h.split(":")[1]) for h in margs.hosts.split(","))
    try:
        return run_gpuprim(margs, P, argv, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else e.stderr or ""
        return subprocess.CompletedProcess(e.cmd, 124, "", err + f"\nstopped after {timeout} s "
                                           "(tests/multinode_diag.sh shows where a launch stops)")


def our_lines(p):
    """gpuprim_mpi's own lines on stderr (not Open MPI's banners or notices)."""
    return [ln for ln in p.stderr.splitlines() if ln.startswith("gpuprim_mpi:")]


def binding_table(stdout):
    """The --verbose binding table as [(rank, host, local rank)]."""
    rows, inside = [], False
    for ln in stdout.splitlines():
        if ln.startswith("rank  host"):
            inside = True
            continue
        m = re.match(r"^\s+(\d+)\s+(\S+)\s+(\d+)\s", ln) if inside else None
        if inside and not m:
            break
        if m:
            rows.append((int(m.group(1)), m.group(2), int(m.group(3))))
    return rows


def datasets(path):
    """Every dataset of an HDF5 file: name -> (dtype string, bytes)."""
    got = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda k, o: got.__setitem__(k, (o.dtype.str, o[()].tobytes()))
                     if isinstance(o, h5py.Dataset) else None)
    return got


# the report's entries that differ between two correct runs of one P on other hosts: times,
# paths, the binding (checked on its own), the GPU sharing counts (ranks per node)
PER_RUN = ("times_ms", "options", "out", "binding", "exchange_step_times", "gpus_visible",
           "ranks_per_gpu_max")


def results(r):
    """The report without PER_RUN, and the steps as (transport, bytes)."""
    return ({k: v for k, v in r.items() if k not in PER_RUN},
            [(s["transport"], s["bytes"]) for s in r.get("exchange_step_times", [])])


def expected_transports(args, hosts):
    """Per step under --transport auto: all mpi on the CPU backend, else the layout's."""
    P = len(hosts)
    if args.backend == "cpu":
        return ["mpi" if any(partner(r, k, j) < P for r in range(P)) else "none"
                for k, j in network_steps(P)]
    return step_transports(hosts)


# ---- the checks ------------------------------------------------------------------------------

def check_run(args, name, counts, io, inp, refs):
    """One layout, one I/O driver: binding, output bytes, report and transports against the
    one-host run refs[io] = (datasets, report)."""
    margs = multi_args(args, counts)
    hosts = host_of_ranks(counts)
    out = os.path.join(args.work, f"{name}_{io}.sorted.h5")
    rj = os.path.join(args.work, f"{name}_{io}.json")
    t0 = time.time()
    p = run_multi(margs, [inp, "--backend", args.backend, "--io", io, "--verbose", "--argsort",
                          "--json", rj, "--out", out])
    took = time.time() - t0
    if not check(p.returncode == 0, f"{name} --io {io}: exit {p.returncode}: {p.stderr[-600:]}"):
        return None
    want_rows = [(r, h, hosts[:r].count(h)) for r, h in enumerate(hosts)]
    rows = binding_table(p.stdout)
    check(rows == want_rows, f"{name} --io {io}: binding table {rows}, want {want_rows}")
    r = json.load(open(rj))
    jb = [(b["rank"], b["host"], b["local_rank"], b["local_size"]) for b in r["binding"]]
    want_jb = [(rk, h, lr, hosts.count(h)) for rk, h, lr in want_rows]
    check(jb == want_jb, f"{name} --io {io}: JSON binding {jb}, want {want_jb}")
    check(r.get("io_write") == io, f"{name} --io {io}: the report's io_write is {r.get('io_write')}")
    ref_data, ref_rep = refs[io]
    check(datasets(out) == ref_data,
          f"{name} --io {io}: the --out file differs from the one-host run's (sorted data, argsort)")
    got, steps = results(r)
    want, ref_steps = results(ref_rep)
    diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    check(not diff, f"{name} --io {io}: the report differs from the one-host run's in {diff}")
    check([b for _, b in steps] == [b for _, b in ref_steps],
          f"{name} --io {io}: bytes per step {[b for _, b in steps]}, one host {[b for _, b in ref_steps]}")
    want_tr = expected_transports(args, hosts)
    check([t for t, _ in steps] == want_tr,
          f"{name} --io {io}: transports per step {[t for t, _ in steps]}, want {want_tr}")
    if args.backend == "cuda":
        check(r["ranks_per_gpu_max"] == max(counts),
              f"{name} --io {io}: ranks per GPU {r['ranks_per_gpu_max']}, want {max(counts)} (per host)")
    print(f"{name} --io {io}: {took:.1f} s; steps (transport, bytes moved, all ranks): {steps}; "
          f"one host: {ref_steps}", flush=True)
    return steps


def check_shared(args, name, counts, inp):
    """--transport shared across hosts: exit 7, one line naming the rank and its partner on
    another node; and the same line from the knob on one host where the layout allows."""
    hosts = host_of_ranks(counts)
    p = run_multi(multi_args(args, counts), [inp, "--backend", args.backend, "--quiet",
                                             "--transport", "shared"])
    lines = our_lines(p)
    r, q = off_node_error(hosts)
    want = f"rank {r}: its partner rank {q} is on another node"
    check(p.returncode == 7 and len(lines) == 1 and "--transport shared" in lines[0] and want in lines[0],
          f"{name} --transport shared: exit {p.returncode}, lines {lines}, want 7 and '{want}'")
    k = knob_k(counts)
    if k is None:
        print(f"{name}: GPUPRIM_EXCHANGE_NODE_RANKS cannot model this layout (nodes of unequal "
              f"sizes before the last)", flush=True)
        return
    pk = run_gpuprim(args, len(hosts), [inp, "--backend", args.backend, "--quiet", "--transport", "shared"],
                     timeout=120, env=dict(os.environ, GPUPRIM_EXCHANGE_NODE_RANKS=str(k)))
    check(pk.returncode == p.returncode and our_lines(pk) == lines,
          f"{name} --transport shared: the knob GPUPRIM_EXCHANGE_NODE_RANKS={k} on one host gives "
          f"exit {pk.returncode} {our_lines(pk)}, the hosts exit {p.returncode} {lines}")


def check_knob_auto(args, name, counts, inp, steps):
    """--transport auto: the knob's transports and bytes per step on one host equal the
    hosts' (check_run's --argsort and --out, so the same pairs move)."""
    k = knob_k(counts)
    if k is None or steps is None:
        return
    rj = os.path.join(args.work, f"{name}_knob.json")
    out = os.path.join(args.work, f"{name}_knob.sorted.h5")
    p = run_gpuprim(args, sum(counts), [inp, "--backend", args.backend, "--quiet", "--argsort",
                                        "--out", out, "--force", "--json", rj],
                    timeout=120, env=dict(os.environ, GPUPRIM_EXCHANGE_NODE_RANKS=str(k)))
    if check(p.returncode == 0, f"{name} knob {k}: exit {p.returncode}: {p.stderr[-300:]}"):
        ks = results(json.load(open(rj)))[1]
        check(ks == steps, f"{name}: GPUPRIM_EXCHANGE_NODE_RANKS={k} on one host gives steps {ks}, "
                           f"the hosts {steps}")


def leftovers(args):
    """Output or temporary files of the fault runs left in the work folder (the temporary
    file .gpuprim.PID.tmp and anything named after it, such as MPI-IO's side files)."""
    return [f for f in os.listdir(args.work) if f.startswith("fault_out") or ".gpuprim." in f]


# the faults, for a rank of the second host: (which rank, GPUPRIM_FAULT phase and kind, --io);
# "first"/"last": the host's first or last rank. tmpfile: SIGTERM, as mpirun or scancel
# sends it, while the temporary output file exists (the MPI-IO file open on every host)
FAULTS = (("first", "exchange:kill", "posix"), ("last", "write:kill", "posix"),
          ("first", "xstep:kill", "posix"), ("last", "tmpfile", "posix"), ("first", "tmpfile", "mpiio"))


def check_faults(args, name, counts, inp):
    """A rank of the second host killed in the exchange, in an exchange step, in the write;
    stopped by SIGTERM in the write with either driver."""
    margs = multi_args(args, counts)
    for which, fault, io in FAULTS:
        rank = counts[0] if which == "first" else counts[0] + counts[1] - 1
        fo = os.path.join(args.work, "fault_out.h5")
        t0 = time.time()
        p = run_multi(margs, [inp, "--backend", args.backend, "--io", io, "--out", fo, "--quiet"],
                      extra_env={"GPUPRIM_FAULT": f"{rank}:{fault}"}, timeout=120)
        took = time.time() - t0
        what = f"{name}: rank {rank} ({HOST_NAMES[1]}) GPUPRIM_FAULT {fault}, --io {io}"
        lines = our_lines(p)
        check(p.returncode != 0, f"{what}: exit {p.returncode}")
        check(took < 30, f"{what}: the job took {took:.1f} s to end")
        if fault == "tmpfile":
            said = "stopped during the write; the temporary output file was removed"
            check(lines and all(said in ln for ln in lines), f"{what}: want '{said}', got {lines}")
        else:
            said = f"rank {rank}: GPUPRIM_FAULT: injected SIGKILL in "
            check(len(lines) == 1 and said in lines[0], f"{what}: want one line '{said}...', got {lines}")
        left = leftovers(args)
        check(not left, f"{what}: left {left}")
        for f in left:
            os.remove(os.path.join(args.work, f))
        time.sleep(0.5)
        procs = subprocess.run(["pgrep", "-f", fo], capture_output=True, text=True).stdout.split()
        check(not procs, f"{what}: processes still running: {procs}")
        print(f"{what}: exit {p.returncode} after {took:.1f} s: {lines}", flush=True)


# ---- main ------------------------------------------------------------------------------------

def make_input(work, rng):
    """An h5py-written float64 dataset of an odd size with NaN, +-inf, -0.0 and ties."""
    n = 60001
    a = np.round(rng.standard_normal(n) * 1e3, 1)
    idx = rng.choice(n, 400, replace=False)
    a[idx[:100]] = np.nan
    a[idx[100:150]] = np.inf
    a[idx[150:200]] = -np.inf
    a[idx[200:300]] = -0.0
    a[idx[300:]] = 0.0
    path = os.path.join(work, "in.h5")
    with h5py.File(path, "w") as f:
        f.create_dataset("data", data=a)
    return path, a


def one_host(args, P, inp, a):
    """The reference: one host, P ranks, each driver: {io: (datasets, report)}; the sorted data
    and the argsort checked against numpy."""
    refs = {}
    for io in ("posix", "mpiio"):
        out = os.path.join(args.work, f"ref{P}_{io}.sorted.h5")
        rj = os.path.join(args.work, f"ref{P}_{io}.json")
        p = run_gpuprim(args, P, [inp, "--backend", args.backend, "--io", io, "--quiet", "--argsort",
                                  "--json", rj, "--out", out], timeout=180)
        if not check(p.returncode == 0, f"one host P={P} --io {io}: exit {p.returncode}: {p.stderr[-400:]}"):
            return None
        refs[io] = (datasets(out), json.load(open(rj)))
    with h5py.File(os.path.join(args.work, f"ref{P}_posix.sorted.h5"), "r") as f:
        got, perm = f["data"][()], f["data_argsort"][()]
    check(got.tobytes() == ref_sorted(a).tobytes(), f"one host P={P}: the sort differs from numpy's")
    check(a[perm].tobytes() == got.tobytes(), f"one host P={P}: input[argsort] is not the sorted data")
    return refs


def main():
    ap = arg_parser()
    ap.add_argument("--layouts", type=parse_layouts, default=parse_layouts("3+2,1+2+2"))
    args = ap.parse_args()
    fresh_dir(args.work)
    seed = test_seed()
    names = ", ".join("+".join(map(str, c)) for c in args.layouts)
    print(f"e2e_multinode: backend={args.backend} layouts {names} seed={seed} "
          f"(GPUPRIM_TEST_SEED reproduces)", flush=True)
    if cuda_missing(args):
        return SKIP
    why = subprocess.run(["sh", LAUNCH, "--check"], capture_output=True, text=True)
    if why.returncode != 0:
        print(f"SKIP: several hosts cannot be simulated here: {why.stdout.strip() or why.stderr.strip()}",
              flush=True)
        return SKIP
    rng = np.random.default_rng(seed)
    inp, a = make_input(args.work, rng)
    refs = {}
    t0 = time.time()
    for counts in args.layouts:
        name = "+".join(map(str, counts))
        P = sum(counts)
        if P not in refs:
            refs[P] = one_host(args, P, inp, a)
        if refs[P] is None:
            continue
        steps = check_run(args, name, counts, "posix", inp, refs[P])
        if steps is None:
            print(f"{name}: the first run failed; the layout's other runs are left out", flush=True)
            continue
        check_run(args, name, counts, "mpiio", inp, refs[P])
        check_shared(args, name, counts, inp)
        check_knob_auto(args, name, counts, inp, steps)
        check_faults(args, name, counts, inp)
    return summary(f" ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    sys.exit(main())

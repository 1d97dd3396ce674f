"""The scaffolding the end-to-end scripts (tests/e2e*.py) share: their common options, running a
program under tests/mpirun.sh, the PASS/FAIL tally and the final line and exit code, the skip
(exit 77) when --backend cuda finds no GPU, the random seed and a fresh work folder.

Stdlib only; imported by scripts run by path (their folder is on sys.path).
"""
import argparse
import os
import shutil
import signal
import subprocess
import time

FAILS = []    # the messages of the checks that failed, in order
PASSES = [0]  # how many checks passed (a list, so that importers see the count change)
SKIP = 77     # the exit code CTest's SKIP_RETURN_CODE takes as "skipped"


# ---- options --------------------------------------------------------------------------------

def rank_counts(text):
    """The rank counts of an --nps value such as "1,3,4", as a list of ints."""
    return [int(x) for x in text.split(",")]


def arg_parser(nps=None):
    """An ArgumentParser with the options every script takes: --bin BUILD_DIR (where
    gpuprim_mpi is), --mpirun MPIRUN_SH, --work DIR (all three required), --backend
    (default cpu) and --io (default none: gpuprim_mpi's own default, auto; with posix or
    mpiio every file-mode gpuprim_mpi run gets --io IO first, see run_mpi); with nps (e.g.
    "1,3") also --nps, parsed by rank_counts (the default too), so that args.nps is a list.
    Scripts add their own options before parse_args()."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--io", choices=("auto", "posix", "mpiio"), default=None)
    if nps is not None:
        ap.add_argument("--nps", type=rank_counts, default=nps)
    return ap


def test_seed():
    """The seed of a script's random data: $GPUPRIM_TEST_SEED if set and non-zero (to
    reproduce a run), else a fresh random one. Scripts print it."""
    return int(os.environ.get("GPUPRIM_TEST_SEED", "0")) or int.from_bytes(os.urandom(4), "little")


def fresh_dir(path):
    """Empties the folder path (creating it and its parents as needed)."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)


# ---- running the programs -------------------------------------------------------------------

def prog(args, name):
    """The path of program name (gpuprim_mpi, gpuprim_gen) in --bin."""
    return os.path.join(args.bin, name)


def with_io(args, argv):
    """argv with `--io IO` right after the program when args.io is set, the program is
    gpuprim_mpi and the run is in file mode (no --function, where --io is a usage error);
    first, so that a test of a value left out at the end of the line still finds it left
    out."""
    argv = list(argv)
    io = getattr(args, "io", None)
    if io and argv and os.path.basename(argv[0]) == "gpuprim_mpi" and "--function" not in argv:
        argv[1:1] = ["--io", io]
    return argv


def run_mpi(args, P, argv, timeout=600, env=None):
    """Runs `sh MPIRUN_SH -np P ARGV...` (with_io: --io IO added for gpuprim_mpi) with stdout
    and stderr captured as text, in a process group of its own, and returns a
    subprocess.CompletedProcess (returncode, stdout, stderr) with .seconds added (wall time).
    env: the environment (default: ours). Past timeout seconds (or on an interrupt) mpirun is
    stopped (SIGTERM to its group, which it passes on to every rank; SIGKILL 10 s later) and
    subprocess.TimeoutExpired (or the interrupt) is raised."""
    full = ["sh", args.mpirun, "-np", str(P)] + with_io(args, argv)
    t0 = time.time()
    p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except BaseException:
        # SIGTERM first: mpirun passes it on to the ranks (they are not in its group)
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, None)):
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
            try:
                p.communicate(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                pass
        raise
    done = subprocess.CompletedProcess(full, p.returncode, out, err)
    done.seconds = time.time() - t0
    injected = env is not None and env.get("GPUPRIM_FAULT")
    if not injected and (p.returncode < 0 or p.returncode > 128 or "exited on signal" in err):
        # a rank died of a signal: its fatal-signal line and backtrace are above mpirun's
        # notice, beyond the tails the tests print, so the whole stderr goes to the log now
        print(f"--- {' '.join(full)}: exit {p.returncode}, a rank died of a signal; its stderr:\n"
              f"{err[-8000:]}\n---", flush=True)
    return done


def run_gpuprim(args, P, options, timeout=600, env=None):
    """run_mpi of gpuprim_mpi (from --bin) with the command-line options given."""
    return run_mpi(args, P, [prog(args, "gpuprim_mpi")] + list(options), timeout=timeout, env=env)


def cuda_missing(args):
    """With --backend cuda: True, after printing a "SKIP: ..." line, when gpuprim_mpi finds no
    CUDA device (a one-rank run exits 7); the script then exits SKIP (77). False otherwise."""
    if args.backend != "cuda":
        return False
    p = run_gpuprim(args, 1, ["--function", "x2", "--n", "10", "--backend", "cuda", "--quiet"])
    if p.returncode == 7:
        print("SKIP: no CUDA device visible:", p.stderr.strip(), flush=True)
        return True
    return False


# ---- the --json report -----------------------------------------------------------------------

def read_report(path):
    """gpuprim_mpi's --json report as a dict, with its non-finite numbers as floats: version 2
    writes them as null and lists them in "non_finite" ({"mean": "nan"}; a quantile's value
    by its place, {"quantiles[2].value": "inf"}), version 1 (--json-version 1) as the strings
    "nan", "inf", "-inf" (README.md's and docs/output.md's snippets)."""
    import json
    import re
    with open(path) as f:
        r = json.load(f)
    for k, v in r.get("non_finite", {}).items():
        m = re.fullmatch(r"(\w+)\[(\d+)\]\.(\w+)", k)
        if m:
            r[m.group(1)][int(m.group(2))][m.group(3)] = float(v)
        else:
            r[k] = float(v)
    return r


# ---- checks and the result ------------------------------------------------------------------

def check(ok, what):
    """Counts one check: a pass, or a failure printed at once as "FAIL: what". Returns ok."""
    if ok:
        PASSES[0] += 1
    else:
        FAILS.append(what)
        print("FAIL:", what, flush=True)
    return ok


def tally():
    """The running count, "N passed, M failed"."""
    return f"{PASSES[0]} passed, {len(FAILS)} failed"


def summary(suffix=""):
    """Prints the final line, tally() + suffix, and returns the exit code: 1 if a check
    failed, else 0."""
    print(tally() + suffix, flush=True)
    return 1 if FAILS else 0

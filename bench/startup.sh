#!/bin/sh
# startup.sh [BUILD [RUNS [WORK]]] — where gpuprim_mpi's time outside its phases goes: the
# start-up and the teardown of whole runs, step by step, in one call.
#
# For P in NPS (default "1 4"), for the function job (--function sin --n 1000) and the file
# job (INPUT, default a 2^24-element float32 file made with gpuprim_gen in WORK, sorted with
# --out), and for each variant in VARIANTS, runs
#     /usr/bin/time mpirun -np P gpuprim_mpi ... --json R.json -q   (GPUPRIM_TRACE_STARTUP=1)
# RUNS times (default 5) and prints one table per job and P: per variant the median over the
# runs of the wall time (the whole mpirun: monotonic clock, and /usr/bin/time's %e), of the
# report's startup, total and teardown rows, and of every step of the trace (ms since main's
# entry, the largest over the ranks; pre_main: from the process's start to main; outside:
# wall - total). docs/output.md explains the rows and the steps (src/startup.h).
#
# Variants (each a set of environment variables for the runs):
#   now       the defaults: the CUDA context made while MPI_Init runs, no cm PML on one node,
#             the device memory and the context left to the exit, the function job's kernels
#             loaded lazily
#   before    every one of those off (GPUPRIM_EARLY_CUDA=0 GPUPRIM_FAST_MPI_INIT=0
#             GPUPRIM_FREE_AT_EXIT=1 CUDA_MODULE_LOADING=EAGER): the old path
#   no_early  GPUPRIM_EARLY_CUDA=0      no_pml  GPUPRIM_FAST_MPI_INIT=0
#   fin       GPUPRIM_FAST_MPI_FINALIZE=1 (TCP_NODELAY before MPI_Finalize)
#   free      GPUPRIM_FREE_AT_EXIT=1 (frees, cudaDeviceReset, the runtime's exit handlers)
#   lazy      CUDA_MODULE_LOADING=LAZY (the context without the modules: now - lazy context
#             is the eager module load)
#   eager     CUDA_MODULE_LOADING=EAGER (the function job with every kernel loaded)
# Environment: MPIRUN (default: sh tests/mpirun.sh), NPS, VARIANTS (default "now before
# no_early no_pml free lazy eager"; fin on demand), INPUT, N (elements of the generated file, default 2^24),
# BACKEND (passed as --backend; default: gpuprim_mpi's auto), JOBS ("fn file"), ENVSPY (1,
# the default where cc exists: one more function-job run at np 1 with an LD_PRELOAD library
# that logs every environment read by a thread other than the main one and every change of
# the environment, and a summary of them: the early CUDA context's thread must not read the
# environment while MPI_Init changes it, as glibc's getenv may then read a freed array).
# Example on a GPU host: sh bench/startup.sh build 5 /local/startup | tee startup.txt
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-5}
work=${3:-/tmp/gpuprim_startup}
mpirun=${MPIRUN:-sh tests/mpirun.sh}
nps=${NPS:-1 4}
variants=${VARIANTS:-now before no_early no_pml free lazy eager}
jobs=${JOBS:-fn file}
n=${N:-2^24}
bin=$build/gpuprim_mpi
[ -x "$bin" ] || { echo "startup.sh: $bin: not found (build first, or name the build folder)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "startup.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
mkdir -p "$work"
log=$work/runs.txt
: >"$log"
input=${INPUT:-$work/in.h5}
if [ -z "${INPUT:-}" ] && echo "$jobs" | grep -q file; then
  $mpirun -np 2 "$build/gpuprim_gen" "$input" --n "$n" --force >/dev/null
fi
backend=${BACKEND:+--backend $BACKEND}

variant_env() {
  case $1 in
    now) echo "" ;;
    before) echo "GPUPRIM_EARLY_CUDA=0 GPUPRIM_FAST_MPI_INIT=0 GPUPRIM_FREE_AT_EXIT=1 CUDA_MODULE_LOADING=EAGER" ;;
    no_early) echo "GPUPRIM_EARLY_CUDA=0" ;;
    no_pml) echo "GPUPRIM_FAST_MPI_INIT=0" ;;
    fin) echo "GPUPRIM_FAST_MPI_FINALIZE=1" ;;
    free) echo "GPUPRIM_FREE_AT_EXIT=1" ;;
    lazy) echo "CUDA_MODULE_LOADING=LAZY" ;;
    eager) echo "CUDA_MODULE_LOADING=EAGER" ;;
    *) echo "startup.sh: unknown variant $1" >&2; exit 2 ;;
  esac
}

for p in $nps; do
  for job in $jobs; do
    case $job in
      fn) args="--function sin --n 1000" ;;
      file) args="$input --out $work/sorted.h5 --force" ;;
      *) echo "startup.sh: unknown job $job" >&2; exit 2 ;;
    esac
    for v in $variants; do
      venv=$(variant_env "$v")
      i=0
      while [ "$i" -lt "$runs" ]; do
        i=$((i + 1))
        rm -f "$work/r.json" "$work/err.txt" "$work/time.txt"
        t0=$(date +%s%N)
        # shellcheck disable=SC2086  # the variant's variables and the arguments split at blanks
        if ! env GPUPRIM_TRACE_STARTUP=1 $venv /usr/bin/time -f "%e" -o "$work/time.txt" \
            $mpirun -np "$p" "$bin" $args $backend --json "$work/r.json" -q 2>"$work/err.txt"; then
          echo "startup.sh: $job np $p $v: the run failed:" >&2
          cat "$work/err.txt" >&2
          exit 1
        fi
        t1=$(date +%s%N)
        {
          echo "RUN job=$job np=$p variant=$v wall_ms=$(( (t1 - t0) / 1000000 )) time_e=$(cat "$work/time.txt")"
          grep '^gpuprim_mpi: trace:' "$work/err.txt" || true
          echo "JSON $(tr -d '\n' <"$work/r.json")"
        } >>"$log"
      done
    done
  done
done
rm -f "$work/sorted.h5"

if [ "${ENVSPY:-1}" = 1 ] && command -v cc >/dev/null 2>&1; then
  cat >"$work/envspy.c" <<'SPY'
/* envspy.c: logs environment reads by threads other than the main one, and every change */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
static void say(const char *what, const char *name)
{
    char b[320];
    int main_thread = syscall(SYS_gettid) == getpid();
    int l = snprintf(b, sizeof b, "ENVSPY %s %s %s %.200s\n", program_invocation_short_name,
                     main_thread ? "main" : "thread", what, name ? name : "(null)");
    if (l > 0) (void)!write(2, b, (size_t)l);
}
#define READER(fn)                                                                  \
    char *fn(const char *n)                                                         \
    {                                                                               \
        static char *(*real)(const char *);                                         \
        if (!real) real = (char *(*)(const char *))dlsym(RTLD_NEXT, #fn);           \
        if (syscall(SYS_gettid) != getpid()) say("get", n);                         \
        return real(n);                                                             \
    }
READER(getenv)
READER(secure_getenv)
int setenv(const char *n, const char *v, int o)
{
    static int (*real)(const char *, const char *, int);
    if (!real) real = (int (*)(const char *, const char *, int))dlsym(RTLD_NEXT, "setenv");
    say("set", n);
    return real(n, v, o);
}
int putenv(char *s)
{
    static int (*real)(char *);
    if (!real) real = (int (*)(char *))dlsym(RTLD_NEXT, "putenv");
    say("put", s);
    return real(s);
}
int unsetenv(const char *n)
{
    static int (*real)(const char *);
    if (!real) real = (int (*)(const char *))dlsym(RTLD_NEXT, "unsetenv");
    say("unset", n);
    return real(n);
}
SPY
  cc -shared -fPIC -O1 -o "$work/envspy.so" "$work/envspy.c" -ldl
  # shellcheck disable=SC2086
  env GPUPRIM_TRACE_STARTUP=1 LD_PRELOAD="$work/envspy.so" $mpirun -np 1 "$bin" --function sin \
      --n 1000 $backend -q 2>"$work/envspy.txt" || true
  python3 - "$work/envspy.txt" <<'PYEOF'
import sys
# the program's own lines (the launcher runs with the library too)
lines = [l.split(None, 4)[2:] for l in open(sys.argv[1])
         if l.startswith("ENVSPY gpuprim_mpi ")]
lines = [l + [""] * (3 - len(l)) for l in lines]
reads = [i for i, (who, what, _) in enumerate(lines) if who == "thread" and what == "get"]
# gpuprim_mpi's own changes come before it starts the thread
ours = ("OMPI_MCA_sharedfp", "OMPI_MCA_pml", "CUDA_MODULE_LOADING")
changes = [i for i, (who, what, name) in enumerate(lines)
           if who == "main" and what != "get" and not name.startswith(ours)]
inside = [i for i in reads if changes and changes[0] < i < changes[-1]]
print("\nenvironment (ENVSPY, np 1, function job): %d change(s) by the main thread after "
      "gpuprim_mpi's own, %d read(s) by other threads, %d of them between the first and the "
      "last of those changes (each such read may race with them)"
      % (len(changes), len(reads), len(inside)))
names = sorted(set(lines[i][2].strip() for i in reads))
print("  read by other threads: " + (", ".join(names) if names else "none"))
print("  changed: " + (", ".join(lines[i][2].strip().split("=")[0] for i in changes) or "none"))
PYEOF
fi

python3 - "$log" <<'EOF'
import json, statistics, sys
STEPS = ["pre_main", "mpi_init", "local_rank", "device", "context", "first_alloc", "first_phase",
         "last_phase", "frees", "report", "mpi_finalize", "context_gone", "exit"]
runs, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("RUN "):
        cur = dict(kv.split("=", 1) for kv in line.split()[1:])
        cur["ranks"] = []
        runs.append(cur)
    elif line.startswith("gpuprim_mpi: trace: "):
        rest = line.split(": ", 3)[3]
        cur["ranks"].append({k: (None if v == "-" else v) for k, v in
                             (kv.split("=", 1) for kv in rest.split())})
    elif line.startswith("JSON "):
        cur["times"] = json.loads(line[5:]).get("times_ms", {})
def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None
def cell(v):
    return "%10s" % ("-" if v is None else "%.1f" % v)
keys = []
for r in runs:
    if (r["job"], r["np"]) not in keys:
        keys.append((r["job"], r["np"]))
cols = ["wall", "time_e", "startup", "total", "teardown", "outside"] + STEPS
for job, p in keys:
    print("\n%s job, np %s: median of %d runs, ms (steps: since main's entry, the latest rank)"
          % ("function" if job == "fn" else "file", p,
             sum(1 for r in runs if r["job"] == job and r["np"] == p and r["variant"] == runs[0]["variant"])))
    print("%-9s" % "variant" + "".join("%10s" % c[:9] for c in cols))
    seen = []
    for r in runs:
        if r["job"] == job and r["np"] == p and r["variant"] not in seen:
            seen.append(r["variant"])
    for v in seen:
        rs = [r for r in runs if r["job"] == job and r["np"] == p and r["variant"] == v]
        row = dict(wall=med([float(r["wall_ms"]) for r in rs]),
                   time_e=med([float(r["time_e"]) * 1e3 for r in rs]))
        for k in ("startup", "total", "teardown"):
            row[k] = med([r["times"].get(k) for r in rs])
        row["outside"] = med([float(r["wall_ms"]) - r["times"]["total"] for r in rs
                              if "total" in r["times"]])
        for s in STEPS:
            row[s] = med([max((float(x[s]) for x in r["ranks"] if x.get(s) is not None),
                              default=None) for r in rs])
        print("%-9s" % v + "".join(cell(row[c]) for c in cols))
EOF
echo "startup.sh: every run's trace and report: $log"

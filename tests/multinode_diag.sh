#!/bin/bash
# multinode_diag.sh [--bin BUILD_DIR] [--hosts nodea:2,nodeb:2] [--timeout S] [--backend B]
#                   [--out DIR]
#
# Where does a launch across simulated hosts (tests/multinode_launch.sh) stop? Runs the
# launch in stages, each bounded by S seconds (default 30), and prints one verdict line per
# stage; the whole output of each stage (Open MPI's plm and oob verbosity, --debug-daemons)
# goes to DIR (default ./multinode_diag.out). A stage still running at its deadline is
# stopped after a snapshot of its processes (state, kernel wait channel and, where gdb is
# installed, the stack of each rank) in DIR/STAGE.txt.deadline. Stages:
#   0 the environment: launcher, Open MPI and PMIx variables (a relocated kit's), unshare;
#   1 the agent alone: tests/multinode_agent.sh HOST hostname must print HOST;
#   2 the daemons: `hostname` on every host (no MPI): each orted starts and calls back;
#   3 MPI ranks as the environment sets PMIx (PMIX_MCA_gds kept): gpuprim_mpi --function
#     --verbose on every host, which prints its binding table after MPI_Init and the node
#     split (MPI_COMM_TYPE_SHARED);
#   4 the same as tests/multinode_launch.sh runs it (a hash-only PMIX_MCA_gds dropped);
#   5 a sort of a generated file with --verbose: the transports and bytes of each step.
# With the devicekit on a machine with no other MPI:
#     source .devicekit/env.sh .devicekit && timeout 600 tests/multinode_diag.sh --backend cuda
# Exit status: 0 when stages 1, 2, 4 and 5 pass, else 1; 77 when the hosts cannot be
# simulated here (the reason is printed).
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$here/../build hosts=nodea:2,nodeb:2 limit=30 backend=cpu out=$PWD/multinode_diag.out
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --backend) backend=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
bin=$(cd "$bin" && pwd) || exit 2
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
np=$(printf '%s\n' "$hosts" | tr ',' '\n' | awk -F: '{ s += $2 } END { print s }')
first=${hosts%%:*}
launch="$here/multinode_launch.sh"
export GPUPRIM_MULTINODE_HOSTS=$hosts
fails=0
verdict() { printf '%-34s %s\n' "$1" "$2"; }

# ---- 0: the environment --------------------------------------------------------------------
{
  echo "host $(hostname), $(id -un) ($(id -u)), $(uname -sr), $(date -u +%FT%TZ)"
  echo "mpirun: $(command -v "${GPUPRIM_MPIEXEC:-mpirun}") ($("${GPUPRIM_MPIEXEC:-mpirun}" --version 2>&1 | head -n 1))"
  echo "orted: $(command -v orted)"
  echo "CUDA-aware MPI: $(ompi_info --parsable --all 2>/dev/null | sed -n 's/.*built_with_cuda_support:value://p' | head -n 1)"
  echo "unshare: $(unshare --version 2>&1 | head -n 1)"
  echo "gdb: $(command -v gdb || echo none)"
  env | grep -E '^(OMPI_|OPAL_|PMIX_|ORTE_|HWLOC_|DK_|LD_LIBRARY_PATH|PATH=|CUDA_VISIBLE)' | sort
} >"$out/0_env.txt" 2>&1
verdict "0 environment" "$out/0_env.txt"
grep -E '^(mpirun|orted|CUDA-aware|PMIX_MCA_gds|OMPI_MCA_plm|OPAL_PREFIX)' "$out/0_env.txt" | sed 's/^/    /'
reason=$(sh "$launch" --check)
if [ $? != 0 ]; then
  verdict "  simulated hosts" "impossible here: $reason"
  exit 77
fi

# snapshot FILE SID: the processes of session SID (the stage's), their state and wait
# channel, and each rank's stack where gdb is installed
snapshot() {
  local p
  {
    echo "---- processes at the deadline"
    ps -s "$2" -o pid,ppid,stat,etimes,wchan:24,args --forest
    for p in $(pgrep -s "$2" -x gpuprim_mpi); do
      echo "---- rank process $p on host $(nsenter -t "$p" -u hostname 2>/dev/null || echo ?)"
      command -v gdb >/dev/null && timeout 20 gdb -p "$p" -batch -ex 'thread apply all bt 12' 2>/dev/null | grep -E '^(#|Thread)'
    done
  } >"$1" 2>&1
}

# stage NAME LOG CMD...: runs CMD in a session of its own, bounded by $limit seconds; sets
# rc (124: stopped at the deadline) and took
stage() {
  local name=$1 log=$2 pid t0 i
  shift 2
  t0=$(date +%s)
  setsid "$@" >"$log" 2>&1 &
  pid=$!
  for ((i = 0; i < limit * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    snapshot "$log.deadline" "$pid"
    kill -TERM -- "-$pid" 2>/dev/null
    sleep 3
    kill -KILL -- "-$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=124
  else
    wait "$pid"
    rc=$?
  fi
  took=$(($(date +%s) - t0))
}

# ---- 1: the agent ----------------------------------------------------------------------------
stage agent "$out/1_agent.txt" sh "$here/multinode_agent.sh" "$first" hostname
got=$(head -n 1 "$out/1_agent.txt")
if [ "$rc" = 0 ] && [ "$got" = "$first" ]; then verdict "1 agent (UTS namespace)" "ok: prints $got"
else verdict "1 agent (UTS namespace)" "FAILED (exit $rc): $(head -c 300 "$out/1_agent.txt")"; fails=$((fails + 1)); fi

# ---- 2: the daemons --------------------------------------------------------------------------
verbose="--mca plm_base_verbose 5 --mca oob_base_verbose 10 --debug-daemons"
stage daemons "$out/2_daemons.txt" env GPUPRIM_MULTINODE_MPIRUN_ARGS="$verbose" sh "$launch" -np "$np" hostname
up=$(grep -c 'orted: up and running' "$out/2_daemons.txt")
nh=$(printf '%s\n' "$hosts" | tr ',' '\n' | wc -l)
if [ "$rc" = 0 ]; then verdict "2 daemons (hostname)" "ok in $took s: $up of $nh orteds up; printed: $(grep -xE '[A-Za-z0-9.-]+' "$out/2_daemons.txt" | sort | tr '\n' ' ')"
elif [ "$rc" = 124 ]; then verdict "2 daemons (hostname)" "HUNG (stopped after $limit s): $up of $nh orteds up (daemon launch or call-back: oob lines in $out/2_daemons.txt)"; fails=$((fails + 1))
else verdict "2 daemons (hostname)" "FAILED (exit $rc): $(grep -v '^\[' "$out/2_daemons.txt" | head -n 3 | tr '\n' ' ')"; fails=$((fails + 1)); fi

# ---- 3, 4: MPI ranks -------------------------------------------------------------------------
mpi_stage() { # mpi_stage NAME LOG ENV...
  local name=$1 log=$2 rows
  shift 2
  stage "$name" "$log" env "$@" GPUPRIM_MULTINODE_MPIRUN_ARGS="--debug-daemons" \
    sh "$launch" -np "$np" "$bin/gpuprim_mpi" --function x2 --n 100000 --backend "$backend" --verbose
  rows=$(grep -cE '^ +[0-9]+ +[A-Za-z0-9.-]+ +[0-9]+ ' "$log")
  if [ "$rc" = 0 ]; then
    result="ok in $took s: binding table of $rows rows: $(grep -E '^ +[0-9]+ +[A-Za-z0-9.-]+ +[0-9]+ ' "$log" | awk '{printf "%s:%s/%s ", $1, $2, $3}')"
  elif [ "$rc" = 124 ]; then
    local ranks
    ranks=$(grep -c '^---- rank process' "$log.deadline")
    result="HUNG (stopped after $limit s): $(grep -c 'orted: up and running' "$log") orteds up, $ranks rank processes alive, $rows binding rows"
    local at
    at=$(grep -oE 'in (PMPI_|ompi_mpi_init|MPI_)[A-Za-z_]*' "$log.deadline" | sort | uniq -c | sort -rn | head -n 2 | awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $3, $1}')
    [ "$rows" = 0 ] && [ "$ranks" -gt 0 ] && result="$result: the ranks stop in MPI_Init or the node split${at:+ (stacks: $at)}; see $log.deadline"
  else
    result="FAILED (exit $rc): $(grep -E 'error|rror:' "$log" | head -n 2 | tr '\n' ' ')"
  fi
}
mpi_stage as_env "$out/3_mpi_env_pmix.txt" GPUPRIM_MULTINODE_KEEP_PMIX=1
verdict "3 MPI, PMIX_MCA_gds=${PMIX_MCA_gds:-(unset)}" "$result"
mpi_stage as_test "$out/4_mpi_launch.txt"
verdict "4 MPI as multinode_launch.sh" "$result"
[ "$rc" = 0 ] || fails=$((fails + 1))

# ---- 5: a sort: transports and bytes per step -----------------------------------------------
in=$out/diag_in.h5
sh "$here/mpirun.sh" -np 1 "$bin/gpuprim_gen" "$in" --n 100003 --force >"$out/5_gen.txt" 2>&1
stage sort "$out/5_sort.txt" sh "$launch" -np "$np" "$bin/gpuprim_mpi" "$in" --backend "$backend" --verbose
if [ "$rc" = 0 ]; then
  verdict "5 sort" "ok in $took s: $(grep -o 'rank exchange .*' "$out/5_sort.txt" | head -n 1)"
  sed -n '/^exchange step/,$p' "$out/5_sort.txt" | sed 's/^/    /'
else
  verdict "5 sort" "FAILED (exit $rc): $(grep -E 'error' "$out/5_sort.txt" | head -n 2 | tr '\n' ' ')"
  fails=$((fails + 1))
fi
rm -f "$in"
echo "multinode_diag: $fails stage(s) failed; logs in $out"
[ "$fails" = 0 ]

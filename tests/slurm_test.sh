#!/bin/bash
# slurm_test.sh --bin BUILD_DIR --src SOURCE_DIR --work WORK_DIR
#
# Starts a real single-node Slurm cluster from the distribution's packages (munged,
# slurmctld, slurmd; no systemd, no cgroups), submits jobs/gpuprim.sbatch with
# `sbatch --wait` on a file written by gpuprim_gen, and checks the jobs' exit codes and
# output. Stops every daemon it started on the way out, also on failure or interruption.
#
#   cluster A, no GPUs configured:
#     - sbatch without an override is refused (the script asks for --gpus-per-task=1);
#     - sbatch --gpus-per-task=0: exit code 0, the summary of 2 ranks, sorted and verified;
#     - SBATCH_GPUS_PER_TASK=0 and a missing input: the job's exit code is gpuprim_mpi's 3;
#   cluster B, the same node with two stand-in GPUs (gres/gpu on character devices made
#   with mknod, so Slurm hands them out without any GPU present):
#     - the unchanged script: Slurm gives each task its own CUDA_VISIBLE_DEVICES, the
#       --verbose table and the JSON show 0 and 1, no sharing warning, exit code 0.
#
# Needs root (slurmd runs as root, SlurmUser=root) and the packages slurmctld, slurmd,
# slurm-client and munge (Debian/Ubuntu); exits 77 (CTest: skipped) with a message when
# any is missing. The configuration and the logs go to WORK_DIR; the daemons' state,
# spool and munge socket to a fresh folder under /var/spool (short paths: Unix sockets),
# removed at the end.
set -u

bin="" src="" work=""
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --src) src=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "usage: slurm_test.sh --bin BUILD_DIR --src SOURCE_DIR --work WORK_DIR" >&2; exit 2 ;;
  esac
done
[ -n "$bin" ] && [ -n "$src" ] && [ -n "$work" ] || { echo "slurm_test.sh: --bin, --src and --work are needed" >&2; exit 2; }

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "the Slurm test starts slurmd, slurmctld and munged and needs root"
for c in slurmctld slurmd munged munge sbatch srun sinfo scontrol squeue scancel setpriv mknod; do
  command -v "$c" >/dev/null 2>&1 ||
    skip "$c is not installed (Debian/Ubuntu: apt-get install slurmctld slurmd slurm-client munge)"
done
id munge >/dev/null 2>&1 || skip "no munge user (the munge package creates it)"

t_begin=$(date +%s.%N)
elapsed() { awk -v a="$t_begin" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "slurm_test [$(elapsed) s]: $*"; }
fails=0
check() { # check CONDITION-STATUS MESSAGE
  if [ "$1" = 0 ]; then echo "ok   $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi
}

work=$(mkdir -p "$work" && cd "$work" && pwd)
rm -rf "${work:?}"/*
mkdir -p "$work/job"
cd "$work/job"    # sbatch's folder: the jobs' SLURM_SUBMIT_DIR and output folder
run=$(mktemp -d /var/spool/gpuprim-slurm.XXXXXX 2>/dev/null || mktemp -d /tmp/gpuprim-slurm.XXXXXX)
chmod 755 "$run"
host=$(hostname -s)
ncpu=$(nproc)
mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
ntasks=$((ncpu < 2 ? ncpu : 2))
stepds_before=" $(pgrep -x slurmstepd | tr '\n' ' ') "

# ---- stopping: by process id, TERM then KILL ---------------------------------------------
munged_pid="" ctld_pid="" slurmd_pid="" sbatch_pid=""
stop_pid() { # stop_pid PID NAME
  local pid=$1 i
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }; sleep 0.1; done
  log "$2 ($pid) ignored SIGTERM; SIGKILL"
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  return 0
}
stop_slurm() {
  if [ -n "$ctld_pid" ] && kill -0 "$ctld_pid" 2>/dev/null; then
    local jobs
    jobs=$(timeout 5 squeue -h -o %i 2>/dev/null | tr '\n' ' ')
    [ -n "${jobs// /}" ] && timeout 10 scancel $jobs 2>/dev/null && sleep 1
  fi
  stop_pid "$slurmd_pid" slurmd
  stop_pid "$ctld_pid" slurmctld
  slurmd_pid="" ctld_pid=""
  # step daemons this test's slurmd started: they end on their own shortly after their
  # job; any still there after 5 s are killed
  local p i left
  for i in $(seq 50); do
    left=""
    for p in $(pgrep -x slurmstepd); do
      case $stepds_before in *" $p "*) ;; *) left="$left $p" ;; esac
    done
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  for p in $left; do log "stopping slurmstepd $p"; kill -KILL "$p" 2>/dev/null; done
}
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  stop_pid "$sbatch_pid" sbatch
  stop_slurm
  stop_pid "$munged_pid" munged
  rm -rf "$run"
  if pgrep -f "$work/" >/dev/null 2>&1 || pgrep -f "$run/" >/dev/null 2>&1; then
    echo "FAIL: processes of this test are still running:"; pgrep -af "$work/|$run/"
    rc=1
  else
    log "all daemons stopped"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

show_logs() {
  local f
  for f in "$1"/log/*.log "$run"/munge/munged.log; do
    [ -f "$f" ] && { echo "---- tail $f"; tail -n 25 "$f"; }
  done
}

# ---- munge: a private key and socket, the daemon as the munge user ---------------------
mkdir -p "$run/munge"
head -c 1024 /dev/urandom >"$run/munge/munge.key"
chown -R munge:munge "$run/munge"
chmod 755 "$run/munge"       # munged wants the socket's folder open to all (x)
chmod 400 "$run/munge/munge.key"
msock=$run/munge/munge.socket
setpriv --reuid=munge --regid=munge --init-groups \
  munged --foreground --socket="$msock" --key-file="$run/munge/munge.key" \
         --pid-file="$run/munge/munged.pid" --log-file="$run/munge/munged.log" \
         --seed-file="$run/munge/munged.seed" >"$work/munged.out" 2>&1 &
munged_pid=$!
for i in $(seq 50); do [ -S "$msock" ] && break; sleep 0.1; done
if ! munge -n -S "$msock" </dev/null | unmunge -S "$msock" >/dev/null 2>&1; then
  cat "$work/munged.out"; show_logs "$work"
  echo "FAIL: munged did not start"; exit 1
fi
log "munged running (pid $munged_pid, socket $msock)"

# ---- ports: two free TCP ports (a real Slurm on this host keeps 6817/6818) -------------
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
base=$((20000 + ($$ % 20000)))
while ! port_free "$base" || ! port_free $((base + 1)); do base=$((base + 2)); done

# ---- one cluster: config, daemons, wait for the node -------------------------------------
# start_cluster NAME GPUS   (GPUS 0: no gres; else that many stand-in GPUs)
start_cluster() {
  local name=$1 gpus=$2 d=$work/$1 r=$run/$1 i state gres="" gresline=""
  mkdir -p "$d/etc" "$d/log" "$r/state" "$r/spool" "$r/dev"
  if [ "$gpus" -gt 0 ]; then
    # character devices (the numbers of /dev/null) that Slurm accepts as GPU files
    for i in $(seq 0 $((gpus - 1))); do mknod "$r/dev/gpu$i" c 1 3 || return 1; done
    gres=" Gres=gpu:$gpus"
    gresline="GresTypes=gpu"
    echo "NodeName=$host Name=gpu File=$r/dev/gpu[0-$((gpus - 1))]" >"$d/etc/gres.conf"
  fi
  cat >"$d/etc/slurm.conf" <<EOF
# generated by tests/slurm_test.sh: a single-node cluster without cgroups or systemd
ClusterName=gpuprim$name
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$msock
StateSaveLocation=$r/state
SlurmdSpoolDir=$r/spool
SlurmctldPidFile=$r/slurmctld.pid
SlurmdPidFile=$r/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
KillWait=5
MinJobAge=600
$gresline
NodeName=$host NodeAddr=127.0.0.1 CPUs=$ncpu RealMemory=$mem_mb$gres State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$d/etc/slurm.conf
  slurmctld -D -f "$SLURM_CONF" >"$d/log/slurmctld.out" 2>&1 &
  ctld_pid=$!
  slurmd -D -f "$SLURM_CONF" >"$d/log/slurmd.out" 2>&1 &
  slurmd_pid=$!
  for i in $(seq 100); do
    state=$(timeout 5 sinfo -h -n "$host" -o %T 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.2
  done
  if [ "$state" != idle ]; then
    show_logs "$d"
    echo "FAIL: cluster $name: node $host is '${state:-unreachable}', not idle"
    return 1
  fi
  log "cluster $name up: node $host idle, $ncpu CPUs, ${mem_mb} MB, GPUs: $gpus (config $SLURM_CONF)"
}

# submit NAME [sbatch options...]: sbatch --wait from the job folder; sets job_rc, job_id, job_out
submit() {
  local name=$1
  shift
  # in the background, so that a signal reaches the trap at once (bash runs traps only
  # between commands, but interrupts `wait`)
  timeout 180 sbatch --wait --time=00:05:00 --ntasks-per-node="$ntasks" --job-name="$name" \
    "$@" "$src/jobs/gpuprim.sbatch" >"$work/job/$name.sbatch.txt" 2>&1 &
  sbatch_pid=$!
  wait "$sbatch_pid"
  job_rc=$?
  sbatch_pid=""
  job_id=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$work/job/$name.sbatch.txt")
  job_out=$work/job/gpuprim-$job_id.out
  log "job $name (${job_id:-not submitted}): sbatch --wait returned $job_rc"
  if [ -n "$job_id" ]; then
    echo "---- $job_out"
    cat "$job_out" 2>/dev/null
    echo "---- scontrol show job $job_id: $(timeout 5 scontrol show job "$job_id" 2>/dev/null | grep -o 'JobState=[A-Z_]*\|ExitCode=[0-9:]*' | tr '\n' ' ')"
  else
    cat "$work/job/$name.sbatch.txt"
  fi
}
job_exitcode() { # the job's exit code as slurmctld recorded it; -1 when unknown
  local c
  c=$(timeout 5 scontrol show job "$1" 2>/dev/null | sed -n 's/.* ExitCode=\([0-9]*\):.*/\1/p' | head -n 1)
  echo "${c:--1}"
}

# ---- the input ---------------------------------------------------------------------------
input=$work/job/input.h5
sh "$src/tests/mpirun.sh" -np 1 "$bin/gpuprim_gen" "$input" --n 200000 --dist normal --seed 7 --force >/dev/null ||
  { echo "FAIL: gpuprim_gen"; exit 1; }
export GPUPRIM_BIN=$bin/gpuprim_mpi GPUPRIM_INPUT=$input
export OMPI_MCA_btl_vader_single_copy_mechanism=none   # as tests/mpirun.sh: containers
unset CUDA_VISIBLE_DEVICES SBATCH_GPUS_PER_TASK

# ---- cluster A: no GPUs -------------------------------------------------------------------
start_cluster a 0 || exit 1
srun --mpi=list 2>&1 | grep -q pmix; check $? "srun --mpi=list offers pmix"

submit a_refused
grep -qi 'gres\|generic resource' "$work/job/a_refused.sbatch.txt"
said=$?
check $(( job_rc != 0 && said == 0 ? 0 : 1 )) "without an override the GPU request is refused on a cluster without GPUs"

submit a_ok --gpus-per-task=0 "--export=ALL,GPUPRIM_OPTS=--verbose --json $work/job/a.json"
check $(( job_rc == 0 ? 0 : 1 )) "sbatch --gpus-per-task=0: sbatch --wait returns 0"
check $(( $(job_exitcode "$job_id") == 0 ? 0 : 1 )) "scontrol: ExitCode 0"
grep -q "$ntasks ranks\?, backend cpu" "$job_out"; check $? "the job ran $ntasks rank(s) (srun --mpi=pmix), CPU backend"
grep -q "sorted         yes, verified" "$job_out"; check $? "the job sorted and verified the data"
grep -q "GPUs per task: 0" "$job_out"; check $? "the job asked for no GPU"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r['count']==200000 and r['ranks']==$ntasks and len(r['binding'])==$ntasks else 1)" \
  "$work/job/a.json" 2>/dev/null
check $? "the job's JSON report: 200000 elements, $ntasks ranks, the binding table"

GPUPRIM_INPUT=$work/job/missing.h5 SBATCH_GPUS_PER_TASK=0 submit a_missing
check $(( job_rc == 3 ? 0 : 1 )) "a missing input: sbatch --wait returns gpuprim_mpi's exit code 3 (got $job_rc)"
check $(( $(job_exitcode "$job_id") == 3 ? 0 : 1 )) "scontrol: ExitCode 3"
grep -q "missing.h5" "$job_out"; check $? "the job's output names the missing file"

stop_slurm

# ---- cluster B: two stand-in GPUs, the unchanged script -----------------------------------
if start_cluster b "$ntasks"; then
  GPUPRIM_OPTS="--verbose --json $work/job/b.json" submit b_gpus
  check $(( job_rc == 0 ? 0 : 1 )) "unchanged script with GPUs: sbatch --wait returns 0"
  grep -q "GPUs per task: 1" "$job_out"; check $? "the job asked for one GPU per task"
  ! grep -q "share one GPU" "$job_out"; check $? "no sharing warning: each rank has its own GPU"
  python3 - "$work/job/b.json" "$ntasks" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
cvd = [b["cuda_visible_devices"] for b in r["binding"]]
print("binding CUDA_VISIBLE_DEVICES:", cvd)
sys.exit(0 if sorted(cvd) == [str(i) for i in range(n)] and r["sorted_verified"] else 1)
PY
  check $? "Slurm gave each rank its own CUDA_VISIBLE_DEVICES (--verbose table, JSON)"
else
  check 1 "cluster B (stand-in GPUs) started"
fi
stop_slurm

log "$fails failure(s)"
[ "$fails" = 0 ]

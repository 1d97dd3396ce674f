#!/bin/bash
# slurm_test.sh --bin BUILD_DIR --src SOURCE_DIR --work WORK_DIR [--nodes 1|2]
#
# Starts a real Slurm cluster from the distribution's packages (munged, slurmctld, slurmd;
# no systemd, no cgroups), submits jobs/gpuprim.sbatch with `sbatch --wait` on a file
# written by gpuprim_gen, and checks the jobs' exit codes and output. Stops every daemon it
# started on the way out, also on failure or interruption.
#
# --nodes 1 (the default): clusters A and B, one node (this machine's host name);
# --nodes 2: cluster C, two nodes on this machine (below).
#
#   cluster A, no GPUs configured:
#     - sbatch without an override is refused (the script asks for --gpus-per-task=1);
#     - sbatch --gpus-per-task=0: exit code 0, the summary of 2 ranks, sorted and verified;
#     - SBATCH_GPUS_PER_TASK=0 and a missing input: the job's exit code is gpuprim_mpi's 3;
#   cluster B, the same node with two stand-in GPUs (gres/gpu on character devices made
#   with mknod, so Slurm hands them out without any GPU present):
#     - the unchanged script: Slurm gives each task its own CUDA_VISIBLE_DEVICES, the
#       --verbose table and the JSON show 0 and 1, no sharing warning, exit code 0;
#     - GPUPRIM_DRY_RUN=1 under sbatch: the srun line in the job's output, exit code 0.
#   cluster C, two nodes, nodea and nodeb: two slurmd daemons, each in a UTS namespace of
#   its own whose host name is its NodeName (Debian's slurmd takes its node name from the
#   host name), each on its own Port, and in a mount namespace of its own where the
#   directory of the PMIx plugin's client files (mpi.conf PMIxCliTmpDirBase) is the node's
#   own: with one shared directory the second node's step fails ("pmixp_mkdir: Cannot
#   create directory .../spmix_appdir_0_1.0: File exists") and srun reports "task 0
#   launch failed". CPU backend, no GPUs:
#     - sbatch --nodes=2 --ntasks-per-node=2: exit code 0; the binding table and the JSON
#       give ranks 0, 1 on nodea and 2, 3 on nodeb with node-local ranks 0, 1; --out and
#       the statistics equal a one-host run of 4 ranks; every exchange step mpi;
#     - --transport shared: exit code 7, "its partner rank 3 is on another node";
#     - a job cancelled (scancel) while it writes its --out file (its reads and writes
#       slowed by GPUPRIM_READ_PIECE_BYTES and --io mpiio, the write seen in its --progress
#       lines): state CANCELLED within seconds, no output or temporary file, no rank left.
#
# Needs root (slurmd runs as root, SlurmUser=root) and the packages slurmctld, slurmd,
# slurm-client and munge (Debian/Ubuntu), and for --nodes 2 unshare(1) with the right to make
# UTS and mount namespaces; exits 77 (CTest: skipped) with a message when any is missing. The configuration and the logs go to WORK_DIR; the daemons' state,
# spool and munge socket to a fresh folder under /var/spool (short paths: Unix sockets),
# removed at the end.
set -u

bin="" src="" work="" nodes=1
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --src) src=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    *) echo "usage: slurm_test.sh --bin BUILD_DIR --src SOURCE_DIR --work WORK_DIR [--nodes 1|2]" >&2; exit 2 ;;
  esac
done
case $nodes in 1 | 2) ;; *) echo "slurm_test.sh: --nodes 1 or 2" >&2; exit 2 ;; esac
[ -n "$bin" ] && [ -n "$src" ] && [ -n "$work" ] || { echo "slurm_test.sh: --bin, --src and --work are needed" >&2; exit 2; }

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "the Slurm test starts slurmd, slurmctld and munged and needs root"
for c in slurmctld slurmd munged munge sbatch srun sinfo scontrol squeue scancel setpriv mknod; do
  command -v "$c" >/dev/null 2>&1 ||
    skip "$c is not installed (Debian/Ubuntu: apt-get install slurmctld slurmd slurm-client munge)"
done
id munge >/dev/null 2>&1 || skip "no munge user (the munge package creates it)"
if [ "$nodes" = 2 ]; then
  command -v unshare >/dev/null 2>&1 || skip "two nodes need unshare(1) (util-linux)"
  err=$(unshare --uts --mount /bin/sh -c 'hostname nodea && mount --bind /tmp /tmp' 2>&1) ||
    skip "two nodes need a UTS and a mount namespace per slurmd, and unshare --uts --mount failed: $err"
fi

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
munged_pid="" ctld_pid="" slurmd_pids="" sbatch_pid=""
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
  local p
  for p in $slurmd_pids; do stop_pid "$p" slurmd; done
  stop_pid "$ctld_pid" slurmctld
  slurmd_pids="" ctld_pid=""
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

# ---- ports: four free TCP ports (a real Slurm on this host keeps 6817/6818): slurmctld,
# slurmd, and the two slurmd of cluster C ---------------------------------------------------
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
base=$((20000 + ($$ % 20000)))
while ! port_free "$base" || ! port_free $((base + 1)) || ! port_free $((base + 2)) ||
      ! port_free $((base + 3)); do
  base=$((base + 4))
done

# ---- one cluster: config, daemons, wait for the nodes ------------------------------------
# start_cluster NAME GPUS [NODES]   (GPUS 0: no gres; else that many stand-in GPUs on the one
# node. NODES 2: nodes nodea and nodeb, each slurmd in UTS and mount namespaces of its own)
start_cluster() {
  local name=$1 gpus=$2 n=${3:-1} d=$work/$1 r=$run/$1 i nd state want gres="" gresline=""
  local names=$host nodelines="" params="" spool=$r/spool pidf=$r/slurmd.pid logf=$d/log/slurmd.log
  mkdir -p "$d/etc" "$d/log" "$r/state" "$r/spool" "$r/dev"
  if [ "$gpus" -gt 0 ]; then
    # character devices (the numbers of /dev/null) that Slurm accepts as GPU files
    for i in $(seq 0 $((gpus - 1))); do mknod "$r/dev/gpu$i" c 1 3 || return 1; done
    gres=" Gres=gpu:$gpus"
    gresline="GresTypes=gpu"
    echo "NodeName=$host Name=gpu File=$r/dev/gpu[0-$((gpus - 1))]" >"$d/etc/gres.conf"
  fi
  if [ "$n" = 1 ]; then
    nodelines="NodeName=$host NodeAddr=127.0.0.1 CPUs=$ncpu RealMemory=$mem_mb$gres State=UNKNOWN"
  else
    # %n: each slurmd its own spool, pid and log file; the PMIx plugin's client folder is
    # one path that each slurmd's mount namespace points to a folder of its node's
    # 2 CPUs per node whatever the machine has (config_overrides: slurmd believes the
    # configuration), for --ntasks-per-node=2
    names="nodea nodeb" spool=$r/spool/%n pidf=$r/slurmd-%n.pid logf=$d/log/slurmd-%n.log
    params="SlurmdParameters=config_overrides"
    mkdir -p "$r/pmix"
    echo "PMIxCliTmpDirBase=$r/pmix" >"$d/etc/mpi.conf"
    i=2
    for nd in $names; do
      mkdir -p "$r/spool/$nd" "$r/pmix-$nd"
      nodelines="$nodelines${nodelines:+$'\n'}NodeName=$nd NodeAddr=127.0.0.1 Port=$((base + i))"
      nodelines="$nodelines CPUs=2 RealMemory=$((mem_mb / 2)) State=UNKNOWN"
      i=$((i + 1))
    done
  fi
  cat >"$d/etc/slurm.conf" <<EOF
# generated by tests/slurm_test.sh: $n node(s) on one machine, without cgroups or systemd
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
SlurmdSpoolDir=$spool
SlurmctldPidFile=$r/slurmctld.pid
SlurmdPidFile=$pidf
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$logf
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
$params
$nodelines
PartitionName=test Nodes=${names// /,} Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$d/etc/slurm.conf
  slurmctld -D -f "$SLURM_CONF" >"$d/log/slurmctld.out" 2>&1 &
  ctld_pid=$!
  if [ "$n" = 1 ]; then
    slurmd -D -f "$SLURM_CONF" >"$d/log/slurmd.out" 2>&1 &
    slurmd_pids=$!
  else
    # the node's name as the host name, its own PMIx client folder; exec keeps the pid
    for nd in $names; do
      unshare --uts --mount --propagation private /bin/sh -c \
        'hostname "$0" && mount --bind "$1" "$2" && exec slurmd -D -f "$SLURM_CONF"' \
        "$nd" "$r/pmix-$nd" "$r/pmix" >"$d/log/slurmd-$nd.out" 2>&1 &
      slurmd_pids="$slurmd_pids $!"
    done
  fi
  want=$(for nd in $names; do echo "$nd idle"; done)
  for i in $(seq 100); do
    state=$(timeout 5 sinfo -h -N -o "%N %T" 2>/dev/null | sort)
    [ "$state" = "$want" ] && break
    sleep 0.2
  done
  if [ "$state" != "$want" ]; then
    show_logs "$d"
    echo "FAIL: cluster $name: nodes '$(echo ${state:-unreachable})', want all idle: $(echo $want)"
    return 1
  fi
  log "cluster $name up: node(s) $names idle, GPUs: $gpus (config $SLURM_CONF)"
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

# ---- cluster C: two nodes, nodea and nodeb ---------------------------------------------------
# c_compare JSON REF_JSON OUT REF_OUT: the two-node job against the one-host run of 4 ranks
# (binding, output bytes, report, transports); prints what differs, exit status 1 if anything
c_compare() {
  sh "$src/tests/py.sh" - "$@" <<'PY'
import json, sys
import h5py
rj, refj, out, refo = sys.argv[1:5]
r, ref = json.load(open(rj)), json.load(open(refj))
bad = []
got = [(b["rank"], b["host"], b["local_rank"], b["local_size"]) for b in r["binding"]]
want = [(0, "nodea", 0, 2), (1, "nodea", 1, 2), (2, "nodeb", 0, 2), (3, "nodeb", 1, 2)]
if got != want:
    bad.append(f"binding {got}, want {want}")
def data(p):
    d = {}
    with h5py.File(p, "r") as f:
        f.visititems(lambda k, o: d.__setitem__(k, o[()].tobytes()) if isinstance(o, h5py.Dataset) else None)
    return d
if data(out) != data(refo):
    bad.append("the --out file differs from the one-host run's")
per_run = ("times_ms", "options", "out", "binding", "exchange_step_times")
diff = sorted(k for k in set(r) | set(ref) if k not in per_run and r.get(k) != ref.get(k))
if diff:
    bad.append(f"the report differs in {diff}")
steps = [(s["transport"], s["bytes"]) for s in r["exchange_step_times"]]
ref_steps = [(s["transport"], s["bytes"]) for s in ref["exchange_step_times"]]
print("steps (transport, bytes moved) on two nodes:", steps, "one host:", ref_steps)
if [t for t, _ in steps] != ["mpi"] * len(ref_steps) or [b for _, b in steps] != [b for _, b in ref_steps]:
    bad.append("transports or bytes per step")
print("\n".join(bad) or "same as one host")
sys.exit(1 if bad else 0)
PY
}

two_node_cluster() {
  start_cluster c 0 2 || { check 1 "cluster C (two nodes) started"; return; }
  # 4 ranks on this machine's cores: waiting ranks yield them (mpirun does so by itself when
  # it sees more ranks than cores; srun does not)
  export OMPI_MCA_mpi_yield_when_idle=1
  local j=$work/job i t0 state took big=$work/job/c_big.h5 cout=$work/job/c_cancel.h5
  sh "$src/tests/mpirun.sh" -np 4 "$bin/gpuprim_mpi" "$input" --backend cpu --argsort --quiet \
    --json "$j/c_ref.json" --out "$j/c_ref.h5" >"$j/c_ref.txt" 2>&1
  check $? "the one-host run of 4 ranks"

  submit c_two --nodes=2 --ntasks-per-node=2 --gpus-per-task=0 \
    "--export=ALL,GPUPRIM_OPTS=--verbose --argsort --json $j/c.json --out $j/c.h5"
  check $(( job_rc == 0 ? 0 : 1 )) "sbatch --nodes=2 --ntasks-per-node=2: sbatch --wait returns 0 (got $job_rc)"
  grep -q "2 node(s), 4 task(s)" "$job_out"; check $? "the job had 2 nodes and 4 tasks"
  [ "$(grep -cE '^ +[0-3] +nodea +[01] ' "$job_out")" = 2 ] && [ "$(grep -cE '^ +[0-3] +nodeb +[01] ' "$job_out")" = 2 ]
  check $? "the --verbose binding table: two ranks on nodea, two on nodeb, node-local ranks 0 and 1"
  [ -f "$j/c.json" ] && c_compare "$j/c.json" "$j/c_ref.json" "$j/c.h5" "$j/c_ref.h5"
  check $? "binding in the JSON, the --out bytes, the report and the bytes per step equal one host's; every step mpi"

  submit c_shared --nodes=2 --ntasks-per-node=2 --gpus-per-task=0 \
    "--export=ALL,GPUPRIM_OPTS=--quiet --transport shared"
  check $(( job_rc == 7 ? 0 : 1 )) "--transport shared on two nodes: the job's exit code is 7 (got $job_rc)"
  grep -q "its partner rank 3 is on another node" "$job_out"; check $? "the job's output says rank 0's partner rank 3 is on another node"

  # scancel during the write: 2 Mi elements written through MPI-IO in pieces of 16 KiB, so
  # that the write lasts a while; once its temporary output file exists the ranks are held
  # there (SIGSTOP: this machine's timing varies too much to hit the write otherwise) and the
  # job is cancelled; slurmd sends SIGCONT, then SIGTERM
  sh "$src/tests/mpirun.sh" -np 1 "$bin/gpuprim_gen" "$big" --n 2097152 --force >/dev/null
  timeout 30 sbatch --time=00:05:00 --job-name=c_cancel --nodes=2 --ntasks-per-node=2 --gpus-per-task=0 \
    "--export=ALL,GPUPRIM_INPUT=$big,GPUPRIM_READ_PIECE_BYTES=16384,GPUPRIM_OPTS=--progress --io mpiio --out $cout" \
    "$src/jobs/gpuprim.sbatch" >"$j/c_cancel.sbatch.txt" 2>&1
  job_id=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' "$j/c_cancel.sbatch.txt")
  job_out=$j/gpuprim-$job_id.out
  local ranks="" held=0
  for i in $(seq 6000); do
    if ls "$j"/.gpuprim.*.tmp >/dev/null 2>&1; then
      ranks=$(pgrep -f "^$bin/gpuprim_mpi .*$cout" | tr '\n' ' ')
      [ -n "$ranks" ] && kill -STOP $ranks 2>/dev/null
      ls "$j"/.gpuprim.*.tmp >/dev/null 2>&1 && [ ! -e "$cout" ] && held=1
      break
    fi
    [ -e "$cout" ] && break
    sleep 0.01
  done
  log "job c_cancel (${job_id:-not submitted}): ranks ${ranks:-none} held in the write: $held"
  if [ "$held" = 1 ]; then
    t0=$(date +%s.%N)
    scancel "$job_id"
    for i in $(seq 300); do
      state=$(timeout 5 scontrol show job "$job_id" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2)
      [ "$state" != RUNNING ] && [ "$state" != COMPLETING ] && [ -z "$(timeout 5 squeue -h -j "$job_id" 2>/dev/null)" ] && break
      sleep 0.1
    done
    took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    log "job c_cancel ($job_id): scancel during the write; $state after $took s"
    echo "---- $job_out"; cat "$job_out"
    grep -q '\] write\.\.\.' "$job_out"; check $? "the cancelled job's progress had reached its write"
    check $([ "$state" = CANCELLED ] && echo 0 || echo 1) "scancel during the write: the job is CANCELLED (got ${state:-?})"
    check $(awk -v t="$took" 'BEGIN { exit !(t < 20) }'; echo $?) "the job ended $took s after scancel"
    sleep 1
    # .gpuprim.PID.tmp and anything named after it (MPI-IO's side files)
    [ ! -e "$cout" ] && ! ls "$j"/.gpuprim.* >/dev/null 2>&1
    check $? "no output and no temporary file left: $(cd "$j" && ls -a | grep -E 'c_cancel\.h5|\.gpuprim\.' | tr '\n' ' ')"
    ! pgrep -f "^$bin/gpuprim_mpi .*$cout" >/dev/null; check $? "no rank of the cancelled job left"
  else
    echo "---- $job_out"; cat "$job_out" 2>/dev/null
    [ -n "$ranks" ] && kill -CONT $ranks 2>/dev/null
    check 1 "the job c_cancel was held in its write (a temporary output file within 60 s, none finished)"
    [ -n "$job_id" ] && scancel "$job_id"
  fi
  stop_slurm
}

if [ "$nodes" = 2 ]; then
  two_node_cluster
  log "$fails failure(s)"
  [ "$fails" = 0 ]
  exit
fi

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

submit a_dry --gpus-per-task=0 --export=ALL,GPUPRIM_DRY_RUN=1
check $(( job_rc == 0 ? 0 : 1 )) "GPUPRIM_DRY_RUN=1 under sbatch: sbatch --wait returns 0 (got $job_rc)"
grep -qxF "srun --mpi=pmix $bin/gpuprim_mpi --verbose $input" "$job_out" && grep -q "nothing started" "$job_out" &&
  ! grep -q "gpuprim_mpi exit code\|sorted " "$job_out"
check $? "GPUPRIM_DRY_RUN=1 under sbatch: the srun line in the job's output, nothing run"

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

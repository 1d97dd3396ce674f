#!/bin/sh
# run_node.sh — gpuprim_mpi on one node (no batch system needed): one MPI rank per GPU.
#
# usage: jobs/run_node.sh [-n RANKS] [--dry-run] [--] [gpuprim_mpi options] FILE.h5
#        jobs/run_node.sh -h | --help | --usage
#
#   -n RANKS, --ranks RANKS  number of ranks, 1 or more (also NP=RANKS in the environment)
#   --dry-run                print the launch command instead of running it
#   -h, --help, --usage      print this text (gpuprim_mpi's own: jobs/run_node.sh -- --help)
# Everything else (from the first argument that is none of these, or after --) goes to
# gpuprim_mpi unchanged, e.g. jobs/run_node.sh data.h5 --verbose --json r.json
# With nothing for gpuprim_mpi, this text goes to stderr and the exit status is 2.
#
# Number of ranks, the first that applies:
#   1. -n / NP;
#   2. CUDA_VISIBLE_DEVICES set and not empty: one rank per entry;
#   3. nvidia-smi -L: one rank per line "GPU <i>: ..." (a GPU split into MIG instances counts
#      once, since a CUDA process uses one MIG instance);
#   4. no GPU found: one rank per CPU core (nproc), for the CPU backend.
# Each rank then takes device (node-local rank mod visible GPUs), see docs/cluster.md, "How
# GPUs are chosen".
#
# Launcher: $MPIRUN, else mpirun on PATH (Open MPI). Added only when needed:
#   --allow-run-as-root  when running as root;
#   --oversubscribe      when there are more ranks than slots (physical cores, or
#                        SLURM_NTASKS inside a Slurm allocation);
#   --bind-to none       for 1 or 2 ranks, which Open MPI would bind to one core each: a
#                        rank's threads that inflate compressed chunks then share the node's
#                        cores (more ranks are bound to their socket, which leaves them its
#                        cores).
# Program: $GPUPRIM_BIN, else build/gpuprim_mpi of this repository, else gpuprim_mpi on PATH.
# Exit status: gpuprim_mpi's (see gpuprim_mpi --help); 2 for a bad -n or no arguments.
set -eu

usage() { sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//'; }

np=${NP:-}
dry=0
while [ $# -gt 0 ]; do
  case $1 in
    -n|--ranks)
      [ $# -ge 2 ] || { echo "run_node.sh: $1 needs a value" >&2; exit 2; }
      np=$2; shift 2 ;;
    --dry-run) dry=1; shift ;;
    -h | --help | --usage) usage; exit 0 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
if [ $# -eq 0 ]; then
  usage >&2
  echo "run_node.sh: nothing to run: give gpuprim_mpi's arguments, at least an input file" >&2
  exit 2
fi

# GPUs: CUDA_VISIBLE_DEVICES entries, else nvidia-smi's GPU lines
gpus=0
how=""
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  gpus=$(printf '%s\n' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c '[^[:space:]]' || true)
  how="CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
elif command -v nvidia-smi >/dev/null 2>&1; then
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU [0-9]' || true)
  how="nvidia-smi -L"
fi

if [ -z "$np" ]; then
  if [ "$gpus" -gt 0 ]; then
    np=$gpus
    echo "run_node.sh: $np rank(s), one per GPU ($how)" >&2
  else
    np=$(nproc)
    echo "run_node.sh: no GPU found; $np rank(s), one per CPU core (CPU backend)" >&2
  fi
fi
case $np in
  '' | *[!0-9]*) echo "run_node.sh: bad number of ranks '$np' (a whole number, 1 or more)" >&2; exit 2 ;;
esac
if [ "$np" -eq 0 ]; then
  echo "run_node.sh: 0 ranks would start no process: give 1 or more, or leave -n and NP out for one rank per GPU (one per core without a GPU)" >&2
  exit 2
fi

# slots Open MPI gives without a hostfile: physical cores (or the Slurm allocation's tasks)
if [ -n "${SLURM_NTASKS:-}" ]; then
  slots=$SLURM_NTASKS
else
  slots=$(lscpu -p=Core,Socket 2>/dev/null | grep -v '^#' | sort -u | wc -l)
  [ "$slots" -gt 0 ] 2>/dev/null || slots=$(nproc)
fi

launcher=${MPIRUN:-mpirun}
command -v "$launcher" >/dev/null 2>&1 || { echo "run_node.sh: $launcher not found (apt-get install openmpi-bin)" >&2; exit 1; }
extra=""
[ "$(id -u)" = 0 ] && extra="$extra --allow-run-as-root"
[ "$np" -gt "$slots" ] && extra="$extra --oversubscribe"
[ "$np" -le 2 ] && extra="$extra --bind-to none"

bin=${GPUPRIM_BIN:-}
if [ -z "$bin" ]; then
  repo=$(cd "$(dirname "$0")/.." && pwd)
  if [ -x "$repo/build/gpuprim_mpi" ]; then bin=$repo/build/gpuprim_mpi
  else bin=$(command -v gpuprim_mpi || echo gpuprim_mpi); fi
fi

if [ "$dry" = 1 ]; then
  echo "$launcher$extra -np $np $bin $*"
  exit 0
fi
# a missing program: one line and exit 127 (the shell's "not found"), not mpirun's banner
if ! { [ -x "$bin" ] && [ ! -d "$bin" ]; } && ! command -v "$bin" >/dev/null 2>&1; then
  echo "run_node.sh: error: program $bin not found or not executable (set GPUPRIM_BIN, or build: ./jobs/build.sh build)" >&2
  exit 127
fi
# shellcheck disable=SC2086
exec "$launcher" $extra -np "$np" "$bin" "$@"

#!/bin/sh
# ooc_h200.sh [BUILD_DIR [WORK_DIR [PARTS]]] — issue 26's out-of-core benchmark set on one H200
# host, in one call: bench/ooc_bench.py (in device memory, out of core with each rank's device
# 4x too small, and the peers) on generated float32 files.
#
#   part a: 2^32 float32 (16 GiB), --out, at np 4 and np 1, with the peers h5py + numpy /
#           cupy / torch (where importable under $PYTHON)
#   part b: the same file at np 4 with --stable --argsort (the alloc phase: no pinned
#           positions any more), no peers
#   part c: 2^33 float32 (32 GiB) at np 4 without --out (the 64 GiB disk holds the input but
#           not a second copy; the 2^32 file is removed first), no peers
# PARTS: any of a, b, c (default abc); each part fits one 10-minute command.
# BUILD_DIR (default build_cuda) must hold gpuprim_mpi and gpuprim_gen built with CUDA;
# WORK_DIR (default /tmp/gp_ooc) holds the inputs, outputs and the JSON results
# (ooc_a.json, ooc_b.json, ooc_c.json). $PYTHON (default python3) runs the driver and the
# peers; $PEERS (default numpy,cupy,torch) names part a's peers (h5py + numpy's sort of 2^32
# takes minutes: PEERS=cupy,torch keeps part a inside one call).
#
# The launcher: $MPIRUN (default mpirun, with --allow-run-as-root as root), e.g.
# MPIRUN="sh tests/mpirun.sh" or a kit's mpirun. "--bind-to none" is added when it names no
# --bind-to: Open MPI binds each of 1-2 ranks to one core, which would put a rank's host
# threads (the out-of-core staging, merge and check) on that one core.
#
# Every run prints a "run:" line as it ends with its command, exit status and the wall time
# of the whole process (the launcher and its ranks; gpuprim_gen's too), and each part its own.
set -eu
cd "$(dirname "$0")/.."
b=${1:-build_cuda}
w=${2:-/tmp/gp_ooc}
parts=${3:-abc}
py=${PYTHON:-python3}
root=""
[ "$(id -u)" = 0 ] && root=" --allow-run-as-root"
mpi=${MPIRUN:-"mpirun$root"}
case " $mpi " in *" --bind-to "*|*" --bind-to="*) ;; *) mpi="$mpi --bind-to none" ;; esac
for x in gpuprim_mpi gpuprim_gen; do
  [ -x "$b/$x" ] || { echo "ooc_h200.sh: $b/$x: not found (BUILD_DIR, the first argument)" >&2; exit 2; }
done
mkdir -p "$w"
f32="$w/f32_2p32.h5"
f33="$w/f32_2p33.h5"
echo "ooc_h200.sh: build $b, work $w, parts $parts, launcher: $mpi"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

gen() { # gen FILE N
  [ -f "$1" ] && return 0
  t0=$(now)
  rc=0
  $mpi -np 4 "$b/gpuprim_gen" "$1" --n "$2" --dist uniform --seed 26 || rc=$?
  echo "run: $mpi -np 4 $b/gpuprim_gen $1 --n $2: exit $rc, process wall $(since "$t0") s"
  return $rc
}

bench() { # bench PART ARGS... : ooc_bench.py with the launcher, timed whole
  part=$1
  shift
  t0=$(now)
  rc=0
  "$py" bench/ooc_bench.py "$@" --bin "$b" --python "$py" --mpirun "$mpi" --work "$w" \
    --json "$w/ooc_$part.json" || rc=$?
  echo "part $part: exit $rc, $(since "$t0") s"
  return $rc
}

case $parts in *a*|*b*) rm -f "$f33"; gen "$f32" 2^32;; esac
case $parts in *a*) bench a "$f32" --np 4,1 --peers "${PEERS:-numpy,cupy,torch}";; esac
case $parts in *b*) bench b "$f32" --np 4 --extra "--stable --argsort" --peers none;; esac
case $parts in *c*)
  rm -f "$f32"
  gen "$f33" 2^33
  bench c "$f33" --np 4 --no-out --peers none;;
esac

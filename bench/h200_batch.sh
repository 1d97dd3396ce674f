#!/bin/bash
# h200_batch.sh BUILD STEP... — one call's batch on a lent GPU machine that has no MPI or
# HDF5 of its own: the runtime kit and the binaries travel as xz tarballs (they are built on
# a Debian 12 machine; ../shared/devicekit/README.md), and every step writes its log under
# $OUT. A step that fails does not stop the next one; the last lines printed are a table of
# the steps' exit codes and times.
#
# Before the call, on the build machine (from the repository's root; .devcarry is ignored):
#   tar -cJf .devcarry/kit.tar.xz .devicekit
#   tar -cJf .devcarry/build.tar.xz BUILD/gpuprim_mpi BUILD/gpuprim_gen ... (stripped)
# and carry ".devcarry". The tree lands at the same absolute path there, so ctest's files
# (BUILD/**/CTestTestfile.cmake) name the binaries where they are unpacked.
#
# Steps:
#   smi         nvidia-smi, the CPU and memory
#   gpu:REGEX   ctest -L gpu -R REGEX (-j 6, 300 s per test) -> ctest_REGEX.log
#   gpuall      ctest -L gpu (every gpu test but the big ones) -> ctest_gpu.log
#   big         ctest -R 'gpu_big_counts' -> ctest_big.log
#   bench:ARGS  BUILD/bench/gpuprim_bench ARGS (commas in ARGS become blanks) -> bench_new.txt,
#               and the same with .devcarry/gpuprim_bench_ref (an older build) -> bench_ref.txt
#   startup     bench/startup.sh BUILD 3 with NPS="1 4" and VARIANTS (default "now before")
#   io:ARGS     python3 bench/io_bench.py --bin BUILD ARGS (commas become blanks) -> io.log
#   multinode   tests/multinode_diag.sh --backend cuda (bounded) -> multinode_diag.log
#   sh:CMD      any command (commas become blanks) -> sh_N.log
set -u
cd "$(dirname "$0")/.."
B=${1:?usage: h200_batch.sh BUILD STEP...}
shift
OUT=${OUT:-/tmp/h200_out}
mkdir -p "$OUT"
for t in .devcarry/kit.tar.xz .devcarry/build.tar.xz; do
  [ -f "$t" ] && tar -xJf "$t"
done
[ -f .devcarry/gpuprim_bench_ref.xz ] && xz -dkf .devcarry/gpuprim_bench_ref.xz &&
  chmod +x .devcarry/gpuprim_bench_ref
# shellcheck disable=SC1091
. .devicekit/env.sh .devicekit || { echo "h200_batch.sh: no devicekit"; exit 1; }
export PYTHONUNBUFFERED=1
summary=""
n=0
run() { # NAME LOG CMD...
  local name=$1 log=$2
  shift 2
  local t0 rc
  t0=$(date +%s.%N)
  "$@" >"$OUT/$log" 2>&1
  rc=$?
  summary="$summary$(printf '%-40.40s rc %-4s %8.1f s' "$name" "$rc" "$(echo "$(date +%s.%N) - $t0" | bc)")\n"
  tail -n 3 "$OUT/$log" | sed "s/^/  [$name] /"
}
for step in "$@"; do
  n=$((n + 1))
  arg=${step#*:}
  args=$(echo "$arg" | tr ',' ' ')
  case $step in
  smi) run smi smi.txt sh -c 'nvidia-smi; nproc; free -g; df -h /tmp .' ;;
  gpu:*) run "$step" "ctest_$n.log" ctest --test-dir "$B" -L gpu -R "$arg" -j 6 --timeout 300 --output-on-failure ;;
  gpuall) run gpuall ctest_gpu.log ctest --test-dir "$B" -L gpu -E big_counts -j 6 --timeout 400 --output-on-failure ;;
  big) run big ctest_big.log ctest --test-dir "$B" -R gpu_big_counts -j 2 --timeout 400 --output-on-failure ;;
  bench:*)
    # shellcheck disable=SC2086
    run "bench new" "bench_new_$n.txt" "$B/bench/gpuprim_bench" $args --json "$OUT/bench_new_$n.json"
    if [ -x .devcarry/gpuprim_bench_ref ]; then
      # shellcheck disable=SC2086
      run "bench ref" "bench_ref_$n.txt" .devcarry/gpuprim_bench_ref $args --json "$OUT/bench_ref_$n.json"
    fi ;;
  startup) run startup startup.txt env NPS="1 4" VARIANTS="${VARIANTS:-now before}" sh bench/startup.sh "$B" 3 /tmp/gp_startup ;;
  io:*)
    # shellcheck disable=SC2086
    run "$step" "io_$n.log" python3 bench/io_bench.py --bin "$B" $args ;;
  multinode) run multinode multinode_diag.log timeout 280 tests/multinode_diag.sh --backend cuda ;;
  sh:*) run "$step" "sh_$n.log" sh -c "$args" ;;
  *) echo "h200_batch.sh: unknown step $step" ;;
  esac
done
printf '\nstep                                     exit     time\n'
printf "$summary"

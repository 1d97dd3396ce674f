#!/bin/bash
# On the device: unpack the kit and the build, then run the steps named in $STEPS.
set -u
cd "$(dirname "$0")/.."
R=$(pwd)
t0=$(date +%s)
[ -d .devicekit ] || tar -xJf .devcarry/kit.tar.xz
[ -d build_dev ] || tar -xJf .devcarry/build_dev.tar.xz
source .devicekit/env.sh
export PYTHONUNBUFFERED=1
log() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv > $OUT/smi.txt 2>&1
cat $OUT/smi.txt
B=$R/build_dev
for s in ${STEPS:-tests}; do
  case $s in
  tests)
    log "ctest -L gpu ${CTEST_ARGS:-}"
    timeout ${TTIME:-520} ctest --test-dir $B -L gpu ${CTEST_ARGS:--E big} -j ${J:-6} --output-on-failure --timeout ${TTIME:-520} > $OUT/ctest_gpu.log 2>&1
    grep -E "Test +#|tests passed|FAILED|Failed" $OUT/ctest_gpu.log | tail -40 ;;
  bigcounts)
    log "big counts"
    ctest --test-dir $B -R gpu_big_counts -j 2 --output-on-failure --timeout 900 > $OUT/ctest_big.log 2>&1
    grep -E "Test +#|tests passed" $OUT/ctest_big.log ;;
  benchint)
    log "bench reduce"
    $B/bench/gpuprim_bench --ops reduce --sizes 2^24,2^28 --reps 30 --json $OUT/bench_reduce.json > $OUT/bench_reduce.log 2>&1
    tail -45 $OUT/bench_reduce.log ;;
  exchange)
    log "exchange bench"
    MPIRUN="mpirun" ROUNDS=${ROUNDS:-2} timeout 200 sh bench/exchange.sh $B cuda 4 1073741824 /tmp/xch > $OUT/exchange.log 2>&1
    cat $OUT/exchange.log ;;
  iobench)
    log "io bench"
    timeout ${IOTIME:-240} python3 bench/io_bench.py --bin $B --mpirun "mpirun" --n 2^30 --work /tmp/iob ${IOB_ARGS:-} --json $OUT/io_h200.json > $OUT/io_h200.log 2>&1
    tail -40 $OUT/io_h200.log ;;
  sanitize)
    log "compute-sanitizer"
    for t in memcheck; do
      compute-sanitizer --tool $t --error-exitcode 9 $B/tests/test_gpu_ext --quick > $OUT/san_$t.log 2>&1; echo "$t gpu_ext rc=$?"
    done ;;
  esac
done
log "end"

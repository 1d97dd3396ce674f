#!/bin/bash
# On the device: unpack the kit and the build, then run the steps named in $STEPS.
set -u
cd "$(dirname "$0")/.."
R=$(pwd)
t0=$(date +%s)
[ -d .devicekit ] || tar -xJf .devcarry/kit.tar.xz
rm -rf build_dev; tar -xJf .devcarry/build_dev.tar.xz
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
  profile)
    log "profile: phases under module-loading modes, and write methods"
    IN=/tmp/iob/input.h5
    mkdir -p /tmp/iob
    [ -f $IN ] || mpirun -np 8 $B/gpuprim_gen $IN --n 2^30 --force > /dev/null
    for rep in 1 2; do for e in LAZY EAGER; do for np in 1 4; do
      a=$(date +%s.%N)
      CUDA_MODULE_LOADING=$e mpirun -np $np $B/gpuprim_mpi $IN --out /tmp/prof_out.h5 --force -q --json $OUT/prof_${e}_np${np}_$rep.json
      b=$(date +%s.%N)
      python3 - $OUT/prof_${e}_np${np}_$rep.json "$e np$np rep$rep" $a $b <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
def find(o,k):
    if isinstance(o,dict):
        if k in o: return o[k]
        for v in o.values():
            r=find(v,k)
            if r is not None: return r
    return None
ph=find(d,'times_ms') or {}
xs=find(d,'exchange_step_times') or []
print(sys.argv[2], 'wall=%.3f'%(float(sys.argv[4])-float(sys.argv[3])), ' '.join('%s=%.1f'%(k.replace(' ','_'),v) for k,v in ph.items() if isinstance(v,(int,float))), 'xsteps=', ' '.join('%.1f+%.1f'%(x['transfer_ms'],x['merge_ms']) for x in xs))
PY
    done; done; done
    rm -f /tmp/prof_out.h5
    for np in 1 4; do for m in pwrite falloc direct mmap; do .devcarry/wexp /tmp/wx 4294967296 $np $m 2>/dev/null; done; done
    for m in pwrite falloc; do .devcarry/wexp /tmp/wx 4294967296 4 $m 4194304 2>/dev/null; done ;;
  profile2)
    log "profile2: piece sizes (eager loading is the program's default now), start-up cost"
    IN=/tmp/iob/input.h5
    mkdir -p /tmp/iob
    [ -f $IN ] || mpirun -np 8 $B/gpuprim_gen $IN --n 2^30 --force > /dev/null
    for rep in 1 2; do for pc in 4194304 8388608 16777216 33554432 67108864; do for np in 4; do
      e=piece$pc
      a=$(date +%s.%N)
      GPUPRIM_READ_PIECE_BYTES=$pc mpirun -np $np $B/gpuprim_mpi $IN --out /tmp/prof_out.h5 --force -q --json $OUT/prof_${e}_np${np}_$rep.json
      b=$(date +%s.%N)
      python3 - $OUT/prof_${e}_np${np}_$rep.json "$e np$np rep$rep" $a $b <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
def find(o,k):
    if isinstance(o,dict):
        if k in o: return o[k]
        for v in o.values():
            r=find(v,k)
            if r is not None: return r
    return None
ph=find(d,'times_ms') or {}
xs=find(d,'exchange_step_times') or []
print(sys.argv[2], 'wall=%.3f'%(float(sys.argv[4])-float(sys.argv[3])), ' '.join('%s=%.1f'%(k.replace(' ','_'),v) for k,v in ph.items() if isinstance(v,(int,float))), 'xsteps=', ' '.join('%.1f+%.1f'%(x['transfer_ms'],x['merge_ms']) for x in xs))
PY
    done; done; done
    rm -f /tmp/prof_out.h5
    for rep in 1 2 3; do for e in LAZY EAGER; do
      a=$(date +%s.%N); CUDA_MODULE_LOADING=$e mpirun -np 4 $B/gpuprim_mpi --function x2 --n 1000 -q; b=$(date +%s.%N)
      python3 -c "print('startup $e np4 wall=%.3f'%($b-$a))"
    done; done ;;
  sanitize)
    log "compute-sanitizer"
    for t in memcheck; do
      compute-sanitizer --tool $t --error-exitcode 9 $B/tests/test_gpu_pairs_sums --quick > $OUT/san_$t.log 2>&1; echo "$t gpu_pairs_sums rc=$?"
    done ;;
  esac
done
log "end"

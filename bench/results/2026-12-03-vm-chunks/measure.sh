#!/bin/sh
# measure.sh FILE REPS: the read phase of gpuprim_mpi --no-sort (CPU backend, P=1), H5Dread path
# (GPUPRIM_DIRECT_CHUNKS=0) and the direct chunk path, interleaved
f=$1; reps=${2:-5}
for i in $(seq $reps); do
  for d in 0 1; do
    GPUPRIM_DIRECT_CHUNKS=$d sh ./tests/mpirun.sh --bind-to none -np 1 ./build/gpuprim_mpi $f --no-sort -q --no-progress --backend cpu --json m.json >/dev/null 2>&1 || echo FAIL
    python3 -c "import json,os;d=json.load(open('m.json'));print('direct=$d read_s=%.3f load=%.1f' % (d['times_ms']['read']/1e3, os.getloadavg()[0]))"
  done
done

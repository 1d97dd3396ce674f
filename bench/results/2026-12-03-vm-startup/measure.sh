#!/bin/sh
# interleaved runs: base binary (main at f293806), the branch's, the branch's with GPUPRIM_FAST_MPI_INIT=0;
# function job, CPU backend; wall of the whole mpirun (date +%s%N), the report's startup row
cd /work/wt/startup
for np in 1 2; do
  for i in 1 2 3 4 5; do
    for which in base new nopml; do
      bin=build/gpuprim_mpi; envs=""
      [ $which = base ] && bin=/tmp/startup_base/gpuprim_mpi
      [ $which = nopml ] && envs="GPUPRIM_FAST_MPI_INIT=0"
      t0=$(date +%s%N)
      env $envs GPUPRIM_TRACE_STARTUP=1 sh tests/mpirun.sh -np $np $bin --function sin --n 1000 --backend cpu --json /tmp/sm.json -q 2>/tmp/sm_err.txt
      t1=$(date +%s%N)
      st=$(python3 -c "import json;print(json.load(open('/tmp/sm.json'))['times_ms'].get('startup','-'))")
      ex=$(grep -o ' exit=[0-9.]*' /tmp/sm_err.txt | cut -d= -f2 | sort -n | tail -1)
      echo "np=$np which=$which wall_ms=$(( (t1-t0)/1000000 )) startup_ms=$st exit_ms=${ex:--}"
    done
  done
done

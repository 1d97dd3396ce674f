#!/bin/sh
# usage: ab2.sh rounds "label:ENV=..:ARGS" ...
R=$1; shift
for r in $(seq $R); do
  for spec in "$@"; do
    lab=${spec%%:*}; rest=${spec#*:}; envs=${rest%%:*}; args=${rest#*:}
    sync; sleep 2; env $envs sh /work/main/tests/mpirun.sh -np 2 /work/main/build/gpuprim_mpi /tmp/x1g.h5 --out /tmp/o1g.h5 --force -q --json /tmp/j.json $args 2>/dev/null
    python3 -c "
import json,sys;d=json.load(open('/tmp/j.json'));t=d['times_ms']
print('%-8s'%sys.argv[1], ' '.join('%s=%.0f'%(k.split()[-1][:6],v) for k,v in t.items() if v>1), 'ok=%s'%d.get('sorted'))" "$lab"
  done
done

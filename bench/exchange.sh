#!/bin/sh
# exchange.sh [BUILD] [BACKEND] [NP] [N] [WORK] — the rank exchange of gpuprim_mpi: its time
# against the local sort's and the bytes it moves, for each transport, on random, sorted and
# reversed float32 input.
#   BUILD    the build folder with gpuprim_mpi and gpuprim_gen (default build)
#   BACKEND  cpu or cuda (default cuda)
#   NP       ranks (default 2); they share the node (and, with fewer GPUs, the GPUs)
#   N        elements in all (default 2^28 = 1 GiB of float32)
#   WORK     folder for the input files and the JSON reports (default /tmp/gpuprim_exchange)
#   MPIRUN   the launcher command (default: tests/mpirun.sh, which oversubscribes)
#   TRANSPORTS  the --transport values to run (default "shared mpi")
#   ROUNDS   runs of each (default 1)
# Per run one line: the local sort and rank exchange phase times (ms, max over ranks), their
# ratio, the bytes moved between ranks and their share of what the whole shards make (what
# the exchange sent before it moved only the crossing elements), and per step the transport
# with its transfer and merge ms. The inputs come from gpuprim_gen (--dist uniform / sorted /
# reversed, seed 1). Exit 0 when every run succeeded.
set -u
here=$(cd "$(dirname "$0")" && pwd)
B=${1:-build} BE=${2:-cuda} NP=${3:-2} N=${4:-268435456} W=${5:-/tmp/gpuprim_exchange}
MPIRUN=${MPIRUN:-sh $here/../tests/mpirun.sh}
mkdir -p "$W"
fail=0
for dist in uniform sorted reversed; do
  f=$W/$dist.h5
  [ -f "$f" ] || $MPIRUN -np 1 "$B/gpuprim_gen" "$f" --n "$N" --dist "$dist" --force | tail -n 1
done
for dist in uniform sorted reversed; do
  for r in $(seq 1 "${ROUNDS:-1}"); do
    for tr in ${TRANSPORTS:-shared mpi}; do
      j=$W/$dist.$tr.$r.json
      if ! $MPIRUN -np "$NP" "$B/gpuprim_mpi" "$W/$dist.h5" --backend "$BE" --transport "$tr" \
           --quiet --json "$j" >"$W/run.log" 2>&1; then
        echo "$dist $tr: failed:"; tail -n 5 "$W/run.log"; fail=1; continue
      fi
      python3 - "$j" "$dist" "$tr" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["times_ms"]
# report version 2 keys (local_sort), or version 1's (local sort) in older reports
s, x = t.get("local_sort", t.get("local sort")), t.get("rank_exchange", t.get("rank exchange"))
steps = " ".join(f"{z['transport']}:{z['transfer_ms']:.1f}+{z['merge_ms']:.1f}"
                 for z in r["exchange_step_times"])
whole = r["exchange_bytes_whole"]
print(f"{sys.argv[2]:8} {sys.argv[3]:6} P={r['ranks']} local sort {s:9.1f} ms  exchange {x:9.1f} ms"
      f"  ratio {x / s if s else 0:6.3f}  moved {r['exchange_bytes'] / 2**20:8.1f} MiB"
      f" ({100 * r['exchange_bytes'] / whole if whole else 0:5.1f} % of {whole / 2**20:.1f})"
      f"  steps (transfer+merge ms) {steps}")
PY
    done
  done
done
exit $fail

#!/bin/bash
# scaling.sh [BUILD] [OUTDIR] [WORKDIR] — strong and weak scaling of gpuprim_mpi on the GPUs of
# one node, one rank per GPU (ranks bind to node-local rank mod visible GPUs).
#   strong: one file of 2^30 float32 and one of 2^29 float64, P = 1, 2, 4, 8 (up to the GPUs);
#   weak:   2^28 float32 per GPU.
# Each run: --verbose (binding table, per-step exchange times) and --json into OUTDIR; while
# they run, nvidia-smi samples which process uses which GPU (OUTDIR/smi.csv). Also records
# the link bandwidths (linkbw: peer copies vs host-staged) and whether Open MPI is CUDA-aware.
# Page cache: the kernel's caches are dropped before each run where permitted (else the read
# phase measures the page cache; the log says which).
set -u
B=${1:-build}; OUT=${2:-.}; W=${3:-/tmp/gpuprim_scaling}
LINKBW=${LINKBW:-$(dirname "$0")/../.devbin/linkbw}
mkdir -p "$W" "$OUT"
NG=$(nvidia-smi -L | wc -l)
echo "scaling: $NG GPUs; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
ompi_info --parsable --all 2>/dev/null | grep -i "mpi_built_with_cuda_support:value" | tee "$OUT/cuda_aware.txt"
[ -x "$LINKBW" ] && "$LINKBW" 512 | tee "$OUT/linkbw.txt"
gen() { mpirun -np "$NG" "$B/gpuprim_gen" "$W/$1.h5" --n "$2" --dtype "$3" --force | tail -1; }
drop() { sync; if echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; then echo "caches dropped"; else echo "page cache NOT dropped"; fi; }
gen strong_f32 2^30 f32
gen strong_f64 2^29 f64
nvidia-smi --query-compute-apps=pid,gpu_bus_id,used_memory --format=csv,noheader -lms 500 > "$OUT/smi.csv" 2>&1 &
SMI=$!
run() { # name P file
  drop
  mpirun -np "$2" "$B/gpuprim_mpi" "$W/$3.h5" --out "$W/sorted.h5" --force --verbose \
      --json "$OUT/$1.json" > "$OUT/$1.txt" 2>&1
  echo "== $1 (P=$2, $3): exit $?"; grep -E "elements|sorted|read |upload|reduce|local sort|rank exchange|verify|write|total" "$OUT/$1.txt"
  rm -f "$W/sorted.h5"
}
for P in 1 2 4 8; do
  [ "$P" -le "$NG" ] || break
  run strong_f32_P$P "$P" strong_f32
  run strong_f64_P$P "$P" strong_f64
done
rm -f "$W"/strong_*.h5
for P in 1 2 4 8; do
  [ "$P" -le "$NG" ] || break
  gen weak_P$P "$((P * 268435456))" f32
  run weak_f32_P$P "$P" weak_P$P
  rm -f "$W/weak_P$P.h5"
done
kill $SMI 2>/dev/null
echo "GPUs seen in use (pid, bus id, memory):"; sort -u "$OUT/smi.csv" | head -40

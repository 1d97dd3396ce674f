#!/bin/sh
# run_node_test.sh BUILD_DIR WORK_DIR — jobs/run_node.sh: the rank count from
# CUDA_VISIBLE_DEVICES, from nvidia-smi -L (a stand-in on PATH) and the one-per-core
# fallback; -n; the launcher flags; arguments passed through; then real runs on a file.
set -u
bin=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
rn="sh $here/../jobs/run_node.sh"
rm -rf "$work"
mkdir -p "$work/fake"
fails=0
check() { if [ "$1" = 0 ]; then echo "ok   $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi; }
has() { case $1 in *"$2"*) return 0 ;; *) return 1 ;; esac; }

# a stand-in nvidia-smi: 4 GPUs, one of them split into MIG instances
cat >"$work/fake/nvidia-smi" <<'EOS'
#!/bin/sh
[ "$1" = "-L" ] || exit 1
echo "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)"
echo "GPU 1: NVIDIA H200 (UUID: GPU-11111111-1111-1111-1111-111111111111)"
echo "  MIG 3g.71gb     Device  0: (UUID: MIG-22222222-2222-2222-2222-222222222222)"
echo "  MIG 3g.71gb     Device  1: (UUID: MIG-33333333-3333-3333-3333-333333333333)"
echo "GPU 2: NVIDIA H200 (UUID: GPU-44444444-4444-4444-4444-444444444444)"
echo "GPU 3: NVIDIA H200 (UUID: GPU-55555555-5555-5555-5555-555555555555)"
EOS
cat >"$work/fake/nvidia-smi-none" <<'EOS'
#!/bin/sh
echo "No devices were found"
exit 6
EOS
chmod +x "$work/fake/nvidia-smi" "$work/fake/nvidia-smi-none"
mkdir -p "$work/none" && cp "$work/fake/nvidia-smi-none" "$work/none/nvidia-smi"
export GPUPRIM_BIN="$bin/gpuprim_mpi"
unset NP
cores=$(lscpu -p=Core,Socket 2>/dev/null | grep -v '^#' | sort -u | wc -l)
[ "$cores" -gt 0 ] || cores=$(nproc)

out=$(CUDA_VISIBLE_DEVICES=0,1,2 $rn --dry-run data.h5 --verbose 2>/dev/null)
has "$out" " -np 3 $bin/gpuprim_mpi data.h5 --verbose"; check $? "CUDA_VISIBLE_DEVICES=0,1,2: 3 ranks, arguments passed on ($out)"
out=$(env -u CUDA_VISIBLE_DEVICES PATH="$work/fake:$PATH" $rn --dry-run x.h5 2>/dev/null)
has "$out" " -np 4 "; check $? "nvidia-smi -L with 4 GPUs (one with MIG): 4 ranks ($out)"
out=$(CUDA_VISIBLE_DEVICES= PATH="$work/none:$PATH" $rn --dry-run x.h5 2>&1)
has "$out" " -np $(nproc) " && has "$out" "one per CPU core"; check $? "no GPU: one rank per core ($out)"
out=$(env -u CUDA_VISIBLE_DEVICES PATH="$work/none:$PATH" $rn --dry-run x.h5 2>/dev/null)
has "$out" " -np $(nproc) "; check $? "nvidia-smi finds nothing: one rank per core ($out)"
n=$((cores + 3))
out=$(CUDA_VISIBLE_DEVICES=0 $rn -n "$n" --dry-run -- --json r.json x.h5 2>/dev/null)
has "$out" " -np $n " && has "$out" "--oversubscribe" && has "$out" "gpuprim_mpi --json r.json x.h5"
check $? "-n $n > $cores cores: --oversubscribe; -- ends run_node.sh's options ($out)"
out=$(NP=1 $rn --dry-run x.h5 2>/dev/null)
has "$out" " -np 1 " && ! has "$out" "--oversubscribe"; check $? "NP=1: 1 rank, no --oversubscribe ($out)"
if [ "$(id -u)" = 0 ]; then
  has "$out" "--allow-run-as-root"; check $? "as root: --allow-run-as-root"
else
  ! has "$out" "--allow-run-as-root"; check $? "not root: no --allow-run-as-root"
fi
$rn -n 0 x.h5 >/dev/null 2>&1; check $(( $? == 2 ? 0 : 1 )) "-n 0: exit 2"
$rn -n two x.h5 >/dev/null 2>&1; check $(( $? == 2 ? 0 : 1 )) "-n two: exit 2"
out=$(GPUPRIM_BIN="$work/nonexist" $rn -n 1 x.h5 2>&1); rc=$?
[ "$rc" = 127 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && has "$out" "not found or not executable"
check $? "GPUPRIM_BIN missing: one line, exit 127 ($rc: $out)"

# real runs (MPI settings as tests/mpirun.sh uses them in containers)
export OMPI_MCA_btl_vader_single_copy_mechanism=none
sh "$here/mpirun.sh" -np 1 "$bin/gpuprim_gen" "$work/in.h5" --n 30000 --force >/dev/null
out=$(CUDA_VISIBLE_DEVICES=0,1 PATH="$work/none:$PATH" $rn "$work/in.h5" --backend cpu 2>&1)
rc=$?
has "$out" "2 ranks, backend cpu" && has "$out" "sorted         yes, verified"
check $(( rc == 0 && $? == 0 ? 0 : 1 )) "real run, one rank per CUDA_VISIBLE_DEVICES entry (exit $rc)"
$rn -n 1 "$work/missing.h5" >/dev/null 2>&1
check $(( $? == 3 ? 0 : 1 )) "gpuprim_mpi's exit code comes back (3: no such file)"

echo "$fails failure(s)"
[ "$fails" = 0 ]

#!/bin/sh
# run_node_test.sh BUILD_DIR WORK_DIR — jobs/run_node.sh: the rank count from
# CUDA_VISIBLE_DEVICES, from nvidia-smi -L (a stand-in on PATH) and the one-per-core
# fallback; -n; the launcher flags; arguments passed through; its usage; then real runs on a
# file. And jobs/gpuprim.sbatch without Slurm: the dry run (GPUPRIM_DRY_RUN=1) and the
# refusal to run outside a job.
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
out=$($rn -n 0 x.h5 2>&1); rc=$?
[ "$rc" = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] && has "$out" "0 ranks would start no process"
check $? "-n 0: exit 2, one line saying why ($rc: $out)"
out=$(NP=0 $rn x.h5 2>&1); rc=$?
[ "$rc" = 2 ] && has "$out" "0 ranks would start no process"; check $? "NP=0: exit 2, says why ($rc: $out)"
out=$($rn -n two x.h5 2>&1); rc=$?
[ "$rc" = 2 ] && has "$out" "bad number of ranks 'two'"; check $? "-n two: exit 2 ($rc: $out)"

# its own usage: with no arguments (stderr, exit 2), with -h, --help, --usage (stdout, exit 0);
# never gpuprim_mpi's help, never a launch; gpuprim_mpi's help after --
$rn >"$work/noargs.out" 2>"$work/noargs.err"; rc=$?
[ "$rc" = 2 ] && [ ! -s "$work/noargs.out" ] && grep -q "^usage: jobs/run_node.sh" "$work/noargs.err" &&
  grep -q "nothing to run" "$work/noargs.err" && ! grep -q -- "--function" "$work/noargs.err"
check $? "no arguments: its usage on stderr, exit 2, nothing started ($rc)"
for h in -h --help --usage; do
  out=$($rn $h 2>&1); rc=$?
  [ "$rc" = 0 ] && has "$out" "usage: jobs/run_node.sh" && has "$out" "-n RANKS" && ! has "$out" "--function"
  check $? "$h: its own usage, exit 0 ($rc)"
done
out=$($rn -n 2 2>&1); rc=$?
[ "$rc" = 2 ] && has "$out" "nothing to run"; check $? "-n 2 and nothing for gpuprim_mpi: usage, exit 2 ($rc)"
out=$(CUDA_VISIBLE_DEVICES=0 $rn --dry-run -- --help 2>/dev/null)
has "$out" " -np 1 $bin/gpuprim_mpi --help"; check $? "-- --help goes to gpuprim_mpi ($out)"
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

# jobs/gpuprim.sbatch without Slurm: GPUPRIM_DRY_RUN=1 prints the srun line, exit 0
sb="$here/../jobs/gpuprim.sbatch"
out=$(cd "$work" && env -u SLURM_JOB_ID GPUPRIM_DRY_RUN=1 bash "$sb" --json "r 1.json" 2>&1); rc=$?
[ "$rc" = 0 ] && printf '%s\n' "$out" | grep -qxF "srun --mpi=pmix $bin/gpuprim_mpi --verbose --json r\\ 1.json data.h5" &&
  has "$out" "nothing started" && has "$out" "the input data.h5 does not exist" && has "$out" "--ntasks-per-node=4"
check $? "gpuprim.sbatch GPUPRIM_DRY_RUN=1: the srun line (arguments quoted), the #SBATCH defaults, the missing input, exit 0 ($rc: $out)"
out=$(cd "$work" && env -u SLURM_JOB_ID GPUPRIM_DRY_RUN=1 GPUPRIM_INPUT="$work/in.h5" GPUPRIM_OPTS="--quiet --io mpiio" \
  GPUPRIM_SRUN_MPI=pmi2 bash "$sb" 2>&1); rc=$?
[ "$rc" = 0 ] && printf '%s\n' "$out" | grep -qxF "srun --mpi=pmi2 $bin/gpuprim_mpi --quiet --io mpiio $work/in.h5" &&
  ! has "$out" "does not exist"
check $? "gpuprim.sbatch dry run: GPUPRIM_INPUT, GPUPRIM_OPTS and GPUPRIM_SRUN_MPI in the line ($rc: $out)"
out=$(cd "$work" && env -u SLURM_JOB_ID bash "$sb" 2>&1); rc=$?
[ "$rc" = 2 ] && has "$out" "not inside a Slurm job" && has "$out" "GPUPRIM_DRY_RUN=1"
check $? "gpuprim.sbatch outside Slurm: exit 2, says to submit it or dry-run it ($rc: $out)"
out=$(cd "$work" && env -u SLURM_JOB_ID bash "$sb" --help 2>&1); rc=$?
[ "$rc" = 0 ] && has "$out" "GPUPRIM_INPUT" && has "$out" "sbatch jobs/gpuprim.sbatch" && ! has "$out" "#SBATCH --"
check $? "gpuprim.sbatch --help outside Slurm: its usage (the header comment), exit 0 ($rc)"
for s in build.sh install_deps.sh quickstart.sh; do
  out=$(sh "$here/../jobs/$s" --help 2>&1); rc=$?
  [ "$rc" = 0 ] && has "$out" "$s" && ! has "$out" "set -eu"
  check $? "jobs/$s --help: its usage, exit 0, nothing run ($rc: $out)"
done

echo "$fails failure(s)"
[ "$fails" = 0 ]

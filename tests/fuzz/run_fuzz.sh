#!/bin/sh
# run_fuzz.sh — builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a
# bounded time.
#
# usage: tests/fuzz/run_fuzz.sh [WORKDIR]          (default: build/fuzz)
#   FUZZ_SECONDS   seconds per target (default 60)
#   FUZZ_TARGETS   which targets (default "cli h5select"; also "h5bytes", the byte-level
#                  target on mutated HDF5 files: not in CI, see fuzz_h5bytes.c)
#   FUZZ_CC        the compiler (default clang)
#   FUZZ_ARGS      more libFuzzer options, e.g. "-jobs=4 -workers=4"
#
# WORKDIR holds the build (separate from the main gcc build), the corpus entries found now
# (WORKDIR/corpus_*; the committed seeds in tests/fuzz/corpus_* are only read) and the
# reproducers of crashes (WORKDIR/artifacts). Exit 0 when no target crashed,
# 1 on a crash, leak, timeout (20 s), invariant failure or an input that takes over 10 s
# when run again alone (the reproducer's path and command are printed), 77 when clang or
# libFuzzer is missing (with the reason).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:-$root/build/fuzz}
secs=${FUZZ_SECONDS:-60}
timeout=20 # seconds: one input running longer is a failure (libFuzzer's timeout- file)
slow=10    # seconds: one input running longer is reported, and fails if it is slow alone too
targets=${FUZZ_TARGETS:-cli h5select}
cc=${FUZZ_CC:-clang}

skip() { echo "run_fuzz.sh: SKIP: $*"; exit 77; }

command -v "$cc" >/dev/null 2>&1 || skip "no $cc on PATH (apt-get install clang libclang-rt-dev)"
mkdir -p "$work/obj" "$work/artifacts" "$work/corpus_cli" "$work/corpus_h5" "$work/corpus_h5bytes" ||
  exit 1

# libFuzzer and the sanitizers link?
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
  >"$work/obj/probe.c"
"$cc" -fsanitize=fuzzer,address,undefined "$work/obj/probe.c" -o "$work/obj/probe" \
  >"$work/obj/probe.log" 2>&1 ||
  skip "$cc cannot link -fsanitize=fuzzer,address,undefined (libFuzzer missing? apt-get install libclang-rt-dev): $(head -n 3 "$work/obj/probe.log" | tr '\n' ' ')"

# MPI and parallel HDF5 flags: pkg-config's parallel HDF5, else mpicc's own
h5c="" h5l=""
for pc in hdf5-openmpi hdf5-mpich hdf5-mpi hdf5; do
  if pkg-config --exists "$pc" 2>/dev/null; then
    h5c=$(pkg-config --cflags "$pc") h5l=$(pkg-config --libs "$pc")
    break
  fi
done
[ -n "$h5l" ] || h5c="-I/usr/include/hdf5/openmpi" h5l="-L/usr/lib/x86_64-linux-gnu/hdf5/openmpi -lhdf5"
mpic="" mpil=""
if command -v mpicc >/dev/null 2>&1; then
  if mpicc -showme:compile >/dev/null 2>&1; then         # Open MPI
    mpic=$(mpicc -showme:compile) mpil=$(mpicc -showme:link)
  else                                                   # MPICH: "cc -I... -L... -lmpi"
    all=$(mpicc -show 2>/dev/null | cut -d' ' -f2-)
    mpic="$all" mpil="$all"
  fi
fi

# the inflate of the direct chunk path: libdeflate, else zlib (as the CMake build)
if [ -f /usr/include/libdeflate.h ] || pkg-config --exists libdeflate 2>/dev/null; then
  zc="-DGPUPRIM_HAVE_LIBDEFLATE=1" zl="-ldeflate"
else
  zc="-DGPUPRIM_HAVE_ZLIB=1" zl="-lz"
fi

# LZF (io/h5_lzf.c, and the direct chunk path's LZF row) on liblzf where it is installed, as
# the CMake build; without it the placeholder filter, and no LZF datasets
lc="" ll=""
if [ -f /usr/include/liblzf/lzf.h ] || [ -f /usr/include/lzf.h ]; then
  lc="-DGPUPRIM_HAVE_LZF=1 -I/usr/include/liblzf" ll="-llzf"
fi

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cflags="-std=c11 -g -O1 -Wall -Wextra $san -I$root/include -I$root/kernels -I$root/io -I$root/ranks -I$root/src"
# many small pieces: the multi-piece transfer and conversion paths on tiny datasets; the
# direct chunk path's H5Dchunk_iter table built and run where the HDF5 lacks the call
cflags="$cflags -DGP_H5_PIECE_BYTES=200 -DGP_CONV_PIECE_BYTES=40 -DGP_EMULATE_CHUNK_ITER $zc $lc"

echo "run_fuzz.sh: building in $work with $cc ($("$cc" --version | head -n 1))"
build_ok=1
for src in src/cli.c src/count.c src/exitcode.c src/gp_getopt.c src/version.c io/agree.c \
  io/iodriver.c io/h5_chunk_plan.c io/h5_chunks.c io/h5_error.c io/h5_filters.c io/h5_guard.c \
  io/h5_lzf.c io/h5_open.c io/h5_pool.c io/h5_posix.c io/h5_reader.c io/h5_select.c \
  io/h5_target.c io/h5_types.c io/h5_writer.c io/suggest.c kernels/common.c; do
  obj="$work/obj/$(echo "$src" | tr '/' '_').o"
  # shellcheck disable=SC2086
  "$cc" $cflags -fsanitize=fuzzer-no-link $h5c $mpic -c "$root/$src" -o "$obj" || build_ok=0
done
for t in $targets; do
  # shellcheck disable=SC2086
  "$cc" $cflags -fsanitize=fuzzer $h5c $mpic "$here/fuzz_$t.c" "$work"/obj/*.o -o "$work/fuzz_$t" \
    $h5l $mpil $zl $ll -lpthread -lm || build_ok=0
done
[ "$build_ok" = 1 ] || { echo "run_fuzz.sh: FAIL: the fuzz targets do not build"; exit 1; }

# Open MPI and its plugins leak by design at MPI_Init/file open: not ours
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# a singleton MPI process (fuzz_h5select): root is fine, no launcher needed
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism="${OMPI_MCA_btl_vader_single_copy_mechanism:-none}"

# reproducers of earlier runs: kept in artifacts/previous/, out of this run's report
mkdir -p "$work/artifacts/previous" || exit 1
find "$work/artifacts" -maxdepth 1 -type f -exec mv -f {} "$work/artifacts/previous/" \;

# the HDF5 files fuzz_h5select writes (one set per process, rewritten for every input)
export GP_FUZZ_TMP="$work/tmp"
rm -rf "$GP_FUZZ_TMP" && mkdir -p "$GP_FUZZ_TMP" || exit 1

cd "$work" || exit 1 # (libFuzzer's -jobs writes its fuzz-N.log files here)
status=0
for t in $targets; do
  case $t in
    cli) corpus=corpus_cli; maxlen=256; extra="-dict=$here/cli.dict" ;;
    # a structured input: long ones from the start (the reads are decoded after the file)
    h5select) corpus=corpus_h5; maxlen=256; extra="-len_control=0" ;;
    # whole HDF5 files; libhdf5 trusts sizes in the file and leaks on some error paths
    h5bytes) corpus=corpus_h5bytes; maxlen=8192; extra="" ;;
    *) echo "run_fuzz.sh: unknown target $t"; exit 1 ;;
  esac
  log="$work/fuzz_$t.log"
  echo "run_fuzz.sh: fuzz_$t for ${secs}s (seeds: tests/fuzz/$corpus, new entries: $work/$corpus, log: $log)"
  asan="$ASAN_OPTIONS"
  [ "$t" = h5bytes ] && asan="$ASAN_OPTIONS:allocator_may_return_null=1:detect_leaks=0"
  # shellcheck disable=SC2086
  ASAN_OPTIONS="$asan" "$work/fuzz_$t" -max_total_time="$secs" -max_len=$maxlen -timeout=$timeout \
    -report_slow_units=$slow -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$work/artifacts/$t-" \
    $extra ${FUZZ_ARGS:-} "$work/$corpus" "$here/$corpus" >"$log" 2>&1
  rc=$?
  grep -E "^(stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb|stat::slowest_unit_time_sec)|^#[0-9]+.*DONE|^fuzz_h5select: [0-9]+ inputs" "$log" |
    sed "s/^fuzz_$t: //; s/^/  fuzz_$t: /"
  # A crash, leak, timeout or out-of-memory file fails the test. A slow unit (over $slow s
  # but under the $timeout s timeout) is run again alone: under CTest's -j the other tests'
  # oversubscribed MPI ranks can starve this process for seconds, so it fails only if it is
  # still slow by itself.
  failed=""
  for a in "$work/artifacts/$t"-*; do
    [ -f "$a" ] || continue
    case $(basename "$a") in
      "$t"-slow-unit-*)
        alone=$(ASAN_OPTIONS="$asan" "$work/fuzz_$t" -timeout=$timeout "$a" 2>&1 |
          sed -n 's/^Executed .* in \([0-9]*\) ms$/\1/p' | tail -n 1)
        if [ -n "$alone" ] && [ "$alone" -lt $((slow * 1000)) ]; then
          echo "run_fuzz.sh: fuzz_$t: a unit took over ${slow}s in the run but ${alone} ms alone (load, not the input); kept: $work/artifacts/previous/$(basename "$a")"
          mv -f "$a" "$work/artifacts/previous/" || exit 1
        else
          failed="$failed $a"
          echo "run_fuzz.sh: fuzz_$t: a unit is slow alone too (${alone:-?} ms, over ${slow}s): $a"
        fi
        ;;
      *) failed="$failed $a" ;;
    esac
  done
  if [ "$rc" != 0 ] || [ -n "$failed" ]; then
    status=1
    echo "run_fuzz.sh: FAIL: fuzz_$t exited $rc; the end of $log:"
    tail -n 60 "$log" | sed 's/^/  | /'
    for a in $failed; do
      echo "run_fuzz.sh: reproducer: $a"
      echo "  rerun: LSAN_OPTIONS=$LSAN_OPTIONS ASAN_OPTIONS=$asan GP_FUZZ_TMP=$GP_FUZZ_TMP" \
        "GP_FUZZ_DESCRIBE=1 $work/fuzz_$t $a"
    done
  else
    echo "run_fuzz.sh: fuzz_$t: ok"
  fi
done
exit $status

#!/bin/sh
# install_test.sh cmake|pkgconfig BUILD_DIR WORK_DIR
# Installs the build into WORK_DIR/prefix (cmake --install BUILD_DIR --prefix ...), checks
# the installed files, then builds tests/example/example.c against the installed tree only
#   cmake:     a separate CMake project with find_package(gpuprim) (tests/example/CMakeLists.txt)
#   pkgconfig: cc example.c $(pkg-config --cflags --libs gpuprim)
# and runs it on 1 and 3 ranks (tests/mpirun.sh). Exit 0 on success, 77 (skip) when the
# pkgconfig mode has no pkg-config.
set -eu
mode=$1 build=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
if [ "$mode" = pkgconfig ] && ! command -v pkg-config >/dev/null 2>&1; then
  echo "SKIP: pkg-config is not installed (Debian/Ubuntu: apt-get install pkg-config)"
  exit 77
fi
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"

fail=0
for f in bin/gpuprim_mpi bin/gpuprim_gen include/gpuprim/gpuprim.h include/gpuprim/kernels.h include/gpuprim/exact_sum.h \
         include/gpuprim/exchange.h include/gpuprim/h5io.h include/gpuprim/dist.h; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed"; fail=1; }
done
# the contract only: no private header, and no program code in the library
for f in keys.h cpu_twins.h tuning.h merge_path.h cuda_internal.cuh; do
  [ ! -e "$prefix/include/gpuprim/$f" ] || { echo "FAIL: private header installed: $f"; fail=1; }
done
lib=$(find "$prefix" -name libgpuprim.a | head -n 1)
if [ -n "$lib" ] && nm "$lib" 2>/dev/null | grep -Eq ' T (gp_parse_options|gp_run_file|gp_report_print)$'; then
  echo "FAIL: libgpuprim.a holds program symbols (options, job or report)"; fail=1
fi
cfg=$(find "$prefix" -name gpuprimConfig.cmake | head -n 1)
ver=$(find "$prefix" -name gpuprimConfigVersion.cmake | head -n 1)
pc=$(find "$prefix" -name gpuprim.pc | head -n 1)
for v in lib cfg ver pc; do
  eval "val=\$$v"
  [ -n "$val" ] || { echo "FAIL: $v (libgpuprim.a / gpuprimConfig.cmake / ...Version / gpuprim.pc) not installed"; fail=1; }
done
# the man pages, and they render: man -l (man-db) or groff, whichever is there
for page in gpuprim_mpi gpuprim_gen; do
  f=$prefix/share/man/man1/$page.1
  if [ ! -f "$f" ]; then echo "FAIL: share/man/man1/$page.1 not installed"; fail=1; continue; fi
  if command -v man >/dev/null 2>&1; then
    text=$(MANWIDTH=80 man -l "$f" 2>"$work/man_$page.err") # plain text into a pipe
  elif command -v groff >/dev/null 2>&1; then
    text=$(groff -man -Tascii -P-cbou "$f" 2>"$work/man_$page.err")
  else
    echo "note: neither man nor groff is installed: $page.1 is not rendered"; continue
  fi
  for want in NAME SYNOPSIS OPTIONS "EXIT STATUS" "$page" "--help"; do
    printf '%s\n' "$text" | grep -q -- "$want" ||
      { echo "FAIL: the rendered $page(1) lacks '$want'"; fail=1; }
  done
  if [ -s "$work/man_$page.err" ]; then
    echo "FAIL: rendering $page(1) warned:"; cat "$work/man_$page.err"; fail=1
  fi
done
[ "$fail" = 0 ] || exit 1
# the installed headers must not reach into the source tree
if grep -n '"\.\./' "$prefix"/include/gpuprim/*.h; then echo "FAIL: relative include in installed headers"; exit 1; fi

case $mode in
  cmake)
    cmake -S "$here/example" -B "$work/ex" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" 2>&1 ||
      { cat "$work/configure.log"; echo "FAIL: configuring the example with find_package(gpuprim)"; exit 1; }
    cmake --build "$work/ex" >"$work/build.log" 2>&1 ||
      { cat "$work/build.log"; echo "FAIL: building the example"; exit 1; }
    exe=$work/ex/example
    ;;
  pkgconfig)
    export PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    echo "pkg-config --modversion gpuprim: $(pkg-config --modversion gpuprim)"
    # with the distribution's MPI/HDF5 modules required, no library path of this machine
    if grep -q '^Requires:' "$pc" && grep -E '^(Libs|Cflags):.*(mpi|hdf5)' "$pc"; then
      echo "FAIL: gpuprim.pc requires MPI/HDF5 modules and lists their paths as well"; exit 1
    fi
    exe=$work/example
    # shellcheck disable=SC2046
    ${CC:-cc} -O2 -o "$exe" "$here/example/example.c" $(pkg-config --cflags --libs gpuprim) ||
      { echo "FAIL: cc example.c \$(pkg-config --cflags --libs gpuprim)"; exit 1; }
    ;;
  *) echo "usage: install_test.sh cmake|pkgconfig BUILD_DIR WORK_DIR" >&2; exit 2 ;;
esac

for np in 1 3; do
  out=$(sh "$here/mpirun.sh" -np "$np" "$exe" 2>&1) || { echo "$out"; echo "FAIL: example on $np ranks"; exit 1; }
  echo "$out"
  echo "$out" | grep -q "globally sorted: yes" || { echo "FAIL: example on $np ranks did not sort"; exit 1; }
done
echo "OK: installed gpuprim used through $mode"

#!/bin/sh
# quickstart.sh — on a fresh Debian/Ubuntu machine: installs the dependencies, builds, makes a
# default input (data.h5: 2^24 float32, uniform) and runs the main job on 4 ranks.
set -eu
case "${1:-}" in -h|--help) sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
cd "$(dirname "$0")/.."
./jobs/install_deps.sh
./jobs/build.sh build
extra=""
[ "$(id -u)" = 0 ] && extra="--allow-run-as-root"
np=${NP:-4}
[ "$(nproc)" -lt "$np" ] && extra="$extra --oversubscribe"
if [ ! -f data.h5 ]; then
  mpirun $extra -np "$np" ./build/gpuprim_gen data.h5 --n 2^24 --dtype f32 --dist uniform --seed 1
fi
mpirun $extra -np "$np" ./build/gpuprim_mpi data.h5 "$@"

#!/bin/sh
# build.sh [BUILD_DIR [CMAKE_ARGS...]] — configures and builds gpuprim (Release) into
# BUILD_DIR (default build); further arguments go to the configure step (e.g.
# -DGPUPRIM_CUDA=OFF). JOBS=N sets the parallel build jobs (default: nproc; on a shared
# login node, ask for fewer). The CUDA backend is built when nvcc is found (PATH or
# /usr/local/cuda/bin); the configure step's "gpuprim:" line says which backend you get,
# and its whole output is shown when it fails.
set -eu
case "${1:-}" in -h|--help) sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
cd "$(dirname "$0")/.."
dir=${1:-build}
[ $# -gt 0 ] && shift
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >"$log" 2>&1; then
  cat "$log" >&2
  echo "build.sh: configure of $dir failed (output above)" >&2
  exit 1
fi
grep -E "gpuprim(\.pc)?:" "$log" || true
cmake --build "$dir" -j "${JOBS:-$(nproc)}"

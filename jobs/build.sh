#!/bin/sh
# build.sh [BUILD_DIR] — configures and builds gpuprim (Release) into BUILD_DIR (default build).
# The CUDA backend is built when nvcc is found (PATH or /usr/local/cuda/bin).
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build}
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$dir" -j "$(nproc)"

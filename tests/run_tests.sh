#!/bin/sh
# run_tests.sh — installs the dependencies, builds, and runs the whole CTest suite.
# GPU tests (label gpu) skip with a message where no GPU is visible.
set -eu
cd "$(dirname "$0")/.."
./jobs/install_deps.sh
./jobs/build.sh build
ctest --test-dir build --output-on-failure -j 2 "$@"

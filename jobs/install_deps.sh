#!/bin/sh
# install_deps.sh — installs what gpuprim needs to build and test on Debian/Ubuntu:
# a C compiler, CMake, Open MPI and parallel HDF5 from the distribution, libdeflate (the
# inflate of compressed chunks; zlib, which HDF5 brings, is the fallback), liblzf (for h5py's
# LZF files; the build goes on without it), and h5py/numpy (and scipy, the reference of the
# cumulative trapezoid rule) for the tests. Installs only what is missing; uses sudo when not
# root. (nvcc is optional: a CUDA toolkit found on PATH or in /usr/local/cuda enables the GPU
# backend.)
set -eu
case "${1:-}" in -h|--help) sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0"; exit 0 ;; esac
pkgs="build-essential cmake libopenmpi-dev openmpi-bin libhdf5-openmpi-dev libdeflate-dev liblzf-dev python3-h5py python3-numpy python3-scipy"
missing=""
for p in $pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "install_deps.sh: installing:$missing"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null

#!/bin/sh
# mpirun.sh -np P PROGRAM ARGS... : the MPI launcher used by CTest.
# Uses $GPUPRIM_MPIEXEC, else the first mpirun/mpiexec on PATH, with oversubscription (the
# tests run more ranks than cores) and, as root (CI containers), --allow-run-as-root.
launcher=${GPUPRIM_MPIEXEC:-}
if [ -z "$launcher" ]; then
  launcher=$(command -v mpirun || command -v mpiexec) || { echo "mpirun.sh: no mpirun on PATH" >&2; exit 1; }
fi
extra="--oversubscribe"
[ "$(id -u)" = 0 ] && extra="$extra --allow-run-as-root"
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMPI_MCA_rmaps_base_oversubscribe=1
exec "$launcher" $extra "$@"

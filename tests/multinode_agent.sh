#!/bin/sh
# multinode_agent.sh HOST COMMAND... — the rsh agent of the simulated hosts (Open MPI's
# plm_rsh_agent, see tests/multinode_launch.sh): runs COMMAND, the shell words Open MPI
# would hand to ssh (an orted and its arguments, quoted for a shell), in a new UTS namespace
# whose host name is HOST. The orted and the ranks it starts then see HOST as their host
# name (gethostname, MPI_Get_processor_name, MPI_COMM_TYPE_SHARED); files, network,
# processes and the environment stay this machine's, so the relocated Open MPI of a kit
# (OPAL_PREFIX, PATH, LD_LIBRARY_PATH) reaches the orted unchanged.
# Needs unshare(1) and the right to make a UTS namespace (root or CAP_SYS_ADMIN).
set -eu
if [ $# -lt 2 ]; then
  echo "usage: multinode_agent.sh HOST COMMAND..." >&2
  exit 2
fi
host=$1
shift
case $host in
  '' | -* | *[!A-Za-z0-9.-]*) echo "multinode_agent.sh: bad host name '$host'" >&2; exit 2 ;;
esac
# $0 of the inner shell is the host name, $1 the command line as ssh would pass it
exec unshare --uts /bin/sh -c 'hostname "$0" && exec /bin/sh -c "$1"' "$host" "$*"

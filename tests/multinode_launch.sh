#!/bin/sh
# multinode_launch.sh -np P PROGRAM ARGS...  — mpirun across simulated hosts on this machine
# multinode_launch.sh --check                — 0 when it can run here; else the reason, exit 77
#
# GPUPRIM_MULTINODE_HOSTS (required) is Open MPI's --host list, e.g. nodea:3,nodeb:2: the
# ranks fill the hosts in that order (3 on nodea, 2 on nodeb). Each host is an orted started
# by Open MPI's rsh launcher (plm rsh) through tests/multinode_agent.sh, which gives it a UTS
# namespace of its own with that host name; so MPI_COMM_TYPE_SHARED, node-local ranks and
# the exchange's transports see several nodes, while files, network and GPUs stay this
# machine's. The host names resolve to 127.0.1.x through a private /etc/hosts: the script
# runs itself again in a mount namespace of its own (unshare --mount) and bind-mounts a copy
# of /etc/hosts with the names added there, so the machine's /etc/hosts is never changed and
# nothing is left to remove (where no mount namespace can be had, it goes on with a notice:
# Open MPI starts hosts whose names do not resolve too). Ranks on different hosts talk over
# TCP on the loopback device.
#
# Other variables: GPUPRIM_MPIEXEC (the launcher, default mpirun on PATH: Open MPI's);
# GPUPRIM_MULTINODE_MPIRUN_ARGS (more mpirun options, split at blanks, e.g. verbosity).
# Every GPUPRIM_* variable of the environment goes to the ranks (-x).
#
# PMIx: when PMIX_MCA_gds leaves PMIx only its hash datastore (the devicekit's env.sh sets
# PMIX_MCA_gds=hash), Open MPI 4.1.4 with PMIx 4.2 tells each rank on an orted's host but
# the last that its node holds itself and the last host's ranks (seen here at 2+2, 3+2,
# 1+2+2): MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) makes groups that disagree and the job
# hangs in its first collective on them (gpuprim_mpi before its binding table, silently). Such a setting is dropped here, with a notice, so that
# PMIx chooses its datastore as by default (GPUPRIM_MULTINODE_KEEP_PMIX=1 keeps it, to show
# the hang: tests/multinode_diag.sh).
# Needs root (or CAP_SYS_ADMIN) for unshare --uts (and --mount); Open MPI's mpirun.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
me="multinode_launch.sh"
launcher=${GPUPRIM_MPIEXEC:-mpirun}

# check: prints why the simulated hosts cannot be had here (empty: they can)
why_not() {
  command -v unshare >/dev/null 2>&1 || { echo "unshare(1) is not installed (util-linux)"; return; }
  command -v "$launcher" >/dev/null 2>&1 || { echo "$launcher is not on PATH"; return; }
  "$launcher" --version 2>&1 | grep -q "Open MPI\|OpenRTE" ||
    { echo "$launcher is not Open MPI's (the simulated hosts need its rsh launcher, plm rsh)"; return; }
  err=$(unshare --uts /bin/sh -c 'hostname gpuprim-probe' 2>&1) ||
    { echo "unshare --uts with hostname failed (needs root or CAP_SYS_ADMIN): $(printf '%s' "$err" | head -n 1)"; return; }
}

# no_mount: prints why there can be no private /etc/hosts (empty: there can)
no_mount() {
  err=$(unshare --mount /bin/sh -c 'mount --bind /etc/hosts /etc/hosts' 2>&1) ||
    echo "unshare --mount with mount --bind failed: $(printf '%s' "$err" | head -n 1)"
}

if [ "${1:-}" = "--check" ]; then
  reason=$(why_not)
  [ -z "$reason" ] && exit 0
  echo "$reason"
  exit 77
fi
if [ $# -lt 3 ] || [ "$1" != "-np" ]; then
  echo "usage: GPUPRIM_MULTINODE_HOSTS=nodea:3,nodeb:2 $me -np P PROGRAM ARGS... (or --check)" >&2
  exit 2
fi
hosts=${GPUPRIM_MULTINODE_HOSTS:-}
case $hosts in
  '' | *[!A-Za-z0-9.:,-]*) echo "$me: GPUPRIM_MULTINODE_HOSTS='$hosts' is not a host:slots list (e.g. nodea:3,nodeb:2)" >&2; exit 2 ;;
esac

# ---- first pass: a mount namespace of our own with the host names in /etc/hosts ----------
names=$(printf '%s\n' "$hosts" | tr ',' '\n' | cut -d: -f1)
if [ "${GPUPRIM_MULTINODE_NS:-}" != "$$" ]; then
  reason=$(why_not)
  if [ -n "$reason" ]; then echo "$me: cannot simulate hosts here: $reason" >&2; exit 77; fi
  unresolved=$(for h in $names; do getent hosts "$h" >/dev/null 2>&1 || echo "$h"; done)
  mreason=""
  [ -n "$unresolved" ] && mreason=$(no_mount)
  if [ -n "$unresolved" ] && [ -z "$mreason" ]; then
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprim-hosts.XXXXXX")
    { cat /etc/hosts; echo "# added by tests/multinode_launch.sh in its own mount namespace"; } >"$tmp/hosts"
    i=10
    for h in $names; do
      echo "127.0.1.$i $h" >>"$tmp/hosts"
      i=$((i + 1))
    done
    # exec keeps the process id (unshare without --fork), so GPUPRIM_MULTINODE_NS tells the
    # second pass that it runs in the namespace, and a signal to this process reaches mpirun
    GPUPRIM_MULTINODE_NS=$$ GPUPRIM_MULTINODE_HOSTS_FILE=$tmp/hosts \
      exec unshare --mount --propagation private /bin/sh "$0" "$@"
  fi
  # Open MPI starts hosts whose names do not resolve too (it takes them for remote ones)
  [ -n "$mreason" ] && echo "$me: notice: $(echo $unresolved) not in /etc/hosts, and no private copy ($mreason); going on without" >&2
fi

# ---- second pass, in the namespace ---------------------------------------------------------
hf=${GPUPRIM_MULTINODE_HOSTS_FILE:-}
if [ -n "$hf" ]; then
  if ! mount --bind "$hf" /etc/hosts; then
    echo "$me: cannot bind-mount $hf over /etc/hosts" >&2
    exit 77
  fi
  rm -rf "$(dirname "$hf")"   # the mount keeps the file's contents; nothing is left behind
fi
unset GPUPRIM_MULTINODE_NS GPUPRIM_MULTINODE_HOSTS_FILE

# hash_only: PMIX_MCA_gds leaves PMIx no datastore but hash
hash_only=0
case ${PMIX_MCA_gds:-} in
  '') ;;
  ^*) case $PMIX_MCA_gds in *ds12*ds21* | *ds21*ds12*) hash_only=1 ;; esac ;;
  *ds12* | *ds21*) ;;
  *) hash_only=1 ;;
esac
if [ "$hash_only" = 1 ] && [ "${GPUPRIM_MULTINODE_KEEP_PMIX:-}" != 1 ]; then
  echo "$me: notice: PMIX_MCA_gds=$PMIX_MCA_gds dropped (with the hash datastore alone the ranks of several orteds get wrong node-local peers and hang)" >&2
  unset PMIX_MCA_gds
fi

shift                  # -np
np=$1
shift
extra=""
[ "$(id -u)" = 0 ] && extra="--allow-run-as-root"
for v in $(env | sed -n 's/^\(GPUPRIM_[A-Za-z0-9_]*\)=.*/\1/p' | grep -v '^GPUPRIM_MULTINODE_'); do
  extra="$extra -x $v"
done
# shellcheck disable=SC2086  # $extra and the extra mpirun options are split on purpose
exec "$launcher" $extra --oversubscribe --host "$hosts" -np "$np" \
  --mca plm rsh --mca plm_rsh_agent "$here/multinode_agent.sh" --mca plm_rsh_no_tree_spawn 1 \
  --mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
  --mca btl_vader_single_copy_mechanism none --mca mpi_yield_when_idle 1 \
  ${GPUPRIM_MULTINODE_MPIRUN_ARGS:-} "$@"

#!/bin/sh
# py.sh SCRIPT ARGS... : runs a test script under the first python3 that has h5py and numpy
# ($GPUPRIM_PYTHON, /usr/bin/python3, python3 on PATH).
for p in ${GPUPRIM_PYTHON:-} /usr/bin/python3 python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import h5py, numpy' >/dev/null 2>&1; then
    exec "$p" "$@"
  fi
done
echo "py.sh: no python3 with h5py and numpy (Debian/Ubuntu: apt-get install python3-h5py)" >&2
exit 1

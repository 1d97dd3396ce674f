#!/usr/bin/env python3
"""numpy_check.py FILE DATASET RESULT.json [SORTED.h5] — prints gpuprim_mpi's results (from
its --json output) next to numpy's on the same file, and checks the sorted output if given.
Exit 0 when they agree (counts/min/max exact, sums to 1e-12 relative, sorted order exact)."""
import json
import sys

import h5py
import numpy as np

np.seterr(all="ignore")
path, dset, rj = sys.argv[1:4]
r = json.load(open(rj))
r.update({k: float(v) for k, v in r.get("non_finite", {}).items()})  # report version 2's nulls
y = h5py.File(path, "r")[dset][()].reshape(-1)
yd = y.astype(np.float64)
fin = ~np.isnan(yd)
ok = True
rows = [("count", r["count"], y.size), ("nan_count", r["nan_count"], int((~fin).sum())),
        ("sum", r["sum"], float(np.sum(yd[fin]))), ("min", r["min"], float(np.nanmin(yd))),
        ("max", r["max"], float(np.nanmax(yd))), ("mean", r["mean"], float(np.nanmean(yd))),
        ("l2_norm", r["l2_norm"], float(np.sqrt(np.sum(yd[fin] ** 2))))]
if fin.all():
    rows.append(("integral", r["integral"], float(np.sum((yd[1:] + yd[:-1]) / 2)) * r["dx"]))
print(f"{'':10s} {'gpuprim':>24s} {'numpy':>24s} {'rel diff':>10s}")
for k, a, b in rows:
    a = float(a)
    rel = abs(a - b) / (abs(b) + 1e-300) if a != b else 0.0
    good = rel <= 1e-12 if k in ("sum", "mean", "l2_norm", "integral") else a == b
    ok &= good
    print(f"{k:10s} {a:24.17g} {b:24.17g} {rel:10.1e}{'' if good else '  MISMATCH'}")
if len(sys.argv) > 4:
    got = h5py.File(sys.argv[4], "r")[dset][()]
    want = np.sort(y)  # numpy: NaNs last; equal -0.0/+0.0 compare equal
    same = got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
    ok &= same
    print(f"sorted output {'equals' if same else 'DIFFERS from'} numpy.sort ({got.size} elements, {got.dtype})")
print("numpy_check:", "AGREE" if ok else "DISAGREE")
sys.exit(0 if ok else 1)

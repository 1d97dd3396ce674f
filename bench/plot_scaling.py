#!/usr/bin/env python3
"""plot_scaling.py RESULTS_DIR OUT.png — stacked bars of gpuprim_mpi's phase times (max over
ranks) for the strong_*_P*.json and weak_*_P*.json files that bench/scaling.sh wrote."""
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

d, out = sys.argv[1], sys.argv[2]
phases = ["read", "upload", "reduce", "local sort", "rank exchange", "verify", "write"]
runs = []
for f in sorted(glob.glob(os.path.join(d, "*_P*.json"))):
    r = json.load(open(f))
    runs.append((os.path.basename(f)[:-5], r))
fig, ax = plt.subplots(figsize=(9, 4.5))
bottom = [0.0] * len(runs)
for ph in phases:
    # report version 2 keys (local_sort), or version 1's (local sort) in older reports
    vals = [r["times_ms"].get(ph.replace(" ", "_"), r["times_ms"].get(ph, 0.0)) / 1e3
            for _, r in runs]
    ax.bar(range(len(runs)), vals, bottom=bottom, label=ph)
    bottom = [b + v for b, v in zip(bottom, vals)]
ax.set_xticks(range(len(runs)))
ax.set_xticklabels([f"{n}\n{r['count'] / 2**20:.0f} Mi {r['dtype']}" for n, r in runs], fontsize=8)
ax.set_ylabel("seconds (max over ranks)")
ax.set_title("gpuprim_mpi phase times, one rank per H200 (strong: 4 GiB file; weak: 1 GiB per GPU)")
ax.legend(fontsize=8, ncol=2)
fig.tight_layout()
fig.savefig(out, dpi=110)
print("wrote", out)

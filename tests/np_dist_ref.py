"""The references of the distribution tests (tests/e2e_dist.py): numpy 2's histogram rule and
gpuprim's quantile rule, written with explicitly typed numpy arrays so that they give numpy
2's answers under numpy 1.x too (Debian's numpy 1.24 in CI).

- np2_histogram(a, bins, rng): numpy (>= 2) numpy.histogram(a, bins=bins, range=rng) of the
  finite values a. numpy 1.x computes float32 data whose range comes from the data
  differently (the edges by linspace in float64 and the scale n / (last - first) in float64,
  cast to float32; numpy 2, by NEP 50, does both in float32): its counts can differ in a few
  bins. Float64 and integer data, and float32 data with a range, agree across versions.
  Checked against numpy 2.4's own numpy.histogram (tests/e2e_dist.py does it whenever the
  running numpy is >= 2).
- quantile_ref(s, q): numpy's nanquantile(a, [q]) (linear) of the sorted non-NaN values s,
  bit for bit (numpy 1.24 and 2.4 agree), except where numpy's arithmetic breaks down, where
  it gives gpuprim's documented rule (docs/output.md) and says so.

Stdlib and numpy only; imported by scripts run by path (their folder is on sys.path).
"""
import math

import numpy as np


def _lin(start, stop, num, ct):
    """numpy 2's linspace(start, stop, num, endpoint=True) computed in type ct: step =
    (stop - start) / (num - 1), edge i = i * step + start (i / (num - 1) * (stop - start)
    when the step underflows to 0), the last edge stop."""
    start, stop = ct(start), ct(stop)
    div = num - 1
    delta = ct(stop - start)
    y = np.arange(0, num, dtype=ct)
    step = ct(delta / ct(div))
    with np.errstate(all="ignore"):
        if step == 0:
            y = (y / ct(div)).astype(ct)
            y = (y * delta).astype(ct)
        else:
            y = (y * step).astype(ct)
        y = (y + start).astype(ct)
    y[-1] = stop
    return y


def np2_histogram(a, bins, rng=None):
    """counts (int64) and edges of numpy (>= 2) numpy.histogram(a, bins, range=rng) for the
    finite values a (one of float32, float64, int32, int64, uint32, uint64); rng a pair of
    Python floats or None. Raises ValueError where numpy 2 does (too many bins for the data
    range)."""
    D = a.dtype
    f32 = D == np.float32
    isint = D.kind in "iu"
    bt = np.float32 if f32 else np.float64
    if rng is not None:
        A, B = float(rng[0]), float(rng[1])
        if A == B:
            A, B = A - 0.5, B + 0.5
        edges = _lin(A, B, bins + 1, np.float64).astype(bt)
        denom = np.float64(B) - np.float64(A)
        if f32:  # the comparisons and x - A in float32, the rest in float64
            fa, fb = np.float32(A), np.float32(B)
            x = a[(a >= fa) & (a <= fb)]
            num = (x - fa).astype(np.float32)
            f = (num.astype(np.float64) / denom) * np.float64(bins)
        else:  # integers: as float64
            xd = a.astype(np.float64)
            x = xd[(xd >= A) & (xd <= B)]
            f = ((x - A) / denom) * np.float64(bins)
        xb = x.astype(bt)
    elif a.size == 0:
        return np.zeros(bins, np.int64), _lin(0.0, 1.0, bins + 1, np.float64).astype(bt)
    else:
        lo, hi = a.min(), a.max()
        widened = lo == hi
        if f32:  # every step in float32
            if widened:
                lo, hi = np.float32(lo - np.float32(0.5)), np.float32(hi + np.float32(0.5))
            edges = _lin(lo, hi, bins + 1, np.float32)
            denom = np.float32(hi - lo)
            q = ((a - lo).astype(np.float32) / denom).astype(np.float32)
            f = (q * np.float32(bins)).astype(np.float32)
        elif isint:  # the width exact, rounded once (numpy's unsigned subtraction)
            if widened:
                lo, hi = np.float64(lo) - 0.5, np.float64(hi) + 0.5
                denom = np.float64(hi - lo)
            else:
                denom = np.float64(int(hi) - int(lo))
            edges = _lin(np.float64(lo), np.float64(hi), bins + 1, np.float64)
            f = ((a.astype(np.float64) - np.float64(lo)) / denom) * np.float64(bins)
        else:
            if widened:
                lo, hi = lo - 0.5, hi + 0.5
            edges = _lin(lo, hi, bins + 1, np.float64)
            denom = np.float64(hi - lo)
            f = ((a - lo) / denom) * np.float64(bins)
        xb = a.astype(bt)
    if np.any(edges[:-1] >= edges[1:]):
        raise ValueError("Too many bins for data range")
    with np.errstate(all="ignore"):
        idx = f.astype(np.int64)
    idx = np.minimum(idx, bins - 1)
    idx[idx < 0] = 0
    idx = idx - (xb < edges[idx])
    idx = idx + ((xb >= edges[np.minimum(idx + 1, bins)]) & (idx != bins - 1))
    return np.bincount(idx, minlength=bins).astype(np.int64), edges


def _lerp_np(D, a, b, t):
    """numpy's _lerp of neighbours a <= b (numpy scalars of dtype D) at float64 weight t:
    d = b - a in D (integers wrap around), then a + d * t or b - d * (1 - t) in float64."""
    with np.errstate(all="ignore"):
        d = (np.array([b], D) - np.array([a], D))[0]
        if t >= 0.5:
            return float(np.float64(b) - np.float64(d) * (1.0 - t))
        return float(np.float64(a) + np.float64(d) * t)


def quantile_ref(s, q):
    """(value, rule): numpy's nanquantile(a, [q]) of the ascending non-NaN values s (its
    virtual index (n - 1) * q, its neighbours and weight, its _lerp), and whether gpuprim's
    rule replaced numpy's value: integers take the exact difference (numpy wraps around
    when the neighbours are further apart than the type's range); a float difference that
    overflows its type is taken as float64 (float32) or as 2 * (b/2 - a/2) (float64); a NaN
    from infinities becomes a itself (weight 0 or a == b), the infinite neighbour, or NaN
    between -inf and +inf. NaN for no value."""
    n = len(s)
    if n == 0:
        return math.nan, False
    D = s.dtype
    v = float(n - 1) * q
    if v >= float(n - 1):
        k = k2 = n - 1
        t = v + 1.0
    else:
        k = int(math.floor(v))
        k2, t = k + 1, v - float(k)
    a, b = s[k], s[k2]
    r = _lerp_np(D, a, b, t)
    if D.kind in "iu":
        d = float(int(b) - int(a))
        r2 = float(np.float64(b) - d * (1.0 - t)) if t >= 0.5 else float(np.float64(a) + d * t)
        return r2, r2 != r
    fa, fb = float(a), float(b)
    if math.isnan(r):
        if t == 0.0 or fa == fb:
            return fa, True
        if math.isinf(fa) and math.isinf(fb):
            return math.nan, True
        return (fa if math.isinf(fa) else fb), True
    with np.errstate(all="ignore"):
        d = float((np.array([b], D) - np.array([a], D))[0])
    if math.isinf(d) and math.isfinite(fa) and math.isfinite(fb):
        if D == np.float32:
            dd = fb - fa
            return (fb - dd * (1.0 - t) if t >= 0.5 else fa + dd * t), True
        h = fb * 0.5 - fa * 0.5
        return (fb - (h * (1.0 - t)) * 2.0 if t >= 0.5 else fa + (h * t) * 2.0), True
    return r, False


def numpy_is_2():
    """True when the running numpy is 2.x or later (NEP 50's promotion)."""
    return int(np.__version__.split(".")[0]) >= 2

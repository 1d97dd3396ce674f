/* dist.h — the distribution of a dataset: numpy's histogram rule (the plan every backend's
 * hist entry applies), the finite range of a piece, the state of a radix select over the
 * order keys, numpy's quantile interpolation, and the runs of equal values that count the
 * distinct ones. Plain records and pure functions (kernels/dist.c); the kernels are the
 * entries of the gp_backend group "histograms and selection" (kernels.h): hist,
 * finite_range, radix_hist and runs. On the CUDA backend hist and radix_hist count into
 * per-block histograms in shared memory (hist's edges beside them; global memory past its
 * size; radix_hist as many prefixes per launch as it holds), merged into the device counts
 * with 64-bit integer atomics and copied out; hist's edges are copied in with each call.
 */
#ifndef GP_DIST_H
#define GP_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprim/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- histogram: numpy's rule ------------------------------------------------------------ *
 *
 * numpy (>= 2) histogram(a, bins=N, range=R) of the finite values a, for one of the six
 * element types:
 *   - the outer edges: R = (A, B) as given (float64; A == B widens to [A - 0.5, B + 0.5]), or
 *     [min, max] of a (widened the same way when min == max, in float32 for float32 data and
 *     in float64 for the others), or [0, 1] when a is empty;
 *   - the edges: numpy's linspace(lo, hi, N + 1): step = (hi - lo) / N, edge i = i * step
 *     + lo (two roundings; i / N * (hi - lo) when the step underflows to 0), the last edge
 *     hi itself; computed in float32 for float32 data with the range from the data, else
 *     in float64, then stored in the bin type (float32 for float32 data, else float64);
 *   - a value x is binned when lo <= x <= hi, compared in float32 for float32 data and as
 *     (double)x otherwise; below lo it counts as below, above hi as above (so do -inf and
 *     +inf); NaN is not counted;
 *   - its index: f = ((x - lo) / (hi - lo)) * N, truncated, N clamped to N - 1, then
 *     decremented when x < edge[i] and incremented when x >= edge[i + 1] (not in the last
 *     bin, which is closed). The arithmetic of f follows numpy 2's types (mode below);
 *     integer data take hi - lo as their exact difference, rounded once.
 * numpy 1.x computes the float32 case differently (edges and scale in float64; see
 * docs/output.md): the float32 counts can differ from numpy 1.x's in a few bins. */

#define GP_HIST_MAX_BINS ((int64_t)1 << 24) /* most bins of one histogram */

/* The arithmetic of a histogram's index (numpy 2's types). */
typedef enum gp_hist_mode {
    GP_HIST_F32 = 0,  /* float32 data, range from the data: every step in float32 */
    GP_HIST_F32R = 1, /* float32 data, range given: x - lo in float32, / (hi - lo) and * N in
                         float64 */
    GP_HIST_F64 = 2   /* float64 and integer data: (double)x, every step in float64 */
} gp_hist_mode;

/* A histogram's plan: what the hist entry of a backend applies to every element. */
typedef struct gp_hist_spec {
    gp_dtype t;          /* the data's element type */
    gp_hist_mode mode;
    int64_t nbins;       /* N, 1 .. GP_HIST_MAX_BINS */
    float lo_f, hi_f;    /* float32 modes: the binned range, compared in float32 */
    float den_f;         /* GP_HIST_F32: hi - lo in float32 */
    double lo_d, hi_d;   /* GP_HIST_F64: the binned range, compared with (double)x */
    double den_d;        /* GP_HIST_F32R, GP_HIST_F64: hi - lo in float64 (integers from the
                            data: the exact difference rounded once) */
    gp_dtype edge_type;  /* GP_F32 for float32 data, else GP_F64 */
    const void *edges;   /* host memory: the N + 1 edges of edge_type */
} gp_hist_spec;

/* The bin type of data of type t: GP_F32 for GP_F32, else GP_F64. */
gp_dtype gp_hist_edge_type(gp_dtype t);

/* Fills *spec and edges[0, nbins] (nbins + 1 elements of gp_hist_edge_type(t), the caller's
 * host memory, which spec->edges then points to) with numpy's plan (the block above) for
 * data of type t: the range [a, b] when have_range (finite, a <= b), else the finite values'
 * [min, max] given by their keys min_key / max_key (gp_key_of; nfinite = how many there
 * are, 0: none, the range [0, 1]). Returns 0, or -1 with a one-line reason in why (whylen
 * bytes) where numpy refuses or would compute nonsense: nbins out of [1,
 * GP_HIST_MAX_BINS]; a range that is not finite, or is reversed; edges that do not
 * increase (numpy 2: "too many bins for data range"); a width hi - lo that overflows the
 * arithmetic's type; float32 data with a range outside float32's. Pure. */
int gp_hist_plan(gp_dtype t, int64_t nbins, int have_range, double a, double b,
                 int64_t nfinite, uint64_t min_key, uint64_t max_key, gp_hist_spec *spec,
                 void *edges, char *why, size_t whylen);

/* The bin of the element at elem under *spec: 0 .. nbins - 1, nbins (below the range),
 * nbins + 1 (above it) or -1 (NaN). The rule every backend's hist applies. Pure. */
int64_t gp_hist_bin(const gp_hist_spec *spec, const void *elem);

/* ---- the finite range of a piece --------------------------------------------------------- */

/* What finite_range reports of a piece (integers: every element is finite). */
typedef struct gp_frange {
    int64_t finite;           /* finite elements (not NaN, not infinite) */
    int64_t neg_inf, pos_inf; /* -inf and +inf elements */
    uint64_t min_key;         /* key (gp_key_of) of the smallest finite element; UINT64_MAX
                                 when none */
    uint64_t max_key;         /* of the largest; 0 when none */
} gp_frange;

/* The record of no element. */
gp_frange gp_frange_empty(void);
/* *acc and *x combined (counts add, min / max of the keys): order does not matter. */
void gp_frange_add(gp_frange *acc, const gp_frange *x);

/* ---- radix select over the order keys ----------------------------------------------------- *
 *
 * The elements of ranks k (0-based, in the ascending order of gp_key_of: NaNs last, -0.0
 * before +0.0, as the sort orders them) of a multiset spread over pieces and ranks: the
 * keys' bits are found GP_SELECT_DIGIT at a time from the top (3 passes for 4-byte keys, 6
 * for 8-byte keys). Each pass, every piece adds its digit histograms (radix_hist: for each
 * distinct prefix of the pass, the count of each digit among the elements whose higher bits
 * are that prefix) into one array; the arrays of all pieces and ranks summed, the digit that
 * holds each wanted rank is chosen and the rank made relative to it. All wanted ranks share
 * the passes. */

#define GP_SELECT_DIGIT 11 /* key bits per pass */
#define GP_SELECT_MAX 128  /* ranks one select finds */

typedef struct gp_select {
    int width;                        /* key bits: 32 or 64 */
    int shift, bits;                  /* this pass's digit: key bits [shift, shift + bits) */
    int done;                         /* 1: every key is known (prefix[i] is the key) */
    int n;                            /* wanted ranks */
    int64_t rank[GP_SELECT_MAX];      /* each one's rank among the keys with its prefix */
    uint64_t prefix[GP_SELECT_MAX];   /* its key's bits above the digit: key >> (shift + bits)
                                         (0 on the first pass) */
    int nprefix;                      /* this pass's distinct prefixes */
    uint64_t prefixes[GP_SELECT_MAX]; /* ... ascending */
} gp_select;

/* Starts a select of the ranks[0, n) (any order, repeats allowed; 1 <= n <= GP_SELECT_MAX,
 * each in [0, total elements)) among elements of type t. Returns 0, or -1 for a bad t or
 * n. Pure. */
int gp_select_init(gp_select *s, gp_dtype t, const int64_t *ranks, int n);

/* Counts of one pass: the element of prefixes[p] and digit d is counts[(p << bits) + d];
 * this is the number of int64_t the pass's histogram holds. */
size_t gp_select_counts_len(const gp_select *s);

/* The digit of a key under prefix index p of this pass, or -1 when the key's higher bits are
 * not prefixes[p] for any p (*p set otherwise). The rule every backend's radix_hist applies.
 * Pure. */
int gp_select_digit(const gp_select *s, uint64_t key, int *p);

/* The next pass from counts (every element of every piece and rank): each rank's digit
 * chosen, its prefix extended and its rank made relative. Returns 0, or -1 when the counts
 * cannot hold a wanted rank (the pieces' counts do not add up). Pure. */
int gp_select_advance(gp_select *s, const int64_t *counts);

/* ---- quantiles: numpy's nanquantile, linear ------------------------------------------------ */

/* numpy's virtual index of quantile q (0 <= q <= 1) among n >= 1 values: v = (n - 1) * q in
 * float64; k0 = floor(v), k1 = k0 + 1 and t = v - k0, or, for v >= n - 1, k0 = k1 = n - 1
 * and t = v + 1 (numpy's index -1, and its weight then). */
void gp_quantile_index(int64_t n, double q, int64_t *k0, int64_t *k1, double *t);

/* The quantile between the order statistics with keys a_key <= b_key (gp_key_of of type t)
 * at weight t: numpy's _lerp, d = b - a in the data's type, a + d * t (t < 0.5) or
 * b - d * (1 - t) in float64, bit for bit; except where numpy's arithmetic breaks down:
 *   - integers: d is the exact difference, rounded once (numpy's subtraction wraps around
 *     when a and b are further apart than the type's range);
 *   - floats whose d overflows to infinity while a and b are finite: float32 as
 *     (double)b - (double)a, float64 as 2 * (b/2 - a/2) (the halves scaled back after the
 *     product with the weight);
 *   - a NaN from infinities (numpy's inf - inf or inf * 0): a itself when t == 0 or a == b,
 *     the infinite neighbour when one is infinite, NaN only between -inf and +inf.
 * Pure. */
double gp_quantile_lerp(gp_dtype t, uint64_t a_key, uint64_t b_key, double w);

/* ---- runs of equal values: the distinct count ---------------------------------------------- */

/* What runs reports of a piece y[0, n): in sorted data (NaNs last, either order) runs is
 * the number of distinct non-NaN values, -0.0 and +0.0 one value as numpy.unique counts
 * them. */
typedef struct gp_runs {
    int64_t n;          /* elements */
    int64_t runs;       /* i with y[i] not NaN and (i == 0, or y[i-1] NaN, or y[i] != y[i-1]) */
    uint64_t first_key; /* gp_runs_key of y[0], y[n-1] (undefined when n == 0) */
    uint64_t last_key;
    int32_t first_nan;  /* y[0], y[n-1] NaN */
    int32_t last_nan;
} gp_runs;

/* The record of no element. */
gp_runs gp_runs_empty(void);
/* Two adjacent pieces, lo before hi: runs add, less one when lo's last and hi's first are
 * one value (neither NaN). */
gp_runs gp_runs_combine(const gp_runs *lo, const gp_runs *hi);
/* The key runs compares: gp_key_of with -0.0 as +0.0. */
uint64_t gp_runs_key(gp_dtype t, const void *elem);

#ifdef __cplusplus
}
#endif
#endif /* GP_DIST_H */

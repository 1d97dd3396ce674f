/* test_gpu_scan.c — the CUDA backend's prefix scans (gp_backend.cumsum / cumint,
 * kernels/cuda_scan.cu) against their CPU twins (kernels/cpu_scan.c) and the exact references
 * of test_scan_ref.h, with both passes across blocks (GPUPRIM_SCAN_ALGO's look-back and
 * reduce-then-scan, chosen with gp_scan_algo_set).
 *
 * Usage: test_gpu_scan [--quick]   (--quick: sizes up to 65537 only)
 * Environment: GPUPRIM_TEST_SEED (decimal or 0x...) seeds the data (the seed is printed).
 * Exit: 0 all passed, 1 some check failed, 77 no CUDA device visible (CTest's skip code).
 *
 * For the six dtypes, sizes 0 1 2 31 32 33 63 64 65 4095 4096 4097 (one tile), 131071 131072
 * 131073 (a segment of 32 tiles), 65537, 1000003, 2^21 + 1 and 2^24 + 3 (uniform only), the
 * distributions of test_scan_ref.h, each algorithm, the input at an aligned and at a
 * misaligned address (one element in: the scalar loads and stores):
 *   cumsum: integers bit for bit the twin's (up to the first overflowing index, which is the
 *     twin's), the exact total the twin's; floats within the bound of the exact prefixes
 *     (non-finite values and -0.0 exactly); a second run the same bits (determinism); the
 *     64 words past the output and the word before it (poisoned) never written;
 *   pieces: 1 to 6 random pieces, each from the carry the last left: integers the whole
 *     scan's bits, floats within the bound; a totals-only call (out == NULL) leaves the
 *     twin's exact integer total, a float total within the bound;
 *   cumint (with --x coordinates and with dx): within the bound of scipy's terms summed
 *     exactly, the first value +0.0, the carry's last sample the twin's;
 *   overflow at the edge (from carries near the limit), n = 0, argument errors (GP_EINVAL).
 * Nothing is timed (gpuprim_bench times the scans).
 */
#include "gpuprim/exact_sum.h"
#include "cpu_twins.h"
#include "tuning.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64 /* poisoned 8-byte words past the output (and two before it) */
#define POISON 0xA5
#include "test_gpu_check.h" /* G, CHECK, GPU_OK, failf, tcase */
#include "test_cuts.h"      /* gp_test_random_cuts */

static uint64_t g_rng;
static uint64_t rnd(void)
{
    const uint64_t r = gp_mix64(g_rng);
    g_rng += 0x9E3779B97F4A7C15ull;
    return r;
}

#include "test_scan_ref.h"

static double g_maxerr[2]; /* the largest float error / sum |term|: cumsum, cumint */

/* A case's device buffers: the input (at an element offset of `off`), its coordinates, and
 * the output with a poisoned word before it and GUARD after. */
typedef struct dev_case {
    void *dy, *dx, *dout;
    const void *y;      /* dy + off elements */
    const double *x;    /* dx + off, or NULL */
    void *out;          /* dout + 16 + off * 8 (16-byte aligned when off is 0) */
    size_t obytes;      /* the output's allocation */
} dev_case;

static int dev_setup(const tcase *c, dev_case *d, const void *y, const double *x, int off)
{
    const size_t sz = gp_dtype_size(c->t), n = (size_t)c->n;
    memset(d, 0, sizeof *d);
    d->obytes = 16 + (n + (size_t)off + GUARD) * 8;
    d->dy = G->alloc((n + 1) * sz);
    d->dx = x ? G->alloc((n + 1) * 8) : NULL;
    d->dout = G->alloc(d->obytes);
    if (!d->dy || !d->dout || (x && !d->dx)) {
        failf(c, "alloc: %s", G->last_error());
        return -1;
    }
    unsigned char *poison = xmalloc(d->obytes);
    memset(poison, POISON, d->obytes);
    int rc = G->upload(d->dout, poison, d->obytes);
    free(poison);
    rc = rc ? rc : G->upload((char *)d->dy + (size_t)off * sz, y, n * sz);
    if (!rc && x) rc = G->upload((double *)d->dx + off, x, n * 8);
    if (rc) {
        failf(c, "upload: %s", G->last_error());
        return -1;
    }
    d->y = (const char *)d->dy + (size_t)off * sz;
    d->x = x ? (const double *)d->dx + off : NULL;
    d->out = (char *)d->dout + 16 + (size_t)off * 8;
    return 0;
}

static void dev_free(dev_case *d)
{
    if (d->dy) G->free(d->dy);
    if (d->dx) G->free(d->dx);
    if (d->dout) G->free(d->dout);
}

/* The output (n words) into host memory; the guard words checked. */
static int dev_result(const tcase *c, const dev_case *d, int off, void *host)
{
    unsigned char *all = xmalloc(d->obytes);
    if (G->download(all, d->dout, d->obytes)) {
        failf(c, "download: %s", G->last_error());
        free(all);
        return -1;
    }
    const size_t start = 16 + (size_t)off * 8, end = start + (size_t)c->n * 8;
    int clean = 1;
    for (size_t b = 0; b < start && clean; b++) clean = all[b] == POISON;
    for (size_t b = end; b < d->obytes && clean; b++) clean = all[b] == POISON;
    CHECK(c, clean, "a byte outside the output was written");
    memcpy(host, all + start, (size_t)c->n * 8);
    free(all);
    return 0;
}

/* The float outputs (checked against the exact reference) or the integer outputs (the
 * twin's bits up to its first overflow). */
static void check_outputs(const tcase *c, int cumint, const void *y, const double *x,
                          double dx, const void *got, const void *twin, const gp_scan_carry *ct)
{
    char why[300] = "";
    long bad;
    if (cumint) bad = ref_check_cumint(c->t, y, x, dx, c->n, got, &g_maxerr[1], why, sizeof why);
    else if (gp_dtype_is_float(c->t))
        bad = ref_check_cumsum(c->t, y, c->n, got, &g_maxerr[0], why, sizeof why);
    else {
        const int64_t upto = ct->overflow >= 0 ? ct->overflow : c->n;
        bad = memcmp(got, twin, (size_t)upto * 8) != 0;
        if (bad) snprintf(why, sizeof why, "integer outputs differ from the twin's");
    }
    CHECK(c, bad == 0, "%ld wrong outputs, the first: %s", bad, why);
}

/* A float total g against the twin's t: the same special value, or both within the bound. */
static int totals_agree(double g, double t, double abs)
{
    if (isnan(t) || isinf(t)) return (isnan(g) && isnan(t)) || g == t;
    return fabs(g - t) <= 2 * SCAN_BOUND * abs;
}

/* The GPU's carry after a whole scan against the twin's: integers exactly (total, overflow),
 * floats within the bound of the twin's total, index and last sample exactly. */
static void check_carry(const tcase *c, int cumint, const gp_scan_carry *cg,
                        const gp_scan_carry *ct, double abs)
{
    CHECK(c, cg->index == ct->index && cg->has_prev == ct->has_prev, "index / has_prev");
    if (!gp_dtype_is_float(c->t) && !cumint) {
        CHECK(c, cg->isum.lo == ct->isum.lo && cg->isum.hi == ct->isum.hi, "exact total");
        CHECK(c, cg->overflow == ct->overflow, "overflow %lld, twin %lld", (long long)cg->overflow,
              (long long)ct->overflow);
        return;
    }
    CHECK(c, totals_agree(cg->hi + cg->lo, ct->hi + ct->lo, abs), "total %.17g, twin %.17g",
          cg->hi + cg->lo, ct->hi + ct->lo);
    const int ysame =
        (isnan(cg->yprev) && isnan(ct->yprev)) || memcmp(&cg->yprev, &ct->yprev, 8) == 0;
    CHECK(c, ysame && memcmp(&cg->xprev, &ct->xprev, 8) == 0, "last sample");
}

/* One scan on the device (cumint: x / dx) from carry *cr into d's output. */
static int gpu_scan(const tcase *c, int cumint, const void *y, const double *x, double dx,
                    int64_t n, gp_scan_carry *cr, void *out)
{
    const int rc = cumint ? G->cumint(c->t, y, x, dx, n, cr, out) : G->cumsum(c->t, y, n, cr, out);
    if (rc) failf(c, "%s: %s", cumint ? "cumint" : "cumsum", G->last_error());
    return rc;
}

/* sum |term| of the whole sequence (the scale of the float bound); 0 for integer cumsum. */
static double abs_terms(const tcase *c, int cumint, const void *y, const double *x, double dx)
{
    ref_f r;
    ref_f_start(&r);
    for (int64_t i = 0; i < c->n; i++) {
        const double v = ref_elem_d(c->t, y, i);
        if (!cumint) ref_f_add(&r, isnan(v) ? 0.0 : v);
        else if (i > 0) ref_f_add(&r, ref_trap_term(v, ref_elem_d(c->t, y, i - 1), x, i, dx));
    }
    return r.abs;
}

/* Pieces and totals-only calls on the device, against the whole scan (got). */
static void check_pieces(const tcase *c, int cumint, const dev_case *d, int off, const void *y,
                         const double *x, double dx, const void *got, const gp_scan_carry *ct,
                         double abs)
{
    const size_t sz = gp_dtype_size(c->t);
    int64_t cut[7];
    const int np = 1 + (int)(rnd() % 6);
    gp_test_random_cuts(cut, np, c->n, rnd);
    gp_scan_carry p = gp_scan_carry_start(0), q = gp_scan_carry_start(0);
    for (int k = 0; k < np; k++) {
        const void *yk = (const char *)d->y + (size_t)cut[k] * sz;
        const double *xk = d->x ? d->x + cut[k] : NULL;
        const int64_t m = cut[k + 1] - cut[k];
        if (gpu_scan(c, cumint, yk, xk, dx, m, &p, (char *)d->out + (size_t)cut[k] * 8) ||
            gpu_scan(c, cumint, yk, xk, dx, m, &q, NULL))
            return;
    }
    void *pieces = xmalloc((size_t)c->n * 8);
    if (dev_result(c, d, off, pieces) == 0) {
        if (!gp_dtype_is_float(c->t) && !cumint) {
            const int64_t upto = ct->overflow >= 0 ? ct->overflow : c->n;
            CHECK(c, memcmp(pieces, got, (size_t)upto * 8) == 0,
                  "%d pieces: not the whole's bits", np);
            CHECK(c, q.isum.lo == ct->isum.lo && q.isum.hi == ct->isum.hi,
                  "totals only: exact total");
            CHECK(c, p.overflow == ct->overflow, "%d pieces: overflow %lld", np,
                  (long long)p.overflow);
        } else {
            check_outputs(c, cumint, y, x, dx, pieces, NULL, ct);
            CHECK(c, totals_agree(q.hi + q.lo, ct->hi + ct->lo, abs),
                  "totals only: %.17g, twin %.17g", q.hi + q.lo, ct->hi + ct->lo);
        }
        CHECK(c, q.index == c->n && p.index == c->n, "pieces: index");
    }
    free(pieces);
}

/* One case: the twin, the GPU whole (twice: the same bits), in pieces, totals only. */
static void run_case(gp_dtype t, int64_t n, int dist, int cumint, int algo, int off)
{
    char name[64];
    snprintf(name, sizeof name, "%s/%s%s", cumint ? "cumint" : "cumsum",
             algo == GP_SCAN_ALGO_RTS ? "rts" : "lookback", off ? "/misaligned" : "");
    const tcase c = {name, t, n, scan_dist_names[dist]};
    gp_scan_algo_set(algo);
    void *y = xmalloc((size_t)n * gp_dtype_size(t));
    ref_fill(t, dist, y, n, rnd);
    double *x = NULL, dx = 0.375;
    if (cumint && (rnd() & 1)) {
        x = xmalloc((size_t)n * 8);
        for (int64_t i = 0; i < n; i++)
            x[i] = (i ? x[i - 1] : -3.0) + (double)(rnd() >> 11) * 0x1p-60;
    }
    void *twin = xmalloc((size_t)n * 8), *got = xmalloc((size_t)n * 8);
    void *again = xmalloc((size_t)n * 8);
    gp_scan_carry ct = gp_scan_carry_start(0), cg = gp_scan_carry_start(0), c2 = cg;
    const int trc = cumint ? gp_cpu_cumint(t, y, x, dx, n, &ct, twin)
                           : gp_cpu_cumsum(t, y, n, &ct, twin);
    CHECK(&c, trc == GP_OK, "twin: %s", gp_cpu_last_error());
    dev_case d;
    const double abs = abs_terms(&c, cumint, y, x, dx);
    const int ran = dev_setup(&c, &d, y, x, off) == 0 &&
                    gpu_scan(&c, cumint, d.y, d.x, dx, n, &cg, d.out) == 0 &&
                    dev_result(&c, &d, off, got) == 0;
    if (ran) {
        check_outputs(&c, cumint, y, x, dx, got, twin, &ct);
        check_carry(&c, cumint, &cg, &ct, abs);
        if (gpu_scan(&c, cumint, d.y, d.x, dx, n, &c2, d.out) == 0 &&
            dev_result(&c, &d, off, again) == 0)
            CHECK(&c, memcmp(got, again, (size_t)n * 8) == 0 && memcmp(&cg, &c2, sizeof cg) == 0,
                  "a second run gives other bits");
        check_pieces(&c, cumint, &d, off, y, x, dx, got, &ct, abs);
    }
    dev_free(&d);
    free(y);
    free(x);
    free(twin);
    free(got);
    free(again);
}

/* Overflow at the edge, on the device: from carries near the limit (the 4-byte types past
 * their fast path), the first index and the values before it; an overflow in an earlier
 * piece kept. */
static void test_overflow(void)
{
    const int64_t i64[] = {INT64_MAX - 3, 3, -5, 5, 1, 7};
    const uint64_t u64[] = {UINT64_MAX - 1, 1, 0, 1, 5};
    const int32_t ones[6] = {1, 1, 1, 1, 1, 1};
    const struct { gp_dtype t; const void *y; int64_t n; gp_i128 start; int64_t want; } k[] = {
        {GP_I64, i64, 6, {0, 0}, 4},
        {GP_U64, u64, 5, {0, 0}, 3},
        {GP_I32, ones, 6, {(uint64_t)(INT64_MAX - 5), 0}, 5},
        {GP_I32, ones, 6, {(uint64_t)(INT64_MAX - 6), 0}, -1},
        {GP_I64, i64, 4, {0, 0}, -1},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        const tcase c = {"overflow", k[i].t, k[i].n, "edge"};
        void *d = G->alloc((size_t)k[i].n * 8), *o = G->alloc((size_t)k[i].n * 8);
        int64_t got[8], want[8];
        gp_scan_carry cg = gp_scan_carry_start(10), ct = cg;
        cg.isum = ct.isum = k[i].start;
        if (d && o && G->upload(d, k[i].y, (size_t)k[i].n * gp_dtype_size(k[i].t)) == 0 &&
            gpu_scan(&c, 0, d, NULL, 0, k[i].n, &cg, o) == 0 &&
            G->download(got, o, (size_t)k[i].n * 8) == 0) {
            gp_cpu_cumsum(k[i].t, k[i].y, k[i].n, &ct, want);
            const int64_t first = k[i].want < 0 ? -1 : 10 + k[i].want;
            CHECK(&c, cg.overflow == first && cg.overflow == ct.overflow,
                  "case %zu: overflow %lld, twin %lld", i, (long long)cg.overflow,
                  (long long)ct.overflow);
            const int64_t upto = k[i].want < 0 ? k[i].n : k[i].want;
            CHECK(&c, memcmp(got, want, (size_t)upto * 8) == 0, "case %zu: values before it", i);
        } else {
            failf(&c, "case %zu: %s", i, G->last_error());
        }
        if (d) G->free(d);
        if (o) G->free(o);
    }
}

/* n = 0 and the argument errors. */
static void test_api(void)
{
    const tcase c = {"api", GP_F64, 4, "-"};
    double *d = G->alloc(64);
    gp_scan_carry cr = gp_scan_carry_start(0);
    CHECK(&c, G->cumsum(GP_F64, d, 0, &cr, d + 4) == GP_OK && cr.index == 0, "n = 0");
    CHECK(&c, G->cumint(GP_F64, NULL, NULL, 1.0, 0, &cr, NULL) == GP_OK, "cumint n = 0");
    CHECK(&c, G->cumsum((gp_dtype)9, d, 4, &cr, d + 4) == GP_EINVAL, "bad dtype");
    CHECK(&c, G->cumsum(GP_F64, d, -1, &cr, d + 4) == GP_EINVAL, "n < 0");
    CHECK(&c, G->cumsum(GP_F64, NULL, 4, &cr, d + 4) == GP_EINVAL, "NULL y");
    CHECK(&c, G->cumsum(GP_F64, d, 4, NULL, d + 4) == GP_EINVAL, "NULL carry");
    CHECK(&c, G->cumsum(GP_F64, d, 4, &cr, d + 2) == GP_EINVAL, "overlap");
    CHECK(&c, G->cumint(GP_F64, d, NULL, NAN, 4, &cr, d + 4) == GP_EINVAL, "dx NaN");
    CHECK(&c, G->last_error()[0] != '\0', "last_error empty after a failure");
    G->free(d);
}

int main(int argc, char **argv)
{
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    if (argc > 1 && !quick) {
        fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
        return 2;
    }
    char why[256] = "";
    if (gp_cuda_device_count() == 0) {
        if (gp_backend_cuda(0, why, sizeof why) == NULL && why[0] != '\0')
            printf("SKIP: %s\n", why);
        else
            printf("SKIP: no CUDA device visible (gp_cuda_device_count() == 0)\n");
        return 77;
    }
    G = gp_backend_cuda(0, why, sizeof why);
    if (!G) {
        printf("FAIL case=init: gp_backend_cuda(0): %s\n0 passed, 1 failed\n", why);
        return 1;
    }
    uint64_t seed = 20270127u;
    const char *se = getenv("GPUPRIM_TEST_SEED");
    if (se && *se) seed = strtoull(se, NULL, 0);
    g_rng = seed;
    printf("test_gpu_scan: seed %" PRIu64 " (GPUPRIM_TEST_SEED)%s\n", seed,
           quick ? "; --quick" : "");
    static const int64_t sizes[] = {0,      1,      2,      31,      32,          33,
                                    63,     64,     65,     4095,    4096,        4097,
                                    65537,  131071, 131072, 131073,  1000003,     (1 << 21) + 1,
                                    (1 << 24) + 3};
    const int algos[2] = {GP_SCAN_ALGO_LOOKBACK, GP_SCAN_ALGO_RTS};
    for (int t = 0; t < GP_NDTYPES; t++) {
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            const int64_t n = sizes[k];
            if (quick && n > 131073) continue;
            for (int dist = 0; dist < SD_COUNT; dist++) {
                if (n > 131073 && dist != SD_UNIFORM && dist != SD_SPECIAL) continue;
                if (n > (1 << 21) + 1 && dist != SD_UNIFORM) continue;
                for (int a = 0; a < 2; a++)
                    for (int cumint = 0; cumint < 2; cumint++)
                        run_case((gp_dtype)t, n, dist, cumint, algos[a], (int)(rnd() % 4 == 0));
            }
        }
        printf("  %s done (%lld passed, %lld failed so far)\n", gp_dtype_name((gp_dtype)t), g_pass,
               g_fail);
        fflush(stdout);
    }
    gp_scan_algo_set(0);
    test_overflow();
    test_api();
    printf("largest error / sum |term|: cumsum %.2e, cumint %.2e (bound %.2e)\n", g_maxerr[0],
           g_maxerr[1], SCAN_BOUND);
    printf("%lld passed, %lld failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}

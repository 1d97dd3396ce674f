/* test_scan_fold.c — the float carry between the tiles of the CUDA scans
 * (kernels/cuda_scan.cuh), emulated on the host with the same arithmetic (scan_dd.h's
 * gp_dd_add2, gp_dd_round, gp_dd_norm, gp_scan_step):
 *   - tile totals with NaN of assorted signs and payloads, +-inf, -0.0 and finite values of
 *     many magnitudes (so that the compensation term and its renormalisation every 32 tiles
 *     matter), 1100 tiles (three levels of the look-back's groups of 32);
 *   - the look-back as cuda_scan.cuh computes it: the group sums of each level folded by
 *     warp_fold's fixed shape, published by each group's last tile, and each tile's carry the
 *     piece's carry plus the levels' folds, level 0 first;
 *   - three copies of the code, the publishing folds, the look-back's folds and the
 *     outputs, whose additions keep different NaNs (the first operand's, the second's, or
 *     their own default NaN; inf - inf each its own), as the copies nvcc inlines and the
 *     hardware may: GP_SCAN_ADD, defined here before scan_dd.h.
 * Checked: every assignment of copies gives the same bits (each tile's carry, its outputs,
 * the total the host receives: what test_gpu_scan compares run to run); a non-finite carry
 * or output is its value class as a sequential sum has it (+inf, -inf, or
 * 0x7FF8000000000000 once a NaN or both infinities came); the reduce-then-scan's carries
 * (segments of 32 tiles folded from the identity, their totals scanned as k_segscan does)
 * give the same non-finite bits.
 * Prints the seed (GPUPRIM_TEST_SEED reproduces a run) and "N passed, N failed"; exit 0 / 1.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* The emulated machine's addition, as the copy of the code in g_copy has it. */
static int g_copy;
static double fold_add(double a, double b);
#define GP_SCAN_ADD(a, b) fold_add((a), (b))
#include "scan_dd.h"

#include "test_check.h" /* CHECK, CTX */
#include "test_rng.h"   /* g_rng, rnd, rnd_unit */

#define NT 1100  /* tiles */
#define NP 4     /* outputs per tile (tile-local prefixes) */
#define FAN 32   /* cuda_scan.cuh's LB_FAN */
#define LEVELS 3 /* its levels for NT tiles: the fewest with NT <= FAN^LEVELS */
#define SEG 32   /* cuda_scan.cuh's SEG_TILES */
#define NCOPY 3

static uint64_t bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}
static double from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* The NaN of inf - inf for each copy: copies 0 and 1 are one machine (x86's default NaN)
 * with the operands of an addition in either order, copy 2 another machine. */
static const uint64_t copy_nan[NCOPY] = {0xFFF8000000000000ull, 0xFFF8000000000000ull,
                                         0x7FFFFFFFFFFFFFFFull};

/* a + b as copy g_copy computes it: a NaN operand comes back quieted; of two, copy 0 keeps
 * the first, copy 1 the second, copy 2 gives its own NaN; an invalid sum the copy's NaN. */
static double fold_add(double a, double b)
{
    const int na = a != a, nb = b != b;
    if (na && nb && g_copy == 2) return from_bits(copy_nan[2]);
    if (na || nb) {
        const double n = (na && (!nb || g_copy == 0)) ? a : b;
        return from_bits(bits(n) | 0x0008000000000000ull);
    }
    const double s = a + b;
    return s == s ? s : from_bits(copy_nan[g_copy]);
}

/* ---- the data ------------------------------------------------------------------------------ */

enum { D_FINITE, D_PINF, D_BOTHINF, D_NAN, D_ALL, D_LATE, D_COUNT };
static const char *const dist_names[D_COUNT] = {"finite", "+inf", "+-inf", "NaN", "all",
                                                "late"};

static double g_total[NT];      /* each tile's float64 total */
static double g_pref[NT][NP];   /* prefixes inside each tile (the outputs' p) */
static double g_start_s, g_start_c; /* the piece's carry (tile 0's) */

/* A NaN of one of several signs and payloads (quiet: arithmetic made it). */
static double any_nan(void)
{
    static const uint64_t nb[] = {0x7FF8000000000000ull, 0xFFF8000000000000ull,
                                  0x7FF8000000000123ull, 0xFFFC0000DEADBEEFull,
                                  0x7FFFFFFFFFFFFFFFull};
    return from_bits(nb[rnd() % (sizeof nb / sizeof nb[0])]);
}

/* A special value of the classes distribution d allows, or a finite one for D_FINITE. */
static double special(int d)
{
    const uint64_t r = rnd();
    switch (d) {
    case D_PINF: return INFINITY;
    case D_BOTHINF: return (r & 1) ? INFINITY : -INFINITY;
    case D_NAN: return any_nan();
    case D_ALL:
    case D_LATE: return (r % 3 == 0) ? any_nan() : (r % 3 == 1) ? INFINITY : -INFINITY;
    default: return 1.0;
    }
}

/* Tile totals and prefixes of distribution d: finite values of magnitudes 2^-20 .. 2^40
 * (rounding errors for the compensation), some -0.0, specials in one tile of 16 (D_LATE:
 * only from tile 200 on, after a long finite carry), each special tile with a special
 * prefix too. */
static void fill(int d)
{
    for (int j = 0; j < NT; j++) {
        const uint64_t r = rnd();
        double v = ldexp(rnd_unit() - 0.5, (int)(r % 61) - 20);
        if (r % 8 == 1) v = -0.0;
        const int sp = d != D_FINITE && r % 16 == 3 && (d != D_LATE || j >= 200);
        if (sp) v = special(d);
        g_total[j] = v;
        g_pref[j][0] = ldexp(rnd_unit() - 0.5, (int)(rnd() % 41) - 10);
        g_pref[j][1] = v;
        g_pref[j][2] = sp ? special(d) : rnd_unit();
        g_pref[j][3] = -0.0;
    }
    g_start_s = -0.0;
    g_start_c = -0.0;
    if (rnd() & 1) {
        g_start_s = 1234.5 + rnd_unit();
        g_start_c = ldexp(rnd_unit() - 0.5, -45);
    }
}

/* ---- the look-back ------------------------------------------------------------------------- */

typedef struct carry {
    double s, c;
} carry;

/* What a scan of the tiles leaves: each tile's carry and inclusive prefix (its carry plus
 * its total; the device computes it for the last tile only: the total), its outputs, and the
 * total as the host receives it (set_float_total: normalised). */
typedef struct result {
    carry e[NT], inc[NT];
    double out[NT][NP];
    carry total;
} result;

/* cuda_scan.cuh's warp_fold: lane j holds term j (the identity past the terms); lanes j and
 * j + off added for off = 16, 8, 4, 2, 1, by copy g_copy. */
static carry warp_fold(carry v[FAN])
{
    for (int off = FAN / 2; off > 0; off >>= 1)
        for (int j = 0; j < off; j++) gp_dd_add2(&v[j].s, &v[j].c, v[j + off].s, v[j + off].c);
    return v[0];
}

static carry g_sum[LEVELS][NT]; /* each level's group sums; level 0: the tiles' totals */

/* The group sums as each group's last tile publishes them, by copy cp: entry k of level
 * l + 1 the fold of entries 32k .. 32k + 31 of level l (full groups only: nothing reads a
 * short last group's sum). */
static void group_sums(int cp)
{
    g_copy = cp;
    for (long t = 0; t < NT; t++) g_sum[0][t] = (carry){g_total[t], 0.0};
    long len = NT;
    for (int l = 0; l + 1 < LEVELS; l++, len /= FAN)
        for (long k = 0; k < len / FAN; k++) {
            carry v[FAN];
            for (int j = 0; j < FAN; j++) v[j] = g_sum[l][k * FAN + j];
            g_sum[l + 1][k] = warp_fold(v);
        }
}

/* The carry into tile T by copy cp (cuda_scan.cuh's lookback): at each level l the d_l
 * group sums before T's ancestor in their parent folded, the folds added level 0 first,
 * then their sum added to the piece's carry. */
static carry lookback(long T, int cp)
{
    g_copy = cp;
    carry below = {-0.0, -0.0};
    for (int l = 0; l < LEVELS; l++) {
        const long a = T >> (5 * l);
        const int d = (int)(a & (FAN - 1));
        carry v[FAN];
        for (int j = 0; j < FAN; j++) v[j] = j < d ? g_sum[l][a - d + j] : (carry){-0.0, -0.0};
        const carry f = warp_fold(v);
        gp_dd_add2(&below.s, &below.c, f.s, f.c);
    }
    carry e = {g_start_s, g_start_c};
    gp_dd_add2(&e.s, &e.c, below.s, below.c);
    return e;
}

/* One single-pass scan of the tiles (k_lookback): the group sums and the last tile's total
 * by copy cp[0], the look-back by cp[1], the outputs by cp[2]. */
static void run_lookback(const int cp[3], result *r)
{
    group_sums(cp[0]);
    for (long T = 0; T < NT; T++) {
        const carry e = lookback(T, cp[1]);
        r->e[T] = e;
        carry i = e;
        g_copy = cp[0];
        gp_dd_add2(&i.s, &i.c, g_total[T], 0.0);
        r->inc[T] = i;
        g_copy = cp[2];
        for (int k = 0; k < NP; k++) r->out[T][k] = gp_dd_round(e.s, e.c, g_pref[T][k]);
    }
    r->total = r->inc[NT - 1];
    gp_dd_norm(&r->total.s, &r->total.c);
}

/* The reduce-then-scan of the tiles (k_segments, k_segscan: one thread a segment while
 * there are at most 1024), copy cp for all of it: the carry into each tile, the outputs. */
static void run_rts(int cp, result *r)
{
    enum { NS = (NT + SEG - 1) / SEG };
    carry tot[NS], x[NS], sx[NS], exc[NS];
    g_copy = cp;
    for (int s = 0; s < NS; s++) {
        tot[s] = (carry){-0.0, -0.0};
        for (long T = (long)s * SEG; T < NT && T < (long)(s + 1) * SEG; T++)
            gp_scan_step(&tot[s].s, &tot[s].c, g_total[T], T);
        x[s] = sx[s] = tot[s];
    }
    for (int d = 1; d < NS; d <<= 1) { /* Hillis-Steele, lower + own, as k_segscan */
        carry lower[NS];
        for (int s = d; s < NS; s++) lower[s] = sx[s - d];
        for (int s = d; s < NS; s++) {
            carry v = lower[s];
            gp_dd_add2(&v.s, &v.c, x[s].s, x[s].c);
            x[s] = sx[s] = v;
        }
    }
    for (int s = 0; s < NS; s++) {
        exc[s] = (carry){g_start_s, g_start_c};
        if (s > 0) gp_dd_add2(&exc[s].s, &exc[s].c, sx[s - 1].s, sx[s - 1].c);
        carry e = exc[s];
        for (long T = (long)s * SEG; T < NT && T < (long)(s + 1) * SEG; T++) {
            r->e[T] = e;
            for (int k = 0; k < NP; k++) r->out[T][k] = gp_dd_round(e.s, e.c, g_pref[T][k]);
            gp_scan_step(&e.s, &e.c, g_total[T], T);
            r->inc[T] = e;
        }
    }
}

/* ---- the checks ---------------------------------------------------------------------------- */

/* Value classes of a sequential float64 sum. */
enum { C_FIN = 0, C_PINF = 1, C_NINF = 2, C_NAN = 3 };
static int class_of(double v)
{
    return v != v ? C_NAN : v == INFINITY ? C_PINF : v == -INFINITY ? C_NINF : C_FIN;
}
static int class_add(int a, int b)
{
    if (a == C_NAN || b == C_NAN || (a | b) == 3) return C_NAN;
    return a | b;
}

/* 1 when v is what class k must give: +inf, -inf, the one NaN's bits, or finite. */
static int is_class(double v, int k)
{
    switch (k) {
    case C_NAN: return bits(v) == GP_SCAN_NAN_BITS;
    case C_PINF: return v == INFINITY;
    case C_NINF: return v == -INFINITY;
    default: return isfinite(v);
    }
}

/* The carries (their compensation terms 0 once non-finite), prefixes and outputs of r
 * against the sequential rule of value classes: one check. */
static void check_classes(const result *r, const char *what)
{
    int bad = 0, k = class_of(g_start_s);
    char why[200] = "";
    for (long T = 0; T < NT; T++) {
        int ok = is_class(r->e[T].s, k) && (k == C_FIN ? isfinite(r->e[T].c) : r->e[T].c == 0.0);
        for (int p = 0; p < NP; p++)
            ok &= is_class(r->out[T][p], class_add(k, class_of(g_pref[T][p])));
        if (!ok && bad == 0)
            snprintf(why, sizeof why, "tile %ld: carry %#" PRIx64 " %#" PRIx64 ", outputs %#"
                     PRIx64 " %#" PRIx64 " (class %d)", T, bits(r->e[T].s), bits(r->e[T].c),
                     bits(r->out[T][1]), bits(r->out[T][2]), k);
        k = class_add(k, class_of(g_total[T]));
        bad += !ok || !is_class(r->inc[T].s, k);
    }
    CHECK(bad == 0, "%s: %d tiles not the sequential rule's value classes; %s", what, bad, why);
}

/* The tiles where a and b differ in any bit (carry, prefix, outputs); the first described. */
static int diff_tiles(const result *a, const result *b, char *why, size_t len)
{
    int n = 0;
    for (long T = 0; T < NT; T++) {
        const int same = memcmp(&a->e[T], &b->e[T], sizeof(carry)) == 0 &&
                         memcmp(&a->inc[T], &b->inc[T], sizeof(carry)) == 0 &&
                         memcmp(a->out[T], b->out[T], sizeof a->out[T]) == 0;
        if (!same && n++ == 0)
            snprintf(why, len, "tile %ld: carry %#" PRIx64 " vs %#" PRIx64 ", prefix %#" PRIx64
                     " vs %#" PRIx64, T, bits(a->e[T].s), bits(b->e[T].s), bits(a->inc[T].s),
                     bits(b->inc[T].s));
    }
    return n;
}

/* The non-finite bits of the reduce-then-scan's r against the look-back's l. */
static int diff_nonfinite(const result *l, const result *r)
{
    int n = 0;
    for (long T = 0; T < NT; T++) {
        int same = isfinite(l->e[T].s) ? isfinite(r->e[T].s) : bits(l->e[T].s) == bits(r->e[T].s);
        for (int p = 0; p < NP; p++)
            same &= isfinite(l->out[T][p]) ? isfinite(r->out[T][p])
                                           : bits(l->out[T][p]) == bits(r->out[T][p]);
        n += !same;
    }
    return n;
}

/* One distribution: each assignment of copies against the first (another build or backend
 * inlines the additions differently), the reduce-then-scan's non-finite bits against the
 * look-back's. */
static void test_dist(int d)
{
    static const int copies[][3] = {{0, 1, 2}, {1, 0, 0}, {2, 2, 1}, {1, 2, 0}, {0, 0, 0}};
    static result first, r;
    fill(d);
    int worst = 0;
    for (size_t c = 0; c < sizeof copies / sizeof copies[0]; c++) {
        CTX("%s, copies %d%d%d", dist_names[d], copies[c][0], copies[c][1], copies[c][2]);
        result *dst = c > 0 ? &r : &first;
        run_lookback(copies[c], dst);
        check_classes(dst, "look-back");
        if (dst == &first) continue;
        char why[200] = "";
        const int n = diff_tiles(&first, dst, why, sizeof why);
        worst = n > worst ? n : worst;
        CHECK(n == 0, "%d of %d tiles differ in bits from the first copies'; %s", n, NT, why);
        CHECK(memcmp(&first.total, &dst->total, sizeof(carry)) == 0,
              "the total %#" PRIx64 " vs %#" PRIx64, bits(dst->total.s), bits(first.total.s));
    }
    for (int cp = 0; cp < NCOPY; cp++) {
        CTX("%s, reduce-then-scan, copy %d", dist_names[d], cp);
        run_rts(cp, &r);
        check_classes(&r, "reduce-then-scan");
        const int n = diff_nonfinite(&first, &r);
        CHECK(n == 0, "%d tiles whose non-finite bits are not the look-back's", n);
    }
    CTX("%s", "");
    printf("  %-7s %zu copy assignments: at most %d of %d tiles differed\n", dist_names[d],
           sizeof copies / sizeof copies[0], worst, NT);
}

/* The helpers themselves: the one NaN, a class kept through the step and the renormalising
 * step at tile 31, the finite step the old one's bits. */
static void test_step(void)
{
    CTX("gp_scan_step");
    g_copy = 0;
    CHECK(bits(gp_scan_nan()) == 0x7FF8000000000000ull, "gp_scan_nan %#" PRIx64,
          bits(gp_scan_nan()));
    for (long j = 30; j < 33; j++) {
        carry e = {-0.0, -0.0};
        gp_scan_step(&e.s, &e.c, from_bits(0xFFF8000000000001ull), j);
        CHECK(bits(e.s) == GP_SCAN_NAN_BITS && bits(e.c) == 0, "j %ld: NaN in: %#" PRIx64, j,
              bits(e.s));
        e = (carry){INFINITY, 0.0};
        gp_scan_step(&e.s, &e.c, 1.0, j);
        CHECK(e.s == INFINITY && bits(e.c) == 0, "j %ld: inf stays inf, c 0", j);
        gp_scan_step(&e.s, &e.c, -INFINITY, j);
        CHECK(bits(e.s) == GP_SCAN_NAN_BITS && bits(e.c) == 0, "j %ld: inf - inf", j);
    }
    carry e = {1.0, 0x1.8p-52}; /* c of 1.5 ulp(s): not a double-double */
    gp_scan_step(&e.s, &e.c, 0.0, 5);
    CHECK(e.s == 1.0 && e.c == 0x1.8p-52, "tile 5: not renormalised: %a %a", e.s, e.c);
    gp_scan_step(&e.s, &e.c, 0.0, 31); /* 1 + 1.5 ulp: 1 + 2 ulp - 0.5 ulp */
    CHECK(e.s == 1.0 + 0x1p-51 && e.c == -0x1p-53, "tile 31: renormalised: %a %a", e.s, e.c);
    double hi = -0.0, lo = -0.0;
    gp_dd_add(&hi, &lo, from_bits(0xFFFC0000DEADBEEFull));
    CHECK(bits(hi) == GP_SCAN_NAN_BITS && lo == 0.0, "gp_dd_add of a NaN: %#" PRIx64, bits(hi));
    hi = from_bits(0xFFF8000000000000ull);
    lo = 1.0;
    gp_dd_norm(&hi, &lo);
    CHECK(bits(hi) == GP_SCAN_NAN_BITS && lo == 0.0, "gp_dd_norm of a NaN: %#" PRIx64, bits(hi));
    CHECK(bits(gp_dd_round(1.0, 0.0, from_bits(0xFFF8000000000000ull))) == GP_SCAN_NAN_BITS,
          "gp_dd_round to a NaN");
    CHECK(gp_dd_round(-INFINITY, 0.0, 3.0) == -INFINITY, "gp_dd_round of -inf");
}

int main(void)
{
    uint64_t seed = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull;
    const char *se = getenv("GPUPRIM_TEST_SEED");
    if (se && *se) seed = strtoull(se, NULL, 0);
    g_rng = seed;
    printf("test_scan_fold: seed %" PRIu64 " (GPUPRIM_TEST_SEED)\n", seed);
    test_step();
    for (int d = 0; d < D_COUNT; d++) test_dist(d);
    return gp_check_done("test_scan_fold");
}

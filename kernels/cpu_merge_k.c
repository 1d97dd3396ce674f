/* cpu_merge_k.c — the one-pass merge of up to GP_MERGE_K_MAX sorted runs on the host's
 * threads (gp_cpu_merge_k, cpu_merge_k.h): the output cut into parts, each part's start in
 * every run found by co-ranking, and each part merged in four segments by four loser trees
 * that advance together. The trees compare packed words where the order fits: one word for
 * 4-byte keys by key, two for 4-byte keys by (key, value) and 8-byte keys by key, three for
 * 8-byte keys by (key, value). Internal to kernels/.
 */
#include "cpu_common.h"
#include "cpu_merge_k.h"
#include "host.h"

#include <string.h>

#define K_MAX GP_MERGE_K_MAX

/* One merge: the source's k runs and where the output goes. */
typedef struct kjob {
    int w, hv, st, k;
    const unsigned char *sk;
    const uint64_t *sv;
    unsigned char *dk;
    uint64_t *dv;
    int64_t n, run;
} kjob;

/* ---- co-ranking ---------------------------------------------------------------------------- */

/* The probe of a bisection: phase 0 bisects the key (the probe (z, all values)), phase 1 the
 * value under the key x (the probe (x, z); stable only). */
typedef struct probe {
    int phase;
    uint64_t x;
} probe;

/* 1 when source element i is at or before the probe's point z: key < z, or key == z (phase
 * 0); key < x, or key == x and value <= z (phase 1). */
static int at_or_before(const kjob *j, int64_t i, probe pr, uint64_t z)
{
    const uint64_t ki = kld(j->sk, j->w, i);
    if (pr.phase == 0) return ki <= z;
    return ki < pr.x || (ki == pr.x && j->sv[i] <= z);
}

/* The first element of the ascending window [lo, hi) of the source after the point z (hi
 * when none is). */
static int64_t upper(const kjob *j, int64_t lo, int64_t hi, probe pr, uint64_t z)
{
    while (lo < hi) {
        const int64_t m = lo + (hi - lo) / 2;
        if (at_or_before(j, m, pr, z)) lo = m + 1;
        else hi = m;
    }
    return lo;
}

/* The elements of run r at or before the point z: [start of run r, B[r]) of the windows B;
 * their count over all runs. */
static int64_t count_to(const kjob *j, const int64_t B[])
{
    int64_t sum = 0;
    for (int r = 0; r < j->k; r++) sum += B[r] - (int64_t)r * j->run;
    return sum;
}

/* The smallest point z with t or more elements at or before it, where each run r's windows
 * hold: [run start, A[r]) is at or before the point lo - 1 (none for lo = 0), [run start,
 * B[r]) at or before hi, and t is above the first count and at most the second. The window
 * elements [A[r], B[r]) narrow lo and hi first (the smallest and the largest of their
 * keys, or values in phase 1); on return A / B hold the counts at z - 1 / z. */
static uint64_t bisect(const kjob *j, int64_t t, probe pr, int64_t A[], int64_t B[])
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int r = 0; r < j->k; r++) {
        if (A[r] == B[r]) continue;
        const uint64_t first = pr.phase ? j->sv[A[r]] : kld(j->sk, j->w, A[r]);
        const uint64_t last = pr.phase ? j->sv[B[r] - 1] : kld(j->sk, j->w, B[r] - 1);
        lo = first < lo ? first : lo;
        hi = last > hi ? last : hi;
    }
    int64_t c[K_MAX];
    while (lo < hi) {
        const uint64_t z = lo + (hi - lo) / 2;
        for (int r = 0; r < j->k; r++) c[r] = upper(j, A[r], B[r], pr, z);
        const int reached = count_to(j, c) >= t;
        memcpy(reached ? B : A, c, (size_t)j->k * sizeof *c);
        if (reached) hi = z;
        else lo = z + 1;
    }
    return lo;
}

/* s[r] = the source position in run r where merged[t, ...) starts, 0 <= t <= n: the
 * elements before (key[, value]) point p all come first; of those equal to p, the earlier
 * runs' first. */
static void corank(const kjob *j, int64_t t, int64_t s[])
{
    int64_t A[K_MAX], B[K_MAX];
    for (int r = 0; r < j->k; r++) {
        A[r] = (int64_t)r * j->run;
        B[r] = j->n - A[r] < j->run ? j->n : A[r] + j->run;
    }
    if (t <= 0 || t >= j->n) {
        memcpy(s, t <= 0 ? A : B, (size_t)j->k * sizeof *s);
        return;
    }
    const probe p0 = {0, 0};
    const probe p1 = {1, bisect(j, t, p0, A, B)};
    if (j->st) (void)bisect(j, t, p1, A, B);
    int64_t rem = t - count_to(j, A); /* taken from the elements equal to the point */
    for (int r = 0; r < j->k; r++) {
        const int64_t take = B[r] - A[r] < rem ? B[r] - A[r] : rem;
        s[r] = A[r] + take;
        rem -= take;
    }
}

/* ---- the four segments of a part ---------------------------------------------------------- */

/* The part's four segments (the runs' shares [S[s][r], S[s + 1][r]), outputs from o on),
 * one loser tree of type TREE each, built by BUILD(&tree, s0, s1) and stepped by
 * STEP(&tree, output): the trees advance together while each has 16 or more outputs left
 * (four independent chains of loads and compares, where one tree waits on each step's
 * compares), then one by one. */
#define KW_RUN4(TREE, BUILD, STEP)                                                           \
    do {                                                                                     \
        TREE t_[4];                                                                          \
        int64_t at_[4], left_[4];                                                            \
        for (int s_ = 0; s_ < 4; s_++) {                                                     \
            BUILD(&t_[s_], S[s_], S[s_ + 1]);                                                \
            left_[s_] = count_to(j, S[s_ + 1]) - count_to(j, S[s_]);                         \
            at_[s_] = o;                                                                     \
            o += left_[s_];                                                                  \
        }                                                                                    \
        for (;;) {                                                                           \
            int64_t run_ = left_[0];                                                         \
            for (int s_ = 1; s_ < 4; s_++) run_ = left_[s_] < run_ ? left_[s_] : run_;       \
            if (run_ < 16) break;                                                            \
            for (int64_t i_ = 0; i_ < run_; i_++) {                                          \
                STEP(&t_[0], at_[0] + i_);                                                   \
                STEP(&t_[1], at_[1] + i_);                                                   \
                STEP(&t_[2], at_[2] + i_);                                                   \
                STEP(&t_[3], at_[3] + i_);                                                   \
            }                                                                                \
            for (int s_ = 0; s_ < 4; s_++) at_[s_] += run_, left_[s_] -= run_;               \
        }                                                                                    \
        for (int s_ = 0; s_ < 4; s_++)                                                       \
            for (int64_t i_ = 0; i_ < left_[s_]; i_++) STEP(&t_[s_], at_[s_] + i_);          \
    } while (0)

/* ---- the loser tree ----------------------------------------------------------------------- */

/* The leaves of a loser tree over the runs' shares [s0[r], s1[r]): their count (the runs
 * padded to a power of two, at least 2; the padding empty) and each one's p / e. */
static int kw_leaves(const kjob *j, const int64_t s0[], const int64_t s1[], int64_t p[],
                     int64_t e[])
{
    int nl = 2;
    while (nl < j->k) nl *= 2;
    for (int r = 0; r < nl; r++) {
        p[r] = r < j->k ? s0[r] : 0;
        e[r] = r < j->k ? s1[r] : 0;
    }
    return nl;
}

/* ---- the packed loser tree of 4-byte keys by key ----------------------------------------- */

/* A loser tree whose elements are packed words key << 8 | leaf (PK_DONE for a leaf with
 * nothing left: after every real word), so that one compare of words orders by key, then
 * run: node i in [1, nl) holds the loser word of its subtree's final, win the winner's. */
#define PK_DONE UINT64_MAX
typedef struct ptree {
    int nl;
    uint64_t win;
    int64_t p[K_MAX], e[K_MAX];
    uint64_t node[K_MAX];
} ptree;

/* Leaf r's word: its next key and r, or PK_DONE. */
CPU_INLINE uint64_t pk_word(const kjob *j, const ptree *t, int r)
{
    return t->p[r] < t->e[r] ? kld(j->sk, 4, t->p[r]) << 8 | (uint64_t)r : PK_DONE;
}

/* The packed tree of the runs' shares [s0[r], s1[r]) built: every leaf loaded, every
 * node's loser and the winner set. */
static void pk_build(const kjob *j, ptree *t, const int64_t s0[], const int64_t s1[])
{
    uint64_t w[2 * K_MAX];
    t->nl = kw_leaves(j, s0, s1, t->p, t->e);
    for (int r = 0; r < t->nl; r++) {
        w[t->nl + r] = pk_word(j, t, r);
    }
    for (int i = t->nl - 1; i >= 1; i--) {
        const uint64_t a = w[2 * i], b = w[2 * i + 1];
        w[i] = a < b ? a : b;
        t->node[i] = a < b ? b : a;
    }
    t->win = w[1];
}

/* One output of the packed tree t at (dk, dv)[o]: the winner written and its leaf
 * reloaded, then the smaller word climbs, the larger stays (min / max,
 * compiled to conditional moves). */
CPU_INLINE void pk_step(const kjob *j, ptree *t, int64_t o, int HV)
{
    const int c = (int)(t->win & 0xFF);
    kst(j->dk, 4, o, t->win >> 8);
    if (HV) j->dv[o] = j->sv[t->p[c]];
    t->p[c]++;
    uint64_t cur = pk_word(j, t, c);
    for (int nd = (c + t->nl) >> 1; nd >= 1; nd >>= 1) {
        const uint64_t l = t->node[nd];
        t->node[nd] = l < cur ? cur : l;
        cur = l < cur ? l : cur;
    }
    t->win = cur;
}

/* (dk, dv)[o, ...) = the merge of the runs' shares [S[0][r], S[4][r]) in four segments
 * (KW_RUN4) on packed trees (4-byte keys, by key). */
CPU_INLINE void kway_pk(const kjob *j, int64_t S[5][K_MAX], int64_t o, int HV)
{
#define PK_BUILD(t, s0, s1) pk_build(j, t, s0, s1)
#define PK_STEP(t, at) pk_step(j, t, at, HV)
    KW_RUN4(ptree, PK_BUILD, PK_STEP);
#undef PK_BUILD
#undef PK_STEP
}

/* ---- the loser tree of word pairs and triples ------------------------------------------ */

/* A loser tree whose elements are pairs (h, l) or, with X, triples (h, x, l) of words,
 * ordered as one wide number: 4-byte keys by (key, value): h = key << 32 | value >> 32, l =
 * value << 32 | leaf; 8-byte keys by key: h = key, l = leaf; 8-byte keys by (key, value)
 * (X): h = key, x = value, l = leaf. A leaf with nothing left has every word QW_DONE: after
 * every real element, whose leaf byte is below 16. Node i holds its loser's words. */
#define QW_DONE UINT64_MAX
typedef struct qtree {
    int nl;
    uint64_t wh, wx, wl;
    int64_t p[K_MAX], e[K_MAX];
    uint64_t nh[K_MAX], nx[K_MAX], nw[K_MAX];
} qtree;

/* 1 when the element (ha, xa, la) goes before (hb, xb, lb) (x ignored without X). */
#define QW_LESS(ha, xa, la, hb, xb, lb)                                                      \
    (((ha) < (hb)) |                                                                         \
     (((ha) == (hb)) & (X ? ((xa) < (xb)) | (((xa) == (xb)) & ((la) < (lb))) : (la) < (lb))))

/* Leaf r's words. */
CPU_INLINE void qw_words(const kjob *j, const qtree *t, int r, int W, int X, uint64_t *h,
                         uint64_t *x, uint64_t *l)
{
    if (t->p[r] >= t->e[r]) {
        *h = *x = *l = QW_DONE;
        return;
    }
    const uint64_t key = kld(j->sk, W, t->p[r]);
    const uint64_t v = W == 4 || X ? j->sv[t->p[r]] : 0;
    *h = W == 4 ? key << 32 | v >> 32 : key;
    *x = X ? v : 0;
    *l = W == 4 ? v << 32 | (uint64_t)r : (uint64_t)r;
}

/* The tree of the runs' shares [s0[r], s1[r]) built: every leaf loaded, every node's loser
 * and the winner set. */
CPU_INLINE void qw_build(const kjob *j, qtree *t, const int64_t s0[], const int64_t s1[], int W,
                         int X)
{
    uint64_t h[2 * K_MAX], x[2 * K_MAX], l[2 * K_MAX];
    t->nl = kw_leaves(j, s0, s1, t->p, t->e);
    for (int r = 0; r < t->nl; r++)
        qw_words(j, t, r, W, X, &h[t->nl + r], &x[t->nl + r], &l[t->nl + r]);
    for (int i = t->nl - 1; i >= 1; i--) {
        const int a = 2 * i, b = 2 * i + 1;
        const int w = QW_LESS(h[b], x[b], l[b], h[a], x[a], l[a]) ? b : a;
        h[i] = h[w], x[i] = x[w], l[i] = l[w];
        t->nh[i] = h[a ^ b ^ w], t->nx[i] = x[a ^ b ^ w], t->nw[i] = l[a ^ b ^ w];
    }
    t->wh = h[1], t->wx = x[1], t->wl = l[1];
}

/* One output of tree t at (dk, dv)[o]: the winner written and its leaf reloaded, then the
 * smaller element climbs its path, the larger stays (masks, not branches). */
CPU_INLINE void qw_step(const kjob *j, qtree *t, int64_t o, int W, int HV, int X)
{
    const int c = (int)(t->wl & 0xFF);
    kst(j->dk, W, o, W == 4 ? t->wh >> 32 : t->wh);
    if (HV) j->dv[o] = W == 4 ? t->wh << 32 | t->wl >> 32 : X ? t->wx : j->sv[t->p[c]];
    t->p[c]++;
    uint64_t h, x, l;
    qw_words(j, t, c, W, X, &h, &x, &l);
    for (int nd = (c + t->nl) >> 1; nd >= 1; nd >>= 1) {
        const uint64_t nh = t->nh[nd], nx = X ? t->nx[nd] : 0, nw = t->nw[nd];
        const uint64_t m = -(uint64_t)QW_LESS(nh, nx, nw, h, x, l);
        const uint64_t dh = (nh ^ h) & m, dx = (nx ^ x) & m, dl = (nw ^ l) & m;
        t->nh[nd] = nh ^ dh, t->nw[nd] = nw ^ dl;
        if (X) t->nx[nd] = nx ^ dx;
        h ^= dh, x ^= dx, l ^= dl;
    }
    t->wh = h, t->wx = x, t->wl = l;
}

/* (dk, dv)[o, ...) = the merge of the runs' shares [S[0][r], S[4][r]) in four segments
 * (KW_RUN4) on trees of word pairs (or triples with X). */
CPU_INLINE void kway_qw(const kjob *j, int64_t S[5][K_MAX], int64_t o, int W, int HV, int X)
{
#define QW_BUILD(t, s0, s1) qw_build(j, t, s0, s1, W, X)
#define QW_STEP(t, at) qw_step(j, t, at, W, HV, X)
    KW_RUN4(qtree, QW_BUILD, QW_STEP);
#undef QW_BUILD
#undef QW_STEP
}

/* Part p of np: merged[a, b), cut into four segments whose shares of the runs are found by
 * co-ranking, merged by the loser tree of its width and order (with constants). */
static void kpart(void *ctx, int p, int np)
{
    const kjob *j = ctx;
    const int64_t a = j->n / np * p + (p < j->n % np ? p : j->n % np);
    const int64_t b = a + j->n / np + (p < j->n % np ? 1 : 0);
    if (b <= a) return;
    int64_t S[5][K_MAX];
    for (int s = 0; s <= 4; s++) corank(j, s == 4 ? b : a + s * ((b - a) / 4), S[s]);
    if (j->w == 4 && !j->hv) kway_pk(j, S, a, 0);  /* by key */
    else if (j->w == 4 && !j->st) kway_pk(j, S, a, 1);
    else if (j->w == 4) kway_qw(j, S, a, 4, 1, 0);  /* by (key, value) */
    else if (!j->hv) kway_qw(j, S, a, 8, 0, 0);     /* by key */
    else if (!j->st) kway_qw(j, S, a, 8, 1, 0);
    else kway_qw(j, S, a, 8, 1, 1);                 /* by (key, value) */
}

void gp_cpu_merge_k(int w, int hv, int stable, const unsigned char *sk, const uint64_t *sv,
                    int64_t n, int64_t run, int np, unsigned char *dk, uint64_t *dv)
{
    kjob j = {w, hv, hv && stable, (int)((n - 1) / run + 1), sk, sv, dk, dv, n, run};
    if (np <= 1) kpart(&j, 0, 1);
    else gp_host_parallel(np, kpart, &j);
}

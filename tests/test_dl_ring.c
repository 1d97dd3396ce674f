/* test_dl_ring.c — the download ring (src/dl_ring.c) on the CPU backend and on a mock of it
 * whose downloads are really asynchronous: download_async poisons its destination at once
 * and the copy happens at the next download_wait, from what the source holds then, so a
 * device buffer written again before its download completed, or a staging buffer read
 * before it, shows in the outputs. Checked:
 *   - units of random sizes (0, 1, the capacity, odd byte counts), to two interleaved host
 *     outputs as the scans' are, with the ring finished at random piece ends: every byte
 *     in place, nothing in flight after each finish, the buffer handed out never one that
 *     travels, at most one download in flight; capacities of 1 byte to 9 MiB (the host's
 *     threads copy the larger units in parts);
 *   - the scans through the ring (cumsum and cumint units of 1000-element sub-pieces, as
 *     ph_scan.c runs them): the bits of the same calls writing host memory directly;
 *   - the synchronous ring when the second device buffer or either staging buffer cannot be
 *     allocated (no download_async then), and open's failure without the first device buffer;
 *   - a download_async or download_wait failing at the 1st to 4th call: the error returned,
 *     nothing in flight afterwards, every buffer freed by close; bytes > capacity: GP_EINVAL;
 *   - the plain CPU backend (downloads done on return).
 * Prints the seed (GPUPRIM_TEST_SEED reproduces a run) and "N passed, N failed"; exit 0 / 1.
 */
#include "dl_ring.h"
#include "host.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_check.h" /* CHECK, CTX, xmalloc */
#include "test_rng.h"   /* g_rng, rnd */

/* ---- the mock backend: the CPU backend with deferred downloads and injected failures ---- */

typedef struct pending {
    void *dst;
    const void *src;
    size_t bytes;
} pending;

static struct {
    pending q[4];         /* downloads in flight, in order */
    int nq, max_nq;
    long live, live_host; /* buffers allocated and not freed */
    int n_alloc, n_host_alloc, n_async, n_wait; /* calls so far */
    int fail_alloc, fail_host_alloc, fail_async, fail_wait; /* the call that fails (0: none) */
    char err[128];
} M;

static gp_backend g_mock;

static void *m_alloc(size_t b)
{
    if (++M.n_alloc == M.fail_alloc) {
        snprintf(M.err, sizeof M.err, "mock: alloc %d fails", M.n_alloc);
        return NULL;
    }
    M.live++;
    return malloc(b ? b : 1);
}
static void m_free(void *p)
{
    if (p) M.live--;
    free(p);
}
static void *m_host_alloc(size_t b)
{
    if (++M.n_host_alloc == M.fail_host_alloc) {
        snprintf(M.err, sizeof M.err, "mock: host_alloc %d fails", M.n_host_alloc);
        return NULL;
    }
    M.live_host++;
    return malloc(b ? b : 1);
}
static void m_host_free(void *p)
{
    if (p) M.live_host--;
    free(p);
}
static int m_download_async(void *host, const void *dev, size_t bytes)
{
    if (++M.n_async == M.fail_async || M.nq == 4) {
        snprintf(M.err, sizeof M.err, "mock: download_async %d fails", M.n_async);
        return GP_EDEVICE;
    }
    memset(host, 0xA5, bytes); /* undefined until the wait */
    M.q[M.nq++] = (pending){host, dev, bytes};
    if (M.nq > M.max_nq) M.max_nq = M.nq;
    return GP_OK;
}
static int m_download_wait(void)
{
    const int fail = ++M.n_wait == M.fail_wait;
    for (int k = 0; k < M.nq && !fail; k++) memcpy(M.q[k].dst, M.q[k].src, M.q[k].bytes);
    M.nq = 0;
    if (fail) snprintf(M.err, sizeof M.err, "mock: download_wait %d fails", M.n_wait);
    return fail ? GP_EDEVICE : GP_OK;
}
static const char *m_last_error(void) { return M.err; }

/* A fresh mock: no failures, counts zero. */
static const gp_backend *mock(int fail_alloc, int fail_host_alloc, int fail_async, int fail_wait)
{
    memset(&M, 0, sizeof M);
    M.fail_alloc = fail_alloc;
    M.fail_host_alloc = fail_host_alloc;
    M.fail_async = fail_async;
    M.fail_wait = fail_wait;
    g_mock = *gp_backend_cpu();
    g_mock.alloc = m_alloc;
    g_mock.free = m_free;
    g_mock.host_alloc = m_host_alloc;
    g_mock.host_free = m_host_free;
    g_mock.download_async = m_download_async;
    g_mock.download_wait = m_download_wait;
    g_mock.last_error = m_last_error;
    return &g_mock;
}

/* Whether a download in flight reads [p, p + bytes). */
static int travels(const void *p, size_t bytes)
{
    const char *a = p;
    for (int k = 0; k < M.nq; k++) {
        const char *s = M.q[k].src;
        if (a < s + M.q[k].bytes && s < a + bytes) return 1;
    }
    return 0;
}

/* ---- units of random bytes ----------------------------------------------------------- */

static void fill(unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(rnd() >> 56);
}

/* A unit size: 0, 1, cap, or uniform in [0, cap]. */
static size_t unit_size(size_t cap)
{
    switch (rnd() % 6) {
    case 0: return 0;
    case 1: return 1 < cap ? 1 : cap;
    case 2: return cap;
    default: return (size_t)(rnd() % (cap + 1));
    }
}

/* nunits units through a ring of cap bytes on backend be (mocked: is_mock), alternating
 * between two host outputs, the ring finished at random points and at the end; every byte
 * compared with the units themselves. `sync`: the ring must be synchronous. */
static void case_units(const gp_backend *be, int is_mock, size_t cap, int nunits, int sync)
{
    gp_dl_ring r;
    CHECK(gp_dl_ring_open(&r, be, cap) == 0, "open: %s", be->last_error());
    CHECK(gp_dl_ring_pipelined(&r) == !sync, "pipelined %d, want %d", gp_dl_ring_pipelined(&r),
          !sync);
    const size_t most = cap * (size_t)(nunits / 2 + 1);
    unsigned char *out[2] = {xmalloc(most), xmalloc(most)}, *ref[2] = {xmalloc(most),
                                                                      xmalloc(most)};
    size_t at[2] = {0, 0};
    for (int u = 0; u < nunits; u++) {
        const int w = u & 1;
        const size_t b = unit_size(cap);
        unsigned char *buf = gp_dl_ring_buffer(&r);
        if (is_mock) CHECK(!travels(buf, cap), "unit %d: the buffer handed out travels", u);
        fill(buf, b);
        memcpy(ref[w] + at[w], buf, b);
        CHECK(gp_dl_ring_push(&r, out[w] + at[w], b) == 0, "push %d: %s", u, be->last_error());
        at[w] += b;
        if (rnd() % 5 == 0 || u == nunits - 1) {
            CHECK(gp_dl_ring_finish(&r) == 0, "finish after %d: %s", u, be->last_error());
            if (is_mock) CHECK(M.nq == 0, "finish after %d: %d in flight", u, M.nq);
        }
    }
    for (int w = 0; w < 2; w++)
        CHECK(memcmp(out[w], ref[w], at[w]) == 0, "output %d (%zu bytes) differs", w, at[w]);
    if (is_mock) {
        CHECK(M.max_nq <= 1, "%d downloads in flight at once", M.max_nq);
        CHECK(!sync || M.n_async == 0, "a synchronous ring called download_async");
    }
    gp_dl_ring_close(&r);
    gp_dl_ring_close(&r); /* harmless twice */
    if (is_mock) CHECK(M.live == 0 && M.live_host == 0, "%ld device, %ld host buffers left",
                       M.live, M.live_host);
    for (int w = 0; w < 2; w++) {
        free(out[w]);
        free(ref[w]);
    }
}

/* ---- the scans through the ring, as ph_scan.c runs them ---------------------------------- */

/* n float64 samples in random pieces, each in sub-pieces of `sub` elements, cumsum and
 * cumint (dx) of each sub-piece into the ring, pushed to their places; the ring finished at
 * every piece's end. The bits must be those of the same calls writing host memory. */
static void case_scans(int64_t n, int64_t sub)
{
    const gp_backend *be = mock(0, 0, 0, 0);
    double *y = xmalloc((size_t)n * 8), *hs = xmalloc((size_t)n * 8), *hi = xmalloc((size_t)n * 8);
    double *rs = xmalloc((size_t)n * 8), *ri = xmalloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++) y[i] = (rnd_unit() - 0.5) * (double)(1 << (rnd() % 20));
    gp_dl_ring r;
    CHECK(gp_dl_ring_open(&r, be, (size_t)sub * 8) == 0 && gp_dl_ring_pipelined(&r), "open");
    gp_scan_carry cs = gp_scan_carry_start(0), ci = cs, ds = cs, di = cs;
    int rc = 0;
    for (int64_t p = 0; p < n && !rc;) {
        const int64_t np = 1 + (int64_t)(rnd() % (uint64_t)(3 * sub)), pn = n - p < np ? n - p : np;
        for (int64_t s = p; s < p + pn && !rc; s += sub) {
            const int64_t len = p + pn - s < sub ? p + pn - s : sub;
            rc = be->cumsum(GP_F64, y + s, len, &cs, gp_dl_ring_buffer(&r));
            if (!rc) rc = gp_dl_ring_push(&r, hs + s, (size_t)len * 8);
            if (!rc) rc = be->cumint(GP_F64, y + s, NULL, 0.5, len, &ci, gp_dl_ring_buffer(&r));
            if (!rc) rc = gp_dl_ring_push(&r, hi + s, (size_t)len * 8);
            if (!rc) rc = be->cumsum(GP_F64, y + s, len, &ds, rs + s);
            if (!rc) rc = be->cumint(GP_F64, y + s, NULL, 0.5, len, &di, ri + s);
        }
        if (!rc) rc = gp_dl_ring_finish(&r);
        p += pn;
    }
    CHECK(rc == 0, "scans: %s", be->last_error());
    CHECK(memcmp(hs, rs, (size_t)n * 8) == 0, "cumsum through the ring: not the direct bits");
    CHECK(memcmp(hi, ri, (size_t)n * 8) == 0, "cumint through the ring: not the direct bits");
    gp_dl_ring_close(&r);
    free(y);
    free(hs);
    free(hi);
    free(rs);
    free(ri);
}

/* ---- failures ---------------------------------------------------------------------------- */

/* A pipelined ring whose k-th download_async (async) or download_wait fails: the failing
 * push or finish returns GP_EDEVICE, nothing is in flight after it, close frees all. */
static void case_failure(int async, int k)
{
    CTX("%s %d fails", async ? "download_async" : "download_wait", k);
    const gp_backend *be = mock(0, 0, async ? k : 0, async ? 0 : k);
    const size_t cap = 64;
    unsigned char *out = xmalloc(cap * 8);
    gp_dl_ring r;
    CHECK(gp_dl_ring_open(&r, be, cap) == 0 && gp_dl_ring_pipelined(&r), "open");
    int rc = 0, u = 0;
    for (; u < 6 && !rc; u++) {
        fill(gp_dl_ring_buffer(&r), cap);
        rc = gp_dl_ring_push(&r, out + (size_t)u * cap, cap);
        if (!rc && u == 2) rc = gp_dl_ring_finish(&r);
    }
    if (!rc) rc = gp_dl_ring_finish(&r);
    CHECK(rc == GP_EDEVICE, "rc %d, want GP_EDEVICE", rc);
    CHECK(strstr(be->last_error(), "fails") != NULL, "last_error \"%s\"", be->last_error());
    CHECK(M.nq == 0, "%d downloads in flight after the failure", M.nq);
    CHECK(gp_dl_ring_finish(&r) == 0 && M.nq == 0, "finish after the failure");
    gp_dl_ring_close(&r);
    CHECK(M.live == 0 && M.live_host == 0, "%ld device, %ld host buffers left", M.live,
          M.live_host);
    free(out);
    CTX("%s", "");
}

/* Allocation failures: without the first device buffer open fails and holds nothing;
 * without the second or a staging buffer the ring is synchronous and right. */
static void case_alloc_failures(void)
{
    gp_dl_ring r;
    const gp_backend *be = mock(1, 0, 0, 0);
    CHECK(gp_dl_ring_open(&r, be, 100) == -1 && strstr(be->last_error(), "alloc 1"),
          "open without a device buffer");
    gp_dl_ring_close(&r);
    CHECK(M.live == 0 && M.live_host == 0, "buffers left after a failed open");
    for (int k = 0; k < 3; k++) {
        CTX("%s fails", k == 0 ? "alloc 2" : k == 1 ? "host_alloc 1" : "host_alloc 2");
        be = mock(k == 0 ? 2 : 0, k, 0, 0);
        case_units(be, 1, 777, 30, 1);
    }
    CTX("%s", "");
    be = mock(0, 0, 0, 0);
    CHECK(gp_dl_ring_open(&r, be, 16) == 0, "open");
    fill(gp_dl_ring_buffer(&r), 16);
    unsigned char out[40];
    CHECK(gp_dl_ring_push(&r, out, 16) == 0, "push 16");
    CHECK(gp_dl_ring_push(&r, out + 16, 17) == GP_EINVAL && M.nq == 0, "push 17 of 16: GP_EINVAL, "
          "nothing in flight");
    gp_dl_ring_close(&r);
    CHECK(M.live == 0 && M.live_host == 0, "buffers left after GP_EINVAL");
}

int main(void)
{
    uint64_t seed = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull;
    const char *se = getenv("GPUPRIM_TEST_SEED");
    if (se && *se) seed = strtoull(se, NULL, 0);
    g_rng = seed;
    printf("test_dl_ring: seed %" PRIu64 " (GPUPRIM_TEST_SEED)\n", seed);
    gp_host_threads_share(4); /* the copies of units >= 8 MiB in parts, on the pool */
    const size_t caps[] = {1, 8, 1000, 4096 * 8 + 24, (size_t)9 << 20};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        const int nunits = caps[c] > ((size_t)1 << 20) ? 6 : 60;
        CTX("mock, cap %zu", caps[c]);
        case_units(mock(0, 0, 0, 0), 1, caps[c], nunits, 0);
        CTX("cpu, cap %zu", caps[c]);
        case_units(gp_backend_cpu(), 0, caps[c], nunits, 0);
    }
    CTX("%s", "");
    case_scans(100003, 1000);
    case_scans(5, 1000);
    case_scans(4096, 64);
    for (int k = 1; k <= 4; k++) {
        case_failure(1, k);
        case_failure(0, k);
    }
    case_alloc_failures();
    return gp_check_done("test_dl_ring");
}

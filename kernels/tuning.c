/* tuning.c — the knobs from the environment (tuning.h): the one getenv site of kernels/, the
 * one integer rule of every knob (gp_knob_int), the pure decision of the record, and the
 * GPUPRIM_DEVICE_MEM_LIMIT cap both backends' mem_info apply. */
#define _POSIX_C_SOURCE 200809L
#include "tuning.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The variables behind gp_tuning_env's fields: the one place kernels/ reads the environment. */
void gp_tuning_env_from_process(gp_tuning_env *e)
{
    const struct { const char **field; const char *name; } vars[] = {
        {&e->sort_smem, "GPUPRIM_SORT_SMEM"},
        {&e->sort_graph, "GPUPRIM_SORT_GRAPH"},
        {&e->sort_wide, "GPUPRIM_SORT_WIDE"},
        {&e->sort_wide_from, "GPUPRIM_SORT_WIDE_FROM"},
        {&e->stats_unroll, "GPUPRIM_STATS_UNROLL"},
        {&e->scan_algo, "GPUPRIM_SCAN_ALGO"},
        {&e->mem_limit, "GPUPRIM_DEVICE_MEM_LIMIT"},
        {&e->host_mem_limit, "GPUPRIM_HOST_MEM_LIMIT"},
        {&e->host_threads, "GPUPRIM_HOST_THREADS"},
        {&e->xchg_piece, "GPUPRIM_EXCHANGE_PIECE_BYTES"},
        {&e->xchg_stage, "GPUPRIM_EXCHANGE_STAGE"},
        {&e->xchg_stream, "GPUPRIM_EXCHANGE_STREAM"},
        {&e->xchg_node_ranks, "GPUPRIM_EXCHANGE_NODE_RANKS"},
        {&e->read_piece, "GPUPRIM_READ_PIECE_BYTES"},
        {&e->inflate_threads, "GPUPRIM_INFLATE_THREADS"},
        {&e->direct_chunks, "GPUPRIM_DIRECT_CHUNKS"},
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) *vars[i].field = getenv(vars[i].name);
}

/* ---- the integer rule ------------------------------------------------------------------- */

/* The grammar of gp_knob_int: an optional '-' (*neg = 1) and one or more decimal digits,
 * nothing else, whose magnitude fits 64 bits (*mag). Returns 0, or -1 for anything else. */
static int knob_digits(const char *s, int *neg, uint64_t *mag)
{
    if (!s) return -1;
    *neg = *s == '-';
    if (*neg) s++;
    if (*s == '\0') return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return -1;
        const unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return -1; /* more than 64 bits */
        v = v * 10 + d;
    }
    *mag = v;
    return 0;
}

int gp_knob_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    int neg = 0;
    uint64_t mag = 0;
    if (knob_digits(s, &neg, &mag) != 0) return -1;
    int64_t v;
    if (!neg) {
        if (mag > (uint64_t)INT64_MAX) return -1;
        v = (int64_t)mag;
    } else {
        if (mag > (uint64_t)INT64_MAX + 1) return -1;
        v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    }
    if (v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* A positive integer knob (gp_knob_int's rule) up to `most`: its value, or 0 when unset or
 * refused. */
static int64_t positive(const char *s, int64_t most)
{
    int64_t v = 0;
    return gp_knob_int(s, 1, most, &v) == 0 ? v : 0;
}

/* A memory limit knob (GPUPRIM_DEVICE_MEM_LIMIT, GPUPRIM_HOST_MEM_LIMIT, named `name`):
 * gp_knob_int's digits without the '-', below 2^64, into *set / *lim, or the reason into
 * error[0, 128). Unset or empty: nothing. */
static void parse_mem_limit(const char *v, const char *name, int *set, uint64_t *lim,
                            char error[128])
{
    if (!v || !v[0]) return;
    int neg = 0;
    uint64_t b = 0;
    if (knob_digits(v, &neg, &b) != 0 || neg) {
        snprintf(error, 128, "%s='%.40s' is not a byte count (a decimal integer)", name, v);
        return;
    }
    *set = 1;
    *lim = b;
}

/* ---- the record --------------------------------------------------------------------------- */

void gp_tuning_parse(const gp_tuning_env *e, gp_tuning *t)
{
    memset(t, 0, sizeof *t);
    t->sort_smem = (size_t)positive(e->sort_smem, INT64_MAX);
    t->sort_graph = !(e->sort_graph && strcmp(e->sort_graph, "0") == 0);
    const int64_t wide = positive(e->sort_wide, INT64_MAX);
    const int64_t wide_from = positive(e->sort_wide_from, INT64_MAX);
    t->sort_wide = (int)(wide > 64 ? 64 : wide);
    t->sort_wide_from = (int)(wide_from > 64 ? 64 : wide_from);
    const int64_t unroll = positive(e->stats_unroll, 8);
    t->stats_unroll = unroll == 2 || unroll == 4 || unroll == 8 ? (int)unroll : 0;
    t->scan_algo = !e->scan_algo                     ? 0
                   : strcmp(e->scan_algo, "lookback") == 0 ? GP_SCAN_ALGO_LOOKBACK
                   : strcmp(e->scan_algo, "rts") == 0      ? GP_SCAN_ALGO_RTS
                                                           : 0;
    parse_mem_limit(e->mem_limit, "GPUPRIM_DEVICE_MEM_LIMIT", &t->mem_limit_set, &t->mem_limit,
                    t->mem_limit_error);
    parse_mem_limit(e->host_mem_limit, "GPUPRIM_HOST_MEM_LIMIT", &t->host_mem_limit_set,
                    &t->host_mem_limit, t->host_mem_limit_error);
    t->host_threads = (int)positive(e->host_threads, 1024);
    const int64_t piece = positive(e->xchg_piece, INT64_MAX);
    t->xchg_piece = piece > (1ll << 30) ? (1ll << 30) : piece;
    t->xchg_stage = e->xchg_stage && strcmp(e->xchg_stage, "1") == 0;
    t->xchg_stream = !(e->xchg_stream && strcmp(e->xchg_stream, "0") == 0);
    t->xchg_node_ranks = (int)positive(e->xchg_node_ranks, INT_MAX);
    t->read_piece_bytes = positive(e->read_piece, INT64_MAX);
    const int64_t th = positive(e->inflate_threads, INT64_MAX);
    t->inflate_threads = th > 1024 ? 1024 : (int)th;
    t->direct_chunks = !(e->direct_chunks && strcmp(e->direct_chunks, "0") == 0);
}

static gp_tuning g_tuning;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void tuning_init(void)
{
    gp_tuning_env e;
    gp_tuning_env_from_process(&e);
    gp_tuning_parse(&e, &g_tuning);
}

const gp_tuning *gp_tuning_get(void)
{
    pthread_once(&g_once, tuning_init);
    return &g_tuning;
}

static int g_scan_algo; /* gp_scan_algo_set's choice; 0: none */

void gp_scan_algo_set(int algo)
{
    g_scan_algo = algo == GP_SCAN_ALGO_LOOKBACK || algo == GP_SCAN_ALGO_RTS ? algo : 0;
}

int gp_scan_algo(void)
{
    if (g_scan_algo) return g_scan_algo;
    const int k = gp_tuning_get()->scan_algo;
    return k ? k : GP_SCAN_ALGO_RTS;
}

int gp_mem_limit_env(size_t *free_bytes, char *why, size_t whylen)
{
    const gp_tuning *t = gp_tuning_get();
    if (t->mem_limit_error[0]) {
        if (why && whylen > 0) snprintf(why, whylen, "%s", t->mem_limit_error);
        return -1;
    }
    if (free_bytes && t->mem_limit_set && t->mem_limit < (uint64_t)*free_bytes)
        *free_bytes = (size_t)t->mem_limit;
    return 0;
}

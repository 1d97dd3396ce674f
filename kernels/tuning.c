/* tuning.c — the kernels' knobs from the environment (tuning.h). */
#define _POSIX_C_SOURCE 200809L
#include "tuning.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The variables behind gp_tuning_env's fields: the one place kernels/ reads the environment. */
void gp_tuning_env_from_process(gp_tuning_env *e)
{
    const struct { const char **field; const char *name; } vars[] = {
        {&e->sort_smem, "GPUPRIM_SORT_SMEM"},         {&e->sort_graph, "GPUPRIM_SORT_GRAPH"},
        {&e->sort_wide, "GPUPRIM_SORT_WIDE"},         {&e->sort_wide_from, "GPUPRIM_SORT_WIDE_FROM"},
        {&e->stats_unroll, "GPUPRIM_STATS_UNROLL"},   {&e->mem_limit, "GPUPRIM_DEVICE_MEM_LIMIT"},
        {&e->xchg_piece, "GPUPRIM_EXCHANGE_PIECE_BYTES"}, {&e->xchg_stage, "GPUPRIM_EXCHANGE_STAGE"},
        {&e->xchg_node_ranks, "GPUPRIM_EXCHANGE_NODE_RANKS"},
        {&e->inflate_threads, "GPUPRIM_INFLATE_THREADS"}, {&e->direct_chunks, "GPUPRIM_DIRECT_CHUNKS"},
    };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) *vars[i].field = getenv(vars[i].name);
}

/* A positive integer knob: its value, or 0 when unset, empty, not a number or <= 0. */
static long long positive(const char *s)
{
    if (!s || !*s) return 0;
    const long long v = atoll(s);
    return v > 0 ? v : 0;
}

/* A positive integer knob that strtoll reads whole (nothing after the number, no overflow),
 * else 0. */
static long long positive_strict(const char *s)
{
    if (!s || !*s) return 0;
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    return end && *end == '\0' && errno == 0 && v > 0 ? v : 0;
}

/* GPUPRIM_DEVICE_MEM_LIMIT: digits only, below 2^64. */
static void parse_mem_limit(const char *v, gp_tuning *t)
{
    if (!v || !v[0]) return;
    int ok = 1;
    for (const char *c = v; *c; c++)
        if (*c < '0' || *c > '9') ok = 0;
    unsigned long long lim = 0;
    if (ok) {
        char *end = NULL;
        errno = 0;
        lim = strtoull(v, &end, 10);
        ok = errno == 0 && end && *end == '\0';
    }
    if (!ok) {
        snprintf(t->mem_limit_error, sizeof t->mem_limit_error,
                 "GPUPRIM_DEVICE_MEM_LIMIT='%.40s' is not a byte count (a decimal integer)", v);
        return;
    }
    t->mem_limit_set = 1;
    t->mem_limit = (uint64_t)lim;
}

void gp_tuning_parse(const gp_tuning_env *e, gp_tuning *t)
{
    memset(t, 0, sizeof *t);
    t->sort_smem = (size_t)positive(e->sort_smem);
    t->sort_graph = !(e->sort_graph && strcmp(e->sort_graph, "0") == 0);
    t->sort_wide = (int)(positive(e->sort_wide) > 64 ? 64 : positive(e->sort_wide));
    t->sort_wide_from = (int)(positive(e->sort_wide_from) > 64 ? 64 : positive(e->sort_wide_from));
    const char *u = e->stats_unroll;
    if (u && (strcmp(u, "2") == 0 || strcmp(u, "4") == 0 || strcmp(u, "8") == 0))
        t->stats_unroll = atoi(u);
    parse_mem_limit(e->mem_limit, t);
    const long long piece = positive_strict(e->xchg_piece);
    t->xchg_piece = piece > (1ll << 30) ? (1ll << 30) : piece;
    t->xchg_stage = e->xchg_stage && strcmp(e->xchg_stage, "1") == 0;
    const long long k = positive_strict(e->xchg_node_ranks);
    t->xchg_node_ranks = k > INT_MAX ? 0 : (int)k;
    const long long th = positive_strict(e->inflate_threads);
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

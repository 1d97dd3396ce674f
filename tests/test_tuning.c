/* test_tuning.c — the kernels' knobs (kernels/tuning.c) decided from faked environments: the
 * defaults, each knob's accepted values, and what is ignored or refused. No MPI, no GPU. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpuprim/kernels.h"
#include "test_check.h"
#include "tuning.h"

static gp_tuning parse(gp_tuning_env e)
{
    gp_tuning t;
    memset(&t, 0xA5, sizeof t); /* poisoned: every field must be set */
    gp_tuning_parse(&e, &t);
    return t;
}

/* The one integer rule (gp_knob_int): an optional '-' and decimal digits, nothing else, in
 * [lo, hi], without overflow. */
static void test_knob_int(void)
{
    const struct { const char *s; int64_t lo, hi; int ok; int64_t want; } k[] = {
        {"0", 0, 10, 1, 0},
        {"7", 0, 10, 1, 7},
        {"007", 0, 10, 1, 7},                                  /* leading zeros are fine */
        {"-1", INT64_MIN, INT64_MAX, 1, -1},
        {"-0", 0, 0, 1, 0},
        {"10", 0, 10, 1, 10},                                  /* both ends inclusive */
        {"11", 0, 10, 0, 0},
        {"-1", 0, 10, 0, 0},
        {"9223372036854775807", 1, INT64_MAX, 1, INT64_MAX},
        {"-9223372036854775808", INT64_MIN, 0, 1, INT64_MIN},
        {"9223372036854775808", 1, INT64_MAX, 0, 0},           /* past int64 */
        {"-9223372036854775809", INT64_MIN, 0, 0, 0},
        {"18446744073709551615", INT64_MIN, INT64_MAX, 0, 0},
        {"18446744073709551616", INT64_MIN, INT64_MAX, 0, 0},  /* past 64 bits */
        {"99999999999999999999", INT64_MIN, INT64_MAX, 0, 0},
        {NULL, 0, 10, 0, 0},
        {"", 0, 10, 0, 0},
        {"-", INT64_MIN, 10, 0, 0},
        {"--1", INT64_MIN, 10, 0, 0},
        {"+1", 0, 10, 0, 0},
        {" 1", 0, 10, 0, 0},
        {"1 ", 0, 10, 0, 0},
        {"1k", 0, 10, 0, 0},
        {"0x10", 0, 100, 0, 0},
        {"1e2", 0, 1000, 0, 0},
        {"1.0", 0, 10, 0, 0},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        int64_t v = 12345;
        const int rc = gp_knob_int(k[i].s, k[i].lo, k[i].hi, &v);
        CHECK(k[i].ok ? rc == 0 && v == k[i].want : rc == -1 && v == 12345,
              "gp_knob_int('%s', %lld, %lld): rc %d, value %lld", k[i].s ? k[i].s : "(NULL)",
              (long long)k[i].lo, (long long)k[i].hi, rc, (long long)v);
    }
}

/* GPUPRIM_READ_PIECE_BYTES: the values the piece knob accepted before it joined the record (src/pipeline.c), a positive
 * decimal integer (digits only), else 0. */
static void test_read_piece(const gp_tuning_env *none)
{
    const struct { const char *s; int64_t want; } k[] = {
        {"1000", 1000}, {"268435456", 268435456}, {"8", 8}, {"0064", 64},
        {"9223372036854775807", INT64_MAX},
        {NULL, 0}, {"", 0}, {"0", 0}, {"-5", 0}, {"12MiB", 0}, {"1e6", 0}, {" 64", 0},
        {"+64", 0}, {"0x100", 0}, {"64 ", 0}, {"99999999999999999999", 0},
        {"9223372036854775808", 0},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        gp_tuning_env e = *none;
        e.read_piece = k[i].s;
        gp_tuning t;
        gp_tuning_parse(&e, &t);
        CHECK(t.read_piece_bytes == k[i].want, "GPUPRIM_READ_PIECE_BYTES '%s': %lld, want %lld",
              k[i].s ? k[i].s : "(unset)", (long long)t.read_piece_bytes,
              (long long)k[i].want);
    }
}

/* GPUPRIM_HOST_MEM_LIMIT (a byte count, like the device's: malformed is an error) and
 * GPUPRIM_HOST_THREADS (1..1024, else the default). */
static void test_host_knobs(const gp_tuning_env *none)
{
    const struct { const char *s; int set; uint64_t want; int error; } lim[] = {
        {"1000", 1, 1000, 0}, {"0", 1, 0, 0}, {"18446744073709551615", 1, UINT64_MAX, 0},
        {"", 0, 0, 0}, {NULL, 0, 0, 0}, {"12MiB", 0, 0, 1}, {"-1", 0, 0, 1}, {" 5", 0, 0, 1},
        {"18446744073709551616", 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++) {
        gp_tuning_env e = *none;
        e.host_mem_limit = lim[i].s;
        gp_tuning t = parse(e);
        CHECK(t.host_mem_limit_set == lim[i].set &&
                  (!lim[i].set || t.host_mem_limit == lim[i].want) &&
                  (t.host_mem_limit_error[0] != 0) == lim[i].error &&
                  (!lim[i].error || strstr(t.host_mem_limit_error, "GPUPRIM_HOST_MEM_LIMIT")) &&
                  !t.mem_limit_set && !t.mem_limit_error[0],
              "GPUPRIM_HOST_MEM_LIMIT '%s': set %d value %llu error '%s'",
              lim[i].s ? lim[i].s : "(unset)", t.host_mem_limit_set,
              (unsigned long long)t.host_mem_limit, t.host_mem_limit_error);
    }
    const struct { const char *s; int want; } th[] = {
        {"1", 1}, {"4", 4}, {"1024", 1024}, {"1025", 0}, {"0", 0}, {"-2", 0}, {"4x", 0},
        {"", 0}, {NULL, 0},
    };
    for (size_t i = 0; i < sizeof th / sizeof th[0]; i++) {
        gp_tuning_env e = *none;
        e.host_threads = th[i].s;
        gp_tuning t = parse(e);
        CHECK(t.host_threads == th[i].want, "GPUPRIM_HOST_THREADS '%s': %d, want %d",
              th[i].s ? th[i].s : "(unset)", t.host_threads, th[i].want);
    }
}

int main(void)
{
    test_knob_int();
    gp_tuning_env none;
    memset(&none, 0, sizeof none);
    gp_tuning t = parse(none);
    CHECK(t.sort_smem == 0 && t.sort_graph == 1 && t.sort_wide == 0 && t.sort_wide_from == 0 &&
              t.stats_unroll == 0 && !t.mem_limit_set && t.mem_limit_error[0] == 0 &&
              t.xchg_piece == 0 && t.xchg_stage == 0 && t.xchg_stream == 1 &&
              t.xchg_node_ranks == 0 &&
              t.read_piece_bytes == 0 && !t.host_mem_limit_set && !t.host_mem_limit_error[0] &&
              t.host_threads == 0,
          "unset: every default");
    test_host_knobs(&none);
    test_read_piece(&none);
    CHECK(t.scan_algo == 0, "unset: scan_algo %d", t.scan_algo);

    /* GPUPRIM_SCAN_ALGO: the two words exactly, anything else the default (0) */
    const struct { const char *s; int want; } sk[] = {
        {"lookback", GP_SCAN_ALGO_LOOKBACK}, {"rts", GP_SCAN_ALGO_RTS}, {"", 0},
        {"RTS", 0}, {"rts ", 0}, {"1", 0}, {"look", 0},
    };
    for (size_t i = 0; i < sizeof sk / sizeof sk[0]; i++) {
        gp_tuning_env x = none;
        x.scan_algo = sk[i].s;
        t = parse(x);
        CHECK(t.scan_algo == sk[i].want, "GPUPRIM_SCAN_ALGO '%s': %d, want %d", sk[i].s,
              t.scan_algo, sk[i].want);
    }

    /* the exchange's knobs: digits alone, positive; the piece at most 2^30; stage only "1" */
    const struct { const char *piece, *stage, *nodes; int64_t want_piece; int want_stage, want_nodes; } xk[] = {
        {"1000", "1", "2", 1000, 1, 2},
        {"65536", "0", "3", 65536, 0, 3},
        {"1073741824", "true", "1", 1073741824, 0, 1},
        {"1073741825", "01", "2147483647", 1073741824, 0, 2147483647},
        {"99999999999999999999", "", "2147483648", 0, 0, 0}, /* out of range: ignored */
        {"0", NULL, "0", 0, 0, 0},
        {"-5", " 1", "-1", 0, 0, 0},
        {"8M", "1 ", "2x", 0, 0, 0},
        {"", NULL, "", 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof xk / sizeof xk[0]; i++) {
        gp_tuning_env x = none;
        x.xchg_piece = xk[i].piece;
        x.xchg_stage = xk[i].stage;
        x.xchg_node_ranks = xk[i].nodes;
        t = parse(x);
        CHECK(t.xchg_piece == xk[i].want_piece && t.xchg_stage == xk[i].want_stage &&
                  t.xchg_node_ranks == xk[i].want_nodes,
              "exchange knobs '%s' '%s' '%s': piece %lld stage %d nodes %d", xk[i].piece,
              xk[i].stage ? xk[i].stage : "(unset)", xk[i].nodes, (long long)t.xchg_piece,
              t.xchg_stage, t.xchg_node_ranks);
    }

    /* GPUPRIM_EXCHANGE_STREAM: only "0" turns the streamed step off */
    const struct { const char *s; int want; } xs[] = {
        {"0", 0}, {"1", 1}, {"", 1}, {"00", 1}, {"no", 1}, {" 0", 1}, {NULL, 1},
    };
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
        gp_tuning_env x = none;
        x.xchg_stream = xs[i].s;
        t = parse(x);
        CHECK(t.xchg_stream == xs[i].want, "GPUPRIM_EXCHANGE_STREAM '%s': %d, want %d",
              xs[i].s ? xs[i].s : "(unset)", t.xchg_stream, xs[i].want);
    }

    /* the input's knobs: threads digits alone, positive, at most 1024; only "0" turns the
     * direct chunk path off */
    const struct { const char *threads, *direct; int want_threads, want_direct; } ck[] = {
        {NULL, NULL, 0, 1},   {"1", "0", 1, 0},     {"16", "1", 16, 1},  {"1024", "00", 1024, 1},
        {"1025", "", 1024, 1}, {"0", "no", 0, 1},   {"-3", " 0", 0, 1},  {"4x", "0 ", 0, 1},
        {"", NULL, 0, 1},     {"99999999999999999999", "false", 0, 1},
    };
    for (size_t i = 0; i < sizeof ck / sizeof ck[0]; i++) {
        gp_tuning_env x = none;
        x.inflate_threads = ck[i].threads;
        x.direct_chunks = ck[i].direct;
        t = parse(x);
        CHECK(t.inflate_threads == ck[i].want_threads && t.direct_chunks == ck[i].want_direct,
              "input knobs '%s' '%s': threads %d direct %d",
              ck[i].threads ? ck[i].threads : "(unset)", ck[i].direct ? ck[i].direct : "(unset)",
              t.inflate_threads, t.direct_chunks);
    }

    gp_tuning_env e = none;
    e.sort_smem = "140000";
    e.sort_graph = "0";
    e.sort_wide = "7";
    e.sort_wide_from = "6";
    e.stats_unroll = "8";
    e.mem_limit = "1048576";
    t = parse(e);
    CHECK(t.sort_smem == 140000 && t.sort_graph == 0 && t.sort_wide == 7 &&
              t.sort_wide_from == 6 && t.stats_unroll == 8,
          "given: smem %zu graph %d wide %d from %d unroll %d", t.sort_smem, t.sort_graph,
          t.sort_wide, t.sort_wide_from, t.stats_unroll);
    CHECK(t.mem_limit_set && t.mem_limit == 1048576 && !t.mem_limit_error[0], "mem limit");

    e = none;
    e.sort_smem = "-5";
    e.sort_graph = "00";     /* only "0" turns graphs off */
    e.sort_wide = "abc";
    e.stats_unroll = "3";    /* only 2, 4, 8 */
    e.mem_limit = "";        /* empty: unset */
    t = parse(e);
    CHECK(t.sort_smem == 0 && t.sort_graph == 1 && t.sort_wide == 0 && t.stats_unroll == 0 &&
              !t.mem_limit_set && !t.mem_limit_error[0],
          "ignored values keep the defaults");

    /* one rule for every integer: trailing units, blanks and signs are refused everywhere */
    e = none;
    e.sort_smem = "12k";
    e.sort_wide = "99999999999999999999";
    e.sort_wide_from = "+6";
    e.stats_unroll = "4 ";
    t = parse(e);
    CHECK(t.sort_smem == 0 && t.sort_wide == 0 && t.sort_wide_from == 0 && t.stats_unroll == 0,
          "malformed integers ignored: smem %zu wide %d from %d unroll %d", t.sort_smem,
          t.sort_wide, t.sort_wide_from, t.stats_unroll);
    e = none;
    e.sort_wide = "65"; /* clamped to 64 */
    e.stats_unroll = "2";
    t = parse(e);
    CHECK(t.sort_wide == 64 && t.stats_unroll == 2, "wide 65 -> %d, unroll 2 -> %d", t.sort_wide,
          t.stats_unroll);

    const char *bad[] = {"12k", "-1", " 5", "1e9", "18446744073709551616", "-0", "+5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e = none;
        e.mem_limit = bad[i];
        t = parse(e);
        CHECK(!t.mem_limit_set && strstr(t.mem_limit_error, "GPUPRIM_DEVICE_MEM_LIMIT") &&
                  strstr(t.mem_limit_error, "not a byte count"),
              "malformed mem limit '%s' refused: '%s'", bad[i], t.mem_limit_error);
    }
    e = none;
    e.mem_limit = "18446744073709551615";
    t = parse(e);
    CHECK(t.mem_limit_set && t.mem_limit == UINT64_MAX, "2^64-1 accepted");

    /* the process's record is read once: a later change of the environment is not seen */
    setenv("GPUPRIM_DEVICE_MEM_LIMIT", "4096", 1);
    size_t f = 1u << 20;
    CHECK(gp_mem_limit_env(&f, NULL, 0) == 0 && f == 4096, "from the process: %zu", f);
    setenv("GPUPRIM_DEVICE_MEM_LIMIT", "bad", 1);
    f = 1u << 20;
    CHECK(gp_mem_limit_env(&f, NULL, 0) == 0 && f == 4096, "read once: %zu", f);
    CHECK(gp_tuning_get() == gp_tuning_get(), "one record");
    return gp_check_done("test_tuning");
}

/* test_count_exit.c — the two tables the programs share: the count parser's one rule
 * (src/count.h: gpuprim_mpi --n, gpuprim_gen --n) against a list of words with their
 * verdicts and an independent brute-force model, and the exit-status table
 * (src/exitcode.h) against the statuses docs/gpuprim_mpi.md documents. No MPI. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count.h"
#include "exitcode.h"
#include "gpuprim/h5io.h"
#include "test_check.h"

/* ---- counts ------------------------------------------------------------------------------ */

#define BAD (-1)

static void expect_count(const char *s, int64_t want)
{
    int64_t v = -7;
    const int rc = gp_parse_count(s, &v);
    if (want == BAD)
        CHECK(rc == -1 && v == -7, "'%s': accepted as %lld, want refused (and *out unchanged)", s,
              (long long)v);
    else
        CHECK(rc == 0 && v == want, "'%s': rc %d value %lld, want %lld", s, rc, (long long)v,
              (long long)want);
}

static void count_table(void)
{
    static const struct { const char *s; int64_t want; } t[] = {
        /* digits */
        {"0", 0}, {"1", 1}, {"007", 7}, {"1000000", 1000000},
        {"9223372036854775807", INT64_MAX}, {"9223372036854775808", BAD},
        {"00000000000000000000000000000001", 1}, {"99999999999999999999", BAD},
        /* B^E */
        {"2^24", 1 << 24}, {"2^0", 1}, {"10^6", 1000000}, {"2^62", (int64_t)1 << 62},
        {"2^63", BAD}, {"3^39", 4052555153018976267}, {"3^40", BAD}, {"0^0", 1}, {"0^5", 0}, {"0^63", 0}, {"00^1", 0}, {"1^0", 1}, {"2^1", 2},
        {"1^99999999999999999999999", 1}, {"0^99999999999999999999999", 0},
        {"2^99999999999999999999999", BAD}, {"2^", BAD}, {"^3", BAD}, {"2^3^2", BAD},
        {"2.0^3", BAD}, {"-2^3", BAD}, {"2^-3", BAD}, {"2^+3", BAD}, {"+2^3", BAD},
        /* decimals */
        {"1e6", 1000000}, {"1E6", 1000000}, {"1e+6", 1000000}, {"2.5e6", 2500000},
        {"1.5e3", 1500}, {"1.0", 1}, {"1.", 1}, {".5e1", 5}, {"1200e-2", 12}, {"1e0", 1},
        {"0e999999999999999999999", 0}, {"0.000", 0}, {"9.223372036854775807e18", INT64_MAX},
        {"9.223372036854775808e18", BAD}, {"1e19", BAD}, {"1e18", 1000000000000000000},
        {"100000000000000000000000e-5", 1000000000000000000},
        {"1.5", BAD}, {"1e-3", BAD}, {"0.5", BAD}, {"1e-99999999999999999999", BAD},
        {"1e99999999999999999999", BAD}, {"123.4500e2", 12345}, {"123.4501e2", BAD},
        /* no sign, no spaces, no hexadecimal, nothing else */
        {"", BAD}, {"-1", BAD}, {"+1", BAD}, {" 1", BAD}, {"1 ", BAD}, {"-0", BAD},
        {"0x10", BAD}, {"0x1e", BAD}, {"0x1.8p1", BAD}, {"1e", BAD}, {"1e+", BAD}, {".", BAD},
        {"e5", BAD}, {".e5", BAD}, {"1.2.3", BAD}, {"inf", BAD}, {"nan", BAD}, {"1,000", BAD},
        {"1_000", BAD}, {"1e6x", BAD}, {"\xff", BAD},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) expect_count(t[k].s, t[k].want);
    int64_t v = 5;
    CHECK(gp_parse_count(NULL, &v) == -1 && v == 5, "NULL refused");
}

/* A word made of digits, at most one '.', and an optional exponent: its value m * 10^k by a
 * route of its own (long double of the digits, exactness checked by re-multiplying), to
 * compare with the parser on random words. -1: not a count. */
static int64_t model_decimal(const char *mant, int point, int exp10)
{
    char digits[64];
    size_t n = 0;
    int frac = 0;
    for (const char *c = mant; *c; c++) {
        if (c - mant == point) continue;
        digits[n++] = *c;
        if (point >= 0 && c - mant > point) frac++;
    }
    digits[n] = '\0';
    int k = exp10 - frac;
    /* drop trailing zeros into k, then the value must be whole and below 2^63 */
    while (n > 0 && digits[n - 1] == '0') digits[--n] = '\0', k++;
    size_t lead = strspn(digits, "0");
    if (lead == n) return 0;
    if (k < 0) return -1;
    unsigned __int128 v = 0;
    for (size_t i = lead; i < n; i++) {
        v = v * 10 + (unsigned)(digits[i] - '0');
        if (v > (unsigned __int128)INT64_MAX) return -1;
    }
    for (int i = 0; i < k; i++)
        if ((v *= 10) > (unsigned __int128)INT64_MAX) return -1;
    return (int64_t)v;
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static unsigned rnd(unsigned n)
{
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    return (unsigned)(g_rng % n);
}

static void count_random(void)
{
    for (int t = 0; t < 200000; t++) {
        char mant[40], word[64];
        const int len = 1 + (int)rnd(22), point = rnd(3) ? -1 : (int)rnd((unsigned)len + 1);
        int w = 0;
        for (int i = 0; i < len + (point >= 0); i++) mant[w++] = i == point ? '.' : (char)('0' + (rnd(3) ? rnd(10) : 0));
        mant[w] = '\0';
        if (point >= 0 && w == 1) continue; /* "." alone */
        const int has_exp = rnd(2), exp10 = has_exp ? (int)rnd(41) - 20 : 0;
        if (has_exp)
            snprintf(word, sizeof word, "%s%c%s%d", mant, rnd(2) ? 'e' : 'E',
                     exp10 >= 0 && rnd(2) ? "+" : "", exp10);
        else
            snprintf(word, sizeof word, "%s", mant);
        const int64_t want = model_decimal(mant, point, exp10);
        int64_t v = -7;
        const int rc = gp_parse_count(word, &v);
        CHECK(want < 0 ? rc == -1 : rc == 0 && v == want, "'%s': rc %d value %lld, model %lld",
              word, rc, (long long)v, (long long)want);
        if (g_fail > 20) return;
    }
}

/* ---- the exit table ---------------------------------------------------------------------- */

static void exit_table(void)
{
    /* docs/gpuprim_mpi.md EXIT STATUS, and the kinds the statuses stand for */
    static const struct { int kind, status; const char *starts; } doc[] = {
        {GP_ERR_NONE, 0, "success"},
        {GP_ERR_INTERNAL, 1, "internal or MPI error"},
        {GP_ERR_USAGE, 2, "bad command line"},
        {GP_ERR_OPEN, 3, "input file missing"},
        {GP_ERR_DATASET, 4, "dataset missing"},
        {GP_ERR_READ, 5, "reading the data failed"},
        {GP_ERR_WRITE, 6, "the output (--out, --json) could not be written"},
        {GP_ERR_DEVICE, 7, "the requested backend is unavailable"},
        {GP_ERR_VERIFY, 8, "the self-check of the sorted result failed"},
    };
    CHECK(GP_NERRORS == 9, "%d kinds, the table has 9 rows", (int)GP_NERRORS);
    for (size_t k = 0; k < sizeof doc / sizeof doc[0]; k++) {
        const int s = gp_exit_status(doc[k].kind);
        CHECK(s == doc[k].status, "kind %s: status %d, want %d", gp_error_name(doc[k].kind), s,
              doc[k].status);
        /* the library's MPI_Abort and gpuprim_mpi's phases pass kinds on as statuses */
        CHECK(s == doc[k].kind, "kind %d maps to %d, not to its own number", doc[k].kind, s);
        const char *m = gp_exit_meaning(GP_PROG_MPI, doc[k].status);
        CHECK(m && strncmp(m, doc[k].starts, strlen(doc[k].starts)) == 0,
              "status %d means '%s', want '%s...'", doc[k].status, m ? m : "(none)", doc[k].starts);
        CHECK(m && !strchr(m, '\n') && m[strlen(m) - 1] != '.', "status %d: one line, no period",
              doc[k].status);
    }
    /* the program's names and io's names are the same kinds */
    CHECK((int)GP_EXIT_FAIL == (int)GP_ERR_INTERNAL && (int)GP_EXIT_USAGE == (int)GP_ERR_USAGE &&
              (int)GP_EXIT_VERIFY == (int)GP_ERR_VERIFY && (int)GP_EXIT_DEVICE == (int)GP_ERR_DEVICE,
          "GP_EXIT_* are gp_error kinds");
    CHECK(gp_exit_status(GP_IO_EOPEN) == 3 && gp_exit_status(GP_IO_EDATASET) == 4 &&
              gp_exit_status(GP_IO_EREAD) == 5 && gp_exit_status(GP_IO_EWRITE) == 6,
          "io's failures give 3, 4, 5, 6");
    /* no kind: an internal error, never success */
    const int odd[] = {-1, 9, 42, 255, 256, -2147483647 - 1};
    for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++)
        CHECK(gp_exit_status(odd[k]) == 1, "no kind %d: status %d, want 1", odd[k],
              gp_exit_status(odd[k]));
    /* gpuprim_gen: 0, 1, 2, 6 and nothing else */
    for (int s = 0; s <= 9; s++)
        CHECK((gp_exit_meaning(GP_PROG_GEN, s) != NULL) == (s == 0 || s == 1 || s == 2 || s == 6),
              "gpuprim_gen status %d: %s", s, gp_exit_meaning(GP_PROG_GEN, s) ? "listed" : "not listed");
    CHECK(gp_exit_meaning(GP_PROG_MPI, 9) == NULL && gp_exit_meaning(GP_PROG_MPI, -1) == NULL,
          "no meaning for statuses outside 0..8");
    CHECK(strcmp(gp_error_name(GP_ERR_DATASET), "dataset") == 0 && strcmp(gp_error_name(9), "?") == 0,
          "kind names");
}

/* The printed forms: every status once, lines below the width, the gen line complete. */
static void exit_print(void)
{
    char buf[4096];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    if (!f) {
        CHECK(0, "fmemopen failed");
        return;
    }
    gp_exit_print(f, GP_PROG_MPI, 90);
    fclose(f);
    int lines = 0, codes = 0;
    for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"), lines++) {
        CHECK(strlen(l) < 90, "--help line of %zu columns: %s", strlen(l), l);
        int s;
        if (sscanf(l, "  %d  ", &s) == 1 && l[2] != ' ') {
            CHECK(s == codes, "status %d listed in place of %d", s, codes);
            codes++;
        } else {
            CHECK(strncmp(l, "     ", 5) == 0 && l[5] != ' ', "continuation line: '%s'", l);
        }
    }
    CHECK(codes == 9 && lines >= 9, "%d statuses on %d lines", codes, lines);
    f = fmemopen(buf, sizeof buf, "w");
    if (!f) return;
    gp_exit_print(f, GP_PROG_GEN, 90);
    fclose(f);
    CHECK(strncmp(buf, "Exit status: 0 success; 1 ", 26) == 0 && strstr(buf, "; 2 bad command line; 6 ") &&
              buf[strlen(buf) - 2] == '.', "gpuprim_gen's line: %s", buf);
}

int main(void)
{
    count_table();
    count_random();
    exit_table();
    exit_print();
    return gp_check_done("test_count_exit");
}

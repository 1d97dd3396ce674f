/* test_suggest.c — "did you mean ...?" (io/gp_suggest.h): the edit distance against a
 * brute-force recursion over every pair of short words of a small alphabet, and the
 * suggestions for the options of gpuprim_mpi and gpuprim_gen and for dataset paths, as the
 * messages show them. No MPI. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "gp_suggest.h"
#include "test_check.h"

/* The optimal-string-alignment distance by its definition (exponential; short words only):
 * the cheapest of deleting a's last letter, inserting b's, matching or substituting them, or
 * swapping two neighbours; letters that differ in case only match. */
static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

static int osa(const char *a, int la, const char *b, int lb)
{
    if (la == 0) return lb;
    if (lb == 0) return la;
    int best = osa(a, la - 1, b, lb) + 1;
    int t = osa(a, la, b, lb - 1) + 1;
    if (t < best) best = t;
    t = osa(a, la - 1, b, lb - 1) + (lower(a[la - 1]) != lower(b[lb - 1]));
    if (t < best) best = t;
    if (la > 1 && lb > 1 && lower(a[la - 1]) == lower(b[lb - 2]) &&
        lower(a[la - 2]) == lower(b[lb - 1])) {
        t = osa(a, la - 2, b, lb - 2) + 1;
        if (t < best) best = t;
    }
    return best;
}

/* Every word of 0..4 letters over "abA" (121 words), against every other. */
static void distance_vs_brute_force(void)
{
    static char words[200][6];
    int n = 0;
    const char alpha[] = "abA";
    for (int len = 0; len <= 4; len++) {
        int total = 1;
        for (int k = 0; k < len; k++) total *= 3;
        for (int v = 0; v < total; v++) {
            int x = v;
            for (int k = 0; k < len; k++, x /= 3) words[n][k] = alpha[x % 3];
            words[n][len] = '\0';
            n++;
        }
    }
    CHECK(n == 121, "121 words, got %d", n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const int want = osa(words[i], (int)strlen(words[i]), words[j], (int)strlen(words[j]));
            const int got = gp_edit_distance(words[i], words[j]);
            CHECK(got == want, "distance('%s', '%s') = %d, want %d", words[i], words[j], got, want);
        }
    /* named cases */
    CHECK(gp_edit_distance("datset", "dataset") == 1, "datset");
    CHECK(gp_edit_distance("Dataset", "dataset") == 0, "case costs nothing");
    CHECK(gp_edit_distance("ouput", "out") == 2, "ouput");
    CHECK(gp_edit_distance("tmep", "temp") == 1, "a swap is one edit");
    CHECK(gp_edit_distance("", "abc") == 3 && gp_edit_distance("abc", "") == 3, "empty");
    char longw[300];
    memset(longw, 'a', sizeof longw - 1);
    longw[sizeof longw - 1] = '\0';
    CHECK(gp_edit_distance(longw, "a") == 1000, "a word over 255 bytes is far from everything");
}

/* The suggestion of `word` among the NULL-ended names, as text. */
static const char *suggest(const char *word, gp_suggest_kind kind, const char *prefix,
                           const char *const *names)
{
    static char buf[600];
    gp_suggest s;
    gp_suggest_start(&s, word, kind);
    for (; *names; names++) gp_suggest_add(&s, *names);
    return gp_suggest_text(&s, prefix, buf, sizeof buf);
}

static void expect(const char *word, gp_suggest_kind kind, const char *const *names,
                   const char *want)
{
    const char *got = suggest(word, kind, kind == GP_SUGGEST_OPTION ? "--" : "", names);
    CHECK(strcmp(got, want) == 0, "'%s': got '%s', want '%s'", word, got, want);
}

static void options(void)
{
    /* gpuprim_mpi's table (src/cli.c), in its order */
    static const char *const mpi[] = {
        "dataset", "x", "dx", "out", "force", "no-sort", "descending", "stable", "argsort",
        "payload", "reproducible", "transport", "io", "function", "a", "b", "n", "json",
        "json-version", "backend", "progress", "no-progress", "quiet", "verbose", "help",
        "version", NULL};
    static const char *const gen[] = {"help", "n", "dtype", "dist", "seed", "dataset", "force",
                                      NULL};
    const gp_suggest_kind O = GP_SUGGEST_OPTION;
    expect("datset", O, mpi, "did you mean --dataset?");
    expect("ouput", O, mpi, "did you mean --out?");
    expect("Dataset", O, mpi, "did you mean --dataset?");
    expect("output", O, mpi, "did you mean --out?"); /* "out" begins it */
    expect("outfile", O, mpi, "did you mean --out?");
    expect("versoin", O, mpi, "did you mean --version?");
    expect("verbos", O, mpi, "did you mean --verbose?");
    expect("progres", O, mpi, "did you mean --progress?");
    expect("no-sorted", O, mpi, "did you mean --no-sort?");
    expect("jsn", O, mpi, "did you mean --json?");
    expect("frobnicate", O, mpi, "");
    expect("zzz", O, mpi, "");
    expect("dataset", O, mpi, ""); /* the name itself is no suggestion */
    /* short words: one edit, every name as near, at most 3 named and the rest as "..." */
    expect("y", O, mpi, "did you mean --x, --a, --b, ...?");
    expect("dxx", O, mpi, "did you mean --dx?");
    expect("dtyp", O, gen, "did you mean --dtype?");
    expect("distt", O, gen, "did you mean --dist?");
    expect("sed", O, gen, "did you mean --seed?");
    expect("Force", O, gen, "did you mean --force?");
    expect("dst", O, gen, "did you mean --dist?");
}

static void paths(void)
{
    static const char *const file[] = {"/grid/temp", "/grid/pres", "/other", "/a/b/values",
                                       NULL};
    const gp_suggest_kind P = GP_SUGGEST_PATH;
    expect("/temp", P, file, "did you mean /grid/temp?");  /* the last component */
    expect("/grid/tmep", P, file, "did you mean /grid/temp?");
    expect("/Temp", P, file, "did you mean /grid/temp?");
    expect("/tmp", P, file, "did you mean /grid/temp?");
    expect("/grid/temp/x", P, file, "did you mean /grid/temp?");
    expect("/values", P, file, "did you mean /a/b/values?");
    expect("/othr", P, file, "did you mean /other?");
    expect("/xyz", P, file, "");
    expect("/grid/temp", P, file, ""); /* it exists: nothing to suggest */
    /* two datasets with the same last component: both, in the order offered */
    static const char *const twins[] = {"/run1/temp", "/run2/temp", "/run3/pres", NULL};
    expect("/temp", P, twins, "did you mean /run1/temp or /run2/temp?");
    /* the nearest win over farther ones offered before them */
    static const char *const near[] = {"/tmpx", "/temp", NULL};
    expect("/tmp", P, near, "did you mean /tmpx or /temp?"); /* both one edit */
    static const char *const nearer[] = {"/tempor", "/g/tmp", NULL};
    expect("/tmp", P, nearer, "did you mean /g/tmp?");
    /* a name too long to keep is still counted as near */
    static char longp[400];
    memset(longp, 'q', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    gp_suggest s;
    gp_suggest_start(&s, "/x", P);
    gp_suggest_add(&s, longp);
    CHECK(s.count == 0, "a path over 255 bytes is not kept");
    /* the text fits any buffer */
    char small[12];
    gp_suggest_start(&s, "/temp", P);
    gp_suggest_add(&s, "/grid/temp");
    gp_suggest_text(&s, "", small, sizeof small);
    CHECK(strlen(small) == sizeof small - 1, "truncated to the buffer: '%s'", small);
}

int main(void)
{
    distance_vs_brute_force();
    options();
    paths();
    return gp_check_done("test_suggest");
}

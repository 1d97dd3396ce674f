/* fuzz_cli.c — libFuzzer target for gpuprim_mpi's option parser (src/cli.c).
 *
 * The input is an argument list: every '\n' or NUL byte ends a word (so a corpus file is
 * one argument per line; a final separator ends the last word and adds none). Each word
 * lives in its own exact-size allocation, so the sanitizers see any read past its end.
 * gp_parse_options must return, never exit or crash, and what it returns must hold the
 * documented contract (src/cli.h, docs/gpuprim_mpi.md):
 *   - the result is 0 (run), -1 (--help/--version) or GP_EXIT_USAGE;
 *   - an error is a non-empty one-line message that fits msglen (also a tiny msglen, where
 *     it is the prefix of the full message);
 *   - accepted options satisfy the documented ranges: n > 0, a and b finite in either
 *     order with b - a finite (the same words with the --a and --b values swapped are
 *     accepted too, with a and b swapped), dx finite and non-zero, the file / function mode
 *     rules, the --out / --force / --no-sort / --argsort / --payload / --cumsum /
 *     --cumulative-integral / --x / --dx / --histogram / --range / --quantiles / --median /
 *     --distinct / --transport combinations (--transport only in file mode with a sort, one
 *     of auto, shared, mpi; --range with --histogram, finite A <= B; --distinct with the
 *     sort; quantiles in [0, 1]), --io one of auto, posix, mpiio (its last value; auto when
 *     absent; file mode only), --json-version 1 or 2 (its last value; 2 when absent; with
 *     --json only); no value of --out, --json, --dataset, --x or --payload starts with '-',
 *     and no --out or --json value is empty;
 *   - the result is what an independent model of the command line's syntax says (a value
 *     as the next word or after '=', long options by an unambiguous prefix, -q and -v
 *     combined in one word, the last value of an option wins; shape() below);
 *   - every string in the result is one of the argv words or the part of a "--name=value"
 *     word after its '=' (no copies), argv is left as it was (nothing permuted), and
 *     parsing again gives the same result (no hidden state).
 * With the first byte odd it parses with print = 1 (--help / --version text to stdout;
 * the target sends stdout to /dev/null).
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define MAXWORDS 64
#define MSGLEN 2048

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "fuzz_cli: invariant failed: %s: ", #cond);                  \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                       \
            dump_args(argc, argv);                                                       \
            abort();                                                                     \
        }                                                                                \
    } while (0)

static void dump_args(int argc, char **argv)
{
    fprintf(stderr, "  argv (%d words):", argc);
    for (int i = 0; i < argc; i++) fprintf(stderr, " [%s]", argv[i]);
    fprintf(stderr, "\n");
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    /* --help / --version with print = 1 write to stdout: keep the fuzzer's output readable */
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        fflush(stdout);
        if (dup2(fd, STDOUT_FILENO) < 0) { /* then it prints; harmless */ }
        close(fd);
    }
    return 0;
}

/* p is a word of argv, or the value after the '=' of a "--name=value" word */
static int is_word(const char *p, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *eq = strncmp(argv[i], "--", 2) == 0 ? strchr(argv[i], '=') : NULL;
        if (p == argv[i] || (eq && p == eq + 1)) return 1;
    }
    return 0;
}

/* An independent model of the command line's shape: which words are option values (the
 * last value of each option wins), which are flags, which is the file. */
typedef struct model {
    const char *val[16]; /* last value of each option of `valued` */
    int flag[13];        /* each flag of `flags` present */
    int progress;        /* last of --progress (1) / --no-progress (-1) */
    int help;            /* a word before any error asks for --help or --version */
    const char *file;
    int npositional;
} model;

static const char *const valued[16] = {"--dataset", "--x", "--dx", "--out", "--payload", "--json",
                                       "--function", "--a", "--b", "--n", "--backend",
                                       "--transport", "--io", "--json-version", "--histogram",
                                       "--quantiles"};
enum { V_DATASET, V_X, V_DX, V_OUT, V_PAYLOAD, V_JSON, V_FUNCTION, V_A, V_B, V_N, V_BACKEND,
       V_TRANSPORT, V_IO, V_JSON_VERSION, V_HISTOGRAM, V_QUANTILES };
static const char *const flags[13][2] = {{"--force", NULL},  {"--no-sort", NULL},
                                         {"--descending", NULL}, {"--stable", NULL},
                                         {"--argsort", NULL}, {"--reproducible", NULL},
                                         {"--quiet", "-q"}, {"--verbose", "-v"},
                                         {"--cumsum", NULL}, {"--cumulative-integral", NULL},
                                         {"--median", NULL}, {"--distinct", NULL}, {NULL, NULL}};
/* the long options without a slot above; --range takes two values (the option's and the
 * next word) */
static const char *const others[5] = {"--progress", "--no-progress", "--help", "--version",
                                      "--range"};
enum { K_VALUED = 0, K_FLAG = 100, K_OTHER = 200, K_RANGE = 204, K_NONE = -1 };

/* The option that "--" + name[0, len) names: an exact long name, else the one long name it
 * is a prefix of (K_VALUED + k, K_FLAG + k, K_OTHER + k); K_NONE when none or several. */
static int resolve(const char *name, size_t len)
{
    const char *all[16 + 12 + 5];
    int code[16 + 12 + 5], n = 0;
    for (int k = 0; k < 16; k++) all[n] = valued[k], code[n++] = K_VALUED + k;
    for (int k = 0; flags[k][0]; k++) all[n] = flags[k][0], code[n++] = K_FLAG + k;
    for (int k = 0; k < 5; k++) all[n] = others[k], code[n++] = K_OTHER + k;
    int found = K_NONE, count = 0;
    for (int i = 0; i < n; i++) {
        if (strlen(all[i]) == len + 2 && strncmp(all[i] + 2, name, len) == 0) return code[i];
        if (strncmp(all[i] + 2, name, len) == 0) found = code[i], count++;
    }
    return count == 1 ? found : K_NONE;
}

/* One word: a long option (with its value), a cluster of -q / -v / -h, or the file. */
static void shape_word(int argc, char **argv, int *i, model *m)
{
    const char *w = argv[*i];
    if (strncmp(w, "--", 2) == 0 && w[2]) {
        const char *eq = strchr(w, '=');
        const int k = resolve(w + 2, eq ? (size_t)(eq - w - 2) : strlen(w + 2));
        if (k >= K_VALUED && k < K_FLAG && (eq || *i + 1 < argc))
            m->val[k] = eq ? eq + 1 : argv[++*i];
        else if (k >= K_FLAG && k < K_OTHER) m->flag[k - K_FLAG] = 1;
        else if (k == K_OTHER) m->progress = 1;
        else if (k == K_OTHER + 1) m->progress = -1;
        else if (k == K_RANGE && (eq || *i + 1 < argc)) { /* A, then B: the next word */
            if (!eq) ++*i;
            if (*i + 1 < argc) ++*i;
        } else if ((k == K_OTHER + 2 || k == K_OTHER + 3) && !eq) m->help = 1;
        return;
    }
    if (w[0] == '-' && w[1] && w[1] != '-') {
        for (const char *c = w + 1; *c; c++) {
            if (*c == 'q') m->flag[6] = 1;
            if (*c == 'v') m->flag[7] = 1;
            if (*c == 'h') m->help = 1;
            if (*c != 'q' && *c != 'v') break; /* -h ends the parse, anything else fails it */
        }
        return;
    }
    m->file = w, m->npositional++;
}

static void shape(int argc, char **argv, model *m)
{
    memset(m, 0, sizeof *m);
    /* "--" ends the words getopt_long reads (gpuprim_mpi refuses what follows) */
    for (int i = 1; i < argc && !m->help && strcmp(argv[i], "--") != 0; i++)
        shape_word(argc, argv, &i, m);
}

/* The documented "B^E" and digits-only forms of --n (count.h): B, E and the number in
 * decimal digits only, the value below 2^63. The value, or -1 when the word has a '^' or
 * only digits but is no count; -2 for the other forms (not modelled here). */
static int64_t count_of(const char *s)
{
    const char *caret = strchr(s, '^');
    const size_t all = strlen(s), lb = caret ? (size_t)(caret - s) : all;
    if (!caret && (all == 0 || strspn(s, "0123456789") != all)) return -2;
    if (lb == 0 || strspn(s, "0123456789") != lb) return -1;
    if (caret && (!caret[1] || strspn(caret + 1, "0123456789") != strlen(caret + 1))) return -1;
    long double b = 0, e = 0, v = 1;
    for (size_t k = 0; k < lb && b < 1e20L; k++) b = b * 10 + (s[k] - '0');
    if (!caret) return b > 9223372036854775807.0L ? -1 : (int64_t)b;
    for (const char *c = caret + 1; *c && e < 1e20L; c++) e = e * 10 + (*c - '0');
    for (long double k = 0; k < e && v <= 9.3e18L && b != 1; k++) v *= b;
    if (b == 0 && e > 0) v = 0;
    return v > 9223372036854775807.0L ? -1 : (int64_t)v;
}

/* The word list with the values of the last --a and --b swapped, as new words where a value
 * follows '=' (freed by the caller where sw[i] != argv[i]). */
static void swap_bounds(int argc, char **argv, const model *m, char **sw)
{
    for (int i = 0; i <= argc; i++) {
        sw[i] = argv[i];
        if (!argv[i]) continue;
        const char *mine = NULL, *other = NULL;
        if (argv[i] == m->val[V_A]) sw[i] = (char *)m->val[V_B];
        else if (argv[i] == m->val[V_B]) sw[i] = (char *)m->val[V_A];
        const char *eq = strncmp(argv[i], "--", 2) == 0 ? strchr(argv[i], '=') : NULL;
        if (eq && eq + 1 == m->val[V_A]) mine = m->val[V_A], other = m->val[V_B];
        else if (eq && eq + 1 == m->val[V_B]) mine = m->val[V_B], other = m->val[V_A];
        if (!mine) continue;
        const size_t head = (size_t)(mine - argv[i]), tail = strlen(other);
        char *w = malloc(head + tail + 1);
        if (!w) abort();
        memcpy(w, argv[i], head);
        memcpy(w + head, other, tail + 1);
        sw[i] = w;
    }
}

/* The order of the bounds is never a reason to refuse: the same words with the values of
 * the last --a and --b swapped parse too, with a and b swapped. */
static void swapped_bounds_accepted(int argc, char **argv, const model *m, const gp_options *o)
{
    char *sw[MAXWORDS + 2];
    swap_bounds(argc, argv, m, sw);
    gp_options o3;
    char msg[MSGLEN];
    const int rc = gp_parse_options(argc, sw, &o3, 0, msg, sizeof msg);
    CHECK(rc == 0 && o3.a == o->b && o3.b == o->a, "--a and --b swapped: rc %d (%s)", rc,
          rc ? msg : "accepted");
    for (int i = 0; i < argc; i++)
        if (sw[i] != argv[i] && sw[i] != m->val[V_A] && sw[i] != m->val[V_B]) free(sw[i]);
}

/* The distribution's options of an accepted command line: the flags as the model says,
 * --histogram in range, --range with --histogram (finite A <= B), quantiles in [0, 1],
 * --distinct with the sort, none of them in function mode. */
static void check_dist(int argc, char **argv, const model *m, const gp_options *o)
{
    CHECK(o->median == m->flag[10] && o->distinct == m->flag[11], "--median %d, --distinct %d",
          o->median, o->distinct);
    CHECK(o->hist_bins >= 0 && o->hist_bins <= ((int64_t)1 << 24), "--histogram %lld",
          (long long)o->hist_bins);
    CHECK(!o->have_range || (o->hist_bins > 0 && o->range_a <= o->range_b &&
                             isfinite(o->range_a) && isfinite(o->range_b)),
          "--range %g %g accepted", o->range_a, o->range_b);
    CHECK(o->nq >= 0 && o->nq <= GP_MAX_QUANTILES, "%d quantiles", o->nq);
    for (int k = 0; k < o->nq; k++) CHECK(o->q[k] >= 0.0 && o->q[k] <= 1.0, "q %g", o->q[k]);
    CHECK(!o->distinct || !o->no_sort, "--distinct with --no-sort accepted");
    CHECK(!o->function_mode || (!o->hist_bins && !o->nq && !o->distinct),
          "a distribution option in function mode accepted");
}

/* --json-version: "1" or "2" as its last value, only with --json; 2 when not given. */
static void json_version_kept(int argc, char **argv, const model *m, const gp_options *o)
{
    const char *v = m->val[V_JSON_VERSION];
    if (v)
        CHECK(o->json && (strcmp(v, "1") == 0 || strcmp(v, "2") == 0) &&
                  o->json_version == v[0] - '0',
              "--json-version %s gave %d (--json %s)", v, o->json_version,
              o->json ? o->json : "(none)");
    else
        CHECK(o->json_version == 2, "json_version %d without --json-version", o->json_version);
}

/* The first word alone asks for --help or --version (the parse then returns -1 at once). */
static int first_word_help(int argc, char **argv)
{
    model m;
    return argc > 1 && (shape(2, argv, &m), m.help);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *argv[MAXWORDS + 2];
    int argc = 0;
    int print = size > 0 && (data[0] & 1);
    argv[argc++] = "gpuprim_mpi";

    /* split into words */
    size_t start = 0;
    for (size_t i = 0; i <= size && argc <= MAXWORDS; i++) {
        if (i < size && data[i] != '\n' && data[i] != '\0') continue;
        if (i == size && start == size) break; /* nothing after the last separator */
        size_t len = i - start;
        char *w = malloc(len + 1);
        if (!w) abort();
        memcpy(w, data + start, len);
        w[len] = '\0';
        argv[argc++] = w;
        start = i + 1;
    }
    argv[argc] = NULL;
    char *words[MAXWORDS + 2];
    memcpy(words, argv, sizeof(char *) * (size_t)(argc + 1));

    gp_options o, o2;
    char *msg = malloc(MSGLEN), *msg2 = malloc(MSGLEN);
    if (!msg || !msg2) abort();
    memset(msg, 0x5a, MSGLEN);
    int rc = gp_parse_options(argc, argv, &o, print, msg, MSGLEN);

    CHECK(rc == 0 || rc == -1 || rc == GP_EXIT_USAGE, "rc %d", rc);
    /* argv as it came: getopt_long permutes nothing */
    for (int i = 0; i < argc; i++) CHECK(argv[i] == words[i], "argv[%d] was moved", i);
    model m;
    shape(argc, argv, &m);
    if (rc == -1) CHECK(m.help, "-1 (help/version) without a word that asks for it");
    if (first_word_help(argc, argv)) CHECK(rc == -1, "first word %s gave %d", argv[1], rc);

    if (rc == GP_EXIT_USAGE) {
        size_t l = strnlen(msg, MSGLEN);
        CHECK(l < MSGLEN, "message not NUL-terminated");
        CHECK(l > 0, "empty message");
        CHECK(!strchr(msg, '\n'), "message of more than one line: %s", msg);
        /* a tiny buffer: the same verdict, a NUL-terminated prefix, nothing written past it */
        size_t small = 1 + (size > 1 ? data[1] % 24 : 0);
        char *m = malloc(small);
        if (!m) abort();
        int rc3 = gp_parse_options(argc, argv, &o2, 0, m, small);
        CHECK(rc3 == rc, "msglen %zu changed the result: %d vs %d", small, rc3, rc);
        CHECK(strnlen(m, small) < small && strncmp(m, msg, strlen(m)) == 0,
              "short message is not a prefix of %s", msg);
        free(m);
    }

    if (rc == 0) {
        CHECK(o.backend == GP_BACKEND_AUTO || o.backend == GP_BACKEND_CUDA ||
                  o.backend == GP_BACKEND_CPU, "backend %d", (int)o.backend);
        CHECK(o.progress >= -1 && o.progress <= 1, "progress %d", o.progress);
        CHECK(o.transport == GP_TRANSPORT_OPT_AUTO || o.transport == GP_TRANSPORT_OPT_SHARED ||
                  o.transport == GP_TRANSPORT_OPT_MPI, "transport %d", (int)o.transport);
        CHECK(o.io == GP_IO_AUTO || o.io == GP_IO_POSIX || o.io == GP_IO_MPIIO, "io %d", (int)o.io);
        const int fv[] = {o.force, o.no_sort, o.descending, o.stable, o.argsort,
                          o.reproducible, o.quiet, o.verbose, o.function_mode, o.cumsum,
                          o.cumint};
        for (size_t k = 0; k < sizeof fv / sizeof fv[0]; k++)
            CHECK(fv[k] == 0 || fv[k] == 1, "flag %zu is %d", k, fv[k]);
        const char *strs[] = {o.file, o.dataset, o.xdataset, o.out, o.json, o.payload};
        for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
            CHECK(!strs[k] || is_word(strs[k], argc, argv), "string %zu is not an argv word", k);
        /* a file or dataset name never starts with '-' (an option taken as a value) */
        for (size_t k = 1; k < sizeof strs / sizeof strs[0]; k++)
            CHECK(!strs[k] || strs[k][0] != '-', "name %s taken as a value", strs[k]);
        /* an empty --out or --json file name is a usage error */
        CHECK((!o.out || o.out[0]) && (!o.json || o.json[0]), "empty --out or --json accepted");
        /* the same answer as the model of the command line's shape */
        const char *mv[] = {o.dataset, o.xdataset, NULL, o.out, o.payload, o.json};
        for (int k = 0; k <= V_JSON; k++)
            if (k != V_DX) CHECK(mv[k] == m.val[k], "%s: not its last value", valued[k]);
        const int *fl[] = {&o.force, &o.no_sort, &o.descending, &o.stable, &o.argsort,
                           &o.reproducible, &o.quiet, &o.verbose, &o.cumsum, &o.cumint};
        for (int k = 0; k < 10; k++) CHECK(*fl[k] == m.flag[k], "%s: %d", flags[k][0], *fl[k]);
        check_dist(argc, argv, &m, &o);
        CHECK(o.progress == m.progress, "progress %d, want %d", o.progress, m.progress);
        CHECK(o.function_mode == (m.val[V_FUNCTION] != NULL), "function mode %d", o.function_mode);
        CHECK(m.npositional == (o.function_mode ? 0 : 1) && o.file == (o.function_mode ? NULL : m.file),
              "%d positional words, file %s", m.npositional, o.file ? o.file : "(none)");
        if (m.val[V_DX]) CHECK(o.dx == strtod(m.val[V_DX], NULL), "--dx %s gave %g", m.val[V_DX], o.dx);
        if (m.val[V_TRANSPORT]) {
            static const char *const tn[] = {"auto", "shared", "mpi"};
            CHECK(strcmp(m.val[V_TRANSPORT], tn[o.transport]) == 0, "--transport %s gave %d",
                  m.val[V_TRANSPORT], (int)o.transport);
            CHECK(!o.function_mode && !o.no_sort, "--transport with --function or --no-sort accepted");
        } else {
            CHECK(o.transport == GP_TRANSPORT_OPT_AUTO, "transport %d without --transport",
                  (int)o.transport);
        }
        if (m.val[V_A]) CHECK(o.a == strtod(m.val[V_A], NULL), "--a %s gave %g", m.val[V_A], o.a);
        if (m.val[V_B]) CHECK(o.b == strtod(m.val[V_B], NULL), "--b %s gave %g", m.val[V_B], o.b);
        json_version_kept(argc, argv, &m, &o);
        /* --io: its last value, one of the three; auto when not given */
        gp_io_mode want_io = GP_IO_AUTO;
        if (m.val[V_IO])
            CHECK(gp_io_mode_parse(m.val[V_IO], &want_io) == 0, "--io %s accepted", m.val[V_IO]);
        CHECK(o.io == want_io, "--io: %d, want %d", (int)o.io, (int)want_io);
        if (m.val[V_N]) {
            int64_t want = count_of(m.val[V_N]);
            CHECK(want != -1, "--n %s accepted (as %lld): not a documented form", m.val[V_N],
                  (long long)o.n);
            CHECK(want == -2 || want == o.n, "--n %s gave %lld, want %lld", m.val[V_N],
                  (long long)o.n, (long long)want);
        }
        if (o.function_mode) {
            CHECK(!o.file && !o.out && !o.force && !o.xdataset && !o.dataset && !m.val[V_IO],
                  "file-mode input or output in function mode");
            CHECK((int)o.func >= 0 && (int)o.func < GP_NFUNCS, "func %d", (int)o.func);
            CHECK(isfinite(o.a) && isfinite(o.b) && isfinite(o.b - o.a), "a %g b %g", o.a, o.b);
            if (m.val[V_A] && m.val[V_B]) swapped_bounds_accepted(argc, argv, &m, &o);
            CHECK(o.n > 0 && o.n <= ((int64_t)1 << 53), "n %lld", (long long)o.n);
            CHECK(o.dx == 1.0, "dx %g in function mode", o.dx);
            CHECK(!o.descending && !o.stable && !o.argsort && !o.payload && !o.reproducible &&
                      !o.cumsum && !o.cumint,
                  "sort or scan options in function mode");
        } else {
            CHECK(o.file != NULL, "file mode without a file");
            CHECK(isfinite(o.dx) && o.dx != 0.0, "dx %g", o.dx);
            CHECK(o.n == 1000000 && o.a == 0.0 && o.b == 1.0, "function options in file mode");
            CHECK(!(o.xdataset && o.dx != 1.0), "--x with --dx %g", o.dx);
            CHECK(!(o.out && o.no_sort && !o.cumsum && !o.cumint && !o.hist_bins),
                  "--out with --no-sort and no scan or --histogram");
            CHECK(!(o.no_sort && (o.descending || o.stable || o.argsort || o.payload)),
                  "sort options with --no-sort");
            CHECK(!((o.argsort || o.payload || o.cumsum || o.cumint) && !o.out),
                  "--argsort/--payload/--cumsum/--cumulative-integral without --out");
            CHECK(!(o.force && !o.out), "--force without --out");
            CHECK(o.file[0] != '-' || o.file[1] == '\0', "file %s looks like an option", o.file);
        }
    }

    /* no hidden state: the same words give the same answer */
    memset(msg2, 0x5a, MSGLEN);
    int rc2 = gp_parse_options(argc, argv, &o2, 0, msg2, MSGLEN);
    CHECK(rc2 == rc, "second parse %d vs %d", rc2, rc);
    if (rc == GP_EXIT_USAGE) CHECK(strcmp(msg, msg2) == 0, "messages differ: %s / %s", msg, msg2);
    if (rc == 0) CHECK(memcmp(&o, &o2, sizeof o) == 0, "options differ on a second parse");

    free(msg);
    free(msg2);
    for (int i = 1; i < argc; i++) free(argv[i]);
    return 0;
}

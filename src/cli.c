/* cli.c — option parsing for gpuprim_mpi: getopt_long over a table of the options. */
#define _GNU_SOURCE /* getopt_long */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count.h"
#include "gp_getopt.h"
#include "report_json.h"

/* The --help section of the distribution's options. */
static void print_usage_dist(void)
{
    printf(
        "distribution (file mode; in the summary and --json)\n"
        "  --histogram N      N equal-width bins (1 to 2^24) over [min, max] of the finite\n"
        "                     values: numpy.histogram's edges and bin rule, int64 counts; NaNs\n"
        "                     not counted, -inf and +inf counted as below and above; with\n"
        "                     --out also DATASET_hist_counts and DATASET_hist_edges (then\n"
        "                     --out may go with --no-sort) (default: none)\n"
        "  --range A B        the bins over [A, B] instead (finite, A <= B; A = B widens to\n"
        "                     [A - 0.5, B + 0.5] as numpy does); values outside count as below\n"
        "                     and above (needs --histogram; default: the data's range)\n"
        "  --quantiles Q[,Q...]  quantiles in [0, 1], numpy.nanquantile's (linear) float64\n"
        "                     values: read from the sorted data, or with --no-sort found\n"
        "                     without sorting by a radix select (at most 64; default: none)\n"
        "  --median           the quantile 0.5 (with --quantiles: added to the list)\n"
        "  --distinct         the number of distinct non-NaN values, -0.0 and +0.0 one value\n"
        "                     (needs the sort; default: off)\n"
    );
}

/* The --help text's head: the usage lines, what the program does, the input options. */
static void print_usage_input(void)
{
    printf(
        "usage: gpuprim_mpi [options] FILE.h5\n"
        "       gpuprim_mpi [options] --function NAME [--a A] [--b B] [--n N]\n"
        "  launched with one MPI rank per GPU, e.g. mpirun -np 4 gpuprim_mpi data.h5,\n"
        "  srun --mpi=pmix gpuprim_mpi data.h5, or jobs/run_node.sh / jobs/gpuprim.sbatch\n"
        "\n"
        "Reads one HDF5 dataset sharded over the MPI ranks (one GPU per rank), prints its\n"
        "global statistics, the trapezoid integral of the samples, sorts it globally across\n"
        "the ranks (bitonic sort on each GPU, bitonic merge exchange between ranks) and checks\n"
        "the result. Or integrates a built-in f(x) with the trapezoid rule (no file).\n"
        "\n"
        "input (file mode)\n"
        "  FILE.h5            HDF5 file, read in parallel (see --io); any integer or float dataset\n"
        "  --dataset PATH     dataset to read (default: the one numeric dataset in FILE; with\n"
        "                     several, an error lists them)\n"
        "  --dx H             sample spacing of the trapezoid rule, in units of x (default 1;\n"
        "                     finite, non-zero)\n"
        "  --x DATASET        sample coordinates for a non-uniform trapezoid rule: same element\n"
        "                     count, read as float64 (default: none, uniform --dx; not with --dx)\n"
    );
}

/* The --help section of the output options: --out and what goes into it, --json, the
 * summary's and the progress line's switches. */
static void print_usage_output(void)
{
    printf(
        "output\n"
        "  --out FILE         write the globally sorted data: one 1-D dataset, same path and\n"
        "                     stored type as the input; written under a temporary name and\n"
        "                     renamed when every rank succeeded (default: none)\n"
        "  --force            overwrite an existing --out file (needs --out; default: off)\n"
        "  --no-sort          statistics and integral only, no sort; --out then holds only\n"
        "                     the scans and the histogram below (default: off)\n"
        "  --descending       sort largest first; NaNs still last, +0.0 before -0.0 (default:\n"
        "                     ascending)\n"
        "  --stable           ties keep their input order (sort by value, then input position;\n"
        "                     default: the faster unstable sort, ties in no promised order)\n"
        "  --argsort          also write DATASET_argsort to --out: the 0-based input position\n"
        "                     (int64) of each sorted value (needs --out)\n"
        "  --payload DATASET  carry another dataset of the same element count with the values\n"
        "                     and write it, sorted by them, to --out under its own path (needs\n"
        "                     --out)\n"
        "  --cumsum           also write DATASET_cumsum to --out: the inclusive prefix sum in\n"
        "                     input order; float data in float64 (NaN adds nothing), integers\n"
        "                     exact as int64 / uint64 (a prefix that does not fit: exit 4;\n"
        "                     needs --out)\n"
        "  --cumulative-integral\n"
        "                     also write DATASET_cumint to --out: the cumulative trapezoid rule\n"
        "                     (float64, first value 0) with --dx or --x (needs --out)\n"
        "  --reproducible     exact (Kulisch-accumulator) sums: sum, mean, L2 norm and the\n"
        "                     uniform-dx integral bitwise identical for any rank count, shard\n"
        "                     layout or backend (default: off; float64 sums in rank order,\n"
        "                     the same bits from run to run for a fixed rank count)\n"
        "  --json FILE        write the options, every result, the rank/GPU binding table and\n"
        "                     the phase times (ms, max over ranks) as JSON (rank 0; default:\n"
        "                     none)\n"
        "  --json-version V   the report's layout (needs --json): 2 (default): NaN and inf as\n"
        "                     null, named in \"non_finite\"; times_ms keys as \"local_sort\" | 1:\n"
        "                     the layout before 2, for old readers (\"nan\", \"local sort\")\n"
        "  -q, --quiet        nothing on stdout: no summary table, and no --verbose tables;\n"
        "                     errors, notices and warnings still go to stderr (default: off)\n"
        "  -v, --verbose      also print the binding table (rank, host, node-local rank, device\n"
        "                     index, name, PCI bus id, CUDA_VISIBLE_DEVICES) and, after a sort\n"
        "                     on several ranks, the exchange's steps (default: off)\n"
        "  --progress         progress on stderr from rank 0, also when stderr is not a\n"
        "                     terminal: there, one line per phase start with the elapsed\n"
        "                     seconds (default: only on a terminal and without --quiet, as one\n"
        "                     line \"gpuprim_mpi: PHASE... 12.3 s\" for phases longer than 2 s;\n"
        "                     under mpirun the ranks' stderr is a pipe, so use --progress)\n"
        "  --no-progress      no progress line, not even on a terminal\n"
    );
}

/* The --help sections of the function job's and the execution's options. */
static void print_usage_function_exec(void)
{
    printf(
        "function mode (no file)\n"
        "  --function NAME    integrate x2 | sin | exp | gauss (exp(-x^2)) with the trapezoid rule\n"
        "  --a A, --b B       the bounds, finite, in either order, b - a finite (default 0\n"
        "                     and 1); b < a gives minus the integral over [b, a], a = b gives 0\n"
        "  --n N              trapezoids, a positive integer up to 2^53 (default 1000000; the\n"
        "                     forms 1e9 and 2^30 are accepted)\n"
        "execution\n"
        "  --backend B        auto: CUDA when a GPU is visible, else the CPU with a one-line\n"
        "                     notice (default) | cuda (alias gpu): fail when no GPU | cpu\n"
        "  --transport T      how the sort's rank exchange moves data between partner ranks\n"
        "                     (not with --no-sort or --function): auto (default): on CUDA\n"
        "                     shared for partners on one node, mpi otherwise (a shared setup\n"
        "                     that fails falls back to mpi with a notice), on the CPU backend\n"
        "                     mpi | shared: partners map each other's memory (CUDA IPC, or\n"
        "                     MPI shared-memory windows on the CPU backend); exit 7 when that\n"
        "                     cannot be set up or a partner is on another node | mpi: through\n"
        "                     MPI\n"
        "  --io DRIVER        how the ranks read FILE and write --out: posix (each rank opens\n"
        "                     the file itself; plain pread/pwrite of its part where the layout\n"
        "                     allows) | mpiio (parallel HDF5, collective MPI-IO transfers) |\n"
        "                     auto: mpiio on Lustre, GPFS, BeeGFS, OrangeFS or PanFS, else posix\n"
        "                     (default auto)\n"
        "  -h, --help         print this text and exit 0\n"
        "  --version          print the version and whether this build has the CUDA backend;\n"
        "                     exit 0\n"
    );
}

/* The --help text's tail: the option syntax, the GPU binding, the exit codes. */
static void print_usage_notes(void)
{
    printf(
        "\n"
        "An option's value is the next word or follows '=': --out FILE or --out=FILE. A\n"
        "long option may be shortened to any prefix that names only it (--verb for\n"
        "--verbose; scripts should spell options in full, as a new option can make a prefix\n"
        "ambiguous); -q and -v combine (-qv). An option given twice keeps its last value.\n"
        "A FILE or DATASET value may not start with '-' (an option in its place means the value\n"
        "is missing): write ./-q for a file named -q, /-q for a dataset named -q.\n"
        "\n"
        "GPU binding: device = node-local rank mod the GPUs this rank sees (CUDA_VISIBLE_DEVICES;\n"
        "Slurm's --gpus-per-task=1 leaves one per rank). More ranks than GPUs on a node share\n"
        "them, with one warning. Times are wall-clock milliseconds, the maximum over ranks.\n"
        "\n"
        "exit codes (the same on every rank)\n"
    );
    gp_exit_print(stdout, GP_PROG_MPI, 90);
}

void gp_print_usage(void)
{
    print_usage_input();
    print_usage_output();
    print_usage_dist();
    print_usage_function_exec();
    print_usage_notes();
}

/* The --version text: the version (from git at build time) and the backends built. */
static void print_version(void)
{
#ifdef GPUPRIM_HAVE_CUDA
    const char *cuda = "yes";
#else
    const char *cuda = "no";
#endif
    printf("gpuprim_mpi %s\nCUDA backend: %s\nCPU backend: yes\n", gp_version(), cuda);
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (end == s || *end || errno == ERANGE) return -1;
    *out = d;
    return 0;
}

/* The value of a file option (--out, --json; what = "file", hint prefix "./") or a dataset
 * option (--dataset, --x, --payload; "dataset", "/") must not start with '-': such a word is
 * an option whose value was left out (--out -q, --json --verbose) far more often than a name,
 * and taking it as a name would write a file "-q" at the end of the run or look for a
 * dataset "/--verbose". A name that starts with '-' is still reachable as ./-q or /-q. An
 * empty file name is refused too (an empty dataset name is the reader's error, exit 4).
 * Returns 0, or GP_EXIT_USAGE with "OPTION VALUE: ..." in msg. */
static int check_name_value(const char *opt, const char *val, const char *what,
                            const char *prefix, char *msg, size_t msglen)
{
    if (!val[0] && strcmp(what, "file") == 0) { /* --out '': exit 2 here, not 6 at the write */
        snprintf(msg, msglen, "%s: needs a file name, got an empty word", opt);
        return GP_EXIT_USAGE;
    }
    if (val[0] != '-') return 0;
    snprintf(msg, msglen, "%s %s: a %s name may not start with '-' (is the value missing? for "
                          "a %s named %s, give %s%s)", opt, val, what, what, val, prefix, val);
    return GP_EXIT_USAGE;
}

/* ---- the options: one table for getopt_long ------------------------------------------ */

/* getopt_long's value of each option without a short form (above every char) */
enum {
    O_VERSION = 256, O_DATASET, O_X, O_DX, O_OUT, O_FORCE, O_NO_SORT, O_DESCENDING, O_STABLE,
    O_ARGSORT, O_PAYLOAD, O_REPRODUCIBLE, O_JSON, O_PROGRESS, O_NO_PROGRESS, O_FUNCTION, O_A,
    O_B, O_N, O_BACKEND, O_TRANSPORT, O_IO, O_JSON_VERSION, O_CUMSUM, O_CUMINT, O_HISTOGRAM,
    O_RANGE, O_QUANTILES, O_MEDIAN, O_DISTINCT
};

/* "-": every other word comes back in order as value 1 (the file), nothing is permuted;
 * ":": a missing value comes back as ':', apart from an unknown option ('?') */
static const char g_short[] = "-:hqv";

static const struct option g_long[] = {
    /* file mode */
    {"dataset", required_argument, NULL, O_DATASET}, {"x", required_argument, NULL, O_X},
    {"dx", required_argument, NULL, O_DX}, {"out", required_argument, NULL, O_OUT},
    {"force", no_argument, NULL, O_FORCE}, {"no-sort", no_argument, NULL, O_NO_SORT},
    {"descending", no_argument, NULL, O_DESCENDING}, {"stable", no_argument, NULL, O_STABLE},
    {"argsort", no_argument, NULL, O_ARGSORT}, {"payload", required_argument, NULL, O_PAYLOAD},
    {"reproducible", no_argument, NULL, O_REPRODUCIBLE},
    {"cumsum", no_argument, NULL, O_CUMSUM},
    {"cumulative-integral", no_argument, NULL, O_CUMINT},
    {"transport", required_argument, NULL, O_TRANSPORT}, {"io", required_argument, NULL, O_IO},
    {"histogram", required_argument, NULL, O_HISTOGRAM},
    {"range", required_argument, NULL, O_RANGE},
    {"quantiles", required_argument, NULL, O_QUANTILES}, {"median", no_argument, NULL, O_MEDIAN},
    {"distinct", no_argument, NULL, O_DISTINCT},
    /* function mode */
    {"function", required_argument, NULL, O_FUNCTION}, {"a", required_argument, NULL, O_A},
    {"b", required_argument, NULL, O_B}, {"n", required_argument, NULL, O_N},
    /* both */
    {"json", required_argument, NULL, O_JSON},
    {"json-version", required_argument, NULL, O_JSON_VERSION},
    {"backend", required_argument, NULL, O_BACKEND},
    {"progress", no_argument, NULL, O_PROGRESS}, {"no-progress", no_argument, NULL, O_NO_PROGRESS},
    {"quiet", no_argument, NULL, 'q'}, {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, O_VERSION},
    {NULL, 0, NULL, 0}};

#define NHAVE (O_DISTINCT - O_VERSION + 1)
#define HAVE(v) have[(v) - O_VERSION] /* the option of value v (>= O_VERSION) was given */

/* --quantiles Q[,Q...]: numbers in [0, 1], comma-separated, at most GP_MAX_QUANTILES, into
 * o->q / o->nq. Returns 0 or GP_EXIT_USAGE with msg set. */
static int take_quantiles(const char *val, gp_options *o, char *msg, size_t msglen)
{
    o->nq = 0;
    for (const char *p = val;;) {
        const size_t len = strcspn(p, ",");
        char word[64];
        double q;
        const int fits = len > 0 && len < sizeof word;
        if (fits) {
            memcpy(word, p, len);
            word[len] = '\0';
        }
        if (!fits || parse_double(word, &q) || !(q >= 0.0 && q <= 1.0)) {
            snprintf(msg, msglen, "--quantiles %s: need numbers from 0 to 1, separated by commas "
                     "(e.g. 0.01,0.5,0.99)", val);
            return GP_EXIT_USAGE;
        }
        if (o->nq == GP_MAX_QUANTILES) {
            snprintf(msg, msglen, "--quantiles: at most %d values", GP_MAX_QUANTILES);
            return GP_EXIT_USAGE;
        }
        o->q[o->nq++] = q;
        if (!p[len]) return 0;
        p += len + 1;
    }
}

/* --histogram N: a count (gp_parse_count's forms) from 1 to 2^24 into o->hist_bins. Returns
 * 0 or GP_EXIT_USAGE with msg set. */
static int take_bins(const char *val, gp_options *o, char *msg, size_t msglen)
{
    if (gp_parse_count(val, &o->hist_bins) || o->hist_bins < 1 ||
        o->hist_bins > ((int64_t)1 << 24)) {
        snprintf(msg, msglen, "--histogram %s: need a whole number of bins from 1 to 2^24", val);
        return GP_EXIT_USAGE;
    }
    return 0;
}

/* --range A B: A from the option's value, B the word after it (NULL when none). Returns 0
 * or GP_EXIT_USAGE with msg set. */
static int take_range(const char *a, const char *b, gp_options *o, char *msg, size_t msglen)
{
    if (!b || parse_double(a, &o->range_a) || parse_double(b, &o->range_b) ||
        !isfinite(o->range_a) || !isfinite(o->range_b) || o->range_a > o->range_b) {
        snprintf(msg, msglen, "--range %s%s%s: need two finite numbers A <= B (--range A B)", a,
                 b ? " " : "", b ? b : "");
        return GP_EXIT_USAGE;
    }
    o->have_range = 1;
    return 0;
}

/* Takes one option c with its value val into *o (have[]: which options were given).
 * Returns 0 or GP_EXIT_USAGE with msg set. */
static int take_option(int c, const char *val, gp_options *o, int have[], char *msg,
                       size_t msglen)
{
    char opt[32]; /* "--name" */
    snprintf(opt, sizeof opt, "--%s", gp_opt_name(g_long, c));
    int bad = 0;
    switch (c) {
    case 'q': o->quiet = 1; break;
    case 'v': o->verbose = 1; break;
    case O_FORCE: o->force = 1; break;
    case O_NO_SORT: o->no_sort = 1; break;
    case O_DESCENDING: o->descending = 1; break;
    case O_STABLE: o->stable = 1; break;
    case O_ARGSORT: o->argsort = 1; break;
    case O_REPRODUCIBLE: o->reproducible = 1; break;
    case O_MEDIAN: o->median = 1; break;
    case O_DISTINCT: o->distinct = 1; break;
    case O_HISTOGRAM: bad = take_bins(val, o, msg, msglen) != 0; break;
    case O_QUANTILES: bad = take_quantiles(val, o, msg, msglen) != 0; break;
    case O_CUMSUM: o->cumsum = 1; break;
    case O_CUMINT: o->cumint = 1; break;
    case O_PROGRESS: o->progress = 1; break;
    case O_NO_PROGRESS: o->progress = -1; break;
    case O_DATASET: case O_X: case O_PAYLOAD:
        if (check_name_value(opt, val, "dataset", "/", msg, msglen)) return GP_EXIT_USAGE;
        *(c == O_DATASET ? &o->dataset : c == O_X ? &o->xdataset : &o->payload) = val;
        break;
    case O_OUT: case O_JSON:
        if (check_name_value(opt, val, "file", "./", msg, msglen)) return GP_EXIT_USAGE;
        *(c == O_OUT ? &o->out : &o->json) = val;
        break;
    case O_DX:
        bad = parse_double(val, &o->dx) || !isfinite(o->dx) || o->dx == 0.0;
        if (bad) snprintf(msg, msglen, "--dx %s: need a finite non-zero number", val);
        break;
    case O_A: case O_B: {
        double *dst = c == O_A ? &o->a : &o->b;
        bad = parse_double(val, dst) || !isfinite(*dst);
        if (bad) snprintf(msg, msglen, "%s %s: need a finite number", opt, val);
        break;
    }
    case O_N:
        /* at most 2^53: every point a + i h then has an exact index i in float64 */
        bad = gp_parse_count(val, &o->n) || o->n <= 0 || o->n > ((int64_t)1 << 53);
        if (bad)
            snprintf(msg, msglen,
                     "--n %s: need a positive integer up to 2^53 (e.g. 1000000, 1e9, 2^30)", val);
        break;
    case O_FUNCTION:
        bad = gp_func_parse(val, &o->func) != 0;
        if (bad) snprintf(msg, msglen, "--function %s: unknown function (x2, sin, exp, gauss)", val);
        o->function_mode = 1;
        break;
    case O_BACKEND:
        if (strcmp(val, "auto") == 0) o->backend = GP_BACKEND_AUTO;
        else if (strcmp(val, "cuda") == 0 || strcmp(val, "gpu") == 0) o->backend = GP_BACKEND_CUDA;
        else if (strcmp(val, "cpu") == 0) o->backend = GP_BACKEND_CPU;
        else bad = 1, snprintf(msg, msglen, "--backend %s: need auto, cuda or cpu", val);
        break;
    case O_TRANSPORT:
        if (strcmp(val, "auto") == 0) o->transport = GP_TRANSPORT_OPT_AUTO;
        else if (strcmp(val, "shared") == 0) o->transport = GP_TRANSPORT_OPT_SHARED;
        else if (strcmp(val, "mpi") == 0) o->transport = GP_TRANSPORT_OPT_MPI;
        else bad = 1, snprintf(msg, msglen, "--transport %s: need auto, shared or mpi", val);
        break;
    case O_IO:
        bad = gp_io_mode_parse(val, &o->io) != 0;
        if (bad) snprintf(msg, msglen, "--io %s: need auto, posix or mpiio", val);
        break;
    case O_JSON_VERSION:
        o->json_version = strcmp(val, "1") == 0 ? 1 : strcmp(val, "2") == 0 ? 2 : 0;
        bad = o->json_version == 0;
        if (bad) snprintf(msg, msglen, "--json-version %s: need 1 or 2", val);
        break;
    default: break;
    }
    if (c >= O_VERSION) HAVE(c) = 1;
    return bad ? GP_EXIT_USAGE : 0;
}

/* The distribution's options in file mode: --range needs --histogram, --distinct the sort;
 * --median's 0.5 joins the quantiles unless listed. Returns 0 or GP_EXIT_USAGE with msg
 * set. */
static int check_dist(gp_options *o, char *msg, size_t msglen)
{
    if (o->have_range && !o->hist_bins) {
        snprintf(msg, msglen, "--range sets the bins of --histogram: give --histogram N");
        return GP_EXIT_USAGE;
    }
    if (o->distinct && o->no_sort) {
        snprintf(msg, msglen, "--distinct counts on the sorted data: not with --no-sort");
        return GP_EXIT_USAGE;
    }
    int listed = 0;
    for (int k = 0; k < o->nq; k++) listed |= o->q[k] == 0.5;
    if (o->median && !listed) {
        if (o->nq == GP_MAX_QUANTILES) {
            snprintf(msg, msglen, "--quantiles and --median: at most %d values", GP_MAX_QUANTILES);
            return GP_EXIT_USAGE;
        }
        o->q[o->nq++] = 0.5;
    }
    return 0;
}

/* The rules between options, after the last word: function mode takes no file-mode option,
 * file mode needs a file, and the sort options need a sort; --median's 0.5 joins the
 * quantiles. Returns 0 or GP_EXIT_USAGE with msg set. */
static int check_modes(gp_options *o, const int have[], char *msg, size_t msglen)
{
    const int have_n = HAVE(O_N), have_a = HAVE(O_A), have_b = HAVE(O_B), have_dx = HAVE(O_DX),
              have_transport = HAVE(O_TRANSPORT), have_io = HAVE(O_IO);
    if (HAVE(O_JSON_VERSION) && !o->json) {
        snprintf(msg, msglen, "--json-version chooses the layout of the --json report: give "
                              "--json FILE, or leave --json-version out");
        return GP_EXIT_USAGE;
    }
    if (o->function_mode) {
        if (o->file) {
            snprintf(msg, msglen, "--function integrates a built-in f(x): give no input file");
            return GP_EXIT_USAGE;
        }
        /* name the first file-mode option given */
        const char *fileonly = o->out ? "--out" : o->force ? "--force" : o->xdataset ? "--x"
                             : o->dataset ? "--dataset" : have_dx ? "--dx"
                             : o->descending ? "--descending" : o->stable ? "--stable"
                             : o->argsort ? "--argsort" : o->payload ? "--payload"
                             : o->reproducible ? "--reproducible"
                             : o->cumsum ? "--cumsum"
                             : o->cumint ? "--cumulative-integral"
                             : have_transport ? "--transport" : have_io ? "--io"
                             : o->hist_bins ? "--histogram" : o->have_range ? "--range"
                             : HAVE(O_QUANTILES) ? "--quantiles" : o->median ? "--median"
                             : o->distinct ? "--distinct" : NULL;
        if (fileonly) {
            snprintf(msg, msglen, "%s belongs to file mode: --function takes only --a, --b, --n "
                                  "and the common options", fileonly);
            return GP_EXIT_USAGE;
        }
        if (!isfinite(o->b - o->a)) { /* the step h = (b - a) / n would be infinite */
            snprintf(msg, msglen, "--a %g --b %g: b - a overflows float64", o->a, o->b);
            return GP_EXIT_USAGE;
        }
    } else {
        if (!o->file) {
            snprintf(msg, msglen, "no input file (usage: gpuprim_mpi [options] FILE.h5; see --help)");
            return GP_EXIT_USAGE;
        }
        if (have_n || have_a || have_b) {
            snprintf(msg, msglen, "--n, --a and --b belong to --function mode");
            return GP_EXIT_USAGE;
        }
        if (o->xdataset && have_dx) {
            snprintf(msg, msglen, "give --dx or --x, not both");
            return GP_EXIT_USAGE;
        }
        if (o->out && o->no_sort && !o->cumsum && !o->cumint && !o->hist_bins) {
            snprintf(msg, msglen, "--out writes the sorted data: with --no-sort it needs "
                                  "--cumsum, --cumulative-integral or --histogram to hold "
                                  "anything");
            return GP_EXIT_USAGE;
        }
        if (o->no_sort && (o->descending || o->stable || o->argsort || o->payload)) {
            snprintf(msg, msglen, "--descending, --stable, --argsort and --payload sort: "
                                  "not with --no-sort");
            return GP_EXIT_USAGE;
        }
        if (o->no_sort && have_transport) {
            snprintf(msg, msglen, "--transport chooses how the sort's rank exchange moves data: "
                                  "not with --no-sort");
            return GP_EXIT_USAGE;
        }
        if ((o->argsort || o->payload || o->cumsum || o->cumint) && !o->out) {
            snprintf(msg, msglen, "%s writes a dataset of --out: give --out FILE",
                     o->argsort ? "--argsort" : o->payload ? "--payload"
                     : o->cumsum ? "--cumsum" : "--cumulative-integral");
            return GP_EXIT_USAGE;
        }
        if (check_dist(o, msg, msglen)) return GP_EXIT_USAGE;
        /* --force governs --out only (an existing --json report is replaced without it) */
        if (o->force && !o->out) {
            snprintf(msg, msglen, "--force lets --out replace an existing file: give --out FILE, "
                                  "or leave --force out");
            return GP_EXIT_USAGE;
        }
    }
    return 0;
}

int gp_parse_options(int argc, char **argv, gp_options *o, int print, char *msg, size_t msglen)
{
    memset(o, 0, sizeof *o);
    o->dx = 1.0;
    o->a = 0.0;
    o->b = 1.0;
    o->n = 1000000;
    o->backend = GP_BACKEND_AUTO;
    o->io = GP_IO_AUTO;
    o->json_version = GP_JSON_VERSION_DEFAULT;
    int have[NHAVE] = {0};

    gp_opt_restart();
    for (int c; (c = getopt_long(argc, argv, g_short, g_long, NULL)) != -1;) {
        if (c == 'h' || c == O_VERSION) {
            if (print && c == 'h') gp_print_usage();
            if (print && c == O_VERSION) print_version();
            return -1;
        }
        if (c == '?' || c == ':') {
            gp_opt_error(g_long, c, argc, argv, msg, msglen);
            return GP_EXIT_USAGE;
        }
        if (c == 1) { /* a word that is no option: the file */
            if (o->file) {
                snprintf(msg, msglen, "more than one input file (%s, %s)", o->file, optarg);
                return GP_EXIT_USAGE;
            }
            o->file = optarg;
            continue;
        }
        if (c == O_RANGE) { /* two values: the option's and the next word */
            const char *b = optind < argc ? argv[optind++] : NULL;
            if (take_range(optarg, b, o, msg, msglen)) return GP_EXIT_USAGE;
            HAVE(O_RANGE) = 1;
            continue;
        }
        if (take_option(c, optarg, o, have, msg, msglen)) return GP_EXIT_USAGE;
    }
    if (gp_opt_rest(argc, argv, msg, msglen)) return GP_EXIT_USAGE;
    return check_modes(o, have, msg, msglen);
}

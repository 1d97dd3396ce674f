/* cli.c — option parsing for gpuprim_mpi. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gp_print_usage(void)
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
        "output\n"
        "  --out FILE         write the globally sorted data: one 1-D dataset, same path and\n"
        "                     stored type as the input; written under a temporary name and\n"
        "                     renamed when every rank succeeded (default: none)\n"
        "  --force            overwrite an existing --out file (needs --out; default: off)\n"
        "  --no-sort          statistics and integral only; no sort, no --out (default: off)\n"
        "  --descending       sort largest first; NaNs still last, +0.0 before -0.0 (default:\n"
        "                     ascending)\n"
        "  --stable           ties keep their input order (sort by value, then input position;\n"
        "                     default: the faster unstable sort, ties in no promised order)\n"
        "  --argsort          also write DATASET_argsort to --out: the 0-based input position\n"
        "                     (int64) of each sorted value (needs --out)\n"
        "  --payload DATASET  carry another dataset of the same element count with the values\n"
        "                     and write it, sorted by them, to --out under its own path (needs\n"
        "                     --out)\n"
        "  --reproducible     exact (Kulisch-accumulator) sums: sum, mean, L2 norm and the\n"
        "                     uniform-dx integral bitwise identical for any rank count, shard\n"
        "                     layout or backend (default: off; float64 sums in rank order,\n"
        "                     the same bits from run to run for a fixed rank count)\n"
        "  --json FILE        write the options, every result, the rank/GPU binding table and\n"
        "                     the phase times (ms, max over ranks) as JSON; NaN and infinities\n"
        "                     as the strings \"nan\", \"inf\", \"-inf\" (rank 0; default: none)\n"
        "  -q, --quiet        no summary table; errors, notices and warnings still go to\n"
        "                     stderr (default: off)\n"
        "  -v, --verbose      also print the binding table: rank, host, node-local rank, device\n"
        "                     index, name, PCI bus id, CUDA_VISIBLE_DEVICES (default: off)\n"
        "  --progress         progress on stderr from rank 0, also when stderr is not a\n"
        "                     terminal: there, one line per phase start with the elapsed\n"
        "                     seconds (default: only on a terminal and without --quiet, as one\n"
        "                     line \"gpuprim_mpi: PHASE... 12.3 s\" for phases longer than 2 s;\n"
        "                     under mpirun the ranks' stderr is a pipe, so use --progress)\n"
        "  --no-progress      no progress line, not even on a terminal\n"
        "function mode (no file)\n"
        "  --function NAME    integrate x2 | sin | exp | gauss (exp(-x^2)) with the trapezoid rule\n"
        "  --a A, --b B       the bounds, finite, in either order, b - a finite (default 0\n"
        "                     and 1); b < a gives minus the integral over [b, a], a = b gives 0\n"
        "  --n N              trapezoids, a positive integer (default 1000000; the forms 1e9 and\n"
        "                     2^30 are accepted)\n"
        "execution\n"
        "  --backend B        auto: CUDA when a GPU is visible, else the CPU with a one-line\n"
        "                     notice (default) | cuda (alias gpu): fail when no GPU | cpu\n"
        "  --transport T      how the sort's rank exchange moves data between partner ranks:\n"
        "                     auto: shared for partners on one node, mpi otherwise; a shared\n"
        "                     setup that fails falls back to mpi with a notice (default) |\n"
        "                     shared: partners map each other's memory (CUDA IPC, or MPI\n"
        "                     shared-memory windows on the CPU backend); exit 7 when that\n"
        "                     cannot be set up or a partner is on another node | mpi: through\n"
        "                     MPI (not with --no-sort or --function)\n"
        "  --io DRIVER        how the ranks read FILE and write --out: posix (each rank opens\n"
        "                     the file itself; plain pread/pwrite of its part where the layout\n"
        "                     allows) | mpiio (parallel HDF5, collective MPI-IO transfers) |\n"
        "                     auto: mpiio on Lustre, GPFS, BeeGFS, OrangeFS or PanFS, else posix\n"
        "                     (default auto)\n"
        "  -h, --help         print this text and exit 0\n"
        "  --version          print the version and whether this build has the CUDA backend;\n"
        "                     exit 0\n"
        "\n"
        "A FILE or DATASET value may not start with '-' (an option in its place means the value\n"
        "is missing): write ./-q for a file named -q, /-q for a dataset named -q.\n"
        "\n"
        "GPU binding: device = node-local rank mod the GPUs this rank sees (CUDA_VISIBLE_DEVICES;\n"
        "Slurm's --gpus-per-task=1 leaves one per rank). More ranks than GPUs on a node share\n"
        "them, with one warning. Times are wall-clock milliseconds, the maximum over ranks.\n"
        "\n"
        "exit codes (the same on every rank)\n"
        "  0  success\n"
        "  1  internal or MPI error\n"
        "  2  bad command line\n"
        "  3  input file missing, unreadable, or not HDF5\n"
        "  4  dataset missing, ambiguous, behind a dangling link, or of an unsupported\n"
        "     class or shape\n"
        "  5  reading the data failed\n"
        "  6  the output (--out, --json) could not be written, or --out exists without --force\n"
        "  7  the requested backend is unavailable, or a device call failed\n"
        "  8  the self-check of the sorted result failed\n");
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

/* Parses a count: "1000", "1e9", "2^30". Returns 0 on success. */
static int parse_count(const char *s, int64_t *out)
{
    char *end;
    const char *caret = strchr(s, '^');
    errno = 0;
    if (caret) {
        long base = strtol(s, &end, 10);
        if (end != caret || errno) return -1;
        long e = strtol(caret + 1, &end, 10);
        if (end == caret + 1 || *end || errno || base < 2 || e < 0) return -1; /* "2^": no */
        long double v = powl((long double)base, (long double)e);
        if (v > 9.2e18L) return -1;
        *out = (int64_t)v;
        return 0;
    }
    if (strpbrk(s, "eE.")) {
        double d = strtod(s, &end);
        if (*end || errno || !(d >= -9.2e18 && d <= 9.2e18) || d != floor(d)) return -1;
        *out = (int64_t)d;
        return 0;
    }
    long long v = strtoll(s, &end, 10);
    if (*end || errno || end == s) return -1;
    *out = v;
    return 0;
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

int gp_parse_options(int argc, char **argv, gp_options *o, int print, char *msg, size_t msglen)
{
    memset(o, 0, sizeof *o);
    o->dx = 1.0;
    o->a = 0.0;
    o->b = 1.0;
    o->n = 1000000;
    o->backend = GP_BACKEND_AUTO;
    o->io = GP_IO_AUTO;
    int have_n = 0, have_a = 0, have_b = 0, have_dx = 0, have_transport = 0, have_io = 0;

#define NEED_ARG()                                                                      \
    do {                                                                                \
        if (i + 1 >= argc) {                                                            \
            snprintf(msg, msglen, "option %s needs a value", arg);                     \
            return GP_EXIT_USAGE;                                                       \
        }                                                                               \
        val = argv[++i];                                                                \
    } while (0)
/* NEED_ARG for an option whose value names a file or a dataset (check_name_value) */
#define NEED_NAME(what, prefix)                                                         \
    do {                                                                                \
        NEED_ARG();                                                                     \
        if (check_name_value(arg, val, what, prefix, msg, msglen)) return GP_EXIT_USAGE; \
    } while (0)

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            if (print) gp_print_usage();
            return -1;
        } else if (strcmp(arg, "--version") == 0) {
            if (print) print_version();
            return -1;
        } else if (strcmp(arg, "--dataset") == 0) {
            NEED_NAME("dataset", "/"); o->dataset = val;
        } else if (strcmp(arg, "--x") == 0) {
            NEED_NAME("dataset", "/"); o->xdataset = val;
        } else if (strcmp(arg, "--dx") == 0) {
            NEED_ARG();
            if (parse_double(val, &o->dx) || !isfinite(o->dx) || o->dx == 0.0) {
                snprintf(msg, msglen, "--dx %s: need a finite non-zero number", val);
                return GP_EXIT_USAGE;
            }
            have_dx = 1;
        } else if (strcmp(arg, "--out") == 0) {
            NEED_NAME("file", "./"); o->out = val;
        } else if (strcmp(arg, "--force") == 0) {
            o->force = 1;
        } else if (strcmp(arg, "--no-sort") == 0) {
            o->no_sort = 1;
        } else if (strcmp(arg, "--descending") == 0) {
            o->descending = 1;
        } else if (strcmp(arg, "--stable") == 0) {
            o->stable = 1;
        } else if (strcmp(arg, "--argsort") == 0) {
            o->argsort = 1;
        } else if (strcmp(arg, "--payload") == 0) {
            NEED_NAME("dataset", "/"); o->payload = val;
        } else if (strcmp(arg, "--reproducible") == 0) {
            o->reproducible = 1;
        } else if (strcmp(arg, "--json") == 0) {
            NEED_NAME("file", "./"); o->json = val;
        } else if (strcmp(arg, "--progress") == 0) {
            o->progress = 1;
        } else if (strcmp(arg, "--no-progress") == 0) {
            o->progress = -1;
        } else if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
            o->quiet = 1;
        } else if (strcmp(arg, "--verbose") == 0 || strcmp(arg, "-v") == 0) {
            o->verbose = 1;
        } else if (strcmp(arg, "--function") == 0) {
            NEED_ARG();
            if (gp_func_parse(val, &o->func)) {
                snprintf(msg, msglen, "--function %s: unknown function (x2, sin, exp, gauss)", val);
                return GP_EXIT_USAGE;
            }
            o->function_mode = 1;
        } else if (strcmp(arg, "--a") == 0 || strcmp(arg, "--b") == 0) {
            NEED_ARG();
            double *dst = arg[2] == 'a' ? &o->a : &o->b;
            if (parse_double(val, dst) || !isfinite(*dst)) {
                snprintf(msg, msglen, "%s %s: need a finite number", arg, val);
                return GP_EXIT_USAGE;
            }
            if (arg[2] == 'a') have_a = 1; else have_b = 1;
        } else if (strcmp(arg, "--n") == 0) {
            NEED_ARG();
            /* at most 2^53: every point a + i h then has an exact index i in float64 */
            if (parse_count(val, &o->n) || o->n <= 0 || o->n > ((int64_t)1 << 53)) {
                snprintf(msg, msglen,
                         "--n %s: need a positive integer up to 2^53 (e.g. 1000000, 1e9, 2^30)", val);
                return GP_EXIT_USAGE;
            }
            have_n = 1;
        } else if (strcmp(arg, "--backend") == 0) {
            NEED_ARG();
            if (strcmp(val, "auto") == 0) o->backend = GP_BACKEND_AUTO;
            else if (strcmp(val, "cuda") == 0 || strcmp(val, "gpu") == 0) o->backend = GP_BACKEND_CUDA;
            else if (strcmp(val, "cpu") == 0) o->backend = GP_BACKEND_CPU;
            else {
                snprintf(msg, msglen, "--backend %s: need auto, cuda or cpu", val);
                return GP_EXIT_USAGE;
            }
        } else if (strcmp(arg, "--transport") == 0) {
            NEED_ARG();
            if (strcmp(val, "auto") == 0) o->transport = GP_TRANSPORT_OPT_AUTO;
            else if (strcmp(val, "shared") == 0) o->transport = GP_TRANSPORT_OPT_SHARED;
            else if (strcmp(val, "mpi") == 0) o->transport = GP_TRANSPORT_OPT_MPI;
            else {
                snprintf(msg, msglen, "--transport %s: need auto, shared or mpi", val);
                return GP_EXIT_USAGE;
            }
            have_transport = 1;
        } else if (strcmp(arg, "--io") == 0) {
            NEED_ARG();
            if (gp_io_mode_parse(val, &o->io) != 0) {
                snprintf(msg, msglen, "--io %s: need auto, posix or mpiio", val);
                return GP_EXIT_USAGE;
            }
            have_io = 1;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            snprintf(msg, msglen, "unknown option %s (see --help)", arg);
            return GP_EXIT_USAGE;
        } else {
            if (o->file) {
                snprintf(msg, msglen, "more than one input file (%s, %s)", o->file, arg);
                return GP_EXIT_USAGE;
            }
            o->file = arg;
        }
    }
#undef NEED_NAME
#undef NEED_ARG

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
                             : have_transport ? "--transport" : have_io ? "--io" : NULL;
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
        if (o->out && o->no_sort) {
            snprintf(msg, msglen, "--out writes the sorted data: it cannot go with --no-sort");
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
        if ((o->argsort || o->payload) && !o->out) {
            snprintf(msg, msglen, "%s writes a dataset of --out: give --out FILE",
                     o->argsort ? "--argsort" : "--payload");
            return GP_EXIT_USAGE;
        }
        /* --force governs --out only (an existing --json report is replaced without it) */
        if (o->force && !o->out) {
            snprintf(msg, msglen, "--force lets --out replace an existing file: give --out FILE, "
                                  "or leave --force out");
            return GP_EXIT_USAGE;
        }
    }
    return 0;
}

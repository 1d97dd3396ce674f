/* cli.c — option parsing for gpuprim_mpi. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GPUPRIM_VERSION
#define GPUPRIM_VERSION "unknown"
#endif

void gp_print_usage(void)
{
    printf(
        "usage: gpuprim_mpi [options] FILE.h5\n"
        "       gpuprim_mpi [options] --function NAME [--a A] [--b B] [--n N]\n"
        "\n"
        "Reads one HDF5 dataset sharded over the MPI ranks (one GPU per rank), prints its\n"
        "global statistics, the trapezoid integral of the samples, sorts it globally across\n"
        "the ranks (bitonic sort on each GPU, bitonic merge exchange between ranks) and checks\n"
        "the result. Or integrates a built-in f(x) with the trapezoid rule (no file).\n"
        "\n"
        "input\n"
        "  --dataset PATH     dataset to read (default: the one numeric dataset in FILE)\n"
        "  --dx H             sample spacing for the integral (default 1)\n"
        "  --x DATASET        sample coordinates (same element count) for a non-uniform integral\n"
        "output\n"
        "  --out FILE         write the globally sorted data (one dataset, the input's type)\n"
        "  --force            overwrite an existing --out file\n"
        "  --no-sort          statistics and integral only (no sort, no --out)\n"
        "  --json FILE        write every result and the phase times as JSON (rank 0)\n"
        "  --quiet            no summary table\n"
        "  --verbose          also print the rank / host / device binding table\n"
        "function mode\n"
        "  --function NAME    integrate x2 | sin | exp | gauss (exp(-x^2)) over [a, b]\n"
        "  --a A, --b B       interval (default 0 and 1)\n"
        "  --n N              trapezoids (default 1000000; 1e9 and 2^30 forms accepted)\n"
        "execution\n"
        "  --backend B        auto (default: CUDA if a GPU is visible, else CPU) | cuda | cpu\n"
        "  --help, --version\n"
        "\n"
        "exit codes: 0 ok, 1 internal/MPI error, 2 bad options, 3 cannot open file,\n"
        "  4 dataset missing/ambiguous/unsupported, 5 read failed, 6 write failed,\n"
        "  7 backend/device failure, 8 sorted-result check failed\n");
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
        if (*end || errno || base < 2 || e < 0) return -1;
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

int gp_parse_options(int argc, char **argv, gp_options *o, int print, char *msg, size_t msglen)
{
    memset(o, 0, sizeof *o);
    o->dx = 1.0;
    o->a = 0.0;
    o->b = 1.0;
    o->n = 1000000;
    o->backend = GP_BACKEND_AUTO;
    int have_n = 0, have_a = 0, have_b = 0, have_dx = 0;

#define NEED_ARG()                                                                      \
    do {                                                                                \
        if (i + 1 >= argc) {                                                            \
            snprintf(msg, msglen, "option %s needs a value", arg);                     \
            return GP_EXIT_USAGE;                                                       \
        }                                                                               \
        val = argv[++i];                                                                \
    } while (0)

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            if (print) gp_print_usage();
            return -1;
        } else if (strcmp(arg, "--version") == 0) {
            if (print) printf("gpuprim_mpi %s\n", GPUPRIM_VERSION);
            return -1;
        } else if (strcmp(arg, "--dataset") == 0) {
            NEED_ARG(); o->dataset = val;
        } else if (strcmp(arg, "--x") == 0) {
            NEED_ARG(); o->xdataset = val;
        } else if (strcmp(arg, "--dx") == 0) {
            NEED_ARG();
            if (parse_double(val, &o->dx) || !isfinite(o->dx) || o->dx == 0.0) {
                snprintf(msg, msglen, "--dx %s: need a finite non-zero number", val);
                return GP_EXIT_USAGE;
            }
            have_dx = 1;
        } else if (strcmp(arg, "--out") == 0) {
            NEED_ARG(); o->out = val;
        } else if (strcmp(arg, "--force") == 0) {
            o->force = 1;
        } else if (strcmp(arg, "--no-sort") == 0) {
            o->no_sort = 1;
        } else if (strcmp(arg, "--json") == 0) {
            NEED_ARG(); o->json = val;
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
            if (parse_count(val, &o->n) || o->n <= 0) {
                snprintf(msg, msglen, "--n %s: need a positive integer (e.g. 1000000, 1e9, 2^30)", val);
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
#undef NEED_ARG

    if (o->function_mode) {
        if (o->file) {
            snprintf(msg, msglen, "--function integrates a built-in f(x): give no input file");
            return GP_EXIT_USAGE;
        }
        if (o->out || o->xdataset || o->dataset || have_dx) {
            snprintf(msg, msglen, "--function does not take --out, --x, --dataset or --dx");
            return GP_EXIT_USAGE;
        }
        if (!(o->b > o->a)) {
            snprintf(msg, msglen, "--a %g --b %g: need a < b", o->a, o->b);
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
    }
    return 0;
}

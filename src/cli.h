/* cli.h — options of gpuprim_mpi (its exit codes: exitcode.h). */
#ifndef GP_CLI_H
#define GP_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "exitcode.h"
#include "gpuprim/iodriver.h"
#include "gpuprim/kernels.h"

typedef enum { GP_BACKEND_AUTO = 0, GP_BACKEND_CUDA, GP_BACKEND_CPU } gp_backend_choice;

/* --transport: how the rank exchange moves data (gp_transport of exchange.h) */
typedef enum {
    GP_TRANSPORT_OPT_AUTO = 0,
    GP_TRANSPORT_OPT_SHARED,
    GP_TRANSPORT_OPT_MPI
} gp_transport_choice;

#define GP_MAX_QUANTILES 64 /* --quantiles (with --median's 0.5) asks for at most this many */

typedef struct gp_options {
    const char *file;      /* input HDF5 file (NULL in function mode) */
    const char *dataset;   /* --dataset PATH, NULL: the one numeric dataset */
    const char *xdataset;  /* --x DATASET: sample coordinates for the trapezoid rule */
    double dx;             /* --dx H: uniform sample spacing (default 1) */
    const char *out;       /* --out FILE: write the globally sorted data (and the scans) */
    int force;             /* --force: overwrite --out */
    int function_mode;     /* --function given */
    gp_func func;          /* --function NAME */
    double a, b;           /* --a, --b: integration interval (default 0, 1) */
    int64_t n;             /* --n: trapezoids (default 1e6) */
    gp_backend_choice backend; /* --backend auto|cuda|cpu */
    gp_transport_choice transport; /* --transport auto|shared|mpi */
    gp_io_mode io;         /* --io auto|posix|mpiio: the driver of the file I/O */
    const char *json;      /* --json FILE: machine-readable results (rank 0 writes) */
    int json_version;      /* --json-version 1|2: the report's layout (report_json.h) */
    int verbose;           /* --verbose: rank/host/GPU binding table */
    int quiet;             /* --quiet: no summary table (errors still printed) */
    int no_sort;           /* --no-sort: statistics and integral only */
    int descending;        /* --descending: sort largest first (NaNs still last) */
    int argsort;           /* --argsort: also write each value's 0-based input position */
    const char *payload;   /* --payload DATASET: carried with the keys, written sorted */
    int stable;            /* --stable: ties keep input order */
    int reproducible;      /* --reproducible: exact sums, the same bits for any layout */
    int cumsum;            /* --cumsum: write DATASET_cumsum, the inclusive prefix sum */
    int cumint;            /* --cumulative-integral: write DATASET_cumint, the cumulative
                              trapezoid rule (--dx or --x) */
    int progress;          /* --progress 1, --no-progress -1, default 0 (a live line on a
                              terminal, see progress.h) */
    int64_t hist_bins;     /* --histogram N: N equal-width bins (0: no histogram) */
    int have_range;        /* --range A B given: the bins over [range_a, range_b] */
    double range_a, range_b;
    int nq;                /* quantiles asked for: --quantiles Q[,Q...] in their order, then
                              0.5 for --median unless listed */
    double q[GP_MAX_QUANTILES];
    int median;            /* --median given */
    int distinct;          /* --distinct: the count of distinct non-NaN values */
} gp_options;

/* Parses argv into *o with getopt_long: "--out FILE" or "--out=FILE", long options
 * shortened to an unambiguous prefix, -q and -v combined (-qv); the last value of an option
 * given twice wins. Returns 0 to run, -1 when --help or --version was printed to stdout
 * (with print; exit 0), or GP_EXIT_USAGE with a one-line reason in msg. Prints nothing
 * else, never exits, and leaves argv as it was (nothing permuted); it may be called any
 * number of times in a process (it resets getopt_long's state; not thread-safe). Every rank
 * parses the same argv, so all ranks reach the same verdict without communication. The
 * strings in *o point into argv. */
int gp_parse_options(int argc, char **argv, gp_options *o, int print, char *msg,
                     size_t msglen);

/* The --help text. */
void gp_print_usage(void);

#endif /* GP_CLI_H */

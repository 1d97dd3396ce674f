/* cli.h — options of gpuprim_mpi and the program's exit codes. */
#ifndef GP_CLI_H
#define GP_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "gp_iodriver.h"
#include "gp_kernels.h"

/* Exit codes of gpuprim_mpi (documented in README.md). The io codes of io/h5io.h are the
 * same numbers (3..6). */
enum {
    GP_EXIT_OK = 0,
    GP_EXIT_FAIL = 1,     /* internal error, MPI failure */
    GP_EXIT_USAGE = 2,    /* bad command line */
    GP_EXIT_OPEN = 3,     /* input file missing / unreadable / not HDF5 */
    GP_EXIT_DATASET = 4,  /* dataset missing / ambiguous / unsupported */
    GP_EXIT_READ = 5,     /* reading the data failed */
    GP_EXIT_WRITE = 6,    /* the output could not be written */
    GP_EXIT_DEVICE = 7,   /* the requested backend is unavailable or a device call failed */
    GP_EXIT_VERIFY = 8    /* the self-check of the sorted result failed */
};

typedef enum { GP_BACKEND_AUTO = 0, GP_BACKEND_CUDA, GP_BACKEND_CPU } gp_backend_choice;

/* --transport: how the rank exchange moves data (gp_transport of exchange.h) */
typedef enum {
    GP_TRANSPORT_OPT_AUTO = 0,
    GP_TRANSPORT_OPT_SHARED,
    GP_TRANSPORT_OPT_MPI
} gp_transport_choice;

typedef struct gp_options {
    const char *file;      /* input HDF5 file (NULL in function mode) */
    const char *dataset;   /* --dataset PATH, NULL: the one numeric dataset */
    const char *xdataset;  /* --x DATASET: sample coordinates for the trapezoid rule */
    double dx;             /* --dx H: uniform sample spacing (default 1) */
    const char *out;       /* --out FILE: write the globally sorted data */
    int force;             /* --force: overwrite --out */
    int function_mode;     /* --function given */
    gp_func func;          /* --function NAME */
    double a, b;           /* --a, --b: integration interval (default 0, 1) */
    int64_t n;             /* --n: trapezoids (default 1e6) */
    gp_backend_choice backend; /* --backend auto|cuda|cpu */
    gp_transport_choice transport; /* --transport auto|shared|mpi */
    gp_io_mode io;         /* --io auto|posix|mpiio: the driver of the file I/O */
    const char *json;      /* --json FILE: machine-readable results (rank 0 writes) */
    int verbose;           /* --verbose: rank/host/GPU binding table */
    int quiet;             /* --quiet: no summary table (errors still printed) */
    int no_sort;           /* --no-sort: statistics and integral only */
    int descending;        /* --descending: sort largest first (NaNs still last) */
    int argsort;           /* --argsort: also write each value's 0-based input position */
    const char *payload;   /* --payload DATASET: carried with the keys, written sorted */
    int stable;            /* --stable: ties keep input order */
    int reproducible;      /* --reproducible: exact sums, the same bits for any layout */
    int progress;          /* --progress 1, --no-progress -1, default 0 (a live line on a
                              terminal, see progress.h) */
} gp_options;

/* Parses argv into *o. Returns 0 to run, -1 when --help or --version was printed to stdout
 * (exit 0), or GP_EXIT_USAGE with a one-line reason in msg. Prints nothing else; every rank
 * parses the same argv, so all ranks reach the same verdict without communication. */
int gp_parse_options(int argc, char **argv, gp_options *o, int print, char *msg,
                     size_t msglen);

/* The --help text. */
void gp_print_usage(void);

#endif /* GP_CLI_H */

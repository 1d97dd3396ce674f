/* result.h — the file job's and the function job's result record, gp_result, in parts (one
 * per concept): filled by the phases (job.c, the ph_*.c files, setup.c's backend choice) and
 * shown by the report (report.c, report_doc.c, report_dist.c). Types only. */
#ifndef GP_RESULT_H
#define GP_RESULT_H

#include <stdint.h>

#include "binding.h"
#include "cli.h"
#include "gpuprim/exchange.h"
#include "gpuprim/kernels.h"
#include "phases.h"

/* The result record: everything the report and the JSON show (valid on rank 0 after a run),
 * in parts, one per concept; each part is filled by the phases of its concept (job.c and the
 * ph_*.c files) and shown by its own functions in report.c and report_doc.c. A new
 * primitive (a scan, a distribution) adds a part of its own at the end of gp_result. */

/* The run: who ran it, how, and the times. */
typedef struct gp_result_run {
    int ranks;
    const char *backend;          /* "cuda" or "cpu" */
    int gpus_visible;             /* on rank 0's node */
    int ranks_per_gpu_max;
    int mem_share;                /* ranks that share this rank's device memory (this rank
                                     included): the ranks of its GPU on the node, or for the
                                     CPU backend the ranks of the node; 0 counts as 1. Each
                                     counts 1/mem_share of the free memory (gp_run_file) */
    int node_ranks;               /* ranks on this rank's node (the binding's local size) */
    gp_binding *bindings;         /* every rank's binding, in rank order (rank 0; NULL
                                     elsewhere), for the JSON report */
    int function_mode;            /* 1: the function job (gp_result.fn), else the file job */
    double t[GP_NPHASES];         /* times per row (phases.h), seconds, max over ranks */
} gp_result_run;

/* The file job's input. */
typedef struct gp_result_input {
    char file[1024], dataset[1024], type_desc[64];
    gp_dtype dtype;
    int64_t n;
    int ndims;                    /* the dataset's dimensions (read flattened, row-major) */
    int64_t dims[32];             /* their extents (the first ndims; GP_H5_MAXDIMS) */
    gp_io_mode io;                /* the driver the input was read with (resolved --io) */
} gp_result_input;

/* The statistics of the input and its integral. */
typedef struct gp_result_stats {
    gp_stats global;              /* global, of the input */
    double integral;              /* trapezoid rule of the samples */
    int nonuniform;               /* 1 with --x */
    double dx;
    int reproducible;             /* sums from exact accumulation (--reproducible) */
    int64_t chunks;               /* the statistics pass went through the device in this many
                                     chunks per rank (0: each shard whole, the usual case) */
    int64_t chunk_elems;          /* elements per chunk (0 when not chunked) */
} gp_result_stats;

/* The sort, its check and its output. */
typedef struct gp_result_sort {
    int done;                     /* the sort ran */
    int ok;                       /* verified: shards sorted, boundaries in order, multiset kept */
    int descending, stable;       /* sort order options */
    int64_t descents;
    uint64_t hash_in;             /* multiset hash of the input keys the sort is checked with */
    gp_stats stats;               /* global, of the sorted result */
    const char *out;              /* --out (NULL: none) */
    gp_io_mode io;                /* the driver --out was written with (GP_IO_AUTO: none) */
    char argsort_dset[1040];      /* dataset written with --argsort ("" when none) */
    char payload_dset[1024];      /* dataset written with --payload ("" when none) */
    int64_t runs;                 /* out of core: the most device runs of a rank (a rank
                                     whose shard fits the device whole has 1); 0: the sort
                                     ran in device memory */
} gp_result_sort;

/* The rank exchange of the sort. */
typedef struct gp_result_exchange {
    int stages;
    int64_t bytes;                /* moved between ranks (copied from a partner's memory into
                                     a rank's), summed over ranks */
    int64_t bytes_whole;          /* what the whole-shard exchange would have sent, summed */
    /* per exchange step (max over ranks for times, sum over ranks for bytes, the OR of the
     * ranks' GP_TRANSPORT_SHARED / GP_TRANSPORT_MPI flags; 0: no rank had a partner) */
    double step_comm_ms[GP_XSTEPS_MAX];
    double step_merge_ms[GP_XSTEPS_MAX];
    int64_t step_bytes[GP_XSTEPS_MAX];
    int step_transport[GP_XSTEPS_MAX];
} gp_result_exchange;

/* The function job: the trapezoid rule of a built-in function. */
typedef struct gp_result_function {
    gp_func func;
    double a, b, h;
    int64_t ntrap;
    double integral, exact;
} gp_result_function;

/* The prefix scans (--cumsum, --cumulative-integral) and what they wrote. */
typedef struct gp_result_scan {
    char cumsum_dset[1040];       /* dataset written with --cumsum ("" when none) */
    char cumint_dset[1040];       /* dataset written with --cumulative-integral ("" when none) */
    gp_dtype cumsum_type;         /* its element type: GP_F64, GP_I64 or GP_U64 */
    double total;                 /* float cumsum: its last value (0 for no element) */
    gp_i128 itotal;               /* integer cumsum: its last value, exact (0 for none) */
    double last_integral;         /* the last value of DATASET_cumint (0 for none) */
} gp_result_scan;

/* The distribution: --histogram, --quantiles / --median, --distinct (ph_hist.c,
 * ph_select.c; valid on rank 0). */
typedef struct gp_result_dist {
    int64_t bins;                 /* --histogram N; 0: no histogram */
    int64_t *counts;              /* rank 0: the bins' counts (malloc'ed, kept for the
                                     report) */
    double *edges;                /* rank 0: the bins + 1 edges as float64 (float32 ones
                                     exactly) */
    gp_dtype edge_type;           /* GP_F32 or GP_F64: the edges' type (numpy's bin type) */
    int64_t below, above;         /* non-NaN values below and above the binned range */
    char counts_dset[1040], edges_dset[1040]; /* written to --out ("" when not) */
    int nq;                       /* quantiles asked for (0: none) */
    double q[GP_MAX_QUANTILES], value[GP_MAX_QUANTILES];
    int q_select;                 /* 1: found by the radix select (--no-sort), 0: read from
                                     the sorted data */
    int64_t q_count;              /* the non-NaN values they are quantiles of */
    int distinct_done;            /* --distinct ran */
    int64_t distinct;             /* distinct non-NaN values */
} gp_result_dist;

typedef struct gp_result {
    gp_result_run run;
    gp_result_input in;           /* the file job's parts: in, stats, sort, xchg, scan, dist */
    gp_result_stats stats;
    gp_result_sort sort;
    gp_result_exchange xchg;
    gp_result_function fn;        /* the function job's */
    gp_result_scan scan;
    gp_result_dist dist;          /* the file job's distribution */
} gp_result;

#endif /* GP_RESULT_H */

/* job.h — the gpuprim_mpi job: the result record, the backend of each rank and the output
 * checks (setup.c), the file job as named phases and the function job (job.c; the phases'
 * names: phases.h), the report (report.c). */
#ifndef GP_JOB_H
#define GP_JOB_H

#include <mpi.h>
#include <stdint.h>

#include "binding.h"
#include "cli.h"
#include "gpuprim/exchange.h"
#include "gpuprim/kernels.h"
#include "phases.h"

/* The result record: everything the report and the JSON show (valid on rank 0 after a run),
 * in parts, one per concept; each part is filled by the phases of its concept (job.c and the
 * ph_*.c files) and shown by its own functions in report.c. A new primitive (a scan, a
 * distribution) adds a part of its own at the end of gp_result. */

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

/* Chooses the backend for this rank: --backend cpu → CPU; cuda → CUDA on device
 * local_rank % visible devices (gp_bind_choose, binding.h), or an error; auto → CUDA when a
 * device is visible, else the CPU with a one-line notice from rank 0. Ranks sharing a GPU
 * (counted by PCI bus id over the node) give one warning from rank 0. Collective (ranks
 * agree on the outcome). Returns 0 or GP_EXIT_DEVICE with msg set; fills *bind, *be and
 * *run (on rank 0 with run->bindings, every rank's binding). */
int gp_select_backend(MPI_Comm comm, const gp_options *o, const gp_backend **be,
                      gp_binding *bind, gp_result_run *run, char *msg, size_t msglen);

/* The output checks made before any work, so that a long run does not end in an error it
 * could have given at the start: --out is not the input file and can be written
 * (gp_h5_check_target: no existing file without --force, no directory, link, device or
 * FIFO, a writable folder); --json is neither the input nor the --out file and can be
 * written (gp_json_path_ok). Collective (rank 0 checks, the ranks agree). Returns 0,
 * GP_EXIT_USAGE or GP_EXIT_WRITE with msg set, the same on every rank. */
int gp_check_outputs(MPI_Comm comm, const gp_options *o, char *msg, size_t msglen);

/* The metadata margin of --out (gp_out_bytes_need): HDF5's own metadata (superblock, groups,
 * object headers: a few KiB for the three datasets at most) and the 64 KiB the writer
 * reserves beyond the file's laid-out size (io/h5_writer.c), rounded up. */
#define GP_OUT_META_MARGIN ((uint64_t)128 << 10)

/* The bytes --out takes for n elements: value_bytes per element for the values in their
 * stored type, 8 more with --argsort (int64), payload_bytes more with --payload (its stored
 * type; 0 without), plus GP_OUT_META_MARGIN. Saturates at UINT64_MAX. Pure. */
uint64_t gp_out_bytes_need(int64_t n, size_t value_bytes, int argsort, size_t payload_bytes);

/* Whether --out (the file out) fits: `need` bytes against the free space of the file system
 * of its folder (statvfs; the blocks available to this user, the reserve included for root),
 * where the temporary file is written before its rename. Not collective (rank 0 asks before
 * the data are read; the phase's agreement spreads the verdict). Returns 0, or GP_EXIT_WRITE
 * with "--out OUT needs N bytes (X GiB) and its file system has M bytes (Y GiB) free; nothing
 * was read or written" in msg. A folder whose file system cannot be asked passes: the
 * writer's own reservation (fallocate) still checks when it creates the file. */
int gp_check_out_space(const char *out, uint64_t need, char *msg, size_t msglen);

/* Runs the file job: the phases of job.c's table (open, plan, alloc, read, stats or runs,
 * integral, combine, scan, histogram, quantiles, sort or merge, exchange, verify, quantiles,
 * distinct, write; job.c's comment says what each does). Collective. Returns a GP_EXIT_*
 * code, the same on every rank, with msg set on failure.
 * The input is read and --out written with the driver o->io (h5io.h): on the CPU backend
 * straight into and out of the shard, on the CUDA backend through two reused pinned pieces,
 * each upload (download) overlapped with the next read (the previous write).
 * With --out the file is written but left under its temporary name
 * (gp_h5_writer_open with stage = 1): rank 0 then renames it with gp_h5_publish, once the other
 * outputs (the --json report) are complete, or removes it with gp_h5_discard.
 * --payload is opened right after the input and checked before any work (the same element
 * count; an output path apart from the data's and the argsort's: name_clash), exit
 * GP_EXIT_DATASET; gp_check_outputs cannot, as the data's path may need the input's search.
 *
 * Memory (docs/limits.md, "Device memory"): before allocating, every rank asks be->mem_info
 * for the free device memory and counts 1/res->run.mem_share of it, less a margin of 1/8 (at
 * most 512 MiB), as usable. A job that sorts needs the bytes of gp_job_mem_need (plan.h);
 * when that exceeds the usable memory on any rank, every rank sorts out of core, from host
 * memory (ooc.h; docs/limits.md, "A sort beyond device memory"), and only when a rank's host
 * memory is short too does every rank return
 * GP_EXIT_DEVICE with one line naming every tier's need and free memory, "FILE:DATASET:
 * sorting <n> elements on rank R needs X GiB of device memory, Y GiB free; out of core ..."
 * (before any buffer is allocated, so nothing is written). A job without a sort (--no-sort)
 * whose shard does not fit streams every shard through the device in chunks of the same
 * power-of-two element count on every rank (the largest that fits on the tightest rank, at
 * least 4096): read, upload, be->stats (+ trap_x with --x, + exact_sum with
 * --reproducible) per chunk, the chunk records combined in index order with
 * gp_stats_combine (pairwise, as a binary counter); rank 0 prints one notice line with the
 * chunk count and size (--verbose: every rank its own line). Counts, NaN count, min, max
 * and the --reproducible sums are the same as unchunked; float64 sums can differ in the
 * last bits (on the CPU backend sum and sum of squares are bitwise the same; the --x
 * integral groups its terms differently). */
int gp_run_file(MPI_Comm comm, const gp_options *o, const gp_backend *be, gp_result *res,
                char *msg, size_t msglen);

/* The exchange transport the file job asks gp_exchange_create for: --transport as given,
 * except that auto on a backend whose memory is host memory (the CPU backend) is mpi. There
 * the shared transport's window is tmpfs memory in 4 KiB pages (transparent huge pages are
 * off for shared memory on most systems), where the mpi transport's buffers are the
 * process's own memory in 2 MiB pages, which the local sort can borrow and the write reuse
 * (gp_job_lends_spare, ph_sort.c): on the 2-core test machine the 1 GiB job at 2 ranks took
 * 6.5-7.1 s with mpi, 8.9-9.2 s with shared (bench/RESULTS.md, 2026-12-02). On the CUDA
 * backend auto stays auto (shared on the node through CUDA IPC, mpi across nodes). The
 * out-of-core sort's host exchange is on the CPU backend, so mpi too: on the H200 host (2^32
 * float32, np 4) the window's merge in place took the exchange from 4.08 s to 1.96 s, but
 * touching its 32 GiB of 4 KiB tmpfs pages took 7.7 s and releasing them 4.2 s
 * (bench/RESULTS.md, h200-d1e89d1). Pure. */
gp_transport gp_job_transport(gp_transport_choice t, int host_memory);

/* Runs the function-mode trapezoid rule: n trapezoids over [a, b], the n+1 points split
 * over the ranks, combined in rank order. Collective. Returns a GP_EXIT_* code. */
int gp_run_function(MPI_Comm comm, const gp_options *o, const gp_backend *be, gp_result *res,
                    char *msg, size_t msglen);

/* Prints the summary and the phase table (rank 0). */
void gp_report_print(const gp_result *r, const gp_options *o);
/* Prints the rank / host / local rank / device / name / PCI bus id / CUDA_VISIBLE_DEVICES
 * table (collective; rank 0 prints). */
void gp_report_binding(MPI_Comm comm, const gp_binding *b);
/* Writes the JSON report for path (rank 0): version, ranks, backend, the options, the
 * binding of every rank (r->run.bindings), the results and the phase times, complete, under a
 * temporary name beside path (DIR/.gpuprim.PID.json.tmp), which it puts in tmp (tmplen
 * bytes); the caller renames tmp to path, or removes it. Returns 0, or -1 with errno and
 * tmp "" (no file left). */
int gp_report_json_stage(const gp_result *r, const gp_options *o, const char *path, char *tmp,
                         size_t tmplen);
/* 1 when the JSON report can be written to path (an existing writable file, or a new name
 * in a writable folder); else 0 with "PATH: cannot write the JSON report (reason)" in msg.
 * An existing file that holds something else than a JSON report (its first byte that is
 * not white space is not '{') is refused unless force. Creates nothing. Not collective. */
int gp_json_path_ok(const char *path, int force, char *msg, size_t msglen);

#endif /* GP_JOB_H */

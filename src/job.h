/* job.h — the gpuprim_mpi job: the backend of each rank and the output checks (setup.c), the
 * file job as named phases and the function job (job.c), the report (report.c). */
#ifndef GP_JOB_H
#define GP_JOB_H

#include <mpi.h>
#include <stdint.h>

#include "binding.h"
#include "cli.h"
#include "gpuprim/exchange.h"
#include "gpuprim/kernels.h"

/* Phases reported in the timing table (seconds; the report shows ms, max over ranks).
 * "alloc" is the one-time allocation of the job's buffers (device memory, and on the CUDA
 * backend the pinned host memory: the two pieces the file's data go through, the exchange's
 * staging buffers); "read" is the rest from the start: opening the input, finding the
 * dataset, planning the memory, and the reads (with the uploads overlapped). */
enum {
    GP_PH_ALLOC = 0,
    GP_PH_READ,
    GP_PH_UPLOAD,
    GP_PH_REDUCE,
    GP_PH_INTEGRATE,
    GP_PH_SORT,
    GP_PH_EXCHANGE,
    GP_PH_VERIFY,
    GP_PH_WRITE,
    GP_PH_TOTAL,
    GP_NPHASES
};
extern const char *const gp_phase_names[GP_NPHASES];

/* Everything the report and the JSON show (valid on rank 0 after a run). */
typedef struct gp_result {
    int ranks;
    const char *backend;          /* "cuda" or "cpu" */
    int gpus_visible;             /* on rank 0's node */
    int ranks_per_gpu_max;
    int mem_share;                /* ranks that share this rank's device memory (this rank
                                     included): the ranks of its GPU on the node, or for the
                                     CPU backend the ranks of the node; 0 counts as 1. Each
                                     counts 1/mem_share of the free memory (gp_run_file) */
    gp_binding *bindings;         /* every rank's binding, in rank order (rank 0; NULL
                                     elsewhere), for the JSON report */
    /* file mode */
    char file[1024], dataset[1024], type_desc[64];
    gp_dtype dtype;
    int64_t n;
    int ndims;                    /* the dataset's dimensions (read flattened, row-major) */
    int64_t dims[32];             /* their extents (the first ndims; GP_H5_MAXDIMS) */
    gp_stats stats;               /* global, of the input */
    double integral;              /* trapezoid rule of the samples */
    int integral_nonuniform;      /* 1 with --x */
    int reproducible;             /* sums from exact accumulation (--reproducible) */
    uint64_t sorted_hash_in;      /* multiset hash of the input keys the sort is checked with */
    int descending, stable;       /* sort order options */
    char argsort_dset[1040];      /* dataset written with --argsort ("" when none) */
    char payload_dset[1024];      /* dataset written with --payload ("" when none) */
    double dx;
    int sorted_done;              /* the sort ran */
    int sorted_ok;                /* verified: shards sorted, boundaries in order, multiset kept */
    int64_t sorted_descents;
    gp_stats sorted_stats;        /* global, of the sorted result */
    int exchange_stages;
    int64_t exchange_bytes;       /* moved between ranks (copied from a partner's memory into
                                     a rank's), summed over ranks */
    int64_t exchange_bytes_whole; /* what the whole-shard exchange would have sent, summed */
    /* per exchange step (max over ranks for times, sum over ranks for bytes, the OR of the
     * ranks' GP_TRANSPORT_SHARED / GP_TRANSPORT_MPI flags; 0: no rank had a partner) */
    double xstep_comm_ms[GP_XSTEPS_MAX];
    double xstep_merge_ms[GP_XSTEPS_MAX];
    int64_t xstep_bytes[GP_XSTEPS_MAX];
    int xstep_transport[GP_XSTEPS_MAX];
    const char *out;
    gp_io_mode io_read;           /* the driver the input was read with (resolved --io) */
    gp_io_mode io_write;          /* the one --out was written with (GP_IO_AUTO: none) */
    int64_t chunks;               /* the statistics pass went through the device in this many
                                     chunks per rank (0: each shard whole, the usual case) */
    int64_t chunk_elems;          /* elements per chunk (0 when not chunked) */
    /* function mode */
    int function_mode;
    gp_func func;
    double a, b, h, exact;
    int64_t ntrap;
    /* times, seconds, max over ranks */
    double t[GP_NPHASES];
} gp_result;

/* Chooses the backend for this rank: --backend cpu → CPU; cuda → CUDA on device
 * local_rank % visible devices (gp_bind_choose, binding.h), or an error; auto → CUDA when a
 * device is visible, else the CPU with a one-line notice from rank 0. Ranks sharing a GPU
 * (counted by PCI bus id over the node) give one warning from rank 0. Collective (ranks
 * agree on the outcome). Returns 0 or GP_EXIT_DEVICE with msg set; fills *bind and *be,
 * and on rank 0 res->bindings (every rank's binding). */
int gp_select_backend(MPI_Comm comm, const gp_options *o, const gp_backend **be,
                      gp_binding *bind, gp_result *res, char *msg, size_t msglen);

/* The output checks made before any work, so that a long run does not end in an error it
 * could have given at the start: --out is not the input file and can be written
 * (gp_h5_check_target: no existing file without --force, no directory, link, device or
 * FIFO, a writable folder); --json is neither the input nor the --out file and can be
 * written (gp_json_path_ok). Collective (rank 0 checks, the ranks agree). Returns 0,
 * GP_EXIT_USAGE or GP_EXIT_WRITE with msg set, the same on every rank. */
int gp_check_outputs(MPI_Comm comm, const gp_options *o, char *msg, size_t msglen);

/* Runs the file job: the phases open, plan, alloc, read, stats, integral, combine, sort,
 * exchange, verify and write (job.c lists them). Collective. Returns a GP_EXIT_* code, the same on every rank, with msg set on failure.
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
 * Memory (README "Limits"): before allocating, every rank asks be->mem_info for the free
 * device memory and counts 1/res->mem_share of it, less a margin of 1/8 (at most 512 MiB),
 * as usable. A job that sorts needs the bytes of gp_job_mem_need; when that exceeds the
 * usable memory on any rank, every rank returns GP_EXIT_DEVICE with "FILE:DATASET: sorting
 * <n> elements on rank R needs X GiB of device memory, Y GiB free (use more GPUs or nodes: ranks on one device share it)"
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

/* Bytes of backend memory the file job allocates at its peak on a rank that holds cnt
 * elements of sz bytes in m = ceil(N/P) slots, P ranks: the shard, and when sorting with
 * P > 1 also the receive buffer of the rank exchange (gp_exchange_create, exchange.h), m
 * slots of sz bytes each (+ 8 bytes of input position per slot and buffer when `pairs`:
 * --stable, --argsort or --payload): 2 such buffers for P > 1, 1 for P = 1; with `xdata`
 * (--x) cnt float64 coordinates more while the integral runs. No host buffer of the
 * shard's size counts: the file's data go through two small host pieces (the CUDA
 * backend), or straight to and from the backend's memory where it is host memory. Not
 * counted: the exchange's staging pieces (4 x 8 MiB of pinned memory where the mpi
 * transport stages), the job's two pieces (4 MiB each by default). Saturates at
 * UINT64_MAX. Not collective. */
uint64_t gp_job_mem_need(int64_t m, int64_t cnt, size_t sz, int P, int sorting, int pairs,
                         int xdata);

/* The exchange transport the file job asks gp_exchange_create for: --transport as given,
 * except that auto on a backend whose memory is host memory (the CPU backend) is mpi. There
 * the shared transport's window is tmpfs memory in 4 KiB pages (transparent huge pages are
 * off for shared memory on most systems), where the mpi transport's buffers are the
 * process's own memory in 2 MiB pages, which the local sort can borrow and the write reuse
 * (lends_spare in job.c): on the 2-core test machine the 1 GiB job at 2 ranks took 6.5-7.1 s
 * with mpi, 8.9-9.2 s with shared (bench/RESULTS.md, 2026-12-02). On the CUDA backend auto
 * stays auto (shared on the node through CUDA IPC, mpi across nodes). Pure. */
gp_transport gp_job_transport(gp_transport_choice t, int host_memory);

/* The test knob GPUPRIM_READ_PIECE_BYTES: its value (NULL when unset) as bytes when it is a
 * positive decimal integer (digits only), else 0 (unset, or ignored). Pure. */
int64_t gp_job_piece_knob(const char *value);

/* Bytes per piece of the file job's reads (each piece's upload overlapped with the next
 * read) and, through host pieces, of its writes (each piece's download overlapped with the
 * write of the one before); with io == GP_IO_MPIIO every piece is one collective call per
 * rank. knob (gp_job_piece_knob) when > 0; else 256 MiB for GP_IO_MPIIO, else 0 with
 * `unified` (the data straight into and out of the CPU backend's memory, a shard in one
 * call) and 4 MiB otherwise (two pinned pieces on the CUDA backend). Never more than
 * `most` (the bytes of the largest read), and at least 8 (a float64 coordinate); 0 stays
 * 0. The job goes through two host pieces on the CUDA backend, and on the CPU backend when
 * the knob is set (so that CI runs that path). Pure. */
int64_t gp_job_piece_bytes(int64_t knob, gp_io_mode io, int unified, int64_t most);

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
 * binding of every rank (r->bindings), the results and the phase times, complete, under a
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

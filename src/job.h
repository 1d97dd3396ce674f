/* job.h — the gpuprim_mpi job: the backend of each rank and the output checks (setup.c), the
 * file job as named phases and the function job (job.c; the phases' names: phases.h), the
 * report (report.c; the --json document: report_doc.c); the result record they fill and show
 * is result.h's. */
#ifndef GP_JOB_H
#define GP_JOB_H

#include <mpi.h>
#include <stdint.h>

#include "binding.h"
#include "cli.h"
#include "gpuprim/kernels.h"
#include "result.h"

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

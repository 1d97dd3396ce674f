/* tuning.h — the kernels' tuning and test knobs, read from the environment once per process
 * into one record (binding.h's pattern: the environment becomes plain values, then a pure,
 * unit-tested function decides). kernels/tuning.c is the one place in the library (io/,
 * ranks/, kernels/) that reads the environment.
 *
 *   GPUPRIM_SORT_SMEM=<bytes>        shared-memory budget of a sort tile (benchmarking)
 *   GPUPRIM_SORT_GRAPH=0             no CUDA-graph replay of repeated sorts (benchmarking)
 *   GPUPRIM_SORT_WIDE=<bits>         the widest global group of the sort plan (benchmarking)
 *   GPUPRIM_SORT_WIDE_FROM=<bits>    the narrowest group run wide (benchmarking)
 *   GPUPRIM_STATS_UNROLL=2|4|8       loads in flight per thread of the statistics
 *   GPUPRIM_SCAN_ALGO=lookback|rts   the CUDA scans' pass across blocks: single-pass decoupled
 *                                    look-back or reduce-then-scan (default; benchmarking)
 *   GPUPRIM_DEVICE_MEM_LIMIT=<bytes> both backends report at most this much free device
 *                                    memory (a test knob; a malformed value is an error)
 *   GPUPRIM_HOST_MEM_LIMIT=<bytes>   the host reports at most this much free memory to the
 *                                    out-of-core plan (gp_host_mem_info, host.h; a test knob;
 *                                    a malformed value is an error)
 *   GPUPRIM_HOST_THREADS=<n>         threads of this process's host-side loops (the
 *                                    out-of-core merge and staging, the CPU merge-split;
 *                                    host.h), 1 to 1024
 * the rank exchange's (ranks/transport_mpi.c; the node ranks: ranks/exchange.c):
 *   GPUPRIM_EXCHANGE_PIECE_BYTES=<bytes> the mpi transport's staging pieces (up to 1 GiB)
 *   GPUPRIM_EXCHANGE_STAGE=1         stage through host pieces also where MPI could take the
 *                                    memory itself (a test knob)
 *   GPUPRIM_EXCHANGE_NODE_RANKS=<k>  count a node's ranks as nodes of k ranks (a test knob)
 * the job's (src/pipeline.c; out of core src/ooc_plan.c, ph_ooc.c):
 *   GPUPRIM_READ_PIECE_BYTES=<bytes> bytes per piece of the file job's reads and writes
 *                                    through host memory (a test and tuning knob)
 * and the input's (io/h5_chunk_plan.c, h5_chunks.c; handed over by gp_h5_set_chunk_reads,
 * which src/pipeline.c's gp_set_chunk_reads calls):
 *   GPUPRIM_INFLATE_THREADS=<n>      threads that decode a rank's chunks (up to 1024; default:
 *                                    its share of the node's cores)
 *   GPUPRIM_DIRECT_CHUNKS=0          read chunked datasets with H5Dread, as before the direct
 *                                    chunk path (a test and comparison knob)
 *
 * Every integer knob is read by one rule, gp_knob_int's (below); GPUPRIM_SORT_GRAPH,
 * GPUPRIM_EXCHANGE_STAGE and GPUPRIM_DIRECT_CHUNKS are flags, which only the exact value shown
 * sets.
 *
 * Private to the library, the program and their tests and benchmarks (not installed). */
#ifndef GP_TUNING_H
#define GP_TUNING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The raw values (NULL: unset), as the environment gives them. */
typedef struct gp_tuning_env {
    const char *sort_smem, *sort_graph, *sort_wide, *sort_wide_from, *stats_unroll;
    const char *scan_algo;
    const char *mem_limit, *host_mem_limit, *host_threads;
    const char *xchg_piece, *xchg_stage, *xchg_stream, *xchg_node_ranks;
    const char *read_piece;
    const char *inflate_threads, *direct_chunks;
} gp_tuning_env;

/* The values of gp_tuning.scan_algo (0: the built-in default, reduce-then-scan). */
#define GP_SCAN_ALGO_LOOKBACK 1
#define GP_SCAN_ALGO_RTS 2

/* The decided knobs. 0 in a field means "the built-in default" unless it says otherwise. */
typedef struct gp_tuning {
    size_t sort_smem;          /* a positive byte count, or 0 */
    int sort_graph;            /* 1 (default) or 0 */
    int sort_wide;             /* bits as given, up to 64 (the sort clamps them further to its
                                  policy), or 0 */
    int sort_wide_from;        /* bits as given, up to 64 (clamped by the sort), or 0 */
    int stats_unroll;          /* 2, 4 or 8, or 0 */
    int scan_algo;             /* GP_SCAN_ALGO_LOOKBACK for "lookback", GP_SCAN_ALGO_RTS for
                                  "rts", else 0 */
    int mem_limit_set;         /* 1: mem_limit caps the free device memory */
    uint64_t mem_limit;        /* bytes */
    char mem_limit_error[128]; /* non-empty when GPUPRIM_DEVICE_MEM_LIMIT is malformed */
    int host_mem_limit_set;    /* 1: host_mem_limit caps the free host memory */
    uint64_t host_mem_limit;   /* bytes */
    char host_mem_limit_error[128]; /* non-empty when GPUPRIM_HOST_MEM_LIMIT is malformed */
    int host_threads;          /* 1 to 1024, or 0 (the program's share, host.h) */
    int64_t xchg_piece;        /* a positive byte count up to 2^30 (larger ones: 2^30), or 0 */
    int xchg_stage;            /* 1 for "1", else 0 */
    int xchg_stream;           /* 1 (default) or 0 for "0" */
    int xchg_node_ranks;       /* a positive count up to INT_MAX, or 0 */
    int64_t read_piece_bytes;  /* a positive byte count, or 0 */
    int inflate_threads;       /* a positive count up to 1024 (larger ones: 1024), or 0 */
    int direct_chunks;         /* 1 (default) or 0 for "0" */
} gp_tuning;

/* The one rule of every integer knob (this record's, GPUPRIM_FAULT's rank, SLURM_LOCALID):
 * the value is an optional '-' followed by one or more decimal digits and nothing else (no
 * blanks, no '+', no base prefix, no exponent or unit; leading zeros are fine), whose value
 * lies in [lo, hi] (decided without overflow, so that a number too large for 64 bits is
 * simply out of range). Returns 0 and sets *out, or -1 with *out unchanged (s NULL or
 * empty, anything else, or a value outside [lo, hi]). Pure. */
int gp_knob_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

/* Fills *e from the process's environment. */
void gp_tuning_env_from_process(gp_tuning_env *e);

/* Decides *t from *e. Pure. A value that gp_knob_int refuses (or, for GPUPRIM_STATS_UNROLL,
 * one other than 2, 4 and 8) leaves that knob's default, except GPUPRIM_DEVICE_MEM_LIMIT and
 * GPUPRIM_HOST_MEM_LIMIT, which must be decimal byte counts (gp_knob_int's digits without
 * the '-', up to 2^64 - 1) when set and not empty: otherwise mem_limit_error /
 * host_mem_limit_error says why. */
void gp_tuning_parse(const gp_tuning_env *e, gp_tuning *t);

/* The process's record: parsed from the environment at the first call, then the same. */
const gp_tuning *gp_tuning_get(void);

/* The CUDA scans' pass across blocks (GP_SCAN_ALGO_LOOKBACK or GP_SCAN_ALGO_RTS): the one
 * gp_scan_algo_set chose, else GPUPRIM_SCAN_ALGO's, else reduce-then-scan (on the H200 at 2^30
 * float32 -> float64: 6.2 ms against the look-back's 10.3; bench/RESULTS.md, h200-ec40d4b). */
int gp_scan_algo(void);
/* For the benchmark, which times both in one process: the algorithm of the scans that follow
 * (0: GPUPRIM_SCAN_ALGO's again). One calling thread, as the backends assume. */
void gp_scan_algo_set(int algo);

/* The test knob behind gp_backend.mem_info (both backends: kernels/cpu_mem.c,
 * kernels/cuda_backend.cu). When GPUPRIM_DEVICE_MEM_LIMIT (read once per process with the
 * other knobs) is set and not empty it must be a decimal byte count (digits only,
 * < 2^64); *free_bytes becomes min(*free_bytes, that count). Unset or empty: *free_bytes
 * unchanged. Returns 0, or -1 for a malformed value (*free_bytes unchanged) with a one-line
 * reason in why[0, whylen) (why may be NULL). */
int gp_mem_limit_env(size_t *free_bytes, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif
#endif /* GP_TUNING_H */

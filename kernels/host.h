/* host.h — the host's resources that the out-of-core sort plans with and runs on: its free
 * memory (gp_host_mem_info, kernels/cpu_mem.c) and its threads (gp_host_threads,
 * gp_host_parallel and the parallel copy, kernels/cpu_threads.c). Private to the library,
 * the program and their tests (not installed).
 *
 * Threads: one process-wide pool of gp_host_threads() - 1 workers, started on first use,
 * shared by every caller. A call of gp_host_parallel while another thread's call runs does
 * its parts itself, one after the other (so two threads never wait on each other's work,
 * and the result never depends on which ran them). */
#ifndef GP_HOST_H
#define GP_HOST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Host memory: *avail = what this process can still allocate (MemAvailable of
 * /proc/meminfo, lowered to the room left under a cgroup memory limit: v2 memory.max -
 * memory.current, v1 limit_in_bytes - usage_in_bytes), capped by the test knob
 * GPUPRIM_HOST_MEM_LIMIT (tuning.h); *total = physical memory or the cgroup limit when
 * smaller; SIZE_MAX for both where none of these can be read. The node's ranks share it:
 * dividing it is the caller's business. Returns 0, or -1 for a malformed
 * GPUPRIM_HOST_MEM_LIMIT with a one-line reason in why[0, whylen) (outputs unchanged). */
int gp_host_mem_info(size_t *avail, size_t *total, char *why, size_t whylen);

/* The threads of this process's host-side loops: GPUPRIM_HOST_THREADS when set (1..1024),
 * else the share the program gave (gp_host_threads_share), else 1. At least 1. */
int gp_host_threads(void);

/* The program's share of the node's cores for this process (gpuprim_mpi: the cores this
 * process may run on, divided by the ranks of its node); values < 1 count as 1. The pool
 * grows to the new count at the next gp_host_parallel. Call it from one thread, when no
 * gp_host_parallel runs. */
void gp_host_threads_share(int n);

/* The cores this process may run on (sched_getaffinity; the online cores where that
 * fails), at least 1. */
int gp_host_cores(void);

/* One part of a parallel loop: part `part` of `nparts`, with the caller's ctx. */
typedef void (*gp_host_part_fn)(void *ctx, int part, int nparts);

/* Runs fn(ctx, p, nparts) for p = 0 .. nparts-1 on up to nparts threads (the caller's and
 * the pool's workers: gp_host_threads() - 1 of them, or more where an earlier call asked for
 * more) and returns when all are done. nparts <= 1,
 * one thread, or the pool busy with another thread's call: the calling thread runs every
 * part itself, in order. The parts must not depend on each other. Thread-safe. */
void gp_host_parallel(int nparts, gp_host_part_fn fn, void *ctx);

/* memcpy of `bytes` bytes (ranges that do not overlap), cut into gp_host_threads() parts
 * of at least 4 MiB each (smaller copies: one memcpy). Thread-safe. */
void gp_host_memcpy(void *dst, const void *src, size_t bytes);

/* The first touch of fresh memory whose contents do not matter yet: a zero byte written in
 * each 4 KiB page of buf[0, bytes), cut as gp_host_memcpy cuts, so that the kernel's page
 * faults (and its zeroing of the pages) run on the threads instead of later, on one thread,
 * inside a read. Overwrites data. Thread-safe. */
void gp_host_touch(void *buf, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* GP_HOST_H */

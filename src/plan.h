/* plan.h — the file job's memory figures (plan.c): what a rank's shard needs of the device
 * memory, the share a rank may use, and the GiB of the plan's lines. The plan phase that
 * plans a sort (in device memory or out of core, ooc_plan.c) or cuts a statistics-only job
 * into chunks that fit, gp_ph_plan (ph_plan.c), is declared with the other phases (ph.h). */
#ifndef GP_PLAN_H
#define GP_PLAN_H

#include <stddef.h>
#include <stdint.h>

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

/* The bytes a rank may use of `free_bytes` reported free on a device (or a host) shared by
 * `share` ranks: its share, less a margin of 1/8 of it (at most 512 MiB) for the kernels'
 * scratch, the runtime and fragmentation. Pure. */
uint64_t gp_mem_usable(size_t free_bytes, int share);

/* `bytes` in GiB as text into buf: one decimal from 10 GiB, else three significant digits.
 * Returns buf. */
const char *gp_gib_text(char *buf, size_t len, uint64_t bytes);

#endif /* GP_PLAN_H */

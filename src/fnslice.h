/* fnslice.h — the function job's trapezoid rule in slices (fnslice.c): slices a progress
 * line can count, whose total is the same bits as one call on the CPU backend, and the
 * warning of a run that would take more than an hour, estimated from the run itself. */
#ifndef GP_FNSLICE_H
#define GP_FNSLICE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpuprim/kernels.h"

/* Points per slice: on the CPU backend 2^26 (about 1 s of sin on one core), on a GPU 2^32
 * (a few ms on an H200, where a launch costs about 10 us). A range no longer than one
 * slice is one call, as before slices existed. */
#define GP_FN_SLICE_CPU ((int64_t)1 << 26)
#define GP_FN_SLICE_GPU ((int64_t)1 << 32)

/* The run's estimate: after `sample_s` seconds (at the end of the slice that reaches them),
 * when the whole rule is estimated to take more than `limit_s`, rank 0 writes one warning
 * line (gp_fn_long_warning) to `out`. */
typedef struct gp_fn_warn {
    FILE *out;         /* NULL: no estimate (the other ranks) */
    const char *func;  /* --function's name */
    int64_t n;         /* --n */
    double sample_s;   /* 1.0 in gpuprim_mpi */
    double limit_s;    /* 3600.0 in gpuprim_mpi */
} gp_fn_warn;

/* slice rounded down to GP_CPU_CHUNK * 2^k (k >= 1) points: the sizes whose slice sums add
 * up to one call's bits on the CPU backend. Pure. */
int64_t gp_fn_slice(int64_t slice);

/* be->trap_fn(f, a, h, n, i0, i1, wsum) computed in slices of gp_fn_slice(slice) points
 * (one call when [i0, i1) is no longer): the slice sums are added as the CPU backend adds
 * its chunks (psum.h: full slices as pieces of 2^k chunks, the last partial one as the
 * end), so on the CPU backend *wsum has the bits of one call over [i0, i1); on a GPU it
 * is as accurate, in other bits than one call when there is more than one slice. The
 * points are the current phase's work (gp_progress_work, gp_progress_add per slice).
 * warn: the estimate (NULL: none). Returns GP_OK or be->trap_fn's error code (stopping at
 * the failing slice). */
int gp_trap_fn_sliced(const gp_backend *be, gp_func f, double a, double h, int64_t n,
                      int64_t i0, int64_t i1, int64_t slice, const gp_fn_warn *warn,
                      double *wsum);

/* The estimate of the whole rule from a sample: `done` of `total` points in `elapsed` s
 * give total * elapsed / done seconds; -1 while done <= 0 or elapsed <= 0. Pure. */
double gp_fn_estimate(double elapsed, int64_t done, int64_t total);

/* The warning's text into buf: "--function sin --n 9007199254740992 would take about 2.3
 * years (estimated from its first 1.0 s: 48.1 million points/s on this rank); stop it
 * (Ctrl-C) and lower --n, or use more ranks". Returns buf. Pure. */
const char *gp_fn_long_warning(char *buf, size_t len, const char *func, int64_t n,
                               double estimate_s, double elapsed, double rate);

#endif /* GP_FNSLICE_H */

/* report.c — the summary table and the binding table (stdout, rank 0), and the text of the
 * results that the --json document (report_doc.c) writes too (report_text.h). */
#define _POSIX_C_SOURCE 200809L /* gp_path.h */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "gp_path.h"
#include "job.h"
#include "report_dist.h"
#include "report_text.h"

/* Writes the element with key `key` as text: exact integers, %.17g floats. */
static void fmt_key(char *buf, size_t len, gp_dtype t, uint64_t key)
{
    union { float f; double d; int32_t i32; int64_t i64; uint32_t u32; uint64_t u64; } v;
    gp_key_to_elem(t, key, &v);
    switch (t) {
    case GP_F32: snprintf(buf, len, "%.9g", (double)v.f); break;
    case GP_F64: snprintf(buf, len, "%.17g", v.d); break;
    case GP_I32: snprintf(buf, len, "%d", (int)v.i32); break;
    case GP_I64: snprintf(buf, len, "%lld", (long long)v.i64); break;
    case GP_U32: snprintf(buf, len, "%u", (unsigned)v.u32); break;
    case GP_U64: snprintf(buf, len, "%llu", (unsigned long long)v.u64); break;
    default: snprintf(buf, len, "?");
    }
}

/* %.17g of x, but NaN always as "nan" (printf may write "-nan"). */
static const char *num(char *buf, size_t len, double x)
{
    if (isnan(x)) snprintf(buf, len, "nan");
    else snprintf(buf, len, "%.17g", x);
    return buf;
}

/* src with every control byte (a newline in a file or dataset name) shown as '?': the
 * summary's header stays one line. */
static const char *one_line(char *buf, size_t len, const char *src)
{
    snprintf(buf, len, "%s", src);
    gp_one_line(buf);
    return buf;
}

/* The transports of an exchange step or of all steps (an OR of GP_TRANSPORT_SHARED and
 * GP_TRANSPORT_MPI): "shared", "mpi", "shared+mpi", or "none" (no rank had a partner). */
const char *gp_rep_transports_text(int flags)
{
    const int sh = (flags & GP_TRANSPORT_SHARED) != 0, mp = (flags & GP_TRANSPORT_MPI) != 0;
    return sh && mp ? "shared+mpi" : sh ? "shared" : mp ? "mpi" : "none";
}

/* Derived statistics of a record (NaN where undefined). */
void gp_rep_derived(const gp_stats *s, double *mean, double *l2)
{
    *mean = gp_stats_mean(s); /* integer data: the exact sum / count, rounded once */
    *l2 = sqrt(s->sumsq);
}

/* The exact integer sum in full decimal when the data are integers (isum), else NULL. */
const char *gp_rep_int_sum_text(const gp_result *r, char *buf, size_t len)
{
    if (gp_dtype_is_float(r->in.dtype) || !r->stats.global.has_isum) return NULL;
    gp_i128_to_dec(r->stats.global.isum, buf, len);
    return buf;
}

/* The min and the max as text (fmt_key's), "nan" for both when every element is NaN or
 * there is none. */
void gp_rep_minmax_text(const gp_result *r, char *mn, char *mx, size_t len)
{
    const gp_stats *s = &r->stats.global;
    if (s->count - s->nan_count > 0) {
        fmt_key(mn, len, r->in.dtype, s->min_key);
        fmt_key(mx, len, r->in.dtype, s->max_key);
    } else {
        snprintf(mn, len, "nan");
        snprintf(mx, len, "nan");
    }
}

/* The summary of the function job. */
static void print_function(const gp_result *r)
{
    const gp_result_function *fn = &r->fn;
    printf("gpuprim_mpi: trapezoid rule of %s over [%.17g, %.17g], n = %lld trapezoids, %d rank%s, backend %s\n",
           gp_func_name(fn->func), fn->a, fn->b, (long long)fn->ntrap, r->run.ranks,
           r->run.ranks == 1 ? "" : "s", r->run.backend);
    printf("  %-14s %.17g\n", "integral", fn->integral);
    printf("  %-14s %.17g\n", "exact", fn->exact);
    printf("  %-14s %.3e\n", "abs error", fabs(fn->integral - fn->exact));
    printf("  %-14s %.9g\n", "h", fn->h);
    printf("  %-14s %.3f ms (max over ranks)\n", "time", r->run.t[GP_PH_TOTAL] * 1e3);
    printf("  %-14s %.3f ms (main to the integral, max over ranks)\n", "startup",
           r->run.t[GP_PH_STARTUP] * 1e3);
    printf("  %-14s %.3f ms (the integral to this report)\n", "teardown",
           r->run.t[GP_PH_TEARDOWN] * 1e3);
}

/* The file job's header line: the input, its type, count and shape, the ranks, the backend. */
static void print_input(const gp_result *r)
{
    const gp_result_input *in = &r->in;
    char shape[160] = "";
    if (in->ndims > 1) { /* e.g. " (shape 1000 x 3, read flattened, row-major)" */
        size_t k = (size_t)snprintf(shape, sizeof shape, " (shape ");
        for (int d = 0; d < in->ndims && k < sizeof shape; d++)
            k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%lld", d ? " x " : "",
                                  (long long)in->dims[d]);
        if (k < sizeof shape) snprintf(shape + k, sizeof shape - k, ", read flattened, row-major)");
    }
    char fname[sizeof in->file], dname[sizeof in->dataset];
    printf("gpuprim_mpi: %s:%s (%s, read as %s), %lld element%s%s, %d rank%s, backend %s\n",
           one_line(fname, sizeof fname, in->file), one_line(dname, sizeof dname, in->dataset),
           in->type_desc, gp_dtype_name(in->dtype), (long long)in->n, in->n == 1 ? "" : "s",
           shape, r->run.ranks, r->run.ranks == 1 ? "" : "s", r->run.backend);
}

/* The statistics rows and the integral. */
static void print_stats(const gp_result *r)
{
    const gp_result_stats *st = &r->stats;
    double mean, l2;
    char mn[64], mx[64], nb[64], ib[GP_I128_DEC_LEN];
    gp_rep_derived(&st->global, &mean, &l2);
    gp_rep_minmax_text(r, mn, mx, sizeof mn);
    printf("  %-14s %lld (NaNs included)\n", "count", (long long)st->global.count);
    printf("  %-14s %lld\n", "nan count", (long long)st->global.nan_count);
    printf("  %-14s %lld (not NaN: the sum, min, max, mean and L2 norm are over these)\n",
           "values", (long long)(st->global.count - st->global.nan_count));
    const char *isum = gp_rep_int_sum_text(r, ib, sizeof ib);
    printf("  %-14s %s%s\n", "sum", isum ? isum : num(nb, sizeof nb, st->global.sum),
           st->reproducible ? " (exact, reproducible)" : "");
    printf("  %-14s %s\n", "min", mn);
    printf("  %-14s %s\n", "max", mx);
    printf("  %-14s %s\n", "mean", num(nb, sizeof nb, mean));
    printf("  %-14s %s\n", "L2 norm", num(nb, sizeof nb, l2));
    if (st->nonuniform)
        printf("  %-14s %s (trapezoid rule, coordinates from --x)\n", "integral",
               num(nb, sizeof nb, st->integral));
    else
        printf("  %-14s %s (trapezoid rule, dx = %g)\n", "integral",
               num(nb, sizeof nb, st->integral), st->dx);
}

/* The sort's rows: the verdict, the order, the output's datasets. */
static void print_sort(const gp_result *r)
{
    const gp_result_sort *so = &r->sort;
    if (!so->done) {
        printf("  %-14s skipped (--no-sort)\n", "sorted");
        return;
    }
    printf("  %-14s %s, %s%s (%lld descents; count %s; multiset hash %s%s%s)\n", "sorted",
           so->ok ? "yes, verified" : "NO", so->descending ? "descending" : "ascending",
           so->stable ? ", stable" : "", (long long)so->descents,
           so->stats.count == r->stats.global.count ? "kept" : "CHANGED",
           so->stats.hash == so->hash_in ? "kept" : "CHANGED",
           so->out ? "; written to " : "", so->out ? so->out : "");
    if (so->argsort_dset[0]) printf("  %-14s %s:%s\n", "argsort", so->out, so->argsort_dset);
    if (so->payload_dset[0])
        printf("  %-14s %s:%s (sorted with the data)\n", "payload", so->out, so->payload_dset);
}

/* The last value of --cumsum as text: an integer cumsum exactly, a float one %.17g. */
const char *gp_rep_scan_total_text(const gp_result_scan *sc, char *buf, size_t len)
{
    if (sc->cumsum_type == GP_F64) return num(buf, len, sc->total);
    gp_i128_to_dec(sc->itotal, buf, len);
    return buf;
}

/* The scans' rows: each dataset written (its type as the header names types), with the
 * last cumulative sum and the last cumulative integral. */
static void print_scan(const gp_result *r)
{
    const gp_result_scan *sc = &r->scan;
    char nb[64], dx[40] = "coordinates from --x";
    if (sc->cumsum_dset[0])
        printf("  %-14s %s:%s (%s), total %s\n", "cumsum", r->sort.out, sc->cumsum_dset,
               gp_dtype_name(sc->cumsum_type), gp_rep_scan_total_text(sc, nb, sizeof nb));
    if (!r->stats.nonuniform) snprintf(dx, sizeof dx, "dx = %g", r->stats.dx);
    if (sc->cumint_dset[0])
        printf("  %-14s %s:%s (f64, trapezoid rule, %s), last %s\n", "cumint", r->sort.out,
               sc->cumint_dset, dx, num(nb, sizeof nb, sc->last_integral));
}

/* The steps of the exchange that ran (at most GP_XSTEPS_MAX). */
int gp_rep_exchange_steps(const gp_result_exchange *x)
{
    return x->stages < GP_XSTEPS_MAX ? x->stages : GP_XSTEPS_MAX;
}

/* The rank exchange's row: steps, transports, bytes moved (a sort on P > 1 ranks). */
static void print_exchange(const gp_result *r)
{
    const gp_result_exchange *x = &r->xchg;
    if (r->run.ranks <= 1 || !r->sort.done) return;
    int used = 0;
    for (int s = 0; s < gp_rep_exchange_steps(x); s++) used |= x->step_transport[s];
    const double whole = (double)x->bytes_whole;
    printf("  %-14s %d step%s, %s, %.1f MiB moved between ranks (%.1f %% of the %.1f MiB "
           "the whole shards make)\n", "rank exchange", x->stages, x->stages == 1 ? "" : "s",
           gp_rep_transports_text(used), (double)x->bytes / 1048576.0,
           whole > 0 ? 100.0 * (double)x->bytes / whole : 0.0, whole / 1048576.0);
}

/* The phase table (its rows: phases.h), and with --verbose the exchange's steps. */
static void print_times(const gp_result *r, int verbose)
{
    const gp_result_exchange *x = &r->xchg;
    printf("phase            time (ms, max over ranks)\n");
    for (int i = 0; i < GP_NPHASES; i++)
        printf("  %-14s %10.3f\n", gp_phase_label(i), r->run.t[i] * 1e3);
    if (!verbose || !r->sort.done || x->stages <= 0) return;
    printf("exchange step  transport   transfer ms  merge ms  MiB moved (all ranks)  GB/s (moved / step time)\n");
    for (int s = 0; s < gp_rep_exchange_steps(x); s++) {
        const double ms = x->step_comm_ms[s] + x->step_merge_ms[s];
        printf("  %11d  %-10s  %11.3f  %8.3f  %21.1f  %8.2f\n", s + 1,
               gp_rep_transports_text(x->step_transport[s]), x->step_comm_ms[s],
               x->step_merge_ms[s],
               (double)x->step_bytes[s] / 1048576.0,
               ms > 0 ? (double)x->step_bytes[s] / (ms * 1e6) : 0.0);
    }
}

void gp_report_print(const gp_result *r, const gp_options *o)
{
    if (o->quiet) return;
    if (r->run.function_mode) {
        print_function(r);
    } else {
        print_input(r);
        print_stats(r);
        print_sort(r);
        print_scan(r);
        print_exchange(r);
        gp_report_dist_print(r);
        print_times(r, o->verbose);
    }
    fflush(stdout);
}

/* CUDA_VISIBLE_DEVICES as the table shows it: "(unset)", "(empty)" or the value. */
static const char *cvd_text(const gp_binding *b)
{
    if (!b->cuda_visible_set) return "(unset)";
    return b->cuda_visible[0] ? b->cuda_visible : "(empty)";
}

void gp_report_binding(MPI_Comm comm, const gp_binding *b)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    gp_binding *all = NULL;
    if (rank == 0) all = (gp_binding *)calloc((size_t)size, sizeof *all);
    MPI_Gather(b, (int)sizeof *b, MPI_BYTE, all, (int)sizeof *b, MPI_BYTE, 0, comm);
    if (rank == 0 && all) {
        printf("rank  host                 local  device  name                            pci bus id    CUDA_VISIBLE_DEVICES\n");
        for (int i = 0; i < size; i++)
            printf("%4d  %-20s %5d  %6d  %-30s  %-12s  %s\n", all[i].rank, all[i].host,
                   all[i].local_rank, all[i].device, all[i].device_name,
                   all[i].busid[0] ? all[i].busid : "-", cvd_text(&all[i]));
        fflush(stdout);
    }
    free(all);
}

/* report.c — the summary table, the binding table and the JSON report (its members written
 * with report_jwrite.c's writers). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp_path.h"
#include "job.h"
#include "report_dist.h"
#include "report_json.h"
#include "report_jwrite.h"

/* Room for every non-finite number of one report: the results' (fewer than 16) and each
 * quantile's value. */
_Static_assert(GP_JSON_NONFINITE_MAX >= 16 + GP_MAX_QUANTILES, "non_finite's room");

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
static const char *transports_text(int flags)
{
    const int sh = (flags & GP_TRANSPORT_SHARED) != 0, mp = (flags & GP_TRANSPORT_MPI) != 0;
    return sh && mp ? "shared+mpi" : sh ? "shared" : mp ? "mpi" : "none";
}

/* Derived statistics of a record (NaN where undefined). */
static void derived(const gp_stats *s, double *mean, double *l2)
{
    *mean = gp_stats_mean(s); /* integer data: the exact sum / count, rounded once */
    *l2 = sqrt(s->sumsq);
}

/* The exact integer sum in full decimal when the data are integers (isum), else NULL. */
static const char *int_sum_text(const gp_result *r, char *buf, size_t len)
{
    if (gp_dtype_is_float(r->in.dtype) || !r->stats.global.has_isum) return NULL;
    gp_i128_to_dec(r->stats.global.isum, buf, len);
    return buf;
}

static void minmax_text(const gp_result *r, char *mn, char *mx, size_t len)
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
    derived(&st->global, &mean, &l2);
    minmax_text(r, mn, mx, sizeof mn);
    printf("  %-14s %lld (NaNs included)\n", "count", (long long)st->global.count);
    printf("  %-14s %lld\n", "nan count", (long long)st->global.nan_count);
    printf("  %-14s %lld (not NaN: the sum, min, max, mean and L2 norm are over these)\n",
           "values", (long long)(st->global.count - st->global.nan_count));
    const char *isum = int_sum_text(r, ib, sizeof ib);
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
static const char *scan_total_text(const gp_result_scan *sc, char *buf, size_t len)
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
               gp_dtype_name(sc->cumsum_type), scan_total_text(sc, nb, sizeof nb));
    if (!r->stats.nonuniform) snprintf(dx, sizeof dx, "dx = %g", r->stats.dx);
    if (sc->cumint_dset[0])
        printf("  %-14s %s:%s (f64, trapezoid rule, %s), last %s\n", "cumint", r->sort.out,
               sc->cumint_dset, dx, num(nb, sizeof nb, sc->last_integral));
}

/* The steps of the exchange that ran (at most GP_XSTEPS_MAX). */
static int exchange_steps(const gp_result_exchange *x)
{
    return x->stages < GP_XSTEPS_MAX ? x->stages : GP_XSTEPS_MAX;
}

/* The rank exchange's row: steps, transports, bytes moved (a sort on P > 1 ranks). */
static void print_exchange(const gp_result *r)
{
    const gp_result_exchange *x = &r->xchg;
    if (r->run.ranks <= 1 || !r->sort.done) return;
    int used = 0;
    for (int s = 0; s < exchange_steps(x); s++) used |= x->step_transport[s];
    const double whole = (double)x->bytes_whole;
    printf("  %-14s %d step%s, %s, %.1f MiB moved between ranks (%.1f %% of the %.1f MiB "
           "the whole shards make)\n", "rank exchange", x->stages, x->stages == 1 ? "" : "s",
           transports_text(used), (double)x->bytes / 1048576.0,
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
    for (int s = 0; s < exchange_steps(x); s++) {
        const double ms = x->step_comm_ms[s] + x->step_merge_ms[s];
        printf("  %11d  %-10s  %11.3f  %8.3f  %21.1f  %8.2f\n", s + 1,
               transports_text(x->step_transport[s]), x->step_comm_ms[s], x->step_merge_ms[s],
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

/* The distribution's options: "histogram" (bins or null), "range" ([A, B] or null),
 * "quantiles" (the list, --median's 0.5 in it), "median", "distinct". */
static void json_dist_options(FILE *f, const gp_options *o)
{
    gp_report_jkey(f, 2, "histogram");
    if (o->hist_bins) fprintf(f, "%lld", (long long)o->hist_bins);
    else fputs("null", f);
    gp_report_jkey(f, 2, "range");
    if (o->have_range) {
        fputc('[', f);
        gp_report_jnum(f, "range[0]", o->range_a);
        fputs(", ", f);
        gp_report_jnum(f, "range[1]", o->range_b);
        fputc(']', f);
    } else {
        fputs("null", f);
    }
    gp_report_jkey(f, 2, "quantiles");
    fputc('[', f);
    for (int k = 0; k < o->nq; k++) {
        if (k) fputs(", ", f);
        gp_report_jnum(f, "quantiles", o->q[k]);
    }
    fputc(']', f);
    gp_report_jkey_bool(f, 2, "median", o->median);
    gp_report_jkey_bool(f, 2, "distinct", o->distinct);
}

/* A member of "options": its key, its kind (the writer: jkey_str, jkey_num, jkey_bool or
 * jkey_int) and its field of gp_options, or, kind JO_TEXT, the index of its text computed
 * from the options. JO takes the kind from the field's type (an int field is a flag), so
 * that no row reads a field as another type. */
typedef enum { JO_STR, JO_NUM, JO_BOOL, JO_I64, JO_TEXT } jopt_kind;
typedef struct jopt {
    const char *key;
    jopt_kind kind;
    size_t at; /* offsetof the field, or the text's index */
} jopt;
#define JO(key, field)                                                                      \
    {key,                                                                                   \
     _Generic(((const gp_options *)0)->field, const char *: JO_STR, double: JO_NUM,         \
              int: JO_BOOL, int64_t: JO_I64),                                               \
     offsetof(gp_options, field)}

/* "options": the command line as the run understood it, defaults filled in: "file", the
 * table's members in its order, the distribution's. */
static void json_options(FILE *f, const gp_options *o)
{
    static const char *const backends[] = {"auto", "cuda", "cpu"};
    static const char *const transports[] = {"auto", "shared", "mpi"};
    static const jopt members[] = {
        JO("dataset", dataset),
        JO("x", xdataset),
        JO("dx", dx),
        JO("out", out),
        JO("force", force),
        JO("no_sort", no_sort),
        JO("json", json),
        JO("quiet", quiet),
        JO("verbose", verbose),
        {"progress", JO_TEXT, 0},
        {"backend", JO_TEXT, 1},
        {"transport", JO_TEXT, 2},
        {"io", JO_TEXT, 3},
        {"function", JO_TEXT, 4},
        JO("a", a),
        JO("b", b),
        JO("n", n),
        JO("descending", descending),
        JO("stable", stable),
        JO("argsort", argsort),
        JO("payload", payload),
        JO("reproducible", reproducible),
        JO("cumsum", cumsum),
        JO("cumulative_integral", cumint),
    };
    const char *const text[] = {
        o->progress > 0 ? "on" : o->progress < 0 ? "off" : "auto",
        (unsigned)o->backend < 3 ? backends[o->backend] : "?",
        (unsigned)o->transport < 3 ? transports[o->transport] : "?",
        gp_io_mode_name(o->io),
        o->function_mode ? gp_func_name(o->func) : NULL,
    };
    fprintf(f, ",\n  \"options\": {\n    \"file\": ");
    gp_report_jstr_or_null(f, o->file);
    for (size_t i = 0; i < sizeof members / sizeof *members; i++) {
        const jopt *m = &members[i];
        const char *p = (const char *)o + m->at;
        switch (m->kind) {
        case JO_STR: gp_report_jkey_str(f, 2, m->key, *(const char *const *)p); break;
        case JO_NUM: gp_report_jkey_num(f, 2, m->key, *(const double *)p); break;
        case JO_BOOL: gp_report_jkey_bool(f, 2, m->key, *(const int *)p); break;
        case JO_I64: gp_report_jkey_int(f, 2, m->key, (long long)*(const int64_t *)p); break;
        case JO_TEXT: gp_report_jkey_str(f, 2, m->key, text[m->at]); break;
        }
    }
    json_dist_options(f, o);
    if (gp_report_jversion() >= 2) gp_report_jkey_int(f, 2, "json_version", gp_report_jversion());
    fprintf(f, "\n  }");
}
#undef JO

/* "binding": one object per rank, in rank order. */
static void json_binding(FILE *f, const gp_result_run *r)
{
    fprintf(f, ",\n  \"binding\": [");
    for (int i = 0; r->bindings && i < r->ranks; i++) {
        const gp_binding *b = &r->bindings[i];
        fprintf(f, "%s\n    {\"rank\": %d, \"host\": ", i ? "," : "", b->rank);
        gp_report_jstr(f, b->host);
        fprintf(f, ", \"local_rank\": %d, \"local_size\": %d, \"device\": %d, \"name\": ",
                b->local_rank, b->local_size, b->device);
        gp_report_jstr(f, b->device_name);
        fprintf(f, ", \"pci_bus_id\": ");
        gp_report_jstr_or_null(f, b->busid[0] ? b->busid : NULL);
        fprintf(f, ", \"cuda_visible_devices\": ");
        gp_report_jstr_or_null(f, b->cuda_visible_set ? b->cuda_visible : NULL);
        fprintf(f, "}");
    }
    fprintf(f, "%s]", r->bindings && r->ranks > 0 ? "\n  " : "");
}

/* 1 when the regular file at path holds something other than a JSON report: it does not
 * begin, after white space, as every report does, with '{' and the key "version" (an empty
 * file counts as a report; a user's own JSON object does not). */
static int holds_other_data(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char head[96];
    const size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    const char *p = head + strspn(head, " \t\r\n");
    if (*p == '\0' && n < sizeof head - 1) return 0; /* empty, or white space only */
    if (*p++ != '{') return 1;
    p += strspn(p, " \t\r\n");
    return strncmp(p, "\"version\"", 9) != 0;
}

int gp_json_path_ok(const char *path, int force, char *msg, size_t msglen)
{
    struct stat st;
    char dir[1024];
    if (stat(path, &st) == 0) {
        if (!force && S_ISREG(st.st_mode) && holds_other_data(path)) {
            snprintf(msg, msglen, "%s exists and is not a JSON report: not replaced (remove it "
                     "or name another file; in file mode, --force with --out replaces it)", path);
            return 0;
        }
        if (S_ISDIR(st.st_mode)) errno = EISDIR;
        else if (access(path, W_OK) == 0) return 1;
    } else {
        if (gp_path_folder(path, dir, sizeof dir, NULL) != 0) errno = ENAMETOOLONG;
        else if (access(dir, W_OK | X_OK) == 0) return 1;
    }
    snprintf(msg, msglen, "%s: cannot write the JSON report (%s)", path, strerror(errno));
    return 0;
}

static int report_json_to(FILE *f, const gp_result *r, const gp_options *o);

/* Written under a temporary name beside the target, which the caller renames when every
 * output is complete, so that a failed write (a full disk) leaves no partial report; errno
 * is kept for the caller. */
int gp_report_json_stage(const gp_result *r, const gp_options *o, const char *path, char *tmp,
                         size_t tmplen)
{
    char dir[1024];
    if (tmplen == 0) {
        errno = EINVAL;
        return -1;
    }
    if (gp_path_folder(path, dir, sizeof dir, NULL) != 0 ||
        snprintf(tmp, tmplen, "%s/.gpuprim.%ld.json.tmp", strcmp(dir, "/") ? dir : "",
                 (long)getpid()) >= (int)tmplen) {
        tmp[0] = '\0';
        errno = ENAMETOOLONG;
        return -1;
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        tmp[0] = '\0';
        return -1;
    }
    int rc = report_json_to(f, r, o);
    if (rc != 0) {
        const int saved = errno;
        unlink(tmp);
        tmp[0] = '\0';
        errno = saved;
    }
    return rc;
}

/* The function job's results. */
static void json_function(FILE *f, const gp_result_function *fn)
{
    gp_report_jkey_str(f, 1, "mode", "function");
    gp_report_jkey_str(f, 1, "function", gp_func_name(fn->func));
    gp_report_jkey_num(f, 1, "a", fn->a);
    gp_report_jkey_num(f, 1, "b", fn->b);
    gp_report_jkey_int(f, 1, "n", (long long)fn->ntrap);
    gp_report_jkey_num(f, 1, "integral", fn->integral);
    gp_report_jkey_num(f, 1, "exact", fn->exact);
}

/* The file job's input: mode, file, dataset, stored type, shape, dtype. */
static void json_input(FILE *f, const gp_result_input *in)
{
    gp_report_jkey_str(f, 1, "mode", "file");
    gp_report_jkey_str(f, 1, "file", in->file);
    gp_report_jkey_str(f, 1, "dataset", in->dataset);
    gp_report_jkey_str(f, 1, "stored_type", in->type_desc);
    gp_report_jkey(f, 1, "shape");
    fputc('[', f);
    for (int d = 0; d < in->ndims; d++)
        fprintf(f, "%s%lld", d ? ", " : "", (long long)in->dims[d]);
    fputc(']', f);
    gp_report_jkey_str(f, 1, "dtype", gp_dtype_name(in->dtype));
}

/* "min" or "max": floats as numbers (%.17g is exact for float32 too), integers exactly (their
 * text), NaN when there is none (every element NaN, or no element). */
static void json_extreme(FILE *f, const char *name, gp_dtype dt, int none, uint64_t key,
                         const char *text)
{
    gp_report_jkey(f, 1, name);
    if (none || gp_dtype_is_float(dt))
        gp_report_jnum(f, name, none ? NAN : gp_key_to_double(dt, key));
    else fputs(text, f);
}

/* The statistics: count, NaN count, sum, min, max, mean, L2 norm, the integral and its rule. */
static void json_stats(FILE *f, const gp_result *r)
{
    const gp_result_stats *st = &r->stats;
    const gp_dtype dt = r->in.dtype;
    double mean, l2;
    char mn[64], mx[64], ib[GP_I128_DEC_LEN];
    derived(&st->global, &mean, &l2);
    minmax_text(r, mn, mx, sizeof mn);
    gp_report_jkey_int(f, 1, "count", (long long)st->global.count);
    gp_report_jkey_int(f, 1, "nan_count", (long long)st->global.nan_count);
    if (gp_report_jversion() >= 2)
        gp_report_jkey_int(f, 1, "non_nan_count",
                           (long long)(st->global.count - st->global.nan_count));
    gp_report_jkey(f, 1, "sum");
    const char *isum = int_sum_text(r, ib, sizeof ib);
    if (isum) fputs(isum, f); /* integers: the exact sum as a JSON integer */
    else gp_report_jnum(f, "sum", st->global.sum);
    const int none = st->global.count - st->global.nan_count == 0;
    json_extreme(f, "min", dt, none, st->global.min_key, mn);
    json_extreme(f, "max", dt, none, st->global.max_key, mx);
    gp_report_jkey_num(f, 1, "mean", mean);
    gp_report_jkey_num(f, 1, "l2_norm", l2);
    gp_report_jkey_num(f, 1, "integral", st->integral);
    gp_report_jkey_str(f, 1, "integral_rule",
                       st->nonuniform ? "trapezoid, --x" : "trapezoid, uniform dx");
    gp_report_jkey_num(f, 1, "dx", st->dx);
}

/* The sort (with the statistics' reproducible flag and chunks, in the report's order). */
static void json_sort(FILE *f, const gp_result *r)
{
    const gp_result_sort *so = &r->sort;
    gp_report_jkey_bool(f, 1, "sorted", so->done);
    gp_report_jkey_bool(f, 1, "sorted_verified", so->ok);
    gp_report_jkey_int(f, 1, "sorted_descents", (long long)so->descents);
    gp_report_jkey_str(f, 1, "order", so->descending ? "descending" : "ascending");
    gp_report_jkey_bool(f, 1, "stable", so->stable);
    gp_report_jkey_bool(f, 1, "reproducible", r->stats.reproducible);
    gp_report_jkey_str(f, 1, "argsort_dataset", so->argsort_dset[0] ? so->argsort_dset : NULL);
    gp_report_jkey_str(f, 1, "payload_dataset", so->payload_dset[0] ? so->payload_dset : NULL);
    gp_report_jkey_int(f, 1, "chunks", (long long)r->stats.chunks);
    gp_report_jkey_int(f, 1, "chunk_elements", (long long)r->stats.chunk_elems);
    gp_report_jkey_int(f, 1, "sort_runs", (long long)so->runs);
}

/* The scans: each dataset (null: not written), the last cumulative sum (an integer one as a
 * JSON integer with every digit) and the last cumulative integral (null without them). */
static void json_scan(FILE *f, const gp_result_scan *sc)
{
    char nb[GP_I128_DEC_LEN];
    gp_report_jkey_str(f, 1, "cumsum_dataset", sc->cumsum_dset[0] ? sc->cumsum_dset : NULL);
    gp_report_jkey(f, 1, "cumsum_total");
    if (!sc->cumsum_dset[0]) fputs("null", f);
    else if (sc->cumsum_type == GP_F64) gp_report_jnum(f, "cumsum_total", sc->total);
    else fputs(scan_total_text(sc, nb, sizeof nb), f);
    gp_report_jkey_str(f, 1, "cumint_dataset", sc->cumint_dset[0] ? sc->cumint_dset : NULL);
    gp_report_jkey(f, 1, "cumint_last");
    if (sc->cumint_dset[0]) gp_report_jnum(f, "cumint_last", sc->last_integral);
    else fputs("null", f);
}

/* The rank exchange: steps, bytes, and per step its transport, times and bytes. */
static void json_exchange(FILE *f, const gp_result_exchange *x)
{
    gp_report_jkey_int(f, 1, "exchange_steps", x->stages);
    gp_report_jkey_int(f, 1, "exchange_bytes", (long long)x->bytes);
    gp_report_jkey_int(f, 1, "exchange_bytes_whole", (long long)x->bytes_whole);
    gp_report_jkey(f, 1, "exchange_step_times");
    fputc('[', f);
    const int ns = exchange_steps(x);
    for (int s = 0; s < ns; s++)
        fprintf(f, "%s\n    {\"transport\": \"%s\", \"transfer_ms\": %.6f, \"merge_ms\": %.6f, "
                "\"bytes\": %lld}", s ? "," : "", transports_text(x->step_transport[s]),
                x->step_comm_ms[s], x->step_merge_ms[s], (long long)x->step_bytes[s]);
    fprintf(f, "%s]", ns ? "\n  " : "");
}

/* The output and the drivers --io resolved to: the input's, and --out's (null: none
 * written). */
static void json_output(FILE *f, const gp_result *r)
{
    gp_report_jkey_str(f, 1, "out", r->sort.out);
    gp_report_jkey_str(f, 1, "io_read", gp_io_mode_name(r->in.io));
    gp_report_jkey_str(f, 1, "io_write",
                       r->sort.io != GP_IO_AUTO ? gp_io_mode_name(r->sort.io) : NULL);
}

static int report_json_to(FILE *f, const gp_result *r, const gp_options *o)
{
    const gp_result_run *run = &r->run;
    gp_report_jbegin(o->json_version == 1 ? 1 : 2); /* 2 also for a record not from the parser */
    fprintf(f, "{\n  \"version\": ");
    gp_report_jstr(f, gp_version());
    if (gp_report_jversion() >= 2) gp_report_jkey_int(f, 1, "report_version", gp_report_jversion());
    gp_report_jkey_int(f, 1, "ranks", run->ranks);
    gp_report_jkey_str(f, 1, "backend", run->backend);
    gp_report_jkey_int(f, 1, "gpus_visible", run->gpus_visible);
    gp_report_jkey_int(f, 1, "ranks_per_gpu_max", run->ranks_per_gpu_max);
    json_options(f, o);
    json_binding(f, run);
    if (run->function_mode) {
        json_function(f, &r->fn);
    } else {
        json_input(f, &r->in);
        json_stats(f, r);
        json_sort(f, r);
        json_scan(f, &r->scan);
        json_exchange(f, &r->xchg);
        json_output(f, r);
        gp_report_dist_json(f, r);
    }
    if (gp_report_jversion() >= 2) { /* the names of the nulls above, with their values */
        gp_report_jkey(f, 1, "non_finite");
        gp_report_jnonfinite(f);
    }
    gp_report_jkey(f, 1, "times_ms");
    fputc('{', f);
    for (int i = 0; i < GP_NPHASES; i++) {
        char tk[64];
        fprintf(f, "%s\n    ", i ? "," : "");
        gp_report_jstr(f, gp_json_time_key(gp_report_jversion(), gp_phase_label(i), tk, sizeof tk));
        fprintf(f, ": %.6f", run->t[i] * 1e3);
    }
    fprintf(f, "\n  }\n}\n");
    const int werr = ferror(f);
    if (fclose(f) != 0 || werr) {
        if (werr && errno == 0) errno = EIO;
        return -1;
    }
    return 0;
}

/* report.c — the summary table, the binding table and the JSON report. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp_path.h"
#include "job.h"

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
    if (gp_dtype_is_float(r->dtype) || !r->stats.has_isum) return NULL;
    gp_i128_to_dec(r->stats.isum, buf, len);
    return buf;
}

static void minmax_text(const gp_result *r, char *mn, char *mx, size_t len)
{
    if (r->stats.count - r->stats.nan_count > 0) {
        fmt_key(mn, len, r->dtype, r->stats.min_key);
        fmt_key(mx, len, r->dtype, r->stats.max_key);
    } else {
        snprintf(mn, len, "nan");
        snprintf(mx, len, "nan");
    }
}

void gp_report_print(const gp_result *r, const gp_options *o)
{
    if (o->quiet) return;
    if (r->function_mode) {
        printf("gpuprim_mpi: trapezoid rule of %s over [%.17g, %.17g], n = %lld trapezoids, %d rank%s, backend %s\n",
               gp_func_name(r->func), r->a, r->b, (long long)r->ntrap, r->ranks,
               r->ranks == 1 ? "" : "s", r->backend);
        printf("  %-14s %.17g\n", "integral", r->integral);
        printf("  %-14s %.17g\n", "exact", r->exact);
        printf("  %-14s %.3e\n", "abs error", fabs(r->integral - r->exact));
        printf("  %-14s %.9g\n", "h", r->h);
        printf("  %-14s %.3f ms (max over ranks)\n", "time", r->t[GP_PH_TOTAL] * 1e3);
        fflush(stdout);
        return;
    }
    double mean, l2;
    char mn[64], mx[64];
    derived(&r->stats, &mean, &l2);
    minmax_text(r, mn, mx, sizeof mn);
    char shape[160] = "";
    if (r->ndims > 1) { /* e.g. " (shape 1000 x 3, read flattened, row-major)" */
        size_t k = (size_t)snprintf(shape, sizeof shape, " (shape ");
        for (int d = 0; d < r->ndims && k < sizeof shape; d++)
            k += (size_t)snprintf(shape + k, sizeof shape - k, "%s%lld", d ? " x " : "",
                                  (long long)r->dims[d]);
        if (k < sizeof shape) snprintf(shape + k, sizeof shape - k, ", read flattened, row-major)");
    }
    char fname[sizeof r->file], dname[sizeof r->dataset];
    printf("gpuprim_mpi: %s:%s (%s, read as %s), %lld element%s%s, %d rank%s, backend %s\n",
           one_line(fname, sizeof fname, r->file), one_line(dname, sizeof dname, r->dataset),
           r->type_desc, gp_dtype_name(r->dtype), (long long)r->n, r->n == 1 ? "" : "s", shape,
           r->ranks, r->ranks == 1 ? "" : "s", r->backend);
    printf("  %-14s %lld\n", "count", (long long)r->stats.count);
    printf("  %-14s %lld\n", "nan count", (long long)r->stats.nan_count);
    char nb[64], ib[GP_I128_DEC_LEN];
    const char *isum = int_sum_text(r, ib, sizeof ib);
    printf("  %-14s %s%s\n", "sum", isum ? isum : num(nb, sizeof nb, r->stats.sum),
           r->reproducible ? " (exact, reproducible)" : "");
    printf("  %-14s %s\n", "min", mn);
    printf("  %-14s %s\n", "max", mx);
    printf("  %-14s %s\n", "mean", num(nb, sizeof nb, mean));
    printf("  %-14s %s\n", "L2 norm", num(nb, sizeof nb, l2));
    if (r->integral_nonuniform)
        printf("  %-14s %s (trapezoid rule, coordinates from --x)\n", "integral",
               num(nb, sizeof nb, r->integral));
    else
        printf("  %-14s %s (trapezoid rule, dx = %g)\n", "integral", num(nb, sizeof nb, r->integral),
               r->dx);
    if (r->sorted_done) {
        printf("  %-14s %s, %s%s (%lld descents; count %s; multiset hash %s%s%s)\n", "sorted",
               r->sorted_ok ? "yes, verified" : "NO", r->descending ? "descending" : "ascending",
               r->stable ? ", stable" : "", (long long)r->sorted_descents,
               r->sorted_stats.count == r->stats.count ? "kept" : "CHANGED",
               r->sorted_stats.hash == r->sorted_hash_in ? "kept" : "CHANGED",
               r->out ? "; written to " : "", r->out ? r->out : "");
        if (r->argsort_dset[0]) printf("  %-14s %s:%s\n", "argsort", r->out, r->argsort_dset);
        if (r->payload_dset[0]) printf("  %-14s %s:%s (sorted with the data)\n", "payload", r->out, r->payload_dset);
    } else
        printf("  %-14s skipped (--no-sort)\n", "sorted");
    if (r->ranks > 1 && r->sorted_done) {
        const int ns = r->exchange_stages < GP_XSTEPS_MAX ? r->exchange_stages : GP_XSTEPS_MAX;
        int used = 0;
        for (int s = 0; s < ns; s++) used |= r->xstep_transport[s];
        const double whole = (double)r->exchange_bytes_whole;
        printf("  %-14s %d step%s, %s, %.1f MiB moved between ranks (%.1f %% of the %.1f MiB "
               "the whole shards make)\n", "rank exchange", r->exchange_stages,
               r->exchange_stages == 1 ? "" : "s", transports_text(used),
               (double)r->exchange_bytes / 1048576.0,
               whole > 0 ? 100.0 * (double)r->exchange_bytes / whole : 0.0, whole / 1048576.0);
    }
    printf("phase            time (ms, max over ranks)\n");
    for (int i = 0; i < GP_NPHASES; i++)
        printf("  %-14s %10.3f\n", gp_phase_names[i], r->t[i] * 1e3);
    if (o->verbose && r->sorted_done && r->exchange_stages > 0) {
        printf("exchange step  transport   transfer ms  merge ms  MiB moved (all ranks)  GB/s (moved / step time)\n");
        int ns = r->exchange_stages < GP_XSTEPS_MAX ? r->exchange_stages : GP_XSTEPS_MAX;
        for (int s = 0; s < ns; s++) {
            const double ms = r->xstep_comm_ms[s] + r->xstep_merge_ms[s];
            printf("  %11d  %-10s  %11.3f  %8.3f  %21.1f  %8.2f\n", s + 1,
                   transports_text(r->xstep_transport[s]), r->xstep_comm_ms[s],
                   r->xstep_merge_ms[s], (double)r->xstep_bytes[s] / 1048576.0,
                   ms > 0 ? (double)r->xstep_bytes[s] / (ms * 1e6) : 0.0);
        }
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

/* JSON number: NaN and infinities as the strings "nan", "inf", "-inf"; a finite value with
 * a decimal point or an exponent always (an integral mean as 2.0, not 2), so that readers
 * such as Python's json take every such field as a float. */
static void jnum(FILE *f, double x)
{
    char b[40];
    if (isnan(x)) fprintf(f, "\"nan\"");
    else if (isinf(x)) fprintf(f, x > 0 ? "\"inf\"" : "\"-inf\"");
    else {
        snprintf(b, sizeof b, "%.17g", x);
        fprintf(f, "%s%s", b, strpbrk(b, ".e") ? "" : ".0");
    }
}

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* JSON string or null */
static void jstr_or_null(FILE *f, const char *s)
{
    if (s) jstr(f, s); else fprintf(f, "null");
}

/* "options": the command line as the run understood it, defaults filled in. */
static void json_options(FILE *f, const gp_options *o)
{
    static const char *const backends[] = {"auto", "cuda", "cpu"};
    fprintf(f, ",\n  \"options\": {\n    \"file\": ");
    jstr_or_null(f, o->file);
    fprintf(f, ",\n    \"dataset\": ");
    jstr_or_null(f, o->dataset);
    fprintf(f, ",\n    \"x\": ");
    jstr_or_null(f, o->xdataset);
    fprintf(f, ",\n    \"dx\": ");
    jnum(f, o->dx);
    fprintf(f, ",\n    \"out\": ");
    jstr_or_null(f, o->out);
    fprintf(f, ",\n    \"force\": %s,\n    \"no_sort\": %s,\n    \"json\": ",
            o->force ? "true" : "false", o->no_sort ? "true" : "false");
    jstr_or_null(f, o->json);
    fprintf(f, ",\n    \"quiet\": %s,\n    \"verbose\": %s,\n    \"progress\": \"%s\"",
            o->quiet ? "true" : "false", o->verbose ? "true" : "false",
            o->progress > 0 ? "on" : o->progress < 0 ? "off" : "auto");
    static const char *const transports[] = {"auto", "shared", "mpi"};
    fprintf(f, ",\n    \"backend\": \"%s\",\n    \"transport\": \"%s\",\n    \"io\": \"%s\",\n    \"function\": ",
            (unsigned)o->backend < 3 ? backends[o->backend] : "?",
            (unsigned)o->transport < 3 ? transports[o->transport] : "?", gp_io_mode_name(o->io));
    jstr_or_null(f, o->function_mode ? gp_func_name(o->func) : NULL);
    fprintf(f, ",\n    \"a\": ");
    jnum(f, o->a);
    fprintf(f, ",\n    \"b\": ");
    jnum(f, o->b);
    fprintf(f, ",\n    \"n\": %lld", (long long)o->n);
    fprintf(f, ",\n    \"descending\": %s,\n    \"stable\": %s,\n    \"argsort\": %s",
            o->descending ? "true" : "false", o->stable ? "true" : "false",
            o->argsort ? "true" : "false");
    fprintf(f, ",\n    \"payload\": ");
    jstr_or_null(f, o->payload);
    fprintf(f, ",\n    \"reproducible\": %s\n  }", o->reproducible ? "true" : "false");
}

/* "binding": one object per rank, in rank order. */
static void json_binding(FILE *f, const gp_result *r)
{
    fprintf(f, ",\n  \"binding\": [");
    for (int i = 0; r->bindings && i < r->ranks; i++) {
        const gp_binding *b = &r->bindings[i];
        fprintf(f, "%s\n    {\"rank\": %d, \"host\": ", i ? "," : "", b->rank);
        jstr(f, b->host);
        fprintf(f, ", \"local_rank\": %d, \"local_size\": %d, \"device\": %d, \"name\": ",
                b->local_rank, b->local_size, b->device);
        jstr(f, b->device_name);
        fprintf(f, ", \"pci_bus_id\": ");
        jstr_or_null(f, b->busid[0] ? b->busid : NULL);
        fprintf(f, ", \"cuda_visible_devices\": ");
        jstr_or_null(f, b->cuda_visible_set ? b->cuda_visible : NULL);
        fprintf(f, "}");
    }
    fprintf(f, "%s]", r->bindings && r->ranks > 0 ? "\n  " : "");
}

/* 1 when the regular file at path holds something other than a JSON report: its first
 * byte that is not white space is not '{' (an empty file counts as a report). */
static int holds_other_data(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int c;
    while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r') {}
    fclose(f);
    return c != EOF && c != '{';
}

int gp_json_path_ok(const char *path, int force, char *msg, size_t msglen)
{
    struct stat st;
    char dir[1024];
    if (stat(path, &st) == 0) {
        if (!force && S_ISREG(st.st_mode) && holds_other_data(path)) {
            snprintf(msg, msglen, "%s exists and is not a JSON report: not replaced (remove it, "
                     "or name another file)", path);
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

static int report_json_to(FILE *f, const gp_result *r, const gp_options *o)
{
    fprintf(f, "{\n  \"version\": ");
    jstr(f, gp_version());
    fprintf(f, ",\n  \"ranks\": %d,\n  \"backend\": ", r->ranks);
    jstr(f, r->backend);
    fprintf(f, ",\n  \"gpus_visible\": %d,\n  \"ranks_per_gpu_max\": %d", r->gpus_visible,
            r->ranks_per_gpu_max);
    json_options(f, o);
    json_binding(f, r);
    if (r->function_mode) {
        fprintf(f, ",\n  \"mode\": \"function\",\n  \"function\": ");
        jstr(f, gp_func_name(r->func));
        fprintf(f, ",\n  \"a\": ");
        jnum(f, r->a);
        fprintf(f, ",\n  \"b\": ");
        jnum(f, r->b);
        fprintf(f, ",\n  \"n\": %lld,\n  \"integral\": ", (long long)r->ntrap);
        jnum(f, r->integral);
        fprintf(f, ",\n  \"exact\": ");
        jnum(f, r->exact);
    } else {
        double mean, l2;
        char mn[64], mx[64];
        derived(&r->stats, &mean, &l2);
        minmax_text(r, mn, mx, sizeof mn);
        fprintf(f, ",\n  \"mode\": \"file\",\n  \"file\": ");
        jstr(f, r->file);
        fprintf(f, ",\n  \"dataset\": ");
        jstr(f, r->dataset);
        fprintf(f, ",\n  \"stored_type\": ");
        jstr(f, r->type_desc);
        fprintf(f, ",\n  \"shape\": [");
        for (int d = 0; d < r->ndims; d++)
            fprintf(f, "%s%lld", d ? ", " : "", (long long)r->dims[d]);
        fprintf(f, "]");
        fprintf(f, ",\n  \"dtype\": ");
        jstr(f, gp_dtype_name(r->dtype));
        fprintf(f, ",\n  \"count\": %lld,\n  \"nan_count\": %lld,\n  \"sum\": ",
                (long long)r->stats.count, (long long)r->stats.nan_count);
        char ib[GP_I128_DEC_LEN];
        const char *isum = int_sum_text(r, ib, sizeof ib);
        if (isum) fputs(isum, f); /* integers: the exact sum as a JSON integer */
        else jnum(f, r->stats.sum);
        /* min/max: floats as numbers (%.17g is exact for float32 too), integers exactly */
        const int none = r->stats.count - r->stats.nan_count == 0;
        fprintf(f, ",\n  \"min\": ");
        if (none || gp_dtype_is_float(r->dtype))
            jnum(f, none ? NAN : gp_key_to_double(r->dtype, r->stats.min_key));
        else
            fprintf(f, "%s", mn);
        fprintf(f, ",\n  \"max\": ");
        if (none || gp_dtype_is_float(r->dtype))
            jnum(f, none ? NAN : gp_key_to_double(r->dtype, r->stats.max_key));
        else
            fprintf(f, "%s", mx);
        fprintf(f, ",\n  \"mean\": ");
        jnum(f, mean);
        fprintf(f, ",\n  \"l2_norm\": ");
        jnum(f, l2);
        fprintf(f, ",\n  \"integral\": ");
        jnum(f, r->integral);
        fprintf(f, ",\n  \"integral_rule\": \"%s\"", r->integral_nonuniform ? "trapezoid, --x" : "trapezoid, uniform dx");
        fprintf(f, ",\n  \"dx\": ");
        jnum(f, r->dx);
        fprintf(f, ",\n  \"sorted\": %s,\n  \"sorted_verified\": %s,\n  \"sorted_descents\": %lld",
                r->sorted_done ? "true" : "false", r->sorted_ok ? "true" : "false",
                (long long)r->sorted_descents);
        fprintf(f, ",\n  \"order\": \"%s\",\n  \"stable\": %s,\n  \"reproducible\": %s",
                r->descending ? "descending" : "ascending", r->stable ? "true" : "false",
                r->reproducible ? "true" : "false");
        fprintf(f, ",\n  \"argsort_dataset\": ");
        if (r->argsort_dset[0]) jstr(f, r->argsort_dset); else fprintf(f, "null");
        fprintf(f, ",\n  \"payload_dataset\": ");
        if (r->payload_dset[0]) jstr(f, r->payload_dset); else fprintf(f, "null");
        fprintf(f, ",\n  \"chunks\": %lld,\n  \"chunk_elements\": %lld", (long long)r->chunks,
                (long long)r->chunk_elems);
        fprintf(f, ",\n  \"exchange_steps\": %d,\n  \"exchange_bytes\": %lld,\n  "
                "\"exchange_bytes_whole\": %lld", r->exchange_stages, (long long)r->exchange_bytes,
                (long long)r->exchange_bytes_whole);
        fprintf(f, ",\n  \"exchange_step_times\": [");
        int ns = r->exchange_stages < GP_XSTEPS_MAX ? r->exchange_stages : GP_XSTEPS_MAX;
        for (int s = 0; s < ns; s++)
            fprintf(f, "%s\n    {\"transport\": \"%s\", \"transfer_ms\": %.6f, \"merge_ms\": %.6f, "
                    "\"bytes\": %lld}", s ? "," : "", transports_text(r->xstep_transport[s]),
                    r->xstep_comm_ms[s], r->xstep_merge_ms[s], (long long)r->xstep_bytes[s]);
        fprintf(f, "%s]", ns ? "\n  " : "");
        fprintf(f, ",\n  \"out\": ");
        if (r->out) jstr(f, r->out); else fprintf(f, "null");
        /* the drivers --io resolved to: the input's, and --out's (null: none written) */
        fprintf(f, ",\n  \"io_read\": \"%s\",\n  \"io_write\": ", gp_io_mode_name(r->io_read));
        if (r->io_write != GP_IO_AUTO) fprintf(f, "\"%s\"", gp_io_mode_name(r->io_write));
        else fprintf(f, "null");
    }
    fprintf(f, ",\n  \"times_ms\": {");
    for (int i = 0; i < GP_NPHASES; i++) {
        fprintf(f, "%s\n    ", i ? "," : "");
        jstr(f, gp_phase_names[i]);
        fprintf(f, ": %.6f", r->t[i] * 1e3);
    }
    fprintf(f, "\n  }\n}\n");
    const int werr = ferror(f);
    if (fclose(f) != 0 || werr) {
        if (werr && errno == 0) errno = EIO;
        return -1;
    }
    return 0;
}

/* report_doc.c — the --json document: "options", "binding", the results, the distribution's
 * fields (report_dist.c) and the phase times, in the report's version (report_json.h),
 * written with report_jwrite.c's writers under a temporary name that the caller renames;
 * and the check of the --json path made before any work. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp_path.h"
#include "job.h"
#include "report_dist.h"
#include "report_json.h"
#include "report_jwrite.h"
#include "report_text.h"

/* Room for every non-finite number of one report: the results' (fewer than 16) and each
 * quantile's value. */
_Static_assert(GP_JSON_NONFINITE_MAX >= 16 + GP_MAX_QUANTILES, "non_finite's room");

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
    gp_rep_derived(&st->global, &mean, &l2);
    gp_rep_minmax_text(r, mn, mx, sizeof mn);
    gp_report_jkey_int(f, 1, "count", (long long)st->global.count);
    gp_report_jkey_int(f, 1, "nan_count", (long long)st->global.nan_count);
    if (gp_report_jversion() >= 2)
        gp_report_jkey_int(f, 1, "non_nan_count",
                           (long long)(st->global.count - st->global.nan_count));
    gp_report_jkey(f, 1, "sum");
    const char *isum = gp_rep_int_sum_text(r, ib, sizeof ib);
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
    else fputs(gp_rep_scan_total_text(sc, nb, sizeof nb), f);
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
    const int ns = gp_rep_exchange_steps(x);
    for (int s = 0; s < ns; s++)
        fprintf(f, "%s\n    {\"transport\": \"%s\", \"transfer_ms\": %.6f, \"merge_ms\": %.6f, "
                "\"bytes\": %lld}", s ? "," : "", gp_rep_transports_text(x->step_transport[s]),
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

/* report_dist.c — the distribution in the report (report_dist.h): a compact text bar chart of
 * the histogram (a line per bin up to HIST_LINES bins, else adjacent bins grouped into at
 * most HIST_LINES lines), the quantile rows and the distinct count; and their JSON fields. */
#define _POSIX_C_SOURCE 200809L
#include "report_dist.h"
#include "report_jwrite.h"

#include <math.h>
#include <string.h>

#define HIST_LINES 20 /* most lines of the bar chart */
#define BAR_WIDTH 40  /* characters of the longest bar */

/* %.17g of x, NaN always as "nan". */
static const char *num17(char *buf, size_t len, double x)
{
    if (isnan(x)) snprintf(buf, len, "nan");
    else snprintf(buf, len, "%.17g", x);
    return buf;
}

/* The bar chart: line k covers bins [k*g, min((k+1)*g, bins)), g bins per line. */
static void print_bars(const gp_result_dist *d)
{
    const int64_t nb = d->bins;
    const int64_t g = (nb + HIST_LINES - 1) / HIST_LINES;
    int64_t most = 0;
    for (int64_t b = 0; b < nb; b += g) {
        int64_t c = 0;
        for (int64_t i = b; i < b + g && i < nb; i++) c += d->counts[i];
        if (c > most) most = c;
    }
    for (int64_t b = 0; b < nb; b += g) {
        const int64_t e = b + g < nb ? b + g : nb;
        int64_t c = 0;
        for (int64_t i = b; i < e; i++) c += d->counts[i];
        char lo[32], hi[32], bar[BAR_WIDTH + 1];
        snprintf(lo, sizeof lo, "%.6g", d->edges[b]);
        snprintf(hi, sizeof hi, "%.6g", d->edges[e]);
        int w = most > 0 ? (int)llround((double)BAR_WIDTH * (double)c / (double)most) : 0;
        if (c > 0 && w == 0) w = 1;
        memset(bar, '#', (size_t)w);
        bar[w] = '\0';
        const int pad = 26 - (int)strlen(lo) - (int)strlen(hi);
        printf("    [%s, %s%c %*lld  %s\n", lo, hi, e == nb ? ']' : ')', pad > 1 ? pad : 1,
               (long long)c, bar);
    }
}

/* The histogram's rows: its bins, range and counts outside, then the bars. */
static void print_hist(const gp_result_dist *d)
{
    int64_t in = 0;
    for (int64_t i = 0; i < d->bins; i++) in += d->counts[i];
    const int64_t g = (d->bins + HIST_LINES - 1) / HIST_LINES;
    printf("  %-14s %lld bin%s over [%.9g, %.9g] (numpy's edges, %s): %lld counted, %lld below, "
           "%lld above%s\n", "histogram", (long long)d->bins, d->bins == 1 ? "" : "s",
           d->edges[0], d->edges[d->bins], d->edge_type == GP_F32 ? "float32" : "float64",
           (long long)in, (long long)d->below, (long long)d->above,
           g > 1 ? "; bars of adjacent bins summed" : "");
    print_bars(d);
    if (d->counts_dset[0])
        printf("  %-14s %s, %s\n", "histogram out", d->counts_dset, d->edges_dset);
}

void gp_report_dist_print(const gp_result *r)
{
    const gp_result_dist *d = &r->dist;
    char b[64];
    if (d->bins > 0 && d->counts && d->edges) print_hist(d);
    if (d->nq > 0) {
        printf("  %-14s of %lld non-NaN value%s (numpy's nanquantile, linear; %s)\n", "quantiles",
               (long long)d->q_count, d->q_count == 1 ? "" : "s",
               d->q_select ? "radix select, no sort" : "read from the sorted data");
        for (int i = 0; i < d->nq; i++)
            printf("    q = %-10.9g %s%s\n", d->q[i], num17(b, sizeof b, d->value[i]),
                   d->q[i] == 0.5 ? " (median)" : "");
    }
    if (d->distinct_done)
        printf("  %-14s %lld (non-NaN values; -0.0 and +0.0 one value)\n", "distinct",
               (long long)d->distinct);
}

/* "histogram": {"counts", "edges", "below", "above", "edge_dtype", "counts_dataset",
 * "edges_dataset"}, or null. */
static void json_hist(FILE *f, const gp_result_dist *d)
{
    gp_report_jkey(f, 1, "histogram");
    if (d->bins <= 0 || !d->counts || !d->edges) {
        fputs("null", f);
        return;
    }
    fputs("{\"counts\": [", f);
    for (int64_t i = 0; i < d->bins; i++)
        fprintf(f, "%s%lld", i ? ", " : "", (long long)d->counts[i]);
    fputs("], \"edges\": [", f);
    for (int64_t i = 0; i <= d->bins; i++) {
        if (i) fputs(", ", f);
        gp_report_jnum(f, "histogram.edges", d->edges[i]); /* finite: they increase */
    }
    fprintf(f, "], \"below\": %lld, \"above\": %lld, \"edge_dtype\": \"%s\"", (long long)d->below,
            (long long)d->above, gp_dtype_name(d->edge_type));
    fputs(", \"counts_dataset\": ", f);
    gp_report_jstr_or_null(f, d->counts_dset[0] ? d->counts_dset : NULL);
    fputs(", \"edges_dataset\": ", f);
    gp_report_jstr_or_null(f, d->edges_dset[0] ? d->edges_dset : NULL);
    fputc('}', f);
}

void gp_report_dist_json(FILE *f, const gp_result *r)
{
    const gp_result_dist *d = &r->dist;
    json_hist(f, d);
    gp_report_jkey(f, 1, "quantiles");
    if (d->nq > 0) {
        fputc('[', f);
        for (int i = 0; i < d->nq; i++) {
            char key[32]; /* a non-finite value's name in version 2: its place */
            snprintf(key, sizeof key, "quantiles[%d].value", i);
            fprintf(f, "%s{\"q\": ", i ? ", " : "");
            gp_report_jnum(f, "quantiles.q", d->q[i]);
            fputs(", \"value\": ", f);
            gp_report_jnum(f, key, d->value[i]);
            fputc('}', f);
        }
        fputc(']', f);
    } else {
        fputs("null", f);
    }
    gp_report_jkey(f, 1, "quantiles_method");
    fputs(d->nq > 0 ? (d->q_select ? "\"radix select\"" : "\"sorted data\"") : "null", f);
    gp_report_jkey(f, 1, "distinct");
    if (d->distinct_done) fprintf(f, "%lld", (long long)d->distinct);
    else fputs("null", f);
}

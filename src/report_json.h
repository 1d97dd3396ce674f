/* report_json.h — what the two versions of the --json report (--json-version) differ in,
 * for report_doc.c: the keys of times_ms, and how a non-finite number is written.
 *
 * Version 1 (the report before "report_version" existed): NaN and infinities as the strings
 * "nan", "inf", "-inf"; times_ms keyed by the phase table's labels, spaces included ("local
 * sort"). Version 2 (the default): "report_version": 2; a non-finite number as null, its
 * key and its text ("nan", "inf", "-inf") listed in the object "non_finite"; times_ms keys
 * without spaces ("local_sort"). Pure. */
#ifndef GP_REPORT_JSON_H
#define GP_REPORT_JSON_H

#include <stddef.h>
#include <stdio.h>

#define GP_JSON_VERSION_DEFAULT 2
/* More than the report has numbers that can be non-finite: the results' (under 16) and each
 * --quantiles value (up to GP_MAX_QUANTILES = 64, named by its place: "quantiles[3].value"). */
#define GP_JSON_NONFINITE_MAX 80

/* The non-finite numbers of one report, in the order written (version 2). */
typedef struct gp_json_nonfinite {
    int count;
    struct {
        char key[32];
        const char *text; /* "nan", "inf" or "-inf" */
    } v[GP_JSON_NONFINITE_MAX];
} gp_json_nonfinite;

/* "nan", "inf" or "-inf" for a non-finite x, NULL for a finite one (NaN of either sign is
 * "nan"). */
const char *gp_json_nonfinite_text(double x);

/* Writes the number x of member `key` in report version `version` (1 or 2): a finite value
 * as %.17g with a decimal point or an exponent always (2.0, not 2); a non-finite one as its
 * text in quotes (version 1), or as null with key and text noted in nf (version 2). */
void gp_json_number(FILE *f, int version, gp_json_nonfinite *nf, const char *key, double x);

/* Writes the members of nf as a JSON object, {"mean": "nan", "sum": "inf"} ({} when none). */
void gp_json_nonfinite_write(FILE *f, const gp_json_nonfinite *nf);

/* The times_ms key of a phase row's label in report version `version` into buf: the label
 * itself in version 1, with every space as '_' in version 2 ("local sort" -> "local_sort").
 * Returns buf. */
const char *gp_json_time_key(int version, const char *label, char *buf, size_t len);

#endif /* GP_REPORT_JSON_H */

/* report_dist.h — the distribution's part of the report (report_dist.c): the summary's
 * histogram bar chart, quantile and distinct rows, and the JSON fields; with the two JSON
 * writers of report.c it shares. Private to the program. */
#ifndef GP_REPORT_DIST_H
#define GP_REPORT_DIST_H

#include <stdio.h>

#include "job.h"

/* The summary rows of r->dist (nothing when no distribution was asked for). */
void gp_report_dist_print(const gp_result *r);

/* The JSON members "histogram", "quantiles", "quantiles_method" and "distinct" (null when
 * not asked for) at depth 1, each starting with ",\n". */
void gp_report_dist_json(FILE *f, const gp_result *r);

/* report.c's writers: the start of a member at depth 1 or 2 (",\n", the indent, "KEY": ),
 * a JSON number in the report's version (gp_json_number: a finite value always with a
 * decimal point or an exponent; NaN and infinities as the strings "nan", "inf", "-inf" in
 * version 1, as null named `key` in "non_finite" in version 2). */
void gp_report_jkey(FILE *f, int depth, const char *key);
void gp_report_jnum(FILE *f, const char *key, double x);
/* A JSON string (escaped), or null for NULL. */
void gp_report_jstr_or_null(FILE *f, const char *s);

#endif /* GP_REPORT_DIST_H */

/* report_dist.h — the distribution's part of the report (report_dist.c): the summary's
 * histogram bar chart, quantile and distinct rows, and the JSON fields (written with
 * report_jwrite.h's writers). Private to the program. */
#ifndef GP_REPORT_DIST_H
#define GP_REPORT_DIST_H

#include <stdio.h>

#include "job.h"

/* The summary rows of r->dist (nothing when no distribution was asked for). */
void gp_report_dist_print(const gp_result *r);

/* The JSON members "histogram", "quantiles", "quantiles_method" and "distinct" (null when
 * not asked for) at depth 1, each starting with ",\n". */
void gp_report_dist_json(FILE *f, const gp_result *r);

#endif /* GP_REPORT_DIST_H */

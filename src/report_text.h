/* report_text.h — the results as text, shared by the summary table (report.c, which defines
 * them) and the --json document (report_doc.c), so that both show the same digits. Private
 * to the program; pure. */
#ifndef GP_REPORT_TEXT_H
#define GP_REPORT_TEXT_H

#include <stddef.h>

#include "job.h"

/* The transports of an exchange step or of all steps (an OR of GP_TRANSPORT_SHARED and
 * GP_TRANSPORT_MPI): "shared", "mpi", "shared+mpi", or "none" (no rank had a partner). */
const char *gp_rep_transports_text(int flags);

/* The mean (gp_stats_mean: for integer data the exact sum / count, rounded once) and the L2
 * norm of s into *mean and *l2 (NaN where undefined). */
void gp_rep_derived(const gp_stats *s, double *mean, double *l2);

/* The exact integer sum of r's statistics in full decimal into buf (len bytes,
 * GP_I128_DEC_LEN is enough) when the data are integers and that sum is known (has_isum);
 * returns buf, else NULL (the caller writes the float64 sum). */
const char *gp_rep_int_sum_text(const gp_result *r, char *buf, size_t len);

/* The min and the max of r's statistics as text into mn and mx (len bytes each): integers
 * exactly, floats %.9g (float32) or %.17g (float64); "nan" for both when no element is
 * non-NaN. */
void gp_rep_minmax_text(const gp_result *r, char *mn, char *mx, size_t len);

/* The last value of --cumsum into buf (len bytes): an integer cumsum with every digit, a
 * float64 one %.17g (NaN as "nan"). Returns buf. */
const char *gp_rep_scan_total_text(const gp_result_scan *sc, char *buf, size_t len);

/* The steps of the exchange that ran whose rows x holds: x->stages, at most GP_XSTEPS_MAX. */
int gp_rep_exchange_steps(const gp_result_exchange *x);

#endif /* GP_REPORT_TEXT_H */

/* report_jwrite.h — the writers of the --json report's members (report_jwrite.c), which the
 * report (report_doc.c) and its distribution's fields (report_dist.c) write with: the report
 * being written (its version and its non-finite numbers), keys, strings, numbers in the
 * report's version. Private to the program; one report at a time (one thread). */
#ifndef GP_REPORT_JWRITE_H
#define GP_REPORT_JWRITE_H

#include <stdio.h>

/* Starts a report of version `version` (1 or 2, report_json.h): no non-finite number noted
 * yet. Before it, the version is GP_JSON_VERSION_DEFAULT. */
void gp_report_jbegin(int version);

/* The version of the report being written. */
int gp_report_jversion(void);

/* Writes the non-finite numbers noted since gp_report_jbegin as a JSON object
 * (gp_json_nonfinite_write: {"mean": "nan"}, {} when none). */
void gp_report_jnonfinite(FILE *f);

/* The start of a member of the report's object (depth 1) or of one inside it (depth 2):
 * ",", a new line, the indent and "KEY": . */
void gp_report_jkey(FILE *f, int depth, const char *key);

/* The JSON number x of member `key` in the report's version (gp_json_number: a finite value
 * with a decimal point or an exponent always, so that readers such as Python's json take it
 * as a float; NaN and infinities as the strings "nan", "inf", "-inf" in version 1, as null
 * noted under `key` for "non_finite" in version 2). */
void gp_report_jnum(FILE *f, const char *key, double x);

/* A JSON string, '"' and '\\' escaped and control characters as \u00XX (NULL: ""). */
void gp_report_jstr(FILE *f, const char *s);

/* A JSON string, or null for NULL. */
void gp_report_jstr_or_null(FILE *f, const char *s);

/* A member (gp_report_jkey) whose value is a string or null, a number (gp_report_jnum), a
 * boolean, an integer. */
void gp_report_jkey_str(FILE *f, int depth, const char *key, const char *s);
void gp_report_jkey_num(FILE *f, int depth, const char *key, double x);
void gp_report_jkey_bool(FILE *f, int depth, const char *key, int b);
void gp_report_jkey_int(FILE *f, int depth, const char *key, long long v);

#endif /* GP_REPORT_JWRITE_H */

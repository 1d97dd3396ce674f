/* report_json.c — the --json report's two versions (report_json.h). */
#include "report_json.h"

#include <math.h>
#include <string.h>

const char *gp_json_nonfinite_text(double x)
{
    if (isnan(x)) return "nan";
    if (isinf(x)) return x > 0 ? "inf" : "-inf";
    return NULL;
}

void gp_json_number(FILE *f, int version, gp_json_nonfinite *nf, const char *key, double x)
{
    const char *text = gp_json_nonfinite_text(x);
    if (!text) {
        char b[40];
        snprintf(b, sizeof b, "%.17g", x);
        fprintf(f, "%s%s", b, strpbrk(b, ".e") ? "" : ".0");
    } else if (version == 1) {
        fprintf(f, "\"%s\"", text);
    } else {
        fputs("null", f);
        if (nf && nf->count < GP_JSON_NONFINITE_MAX) {
            snprintf(nf->v[nf->count].key, sizeof nf->v[0].key, "%s", key);
            nf->v[nf->count++].text = text;
        }
    }
}

void gp_json_nonfinite_write(FILE *f, const gp_json_nonfinite *nf)
{
    fputc('{', f);
    for (int k = 0; k < nf->count; k++)
        fprintf(f, "%s\"%s\": \"%s\"", k ? ", " : "", nf->v[k].key, nf->v[k].text);
    fputc('}', f);
}

const char *gp_json_time_key(int version, const char *label, char *buf, size_t len)
{
    if (!len) return buf;
    snprintf(buf, len, "%s", label ? label : "");
    for (char *p = buf; version >= 2 && *p; p++)
        if (*p == ' ') *p = '_';
    return buf;
}

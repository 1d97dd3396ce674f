/* report_jwrite.c — the writers of the --json report's members (report_jwrite.h): the report
 * being written, its keys, strings and numbers (the versions' rules: report_json.c). */
#include "report_jwrite.h"

#include "report_json.h"

/* The report being written: its version (--json-version) and its non-finite numbers. */
static struct {
    int version;
    gp_json_nonfinite nf;
} g_json = {GP_JSON_VERSION_DEFAULT, {0}};

void gp_report_jbegin(int version)
{
    g_json.version = version;
    g_json.nf.count = 0;
}

int gp_report_jversion(void) { return g_json.version; }

void gp_report_jnonfinite(FILE *f) { gp_json_nonfinite_write(f, &g_json.nf); }

void gp_report_jkey(FILE *f, int depth, const char *key)
{
    fprintf(f, ",\n%*s\"%s\": ", 2 * depth, "", key);
}

void gp_report_jnum(FILE *f, const char *key, double x)
{
    gp_json_number(f, g_json.version, &g_json.nf, key, x);
}

void gp_report_jstr(FILE *f, const char *s)
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

void gp_report_jstr_or_null(FILE *f, const char *s)
{
    if (s) gp_report_jstr(f, s); else fprintf(f, "null");
}

void gp_report_jkey_str(FILE *f, int depth, const char *key, const char *s)
{
    gp_report_jkey(f, depth, key);
    gp_report_jstr_or_null(f, s);
}

void gp_report_jkey_num(FILE *f, int depth, const char *key, double x)
{
    gp_report_jkey(f, depth, key);
    gp_report_jnum(f, key, x);
}

void gp_report_jkey_bool(FILE *f, int depth, const char *key, int b)
{
    gp_report_jkey(f, depth, key);
    fputs(b ? "true" : "false", f);
}

void gp_report_jkey_int(FILE *f, int depth, const char *key, long long v)
{
    gp_report_jkey(f, depth, key);
    fprintf(f, "%lld", v);
}

/* count.c — the count parser of both programs (count.h). Integer arithmetic only, so the
 * same words give the same counts on every machine, up to 2^63 - 1 exactly. */
#include "count.h"

#include <string.h>

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The decimal digits s[0, len) as a number, saturated at cap + 1 (cap < 2^63). */
static uint64_t digits_value(const char *s, size_t len, uint64_t cap)
{
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        const uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (cap - d) / 10) return cap + 1;
        v = v * 10 + d;
    }
    return v;
}

/* B^E: both non-empty runs of digits. */
static int parse_power(const char *s, const char *caret, int64_t *out)
{
    const size_t lb = (size_t)(caret - s), le = strlen(caret + 1);
    if (lb == 0 || le == 0 || strspn(s, "0123456789") != lb ||
        strspn(caret + 1, "0123456789") != le)
        return -1;
    const uint64_t max = (uint64_t)INT64_MAX;
    const uint64_t b = digits_value(s, lb, max), e = digits_value(caret + 1, le, max);
    if (b > max) return -1;
    if (b <= 1) { /* 0^0 = 1, 0^E = 0 (E > 0), 1^E = 1: no loop over a huge E */
        *out = e == 0 ? 1 : (int64_t)b;
        return 0;
    }
    uint64_t r = 1;
    for (uint64_t k = 0; k < e; k++) { /* b >= 2: at most 63 rounds before it overflows */
        if (r > max / b) return -1;
        r *= b;
    }
    *out = (int64_t)r;
    return 0;
}

/* A decimal number: digits [. digits] or . digits, then an optional exponent
 * e|E [+|-] digits; its value must be whole and below 2^63. */
static int parse_decimal(const char *s, int64_t *out)
{
    const char *p = s;
    const size_t lint = strspn(p, "0123456789");
    p += lint;
    size_t lfrac = 0;
    const char *frac = p;
    if (*p == '.') {
        frac = ++p;
        lfrac = strspn(p, "0123456789");
        p += lfrac;
    }
    if (lint + lfrac == 0) return -1; /* ".", "", "e5" */
    int64_t e10 = 0; /* the exponent, saturated at 2^60 + 1 (far beyond any count's) */
    if (*p == 'e' || *p == 'E') {
        const int neg = p[1] == '-';
        p += 1 + (p[1] == '+' || p[1] == '-');
        const size_t le = strspn(p, "0123456789");
        if (le == 0) return -1;
        e10 = (int64_t)digits_value(p, le, (uint64_t)1 << 60);
        if (neg) e10 = -e10;
        p += le;
    }
    if (*p) return -1;
    /* the mantissa's digits without the point, d[0, n); without its leading and trailing
     * zeros, d[lo, hi) (the value m), which stands at the power of ten k: value = m * 10^k */
    const size_t n = lint + lfrac;
#define DIGIT(i) ((i) < lint ? s[i] : frac[(i) - lint])
    size_t lo = 0, hi = n;
    while (lo < n && DIGIT(lo) == '0') lo++;
    while (hi > lo && DIGIT(hi - 1) == '0') hi--;
    if (lo == hi) { /* the value 0, whatever its exponent */
        *out = 0;
        return 0;
    }
    const int64_t k = e10 - (int64_t)lfrac + (int64_t)(n - hi);
    /* m has no trailing zero: m * 10^k is whole only for k >= 0; below 2^63, 19 digits */
    if (k < 0 || (int64_t)(hi - lo) + k > 19) return -1;
    const uint64_t max = (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (size_t i = lo; i < hi; i++) v = v * 10 + (uint64_t)(DIGIT(i) - '0'); /* < 10^19 */
#undef DIGIT
    for (int64_t i = 0; i < k && v <= max; i++) v = v > max / 10 ? max + 1 : v * 10;
    if (v > max) return -1;
    *out = (int64_t)v;
    return 0;
}

int gp_parse_count(const char *s, int64_t *out)
{
    if (!s || !*s) return -1;
    if (!is_digit(s[0]) && s[0] != '.') return -1; /* no sign, no space */
    const char *caret = strchr(s, '^');
    return caret ? parse_power(s, caret, out) : parse_decimal(s, out);
}

/* suggest.c — the nearest names to a word that named nothing (gp_suggest.h). */
#include "gp_suggest.h"

#include <stdio.h>
#include <string.h>

#define GP_SUGGEST_LEN 255 /* longest string the distance is computed for */

/* Lower case of an ASCII letter, anything else as it is. */
static int fold(unsigned char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

static int min3(int a, int b, int c)
{
    const int m = a < b ? a : b;
    return m < c ? m : c;
}

int gp_edit_distance(const char *a, const char *b)
{
    const size_t la = strlen(a), lb = strlen(b);
    if (la > GP_SUGGEST_LEN || lb > GP_SUGGEST_LEN) return 1000;
    /* three rows of the (la + 1) x (lb + 1) table: two back (for a swap), one back, this */
    int rows[3][GP_SUGGEST_LEN + 1];
    int *pp = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            const int same = fold((unsigned char)a[i - 1]) == fold((unsigned char)b[j - 1]);
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1));
            if (i > 1 && j > 1 && fold((unsigned char)a[i - 1]) == fold((unsigned char)b[j - 2]) &&
                fold((unsigned char)a[i - 2]) == fold((unsigned char)b[j - 1]) &&
                pp[j - 2] + 1 < cur[j])
                cur[j] = pp[j - 2] + 1;
        }
        int *t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

/* The most edits a name of a word of len bytes may be away: 1 up to 3 bytes, 2 up to 8,
 * else 3 ("ouput" is 2 from "out", "datset" 1 from "dataset"). */
static int limit(size_t len) { return len <= 3 ? 1 : len <= 8 ? 2 : 3; }

/* The last component of an HDF5 path ("/grid/temp" -> "temp"; "temp" -> "temp"). */
static const char *last_part(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

void gp_suggest_start(gp_suggest *s, const char *word, gp_suggest_kind kind)
{
    memset(s, 0, sizeof *s);
    s->word = word ? word : "";
    s->kind = kind;
    s->best = -1;
}

/* The distance of cand from the word under s's kind, or -1 when it is too far. */
static int distance(const gp_suggest *s, const char *cand)
{
    const char *w = s->word;
    if (s->kind == GP_SUGGEST_OPTION) {
        const size_t lc = strlen(cand);
        if (lc >= 3 && strlen(w) > lc && strncmp(w, cand, lc) == 0) return 1; /* "outfile" */
        const int d = gp_edit_distance(w, cand);
        return d <= limit(strlen(w)) ? d : -1;
    }
    const char *lw = last_part(w), *lc = last_part(cand);
    if (lw[0] && strcmp(lw, lc) == 0) return 0; /* "/temp" -> "/grid/temp" */
    const int dw = gp_edit_distance(w, cand);
    const int dl = lw[0] ? gp_edit_distance(lw, lc) : 1000;
    const int okw = dw <= limit(strlen(w)) ? dw : -1, okl = dl <= limit(strlen(lw)) ? dl : -1;
    return okw < 0 ? okl : okl < 0 ? okw : okw < okl ? okw : okl;
}

void gp_suggest_add(gp_suggest *s, const char *cand)
{
    if (!cand || !cand[0] || strcmp(cand, s->word) == 0) return;
    const int d = distance(s, cand);
    if (d < 0 || (s->best >= 0 && d > s->best)) return;
    if (d < s->best || s->best < 0) { /* nearer than everything kept */
        s->best = d;
        s->count = 0;
        s->more = 0;
    }
    if (strlen(cand) >= sizeof s->names[0]) return;
    for (int k = 0; k < s->count; k++)
        if (strcmp(s->names[k], cand) == 0) return; /* offered twice */
    if (s->count < GP_SUGGEST_MAX) snprintf(s->names[s->count++], sizeof s->names[0], "%s", cand);
    else s->more++;
}

const char *gp_suggest_text(const gp_suggest *s, const char *prefix, char *buf, size_t len)
{
    if (!len) return buf;
    buf[0] = '\0';
    if (s->count == 0) return buf;
    size_t l = (size_t)snprintf(buf, len, "did you mean ");
    for (int k = 0; k < s->count && l < len; k++) {
        const char *sep = k == 0 ? "" : (k == s->count - 1 && !s->more) ? " or " : ", ";
        l += (size_t)snprintf(buf + l, len - l, "%s%s%s", sep, prefix, s->names[k]);
    }
    if (l < len) snprintf(buf + l, len - l, "%s?", s->more ? ", ..." : "");
    return buf;
}

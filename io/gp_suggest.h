/* gp_suggest.h — "did you mean ...?": the names nearest to a word that named nothing, for
 * the messages of an unknown option (src/cli.c, src/gen.c: the getopt_long table) and of a
 * missing dataset (io/h5_open.c: the file's numeric datasets). Pure (io/suggest.c); private:
 * not installed. */
#ifndef GP_SUGGEST_H
#define GP_SUGGEST_H

#include <stddef.h>

/* The names kept: at most this many, all at the best distance seen. */
#define GP_SUGGEST_MAX 3

/* How a candidate is compared with the word. */
typedef enum gp_suggest_kind {
    GP_SUGGEST_OPTION = 0, /* an option name without "--": the edit distance, or a candidate of
                              3+ letters the word starts with ("output" -> "out") */
    GP_SUGGEST_PATH        /* an HDF5 path: a candidate whose last component equals the word's
                              ("/temp" -> "/grid/temp") is nearest; else the edit distance of
                              the whole paths or of their last components, the smaller */
} gp_suggest_kind;

/* The nearest candidates so far. Fill with gp_suggest_start, gp_suggest_add per candidate,
 * then read with gp_suggest_text. */
typedef struct gp_suggest {
    const char *word;           /* what was given (not copied) */
    gp_suggest_kind kind;
    int best;                   /* the distance of the names kept; -1: none yet */
    int count;                  /* names kept (<= GP_SUGGEST_MAX) */
    int more;                   /* names at the best distance beyond those kept */
    char names[GP_SUGGEST_MAX][256]; /* in the order they were added (longer ones skipped) */
} gp_suggest;

/* The edit distance of a and b (optimal string alignment: insertions, deletions,
 * substitutions and swaps of two neighbours cost 1; letters that differ only in case cost
 * 0, so "Dataset" is 0 from "dataset" but not equal to it). Strings longer than 255 bytes
 * count as 1000 from anything. Pure. */
int gp_edit_distance(const char *a, const char *b);

/* Starts a search for names near `word` (which must outlive s). */
void gp_suggest_start(gp_suggest *s, const char *word, gp_suggest_kind kind);

/* Offers one candidate. A candidate equal to the word is ignored (it names what was given);
 * one farther than the limit (about a third of the word's length, at least 1 and at most 3
 * edits) is too. Pure. */
void gp_suggest_add(gp_suggest *s, const char *cand);

/* The suggestion as text into buf: "" when nothing was near, else "did you mean X?",
 * "did you mean X or Y?", "did you mean X, Y or Z?" (a trailing ", ..." inside the question
 * when more were as near). `prefix` goes before each name ("--" for options, "" for paths).
 * Returns buf. */
const char *gp_suggest_text(const gp_suggest *s, const char *prefix, char *buf, size_t len);

#endif /* GP_SUGGEST_H */

/* exitcode.c — the one table of exit statuses (exitcode.h). */
#include "exitcode.h"

#include <string.h>

/* One row a failure kind: its exit status and what the status means for each program
 * (NULL: the program never exits with it). The EXIT STATUS table of docs/gpuprim_mpi.md
 * starts each row with the gpuprim_mpi text (tests/cli_output.py checks it). */
static const struct exit_row {
    gp_error kind;
    int status;
    const char *mpi, *gen;
} g_rows[GP_NERRORS] = {
    {GP_ERR_NONE, 0, "success", "success"},
    {GP_ERR_INTERNAL, 1, "internal or MPI error", "MPI error or out of memory"},
    {GP_ERR_USAGE, 2, "bad command line", "bad command line"},
    {GP_ERR_OPEN, 3, "input file missing, unreadable, or not HDF5", NULL},
    {GP_ERR_DATASET, 4, "dataset missing, ambiguous, behind a dangling link, or of an "
                        "unsupported class or shape; an integer --cumsum whose prefix does not "
                        "fit int64 / uint64", NULL},
    {GP_ERR_READ, 5, "reading the data failed", NULL},
    {GP_ERR_WRITE, 6, "the output (--out, --json) could not be written, or --out exists "
                      "without --force", "the output could not be written, or exists without --force"},
    {GP_ERR_DEVICE, 7, "the requested backend is unavailable, or a device call failed", NULL},
    {GP_ERR_VERIFY, 8, "the self-check of the sorted result failed", NULL},
};

int gp_exit_status(int kind)
{
    for (int k = 0; k < GP_NERRORS; k++)
        if ((int)g_rows[k].kind == kind) return g_rows[k].status;
    return gp_exit_status(GP_ERR_INTERNAL);
}

const char *gp_exit_meaning(gp_prog p, int status)
{
    for (int k = 0; k < GP_NERRORS; k++)
        if (g_rows[k].status == status) return p == GP_PROG_GEN ? g_rows[k].gen : g_rows[k].mpi;
    return NULL;
}

/* Writes the words of text after what is on the line already (*col columns), breaking
 * before a word that would reach `width`; a new line starts with `indent` spaces. */
static void put_words(FILE *f, const char *text, int *col, int width, int indent)
{
    while (*text) {
        const size_t len = strcspn(text, " ");
        if (*col > indent && *col + 1 + (int)len >= width) {
            fprintf(f, "\n%*s", indent, "");
            *col = indent;
        } else if (*col > indent) {
            fputc(' ', f);
            (*col)++;
        }
        fprintf(f, "%.*s", (int)len, text);
        *col += (int)len;
        text += len;
        while (*text == ' ') text++;
    }
}

void gp_exit_print(FILE *f, gp_prog p, int width)
{
    if (p == GP_PROG_MPI) { /* "  S  MEANING", continuation lines under MEANING */
        for (int k = 0; k < GP_NERRORS; k++) {
            int col = fprintf(f, "  %d  ", g_rows[k].status);
            put_words(f, g_rows[k].mpi, &col, width, col);
            fputc('\n', f);
        }
        return;
    }
    char line[1024];
    size_t l = (size_t)snprintf(line, sizeof line, "Exit status:");
    for (int k = 0; k < GP_NERRORS && l < sizeof line; k++)
        if (g_rows[k].gen)
            l += (size_t)snprintf(line + l, sizeof line - l, "%s %d %s", k ? ";" : "",
                                  g_rows[k].status, g_rows[k].gen);
    int col = 0;
    put_words(f, line, &col, width, 2);
    fputs(".\n", f);
}

/* gp_getopt.c — the parsers' shared words around getopt_long (gp_getopt.h). */
#define _GNU_SOURCE /* getopt_long */
#include "gp_getopt.h"

#include <stdio.h>
#include <string.h>

#include "exitcode.h"
#include "gp_suggest.h"

void gp_opt_restart(void)
{
#if defined(__GLIBC__) || !(defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || \
                            defined(__OpenBSD__) || defined(__DragonFly__))
    optind = 0; /* glibc and musl: 0 also resets the scan inside a word (-qv) */
#else
    optreset = 1; /* the BSDs and macOS */
    optind = 1;
#endif
    opterr = 0;
}

const char *gp_opt_name(const struct option *table, int v)
{
    for (const struct option *e = table; e->name; e++)
        if (e->val == v) return e->name;
    return "?";
}

/* "unknown option --WORD (see --help)", with the options of the table nearest to the name
 * (its first len bytes, before any '=') when there are any. */
static void unknown_long(const struct option *table, const char *word, size_t len, char *msg,
                         size_t msglen)
{
    char name[256], hint[400];
    snprintf(name, sizeof name, "%.*s", (int)(len < sizeof name ? len : sizeof name - 1),
             strncmp(word, "--", 2) == 0 ? word + 2 : word);
    gp_suggest sg;
    gp_suggest_start(&sg, name, GP_SUGGEST_OPTION);
    for (const struct option *e = table; e->name && strncmp(word, "--", 2) == 0; e++)
        gp_suggest_add(&sg, e->name);
    if (gp_suggest_text(&sg, "--", hint, sizeof hint)[0])
        snprintf(msg, msglen, "unknown option %s: %s (see --help)", word, hint);
    else
        snprintf(msg, msglen, "unknown option %s (see --help)", word);
}

void gp_opt_error(const struct option *table, int c, int argc, char **argv, char *msg,
                  size_t msglen)
{
    const char *word = optind >= 1 && optind <= argc ? argv[optind - 1] : "";
    /* a letter of the table (-h, -q, -v) is a flag: "--quiet=1" comes back with it */
    const int letter = optopt > 0 && optopt < 256 && strcmp(gp_opt_name(table, optopt), "?");
    if (c == ':') { /* only the long options take values */
        snprintf(msg, msglen, "option --%s needs a value", gp_opt_name(table, optopt));
    } else if (optopt >= 256 || (letter && strncmp(word, "--", 2) == 0)) {
        snprintf(msg, msglen, "option --%s takes no value", gp_opt_name(table, optopt));
    } else if (optopt != 0) { /* a letter of a word like -x or -qx */
        snprintf(msg, msglen, "unknown option -%c (see --help)", optopt);
    } else { /* --name[=value]: no option starts so, or more than one does */
        const size_t len = strcspn(word + 2, "=");
        char list[400] = "";
        size_t l = 0;
        int count = 0;
        for (const struct option *e = table; e->name && strncmp(word, "--", 2) == 0; e++)
            if (strncmp(e->name, word + 2, len) == 0 && l < sizeof list) {
                l += (size_t)snprintf(list + l, sizeof list - l, "%s--%s", count ? ", " : "",
                                      e->name);
                count++;
            }
        if (count > 1)
            snprintf(msg, msglen, "ambiguous option %.*s (could be %s)", (int)(len + 2), word,
                     list);
        else
            unknown_long(table, word, len, msg, msglen);
    }
}

int gp_opt_rest(int argc, char **argv, char *msg, size_t msglen)
{
    if (optind < argc || (optind > 1 && optind <= argc && strcmp(argv[optind - 1], "--") == 0)) {
        snprintf(msg, msglen, "unknown option -- (see --help)");
        return GP_EXIT_USAGE;
    }
    return 0;
}

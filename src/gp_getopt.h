/* gp_getopt.h — what gpuprim_mpi's and gpuprim_gen's option parsers share around
 * getopt_long: a fresh scan, an option's long name, and the one-line message of each word
 * getopt_long refuses. */
#ifndef GP_GETOPT_H
#define GP_GETOPT_H

#include <getopt.h>
#include <stddef.h>

/* getopt_long's state back to the start of an argument list, printing nothing: a parser may
 * run more than once in a process (the fuzzer; every call must see the words afresh). */
void gp_opt_restart(void);

/* The long name of option value v in table (ended by a NULL name); "?" for none. */
const char *gp_opt_name(const struct option *table, int v);

/* The one-line message into msg for getopt_long's '?' or ':' (c) at the word
 * argv[optind - 1], over the options of table: "option --NAME needs a value", "option
 * --NAME takes no value", "unknown option -X (see --help)", "ambiguous option --PRE (could
 * be --A, --B)", or "unknown option --WORD (see --help)" with the nearest names of the table
 * ("unknown option --datset: did you mean --dataset? (see --help)"). */
void gp_opt_error(const struct option *table, int c, int argc, char **argv, char *msg,
                  size_t msglen);

/* After getopt_long's last option: GP_EXIT_USAGE with "unknown option -- (see --help)" in msg
 * when it stopped at "--" (neither program has a use for it: a file named -q is ./-q), else
 * 0. */
int gp_opt_rest(int argc, char **argv, char *msg, size_t msglen);

#endif /* GP_GETOPT_H */

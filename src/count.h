/* count.h — element counts on the command line (gpuprim_mpi --n, gpuprim_gen --n): one
 * parser, one rule (count.c). */
#ifndef GP_COUNT_H
#define GP_COUNT_H

#include <stdint.h>

/* Parses a count: a whole number from 0 to 2^63 - 1, written
 *   - in decimal digits: 1000000;
 *   - as B^E, B and E in decimal digits: 2^24, 10^6 (0^0 is 1);
 *   - as a decimal number with a fraction or an exponent whose value is whole: 1e6, 1E6,
 *     2.5e6, 1.5e3, 1e+6, 1.0, .5e1, 1200e-2 (exact, never rounded: 1.5 and 1e-3 are not
 *     counts).
 * Nothing else: no sign, no spaces, no hexadecimal, no other characters. Each program
 * checks its own range afterwards. Returns 0 with *out set, or -1 (*out unchanged). Pure. */
int gp_parse_count(const char *s, int64_t *out);

#endif /* GP_COUNT_H */

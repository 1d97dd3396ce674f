/* cpu_merge_k.h — the one-pass merge of a few sorted runs on the host's threads
 * (kernels/cpu_merge_k.c), the last pass of gp_cpu_merge_runs (cpu_merge_mt.h). Internal to
 * the library (cpu_merge_mt.c and the tests include it).
 *
 * The order is gp_cpu_merge_runs's: by key, or with values and `stable` by (key, value);
 * equal elements by run, then by position in their run. That is the order the pairwise
 * passes give (each merges two adjacent runs with ties to the left one, so the equal
 * elements of a merged run stay in run order), so one pass gives the same bits. */
#ifndef GP_CPU_MERGE_K_H
#define GP_CPU_MERGE_K_H

#include <stdint.h>

#define GP_MERGE_K_MAX 16 /* the most runs the one-pass merge takes */

/* (dk, dv)[0, n) = the merge of the k = ceil(n / run) runs of (sk, sv)[0, n) (run elements
 * each, the last may be shorter; each ascending in the order above), 1 <= k <=
 * GP_MERGE_K_MAX: `w`-byte keys (4 or 8); values move only with hv (sv, dv may be NULL
 * without); stable: by (key, value). The output is cut into np >= 1 equal parts run on the
 * host's threads (gp_host_parallel); each part finds the start of its share in every run by
 * co-ranking (a bisection of the key, then of the value, with per-run windows), cuts its
 * output into four segments the same way, and merges them with four loser trees that
 * advance together. The result does not depend on np. Arguments valid (the
 * caller checks): n > 0, run >= 1, outputs apart from the inputs. */
void gp_cpu_merge_k(int w, int hv, int stable, const unsigned char *sk, const uint64_t *sv,
                    int64_t n, int64_t run, int np, unsigned char *dk, uint64_t *dv);

#endif /* GP_CPU_MERGE_K_H */

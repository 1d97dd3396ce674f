/* shard.h — how N elements are cut into the shards of P ranks. Knows no file, no device
 * and no MPI call: io/ reads and writes these ranges, ranks/ exchanges them, the programs
 * split function-mode points by them. */
#ifndef GP_SHARD_H
#define GP_SHARD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Shard of rank r of P over n elements: contiguous, sizes differ by at most one, the first
 * n % P ranks get the larger size. A rank outside [0, P) gets an empty shard at the end
 * (n <= 0 or P <= 0: an empty shard at 0). Not collective. */
void gp_shard_range(int64_t n, int P, int r, int64_t *off, int64_t *cnt);

#ifdef __cplusplus
}
#endif
#endif /* GP_SHARD_H */

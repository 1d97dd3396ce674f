/* shard.c — the shard ranges of shard.h. */
#include "gpuprim/shard.h"

void gp_shard_range(int64_t n, int P, int r, int64_t *off, int64_t *cnt)
{
    if (n <= 0 || P <= 0 || r < 0 || r >= P) {
        *off = n > 0 && P > 0 && r >= P ? n : 0;
        *cnt = 0;
        return;
    }
    const int64_t q = n / P, rem = n % P;
    *cnt = q + (r < rem ? 1 : 0);
    *off = (int64_t)r * q + (r < rem ? r : rem);
}

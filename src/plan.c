/* plan.c — the file job's memory figures (plan.h): the device memory a shard needs, the
 * share of the free memory a rank may use, and the GiB of the plan's lines. Pure; the plan
 * phase that uses them is ph_plan.c, the out-of-core plan ooc_plan.c. */
#define _POSIX_C_SOURCE 200809L
#include "plan.h"

#include <stdint.h>
#include <stdio.h>

#define GP_MEM_MARGIN_MAX ((uint64_t)512 << 20) /* the margin is 1/8 of free, at most this */

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return (a != 0 && b > UINT64_MAX / a) ? UINT64_MAX : a * b;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

uint64_t gp_job_mem_need(int64_t m, int64_t cnt, size_t sz, int P, int sorting, int pairs,
                         int xdata)
{
    const uint64_t um = m > 0 ? (uint64_t)m : 0, uc = cnt > 0 ? (uint64_t)cnt : 0;
    const uint64_t slot = (uint64_t)sz + (pairs && sorting ? 8u : 0u);
    /* device: the shard, and for the exchange its receive buffer (exchange.h); the file's
     * data go through two small host pieces (CUDA) or straight to and from the backend's
     * memory (host memory), so no buffer of the shard's size is on the host */
    const int exchanging = sorting && P > 1;
    const uint64_t ndev = exchanging ? 2 : 1;
    const uint64_t xb = xdata ? mul_sat(uc, 8) : 0;
    return add_sat(mul_sat(mul_sat(um, slot), ndev), xb);
}

uint64_t gp_mem_usable(size_t free_bytes, int share)
{
    const uint64_t avail = (uint64_t)free_bytes / (uint64_t)(share > 0 ? share : 1);
    const uint64_t margin = avail / 8 < GP_MEM_MARGIN_MAX ? avail / 8 : GP_MEM_MARGIN_MAX;
    return avail - margin;
}

const char *gp_gib_text(char *buf, size_t len, uint64_t bytes)
{
    const double g = (double)bytes / 1073741824.0;
    snprintf(buf, len, g >= 10.0 ? "%.1f" : "%.3g", g);
    return buf;
}

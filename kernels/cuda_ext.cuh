/* cuda_ext.cuh — the extern "C" entry points of cuda_ext.cu (issue 7: descending keys, key +
 * value sort and merge-split, exact sums) that the backend table in cuda_backend.cu points
 * to. Not part of the public contract: host code sees gp_kernels.h and gp_ext.h.
 * Each entry has exactly the meaning of the gp_backend entry of the same name (gp_ext.h);
 * pointers are device pointers of the CUDA backend except exact_sum's acc (host) and
 * merge_split_pairs' nout (host); each returns after its device work has finished, GP_OK
 * or GP_EINVAL / GP_ENOMEM / GP_EDEVICE with last_error() set.
 */
#ifndef GP_CUDA_EXT_CUH
#define GP_CUDA_EXT_CUH

#include "cuda_internal.cuh"
#include "gp_ext.h"

extern "C" {
int gp_cuda_to_keys_desc(gp_dtype t, void *buf, int64_t n);
int gp_cuda_from_keys_desc(gp_dtype t, void *buf, int64_t n);
int gp_cuda_sort_pairs(int width, void *keys, uint64_t *vals, int64_t n, int stable);
int gp_cuda_merge_split_pairs(int width, const void *lo_keys, const uint64_t *lo_vals,
                              int64_t nlo, const void *hi_keys, const uint64_t *hi_vals,
                              int64_t nhi, int64_t m, int keep_upper, int stable,
                              void *out_keys, uint64_t *out_vals, int64_t *nout);
int gp_cuda_exact_sum(gp_dtype t, const void *y, int64_t n, unsigned what,
                      struct gp_superacc *acc);
int gp_cuda_merge_path(int width, const void *lo_keys, const uint64_t *lo_vals, int64_t nlo,
                       const void *hi_keys, const uint64_t *hi_vals, int64_t nhi, int64_t t,
                       int stable, int64_t *split);
}

#endif /* GP_CUDA_EXT_CUH */

/* cpu_sort.h — the CPU backend's radix sort (cpu_sort.c) and the checked entries behind its
 * one sort, merge-split and key map (gpuprim/kernels.h; cpu_sort.c, cpu_merge_mt.c,
 * cpu_keys.c).
 * Internal to kernels/.
 *
 * Threading: like the rest of the CPU backend, one calling thread per process.
 */
#ifndef GP_CPU_SORT_H
#define GP_CPU_SORT_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprim/kernels.h"
#include "cpu_twins.h"

/* Sorts n pairs (keys[i], vals[i]) — or n keys when vals is NULL — ascending in place.
 * width: 4 (uint32_t keys) or 8 (uint64_t); vals: NULL or n uint64_t values (not
 * overlapping keys). With vals and stable != 0 the order is that of (key, value); else
 * that of the key alone, pairs of equal keys keeping their input order (the sort is
 * stable). Arguments are the caller's to check (n >= 0, pointers valid for n > 0).
 * Returns 0 (GP_OK) or GP_ENOMEM (the scratch buffer). cpu_sort.c describes the
 * algorithm. */
int gp_cpu_radix_sort(int width, void *keys, uint64_t *vals, int64_t n, int stable);

/* The same sort with the caller's spare arrays as its scratch (spare_keys: room for n keys;
 * spare_vals: for n values when vals is given; neither overlapping keys, vals or each
 * other), so that nothing of the data's size is allocated. in_spare NULL: the result is in
 * (keys, vals) on return. Else *in_spare says where the last pass left it: 0 in (keys,
 * vals), 1 in (spare_keys, spare_vals) (then keys and vals hold scratch), which saves the
 * copy back after an odd number of passes. spare_keys NULL: as gp_cpu_radix_sort. */
int gp_cpu_radix_sort_spare(int width, void *keys, uint64_t *vals, void *spare_keys,
                            uint64_t *spare_vals, int64_t n, int stable, int *in_spare);

/* The checked entries behind gp_cpu_keys, gp_cpu_sort and gp_cpu_merge_split (gpuprim/kernels.h)
 * and their keys-only / pairs / ascending / descending wrappers: the same, with failures
 * recorded under the name `who` (the public function the caller was called as). */
int gp_cpu_keys_as(const char *who, gp_dtype t, int descending, int inverse, void *buf,
                   int64_t n);
int gp_cpu_sort_as(const char *who, int width, void *keys, uint64_t *vals, int64_t n,
                   int stable);
int gp_cpu_sort_spare_as(const char *who, int width, void *keys, uint64_t *vals,
                         void *spare_keys, uint64_t *spare_vals, int64_t n, int stable,
                         int *in_spare);
int gp_cpu_merge_split_as(const char *who, int width, const void *lo_keys,
                          const uint64_t *lo_vals, int64_t nlo, const void *hi_keys,
                          const uint64_t *hi_vals, int64_t nhi, int64_t m, int keep_upper,
                          int stable, void *out_keys, uint64_t *out_vals, int64_t *nout);

#endif

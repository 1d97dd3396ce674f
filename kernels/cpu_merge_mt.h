/* cpu_merge_mt.h — merges on the host's threads (kernels/cpu_merge_mt.c): one merge of two
 * runs cut over threads at merge-path splits (the data plane of the CPU merge-split, which
 * cpu_merge_mt.c also holds), and the merge of many sorted runs into one sequence (the
 * out-of-core sort's merge of its device runs), the branch-free 2-way merges of cpu_merge.h
 * and a last one-pass k-way merge (cpu_merge_k.h). Internal to the library (the program's
 * out-of-core path and the tests include it).
 *
 * Orders, as the merge-split's (gpuprim/kernels.h): by key with ties to the lower run, or
 * with values and `stable` by (key, value) with exact ties to the lower run. The results
 * are the same bits whatever the thread count (each thread writes its own part of the one
 * merged sequence). */
#ifndef GP_CPU_MERGE_MT_H
#define GP_CPU_MERGE_MT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* gp_cpu_merge_range (cpu_merge.h) with its output cut into up to gp_host_threads() parts of
 * at least 2^16 elements, each merged by one thread from its own merge-path split (host.h). */
void gp_cpu_merge_range_mt(int w, int hv, int stable, const unsigned char *lk,
                           const uint64_t *lov, int64_t nlo, const unsigned char *hk,
                           const uint64_t *hiv, int64_t nhi, int64_t r0, int64_t cnt,
                           unsigned char *ok, uint64_t *ov);

/* Merges the sorted runs of (keys, vals) — n elements of `width`-byte keys (4 or 8), in runs
 * of `run` elements (the last may be shorter), each ascending by key (by (key, value) when
 * vals and stable) — into one ascending sequence; ties between runs go to the earlier one,
 * so runs in input order, each sorted stably, merge into a stable order. Passes between
 * (keys, vals) and (tmp_keys, tmp_vals) (room for n each, apart from the inputs), each cut
 * over the host's threads: two runs, one pairwise pass; 3 to GP_MERGE_K_MAX (16), one pass
 * of gp_cpu_merge_k (cpu_merge_k.h); more, pairwise passes until 16 or fewer are left, then
 * that one pass. *in_tmp = 1 when the result lies in tmp, 0 when in keys (one run: nothing
 * moves; either, from two runs on, by the parity of the passes). vals and tmp_vals NULL:
 * keys only.
 * Returns GP_OK, or GP_EINVAL (width, n < 0, run < 1, NULL pointers with n > 0, values on
 * one side only) with the CPU backend's last_error() set. */
int gp_cpu_merge_runs(int width, void *keys, uint64_t *vals, void *tmp_keys, uint64_t *tmp_vals,
                      int64_t n, int64_t run, int stable, int *in_tmp);

#ifdef __cplusplus
}
#endif
#endif /* GP_CPU_MERGE_MT_H */

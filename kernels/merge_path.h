/* merge_path.h — the merge-path search (Green, Odeh and Birk, "GPU Merge Path", 2012): the
 * one definition behind every place that splits the merge of two sorted runs:
 *   - the CPU merge-splits (kernels/cpu_merge.c's merge, cut over the host's threads in
 *     cpu_merge_mt.c), which start their forward merge at the split of their first output;
 *   - the GPU merge kernel (keys only or with values), each thread's start (kernels/cuda_sort.cu);
 *   - the backends' merge_path entry (both backends), which the rank exchange calls on its
 *     own run and a partner's run mapped into its memory (ranks/transport_shared.c);
 *   - the rank exchange's probe search over MPI (ranks/transport_mpi.c), where each evaluation of
 *     the order exchanges one element with the partner rank.
 * Internal to the library (not installed). Read by C11 and by nvcc (host and device code).
 *
 * GP_MERGE_PATH(OUT, NLO, NHI, T, LO_FIRST) sets OUT (an integer lvalue, 64 bits) to the number
 * of elements of run lo among the first T outputs of the merge of lo (NLO elements) and hi
 * (NHI elements), 0 <= T <= NLO + NHI; hi gives the other T - OUT. LO_FIRST(i, j) — a
 * function, a lambda or the name of a function-like macro — is nonzero when lo's element i
 * goes before hi's element j in the merge; a merge whose ties keep lo first passes
 * "lo[i] <= hi[j]" (by key; with (key, value) order: key_i < key_j, or equal keys and
 * value_i <= value_j). It is called only with 0 <= i < NLO and 0 <= j < NHI, i + j = T - 1,
 * about log2(min(T, NLO, NHI) + 1) times, in an order that depends only on the answers, so
 * two ranks evaluating the same order reach the same OUT through the same calls.
 *
 * The result is the smallest i in [max(0, T - NHI), min(T, NLO)] with i = min(T, NLO) or
 * !LO_FIRST(i, T - 1 - i): then lo[i - 1] goes before hi[T - i] and hi[T - i - 1] before
 * lo[i] (where they exist), so merged[0, T) is the merge of lo[0, OUT) and hi[0, T - OUT).
 * NLO, NHI and T are evaluated once each.
 */
#ifndef GP_MERGE_PATH_H
#define GP_MERGE_PATH_H

#define GP_MERGE_PATH(OUT, NLO, NHI, T, LO_FIRST)                                            \
    do {                                                                                     \
        const long long gp_mp_t_ = (T), gp_mp_nlo_ = (NLO), gp_mp_nhi_ = (NHI);              \
        long long gp_mp_a_ = gp_mp_t_ > gp_mp_nhi_ ? gp_mp_t_ - gp_mp_nhi_ : 0;              \
        long long gp_mp_b_ = gp_mp_t_ < gp_mp_nlo_ ? gp_mp_t_ : gp_mp_nlo_;                  \
        while (gp_mp_a_ < gp_mp_b_) {                                                        \
            const long long gp_mp_i_ = gp_mp_a_ + ((gp_mp_b_ - gp_mp_a_) >> 1);              \
            if (LO_FIRST(gp_mp_i_, gp_mp_t_ - 1 - gp_mp_i_)) gp_mp_a_ = gp_mp_i_ + 1;        \
            else gp_mp_b_ = gp_mp_i_;                                                        \
        }                                                                                    \
        (OUT) = gp_mp_a_;                                                                    \
    } while (0)

#include <stdint.h>
#include <string.h>

/* Key i of an array of w-byte keys (w = 4: uint32_t, else uint64_t) at any alignment, for
 * the host searches and merges (the CPU backend's kld, the mpi transport's streamed step). */
static inline uint64_t gp_key_load(const void *keys, int w, int64_t i)
{
    if (w == 4) {
        uint32_t x;
        memcpy(&x, (const char *)keys + (size_t)i * 4, 4);
        return x;
    }
    uint64_t x;
    memcpy(&x, (const char *)keys + (size_t)i * 8, 8);
    return x;
}

/* The order of the merge-splits, for the host searches (the CPU twin of merge_path and the
 * exchange's probes): lo's element (key a, value va) goes before hi's (key b, value vb) —
 * by key with ties lo first, or (stable != 0) by (key, value) with exact ties lo first. The
 * GPU kernels have it as lo_first (cuda_sort.cu). */
static inline int gp_lo_first(uint64_t a, uint64_t va, uint64_t b, uint64_t vb, int stable)
{
    return a < b || (a == b && (!stable || va <= vb));
}

#endif /* GP_MERGE_PATH_H */

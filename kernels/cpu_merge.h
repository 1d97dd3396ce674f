/* cpu_merge.h — the loops of the CPU's one-thread merge (gp_cpu_merge_range in
 * kernels/cpu_merge.c, for keys alone and for key + value pairs), which the CPU twins'
 * merge-split and the merges on the host's threads call (kernels/cpu_merge_mt.c), and its
 * declaration. Internal.
 *
 * A merge-split writes merged[r0, r0 + cnt) of two ascending runs lo and hi. The output is
 * cut into four segments of equal length at merge-path splits (merge_cuts of cpu_merge.c: segment s
 * merges lo[I[s], I[s+1]) with hi[J[s], J[s+1]) into out[I[s] + J[s] - r0 ...)), and the four
 * segments advance together, one step of each per loop iteration: four independent chains
 * of loads and compares, where a single two-finger merge waits on every step's compare
 * before its next load. Each step is branch-free (the element taken is a select, compiled
 * to conditional moves, so random data make no branch to mispredict), and inside a stretch
 * of R = min over the segments of min(lo left, hi left) steps no input can run out, so the
 * loop has no bounds tests. When a stretch gets short (< GP_MERGE_MIN_RUN) the segments are
 * finished one at a time (GP_MERGE_RUN1), and what is left when one input of a segment has
 * run out is copied (TAIL).
 *
 * STEP(a, b): writes out[a + b - r0] = the element that goes first of lo[a] and hi[b] (ties:
 * lo) and advances a or b. TAIL(a, b, ie, je): copies the rest of the segment, lo[a, ie) or
 * hi[b, je) (one of them is empty), to out[a + b - r0]. Both are macros of the including file
 * that use its lo, hi, out and r0.
 */
#ifndef GP_CPU_MERGE_H
#define GP_CPU_MERGE_H

#include <stdint.h>

#define GP_MERGE_MIN_RUN 16 /* shortest stretch the four segments run together */

/* The single-chain merge of lo[A, IE) and hi[B, JE) (A and B are advanced). */
#define GP_MERGE_RUN1(A, B, IE, JE, STEP, TAIL)                                              \
    do {                                                                                     \
        for (;;) {                                                                           \
            const int64_t run_ = (IE) - (A) < (JE) - (B) ? (IE) - (A) : (JE) - (B);          \
            if (run_ <= 0) break;                                                            \
            for (int64_t k_ = 0; k_ < run_; k_++) STEP(A, B);                                \
        }                                                                                    \
        TAIL(A, B, IE, JE);                                                                  \
    } while (0)

/* The shortest stretch left in segment s of the cuts I / J with fingers A, B. */
#define GP_MERGE_LEFT(I, J, s, A, B)                                                         \
    ((I)[(s) + 1] - (A) < (J)[(s) + 1] - (B) ? (I)[(s) + 1] - (A) : (J)[(s) + 1] - (B))

/* The four segments of the cuts I[0..4], J[0..4], together, then one by one. */
#define GP_MERGE_RUN4(I, J, STEP, TAIL)                                                      \
    do {                                                                                     \
        int64_t a0_ = (I)[0], a1_ = (I)[1], a2_ = (I)[2], a3_ = (I)[3];                      \
        int64_t b0_ = (J)[0], b1_ = (J)[1], b2_ = (J)[2], b3_ = (J)[3];                      \
        for (;;) {                                                                           \
            int64_t run_ = GP_MERGE_LEFT(I, J, 0, a0_, b0_), r_;                             \
            if ((r_ = GP_MERGE_LEFT(I, J, 1, a1_, b1_)) < run_) run_ = r_;                   \
            if ((r_ = GP_MERGE_LEFT(I, J, 2, a2_, b2_)) < run_) run_ = r_;                   \
            if ((r_ = GP_MERGE_LEFT(I, J, 3, a3_, b3_)) < run_) run_ = r_;                   \
            if (run_ < GP_MERGE_MIN_RUN) break;                                              \
            for (int64_t k_ = 0; k_ < run_; k_++) {                                          \
                STEP(a0_, b0_);                                                              \
                STEP(a1_, b1_);                                                              \
                STEP(a2_, b2_);                                                              \
                STEP(a3_, b3_);                                                              \
            }                                                                                \
        }                                                                                    \
        GP_MERGE_RUN1(a0_, b0_, (I)[1], (J)[1], STEP, TAIL);                                 \
        GP_MERGE_RUN1(a1_, b1_, (I)[2], (J)[2], STEP, TAIL);                                 \
        GP_MERGE_RUN1(a2_, b2_, (I)[3], (J)[3], STEP, TAIL);                                 \
        GP_MERGE_RUN1(a3_, b3_, (I)[4], (J)[4], STEP, TAIL);                                 \
    } while (0)

/* (ok, ov)[0, cnt) = merged[r0, r0 + cnt) of lo (lk, lov: nlo) and hi (hk, hiv: nhi) with
 * `w`-byte keys (4 or 8); the values move only with hv (lov, hiv, ov may be NULL without);
 * stable: by (key, value). Arguments valid (the caller checks): 0 <= r0, r0 + cnt <=
 * nlo + nhi, outputs apart from inputs. One thread (kernels/cpu_merge.c). */
void gp_cpu_merge_range(int w, int hv, int stable, const unsigned char *lk, const uint64_t *lov,
                        int64_t nlo, const unsigned char *hk, const uint64_t *hiv, int64_t nhi,
                        int64_t r0, int64_t cnt, unsigned char *ok, uint64_t *ov);

#endif /* GP_CPU_MERGE_H */

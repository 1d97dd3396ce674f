/* psum.h — the deterministic pairwise sum of chunk sums, as a binary counter: the order in
 * which the CPU backend adds its chunks of GP_CPU_CHUNK terms (cpu_stats_ref.c's file
 * comment), and in which the function job adds its slices of 2^k chunks (src/fnslice.c),
 * so that the slices' total is the same bits as one call over the whole range. Private:
 * not installed. */
#ifndef GP_PSUM_H
#define GP_PSUM_H

/* Terms per chunk of the CPU backend's sums. */
#define GP_CPU_CHUNK 4096

/* A binary-counter stack of partial sums; level[k] = log2 of the chunks covered by v[k].
 * 64 levels cover 2^64 chunks, more than any int64_t count. */
typedef struct psum {
    double v[64];
    int level[64];
    int top;
} psum;

static inline void psum_init(psum *p) { p->top = 0; }

/* Appends the sum of the next piece of 2^lvl chunks: whenever the two newest partials each
 * cover as many chunks they become one (older + newer). The pieces pushed must come in
 * sizes that never grow (full slices of 2^K chunks; the chunks of one call are 2^0). */
static inline void psum_push_level(psum *p, double x, int lvl)
{
    while (p->top > 0 && p->level[p->top - 1] == lvl) {
        x = p->v[--p->top] + x; /* older + newer */
        lvl++;
    }
    p->v[p->top] = x;
    p->level[p->top] = lvl;
    p->top++;
}

/* Appends the sum of the next chunk. */
static inline void psum_push(psum *p, double x) { psum_push_level(p, x, 0); }

/* The total: remaining partials added from the newest to the oldest; +0.0 when empty. */
static inline double psum_total(const psum *p)
{
    if (p->top == 0) return 0.0;
    double s = p->v[p->top - 1];
    for (int k = p->top - 2; k >= 0; k--) s = p->v[k] + s;
    return s;
}

#endif /* GP_PSUM_H */

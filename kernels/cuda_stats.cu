/* cuda_stats.cu — the CUDA backend's statistics: gp_backend.stats (count, NaNs, sum and
 * sum of squares, min / max key, hash, ends, descents) of a device array in one launch.
 *
 * The one-launch reduction and its determinism: cuda_reduce.cuh. Here: the partial records'
 * reduction operators, each thread's accumulation (16-byte vector loads, U in flight; float
 * data in float64, integers exactly; a branch-free path for vectors without NaN), k_stats,
 * and the entry point.
 */
#include "cuda_reduce.cuh"
#include "tuning.h"

#include <string.h>

namespace {

using namespace red;

constexpr int RED_UNROLL = 4; /* 16-byte loads in flight per thread */

/* ---- the partial records' reduction operators (cuda_blockreduce.cuh) ------------------ */

/* StatPart: counts and sums add, min / max of the keys. */
struct StatOp {
    typedef StatPart T;
    __device__ __forceinline__ static StatPart identity()
    {
        StatPart p;
        p.nan = 0;
        p.sum = 0.0;
        p.sumsq = 0.0;
        p.mn = ~0ull;
        p.mx = 0ull;
        p.hash = 0ull;
        p.desc = 0;
        return p;
    }
    __device__ __forceinline__ static StatPart combine(const StatPart &a, const StatPart &b)
    {
        StatPart r;
        r.nan = a.nan + b.nan;
        r.sum = a.sum + b.sum;
        r.sumsq = a.sumsq + b.sumsq;
        r.mn = a.mn < b.mn ? a.mn : b.mn;
        r.mx = a.mx > b.mx ? a.mx : b.mx;
        r.hash = a.hash + b.hash;
        r.desc = a.desc + b.desc;
        return r;
    }
    __device__ __forceinline__ static StatPart shfl_down(const StatPart &v, int off)
    {
        StatPart r;
        r.nan = __shfl_down_sync(blk::FULL_MASK, v.nan, off);
        r.sum = __shfl_down_sync(blk::FULL_MASK, v.sum, off);
        r.sumsq = __shfl_down_sync(blk::FULL_MASK, v.sumsq, off);
        r.mn = __shfl_down_sync(blk::FULL_MASK, v.mn, off);
        r.mx = __shfl_down_sync(blk::FULL_MASK, v.mx, off);
        r.hash = __shfl_down_sync(blk::FULL_MASK, v.hash, off);
        r.desc = __shfl_down_sync(blk::FULL_MASK, v.desc, off);
        return r;
    }
};

/* StatPartI: StatOp on its StatPart, and the 128-bit sum with its carry. */
struct StatIOp {
    typedef StatPartI T;
    __device__ __forceinline__ static StatPartI identity()
    {
        StatPartI p;
        p.s = StatOp::identity();
        p.ilo = 0ull;
        p.ihi = 0;
        return p;
    }
    __device__ __forceinline__ static StatPartI combine(const StatPartI &a, const StatPartI &b)
    {
        StatPartI r;
        r.s = StatOp::combine(a.s, b.s);
        r.ilo = a.ilo + b.ilo;
        r.ihi = (long long)((unsigned long long)a.ihi + (unsigned long long)b.ihi +
                            (r.ilo < a.ilo ? 1ull : 0ull));
        return r;
    }
    __device__ __forceinline__ static StatPartI shfl_down(const StatPartI &v, int off)
    {
        StatPartI r;
        r.s = StatOp::shfl_down(v.s, off);
        r.ilo = __shfl_down_sync(blk::FULL_MASK, v.ilo, off);
        r.ihi = __shfl_down_sync(blk::FULL_MASK, v.ihi, off);
        return r;
    }
};

/* ---- stats: per-thread accumulation --------------------------------------------------- */

/* Key type of the min/max accumulators: 32 bits for 4-byte elements (zero-extended into the
 * 64-bit key of gp_key_of at the end), 64 bits otherwise. */
template <typename T> struct KeyOf { typedef unsigned long long type; };
template <> struct KeyOf<float> { typedef uint32_t type; };
template <> struct KeyOf<int32_t> { typedef uint32_t type; };
template <> struct KeyOf<uint32_t> { typedef uint32_t type; };

/* Key of an element known not to be a NaN (gp_key_of without its NaN case). */
__device__ __forceinline__ uint32_t key_nn(float v)
{
    const uint32_t u = __float_as_uint(v);
    return u ^ ((uint32_t)((int32_t)u >> 31) | 0x80000000u);
}
__device__ __forceinline__ unsigned long long key_nn(double v)
{
    const unsigned long long u = (unsigned long long)__double_as_longlong(v);
    return u ^ ((unsigned long long)((long long)u >> 63) | 0x8000000000000000ull);
}
template <typename T> __device__ __forceinline__ typename KeyOf<T>::type key_nn(T v)
{
    return (typename KeyOf<T>::type)gpc_key_of(v);
}

/* Resident blocks per SM that k_stats of integer data asks the compiler for: with 5, ptxas
 * keeps it to 48 registers (sm_90: no spills with 2 or 4 loads in flight), so 5 blocks of
 * 256 threads fit an SM as they did when integers were summed in float64; unbounded, the
 * 128-bit partial records take it to 60 registers and 4 blocks. 0: no bound (float data). */
constexpr int RED_MIN_BLOCKS_INT = 5;

/* The per-thread sum of T and the reduction operator of its statistics' partial record:
 * float types add in float64 into a StatPart (StatOp); integer types exactly into a
 * StatPartI (StatIOp), per thread in a 64-bit integer (32-bit types: fewer than 2^32
 * elements per thread, as the 32-bit counters below assume, cannot overflow it) or a
 * 128-bit one (64-bit types). min_blocks: the kernel's launch bound. */
template <typename T> struct SumOf {
    typedef double type;
    typedef StatOp op;
    static constexpr int min_blocks = 0;
    static __device__ __forceinline__ double term(T, double d) { return d; }
};
template <> struct SumOf<int32_t> {
    typedef long long type;
    typedef StatIOp op;
    static constexpr int min_blocks = RED_MIN_BLOCKS_INT;
    static __device__ __forceinline__ long long term(int32_t v, double) { return v; }
};
template <> struct SumOf<uint32_t> {
    typedef unsigned long long type;
    typedef StatIOp op;
    static constexpr int min_blocks = RED_MIN_BLOCKS_INT;
    static __device__ __forceinline__ unsigned long long term(uint32_t v, double) { return v; }
};
template <> struct SumOf<int64_t> {
    typedef __int128 type;
    typedef StatIOp op;
    static constexpr int min_blocks = RED_MIN_BLOCKS_INT;
    static __device__ __forceinline__ __int128 term(int64_t v, double) { return v; }
};
template <> struct SumOf<uint64_t> {
    typedef __int128 type;
    typedef StatIOp op;
    static constexpr int min_blocks = RED_MIN_BLOCKS_INT;
    static __device__ __forceinline__ __int128 term(uint64_t v, double) { return (__int128)v; }
};

/* One thread's partial statistics (counts fit 32 bits: a thread sees at most n / 256
 * elements of a device-resident array). K: the key type, S: the sum's (SumOf). */
template <typename K, typename S> struct Acc {
    S sum;
    double sumsq;
    K mn, mx;
    unsigned long long hash;
    unsigned nan, desc;
};

template <typename K, typename S> __device__ __forceinline__ void acc_init(Acc<K, S> &a)
{
    a.sum = 0;
    a.sumsq = 0.0;
    a.mn = (K)~(K)0;
    a.mx = 0;
    a.hash = 0ull;
    a.nan = 0u;
    a.desc = 0u;
}

/* The thread's record as a StatPart with the given sum. A 32-bit min of all ones (the
 * identity, or a real element with key 0xFFFFFFFF) becomes ~0: the host maps ~0 back to
 * 0xFFFFFFFF when some element was not a NaN (gp_cuda_stats). */
template <typename K, typename S>
__device__ __forceinline__ StatPart base_part(const Acc<K, S> &a, double sum)
{
    StatPart p;
    p.nan = a.nan;
    p.sum = sum;
    p.sumsq = a.sumsq;
    p.mn = (a.mn == (K)~(K)0) ? ~0ull : (unsigned long long)a.mn;
    p.mx = a.mx;
    p.hash = a.hash;
    p.desc = a.desc;
    return p;
}

/* The thread's record: float types a StatPart (the float64 sum), integer types a
 * StatPartI (the exact sum in two 64-bit words). */
template <typename K> __device__ __forceinline__ StatPart acc_part(const Acc<K, double> &a)
{
    return base_part(a, a.sum);
}
template <typename K, typename S> __device__ __forceinline__ StatPartI acc_part(const Acc<K, S> &a)
{
    StatPartI p;
    p.s = base_part(a, 0.0);
    const __int128 v = (__int128)a.sum;
    p.ilo = (unsigned long long)v;
    p.ihi = (long long)(v >> 64);
    return p;
}

/* Accumulator of a thread for element type T. */
template <typename T> using AccOf = Acc<typename KeyOf<T>::type, typename SumOf<T>::type>;

/* Adds one element known not to be a NaN: sum, sum of squares, min/max key, hash. */
template <bool HASH, typename T>
__device__ __forceinline__ void acc_value(AccOf<T> &a, T v)
{
    const double d = (double)v;
    a.sum += SumOf<T>::term(v, d);
    a.sumsq += d * d;
    const typename KeyOf<T>::type k = key_nn(v);
    a.mn = min(a.mn, k);
    a.mx = max(a.mx, k);
    if (HASH) a.hash += gp_mix64((uint64_t)k);
}

/* Adds the V elements v[0, V) (in that order). Without a NaN among them: no per-element
 * test (the common case); else each NaN counts and the others add. */
template <bool HASH, typename T, int V>
__device__ __forceinline__ void acc_add(AccOf<T> &a, const T (&v)[V])
{
    bool anynan = false;
#pragma unroll
    for (int j = 0; j < V; j++) anynan |= gpc_is_nan(v[j]);
    if (!anynan) {
#pragma unroll
        for (int j = 0; j < V; j++) acc_value<HASH>(a, v[j]);
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) {
            if (gpc_is_nan(v[j])) {
                a.nan += 1u;
                if (HASH) a.hash += gp_mix64(gpc_key_of(v[j]));
            } else {
                acc_value<HASH>(a, v[j]);
            }
        }
    }
}

/* The visitor of k_stats's blk::grid_pass over y[0, n): statistics into a, and with ORDER the
 * descents key(y[i]) > key(y[i+1]) for i < n-1 (each pair counted by the thread that owns
 * y[i]). */
template <typename T, bool ORDER, bool HASH> struct StatsPass {
    static constexpr bool RAW = true;
    AccOf<T> a;
    const T *__restrict__ y;
    long long n;
    /* The vector c: raw = the bytes of y[c*V, c*V + V). */
    __device__ __forceinline__ void vec(const uint4 &raw, long long c)
    {
        constexpr int V = 16 / (int)sizeof(T);
        T v[V];
        memcpy(v, &raw, sizeof raw);
        acc_add<HASH, T, V>(a, v);
        if (ORDER) {
            unsigned long long k[V];
#pragma unroll
            for (int j = 0; j < V; j++) k[j] = gpc_key_of(v[j]);
#pragma unroll
            for (int j = 0; j + 1 < V; j++) a.desc += (k[j] > k[j + 1]) ? 1u : 0u;
            const long long nx = (c + 1) * V; /* first element of the next vector */
            if (nx < n) a.desc += (k[V - 1] > gpc_key_of(__ldg(y + nx))) ? 1u : 0u;
        }
    }
    /* The element i: e = y[i]. */
    __device__ __forceinline__ void elem(T e, long long i)
    {
        const T v[1] = {e};
        acc_add<HASH, T, 1>(a, v);
        if (ORDER && i + 1 < n)
            a.desc += (gpc_key_of(v[0]) > gpc_key_of(__ldg(y + i + 1))) ? 1u : 0u;
    }
};

/* Where the last block of k_stats puts the result: the float or the integer record. */
__device__ __forceinline__ StatPart *result_slot(ResultBlock *r, StatPart *) { return &r->stats; }
__device__ __forceinline__ StatPartI *result_slot(ResultBlock *r, StatPartI *)
{
    return &r->istats;
}

/* stats of y[0, n) in one launch (cuda_reduce.cuh). With ORDER, counts descents; with HASH,
 * sums gp_mix64 of every key. U: 16-byte loads in flight per thread. */
template <typename T, bool ORDER, bool HASH, int U>
__global__ void __launch_bounds__(RED_THREADS, SumOf<T>::min_blocks)
k_stats(const T *__restrict__ y, long long n, Sink sk)
{
    typedef typename SumOf<T>::op Op;
    typedef typename Op::T P;
    StatsPass<T, ORDER, HASH> f; /* owns the accumulator: the same SASS as the loop inline */
    acc_init(f.a);
    f.y = y;
    f.n = n;
    blk::grid_pass<RED_THREADS, U>(y, n, f);

    const P p = blk::block_reduce<Op, RED_THREADS>(acc_part(f.a));
    finish_last_block<Op>(p, (P *)sk.parts, sk.ticket, result_slot(sk.result, (P *)NULL), y, n,
                          (int)sizeof(T), sk.result->ends);
}

/* ---- host side ------------------------------------------------------------------------ */

/* Loads in flight per thread of the plain statistics (no order, no hash): RED_UNROLL, or
 * GPUPRIM_STATS_UNROLL = 2, 4 or 8 (a tuning knob for the benchmark; read once). */
int stats_unroll()
{
    const int u = gp_tuning_get()->stats_unroll;
    return u ? u : RED_UNROLL;
}

/* Launches k_stats<T, ORDER, HASH, U> and waits. */
template <typename T, bool ORDER, bool HASH, int U>
int launch_stats_u(const T *y, long long n, const gpc_devinfo *d, Scratch *s)
{
    const void *kp = (const void *)k_stats<T, ORDER, HASH, U>;
    int blocks = 1;
    int rc = grid_for(kp, n, U * (16 / (int)sizeof(T)), d, &blocks);
    if (rc) return rc;
    k_stats<T, ORDER, HASH, U><<<blocks, RED_THREADS>>>(y, n, sink_of(s));
    return wait_result("k_stats");
}

/* Launches stats for one (ORDER, HASH) choice and waits. */
template <typename T, bool ORDER, bool HASH>
int launch_stats(const T *y, long long n, const gpc_devinfo *d, Scratch *s)
{
    if (!ORDER && !HASH) {
        const int u = stats_unroll();
        if (u == 2) return launch_stats_u<T, ORDER, HASH, 2>(y, n, d, s);
        if (u == 8) return launch_stats_u<T, ORDER, HASH, 8>(y, n, d, s);
    }
    return launch_stats_u<T, ORDER, HASH, RED_UNROLL>(y, n, d, s);
}

/* Launches the statistics of y (type T) with or without the descents (order) and the hash,
 * and waits. */
template <typename T>
int run_stats(const void *yv, long long n, bool order, bool hash, const gpc_devinfo *d, Scratch *s)
{
    const T *y = (const T *)yv;
    if (order && hash) return launch_stats<T, true, true>(y, n, d, s);
    if (order) return launch_stats<T, true, false>(y, n, d, s);
    if (hash) return launch_stats<T, false, true>(y, n, d, s);
    return launch_stats<T, false, false>(y, n, d, s);
}

/* The element of type t whose bits are the low gp_dtype_size(t) bytes of `bits`, as
 * double (the CPU twin's (double)value). */
double bits_to_double(gp_dtype t, unsigned long long bits)
{
    switch (t) {
    case GP_F32: { float v; uint32_t u = (uint32_t)bits; memcpy(&v, &u, 4); return (double)v; }
    case GP_F64: { double v; memcpy(&v, &bits, 8); return v; }
    case GP_I32: { int32_t v; uint32_t u = (uint32_t)bits; memcpy(&v, &u, 4); return (double)v; }
    case GP_I64: { int64_t v; memcpy(&v, &bits, 8); return (double)v; }
    case GP_U32: return (double)(uint32_t)bits;
    case GP_U64: return (double)(uint64_t)bits;
    default: return 0.0;
    }
}

/* Key of the element of type t whose bits are the low bytes of `bits` (gp_key_of). */
uint64_t bits_to_key(gp_dtype t, unsigned long long bits)
{
    unsigned char b[8];
    if (gp_dtype_size(t) == 4) {
        uint32_t u = (uint32_t)bits;
        memcpy(b, &u, 4);
    } else {
        uint64_t u = bits;
        memcpy(b, &u, 8);
    }
    return gp_key_of(t, b);
}

} // namespace

/* Statistics of y[0, n) — gp_backend.stats on the GPU.
 *
 * t: element type; y: device pointer to n elements of type t (any element-aligned address;
 * 16-byte aligned data take the vector-load path); flags: GP_STATS_ORDER, GP_STATS_NOHASH;
 * out: host record. Fills count, nan_count, sum / sumsq (float64 over the non-NaN elements;
 * float32 data converted exactly; integer data: isum = the exact sum, has_isum = 1, sum =
 * isum rounded once, bitwise the CPU twin's), min_key / max_key (non-NaN elements;
 * UINT64_MAX / 0 if none), hash (sum mod 2^64 of gp_mix64(key) over all elements),
 * first/last key and yfirst/ylast (elements 0 and n-1, NaN kept), descents and
 * order_valid = 1 with GP_STATS_ORDER (else descents = 0, order_valid = 0); has_x = 0,
 * trap = xfirst = xlast = 0. n == 0 gives gp_stats_empty() with has_x = 0 and order_valid
 * as above, with no launch. One-launch deterministic reduction (cuda_reduce.cuh): bitwise
 * the same on every run on one device.
 * Returns GP_OK, GP_EINVAL (bad t, n < 0, NULL pointers, unknown flags) or GP_EDEVICE. */
extern "C" int gp_cuda_stats(gp_dtype t, const void *y, int64_t n, unsigned flags,
                             gp_stats *out)
{
    GPC_CHECK_ARRAY(t, n, y, "y");
    if (!out) GPC_EINVAL("out is NULL");
    if (flags & ~(GP_STATS_ORDER | GP_STATS_NOHASH)) GPC_EINVAL("unknown flags 0x%x", flags);
    const bool order = (flags & GP_STATS_ORDER) != 0;
    const bool hash = (flags & GP_STATS_NOHASH) == 0;
    if (n == 0) {
        *out = gp_stats_empty();
        out->has_x = 0;
        out->order_valid = order ? 1 : 0;
        out->has_isum = gp_dtype_is_float(t) ? 0 : 1;
        return GP_OK;
    }
    const gpc_devinfo *d = NULL;
    Scratch *s = NULL;
    int rc = device_scratch(&d, &s);
    if (rc) return rc;

    rc = gpc_with_dtype(t, [&](auto z) {
        return run_stats<decltype(z)>(y, n, order, hash, d, s);
    });
    if (rc) return rc;
    const ResultBlock r = *s->host;
    const bool isint = !gp_dtype_is_float(t);
    const StatPart &p = isint ? r.istats.s : r.stats;

    gp_stats st;
    memset(&st, 0, sizeof st);
    st.count = n;
    st.nan_count = p.nan;
    if (isint) {
        st.has_isum = 1;
        st.isum.lo = r.istats.ilo;
        st.isum.hi = r.istats.ihi;
        st.sum = gp_i128_to_double(st.isum);
    } else {
        st.sum = p.sum;
    }
    st.sumsq = p.sumsq;
    /* 4-byte types: the kernel's 32-bit min of all ones comes back as ~0 (base_part) */
    st.min_key = (gp_dtype_size(t) == 4 && p.mn == ~0ull && p.nan < n) ? 0xFFFFFFFFull : p.mn;
    st.max_key = p.mx;
    st.hash = p.hash;
    st.first_key = bits_to_key(t, r.ends[0]);
    st.last_key = bits_to_key(t, r.ends[1]);
    st.descents = order ? p.desc : 0;
    st.yfirst = bits_to_double(t, r.ends[0]);
    st.ylast = bits_to_double(t, r.ends[1]);
    st.trap = 0.0;
    st.xfirst = 0.0;
    st.xlast = 0.0;
    st.has_x = 0;
    st.order_valid = order ? 1 : 0;
    *out = st;
    return GP_OK;
}

/* gpuprim_bench.cu — gpuprim's GPU primitives against CUB / Thrust and the chapter's plain
 * versions, on the same fresh random device data, in one process.
 *
 * Our kernels are reached ONLY through the C API (the gp_backend table of
 * gp_backend_cuda(0, ...)); CUB, Thrust and the seed baselines (seed_baselines.cu) are
 * called directly. No MPI: the gpuprim library links MPI, but nothing here calls it.
 *
 * What runs (see bench/README.md for the columns and the method):
 *   ceiling      a read-only kernel over 1 GiB (16-byte loads, every SM full) and a
 *                device-to-device cudaMemcpy (read + write bytes), in GB/s;
 *   stats        be->stats vs cub::DeviceReduce::Sum, vs Sum + Min + Max one after another,
 *                vs Program 6.15 (one atomicAdd per block; f32, f64, u32); for the integer
 *                types (i32, u32, i64, u64) the exact 128-bit sum is checked bit for bit
 *                against the CPU twin's on a host copy, at every size;
 *   trap_sample  the uniform trapezoid rule of the samples: one be->stats call vs
 *                cub::DeviceReduce::Sum plus the end correction;
 *   trap_fn:F    be->trap_fn (F = x2, sin) vs cub::DeviceReduce::TransformReduce over a
 *                counting iterator computing w_i f(a + i h) with the same doubles, vs the
 *                naive one-atomicAdd-per-point kernel and Program 6.15 (x2 only);
 *   sort         sort_values, to_keys + sort_keys + from_keys, sort_keys alone on keys vs
 *                cub::DeviceRadixSort::SortKeys, cub::DeviceMergeSort::SortKeys,
 *                thrust::sort, cub::DeviceRadixSort::SortPairs with a uint64 index, the
 *                one-launch-per-stage bitonic sort (power-of-two n <= 2^21) and CPU qsort
 *                (n <= 2^21, once).
 * Timing: CUDA events on the legacy default stream around the operation only (start event,
 * operation, cudaDeviceSynchronize, stop event: each implementation is timed until its
 * result is complete, as our synchronous API is); one warm-up; before every repetition the
 * input is re-copied where the operation is in place, 256 MiB are written with
 * cudaMemsetAsync and another 256 MiB are read (L2 flush: no input and no dirty line left
 * in L2), and the device is synchronised; median of 20 repetitions (10
 * above 20 ms, 7 above 50 ms, 5 above 200 ms). Every result is validated.
 *
 * Exit: 0 all rows validated; 1 a validation failed or a CUDA / API call failed; 2 bad
 * command line; 3 incomplete (soft time limit or device memory) without failures; 77 no
 * CUDA device visible ("SKIP: ..." on stdout); 124 hard time limit.
 */
#include "gpuprim/exact_sum.h"
#include "cpu_twins.h"
#include "gpuprim/kernels.h"
#include "seed_baselines.cuh"

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sort.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>


namespace {

/* ---- constants ------------------------------------------------------------------------ */

constexpr int EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_INCOMPLETE = 3, EXIT_SKIP = 77;
constexpr long long MAX_N = 1ll << 30;          /* largest n accepted by --sizes */
constexpr long long TWIN_MAX_N = 1ll << 24;     /* CPU-twin bit-exact check up to here */
constexpr long long SMALL_SORT_MAX_N = 1ll << 21; /* seed bitonic and qsort up to here */
constexpr size_t FLUSH_BYTES = 256ull << 20;    /* L2 flush: memset of 256 MiB, then a
                                                   read of another 256 MiB */
constexpr size_t CEILING_BYTES = 1ull << 30;    /* read-ceiling buffer */
constexpr int CHK_THREADS = 256;
constexpr int UTIL_THREADS = 256;
constexpr int READ_THREADS = 256;
constexpr unsigned FULL_MASK = 0xffffffffu;
constexpr double TOL_F64 = 1e-9;                /* sums accumulated in float64 */
constexpr double TOL_F32ACC = 1e-3;             /* the seed's float accumulation */
constexpr double TOL_EXACT = 1e-6;              /* trapezoid vs the exact integral */

/* Tolerance of a sum that ends with `nseq` additions one after another into one
 * accumulator (atomics), relative to the sum of positive terms: the larger of `base` and
 * the worst-case bound nseq * u of recursive summation (u = 2^-53 for float64, 2^-24 for
 * float32); typical errors are far smaller, the bound keeps a correct but unlucky order
 * from failing the run. */
double tol_seq(double base, long long nseq, bool f32)
{
    const double u = f32 ? 0x1.0p-24 : 0x1.0p-53;
    return std::max(base, (double)nseq * u);
}

/* ---- errors --------------------------------------------------------------------------- */

/* A failed call (CUDA, our API, CUB, a check that cannot go on): the row fails. */
struct BenchError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
/* The CUDA context is unusable (sticky error): nothing more can run. */
struct FatalError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/* printf-style formatting into a std::string (at most 1023 characters). */
std::string vformat(const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    return std::string(buf);
}

/* printf-style formatting into a std::string. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
std::string format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::string s = vformat(fmt, ap);
    va_end(ap);
    return s;
}

/* Throws BenchError "file:line: call: message (name)" for a failed CUDA call. */
[[noreturn]] void throw_cuda(cudaError_t e, const char *call, const char *file, int line)
{
    throw BenchError(format("%s:%d: %s: %s (%s)", file, line, call, cudaGetErrorString(e),
                            cudaGetErrorName(e)));
}

/* Every CUDA runtime call of the benchmark goes through CK. */
#define CK(call)                                                                            \
    do {                                                                                    \
        cudaError_t ck_e_ = (call);                                                         \
        if (ck_e_ != cudaSuccess) throw_cuda(ck_e_, #call, __FILE__, __LINE__);             \
    } while (0)

/* After every kernel launch of the benchmark. */
#define CK_LAUNCH(what) CK(cudaGetLastError())

/* ---- options -------------------------------------------------------------------------- */

struct Options {
    bool quick = false;
    std::vector<long long> sizes; /* from --sizes: every op at every size */
    bool sizes_given = false;
    std::string json;
    int reps = 20;
    unsigned long long seed = 0;
    bool seed_given = false;
    double time_limit = 600.0; /* soft: no new group starts after it */
    bool do_reduce = true, do_trap = true, do_sort = true;
    bool t_f32 = true, t_f64 = true, t_u32 = true;
    bool t_i32 = true, t_i64 = true, t_u64 = true; /* stats / trap_sample only */
};

/* ---- rows ----------------------------------------------------------------------------- */

enum class Kind { OURS, REF, SEED, CPU, NA };

/* The JSON name of a row kind. */
const char *kind_name(Kind k)
{
    switch (k) {
    case Kind::OURS: return "ours";
    case Kind::REF: return "reference";
    case Kind::SEED: return "seed";
    case Kind::CPU: return "cpu";
    default: return "n/a";
    }
}

/* One line of the table (and of the JSON). */
struct Row {
    std::string op, type, impl;
    long long n = 0;
    Kind kind = Kind::REF;
    bool timed = false;
    int reps = 0;
    double med = NAN, mn = NAN, mx = NAN; /* ms */
    double bytes = 0;                     /* input bytes (reductions), for GB/s */
    double items = 0;                     /* keys or points, for G/s */
    std::string unit;                     /* "GB/s", "Gkeys/s", "Gpts/s" */
    double tput = NAN, pct = NAN;
    double ratio = NAN;  /* time(ref) / time(ours); ref = the CUB primary for our rows */
    std::string ratio_ref;
    std::string note;
    bool ok = true;
    bool skipped = false;
    std::string check; /* "ok", "n/a", "skipped", or the failures */
};

/* ---- global state --------------------------------------------------------------------- */

struct Bench {
    Options opt;
    const gp_backend *be = nullptr;
    cudaDeviceProp prop;
    int clock_khz = 0, mem_clock_khz = 0;
    cudaEvent_t ev0 = nullptr, ev1 = nullptr;
    void *flush = nullptr;       /* 2 x FLUSH_BYTES: written, then the other half read */
    unsigned long long *d_flush_acc = nullptr; /* sink of the flush's read */
    int read_grid = 0;           /* k_read's grid: SMs x resident blocks per SM */
    void *d_small = nullptr;     /* 256 bytes of device results */
    void *h_small = nullptr;     /* 256 bytes pinned */
    void *d_chk = nullptr;       /* ChkOut */
    unsigned flush_byte = 0;
    double read_gbps = NAN, copy_gbps = NAN, read_ms = NAN, copy_ms = NAN;
    std::string ceiling_check = "not run";
    std::chrono::steady_clock::time_point t0;
    std::vector<Row> rows;
    int failures = 0;
    int skipped_groups = 0;
    std::string fatal;
    /* for the qsort comparison line */
    double ours_sort_f32_2p21 = NAN, qsort_f32_2p21 = NAN, seed_bitonic_f32_2p21 = NAN;
    std::string cmdline;
};
Bench G;

/* Seconds since the start of main. */
double elapsed_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - G.t0).count();
}

/* Throws BenchError with the backend's last_error() when a gp_* call fails. */
void gp_check(int rc, const char *call, const char *file, int line)
{
    if (rc != GP_OK)
        throw BenchError(format("%s:%d: %s returned %d: %s", file, line, call, rc,
                                G.be ? G.be->last_error() : "?"));
}
#define GP(call) gp_check((call), #call, __FILE__, __LINE__)

/* Same for the CPU twins (their message is the CPU backend's last_error()). */
void cpu_check(int rc, const char *call, const char *file, int line)
{
    if (rc != GP_OK)
        throw BenchError(format("%s:%d: %s returned %d: %s", file, line, call, rc,
                                gp_backend_cpu()->last_error()));
}
#define CPUCK(call) cpu_check((call), #call, __FILE__, __LINE__)

/* ---- memory --------------------------------------------------------------------------- */

/* Device buffer from the backend's alloc() (cudaMalloc), freed on scope exit. */
class DevBuf {
  public:
    DevBuf() = default;
    explicit DevBuf(size_t bytes) { alloc(bytes); }
    ~DevBuf() { release(); }
    DevBuf(const DevBuf &) = delete;
    DevBuf &operator=(const DevBuf &) = delete;
    /* (Re)allocates `bytes` bytes; throws BenchError on failure. */
    void alloc(size_t bytes)
    {
        release();
        p_ = G.be->alloc(bytes);
        if (!p_)
            throw BenchError(format("device allocation of %.3f GiB failed: %s",
                                    bytes / 1073741824.0, G.be->last_error()));
    }
    void release()
    {
        if (p_) G.be->free(p_);
        p_ = nullptr;
    }
    template <class T> T *as() const { return static_cast<T *>(p_); }
    void *get() const { return p_; }

  private:
    void *p_ = nullptr;
};

/* Pinned host buffer from the backend's host_alloc(), freed on scope exit. */
class HostBuf {
  public:
    HostBuf() = default;
    ~HostBuf() { release(); }
    HostBuf(const HostBuf &) = delete;
    HostBuf &operator=(const HostBuf &) = delete;
    void alloc(size_t bytes)
    {
        release();
        p_ = G.be->host_alloc(bytes);
        if (!p_)
            throw BenchError(format("pinned host allocation of %.3f GiB failed: %s",
                                    bytes / 1073741824.0, G.be->last_error()));
    }
    void release()
    {
        if (p_) G.be->host_free(p_);
        p_ = nullptr;
    }
    template <class T> T *as() const { return static_cast<T *>(p_); }

  private:
    void *p_ = nullptr;
};

/* ---- element traits (device) ---------------------------------------------------------- */

__host__ __device__ __forceinline__ unsigned long long mix64(unsigned long long z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Raw bits, gpuprim's order key (gpuprim/kernels.h: floats: NaN -> all ones, negative -> ~bits,
 * else bits | sign; unsigned: identity), NaN and -0.0 tests, written here independently. */
template <class T> struct Elem;
template <> struct Elem<float> {
    __device__ static unsigned long long bits(float v) { return __float_as_uint(v); }
    __device__ static unsigned long long key(float v)
    {
        const uint32_t u = __float_as_uint(v);
        if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0xFFFFFFFFull;
        return (u & 0x80000000u) ? (unsigned long long)(uint32_t)~u
                                 : (unsigned long long)(u | 0x80000000u);
    }
    __device__ static bool nan(float v) { return (__float_as_uint(v) & 0x7FFFFFFFu) > 0x7F800000u; }
    __device__ static bool negzero(float v) { return __float_as_uint(v) == 0x80000000u; }
};
template <> struct Elem<double> {
    __device__ static unsigned long long bits(double v)
    {
        return (unsigned long long)__double_as_longlong(v);
    }
    __device__ static unsigned long long key(double v)
    {
        const unsigned long long u = (unsigned long long)__double_as_longlong(v);
        if ((u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) return ~0ull;
        return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
    }
    __device__ static bool nan(double v)
    {
        return ((unsigned long long)__double_as_longlong(v) & 0x7FFFFFFFFFFFFFFFull) >
               0x7FF0000000000000ull;
    }
    __device__ static bool negzero(double v)
    {
        return (unsigned long long)__double_as_longlong(v) == 0x8000000000000000ull;
    }
};
template <> struct Elem<uint32_t> {
    __device__ static unsigned long long bits(uint32_t v) { return v; }
    __device__ static unsigned long long key(uint32_t v) { return v; }
    __device__ static bool nan(uint32_t) { return false; }
    __device__ static bool negzero(uint32_t) { return false; }
};
template <> struct Elem<uint64_t> {
    __device__ static unsigned long long bits(uint64_t v) { return v; }
    __device__ static unsigned long long key(uint64_t v) { return v; }
    __device__ static bool nan(uint64_t) { return false; }
    __device__ static bool negzero(uint64_t) { return false; }
};
/* signed integers: the key flips the sign bit */
template <> struct Elem<int32_t> {
    __device__ static unsigned long long bits(int32_t v) { return (uint32_t)v; }
    __device__ static unsigned long long key(int32_t v) { return (uint32_t)v ^ 0x80000000u; }
    __device__ static bool nan(int32_t) { return false; }
    __device__ static bool negzero(int32_t) { return false; }
};
template <> struct Elem<int64_t> {
    __device__ static unsigned long long bits(int64_t v) { return (unsigned long long)v; }
    __device__ static unsigned long long key(int64_t v)
    {
        return (unsigned long long)v ^ 0x8000000000000000ull;
    }
    __device__ static bool nan(int64_t) { return false; }
    __device__ static bool negzero(int64_t) { return false; }
};

/* gpuprim's element type of a C++ type. */
template <class T> gp_dtype dtype_of();
template <> gp_dtype dtype_of<float>() { return GP_F32; }
template <> gp_dtype dtype_of<double>() { return GP_F64; }
template <> gp_dtype dtype_of<uint32_t>() { return GP_U32; }
template <> gp_dtype dtype_of<int32_t>() { return GP_I32; }
template <> gp_dtype dtype_of<int64_t>() { return GP_I64; }
template <> gp_dtype dtype_of<uint64_t>() { return GP_U64; }

/* ---- utility kernels ------------------------------------------------------------------ */

/* Fresh random data from a counter-based generator: element i from mix64(mix64(i) ^ seed).
 * Floats: uniform in [-1, 3) from 53 random bits (mean 1, so sums are far from 0; no NaN,
 * no infinity, no -0.0); integers: random bits over the whole type (64-bit sums pass 2^64). */
template <class T> __device__ __forceinline__ T gen_value(unsigned long long r);
template <> __device__ __forceinline__ double gen_value<double>(unsigned long long r)
{
    return -1.0 + 4.0 * ((double)(r >> 11) * 0x1.0p-53);
}
template <> __device__ __forceinline__ float gen_value<float>(unsigned long long r)
{
    return (float)gen_value<double>(r);
}
template <> __device__ __forceinline__ uint32_t gen_value<uint32_t>(unsigned long long r)
{
    return (uint32_t)(r >> 32);
}
template <> __device__ __forceinline__ int32_t gen_value<int32_t>(unsigned long long r)
{
    return (int32_t)(uint32_t)(r >> 32);
}
template <> __device__ __forceinline__ uint64_t gen_value<uint64_t>(unsigned long long r)
{
    return r;
}
template <> __device__ __forceinline__ int64_t gen_value<int64_t>(unsigned long long r)
{
    return (int64_t)r;
}

/* Fills out[0, n) with gen_value<T> of the counter-based random stream `seed`. */
template <class T>
__global__ void __launch_bounds__(UTIL_THREADS) k_gen(T *out, long long n, unsigned long long seed)
{
    const long long stride = (long long)gridDim.x * UTIL_THREADS;
    for (long long i = (long long)blockIdx.x * UTIL_THREADS + threadIdx.x; i < n; i += stride)
        out[i] = gen_value<T>(mix64(mix64((unsigned long long)i) ^ seed));
}

/* out[i] = i for i in [0, n) (the SortPairs payload). */
__global__ void __launch_bounds__(UTIL_THREADS) k_iota(uint64_t *out, long long n)
{
    const long long stride = (long long)gridDim.x * UTIL_THREADS;
    for (long long i = (long long)blockIdx.x * UTIL_THREADS + threadIdx.x; i < n; i += stride)
        out[i] = (uint64_t)i;
}

/* Independent check of an array a[0, n) (every result of the benchmark goes through it). */
struct ChkOut {
    unsigned long long nan;       /* NaN elements */
    unsigned long long negzero;   /* -0.0 elements */
    unsigned long long hash_bits; /* sum of mix64(raw bits): multiset fingerprint */
    unsigned long long hash_keys; /* sum of mix64(order key): equals gp_stats.hash */
    unsigned long long min_key;   /* smallest key of a non-NaN element (~0 if none) */
    unsigned long long max_key;   /* largest key of a non-NaN element (0 if none) */
    unsigned long long desc_key;  /* i with key(a[i]) > key(a[i+1]) (gpuprim's order) */
    unsigned long long desc_val;  /* i with a[i+1] < a[i] (the type's operator<) */
    unsigned long long mismatch;  /* i with bits(a[i]) != bits(ref[i]) (ref given) */
    double sum;                   /* non-NaN elements as double */
    double sumsq;
};

/* Warp reductions (lane 0 gets the result; all 32 lanes must call). */
__device__ __forceinline__ unsigned long long shfl_add(unsigned long long v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(FULL_MASK, v, off);
    return v;
}
__device__ __forceinline__ double shfl_add(double v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(FULL_MASK, v, off);
    return v;
}
__device__ __forceinline__ unsigned long long shfl_min(unsigned long long v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned long long o = __shfl_down_sync(FULL_MASK, v, off);
        v = o < v ? o : v;
    }
    return v;
}
__device__ __forceinline__ unsigned long long shfl_max(unsigned long long v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const unsigned long long o = __shfl_down_sync(FULL_MASK, v, off);
        v = o > v ? o : v;
    }
    return v;
}

/* Grid-stride pass over a[0, n); per-warp shuffle reductions; lane 0 of each warp adds its
 * warp's partials into *out with integer / double atomics (the double sums are only
 * compared with a tolerance). ref may be NULL. */
template <class T>
__global__ void __launch_bounds__(CHK_THREADS)
k_check(const T *__restrict__ a, long long n, const T *__restrict__ ref, ChkOut *out)
{
    unsigned long long nan = 0, nz = 0, hb = 0, hk = 0, mn = ~0ull, mx = 0, dk = 0, dv = 0, mm = 0;
    double s = 0.0, ss = 0.0;
    const long long stride = (long long)gridDim.x * CHK_THREADS;
    for (long long i = (long long)blockIdx.x * CHK_THREADS + threadIdx.x; i < n; i += stride) {
        const T v = a[i];
        const unsigned long long k = Elem<T>::key(v);
        hb += mix64(Elem<T>::bits(v));
        hk += mix64(k);
        if (Elem<T>::nan(v)) {
            nan++;
        } else {
            const double d = (double)v;
            s += d;
            ss += d * d;
            mn = k < mn ? k : mn;
            mx = k > mx ? k : mx;
        }
        if (Elem<T>::negzero(v)) nz++;
        if (i + 1 < n) {
            const T w = a[i + 1];
            if (k > Elem<T>::key(w)) dk++;
            if (w < v) dv++;
        }
        if (ref != nullptr && Elem<T>::bits(ref[i]) != Elem<T>::bits(v)) mm++;
    }
    nan = shfl_add(nan);
    nz = shfl_add(nz);
    hb = shfl_add(hb);
    hk = shfl_add(hk);
    mn = shfl_min(mn);
    mx = shfl_max(mx);
    dk = shfl_add(dk);
    dv = shfl_add(dv);
    mm = shfl_add(mm);
    s = shfl_add(s);
    ss = shfl_add(ss);
    if ((threadIdx.x & 31) == 0) {
        if (nan) atomicAdd(&out->nan, nan);
        if (nz) atomicAdd(&out->negzero, nz);
        atomicAdd(&out->hash_bits, hb);
        atomicAdd(&out->hash_keys, hk);
        atomicMin(&out->min_key, mn);
        atomicMax(&out->max_key, mx);
        if (dk) atomicAdd(&out->desc_key, dk);
        if (dv) atomicAdd(&out->desc_val, dv);
        if (mm) atomicAdd(&out->mismatch, mm);
        atomicAdd(&out->sum, s);
        atomicAdd(&out->sumsq, ss);
    }
}

/* SortPairs payload check: out[0] += i with idx[i] >= n or bits(kout[i]) != bits(kin[idx[i]]);
 * out[1] += mix64(idx[i]) (a fingerprint of the payload multiset). */
template <class T>
__global__ void __launch_bounds__(CHK_THREADS)
k_pairs_check(const T *__restrict__ kout, const T *__restrict__ kin,
              const uint64_t *__restrict__ idx, long long n, unsigned long long *out)
{
    unsigned long long bad = 0, h = 0;
    const long long stride = (long long)gridDim.x * CHK_THREADS;
    for (long long i = (long long)blockIdx.x * CHK_THREADS + threadIdx.x; i < n; i += stride) {
        const uint64_t j = idx[i];
        h += mix64(j);
        if (j >= (uint64_t)n || Elem<T>::bits(kin[j]) != Elem<T>::bits(kout[i])) bad++;
    }
    bad = shfl_add(bad);
    h = shfl_add(h);
    if ((threadIdx.x & 31) == 0) {
        if (bad) atomicAdd(&out[0], bad);
        atomicAdd(&out[1], h);
    }
}

/* The end correction of the uniform trapezoid rule after a CUB sum:
 * *t = h * (*sum - (y[0] + y[n-1]) / 2). One thread. */
template <class T>
__global__ void k_trap_end(const T *y, long long n, double h, const double *sum, double *t)
{
    *t = h * (*sum - 0.5 * ((double)y[0] + (double)y[n - 1]));
}

/* The read ceiling: every thread sums 16-byte words p[i], p[i + stride], ... (four loads
 * in flight per iteration); lane 0 of each warp adds the warp's sum into *out. */
__device__ __forceinline__ unsigned long long sum4(uint4 v)
{
    return (unsigned long long)v.x + (unsigned long long)v.y + (unsigned long long)v.z +
           (unsigned long long)v.w;
}
__global__ void __launch_bounds__(READ_THREADS)
k_read(const uint4 *__restrict__ p, long long n16, unsigned long long *out)
{
    const long long stride = (long long)gridDim.x * READ_THREADS;
    long long i = (long long)blockIdx.x * READ_THREADS + threadIdx.x;
    unsigned long long acc = 0;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        const uint4 a = __ldg(p + i);
        const uint4 b = __ldg(p + i + stride);
        const uint4 c = __ldg(p + i + 2 * stride);
        const uint4 d = __ldg(p + i + 3 * stride);
        acc += sum4(a) + sum4(b) + sum4(c) + sum4(d);
    }
    for (; i < n16; i += stride) acc += sum4(__ldg(p + i));
    acc = shfl_add(acc);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}

/* The trapezoid term of CUB's TransformReduce: w_i f(a + i h) with x = a + i*h rounded
 * like gpuprim's trap_fn (no FMA), w = 1/2 at i = 0 and i = last. */
template <int F> struct TrapTerm {
    double a, h;
    long long last;
    __device__ double operator()(long long i) const
    {
        const double x = __dadd_rn(a, __dmul_rn((double)i, h));
        const double w = (i == 0 || i == last) ? 0.5 : 1.0;
        return w * (F == GP_FN_X2 ? x * x : sin(x));
    }
};

/* The comparison of cub::DeviceMergeSort (the type's operator<). */
struct Less {
    template <class T> __device__ bool operator()(const T &x, const T &y) const { return x < y; }
};

/* ---- host helpers ----------------------------------------------------------------------- */

/* Grid of the utility kernels: 8 blocks of 256 threads per SM, grid-stride loops. */
int util_grid()
{
    return G.prop.multiProcessorCount * 8;
}

/* Fresh random data into d[0, n) (synchronous). */
template <class T> void gen_data(T *d, long long n, unsigned long long seed)
{
    k_gen<T><<<util_grid(), UTIL_THREADS>>>(d, n, seed);
    CK_LAUNCH("k_gen");
    CK(cudaDeviceSynchronize());
}

/* Runs k_check over a[0, n) (ref optional) and returns the record (synchronous). */
template <class T> ChkOut run_check(const T *a, long long n, const T *ref)
{
    ChkOut init;
    memset(&init, 0, sizeof init);
    init.min_key = ~0ull;
    CK(cudaMemcpy(G.d_chk, &init, sizeof init, cudaMemcpyHostToDevice));
    k_check<T><<<util_grid(), CHK_THREADS>>>(a, n, ref, static_cast<ChkOut *>(G.d_chk));
    CK_LAUNCH("k_check");
    ChkOut r;
    CK(cudaMemcpy(&r, G.d_chk, sizeof r, cudaMemcpyDeviceToHost));
    return r;
}

/* Element i of device array d (synchronous copy). */
template <class T> T fetch(const T *d, long long i)
{
    T v;
    CK(cudaMemcpy(&v, d + i, sizeof(T), cudaMemcpyDeviceToHost));
    return v;
}

/* |a - b| / |b| (|a - b| when b == 0); NaN in either gives +inf. */
double rel_err(double a, double b)
{
    if (std::isnan(a) || std::isnan(b)) return INFINITY;
    const double d = fabs(a - b);
    return b != 0.0 ? d / fabs(b) : d;
}

/* The data seed of one group: the run's seed mixed with type, size and a salt. */
unsigned long long group_seed(gp_dtype t, long long n, unsigned salt)
{
    return mix64(G.opt.seed ^ mix64(((unsigned long long)t << 48) ^ ((unsigned long long)salt << 40) ^
                                    (unsigned long long)n));
}

/* "2^k" for powers of two, else the decimal count. */
std::string n_str(long long n)
{
    if (n > 0 && (n & (n - 1)) == 0) {
        int k = 0;
        while ((1ll << k) < n) k++;
        return format("2^%d", k);
    }
    return format("%lld", n);
}

/* Marks the row failed and appends the reason to its check text. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void fail(Row &r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const std::string m = vformat(fmt, ap);
    va_end(ap);
    if (r.ok) {
        r.check.clear();
        r.ok = false;
    } else {
        r.check += "; ";
    }
    r.check += m;
}

/* expect(row, cond, ...): fail(row, ...) unless cond. */
#define EXPECT(row, cond, ...)                                                              \
    do {                                                                                    \
        if (!(cond)) fail((row), __VA_ARGS__);                                              \
    } while (0)

/* A fresh row (check "ok" until fail() is called). */
Row make_row(const char *op, const char *type, long long n, const std::string &impl, Kind kind,
             double bytes, double items, const char *unit)
{
    Row r;
    r.op = op;
    r.type = type;
    r.n = n;
    r.impl = impl;
    r.kind = kind;
    r.bytes = bytes;
    r.items = items;
    r.unit = unit;
    r.check = "ok";
    return r;
}

/* Computes throughput and % of the read ceiling, prints one progress line to stderr and
 * stores the row. */
void finish_row(Row &r)
{
    if (r.timed && r.med > 0) {
        if (r.unit == "GB/s") {
            r.tput = r.bytes / (r.med * 1e-3) / 1e9;
            if (G.read_gbps > 0) r.pct = 100.0 * r.tput / G.read_gbps;
        } else {
            r.tput = r.items / (r.med * 1e-3) / 1e9;
        }
    }
    if (!r.ok) G.failures++;
    char t[64];
    if (r.timed) snprintf(t, sizeof t, "%.4f ms (%d reps)", r.med, r.reps);
    else if (r.kind == Kind::NA) snprintf(t, sizeof t, "n/a");
    else snprintf(t, sizeof t, "not timed");
    fprintf(stderr, "[%7.1f s] %-12s %-4s %-6s %-40s %-22s %s\n", elapsed_s(), r.op.c_str(),
            r.type.c_str(), n_str(r.n).c_str(), r.impl.c_str(), t,
            r.ok ? (r.skipped ? "skipped" : "ok") : ("FAIL: " + r.check).c_str());
    fflush(stderr);
    G.rows.push_back(r);
}

/* True when the CUDA context still works after a failure (clears a non-sticky error). */
bool context_ok(std::string *why)
{
    (void)cudaGetLastError();
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess && why) *why = format("%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    return e == cudaSuccess;
}

/* Runs body(row) — timing and validation of one implementation — and stores the row. A
 * BenchError (or any std::exception, e.g. from Thrust) fails the row; if the context is
 * then unusable, FatalError is thrown after the row is stored. */
template <class Body> void run_row(Row r, Body &&body)
{
    bool broken = false;
    std::string why;
    try {
        body(r);
    } catch (const FatalError &) {
        throw;
    } catch (const std::exception &e) {
        fail(r, "%s", e.what());
        broken = !context_ok(&why);
    }
    finish_row(r);
    if (broken) throw FatalError("CUDA context unusable after a failure: " + why);
}

/* ---- timing ---------------------------------------------------------------------------- */

/* Repetitions after the first measured one took `ms`. */
int reps_for(double ms)
{
    int r = G.opt.reps;
    if (ms > 200.0) r = std::min(r, 5);
    else if (ms > 50.0) r = std::min(r, 7);
    else if (ms > 20.0) r = std::min(r, 10);
    return std::max(r, 5);
}

/* L2 flush before each repetition: writes FLUSH_BYTES with cudaMemsetAsync (a different
 * byte each time), then reads another FLUSH_BYTES. The memset alone would leave L2 full of
 * dirty lines whose write-back the next timed operation would pay for; after the read, L2
 * holds only clean lines of unrelated data. */
void flush_l2()
{
    G.flush_byte = (G.flush_byte + 1) & 0xff;
    CK(cudaMemsetAsync(G.flush, (int)G.flush_byte, FLUSH_BYTES, 0));
    k_read<<<G.read_grid, READ_THREADS>>>(
        reinterpret_cast<const uint4 *>(static_cast<const char *>(G.flush) + FLUSH_BYTES),
        (long long)(FLUSH_BYTES / 16), G.d_flush_acc);
    CK_LAUNCH("k_read (L2 flush)");
}

/* One warm-up (prep + op), then repetitions of: prep (e.g. re-copy the unsorted input),
 * L2 flush, device synchronise, start event, op, device synchronise, stop event. The
 * interval is the operation as the host sees it (our API returns after its device work;
 * CUB / Thrust / seed work is waited for the same way). Fills reps / med / mn / mx of r. */
template <class Prep, class Op> void time_op(Row &r, Prep &&prep, Op &&op)
{
    prep();
    op();
    CK(cudaDeviceSynchronize());
    std::vector<double> s;
    int reps = G.opt.reps;
    for (int k = 0; k < reps; k++) {
        prep();
        flush_l2();
        CK(cudaDeviceSynchronize());
        CK(cudaEventRecord(G.ev0, 0));
        op();
        /* every implementation ends like our synchronous API: result complete, host told */
        CK(cudaDeviceSynchronize());
        CK(cudaEventRecord(G.ev1, 0));
        CK(cudaEventSynchronize(G.ev1));
        float ms = 0.0f;
        CK(cudaEventElapsedTime(&ms, G.ev0, G.ev1));
        s.push_back(ms);
        if (k == 0) reps = reps_for(ms);
    }
    CK(cudaGetLastError());
    std::sort(s.begin(), s.end());
    const size_t m = s.size();
    r.reps = (int)m;
    r.med = (m % 2) ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
    r.mn = s.front();
    r.mx = s.back();
    r.timed = true;
}

/* The empty preparation step of time_op. */
void noprep() {}

/* ---- read ceiling ------------------------------------------------------------------------ */

/* Measures the read ceiling (read-only kernel over up to 1 GiB) and the device-to-device
 * copy rate (read + write bytes); both rows validated by summing the data. */
void bench_ceiling()
{
    size_t freeb = 0, totalb = 0;
    CK(cudaMemGetInfo(&freeb, &totalb));
    size_t bytes = CEILING_BYTES;
    while (bytes > (64ull << 20) && 2 * bytes + (512ull << 20) > freeb) bytes /= 2;
    const long long n16 = (long long)(bytes / 16);
    DevBuf a(bytes), b(bytes);
    CK(cudaMemset(a.get(), 0x01, bytes));
    CK(cudaMemset(b.get(), 0x00, bytes));
    CK(cudaDeviceSynchronize());
    const unsigned long long expect = (unsigned long long)n16 * 4ull * 0x01010101ull;

    const int grid = G.read_grid;
    const int per_sm = grid / G.prop.multiProcessorCount;
    unsigned long long *d_acc = static_cast<unsigned long long *>(G.d_small);
    unsigned long long *h_acc = static_cast<unsigned long long *>(G.h_small);

    Row rr = make_row("ceiling", "-", (long long)bytes, "read kernel (16-byte loads)", Kind::REF,
                      (double)bytes, 0, "GB/s");
    run_row(rr, [&](Row &r) {
        time_op(
            r, [&] { CK(cudaMemsetAsync(d_acc, 0, 8, 0)); },
            [&] {
                k_read<<<grid, READ_THREADS>>>(static_cast<const uint4 *>(a.get()), n16, d_acc);
                CK_LAUNCH("k_read");
                CK(cudaMemcpyAsync(h_acc, d_acc, 8, cudaMemcpyDeviceToHost, 0));
            });
        EXPECT(r, *h_acc == expect, "read kernel sum %llu, expected %llu", *h_acc, expect);
        r.note = format("%d blocks x %d threads (%d per SM)", grid, READ_THREADS, per_sm);
        if (r.ok) {
            G.read_ms = r.med;
            G.read_gbps = (double)bytes / (r.med * 1e-3) / 1e9;
        }
    });
    Row rc = make_row("ceiling", "-", (long long)bytes, "cudaMemcpy D2D (read+write)", Kind::REF,
                      2.0 * (double)bytes, 0, "GB/s");
    run_row(rc, [&](Row &r) {
        time_op(r, noprep,
                [&] { CK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, 0)); });
        CK(cudaMemsetAsync(d_acc, 0, 8, 0));
        k_read<<<grid, READ_THREADS>>>(static_cast<const uint4 *>(b.get()), n16, d_acc);
        CK_LAUNCH("k_read");
        CK(cudaMemcpy(h_acc, d_acc, 8, cudaMemcpyDeviceToHost));
        EXPECT(r, *h_acc == expect, "copy destination sum %llu, expected %llu", *h_acc, expect);
        r.note = "bytes counted: read + written";
        if (r.ok) {
            G.copy_ms = r.med;
            G.copy_gbps = 2.0 * (double)bytes / (r.med * 1e-3) / 1e9;
        }
    });
    G.ceiling_check = (G.read_gbps > 0 && G.copy_gbps > 0) ? "ok" : "failed";
}

/* ---- reductions: stats and the sampled trapezoid --------------------------------------- */

/* Accumulator type of the seed's Program 6.15 sum: the data type, u64 for uint32. */
template <class T> struct SeedAcc { using type = T; };
template <> struct SeedAcc<uint32_t> { using type = unsigned long long; };

/* True when two stats records are bitwise the same in the reduced fields. */
bool same_stats(const gp_stats &a, const gp_stats &b)
{
    return a.count == b.count && a.nan_count == b.nan_count &&
           memcmp(&a.sum, &b.sum, sizeof a.sum) == 0 &&
           memcmp(&a.sumsq, &b.sumsq, sizeof a.sumsq) == 0 && a.min_key == b.min_key &&
           a.max_key == b.max_key && a.hash == b.hash && a.has_isum == b.has_isum &&
           a.isum.lo == b.isum.lo && a.isum.hi == b.isum.hi;
}

/* The seed's Program 6.15 array sum (one element per thread, one atomicAdd per block) as a
 * stats row: f32, f64 and u32, the types the seed has. */
template <class T> void bench_seed_sum(const T *d_in, long long n, const ChkOut &ck)
{
    const char *tn = gp_dtype_name(dtype_of<T>());
    const double bytes = (double)n * sizeof(T);
    using A = typename SeedAcc<T>::type;
    const bool f32acc = std::is_same<A, float>::value;
    run_row(make_row("stats", tn, n,
                     format("seed P6.15 sum (%s acc)", f32acc ? "f32" : std::is_same<A, double>::value ? "f64" : "u64"),
                     Kind::SEED, bytes, 0, "GB/s"),
            [&](Row &r) {
                A *d_acc = static_cast<A *>(G.d_small);
                A *h_acc = static_cast<A *>(G.h_small);
                time_op(r, noprep, [&] {
                    CK(seed::sum_p615(d_in, n, d_acc));
                    CK(cudaMemcpyAsync(h_acc, d_acc, sizeof(A), cudaMemcpyDeviceToHost, 0));
                });
                const double s = (double)*h_acc;
                const long long nblk = (n + seed::SEED_BLOCK - 1) / seed::SEED_BLOCK;
                const double tol = f32acc ? tol_seq(TOL_F32ACC, nblk, true) : tol_seq(TOL_F64, nblk, false);
                EXPECT(r, rel_err(s, ck.sum) <= tol, "sum %.17g vs check %.17g (rel %.2e > %.0e)", s,
                       ck.sum, rel_err(s, ck.sum), tol);
                r.note = format("sum only; rel err %.1e vs f64 check", rel_err(s, ck.sum));
            });
}

/* Integer data: the CPU twin's statistics of a host copy of d[0, n) (the reference of the
 * exact sum, checked bit for bit) and *sabs = sum |x| (the scale of the float64 sums'
 * errors: random signed data cancel); *have = false for float types. */
template <class T> gp_stats twin_stats(const T *d, long long n, bool *have, double *sabs)
{
    gp_stats tw{};
    *have = false;
    *sabs = 0.0;
    if (gp_dtype_is_float(dtype_of<T>())) return tw;
    std::vector<T> h((size_t)n);
    CK(cudaMemcpy(h.data(), d, (size_t)n * sizeof(T), cudaMemcpyDeviceToHost));
    if (gp_cpu_stats(dtype_of<T>(), h.data(), n, GP_STATS_NOHASH, &tw) != GP_OK)
        throw BenchError(format("CPU twin stats failed: %s", gp_backend_cpu()->last_error()));
    for (const T v : h) *sabs += fabs((double)v);
    *have = true;
    return tw;
}

/* The uniform trapezoid rule as gpuprim_mpi computes it from a record with spacing h:
 * integer data from the exact sum (bracket rounded once), float data in float64. */
double trap_of(gp_dtype dt, const gp_stats &st, double h)
{
    if (!gp_dtype_is_float(dt) && st.has_isum) return h * gp_stats_int_trap_bracket(dt, &st);
    return h * (st.sum - 0.5 * (st.yfirst + st.ylast));
}

/* The stats and trap_sample rows of one type and size: ours, CUB Sum, CUB Sum+Min+Max,
 * Program 6.15 (f32, f64, u32); ours (one stats call) and CUB Sum + end correction for the
 * trapezoid. Integer types: ours' exact sum against the CPU twin's, bit for bit. */
template <class T> void bench_reduce(long long n)
{
    const gp_dtype dt = dtype_of<T>();
    const char *tn = gp_dtype_name(dt);
    const double bytes = (double)n * sizeof(T);
    DevBuf in((size_t)n * sizeof(T));
    const T *d_in = in.as<T>();
    gen_data<T>(in.as<T>(), n, group_seed(dt, n, 1));
    const ChkOut ck = run_check<T>(d_in, n, nullptr);
    const T first = fetch(d_in, 0), last = fetch(d_in, n - 1);
    const double h = 1.0 / (double)(n - 1);
    const double trap_ref = h * (ck.sum - 0.5 * ((double)first + (double)last));
    unsigned long long first_key = gp_key_of(dt, &first);
    bool have_twin = false;
    double sabs = 0.0;
    const gp_stats twin = twin_stats(d_in, n, &have_twin, &sabs);
    /* the error of a float64 sum a against b: relative to |b| for float data (sums far from
     * 0), to sum |x| (times the trapezoid's h) for integer data */
    auto sum_err = [&](double a, double b, double mult = 1.0) {
        return have_twin ? fabs(a - b) / (sabs * mult) : rel_err(a, b);
    };

    /* ours: be->stats, without the multiset hash (the statistics the issue names) and with it
     * (what gpuprim_mpi computes when it sorts, to check that the sort kept the multiset) */
    gp_stats ours{};
    bool have_ours = false;
    for (const unsigned flags : {(unsigned)GP_STATS_NOHASH, 0u}) {
        const bool hashed = flags == 0u;
        run_row(make_row("stats", tn, n, hashed ? "ours stats + multiset hash" : "ours stats",
                         Kind::OURS, bytes, 0, "GB/s"), [&](Row &r) {
            gp_stats st{}, st0{};
            int calls = 0;
            bool det = true;
            time_op(r, noprep, [&] {
                GP(G.be->stats(dt, d_in, n, flags, &st));
                if (calls++ == 0) st0 = st;
                else if (!same_stats(st, st0)) det = false;
            });
            EXPECT(r, st.count == n, "count %lld != %lld", (long long)st.count, n);
            EXPECT(r, st.nan_count == (int64_t)ck.nan, "nan_count %lld != %llu", (long long)st.nan_count, ck.nan);
            EXPECT(r, st.min_key == ck.min_key, "min_key %#llx != %#llx", (unsigned long long)st.min_key, ck.min_key);
            EXPECT(r, st.max_key == ck.max_key, "max_key %#llx != %#llx", (unsigned long long)st.max_key, ck.max_key);
            EXPECT(r, st.hash == (hashed ? ck.hash_keys : 0ull), "hash %#llx != %#llx", (unsigned long long)st.hash,
                   hashed ? ck.hash_keys : 0ull);
            EXPECT(r, sum_err(st.sum, ck.sum) <= TOL_F64, "sum %.17g vs check %.17g (rel %.2e)", st.sum, ck.sum, sum_err(st.sum, ck.sum));
            EXPECT(r, rel_err(st.sumsq, ck.sumsq) <= TOL_F64, "sumsq %.17g vs check %.17g", st.sumsq, ck.sumsq);
            EXPECT(r, st.first_key == first_key && st.yfirst == (double)first && st.ylast == (double)last,
                   "first/last element wrong");
            EXPECT(r, det, "results differ bitwise between repetitions (documented as deterministic)");
            r.note = hashed ? "sum,min,max,sumsq,nan + multiset hash in one pass" : "sum,min,max,sumsq,nan in one pass";
            if (have_twin) {
                char dec[GP_I128_DEC_LEN] = "", tdec[GP_I128_DEC_LEN] = "";
                gp_i128_to_dec(st.isum, dec, sizeof dec);
                gp_i128_to_dec(twin.isum, tdec, sizeof tdec);
                EXPECT(r, st.has_isum == 1 && st.isum.lo == twin.isum.lo && st.isum.hi == twin.isum.hi,
                       "exact sum %s != CPU twin's %s", dec, tdec);
                EXPECT(r, memcmp(&st.sum, &twin.sum, sizeof st.sum) == 0, "sum %.17g != CPU twin's %.17g",
                       st.sum, twin.sum);
                r.note += format("; exact 128-bit sum %s = CPU twin's", dec);
            }
            if (!hashed) {
                ours = st;
                have_ours = r.ok;
            }
        });
    }

    /* ours: the exact (reproducible) sum of --reproducible: a Kulisch accumulator per block,
     * correctly rounded at the end; the cost of bitwise reproducibility */
    run_row(make_row("stats", tn, n, "ours exact_sum (reproducible)", Kind::OURS, bytes, 0, "GB/s"),
            [&](Row &r) {
        gp_superacc acc;
        double s = 0.0;
        time_op(r, noprep, [&] {
            gp_superacc_zero(&acc);
            GP(G.be->exact_sum(dt, d_in, n, GP_SA_VALUES, &acc));
        });
        acc.nan = 0;
        s = gp_superacc_to_double(&acc);
        EXPECT(r, sum_err(s, ck.sum) <= TOL_F64, "exact sum %.17g vs check %.17g (rel %.2e)", s, ck.sum,
               sum_err(s, ck.sum));
        if (have_twin) /* both the exact integer sum, rounded once */
            EXPECT(r, memcmp(&s, &twin.sum, sizeof s) == 0, "exact sum %.17g != CPU twin's %.17g", s,
                   twin.sum);
        r.note = "values only, exact and correctly rounded; bitwise the same for any split";
    });

    /* cub::DeviceReduce::Sum (float64 result, copied to the host like ours) */
    double cub_sum = NAN;
    run_row(make_row("stats", tn, n, "cub Sum", Kind::REF, bytes, 0, "GB/s"), [&](Row &r) {
        double *d_sum = static_cast<double *>(G.d_small);
        double *h_sum = static_cast<double *>(G.h_small);
        size_t tb = 0;
        CK(cub::DeviceReduce::Sum(nullptr, tb, d_in, d_sum, (int)n, 0));
        DevBuf tmp(tb);
        time_op(r, noprep, [&] {
            CK(cub::DeviceReduce::Sum(tmp.get(), tb, d_in, d_sum, (int)n, 0));
            CK(cudaMemcpyAsync(h_sum, d_sum, sizeof(double), cudaMemcpyDeviceToHost, 0));
        });
        cub_sum = *h_sum;
        EXPECT(r, sum_err(cub_sum, ck.sum) <= TOL_F64, "sum %.17g vs check %.17g", cub_sum, ck.sum);
        if (have_ours)
            EXPECT(r, sum_err(cub_sum, ours.sum) <= TOL_F64, "sum %.17g vs ours %.17g (rel %.2e)",
                   cub_sum, ours.sum, sum_err(cub_sum, ours.sum));
        r.note = "float64 accumulation; result copied to host";
    });

    /* Sum + Min + Max one after another */
    run_row(make_row("stats", tn, n, "cub Sum+Min+Max", Kind::REF, bytes, 0, "GB/s"), [&](Row &r) {
        char *d = static_cast<char *>(G.d_small);
        double *d_sum = reinterpret_cast<double *>(d);
        T *d_min = reinterpret_cast<T *>(d + 8);
        T *d_max = reinterpret_cast<T *>(d + 16);
        size_t t1 = 0, t2 = 0, t3 = 0;
        CK(cub::DeviceReduce::Sum(nullptr, t1, d_in, d_sum, (int)n, 0));
        CK(cub::DeviceReduce::Min(nullptr, t2, d_in, d_min, (int)n, 0));
        CK(cub::DeviceReduce::Max(nullptr, t3, d_in, d_max, (int)n, 0));
        const size_t tb = std::max(t1, std::max(t2, t3));
        DevBuf tmp(tb);
        time_op(r, noprep, [&] {
            size_t b1 = t1, b2 = t2, b3 = t3;
            CK(cub::DeviceReduce::Sum(tmp.get(), b1, d_in, d_sum, (int)n, 0));
            CK(cub::DeviceReduce::Min(tmp.get(), b2, d_in, d_min, (int)n, 0));
            CK(cub::DeviceReduce::Max(tmp.get(), b3, d_in, d_max, (int)n, 0));
            CK(cudaMemcpyAsync(G.h_small, d, 24, cudaMemcpyDeviceToHost, 0));
        });
        const char *h = static_cast<const char *>(G.h_small);
        double s;
        T mn, mx;
        memcpy(&s, h, 8);
        memcpy(&mn, h + 8, sizeof(T));
        memcpy(&mx, h + 16, sizeof(T));
        EXPECT(r, sum_err(s, ck.sum) <= TOL_F64, "sum %.17g vs check %.17g", s, ck.sum);
        EXPECT(r, gp_key_of(dt, &mn) == ck.min_key, "min %.17g differs from the check's", (double)mn);
        EXPECT(r, gp_key_of(dt, &mx) == ck.max_key, "max %.17g differs from the check's", (double)mx);
        if (have_ours) {
            EXPECT(r, gp_key_of(dt, &mn) == ours.min_key, "min differs from ours");
            EXPECT(r, gp_key_of(dt, &mx) == ours.max_key, "max differs from ours");
        }
        r.note = "3 passes over the input";
    });

    /* Program 6.15: one element per thread, one atomicAdd per block (the seed's types) */
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value ||
                  std::is_same<T, uint32_t>::value)
        bench_seed_sum<T>(d_in, n, ck);

    /* sampled trapezoid: ours = one stats call + the end correction on the host */
    run_row(make_row("trap_sample", tn, n, "ours stats+ends", Kind::OURS, bytes, 0, "GB/s"), [&](Row &r) {
        gp_stats st{};
        time_op(r, noprep, [&] { GP(G.be->stats(dt, d_in, n, GP_STATS_NOHASH, &st)); });
        const double t = trap_of(dt, st, h);
        EXPECT(r, sum_err(t, trap_ref, h) <= TOL_F64, "integral %.17g vs check %.17g", t, trap_ref);
        r.note = format("h = 1/(n-1); integral %.10g", t);
    });
    run_row(make_row("trap_sample", tn, n, "cub Sum+ends", Kind::REF, bytes, 0, "GB/s"), [&](Row &r) {
        double *d_sum = static_cast<double *>(G.d_small);
        double *d_t = d_sum + 1;
        double *h_t = static_cast<double *>(G.h_small);
        size_t tb = 0;
        CK(cub::DeviceReduce::Sum(nullptr, tb, d_in, d_sum, (int)n, 0));
        DevBuf tmp(tb);
        time_op(r, noprep, [&] {
            CK(cub::DeviceReduce::Sum(tmp.get(), tb, d_in, d_sum, (int)n, 0));
            k_trap_end<T><<<1, 1>>>(d_in, n, h, d_sum, d_t);
            CK_LAUNCH("k_trap_end");
            CK(cudaMemcpyAsync(h_t, d_t, sizeof(double), cudaMemcpyDeviceToHost, 0));
        });
        const double t = *h_t;
        EXPECT(r, sum_err(t, trap_ref, h) <= TOL_F64, "integral %.17g vs check %.17g", t, trap_ref);
        if (have_ours) {
            const double to = trap_of(dt, ours, h);
            EXPECT(r, sum_err(t, to, h) <= TOL_F64, "integral %.17g vs ours %.17g", t, to);
        }
        r.note = "Sum, end-correction kernel, copy";
    });
}

/* ---- trapezoid rule of a built-in function ---------------------------------------------- */

/* The trap_fn rows of integrand F over npts points ([0, 1] for x2, [0, pi] for sin): ours,
 * CUB TransformReduce, and for x2 the seed's naive and Program 6.15 kernels. */
template <int F> void bench_trap_fn(long long npts)
{
    const gp_func f = (gp_func)F;
    const std::string op = std::string("trap_fn:") + gp_func_name(f);
    const double a = 0.0, b = (F == GP_FN_X2) ? 1.0 : 3.14159265358979323846;
    const long long ntrap = npts - 1;
    const double h = (b - a) / (double)ntrap;
    const double exact = gp_func_exact(f, a, b);
    const double items = (double)npts;

    double w_ours = NAN;
    run_row(make_row(op.c_str(), "f64", npts, "ours trap_fn", Kind::OURS, 0, items, "Gpts/s"), [&](Row &r) {
        double w = NAN;
        time_op(r, noprep, [&] { GP(G.be->trap_fn(f, a, h, ntrap, 0, npts, &w)); });
        EXPECT(r, rel_err(h * w, exact) <= TOL_EXACT, "integral %.17g vs exact %.17g", h * w, exact);
        w_ours = w;
        r.note = format("integral - exact = %.1e", h * w - exact);
    });
    auto cross = [&](Row &r, double w, double tol) {
        EXPECT(r, rel_err(h * w, exact) <= std::max(tol, TOL_EXACT), "integral %.17g vs exact %.17g",
               h * w, exact);
        if (!std::isnan(w_ours))
            EXPECT(r, rel_err(w, w_ours) <= tol, "weighted sum %.17g vs ours %.17g (rel %.2e)", w,
                   w_ours, rel_err(w, w_ours));
        r.note = format("rel diff vs ours %.1e", std::isnan(w_ours) ? NAN : rel_err(w, w_ours));
    };
    run_row(make_row(op.c_str(), "f64", npts, "cub TransformReduce", Kind::REF, 0, items, "Gpts/s"), [&](Row &r) {
        double *d_w = static_cast<double *>(G.d_small);
        double *h_w = static_cast<double *>(G.h_small);
        thrust::counting_iterator<long long> it(0);
        const TrapTerm<F> term{a, h, ntrap};
        size_t tb = 0;
        CK(cub::DeviceReduce::TransformReduce(nullptr, tb, it, d_w, (int)npts, cuda::std::plus<double>{},
                                              term, 0.0, 0));
        DevBuf tmp(tb);
        time_op(r, noprep, [&] {
            CK(cub::DeviceReduce::TransformReduce(tmp.get(), tb, it, d_w, (int)npts,
                                                  cuda::std::plus<double>{}, term, 0.0, 0));
            CK(cudaMemcpyAsync(h_w, d_w, sizeof(double), cudaMemcpyDeviceToHost, 0));
        });
        cross(r, *h_w, TOL_F64);
    });
    if (F != GP_FN_X2) return;
    const long long nblk = (npts + seed::SEED_BLOCK - 1) / seed::SEED_BLOCK; /* P6.15 atomics */

    run_row(make_row(op.c_str(), "f64", npts, "seed naive atomicAdd/point (f64)", Kind::SEED, 0, items,
                     "Gpts/s"),
            [&](Row &r) {
                double *d_w = static_cast<double *>(G.d_small);
                double *h_w = static_cast<double *>(G.h_small);
                time_op(r, noprep, [&] {
                    CK(seed::trap_naive_x2(a, h, npts, d_w));
                    CK(cudaMemcpyAsync(h_w, d_w, sizeof(double), cudaMemcpyDeviceToHost, 0));
                });
                cross(r, *h_w, tol_seq(TOL_F64, npts, false));
            });
    run_row(make_row(op.c_str(), "f64", npts, "seed P6.15 atomicAdd/block (f64)", Kind::SEED, 0, items,
                     "Gpts/s"),
            [&](Row &r) {
                double *d_w = static_cast<double *>(G.d_small);
                double *h_w = static_cast<double *>(G.h_small);
                time_op(r, noprep, [&] {
                    CK(seed::trap_p615_x2(a, h, npts, d_w));
                    CK(cudaMemcpyAsync(h_w, d_w, sizeof(double), cudaMemcpyDeviceToHost, 0));
                });
                cross(r, *h_w, tol_seq(TOL_F64, nblk, false));
            });
    run_row(make_row(op.c_str(), "f32", npts, "seed P6.15 atomicAdd/block (f32)", Kind::SEED, 0, items,
                     "Gpts/s"),
            [&](Row &r) {
                float *d_w = static_cast<float *>(G.d_small);
                float *h_w = static_cast<float *>(G.h_small);
                time_op(r, noprep, [&] {
                    CK(seed::trap_p615_x2((float)a, (float)h, npts, d_w));
                    CK(cudaMemcpyAsync(h_w, d_w, sizeof(float), cudaMemcpyDeviceToHost, 0));
                });
                cross(r, (double)*h_w, tol_seq(TOL_F32ACC, nblk, true));
                r.note += " (float throughout, as the seed)";
            });
}

/* ---- sorts -------------------------------------------------------------------------------- */

/* qsort comparison by the type's operator< (no NaNs in the data). */
template <class T> int cmp_native(const void *pa, const void *pb)
{
    T x, y;
    memcpy(&x, pa, sizeof x);
    memcpy(&y, pb, sizeof y);
    return (x > y) - (x < y);
}

/* The sort rows of one type and size (see the file comment); the CPU twin's sort of a copy
 * is the bit-exact reference up to 2^24. */
template <class T> void bench_sort(long long n)
{
    using UT = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
    const gp_dtype dt = dtype_of<T>();
    const char *tn = gp_dtype_name(dt);
    const int width = (int)sizeof(T);
    const size_t nb = (size_t)n * sizeof(T);
    const double items = (double)n;

    DevBuf in(nb), work(nb), out(nb), keys(nb);
    T *d_in = in.as<T>();
    T *d_work = work.as<T>();
    T *d_out = out.as<T>();
    gen_data<T>(d_in, n, group_seed(dt, n, 2));
    const ChkOut ck_in = run_check<T>(d_in, n, nullptr);
    /* with NaN or -0.0 in the data (never from our generator) sorted outputs of different
       orders may differ bitwise: then only order + multiset are checked for the others */
    const bool unique_sorted = ck_in.nan == 0 && ck_in.negzero == 0;

    const bool have_ref = n <= TWIN_MAX_N;
    const bool small = n <= SMALL_SORT_MAX_N;
    HostBuf h_in, h_out;
    std::vector<T> h_ref;
    DevBuf d_ref;
    std::string ref_err;
    if (have_ref || small) {
        h_in.alloc(nb);
        CK(cudaMemcpy(h_in.as<T>(), d_in, nb, cudaMemcpyDeviceToHost));
    }
    if (have_ref) {
        /* the CPU twin's full value sort of a copy: the bit-exact reference */
        try {
            h_ref.assign(h_in.as<T>(), h_in.as<T>() + n);
            CPUCK(gp_cpu_to_keys(dt, h_ref.data(), n));
            CPUCK(gp_cpu_sort_keys(width, h_ref.data(), n));
            CPUCK(gp_cpu_from_keys(dt, h_ref.data(), n));
            d_ref.alloc(nb);
            CK(cudaMemcpy(d_ref.get(), h_ref.data(), nb, cudaMemcpyHostToDevice));
            h_out.alloc(nb);
        } catch (const BenchError &e) {
            ref_err = e.what();
        }
    }
    const T *d_refp = (have_ref && ref_err.empty() && unique_sorted) ? d_ref.as<T>() : nullptr;

    /* keys of the input for the sort_keys-only rows (to_keys untimed, checked) */
    CK(cudaMemcpy(keys.get(), d_in, nb, cudaMemcpyDeviceToDevice));
    GP(G.be->to_keys(dt, GP_ASCENDING, keys.get(), n));
    const ChkOut ck_keys = run_check<UT>(keys.as<UT>(), n, nullptr);

    auto copy_in = [&] { CK(cudaMemcpyAsync(d_work, d_in, nb, cudaMemcpyDeviceToDevice, 0)); };

    /* order (own order: gpuprim's keys for ours, operator< for the others), multiset, and
       bitwise against the CPU twin's result where there is one */
    auto check_values = [&](Row &r, const T *d, bool ours_order) {
        const ChkOut c = run_check<T>(d, n, d_refp);
        EXPECT(r, c.hash_bits == ck_in.hash_bits, "multiset changed (hash %#llx != %#llx)", c.hash_bits,
               ck_in.hash_bits);
        const unsigned long long desc = ours_order ? c.desc_key : c.desc_val;
        EXPECT(r, desc == 0, "not sorted: %llu descents", desc);
        if (d_refp) EXPECT(r, c.mismatch == 0, "%llu elements differ from the CPU twin's sort", c.mismatch);
        if (have_ref && !ref_err.empty()) fail(r, "no CPU-twin reference: %s", ref_err.c_str());
    };

    /* ours: a full value sort, as sort_values (the key maps in the sort's first and last
       pass; the row the others are held against) and as to_keys + sort_keys + from_keys */
    double t_ours = NAN;
    for (int fused = 1; fused >= 0; fused--) {
        run_row(make_row("sort", tn, n, fused ? "ours sort_values" : "ours to_keys+sort_keys+from_keys",
                         Kind::OURS, 0, items, "Gkeys/s"),
                [&](Row &r) {
                    time_op(r, copy_in, [&] {
                        if (fused) {
                            GP(G.be->sort_values(dt, d_work, n));
                        } else {
                            GP(G.be->to_keys(dt, GP_ASCENDING, d_work, n));
                            GP(G.be->sort(width, d_work, NULL, n, 0));
                            GP(G.be->from_keys(dt, GP_ASCENDING, d_work, n));
                        }
                    });
                    check_values(r, d_work, true);
                    if (have_ref && ref_err.empty()) {
                        CK(cudaMemcpy(h_out.as<T>(), d_work, nb, cudaMemcpyDeviceToHost));
                        const bool same = memcmp(h_out.as<T>(), h_ref.data(), nb) == 0;
                        EXPECT(r, same, "not bit-exact against gp_cpu_sort_keys");
                        r.note = same ? "bit-exact vs CPU twin" : "";
                    } else {
                        r.note = "checked: sorted + multiset hash";
                    }
                    if (r.ok && fused) t_ours = r.med;
                });
    }
    if (dt == GP_F32 && n == (1ll << 21)) G.ours_sort_f32_2p21 = t_ours;

    /* ours: sort_keys alone, on the keys */
    run_row(make_row("sort", tn, n, "ours sort_keys (keys only)", Kind::OURS, 0, items, "Gkeys/s"),
            [&](Row &r) {
                EXPECT(r, ck_keys.hash_bits == ck_in.hash_keys, "to_keys produced wrong keys");
                time_op(r,
                        [&] { CK(cudaMemcpyAsync(d_work, keys.get(), nb, cudaMemcpyDeviceToDevice, 0)); },
                        [&] { GP(G.be->sort(width, d_work, NULL, n, 0)); });
                const ChkOut c = run_check<UT>(reinterpret_cast<const UT *>(d_work), n, nullptr);
                EXPECT(r, c.desc_val == 0, "keys not sorted: %llu descents", c.desc_val);
                EXPECT(r, c.hash_bits == ck_keys.hash_bits, "key multiset changed");
                r.note = format("u%d keys", 8 * width);
            });

    /* CUB radix sort (keys only, out of place) */
    run_row(make_row("sort", tn, n, "cub RadixSort::SortKeys", Kind::REF, 0, items, "Gkeys/s"), [&](Row &r) {
        size_t tb = 0;
        CK(cub::DeviceRadixSort::SortKeys(nullptr, tb, d_work, d_out, (int)n, 0, width * 8, 0));
        DevBuf tmp(tb);
        time_op(r, copy_in, [&] {
            CK(cub::DeviceRadixSort::SortKeys(tmp.get(), tb, d_work, d_out, (int)n, 0, width * 8, 0));
        });
        check_values(r, d_out, false);
        r.note = "out of place";
    });

    /* CUB merge sort (in place, operator<) */
    run_row(make_row("sort", tn, n, "cub MergeSort::SortKeys", Kind::REF, 0, items, "Gkeys/s"), [&](Row &r) {
        size_t tb = 0;
        CK(cub::DeviceMergeSort::SortKeys(nullptr, tb, d_work, (int)n, Less{}, 0));
        DevBuf tmp(tb);
        time_op(r, copy_in, [&] {
            CK(cub::DeviceMergeSort::SortKeys(tmp.get(), tb, d_work, (int)n, Less{}, 0));
        });
        check_values(r, d_work, false);
        r.note = "comparison sort, like ours";
    });

    /* thrust::sort (as users call it: its temporary allocation included) */
    run_row(make_row("sort", tn, n, "thrust::sort", Kind::REF, 0, items, "Gkeys/s"), [&](Row &r) {
        time_op(r, copy_in, [&] { thrust::sort(thrust::device, d_work, d_work + n); });
        check_values(r, d_work, false);
        r.note = "includes thrust's temp allocation";
    });

    /* the seed's bitonic sort: one launch per (bf_sz, stage) */
    if (small && seed::bitonic_size_ok(n)) {
        run_row(make_row("sort", tn, n, "seed bitonic (1 launch/stage)", Kind::SEED, 0, items, "Gkeys/s"),
                [&](Row &r) {
                    time_op(r, copy_in, [&] { CK(seed::bitonic_sort(d_work, n)); });
                    check_values(r, d_work, false);
                    int lg = 0;
                    while ((1ll << lg) < n) lg++;
                    r.note = format("%d launches", lg * (lg + 1) / 2);
                    if (r.ok && dt == GP_F32 && n == (1ll << 21)) G.seed_bitonic_f32_2p21 = r.med;
                });
    }

    /* CPU qsort of the same host data, once */
    if (small) {
        run_row(make_row("sort", tn, n, "CPU qsort (once)", Kind::CPU, 0, items, "Gkeys/s"), [&](Row &r) {
            std::vector<T> v(h_in.as<T>(), h_in.as<T>() + n);
            const auto c0 = std::chrono::steady_clock::now();
            qsort(v.data(), (size_t)n, sizeof(T), cmp_native<T>);
            const auto c1 = std::chrono::steady_clock::now();
            r.timed = true;
            r.reps = 1;
            r.med = r.mn = r.mx = std::chrono::duration<double, std::milli>(c1 - c0).count();
            bool sorted = true;
            for (long long i = 0; i + 1 < n; i++)
                if (v[i + 1] < v[i]) {
                    sorted = false;
                    break;
                }
            EXPECT(r, sorted, "qsort result not sorted");
            if (have_ref && ref_err.empty() && unique_sorted)
                EXPECT(r, memcmp(v.data(), h_ref.data(), nb) == 0, "qsort result differs from the CPU twin's");
            r.note = "host wall clock, 1 run";
            if (r.ok && dt == GP_F32 && n == (1ll << 21)) G.qsort_f32_2p21 = r.med;
        });
    }

    /* keys + 64-bit index payload: ours (gpuprim/exact_sum.h sort_pairs on the keys, values = input
       positions), stable ((key, index) order: what CUB's radix sort gives) and not stable */
    for (int stable = 1; stable >= 0; stable--) {
        run_row(make_row("sort_pairs", tn, n,
                         stable ? "ours to_keys+sort_pairs+from_keys (stable)"
                                : "ours to_keys+sort_pairs+from_keys",
                         Kind::OURS, 0, items, "Gkeys/s"),
                [&](Row &r) {
                    DevBuf idx((size_t)n * 8);
                    uint64_t *d_idx = idx.as<uint64_t>();
                    time_op(r,
                            [&] {
                                copy_in();
                                k_iota<<<util_grid(), UTIL_THREADS>>>(d_idx, n);
                                CK_LAUNCH("k_iota");
                            },
                            [&] {
                                GP(G.be->to_keys(dt, GP_ASCENDING, d_work, n));
                                GP(G.be->sort(width, d_work, d_idx, n, stable));
                                GP(G.be->from_keys(dt, GP_ASCENDING, d_work, n));
                            });
                    check_values(r, d_work, true);
                    unsigned long long *d_pc = static_cast<unsigned long long *>(G.d_small);
                    unsigned long long hp[2];
                    CK(cudaMemset(d_pc, 0, 16));
                    k_pairs_check<T><<<util_grid(), CHK_THREADS>>>(d_work, d_in, d_idx, n, d_pc);
                    CK_LAUNCH("k_pairs_check");
                    CK(cudaMemcpy(hp, d_pc, 16, cudaMemcpyDeviceToHost));
                    EXPECT(r, hp[0] == 0, "%llu payload indices do not point at their key", hp[0]);
                    unsigned long long he[2];
                    k_iota<<<util_grid(), UTIL_THREADS>>>(d_idx, n);
                    CK_LAUNCH("k_iota");
                    CK(cudaMemset(d_pc, 0, 16));
                    k_pairs_check<T><<<util_grid(), CHK_THREADS>>>(d_in, d_in, d_idx, n, d_pc);
                    CK_LAUNCH("k_pairs_check");
                    CK(cudaMemcpy(he, d_pc, 16, cudaMemcpyDeviceToHost));
                    EXPECT(r, hp[1] == he[1], "payload is not a permutation of 0..n-1");
                    r.note = stable ? "payload checked; (key, index) order" : "payload checked";
                });
    }
    run_row(make_row("sort_pairs", tn, n, "cub RadixSort::SortPairs (u64 idx)", Kind::REF, 0, items,
                     "Gkeys/s"),
            [&](Row &r) {
                DevBuf idx_in((size_t)n * 8), idx_out((size_t)n * 8);
                uint64_t *d_ii = idx_in.as<uint64_t>(), *d_io = idx_out.as<uint64_t>();
                k_iota<<<util_grid(), UTIL_THREADS>>>(d_ii, n);
                CK_LAUNCH("k_iota");
                size_t tb = 0;
                CK(cub::DeviceRadixSort::SortPairs(nullptr, tb, d_work, d_out, d_ii, d_io, (int)n, 0,
                                                   width * 8, 0));
                DevBuf tmp(tb);
                time_op(r, copy_in, [&] {
                    CK(cub::DeviceRadixSort::SortPairs(tmp.get(), tb, d_work, d_out, d_ii, d_io, (int)n, 0,
                                                       width * 8, 0));
                });
                check_values(r, d_out, false);
                /* payload: out[i] == in[idx[i]] and the indices are 0..n-1 (fingerprint) */
                unsigned long long *d_pc = static_cast<unsigned long long *>(G.d_small);
                unsigned long long hp[2], he[2];
                CK(cudaMemset(d_pc, 0, 16));
                k_pairs_check<T><<<util_grid(), CHK_THREADS>>>(d_out, d_in, d_io, n, d_pc);
                CK_LAUNCH("k_pairs_check");
                CK(cudaMemcpy(hp, d_pc, 16, cudaMemcpyDeviceToHost));
                CK(cudaMemset(d_pc, 0, 16));
                k_pairs_check<T><<<util_grid(), CHK_THREADS>>>(d_in, d_in, d_ii, n, d_pc);
                CK_LAUNCH("k_pairs_check");
                CK(cudaMemcpy(he, d_pc, 16, cudaMemcpyDeviceToHost));
                EXPECT(r, hp[0] == 0, "%llu payload indices do not point at their key", hp[0]);
                EXPECT(r, hp[1] == he[1] && he[0] == 0, "payload is not a permutation of 0..n-1");
                r.note = "reference only (payload checked)";
            });
}

/* ---- groups ------------------------------------------------------------------------------ */

/* Bytes of device memory a group needs (rough upper bound, CUB temporaries included). */
size_t group_bytes(const char *what, size_t esize, long long n)
{
    const size_t nb = (size_t)n * esize;
    if (strcmp(what, "reduce") == 0) return nb + (64ull << 20);
    if (strcmp(what, "sort") == 0) return 6 * nb + 2 * (size_t)n * 8 + 2 * nb + (64ull << 20);
    return 64ull << 20;
}

/* Runs one group (all rows of one op / type / n) unless the soft time limit has passed or
 * the device lacks memory for it; a setup failure becomes a failed "(setup)" row. */
template <class Fn> void run_group(const char *what, const char *op, const char *type, long long n,
                                   size_t esize, Fn &&fn)
{
    if (elapsed_s() > G.opt.time_limit) {
        G.skipped_groups++;
        fprintf(stderr, "[%7.1f s] %s %s %s: skipped (soft time limit %.0f s reached)\n", elapsed_s(),
                op, type, n_str(n).c_str(), G.opt.time_limit);
        Row r = make_row(op, type, n, "(group)", Kind::NA, 0, 0, "");
        r.skipped = true;
        r.check = "skipped";
        r.note = "soft time limit reached";
        G.rows.push_back(r);
        return;
    }
    size_t freeb = 0, totalb = 0;
    CK(cudaMemGetInfo(&freeb, &totalb));
    const size_t need = group_bytes(what, esize, n);
    if (need + (256ull << 20) > freeb) {
        G.skipped_groups++;
        Row r = make_row(op, type, n, "(group)", Kind::NA, 0, 0, "");
        r.skipped = true;
        r.check = "skipped";
        r.note = format("needs ~%.1f GiB of device memory, %.1f GiB free", need / 1073741824.0,
                        freeb / 1073741824.0);
        fprintf(stderr, "[%7.1f s] %s %s %s: skipped (%s)\n", elapsed_s(), op, type, n_str(n).c_str(),
                r.note.c_str());
        G.rows.push_back(r);
        return;
    }
    try {
        fn();
    } catch (const FatalError &) {
        throw;
    } catch (const std::exception &e) {
        Row r = make_row(op, type, n, "(setup)", Kind::NA, 0, 0, "");
        fail(r, "%s", e.what());
        std::string why;
        const bool ok = context_ok(&why);
        finish_row(r);
        if (!ok) throw FatalError("CUDA context unusable after a failure: " + why);
    }
}

/* Fills the ratio columns: our rows against the group's primary CUB row, every other timed
 * row against our (first) row: time(that) / time(ours), > 1 means ours is faster. */
void compute_ratios()
{
    auto primary = [](const std::string &op) -> const char * {
        if (op == "stats") return "cub Sum";
        if (op == "trap_sample") return "cub Sum+ends";
        if (op.rfind("trap_fn:", 0) == 0) return "cub TransformReduce";
        if (op == "sort") return "cub MergeSort::SortKeys";
        if (op == "sort_pairs") return "cub RadixSort::SortPairs (u64 idx)";
        return nullptr;
    };
    auto secondary = [](const std::string &op) -> const char * {
        if (op == "stats") return "cub Sum+Min+Max";
        if (op == "sort") return "cub RadixSort::SortKeys";
        return nullptr;
    };
    auto find = [](const Row &g, const char *impl) -> const Row * {
        if (!impl) return nullptr;
        for (const Row &x : G.rows)
            if (x.op == g.op && x.n == g.n && x.impl == impl && x.timed && x.ok &&
                (x.type == g.type || g.op.rfind("trap_fn:", 0) == 0))
                return &x;
        return nullptr;
    };
    for (Row &r : G.rows) {
        if (!r.timed || !(r.med > 0) || !r.ok) continue;
        if (r.kind == Kind::OURS) {
            const Row *p = find(r, primary(r.op));
            if (p) {
                r.ratio = p->med / r.med;
                r.ratio_ref = p->impl;
            }
            const Row *s = find(r, secondary(r.op));
            if (s) {
                const std::string extra = format("vs %s %.2fx", s->impl.c_str(), s->med / r.med);
                r.note = r.note.empty() ? extra : r.note + "; " + extra;
            }
            if (r.op == "sort_pairs") { /* the payload's cost: time / our keys-only sort */
                Row keys_row = r;
                keys_row.op = "sort";
                const Row *k = find(keys_row, "ours to_keys+sort_keys+from_keys");
                if (k) {
                    const std::string extra = format("%.2fx our keys-only time", r.med / k->med);
                    r.note = r.note.empty() ? extra : r.note + "; " + extra;
                }
            }
        } else if (r.kind != Kind::NA && r.op != "ceiling") {
            const std::string op = r.op;
            const Row *o = nullptr;
            for (const Row &x : G.rows)
                if (x.kind == Kind::OURS && x.op == op && x.n == r.n && x.timed && x.ok &&
                    (x.type == r.type || op.rfind("trap_fn:", 0) == 0)) {
                    o = &x;
                    break;
                }
            if (o) {
                r.ratio = r.med / o->med;
                r.ratio_ref = o->impl;
            }
        }
    }
}

/* ---- output ------------------------------------------------------------------------------- */

/* printf of v, or "-" for NaN / infinity. */
std::string fmt_num(double v, const char *f)
{
    if (std::isnan(v) || std::isinf(v)) return "-";
    return format(f, v);
}

/* The one results table (groups separated by blank lines). */
void print_table(FILE *o)
{
    fprintf(o, "\n%-12s %-4s %-6s %-36s %11s %4s %10s %-7s %6s %8s  %-5s %s\n", "op", "type", "n", "impl",
            "median_ms", "reps", "throughput", "unit", "%ceil", "ours_vs", "check", "note");
    std::string last_key;
    for (const Row &r : G.rows) {
        /* one block per op / type / n; sort_pairs belongs to its sort block, and trap_fn
           rows (the f32 seed among the f64 ones) group by op and n only */
        const std::string opk = r.op == "sort_pairs" ? std::string("sort") : r.op;
        const bool fn = r.op.rfind("trap_fn:", 0) == 0;
        const std::string key = opk + "|" + (fn ? std::string() : r.type) + "|" + std::to_string(r.n);
        if (!last_key.empty() && key != last_key) fputc('\n', o);
        last_key = key;
        std::string med = r.kind == Kind::NA ? (r.skipped ? "skipped" : "n/a") : fmt_num(r.med, "%.4f");
        fprintf(o, "%-12s %-4s %-6s %-36s %11s %4s %10s %-7s %6s %8s  %-5s %s\n", r.op.c_str(),
                r.type.c_str(), r.op == "ceiling" ? format("%.0fMiB", r.n / 1048576.0).c_str() : n_str(r.n).c_str(),
                r.impl.c_str(), med.c_str(), r.timed ? std::to_string(r.reps).c_str() : "-",
                fmt_num(r.tput, r.tput >= 100 ? "%.1f" : "%.3f").c_str(), r.unit.c_str(),
                fmt_num(r.pct, "%.1f").c_str(), fmt_num(r.ratio, "%.2fx").c_str(),
                r.ok ? (r.skipped ? "skip" : (r.kind == Kind::NA ? "n/a" : "ok")) : "FAIL",
                r.ok ? r.note.c_str() : (r.check + (r.note.empty() ? "" : " | " + r.note)).c_str());
    }
}

/* A JSON string literal of s. */
std::string json_str(const std::string &s)
{
    std::string o = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            o += '\\';
            o += (char)c;
        } else if (c < 0x20) {
            o += format("\\u%04x", c);
        } else {
            o += (char)c;
        }
    }
    return o + "\"";
}

/* A JSON number, or null for NaN / infinity. */
std::string json_num(double v)
{
    if (std::isnan(v) || std::isinf(v)) return "null";
    return format("%.9g", v);
}

/* The current UTC time, ISO 8601. */
std::string iso_date()
{
    const time_t now = time(nullptr);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    char b[64];
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    return b;
}

/* "ok", "incomplete", "failed" or "fatal" for an exit code. */
const char *status_word(int code)
{
    switch (code) {
    case EXIT_OK: return "ok";
    case EXIT_INCOMPLETE: return "incomplete";
    default: return G.fatal.empty() ? "failed" : "fatal";
    }
}

/* Writes the run (device, date, commit, ceilings, rows, status) as JSON to path. */
bool write_json(const std::string &path, int code)
{
    FILE *f = fopen(path.c_str(), "w");
    if (!f) {
        fprintf(stderr, "gpuprim_bench: cannot write %s: %s\n", path.c_str(), strerror(errno));
        return false;
    }
    const cudaDeviceProp &p = G.prop;
    fprintf(f, "{\n  \"tool\": \"gpuprim_bench\",\n");
    fprintf(f, "  \"gpuprim_version\": %s,\n", json_str(gp_version()).c_str());
    fprintf(f, "  \"git_commit\": %s,\n", json_str(gp_git_commit()).c_str());
    fprintf(f, "  \"date\": %s,\n", json_str(iso_date()).c_str());
    fprintf(f, "  \"command\": %s,\n", json_str(G.cmdline).c_str());
    fprintf(f, "  \"device\": {\"name\": %s, \"sm_count\": %d, \"cc\": \"%d.%d\", \"clock_khz\": %d, "
               "\"mem_clock_khz\": %d, \"mem_bus_width_bits\": %d, \"l2_bytes\": %d, "
               "\"global_mem_bytes\": %zu},\n",
            json_str(p.name).c_str(), p.multiProcessorCount, p.major, p.minor, G.clock_khz,
            G.mem_clock_khz, p.memoryBusWidth, p.l2CacheSize, p.totalGlobalMem);
    fprintf(f, "  \"cuda_runtime\": %d,\n", CUDART_VERSION);
    fprintf(f, "  \"seed\": %llu,\n  \"base_reps\": %d,\n  \"l2_flush_bytes\": %zu,\n", G.opt.seed,
            G.opt.reps, FLUSH_BYTES);
    fprintf(f, "  \"ceilings\": {\"read_kernel_gbps\": %s, \"d2d_copy_gbps\": %s, \"read_ms\": %s, "
               "\"copy_ms\": %s, \"check\": %s},\n",
            json_num(G.read_gbps).c_str(), json_num(G.copy_gbps).c_str(), json_num(G.read_ms).c_str(),
            json_num(G.copy_ms).c_str(), json_str(G.ceiling_check).c_str());
    fprintf(f, "  \"qsort_comparison\": {\"n\": 2097152, \"type\": \"f32\", \"ours_ms\": %s, "
               "\"qsort_ms\": %s, \"seed_bitonic_ms\": %s, \"speedup_vs_qsort\": %s, "
               "\"seed_reference\": \"Quadro P5000 bitonic 13.1 ms, Xeon 4116 qsort 539 ms (41.1x)\"},\n",
            json_num(G.ours_sort_f32_2p21).c_str(), json_num(G.qsort_f32_2p21).c_str(),
            json_num(G.seed_bitonic_f32_2p21).c_str(),
            json_num(G.qsort_f32_2p21 / G.ours_sort_f32_2p21).c_str());
    fprintf(f, "  \"rows\": [\n");
    for (size_t i = 0; i < G.rows.size(); i++) {
        const Row &r = G.rows[i];
        fprintf(f,
                "    {\"op\": %s, \"type\": %s, \"n\": %lld, \"impl\": %s, \"kind\": %s, \"timed\": %s, "
                "\"reps\": %d, \"median_ms\": %s, \"min_ms\": %s, \"max_ms\": %s, \"throughput\": %s, "
                "\"unit\": %s, \"pct_read_ceiling\": %s, \"ratio_ours\": %s, \"ratio_ref\": %s, "
                "\"valid\": %s, \"skipped\": %s, \"check\": %s, \"note\": %s}%s\n",
                json_str(r.op).c_str(), json_str(r.type).c_str(), r.n, json_str(r.impl).c_str(),
                json_str(kind_name(r.kind)).c_str(), r.timed ? "true" : "false", r.reps,
                json_num(r.med).c_str(), json_num(r.mn).c_str(), json_num(r.mx).c_str(),
                json_num(r.tput).c_str(), json_str(r.unit).c_str(), json_num(r.pct).c_str(),
                json_num(r.ratio).c_str(), json_str(r.ratio_ref).c_str(), r.ok ? "true" : "false",
                r.skipped ? "true" : "false", json_str(r.check).c_str(), json_str(r.note).c_str(),
                i + 1 < G.rows.size() ? "," : "");
    }
    fprintf(f, "  ],\n");
    fprintf(f, "  \"failures\": %d,\n  \"skipped_groups\": %d,\n  \"fatal\": %s,\n", G.failures,
            G.skipped_groups, G.fatal.empty() ? "null" : json_str(G.fatal).c_str());
    fprintf(f, "  \"total_seconds\": %.1f,\n  \"status\": %s,\n  \"exit_code\": %d\n}\n", elapsed_s(),
            json_str(status_word(code)).c_str(), code);
    const bool ok = fflush(f) == 0 && !ferror(f);
    if (fclose(f) != 0 || !ok) {
        fprintf(stderr, "gpuprim_bench: error writing %s\n", path.c_str());
        return false;
    }
    return true;
}

/* ---- command line --------------------------------------------------------------------------- */

/* The command-line help. */
void usage(FILE *o)
{
    fprintf(o,
            "usage: gpuprim_bench [--quick] [--sizes LIST] [--json FILE] [--reps N] [--seed S]\n"
            "                     [--ops LIST] [--types LIST] [--time-limit SEC] [--help]\n"
            "  --quick          n = 2^20 and 2^21 only (the CTest correctness run)\n"
            "  --sizes LIST     comma-separated n for every op (2^k, 1e6 or plain counts, 2..2^30);\n"
            "                   default: 2^20,2^21,2^24,2^27 and also 2^28 for stats/trapezoid\n"
            "  --json FILE      write every row plus device, date, commit and ceilings as JSON\n"
            "  --reps N         repetitions of fast operations (default 20, at least 5); slower\n"
            "                   ones use fewer: 10 above 20 ms, 7 above 50 ms, 5 above 200 ms\n"
            "  --seed S         data seed (default: from the clock; printed)\n"
            "  --ops LIST       any of reduce,trap,sort (default all; the ceiling always runs)\n"
            "  --types LIST     any of f32,f64,u32,i32,i64,u64 (default all; i32, i64 and u64\n"
            "                   run the reduce ops only)\n"
            "  --time-limit S   soft limit: no new group starts after S seconds (default 600);\n"
            "                   the process is killed at S + 300 seconds (exit 124)\n"
            "exit: 0 ok, 1 validation or CUDA failure, 2 usage, 3 incomplete, 77 no GPU (SKIP)\n");
}

/* Parses "2^k" (k in 1..30) or an integral count ("1e6" allowed) in [2, 2^30]. */
bool parse_count(const std::string &s, long long *out)
{
    if (s.empty()) return false;
    long long v = 0;
    if (s.size() > 2 && s[0] == '2' && s[1] == '^') {
        char *end = nullptr;
        const long k = strtol(s.c_str() + 2, &end, 10);
        if (*end != '\0' || k < 1 || k > 30) return false;
        v = 1ll << k;
    } else {
        char *end = nullptr;
        const double d = strtod(s.c_str(), &end);
        if (*end != '\0' || !(d >= 2.0) || d > (double)MAX_N || d != floor(d)) return false;
        v = (long long)d;
    }
    if (v < 2 || v > MAX_N) return false;
    *out = v;
    return true;
}

/* The non-empty comma-separated tokens of s. */
std::vector<std::string> split(const std::string &s)
{
    std::vector<std::string> v;
    size_t i = 0;
    while (i <= s.size()) {
        const size_t j = s.find(',', i);
        const std::string t = s.substr(i, j == std::string::npos ? std::string::npos : j - i);
        if (!t.empty()) v.push_back(t);
        if (j == std::string::npos) break;
        i = j + 1;
    }
    return v;
}

/* Parses the command line into o. Returns -1 to go on, else the exit code. */
int parse_args(int argc, char **argv, Options &o)
{
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto value = [&](const char *name) -> const char * {
            if (i + 1 >= argc) {
                fprintf(stderr, "gpuprim_bench: %s needs a value\n", name);
                return nullptr;
            }
            return argv[++i];
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return EXIT_OK;
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--sizes") {
            const char *v = value("--sizes");
            if (!v) return EXIT_USAGE;
            o.sizes.clear();
            for (const std::string &t : split(v)) {
                long long n = 0;
                if (!parse_count(t, &n)) {
                    fprintf(stderr, "gpuprim_bench: bad size '%s' (2^k with k in 1..30, or a count in [2, 2^30])\n",
                            t.c_str());
                    return EXIT_USAGE;
                }
                o.sizes.push_back(n);
            }
            if (o.sizes.empty()) {
                fprintf(stderr, "gpuprim_bench: --sizes needs at least one size\n");
                return EXIT_USAGE;
            }
            o.sizes_given = true;
        } else if (a == "--json") {
            const char *v = value("--json");
            if (!v) return EXIT_USAGE;
            o.json = v;
        } else if (a == "--reps") {
            const char *v = value("--reps");
            if (!v) return EXIT_USAGE;
            char *end = nullptr;
            const long r = strtol(v, &end, 10);
            if (*end != '\0' || r < 5 || r > 1000) {
                fprintf(stderr, "gpuprim_bench: --reps must be 5..1000\n");
                return EXIT_USAGE;
            }
            o.reps = (int)r;
        } else if (a == "--seed") {
            const char *v = value("--seed");
            if (!v) return EXIT_USAGE;
            char *end = nullptr;
            o.seed = strtoull(v, &end, 0);
            if (*end != '\0' || *v == '\0') {
                fprintf(stderr, "gpuprim_bench: bad --seed '%s'\n", v);
                return EXIT_USAGE;
            }
            o.seed_given = true;
        } else if (a == "--time-limit") {
            const char *v = value("--time-limit");
            if (!v) return EXIT_USAGE;
            char *end = nullptr;
            const double t = strtod(v, &end);
            if (*end != '\0' || !(t >= 1.0) || t > 86400.0) {
                fprintf(stderr, "gpuprim_bench: --time-limit must be 1..86400 seconds\n");
                return EXIT_USAGE;
            }
            o.time_limit = t;
        } else if (a == "--ops") {
            const char *v = value("--ops");
            if (!v) return EXIT_USAGE;
            o.do_reduce = o.do_trap = o.do_sort = false;
            for (const std::string &t : split(v)) {
                if (t == "reduce") o.do_reduce = true;
                else if (t == "trap") o.do_trap = true;
                else if (t == "sort") o.do_sort = true;
                else {
                    fprintf(stderr, "gpuprim_bench: unknown op '%s' (reduce, trap, sort)\n", t.c_str());
                    return EXIT_USAGE;
                }
            }
        } else if (a == "--types") {
            const char *v = value("--types");
            if (!v) return EXIT_USAGE;
            o.t_f32 = o.t_f64 = o.t_u32 = o.t_i32 = o.t_i64 = o.t_u64 = false;
            for (const std::string &t : split(v)) {
                if (t == "f32") o.t_f32 = true;
                else if (t == "f64") o.t_f64 = true;
                else if (t == "u32") o.t_u32 = true;
                else if (t == "i32") o.t_i32 = true;
                else if (t == "i64") o.t_i64 = true;
                else if (t == "u64") o.t_u64 = true;
                else {
                    fprintf(stderr, "gpuprim_bench: unknown type '%s' (f32, f64, u32, i32, i64, u64)\n", t.c_str());
                    return EXIT_USAGE;
                }
            }
        } else {
            fprintf(stderr, "gpuprim_bench: unknown argument '%s'\n", a.c_str());
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (o.quick && o.sizes_given) {
        fprintf(stderr, "gpuprim_bench: --quick and --sizes exclude each other\n");
        return EXIT_USAGE;
    }
    return -1;
}

/* SIGALRM: the hard time limit (async-signal-safe: write + _exit). */
extern "C" void on_alarm(int)
{
    static const char msg[] = "\ngpuprim_bench: FATAL: hard time limit reached (soft limit + 300 s); exiting 124\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(124);
}

/* ---- the run ---------------------------------------------------------------------------- */

/* The ceiling, then every group of the selected ops, types and sizes. */
void run_all()
{
    std::vector<long long> red_sizes, sort_sizes;
    if (G.opt.sizes_given) {
        red_sizes = sort_sizes = G.opt.sizes;
    } else if (G.opt.quick) {
        red_sizes = sort_sizes = {1ll << 20, 1ll << 21};
    } else {
        sort_sizes = {1ll << 20, 1ll << 21, 1ll << 24, 1ll << 27};
        red_sizes = sort_sizes;
        red_sizes.push_back(1ll << 28);
    }

    bench_ceiling();
    if (!(G.read_gbps > 0)) fprintf(stderr, "gpuprim_bench: read ceiling not measured; %%ceil left empty\n");

    if (G.opt.do_reduce) {
        for (long long n : red_sizes) {
            if (G.opt.t_f32) run_group("reduce", "stats", "f32", n, 4, [&] { bench_reduce<float>(n); });
            if (G.opt.t_f64) run_group("reduce", "stats", "f64", n, 8, [&] { bench_reduce<double>(n); });
            if (G.opt.t_u32) run_group("reduce", "stats", "u32", n, 4, [&] { bench_reduce<uint32_t>(n); });
            if (G.opt.t_i32) run_group("reduce", "stats", "i32", n, 4, [&] { bench_reduce<int32_t>(n); });
            if (G.opt.t_i64) run_group("reduce", "stats", "i64", n, 8, [&] { bench_reduce<int64_t>(n); });
            if (G.opt.t_u64) run_group("reduce", "stats", "u64", n, 8, [&] { bench_reduce<uint64_t>(n); });
        }
    }
    if (G.opt.do_trap) {
        for (long long n : red_sizes) {
            run_group("trap", "trap_fn:x2", "f64", n, 8, [&] { bench_trap_fn<GP_FN_X2>(n); });
            run_group("trap", "trap_fn:sin", "f64", n, 8, [&] { bench_trap_fn<GP_FN_SIN>(n); });
        }
    }
    if (G.opt.do_sort) {
        for (long long n : sort_sizes) {
            if (G.opt.t_f32) run_group("sort", "sort", "f32", n, 4, [&] { bench_sort<float>(n); });
            if (G.opt.t_f64) run_group("sort", "sort", "f64", n, 8, [&] { bench_sort<double>(n); });
            if (G.opt.t_u32) run_group("sort", "sort", "u32", n, 4, [&] { bench_sort<uint32_t>(n); });
        }
    }
}

/* Device properties, events and the benchmark's scratch buffers. */
void init_device()
{
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&G.prop, dev));
    /* cudaDeviceProp lost clockRate / memoryClockRate in CUDA 13: ask the attributes */
    if (cudaDeviceGetAttribute(&G.clock_khz, cudaDevAttrClockRate, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        G.clock_khz = 0;
    }
    if (cudaDeviceGetAttribute(&G.mem_clock_khz, cudaDevAttrMemoryClockRate, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        G.mem_clock_khz = 0;
    }
    CK(cudaEventCreate(&G.ev0));
    CK(cudaEventCreate(&G.ev1));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_read, READ_THREADS, 0));
    if (per_sm < 4) per_sm = 4;
    G.read_grid = G.prop.multiProcessorCount * per_sm;
    G.flush = G.be->alloc(2 * FLUSH_BYTES);
    G.d_flush_acc = static_cast<unsigned long long *>(G.be->alloc(256));
    G.d_small = G.be->alloc(256);
    G.d_chk = G.be->alloc(sizeof(ChkOut));
    G.h_small = G.be->host_alloc(256);
    if (!G.flush || !G.d_flush_acc || !G.d_small || !G.d_chk || !G.h_small)
        throw BenchError(format("allocation of the benchmark's scratch failed: %s", G.be->last_error()));
    CK(cudaMemset(G.flush, 0, 2 * FLUSH_BYTES));
    CK(cudaMemset(G.d_flush_acc, 0, 8));
    CK(cudaDeviceSynchronize());
}

/* Version, commit, date, device and run parameters. */
void print_header(FILE *o)
{
    const cudaDeviceProp &p = G.prop;
    fprintf(o, "gpuprim_bench %s (commit %s), %s\n", gp_version(), gp_git_commit(), iso_date().c_str());
    fprintf(o, "device: %s, cc %d.%d, %d SMs, SM clock %.0f MHz, memory clock %.0f MHz, %d-bit bus, L2 %.0f MiB, %.1f GiB\n",
            p.name, p.major, p.minor, p.multiProcessorCount, G.clock_khz / 1000.0, G.mem_clock_khz / 1000.0,
            p.memoryBusWidth, p.l2CacheSize / 1048576.0, p.totalGlobalMem / 1073741824.0);
    fprintf(o, "seed %llu%s, reps %d (fewer above 20 ms), L2 flush before each rep: %zu MiB memset + %zu MiB read\n",
            G.opt.seed, G.opt.seed_given ? "" : " (from the clock)", G.opt.reps, FLUSH_BYTES >> 20,
            FLUSH_BYTES >> 20);
}

/* The ceilings, the qsort comparison at 2^21 and the meaning of ours_vs. */
void print_summary(FILE *o)
{
    fprintf(o, "\nread ceiling: %s GB/s (read-only kernel, 16-byte loads); device-to-device cudaMemcpy: %s GB/s "
               "(read + write bytes)\n",
            fmt_num(G.read_gbps, "%.1f").c_str(), fmt_num(G.copy_gbps, "%.1f").c_str());
    if (!std::isnan(G.ours_sort_f32_2p21) || !std::isnan(G.qsort_f32_2p21)) {
        fprintf(o, "sort f32 n = 2^21: ours %s ms, CPU qsort %s ms -> %s faster than qsort; seed-style bitonic here %s ms\n",
                fmt_num(G.ours_sort_f32_2p21, "%.3f").c_str(), fmt_num(G.qsort_f32_2p21, "%.1f").c_str(),
                fmt_num(G.qsort_f32_2p21 / G.ours_sort_f32_2p21, "%.1fx").c_str(),
                fmt_num(G.seed_bitonic_f32_2p21, "%.3f").c_str());
        fprintf(o, "  (the chapter: Quadro P5000 bitonic 13.1 ms, Xeon 4116 qsort 539 ms, 41.1x)\n");
    }
    fprintf(o, "ours_vs = time(other) / time(ours), > 1: ours faster; on our rows 'other' is the CUB "
               "reference (stats: Sum, trap_sample: Sum+ends, trap_fn: TransformReduce, sort: MergeSort)\n");

    /* headline: each of our rows at the largest n it ran at */
    fprintf(o, "\nheadline (largest n per op / type):\n");
    std::vector<std::string> seen;
    for (size_t i = G.rows.size(); i-- > 0;) {
        const Row &r = G.rows[i];
        if (r.kind != Kind::OURS) continue;
        const std::string key = r.op + "|" + r.type + "|" + r.impl;
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
    }
    for (auto it = seen.rbegin(); it != seen.rend(); ++it) {
        const Row *best = nullptr;
        for (const Row &r : G.rows)
            if (r.kind == Kind::OURS && r.op + "|" + r.type + "|" + r.impl == *it && (!best || r.n > best->n))
                best = &r;
        if (!best) continue;
        fprintf(o, "  %-12s %-4s %-6s %-34s %s ms  %s %s%s  %s %s\n", best->op.c_str(), best->type.c_str(),
                n_str(best->n).c_str(), best->impl.c_str(), fmt_num(best->med, "%.4f").c_str(),
                fmt_num(best->tput, best->tput >= 100 ? "%.1f" : "%.3f").c_str(), best->unit.c_str(),
                std::isnan(best->pct) ? "" : format(" (%.0f%% of read ceiling)", best->pct).c_str(),
                best->ok ? (best->ratio_ref.empty() ? "" : ("vs " + best->ratio_ref + ":").c_str()) : "FAILED",
                best->ok ? fmt_num(best->ratio, "%.2fx").c_str() : best->check.c_str());
    }
}

} // namespace

/* Entry point: parses the command line, skips with 77 when no CUDA device is visible, runs
 * the ceiling and every group, prints the table (stdout) and writes --json. */
int main(int argc, char **argv)
{
    G.t0 = std::chrono::steady_clock::now();
    memset(&G.prop, 0, sizeof G.prop);
    for (int i = 0; i < argc; i++) {
        if (i) G.cmdline += ' ';
        G.cmdline += argv[i];
    }
    int rc = parse_args(argc, argv, G.opt);
    if (rc >= 0) return rc;
    if (!G.opt.seed_given)
        G.opt.seed = (unsigned long long)time(nullptr) ^ ((unsigned long long)getpid() << 32);

    if (gp_cuda_device_count() <= 0) {
        char why[512] = "";
        (void)gp_backend_cuda(0, why, sizeof why);
        if (strncmp(why, "no CUDA device visible", 22) == 0) printf("SKIP: %s\n", why);
        else printf("SKIP: no CUDA device visible (%s)\n", why[0] ? why : "gp_cuda_device_count() = 0");
        fflush(stdout);
        return EXIT_SKIP;
    }
    char why[512] = "";
    G.be = gp_backend_cuda(0, why, sizeof why);
    if (!G.be) {
        fprintf(stderr, "gpuprim_bench: a CUDA device is visible but the backend cannot use it: %s\n", why);
        return EXIT_FAIL;
    }

    signal(SIGALRM, on_alarm);
    alarm((unsigned)(G.opt.time_limit + 300.0));

    int code = EXIT_OK;
    try {
        init_device();
        print_header(stderr);
        fflush(stderr);
        run_all();
    } catch (const FatalError &e) {
        G.fatal = e.what();
    } catch (const std::exception &e) {
        G.fatal = e.what();
    }
    compute_ratios();
    print_header(stdout);
    print_table(stdout);
    print_summary(stdout);
    if (!G.fatal.empty()) {
        printf("FATAL: %s\n", G.fatal.c_str());
        code = EXIT_FAIL;
    } else if (G.failures > 0) {
        code = EXIT_FAIL;
    } else if (G.skipped_groups > 0) {
        code = EXIT_INCOMPLETE;
    }
    if (G.failures > 0) {
        printf("\n%d row(s) FAILED validation or a call:\n", G.failures);
        for (const Row &r : G.rows)
            if (!r.ok)
                printf("  %s %s %s %s: %s\n", r.op.c_str(), r.type.c_str(), n_str(r.n).c_str(), r.impl.c_str(),
                       r.check.c_str());
    }
    if (G.skipped_groups > 0) printf("INCOMPLETE: %d group(s) skipped (time limit or device memory)\n", G.skipped_groups);
    if (!G.opt.json.empty() && !write_json(G.opt.json, code) && code == EXIT_OK) code = EXIT_FAIL;
    printf("%s: %zu rows, %d failed, %.1f s\n", status_word(code), G.rows.size(), G.failures, elapsed_s());
    fflush(stdout);
    return code;
}

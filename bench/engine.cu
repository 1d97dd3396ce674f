/* engine.cu — gpuprim_bench's engine (declared in engine.cuh): errors, the global state,
 * the data generator and the independent check kernel, the read kernel of the ceiling and
 * of the L2 flush, rows, groups, timing and the device set-up.
 */
#include "engine.cuh"

#include <cstring>

namespace gpb {

Bench G;

/* ---- errors and small helpers --------------------------------------------------------- */

std::string vformat(const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    return std::string(buf);
}

std::string format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::string s = vformat(fmt, ap);
    va_end(ap);
    return s;
}

void throw_cuda(cudaError_t e, const char *call, const char *file, int line)
{
    throw BenchError(format("%s:%d: %s: %s (%s)", file, line, call, cudaGetErrorString(e),
                            cudaGetErrorName(e)));
}

void gp_check(int rc, const char *call, const char *file, int line)
{
    if (rc != GP_OK)
        throw BenchError(format("%s:%d: %s returned %d: %s", file, line, call, rc,
                                G.be ? G.be->last_error() : "?"));
}

void cpu_check(int rc, const char *call, const char *file, int line)
{
    if (rc != GP_OK)
        throw BenchError(format("%s:%d: %s returned %d: %s", file, line, call, rc,
                                gp_backend_cpu()->last_error()));
}

double rel_err(double a, double b)
{
    if (std::isnan(a) || std::isnan(b)) return INFINITY;
    const double d = fabs(a - b);
    return b != 0.0 ? d / fabs(b) : d;
}

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

double elapsed_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - G.t0).count();
}

int util_grid()
{
    return G.prop.multiProcessorCount * 8;
}

unsigned long long group_seed(gp_dtype t, long long n, unsigned salt)
{
    return mix64(G.opt.seed ^ mix64(((unsigned long long)t << 48) ^
                                    ((unsigned long long)salt << 40) ^ (unsigned long long)n));
}

std::string n_str(long long n)
{
    if (n > 0 && (n & (n - 1)) == 0) {
        int k = 0;
        while ((1ll << k) < n) k++;
        return format("2^%d", k);
    }
    return format("%lld", n);
}

/* ---- kernels ---------------------------------------------------------------------------- */

namespace {

/* One value of gen_data's distribution from 64 random bits r (see gen_data). */
template <class T> __device__ __forceinline__ T gen_value(unsigned long long r)
{
    if constexpr (std::is_floating_point<T>::value)
        return (T)(-1.0 + 4.0 * ((double)(r >> 11) * 0x1.0p-53));
    else if constexpr (sizeof(T) == 4)
        return (T)(uint32_t)(r >> 32);
    else
        return (T)r;
}

/* Fills out[0, n) with gen_value<T> of the counter-based random stream `seed`. */
template <class T>
__global__ void __launch_bounds__(UTIL_THREADS) k_gen(T *out, long long n, unsigned long long seed)
{
    const long long stride = (long long)gridDim.x * UTIL_THREADS;
    for (long long i = (long long)blockIdx.x * UTIL_THREADS + threadIdx.x; i < n; i += stride)
        out[i] = gen_value<T>(mix64(mix64((unsigned long long)i) ^ seed));
}

/* Warp minimum / maximum (lane 0 gets the result; all 32 lanes must call). */
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

/* Adds a warp's partial record (lane 0's, after the shuffles) into *out with integer /
 * double atomics (the double sums are only compared with a tolerance). */
__device__ void chk_publish(ChkOut *out, const ChkOut &w)
{
    if (w.nan) atomicAdd(&out->nan, w.nan);
    if (w.negzero) atomicAdd(&out->negzero, w.negzero);
    atomicAdd(&out->hash_bits, w.hash_bits);
    atomicAdd(&out->hash_keys, w.hash_keys);
    atomicMin(&out->min_key, w.min_key);
    atomicMax(&out->max_key, w.max_key);
    if (w.desc_key) atomicAdd(&out->desc_key, w.desc_key);
    if (w.desc_val) atomicAdd(&out->desc_val, w.desc_val);
    if (w.mismatch) atomicAdd(&out->mismatch, w.mismatch);
    atomicAdd(&out->sum, w.sum);
    atomicAdd(&out->sumsq, w.sumsq);
}

/* Grid-stride pass over a[0, n) filling a ChkOut; per-warp shuffle reductions; lane 0 of
 * each warp publishes its warp's partials into *out. ref may be NULL. */
template <class T>
__global__ void __launch_bounds__(CHK_THREADS)
k_check(const T *__restrict__ a, long long n, const T *__restrict__ ref, ChkOut *out)
{
    ChkOut c = {0, 0, 0, 0, ~0ull, 0, 0, 0, 0, 0.0, 0.0};
    const long long stride = (long long)gridDim.x * CHK_THREADS;
    for (long long i = (long long)blockIdx.x * CHK_THREADS + threadIdx.x; i < n; i += stride) {
        const T v = a[i];
        const unsigned long long k = Elem<T>::key(v);
        c.hash_bits += mix64(Elem<T>::bits(v));
        c.hash_keys += mix64(k);
        if (Elem<T>::nan(v)) {
            c.nan++;
        } else {
            const double d = (double)v;
            c.sum += d;
            c.sumsq += d * d;
            c.min_key = k < c.min_key ? k : c.min_key;
            c.max_key = k > c.max_key ? k : c.max_key;
        }
        if (Elem<T>::negzero(v)) c.negzero++;
        if (i + 1 < n) {
            const T w = a[i + 1];
            if (k > Elem<T>::key(w)) c.desc_key++;
            if (w < v) c.desc_val++;
        }
        if (ref != nullptr && Elem<T>::bits(ref[i]) != Elem<T>::bits(v)) c.mismatch++;
    }
    c.nan = shfl_add(c.nan);
    c.negzero = shfl_add(c.negzero);
    c.hash_bits = shfl_add(c.hash_bits);
    c.hash_keys = shfl_add(c.hash_keys);
    c.min_key = shfl_min(c.min_key);
    c.max_key = shfl_max(c.max_key);
    c.desc_key = shfl_add(c.desc_key);
    c.desc_val = shfl_add(c.desc_val);
    c.mismatch = shfl_add(c.mismatch);
    c.sum = shfl_add(c.sum);
    c.sumsq = shfl_add(c.sumsq);
    if ((threadIdx.x & 31) == 0) chk_publish(out, c);
}

/* The sum of a 16-byte word's four 32-bit parts. */
__device__ __forceinline__ unsigned long long sum4(uint4 v)
{
    return (unsigned long long)v.x + (unsigned long long)v.y + (unsigned long long)v.z +
           (unsigned long long)v.w;
}

/* The read ceiling: every thread sums 16-byte words p[i], p[i + stride], ... (four loads
 * in flight per iteration); lane 0 of each warp adds the warp's sum into *out. */
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

} // namespace

template <class T> void gen_data(T *d, long long n, unsigned long long seed)
{
    k_gen<T><<<util_grid(), UTIL_THREADS>>>(d, n, seed);
    CK_LAUNCH("k_gen");
    CK(cudaDeviceSynchronize());
}

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

/* The six element types' generators and checks. */
#define GPB_DATA_TYPE(T)                                                                    \
    template void gen_data<T>(T *, long long, unsigned long long);                         \
    template ChkOut run_check<T>(const T *, long long, const T *);
GPB_DATA_TYPE(float)
GPB_DATA_TYPE(double)
GPB_DATA_TYPE(uint32_t)
GPB_DATA_TYPE(int32_t)
GPB_DATA_TYPE(int64_t)
GPB_DATA_TYPE(uint64_t)
#undef GPB_DATA_TYPE

void launch_read(const void *p, long long n16, unsigned long long *acc)
{
    k_read<<<G.read_grid, READ_THREADS>>>(static_cast<const uint4 *>(p), n16, acc);
    CK_LAUNCH("k_read");
}

/* ---- rows and groups -------------------------------------------------------------------- */

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

Row make_row(const std::string &op, const char *type, long long n, const std::string &impl,
             Kind kind, double bytes, double items, const char *unit)
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

bool context_ok(std::string *why)
{
    (void)cudaGetLastError();
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess && why)
        *why = format("%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    return e == cudaSuccess;
}

void fail_and_store(Row &r, const char *what)
{
    fail(r, "%s", what);
    std::string why;
    const bool ok = context_ok(&why);
    finish_row(r);
    if (!ok) throw FatalError("CUDA context unusable after a failure: " + why);
}

/* Stores a skipped "(group)" row of op / type / n noting why, and counts the group. */
static void skip_group(const std::string &op, const char *type, long long n, const std::string &why)
{
    G.skipped_groups++;
    Row r = make_row(op, type, n, "(group)", Kind::NA, 0, 0, "");
    r.skipped = true;
    r.check = "skipped";
    r.note = why;
    G.rows.push_back(r);
}

void run_group(const std::string &op, const char *type, long long n, size_t need,
               const std::function<void()> &fn)
{
    if (elapsed_s() > G.opt.time_limit) {
        fprintf(stderr, "[%7.1f s] %s %s %s: skipped (soft time limit %.0f s reached)\n",
                elapsed_s(), op.c_str(), type, n_str(n).c_str(), G.opt.time_limit);
        skip_group(op, type, n, "soft time limit reached");
        return;
    }
    size_t freeb = 0, totalb = 0;
    CK(cudaMemGetInfo(&freeb, &totalb));
    if (need + (256ull << 20) > freeb) {
        const std::string why = format("needs ~%.1f GiB of device memory, %.1f GiB free",
                                       need / 1073741824.0, freeb / 1073741824.0);
        fprintf(stderr, "[%7.1f s] %s %s %s: skipped (%s)\n", elapsed_s(), op.c_str(), type,
                n_str(n).c_str(), why.c_str());
        skip_group(op, type, n, why);
        return;
    }
    try {
        fn();
    } catch (const FatalError &) {
        throw;
    } catch (const std::exception &e) {
        Row r = make_row(op, type, n, "(setup)", Kind::NA, 0, 0, "");
        fail_and_store(r, e.what());
    }
}

/* ---- timing ---------------------------------------------------------------------------- */

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

void set_times(Row &r, std::vector<double> &s)
{
    std::sort(s.begin(), s.end());
    const size_t m = s.size();
    r.reps = (int)m;
    r.med = (m % 2) ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
    r.mn = s.front();
    r.mx = s.back();
    r.timed = true;
}

/* ---- device ----------------------------------------------------------------------------- */

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
        throw BenchError(
            format("allocation of the benchmark's scratch failed: %s", G.be->last_error()));
    CK(cudaMemset(G.flush, 0, 2 * FLUSH_BYTES));
    CK(cudaMemset(G.d_flush_acc, 0, 8));
    CK(cudaDeviceSynchronize());
}

} // namespace gpb

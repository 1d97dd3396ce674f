/* engine.cuh — gpuprim_bench's engine, shared by every operation file (op_*.cu): the rows
 * of the table, the timing (CUDA events, warm-up, L2 flush, median of the repetitions),
 * fresh random input, the independent check kernel, device and host buffers, the groups
 * (soft time limit, device memory) and the operation table's types.
 *
 * An operation (a word of --ops) is one op_NAME.cu file that defines `const Op OP_NAME`
 * and one entry of the table in gpuprim_bench.cu. Its runner calls run_group for each type
 * and size; each group generates its data (gen_data, run_check), then runs one run_row per
 * implementation, each timing with time_op (or time_result / time_cub) and validating with
 * EXPECT. The report (report.cu) adds the ratios against the references the entry names.
 * bench/README.md describes the method and the output.
 */
#ifndef GPUPRIM_BENCH_ENGINE_CUH
#define GPUPRIM_BENCH_ENGINE_CUH

#include "cpu_twins.h"
#include "gpuprim/kernels.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace gpb {

/* ---- constants ------------------------------------------------------------------------ */

constexpr int EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_INCOMPLETE = 3, EXIT_SKIP = 77;
constexpr long long MAX_N = 1ll << 30;          /* largest n accepted by --sizes */
constexpr size_t FLUSH_BYTES = 256ull << 20;    /* L2 flush: memset of 256 MiB, then a
                                                   read of another 256 MiB */
constexpr size_t GROUP_SLACK = 64ull << 20;     /* a group's bytes besides its arrays */
constexpr int CHK_THREADS = 256;
constexpr int UTIL_THREADS = 256;
constexpr int READ_THREADS = 256;
constexpr unsigned FULL_MASK = 0xffffffffu;
constexpr double TOL_F64 = 1e-9;                /* sums accumulated in float64 */
constexpr double TOL_F32ACC = 1e-3;             /* the seed's float accumulation */

/* Tolerance of a sum that ends with `nseq` additions one after another into one
 * accumulator (atomics), relative to the sum of positive terms: the larger of `base` and
 * the worst-case bound nseq * u of recursive summation (u = 2^-53 for float64, 2^-24 for
 * float32); typical errors are far smaller, the bound keeps a correct but unlucky order
 * from failing the run. */
inline double tol_seq(double base, long long nseq, bool f32)
{
    const double u = f32 ? 0x1.0p-24 : 0x1.0p-53;
    return std::max(base, (double)nseq * u);
}

/* |a - b| / |b| (|a - b| when b == 0); NaN in either gives +inf. */
double rel_err(double a, double b);

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
std::string vformat(const char *fmt, va_list ap);
/* printf-style formatting into a std::string. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
std::string format(const char *fmt, ...);

/* Throws BenchError "file:line: call: message (name)" for a failed CUDA call. */
[[noreturn]] void throw_cuda(cudaError_t e, const char *call, const char *file, int line);

/* Every CUDA runtime call of the benchmark goes through CK. */
#define CK(call)                                                                            \
    do {                                                                                    \
        cudaError_t ck_e_ = (call);                                                         \
        if (ck_e_ != cudaSuccess) ::gpb::throw_cuda(ck_e_, #call, __FILE__, __LINE__);      \
    } while (0)

/* After every kernel launch of the benchmark. */
#define CK_LAUNCH(what) CK(cudaGetLastError())

/* Throws BenchError with the backend's last_error() when a gp_* call fails. */
void gp_check(int rc, const char *call, const char *file, int line);
#define GP(call) ::gpb::gp_check((call), #call, __FILE__, __LINE__)

/* Same for the CPU twins (their message is the CPU backend's last_error()). */
void cpu_check(int rc, const char *call, const char *file, int line);
#define CPUCK(call) ::gpb::cpu_check((call), #call, __FILE__, __LINE__)

/* ---- options -------------------------------------------------------------------------- */

/* Bit of element type t in Options::types. */
constexpr unsigned type_bit(gp_dtype t)
{
    return 1u << (unsigned)t;
}
constexpr unsigned ALL_TYPES = (1u << GP_NDTYPES) - 1;

struct Options {
    bool quick = false;
    std::vector<long long> sizes; /* from --sizes: every op at every size */
    bool sizes_given = false;
    std::string json;
    int reps = 20;
    unsigned long long seed = 0;
    bool seed_given = false;
    double time_limit = 600.0; /* soft: no new group starts after it */
    unsigned ops = ~0u;        /* bit i: entry i of the operation table selected */
    unsigned types = ALL_TYPES; /* type_bit of each type selected by --types */
};

/* ---- rows ----------------------------------------------------------------------------- */

enum class Kind { OURS, REF, SEED, CPU, NA };

/* The JSON name of a row kind. */
const char *kind_name(Kind k);

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

/* ---- the operation table ------------------------------------------------------------------ */

/* The references of one row op (the table's op column) of an operation. */
struct OpRef {
    const char *op;        /* row op; one ending in ':' covers every row op it begins */
    const char *primary;   /* impl our rows are held against in ours_vs (nullptr: none) */
    const char *secondary; /* impl our rows' note also compares with (nullptr: none) */
    const char *legend;    /* primary's short name in the summary's ours_vs line, or nullptr */
    const char *block;     /* op of the table block the rows print in (nullptr: their own) */
    bool any_type;         /* rows of any type of one op and n are compared and grouped */
};

/* One operation: a word of --ops and everything the engine needs to know of it. */
struct Op {
    const char *name; /* word of --ops */
    bool big;         /* default sizes also hold 2^28 */
    const OpRef *refs;
    int nrefs;
    /* Runs every group of the operation at the given sizes (types from G.opt.types). */
    void (*run)(const std::vector<long long> &sizes);
    /* Adds to the note of our validated, timed rows after the ratios (or nullptr). */
    void (*annotate)(Row &r);
    /* Prints the operation's lines after the ceilings in the summary (or nullptr). */
    void (*summary)(FILE *o);
    /* Writes the operation's JSON members before "rows", each line ending ",\n" (or
       nullptr); called whether or not the operation ran. */
    void (*json)(FILE *f);
};

/* The operation table (gpuprim_bench.cu), in the order the operations run. */
extern const Op *const OPS[];
extern const int N_OPS;

/* The reference entry of a row op (nullptr for the ceiling rows). */
const OpRef *find_ref(const std::string &op);

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
    std::string cmdline;
};
extern Bench G;

/* Seconds since the start of main. */
double elapsed_s();

/* Device properties, events and the benchmark's scratch buffers (G.be set). */
void init_device();

/* ---- memory --------------------------------------------------------------------------- */

/* A buffer from the backend's alloc() (Host false: cudaMalloc) or host_alloc() (Host true:
 * pinned host memory), freed on scope exit. */
template <bool Host> class Buf {
  public:
    Buf() = default;
    explicit Buf(size_t bytes) { alloc(bytes); }
    ~Buf() { release(); }
    Buf(const Buf &) = delete;
    Buf &operator=(const Buf &) = delete;
    /* (Re)allocates `bytes` bytes; throws BenchError on failure. */
    void alloc(size_t bytes)
    {
        release();
        p_ = Host ? G.be->host_alloc(bytes) : G.be->alloc(bytes);
        if (!p_)
            throw BenchError(format("%s allocation of %.3f GiB failed: %s",
                                    Host ? "pinned host" : "device", bytes / 1073741824.0,
                                    G.be->last_error()));
    }
    void release()
    {
        if (p_) (Host ? G.be->host_free : G.be->free)(p_);
        p_ = nullptr;
    }
    template <class T> T *as() const { return static_cast<T *>(p_); }
    void *get() const { return p_; }

  private:
    void *p_ = nullptr;
};
using DevBuf = Buf<false>;
using HostBuf = Buf<true>;

/* ---- element traits ------------------------------------------------------------------- */

__host__ __device__ __forceinline__ unsigned long long mix64(unsigned long long z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Raw bits, gpuprim's order key (gpuprim/kernels.h: floats: NaN -> all ones, negative -> ~bits,
 * else bits | sign; unsigned: identity; signed: the sign bit flipped), NaN and -0.0 tests,
 * written here independently. */
template <class T> struct Elem {
    static_assert(std::is_integral<T>::value, "floats have their own traits");
    __device__ static unsigned long long bits(T v)
    {
        return (unsigned long long)(typename std::make_unsigned<T>::type)v;
    }
    __device__ static unsigned long long key(T v)
    {
        const unsigned long long sign = std::is_signed<T>::value ? 1ull << (8 * sizeof(T) - 1) : 0;
        return bits(v) ^ sign;
    }
    __device__ static bool nan(T) { return false; }
    __device__ static bool negzero(T) { return false; }
};
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
        const unsigned long long u = bits(v);
        if ((u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull) return ~0ull;
        return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
    }
    __device__ static bool nan(double v)
    {
        return (bits(v) & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
    }
    __device__ static bool negzero(double v) { return bits(v) == 0x8000000000000000ull; }
};

/* gpuprim's element type of a C++ type. */
template <class T> struct DType;
template <> struct DType<float> { static constexpr gp_dtype value = GP_F32; };
template <> struct DType<double> { static constexpr gp_dtype value = GP_F64; };
template <> struct DType<uint32_t> { static constexpr gp_dtype value = GP_U32; };
template <> struct DType<int32_t> { static constexpr gp_dtype value = GP_I32; };
template <> struct DType<int64_t> { static constexpr gp_dtype value = GP_I64; };
template <> struct DType<uint64_t> { static constexpr gp_dtype value = GP_U64; };
template <class T> constexpr gp_dtype dtype_of()
{
    return DType<T>::value;
}

/* Calls fn(T{}) for each element type T in Allowed (a compile-time mask: only those are
 * instantiated) whose bit is in mask, in the table's order f32, f64, u32, i32, i64, u64. */
template <unsigned Allowed = ALL_TYPES, class Fn> void for_types(unsigned mask, Fn &&fn)
{
    mask &= Allowed;
    if constexpr ((Allowed & type_bit(GP_F32)) != 0) if (mask & type_bit(GP_F32)) fn(float{});
    if constexpr ((Allowed & type_bit(GP_F64)) != 0) if (mask & type_bit(GP_F64)) fn(double{});
    if constexpr ((Allowed & type_bit(GP_U32)) != 0) if (mask & type_bit(GP_U32)) fn(uint32_t{});
    if constexpr ((Allowed & type_bit(GP_I32)) != 0) if (mask & type_bit(GP_I32)) fn(int32_t{});
    if constexpr ((Allowed & type_bit(GP_I64)) != 0) if (mask & type_bit(GP_I64)) fn(int64_t{});
    if constexpr ((Allowed & type_bit(GP_U64)) != 0) if (mask & type_bit(GP_U64)) fn(uint64_t{});
}

/* Warp sum (lane 0 gets the result; all 32 lanes must call). */
template <class V> __device__ __forceinline__ V shfl_add(V v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(FULL_MASK, v, off);
    return v;
}

/* ---- data and checks ------------------------------------------------------------------ */

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

/* Fresh random data into d[0, n) from the counter-based stream `seed` (synchronous).
 * Floats: uniform in [-1, 3) from 53 random bits (mean 1, so sums are far from 0; no NaN,
 * no infinity, no -0.0); integers: random bits over the whole type (64-bit sums pass 2^64).
 * Defined for the six element types. */
template <class T> void gen_data(T *d, long long n, unsigned long long seed);

/* Runs the check kernel over a[0, n) (ref optional) and returns the record (synchronous).
 * Defined for the six element types. */
template <class T> ChkOut run_check(const T *a, long long n, const T *ref);

/* Element i of device array d (synchronous copy). */
template <class T> T fetch(const T *d, long long i)
{
    T v;
    CK(cudaMemcpy(&v, d + i, sizeof(T), cudaMemcpyDeviceToHost));
    return v;
}

/* Grid of the utility kernels: 8 blocks of 256 threads per SM, grid-stride loops. */
int util_grid();

/* The data seed of one group: the run's seed mixed with type, size and a salt. */
unsigned long long group_seed(gp_dtype t, long long n, unsigned salt);

/* "2^k" for powers of two, else the decimal count. */
std::string n_str(long long n);

/* Sums the 16-byte words p[0, n16) into *acc with the read kernel (G.read_grid blocks of
 * READ_THREADS; asynchronous, on stream 0; *acc is not zeroed). */
void launch_read(const void *p, long long n16, unsigned long long *acc);

/* ---- rows and groups ------------------------------------------------------------------ */

/* Marks the row failed and appends the reason to its check text. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void fail(Row &r, const char *fmt, ...);

/* expect(row, cond, ...): fail(row, ...) unless cond. */
#define EXPECT(row, cond, ...)                                                              \
    do {                                                                                    \
        if (!(cond)) ::gpb::fail((row), __VA_ARGS__);                                       \
    } while (0)

/* A fresh row (check "ok" until fail() is called). */
Row make_row(const std::string &op, const char *type, long long n, const std::string &impl,
             Kind kind, double bytes, double items, const char *unit);

/* Computes throughput and % of the read ceiling, prints one progress line to stderr and
 * stores the row. */
void finish_row(Row &r);

/* True when the CUDA context still works after a failure (clears a non-sticky error). */
bool context_ok(std::string *why);

/* Stores row r failed with what's text, then throws FatalError if the context is gone. */
void fail_and_store(Row &r, const char *what);

/* Runs body(row) — timing and validation of one implementation — and stores the row. A
 * BenchError (or any std::exception, e.g. from Thrust) fails the row; if the context is
 * then unusable, FatalError is thrown after the row is stored. */
template <class Body> void run_row(Row r, Body &&body)
{
    try {
        body(r);
    } catch (const FatalError &) {
        throw;
    } catch (const std::exception &e) {
        fail_and_store(r, e.what());
        return;
    }
    finish_row(r);
}

/* Runs fn, one group (all rows of one op / type / n), unless the soft time limit has
 * passed or the device lacks `need` bytes (then a skipped "(group)" row); a setup failure
 * becomes a failed "(setup)" row. */
void run_group(const std::string &op, const char *type, long long n, size_t need,
               const std::function<void()> &fn);

/* ---- timing ---------------------------------------------------------------------------- */

/* Repetitions after the first measured one took `ms`. */
int reps_for(double ms);

/* L2 flush before each repetition (see engine.cu). */
void flush_l2();

/* Fills reps / med / mn / mx of r from the sorted-in-place samples s (ms). */
void set_times(Row &r, std::vector<double> &s);

/* Time of one repetition in ms: device synchronise, start event, op, device synchronise,
 * stop event. */
template <class Op> double time_once(Op &&op)
{
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(G.ev0, 0));
    op();
    /* every implementation ends like our synchronous API: result complete, host told */
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(G.ev1, 0));
    CK(cudaEventSynchronize(G.ev1));
    float ms = 0.0f;
    CK(cudaEventElapsedTime(&ms, G.ev0, G.ev1));
    return ms;
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
        s.push_back(time_once(op));
        if (k == 0) reps = reps_for(s[0]);
    }
    CK(cudaGetLastError());
    set_times(r, s);
}

/* The empty preparation step of time_op. */
inline void noprep() {}

/* time_op of `launch(d)` — device work leaving one A at d (G.d_small) — followed, inside
 * the timing, by the copy of that A to pinned host memory; returns the last repetition's. */
template <class A, class Prep, class Launch> A time_result(Row &r, Prep &&prep, Launch &&launch)
{
    A *d = static_cast<A *>(G.d_small);
    A *h = static_cast<A *>(G.h_small);
    time_op(r, prep, [&] {
        launch(d);
        CK(cudaMemcpyAsync(h, d, sizeof(A), cudaMemcpyDeviceToHost, 0));
    });
    return *h;
}

/* Allocates into tmp the temporary storage a CUB-style call(temp, bytes) asks for when
 * called with temp = nullptr, and returns its size; `what` names the call in an error. */
template <class Call> size_t cub_temp(DevBuf &tmp, const char *what, Call &&call)
{
    size_t tb = 0;
    const cudaError_t e = call(nullptr, tb);
    if (e != cudaSuccess) throw_cuda(e, what, __FILE__, __LINE__);
    tmp.alloc(tb);
    return tb;
}

/* ---- the report (report.cu) and the ceiling (ceiling.cu) -------------------------------- */

/* The first validated, timed row of `op` with impl `impl`, g's n and g's type (any type
 * where op's entry says so); nullptr if none or impl is nullptr. */
const Row *find_impl(const Row &g, const std::string &op, const char *impl);
/* Appends `extra` to r's note ("; " between). */
void add_note(Row &r, const std::string &extra);
/* Fills the ratio columns: our rows against their op's primary reference (and the
 * secondary in the note), every other timed row against our first row of its group:
 * time(that) / time(ours), > 1 means ours is faster. */
void compute_ratios();
/* printf of v, or "-" for NaN / infinity. */
std::string fmt_num(double v, const char *f);
/* A JSON string literal of s. */
std::string json_str(const std::string &s);
/* A JSON number, or null for NaN / infinity. */
std::string json_num(double v);
/* "ok", "incomplete", "failed" or "fatal" for an exit code. */
const char *status_word(int code);
/* The one results table (groups separated by blank lines). */
void print_table(FILE *o);
/* Version, commit, date, device and run parameters. */
void print_header(FILE *o);
/* The ceilings, the operations' summary lines, the meaning of ours_vs and the headline. */
void print_summary(FILE *o);
/* Writes the run (device, date, commit, ceilings, rows, status) as JSON to path; false
 * (with a message on stderr) when it cannot. */
bool write_json(const std::string &path, int code);

/* Measures the read ceiling (read-only kernel over up to 1 GiB) and the device-to-device
 * copy rate (read + write bytes); both rows validated by summing the data. */
void bench_ceiling();

} // namespace gpb

#endif

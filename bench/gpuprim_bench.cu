/* gpuprim_bench.cu — gpuprim's GPU primitives against CUB / Thrust and the chapter's plain
 * versions, on the same fresh random device data, in one process: the operation table,
 * the command line and main.
 *
 * Our kernels are reached ONLY through the C API (the gp_backend table of
 * gp_backend_cuda(0, ...)); CUB, Thrust and the seed baselines (seed_baselines.cu) are
 * called directly. No MPI: the gpuprim library links MPI, but nothing here calls it.
 *
 * Files: engine.cuh / engine.cu (rows, timing, data, checks, groups), report.cu (ratios,
 * table, summary, JSON), ceiling.cu (the read and copy ceilings, always run first), and one
 * file per operation of the table below:
 *   op_reduce.cu      reduce: the stats rows (be->stats, be->exact_sum vs
 *                     cub::DeviceReduce::Sum, Sum + Min + Max, Program 6.15) and the
 *                     trap_sample rows (one be->stats call vs cub Sum + end correction);
 *   op_trap.cu        trap: trap_fn:x2 and trap_fn:sin (be->trap_fn vs
 *                     cub::DeviceReduce::TransformReduce, the seed's naive and P6.15 kernels);
 *   op_sort.cu        sort: sort_values, to_keys + sort_keys + from_keys, sort_keys alone vs
 *                     cub RadixSort / MergeSort, thrust::sort, the seed's bitonic sort and
 *                     CPU qsort; op_sort_pairs.cu: the same groups' sort_pairs rows;
 *   op_scan.cu        scan: be->cumsum (look-back and reduce-then-scan) vs
 *                     cub::DeviceScan::InclusiveSum, f32 -> f64, f64, i32 -> i64, u32 -> u64;
 *   op_hist.cu        hist: be->hist (numpy's rule, 1024 bins) vs
 *                     cub::DeviceHistogram::HistogramEven;
 *   op_select.cu      select: 3 quantiles by the radix select (be->radix_hist) vs a full
 *                     sort (cub::DeviceRadixSort, our sort_values) and a read.
 * A new operation is one op_NAME.cu defining `const Op OP_NAME` (engine.cuh) and one entry
 * in OPS below.
 *
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
#include "engine.cuh"

#include <csignal>
#include <cstring>
#include <ctime>

#include <unistd.h>

namespace gpb {

/* ---- the operation table ---------------------------------------------------------------- */

extern const Op OP_REDUCE, OP_TRAP, OP_SORT, OP_SCAN; /* op_reduce.cu, op_trap.cu, op_sort.cu,
                                                        op_scan.cu */
extern const Op OP_HIST, OP_SELECT;                   /* op_hist.cu, op_select.cu */
const Op *const OPS[] = {&OP_REDUCE, &OP_TRAP, &OP_SORT, &OP_SCAN, &OP_HIST, &OP_SELECT};
const int N_OPS = (int)(sizeof OPS / sizeof OPS[0]);

namespace {

/* The words of the operation table joined by sep ("reduce,trap,sort"). */
std::string op_names(const char *sep)
{
    std::string s;
    for (int i = 0; i < N_OPS; i++) s += (i ? sep : "") + std::string(OPS[i]->name);
    return s;
}

/* ---- command line ------------------------------------------------------------------------- */

/* The command-line help. */
void usage(FILE *o)
{
    fprintf(
        o,
        "usage: gpuprim_bench [--quick] [--sizes LIST] [--json FILE] [--reps N] [--seed S]\n"
        "                     [--ops LIST] [--types LIST] [--time-limit SEC] [--help]\n"
        "  --quick          n = 2^20 and 2^21 only (the CTest correctness run)\n"
        "  --sizes LIST     comma-separated n for every op (2^k, 1e6 or plain counts, 2..2^30);\n"
        "                   default: 2^20,2^21,2^24,2^27 and also 2^28 for stats/trapezoid\n"
        "  --json FILE      write every row plus device, date, commit and ceilings as JSON\n"
        "  --reps N         repetitions of fast operations (default 20, at least 5); slower\n"
        "                   ones use fewer: 10 above 20 ms, 7 above 50 ms, 5 above 200 ms\n"
        "  --seed S         data seed (default: from the clock; printed)\n"
        "  --ops LIST       any of %s (default all; the ceiling always runs)\n"
        "  --types LIST     any of f32,f64,u32,i32,i64,u64 (default all; i32, i64 and u64\n"
        "                   run the reduce ops only, and i32 the scan too)\n"
        "  --time-limit S   soft limit: no new group starts after S seconds (default 600);\n"
        "                   the process is killed at S + 300 seconds (exit 124)\n"
        "exit: 0 ok, 1 validation or CUDA failure, 2 usage, 3 incomplete, 77 no GPU (SKIP)\n",
        op_names(",").c_str());
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

/* The parsers of the options with a value: each takes the value, fills o and returns -1
 * to go on, else the exit code (after a message). */

int parse_sizes(const char *v, Options &o)
{
    o.sizes.clear();
    for (const std::string &t : split(v)) {
        long long n = 0;
        if (!parse_count(t, &n)) {
            fprintf(stderr,
                    "gpuprim_bench: bad size '%s' (2^k with k in 1..30, or a count in [2, 2^30])\n",
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
    return -1;
}

int parse_json(const char *v, Options &o)
{
    o.json = v;
    return -1;
}

int parse_reps(const char *v, Options &o)
{
    char *end = nullptr;
    const long r = strtol(v, &end, 10);
    if (*end != '\0' || r < 5 || r > 1000) {
        fprintf(stderr, "gpuprim_bench: --reps must be 5..1000\n");
        return EXIT_USAGE;
    }
    o.reps = (int)r;
    return -1;
}

int parse_seed(const char *v, Options &o)
{
    char *end = nullptr;
    o.seed = strtoull(v, &end, 0);
    if (*end != '\0' || *v == '\0') {
        fprintf(stderr, "gpuprim_bench: bad --seed '%s'\n", v);
        return EXIT_USAGE;
    }
    o.seed_given = true;
    return -1;
}

int parse_time_limit(const char *v, Options &o)
{
    char *end = nullptr;
    const double t = strtod(v, &end);
    if (*end != '\0' || !(t >= 1.0) || t > 86400.0) {
        fprintf(stderr, "gpuprim_bench: --time-limit must be 1..86400 seconds\n");
        return EXIT_USAGE;
    }
    o.time_limit = t;
    return -1;
}

int parse_ops(const char *v, Options &o)
{
    o.ops = 0;
    for (const std::string &t : split(v)) {
        int i = 0;
        while (i < N_OPS && t != OPS[i]->name) i++;
        if (i == N_OPS) {
            fprintf(stderr, "gpuprim_bench: unknown op '%s' (%s)\n", t.c_str(),
                    op_names(", ").c_str());
            return EXIT_USAGE;
        }
        o.ops |= 1u << i;
    }
    return -1;
}

int parse_types(const char *v, Options &o)
{
    static const gp_dtype order[] = {GP_F32, GP_F64, GP_U32, GP_I32, GP_I64, GP_U64};
    o.types = 0;
    for (const std::string &t : split(v)) {
        const gp_dtype *p = std::find_if(std::begin(order), std::end(order),
                                         [&](gp_dtype d) { return t == gp_dtype_name(d); });
        if (p == std::end(order)) {
            fprintf(stderr, "gpuprim_bench: unknown type '%s' (f32, f64, u32, i32, i64, u64)\n",
                    t.c_str());
            return EXIT_USAGE;
        }
        o.types |= type_bit(*p);
    }
    return -1;
}

/* The options that take a value. */
struct ValueOption {
    const char *name;
    int (*parse)(const char *v, Options &o);
};
const ValueOption VALUE_OPTIONS[] = {
    {"--sizes", parse_sizes}, {"--json", parse_json},        {"--reps", parse_reps},
    {"--seed", parse_seed},   {"--time-limit", parse_time_limit}, {"--ops", parse_ops},
    {"--types", parse_types},
};

/* Parses the command line into o. Returns -1 to go on, else the exit code. */
int parse_args(int argc, char **argv, Options &o)
{
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return EXIT_OK;
        }
        if (a == "--quick") {
            o.quick = true;
            continue;
        }
        const ValueOption *vo = std::find_if(std::begin(VALUE_OPTIONS), std::end(VALUE_OPTIONS),
                                             [&](const ValueOption &x) { return a == x.name; });
        if (vo == std::end(VALUE_OPTIONS)) {
            fprintf(stderr, "gpuprim_bench: unknown argument '%s'\n", a.c_str());
            usage(stderr);
            return EXIT_USAGE;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "gpuprim_bench: %s needs a value\n", vo->name);
            return EXIT_USAGE;
        }
        const int rc = vo->parse(argv[++i], o);
        if (rc >= 0) return rc;
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
    static const char msg[] =
        "\ngpuprim_bench: FATAL: hard time limit reached (soft limit + 300 s); exiting 124\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(124);
}

/* ---- the run ------------------------------------------------------------------------------ */

/* The sizes of an operation: --sizes, --quick's, or the default (2^28 too where big). */
std::vector<long long> sizes_for(const Op &op)
{
    if (G.opt.sizes_given) return G.opt.sizes;
    if (G.opt.quick) return {1ll << 20, 1ll << 21};
    std::vector<long long> s = {1ll << 20, 1ll << 21, 1ll << 24, 1ll << 27};
    if (op.big) s.push_back(1ll << 28);
    return s;
}

/* The ceiling, then every group of the selected operations, types and sizes. */
void run_all()
{
    bench_ceiling();
    if (!(G.read_gbps > 0))
        fprintf(stderr, "gpuprim_bench: read ceiling not measured; %%ceil left empty\n");
    for (int i = 0; i < N_OPS; i++)
        if (G.opt.ops & (1u << i)) OPS[i]->run(sizes_for(*OPS[i]));
}

/* The CUDA backend into G.be. Returns -1 to go on, else the exit code: 77 (with "SKIP:
 * ..." on stdout) when no CUDA device is visible, 1 when the backend cannot use it. */
int open_backend()
{
    if (gp_cuda_device_count() <= 0) {
        char why[512] = "";
        (void)gp_backend_cuda(0, why, sizeof why);
        if (strncmp(why, "no CUDA device visible", 22) == 0) printf("SKIP: %s\n", why);
        else
            printf("SKIP: no CUDA device visible (%s)\n",
                   why[0] ? why : "gp_cuda_device_count() = 0");
        fflush(stdout);
        return EXIT_SKIP;
    }
    char why[512] = "";
    G.be = gp_backend_cuda(0, why, sizeof why);
    if (!G.be) {
        fprintf(stderr,
                "gpuprim_bench: a CUDA device is visible but the backend cannot use it: %s\n", why);
        return EXIT_FAIL;
    }
    return -1;
}

/* Prints the results (stdout), the failures and the status line, writes --json; returns
 * the exit code. */
int report()
{
    compute_ratios();
    print_header(stdout);
    print_table(stdout);
    print_summary(stdout);
    int code = EXIT_OK;
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
                printf("  %s %s %s %s: %s\n", r.op.c_str(), r.type.c_str(), n_str(r.n).c_str(),
                       r.impl.c_str(), r.check.c_str());
    }
    if (G.skipped_groups > 0)
        printf("INCOMPLETE: %d group(s) skipped (time limit or device memory)\n", G.skipped_groups);
    if (!G.opt.json.empty() && !write_json(G.opt.json, code) && code == EXIT_OK) code = EXIT_FAIL;
    printf("%s: %zu rows, %d failed, %.1f s\n", status_word(code), G.rows.size(), G.failures,
           elapsed_s());
    fflush(stdout);
    return code;
}

} // namespace

} // namespace gpb

/* Entry point: parses the command line, skips with 77 when no CUDA device is visible, runs
 * the ceiling and every group, prints the table (stdout) and writes --json. */
int main(int argc, char **argv)
{
    using namespace gpb;
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
    rc = open_backend();
    if (rc >= 0) return rc;

    signal(SIGALRM, on_alarm);
    alarm((unsigned)(G.opt.time_limit + 300.0));
    try {
        init_device();
        print_header(stderr);
        fflush(stderr);
        run_all();
    } catch (const std::exception &e) { /* FatalError, or a failure outside any row */
        G.fatal = e.what();
    }
    return report();
}

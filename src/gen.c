/* gen.c — gpuprim_gen: writes a generated test array to an HDF5 file, in parallel.
 *
 * Every element is a function of (seed, global index, options) only: splitmix64 counters
 * keyed by the seed, so the file is the same for any number of MPI ranks.
 */
#define _GNU_SOURCE /* getopt_long */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "count.h"
#include "exitcode.h"
#include "fault.h"
#include "gp_getopt.h"
#include "gpuprim/kernels.h"
#include "gpuprim/h5io.h"

typedef enum dist {
    D_UNIFORM, D_NORMAL, D_SORTED, D_REVERSED, D_FEW, D_NAN, D_COUNT
} dist;
static const char *const dist_names[D_COUNT] = {"uniform",  "normal",     "sorted",
                                                "reversed", "few-unique", "with-nan"};

typedef struct opts {
    const char *out;
    int64_t n;
    gp_dtype dtype;
    dist dist;
    uint64_t seed;
    const char *dataset;
    int force;
    int help;
} opts;

static void usage(FILE *f)
{
    fprintf(f,
"usage: gpuprim_gen OUT.h5 [--n N] [--dtype f32|f64|i32|i64|u32|u64]\n"
"                   [--dist uniform|normal|sorted|reversed|few-unique|with-nan]\n"
"                   [--seed S] [--dataset NAME] [--force] [-h | --help]\n"
"Writes N generated elements to dataset NAME of a new HDF5 file OUT.h5 with parallel\n"
"HDF5 (one contiguous shard per MPI rank). The content depends only on the options, not\n"
"on the number of ranks.\n"
"  --n N          element count: 123, 2^24 or 1e6 forms (default 16777216 = 2^24)\n"
"  --dtype T      element type (default f32)\n"
"  --dist D       (default uniform)\n"
"                   uniform     floats in [-1, 1); integers over the type's full range\n"
"                   normal      mean 0, sd 1; integers round(1000*z), unsigned ones\n"
"                               shifted by 2^(bits-1)\n"
"                   sorted      ascending: integers the index, floats index/N\n"
"                   reversed    descending: the mirror of sorted\n"
"                   few-unique  16 distinct values\n"
"                   with-nan    uniform with ~1%% NaN and some +inf, -inf, -0.0, +0.0\n"
"                               (float types only)\n"
"  --seed S       unsigned 64-bit seed (default 1)\n"
"  --dataset NAME dataset path in the file (default /data)\n"
"  --force        overwrite OUT.h5 if it exists\n"
"  -h, --help     this text\n"
"A value is the next word or follows '=' (--n 1e6, --n=1e6); an option may be shortened\n"
"to a prefix that names only it (--dt f64); an option given twice keeps its last value.\n");
    gp_exit_print(f, GP_PROG_GEN, 90);
}

/* ---- option parsing -------------------------------------------------------------------- */

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    if (!s || !(*s >= '0' && *s <= '9')) return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *v = x;
    return 0;
}

enum { G_N = 256, G_DTYPE, G_DIST, G_SEED, G_DATASET, G_FORCE };

static const struct option g_long[] = {
    {"help", no_argument, NULL, 'h'},      {"n", required_argument, NULL, G_N},
    {"dtype", required_argument, NULL, G_DTYPE}, {"dist", required_argument, NULL, G_DIST},
    {"seed", required_argument, NULL, G_SEED}, {"dataset", required_argument, NULL, G_DATASET},
    {"force", no_argument, NULL, G_FORCE},  {NULL, 0, NULL, 0}};

/* Takes option c with value val into *o. Returns 0, or GP_EXIT_USAGE with err set. */
static int take_option(int c, const char *val, opts *o, char *err, size_t errlen)
{
    switch (c) {
    case G_FORCE: o->force = 1; return 0;
    case G_N:
        if (gp_parse_count(val, &o->n) == 0) return 0;
        snprintf(err, errlen, "--n '%s': need a non-negative integer below 2^63 (e.g. 1000, 2^24, 1e6)",
                 val);
        return GP_EXIT_USAGE;
    case G_DTYPE:
        if (gp_dtype_parse(val, &o->dtype) == 0) return 0;
        snprintf(err, errlen, "--dtype '%s': need f32, f64, i32, i64, u32 or u64", val);
        return GP_EXIT_USAGE;
    case G_DIST: {
        int k = 0;
        while (k < D_COUNT && strcmp(val, dist_names[k]) != 0) k++;
        if (k < D_COUNT) {
            o->dist = (dist)k;
            return 0;
        }
        snprintf(err, errlen,
                 "--dist '%s': need uniform, normal, sorted, reversed, few-unique or with-nan", val);
        return GP_EXIT_USAGE;
    }
    case G_SEED:
        if (parse_u64(val, &o->seed) == 0) return 0;
        snprintf(err, errlen, "--seed '%s': need an unsigned 64-bit integer", val);
        return GP_EXIT_USAGE;
    default: /* G_DATASET */
        if (!val[0] || strlen(val) >= GP_H5_PATHLEN) {
            snprintf(err, errlen, "--dataset: need a name of 1 to %d characters", GP_H5_PATHLEN - 1);
            return GP_EXIT_USAGE;
        }
        if (val[0] == '-') { /* --dataset --force: the value was left out */
            snprintf(err, errlen, "--dataset %.64s: a dataset name may not start with '-' "
                                  "(is the value missing? for a dataset named %.64s, give /%.64s)",
                     val, val, val);
            return GP_EXIT_USAGE;
        }
        o->dataset = val;
        return 0;
    }
}

/* Returns 0, or GP_EXIT_USAGE with the reason in err. --help or -h anywhere wins (o->help). */
static int parse_args(int argc, char **argv, opts *o, char *err, size_t errlen)
{
    o->out = NULL;
    o->n = (int64_t)1 << 24;
    o->dtype = GP_F32;
    o->dist = D_UNIFORM;
    o->seed = 1;
    o->dataset = "/data";
    o->force = 0;
    o->help = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            o->help = 1;
            return 0;
        }
    gp_opt_restart(); /* "-" below: the other words come back in order as 1 */
    for (int c; (c = getopt_long(argc, argv, "-:h", g_long, NULL)) != -1;) {
        if (c == 'h') {
            o->help = 1;
            return 0;
        }
        if (c == '?' || c == ':') {
            gp_opt_error(g_long, c, argc, argv, err, errlen);
            return GP_EXIT_USAGE;
        }
        if (c != 1) {
            if (take_option(c, optarg, o, err, errlen)) return GP_EXIT_USAGE;
        } else if (o->out) {
            snprintf(err, errlen, "unexpected argument '%s' (one output file only)", optarg);
            return GP_EXIT_USAGE;
        } else {
            o->out = optarg;
        }
    }
    if (gp_opt_rest(argc, argv, err, errlen)) return GP_EXIT_USAGE;
    if (!o->out) {
        snprintf(err, errlen, "no output file given (usage: gpuprim_gen OUT.h5 [options], see --help)");
        return GP_EXIT_USAGE;
    }
    if (o->dist == D_NAN && !gp_dtype_is_float(o->dtype)) {
        snprintf(err, errlen, "--dist with-nan needs a float type (f32 or f64), not %s",
                 gp_dtype_name(o->dtype));
        return GP_EXIT_USAGE;
    }
    return 0;
}

/* ---- generation ------------------------------------------------------------------------ */

#define GAMMA 0x9E3779B97F4A7C15ull

/* The ctr-th output of splitmix64 started at `key`. */
static inline uint64_t rnd(uint64_t key, uint64_t ctr) { return gp_mix64(key + ctr * GAMMA); }

static double unit_open0(uint64_t r) { return (double)((r >> 11) + 1) * 0x1.0p-53; } /* (0,1] */
static double unit(uint64_t r) { return (double)(r >> 11) * 0x1.0p-53; }             /* [0,1) */

/* Position j of n mapped monotonically onto [0, 2^32). */
static uint32_t spread32(int64_t j, int64_t n)
{
    double v = floor((double)j / (double)n * 4294967296.0);
    return v > 4294967295.0 ? 4294967295u : (uint32_t)v;
}

static void gen_one(const opts *o, uint64_t key, int64_t i, void *out)
{
    uint64_t r1 = rnd(key, 2 * (uint64_t)i), r2 = rnd(key, 2 * (uint64_t)i + 1);
    gp_dtype t = o->dtype;
    double d = 0.0;   /* float result */
    int64_t s = 0;    /* signed-int result */
    uint64_t u = 0;   /* unsigned-int result (or raw bits) */

    switch (o->dist) {
    case D_UNIFORM:
    case D_NAN:
        if (t == GP_F32) d = (double)(r1 >> 40) * 0x1.0p-23 - 1.0; /* exact in float */
        else d = (double)(r1 >> 11) * 0x1.0p-52 - 1.0;
        u = r1;
        s = (int64_t)r1;
        if (o->dist == D_NAN) {
            uint64_t k = (r2 >> 32) % 10000u;
            if (k < 100) d = NAN;
            else if (k == 100) d = INFINITY;
            else if (k == 101) d = -INFINITY;
            else if (k == 102) d = -0.0;
            else if (k == 103) d = 0.0;
        }
        if (t == GP_I32) s = (int32_t)(uint32_t)(r1 >> 32);
        if (t == GP_U32) u = r1 >> 32;
        break;
    case D_NORMAL: {
        double z = sqrt(-2.0 * log(unit_open0(r1))) * cos(6.283185307179586 * unit(r2));
        d = z;
        s = (int64_t)llround(1000.0 * z);
        if (t == GP_U32) u = (uint64_t)((int64_t)0x80000000ll + s);
        else u = 0x8000000000000000ull + (uint64_t)s;
        break;
    }
    case D_SORTED:
    case D_REVERSED: {
        int64_t j = o->dist == D_SORTED ? i : o->n - 1 - i;
        d = (double)j / (double)o->n;
        s = j;
        u = (uint64_t)j;
        /* 32-bit types: the index while it fits, else spread over the whole range */
        if (t == GP_I32 && o->n - 1 > INT32_MAX) s = (int64_t)spread32(j, o->n) - 2147483648ll;
        if (t == GP_U32 && o->n - 1 > (int64_t)UINT32_MAX) u = spread32(j, o->n);
        break;
    }
    case D_FEW: {
        int k = (int)(r1 >> 60);
        d = (k - 8) * 0.5;
        s = (int64_t)(k - 8) * 1000;
        u = (uint64_t)k * 1000u;
        break;
    }
    default:
        break;
    }
    switch (t) {
    case GP_F32: { float f = (float)d; memcpy(out, &f, 4); break; }
    case GP_F64: memcpy(out, &d, 8); break;
    case GP_I32: { int32_t v = (int32_t)s; memcpy(out, &v, 4); break; }
    case GP_I64: memcpy(out, &s, 8); break;
    case GP_U32: { uint32_t v = (uint32_t)u; memcpy(out, &v, 4); break; }
    case GP_U64: memcpy(out, &u, 8); break;
    default: break;
    }
}

int main(int argc, char **argv)
{
    int rank = 0, P = 1, rc = 0;
    char err[512] = "", msg[2048] = "";
    opts o;

    gp_h5_mpi_io_env(); /* before MPI_Init: no crash on long file paths (h5io.h) */
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "gpuprim_gen: error: MPI_Init failed\n");
        return gp_exit_status(GP_EXIT_FAIL);
    }
    if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS ||
        MPI_Comm_size(MPI_COMM_WORLD, &P) != MPI_SUCCESS) {
        fprintf(stderr, "gpuprim_gen: error: MPI_Comm_rank/size failed\n");
        MPI_Abort(MPI_COMM_WORLD, gp_exit_status(GP_EXIT_FAIL));
    }
    gp_fault fault; /* GPUPRIM_FAULT's I/O hooks (RANK:pwrite, RANK:tmpfile) */
    gp_fault_from_env(&fault);
    gp_fault_set_io(&fault, rank);

    rc = parse_args(argc, argv, &o, err, sizeof err);
    if (rc || o.help) {
        if (rank == 0) {
            if (rc) fprintf(stderr, "gpuprim_gen: error: %s\n", err);
            else usage(stdout);
        }
        MPI_Finalize();
        return gp_exit_status(rc);
    }

    int64_t off, cnt;
    gp_shard_range(o.n, P, rank, &off, &cnt);
    size_t esz = gp_dtype_size(o.dtype);
    unsigned char *buf = malloc(cnt > 0 ? (size_t)cnt * esz : 1);
    int ok = buf != NULL && (uint64_t)cnt <= SIZE_MAX / esz, all_ok = 0;
    if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, gp_exit_status(GP_EXIT_FAIL));
    if (!all_ok) {
        if (rank == 0)
            fprintf(stderr,
                    "gpuprim_gen: error: out of memory for a shard of %lld %s elements "
                    "(use more ranks or a smaller --n)\n",
                    (long long)cnt, gp_dtype_name(o.dtype));
        free(buf);
        MPI_Finalize();
        return gp_exit_status(GP_EXIT_FAIL);
    }

    if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, gp_exit_status(GP_EXIT_FAIL));
    double t0 = MPI_Wtime();
    uint64_t key = gp_mix64(o.seed);
    for (int64_t k = 0; k < cnt; k++) gen_one(&o, key, off + k, buf + (size_t)k * esz);
    rc = gp_h5_write(MPI_COMM_WORLD, o.out, o.dataset, H5I_INVALID_HID, o.dtype, o.n, off,
                     cnt, buf, o.force, msg, sizeof msg);
    double secs = MPI_Wtime() - t0;
    free(buf);

    if (rank == 0) {
        if (rc) {
            fprintf(stderr, "gpuprim_gen: error: %s\n", msg);
        } else {
            double mb = (double)o.n * (double)esz / 1e6;
            printf("gpuprim_gen: wrote %s %s n=%lld dtype=%s dist=%s seed=%llu ranks=%d "
                   "%.3f s %.1f MB/s\n",
                   o.out, o.dataset, (long long)o.n, gp_dtype_name(o.dtype),
                   dist_names[o.dist], (unsigned long long)o.seed, P, secs,
                   secs > 0 ? mb / secs : 0.0);
        }
    }
    MPI_Finalize();
    return gp_exit_status(rc);
}

/* test_h5io.c — MPI tests of io/h5io.c against the files of tests/h5_fixtures.py.
 *
 * usage: mpirun -np P test_h5io OUTDIR [H5_FIXTURES_PY]
 * OUTDIR holds the fixtures (NAME.h5, NAME.ref, NAME.meta). With H5_FIXTURES_PY, files
 * written by gp_h5_write are also read back by h5py (python: $GPUPRIM_PYTHON, default
 * /usr/bin/python3). Scratch output goes to OUTDIR/test_h5io.out.npP.PID/ (removed at the
 * end). Prints one line per check and "N passed, N failed" last; exit 0 only if every
 * check passed.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include "gp_kernels.h"
#include "h5io.h"

#define LIST 8192
#define MSG 2048

static MPI_Comm W;
static int rank, nranks, npass, nfail;
static const char *outdir, *fixpy;
static char scratch[1024];

/* Collective: passes when ok on every rank; rank 0 prints the verdict. */
static int check(int ok, const char *fmt, ...)
{
    int all = 0;
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, W);
    if (rank == 0) {
        printf("%s - %s\n", all ? "ok" : "FAIL", what);
        fflush(stdout);
    }
    if (all) npass++;
    else nfail++;
    return all;
}

/* A local detail for a failing check. */
static void why(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "  rank %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* 1 when every rank holds the same rc and message. */
static int same_everywhere(int rc, const char *msg)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *p = msg; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h ^= (uint64_t)(unsigned)rc << 1;
    uint64_t lo = 0, hi = 0;
    MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, W);
    MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, W);
    return lo == hi;
}

/* An expected failure: code, identical everywhere, message containing every needle. */
static void expect_fail(const char *name, int rc, int want, const char *msg, ...)
{
    int ok = rc == want;
    if (!ok) why("%s: rc %d, want %d (%s)", name, rc, want, msg);
    va_list ap;
    va_start(ap, msg);
    for (const char *needle; (needle = va_arg(ap, const char *)) != NULL;)
        if (!strstr(msg, needle)) {
            ok = 0;
            why("%s: message lacks '%s': %s", name, needle, msg);
        }
    va_end(ap);
    int same = same_everywhere(rc, msg);
    if (rank == 0 && rc) printf("   message: %s\n", msg);
    check(ok && same, "%s (code %d%s)", name, want, same ? "" : ", NOT the same on all ranks");
}

static unsigned char *read_ref(const char *name, size_t esz, int64_t off, int64_t cnt)
{
    char p[1100];
    snprintf(p, sizeof p, "%s/%s.ref", outdir, name);
    unsigned char *b = malloc(cnt > 0 ? (size_t)cnt * esz : 1);
    FILE *f = fopen(p, "rb");
    if (!b || !f) {
        why("cannot read %s", p);
        free(b);
        if (f) fclose(f);
        return NULL;
    }
    int ok = fseek(f, (long)(off * (int64_t)esz), SEEK_SET) == 0 &&
             (cnt == 0 || fread(b, esz, (size_t)cnt, f) == (size_t)cnt);
    fclose(f);
    if (!ok) {
        why("short read of %s", p);
        free(b);
        return NULL;
    }
    return b;
}

static int is_nan_bits(const void *p, gp_dtype t)
{
    if (t == GP_F32) { float f; memcpy(&f, p, 4); return f != f; }
    if (t == GP_F64) { double d; memcpy(&d, p, 8); return d != d; }
    return 0;
}

/* Bit-exact, except that with nan_loose any NaN matches any NaN: HDF5's own float
 * conversion (float16 -> float32) makes every NaN 0x7fffffff, numpy keeps the payload. */
static int same_bytes(const void *a, const void *b, gp_dtype t, int nan_loose, int64_t cnt,
                      int64_t off, const char *what)
{
    size_t esz = gp_dtype_size(t);
    if (cnt == 0) return 1;
    if (!a || !b) return 0;
    if (memcmp(a, b, (size_t)cnt * esz) == 0) return 1;
    for (int64_t i = 0; i < cnt; i++)
        if (memcmp((const char *)a + i * esz, (const char *)b + i * esz, esz) != 0) {
            if (nan_loose && is_nan_bits((const char *)a + i * esz, t) &&
                is_nan_bits((const char *)b + i * esz, t))
                continue;
            uint64_t x = 0, y = 0;
            memcpy(&x, (const char *)a + i * esz, esz);
            memcpy(&y, (const char *)b + i * esz, esz);
            why("%s: element %lld differs: got 0x%llx want 0x%llx", what,
                (long long)(off + i), (unsigned long long)x, (unsigned long long)y);
            return 0;
        }
    return 1;
}

/* Reads [off, off+cnt) of the open input as `as` and compares with the fixture's .ref. */
static int read_matches(const gp_h5_input *in, const char *dset, const char *name,
                        gp_dtype as, int64_t off, int64_t cnt, char *msg)
{
    size_t esz = gp_dtype_size(as);
    unsigned char *got = malloc(cnt > 0 ? (size_t)cnt * esz : 1);
    unsigned char *want = read_ref(name, esz, off, cnt);
    int rc = gp_h5_read(W, in, dset, as, off, cnt, got, msg, MSG);
    int converted_float = gp_dtype_is_float(as) && H5Tget_size(in->ftype) != esz;
    int ok = rc == 0 && got && want && same_bytes(got, want, as, converted_float, cnt, off, name);
    if (rc) why("%s: gp_h5_read [%lld, +%lld): %d %s", name, (long long)off, (long long)cnt,
                rc, msg);
    free(got);
    free(want);
    return ok;
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

static const char *expect_desc(const char *name)
{
    static const char *const t[][2] = {
        {"f64_gzip", "float64 little-endian"}, {"i32_be", "int32 big-endian"},
        {"f32_2d", "float32 little-endian"},   {"i16", "int16 little-endian"},
        {"f16", "float16 little-endian"},      {"u64_big", "uint64 little-endian"},
        {"i64", "int64 little-endian"},        {"u32_one", "uint32 little-endian"},
        {"ambiguous", "float64 little-endian"}, {"empty_f64", "float64 little-endian"},
        {"i8_cube", "int8 little-endian"},     {"ldouble", "float80 (16 bytes) little-endian"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i][0], name) == 0) return t[i][1];
    return NULL;
}

/* ---- one fixture ------------------------------------------------------------------------ */

static void test_fixture(const char *name, const char *mdset, gp_dtype mdt, int64_t mn)
{
    char file[1100], msg[MSG];
    gp_h5_input in;
    snprintf(file, sizeof file, "%s/%s.h5", outdir, name);

    /* default dataset: either found, or ambiguous with the right one among the candidates */
    int rc = gp_h5_open(W, file, NULL, &in, msg, sizeof msg);
    if (rc == 0) {
        check(strcmp(in.dataset, mdset) == 0, "%s: default dataset is %s (got %s)", name, mdset,
              in.dataset);
        gp_h5_close(&in);
    } else {
        int ok = rc == GP_IO_EDATASET && strstr(msg, "numeric datasets") && strstr(msg, mdset);
        check(ok, "%s: default dataset ambiguous, lists %s", name, mdset);
    }

    /* explicit relative name */
    rc = gp_h5_open(W, file, mdset + 1, &in, msg, sizeof msg);
    if (!check(rc == 0, "%s: open '%s'", name, mdset + 1)) {
        if (rank == 0) printf("   message: %s\n", msg);
        return;
    }
    int64_t prod = 1;
    for (int i = 0; i < in.ndims; i++) prod *= (int64_t)in.dims[i];
    check(strcmp(in.dataset, mdset) == 0, "%s: dataset path %s", name, in.dataset);
    check(in.dtype == mdt, "%s: dtype %s (want %s)", name, gp_dtype_name(in.dtype),
          gp_dtype_name(mdt));
    check(in.n == mn && prod == mn, "%s: n %lld, dims product %lld (want %lld)", name,
          (long long)in.n, (long long)prod, (long long)mn);
    const char *wd = expect_desc(name);
    if (wd) check(strcmp(in.type_desc, wd) == 0, "%s: type '%s' (want '%s')", name, in.type_desc, wd);
    if (strcmp(name, "f32_2d") == 0)
        check(in.ndims == 2 && in.dims[0] == 333 && in.dims[1] == 77, "%s: shape 333x77", name);
    if (strcmp(name, "i8_cube") == 0)
        check(in.ndims == 3 && in.dims[0] == 4 && in.dims[1] == 5 && in.dims[2] == 6,
              "%s: shape 4x5x6", name);

    /* this rank's shard */
    int64_t off, cnt;
    gp_shard_range(in.n, nranks, rank, &off, &cnt);
    check(read_matches(&in, NULL, name, mdt, off, cnt, msg), "%s: shards bit-exact (P=%d)",
          name, nranks);

    /* rank 0 reads everything, the others nothing (unequal piece counts) */
    check(read_matches(&in, NULL, name, mdt, 0, rank == 0 ? in.n : 0, msg),
          "%s: whole array on rank 0, nothing elsewhere", name);

    /* arbitrary ranges: every hyperslab decomposition path */
    int ok = 1;
    uint64_t s = 0x1234567ull + (uint64_t)rank * 977u;
    for (int t = 0; t < 12 && in.n > 0; t++) {
        int64_t a = (int64_t)(lcg(&s) % (uint64_t)(in.n + 1));
        int64_t b = (int64_t)(lcg(&s) % (uint64_t)(in.n + 1));
        if (a > b) { int64_t z = a; a = b; b = z; }
        if (t == 0) { a = 0; b = in.n; }
        ok &= read_matches(&in, NULL, name, mdt, a, b - a, msg);
    }
    check(ok, "%s: random (overlapping) ranges", name);

    /* random disjoint ranges in random rank order, with gaps and empty ranks: the fully
     * collective path (the same cut points on every rank) */
    ok = 1;
    uint64_t g = 0xabcdefull;
    for (int t = 0; t < 8 && in.n > 0; t++) {
        int64_t cuts[2 * 64];
        int perm[64], k = nranks < 64 ? nranks : 64;
        for (int i = 0; i < 2 * k; i++) cuts[i] = (int64_t)(lcg(&g) % (uint64_t)(in.n + 1));
        for (int i = 1; i < 2 * k; i++)
            for (int j = i; j > 0 && cuts[j] < cuts[j - 1]; j--) {
                int64_t z = cuts[j]; cuts[j] = cuts[j - 1]; cuts[j - 1] = z;
            }
        for (int i = 0; i < k; i++) perm[i] = i;
        for (int i = k - 1; i > 0; i--) {
            int j = (int)(lcg(&g) % (uint64_t)(i + 1)), z = perm[i];
            perm[i] = perm[j];
            perm[j] = z;
        }
        int64_t a = 0, b = 0;
        if (rank < k) {
            a = cuts[2 * perm[rank]];
            b = (lcg(&g) + (uint64_t)rank) % 5 == 0 ? a : cuts[2 * perm[rank] + 1];
        }
        ok &= read_matches(&in, NULL, name, mdt, a, b - a, msg);
    }
    check(ok, "%s: random disjoint ranges", name);
    gp_h5_close(&in);
}

/* ---- error cases ------------------------------------------------------------------------ */

static void test_open_errors(void)
{
    char file[1100], msg[MSG];
    gp_h5_input in;

    snprintf(file, sizeof file, "%s/ambiguous.h5", outdir);
    int rc = gp_h5_open(W, file, NULL, &in, msg, sizeof msg);
    expect_fail("ambiguous default dataset", rc, GP_IO_EDATASET, msg,
                "2 numeric datasets, choose one with --dataset: /a, /b", (char *)NULL);
    check(!strstr(msg, "/s"), "ambiguous: the string dataset is not a candidate");
    rc = gp_h5_open(W, file, "/s", &in, msg, sizeof msg);
    expect_fail("string dataset", rc, GP_IO_EDATASET, msg,
                "/s: unsupported element class string (need integer or float)", (char *)NULL);

    snprintf(file, sizeof file, "%s/no_such_file.h5", outdir);
    rc = gp_h5_open(W, file, NULL, &in, msg, sizeof msg);
    expect_fail("missing file", rc, GP_IO_EOPEN, msg, "no_such_file.h5: cannot open",
                "No such file or directory", (char *)NULL);

    rc = gp_h5_open(W, outdir, NULL, &in, msg, sizeof msg);
    expect_fail("directory as file", rc, GP_IO_EOPEN, msg, "Is a directory", (char *)NULL);

    snprintf(file, sizeof file, "%s/junk.bin", scratch);
    if (rank == 0) {
        FILE *f = fopen(file, "wb");
        if (f) {
            for (int i = 0; i < 4096; i++) fputc(i * 7, f);
            fclose(f);
        }
    }
    MPI_Barrier(W);
    rc = gp_h5_open(W, file, NULL, &in, msg, sizeof msg);
    expect_fail("not an HDF5 file", rc, GP_IO_EOPEN, msg, "not an HDF5 file",
                "signature", (char *)NULL);

    snprintf(file, sizeof file, "%s/f64_gzip.h5", outdir);
    rc = gp_h5_open(W, file, "/x", &in, msg, sizeof msg);
    expect_fail("missing dataset", rc, GP_IO_EDATASET, msg, "f64_gzip.h5: /x: no such dataset",
                (char *)NULL);
    rc = gp_h5_open(W, file, "g/h/x", &in, msg, sizeof msg);
    expect_fail("missing dataset in a missing group", rc, GP_IO_EDATASET, msg,
                "/g/h/x: no such dataset", (char *)NULL);

    snprintf(file, sizeof file, "%s/i8_cube.h5", outdir);
    rc = gp_h5_open(W, file, "/g", &in, msg, sizeof msg);
    expect_fail("group instead of dataset", rc, GP_IO_EDATASET, msg, "/g: not a dataset",
                (char *)NULL);

    snprintf(file, sizeof file, "%s/misc_errors.h5", outdir);
    rc = gp_h5_open(W, file, "scalar", &in, msg, sizeof msg);
    expect_fail("scalar dataset", rc, GP_IO_EDATASET, msg,
                "/scalar: scalar dataspace (need an array)", (char *)NULL);
    rc = gp_h5_open(W, file, NULL, &in, msg, sizeof msg);
    /* /scalar is numeric but no array: not a candidate */
    expect_fail("several numeric datasets", rc, GP_IO_EDATASET, msg,
                "3 numeric datasets, choose one with --dataset: /lzf, /x, /y", (char *)NULL);
}

static void test_read_errors(void)
{
    char file[1100], msg[MSG];
    gp_h5_input in;
    double buf[128];
    int64_t off, cnt;

    snprintf(file, sizeof file, "%s/misc_errors.h5", outdir);
    int rc = gp_h5_open(W, file, "/y", &in, msg, sizeof msg);
    if (!check(rc == 0, "misc_errors: open /y")) return;
    gp_shard_range(in.n, nranks, rank, &off, &cnt);
    rc = gp_h5_read(W, &in, "x", GP_F64, off, cnt, buf, msg, sizeof msg);
    expect_fail("x with a different length", rc, GP_IO_EDATASET, msg,
                "misc_errors.h5: /x has 99 elements, /y has 100", (char *)NULL);
    rc = gp_h5_read(W, &in, "/s", GP_F64, off, cnt, buf, msg, sizeof msg);
    expect_fail("x of class string", rc, GP_IO_EDATASET, msg, "/s: unsupported element class string",
                (char *)NULL);
    rc = gp_h5_read(W, &in, NULL, GP_F64, rank == 0 ? 90 : 0, rank == 0 ? 11 : 0, buf, msg,
                    sizeof msg);
    expect_fail("range past the end (rank 0 only)", rc, GP_IO_EREAD, msg, "outside", (char *)NULL);
    rc = gp_h5_read(W, &in, NULL, GP_F64, off, cnt, buf, msg, sizeof msg);
    check(rc == 0, "reading again after errors");
    gp_h5_close(&in);

    rc = gp_h5_open(W, file, "/lzf", &in, msg, sizeof msg);
    if (!check(rc == 0, "misc_errors: open /lzf (filter checked at read time)")) return;
    float *fb = malloc(1000 * sizeof(float));
    gp_shard_range(in.n, nranks, rank, &off, &cnt);
    rc = gp_h5_read(W, &in, NULL, GP_F32, off, cnt, fb, msg, sizeof msg);
    expect_fail("missing filter", rc, GP_IO_EREAD, msg, "/lzf: read failed", "lzf' is not registered",
                (char *)NULL);
    free(fb);
    gp_h5_close(&in);

    /* x through a soft link to the same data: a different path, read as f64 */
    snprintf(file, sizeof file, "%s/i8_cube.h5", outdir);
    rc = gp_h5_open(W, file, NULL, &in, msg, sizeof msg);
    if (!check(rc == 0, "i8_cube: open default")) return;
    gp_shard_range(in.n, nranks, rank, &off, &cnt);
    int32_t *want = (int32_t *)read_ref("i8_cube", 4, off, cnt);
    rc = gp_h5_read(W, &in, "cube_link", GP_F64, off, cnt, buf, msg, sizeof msg);
    int ok = rc == 0 && want;
    for (int64_t i = 0; ok && i < cnt; i++) ok = buf[i] == (double)want[i];
    if (rc) why("x via soft link: %s", msg);
    check(ok, "x via a soft link, converted to f64");
    free(want);
    gp_h5_close(&in);
    rc = gp_h5_open(W, file, "cube_link", &in, msg, sizeof msg);
    check(rc == 0 && strcmp(in.dataset, "/cube_link") == 0 && in.ndims == 3,
          "open through a soft link");
    if (rc == 0) gp_h5_close(&in);
}

/* ---- writing ---------------------------------------------------------------------------- */

static int tmp_left(void)
{
    int n = 0;
    if (rank == 0) {
        DIR *d = opendir(scratch);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL)
            if (strstr(e->d_name, ".tmp")) { /* .gpuprim.PID.tmp */
                why("left behind: %s", e->d_name);
                n++;
            }
        if (d) closedir(d);
    }
    MPI_Bcast(&n, 1, MPI_INT, 0, W);
    return n;
}

static int exists(const char *p)
{
    struct stat st;
    int e = stat(p, &st) == 0;
    MPI_Bcast(&e, 1, MPI_INT, 0, W);
    return e;
}

static int h5py_verify(const char *file, const char *dset, const char *ref, const char *gpdt,
                       const char *stored)
{
    int ok = 1;
    if (rank == 0) {
        const char *py = getenv("GPUPRIM_PYTHON");
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "'%s' '%s' --verify '%s' '%s' '%s/%s.ref' %s '%s'",
                 py && py[0] ? py : "/usr/bin/python3", fixpy, file, dset, outdir, ref, gpdt,
                 stored);
        fflush(stdout);
        ok = system(cmd) == 0;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, W);
    return ok;
}

/* Reads fixture `name` sharded, writes it to `out`, reads it back and compares. */
static void round_trip(const char *name, const char *dset_in, gp_dtype as, int keep_type,
                       const char *out, const char *dset_out, const char *want_desc,
                       const char *stored)
{
    char file[1100], msg[MSG];
    gp_h5_input in, back;
    int64_t off, cnt;
    snprintf(file, sizeof file, "%s/%s.h5", outdir, name);
    int rc = gp_h5_open(W, file, dset_in, &in, msg, sizeof msg);
    if (!check(rc == 0, "round trip %s: open", name)) return;
    gp_shard_range(in.n, nranks, rank, &off, &cnt);
    size_t esz = gp_dtype_size(as);
    void *buf = malloc(cnt ? (size_t)cnt * esz : 1);
    rc = gp_h5_read(W, &in, NULL, as, off, cnt, buf, msg, sizeof msg);
    rc = rc ? rc : gp_h5_write(W, out, dset_out, keep_type ? in.ftype : H5I_INVALID_HID, as,
                               in.n, off, cnt, buf, 0, msg, sizeof msg);
    if (rc) why("round trip %s: %s", name, msg);
    check(rc == 0, "round trip %s -> %s:%s", name, out, dset_out);
    int64_t n = in.n;
    gp_h5_close(&in);
    free(buf);
    if (rc) return;

    rc = gp_h5_open(W, out, NULL, &back, msg, sizeof msg);
    if (!check(rc == 0, "round trip %s: reopen", name)) return;
    char absd[1100];
    snprintf(absd, sizeof absd, "%s%s", dset_out[0] == '/' ? "" : "/", dset_out);
    check(strcmp(back.dataset, absd) == 0 && back.ndims == 1 && back.n == n &&
              back.dtype == as && strcmp(back.type_desc, want_desc) == 0,
          "round trip %s: %s, 1-D, n=%lld, %s (got %s)", name, absd, (long long)n, want_desc,
          back.type_desc);
    check(read_matches(&back, NULL, name, as, off, cnt, msg), "round trip %s: data bit-exact",
          name);
    gp_h5_close(&back);
    check(tmp_left() == 0, "round trip %s: no temporary file left", name);
    if (fixpy)
        check(h5py_verify(out, absd, name, gp_dtype_name(as), stored),
              "round trip %s: h5py reads it back (%s)", name, stored);
}

static void test_write(void)
{
    char a[1200], b[1200], c[1200];
    snprintf(a, sizeof a, "%s/rt_i16.h5", scratch);
    snprintf(b, sizeof b, "%s/rt_f64.h5", scratch);
    snprintf(c, sizeof c, "%s/rt_i32be.h5", scratch);

    round_trip("i16", NULL, GP_I32, 1, a, "/out/data", "int16 little-endian", "<i2");
    round_trip("f64_gzip", NULL, GP_F64, 0, b, "data", "float64 little-endian", "<f8");
    round_trip("i32_be", NULL, GP_I32, 1, c, "/data", "int32 big-endian", ">i4");
}

static void test_write_errors(void)
{
    char a[1200], p[1200], msg[MSG];
    double v[64];
    int64_t off, cnt;
    for (int i = 0; i < 64; i++) v[i] = i + 0.5;
    snprintf(a, sizeof a, "%s/rt_i16.h5", scratch);

    /* existing output without force */
    struct stat before, after;
    int have = rank == 0 ? stat(a, &before) == 0 : 1;
    gp_shard_range(50, nranks, rank, &off, &cnt);
    int rc = gp_h5_write(W, a, "/v", H5I_INVALID_HID, GP_F64, 50, off, cnt, v + off, 0, msg,
                         sizeof msg);
    expect_fail("existing output without force", rc, GP_IO_EWRITE, msg, "rt_i16.h5: exists",
                (char *)NULL);
    int same = rank == 0 ? (have && stat(a, &after) == 0 && after.st_ino == before.st_ino &&
                            after.st_mtime == before.st_mtime && after.st_size == before.st_size)
                         : 1;
    check(same, "existing output left untouched");
    check(tmp_left() == 0, "no temporary file after the refusal");

    /* with force it is replaced */
    rc = gp_h5_write(W, a, "/v", H5I_INVALID_HID, GP_F64, 50, off, cnt, v + off, 1, msg,
                     sizeof msg);
    if (rc) why("force: %s", msg);
    gp_h5_input in;
    int rc2 = rc ? rc : gp_h5_open(W, a, NULL, &in, msg, sizeof msg);
    int ok = rc2 == 0 && in.n == 50 && strcmp(in.dataset, "/v") == 0 && in.dtype == GP_F64;
    if (rc2 == 0) {
        double got[64];
        int64_t o2, c2;
        gp_shard_range(50, nranks, rank, &o2, &c2);
        ok = ok && gp_h5_read(W, &in, NULL, GP_F64, o2, c2, got, msg, sizeof msg) == 0 &&
             memcmp(got, v + o2, (size_t)c2 * 8) == 0;
        gp_h5_close(&in);
    }
    check(ok, "existing output replaced with force");
    check(tmp_left() == 0, "no temporary file after the forced write");

    /* failures after the file was created leave nothing */
    snprintf(p, sizeof p, "%s/bad_dset.h5", scratch);
    rc = gp_h5_write(W, p, "/", H5I_INVALID_HID, GP_F64, 50, off, cnt, v + off, 0, msg,
                     sizeof msg);
    expect_fail("dataset that cannot be created", rc, GP_IO_EWRITE, msg, "bad_dset.h5: /: ",
                (char *)NULL);
    check(!exists(p) && tmp_left() == 0, "nothing left after a failed create");

    snprintf(p, sizeof p, "%s/no/such/dir/out.h5", scratch);
    rc = gp_h5_write(W, p, "/v", H5I_INVALID_HID, GP_F64, 50, off, cnt, v + off, 0, msg,
                     sizeof msg);
    expect_fail("output folder missing", rc, GP_IO_EWRITE, msg, "No such file or directory",
                (char *)NULL);

    snprintf(p, sizeof p, "%s/overlap.h5", scratch);
    rc = gp_h5_write(W, p, "/v", H5I_INVALID_HID, GP_F64, 50, 0, rank == 0 ? 50 : 1, v, 0, msg,
                     sizeof msg);
    if (nranks > 1) {
        expect_fail("parts that overlap", rc, GP_IO_EWRITE, msg, "do not cover", (char *)NULL);
        check(!exists(p) && tmp_left() == 0, "nothing left after a tiling error");
    }
    rc = gp_h5_write(W, p, "/v", H5I_INVALID_HID, GP_F64, 50, 0, 0, v, 1, msg, sizeof msg);
    expect_fail("parts that leave a gap", rc, GP_IO_EWRITE, msg, "do not cover", (char *)NULL);

    /* type that cannot be stored */
    hid_t st = H5Tcopy(H5T_C_S1);
    snprintf(p, sizeof p, "%s/strtype.h5", scratch);
    rc = gp_h5_write(W, p, "/v", st, GP_F64, 50, off, cnt, v + off, 0, msg, sizeof msg);
    H5Tclose(st);
    expect_fail("string stored type", rc, GP_IO_EWRITE, msg, "integer or float", (char *)NULL);

    /* a value the stored type cannot hold fails the write (no silent clipping) */
    snprintf(p, sizeof p, "%s/range.h5", scratch);
    int32_t iv[64];
    for (int i = 0; i < 64; i++) iv[i] = i == 37 ? 40000 : i - 20;
    gp_shard_range(64, nranks, rank, &off, &cnt);
    rc = gp_h5_write(W, p, "/v", H5T_STD_I16LE, GP_I32, 64, off, cnt, iv + off, 0, msg,
                     sizeof msg);
    expect_fail("value out of range of the stored type", rc, GP_IO_EWRITE, msg,
                "range.h5: /v: write failed: a value is outside the range", (char *)NULL);
    check(!exists(p) && tmp_left() == 0, "nothing left after a failed write");
    for (int i = 0; i < 64; i++) iv[i] = i * 1000 - 32000;
    rc = gp_h5_write(W, p, "/v", H5T_STD_I16BE, GP_I32, 64, off, cnt, iv + off, 0, msg,
                     sizeof msg);
    rc2 = rc ? rc : gp_h5_open(W, p, NULL, &in, msg, sizeof msg);
    ok = rc2 == 0 && strcmp(in.type_desc, "int16 big-endian") == 0;
    if (rc2 == 0) {
        int32_t got[64];
        ok = ok && gp_h5_read(W, &in, NULL, GP_I32, off, cnt, got, msg, sizeof msg) == 0 &&
             memcmp(got, iv + off, (size_t)cnt * 4) == 0;
        gp_h5_close(&in);
    }
    check(ok, "in-range values written as int16 big-endian");

    /* everything on the last rank, n = 0 on an unusual dataset path */
    snprintf(p, sizeof p, "%s/uneven.h5", scratch);
    int last = rank == nranks - 1;
    rc = gp_h5_write(W, p, "a/b/c", H5I_INVALID_HID, GP_F64, 64, 0, last ? 64 : 0, v, 0, msg,
                     sizeof msg);
    rc2 = rc ? rc : gp_h5_open(W, p, NULL, &in, msg, sizeof msg);
    ok = rc2 == 0 && strcmp(in.dataset, "/a/b/c") == 0 && in.n == 64;
    if (rc2 == 0) {
        double got[64];
        ok = ok && gp_h5_read(W, &in, NULL, GP_F64, 0, last ? 64 : 0, got, msg, sizeof msg) == 0 &&
             (!last || memcmp(got, v, sizeof got) == 0);
        gp_h5_close(&in);
    }
    if (!ok) why("uneven: %s", msg);
    check(ok, "write with every element on the last rank");

    snprintf(p, sizeof p, "%s/empty.h5", scratch);
    rc = gp_h5_write(W, p, "/e", H5I_INVALID_HID, GP_U64, 0, 0, 0, NULL, 0, msg, sizeof msg);
    rc2 = rc ? rc : gp_h5_open(W, p, NULL, &in, msg, sizeof msg);
    ok = rc2 == 0 && in.n == 0 && in.ndims == 1 && in.dtype == GP_U64;
    if (rc2 == 0) {
        ok = ok && gp_h5_read(W, &in, NULL, GP_U64, 0, 0, NULL, msg, sizeof msg) == 0;
        gp_h5_close(&in);
    }
    check(ok, "write and read an empty dataset");
    check(tmp_left() == 0, "no temporary files at the end");
}

/* gp_h5_write_many_staged leaves the finished file under its temporary name until rank 0
 * publishes it (gp_h5_publish) or removes it (gp_h5_discard); one staged file at a time. */
static void test_staged(void)
{
    char p[1200], q[1200], tmp[1200], msg[MSG];
    double v[64];
    int64_t off, cnt;
    for (int i = 0; i < 64; i++) v[i] = 2.0 * i;
    snprintf(p, sizeof p, "%s/staged.h5", scratch);
    snprintf(q, sizeof q, "%s/staged2.h5", scratch);
    long pid0 = (long)getpid(); /* the temporary name is rank 0's */
    MPI_Bcast(&pid0, 1, MPI_LONG, 0, W);
    snprintf(tmp, sizeof tmp, "%s/.gpuprim.%ld.tmp", scratch, pid0);
    gp_shard_range(64, nranks, rank, &off, &cnt);
    const gp_h5_outds d = {"/s", H5I_INVALID_HID, GP_F64, v + off};

    int rc = gp_h5_write_many_staged(W, p, &d, 1, 64, off, cnt, 0, msg, sizeof msg);
    if (rc) why("staged: %s", msg);
    check(rc == 0 && !exists(p) && exists(tmp), "staged write: only the temporary file exists");
    /* a second one while the first is staged: refused, the first kept */
    rc = gp_h5_write_many_staged(W, q, &d, 1, 64, off, cnt, 0, msg, sizeof msg);
    expect_fail("a second staged write", rc, GP_IO_EWRITE, msg, "staged already", (char *)NULL);
    check(!exists(q) && exists(tmp), "the second staged write left nothing, the first is kept");
    rc = rank == 0 ? gp_h5_publish(msg, sizeof msg) : 0;
    if (rc) why("publish: %s", msg);
    check(rc == 0 && exists(p) && !exists(tmp), "publish renames it to its path");
    gp_h5_input in;
    int rc2 = gp_h5_open(W, p, NULL, &in, msg, sizeof msg);
    int ok = rc2 == 0 && in.n == 64 && strcmp(in.dataset, "/s") == 0;
    if (rc2 == 0) {
        double got[64];
        ok = ok && gp_h5_read(W, &in, NULL, GP_F64, off, cnt, got, msg, sizeof msg) == 0 &&
             memcmp(got, v + off, (size_t)cnt * 8) == 0;
        gp_h5_close(&in);
    }
    check(ok, "the published file reads back");
    rc = rank == 0 ? gp_h5_publish(msg, sizeof msg) : 0;
    check(rc == 0 && (rank != 0 || msg[0] == '\0'), "publish with nothing staged: 0, no message");

    /* discarded: nothing left, and the next staged write is allowed again */
    rc = gp_h5_write_many_staged(W, q, &d, 1, 64, off, cnt, 0, msg, sizeof msg);
    if (rc) why("staged 2: %s", msg);
    if (rank == 0) gp_h5_discard(msg, sizeof msg);
    MPI_Barrier(W);
    check(rc == 0 && !exists(q) && !exists(tmp), "discard removes the staged file");
    if (rank == 0) gp_h5_discard(NULL, 0); /* nothing staged: a no-op */
    check(tmp_left() == 0, "no temporary files after the staged writes");
}

/* ---- main ------------------------------------------------------------------------------- */

static void rm_scratch(void)
{
    DIR *d = opendir(scratch);
    struct dirent *e;
    char p[2200];
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", scratch, e->d_name);
        if (unlink(p) != 0) why("cannot remove %s: %s", p, strerror(errno));
    }
    if (d) closedir(d);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    W = MPI_COMM_WORLD;
    MPI_Comm_rank(W, &rank);
    MPI_Comm_size(W, &nranks);
    if (argc < 2 || argc > 3) {
        if (rank == 0) fprintf(stderr, "usage: test_h5io OUTDIR [H5_FIXTURES_PY]\n");
        MPI_Finalize();
        return 2;
    }
    outdir = argv[1];
    fixpy = argc == 3 ? argv[2] : NULL;
    /* a scratch folder of this run only: CTest may run several P at once on one OUTDIR */
    long pid0 = (long)getpid();
    MPI_Bcast(&pid0, 1, MPI_LONG, 0, W);
    snprintf(scratch, sizeof scratch, "%s/test_h5io.out.np%d.%ld", outdir, nranks, pid0);

    /* the fixtures: every NAME.meta in OUTDIR */
    char list[LIST] = "";
    if (rank == 0) {
        if (mkdir(scratch, 0755) != 0 && errno != EEXIST) why("mkdir %s: %s", scratch, strerror(errno));
        rm_scratch();
        DIR *d = opendir(outdir);
        struct dirent *e;
        char *names[256];
        int k = 0;
        while (d && (e = readdir(d)) != NULL && k < 256) {
            size_t l = strlen(e->d_name);
            if (l > 5 && strcmp(e->d_name + l - 5, ".meta") == 0) names[k++] = strdup(e->d_name);
        }
        if (d) closedir(d);
        qsort(names, (size_t)k, sizeof names[0], by_name);
        for (int i = 0; i < k; i++) {
            char mp[2200], ds[1100], dt[32];
            long long n;
            snprintf(mp, sizeof mp, "%s/%s", outdir, names[i]);
            FILE *f = fopen(mp, "r");
            if (f && fscanf(f, "%1023s %31s %lld", ds, dt, &n) == 3) {
                names[i][strlen(names[i]) - 5] = '\0';
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s %s %s %lld\n", names[i], ds, dt, n);
            }
            if (f) fclose(f);
            free(names[i]);
        }
    }
    MPI_Bcast(list, LIST, MPI_CHAR, 0, W);

    int nfix = 0;
    for (char *line = list, *nl; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        char name[256], ds[1100], dt[32];
        long long n;
        gp_dtype t;
        *nl = '\0';
        if (sscanf(line, "%255s %1099s %31s %lld", name, ds, dt, &n) != 4 || gp_dtype_parse(dt, &t)) {
            check(0, "bad meta line '%s'", line);
            continue;
        }
        test_fixture(name, ds, t, n);
        nfix++;
    }
    check(nfix >= 11, "found %d fixtures with .meta", nfix);
    test_open_errors();
    test_read_errors();
    test_write();
    test_write_errors();
    test_staged();

    /* every file, dataset and group that gp_h5_* opened (error paths included) is closed */
    ssize_t open_objs = H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL);
    check(open_objs == 0, "no HDF5 file or object left open (%lld)", (long long)open_objs);

    if (rank == 0) {
        rm_scratch();
        rmdir(scratch);
        printf("%d passed, %d failed\n", npass, nfail);
    }
    MPI_Bcast(&nfail, 1, MPI_INT, 0, W);
    MPI_Finalize();
    return nfail ? 1 : 0;
}

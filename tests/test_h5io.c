/* test_h5io.c — MPI tests of io/h5_*.c (gpuprim/h5io.h) against the files of
 * tests/h5_fixtures.py.
 *
 * usage: mpirun -np P test_h5io OUTDIR [--io posix|mpiio|auto] [H5_FIXTURES_PY]
 * OUTDIR holds the fixtures (NAME.h5, NAME.ref, NAME.meta). Every open, read and write goes
 * through the I/O driver given by --io (default mpiio), so the same checks cover each
 * driver; --io auto must resolve to posix on the local file systems of the tests. With
 * H5_FIXTURES_PY, files
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

#include "gpuprim/kernels.h"
#include "gpuprim/h5io.h"
#include "test_mpi_check.h"

#define LIST 8192
#define MSG 2048

static const char *outdir, *fixpy;
static char scratch[1024];
static gp_io_mode g_io = GP_IO_MPIIO; /* --io */
static gp_io_mode g_want_io = GP_IO_MPIIO; /* what g_io resolves to */

/* The library's calls with the driver under test. */
static int h5open(MPI_Comm c, const char *file, const char *dset, gp_h5_input *in, char *msg,
                  size_t msglen)
{
    return gp_h5_open_io(c, file, dset, g_io, in, msg, msglen);
}

static int h5write(MPI_Comm c, const char *path, const char *dset, hid_t ftype, gp_dtype mem,
                   int64_t n, int64_t off, int64_t cnt, const void *buf, int force, char *msg,
                   size_t msglen)
{
    const gp_h5_outds d = {dset, ftype, mem, buf};
    return gp_h5_write_many_io(c, g_io, 0, path, &d, 1, n, off, cnt, force, msg, msglen);
}

static int h5write_staged(MPI_Comm c, const char *path, const gp_h5_outds *ds, int nds,
                          int64_t n, int64_t off, int64_t cnt, int force, char *msg,
                          size_t msglen)
{
    return gp_h5_write_many_io(c, g_io, 1, path, ds, nds, n, off, cnt, force, msg, msglen);
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

/* How the posix driver must read each fixture (gp_h5_reader_how); "hdf5" for the others.
 * The chunked ones take the direct chunk path with either driver (LZF too: the fixture runs
 * only where gpuprim's own LZF filter is registered, which that path decodes). */
static const char *expect_how(const char *name)
{
    static const char *const t[][2] = {
        {"f32_2d", "pread"},          {"i64", "pread"},         {"u64_big", "pread"},
        {"u32_one", "pread"},         {"userblock", "pread"},   {"ambiguous", "pread"},
        {"i32_be", "pread+convert"},  {"i16", "pread+convert"}, {"f16", "pread+convert"},
        {"i8_cube", "pread+convert"}, {"ldouble", "pread+convert"},
        {"f16_big", "pread+convert"}, {"ldouble_big", "pread+convert"},
        {"f64_gzip", "chunks"},       {"u16_chunk2d", "chunks"},    {"f32_lzf", "chunks"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i][0], name) == 0) return t[i][1];
    return "hdf5"; /* compact, external, never written, empty */
}

/* A reader opened once, many reads of random ranges: with the posix driver a different
 * number of reads on every rank (local calls), with mpiio the same number (collective). */
static void test_reader(const gp_h5_input *in, const char *name, gp_dtype dt)
{
    char msg[MSG];
    gp_h5_reader *r = NULL;
    int rc = gp_h5_reader_open(W, in, NULL, dt, &r, msg, sizeof msg);
    if (!check(rc == 0 && r != NULL, "%s: reader open", name)) {
        if (rank == 0) printf("   message: %s\n", msg);
        return;
    }
    const char *how = expect_how(name);
    const char *want = g_want_io == GP_IO_MPIIO && strcmp(how, "chunks") != 0 ? "mpiio" : how;
    check(strcmp(gp_h5_reader_how(r), want) == 0, "%s: read by %s (got %s)", name, want,
          gp_h5_reader_how(r));
    const size_t esz = gp_dtype_size(dt);
    const int reads = g_want_io == GP_IO_MPIIO ? 4 : 2 + 3 * rank;
    uint64_t s = 0x9e3779b97f4a7c15ull ^ (uint64_t)(rank + 1) * 0x100000001b3ull;
    int ok = 1;
    for (int t = 0; t < reads; t++) {
        int64_t a = in->n ? (int64_t)(lcg(&s) % (uint64_t)(in->n + 1)) : 0;
        int64_t b = in->n ? (int64_t)(lcg(&s) % (uint64_t)(in->n + 1)) : 0;
        if (a > b) { int64_t z = a; a = b; b = z; }
        unsigned char *got = malloc(b > a ? (size_t)(b - a) * esz : 1);
        unsigned char *ref = read_ref(name, esz, a, b - a);
        memset(got, 0xa5, b > a ? (size_t)(b - a) * esz : 1); /* poison */
        rc = gp_h5_reader_read(r, a, b - a, got, msg, sizeof msg);
        if (rc) why("%s: reader [%lld, %lld): %s", name, (long long)a, (long long)b, msg);
        ok &= rc == 0 && ref && same_bytes(got, ref, dt, gp_dtype_is_float(dt), b - a, a, name);
        free(got);
        free(ref);
    }
    check(ok, "%s: reader, %s reads of random ranges", name,
          g_want_io == GP_IO_MPIIO ? "4 collective" : "2 + 3 rank local");
    /* a range past the end: this rank's own error, the reader still usable */
    if (g_want_io != GP_IO_MPIIO && in->n > 0) {
        unsigned char one[16];
        rc = gp_h5_reader_read(r, rank == 0 ? in->n : 0, 1, one, msg, sizeof msg);
        int good = rank == 0 ? rc == GP_IO_EREAD && strstr(msg, "outside") != NULL : rc == 0;
        rc = gp_h5_reader_read(r, in->n - 1, 1, one, msg, sizeof msg);
        check(good && rc == 0, "%s: reader: a range past the end fails on its rank only", name);
    }
    gp_h5_reader_close(r);
}

/* ---- one fixture ------------------------------------------------------------------------ */

static void test_fixture(const char *name, const char *mdset, gp_dtype mdt, int64_t mn)
{
    char file[1100], msg[MSG];
    gp_h5_input in;
    snprintf(file, sizeof file, "%s/%s.h5", outdir, name);

    /* default dataset: either found, or ambiguous with the right one among the candidates */
    int rc = h5open(W, file, NULL, &in, msg, sizeof msg);
    if (rc == 0) {
        check(strcmp(in.dataset, mdset) == 0, "%s: default dataset is %s (got %s)", name, mdset,
              in.dataset);
        gp_h5_close(&in);
    } else {
        int ok = rc == GP_IO_EDATASET && strstr(msg, "numeric datasets") && strstr(msg, mdset);
        check(ok, "%s: default dataset ambiguous, lists %s", name, mdset);
    }

    /* explicit relative name */
    rc = h5open(W, file, mdset + 1, &in, msg, sizeof msg);
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
    check(in.io == g_want_io, "%s: opened with the %s driver (got %s)", name,
          gp_io_mode_name(g_want_io), gp_io_mode_name(in.io));
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
    test_reader(&in, name, mdt);
    gp_h5_close(&in);
}

/* ---- error cases ------------------------------------------------------------------------ */

static void test_open_errors(void)
{
    char file[1100], msg[MSG];
    gp_h5_input in;

    snprintf(file, sizeof file, "%s/ambiguous.h5", outdir);
    int rc = h5open(W, file, NULL, &in, msg, sizeof msg);
    expect_fail("ambiguous default dataset", rc, GP_IO_EDATASET, msg,
                "2 numeric datasets, choose one with --dataset: /a, /b", (char *)NULL);
    check(!strstr(msg, "/s"), "ambiguous: the string dataset is not a candidate");
    rc = h5open(W, file, "/s", &in, msg, sizeof msg);
    expect_fail("string dataset", rc, GP_IO_EDATASET, msg,
                "/s: unsupported element class string (need integer or float)", (char *)NULL);

    snprintf(file, sizeof file, "%s/no_such_file.h5", outdir);
    rc = h5open(W, file, NULL, &in, msg, sizeof msg);
    expect_fail("missing file", rc, GP_IO_EOPEN, msg, "no_such_file.h5: cannot open",
                "No such file or directory", (char *)NULL);

    rc = h5open(W, outdir, NULL, &in, msg, sizeof msg);
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
    rc = h5open(W, file, NULL, &in, msg, sizeof msg);
    expect_fail("not an HDF5 file", rc, GP_IO_EOPEN, msg, "not an HDF5 file",
                "signature", (char *)NULL);

    snprintf(file, sizeof file, "%s/f64_gzip.h5", outdir);
    rc = h5open(W, file, "/x", &in, msg, sizeof msg);
    expect_fail("missing dataset", rc, GP_IO_EDATASET, msg, "f64_gzip.h5: /x: no such dataset",
                (char *)NULL);
    rc = h5open(W, file, "g/h/x", &in, msg, sizeof msg);
    expect_fail("missing dataset in a missing group", rc, GP_IO_EDATASET, msg,
                "/g/h/x: no such dataset", (char *)NULL);

    snprintf(file, sizeof file, "%s/i8_cube.h5", outdir);
    rc = h5open(W, file, "/g", &in, msg, sizeof msg);
    expect_fail("group instead of dataset", rc, GP_IO_EDATASET, msg, "/g: not a dataset",
                (char *)NULL);

    snprintf(file, sizeof file, "%s/misc_errors.h5", outdir);
    rc = h5open(W, file, "scalar", &in, msg, sizeof msg);
    expect_fail("scalar dataset", rc, GP_IO_EDATASET, msg,
                "/scalar: scalar dataspace (need an array)", (char *)NULL);
    rc = h5open(W, file, NULL, &in, msg, sizeof msg);
    /* /scalar is numeric but no array: not a candidate */
    expect_fail("several numeric datasets", rc, GP_IO_EDATASET, msg,
                "4 numeric datasets, choose one with --dataset: /lzf, /unknown_filter, /x, /y",
                (char *)NULL);
}

static void test_read_errors(void)
{
    char file[1100], msg[MSG];
    gp_h5_input in;
    double buf[128];
    int64_t off, cnt;

    snprintf(file, sizeof file, "%s/misc_errors.h5", outdir);
    int rc = h5open(W, file, "/y", &in, msg, sizeof msg);
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

    rc = h5open(W, file, "/unknown_filter", &in, msg, sizeof msg);
    if (!check(rc == 0, "misc_errors: open /unknown_filter (filter checked at read time)")) return;
    float *fb = malloc(1000 * sizeof(float));
    gp_shard_range(in.n, nranks, rank, &off, &cnt);
    rc = gp_h5_read(W, &in, NULL, GP_F32, off, cnt, fb, msg, sizeof msg);
    expect_fail("missing filter", rc, GP_IO_EREAD, msg, "/unknown_filter: read failed",
                "required filter (name unavailable) is not registered", (char *)NULL);
    gp_h5_close(&in);

    /* LZF (h5py's filter id 32000), which gp_h5_open registers: arange(1000); in a build
     * without liblzf (and no LZF plugin) the read fails saying how to get it */
    rc = h5open(W, file, "/lzf", &in, msg, sizeof msg);
    if (!check(rc == 0, "misc_errors: open /lzf")) {
        free(fb);
        return;
    }
    rc = gp_h5_read(W, &in, NULL, GP_F32, off, cnt, fb, msg, sizeof msg);
    if (gp_h5_register_filters() == 0) {
        int lzf_ok = rc == 0;
        for (int64_t i = 0; lzf_ok && i < cnt; i++) lzf_ok = fb[i] == (float)(off + i);
        check(lzf_ok, "misc_errors: /lzf reads as arange(1000) (rc %d: %s)", rc, msg);
    } else {
        expect_fail("LZF without liblzf", rc, GP_IO_EREAD, msg, "/lzf: read failed",
                    "install liblzf-dev and rebuild, or set HDF5_PLUGIN_PATH", (char *)NULL);
    }
    free(fb);
    gp_h5_close(&in);

    /* x through a soft link to the same data: a different path, read as f64 */
    snprintf(file, sizeof file, "%s/i8_cube.h5", outdir);
    rc = h5open(W, file, NULL, &in, msg, sizeof msg);
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
    rc = h5open(W, file, "cube_link", &in, msg, sizeof msg);
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
    int rc = h5open(W, file, dset_in, &in, msg, sizeof msg);
    if (!check(rc == 0, "round trip %s: open", name)) return;
    gp_shard_range(in.n, nranks, rank, &off, &cnt);
    size_t esz = gp_dtype_size(as);
    void *buf = malloc(cnt ? (size_t)cnt * esz : 1);
    rc = gp_h5_read(W, &in, NULL, as, off, cnt, buf, msg, sizeof msg);
    rc = rc ? rc : h5write(W, out, dset_out, keep_type ? in.ftype : H5I_INVALID_HID, as,
                               in.n, off, cnt, buf, 0, msg, sizeof msg);
    if (rc) why("round trip %s: %s", name, msg);
    check(rc == 0, "round trip %s -> %s:%s", name, out, dset_out);
    int64_t n = in.n;
    gp_h5_close(&in);
    free(buf);
    if (rc) return;

    rc = h5open(W, out, NULL, &back, msg, sizeof msg);
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
    /* conversions in several pieces: float32 -> float16, float64 -> long double */
    snprintf(a, sizeof a, "%s/rt_f16.h5", scratch);
    snprintf(b, sizeof b, "%s/rt_ld.h5", scratch);
    round_trip("f16_big", NULL, GP_F32, 1, a, "/h", "float16 little-endian", "<f2");
    round_trip("ldouble_big", NULL, GP_F64, 1, b, "/ld", "float80 (16 bytes) little-endian",
               "<f16");
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
    int rc = h5write(W, a, "/v", H5I_INVALID_HID, GP_F64, 50, off, cnt, v + off, 0, msg,
                         sizeof msg);
    expect_fail("existing output without force", rc, GP_IO_EWRITE, msg, "rt_i16.h5: exists",
                (char *)NULL);
    int same = rank == 0 ? (have && stat(a, &after) == 0 && after.st_ino == before.st_ino &&
                            after.st_mtime == before.st_mtime && after.st_size == before.st_size)
                         : 1;
    check(same, "existing output left untouched");
    check(tmp_left() == 0, "no temporary file after the refusal");

    /* with force it is replaced */
    rc = h5write(W, a, "/v", H5I_INVALID_HID, GP_F64, 50, off, cnt, v + off, 1, msg,
                     sizeof msg);
    if (rc) why("force: %s", msg);
    gp_h5_input in;
    int rc2 = rc ? rc : h5open(W, a, NULL, &in, msg, sizeof msg);
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
    rc = h5write(W, p, "/", H5I_INVALID_HID, GP_F64, 50, off, cnt, v + off, 0, msg,
                     sizeof msg);
    expect_fail("dataset that cannot be created", rc, GP_IO_EWRITE, msg, "bad_dset.h5: /: ",
                (char *)NULL);
    check(!exists(p) && tmp_left() == 0, "nothing left after a failed create");

    snprintf(p, sizeof p, "%s/no/such/dir/out.h5", scratch);
    rc = h5write(W, p, "/v", H5I_INVALID_HID, GP_F64, 50, off, cnt, v + off, 0, msg,
                     sizeof msg);
    expect_fail("output folder missing", rc, GP_IO_EWRITE, msg, "No such file or directory",
                (char *)NULL);

    snprintf(p, sizeof p, "%s/overlap.h5", scratch);
    rc = h5write(W, p, "/v", H5I_INVALID_HID, GP_F64, 50, 0, rank == 0 ? 50 : 1, v, 0, msg,
                     sizeof msg);
    if (nranks > 1) {
        expect_fail("parts that overlap", rc, GP_IO_EWRITE, msg, "do not cover", (char *)NULL);
        check(!exists(p) && tmp_left() == 0, "nothing left after a tiling error");
    }
    rc = h5write(W, p, "/v", H5I_INVALID_HID, GP_F64, 50, 0, 0, v, 1, msg, sizeof msg);
    expect_fail("parts that leave a gap", rc, GP_IO_EWRITE, msg, "do not cover", (char *)NULL);

    /* type that cannot be stored */
    hid_t st = H5Tcopy(H5T_C_S1);
    snprintf(p, sizeof p, "%s/strtype.h5", scratch);
    rc = h5write(W, p, "/v", st, GP_F64, 50, off, cnt, v + off, 0, msg, sizeof msg);
    H5Tclose(st);
    expect_fail("string stored type", rc, GP_IO_EWRITE, msg, "integer or float", (char *)NULL);

    /* a value the stored type cannot hold fails the write (no silent clipping) */
    snprintf(p, sizeof p, "%s/range.h5", scratch);
    int32_t iv[64];
    for (int i = 0; i < 64; i++) iv[i] = i == 37 ? 40000 : i - 20;
    gp_shard_range(64, nranks, rank, &off, &cnt);
    rc = h5write(W, p, "/v", H5T_STD_I16LE, GP_I32, 64, off, cnt, iv + off, 0, msg,
                     sizeof msg);
    expect_fail("value out of range of the stored type", rc, GP_IO_EWRITE, msg,
                "range.h5: /v: write failed: a value is outside the range", (char *)NULL);
    check(!exists(p) && tmp_left() == 0, "nothing left after a failed write");
    for (int i = 0; i < 64; i++) iv[i] = i * 1000 - 32000;
    rc = h5write(W, p, "/v", H5T_STD_I16BE, GP_I32, 64, off, cnt, iv + off, 0, msg,
                     sizeof msg);
    rc2 = rc ? rc : h5open(W, p, NULL, &in, msg, sizeof msg);
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
    rc = h5write(W, p, "a/b/c", H5I_INVALID_HID, GP_F64, 64, 0, last ? 64 : 0, v, 0, msg,
                     sizeof msg);
    rc2 = rc ? rc : h5open(W, p, NULL, &in, msg, sizeof msg);
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
    rc = h5write(W, p, "/e", H5I_INVALID_HID, GP_U64, 0, 0, 0, NULL, 0, msg, sizeof msg);
    rc2 = rc ? rc : h5open(W, p, NULL, &in, msg, sizeof msg);
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

    int rc = h5write_staged(W, p, &d, 1, 64, off, cnt, 0, msg, sizeof msg);
    if (rc) why("staged: %s", msg);
    check(rc == 0 && !exists(p) && exists(tmp), "staged write: only the temporary file exists");
    /* a second one while the first is staged: refused, the first kept */
    rc = h5write_staged(W, q, &d, 1, 64, off, cnt, 0, msg, sizeof msg);
    expect_fail("a second staged write", rc, GP_IO_EWRITE, msg, "staged already", (char *)NULL);
    check(!exists(q) && exists(tmp), "the second staged write left nothing, the first is kept");
    rc = rank == 0 ? gp_h5_publish(msg, sizeof msg) : 0;
    if (rc) why("publish: %s", msg);
    check(rc == 0 && exists(p) && !exists(tmp), "publish renames it to its path");
    gp_h5_input in;
    int rc2 = h5open(W, p, NULL, &in, msg, sizeof msg);
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
    rc = h5write_staged(W, q, &d, 1, 64, off, cnt, 0, msg, sizeof msg);
    if (rc) why("staged 2: %s", msg);
    if (rank == 0) gp_h5_discard(msg, sizeof msg);
    MPI_Barrier(W);
    check(rc == 0 && !exists(q) && !exists(tmp), "discard removes the staged file");
    if (rank == 0) gp_h5_discard(NULL, 0); /* nothing staged: a no-op */
    check(tmp_left() == 0, "no temporary files after the staged writes");
}

/* A dataset behind an external link: its raw data lie in the link's target file. */
static void test_elink(void)
{
    char file[1100], msg[MSG];
    gp_h5_input in;
    snprintf(file, sizeof file, "%s/elink.h5", outdir);
    int rc = h5open(W, file, "via", &in, msg, sizeof msg);
    if (!check(rc == 0 && in.n == 4099 && in.dtype == GP_F64, "elink: open /via")) {
        if (rank == 0) printf("   message: %s\n", msg);
        return;
    }
    int64_t off, cnt;
    gp_shard_range(in.n, nranks, rank, &off, &cnt);
    check(read_matches(&in, NULL, "elink", GP_F64, off, cnt, msg), "elink: shards bit-exact");
    gp_h5_reader *r = NULL;
    rc = gp_h5_reader_open(W, &in, NULL, GP_F64, &r, msg, sizeof msg);
    check(rc == 0 && strcmp(gp_h5_reader_how(r), g_want_io == GP_IO_MPIIO ? "mpiio" : "pread") == 0,
          "elink: read by %s", rc == 0 ? gp_h5_reader_how(r) : msg);
    gp_h5_reader_close(r);
    gp_h5_close(&in);
}

/* Reads dataset dset of file (n elements as dt) on rank 0 and compares with want. */
static int file_holds(const char *file, const char *dset, gp_dtype dt, int64_t n,
                      const void *want)
{
    char msg[MSG];
    gp_h5_input in;
    int ok = h5open(W, file, dset, &in, msg, sizeof msg) == 0 && in.n == n && in.dtype == dt;
    if (ok) {
        const size_t esz = gp_dtype_size(dt);
        unsigned char *got = malloc(n > 0 ? (size_t)n * esz : 1);
        ok = got && gp_h5_read(W, &in, NULL, dt, 0, rank == 0 ? n : 0, got, msg, sizeof msg) == 0 &&
             (rank != 0 || memcmp(got, want, (size_t)n * esz) == 0);
        free(got);
        gp_h5_close(&in);
    }
    if (!ok) why("%s:%s: %s", file, dset, msg);
    return ok;
}

/* The writer object: several datasets written in pieces of random sizes in random order
 * (posix: a different number of local calls on every rank; mpiio: the same number,
 * collective), converted where stored otherwise; a cancelled one and a failing one leave
 * nothing. */
static void test_writer(void)
{
    enum { N = 100003 };
    char p[1200], msg[MSG];
    double *v = malloc(N * sizeof *v);
    int32_t *iv = malloc(N * sizeof *iv);
    float *fv = malloc(N * sizeof *fv);
    uint64_t s = 0xfeedull;
    for (int i = 0; i < N; i++) {
        v[i] = (double)(int64_t)lcg(&s) * 1e-9;
        iv[i] = (int32_t)(lcg(&s) % 65536) - 32768;
        fv[i] = (float)((int)(lcg(&s) % 4001) - 2000) * 0.25f; /* exact in float16 */
    }
    int64_t off, cnt;
    gp_shard_range(N, nranks, rank, &off, &cnt);
    /* IEEE binary16, little-endian (HDF5 1.10 predefines none) */
    hid_t f16 = H5Tcopy(H5T_IEEE_F32LE);
    if (f16 < 0 || H5Tset_fields(f16, 15, 10, 5, 0, 10) < 0 || H5Tset_precision(f16, 16) < 0 ||
        H5Tset_size(f16, 2) < 0 || H5Tset_ebias(f16, 15) < 0)
        why("cannot make a float16 type");
    const gp_h5_outds ds[3] = {{"/v", H5I_INVALID_HID, GP_F64, NULL},
                               {"/g/i16", H5T_STD_I16BE, GP_I32, NULL},
                               {"/h", f16, GP_F32, NULL}};
    const void *src[3] = {v, iv, fv};
    snprintf(p, sizeof p, "%s/writer.h5", scratch);
    gp_h5_writer *w = NULL;
    int rc = gp_h5_writer_open(W, g_io, 0, p, ds, 3, N, off, cnt, 0, &w, msg, sizeof msg);
    if (!check(rc == 0 && w, "writer: open %s", msg)) goto out;
    /* pieces: k = 0..K-1 of each dataset, in a shuffled order */
    const int K = g_want_io == GP_IO_MPIIO ? 7 : 3 + 2 * rank;
    int order[3 * 16], nord = 0;
    for (int i = 0; i < 3 * K; i++) order[nord++] = i;
    for (int i = nord - 1; i > 0 && g_want_io != GP_IO_MPIIO; i--) {
        int j = (int)(lcg(&s) % (uint64_t)(i + 1)), z = order[i];
        order[i] = order[j];
        order[j] = z;
    }
    for (int i = 0; i < nord && rc == 0; i++) {
        const int k = order[i] / K, piece = order[i] % K;
        const int64_t lo = off + cnt * piece / K, hi = off + cnt * (piece + 1) / K;
        const size_t esz = gp_dtype_size(ds[k].mem);
        rc = gp_h5_writer_write(w, k, lo, hi - lo, (const char *)src[k] + (size_t)lo * esz, msg,
                                sizeof msg);
    }
    if (rc) why("writer: %s", msg);
    rc = gp_h5_writer_close(w, 0, msg, sizeof msg);
    check(rc == 0, "writer: %d pieces of 3 datasets written and closed (%s)", nord, msg);
    check(file_holds(p, "/v", GP_F64, N, v) && file_holds(p, "/g/i16", GP_I32, N, iv) &&
              file_holds(p, "/h", GP_F32, N, fv),
          "writer: the three datasets read back bit-exact");
    check(tmp_left() == 0, "writer: no temporary file left");

    /* cancelled after some writes: nothing left, 0 returned */
    snprintf(p, sizeof p, "%s/writer_cancel.h5", scratch);
    rc = gp_h5_writer_open(W, g_io, 0, p, ds, 1, N, off, cnt, 0, &w, msg, sizeof msg);
    if (rc == 0) rc = gp_h5_writer_write(w, 0, off, cnt / 2, v + off, msg, sizeof msg);
    rc |= gp_h5_writer_close(w, 1, msg, sizeof msg);
    check(rc == 0 && !exists(p) && tmp_left() == 0, "writer: cancelled, nothing left");

    /* one rank writes outside its part (posix: only that rank knows until the close) */
    snprintf(p, sizeof p, "%s/writer_bad.h5", scratch);
    rc = gp_h5_writer_open(W, g_io, 0, p, ds, 1, N, off, cnt, 0, &w, msg, sizeof msg);
    if (rc == 0) {
        const int bad = rank == nranks - 1;
        gp_h5_writer_write(w, 0, bad ? off + cnt : off, bad ? 1 : cnt, v, msg, sizeof msg);
        rc = gp_h5_writer_close(w, 0, msg, sizeof msg);
    }
    expect_fail("writer: a write outside the rank's part", rc, GP_IO_EWRITE, msg,
                "writer_bad.h5: /v: elements", "outside this rank's part", (char *)NULL);
    check(!exists(p) && tmp_left() == 0, "writer: nothing left after the failed write");
out:
    H5Tclose(f16);
    free(v);
    free(iv);
    free(fv);
}

/* The test hooks pread / pwrite (gp_h5_set_faults; the programs set them from
 * GPUPRIM_FAULT=R:pread / R:pwrite): the posix driver's system calls fail (EIO) on the last
 * rank only; every rank reports it, and a write leaves nothing. (mpiio ignores them.) */
static void test_faults(void)
{
    char p[1200], file[1100], msg[MSG];
    double v[64] = {0};
    int64_t off, cnt;
    gp_h5_input in;
    snprintf(file, sizeof file, "%s/f32_2d.h5", outdir);
    if (h5open(W, file, NULL, &in, msg, sizeof msg) != 0) {
        check(0, "faults: open f32_2d: %s", msg);
        return;
    }
    gp_shard_range(in.n, nranks, rank, &off, &cnt);
    float *buf = malloc((size_t)(cnt ? cnt : 1) * sizeof *buf);
    const gp_h5_faults on_read = {.pread = rank == nranks - 1};
    gp_h5_set_faults(&on_read);
    int rc = gp_h5_read(W, &in, NULL, GP_F32, off, cnt, buf, msg, sizeof msg);
    if (g_want_io == GP_IO_POSIX)
        expect_fail("injected EIO in pread", rc, GP_IO_EREAD, msg, "f32_2d.h5: /data: read failed",
                    strerror(EIO), (char *)NULL);
    else
        check(rc == 0, "mpiio ignores GPUPRIM_FAULT=R:pread");
    free(buf);
    gp_h5_close(&in);

    const gp_h5_faults on_write = {.pwrite = rank == nranks - 1};
    gp_h5_set_faults(&on_write);
    snprintf(p, sizeof p, "%s/fault.h5", scratch);
    gp_shard_range(64, nranks, rank, &off, &cnt);
    rc = h5write(W, p, "/v", H5T_STD_I16LE, GP_F64, 64, off, cnt, v + off, 0, msg, sizeof msg);
    if (g_want_io == GP_IO_POSIX) {
        expect_fail("injected EIO in pwrite", rc, GP_IO_EWRITE, msg, "fault.h5: /v: write failed",
                    strerror(EIO), (char *)NULL);
        check(!exists(p) && tmp_left() == 0, "nothing left after the failed pwrite");
    } else {
        check(rc == 0, "mpiio ignores GPUPRIM_FAULT=R:pwrite");
    }
    gp_h5_set_faults(NULL);
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
    int a = 2;
    if (argc >= 4 && strcmp(argv[2], "--io") == 0) {
        if (gp_io_mode_parse(argv[3], &g_io) != 0) argc = 0; /* usage */
        a = 4;
    }
    if (argc < 2 || argc > a + 1) {
        if (rank == 0) fprintf(stderr, "usage: test_h5io OUTDIR [--io posix|mpiio|auto] [H5_FIXTURES_PY]\n");
        MPI_Finalize();
        return 2;
    }
    outdir = argv[1];
    fixpy = argc == a + 1 ? argv[a] : NULL;
    g_want_io = g_io == GP_IO_MPIIO ? GP_IO_MPIIO : GP_IO_POSIX;
    if (rank == 0) printf("driver: --io %s\n", gp_io_mode_name(g_io));
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
        /* LZF fixtures need LZF; without liblzf test_read_errors checks the message */
        if (strstr(name, "lzf") && gp_h5_register_filters() != 0) {
            if (rank == 0) printf("skip - %s: this build reads no LZF\n", name);
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
    test_elink();
    test_writer();
    test_faults();

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

/* fuzz_h5select.c — libFuzzer target for the HDF5 dataset-selection layer (io/h5_open.c,
 * h5_select.c, h5_reader.c).
 *
 * Structural, not byte-level: the input is decoded (one byte per choice, zeros once it runs
 * out) into a small file description, which is written with the HDF5 C API to a file in
 * a temporary folder (/dev/shm when writable, else $TMPDIR or /tmp; GP_FUZZ_TMP overrides):
 *   - 1..4 datasets in the root or in 0..3 (nested) groups, of an integer type (1/2/4/8
 *     bytes, signed or not, little or big endian, also 12-bit precision in 2 bytes and a
 *     committed named type), a float type (float16, float32/64 either order, long double)
 *     or a non-numeric one (fixed and variable strings, compound and enum with 1..9
 *     members of names up to 60 characters, vlen, opaque, array, object and region
 *     references, bitfields, a 16-byte integer);
 *   - a scalar, null or simple dataspace of rank 1..3 with dimensions 0..8 (rank 1 up to
 *     ~2000), fixed or unlimited (then created smaller and extended);
 *   - contiguous, compact, chunked (gzip or, built with liblzf, LZF; shuffle, fletcher32,
 *     nbit, scale-offset) or
 *     external raw storage; written, its first rows written (the rest, and chunks never
 *     written, read as the fill value), or not written at all (a set or default fill);
 *   - soft links (to a dataset, a group, nowhere), external links (to a dataset of a second
 *     file, to a missing file or object), hard aliases; an attribute; old or new format.
 * Then gp_h5_open_io with the mpiio or the posix driver (bit 1 of the first byte; the
 * posix one reads each layout its own way: pread, pread + H5Tconvert, or H5Dread) of the
 * requested dataset or the default search, gp_h5_read of the whole
 * dataset, of sub-ranges (also out-of-range ones), as other element types, and of a second
 * dataset as float64 (the --x path), and gp_h5_close run on MPI_COMM_WORLD of a singleton
 * MPI process, checking:
 *   - an error is a clean one: code 3/4/5 as documented, a non-empty one-line message that
 *     names the file and the dataset asked for; what must fail does (missing or dangling,
 *     group, non-numeric class, scalar or null space, zero or several numeric array
 *     datasets for the default, or its one with a path too long), with GP_IO_EDATASET;
 *   - what docs/input.md promises opens (any integer/float of <= 8 bytes, float16, long
 *     double, any rank, any layout, filters, zero elements) and reads: dims, element count
 *     = product of dims, element type as documented, every value equal to what was
 *     written (or the fill value), for every sub-range;
 *   - no HDF5 object stays open after gp_h5_close or a failed gp_h5_open, and the sanitizers
 *     see no overflow, use after free, leak or undefined behaviour in our code.
 * A chunked dataset whose filters gpuprim undoes takes the direct chunk path (io/h5_chunks.c)
 * in those reads, with 1-3 decoding threads (by the description's seed; the H5Dchunk_iter
 * table path, emulated where the HDF5 lacks the call); then it is read again through one
 * reader in pieces of a chosen size from a chosen offset, with or without the expected
 * range, with 1, 2, 3 or 64 threads, and back from the start; once more with the direct path
 * off; and, for a chunk stored with deflate or Fletcher-32 (LZF has no check), after one of
 * its bytes is changed: every read must give the written values, and the damaged one a
 * clean error that names the chunk's offset.
 * A failed invariant prints the description and aborts (libFuzzer saves the input);
 * GP_FUZZ_DESCRIBE=1 prints every description (and HDF5's errors while writing it),
 * GP_FUZZ_LOG=1 every error message, GP_FUZZ_KEEP=1 keeps the last files at exit.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>
#include <mpi.h>

#include "gpuprim/h5io.h"

#include "fuzz_lsan.h"

#define MAXDS 4
#define MAXGR 3
#define MAXLK 3
#define MAXN 4096
#define MSGLEN 2048
#define LONGNAME 1100

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- input bytes -> choices ------------------------------------------------------------- */

typedef struct rd {
    const uint8_t *p;
    size_t n;
} rd;

static unsigned u8(rd *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}
static unsigned pick(rd *r, unsigned k) { return k <= 1 ? 0 : u8(r) % k; }
static unsigned u16(rd *r)
{
    unsigned a = u8(r);
    return a | u8(r) << 8;
}

/* ---- the description -------------------------------------------------------------------- */

enum { /* element type classes; the first four are numeric (integer or float class) */
    T_INT, T_FLOAT, T_INTPREC, T_COMMITTED, T_INT16B,
    T_STR, T_VSTR, T_COMPOUND, T_ENUM, T_VLEN, T_OPAQUE, T_ARRAY, T_REF, T_BITFIELD, NT
};
static const char *const tnames[NT] = {"int", "float", "int12", "committed-int", "int128",
                                       "string", "vlen-string", "compound", "enum", "vlen",
                                       "opaque", "array", "reference", "bitfield"};
enum { S_SIMPLE, S_SCALAR, S_NULL };
enum { L_CONTIG, L_CHUNK, L_COMPACT, L_EXTERNAL };
static const char *const lnames[] = {"contiguous", "chunked", "compact", "external"};

typedef struct ds {
    char name[LONGNAME + 16]; /* link name in the parent */
    char path[LONGNAME + 64]; /* absolute path */
    int parent;               /* -1 root, else a group */
    int tc, size, sgn, be, prec;
    int sc, rank, unlim;
    hsize_t dims[3], chunk[3];
    int layout, gzip, shuffle, fletcher, nbit, sofs;
    int lzf; /* LZF (32000) in gzip's place (a build with liblzf: GPUPRIM_HAVE_LZF) */
    int written, fillset, attr; /* written: 0 no, 1 all, 2 the first `rows` of dim 0 */
    hsize_t rows;
    int64_t nwritten;         /* leading elements (row-major) written; the rest: fill */
    unsigned char fillmem[8]; /* the set fill value in memory form */
    unsigned var;             /* variant of a non-numeric type (fields, members, ...) */
    uint32_t seed;
    int64_t n;
    gp_dtype dt;      /* element type it reads as (numeric, supported) */
    int numeric;      /* integer or float class: a default-search candidate */
    int must_ok;      /* docs/input.md promises it opens and reads */
    int must_fail;    /* it can never open */
    int longname;
    void *want;       /* n values as dt */
    double *want64;   /* n values as float64 where exact, else NULL */
} ds;

enum { K_SOFT_DS, K_SOFT_DANGLING, K_EXT, K_EXT_NOFILE, K_HARD, K_SOFT_GROUP, K_EXT_NOOBJ, NK };
static const char *const knames[NK] = {"soft->dataset", "soft->nowhere", "external->ext",
                                       "external->missing file", "hard alias",
                                       "soft->group", "external->missing object"};

typedef struct lnk {
    int kind, parent, target;
    char name[32], path[64];
} lnk;

typedef struct spec {
    int newformat, crt_order;
    int posix;          /* read with the posix I/O driver (else mpiio) */
    int ngr, grparent[MAXGR];
    char grpath[MAXGR][32];
    int nds;
    ds d[MAXDS];
    int nlk;
    lnk l[MAXLK];
    int ext_m;          /* elements of /ext in the second file */
    double ext_want[64];
    int req;            /* requested-name choice */
    char reqname[LONGNAME + 80];
    int reqnull;
} spec;

static char F_MAIN[512], F_EXT[512], F_RAW[512];

/* what the inputs exercised (printed at exit) */
static struct {
    long inputs, unbuildable, open_ok, open_ok_strict, open_err, read_ok, read_err, range_err,
        x_ok, x_err, pieces, damaged;
} N;

static void describe(const spec *S)
{
    fprintf(stderr, "  file %s (%s format), read with --io %s\n", F_MAIN,
            S->newformat ? "latest" : "earliest", S->posix ? "posix" : "mpiio");
    for (int g = 0; g < S->ngr; g++) fprintf(stderr, "  group %s\n", S->grpath[g]);
    for (int i = 0; i < S->nds; i++) {
        const ds *d = &S->d[i];
        fprintf(stderr, "  dataset %.80s%s: %s size %d %s %s prec %d, %s rank %d dims", d->path,
                d->longname ? "..." : "", tnames[d->tc], d->size, d->sgn ? "signed" : "unsigned",
                d->be ? "BE" : "LE", d->prec,
                d->sc == S_SIMPLE ? "simple" : d->sc == S_SCALAR ? "scalar" : "null", d->rank);
        for (int k = 0; k < d->rank; k++) fprintf(stderr, " %llu", (unsigned long long)d->dims[k]);
        fprintf(stderr, "%s, %s", d->unlim ? " (unlimited)" : "", lnames[d->layout]);
        if (d->layout == L_CHUNK)
            fprintf(stderr, " %s %d shuffle %d fletcher %d nbit %d sofs %d",
                    d->lzf ? "lzf (gzip)" : "gzip", d->gzip, d->shuffle, d->fletcher, d->nbit,
                    d->sofs);
        fprintf(stderr, ", variant %u, %s%s, n %lld, must_ok %d must_fail %d\n", d->var,
                d->written == 1 ? "written" : d->written == 2 ? "first rows written" : "unwritten",
                d->fillset ? " (fill set)" : "",
                (long long)d->n, d->must_ok, d->must_fail);
    }
    for (int k = 0; k < S->nlk; k++)
        fprintf(stderr, "  link %s: %s %d\n", S->l[k].path, knames[S->l[k].kind], S->l[k].target);
    fprintf(stderr, "  requested: %s%.100s\n", S->reqnull ? "(default)" : "",
            S->reqnull ? "" : S->reqname);
}

#define CHECK(S, cond, ...)                                                              \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "fuzz_h5select: invariant failed: %s: ", #cond);             \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                       \
            describe(S);                                                                 \
            abort();                                                                     \
        }                                                                                \
    } while (0)

/* ---- values ------------------------------------------------------------------------------ */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Value i of a numeric dataset: *iv (signed), *uv (unsigned) or *fv, exactly representable
 * in the stored type. i = -1 is the fill value. */
static void gen(const ds *d, int64_t i, int64_t *iv, uint64_t *uv, double *fv)
{
    uint64_t h = mix(((uint64_t)d->seed << 32) ^ (uint64_t)(i + 1)), r = h >> 4;
    unsigned sel = (unsigned)(h & 15);
    if (d->tc != T_FLOAT) {
        int p = d->tc == T_INTPREC ? d->prec : d->size * 8;
        if (d->sgn) {
            int64_t hi = p == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (p - 1)) - 1), lo = -hi - 1;
            int64_t v = sel == 0 ? lo : sel == 1 ? hi : sel == 2 ? 0 : sel == 3 ? -1 : sel == 4 ? 1
                      : p == 64 ? (int64_t)mix(h) : lo + (int64_t)(r % ((uint64_t)hi - (uint64_t)lo + 1));
            *iv = v;
        } else {
            uint64_t hi = p == 64 ? UINT64_MAX : (UINT64_C(1) << p) - 1;
            *uv = sel == 0 ? 0 : sel == 1 ? hi : sel == 2 ? 1 : p == 64 ? mix(h) : r % (hi + 1);
        }
        return;
    }
    double v;
    if (sel == 0) v = INFINITY;
    else if (sel == 1) v = -INFINITY;
    else if (sel == 2) v = NAN;
    else if (sel == 3) v = -0.0;
    else if (d->size == 2) v = sel == 4 ? 65504.0 : sel == 5 ? ldexp(1.0, -14)
                             : (double)((int64_t)(r % 4095) - 2047) / 4.0;
    else if (d->size == 4) {
        uint32_t b = (uint32_t)r;
        float f;
        memcpy(&f, &b, 4);
        v = isnan(f) ? 1.5 : (double)f; /* any float bit pattern, denormals included */
    } else {
        uint64_t b = r | ((h & 1) << 63);
        memcpy(&v, &b, 8);
        if (isnan(v)) v = -2.25;
    }
    *fv = v;
}

static hid_t int_type(int size, int sgn, int be)
{
    static const hid_t *const t[4][2][2] = {
        {{&H5T_STD_U8LE_g, &H5T_STD_U8BE_g}, {&H5T_STD_I8LE_g, &H5T_STD_I8BE_g}},
        {{&H5T_STD_U16LE_g, &H5T_STD_U16BE_g}, {&H5T_STD_I16LE_g, &H5T_STD_I16BE_g}},
        {{&H5T_STD_U32LE_g, &H5T_STD_U32BE_g}, {&H5T_STD_I32LE_g, &H5T_STD_I32BE_g}},
        {{&H5T_STD_U64LE_g, &H5T_STD_U64BE_g}, {&H5T_STD_I64LE_g, &H5T_STD_I64BE_g}},
    };
    int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
    return *t[k][sgn][be];
}

/* Member name k of length class lc (1, 5, 24, 25 or 60 characters), unique by k. */
static void member_name(char *buf, size_t len, const char *pre, int k, unsigned lc)
{
    static const int L[5] = {1, 5, 24, 25, 60};
    int want = L[lc % 5];
    int at = snprintf(buf, len, "%s%d", pre, k);
    while (at < want && (size_t)at + 1 < len) buf[at++] = 'n';
    buf[at] = '\0';
}

/* The stored type (a new id the caller closes). */
static hid_t make_type(const ds *d)
{
    hid_t t = H5I_INVALID_HID;
    switch (d->tc) {
    case T_INT:
    case T_COMMITTED: return H5Tcopy(int_type(d->size, d->sgn, d->be));
    case T_INTPREC:
        t = H5Tcopy(int_type(2, d->sgn, d->be));
        if (t >= 0 && H5Tset_precision(t, (size_t)d->prec) < 0) { H5Tclose(t); return -1; }
        return t;
    case T_INT16B:
        t = H5Tcopy(H5T_STD_I64LE);
        if (t >= 0 && H5Tset_size(t, 16) < 0) { H5Tclose(t); return -1; }
        return t;
    case T_FLOAT:
        if (d->size == 16) return H5Tcopy(H5T_NATIVE_LDOUBLE);
        if (d->size == 8) return H5Tcopy(d->be ? H5T_IEEE_F64BE : H5T_IEEE_F64LE);
        t = H5Tcopy(d->be ? H5T_IEEE_F32BE : H5T_IEEE_F32LE);
        if (d->size == 2 && t >= 0 &&
            (H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_size(t, 2) < 0 ||
             H5Tset_ebias(t, 15) < 0)) {
            H5Tclose(t);
            return -1;
        }
        return t;
    case T_STR:
        t = H5Tcopy(H5T_C_S1);
        if (t >= 0) {
            H5Tset_size(t, 1 + d->var % 16);
            H5Tset_strpad(t, d->var / 16 % 3 == 0 ? H5T_STR_NULLTERM
                             : d->var / 16 % 3 == 1 ? H5T_STR_NULLPAD : H5T_STR_SPACEPAD);
            if (d->var & 128) H5Tset_cset(t, H5T_CSET_UTF8);
        }
        return t;
    case T_VSTR:
        t = H5Tcopy(H5T_C_S1);
        if (t >= 0) H5Tset_size(t, H5T_VARIABLE);
        return t;
    case T_COMPOUND: { /* 1..7 fields, names of 1..60 characters */
        int nf = 1 + d->var % 7;
        t = H5Tcreate(H5T_COMPOUND, (size_t)(8 * nf));
        for (int k = 0; t >= 0 && k < nf; k++) {
            char nm[80];
            member_name(nm, sizeof nm, "f", k, d->var / 7 % 5);
            if (H5Tinsert(t, nm, (size_t)(8 * k), k & 1 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT32) < 0) {
                H5Tclose(t);
                return -1;
            }
        }
        return t;
    }
    case T_ENUM: { /* 1..9 members */
        int nm_ = 1 + d->var % 9;
        t = H5Tenum_create(d->var & 128 ? H5T_NATIVE_INT8 : H5T_NATIVE_INT);
        for (int k = 0; t >= 0 && k < nm_; k++) {
            char nm[80];
            int v = k;
            signed char v8 = (signed char)k;
            member_name(nm, sizeof nm, "M", k, d->var / 9 % 5);
            if (H5Tenum_insert(t, nm, d->var & 128 ? (void *)&v8 : (void *)&v) < 0) {
                H5Tclose(t);
                return -1;
            }
        }
        return t;
    }
    case T_VLEN: {
        hid_t base = d->var % 3 == 0 ? H5Tcopy(H5T_NATIVE_INT) : d->var % 3 == 1
                   ? H5Tcopy(H5T_IEEE_F64BE) : H5Tvlen_create(H5T_NATIVE_SHORT);
        t = base >= 0 ? H5Tvlen_create(base) : -1;
        if (base >= 0) H5Tclose(base);
        return t;
    }
    case T_OPAQUE: {
        t = H5Tcreate(H5T_OPAQUE, 1 + d->var % 64);
        static const char *const tags[] = {NULL, "fuzz", "a tag of more than thirty-two characters, cut"};
        const char *tag = tags[d->var / 64 % 3];
        if (t >= 0 && tag) H5Tset_tag(t, tag);
        return t;
    }
    case T_ARRAY: { /* rank 1..3 of int, float64 or a compound */
        hsize_t ad[3] = {1 + d->var % 4, 2, 3};
        int ar = 1 + d->var / 4 % 3;
        hid_t base = d->var & 64 ? H5Tcreate(H5T_COMPOUND, 4) : H5Tcopy(d->var & 128 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT);
        if (base >= 0 && (d->var & 64)) H5Tinsert(base, "c", 0, H5T_NATIVE_INT);
        t = base >= 0 ? H5Tarray_create2(base, (unsigned)ar, ad) : -1;
        if (base >= 0) H5Tclose(base);
        return t;
    }
    case T_REF: return H5Tcopy(d->var & 1 ? H5T_STD_REF_DSETREG : H5T_STD_REF_OBJ);
    case T_BITFIELD: {
        static const hid_t *const b[4] = {&H5T_NATIVE_B8_g, &H5T_NATIVE_B16_g, &H5T_NATIVE_B32_g,
                                          &H5T_NATIVE_B64_g};
        return H5Tcopy(*b[d->var % 4]);
    }
    default: return -1;
    }
}

/* ---- decoding ---------------------------------------------------------------------------- */

static const char *const base_names[] = {"data", "x", "t", "values", "with space", "\xc3\xbcml",
                                         "a.b", "-dash"};

/* 1 when d's gzip becomes LZF (a build with liblzf): a quarter of the gzip datasets, by a
 * field read already, so that the seeds keep their meaning; never after n-bit or
 * scale-offset: gpuprim's LZF filter takes cd_values[2], the chunk's size, as the size its
 * stream decodes to, which their smaller output is not (h5py's filter, which takes it as a
 * first guess, reads such files). */
static int lzf_instead(const ds *d)
{
#ifdef GPUPRIM_HAVE_LZF
    return d->gzip >= 0 && d->seed % 4 == 0 && !d->nbit && !d->sofs;
#else
    (void)d;
    return 0;
#endif
}

static void decode_ds(rd *r, spec *S, int i)
{
    ds *d = &S->d[i];
    memset(d, 0, sizeof *d);
    d->parent = (int)pick(r, (unsigned)S->ngr + 2) - 1;
    if (d->parent >= S->ngr) d->parent = -1;
    unsigned nm = pick(r, 20);
    if (nm == 19) {
        d->longname = 1;
        memset(d->name, 'L', LONGNAME);
        snprintf(d->name + LONGNAME, sizeof d->name - LONGNAME, "%d", i);
    } else {
        const char *b = base_names[nm < 8 ? nm : 0];
        snprintf(d->name, sizeof d->name, "%s%s%d", b, i ? "_" : "", i ? i : 0);
        if (!i) snprintf(d->name, sizeof d->name, "%s", b);
    }
    snprintf(d->path, sizeof d->path, "%s/%s", d->parent < 0 ? "" : S->grpath[d->parent], d->name);

    unsigned c = pick(r, 24);
    d->tc = c < 9 ? T_INT : c < 14 ? T_FLOAT : c == 14 ? T_INTPREC : c == 15 ? T_COMMITTED
          : (int)(T_INT16B + pick(r, NT - T_INT16B));
    static const int isz[4] = {1, 2, 4, 8}, fsz[4] = {2, 4, 8, 16};
    unsigned sz = pick(r, 4);
    d->size = d->tc == T_FLOAT ? fsz[sz] : d->tc == T_INTPREC ? 2 : isz[sz];
    d->sgn = (int)pick(r, 2);
    d->be = (int)pick(r, 2);
    d->prec = 2 + (int)pick(r, 14); /* T_INTPREC: 2..15 bits of 16 */
    unsigned s = pick(r, 12);
    d->sc = s == 1 ? S_SCALAR : s == 2 ? S_NULL : S_SIMPLE; /* (0, an exhausted input: simple) */
    d->rank = d->sc == S_SIMPLE ? 1 + (int)pick(r, 3) : 0;
    d->n = d->sc == S_NULL ? 0 : 1;
    for (int k = 0; k < d->rank; k++) {
        unsigned v = pick(r, 9);
        d->dims[k] = v == 8 ? 0 : v + 1; /* 1..8, or 0 */
        if (d->rank == 1 && pick(r, 6) == 1) d->dims[k] = 8 + u16(r) % 2000;
        d->n *= (int64_t)d->dims[k];
    }
    if (d->n > MAXN) { /* keep it small */
        for (int k = 0; k < d->rank; k++) d->dims[k] = d->dims[k] > 4 ? 4 : d->dims[k];
        d->n = 1;
        for (int k = 0; k < d->rank; k++) d->n *= (int64_t)d->dims[k];
    }
    d->layout = (int)pick(r, 4);
    d->unlim = d->sc == S_SIMPLE && pick(r, 4) == 1;
    for (int k = 0; k < d->rank; k++) {
        hsize_t dk = d->dims[k] ? d->dims[k] : 1;
        d->chunk[k] = 1 + pick(r, (unsigned)(dk < 255 ? dk : 255));
        if (d->dims[k] == 0) d->unlim = 1; /* a chunk never fits a fixed 0 */
    }
    d->gzip = (int)pick(r, 3) ? (int)pick(r, 10) : -1;
    d->shuffle = (int)pick(r, 2);
    d->fletcher = pick(r, 4) == 1;
    d->nbit = pick(r, 5) == 1;
    d->sofs = pick(r, 6) == 1;
    unsigned wr = pick(r, 6);
    d->written = wr == 1 ? 0 : wr == 2 ? 2 : 1;
    d->fillset = (int)pick(r, 2);
    d->attr = pick(r, 4) == 1;
    d->var = u8(r);
    d->seed = (uint32_t)u16(r) | (uint32_t)i << 16;

    /* what HDF5 accepts */
    if (d->sc != S_SIMPLE && d->layout == L_CHUNK) d->layout = L_CONTIG;
    if (d->unlim) d->layout = L_CHUNK;
    if (d->layout == L_COMPACT && d->n * 16 > 16000) d->layout = L_CONTIG;
    if (d->tc >= T_INT16B && d->layout == L_EXTERNAL) d->layout = L_CONTIG;
    if (d->layout != L_CHUNK || d->tc == T_VSTR || d->tc == T_VLEN) /* no filters on vlen */
        d->gzip = -1, d->shuffle = d->fletcher = d->nbit = d->sofs = 0;
    if (d->tc != T_INT || d->size > 4) d->sofs = 0; /* scale-offset: small integers only */
    if (d->tc > T_COMMITTED) d->nbit = 0;
    if (d->tc > T_COMMITTED) d->written = 0, d->fillset = 0;
    if (d->written == 2 && d->sc != S_SIMPLE) d->written = 1;
    d->rows = d->written == 2 ? pick(r, (unsigned)d->dims[0] + 1) : 0;
    d->nwritten = d->written == 1 ? d->n : 0;
    d->lzf = lzf_instead(d);
    if (d->written == 2) {
        d->nwritten = (int64_t)d->rows;
        for (int k = 1; k < d->rank; k++) d->nwritten *= (int64_t)d->dims[k];
    }

    d->numeric = d->tc <= T_INT16B;
    d->must_fail = !d->numeric || d->tc == T_INT16B || d->sc != S_SIMPLE;
    d->must_ok = !d->must_fail && (d->tc == T_INT || d->tc == T_FLOAT || d->tc == T_COMMITTED) &&
                 d->layout != L_EXTERNAL;
    if (d->tc == T_FLOAT) d->dt = d->size <= 4 ? GP_F32 : GP_F64;
    else if (d->tc == T_INTPREC) d->dt = d->sgn ? GP_I32 : GP_U32;
    else d->dt = d->size <= 4 ? (d->sgn ? GP_I32 : GP_U32) : (d->sgn ? GP_I64 : GP_U64);
}

static void decode(rd *r, spec *S)
{
    memset(S, 0, sizeof *S);
    /* the first byte: bit 0 the format, bit 1 the I/O driver (so that the seeds of the
     * corpus, written before the driver was a choice, keep their meaning) */
    const unsigned b0 = u8(r);
    S->newformat = (int)(b0 & 1);
    S->posix = (int)((b0 >> 1) & 1);
    S->crt_order = (int)pick(r, 2);
    S->ngr = (int)pick(r, MAXGR + 1);
    for (int g = 0; g < S->ngr; g++) {
        S->grparent[g] = (int)pick(r, (unsigned)g + 1) - 1;
        snprintf(S->grpath[g], sizeof S->grpath[g], "%s/g%d",
                 S->grparent[g] < 0 ? "" : S->grpath[S->grparent[g]], g);
    }
    S->nds = 1 + (int)pick(r, MAXDS);
    for (int i = 0; i < S->nds; i++) decode_ds(r, S, i);
    S->nlk = (int)pick(r, MAXLK + 1);
    for (int k = 0; k < S->nlk; k++) {
        lnk *l = &S->l[k];
        l->kind = (int)pick(r, NK);
        l->parent = (int)pick(r, (unsigned)S->ngr + 1) - 1;
        l->target = (int)pick(r, l->kind == K_SOFT_GROUP ? (unsigned)(S->ngr ? S->ngr : 1)
                                                        : (unsigned)S->nds);
        if (l->kind == K_SOFT_GROUP && !S->ngr) l->kind = K_SOFT_DANGLING;
        snprintf(l->name, sizeof l->name, "lnk%d", k);
        snprintf(l->path, sizeof l->path, "%s/%s", l->parent < 0 ? "" : S->grpath[l->parent],
                 l->name);
    }
    S->ext_m = 1 + (int)pick(r, 64);
    for (int j = 0; j < S->ext_m; j++) S->ext_want[j] = 0.5 * j - 3.0;

    /* the requested name */
    S->req = (int)pick(r, 15);
    int j = (int)pick(r, (unsigned)S->nds);
    S->reqnull = 0;
    switch (S->req) {
    case 0: case 1: case 2: S->reqnull = 1; break;
    case 3: case 4: snprintf(S->reqname, sizeof S->reqname, "%s", S->d[j].path); break;
    case 5: snprintf(S->reqname, sizeof S->reqname, "%s", S->d[j].path + 1); break;
    case 6:
        if (S->nlk) snprintf(S->reqname, sizeof S->reqname, "%s", S->l[j % S->nlk].path);
        else snprintf(S->reqname, sizeof S->reqname, "lnk0");
        break;
    case 7: snprintf(S->reqname, sizeof S->reqname, "%s", S->ngr ? S->grpath[j % S->ngr] : "/"); break;
    case 8: snprintf(S->reqname, sizeof S->reqname, "/nowhere/data"); break;
    case 9: S->reqname[0] = '\0'; break;
    case 10: snprintf(S->reqname, sizeof S->reqname, "/"); break;
    case 11: snprintf(S->reqname, sizeof S->reqname, "%s/", S->d[j].path); break;
    case 12: snprintf(S->reqname, sizeof S->reqname, "/%s", S->d[j].path); break;
    case 13: memset(S->reqname, 'Q', LONGNAME); S->reqname[LONGNAME] = '\0'; break;
    default: snprintf(S->reqname, sizeof S->reqname, "%s/.", S->d[j].path); break;
    }
}

/* ---- writing the files ------------------------------------------------------------------- */

static int write_ext(const spec *S)
{
    hid_t f = H5Fcreate(F_EXT, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return -1;
    hsize_t m = (hsize_t)S->ext_m;
    hid_t sp = H5Screate_simple(1, &m, NULL);
    hid_t d = sp >= 0 ? H5Dcreate2(f, "ext", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
                                   H5P_DEFAULT) : -1;
    int bad = d < 0 || H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, S->ext_want) < 0;
    if (d >= 0) H5Dclose(d);
    if (sp >= 0) H5Sclose(sp);
    if (H5Fclose(f) < 0) bad = 1;
    return bad ? -1 : 0;
}

/* Fills want/want64 and the memory buffer to write (int64, uint64, float or double). */
static int make_values(ds *d, void **mem, hid_t *memtype)
{
    size_t esz = gp_dtype_size(d->dt);
    int64_t n = d->n;
    d->want = malloc(n ? (size_t)n * esz : 1);
    d->want64 = malloc(n ? (size_t)n * sizeof(double) : 1);
    size_t msz = d->tc == T_FLOAT && d->size <= 4 ? 4 : 8;
    *mem = malloc(n ? (size_t)n * msz : 1);
    if (!d->want || !d->want64 || !*mem) return -1;
    int exact64 = 1;
    int64_t fi = 0;
    uint64_t fu = 0;
    double ff = 0;
    if (d->fillset) {
        gen(d, -1, &fi, &fu, &ff);
        float x = (float)ff;
        if (d->tc != T_FLOAT) memcpy(d->fillmem, d->sgn ? (void *)&fi : (void *)&fu, 8);
        else if (msz == 4) memcpy(d->fillmem, &x, 4);
        else memcpy(d->fillmem, &ff, 8);
        /* HDF5 reads the part of an external raw file never written as zeros, not as the
         * fill value (h5dump too): that is what a reader gets */
        if (d->layout == L_EXTERNAL) fi = 0, fu = 0, ff = 0;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t iv = 0;
        uint64_t uv = 0;
        double fv = 0;
        if (i < d->nwritten) gen(d, i, &iv, &uv, &fv);
        else iv = fi, uv = fu, fv = ff;
        char *w = (char *)d->want + (size_t)i * esz;
        switch (d->dt) {
        case GP_I32: { int32_t x = (int32_t)iv; memcpy(w, &x, 4); d->want64[i] = x; break; }
        case GP_U32: { uint32_t x = (uint32_t)uv; memcpy(w, &x, 4); d->want64[i] = x; break; }
        case GP_I64: memcpy(w, &iv, 8); exact64 = 0; break;
        case GP_U64: memcpy(w, &uv, 8); exact64 = 0; break;
        case GP_F32: { float x = (float)fv; memcpy(w, &x, 4); d->want64[i] = x; break; }
        case GP_F64: memcpy(w, &fv, 8); d->want64[i] = fv; break;
        default: return -1;
        }
        char *m = (char *)*mem + (size_t)i * msz;
        if (d->tc != T_FLOAT) memcpy(m, d->sgn ? (void *)&iv : (void *)&uv, 8);
        else if (msz == 4) { float x = (float)fv; memcpy(m, &x, 4); }
        else memcpy(m, &fv, 8);
    }
    if (!exact64) {
        free(d->want64);
        d->want64 = NULL;
    }
    *memtype = d->tc != T_FLOAT ? (d->sgn ? H5T_NATIVE_INT64 : H5T_NATIVE_UINT64)
             : msz == 4 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    return 0;
}

static int write_ds(hid_t fid, hid_t loc, ds *d, int k)
{
    int bad = 0;
    void *mem = NULL;
    hid_t memtype = -1, t = make_type(d), sp = -1, dcpl = -1, did = -1;
    if (t < 0) return -1;
    if (d->tc == T_COMMITTED) {
        char tn[32];
        snprintf(tn, sizeof tn, "type%d", k);
        if (H5Tcommit2(fid, tn, t, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) < 0) bad = 1;
    }
    if (d->numeric && d->tc != T_INT16B && make_values(d, &mem, &memtype) < 0) bad = 1;

    hsize_t cur[3], maxd[3];
    for (int j = 0; j < d->rank; j++) {
        cur[j] = d->dims[j];
        maxd[j] = d->unlim ? H5S_UNLIMITED : d->dims[j];
    }
    if (d->unlim && d->rank) cur[0] = d->dims[0] / 2; /* created smaller, then extended */
    sp = d->sc == S_SCALAR ? H5Screate(H5S_SCALAR) : d->sc == S_NULL ? H5Screate(H5S_NULL)
       : H5Screate_simple(d->rank, cur, maxd);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (sp < 0 || dcpl < 0) bad = 1;
    if (!bad && d->layout == L_CHUNK) {
        if (H5Pset_chunk(dcpl, d->rank, d->chunk) < 0) bad = 1;
        /* n-bit and scale-offset know the datatype: first in the pipeline (after shuffle,
         * libhdf5 1.10.8's n-bit + deflate corrupts 8-byte integers: not our bug) */
        if (d->nbit && H5Pset_nbit(dcpl) < 0) bad = 1;
        if (d->sofs && H5Pset_scaleoffset(dcpl, H5Z_SO_INT, H5Z_SO_INT_MINBITS_DEFAULT) < 0) bad = 1;
        if (d->shuffle && H5Pset_shuffle(dcpl) < 0) bad = 1;
        if (d->gzip >= 0 && (d->lzf ? H5Pset_filter(dcpl, 32000, H5Z_FLAG_OPTIONAL, 0, NULL)
                                    : H5Pset_deflate(dcpl, (unsigned)d->gzip)) < 0)
            bad = 1;
        if (d->fletcher && H5Pset_fletcher32(dcpl) < 0) bad = 1;
    } else if (!bad && d->layout == L_COMPACT) {
        if (H5Pset_layout(dcpl, H5D_COMPACT) < 0) bad = 1;
    } else if (!bad && d->layout == L_EXTERNAL) {
        char raw[600];
        snprintf(raw, sizeof raw, "%s.%d", F_RAW, k);
        if (H5Pset_external(dcpl, raw, 0, H5F_UNLIMITED) < 0) bad = 1;
    }
    if (!bad && d->fillset && mem && H5Pset_fill_value(dcpl, memtype, d->fillmem) < 0) bad = 1;
    if (!bad) {
        did = H5Dcreate2(loc, d->name, t, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (did < 0) bad = 1;
    }
    if (!bad && d->unlim && H5Dset_extent(did, d->dims) < 0) bad = 1;
    if (!bad && d->nwritten == d->n && d->n > 0 &&
        H5Dwrite(did, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, mem) < 0)
        bad = 1;
    if (!bad && d->nwritten > 0 && d->nwritten < d->n) { /* the first rows only */
        hsize_t start[3] = {0, 0, 0}, count[3] = {d->rows, d->dims[1], d->dims[2]};
        hid_t fs = H5Dget_space(did), ms = H5Screate_simple(d->rank, count, NULL);
        if (fs < 0 || ms < 0 ||
            H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dwrite(did, memtype, ms, fs, H5P_DEFAULT, mem) < 0)
            bad = 1;
        if (fs >= 0) H5Sclose(fs);
        if (ms >= 0) H5Sclose(ms);
    }
    if (!bad && d->attr) {
        hid_t as = H5Screate(H5S_SCALAR);
        hid_t a = as >= 0 ? H5Acreate2(did, "units", H5T_NATIVE_INT, as, H5P_DEFAULT, H5P_DEFAULT) : -1;
        int one = 1;
        if (a < 0 || H5Awrite(a, H5T_NATIVE_INT, &one) < 0) bad = 1;
        if (a >= 0) H5Aclose(a);
        if (as >= 0) H5Sclose(as);
    }
    if (did >= 0) H5Dclose(did);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (sp >= 0) H5Sclose(sp);
    H5Tclose(t);
    free(mem);
    return bad ? -1 : 0;
}

static int build(spec *S)
{
    if (getenv("GP_FUZZ_DESCRIBE")) H5Eset_auto2(H5E_DEFAULT, (H5E_auto2_t)H5Eprint2, stderr);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl = H5Pcreate(H5P_FILE_CREATE);
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE), fid = -1, g[MAXGR];
    int bad = fapl < 0 || fcpl < 0 || gcpl < 0;
    for (int k = 0; k < MAXGR; k++) g[k] = -1;
    if (!bad && S->newformat && H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0)
        bad = 1;
    if (!bad && S->crt_order &&
        (H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
         H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0))
        bad = 1;
    if (!bad) fid = H5Fcreate(F_MAIN, H5F_ACC_TRUNC, fcpl, fapl);
    if (fid < 0) bad = 1;
    for (int k = 0; !bad && k < S->ngr; k++) {
        hid_t parent = S->grparent[k] < 0 ? fid : g[S->grparent[k]];
        char nm[16];
        snprintf(nm, sizeof nm, "g%d", k);
        g[k] = H5Gcreate2(parent, nm, H5P_DEFAULT, gcpl, H5P_DEFAULT);
        if (g[k] < 0) bad = 1;
    }
    for (int i = 0; !bad && i < S->nds; i++)
        if (write_ds(fid, S->d[i].parent < 0 ? fid : g[S->d[i].parent], &S->d[i], i) < 0) bad = 1;
    int need_ext = 0;
    for (int k = 0; !bad && k < S->nlk; k++) {
        const lnk *l = &S->l[k];
        hid_t loc = l->parent < 0 ? fid : g[l->parent];
        herr_t st = 0;
        switch (l->kind) {
        case K_SOFT_DS: st = H5Lcreate_soft(S->d[l->target].path, loc, l->name, H5P_DEFAULT, H5P_DEFAULT); break;
        case K_SOFT_DANGLING: st = H5Lcreate_soft("/nothing/here", loc, l->name, H5P_DEFAULT, H5P_DEFAULT); break;
        case K_SOFT_GROUP: st = H5Lcreate_soft(S->grpath[l->target], loc, l->name, H5P_DEFAULT, H5P_DEFAULT); break;
        case K_HARD: st = H5Lcreate_hard(fid, S->d[l->target].path, loc, l->name, H5P_DEFAULT, H5P_DEFAULT); break;
        case K_EXT: need_ext = 1; st = H5Lcreate_external(F_EXT, "/ext", loc, l->name, H5P_DEFAULT, H5P_DEFAULT); break;
        case K_EXT_NOOBJ: need_ext = 1; st = H5Lcreate_external(F_EXT, "/none", loc, l->name, H5P_DEFAULT, H5P_DEFAULT); break;
        default: st = H5Lcreate_external("/nonexistent/gp_fuzz.h5", "/ext", loc, l->name, H5P_DEFAULT, H5P_DEFAULT); break;
        }
        if (st < 0) bad = 1;
    }
    for (int k = 0; k < MAXGR; k++)
        if (g[k] >= 0) H5Gclose(g[k]);
    if (fid >= 0 && H5Fclose(fid) < 0) bad = 1;
    if (fapl >= 0) H5Pclose(fapl);
    if (fcpl >= 0) H5Pclose(fcpl);
    if (gcpl >= 0) H5Pclose(gcpl);
    if (!bad && need_ext && write_ext(S) < 0) bad = 1;
    return bad ? -1 : 0;
}

/* ---- the expected outcome ---------------------------------------------------------------- */

enum { R_DS, R_EXT, R_GROUP, R_MISSING, R_EMPTY, R_TOOLONG, R_UNSURE };

typedef struct target {
    int kind, ds;    /* R_*, dataset index for R_DS (or the likely one for R_UNSURE) */
    int strict;      /* kind is certain */
} target;

/* What an absolute or relative path names in the main file. */
static target resolve(const spec *S, const char *name)
{
    target t = {R_MISSING, -1, 1};
    char p[LONGNAME + 200];
    if (!name[0]) return (target){R_EMPTY, -1, 1};
    if (strlen(name) + (name[0] != '/') >= GP_H5_PATHLEN) return (target){R_TOOLONG, -1, 1};
    snprintf(p, sizeof p, "%s%s", name[0] == '/' ? "" : "/", name);
    if (strcmp(p, "/") == 0) return (target){R_GROUP, -1, 1};
    for (int g = 0; g < S->ngr; g++)
        if (strcmp(p, S->grpath[g]) == 0) return (target){R_GROUP, -1, 1};
    for (int i = 0; i < S->nds; i++)
        if (strcmp(p, S->d[i].path) == 0) return (target){R_DS, i, 1};
    for (int k = 0; k < S->nlk; k++) {
        const lnk *l = &S->l[k];
        if (strcmp(p, l->path) != 0) continue;
        switch (l->kind) {
        case K_SOFT_DS: case K_HARD: return (target){R_DS, l->target, 1};
        case K_EXT: return (target){R_EXT, -1, 1};
        case K_SOFT_GROUP: return (target){R_GROUP, -1, 1};
        default: return (target){R_MISSING, -1, 1};
        }
    }
    /* "data/", "//data", "data/.": HDF5's path rules decide; whatever comes must be clean */
    size_t L = strlen(p);
    if (strstr(p, "//") || p[L - 1] == '/' || (L >= 2 && strcmp(p + L - 2, "/.") == 0))
        t.strict = 0, t.kind = R_UNSURE;
    return t;
}

/* "//a//b/", "/a/b/." -> "/a/b" */
static const char *canonical(const char *p)
{
    static char c[LONGNAME + 200];
    size_t o = 0;
    for (size_t k = 0; p[k] && o + 1 < sizeof c; k++) {
        if (p[k] == '/' && o && c[o - 1] == '/') continue;
        c[o++] = p[k];
    }
    c[o] = '\0';
    while (o >= 2 && strcmp(c + o - 2, "/.") == 0) c[o -= 2] = '\0';
    while (o > 1 && c[o - 1] == '/') c[--o] = '\0';
    if (!o) c[o++] = '/', c[o] = '\0';
    return c;
}

static int same_value(gp_dtype t, const void *a, const void *b)
{
    if (t == GP_F32) {
        float x, y;
        memcpy(&x, a, 4);
        memcpy(&y, b, 4);
        if (isnan(x) && isnan(y)) return 1;
    } else if (t == GP_F64) {
        double x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (isnan(x) && isnan(y)) return 1;
    }
    return memcmp(a, b, gp_dtype_size(t)) == 0;
}

static int open_objects(void)
{
    ssize_t k = H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL);
    return (int)k;
}

static void check_msg(const spec *S, int rc, const char *msg, const char *needle, const char *what)
{
    CHECK(S, rc >= GP_IO_EOPEN && rc <= GP_IO_EREAD, "%s: rc %d (%s)", what, rc, msg);
    CHECK(S, msg[0] != '\0', "%s: empty message (rc %d)", what, rc);
    CHECK(S, strlen(msg) < MSGLEN && !strchr(msg, '\n'), "%s: not one line: %s", what, msg);
    CHECK(S, strstr(msg, F_MAIN) != NULL, "%s: message does not name the file: %s", what, msg);
    if (needle && needle[0])
        CHECK(S, strstr(msg, needle) != NULL, "%s: message does not name %s: %s", what, needle, msg);
}

/* The values read for [off, off+cnt) of dataset d (or of /ext). */
static void check_values(const spec *S, const ds *d, int ext, gp_dtype as, int64_t off,
                         int64_t cnt, const void *buf, const char *what)
{
    size_t esz = gp_dtype_size(as);
    for (int64_t i = 0; i < cnt; i++) {
        const char *got = (const char *)buf + (size_t)i * esz;
        if (ext) {
            double v;
            if (as != GP_F64) return;
            memcpy(&v, got, 8);
            CHECK(S, v == S->ext_want[off + i], "%s: /ext[%lld] = %g", what,
                  (long long)(off + i), v);
        } else if (as == d->dt) {
            const char *w = (const char *)d->want + (size_t)(off + i) * esz;
            uint64_t x = 0, y = 0;
            memcpy(&x, got, esz);
            memcpy(&y, w, esz);
            CHECK(S, same_value(as, got, w), "%s: element %lld: got 0x%llx want 0x%llx", what,
                  (long long)(off + i), (unsigned long long)x, (unsigned long long)y);
        } else if (as == GP_F64 && d->want64) {
            double v;
            memcpy(&v, got, 8);
            double w = d->want64[off + i];
            CHECK(S, (isnan(v) && isnan(w)) || (v == w && signbit(v) == signbit(w)),
                  "%s: element %lld as f64: got %a want %a", what, (long long)(off + i), v, w);
        }
    }
}

/* gp_h5_read into an exact-size buffer (NULL for cnt 0) */
static int do_read(const gp_h5_input *in, const char *name, gp_dtype as, int64_t off,
                   int64_t cnt, void **buf, char *msg)
{
    size_t esz = gp_dtype_size(as);
    *buf = NULL;
    if (cnt > 0 && cnt <= MAXN) *buf = malloc((size_t)cnt * esz);
    return gp_h5_read(MPI_COMM_WORLD, in, name, as, off, cnt, *buf, msg, MSGLEN);
}

/* Reads [from, n) of in's dataset through one reader, in pieces of `piece` (gp_h5_reader_expect
 * first when `expect`), then [0, piece) again (the stream starts afresh): the values of d. */
static void read_pieces(const spec *S, const gp_h5_input *in, const ds *d, gp_dtype dt,
                        int64_t from, int64_t piece, int expect, char *msg)
{
    const int64_t n = in->n, first = piece < n ? piece : n;
    const size_t esz = gp_dtype_size(dt);
    gp_h5_reader *rd = NULL;
    void *buf = malloc((size_t)n * esz);
    CHECK(S, buf != NULL, "out of memory");
    int rc = gp_h5_reader_open(MPI_COMM_WORLD, in, NULL, dt, &rd, msg, MSGLEN);
    CHECK(S, rc == 0, "reader open after a whole read worked: %s", msg);
    if (expect) gp_h5_reader_expect(rd, from, n - from);
    for (int64_t at = from; at < n; at += piece) {
        const int64_t c = n - at < piece ? n - at : piece;
        rc = gp_h5_reader_read(rd, at, c, (char *)buf + (size_t)at * esz, msg, MSGLEN);
        CHECK(S, rc == 0, "piece [%lld, +%lld) (%s, %s): %s", (long long)at, (long long)c,
              gp_h5_reader_how(rd), expect ? "expected" : "unexpected", msg);
    }
    check_values(S, d, 0, dt, from, n - from, (char *)buf + (size_t)from * esz, "pieces");
    rc = gp_h5_reader_read(rd, 0, first, buf, msg, MSGLEN);
    CHECK(S, rc == 0, "the first piece again: %s", msg);
    check_values(S, d, 0, dt, 0, first, buf, "the first piece again");
    gp_h5_reader_close(rd);
    free(buf);
}

/* A byte of one stored chunk of in's dataset changed in the file, where the chunk's filters
 * (deflate, Fletcher-32) check it: the direct path's read fails cleanly, naming a chunk, or
 * (a change no check sees) gives the written values. Returns 1 when it failed. */
static int damage_chunk(const spec *S, rd *r, const gp_h5_input *in, const ds *d, gp_dtype dt,
                        char *msg)
{
    hsize_t nck = 0, offset[3];
    unsigned mask = 0;
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    hid_t fs = H5Dget_space(in->did);
    const unsigned k = pick(r, 64), at = u16(r);
    int ok = fs >= 0 && H5Dget_num_chunks(in->did, fs, &nck) >= 0 && nck > 0 &&
             H5Dget_chunk_info(in->did, fs, k % nck, offset, &mask, &addr, &size) >= 0;
    if (fs >= 0) H5Sclose(fs);
    /* the filters in the order set (write_ds): shuffle?, deflate or LZF?, fletcher32? (LZF
     * checks nothing: a damaged stream may decode to other values of the right length) */
    const int idef = d->shuffle, ifl = d->shuffle + (d->gzip >= 0);
    const int checked = (d->gzip >= 0 && !d->lzf && !(mask & 1u << idef)) ||
                        (d->fletcher && !(mask & 1u << ifl));
    if (!ok || !checked || addr == HADDR_UNDEF || size == 0) return 0;
    FILE *f = fopen(F_MAIN, "r+b");
    CHECK(S, f != NULL, "cannot open %s to damage it", F_MAIN);
    const long pos = (long)(addr + at % size);
    int c = fseek(f, pos, SEEK_SET) == 0 ? fgetc(f) : EOF;
    int bad = c == EOF || fseek(f, pos, SEEK_SET) != 0 ||
              fputc(c ^ (1 + (int)(at >> 8) % 255), f) == EOF;
    if (fclose(f) != 0) bad = 1;
    CHECK(S, !bad, "cannot damage %s", F_MAIN);
    void *buf;
    const int rc = do_read(in, NULL, dt, 0, in->n, &buf, msg);
    /* a change the checks cannot see (the padding bits after a deflate stream's last code)
     * changes nothing: the written values */
    if (rc == 0) check_values(S, d, 0, dt, 0, in->n, buf, "an unseen change of a chunk");
    free(buf);
    if (rc == 0) return 0;
    check_msg(S, rc, msg, in->dataset, "a damaged chunk");
    CHECK(S, rc == GP_IO_EREAD && strstr(msg, "chunk at offset ["),
          "a damaged chunk (byte %ld): rc %d: %s", pos, rc, msg);
    return 1;
}

/* The direct chunk path of a chunked dataset that read whole: see the top of the file. */
static void direct_chunks(const spec *S, rd *r, const gp_h5_input *in, const ds *d, gp_dtype dt,
                          char *msg)
{
    const int64_t n = in->n;
    if (d->layout != L_CHUNK || n == 0 || n > MAXN) return;
    static const int threads[4] = {1, 2, 3, 64};
    const gp_h5_chunk_reads cr = {1, threads[pick(r, 4)], 0}, off = {0, 0, 0};
    gp_h5_set_chunk_reads(&cr);
    const int64_t piece = 1 + (int64_t)(u16(r) % (unsigned)n);
    const int64_t from = (int64_t)(u16(r) % (unsigned)n);
    read_pieces(S, in, d, dt, from, piece, (int)pick(r, 2), msg);
    N.pieces++;
    gp_h5_set_chunk_reads(&off);
    void *buf;
    int rc = do_read(in, NULL, dt, 0, n, &buf, msg);
    CHECK(S, rc == 0, "the whole read with the direct path off: %s", msg);
    check_values(S, d, 0, dt, 0, n, buf, "direct path off");
    free(buf);
    gp_h5_set_chunk_reads(&cr);
    if (!d->nbit && !d->sofs && pick(r, 3) == 0 && damage_chunk(S, r, in, d, dt, msg)) N.damaged++;
}

static void run(spec *S, rd *r)
{
    char *msg = malloc(MSGLEN);
    if (!msg) abort();
    gp_h5_input in;
    const char *req = S->reqnull ? NULL : S->reqname;
    target t;
    const char *needle = NULL;
    char reqabs[LONGNAME + 200] = "";
    if (req && req[0]) snprintf(reqabs, sizeof reqabs, "%s%.64s", req[0] == '/' ? "" : "/", req);

    /* the default: exactly one numeric array dataset (a scalar or null one is no
     * candidate; one whose path is too long counts, and is then an error) */
    int ncand = 0, last = -1;
    for (int i = 0; i < S->nds; i++)
        if (S->d[i].numeric && S->d[i].sc == S_SIMPLE) {
            ncand++;
            last = i;
        }
    int aliased = 0; /* H5Ovisit may meet the one candidate under a hard alias first */
    for (int k = 0; ncand == 1 && k < S->nlk; k++)
        if (S->l[k].kind == K_HARD && S->l[k].target == last) aliased = 1;
    if (req) {
        t = resolve(S, req);
        needle = req[0] && t.kind != R_TOOLONG ? reqabs : NULL;
    } else if (ncand == 1 && S->d[last].longname) {
        if (aliased) t = (target){R_UNSURE, -1, 0}; /* the alias's path may be short */
        else {
            t = (target){R_MISSING, -1, 1};
            needle = "path has";
        }
    } else if (ncand == 1) {
        t = (target){R_DS, last, 1};
        needle = aliased ? NULL : S->d[last].path;
    } else {
        t = (target){R_MISSING, -1, 1};
        needle = "numeric dataset";
    }

    memset(msg, 0x5a, MSGLEN);
    const gp_h5_chunk_reads cr = {1, 1 + (int)(S->d[0].seed % 3), 0};
    gp_h5_set_chunk_reads(&cr);
    int rc = gp_h5_open_io(MPI_COMM_WORLD, F_MAIN, req, S->posix ? GP_IO_POSIX : GP_IO_MPIIO, &in,
                           msg, MSGLEN);
    const ds *d = t.kind == R_DS ? &S->d[t.ds] : NULL;

    if (rc) {
        N.open_err++;
        if (getenv("GP_FUZZ_LOG"))
            fprintf(stderr, "GP_FUZZ_LOG open %s (kind %d, %s): %d %s\n", req ? req : "(default)",
                    t.kind, d ? tnames[d->tc] : "-", rc, msg);
        check_msg(S, rc, msg, needle, "gp_h5_open");
        CHECK(S, rc == GP_IO_EDATASET, "gp_h5_open: rc %d, want %d: %s", rc, GP_IO_EDATASET, msg);
        CHECK(S, !(d && d->must_ok), "gp_h5_open failed on a supported dataset: %s", msg);
        CHECK(S, t.kind != R_EXT, "gp_h5_open failed on an external link to a float64 dataset: %s", msg);
        CHECK(S, in.fid < 0 && in.did < 0 && in.ftype < 0, "ids left in a failed gp_h5_open");
        CHECK(S, open_objects() == 0, "%d HDF5 objects open after a failed gp_h5_open", open_objects());
        free(msg);
        return;
    }

    /* it opened: it had to be allowed to */
    CHECK(S, t.kind == R_DS || t.kind == R_EXT || t.kind == R_UNSURE,
          "gp_h5_open succeeded (%s) where it must fail (target kind %d)", in.dataset, t.kind);
    CHECK(S, !(d && d->must_fail), "gp_h5_open succeeded on an unreadable dataset %s", in.dataset);
    if (t.kind == R_UNSURE) { /* which object it is: HDF5's path rules decided */
        target v = resolve(S, canonical(in.dataset));
        if (v.kind == R_DS) d = &S->d[v.ds];
        else if (v.kind == R_EXT) t.kind = R_EXT;
        CHECK(S, d || t.kind == R_EXT, "opened %s: no dataset of the description", in.dataset);
        CHECK(S, !d || !d->must_fail, "gp_h5_open succeeded on an unreadable dataset %s",
              in.dataset);
    }
    if (req) {
        char want[LONGNAME + 200];
        snprintf(want, sizeof want, "%s%s", req[0] == '/' ? "" : "/", req);
        CHECK(S, strcmp(in.dataset, want) == 0, "in.dataset %s, asked for %s", in.dataset, want);
    } else {
        /* the default: its path or a hard alias of it */
        CHECK(S, d != NULL, "the default opened %s, not a dataset of the description", in.dataset);
        int ok = strcmp(in.dataset, d->path) == 0;
        for (int k = 0; k < S->nlk; k++)
            if (S->l[k].kind == K_HARD && &S->d[S->l[k].target] == d &&
                strcmp(in.dataset, S->l[k].path) == 0)
                ok = 1;
        CHECK(S, ok, "default dataset %s, want %s", in.dataset, d->path);
    }
    int ext = t.kind == R_EXT;
    int64_t n = ext ? S->ext_m : d->n;
    gp_dtype dt = ext ? GP_F64 : d->dt;
    CHECK(S, in.n == n, "in.n %lld, want %lld", (long long)in.n, (long long)n);
    CHECK(S, in.dtype == dt, "in.dtype %d, want %d (%s)", (int)in.dtype, (int)dt, in.type_desc);
    CHECK(S, in.ndims == (ext ? 1 : d->rank), "in.ndims %d", in.ndims);
    int64_t prod = 1;
    for (int k = 0; k < in.ndims; k++) {
        prod *= (int64_t)in.dims[k];
        if (!ext) CHECK(S, in.dims[k] == d->dims[k], "dim %d: %llu", k, (unsigned long long)in.dims[k]);
    }
    CHECK(S, prod == in.n, "product of dims %lld, n %lld", (long long)prod, (long long)in.n);
    CHECK(S, strlen(in.type_desc) > 0 && strlen(in.type_desc) < sizeof in.type_desc, "type_desc");
    if (!ext && d->tc != T_FLOAT)
        CHECK(S, strstr(in.type_desc, d->be ? "big-endian" : "little-endian") != NULL,
              "type_desc %s", in.type_desc);
    int strict = ext || d->must_ok;
    N.open_ok++;
    N.open_ok_strict += strict;

    /* the whole dataset, in its own element type */
    void *buf;
    rc = do_read(&in, NULL, dt, 0, n, &buf, msg);
    if (rc == 0) {
        N.read_ok++;
        check_values(S, d, ext, dt, 0, n, buf, "whole read");
    } else {
        N.read_err++;
        if (getenv("GP_FUZZ_LOG"))
            fprintf(stderr, "GP_FUZZ_LOG whole read of %s (%s, %s, %s): %s\n", in.dataset,
                    ext ? "ext" : tnames[d->tc], ext ? "-" : lnames[d->layout],
                    ext ? "-" : d->nwritten == d->n ? "written" : "not all written", msg);
        check_msg(S, rc, msg, in.dataset, "whole read");
        CHECK(S, !strict, "reading a supported dataset failed: %s", msg);
    }
    free(buf);
    int readable = rc == 0;

    /* sub-ranges, some outside [0, n) */
    for (unsigned k = 0, nr = pick(r, 5); k < nr; k++) {
        int64_t off = (int64_t)(u16(r) % (uint64_t)(n + 3)), cnt = (int64_t)(u16(r) % (uint64_t)(n + 3));
        unsigned odd = pick(r, 16);
        if (odd == 1) off = -1;
        if (odd == 2) cnt = -1;
        if (odd == 3) off = INT64_MAX;
        if (odd == 4) cnt = INT64_MAX;
        gp_dtype as = pick(r, 3) == 0 ? (gp_dtype)pick(r, GP_NDTYPES) : dt;
        int inside = off >= 0 && cnt >= 0 && off <= n && cnt <= n - off;
        rc = do_read(&in, NULL, as, off, cnt, &buf, msg);
        if (!inside) {
            N.range_err++;
            CHECK(S, rc == GP_IO_EREAD, "range [%lld, +%lld) of %lld: rc %d", (long long)off,
                  (long long)cnt, (long long)n, rc);
            check_msg(S, rc, msg, in.dataset, "out-of-range read");
        } else if (rc == 0) {
            check_values(S, d, ext, as, off, cnt, buf, "sub-range read");
        } else {
            check_msg(S, rc, msg, in.dataset, "sub-range read");
            CHECK(S, !(readable && as == dt), "a sub-range failed where the whole read worked: %s", msg);
            CHECK(S, rc == GP_IO_EREAD, "sub-range read: rc %d", rc);
        }
        free(buf);
    }

    /* a second dataset read as float64 (gpuprim_mpi --x) */
    if (pick(r, 2)) {
        unsigned w = pick(r, 6);
        int j = (int)pick(r, (unsigned)S->nds);
        char xname[LONGNAME + 80];
        if (w == 0) snprintf(xname, sizeof xname, "%s", in.dataset);
        else if (w == 1 && S->nlk) snprintf(xname, sizeof xname, "%s", S->l[j % S->nlk].path);
        else if (w == 2) snprintf(xname, sizeof xname, "/no/such");
        else if (w == 3) xname[0] = '\0';
        else snprintf(xname, sizeof xname, "%s", S->d[j].path);
        target x = resolve(S, xname);
        rc = do_read(&in, xname, GP_F64, 0, n, &buf, msg);
        char xabs[LONGNAME + 200];
        snprintf(xabs, sizeof xabs, "%s%s", xname[0] == '/' ? "" : "/", xname);
        int self = xname[0] && strcmp(xabs, in.dataset) == 0;
        const ds *xd = self ? d : x.kind == R_DS ? &S->d[x.ds] : NULL;
        int xext = self ? ext : x.kind == R_EXT;
        if (rc == 0) N.x_ok++;
        else N.x_err++;
        if (rc == 0) {
            CHECK(S, self || xext || (xd && !xd->must_fail), "--x %s read where it must fail", xname);
            CHECK(S, self || (xext ? S->ext_m : xd->n) == n, "--x %s: element counts differ", xname);
            if (xext) check_values(S, NULL, 1, GP_F64, 0, n, buf, "--x read");
            else if (xd) check_values(S, xd, 0, GP_F64, 0, n, buf, "--x read");
        } else {
            check_msg(S, rc, msg, xname[0] && x.kind != R_TOOLONG ? xabs : NULL, "--x read");
            int xn = xext ? S->ext_m : xd ? (int)xd->n : -1;
            CHECK(S, !(self && readable), "--x of the dataset itself failed: %s", msg);
            CHECK(S, !(xd && xd->must_ok && xn == n && readable),
                  "--x of a supported dataset with the same count failed: %s", msg);
            CHECK(S, !(xext && xn == n && readable), "--x of /ext with the same count failed: %s", msg);
        }
        free(buf);
    }

    if (readable && !ext) direct_chunks(S, r, &in, d, dt, msg);
    gp_h5_close(&in);
    CHECK(S, open_objects() == 0, "%d HDF5 objects open after gp_h5_close", open_objects());
    rc = gp_h5_read(MPI_COMM_WORLD, &in, NULL, dt, 0, 0, NULL, msg, MSGLEN);
    CHECK(S, rc == GP_IO_EREAD && msg[0], "read after close: rc %d", rc);
    free(msg);
}

/* ---- libFuzzer entry points -------------------------------------------------------------- */

static void cleanup_files(void)
{
    unlink(F_MAIN);
    unlink(F_EXT);
    for (int k = 0; k < MAXDS; k++) {
        char raw[600];
        snprintf(raw, sizeof raw, "%s.%d", F_RAW, k);
        unlink(raw);
    }
}

/* No MPI_Finalize at exit: Open MPI would unload its plugins, and LeakSanitizer's report at
 * exit could no longer name (nor lsan.supp suppress) what they never free. */
static void at_exit(void)
{
    if (!getenv("GP_FUZZ_KEEP")) cleanup_files(); /* GP_FUZZ_KEEP=1: leave the last files */
    fprintf(stderr, "fuzz_h5select: %ld inputs (%ld not writable as described): gp_h5_open "
            "%ld ok (%ld where the README promises it), %ld clean errors; whole reads %ld ok, "
            "%ld clean errors; %ld out-of-range reads refused; --x reads %ld ok, %ld refused; "
            "%ld read in pieces; %ld damaged chunks refused\n",
            N.inputs, N.unbuildable, N.open_ok, N.open_ok_strict, N.open_err, N.read_ok,
            N.read_err, N.range_err, N.x_ok, N.x_err, N.pieces, N.damaged);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    /* Open MPI's own SIGSEGV/SIGBUS handler would hide crashes from the sanitizers */
    setenv("OMPI_MCA_opal_signal", "", 0);
    /* What MPI_Init allocates and never frees is Open MPI's, often in plugins it unloads
     * again, which LeakSanitizer can then not name for lsan.supp: not counted as leaks. */
    LSAN_DISABLE();
    int ok = MPI_Init(NULL, NULL) == MPI_SUCCESS;
    LSAN_ENABLE();
    if (!ok) {
        fprintf(stderr, "fuzz_h5select: MPI_Init failed\n");
        exit(1);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    gp_h5_register_filters(); /* LZF, for the files written before gp_h5_open_io */
    const char *dir = getenv("GP_FUZZ_TMP");
    struct stat st;
    if (!dir || !dir[0]) dir = stat("/dev/shm", &st) == 0 && access("/dev/shm", W_OK) == 0
                                   ? "/dev/shm" : getenv("TMPDIR");
    if (!dir || !dir[0]) dir = "/tmp";
    long pid = (long)getpid();
    snprintf(F_MAIN, sizeof F_MAIN, "%s/gp_fuzz_h5.%ld.h5", dir, pid);
    snprintf(F_EXT, sizeof F_EXT, "%s/gp_fuzz_h5.%ld.ext.h5", dir, pid);
    snprintf(F_RAW, sizeof F_RAW, "%s/gp_fuzz_h5.%ld.raw", dir, pid);
    atexit(at_exit);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static spec S; /* large: not on the stack */
    rd r = {data, size};
    decode(&r, &S);
    cleanup_files();
    N.inputs++;
    if (build(&S) == 0) {
        if (getenv("GP_FUZZ_DESCRIBE")) describe(&S);
        run(&S, &r);
    } else {
        N.unbuildable++;
        if (getenv("GP_FUZZ_DESCRIBE")) {
            fprintf(stderr, "fuzz_h5select: description not writable, skipped\n");
            describe(&S);
        }
    }
    for (int i = 0; i < S.nds; i++) {
        free(S.d[i].want);
        free(S.d[i].want64);
        S.d[i].want = S.d[i].want64 = NULL;
    }
    /* whatever the generator left open (a failed build) must not leak into the next run */
    if (open_objects() > 0) {
        hid_t ids[64];
        ssize_t k = H5Fget_obj_ids((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL, 64, ids);
        for (ssize_t j = 0; j < k; j++) {
            H5I_type_t it = H5Iget_type(ids[j]);
            if (it == H5I_FILE) H5Fclose(ids[j]);
            else if (it == H5I_DATASET) H5Dclose(ids[j]);
            else if (it == H5I_GROUP) H5Gclose(ids[j]);
            else if (it == H5I_DATATYPE) H5Tclose(ids[j]);
            else if (it == H5I_ATTR) H5Aclose(ids[j]);
        }
    }
    return 0;
}

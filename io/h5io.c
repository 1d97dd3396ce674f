/* h5io.c — HDF5 input and output for gpuprim over MPI-IO or each rank's own POSIX access
 * (see h5io.h). */
#define _GNU_SOURCE /* fallocate(FALLOC_FL_KEEP_SIZE): reserving the output's blocks */
#include "gpuprim/h5io.h"
#include "gp_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Largest memory transfer of one H5Dread/H5Dwrite call per rank (tests may lower it). */
#ifndef GP_H5_PIECE_BYTES
#define GP_H5_PIECE_BYTES ((int64_t)1 << 30)
#endif

#define EMSG 2048

/* An error state that travels between ranks as plain bytes. */
typedef struct gp_err {
    int rc;
    char text[EMSG];
} gp_err;

static void fail(gp_err *e, int rc, const char *fmt, ...)
{
    if (e->rc) return; /* the first error wins */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->text, sizeof e->text, fmt, ap);
    va_end(ap);
    gp_one_line(e->text); /* a newline in a file or dataset name shows as '?' */
    e->rc = rc;
}

/* Makes every rank agree on the outcome (gp_agree's rule: the lowest failing rank's code
 * and message). Returns the agreed code (0 when no rank failed). */
static int agree(MPI_Comm comm, gp_err *e)
{
    e->rc = gp_agree(comm, e->rc, e->text, sizeof e->text);
    return e->rc;
}

static int finish(const gp_err *e, char *msg, size_t msglen)
{
    if (msg && msglen) snprintf(msg, msglen, "%s", e->rc ? e->text : "");
    return e->rc;
}

static void quiet_hdf5(void)
{
    /* failure only means HDF5 keeps printing its stack; nothing to agree on */
    if (H5Eset_auto2(H5E_DEFAULT, NULL, NULL) < 0) return;
}

/* ---- HDF5 error stack ------------------------------------------------------------------ */

typedef struct h5why {
    char desc[512];
    int have;      /* desc holds a non-plugin entry */
    int notfound;  /* some entry has minor H5E_NOTFOUND */
} h5why;

static herr_t why_cb(unsigned n, const H5E_error2_t *err, void *data)
{
    h5why *w = data;
    (void)n;
    if (err->min_num == H5E_NOTFOUND) w->notfound = 1;
    if (!w->have && err->desc && err->desc[0]) {
        /* plugin-path noise sits under the useful H5Z entry ("required filter ...") */
        int plugin = err->maj_num == H5E_PLUGIN;
        if (!plugin || !w->desc[0]) snprintf(w->desc, sizeof w->desc, "%s", err->desc);
        if (!plugin) w->have = 1;
    }
    return 0;
}

/* The most useful description on the current error stack (innermost first). Call right
 * after the failing HDF5 call: the next API call clears the stack. */
static h5why h5_reason(void)
{
    h5why w;
    memset(&w, 0, sizeof w);
    if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, why_cb, &w) < 0 || !w.desc[0])
        snprintf(w.desc, sizeof w.desc, "unknown HDF5 error");
    return w;
}

/* ---- small helpers --------------------------------------------------------------------- */

static hid_t native_of(gp_dtype t)
{
    switch (t) {
    case GP_F32: return H5T_NATIVE_FLOAT;
    case GP_F64: return H5T_NATIVE_DOUBLE;
    case GP_I32: return H5T_NATIVE_INT32;
    case GP_I64: return H5T_NATIVE_INT64;
    case GP_U32: return H5T_NATIVE_UINT32;
    case GP_U64: return H5T_NATIVE_UINT64;
    default: return H5I_INVALID_HID;
    }
}

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_TIME: return "time";
    case H5T_STRING: return "string";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_COMPOUND: return "compound";
    case H5T_REFERENCE: return "reference";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "variable-length";
    case H5T_ARRAY: return "array";
    default: return "unknown";
    }
}

static const char *order_name(H5T_order_t o)
{
    switch (o) {
    case H5T_ORDER_LE: return "little-endian";
    case H5T_ORDER_BE: return "big-endian";
    case H5T_ORDER_VAX: return "VAX-order";
    case H5T_ORDER_MIXED: return "mixed-endian";
    default: return "no-order";
    }
}

/* "/" + p unless p is absolute already. */
static int abs_path(const char *p, char *out, size_t outlen)
{
    int k = snprintf(out, outlen, "%s%s", p[0] == '/' ? "" : "/", p);
    return (k < 0 || (size_t)k >= outlen) ? -1 : 0;
}

/* A short name of a type for messages: "float64", "uint8", else its class ("compound"). */
static void type_short(hid_t t, char *buf, size_t len)
{
    H5T_class_t c = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    H5T_sign_t sg = c == H5T_INTEGER ? H5Tget_sign(t) : H5T_SGN_ERROR;
    if (c == H5T_INTEGER && size > 0 && sg != H5T_SGN_ERROR) {
        snprintf(buf, len, "%sint%zu", sg == H5T_SGN_NONE ? "u" : "", size * 8);
    } else if (c == H5T_FLOAT && size > 0) {
        snprintf(buf, len, "float%zu", size * 8);
    } else {
        snprintf(buf, len, "%s", class_name(c)); /* H5T_NO_CLASS (an error): "unknown" */
    }
}

/* Appends the names of the first members of a compound or enum type to buf ("x, y, ...").
 * Returns -1 when HDF5 cannot list them. */
static int member_names(hid_t t, char *buf, size_t len)
{
    int n = H5Tget_nmembers(t);
    size_t at = strlen(buf);
    if (n < 0) return -1;
    for (int i = 0; i < n && at + 8 < len; i++) {
        if (i == 4) {
            snprintf(buf + at, len - at, ", ... (%d in all)", n);
            return 0;
        }
        char *name = H5Tget_member_name(t, (unsigned)i);
        if (!name) return -1;
        int k = snprintf(buf + at, len - at, "%s%.24s%s", i ? ", " : "", name,
                         strlen(name) > 24 ? "..." : "");
        if (H5free_memory(name) < 0) return -1;
        if (k < 0) return -1;
        at += (size_t)k < len - at ? (size_t)k : len - at - 1;
    }
    return 0;
}

/* One short phrase that tells a non-numeric type apart within its class, for the error
 * message ("" when the class says enough or HDF5 cannot inspect the type): "fields x, y",
 * "variable-length", "sequences of float64", "object references", "float64[3] per
 * element", ... */
static void describe_other(hid_t t, H5T_class_t cls, char *buf, size_t len)
{
    char base[32] = "";
    hid_t super = H5I_INVALID_HID;
    int ok = 1;
    buf[0] = '\0';
    switch (cls) {
    case H5T_STRING: {
        htri_t v = H5Tis_variable_str(t);
        if (v > 0) snprintf(buf, len, "variable-length");
        ok = v >= 0;
        break;
    }
    case H5T_VLEN:
        super = H5Tget_super(t);
        ok = super >= 0;
        if (ok) {
            type_short(super, base, sizeof base);
            snprintf(buf, len, "sequences of %s", base);
        }
        break;
    case H5T_COMPOUND:
        snprintf(buf, len, "fields ");
        ok = member_names(t, buf, len) == 0;
        break;
    case H5T_ENUM:
        snprintf(buf, len, "members ");
        ok = member_names(t, buf, len) == 0;
        break;
    case H5T_REFERENCE: {
        htri_t obj = H5Tequal(t, H5T_STD_REF_OBJ), reg = H5Tequal(t, H5T_STD_REF_DSETREG);
        ok = obj >= 0 && reg >= 0;
        snprintf(buf, len, "%s", obj > 0 ? "object references" : reg > 0 ? "region references"
                                                                           : "references");
        break;
    }
    case H5T_OPAQUE: {
        char *tag = H5Tget_tag(t);
        size_t size = H5Tget_size(t);
        if (tag && tag[0])
            snprintf(buf, len, "%zu byte%s each, tag '%.32s'", size, size == 1 ? "" : "s", tag);
        else
            snprintf(buf, len, "%zu byte%s each", size, size == 1 ? "" : "s");
        if (tag && H5free_memory(tag) < 0) ok = 0;
        break;
    }
    case H5T_ARRAY: {
        hsize_t adims[GP_H5_MAXDIMS];
        int nd = H5Tget_array_ndims(t);
        super = H5Tget_super(t);
        ok = nd >= 1 && nd <= GP_H5_MAXDIMS && super >= 0 && H5Tget_array_dims2(t, adims) >= 0;
        if (ok) {
            size_t at;
            type_short(super, base, sizeof base);
            at = (size_t)snprintf(buf, len, "%s[", base);
            for (int i = 0; i < nd && at < len; i++)
                at += (size_t)snprintf(buf + at, len - at, "%s%llu", i ? "x" : "",
                                       (unsigned long long)adims[i]);
            if (at < len) snprintf(buf + at, len - at, "] per element");
        }
        break;
    }
    case H5T_BITFIELD: {
        size_t size = H5Tget_size(t);
        snprintf(buf, len, "%zu byte%s each", size, size == 1 ? "" : "s");
        break;
    }
    default:
        break;
    }
    if (super >= 0 && H5Tclose(super) < 0) ok = 0;
    if (!ok) buf[0] = '\0'; /* the class name alone still says what is wrong */
}

/* Maps a stored numeric type to the element type it is read as, and describes it. */
static int map_type(hid_t type, gp_dtype *dt, char *desc, size_t desclen, char *why,
                    size_t whylen)
{
    H5T_class_t cls = H5Tget_class(type);
    size_t size = H5Tget_size(type);
    H5T_order_t order = H5Tget_order(type);
    if (cls == H5T_NO_CLASS || size == 0 || order == H5T_ORDER_ERROR) {
        snprintf(why, whylen, "cannot inspect the element type");
        return -1;
    }
    if (cls == H5T_INTEGER) {
        H5T_sign_t sg = H5Tget_sign(type);
        if (sg == H5T_SGN_ERROR) {
            snprintf(why, whylen, "cannot inspect the integer sign");
            return -1;
        }
        if (size > 8) {
            snprintf(why, whylen, "unsupported %zu-byte integer (at most 8 bytes)", size);
            return -1;
        }
        int sgn = sg != H5T_SGN_NONE;
        *dt = size <= 4 ? (sgn ? GP_I32 : GP_U32) : (sgn ? GP_I64 : GP_U64);
        snprintf(desc, desclen, "%sint%zu %s", sgn ? "" : "u", size * 8, order_name(order));
        return 0;
    }
    if (cls == H5T_FLOAT) {
        size_t prec = H5Tget_precision(type), spos, epos, esz = 0, mpos, msz = 0;
        unsigned p = (unsigned)(prec < 4096 ? prec : 4096), b = (unsigned)(size < 512 ? size : 512);
        *dt = size <= 4 ? GP_F32 : GP_F64;
        /* the IEEE binary16/32/64/128 and x87 80-bit layouts by their bits; any other
         * (bfloat16, 8-bit floats, ...) by its exponent and mantissa widths */
        const int fields = H5Tget_fields(type, &spos, &epos, &esz, &mpos, &msz) >= 0;
        const int ieee = !fields || (p == 16 && esz == 5 && msz == 10) ||
                         (p == 32 && esz == 8 && msz == 23) || (p == 64 && esz == 11 && msz == 52) ||
                         (p == 128 && esz == 15 && msz == 112) || (p == 80 && esz == 15 && msz == 64);
        if (!ieee && p == 16 && esz == 8 && msz == 7)
            snprintf(desc, desclen, "bfloat16 %s", order_name(order));
        else if (!ieee)
            snprintf(desc, desclen, "float%u (%zu-bit exponent, %zu-bit mantissa) %s", p, esz,
                     msz, order_name(order));
        else if (p && p != b * 8)
            snprintf(desc, desclen, "float%u (%u bytes) %s", p, b, order_name(order));
        else
            snprintf(desc, desclen, "float%u %s", b * 8, order_name(order));
        return 0;
    }
    char detail[160];
    describe_other(type, cls, detail, sizeof detail);
    snprintf(why, whylen, "unsupported element class %s (%s%sneed integer or float)",
             class_name(cls), detail, detail[0] ? "; " : "");
    return -1;
}

/* A numeric array dataset, opened and inspected. */
typedef struct dsinfo {
    hid_t did;
    hid_t type;
    gp_dtype dtype;
    char desc[64];
    int ndims;
    hsize_t dims[GP_H5_MAXDIMS];
    int64_t n;
} dsinfo;

static void ds_close(dsinfo *d)
{
    if (d->type >= 0 && H5Tclose(d->type) < 0) { /* nothing more to do */ }
    if (d->did >= 0 && H5Dclose(d->did) < 0) { /* nothing more to do */ }
    d->type = d->did = H5I_INVALID_HID;
}

/* After opening `path` (absolute) failed: finds the first soft or external link on the way
 * (a group above it or the path itself) whose target does not resolve, and if there is one
 * records "link target missing" in e and returns 1; else 0 (the caller says why). Follows
 * the same links as the failed open, in the same order on every rank, so an external file
 * it opens with the parent's MPI-IO access is opened collectively. */
static int dangling_link(hid_t fid, const char *file, const char *path, gp_err *e)
{
    char pre[GP_H5_PATHLEN];
    size_t len = strlen(path);
    if (len >= sizeof pre) return 0;
    for (size_t i = 1; i <= len; i++) {
        if ((i < len && path[i] != '/') || path[i - 1] == '/') continue;
        memcpy(pre, path, i);
        pre[i] = '\0';
        H5L_info_t li;
        htri_t have = H5Lexists(fid, pre, H5P_DEFAULT);
        if (have <= 0 || H5Lget_info(fid, pre, &li, H5P_DEFAULT) < 0) return 0;
        if (li.type != H5L_TYPE_SOFT && li.type != H5L_TYPE_EXTERNAL) continue;
        if (H5Oexists_by_name(fid, pre, H5P_DEFAULT) > 0) continue;
        /* dangling (0; for an external link also a file that is missing or not HDF5) or
         * not to be inspected (< 0): name the target */
        char target[GP_H5_PATHLEN + 64] = "?";
        char *val = li.u.val_size > 0 ? malloc(li.u.val_size) : NULL;
        if (val && H5Lget_val(fid, pre, val, li.u.val_size, H5P_DEFAULT) >= 0) {
            const char *ef = NULL, *eo = NULL;
            if (li.type == H5L_TYPE_SOFT)
                snprintf(target, sizeof target, "%.*s", (int)li.u.val_size, val);
            else if (H5Lunpack_elink_val(val, li.u.val_size, NULL, &ef, &eo) >= 0 && ef && eo)
                snprintf(target, sizeof target, "%.512s:%.512s", ef, eo);
        }
        free(val);
        fail(e, GP_IO_EDATASET, "%s: %s: link target missing (%s link %s%s-> %s)", file, path,
             li.type == H5L_TYPE_SOFT ? "soft" : "external", i < len ? pre : "",
             i < len ? " " : "", target);
        return 1;
    }
    return 0;
}

/* Opens dataset `path` (absolute) of fid and checks that it is a numeric array. Local. */
static void ds_open(hid_t fid, const char *file, const char *path, dsinfo *d, gp_err *e)
{
    char why[256];
    hid_t space = H5I_INVALID_HID;
    memset(d, 0, sizeof *d);
    d->did = d->type = H5I_INVALID_HID;

    hid_t obj = H5Oopen(fid, path, H5P_DEFAULT);
    if (obj < 0) {
        h5why w = h5_reason();
        if (dangling_link(fid, file, path, e)) return;
        if (w.notfound)
            fail(e, GP_IO_EDATASET, "%s: %s: no such dataset", file, path);
        else
            fail(e, GP_IO_EDATASET, "%s: %s: cannot open (%s)", file, path, w.desc);
        return;
    }
    H5I_type_t it = H5Iget_type(obj);
    if (it != H5I_DATASET) {
        fail(e, GP_IO_EDATASET, "%s: %s: not a dataset (a %s)", file, path,
             it == H5I_GROUP ? "group" : it == H5I_DATATYPE ? "named datatype" : "non-dataset object");
        if (H5Oclose(obj) < 0) { /* already failing */ }
        return;
    }
    d->did = obj;
    d->type = H5Dget_type(d->did);
    if (d->type < 0) {
        fail(e, GP_IO_EDATASET, "%s: %s: cannot get the element type (%s)", file, path,
             h5_reason().desc);
        goto bad;
    }
    if (map_type(d->type, &d->dtype, d->desc, sizeof d->desc, why, sizeof why) < 0) {
        fail(e, GP_IO_EDATASET, "%s: %s: %s", file, path, why);
        goto bad;
    }
    space = H5Dget_space(d->did);
    if (space < 0) {
        fail(e, GP_IO_EDATASET, "%s: %s: cannot get the dataspace (%s)", file, path,
             h5_reason().desc);
        goto bad;
    }
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    if (sc == H5S_SCALAR) {
        fail(e, GP_IO_EDATASET, "%s: %s: scalar dataspace (need an array)", file, path);
        goto bad;
    }
    if (sc == H5S_NULL) {
        fail(e, GP_IO_EDATASET, "%s: %s: null dataspace (need an array)", file, path);
        goto bad;
    }
    int nd = H5Sget_simple_extent_ndims(space);
    if (sc != H5S_SIMPLE || nd < 1 || nd > GP_H5_MAXDIMS ||
        H5Sget_simple_extent_dims(space, d->dims, NULL) < 0) {
        fail(e, GP_IO_EDATASET, "%s: %s: cannot read the dataspace extent", file, path);
        goto bad;
    }
    d->ndims = nd;
    d->n = 1;
    for (int i = 0; i < nd; i++) {
        if (d->dims[i] == 0) {
            d->n = 0;
        } else if (d->n > 0) {
            if (d->dims[i] > (hsize_t)(INT64_MAX / d->n)) {
                fail(e, GP_IO_EDATASET, "%s: %s: more than 2^63-1 elements", file, path);
                goto bad;
            }
            d->n *= (int64_t)d->dims[i];
        }
    }
    if (H5Sclose(space) < 0) {
        space = H5I_INVALID_HID;
        fail(e, GP_IO_EDATASET, "%s: %s: H5Sclose failed", file, path);
        goto bad;
    }
    return;
bad:
    if (space >= 0 && H5Sclose(space) < 0) { /* already failing */ }
    ds_close(d);
}

/* ---- the default dataset --------------------------------------------------------------- */

typedef struct cands {
    int count;
    int truncated;
    int err;
    size_t first_too_long; /* the first's path length when it is GP_H5_PATHLEN or more, else 0 */
    char first[GP_H5_PATHLEN];
    char list[1400];
    size_t len;
} cands;

static herr_t visit_cb(hid_t obj, const char *name, const H5O_info_t *info, void *op)
{
    cands *c = op;
    if (info->type != H5O_TYPE_DATASET) return 0;
    hid_t d = H5Dopen2(obj, name, H5P_DEFAULT);
    if (d < 0) {
        c->err = 1;
        return -1;
    }
    hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
    H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    H5S_class_t sc = sp >= 0 ? H5Sget_simple_extent_type(sp) : H5S_NO_CLASS;
    int bad = t < 0 || cls == H5T_NO_CLASS || sp < 0 || sc == H5S_NO_CLASS;
    if (t >= 0 && H5Tclose(t) < 0) bad = 1;
    if (sp >= 0 && H5Sclose(sp) < 0) bad = 1;
    if (H5Dclose(d) < 0) bad = 1;
    if (bad) {
        c->err = 1;
        return -1;
    }
    /* candidates: numeric arrays (a scalar or null dataspace holds no array to read) */
    if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || sc != H5S_SIMPLE) return 0;
    char p[GP_H5_PATHLEN];
    if (abs_path(name, p, sizeof p) < 0) {
        /* counted, so that it is never silently passed over for another dataset */
        const size_t plen = strlen(name) + (name[0] != '/');
        snprintf(p, sizeof p, "(a path of %zu bytes)", plen);
        if (c->count == 0) c->first_too_long = plen;
    }
    if (c->count++ == 0) snprintf(c->first, sizeof c->first, "%s", p);
    size_t need = strlen(p) + 2;
    if (c->truncated || c->len + need + 8 >= sizeof c->list) {
        c->truncated = 1;
        return 0;
    }
    c->len += (size_t)snprintf(c->list + c->len, sizeof c->list - c->len, "%s%s",
                               c->len ? ", " : "", p);
    return 0;
}

/* ---- open / close ---------------------------------------------------------------------- */

static void close_input(gp_h5_input *in)
{
    if (in->ftype >= 0 && H5Tclose(in->ftype) < 0) { /* nothing more to do */ }
    if (in->did >= 0 && H5Dclose(in->did) < 0) { /* nothing more to do */ }
    if (in->fid >= 0 && H5Fclose(in->fid) < 0) { /* nothing more to do */ }
    in->ftype = in->did = in->fid = H5I_INVALID_HID;
}

void gp_h5_close(gp_h5_input *in)
{
    if (!in) return;
    quiet_hdf5();
    close_input(in);
}

/* A file access list: the MPI-IO driver over comm, or (posix) sec2 read/write without a file
 * lock (the ranks' opens of one file must not lock each other out; none of them writes
 * what another reads). NULL-safe: returns H5I_INVALID_HID on failure. */
static hid_t access_list(MPI_Comm comm, gp_io_mode io)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) return H5I_INVALID_HID;
    herr_t st = io == GP_IO_MPIIO ? H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL)
                                  : H5Pset_fapl_sec2(fapl);
    if (st >= 0 && io != GP_IO_MPIIO) st = H5Pset_file_locking(fapl, 0, 1);
    if (st < 0) {
        if (H5Pclose(fapl) < 0) { /* failing already */ }
        return H5I_INVALID_HID;
    }
    return fapl;
}

int gp_h5_open(MPI_Comm comm, const char *file, const char *dataset, gp_h5_input *in,
               char *msg, size_t msglen)
{
    return gp_h5_open_io(comm, file, dataset, GP_IO_MPIIO, in, msg, msglen);
}

int gp_h5_open_io(MPI_Comm comm, const char *file, const char *dataset, gp_io_mode io,
                  gp_h5_input *in, char *msg, size_t msglen)
{
    gp_err e;
    int rank = 0, mode = GP_IO_MPIIO;
    hid_t fapl = H5I_INVALID_HID;
    dsinfo d;
    char path[GP_H5_PATHLEN];
    memset(&e, 0, sizeof e);
    memset(&d, 0, sizeof d);
    d.did = d.type = H5I_INVALID_HID;
    gp_h5_register_filters(); /* LZF; a failure shows at the read */
    quiet_hdf5();

    if (!in) {
        fail(&e, GP_IO_EOPEN, "gp_h5_open: no input record");
        agree(comm, &e);
        return finish(&e, msg, msglen);
    }
    memset(in, 0, sizeof *in);
    in->fid = in->did = in->ftype = H5I_INVALID_HID;
    if (!file || !file[0])
        fail(&e, GP_IO_EOPEN, "(no file): cannot open: no file name given");
    else if (strlen(file) >= sizeof in->file)
        fail(&e, GP_IO_EOPEN, "%.64s...: cannot open: file name too long", file);
    else
        snprintf(in->file, sizeof in->file, "%s", file);
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        fail(&e, GP_IO_EOPEN, "%s: cannot open: MPI_Comm_rank failed", in->file);

    /* rank 0 looks at the file first, so that errno's reason reaches every rank, and
     * chooses the driver (its answer is every rank's) */
    if (rank == 0 && !e.rc) {
        struct stat st;
        gp_io_env env;
        if (stat(file, &st) != 0)
            fail(&e, GP_IO_EOPEN, "%s: cannot open: not an HDF5 file or unreadable (%s)",
                 file, strerror(errno));
        else if (S_ISDIR(st.st_mode))
            fail(&e, GP_IO_EOPEN, "%s: cannot open: not an HDF5 file or unreadable (%s)",
                 file, strerror(EISDIR));
        else if (access(file, R_OK) != 0)
            fail(&e, GP_IO_EOPEN, "%s: cannot open: not an HDF5 file or unreadable (%s)",
                 file, strerror(errno));
        gp_io_env_of(file, &env);
        mode = (int)gp_io_choose(io, &env);
    }
    if (agree(comm, &e)) goto done;
    if (MPI_Bcast(&mode, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
        fail(&e, GP_IO_EOPEN, "%s: cannot open: MPI_Bcast failed", file);
    in->io = (gp_io_mode)mode;

    fapl = access_list(comm, in->io);
    if (fapl < 0) {
        fail(&e, GP_IO_EOPEN, "%s: cannot open: cannot set up the %s file access (%s)", file,
             in->io == GP_IO_MPIIO ? "MPI-IO" : "POSIX", h5_reason().desc);
    } else {
        in->fid = H5Fopen(file, H5F_ACC_RDONLY, fapl);
        if (in->fid < 0)
            fail(&e, GP_IO_EOPEN, "%s: cannot open: not an HDF5 file or unreadable (%s)",
                 file, h5_reason().desc);
    }
    if (fapl >= 0 && H5Pclose(fapl) < 0)
        fail(&e, GP_IO_EOPEN, "%s: cannot open: H5Pclose failed", file);
    if (agree(comm, &e)) goto done;

    /* which dataset */
    if (dataset) {
        if (!dataset[0])
            fail(&e, GP_IO_EDATASET, "%s: empty dataset name", file);
        else if (abs_path(dataset, path, sizeof path) < 0)
            fail(&e, GP_IO_EDATASET, "%s: %.64s...: dataset name too long", file, dataset);
    } else {
        cands *c = calloc(1, sizeof *c);
        if (!c) {
            fail(&e, GP_IO_EDATASET, "%s: out of memory", file);
        } else {
            herr_t st = H5Ovisit2(in->fid, H5_INDEX_NAME, H5_ITER_INC, visit_cb, c,
                                  H5O_INFO_BASIC);
            if (st < 0 || c->err)
                fail(&e, GP_IO_EDATASET, "%s: cannot list the datasets (%s)", file,
                     h5_reason().desc);
            else if (c->count == 0)
                fail(&e, GP_IO_EDATASET, "%s: no numeric dataset in the file", file);
            else if (c->count > 1)
                fail(&e, GP_IO_EDATASET, "%s: %d numeric datasets, choose one with --dataset: %s%s",
                     file, c->count, c->list, c->truncated ? ", ..." : "");
            else if (c->first_too_long)
                fail(&e, GP_IO_EDATASET,
                     "%s: the numeric dataset's path has %zu bytes, more than the %d supported",
                     file, c->first_too_long, GP_H5_PATHLEN - 1);
            else
                snprintf(path, sizeof path, "%s", c->first);
            free(c);
        }
    }
    if (agree(comm, &e)) goto done;

    ds_open(in->fid, file, path, &d, &e);
    if (!e.rc) {
        snprintf(in->dataset, sizeof in->dataset, "%s", path);
        in->dtype = d.dtype;
        snprintf(in->type_desc, sizeof in->type_desc, "%s", d.desc);
        in->ndims = d.ndims;
        memcpy(in->dims, d.dims, sizeof d.dims);
        in->n = d.n;
        in->ftype = H5Tcopy(d.type);
        if (in->ftype < 0)
            fail(&e, GP_IO_EDATASET, "%s: %s: H5Tcopy failed (%s)", file, path,
                 h5_reason().desc);
        in->did = d.did;
        d.did = H5I_INVALID_HID;
    }
    ds_close(&d);
    agree(comm, &e);

done:
    if (e.rc) close_input(in);
    return finish(&e, msg, msglen);
}

/* ---- the ranks' ranges ----------------------------------------------------------------- */

static int cmp_range(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Every rank's (off, cnt), sorted by off, into *all (P pairs, caller frees). Collective;
 * on failure *all is NULL on every rank and e is set. */
static void gather_ranges(MPI_Comm comm, int64_t off, int64_t cnt, int64_t **all, int *P,
                          int code, const char *file, gp_err *e)
{
    int64_t mine[2] = {off, cnt};
    int have, every = 0;
    *all = NULL;
    if (MPI_Comm_size(comm, P) != MPI_SUCCESS) {
        fail(e, code, "%s: MPI_Comm_size failed", file);
        return;
    }
    int64_t *a = malloc(sizeof(int64_t) * 2 * (size_t)*P);
    have = a != NULL;
    if (MPI_Allreduce(&have, &every, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !every) {
        fail(e, code, "%s: out of memory (or MPI failure) gathering the ranks' ranges", file);
        free(a);
        return;
    }
    if (MPI_Allgather(mine, 2, MPI_INT64_T, a, 2, MPI_INT64_T, comm) != MPI_SUCCESS) {
        fail(e, code, "%s: MPI_Allgather failed", file);
        free(a);
        return;
    }
    qsort(a, (size_t)*P, 2 * sizeof(int64_t), cmp_range);
    *all = a;
}

/* 1 when two ranks' non-empty ranges share an element. Collective. */
static int shards_overlap(MPI_Comm comm, int64_t off, int64_t cnt, const char *file,
                          gp_err *e)
{
    int P = 0, over = 0;
    int64_t *a, end = INT64_MIN;
    gather_ranges(comm, off, cnt, &a, &P, GP_IO_EREAD, file, e);
    for (int r = 0; a && r < P; r++) {
        if (a[2 * r + 1] == 0) continue;
        if (a[2 * r] < end) over = 1;
        if (a[2 * r] + a[2 * r + 1] > end) end = a[2 * r] + a[2 * r + 1];
    }
    free(a);
    return over;
}

/* Checks that the ranks' [off, off+cnt) tile [0, n) exactly. Collective. */
static void check_tiling(MPI_Comm comm, const char *path, int64_t n, int64_t off,
                         int64_t cnt, gp_err *e)
{
    int P = 0;
    int64_t *a, at = 0;
    gather_ranges(comm, off, cnt, &a, &P, GP_IO_EWRITE, path, e);
    if (!a) return;
    for (int r = 0; r < P; r++) {
        if (a[2 * r + 1] == 0) continue;
        if (a[2 * r] != at) break;
        at += a[2 * r + 1];
    }
    if (at != n)
        fail(e, GP_IO_EWRITE, "%s: the ranks' parts do not cover [0, %lld) exactly", path,
             (long long)n);
    free(a);
}

/* ---- shard selection and transfer ------------------------------------------------------ */

typedef struct sel {
    hid_t space;
    int nd;
    const hsize_t *dims;
    hsize_t inner[GP_H5_MAXDIMS]; /* elements per index step of each dimension */
    hsize_t start[GP_H5_MAXDIMS];
    hsize_t count[GP_H5_MAXDIMS];
    int nblocks;
} sel;

static int add_block(sel *S, int lev, hsize_t st, hsize_t ct)
{
    for (int j = 0; j < lev; j++) S->count[j] = 1;
    S->start[lev] = st;
    S->count[lev] = ct;
    for (int j = lev + 1; j < S->nd; j++) {
        S->start[j] = 0;
        S->count[j] = S->dims[j];
    }
    H5S_seloper_t op = S->nblocks++ ? H5S_SELECT_OR : H5S_SELECT_SET;
    return H5Sselect_hyperslab(S->space, op, S->start, NULL, S->count, NULL) < 0 ? -1 : 0;
}

/* Selects the flattened range [b, e) of the sub-array below the fixed indices
 * start[0..lev-1]: partial leading row, whole rows, partial trailing row. */
static int sel_range(sel *S, int lev, hsize_t b, hsize_t e)
{
    if (b >= e) return 0;
    if (lev == S->nd - 1) return add_block(S, lev, b, e - b);
    hsize_t in = S->inner[lev], r0 = b / in, r1 = e / in;
    if (b % in) {
        hsize_t rend = (r0 + 1) * in < e ? (r0 + 1) * in : e;
        S->start[lev] = r0;
        if (sel_range(S, lev + 1, b - r0 * in, rend - r0 * in) < 0) return -1;
        if (rend == e) return 0;
        r0++;
    }
    if (r1 > r0 && add_block(S, lev, r0, r1 - r0) < 0) return -1;
    if (e % in) {
        S->start[lev] = r1;
        if (sel_range(S, lev + 1, 0, e - r1 * in) < 0) return -1;
    }
    return 0;
}

static int select_flat(hid_t space, int nd, const hsize_t *dims, int64_t off, int64_t cnt)
{
    sel S;
    memset(&S, 0, sizeof S);
    S.space = space;
    S.nd = nd;
    S.dims = dims;
    S.inner[nd - 1] = 1;
    for (int i = nd - 2; i >= 0; i--) S.inner[i] = S.inner[i + 1] * dims[i + 1];
    return sel_range(&S, 0, (hsize_t)off, (hsize_t)(off + cnt));
}

/* Writing: a value outside the stored type's range fails the write instead of being
 * clipped silently (HDF5's default). */
static H5T_conv_ret_t range_cb(H5T_conv_except_t ex, hid_t src, hid_t dst, void *s, void *d,
                               void *op)
{
    (void)src, (void)dst, (void)s, (void)d;
    if (ex == H5T_CONV_EXCEPT_RANGE_HI || ex == H5T_CONV_EXCEPT_RANGE_LOW) {
        *(int *)op = 1;
        return H5T_CONV_ABORT;
    }
    return H5T_CONV_UNHANDLED;
}

/* 1 when filtered chunked dataset did has chunks never written. H5Dget_space_status
 * compares bytes stored with the full size, so it says "allocated" for a compressed dataset
 * whose written chunks happen to take that many bytes (small chunks grow under deflate).
 * Else 0 (also for unfiltered chunks, where the byte count is exact). */
static int chunks_missing(hid_t did, hid_t fspace)
{
    hid_t dcpl = H5Dget_create_plist(did);
    hsize_t dims[GP_H5_MAXDIMS], chunk[GP_H5_MAXDIMS], have = 0, want = 1;
    int nd = fspace >= 0 ? H5Sget_simple_extent_ndims(fspace) : -1, missing = 0;
    if (dcpl >= 0 && nd >= 1 && nd <= GP_H5_MAXDIMS && H5Pget_layout(dcpl) == H5D_CHUNKED &&
        H5Pget_nfilters(dcpl) > 0 && H5Pget_chunk(dcpl, nd, chunk) == nd && H5Sget_simple_extent_dims(fspace, dims, NULL) == nd &&
        H5Dget_num_chunks(did, fspace, &have) >= 0) {
        for (int i = 0; i < nd; i++) want *= chunk[i] ? (dims[i] + chunk[i] - 1) / chunk[i] : 0;
        missing = have < want;
    }
    if (dcpl >= 0 && H5Pclose(dcpl) < 0) { /* nothing more to do */ }
    return missing;
}

/* Selects the flattened elements [s, s+c) of fspace (nothing when c = 0) and returns a
 * memory space of c elements (1 when c = 0, nothing selected), or H5I_INVALID_HID with e
 * set. */
static hid_t select_piece(hid_t fspace, int nd, const hsize_t *dims, int64_t s, int64_t c,
                          int code, const char *file, const char *dname, gp_err *e)
{
    hsize_t mdim = c > 0 ? (hsize_t)c : 1;
    hid_t mspace = H5Screate_simple(1, &mdim, NULL);
    int bad = mspace < 0;
    if (!bad && c > 0)
        bad = select_flat(fspace, nd, dims, s, c) < 0;
    else if (!bad)
        bad = H5Sselect_none(fspace) < 0 || H5Sselect_none(mspace) < 0;
    if (bad) {
        fail(e, code, "%s: %s: cannot select elements [%lld, %lld) (%s)", file, dname,
             (long long)s, (long long)(s + c), h5_reason().desc);
        if (mspace >= 0 && H5Sclose(mspace) < 0) { /* failing already */ }
        return H5I_INVALID_HID;
    }
    return mspace;
}

/* H5Dread / H5Dwrite of the selected piece; a failed write whose conversion found a value
 * out of range (*out_of_range, set by range_cb) says so. */
static void move_piece(int writing, hid_t did, hid_t memtype, hid_t mspace, hid_t fspace,
                       hid_t dxpl, void *p, const int *out_of_range, const char *file,
                       const char *dname, gp_err *e)
{
    const herr_t st = writing ? H5Dwrite(did, memtype, mspace, fspace, dxpl, p)
                              : H5Dread(did, memtype, mspace, fspace, dxpl, p);
    if (st < 0 && out_of_range && *out_of_range)
        fail(e, GP_IO_EWRITE, "%s: %s: write failed: a value is outside the range of the stored type",
             file, dname);
    else if (st < 0)
        fail(e, writing ? GP_IO_EWRITE : GP_IO_EREAD, "%s: %s: %s failed: %s", file, dname,
             writing ? "write" : "read", h5_reason().desc);
}

/* A serial (sec2, read-only, unlocked) open of dataset dname of file, for the virtual
 * dataset that parallel HDF5 will not read; *sfid / *sdid receive the handles. */
static void open_serial(const char *file, const char *dname, hid_t *sfid, hid_t *sdid,
                        int code, gp_err *e)
{
    hid_t fapl = access_list(MPI_COMM_SELF, GP_IO_POSIX);
    if (fapl >= 0) *sfid = H5Fopen(file, H5F_ACC_RDONLY, fapl);
    if (*sfid >= 0) *sdid = H5Dopen2(*sfid, dname, H5P_DEFAULT);
    if (*sdid < 0)
        fail(e, code, "%s: %s: cannot open the virtual dataset for a serial read (%s)", file,
             dname, h5_reason().desc);
    if (fapl >= 0 && H5Pclose(fapl) < 0) fail(e, code, "%s: %s: H5Pclose failed", file, dname);
}

/* Collective transfer of the flattened elements [off, off+cnt) of dataset did (nd dims)
 * to or from buf (memory type memtype, esz bytes each), in pieces of <= GP_H5_PIECE_BYTES
 * with the same number of H5Dread/H5Dwrite calls on every rank. */
static void transfer(MPI_Comm comm, int writing, hid_t did, int nd, const hsize_t *dims,
                     hid_t memtype, size_t esz, int64_t off, int64_t cnt, void *buf,
                     const char *file, const char *dname, gp_err *e)
{
    const int code = writing ? GP_IO_EWRITE : GP_IO_EREAD;
    static double dummy[2];
    hid_t fspace = H5I_INVALID_HID, dxpl = H5I_INVALID_HID;
    int64_t per = GP_H5_PIECE_BYTES / (int64_t)esz, mine, pieces = 0;
    if (per < 1) per = 1;
    mine = cnt > 0 ? (cnt + per - 1) / per : 0;
    if (MPI_Allreduce(&mine, &pieces, 1, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS) {
        fail(e, code, "%s: %s: MPI_Allreduce failed", file, dname);
        agree(comm, e);
        return;
    }
    fspace = H5Dget_space(did);
    if (fspace < 0)
        fail(e, code, "%s: %s: cannot get the dataspace (%s)", file, dname, h5_reason().desc);
    /* Open MPI 4.1's OMPIO returns wrong data from a collective read when ranks' ranges
     * overlap (open-mpi/ompi#10546 family): then keep the collective call but let each
     * rank do independent MPI-IO underneath. Disjoint shards stay fully collective. */
    int indep = !writing && shards_overlap(comm, off, cnt, file, e), out_of_range = 0;
    /* HDF5 1.10.8's collective read of a dataset whose storage is not all allocated (a
     * sparse file: chunks never written read as the fill value) fails in MPI_File_set_view
     * with MPI_ERR_TYPE, also with H5FD_MPIO_INDIVIDUAL_IO underneath; an independent
     * transfer reads it. The space status is file metadata, the same on every rank. */
    H5D_space_status_t alloc = H5D_SPACE_STATUS_ALLOCATED;
    const int sparse = !writing && H5Dget_space_status(did, &alloc) >= 0 &&
                       (alloc != H5D_SPACE_STATUS_ALLOCATED || chunks_missing(did, fspace));
    /* Parallel HDF5 1.10 refuses to read a virtual dataset (VDS) through MPI-IO ("parallel
     * reads not supported on virtual datasets"): then each rank reads its part through a
     * serial (sec2) open of its own, read-only and without a file lock, as the MPI-IO open. */
    hid_t sfid = H5I_INVALID_HID, sdid = H5I_INVALID_HID;
    int vds = 0;
    if (!writing && !e->rc) {
        hid_t dcpl = H5Dget_create_plist(did);
        vds = dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL;
        if (dcpl >= 0 && H5Pclose(dcpl) < 0)
            fail(e, code, "%s: %s: H5Pclose failed", file, dname);
        if (vds && !e->rc) open_serial(file, dname, &sfid, &sdid, code, e);
    }
    dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (dxpl < 0 ||
        H5Pset_dxpl_mpio(dxpl, sparse ? H5FD_MPIO_INDEPENDENT : H5FD_MPIO_COLLECTIVE) < 0 ||
        (indep && H5Pset_dxpl_mpio_collective_opt(dxpl, H5FD_MPIO_INDIVIDUAL_IO) < 0) ||
        (writing && H5Pset_type_conv_cb(dxpl, range_cb, &out_of_range) < 0))
        fail(e, code, "%s: %s: cannot set up the collective transfer (%s)", file, dname,
             h5_reason().desc);
    if (agree(comm, e)) goto out;

    for (int64_t k = 0; k < pieces; k++) {
        int64_t s = off + k * per, c = cnt - k * per;
        if (c > per) c = per;
        if (c < 0) c = 0;
        hid_t mspace = select_piece(fspace, nd, dims, s, c, code, file, dname, e);
        if (!agree(comm, e)) {
            char *p = c > 0 ? (char *)buf + (size_t)(k * per) * esz : (char *)dummy;
            move_piece(writing, vds ? sdid : did, memtype, mspace, fspace,
                       vds ? H5P_DEFAULT : dxpl, p, &out_of_range, file, dname, e);
        }
        if (mspace >= 0 && H5Sclose(mspace) < 0)
            fail(e, code, "%s: %s: H5Sclose failed", file, dname);
        if (agree(comm, e)) break;
    }
out:
    if (sdid >= 0 && H5Dclose(sdid) < 0) fail(e, code, "%s: %s: H5Dclose failed", file, dname);
    if (sfid >= 0 && H5Fclose(sfid) < 0) fail(e, code, "%s: H5Fclose failed", file);
    if (dxpl >= 0 && H5Pclose(dxpl) < 0) fail(e, code, "%s: %s: H5Pclose failed", file, dname);
    if (fspace >= 0 && H5Sclose(fspace) < 0)
        fail(e, code, "%s: %s: H5Sclose failed", file, dname);
    agree(comm, e);
}

/* ---- the reader ------------------------------------------------------------------------ */

/* Bytes per system call of pread/pwrite (Linux moves at most 2^31 - 4096 bytes per call). */
#define GP_IO_CALL_BYTES ((size_t)1 << 30)
/* Stored elements per H5Tconvert call of a converting read or write: a piece that stays in
 * the cache between the copy and the conversion. */
#ifndef GP_CONV_PIECE_BYTES
#define GP_CONV_PIECE_BYTES ((size_t)1 << 20)
#endif

/* Elements per converted piece whose wider form (memory or stored) has `wide` bytes: at
 * least one. A piece's buffer holds conv_elems(wide) * wide bytes. */
static int64_t conv_elems(size_t wide)
{
    const size_t k = GP_CONV_PIECE_BYTES / (wide ? wide : 1);
    return k > 0 ? (int64_t)k : 1;
}

/* This process's test hooks (gp_h5_set_faults): the program decides them, io/ only obeys. */
static gp_h5_faults g_faults;

void gp_h5_set_faults(const gp_h5_faults *f)
{
    if (f) g_faults = *f;
    else memset(&g_faults, 0, sizeof g_faults);
}

/* pread (writing = 0) or pwrite of len bytes at byte pos of fd, looping over partial
 * transfers and EINTR, at most GP_IO_CALL_BYTES per call. Returns 0, or -1 with errno set
 * (errno 0: the file ends before len bytes could be read); *at is the byte where it
 * stopped. `fault`: fail with EIO at once (the test hook). */
static int full_io(int writing, int fd, void *buf, size_t len, int64_t pos, int fault,
                   int64_t *at)
{
    char *p = buf;
    *at = pos;
    if (fault && len > 0) {
        errno = EIO;
        return -1;
    }
    while (len > 0) {
        const size_t want = len < GP_IO_CALL_BYTES ? len : GP_IO_CALL_BYTES;
        const ssize_t got = writing ? pwrite(fd, p, want, (off_t)*at) : pread(fd, p, want, (off_t)*at);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            if (got == 0) errno = writing ? EIO : 0; /* a write of nothing: never for a file */
            return -1;
        }
        p += got;
        len -= (size_t)got;
        *at += got;
    }
    return 0;
}

enum { RD_MPIIO, RD_HDF5, RD_PREAD, RD_CONVERT };
static const char *const g_rd_how[] = {"mpiio", "hdf5", "pread", "pread+convert"};

struct gp_h5_reader {
    MPI_Comm comm;
    int rank;
    const gp_h5_input *in;
    dsinfo x;             /* a dataset of its own (not in->dataset); x.did < 0 otherwise */
    hid_t did;            /* the dataset read: x.did or in->did */
    int nd;
    const hsize_t *dims;
    char dname[GP_H5_PATHLEN];
    gp_dtype as;
    size_t esz;           /* bytes of an element in memory */
    int how;              /* RD_* */
    int fd;               /* RD_PREAD / RD_CONVERT: the file that holds the raw data */
    int64_t raw;          /* its byte offset of element 0 */
    hid_t ftype;          /* RD_CONVERT: the stored type */
    size_t fsz;           /* bytes of a stored element */
    unsigned char *stage; /* RD_CONVERT to a narrower type: one piece of stored elements */
};

/* Plans a posix reader: pread where the raw data lie in one contiguous block of a file
 * (contiguous layout, allocated, no external storage, the whole block inside the file),
 * else H5Dread of the hyperslab (r->how stays RD_HDF5). A contiguous block of another stored
 * type is read with pread + H5Tconvert (RD_CONVERT): measured against H5Dread of the same
 * block through a sec2 open (which reads into its 1 MiB type-conversion buffer and runs the
 * same conversion), 2^25 elements on the 2-core test machine, it took 0.68-0.9x the time
 * for int16, big-endian int32 / float64 and uint8, 0.46x for long double, and the same
 * within the noise for float16 (HDF5's soft conversion, ~0.11 us per element either way).
 * Pieces of 1 MiB: 256 KiB were no faster, 4 MiB up to 1.25x slower (big-endian float64).
 * Local. */
static void plan_posix(gp_h5_reader *r, gp_err *e)
{
    const hid_t memtype = native_of(r->as);
    char name[GP_H5_PATHLEN + 1];
    struct stat st;
    r->how = RD_HDF5;
    hid_t dcpl = H5Dget_create_plist(r->did);
    if (dcpl < 0) return; /* H5Dread will say what is wrong */
    const int contiguous = H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_external_count(dcpl) == 0;
    if (H5Pclose(dcpl) < 0 || !contiguous) return;
    const haddr_t addr = H5Dget_offset(r->did); /* from the start of the file, user block included */
    const hsize_t bytes = H5Dget_storage_size(r->did);
    hid_t ft = H5Dget_type(r->did);
    const size_t fsz = ft >= 0 ? H5Tget_size(ft) : 0;
    const htri_t same = ft >= 0 ? H5Tequal(ft, memtype) : -1;
    const ssize_t nl = H5Fget_name(r->did, name, sizeof name); /* an external link's target */
    int fd = -1;
    if (addr != HADDR_UNDEF && fsz > 0 && same >= 0 && nl > 0 && (size_t)nl < sizeof name &&
        bytes == (hsize_t)r->in->n * fsz && addr <= (haddr_t)INT64_MAX - bytes) {
        fd = open(name, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            fail(e, GP_IO_EREAD, "%s: %s: cannot open %s for reading (%s)", r->in->file,
                 r->dname, name, strerror(errno));
        /* a block past the end of the file (damaged): H5Dread says so */
        if (fd >= 0 && (fstat(fd, &st) != 0 || (uint64_t)st.st_size < (uint64_t)(addr + bytes))) {
            close(fd);
            fd = -1;
        }
    }
    if (fd >= 0) {
        r->fd = fd;
        r->raw = (int64_t)addr;
        r->fsz = fsz;
        r->how = same > 0 ? RD_PREAD : RD_CONVERT;
    }
    if (r->how == RD_CONVERT) {
        r->ftype = ft;
        ft = H5I_INVALID_HID;
        if (fsz > r->esz && !(r->stage = malloc((size_t)conv_elems(fsz) * fsz)))
            fail(e, GP_IO_EREAD, "%s: %s: out of memory", r->in->file, r->dname);
    }
    if (ft >= 0 && H5Tclose(ft) < 0) { /* nothing more to do */ }
}

int gp_h5_reader_open(MPI_Comm comm, const gp_h5_input *in, const char *dataset, gp_dtype as,
                      gp_h5_reader **out, char *msg, size_t msglen)
{
    gp_err e;
    char path[GP_H5_PATHLEN];
    gp_h5_reader *r = calloc(1, sizeof *r);
    memset(&e, 0, sizeof e);
    quiet_hdf5();
    if (out) *out = NULL;
    if (!in || in->fid < 0 || in->did < 0 || !out)
        fail(&e, GP_IO_EREAD, "gp_h5_read: the input is not open");
    else if (!r)
        fail(&e, GP_IO_EREAD, "%s: out of memory", in->file);
    if (agree(comm, &e)) goto bad;
    r->comm = comm;
    r->in = in;
    r->x.did = r->x.type = r->ftype = H5I_INVALID_HID;
    r->fd = -1;
    r->did = in->did;
    r->nd = in->ndims;
    r->dims = in->dims;
    snprintf(r->dname, sizeof r->dname, "%s", in->dataset);
    if (MPI_Comm_rank(comm, &r->rank) != MPI_SUCCESS)
        fail(&e, GP_IO_EREAD, "%s: MPI_Comm_rank failed", in->file);
    if (dataset) {
        if (!dataset[0] || abs_path(dataset, path, sizeof path) < 0) {
            fail(&e, GP_IO_EDATASET, "%s: bad dataset name '%.64s'", in->file, dataset);
        } else if (strcmp(path, in->dataset) != 0) {
            ds_open(in->fid, in->file, path, &r->x, &e);
            if (!e.rc && r->x.n != in->n)
                fail(&e, GP_IO_EDATASET, "%s: %s has %lld elements, %s has %lld", in->file,
                     path, (long long)r->x.n, in->dataset, (long long)in->n);
            r->did = r->x.did;
            r->nd = r->x.ndims;
            r->dims = r->x.dims;
            snprintf(r->dname, sizeof r->dname, "%s", path);
        }
    }
    if (agree(comm, &e)) goto bad;
    r->as = as;
    r->esz = gp_dtype_size(as);
    r->how = RD_MPIIO;
    if (r->esz == 0)
        fail(&e, GP_IO_EREAD, "%s: %s: invalid element type %d", in->file, r->dname, (int)as);
    else if (in->io != GP_IO_MPIIO)
        plan_posix(r, &e);
    if (agree(comm, &e)) goto bad;
    *out = r;
    return 0;
bad:
    gp_h5_reader_close(r);
    return finish(&e, msg, msglen);
}

const char *gp_h5_reader_how(const gp_h5_reader *r)
{
    return r && r->how >= 0 && r->how <= RD_CONVERT ? g_rd_how[r->how] : "?";
}

void gp_h5_reader_close(gp_h5_reader *r)
{
    if (!r) return;
    quiet_hdf5();
    if (r->fd >= 0) close(r->fd);
    if (r->ftype >= 0 && H5Tclose(r->ftype) < 0) { /* nothing more to do */ }
    ds_close(&r->x);
    free(r->stage);
    free(r);
}

/* RD_PREAD / RD_CONVERT failed at byte `at` of the raw data's file (errno set; 0: the file
 * ended there). */
static void raw_failed(const gp_h5_reader *r, int64_t at, gp_err *e)
{
    if (errno == 0)
        fail(e, GP_IO_EREAD, "%s: %s: read failed: the file ends at byte %lld, inside the "
             "dataset's data", r->in->file, r->dname, (long long)at);
    else
        fail(e, GP_IO_EREAD, "%s: %s: read failed: %s (at byte %lld)", r->in->file, r->dname,
             strerror(errno), (long long)at);
}

/* RD_CONVERT: the stored bytes of [off, off+cnt) in pieces, each converted by H5Tconvert
 * (the conversion H5Dread makes) in place in buf when the memory type is at least as wide,
 * else in r->stage and copied. */
static void read_convert(gp_h5_reader *r, int64_t off, int64_t cnt, void *buf, int fault,
                         gp_err *e)
{
    const size_t fs = r->fsz, ms = r->esz, wide = fs > ms ? fs : ms;
    const int64_t per = conv_elems(wide);
    const hid_t memtype = native_of(r->as);
    for (int64_t done = 0; done < cnt && !e->rc; done += per) {
        const int64_t c = cnt - done < per ? cnt - done : per;
        char *dst = (char *)buf + (size_t)done * ms;
        void *tmp = fs <= ms ? (void *)dst : (void *)r->stage;
        int64_t at;
        if (full_io(0, r->fd, tmp, (size_t)c * fs, r->raw + (off + done) * (int64_t)fs, fault, &at) != 0)
            raw_failed(r, at, e);
        else if (H5Tconvert(r->ftype, memtype, (size_t)c, tmp, NULL, H5P_DEFAULT) < 0)
            fail(e, GP_IO_EREAD, "%s: %s: read failed: %s", r->in->file, r->dname, h5_reason().desc);
        else if (tmp != dst)
            memcpy(dst, tmp, (size_t)c * ms);
    }
}

/* RD_HDF5: H5Dread of the hyperslab of [off, off+cnt) through this rank's own open, in
 * pieces of at most GP_H5_PIECE_BYTES. */
static void read_hdf5(gp_h5_reader *r, int64_t off, int64_t cnt, void *buf, gp_err *e)
{
    const int64_t per = GP_H5_PIECE_BYTES / (int64_t)r->esz > 0 ? GP_H5_PIECE_BYTES / (int64_t)r->esz : 1;
    hid_t fspace = H5Dget_space(r->did);
    if (fspace < 0) {
        fail(e, GP_IO_EREAD, "%s: %s: cannot get the dataspace (%s)", r->in->file, r->dname,
             h5_reason().desc);
        return;
    }
    for (int64_t done = 0; done < cnt && !e->rc; done += per) {
        const int64_t c = cnt - done < per ? cnt - done : per;
        hid_t mspace = select_piece(fspace, r->nd, r->dims, off + done, c, GP_IO_EREAD,
                                    r->in->file, r->dname, e);
        if (mspace >= 0) {
            move_piece(0, r->did, native_of(r->as), mspace, fspace, H5P_DEFAULT,
                       (char *)buf + (size_t)done * r->esz, NULL, r->in->file, r->dname, e);
            if (H5Sclose(mspace) < 0) fail(e, GP_IO_EREAD, "%s: %s: H5Sclose failed", r->in->file, r->dname);
        }
    }
    if (H5Sclose(fspace) < 0) fail(e, GP_IO_EREAD, "%s: %s: H5Sclose failed", r->in->file, r->dname);
}

int gp_h5_reader_read(gp_h5_reader *r, int64_t off, int64_t cnt, void *buf, char *msg,
                      size_t msglen)
{
    gp_err e;
    memset(&e, 0, sizeof e);
    quiet_hdf5();
    if (!r) {
        fail(&e, GP_IO_EREAD, "gp_h5_reader_read: no reader");
        return finish(&e, msg, msglen);
    }
    const char *file = r->in->file;
    const int64_t n = r->in->n;
    if (off < 0 || cnt < 0 || off > n || cnt > n - off)
        fail(&e, GP_IO_EREAD, "%s: %s: range [%lld, +%lld) outside the %lld elements", file,
             r->dname, (long long)off, (long long)cnt, (long long)n);
    else if (cnt > 0 && !buf)
        fail(&e, GP_IO_EREAD, "%s: %s: no buffer", file, r->dname);
    if (r->how == RD_MPIIO) {
        if (!agree(r->comm, &e))
            transfer(r->comm, 0, r->did, r->nd, r->dims, native_of(r->as), r->esz, off, cnt,
                     buf, file, r->dname, &e);
        return finish(&e, msg, msglen);
    }
    if (e.rc || cnt == 0) return finish(&e, msg, msglen);
    const int fault = g_faults.pread;
    int64_t at;
    if (r->how == RD_PREAD) {
        if (full_io(0, r->fd, buf, (size_t)cnt * r->esz, r->raw + off * (int64_t)r->esz, fault, &at) != 0)
            raw_failed(r, at, &e);
    } else if (r->how == RD_CONVERT) {
        read_convert(r, off, cnt, buf, fault, &e);
    } else if (fault) {
        fail(&e, GP_IO_EREAD, "%s: %s: read failed: %s", file, r->dname, strerror(EIO));
    } else {
        read_hdf5(r, off, cnt, buf, &e);
    }
    return finish(&e, msg, msglen);
}

int gp_h5_read(MPI_Comm comm, const gp_h5_input *in, const char *dataset, gp_dtype as,
               int64_t off, int64_t cnt, void *buf, char *msg, size_t msglen)
{
    gp_h5_reader *r = NULL;
    int rc = gp_h5_reader_open(comm, in, dataset, as, &r, msg, msglen);
    if (rc) return rc;
    if (r->how == RD_MPIIO) {
        rc = gp_h5_reader_read(r, off, cnt, buf, msg, msglen); /* agreed */
    } else {
        gp_err e;
        memset(&e, 0, sizeof e);
        e.rc = gp_h5_reader_read(r, off, cnt, buf, e.text, sizeof e.text);
        agree(comm, &e);
        rc = finish(&e, msg, msglen);
    }
    gp_h5_reader_close(r);
    return rc;
}

void gp_h5_mpi_io_env(void) { setenv("OMPI_MCA_sharedfp", "^lockedfile", 0); }

void gp_h5_malloc_tune(void)
{
#ifdef __GLIBC__
    /* failure leaves glibc's defaults, which work, only slower */
    if (mallopt(M_MMAP_THRESHOLD, 32 << 20) != 1 || mallopt(M_TRIM_THRESHOLD, 1 << 30) != 1)
        return;
#endif
}

/* The checks of an output path before anything is written; dir (GP_H5_PATHLEN bytes)
 * receives its folder. */
static void check_target(const char *path, int force, char *dir, gp_err *e)
{
    struct stat st;
    if (!path || !path[0] || strlen(path) >= GP_H5_PATHLEN) {
        fail(e, GP_IO_EWRITE, "%.64s...: bad output file name (empty, or %d bytes or more)",
             path ? path : "", GP_H5_PATHLEN);
        return;
    }
    gp_path_folder(path, dir, GP_H5_PATHLEN, NULL); /* fits: path is shorter */
    const int exists = lstat(path, &st) == 0;
    /* what --force would not replace first, so that it is not suggested in vain */
    if (exists && S_ISDIR(st.st_mode))
        fail(e, GP_IO_EWRITE, "%s: cannot write: is a directory", path);
    else if (exists && S_ISLNK(st.st_mode)) /* rename would replace the link itself */
        fail(e, GP_IO_EWRITE, "%s: is a symbolic link, not replaced (give its target)", path);
    else if (exists && !S_ISREG(st.st_mode)) /* a device, FIFO or socket */
        fail(e, GP_IO_EWRITE, "%s: is not a regular file, not replaced", path);
    else if (exists && !force)
        fail(e, GP_IO_EWRITE, "%s: exists (use --force to overwrite)", path);
    else if (access(dir, W_OK | X_OK) != 0)
        fail(e, GP_IO_EWRITE, "%s: cannot write: %s (%s)", path, strerror(errno), dir);
}

int gp_h5_check_target(const char *path, int force, char *msg, size_t msglen)
{
    gp_err e;
    char dir[GP_H5_PATHLEN];
    memset(&e, 0, sizeof e);
    check_target(path, force, dir, &e);
    return finish(&e, msg, msglen);
}

/* ---- write ----------------------------------------------------------------------------- */

/* Rank 0 reserves the blocks of the file as HDF5 has laid it out so far (every dataset
 * allocated) plus 64 KiB for the metadata written at close, without changing its size
 * (FALLOC_FL_KEEP_SIZE). Where the file system cannot reserve (EOPNOTSUPP), nothing is
 * done. The file size is asked of HDF5 on every rank that has the file open (mpiio: all;
 * posix: rank 0, which alone creates it). */
static void reserve_blocks(hid_t fid, const char *tmp, const char *path, int rank, gp_err *e)
{
    hsize_t size = 0;
    if (H5Fget_filesize(fid, &size) < 0) {
        fail(e, GP_IO_EWRITE, "%s: cannot size %s (%s)", path, tmp, h5_reason().desc);
        return;
    }
    if (rank != 0) return;
    const off_t want = (off_t)size + ((off_t)1 << 16);
    int fd = open(tmp, O_WRONLY);
    if (fd < 0) {
        fail(e, GP_IO_EWRITE, "%s: cannot open %s (%s)", path, tmp, strerror(errno));
        return;
    }
    if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, want) != 0 && errno != EOPNOTSUPP &&
        errno != ENOSYS)
        fail(e, GP_IO_EWRITE, "%s: cannot reserve %lld bytes for it (%s)", path,
             (long long)want, strerror(errno));
    close(fd);
}

/* While a temporary output file exists, every rank of the job guards it: SIGINT, SIGTERM,
 * SIGHUP (mpirun passes them on to some or all ranks; Slurm's scancel and time limit send
 * SIGTERM), SIGABRT, and SIGPIPE where it would kill the process (a rank left writing to the
 * closed pipe of an mpirun that died) remove it before the process dies of the signal as it
 * would have, and an exit() on the way out (a lost mpirun daemon) removes it too. The rank
 * whose unlink succeeds says so on stderr. */
static char g_tmp_path[GP_H5_PATHLEN + 32];
static volatile sig_atomic_t g_tmp_armed;
static const int g_tmp_signals[5] = {SIGINT, SIGTERM, SIGHUP, SIGABRT, SIGPIPE};
static struct sigaction g_tmp_old[5];
static int g_tmp_set[5]; /* whether tmp_guard replaced the action of g_tmp_signals[i] */

static void tmp_unlink_now(void)
{
    static const char said[] = "gpuprim_mpi: error: stopped during the write; the temporary "
                               "output file was removed\n";
    if (g_tmp_armed && unlink(g_tmp_path) == 0) {
        ssize_t w = write(STDERR_FILENO, said, sizeof said - 1);
        (void)w; /* nothing more to do in a dying process */
    }
    g_tmp_armed = 0;
}

static void tmp_signal(int sig)
{
    tmp_unlink_now();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void tmp_atexit(void) { tmp_unlink_now(); }

static void tmp_guard(const char *tmp, int on)
{
    static int atexit_done;
    if (on) {
        snprintf(g_tmp_path, sizeof g_tmp_path, "%s", tmp);
        if (!atexit_done) atexit_done = atexit(tmp_atexit) == 0;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = tmp_signal;
        sigemptyset(&sa.sa_mask);
        g_tmp_armed = 1;
        for (int i = 0; i < 5; i++) {
            struct sigaction cur;
            g_tmp_set[i] = 0;
            /* SIGPIPE only where it kills (MPI libraries may ignore or handle it) */
            if (g_tmp_signals[i] == SIGPIPE &&
                (sigaction(SIGPIPE, NULL, &cur) != 0 || cur.sa_handler != SIG_DFL ||
                 (cur.sa_flags & SA_SIGINFO)))
                continue;
            g_tmp_set[i] = sigaction(g_tmp_signals[i], &sa, &g_tmp_old[i]) == 0;
        }
    } else {
        g_tmp_armed = 0;
        for (int i = 0; i < 5; i++)
            if (g_tmp_set[i]) sigaction(g_tmp_signals[i], &g_tmp_old[i], NULL);
        memset(g_tmp_set, 0, sizeof g_tmp_set);
    }
}

int gp_h5_write(MPI_Comm comm, const char *path, const char *dset, hid_t file_type,
                gp_dtype mem, int64_t n_total, int64_t off, int64_t cnt, const void *buf,
                int force, char *msg, size_t msglen)
{
    gp_h5_outds d = {dset, file_type, mem, buf};
    return gp_h5_write_many(comm, path, &d, 1, n_total, off, cnt, force, msg, msglen);
}

/* The file gp_h5_write_many_staged finished and left under its temporary name (rank 0;
 * the name is g_tmp_path, still guarded against signals): its target, and whether there
 * is one. */
static char g_staged_path[GP_H5_PATHLEN];
static int g_staged;

/* One dataset of a writer. */
typedef struct wds {
    char name[GP_H5_PATHLEN];
    hid_t ftype;  /* the stored type (a copy) */
    gp_dtype mem; /* the element type in memory */
    size_t msz, fsz;
    int same;     /* stored as the memory type: no conversion */
    int64_t raw;  /* posix: the byte offset of element 0 in the file */
    hid_t did;    /* mpiio: the open dataset */
} wds;

struct gp_h5_writer {
    MPI_Comm comm;
    int rank, stage, created;
    gp_io_mode io;
    char path[GP_H5_PATHLEN];
    char tmp[GP_H5_PATHLEN + 32];
    int nds;
    wds *ds;
    int64_t n_total, off, cnt;
    hid_t fid;           /* mpiio: every rank; posix: rank 0 while it creates the file */
    int fd;              /* posix: the file opened for pwrite */
    hid_t dxpl;          /* posix conversions: range_cb reports into out_of_range */
    int out_of_range;
    unsigned char *cbuf; /* posix conversions: one piece */
    gp_err e;            /* this rank's first write error */
};

/* The checks of a write request before anything is created (local). */
static void check_request(const char *path, const gp_h5_outds *ds, int nds, int64_t n_total,
                          int64_t off, int64_t cnt, int need_buf, int stage, gp_err *e)
{
    const char *P = path ? path : "(no path)";
    if (!path || !path[0] || strlen(path) >= GP_H5_PATHLEN)
        fail(e, GP_IO_EWRITE, "%.64s: bad output file name", P);
    else if (!ds || nds < 1)
        fail(e, GP_IO_EWRITE, "%s: no dataset to write", P);
    else if (n_total < 0 || off < 0 || cnt < 0 || off > n_total || cnt > n_total - off)
        fail(e, GP_IO_EWRITE, "%s: part [%lld, +%lld) outside the %lld elements", P,
             (long long)off, (long long)cnt, (long long)n_total);
    for (int k = 0; !e->rc && k < nds; k++) {
        const char *dset = ds[k].dset, *D = dset ? dset : "(no dataset)";
        if (!dset || !dset[0] || strlen(dset) >= GP_H5_PATHLEN)
            fail(e, GP_IO_EWRITE, "%s: bad dataset name", P);
        else if (gp_dtype_size(ds[k].mem) == 0)
            fail(e, GP_IO_EWRITE, "%s: %s: invalid element type %d", P, D, (int)ds[k].mem);
        else if (need_buf && cnt > 0 && !ds[k].buf)
            fail(e, GP_IO_EWRITE, "%s: %s: no buffer", P, D);
        if (!e->rc && ds[k].file_type != H5I_INVALID_HID) {
            hid_t ft = ds[k].file_type;
            H5T_class_t cls = H5Iget_type(ft) == H5I_DATATYPE ? H5Tget_class(ft) : H5T_NO_CLASS;
            if (cls != H5T_INTEGER && cls != H5T_FLOAT)
                fail(e, GP_IO_EWRITE,
                     "%s: %s: the stored type must be an integer or float type", P, D);
        }
    }
    if (!e->rc && stage && g_staged)
        fail(e, GP_IO_EWRITE, "%s: another file is staged already (%s)", P, g_staged_path);
}

static void writer_free(gp_h5_writer *w)
{
    if (!w) return;
    for (int k = 0; w->ds && k < w->nds; k++)
        if (w->ds[k].ftype >= 0 && H5Tclose(w->ds[k].ftype) < 0) { /* nothing more to do */ }
    if (w->dxpl >= 0 && H5Pclose(w->dxpl) < 0) { /* nothing more to do */ }
    free(w->cbuf);
    free(w->ds);
    free(w);
}

/* A writer for a checked request, nothing created yet (local). NULL with e set. */
static gp_h5_writer *writer_new(MPI_Comm comm, int rank, int stage, const char *path,
                                const gp_h5_outds *ds, int nds, int64_t n_total, int64_t off,
                                int64_t cnt, gp_err *e)
{
    gp_h5_writer *w = calloc(1, sizeof *w);
    wds *d = calloc((size_t)nds, sizeof *d);
    if (!w || !d) {
        fail(e, GP_IO_EWRITE, "%s: out of memory", path);
        free(w);
        free(d);
        return NULL;
    }
    *w = (gp_h5_writer){comm, rank, stage, 0, GP_IO_MPIIO, "", "", nds, d, n_total, off, cnt,
                        H5I_INVALID_HID, -1, H5I_INVALID_HID, 0, NULL, {0, ""}};
    snprintf(w->path, sizeof w->path, "%s", path);
    for (int k = 0; k < nds; k++) {
        snprintf(d[k].name, sizeof d[k].name, "%s", ds[k].dset);
        d[k].mem = ds[k].mem;
        d[k].msz = gp_dtype_size(ds[k].mem);
        d[k].did = H5I_INVALID_HID;
        d[k].ftype = H5Tcopy(ds[k].file_type != H5I_INVALID_HID ? ds[k].file_type : native_of(ds[k].mem));
        d[k].fsz = d[k].ftype >= 0 ? H5Tget_size(d[k].ftype) : 0;
        const htri_t same = d[k].ftype >= 0 ? H5Tequal(d[k].ftype, native_of(ds[k].mem)) : -1;
        d[k].same = same > 0;
        if (d[k].fsz == 0 || same < 0)
            fail(e, GP_IO_EWRITE, "%s: %s: cannot copy the stored type (%s)", path, d[k].name,
                 h5_reason().desc);
    }
    if (e->rc) {
        writer_free(w);
        return NULL;
    }
    return w;
}

/* Rank 0: checks the target, picks the temporary name beside it and the driver for its
 * folder (gp_io_choose). */
static void pick_tmp(gp_h5_writer *w, int force, gp_io_mode io, int *mode, gp_err *e)
{
    struct stat st;
    char dir[GP_H5_PATHLEN];
    gp_io_env env;
    check_target(w->path, force, dir, e);
    /* a short hidden temporary name beside the target: a target name near NAME_MAX leaves
     * no room for a suffix, and a rename within the folder is atomic */
    if (!e->rc && snprintf(w->tmp, sizeof w->tmp, "%s/.gpuprim.%ld.tmp", dir, (long)getpid()) >=
                      (int)sizeof w->tmp)
        fail(e, GP_IO_EWRITE, "%s: file name too long", w->path);
    else if (!e->rc && lstat(w->tmp, &st) == 0)
        fail(e, GP_IO_EWRITE, "%s: temporary file %s exists already", w->path, w->tmp);
    if (!e->rc) {
        gp_io_env_of(dir, &env);
        *mode = (int)gp_io_choose(io, &env);
    }
}

/* Creates the temporary file (mpiio: every rank, collectively; posix: rank 0 alone) and,
 * once every rank knows that it exists, guards it on every rank. */
static void create_file(gp_h5_writer *w, gp_err *e)
{
    if (w->io == GP_IO_MPIIO || w->rank == 0) {
        hid_t fapl = access_list(w->comm, w->io);
        if (fapl < 0) {
            fail(e, GP_IO_EWRITE, "%s: cannot set up the %s file access (%s)", w->path,
                 w->io == GP_IO_MPIIO ? "MPI-IO" : "POSIX", h5_reason().desc);
        } else {
            w->fid = H5Fcreate(w->tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
            if (w->fid < 0)
                fail(e, GP_IO_EWRITE, "%s: cannot create %s (%s)", w->path, w->tmp,
                     h5_reason().desc);
        }
        if (fapl >= 0 && H5Pclose(fapl) < 0) fail(e, GP_IO_EWRITE, "%s: H5Pclose failed", w->path);
    }
    if (w->rank == 0) {
        struct stat st;
        w->created = lstat(w->tmp, &st) == 0; /* ours: it did not exist before */
        if (w->created) tmp_guard(w->tmp, 1);
    }
    if (agree(w->comm, e)) return;
    /* the exclusive create succeeded: the other ranks guard it too */
    if (w->rank != 0) tmp_guard(w->tmp, 1);
    /* test hook (gp_h5_faults.tmpfile): this rank dies of SIGTERM while the temporary file
     * exists */
    if (g_faults.tmpfile) raise(SIGTERM);
}

/* Every dataset first (allocated at creation: contiguous, early, no fill, no timestamps for
 * reproducible bytes), then the file's blocks reserved, so that a full disk or quota fails
 * here on every rank, before any data moves. (Open MPI's collective writes were seen to
 * lose ENOSPC at 3 or more ranks and leave a file of zeros that HDF5 closed without an
 * error.) posix: rank 0 alone, and it notes each dataset's raw offset. */
static void create_datasets(gp_h5_writer *w, gp_err *e)
{
    const int creator = w->io == GP_IO_MPIIO || w->rank == 0;
    hsize_t dim = (hsize_t)w->n_total;
    hid_t lcpl = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, space = H5I_INVALID_HID;
    if (creator) {
        lcpl = H5Pcreate(H5P_LINK_CREATE);
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        space = H5Screate_simple(1, &dim, NULL);
        if (lcpl < 0 || dcpl < 0 || space < 0 || H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
            H5Pset_layout(dcpl, H5D_CONTIGUOUS) < 0 ||
            H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
            H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) < 0 || H5Pset_obj_track_times(dcpl, 0) < 0)
            fail(e, GP_IO_EWRITE, "%s: cannot set up the datasets (%s)", w->path, h5_reason().desc);
    }
    for (int k = 0; k < w->nds && !agree(w->comm, e); k++) {
        wds *d = &w->ds[k];
        if (!creator) continue;
        hid_t did = H5Dcreate2(w->fid, d->name, d->ftype, space, lcpl, dcpl, H5P_DEFAULT);
        if (did < 0) {
            fail(e, GP_IO_EWRITE, "%s: %s: cannot create the dataset (%s)", w->path, d->name,
                 h5_reason().desc);
            continue;
        }
        const haddr_t a = w->io == GP_IO_POSIX ? H5Dget_offset(did) : HADDR_UNDEF;
        if (w->io == GP_IO_POSIX && (a != HADDR_UNDEF ? a > (haddr_t)INT64_MAX : w->n_total > 0))
            fail(e, GP_IO_EWRITE, "%s: %s: cannot locate the new dataset's data", w->path, d->name);
        d->raw = a != HADDR_UNDEF ? (int64_t)a : 0;
        if (H5Dclose(did) < 0) fail(e, GP_IO_EWRITE, "%s: %s: H5Dclose failed", w->path, d->name);
    }
    if (!e->rc && creator) reserve_blocks(w->fid, w->tmp, w->path, w->rank, e);
    if (space >= 0 && H5Sclose(space) < 0) fail(e, GP_IO_EWRITE, "%s: H5Sclose failed", w->path);
    if (dcpl >= 0 && H5Pclose(dcpl) < 0) fail(e, GP_IO_EWRITE, "%s: H5Pclose failed", w->path);
    if (lcpl >= 0 && H5Pclose(lcpl) < 0) fail(e, GP_IO_EWRITE, "%s: H5Pclose failed", w->path);
    agree(w->comm, e);
}

/* mpiio: every rank opens the datasets for the collective writes. */
static void open_datasets(gp_h5_writer *w, gp_err *e)
{
    for (int k = 0; k < w->nds && !e->rc; k++) {
        w->ds[k].did = H5Dopen2(w->fid, w->ds[k].name, H5P_DEFAULT);
        if (w->ds[k].did < 0)
            fail(e, GP_IO_EWRITE, "%s: %s: cannot open the new dataset (%s)", w->path,
                 w->ds[k].name, h5_reason().desc);
        agree(w->comm, e);
    }
}

/* posix: rank 0 closes the new file (its metadata complete, the data's blocks allocated and
 * reserved), every rank learns the raw offsets and opens the file for pwrite. */
static void open_for_pwrite(gp_h5_writer *w, gp_err *e)
{
    int64_t *raw = malloc(sizeof *raw * (size_t)w->nds);
    if (w->fid >= 0 && H5Fclose(w->fid) < 0)
        fail(e, GP_IO_EWRITE, "%s: cannot finish %s (%s)", w->path, w->tmp, h5_reason().desc);
    w->fid = H5I_INVALID_HID;
    if (!raw) fail(e, GP_IO_EWRITE, "%s: out of memory", w->path);
    for (int k = 0; raw && k < w->nds; k++) raw[k] = w->ds[k].raw;
    if (agree(w->comm, e)) goto out;
    if (MPI_Bcast(raw, w->nds, MPI_INT64_T, 0, w->comm) != MPI_SUCCESS)
        fail(e, GP_IO_EWRITE, "%s: MPI_Bcast failed", w->path);
    size_t cbytes = 0; /* a converted piece of the widest dataset that needs one */
    for (int k = 0; k < w->nds; k++) {
        const size_t wide = w->ds[k].msz > w->ds[k].fsz ? w->ds[k].msz : w->ds[k].fsz;
        w->ds[k].raw = raw[k];
        if (!w->ds[k].same && (size_t)conv_elems(wide) * wide > cbytes)
            cbytes = (size_t)conv_elems(wide) * wide;
    }
    w->fd = open(w->tmp, O_WRONLY | O_CLOEXEC);
    if (w->fd < 0)
        fail(e, GP_IO_EWRITE, "%s: cannot open %s for writing (%s)", w->path, w->tmp,
             strerror(errno));
    if (cbytes) {
        w->dxpl = H5Pcreate(H5P_DATASET_XFER);
        w->cbuf = malloc(cbytes);
        if (w->dxpl < 0 || H5Pset_type_conv_cb(w->dxpl, range_cb, &w->out_of_range) < 0 || !w->cbuf)
            fail(e, GP_IO_EWRITE, "%s: cannot set up the conversion (%s)", w->path,
                 w->cbuf ? h5_reason().desc : "out of memory");
    }
out:
    free(raw);
    agree(w->comm, e);
}

/* Ends a writer: closes the file, agrees on e; rank 0 renames it (or stages it, keeping its
 * signal guard for gp_h5_publish), or removes it on an error or with `cancel`; frees w.
 * Collective. */
static int writer_end(gp_h5_writer *w, int cancel, gp_err *e, char *msg, size_t msglen)
{
    const char *P = w->path;
    for (int k = 0; k < w->nds; k++)
        if (w->ds[k].did >= 0 && H5Dclose(w->ds[k].did) < 0)
            fail(e, GP_IO_EWRITE, "%s: %s: H5Dclose failed", P, w->ds[k].name);
    if (w->fid >= 0 && H5Fclose(w->fid) < 0)
        fail(e, GP_IO_EWRITE, "%s: cannot finish %s (%s)", P, w->tmp, h5_reason().desc);
    if (w->fd >= 0 && close(w->fd) != 0)
        fail(e, GP_IO_EWRITE, "%s: cannot finish %s (%s)", P, w->tmp, strerror(errno));
    agree(w->comm, e);
    if (w->rank == 0 && w->created && !e->rc && !cancel && w->stage) {
        snprintf(g_staged_path, sizeof g_staged_path, "%s", P);
        g_staged = 1;
    } else if (w->rank == 0 && w->created) {
        if (!e->rc && !cancel && rename(w->tmp, P) != 0)
            fail(e, GP_IO_EWRITE, "%s: cannot rename %s to it (%s)", P, w->tmp, strerror(errno));
        if (e->rc || cancel) gp_remove_tmp(w->tmp, e->rc ? e->text : NULL, sizeof e->text);
        tmp_guard(w->tmp, 0);
    }
    agree(w->comm, e);
    /* the other ranks' part ends here: rank 0 renames or removes the file */
    if (w->rank != 0 && g_tmp_armed) tmp_guard(w->tmp, 0);
    writer_free(w);
    return cancel ? 0 : finish(e, msg, msglen);
}

static int writer_open(MPI_Comm comm, gp_io_mode io, int stage, const char *path,
                       const gp_h5_outds *ds, int nds, int64_t n_total, int64_t off,
                       int64_t cnt, int force, int need_buf, gp_h5_writer **out, char *msg,
                       size_t msglen)
{
    gp_err e;
    gp_h5_writer *w = NULL;
    int rank = 0, mode = GP_IO_MPIIO;
    memset(&e, 0, sizeof e);
    quiet_hdf5();
    *out = NULL;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        fail(&e, GP_IO_EWRITE, "%s: MPI_Comm_rank failed", path ? path : "(no path)");
    check_request(path, ds, nds, n_total, off, cnt, need_buf, stage, &e);
    if (!e.rc) w = writer_new(comm, rank, stage, path, ds, nds, n_total, off, cnt, &e);
    if (agree(comm, &e)) goto early;
    check_tiling(comm, w->path, n_total, off, cnt, &e);
    if (agree(comm, &e)) goto early;
    if (rank == 0) pick_tmp(w, force, io, &mode, &e);
    if (agree(comm, &e)) goto early;
    if (MPI_Bcast(w->tmp, (int)sizeof w->tmp, MPI_CHAR, 0, comm) != MPI_SUCCESS ||
        MPI_Bcast(&mode, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
        fail(&e, GP_IO_EWRITE, "%s: MPI_Bcast failed", path);
    if (agree(comm, &e)) goto early;
    w->io = (gp_io_mode)mode;

    create_file(w, &e);
    if (!e.rc) create_datasets(w, &e);
    if (!e.rc && w->io == GP_IO_MPIIO) open_datasets(w, &e);
    else if (!e.rc) open_for_pwrite(w, &e);
    if (e.rc) return writer_end(w, 0, &e, msg, msglen);
    *out = w;
    return 0;
early:
    writer_free(w);
    return finish(&e, msg, msglen);
}

int gp_h5_writer_open(MPI_Comm comm, gp_io_mode io, int stage, const char *path,
                      const gp_h5_outds *ds, int nds, int64_t n_total, int64_t off, int64_t cnt,
                      int force, gp_h5_writer **w, char *msg, size_t msglen)
{
    gp_h5_writer *tmp = NULL;
    const int rc = writer_open(comm, io, stage, path, ds, nds, n_total, off, cnt, force, 0, &tmp,
                               msg, msglen);
    if (w) *w = tmp;
    else if (tmp) return writer_end(tmp, 1, &tmp->e, msg, msglen); /* nowhere to keep it */
    return rc;
}

/* posix: dataset k's elements [off, off+cnt) from buf: pwrite at its raw offset, in
 * converted pieces where it is stored as another type. */
static void write_posix(gp_h5_writer *w, int k, int64_t off, int64_t cnt, const void *buf,
                        gp_err *e)
{
    const wds *d = &w->ds[k];
    const int fault = g_faults.pwrite;
    const size_t wide = d->msz > d->fsz ? d->msz : d->fsz;
    const int64_t per = d->same ? cnt : conv_elems(wide);
    int64_t at = 0;
    for (int64_t done = 0; done < cnt && !e->rc; done += per) {
        const int64_t c = cnt - done < per ? cnt - done : per;
        const char *src = (const char *)buf + (size_t)done * d->msz;
        void *out = (void *)src;
        if (!d->same) {
            memcpy(w->cbuf, src, (size_t)c * d->msz);
            w->out_of_range = 0;
            out = w->cbuf;
            if (H5Tconvert(native_of(d->mem), d->ftype, (size_t)c, w->cbuf, NULL, w->dxpl) < 0) {
                if (w->out_of_range)
                    fail(e, GP_IO_EWRITE, "%s: %s: write failed: a value is outside the range "
                         "of the stored type", w->path, d->name);
                else
                    fail(e, GP_IO_EWRITE, "%s: %s: write failed: %s", w->path, d->name,
                         h5_reason().desc);
                break;
            }
        }
        if (full_io(1, w->fd, out, (size_t)c * d->fsz, d->raw + (off + done) * (int64_t)d->fsz,
                    fault, &at) != 0)
            fail(e, GP_IO_EWRITE, "%s: %s: write failed: %s (at byte %lld of %s)", w->path,
                 d->name, strerror(errno), (long long)at, w->tmp);
    }
}

int gp_h5_writer_write(gp_h5_writer *w, int k, int64_t off, int64_t cnt, const void *buf,
                       char *msg, size_t msglen)
{
    gp_err e;
    memset(&e, 0, sizeof e);
    quiet_hdf5();
    if (!w) {
        fail(&e, GP_IO_EWRITE, "gp_h5_writer_write: no writer");
        return finish(&e, msg, msglen);
    }
    const char *D = k >= 0 && k < w->nds ? w->ds[k].name : "(no dataset)";
    if (k < 0 || k >= w->nds)
        fail(&e, GP_IO_EWRITE, "%s: no dataset %d to write", w->path, k);
    else if (cnt < 0 || off < w->off || off > w->off + w->cnt || cnt > w->off + w->cnt - off)
        fail(&e, GP_IO_EWRITE, "%s: %s: elements [%lld, +%lld) outside this rank's part [%lld, +%lld)",
             w->path, D, (long long)off, (long long)cnt, (long long)w->off, (long long)w->cnt);
    else if (cnt > 0 && !buf)
        fail(&e, GP_IO_EWRITE, "%s: %s: no buffer", w->path, D);
    if (w->io == GP_IO_MPIIO) {
        hsize_t dim = (hsize_t)w->n_total;
        if (!agree(w->comm, &e))
            transfer(w->comm, 1, w->ds[k].did, 1, &dim, native_of(w->ds[k].mem), w->ds[k].msz,
                     off, cnt, (void *)buf, w->path, D, &e);
    } else if (w->e.rc) {
        return finish(&w->e, msg, msglen);
    } else if (!e.rc && cnt > 0) {
        write_posix(w, k, off, cnt, buf, &e);
    }
    if (e.rc && !w->e.rc) w->e = e;
    return finish(&e, msg, msglen);
}

gp_io_mode gp_h5_writer_io(const gp_h5_writer *w) { return w ? w->io : GP_IO_AUTO; }

int gp_h5_writer_close(gp_h5_writer *w, int cancel, char *msg, size_t msglen)
{
    if (!w) {
        if (msg && msglen) msg[0] = '\0';
        return 0;
    }
    quiet_hdf5();
    gp_err e = w->e;
    return writer_end(w, cancel, &e, msg, msglen);
}

int gp_h5_write_many_io(MPI_Comm comm, gp_io_mode io, int stage, const char *path,
                        const gp_h5_outds *ds, int nds, int64_t n_total, int64_t off,
                        int64_t cnt, int force, char *msg, size_t msglen)
{
    gp_h5_writer *w = NULL;
    int rc = writer_open(comm, io, stage, path, ds, nds, n_total, off, cnt, force, 1, &w, msg,
                         msglen);
    for (int k = 0; !rc && k < nds; k++)
        rc = gp_h5_writer_write(w, k, off, cnt, ds[k].buf, msg, msglen);
    return w ? gp_h5_writer_close(w, 0, msg, msglen) : rc;
}

int gp_h5_write_many(MPI_Comm comm, const char *path, const gp_h5_outds *ds, int nds,
                     int64_t n_total, int64_t off, int64_t cnt, int force, char *msg,
                     size_t msglen)
{
    return gp_h5_write_many_io(comm, GP_IO_MPIIO, 0, path, ds, nds, n_total, off, cnt, force,
                               msg, msglen);
}

int gp_h5_write_many_staged(MPI_Comm comm, const char *path, const gp_h5_outds *ds, int nds,
                            int64_t n_total, int64_t off, int64_t cnt, int force, char *msg,
                            size_t msglen)
{
    return gp_h5_write_many_io(comm, GP_IO_MPIIO, 1, path, ds, nds, n_total, off, cnt, force,
                               msg, msglen);
}

int gp_h5_publish(char *msg, size_t msglen)
{
    gp_err e;
    memset(&e, 0, sizeof e);
    if (!g_staged) return finish(&e, msg, msglen);
    if (rename(g_tmp_path, g_staged_path) != 0) {
        fail(&e, GP_IO_EWRITE, "%s: cannot rename %s to it (%s)", g_staged_path, g_tmp_path,
             strerror(errno));
        gp_remove_tmp(g_tmp_path, e.text, sizeof e.text);
    }
    g_staged = 0;
    tmp_guard(g_tmp_path, 0);
    return finish(&e, msg, msglen);
}

void gp_h5_discard(char *msg, size_t msglen)
{
    if (!g_staged) return;
    gp_remove_tmp(g_tmp_path, msg, msglen);
    g_staged = 0;
    tmp_guard(g_tmp_path, 0);
}

/* h5_types.c — the element types of io/ (gpuprim/h5io.h): the native HDF5 type of each gp_dtype,
 * the element type a stored integer or float type is read as and its description ("int16
 * big-endian", "bfloat16 little-endian"), the words that tell a non-numeric type apart in an
 * error message, and the range check of a converting write. */
#define _POSIX_C_SOURCE 200809L
#include "h5io_internal.h"

hid_t gp_h5io_native(gp_dtype t)
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

int gp_h5io_map_type(hid_t type, gp_dtype *dt, char *desc, size_t desclen, char *why,
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
                         (p == 32 && esz == 8 && msz == 23) ||
                         (p == 64 && esz == 11 && msz == 52) ||
                         (p == 128 && esz == 15 && msz == 112) ||
                         (p == 80 && esz == 15 && msz == 64);
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

H5T_conv_ret_t gp_h5io_range_cb(H5T_conv_except_t ex, hid_t src, hid_t dst, void *s, void *d,
                                void *op)
{
    (void)src, (void)dst, (void)s, (void)d;
    if (ex == H5T_CONV_EXCEPT_RANGE_HI || ex == H5T_CONV_EXCEPT_RANGE_LOW) {
        *(int *)op = 1;
        return H5T_CONV_ABORT;
    }
    return H5T_CONV_UNHANDLED;
}

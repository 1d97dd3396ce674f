/* cpu_keys.c — the CPU backend's one order-key map (gp_cpu_keys: elements to keys and back,
 * ascending or descending keys, gpuprim/kernels.h) with its four twins as wrappers
 * (to_keys / from_keys and their descending forms), and the descending key of one element
 * (gp_key_desc). Internal to kernels/.
 */
#include "cpu_common.h"
#include "cpu_sort.h"
#include "cpu_twins.h"
#include "keys.h"

/* ---- order keys ------------------------------------------------------------------------------ */

/* The float maps and the descending flip at width w (gpuprim/kernels.h, keys.h). */
CPU_INLINE uint64_t fkey(uint64_t u, int w)
{
    return w == 4 ? gp_key_f32_bits((uint32_t)u) : gp_key_f64_bits(u);
}
CPU_INLINE uint64_t funkey(uint64_t k, int w)
{
    return w == 4 ? gp_unkey_f32_bits((uint32_t)k) : gp_unkey_f64_bits(k);
}
CPU_INLINE uint64_t dkey(uint64_t k, int w, int isf)
{
    return w == 4 ? gp_desc_key32((uint32_t)k, isf) : gp_desc_key64(k, isf);
}

/* The order key of one element bit pattern u of w bytes (or with inv, the element of key
 * u): isf: a float type, sgn: a signed integer type, desc: descending keys. */
CPU_INLINE uint64_t key_map(uint64_t u, int w, int isf, int sgn, int desc, int inv)
{
    const uint64_t sb = (uint64_t)1 << (8 * w - 1);
    if (!inv) {
        const uint64_t k = isf ? fkey(u, w) : sgn ? u ^ sb : u;
        return desc ? dkey(k, w, isf) : k;
    }
    const uint64_t k = desc ? dkey(u, w, isf) : u;
    return isf ? funkey(k, w) : sgn ? k ^ sb : k;
}

/* The map over n elements with the flags as constants of each instance. */
#define KEY_LOOP(buf, n, W, ISF, SGN, DESC, INV)                                             \
    do {                                                                                     \
        unsigned char *k_ = (unsigned char *)(buf);                                          \
        for (int64_t i_ = 0; i_ < (n); i_++)                                                 \
            kst(k_, W, i_, key_map(kld(k_, W, i_), W, ISF, SGN, DESC, INV));                 \
    } while (0)
#define KEY_LOOPS(buf, n, W, ISF, SGN, desc, inv)                                            \
    do {                                                                                     \
        if (!(desc) && !(inv)) KEY_LOOP(buf, n, W, ISF, SGN, 0, 0);                          \
        else if (!(desc)) KEY_LOOP(buf, n, W, ISF, SGN, 0, 1);                               \
        else if (!(inv)) KEY_LOOP(buf, n, W, ISF, SGN, 1, 0);                                \
        else KEY_LOOP(buf, n, W, ISF, SGN, 1, 1);                                            \
    } while (0)

int gp_cpu_keys_as(const char *who, gp_dtype t, int descending, int inverse, void *buf,
                   int64_t n)
{
    if (gp_dtype_size(t) == 0) return WHO_FAIL(GP_EINVAL, "invalid dtype %d", (int)t);
    if (n < 0) return WHO_FAIL(GP_EINVAL, "n = %lld < 0", (long long)n);
    if (n > 0 && !buf) return WHO_FAIL(GP_EINVAL, "buf is NULL with n = %lld", (long long)n);
    const int desc = descending != 0, inv = inverse != 0;
    switch (t) {
    case GP_F32: KEY_LOOPS(buf, n, 4, 1, 0, desc, inv); break;
    case GP_I32: KEY_LOOPS(buf, n, 4, 0, 1, desc, inv); break;
    case GP_U32: KEY_LOOPS(buf, n, 4, 0, 0, desc, inv); break;
    case GP_F64: KEY_LOOPS(buf, n, 8, 1, 0, desc, inv); break;
    case GP_I64: KEY_LOOPS(buf, n, 8, 0, 1, desc, inv); break;
    default: KEY_LOOPS(buf, n, 8, 0, 0, desc, inv); break; /* GP_U64 */
    }
    return GP_OK;
}

int gp_cpu_keys(gp_dtype t, int descending, int inverse, void *buf, int64_t n)
{
    return gp_cpu_keys_as(__func__, t, descending, inverse, buf, n);
}

/* ---- the ascending twins ----------------------------------------------------------------- */

/* Maps buf[0, n) (type t, host memory) in place to its order keys — the CPU twin of
 * gp_backend.to_keys. Afterwards buf holds n uint32_t keys for 4-byte types or n uint64_t
 * keys for 8-byte types, each equal to gp_key_of(t, &element) (see gpuprim/kernels.h: floats
 * flip to a sign-magnitude order with every NaN -> all ones, signed ints flip the sign
 * bit, unsigned ints are unchanged). Returns GP_OK, or GP_EINVAL (bad t, n < 0, NULL buf
 * with n > 0). */
int gp_cpu_to_keys(gp_dtype t, void *buf, int64_t n)
{
    return gp_cpu_keys_as(__func__, t, 0, 0, buf, n);
}

/* Maps n keys in buf (uint32_t for 4-byte t, uint64_t for 8-byte t) in place back to
 * elements of type t — the CPU twin of gp_backend.from_keys; the inverse of
 * gp_cpu_to_keys, equal to gp_key_to_elem per element: every non-NaN element comes back
 * bit for bit, the NaN key (all ones) becomes the default quiet NaN 0x7FC00000 /
 * 0x7FF8000000000000. Returns GP_OK, or GP_EINVAL (bad t, n < 0, NULL buf with n > 0). */
int gp_cpu_from_keys(gp_dtype t, void *buf, int64_t n)
{
    return gp_cpu_keys_as(__func__, t, 0, 1, buf, n);
}

/* ---- descending keys -------------------------------------------------------------------- */

/* Descending key of an ascending key: see gpuprim/exact_sum.h. */
uint64_t gp_key_desc(gp_dtype t, uint64_t key)
{
    switch (t) {
    case GP_F32: return gp_desc_key32((uint32_t)key, 1);
    case GP_I32: case GP_U32: return gp_desc_key32((uint32_t)key, 0);
    case GP_F64: return gp_desc_key64(key, 1);
    case GP_I64: case GP_U64: return gp_desc_key64(key, 0);
    default: return key;
    }
}

/* The inverse of gp_key_desc (the same involution). */
uint64_t gp_key_undesc(gp_dtype t, uint64_t key) { return gp_key_desc(t, key); }

/* Maps buf[0, n) (type t, host memory) in place to descending keys — the CPU twin of
 * gp_backend.to_keys_desc: gp_key_desc(t, gp_key_of(t, element)) per element, stored as
 * uint32 (4-byte t) or uint64 (8-byte t). Returns GP_OK or GP_EINVAL (bad t, n < 0, NULL
 * buf with n > 0). */
int gp_cpu_to_keys_desc(gp_dtype t, void *buf, int64_t n)
{
    return gp_cpu_keys_as(__func__, t, 1, 0, buf, n);
}

/* Maps n descending keys in buf (uint32 for 4-byte t, uint64 for 8-byte t; host memory) in
 * place back to elements of type t — the CPU twin of gp_backend.from_keys_desc, the inverse
 * of gp_cpu_to_keys_desc (the NaN key becomes the default quiet NaN). Returns GP_OK or
 * GP_EINVAL (bad t, n < 0, NULL buf with n > 0). */
int gp_cpu_from_keys_desc(gp_dtype t, void *buf, int64_t n)
{
    return gp_cpu_keys_as(__func__, t, 1, 1, buf, n);
}

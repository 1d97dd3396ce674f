/* h5_lzf.c — HDF5's LZF filter (filter id 32000, h5py's compression="lzf") on the
 * distribution's liblzf, and gp_h5_register_filters, which makes it known to HDF5 before
 * gpuprim opens a file.
 *
 * The chunks as h5py writes them (h5py's lzf/lzf_filter.c, read to learn the format):
 *   - a filtered chunk is one raw LZF stream (liblzf's lzf_compress, no header of its own);
 *   - cd_values: [0] the filter's revision (4), [1] liblzf's API version (LZF_VERSION,
 *     0x0105), [2] the chunk's size in bytes before compression (stored type size x chunk
 *     dims); [2] is 0 or missing in files of early h5py versions; further slots are kept;
 *   - the filter is optional (H5Z_FLAG_OPTIONAL): a chunk that LZF does not shrink makes
 *     the encoder return 0, HDF5 then stores it as it is and sets the filter's bit in the
 *     chunk's filter mask, and a read skips the filter for that chunk.
 * Reads check more than h5py's filter does: a stream that decodes to more or fewer bytes
 * than the chunk holds (cd_values[2]) is corrupt, and without [2] a stream may decode to at
 * most what LZF can expand to (264 bytes per 3 input bytes), never an unbounded buffer.
 *
 * The decoder itself, gp_h5io_lzf_decode, calls no HDF5: the direct chunk path's decoding
 * threads share it (h5_filters.c's LZF row), so that both read paths decode and check a
 * chunk alike.
 *
 * Built without liblzf (GPUPRIM_HAVE_LZF undefined), a placeholder filter stands in: its
 * reads and dataset creation fail with the one line that says how to get LZF (and the
 * direct chunk path leaves LZF datasets to H5Dread).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <hdf5.h>
#ifdef GPUPRIM_HAVE_LZF
#include <lzf.h>
#endif

#include "h5io_internal.h"

#define LZF_ID 32000        /* registered with The HDF Group for h5py's filter */
#define LZF_REVISION 4      /* h5py's filter revision, cd_values[0] of the files it writes */
#define LZF_MAX_EXPAND 88   /* an LZF stream decodes to at most 264 bytes per 3 bytes */

/* Pushes one line onto HDF5's error stack, where the failing call's caller finds it as the
 * innermost entry (the reader's "read failed: ..." line shows it: h5_select.c, through
 * h5_error.c's gp_h5io_reason). */
static void push(const char *func, int line, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    H5Epush2(H5E_DEFAULT, __FILE__, func, (unsigned)line, H5E_ERR_CLS, H5E_PLINE, H5E_CALLBACK,
             "%s", text);
}
#define PUSH(...) push(__func__, __LINE__, __VA_ARGS__)

#ifdef GPUPRIM_HAVE_LZF

/* set_local callback of dataset creation: records h5py's cd_values (revision and LZF API
 * version where not set yet, the chunk's byte size), so that h5py reads what gpuprim
 * writes. Returns 0, or -1 with an error pushed. */
static herr_t lzf_set_local(hid_t dcpl, hid_t type, hid_t space)
{
    unsigned flags = 0, cd[8] = {0};
    size_t ncd = sizeof cd / sizeof cd[0];
    hsize_t chunk[H5S_MAX_RANK];
    (void)space;
    if (H5Pget_filter_by_id2(dcpl, LZF_ID, &flags, &ncd, cd, 0, NULL, NULL) < 0) return -1;
    if (ncd > sizeof cd / sizeof cd[0]) ncd = sizeof cd / sizeof cd[0]; /* the ones read */
    if (ncd < 3) ncd = 3;
    if (cd[0] == 0) cd[0] = LZF_REVISION;
    if (cd[1] == 0) cd[1] = LZF_VERSION;
    int nd = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk);
    size_t tsize = H5Tget_size(type);
    if (nd < 0 || tsize == 0) return -1;
    uint64_t bytes = tsize;
    for (int i = 0; i < nd; i++) {
        if (chunk[i] != 0 && bytes > UINT_MAX / chunk[i]) {
            PUSH("LZF: a chunk of more than %u bytes", UINT_MAX);
            return -1;
        }
        bytes *= chunk[i];
    }
    cd[2] = (unsigned)bytes;
    return H5Pmodify_filter(dcpl, LZF_ID, flags, ncd, cd) < 0 ? -1 : 0;
}

/* Compresses the nbytes at *buf into a new buffer of fewer bytes. Returns the compressed
 * size (then *buf and *buf_size describe the new buffer), or 0 when LZF does not shrink the
 * chunk (HDF5 stores it as it is, the filter being optional) or memory ran out. */
static size_t lzf_encode(size_t nbytes, size_t *buf_size, void **buf)
{
    if (nbytes < 2 || nbytes > UINT_MAX) return 0;
    void *out = malloc(nbytes - 1);
    if (!out) {
        PUSH("LZF: out of memory for a chunk of %zu bytes", nbytes);
        return 0;
    }
    unsigned n = lzf_compress(*buf, (unsigned)nbytes, out, (unsigned)(nbytes - 1));
    if (n == 0) {
        free(out);
        return 0;
    }
    free(*buf);
    *buf = out;
    *buf_size = nbytes - 1;
    return n;
}

int gp_h5io_lzf_decode(const void *in, size_t n, void *out, size_t cap, size_t want,
                       size_t *got, char *why, size_t whylen)
{
    if (n == 0 || n > UINT_MAX) {
        snprintf(why, whylen, "LZF chunk is corrupt: its stored size is %zu bytes", n);
        return -1;
    }
    if (want > UINT_MAX) {
        snprintf(why, whylen, "LZF: a chunk of more than %u bytes", UINT_MAX);
        return -1;
    }
    if (cap > UINT_MAX) cap = UINT_MAX;
    errno = 0;
    const unsigned d = lzf_decompress(in, (unsigned)n, out, (unsigned)cap);
    const int err = errno;
    if (d != 0 && want && d != want) {
        snprintf(why, whylen, "LZF chunk is corrupt: it decodes to %u bytes, the chunk holds %zu",
                 d, want);
        return -1;
    }
    if (d != 0) {
        *got = d;
        return 0;
    }
    if (err == E2BIG && !want) return 1;
    if (err == E2BIG)
        snprintf(why, whylen, "LZF chunk is corrupt: it decodes to more than the chunk's %zu bytes",
                 want);
    else
        snprintf(why, whylen, "LZF chunk is corrupt (liblzf: invalid compressed data)");
    return -1;
}

/* Decodes the LZF stream of nbytes at *buf into a new buffer: exactly `want` bytes when
 * the chunk's size is known (want > 0), else as many as the stream holds (the buffer grown
 * from *buf_size up to LZF's largest expansion). Returns the decoded size (then *buf and
 * *buf_size describe the new buffer), or 0 with an error pushed. */
static size_t lzf_decode(size_t want, size_t nbytes, size_t *buf_size, void **buf)
{
    char why[160];
    size_t n = 0;
    if (nbytes == 0 || nbytes > UINT_MAX) { /* refused before any output is touched */
        gp_h5io_lzf_decode(*buf, nbytes, NULL, 0, want, &n, why, sizeof why);
        PUSH("%s", why);
        return 0;
    }
    uint64_t most = want ? want : (uint64_t)nbytes * LZF_MAX_EXPAND;
    if (most > UINT_MAX) most = UINT_MAX;
    uint64_t cap = want ? want : (*buf_size > 2 * nbytes ? *buf_size : 2 * nbytes);
    if (cap > most) cap = most;
    for (;;) {
        void *out = malloc((size_t)cap);
        if (!out) {
            PUSH("LZF: out of memory for a chunk of %llu bytes", (unsigned long long)cap);
            return 0;
        }
        const int rc = gp_h5io_lzf_decode(*buf, nbytes, out, (size_t)cap, want, &n, why,
                                          sizeof why);
        if (rc == 0) {
            free(*buf);
            *buf = out;
            *buf_size = (size_t)cap;
            return n;
        }
        free(out);
        if (rc > 0 && cap < most) {
            cap = cap * 2 < most ? cap * 2 : most;
            continue;
        }
        if (rc > 0)
            snprintf(why, sizeof why, "LZF chunk is corrupt: it decodes to more than %llu bytes",
                     (unsigned long long)most);
        PUSH("%s", why);
        return 0;
    }
}

/* HDF5's filter callback, both directions (H5Z_FLAG_REVERSE: decode). */
static size_t lzf_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[],
                         size_t nbytes, size_t *buf_size, void **buf)
{
    if (!(flags & H5Z_FLAG_REVERSE)) return lzf_encode(nbytes, buf_size, buf);
    size_t want = cd_nelmts >= 3 ? cd_values[2] : 0;
    return lzf_decode(want, nbytes, buf_size, buf);
}

static const H5Z_class2_t lzf_class = {
    H5Z_CLASS_T_VERS, (H5Z_filter_t)LZF_ID, 1, 1, "lzf", NULL, lzf_set_local, lzf_filter,
};
#define LZF_BUILT_IN 1

#else /* no liblzf: a placeholder that says how to get it */

#define LZF_MISSING "LZF-compressed data (filter 32000), and this gpuprim was built without " \
    "liblzf: install liblzf-dev and rebuild, or set HDF5_PLUGIN_PATH to a folder with an " \
    "LZF plugin"

/* can_apply callback: refuses to create an LZF dataset. */
static htri_t lzf_refuse(hid_t dcpl, hid_t type, hid_t space)
{
    (void)dcpl;
    (void)type;
    (void)space;
    PUSH("%s", LZF_MISSING);
    return -1;
}

/* The filter callback: fails every chunk, with the line that says how to get LZF. */
static size_t lzf_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[],
                         size_t nbytes, size_t *buf_size, void **buf)
{
    (void)flags;
    (void)cd_nelmts;
    (void)cd_values;
    (void)nbytes;
    (void)buf_size;
    (void)buf;
    PUSH("%s", LZF_MISSING);
    return 0;
}

static const H5Z_class2_t lzf_class = {
    /* "encoder present", so that dataset creation reaches lzf_refuse and its message */
    H5Z_CLASS_T_VERS, (H5Z_filter_t)LZF_ID, 1, 0, "lzf", lzf_refuse, NULL, lzf_filter,
};
#define LZF_BUILT_IN 0

#endif /* GPUPRIM_HAVE_LZF */

static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
static int reg_result = -1;
static int reg_ours = 0; /* 1: the filter 32000 HDF5 uses is ours, built on liblzf */

/* Runs once per process: leaves a filter 32000 that HDF5 has already (registered by the
 * application, or a plugin found through HDF5_PLUGIN_PATH) in place, else registers ours.
 * HDF5's automatic error printing is off meanwhile (a plugin that fails to load is no
 * error here) and restored after. */
static void register_once(void)
{
    H5E_auto2_t func = NULL;
    void *data = NULL;
    int quiet = H5Eget_auto2(H5E_DEFAULT, &func, &data) >= 0 &&
                H5Eset_auto2(H5E_DEFAULT, NULL, NULL) >= 0;
    if (H5Zfilter_avail(LZF_ID) > 0) {
        reg_result = 0;
    } else {
        reg_result = (H5Zregister(&lzf_class) >= 0 && LZF_BUILT_IN) ? 0 : -1;
        reg_ours = reg_result == 0;
    }
    H5Eclear2(H5E_DEFAULT);
    if (quiet) H5Eset_auto2(H5E_DEFAULT, func, data);
}

int gp_h5_register_filters(void)
{
    if (pthread_once(&reg_once, register_once) != 0) return -1;
    return reg_result;
}

int gp_h5io_lzf_ours(void)
{
    return gp_h5_register_filters() == 0 && reg_ours;
}

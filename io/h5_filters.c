/* h5_filters.c — the HDF5 filters gpuprim undoes itself on a chunk's stored bytes
 * (h5io_internal.h: gp_h5io_pipe_*): a table of decoders, one row per filter (deflate through
 * libdeflate, or zlib where libdeflate is missing; shuffle; HDF5's Fletcher-32 checksum; LZF
 * through io/h5_lzf.c's decoder where liblzf is built in), the plan of a dataset's pipeline
 * from its creation property list, and the undo of a pipeline on one chunk by one thread
 * with its own scratch.
 *
 * A new filter is one more row of g_decoders (its HDF5 filter id, its name, how it changes a
 * chunk's size on the write path, and its undo function). Nothing here calls HDF5 but the
 * plan, which runs on the reader's thread. */
#define _POSIX_C_SOURCE 200809L
#include "h5io_internal.h"

#include <stdint.h>
#include <stdlib.h>

#if defined(GPUPRIM_HAVE_LIBDEFLATE)
#include <libdeflate.h>
#elif defined(GPUPRIM_HAVE_ZLIB)
#include <zlib.h>
#endif

/* One thread's decoding state: the inflater and the buffers it reuses from chunk to chunk. */
struct gp_ck_scratch {
#if defined(GPUPRIM_HAVE_LIBDEFLATE)
    struct libdeflate_decompressor *inflater;
#elif defined(GPUPRIM_HAVE_ZLIB)
    z_stream z;
    int z_ready;
#endif
    unsigned char *raw, *mid[2]; /* the stored bytes; the stages between (two, alternating) */
    size_t raw_cap, mid_cap[2];
};

/* Grows *buf to at least n bytes (its capacity in *cap). Returns 0, or -1 (out of memory:
 * *buf unchanged). */
static int reserve(unsigned char **buf, size_t *cap, size_t n)
{
    if (*cap >= n) return 0;
    unsigned char *b = realloc(*buf, n ? n : 1);
    if (!b) return -1;
    *buf = b;
    *cap = n;
    return 0;
}

/* ---- the decoders ---------------------------------------------------------------------- */

/* HDF5's Fletcher-32 of n bytes (H5_checksum_fletcher32's definition): the bytes as 16-bit
 * big-endian words (an odd last byte as the high half of one more), two running sums
 * folded to 17 bits after every 360 words, once more after the odd byte, and once at the
 * end; the result is sum2 << 16 | sum1. */
uint32_t gp_h5io_fletcher32(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint32_t s1 = 0, s2 = 0;
    size_t words = n / 2;
    while (words > 0) {
        size_t k = words < 360 ? words : 360;
        words -= k;
        for (; k > 0; k--, p += 2) {
            s1 += (uint32_t)p[0] << 8 | p[1];
            s2 += s1;
        }
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    if (n % 2) {
        s1 += (uint32_t)p[0] << 8;
        s2 += s1;
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
    return s2 << 16 | s1;
}

/* Fletcher-32: the last 4 bytes hold the checksum of the others (little-endian; HDF5 before
 * 1.6.3 wrote it with the bytes of each half swapped, which HDF5 still accepts). Checks it
 * in place; the bytes before it are the output. */
static int undo_fletcher32(const gp_ck_filter *f, gp_ck_scratch *s, const unsigned char *in,
                           size_t n, unsigned char *out, size_t want, size_t *got, char *why,
                           size_t whylen)
{
    (void)f, (void)s, (void)out, (void)want;
    if (n < 4) {
        snprintf(why, whylen, "%zu bytes, too short to hold a Fletcher-32 checksum", n);
        return -1;
    }
    const unsigned char *c = in + n - 4;
    const uint32_t stored = (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 |
                            (uint32_t)c[3] << 24;
    const uint32_t sum = gp_h5io_fletcher32(in, n - 4);
    const uint32_t swapped = (sum & 0x00ff00ffu) << 8 | (sum >> 8 & 0x00ff00ffu);
    if (stored != sum && stored != swapped) {
        snprintf(why, whylen, "Fletcher-32 checksum mismatch (stored %08x, computed %08x)",
                 (unsigned)stored, (unsigned)sum);
        return -1;
    }
    *got = n - 4;
    return 1; /* in place */
}

/* Shuffle (element size cd[0]): byte b of element i was stored at b * count + i, the
 * count = n / size whole elements first, the n % size bytes left over as they were. One
 * element or a size of 1: the bytes unchanged. */
static int undo_shuffle(const gp_ck_filter *f, gp_ck_scratch *s, const unsigned char *in,
                        size_t n, unsigned char *out, size_t want, size_t *got, char *why,
                        size_t whylen)
{
    (void)s, (void)want, (void)why, (void)whylen;
    const size_t es = f->cd[0], count = es ? n / es : 0;
    *got = n;
    if (es <= 1 || count <= 1) return 1;
    if (es == 4) {
        const unsigned char *b0 = in, *b1 = in + count, *b2 = in + 2 * count, *b3 = in + 3 * count;
        for (size_t i = 0; i < count; i++, out += 4) {
            out[0] = b0[i];
            out[1] = b1[i];
            out[2] = b2[i];
            out[3] = b3[i];
        }
    } else if (es == 8) {
        for (size_t i = 0; i < count; i++, out += 8)
            for (size_t b = 0; b < 8; b++) out[b] = in[b * count + i];
    } else {
        for (size_t b = 0; b < es; b++) {
            const unsigned char *src = in + b * count;
            for (size_t i = 0; i < count; i++) out[i * es + b] = src[i];
        }
        out += count * es;
    }
    memcpy(out, in + count * es, n - count * es);
    return 0;
}

#if defined(GPUPRIM_HAVE_LIBDEFLATE) || defined(GPUPRIM_HAVE_ZLIB)
/* Deflate (HDF5's filter 1: a zlib stream, header and Adler-32 included): exactly `want`
 * bytes out, else the stream is corrupt or truncated. */
static int undo_deflate(const gp_ck_filter *f, gp_ck_scratch *s, const unsigned char *in,
                        size_t n, unsigned char *out, size_t want, size_t *got, char *why,
                        size_t whylen)
{
    (void)f;
#if defined(GPUPRIM_HAVE_LIBDEFLATE)
    const enum libdeflate_result r =
        libdeflate_zlib_decompress(s->inflater, in, n, out, want, NULL);
    if (r == LIBDEFLATE_SUCCESS) {
        *got = want;
        return 0;
    }
    snprintf(why, whylen, "inflate failed: %s",
             r == LIBDEFLATE_SHORT_OUTPUT
                 ? "the data inflate to fewer bytes than the chunk holds"
             : r == LIBDEFLATE_INSUFFICIENT_SPACE
                 ? "the data inflate to more bytes than the chunk holds"
                 : "corrupt or truncated compressed data");
#else
    if (n > UINT32_MAX || want > UINT32_MAX) {
        snprintf(why, whylen, "inflate failed: a chunk of more than 4 GiB");
        return -1;
    }
    if (!s->z_ready) {
        memset(&s->z, 0, sizeof s->z);
        if (inflateInit(&s->z) != Z_OK) {
            snprintf(why, whylen, "inflate failed: zlib cannot start (out of memory)");
            return -1;
        }
        s->z_ready = 1;
    } else if (inflateReset(&s->z) != Z_OK) {
        snprintf(why, whylen, "inflate failed: zlib cannot restart");
        return -1;
    }
    s->z.next_in = (unsigned char *)in;
    s->z.avail_in = (uInt)n;
    s->z.next_out = out;
    s->z.avail_out = (uInt)want;
    const int rc = inflate(&s->z, Z_FINISH);
    if (rc == Z_STREAM_END && s->z.avail_out == 0) {
        *got = want;
        return 0;
    }
    snprintf(why, whylen, "inflate failed: %s",
             rc == Z_STREAM_END ? "the data inflate to fewer bytes than the chunk holds"
             : rc == Z_BUF_ERROR && s->z.avail_out == 0
                 ? "the data inflate to more bytes than the chunk holds"
                 : "corrupt or truncated compressed data");
#endif
    return -1;
}
#endif

#if defined(GPUPRIM_HAVE_LZF)
/* LZF (filter 32000, h5py's; io/h5_lzf.c decodes, where its filter is the one HDF5 has):
 * one raw LZF stream, exactly `want` bytes out. cd[2], where set, is the chunk's size as
 * h5py recorded it: one that is not `want` is refused (HDF5's filter would decode to cd[2]
 * bytes, not the chunk's). */
static int undo_lzf(const gp_ck_filter *f, gp_ck_scratch *s, const unsigned char *in, size_t n,
                    unsigned char *out, size_t want, size_t *got, char *why, size_t whylen)
{
    (void)s;
    if (f->cd[2] != 0 && f->cd[2] != want) {
        snprintf(why, whylen, "LZF chunk is corrupt: its filter records chunks of %u bytes, "
                 "the chunk holds %zu", f->cd[2], want);
        return -1;
    }
    return gp_h5io_lzf_decode(in, n, out, want, want, got, why, whylen) == 0 ? 0 : -1;
}
#endif

/* How a filter changes a chunk's size on the write path. */
enum { SZ_SAME, SZ_PLUS4, SZ_VAR };

struct gp_ck_decoder {
    H5Z_filter_t id;
    const char *name;
    int size_rule;   /* SZ_*: the write path's output size from its input size */
    int needs_want;  /* the undo must be told the size it restores */
    int min_cd;      /* client data values it needs */
    int (*usable)(void); /* NULL, or 0 when gpuprim must leave the filter to HDF5 now */
    /* Undoes the filter on the n bytes at in: writes the restored bytes to out (room for
     * `want`, or for n when the size stays) and returns 0, or leaves them in in and returns
     * 1 (a check, or nothing to do); *got: their count. -1: corrupt, with why. Runs on a
     * decoding thread with its scratch s: no HDF5 call. */
    int (*undo)(const gp_ck_filter *f, gp_ck_scratch *s, const unsigned char *in, size_t n,
                unsigned char *out, size_t want, size_t *got, char *why, size_t whylen);
};

/* The filters gpuprim undoes itself. */
static const gp_ck_decoder g_decoders[] = {
#if defined(GPUPRIM_HAVE_LIBDEFLATE) || defined(GPUPRIM_HAVE_ZLIB)
    {H5Z_FILTER_DEFLATE, "deflate", SZ_VAR, 1, 0, NULL, undo_deflate},
#endif
#if defined(GPUPRIM_HAVE_LZF)
    {32000, "lzf", SZ_VAR, 1, 0, gp_h5io_lzf_ours, undo_lzf}, /* not over another's 32000 */
#endif
    {H5Z_FILTER_SHUFFLE, "shuffle", SZ_SAME, 0, 1, NULL, undo_shuffle},
    {H5Z_FILTER_FLETCHER32, "fletcher32", SZ_PLUS4, 0, 0, NULL, undo_fletcher32},
};

const char *gp_h5io_inflater(void)
{
#if defined(GPUPRIM_HAVE_LIBDEFLATE)
    return "libdeflate";
#elif defined(GPUPRIM_HAVE_ZLIB)
    return "zlib";
#else
    return "none";
#endif
}

/* ---- a dataset's pipeline -------------------------------------------------------------- */

int gp_h5io_pipe_plan(hid_t dcpl, size_t chunk_bytes, gp_ck_pipe *p, char *why, size_t whylen)
{
    memset(p, 0, sizeof *p);
    p->chunk_bytes = chunk_bytes;
    const int nf = H5Pget_nfilters(dcpl);
    if (nf < 0 || nf > GP_CK_MAXFILTERS) {
        snprintf(why, whylen, "cannot list the filters");
        return -1;
    }
    size_t size = chunk_bytes; /* along the write path */
    for (int i = 0; i < nf; i++) {
        gp_ck_filter *f = &p->f[i];
        unsigned flags = 0, cfg = 0;
        size_t ncd = sizeof f->cd / sizeof f->cd[0];
        char name[64] = "";
        const H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, f->cd, sizeof name,
                                               name, &cfg);
        if (id < 0) {
            snprintf(why, whylen, "cannot read filter %d", i);
            return -1;
        }
        for (size_t k = 0; k < sizeof g_decoders / sizeof g_decoders[0]; k++)
            if (g_decoders[k].id == id) f->dec = &g_decoders[k];
        if (!f->dec) {
            snprintf(why, whylen, "filter %d (%s) is not one gpuprim undoes", (int)id,
                     name[0] ? name : "unnamed");
            return -1;
        }
        if (f->dec->usable && !f->dec->usable()) {
            snprintf(why, whylen, "filter %s is the application's or a plugin's here",
                     f->dec->name);
            return -1;
        }
        if ((int)ncd < f->dec->min_cd) {
            snprintf(why, whylen, "filter %s without its parameters", f->dec->name);
            return -1;
        }
        if (f->dec->needs_want && size == SIZE_MAX) {
            snprintf(why, whylen, "filter %s after a filter of variable output", f->dec->name);
            return -1;
        }
        size = f->dec->size_rule == SZ_SAME    ? size
               : f->dec->size_rule == SZ_PLUS4 && size != SIZE_MAX ? size + 4
                                                               : SIZE_MAX;
    }
    p->n = nf;
    return 0;
}

gp_ck_scratch *gp_h5io_scratch_new(void)
{
    gp_ck_scratch *s = calloc(1, sizeof *s);
#if defined(GPUPRIM_HAVE_LIBDEFLATE)
    if (s && !(s->inflater = libdeflate_alloc_decompressor())) {
        free(s);
        s = NULL;
    }
#endif
    return s;
}

void gp_h5io_scratch_free(gp_ck_scratch *s)
{
    if (!s) return;
#if defined(GPUPRIM_HAVE_LIBDEFLATE)
    libdeflate_free_decompressor(s->inflater);
#elif defined(GPUPRIM_HAVE_ZLIB)
    if (s->z_ready) inflateEnd(&s->z);
#endif
    free(s->raw);
    free(s->mid[0]);
    free(s->mid[1]);
    free(s);
}

unsigned char *gp_h5io_scratch_raw(gp_ck_scratch *s, size_t n)
{
    return reserve(&s->raw, &s->raw_cap, n) == 0 ? s->raw : NULL;
}

int gp_h5io_pipe_active(const gp_ck_pipe *p, unsigned mask)
{
    for (int i = 0; i < p->n; i++)
        if (!(mask & 1u << i)) return 1;
    return 0;
}

int gp_h5io_pipe_undo(const gp_ck_pipe *p, gp_ck_scratch *s, unsigned mask,
                      const unsigned char *raw, size_t n, unsigned char *out, char *why,
                      size_t whylen)
{
    size_t before[GP_CK_MAXFILTERS + 1]; /* the size entering each filter on the write path */
    int last = -1;                       /* the first filter applied: the last one undone */
    before[0] = p->chunk_bytes;
    for (int i = 0; i < p->n; i++) {
        const int skip = (mask & 1u << i) != 0, rule = p->f[i].dec->size_rule;
        before[i + 1] = skip || rule == SZ_SAME ? before[i]
                        : rule == SZ_PLUS4 && before[i] != SIZE_MAX ? before[i] + 4 : SIZE_MAX;
        if (!skip && last < 0) last = i;
    }
    const unsigned char *cur = raw;
    size_t cn = n;
    int slot = 0;
    for (int i = p->n - 1; i >= 0; i--) {
        if (mask & 1u << i) continue;
        const gp_ck_filter *f = &p->f[i];
        const size_t want = f->dec->needs_want ? before[i] : cn;
        unsigned char *dst = out;
        if (i != last || want != p->chunk_bytes) {
            if (reserve(&s->mid[slot], &s->mid_cap[slot], want) != 0) {
                snprintf(why, whylen, "out of memory");
                return -1;
            }
            dst = s->mid[slot];
        }
        size_t got = 0;
        const int rc = f->dec->undo(f, s, cur, cn, dst, want, &got, why, whylen);
        if (rc < 0) return -1;
        if (rc == 0) {
            cur = dst;
            if (dst != out) slot ^= 1;
        }
        cn = got;
    }
    if (cn != p->chunk_bytes) {
        snprintf(why, whylen, "%zu bytes after the filters, the chunk holds %zu", cn,
                 p->chunk_bytes);
        return -1;
    }
    if (cur != out) memcpy(out, cur, cn);
    return 0;
}

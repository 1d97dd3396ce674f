/* h5_chunk_plan.c — the direct chunk path before it reads (gpuprim/h5io.h, "Direct chunk
 * reads"; the stream itself is h5_chunks.c): the process's choice (gp_h5_set_chunk_reads)
 * and the threads' share of the cores, the plan of a reader (the chunked layout, the filter
 * pipeline of h5_filters.c, the file opened for pread) and its release, and the chunk index:
 * where a chunk's bytes are, per chunk by H5Dget_chunk_info_by_coord or for many at once by
 * H5Dchunk_iter where the HDF5 has it (1.10.10+, 1.12.3+, 1.14: not Debian 12's 1.10.8). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "h5_chunk_plan.h"

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* H5Dchunk_iter with its size as hsize_t: HDF5 1.10.10+, 1.12.3+, 1.14 and later */
#if H5_VERSION_GE(1, 12, 3) && !(H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 13)
#define GP_HAVE_CHUNK_ITER 1
#elif H5_VERSION_GE(1, 10, 10) && H5_VERS_MAJOR == 1 && H5_VERS_MINOR == 10
#define GP_HAVE_CHUNK_ITER 1
#elif defined(GP_EMULATE_CHUNK_ITER)
/* The fuzz build's stand-in where the HDF5 lacks H5Dchunk_iter (tests/fuzz/run_fuzz.sh), so
 * that the table path below is built and run: the same callbacks for the written chunks,
 * in the grid's order, found by H5Dget_chunk_info_by_coord. */
#define GP_HAVE_CHUNK_ITER 1
typedef int (*H5D_chunk_iter_op_t)(const hsize_t *offset, unsigned filter_mask, haddr_t addr,
                                   hsize_t size, void *op_data);
static herr_t H5Dchunk_iter(hid_t did, hid_t dxpl, H5D_chunk_iter_op_t cb, void *op)
{
    hsize_t dims[GP_H5_MAXDIMS], chunk[GP_H5_MAXDIMS], at[GP_H5_MAXDIMS], size;
    haddr_t addr;
    const hid_t fs = H5Dget_space(did), dcpl = H5Dget_create_plist(did);
    const int nd = fs >= 0 ? H5Sget_simple_extent_dims(fs, dims, NULL) : -1;
    herr_t st = nd > 0 && dcpl >= 0 && H5Pget_chunk(dcpl, nd, chunk) == nd ? 0 : -1;
    (void)dxpl;
    for (int i = 0; i < nd; i++) {
        at[i] = 0;
        if (st == 0 && dims[i] == 0) st = 1; /* no chunk */
    }
    while (st == 0) {
        unsigned mask = 0;
        st = H5Dget_chunk_info_by_coord(did, at, &mask, &addr, &size) < 0 ? -1 : 0;
        if (st == 0 && addr != HADDR_UNDEF && cb(at, mask, addr, size, op) != 0) st = 1;
        int i = nd - 1; /* the next chunk of the grid */
        while (st == 0 && i >= 0 && (at[i] += chunk[i]) >= dims[i]) {
            at[i] = 0;
            i--;
        }
        if (i < 0) st = 1;
    }
    if (fs >= 0 && H5Sclose(fs) < 0) st = -1;
    if (dcpl >= 0 && H5Pclose(dcpl) < 0) st = -1;
    return st < 0 ? -1 : 0;
}
#endif

/* The process's choice (gp_h5_set_chunk_reads). */
static gp_h5_chunk_reads g_reads = {1, 0, 0};

void gp_h5_set_chunk_reads(const gp_h5_chunk_reads *c)
{
    g_reads.direct = c ? c->direct != 0 : 1;
    g_reads.threads = c && c->threads > 0 ? c->threads : 0;
    g_reads.node_ranks = c && c->node_ranks > 0 ? c->node_ranks : 0;
}

const gp_h5_chunk_reads *gp_h5io_chunk_reads(void) { return &g_reads; }

/* ---- the threads ---------------------------------------------------------------------- */

int gp_h5io_thread_share(int threads, int node_ranks, int mine, int online)
{
    if (threads > 0) return threads;
    if (mine < 1) mine = 1;
    if (online < mine) online = mine;
    const int share = online / (node_ranks > 1 ? node_ranks : 1);
    return share < 1 ? 1 : share < mine ? share : mine;
}

/* The cores this process may run on (sched_getaffinity), else the machine's. */
static int cores_mine(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ---- the chunk index ------------------------------------------------------------------- */

/* "[x, y, ...]": the chunk's offset (its first element's coordinates), as h5py gives it. */
void gp_ck_offset_text(const gp_ck_reader *ck, const gp_ck_slot *s, char *out, size_t len)
{
    size_t at = (size_t)snprintf(out, len, "[");
    for (int i = 0; i < ck->nd && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%llu", i ? ", " : "",
                               (unsigned long long)s->lo[i]);
    if (at < len) snprintf(out + at, len - at, "]");
}

/* Where chunk s's bytes are: H5Dchunk_iter's table, else H5Dget_chunk_info_by_coord. Returns
 * 0, or -1 with e set. */
int gp_ck_locate(gp_ck_reader *ck, gp_ck_slot *s, gp_err *e)
{
    char off[160];
    if (ck->tab_addr && s->index >= ck->tab_lo && s->index < ck->tab_lo + ck->tab_n) {
        const int64_t k = s->index - ck->tab_lo;
        s->addr = ck->tab_addr[k];
        s->size = ck->tab_size[k];
        s->mask = ck->tab_mask[k];
        return 0;
    }
    s->mask = 0;
    if (H5Dget_chunk_info_by_coord(ck->r->did, s->lo, &s->mask, &s->addr, &s->size) >= 0)
        return 0;
    gp_ck_offset_text(ck, s, off, sizeof off);
    fail(e, GP_IO_EREAD, "%s: %s: read failed: chunk at offset %s: cannot find it (%s)",
         ck->r->in->file, ck->r->dname, off, gp_h5io_reason().desc);
    return -1;
}

/* Frees ck's table, if any. */
static void free_table(gp_ck_reader *ck)
{
    free(ck->tab_addr);
    free(ck->tab_size);
    free(ck->tab_mask);
    ck->tab_addr = NULL;
    ck->tab_size = NULL;
    ck->tab_mask = NULL;
    ck->tab_n = 0;
}

#ifdef GP_HAVE_CHUNK_ITER
/* H5Dchunk_iter's callback: the chunk at `offset` into the table when it is a candidate. */
static int iter_cb(const hsize_t *offset, unsigned mask, haddr_t addr, hsize_t size, void *op)
{
    gp_ck_reader *ck = op;
    int64_t index = 0;
    for (int i = 0; i < ck->nd; i++)
        index = index * (int64_t)ck->nck[i] + (int64_t)(offset[i] / ck->cdim[i]);
    if (index >= ck->tab_lo && index < ck->tab_lo + ck->tab_n) {
        ck->tab_addr[index - ck->tab_lo] = addr;
        ck->tab_size[index - ck->tab_lo] = size;
        ck->tab_mask[index - ck->tab_lo] = mask;
    }
    return 0;
}

/* The table of the chunks [lo, hi): H5Dchunk_iter's pass (see gp_ck_index). */
static void build_table(gp_ck_reader *ck, int64_t lo, int64_t hi)
{
    ck->tab_n = hi - lo;
    ck->tab_lo = lo;
    ck->tab_addr = malloc(sizeof *ck->tab_addr * (size_t)ck->tab_n);
    ck->tab_size = malloc(sizeof *ck->tab_size * (size_t)ck->tab_n);
    ck->tab_mask = malloc(sizeof *ck->tab_mask * (size_t)ck->tab_n);
    if (ck->tab_addr && ck->tab_size && ck->tab_mask) {
        for (int64_t k = 0; k < ck->tab_n; k++) {
            ck->tab_addr[k] = HADDR_UNDEF;
            ck->tab_size[k] = 0;
            ck->tab_mask[k] = 0;
        }
        if (H5Dchunk_iter(ck->r->did, H5P_DEFAULT, iter_cb, ck) >= 0) return;
    }
    free_table(ck);
}
#endif

void gp_ck_index(gp_ck_reader *ck, int64_t lo, int64_t hi)
{
    free_table(ck);
#ifdef GP_HAVE_CHUNK_ITER
    if ((hi - lo) * 16 >= ck->chunks) build_table(ck, lo, hi);
#else
    (void)lo, (void)hi;
#endif
}

/* ---- the plan -------------------------------------------------------------------------- */

/* The chunk geometry and the pipeline of ck->r's dataset (creation property list dcpl):
 * 0 when the direct path can read it, else -1. */
static int plan_layout(gp_ck_reader *ck, hid_t dcpl)
{
    const gp_h5_reader *r = ck->r;
    char why[200];
    ck->nd = r->nd;
    if (H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_chunk(dcpl, ck->nd, ck->cdim) != ck->nd)
        return -1;
    ck->ftype = H5Dget_type(r->did);
    const size_t fsz = ck->ftype >= 0 ? H5Tget_size(ck->ftype) : 0;
    const htri_t same = ck->ftype >= 0 ? H5Tequal(ck->ftype, ck->memtype) : -1;
    if (fsz == 0 || same < 0) return -1;
    ck->fsz = fsz;
    ck->msz = r->esz;
    ck->same = same > 0;
    ck->celems = 1;
    ck->per_row = 1;
    for (int i = ck->nd - 1; i >= 0; i--) {
        ck->dims[i] = r->dims[i];
        if (ck->cdim[i] == 0 || ck->dims[i] == 0) return -1;
        ck->nck[i] = (ck->dims[i] + ck->cdim[i] - 1) / ck->cdim[i];
        ck->dstride[i] = i == ck->nd - 1 ? 1 : ck->dstride[i + 1] * (int64_t)ck->dims[i + 1];
        ck->cstride[i] = ck->celems;
        ck->celems *= (int64_t)ck->cdim[i]; /* HDF5 keeps a chunk under 2^32 elements */
        if (i > 0) ck->per_row *= (int64_t)ck->nck[i];
    }
    ck->mbytes = (size_t)ck->celems * (fsz > ck->msz ? fsz : ck->msz);
    if ((int64_t)ck->mbytes > GP_CK_AHEAD_BYTES) return -1; /* chunks of over 1 GiB decoded */
    if (gp_h5io_pipe_plan(dcpl, (size_t)ck->celems * fsz, &ck->pipe, why, sizeof why) != 0)
        return -1;
    /* one chunk row of an N-D dataset stays decoded while its rows are read */
    if (ck->nd > 1 && (double)ck->per_row * (double)ck->mbytes > (double)GP_CK_SLAB_BYTES)
        return -1;
    /* a whole chunk is one run of the flattening: ones, then one dimension, then the
     * dataset's own extents */
    int k = 0;
    while (k < ck->nd - 1 && ck->cdim[k] == 1) k++;
    ck->contiguous = 1;
    for (int i = k + 1; i < ck->nd; i++)
        if (ck->cdim[i] != ck->dims[i]) ck->contiguous = 0;
    return 0;
}

/* The file that holds ck->r's dataset, opened for pread into ck->fd, and its size: 0, or -1
 * (not opened: H5Dread reads it). A file with a user block goes through H5Dread (its chunk
 * addresses would need the block's size added). */
static int plan_file(gp_ck_reader *ck)
{
    char name[GP_H5_PATHLEN + 1];
    struct stat st;
    hsize_t ub = 1;
    const hid_t fid = H5Iget_file_id(ck->r->did);
    const hid_t fcpl = fid >= 0 ? H5Fget_create_plist(fid) : H5I_INVALID_HID;
    const int bad_ub = fcpl < 0 || H5Pget_userblock(fcpl, &ub) < 0 || ub != 0;
    if (fcpl >= 0 && H5Pclose(fcpl) < 0) return -1;
    if (fid >= 0 && H5Fclose(fid) < 0) return -1;
    const ssize_t nl = H5Fget_name(ck->r->did, name, sizeof name);
    if (bad_ub || nl <= 0 || (size_t)nl >= sizeof name) return -1;
    ck->fd = open(name, O_RDONLY | O_CLOEXEC);
    if (ck->fd < 0 || fstat(ck->fd, &st) != 0) return -1;
    ck->file_bytes = (int64_t)st.st_size;
    return 0;
}

void gp_h5io_plan_chunks(gp_h5_reader *r)
{
    const gp_h5_chunk_reads *cr = gp_h5io_chunk_reads();
    if (!cr->direct || r->in->n == 0) return;
    gp_ck_reader *ck = calloc(1, sizeof *ck);
    if (!ck) return; /* H5Dread reads it */
    ck->r = r;
    ck->fd = -1;
    ck->ftype = H5I_INVALID_HID;
    ck->memtype = gp_h5io_native(r->as);
    ck->fault = r->in->io == GP_IO_POSIX && gp_h5io_faults()->pread;
    const hid_t dcpl = H5Dget_create_plist(r->did);
    int ok = dcpl >= 0 && plan_layout(ck, dcpl) == 0 && plan_file(ck) == 0;
    if (dcpl >= 0 && H5Pclose(dcpl) < 0) ok = 0;
    if (!ok) {
        gp_ck_plan_free(ck);
        return;
    }
    ck->chunks = 1;
    for (int i = 0; i < ck->nd; i++)
        ck->chunks = ck->chunks > INT64_MAX / (int64_t)ck->nck[i] ? INT64_MAX
                                                                 : ck->chunks * (int64_t)ck->nck[i];
    ck->threads = gp_h5io_thread_share(cr->threads, cr->node_ranks, cores_mine(),
                                       (int)sysconf(_SC_NPROCESSORS_ONLN));
    if (ck->threads > ck->chunks) ck->threads = (int)ck->chunks;
    if (ck->threads > 1024) ck->threads = 1024;
    ck->ahead = 2 * ck->threads;
    while (ck->ahead > ck->threads && (int64_t)ck->ahead * (int64_t)ck->mbytes > GP_CK_AHEAD_BYTES)
        ck->ahead--;
    r->ck = ck;
    r->how = RD_CHUNKS;
}

void gp_ck_plan_free(gp_ck_reader *ck)
{
    if (!ck) return;
    free_table(ck);
    if (ck->fd >= 0) close(ck->fd);
    if (ck->ftype >= 0 && H5Tclose(ck->ftype) < 0) { /* nothing more to do */ }
    free(ck);
}

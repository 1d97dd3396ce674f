/* h5_select.c — the shard's elements in the file (gpuprim/h5io.h): the ranks' ranges (overlap,
 * tiling), a flattened range of an N-D dataspace as a union of hyperslabs, and the
 * collective transfer of the mpiio driver in pieces, with the workarounds for overlapping
 * shards, never-written chunks and virtual datasets. */
#define _POSIX_C_SOURCE 200809L
#include "h5io_internal.h"

#include <stdint.h>
#include <stdlib.h>

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

void gp_h5io_check_tiling(MPI_Comm comm, const char *path, int64_t n, int64_t off,
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

/* 1 when chunked dataset did (creation property list dcpl) has chunks never written.
 * H5Dget_space_status compares bytes stored with the dataset's size, so it says
 * "allocated" for a dataset whose written chunks happen to take that many bytes: compressed
 * chunks (small ones grow under deflate), and unfiltered edge chunks, which are stored whole
 * past the extent (the fuzzer's 4 x 8 x 3 unsigned dataset with its first rows written,
 * fuzz_h5select). Else 0. */
static int chunks_missing(hid_t did, hid_t dcpl, hid_t fspace)
{
    hsize_t dims[GP_H5_MAXDIMS], chunk[GP_H5_MAXDIMS], have = 0, want = 1;
    int nd = fspace >= 0 ? H5Sget_simple_extent_ndims(fspace) : -1, missing = 0;
    if (dcpl >= 0 && nd >= 1 && nd <= GP_H5_MAXDIMS && H5Pget_layout(dcpl) == H5D_CHUNKED &&
        H5Pget_chunk(dcpl, nd, chunk) == nd &&
        H5Sget_simple_extent_dims(fspace, dims, NULL) == nd &&
        H5Dget_num_chunks(did, fspace, &have) >= 0) {
        for (int i = 0; i < nd; i++) want *= chunk[i] ? (dims[i] + chunk[i] - 1) / chunk[i] : 0;
        missing = have < want;
    }
    return missing;
}

/* 1 when a read of dataset did (creation property list dcpl) must be independent, because
 * HDF5 1.10.8's collective read gets it wrong:
 * - storage not all allocated (a sparse file: chunks never written read as the fill value)
 *   fails in MPI_File_set_view with MPI_ERR_TYPE, also with H5FD_MPIO_INDIVIDUAL_IO
 *   underneath; the space status is file metadata, the same on every rank;
 * - a filter pipeline: the collective path does not honour a chunk's filter mask, so a chunk
 *   that an optional filter (LZF, deflate, plugins) did not shrink, stored as it is, is
 *   still unfiltered (fuzz_h5select: "LZF chunk is corrupt"); the direct chunk path reads
 *   most filtered datasets anyway. */
static int read_alone(hid_t did, hid_t dcpl, hid_t fspace)
{
    H5D_space_status_t alloc = H5D_SPACE_STATUS_ALLOCATED;
    return (H5Dget_space_status(did, &alloc) >= 0 &&
            (alloc != H5D_SPACE_STATUS_ALLOCATED || chunks_missing(did, dcpl, fspace))) ||
           (dcpl >= 0 && H5Pget_nfilters(dcpl) > 0);
}

hid_t gp_h5io_select_piece(hid_t fspace, int nd, const hsize_t *dims, int64_t s, int64_t c,
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
             (long long)s, (long long)(s + c), gp_h5io_reason().desc);
        if (mspace >= 0 && H5Sclose(mspace) < 0) { /* failing already */ }
        return H5I_INVALID_HID;
    }
    return mspace;
}

void gp_h5io_move_piece(int writing, hid_t did, hid_t memtype, hid_t mspace, hid_t fspace,
                        hid_t dxpl, void *p, const int *out_of_range, const char *file,
                        const char *dname, gp_err *e)
{
    const herr_t st = writing ? H5Dwrite(did, memtype, mspace, fspace, dxpl, p)
                              : H5Dread(did, memtype, mspace, fspace, dxpl, p);
    if (st < 0 && out_of_range && *out_of_range)
        fail(e, GP_IO_EWRITE,
             "%s: %s: write failed: a value is outside the range of the stored type", file,
             dname);
    else if (st < 0)
        fail(e, writing ? GP_IO_EWRITE : GP_IO_EREAD, "%s: %s: %s failed: %s", file, dname,
             writing ? "write" : "read", gp_h5io_reason().desc);
}

/* A serial (sec2, read-only, unlocked) open of dataset dname of file, for the virtual
 * dataset that parallel HDF5 will not read; *sfid / *sdid receive the handles. */
static void open_serial(const char *file, const char *dname, hid_t *sfid, hid_t *sdid,
                        int code, gp_err *e)
{
    hid_t fapl = gp_h5io_access(MPI_COMM_SELF, GP_IO_POSIX);
    if (fapl >= 0) *sfid = H5Fopen(file, H5F_ACC_RDONLY, fapl);
    if (*sfid >= 0) *sdid = H5Dopen2(*sfid, dname, H5P_DEFAULT);
    if (*sdid < 0)
        fail(e, code, "%s: %s: cannot open the virtual dataset for a serial read (%s)", file,
             dname, gp_h5io_reason().desc);
    if (fapl >= 0 && H5Pclose(fapl) < 0) fail(e, code, "%s: %s: H5Pclose failed", file, dname);
}

void gp_h5io_transfer(MPI_Comm comm, int writing, hid_t did, int nd, const hsize_t *dims,
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
        fail(e, code, "%s: %s: cannot get the dataspace (%s)", file, dname, gp_h5io_reason().desc);
    /* Open MPI 4.1's OMPIO returns wrong data from a collective read when ranks' ranges
     * overlap (open-mpi/ompi#10546 family): then keep the collective call but let each
     * rank do independent MPI-IO underneath. Disjoint shards stay fully collective. */
    int indep = !writing && shards_overlap(comm, off, cnt, file, e), out_of_range = 0;
    /* a read's creation property list, asked once: independent or collective (read_alone),
     * and a virtual dataset */
    const hid_t dcpl = writing ? H5I_INVALID_HID : H5Dget_create_plist(did);
    const int sparse = !writing && read_alone(did, dcpl, fspace);
    /* Parallel HDF5 1.10 refuses to read a virtual dataset (VDS) through MPI-IO ("parallel
     * reads not supported on virtual datasets"): then each rank reads its part through a
     * serial (sec2) open of its own, read-only and without a file lock, as the MPI-IO open. */
    hid_t sfid = H5I_INVALID_HID, sdid = H5I_INVALID_HID;
    const int vds = !writing && !e->rc && dcpl >= 0 && H5Pget_layout(dcpl) == H5D_VIRTUAL;
    if (dcpl >= 0 && H5Pclose(dcpl) < 0 && !e->rc)
        fail(e, code, "%s: %s: H5Pclose failed", file, dname);
    if (vds && !e->rc) open_serial(file, dname, &sfid, &sdid, code, e);
    dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (dxpl < 0 ||
        H5Pset_dxpl_mpio(dxpl, sparse ? H5FD_MPIO_INDEPENDENT : H5FD_MPIO_COLLECTIVE) < 0 ||
        (indep && H5Pset_dxpl_mpio_collective_opt(dxpl, H5FD_MPIO_INDIVIDUAL_IO) < 0) ||
        (writing && H5Pset_type_conv_cb(dxpl, gp_h5io_range_cb, &out_of_range) < 0))
        fail(e, code, "%s: %s: cannot set up the collective transfer (%s)", file, dname,
             gp_h5io_reason().desc);
    if (agree(comm, e)) goto out;

    for (int64_t k = 0; k < pieces; k++) {
        int64_t s = off + k * per, c = cnt - k * per;
        if (c > per) c = per;
        if (c < 0) c = 0;
        hid_t mspace = gp_h5io_select_piece(fspace, nd, dims, s, c, code, file, dname, e);
        if (!agree(comm, e)) {
            char *p = c > 0 ? (char *)buf + (size_t)(k * per) * esz : (char *)dummy;
            gp_h5io_move_piece(writing, vds ? sdid : did, memtype, mspace, fspace,
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

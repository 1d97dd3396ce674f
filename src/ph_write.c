/* ph_write.c — the file job's write phase (ph.h): --out written under a temporary
 * name: the sorted data, the argsort and the payload (when sorting; the values streamed from
 * the device, gp_write_from of pipeline.c), then every dataset the phases registered
 * (gp_job_add_output: a prefix scan, a histogram, ...), each with its own length and parts. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ooc.h"
#include "ph.h"
#include "pipeline.h"
#include "progress.h"

/* (ph.h) */
int gp_job_name_clash(const char *a, const char *b)
{
    if (!a[0] || !b[0]) return 0;
    const size_t la = strlen(a), lb = strlen(b);
    if (la == lb) return strcmp(a, b) == 0;
    const char *s = la < lb ? a : b, *l = la < lb ? b : a;
    const size_t ls = la < lb ? la : lb;
    return strncmp(s, l, ls) == 0 && l[ls] == '/';
}

int gp_job_add_output(gp_job *j, const gp_output *out)
{
    const char *clash = NULL;
    const char *fixed[] = {j->sorting ? j->in.dataset : "", j->argsort_dset,
                           j->pin_open ? j->pin.dataset : ""};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0] && !clash; k++)
        if (gp_job_name_clash(out->name, fixed[k])) clash = fixed[k];
    for (int k = 0; k < j->nouts && !clash; k++)
        if (gp_job_name_clash(out->name, j->outs[k].name)) clash = j->outs[k].name;
    if (clash || j->nouts >= GP_MAX_OUTPUTS) {
        snprintf(j->msg, j->msglen, "%s: output dataset %s: %s", j->o->out ? j->o->out : "--out",
                 out->name, clash ? "clashes with another output dataset (the same path, or "
                                    "one inside the other)"
                                  : "too many output datasets");
        return GP_EXIT_USAGE;
    }
    j->outs[j->nouts++] = *out;
    return 0;
}

/* --payload: the payload's shard read and moved to the sorted places of this rank's keys
 * (hpos holds their input positions) into *out (malloc'ed; the caller frees). */
static int sorted_payload(gp_job *j, const uint64_t *hpos, void **out)
{
    const size_t psz = gp_dtype_size(j->pin.dtype);
    void *hpay = malloc((size_t)(j->cnt > 0 ? j->cnt : 1) * psz);
    *out = malloc((size_t)(j->nk > 0 ? j->nk : 1) * psz);
    int err = 0;
    if (!hpay || !*out) {
        err = GP_EXIT_FAIL;
        snprintf(j->msg, j->msglen, "rank %d: --payload: out of host memory", j->rank);
    }
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    if (!err)
        err = gp_h5_read(j->comm, &j->pin, NULL, j->pin.dtype, j->off, j->cnt, hpay, j->msg,
                         j->msglen);
    if (!err && gp_gather_by_index(j->comm, j->N, hpos, j->nk, hpay, psz, *out) != MPI_SUCCESS) {
        err = GP_EXIT_FAIL;
        snprintf(j->msg, j->msglen, "--payload: moving the payload to its sorted places failed "
                                    "(out of host memory, or an MPI error)");
    }
    free(hpay);
    return err;
}

/* The datasets of --out, in the writer's order: ds/ext/src[k] (src: host memory, or backend
 * memory when dev[k]). */
typedef struct out_list {
    gp_h5_outds ds[3 + GP_MAX_OUTPUTS];
    gp_h5_extent ext[3 + GP_MAX_OUTPUTS];
    const void *src[3 + GP_MAX_OUTPUTS];
    int dev[3 + GP_MAX_OUTPUTS];
    int n;
} out_list;

static void list_add(out_list *l, const char *name, hid_t ftype, gp_dtype mem,
                     gp_h5_extent ext, const void *src, int dev)
{
    l->ds[l->n] = (gp_h5_outds){name, ftype, mem, NULL};
    l->ext[l->n] = ext;
    l->src[l->n] = src;
    l->dev[l->n] = dev;
    l->n++;
}

/* The sorted data's datasets (the values from the device, or out of core (ooc.h) from host
 * memory; the argsort from the host positions, the payload moved to its sorted places into
 * *psorted) at this rank's sorted slots; the writer's default part is theirs. */
static int list_sorted(gp_job *j, out_list *l, const uint64_t *hpos, void **psorted)
{
    gp_result_sort *res = &j->res->sort;
    const gp_h5_extent mine = {-1, 0, 0};
    int err = 0;
    list_add(l, j->in.dataset, j->in.ftype, j->dt, mine, j->ooc ? gp_ooc_keys(j) : j->dev,
             !j->ooc);
    if (j->o->argsort) {
        snprintf(res->argsort_dset, sizeof res->argsort_dset, "%s", j->argsort_dset);
        list_add(l, res->argsort_dset, H5I_INVALID_HID, GP_I64, mine, hpos, 0);
    }
    if (j->o->payload && !(err = sorted_payload(j, hpos, psorted))) {
        snprintf(res->payload_dset, sizeof res->payload_dset, "%s", j->pin.dataset);
        list_add(l, res->payload_dset, j->pin.ftype, j->pin.dtype, mine, *psorted, 0);
    }
    return err;
}

/* Every dataset of l written (backend memory through the pieces, host memory in one call);
 * the ranks agree after each (posix writes fail on their rank). Then the file is finished
 * (staged), or removed after an error. */
static int write_list(gp_job *j, gp_h5_writer *w, const out_list *l, int64_t woff)
{
    int err = 0;
    int64_t bytes = 0;
    for (int k = 0; k < l->n; k++)
        bytes += (l->ext[k].n_total >= 0 ? l->ext[k].cnt : j->nk) *
                 (int64_t)gp_dtype_size(l->ds[k].mem);
    gp_progress_work(bytes); /* the write's progress line counts bytes */
    for (int k = 0; k < l->n && !err; k++) {
        const int own = l->ext[k].n_total >= 0;
        const int64_t off = own ? l->ext[k].off : woff, cnt = own ? l->ext[k].cnt : j->nk;
        const size_t esz = gp_dtype_size(l->ds[k].mem);
        if (l->dev[k]) { /* gp_write_from counts its pieces' bytes */
            err = gp_write_from(j, w, k, l->src[k], esz, off, cnt);
        } else {
            err = gp_h5_writer_write(w, k, off, cnt, l->src[k], j->msg, j->msglen);
            gp_progress_add(cnt * (int64_t)esz);
        }
        err = gp_agree(j->comm, err, j->msg, j->msglen);
    }
    char cmsg[256];
    const int cerr = gp_h5_writer_close(w, err != 0, err ? cmsg : j->msg, err ? sizeof cmsg : j->msglen);
    return err ? err : cerr;
}

/* --out written with the --io driver, left under its temporary name for the program to
 * publish (stage = 1): the sorted data (when sorting, and only once verified), then the
 * registered outputs. */
int gp_ph_write(gp_job *j)
{
    const gp_backend *be = j->be;
    const char *out = j->o->out;
    int err = 0;
    if (j->sorting && !j->res->sort.ok) { /* the verdict of every rank */
        snprintf(j->msg, j->msglen, "%s: the sorted result failed its check; nothing written", out);
        return GP_EXIT_VERIFY;
    }
    /* rank r holds global slots [r*m, r*m + nk); an empty rank past N writes nothing */
    const int64_t woff = (int64_t)j->rank * j->m < j->N ? (int64_t)j->rank * j->m : j->N;
    /* the positions in host memory: out of core already there, on the CPU backend the
     * device's; else downloaded into pageable memory (never pinned whole) */
    const int host = j->ooc || device_is_host(be);
    void *psorted = NULL;
    out_list l;
    l.n = 0;
    if (j->sorting && j->pairs && !host) {
        j->hval = gp_backend_cpu()->alloc((size_t)(j->nk > 0 ? j->nk : 1) * 8);
        if (!j->hval) {
            err = GP_EXIT_FAIL;
            snprintf(j->msg, j->msglen, "rank %d: cannot allocate the host copy of %lld "
                     "positions: %s", j->rank, (long long)j->nk, gp_backend_cpu()->last_error());
        }
        BE_CALL("download positions", be->download(j->hval, j->dval, (size_t)j->nk * 8));
    }
    const uint64_t *hpos = j->ooc ? gp_ooc_vals(j) : host ? j->dval : j->hval;
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    if (!err && j->sorting) err = list_sorted(j, &l, hpos, &psorted);
    for (int k = 0; !err && k < j->nouts; k++) {
        const gp_output *o = &j->outs[k];
        list_add(&l, o->name, o->file_type, o->mem, o->ext, o->host ? o->host : o->dev, !o->host);
    }
    if (!err && l.n == 0) {
        snprintf(j->msg, j->msglen, "%s: nothing to write (--no-sort and no other output)", out);
        err = GP_EXIT_USAGE;
    }
    gp_h5_writer *w = NULL;
    if (gp_job_lends_spare(j)) gp_exchange_release_spare(j->xchg);
    if (!err)
        err = gp_h5_writer_open_parts(j->comm, j->o->io, 1, out, l.ds, l.ext, l.n,
                                      j->sorting ? j->N : 0, j->sorting ? woff : 0,
                                      j->sorting ? j->nk : 0, j->o->force, &w, j->msg,
                                      j->msglen);
    if (!err) {
        j->res->sort.io = gp_h5_writer_io(w);
        err = write_list(j, w, &l, woff);
    }
    free(psorted);
    return err;
}

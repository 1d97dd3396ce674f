/* ph_write.c — the file job's write phase (job_internal.h): the sorted data, the argsort
 * and the payload written to --out under a temporary name, the values streamed from the
 * device (gp_write_from, pipeline.c) or, out of core (ooc.h), written from host memory. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>

#include "job_internal.h"
#include "ooc.h"

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

/* The datasets of --out written: the sorted values from the device (gp_write_from) or, out
 * of core, from host memory in one call, the argsort from hpos, the payload from psorted;
 * the ranks agree after each (posix writes fail on their rank). Then the file is finished
 * (staged), or removed after an error. */
static int write_datasets(gp_job *j, gp_h5_writer *w, int64_t woff, const uint64_t *hpos,
                          const void *psorted)
{
    int err = j->ooc ? gp_h5_writer_write(w, 0, woff, j->nk, gp_ooc_keys(j), j->msg, j->msglen)
                     : gp_write_from(j, w, 0, j->dev, j->sz, woff, j->nk);
    err = gp_agree(j->comm, err, j->msg, j->msglen);
    if (!err && j->o->argsort)
        err = gp_agree(j->comm, gp_h5_writer_write(w, 1, woff, j->nk, hpos, j->msg, j->msglen),
                       j->msg, j->msglen);
    if (!err && psorted)
        err = gp_agree(j->comm, gp_h5_writer_write(w, j->o->argsort ? 2 : 1, woff, j->nk, psorted,
                                                   j->msg, j->msglen),
                       j->msg, j->msglen);
    char cmsg[256];
    const int cerr = gp_h5_writer_close(w, err != 0, err ? cmsg : j->msg, err ? sizeof cmsg : j->msglen);
    return err ? err : cerr;
}

/* The sorted data (and the argsort, the payload) written to --out with the --io driver, left
 * under its temporary name for the program to publish (gp_h5_writer_open with stage = 1). */
int gp_ph_write(gp_job *j)
{
    const gp_backend *be = j->be;
    gp_result_sort *res = &j->res->sort;
    const char *out = j->o->out;
    int err = 0;
    if (!res->ok) { /* the verdict of every rank */
        snprintf(j->msg, j->msglen, "%s: the sorted result failed its check; nothing written", out);
        return GP_EXIT_VERIFY;
    }
    /* rank r holds global slots [r*m, r*m + nk); an empty rank past N writes nothing */
    const int64_t woff = (int64_t)j->rank * j->m < j->N ? (int64_t)j->rank * j->m : j->N;
    gp_h5_outds ds[3] = {{j->in.dataset, j->in.ftype, j->dt, NULL}};
    int nds = 1;
    /* the positions in host memory: out of core already there, on the CPU backend the
     * device's; else downloaded into pageable memory (never pinned whole) */
    const int host = j->ooc || device_is_host(be);
    void *psorted = NULL;
    if (j->pairs && !host) {
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
    if (!err && j->o->argsort) {
        snprintf(res->argsort_dset, sizeof res->argsort_dset, "%s", j->argsort_dset);
        ds[nds++] = (gp_h5_outds){res->argsort_dset, H5I_INVALID_HID, GP_I64, NULL};
    }
    if (!err && j->o->payload && !(err = sorted_payload(j, hpos, &psorted))) {
        snprintf(res->payload_dset, sizeof res->payload_dset, "%s", j->pin.dataset);
        ds[nds++] = (gp_h5_outds){res->payload_dset, j->pin.ftype, j->pin.dtype, NULL};
    }
    gp_h5_writer *w = NULL;
    if (gp_job_lends_spare(j)) gp_exchange_release_spare(j->xchg);
    if (!err)
        err = gp_h5_writer_open(j->comm, j->o->io, 1, out, ds, nds, j->N, woff, j->nk,
                                j->o->force, &w, j->msg, j->msglen);
    if (!err) {
        res->io = gp_h5_writer_io(w);
        err = write_datasets(j, w, woff, hpos, psorted);
    }
    free(psorted);
    return err;
}

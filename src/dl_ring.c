/* dl_ring.c — the download ring (dl_ring.h): two device and two staging buffers that take
 * units of device results down to host memory, each unit's download overlapped with the
 * next unit's computation and with the previous unit's copy out of its staging buffer. */
#include "dl_ring.h"

#include <string.h>

#include "host.h"

int gp_dl_ring_open(gp_dl_ring *r, const gp_backend *be, size_t cap)
{
    memset(r, 0, sizeof *r);
    r->be = be;
    r->cap = cap > 0 ? cap : 1;
    if (!(r->dev[0] = be->alloc(r->cap))) return -1;
    r->dev[1] = be->alloc(r->cap);
    r->stage[0] = be->host_alloc(r->cap);
    r->stage[1] = be->host_alloc(r->cap);
    if (!r->dev[1] || !r->stage[0] || !r->stage[1]) { /* synchronous: only dev[0] */
        if (r->dev[1]) be->free(r->dev[1]);
        for (int k = 0; k < 2; k++)
            if (r->stage[k]) be->host_free(r->stage[k]);
        r->dev[1] = r->stage[0] = r->stage[1] = NULL;
    }
    return 0;
}

int gp_dl_ring_pipelined(const gp_dl_ring *r) { return r->dev[1] != NULL; }

void *gp_dl_ring_buffer(const gp_dl_ring *r) { return r->dev[r->slot]; }

/* Drops what may be in flight after a failure: waits for it (its own error is not the
 * first) and forgets the pending unit. Returns rc. */
static int drop(gp_dl_ring *r, int rc)
{
    if (gp_dl_ring_pipelined(r)) (void)r->be->download_wait();
    r->pend = NULL;
    r->pend_bytes = 0;
    return rc;
}

int gp_dl_ring_push(gp_dl_ring *r, void *host, size_t bytes)
{
    const gp_backend *be = r->be;
    if (bytes == 0) return 0;
    if (bytes > r->cap || !host) return drop(r, GP_EINVAL);
    if (!gp_dl_ring_pipelined(r)) return be->download(host, r->dev[0], bytes);
    const int s = r->slot;
    int rc = r->pend ? be->download_wait() : 0; /* 1: unit u - 1 is in staging buffer 1 - s */
    if (!rc) rc = be->download_async(r->stage[s], r->dev[s], bytes); /* 2: unit u travels */
    if (rc) return drop(r, rc);
    if (r->pend) gp_host_memcpy(r->pend, r->stage[1 - s], r->pend_bytes); /* 3 */
    r->pend = host;
    r->pend_bytes = bytes;
    r->slot = 1 - s;
    return 0;
}

int gp_dl_ring_finish(gp_dl_ring *r)
{
    if (!r->pend) return 0;
    const int rc = r->be->download_wait();
    if (!rc) gp_host_memcpy(r->pend, r->stage[1 - r->slot], r->pend_bytes);
    r->pend = NULL;
    r->pend_bytes = 0;
    return rc;
}

void gp_dl_ring_close(gp_dl_ring *r)
{
    if (!r->be) return;
    (void)drop(r, 0);
    for (int k = 0; k < 2; k++) {
        if (r->dev[k]) r->be->free(r->dev[k]);
        if (r->stage[k]) r->be->host_free(r->stage[k]);
    }
    memset(r, 0, sizeof *r);
}

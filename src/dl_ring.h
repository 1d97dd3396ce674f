/* dl_ring.h — a ring of two device buffers and two staging buffers that takes a sequence of
 * device results ("units", each written by a blocking backend call into the ring's current
 * device buffer) down to their places in ordinary host memory: unit u's download runs while
 * the device computes unit u + 1, and unit u - 1's copy out of its staging buffer (on the
 * host's threads, gp_host_memcpy, which also takes the destination's first-touch page
 * faults in parallel) runs while unit u downloads. The scan phase's way down from a device
 * (ph_scan.c); private to the job's files.
 *
 * Protocol, per unit u (slot s = u mod 2):
 *   the caller   buf = gp_dl_ring_buffer(r)  (device buffer s: unit u - 2's download from it
 *                has completed), a backend call that writes the unit there and is complete
 *                on return (the scans are: kernels.h), then gp_dl_ring_push(r, host, bytes);
 *   push         1. download_wait: unit u - 1's download (the only one in flight) completes;
 *                2. download_async of device buffer s into staging buffer s (unit u - 2's
 *                   copy out of it finished inside push u - 1);
 *                3. unit u - 1's copy from staging buffer 1 - s to its host place, on the
 *                   host's threads, while unit u travels;
 *   finish       download_wait, then the last unit's copy: every pushed unit is in place
 *                and nothing is in flight (also after a failure).
 * Without a second device buffer or the staging buffers (be->host_alloc failed: pinned
 * memory is a scarce resource) the ring is synchronous: one device buffer, each push a
 * be->download straight into the host place. The ring is the only user of the backend's
 * download stream while a unit is in flight (download_wait waits for all of them). */
#ifndef GP_DL_RING_H
#define GP_DL_RING_H

#include <stddef.h>

#include "gpuprim/kernels.h"

typedef struct gp_dl_ring {
    const gp_backend *be;
    size_t cap;       /* bytes of each buffer: the largest unit */
    void *dev[2];     /* device buffers; dev[1] NULL: synchronous */
    void *stage[2];   /* staging buffers (be->host_alloc); NULL: synchronous */
    int slot;         /* the buffers of the next unit */
    char *pend;       /* the host place of the unit whose download is in flight, or NULL */
    size_t pend_bytes;
} gp_dl_ring;

/* Opens r with buffers of cap bytes (at least 1) on backend be: one device buffer, then
 * the second and the two staging buffers, which when any fails are all given back (a
 * synchronous ring). Returns 0, or -1 when the first device buffer cannot be allocated
 * (be->last_error() says why; r then holds nothing, and gp_dl_ring_close is harmless). */
int gp_dl_ring_open(gp_dl_ring *r, const gp_backend *be, size_t cap);

/* Whether r overlaps its downloads (two device and two staging buffers). */
int gp_dl_ring_pipelined(const gp_dl_ring *r);

/* The device buffer (cap bytes) that the next unit is to be written into; nothing reads it
 * until the next push. */
void *gp_dl_ring_buffer(const gp_dl_ring *r);

/* The next unit: `bytes` (<= cap) bytes of the current buffer, complete on the device, to go
 * to host[0, bytes) (ordinary memory, not overlapping any other unit's place). On return
 * they may still travel: host holds them after a later push or gp_dl_ring_finish. bytes ==
 * 0: nothing. Returns 0, or a backend error code (be->last_error() says why; GP_EINVAL for
 * bytes > cap) after which nothing is in flight and no unit is pending (the units pushed
 * before the failure and not yet in place are lost: the caller fails). */
int gp_dl_ring_push(gp_dl_ring *r, void *host, size_t bytes);

/* Brings every pushed unit to its place; nothing is in flight on return. Returns 0 or the
 * backend's error code (be->last_error() says why; the pending unit is then lost). */
int gp_dl_ring_finish(gp_dl_ring *r);

/* Waits for anything still in flight and frees r's buffers (r zeroed: harmless twice, and
 * on a ring that gp_dl_ring_open failed to open or that was zeroed). */
void gp_dl_ring_close(gp_dl_ring *r);

#endif /* GP_DL_RING_H */

/* cuda_stub.c — the CUDA entry points of gpuprim/kernels.h and cuda_init.h for a build without
 * a CUDA compiler.
 * Compiled instead of the kernels/ .cu files; every query answers "no CUDA". */
#include "backend_table.h"
#include "cuda_init.h"
#include "gpuprim/kernels.h"

#include <stdio.h>

/* No CUDA backend in this build: returns NULL and, when why != NULL and whylen > 0, writes
 * "this build has no CUDA backend (built without nvcc)" (truncated, NUL-terminated) into
 * why[0, whylen). device is ignored. */
const gp_backend *gp_backend_cuda(int device, char *why, size_t whylen)
{
    (void)device;
    if (why && whylen > 0)
        snprintf(why, whylen, "%s", "this build has no CUDA backend (built without nvcc)");
    return NULL;
}

/* No CUDA in this build: always 0 visible devices. */
int gp_cuda_device_count(void) { return 0; }

/* No CUDA in this build: always -1; name and busid, when given with a nonzero length, are
 * set to the empty string. */
int gp_cuda_device_info(int device, char *name, size_t namelen, char *busid, size_t buslen)
{
    (void)device;
    if (name && namelen > 0) name[0] = '\0';
    if (busid && buslen > 0) busid[0] = '\0';
    return -1;
}

/* No CUDA table in this build (backend_table.h): always NULL. */
const gp_backend *gp_backend_cuda_table(void) { return NULL; }

/* No CUDA in this build (cuda_init.h): no context to make, release or destroy; -1 each, and
 * gp_cuda_prepare writes the reason into why when given. */
int gp_cuda_prepare(int device, char *why, size_t whylen)
{
    return gp_backend_cuda(device, why, whylen) ? 0 : -1;
}

int gp_cuda_release(int device)
{
    (void)device;
    return -1;
}

int gp_cuda_teardown(void) { return -1; }

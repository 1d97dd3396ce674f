/* cuda_init.h — the CUDA backend's start and end for a program's main (gpuprim_mpi's
 * startup.c): the context made ahead of gp_backend_cuda, on any thread, released when it was
 * made for the wrong device, and destroyed explicitly where the program asks for it.
 * Private (not installed): kernels/cuda_backend.cu defines these, kernels/cuda_stub.c
 * answers "no CUDA" in a build without it. */
#ifndef GP_CUDA_INIT_H
#define GP_CUDA_INIT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Makes visible device `device` current for the calling thread and creates its primary
 * context (cudaSetDevice, cudaFree(0)); with CUDA_MODULE_LOADING=EAGER (gp_cuda_load_eagerly)
 * the driver loads every kernel then. A later gp_backend_cuda(device) on another thread of the
 * process finds the context made. May run on a helper thread while the main thread is in
 * MPI_Init (the CUDA runtime is thread-safe); touches none of the backend's own state.
 * Returns 0, or -1 with a one-line reason in why[0, whylen) (why may be NULL). */
int gp_cuda_prepare(int device, char *why, size_t whylen);

/* Destroys this process's primary context on visible device `device` (cudaSetDevice,
 * cudaDeviceReset): for a context gp_cuda_prepare made on a device the job then did not
 * choose. Call it before gp_backend_cuda, on the thread that will use the backend. Returns
 * 0 or -1. */
int gp_cuda_release(int device);

/* Destroys the primary context of the current device (cudaDeviceReset) at the end of a
 * program that asks for an explicit teardown (GPUPRIM_FREE_AT_EXIT=1); the process's exit
 * does it otherwise. No call of the backend may follow. Returns 0, or -1 (no context, or
 * the reset failed). */
int gp_cuda_teardown(void);

#ifdef __cplusplus
}
#endif
#endif /* GP_CUDA_INIT_H */

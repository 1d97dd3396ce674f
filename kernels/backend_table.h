/* backend_table.h — private access to the backends' tables for the test of their entries
 * (tests/test_backend_table.c), which needs no device. The CPU table is public
 * (gp_backend_cpu, gpuprim/kernels.h). Not installed.
 */
#ifndef GP_BACKEND_TABLE_H
#define GP_BACKEND_TABLE_H

#include "gpuprim/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA backend's static table as it is, without choosing, initialising or even asking
 * for a device (kernels/cuda_backend.cu); NULL in a build without CUDA (kernels/cuda_stub.c).
 * Its entries may be called only after gp_backend_cuda() returned the same table. */
const gp_backend *gp_backend_cuda_table(void);

#ifdef __cplusplus
}
#endif
#endif /* GP_BACKEND_TABLE_H */

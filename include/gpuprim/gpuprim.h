/* gpuprim.h — the public umbrella header of the gpuprim library.
 *
 *     #include <gpuprim/gpuprim.h>           (installed: include/gpuprim/)
 *     CMake:       find_package(gpuprim) ; target_link_libraries(app PRIVATE gpuprim::gpuprim)
 *     pkg-config:  cc app.c $(pkg-config --cflags --libs gpuprim)
 *
 * What it gives (each header documents its functions):
 *   kernels.h     element types and order keys, the statistics record (gp_stats,
 *                 gp_stats_combine), the backend table gp_backend with the CPU backend
 *                 (gp_backend_cpu) and the CUDA backend (gp_backend_cuda(device), NULL
 *                 with a reason when the build or the machine has none), the built-in
 *                 integrands of the trapezoid rule;
 *   exact_sum.h   the exact (Kulisch) accumulator of exact_sum and its host functions;
 *   dist.h        the distribution of a dataset: numpy's histogram plan (gp_hist_plan),
 *                 the finite range, the radix select's state (gp_select_*), numpy's quantile
 *                 interpolation (gp_quantile_index / _lerp), the runs of equal values (the
 *                 distinct count): the records of the backend's hist, finite_range,
 *                 radix_hist and runs entries;
 *   exchange.h    the distributed operations over an MPI communicator:
 *                   gp_stats_reduce / gp_stats_allreduce  combine every rank's gp_stats in
 *                                   rank order (deterministic for a given rank count),
 *                   gp_exchange_create / _keys / _run / _destroy  rank-level bitonic
 *                                   merge exchange that leaves sorted shards globally
 *                                   sorted across the ranks, moving only the elements
 *                                   that change side (partners on a node map each
 *                                   other's memory, others use MPI; device memory: the
 *                                   shard and one receive buffer of the same size, which
 *                                   the exchange owns), and gp_bitonic_exchange(_pairs),
 *                                   the same on the caller's buffers (mpi transport),
 *                   gp_sendrecv_bytes, gp_agree  (large transfers, agreeing on errors;
 *                                   error.h: the failure kinds);
 *   shard.h       gp_shard_range: the contiguous shard of each rank;
 *   h5io.h        HDF5 shard reads and safe writes over MPI-IO or each rank's own POSIX
 *                 access (gp_h5_open / gp_h5_open_io, gp_h5_read,
 *                 gp_h5_reader_*, gp_h5_write, gp_h5_writer_*, gp_h5_close), with the
 *                 driver choice of iodriver.h (gp_io_choose).
 *
 * A typical program: MPI_Init; the node-local rank (MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED, then MPI_Comm_rank); pick a backend (gp_cuda_device_count() > 0 ?
 * gp_backend_cuda(local_rank % count, ...) : gp_backend_cpu()); alloc + upload a shard;
 * be->stats; gp_stats_allreduce; agree on the slot count m (MPI_Allreduce, MPI_MAX of the
 * shard sizes, or ceil(N/P)) and create the exchange (gp_exchange_create: it allocates
 * the shard buffer of m keys and its receive buffer); upload the shard to
 * gp_exchange_keys(x); be->to_keys + be->sort (keys only) there; gp_exchange_run; be->from_keys on
 * gp_exchange_keys(x) again (the run may switch buffers); gp_exchange_destroy.
 * tests/example/example.c is a complete one. To sort one array on one process (no
 * exchange), be->sort_values does to_keys + sort + from_keys (ascending) in one call.
 *
 * Threading and devices: one device per process and one calling thread. gp_backend_cuda()
 * makes its device current for the thread that calls it, and every later call of the
 * table, of the exchange and of io/ must come from that thread (the backends keep
 * process-wide state: the last error, cached device properties, copy streams, scratch
 * buffers, IPC mappings). Several processes may share one device (ranks of a node with
 * fewer GPUs than ranks); one process never drives two devices. MPI must be initialised
 * (MPI_THREAD_SINGLE or above is enough) before any function of exchange.h or h5io.h.
 *
 * Requirements: MPI (mpi.h) and parallel HDF5 (hdf5.h) headers, which the CMake package and
 * the pkg-config file add. In a build with the CUDA backend GPUPRIM_HAVE_CUDA is defined
 * (to 1) for users as well. Linking needs MPI, HDF5, the C math library, threads and, with
 * the CUDA backend, the static CUDA runtime; both package descriptions list them.
 */
#ifndef GPUPRIM_H
#define GPUPRIM_H

/* The library's version (the CMake project version; gp_version() in kernels.h adds git's). */
#define GPUPRIM_VERSION_MAJOR 0
#define GPUPRIM_VERSION_MINOR 1
#define GPUPRIM_VERSION_PATCH 0

#include "kernels.h"
#include "exact_sum.h"
#include "dist.h"
#include "exchange.h"
#include "shard.h"
#include "h5io.h"

#endif /* GPUPRIM_H */

/* cuda_bitonic.cuh — the multi-block bitonic sort engine shared by the key sort and the
 * key + value sort (cuda_sort.cu: gp_backend.sort without and with values), in namespace
 * bn. Not part of the public contract.
 *
 * The engine is layered the way CUB layers its algorithms; each header includes the one
 * below it, and this one includes them all:
 *   bitonic_policy.cuh   tuning constants; element policies (keys, pairs, mapped tile keys)
 *   bitonic_index.cuh    index math of the mirror-form network: units, tile slots, wide rows
 *   bitonic_units.cuh    register networks and the units that run them (global memory, a
 *                        wide block's two phases, a shared-memory tile)
 *   bitonic_plan.cuh     a tile's compile-time schedule and the host's plan of passes
 *   bitonic_kernels.cuh  the tile blocks' loads and stores, k_tile, k_global, k_wide
 *   bitonic_launch.cuh   the GPU executor of the plan, the CUDA-graph cache, bn::sort
 * Layers 1 to 4 are __host__ __device__ or host code, so tests/test_bitonic_sim.cu (which
 * includes the index and plan headers only) runs the very same code for every unit of every
 * group on the CPU.
 */
#ifndef GP_CUDA_BITONIC_CUH
#define GP_CUDA_BITONIC_CUH

#include "bitonic_policy.cuh"
#include "bitonic_index.cuh"
#include "bitonic_units.cuh"
#include "bitonic_plan.cuh"
#include "bitonic_kernels.cuh"
#include "bitonic_launch.cuh"

#endif /* GP_CUDA_BITONIC_CUH */

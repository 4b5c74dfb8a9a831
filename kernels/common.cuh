/*
 * common.cuh - what every kernel file includes: the CUDA runtime under nvcc, the CPU execution
 * harness (harness/cuda_cpu.h) under a C++ compiler, and the few macros that differ between
 * them (shared memory declarations and kernel launches), so that one kernel source serves both.
 */
#ifndef MGK_COMMON_CUH
#define MGK_COMMON_CUH

#ifdef __CUDACC__
#include <cuda_runtime.h>
#include <math.h>
#define MGK_SHARED(T, name, n) __shared__ T name[n]
#define MGK_SHARED16(T, name, n) __shared__ __align__(16) T name[n] /* 16-byte aligned: vector loads */
#define MGK_LAUNCH(kernel, grid, block, smem, ...) kernel<<<grid, block, smem>>>(__VA_ARGS__)
#define MGK_ON_GPU 1
#else
#include "harness/cuda_cpu.h"
#define MGK_SHARED(T, name, n) T *name = mgk::shared_alloc<T>(n)
#define MGK_SHARED16(T, name, n) MGK_SHARED(T, name, n)
#define MGK_LAUNCH(kernel, grid, block, smem, ...) mgk::launch(grid, block, smem, [&] { kernel(__VA_ARGS__); })
#define MGK_ON_GPU 0
#endif

#include "mgk.h"

#define MGK_FULL_MASK 0xffffffffu

/* sum / max over the 32 lanes of a warp (every lane gets the result) */
__device__ __forceinline__ float mgk_warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(MGK_FULL_MASK, v, o);
    return v;
}
__device__ __forceinline__ float mgk_warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(MGK_FULL_MASK, v, o));
    return v;
}

/* the launcher's status: a launch error (GPU) or MGK_OK */
static inline int mgk_status(void)
{
    return cudaGetLastError() == cudaSuccess ? MGK_OK : MGK_ERR_LAUNCH;
}

#endif

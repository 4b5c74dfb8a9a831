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
#define MGK_SHARED32(T, name, n) __shared__ __align__(32) T name[n] /* 32-byte aligned: wmma tiles */
/* every launch goes to the per-thread default stream (it synchronises with the legacy default stream of the
 * synchronous cudaMemcpy calls, as a blocking stream; unlike the legacy stream it can be captured into a CUDA
 * graph: forward.cu's decode steps) */
#define MGK_LAUNCH(kernel, grid, block, smem, ...) kernel<<<grid, block, smem, cudaStreamPerThread>>>(__VA_ARGS__)
#define MGK_ON_GPU 1
/* a loop over a register array fully unrolled, so that the array stays in registers (a dynamic index puts
 * it in local memory: tests/test_kernels_ptxas.py fails on any stack frame) */
#define MGK_UNROLL _Pragma("unroll")
#else
#include "harness/cuda_cpu.h"
#define MGK_SHARED(T, name, n) T *name = mgk::shared_alloc<T>(n)
#define MGK_SHARED16(T, name, n) MGK_SHARED(T, name, n)
#define MGK_SHARED32(T, name, n) T *name = mgk::shared_alloc<T>(n, 32)
#define MGK_LAUNCH(kernel, grid, block, smem, ...) mgk::launch_kernel(grid, block, smem, kernel, __VA_ARGS__)
#define MGK_ON_GPU 0
#define MGK_UNROLL
#endif

/* 1 where the code being compiled can use bf16 tensor cores (nvcuda::wmma bf16 fragments: sm_80 and later;
 * the harness emulates them): the host side, device code for sm_80+ and the harness.  Device code for an
 * older architecture (nvcc's default target, sm_75) compiles the tensor-core kernels empty, and
 * mgk_matmul_tensor_cores() says so at run time (their binary's architecture, cudaFuncGetAttributes). */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define MGK_TC_ARCH 1
#else
#define MGK_TC_ARCH 0
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

/* a bfloat16 weight (the upper 16 bits of a float32) as float: exact, so that the products and their float32
 * accumulation are those of the C reference over the same rounded weights */
__device__ __forceinline__ float mgk_bf16_to_float(uint16_t b)
{
#if MGK_ON_GPU
    return __uint_as_float((unsigned)b << 16);
#else
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}
__device__ __forceinline__ float mgk_weight(const float *w, long i) { return w[i]; }
__device__ __forceinline__ float mgk_weight(const uint16_t *w, long i) { return mgk_bf16_to_float(w[i]); }

/* the launcher's status: a launch error (GPU) or MGK_OK */
static inline int mgk_status(void)
{
    return cudaGetLastError() == cudaSuccess ? MGK_OK : MGK_ERR_LAUNCH;
}

#endif

/*
 * selftest.cu - checks of the CPU harness itself (tests/test_kernels.py runs them):
 *   ./selftest ok        shuffles, votes, atomics, shared memory and a barrier-correct block
 *                        reduction give the right answers (exit 0)
 *   ./selftest nobarrier the same reduction with its __syncthreads removed: the harness must make
 *                        it give a wrong result (prints WRONG, exit 3)
 *   ./selftest diverge   a __syncthreads that half the block skips: the harness aborts
 *   ./selftest shfldiverge  a shuffle that half the warp skips (it returns): the harness aborts
 *   ./selftest exits     many blocks whose lanes shuffle once and return at once: a lane still
 *                        inside the shuffle's barrier when the others have returned is not a
 *                        divergence (the harness once aborted on it, about once in a few thousand
 *                        warps); exit 0
 *   ./selftest wmma      the tensor-core emulation (nvcuda::wmma): D = A B + C over two k steps, A
 *                        row-major, B column-major, C loaded column-major, D stored row-major by one
 *                        warp and column-major by the other, against a host product; bf16 rounding
 *                        (nearest-even, toward zero) on ties; exit 0
 *   ./selftest wmmadiverge   half a warp returns before an mma_sync: the harness aborts
 *   ./selftest wmmaargs      the lanes of a warp pass different pointers to load_matrix_sync: aborts
 *   ./selftest wmmapartial   a wmma call by a partial warp (a block of 48 threads): aborts
 * Plain C++ on the harness only (the directory is not compiled by setup.py).
 */
#include "../common.cuh"

#include <cstdio>
#include <vector>

/* sum of x[0..n) per block: each thread writes its value to shared memory, then thread 0 adds them */
template <bool Barrier> __global__ void block_sum(float *out, const float *x, int n)
{
    MGK_SHARED(float, buf, 256);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? x[i] : 0.0f;
    if (Barrier)
        __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (unsigned k = 0; k < blockDim.x; k++)
            s += buf[k];
        out[blockIdx.x] = s;
    }
}

__global__ void warp_ops(int *out, float *fsum, int *imax)
{
    int lane = threadIdx.x % 32, t = threadIdx.x;
    float v = (float)t;
    float s = mgk_warp_sum(v);                           /* xor butterfly */
    float down = __shfl_down_sync(MGK_FULL_MASK, v, 1);  /* lane 31 keeps its own */
    float up = __shfl_up_sync(MGK_FULL_MASK, v, 2);      /* lanes 0, 1 keep their own */
    float bc = __shfl_sync(MGK_FULL_MASK, v, 5);
    unsigned bal = __ballot_sync(MGK_FULL_MASK, lane % 3 == 0);
    int any = __any_sync(MGK_FULL_MASK, lane == 7), all = __all_sync(MGK_FULL_MASK, lane < 31);
    int w0 = t - lane;
    int ok = s == (float)(32 * w0 + 496) && down == (float)(lane == 31 ? t : t + 1) &&
             up == (float)(lane < 2 ? t : t - 2) && bc == (float)(w0 + 5) && bal == 0x49249249u && any == 1 &&
             all == 0;
    out[blockIdx.x * blockDim.x + t] = ok;
    atomicAdd(fsum, 1.0f);
    atomicMax(imax, (int)(blockIdx.x * blockDim.x + t));
}

__global__ void diverge(float *out)
{
    if (threadIdx.x < blockDim.x / 2)
        __syncthreads();
    out[threadIdx.x] = 1.0f;
}

__global__ void shfl_diverge(int *out)
{
    if (threadIdx.x % 32 < 16)
        out[threadIdx.x] = __shfl_xor_sync(MGK_FULL_MASK, (int)threadIdx.x, 1);
}

/* a shuffle, a barrier, a shuffle (lanes 16-31 keep their own value: it doubles), then every thread
 * returns: lanes overtake each other at the end */
__global__ void shuffle_then_return(int *out)
{
    int lane = threadIdx.x % 32;
    int v = __shfl_xor_sync(MGK_FULL_MASK, lane, 1);
    __syncthreads();
    v += __shfl_down_sync(MGK_FULL_MASK, v, 16);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

/* D = A B + C: A 16x32 (row-major, ldm 32), B 32x16 (column-major: B[k][n] at bs[n * 32 + k]), C 16x16
 * column-major; warp 0 stores D row-major to out[0..256), warp 1 column-major to out[256..512).
 * mode 1: lanes 16-31 return before the first mma_sync; 2: odd lanes load A from another column */
__global__ void wmma_product(float *out, const float *a, const float *b, const float *c, int mode)
{
    using namespace nvcuda;
    MGK_SHARED32(__nv_bfloat16, as, 16 * 32);
    MGK_SHARED32(__nv_bfloat16, bs, 16 * 32);
    MGK_SHARED32(float, cs, 256);
    MGK_SHARED32(float, ds, 2 * 256);
    for (unsigned i = threadIdx.x; i < 512; i += blockDim.x) {
        as[i] = __float2bfloat16_rn(a[i]);
        bs[i] = __float2bfloat16_rn(b[i]);
    }
    for (unsigned i = threadIdx.x; i < 256; i += blockDim.x)
        cs[i] = c[i];
    __syncthreads();
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::load_matrix_sync(fc, cs, 16, wmma::mem_col_major);
    for (int k = 0; k < 32; k += 16) {
        wmma::load_matrix_sync(fa, as + k + (mode == 2 && lane % 2 ? 16 - k : 0), 32);
        wmma::load_matrix_sync(fb, bs + k, 32);
        if (mode == 1 && lane >= 16)
            return;
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(ds + warp * 256, fc, 16, warp ? wmma::mem_col_major : wmma::mem_row_major);
    __syncwarp();
    for (int i = 0; i < 8; i++)
        out[warp * 256 + lane * 8 + i] = ds[warp * 256 + lane * 8 + i];
}

static int wmma_mode(const std::string &mode)
{
    std::vector<float> a(512), b(512), c(256), out(512, 0.0f);
    for (int i = 0; i < 512; i++) { /* bf16-exact values, and a few that round */
        a[(size_t)i] = (float)(i % 7 - 3) * 0.25f + (i % 37 == 0 ? 1.00390625f : 0.0f);
        b[(size_t)i] = (float)(i % 5 - 2) * 0.5f + (i % 41 == 0 ? 0.01171875f : 0.0f);
    }
    for (int i = 0; i < 256; i++)
        c[(size_t)i] = (float)(i % 9) - 4.0f;
    if (mode == "wmmapartial") {
        MGK_LAUNCH(wmma_product, dim3(1), dim3(48), 0, out.data(), a.data(), b.data(), c.data(), 0);
        std::printf("wmmapartial: not caught\n");
        return 0;
    }
    int m = mode == "wmmadiverge" ? 1 : mode == "wmmaargs" ? 2 : 0;
    MGK_LAUNCH(wmma_product, dim3(1), dim3(64), 0, out.data(), a.data(), b.data(), c.data(), m);
    if (m) {
        std::printf("%s: not caught\n", mode.c_str());
        return 0;
    }
    bool ok = true;
    for (int i = 0; i < 16; i++)
        for (int n = 0; n < 16; n++) {
            double s = c[(size_t)(n * 16 + i)];
            for (int k = 0; k < 32; k++)
                s += (double)__bfloat162float(__float2bfloat16_rn(a[(size_t)(i * 32 + k)])) *
                     __bfloat162float(__float2bfloat16_rn(b[(size_t)(n * 32 + k)]));
            ok &= out[(size_t)(i * 16 + n)] == (float)s && out[(size_t)(256 + n * 16 + i)] == (float)s;
        }
    /* ties to even: 1 + 2^-8 -> 1, 1 + 3 * 2^-8 -> 1 + 2^-6; toward zero: 1 + 3 * 2^-8 -> 1 + 2^-7 */
    ok &= __bfloat162float(__float2bfloat16_rn(1.00390625f)) == 1.0f &&
          __bfloat162float(__float2bfloat16_rn(1.01171875f)) == 1.015625f &&
          __bfloat162float(__float2bfloat16_rz(1.01171875f)) == 1.0078125f &&
          __bfloat16_as_ushort(__float2bfloat16_rn(-2.0f)) == 0xc000u;
    std::printf(ok ? "wmma ok\n" : "wmma WRONG\n");
    return ok ? 0 : 1;
}

/* out[i] = k * in[i] + b: a kernel whose by-value arguments the graph replay must keep */
__global__ void axpb(int *out, const int *in, int k, int b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = k * in[i] + b;
}

/* Stream capture: a captured launch does not run; the graph replays the captured argument values (not the
 * variables' later ones) and a captured cudaMemcpyAsync copies the source's bytes at replay; a synchronous
 * cudaMemcpy or a cudaMalloc during capture invalidates it (cudaStreamEndCapture fails); the legacy stream
 * cannot be captured. */
static int graph_mode()
{
    const int n = 40;
    int *in = nullptr, *out = nullptr;
    std::vector<int> host(n), got(n);
    bool ok = cudaMalloc(&in, n * sizeof(int)) == cudaSuccess && cudaMalloc(&out, n * sizeof(int)) == cudaSuccess;
    for (int i = 0; i < n; i++)
        host[(size_t)i] = i;
    cudaMemset(out, 0, n * sizeof(int));
    int k = 3, b = 1;
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaStreamCaptureStatus st;
    ok &= cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeThreadLocal) != cudaSuccess;
    cudaGetLastError();
    ok &= cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
    ok &= cudaStreamIsCapturing(cudaStreamPerThread, &st) == cudaSuccess && st == cudaStreamCaptureStatusActive;
    ok &= cudaMemcpyAsync(in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice, cudaStreamPerThread) == cudaSuccess;
    MGK_LAUNCH(axpb, dim3(2), dim3(32), 0, out, in, k, b, n);
    k = 100, b = 100; /* after the launch: the graph keeps 3 and 1 */
    ok &= cudaStreamEndCapture(cudaStreamPerThread, &graph) == cudaSuccess && graph;
    ok &= cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess && exec;
    cudaGraphDestroy(graph);
    cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++)
        ok &= got[(size_t)i] == 0; /* nothing ran during the capture */
    for (int rep = 0; rep < 2; rep++) {
        for (int i = 0; i < n; i++)
            host[(size_t)i] = i + 10 * rep; /* read by the copy node at replay */
        ok &= cudaGraphLaunch(exec, cudaStreamPerThread) == cudaSuccess;
        cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost);
        for (int i = 0; i < n; i++)
            ok &= got[(size_t)i] == 3 * (i + 10 * rep) + 1;
    }
    cudaGraphExecDestroy(exec);
    /* refused during a capture, which they invalidate */
    for (int which = 0; which < 2; which++) {
        void *extra = nullptr;
        ok &= cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
        ok &= (which ? cudaMalloc(&extra, 16) : cudaMemcpy(in, host.data(), sizeof(int), cudaMemcpyHostToDevice)) !=
              cudaSuccess;
        ok &= cudaStreamIsCapturing(cudaStreamPerThread, &st) == cudaSuccess && st == cudaStreamCaptureStatusInvalidated;
        MGK_LAUNCH(axpb, dim3(2), dim3(32), 0, out, in, k, b, n);
        ok &= cudaGetLastError() != cudaSuccess;
        ok &= cudaStreamEndCapture(cudaStreamPerThread, &graph) != cudaSuccess && !graph;
        ok &= cudaStreamIsCapturing(cudaStreamPerThread, &st) == cudaSuccess && st == cudaStreamCaptureStatusNone;
    }
    MGK_LAUNCH(axpb, dim3(2), dim3(32), 0, out, in, k, b, n); /* no capture: runs now */
    cudaMemcpy(got.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost);
    ok &= got[5] == 100 * (5 + 10) + 100;
    cudaFree(in);
    cudaFree(out);
    std::printf(ok ? "graph ok\n" : "graph WRONG\n");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    std::string mode = argc > 1 ? argv[1] : "ok";
    const int n = 1000, bs = 256, nb = (n + bs - 1) / bs;
    std::vector<float> x(n);
    for (int i = 0; i < n; i++)
        x[i] = (float)(i % 7);
    std::vector<float> out(nb);
    if (mode == "diverge") {
        std::vector<float> o(64);
        MGK_LAUNCH(diverge, dim3(1), dim3(64), 0, o.data());
        std::printf("diverge: not caught\n");
        return 0;
    }
    if (mode == "shfldiverge") {
        std::vector<int> o(64);
        MGK_LAUNCH(shfl_diverge, dim3(4), dim3(64), 0, o.data());
        std::printf("shfldiverge: not caught\n");
        return 0;
    }
    if (mode.rfind("wmma", 0) == 0)
        return wmma_mode(mode);
    if (mode == "graph")
        return graph_mode();
    if (mode == "exits") {
        const int blocks = 3000, threads = 64;
        std::vector<int> o((size_t)blocks * threads);
        MGK_LAUNCH(shuffle_then_return, dim3(blocks), dim3(threads), 0, o.data());
        bool ok = true;
        for (int b = 0; b < blocks; b++)
            for (int t = 0; t < threads; t++) {
                int lane = t % 32, x = lane ^ 1;
                ok &= o[(size_t)b * threads + t] == (lane < 16 ? x + ((lane + 16) ^ 1) : 2 * x);
            }
        std::printf(ok ? "exits ok\n" : "exits WRONG\n");
        return ok ? 0 : 1;
    }
    bool nob = mode == "nobarrier";
    if (nob)
        MGK_LAUNCH(block_sum<false>, dim3(nb), dim3(bs), 0, out.data(), x.data(), n);
    else
        MGK_LAUNCH(block_sum<true>, dim3(nb), dim3(bs), 0, out.data(), x.data(), n);
    bool right = true;
    for (int b = 0; b < nb; b++) {
        float s = 0.0f;
        for (int i = b * bs; i < n && i < (b + 1) * bs; i++)
            s += x[i];
        right &= out[b] == s;
    }
    if (nob) {
        std::printf(right ? "missing barrier NOT detected\n" : "WRONG: missing barrier detected\n");
        return right ? 0 : 3;
    }
    std::vector<int> flags(3 * 64, 0);
    float fsum = 0.0f;
    int imax = -1;
    MGK_LAUNCH(warp_ops, dim3(3), dim3(64), 0, flags.data(), &fsum, &imax);
    for (int f : flags)
        right &= f == 1;
    right &= fsum == 192.0f && imax == 191;
    std::printf(right ? "selftest ok\n" : "selftest FAILED\n");
    return right ? 0 : 1;
}

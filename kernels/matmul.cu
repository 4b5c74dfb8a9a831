/*
 * matmul.cu - y[n][out] (+)= x[n][in] @ W with W in the engine's packed layout (csrc/model/
 * matmul.h: panels of 16 columns, panel p a contiguous [in][16] block), so the GPU reads the
 * same weights the CPU engine packs.  Reference: mg_matmul_portable (csrc/model/matmul.c).
 *
 *   1: one thread per output element, a plain loop over k (each thread re-reads its row of x and
 *      column of W from global memory: the baseline)
 *   2: 32x32 output tiles per block of 256 threads (32 columns x 8 row groups; each thread four
 *      rows of one column), the k dimension in steps of 32 through shared memory: each element of
 *      x and W read from global memory once per tile instead of 32 times.  The x tile is stored
 *      with a padded row (33) so that the column-wise reads of the inner loop hit distinct banks;
 *      a W tile row is two whole 16-column panels, so its loads are contiguous 64-byte runs.
 *   3: register tiling: 64x128 output tiles per block of 256 threads, each thread 4 rows x 8 columns
 *      (two groups of 4 columns 64 apart) in 32 registers, k in steps of 16 through shared memory.
 *      Per k step a thread reads 4 x values and 8 W values from shared memory (three 16-byte loads on
 *      a GPU) for 32 multiply-adds, where kernel 2 reads 5 values for 4.  The x tile is stored
 *      transposed ([k][row], rows padded to 68 so that its transposing stores spread over the banks
 *      and its rows stay 16-byte aligned); a W tile is 8 whole panels, each k row of a panel a
 *      contiguous 64-byte run, loaded by consecutive threads.  The forward pass uses it where its
 *      tiles reach 40% of the multiprocessors (mgk_matmul_pick), kernel 2 otherwise (decode steps of
 *      few rows, narrow outputs: 64x128 tiles would leave most of the GPU idle).
 *   2 and 3 also read bfloat16 weights (mgk_matmul_bf16: the same packed layout, 2 bytes a weight, half the
 *      weight traffic), converted to float32 exactly as they are staged in shared memory; products and
 *      accumulation stay float32, so the result is the C reference's over the bf16-rounded weights.
 *   4: bfloat16 weights only, on tensor cores (nvcuda::wmma m16n16k16 bf16 fragments, float32 accumulation;
 *      sm_80 and later, mgk_matmul_tensor_cores()): 64x64 output tiles per block of 4 warps, each warp 32x32
 *      in 2 x 2 accumulator fragments, k in steps of 32 through shared memory.  x is rounded to bf16 (nearest,
 *      ties to even) as it is staged: a precision change against 2 and 3, which keep x float32.  Its products
 *      are exact in float32, so the result is the C reference's over bf16-rounded x and W up to the order of
 *      the float32 additions (the driver checks both: that, tightly, and the distance to kernels 2/3's result,
 *      within the bound 2^-8 sum |x w| that rounding x implies).  The bf16 engine uses it from
 *      MGK_TC_MIN_ROWS rows on (mgk_matmul_pick_bf16).
 */
#include "common.cuh"
#include "model/matmul.h"

#if MGK_ON_GPU
#include <cuda_bf16.h>
#include <mma.h>
#endif

static_assert(MG_PANEL == 16, "the kernels index 16-column panels");

__device__ __forceinline__ long packed_at(int in, int k, int j)
{
    return (long)(j / 16) * in * 16 + (long)k * 16 + (j % 16);
}

__global__ void matmul_kernel1(float *y, const float *x, const float *w, int n, int in, int out, int acc)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
    if (j >= out || r >= n)
        return;
    const float *xr = x + (long)r * in;
    float s = 0.0f;
    for (int k = 0; k < in; k++)
        s += xr[k] * w[packed_at(in, k, j)];
    float *yp = y + (long)r * out + j;
    *yp = acc ? *yp + s : s;
}

#define T2 32 /* tile edge (rows, columns and k step) of kernel 2 */

template <typename WT> /* float, or uint16_t: bfloat16 bits */
__global__ void matmul_kernel2(float *y, const float *x, const WT *w, int n, int in, int out, int acc)
{
    MGK_SHARED(float, xs, T2 * (T2 + 1)); /* [row][k], padded */
    MGK_SHARED(float, ws, T2 * T2);       /* [k][col] */
    int tx = threadIdx.x % T2, ty = threadIdx.x / T2; /* column, row group (0..7) */
    int r0 = blockIdx.y * T2, c0 = blockIdx.x * T2;
    float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < in; k0 += T2) {
        for (int q = 0; q < 4; q++) {
            int rr = ty + 8 * q;
            int r = r0 + rr, k = k0 + tx, j = c0 + tx;
            xs[rr * (T2 + 1) + tx] = r < n && k < in ? x[(long)r * in + k] : 0.0f;
            int kk = k0 + rr;
            ws[rr * T2 + tx] = kk < in && j < out ? mgk_weight(w, packed_at(in, kk, j)) : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < T2; k++) {
            float wv = ws[k * T2 + tx];
            for (int q = 0; q < 4; q++)
                s[q] += xs[(ty + 8 * q) * (T2 + 1) + k] * wv;
        }
        __syncthreads();
    }
    int j = c0 + tx;
    for (int q = 0; q < 4; q++) {
        int r = r0 + ty + 8 * q;
        if (r < n && j < out) {
            float *yp = y + (long)r * out + j;
            *yp = acc ? *yp + s[q] : s[q];
        }
    }
}

#define BM3 64  /* kernel 3: rows of a tile */
#define BN3 128 /* columns of a tile: 8 panels */
#define BK3 16  /* k step */
#define XS3 (BM3 + 4) /* padded row of the transposed x tile */

/* four consecutive floats (16-byte aligned; shared or global memory) into registers: one vector load on a GPU */
__device__ __forceinline__ void ld4(const float *p, float *v)
{
#if MGK_ON_GPU
    float4 t = *reinterpret_cast<const float4 *>(p);
    v[0] = t.x, v[1] = t.y, v[2] = t.z, v[3] = t.w;
#else
    v[0] = p[0], v[1] = p[1], v[2] = p[2], v[3] = p[3];
#endif
}

template <typename WT>
__global__ void matmul_kernel3(float *y, const float *x, const WT *w, int n, int in, int out, int acc)
{
    MGK_SHARED16(float, xs, BK3 * XS3); /* [k][row], padded */
    MGK_SHARED16(float, ws, BK3 * BN3); /* [k][col] */
    int tid = threadIdx.x, tx = tid % 16, ty = tid / 16; /* column group, row group */
    int r0 = blockIdx.y * BM3, c0 = blockIdx.x * BN3;
    int panels = (out + 15) / 16;
    float s[4][8];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            s[i][j] = 0.0f;
    int xr = tid / 4, xk = (tid % 4) * 4; /* the x tile elements this thread loads: row, first k */
    int wk = tid / 16, wj = tid % 16;     /* and of each W panel: k row, column */
    for (int k0 = 0; k0 < in; k0 += BK3) {
        for (int q = 0; q < 4; q++) {
            int r = r0 + xr, k = k0 + xk + q;
            xs[(xk + q) * XS3 + xr] = r < n && k < in ? x[(long)r * in + k] : 0.0f;
        }
        for (int q = 0; q < 8; q++) { /* panel q of the tile: 16 k rows x 16 floats, contiguous in W */
            int pnl = c0 / 16 + q, k = k0 + wk;
            ws[wk * BN3 + q * 16 + wj] =
                pnl < panels && k < in ? mgk_weight(w, (long)pnl * in * 16 + (long)k * 16 + wj) : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < BK3; k++) {
            float a[4], b[8];
            ld4(xs + k * XS3 + ty * 4, a);
            ld4(ws + k * BN3 + tx * 4, b);
            ld4(ws + k * BN3 + 64 + tx * 4, b + 4);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 8; j++)
                    s[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++) {
        int r = r0 + ty * 4 + i;
        if (r >= n)
            break;
        for (int j = 0; j < 8; j++) {
            int c = c0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
            if (c < out) {
                float *yp = y + (long)r * out + c;
                *yp = acc ? *yp + s[i][j] : s[i][j];
            }
        }
    }
}

#define BM4 64          /* kernel 4 (tensor cores): rows of a tile */
#define BN4 64          /* columns of a tile: 4 panels */
#define BK4 32          /* k step: two 16-deep wmma steps */
#define XS4 (BK4 + 8)   /* padded row of the x tile, bf16 elements (80 bytes: conflict-free fragment loads) */
#define WS4 (BN4 + 8)   /* padded k row of the W tile (144 bytes) */

/* 8 bfloat16 weights (16 contiguous bytes of a panel row), or zeros (src null), into shared memory */
__device__ __forceinline__ void ld_w8(__nv_bfloat16 *dst, const uint16_t *src)
{
#if MGK_ON_GPU
    *reinterpret_cast<uint4 *>(dst) = src ? *reinterpret_cast<const uint4 *>(src) : make_uint4(0u, 0u, 0u, 0u);
#else
    for (int e = 0; e < 8; e++)
        dst[e] = __ushort_as_bfloat16(src ? src[e] : (uint16_t)0);
#endif
}

/* Kernel 4: tensor cores (nvcuda::wmma, m16n16k16 bf16 fragments, float accumulators; sm_80+).  A block of
 * 128 threads (4 warps, 2 x 2) owns a 64x64 output tile, each warp a 32x32 quarter in 2 x 2 accumulator
 * fragments.  Per k step of 32 the block stages x's 64 x 32 floats, rounded to bf16 (nearest, ties to
 * even), and W's 32 x 64 bf16 weights (4 panels: each k row of a panel 32 contiguous bytes, loaded 16 at a
 * time) in shared memory, zero-filled past n, in and the last panel, then each warp runs 2 x (2 + 2 fragment
 * loads, 4 mma).  The accumulators go out through a 16x16 float staging tile per warp, so that the ragged
 * edges (rows >= n, columns >= out) are never written and `acc` adds to y as kernels 2 and 3 do.  xvec: x's
 * rows are 16-byte aligned (in % 4 == 0 and x aligned): float4 loads. */
__global__ void __launch_bounds__(128) matmul_kernel4(float *y, const float *x, const uint16_t *w, int n, int in,
                                                      int out, int acc, int xvec)
{
#if MGK_TC_ARCH
    using namespace nvcuda;
    MGK_SHARED32(__nv_bfloat16, xs, BM4 * XS4); /* [row][k] */
    MGK_SHARED32(__nv_bfloat16, ws, BK4 * WS4); /* [k][col] */
    MGK_SHARED32(float, cs, 4 * 256);           /* per warp: one 16x16 accumulator on its way out */
    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int wr = (warp / 2) * 32, wc = (warp % 2) * 32; /* the warp's quarter of the tile */
    int r0 = blockIdx.y * BM4, c0 = blockIdx.x * BN4;
    int panels = (out + 15) / 16;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c[2][2];
    MGK_UNROLL
    for (int i = 0; i < 2; i++)
        MGK_UNROLL
        for (int j = 0; j < 2; j++)
            wmma::fill_fragment(c[i][j], 0.0f);
    int xr = tid / 8, xk = (tid % 8) * 4; /* x elements of this thread: rows xr + 16q, k xk .. xk + 3 */
    for (int k0 = 0; k0 < in; k0 += BK4) {
        MGK_UNROLL
        for (int q = 0; q < 4; q++) {
            int rr = xr + 16 * q, r = r0 + rr, k = k0 + xk;
            float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            const float *xp = x + (long)(r < n ? r : 0) * in + k; /* read only for r < n */
            if (r < n && xvec && k + 3 < in) {
                ld4(xp, v);
            } else if (r < n) {
                MGK_UNROLL
                for (int e = 0; e < 4; e++)
                    v[e] = k + e < in ? xp[e] : 0.0f;
            }
            MGK_UNROLL
            for (int e = 0; e < 4; e++)
                xs[rr * XS4 + xk + e] = __float2bfloat16_rn(v[e]);
        }
        MGK_UNROLL
        for (int q = 0; q < 2; q++) { /* 256 runs of 8 weights: panel p, k row kk, half h */
            int ch = tid + 128 * q, p = ch / 64, kk = (ch % 64) / 2, h = (ch % 2) * 8;
            int pnl = c0 / 16 + p, k = k0 + kk;
            ld_w8(ws + kk * WS4 + p * 16 + h,
                  pnl < panels && k < in ? w + (long)pnl * in * 16 + (long)k * 16 + h : nullptr);
        }
        __syncthreads();
        MGK_UNROLL
        for (int ks = 0; ks < BK4; ks += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> b[2];
            MGK_UNROLL
            for (int i = 0; i < 2; i++)
                wmma::load_matrix_sync(a[i], xs + (wr + 16 * i) * XS4 + ks, XS4);
            MGK_UNROLL
            for (int j = 0; j < 2; j++)
                wmma::load_matrix_sync(b[j], ws + ks * WS4 + wc + 16 * j, WS4);
            MGK_UNROLL
            for (int i = 0; i < 2; i++)
                MGK_UNROLL
                for (int j = 0; j < 2; j++)
                    wmma::mma_sync(c[i][j], a[i], b[j], c[i][j]);
        }
        __syncthreads();
    }
    float *st = cs + warp * 256;
    int sr = lane / 2, sc = (lane % 2) * 8; /* this lane's 8 elements of a staged fragment */
    MGK_UNROLL
    for (int i = 0; i < 2; i++)
        MGK_UNROLL
        for (int j = 0; j < 2; j++) {
            wmma::store_matrix_sync(st, c[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            int r = r0 + wr + 16 * i + sr, col = c0 + wc + 16 * j + sc;
            if (r < n) {
                float *yp = y + (long)r * out + col;
                MGK_UNROLL
                for (int e = 0; e < 8; e++)
                    if (col + e < out)
                        yp[e] = acc ? yp[e] + st[sr * 16 + sc + e] : st[sr * 16 + sc + e];
            }
            __syncwarp(); /* every lane has read st before the next fragment overwrites it */
        }
#endif
}

/* Can this process run kernel 4: a device of compute capability 8.0 or later (cudaDevAttrComputeCapabilityMajor)
 * and kernel 4's code built for one (a build for an older target alone, nvcc's default sm_75, has it empty) */
extern "C" int mgk_matmul_tensor_cores(void)
{
    int dev = 0, major = 0;
    cudaFuncAttributes fa;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaFuncGetAttributes(&fa, matmul_kernel4) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return major >= 8 && fa.binaryVersion >= 80;
}

static int matmul_launch4(float *y, const float *x, const uint16_t *w, int n, int in, int out, int accumulate)
{
    if (n < 0 || in < 1 || out < 1 || n > 65535 * BM4 || reinterpret_cast<uintptr_t>(w) % 16u ||
        !mgk_matmul_tensor_cores())
        return MGK_ERR_ARG;
    if (n == 0)
        return MGK_OK;
    int xvec = in % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16u == 0;
    MGK_LAUNCH(matmul_kernel4, dim3((out + BN4 - 1) / BN4, (n + BM4 - 1) / BM4), dim3(128), 0, y, x, w, n, in, out,
               accumulate, xvec);
    return mgk_status();
}

template <typename WT>
static int matmul_launch(int variant, float *y, const float *x, const WT *w, int n, int in, int out, int accumulate)
{
    if (n < 0 || in < 1 || out < 1 || n > 65535 * T2)
        return MGK_ERR_ARG;
    if (n == 0)
        return MGK_OK;
    if (variant == 2)
        MGK_LAUNCH(matmul_kernel2<WT>, dim3((out + T2 - 1) / T2, (n + T2 - 1) / T2), dim3(256), 0, y, x, w, n, in,
                   out, accumulate);
    else if (variant == 3)
        MGK_LAUNCH(matmul_kernel3<WT>, dim3((out + BN3 - 1) / BN3, (n + BM3 - 1) / BM3), dim3(256), 0, y, x, w, n,
                   in, out, accumulate);
    else
        return MGK_ERR_ARG;
    return mgk_status();
}

extern "C" int mgk_matmul(int variant, float *y, const float *x, const float *w, int n, int in, int out,
                          int accumulate)
{
    if (variant != 1)
        return matmul_launch(variant, y, x, w, n, in, out, accumulate);
    if (n < 0 || in < 1 || out < 1 || n > 65535 * T2)
        return MGK_ERR_ARG;
    if (n == 0)
        return MGK_OK;
    MGK_LAUNCH(matmul_kernel1, dim3((out + 127) / 128, n), dim3(128), 0, y, x, w, n, in, out, accumulate);
    return mgk_status();
}

extern "C" int mgk_matmul_bf16(int variant, float *y, const float *x, const uint16_t *w, int n, int in, int out,
                               int accumulate)
{
    if (variant == 4)
        return matmul_launch4(y, x, w, n, in, out, accumulate);
    return matmul_launch(variant, y, x, w, n, in, out, accumulate);
}

/* Kernel 3 once its tiles reach 40% of the multiprocessors.  Measured on an H100 (132 multiprocessors,
 * 2026-11-27, docs/benchmarks.md): 44 tiles (16 x 5632) 211 us against kernel 2's 146, 16 tiles (64 x 2048)
 * 176 against 78; 64 tiles (256 x 2048) 176 against 212, 128 tiles (512 x 2048) 198 against 415. */
extern "C" int mgk_matmul_pick(int n, int out, int sm_count)
{
    long tiles3 = (long)((n + BM3 - 1) / BM3) * ((out + BN3 - 1) / BN3);
    return 5 * tiles3 >= 2 * (long)sm_count ? 3 : 2;
}

/* bf16 weights: kernel 4 (tensor cores) from MGK_TC_MIN_ROWS rows on where the device has them, else as above.
 * Below it (decode steps of a few rows) the weights' bytes bound the time, which kernels 2 and 3 read as
 * kernel 4 does, and x stays float32 there.  Not yet timed on a GPU (docs/kernels.md). */
extern "C" int mgk_matmul_pick_bf16(int n, int out, int sm_count, int tensor_cores)
{
    return tensor_cores && n >= MGK_TC_MIN_ROWS ? 4 : mgk_matmul_pick(n, out, sm_count);
}

#ifdef MGK_MAIN
#include <cstring>

#include "driver.h"

int main(int argc, char **argv)
{
    drv::Rng rng(drv::seed_arg(argc, argv));
    int fails = 0;
    /* n, in, out: edges (1), non-multiples of the tile and the panel, and a random one */
    std::vector<std::vector<int>> shapes = {{1, 1, 1},     {1, 5, 17},    {3, 33, 31}, {33, 64, 48},
                                            {40, 70, 100}, {64, 128, 96}, {65, 130, 129}, {130, 17, 260},
                                            {1 + rng.below(70), 1 + rng.below(150), 1 + rng.below(150)}};
    if (drv::bench_arg(argc, argv))
        shapes.insert(shapes.end(), {{1, 2048, 2048}, {16, 2048, 5632}, {64, 2048, 2048}, {256, 2048, 2048},
                                     {512, 2048, 2048}, {512, 2048, 5632}, {32, 512, 1408}, {256, 512, 1408},
                                     {512, 1408, 512}});
    /* kernel 4 needs tensor cores (sm_80+; the harness emulates an sm_80) */
    int tc = mgk_matmul_tensor_cores();
    if (!tc)
        std::printf("note matmul4-bf16: not checked: no tensor cores (a device before sm_80, or a build without "
                    "sm_80+ code)\n");
    /* mgk_matmul_pick_bf16: kernel 4 from MGK_TC_MIN_ROWS rows, only with tensor cores */
    if (mgk_matmul_pick_bf16(MGK_TC_MIN_ROWS - 1, 4096, 132, 1) == 4 || mgk_matmul_pick_bf16(MGK_TC_MIN_ROWS, 16, 1, 1) != 4 ||
        mgk_matmul_pick_bf16(512, 4096, 132, 0) == 4 || mgk_matmul_pick_bf16(512, 4096, 132, 0) != mgk_matmul_pick(512, 4096, 132)) {
        std::printf("MISMATCH mgk_matmul_pick_bf16: kernel 4 below %d rows or without tensor cores\n", MGK_TC_MIN_ROWS);
        fails++;
    } else {
        std::printf("ok mgk_matmul_pick_bf16: kernel 4 from %d rows on, with tensor cores only\n", MGK_TC_MIN_ROWS);
    }
    double x_err = 0.0, x_rel = 0.0; /* kernel 4 against float32 x: the largest |error|, and / sum |x w| */
    for (auto &s : shapes)
        for (int acc = 0; acc <= 1; acc++) {
            int n = s[0], in = s[1], out = s[2];
            auto x = drv::randv(rng, (size_t)n * in);
            std::vector<float> w(mg_matmul_packed_floats(in, out), 0.0f);
            for (int k = 0; k < in; k++)
                for (int j = 0; j < out; j++)
                    w[mg_pack_at(in, k, j)] = rng.uniform(-1, 1);
            auto y0 = drv::randv(rng, (size_t)n * out), ref = y0;
            mg_matmul_portable(ref.data(), x.data(), w.data(), n, in, out, 0, out, acc);
            float *dx = drv::to_dev(x), *dw = drv::to_dev(w), *dy = drv::dev_alloc<float>(y0.size());
            for (int v = 1; v <= 3; v++) {
                char what[96];
                std::snprintf(what, sizeof what, "matmul%d n=%d in=%d out=%d acc=%d", v, n, in, out, acc);
                cudaMemcpy(dy, y0.data(), y0.size() * sizeof(float), cudaMemcpyHostToDevice);
                if (mgk_matmul(v, dy, dx, dw, n, in, out, acc) != MGK_OK) {
                    std::printf("launch failed: %s\n", what);
                    fails++;
                    continue;
                }
                auto got = drv::to_host(dy, y0.size());
                if (!drv::close(what, got.data(), ref.data(), got.size(), 2e-6f * in, 1e-5f))
                    fails++;
                else if (!acc && n * out >= 1000)
                    drv::report_time(what, drv::time_us([&] { mgk_matmul(v, dy, dx, dw, n, in, out, 0); }));
            }
            /* bf16 weights: the reference over the same weights rounded to bf16 (nearest, ties to even) */
            std::vector<uint16_t> wb(w.size());
            std::vector<float> wr(w.size());
            for (size_t i = 0; i < w.size(); i++) {
                wb[i] = mgk_bf16_round(w[i]);
                uint32_t u = (uint32_t)wb[i] << 16;
                std::memcpy(&wr[i], &u, sizeof u);
            }
            auto refb = y0;
            mg_matmul_portable(refb.data(), x.data(), wr.data(), n, in, out, 0, out, acc);
            uint16_t *dwb = drv::to_dev(wb);
            for (int v = 2; v <= 3; v++) {
                char what[96];
                std::snprintf(what, sizeof what, "matmul%d-bf16 n=%d in=%d out=%d acc=%d", v, n, in, out, acc);
                cudaMemcpy(dy, y0.data(), y0.size() * sizeof(float), cudaMemcpyHostToDevice);
                if (mgk_matmul_bf16(v, dy, dx, dwb, n, in, out, acc) != MGK_OK) {
                    std::printf("launch failed: %s\n", what);
                    fails++;
                    continue;
                }
                auto got = drv::to_host(dy, y0.size());
                if (!drv::close(what, got.data(), refb.data(), got.size(), 2e-6f * in, 1e-5f))
                    fails++;
                else if (!acc && n * out >= 1000)
                    drv::report_time(what, drv::time_us([&] { mgk_matmul_bf16(v, dy, dx, dwb, n, in, out, 0); }));
            }
            if (mgk_matmul_bf16(1, dy, dx, dwb, n, in, out, acc) != MGK_ERR_ARG) {
                std::printf("matmul1-bf16 accepted (kernel 1 has no bf16 variant)\n");
                fails++;
            }
            /* kernel 4 (tensor cores) rounds x to bf16 too: checked tightly against the reference over the
             * bf16-rounded x and W (exact products: only the order of the float32 additions differs), and against
             * kernels 2/3's reference (float32 x) within the bound of rounding x: 2^-8 sum_k |x_k w_k| */
            if (tc) {
                std::vector<float> xr(x.size());
                for (size_t i = 0; i < x.size(); i++) {
                    uint32_t u = (uint32_t)mgk_bf16_round(x[i]) << 16;
                    std::memcpy(&xr[i], &u, sizeof u);
                }
                auto refx = y0;
                mg_matmul_portable(refx.data(), xr.data(), wr.data(), n, in, out, 0, out, acc);
                char what[96];
                std::snprintf(what, sizeof what, "matmul4-bf16 n=%d in=%d out=%d acc=%d", n, in, out, acc);
                cudaMemcpy(dy, y0.data(), y0.size() * sizeof(float), cudaMemcpyHostToDevice);
                if (mgk_matmul_bf16(4, dy, dx, dwb, n, in, out, acc) != MGK_OK) {
                    std::printf("launch failed: %s\n", what);
                    fails++;
                } else {
                    auto got = drv::to_host(dy, y0.size());
                    if (!drv::close(what, got.data(), refx.data(), got.size(), 2e-6f * in, 1e-5f))
                        fails++;
                    /* the precision change against kernels 2/3: |kernel 4 - float32-x reference| / sum |x w|
                     * (sum |x w| = |x| @ |W|, by the reference itself) */
                    std::vector<float> xa(x.size()), wa(wr.size()), sa(y0.size());
                    for (size_t i = 0; i < x.size(); i++)
                        xa[i] = std::fabs(x[i]);
                    for (size_t i = 0; i < wr.size(); i++)
                        wa[i] = std::fabs(wr[i]);
                    mg_matmul_portable(sa.data(), xa.data(), wa.data(), n, in, out, 0, out, 0);
                    int bad = 0;
                    for (size_t i = 0; i < got.size(); i++) {
                        double e = std::fabs((double)got[i] - refb[i]);
                        if (!(e <= sa[i] / 256.0 + 2e-6 * in + 1e-5 * std::fabs(refb[i])) && !bad++)
                            std::printf("MISMATCH %s against float32 x at %zu: got %.9g, reference %.9g, bound %.3g\n",
                                        what, i, got[i], refb[i], sa[i] / 256.0);
                        x_err = std::max(x_err, e);
                        if (sa[i] > 0)
                            x_rel = std::max(x_rel, e / sa[i]);
                    }
                    fails += bad != 0;
                    if (!acc && n * out >= 1000)
                        drv::report_time(what, drv::time_us([&] { mgk_matmul_bf16(4, dy, dx, dwb, n, in, out, 0); }));
                }
            }
            cudaFree(dwb);
            cudaFree(dx);
            cudaFree(dw);
            cudaFree(dy);
        }
    if (tc)
        std::printf("bf16 activations (kernel 4 against kernels 2/3's float32-x reference): max |error| %.3g, "
                    "max |error| / sum |x w| %.3g (bound 2^-8 = %.3g)\n", x_err, x_rel, 1.0 / 256);
    return drv::finish(fails);
}
#endif

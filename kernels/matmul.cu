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
 */
#include "common.cuh"
#include "model/matmul.h"

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

/* four consecutive floats of shared memory (16-byte aligned) into registers: one vector load on a GPU */
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
                                     {512, 2048, 2048}, {512, 2048, 5632}});
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
            cudaFree(dwb);
            cudaFree(dx);
            cudaFree(dw);
            cudaFree(dy);
        }
    return drv::finish(fails);
}
#endif

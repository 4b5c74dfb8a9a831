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

__global__ void matmul_kernel2(float *y, const float *x, const float *w, int n, int in, int out, int acc)
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
            ws[rr * T2 + tx] = kk < in && j < out ? w[packed_at(in, kk, j)] : 0.0f;
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

extern "C" int mgk_matmul(int variant, float *y, const float *x, const float *w, int n, int in, int out,
                          int accumulate)
{
    if (n < 0 || in < 1 || out < 1 || n > 65535 * T2)
        return MGK_ERR_ARG;
    if (n == 0)
        return MGK_OK;
    if (variant == 1)
        MGK_LAUNCH(matmul_kernel1, dim3((out + 127) / 128, n), dim3(128), 0, y, x, w, n, in, out, accumulate);
    else if (variant == 2)
        MGK_LAUNCH(matmul_kernel2, dim3((out + T2 - 1) / T2, (n + T2 - 1) / T2), dim3(256), 0, y, x, w, n, in, out,
                   accumulate);
    else
        return MGK_ERR_ARG;
    return mgk_status();
}

#ifdef MGK_MAIN
#include "driver.h"

int main(int argc, char **argv)
{
    drv::Rng rng(drv::seed_arg(argc, argv));
    int fails = 0;
    /* n, in, out: edges (1), non-multiples of the tile and the panel, and a random one */
    std::vector<std::vector<int>> shapes = {{1, 1, 1},     {1, 5, 17},    {3, 33, 31}, {33, 64, 48},
                                            {40, 70, 100}, {64, 128, 96}, {1 + rng.below(70), 1 + rng.below(150), 1 + rng.below(150)}};
    if (drv::bench_arg(argc, argv))
        shapes.insert(shapes.end(), {{64, 2048, 2048}, {512, 2048, 2048}, {512, 2048, 5632}});
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
            for (int v = 1; v <= 2; v++) {
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
            cudaFree(dx);
            cudaFree(dw);
            cudaFree(dy);
        }
    return drv::finish(fails);
}
#endif

/*
 * rmsnorm.cu - RMSNorm of n rows: out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w.
 * Reference: mg_rmsnorm (csrc/model/layers.c), applied row by row as the engine does.
 *
 *   1: one thread per row (a baseline: coalescing is poor, rows read d apart)
 *   2: one block of 128 threads per row; strided loads (coalesced), warp-shuffle sums, the warps'
 *      partial sums combined in shared memory
 */
#include "common.cuh"

__global__ void rmsnorm_kernel1(float *out, const float *x, const float *w, int n, int d, float eps)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n)
        return;
    const float *xr = x + (long)r * d;
    float ss = 0.0f;
    for (int i = 0; i < d; i++)
        ss += xr[i] * xr[i];
    float s = rsqrtf(ss / d + eps);
    for (int i = 0; i < d; i++)
        out[(long)r * d + i] = xr[i] * s * w[i];
}

__global__ void rmsnorm_kernel2(float *out, const float *x, const float *w, int n, int d, float eps)
{
    MGK_SHARED(float, part, 32);
    int r = blockIdx.x;
    const float *xr = x + (long)r * d;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < d; i += blockDim.x)
        ss += xr[i] * xr[i];
    ss = mgk_warp_sum(ss);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nwarps = blockDim.x / 32;
    if (lane == 0)
        part[warp] = ss;
    __syncthreads();
    float tot = 0.0f;
    for (int k = 0; k < nwarps; k++)
        tot += part[k];
    float s = rsqrtf(tot / d + eps);
    for (int i = threadIdx.x; i < d; i += blockDim.x)
        out[(long)r * d + i] = xr[i] * s * w[i];
    (void)n;
}

extern "C" int mgk_rmsnorm(int variant, float *out, const float *x, const float *w, int n, int d, float eps)
{
    if (n < 0 || d < 1)
        return MGK_ERR_ARG;
    if (n == 0)
        return MGK_OK;
    if (variant == 1)
        MGK_LAUNCH(rmsnorm_kernel1, dim3((n + 127) / 128), dim3(128), 0, out, x, w, n, d, eps);
    else if (variant == 2)
        MGK_LAUNCH(rmsnorm_kernel2, dim3(n), dim3(128), 0, out, x, w, n, d, eps);
    else
        return MGK_ERR_ARG;
    return mgk_status();
}

#ifdef MGK_MAIN
#include "driver.h"
#include "model/layers.h"

int main(int argc, char **argv)
{
    drv::Rng rng(drv::seed_arg(argc, argv));
    int fails = 0;
    std::vector<std::vector<int>> shapes = {{1, 1}, {1, 31}, {3, 33}, {7, 128}, {5, 257}, {2, 1000},
                                            {1 + rng.below(40), 1 + rng.below(700)}};
    if (drv::bench_arg(argc, argv))
        shapes.insert(shapes.end(), {{64, 2048}, {512, 2048}});
    for (auto &s : shapes) {
        int n = s[0], d = s[1];
        auto x = drv::randv(rng, (size_t)n * d, -3, 3), w = drv::randv(rng, (size_t)d);
        std::vector<float> ref((size_t)n * d);
        for (int r = 0; r < n; r++)
            mg_rmsnorm(&ref[(size_t)r * d], &x[(size_t)r * d], w.data(), d, 1e-5f);
        float *dx = drv::to_dev(x), *dw = drv::to_dev(w), *dout = drv::dev_alloc<float>(x.size());
        for (int v = 1; v <= 2; v++) {
            char what[64];
            std::snprintf(what, sizeof what, "rmsnorm%d n=%d d=%d", v, n, d);
            cudaMemset(dout, 0xff, x.size() * sizeof(float));
            if (mgk_rmsnorm(v, dout, dx, dw, n, d, 1e-5f) != MGK_OK) {
                std::printf("launch failed: %s\n", what);
                fails++;
                continue;
            }
            auto got = drv::to_host(dout, x.size());
            if (!drv::close(what, got.data(), ref.data(), got.size(), 1e-5f, 2e-5f))
                fails++;
            else if (n * d >= 1000)
                drv::report_time(what, drv::time_us([&] { mgk_rmsnorm(v, dout, dx, dw, n, d, 1e-5f); }));
        }
        cudaFree(dx);
        cudaFree(dw);
        cudaFree(dout);
    }
    return drv::finish(fails);
}
#endif

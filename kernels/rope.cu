/*
 * rope.cu - rotary embedding in place on n rows of nh heads of hd, each row at its own position
 * (rotate-half pairing: i with i + hd/2), angles from the engine's tables cos/sin[S][hd/2].
 * Reference: mg_rope (csrc/model/layers.c), per row with that row's table rows.
 *
 *   1: one thread per (row, head, pair); pairs are the fastest index, so a warp reads
 *      consecutive table entries and two contiguous half-rows of v
 */
#include "common.cuh"

__global__ void rope_kernel1(float *v, const int *pos, const float *cos_t, const float *sin_t, int n, int nh, int hd)
{
    int h2 = hd / 2;
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x, total = (long)n * nh * h2;
    if (i >= total)
        return;
    int k = (int)(i % h2);
    long rh = i / h2; /* row * nh + head */
    long r = rh / nh;
    float *a = v + rh * hd, *b = a + h2;
    float c = cos_t[(long)pos[r] * h2 + k], s = sin_t[(long)pos[r] * h2 + k];
    float x1 = a[k], x2 = b[k];
    a[k] = x1 * c - x2 * s;
    b[k] = x2 * c + x1 * s;
}

extern "C" int mgk_rope(int variant, float *v, const int *pos, const float *cos_t, const float *sin_t, int n, int nh,
                        int hd)
{
    if (n < 0 || nh < 1 || hd < 2 || hd % 2 || variant != 1)
        return MGK_ERR_ARG;
    long total = (long)n * nh * (hd / 2);
    if (total == 0)
        return MGK_OK;
    MGK_LAUNCH(rope_kernel1, dim3((unsigned)((total + 255) / 256)), dim3(256), 0, v, pos, cos_t, sin_t, n, nh, hd);
    return mgk_status();
}

#ifdef MGK_MAIN
#include "driver.h"
#include "model/layers.h"

int main(int argc, char **argv)
{
    drv::Rng rng(drv::seed_arg(argc, argv));
    int fails = 0;
    const int S = 300;
    /* rows, heads, head_dim */
    const int shapes[][3] = {{1, 1, 2}, {3, 2, 6}, {5, 4, 64}, {17, 3, 128}, {2 + rng.below(30), 1 + rng.below(8), 2 * (1 + rng.below(64))}};
    for (auto &s : shapes) {
        int n = s[0], nh = s[1], hd = s[2], h2 = hd / 2;
        std::vector<float> cs((size_t)S * h2), sn((size_t)S * h2);
        mg_rope_tables(cs.data(), sn.data(), S, hd, 10000.0);
        std::vector<int> pos(n);
        for (auto &p : pos)
            p = rng.below(S);
        auto v = drv::randv(rng, (size_t)n * nh * hd, -2, 2), ref = v;
        for (int r = 0; r < n; r++)
            mg_rope(&ref[(size_t)r * nh * hd], nh, hd, &cs[(size_t)pos[r] * h2], &sn[(size_t)pos[r] * h2]);
        float *dv = drv::to_dev(v), *dc = drv::to_dev(cs), *ds = drv::to_dev(sn);
        int *dp = drv::to_dev(pos);
        char what[64];
        std::snprintf(what, sizeof what, "rope1 n=%d nh=%d hd=%d", n, nh, hd);
        if (mgk_rope(1, dv, dp, dc, ds, n, nh, hd) != MGK_OK) {
            std::printf("launch failed: %s\n", what);
            fails++;
        } else {
            auto got = drv::to_host(dv, v.size());
            if (!drv::close(what, got.data(), ref.data(), got.size(), 1e-6f, 1e-5f))
                fails++;
            else if (n * nh * hd >= 1000) /* timed on the rotated data: only the time matters now */
                drv::report_time(what, drv::time_us([&] { mgk_rope(1, dv, dp, dc, ds, n, nh, hd); }));
        }
        cudaFree(dv);
        cudaFree(dc);
        cudaFree(ds);
        cudaFree(dp);
    }
    return drv::finish(fails);
}
#endif

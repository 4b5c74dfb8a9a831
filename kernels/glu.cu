/*
 * glu.cu - the gated MLP activation in place: g[i] = act(g[i]) * u[i] with act = SiLU (SwiGLU)
 * or the tanh approximation of GELU (GeGLU), over the n = rows * d_ff values of a pass.
 * Reference: mg_glu (csrc/model/layers.c).
 *
 *   1: a grid-stride loop, one element per thread per step (memory-bound: one read of g and u,
 *      one write of g)
 */
#include "common.cuh"

__global__ void glu_kernel1(float *g, const float *u, long n, int geglu)
{
    long stride = (long)gridDim.x * blockDim.x;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float x = g[i];
        if (geglu) {
            const float c = 0.7978845608028654f; /* sqrt(2 / pi) */
            g[i] = 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x))) * u[i];
        } else {
            g[i] = x / (1.0f + expf(-x)) * u[i];
        }
    }
}

extern "C" int mgk_glu(int variant, float *g, const float *u, long n, int geglu)
{
    if (n < 0 || variant != 1)
        return MGK_ERR_ARG;
    if (n == 0)
        return MGK_OK;
    /* at most MAX_BLOCKS blocks, each thread then strides over the rest (on the CPU harness a
     * small cap, so that the tests' shapes exercise the grid-stride loop) */
    const long max_blocks = MGK_ON_GPU ? 4096 : 8;
    long blocks = (n + 255) / 256;
    MGK_LAUNCH(glu_kernel1, dim3((unsigned)(blocks < max_blocks ? blocks : max_blocks)), dim3(256), 0, g, u, n, geglu);
    return mgk_status();
}

#ifdef MGK_MAIN
#include "driver.h"
#include "model/layers.h"

int main(int argc, char **argv)
{
    drv::Rng rng(drv::seed_arg(argc, argv));
    int fails = 0;
    const long sizes[] = {1, 7, 256, 1000, 8 * 256 * 3 + 5, 1 + rng.below(5000)};
    for (long n : sizes)
        for (int geglu = 0; geglu <= 1; geglu++) {
            auto g = drv::randv(rng, (size_t)n, -6, 6), u = drv::randv(rng, (size_t)n, -2, 2), ref = g;
            mg_glu(ref.data(), u.data(), (int)n, geglu);
            float *dg = drv::to_dev(g), *du = drv::to_dev(u);
            char what[64];
            std::snprintf(what, sizeof what, "glu1 %s n=%ld", geglu ? "geglu" : "swiglu", n);
            if (mgk_glu(1, dg, du, n, geglu) != MGK_OK) {
                std::printf("launch failed: %s\n", what);
                fails++;
            } else {
                auto got = drv::to_host(dg, (size_t)n);
                if (!drv::close(what, got.data(), ref.data(), got.size(), 1e-6f, 1e-5f))
                    fails++;
                else if (n >= 1000)
                    drv::report_time(what, drv::time_us([&] { mgk_glu(1, dg, du, n, geglu); }));
            }
            cudaFree(dg);
            cudaFree(du);
        }
    return drv::finish(fails);
}
#endif

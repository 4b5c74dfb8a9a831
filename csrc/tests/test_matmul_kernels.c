/*
 * test_matmul_kernels.c - the SIMD matmul kernels (matmul.h) against each other: the AVX-512
 * kernel gives bit-identical results to the AVX2/FMA one (same sequential sum over k, one FMA per
 * step) for random shapes, ragged rows and columns, accumulate on and off and column splits;
 * both agree with the portable kernel and a double-precision reference up to float rounding;
 * mg_matmul_find names the kernels and refuses unknown names.  Where the CPU lacks AVX-512
 * (or AVX2) the comparisons that need it are skipped, saying so.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/matmul.h"
#include "../rng.h"
#include "mgtest.h"

static mg_test_counts T;

static float uniformish(uint64_t *s) { return (float)((double)(mg_splitmix64(s) >> 11) / 9007199254740992.0 * 2.0 - 1.0); }

/* One shape: y = x @ W with kernels a and b must give the same bits, plain, accumulating, split at
 * a panel boundary into two column ranges and row by row; with check_ref, a's result is checked
 * against a double-precision reference too. */
static void compare(mg_matmul_fn a, mg_matmul_fn b, int n, int in, int out, uint64_t seed, int check_ref)
{
    size_t nx = (size_t)n * in, ny = (size_t)n * out;
    float *x = malloc(sizeof(float) * (nx + 1)), *w = malloc(sizeof(float) * ((size_t)in * out + 1));
    float *wp = calloc(mg_matmul_packed_floats(in, out) + 1, sizeof(float));
    float *ya = malloc(sizeof(float) * (ny + 1)), *yb = malloc(sizeof(float) * (ny + 1));
    float *y0 = malloc(sizeof(float) * (ny + 1));
    if (!x || !w || !wp || !ya || !yb || !y0) {
        fprintf(stderr, "test_matmul_kernels: out of memory\n");
        exit(2);
    }
    uint64_t s = seed;
    for (size_t i = 0; i < nx; i++)
        x[i] = uniformish(&s);
    for (int k = 0; k < in; k++)
        for (int j = 0; j < out; j++)
            wp[mg_pack_at(in, k, j)] = w[(size_t)k * out + j] = uniformish(&s);
    for (size_t i = 0; i < ny; i++)
        y0[i] = uniformish(&s);

    /* plain */
    a(ya, x, wp, n, in, out, 0, out, 0);
    b(yb, x, wp, n, in, out, 0, out, 0);
    int same = memcmp(ya, yb, sizeof(float) * ny) == 0;
    MG_CHECK(same);
    if (!same)
        fprintf(stderr, "  %s vs %s differ: n %d in %d out %d\n", mg_matmul_name(a), mg_matmul_name(b), n, in, out);
    if (check_ref) {
        double worst = 0.0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < out; j++) {
                double ref = 0.0;
                for (int k = 0; k < in; k++)
                    ref += (double)x[(size_t)i * in + k] * w[(size_t)k * out + j];
                double d = fabs(ya[(size_t)i * out + j] - ref);
                worst = d > worst ? d : worst;
            }
        MG_CHECK(worst < 3e-6 * in);
    }
    /* accumulating into the same starting values */
    memcpy(ya, y0, sizeof(float) * ny);
    memcpy(yb, y0, sizeof(float) * ny);
    a(ya, x, wp, n, in, out, 0, out, 1);
    b(yb, x, wp, n, in, out, 0, out, 1);
    MG_CHECK(memcmp(ya, yb, sizeof(float) * ny) == 0);
    /* a column split at a panel boundary (as the engine's threads do) gives the same bits; the
     * columns outside [c0, c1) are left alone */
    if (out > MG_PANEL) {
        int cut = MG_PANEL * (1 + (int)(seed % (uint64_t)((out - 1) / MG_PANEL)));
        memcpy(yb, y0, sizeof(float) * ny);
        b(yb, x, wp, n, in, out, cut, out, 1);
        int untouched = 1;
        for (int i = 0; i < n; i++)
            untouched &= memcmp(yb + (size_t)i * out, y0 + (size_t)i * out, sizeof(float) * (size_t)cut) == 0;
        MG_CHECK(untouched);
        b(yb, x, wp, n, in, out, 0, cut, 1);
        MG_CHECK(memcmp(ya, yb, sizeof(float) * ny) == 0);
    }
    /* row by row gives the same bits as the whole batch (an element depends on its own row only) */
    for (int i = 0; i < n; i++)
        b(yb + (size_t)i * out, x + (size_t)i * in, wp, 1, in, out, 0, out, 0);
    a(ya, x, wp, n, in, out, 0, out, 0);
    MG_CHECK(memcmp(ya, yb, sizeof(float) * ny) == 0);
    free(x);
    free(w);
    free(wp);
    free(ya);
    free(yb);
    free(y0);
}

static void test_names(void)
{
    mg_matmul_fn fn = NULL;
    MG_CHECK(mg_matmul_find("portable", &fn) == 0 && fn == mg_matmul_portable);
    MG_CHECK(mg_matmul_find("auto", &fn) == 0 && fn == mg_matmul_select(1));
    MG_CHECK(mg_matmul_find("", &fn) == 0 && fn == mg_matmul_select(1));
    fn = NULL;
    MG_CHECK(mg_matmul_find("avx1024", &fn) == -1 && fn == NULL);
    MG_CHECK(mg_matmul_find("AVX2", &fn) == -1);
    int r2 = mg_matmul_find("avx2", &fn);
    MG_CHECK(r2 == 0 || r2 == -2);
    if (r2 == 0)
        MG_CHECK(strcmp(mg_matmul_name(fn), "avx2-fma") == 0);
    int r5 = mg_matmul_find("avx512", &fn);
    MG_CHECK(r5 == 0 || r5 == -2);
    if (r5 == 0) {
        MG_CHECK(strcmp(mg_matmul_name(fn), "avx512") == 0);
        MG_CHECK(fn == mg_matmul_select(1)); /* the default where the CPU has it */
    }
    MG_CHECK(mg_matmul_select(0) == mg_matmul_portable);
}

int main(void)
{
    test_names();
    mg_matmul_fn avx2 = NULL, avx512 = NULL;
    int have2 = mg_matmul_find("avx2", &avx2) == 0, have512 = mg_matmul_find("avx512", &avx512) == 0;
    printf("test_matmul_kernels: select(1) = %s\n", mg_matmul_name(mg_matmul_select(1)));
    if (!have2)
        printf("test_matmul_kernels: SKIPPED the kernel comparisons: this CPU has no AVX2/FMA\n");
    else if (!have512)
        printf("test_matmul_kernels: SKIPPED the AVX-512 comparisons: this CPU has no AVX-512 (avx512f/avx512vl)\n");
    if (have2) {
        /* every row count a tile shape covers (1-3 x 8 panels, 4-6 x 4, 7-12 x 2, then balanced 12-row
         * tiles in groups of four panels, several row blocks at in 400), ragged and exact columns */
        const int rows[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 17, 24, 25, 32, 37, 64, 65, 100, 200};
        const int outs[] = {16, 85, 133, 128, 200, 7};
        uint64_t seed = 11;
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++)
            for (size_t oi = 0; oi < sizeof outs / sizeof outs[0]; oi++) {
                int in = (int)(1 + mg_splitmix64(&seed) % 97);
                int small = rows[ri] * in * outs[oi] < 400000;
                if (have512)
                    compare(avx2, avx512, rows[ri], in, outs[oi], seed, small);
                compare(avx2, avx2, rows[ri], in, outs[oi], seed, small && !have512); /* determinism, reference */
            }
        if (have512) {
            compare(avx2, avx512, 200, 400, 85, 5, 1);   /* several row blocks (rows of x per 128 KiB) */
            compare(avx2, avx512, 64, 384, 1536, 6, 0);  /* MLP-sized shapes */
            compare(avx2, avx512, 8, 1536, 384, 7, 0);
            compare(avx2, avx512, 1, 384, 1152, 8, 0);
            for (int t = 0; t < 60; t++) { /* random shapes */
                int n = (int)(1 + mg_splitmix64(&seed) % 70), in = (int)(1 + mg_splitmix64(&seed) % 300);
                int out = (int)(1 + mg_splitmix64(&seed) % 300);
                compare(avx2, avx512, n, in, out, seed, t < 10);
            }
        }
    }
    /* the portable kernel agrees with the reference (and so, up to rounding, with the SIMD ones) */
    compare(mg_matmul_portable, mg_matmul_portable, 9, 37, 85, 3, 1);
    MG_TEST_MAIN_END("test_matmul_kernels");
}

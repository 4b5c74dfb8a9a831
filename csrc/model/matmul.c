/*
 * matmul.c - the portable and AVX2/FMA kernels of matmul.h over packed 16-column panels.
 *
 * Register tile of the AVX2 kernel: 6 rows x 16 columns (12 accumulators, 15 of the 16 vector
 * registers); per k it loads the panel's two 8-float vectors of row k, broadcasts 6 x values and
 * issues 12 FMAs (more independent chains than the FMA latency needs, fewer loads per FMA than a
 * 4-row tile).  Leftover rows use one 4 x 16 tile, then 1 x 16 tiles (four panels at a time where
 * they can); a partial last panel is computed in full (zero padding) and stored in part.
 * Every element sums over k in the same order whatever tile computes it.
 */
#include "matmul.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#define MG_HAVE_X86 1
#include <immintrin.h>
#endif

/* Store a 16-wide row tile into y[c0 .. c0 + w) (w <= 16), adding when accumulating. */
static inline void store_row(float *y, const float *acc, int w, int accumulate)
{
    for (int c = 0; c < w; c++)
        y[c] = accumulate ? y[c] + acc[c] : acc[c];
}

void mg_matmul_portable(float *y, const float *x, const float *w, int n, int in, int out, int c0, int c1,
                        int accumulate)
{
    for (int j = c0; j < c1; j += MG_PANEL) {
        const float *panel = w + (size_t)(j / MG_PANEL) * (size_t)in * MG_PANEL;
        int width = c1 - j < MG_PANEL ? c1 - j : MG_PANEL;
        for (int i = 0; i < n; i++) {
            float acc[MG_PANEL] = {0};
            const float *xr = x + (size_t)i * in;
            for (int k = 0; k < in; k++) {
                const float xv = xr[k], *wr = panel + (size_t)k * MG_PANEL;
                for (int c = 0; c < MG_PANEL; c++)
                    acc[c] += xv * wr[c];
            }
            store_row(y + (size_t)i * out + j, acc, width, accumulate);
        }
    }
}

#ifdef MG_HAVE_X86
__attribute__((target("avx2,fma"))) static inline void store16(float *y, __m256 a, __m256 b, int width,
                                                                 int accumulate)
{
    if (width == MG_PANEL) {
        if (accumulate) {
            a = _mm256_add_ps(_mm256_loadu_ps(y), a);
            b = _mm256_add_ps(_mm256_loadu_ps(y + 8), b);
        }
        _mm256_storeu_ps(y, a);
        _mm256_storeu_ps(y + 8, b);
        return;
    }
    float t[MG_PANEL];
    _mm256_storeu_ps(t, a);
    _mm256_storeu_ps(t + 8, b);
    store_row(y, t, width, accumulate);
}

/* One row against four full panels (64 columns): eight independent accumulator chains, so the
 * FMA latency is hidden for single rows too (decoding at batch 1).  Same order over k per element. */
__attribute__((target("avx2,fma"))) static void row_x4(float *y, const float *x0, const float *panel, int in,
                                                       int accumulate)
{
    const size_t ps = (size_t)in * MG_PANEL;
    __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
    const float *w0 = panel, *w1 = panel + ps, *w2 = panel + 2 * ps, *w3 = panel + 3 * ps;
    for (int k = 0; k < in; k++) {
        __m256 v = _mm256_broadcast_ss(x0 + k);
        size_t o = (size_t)k * MG_PANEL;
        a0 = _mm256_fmadd_ps(v, _mm256_loadu_ps(w0 + o), a0);
        b0 = _mm256_fmadd_ps(v, _mm256_loadu_ps(w0 + o + 8), b0);
        a1 = _mm256_fmadd_ps(v, _mm256_loadu_ps(w1 + o), a1);
        b1 = _mm256_fmadd_ps(v, _mm256_loadu_ps(w1 + o + 8), b1);
        a2 = _mm256_fmadd_ps(v, _mm256_loadu_ps(w2 + o), a2);
        b2 = _mm256_fmadd_ps(v, _mm256_loadu_ps(w2 + o + 8), b2);
        a3 = _mm256_fmadd_ps(v, _mm256_loadu_ps(w3 + o), a3);
        b3 = _mm256_fmadd_ps(v, _mm256_loadu_ps(w3 + o + 8), b3);
    }
    store16(y, a0, b0, MG_PANEL, accumulate);
    store16(y + 16, a1, b1, MG_PANEL, accumulate);
    store16(y + 32, a2, b2, MG_PANEL, accumulate);
    store16(y + 48, a3, b3, MG_PANEL, accumulate);
}

__attribute__((target("avx2,fma"))) static void matmul_avx2(float *y, const float *x, const float *w, int n, int in,
                                                            int out, int c0, int c1, int accumulate)
{
    /* rows that do not fill a tile (6 or 4 rows): four panels at a time while whole panels remain */
    int nt = n - n % 6 + (n % 6 >= 4 ? 4 : 0), jr = c0;
    if (nt < n)
        for (; jr + 4 * MG_PANEL <= c1; jr += 4 * MG_PANEL)
            for (int i = nt; i < n; i++)
                row_x4(y + (size_t)i * out + jr, x + (size_t)i * in, w + (size_t)(jr / MG_PANEL) * in * MG_PANEL, in,
                       accumulate);
    for (int j = c0; j < c1; j += MG_PANEL) {
        const float *panel = w + (size_t)(j / MG_PANEL) * (size_t)in * MG_PANEL;
        int width = c1 - j < MG_PANEL ? c1 - j : MG_PANEL;
        int i = 0;
        for (; i + 6 <= n; i += 6) {
            __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
            __m256 a4 = a0, b4 = a0, a5 = a0, b5 = a0;
            const float *x0 = x + (size_t)i * in, *x1 = x0 + in, *x2 = x1 + in, *x3 = x2 + in, *x4 = x3 + in,
                        *x5 = x4 + in;
            const float *wk = panel;
            for (int k = 0; k < in; k++, wk += MG_PANEL) {
                __m256 w0 = _mm256_loadu_ps(wk), w1 = _mm256_loadu_ps(wk + 8);
                __m256 v = _mm256_broadcast_ss(x0 + k);
                a0 = _mm256_fmadd_ps(v, w0, a0);
                b0 = _mm256_fmadd_ps(v, w1, b0);
                v = _mm256_broadcast_ss(x1 + k);
                a1 = _mm256_fmadd_ps(v, w0, a1);
                b1 = _mm256_fmadd_ps(v, w1, b1);
                v = _mm256_broadcast_ss(x2 + k);
                a2 = _mm256_fmadd_ps(v, w0, a2);
                b2 = _mm256_fmadd_ps(v, w1, b2);
                v = _mm256_broadcast_ss(x3 + k);
                a3 = _mm256_fmadd_ps(v, w0, a3);
                b3 = _mm256_fmadd_ps(v, w1, b3);
                v = _mm256_broadcast_ss(x4 + k);
                a4 = _mm256_fmadd_ps(v, w0, a4);
                b4 = _mm256_fmadd_ps(v, w1, b4);
                v = _mm256_broadcast_ss(x5 + k);
                a5 = _mm256_fmadd_ps(v, w0, a5);
                b5 = _mm256_fmadd_ps(v, w1, b5);
            }
            float *yr = y + (size_t)i * out + j;
            store16(yr, a0, b0, width, accumulate);
            store16(yr + out, a1, b1, width, accumulate);
            store16(yr + 2 * (size_t)out, a2, b2, width, accumulate);
            store16(yr + 3 * (size_t)out, a3, b3, width, accumulate);
            store16(yr + 4 * (size_t)out, a4, b4, width, accumulate);
            store16(yr + 5 * (size_t)out, a5, b5, width, accumulate);
        }
        for (; i + 4 <= n; i += 4) {
            __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
            const float *x0 = x + (size_t)i * in, *x1 = x0 + in, *x2 = x1 + in, *x3 = x2 + in;
            const float *wk = panel;
            for (int k = 0; k < in; k++, wk += MG_PANEL) {
                __m256 w0 = _mm256_loadu_ps(wk), w1 = _mm256_loadu_ps(wk + 8);
                __m256 v = _mm256_broadcast_ss(x0 + k);
                a0 = _mm256_fmadd_ps(v, w0, a0);
                b0 = _mm256_fmadd_ps(v, w1, b0);
                v = _mm256_broadcast_ss(x1 + k);
                a1 = _mm256_fmadd_ps(v, w0, a1);
                b1 = _mm256_fmadd_ps(v, w1, b1);
                v = _mm256_broadcast_ss(x2 + k);
                a2 = _mm256_fmadd_ps(v, w0, a2);
                b2 = _mm256_fmadd_ps(v, w1, b2);
                v = _mm256_broadcast_ss(x3 + k);
                a3 = _mm256_fmadd_ps(v, w0, a3);
                b3 = _mm256_fmadd_ps(v, w1, b3);
            }
            float *yr = y + (size_t)i * out + j;
            store16(yr, a0, b0, width, accumulate);
            store16(yr + out, a1, b1, width, accumulate);
            store16(yr + 2 * (size_t)out, a2, b2, width, accumulate);
            store16(yr + 3 * (size_t)out, a3, b3, width, accumulate);
        }
        for (i = j < jr ? n : i; i < n; i++) { /* (columns before jr: done by row_x4) */
            __m256 a0 = _mm256_setzero_ps(), b0 = a0;
            const float *x0 = x + (size_t)i * in, *wk = panel;
            for (int k = 0; k < in; k++, wk += MG_PANEL) {
                __m256 v = _mm256_broadcast_ss(x0 + k);
                a0 = _mm256_fmadd_ps(v, _mm256_loadu_ps(wk), a0);
                b0 = _mm256_fmadd_ps(v, _mm256_loadu_ps(wk + 8), b0);
            }
            store16(y + (size_t)i * out + j, a0, b0, width, accumulate);
        }
    }
}
#endif

mg_matmul_fn mg_matmul_select(int allow_simd)
{
#ifdef MG_HAVE_X86
    if (allow_simd) {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            return matmul_avx2;
    }
#else
    (void)allow_simd;
#endif
    return mg_matmul_portable;
}

const char *mg_matmul_name(mg_matmul_fn fn)
{
#ifdef MG_HAVE_X86
    if (fn == matmul_avx2)
        return "avx2-fma";
#endif
    return fn == mg_matmul_portable ? "portable" : "?";
}

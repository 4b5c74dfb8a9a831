/*
 * matmul.c - the portable and AVX2/FMA kernels of matmul.h over packed 16-column panels.
 *
 * Register tile of the AVX2 kernel: 6 rows x 16 columns (12 accumulators, 15 of the 16 vector
 * registers); per k it loads the panel's two 8-float vectors of row k, broadcasts 6 x values and
 * issues 12 FMAs (more independent chains than the FMA latency needs, fewer loads per FMA than a
 * 4-row tile).  Leftover rows use one 4 x 16 tile, then (1 to 3 rows) a 1 x 64, 2 x 32 or
 * 3 x 32 tile, at least 8 chains each.  The columns go in groups of four panels, every tile of
 * a group's rows run while the group is in cache (so decoding at batch 8 = 6 + 2 rows reads the
 * weights once, not twice), and the rows in blocks of about 128 KiB of x (prefill of the 384-wide
 * MLP input stays in L2).  A partial last panel is computed in full (zero padding) and stored in
 * part.  Every element sums over k in the same order whatever tile computes it.
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

#define AVX2 __attribute__((target("avx2,fma")))

/* the k loops of the register tiles unrolled 4 times (GCC; clang unrolls them itself) */
#if defined(__GNUC__) && !defined(__clang__)
#define MG_UNROLL4 _Pragma("GCC unroll 4")
#else
#define MG_UNROLL4
#endif

/* Rows [0, nt) (a multiple of 6, then 4 more if nt % 6 == 4) of one panel: 6 x 16 tiles (12
 * accumulators), then one 4 x 16 tile. */
AVX2 static void panel_tiles(float *y, const float *x, const float *panel, int nt, int in, int out, int width,
                             int accumulate)
{
    int i = 0;
    for (; i + 6 <= nt; i += 6) {
        __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
        __m256 a4 = a0, b4 = a0, a5 = a0, b5 = a0;
        const float *x0 = x + (size_t)i * in, *x1 = x0 + in, *x2 = x1 + in, *x3 = x2 + in, *x4 = x3 + in,
                    *x5 = x4 + in;
        const float *wk = panel;
        MG_UNROLL4
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
        float *yr = y + (size_t)i * out;
        store16(yr, a0, b0, width, accumulate);
        store16(yr + out, a1, b1, width, accumulate);
        store16(yr + 2 * (size_t)out, a2, b2, width, accumulate);
        store16(yr + 3 * (size_t)out, a3, b3, width, accumulate);
        store16(yr + 4 * (size_t)out, a4, b4, width, accumulate);
        store16(yr + 5 * (size_t)out, a5, b5, width, accumulate);
    }
    if (i + 4 <= nt) {
        __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
        const float *x0 = x + (size_t)i * in, *x1 = x0 + in, *x2 = x1 + in, *x3 = x2 + in;
        const float *wk = panel;
        MG_UNROLL4
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
        float *yr = y + (size_t)i * out;
        store16(yr, a0, b0, width, accumulate);
        store16(yr + out, a1, b1, width, accumulate);
        store16(yr + 2 * (size_t)out, a2, b2, width, accumulate);
        store16(yr + 3 * (size_t)out, a3, b3, width, accumulate);
    }
}

/* One row against one panel (two accumulator chains: only where nothing wider fits). */
AVX2 static void row_x1(float *y, const float *x0, const float *panel, int in, int width, int accumulate)
{
    __m256 a0 = _mm256_setzero_ps(), b0 = a0;
    const float *wk = panel;
    for (int k = 0; k < in; k++, wk += MG_PANEL) {
        __m256 v = _mm256_broadcast_ss(x0 + k);
        a0 = _mm256_fmadd_ps(v, _mm256_loadu_ps(wk), a0);
        b0 = _mm256_fmadd_ps(v, _mm256_loadu_ps(wk + 8), b0);
    }
    store16(y, a0, b0, width, accumulate);
}

/* Two rows against two panels (8 chains, 4 loads and 2 broadcasts per 8 FMAs). */
AVX2 static void rows2_x2(float *y, const float *x0, const float *panel, int in, int out, int w1, int accumulate)
{
    const size_t ps = (size_t)in * MG_PANEL;
    const float *x1 = x0 + in, *p0 = panel, *p1 = panel + ps;
    __m256 a0 = _mm256_setzero_ps(), b0 = a0, c0 = a0, d0 = a0, a1 = a0, b1 = a0, c1 = a0, d1 = a0;
    MG_UNROLL4
    for (int k = 0; k < in; k++) {
        size_t o = (size_t)k * MG_PANEL;
        __m256 w0 = _mm256_loadu_ps(p0 + o), w1v = _mm256_loadu_ps(p0 + o + 8);
        __m256 w2 = _mm256_loadu_ps(p1 + o), w3 = _mm256_loadu_ps(p1 + o + 8);
        __m256 v = _mm256_broadcast_ss(x0 + k);
        a0 = _mm256_fmadd_ps(v, w0, a0);
        b0 = _mm256_fmadd_ps(v, w1v, b0);
        c0 = _mm256_fmadd_ps(v, w2, c0);
        d0 = _mm256_fmadd_ps(v, w3, d0);
        v = _mm256_broadcast_ss(x1 + k);
        a1 = _mm256_fmadd_ps(v, w0, a1);
        b1 = _mm256_fmadd_ps(v, w1v, b1);
        c1 = _mm256_fmadd_ps(v, w2, c1);
        d1 = _mm256_fmadd_ps(v, w3, d1);
    }
    store16(y, a0, b0, MG_PANEL, accumulate);
    store16(y + MG_PANEL, c0, d0, w1, accumulate);
    store16(y + out, a1, b1, MG_PANEL, accumulate);
    store16(y + out + MG_PANEL, c1, d1, w1, accumulate);
}

/* Three rows against two panels (12 chains, 4 loads and 3 broadcasts per 12 FMAs). */
AVX2 static void rows3_x2(float *y, const float *x0, const float *panel, int in, int out, int w1, int accumulate)
{
    const size_t ps = (size_t)in * MG_PANEL;
    const float *x1 = x0 + in, *x2 = x1 + in, *p0 = panel, *p1 = panel + ps;
    __m256 a0 = _mm256_setzero_ps(), b0 = a0, c0 = a0, d0 = a0, a1 = a0, b1 = a0, c1 = a0, d1 = a0;
    __m256 a2 = a0, b2 = a0, c2 = a0, d2 = a0;
    MG_UNROLL4
    for (int k = 0; k < in; k++) {
        size_t o = (size_t)k * MG_PANEL;
        __m256 w0 = _mm256_loadu_ps(p0 + o), w1v = _mm256_loadu_ps(p0 + o + 8);
        __m256 w2 = _mm256_loadu_ps(p1 + o), w3 = _mm256_loadu_ps(p1 + o + 8);
        __m256 v = _mm256_broadcast_ss(x0 + k);
        a0 = _mm256_fmadd_ps(v, w0, a0);
        b0 = _mm256_fmadd_ps(v, w1v, b0);
        c0 = _mm256_fmadd_ps(v, w2, c0);
        d0 = _mm256_fmadd_ps(v, w3, d0);
        v = _mm256_broadcast_ss(x1 + k);
        a1 = _mm256_fmadd_ps(v, w0, a1);
        b1 = _mm256_fmadd_ps(v, w1v, b1);
        c1 = _mm256_fmadd_ps(v, w2, c1);
        d1 = _mm256_fmadd_ps(v, w3, d1);
        v = _mm256_broadcast_ss(x2 + k);
        a2 = _mm256_fmadd_ps(v, w0, a2);
        b2 = _mm256_fmadd_ps(v, w1v, b2);
        c2 = _mm256_fmadd_ps(v, w2, c2);
        d2 = _mm256_fmadd_ps(v, w3, d2);
    }
    store16(y, a0, b0, MG_PANEL, accumulate);
    store16(y + MG_PANEL, c0, d0, w1, accumulate);
    store16(y + out, a1, b1, MG_PANEL, accumulate);
    store16(y + out + MG_PANEL, c1, d1, w1, accumulate);
    store16(y + 2 * (size_t)out, a2, b2, MG_PANEL, accumulate);
    store16(y + 2 * (size_t)out + MG_PANEL, c2, d2, w1, accumulate);
}

/* Rows [i0, n) (1 to 3 leftover rows) over the columns [g, g1) of one group of up to four panels:
 * the widest tile that fits (1 x 64, 2 or 3 x 32), single panels for what remains. */
AVX2 static void leftover_rows(float *y, const float *x, const float *w, int i0, int n, int in, int out, int g,
                               int g1, int accumulate)
{
    int left = n - i0, j = g;
    const float *xr = x + (size_t)i0 * in;
    float *yr = y + (size_t)i0 * out;
    if (left == 1 && g1 - g == 4 * MG_PANEL) {
        row_x4(yr + g, xr, w + (size_t)(g / MG_PANEL) * in * MG_PANEL, in, accumulate);
        return;
    }
    if (left >= 2)
        for (; j + MG_PANEL < g1; j += 2 * MG_PANEL) { /* two panels, the second possibly partial */
            int w1 = g1 - j - MG_PANEL < MG_PANEL ? g1 - j - MG_PANEL : MG_PANEL;
            const float *panel = w + (size_t)(j / MG_PANEL) * in * MG_PANEL;
            if (left == 2)
                rows2_x2(yr + j, xr, panel, in, out, w1, accumulate);
            else
                rows3_x2(yr + j, xr, panel, in, out, w1, accumulate);
        }
    for (; j < g1; j += MG_PANEL) {
        int width = g1 - j < MG_PANEL ? g1 - j : MG_PANEL;
        for (int i = 0; i < left; i++)
            row_x1(yr + (size_t)i * out + j, xr + (size_t)i * in, w + (size_t)(j / MG_PANEL) * in * MG_PANEL, in,
                   width, accumulate);
    }
}

/* Row blocks of about 128 KiB of x (a multiple of 6 rows): a block and a group of panels stay in
 * the 512 KiB L2 cache while its tiles run. */
#define MG_XBLOCK_FLOATS (32 * 1024)

AVX2 static void matmul_avx2(float *y, const float *x, const float *w, int n, int in, int out, int c0, int c1,
                             int accumulate)
{
    int rb = MG_XBLOCK_FLOATS / (in > 0 ? in : 1);
    rb = rb < 6 ? 6 : rb - rb % 6;
    for (int r0 = 0; r0 < n; r0 += rb) {
        int rn = n - r0 < rb ? n - r0 : rb;
        int nt = rn - rn % 6 + (rn % 6 >= 4 ? 4 : 0);
        const float *xb = x + (size_t)r0 * in;
        float *yb = y + (size_t)r0 * out;
        /* groups of four panels: each group's panels are read from memory once for all the rows */
        for (int g = c0; g < c1; g += 4 * MG_PANEL) {
            int g1 = g + 4 * MG_PANEL < c1 ? g + 4 * MG_PANEL : c1;
            if (nt > 0)
                for (int j = g; j < g1; j += MG_PANEL)
                    panel_tiles(yb + j, xb, w + (size_t)(j / MG_PANEL) * in * MG_PANEL, nt, in, out,
                                g1 - j < MG_PANEL ? g1 - j : MG_PANEL, accumulate);
            if (nt < rn)
                leftover_rows(yb, xb, w, nt, rn, in, out, g, g1, accumulate);
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

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
 *
 * The AVX-512 kernel (matmul_avx512, below) uses the same panels with one panel row per zmm
 * register and the same per-element sequence of FMAs, so its results are bit-identical to the
 * AVX2 kernel's; mg_matmul_select prefers it where the CPU has avx512f and avx512vl.
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

/* ---- AVX-512 ------------------------------------------------------------------------------
 * One panel row is one zmm register.  A tile of R rows x P panels keeps R * P accumulators (at
 * most 24 of the 32 registers: 1-3 rows x 8 panels, 4-6 x 4, 7-12 x 2) and per k loads the P panel rows, broadcasts R x values and issues
 * R * P FMAs (R * P + min(R, P) + 1 <= 29 registers live): the same sequential sum over k, one FMA per element and step, as the AVX2 kernel
 * (and the same final add when accumulating), so the two give bit-identical results.  The
 * panels per tile grow as the rows shrink so there are always at least 8 independent chains
 * (1 row x 8 panels at batch 1).  A partial last panel is stored with a mask. */
#define AVX512 __attribute__((target("avx512f,avx512vl,fma")))

#if defined(__clang__)
#define MG_UNROLL_FULL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define MG_UNROLL_FULL _Pragma("GCC unroll 32")
#else
#define MG_UNROLL_FULL
#endif

/* the largest row tile, and the panels of a tile of r rows */
#define MG_R512 12
static inline int panels_for_rows_avx512(int r) { return r <= 3 ? 8 : r <= 6 ? 4 : 2; }

typedef void (*tile512_fn)(float *y, const float *x, const float *panel, int in, int out, unsigned last,
                           int accumulate);

/* tileRxP_avx512: rows [0, R) of x against panels [0, P) from `panel` into y (row stride out),
 * the last panel's stored lanes given by the mask `last`. */
#define MG_TILE512(R, P)                                                                                         \
    AVX512 static void tile##R##x##P##_avx512(float *y, const float *x, const float *panel, int in, int out,     \
                                              unsigned last, int accumulate)                                     \
    {                                                                                                            \
        const size_t ps = (size_t)in * MG_PANEL;                                                                 \
        __m512 acc[R][P];                                                                                        \
        MG_UNROLL_FULL for (int r = 0; r < R; r++) MG_UNROLL_FULL for (int p = 0; p < P; p++) acc[r][p] =       \
            _mm512_setzero_ps();                                                                                 \
        const float *wk = panel;                                                                                 \
        for (int k = 0; k < in; k++, wk += MG_PANEL) {                                                           \
            if (P > R) { /* R broadcasts live, one panel row at a time */                                       \
                __m512 xv[R];                                                                                    \
                MG_UNROLL_FULL for (int r = 0; r < R; r++) xv[r] = _mm512_set1_ps(x[(size_t)r * in + k]);        \
                MG_UNROLL_FULL for (int p = 0; p < P; p++)                                                       \
                {                                                                                                \
                    __m512 wv = _mm512_loadu_ps(wk + (size_t)p * ps);                                            \
                    MG_UNROLL_FULL for (int r = 0; r < R; r++) acc[r][p] = _mm512_fmadd_ps(xv[r], wv, acc[r][p]); \
                }                                                                                                \
            } else { /* P panel rows live, one broadcast at a time */                                            \
                __m512 wv[P];                                                                                    \
                MG_UNROLL_FULL for (int p = 0; p < P; p++) wv[p] = _mm512_loadu_ps(wk + (size_t)p * ps);         \
                MG_UNROLL_FULL for (int r = 0; r < R; r++)                                                       \
                {                                                                                                \
                    __m512 v = _mm512_set1_ps(x[(size_t)r * in + k]);                                            \
                    MG_UNROLL_FULL for (int p = 0; p < P; p++) acc[r][p] = _mm512_fmadd_ps(v, wv[p], acc[r][p]); \
                }                                                                                                \
            }                                                                                                    \
        }                                                                                                        \
        MG_UNROLL_FULL for (int r = 0; r < R; r++) MG_UNROLL_FULL for (int p = 0; p < P; p++)                    \
        {                                                                                                        \
            float *yp = y + (size_t)r * out + (size_t)p * MG_PANEL;                                              \
            __mmask16 m = (__mmask16)(p == P - 1 ? last : 0xFFFFu);                                              \
            __m512 a = acc[r][p];                                                                                \
            if (accumulate)                                                                                      \
                a = _mm512_add_ps(_mm512_maskz_loadu_ps(m, yp), a);                                              \
            _mm512_mask_storeu_ps(yp, m, a);                                                                     \
        }                                                                                                        \
    }

#define MG_TILES512_2(R) MG_TILE512(R, 1) MG_TILE512(R, 2)
#define MG_TILES512_4(R) MG_TILES512_2(R) MG_TILE512(R, 3) MG_TILE512(R, 4)
#define MG_TILES512_8(R) MG_TILES512_4(R) MG_TILE512(R, 5) MG_TILE512(R, 6) MG_TILE512(R, 7) MG_TILE512(R, 8)
MG_TILES512_8(1)
MG_TILES512_8(2)
MG_TILES512_8(3)
MG_TILES512_4(4)
MG_TILES512_4(5)
MG_TILES512_4(6)
MG_TILES512_2(7)
MG_TILES512_2(8)
MG_TILES512_2(9)
MG_TILES512_2(10)
MG_TILES512_2(11)
MG_TILES512_2(12)

#define MG_T2(R) {NULL, tile##R##x1_avx512, tile##R##x2_avx512, NULL, NULL, NULL, NULL, NULL, NULL}
#define MG_T4(R) {NULL, tile##R##x1_avx512, tile##R##x2_avx512, tile##R##x3_avx512, tile##R##x4_avx512, NULL, NULL, NULL, NULL}
#define MG_T8(R)                                                                                                 \
    {NULL, tile##R##x1_avx512, tile##R##x2_avx512, tile##R##x3_avx512, tile##R##x4_avx512, tile##R##x5_avx512,    \
     tile##R##x6_avx512, tile##R##x7_avx512, tile##R##x8_avx512}

/* the tile of r rows (1 to 12) and p panels (1 to panels_for_rows_avx512(r)) */
AVX512 static tile512_fn tile_for_avx512(int r, int p)
{
    static const tile512_fn tiles[MG_R512 + 1][9] = {
        {NULL}, MG_T8(1), MG_T8(2), MG_T8(3), MG_T4(4), MG_T4(5), MG_T4(6), MG_T2(7),
        MG_T2(8), MG_T2(9), MG_T2(10), MG_T2(11), MG_T2(12)};
    return tiles[r][p];
}

/* Rows [0, r) (r <= 12) over the columns [g, g1): tiles of r rows and up to panels_for_rows(r) panels. */
AVX512 static void rows_avx512(float *y, const float *x, const float *w, int r, int in, int out, int g, int g1,
                               int accumulate)
{
    const int pmax = panels_for_rows_avx512(r);
    for (int j = g; j < g1; j += pmax * MG_PANEL) {
        int np = (g1 - j + MG_PANEL - 1) / MG_PANEL;
        np = np < pmax ? np : pmax;
        int wl = g1 - j - (np - 1) * MG_PANEL; /* width of the last panel, 1 to 16 */
        unsigned last = wl >= MG_PANEL ? 0xFFFFu : (1u << wl) - 1u;
        tile_for_avx512(r, np)(y + j, x, w + (size_t)(j / MG_PANEL) * in * MG_PANEL, in, out, last, accumulate);
    }
}

/* Row blocks of about 128 KiB of x as in the AVX2 kernel; a block of at most 12 rows is one row
 * tile (every panel read once); a larger one is split into near-equal tiles of at most 12 rows
 * that run group by group of four panels (the group's panels stay in cache across the tiles). */
AVX512 static void matmul_avx512(float *y, const float *x, const float *w, int n, int in, int out, int c0, int c1,
                                 int accumulate)
{
    int rb = MG_XBLOCK_FLOATS / (in > 0 ? in : 1);
    rb = rb < MG_R512 ? MG_R512 : rb - rb % MG_R512;
    for (int r0 = 0; r0 < n; r0 += rb) {
        int rn = n - r0 < rb ? n - r0 : rb;
        const float *xb = x + (size_t)r0 * in;
        float *yb = y + (size_t)r0 * out;
        if (rn <= MG_R512) {
            rows_avx512(yb, xb, w, rn, in, out, c0, c1, accumulate);
            continue;
        }
        int tiles = (rn + MG_R512 - 1) / MG_R512, base = rn / tiles, extra = rn % tiles;
        for (int g = c0; g < c1; g += 4 * MG_PANEL) {
            int g1 = g + 4 * MG_PANEL < c1 ? g + 4 * MG_PANEL : c1;
            for (int t = 0, i = 0; t < tiles; t++) {
                int r = base + (t < extra);
                rows_avx512(yb + (size_t)i * out, xb + (size_t)i * in, w, r, in, out, g, g1, accumulate);
                i += r;
            }
        }
    }
}
#endif

#ifdef MG_HAVE_X86
/* the CPU runs the AVX-512 kernel: avx512f and avx512vl (and AVX2/FMA, which the layers and the
 * policy network's transforms use wherever a SIMD matmul kernel was chosen) */
static int cpu_has_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static int cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

mg_matmul_fn mg_matmul_select(int allow_simd)
{
#ifdef MG_HAVE_X86
    if (allow_simd) {
        if (cpu_has_avx512())
            return matmul_avx512;
        if (cpu_has_avx2())
            return matmul_avx2;
    }
#else
    (void)allow_simd;
#endif
    return mg_matmul_portable;
}

int mg_matmul_find(const char *name, mg_matmul_fn *fn)
{
    if (!name || !*name || strcmp(name, "auto") == 0) {
        *fn = mg_matmul_select(1);
        return 0;
    }
    if (strcmp(name, "portable") == 0) {
        *fn = mg_matmul_portable;
        return 0;
    }
    if (strcmp(name, "avx2") == 0 || strcmp(name, "avx2-fma") == 0) {
#ifdef MG_HAVE_X86
        if (cpu_has_avx2()) {
            *fn = matmul_avx2;
            return 0;
        }
#endif
        return -2;
    }
    if (strcmp(name, "avx512") == 0) {
#ifdef MG_HAVE_X86
        if (cpu_has_avx512()) {
            *fn = matmul_avx512;
            return 0;
        }
#endif
        return -2;
    }
    return -1;
}

const char *mg_matmul_name(mg_matmul_fn fn)
{
#ifdef MG_HAVE_X86
    if (fn == matmul_avx2)
        return "avx2-fma";
    if (fn == matmul_avx512)
        return "avx512";
#endif
    return fn == mg_matmul_portable ? "portable" : "?";
}

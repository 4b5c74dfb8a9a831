/*
 * fma_peak.c - the core's own single-precision FMA peak, to read the native engine's GFLOP/s
 * (bench/inference.py) against: independent chains of 256-bit FMAs (AVX2) and, where the CPU has
 * AVX-512 (avx512f), of 512-bit FMAs, no memory traffic.
 *
 *   gcc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L bench/fma_peak.c -o /tmp/fma_peak && /tmp/fma_peak
 *
 * Prints GFLOP/s (2 FLOPs x 8 lanes per FMA) for 4, 8, 10 and 12 independent accumulator chains on
 * one thread (then 2 x 16 lanes per 512-bit FMA for 4, 8, 12, 16 and 24 chains where there is AVX-512), each the best of 7 runs of about 0.1 s (the machine is shared: the best run is
 * the one least disturbed).  The peak is the largest figure: enough chains to cover the FMA
 * latency times the FMA ports (Zen 3: 4 cycles x 2 ports = 8 chains; Intel client cores 4 x 2).
 * Without AVX2/FMA on the CPU it says so and exits 1; without AVX-512 it says so after the 256-bit
 * figures.
 */
#include <stdio.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); /* CPU time: robust to a shared machine */
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* `iters` rounds of CH independent FMAs a_i = a_i * m + c, written out so that every accumulator
 * stays in a register (CH <= 12: 12 accumulators, m and c, of the 16 vector registers); returns a
 * checksum (kept live). */
#define F(i) a##i = _mm256_fmadd_ps(a##i, m, c)
#define INIT(i) __m256 a##i = _mm256_set1_ps(1.0f + 0.01f * (float)(i))
#define KERNEL(NAME, DECL, BODY, SUM)                                                                             \
    AVX2 static float NAME(long iters)                                                                              \
    {                                                                                                               \
        const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);                                     \
        DECL;                                                                                                       \
        for (long k = 0; k < iters; k++) {                                                                          \
            BODY;                                                                                                   \
        }                                                                                                           \
        __m256 s = SUM;                                                                                             \
        float out[8];                                                                                               \
        _mm256_storeu_ps(out, s);                                                                                   \
        return out[0] + out[7];                                                                                     \
    }
#define ADD(x, y) _mm256_add_ps(x, y)

KERNEL(chains4, INIT(0); INIT(1); INIT(2); INIT(3), F(0); F(1); F(2); F(3), ADD(ADD(a0, a1), ADD(a2, a3)))
KERNEL(chains8, INIT(0); INIT(1); INIT(2); INIT(3); INIT(4); INIT(5); INIT(6); INIT(7),
       F(0); F(1); F(2); F(3); F(4); F(5); F(6); F(7), ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7))))
KERNEL(chains10, INIT(0); INIT(1); INIT(2); INIT(3); INIT(4); INIT(5); INIT(6); INIT(7); INIT(8); INIT(9),
       F(0); F(1); F(2); F(3); F(4); F(5); F(6); F(7); F(8); F(9),
       ADD(ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7))), ADD(a8, a9)))
KERNEL(chains12, INIT(0); INIT(1); INIT(2); INIT(3); INIT(4); INIT(5); INIT(6); INIT(7); INIT(8); INIT(9); INIT(10);
       INIT(11), F(0); F(1); F(2); F(3); F(4); F(5); F(6); F(7); F(8); F(9); F(10); F(11),
       ADD(ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7))), ADD(ADD(a8, a9), ADD(a10, a11))))

/* the same with 512-bit FMAs (CH <= 24 of the 32 zmm registers) */
#define AVX512 __attribute__((target("avx512f,fma")))
#define G(i) z##i = _mm512_fmadd_ps(z##i, m, c)
#define ZINIT(i) __m512 z##i = _mm512_set1_ps(1.0f + 0.01f * (float)(i))
#define ZKERNEL(NAME, CH)                                                                                          \
    AVX512 static float NAME(long iters)                                                                           \
    {                                                                                                              \
        const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);                                    \
        ZINIT(0); ZINIT(1); ZINIT(2); ZINIT(3); ZINIT(4); ZINIT(5); ZINIT(6); ZINIT(7);                            \
        ZINIT(8); ZINIT(9); ZINIT(10); ZINIT(11); ZINIT(12); ZINIT(13); ZINIT(14); ZINIT(15);                      \
        ZINIT(16); ZINIT(17); ZINIT(18); ZINIT(19); ZINIT(20); ZINIT(21); ZINIT(22); ZINIT(23);                    \
        for (long k = 0; k < iters; k++) {                                                                         \
            G(0); G(1); G(2); G(3);                                                                                \
            if (CH > 4) { G(4); G(5); G(6); G(7); }                                                                \
            if (CH > 8) { G(8); G(9); G(10); G(11); }                                                              \
            if (CH > 12) { G(12); G(13); G(14); G(15); }                                                           \
            if (CH > 16) { G(16); G(17); G(18); G(19); G(20); G(21); G(22); G(23); }                               \
        }                                                                                                          \
        __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(z0, z1), _mm512_add_ps(z2, z3)),                     \
                                 _mm512_add_ps(_mm512_add_ps(z4, z5), _mm512_add_ps(z6, z7)));                     \
        s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(z8, z9), _mm512_add_ps(z10, z11)),          \
                                           _mm512_add_ps(_mm512_add_ps(z12, z13), _mm512_add_ps(z14, z15))));      \
        s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(z16, z17), _mm512_add_ps(z18, z19)),        \
                                           _mm512_add_ps(_mm512_add_ps(z20, z21), _mm512_add_ps(z22, z23))));      \
        float out[16];                                                                                             \
        _mm512_storeu_ps(out, s);                                                                                  \
        return out[0] + out[15];                                                                                   \
    }

ZKERNEL(zchains4, 4)
ZKERNEL(zchains8, 8)
ZKERNEL(zchains12, 12)
ZKERNEL(zchains16, 16)
ZKERNEL(zchains24, 24)

/* GFLOP/s of the best of 7 runs of fn (flops per iteration given), about 0.05 s or more each */
static double best_of_7(float (*fn)(long), double flops_per_iter, double *sink)
{
    long iters = 1000000;
    double dt = 0.0;
    while ((dt = now(), *sink += fn(iters), dt = now() - dt) < 0.05)
        iters *= 2;
    double best = 0.0;
    for (int r = 0; r < 7; r++) {
        double t0 = now();
        *sink += fn(iters);
        double g = flops_per_iter * (double)iters / (now() - t0) / 1e9;
        best = g > best ? g : best;
    }
    return best;
}

int main(void)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        printf("this CPU has no AVX2/FMA\n");
        return 1;
    }
    float (*fns[])(long) = {chains4, chains8, chains10, chains12};
    const int counts[] = {4, 8, 10, 12};
    double peak = 0.0, sink = 0.0;
    printf("single-precision FMA peak, one thread, 256-bit FMAs (best of 7 runs):\n");
    for (int f = 0; f < 4; f++) {
        double best = best_of_7(fns[f], 16.0 * counts[f], &sink);
        peak = best > peak ? best : peak;
        printf("  %2d chains: %7.1f GFLOP/s\n", counts[f], best);
    }
    printf("peak: %.1f GFLOP/s (checksum %g)\n", peak, sink);
    if (!__builtin_cpu_supports("avx512f")) {
        printf("this CPU has no AVX-512: no 512-bit figures\n");
        return 0;
    }
    float (*zfns[])(long) = {zchains4, zchains8, zchains12, zchains16, zchains24};
    const int zcounts[] = {4, 8, 12, 16, 24};
    double zpeak = 0.0;
    printf("single-precision FMA peak, one thread, 512-bit FMAs (best of 7 runs):\n");
    for (int f = 0; f < 5; f++) {
        double best = best_of_7(zfns[f], 32.0 * zcounts[f], &sink);
        zpeak = best > zpeak ? best : zpeak;
        printf("  %2d chains: %7.1f GFLOP/s\n", zcounts[f], best);
    }
    printf("peak (512-bit): %.1f GFLOP/s (checksum %g)\n", zpeak, sink);
    return 0;
}
#else
int main(void)
{
    printf("fma_peak: x86-64 only\n");
    return 1;
}
#endif

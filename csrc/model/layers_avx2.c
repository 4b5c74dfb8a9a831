/*
 * layers_avx2.c - AVX2/FMA versions of the engine's per-row attention, SwiGLU activation and token
 * choice (layers.h, choose.h), chosen at run time with the matmul kernel (mg_layers_select).
 *
 * Attention: a query head's scores over 8 cached keys at a time (8 independent dot products, one
 * horizontal-add tree into one vector: every score is reduced in the same fixed order whatever
 * its position in a block, so a position's score never depends on the sequence length), the
 * softmax with a vectorised exp, the values summed in two interleaved chains (even and odd
 * positions).  The exponential is Cephes' expf polynomial (about 1 ulp over the range used).
 * The token choice compares floats only, so its answer is exactly the portable one's.
 * Every value depends only on its own row, as in the portable versions; it differs from
 * them by float rounding only.
 */
#include "layers.h"

#include <math.h>
#include <string.h>

#include "choose.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))

/* e^x for x in about [-87.3, 88] (inputs clamped there): Cephes expf. */
AVX2 static inline __m256 exp8_avx2(__m256 x)
{
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.33654f)), _mm256_set1_ps(88.0f));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    __m256 y = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

/* lanes [0, n) set (n in [0, 8]) */
AVX2 static inline __m256i lane_mask_avx2(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* [sum(a[0]), ..., sum(a[7])]: the horizontal sums of eight vectors, a fixed tree per lane */
AVX2 static inline __m256 hsum8x8_avx2(const __m256 *a)
{
    __m256 s01 = _mm256_hadd_ps(a[0], a[1]), s23 = _mm256_hadd_ps(a[2], a[3]);
    __m256 s45 = _mm256_hadd_ps(a[4], a[5]), s67 = _mm256_hadd_ps(a[6], a[7]);
    __m256 s03 = _mm256_hadd_ps(s01, s23), s47 = _mm256_hadd_ps(s45, s67);
    return _mm256_add_ps(_mm256_permute2f128_ps(s03, s47, 0x20), _mm256_permute2f128_ps(s03, s47, 0x31));
}

AVX2 static inline float hmax_avx2(__m256 v)
{
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

AVX2 static inline float hsum_avx2(__m256 v)
{
    __m128 m = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_add_ps(m, _mm_movehl_ps(m, m));
    m = _mm_add_ss(m, _mm_shuffle_ps(m, m, 1));
    return _mm_cvtss_f32(m);
}

#define MAX_NV 8 /* head_dim up to 64 in the vector path */

AVX2 static void attention_avx2(float *out, const float *q, const float *kc, const float *vc, int len, int H, int KV,
                                int hd, float *scores)
{
    if (hd % 8 != 0 || hd > 8 * MAX_NV) {
        mg_attention(out, q, kc, vc, len, H, KV, hd, scores);
        return;
    }
    const int rep = H / KV, kvd = KV * hd, nv = hd / 8;
    const __m256 scale = _mm256_set1_ps(1.0f / sqrtf((float)hd)), ninf = _mm256_set1_ps(-INFINITY);
    for (int h = 0; h < H; h++) {
        const float *qh = q + (size_t)h * hd, *kb = kc + (size_t)(h / rep) * hd, *vb = vc + (size_t)(h / rep) * hd;
        __m256 qv[MAX_NV];
        for (int j = 0; j < nv; j++)
            qv[j] = _mm256_loadu_ps(qh + 8 * j);
        /* scores, 8 positions at a time; the running maximum */
        __m256 vmax = ninf;
        for (int t0 = 0; t0 < len; t0 += 8) {
            int nt = len - t0 < 8 ? len - t0 : 8;
            __m256 acc[8];
            for (int u = 0; u < 8; u++) {
                acc[u] = _mm256_setzero_ps();
                if (u < nt) {
                    const float *kt = kb + (size_t)(t0 + u) * kvd;
                    for (int j = 0; j < nv; j++)
                        acc[u] = _mm256_fmadd_ps(qv[j], _mm256_loadu_ps(kt + 8 * j), acc[u]);
                }
            }
            __m256 s = _mm256_mul_ps(hsum8x8_avx2(acc), scale);
            if (nt == 8) {
                _mm256_storeu_ps(scores + t0, s);
                vmax = _mm256_max_ps(vmax, s);
            } else {
                __m256i m = lane_mask_avx2(nt);
                _mm256_maskstore_ps(scores + t0, m, s);
                vmax = _mm256_max_ps(vmax, _mm256_blendv_ps(ninf, s, _mm256_castsi256_ps(m)));
            }
        }
        const __m256 mx = _mm256_set1_ps(hmax_avx2(vmax));
        __m256 vsum = _mm256_setzero_ps();
        for (int t0 = 0; t0 < len; t0 += 8) {
            int nt = len - t0 < 8 ? len - t0 : 8;
            if (nt == 8) {
                __m256 p = exp8_avx2(_mm256_sub_ps(_mm256_loadu_ps(scores + t0), mx));
                _mm256_storeu_ps(scores + t0, p);
                vsum = _mm256_add_ps(vsum, p);
            } else {
                __m256i m = lane_mask_avx2(nt);
                __m256 p = exp8_avx2(_mm256_sub_ps(_mm256_maskload_ps(scores + t0, m), mx));
                p = _mm256_and_ps(p, _mm256_castsi256_ps(m));
                _mm256_maskstore_ps(scores + t0, m, p);
                vsum = _mm256_add_ps(vsum, p);
            }
        }
        const __m256 inv = _mm256_set1_ps(1.0f / hsum_avx2(vsum));
        /* out = sum_t p_t v_t / sum_t p_t: even and odd positions in two chains */
        __m256 ea[MAX_NV], oa[MAX_NV];
        for (int j = 0; j < nv; j++)
            ea[j] = oa[j] = _mm256_setzero_ps();
        int t = 0;
        for (; t + 2 <= len; t += 2) {
            const float *v0 = vb + (size_t)t * kvd, *v1 = v0 + kvd;
            __m256 a0 = _mm256_broadcast_ss(scores + t), a1 = _mm256_broadcast_ss(scores + t + 1);
            for (int j = 0; j < nv; j++) {
                ea[j] = _mm256_fmadd_ps(a0, _mm256_loadu_ps(v0 + 8 * j), ea[j]);
                oa[j] = _mm256_fmadd_ps(a1, _mm256_loadu_ps(v1 + 8 * j), oa[j]);
            }
        }
        if (t < len) {
            const float *v0 = vb + (size_t)t * kvd;
            __m256 a0 = _mm256_broadcast_ss(scores + t);
            for (int j = 0; j < nv; j++)
                ea[j] = _mm256_fmadd_ps(a0, _mm256_loadu_ps(v0 + 8 * j), ea[j]);
        }
        float *oh = out + (size_t)h * hd;
        for (int j = 0; j < nv; j++)
            _mm256_storeu_ps(oh + 8 * j, _mm256_mul_ps(_mm256_add_ps(ea[j], oa[j]), inv));
    }
}

AVX2 static void glu_avx2(float *g, const float *u, int n, int geglu)
{
    if (geglu) {
        mg_glu(g, u, n, geglu);
        return;
    }
    int i = 0;
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps(g + i);
        __m256 s = _mm256_div_ps(x, _mm256_add_ps(one, exp8_avx2(_mm256_sub_ps(zero, x))));
        _mm256_storeu_ps(g + i, _mm256_mul_ps(s, _mm256_loadu_ps(u + i)));
    }
    if (i < n)
        mg_glu(g + i, u + i, n - i, geglu);
}

/* The first index of the largest z[i] over the lanes whose class (in_group[i] != 0) is `want`,
 * scanning [0, V); -1 if the class is empty. */
AVX2 static int first_max_avx2(const float *z, int V, const uint8_t *in_group, int want)
{
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    const __m256i zero = _mm256_setzero_si256();
    __m256 vmax = ninf;
    int any = 0, i = 0;
    for (; i + 8 <= V; i += 8) {
        __m256i g = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(in_group + i)));
        __m256 m = _mm256_castsi256_ps(_mm256_cmpeq_epi32(g, zero)); /* not in the group */
        if (want)
            m = _mm256_xor_ps(m, _mm256_castsi256_ps(_mm256_cmpeq_epi32(zero, zero)));
        any |= _mm256_movemask_ps(m);
        vmax = _mm256_max_ps(vmax, _mm256_blendv_ps(ninf, _mm256_loadu_ps(z + i), m));
    }
    float best = hmax_avx2(vmax);
    for (int k = i; k < V; k++)
        if ((in_group[k] != 0) == want) {
            any = 1;
            best = z[k] > best ? z[k] : best;
        }
    if (!any)
        return -1;
    const __m256 b = _mm256_set1_ps(best);
    for (i = 0; i + 8 <= V; i += 8) {
        __m256i g = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(in_group + i)));
        __m256 m = _mm256_castsi256_ps(_mm256_cmpeq_epi32(g, zero));
        if (want)
            m = _mm256_xor_ps(m, _mm256_castsi256_ps(_mm256_cmpeq_epi32(zero, zero)));
        int hit = _mm256_movemask_ps(_mm256_and_ps(m, _mm256_cmp_ps(_mm256_loadu_ps(z + i), b, _CMP_EQ_OQ)));
        if (hit)
            return i + __builtin_ctz((unsigned)hit);
    }
    for (; i < V; i++)
        if ((in_group[i] != 0) == want && z[i] == best)
            return i;
    return -1; /* (a NaN maximum) */
}

AVX2 static int choose_avx2(const float *z, int V, const uint8_t *in_group, const int32_t *group, int n_group)
{
    if (n_group <= 0) { /* every id is in class 0 of an all-zero mask: use the plain scan */
        const __m256 ninf = _mm256_set1_ps(-INFINITY);
        __m256 vmax = ninf;
        int i = 0;
        for (; i + 8 <= V; i += 8)
            vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(z + i));
        float best = hmax_avx2(vmax);
        for (int k = i; k < V; k++)
            best = z[k] > best ? z[k] : best;
        const __m256 b = _mm256_set1_ps(best);
        for (i = 0; i + 8 <= V; i += 8) {
            int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(z + i), b, _CMP_EQ_OQ));
            if (hit)
                return i + __builtin_ctz((unsigned)hit);
        }
        for (; i < V; i++)
            if (z[i] == best)
                return i;
        return mg_choose_token(z, V, in_group, group, n_group); /* NaNs: the portable answer */
    }
    int gi = first_max_avx2(z, V, in_group, 1), oi = first_max_avx2(z, V, in_group, 0);
    if ((gi < 0 && n_group > 0) || (oi < 0 && n_group < V))
        return mg_choose_token(z, V, in_group, group, n_group); /* NaNs: the portable answer */
    return mg_choose_between(z, gi, oi, group, n_group);
}
#endif

mg_layer_kernels mg_layers_select(int allow_simd)
{
    mg_layer_kernels k = {mg_attention, mg_glu, mg_choose_token, "portable"};
#if defined(__x86_64__) || defined(__i386__)
    if (allow_simd) {
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            k.attention = attention_avx2;
            k.glu = glu_avx2;
            k.choose = choose_avx2;
            k.name = "avx2-fma";
        }
    }
#else
    (void)allow_simd;
#endif
    return k;
}

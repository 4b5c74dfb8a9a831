/*
 * layers.c - the per-row layers of layers.h.
 */
#include "layers.h"

#include <math.h>
#include <string.h>

void mg_rmsnorm(float *out, const float *x, const float *w, int d, float eps)
{
    double ss = 0.0;
    for (int i = 0; i < d; i++)
        ss += (double)x[i] * x[i];
    float r = (float)(1.0 / sqrt(ss / d + (double)eps));
    for (int i = 0; i < d; i++)
        out[i] = x[i] * r * w[i];
}

void mg_rope(float *v, int nh, int hd, const float *cos, const float *sin)
{
    int h2 = hd / 2;
    for (int h = 0; h < nh; h++) {
        float *a = v + h * hd, *b = a + h2;
        for (int i = 0; i < h2; i++) {
            float x1 = a[i], x2 = b[i];
            a[i] = x1 * cos[i] - x2 * sin[i];
            b[i] = x2 * cos[i] + x1 * sin[i];
        }
    }
}

void mg_rope_tables(float *cos_t, float *sin_t, int S, int hd, double theta)
{
    int h2 = hd / 2;
    for (int i = 0; i < h2; i++) {
        double inv = 1.0 / pow(theta, (double)(2 * i) / hd);
        for (int p = 0; p < S; p++) {
            double ang = (double)p * inv;
            cos_t[(long)p * h2 + i] = (float)cos(ang);
            sin_t[(long)p * h2 + i] = (float)sin(ang);
        }
    }
}

/* sum a[i] * b[i] in 8 interleaved partial sums: a fixed order, in one 8-lane vector (GCC/clang vector
 * extension: AVX or two SSE registers, whatever the build targets) */
typedef float v8f __attribute__((vector_size(32)));

static inline float dot(const float *a, const float *b, int n)
{
    v8f acc = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        v8f x, y;
        memcpy(&x, a + i, sizeof x);
        memcpy(&y, b + i, sizeof y);
        acc += x * y;
    }
    float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

void mg_attention(float *out, const float *q, const float *kc, const float *vc, int len, int H, int KV, int hd,
                  float *scores)
{
    int rep = H / KV, kvd = KV * hd;
    float scale = 1.0f / sqrtf((float)hd);
    for (int h = 0; h < H; h++) {
        const float *qh = q + h * hd;
        int kh = h / rep;
        float mx = -INFINITY;
        for (int t = 0; t < len; t++) {
            float s = dot(qh, kc + (long)t * kvd + kh * hd, hd) * scale;
            scores[t] = s;
            if (s > mx)
                mx = s;
        }
        float sum = 0.0f;
        for (int t = 0; t < len; t++) {
            scores[t] = expf(scores[t] - mx);
            sum += scores[t];
        }
        float inv = 1.0f / sum;
        float *oh = out + h * hd;
        if (hd % 8 == 0 && hd <= 8 * 32) { /* accumulate in local vectors (no aliasing with the cache) */
            v8f acc[32];
            int nv = hd / 8;
            for (int j = 0; j < nv; j++)
                acc[j] = (v8f){0};
            for (int t = 0; t < len; t++) {
                const float *vt = vc + (long)t * kvd + kh * hd;
                float a = scores[t] * inv;
                v8f av = {a, a, a, a, a, a, a, a};
                for (int j = 0; j < nv; j++) {
                    v8f x;
                    memcpy(&x, vt + 8 * j, sizeof x);
                    acc[j] += av * x;
                }
            }
            memcpy(oh, acc, sizeof(float) * (size_t)hd);
            continue;
        }
        for (int i = 0; i < hd; i++)
            oh[i] = 0.0f;
        for (int t = 0; t < len; t++) {
            const float *vt = vc + (long)t * kvd + kh * hd;
            float a = scores[t] * inv;
            for (int i = 0; i < hd; i++)
                oh[i] += a * vt[i];
        }
    }
}

void mg_glu(float *g, const float *u, int n, int geglu)
{
    if (geglu) {
        const float c = 0.7978845608028654f; /* sqrt(2 / pi) */
        for (int i = 0; i < n; i++) {
            float x = g[i];
            g[i] = 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x))) * u[i];
        }
    } else {
        for (int i = 0; i < n; i++)
            g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
    }
}

/*
 * layers.h - the transformer's per-row layers as plain C functions (llama2.c style), one row
 * (token) at a time; the engine (engine.c) applies them to the rows of a pass and does the
 * matrix products with matmul.h.  Shapes use d = d_model, H = n_heads, KV = n_kv_heads,
 * hd = head_dim, kvd = KV * hd, ff = d_ff, V = vocab, S = max_seq_len.
 */
#ifndef MG_MODEL_LAYERS_H
#define MG_MODEL_LAYERS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out[d] = x[d] / sqrt(mean(x^2) + eps) * w[d]  (RMSNorm; out may alias x) */
void mg_rmsnorm(float *out, const float *x, const float *w, int d, float eps);

/* Rotary embedding in place on v[nh * hd] (nh heads), rotate-half pairing (i with i + hd/2), by
 * the angles of one position: cos[hd/2], sin[hd/2]. */
void mg_rope(float *v, int nh, int hd, const float *cos, const float *sin);

/* Rotary tables cos/sin[S][hd/2] for positions 0..S-1 (computed in double, like the reference). */
void mg_rope_tables(float *cos, float *sin, int S, int hd, double theta);

/* Causal attention of one query row over its sequence's first `len` cached keys/values:
 *   q[H * hd], kc/vc[len][kvd] (rows of stride kvd), out[H * hd], scores[len] scratch.
 * Query head h reads key/value head h / (H / KV) (grouped-/multi-query attention). */
void mg_attention(float *out, const float *q, const float *kc, const float *vc, int len, int H, int KV, int hd,
                  float *scores);

/* Gated MLP activation in place: g[n] = act(g[n]) * u[n], act = SiLU (SwiGLU) or tanh-GELU (GeGLU). */
void mg_glu(float *g, const float *u, int n, int geglu);

/* The per-row kernels the engine calls, chosen at run time like the matmul kernel (layers_avx2.c):
 * the AVX2/FMA versions if allow_simd and the CPU has both, else the portable ones above
 * (mg_attention, mg_glu, choose.h's mg_choose_token).  The AVX2 ones take the same arguments
 * and give the same results up to float rounding (the token choice exactly the same), each
 * value still a function of its own row only. */
typedef struct mg_layer_kernels {
    void (*attention)(float *out, const float *q, const float *kc, const float *vc, int len, int H, int KV, int hd,
                      float *scores);
    void (*glu)(float *g, const float *u, int n, int geglu);
    int (*choose)(const float *z, int V, const uint8_t *in_group, const int32_t *group, int n_group);
    const char *name; /* "avx2-fma" or "portable" */
} mg_layer_kernels;

mg_layer_kernels mg_layers_select(int allow_simd);

#ifdef __cplusplus
}
#endif
#endif

/*
 * forward.cu - the native engine's forward pass on the GPU, built from the kernels of this
 * directory (llm.c style: one readable function, mgk_forward, calling one launcher per step).
 * The engine (csrc/model/engine.c) owns an mgk_engine when it was created with
 * MG_ENGINE_CUDA: every weight uploaded once at creation, the KV cache and the buffers of a pass
 * on the device, allocated once; nothing is allocated while generating.
 * Reference: the CPU engine's own forward pass (mg_engine_forward, csrc/model/engine.c) and token
 * choice (csrc/model/choose.c); the driver below runs both engines on a small random model.
 *
 * A pass takes n token rows (ragged: rows of several sequences, each sequence's rows consecutive
 * and in position order, its earlier positions already in the cache), as the CPU engine does:
 *
 *   x = embed[tok] (+ pos_embed[pos]) (+ line_embed[line])             embed_kernel
 *   for each layer:
 *     h = rmsnorm(x); q, k, v = h @ wq, wk, wv                           rmsnorm.cu, matmul.cu
 *     rope(q), rope(k); cache[layer][slot][pos] = k, v                   rope.cu, kv_store_kernel
 *     att = attention(q, cache)                                          attention_decode.cu when every
 *                                                                        sequence has one row, else
 *                                                                        attention_prefill.cu (ragged)
 *     x += att @ wo; h = rmsnorm(x); x += glu(h @ gate, h @ up) @ down   matmul.cu, glu.cu
 *   logits[r_logit] = rmsnorm(x[rows wanting logits]) @ out              gather_kernel, rmsnorm, matmul
 *
 * Token choice (mgk_engine_choose) runs choose.cu over the logit rows and copies back only the
 * tokens and the bucket distributions.
 */
#include "common.cuh"
#include "model/layers.h"
#include "model/matmul.h"
#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static_assert(sizeof(int) == sizeof(int32_t), "the kernels' int arrays are the engine's int32_t arrays");

struct mgk_layer {
    const float *attn_norm, *wq, *wk, *wv, *wo, *mlp_norm, *gate, *up, *down;
};

struct mgk_engine {
    mg_model_config c;
    int max_batch, rows_cap, kvd, qd;
    size_t slot_floats;                /* S * kvd: one slot of one layer of the cache */
    float *weights;                    /* every weight, one allocation */
    const float *embed, *pos_embed, *line_embed, *norm, *out;
    mgk_layer *layers;                 /* host array of device pointers */
    float *rope_cos, *rope_sin;        /* [S][hd/2] */
    float *kc, *vc;                    /* [L][max_batch][S][kvd] */
    float *x, *h, *q, *k, *v, *att;    /* [rows_cap][d | qd | kvd] */
    float *g, *u;                      /* [rows_cap][ff] */
    float *hl;                         /* [max_batch][d] */
    float *logits;                     /* [max_batch][V] */
    float *work;                       /* flash-decoding partials */
    int *ints;                         /* the pass's row arrays, one upload (layout: ROW_*) */
    int *h_ints;                       /* host staging of ints */
    unsigned char *in_group;           /* [V] */
    int *group, *buckets, n_group, n_buckets; /* [V], [64] */
    int *tok;                          /* [max_batch] chosen tokens */
    float *probs;                      /* [max_batch][64] bucket distributions */
};

/* offsets (in rows_cap + 1 units) of the arrays in ints */
enum { ROW_TOK, ROW_POS, ROW_LINE, ROW_SLOT, ROW_SRC, ROW_SEQ_START, ROW_SEQ_SLOT, ROW_SEQ_POS0, ROW_N };

/* ---- the kernels of the forward pass that are not operations of their own ---------------- */

/* x[r] = embed[tok[r]] (+ pos_embed[pos[r]]) (+ line_embed[line[r]]), the CPU engine's order */
__global__ void embed_kernel(float *x, const float *embed, const float *pos_embed, const float *line_embed,
                             const int *tok, const int *pos, const int *line, int d)
{
    int r = blockIdx.x;
    const float *e = embed + (long)tok[r] * d;
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
        float s = e[i];
        if (pos_embed)
            s += pos_embed[(long)pos[r] * d + i];
        if (line_embed)
            s += line_embed[(long)line[r] * d + i];
        x[(long)r * d + i] = s;
    }
}

/* the pass's keys/values into one layer of the cache: kc[slot[r]][pos[r]] = k[r] */
__global__ void kv_store_kernel(float *kc, float *vc, const float *k, const float *v, const int *slot, const int *pos,
                                int S, int kvd)
{
    int r = blockIdx.x;
    long at = ((long)slot[r] * S + pos[r]) * kvd;
    for (int i = threadIdx.x; i < kvd; i += blockDim.x) {
        kc[at + i] = k[(long)r * kvd + i];
        vc[at + i] = v[(long)r * kvd + i];
    }
}

/* dst[j] = src[idx[j]] (idx[j] < 0: zeros) */
__global__ void gather_kernel(float *dst, const float *src, const int *idx, int d)
{
    int j = blockIdx.x, r = idx[j];
    for (int i = threadIdx.x; i < d; i += blockDim.x)
        dst[(long)j * d + i] = r >= 0 ? src[(long)r * d + i] : 0.0f;
}

/* ---- creation --------------------------------------------------------------------------------- */

#define DEV_FREE(p) (p ? (void)cudaFree((void *)(p)) : (void)0)

extern "C" void mgk_engine_free(mgk_engine *g)
{
    if (!g)
        return;
    const void *dev[] = {g->weights, g->rope_cos, g->rope_sin, g->kc, g->vc, g->x, g->h, g->q, g->k, g->v, g->att,
                         g->g, g->u, g->hl, g->logits, g->work, g->ints, g->in_group, g->group, g->buckets, g->tok,
                         g->probs};
    for (const void *p : dev)
        DEV_FREE(p);
    free(g->layers);
    free(g->h_ints);
    free(g);
}

/* device allocation of n elements (+1, so that an empty one is still a valid pointer) */
template <class T> static bool dev_alloc(T **p, size_t n)
{
    *p = nullptr;
    return cudaMalloc((void **)p, (n + 1) * sizeof(T)) == cudaSuccess;
}

extern "C" int mgk_engine_create(mgk_engine **out, const mg_model *m, int max_batch, int rows_cap, char *err,
                                 size_t errlen)
{
    *out = nullptr;
#if MGK_ON_GPU
    char why[256];
    if (mgk_device_count(why, sizeof why) == 0) {
        snprintf(err, errlen, "%s", why);
        return MGK_ERR_ARG;
    }
#endif
    const mg_model_config *c = &m->cfg;
    if (c->head_dim > MGK_MAX_HEAD_DIM || c->head_dim % 2) {
        snprintf(err, errlen, "the CUDA kernels support head dimensions up to %d (even), the model has %d",
                 MGK_MAX_HEAD_DIM, c->head_dim);
        return MGK_ERR_ARG;
    }
    mgk_engine *g = (mgk_engine *)calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "out of memory");
        return MGK_ERR_ARG;
    }
    g->c = *c;
    g->max_batch = max_batch;
    g->rows_cap = rows_cap;
    g->kvd = c->n_kv_heads * c->head_dim;
    g->qd = c->n_heads * c->head_dim;
    int d = c->d_model, V = c->vocab_size, ff = c->d_ff, L = c->n_layers, qd = g->qd, kvd = g->kvd;
    size_t S = (size_t)c->max_seq_len, R = (size_t)rows_cap, B = (size_t)max_batch, h2 = (size_t)c->head_dim / 2;
    g->slot_floats = S * (size_t)kvd;
    /* the weights: (host pointer, floats) in upload order; the device copies follow each other */
    size_t n_w = 5 + 9 * (size_t)L, total = 0, at = 0;
    struct piece {
        const float *src;
        size_t n;
        const float **dst;
    } *pw = (piece *)calloc(n_w, sizeof(piece));
    g->layers = (mgk_layer *)calloc((size_t)L + 1, sizeof(mgk_layer));
    g->h_ints = (int *)calloc((R + 1) * ROW_N, sizeof(int));
    bool ok = pw && g->layers && g->h_ints;
    if (ok) {
        size_t k = 0;
        pw[k++] = {m->embed, (size_t)V * d, &g->embed};
        pw[k++] = {m->pos_embed, m->pos_embed ? S * d : 0, &g->pos_embed};
        pw[k++] = {m->line_embed, m->line_embed ? (size_t)c->line_pos * d : 0, &g->line_embed};
        pw[k++] = {m->norm, (size_t)d, &g->norm};
        pw[k++] = {m->out, mg_matmul_packed_floats(d, V), &g->out};
        for (int l = 0; l < L; l++) {
            const mg_layer_weights *W = &m->layers[l];
            mgk_layer *D = &g->layers[l];
            pw[k++] = {W->attn_norm, (size_t)d, &D->attn_norm};
            pw[k++] = {W->wq, mg_matmul_packed_floats(d, qd), &D->wq};
            pw[k++] = {W->wk, mg_matmul_packed_floats(d, kvd), &D->wk};
            pw[k++] = {W->wv, mg_matmul_packed_floats(d, kvd), &D->wv};
            pw[k++] = {W->wo, mg_matmul_packed_floats(qd, d), &D->wo};
            pw[k++] = {W->mlp_norm, (size_t)d, &D->mlp_norm};
            pw[k++] = {W->gate, mg_matmul_packed_floats(d, ff), &D->gate};
            pw[k++] = {W->up, mg_matmul_packed_floats(d, ff), &D->up};
            pw[k++] = {W->down, mg_matmul_packed_floats(ff, d), &D->down};
        }
        for (size_t i = 0; i < n_w; i++)
            total += pw[i].n;
        ok = dev_alloc(&g->weights, total);
        for (size_t i = 0; ok && i < n_w; i++) {
            *pw[i].dst = pw[i].n ? g->weights + at : nullptr;
            if (pw[i].n)
                ok = cudaMemcpy(g->weights + at, pw[i].src, pw[i].n * sizeof(float), cudaMemcpyHostToDevice) ==
                     cudaSuccess;
            at += pw[i].n;
        }
    }
    free(pw);
    size_t kv = (size_t)L * B * g->slot_floats;
    long work = mgk_attention_decode_work(max_batch, c->n_heads, c->head_dim, c->max_seq_len, 0);
    ok = ok && dev_alloc(&g->rope_cos, S * h2) && dev_alloc(&g->rope_sin, S * h2) && dev_alloc(&g->kc, kv) &&
         dev_alloc(&g->vc, kv) && dev_alloc(&g->x, R * d) && dev_alloc(&g->h, R * d) && dev_alloc(&g->q, R * qd) &&
         dev_alloc(&g->k, R * kvd) && dev_alloc(&g->v, R * kvd) && dev_alloc(&g->att, R * qd) &&
         dev_alloc(&g->g, R * ff) && dev_alloc(&g->u, R * ff) && dev_alloc(&g->hl, B * d) &&
         dev_alloc(&g->logits, B * V) && dev_alloc(&g->work, (size_t)work) &&
         dev_alloc(&g->ints, (R + 1) * ROW_N) && dev_alloc(&g->in_group, (size_t)V) && dev_alloc(&g->group, (size_t)V) &&
         dev_alloc(&g->buckets, 64) && dev_alloc(&g->tok, B) && dev_alloc(&g->probs, B * 64);
    if (ok) { /* the rotary tables: the CPU engine's own (mg_rope_tables), uploaded */
        float *cs = (float *)malloc((S * h2 + 1) * sizeof(float)), *sn = (float *)malloc((S * h2 + 1) * sizeof(float));
        ok = cs && sn;
        if (ok) {
            mg_rope_tables(cs, sn, c->max_seq_len, c->head_dim, c->rope_theta);
            ok = cudaMemcpy(g->rope_cos, cs, S * h2 * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess &&
                 cudaMemcpy(g->rope_sin, sn, S * h2 * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess;
        }
        free(cs);
        free(sn);
    }
    if (!ok) {
        cudaGetLastError();
        snprintf(err, errlen, "out of GPU memory for the model (%zu MB of weights) and an engine of batch %d (KV cache %zu MB)",
                 total * sizeof(float) >> 20, max_batch, 2 * kv * sizeof(float) >> 20);
        mgk_engine_free(g);
        return MGK_ERR_ARG;
    }
    *out = g;
    return MGK_OK;
}

/* ---- the forward pass ---------------------------------------------------------------------- */

#define TRY(call)                                                                                                      \
    do {                                                                                                               \
        int rc_ = (call);                                                                                              \
        if (rc_ != MGK_OK)                                                                                             \
            return rc_;                                                                                                \
    } while (0)

extern "C" int mgk_forward(mgk_engine *g, int n, const int32_t *tok, const int32_t *slot, const int32_t *pos,
                           const int32_t *line, const int32_t *logit)
{
    const mg_model_config *c = &g->c;
    int d = c->d_model, ff = c->d_ff, V = c->vocab_size, H = c->n_heads, KV = c->n_kv_heads, hd = c->head_dim;
    int qd = g->qd, kvd = g->kvd, S = c->max_seq_len, R1 = g->rows_cap + 1;
    float eps = (float)c->norm_eps;
    if (n < 1 || n > g->rows_cap)
        return MGK_ERR_ARG;
    /* the row arrays, the ragged sequences (a new one where the slot changes or the position does
     * not follow) and the rows that want logits, uploaded at once */
    int *h = g->h_ints;
    int n_seq = 0, max_rows = 0, max_len = 0, lo = -1, hi = -1;
    for (int r = 0; r < n; r++) {
        h[ROW_TOK * R1 + r] = tok[r];
        h[ROW_POS * R1 + r] = pos[r];
        h[ROW_LINE * R1 + r] = line[r];
        h[ROW_SLOT * R1 + r] = slot[r];
        if (r == 0 || slot[r] != slot[r - 1] || pos[r] != pos[r - 1] + 1) {
            h[ROW_SEQ_START * R1 + n_seq] = r;
            h[ROW_SEQ_SLOT * R1 + n_seq] = slot[r];
            h[ROW_SEQ_POS0 * R1 + n_seq] = pos[r];
            n_seq++;
        }
        int rows = r - h[ROW_SEQ_START * R1 + n_seq - 1] + 1;
        max_rows = rows > max_rows ? rows : max_rows;
        max_len = pos[r] + 1 > max_len ? pos[r] + 1 : max_len;
        if (logit[r] >= 0) {
            lo = lo < 0 ? logit[r] : lo;
            hi = logit[r];
        }
    }
    h[ROW_SEQ_START * R1 + n_seq] = n;
    for (int j = 0; lo >= 0 && j <= hi - lo; j++)
        h[ROW_SRC * R1 + j] = -1;
    for (int r = 0; r < n; r++)
        if (logit[r] >= 0)
            h[ROW_SRC * R1 + logit[r] - lo] = r;
    if (cudaMemcpy(g->ints, h, (size_t)R1 * ROW_N * sizeof(int), cudaMemcpyHostToDevice) != cudaSuccess)
        return MGK_ERR_LAUNCH;
    const int *d_tok = g->ints + ROW_TOK * R1, *d_pos = g->ints + ROW_POS * R1, *d_line = g->ints + ROW_LINE * R1;
    const int *d_slot = g->ints + ROW_SLOT * R1, *d_src = g->ints + ROW_SRC * R1;
    const int *d_start = g->ints + ROW_SEQ_START * R1, *d_sslot = g->ints + ROW_SEQ_SLOT * R1;
    const int *d_spos0 = g->ints + ROW_SEQ_POS0 * R1;

    MGK_LAUNCH(embed_kernel, dim3(n), dim3(128), 0, g->x, g->embed, g->pos_embed, g->line_embed, d_tok, d_pos, d_line, d);
    TRY(mgk_status());
    for (int l = 0; l < c->n_layers; l++) {
        const mgk_layer *W = &g->layers[l];
        float *kc = g->kc + (size_t)l * g->max_batch * g->slot_floats, *vc = g->vc + (size_t)l * g->max_batch * g->slot_floats;
        /* attention block */
        TRY(mgk_rmsnorm(2, g->h, g->x, W->attn_norm, n, d, eps));
        TRY(mgk_matmul(2, g->q, g->h, W->wq, n, d, qd, 0));
        TRY(mgk_matmul(2, g->k, g->h, W->wk, n, d, kvd, 0));
        TRY(mgk_matmul(2, g->v, g->h, W->wv, n, d, kvd, 0));
        TRY(mgk_rope(1, g->q, d_pos, g->rope_cos, g->rope_sin, n, H, hd));
        TRY(mgk_rope(1, g->k, d_pos, g->rope_cos, g->rope_sin, n, KV, hd));
        MGK_LAUNCH(kv_store_kernel, dim3(n), dim3(128), 0, kc, vc, g->k, g->v, d_slot, d_pos, S, kvd);
        TRY(mgk_status());
        if (max_rows == 1 && n <= g->max_batch) /* decoding: one row per sequence */
            TRY(mgk_attention_decode(g->att, g->q, kc, vc, d_slot, d_pos, n, S, H, KV, hd, max_len, 0, g->work));
        else
            TRY(mgk_attention_prefill(1, g->att, g->q, kc, vc, d_start, d_sslot, d_spos0, n_seq, max_rows, S, H, KV, hd));
        TRY(mgk_matmul(2, g->x, g->att, W->wo, n, qd, d, 1));
        /* MLP block */
        TRY(mgk_rmsnorm(2, g->h, g->x, W->mlp_norm, n, d, eps));
        TRY(mgk_matmul(2, g->g, g->h, W->gate, n, d, ff, 0));
        TRY(mgk_matmul(2, g->u, g->h, W->up, n, d, ff, 0));
        TRY(mgk_glu(1, g->g, g->u, (long)n * ff, c->geglu));
        TRY(mgk_matmul(2, g->x, g->g, W->down, n, ff, d, 1));
    }
    if (lo >= 0) { /* logits of the rows that want them, at their logit rows lo..hi */
        int k = hi - lo + 1;
        MGK_LAUNCH(gather_kernel, dim3(k), dim3(128), 0, g->h, g->x, d_src, d);
        TRY(mgk_status());
        TRY(mgk_rmsnorm(2, g->hl + (size_t)lo * d, g->h, g->norm, k, d, eps));
        TRY(mgk_matmul(2, g->logits + (size_t)lo * V, g->hl + (size_t)lo * d, g->out, k, d, V, 0));
    }
    return MGK_OK;
}

/* ---- the KV cache and the prefix cache ------------------------------------------------------ */

extern "C" int mgk_copy_prefix(mgk_engine *g, int src, int dst, int len)
{
    size_t n = (size_t)len * g->kvd * sizeof(float);
    for (int l = 0; l < g->c.n_layers; l++) {
        size_t off = (size_t)l * g->max_batch * g->slot_floats;
        if (cudaMemcpy(g->kc + off + dst * g->slot_floats, g->kc + off + src * g->slot_floats, n,
                       cudaMemcpyDeviceToDevice) != cudaSuccess ||
            cudaMemcpy(g->vc + off + dst * g->slot_floats, g->vc + off + src * g->slot_floats, n,
                       cudaMemcpyDeviceToDevice) != cudaSuccess)
            return MGK_ERR_LAUNCH;
    }
    return MGK_OK;
}

extern "C" int mgk_kv_transfer(mgk_engine *g, int slot, int len, float *hk, float *hv, size_t layer_stride, int upload)
{
    size_t n = (size_t)len * g->kvd * sizeof(float);
    for (int l = 0; l < g->c.n_layers; l++) {
        size_t off = (size_t)l * g->max_batch * g->slot_floats + (size_t)slot * g->slot_floats;
        float *dk = g->kc + off, *dv = g->vc + off, *k = hk + (size_t)l * layer_stride, *v = hv + (size_t)l * layer_stride;
        bool ok = upload ? cudaMemcpy(dk, k, n, cudaMemcpyHostToDevice) == cudaSuccess &&
                               cudaMemcpy(dv, v, n, cudaMemcpyHostToDevice) == cudaSuccess
                         : cudaMemcpy(k, dk, n, cudaMemcpyDeviceToHost) == cudaSuccess &&
                               cudaMemcpy(v, dv, n, cudaMemcpyDeviceToHost) == cudaSuccess;
        if (!ok)
            return MGK_ERR_LAUNCH;
    }
    return MGK_OK;
}

/* ---- token choice ---------------------------------------------------------------------------- */

extern "C" int mgk_engine_set_choice(mgk_engine *g, const unsigned char *in_group, const int32_t *group, int n_group,
                                     const int32_t *bucket_ids, int n_buckets)
{
    int V = g->c.vocab_size;
    if (n_group < 0 || n_group > V || n_buckets < 0 || n_buckets > 64)
        return MGK_ERR_ARG;
    g->n_group = n_group;
    g->n_buckets = n_buckets;
    bool ok = cudaMemcpy(g->in_group, in_group, (size_t)V, cudaMemcpyHostToDevice) == cudaSuccess &&
              (!n_group || cudaMemcpy(g->group, group, (size_t)n_group * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess) &&
              (!n_buckets ||
               cudaMemcpy(g->buckets, bucket_ids, (size_t)n_buckets * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess);
    return ok ? MGK_OK : MGK_ERR_LAUNCH;
}

extern "C" int mgk_engine_choose(mgk_engine *g, int rows, int grouped, int32_t *tok, float *probs)
{
    if (rows < 0 || rows > g->max_batch)
        return MGK_ERR_ARG;
    if (rows == 0)
        return MGK_OK;
    TRY(mgk_choose(1, g->tok, g->probs, g->logits, rows, g->c.vocab_size, g->in_group, g->group,
                   grouped ? g->n_group : 0, g->buckets, g->n_buckets));
    bool ok = cudaMemcpy(tok, g->tok, (size_t)rows * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess &&
              (!g->n_buckets || cudaMemcpy(probs, g->probs, (size_t)rows * g->n_buckets * sizeof(float),
                                           cudaMemcpyDeviceToHost) == cudaSuccess);
    return ok ? MGK_OK : MGK_ERR_LAUNCH;
}

extern "C" int mgk_engine_logits(mgk_engine *g, int row0, int rows, float *out)
{
    if (row0 < 0 || rows < 0 || row0 + rows > g->max_batch)
        return MGK_ERR_ARG;
    size_t V = (size_t)g->c.vocab_size;
    return cudaMemcpy(out, g->logits + row0 * V, rows * V * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess
               ? MGK_OK
               : MGK_ERR_LAUNCH;
}

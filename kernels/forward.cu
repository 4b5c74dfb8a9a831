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

/* a weight matrix on the device (packed, matmul.h): float32, or bfloat16 (mgk_engine_create's bf16) */
struct mgk_mat {
    const float *f;
    const uint16_t *b;
};

struct mgk_layer {
    const float *attn_norm, *mlp_norm;
    mgk_mat wq, wk, wv, wo, gate, up, down;
};

/* A decode pass's launch sequence captured into a CUDA graph: every kernel argument that a decode pass can
 * change by value is in the key (the rows n, the attention's bucketed length, the prefix groups' count, longest
 * prefix and largest group, the logits rows lo..hi); everything else a step changes (tokens, positions, slots,
 * the group tables) the kernels read from the engine's fixed ints buffer, uploaded before each launch. */
#define MGK_GRAPH_CACHE 8
enum { GK_N, GK_LEN, GK_GROUPS, GK_PREFIX, GK_GROUP_ROWS, GK_LO, GK_HI, GK_N_KEY };
struct mgk_graph {
    int key[GK_N_KEY];
    cudaGraphExec_t exec;
    long tc;            /* the products on tensor cores of one launch (added to tc_products per launch) */
    unsigned long used; /* tick of the last launch (least recently used replaced) */
};

struct mgk_engine {
    mg_model_config c;
    int max_batch, rows_cap, kvd, qd;
    size_t slot_floats;                /* S * kvd: one slot of one layer of the cache */
    float *weights;                    /* every float32 weight, one allocation */
    uint16_t *weights16;               /* the weight matrices in bfloat16 (bf16 engines), one allocation */
    size_t weight_bytes;               /* device bytes of both */
    int bf16;
    int embed_bf16;                    /* the embeddings in bf16 too: every bf16 engine */
    const float *embed, *pos_embed, *line_embed, *norm;  /* embeddings: float32 engines */
    const uint16_t *embed16, *pos_embed16, *line_embed16; /* embeddings: bf16 engines (in weights16) */
    mgk_mat out;
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
    /* shared prefixes (host): slot s's positions [0, alias_len[s]) equal slot alias_src[s]'s (copied
     * by mgk_copy_prefix; alias_len 0: none), so a decode step reads them once from alias_src for all
     * the slots that share them (attention_decode.cu variant 2).  Dropped when either slot's
     * positions below alias_len are written again. */
    int *alias_src, *alias_len;        /* [max_batch] */
    long shared_passes;                /* decode passes that read shared prefixes once (the driver checks it) */
    int sm_count;                      /* the device's multiprocessors (the matmul variant: mgk_matmul_pick) */
    int tensor_cores;                  /* a bf16 engine on an sm_80+ device: matmul.cu 4 for large products */
    long tc_products;                  /* products run on tensor cores (the driver checks that some are) */
    /* decode passes as CUDA graphs (mgk_forward): the instantiated graphs by launch shape, least recently used
     * replaced; off with MAVGAME_CUDA_GRAPHS=0 at creation, or for good after a capture failed */
    int graphs;
    mgk_graph cache[MGK_GRAPH_CACHE];
    int n_cache;
    unsigned long tick;
    long graph_launches, graph_captures; /* the driver checks that the graph path runs, and replays */
};

/* offsets (in rows_cap + 1 units) of the arrays in ints */
enum { ROW_TOK, ROW_POS, ROW_LINE, ROW_SLOT, ROW_SRC, ROW_SEQ_START, ROW_SEQ_SLOT, ROW_SEQ_POS0,
       ROW_G_OF_ROW, ROW_G_START, ROW_G_ROWS, ROW_G_SLOT, ROW_G_LEN, /* a decode step's prefix groups */
       ROW_N };

/* ---- the kernels of the forward pass that are not operations of their own ---------------- */

/* x[r] = embed[tok[r]] (+ pos_embed[pos[r]]) (+ line_embed[line[r]]), the CPU engine's order, over float32
 * embeddings or (bf16 engine) bfloat16 ones widened exactly to float32 (mgk_weight), summed in float32 */
template <class WT>
__global__ void embed_kernel(float *x, const WT *embed, const WT *pos_embed, const WT *line_embed, const int *tok,
                             const int *pos, const int *line, int d)
{
    int r = blockIdx.x;
    long e = (long)tok[r] * d;
    for (int i = threadIdx.x; i < d; i += blockDim.x) {
        float s = mgk_weight(embed, e + i);
        if (pos_embed)
            s += mgk_weight(pos_embed, (long)pos[r] * d + i);
        if (line_embed)
            s += mgk_weight(line_embed, (long)line[r] * d + i);
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
    const void *dev[] = {g->weights, g->weights16, g->rope_cos, g->rope_sin, g->kc, g->vc, g->x, g->h, g->q, g->k, g->v, g->att,
                         g->g, g->u, g->hl, g->logits, g->work, g->ints, g->in_group, g->group, g->buckets, g->tok,
                         g->probs};
    for (int i = 0; i < g->n_cache; i++)
        cudaGraphExecDestroy(g->cache[i].exec);
    for (const void *p : dev)
        DEV_FREE(p);
    free(g->layers);
    free(g->h_ints);
    free(g->alias_src);
    free(g->alias_len);
    free(g);
}

/* device allocation of n elements (+1, so that an empty one is still a valid pointer) */
template <class T> static bool dev_alloc(T **p, size_t n)
{
    *p = nullptr;
    return cudaMalloc((void **)p, (n + 1) * sizeof(T)) == cudaSuccess;
}

extern "C" int mgk_engine_create(mgk_engine **out, const mg_model *m, int max_batch, int rows_cap, int bf16,
                                 char *err, size_t errlen)
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
    g->bf16 = bf16 != 0;
    g->embed_bf16 = g->bf16;
    const char *graphs = getenv("MAVGAME_CUDA_GRAPHS");
    g->graphs = !(graphs && strcmp(graphs, "0") == 0);
    if (cudaDeviceGetAttribute(&g->sm_count, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess || g->sm_count < 1)
        g->sm_count = 1;
    /* tensor cores (matmul.cu 4) for the bf16 weights' large products: compute capability 8.0+ and a build
     * with sm_80+ code (mgk_matmul_tensor_cores) */
    g->tensor_cores = g->bf16 && mgk_matmul_tensor_cores();
    g->max_batch = max_batch;
    g->rows_cap = rows_cap;
    g->kvd = c->n_kv_heads * c->head_dim;
    g->qd = c->n_heads * c->head_dim;
    int d = c->d_model, V = c->vocab_size, ff = c->d_ff, L = c->n_layers, qd = g->qd, kvd = g->kvd;
    size_t S = (size_t)c->max_seq_len, R = (size_t)rows_cap, B = (size_t)max_batch, h2 = (size_t)c->head_dim / 2;
    g->slot_floats = S * (size_t)kvd;
    /* the weights: (host pointer, floats, vector or matrix) in upload order; the device copies follow
     * each other, the matrices in weights16 as bfloat16 (rounded here, nearest-even) on a bf16 engine */
    size_t n_w = 5 + 9 * (size_t)L, total = 0, total16 = 0, at = 0, at16 = 0, biggest = 0;
    struct piece {
        const float *src;
        size_t n;
        const float **dst;
        mgk_mat *mat;
        const uint16_t **dst16; /* an embedding: bf16 on a bf16 engine (dst on a float32 one) */
    } *pw = (piece *)calloc(n_w, sizeof(piece));
    g->layers = (mgk_layer *)calloc((size_t)L + 1, sizeof(mgk_layer));
    g->h_ints = (int *)calloc((R + 1) * ROW_N, sizeof(int));
    g->alias_src = (int *)calloc(B + 1, sizeof(int));
    g->alias_len = (int *)calloc(B + 1, sizeof(int));
    bool ok = pw && g->layers && g->h_ints && g->alias_src && g->alias_len;
    if (ok) {
        size_t k = 0;
        pw[k++] = {m->embed, (size_t)V * d, &g->embed, nullptr, &g->embed16};
        pw[k++] = {m->pos_embed, m->pos_embed ? S * d : 0, &g->pos_embed, nullptr, &g->pos_embed16};
        pw[k++] = {m->line_embed, m->line_embed ? (size_t)c->line_pos * d : 0, &g->line_embed, nullptr,
                   &g->line_embed16};
        pw[k++] = {m->norm, (size_t)d, &g->norm, nullptr, nullptr};
        pw[k++] = {m->out, mg_matmul_packed_floats(d, V), nullptr, &g->out, nullptr};
        for (int l = 0; l < L; l++) {
            const mg_layer_weights *W = &m->layers[l];
            mgk_layer *D = &g->layers[l];
            pw[k++] = {W->attn_norm, (size_t)d, &D->attn_norm, nullptr, nullptr};
            pw[k++] = {W->wq, mg_matmul_packed_floats(d, qd), nullptr, &D->wq, nullptr};
            pw[k++] = {W->wk, mg_matmul_packed_floats(d, kvd), nullptr, &D->wk, nullptr};
            pw[k++] = {W->wv, mg_matmul_packed_floats(d, kvd), nullptr, &D->wv, nullptr};
            pw[k++] = {W->wo, mg_matmul_packed_floats(qd, d), nullptr, &D->wo, nullptr};
            pw[k++] = {W->mlp_norm, (size_t)d, &D->mlp_norm, nullptr, nullptr};
            pw[k++] = {W->gate, mg_matmul_packed_floats(d, ff), nullptr, &D->gate, nullptr};
            pw[k++] = {W->up, mg_matmul_packed_floats(d, ff), nullptr, &D->up, nullptr};
            pw[k++] = {W->down, mg_matmul_packed_floats(ff, d), nullptr, &D->down, nullptr};
        }
        for (size_t i = 0; i < n_w; i++) {
            bool half = pw[i].mat ? g->bf16 : pw[i].dst16 && g->embed_bf16;
            (half ? total16 : total) += pw[i].n;
            biggest = half && pw[i].n > biggest ? pw[i].n : biggest;
        }
        uint16_t *stage = (uint16_t *)malloc((biggest + 1) * sizeof(uint16_t)); /* host bf16 staging */
        ok = stage && dev_alloc(&g->weights, total) && dev_alloc(&g->weights16, g->bf16 ? total16 : 0);
        /* in upload order; a bf16 engine's embeddings last (in weights16 after the matrices, whose 16-byte
         * alignment matmul.cu 4 needs: every packed matrix is a multiple of 16 columns) */
        for (size_t step = 0; ok && step < 2 * n_w; step++) {
            size_t i = step % n_w;
            bool late = g->embed_bf16 && pw[i].dst16, half = pw[i].mat ? g->bf16 : late;
            if ((step < n_w) == late)
                continue;
            if (half) {
                for (size_t j = 0; j < pw[i].n; j++)
                    stage[j] = mgk_bf16_round(pw[i].src[j]);
                const uint16_t *dst = pw[i].n ? g->weights16 + at16 : nullptr;
                if (pw[i].mat)
                    *pw[i].mat = {nullptr, dst};
                else
                    *pw[i].dst16 = dst;
                ok = !pw[i].n || cudaMemcpy(g->weights16 + at16, stage, pw[i].n * sizeof(uint16_t), cudaMemcpyHostToDevice) ==
                     cudaSuccess;
                at16 += pw[i].n;
                continue;
            }
            const float *dst = pw[i].n ? g->weights + at : nullptr;
            if (pw[i].mat)
                *pw[i].mat = {dst, nullptr};
            else
                *pw[i].dst = dst;
            if (pw[i].n)
                ok = cudaMemcpy(g->weights + at, pw[i].src, pw[i].n * sizeof(float), cudaMemcpyHostToDevice) ==
                     cudaSuccess;
            at += pw[i].n;
        }
        free(stage);
    }
    free(pw);
    g->weight_bytes = total * sizeof(float) + total16 * sizeof(uint16_t);
    size_t kv = (size_t)L * B * g->slot_floats;
    long work = mgk_attention_decode_work(max_batch, c->n_heads, c->head_dim, c->max_seq_len, 0);
    long work2 = mgk_attention_decode_shared_work(max_batch, c->n_heads, c->head_dim, c->max_seq_len,
                                                  c->max_seq_len - 1, 1, 0);
    work = work2 > work ? work2 : work;
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
                 g->weight_bytes >> 20, max_batch, 2 * kv * sizeof(float) >> 20);
        mgk_engine_free(g);
        return MGK_ERR_ARG;
    }
    *out = g;
    return MGK_OK;
}

/* ---- the forward pass ---------------------------------------------------------------------- */

/* y (+)= x @ W with the matmul kernel that suits the shape on this device (mgk_matmul_pick), over W's
 * float32 or bfloat16 weights (mgk_matmul_bf16: 2 and 3, and 4 on tensor cores from MGK_TC_MIN_ROWS rows on,
 * mgk_matmul_pick_bf16: there x is rounded to bf16 too) */
static int matmul(mgk_engine *g, float *y, const float *x, mgk_mat w, int n, int in, int out, int acc)
{
    if (!w.b)
        return mgk_matmul(mgk_matmul_pick(n, out, g->sm_count), y, x, w.f, n, in, out, acc);
    int v = mgk_matmul_pick_bf16(n, out, g->sm_count, g->tensor_cores);
    g->tc_products += v == 4;
    return mgk_matmul_bf16(v, y, x, w.b, n, in, out, acc);
}

extern "C" size_t mgk_engine_weight_bytes(const mgk_engine *g) { return g->weight_bytes; }

/* slot s's positions from p on are about to be written: the prefixes they belonged to are no
 * longer shared (s's own, and those of the slots that read theirs from s) */
static void alias_drop(mgk_engine *g, int s, int p)
{
    if (g->alias_len[s] > p)
        g->alias_len[s] = 0;
    for (int d = 0; d < g->max_batch; d++)
        if (g->alias_len[d] > p && g->alias_src[d] == s)
            g->alias_len[d] = 0;
}

/* A decode step's rows grouped by the shared prefix their slots read (alias_src, alias_len), into
 * h's ROW_G_* arrays (mgk_prefix_groups' layout); the number of groups (0: none shares). */
static int decode_groups(mgk_engine *g, int n, const int32_t *slot, const int32_t *pos, int *h, int R1, int *max_prefix,
                         int *max_rows)
{
    int *of_row = h + ROW_G_OF_ROW * R1, *start = h + ROW_G_START * R1, *rows = h + ROW_G_ROWS * R1;
    int *gslot = h + ROW_G_SLOT * R1, *glen = h + ROW_G_LEN * R1;
    int G = 0;
    *max_prefix = 0;
    *max_rows = 0;
    for (int r = 0; r < n; r++) {
        int s = slot[r], len = g->alias_len[s], k = -1;
        of_row[r] = -1;
        if (len <= 0 || len > pos[r])
            continue;
        for (int j = 0; j < G && k < 0; j++)
            if (gslot[j] == g->alias_src[s] && glen[j] == len)
                k = j;
        if (k < 0) {
            k = G++;
            gslot[k] = g->alias_src[s];
            glen[k] = len;
            *max_prefix = len > *max_prefix ? len : *max_prefix;
        }
        of_row[r] = k;
    }
    for (int r = 0; r < n; r++) /* the slot the others copied from joins their group */
        for (int k = 0; k < G && of_row[r] < 0; k++)
            if (gslot[k] == slot[r] && glen[k] <= pos[r])
                of_row[r] = k;
    int at = 0;
    for (int k = 0; k < G; k++) { /* the groups' rows in CSR form (G and n <= max_batch) */
        start[k] = at;
        for (int r = 0; r < n; r++)
            if (of_row[r] == k)
                rows[at++] = r;
        *max_rows = at - start[k] > *max_rows ? at - start[k] : *max_rows;
    }
    start[G] = at;
    return G;
}

#define TRY(call)                                                                                                      \
    do {                                                                                                               \
        int rc_ = (call);                                                                                              \
        if (rc_ != MGK_OK)                                                                                             \
            return rc_;                                                                                                \
    } while (0)

/* A pass's shape: everything its launches take by value that changes from pass to pass */
struct pass_shape {
    int n, decode, n_seq, max_rows, max_len, lo, hi;
    mgk_prefix_groups pg;
};

/* The attention length a decode pass launches with: max_len rounded up to a multiple of 128 (the keys of a
 * flash-decoding split, attention_decode.cu; beyond 64 splits, of 8192), at most S.  Longer than the longest row
 * (each row reads its own pos[r] + 1 keys, from the device), it gives the same number of splits, so one captured
 * graph serves 128 consecutive steps; the graph path and the launched one use it alike (the same results). */
static int decode_len(int max_len, int S)
{
    int q = max_len <= 64 * 128 ? 128 : 64 * 128, b = (max_len + q - 1) / q * q;
    return b < S ? b : S;
}

/* Every launch of a pass (into the per-thread default stream: run, or captured into a graph). */
static int launch_pass(mgk_engine *g, const pass_shape &p)
{
    const mg_model_config *c = &g->c;
    int d = c->d_model, ff = c->d_ff, V = c->vocab_size, H = c->n_heads, KV = c->n_kv_heads, hd = c->head_dim;
    int qd = g->qd, kvd = g->kvd, S = c->max_seq_len, R1 = g->rows_cap + 1, n = p.n;
    float eps = (float)c->norm_eps;
    const int *d_tok = g->ints + ROW_TOK * R1, *d_pos = g->ints + ROW_POS * R1, *d_line = g->ints + ROW_LINE * R1;
    const int *d_slot = g->ints + ROW_SLOT * R1, *d_src = g->ints + ROW_SRC * R1;
    const int *d_start = g->ints + ROW_SEQ_START * R1, *d_sslot = g->ints + ROW_SEQ_SLOT * R1;
    const int *d_spos0 = g->ints + ROW_SEQ_POS0 * R1;

    if (g->embed_bf16)
        MGK_LAUNCH(embed_kernel<uint16_t>, dim3(n), dim3(128), 0, g->x, g->embed16, g->pos_embed16, g->line_embed16,
                   d_tok, d_pos, d_line, d);
    else
        MGK_LAUNCH(embed_kernel<float>, dim3(n), dim3(128), 0, g->x, g->embed, g->pos_embed, g->line_embed, d_tok,
                   d_pos, d_line, d);
    TRY(mgk_status());
    for (int l = 0; l < c->n_layers; l++) {
        const mgk_layer *W = &g->layers[l];
        float *kc = g->kc + (size_t)l * g->max_batch * g->slot_floats, *vc = g->vc + (size_t)l * g->max_batch * g->slot_floats;
        /* attention block */
        TRY(mgk_rmsnorm(2, g->h, g->x, W->attn_norm, n, d, eps));
        TRY(matmul(g, g->q, g->h, W->wq, n, d, qd, 0));
        TRY(matmul(g, g->k, g->h, W->wk, n, d, kvd, 0));
        TRY(matmul(g, g->v, g->h, W->wv, n, d, kvd, 0));
        TRY(mgk_rope(1, g->q, d_pos, g->rope_cos, g->rope_sin, n, H, hd));
        TRY(mgk_rope(1, g->k, d_pos, g->rope_cos, g->rope_sin, n, KV, hd));
        MGK_LAUNCH(kv_store_kernel, dim3(n), dim3(128), 0, kc, vc, g->k, g->v, d_slot, d_pos, S, kvd);
        TRY(mgk_status());
        if (p.decode && p.pg.n_groups > 0) /* decoding with shared prefixes, each read once per group */
            TRY(mgk_attention_decode_shared(g->att, g->q, kc, vc, d_slot, d_pos, n, S, H, KV, hd, p.max_len, &p.pg, 0,
                                            g->work));
        else if (p.decode)
            TRY(mgk_attention_decode(g->att, g->q, kc, vc, d_slot, d_pos, n, S, H, KV, hd, p.max_len, 0, g->work));
        else
            TRY(mgk_attention_prefill(1, g->att, g->q, kc, vc, d_start, d_sslot, d_spos0, p.n_seq, p.max_rows, S, H, KV,
                                      hd));
        TRY(matmul(g, g->x, g->att, W->wo, n, qd, d, 1));
        /* MLP block */
        TRY(mgk_rmsnorm(2, g->h, g->x, W->mlp_norm, n, d, eps));
        TRY(matmul(g, g->g, g->h, W->gate, n, d, ff, 0));
        TRY(matmul(g, g->u, g->h, W->up, n, d, ff, 0));
        TRY(mgk_glu(1, g->g, g->u, (long)n * ff, c->geglu));
        TRY(matmul(g, g->x, g->g, W->down, n, ff, d, 1));
    }
    if (p.lo >= 0) { /* logits of the rows that want them, at their logit rows lo..hi */
        int k = p.hi - p.lo + 1;
        MGK_LAUNCH(gather_kernel, dim3(k), dim3(128), 0, g->h, g->x, d_src, d);
        TRY(mgk_status());
        TRY(mgk_rmsnorm(2, g->hl + (size_t)p.lo * d, g->h, g->norm, k, d, eps));
        TRY(matmul(g, g->logits + (size_t)p.lo * V, g->hl + (size_t)p.lo * d, g->out, k, d, V, 0));
    }
    return MGK_OK;
}

/* A decode pass as a CUDA graph: the row arrays uploaded into the fixed ints buffer (cudaMemcpyAsync on the
 * per-thread default stream, the graph's), then the graph of the pass's shape launched, captured and
 * instantiated first if the engine has none (the least recently used replaced when MGK_GRAPH_CACHE are held).
 * MGK_OK, an error of the pass itself (as launched), or -1: this pass could not be captured (launch it). */
static int graph_pass(mgk_engine *g, const pass_shape &p)
{
    int key[GK_N_KEY] = {p.n, p.max_len, p.pg.n_groups, p.pg.max_prefix_len, p.pg.max_group_rows, p.lo, p.hi};
    size_t bytes = (size_t)(g->rows_cap + 1) * ROW_N * sizeof(int);
    if (cudaMemcpyAsync(g->ints, g->h_ints, bytes, cudaMemcpyHostToDevice, cudaStreamPerThread) != cudaSuccess)
        return MGK_ERR_LAUNCH;
    mgk_graph *e = nullptr;
    for (int i = 0; i < g->n_cache && !e; i++)
        if (memcmp(g->cache[i].key, key, sizeof key) == 0)
            e = &g->cache[i];
    if (!e) {
        if (cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
            cudaGetLastError();
            return -1;
        }
        long tc0 = g->tc_products;
        int rc = launch_pass(g, p);
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        bool ok = cudaStreamEndCapture(cudaStreamPerThread, &graph) == cudaSuccess && rc == MGK_OK &&
                  cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
        if (graph)
            cudaGraphDestroy(graph);
        long tc = g->tc_products - tc0;
        g->tc_products = tc0; /* counted per launch below */
        if (!ok) {
            cudaGetLastError();
            return rc != MGK_OK ? rc : -1;
        }
        g->graph_captures++;
        if (g->n_cache < MGK_GRAPH_CACHE) {
            e = &g->cache[g->n_cache++];
        } else {
            e = &g->cache[0];
            for (int i = 1; i < g->n_cache; i++)
                e = g->cache[i].used < e->used ? &g->cache[i] : e;
            cudaGraphExecDestroy(e->exec);
        }
        memcpy(e->key, key, sizeof key);
        e->exec = exec;
        e->tc = tc;
    }
    e->used = ++g->tick;
    if (cudaGraphLaunch(e->exec, cudaStreamPerThread) != cudaSuccess)
        return MGK_ERR_LAUNCH;
    g->graph_launches++;
    g->tc_products += e->tc;
    return MGK_OK;
}

extern "C" int mgk_forward(mgk_engine *g, int n, const int32_t *tok, const int32_t *slot, const int32_t *pos,
                           const int32_t *line, const int32_t *logit)
{
    int R1 = g->rows_cap + 1;
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
            alias_drop(g, slot[r], pos[r]); /* the sequence's positions from pos[r] on are written */
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
    if (hi >= g->max_batch) /* logits rows are the engine's [max_batch] rows */
        return MGK_ERR_ARG;
    h[ROW_SEQ_START * R1 + n_seq] = n;
    for (int j = 0; lo >= 0 && j <= hi - lo; j++)
        h[ROW_SRC * R1 + j] = -1;
    for (int r = 0; r < n; r++)
        if (logit[r] >= 0)
            h[ROW_SRC * R1 + logit[r] - lo] = r;
    bool decode = max_rows == 1 && n <= g->max_batch; /* one row per sequence */
    int n_groups = 0, max_prefix = 0, max_group_rows = 0;
    if (decode) {
        n_groups = decode_groups(g, n, slot, pos, h, R1, &max_prefix, &max_group_rows);
        max_len = decode_len(max_len, g->c.max_seq_len);
    }
    g->shared_passes += n_groups > 0;
    pass_shape p = {n, decode, n_seq, max_rows, max_len, lo, hi,
                    {g->ints + ROW_G_OF_ROW * R1, g->ints + ROW_G_START * R1, g->ints + ROW_G_ROWS * R1,
                     g->ints + ROW_G_SLOT * R1, g->ints + ROW_G_LEN * R1, n_groups, max_prefix, max_group_rows}};
    if (decode && g->graphs) {
        int rc = graph_pass(g, p);
        if (rc >= 0)
            return rc;
        g->graphs = 0; /* this device or build cannot capture: launched from now on */
    }
    if (cudaMemcpy(g->ints, h, (size_t)R1 * ROW_N * sizeof(int), cudaMemcpyHostToDevice) != cudaSuccess)
        return MGK_ERR_LAUNCH;
    return launch_pass(g, p);
}

/* ---- the KV cache and the prefix cache ------------------------------------------------------ */

extern "C" int mgk_copy_prefix(mgk_engine *g, int src, int dst, int len)
{
    /* dst's positions [0, len) are written; they now equal src's (or those src shares in turn) */
    alias_drop(g, dst, 0);
    size_t n = (size_t)len * g->kvd * sizeof(float);
    for (int l = 0; l < g->c.n_layers; l++) {
        size_t off = (size_t)l * g->max_batch * g->slot_floats;
        if (cudaMemcpy(g->kc + off + dst * g->slot_floats, g->kc + off + src * g->slot_floats, n,
                       cudaMemcpyDeviceToDevice) != cudaSuccess ||
            cudaMemcpy(g->vc + off + dst * g->slot_floats, g->vc + off + src * g->slot_floats, n,
                       cudaMemcpyDeviceToDevice) != cudaSuccess)
            return MGK_ERR_LAUNCH;
    }
    if (len > 0 && src != dst) {
        g->alias_src[dst] = g->alias_len[src] >= len ? g->alias_src[src] : src;
        g->alias_len[dst] = len;
    }
    return MGK_OK;
}

extern "C" int mgk_kv_transfer(mgk_engine *g, int slot, int len, float *hk, float *hv, size_t layer_stride, int upload)
{
    size_t n = (size_t)len * g->kvd * sizeof(float);
    if (upload)
        alias_drop(g, slot, 0);
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

#ifdef MGK_MAIN
/* The driver: the CPU engine and the CUDA engine (this file and every kernel, on the harness or a
 * GPU) on small random models: a ragged prefill pass, a shared prefix copied between slots, decode
 * passes (logits compared row by row), then whole generate() requests (grouped and plain choice,
 * bucket distributions, stop tokens, prefix sharing, the cross-batch prefix cache, more prompts
 * than max_batch): the same tokens, and distributions within a tolerance. */
#include "driver.h"
#include "game.h"

#include <algorithm>
#include <cstring>

#include "model/choose.h"
#include <cmath>
extern "C" {
#include "model/engine_impl.h" /* the driver feeds passes to mg_engine_forward itself */
}

struct RandModel {
    std::vector<float> arena;
    std::vector<mg_layer_weights> layers;
    mg_model m;
};

/* A model of config c with random weights (scaled so that activations stay of order 1). */
static void rand_model(RandModel &rm, const mg_model_config &c, drv::Rng &rng)
{
    int d = c.d_model, V = c.vocab_size, ff = c.d_ff, qd = c.n_heads * c.head_dim, kvd = c.n_kv_heads * c.head_dim;
    size_t total = (size_t)V * d + (c.abs_pos ? (size_t)c.max_seq_len * d : 0) + (size_t)c.line_pos * d + d +
                   mg_matmul_packed_floats(d, V) +
                   (size_t)c.n_layers * (2 * d + mg_matmul_packed_floats(d, qd) + 2 * mg_matmul_packed_floats(d, kvd) +
                                         mg_matmul_packed_floats(qd, d) + 2 * mg_matmul_packed_floats(d, ff) +
                                         mg_matmul_packed_floats(ff, d));
    rm.arena.assign(total, 0.0f);
    size_t at = 0;
    auto vec = [&](size_t n, float lo, float hi) {
        float *p = rm.arena.data() + at;
        for (size_t i = 0; i < n; i++)
            p[i] = rng.uniform(lo, hi);
        at += n;
        return p;
    };
    auto packed = [&](int in, int out) { /* W[in][out] uniform in +-1/sqrt(in), packed */
        float *p = rm.arena.data() + at, a = 1.0f / std::sqrt((float)in);
        for (int k = 0; k < in; k++)
            for (int j = 0; j < out; j++)
                p[mg_pack_at(in, k, j)] = rng.uniform(-a, a);
        at += mg_matmul_packed_floats(in, out);
        return p;
    };
    std::memset(&rm.m, 0, sizeof rm.m);
    rm.m.cfg = c;
    rm.m.embed = vec((size_t)V * d, -1, 1);
    rm.m.pos_embed = c.abs_pos ? vec((size_t)c.max_seq_len * d, -0.5f, 0.5f) : nullptr;
    rm.m.line_embed = c.line_pos ? vec((size_t)c.line_pos * d, -0.5f, 0.5f) : nullptr;
    rm.m.norm = vec((size_t)d, 0.5f, 1.5f);
    if (c.tie_embeddings) { /* the output layer is embed^T, packed (as the loader does) */
        float *p = rm.arena.data() + at;
        for (int r = 0; r < V; r++)
            for (int k = 0; k < d; k++)
                p[mg_pack_at(d, k, r)] = rm.m.embed[(size_t)r * d + k];
        at += mg_matmul_packed_floats(d, V);
        rm.m.out = p;
    } else {
        rm.m.out = packed(d, V);
    }
    rm.layers.resize((size_t)c.n_layers);
    for (auto &L : rm.layers) {
        L.attn_norm = vec((size_t)d, 0.5f, 1.5f);
        L.wq = packed(d, qd);
        L.wk = packed(d, kvd);
        L.wv = packed(d, kvd);
        L.wo = packed(qd, d);
        L.mlp_norm = vec((size_t)d, 0.5f, 1.5f);
        L.gate = packed(d, ff);
        L.up = packed(d, ff);
        L.down = packed(ff, d);
    }
    rm.m.layers = rm.layers.data();
}

static mg_model_config config(int V, int d, int L, int H, int KV, int ff, int S, int geglu, int tie, int abs_pos,
                              int line_pos)
{
    mg_model_config c;
    std::memset(&c, 0, sizeof c);
    c.vocab_size = V;
    c.d_model = d;
    c.n_layers = L;
    c.n_heads = H;
    c.n_kv_heads = KV;
    c.d_ff = ff;
    c.max_seq_len = S;
    c.rope_theta = 10000.0;
    c.norm_eps = 1e-5;
    c.geglu = geglu;
    c.tie_embeddings = tie;
    c.abs_pos = abs_pos;
    c.line_pos = line_pos;
    c.newline_id = 5;
    c.head_dim = d / H;
    return c;
}

static std::vector<int32_t> rand_tokens(drv::Rng &rng, int n, int V)
{
    std::vector<int32_t> t((size_t)n);
    for (auto &x : t)
        x = 6 + rng.below(V - 6); /* ids 0..5 (the stop ids, the newline) only where placed */
    return t;
}

/* Rows of one pass: prompt p's positions [from, to) in slot s, the last asking for logits row lr. */
static void add_rows(mg_engine *e, int &nr, const std::vector<int32_t> &p, int s, int from, int to, int lr)
{
    for (int t = from; t < to; t++, nr++) {
        e->r_tok[nr] = p[(size_t)t];
        e->r_slot[nr] = s;
        e->r_pos[nr] = t;
        e->r_logit[nr] = t == to - 1 ? lr : -1;
    }
}

/* The pass just run on `gpu` (rows rows, from the graph cache) run again with the CUDA graphs off (it writes the same
 * keys and values): whether its logits are the graph's, bit for bit.  zg, ze: scratch of rows x V floats at least. */
static bool same_without_graphs(mg_engine *gpu, int rows, std::vector<float> &zg, std::vector<float> &ze)
{
    mg_engine_read_logits(gpu, rows, zg.data());
    gpu->gpu->graphs = 0;
    mg_engine_forward(gpu, rows);
    gpu->gpu->graphs = 1;
    mg_engine_read_logits(gpu, rows, ze.data());
    return std::memcmp(zg.data(), ze.data(), (size_t)rows * (size_t)gpu->c.vocab_size * sizeof(float)) == 0;
}

static int compare_logits(const char *what, mg_engine *cpu, mg_engine *gpu, int rows, std::vector<float> &zc,
                          float tol = 2e-4f)
{
    int V = cpu->c.vocab_size;
    std::vector<float> zg((size_t)rows * V);
    zc.assign((size_t)rows * V, 0.0f);
    if (mg_engine_read_logits(cpu, rows, zc.data()) != MG_OK || mg_engine_read_logits(gpu, rows, zg.data()) != MG_OK ||
        gpu->gpu_err) {
        std::printf("MISMATCH %s: the logits could not be read (device error %d)\n", what, gpu->gpu_err);
        return 1;
    }
    return drv::close(what, zg.data(), zc.data(), zg.size(), tol, tol) ? 0 : 1;
}

/* Prefill and decode passes driven by hand (mg_engine_forward), the same rows on both engines. */
static int check_passes(const char *name, mg_engine *cpu, mg_engine *gpu, drv::Rng &rng, int steps, float tol = 2e-4f)
{
    int fails = 0, V = cpu->c.vocab_size;
    /* ragged prompts: longer than one attention tile, short, one token; p2 shares 20 tokens of p0 */
    std::vector<std::vector<int32_t>> pr = {rand_tokens(rng, 37, V), rand_tokens(rng, 5, V), {}, rand_tokens(rng, 1, V)};
    pr[0][7] = pr[0][15] = 5; /* newlines: line positions restart */
    pr[2] = std::vector<int32_t>(pr[0].begin(), pr[0].begin() + 20);
    auto tail = rand_tokens(rng, 12, V);
    pr[2].insert(pr[2].end(), tail.begin(), tail.end());
    char what[160];
    for (mg_engine *e : {cpu, gpu}) {
        for (int b = 0; b < 4; b++)
            e->line_start[b] = 0;
        int nr = 0;
        add_rows(e, nr, pr[0], 0, 0, 37, 0);
        add_rows(e, nr, pr[1], 1, 0, 5, 1);
        add_rows(e, nr, pr[3], 3, 0, 1, 2);
        mg_engine_forward(e, nr);
    }
    std::vector<float> z;
    std::snprintf(what, sizeof what, "%s: ragged prefill of 3 prompts", name);
    fails += compare_logits(what, cpu, gpu, 3, z, tol);
    for (mg_engine *e : {cpu, gpu}) { /* slot 2 takes p0's first 20 positions, computes the rest */
        mg_engine_copy_prefix(e, 0, 2, 20);
        e->line_start[2] = 16;
        int nr = 0;
        add_rows(e, nr, pr[2], 2, 20, 32, 0);
        mg_engine_forward(e, nr);
    }
    std::snprintf(what, sizeof what, "%s: prefill after a shared prefix of 20", name);
    fails += compare_logits(what, cpu, gpu, 1, z, tol);
    int pos[4] = {37, 5, 32, 1};
    std::vector<int32_t> next(4);
    std::vector<float> zg((size_t)4 * V), ze((size_t)4 * V);
    long launches0 = gpu->gpu->graph_launches, captures0 = gpu->gpu->graph_captures;
    int same = 0;
    for (int step = 0; step < steps; step++) { /* decode: one row per slot, the CPU engine's argmax fed to both */
        for (int b = 0; b < 4; b++)
            next[(size_t)b] = step == 0 ? 6 + b : next[(size_t)b];
        for (mg_engine *e : {cpu, gpu}) {
            for (int b = 0; b < 4; b++) {
                e->r_tok[b] = next[(size_t)b];
                e->r_slot[b] = b;
                e->r_pos[b] = pos[b];
                e->r_logit[b] = b;
            }
            mg_engine_forward(e, 4);
        }
        std::snprintf(what, sizeof what, "%s: decode step %d", name, step);
        fails += compare_logits(what, cpu, gpu, 4, z, tol);
        /* the same step again with the graphs off (it writes the same keys and values): the same logits, bit for
         * bit, as the graph's */
        if (!same_without_graphs(gpu, 4, zg, ze)) {
            std::printf("MISMATCH %s: decode step %d with CUDA graphs and without differ\n", name, step);
            fails++;
        } else {
            same++;
        }
        for (int b = 0; b < 4; b++)
            pos[b]++;
        for (int b = 0; b < 4; b++)
            next[(size_t)b] = mg_choose_token(&z[(size_t)b * V], V, cpu->in_group, cpu->group, 0);
    }
    /* every decode step ran as a graph, captured once (the same shape every step), replayed after */
    long launches = gpu->gpu->graph_launches - launches0, captures = gpu->gpu->graph_captures - captures0;
    if (launches != steps || captures != 1 || same != steps) {
        std::printf("MISMATCH %s: %ld of %d decode steps ran as CUDA graphs (%ld captured; %d the same without)\n",
                    name, launches, steps, captures, same);
        fails++;
    } else {
        std::printf("ok %s: %d decode steps as CUDA graph launches (1 capture, %d replays), the same logits bit for "
                    "bit without graphs\n", name, steps, steps - 1);
    }
    /* slots 0 and 2 share 20 positions: every decode step read them once from slot 0 (cascade) */
    long shared = gpu->gpu->shared_passes;
    /* a new prompt in slot 0 overwrites the prefix slot 2 read from there: slot 2 must now read its own copy */
    auto fresh = rand_tokens(rng, 25, V);
    for (mg_engine *e : {cpu, gpu}) {
        e->line_start[0] = 0;
        int nr = 0;
        add_rows(e, nr, fresh, 0, 0, 25, 0);
        mg_engine_forward(e, nr);
    }
    pos[0] = 25;
    for (mg_engine *e : {cpu, gpu}) {
        for (int b = 0; b < 4; b++) {
            e->r_tok[b] = next[(size_t)b];
            e->r_slot[b] = b;
            e->r_pos[b] = pos[b];
            e->r_logit[b] = b;
        }
        mg_engine_forward(e, 4);
    }
    std::snprintf(what, sizeof what, "%s: decode step after the shared prefix's slot took a new prompt", name);
    fails += compare_logits(what, cpu, gpu, 4, z, tol);
    /* batch-1 decode (what the graphs are for): slot 1 alone for many steps, one graph captured and replayed,
     * every step against the CPU engine and, again without graphs, bit for bit */
    for (int b = 0; b < 4; b++)
        pos[b]++;
    int steps1 = 2 * steps;
    launches0 = gpu->gpu->graph_launches;
    captures0 = gpu->gpu->graph_captures;
    same = 0;
    int32_t t1 = next[1];
    for (int step = 0; step < steps1; step++) {
        for (mg_engine *e : {cpu, gpu}) {
            e->r_tok[0] = t1;
            e->r_slot[0] = 1;
            e->r_pos[0] = pos[1];
            e->r_logit[0] = 0;
            mg_engine_forward(e, 1);
        }
        std::snprintf(what, sizeof what, "%s: batch-1 decode step %d", name, step);
        fails += compare_logits(what, cpu, gpu, 1, z, tol);
        same += same_without_graphs(gpu, 1, zg, ze);
        pos[1]++;
        t1 = mg_choose_token(z.data(), V, cpu->in_group, cpu->group, 0);
    }
    launches = gpu->gpu->graph_launches - launches0;
    captures = gpu->gpu->graph_captures - captures0;
    if (launches != steps1 || captures != 1 || same != steps1) {
        std::printf("MISMATCH %s: %ld of %d batch-1 decode steps ran as CUDA graphs (%ld captured; %d the same "
                    "without)\n", name, launches, steps1, captures, same);
        fails++;
    } else {
        std::printf("ok %s: %d batch-1 decode steps as CUDA graph launches (1 capture, %d replays), the same logits "
                    "bit for bit without graphs\n", name, steps1, steps1 - 1);
    }
    if (shared < 2 * steps) { /* each step twice: with and without graphs */
        std::printf("MISMATCH %s: %ld of %d decode passes read the shared prefix once\n", name,
                    shared, 2 * steps);
        fails++;
    } else
        std::printf("ok %s: decode steps over a shared prefix (%ld passes read it once per group)\n", name, shared);
    return fails;
}

/* Whole requests through mg_engine_generate on both engines. */
static int check_generate(const char *name, mg_engine *cpu, mg_engine *gpu, drv::Rng &rng, int grouped, int sharing,
                          int max_new, int rounds, bool without_graphs = false)
{
    int V = cpu->c.vocab_size, fails = 0;
    /* prompts sharing a 20-token header, two sharing 34 (more than two prefix-cache blocks), a short one */
    auto head = rand_tokens(rng, 20, V), mid = rand_tokens(rng, 14, V);
    std::vector<std::vector<int32_t>> pr;
    for (int i = 0; i < 5; i++) {
        auto p = head;
        if (i < 2)
            p.insert(p.end(), mid.begin(), mid.end());
        auto own = rand_tokens(rng, 1 + rng.below(9), V);
        p.insert(p.end(), own.begin(), own.end());
        pr.push_back(p);
    }
    pr.push_back(rand_tokens(rng, 3, V));
    std::vector<const int32_t *> ptrs;
    std::vector<int32_t> lens;
    for (auto &p : pr) {
        ptrs.push_back(p.data());
        lens.push_back((int32_t)p.size());
    }
    std::vector<int32_t> stop = {3}, group, buckets;
    for (int t = 10; t < 10 + V / 3; t++)
        group.push_back(t);
    for (int t = 6; t < 6 + 24; t++)
        buckets.push_back(t);
    mg_gen_request q;
    std::memset(&q, 0, sizeof q);
    q.n = (int)pr.size();
    q.prompts = ptrs.data();
    q.lens = lens.data();
    q.max_new_tokens = max_new;
    q.stop_ids = stop.data();
    q.n_stop = 1;
    q.group_ids = grouped ? group.data() : nullptr;
    q.n_group = grouped ? (int)group.size() : 0;
    q.bucket_ids = buckets.data();
    q.n_buckets = (int)buckets.size();
    q.prefix_sharing = sharing;
    char err[256];
    int cap = mg_engine_budget(cpu, &q, err, sizeof err), nb = q.n_buckets;
    std::vector<std::vector<int32_t>> ids(2 * pr.size(), std::vector<int32_t>((size_t)cap)),
        steps(ids.size(), std::vector<int32_t>((size_t)cap));
    std::vector<std::vector<float>> probs(ids.size(), std::vector<float>((size_t)cap * nb));
    std::vector<mg_gen_result> res(ids.size());
    for (size_t i = 0; i < res.size(); i++)
        res[i] = {ids[i].data(), steps[i].data(), probs[i].data(), 0, 0, 0};
    int values = 0;
    long shared0 = gpu->gpu->shared_passes, launches0 = gpu->gpu->graph_launches;
    for (int round = 0; round < rounds; round++) { /* the second time the prefix cache (if any) answers */
        if (mg_engine_generate(cpu, &q, res.data(), err, sizeof err) != MG_OK ||
            mg_engine_generate(gpu, &q, res.data() + pr.size(), err, sizeof err) != MG_OK) {
            std::printf("MISMATCH %s: generate failed: %s\n", name, err);
            return 1;
        }
        for (size_t i = 0; i < pr.size(); i++) {
            const mg_gen_result &a = res[i], &b = res[i + pr.size()];
            char what[160];
            std::snprintf(what, sizeof what, "%s: generate grouped=%d sharing=%d round %d prompt %zu (%d tokens, %d values)",
                          name, grouped, sharing, round, i, a.n_ids, a.n_values);
            bool same = a.n_ids == b.n_ids && a.n_values == b.n_values && a.finished == b.finished &&
                        std::equal(a.ids, a.ids + a.n_ids, b.ids) && std::equal(a.value_steps, a.value_steps + a.n_values, b.value_steps);
            if (!same) {
                std::printf("MISMATCH %s: tokens differ:", what);
                for (int k = 0; k < a.n_ids; k++)
                    std::printf(" %d", a.ids[k]);
                std::printf(" | cuda:");
                for (int k = 0; k < b.n_ids; k++)
                    std::printf(" %d", b.ids[k]);
                std::printf("\n");
                fails++;
            } else if (a.n_values && !drv::close(what, b.value_probs, a.value_probs, (size_t)a.n_values * nb, 1e-5f, 1e-4f)) {
                fails++;
            } else if (!a.n_values) {
                std::printf("ok %s\n", what);
            }
            values += a.n_values;
        }
    }
    long launches = gpu->gpu->graph_launches - launches0;
    if (launches == 0) {
        std::printf("MISMATCH %s: generate grouped=%d sharing=%d ran no decode step as a CUDA graph\n", name, grouped,
                    sharing);
        fails++;
    } else {
        std::printf("ok %s: generate grouped=%d sharing=%d: %ld decode steps as CUDA graph launches (%d graphs held)\n",
                    name, grouped, sharing, launches, gpu->gpu->n_cache);
    }
    if (sharing && gpu->gpu->shared_passes == shared0) {
        std::printf("MISMATCH %s: no decode pass read a shared prefix once for its group\n", name);
        fails++;
    } else if (sharing)
        std::printf("ok %s: %ld decode passes read shared prefixes once per group\n", name,
                    gpu->gpu->shared_passes - shared0);
    mg_engine_stats sc, sg;
    mg_engine_get_stats(cpu, &sc);
    mg_engine_get_stats(gpu, &sg);
    if (sc.prefill_tokens != sg.prefill_tokens || sc.shared_saved != sg.shared_saved || sc.cache_saved != sg.cache_saved ||
        (sharing && sc.shared_saved == 0)) {
        std::printf("MISMATCH %s: statistics differ (prefill %lld / %lld, shared %lld / %lld, cache %lld / %lld)\n",
                    name, (long long)sc.prefill_tokens, (long long)sg.prefill_tokens, (long long)sc.shared_saved,
                    (long long)sg.shared_saved, (long long)sc.cache_saved, (long long)sg.cache_saved);
        fails++;
    }
    /* the last round again with the graphs off (no prefix cache: the same passes): the same tokens and bucket
     * distributions, bit for bit */
    if (without_graphs) {
        std::vector<mg_gen_result> res2(pr.size());
        std::vector<std::vector<int32_t>> ids2(pr.size(), std::vector<int32_t>((size_t)cap)),
            steps2(pr.size(), std::vector<int32_t>((size_t)cap));
        std::vector<std::vector<float>> probs2(pr.size(), std::vector<float>((size_t)cap * nb));
        for (size_t i = 0; i < res2.size(); i++)
            res2[i] = {ids2[i].data(), steps2[i].data(), probs2[i].data(), 0, 0, 0};
        gpu->gpu->graphs = 0;
        long l0 = gpu->gpu->graph_launches;
        int rc = mg_engine_generate(gpu, &q, res2.data(), err, sizeof err);
        gpu->gpu->graphs = 1;
        int differ = rc != MG_OK || gpu->gpu->graph_launches != l0;
        for (size_t i = 0; i < pr.size() && !differ; i++) {
            const mg_gen_result &a = res[i + pr.size()], &b = res2[i];
            differ = a.n_ids != b.n_ids || a.n_values != b.n_values || a.finished != b.finished ||
                     !std::equal(a.ids, a.ids + a.n_ids, b.ids) ||
                     std::memcmp(a.value_probs, b.value_probs, (size_t)a.n_values * nb * sizeof(float)) != 0;
        }
        if (differ) {
            std::printf("MISMATCH %s: generate grouped=%d sharing=%d with CUDA graphs and without differ\n", name,
                        grouped, sharing);
            fails++;
        } else {
            std::printf("ok %s: generate grouped=%d sharing=%d the same bit for bit without CUDA graphs\n", name,
                        grouped, sharing);
        }
    }
    if (!values)
        std::printf("note %s: no value token was generated\n", name);
    return fails;
}

/* The bf16 engine (MG_ENGINE_CUDA | MG_ENGINE_BF16, created from rm's float32 weights: it rounds them itself)
 * against the CPU engine over the same model with its weight matrices and embeddings rounded to bf16 (rm rounded in place
 * here, nearest-even): every pass of check_passes and a plain prefill within BF16_TOL (absolute and relative).
 * The passes of MGK_TC_MIN_ROWS rows or more run on tensor cores (matmul.cu 4), which round the activations
 * too, where the CPU engine keeps them float32; the decode steps and short prefills after them read the keys
 * and values those passes cached.  Seen, as max |error| / (1 + |reference|) over every bf16 comparison: 5.5e-3
 * (default models, seeds 1-4), 1.5e-2 (--full, seeds 1-2); before kernel 4 (float32 activations) 2e-6, under
 * the float32 comparison's 2e-4, which the float32 engine keeps.  Two checks that a bf16 engine silently
 * multiplying float32 weights fails: its logits must differ from the CPU engine's over the unrounded weights by
 * more than 4e-4 (seen: 2.5e-3 to 2.3e-2; a float32 engine: about 1e-6), and its device weights must take
 * exactly 2 bytes less per matrix and embedding weight than the float32 engine's (a bf16 engine keeping
 * float32 embeddings fails that).  And on a device with tensor cores (the
 * harness emulates an sm_80) some products must have run on them. */
#define BF16_TOL 3e-2f
static int check_bf16(const char *name, RandModel &rm, int max_batch, size_t f32_bytes, drv::Rng &rng, int steps)
{
    const mg_model_config &c = rm.m.cfg;
    int fails = 0, V = c.vocab_size, d = c.d_model, qd = c.n_heads * c.head_dim, kvd = c.n_kv_heads * c.head_dim;
    char err[512], what[160];
    mg_engine *cpu32 = nullptr, *cpu16 = nullptr, *gpu16 = nullptr;
    auto p = rand_tokens(rng, 23, V);
    std::vector<float> z32((size_t)V), z16((size_t)V), zg((size_t)V);
    if (mg_engine_create(&cpu32, &rm.m, max_batch, 1, MG_ENGINE_NO_SIMD, err, sizeof err) != MG_OK ||
        mg_engine_logits(cpu32, p.data(), 23, z32.data(), err, sizeof err) != MG_OK ||
        mg_engine_create(&gpu16, &rm.m, max_batch, 1, MG_ENGINE_CUDA | MG_ENGINE_BF16, err, sizeof err) != MG_OK) {
        std::printf("MISMATCH %s: bf16 engine creation failed: %s\n", name, err);
        mg_engine_free(cpu32);
        mg_engine_free(gpu16);
        return 1;
    }
    mg_engine_free(cpu32);
    /* the weights the bf16 engine keeps in bf16 (the matrices and the embeddings), rounded in place (they live
     * in rm.arena) */
    size_t matrix_floats = 0;
    auto round_n = [&](const float *w, size_t n) {
        float *q = const_cast<float *>(w);
        for (size_t i = 0; q && i < n; i++) {
            uint32_t u = (uint32_t)mgk_bf16_round(q[i]) << 16;
            std::memcpy(&q[i], &u, sizeof u);
        }
        matrix_floats += q ? n : 0;
    };
    auto round_bf16 = [&](const float *w, int in, int out) { round_n(w, mg_matmul_packed_floats(in, out)); };
    round_n(rm.m.embed, (size_t)V * d);
    round_n(rm.m.pos_embed, (size_t)c.max_seq_len * d);
    round_n(rm.m.line_embed, (size_t)c.line_pos * d);
    round_bf16(rm.m.out, d, V);
    for (auto &L : rm.layers) {
        round_bf16(L.wq, d, qd);
        round_bf16(L.wk, d, kvd);
        round_bf16(L.wv, d, kvd);
        round_bf16(L.wo, qd, d);
        round_bf16(L.gate, d, c.d_ff);
        round_bf16(L.up, d, c.d_ff);
        round_bf16(L.down, c.d_ff, d);
    }
    size_t bytes16 = mg_engine_weight_bytes(gpu16);
    if (!mg_engine_bf16(gpu16) || bytes16 + 2 * matrix_floats != f32_bytes) {
        std::printf("MISMATCH %s: bf16 weights take %zu device bytes, the float32 engine's %zu less 2 x %zu matrix "
                    "and embedding weights is %zu\n", name, bytes16, f32_bytes, matrix_floats, f32_bytes - 2 * matrix_floats);
        fails++;
    } else {
        std::printf("ok %s: bf16 device weights %zu bytes, float32 %zu\n", name, bytes16, f32_bytes);
    }
    if (mg_engine_create(&cpu16, &rm.m, max_batch, 1, MG_ENGINE_NO_SIMD, err, sizeof err) != MG_OK) {
        std::printf("MISMATCH %s: engine creation failed: %s\n", name, err);
        mg_engine_free(gpu16);
        return fails + 1;
    }
    std::snprintf(what, sizeof what, "%s bf16", name);
    fails += check_passes(what, cpu16, gpu16, rng, steps, BF16_TOL);
    std::snprintf(what, sizeof what, "%s bf16: mg_engine_logits against the reference over rounded weights", name);
    if (mg_engine_logits(cpu16, p.data(), 23, z16.data(), err, sizeof err) != MG_OK ||
        mg_engine_logits(gpu16, p.data(), 23, zg.data(), err, sizeof err) != MG_OK) {
        std::printf("MISMATCH %s: %s\n", what, err);
        fails++;
    } else {
        if (!drv::close(what, zg.data(), z16.data(), zg.size(), BF16_TOL, BF16_TOL))
            fails++;
        double far = 0.0;
        for (int i = 0; i < V; i++)
            far = std::max(far, (double)std::fabs(zg[(size_t)i] - z32[(size_t)i]));
        std::snprintf(what, sizeof what, "%s bf16: logits differ from the float32 weights' by %.3g", name, far);
        if (far <= 2 * 2e-4) {
            std::printf("MISMATCH %s (not more than %.3g: the bf16 engine multiplies float32 weights)\n", what,
                        2 * 2e-4);
            fails++;
        } else {
            std::printf("ok %s\n", what);
        }
    }
    /* the passes of at least MGK_TC_MIN_ROWS rows (the ragged prefill of 43, the 25-row prompt, the 23-row
     * prefill) ran on tensor cores where there are some (the harness: an sm_80) */
    long tc = gpu16->gpu->tc_products;
    if (mgk_matmul_tensor_cores() && tc == 0) {
        std::printf("MISMATCH %s bf16: no product ran on tensor cores (matmul.cu 4)\n", name);
        fails++;
    } else if (tc) {
        std::printf("ok %s bf16: %ld products on tensor cores (matmul.cu 4: passes of %d rows or more)\n", name, tc,
                    MGK_TC_MIN_ROWS);
    } else {
        std::printf("note %s bf16: no tensor cores here, every product on kernels 2 and 3\n", name);
    }
    mg_engine_free(cpu16);
    mg_engine_free(gpu16);
    return fails;
}

int main(int argc, char **argv)
{
    drv::Rng rng(drv::seed_arg(argc, argv));
    int fails = 0;
    /* the harness runs a block's threads as OS threads: every barrier of a 256-thread block is 256
     * context switches, so the default run uses models whose products are single 32x32 tiles;
     * --bench (or --full) the larger ones, with more layers and steps */
    bool full = drv::bench_arg(argc, argv);
    for (int i = 1; i < argc; i++)
        full = full || std::strcmp(argv[i], "--full") == 0;
    int L = full ? 2 : 1, steps = full ? 6 : 3, max_new = full ? 8 : 3;
    struct {
        const char *name;
        mg_model_config c;
        int max_batch, prefix_cache, rounds;
    } models[] = {
        {"gqa-swiglu", full ? config(61, 48, L, 4, 2, 80, 96, 0, 0, 0, 0) : config(40, 32, L, 4, 2, 32, 64, 0, 0, 0, 0),
         4, 0, 1},
        {"mqa-geglu-tied-abspos-linepos",
         full ? config(67, 64, L, 2, 1, 96, 80, 1, 1, 1, 8) : config(40, 32, L, 2, 1, 32, 64, 1, 1, 1, 8), 4, 64, 2},
    };
    for (auto &md : models) {
        RandModel rm;
        rand_model(rm, md.c, rng);
        mg_engine *cpu = nullptr, *gpu = nullptr;
        char err[512];
        if (mg_engine_create(&cpu, &rm.m, md.max_batch, 1, MG_ENGINE_NO_SIMD, err, sizeof err) != MG_OK ||
            mg_engine_create(&gpu, &rm.m, md.max_batch, 1, MG_ENGINE_CUDA, err, sizeof err) != MG_OK ||
            mg_engine_set_prefix_cache(cpu, md.prefix_cache, err, sizeof err) != MG_OK ||
            mg_engine_set_prefix_cache(gpu, md.prefix_cache, err, sizeof err) != MG_OK) {
            std::printf("MISMATCH %s: engine creation failed: %s\n", md.name, err);
            fails++;
            mg_engine_free(cpu);
            mg_engine_free(gpu);
            continue;
        }
        if (std::strcmp(mg_engine_kernel(gpu), "cuda") != 0 || mg_engine_device(gpu) != MG_ENGINE_DEVICE_CUDA) {
            std::printf("MISMATCH %s: the CUDA engine reports kernel %s\n", md.name, mg_engine_kernel(gpu));
            fails++;
        }
        fails += check_passes(md.name, cpu, gpu, rng, steps);
        fails += check_generate(md.name, cpu, gpu, rng, 1, 1, max_new, md.rounds, md.prefix_cache == 0);
        if (full || md.prefix_cache) /* plain choice without sharing: one model is enough by default */
            fails += check_generate(md.name, cpu, gpu, rng, 0, 0, max_new, 1);
        /* mg_engine_logits: a plain prefill of one prompt */
        auto p = rand_tokens(rng, 23, md.c.vocab_size);
        std::vector<float> zc((size_t)md.c.vocab_size), zg(zc.size());
        char what[96];
        std::snprintf(what, sizeof what, "%s: mg_engine_logits", md.name);
        if (mg_engine_logits(cpu, p.data(), 23, zc.data(), err, sizeof err) != MG_OK ||
            mg_engine_logits(gpu, p.data(), 23, zg.data(), err, sizeof err) != MG_OK) {
            std::printf("MISMATCH %s: %s\n", what, err);
            fails++;
        } else if (!drv::close(what, zg.data(), zc.data(), zc.size(), 2e-4f, 2e-4f)) {
            fails++;
        }
        size_t f32_bytes = mg_engine_weight_bytes(gpu);
        mg_engine_free(cpu);
        mg_engine_free(gpu);
        fails += check_bf16(md.name, rm, md.max_batch, f32_bytes, rng, steps); /* rounds rm's matrices: last */
    }
    return drv::finish(fails);
}
#endif

/*
 * engine.c - the engine's buffers, KV cache and forward pass (engine.h, engine_impl.h).
 *
 * A pass takes n token rows of any sequences (ragged: no padding), each at its own position,
 * and runs the transformer over them: the matrix products over all rows at once (split over
 * the thread pool by blocks of rows and columns), the per-row layers (layers.h) row by row.
 * An engine created with MG_ENGINE_CUDA runs the same pass on the GPU instead
 * (kernels/forward.cu): the generation logic (generate.c) is the same for both.
 */
#include "engine_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../game.h"
#include "choose.h"
#include "layers.h"

#ifdef MG_WITH_CUDA
#include "../../kernels/mgk.h"
#endif

/* ---- creation ----------------------------------------------------------------------------- */

void mg_engine_free(mg_engine *e)
{
    if (!e)
        return;
    mg_pool_free(e->pool);
    mg_pc_free(&e->pc);
#ifdef MG_WITH_CUDA
    mgk_engine_free(e->gpu);
#endif
    void *bufs[] = {e->rope_cos, e->rope_sin, e->kc, e->vc, e->line_start, e->r_tok, e->r_slot, e->r_pos,
                    e->r_logit, e->x, e->h, e->q, e->k, e->v, e->att, e->g, e->u, e->hl, e->logits, e->scores,
                    e->is_stop, e->in_group, e->bucket_of, e->group, e->gen_idx, e->gen_pos, e->gen_last,
                    e->pf_order, e->pf_tmp, e->pf_lcp, e->pf_src, e->pf_share, e->pf_state, e->pf_cached,
                    e->r_line, e->c_tok, e->c_probs};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    free(e);
}

int mg_engine_create(mg_engine **out, const mg_model *m, int max_batch, int threads, unsigned flags, char *err,
                     size_t errlen)
{
    *out = NULL;
    if (max_batch < 1 || max_batch > 4096) {
        snprintf(err, errlen, "max_batch must be in [1, 4096], got %d", max_batch);
        return MG_ERR;
    }
#ifndef MG_WITH_CUDA
    if (flags & MG_ENGINE_CUDA) {
        snprintf(err, errlen, "mavgame was built without its CUDA kernels (nvcc was not found at build time, "
                              "MAVGAME_NO_CUDA was set, or the kernels failed to compile): no CUDA engine");
        return MG_ERR;
    }
#endif
    if ((flags & MG_ENGINE_BF16) && !(flags & MG_ENGINE_CUDA)) {
        snprintf(err, errlen, "bfloat16 weights are a CUDA engine option (MG_ENGINE_BF16 needs MG_ENGINE_CUDA)");
        return MG_ERR;
    }
    /* the matmul kernel: the best the CPU runs, unless MG_ENGINE_NO_SIMD, or the environment
     * variable MAVGAME_SIMD names one (avx512, avx2, portable or auto: for tests and benchmarks) */
    mg_matmul_fn mm = mg_matmul_select(!(flags & MG_ENGINE_NO_SIMD));
    const char *want = getenv("MAVGAME_SIMD");
    if (!(flags & MG_ENGINE_NO_SIMD) && want && *want) {
        int r = mg_matmul_find(want, &mm);
        if (r != 0) {
            snprintf(err, errlen,
                     r == -1 ? "MAVGAME_SIMD='%.64s' names no matmul kernel (avx512, avx2, portable or auto)"
                             : "MAVGAME_SIMD='%.64s': this CPU cannot run that matmul kernel",
                     want);
            return MG_ERR;
        }
    }
    mg_engine *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return MG_ERR;
    }
    e->m = m;
    e->c = m->cfg;
    const mg_model_config *c = &e->c;
    e->pool = mg_pool_create(threads, err, errlen);
    if (!e->pool) {
        free(e);
        return MG_ERR;
    }
    e->mm = mm;
    e->lk = mg_layers_select(mm != mg_matmul_portable); /* the AVX2 layers with either SIMD matmul */
    e->max_batch = max_batch;
    e->rows_cap = MG_ENGINE_PASS_ROWS > max_batch ? MG_ENGINE_PASS_ROWS : max_batch;
    e->kvd = c->n_kv_heads * c->head_dim;
    e->qd = c->n_heads * c->head_dim;
    size_t S = (size_t)c->max_seq_len, R = (size_t)e->rows_cap, B = (size_t)max_batch, V = (size_t)c->vocab_size;
    int cuda = (flags & MG_ENGINE_CUDA) != 0;
    /* on the CUDA path the cache lives on the device: kc/vc are one slot of host staging */
    size_t h2 = (size_t)c->head_dim / 2, kv = (size_t)c->n_layers * (cuda ? 1 : B) * S * (size_t)e->kvd;
    int ok = 1;
#define ALLOC(p, count) ok &= ((p) = calloc((size_t)(count) + 1, sizeof *(p))) != NULL
    ALLOC(e->rope_cos, S * h2);
    ALLOC(e->rope_sin, S * h2);
    ALLOC(e->kc, kv);
    ALLOC(e->vc, kv);
    ALLOC(e->line_start, B);
    ALLOC(e->r_tok, R);
    ALLOC(e->r_slot, R);
    ALLOC(e->r_pos, R);
    ALLOC(e->r_logit, R);
    ALLOC(e->x, R * (size_t)c->d_model);
    ALLOC(e->h, R * (size_t)c->d_model);
    ALLOC(e->q, R * (size_t)e->qd);
    ALLOC(e->k, R * (size_t)e->kvd);
    ALLOC(e->v, R * (size_t)e->kvd);
    ALLOC(e->att, R * (size_t)e->qd);
    ALLOC(e->g, R * (size_t)c->d_ff);
    ALLOC(e->u, R * (size_t)c->d_ff);
    ALLOC(e->hl, B * (size_t)c->d_model);
    ALLOC(e->logits, B * V);
    ALLOC(e->scores, (size_t)threads * S);
    ALLOC(e->is_stop, V);
    ALLOC(e->in_group, V);
    ALLOC(e->bucket_of, V);
    ALLOC(e->group, V);
    ALLOC(e->gen_idx, B);
    ALLOC(e->gen_pos, B);
    ALLOC(e->gen_last, B);
    ALLOC(e->pf_order, B);
    ALLOC(e->pf_tmp, B);
    ALLOC(e->pf_lcp, B);
    ALLOC(e->pf_src, B);
    ALLOC(e->pf_share, B);
    ALLOC(e->pf_state, B);
    ALLOC(e->pf_cached, B);
    ALLOC(e->r_line, R);
    ALLOC(e->c_tok, B);
    ALLOC(e->c_probs, B * MG_ENGINE_MAX_BUCKETS);
#undef ALLOC
    if (!ok) {
        snprintf(err, errlen, "out of memory for an engine of batch %d (KV cache %zu MB)", max_batch,
                 2 * kv * sizeof(float) >> 20);
        mg_engine_free(e);
        return MG_ERR;
    }
    mg_rope_tables(e->rope_cos, e->rope_sin, c->max_seq_len, c->head_dim, c->rope_theta);
#ifdef MG_WITH_CUDA
    if (cuda) {
        char why[512];
        e->bf16 = (flags & MG_ENGINE_BF16) != 0;
        if (mgk_engine_create(&e->gpu, m, max_batch, e->rows_cap, e->bf16, why, sizeof why) != MGK_OK) {
            snprintf(err, errlen, "no CUDA engine: %s", why);
            mg_engine_free(e);
            return MG_ERR;
        }
    }
#endif
    *out = e;
    return MG_OK;
}

int mg_engine_threads(const mg_engine *e) { return mg_pool_threads(e->pool); }
int mg_engine_max_batch(const mg_engine *e) { return e->max_batch; }
const char *mg_engine_kernel(const mg_engine *e) { return e->gpu ? "cuda" : mg_matmul_name(e->mm); }
int mg_engine_device(const mg_engine *e) { return e->gpu ? MG_ENGINE_DEVICE_CUDA : MG_ENGINE_DEVICE_CPU; }
const mg_model *mg_engine_model(const mg_engine *e) { return e->m; }
int mg_engine_bf16(const mg_engine *e) { return e->bf16; }

size_t mg_engine_weight_bytes(const mg_engine *e)
{
#ifdef MG_WITH_CUDA
    if (e->gpu)
        return mgk_engine_weight_bytes(e->gpu);
#endif
    (void)e;
    return 0;
}
void mg_engine_get_stats(const mg_engine *e, mg_engine_stats *s) { *s = e->stats; }
void mg_engine_reset_stats(mg_engine *e) { memset(&e->stats, 0, sizeof e->stats); }
int mg_engine_prefix_cache(const mg_engine *e) { return e->pc.n_blocks * MG_PC_BLOCK; }

int mg_engine_set_prefix_cache(mg_engine *e, int tokens, char *err, size_t errlen)
{
    if (tokens < 0) {
        snprintf(err, errlen, "prefix cache size must be >= 0 tokens, got %d", tokens);
        return MG_ERR;
    }
    mg_pc_free(&e->pc);
    if (mg_pc_init(&e->pc, tokens, e->c.n_layers, e->kvd) != 0) {
        snprintf(err, errlen, "out of memory for a prefix cache of %d tokens", tokens);
        return MG_ERR;
    }
    return MG_OK;
}

/* ---- parallel matrix products ------------------------------------------------------------- */

#define MM_ROWS 64  /* row block of a task (a multiple of the kernel's 4-row tile) */
#define MM_COLS 64  /* column block of a task (a multiple of the 16-column panel) */

typedef struct mm_job {
    mg_matmul_fn mm;
    float *y;
    const float *x, *w;
    int n, in, out, acc, ncb;
} mm_job;

static void mm_task(void *ctx, int task, int thread)
{
    (void)thread;
    const mm_job *j = ctx;
    int rb = task / j->ncb, cb = task % j->ncb;
    int r0 = rb * MM_ROWS, r1 = r0 + MM_ROWS < j->n ? r0 + MM_ROWS : j->n;
    int c0 = cb * MM_COLS, c1 = c0 + MM_COLS < j->out ? c0 + MM_COLS : j->out;
    j->mm(j->y + (size_t)r0 * j->out, j->x + (size_t)r0 * j->in, j->w, r1 - r0, j->in, j->out, c0, c1, j->acc);
}

/* y[n][out] (+)= x[n][in] @ w; split over the pool by blocks of rows and columns when `par` */
static void matmul(mg_engine *e, int par, float *y, const float *x, const float *w, int n, int in, int out, int acc)
{
    if (n <= 0)
        return;
    if (!par || mg_pool_threads(e->pool) == 1 || (double)n * in * out < 65536.0) {
        e->mm(y, x, w, n, in, out, 0, out, acc);
        return;
    }
    mm_job j = {e->mm, y, x, w, n, in, out, acc, (out + MM_COLS - 1) / MM_COLS};
    int nrb = (n + MM_ROWS - 1) / MM_ROWS;
    mg_pool_run(e->pool, mm_task, &j, nrb * j.ncb);
}

/* ---- attention over rows ---------------------------------------------------------------------- */

typedef struct att_job {
    mg_engine *e;
    int layer, r0, r1, per_task;
} att_job;

static void att_rows(mg_engine *e, int layer, int r0, int r1, int thread)
{
    const mg_model_config *c = &e->c;
    size_t S = (size_t)c->max_seq_len, slot_sz = S * (size_t)e->kvd;
    size_t layer_off = (size_t)layer * (size_t)e->max_batch * slot_sz;
    for (int r = r0; r < r1; r++) {
        size_t base = layer_off + (size_t)e->r_slot[r] * slot_sz;
        e->lk.attention(e->att + (size_t)r * e->qd, e->q + (size_t)r * e->qd, e->kc + base, e->vc + base,
                     e->r_pos[r] + 1, c->n_heads, c->n_kv_heads, c->head_dim, e->scores + (size_t)thread * S);
    }
}

static void att_task(void *ctx, int task, int thread)
{
    const att_job *j = ctx;
    int r0 = j->r0 + task * j->per_task, r1 = r0 + j->per_task < j->r1 ? r0 + j->per_task : j->r1;
    att_rows(j->e, j->layer, r0, r1, thread);
}

/* ---- the forward pass ---------------------------------------------------------------------- */

/* The transformer over rows [r0, r1) (a sequence's rows all inside the range).  `par`: split the
 * matrix products and attention over the pool (the caller is the only one running); else run
 * on this thread, using its attention scratch. */
static void forward_rows(mg_engine *e, int r0, int r1, int par, int thread)
{
    const mg_model *m = e->m;
    const mg_model_config *c = &e->c;
    int d = c->d_model, ff = c->d_ff, h2 = c->head_dim / 2, kvd = e->kvd, qd = e->qd, n = r1 - r0;
    size_t S = (size_t)c->max_seq_len, slot_sz = S * (size_t)kvd;
    float eps = (float)c->norm_eps;
    float *X = e->x + (size_t)r0 * d, *Hh = e->h + (size_t)r0 * d, *Q = e->q + (size_t)r0 * qd;
    float *K = e->k + (size_t)r0 * kvd, *Vv = e->v + (size_t)r0 * kvd, *A = e->att + (size_t)r0 * qd;
    float *G = e->g + (size_t)r0 * ff, *U = e->u + (size_t)r0 * ff;
    /* embeddings: x[n][d] = embed[tok] (+ pos_embed[pos]) (+ line_embed[line index]) */
    for (int r = r0; r < r1; r++) {
        float *x = e->x + (size_t)r * d;
        int tok = e->r_tok[r], pos = e->r_pos[r];
        memcpy(x, m->embed + (size_t)tok * d, (size_t)d * sizeof(float));
        if (m->pos_embed) {
            const float *pe = m->pos_embed + (size_t)pos * d;
            for (int i = 0; i < d; i++)
                x[i] += pe[i];
        }
        if (m->line_embed) {
            const float *le = m->line_embed + (size_t)e->r_line[r] * d;
            for (int i = 0; i < d; i++)
                x[i] += le[i];
        }
    }
    for (int l = 0; l < c->n_layers; l++) {
        const mg_layer_weights *L = &m->layers[l];
        /* attention block: h = norm(x); q,k,v = h @ wq, wk, wv; rope; cache; x += attn @ wo */
        for (int r = 0; r < n; r++)
            mg_rmsnorm(Hh + (size_t)r * d, X + (size_t)r * d, L->attn_norm, d, eps);
        matmul(e, par, Q, Hh, L->wq, n, d, qd, 0);
        matmul(e, par, K, Hh, L->wk, n, d, kvd, 0);
        matmul(e, par, Vv, Hh, L->wv, n, d, kvd, 0);
        size_t layer_off = (size_t)l * (size_t)e->max_batch * slot_sz;
        for (int r = r0; r < r1; r++) {
            const float *cs = e->rope_cos + (size_t)e->r_pos[r] * h2, *sn = e->rope_sin + (size_t)e->r_pos[r] * h2;
            mg_rope(e->q + (size_t)r * qd, c->n_heads, c->head_dim, cs, sn);
            mg_rope(e->k + (size_t)r * kvd, c->n_kv_heads, c->head_dim, cs, sn);
            size_t at = layer_off + (size_t)e->r_slot[r] * slot_sz + (size_t)e->r_pos[r] * kvd;
            memcpy(e->kc + at, e->k + (size_t)r * kvd, (size_t)kvd * sizeof(float));
            memcpy(e->vc + at, e->v + (size_t)r * kvd, (size_t)kvd * sizeof(float));
        }
        int threads = mg_pool_threads(e->pool);
        if (!par || threads == 1 || n == 1) {
            att_rows(e, l, r0, r1, thread);
        } else {
            att_job aj = {e, l, r0, r1, (n + 4 * threads - 1) / (4 * threads)};
            mg_pool_run(e->pool, att_task, &aj, (n + aj.per_task - 1) / aj.per_task);
        }
        matmul(e, par, X, A, L->wo, n, qd, d, 1);
        /* MLP block: h = norm(x); x += glu(h @ gate, h @ up) @ down */
        for (int r = 0; r < n; r++)
            mg_rmsnorm(Hh + (size_t)r * d, X + (size_t)r * d, L->mlp_norm, d, eps);
        matmul(e, par, G, Hh, L->gate, n, d, ff, 0);
        matmul(e, par, U, Hh, L->up, n, d, ff, 0);
        e->lk.glu(G, U, n * ff, c->geglu);
        matmul(e, par, X, G, L->down, n, ff, d, 1);
    }
    /* output: logits[k][V] = norm(x[r]) @ out for the rows that want them (their logit rows are
     * increasing along the rows, so a range's logit rows are contiguous) */
    int lo = -1, hi = -1;
    for (int r = r0; r < r1; r++)
        if (e->r_logit[r] >= 0) {
            mg_rmsnorm(e->hl + (size_t)e->r_logit[r] * d, e->x + (size_t)r * d, m->norm, d, eps);
            if (lo < 0)
                lo = e->r_logit[r];
            hi = e->r_logit[r];
        }
    if (lo >= 0)
        matmul(e, par, e->logits + (size_t)lo * c->vocab_size, e->hl + (size_t)lo * d, m->out, hi - lo + 1, d,
               c->vocab_size, 0);
}

typedef struct fwd_job {
    mg_engine *e;
    int bounds[MG_POOL_MAX_THREADS + 1];
} fwd_job;

static void fwd_task(void *ctx, int task, int thread)
{
    fwd_job *j = ctx;
    forward_rows(j->e, j->bounds[task], j->bounds[task + 1], 0, thread);
}

/* FLOPs of the matrix products and attention of rows [0, n) (for the statistics) */
static double pass_flops(const mg_engine *e, int n)
{
    const mg_model_config *c = &e->c;
    double per_row = 2.0 * ((double)c->d_model * (2 * e->qd + 2 * e->kvd) + 3.0 * c->d_model * c->d_ff);
    double f = per_row * n * c->n_layers;
    for (int r = 0; r < n; r++) {
        f += 4.0 * (e->r_pos[r] + 1) * e->qd * c->n_layers;
        if (e->r_logit[r] >= 0)
            f += 2.0 * c->d_model * c->vocab_size;
    }
    return f;
}

/* The line embedding's index of each row (its position in its text line, clipped to line_pos),
 * advancing e->line_start past newlines: in row order, before the rows are split over threads. */
static void line_positions(mg_engine *e, int n)
{
    const mg_model_config *c = &e->c;
    for (int r = 0; r < n; r++) {
        if (c->line_pos <= 0) {
            e->r_line[r] = 0;
            continue;
        }
        int *ls = &e->line_start[e->r_slot[r]], pos = e->r_pos[r];
        int lp = pos - *ls;
        e->r_line[r] = lp < 0 ? 0 : lp >= c->line_pos ? c->line_pos - 1 : lp;
        if (e->r_tok[r] == c->newline_id && pos + 1 > *ls)
            *ls = pos + 1;
    }
}

void mg_engine_forward(mg_engine *e, int n)
{
    e->stats.passes++;
    e->stats.flops += pass_flops(e, n);
    line_positions(e, n);
#ifdef MG_WITH_CUDA
    if (e->gpu) {
        int rc = mgk_forward(e->gpu, n, e->r_tok, e->r_slot, e->r_pos, e->r_line, e->r_logit);
        if (rc != MGK_OK && !e->gpu_err)
            e->gpu_err = rc;
        return;
    }
#endif
    int T = mg_pool_threads(e->pool);
    if (T == 1) {
        forward_rows(e, 0, n, 0, 0);
        return;
    }
    /* Split the rows into up to T ranges of whole sequences, one thread each (one hand-off per
     * pass); a pass of fewer sequences than threads splits its products instead. */
    fwd_job j;
    j.e = e;
    int k = 0, target = (n + T - 1) / T;
    j.bounds[0] = 0;
    for (int r = 1; r < n && k + 1 < T; r++)
        if (e->r_slot[r] != e->r_slot[r - 1] && r - j.bounds[k] >= target)
            j.bounds[++k] = r;
    j.bounds[++k] = n;
    if (k == 1)
        forward_rows(e, 0, n, 1, 0);
    else
        mg_pool_run(e->pool, fwd_task, &j, k);
}

void mg_engine_copy_prefix(mg_engine *e, int src, int dst, int len)
{
#ifdef MG_WITH_CUDA
    if (e->gpu) {
        int rc = mgk_copy_prefix(e->gpu, src, dst, len);
        if (rc != MGK_OK && !e->gpu_err)
            e->gpu_err = rc;
        return;
    }
#endif
    size_t slot_sz = (size_t)e->c.max_seq_len * (size_t)e->kvd, n = (size_t)len * (size_t)e->kvd;
    for (int l = 0; l < e->c.n_layers; l++) {
        size_t off = (size_t)l * (size_t)e->max_batch * slot_sz;
        memcpy(e->kc + off + (size_t)dst * slot_sz, e->kc + off + (size_t)src * slot_sz, n * sizeof(float));
        memcpy(e->vc + off + (size_t)dst * slot_sz, e->vc + off + (size_t)src * slot_sz, n * sizeof(float));
    }
}

/* ---- the prefix cache, the token choice: host or device ------------------------------------ */

void mg_engine_pc_fetch(mg_engine *e, int b, const int32_t *p, int blocks)
{
    size_t slot_sz = (size_t)e->c.max_seq_len * (size_t)e->kvd;
#ifdef MG_WITH_CUDA
    if (e->gpu) { /* through the one-slot host staging area */
        mg_pc_lookup(&e->pc, p, blocks, e->kc, e->vc, slot_sz);
        int rc = mgk_kv_transfer(e->gpu, b, blocks * MG_PC_BLOCK, e->kc, e->vc, slot_sz, 1);
        if (rc != MGK_OK && !e->gpu_err)
            e->gpu_err = rc;
        return;
    }
#endif
    mg_pc_lookup(&e->pc, p, blocks, e->kc + (size_t)b * slot_sz, e->vc + (size_t)b * slot_sz,
                 (size_t)e->max_batch * slot_sz);
}

void mg_engine_pc_store(mg_engine *e, int b, const int32_t *p, int blocks)
{
    size_t slot_sz = (size_t)e->c.max_seq_len * (size_t)e->kvd;
#ifdef MG_WITH_CUDA
    if (e->gpu) {
        if (e->pc.n_blocks == 0) /* no cache: nothing to download */
            return;
        if (blocks <= 0 || mg_pc_lookup(&e->pc, p, blocks, NULL, NULL, 0) == blocks) {
            mg_pc_insert(&e->pc, p, blocks, e->kc, e->vc, slot_sz); /* all cached: marks them used */
            return;
        }
        int rc = mgk_kv_transfer(e->gpu, b, blocks * MG_PC_BLOCK, e->kc, e->vc, slot_sz, 0);
        if (rc != MGK_OK) {
            if (!e->gpu_err)
                e->gpu_err = rc;
            return;
        }
        mg_pc_insert(&e->pc, p, blocks, e->kc, e->vc, slot_sz);
        return;
    }
#endif
    mg_pc_insert(&e->pc, p, blocks, e->kc + (size_t)b * slot_sz, e->vc + (size_t)b * slot_sz,
                 (size_t)e->max_batch * slot_sz);
}

void mg_engine_set_choice(mg_engine *e, const int32_t *bucket_ids, int n_buckets)
{
#ifdef MG_WITH_CUDA
    if (e->gpu) {
        int rc = mgk_engine_set_choice(e->gpu, e->in_group, e->group, e->n_group, bucket_ids, n_buckets);
        if (rc != MGK_OK && !e->gpu_err)
            e->gpu_err = rc;
    }
#else
    (void)e;
    (void)bucket_ids;
    (void)n_buckets;
#endif
}

void mg_engine_choose(mg_engine *e, int rows, int grouped)
{
#ifdef MG_WITH_CUDA
    if (e->gpu) {
        int rc = mgk_engine_choose(e->gpu, rows, grouped, e->c_tok, e->c_probs);
        if (rc != MGK_OK) {
            if (!e->gpu_err)
                e->gpu_err = rc;
            memset(e->c_tok, 0, (size_t)rows * sizeof *e->c_tok); /* valid ids; the request fails */
        }
        return;
    }
#endif
    int V = e->c.vocab_size;
    for (int i = 0; i < rows; i++)
        e->c_tok[i] = e->lk.choose(e->logits + (size_t)i * V, V, e->in_group, e->group, grouped ? e->n_group : 0);
}

void mg_engine_row_probs(const mg_engine *e, int i, float *out, const int32_t *bucket_ids, int n_buckets)
{
    if (e->gpu)
        memcpy(out, e->c_probs + (size_t)i * n_buckets, (size_t)n_buckets * sizeof(float));
    else
        mg_bucket_probs(out, e->logits + (size_t)i * e->c.vocab_size, bucket_ids, n_buckets);
}

int mg_engine_read_logits(mg_engine *e, int rows, float *out)
{
    if (rows < 0 || rows > e->max_batch)
        return MG_ERR;
#ifdef MG_WITH_CUDA
    if (e->gpu)
        return mgk_engine_logits(e->gpu, 0, rows, out) == MGK_OK ? MG_OK : MG_ERR;
#endif
    memcpy(out, e->logits, (size_t)rows * (size_t)e->c.vocab_size * sizeof(float));
    return MG_OK;
}

/*
 * engine_impl.h - the engine's state (private to csrc/model): the buffers of one forward pass,
 * the KV cache and the per-sequence state; shared by engine.c (forward pass) and generate.c.
 */
#ifndef MG_MODEL_ENGINE_IMPL_H
#define MG_MODEL_ENGINE_IMPL_H

#include <stdint.h>

#include "engine.h"
#include "layers.h"
#include "matmul.h"
#include "prefix_cache.h"
#include "threadpool.h"

#define MG_ENGINE_PASS_ROWS 512  /* token rows per forward pass (prefill is chunked) */

struct mg_engine {
    const mg_model *m;
    mg_model_config c;
    int max_batch, rows_cap, kvd, qd;
    mg_pool *pool;
    mg_matmul_fn mm;
    mg_layer_kernels lk;               /* attention, activation and token choice kernels */
    float *rope_cos, *rope_sin;        /* [S][hd/2] */
    float *kc, *vc;                    /* [L][max_batch][S][kvd] */
    int *line_start;                   /* [max_batch] where the current text line began */
    /* one pass: rows r = 0..n-1 */
    int32_t *r_tok, *r_slot, *r_pos, *r_logit; /* [rows_cap]; r_logit: row of `logits` or -1 */
    float *x, *h, *q, *k, *v, *att;    /* [rows_cap][d | qd | kvd] */
    float *g, *u;                      /* [rows_cap][ff] */
    float *hl;                         /* [max_batch][d] final-normed rows that need logits */
    float *logits;                     /* [max_batch][V] */
    float *scores;                     /* [threads][S] attention scratch */
    /* generation */
    uint8_t *is_stop, *in_group;       /* [V] */
    int16_t *bucket_of;                /* [V] */
    int32_t *group;                    /* [V] the distinct group ids of the request */
    int n_group;
    int32_t *gen_idx, *gen_pos, *gen_last; /* [max_batch] */
    /* prefix sharing plan of a chunk (generate.c): prompts sorted, each one's source and share */
    int32_t *pf_order, *pf_tmp, *pf_lcp, *pf_src, *pf_share; /* [max_batch] */
    uint8_t *pf_state;                 /* [max_batch] 0 waiting, 1 in this wave, 2 prefilled */
    uint8_t *pf_cached;                /* [max_batch] the shared prefix comes from the prefix cache */
    mg_prefix_cache pc;                /* cross-batch prefix cache (empty unless set) */
    mg_engine_stats stats;
    /* the CUDA path (MG_ENGINE_CUDA; kernels/forward.cu): the forward pass, the KV cache and the
     * token choice on the device.  Then kc/vc above are a one-slot host staging area of the prefix
     * cache ([L][1][S][kvd]) and logits is filled on demand only. */
    struct mgk_engine *gpu;
    int gpu_err;                       /* the first error of a device call (MGK_ERR_*), 0 if none */
    int bf16;                          /* MG_ENGINE_BF16: the device's weight matrices in bfloat16 */
    int32_t *r_line;                   /* [rows_cap] line position of each row (the line embedding) */
    int32_t *c_tok;                    /* [max_batch] the tokens chosen for logits rows */
    float *c_probs;                    /* [max_batch][64] their bucket distributions (CUDA path) */
};

/* Forward pass over e->r_* rows 0..n-1 (at most rows_cap; a sequence's rows in position order,
 * its earlier positions already in the cache): writes their keys/values into the cache and the
 * logits of rows with r_logit >= 0 into e->logits.  Line positions come from e->line_start,
 * which it advances. */
void mg_engine_forward(mg_engine *e, int n);

/* Copy slot src's cached keys/values of positions [0, len) to slot dst (prefix sharing). */
void mg_engine_copy_prefix(mg_engine *e, int src, int dst, int len);

/* The cross-batch prefix cache and slot b: copy prompt p's first `blocks` cached blocks into the
 * slot (fetch), or store the slot's first `blocks` blocks of p (store). */
void mg_engine_pc_fetch(mg_engine *e, int b, const int32_t *p, int blocks);
void mg_engine_pc_store(mg_engine *e, int b, const int32_t *p, int blocks);

/* The choice of the current request (e->in_group, e->group, e->n_group and these buckets),
 * before its first pass (the CUDA path uploads it). */
void mg_engine_set_choice(mg_engine *e, const int32_t *bucket_ids, int n_buckets);

/* e->c_tok[i] := the token chosen from logits row i, i < rows (grouped or plain); on the CUDA
 * path also e->c_probs[i] (the bucket distribution).  mg_engine_row_probs: row i's bucket
 * distribution into out[n_buckets] (from c_probs or from the host logits). */
void mg_engine_choose(mg_engine *e, int rows, int grouped);
void mg_engine_row_probs(const mg_engine *e, int i, float *out, const int32_t *bucket_ids, int n_buckets);

#endif

/*
 * engine.h - the native MAV inference engine: batched greedy generation over a loaded model
 * (model.h) with a KV cache, a thread pool and run-time selected SIMD kernels.
 *
 *   mg_engine_create(&e, model, max_batch, threads, flags)  all buffers allocated here, once
 *   mg_engine_generate(e, req, res, ...)                     no allocation inside
 *
 * Generation follows mavgame/model/inference/decode.py generate_ids exactly: every prompt is prefilled
 * (ragged: no padding is computed), then each step picks the next token of every unfinished
 * prompt by plain greedy or grouped greedy decoding (grouped_argmax: the group's total
 * probability against every other single token), records the 64-way distribution over the
 * bucket tokens whenever the chosen token is one of them, and ends a prompt at a stop token.
 * The token budget is shared by the request: min(max_new_tokens, max_seq_len - longest prompt).
 *
 * Prefix sharing: the prompts of a request share their header, and groups of them more (in
 * state tracking, siblings share their whole %prev_state prefix).  The prompts of a chunk are
 * sorted into a prefix tree: each node's tokens are computed once, by the first prompt through
 * it, and its keys and values copied to the slots of the others (each prompt keeps at least
 * one token of its own); prefill runs in waves, a prompt as soon as its source is prefilled.
 * Outputs are identical with it on or off, and for any thread count: every value the engine
 * computes depends only on its own sequence.
 */
#ifndef MG_MODEL_ENGINE_H
#define MG_MODEL_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MG_ENGINE_MAX_BUCKETS 64

enum mg_engine_flags {
    MG_ENGINE_NO_SIMD = 1u,  /* the portable matmul kernel even where AVX2/FMA exist */
    MG_ENGINE_CUDA = 2u,     /* the forward pass, KV cache and token choice on the GPU (kernels/forward.cu):
                                needs a build with the kernels (MG_WITH_CUDA) and a usable device, else
                                mg_engine_create fails saying which is missing */
    MG_ENGINE_BF16 = 4u,     /* with MG_ENGINE_CUDA: the weight matrices in bfloat16 on the device (half their
                                memory and traffic; float32 accumulation, everything else float32); without
                                it mg_engine_create fails */
};

enum mg_engine_device { MG_ENGINE_DEVICE_CPU = 0, MG_ENGINE_DEVICE_CUDA = 1 };

typedef struct mg_engine mg_engine;

typedef struct mg_gen_request {
    int n;                          /* number of prompts (any number; processed max_batch at a time) */
    const int32_t *const *prompts;  /* prompts[i][0..lens[i]) token ids */
    const int32_t *lens;
    int max_new_tokens;             /* > 0 */
    const int32_t *stop_ids;        /* a row ends after emitting one of them (kept in its output) */
    int n_stop;
    const int32_t *group_ids;       /* grouped greedy decoding over these ids (n_group 0: plain greedy) */
    int n_group;
    const int32_t *bucket_ids;      /* the value tokens in bucket order (at most 64) */
    int n_buckets;
    int prefix_sharing;             /* compute each shared prompt prefix (prefix tree node) once */
} mg_gen_request;

/* One prompt's output, in caller-owned buffers of capacity mg_engine_budget(...) tokens. */
typedef struct mg_gen_result {
    int32_t *ids;           /* [cap] generated ids (the stop token included) */
    int32_t *value_steps;   /* [cap] index into ids of each generated bucket token */
    float *value_probs;     /* [cap][n_buckets] the bucket distribution at each of them */
    int n_ids;
    int n_values;
    int finished;           /* ended with a stop token */
} mg_gen_result;

typedef struct mg_engine_stats {
    int64_t prompt_tokens;      /* prompt tokens of all requests */
    int64_t prefill_tokens;     /* prompt tokens actually computed */
    int64_t shared_saved;       /* prompt tokens not computed thanks to prefix sharing (cache included) */
    int64_t cache_saved;        /* of them, copied from the cross-batch prefix cache */
    int64_t decode_tokens;      /* tokens fed back during decoding */
    int64_t generated;          /* tokens generated */
    int64_t passes;             /* forward passes */
    double flops;               /* floating-point operations of the matrix products and attention */
} mg_engine_stats;

/* An engine for `model` (which must outlive it) running up to max_batch sequences at once on
 * `threads` threads.  MG_OK or MG_ERR with a message. */
int mg_engine_create(mg_engine **e, const mg_model *model, int max_batch, int threads, unsigned flags, char *err,
                     size_t errlen);
void mg_engine_free(mg_engine *e);

int mg_engine_threads(const mg_engine *e);
int mg_engine_max_batch(const mg_engine *e);
const char *mg_engine_kernel(const mg_engine *e); /* "avx512", "avx2-fma", "portable" or "cuda" */
int mg_engine_device(const mg_engine *e);          /* enum mg_engine_device */
const mg_model *mg_engine_model(const mg_engine *e);
int mg_engine_bf16(const mg_engine *e);             /* created with MG_ENGINE_BF16 */
size_t mg_engine_weight_bytes(const mg_engine *e);  /* device memory of the weights (0 on the CPU) */

/* The number of tokens each prompt of a request may generate: min(max_new_tokens,
 * max_seq_len - longest prompt), or -1 with a message if a prompt is empty, too long or has
 * an id outside the vocabulary, or another field is invalid. */
int mg_engine_budget(const mg_engine *e, const mg_gen_request *q, char *err, size_t errlen);

/* Generate for every prompt of q into res[0..q->n) (buffers of mg_engine_budget tokens).  MG_OK
 * or MG_ERR with a message (bad request). */
int mg_engine_generate(mg_engine *e, const mg_gen_request *q, mg_gen_result *res, char *err, size_t errlen);

/* The logits [V] at the last position of one prompt (a plain prefill; for tests). */
int mg_engine_logits(mg_engine *e, const int32_t *prompt, int len, float *logits, char *err, size_t errlen);

/* Logits rows 0..rows-1 of the last pass (rows <= max_batch) into out[rows][V] (from the device
 * on the CUDA path; for tests).  MG_OK or MG_ERR. */
int mg_engine_read_logits(mg_engine *e, int rows, float *out);

/* The cross-batch prefix cache: keys and values of prompt prefixes kept between requests, in
 * blocks of 16 tokens (prefix_cache.h), up to `tokens` tokens (0: none, the default), least
 * recently used blocks replaced.  It costs 2 x n_layers x kv_dim floats a token, allocated here
 * (not while generating); used by requests with prefix_sharing.  Setting it empties it.  MG_OK or
 * MG_ERR with a message. */
int mg_engine_set_prefix_cache(mg_engine *e, int tokens, char *err, size_t errlen);
int mg_engine_prefix_cache(const mg_engine *e); /* its capacity in tokens */

/* Statistics accumulated since creation or the last reset. */
void mg_engine_get_stats(const mg_engine *e, mg_engine_stats *s);
void mg_engine_reset_stats(mg_engine *e);

#ifdef __cplusplus
}
#endif
#endif

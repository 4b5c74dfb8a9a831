/*
 * mgk.h - the host-side entry points of mavgame's CUDA kernels (kernels/X.cu), callable from C.
 *
 * Every pointer argument is device memory (on the CPU harness: host memory).  Each function
 * launches its kernel on the default stream and returns MGK_OK, MGK_ERR_ARG (a shape the kernel
 * does not support: see the function) or MGK_ERR_LAUNCH.  `variant` picks one of the numbered
 * kernels of the file (1 = the plain one; mgk_variants(...) says how many).  The C reference of
 * each is the CPU engine's own function (csrc/model/layers.h, matmul.h), named below.
 */
#ifndef MGK_H
#define MGK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { MGK_OK = 0, MGK_ERR_ARG = 1, MGK_ERR_LAUNCH = 2 };

/* The number of usable CUDA devices (0 without a GPU or driver), with a sentence in msg. */
int mgk_device_count(char *msg, size_t msglen);

#define MGK_MAX_HEAD_DIM 128 /* the attention kernels keep a head's row in registers/shared memory */

/* RMSNorm of n rows of d: out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w (mg_rmsnorm). Variants 1-2. */
int mgk_rmsnorm(int variant, float *out, const float *x, const float *w, int n, int d, float eps);

/* Rotary embedding in place on v[n][nh * hd] at positions pos[n], tables cos/sin[S][hd/2]
 * (mg_rope per row). Variant 1. */
int mgk_rope(int variant, float *v, const int *pos, const float *cos, const float *sin, int n, int nh, int hd);

/* Gated activation in place: g[i] = act(g[i]) * u[i], SiLU or tanh-GELU (mg_glu). Variant 1. */
int mgk_glu(int variant, float *g, const float *u, long n, int geglu);

/* y[n][out] (+)= x[n][in] @ W, W packed in 16-column panels as the engine stores it
 * (matmul.h; mg_matmul_portable). Variants 1 (one thread per output), 2 (32x32 shared-memory tiles)
 * and 3 (64x128 tiles, 4x8 outputs per thread in registers). */
int mgk_matmul(int variant, float *y, const float *x, const float *w, int n, int in, int out, int accumulate);
/* The same with bfloat16 weights (uint16_t: the upper half of a float32; the packed layout), float32 x, y and
 * accumulation: variants 2 and 3, and 4 on tensor cores (x rounded to bf16 in the kernel, float32 products
 * and accumulation; needs mgk_matmul_tensor_cores() and w 16-byte aligned, as cudaMalloc'd memory and the
 * engine's matrices are).  MGK_ERR_ARG otherwise. */
int mgk_matmul_bf16(int variant, float *y, const float *x, const uint16_t *w, int n, int in, int out,
                    int accumulate);
/* 1 if mgk_matmul_bf16's variant 4 can run: device 0 of compute capability 8.0+ (A100, H100, ...) and the
 * kernel's code built for one (not only nvcc's default target), else 0. */
int mgk_matmul_tensor_cores(void);

/* A float32 rounded to bfloat16 (nearest, ties to even; a NaN stays a NaN): the conversion the bf16 engine
 * applies to its weight matrices at upload and the drivers apply to their references. Host code. */
static inline uint16_t mgk_bf16_round(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* The variant the forward pass uses for an n x out product on a GPU of sm_count multiprocessors: 3
 * when its 64x128 tiles reach 40% of the multiprocessors, else 2 (more, smaller blocks). */
int mgk_matmul_pick(int n, int out, int sm_count);
/* The variant for bf16 weights: 4 (tensor cores) when tensor_cores (mgk_matmul_tensor_cores()) and
 * n >= MGK_TC_MIN_ROWS, else mgk_matmul_pick's. */
#define MGK_TC_MIN_ROWS 16
int mgk_matmul_pick_bf16(int n, int out, int sm_count, int tensor_cores);

/* Attention of query rows over a KV cache laid out like the engine's, one layer:
 * kc/vc[slots][S][KV * hd]; query row r of q[rows][H * hd] belongs to cache slot slot[r] at
 * position pos[r] and attends keys 0..pos[r] (mg_attention with len = pos[r] + 1); out[rows][H * hd].
 * hd <= MGK_MAX_HEAD_DIM, H a multiple of KV.
 *
 * Decode (flash-decoding): one block per (row, head, key split); `work` holds
 * rows * H * n_split * (hd + 2) floats of partial results, combined by a second kernel.
 * n_split <= 0 picks it from the longest length. */
int mgk_attention_decode(float *out, const float *q, const float *kc, const float *vc, const int *slot,
                         const int *pos, int rows, int S, int H, int KV, int hd, int max_len, int n_split,
                         float *work);
/* the work floats mgk_attention_decode needs for (rows, H, hd, max_len, n_split) */
long mgk_attention_decode_work(int rows, int H, int hd, int max_len, int n_split);

/* Decode variant 2, cascade (shared-prefix) decoding: the rows are grouped by a shared prefix, the
 * positions [0, prefix_len[g]) of group g living in cache slot prefix_slot[g] (for instance the
 * slot of the prompt the others copied them from) and not in the rows' own slots.  Row r of group
 * g attends prefix_slot[g]'s keys 0..prefix_len[g]-1, then its own slot's prefix_len[g]..pos[r];
 * a row without a group (group_of_row[r] = -1) attends its own slot's 0..pos[r], as variant 1.
 * Each tile of a group's prefix is read once for all the group's rows and heads, not once per row.
 *   group_of_row[rows]      the row's group, or -1
 *   start[n_groups + 1]     rows[start[g] .. start[g+1]-1] are the rows of group g (CSR; each row
 *   rows[start[n_groups]]   in at most one group, consistent with group_of_row)
 *   prefix_slot[n_groups], prefix_len[n_groups]   0 <= prefix_len[g] <= pos[r] for every row r of g
 *                                                  (the row's own token is always in its own slot)
 * max_prefix_len: the largest prefix_len (< max_len; 0 allowed); max_group_rows: the most rows of a
 * group (0: not known, taken as all the rows; it sizes the launch).  The arrays are device memory,
 * the struct itself is passed by value to the kernels. */
typedef struct mgk_prefix_groups {
    const int *group_of_row, *start, *rows, *prefix_slot, *prefix_len;
    int n_groups, max_prefix_len, max_group_rows;
} mgk_prefix_groups;
int mgk_attention_decode_shared(float *out, const float *q, const float *kc, const float *vc, const int *slot,
                                const int *pos, int rows, int S, int H, int KV, int hd, int max_len,
                                const mgk_prefix_groups *groups, int n_split, float *work);
/* its work floats: rows * H * (prefix splits + suffix splits) * (hd + 2) */
long mgk_attention_decode_shared_work(int rows, int H, int hd, int max_len, int max_prefix_len, int n_groups,
                                      int n_split);

/* Prefill (FlashAttention-style, ragged): sequence i owns rows seq_start[i] .. seq_start[i+1]-1 of q
 * and out, in position order, at cache slot seq_slot[i] from position seq_pos0[i] (its earlier
 * positions and these rows' own keys/values already in the cache).  max_rows: the most rows of
 * one sequence.  Variant 1. */
int mgk_attention_prefill(int variant, float *out, const float *q, const float *kc, const float *vc,
                          const int *seq_start, const int *seq_slot, const int *seq_pos0, int n_seq, int max_rows,
                          int S, int H, int KV, int hd);

/* The next token of each row of logits[rows][V] (tok[rows]) and the softmax over the bucket
 * tokens' logits of each row (probs[rows][n_buckets], n_buckets <= 64): plain argmax when
 * n_group == 0, else grouped greedy over group[n_group] (in_group[V] marks them)
 * (mg_choose_token, mg_bucket_probs). Variant 1. */
int mgk_choose(int variant, int *tok, float *probs, const float *logits, int rows, int V,
               const unsigned char *in_group, const int *group, int n_group, const int *bucket_ids, int n_buckets);

/* ---- the engine's forward pass on the GPU (forward.cu) --------------------------------------
 * An mgk_engine belongs to one CPU engine (csrc/model/engine.c, created with MG_ENGINE_CUDA):
 * the model's weights uploaded once, the KV cache [L][max_batch][S][kvd] and every buffer of a
 * pass of up to rows_cap rows on the device, allocated here and nowhere else.  Host arrays in,
 * host results out; every function returns MGK_OK, MGK_ERR_ARG or MGK_ERR_LAUNCH. */
struct mg_model;
typedef struct mgk_engine mgk_engine;

/* MGK_OK, or MGK_ERR_ARG with a sentence in err (no usable device, an unsupported head
 * dimension, out of GPU memory).  bf16 != 0: the weight matrices (attention projections, MLP, output
 * layer) kept in bfloat16 on the device (rounded at upload, mgk_bf16_round) and multiplied by
 * mgk_matmul_bf16 with float32 accumulation; the embeddings kept in bfloat16 too (widened to float32 as they are
 * gathered and summed); norms, activations and the KV cache stay float32. */
int mgk_engine_create(mgk_engine **g, const struct mg_model *m, int max_batch, int rows_cap, int bf16, char *err,
                      size_t errlen);
void mgk_engine_free(mgk_engine *g);
/* The device memory its weights take, in bytes (float32 norms; the matrices and embeddings in float32 or
 * bfloat16). */
size_t mgk_engine_weight_bytes(const mgk_engine *g);

/* One forward pass over n rows (mg_engine_forward's contract): row r is token tok[r] of cache
 * slot slot[r] at position pos[r], line position line[r] (the line embedding's index); its
 * keys/values go into the cache; rows with logit[r] >= 0 get their logits in the device logits
 * row logit[r] (those rows contiguous). */
int mgk_forward(mgk_engine *g, int n, const int32_t *tok, const int32_t *slot, const int32_t *pos,
                const int32_t *line, const int32_t *logit);

/* Slot dst's cached positions [0, len) := slot src's (prefix sharing), on the device. */
int mgk_copy_prefix(mgk_engine *g, int src, int dst, int len);

/* Positions [0, len) of one slot's keys/values to (upload = 0) or from (upload = 1) host buffers
 * hk/hv of n_layers rows of layer_stride floats (the prefix cache's layout). */
int mgk_kv_transfer(mgk_engine *g, int slot, int len, float *hk, float *hv, size_t layer_stride, int upload);

/* The choice of a request: in_group[V], group[n_group], bucket_ids[n_buckets <= 64], uploaded. */
int mgk_engine_set_choice(mgk_engine *g, const unsigned char *in_group, const int32_t *group, int n_group,
                          const int32_t *bucket_ids, int n_buckets);

/* The next token (tok[rows]) and the bucket distribution (probs[rows][n_buckets]) of logits rows
 * 0..rows-1, grouped or plain (choose.cu); only these come back to the host. */
int mgk_engine_choose(mgk_engine *g, int rows, int grouped, int32_t *tok, float *probs);

/* Logits rows row0 .. row0 + rows - 1 to the host (out[rows][V]). */
int mgk_engine_logits(mgk_engine *g, int row0, int rows, float *out);

#ifdef __cplusplus
}
#endif
#endif

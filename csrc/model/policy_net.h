/*
 * policy_net.h - the IDP report's chess policy network (mavgame/policy/network.py PolicyNet;
 * docs/policy.md) in plain C: load an exported file, run the forward pass over a batch.
 *
 *   planes (n, 41, 8, 8) -> 1x1 convolution to C channels, ReLU
 *     -> `blocks` residual blocks: x = ReLU(x + conv3x3_b(ReLU(conv3x3_a(x))))  (zero padding)
 *     -> head "pool": 2x2 max-pooling to C x 4 x 4, dense layer to the 1968 moves
 *        head "conv": 1x1 convolution to 32 channels, ReLU, dense layer to the 1968 moves
 *     -> logits (n, 1968) over the move index of chess_policy.h.
 * The network has no normalisation layer (the report mentions none), so there is nothing to fold.
 *
 * File (mavgame/policy/export.py): safetensors with metadata format = "mavgame-policy",
 * format_version = "1", config = {"channels": C, "blocks": B, "head": "pool" | "conv"}, and
 * exactly the tensors of the PyTorch state_dict, in its shapes ([out, in, kh, kw] convolutions,
 * [out, in] dense layers; F32, F16 or BF16):
 *   stem.weight [C, 41, 1, 1], stem.bias [C],
 *   tower.i.a.weight / tower.i.b.weight [C, C, 3, 3], tower.i.a.bias / tower.i.b.bias [C],
 *   head_conv.weight [32, C, 1, 1], head_conv.bias [32]            (head "conv" only)
 *   fc.weight [1968, 16 C] (pool) or [1968, 2048] (conv), fc.bias [1968].
 * Every check names the offending field, tensor or shape.
 *
 * Layout inside: activations are [n][64 squares][channels] (square = row * 8 + column, row 0 =
 * rank 8 as the planes).  A 3x3 convolution runs as Winograd's F(2 x 2, 3 x 3) (Lavin & Gray,
 * "Fast Algorithms for Convolutional Neural Networks", 2016): the board is 16 tiles of 2 x 2
 * output squares; each tile's 4 x 4 input neighbourhood d (zeros off the board) becomes
 * V = B^T d B, a matrix product per transformed position xi (16 of them) multiplies V_xi
 * [16 n tiles][C] by the weights U_xi = (G g G^T)_xi [C][C] (transformed in double and packed for
 * matmul.h's kernel at load), and A^T M A gives the tile's 2 x 2 outputs: 16 C^2 multiplications
 * per tile instead of 36 C^2, with B, G, A of entries 0, +-1, +-1/2 only, so the results differ
 * from a direct convolution's by float32 rounding only.  The tiles run in chunks (whole
 * positions) whose V and M (2 x 16 x tiles x C floats, about 512 KB) stay in the core's L2 cache;
 * the bias, the skip connection and the ReLU are applied in the output transform.  The dense layer's input columns are
 * permuted at load from PyTorch's (channel, row, column) flattening to the [square][channel]
 * order.  The weights are float32 in one arena, read-only after loading (any number of threads
 * may share a net, each with its own scratch).
 *
 * Forward: mg_policy_net_forward(net, planes, n, logits, scratch) with caller-owned scratch of
 * mg_policy_net_scratch_floats(net, max_n) floats (n <= max_n); it allocates nothing.
 */
#ifndef MG_MODEL_POLICY_NET_H
#define MG_MODEL_POLICY_NET_H

#include <stddef.h>
#include <stdint.h>

#include "matmul.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MG_PNET_FORMAT "mavgame-policy"
#define MG_PNET_FORMAT_VERSION "1"
#define MG_PNET_PLANES 41          /* = MG_POLICY_PLANES (chess_policy.h) */
#define MG_PNET_MOVES 1968         /* = MG_POLICY_MOVES */
#define MG_PNET_CONV_HEAD 32       /* channels of the "conv" head */
#define MG_PNET_MAX_CHANNELS 4096
#define MG_PNET_MAX_BLOCKS 256
#define MG_PNET_WINO 16           /* transformed positions of a Winograd F(2x2, 3x3) tile */

enum mg_pnet_head { MG_PNET_HEAD_POOL = 0, MG_PNET_HEAD_CONV = 1 };

typedef struct mg_pnet_block {
    const float *a_w, *a_b;  /* MG_PNET_WINO packed [C][C] (U_xi, xi = 0..15, in order), bias [C] */
    const float *b_w, *b_b;
} mg_pnet_block;

typedef struct mg_policy_net {
    int channels, blocks, head;  /* enum mg_pnet_head */
    int fc_in;                   /* 16 C (pool) or 2048 (conv) */
    const float *stem_w, *stem_b;   /* packed [41][C], [C] */
    mg_pnet_block *tower;
    const float *head_w, *head_b;   /* packed [C][32], [32] (conv head) */
    const float *fc_w, *fc_b;       /* packed [fc_in][1968] (rows in [square][channel] order), [1968] */
    float *arena;
    size_t n_params;             /* parameters of the network (as PyTorch counts them) */
    int file_dtype;              /* enum mg_st_dtype of the weights in the file */
    mg_matmul_fn matmul;
} mg_policy_net;

/* Load from a file's bytes (the buffer may be freed afterwards) / from a path.  *net is zeroed
 * first; MG_OK, or MG_ERR with a message (nothing to free then).  allow_simd: use the AVX2/FMA
 * kernel where the CPU has it (matmul.h). */
int mg_policy_net_load_buffer(mg_policy_net *net, const uint8_t *buf, size_t len, int allow_simd, char *err,
                              size_t errlen);
int mg_policy_net_load_file(mg_policy_net *net, const char *path, int allow_simd, char *err, size_t errlen);
void mg_policy_net_free(mg_policy_net *net);

/* Floats of scratch a forward pass of up to max_n positions needs. */
size_t mg_policy_net_scratch_floats(const mg_policy_net *net, int max_n);

/* logits[n][1968] of planes[n][41][8][8]; scratch of mg_policy_net_scratch_floats(net, >= n). */
void mg_policy_net_forward(const mg_policy_net *net, const float *planes, int n, float *logits, float *scratch);

/* Softmax of one row of logits over the entries where legal[i] != 0 (probs of the others 0; a row
 * without a legal entry is all 0).  probs may alias logits. */
void mg_policy_masked_softmax(const float *logits, const uint8_t *legal, float *probs);

/* The same over the k entries idx[0..k) only: probs[j] = softmax over the chosen logits. */
void mg_policy_softmax_at(const float *logits, const int16_t *idx, int k, float *probs);

/* A move drawn from the softmax over the legal entries of one row of logits with the uniform
 * number u in [0, 1): the first legal index whose cumulative probability exceeds u (the last legal
 * index if rounding leaves none); -1 if no entry is legal. */
int mg_policy_sample(const float *logits, const uint8_t *legal, double u);

#ifdef __cplusplus
}
#endif
#endif

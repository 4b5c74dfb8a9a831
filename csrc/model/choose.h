/*
 * choose.h - the token choice of a decoding step from one row of logits z[V] (generate.c uses it;
 * kernels/choose.cu is its CUDA version, checked against it).
 */
#ifndef MG_MODEL_CHOOSE_H
#define MG_MODEL_CHOOSE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Plain argmax (first maximum) when n_group == 0, else grouped greedy (see
 * mavgame/model/inference/decode.py grouped_argmax): the group's most likely token if the group's total
 * probability beats the most likely other token, else that token.  in_group[V] marks the group's
 * ids, group[n_group] lists them. */
int mg_choose_token(const float *z, int V, const uint8_t *in_group, const int32_t *group, int n_group);

/* The grouped choice once the group's most likely token gi and the most likely other token oi are
 * known (-1: that class is empty): gi if the group's total probability beats oi's, else oi. */
int mg_choose_between(const float *z, int gi, int oi, const int32_t *group, int n_group);

/* out[n_buckets] = softmax over the bucket tokens' logits z[bucket_ids[i]] (in double). */
void mg_bucket_probs(float *out, const float *z, const int32_t *bucket_ids, int n_buckets);

#ifdef __cplusplus
}
#endif
#endif

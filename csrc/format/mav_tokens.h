/*
 * mav_tokens.h - reading MAV output at the token level: which move each generated value token
 * belongs to.  The one implementation behind mavgame.model.inference.MAVModel (its value
 * distributions, through the binding) and the native MCTS evaluator (search/mcts_eval_model.c).
 *
 * A value token at ids[i] is the value of a move when it is a well-formed `` move:<ctrlN>``
 * entry of a %top line, as mavgame.mav.parse reads them: the line starts with ``[%top_all`` or
 * ``[%top_``, ids[i-3] is a space, ids[i-2] (the move, one token) is not a value token, ids[i-1]
 * is ``:``, i >= line start + 4, and the next token (if any) is a space or ``]``.
 */
#ifndef MG_FORMAT_MAV_TOKENS_H
#define MG_FORMAT_MAV_TOKENS_H

#include <stdint.h>

#include "tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mg_mav_tok_ids {
    int32_t colon, space, open, close, newline, top_all, top_k;
    int32_t bucket0, n_buckets;  /* the value tokens are bucket0 .. bucket0 + n_buckets - 1 */
} mg_mav_tok_ids;

/* The ids of a tokenizer; MG_OK, or MG_ERR if one of them is missing from the vocabulary. */
int mg_mav_tok_ids_init(const mg_tokenizer *t, mg_mav_tok_ids *v);

/* For each value step k (the value token at ids[steps[k]], steps increasing), the index in ids
 * of the move token of its entry, or -1 if it is not a well-formed %top entry (see above). */
void mg_mav_value_moves(const mg_mav_tok_ids *v, const int32_t *ids, int n, const int32_t *steps, int nsteps,
                        int32_t *move_at);

#ifdef __cplusplus
}
#endif
#endif

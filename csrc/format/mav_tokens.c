/*
 * mav_tokens.c - value tokens of MAV output and the moves they belong to (mav_tokens.h).
 */
#include "mav_tokens.h"

#include <string.h>

#include "../game.h"

int mg_mav_tok_ids_init(const mg_tokenizer *t, mg_mav_tok_ids *v)
{
    v->colon = mg_tok_lookup(t, ":", 1);
    v->space = mg_tok_lookup(t, " ", 1);
    v->open = mg_tok_lookup(t, "[", 1);
    v->close = mg_tok_lookup(t, "]", 1);
    v->newline = mg_tok_lookup(t, "\n", 1);
    v->top_all = mg_tok_lookup(t, "%top_all", 8);
    v->top_k = mg_tok_lookup(t, "%top_", 5);
    v->bucket0 = MG_TOK_CTRL0;
    v->n_buckets = 64;
    return v->colon < 0 || v->space < 0 || v->open < 0 || v->close < 0 || v->newline < 0 || v->top_all < 0 ||
                   v->top_k < 0
               ? MG_ERR
               : MG_OK;
}

static int is_value(const mg_mav_tok_ids *v, int32_t t)
{
    return t >= v->bucket0 && t < v->bucket0 + v->n_buckets;
}

void mg_mav_value_moves(const mg_mav_tok_ids *v, const int32_t *ids, int n, const int32_t *steps, int nsteps,
                        int32_t *move_at)
{
    for (int k = 0; k < nsteps; k++)
        move_at[k] = -1;
    int start = 0, top = 0, k = 0;
    for (int i = 0; i < n && k < nsteps; i++) {
        int32_t t = ids[i];
        if (t == v->newline) {
            start = i + 1;
            top = 0;
        } else if (i == start + 1) {
            top = ids[start] == v->open && (t == v->top_all || t == v->top_k);
        }
        while (k < nsteps && steps[k] < i)
            k++;
        if (k >= nsteps || steps[k] != i || t == v->newline)
            continue;
        if (!top || i < start + 4)
            continue;
        if (ids[i - 1] != v->colon || ids[i - 3] != v->space || is_value(v, ids[i - 2]))
            continue;
        if (i + 1 < n && ids[i + 1] != v->space && ids[i + 1] != v->close)
            continue;
        move_at[k] = i - 2;
    }
}

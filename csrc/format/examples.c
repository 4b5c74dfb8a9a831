/* examples.c - randomised MAV training examples (see examples.h). */
#include "examples.h"

#include "mav_util.h"

void mg_mav_example_opts_default(mg_mav_example_opts *o)
{
    o->p_transition = 0.5;
    o->p_top = 1.0;
    o->p_top_all = 0.25;
    o->k_slack = 4;
    o->p_best = 1.0;
    o->p_after = 0.0;
    o->p_shuffle = 1.0;
    o->p_state_only = 1.0 / 3.0;
    o->p_fen_only = 1.0 / 3.0;
    o->add_bos = 1;
    o->add_eos = 1;
    o->k_terminal_prev = 0;
}

int mg_mav_example_opts_check(const mg_mav_example_opts *o, char *err, size_t errlen)
{
    const struct {
        const char *name;
        double v;
    } ps[] = {{"p_transition", o->p_transition}, {"p_top", o->p_top},     {"p_top_all", o->p_top_all},
              {"p_best", o->p_best},             {"p_after", o->p_after}, {"p_shuffle", o->p_shuffle},
              {"p_state_only", o->p_state_only}, {"p_fen_only", o->p_fen_only}};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        if (!(ps[i].v >= 0.0 && ps[i].v <= 1.0)) {
            mg_errf(err, errlen, "%s must be a probability in [0, 1], got %g", ps[i].name, ps[i].v);
            return MG_ERR;
        }
    if (o->p_state_only + o->p_fen_only > 1.0 + 1e-12) {
        mg_errf(err, errlen, "p_state_only + p_fen_only must be at most 1, got %g", o->p_state_only + o->p_fen_only);
        return MG_ERR;
    }
    if (o->k_slack < 0 || o->k_slack > 1000) {
        mg_errf(err, errlen, "k_slack must be in 0..1000, got %d", o->k_slack);
        return MG_ERR;
    }
    if (o->k_terminal_prev != 0 && o->k_terminal_prev != 1) {
        mg_errf(err, errlen, "k_terminal_prev must be 0 or 1, got %d", o->k_terminal_prev);
        return MG_ERR;
    }
    return MG_OK;
}

static void push_state_group(mg_mav_spec *spec, const mg_mav_example_opts *o, mg_rng *rng, int has_fen, int prev)
{
    int sc = prev ? MG_MAV_PREV_STATE : MG_MAV_STATE, fc = prev ? MG_MAV_PREV_FEN : MG_MAV_FEN;
    if (!has_fen) {
        spec->cmd[spec->n++] = (uint8_t)sc;
        return;
    }
    double u = mg_rng_double(rng);
    if (u < o->p_state_only) {
        spec->cmd[spec->n++] = (uint8_t)sc;
    } else if (u < o->p_state_only + o->p_fen_only) {
        spec->cmd[spec->n++] = (uint8_t)fc;
    } else if (mg_rng_below(rng, 2)) {
        spec->cmd[spec->n++] = (uint8_t)sc;
        spec->cmd[spec->n++] = (uint8_t)fc;
    } else {
        spec->cmd[spec->n++] = (uint8_t)fc;
        spec->cmd[spec->n++] = (uint8_t)sc;
    }
}

int mg_mav_example_spec(const mg_game *g, const mg_mav_example_opts *o, mg_rng *rng, int n_legal, int n_ann,
                        int can_transition, int terminal, mg_mav_spec *spec, char *err, size_t errlen)
{
    int has_fen = 0;
    if (!mg_mav_game_supported(g, &has_fen)) {
        mg_errf(err, errlen, "the MAV format does not support game '%s'", g->name);
        return MG_ERR;
    }
    memset(spec, 0, sizeof *spec);
    int transition = can_transition && mg_rng_double(rng) < o->p_transition;
    if (transition) {
        push_state_group(spec, o, rng, has_fen, 1);
        spec->cmd[spec->n++] = MG_MAV_PREV_ACTION;
    }
    push_state_group(spec, o, rng, has_fen, 0);
    int annotated = terminal || n_ann > 0;
    int want_top = annotated && mg_rng_double(rng) < o->p_top;
    int want_best = annotated && mg_rng_double(rng) < o->p_best;
    if (!transition && !want_top && !want_best) {
        if (!annotated) {
            mg_errf(err, errlen, "nothing to output: no annotation and no previous state");
            return MG_ERR;
        }
        want_top = 1;
    }
    if (want_top) {
        int complete = terminal || n_ann >= n_legal;
        if (complete && mg_rng_double(rng) < o->p_top_all) {
            spec->top_k = 0;
        } else {
            int kmax = complete ? n_legal + o->k_slack : n_ann;
            if (kmax < 1)
                kmax = 1;
            if (kmax > MG_MAV_MAX_K)
                kmax = MG_MAV_MAX_K;
            spec->top_k = 1 + (int)mg_rng_below(rng, (uint32_t)kmax);
        }
        spec->cmd[spec->n++] = MG_MAV_TOP;
    }
    if (want_best) {
        spec->cmd[spec->n++] = MG_MAV_BEST_ACTION;
        if (!terminal && mg_rng_double(rng) < o->p_after)
            push_state_group(spec, o, rng, has_fen, 0);
    }
    return mg_mav_spec_check(g, spec, err, errlen);
}

long mg_mav_example_build(const mg_tokenizer *t, const mg_game *g, const mg_mav_input *in,
                          const mg_mav_example_opts *o, mg_rng *rng, int32_t *ids, uint8_t *mask, size_t cap,
                          char *text, size_t textlen, size_t *prompt_len, mg_mav_spec *spec_out, char *err,
                          size_t errlen)
{
    if (!in || !in->state) {
        mg_errf(err, errlen, "MAV example: no current state");
        return -1;
    }
    int terminal = g->outcome(in->state, NULL) != MG_ONGOING;
    int32_t legal[MG_MAX_MOVES];
    int n_legal = terminal ? 0 : g->legal_actions(in->state, legal);
    /* the %top_k range of a terminal state: its own (none) or, with k_terminal_prev, the previous state's */
    int n_range = terminal && o->k_terminal_prev && in->prev ? g->legal_actions(in->prev, legal) : n_legal;
    mg_mav_spec spec;
    if (mg_mav_example_spec(g, o, rng, n_range, in->n, in->prev != NULL, terminal, &spec, err, errlen) != MG_OK)
        return -1;
    mg_mav_input w = *in;
    w.order = NULL;
    w.norder = 0;
    int32_t order[MG_MAX_MOVES];
    if (spec.top_pos >= 0 && !terminal && mg_rng_double(rng) < o->p_shuffle) {
        int m = mg_mav_top_count(&spec, n_legal);
        for (int i = 0; i < m; i++)
            order[i] = i;
        for (int i = m - 1; i > 0; i--) {
            int j = (int)mg_rng_below(rng, (uint32_t)(i + 1));
            int32_t tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
        }
        w.order = order;
        w.norder = m;
    }
    long pl = mg_mav_write(g, &spec, &w, MG_MAV_PART_PROMPT, text, textlen, err, errlen);
    if (pl < 0)
        return -1;
    long tl = mg_mav_write(g, &spec, &w, MG_MAV_PART_TARGET, text + pl, textlen - (size_t)pl, err, errlen);
    if (tl < 0)
        return -1;
    size_t k = 0;
    if (o->add_bos) {
        if (k < cap) {
            ids[k] = MG_TOK_BOS;
            mask[k] = 0;
        }
        k++;
    }
    size_t np = mg_tok_encode(t, text, (size_t)pl, k < cap ? ids + k : ids, k < cap ? cap - k : 0);
    for (size_t i = k; i < k + np && i < cap; i++)
        mask[i] = 0;
    k += np;
    size_t nt = mg_tok_encode(t, text + pl, (size_t)tl, k < cap ? ids + k : ids, k < cap ? cap - k : 0);
    for (size_t i = k; i < k + nt && i < cap; i++)
        mask[i] = 1;
    k += nt;
    if (o->add_eos) {
        if (k < cap) {
            ids[k] = MG_TOK_EOS;
            mask[k] = 1;
        }
        k++;
    }
    if (k > cap) {
        mg_errf(err, errlen, "MAV example needs %zu tokens, more than the room for %zu", k, cap);
        return -1;
    }
    if (prompt_len)
        *prompt_len = (size_t)pl;
    if (spec_out)
        *spec_out = spec;
    return (long)k;
}

/*
 * mcts_eval_model.c - the native MAV model evaluator (mcts_eval_model.h).  Every buffer is
 * allocated at creation for max_batch requests; evaluating a batch allocates nothing.
 *
 * The search's timeout (evaluator.h): generation is synchronous, max_batch leaves at a time, so
 * results arrive a chunk at a time.  A chunk whose generation ends more than `timeout` seconds
 * after the call began is late: its answers are read (and cached) but left MG_EVAL_DROPPED, and
 * the chunks after it are not generated at all (dropped too).  The first chunk always runs; its
 * cache hits are answered before its generation starts and are never late.
 */
#include "mcts_eval_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../clock.h"
#include "../format/mav_tokens.h"
#include "../format/tokenizer.h"
#include "../format/values.h"
#include "../model/engine.h"
#include "mav_eval_io.h"

#define MG_EVAL_CACHE_TOKENS 160  /* longer prompts are not cached */

typedef struct model_ctx {
    mg_engine *engine;
    mg_tokenizer tok;
    mg_mav_tok_ids ids;
    mg_eval_format f;
    mg_mav_result *parsed;
    char *buf;                  /* MG_EVAL_PROMPT_CAP + MG_EVAL_OUTPUT_CAP + 1: prompt text, then output text */
    char *text;                 /* MG_EVAL_OUTPUT_CAP: a decoded answer */
    int max_batch, S, scoring, prefix_sharing, n_group, mode;
    int32_t *group;             /* [n_group] */
    int32_t *prompt_ids;        /* [max_batch][S] */
    int32_t *lens;              /* [max_batch] */
    const int32_t **prompts;    /* [max_batch] */
    int32_t *out_ids, *out_steps, *move_at; /* [max_batch][S] */
    float *out_probs;           /* [max_batch][S][64] */
    mg_gen_result *res;         /* [max_batch] */
    int32_t *miss;              /* [max_batch] request of each generated answer */
    /* output cache (engine mode): direct-mapped by a hash of the prompt's tokens, verified against
     * the stored tokens; an entry keeps the answer's reading (status and legal-move values) */
    int cache_cap, cache_moves;
    uint64_t *c_hash;
    int32_t *c_len, *c_status, *c_toks;  /* [cap], [cap], [cap][MG_EVAL_CACHE_TOKENS] */
    float *c_vals;                       /* [cap][cache_moves] */
    int32_t buckets[64];
    mg_eval_model_stats stats;
} model_ctx;

static void model_free(void *vctx)
{
    model_ctx *c = vctx;
    if (!c)
        return;
    mg_engine_free(c->engine);
    free(c->parsed);
    free(c->buf);
    free(c->text);
    free(c->group);
    free(c->prompt_ids);
    free(c->lens);
    free(c->prompts);
    free(c->out_ids);
    free(c->out_steps);
    free(c->move_at);
    free(c->out_probs);
    free(c->res);
    free(c->miss);
    free(c->c_hash);
    free(c->c_len);
    free(c->c_status);
    free(c->c_toks);
    free(c->c_vals);
    free(c);
}

/* The value of move string mv from the answer's value distributions (the first entry of the move),
 * NaN if it has none. */
static float move_value(model_ctx *c, const mg_gen_result *r, const int32_t *move_at, const char *mv, size_t ml)
{
    char tt[4 * MG_TOK_MAX_LEN];
    for (int k = 0; k < r->n_values; k++) {
        if (move_at[k] < 0)
            continue;
        long tl = mg_tok_decode(&c->tok, &r->ids[move_at[k]], 1, tt, sizeof tt);
        if (tl != (long)ml || memcmp(tt, mv, ml) != 0)
            continue;
        double v;
        char err[MG_ERRLEN];
        if (mg_mav_score_f32(r->value_probs + (size_t)k * 64, 1, 64, c->scoring, 0, &v, err, sizeof err) == 0)
            return (float)v;
        return NAN;
    }
    return NAN;
}

/* Fill the values of request q from result r (the engine's answer to its prompt); 0 or -1. */
static int read_answer(model_ctx *c, const mg_game *g, const mg_eval_request *q, int i, mg_eval_result *out)
{
    const mg_gen_result *r = &c->res[i];
    int n = r->n_ids - (r->finished ? 1 : 0); /* the output without its <eos> */
    int32_t *move_at = c->move_at + (size_t)i * c->S;
    mg_mav_value_moves(&c->ids, r->ids, n, r->value_steps, r->n_values, move_at);
    int got = 0;
    char mv[MG_MAX_MOVE_STR];
    for (int j = 0; j < q->num_legal; j++) {
        size_t ml = g->action_to_str(q->state, q->legal[j], mv, sizeof mv);
        float v = move_value(c, r, move_at, mv, ml);
        if (!isnan(v)) {
            out->values[j] = v;
            got++;
        }
    }
    if (got)
        return 0;
    /* no usable value: read the answer as text, as the search does with a Python evaluator's text */
    c->stats.text_fallbacks++;
    long tl = mg_tok_decode(&c->tok, r->ids, (size_t)n, c->text, MG_EVAL_OUTPUT_CAP);
    if (tl < 0)
        return -1;
    return mg_eval_read_output(&c->f, q, c->text, (size_t)tl, out, c->buf, c->parsed);
}


/* State tracking: read the answer of request q (prompt + answer parsed together) as
 * mavgame.agents.mav.MAVEvaluator does: a predicted game result, or the predicted state with its
 * listed moves (well-formed, first occurrences) and their values where the answer has them. */
static int read_answer_st(model_ctx *c, const mg_eval_request *q, int i, mg_eval_result *out)
{
    const mg_gen_result *r = &c->res[i];
    int n = r->n_ids - (r->finished ? 1 : 0);
    int32_t *move_at = c->move_at + (size_t)i * c->S;
    mg_mav_value_moves(&c->ids, r->ids, n, r->value_steps, r->n_values, move_at);
    size_t at = mg_eval_prompt(&c->f, q, c->buf, MG_EVAL_PROMPT_CAP);
    if (!at)
        return -1;
    long tl = mg_tok_decode(&c->tok, r->ids, (size_t)n, c->buf + at, MG_EVAL_OUTPUT_CAP);
    if (tl < 0)
        return -1;
    mg_mav_result *p = c->parsed;
    mg_mav_parse(c->f.g, &c->f.cfg, c->buf, at + (size_t)tl, NULL, p);
    const mg_mav_slot *cur = &p->slot[MG_MAV_SLOT_CUR];
    const char *text = cur->text;
    if (p->top_outcome && p->outcome != MG_ONGOING) {
        if (!text[0])
            text = q->parent_text ? q->parent_text : "";
        size_t l = strlen(text);
        if (l >= out->text_cap)
            return -1;
        memcpy(out->text, text, l + 1);
        out->result = p->outcome;
        out->num_moves = 0;
        return 0;
    }
    if (!cur->valid || p->n_moves == 0)
        return -1;
    size_t l = strlen(text);
    if (l >= out->text_cap)
        return -1;
    memcpy(out->text, text, l + 1);
    int nm = 0;
    for (int k = 0; k < p->n_moves && k < MG_MAV_MAX_TOP; k++) {
        const mg_mav_move *mv = &p->moves[k];
        if (mv->status == MG_MAV_MOVE_MALFORMED || mv->duplicate)
            continue;
        size_t ml = strlen(mv->move);
        if (nm >= MG_MAX_MOVES || ml >= MG_MAX_MOVE_STR)
            return -1;
        memcpy(out->moves[nm], mv->move, ml + 1);
        out->values[nm] = move_value(c, r, move_at, mv->move, ml);
        nm++;
    }
    out->num_moves = nm;
    return 0;
}

static uint64_t prompt_hash(const int32_t *ids, int len)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < len; i++) {
        h ^= (uint32_t)ids[i];
        h *= 1099511628211ull;
    }
    return h ^ (h >> 29);
}

/* A cached reading of this prompt into r (engine mode); 1 on a hit. */
static int cache_get(model_ctx *c, const mg_eval_request *q, const int32_t *ids, int len, mg_eval_result *r)
{
    if (!c->cache_cap || c->mode != MG_EVAL_ENGINE || len > MG_EVAL_CACHE_TOKENS || q->num_legal > c->cache_moves)
        return 0;
    uint64_t h = prompt_hash(ids, len);
    size_t e = (size_t)(h & (uint64_t)(c->cache_cap - 1));
    if (c->c_len[e] != len || c->c_hash[e] != h ||
        memcmp(c->c_toks + e * MG_EVAL_CACHE_TOKENS, ids, sizeof(int32_t) * (size_t)len) != 0)
        return 0;
    r->status = c->c_status[e];
    memcpy(r->values, c->c_vals + e * (size_t)c->cache_moves, sizeof(float) * (size_t)q->num_legal);
    return 1;
}

static void cache_put(model_ctx *c, const mg_eval_request *q, const int32_t *ids, int len, const mg_eval_result *r)
{
    if (!c->cache_cap || c->mode != MG_EVAL_ENGINE || len > MG_EVAL_CACHE_TOKENS || q->num_legal > c->cache_moves)
        return;
    uint64_t h = prompt_hash(ids, len);
    size_t e = (size_t)(h & (uint64_t)(c->cache_cap - 1));
    c->c_hash[e] = h;
    c->c_len[e] = len;
    c->c_status[e] = r->status;
    memcpy(c->c_toks + e * MG_EVAL_CACHE_TOKENS, ids, sizeof(int32_t) * (size_t)len);
    memcpy(c->c_vals + e * (size_t)c->cache_moves, r->values, sizeof(float) * (size_t)q->num_legal);
}

static int model_evaluate(void *vctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                          double timeout, char *err, size_t errlen)
{
    model_ctx *c = vctx;
    if (g != c->f.g) {
        snprintf(err, errlen, "the native MAV evaluator was made for %s, not %s", c->f.g->name, g ? g->name : "none");
        return MG_ERR;
    }
    c->stats.calls++;
    const double t0 = timeout > 0 ? mg_now_seconds() : 0.0;
    int late = 0; /* the deadline passed: what is generated from now on arrives too late */
    for (int b0 = 0; b0 < n; b0 += c->max_batch) {
        int m = n - b0 < c->max_batch ? n - b0 : c->max_batch, nmiss = 0;
        if (late) {
            c->stats.late += m; /* not generated: left MG_EVAL_DROPPED */
            continue;
        }
        for (int i = 0; i < m; i++) {
            const mg_eval_request *q = &req[b0 + i];
            mg_eval_result *r = &res[b0 + i];
            if (q->mode != c->mode) {
                snprintf(err, errlen, "the native MAV evaluator was made for %s mode",
                         c->mode == MG_EVAL_ENGINE ? "engine" : "state-tracking");
                return MG_ERR;
            }
            size_t pl = mg_eval_prompt(&c->f, q, c->buf, MG_EVAL_PROMPT_CAP);
            if (!pl) {
                snprintf(err, errlen, "cannot write the MAV prompt of a leaf");
                return MG_ERR;
            }
            int32_t *ids = c->prompt_ids + (size_t)i * c->S;
            ids[0] = MG_TOK_BOS;
            size_t nt = mg_tok_encode(&c->tok, c->buf, pl, ids + 1, (size_t)c->S - 1);
            if (nt + 1 >= (size_t)c->S) {
                snprintf(err, errlen, "a prompt of %zu tokens does not fit the model's max_seq_len %d", nt + 1, c->S);
                return MG_ERR;
            }
            r->seq = b0 + i;
            if (cache_get(c, q, ids, (int)nt + 1, r)) {
                c->stats.cache_hits++;
                continue;
            }
            c->lens[nmiss] = (int32_t)(nt + 1);
            c->prompts[nmiss] = ids;
            c->miss[nmiss++] = i;
        }
        if (nmiss) {
            int32_t stop = MG_TOK_EOS;
            mg_gen_request gq = {nmiss, c->prompts, c->lens, c->S, &stop, 1, c->group, c->n_group, c->buckets, 64,
                                 c->prefix_sharing};
            if (mg_engine_generate(c->engine, &gq, c->res, err, errlen) != MG_OK)
                return MG_ERR;
            late = timeout > 0 && mg_now_seconds() - t0 > timeout;
        }
        for (int k = 0; k < nmiss; k++) {
            int i = c->miss[k];
            mg_eval_result *r = &res[b0 + i];
            int ok = (c->mode == MG_EVAL_ENGINE ? read_answer(c, g, &req[b0 + i], k, r)
                                                : read_answer_st(c, &req[b0 + i], k, r)) == 0;
            r->status = ok ? MG_EVAL_OK : MG_EVAL_INVALID;
            c->stats.invalid += !ok;
            cache_put(c, &req[b0 + i], c->prompts[k], c->lens[k], r); /* kept even when late */
            if (late)
                r->status = MG_EVAL_DROPPED;
        }
        c->stats.late += late ? nmiss : 0;
        c->stats.requests += m;
    }
    mg_engine_stats es;
    mg_engine_get_stats(c->engine, &es);
    c->stats.prompt_tokens = es.prompt_tokens;
    c->stats.shared_saved = es.shared_saved;
    c->stats.cache_saved = es.cache_saved;
    c->stats.generated = es.generated;
    return MG_OK;
}

int mg_eval_model_create(mg_evaluator *ev, const mg_model *model, const mg_game *g, const mg_config *cfg,
                         const mg_eval_model_params *p, char *err, size_t errlen)
{
    memset(ev, 0, sizeof *ev);
    if (!g || !mg_mav_game_supported(g, NULL)) {
        snprintf(err, errlen, "the native MAV evaluator needs a game with a MAV format, not %s", g ? g->name : "none");
        return MG_ERR;
    }
    if (p->max_batch < 1 || p->max_batch > 1024) {
        snprintf(err, errlen, "max_batch must be in [1, 1024], got %d", p->max_batch);
        return MG_ERR;
    }
    if (p->scoring != MG_MAV_SCORE_MEAN && p->scoring != MG_MAV_SCORE_MAX) {
        snprintf(err, errlen, "unknown scoring %d", p->scoring);
        return MG_ERR;
    }
    if (p->n_group < 0 || (p->n_group && !p->group_ids)) {
        snprintf(err, errlen, "bad group ids");
        return MG_ERR;
    }
    model_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return MG_ERR;
    }
    if (model->vocab < 1) {
        snprintf(err, errlen, "the model file declares no MAV vocabulary (vocab_version '%.40s')",
                 model->vocab_version ? model->vocab_version : "");
        model_free(c);
        return MG_ERR;
    }
    /* the vocabulary the model file declares (checked against its size at load) */
    if (mg_tok_init(&c->tok, model->vocab, err, errlen) != MG_OK || mg_mav_tok_ids_init(&c->tok, &c->ids) != MG_OK) {
        if (!err[0])
            snprintf(err, errlen, "the MAV vocabulary lacks a token of the %%top format");
        model_free(c);
        return MG_ERR;
    }
    if (model->cfg.vocab_size != c->tok.n) {
        snprintf(err, errlen, "model vocabulary size %d != tokenizer size %d", model->cfg.vocab_size, c->tok.n);
        model_free(c);
        return MG_ERR;
    }
    c->mode = p->state_tracking ? MG_EVAL_STATE_TRACKING : MG_EVAL_ENGINE;
    if (mg_eval_format_init(&c->f, g, cfg, p->state_tracking, p->spec, err, errlen) != MG_OK) {
        model_free(c);
        return MG_ERR;
    }
    for (int i = 0; i < p->n_group; i++)
        if (p->group_ids[i] < 0 || p->group_ids[i] >= c->tok.n) {
            snprintf(err, errlen, "group id %d is outside the vocabulary", (int)p->group_ids[i]);
            model_free(c);
            return MG_ERR;
        }
    if (mg_engine_create(&c->engine, model, p->max_batch, p->threads, p->engine_flags, err, errlen) != MG_OK ||
        mg_engine_set_prefix_cache(c->engine, p->prefix_cache, err, errlen) != MG_OK) {
        model_free(c);
        return MG_ERR;
    }
    int B = p->max_batch, S = model->cfg.max_seq_len;
    c->max_batch = B;
    c->S = S;
    c->scoring = p->scoring;
    c->prefix_sharing = p->prefix_sharing;
    c->n_group = p->n_group;
    for (int i = 0; i < 64; i++)
        c->buckets[i] = MG_TOK_CTRL0 + i;
    size_t BS = (size_t)B * (size_t)S;
    c->parsed = malloc(sizeof *c->parsed);
    c->buf = malloc(MG_EVAL_PROMPT_CAP + MG_EVAL_OUTPUT_CAP + 1);
    c->text = malloc(MG_EVAL_OUTPUT_CAP);
    c->group = malloc(sizeof(int32_t) * ((size_t)p->n_group + 1));
    c->prompt_ids = malloc(sizeof(int32_t) * BS);
    c->lens = malloc(sizeof(int32_t) * (size_t)B);
    c->prompts = malloc(sizeof(int32_t *) * (size_t)B);
    c->out_ids = malloc(sizeof(int32_t) * BS);
    c->out_steps = malloc(sizeof(int32_t) * BS);
    c->move_at = malloc(sizeof(int32_t) * BS);
    c->out_probs = malloc(sizeof(float) * BS * 64);
    c->res = calloc((size_t)B, sizeof *c->res);
    c->miss = malloc(sizeof(int32_t) * (size_t)B);
    if (p->cache_size < 0 || p->cache_size > (1 << 24)) {
        snprintf(err, errlen, "cache_size must be in [0, 2^24], got %d", p->cache_size);
        model_free(c);
        return MG_ERR;
    }
    int cap = 0;
    while (cap < p->cache_size)
        cap = cap ? cap * 2 : 1;
    c->cache_cap = c->mode == MG_EVAL_ENGINE ? cap : 0;
    c->cache_moves = g->max_moves;
    if (c->cache_cap) {
        c->c_hash = calloc((size_t)cap, sizeof *c->c_hash);
        c->c_len = calloc((size_t)cap, sizeof *c->c_len);
        c->c_status = calloc((size_t)cap, sizeof *c->c_status);
        c->c_toks = malloc(sizeof(int32_t) * (size_t)cap * MG_EVAL_CACHE_TOKENS);
        c->c_vals = malloc(sizeof(float) * (size_t)cap * (size_t)c->cache_moves);
        if (!c->c_hash || !c->c_len || !c->c_status || !c->c_toks || !c->c_vals) {
            snprintf(err, errlen, "out of memory for an output cache of %d entries", cap);
            model_free(c);
            return MG_ERR;
        }
    }
    if (!c->parsed || !c->buf || !c->text || !c->group || !c->prompt_ids || !c->lens || !c->prompts || !c->out_ids ||
        !c->out_steps || !c->move_at || !c->out_probs || !c->res || !c->miss) {
        snprintf(err, errlen, "out of memory for the evaluator's buffers");
        model_free(c);
        return MG_ERR;
    }
    if (p->n_group)
        memcpy(c->group, p->group_ids, sizeof(int32_t) * (size_t)p->n_group);
    for (int i = 0; i < B; i++) {
        c->res[i].ids = c->out_ids + (size_t)i * S;
        c->res[i].value_steps = c->out_steps + (size_t)i * S;
        c->res[i].value_probs = c->out_probs + (size_t)i * S * 64;
    }
    ev->name = "mav-native";
    ev->ctx = c;
    ev->modes = 1u << c->mode;
    ev->evaluate = model_evaluate;
    ev->destroy = model_free;
    return MG_OK;
}

int mg_eval_model_stats_get(const mg_evaluator *ev, mg_eval_model_stats *s)
{
    if (!ev || ev->evaluate != model_evaluate)
        return MG_ERR;
    *s = ((const model_ctx *)ev->ctx)->stats;
    return MG_OK;
}

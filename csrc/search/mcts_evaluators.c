/* mcts_evaluators.c - built-in C evaluators for the MCTS (see evaluator.h). */
#include "evaluator.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rng.h"

void mg_evaluator_free(mg_evaluator *ev)
{
    if (!ev)
        return;
    if (ev->destroy)
        ev->destroy(ev->ctx);
    memset(ev, 0, sizeof *ev);
}

static void free_ctx(void *ctx) { free(ctx); }

/* ---- Random playouts ---- */

typedef struct playout_ctx {
    _Alignas(16) unsigned char state[MG_MAX_STATE];
    mg_rng rng;
    int playouts;
    int max_plies;
    int generic; /* 1: mg_random_playout_moves, 0: mg_random_playout */
} playout_ctx;

static int playout_evaluate(void *vctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                            double timeout, char *err, size_t errlen)
{
    (void)timeout;
    playout_ctx *c = vctx;
    if (!g) {
        snprintf(err, errlen, "playout evaluator: needs a game engine");
        return MG_ERR;
    }
    for (int i = 0; i < n; i++) {
        double score = 0;
        int mover = req[i].to_move;
        for (int p = 0; p < c->playouts; p++) {
            memcpy(c->state, req[i].state, g->state_size);
            int r = c->generic ? mg_random_playout_moves(g, c->state, &c->rng, c->max_plies, NULL)
                               : mg_random_playout(g, c->state, &c->rng, c->max_plies, NULL);
            if (r == MG_DRAW || r == MG_ONGOING)
                score += 0.5;
            else if ((r == MG_P0_WINS) == (mover == MG_P0))
                score += 1.0;
        }
        res[i].value = score / c->playouts;
        res[i].status = MG_EVAL_OK;
    }
    return MG_OK;
}

int mg_eval_playout_create(mg_evaluator *ev, int playouts, int max_plies, uint64_t seed, char *err, size_t errlen)
{
    memset(ev, 0, sizeof *ev);
    if (playouts < 1 || playouts > 1000000) {
        snprintf(err, errlen, "playout evaluator: playouts %d is not in [1, 1e6]", playouts);
        return MG_ERR;
    }
    if (max_plies < 0) {
        snprintf(err, errlen, "playout evaluator: max_plies %d is negative", max_plies);
        return MG_ERR;
    }
    playout_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "playout evaluator: out of memory");
        return MG_ERR;
    }
    c->playouts = playouts;
    c->max_plies = max_plies ? max_plies : INT_MAX;
    mg_rng_seed(&c->rng, seed);
    ev->name = "playout";
    ev->ctx = c;
    ev->modes = 1u << MG_EVAL_ENGINE;
    ev->evaluate = playout_evaluate;
    ev->destroy = free_ctx;
    return MG_OK;
}

void mg_eval_playout_set_specialised(mg_evaluator *ev, int specialised)
{
    playout_ctx *c = ev->ctx;
    c->generic = !specialised;
}

/* ---- Constant values ---- */

typedef struct constant_ctx {
    float value;
} constant_ctx;

static int constant_evaluate(void *vctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                             double timeout, char *err, size_t errlen)
{
    (void)g;
    (void)timeout;
    (void)err;
    (void)errlen;
    const constant_ctx *c = vctx;
    for (int i = 0; i < n; i++) {
        int k = req[i].num_legal;
        float *v = res[i].values;
        for (int j = 0; j < k; j++)
            v[j] = c->value;
        res[i].status = MG_EVAL_OK;
    }
    return MG_OK;
}

int mg_eval_constant_create(mg_evaluator *ev, double value, char *err, size_t errlen)
{
    memset(ev, 0, sizeof *ev);
    if (!(value >= 0 && value <= 1)) {
        snprintf(err, errlen, "constant evaluator: value %g is not in [0, 1]", value);
        return MG_ERR;
    }
    constant_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "constant evaluator: out of memory");
        return MG_ERR;
    }
    c->value = (float)value;
    ev->name = "constant";
    ev->ctx = c;
    ev->modes = 1u << MG_EVAL_ENGINE;
    ev->flags = MG_EVAL_FLAG_CHEAP;
    ev->evaluate = constant_evaluate;
    ev->destroy = free_ctx;
    return MG_OK;
}

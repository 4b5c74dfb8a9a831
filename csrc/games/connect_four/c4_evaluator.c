/* c4_evaluator.c - the perfect Connect Four oracle as an MCTS evaluator (see c4_evaluator.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c4_evaluator.h"
#include "c4_solver.h"

typedef struct c4_eval_ctx {
    mg_c4_solver *sv;
    mg_c4_limits lim;
} c4_eval_ctx;

double mg_eval_c4_score_value(int score)
{
    if (score == 0)
        return 0.5;
    if (score > 0)
        return 0.75 + 0.25 * (double)score / MG_C4_MAX_SCORE;
    return 0.25 + 0.25 * (double)score / MG_C4_MAX_SCORE;
}

static int c4_evaluate(void *vctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                       double timeout, char *err, size_t errlen)
{
    (void)timeout;
    c4_eval_ctx *c = vctx;
    if (g != &mg_connect_four) {
        snprintf(err, errlen, "c4 solver evaluator: cannot evaluate %s positions", g ? g->name : "(no game)");
        return MG_ERR;
    }
    for (int i = 0; i < n; i++) {
        mg_c4_solution sol;
        if (mg_c4_solve_moves(c->sv, req[i].state, &c->lim, &sol) != MG_OK) {
            snprintf(err, errlen, "c4 solver evaluator: the solver failed");
            return MG_ERR;
        }
        int any = 0;
        for (int j = 0; j < req[i].num_legal; j++) {
            int32_t col = req[i].legal[j];
            int sc = col >= 0 && col < MG_C4_WIDTH ? sol.move_score[col] : MG_C4_NO_SCORE;
            res[i].values[j] = sc == MG_C4_NO_SCORE ? NAN : (float)mg_eval_c4_score_value(sc);
            any |= sc != MG_C4_NO_SCORE;
        }
        /* A budget stop can leave every column unsolved: then the answer is dropped. */
        res[i].status = any ? MG_EVAL_OK : MG_EVAL_DROPPED;
    }
    return MG_OK;
}

static void c4_destroy(void *vctx)
{
    c4_eval_ctx *c = vctx;
    if (c) {
        mg_c4_solver_free(c->sv);
        free(c);
    }
}

int mg_eval_c4_solver_create(mg_evaluator *ev, int tt_log2, uint64_t max_nodes, char *err, size_t errlen)
{
    memset(ev, 0, sizeof *ev);
    c4_eval_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "c4 solver evaluator: out of memory");
        return MG_ERR;
    }
    c->sv = mg_c4_solver_new(tt_log2, err, errlen);
    if (!c->sv) {
        free(c);
        return MG_ERR;
    }
    c->lim.max_nodes = max_nodes;
    ev->name = "c4_solver";
    ev->ctx = c;
    ev->modes = 1u << MG_EVAL_ENGINE;
    ev->evaluate = c4_evaluate;
    ev->destroy = c4_destroy;
    return MG_OK;
}

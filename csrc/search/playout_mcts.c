/* playout_mcts.c - UCT with random playouts over the game interface (see playout_mcts.h). */
#include "playout_mcts.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cancel.h"
#include "../rng.h"

typedef struct pnode {
    double score;          /* sum of scores for the player who moved into this node */
    uint32_t visits;
    int32_t action;        /* the move into this node */
    int32_t first_child;   /* -1: none */
    int32_t next_sibling;  /* -1: none */
    int16_t nlegal;        /* legal moves here; -1 not computed yet */
    int16_t nexpanded;     /* children created */
    int8_t mover;          /* player who moved into this node */
    int8_t result;         /* enum mg_result: MG_ONGOING, or the result of a terminal node */
} pnode;

void mg_pmcts_config_default(mg_pmcts_config *c)
{
    c->simulations = 1000;
    c->c = 1.4142135623730951;
    c->seed = 0;
    c->max_playout_plies = 0;
    c->playout = NULL;
    c->cancel = NULL;
}

/* Score of a result for player 0. */
static inline double score_p0(int result)
{
    return result == MG_P0_WINS ? 1.0 : result == MG_P1_WINS ? 0.0 : 0.5;
}

int mg_playout_mcts(const mg_game *g, const void *root, const mg_pmcts_config *cfg, mg_pmcts_result *out, char *err,
                    size_t errlen)
{
    out->nmoves = 0;
    if (cfg->simulations < 1 || cfg->simulations > MG_PMCTS_MAX_SIMULATIONS) {
        snprintf(err, errlen, "playout mcts: simulations must be in 1..%d, got %d", MG_PMCTS_MAX_SIMULATIONS,
                 cfg->simulations);
        return MG_ERR;
    }
    if (!(cfg->c >= 0.0 && cfg->c <= 1e6)) {
        snprintf(err, errlen, "playout mcts: exploration constant c must be in [0, 1e6], got %g", cfg->c);
        return MG_ERR;
    }
    if (cfg->max_playout_plies < 0) {
        snprintf(err, errlen, "playout mcts: max_playout_plies must be >= 0, got %d", cfg->max_playout_plies);
        return MG_ERR;
    }
    int root_result = g->outcome(root, NULL);
    if (root_result != MG_ONGOING) {
        snprintf(err, errlen, "playout mcts: the game is over (%s), there is no move to search",
                 mg_result_string(root_result));
        return MG_ERR;
    }
    int32_t root_moves[MG_MAX_MOVES], moves[MG_MAX_MOVES];
    int nroot = g->legal_actions(root, root_moves);
    if (nroot <= 0) {
        snprintf(err, errlen, "playout mcts: the %s position has no legal move", g->name);
        return MG_ERR;
    }

    size_t nnodes = (size_t)cfg->simulations + 1;
    size_t words = ((size_t)g->num_actions + 63) / 64;
    pnode *nodes = malloc(nnodes * sizeof *nodes);
    int32_t *path = malloc((nnodes + 1) * sizeof *path);
    uint64_t *tried = calloc(words, sizeof *tried);
    unsigned char *work = malloc(g->state_size);
    if (!nodes || !path || !tried || !work) {
        free(nodes);
        free(path);
        free(tried);
        free(work);
        snprintf(err, errlen, "playout mcts: cannot allocate the tree for %d simulations", cfg->simulations);
        return MG_ERR;
    }
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    int32_t untried[MG_MAX_MOVES];
    mg_rng rng;
    mg_rng_seed(&rng, cfg->seed);
    int max_plies = cfg->max_playout_plies ? cfg->max_playout_plies : INT_MAX;
    int root_mover = g->to_move(root);
    int (*playout)(const mg_game *, void *, struct mg_rng *, int, int *) =
        cfg->playout ? cfg->playout : mg_random_playout;

    uint32_t used = 1;
    nodes[0] = (pnode){0.0, 0, -1, -1, -1, (int16_t)nroot, 0, (int8_t)(root_mover ^ 1), MG_ONGOING};
    double root_score = 0.0;
    uint64_t plies_total = 0;

    int sims = 0;
    for (; sims < cfg->simulations; sims++) {
        if (mg_cancel_tick(cfg->cancel))
            break;
        memcpy(work, root, g->state_size);
        int32_t cur = 0;
        int depth = 0;
        path[0] = 0;
        int result;
        for (;;) {
            pnode *nd = &nodes[cur];
            if (nd->result != MG_ONGOING) {
                result = nd->result;
                break;
            }
            if (nd->nlegal < 0) {
                nd->nlegal = (int16_t)g->legal_actions(work, moves);
                if (nd->nlegal == 0) { /* not terminal yet no move: an inconsistent game; score a draw */
                    nd->result = MG_DRAW;
                    result = MG_DRAW;
                    break;
                }
            }
            if (nd->nexpanded < nd->nlegal) {
                /* Expand a uniformly random untried move. */
                int k = g->legal_actions(work, moves), nu = 0;
                for (int32_t ch = nd->first_child; ch >= 0; ch = nodes[ch].next_sibling)
                    tried[nodes[ch].action >> 6] |= 1ULL << (nodes[ch].action & 63);
                for (int i = 0; i < k; i++)
                    if (!(tried[moves[i] >> 6] >> (moves[i] & 63) & 1))
                        untried[nu++] = moves[i];
                for (int32_t ch = nd->first_child; ch >= 0; ch = nodes[ch].next_sibling)
                    tried[nodes[ch].action >> 6] = 0;
                if (nu == 0) { /* legal_actions disagreed with the count: treat the node as expanded */
                    nd->nexpanded = nd->nlegal;
                    continue;
                }
                int32_t a = untried[mg_rng_below(&rng, (uint32_t)nu)];
                int mover = g->to_move(work);
                g->make(work, a, undo);
                int32_t c = (int32_t)used++;
                int r = g->outcome(work, NULL);
                nodes[c] = (pnode){0.0, 0, a, -1, nd->first_child, -1, 0, (int8_t)mover, (int8_t)r};
                nd->first_child = c;
                nd->nexpanded++;
                path[++depth] = c;
                if (r != MG_ONGOING) {
                    result = r;
                } else {
                    int plies = 0;
                    result = playout(g, work, &rng, max_plies, &plies);
                    plies_total += (uint64_t)plies;
                }
                break;
            }
            if (nd->first_child < 0) { /* cannot happen with a consistent game */
                result = MG_DRAW;
                break;
            }
            /* UCB1 over the children (all visited at least once). */
            double logn = log((double)nd->visits);
            double best = -1.0;
            int32_t pick = nd->first_child;
            for (int32_t ch = nd->first_child; ch >= 0; ch = nodes[ch].next_sibling) {
                const pnode *cn = &nodes[ch];
                double u = cn->score / cn->visits + cfg->c * sqrt(logn / cn->visits);
                if (u > best) {
                    best = u;
                    pick = ch;
                }
            }
            g->make(work, nodes[pick].action, undo);
            cur = pick;
            path[++depth] = cur;
        }
        double s0 = score_p0(result);
        for (int i = depth; i >= 0; i--) {
            pnode *nd = &nodes[path[i]];
            nd->visits++;
            nd->score += nd->mover == 0 ? s0 : 1.0 - s0;
        }
        root_score += root_mover == 0 ? s0 : 1.0 - s0;
    }

    if (sims == 0 && cfg->simulations > 0) { /* stopped before the first simulation: nothing to report */
        free(nodes);
        free(path);
        free(tried);
        free(work);
        snprintf(err, errlen, "playout mcts: interrupted after %d of %d simulations", sims, cfg->simulations);
        return MG_ERR;
    }

    /* Root statistics in legal_actions() order. */
    out->nmoves = nroot;
    out->best = 0;
    for (int i = 0; i < nroot; i++) {
        out->actions[i] = root_moves[i];
        out->visits[i] = 0;
        out->q[i] = NAN;
    }
    for (int32_t ch = nodes[0].first_child; ch >= 0; ch = nodes[ch].next_sibling)
        for (int i = 0; i < nroot; i++)
            if (root_moves[i] == nodes[ch].action) {
                out->visits[i] = nodes[ch].visits;
                out->q[i] = nodes[ch].visits ? nodes[ch].score / nodes[ch].visits : NAN;
                break;
            }
    for (int i = 1; i < nroot; i++) {
        int b = out->best;
        if (out->visits[i] > out->visits[b] ||
            (out->visits[i] == out->visits[b] && out->visits[i] > 0 && out->q[i] > out->q[b]))
            out->best = i;
    }
    out->simulations = sims;
    out->stopped = sims < cfg->simulations;
    out->value = root_score / sims;
    out->nodes = used;
    out->playout_plies = plies_total;
    free(nodes);
    free(path);
    free(tried);
    free(work);
    return MG_OK;
}

/* mcts_engine.c - engine mode of the MCTS (see mcts.h, mcts_mode.h): the tree's states come from the
 * game interface, its edges are the legal actions, a game end is the engine's outcome. */
#include "mcts_mode.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The node of `state`: its mover, terminal if the game is over. */
static void engine_node(const mg_game *g, const void *state, mcts_node *nd)
{
    mcts_node_init(nd, g->to_move(state));
    int r = g->outcome(state, NULL);
    if (r != MG_ONGOING)
        mcts_node_terminal(nd, r);
}

void mcts_engine_set_root(mg_mcts *m, const void *state, int ply)
{
    mcts_tree_clear(m);
    if (state != m->root_state)
        memcpy(m->root_state, state, m->ss);
    m->root_ply = ply;
    engine_node(m->g, state, &m->a.nodes[0]);
    m->a.nodes_len = 1;
    m->has_root = 1;
}

int mcts_engine_advance(mg_mcts *m, int32_t action, char *err, size_t errlen)
{
    if (!m->g->is_legal(m->root_state, action) || m->g->outcome(m->root_state, NULL) != MG_ONGOING) {
        char mv[MG_MAX_MOVE_STR] = "?";
        m->g->action_to_str(m->root_state, action, mv, sizeof mv);
        snprintf(err, errlen, "mcts: action %d (%s) is not legal at the root", (int)action, mv);
        return MG_ERR;
    }
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    const mcts_node *root = &m->a.nodes[0];
    for (uint32_t j = 0; j < root->num_edges; j++) {
        if (m->a.edges[root->first_edge + j].action != action)
            continue;
        if (!mcts_root_child_known(m, j))
            break;
        if (mcts_reroot(m, root->first_edge + j, err, errlen) != MG_OK)
            return MG_ERR;
        m->g->make(m->root_state, action, undo);
        return MG_OK;
    }
    /* Not in the tree: start afresh at the new position. */
    unsigned char *tmp = m->root_state;
    m->g->make(tmp, action, undo);
    mcts_engine_set_root(m, tmp, m->root_ply + 1);
    return MG_OK;
}

static int engine_advance_move(mg_mcts *m, const char *move, char *err, size_t errlen)
{
    int32_t a;
    if (m->g->action_from_str(m->root_state, move, &a, err, errlen) != MG_OK)
        return MG_ERR;
    return mcts_engine_advance(m, a, err, errlen);
}

/* With the game's legal_outcome hook, the moves of a new node go into request ri's list as its
 * outcome is found (one move generation; engine_leaf_moves then has them); else only the outcome. */
static int engine_new_node(mg_mcts *m, const mcts_node *parent, const unsigned char *state, mcts_node *cn, int ri)
{
    (void)parent;
    const mg_game *g = m->g;
    if (!g->legal_outcome) {
        engine_node(g, state, cn);
        return -1;
    }
    mcts_node_init(cn, g->to_move(state));
    int r;
    int nl = g->legal_outcome(state, m->legal + (size_t)ri * MG_MAX_MOVES, &r, NULL);
    if (r != MG_ONGOING)
        mcts_node_terminal(cn, r);
    return nl;
}

static int engine_leaf_moves(mg_mcts *m, const unsigned char *state, int ri, int known)
{
    int32_t *legal = m->legal + (size_t)ri * MG_MAX_MOVES;
    int nl = known >= 0 ? known : m->g->legal_actions(state, legal);
    if (nl <= 0)
        return 0;
    m->reqs[ri].legal = legal;
    m->reqs[ri].num_legal = nl;
    return nl;
}

static void engine_prepare(mg_mcts *m, const mcts_slot *sl, int ri)
{
    (void)sl;
    mg_eval_request *q = &m->reqs[ri];
    mg_eval_result *r = &m->res[ri];
    q->state = m->states + (size_t)ri * m->ss;
    q->text = q->parent_text = q->move = NULL;
    /* legal/num_legal were filled by engine_leaf_moves */
    r->num_moves = q->num_legal;
    /* NaN presets: block copies (a store loop over two arrays that may alias is not vectorised) */
    memcpy(r->values, m->nans, (size_t)q->num_legal * sizeof *r->values);
    memcpy(r->policy, m->nans, (size_t)q->num_legal * sizeof *r->policy);
}

static int engine_check_answer(const mg_mcts *m, int32_t leaf, const mg_eval_result *r, int *n, int *result,
                               size_t *tlen)
{
    (void)leaf, (void)n, (void)result, (void)tlen;
    /* values must align with the request's legal actions */
    return r->num_moves == m->reqs[r - m->res].num_legal ? APPLY_OK : APPLY_INVALID;
}

static int engine_store(mg_mcts *m, int32_t leaf, const mg_eval_result *r, size_t tlen, int result, int *terminal,
                        double *v)
{
    (void)m, (void)leaf, (void)r, (void)tlen, (void)result, (void)v;
    *terminal = 0; /* the engine's outcomes are known at selection */
    return APPLY_OK;
}

const mcts_mode mcts_engine_mode = {
    .name = "engine",
    .new_node = engine_new_node,
    .leaf_moves = engine_leaf_moves,
    .prepare = engine_prepare,
    .check_answer = engine_check_answer,
    .keep_moves = NULL, /* every answer, in request order: read in place by the loop */
    .store = engine_store,
    .set_moves = NULL,
    .advance_move = engine_advance_move,
};

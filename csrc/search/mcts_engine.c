/* mcts_engine.c - engine mode of the MCTS (see mcts.h): the tree's states come from the game
 * interface, its edges are the legal actions, a game end is the engine's outcome. */
#include "mcts_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The root node of `state`: its mover, terminal if the game is over. */
static void engine_node(const mg_game *g, const void *state, mcts_node *nd)
{
    mcts_node_init(nd, g->to_move(state));
    int r = g->outcome(state, NULL);
    if (r != MG_ONGOING)
        mcts_node_terminal(nd, r);
}

int mg_mcts_set_root(mg_mcts *m, const void *state, int ply, char *err, size_t errlen)
{
    if (mcts_tracking(m)) {
        snprintf(err, errlen, "mcts: set_root needs engine mode (this search tracks states: use set_root_text)");
        return MG_ERR;
    }
    mcts_tree_clear(m);
    if (state != m->root_state)
        memcpy(m->root_state, state, m->ss);
    m->root_ply = ply;
    engine_node(m->g, state, &m->a.nodes[0]);
    m->a.nodes_len = 1;
    m->has_root = 1;
    return MG_OK;
}

int mg_mcts_advance(mg_mcts *m, int32_t action, char *err, size_t errlen)
{
    if (mcts_tracking(m)) {
        snprintf(err, errlen, "mcts: advance(action) needs engine mode (use advance_move)");
        return MG_ERR;
    }
    if (!m->has_root) {
        snprintf(err, errlen, "mcts: no root position set");
        return MG_ERR;
    }
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
    return mg_mcts_set_root(m, tmp, m->root_ply + 1, err, errlen);
}

int mcts_engine_advance_move(mg_mcts *m, const char *move, char *err, size_t errlen)
{
    int32_t a;
    if (m->g->action_from_str(m->root_state, move, &a, err, errlen) != MG_OK)
        return MG_ERR;
    return mg_mcts_advance(m, a, err, errlen);
}

void mcts_engine_new_node(const mg_mcts *m, const unsigned char *state, mcts_node *cn)
{
    engine_node(m->g, state, cn);
}

int mcts_engine_leaf_moves(mg_mcts *m, const unsigned char *state, int ri)
{
    int32_t *legal = m->legal + (size_t)ri * MG_MAX_MOVES;
    int nl = m->g->legal_actions(state, legal);
    if (nl <= 0)
        return 0;
    m->reqs[ri].legal = legal;
    m->reqs[ri].num_legal = nl;
    return nl;
}

void mcts_engine_prepare(mg_mcts *m, int ri)
{
    mg_eval_request *q = &m->reqs[ri];
    mg_eval_result *r = &m->res[ri];
    q->state = m->states + (size_t)ri * m->ss;
    q->text = q->parent_text = q->move = NULL;
    /* legal/num_legal were filled by mcts_engine_leaf_moves */
    r->num_moves = q->num_legal;
    for (int i = 0; i < q->num_legal; i++) {
        r->values[i] = NAN;
        r->policy[i] = NAN;
    }
}

int mcts_engine_check_answer(const mg_mcts *m, const mg_eval_result *r)
{
    /* values must align with the request's legal actions */
    return r->num_moves == m->reqs[r - m->res].num_legal ? APPLY_OK : APPLY_INVALID;
}

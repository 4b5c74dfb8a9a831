/* mcts_state_tracking.c - state-tracking mode of the MCTS (see mcts.h, mcts_mode.h): no engine; each
 * node holds the state text the evaluator predicted for it, each edge a predicted move string, and a
 * game end is the evaluator's predicted result.  The root's text is the real game's (set_root_text). */
#include "mcts_mode.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A predicted text is usable if it is non-empty, fits, and has no control characters. */
static int text_ok(const char *s, size_t cap, size_t *len)
{
    size_t n = 0;
    while (n < cap && s[n]) {
        unsigned char c = (unsigned char)s[n];
        if (c < 0x20 && c != '\t' && c != '\n')
            return 0;
        if (c == 0x7f)
            return 0;
        n++;
    }
    if (n == 0 || n >= cap)
        return 0;
    *len = n;
    return 1;
}

/* A predicted move string: 1..MG_MAX_MOVE_STR-1 printable, non-space characters. */
static int move_ok(const char *s)
{
    int n = 0;
    while (n < MG_MAX_MOVE_STR && s[n]) {
        unsigned char c = (unsigned char)s[n];
        if (c <= 0x20 || c >= 0x7f)
            return 0;
        n++;
    }
    return n > 0 && n < MG_MAX_MOVE_STR;
}

int mcts_tracking_set_root(mg_mcts *m, const char *text, int to_move, int ply, char *err, size_t errlen)
{
    size_t len;
    if (!text || !text_ok(text, MG_MAX_TEXT, &len)) {
        snprintf(err, errlen, "mcts: root text %s is empty, longer than %d bytes or has control characters",
                 MG_QUOTE(text ? text : "(null)", 60), MG_MAX_TEXT - 1);
        return MG_ERR;
    }
    if (to_move != MG_P0 && to_move != MG_P1) {
        snprintf(err, errlen, "mcts: to_move %d is not 0 or 1", to_move);
        return MG_ERR;
    }
    mcts_tree_clear(m);
    mcts_node *nd = &m->a.nodes[0];
    mcts_node_init(nd, to_move);
    nd->text = mcts_arena_add_text(&m->a, text, len);
    if (nd->text == UINT32_MAX) {
        snprintf(err, errlen, "mcts: out of memory");
        return MG_ERR;
    }
    m->a.nodes_len = 1;
    m->root_ply = ply;
    m->has_root = 1;
    return MG_OK;
}

static int tracking_advance_move(mg_mcts *m, const char *move, char *err, size_t errlen)
{
    const mcts_node *root = &m->a.nodes[0];
    for (uint32_t j = 0; j < root->num_edges; j++) {
        if (strcmp(m->a.moves[root->first_edge + j], move) != 0)
            continue;
        if (!mcts_root_child_known(m, j)) {
            snprintf(err, errlen, "mcts: move %s was never evaluated: its state is unknown to the tree",
                     MG_QUOTE(move, MG_QUOTE_MAX));
            return MG_ERR;
        }
        return mcts_reroot(m, root->first_edge + j, err, errlen);
    }
    snprintf(err, errlen, "mcts: move %s is not among the root's predicted moves",
             MG_QUOTE(move, MG_QUOTE_MAX));
    return MG_ERR;
}

static int tracking_new_node(mg_mcts *m, const mcts_node *parent, const unsigned char *state, mcts_node *cn, int ri)
{
    (void)m, (void)state, (void)ri;
    mcts_node_init(cn, parent->to_move ^ 1); /* a predicted state: the players alternate */
    return -1;
}

static int tracking_leaf_moves(mg_mcts *m, const unsigned char *state, int ri, int known)
{
    (void)m, (void)state, (void)ri, (void)known;
    return 1; /* the evaluator predicts them */
}

static void tracking_prepare(mg_mcts *m, const mcts_slot *sl, int ri)
{
    mg_eval_request *q = &m->reqs[ri];
    mg_eval_result *r = &m->res[ri];
    q->state = NULL;
    q->num_legal = 0;
    q->legal = NULL;
    if (sl->len == 0) {
        q->text = m->a.text + m->a.nodes[0].text;
        q->parent_text = NULL;
        q->move = NULL;
    } else {
        q->text = NULL;
        q->parent_text = m->a.text + m->a.nodes[sl->nodes[sl->len - 1]].text;
        q->move = m->a.moves[sl->edges[sl->len - 1]];
    }
    r->num_moves = 0;
    r->text[0] = '\0';
    for (int i = 0; i < MG_MAX_MOVES; i++) {
        r->values[i] = NAN;
        r->policy[i] = NAN;
        r->moves[i][0] = '\0';
    }
}

static int tracking_check_answer(const mg_mcts *m, int32_t leaf, const mg_eval_result *r, int *n, int *result,
                                 size_t *tlen)
{
    /* A node with a text (the root) keeps it, so its answer needs none. */
    if (m->a.nodes[leaf].text == UINT32_MAX && !text_ok(r->text, r->text_cap, tlen))
        return APPLY_INVALID;
    *result = r->result;
    if (*result < MG_ONGOING || *result > MG_DRAW)
        return APPLY_INVALID;
    if (*result == MG_ONGOING && (*n < 1 || *n > MG_MAX_MOVES))
        return APPLY_INVALID;
    if (*result != MG_ONGOING)
        *n = 0;
    return APPLY_OK;
}

static int tracking_keep_moves(const mg_eval_result *r, int n, int32_t *keep)
{
    int nk = 0;
    for (int i = 0; i < n; i++) {
        if (!move_ok(r->moves[i]))
            return -1;
        int dup = 0;
        for (int j = 0; j < nk && !dup; j++)
            dup = strcmp(r->moves[keep[j]], r->moves[i]) == 0;
        if (!dup)
            keep[nk++] = i;
    }
    return nk;
}

static int tracking_store(mg_mcts *m, int32_t leaf, const mg_eval_result *r, size_t tlen, int result, int *terminal,
                          double *v)
{
    mcts_node *nd = &m->a.nodes[leaf];
    *terminal = 0;
    /* A node that has a text keeps it: the root's is the real game's (set_root_text), or
     * after tree reuse the text the tree already predicted for it. */
    if (nd->text == UINT32_MAX) {
        uint32_t off = mcts_arena_add_text(&m->a, r->text, tlen);
        if (off == UINT32_MAX)
            return APPLY_NOMEM;
        nd = &m->a.nodes[leaf];
        nd->text = off;
    }
    if (result != MG_ONGOING) {
        mcts_node_terminal(nd, result);
        *v = nd->value;
        *terminal = 1;
    }
    return APPLY_OK;
}

static void tracking_set_moves(mg_mcts *m, uint32_t first, const mg_eval_result *r, const int32_t *keep, int nk)
{
    for (int i = 0; i < nk; i++) {
        m->a.edges[first + (uint32_t)i].action = i; /* the index among the node's edges */
        memcpy(m->a.moves[first + (uint32_t)i], r->moves[keep[i]], sizeof(mcts_move));
    }
}

const mcts_mode mcts_tracking_mode = {
    .name = "state-tracking",
    .new_node = tracking_new_node,
    .leaf_moves = tracking_leaf_moves,
    .prepare = tracking_prepare,
    .check_answer = tracking_check_answer,
    .keep_moves = tracking_keep_moves,
    .store = tracking_store,
    .set_moves = tracking_set_moves,
    .advance_move = tracking_advance_move,
};

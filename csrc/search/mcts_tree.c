/* mcts_tree.c - the MCTS tree's storage: node/edge/text arenas, nodes, tree reuse (compaction of the
 * kept subtree); the lowest of the MCTS's files (see mcts_tree.h). */
#include "mcts_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Arenas and nodes                                                                            */

void mcts_arena_free(mcts_arena *a)
{
    free(a->nodes);
    free(a->edges);
    free(a->moves);
    free(a->text);
    memset(a, 0, sizeof *a);
}

int mcts_arena_reserve_nodes(mcts_arena *a, size_t need)
{
    if (need <= a->nodes_cap)
        return MG_OK;
    size_t cap = a->nodes_cap ? a->nodes_cap : 1024;
    while (cap < need)
        cap *= 2;
    if (cap > UINT32_MAX / 2)
        return MG_ERR;
    mcts_node *p = realloc(a->nodes, cap * sizeof *p);
    if (!p)
        return MG_ERR;
    a->nodes = p;
    a->nodes_cap = cap;
    return MG_OK;
}

int mcts_arena_reserve_edges(mcts_arena *a, size_t need, int with_moves)
{
    if (need <= a->edges_cap)
        return MG_OK;
    size_t cap = a->edges_cap ? a->edges_cap : 4096;
    while (cap < need)
        cap *= 2;
    if (cap > UINT32_MAX / 2)
        return MG_ERR;
    mcts_edge *p = realloc(a->edges, cap * sizeof *p);
    if (!p)
        return MG_ERR;
    a->edges = p;
    if (with_moves) {
        mcts_move *q = realloc(a->moves, cap * sizeof *q);
        if (!q)
            return MG_ERR;
        a->moves = q;
    }
    a->edges_cap = cap;
    return MG_OK;
}

/* Appends a NUL-terminated string to the text pool; UINT32_MAX on out of memory. */
uint32_t mcts_arena_add_text(mcts_arena *a, const char *s, size_t len)
{
    size_t need = a->text_len + len + 1;
    if (need > a->text_cap) {
        size_t cap = a->text_cap ? a->text_cap : 65536;
        while (cap < need)
            cap *= 2;
        if (cap > UINT32_MAX / 2)
            return UINT32_MAX;
        char *p = realloc(a->text, cap);
        if (!p)
            return UINT32_MAX;
        a->text = p;
        a->text_cap = cap;
    }
    uint32_t off = (uint32_t)a->text_len;
    memcpy(a->text + off, s, len);
    a->text[off + len] = '\0';
    a->text_len = need;
    return off;
}

void mcts_node_init(mcts_node *nd, int to_move)
{
    memset(nd, 0, sizeof *nd);
    nd->to_move = (uint8_t)to_move;
    nd->text = UINT32_MAX;
}

/* +1 win, 0 draw, -1 loss for `to_move`. */
static double result_value(int result, int to_move)
{
    if (result == MG_DRAW)
        return 0.0;
    int winner = result == MG_P0_WINS ? MG_P0 : MG_P1;
    return winner == to_move ? 1.0 : -1.0;
}

void mcts_node_terminal(mcts_node *nd, int result)
{
    nd->flags = NF_EXPANDED | NF_TERMINAL;
    nd->result = (int8_t)result;
    nd->value = (float)result_value(result, nd->to_move);
}

void mcts_tree_clear(mg_mcts *m)
{
    m->a.nodes_len = 0;
    m->a.edges_len = 0;
    m->a.text_len = 0;
    m->root_n = m->root_v = 0;
    m->root_w = 0.0;
    m->has_root = 0;
    m->stats.reused_nodes = 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Tree reuse                                                                                  */

/* Copy the subtree under node `src` of arena `from` into the empty arena `to` (root 0). */
static int compact_subtree(mg_mcts *m, mcts_arena *from, mcts_arena *to, int32_t src)
{
    to->nodes_len = to->edges_len = to->text_len = 0;
    /* Breadth-first: nodes are copied in queue order, so to->nodes doubles as the queue
     * (node i of `to` came from the i-th entry of the source index list kept in `srcidx`). */
    size_t cap_nodes = from->nodes_len, cap_edges = from->edges_len;
    if (mcts_arena_reserve_nodes(to, cap_nodes + 1) != MG_OK || mcts_arena_reserve_edges(to, cap_edges + 1, mcts_tracking(m)) != MG_OK)
        return MG_ERR;
    int32_t *srcidx = malloc((cap_nodes + 1) * sizeof *srcidx);
    if (!srcidx)
        return MG_ERR;
    size_t head = 0, tail = 0;
    srcidx[tail++] = src;
    to->nodes[0] = from->nodes[src];
    to->nodes_len = 1;
    while (head < tail) {
        size_t ni = head++;
        const mcts_node *sn = &from->nodes[srcidx[ni]];
        mcts_node *dn = &to->nodes[ni];
        *dn = *sn;
        if (mcts_tracking(m) && sn->text != UINT32_MAX) {
            const char *t = from->text + sn->text;
            dn->text = mcts_arena_add_text(to, t, strlen(t));
            if (dn->text == UINT32_MAX) {
                free(srcidx);
                return MG_ERR;
            }
        }
        dn->first_edge = (uint32_t)to->edges_len;
        for (uint32_t j = 0; j < sn->num_edges; j++) {
            mcts_edge e = from->edges[sn->first_edge + j];
            if (mcts_tracking(m))
                memcpy(to->moves[to->edges_len], from->moves[sn->first_edge + j], sizeof(mcts_move));
            if (e.child >= 0) {
                srcidx[tail] = e.child;
                e.child = (int32_t)tail;
                tail++;
            }
            to->edges[to->edges_len++] = e;
        }
    }
    to->nodes_len = tail;
    free(srcidx);
    return MG_OK;
}

int mcts_reroot(mg_mcts *m, uint32_t edge_index, char *err, size_t errlen)
{
    const mcts_edge *e = &m->a.edges[edge_index];
    int old_mover = m->a.nodes[0].to_move;
    int32_t child = e->child;
    uint32_t n = e->n;
    double w = e->w;
    if (compact_subtree(m, &m->a, &m->spare, child) != MG_OK) {
        snprintf(err, errlen, "mcts: out of memory while keeping the subtree");
        return MG_ERR;
    }
    mcts_arena t = m->a;
    m->a = m->spare;
    m->spare = t;
    m->spare.nodes_len = m->spare.edges_len = m->spare.text_len = 0;
    m->root_n = n;
    m->root_v = 0;
    m->root_w = m->a.nodes[0].to_move == old_mover ? w : -w;
    m->root_ply++;
    m->stats.reused_nodes = (int)m->a.nodes_len;
    return MG_OK;
}

int mcts_root_child_known(const mg_mcts *m, uint32_t j)
{
    const mcts_edge *e = &m->a.edges[m->a.nodes[0].first_edge + j];
    return e->child >= 0 && (m->a.nodes[e->child].flags & NF_EXPANDED) && !(m->a.nodes[e->child].flags & NF_HALLU);
}

/* mcts_tree.c - the MCTS tree's storage: node/edge/text arenas, tree reuse (compaction of the kept
 * subtree), the results read from the tree and the invariant check (see mcts.h, mcts_internal.h). */
#include "mcts_internal.h"

#include <math.h>
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

double mcts_result_value(int result, int to_move)
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
    nd->value = (float)mcts_result_value(result, nd->to_move);
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
    mcts_root_noise(m);
    return MG_OK;
}

int mcts_root_child_known(const mg_mcts *m, uint32_t j)
{
    const mcts_edge *e = &m->a.edges[m->a.nodes[0].first_edge + j];
    return e->child >= 0 && (m->a.nodes[e->child].flags & NF_EXPANDED) && !(m->a.nodes[e->child].flags & NF_HALLU);
}

/* ------------------------------------------------------------------------------------------ */
/* Results                                                                                     */

int mg_mcts_num_root_edges(const mg_mcts *m)
{
    if (!m->has_root)
        return 0;
    return (int)m->a.nodes[0].num_edges;
}

void mg_mcts_root_edges(const mg_mcts *m, int32_t *actions, uint32_t *visits, double *q, float *prior,
                        float *values, uint8_t *hallucinated)
{
    int n = mg_mcts_num_root_edges(m);
    const mcts_edge *e = m->a.edges + (n ? m->a.nodes[0].first_edge : 0);
    for (int i = 0; i < n; i++) {
        if (actions)
            actions[i] = e[i].action;
        if (visits)
            visits[i] = e[i].n;
        if (q)
            q[i] = e[i].n                                                   ? e[i].w / e[i].n
                   : e[i].dead && m->cfg.invalid == MG_MCTS_INVALID_EXCLUDE ? -INFINITY
                                                                            : NAN;
        if (prior)
            prior[i] = e[i].prior;
        if (values)
            values[i] = e[i].value;
        if (hallucinated)
            hallucinated[i] = e[i].child >= 0 && (m->a.nodes[e[i].child].flags & NF_HALLU) ? 1 : 0;
    }
}

int mg_mcts_path_virtual(const mg_mcts *m, const int32_t *path, int len, uint32_t *out)
{
    if (!m->has_root || len < 0)
        return -1;
    out[0] = m->root_v;
    int32_t node = 0;
    for (int i = 0; i < len; i++) {
        if (node < 0)
            return -1;
        const mcts_node *nd = &m->a.nodes[node];
        const mcts_edge *e = NULL;
        for (uint32_t j = 0; j < nd->num_edges && !e; j++)
            if (m->a.edges[nd->first_edge + j].action == path[i])
                e = &m->a.edges[nd->first_edge + j];
        if (!e)
            return -1;
        out[i + 1] = e->v;
        node = e->child;
    }
    return len;
}

/* Robust child of node `nd` among non-hallucinated edges: most visits, then W, then prior. */
static int best_child(const mg_mcts *m, const mcts_node *nd)
{
    int best = -1;
    for (uint32_t j = 0; j < nd->num_edges; j++) {
        const mcts_edge *e = &m->a.edges[nd->first_edge + j];
        if (e->dead)
            continue;
        if (best < 0) {
            best = (int)j;
            continue;
        }
        const mcts_edge *b = &m->a.edges[nd->first_edge + (uint32_t)best];
        if (e->n > b->n || (e->n == b->n && (e->w > b->w || (e->w == b->w && e->prior > b->prior))))
            best = (int)j;
    }
    return best;
}

int mg_mcts_best_edge(const mg_mcts *m)
{
    if (!m->has_root)
        return -1;
    return best_child(m, &m->a.nodes[0]);
}

int32_t mg_mcts_best_action(const mg_mcts *m)
{
    int b = mg_mcts_best_edge(m);
    if (b < 0 || mcts_tracking(m))
        return -1;
    return m->a.edges[m->a.nodes[0].first_edge + (uint32_t)b].action;
}

int mg_mcts_pv(const mg_mcts *m, int32_t *actions, int32_t *edges, int max)
{
    if (!m->has_root)
        return 0;
    int len = 0;
    const mcts_node *nd = &m->a.nodes[0];
    while (len < max) {
        int b = best_child(m, nd);
        if (b < 0)
            break;
        const mcts_edge *e = &m->a.edges[nd->first_edge + (uint32_t)b];
        if (e->n == 0)
            break;
        if (actions)
            actions[len] = mcts_tracking(m) ? -1 : e->action;
        if (edges)
            edges[len] = b;
        len++;
        if (e->child < 0)
            break;
        nd = &m->a.nodes[e->child];
    }
    return len;
}

uint32_t mg_mcts_root_visits(const mg_mcts *m) { return m->root_n; }

double mg_mcts_root_value(const mg_mcts *m) { return m->root_n ? m->root_w / m->root_n : NAN; }

int mg_mcts_root_to_move(const mg_mcts *m) { return m->has_root ? m->a.nodes[0].to_move : MG_P0; }

int mg_mcts_root_result(const mg_mcts *m)
{
    if (!m->has_root || !(m->a.nodes[0].flags & NF_TERMINAL))
        return MG_ONGOING;
    return m->a.nodes[0].result;
}

void mg_mcts_get_stats(const mg_mcts *m, mg_mcts_stats *s)
{
    *s = m->stats;
    s->nodes = (int)m->a.nodes_len;
    s->edges = (int64_t)m->a.edges_len;
}

int mg_mcts_check(const mg_mcts *m, char *err, size_t errlen)
{
    if (!m->has_root)
        return MG_OK;
    if (m->root_v != 0) {
        snprintf(err, errlen, "mcts check: root has %u virtual counts left", m->root_v);
        return MG_ERR;
    }
    const double tol = 1e-6;
    size_t nn = m->a.nodes_len;
    int32_t *stack = malloc(nn * sizeof *stack);
    uint32_t *visits = malloc(nn * sizeof *visits);
    if (!stack || !visits) {
        free(stack);
        free(visits);
        snprintf(err, errlen, "mcts check: out of memory");
        return MG_ERR;
    }
    size_t sp = 0, seen = 0;
    int rc = MG_OK;
    stack[sp++] = 0;
    visits[0] = m->root_n;
#define FAIL(...)                             \
    do {                                      \
        snprintf(err, errlen, __VA_ARGS__);   \
        rc = MG_ERR;                          \
        goto done;                            \
    } while (0)
    while (sp > 0) {
        int32_t ni = stack[--sp];
        seen++;
        const mcts_node *nd = &m->a.nodes[ni];
        uint32_t N = visits[ni];
        if (nd->flags & NF_PENDING)
            FAIL("mcts check: node %d still pending", (int)ni);
        if (!(nd->value >= -1 - tol && nd->value <= 1 + tol))
            FAIL("mcts check: node %d value %g out of [-1, 1]", (int)ni, (double)nd->value);
        if (!(nd->flags & NF_EXPANDED)) {
            if (nd->num_edges != 0 || (N != 0))
                FAIL("mcts check: unevaluated node %d has %u visits and %u edges", (int)ni, N, nd->num_edges);
            continue;
        }
        if (nd->flags & NF_TERMINAL) {
            if (N == 0 && ni != 0)
                FAIL("mcts check: terminal node %d has no visit", (int)ni);
            continue;
        }
        if ((nd->flags & NF_HALLU) && nd->num_edges == 0) {
            uint32_t want = m->cfg.invalid == MG_MCTS_INVALID_EXCLUDE ? 0 : 1;
            if (N != want)
                FAIL("mcts check: hallucinated leaf %d has %u visits (expected %u)", (int)ni, N, want);
            continue;
        }
        uint64_t sum = 0;
        double psum = 0;
        for (uint32_t j = 0; j < nd->num_edges; j++) {
            const mcts_edge *e = &m->a.edges[nd->first_edge + j];
            if (e->v != 0)
                FAIL("mcts check: edge %u of node %d has %u virtual counts left", j, (int)ni, e->v);
            if (!(e->prior >= 0))
                FAIL("mcts check: edge %u of node %d has prior %g", j, (int)ni, (double)e->prior);
            psum += e->prior;
            if (!(e->q_init >= -1 - tol && e->q_init <= 1 + tol))
                FAIL("mcts check: edge %u of node %d has initial Q %g", j, (int)ni, (double)e->q_init);
            if (e->n) {
                double q = e->w / e->n;
                if (!(q >= -1 - tol && q <= 1 + tol))
                    FAIL("mcts check: edge %u of node %d has Q %g out of [-1, 1]", j, (int)ni, q);
            } else if (e->w != 0) {
                FAIL("mcts check: unvisited edge %u of node %d has W %g", j, (int)ni, e->w);
            }
            sum += e->n;
            if (!!e->dead != (e->child >= 0 && (m->a.nodes[e->child].flags & NF_HALLU)))
                FAIL("mcts check: edge %u of node %d: dead flag %u disagrees with its child", j, (int)ni, e->dead);
            if (e->child >= 0) {
                if ((size_t)e->child >= nn || e->child <= ni)
                    FAIL("mcts check: edge %u of node %d points to node %d", j, (int)ni, (int)e->child);
                if (sp >= nn)
                    FAIL("mcts check: the tree has a cycle or a shared node");
                visits[e->child] = e->n;
                stack[sp++] = e->child;
            } else if (e->n) {
                FAIL("mcts check: edge %u of node %d has %u visits but no child", j, (int)ni, e->n);
            }
        }
        if (nd->num_edges && fabs(psum - 1.0) > 1e-4)
            FAIL("mcts check: priors of node %d sum to %.6f", (int)ni, psum);
        if ((uint64_t)N != 1 + sum + nd->cutoffs)
            FAIL("mcts check: node %d has %u visits but its children %llu (+1, +%u cut-offs)", (int)ni, N,
                 (unsigned long long)sum, nd->cutoffs);
    }
    if (seen != nn)
        FAIL("mcts check: %zu nodes reachable of %zu", seen, nn);
done:
#undef FAIL
    free(stack);
    free(visits);
    return rc;
}

/* mcts_results.c - what a search reads out of its tree (see mcts.h): the root's edges and priors, the
 * virtual counts of a path, the robust child and the principal variation, the move strings and root text
 * of state tracking, the statistics and the invariant check.  Above the search loop (mcts.c), which
 * calls none of it. */
#include "mcts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcts_tree.h"

int mg_mcts_num_root_edges(const mg_mcts *m) { return mcts_root_edge_count(m); }

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

int mg_mcts_path_priors(const mg_mcts *m, const int32_t *path, int len, float *prior, int max)
{
    if (!m->has_root || len < 0)
        return -1;
    int32_t node = 0;
    for (int i = 0; i < len; i++) {
        const mcts_node *nd = &m->a.nodes[node];
        int32_t next = -1;
        for (uint32_t j = 0; j < nd->num_edges && next < 0; j++)
            if (m->a.edges[nd->first_edge + j].action == path[i])
                next = m->a.edges[nd->first_edge + j].child;
        if (next < 0)
            return -1;
        node = next;
    }
    const mcts_node *nd = &m->a.nodes[node];
    for (uint32_t j = 0; prior && j < nd->num_edges && (int)j < max; j++)
        prior[j] = m->a.edges[nd->first_edge + j].prior;
    return (int)nd->num_edges;
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

/* State tracking: the move strings and the root text. */

const char *mg_mcts_root_move(const mg_mcts *m, int i)
{
    if (!mcts_tracking(m) || i < 0 || i >= mg_mcts_num_root_edges(m))
        return NULL;
    return m->a.moves[m->a.nodes[0].first_edge + (uint32_t)i];
}

const char *mg_mcts_pv_move(const mg_mcts *m, const int32_t *edges, int len, int i)
{
    if (!mcts_tracking(m) || !m->has_root || i < 0 || i >= len)
        return NULL;
    const mcts_node *nd = &m->a.nodes[0];
    for (int d = 0;; d++) {
        if (edges[d] < 0 || (uint32_t)edges[d] >= nd->num_edges)
            return NULL;
        uint32_t ei = nd->first_edge + (uint32_t)edges[d];
        if (d == i)
            return m->a.moves[ei];
        int32_t c = m->a.edges[ei].child;
        if (c < 0)
            return NULL;
        nd = &m->a.nodes[c];
    }
}

const char *mg_mcts_root_text(const mg_mcts *m)
{
    if (!mcts_tracking(m) || !m->has_root || m->a.nodes[0].text == UINT32_MAX)
        return "";
    return m->a.text + m->a.nodes[0].text;
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
            if (e->den != 1.0 + (double)e->n)
                FAIL("mcts check: edge %u of node %d caches 1 + N + V %.17g, not %u", j, (int)ni, e->den, 1 + e->n);
            if (!(e->prior >= 0))
                FAIL("mcts check: edge %u of node %d has prior %g", j, (int)ni, (double)e->prior);
            psum += e->prior;
            if (!(e->q_init >= -1 - tol && e->q_init <= 1 + tol))
                FAIL("mcts check: edge %u of node %d has initial Q %g", j, (int)ni, (double)e->q_init);
            if (e->n) {
                double q = e->w / e->n;
                if (!(q >= -1 - tol && q <= 1 + tol))
                    FAIL("mcts check: edge %u of node %d has Q %g out of [-1, 1]", j, (int)ni, q);
                if (e->dead ? !isnan(e->q) : e->q != q)
                    FAIL("mcts check: edge %u of node %d caches Q %.17g, not W / N = %.17g", j, (int)ni, e->q, q);
            } else if (e->w != 0) {
                FAIL("mcts check: unvisited edge %u of node %d has W %g", j, (int)ni, e->w);
            } else if (e->dead ? !isnan(e->q) : e->q != (double)e->q_init) {
                FAIL("mcts check: unvisited edge %u of node %d caches Q %g, not its initial Q %g", j, (int)ni, e->q,
                     (double)e->q_init);
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

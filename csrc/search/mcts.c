/* mcts.c - MAV-guided MCTS with asynchronous batches and dynamic virtual counts (see mcts.h): the
 * configuration, the batch buffers, selection (PUCT, virtual counts), backup, expansion (the prior
 * of equation 1) and the search loop, common to both modes.  It calls only down (mcts_tree.h): the
 * modes through their table m->mode (mcts_mode.h: mcts_engine.c, mcts_state_tracking.c), the tree's
 * storage in mcts_tree.c, AlphaZero's root noise in az_noise.c; the read-outs are in mcts_results.c. */
#include "mcts.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../cancel.h"
#include "../clock.h"
#include "az_noise.h"
#include "mcts_mode.h"
#include "mcts_tree.h"

/* Selection outcomes.  SEL_MARKED: a node whose children are all hallucinated was just marked
 * hallucinated (a permanent change, so it does not count as a failed attempt: at most one per node). */
enum { SEL_LEAF, SEL_TERMINAL, SEL_COLLISION, SEL_CUTOFF, SEL_DEAD, SEL_MARKED, SEL_ROOT_DEAD };

/* ------------------------------------------------------------------------------------------ */
/* Configuration                                                                               */

void mg_mcts_config_default(mg_mcts_config *c)
{
    memset(c, 0, sizeof *c);
    c->mode = MG_EVAL_ENGINE;
    c->batch_size = 1;
    c->timeout = 0.0;
    c->virtual_count = MG_MCTS_VC_DYNAMIC;
    c->n_max = 8;
    c->n_min = 2;
    c->virtual_loss = 3;
    c->c_puct = 1.25;
    c->c_base = 19652.0;
    c->c_init = 1.25;
    c->prior = MG_MCTS_PRIOR_MAV;
    c->k = 5;
    c->eps = 0.1;
    c->num_tau = 1;
    c->tau[0] = 0.1;
    c->tau_from_ply[0] = 0;
    c->fpu = NAN;
    c->invalid = MG_MCTS_INVALID_EXCLUDE;
    c->seed = 0;
    c->dirichlet_alpha = 0.0;
    c->dirichlet_frac = 0.0;
}

int mg_mcts_config_check(const mg_mcts_config *c, char *err, size_t errlen)
{
#define BAD(...)                              \
    do {                                      \
        snprintf(err, errlen, __VA_ARGS__);   \
        return MG_ERR;                        \
    } while (0)
    if (c->mode != MG_EVAL_ENGINE && c->mode != MG_EVAL_STATE_TRACKING)
        BAD("mcts: mode %d is neither engine (0) nor state tracking (1)", c->mode);
    if (c->batch_size < 1 || c->batch_size > 65536)
        BAD("mcts: batch_size %d is not in [1, 65536]", c->batch_size);
    if (!(c->timeout == c->timeout) || c->timeout > 1e9)
        BAD("mcts: timeout %g is not a number of seconds (at most 1e9; <= 0: none)", c->timeout);
    if (c->virtual_count < MG_MCTS_VC_DYNAMIC || c->virtual_count > MG_MCTS_VC_NONE)
        BAD("mcts: virtual_count %d is not dynamic (0), static (1) or none (2)", c->virtual_count);
    /* Bounds keep the virtual counts of a batch (at most 2 * batch_size paths) within 32 bits. */
    if (c->n_min < 0 || c->n_max < c->n_min || c->n_max > 10000)
        BAD("mcts: need 0 <= n_min <= n_max <= 10000, got n_min %d, n_max %d", c->n_min, c->n_max);
    if (c->virtual_loss < 0 || c->virtual_loss > 10000)
        BAD("mcts: virtual_loss %d is not in [0, 10000]", c->virtual_loss);
    /* c_base > 0 selects AlphaZero's c(s), 0 the constant c_puct; NaN, a negative or an infinite
     * c_base is neither (NaN used to fall through to c_puct silently) */
    if (!(c->c_base >= 0) || !isfinite(c->c_base))
        BAD("mcts: c_base %g must be a finite number > 0 (AlphaZero's c(s)), or 0 for the constant c_puct",
            c->c_base);
    if (!isfinite(c->c_init) || !(c->c_init >= 0))
        BAD("mcts: c_init %g must be finite and >= 0", c->c_init);
    if (!isfinite(c->c_puct) || !(c->c_puct >= 0))
        BAD("mcts: c_puct %g must be finite and >= 0", c->c_puct);
    if (c->prior != MG_MCTS_PRIOR_MAV && c->prior != MG_MCTS_PRIOR_POLICY)
        BAD("mcts: prior %d is neither mav (0) nor policy (1)", c->prior);
    if (c->k < 1)
        BAD("mcts: k %d must be >= 1", c->k);
    if (!(c->eps >= 0 && c->eps <= 1))
        BAD("mcts: eps %g is not in [0, 1]", c->eps);
    if (c->num_tau < 1 || c->num_tau > MG_MCTS_MAX_TAU_STEPS)
        BAD("mcts: num_tau %d is not in [1, %d]", c->num_tau, MG_MCTS_MAX_TAU_STEPS);
    for (int i = 0; i < c->num_tau; i++) {
        if (!(c->tau[i] > 0) || !isfinite(c->tau[i]))
            BAD("mcts: tau[%d] = %g must be a positive number", i, c->tau[i]);
        if (i > 0 && c->tau_from_ply[i] <= c->tau_from_ply[i - 1])
            BAD("mcts: tau schedule plies must increase (step %d: ply %d after %d)", i, c->tau_from_ply[i],
                c->tau_from_ply[i - 1]);
    }
    if (!isnan(c->fpu) && !(c->fpu >= -1 && c->fpu <= 1))
        BAD("mcts: fpu %g is not in [-1, 1] (or NaN for automatic)", c->fpu);
    if (c->invalid != MG_MCTS_INVALID_LOSS && c->invalid != MG_MCTS_INVALID_EXCLUDE)
        BAD("mcts: invalid %d is not 0 (loss) or 1 (exclude)", c->invalid);
    if (!(c->dirichlet_alpha >= 0) || !isfinite(c->dirichlet_alpha))
        BAD("mcts: dirichlet_alpha %g must be a number >= 0 (0: no root noise)", c->dirichlet_alpha);
    if (!(c->dirichlet_frac >= 0 && c->dirichlet_frac <= 1))
        BAD("mcts: dirichlet_frac %g is not in [0, 1]", c->dirichlet_frac);
    return MG_OK;
#undef BAD
}

/* ------------------------------------------------------------------------------------------ */
/* Create / free                                                                               */

/* Virtual counts of the pair at depth d above the leaf (tabulated in m->vtab at creation). */
static uint32_t vcount(const mg_mcts_config *c, int d)
{
    switch (c->virtual_count) {
    case MG_MCTS_VC_DYNAMIC: {
        uint32_t x = d >= 31 ? 0u : (uint32_t)c->n_max >> d;
        return x < (uint32_t)c->n_min ? (uint32_t)c->n_min : x;
    }
    case MG_MCTS_VC_STATIC:
        return (uint32_t)c->virtual_loss;
    default:
        return 0;
    }
}

/* AlphaZero's log((1 + n + c_base) / c_base), finite for every finite c_base > 0: below about 1e-290 the
 * quotient overflows to inf (c_base 5e-324: (1 + n) / c_base > DBL_MAX), the difference of the logs does not
 * (log(1 + n) + 744.4).  The quotient's log is kept where it is finite, so that searches with every other
 * c_base are unchanged to the last bit. */
double mg_mcts_c_base_log(double c_base, double n)
{
    double q = (1.0 + n + c_base) / c_base;
    return isfinite(q) ? log(q) : log(1.0 + n + c_base) - log(c_base);
}

/* c(N) * sqrt(N) of the PUCT exploration term. */
static double cscale(const mg_mcts_config *c, double n)
{
    double cn = c->c_base > 0 ? mg_mcts_c_base_log(c->c_base, n) + c->c_init : c->c_puct;
    return cn * sqrt(n);
}

void mg_mcts_free(mg_mcts *m)
{
    if (!m)
        return;
    mcts_arena_free(&m->a);
    mcts_arena_free(&m->spare);
    free(m->root_state);
    free(m->slots);
    free(m->states);
    free(m->legal);
    free(m->values);
    free(m->policy);
    free(m->rmoves);
    free(m->rtext);
    free(m->reqs);
    free(m->res);
    free(m->order);
    free(m->req_slot);
    free(m->tmp_idx);
    free(m->tmp_prior);
    free(m);
}

/* Batch buffers for n leaf requests (and 2n selection slots).  They are sized by the batch a search
 * can actually form, min(batch_size, num_simulations), not by batch_size alone: a batch size of
 * 65536 for a 100-simulation search allocates for 100 leaves (it used to allocate about 800 MB).
 * Grown between batches only (no request is out), so nothing in them needs to be kept. */
#define MCTS_BATCH0 64
static int batch_reserve(mg_mcts *m, int n)
{
    if (n <= m->nreq_cap)
        return MG_OK;
    mcts_slot *slots = malloc((size_t)2 * (size_t)n * sizeof *slots);
    unsigned char *states = calloc((size_t)n, m->ss);
    int32_t *legal = malloc((size_t)n * MG_MAX_MOVES * sizeof *legal);
    float *values = malloc((size_t)n * MG_MAX_MOVES * sizeof *values);
    float *policy = malloc((size_t)n * MG_MAX_MOVES * sizeof *policy);
    mg_eval_request *reqs = calloc((size_t)n, sizeof *reqs);
    mg_eval_result *res = calloc((size_t)n, sizeof *res);
    int *order = malloc((size_t)n * sizeof *order);
    int *req_slot = malloc((size_t)n * sizeof *req_slot);
    mcts_move *rmoves = mcts_tracking(m) ? malloc((size_t)n * MG_MAX_MOVES * sizeof *rmoves) : NULL;
    char *rtext = mcts_tracking(m) ? malloc((size_t)n * MG_MAX_TEXT) : NULL;
    if (!slots || !states || !legal || !values || !policy || !reqs || !res || !order || !req_slot ||
        (mcts_tracking(m) && (!rmoves || !rtext))) {
        free(slots), free(states), free(legal), free(values), free(policy), free(reqs), free(res);
        free(order), free(req_slot), free(rmoves), free(rtext);
        return MG_ERR;
    }
    free(m->slots), free(m->states), free(m->legal), free(m->values), free(m->policy), free(m->reqs);
    free(m->res), free(m->order), free(m->req_slot), free(m->rmoves), free(m->rtext);
    m->slots = slots, m->states = states, m->legal = legal, m->values = values, m->policy = policy;
    m->reqs = reqs, m->res = res, m->order = order, m->req_slot = req_slot, m->rmoves = rmoves, m->rtext = rtext;
    m->nreq_cap = n;
    m->nslots_cap = 2 * n;
    for (int i = 0; i < n; i++) {
        mg_eval_result *r = &m->res[i];
        r->values = m->values + (size_t)i * MG_MAX_MOVES;
        r->policy = m->policy + (size_t)i * MG_MAX_MOVES;
        if (mcts_tracking(m)) {
            r->moves = m->rmoves + (size_t)i * MG_MAX_MOVES;
            r->text = m->rtext + (size_t)i * MG_MAX_TEXT;
            r->text_cap = MG_MAX_TEXT;
        }
    }
    return MG_OK;
}

mg_mcts *mg_mcts_create(const mg_game *g, const mg_mcts_config *cfg, char *err, size_t errlen)
{
    mg_mcts_config def;
    if (!cfg) {
        mg_mcts_config_default(&def);
        cfg = &def;
    }
    if (mg_mcts_config_check(cfg, err, errlen) != MG_OK)
        return NULL;
    if (cfg->mode == MG_EVAL_ENGINE && !g) {
        snprintf(err, errlen, "mcts: engine mode needs a game");
        return NULL;
    }
    if (g && (g->state_size > MG_MAX_STATE || g->max_moves > MG_MAX_MOVES)) {
        snprintf(err, errlen, "mcts: game %s exceeds MG_MAX_STATE or MG_MAX_MOVES", g->name);
        return NULL;
    }
    mg_mcts *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "mcts: out of memory");
        return NULL;
    }
    m->g = g;
    m->cfg = *cfg;
    m->mode = cfg->mode == MG_EVAL_STATE_TRACKING ? &mcts_tracking_mode : &mcts_engine_mode;
    m->ss = g ? g->state_size : 1;
    m->root_state = calloc(1, m->ss);
    m->tmp_idx = malloc(MG_MAX_MOVES * sizeof *m->tmp_idx);
    m->tmp_prior = malloc(MG_MAX_MOVES * sizeof *m->tmp_prior);
    /* the batch buffers start small; each search grows them to the batch it can actually form */
    int ok = m->root_state && m->tmp_idx && m->tmp_prior &&
             batch_reserve(m, cfg->batch_size < MCTS_BATCH0 ? cfg->batch_size : MCTS_BATCH0) == MG_OK;
    if (ok)
        ok = mcts_arena_reserve_nodes(&m->a, 1024) == MG_OK && mcts_arena_reserve_edges(&m->a, 4096, mcts_tracking(m)) == MG_OK;
    if (!ok) {
        mg_mcts_free(m);
        snprintf(err, errlen, "mcts: out of memory");
        return NULL;
    }
    mg_rng_seed(&m->rng, cfg->seed);
    for (int i = 0; i < MCTS_CTAB; i++)
        m->ctab[i] = cscale(&m->cfg, (double)i);
    for (int d = 0; d <= MG_MCTS_MAX_DEPTH; d++)
        m->vtab[d] = vcount(&m->cfg, d), m->vtabd[d] = (double)m->vtab[d];
    for (int i = 0; i < MG_MAX_MOVES; i++)
        m->nans[i] = NAN;
    return m;
}

const mg_mcts_config *mg_mcts_get_config(const mg_mcts *m) { return &m->cfg; }

/* ------------------------------------------------------------------------------------------ */
/* Roots and re-rooting (the modes' parts: m->mode)                                            */

int mg_mcts_set_root(mg_mcts *m, const void *state, int ply, char *err, size_t errlen)
{
    if (mcts_tracking(m)) {
        snprintf(err, errlen, "mcts: set_root needs engine mode (this search tracks states: use set_root_text)");
        return MG_ERR;
    }
    mcts_engine_set_root(m, state, ply);
    return MG_OK;
}

int mg_mcts_set_root_text(mg_mcts *m, const char *text, int to_move, int ply, char *err, size_t errlen)
{
    if (!mcts_tracking(m)) {
        snprintf(err, errlen, "mcts: set_root_text needs state-tracking mode (this search uses the engine)");
        return MG_ERR;
    }
    return mcts_tracking_set_root(m, text, to_move, ply, err, errlen);
}

/* A re-rooted tree gets fresh root noise (a tree that restarted at an unexpanded root gets none yet). */
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
    if (mcts_engine_advance(m, action, err, errlen) != MG_OK)
        return MG_ERR;
    mg_az_root_noise(m);
    return MG_OK;
}

int mg_mcts_advance_move(mg_mcts *m, const char *move, char *err, size_t errlen)
{
    if (!m->has_root) {
        snprintf(err, errlen, "mcts: no root position set");
        return MG_ERR;
    }
    if (m->mode->advance_move(m, move, err, errlen) != MG_OK)
        return MG_ERR;
    mg_az_root_noise(m);
    return MG_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Selection                                                                                   */

/* Mark edge e dead (its child is hallucinated): never selected again.  Its cached Q becomes NaN, so
 * that selection's score for it is NaN (see pick_edge); backup never passes it again. */
static void kill_edge(mcts_edge *e)
{
    e->dead = 1;
    e->q = NAN;
}

/* The PUCT choice among the node's edges; -1 if all children are hallucinated.  Ties (equal scores)
 * are broken uniformly by reservoir sampling: one draw per tie, in edge order.  Without static
 * virtual losses Q is the edge's cached mean (q), so the loop divides once per edge. */
static int64_t pick_edge(mg_mcts *m, const mcts_node *nd, uint32_t pn, uint32_t pv)
{
    const mcts_edge *e = m->a.edges + nd->first_edge;
    const uint32_t ne = nd->num_edges;
    uint64_t nt = (uint64_t)pn + pv;
    if (nt < 1)
        nt = 1;
    const double cs = nt < MCTS_CTAB ? m->ctab[nt] : cscale(&m->cfg, (double)nt);
    double best = -INFINITY;
    const mcts_edge *bx = NULL;
    uint32_t ties = 0;
    mg_rng rng = m->rng; /* a local copy stays in registers: the loop's stores cannot alias it */
    /* One comparison (s >= best, false for NaN as both of s > best, s == best are) for the common
     * edge that scores below the best; a pointer loop. */
#define MCTS_PICK(SKIP, QEXPR)                                                                 \
    for (const mcts_edge *x = e, *end = e + ne; x != end; x++) {                               \
        if (SKIP)                                                                              \
            continue;                                                                          \
        double s = (QEXPR) + cs * (double)x->prior / x->den; /* den: 1 + n + v, exact */       \
        if (__builtin_expect(s >= best, 0)) {                                                  \
            if (s > best) {                                                                    \
                best = s;                                                                      \
                bx = x;                                                                        \
                ties = 1;                                                                      \
            } else {                                                                           \
                ties++;                                                                        \
                if (mg_rng_below(&rng, ties) == 0)                                             \
                    bx = x;                                                                    \
            }                                                                                  \
        }                                                                                      \
    }
    if (m->cfg.virtual_count == MG_MCTS_VC_STATIC) {
        MCTS_PICK(x->dead, x->den > 1.0 ? (x->w - (double)x->v) / (x->den - 1.0) : (double)x->q_init)
    } else {
        /* a dead edge's q is NaN (kill_edge): its score is NaN, which s >= best refuses, so the
         * loop needs no test of its own for it */
        MCTS_PICK(0, x->q)
    }
#undef MCTS_PICK
    m->rng = rng;
    return bx ? (int64_t)nd->first_edge + (bx - e) : -1;
}

/* Descend from the root.  Engine mode: the leaf state ends in `state` (state tracking: NULL).  ri: the
 * request the leaf would become (a new node's mode may fill its moves: sl->nlegal). */
static int select_leaf(mg_mcts *m, mcts_slot *sl, unsigned char *state, int ri)
{
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    const mg_game *g = m->g;
    const int engine = !mcts_tracking(m);
    int32_t node = 0;
    uint32_t pn = m->root_n, pv = m->root_v;
    int depth = 0;
    sl->nlegal = -1;
    if (engine)
        mg_state_copy(g, state, m->root_state);
    for (;;) {
        mcts_node *nd = &m->a.nodes[node];
        sl->nodes[depth] = node;
        sl->len = depth;
        if (nd->flags & NF_TERMINAL)
            return SEL_TERMINAL;
        if (nd->flags & NF_PENDING)
            return SEL_COLLISION;
        if (!(nd->flags & NF_EXPANDED))
            return SEL_LEAF;
        if (nd->flags & NF_HALLU)
            return depth == 0 ? SEL_ROOT_DEAD : SEL_DEAD;
        if (depth == MG_MCTS_MAX_DEPTH)
            return SEL_CUTOFF;
        int64_t ei = pick_edge(m, nd, pn, pv);
        if (ei < 0) {
            nd->flags |= NF_HALLU;
            if (depth > 0)
                kill_edge(&m->a.edges[sl->edges[depth - 1]]);
            return depth == 0 ? SEL_ROOT_DEAD : SEL_MARKED;
        }
        mcts_edge *e = &m->a.edges[ei];
        sl->edges[depth] = (uint32_t)ei;
        sl->actions[depth] = e->action;
        depth++;
        if (engine)
            g->make(state, e->action, undo);
        if (e->child < 0) {
            /* Capacity for one new node per simulation was reserved at the start of the search. */
            int32_t c = (int32_t)m->a.nodes_len++;
            sl->nlegal = m->mode->new_node(m, nd, state, &m->a.nodes[c], ri);
            e = &m->a.edges[ei];
            e->child = c;
        }
        pn = e->n;
        pv = e->v;
        node = e->child;
    }
}

static void add_virtual(mg_mcts *m, const mcts_slot *sl, int sign)
{
    const int L = sl->len;
    const uint32_t *vt = m->vtab + L; /* vt[-1 - i]: the pair of step i, depth L - 1 - i above the leaf */
    const double *vd = m->vtabd + L;  /* the same as doubles, for den */
    mcts_edge *edges = m->a.edges;
    if (sign > 0) {
        for (int i = 0; i < L; i++) {
            mcts_edge *e = &edges[sl->edges[i]];
            e->v += vt[-1 - i];
            e->den += vd[-1 - i];
        }
        m->root_v += vt[0];
    } else {
        for (int i = 0; i < L; i++) {
            mcts_edge *e = &edges[sl->edges[i]];
            e->v -= vt[-1 - i];
            e->den -= vd[-1 - i];
        }
        m->root_v -= vt[0];
    }
}

/* Back up `v` (leaf mover's view, [-1, 1]) along the slot's path. */
static void backup(mg_mcts *m, const mcts_slot *sl, double v)
{
    int L = sl->len;
    int leaf_mover = m->a.nodes[sl->nodes[L]].to_move;
    for (int i = L - 1; i >= 0; i--) {
        mcts_edge *e = &m->a.edges[sl->edges[i]];
        int mover = m->a.nodes[sl->nodes[i]].to_move;
        e->n++;
        e->den += 1.0;
        e->w += mover == leaf_mover ? v : -v;
        e->q = e->w / (double)e->n;
    }
    m->root_n++;
    m->root_w += m->a.nodes[0].to_move == leaf_mover ? v : -v;
    m->stats.completed++;
}

/* ------------------------------------------------------------------------------------------ */
/* Expansion                                                                                   */

static double tau_at(const mg_mcts *m, int ply)
{
    double t = m->cfg.tau[0];
    for (int i = 1; i < m->cfg.num_tau; i++)
        if (ply >= m->cfg.tau_from_ply[i])
            t = m->cfg.tau[i];
    return t;
}

/* The priors of compute_prior, for the n new edges: prior[i] = base + add[i] (kind PRIOR_SUM, every action in the
 * top k), or prior[i] = base plus add[s] for the k actions top[s] (PRIOR_TOP), or prior[i] = full[i] (PRIOR_FULL:
 * the policy prior, or uniform).  Each float sum is the one P[i] = base; P[i] += add once gave. */
enum { PRIOR_FULL, PRIOR_SUM, PRIOR_TOP };
typedef struct mcts_prior {
    int kind;
    int k;             /* PRIOR_TOP: the number of top actions */
    float base;
    const float *add;  /* PRIOR_SUM: n entries; PRIOR_TOP: k entries, for top[0..k) */
    const float *full; /* PRIOR_FULL */
    const int32_t *top;
} mcts_prior;

/* Priors for n actions from values (NaN = unknown) or policy into *pr (arrays in m->tmp_prior, m->tmp_idx).
 * The MAV prior reads scan_values' answer: the nv indices of the values that are not NaN in m->tmp_idx
 * (increasing), their least and greatest value vlo, vhi.  MG_ERR if the policy is malformed. */
static int compute_prior(mg_mcts *m, int n, const float *values, const float *policy, int ply, int nv, float vlo,
                         float vhi, mcts_prior *pr)
{
    float *P = m->tmp_prior;
    double eps = m->cfg.eps;
    double uni = 1.0 / n;
    *pr = (mcts_prior){.kind = PRIOR_FULL, .full = P, .add = P, .top = m->tmp_idx};
    if (m->cfg.prior == MG_MCTS_PRIOR_POLICY) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            float p = policy[i];
            if (isnan(p))
                continue;
            if (!(p >= 0) || !isfinite(p))
                return MG_ERR;
            sum += p;
        }
        for (int i = 0; i < n; i++) {
            double g = sum > 0 ? (isnan(policy[i]) ? 0.0 : policy[i] / sum) : uni;
            P[i] = (float)((1 - eps) * g + eps * uni);
        }
        return MG_OK;
    }
    /* MAV prior: top-k by value among the actions that have one. */
    int32_t *top = m->tmp_idx;
    const int nk = nv;
    if (nk == 0) {
        for (int i = 0; i < n; i++)
            P[i] = (float)uni;
        return MG_OK;
    }
    /* The k-th best value is the threshold; every action at or above it is in the top k
     * (ties with the k-th value included). */
    float thr, qmax = -INFINITY;
    const int all = m->cfg.k >= nk || vlo == vhi; /* all in the top k (equal values all tie with the k-th) */
    if (all) {
        thr = vlo;
        qmax = vhi;
    } else {
        float best[MG_MAX_MOVES]; /* descending, at most k entries */
        int kk = m->cfg.k, cnt = 0;
        for (int i = 0; i < kk; i++)
            best[i] = -INFINITY; /* never read before written; gcc -march=x86-64-v2 cannot tell */
        for (int s = 0; s < nk; s++) {
            float v = values[top[s]];
            if (cnt == kk && v <= best[kk - 1])
                continue;
            int j = cnt < kk ? cnt++ : kk - 1;
            while (j > 0 && best[j - 1] < v) {
                best[j] = best[j - 1];
                j--;
            }
            best[j] = v;
        }
        thr = best[kk - 1];
        qmax = best[0];
    }
    const double tau = tau_at(m, ply);
    double z = 0;
    double ex[MG_MAX_MOVES];
    int k = 0;
    if (all && nk == n) { /* every action has a value (top[k] == k), at or above thr = vlo */
        for (; k < nk; k++) {
            double d = values[k] - qmax;
            ex[k] = d == 0 ? 1.0 : exp(d / tau);
            z += ex[k];
        }
    } else if (all) { /* every value is at or above thr = vlo: no test, no compaction */
        for (; k < nk; k++) {
            double d = values[top[k]] - qmax;
            ex[k] = d == 0 ? 1.0 : exp(d / tau);
            z += ex[k];
        }
    } else {
        for (int s = 0; s < nk; s++) {
            float v = values[top[s]];
            if (v >= thr) {
                double d = v - qmax;
                top[k] = top[s];
                ex[k] = d == 0 ? 1.0 : exp(d / tau);
                z += ex[k];
                k++;
            }
        }
    }
    for (int s = 0; s < k; s++)
        P[s] = (float)((1 - eps) * ex[s] / z);
    pr->kind = k == n ? PRIOR_SUM : PRIOR_TOP; /* k == n: every action has a value, in the top k: top[s] == s */
    pr->k = k;
    pr->base = (float)(eps * uni);
    pr->add = P;
    pr->top = top;
    return MG_OK;
}

/* A probability or NaN: isnan(x) || (0 <= x <= 1), with two comparisons (both are false for NaN). */
static int valid_prob(float x) { return !(x < 0.0f) & !(x > 1.0f); }

/* The indices of the values of vals[0..n) that are not NaN into top (increasing), their least and
 * greatest value into *lo, *hi (INFINITY, -INFINITY if none); returns their number, or -1 if a value
 * is neither a probability nor NaN (when `check` is set). */
static inline int scan_values(const float *vals, int n, int32_t *top, float *lo, float *hi, int check)
{
    int nv = 0, i = 0;
    float vlo = INFINITY, vhi = -INFINITY;
#define MCTS_SCAN_ONE(I)                                                                       \
    do {                                                                                       \
        float x = vals[I];                                                                     \
        if (__builtin_expect(x >= 0.0f && x <= 1.0f, 1)) { /* a probability (so not NaN) */    \
            top[nv++] = (I);                                                                   \
            vlo = x < vlo ? x : vlo;                                                           \
            vhi = x > vhi ? x : vhi;                                                           \
        } else if (check && !isnan(x)) {                                                       \
            return -1;                                                                         \
        }                                                                                      \
    } while (0)
#if defined(__SSE2__)
    /* Four values at a time: a group of four probabilities (the usual case) takes its indices, least
     * and greatest value in a few vector instructions; any other group goes through the scalar test.
     * The least and greatest value are the scalar loop's (only the sign of a zero could differ, and
     * every use of them, thr, qmax, fpu, the leaf value, gives the same result for -0 and +0). */
    if (n >= 4) {
        const __m128 zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f);
        __m128 mlo = _mm_set1_ps(INFINITY), mhi = _mm_set1_ps(-INFINITY);
        const __m128i step = _mm_setr_epi32(0, 1, 2, 3);
        for (; i + 4 <= n; i += 4) {
            __m128 x = _mm_loadu_ps(vals + i);
            __m128 ok = _mm_and_ps(_mm_cmpge_ps(x, zero), _mm_cmple_ps(x, one));
            if (__builtin_expect(_mm_movemask_ps(ok) == 15, 1)) {
                _mm_storeu_si128((__m128i *)(void *)(top + nv), _mm_add_epi32(_mm_set1_epi32(i), step));
                nv += 4;
                mlo = _mm_min_ps(mlo, x);
                mhi = _mm_max_ps(mhi, x);
            } else {
                for (int j = i; j < i + 4; j++)
                    MCTS_SCAN_ONE(j);
            }
        }
        mlo = _mm_min_ps(mlo, _mm_movehl_ps(mlo, mlo));
        mhi = _mm_max_ps(mhi, _mm_movehl_ps(mhi, mhi));
        mlo = _mm_min_ss(mlo, _mm_shuffle_ps(mlo, mlo, 1));
        mhi = _mm_max_ss(mhi, _mm_shuffle_ps(mhi, mhi, 1));
        float a = _mm_cvtss_f32(mlo), b = _mm_cvtss_f32(mhi);
        vlo = a < vlo ? a : vlo;
        vhi = b > vhi ? b : vhi;
    }
#endif
    for (; i < n; i++)
        MCTS_SCAN_ONE(i);
#undef MCTS_SCAN_ONE
    *lo = vlo;
    *hi = vhi;
    return nv;
}

/* Sets the edges of expand_leaf's loop four at a time, as its scalar loop would (the same float and
 * double operations, in vector lanes: the same bits): e[i] for i < the returned count (a multiple of
 * four), the rest left to the scalar loop; PRIOR_TOP's additions for the top actions come after both.
 * Each edge is four stores: {q, den = 1}, {n = v = 0, prior, dead = 0}, {w = 0, action, child = -1},
 * {q_init, value}, for the 56-byte layout of mcts_tree.h (checked at compile time: for any other layout it
 * sets none, and the scalar loop does them all). */
#define MCTS_EDGE_56                                                                                   \
    (sizeof(mcts_edge) == 56 && offsetof(mcts_edge, n) == 16 && offsetof(mcts_edge, v) == 20 &&         \
     offsetof(mcts_edge, prior) == 24 && offsetof(mcts_edge, dead) == 28 && offsetof(mcts_edge, w) == 32 && \
     offsetof(mcts_edge, action) == 40 && offsetof(mcts_edge, child) == 44 &&                           \
     offsetof(mcts_edge, q_init) == 48 && offsetof(mcts_edge, value) == 52)
static int set_edges4(mcts_edge *e, int nk, const float *vals, const mcts_prior *pr, const int32_t *legal,
                      float fpu)
{
    int i = 0;
#if defined(__SSE2__)
    if (!MCTS_EDGE_56)
        return 0;
    const __m128 fpu4 = _mm_set1_ps(fpu), base4 = _mm_set1_ps(pr->base), zs = _mm_setzero_ps();
    const __m128d two = _mm_set1_pd(2.0), one = _mm_set1_pd(1.0), zd = _mm_setzero_pd();
    const __m128 neg1 = _mm_castsi128_ps(_mm_set1_epi32(-1));
    for (; i + 4 <= nk; i += 4) {
        __m128 v = _mm_loadu_ps(vals + i);
        /* qi = isnan(v) ? (float)fpu : (float)(2.0 * v - 1.0) */
        __m128d dlo = _mm_sub_pd(_mm_mul_pd(two, _mm_cvtps_pd(v)), one);
        __m128d dhi = _mm_sub_pd(_mm_mul_pd(two, _mm_cvtps_pd(_mm_movehl_ps(v, v))), one);
        __m128 q = _mm_movelh_ps(_mm_cvtpd_ps(dlo), _mm_cvtpd_ps(dhi));
        __m128 nan = _mm_cmpunord_ps(v, v);
        q = _mm_or_ps(_mm_and_ps(nan, fpu4), _mm_andnot_ps(nan, q));
        __m128 p = pr->kind == PRIOR_SUM ? _mm_add_ps(base4, _mm_loadu_ps(pr->add + i))
                   : pr->kind == PRIOR_TOP ? base4
                                           : _mm_loadu_ps(pr->full + i);
        __m128 a = legal ? _mm_castsi128_ps(_mm_loadu_si128((const __m128i *)(const void *)(legal + i))) : zs;
        __m128d qd[2] = {_mm_cvtps_pd(q), _mm_cvtps_pd(_mm_movehl_ps(q, q))};
        __m128d pz[2] = {_mm_castps_pd(_mm_unpacklo_ps(p, zs)), _mm_castps_pd(_mm_unpackhi_ps(p, zs))};
        __m128 ac[2] = {_mm_unpacklo_ps(a, neg1), _mm_unpackhi_ps(a, neg1)};
        __m128 qv[2] = {_mm_unpacklo_ps(q, v), _mm_unpackhi_ps(q, v)};
        for (int h = 0; h < 2; h++) {
            char *e0 = (char *)(void *)&e[i + 2 * h], *e1 = (char *)(void *)&e[i + 2 * h + 1];
            __m128d acd = _mm_castps_pd(ac[h]);
            _mm_storeu_pd((double *)(void *)e0, _mm_unpacklo_pd(qd[h], one)); /* q, den = 1 */
            _mm_storeu_pd((double *)(void *)(e0 + 16), _mm_unpacklo_pd(zd, pz[h]));
            _mm_storeu_pd((double *)(void *)(e0 + 32), _mm_unpacklo_pd(zd, acd));
            _mm_storel_pi((__m64 *)(void *)(e0 + 48), qv[h]);
            _mm_storeu_pd((double *)(void *)e1, _mm_unpackhi_pd(qd[h], one));
            _mm_storeu_pd((double *)(void *)(e1 + 16), _mm_unpackhi_pd(zd, pz[h]));
            _mm_storeu_pd((double *)(void *)(e1 + 32), _mm_unpackhi_pd(zd, acd));
            _mm_storeh_pi((__m64 *)(void *)(e1 + 48), qv[h]);
        }
    }
#else
    (void)e, (void)nk, (void)vals, (void)pr, (void)legal, (void)fpu;
#endif
    return i;
}
#undef MCTS_EDGE_56

/* Expand the slot's leaf from result r; returns APPLY_* and the leaf value (mover's view) in *v.
 * Engine mode keeps every answer in request order (the mode has no keep_moves), so this reads
 * the answer's values and policy in place and sets the edges' actions from the request's legal list;
 * state tracking gathers the kept answers first. */
static int expand_leaf(mg_mcts *m, const mcts_slot *sl, const mg_eval_result *r, double *v)
{
    int32_t leaf = sl->nodes[sl->len];
    int ply = m->root_ply + sl->len;
    int n = r->num_moves;
    if (!isnan(r->value) && !(r->value >= 0 && r->value <= 1))
        return APPLY_INVALID;
    const mcts_mode *mode = m->mode;
    const int tracking = mcts_tracking(m);
    const int in_place = mode->keep_moves == NULL; /* engine mode: every answer, in request order */
    size_t tlen = 0;
    int result = MG_ONGOING;
    if (mode->check_answer(m, leaf, r, &n, &result, &tlen) != APPLY_OK)
        return APPLY_INVALID;
    /* Every value must be a probability or NaN; [vlo, vhi]: the range of the kept answers' values, the
     * nv that are not NaN indexed in m->tmp_idx (for compute_prior). */
    float vbuf[MG_MAX_MOVES], pbuf[MG_MAX_MOVES];
    const float *vals = r->values, *pols = r->policy; /* the kept answers' values and policy, contiguous */
    int32_t keep_copy[MG_MAX_MOVES]; /* state tracking: their indices (compute_prior reuses tmp_idx) */
    int nk = n, nv;
    float vlo, vhi;
    if (in_place) {
        nv = scan_values(vals, n, m->tmp_idx, &vlo, &vhi, 1);
        if (nv < 0)
            return APPLY_INVALID;
    } else {
        for (int i = 0; i < n; i++)
            if (!valid_prob(r->values[i]))
                return APPLY_INVALID;
        nk = mode->keep_moves(r, n, keep_copy);
        if (nk < 0)
            return APPLY_INVALID;
        for (int s = 0; s < nk; s++) {
            vbuf[s] = r->values[keep_copy[s]];
            pbuf[s] = r->policy[keep_copy[s]];
        }
        vals = vbuf, pols = pbuf;
        nv = scan_values(vals, nk, m->tmp_idx, &vlo, &vhi, 0);
    }
    const double vmax = vhi, vmin = vlo;
    int terminal, ar = mode->store(m, leaf, r, tlen, result, &terminal, v);
    if (ar != APPLY_OK || terminal)
        return ar;
    double val;
    if (!isnan(r->value))
        val = r->value;
    else if (vmax > -INFINITY)
        val = vmax;
    else
        return APPLY_INVALID; /* no value at all */
    mcts_prior pr = {.kind = PRIOR_FULL};
    if (compute_prior(m, nk, vals, pols, ply, nv, vlo, vhi, &pr) != MG_OK)
        return APPLY_INVALID;
    if (mcts_arena_reserve_edges(&m->a, m->a.edges_len + (size_t)nk, tracking) != MG_OK)
        return APPLY_NOMEM;
    const double fpu = !isnan(m->cfg.fpu) ? m->cfg.fpu : (vmin < INFINITY ? 2.0 * vmin - 1.0 : 0.0);
    const uint32_t first = (uint32_t)m->a.edges_len;
    /* engine: the request's legal actions, whose order the answer keeps */
    const int32_t *legal = in_place ? m->reqs[r - m->res].legal : NULL;
    mcts_edge *e = &m->a.edges[first];
    /* One loop per kind of prior and source of actions (the choices hoisted out of the loop). */
    const int i0 = set_edges4(e, nk, vals, &pr, legal, (float)fpu); /* edges [0, i0) set */
#define MCTS_SET_EDGES(PRIOR, ACTION)                                                                   \
    for (int i = i0; i < nk; i++) {                                                                     \
        float qi = isnan(vals[i]) ? (float)fpu : (float)(2.0 * vals[i] - 1.0);                          \
        e[i] = (mcts_edge){.q = (double)qi, .den = 1.0, .n = 0, .v = 0, .prior = (PRIOR), .dead = 0, .w = 0, \
                           .action = (ACTION), .child = -1, .q_init = qi, .value = vals[i]};             \
    }
#define MCTS_SET_EDGES_BY(ACTION)                                                                       \
    if (pr.kind == PRIOR_SUM) {                                                                         \
        MCTS_SET_EDGES(pr.base + pr.add[i], ACTION)                                                     \
    } else if (pr.kind == PRIOR_TOP) {                                                                  \
        MCTS_SET_EDGES(pr.base, ACTION)                                                                 \
        for (int s = 0; s < pr.k; s++)                                                                  \
            e[pr.top[s]].prior += pr.add[s];                                                            \
    } else {                                                                                            \
        MCTS_SET_EDGES(pr.full[i], ACTION)                                                              \
    }
    if (legal) {
        MCTS_SET_EDGES_BY(legal[i])
    } else {
        MCTS_SET_EDGES_BY(0)
    }
#undef MCTS_SET_EDGES_BY
#undef MCTS_SET_EDGES
    if (!in_place)
        mode->set_moves(m, first, r, keep_copy, nk); /* the edges' indices and move strings */
    m->a.edges_len += (size_t)nk;
    mcts_node *nd = &m->a.nodes[leaf];
    nd->first_edge = first;
    nd->num_edges = (uint32_t)nk;
    nd->value = (float)(2.0 * val - 1.0);
    nd->flags = NF_EXPANDED;
    *v = nd->value;
    return APPLY_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Search                                                                                      */

static void prepare_request(mg_mcts *m, mcts_slot *sl, int ri)
{
    mg_eval_request *q = &m->reqs[ri];
    mg_eval_result *r = &m->res[ri];
    int32_t leaf = sl->nodes[sl->len];
    q->index = ri;
    q->mode = m->cfg.mode;
    q->to_move = m->a.nodes[leaf].to_move;
    q->ply = m->root_ply + sl->len;
    q->depth = sl->len;
    q->path = sl->actions;
    r->status = MG_EVAL_DROPPED;
    r->seq = ri;
    r->value = NAN;
    r->result = MG_ONGOING;
    m->mode->prepare(m, sl, ri);
}

/* Remove virtual counts (and pending marks) of every slot of an aborted batch. */
static void abort_batch(mg_mcts *m, int nslots)
{
    for (int s = 0; s < nslots; s++) {
        mcts_slot *sl = &m->slots[s];
        add_virtual(m, sl, -1);
        if (sl->req >= 0)
            m->a.nodes[sl->nodes[sl->len]].flags &= (uint8_t)~NF_PENDING;
    }
}

static void mark_hallucinated(mg_mcts *m, const mcts_slot *sl)
{
    kill_edge(&m->a.edges[sl->edges[sl->len - 1]]);
    mcts_node *nd = &m->a.nodes[sl->nodes[sl->len]];
    nd->flags = NF_EXPANDED | NF_HALLU;
    nd->num_edges = 0;
    nd->value = 1.0f; /* the mover into it loses: -1 from its parent's view */
    m->stats.invalid++;
}

int mg_mcts_search(mg_mcts *m, const mg_evaluator *ev, int num_simulations, char *err, size_t errlen)
{
    return mg_mcts_search_cancel(m, ev, num_simulations, NULL, err, errlen);
}

int mg_mcts_begin(mg_mcts *m, const mg_evaluator *ev, int num_simulations, char *err, size_t errlen)
{
    if (!m->has_root) {
        snprintf(err, errlen, "mcts: no root position set");
        return MG_ERR;
    }
    if (ev && !ev->evaluate) {
        snprintf(err, errlen, "mcts: no evaluator");
        return MG_ERR;
    }
    if (ev && !(ev->modes & (1u << m->cfg.mode))) {
        snprintf(err, errlen, "mcts: evaluator '%s' does not support %s mode", ev->name ? ev->name : "?",
                 m->mode->name);
        return MG_ERR;
    }
    if (num_simulations < 0) {
        snprintf(err, errlen, "mcts: num_simulations %d is negative", num_simulations);
        return MG_ERR;
    }
    mg_mcts_stats *S = &m->stats;
    int reused = S->reused_nodes;
    memset(S, 0, sizeof *S);
    S->reused_nodes = reused;
    m->s_t0 = mg_now_seconds();
    m->s_done = 0;
    m->s_total = num_simulations;
    m->s_npend = m->s_nslots = 0;
    m->s_stop = 1; /* until the buffers are in place */
    if (mcts_arena_reserve_nodes(&m->a, m->a.nodes_len + (size_t)num_simulations + 2) != MG_OK) {
        snprintf(err, errlen, "mcts: out of memory for %d simulations", num_simulations);
        return MG_ERR;
    }
    const int B = m->cfg.batch_size < num_simulations ? m->cfg.batch_size : (num_simulations > 0 ? num_simulations
                                                                                                 : 1);
    if (batch_reserve(m, B) != MG_OK) {
        snprintf(err, errlen, "mcts: out of memory for batches of %d leaves", B);
        return MG_ERR;
    }
    m->s_batch = B;
    m->s_stop = m->a.nodes[0].flags & NF_TERMINAL ? 1 : 0;
    return MG_OK;
}

int mg_mcts_gather(mg_mcts *m, const mg_eval_request **req, mg_eval_result **res)
{
    mg_mcts_stats *S = &m->stats;
    const int B = m->s_batch;
    const int tracking = mcts_tracking(m);
    m->s_npend = m->s_nslots = 0;
    while (!m->s_stop && m->s_done < m->s_total) {
        int npend = 0, nslots = 0, attempts = 0;
        int64_t before = m->s_done;
        while (npend < B && m->s_done + npend < m->s_total && attempts < 2 * B && nslots < m->nslots_cap) {
            attempts++;
            mcts_slot *sl = &m->slots[nslots];
            unsigned char *st = tracking ? NULL : m->states + (size_t)npend * m->ss;
            int r = select_leaf(m, sl, st, npend);
            if (sl->len > S->max_depth)
                S->max_depth = sl->len;
            if (r == SEL_LEAF) {
                int32_t leaf = sl->nodes[sl->len];
                if (m->mode->leaf_moves(m, st, npend, sl->nlegal) == 0) {
                    /* no move although not over: treat as a draw */
                    mcts_node_terminal(&m->a.nodes[leaf], MG_DRAW);
                    backup(m, sl, 0.0);
                    S->terminal_visits++;
                    m->s_done++;
                    continue;
                }
                m->a.nodes[leaf].flags |= NF_PENDING;
                add_virtual(m, sl, +1);
                sl->req = npend;
                m->req_slot[npend] = nslots;
                prepare_request(m, sl, npend);
                npend++;
                nslots++;
            } else if (r == SEL_COLLISION) {
                add_virtual(m, sl, +1);
                sl->req = -1;
                nslots++;
                S->collisions++;
            } else if (r == SEL_TERMINAL) {
                backup(m, sl, m->a.nodes[sl->nodes[sl->len]].value);
                S->terminal_visits++;
                m->s_done++;
            } else if (r == SEL_CUTOFF) {
                mcts_node *nd = &m->a.nodes[sl->nodes[sl->len]];
                nd->cutoffs++;
                backup(m, sl, nd->value);
                S->depth_cutoffs++;
                m->s_done++;
            } else if (r == SEL_ROOT_DEAD) {
                m->s_stop = 1;
                break;
            } else if (r == SEL_MARKED) {
                attempts--; /* progress (a node was marked for good): try again */
            }
        }
        if (npend > 0) {
            m->s_npend = npend;
            m->s_nslots = nslots;
            S->batches++;
            S->evaluations += npend;
            *req = m->reqs;
            *res = m->res;
            return npend;
        }
        if (m->s_done == before && !m->s_stop && attempts >= 2 * B)
            break; /* no progress possible (cannot happen with a consistent tree) */
    }
    return 0;
}

void mg_mcts_abort(mg_mcts *m)
{
    abort_batch(m, m->s_nslots);
    m->s_npend = m->s_nslots = 0;
    m->s_stop = 1;
}

int mg_mcts_scatter(mg_mcts *m, char *err, size_t errlen)
{
    mg_mcts_stats *S = &m->stats;
    const int npend = m->s_npend, nslots = m->s_nslots;
    int rc = MG_OK;
    /* Back up in arrival order (stable insertion sort on seq). */
    for (int i = 0; i < npend; i++) {
        int j = i;
        while (j > 0 && m->res[m->order[j - 1]].seq > m->res[i].seq) {
            m->order[j] = m->order[j - 1];
            j--;
        }
        m->order[j] = i;
    }
    for (int oi = 0; oi < npend; oi++) {
        int ri = m->order[oi];
        mcts_slot *sl = &m->slots[m->req_slot[ri]];
        mg_eval_result *r = &m->res[ri];
        mcts_node *nd = &m->a.nodes[sl->nodes[sl->len]];
        nd->flags &= (uint8_t)~NF_PENDING;
        add_virtual(m, sl, -1);
        m->s_done++;
        if (r->status == MG_EVAL_OK) {
            double v = 0;
            int ar = expand_leaf(m, sl, r, &v);
            if (ar == APPLY_NOMEM) {
                /* Leave the leaf unevaluated; finish removing the batch's counts. */
                snprintf(err, errlen, "mcts: out of memory while expanding");
                rc = MG_ERR;
                for (int o2 = oi + 1; o2 < npend; o2++) {
                    mcts_slot *s2 = &m->slots[m->req_slot[m->order[o2]]];
                    m->a.nodes[s2->nodes[s2->len]].flags &= (uint8_t)~NF_PENDING;
                    add_virtual(m, s2, -1);
                }
                break;
            }
            if (ar == APPLY_OK) {
                if (sl->len == 0)
                    mg_az_root_noise(m);
                backup(m, sl, v);
                continue;
            }
        }
        if (r->status == MG_EVAL_DROPPED) {
            S->dropped++;
            continue;
        }
        /* Invalid output (declared, or found malformed). */
        if (sl->len == 0) {
            S->invalid++; /* the root stays unevaluated: a later batch asks again */
            S->dropped++;
            continue;
        }
        mark_hallucinated(m, sl);
        if (m->cfg.invalid == MG_MCTS_INVALID_EXCLUDE)
            S->dropped++; /* minus infinity: excluded, nothing backed up */
        else {
            backup(m, sl, 1.0);
            m->a.edges[sl->edges[sl->len - 1]].q = NAN; /* dead: backup cached W / N */
        }
    }
    for (int s = 0; s < nslots; s++)
        if (m->slots[s].req < 0)
            add_virtual(m, &m->slots[s], -1);
    m->s_npend = m->s_nslots = 0;
    if (rc != MG_OK)
        m->s_stop = 1;
    return rc;
}

void mg_mcts_finish(mg_mcts *m)
{
    mg_mcts_stats *S = &m->stats;
    S->simulations = m->s_done;
    S->nodes = (int)m->a.nodes_len;
    S->edges = (int64_t)m->a.edges_len;
    S->elapsed = mg_now_seconds() - m->s_t0;
}

int mg_mcts_search_cancel(mg_mcts *m, const mg_evaluator *ev, int num_simulations, mg_cancel *cancel, char *err,
                          size_t errlen)
{
    if (!ev) {
        snprintf(err, errlen, "mcts: no evaluator");
        return MG_ERR;
    }
    if (mg_mcts_begin(m, ev, num_simulations, err, errlen) != MG_OK)
        return MG_ERR;
    mg_mcts_stats *S = &m->stats;
    int rc = MG_OK;
    for (int batches = 0;; batches++) {
        /* between batches (no pending leaves, no virtual counts), after the first one: a
         * search stopped by a time budget always has a move to report */
        if (batches && mg_cancel_check(cancel)) {
            snprintf(err, errlen, "mcts: interrupted after %lld of %d simulations", (long long)m->s_done,
                     num_simulations);
            rc = MG_ERR;
            break;
        }
        const mg_eval_request *req;
        mg_eval_result *res;
        int npend = mg_mcts_gather(m, &req, &res);
        if (npend == 0)
            break;
        int timed = !(ev->flags & MG_EVAL_FLAG_CHEAP);
        double te = timed ? mg_now_seconds() : 0;
        int erc = ev->evaluate(ev->ctx, m->g, req, res, npend, m->cfg.timeout, err, errlen);
        if (timed)
            S->eval_seconds += mg_now_seconds() - te;
        if (erc != MG_OK) {
            mg_mcts_abort(m);
            rc = MG_ERR;
            break;
        }
        if (mg_mcts_scatter(m, err, errlen) != MG_OK) {
            rc = MG_ERR;
            break;
        }
    }
    mg_mcts_finish(m);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* The PUCT term of the root's edges, beside selection (the other read-outs: mcts_results.c)   */

void mg_mcts_root_u(const mg_mcts *m, double *u)
{
    int n = mcts_root_edge_count(m);
    const mcts_edge *e = m->a.edges + (n ? m->a.nodes[0].first_edge : 0);
    double cs = cscale(&m->cfg, (double)(m->root_n > 0 ? m->root_n : 1));
    for (int i = 0; i < n; i++)
        u[i] = cs * (double)e[i].prior / (1.0 + (double)e[i].n);
}

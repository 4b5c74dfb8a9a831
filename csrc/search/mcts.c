/* mcts.c - MAV-guided MCTS with asynchronous batches and dynamic virtual counts (see mcts.h). */
#include "mcts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cancel.h"
#include "../rng.h"
#include "dirichlet.h"

/* Node flags. */
#define NF_EXPANDED 1u  /* evaluated: edges set (or terminal, or hallucinated) */
#define NF_TERMINAL 2u  /* game over (engine outcome or predicted result) */
#define NF_PENDING 4u   /* waiting for its evaluation in the current batch */
#define NF_HALLU 8u     /* hallucinated (or all children hallucinated): never selected */

typedef struct mcts_node {
    uint32_t first_edge;
    uint32_t num_edges;
    uint32_t text;          /* state tracking: offset of the predicted text in the text pool */
    uint32_t cutoffs;       /* visits backed up here by depth cut-offs */
    float value;            /* [-1, 1], mover's view: evaluator or terminal value */
    uint8_t to_move;
    uint8_t flags;
    int8_t result;          /* terminal: enum mg_result */
    uint8_t pad_;
} mcts_node;

typedef struct mcts_edge {
    double w;               /* sum of backed-up values, from the mover at the edge's node */
    uint32_t n;             /* visits */
    uint32_t v;             /* virtual counts in flight */
    int32_t action;         /* engine: action id; state tracking: index among the node's edges */
    int32_t child;          /* node index, -1 if never visited */
    float prior;
    float q_init;           /* [-1, 1]: Q before the first visit */
    float value;            /* the evaluator's value in [0, 1], NaN if none */
    uint32_t dead;          /* the child is hallucinated (kept here so selection never reads it) */
} mcts_edge;

typedef char mcts_move[MG_MAX_MOVE_STR];

#define MCTS_CTAB 4096

/* One selection of a batch. */
typedef struct mcts_slot {
    int32_t nodes[MG_MCTS_MAX_DEPTH + 1];
    uint32_t edges[MG_MCTS_MAX_DEPTH];
    int32_t actions[MG_MCTS_MAX_DEPTH];
    int len;                /* number of edges; nodes[len] is the leaf */
    int req;                /* request index, -1 for a collision */
} mcts_slot;

/* The node/edge/text arenas (two sets, swapped by tree-reuse compaction). */
typedef struct mcts_arena {
    mcts_node *nodes;
    size_t nodes_cap, nodes_len;
    mcts_edge *edges;
    mcts_move *moves;       /* state tracking: one move string per edge */
    size_t edges_cap, edges_len;
    char *text;             /* state tracking: NUL-terminated predicted texts */
    size_t text_cap, text_len;
} mcts_arena;

struct mg_mcts {
    const mg_game *g;
    mg_mcts_config cfg;
    int st;                 /* state-tracking mode */
    size_t ss;              /* state size (engine mode) */
    mcts_arena a, spare;
    int has_root;
    unsigned char *root_state;
    int root_ply;
    uint32_t root_n, root_v;
    double root_w;
    mg_rng rng;
    /* Batch buffers. */
    int nslots_cap, nreq_cap;
    mcts_slot *slots;
    unsigned char *states;  /* nreq_cap * ss */
    int32_t *legal;         /* nreq_cap * MG_MAX_MOVES */
    float *values, *policy; /* nreq_cap * MG_MAX_MOVES */
    mcts_move *rmoves;      /* nreq_cap * MG_MAX_MOVES (state tracking) */
    char *rtext;            /* nreq_cap * MG_MAX_TEXT (state tracking) */
    mg_eval_request *reqs;
    mg_eval_result *res;
    int *order;
    int *req_slot;
    /* Scratch for expansion. */
    double ctab[MCTS_CTAB]; /* cscale() for small visit counts */
    int32_t *tmp_idx;       /* MG_MAX_MOVES */
    float *tmp_prior;       /* MG_MAX_MOVES */
    mg_mcts_stats stats;
    /* The search in progress (mg_mcts_begin .. mg_mcts_finish). */
    int64_t s_done;         /* simulations used */
    int s_total;            /* its budget */
    int s_batch;            /* leaves per batch, min(batch_size, budget) */
    int s_stop;             /* proven or dead root, or an error: no further batch */
    int s_npend, s_nslots;  /* the batch out: requests, selections */
    double s_t0;
};

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
    c->invalid = MG_MCTS_INVALID_LOSS;
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
        BAD("mcts: timeout %g is not a number of seconds", c->timeout);
    if (c->virtual_count < MG_MCTS_VC_DYNAMIC || c->virtual_count > MG_MCTS_VC_NONE)
        BAD("mcts: virtual_count %d is not dynamic (0), static (1) or none (2)", c->virtual_count);
    /* Bounds keep the virtual counts of a batch (at most 2 * batch_size paths) within 32 bits. */
    if (c->n_min < 0 || c->n_max < c->n_min || c->n_max > 10000)
        BAD("mcts: need 0 <= n_min <= n_max <= 10000, got n_min %d, n_max %d", c->n_min, c->n_max);
    if (c->virtual_loss < 0 || c->virtual_loss > 10000)
        BAD("mcts: virtual_loss %d is not in [0, 10000]", c->virtual_loss);
    if (c->c_base > 0) {
        if (!isfinite(c->c_base) || !isfinite(c->c_init) || c->c_init < 0)
            BAD("mcts: c_base %g / c_init %g must be finite with c_init >= 0", c->c_base, c->c_init);
    } else if (!isfinite(c->c_puct) || c->c_puct < 0) {
        BAD("mcts: c_puct %g must be finite and >= 0", c->c_puct);
    }
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
/* Arenas                                                                                      */

static void arena_free(mcts_arena *a)
{
    free(a->nodes);
    free(a->edges);
    free(a->moves);
    free(a->text);
    memset(a, 0, sizeof *a);
}

static int arena_reserve_nodes(mcts_arena *a, size_t need)
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

static int arena_reserve_edges(mcts_arena *a, size_t need, int st)
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
    if (st) {
        mcts_move *q = realloc(a->moves, cap * sizeof *q);
        if (!q)
            return MG_ERR;
        a->moves = q;
    }
    a->edges_cap = cap;
    return MG_OK;
}

/* Appends a NUL-terminated string to the text pool; UINT32_MAX on out of memory. */
static uint32_t arena_add_text(mcts_arena *a, const char *s, size_t len)
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

static void node_init(mcts_node *nd, int to_move)
{
    memset(nd, 0, sizeof *nd);
    nd->to_move = (uint8_t)to_move;
    nd->text = UINT32_MAX;
}

/* ------------------------------------------------------------------------------------------ */
/* Create / free                                                                               */

/* c(N) * sqrt(N) of the PUCT exploration term. */
static double cscale(const mg_mcts_config *c, double n)
{
    double cn = c->c_base > 0 ? log((1.0 + n + c->c_base) / c->c_base) + c->c_init : c->c_puct;
    return cn * sqrt(n);
}

void mg_mcts_free(mg_mcts *m)
{
    if (!m)
        return;
    arena_free(&m->a);
    arena_free(&m->spare);
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
    mcts_move *rmoves = m->st ? malloc((size_t)n * MG_MAX_MOVES * sizeof *rmoves) : NULL;
    char *rtext = m->st ? malloc((size_t)n * MG_MAX_TEXT) : NULL;
    if (!slots || !states || !legal || !values || !policy || !reqs || !res || !order || !req_slot ||
        (m->st && (!rmoves || !rtext))) {
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
        if (m->st) {
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
    m->st = cfg->mode == MG_EVAL_STATE_TRACKING;
    m->ss = g ? g->state_size : 1;
    m->root_state = calloc(1, m->ss);
    m->tmp_idx = malloc(MG_MAX_MOVES * sizeof *m->tmp_idx);
    m->tmp_prior = malloc(MG_MAX_MOVES * sizeof *m->tmp_prior);
    /* the batch buffers start small; each search grows them to the batch it can actually form */
    int ok = m->root_state && m->tmp_idx && m->tmp_prior &&
             batch_reserve(m, cfg->batch_size < MCTS_BATCH0 ? cfg->batch_size : MCTS_BATCH0) == MG_OK;
    if (ok)
        ok = arena_reserve_nodes(&m->a, 1024) == MG_OK && arena_reserve_edges(&m->a, 4096, m->st) == MG_OK;
    if (!ok) {
        mg_mcts_free(m);
        snprintf(err, errlen, "mcts: out of memory");
        return NULL;
    }
    mg_rng_seed(&m->rng, cfg->seed);
    for (int i = 0; i < MCTS_CTAB; i++)
        m->ctab[i] = cscale(&m->cfg, (double)i);
    return m;
}

const mg_mcts_config *mg_mcts_get_config(const mg_mcts *m) { return &m->cfg; }

/* ------------------------------------------------------------------------------------------ */
/* Roots                                                                                       */

static double result_value(int result, int to_move)
{
    if (result == MG_DRAW)
        return 0.0;
    int winner = result == MG_P0_WINS ? MG_P0 : MG_P1;
    return winner == to_move ? 1.0 : -1.0;
}

static void tree_clear(mg_mcts *m)
{
    m->a.nodes_len = 0;
    m->a.edges_len = 0;
    m->a.text_len = 0;
    m->root_n = m->root_v = 0;
    m->root_w = 0.0;
    m->has_root = 0;
    m->stats.reused_nodes = 0;
}

int mg_mcts_set_root(mg_mcts *m, const void *state, int ply, char *err, size_t errlen)
{
    if (m->st) {
        snprintf(err, errlen, "mcts: set_root needs engine mode (this search tracks states: use set_root_text)");
        return MG_ERR;
    }
    tree_clear(m);
    if (state != m->root_state)
        memcpy(m->root_state, state, m->ss);
    m->root_ply = ply;
    mcts_node *nd = &m->a.nodes[0];
    node_init(nd, m->g->to_move(state));
    int r = m->g->outcome(state, NULL);
    if (r != MG_ONGOING) {
        nd->flags = NF_EXPANDED | NF_TERMINAL;
        nd->result = (int8_t)r;
        nd->value = (float)result_value(r, nd->to_move);
    }
    m->a.nodes_len = 1;
    m->has_root = 1;
    return MG_OK;
}

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

int mg_mcts_set_root_text(mg_mcts *m, const char *text, int to_move, int ply, char *err, size_t errlen)
{
    if (!m->st) {
        snprintf(err, errlen, "mcts: set_root_text needs state-tracking mode (this search uses the engine)");
        return MG_ERR;
    }
    size_t len;
    if (!text || !text_ok(text, MG_MAX_TEXT, &len)) {
        snprintf(err, errlen, "mcts: root text '%.60s' is empty, longer than %d bytes or has control characters",
                 text ? text : "(null)", MG_MAX_TEXT - 1);
        return MG_ERR;
    }
    if (to_move != MG_P0 && to_move != MG_P1) {
        snprintf(err, errlen, "mcts: to_move %d is not 0 or 1", to_move);
        return MG_ERR;
    }
    tree_clear(m);
    mcts_node *nd = &m->a.nodes[0];
    node_init(nd, to_move);
    nd->text = arena_add_text(&m->a, text, len);
    if (nd->text == UINT32_MAX) {
        snprintf(err, errlen, "mcts: out of memory");
        return MG_ERR;
    }
    m->a.nodes_len = 1;
    m->root_ply = ply;
    m->has_root = 1;
    return MG_OK;
}

/* Copy the subtree under node `src` of arena `from` into the empty arena `to` (root 0). */
static int compact_subtree(mg_mcts *m, mcts_arena *from, mcts_arena *to, int32_t src)
{
    to->nodes_len = to->edges_len = to->text_len = 0;
    /* Breadth-first: nodes are copied in queue order, so to->nodes doubles as the queue
     * (node i of `to` came from the i-th entry of the source index list kept in `srcidx`). */
    size_t cap_nodes = from->nodes_len, cap_edges = from->edges_len;
    if (arena_reserve_nodes(to, cap_nodes + 1) != MG_OK || arena_reserve_edges(to, cap_edges + 1, m->st) != MG_OK)
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
        if (m->st && sn->text != UINT32_MAX) {
            const char *t = from->text + sn->text;
            dn->text = arena_add_text(to, t, strlen(t));
            if (dn->text == UINT32_MAX) {
                free(srcidx);
                return MG_ERR;
            }
        }
        dn->first_edge = (uint32_t)to->edges_len;
        for (uint32_t j = 0; j < sn->num_edges; j++) {
            mcts_edge e = from->edges[sn->first_edge + j];
            if (m->st)
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

/* AlphaZero's root noise: P = (1 - frac) P + frac eta, eta ~ Dir(alpha), on the root's edges
 * (when the config asks for it and the root is expanded). */
static void root_noise(mg_mcts *m)
{
    const mg_mcts_config *c = &m->cfg;
    if (!(c->dirichlet_alpha > 0 && c->dirichlet_frac > 0) || !m->has_root)
        return;
    const mcts_node *nd = &m->a.nodes[0];
    int n = (int)nd->num_edges;
    if (!(nd->flags & NF_EXPANDED) || n < 1)
        return;
    double eta[MG_MAX_MOVES];
    mg_dirichlet_sample(&m->rng, c->dirichlet_alpha, n, eta);
    mcts_edge *e = m->a.edges + nd->first_edge;
    for (int i = 0; i < n; i++)
        e[i].prior = (float)((1.0 - c->dirichlet_frac) * e[i].prior + c->dirichlet_frac * eta[i]);
}

static int reroot(mg_mcts *m, uint32_t edge_index, char *err, size_t errlen)
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
    root_noise(m);
    return MG_OK;
}

int mg_mcts_advance(mg_mcts *m, int32_t action, char *err, size_t errlen)
{
    if (m->st) {
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
        const mcts_edge *e = &m->a.edges[root->first_edge + j];
        if (e->action != action)
            continue;
        if (e->child < 0 || !(m->a.nodes[e->child].flags & NF_EXPANDED) ||
            (m->a.nodes[e->child].flags & NF_HALLU))
            break;
        if (reroot(m, root->first_edge + j, err, errlen) != MG_OK)
            return MG_ERR;
        m->g->make(m->root_state, action, undo);
        return MG_OK;
    }
    /* Not in the tree: start afresh at the new position. */
    unsigned char *tmp = m->root_state;
    m->g->make(tmp, action, undo);
    return mg_mcts_set_root(m, tmp, m->root_ply + 1, err, errlen);
}

int mg_mcts_advance_move(mg_mcts *m, const char *move, char *err, size_t errlen)
{
    if (!m->has_root) {
        snprintf(err, errlen, "mcts: no root position set");
        return MG_ERR;
    }
    if (!m->st) {
        int32_t a;
        if (m->g->action_from_str(m->root_state, move, &a, err, errlen) != MG_OK)
            return MG_ERR;
        return mg_mcts_advance(m, a, err, errlen);
    }
    const mcts_node *root = &m->a.nodes[0];
    for (uint32_t j = 0; j < root->num_edges; j++) {
        if (strcmp(m->a.moves[root->first_edge + j], move) != 0)
            continue;
        const mcts_edge *e = &m->a.edges[root->first_edge + j];
        if (e->child < 0 || !(m->a.nodes[e->child].flags & NF_EXPANDED) ||
            (m->a.nodes[e->child].flags & NF_HALLU)) {
            snprintf(err, errlen, "mcts: move '%.20s' was never evaluated: its state is unknown to the tree", move);
            return MG_ERR;
        }
        return reroot(m, root->first_edge + j, err, errlen);
    }
    snprintf(err, errlen, "mcts: move '%.20s' is not among the root's predicted moves", move);
    return MG_ERR;
}

/* ------------------------------------------------------------------------------------------ */
/* Selection                                                                                   */

/* SEL_MARKED: a node whose children are all hallucinated was just marked hallucinated (a
 * permanent change, so it does not count as a failed attempt: at most one per node). */
enum { SEL_LEAF, SEL_TERMINAL, SEL_COLLISION, SEL_CUTOFF, SEL_DEAD, SEL_MARKED, SEL_ROOT_DEAD };

static inline uint32_t vcount(const mg_mcts *m, int d)
{
    switch (m->cfg.virtual_count) {
    case MG_MCTS_VC_DYNAMIC: {
        uint32_t x = d >= 31 ? 0u : (uint32_t)m->cfg.n_max >> d;
        return x < (uint32_t)m->cfg.n_min ? (uint32_t)m->cfg.n_min : x;
    }
    case MG_MCTS_VC_STATIC:
        return (uint32_t)m->cfg.virtual_loss;
    default:
        return 0;
    }
}

/* The PUCT choice among the node's edges; -1 if all children are hallucinated. */
static int64_t pick_edge(mg_mcts *m, const mcts_node *nd, uint32_t pn, uint32_t pv)
{
    const mcts_edge *e = m->a.edges + nd->first_edge;
    uint64_t nt = (uint64_t)pn + pv;
    if (nt < 1)
        nt = 1;
    double cs = nt < MCTS_CTAB ? m->ctab[nt] : cscale(&m->cfg, (double)nt);
    int stat = m->cfg.virtual_count == MG_MCTS_VC_STATIC;
    double best = -INFINITY;
    int64_t bi = -1;
    uint32_t ties = 0;
    for (uint32_t j = 0; j < nd->num_edges; j++) {
        const mcts_edge *x = &e[j];
        if (x->dead)
            continue;
        double nn = (double)x->n + (double)x->v;
        double q;
        if (stat)
            q = nn > 0 ? (x->w - (double)x->v) / nn : (double)x->q_init;
        else
            q = x->n > 0 ? x->w / (double)x->n : (double)x->q_init;
        double s = q + cs * (double)x->prior / (1.0 + nn);
        if (s > best) {
            best = s;
            bi = j;
            ties = 1;
        } else if (s == best) {
            ties++;
            if (mg_rng_below(&m->rng, ties) == 0)
                bi = j;
        }
    }
    return bi < 0 ? -1 : (int64_t)nd->first_edge + bi;
}

/* Descend from the root.  Engine mode: the leaf state ends in `state`. */
static int select_leaf(mg_mcts *m, mcts_slot *sl, unsigned char *state)
{
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    const mg_game *g = m->g;
    int32_t node = 0;
    uint32_t pn = m->root_n, pv = m->root_v;
    int depth = 0;
    if (!m->st)
        memcpy(state, m->root_state, m->ss);
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
                m->a.edges[sl->edges[depth - 1]].dead = 1;
            return depth == 0 ? SEL_ROOT_DEAD : SEL_MARKED;
        }
        mcts_edge *e = &m->a.edges[ei];
        sl->edges[depth] = (uint32_t)ei;
        sl->actions[depth] = e->action;
        depth++;
        if (!m->st)
            g->make(state, e->action, undo);
        if (e->child < 0) {
            /* Capacity for one new node per simulation was reserved at the start of the search. */
            int32_t c = (int32_t)m->a.nodes_len++;
            mcts_node *cn = &m->a.nodes[c];
            if (m->st) {
                node_init(cn, nd->to_move ^ 1);
            } else {
                node_init(cn, g->to_move(state));
                int r = g->outcome(state, NULL);
                if (r != MG_ONGOING) {
                    cn->flags = NF_EXPANDED | NF_TERMINAL;
                    cn->result = (int8_t)r;
                    cn->value = (float)result_value(r, cn->to_move);
                }
            }
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
    int L = sl->len;
    for (int i = 0; i < L; i++) {
        uint32_t vc = vcount(m, L - 1 - i);
        mcts_edge *e = &m->a.edges[sl->edges[i]];
        if (sign > 0)
            e->v += vc;
        else
            e->v -= vc;
    }
    uint32_t vr = vcount(m, L);
    if (sign > 0)
        m->root_v += vr;
    else
        m->root_v -= vr;
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
        e->w += mover == leaf_mover ? v : -v;
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

/* Priors for n actions from values (NaN = unknown) or policy; writes m->tmp_prior.
 * MG_ERR if the policy is malformed. */
static int compute_prior(mg_mcts *m, int n, const float *values, const float *policy, int ply)
{
    float *P = m->tmp_prior;
    double eps = m->cfg.eps;
    double uni = 1.0 / n;
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
    int nk = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(values[i]))
            top[nk++] = i;
    if (nk == 0) {
        for (int i = 0; i < n; i++)
            P[i] = (float)uni;
        return MG_OK;
    }
    /* The k-th best value is the threshold; every action at or above it is in the top k
     * (ties with the k-th value included). */
    float thr, qmax = -INFINITY;
    if (m->cfg.k >= nk) {
        thr = INFINITY;
        for (int s = 0; s < nk; s++) {
            float v = values[top[s]];
            thr = v < thr ? v : thr;
            qmax = v > qmax ? v : qmax;
        }
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
    int k = 0;
    for (int s = 0; s < nk; s++)
        if (values[top[s]] >= thr)
            top[k++] = top[s];
    double tau = tau_at(m, ply);
    double z = 0;
    double ex[MG_MAX_MOVES];
    for (int s = 0; s < k; s++) {
        double d = values[top[s]] - qmax;
        ex[s] = d == 0 ? 1.0 : exp(d / tau);
        z += ex[s];
    }
    for (int i = 0; i < n; i++)
        P[i] = (float)(eps * uni);
    for (int s = 0; s < k; s++)
        P[top[s]] += (float)((1 - eps) * ex[s] / z);
    return MG_OK;
}

static int valid_prob(float x) { return isnan(x) || (x >= 0.0f && x <= 1.0f); }

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

enum { APPLY_OK = 0, APPLY_INVALID = 1, APPLY_NOMEM = 2 };

/* Expand the slot's leaf from result r; returns APPLY_* and the leaf value (mover's view) in *v. */
static int expand_leaf(mg_mcts *m, const mcts_slot *sl, const mg_eval_result *r, double *v)
{
    int32_t leaf = sl->nodes[sl->len];
    int ply = m->root_ply + sl->len;
    int n = r->num_moves;
    if (!isnan(r->value) && !(r->value >= 0 && r->value <= 1))
        return APPLY_INVALID;
    size_t tlen = 0;
    int result = MG_ONGOING;
    if (m->st) {
        /* A node with a text (the root) keeps it, so its answer needs none. */
        if (m->a.nodes[leaf].text == UINT32_MAX && !text_ok(r->text, r->text_cap, &tlen))
            return APPLY_INVALID;
        result = r->result;
        if (result < MG_ONGOING || result > MG_DRAW)
            return APPLY_INVALID;
        if (result == MG_ONGOING && (n < 1 || n > MG_MAX_MOVES))
            return APPLY_INVALID;
        if (result != MG_ONGOING)
            n = 0;
    } else if (n != m->reqs[r - m->res].num_legal) {
        return APPLY_INVALID; /* values must align with the request's legal actions */
    }
    /* Values, and (state tracking) moves: check, dedupe into tmp_idx. */
    int32_t *keep = m->tmp_idx;
    int nk = 0;
    double vmax = -INFINITY, vmin = INFINITY;
    for (int i = 0; i < n; i++) {
        float q = r->values[i];
        if (!valid_prob(q))
            return APPLY_INVALID;
        if (m->st) {
            if (!move_ok(r->moves[i]))
                return APPLY_INVALID;
            int dup = 0;
            for (int j = 0; j < nk && !dup; j++)
                dup = strcmp(r->moves[keep[j]], r->moves[i]) == 0;
            if (dup)
                continue;
        }
        keep[nk++] = i;
        if (!isnan(q)) {
            if (q > vmax)
                vmax = q;
            if (q < vmin)
                vmin = q;
        }
    }
    mcts_node *nd = &m->a.nodes[leaf];
    if (m->st) {
        /* A node that has a text keeps it: the root's is the real game's (set_root_text), or
         * after tree reuse the text the tree already predicted for it. */
        if (nd->text == UINT32_MAX) {
            uint32_t off = arena_add_text(&m->a, r->text, tlen);
            if (off == UINT32_MAX)
                return APPLY_NOMEM;
            nd = &m->a.nodes[leaf];
            nd->text = off;
        }
        if (result != MG_ONGOING) {
            nd->flags = NF_EXPANDED | NF_TERMINAL;
            nd->result = (int8_t)result;
            nd->value = (float)result_value(result, nd->to_move);
            *v = nd->value;
            return APPLY_OK;
        }
    }
    double val;
    if (!isnan(r->value))
        val = r->value;
    else if (vmax > -INFINITY)
        val = vmax;
    else
        return APPLY_INVALID; /* no value at all */
    /* Gather values/policy of the kept moves contiguously for the prior. */
    float vals[MG_MAX_MOVES], pols[MG_MAX_MOVES];
    for (int i = 0; i < nk; i++) {
        vals[i] = r->values[keep[i]];
        pols[i] = r->policy[keep[i]];
    }
    int32_t keep_copy[MG_MAX_MOVES];
    memcpy(keep_copy, keep, (size_t)nk * sizeof *keep);
    if (compute_prior(m, nk, vals, pols, ply) != MG_OK)
        return APPLY_INVALID;
    if (arena_reserve_edges(&m->a, m->a.edges_len + (size_t)nk, m->st) != MG_OK)
        return APPLY_NOMEM;
    const int32_t *legal = m->st ? NULL : m->reqs[r - m->res].legal;
    double fpu = !isnan(m->cfg.fpu) ? m->cfg.fpu : (vmin < INFINITY ? 2.0 * vmin - 1.0 : 0.0);
    uint32_t first = (uint32_t)m->a.edges_len;
    for (int i = 0; i < nk; i++) {
        mcts_edge *e = &m->a.edges[first + i];
        e->w = 0;
        e->n = e->v = 0;
        e->child = -1;
        e->dead = 0;
        e->prior = m->tmp_prior[i];
        e->value = vals[i];
        e->q_init = isnan(vals[i]) ? (float)fpu : (float)(2.0 * vals[i] - 1.0);
        if (m->st) {
            e->action = i;
            memcpy(m->a.moves[first + i], r->moves[keep_copy[i]], sizeof(mcts_move));
        } else {
            e->action = legal[keep_copy[i]];
        }
    }
    m->a.edges_len += (size_t)nk;
    nd = &m->a.nodes[leaf];
    nd->first_edge = first;
    nd->num_edges = (uint32_t)nk;
    nd->value = (float)(2.0 * val - 1.0);
    nd->flags = NF_EXPANDED;
    *v = nd->value;
    return APPLY_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Search                                                                                      */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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
    if (m->st) {
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
    } else {
        q->state = m->states + (size_t)ri * m->ss;
        q->text = q->parent_text = q->move = NULL;
        /* legal/num_legal were filled by the caller */
        r->num_moves = q->num_legal;
        for (int i = 0; i < q->num_legal; i++) {
            r->values[i] = NAN;
            r->policy[i] = NAN;
        }
    }
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
    m->a.edges[sl->edges[sl->len - 1]].dead = 1;
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
                 m->st ? "state-tracking" : "engine");
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
    m->s_t0 = now_seconds();
    m->s_done = 0;
    m->s_total = num_simulations;
    m->s_npend = m->s_nslots = 0;
    m->s_stop = 1; /* until the buffers are in place */
    if (arena_reserve_nodes(&m->a, m->a.nodes_len + (size_t)num_simulations + 2) != MG_OK) {
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
    m->s_npend = m->s_nslots = 0;
    while (!m->s_stop && m->s_done < m->s_total) {
        int npend = 0, nslots = 0, attempts = 0;
        int64_t before = m->s_done;
        while (npend < B && m->s_done + npend < m->s_total && attempts < 2 * B && nslots < m->nslots_cap) {
            attempts++;
            mcts_slot *sl = &m->slots[nslots];
            unsigned char *st = m->st ? NULL : m->states + (size_t)npend * m->ss;
            int r = select_leaf(m, sl, st);
            if (sl->len > S->max_depth)
                S->max_depth = sl->len;
            if (r == SEL_LEAF) {
                int32_t leaf = sl->nodes[sl->len];
                if (!m->st) {
                    int nl = m->g->legal_actions(st, m->legal + (size_t)npend * MG_MAX_MOVES);
                    if (nl <= 0) { /* no move although not over: treat as a draw */
                        mcts_node *nd = &m->a.nodes[leaf];
                        nd->flags = NF_EXPANDED | NF_TERMINAL;
                        nd->result = MG_DRAW;
                        nd->value = 0;
                        backup(m, sl, 0.0);
                        S->terminal_visits++;
                        m->s_done++;
                        continue;
                    }
                    m->reqs[npend].legal = m->legal + (size_t)npend * MG_MAX_MOVES;
                    m->reqs[npend].num_legal = nl;
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
                    root_noise(m);
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
        else
            backup(m, sl, 1.0);
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
    S->elapsed = now_seconds() - m->s_t0;
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
        double te = timed ? now_seconds() : 0;
        int erc = ev->evaluate(ev->ctx, m->g, req, res, npend, m->cfg.timeout, err, errlen);
        if (timed)
            S->eval_seconds += now_seconds() - te;
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

void mg_mcts_root_u(const mg_mcts *m, double *u)
{
    int n = mg_mcts_num_root_edges(m);
    const mcts_edge *e = m->a.edges + (n ? m->a.nodes[0].first_edge : 0);
    double cs = cscale(&m->cfg, (double)(m->root_n > 0 ? m->root_n : 1));
    for (int i = 0; i < n; i++)
        u[i] = cs * (double)e[i].prior / (1.0 + (double)e[i].n);
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

const char *mg_mcts_root_move(const mg_mcts *m, int i)
{
    if (!m->st || i < 0 || i >= mg_mcts_num_root_edges(m))
        return NULL;
    return m->a.moves[m->a.nodes[0].first_edge + (uint32_t)i];
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
    if (b < 0 || m->st)
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
            actions[len] = m->st ? -1 : e->action;
        if (edges)
            edges[len] = b;
        len++;
        if (e->child < 0)
            break;
        nd = &m->a.nodes[e->child];
    }
    return len;
}

const char *mg_mcts_pv_move(const mg_mcts *m, const int32_t *edges, int len, int i)
{
    if (!m->st || !m->has_root || i < 0 || i >= len)
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

uint32_t mg_mcts_root_visits(const mg_mcts *m) { return m->root_n; }

double mg_mcts_root_value(const mg_mcts *m) { return m->root_n ? m->root_w / m->root_n : NAN; }

const char *mg_mcts_root_text(const mg_mcts *m)
{
    if (!m->st || !m->has_root || m->a.nodes[0].text == UINT32_MAX)
        return "";
    return m->a.text + m->a.nodes[0].text;
}

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

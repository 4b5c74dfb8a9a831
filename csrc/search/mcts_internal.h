/*
 * mcts_internal.h - the MCTS tree shared by the files of the search (not a public header):
 *   mcts.c                 configuration, buffers, selection, virtual counts, backup, expansion, the search loop
 *   mcts_tree.c            arenas, tree reuse (compaction), results and the invariant check
 *   mcts_engine.c          engine mode: states from the game interface, legal actions as edges
 *   mcts_state_tracking.c  state-tracking mode: predicted state texts and move strings as edges
 * The mode is m->cfg.mode (enum mg_eval_mode), read through mcts_tracking().
 */
#ifndef MG_SEARCH_MCTS_INTERNAL_H
#define MG_SEARCH_MCTS_INTERNAL_H

#include "mcts.h"

#include "../rng.h"

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

/* State-tracking mode (predicted texts and move strings) rather than engine mode. */
static inline int mcts_tracking(const mg_mcts *m) { return m->cfg.mode == MG_EVAL_STATE_TRACKING; }

/* Selection outcomes.  SEL_MARKED: a node whose children are all hallucinated was just marked
 * hallucinated (a permanent change, so it does not count as a failed attempt: at most one per node). */
enum { SEL_LEAF, SEL_TERMINAL, SEL_COLLISION, SEL_CUTOFF, SEL_DEAD, SEL_MARKED, SEL_ROOT_DEAD };

/* Results of applying an evaluator answer to a leaf. */
enum { APPLY_OK = 0, APPLY_INVALID = 1, APPLY_NOMEM = 2 };

/* ---- mcts.c ---- */
/* AlphaZero's Dirichlet noise on the root's priors (when the config asks for it and the root is expanded). */
void mcts_root_noise(mg_mcts *m);

/* ---- mcts_tree.c ---- */
void mcts_arena_free(mcts_arena *a);
int mcts_arena_reserve_nodes(mcts_arena *a, size_t need);
/* with_moves: also the per-edge move strings (state tracking) */
int mcts_arena_reserve_edges(mcts_arena *a, size_t need, int with_moves);
/* Appends a NUL-terminated string to the text pool; UINT32_MAX on out of memory. */
uint32_t mcts_arena_add_text(mcts_arena *a, const char *s, size_t len);
void mcts_node_init(mcts_node *nd, int to_move);
/* +1 win, 0 draw, -1 loss for `to_move`. */
double mcts_result_value(int result, int to_move);
/* A node that ends the game: its result and value. */
void mcts_node_terminal(mcts_node *nd, int result);
void mcts_tree_clear(mg_mcts *m);
/* Re-root at the child of root edge `edge_index`, keeping its subtree. */
int mcts_reroot(mg_mcts *m, uint32_t edge_index, char *err, size_t errlen);
/* The root's child through edge j has been evaluated (and is not hallucinated): tree reuse can keep it. */
int mcts_root_child_known(const mg_mcts *m, uint32_t j);

/* ---- mcts_engine.c ---- */
/* The node reached by the move just made into `state`: its mover, terminal if the game is over. */
void mcts_engine_new_node(const mg_mcts *m, const unsigned char *state, mcts_node *cn);
/* The legal actions of leaf request ri at `state` into the request; 0 if there are none. */
int mcts_engine_leaf_moves(mg_mcts *m, const unsigned char *state, int ri);
void mcts_engine_prepare(mg_mcts *m, int ri);
/* APPLY_OK if the answer's values align with the request's legal actions. */
int mcts_engine_check_answer(const mg_mcts *m, const mg_eval_result *r);
/* advance_move: the move string read by the game, then mg_mcts_advance. */
int mcts_engine_advance_move(mg_mcts *m, const char *move, char *err, size_t errlen);

/* ---- mcts_state_tracking.c ---- */
/* A predicted text is usable if it is non-empty, fits, and has no control characters. */
int mcts_text_ok(const char *s, size_t cap, size_t *len);
void mcts_tracking_prepare(mg_mcts *m, const mcts_slot *sl, int ri);
/* Checks the answer's text, result and move count: APPLY_OK with *n (moves to read), *result and
 * *tlen (the text's length, 0 if the leaf keeps its own text), else APPLY_INVALID. */
int mcts_tracking_check_answer(const mg_mcts *m, int32_t leaf, const mg_eval_result *r, int *n, int *result,
                               size_t *tlen);
/* Valid, distinct move strings of the answer: their indices into keep; -1 if one is malformed. */
int mcts_tracking_keep_moves(const mg_eval_result *r, int n, int32_t *keep);
/* Stores the predicted text of the leaf (unless it has one) and, for a predicted game end, makes
 * it terminal with *v its value.  APPLY_NOMEM, or APPLY_OK with *terminal set. */
int mcts_tracking_store(mg_mcts *m, int32_t leaf, const mg_eval_result *r, size_t tlen, int result, int *terminal,
                        double *v);
/* The move strings of the nk new edges from `first` on: the answer's moves keep[0..nk). */
void mcts_tracking_set_moves(mg_mcts *m, uint32_t first, const mg_eval_result *r, const int32_t *keep, int nk);
/* advance_move: re-root at the evaluated child of a predicted root move. */
int mcts_tracking_advance_move(mg_mcts *m, const char *move, char *err, size_t errlen);

#endif

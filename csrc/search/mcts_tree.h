/*
 * mcts_tree.h - the MCTS search object and its tree (not a public header): the lowest of the MCTS's
 * layers, each of which calls only the ones below it:
 *   mcts_results.c         the public read-outs: root edges, principal variation, statistics, the check
 *   mcts.c                 configuration, buffers, selection, virtual counts, backup, expansion, the loop
 *   az_noise.c             AlphaZero's root exploration noise
 *   mcts_engine.c          engine mode: states from the game interface, legal actions as edges
 *   mcts_state_tracking.c  state-tracking mode: predicted state texts and move strings as edges
 *   mcts_tree.c            arenas, nodes, tree reuse (compaction)
 * mcts.c reaches the two modes through the table of mcts_mode.h (m->mode).
 */
#ifndef MG_SEARCH_MCTS_TREE_H
#define MG_SEARCH_MCTS_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "../game.h"
#include "../rng.h"
#include "evaluator.h"
#include "mcts_config.h"

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

/* The fields selection reads (q, den, prior; static virtual losses: n, v, dead) come first: one edge
 * of 56 bytes, the hot part in its first 32. */
typedef struct mcts_edge {
    double q;               /* selection's Q without virtual losses: w / n once visited, q_init before
                               (kept by backup, so that selection divides once per edge, not twice);
                               NaN once the edge is dead (so that selection needs no test for it) */
    double den;             /* 1 + n + v, exact (kept by backup and the virtual counts, so that
                               selection's dynamic loop reads one double, not two counts) */
    uint32_t n;             /* visits */
    uint32_t v;             /* virtual counts in flight */
    float prior;
    uint32_t dead;          /* the child is hallucinated (kept here so selection never reads it) */
    double w;               /* sum of backed-up values, from the mover at the edge's node */
    int32_t action;         /* engine: action id; state tracking: index among the node's edges */
    int32_t child;          /* node index, -1 if never visited */
    float q_init;           /* [-1, 1]: Q before the first visit */
    float value;            /* the evaluator's value in [0, 1], NaN if none */
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
    int nlegal;             /* the leaf's moves already in its request (new_node's count), -1 if not */
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

struct mcts_mode;

struct mg_mcts {
    const mg_game *g;
    mg_mcts_config cfg;
    const struct mcts_mode *mode; /* the mode's table (mcts_mode.h), from cfg.mode */
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
    uint32_t vtab[MG_MCTS_MAX_DEPTH + 1]; /* virtual counts of the pair at depth d above the leaf */
    double vtabd[MG_MCTS_MAX_DEPTH + 1];  /* the same as doubles (for the edges' den) */
    int32_t *tmp_idx;       /* MG_MAX_MOVES */
    float *tmp_prior;       /* MG_MAX_MOVES */
    float nans[MG_MAX_MOVES]; /* all NaN (set at creation): the requests' value and policy presets */
    mg_mcts_stats stats;
    /* The search in progress (mg_mcts_begin .. mg_mcts_finish). */
    int64_t s_done;         /* simulations used */
    int s_total;            /* its budget */
    int s_batch;            /* leaves per batch, min(batch_size, budget) */
    int s_stop;             /* proven or dead root, or an error: no further batch */
    int s_npend, s_nslots;  /* the batch out: requests, selections */
    double s_t0;
};

/* State-tracking mode (predicted texts and move strings) rather than engine mode. */
static inline int mcts_tracking(const mg_mcts *m) { return m->cfg.mode == MG_EVAL_STATE_TRACKING; }

/* Number of root edges (0 before the root is expanded, or at a terminal root). */
static inline int mcts_root_edge_count(const mg_mcts *m) { return m->has_root ? (int)m->a.nodes[0].num_edges : 0; }

void mcts_arena_free(mcts_arena *a);
int mcts_arena_reserve_nodes(mcts_arena *a, size_t need);
/* with_moves: also the per-edge move strings (state tracking) */
int mcts_arena_reserve_edges(mcts_arena *a, size_t need, int with_moves);
/* Appends a NUL-terminated string to the text pool; UINT32_MAX on out of memory. */
uint32_t mcts_arena_add_text(mcts_arena *a, const char *s, size_t len);
void mcts_node_init(mcts_node *nd, int to_move);
/* A node that ends the game: its result and value (+1 win, 0 draw, -1 loss for its mover). */
void mcts_node_terminal(mcts_node *nd, int result);
void mcts_tree_clear(mg_mcts *m);
/* Re-root at the child of root edge `edge_index`, keeping its subtree (the caller adds the root's noise). */
int mcts_reroot(mg_mcts *m, uint32_t edge_index, char *err, size_t errlen);
/* The root's child through edge j has been evaluated (and is not hallucinated): tree reuse can keep it. */
int mcts_root_child_known(const mg_mcts *m, uint32_t j);

#endif

/*
 * mcts_config.h - the plain types of the MCTS API (mcts.h, which includes this header): the
 * configuration, the statistics of a search and the limits.  Its own header so that the files under
 * the search loop (the tree, the two modes) can hold them without the search's API.
 */
#ifndef MG_SEARCH_MCTS_CONFIG_H
#define MG_SEARCH_MCTS_CONFIG_H

#include <stdint.h>

#include "evaluator.h"

enum mg_mcts_vc {
    MG_MCTS_VC_DYNAMIC = 0, /* max(n_min, floor(n_max / 2^d)) virtual visits */
    MG_MCTS_VC_STATIC = 1,  /* `virtual_loss` virtual losses on every pair of the path */
    MG_MCTS_VC_NONE = 2
};

enum mg_mcts_prior {
    MG_MCTS_PRIOR_MAV = 0,    /* equation 1 from the action values */
    MG_MCTS_PRIOR_POLICY = 1  /* the evaluator's policy (uniform where it gives none) */
};

/* What an unusable evaluator answer (a hallucinated leaf) does to the tree. */
enum mg_mcts_invalid {
    MG_MCTS_INVALID_LOSS = 0,   /* one visit backed up as a loss (-1) for the player who moved into it */
    MG_MCTS_INVALID_EXCLUDE = 1 /* the paper's: value minus infinity, nothing backed up (0 visits) */
};

#define MG_MCTS_MAX_TAU_STEPS 16
#define MG_MCTS_MAX_DEPTH 512

typedef struct mg_mcts_config {
    int mode;                 /* enum mg_eval_mode */
    int batch_size;           /* B >= 1 */
    double timeout;           /* seconds to wait for a batch (<= 0: no timeout) */
    int virtual_count;        /* enum mg_mcts_vc */
    int n_max, n_min;         /* dynamic virtual counts (10000 >= n_max >= n_min >= 0) */
    int virtual_loss;         /* static virtual loss (0 .. 10000) */
    /* PUCT: c_base > 0 selects AlphaZero's c(s) with c_init; otherwise the constant c_puct. */
    double c_puct, c_base, c_init;
    int prior;                /* enum mg_mcts_prior */
    int k;                    /* top-k of the MAV prior (>= 1) */
    double eps;               /* uniform mixing in [0, 1] */
    /* tau(ply) = tau[i] for the last i with tau_from_ply[i] <= ply (tau[0] applies before
     * any step); num_tau >= 1, taus > 0, tau_from_ply increasing. */
    int num_tau;
    double tau[MG_MCTS_MAX_TAU_STEPS];
    int tau_from_ply[MG_MCTS_MAX_TAU_STEPS];
    double fpu;               /* value in [-1, 1] of an action without an evaluator value;
                                 NaN: the lowest value the evaluator gave at that node (0 if none) */
    int invalid;              /* enum mg_mcts_invalid; in both the node is never selected again */
    uint64_t seed;
    /* AlphaZero's root exploration noise: with dirichlet_alpha > 0 and dirichlet_frac > 0 the
     * root's priors become (1 - frac) P + frac eta, eta ~ Dir(alpha) drawn from the search's
     * generator, when the root is expanded and when advance() re-roots at an expanded child.
     * Only the root: every other node keeps the evaluator's prior.  0 / 0: off (default). */
    double dirichlet_alpha, dirichlet_frac;
} mg_mcts_config;

typedef struct mg_mcts mg_mcts;

typedef struct mg_mcts_stats {
    int64_t simulations;      /* budget used: completed + dropped + terminal visits */
    int64_t evaluations;      /* requests handed to the evaluator */
    int64_t completed;        /* visits backed up (evaluations, terminal and hallucinated) */
    int64_t terminal_visits;  /* selections that ended on a terminal state */
    int64_t dropped;          /* results discarded without a visit (timeout; invalid root) */
    int64_t invalid;          /* hallucinated leaves */
    int64_t collisions;       /* selections that ended on a leaf already in the batch */
    int64_t batches;
    int64_t depth_cutoffs;    /* selections stopped at MG_MCTS_MAX_DEPTH (node value re-used) */
    int max_depth;            /* deepest leaf this search */
    int nodes;                /* nodes in the tree */
    int64_t edges;            /* edges in the tree */
    int reused_nodes;         /* nodes kept from the previous search (tree reuse) */
    double elapsed;           /* seconds in the last mg_mcts_search */
    double eval_seconds;      /* of which inside the evaluator (not timed for MG_EVAL_FLAG_CHEAP ones) */
} mg_mcts_stats;

#endif /* MG_SEARCH_MCTS_CONFIG_H */

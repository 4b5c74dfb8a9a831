/*
 * chess_alphabeta.h - the two alpha-beta searches of the IDP report (shared/papers/002, section 5.3)
 * for chess and Chess960:
 *
 *  - the baseline ("AB"): negamax alpha-beta to a fixed depth (4 in the report) with the piece
 *    values and piece-square tables of chess_pst.h at the leaves; moves ordered by the
 *    transposition-table move, then captures (most valuable victim, least valuable attacker),
 *    then the piece-square gain of the move.  Iterative deepening 1..depth;
 *  - the probability-threshold search ("AB with prob", Giraffe's probability search): a node at
 *    path probability P (the product of the policy's probabilities of the moves that lead to
 *    it) is expanded while P >= threshold (0.001 in the report) and its ply < max_depth (8);
 *    otherwise it is a leaf with the same static evaluation.  Moves are ordered by the
 *    policy.  Iterative widening over thresholds 0.1, 0.01, ... down to `threshold`.
 *
 * Every node (leaves too) detects checkmate and stalemate; the fifty-move rule, insufficient
 * material and threefold repetition (counted along the game and the search path) score 0.
 * Scores are centipawns for the side to move at the root; a mate in k plies is
 * +-(MG_AB_MATE - k).
 *
 * The policy (guided search) is a callback that fills, for a batch of positions, one weight per
 * entry of the 1968-move index (chess_policy.h); the search masks the illegal moves and
 * renormalises, so any non-negative scores work (a network's softmax, counts, a one-hot).  A
 * NULL policy is the uniform policy.  A node asks for the policies of its children in order,
 * `batch` at a time, when it reaches the first child whose policy it lacks, only for the
 * children that will be expanded (P * p >= threshold, ply + 1 < max_depth): batch = 1 wastes no
 * call on a cut-off, a larger batch fills a network's batch.
 *
 * Budgets: `max_nodes` (0: none) and `cancel` (Ctrl-C and a time budget in the binding).  A
 * stopped search returns the best move of its last completed iteration (complete = 0).
 *
 * Memory: everything lives in an mg_ab_workspace made once (mg_ab_workspace_new) and reused by
 * any number of searches; the search loop never allocates.  A workspace serves one search at a
 * time.  The baseline's optional transposition table reuses a stored score only at the same
 * remaining depth, so its results are the plain search's (the table speeds it up through move
 * ordering and transpositions); the guided search has no table (a node's subtree depends on its
 * path probability).
 */
#ifndef MG_SEARCH_ALPHABETA_H
#define MG_SEARCH_ALPHABETA_H
#include <stdint.h>

#include "../../cancel.h"
#include "chess_policy.h"

#define MG_AB_MATE 30000
#define MG_AB_INF 32000
#define MG_AB_MAX_DEPTH 12      /* depth / max_depth limit */
#define MG_AB_MAX_BATCH 256     /* policy positions a call */

/* One position whose policy the search asks for: the state and the boards of the two positions
 * before it (for the planes, mg_policy_planes). */
typedef struct mg_ab_query {
    const mg_chess_state *state;
    const uint8_t *prev1, *prev2;
} mg_ab_query;

/* Fill out[i * MG_POLICY_MOVES + k] (weights over the move index) for the n queries.  Returns 0, or
 * -1 to stop the search (reported as MG_AB_STOP_POLICY). */
typedef int (*mg_ab_policy_fn)(void *ctx, const mg_ab_query *q, int n, float *out);

enum mg_ab_stop { MG_AB_STOP_NONE = 0, MG_AB_STOP_CANCEL, MG_AB_STOP_NODES, MG_AB_STOP_POLICY };

typedef struct mg_ab_params {
    int depth;               /* baseline: the depth; guided: the maximum depth (1..MG_AB_MAX_DEPTH) */
    double threshold;        /* 0: the baseline; > 0: the guided search with this probability threshold */
    uint64_t max_nodes;      /* 0: no node budget */
    int use_tt;              /* baseline: use the workspace's transposition table (if it has one) */
    mg_ab_policy_fn policy;  /* guided: NULL is the uniform policy */
    void *policy_ctx;
    int batch;               /* guided: positions a policy call (1..MG_AB_MAX_BATCH) */
} mg_ab_params;

typedef struct mg_ab_result {
    int32_t best;            /* the best root action, -1 if the root has no legal move */
    int score;               /* centipawns for the side to move */
    uint64_t nodes;          /* positions visited (the root and every position made) */
    uint64_t policy_calls;   /* callback calls (guided) */
    uint64_t policy_positions;
    double policy_seconds;   /* time inside the callback */
    double seconds;          /* the whole search */
    int iterations;          /* completed iterations (baseline: depth reached; guided: thresholds done) */
    int complete;            /* 1 if the last iteration (the full search) finished */
    int stop;                /* enum mg_ab_stop */
    int pv_len;
    int32_t pv[MG_AB_MAX_DEPTH];
} mg_ab_result;

typedef struct mg_ab_workspace mg_ab_workspace;

/* A workspace with a transposition table of 2^tt_bits entries (0: none; at most 26).  NULL if out
 * of memory. */
mg_ab_workspace *mg_ab_workspace_new(int tt_bits);
void mg_ab_workspace_free(mg_ab_workspace *ws);

/* Check parameters: 0, or -1 with a message naming the bad value. */
int mg_ab_params_check(const mg_ab_params *p, char *err, size_t errlen);

/* Search `root` (a chess or Chess960 state; prev1/prev2 the boards of the two positions before
 * it, or NULL for the root's own board).  Returns 0, or -1 if the parameters are invalid (err). */
int mg_ab_search(const mg_chess_state *root, const uint8_t *prev1, const uint8_t *prev2, const mg_ab_params *p,
                 mg_ab_workspace *ws, mg_cancel *cancel, mg_ab_result *out, char *err, size_t errlen);

#endif

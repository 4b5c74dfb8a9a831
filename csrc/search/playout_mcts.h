/*
 * playout_mcts.h - plain UCT with uniformly random playouts, over the generic game interface.
 *
 * This is the "basic MCTS" baseline of the MAV paper (uniform prior, random rollouts) and
 * the value annotator for Hex boards too large for the exact solver.  It works for every
 * game of the registry.
 *
 * Each simulation descends from the root: at a node with untried legal moves it expands
 * one of them, chosen uniformly at random, plays a uniformly random playout from the new
 * node to the end of the game (mg_random_playout, or the configured playout), and backs
 * the result up; at a fully
 * expanded node it follows the child maximising UCB1,
 *     q(child) + c * sqrt(ln N(node) / N(child)),
 * q being the mean score of the child for the player who moved into it.  Scores are
 * 1 win, 0.5 draw, 0 loss; a playout cut off by max_playout_plies scores 0.5.  Terminal
 * nodes back up their result each time they are reached.
 *
 * Memory: one arena of simulations + 1 nodes (each simulation adds at most one) plus a
 * bitmap over the action ids, allocated once per call; selection, expansion and playouts
 * never allocate.  Randomness comes from one generator seeded with `seed`: the same call
 * gives the same result.  No global state; calls may run in parallel threads.
 */
#ifndef MG_PLAYOUT_MCTS_H
#define MG_PLAYOUT_MCTS_H
#include "../game.h"

struct mg_cancel;

#ifdef __cplusplus
extern "C" {
#endif

/* Upper bound on `simulations` (keeps the arena below about 2.5 GB). */
#define MG_PMCTS_MAX_SIMULATIONS 50000000

typedef struct mg_pmcts_config {
    int simulations;          /* >= 1 */
    double c;                 /* UCB1 exploration constant, >= 0 (default sqrt(2)) */
    uint64_t seed;            /* random generator seed */
    int max_playout_plies;    /* 0: play every playout to the end */
    /* The playout (NULL: mg_random_playout).  It gets a scratch copy of the state and may
     * modify it; it must return the result with the distribution of a uniformly random
     * playout, e.g. mg_hex_fill_playout for Hex (the same outcomes, about 10x faster). */
    int (*playout)(const mg_game *g, void *st, struct mg_rng *rng, int max_plies, int *plies);
    /* NULL: none.  Ticked once per simulation (see cancel.h).  A stop (a signal or a time
     * budget, as the caller's poll decides) ends the search between two simulations with
     * cancel->stopped set: the result holds the simulations done so far (`stopped` = 1,
     * `simulations` < the configured count) and the call returns MG_OK; a stop before the
     * first simulation returns MG_ERR ("interrupted").  The tree is freed either way. */
    struct mg_cancel *cancel;
} mg_pmcts_config;

typedef struct mg_pmcts_result {
    int nmoves;                       /* legal moves at the root */
    int32_t actions[MG_MAX_MOVES];    /* in the order of legal_actions() */
    uint32_t visits[MG_MAX_MOVES];    /* simulations through each move */
    double q[MG_MAX_MOVES];           /* mean score of each move for the player to move at the
                                         root, in [0, 1]; NaN for an unvisited move */
    double value;                     /* mean score of all simulations for that player */
    int best;                         /* index of the most visited move (ties: higher q, then
                                         the first) */
    uint32_t nodes;                   /* tree nodes created */
    uint64_t playout_plies;           /* moves played in playouts */
    int simulations;                  /* simulations run (cfg->simulations unless stopped) */
    int stopped;                      /* 1 if `cancel` stopped the search early */
} mg_pmcts_result;

/* simulations 1000, c sqrt(2), seed 0, max_playout_plies 0, playout NULL, cancel NULL. */
void mg_pmcts_config_default(mg_pmcts_config *c);

/* Search from `root` (not modified).  MG_ERR with a message for a bad configuration, a
 * finished game (no moves to value) or a failed allocation. */
int mg_playout_mcts(const mg_game *g, const void *root, const mg_pmcts_config *cfg, mg_pmcts_result *out, char *err,
                    size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

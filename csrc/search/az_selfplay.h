/*
 * az_selfplay.h - AlphaZero self-play: many games at once, each with its own C MCTS tree
 * (search/mcts.h, prior = the network's policy), whose leaves are gathered into one batch for
 * one network call outside C, then backed up.
 *
 * Loop (the caller's): n = mg_az_gather(sp, obs) writes the observation tensors of the leaves
 * of every game that waits for the network (n x obs_size floats); the caller runs the network
 * on them and hands back logits (n x num_actions) and values (n, in [-1, 1] for the player to
 * move at each leaf) to mg_az_scatter(sp, ...), which turns the logits into the priors over the
 * leaf's legal actions (softmax) and backs the values up.  Repeat until gather answers 0.
 *
 * In each game: a fresh tree per move (AlphaZero's), num_simulations simulations (the root's
 * evaluation is the first); Dirichlet noise at the root comes from the MCTS config.  The move:
 * for the first temperature_plies plies sampled with probability proportional to
 * N(a)^(1 / temperature), then the most visited (robust) child.  Each move stores a training
 * example: the root's observation, pi(a) = N(a) / sum_b N(b) over the root's (legal) actions
 * (0 elsewhere), and, once the game is over, z = the result from the mover's view (+1 win,
 * 0 draw, -1 loss).  A game reaching max_plies (> 0) is scored a draw.  New games start from
 * `start` until num_games_total games have started; gather returns 0 once all are over.
 *
 * Evaluation cache (cache_log2 > 0, like OpenSpiel's AlphaZero evaluator): a leaf whose position
 * (game hash, same number of legal actions) was evaluated before gets the stored priors and value
 * without going to the network.
 *
 * No global state; the randomness of game i comes from generators seeded by (seed, i), so a
 * run is reproducible for the same network outputs.
 */
#ifndef MG_SEARCH_AZ_SELFPLAY_H
#define MG_SEARCH_AZ_SELFPLAY_H

#include <stdint.h>

#include "../game.h"
#include "mcts.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mg_az_config {
    mg_mcts_config mcts;       /* prior must be MG_MCTS_PRIOR_POLICY, engine mode */
    int parallel_games;        /* games in flight at once (>= 1) */
    int64_t num_games_total;   /* games to play (>= 1) */
    int num_simulations;       /* per move (>= 2: the root's evaluation plus at least one visit) */
    int temperature_plies;     /* plies (from the start position) sampled with the temperature */
    double temperature;        /* > 0 */
    int max_plies;             /* > 0: a game reaching it is a draw; 0: no limit */
    int cache_log2;            /* > 0: an evaluation cache of 2^cache_log2 positions (by the game's hash;
                                  a new answer replaces the entry), shared by the games; 0: none */
    uint64_t seed;
} mg_az_config;

/* AlphaZero's settings: PUCT with c(s) = log((1 + N + 19652) / 19652) + 1.25, policy prior
 * without uniform mixing, fpu 0 (an unvisited action's Q), root noise Dir(0.3) mixed at 0.25,
 * B = 1, 16 games in flight, 64 games, 100 simulations, temperature 1 for 30 plies, no limit,
 * no cache. */
void mg_az_config_default(mg_az_config *c);
int mg_az_config_check(const mg_az_config *c, char *err, size_t errlen);

typedef struct mg_az_selfplay mg_az_selfplay;

typedef struct mg_az_stats {
    int64_t games_started, games_finished;
    int64_t p0_wins, p1_wins, draws, cut_draws; /* cut_draws: of the draws, by max_plies */
    int64_t moves;             /* moves played (examples made) */
    int64_t evaluations;       /* positions handed to the network */
    int64_t batches;           /* gather calls that returned positions */
    int64_t cache_hits;        /* leaves answered by the evaluation cache (not in evaluations) */
    double search_seconds;     /* inside gather and scatter (tree work, observations, softmax) */
} mg_az_stats;

/* Self-play of game g from `start` (g->state_size bytes, not over).  NULL with a message on a
 * bad config or state, or out of memory. */
mg_az_selfplay *mg_az_create(const mg_game *g, const void *start, const mg_az_config *cfg, char *err,
                             size_t errlen);
void mg_az_free(mg_az_selfplay *sp);
/* Floats per observation (planes * rows * cols of the start state) and its shape. */
int mg_az_obs_size(const mg_az_selfplay *sp);
void mg_az_obs_shape(const mg_az_selfplay *sp, int shape[3]);
/* The most positions one gather can return (parallel_games * batch size). */
int mg_az_max_batch(const mg_az_selfplay *sp);

/* Plays on until every game in flight waits for the network; writes their leaves' observations
 * into obs (room for mg_az_max_batch * obs_size floats) and returns how many (0: all games are
 * over), or MG_ERR (-1) with a message. */
int mg_az_gather(mg_az_selfplay *sp, float *obs, char *err, size_t errlen);
/* The network's answer for the last gather's n positions: logits[n * num_actions], values[n].
 * MG_ERR naming the first non-finite logit of a legal action or value outside [-1, 1]. */
int mg_az_scatter(mg_az_selfplay *sp, const float *logits, const float *values, char *err, size_t errlen);

/* AZdb team: latents[2 * game + side] is the latent of the player of `side` (0: first player) in
 * game number `game` (num_games_total * 2 entries, each in [0, num_latents)); weights (may be NULL:
 * no intrinsic reward) num_latents x obs_size floats, w_l, such that the intrinsic reward of a
 * move of latent l is w_l . observation(position after the move) (AZdb's equation 8 with phi read
 * from the observation).  Before the first gather; not with the evaluation cache (its key is the
 * position alone).  Two-player alternating games. */
int mg_az_set_team(mg_az_selfplay *sp, int num_latents, const int32_t *latents, const float *weights, char *err,
                   size_t errlen);
/* The first n rows of the last gather: game number, the latent of the tree's root mover (whose
 * latent the whole search uses; 0 without a team), the intrinsic rewards of the root mover's
 * moves summed along the path from the root to the leaf (the root mover's view; 0 without
 * weights), and own = 1 where the root mover is to move at the leaf.  Any pointer may be NULL. */
void mg_az_row_info(const mg_az_selfplay *sp, int n, int64_t *game, int32_t *latent, float *reward, int8_t *own);

/* AZdb's intrinsic rewards summed from the root to a leaf: sum of w . observation(position after the
 * move) over the moves of the root's mover along `path` (`depth` actions from `root`; the
 * opponent's moves count 0), written to *sum.  w and tmp_obs hold obs_size floats (the game's
 * observation size); tmp_state (g->state_size) and tmp_undo (g->undo_size) are caller-owned
 * scratch.  err NULL: the path is trusted (the search tree's own paths).  Otherwise MG_ERR with a
 * message naming the first action that is not legal where it is played (*sum untouched).  Used by
 * self-play (row_info) and by play-time searches (mavgame._core.az_path_rewards). */
int mg_az_path_reward(const mg_game *g, const void *root, const int32_t *path, int depth, const float *w,
                      int obs_size, void *tmp_state, void *tmp_undo, float *tmp_obs, double *sum, char *err,
                      size_t errlen);

/* Finished games' examples not yet taken. */
int64_t mg_az_num_examples(const mg_az_selfplay *sp);
/* Copies them out and forgets them: obs[n * obs_size], pi[n * num_actions], z[n], for each its
 * game number (in order of start) and ply, and obs_after[n * obs_size], the observation of the
 * position after the move played (AZdb's diversity features phi(s, a) are read from it); any
 * pointer may be NULL. */
void mg_az_take_examples(mg_az_selfplay *sp, float *obs, float *pi, float *z, int64_t *game, int32_t *ply,
                         float *obs_after);
void mg_az_get_stats(const mg_az_selfplay *sp, mg_az_stats *s);

#ifdef __cplusplus
}
#endif
#endif /* MG_SEARCH_AZ_SELFPLAY_H */

/*
 * mcts.h - AlphaZero-style MCTS guided by MAV action values (the MAV paper's external
 * search), with asynchronous batches and dynamic virtual counts.
 *
 * Selection: PUCT, score(s, a) = Q(s, a) + c(s) * P(s, a) * sqrt(N(s)) / (1 + N(s, a)), with
 * c(s) a constant (c_puct) or AlphaZero's log((1 + N(s) + c_base) / c_base) + c_init.
 *
 * Prior (the paper's equation 1): from the leaf's action values (win probabilities q in
 * [0, 1]), greedy(a) = exp(q_a / tau) / sum over the top-k actions of exp(q / tau) for the
 * k best actions (all of them if there are at most k; actions tied with the k-th value count
 * as top-k too), 0 otherwise; actions without a value get only the uniform part;
 * P(a) = (1 - eps) * greedy(a) + eps / |legal|.  tau can follow the move number (a
 * piecewise-constant schedule).  With prior = MG_MCTS_PRIOR_POLICY, P is the evaluator's
 * policy (normalised over the legal actions), mixed with eps uniform the same way.
 *
 * Values: a node's value is the maximum of its state-action values (or the evaluator's
 * explicit leaf value), from the perspective of the player to move there, mapped from
 * [0, 1] to [-1, 1].  Backup flips the sign for each edge whose mover differs from the
 * leaf's mover.  Terminal states use the game outcome (+1 win, 0 draw, -1 loss for the
 * mover).  Q(s, a) = W(s, a) / N(s, a); an unvisited action starts at its own evaluator
 * value (or `fpu`).
 *
 * Asynchronous batches: B leaves are selected one after another; each selected path gets
 * virtual counts, so that the next selection avoids it.  Dynamic virtual counts: the pair
 * at depth d above the leaf gets max(n_min, floor(n_max / 2^d)) virtual visits (they enter
 * N in the exploration term only).  Static virtual loss (the baseline): every pair on the
 * path gets `virtual_loss` visits counted as losses.  The batch is evaluated together;
 * results are backed up one by one in arrival order, removing the virtual counts; results
 * that did not arrive before the timeout are dropped (virtual counts removed, the leaf
 * left unevaluated for a later batch; they still use up simulation budget).  A selection
 * that ends on a leaf already waiting in the batch (a collision) keeps its virtual counts
 * until the batch is backed up and adds no visit.
 *
 * Hallucinations: a leaf whose evaluation is invalid (unparseable model output, a
 * malformed predicted state or move list) is marked hallucinated and is never selected
 * again; a node whose children are all hallucinated becomes one too.  `invalid` EXCLUDE (the
 * default, the paper's minus infinity): nothing is backed up (the simulation is counted as
 * dropped), the leaf keeps 0 visits and its root Q reads -infinity; LOSS: its one visit is
 * backed up as a loss for the player who moved into it (the lowest value in bounds).
 *
 * Final move: the robust child (most visits), total value W as tie-breaker.  Tree reuse:
 * mg_mcts_advance() keeps the subtree of the played move (compacted into the spare arena).
 *
 * Memory: nodes and edges live in arenas owned by the search object, grown only at the
 * start of a search and during expansion; selection never allocates.  No global state;
 * all randomness comes from the object's seeded generator, so a search is reproducible.
 */
#ifndef MG_SEARCH_MCTS_H
#define MG_SEARCH_MCTS_H

#include <stddef.h>
#include <stdint.h>

#include "../game.h"
#include "evaluator.h"
#include "mcts_config.h"

struct mg_cancel;

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults: engine mode, B = 1, no timeout, dynamic counts n_max 8 / n_min 2, virtual loss 3,
 * AlphaZero c(s) (c_base 19652, c_init 1.25), MAV prior k 5, eps 0.1, tau 0.1, fpu NaN, invalid EXCLUDE, seed 0. */
void mg_mcts_config_default(mg_mcts_config *c);
/* MG_OK or MG_ERR naming the bad field and value. */
int mg_mcts_config_check(const mg_mcts_config *c, char *err, size_t errlen);
/* log((1 + n + c_base) / c_base) of AlphaZero's c(s), finite for every finite c_base > 0 and n >= 0
 * (computed as log(1 + n + c_base) - log(c_base) where the quotient overflows: c_base below ~1e-290). */
double mg_mcts_c_base_log(double c_base, double n);

/* New search object for game `g` (may be NULL in state-tracking mode: the tree then never
 * touches an engine).  NULL with a message on a bad config or out of memory. */
mg_mcts *mg_mcts_create(const mg_game *g, const mg_mcts_config *cfg, char *err, size_t errlen);
void mg_mcts_free(mg_mcts *m);
const mg_mcts_config *mg_mcts_get_config(const mg_mcts *m);

/* Engine mode: a fresh tree at `state` (game->state_size bytes); `ply` is the move number
 * used by the tau schedule. */
int mg_mcts_set_root(mg_mcts *m, const void *state, int ply, char *err, size_t errlen);
/* State-tracking mode: a fresh tree at the state described by `text` (to_move: the player
 * to move there).  The root keeps this text: the evaluator's predicted state for the root
 * request does not replace it, and its children are asked from it. */
int mg_mcts_set_root_text(mg_mcts *m, const char *text, int to_move, int ply, char *err, size_t errlen);
/* Re-root at the child reached by `action` (engine mode; must be legal at the root) or by
 * the move string `move` (state tracking; must be one of the root's predicted moves),
 * keeping its subtree.  If the root was not expanded or the move is unknown to the tree,
 * the tree restarts at the new position (engine mode) or fails (state tracking, whose
 * child text only the tree knows). */
int mg_mcts_advance(mg_mcts *m, int32_t action, char *err, size_t errlen);
int mg_mcts_advance_move(mg_mcts *m, const char *move, char *err, size_t errlen);

/* Run `num_simulations` simulations with `ev`.  MG_ERR if the evaluator failed (its message),
 * if no root was set, or on out of memory; the tree stays consistent (no virtual counts). */
int mg_mcts_search(mg_mcts *m, const mg_evaluator *ev, int num_simulations, char *err, size_t errlen);
/* The same, checking `cancel` (may be NULL; see cancel.h) before each batch but the first: a stop ends the
 * search between batches with MG_ERR ("interrupted") and cancel->stopped set; the tree stays
 * consistent and keeps the simulations done (stats count them), so a later search goes on. */
int mg_mcts_search_cancel(mg_mcts *m, const mg_evaluator *ev, int num_simulations, struct mg_cancel *cancel,
                          char *err, size_t errlen);

/* ---- Step API: the search loop driven by the caller (an evaluator outside C, e.g. one network
 * call for the leaves of many trees).  mg_mcts_search_cancel is begin, then gather / evaluate /
 * scatter until gather answers 0, then finish.
 *   mg_mcts_begin(m, ev, n): checks and resets as mg_mcts_search does (ev may be NULL: the
 *     caller evaluates; its mode is checked otherwise).
 *   mg_mcts_gather(m, &req, &res): selects the next batch (up to batch_size leaves, with virtual
 *     counts; terminal visits are backed up on the way) and returns its number of requests,
 *     n > 0, with req[0..n) and res[0..n) (preset as for an evaluator), or 0 when the search is
 *     over (budget used, proven root, or no progress possible).
 *   mg_mcts_scatter(m): backs the results of the batch up (as an evaluator's); MG_ERR on out of
 *     memory (the search is then over, the tree consistent).
 *   mg_mcts_abort(m): drops the batch (virtual counts and pending marks removed).
 *   mg_mcts_finish(m): final statistics (simulations, nodes, elapsed). */
int mg_mcts_begin(mg_mcts *m, const mg_evaluator *ev, int num_simulations, char *err, size_t errlen);
int mg_mcts_gather(mg_mcts *m, const mg_eval_request **req, mg_eval_result **res);
int mg_mcts_scatter(mg_mcts *m, char *err, size_t errlen);
void mg_mcts_abort(mg_mcts *m);
void mg_mcts_finish(mg_mcts *m);

/* ---- Results ---- */
/* Number of root edges (0 before the root is expanded, or at a terminal root). */
int mg_mcts_num_root_edges(const mg_mcts *m);
/* Root edge arrays (each with mg_mcts_num_root_edges entries; any pointer may be NULL):
 * actions (engine: action ids; state tracking: the edge index), visits, Q in [-1, 1] from
 * the root mover's view (NaN if unvisited), priors, the evaluator's values in [0, 1] (NaN
 * if none), and flags (1: hallucinated). */
void mg_mcts_root_edges(const mg_mcts *m, int32_t *actions, uint32_t *visits, double *q, float *prior,
                        float *values, uint8_t *hallucinated);
/* The PUCT exploration term of each root edge, U(s, a) = c(s) P(s, a) sqrt(N(s)) / (1 + N(s, a))
 * with the root's N(s) (the score is Q + U); u has mg_mcts_num_root_edges entries. */
void mg_mcts_root_u(const mg_mcts *m, double *u);
/* Priors of the edges of the node reached by `path` (len steps from the root, as in
 * mg_mcts_path_virtual), at most `max` of them into prior (may be NULL).  Returns the node's
 * number of edges (0: not expanded), or -1 if the path leaves the tree. */
int mg_mcts_path_priors(const mg_mcts *m, const int32_t *path, int len, float *prior, int max);
/* Virtual counts in flight along a path of `len` steps from the root (engine mode: action
 * ids; state tracking: edge indices, as in mg_eval_request.path): out[0] the root's, out[i + 1]
 * the pair of step i (out has len + 1 entries).  Returns len, or -1 if the path leaves the
 * tree.  For tests and diagnostics, e.g. from inside an evaluator while its batch is out. */
int mg_mcts_path_virtual(const mg_mcts *m, const int32_t *path, int len, uint32_t *out);
/* State tracking: the move string of root edge i (NULL if out of range). */
const char *mg_mcts_root_move(const mg_mcts *m, int i);
/* Index of the robust child among the root edges (-1 if none). */
int mg_mcts_best_edge(const mg_mcts *m);
/* The best action (engine mode), -1 if there is none. */
int32_t mg_mcts_best_action(const mg_mcts *m);
/* Principal variation: edge choices by most visits (total value tie-break) from the root,
 * following visited children; writes up to `max` root-relative edge indices per level
 * into `edges` (each the index among that node's edges) and the actions into `actions`
 * (state tracking: -1); either may be NULL.  Returns its length. */
int mg_mcts_pv(const mg_mcts *m, int32_t *actions, int32_t *edges, int max);
/* State tracking: the move string at step i of the principal variation chosen by edges[]. */
const char *mg_mcts_pv_move(const mg_mcts *m, const int32_t *edges, int len, int i);
/* Root visit count, root value (mean of the backed-up values, root mover's view), and the
 * root text (state tracking; "" otherwise). */
uint32_t mg_mcts_root_visits(const mg_mcts *m);
double mg_mcts_root_value(const mg_mcts *m);
const char *mg_mcts_root_text(const mg_mcts *m);
int mg_mcts_root_to_move(const mg_mcts *m);
/* Root terminal result (enum mg_result; MG_ONGOING if not terminal or unknown). */
int mg_mcts_root_result(const mg_mcts *m);
void mg_mcts_get_stats(const mg_mcts *m, mg_mcts_stats *s);

/* Check the tree invariants: no virtual counts left, for every evaluated non-terminal node
 * N(s) = 1 + sum of its children's N (plus depth cut-offs), every Q and value within
 * [-1, 1], priors non-negative summing to 1.  MG_OK, or MG_ERR describing the first
 * violation. */
int mg_mcts_check(const mg_mcts *m, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* MG_SEARCH_MCTS_H */

/*
 * mcts_multi.h - the searches of many MCTS trees (search/mcts.h) run together, the leaves of all of
 * them evaluated in one evaluator call per round: MAV-MCTS over many concurrent games with one batched
 * model call (the way AlphaZero self-play batches across games, az_selfplay.c).
 *
 * Each round gathers the next batch of every tree still searching (mg_mcts_gather: up to that
 * tree's own batch_size leaves, its virtual counts, its random tie-breaks), concatenates the
 * requests of the trees that share an evaluator (and a timeout) into one call, hands each tree its
 * results back and scatters them (mg_mcts_scatter).  A tree whose gather answers 0 is finished
 * (mg_mcts_finish) and leaves the rounds.  So every tree goes through exactly the steps of
 * mg_mcts_search_cancel with its own budget: with an evaluator whose answer to a leaf does not
 * depend on the other leaves of its call (constant, the native model, the Connect Four oracle) each
 * tree ends exactly as its own sequential search with the same seed would.  An evaluator that
 * draws from one generator for every leaf (the playout evaluator) answers the same leaves with
 * other draws when the trees share it; give each tree its own (with its own seed) for results
 * equal to the sequential searches: trees with different evaluators are called separately, in
 * the same round.
 *
 * Requests and results are copied into the object's buffers, sized at the start of a search for
 * the largest round it can form (the sum of min(batch_size, num_simulations) over the trees) and
 * grown only then: a round allocates nothing.  The results' value/policy/text buffers stay the
 * trees' own (the copies point into them), so nothing is copied but the small structs.
 *
 * Cancellation (cancel.h): checked before each round but the first; a stop ends every search
 * between rounds (no batch out, no virtual counts) with MG_ERR "interrupted" and cancel->stopped
 * set; the trees keep the simulations done, as mg_mcts_search_cancel does.  An evaluator error
 * aborts every tree's batch of that round (the trees stay consistent) and ends all searches.
 */
#ifndef MG_SEARCH_MCTS_MULTI_H
#define MG_SEARCH_MCTS_MULTI_H

#include <stddef.h>
#include <stdint.h>

#include "evaluator.h"
#include "mcts.h"

struct mg_cancel;

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mg_mcts_multi mg_mcts_multi;

/* Counters of the last mg_mcts_multi_search: rounds, evaluator calls, requests evaluated, the
 * largest call (requests), and the seconds spent in evaluator calls. */
typedef struct mg_mcts_multi_stats {
    int64_t rounds, calls, requests;
    int max_call;
    double eval_seconds;
} mg_mcts_multi_stats;

/* A multi-search object (its buffers start empty).  NULL with a message on out of memory. */
mg_mcts_multi *mg_mcts_multi_create(char *err, size_t errlen);
void mg_mcts_multi_free(mg_mcts_multi *mm);

/* Search trees[0..k) together, tree i with evs[i] (trees sharing an evaluator pointer and a
 * timeout are evaluated in one call per round; an evaluator's ctx serves one call at a time, so
 * one evaluator may appear many times) for num_simulations[i] simulations.  Every tree must have a
 * root and be distinct.  rcs (may be NULL): per-tree MG_OK / MG_ERR.  Returns MG_OK if every search
 * ran to its end, else MG_ERR with the first message (a bad argument before anything ran, an
 * evaluator's error, out of memory, or "interrupted" after a cancellation). */
int mg_mcts_multi_search(mg_mcts_multi *mm, mg_mcts *const *trees, const mg_evaluator *const *evs,
                         const int *num_simulations, int k, struct mg_cancel *cancel, int *rcs, char *err,
                         size_t errlen);

void mg_mcts_multi_get_stats(const mg_mcts_multi *mm, mg_mcts_multi_stats *s);

#ifdef __cplusplus
}
#endif
#endif /* MG_SEARCH_MCTS_MULTI_H */

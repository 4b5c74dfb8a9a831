/*
 * c4_evaluator.h - the perfect Connect Four oracle as an MCTS evaluator (search/evaluator.h),
 * for connect_four only.
 */
#ifndef MG_C4_EVALUATOR_H
#define MG_C4_EVALUATOR_H

#include <stdint.h>

#include "../../search/evaluator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Each legal column valued by its exact solver score s (c4_solver.h) mapped monotonically into
 * [0, 1]: 0.5 for a draw, 0.75 + 0.25 s / 18 for a win (faster wins higher), 0.25 + 0.25 s / 18
 * for a loss.  tt_log2: solver table size (0: the solver's default); max_nodes: budget per solve
 * (0: none; unsolved columns get no value).  MG_OK and *ev filled, or MG_ERR with a message;
 * mg_evaluator_free releases it. */
int mg_eval_c4_solver_create(mg_evaluator *ev, int tt_log2, uint64_t max_nodes, char *err, size_t errlen);
/* The value in [0, 1] of solver score `score` (the mapping above). */
double mg_eval_c4_score_value(int score);

#ifdef __cplusplus
}
#endif
#endif /* MG_C4_EVALUATOR_H */

/*
 * mav_eval_io.h - the MAV side of a model evaluator (evaluator.h): the prompt of a leaf request
 * and the reading of the model's answer into a result.  One implementation for every model
 * evaluator: the Python-callable one (bind/py_mcts_eval.c) and the native engine (mcts_eval_model.c).
 *
 *   engine mode      prompt = the leaf state in the spec's state form ("%state %top_all
 *                    %best_action" by default); the answer's %top entries of legal moves give
 *                    the values (bucket midpoints) of the request's legal actions.
 *   state tracking   root: the root text in the state form; other leaves: the transition form
 *                    (%prev_state = parent's predicted text, %prev_action = the move); the answer
 *                    gives the predicted state text, its moves with values, or a game result.
 */
#ifndef MG_SEARCH_MAV_EVAL_IO_H
#define MG_SEARCH_MAV_EVAL_IO_H

#include <stddef.h>

#include "../format/mav.h"
#include "../game.h"
#include "evaluator.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MG_EVAL_PROMPT_CAP 8192
#define MG_EVAL_OUTPUT_CAP 65536

typedef struct mg_eval_format {
    const mg_game *g;
    mg_config cfg;
    int fmt;                 /* MAV prompts and text outputs are available (the game has a MAV format) */
    mg_mav_spec spec;        /* engine: state form; state tracking: transition form */
    mg_mav_spec root_spec;   /* state tracking, root request: the state form */
} mg_eval_format;

/* Set up the format for game g (NULL: none) in engine or state-tracking mode; spec NULL: the
 * default of the mode.  A game without a MAV format gives fmt = 0 (MG_OK) unless a spec was
 * given.  MG_ERR with a message for a bad spec. */
int mg_eval_format_init(mg_eval_format *f, const mg_game *g, const mg_config *cfg, int state_tracking,
                        const char *spec, char *err, size_t errlen);

/* The MAV prompt of a request into out (NUL-terminated); its length, 0 if it cannot be written
 * (no MAV format, or a predicted text that does not convert). */
size_t mg_eval_prompt(const mg_eval_format *f, const mg_eval_request *q, char *out, size_t cap);

/* Fill r from MAV output text[0..len) (the answer to the request's prompt, or a whole MAV text
 * starting with its header).  scratch: MG_EVAL_PROMPT_CAP + MG_EVAL_OUTPUT_CAP + 1 bytes; parsed:
 * parser scratch.  0, or -1 if the output is unusable (the leaf is then invalid). */
int mg_eval_read_output(const mg_eval_format *f, const mg_eval_request *q, const char *text, size_t len,
                        mg_eval_result *r, char *scratch, mg_mav_result *parsed);

/* Results read from an evaluator outside C (a Python callable), whose numbers may be anything:
 * the arrival rank clamped to +-1e9; a predicted result out of any enum mg_result range kept out
 * of range (the search then finds the answer invalid) instead of wrapping into one. */
void mg_eval_set_seq(mg_eval_result *r, long long seq);
void mg_eval_set_result(mg_eval_result *r, long long result);

#ifdef __cplusplus
}
#endif
#endif

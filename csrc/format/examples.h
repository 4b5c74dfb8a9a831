/*
 * examples.h - randomised MAV training examples (the MAV paper's data randomisation).
 *
 * From a position, its annotation (values of the legal moves, the best move) and optionally
 * the previous position and move, build one (prompt, target) pair with a random command
 * list, tokenised, with a loss mask that is 0 on the prompt and 1 on the target:
 *
 *   - transition form (%prev_state/%prev_fen + %prev_action, the model writes the current
 *     state) with probability p_transition when a previous state is given, else the plain
 *     current state as input;
 *   - %top_all with probability p_top_all, else %top_k with k uniform in 1 .. n_legal + k_slack
 *     (so k may exceed the number of legal moves); with a partial annotation k <= annotated; a
 *     terminal state has no legal moves, so its k is at most k_slack, which tells a model that the
 *     game is over without a look at the board: with k_terminal_prev its k is drawn as if it had the
 *     previous state's legal moves (when a previous state is given);
 *   - chess family: %state only, %fen only, or both in random order, per state group;
 *   - %best_action with probability p_best, then the state after it with probability p_after;
 *   - the %top moves in random order with probability p_shuffle (else best first).
 *
 * The randomness comes from a caller-owned mg_rng: the same seed gives the same examples.
 */
#ifndef MG_EXAMPLES_H
#define MG_EXAMPLES_H
#include <stddef.h>
#include <stdint.h>

#include "../rng.h"
#include "mav.h"
#include "tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mg_mav_example_opts {
    double p_transition;
    double p_top;          /* a %top command (one output is always present) */
    double p_top_all;
    int k_slack;
    double p_best;
    double p_after;
    double p_shuffle;
    double p_state_only;   /* chess family: state groups with %state only */
    double p_fen_only;     /* ... %fen only; the rest have both, in random order */
    int add_bos, add_eos;  /* <bos> before the prompt (mask 0), <eos> after the target (mask 1) */
    int k_terminal_prev;   /* 1: a terminal state's %top_k range is the previous state's (0: 1..k_slack) */
} mg_mav_example_opts;

void mg_mav_example_opts_default(mg_mav_example_opts *o);
/* MG_OK if the probabilities lie in [0, 1] and k_slack >= 0, else MG_ERR naming the option. */
int mg_mav_example_opts_check(const mg_mav_example_opts *o, char *err, size_t errlen);

/* Draw a command list.  n_legal: legal moves of the current state (of a terminal state: the number
 * whose range its %top_k is drawn from, 0 or, with k_terminal_prev, the previous state's); n_ann:
 * annotated moves; can_transition: a previous state is given; terminal: the current state is terminal. */
int mg_mav_example_spec(const mg_game *g, const mg_mav_example_opts *o, mg_rng *rng, int n_legal, int n_ann,
                        int can_transition, int terminal, mg_mav_spec *spec, char *err, size_t errlen);

/* Build one example into ids/mask (room for cap entries).  `text` (textlen bytes) is scratch
 * for the prompt and target text (on return it holds prompt then target, NUL-terminated, and
 * *prompt_len is the prompt's length).  in->order is ignored (the shuffle is drawn here).
 * Returns the number of tokens, or -1 with a message (bad input, or cap/textlen too small). */
long mg_mav_example_build(const mg_tokenizer *t, const mg_game *g, const mg_mav_input *in,
                          const mg_mav_example_opts *o, mg_rng *rng, int32_t *ids, uint8_t *mask, size_t cap,
                          char *text, size_t textlen, size_t *prompt_len, mg_mav_spec *spec_out, char *err,
                          size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

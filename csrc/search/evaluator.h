/*
 * evaluator.h - the C evaluator interface of the MAV-guided MCTS (search/mcts.h).
 *
 * An evaluator receives a batch of leaf requests and returns, for each, the values of the
 * leaf's actions (and/or a policy, a leaf value, and in state-tracking mode the predicted
 * state text and legal moves).  The search calls it once per batch; everything it writes
 * goes into buffers the search owns, so an evaluator never allocates per request.
 *
 * Two world models:
 *  - engine mode (MG_EVAL_ENGINE): the C game engine gives transitions, legal actions and
 *    terminal states.  A request carries the leaf state and its legal actions; the
 *    evaluator writes values[i] / policy[i] for legal[i] (NaN: no value for that action).
 *  - state-tracking mode (MG_EVAL_STATE_TRACKING, engine-free): a request carries the
 *    predicted text of the leaf's parent and the move played from it (or, for the root,
 *    the root text); the evaluator writes the child's predicted state text, its legal
 *    moves (strings) with values, or a predicted game result if the state is terminal.
 *
 * Values are expected scores for the player to move at the leaf, in [0, 1] (1 win, 0.5
 * draw, 0 loss: the win probabilities of the MAV format).  A result with values outside
 * [0, 1], no usable value at all, or (state tracking) a malformed state or move list is
 * treated as a hallucination by the search: it never crashes on it.
 *
 * Asynchrony: the search sets every result's status to MG_EVAL_DROPPED before the call;
 * the evaluator sets MG_EVAL_OK (or MG_EVAL_INVALID for output it could not parse) for
 * each request that returned before `timeout` seconds (<= 0: no timeout) and numbers
 * them in arrival order through `seq`.  The search backs results up one by one in `seq`
 * order and drops the rest (removing their virtual counts).
 *
 * A native model evaluator implements `evaluate` like the built-in ones below: it builds
 * prompts from the requests (state text via game->to_text, or parent_text + move), runs
 * the model on the batch and parses the outputs into the result buffers.
 */
#ifndef MG_SEARCH_EVALUATOR_H
#define MG_SEARCH_EVALUATOR_H

#include <stdint.h>

#include "../game.h"

#ifdef __cplusplus
extern "C" {
#endif

enum mg_eval_mode {
    MG_EVAL_ENGINE = 0,
    MG_EVAL_STATE_TRACKING = 1
};

enum mg_eval_status {
    MG_EVAL_DROPPED = 0, /* not returned (timed out, cancelled): the search drops it */
    MG_EVAL_OK = 1,
    MG_EVAL_INVALID = 2  /* unparseable output: the node is marked hallucinated */
};

/* The evaluator is so cheap that the search does not time its calls (stats.eval_seconds). */
#define MG_EVAL_FLAG_CHEAP 1u

typedef struct mg_eval_request {
    int index;               /* position in the batch */
    int mode;                /* enum mg_eval_mode */
    int to_move;             /* player to move at the leaf (state tracking: predicted, alternating) */
    int ply;                 /* move number of the leaf (root ply + depth) */
    int depth;               /* depth of the leaf below the search root */
    /* Engine mode. */
    const void *state;       /* the leaf state (game->state_size bytes, read-only) */
    int num_legal;           /* its legal actions (>= 1; terminal leaves are never requested) */
    const int32_t *legal;
    const int32_t *path;     /* the actions from the search root to the leaf (depth entries) */
    /* State-tracking mode. */
    const char *text;        /* root request: the root's state text; NULL otherwise */
    const char *parent_text; /* non-root request: the predicted text of the leaf's parent */
    const char *move;        /* non-root request: the move played from parent_text */
} mg_eval_request;

typedef struct mg_eval_result {
    int status;              /* enum mg_eval_status (preset to MG_EVAL_DROPPED) */
    int seq;                 /* arrival order, lower first (preset to the request index) */
    double value;            /* leaf value in [0, 1] for the player to move; NaN (preset):
                                the maximum of `values` */
    /* Engine mode: num_moves == request num_legal and values/policy align with legal[].
     * State tracking: the evaluator sets num_moves and fills moves[] (its predicted legal
     * moves) with values/policy aligned to them. */
    int num_moves;
    float *values;           /* [MG_MAX_MOVES] win probabilities, NaN (preset) = unknown */
    float *policy;           /* [MG_MAX_MOVES] prior probabilities, NaN (preset) = none */
    char (*moves)[MG_MAX_MOVE_STR]; /* state tracking: [MG_MAX_MOVES] move strings */
    char *text;              /* state tracking: predicted state text ("" preset) */
    size_t text_cap;         /* MG_MAX_TEXT */
    int result;              /* state tracking: predicted enum mg_result (MG_ONGOING preset) */
} mg_eval_result;

typedef struct mg_evaluator {
    const char *name;
    void *ctx;
    /* Which modes it supports (bit 1 << MG_EVAL_ENGINE, 1 << MG_EVAL_STATE_TRACKING). */
    unsigned modes;
    /* MG_EVAL_FLAG_*. */
    unsigned flags;
    /* Evaluate n requests into res[0..n).  Returns MG_OK, or MG_ERR with a message in
     * err, which aborts the search (the tree is left consistent). */
    int (*evaluate)(void *ctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                    double timeout, char *err, size_t errlen);
    /* Releases ctx (may be NULL). */
    void (*destroy)(void *ctx);
    /* Non-zero while a search uses it: an evaluator's ctx is not thread-safe, so the Python
     * binding lets one search at a time use it (zero it when filling the struct). */
    int busy;
} mg_evaluator;

/* ---- Built-in evaluators (search/mcts_evaluators.c).  Each returns MG_OK and fills *ev,
 * or MG_ERR with a message; mg_evaluator_free releases what they allocated. ---- */

/* The paper's basic MCTS baseline: uniform prior, value = mean result of `playouts` random
 * playouts (at most max_plies plies each, 0: no limit) from the leaf, seeded by `seed`. */
int mg_eval_playout_create(mg_evaluator *ev, int playouts, int max_plies, uint64_t seed, char *err,
                           size_t errlen);
/* Which playout a playout evaluator made by mg_eval_playout_create runs: the game's specialised one
 * when it has one (specialised != 0, the default: mg_random_playout) or the generic move-by-move
 * playout over legal_actions/make (mg_random_playout_moves, the kind other libraries run). */
void mg_eval_playout_set_specialised(mg_evaluator *ev, int specialised);

/* Constant cost, for measuring the tree's own overhead: every legal action gets `value`
 * (so the MAV prior reduces to softmax over equal values, and the leaf value is `value`). */
int mg_eval_constant_create(mg_evaluator *ev, double value, char *err, size_t errlen);

/* Game-specific evaluators live in their game's folder (the perfect Connect Four oracle:
 * games/connect_four/c4_evaluator.h). */

void mg_evaluator_free(mg_evaluator *ev);

#ifdef __cplusplus
}
#endif
#endif /* MG_SEARCH_EVALUATOR_H */

/*
 * mcts_mode.h - the two modes of the MCTS behind one table (not a public header): where engine mode
 * (mcts_engine.c: states from the game interface, legal actions as edges) and state-tracking mode
 * (mcts_state_tracking.c: predicted state texts and move strings as edges) differ, the search loop
 * (mcts.c) calls m->mode, set from the config's mode when the search object is made.  The modes sit
 * under the loop: they call the tree (mcts_tree.h) and never the loop.
 */
#ifndef MG_SEARCH_MCTS_MODE_H
#define MG_SEARCH_MCTS_MODE_H

#include "mcts_tree.h"

/* Results of applying an evaluator answer to a leaf. */
enum { APPLY_OK = 0, APPLY_INVALID = 1, APPLY_NOMEM = 2 };

typedef struct mcts_mode {
    const char *name; /* "engine" or "state-tracking", for messages */
    /* The node reached from `parent` by the move just made (engine: into `state`; state tracking:
     * state is NULL and the players alternate).  A new node ends its selection, as leaf request ri
     * when it is not terminal: a mode may write that request's moves now, when the game gives them
     * with the outcome (engine mode with a game's legal_outcome hook: one move generation for both),
     * and returns their number, else -1. */
    int (*new_node)(mg_mcts *m, const mcts_node *parent, const unsigned char *state, mcts_node *cn, int ri);
    /* The moves of leaf request ri at `state` into the request; 0 if the leaf has none (engine: no legal
     * action although the game is not over; state tracking predicts them: never 0).  known >= 0: new_node
     * wrote them (that many) already. */
    int (*leaf_moves)(mg_mcts *m, const unsigned char *state, int ri, int known);
    /* The mode's part of leaf request ri of selection sl (the common fields are set). */
    void (*prepare)(mg_mcts *m, const mcts_slot *sl, int ri);
    /* APPLY_OK if the answer r fits the request of `leaf`, with *n (the moves to read), *result (a
     * predicted game end; MG_ONGOING) and *tlen (the predicted text's length, 0 if the leaf keeps its
     * own text) updated; APPLY_INVALID otherwise. */
    int (*check_answer)(const mg_mcts *m, int32_t leaf, const mg_eval_result *r, int *n, int *result,
                        size_t *tlen);
    /* The answer's moves that become edges, their indices into keep (the valid, distinct move strings
     * in state tracking); -1 if one is malformed.  NULL (engine mode): all n, in request order, which
     * the loop then reads in place, the edges taking the request's legal actions (set_moves NULL too). */
    int (*keep_moves)(const mg_eval_result *r, int n, int32_t *keep);
    /* Stores what the answer predicts of the leaf itself (state tracking: its text, a game end that
     * makes it terminal with *v its value): APPLY_NOMEM, or APPLY_OK with *terminal set. */
    int (*store)(mg_mcts *m, int32_t leaf, const mg_eval_result *r, size_t tlen, int result, int *terminal,
                 double *v);
    /* The moves of the nk new edges from `first` on, from the answer's moves keep[0..nk): state
     * tracking: the edge's index among the node's edges and its move string (NULL with keep_moves). */
    void (*set_moves)(mg_mcts *m, uint32_t first, const mg_eval_result *r, const int32_t *keep, int nk);
    /* mg_mcts_advance_move of a search with a root: re-root at the child of `move` (engine mode: the
     * tree restarts at the new position if the child is unknown to it). */
    int (*advance_move)(mg_mcts *m, const char *move, char *err, size_t errlen);
} mcts_mode;

extern const mcts_mode mcts_engine_mode;
extern const mcts_mode mcts_tracking_mode;

/* Engine mode (mcts_engine.c): a fresh tree at `state`; re-rooting at the child of a legal `action`
 * of a search with a root (MG_ERR naming it if it is not legal there). */
void mcts_engine_set_root(mg_mcts *m, const void *state, int ply);
int mcts_engine_advance(mg_mcts *m, int32_t action, char *err, size_t errlen);

/* State tracking (mcts_state_tracking.c): a fresh tree at the state described by `text`, checked. */
int mcts_tracking_set_root(mg_mcts *m, const char *text, int to_move, int ply, char *err, size_t errlen);

#endif

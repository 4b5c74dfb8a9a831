/*
 * hex_solver.h - exact Hex solver for small boards (ground truth for tests and annotation).
 *
 * Hex has no draws, so every position is a win or a loss for the player to move.  The
 * solver is a boolean negamax (an AND/OR search) over bitboards with a transposition
 * table and two exact prunings:
 *   - if the mover can connect with one stone, the position is won;
 *   - the opponent's one-move winning cells: two or more and the position is lost, one
 *     and the mover must play there.
 *   - mustplay: an opponent cell x after which the opponent would have two winning
 *     cells must be answered on x or on one of those cells, unless the mover's move
 *     makes a winning threat of its own;
 * and move ordering by (opponent's - own) shortest connection distance after the move.
 * The table key is canonical under the 180-degree rotation (which keeps every edge's
 * owner).  It solves every move of the root (no pruning at the root), so each legal
 * move gets an exact value.  The empty board is solved in milliseconds up to 4x4 and in
 * about 20-30 s (one core) for 5x5; 5x5 positions with a few stones take well under a
 * second.  n <= 7 is accepted (positions with enough stones are solvable).  The swap
 * rule of the state is honoured (the swap move is solved like any other).
 *
 * The transposition table is allocated once per call; nothing is global.
 */
#ifndef MG_HEX_SOLVER_H
#define MG_HEX_SOLVER_H
#include "hex.h"

struct mg_cancel;

#define MG_HEX_SOLVER_MAX_N 7

typedef struct mg_hex_solution {
    int value;       /* +1 the player to move wins, -1 loses, 0 unknown (node budget ran out) */
    int complete;    /* 1 if `value` and every legal move's value are exact */
    uint64_t nodes;  /* positions searched */
    /* Indexed by action id (0 .. n*n, n*n = swap): +1 the move wins for the player to move,
     * -1 it loses, 0 the action is illegal or its value unknown (only when !complete). */
    int8_t move_value[MG_HEX_NUM_ACTIONS];
} mg_hex_solution;

/* Solve `s`.  max_nodes = 0: no limit; otherwise the search stops after about that many
 * positions and reports what it proved (complete = 0 if anything is left unknown).
 * `cancel` (may be NULL, see cancel.h) is ticked at every position; a stop reads like a
 * spent budget (complete = 0) with cancel->stopped set.
 * A terminal state has value -1 (the previous player connected) and no moves.
 * Returns MG_ERR with a message if the board is larger than MG_HEX_SOLVER_MAX_N or the
 * table cannot be allocated. */
int mg_hex_solve(const mg_hex_state *s, uint64_t max_nodes, struct mg_cancel *cancel, mg_hex_solution *out, char *err,
                 size_t errlen);

#endif

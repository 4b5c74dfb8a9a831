/*
 * policy_bind.h - helpers shared by the chess policy bindings (py_chess_policy.c, py_alphabeta.c).
 */
#ifndef MG_BIND_POLICY_H
#define MG_BIND_POLICY_H
#include "state.h"
#include "../games/chess/chess_alphabeta.h"
#include "../games/chess/chess_policy.h"

/* The chess (or Chess960) position of a State, NULL with TypeError/ValueError set otherwise. */
const mg_chess_state *mg_py_chess_state(PyObject *o, const char *what, mg_py_state **out);
/* The boards of the position `back` = 1, 2 plies before the current one of `s` (replayed with
 * the State's undo records; the oldest known position when the game is shorter) into board. */
void mg_py_chess_prev_board(const mg_py_state *s, int back, uint8_t *board);

/* If o is a mavgame._core.PolicyNet (py_policy_net.c): *fn, *ctx its policy for mg_ab_search (runs
 * without the GIL) and 1; 0 if o is something else; -1 with an exception if it is not usable. */
int mg_py_policy_net_ab(PyObject *o, mg_ab_policy_fn *fn, void **ctx);

#endif

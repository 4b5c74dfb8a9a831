/*
 * tictactoe.h - tic-tac-toe on the mavgame game interface (for small exhaustive tests).
 *
 * Cells are named a1..c3 (file a..c, rank 1..3).  Action = (rank - 1) * 3 + file,
 * so a1 = 0, b1 = 1, c1 = 2, a2 = 3, ..., c3 = 8.  X (player 0) moves first.
 *
 * Text: three rows from rank 3 down to rank 1 separated by '/', each three of
 * 'x', 'o', '.', then a space and the side to move ('x' or 'o'), e.g.
 * "x.o/.x./... o".  The start position is ".../.../... x".
 */
#ifndef MG_TICTACTOE_H
#define MG_TICTACTOE_H
#include "../../game.h"

typedef struct mg_ttt_state {
    uint8_t cell[9];   /* 0 empty, 1 x, 2 o */
    uint8_t to_move;   /* 0 x, 1 o */
    uint8_t nmoves;
} mg_ttt_state;

extern const mg_game mg_tictactoe;
/* The MAV %state codec (tictactoe_mav.c, format/mav_codec.h). */
extern const struct mg_mav_codec mg_tictactoe_mav;

#endif

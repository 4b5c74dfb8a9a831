/*
 * chess_pst.h - the static evaluation of the baseline alpha-beta of the IDP report ("piece values
 * and piece position as features"): material plus piece-square tables.
 *
 * The report does not print its tables; we use Tomasz Michniewski's "Simplified Evaluation
 * Function" (chessprogramming.org), a standard table set of exactly that kind: pawn 100, knight
 * 320, bishop 330, rook 500, queen 900 centipawns, the king's middle-game table, and one table a
 * piece type (listed in chess_pst.c, from White's side, rank 8 first; Black's are mirrored).
 */
#ifndef MG_CHESS_PST_H
#define MG_CHESS_PST_H
#include "chess.h"

/* Centipawns for the side to move (material + tables of both sides, mover's minus opponent's). */
int mg_pst_eval(const mg_chess_state *s);
/* Value of a piece type (MG_CH_PAWN .. MG_CH_KING; king 20000, 0 for 0). */
int mg_pst_piece_value(int type);
/* The table entry of a piece code (colour << 3 | type) on a square (a1 = 0), value included. */
int mg_pst_square(int piece, int sq);

#endif

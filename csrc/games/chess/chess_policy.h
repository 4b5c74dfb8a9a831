/*
 * chess_policy.h - the inputs and outputs of a chess policy network (the IDP report,
 * shared/papers/002: "IDP Report: Chess & Reinforcement Learning", section 3.1).
 *
 * Input planes (MG_POLICY_PLANES = 41 planes of 8 x 8 float32), always from White's side:
 *   planes 13k .. 13k + 12 for k = 0 (the current position), 1 (the position before the last
 *   move), 2 (the one before that); when the game has fewer positions the oldest one known is
 *   repeated (the report: "when starting a game, the two previous positions are the same as the
 *   current one"):
 *     13k + 0..5   White pawn, knight, bishop, rook, queen, king (1 where the piece stands)
 *     13k + 6..11  Black pawn, knight, bishop, rook, queen, king
 *     13k + 12     empty squares
 *   plane 39      colour: all 1 when White is to move, all 0 when Black is
 *   plane 40      move number: the FEN fullmove number / 100 on every square
 * Row 0 is rank 8 and column 0 is file a (the board as printed, top row first, as every
 * observation tensor of mavgame); value at [plane][7 - rank][file].
 *
 * Move index (MG_POLICY_MOVES = 1968 UCI move strings): every from-to pair a queen or a knight
 * can make on an empty board (1792: index = offset[from] + number of reachable squares below
 * `to`), then the 176 promotions (White's from rank 7 then Black's from rank 2; by from file,
 * then destination file, then piece n, b, r, q).  The report's network has 1,965 outputs,
 * "the only ones appearing in our dataset" (it later met a7b8b and g7h8b, which its set
 * lacked); the set of every UCI string a legal chess move can have is these 1968, so no legal
 * move is ever outside the index.  Castling uses the UCI string of the game: e1g1 / e1c1 in
 * standard chess, king takes rook (e1h1) in Chess960, both inside the queen-move part.
 *
 * Nothing here allocates; the index is closed-form arithmetic over two const tables.
 */
#ifndef MG_CHESS_POLICY_H
#define MG_CHESS_POLICY_H
#include <stdint.h>

#include "chess.h"

#define MG_POLICY_MOVES 1968
#define MG_POLICY_PLANES 41
#define MG_POLICY_HISTORY 3          /* positions in the planes: the current one and two before */
#define MG_POLICY_PLANE_SIZE 64
#define MG_POLICY_INPUT_SIZE (MG_POLICY_PLANES * MG_POLICY_PLANE_SIZE)
#define MG_POLICY_QUEEN_KNIGHT 1792  /* index of the first promotion */
#define MG_POLICY_MOVENUM_SCALE 100.0f

/* Index of (from, to, promo) with promo 0 none, 1 knight, 2 bishop, 3 rook, 4 queen; -1 when no
 * UCI move string has that shape (e.g. a1c4 + nothing, or a promotion off the 7th/2nd rank). */
int mg_policy_index(int from, int to, int promo);
/* The inverse: from, to and promo of an index in [0, MG_POLICY_MOVES); returns -1 when out of range. */
int mg_policy_decode(int idx, int *from, int *to, int *promo);
/* UCI text of an index into buf (>= 6 bytes): returns its length (4 or 5), 0 if out of range. */
int mg_policy_uci(int idx, char *buf);
/* Index of a UCI string (exactly 4 or 5 characters), -1 if not in the index. */
int mg_policy_from_uci(const char *uci);

/* Index of the legal action `a` of position `s` (castling as the game writes it in UCI). */
int mg_policy_action_index(const mg_chess_state *s, int32_t a);
/* The legal actions of `s` into actions (room for MG_CHESS_MAX_MOVES) and their indices into
 * idx (same room); returns the count. */
int mg_policy_legal(const mg_chess_state *s, int32_t *actions, int16_t *idx);

/* The 41 planes (MG_POLICY_INPUT_SIZE floats into out, overwritten) from the boards (piece
 * codes board[64] of mg_chess_state) of the current position and the two before it (prev1,
 * prev2 may be the same pointer as now), the side to move and the fullmove number. */
void mg_policy_planes(const uint8_t *now, const uint8_t *prev1, const uint8_t *prev2, int stm, uint32_t fullmove,
                      float *out);

/* Masked, renormalised probabilities of the legal moves: probs[i] = w[idx[i]] / sum over the
 * n legal moves, where w are the policy's non-negative outputs over the index (negative or NaN
 * entries count as 0).  If they sum to 0 (or are not finite) every legal move gets 1 / n. */
void mg_policy_mask_normalise(const float *w, const int16_t *idx, int n, float *probs);

#endif

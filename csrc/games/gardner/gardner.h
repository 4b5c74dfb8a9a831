/*
 * gardner.h - Gardner's 5x5 minichess on the mavgame game interface.
 *
 * Rules: chess on a 5x5 board, start position "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"
 * (White: Ra1 Nb1 Bc1 Qd1 Ke1, pawns a2..e2; Black mirrored on ranks 5 and 4), without
 * the pawn double step, en passant and castling.  A pawn reaching the last rank promotes
 * to a knight, rook or queen; promotion to a bishop is allowed only with the config flag
 * MG_FLAG_GARDNER_BISHOP (Mhalla & Prost's solved game excludes it; pgx's gardner_chess
 * allows it).  The game ends (outcome(), in this order of precedence) by
 *   - checkmate (the side to move is in check and has no legal move: it loses),
 *   - stalemate (no legal move, not in check: draw),
 *   - insufficient material (draw): only the two kings; or king + one knight or one
 *     bishop against a lone king; or only kings and bishops with every bishop on
 *     squares of one colour (no mate is then possible),
 *   - the fifty-move rule (draw as soon as the halfmove clock reaches 100),
 *   - threefold repetition (draw as soon as the same position - pieces and side to
 *     move - has occurred three times since the last capture or pawn move; positions
 *     before a position set from text are unknown).
 *
 * Squares: index = file + 5 * rank, a1 = 0, b1 = 1, ..., e1 = 4, a2 = 5, ..., e5 = 24,
 * written "a1".."e5".
 *
 * Actions: a = from + 25 * to + 625 * promo, promo 0 = none, 1 = knight, 2 = bishop,
 * 3 = rook, 4 = queen; num_actions = 3125.  Move strings are UCI-style: from square,
 * to square, and a lower-case promotion letter ("b4c5", "a4a5q"); parsing also accepts
 * an upper-case promotion letter.
 *
 * Text: 5x5 FEN "<board> <side> <castling> <en passant> <halfmove> <fullmove>", board
 * ranks 5 down to 1 separated by '/', fields separated by white space, castling and en
 * passant always "-", fullmove number at least 1.  As chess reads FEN, 1 to 6 fields are
 * accepted: trailing fields left out default to "w - - 0 1" (the board alone is White to
 * move).  Exactly one king a side, no pawn on the first or last rank, the side not to move
 * not in check.  Output always has all six fields.
 *
 * max_moves = 256: a side has at most 24 pieces and each reaches at most min(16, 25 -
 * own pieces) squares, so at most 13 * 12 = 156 (from, to) pairs; promotions add at most
 * 3 extra actions for each of the at most 15 (from, to) pairs of pawns on the 7th rank.
 */
#ifndef MG_GARDNER_H
#define MG_GARDNER_H
#include "../../game.h"
#include "../san.h"

#define MG_GARDNER_SQUARES 25
#define MG_GARDNER_NUM_ACTIONS 3125
#define MG_GARDNER_MAX_MOVES 256
/* Length of the repetition ring: the hashes of the last (at most) 128 positions since the last
 * capture or pawn move.  Repetitions further back than 127 plies are not seen, which never
 * matters: by then the fifty-move rule has ended the game. */
#define MG_GARDNER_HIST 128

/* Piece codes on the board: 0 empty, colour * 8 + type, type 1..6 = P N B R Q K. */
enum { MG_GP_PAWN = 1, MG_GP_KNIGHT, MG_GP_BISHOP, MG_GP_ROOK, MG_GP_QUEEN, MG_GP_KING };

typedef struct mg_gardner_state {
    uint64_t hash;                      /* Zobrist hash of pieces and side to move */
    uint32_t bb_type[7];                /* [type] squares of that type, both colours; [0] unused */
    uint32_t bb_color[2];               /* [colour] squares of that colour */
    uint32_t flags;                     /* config flags (MG_FLAG_GARDNER_BISHOP) */
    uint32_t halfmove;                  /* plies since the last capture or pawn move */
    uint32_t fullmove;                  /* move number, starts at 1, +1 after Black moves */
    uint8_t board[MG_GARDNER_SQUARES];  /* piece codes */
    uint8_t side;                       /* 0 White, 1 Black */
    uint8_t hist_head;                  /* ring index of the current position's hash */
    uint8_t hist_len;                   /* valid ring entries (current included), 1..HIST */
    uint8_t pad[4];                     /* always zero */
    /* Hashes of the positions since the last irreversible move, hist[hist_head] = hash. */
    uint64_t hist[MG_GARDNER_HIST];
} mg_gardner_state;

typedef struct mg_gardner_undo {
    uint64_t hash;
    uint64_t hist_old;    /* ring entry overwritten by make */
    uint32_t halfmove;
    uint8_t captured;     /* piece code on the target square before the move */
    uint8_t hist_len;
    uint8_t pad[2];
} mg_gardner_undo;

extern const mg_game mg_gardner;
/* SAN hooks for san.c (5 files x 5 ranks). */
extern const mg_san_ops mg_gardner_san_ops;
/* The MAV %state codec (gardner_mav.c, format/mav_codec.h). */
extern const struct mg_mav_codec mg_gardner_mav;

/* Zobrist hash of `s` computed from scratch (tests compare it with the incremental one). */
uint64_t mg_gardner_compute_hash(const mg_gardner_state *s);
/* Non-zero if the side to move is in check. */
int mg_gardner_in_check(const mg_gardner_state *s);
/* Non-zero if the material left cannot give mate (the insufficient-material draw of outcome()). */
int mg_gardner_insufficient_material(const mg_gardner_state *s);

#endif

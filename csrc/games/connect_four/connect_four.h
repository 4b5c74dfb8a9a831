/*
 * connect_four.h - Connect Four (7 columns x 6 rows) on the mavgame game interface.
 *
 * Moves: a move is a column.  Action = column index 0..6 (left to right); the move
 * text is the column number "1".."7" (the convention of the public Connect Four
 * solver test sets, where a position is written as the sequence of columns played,
 * e.g. "4453").  X (player 0) moves first.
 *
 * Bitboards: 7 bits per column, bit (col * 7 + row) with row 0 at the bottom; row 6
 * of every column is an always-empty sentinel so that shifts never wrap between
 * columns.  The state keeps the stones of the side to move (`cur`) and of both
 * sides (`mask`); the opponent's stones are cur ^ mask.  `cur + mask` is a unique
 * 49-bit key for the position (the side to move follows from the stone count).
 *
 * Text: the six rows from the top row down to the bottom row, separated by '/',
 * each seven of 'x' (first player), 'o' (second player) or '.', then a space and
 * the side to move ('x' or 'o'), e.g. "......./......./......./......./......./...x... o".
 * Parsing checks the characters, gravity (no stone above an empty cell), the
 * counts (x = o or x = o + 1, matching the side to move) and that play did not go
 * on after a win (at most the last mover has four in a row, and one of its top
 * stones can have been the winning move).  It does not search for a full move
 * order that reaches the position.
 * from_text also accepts a move sequence: a non-empty string of digits 1..7 such as
 * "4453" (no further moves after a win; a full column is an error).
 */
#ifndef MG_CONNECT_FOUR_H
#define MG_CONNECT_FOUR_H
#include "../../game.h"

#define MG_C4_WIDTH 7
#define MG_C4_HEIGHT 6
#define MG_C4_CELLS 42

typedef struct mg_c4_state {
    uint64_t cur;     /* stones of the side to move */
    uint64_t mask;    /* all stones */
    uint32_t nmoves;  /* stones on the board */
    uint32_t won;     /* 1 if the last move made four in a row (the game is over), else 0 */
} mg_c4_state;

extern const mg_game mg_connect_four;
/* The MAV %state codec (connect_four_mav.c, format/mav_codec.h). */
extern const struct mg_mav_codec mg_connect_four_mav;

/* Bitboard constants and helpers (also used by the solver and the tests). */
#define MG_C4_BOTTOM 0x0000040810204081ULL  /* bit row 0 of every column */
#define MG_C4_BOARD 0x0000fdfbf7efdfbfULL   /* rows 0..5 of every column */

static inline uint64_t mg_c4_bottom_col(int col) { return 1ULL << (col * 7); }
static inline uint64_t mg_c4_top_col(int col) { return 1ULL << (col * 7 + 5); }
static inline uint64_t mg_c4_col_mask(int col) { return 0x3fULL << (col * 7); }

/* Non-zero if `p` (a set of stones) contains four in a row. */
static inline int mg_c4_has_four(uint64_t p)
{
    uint64_t m;
    m = p & (p >> 7);   /* horizontal */
    if (m & (m >> 14))
        return 1;
    m = p & (p >> 6);   /* diagonal \ */
    if (m & (m >> 12))
        return 1;
    m = p & (p >> 8);   /* diagonal / */
    if (m & (m >> 16))
        return 1;
    m = p & (p >> 1);   /* vertical */
    if (m & (m >> 2))
        return 1;
    return 0;
}

/* Empty cells (anywhere on the board, playable or not) that would complete four in
 * a row for the stones `p`, given all stones `mask`. */
static inline uint64_t mg_c4_winning_cells(uint64_t p, uint64_t mask)
{
    /* vertical: three stones below */
    uint64_t r = (p << 1) & (p << 2) & (p << 3);
    uint64_t t;
    /* horizontal (shift 7), diagonals (shift 6 and 8) */
#define MG_C4_DIR(S)                                        \
    t = (p << (S)) & (p << 2 * (S));                        \
    r |= t & (p << 3 * (S));                                \
    r |= t & (p >> (S));                                    \
    t = (p >> (S)) & (p >> 2 * (S));                        \
    r |= t & (p << (S));                                    \
    r |= t & (p >> 3 * (S));
    MG_C4_DIR(7)
    MG_C4_DIR(6)
    MG_C4_DIR(8)
#undef MG_C4_DIR
    return r & (MG_C4_BOARD ^ mask);
}

/* Cells where a stone can be dropped now (one per non-full column). */
static inline uint64_t mg_c4_playable(uint64_t mask) { return (mask + MG_C4_BOTTOM) & MG_C4_BOARD; }

/* Drop a stone in `col` (must be playable): the side to move changes. */
static inline void mg_c4_play(mg_c4_state *s, int col)
{
    s->cur ^= s->mask;
    s->mask |= s->mask + mg_c4_bottom_col(col);
    s->nmoves++;
    s->won = (uint32_t)mg_c4_has_four(s->cur ^ s->mask);
}

/* Column (0..6) of a single-bit cell. */
static inline int mg_c4_col_of(uint64_t cell) { return __builtin_ctzll(cell) / 7; }

/* Start position. */
void mg_c4_init(mg_c4_state *s);
/* Position after a sequence of columns "1".."7" (e.g. "4453"); "" is the start.
 * MG_ERR with a message on a bad character, a full column or a move after a win. */
int mg_c4_from_moves(mg_c4_state *s, const char *moves, char *err, size_t errlen);
/* 0 ongoing, else enum mg_result. */
int mg_c4_outcome(const mg_c4_state *s);

#endif

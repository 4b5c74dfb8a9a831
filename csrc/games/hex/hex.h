/*
 * hex.h - Hex on the mavgame game interface (n x n boards, 1 <= n <= 19).
 *
 * Board and names.  Cells are named by a column letter and a row number: "a1" ..
 * "s19" (column a = left, row 1 = top).  Row r + 1 is shifted half a cell to the right
 * of row r, so the board is a rhombus leaning right, as in HexGui and OpenSpiel, and
 * cell (row r, column c) (0-based) touches (r, c-1), (r, c+1), (r-1, c), (r-1, c+1),
 * (r+1, c-1) and (r+1, c).
 *
 * Players.  Player 0 ("black", 'x', first to move) wins by connecting the top edge
 * (row 1) with the bottom edge (row n); player 1 ("white", 'o') wins by connecting the
 * left edge (column a) with the right edge (column n).  Hex has no draws.  The game ends
 * as soon as one player connects its two edges (outcome() reason MG_TERM_CONNECTED).
 *
 * Actions.  Placing a stone on the cell of row r, column c (0-based) is action
 * r * n + c (a1 = 0, b1 = 1, ..., a2 = n, ...).  With the swap rule, action n * n
 * ("swap") is the swap move.  num_actions = 19 * 19 + 1 covers every board size; for a
 * given n only 0 .. n*n (n*n only with the swap rule) are ever legal.
 *
 * Swap (pie) rule, config flag MG_FLAG_HEX_SWAP.  After black's first stone, white may
 * answer "swap" as its first move.  As in OpenSpiel and HexGui ("swap-pieces"), the black
 * stone on row r, column c is replaced by a white stone on the mirrored cell row c,
 * column r, and black moves next; players keep their colours and edges.  (This is the
 * same game as exchanging the players' roles.)  Swap is legal only as the second move of
 * the game, i.e. when exactly one black stone is on the board and white is to move.
 *
 * Text.  Rows 1 .. n from the top, separated by '/', each with n cells from column a
 * on: 'x' black, 'o' white, '.' empty (upper case 'X', 'O' accepted on input); then a
 * space and the side to move, 'x' or 'o'.  The board size is the number of rows.
 * E.g. the 3x3 start is ".../.../... x" and "x../.o./... x" has x on a1, o on b2.
 * The counts must fit a game: without a swap, #x - #o is 0 with x to move and 1 with o
 * to move; after a swap (only with MG_FLAG_HEX_SWAP) #x - #o is -1 with x to move and 0
 * with o to move.  Both players connected, or a connected player who is to move, is
 * rejected.  If cfg->board_size is non-zero it must equal the size of the text.
 *
 * Win detection.  The state keeps a union-find over the stones (union by rank, no path
 * compression, so make/unmake are O(log n) and unmake undoes the unions recorded in the
 * undo record); every group root knows which of its colour's two edges it touches.
 * Hash: Zobrist (keys derived on the fly from a fixed mixing function, no tables),
 * including the side to move, the board size and the swap flag.
 */
#ifndef MG_HEX_H
#define MG_HEX_H
#include "../../game.h"

#define MG_HEX_MAX_N 19
#define MG_HEX_DEFAULT_N 11
#define MG_HEX_NUM_ACTIONS (MG_HEX_MAX_N * MG_HEX_MAX_N + 1)
/* The board is stored padded with one ring of off-board cells, with a fixed stride. */
#define MG_HEX_STRIDE (MG_HEX_MAX_N + 2)
#define MG_HEX_PADDED (MG_HEX_STRIDE * MG_HEX_STRIDE)
#define MG_HEX_WORDS ((MG_HEX_MAX_N * MG_HEX_MAX_N + 63) / 64)

/* Cell contents. */
enum { MG_HEX_EMPTY = 0, MG_HEX_BLACK = 1, MG_HEX_WHITE = 2, MG_HEX_OFF = 3 };

typedef struct mg_hex_state {
    uint64_t hash;                         /* Zobrist hash (stones, side, size, swap flag) */
    uint64_t empty[MG_HEX_WORDS];          /* bit a set: cell of action a (< n*n) is empty */
    uint16_t parent[MG_HEX_PADDED];        /* union-find parent (self for roots and empties) */
    uint16_t nstones;                      /* stones on the board */
    uint8_t n;                             /* board size */
    uint8_t swap_rule;                     /* 1 with MG_FLAG_HEX_SWAP */
    uint8_t to_move;                       /* 0 black (x), 1 white (o) */
    uint8_t winner;                        /* 0 none, MG_HEX_BLACK, MG_HEX_WHITE */
    uint8_t swapped;                       /* 1 once the swap move was played */
    uint8_t cell[MG_HEX_PADDED];           /* padded board, index (r+1)*STRIDE + (c+1) */
    uint8_t rank[MG_HEX_PADDED];           /* union-find rank (roots) */
    uint8_t edges[MG_HEX_PADDED];          /* roots: bit 0 first edge, bit 1 second edge */
    uint8_t zero[4];                       /* always 0: the struct has no padding bytes */
} mg_hex_state;

_Static_assert(sizeof(mg_hex_state) == 2272, "mg_hex_state must have no padding");

extern const mg_game mg_hex;
/* The MAV %state codec (hex_mav.c, format/mav_codec.h). */
extern const struct mg_mav_codec mg_hex_mav;

struct mg_rng;
/* A uniformly random playout by filling: the empty cells are shuffled and taken in turn
 * from the side to move on (with the swap rule, swap is taken first with the probability
 * the uniform random mover would give it), and the winner is read off the full board.
 * A random game stopped at the first connection has the same winner (the connected
 * player stays connected as the board fills and a full board has exactly one winner), so
 * the result has exactly the distribution of mg_random_playout(), at the cost of one
 * shuffle and one flood fill instead of a move generation and a make per ply.  The
 * signature matches mg_random_playout (g must be &mg_hex); `st` is not modified.
 * Returns MG_P0_WINS or MG_P1_WINS (the finished state's result if `st` is over);
 * *plies receives the number of moves (cells filled, swap included), i.e. the game
 * played to a full board, not to the first connection.  If max_plies is smaller than
 * that it falls back to mg_random_playout on a copy (the cut-off is then exact). */
int mg_hex_fill_playout(const mg_game *g, void *st, struct mg_rng *rng, int max_plies, int *plies);

/* Helpers for tools and tests. */
/* Board size of a Hex state. */
static inline int mg_hex_size(const mg_hex_state *s) { return s->n; }
/* Non-zero if the swap move is legal in `s`. */
int mg_hex_swap_available(const mg_hex_state *s);
/* Cell content (MG_HEX_EMPTY/BLACK/WHITE) of row r, column c (0-based, inside the board). */
static inline int mg_hex_cell(const mg_hex_state *s, int r, int c)
{
    return s->cell[(r + 1) * MG_HEX_STRIDE + c + 1];
}

#endif

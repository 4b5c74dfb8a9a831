/*
 * chess.h - chess and Chess960 on the mavgame game interface (bitboards, magic
 * sliders, strictly legal move generation, make/unmake, incremental Zobrist hash).
 *
 * Two registry games share this code: "chess" (standard castling) and "chess960"
 * (Fischer random castling rules; also selected by MG_FLAG_CHESS960).
 *
 * Squares: a1 = 0, b1 = 1, ..., h8 = 63 (file + 8 * rank).
 *
 * Actions: action = from | to << 6 | promo << 12 with promo 0 = none, 1 = knight,
 * 2 = bishop, 3 = rook, 4 = queen; num_actions = 5 * 4096.  Castling is encoded
 * as the king moving onto its own castling rook ("king takes rook", e.g. e1 -> h1
 * for White's O-O in standard chess), which is unique in both variants.
 *
 * Move strings (UCI): "e2e4", "e7e8q".  Standard chess writes castling as the
 * king's two-square move (e1g1, e1c1) and also accepts king-takes-rook (e1h1);
 * Chess960 writes and accepts king-takes-rook only (e1h1; a king move such as
 * b1c1 is always a plain king move there).
 *
 * Text: FEN, with 1 to 6 fields (as python-chess reads FEN, missing fields default to
 * "w - - 0 1").  Exactly one king a side, any number and kind of other pieces (up to
 * 62: random placements such as the MAV paper's out-of-distribution set; MG_CHESS_MAX_MOVES
 * bounds their moves), no pawn on the first or last rank, the side not to move not in check.  Castling rights may
 * be given as KQkq, as X-FEN (KQkq for the outermost rook, file letters otherwise)
 * or as Shredder-FEN (file letters, e.g. HAha); in standard chess a right needs the
 * king on e1/e8 and the rook on a/h.  The field is
 * '-' or up to two white letters followed by up to two black ones (python-chess's
 * shape); a right whose king or rook is not in place is an error.  Output is
 * X-FEN, exactly as python-chess writes it (KQkq where the castling rook is the
 * outermost rook on its side, its file letter otherwise).  The en passant field is
 * validated (rank, the pawn that just moved, empty squares) and then kept only if
 * an en passant capture is legal, so it is printed, hashed and compared only
 * then (python-chess's default fen() does the same).
 *
 * Outcome: the search's terminal rule (mg_game.outcome: is_terminal, MCTS, the solvers,
 * leagues, the MAV data), in python-chess's order of precedence: checkmate, insufficient
 * material (python-chess's is_insufficient_material), stalemate, the seventy-five-move rule
 * (halfmove clock >= 150), fivefold repetition, the fifty-move rule (halfmove clock >= 100),
 * threefold repetition.  A repetition count is python-chess's is_repetition(n): the
 * occurrences of the position since the state was constructed, counting only positions
 * since the last irreversible move (a capture, a pawn move, a loss of castling rights, or a
 * move from a position with a legal en passant capture), over the last MG_CHESS_HIST - 1
 * plies.  So a position where a draw can be claimed (fifty moves, threefold) ends the game
 * here, as an engine claims what it can; python-chess's outcome() ends a game only at the
 * automatic draws (75 moves, fivefold) and leaves the other two to a claim:
 * mg_chess_draw_claims below answers its can_claim_fifty_moves and
 * can_claim_threefold_repetition (which also look one legal move ahead).
 */
#ifndef MG_CHESS_H
#define MG_CHESS_H
#include "../../game.h"
#include "../san.h"

/* Piece types and codes: board[sq] = color << 3 | type, 0 = empty. */
enum { MG_CH_PAWN = 1, MG_CH_KNIGHT, MG_CH_BISHOP, MG_CH_ROOK, MG_CH_QUEEN, MG_CH_KING };
#define MG_CH_NO_SQ 64
/* Legal moves in any position with one king a side, whatever the other pieces (the reader takes
 * any number and kind: the MAV paper's out-of-distribution positions are random placements).
 * The bound, 592, holds for every placement:
 *  - a move other than castling is fixed by its target square t (empty or the opponent's) and the
 *    direction it arrives from, one of 8 lines or 8 knight jumps: along a line the mover is the
 *    first piece met from t (pawn pushes, double pushes, captures and en passant included), a knight
 *    jump has one origin; only a promotion gives one (t, direction) 4 moves.  Counting the pairs of
 *    the whole board (420 line + 336 knight pairs), 3 more moves for each of the 22 promotion
 *    pairs and 2 castlings: at most 824 moves, less the pairs of the squares the mover's own pieces
 *    stand on (D(S) for the own squares S: they are no targets);
 *  - each piece has at most the moves of a queen on its square on an empty board, A(S) in all
 *    (a pawn 12 at most, a king 8 + castlings);
 *  so moves <= max over S of min(A(S) + 2, 824 - D(S)), which a knapsack over the 64 squares
 *  (A and D are sums over S) puts at 592.  (The most known for a legal game position is 218.) */
#define MG_CHESS_MAX_MOVES 592
#define MG_CHESS_NUM_ACTIONS (5 * 4096)

/* Hashes kept for repetition detection (a power of two > 151: a run of reversible moves
 * from a halfmove clock of 0 lasts at most 150 plies before the seventy-five-move rule ends
 * the game, so python-chess's claims and repetitions are counted over the whole run; past an
 * automatic end, a position is compared with the last MG_CHESS_HIST - 1 plies only). */
#define MG_CHESS_HIST 256

/* Castling right index: color * 2 + side, side 0 = h-side (O-O), 1 = a-side (O-O-O). */
typedef struct mg_chess_state {
    uint64_t bb[7];          /* bb[0] all pieces, bb[type] both colours */
    uint64_t occ[2];         /* by colour */
    uint64_t hash;           /* Zobrist hash of placement, side, castling rights, en passant */
    uint8_t board[64];       /* piece codes */
    uint8_t cmask[64];       /* castling rights lost when a move touches the square */
    uint8_t castle_rook[4];  /* rook square of each right (MG_CH_NO_SQ if never had) */
    uint8_t castling;        /* bit i: right i (see above) */
    uint8_t stm;             /* side to move, 0 white */
    uint8_t ep;              /* en passant target square, MG_CH_NO_SQ unless a capture is legal */
    uint8_t chess960;
    uint32_t halfmove;       /* FEN halfmove clock */
    uint32_t fullmove;       /* FEN fullmove number */
    uint32_t ply;            /* plies since construction */
    uint32_t rep_len;        /* plies since the last irreversible move */
    uint64_t hist[MG_CHESS_HIST]; /* hist[p % MG_CHESS_HIST]: hash after ply p */
} mg_chess_state;

typedef struct mg_chess_undo {
    uint64_t hash;
    uint64_t hist_slot;      /* the overwritten history entry */
    uint32_t halfmove;
    uint32_t rep_len;
    uint8_t captured;        /* piece code (0 none) */
    uint8_t castling;
    uint8_t ep;
    uint8_t kind;            /* 0 normal, 1 castling, 2 en passant */
} mg_chess_undo;

/* The game descriptors and their SAN hooks (chess_game.c). */
extern const mg_game mg_chess;
extern const mg_game mg_chess960;
extern const mg_san_ops mg_chess_san_ops;
extern const mg_san_ops mg_chess960_san_ops;
/* The MAV %state codecs (chess_mav.c, format/mav_codec.h). */
extern const struct mg_mav_codec mg_chess_mav;
extern const struct mg_mav_codec mg_chess960_mav;

/* Fill bitboard and Zobrist tables (called from mg_games_init()). */
void mg_chess_init_tables(void);

/* FEN of the Chess960 start position `n` in 0..959 (Scharnagl numbering; 518 is
 * the standard RNBQKBNR).  Returns the length, or 0 if n is out of range. */
size_t mg_chess960_start_fen(int n, char *buf, size_t buflen);

/* The rules behind the descriptors' make, unmake, perft and outcome (chess.c; mg_game's signatures). */
void mg_chess_make(void *st, int32_t a, void *undo);
void mg_chess_unmake(void *st, int32_t a, const void *undo);
uint64_t mg_chess_perft(void *st, int depth, struct mg_cancel *cancel);
int mg_chess_outcome(const void *st, int *reason);
/* The descriptors' legal_outcome: mg_chess_legal_actions and mg_chess_outcome from one generation. */
int mg_chess_legal_outcome(const void *st, int32_t *out, int *result, int *reason);
/* The descriptors' is_legal: non-zero iff `a` (any int32) is among mg_chess_legal_actions, decided
 * without generating the moves (the action's own pseudo-legality, then a king-safety test). */
int mg_chess_is_legal(const mg_chess_state *s, int32_t a);

/* Helpers (chess.c) also used by the FEN code, the descriptors and the bindings. */
int mg_chess_in_check(const mg_chess_state *s);
int mg_chess_legal_actions(const mg_chess_state *s, int32_t *out);
int mg_chess_count_legal(const mg_chess_state *s);
uint64_t mg_chess_compute_hash(const mg_chess_state *s);
/* Recompute the en passant square of a position whose double push lands on
 * `pushed` (or drop it): keeps it only if a legal capture exists. */
void mg_chess_set_ep(mg_chess_state *s, int pushed);
/* Non-zero if square `sq` is attacked by `color` with occupancy `occ`. */
int mg_chess_attacked(const mg_chess_state *s, int sq, int color, uint64_t occ);
int mg_chess_insufficient_material(const mg_chess_state *s);
/* The occurrences of the position (1: none before it), as python-chess's is_repetition(n) is
 * "repetitions >= n" (see Outcome above). */
int mg_chess_repetitions(const mg_chess_state *s);
/* python-chess's draw claims: *fifty = can_claim_fifty_moves() (a halfmove clock >= 100, or
 * >= 99 and a legal move that keeps the clock running to a position with legal moves);
 * *threefold = can_claim_threefold_repetition() (the position occurred three times, or a legal
 * move reaches a position that occurred twice).  Either pointer may be NULL. */
void mg_chess_draw_claims(const mg_chess_state *s, int *fifty, int *threefold);
/* Square of the king's destination / rook's destination for castling right i. */
int mg_chess_castle_king_to(int right);
int mg_chess_castle_rook_to(int right);

/* FEN (chess_fen.c).  `chess960` selects the castling rules. */
int mg_chess_from_fen(mg_chess_state *s, int chess960, const char *fen, char *err, size_t errlen);
size_t mg_chess_to_fen(const mg_chess_state *s, char *buf, size_t buflen);
/* Zobrist keys (filled by mg_chess_init_tables). */
typedef struct mg_chess_zobrist {
    uint64_t piece[16][64];
    uint64_t castle[4][64];  /* right i with its rook on a square */
    uint64_t ep[8];          /* by file */
    uint64_t side;           /* black to move */
} mg_chess_zobrist;
extern mg_chess_zobrist mg_chess_zob;

/* The UCI text of a move from square `from` to `to` (0 = a1 .. 63 = h8), `promo` 0 or 1..4 = n b r q, into
 * `buf` (at least 6 bytes); returns its length. */
static inline int mg_chess_uci_write(int from, int to, int promo, char *buf)
{
    int k = 0;
    buf[k++] = (char)('a' + (from & 7));
    buf[k++] = (char)('1' + (from >> 3));
    buf[k++] = (char)('a' + (to & 7));
    buf[k++] = (char)('1' + (to >> 3));
    if (promo)
        buf[k++] = " nbrq"[promo];
    buf[k] = '\0';
    return k;
}

#endif

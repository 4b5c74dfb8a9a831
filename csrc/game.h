/*
 * game.h - the one game interface that every mavgame game implements.
 *
 * Search (MCTS, alpha-beta, solvers), the MAV text format and the data tools are
 * written once against this interface.  Rules:
 *
 *  - A game state is plain data of `state_size` bytes: no pointers, no heap, so it
 *    can be copied with memcpy and compared byte-wise after canonicalisation.  The
 *    state carries its own configuration (board size, rule flags) and whatever
 *    history its rules need (e.g. chess keeps the hashes needed for repetition).
 *  - Actions are small non-negative integers in [0, num_actions); each game
 *    documents its encoding in its header.  An action id names the same move in
 *    every state where that move is legal.
 *  - legal_actions() writes into a caller-owned buffer of at least `max_moves`
 *    entries and never allocates.  make()/unmake() never allocate either; the
 *    caller owns the undo record (`undo_size` bytes).
 *  - Text parsing functions never crash on bad input: they return MG_ERR and
 *    write a one-line, human-readable reason (naming the offending part) into
 *    the caller's error buffer.  States are left unchanged on error.
 *
 * There is no global mutable state anywhere in the C core; read-only tables
 * (attack tables, Zobrist keys) are computed at compile time or initialised once
 * by mg_games_init() before any game is used.
 */
#ifndef MG_GAME_H
#define MG_GAME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MG_OK 0
#define MG_ERR (-1)

/* Length of error message buffers used across the C core. */
#define MG_ERRLEN 256

/* Players.  Player 0 moves first (White in chess, the first player elsewhere). */
#define MG_P0 0
#define MG_P1 1

/* Results returned by mg_game.outcome(). */
enum mg_result {
    MG_ONGOING = 0,
    MG_P0_WINS = 1,
    MG_P1_WINS = 2,
    MG_DRAW = 3
};

/* Why the game ended (the `reason` out-parameter of outcome()). */
enum mg_termination {
    MG_TERM_NONE = 0,
    MG_TERM_CHECKMATE,
    MG_TERM_STALEMATE,
    MG_TERM_INSUFFICIENT_MATERIAL,
    MG_TERM_SEVENTYFIVE_MOVES,    /* chess: the automatic draw at a halfmove clock of 150 */
    MG_TERM_FIVEFOLD_REPETITION,  /* chess: the automatic draw at a position's fifth occurrence */
    MG_TERM_FIFTY_MOVES,          /* the fifty-move rule (a claim in chess, automatic in Gardner) */
    MG_TERM_THREEFOLD_REPETITION, /* threefold repetition (a claim in chess, automatic in Gardner) */
    MG_TERM_CONNECTED,     /* four in a row, a Hex chain, three in a row */
    MG_TERM_BOARD_FULL,    /* drawn by a full board (Connect Four, tic-tac-toe) */
    MG_TERM_COUNT
};

/* Rule flags (mg_config.flags); each game reads only its own. */
#define MG_FLAG_CHESS960          (1u << 0) /* chess: Chess960 castling rules */
#define MG_FLAG_GARDNER_BISHOP    (1u << 1) /* gardner: allow promotion to bishop */
#define MG_FLAG_HEX_SWAP          (1u << 2) /* hex: pie (swap) rule */
/* Every flag some game defines; any other bit is refused by mg_config_check. */
#define MG_FLAGS_KNOWN (MG_FLAG_CHESS960 | MG_FLAG_GARDNER_BISHOP | MG_FLAG_HEX_SWAP)

/* Game configuration passed at construction; zero means "default". */
typedef struct mg_config {
    int board_size;   /* hex: n for an n x n board (1..19, default 11); 0 for the other games */
    uint32_t flags;   /* MG_FLAG_* */
} mg_config;

/* Longest text any game writes for a state (FEN, board text) or a move. */
#define MG_MAX_TEXT 1024
#define MG_MAX_MOVE_STR 16
/* Bounds over all games, for stack buffers in generic code. */
#define MG_MAX_MOVES 592      /* >= every game's max_moves (chess: MG_CHESS_MAX_MOVES) */
#define MG_MAX_UNDO 256       /* >= every game's undo_size */
#define MG_MAX_STATE 4096     /* >= every game's state_size */

struct mg_rng;
struct mg_cancel;
struct mg_mav_codec;
struct mg_san_ops;

typedef struct mg_game {
    const char *name;        /* "chess", "chess960", "gardner", "connect_four", "hex", "tictactoe" */
    size_t state_size;       /* bytes of a state */
    size_t undo_size;        /* bytes of an undo record */
    int max_moves;           /* upper bound on the number of legal actions in any state */
    int32_t num_actions;     /* action ids lie in [0, num_actions) */

    /* Start position for `cfg` (NULL: defaults). */
    int (*init)(void *st, const mg_config *cfg, char *err, size_t errlen);
    /* Position from the game's own text (FEN for the chess family). */
    int (*from_text)(void *st, const mg_config *cfg, const char *text, char *err, size_t errlen);
    /* The game's own text for the state, NUL-terminated; returns its length (excluding NUL). */
    size_t (*to_text)(const void *st, char *buf, size_t buflen);

    /* Legal actions (rules only: a drawn-by-rule state may still have moves; check
     * outcome() first in search).  `out` has room for max_moves; returns the count. */
    int (*legal_actions)(const void *st, int32_t *out);
    /* Non-zero if `a` is legal in `st` (any int32 value is accepted). */
    int (*is_legal)(const void *st, int32_t a);
    /* Apply a legal action; the previous state can be restored with unmake. */
    void (*make)(void *st, int32_t a, void *undo);
    void (*unmake)(void *st, int32_t a, const void *undo);

    /* MG_P0 or MG_P1. */
    int (*to_move)(const void *st);
    /* enum mg_result; `reason` (may be NULL) receives enum mg_termination. */
    int (*outcome)(const void *st, int *reason);
    /* Optional (NULL: the game has none; mg_legal_outcome below calls legal_actions and outcome):
     * legal_actions(st, out) and outcome(st, reason) from one move generation, for a game whose
     * outcome generates (or counts) the moves anyway.  Writes the same actions in the same order as
     * legal_actions, returns their count, and *result (never NULL) and *reason (may be NULL) are
     * exactly outcome's. */
    int (*legal_outcome)(const void *st, int32_t *out, int *result, int *reason);
    /* Optional (NULL: memcpy of state_size bytes; mg_state_copy below picks): copy state `src` into `dst`
     * (distinct buffers of state_size bytes), skipping bytes that no function of this interface reads in
     * `src`'s position or in any position make() leads to from it (chess: the repetition history before the
     * last irreversible move); those bytes of `dst` keep what they held.  Every function then answers on `dst`
     * exactly as on `src`.  For search's copy of the root at each simulation. */
    void (*copy)(void *dst, const void *src);
    /* 64-bit position hash (Zobrist where the game supports it). */
    uint64_t (*hash)(const void *st);

    /* Move text (UCI for chess, a1..e5 squares for Gardner, 1..7 for Connect Four,
     * cells for Hex).  to_str returns the length written (0 if `a` is not a valid
     * action id for this game). */
    size_t (*action_to_str)(const void *st, int32_t a, char *buf, size_t buflen);
    /* Parse a move string; MG_OK and *a on success.  Fails with a message if the
     * string is malformed or the move is not legal in `st`. */
    int (*action_from_str)(const void *st, const char *s, int32_t *a, char *err, size_t errlen);

    /* Optional fast perft (NULL: the generic one in game.c).  `cancel` (may be NULL) is
     * ticked at interior nodes; once it asks to stop, the count is meaningless (the state
     * is still restored) and the caller must look at cancel->stopped. */
    uint64_t (*perft)(void *st, int depth, struct mg_cancel *cancel);
    /* Optional specialised uniformly random playout with the outcome distribution of
     * move-by-move random play (NULL: mg_random_playout_moves); see mg_random_playout. */
    int (*random_playout)(const struct mg_game *g, void *st, struct mg_rng *rng, int max_plies, int *plies);
    /* Observation tensor (OpenSpiel's ObservationTensor): float32 planes x rows x cols, rows in
     * the order of the game's text (top row first), columns left to right; the planes of each
     * game are listed above its observation function and in docs/architecture.md.  obs_shape writes {planes, rows, cols} for `st` (Hex: its size);
     * observation fills planes * rows * cols floats of the caller's buffer. */
    void (*obs_shape)(const void *st, int shape[3]);
    void (*observation)(const void *st, float *out);
    /* The MG_FLAG_* bits this game reads (chess960 accepts MG_FLAG_CHESS960, which it implies). */
    uint32_t rule_flags;
    /* Games with a choice of board: the largest mg_config.board_size (sizes 1..max; 0: the
     * default).  0: a fixed board, where any board_size but 0 is refused by mg_config_check. */
    int max_board_size;

    /* The game's parts of generic code, each written in the game's folder and reached only
     * through these pointers, so generic code never tests a game's name.  NULL: the game has none. */
    /* The MAV format's %state codec and move tokens (format/mav_codec.h); NULL: no MAV text. */
    const struct mg_mav_codec *mav;
    /* Standard Algebraic Notation hooks of the chess family (games/san.h); NULL: no SAN. */
    const struct mg_san_ops *san;
} mg_game;

/* The registry (registry.c). */
const mg_game *mg_game_by_name(const char *name);
const mg_game *mg_game_at(int i);   /* NULL past the end */
int mg_game_count(void);
/* Fill the read-only tables of all games (attack tables, Zobrist keys): called
 * once at start-up (module import, test main) before any game is used.  After
 * it returns those tables are never written again. */
void mg_games_init(void);

/* MG_OK if `cfg` (NULL: defaults) sets only flags of `g` and a board_size `g` has (0 for a
 * fixed-board game, 0..max_board_size otherwise); else MG_ERR with a message naming the
 * game, the offending value and the flags the game knows.  Callers building states from outside
 * data (the binding's constructor) check first: a game's init ignores bits it does not read. */
int mg_config_check(const mg_game *g, const mg_config *cfg, char *err, size_t errlen);

/* Generic algorithms over the interface (game.c). */
/* `cancel` (may be NULL): see cancel.h; when cancel->stopped is set on return, the counts
 * are meaningless (the state is restored all the same). */
uint64_t mg_perft_generic(const mg_game *g, void *st, int depth, struct mg_cancel *cancel);
uint64_t mg_perft(const mg_game *g, void *st, int depth);
uint64_t mg_perft_cancel(const mg_game *g, void *st, int depth, struct mg_cancel *cancel);
/* Per-move perft: writes the legal actions to `moves` and their subtree counts
 * (depth-1) to `counts` (both with max_moves entries); returns the move count. */
int mg_perft_divide(const mg_game *g, void *st, int depth, int32_t *moves, uint64_t *counts,
                    struct mg_cancel *cancel);

/* The legal actions of `st` into `out` (room for max_moves; returns the count) and its outcome into
 * *result (and *reason, may be NULL): the game's legal_outcome hook when it has one, else
 * legal_actions then outcome.  The same answers either way. */
int mg_legal_outcome(const mg_game *g, const void *st, int32_t *out, int *result, int *reason);

/* Copy a state: the game's copy hook when it has one (which may skip bytes nothing reads), else memcpy. */
static inline void mg_state_copy(const mg_game *g, void *dst, const void *src)
{
    if (g->copy)
        g->copy(dst, src);
    else
        memcpy(dst, src, g->state_size);
}

/* Play uniformly random legal moves from `st` (modified in place, no undo) until the game
 * ends or `max_plies` moves were made; returns the enum mg_result reached (MG_ONGOING if
 * cut off) and, if plies != NULL, the number of moves made.  mg_random_playout uses the
 * game's specialised playout when it has one (Hex fills the board: same outcomes, faster;
 * the state it leaves may differ from move-by-move play); mg_random_playout_moves always
 * plays move by move through the interface. */
int mg_random_playout(const mg_game *g, void *st, struct mg_rng *rng, int max_plies, int *plies);
int mg_random_playout_moves(const mg_game *g, void *st, struct mg_rng *rng, int max_plies, int *plies);

/* Copy `len` bytes of `src` into `buf` (capacity `buflen`) as a NUL-terminated string,
 * truncating if it does not fit; returns the length written.  For to_text implementations. */
size_t mg_text_out(char *buf, size_t buflen, const char *src, size_t len);

/* Quoting user text (a move string, a name) in an error message, the same in every parser:
 * mg_quote_str writes `s` in single quotes, whole if it has at most `max` bytes, else its longest
 * prefix of whole UTF-8 characters within `max` bytes followed by "..." inside the quotes
 * ('e2e4', 'aaaaaaaa...'), so a message never shows half a character (U+FFFD in Python) and
 * always marks a cut.  A byte that is no part of a valid character counts as one character.
 * NUL-terminated into `buf`; `max` is lowered to buflen - 6 if the buffer is smaller than
 * max + 6 (MG_QUOTE_BUF holds MG_QUOTE_MAX).  Returns buf, for use as a printf argument.  Every game's
 * move parser (action_from_str, SAN) quotes the move with it.  (The MAV text readers' mg_quote, in
 * format/mav_util.h, is another thing: it shows a span of raw bytes escaped, '\xc3\xa9'.) */
#define MG_QUOTE_MAX 32
#define MG_QUOTE_BUF (MG_QUOTE_MAX + 6)
const char *mg_quote_str(char *buf, size_t buflen, const char *s, size_t max);
/* The same for the n bytes at s (a field inside a longer text; no NUL needed). */
const char *mg_quote_span(char *buf, size_t buflen, const char *s, size_t n, size_t max);
/* Both into a buffer of the enclosing block (a compound literal), for a printf argument:
 * snprintf(err, errlen, "invalid move %s", MG_QUOTE(s, MG_QUOTE_MAX)).  `max` is a constant. */
#define MG_QUOTE(s, max) mg_quote_str((char[(max) + 6]){0}, (max) + 6, (s), (max))
#define MG_QUOTE_SPAN(s, n, max) mg_quote_span((char[(max) + 6]){0}, (max) + 6, (s), (n), (max))

const char *mg_result_string(int result);       /* "1-0", "0-1", "1/2-1/2", "*" */
const char *mg_termination_name(int reason);    /* "checkmate", ... */

#ifdef __cplusplus
}
#endif
#endif /* MG_GAME_H */

/*
 * c4_solver.h - perfect (strong) Connect Four solver.
 *
 * Score convention (the one of the public Connect Four solver test sets), always
 * from the point of view of the side to move:
 *   score > 0: the side to move wins; score = 22 - (number of its own stones on the
 *              board when it completes four in a row, the winning stone included),
 *              so winning as early as possible scores highest (at most 18);
 *   score = 0: draw (the board fills up with no four);
 *   score < 0: the opponent wins; score = -(22 - the opponent's stone count at its win).
 * Equivalently, a win on the move that brings the board to n stones scores
 * (44 - n) / 2 (integer division) for the winner.  With perfect play, the score of a
 * position with `n` stones and the score of each child follow
 *   score(s) = max over legal columns c of move_score(s, c),
 *   move_score(s, c) = (43 - n) / 2 if c completes four, else -score(child).
 * A terminal state (the last move won) scores -(44 - n) / 2 for the side to move
 * (it has lost), a full board 0.  The empty board scores +1 (the first player wins
 * with its 21st stone).
 *
 * Algorithm: negamax with alpha-beta on bitboards; a transposition table keeping
 * both bounds and the best move, allocated once per solver object (2 MiB aligned, huge
 * pages where available) and kept across calls: entries hold the full position key, so
 * they stay valid for any later position; in the opening a position and its mirror
 * image share an entry.  Enhanced transposition cutoffs; move ordering by the number of
 * threats a move creates, centre columns first on ties, the table's best move before
 * all; pruning of moves that lose at once (playing below an opponent's winning cell,
 * ignoring a single forced block, facing two threats); null-window searches that narrow
 * the score interval (binary search biased towards 0) at the root.
 *
 * A solver object is not thread-safe: use one per thread.  Searches never allocate.
 */
#ifndef MG_C4_SOLVER_H
#define MG_C4_SOLVER_H
#include "connect_four.h"
#include "c4_book.h"

struct mg_cancel;

#define MG_C4_MIN_SCORE (-18)
#define MG_C4_MAX_SCORE 18
/* move_score entry for an illegal column or a move not solved within the budget. */
#define MG_C4_NO_SCORE (-1000)

typedef struct mg_c4_solver mg_c4_solver;

/* A solver with a transposition table of 2^tt_log2 entries of 8 bytes
 * (tt_log2 in 10..30; 0 picks the default 23, i.e. 64 MiB).  NULL with a message
 * if the argument is out of range or the memory is not available. */
mg_c4_solver *mg_c4_solver_new(int tt_log2, char *err, size_t errlen);
void mg_c4_solver_free(mg_c4_solver *sv);
/* Empty the transposition table (only needed for cold timings: entries never go stale). */
void mg_c4_solver_clear(mg_c4_solver *sv);
size_t mg_c4_solver_tt_bytes(const mg_c4_solver *sv);
/* Use `book` (c4_book.h; NULL: none) from the next search on: a position the book holds is not
 * searched.  The book and its buffer stay the caller's and must outlive its use. */
void mg_c4_solver_set_book(mg_c4_solver *sv, const mg_c4_book *book);

typedef struct mg_c4_limits {
    uint64_t max_nodes;  /* 0: no node budget */
    double max_seconds;  /* <= 0: no time budget */
    int weak;            /* non-zero: only win (+1) / draw (0) / loss (-1) */
    struct mg_cancel *cancel; /* NULL: none; checked with the budget every 4096 nodes.  A stop
                                 reads like a spent budget (complete == 0) with
                                 cancel->stopped set */
} mg_c4_limits;

typedef struct mg_c4_solution {
    int score;                       /* valid if complete */
    int complete;                    /* 0 if the budget ran out first */
    uint64_t nodes;                  /* negamax nodes searched */
    int move_score[MG_C4_WIDTH];     /* mg_c4_solve_moves only; MG_C4_NO_SCORE if illegal/unknown */
    int best_col;                    /* mg_c4_solve_moves*: the column of the highest score, ties to the
                                        most central (-1: none, a finished game or an incomplete solve) */
} mg_c4_solution;

/* Exact score of `s` (see the convention above).  Returns MG_OK (the result may be
 * incomplete if the budget ran out: out->complete == 0). `limits` may be NULL. */
int mg_c4_solve(mg_c4_solver *sv, const mg_c4_state *s, const mg_c4_limits *limits, mg_c4_solution *out);
/* Exact score of `s` and of every legal column (out->move_score[col]).  On a budget
 * stop, the columns solved so far keep their scores and the rest read MG_C4_NO_SCORE. */
int mg_c4_solve_moves(mg_c4_solver *sv, const mg_c4_state *s, const mg_c4_limits *limits,
                      mg_c4_solution *out);

/* What mg_c4_solve_moves gives for perfect play - out->score exact and out->best_col the column of the
 * highest exact score (the fastest win, else a draw, else the slowest loss), ties to the most central -
 * with out->move_score only the win (+1) / draw (0) / loss (-1) of each legal column, at a fraction of
 * the cost: weak solves of every column, then exact work on the columns of the best value only (none
 * for a draw; one exact solve and a null-window test of each other column for a win or a loss).
 * limits->weak is ignored.  On a budget stop the columns solved so far keep their values, best_col -1. */
int mg_c4_solve_moves_wdl(mg_c4_solver *sv, const mg_c4_state *s, const mg_c4_limits *limits,
                          mg_c4_solution *out);

/* Number of moves left until the end of the game with perfect play, given the
 * score of a position with `nmoves` stones (used to classify test positions). */
int mg_c4_moves_to_end(int nmoves, int score);

#endif

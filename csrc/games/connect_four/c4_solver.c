/* c4_solver.c - perfect Connect Four solver (see c4_solver.h). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* madvise */
#endif
#include "c4_solver.h"
#include "../../cancel.h"
#include "../../clock.h"
#include "../../multiversion.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/*
 * Transposition table entry (one uint64, 0 = empty):
 *   bits 15..63  position key cur + mask (< 2^49)
 *   bits  9..14  lower bound + 32 (0: none)
 *   bits  3..8   upper bound + 32 (0: none)
 *   bits  0..2   best column + 1 (0: none)
 */
#define TT_KEY_SHIFT 15
#define TT_BOUND_OFF 32
#define NO_LB (-64)
#define NO_UB 64

struct mg_c4_solver {
    uint64_t *tt;
    uint64_t tt_mask;
    int tt_log2;
    const mg_c4_book *book; /* NULL: none (not owned) */
};

typedef struct search {
    uint64_t *tt;
    uint64_t tt_mask;
    int tt_shift;
    uint64_t nodes;
    uint64_t max_nodes;   /* 0: none */
    uint64_t next_check;  /* node count at which to look at the budget */
    double deadline;      /* <= 0: none */
    mg_cancel *cancel;    /* NULL: none */
    int aborted;
    int sym_max;          /* positions with fewer stones share entries with their mirror image */
    const mg_c4_book *book;
    int book_min, book_max; /* stones of the positions the book holds */
} search;

static const int ORDER[MG_C4_WIDTH] = {3, 2, 4, 1, 5, 0, 6};

mg_c4_solver *mg_c4_solver_new(int tt_log2, char *err, size_t errlen)
{
    if (tt_log2 == 0)
        tt_log2 = 23;
    if (tt_log2 < 10 || tt_log2 > 30) {
        snprintf(err, errlen, "Connect Four solver: transposition table size 2^%d is out of range "
                 "(expected 10..30)", tt_log2);
        return NULL;
    }
    mg_c4_solver *sv = malloc(sizeof *sv);
    size_t bytes = ((size_t)1 << tt_log2) * sizeof(uint64_t);
    uint64_t *tt = NULL;
    void *p = NULL;
    /* 2 MiB aligned and backed by huge pages where the kernel allows: the table is probed at
     * random, and fewer TLB misses make the search 30-50% faster. */
    if (bytes >= ((size_t)2 << 20) && posix_memalign(&p, (size_t)2 << 20, bytes) == 0) {
#ifdef MADV_HUGEPAGE
        madvise(p, bytes, MADV_HUGEPAGE);
#endif
        memset(p, 0, bytes);
        tt = p;
    } else {
        tt = calloc((size_t)1 << tt_log2, sizeof(uint64_t));
    }
    if (!sv || !tt) {
        free(sv);
        free(tt);
        snprintf(err, errlen, "Connect Four solver: cannot allocate a transposition table of %zu MiB",
                 (((size_t)1 << tt_log2) * sizeof(uint64_t)) >> 20);
        return NULL;
    }
    sv->tt = tt;
    sv->tt_log2 = tt_log2;
    sv->tt_mask = ((uint64_t)1 << tt_log2) - 1;
    sv->book = NULL;
    return sv;
}

void mg_c4_solver_free(mg_c4_solver *sv)
{
    if (!sv)
        return;
    free(sv->tt);
    free(sv);
}

void mg_c4_solver_clear(mg_c4_solver *sv) { memset(sv->tt, 0, ((size_t)1 << sv->tt_log2) * sizeof(uint64_t)); }

void mg_c4_solver_set_book(mg_c4_solver *sv, const mg_c4_book *book) { sv->book = book; }

size_t mg_c4_solver_tt_bytes(const mg_c4_solver *sv) { return ((size_t)1 << sv->tt_log2) * sizeof(uint64_t); }

int mg_c4_moves_to_end(int nmoves, int score)
{
    if (score == 0)
        return MG_C4_CELLS - nmoves;
    int winner_first; /* the winner is the first player (x) */
    int k;            /* the winner's stones at its win */
    if (score > 0) {
        k = 22 - score;
        winner_first = (nmoves & 1) == 0;
    } else {
        k = 22 + score;
        winner_first = (nmoves & 1) == 1;
    }
    int end = winner_first ? 2 * k - 1 : 2 * k;
    return end - nmoves;
}

static inline uint64_t tt_index(const search *sr, uint64_t key)
{
    return (key * 0x9e3779b97f4a7c15ULL) >> sr->tt_shift;
}

static inline void tt_store(search *sr, uint64_t key, int lb, int ub, int best_col)
{
    uint64_t *e = &sr->tt[tt_index(sr, key)];
    uint64_t old = *e;
    if ((old >> TT_KEY_SHIFT) == key) {
        int olb = (int)((old >> 9) & 63), oub = (int)((old >> 3) & 63);
        if (olb && olb - TT_BOUND_OFF > lb)
            lb = olb - TT_BOUND_OFF;
        if (oub && oub - TT_BOUND_OFF < ub)
            ub = oub - TT_BOUND_OFF;
        if (best_col < 0)
            best_col = (int)(old & 7) - 1;
    }
    uint64_t v = key << TT_KEY_SHIFT;
    if (lb > NO_LB)
        v |= (uint64_t)(lb + TT_BOUND_OFF) << 9;
    if (ub < NO_UB)
        v |= (uint64_t)(ub + TT_BOUND_OFF) << 3;
    v |= (uint64_t)(best_col + 1);
    *e = v;
}

/* Positions with fewer stones share a table entry with their mirror image (this pays in
 * the opening, where mirrored lines meet; later it would rarely hit). */
#define SYM_MAX_STONES 12
/* Enhanced transposition cutoffs (probing the children's entries) below this many stones. */
#define ETC_MAX_STONES 30
/* From this many stones on, moves are tried centre first without counting threats (the count
 * costs more than it saves near the end). */
#define ORDER_MAX_STONES 32

#define mirror_key mg_c4_mirror_key

static inline int flip_col(int col, int flip) { return (flip && col >= 0) ? MG_C4_WIDTH - 1 - col : col; }

static void check_budget(search *sr)
{
    sr->next_check = sr->nodes + 4096;
    if (sr->max_nodes && sr->next_check > sr->max_nodes)
        sr->next_check = sr->max_nodes;
    if (sr->max_nodes && sr->nodes >= sr->max_nodes)
        sr->aborted = 1;
    else if (sr->deadline > 0 && mg_now_seconds() >= sr->deadline)
        sr->aborted = 1;
    else if (mg_cancel_check(sr->cancel))
        sr->aborted = 1;
}

/*
 * Negamax value of the position (cur, mask, n stones), within [alpha, beta]
 * (fail-hard at the window's edges: a result <= alpha is an upper bound, >= beta a
 * lower bound).  Precondition: the game is not over and the side to move cannot
 * complete four with its next stone.
 */
MG_HOT static int negamax(search *sr, uint64_t cur, uint64_t mask, int n, int alpha, int beta)
{
    sr->nodes++;
    if (sr->nodes >= sr->next_check) {
        check_budget(sr);
        if (sr->aborted)
            return 0;
    }
    uint64_t opp = cur ^ mask;
    __builtin_prefetch(&sr->tt[tt_index(sr, cur + mask)]); /* mirrored keys below 12 stones miss it */
    uint64_t possible = mg_c4_playable(mask);
    uint64_t opp_win = mg_c4_winning_cells(opp, mask);
    uint64_t forced = possible & opp_win;
    if (forced) {
        if (forced & (forced - 1))
            return -(MG_C4_CELLS - n) / 2; /* two threats to block: the opponent wins next */
        possible = forced;
    }
    possible &= ~(opp_win >> 1); /* never play just below an opponent's winning cell */
    if (!possible)
        return -(MG_C4_CELLS - n) / 2;
    if (n >= MG_C4_CELLS - 2)
        return 0;

    int lo = -(MG_C4_CELLS - 2 - n) / 2; /* the opponent cannot win on its next move */
    if (alpha < lo) {
        alpha = lo;
        if (alpha >= beta)
            return alpha;
    }
    int hi = (MG_C4_CELLS - 1 - n) / 2; /* we cannot win on this move */
    if (beta > hi) {
        beta = hi;
        if (alpha >= beta)
            return beta;
    }

    uint64_t key = cur + mask;
    if (sr->book && n >= sr->book_min && n <= sr->book_max) {
        uint64_t mk = mirror_key(key);
        int bs;
        if (mg_c4_book_lookup(sr->book, mk < key ? mk : key, &bs))
            return bs < alpha ? alpha : bs > beta ? beta : bs;
    }
    int flip = 0;
    if (n < sr->sym_max) {
        uint64_t mk = mirror_key(key);
        if (mk < key) {
            key = mk; /* mirrored positions share one entry */
            flip = 1;
        }
    }
    uint64_t e = sr->tt[tt_index(sr, key)];
    int tt_col = -1;
    if ((e >> TT_KEY_SHIFT) == key) {
        int lb = (int)((e >> 9) & 63), ub = (int)((e >> 3) & 63);
        if (lb && lb - TT_BOUND_OFF > alpha) {
            alpha = lb - TT_BOUND_OFF;
            if (alpha >= beta)
                return alpha;
        }
        if (ub && ub - TT_BOUND_OFF < beta) {
            beta = ub - TT_BOUND_OFF;
            if (alpha >= beta)
                return beta;
        }
        tt_col = flip_col((int)(e & 7) - 1, flip);
    }

    /* Order the candidate moves: table move first, then by threats created, centre first on ties. */
    uint64_t mv[MG_C4_WIDTH];
    int sc[MG_C4_WIDTH];
    int nm = 0;
    int single = (possible & (possible - 1)) == 0;
    for (int i = 0; i < MG_C4_WIDTH; i++) {
        int col = ORDER[i];
        uint64_t m = possible & mg_c4_col_mask(col);
        if (!m)
            continue;
        int s = col == tt_col ? 1000 : (single || n >= ORDER_MAX_STONES) ? 0
                                     : __builtin_popcountll(mg_c4_winning_cells(cur | m, mask));
        int j = nm++;
        while (j > 0 && sc[j - 1] < s) {
            mv[j] = mv[j - 1];
            sc[j] = sc[j - 1];
            j--;
        }
        mv[j] = m;
        sc[j] = s;
    }

    /* Enhanced transposition cutoff: a child whose table upper bound already refutes beta. */
    if (n < ETC_MAX_STONES) {
        for (int i = 0; i < nm; i++) {
            uint64_t ck = opp + (mask | mv[i]);
            if (n + 1 < sr->sym_max) {
                uint64_t mk = mirror_key(ck);
                if (mk < ck)
                    ck = mk;
            }
            uint64_t ce = sr->tt[tt_index(sr, ck)];
            int cub = (int)((ce >> 3) & 63);
            if ((ce >> TT_KEY_SHIFT) == ck && cub && TT_BOUND_OFF - cub >= beta) {
                int v = TT_BOUND_OFF - cub;
                tt_store(sr, key, v, NO_UB, flip_col(mg_c4_col_of(mv[i]), flip));
                return v;
            }
        }
    }

    int alpha0 = alpha;
    int best_col = -1;
    for (int i = 0; i < nm; i++) {
        uint64_t m = mv[i];
        int v = -negamax(sr, opp, mask | m, n + 1, -beta, -alpha);
        if (sr->aborted)
            return 0;
        if (v >= beta) {
            tt_store(sr, key, v, NO_UB, flip_col(mg_c4_col_of(m), flip));
            return v;
        }
        if (v > alpha) {
            alpha = v;
            best_col = mg_c4_col_of(m);
        }
    }
    if (alpha > alpha0)
        tt_store(sr, key, alpha, alpha, flip_col(best_col, flip)); /* exact */
    else
        tt_store(sr, key, NO_LB, alpha, -1);
    return alpha;
}

static void search_start(search *sr, mg_c4_solver *sv, const mg_c4_limits *lim, const mg_c4_state *root)
{
    memset(sr, 0, sizeof *sr);
    /* Below a symmetric root (the empty board, "4", ...) mirrored positions meet at any depth,
     * e.g. under the first moves 3 and 5: share entries everywhere then. */
    uint64_t rk = root->cur + root->mask;
    sr->sym_max = mirror_key(rk) == rk ? MG_C4_CELLS + 1 : SYM_MAX_STONES;
    sr->tt = sv->tt;
    sr->tt_mask = sv->tt_mask;
    sr->tt_shift = 64 - sv->tt_log2;
    sr->next_check = 4096;
    sr->book = sv->book;
    if (sv->book) {
        sr->book_min = sv->book->min_ply;
        sr->book_max = sv->book->max_ply;
    }
    if (lim) {
        sr->max_nodes = lim->max_nodes;
        sr->cancel = lim->cancel;
        if (lim->max_seconds > 0)
            sr->deadline = mg_now_seconds() + lim->max_seconds;
        if (sr->max_nodes && sr->max_nodes < sr->next_check)
            sr->next_check = sr->max_nodes;
    }
}

/* 1 and the exact score in *score if the position needs no search: the last move won, the board
 * is full, or the side to move completes four at once; 0 otherwise. */
static int trivial_score(uint64_t cur, uint64_t mask, int n, int *score)
{
    if (mg_c4_has_four(cur ^ mask))
        *score = -(44 - n) / 2; /* the last move won */
    else if (n >= MG_C4_CELLS)
        *score = 0;
    else if (mg_c4_winning_cells(cur, mask) & mg_c4_playable(mask))
        *score = (43 - n) / 2;
    else
        return 0;
    return 1;
}

/* No probe median given to solve_range: the usual choice (binary search biased towards 0). */
#define NO_PROBE (-1000)

/*
 * Exact score of a position (any state, terminal included) known to lie in [lo, hi]; with a range
 * narrower than the true one, a score outside it reads as the nearer end or beyond (hi = 1 and
 * lo = -1: its sign).  `first` (NO_PROBE: none) is the median of the first null-window search, e.g.
 * the one threshold a caller needs to compare with.  Sets sr->aborted on a budget stop.
 */
static int solve_range(search *sr, uint64_t cur, uint64_t mask, int n, int lo, int hi, int first)
{
    int t;
    if (trivial_score(cur, mask, n, &t))
        return t;
    int min = -(MG_C4_CELLS - n) / 2, max = (MG_C4_CELLS + 1 - n) / 2;
    if (lo < min)
        lo = min;
    if (hi > max)
        hi = max;
    while (lo < hi) {
        int med = lo + (hi - lo) / 2;
        if (first != NO_PROBE && first >= lo && first < hi)
            med = first;
        else if (med <= 0 && lo / 2 < med)
            med = lo / 2;
        else if (med >= 0 && hi / 2 > med)
            med = hi / 2;
        first = NO_PROBE;
        int r = negamax(sr, cur, mask, n, med, med + 1);
        if (sr->aborted)
            return 0;
        if (r <= med)
            hi = r;
        else
            lo = r;
    }
    return lo;
}

/* Exact score of a position (any state, terminal included); sets sr->aborted on a budget stop. */
static int solve_exact(search *sr, uint64_t cur, uint64_t mask, int n, int weak)
{
    return weak ? solve_range(sr, cur, mask, n, -1, 1, NO_PROBE)
                : solve_range(sr, cur, mask, n, NO_LB, NO_UB, NO_PROBE);
}

/* The score, or only its sign (+1 win, 0 draw, -1 loss) if `weak`. */
static int solve_position(search *sr, uint64_t cur, uint64_t mask, int n, int weak)
{
    int v = solve_exact(sr, cur, mask, n, weak);
    return weak ? (v > 0) - (v < 0) : v;
}

/* The start of every solve: the search's state and an empty solution (no best column, no scores). */
static void solution_start(search *sr, mg_c4_solver *sv, const mg_c4_limits *limits, const mg_c4_state *s,
                           mg_c4_solution *out)
{
    search_start(sr, sv, limits, s);
    memset(out, 0, sizeof *out);
    out->best_col = -1;
    for (int c = 0; c < MG_C4_WIDTH; c++)
        out->move_score[c] = MG_C4_NO_SCORE;
}

int mg_c4_solve(mg_c4_solver *sv, const mg_c4_state *s, const mg_c4_limits *limits, mg_c4_solution *out)
{
    search sr;
    solution_start(&sr, sv, limits, s, out);
    int score = solve_position(&sr, s->cur, s->mask, (int)s->nmoves, limits && limits->weak);
    out->nodes = sr.nodes;
    out->complete = !sr.aborted;
    out->score = sr.aborted ? 0 : score;
    return MG_OK;
}

int mg_c4_solve_moves(mg_c4_solver *sv, const mg_c4_state *s, const mg_c4_limits *limits,
                      mg_c4_solution *out)
{
    search sr;
    solution_start(&sr, sv, limits, s, out);
    int weak = limits && limits->weak;
    int n = (int)s->nmoves;
    int best = MG_C4_NO_SCORE;
    int over = mg_c4_has_four(s->cur ^ s->mask) || n >= MG_C4_CELLS;
    if (over) {
        best = solve_position(&sr, s->cur, s->mask, n, weak);
    } else {
        for (int i = 0; i < MG_C4_WIDTH && !sr.aborted; i++) {
            int col = ORDER[i];
            if (s->mask & mg_c4_top_col(col))
                continue;
            uint64_t m = (s->mask + mg_c4_bottom_col(col)) & mg_c4_col_mask(col);
            int v = -solve_position(&sr, s->cur ^ s->mask, s->mask | m, n + 1, weak);
            if (sr.aborted)
                break;
            out->move_score[col] = v;
            if (v > best) { /* strictly: ties stay with the more central column (ORDER) */
                best = v;
                out->best_col = col;
            }
        }
    }
    out->nodes = sr.nodes;
    out->complete = !sr.aborted;
    out->score = sr.aborted ? 0 : best;
    if (sr.aborted)
        out->best_col = -1;
    return MG_OK;
}

int mg_c4_solve_moves_wdl(mg_c4_solver *sv, const mg_c4_state *s, const mg_c4_limits *limits,
                          mg_c4_solution *out)
{
    search sr;
    solution_start(&sr, sv, limits, s, out);
    int n = (int)s->nmoves;
    uint64_t opp = s->cur ^ s->mask;
    if (mg_c4_has_four(opp) || n >= MG_C4_CELLS) {
        out->score = solve_position(&sr, s->cur, s->mask, n, 0);
        out->complete = 1;
        return MG_OK;
    }
    /* 0. a position the book holds: its exact score bounds every column's (a column scores at most the
     * position), so its children's scores from below: none is searched in a lost position, and each gets
     * one null-window test (loss or draw?) in a drawn one */
    int booked = 0, root = 0;
    if (sv->book && mg_c4_book_probe(sv->book, s, &root) == 1)
        booked = 1;
    int child_lo = booked ? (-root > -1 ? -root : -1) : -1;
    /* 1. win / draw / loss of every column (weak solves of the children, centre first) */
    uint64_t child[MG_C4_WIDTH];
    int cols[MG_C4_WIDTH], nc = 0, wdl = -2;
    for (int i = 0; i < MG_C4_WIDTH && !sr.aborted; i++) {
        int col = ORDER[i];
        if (s->mask & mg_c4_top_col(col))
            continue;
        uint64_t m = (s->mask + mg_c4_bottom_col(col)) & mg_c4_col_mask(col);
        int cs = solve_range(&sr, opp, s->mask | m, n + 1, child_lo, 1, NO_PROBE);
        int v = (cs < 0) - (cs > 0);
        if (sr.aborted)
            break;
        out->move_score[col] = v;
        if (v > wdl) {
            wdl = v;
            nc = 0;
        }
        if (v == wdl) {
            cols[nc] = col;
            child[nc++] = s->mask | m;
        }
    }
    /* 2. perfect play's column among those of the best value.  A drawn column scores exactly 0: the most
     * central one.  Won (lost) columns: the position's exact score, searched within what step 1 proved
     * (>= 1 for a win, <= -1 for a loss; the table holds the children's bounds), is the fastest win
     * (slowest loss); the most central column that reaches it is the first, in centre-first order, whose
     * null-window test at that score says so (each test is one search; a column reaching it is not
     * solved further).  This beat solving the most central column exactly and testing whether each
     * other one scores more by 4-10% in nodes on random positions of 10 and 11 stones. */
    int best = 0, best_col = nc ? cols[0] : -1;
    if (!sr.aborted && wdl != 0) {
        best = booked ? root
                      : solve_range(&sr, s->cur, s->mask, n, wdl > 0 ? 1 : NO_LB, wdl > 0 ? NO_UB : -1, NO_PROBE);
        /* children's score range: <= -1 under a won column, >= 1 under a lost one */
        int clo = wdl > 0 ? NO_LB : 1, chi = wdl > 0 ? -1 : NO_UB;
        int u = -best; /* a column reaches `best` iff its child scores <= u */
        best_col = -1;   /* stays so only if no column reached it: a solver bug, reported as incomplete */
        for (int i = 0; i < nc && !sr.aborted; i++) {
            int cs = solve_range(&sr, opp, child[i], n + 1, clo, u + 1 < chi ? u + 1 : chi, u);
            if (!sr.aborted && cs <= u) {
                best_col = cols[i];
                break;
            }
        }
    }
    out->nodes = sr.nodes;
    out->complete = !sr.aborted && best_col >= 0;
    out->score = out->complete ? best : 0;
    out->best_col = out->complete ? best_col : -1;
    return MG_OK;
}

/* hex_solver.c - exact Hex solver for small boards (see hex_solver.h). */
#include "hex_solver.h"
#include "../../cancel.h"
#include "../../multiversion.h"
#include "../../rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bit i = r * n + c (the action id).  Colour 0 = black (rows), 1 = white (columns). */
typedef struct solver {
    int n;
    uint64_t board, col0, collast;
    uint64_t start[2], end[2];        /* per colour: its first and second edge */
    int order[64];                    /* cells, centre first */
    int ncells;
    uint64_t *tt;                     /* pairs (black | flags, white | flags) */
    uint64_t ttmask;                  /* number of pairs - 1 */
    uint64_t nodes, max_nodes;
    mg_cancel *cancel;
    int aborted;
} solver;

/* Flag bits above the 49 cells of a 7x7 board. */
#define F_USED (1ULL << 63)
#define F_WHITE_TO_MOVE (1ULL << 62)
#define F_WIN (1ULL << 63)

static inline uint64_t nbrs(const solver *sv, uint64_t b)
{
    int n = sv->n;
    uint64_t notlast = b & ~sv->collast, notfirst = b & ~sv->col0;
    uint64_t x = (notlast << 1) | (notfirst >> 1) | (b >> n) | (notlast >> (n - 1)) | (b << n) | (notfirst << (n - 1));
    return x & sv->board;
}

static inline uint64_t flood(const solver *sv, uint64_t seed, uint64_t allowed)
{
    uint64_t x = seed & allowed, prev;
    do {
        prev = x;
        x |= nbrs(sv, x) & allowed;
    } while (x != prev);
    return x;
}

/* Empty cells where `colour` (stones `own`) connects its edges with one stone. */
static inline uint64_t win_cells(const solver *sv, uint64_t own, uint64_t empty, int colour)
{
    uint64_t t = flood(sv, own & sv->start[colour], own);
    uint64_t b = flood(sv, own & sv->end[colour], own);
    uint64_t tt = (nbrs(sv, t) | sv->start[colour]) & empty;
    uint64_t bt = (nbrs(sv, b) | sv->end[colour]) & empty;
    return tt & bt;
}

static inline int connected(const solver *sv, uint64_t own, int colour)
{
    return (flood(sv, own & sv->start[colour], own) & sv->end[colour]) != 0;
}

/* Fewest empty cells `colour` needs to connect (stones `own`, usable cells own | empty); 99 if blocked. */
static int distance(const solver *sv, uint64_t own, uint64_t empty, int colour)
{
    uint64_t usable = own | empty;
    uint64_t r = flood(sv, own & sv->start[colour], own);
    for (int k = 0; k <= sv->n * sv->n; k++) {
        if (r & sv->end[colour])
            return k;
        uint64_t grow = (nbrs(sv, r) | sv->start[colour]) & empty & ~r;
        if (!grow)
            return 99;
        uint64_t x = r | grow, prev;
        do {
            prev = x;
            x |= nbrs(sv, x) & own;
        } while (x != prev);
        r = x & usable;
    }
    return 99;
}


static inline uint64_t mirror_bit(const solver *sv, uint64_t black)
{
    int a = __builtin_ctzll(black);
    int r = a / sv->n, c = a % sv->n;
    return 1ULL << (c * sv->n + r);
}

static inline uint64_t rev64(uint64_t x)
{
    x = ((x >> 1) & 0x5555555555555555ULL) | ((x & 0x5555555555555555ULL) << 1);
    x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
    x = ((x >> 4) & 0x0f0f0f0f0f0f0f0fULL) | ((x & 0x0f0f0f0f0f0f0f0fULL) << 4);
    return __builtin_bswap64(x);
}

/* The table key of a position: the smaller of it and its 180-degree rotation (which maps
 * every edge to its opposite and so keeps the value). */
static inline uint64_t *tt_slot(const solver *sv, uint64_t *b, uint64_t *w, int colour)
{
    int sh = 64 - sv->n * sv->n;
    uint64_t rb = rev64(*b) >> sh, rw = rev64(*w) >> sh;
    if (rb < *b || (rb == *b && rw < *w)) {
        *b = rb;
        *w = rw;
    }
    *b |= F_USED | (colour ? F_WHITE_TO_MOVE : 0);
    return sv->tt + 2 * (mg_mix64(*b ^ mg_mix64(*w)) & sv->ttmask);
}

static int tt_probe(const solver *sv, uint64_t b, uint64_t w, int colour, int *win)
{
    uint64_t *e = tt_slot(sv, &b, &w, colour);
    if (e[0] == b && (e[1] & ~F_WIN) == w) {
        *win = (e[1] & F_WIN) != 0;
        return 1;
    }
    return 0;
}

static void tt_store(solver *sv, uint64_t b, uint64_t w, int colour, int win)
{
    uint64_t *e = tt_slot(sv, &b, &w, colour);
    e[0] = b;
    e[1] = w | (win ? F_WIN : 0);
}

/* 1 if the player to move (`colour`) wins; positions are non-terminal.  `swap_ok`: the
 * swap move is available.  On abort the return value is meaningless. */
MG_HOT static int solve(solver *sv, uint64_t bb[2], int colour, int swap_ok)
{
    sv->nodes++;
    if ((sv->max_nodes && sv->nodes > sv->max_nodes) || mg_cancel_tick(sv->cancel)) {
        sv->aborted = 1;
        return 0;
    }
    uint64_t own = bb[colour], opp = bb[colour ^ 1];
    uint64_t empty = sv->board & ~(own | opp);
    if (win_cells(sv, own, empty, colour))
        return 1;
    int win;
    if (tt_probe(sv, bb[0], bb[1], colour, &win))
        return win;
    if (swap_ok) {
        /* One black stone, white to move: swapping gives white the mirrored stone, black to move. */
        uint64_t nb[2] = {0, mirror_bit(sv, bb[0])};
        int r = solve(sv, nb, 0, 0);
        if (sv->aborted)
            return 0;
        if (!r) {
            tt_store(sv, bb[0], bb[1], colour, 1);
            return 1;
        }
    }
    uint64_t threats = win_cells(sv, opp, empty, colour ^ 1);
    win = 0;
    if (threats & (threats - 1)) {
        win = 0;
    } else {
        uint64_t cand = threats ? threats : empty;
        if (!threats) {
            /* Opponent cells x that would leave it two winning cells: the mover must play on x
             * or on one of those cells, unless its move creates a winning threat of its own. */
            uint64_t must = empty, e = empty;
            while (e) {
                uint64_t x = e & (0 - e);
                e ^= x;
                uint64_t w = win_cells(sv, opp | x, empty & ~x, colour ^ 1);
                if (w & (w - 1))
                    must &= w | x;
            }
            if (must != empty) {
                uint64_t rest = empty & ~must;
                while (rest) {
                    uint64_t m = rest & (0 - rest);
                    rest ^= m;
                    if (!win_cells(sv, own | m, empty & ~m, colour))
                        cand &= ~m;
                }
            }
        }
        int moves[64], k = 0;
        uint32_t score[64];
        /* Candidates sorted by (opponent's distance - own distance) after the move, the
         * distance being the fewest empty cells a player still needs; ties centre first. */
        for (int i = 0; i < sv->ncells; i++) {
            int a = sv->order[i];
            if (!(cand >> a & 1))
                continue;
            uint64_t m = 1ULL << a;
            int d1 = distance(sv, own | m, empty & ~m, colour), d2 = distance(sv, opp, empty & ~m, colour ^ 1);
            uint32_t h = (uint32_t)(1000 + d2 - d1);
            int j = k++;
            while (j > 0 && score[j - 1] < h) {
                moves[j] = moves[j - 1];
                score[j] = score[j - 1];
                j--;
            }
            moves[j] = a;
            score[j] = h;
        }
        for (int i = 0; i < k && !win; i++) {
            uint64_t m = 1ULL << moves[i];
            bb[colour] |= m;
            int r = solve(sv, bb, colour ^ 1, 0);
            bb[colour] &= ~m;
            if (sv->aborted)
                return 0;
            win = !r;
        }
    }
    tt_store(sv, bb[0], bb[1], colour, win);
    return win;
}

int mg_hex_solve(const mg_hex_state *s, uint64_t max_nodes, mg_cancel *cancel, mg_hex_solution *out, char *err,
                 size_t errlen)
{
    int n = s->n;
    memset(out, 0, sizeof *out);
    if (n > MG_HEX_SOLVER_MAX_N) {
        snprintf(err, errlen, "hex solver: board size %d is too large (at most %d)", n, MG_HEX_SOLVER_MAX_N);
        return MG_ERR;
    }
    int colour = s->to_move;
    if (s->winner) {
        out->value = -1;
        out->complete = 1;
        return MG_OK;
    }
    solver sv;
    memset(&sv, 0, sizeof sv);
    sv.n = n;
    sv.max_nodes = max_nodes;
    sv.cancel = cancel;
    int nn = n * n;
    sv.board = nn == 64 ? ~0ULL : (1ULL << nn) - 1;
    for (int r = 0; r < n; r++) {
        sv.col0 |= 1ULL << (r * n);
        sv.collast |= 1ULL << (r * n + n - 1);
    }
    sv.start[0] = (1ULL << n) - 1;
    sv.end[0] = sv.start[0] << (n * (n - 1));
    sv.start[1] = sv.col0;
    sv.end[1] = sv.collast;
    /* Centre first: order by the squared Euclidean distance from the centre (x = c + r / 2,
     * y = r * sqrt(3) / 2, scaled by 4 to stay integral). */
    sv.ncells = nn;
    int key[64];
    for (int a = 0; a < nn; a++) {
        int r = a / n, c = a % n;
        /* axial (q, r) -> cartesian x = c + r / 2, y = r * sqrt(3) / 2; doubled to stay integral */
        int dx = 4 * c + 2 * r - 3 * (n - 1), dy = 2 * r - (n - 1);
        key[a] = dx * dx + 3 * dy * dy;
        sv.order[a] = a;
    }
    for (int i = 1; i < nn; i++)
        for (int j = i; j > 0 && key[sv.order[j]] < key[sv.order[j - 1]]; j--) {
            int t = sv.order[j];
            sv.order[j] = sv.order[j - 1];
            sv.order[j - 1] = t;
        }
    uint64_t entries = n <= 3 ? 1ULL << 10 : n == 4 ? 1ULL << 16 : 1ULL << 20;
    while (max_nodes && entries > 1024 && entries / 2 >= max_nodes)
        entries >>= 1;
    sv.tt = calloc(entries, 2 * sizeof(uint64_t));
    if (!sv.tt) {
        snprintf(err, errlen, "hex solver: cannot allocate a %llu-entry table", (unsigned long long)entries);
        return MG_ERR;
    }
    sv.ttmask = entries - 1;

    uint64_t bb[2] = {0, 0};
    for (int a = 0; a < nn; a++) {
        int c = mg_hex_cell(s, a / n, a % n);
        if (c == MG_HEX_BLACK)
            bb[0] |= 1ULL << a;
        else if (c == MG_HEX_WHITE)
            bb[1] |= 1ULL << a;
    }
    int swap_avail = mg_hex_swap_available(s);
    /* From the empty board with the swap rule, white may swap after black's first stone. */
    int child_swap = s->swap_rule && s->nstones == 0 && !s->swapped;
    int unknown = 0, any_win = 0;
    /* Every legal move: cells in action order, then swap. */
    for (int a = 0; a <= nn; a++) {
        uint64_t m = a < nn ? 1ULL << a : 0;
        int8_t v = 0;
        if (a < nn) {
            if ((bb[0] | bb[1]) & m)
                continue;
            bb[colour] |= m;
            if (connected(&sv, bb[colour], colour)) {
                v = 1;
            } else {
                sv.aborted = 0;
                int r = solve(&sv, bb, colour ^ 1, child_swap);
                v = sv.aborted ? 0 : (r ? -1 : 1);
            }
            bb[colour] &= ~m;
        } else {
            if (!swap_avail)
                continue;
            uint64_t nb[2] = {0, mirror_bit(&sv, bb[0])};
            sv.aborted = 0;
            int r = solve(&sv, nb, 0, 0);
            v = sv.aborted ? 0 : (r ? -1 : 1);
        }
        out->move_value[a] = v;
        unknown += v == 0;
        any_win += v == 1;
    }
    out->nodes = sv.nodes;
    out->complete = unknown == 0;
    out->value = any_win ? 1 : unknown ? 0 : -1;
    free(sv.tt);
    return MG_OK;
}

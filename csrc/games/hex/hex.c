/* hex.c - Hex (see hex.h for the rules, encodings and text format). */
#include "hex.h"

#include <stdio.h>
#include <string.h>

#include "../../rng.h"

#define S MG_HEX_STRIDE

/* Neighbour offsets on the padded board: (r, c-1), (r, c+1), (r-1, c), (r-1, c+1), (r+1, c-1), (r+1, c). */
static const int NB[6] = {-1, 1, -S, -S + 1, S - 1, S};

typedef struct hex_undo {
    uint16_t child[6];   /* roots linked under another root, in order */
    uint8_t oldedges[6]; /* the new root's edge bits before each link */
    uint8_t bumped[6];   /* 1 if the link raised the new root's rank */
    uint8_t nlinks;
    uint8_t swap;        /* 1 for the swap move */
} hex_undo;

/* ---- Zobrist keys, derived from a fixed mixing function (read-only, no tables) ---- */

static inline uint64_t key_stone(int p, int colour) { return mg_mix64(0x4865780000000000ULL + (uint64_t)p * 4 + colour); }
#define KEY_SIDE 0x6a09e667f3bcc909ULL
static inline uint64_t key_config(int n, int swap) { return mg_mix64(0x48657843000000ULL + (uint64_t)n * 2 + swap); }

/* ---- board helpers ---- */

static inline int pad_of(const mg_hex_state *s, int a)
{
    int r = a / s->n;
    int c = a - r * s->n;
    return (r + 1) * S + c + 1;
}

static inline int action_of(const mg_hex_state *s, int p) { return (p / S - 1) * s->n + (p % S - 1); }

static inline int find_root(const mg_hex_state *s, int p)
{
    while (s->parent[p] != p)
        p = s->parent[p];
    return p;
}

static inline uint8_t edge_bits(const mg_hex_state *s, int p, int colour)
{
    int r = p / S - 1, c = p % S - 1, last = s->n - 1;
    if (colour == MG_HEX_BLACK)
        return (uint8_t)((r == 0) | ((r == last) << 1));
    return (uint8_t)((c == 0) | ((c == last) << 1));
}

/* Put a stone of `colour` on padded cell p and merge it with its neighbours' groups.
 * The links are recorded in `u` (may be NULL); sets the winner if the group connects. */
static void place(mg_hex_state *s, int p, int colour, hex_undo *u)
{
    int a = action_of(s, p);
    s->cell[p] = (uint8_t)colour;
    s->empty[a >> 6] &= ~(1ULL << (a & 63));
    s->hash ^= key_stone(p, colour);
    s->nstones++;
    s->edges[p] = edge_bits(s, p, colour);
    int root = p, nl = 0;
    for (int i = 0; i < 6; i++) {
        int q = p + NB[i];
        if (s->cell[q] != colour)
            continue;
        int r = find_root(s, q);
        if (r == root)
            continue;
        int child, par;
        uint8_t bump = 0;
        if (s->rank[root] < s->rank[r]) {
            child = root;
            par = r;
        } else {
            child = r;
            par = root;
            if (s->rank[root] == s->rank[r])
                bump = 1;
        }
        if (u) {
            u->child[nl] = (uint16_t)child;
            u->oldedges[nl] = s->edges[par];
            u->bumped[nl] = bump;
        }
        nl++;
        s->parent[child] = (uint16_t)par;
        s->edges[par] |= s->edges[child];
        s->rank[par] = (uint8_t)(s->rank[par] + bump);
        root = par;
    }
    if (u)
        u->nlinks = (uint8_t)nl;
    if (s->edges[root] == 3)
        s->winner = (uint8_t)colour;
}

/* Undo place(): unlink in reverse order and clear the cell (restoring the empty-cell invariant:
 * parent = self, rank = 0, edges = 0). */
static void unplace(mg_hex_state *s, int p, const hex_undo *u)
{
    for (int i = u->nlinks - 1; i >= 0; i--) {
        int c = u->child[i];
        int par = s->parent[c];
        s->edges[par] = u->oldedges[i];
        s->rank[par] = (uint8_t)(s->rank[par] - u->bumped[i]);
        s->parent[c] = (uint16_t)c;
    }
    int a = action_of(s, p);
    s->hash ^= key_stone(p, s->cell[p]);
    s->cell[p] = MG_HEX_EMPTY;
    s->empty[a >> 6] |= 1ULL << (a & 63);
    s->nstones--;
    s->parent[p] = (uint16_t)p;
    s->rank[p] = 0;
    s->edges[p] = 0;
    s->winner = 0;
}

/* Remove the only stone on the board (swap move helper). */
static void clear_single(mg_hex_state *s, int p)
{
    hex_undo u;
    u.nlinks = 0;
    unplace(s, p, &u);
}

/* The action of the only stone on the board (when nstones == 1). */
static int single_stone_action(const mg_hex_state *s)
{
    int nn = s->n * s->n;
    for (int w = 0; w < MG_HEX_WORDS; w++) {
        uint64_t full = w * 64 + 64 <= nn ? ~0ULL : (w * 64 < nn ? (1ULL << (nn - w * 64)) - 1 : 0);
        uint64_t occ = ~s->empty[w] & full;
        if (occ)
            return w * 64 + __builtin_ctzll(occ);
    }
    return -1;
}

static inline int mirror_action(const mg_hex_state *s, int a)
{
    int r = a / s->n, c = a % s->n;
    return c * s->n + r;
}

int mg_hex_swap_available(const mg_hex_state *s)
{
    return s->swap_rule && !s->swapped && s->nstones == 1 && s->to_move == 1 && !s->winner;
}

static void hex_reset(mg_hex_state *s, int n, int swap)
{
    memset(s, 0, sizeof *s);
    s->n = (uint8_t)n;
    s->swap_rule = (uint8_t)swap;
    for (int p = 0; p < MG_HEX_PADDED; p++) {
        s->cell[p] = MG_HEX_OFF;
        s->parent[p] = (uint16_t)p;
    }
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++)
            s->cell[(r + 1) * S + c + 1] = MG_HEX_EMPTY;
    for (int a = 0; a < n * n; a++)
        s->empty[a >> 6] |= 1ULL << (a & 63);
    s->hash = key_config(n, swap);
}

static int config_size(const mg_config *cfg, int *n, char *err, size_t errlen)
{
    *n = (cfg && cfg->board_size) ? cfg->board_size : MG_HEX_DEFAULT_N;
    if (*n < 1 || *n > MG_HEX_MAX_N) {
        snprintf(err, errlen, "hex board size %d is out of range (1..%d)", *n, MG_HEX_MAX_N);
        return MG_ERR;
    }
    return MG_OK;
}

static int hex_init(void *st, const mg_config *cfg, char *err, size_t errlen)
{
    int n;
    if (config_size(cfg, &n, err, errlen) != MG_OK)
        return MG_ERR;
    hex_reset(st, n, cfg && (cfg->flags & MG_FLAG_HEX_SWAP) ? 1 : 0);
    return MG_OK;
}

/* Non-zero if `colour` connects its two edges without using padded cell `skip` (-1: none). */
static int connected_without(const mg_hex_state *s, int colour, int skip)
{
    uint16_t stack[MG_HEX_PADDED];
    uint8_t seen[MG_HEX_PADDED];
    memset(seen, 0, sizeof seen);
    int top = 0, n = s->n;
    for (int i = 0; i < n; i++) {
        int p = colour == MG_HEX_BLACK ? S + i + 1 : (i + 1) * S + 1; /* row 1 / column a */
        if (p != skip && s->cell[p] == colour) {
            seen[p] = 1;
            stack[top++] = (uint16_t)p;
        }
    }
    while (top > 0) {
        int p = stack[--top];
        if (edge_bits(s, p, colour) & 2)
            return 1;
        for (int i = 0; i < 6; i++) {
            int q = p + NB[i];
            if (q != skip && !seen[q] && s->cell[q] == colour) {
                seen[q] = 1;
                stack[top++] = (uint16_t)q;
            }
        }
    }
    return 0;
}

static int hex_from_text(void *st, const mg_config *cfg, const char *text, char *err, size_t errlen)
{
    int swap = cfg && (cfg->flags & MG_FLAG_HEX_SWAP) ? 1 : 0;
    /* The size is the number of rows: the count of '/' before the first space, plus one. */
    const char *sp = strchr(text, ' ');
    if (!sp) {
        snprintf(err, errlen, "hex text %s: expected rows separated by '/', a space and the side to move",
                 MG_QUOTE(text, 60));
        return MG_ERR;
    }
    int n = 1;
    for (const char *p = text; p < sp; p++)
        n += *p == '/';
    if (n > MG_HEX_MAX_N) {
        snprintf(err, errlen, "hex text %s: %d rows, at most %d allowed", MG_QUOTE(text, 60), n, MG_HEX_MAX_N);
        return MG_ERR;
    }
    if (cfg && cfg->board_size && cfg->board_size != n) {
        snprintf(err, errlen, "hex text %s has %d rows but the board size is %d", MG_QUOTE(text, 60), n,
                 cfg->board_size);
        return MG_ERR;
    }
    mg_hex_state s;
    hex_reset(&s, n, swap);
    int nx = 0, no = 0;
    const char *p = text;
    for (int r = 0; r < n; r++) {
        for (int c = 0; c < n; c++, p++) {
            char ch = *p;
            int colour;
            if (ch == 'x' || ch == 'X')
                colour = MG_HEX_BLACK;
            else if (ch == 'o' || ch == 'O')
                colour = MG_HEX_WHITE;
            else if (ch == '.')
                continue;
            else {
                snprintf(err, errlen,
                         "hex text %s: row %d of %d has %s at offset %d (expected 'x', 'o' or '.'; every row "
                         "needs %d cells)",
                         MG_QUOTE(text, 60), r + 1, n, ch == '/' || ch == ' ' ? "too few cells" : "a bad character",
                         (int)(p - text), n);
                return MG_ERR;
            }
            if (colour == MG_HEX_BLACK)
                nx++;
            else
                no++;
            place(&s, (r + 1) * S + c + 1, colour, NULL);
        }
        char want = r < n - 1 ? '/' : ' ';
        if (*p != want) {
            snprintf(err, errlen, "hex text %s: row %d of %d has more than %d cells (offset %d)", MG_QUOTE(text, 60),
                     r + 1, n, n, (int)(p - text));
            return MG_ERR;
        }
        p++;
    }
    if (!((p[0] == 'x' || p[0] == 'o') && p[1] == '\0')) {
        snprintf(err, errlen, "hex text %s: expected the side to move ('x' or 'o') after the board, got %s",
                 MG_QUOTE(text, 60), MG_QUOTE(p, 10));
        return MG_ERR;
    }
    s.to_move = p[0] == 'o';
    int diff = nx - no;
    if (diff == s.to_move) {
        s.swapped = 0;
    } else if (diff == s.to_move - 1) {
        if (!swap) {
            snprintf(err, errlen,
                     "hex text %s: %d x and %d o with '%c' to move is only possible after a swap, but the swap "
                     "rule is off",
                     MG_QUOTE(text, 60), nx, no, p[0]);
            return MG_ERR;
        }
        if (nx + no == 0) {
            snprintf(err, errlen, "hex text %s: an empty board must have x to move", MG_QUOTE(text, 60));
            return MG_ERR;
        }
        s.swapped = 1;
    } else {
        snprintf(err, errlen, "hex text %s: impossible counts (%d x, %d o) with '%c' to move", MG_QUOTE(text, 60), nx,
                 no, p[0]);
        return MG_ERR;
    }
    if (s.winner) {
        int w = s.winner;
        int other = w == MG_HEX_BLACK ? MG_HEX_WHITE : MG_HEX_BLACK;
        /* The winner must have moved last, and the game must not have been over before that move. */
        int ok = (w == MG_HEX_BLACK) == (s.to_move == 1) && !connected_without(&s, other, -1);
        if (ok) {
            ok = 0;
            for (int q = 0; q < MG_HEX_PADDED && !ok; q++)
                if (s.cell[q] == w && !connected_without(&s, w, q))
                    ok = 1;
        }
        if (!ok) {
            snprintf(err, errlen, "hex text %s: impossible position (play continued after a win)", MG_QUOTE(text, 60));
            return MG_ERR;
        }
    }
    s.hash ^= s.to_move ? KEY_SIDE : 0;
    memcpy(st, &s, sizeof s);
    return MG_OK;
}

static size_t hex_to_text(const void *st, char *buf, size_t buflen)
{
    const mg_hex_state *s = st;
    char tmp[MG_HEX_MAX_N * (MG_HEX_MAX_N + 1) + 4];
    size_t k = 0;
    for (int r = 0; r < s->n; r++) {
        for (int c = 0; c < s->n; c++)
            tmp[k++] = ".xo"[s->cell[(r + 1) * S + c + 1]];
        tmp[k++] = r < s->n - 1 ? '/' : ' ';
    }
    tmp[k++] = s->to_move ? 'o' : 'x';
    tmp[k] = '\0';
    return mg_text_out(buf, buflen, tmp, k);
}

static int hex_legal_actions(const void *st, int32_t *out)
{
    const mg_hex_state *s = st;
    if (s->winner)
        return 0;
    int k = 0;
    for (int w = 0; w < MG_HEX_WORDS; w++) {
        uint64_t b = s->empty[w];
        while (b) {
            out[k++] = w * 64 + __builtin_ctzll(b);
            b &= b - 1;
        }
    }
    if (mg_hex_swap_available(s))
        out[k++] = s->n * s->n;
    return k;
}

static int hex_is_legal(const void *st, int32_t a)
{
    const mg_hex_state *s = st;
    int nn = s->n * s->n;
    if (s->winner || a < 0 || a > nn)
        return 0;
    if (a == nn)
        return mg_hex_swap_available(s);
    return (int)((s->empty[a >> 6] >> (a & 63)) & 1);
}

static void hex_make(void *st, int32_t a, void *undo)
{
    mg_hex_state *s = st;
    hex_undo *u = undo;
    if (a == s->n * s->n) {
        int x = single_stone_action(s);
        clear_single(s, pad_of(s, x));
        place(s, pad_of(s, mirror_action(s, x)), MG_HEX_WHITE, NULL);
        s->swapped = 1;
        u->nlinks = 0;
        u->swap = 1;
    } else {
        u->swap = 0;
        place(s, pad_of(s, a), 1 + s->to_move, u);
    }
    s->to_move ^= 1;
    s->hash ^= KEY_SIDE;
}

static void hex_unmake(void *st, int32_t a, const void *undo)
{
    mg_hex_state *s = st;
    const hex_undo *u = undo;
    s->to_move ^= 1;
    s->hash ^= KEY_SIDE;
    if (u->swap) {
        int y = single_stone_action(s);
        clear_single(s, pad_of(s, y));
        place(s, pad_of(s, mirror_action(s, y)), MG_HEX_BLACK, NULL);
        s->swapped = 0;
    } else {
        unplace(s, pad_of(s, a), u);
    }
}

static int hex_to_move(const void *st) { return ((const mg_hex_state *)st)->to_move; }

static int hex_outcome(const void *st, int *reason)
{
    const mg_hex_state *s = st;
    int r = MG_ONGOING, why = MG_TERM_NONE;
    if (s->winner) {
        r = s->winner == MG_HEX_BLACK ? MG_P0_WINS : MG_P1_WINS;
        why = MG_TERM_CONNECTED;
    }
    if (reason)
        *reason = why;
    return r;
}

static uint64_t hex_hash(const void *st) { return ((const mg_hex_state *)st)->hash; }

static size_t hex_action_to_str(const void *st, int32_t a, char *buf, size_t buflen)
{
    const mg_hex_state *s = st;
    int nn = s->n * s->n;
    char tmp[16];
    int k;
    if (a >= 0 && a < nn)
        k = snprintf(tmp, sizeof tmp, "%c%d", 'a' + a % s->n, a / s->n + 1);
    else if (a == nn && s->swap_rule)
        k = snprintf(tmp, sizeof tmp, "swap");
    else
        return 0;
    if ((size_t)k >= buflen)
        return 0;
    memcpy(buf, tmp, (size_t)k + 1);
    return (size_t)k;
}

static int hex_action_from_str(const void *st, const char *str, int32_t *a, char *err, size_t errlen)
{
    const mg_hex_state *s = st;
    int n = s->n;
    if (strcmp(str, "swap") == 0) {
        if (!mg_hex_swap_available(s)) {
            snprintf(err, errlen, "illegal hex move 'swap': %s",
                     !s->swap_rule ? "the swap rule is off"
                     : s->winner   ? "the game is over"
                                   : "swap is only allowed as white's first move, right after black's first stone");
            return MG_ERR;
        }
        *a = n * n;
        return MG_OK;
    }
    char l = str[0];
    int col = (l >= 'a' && l <= 'z') ? l - 'a' : (l >= 'A' && l <= 'Z') ? l - 'A' : -1;
    int row = 0, ok = col >= 0 && str[1] >= '1' && str[1] <= '9';
    const char *p = str + 1;
    while (ok && *p >= '0' && *p <= '9' && row < 1000)
        row = row * 10 + (*p++ - '0');
    if (!ok || *p != '\0') {
        snprintf(err, errlen, "invalid hex move %s: expected a cell like 'a1' (column letter, row number) or 'swap'",
                 MG_QUOTE(str, MG_QUOTE_MAX));
        return MG_ERR;
    }
    if (col >= n || row > n) {
        snprintf(err, errlen, "invalid hex move %s: the cell is outside the %dx%d board (a1..%c%d)",
                 MG_QUOTE(str, MG_QUOTE_MAX), n, n, 'a' + n - 1, n);
        return MG_ERR;
    }
    int32_t m = (row - 1) * n + col;
    if (!hex_is_legal(st, m)) {
        snprintf(err, errlen, "illegal hex move '%s': %s", str, s->winner ? "the game is over" : "the cell is occupied");
        return MG_ERR;
    }
    *a = m;
    return MG_OK;
}

int mg_hex_fill_playout(const mg_game *g, void *st, mg_rng *rng, int max_plies, int *plies)
{
    const mg_hex_state *s = st;
    mg_hex_state tmp;
    int swapped_now = 0; /* moves made before the fill (first stone, swap) */
    if (s->winner) {
        if (plies)
            *plies = 0;
        return s->winner == MG_HEX_BLACK ? MG_P0_WINS : MG_P1_WINS;
    }
    int nempty = s->n * s->n - s->nstones;
    int avail = mg_hex_swap_available(s);
    /* With the swap rule on an empty board, swap becomes available after black's first stone. */
    int first = s->swap_rule && !s->swapped && s->nstones == 0;
    if (max_plies < nempty + avail + first) {
        memcpy(&tmp, s, sizeof tmp);
        return mg_random_playout_moves(g, &tmp, rng, max_plies, plies);
    }
    if (first) {
        /* play black's first stone move by move; then swap may be taken */
        hex_undo u;
        memcpy(&tmp, s, sizeof tmp);
        hex_make(&tmp, (int32_t)mg_rng_below(rng, (uint32_t)nempty), &u);
        s = &tmp;
        swapped_now = 1;
        if (s->winner) { /* 1x1 */
            if (plies)
                *plies = 1;
            return s->winner == MG_HEX_BLACK ? MG_P0_WINS : MG_P1_WINS;
        }
        nempty--;
        avail = mg_hex_swap_available(s);
    }
    if (avail && mg_rng_below(rng, (uint32_t)(nempty + 1)) == (uint32_t)nempty) {
        /* the random mover picked "swap" among its nempty + 1 moves */
        hex_undo u;
        if (s != &tmp)
            memcpy(&tmp, s, sizeof tmp);
        hex_make(&tmp, tmp.n * tmp.n, &u);
        s = &tmp;
        swapped_now++;
    }
    /* Empty cells, then a partial Fisher-Yates shuffle choosing the side to move's cells. */
    uint16_t cells[MG_HEX_MAX_N * MG_HEX_MAX_N];
    int k = 0;
    for (int w = 0; w < MG_HEX_WORDS; w++) {
        uint64_t b = s->empty[w];
        while (b) {
            cells[k++] = (uint16_t)(w * 64 + __builtin_ctzll(b));
            b &= b - 1;
        }
    }
    int mine = (k + 1) / 2; /* the side to move places first */
    for (int i = 0; i < mine; i++) {
        int j = i + (int)mg_rng_below(rng, (uint32_t)(k - i));
        uint16_t t = cells[i];
        cells[i] = cells[j];
        cells[j] = t;
    }
    /* The black cells of the full board as flags on the padded grid. */
    uint8_t black[MG_HEX_PADDED];
    for (int p = 0; p < MG_HEX_PADDED; p++)
        black[p] = s->cell[p] == MG_HEX_BLACK;
    int black_moves_first = s->to_move == 0;
    for (int i = 0; i < k; i++) {
        int is_black = (i < mine) == black_moves_first;
        black[pad_of(s, cells[i])] = (uint8_t)is_black;
    }
    /* Black connects top to bottom on the full board iff black wins. */
    uint16_t stack[MG_HEX_MAX_N * MG_HEX_MAX_N];
    int top = 0, n = s->n, win = 0;
    for (int c = 0; c < n; c++) {
        int p = S + c + 1;
        if (black[p]) {
            black[p] = 0;
            stack[top++] = (uint16_t)p;
        }
    }
    int bottom = n * S; /* padded index of the last row starts above n * S + 1 */
    while (top > 0 && !win) {
        int p = stack[--top];
        if (p > bottom) {
            win = 1;
            break;
        }
        for (int i = 0; i < 6; i++) {
            int q = p + NB[i];
            if (black[q]) {
                black[q] = 0;
                stack[top++] = (uint16_t)q;
            }
        }
    }
    if (plies)
        *plies = k + swapped_now;
    return win ? MG_P0_WINS : MG_P1_WINS;
}

/* Planes (4 x n x n): black stones (x), white stones (o), empty cells, side to move (all 1
 * when white is to move).  Row 0 is row 1 (the top edge), column 0 is column a. */
static void hex_obs_shape(const void *st, int shape[3])
{
    const mg_hex_state *s = st;
    shape[0] = 4;
    shape[1] = s->n;
    shape[2] = s->n;
}

static void hex_observation(const void *st, float *out)
{
    const mg_hex_state *s = st;
    int n = s->n, cells = n * n;
    for (int r = 0; r < n; r++)
        for (int c = 0; c < n; c++) {
            int i = r * n + c, v = mg_hex_cell(s, r, c);
            out[i] = v == MG_HEX_BLACK ? 1.0f : 0.0f;
            out[cells + i] = v == MG_HEX_WHITE ? 1.0f : 0.0f;
            out[2 * cells + i] = v == MG_HEX_EMPTY ? 1.0f : 0.0f;
            out[3 * cells + i] = (float)s->to_move;
        }
}

const mg_game mg_hex = {
    .name = "hex",
    .state_size = sizeof(mg_hex_state),
    .undo_size = sizeof(hex_undo),
    .max_moves = MG_HEX_MAX_N * MG_HEX_MAX_N,
    .num_actions = MG_HEX_NUM_ACTIONS,
    .init = hex_init,
    .from_text = hex_from_text,
    .to_text = hex_to_text,
    .legal_actions = hex_legal_actions,
    .is_legal = hex_is_legal,
    .make = hex_make,
    .unmake = hex_unmake,
    .to_move = hex_to_move,
    .outcome = hex_outcome,
    .hash = hex_hash,
    .action_to_str = hex_action_to_str,
    .action_from_str = hex_action_from_str,
    .perft = NULL,
    .rule_flags = MG_FLAG_HEX_SWAP,
    .max_board_size = MG_HEX_MAX_N,
    .obs_shape = hex_obs_shape,
    .observation = hex_observation,
    .random_playout = mg_hex_fill_playout,
    .mav = &mg_hex_mav,
};

/* connect_four.c - Connect Four (see connect_four.h for encodings). */
#include "connect_four.h"

#include <stdio.h>
#include <string.h>

#include "../../rng.h"
#include "../../cancel.h"
#include "../../multiversion.h"

void mg_c4_init(mg_c4_state *s) { memset(s, 0, sizeof *s); }

/* Stones of the player who made the last move. */
static inline uint64_t c4_last_mover(const mg_c4_state *s) { return s->cur ^ s->mask; }

int mg_c4_outcome(const mg_c4_state *s)
{
    if (s->won)
        return (s->nmoves & 1) ? MG_P0_WINS : MG_P1_WINS;
    if (s->nmoves >= MG_C4_CELLS)
        return MG_DRAW;
    return MG_ONGOING;
}

int mg_c4_from_moves(mg_c4_state *out, const char *moves, char *err, size_t errlen)
{
    mg_c4_state s;
    mg_c4_init(&s);
    for (size_t i = 0; moves[i]; i++) {
        char c = moves[i];
        if (c < '1' || c > '7') {
            snprintf(err, errlen, "Connect Four move sequence %s: bad character '%c' at offset %zu "
                     "(expected columns 1..7)", MG_QUOTE(moves, 60), c, i);
            return MG_ERR;
        }
        int col = c - '1';
        if (s.won) {
            snprintf(err, errlen, "Connect Four move sequence %s: move %zu ('%c') is played after the "
                     "game was won", MG_QUOTE(moves, 60), i + 1, c);
            return MG_ERR;
        }
        if (s.mask & mg_c4_top_col(col)) {
            snprintf(err, errlen, "Connect Four move sequence %s: move %zu ('%c') is played in a full "
                     "column", MG_QUOTE(moves, 60), i + 1, c);
            return MG_ERR;
        }
        mg_c4_play(&s, col);
    }
    *out = s;
    return MG_OK;
}

static int c4_init(void *st, const mg_config *cfg, char *err, size_t errlen)
{
    (void)cfg;
    (void)err;
    (void)errlen;
    mg_c4_init(st);
    return MG_OK;
}

static int c4_from_board_text(mg_c4_state *out, const char *text, char *err, size_t errlen)
{
    uint64_t stones[2] = {0, 0}; /* x, o */
    const char *p = text;
    for (int row = MG_C4_HEIGHT - 1; row >= 0; row--) {
        for (int col = 0; col < MG_C4_WIDTH; col++, p++) {
            char c = *p;
            uint64_t bit = 1ULL << (col * 7 + row);
            if (c == 'x' || c == 'X')
                stones[0] |= bit;
            else if (c == 'o' || c == 'O')
                stones[1] |= bit;
            else if (c != '.') {
                if (c == '\0' || c == '/' || c == ' ')
                    snprintf(err, errlen, "Connect Four text %s: row %d (from the top) has %d cells, "
                             "expected 7", MG_QUOTE(text, 80), MG_C4_HEIGHT - row, col);
                else
                    snprintf(err, errlen, "Connect Four text %s: bad character '%c' at offset %d "
                             "(expected 'x', 'o' or '.')", MG_QUOTE(text, 80), c, (int)(p - text));
                return MG_ERR;
            }
        }
        if (row > 0 && *p++ != '/') {
            if (p[-1] && strchr(".xoXO", p[-1]))
                snprintf(err, errlen, "Connect Four text %s: row %d (from the top) has more than 7 cells",
                         MG_QUOTE(text, 80), MG_C4_HEIGHT - row);
            else
                snprintf(err, errlen, "Connect Four text %s: expected '/' after row %d (from the top) at "
                         "offset %d", MG_QUOTE(text, 80), MG_C4_HEIGHT - row, (int)(p - 1 - text));
            return MG_ERR;
        }
    }
    if (*p != ' ' || (p[1] != 'x' && p[1] != 'o') || p[2] != '\0') {
        snprintf(err, errlen, "Connect Four text %s: expected ' x' or ' o' (side to move) after the "
                 "6 rows", MG_QUOTE(text, 80));
        return MG_ERR;
    }
    int to_move = p[1] == 'o';
    uint64_t mask = stones[0] | stones[1];
    for (int col = 0; col < MG_C4_WIDTH; col++) {
        int seen_empty = 0;
        for (int row = 0; row < MG_C4_HEIGHT; row++) {
            int filled = (int)((mask >> (col * 7 + row)) & 1);
            if (!filled)
                seen_empty = 1;
            else if (seen_empty) {
                snprintf(err, errlen, "Connect Four text %s: floating stone in column %d, row %d from "
                         "the bottom, above an empty cell", MG_QUOTE(text, 80), col + 1, row + 1);
                return MG_ERR;
            }
        }
    }
    int nx = __builtin_popcountll(stones[0]), no = __builtin_popcountll(stones[1]);
    if (!(nx == no || nx == no + 1)) {
        snprintf(err, errlen, "Connect Four text %s: impossible counts (%d x, %d o; x moves first)", MG_QUOTE(text, 80),
                 nx, no);
        return MG_ERR;
    }
    if ((nx == no) != (to_move == 0)) {
        snprintf(err, errlen, "Connect Four text %s: side to move '%c' does not match %d x and %d o",
                 MG_QUOTE(text, 80), p[1], nx, no);
        return MG_ERR;
    }
    uint64_t mover = stones[to_move], last = stones[to_move ^ 1];
    if (mg_c4_has_four(mover)) {
        snprintf(err, errlen, "Connect Four text %s: the side to move ('%c') already has four in a row, "
                 "so play went on after a win", MG_QUOTE(text, 80), p[1]);
        return MG_ERR;
    }
    if (mg_c4_has_four(last)) {
        /* Some top stone of the last mover must have been the winning move: the
         * position before it had no four. */
        int ok = 0;
        for (int col = 0; col < MG_C4_WIDTH && !ok; col++) {
            uint64_t cm = mask & mg_c4_col_mask(col);
            if (!cm)
                continue;
            uint64_t top = (cm + mg_c4_bottom_col(col)) >> 1;
            if ((last & top) && !mg_c4_has_four(last ^ top))
                ok = 1;
        }
        if (!ok) {
            snprintf(err, errlen, "Connect Four text %s: '%c' has fours that no single last move can "
                     "have made, so play went on after a win", MG_QUOTE(text, 80), p[1] == 'x' ? 'o' : 'x');
            return MG_ERR;
        }
    }
    memset(out, 0, sizeof *out);
    out->cur = mover;
    out->mask = mask;
    out->nmoves = (uint32_t)(nx + no);
    out->won = (uint32_t)mg_c4_has_four(last);
    return MG_OK;
}

static int c4_from_text(void *st, const mg_config *cfg, const char *text, char *err, size_t errlen)
{
    (void)cfg;
    if (text[0] == '\0') {
        snprintf(err, errlen, "Connect Four text is empty: expected 6 rows and the side to move, or a move "
                 "sequence such as \"4453\"");
        return MG_ERR;
    }
    if (text[0] >= '0' && text[0] <= '9')
        return mg_c4_from_moves(st, text, err, errlen);
    return c4_from_board_text(st, text, err, errlen);
}

static size_t c4_to_text(const void *st, char *buf, size_t buflen)
{
    const mg_c4_state *s = st;
    uint64_t x = (s->nmoves & 1) ? c4_last_mover(s) : s->cur;
    char tmp[64];
    size_t k = 0;
    for (int row = MG_C4_HEIGHT - 1; row >= 0; row--) {
        for (int col = 0; col < MG_C4_WIDTH; col++) {
            uint64_t bit = 1ULL << (col * 7 + row);
            tmp[k++] = !(s->mask & bit) ? '.' : (x & bit) ? 'x' : 'o';
        }
        if (row > 0)
            tmp[k++] = '/';
    }
    tmp[k++] = ' ';
    tmp[k++] = (s->nmoves & 1) ? 'o' : 'x';
    tmp[k] = '\0';
    return mg_text_out(buf, buflen, tmp, k);
}

static int c4_legal_actions(const void *st, int32_t *out)
{
    const mg_c4_state *s = st;
    if (s->won)
        return 0;
    int n = 0;
    for (int col = 0; col < MG_C4_WIDTH; col++)
        if (!(s->mask & mg_c4_top_col(col)))
            out[n++] = col;
    return n;
}

static int c4_is_legal(const void *st, int32_t a)
{
    const mg_c4_state *s = st;
    return a >= 0 && a < MG_C4_WIDTH && !(s->mask & mg_c4_top_col(a)) && !s->won;
}

static void c4_make(void *st, int32_t a, void *undo)
{
    (void)undo;
    mg_c4_play(st, a);
}

static void c4_unmake(void *st, int32_t a, const void *undo)
{
    (void)undo;
    mg_c4_state *s = st;
    uint64_t top = ((s->mask & mg_c4_col_mask(a)) + mg_c4_bottom_col(a)) >> 1;
    s->mask ^= top;
    s->cur ^= s->mask;
    s->nmoves--;
    s->won = 0; /* a move was made from it, so the game was not over */
}

static int c4_to_move(const void *st) { return (int)(((const mg_c4_state *)st)->nmoves & 1); }

static int c4_outcome(const void *st, int *reason)
{
    int r = mg_c4_outcome(st);
    if (reason)
        *reason = r == MG_ONGOING ? MG_TERM_NONE : r == MG_DRAW ? MG_TERM_BOARD_FULL : MG_TERM_CONNECTED;
    return r;
}

static uint64_t c4_hash(const void *st)
{
    const mg_c4_state *s = st;
    uint64_t x = s->cur + s->mask; /* unique key, < 2^49 */
    return mg_mix64(x); /* a bijection, so distinct positions get distinct hashes */
}

static size_t c4_action_to_str(const void *st, int32_t a, char *buf, size_t buflen)
{
    (void)st;
    if (a < 0 || a >= MG_C4_WIDTH || buflen < 2)
        return 0;
    buf[0] = (char)('1' + a);
    buf[1] = '\0';
    return 1;
}

static int c4_action_from_str(const void *st, const char *s, int32_t *a, char *err, size_t errlen)
{
    if (!(s[0] >= '1' && s[0] <= '7' && s[1] == '\0')) {
        /* say which: not a number at all, or a column number off the board */
        size_t n = strlen(s), digits = strspn(s, "0123456789");
        const char *why = n && digits == n ? "the column is out of range (columns 1..7)"
                                           : "not a column number (columns 1..7)";
        snprintf(err, errlen, "invalid Connect Four move %s: %s", MG_QUOTE(s, MG_QUOTE_MAX), why);
        return MG_ERR;
    }
    int32_t col = s[0] - '1';
    if (!c4_is_legal(st, col)) {
        snprintf(err, errlen, "illegal Connect Four move '%s': %s", s,
                 ((const mg_c4_state *)st)->won ? "the game is over" : "the column is full");
        return MG_ERR;
    }
    *a = col;
    return MG_OK;
}

/* The plies near the leaves, without cancellation checks (the recursion stays as lean as it
 * can: a 4th argument alone cost a third of the speed), instantiated for x86-64-v3 and for the
 * baseline (multiversion.h). */
#define C4_PERFT_LEAN(NAME)                                                                    \
    static uint64_t NAME(uint64_t cur, uint64_t mask, int depth)                               \
    {                                                                                          \
        if (mg_c4_has_four(cur ^ mask))                                                        \
            return 0;                                                                          \
        uint64_t moves = mg_c4_playable(mask);                                                 \
        if (depth == 1)                                                                        \
            return (uint64_t)__builtin_popcountll(moves);                                      \
        uint64_t total = 0;                                                                    \
        while (moves) {                                                                        \
            uint64_t m = moves & (0 - moves);                                                  \
            moves ^= m;                                                                        \
            total += NAME(cur ^ mask, mask | m, depth - 1);                                    \
        }                                                                                      \
        return total;                                                                          \
    }
C4_PERFT_LEAN(c4_perft_lean)
#if MG_MULTIVERSION
MG_TARGET_V3 C4_PERFT_LEAN(c4_perft_lean_v3)
#else
#define c4_perft_lean_v3 c4_perft_lean
#endif

/* Subtrees of C4_PERFT_LEAN_DEPTH plies (at most 7^6 leaves, well under a millisecond) are
 * counted by c4_perft_lean; above them each node ticks `cancel`.  Every node of c4_perft_top
 * has depth <= its empty cells (c4_perft answers deeper perfts 0 at once), so each one above
 * the lean subtrees reaches them (or a finished game) within a few plies: no path of the
 * recursion runs long without a tick. */
#define C4_PERFT_LEAN_DEPTH 6

static uint64_t c4_perft_top(uint64_t cur, uint64_t mask, int depth, int v3, mg_cancel *cancel)
{
    if (cancel && cancel->stopped) /* every node above the lean subtrees unwinds at once */
        return 0;
    if (depth <= C4_PERFT_LEAN_DEPTH) {
        if (mg_cancel_tick(cancel))
            return 0;
        return v3 ? c4_perft_lean_v3(cur, mask, depth) : c4_perft_lean(cur, mask, depth);
    }
    if (mg_c4_has_four(cur ^ mask))
        return 0;
    uint64_t moves = mg_c4_playable(mask), total = 0;
    while (moves) {
        uint64_t m = moves & (0 - moves);
        moves ^= m;
        total += c4_perft_top(cur ^ mask, mask | m, depth - 1, v3, cancel);
    }
    return total;
}

static uint64_t c4_perft(void *st, int depth, mg_cancel *cancel)
{
    const mg_c4_state *s = st;
    if (depth <= 0)
        return 1;
    /* Each move fills a cell: no line of play is longer than the empty cells, so a deeper perft
     * counts no leaf (without this, perft(50) would walk every game to its end, for years). */
    if (depth > MG_C4_CELLS - __builtin_popcountll(s->mask))
        return 0;
    return c4_perft_top(s->cur, s->mask, depth, mg_cpu_has_v3(), cancel);
}

/* Uniformly random playout on the bitboards: each move is a column drawn uniformly among the
 * open ones (3-bit draws, 21 per random word, rejecting 7 and full columns), so the games
 * have the distribution of move-by-move play over legal_actions, at about three times the speed. */
static int c4_random_playout(const mg_game *g, void *st, mg_rng *rng, int max_plies, int *plies)
{
    (void)g;
    mg_c4_state *s = st;
    uint64_t cur = s->cur, mask = s->mask, bits = 0;
    uint32_t nm = s->nmoves, won = s->won;
    int n = 0, left = 0;
    while (!won && nm < MG_C4_CELLS && n < max_plies) {
        int col;
        for (;;) {
            if (!left) {
                bits = mg_rng_next(rng);
                left = 21;
            }
            col = (int)(bits & 7);
            bits >>= 3;
            left--;
            if (col < MG_C4_WIDTH && !(mask & mg_c4_top_col(col)))
                break;
        }
        cur ^= mask;
        mask |= mask + mg_c4_bottom_col(col);
        nm++;
        won = (uint32_t)mg_c4_has_four(cur ^ mask);
        n++;
    }
    s->cur = cur;
    s->mask = mask;
    s->nmoves = nm;
    s->won = won;
    if (plies)
        *plies = n;
    return mg_c4_outcome(s);
}

/* Planes (4 x 6 x 7): first player's stones (x), second player's (o), empty cells, side to move
 * (all 1 when the second player is to move).  Row 0 is the top row. */
static void c4_obs_shape(const void *st, int shape[3])
{
    (void)st;
    shape[0] = 4;
    shape[1] = MG_C4_HEIGHT;
    shape[2] = MG_C4_WIDTH;
}

static void c4_observation(const void *st, float *out)
{
    const mg_c4_state *s = st;
    int second = s->nmoves & 1;
    uint64_t x = second ? s->cur ^ s->mask : s->cur, o = x ^ s->mask;
    const int cells = MG_C4_HEIGHT * MG_C4_WIDTH;
    for (int r = 0; r < MG_C4_HEIGHT; r++)
        for (int c = 0; c < MG_C4_WIDTH; c++) {
            int i = r * MG_C4_WIDTH + c;
            uint64_t bit = 1ULL << (c * 7 + (MG_C4_HEIGHT - 1 - r));
            out[i] = (x & bit) ? 1.0f : 0.0f;
            out[cells + i] = (o & bit) ? 1.0f : 0.0f;
            out[2 * cells + i] = (s->mask & bit) ? 0.0f : 1.0f;
            out[3 * cells + i] = (float)second;
        }
}

const mg_game mg_connect_four = {
    .name = "connect_four",
    .state_size = sizeof(mg_c4_state),
    .undo_size = 0,
    .max_moves = MG_C4_WIDTH,
    .num_actions = MG_C4_WIDTH,
    .init = c4_init,
    .from_text = c4_from_text,
    .to_text = c4_to_text,
    .legal_actions = c4_legal_actions,
    .is_legal = c4_is_legal,
    .make = c4_make,
    .unmake = c4_unmake,
    .to_move = c4_to_move,
    .outcome = c4_outcome,
    .hash = c4_hash,
    .action_to_str = c4_action_to_str,
    .action_from_str = c4_action_from_str,
    .perft = c4_perft,
    .obs_shape = c4_obs_shape,
    .observation = c4_observation,
    .random_playout = c4_random_playout,
    .mav = &mg_connect_four_mav,
};

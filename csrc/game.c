/* game.c - generic algorithms over the game interface (perft, names). */
#include "game.h"
#include "cancel.h"
#include "rng.h"

#include <stdio.h>
#include <string.h>

uint64_t mg_perft_generic(const mg_game *g, void *st, int depth, mg_cancel *cancel)
{
    int32_t moves[MG_MAX_MOVES];
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    if (depth <= 0)
        return 1;
    int n = g->legal_actions(st, moves);
    if (depth == 1)
        return (uint64_t)n;
    if (mg_cancel_tick(cancel))
        return 0;
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        g->make(st, moves[i], undo);
        total += mg_perft_generic(g, st, depth - 1, cancel);
        g->unmake(st, moves[i], undo);
    }
    return total;
}

uint64_t mg_perft_cancel(const mg_game *g, void *st, int depth, mg_cancel *cancel)
{
    return g->perft ? g->perft(st, depth, cancel) : mg_perft_generic(g, st, depth, cancel);
}

uint64_t mg_perft(const mg_game *g, void *st, int depth)
{
    return mg_perft_cancel(g, st, depth, NULL);
}

int mg_perft_divide(const mg_game *g, void *st, int depth, int32_t *moves, uint64_t *counts, mg_cancel *cancel)
{
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    int n = g->legal_actions(st, moves);
    for (int i = 0; i < n; i++) {
        if (depth <= 1) {
            counts[i] = 1;
            continue;
        }
        g->make(st, moves[i], undo);
        counts[i] = mg_perft_cancel(g, st, depth - 1, cancel);
        g->unmake(st, moves[i], undo);
    }
    return n;
}

int mg_legal_outcome(const mg_game *g, const void *st, int32_t *out, int *result, int *reason)
{
    if (g->legal_outcome)
        return g->legal_outcome(st, out, result, reason);
    int n = g->legal_actions(st, out);
    *result = g->outcome(st, reason);
    return n;
}

int mg_random_playout(const mg_game *g, void *st, mg_rng *rng, int max_plies, int *plies)
{
    if (g->random_playout)
        return g->random_playout(g, st, rng, max_plies, plies);
    return mg_random_playout_moves(g, st, rng, max_plies, plies);
}

int mg_random_playout_moves(const mg_game *g, void *st, mg_rng *rng, int max_plies, int *plies)
{
    int32_t moves[MG_MAX_MOVES];
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    int n = 0, r;
    if (g->legal_outcome) {
        /* The same plies and draws as below, with one move generation a ply for both answers. */
        for (;;) {
            int k = g->legal_outcome(st, moves, &r, NULL);
            if (r != MG_ONGOING || n >= max_plies || k == 0)
                break;
            g->make(st, moves[mg_rng_below(rng, (uint32_t)k)], undo);
            n++;
        }
    } else {
        while ((r = g->outcome(st, NULL)) == MG_ONGOING && n < max_plies) {
            int k = g->legal_actions(st, moves);
            if (k == 0)
                break; /* no move but not terminal: cannot happen in a consistent game */
            g->make(st, moves[mg_rng_below(rng, (uint32_t)k)], undo);
            n++;
        }
    }
    if (plies)
        *plies = n;
    return r;
}

int mg_config_check(const mg_game *g, const mg_config *cfg, char *err, size_t errlen)
{
    static const struct {
        uint32_t bit;
        const char *name; /* MG_<name> in C, mavgame._core.<name> in Python */
    } names[] = {
        {MG_FLAG_CHESS960, "FLAG_CHESS960"},
        {MG_FLAG_GARDNER_BISHOP, "FLAG_GARDNER_BISHOP"},
        {MG_FLAG_HEX_SWAP, "FLAG_HEX_SWAP"},
    };
    if (!cfg)
        return MG_OK;
    if (cfg->board_size && !g->max_board_size) {
        snprintf(err, errlen, "%s: board_size %d is meaningless: %s has a fixed board (leave board_size at 0)",
                 g->name, cfg->board_size, g->name);
        return MG_ERR;
    }
    if (cfg->board_size < 0 || cfg->board_size > g->max_board_size) {
        snprintf(err, errlen, "%s: board_size %d is out of range (1..%d, 0: the default)", g->name, cfg->board_size,
                 g->max_board_size);
        return MG_ERR;
    }
    if (!(cfg->flags & ~g->rule_flags))
        return MG_OK;
    char known[128] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (g->rule_flags & names[i].bit)
            len += (size_t)snprintf(known + len, sizeof known - len, "%s%s = %u", len ? ", " : "", names[i].name,
                                    (unsigned)names[i].bit);
    snprintf(err, errlen, "%s: unknown rule flags %u (0x%x): %s %s", g->name, (unsigned)cfg->flags,
             (unsigned)(cfg->flags & ~g->rule_flags), len ? "this game knows" : "this game has no rule flags",
             known);
    return MG_ERR;
}

size_t mg_text_out(char *buf, size_t buflen, const char *src, size_t len)
{
    if (buflen == 0)
        return 0;
    if (len >= buflen)
        len = buflen - 1;
    memcpy(buf, src, len);
    buf[len] = '\0';
    return len;
}

const char *mg_quote_str(char *buf, size_t buflen, const char *s, size_t max)
{
    size_t n = 0;           /* strlen(s), counted to one past max (what shows the cut) */
    while (n <= max && s[n])
        n++;
    return mg_quote_span(buf, buflen, s, n, max);
}

const char *mg_quote_span(char *buf, size_t buflen, const char *s, size_t n, size_t max)
{
    if (buflen < 6) {       /* no room for the quotes and a mark: an empty string */
        if (buflen)
            buf[0] = '\0';
        return buf;
    }
    if (max > buflen - 6)
        max = buflen - 6;
    int cut = n > max;
    if (cut) {
        /* s[max] is the first byte left out: while it continues a character (10xxxxxx, at most
         * three of them in valid UTF-8), leave out the rest of that character too. */
        n = max;
        size_t k = n;
        while (k > 0 && n - k < 3 && ((unsigned char)s[k] & 0xC0) == 0x80)
            k--;
        if (((unsigned char)s[k] & 0xC0) != 0x80)
            n = k;          /* else a run of stray continuation bytes: cut at max, between two of them */
    }
    buf[0] = '\'';
    memcpy(buf + 1, s, n);
    size_t len = n + 1;
    if (cut) {
        memcpy(buf + len, "...", 3);
        len += 3;
    }
    buf[len++] = '\'';
    buf[len] = '\0';
    return buf;
}

const char *mg_result_string(int result)
{
    switch (result) {
    case MG_P0_WINS: return "1-0";
    case MG_P1_WINS: return "0-1";
    case MG_DRAW: return "1/2-1/2";
    default: return "*";
    }
}

const char *mg_termination_name(int reason)
{
    static const char *const names[MG_TERM_COUNT] = {
        "none", "checkmate", "stalemate", "insufficient_material", "seventyfive_moves", "fivefold_repetition",
        "fifty_moves", "threefold_repetition", "connected", "board_full",
    };
    if (reason < 0 || reason >= MG_TERM_COUNT)
        return "unknown";
    return names[reason];
}

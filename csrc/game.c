/* game.c - generic algorithms over the game interface (perft, names). */
#include "game.h"
#include "rng.h"

#include <string.h>

uint64_t mg_perft_generic(const mg_game *g, void *st, int depth)
{
    int32_t moves[MG_MAX_MOVES];
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    if (depth <= 0)
        return 1;
    int n = g->legal_actions(st, moves);
    if (depth == 1)
        return (uint64_t)n;
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        g->make(st, moves[i], undo);
        total += mg_perft_generic(g, st, depth - 1);
        g->unmake(st, moves[i], undo);
    }
    return total;
}

uint64_t mg_perft(const mg_game *g, void *st, int depth)
{
    return g->perft ? g->perft(st, depth) : mg_perft_generic(g, st, depth);
}

int mg_perft_divide(const mg_game *g, void *st, int depth, int32_t *moves, uint64_t *counts)
{
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    int n = g->legal_actions(st, moves);
    for (int i = 0; i < n; i++) {
        if (depth <= 1) {
            counts[i] = 1;
            continue;
        }
        g->make(st, moves[i], undo);
        counts[i] = mg_perft(g, st, depth - 1);
        g->unmake(st, moves[i], undo);
    }
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
    while ((r = g->outcome(st, NULL)) == MG_ONGOING && n < max_plies) {
        int k = g->legal_actions(st, moves);
        if (k == 0)
            break; /* no move but not terminal: cannot happen in a consistent game */
        g->make(st, moves[mg_rng_below(rng, (uint32_t)k)], undo);
        n++;
    }
    if (plies)
        *plies = n;
    return r;
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
        "none", "checkmate", "stalemate", "insufficient_material", "fifty_moves",
        "threefold_repetition", "connected", "board_full",
    };
    if (reason < 0 || reason >= MG_TERM_COUNT)
        return "unknown";
    return names[reason];
}

/*
 * fuzz_state.c - libFuzzer target: the MAV %state text reader of every game.
 *
 * Input: first byte selects the game, the rest is the %state value (not NUL-terminated: it is
 * copied to an exact-size heap buffer, so any read past its end is caught by ASan).  Checks:
 * no crash; when a %state is accepted, the position's %state reads back to the same position.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    const mg_game *games[FUZZ_MAX_GAMES];
    int ng = fuzz_mav_games(games);
    if (!ng)
        return 0;
    const mg_game *g = games[data[0] % ng];
    size_t n;
    char *text = fuzz_text(data, size, 0, &n);
    char err[MG_ERRLEN], out[MG_MAX_TEXT], a[MG_MAX_TEXT], b[MG_MAX_TEXT];
    _Alignas(16) unsigned char st[MG_MAX_STATE], st2[MG_MAX_STATE];
    mg_mav_state_to_game_text(g, NULL, text, n, out, sizeof out, err, sizeof err);
    if (mg_mav_state_read(g, NULL, text, n, st, err, sizeof err) == MG_OK) {
        size_t sn = mg_mav_state_write(g, st, out, sizeof out, err, sizeof err);
        if (!sn)
            abort();
        if (mg_mav_state_read(g, NULL, out, sn, st2, err, sizeof err) != MG_OK)
            abort();
        g->to_text(st, a, sizeof a);
        g->to_text(st2, b, sizeof b);
        if (strcmp(a, b) != 0)
            abort();
    }
    free(text);
    return 0;
}

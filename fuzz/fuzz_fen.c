/*
 * fuzz_fen.c - libFuzzer target: the FEN readers of the chess family (chess, Chess960, Gardner)
 * and the MAV FEN -> %state conversion.
 *
 * Input: first byte selects the game, the rest is the text.  Checks: no crash, no
 * out-of-bounds read (the text is copied to an exact-size heap buffer), and for every FEN a
 * game accepts: its own text reads back to the same text, and the %state of the position
 * reads back to the same position; its legal moves fit a heap buffer of exactly max_moves
 * entries (ASan catches any write past it), in the position and after each move, and unmake
 * restores the state byte for byte.
 */
#include "fuzz_common.h"

static const char *const GAMES[] = {"chess", "chess960", "gardner"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    const mg_game *g = mg_game_by_name(GAMES[data[0] % 3]);
    size_t n;
    char *text = fuzz_text(data, size, 1, &n);
    char err[MG_ERRLEN], out[MG_MAX_TEXT], back[MG_MAX_TEXT], st_text[MG_MAX_TEXT];
    _Alignas(16) unsigned char st[MG_MAX_STATE], st2[MG_MAX_STATE];
    /* the MAV converter on arbitrary text */
    mg_mav_state_from_game_text(g, text, st_text, sizeof st_text, err, sizeof err);
    if (strlen(text) < MG_MAX_TEXT && g->from_text(st, NULL, text, err, sizeof err) == MG_OK) {
        g->to_text(st, out, sizeof out);
        if (g->from_text(st2, NULL, out, err, sizeof err) != MG_OK)
            abort();
        g->to_text(st2, back, sizeof back);
        if (strcmp(out, back) != 0)
            abort();
        size_t sn = mg_mav_state_write(g, st, st_text, sizeof st_text, err, sizeof err);
        if (sn) { /* fails only for clocks beyond the fixed-width fields */
            if (mg_mav_state_read(g, NULL, st_text, sn, st2, err, sizeof err) != MG_OK)
                abort();
            g->to_text(st2, back, sizeof back);
            if (strcmp(out, back) != 0)
                abort();
        }
        int32_t *moves = malloc((size_t)g->max_moves * sizeof *moves);
        int nm = g->legal_actions(st, moves);
        if (nm < 0 || nm > g->max_moves)
            abort();
        _Alignas(16) unsigned char undo[MG_MAX_UNDO];
        for (int i = 0; i < nm; i++) {
            int32_t a = moves[i];
            if (!g->is_legal(st, a))
                abort();
            memcpy(st2, st, g->state_size);
            g->make(st2, a, undo);
            int32_t *child = malloc((size_t)g->max_moves * sizeof *child);
            int nc = g->legal_actions(st2, child);
            free(child);
            if (nc < 0 || nc > g->max_moves)
                abort();
            g->unmake(st2, a, undo);
            if (memcmp(st, st2, g->state_size) != 0)
                abort();
        }
        free(moves);
    }
    free(text);
    return 0;
}

/*
 * fuzz_parse.c - libFuzzer target: the MAV output parser (mg_mav_parse) on arbitrary bytes.
 *
 * Input: first byte selects the game and whether a reference state (the start position) is
 * given; the rest is the text, copied to an exact-size heap buffer.  Checks: no crash, no
 * out-of-bounds access, and the result's counters stay in range.  The seed corpus
 * (fuzz/corpus/parse) holds valid MAV texts of every game.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mg_mav_result *R; /* one result block (about 50 KB) for all inputs */
    if (size < 1 || size > 65536)
        return 0;
    if (!R && !(R = malloc(sizeof *R)))
        abort();
    int sel = data[0];
    _Alignas(16) unsigned char ref[MG_MAX_STATE];
    const void *refp;
    const mg_game *g = fuzz_game_and_root(sel, 0x3f, !(sel & 0x80) && (sel & 0x40), ref, &refp);
    if (!g)
        return 0;
    if (sel & 0x80)
        g = NULL; /* the parser's own game detection */
    size_t n;
    char *text = fuzz_text(data, size, 0, &n);
    mg_mav_parse(g, NULL, text, n, refp, R);
    if (R->n_moves < 0 || R->n_moves > MG_MAV_MAX_TOP || R->n_issues < 0 || (R->ok && R->n_issues))
        abort();
    for (int i = 0; i < R->n_moves; i++)
        if (R->moves[i].bucket < -1 || R->moves[i].bucket > 63 || R->moves[i].status > MG_MAV_MOVE_UNCHECKED)
            abort();
    if (R->has_ref && (R->n_correct > R->ref_n_legal || R->n_missing > MG_MAX_MOVES))
        abort();
    mg_mav_metrics m;
    memset(&m, 0, sizeof m);
    mg_mav_metrics_add(&m, R);
    free(text);
    return 0;
}

/*
 * fuzz_parse.c - libFuzzer target: the MAV output parser (mg_mav_parse) on arbitrary bytes.
 *
 * Input: first byte selects the game and whether a reference state (the start position) is
 * given; the rest is the text, copied to an exact-size heap buffer.  Checks: no crash, no
 * out-of-bounds access, and the result's counters stay in range.  The seed corpus
 * (fuzz/corpus/parse) holds valid MAV texts of every game.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../csrc/format/mav.h"
#include "../csrc/game.h"

static mg_mav_result *R;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    mg_games_init();
    R = malloc(sizeof *R);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    const mg_game *games[16];
    int ng = 0;
    for (int i = 0; mg_game_at(i) && ng < 16; i++)
        if (mg_mav_game_supported(mg_game_at(i), NULL))
            games[ng++] = mg_game_at(i);
    if (!ng)
        return 0;
    int sel = data[0];
    const mg_game *g = (sel & 0x80) ? NULL : games[(sel & 0x3f) % ng];
    size_t n = size - 1;
    char *text = malloc(n ? n : 1);
    memcpy(text, data + 1, n);
    _Alignas(16) unsigned char ref[MG_MAX_STATE];
    char err[MG_ERRLEN];
    const void *refp = NULL;
    if (g && (sel & 0x40) && g->init(ref, NULL, err, sizeof err) == MG_OK)
        refp = ref;
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

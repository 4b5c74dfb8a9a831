/*
 * fuzz_common.h - what every libFuzzer target of fuzz/ shares: the includes, the game registry
 * set up once in LLVMFuzzerInitialize, the list of games the MAV format supports, and the input
 * text after its selector byte copied to an exact-size heap buffer (so that ASan catches any read
 * past its end).
 *
 * Include it once, from the target's .c file.
 */
#ifndef MG_FUZZ_COMMON_H
#define MG_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../csrc/format/mav.h"
#include "../csrc/game.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    mg_games_init();
    return 0;
}

#define FUZZ_MAX_GAMES 16

/* The registered games the MAV format supports (at most FUZZ_MAX_GAMES) into games: their count. */
static inline int fuzz_mav_games(const mg_game *games[FUZZ_MAX_GAMES])
{
    int ng = 0;
    for (int i = 0; mg_game_at(i) && ng < FUZZ_MAX_GAMES; i++)
        if (mg_mav_game_supported(mg_game_at(i), NULL))
            games[ng++] = mg_game_at(i);
    return ng;
}

/* The input after its selector byte (size >= 1) in a heap buffer of exactly its n bytes, or of
 * n + 1 with a terminating NUL when `terminate` (at least 1 byte: malloc(0) may return NULL).
 * The caller frees it. */
static inline char *fuzz_text(const uint8_t *data, size_t size, int terminate, size_t *n)
{
    *n = size - 1;
    size_t cap = *n + (terminate ? 1 : 0);
    char *text = malloc(cap ? cap : 1);
    if (!text)
        abort();
    memcpy(text, data + 1, *n);
    if (terminate)
        text[*n] = '\0';
    return text;
}

#endif

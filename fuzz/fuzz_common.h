/*
 * fuzz_common.h - what every libFuzzer target of fuzz/ shares: the includes, the game registry
 * set up once in LLVMFuzzerInitialize, the list of games the MAV format supports (and the game and
 * start position a selector byte picks), and the input (or its text after the selector byte) copied
 * to an exact-size heap buffer (so that ASan catches any read past its end).
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

/* The MAV game the selector byte picks (sel & mask, modulo the number of MAV games; NULL when none is
 * registered) and, when `with_root`, its start position in ref (*root = ref; else, or when it cannot be
 * set up, NULL): the set-up of the parsers' targets. */
static inline const mg_game *fuzz_game_and_root(int sel, int mask, int with_root, unsigned char ref[MG_MAX_STATE],
                                                const void **root)
{
    const mg_game *games[FUZZ_MAX_GAMES];
    int ng = fuzz_mav_games(games);
    *root = NULL;
    if (!ng)
        return NULL;
    const mg_game *g = games[(sel & mask) % ng];
    char err[MG_ERRLEN];
    if (with_root && g->init(ref, NULL, err, sizeof err) == MG_OK)
        *root = ref;
    return g;
}

/* The whole input in a heap buffer of exactly its size bytes (at least 1: malloc(0) may return NULL), so
 * that ASan catches any read past its end: the binary readers' targets.  The caller frees it. */
static inline uint8_t *fuzz_bytes(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        abort();
    memcpy(buf, data, size);
    return buf;
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

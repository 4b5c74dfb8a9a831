/*
 * playouts.h - outcome counts of repeated uniformly random playouts from one position, over the
 * generic game interface (the random_playouts / hex_random_playouts statistics).
 */
#ifndef MG_SEARCH_PLAYOUTS_H
#define MG_SEARCH_PLAYOUTS_H

#include <stdint.h>

#include "../game.h"

struct mg_cancel;

#ifdef __cplusplus
extern "C" {
#endif

/* The outcomes of n playouts (one generator seeded with `seed`). */
typedef struct mg_playout_counts {
    uint64_t p0_wins, p1_wins, draws; /* playouts cut off at max_plies count in none of them */
    uint64_t plies;                   /* moves played in all playouts */
    long long played;                 /* playouts run: n unless `cancel` stopped them */
} mg_playout_counts;

/* n playouts from `root` (not modified; each plays on a copy) with `playout` (NULL:
 * mg_random_playout_moves, move by move over legal_actions; mg_random_playout for the game's own;
 * mg_hex_fill_playout for Hex), cut off after max_plies moves (0: none).  `cancel` (may be
 * NULL) is ticked once per playout.  No allocation. */
void mg_playout_counts_run(const mg_game *g, const void *root, long long n, uint64_t seed, int max_plies,
                           int (*playout)(const mg_game *g, void *st, struct mg_rng *rng, int max_plies, int *plies),
                           struct mg_cancel *cancel, mg_playout_counts *out);

#ifdef __cplusplus
}
#endif
#endif

/* playouts.c - outcome counts of repeated random playouts (see playouts.h). */
#include "playouts.h"

#include <limits.h>
#include <string.h>

#include "../cancel.h"
#include "../rng.h"

void mg_playout_counts_run(const mg_game *g, const void *root, long long n, uint64_t seed, int max_plies,
                           int (*playout)(const mg_game *g, void *st, struct mg_rng *rng, int max_plies, int *plies),
                           struct mg_cancel *cancel, mg_playout_counts *out)
{
    _Alignas(16) unsigned char work[MG_MAX_STATE];
    uint64_t counts[4] = {0, 0, 0, 0};
    memset(out, 0, sizeof *out);
    if (!playout)
        playout = mg_random_playout_moves;
    int lim = max_plies > 0 ? max_plies : INT_MAX;
    mg_rng rng;
    mg_rng_seed(&rng, seed);
    long long i = 0;
    for (; i < n && !mg_cancel_tick(cancel); i++) {
        memcpy(work, root, g->state_size);
        int p = 0;
        int r = playout(g, work, &rng, lim, &p);
        counts[r & 3]++;
        out->plies += (uint64_t)p;
    }
    out->p0_wins = counts[MG_P0_WINS];
    out->p1_wins = counts[MG_P1_WINS];
    out->draws = counts[MG_DRAW];
    out->played = i;
}

/*
 * az_noise.h - AlphaZero's root exploration noise on an MCTS tree (not a public header): with the
 * config's dirichlet_alpha > 0 and dirichlet_frac > 0, the root's priors become
 * (1 - frac) P + frac eta, eta ~ Dir(alpha) drawn from the search's generator (dirichlet.h).  The
 * search loop (mcts.c) applies it when the root is expanded and after every re-rooting (advance).
 */
#ifndef MG_SEARCH_AZ_NOISE_H
#define MG_SEARCH_AZ_NOISE_H

#include "mcts_tree.h"

/* The noise on the root's edges, when the config asks for it and the root is expanded (no-op otherwise). */
void mg_az_root_noise(mg_mcts *m);

#endif

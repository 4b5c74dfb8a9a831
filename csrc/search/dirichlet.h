/*
 * dirichlet.h - Gamma and Dirichlet samples from the caller's mg_rng (AlphaZero's root noise).
 * Marsaglia and Tsang's method for Gamma(alpha >= 1), boosted by U^(1/alpha) below 1; normal
 * deviates by the polar Box-Muller method.  No global state.
 */
#ifndef MG_SEARCH_DIRICHLET_H
#define MG_SEARCH_DIRICHLET_H

#include "../rng.h"

/* A Gamma(alpha, 1) sample, alpha > 0. */
double mg_gamma_sample(mg_rng *r, double alpha);
/* eta ~ Dir(alpha, ..., alpha) over n >= 1 entries (they sum to 1); alpha > 0. */
void mg_dirichlet_sample(mg_rng *r, double alpha, int n, double *eta);

#endif

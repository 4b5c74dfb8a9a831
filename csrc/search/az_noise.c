/* az_noise.c - AlphaZero's Dirichlet noise on the root's priors (see az_noise.h). */
#include "az_noise.h"

#include "dirichlet.h"

void mg_az_root_noise(mg_mcts *m)
{
    const mg_mcts_config *c = &m->cfg;
    if (!(c->dirichlet_alpha > 0 && c->dirichlet_frac > 0) || !m->has_root)
        return;
    const mcts_node *nd = &m->a.nodes[0];
    int n = (int)nd->num_edges;
    if (!(nd->flags & NF_EXPANDED) || n < 1)
        return;
    double eta[MG_MAX_MOVES];
    mg_dirichlet_sample(&m->rng, c->dirichlet_alpha, n, eta);
    mcts_edge *e = m->a.edges + nd->first_edge;
    for (int i = 0; i < n; i++)
        e[i].prior = (float)((1.0 - c->dirichlet_frac) * e[i].prior + c->dirichlet_frac * eta[i]);
}

/* dirichlet.c - Gamma and Dirichlet samples (see dirichlet.h). */
#include "dirichlet.h"

#include <math.h>

static double normal_sample(mg_rng *r)
{
    for (;;) {
        double u = 2.0 * mg_rng_double(r) - 1.0, v = 2.0 * mg_rng_double(r) - 1.0;
        double s = u * u + v * v;
        if (s > 0.0 && s < 1.0)
            return u * sqrt(-2.0 * log(s) / s);
    }
}

double mg_gamma_sample(mg_rng *r, double alpha)
{
    if (alpha < 1.0) {
        /* Gamma(alpha) = Gamma(alpha + 1) * U^(1 / alpha) */
        double u;
        do
            u = mg_rng_double(r);
        while (u <= 0.0);
        return mg_gamma_sample(r, alpha + 1.0) * pow(u, 1.0 / alpha);
    }
    double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = normal_sample(r), v = 1.0 + c * x;
        if (v <= 0.0)
            continue;
        v = v * v * v;
        double u = mg_rng_double(r);
        if (u < 1.0 - 0.0331 * x * x * x * x)
            return d * v;
        if (u > 0.0 && log(u) < 0.5 * x * x + d * (1.0 - v + log(v)))
            return d * v;
    }
}

void mg_dirichlet_sample(mg_rng *r, double alpha, int n, double *eta)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        eta[i] = mg_gamma_sample(r, alpha);
        sum += eta[i];
    }
    /* all draws underflowed (tiny alpha): the mass goes to one uniformly chosen entry, the
     * limit of Dir(alpha) as alpha -> 0 */
    if (!(sum > 0.0)) {
        int k = (int)mg_rng_below(r, (uint32_t)n);
        for (int i = 0; i < n; i++)
            eta[i] = i == k ? 1.0 : 0.0;
        return;
    }
    for (int i = 0; i < n; i++)
        eta[i] /= sum;
}

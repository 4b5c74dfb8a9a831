/*
 * choose.c - the token choice of a decoding step (choose.h).
 */
#include "choose.h"

#include <math.h>

#include "engine.h"

/* With p = softmax(z) the grouped test sum_g p_g > p_o is sum_g exp(z_g - m) > exp(z_o - m) (the
 * normaliser cancels), and the argmaxes of p are those of z (lowest id on ties, as NumPy's argmax
 * over the sorted group): so only the group's exponentials are needed, in double. */
int mg_choose_token(const float *z, int V, const uint8_t *in_group, const int32_t *group, int n_group)
{
    if (n_group <= 0) {
        int best = 0;
        for (int i = 1; i < V; i++)
            if (z[i] > z[best])
                best = i;
        return best;
    }
    int gi = -1, oi = -1;
    for (int i = 0; i < V; i++) {
        if (in_group[i]) {
            if (gi < 0 || z[i] > z[gi])
                gi = i;
        } else if (oi < 0 || z[i] > z[oi]) {
            oi = i;
        }
    }
    return mg_choose_between(z, gi, oi, group, n_group);
}

int mg_choose_between(const float *z, int gi, int oi, const int32_t *group, int n_group)
{
    if (oi < 0)
        return gi;
    if (gi < 0)
        return oi;
    double m = z[gi] > z[oi] ? z[gi] : z[oi], pg = 0.0;
    for (int k = 0; k < n_group; k++)
        pg += exp((double)z[group[k]] - m);
    return pg > exp((double)z[oi] - m) ? gi : oi;
}

void mg_bucket_probs(float *out, const float *z, const int32_t *bucket_ids, int n_buckets)
{
    double mx = z[bucket_ids[0]], sum = 0.0, ex[MG_ENGINE_MAX_BUCKETS];
    for (int i = 1; i < n_buckets; i++)
        if (z[bucket_ids[i]] > mx)
            mx = z[bucket_ids[i]];
    for (int i = 0; i < n_buckets; i++) {
        ex[i] = exp((double)z[bucket_ids[i]] - mx);
        sum += ex[i];
    }
    for (int i = 0; i < n_buckets; i++)
        out[i] = (float)(ex[i] / sum);
}

/*
 * choose.cu - the token choice of a decoding step for every row of logits[rows][V] at once:
 * plain argmax (first maximum) or grouped greedy (the group's most likely token if the group's
 * total probability beats the most likely other token, else that token), and the 64-way bucket
 * distribution (softmax over the bucket tokens' logits, in double) of every row, which the
 * engine records where the chosen token is a bucket token.
 * Reference: mg_choose_token and mg_bucket_probs (csrc/model/choose.c), row by row.
 *
 *   kernel 1: one block of 256 threads per row.  Each thread scans a strided slice of the
 *     vocabulary for its best group token and best other token (value, then lowest id), the
 *     block reduces the pairs with warp shuffles and shared memory; the group's exponentials
 *     are summed in double the same way; warp 0 computes the bucket distribution (lanes hold
 *     buckets lane and lane + 32).  The order of the double sums differs from the reference's
 *     sequential ones (a relative difference around 1e-16: the choice can differ only when the
 *     group's probability and the other token's agree to that precision).
 */
#include "common.cuh"

#define CH_THREADS 256
#define CH_WARPS (CH_THREADS / 32)

/* (v, i) beats (bv, bi): a larger value, or the same value at a lower id; i < 0 is "none" */
__device__ __forceinline__ bool beats(float v, int i, float bv, int bi)
{
    return i >= 0 && (bi < 0 || v > bv || (v == bv && i < bi));
}

__device__ __forceinline__ void warp_best(float &v, int &i)
{
    for (int o = 16; o > 0; o >>= 1) {
        float ov = __shfl_xor_sync(MGK_FULL_MASK, v, o);
        int oi = __shfl_xor_sync(MGK_FULL_MASK, i, o);
        if (beats(ov, oi, v, i)) {
            v = ov;
            i = oi;
        }
    }
}

__device__ __forceinline__ double warp_sum_d(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(MGK_FULL_MASK, v, o);
    return v;
}

__global__ void choose_kernel1(int *tok, float *probs, const float *logits, int V, const unsigned char *in_group,
                               const int *group, int n_group, const int *bucket_ids, int n_buckets)
{
    MGK_SHARED(float, sv, 2 * CH_WARPS);
    MGK_SHARED(int, si, 2 * CH_WARPS);
    MGK_SHARED(double, sd, CH_WARPS);
    int r = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float *z = logits + (long)r * V;
    float gv = 0.0f, ov = 0.0f;
    int gi = -1, oi = -1;
    for (int i = threadIdx.x; i < V; i += CH_THREADS) {
        float v = z[i];
        if (n_group > 0 && in_group[i]) {
            if (beats(v, i, gv, gi)) {
                gv = v;
                gi = i;
            }
        } else if (beats(v, i, ov, oi)) {
            ov = v;
            oi = i;
        }
    }
    warp_best(gv, gi);
    warp_best(ov, oi);
    if (lane == 0) {
        sv[warp] = gv;
        si[warp] = gi;
        sv[CH_WARPS + warp] = ov;
        si[CH_WARPS + warp] = oi;
    }
    __syncthreads();
    gv = ov = 0.0f;
    gi = oi = -1;
    for (int w = 0; w < CH_WARPS; w++) { /* every thread: the block's best of each kind */
        if (beats(sv[w], si[w], gv, gi)) {
            gv = sv[w];
            gi = si[w];
        }
        if (beats(sv[CH_WARPS + w], si[CH_WARPS + w], ov, oi)) {
            ov = sv[CH_WARPS + w];
            oi = si[CH_WARPS + w];
        }
    }
    if (gi >= 0 && oi >= 0) { /* block-uniform */
        double m = gv > ov ? gv : ov, pg = 0.0;
        for (int k = threadIdx.x; k < n_group; k += CH_THREADS)
            pg += exp((double)z[group[k]] - m);
        pg = warp_sum_d(pg);
        if (lane == 0)
            sd[warp] = pg;
        __syncthreads();
        if (threadIdx.x == 0) {
            double tot = 0.0;
            for (int w = 0; w < CH_WARPS; w++)
                tot += sd[w];
            tok[r] = tot > exp((double)ov - m) ? gi : oi;
        }
    } else if (threadIdx.x == 0) {
        tok[r] = gi >= 0 ? gi : oi;
    }
    if (warp == 0 && n_buckets > 0) {
        double a = lane < n_buckets ? (double)z[bucket_ids[lane]] : -INFINITY;
        double b = lane + 32 < n_buckets ? (double)z[bucket_ids[lane + 32]] : -INFINITY;
        double mx = a > b ? a : b;
        for (int o = 16; o > 0; o >>= 1) {
            double t = __shfl_xor_sync(MGK_FULL_MASK, mx, o);
            mx = t > mx ? t : mx;
        }
        double ea = lane < n_buckets ? exp(a - mx) : 0.0, eb = lane + 32 < n_buckets ? exp(b - mx) : 0.0;
        double sum = warp_sum_d(ea + eb);
        float *out = probs + (long)r * n_buckets;
        if (lane < n_buckets)
            out[lane] = (float)(ea / sum);
        if (lane + 32 < n_buckets)
            out[lane + 32] = (float)(eb / sum);
    }
}

extern "C" int mgk_choose(int variant, int *tok, float *probs, const float *logits, int rows, int V,
                          const unsigned char *in_group, const int *group, int n_group, const int *bucket_ids,
                          int n_buckets)
{
    if (variant != 1 || rows < 0 || V < 1 || n_group < 0 || n_buckets < 0 || n_buckets > 64 || rows > 2147483647)
        return MGK_ERR_ARG;
    if (rows == 0)
        return MGK_OK;
    MGK_LAUNCH(choose_kernel1, dim3(rows), dim3(CH_THREADS), 0, tok, probs, logits, V, in_group, group, n_group,
               bucket_ids, n_buckets);
    return mgk_status();
}

#ifdef MGK_MAIN
#include "driver.h"
#include "model/choose.h"

int main(int argc, char **argv)
{
    drv::Rng rng(drv::seed_arg(argc, argv));
    int fails = 0, won_group = 0, won_other = 0;
    /* rows, V, group size (-1: the whole vocabulary), buckets, logit levels (few: many ties) */
    const int shapes[][5] = {{1, 1, 0, 1, 0},     {3, 7, 3, 2, 3},       {4, 300, 0, 64, 0}, {5, 1000, 64, 64, 0},
                             {3, 500, -1, 10, 0}, {6, 2000, 100, 64, 4}, {2, 257, 1, 33, 2},
                             {1 + rng.below(8), 1 + rng.below(3000), rng.below(200), 1 + rng.below(64), rng.below(5)}};
    for (auto &sh : shapes) {
        int rows = sh[0], V = sh[1], ng = sh[2] < 0 ? V : std::min(sh[2], V), nb = std::min(sh[3], V), levels = sh[4];
        std::vector<float> z((size_t)rows * V);
        for (auto &x : z)
            x = levels ? (float)rng.below(levels) : rng.uniform(-8, 8);
        /* a group of distinct ids; its logits raised on some rows so that both outcomes occur */
        std::vector<unsigned char> in_group(V, 0);
        std::vector<int> group;
        while ((int)group.size() < ng) {
            int t = rng.below(V);
            if (!in_group[t]) {
                in_group[t] = 1;
                group.push_back(t);
            }
        }
        for (int r = 0; r < rows; r++)
            if (r % 2 && !levels)
                for (int t : group)
                    z[(size_t)r * V + t] += 5.0f;
        std::vector<int> buckets(nb);
        for (int i = 0; i < nb; i++)
            buckets[i] = (int)((long)i * V / std::max(nb, 1));
        std::vector<int> ref_tok(rows);
        std::vector<float> ref_p((size_t)rows * nb);
        std::vector<int32_t> group32(group.begin(), group.end()), buckets32(buckets.begin(), buckets.end());
        for (int r = 0; r < rows; r++) {
            ref_tok[r] = mg_choose_token(&z[(size_t)r * V], V, in_group.data(), group32.data(), ng);
            if (ng > 0 && ng < V)
                (in_group[ref_tok[r]] ? won_group : won_other)++;
            if (nb)
                mg_bucket_probs(&ref_p[(size_t)r * nb], &z[(size_t)r * V], buckets32.data(), nb);
        }
        float *dz = drv::to_dev(z), *dp = drv::dev_alloc<float>(ref_p.size());
        unsigned char *dg = drv::to_dev(in_group);
        int *dgl = drv::to_dev(group), *db = drv::to_dev(buckets), *dt = drv::dev_alloc<int>(rows);
        char what[128];
        std::snprintf(what, sizeof what, "choose1 rows=%d V=%d group=%d buckets=%d levels=%d", rows, V, ng, nb, levels);
        if (mgk_choose(1, dt, dp, dz, rows, V, dg, dgl, ng, db, nb) != MGK_OK) {
            std::printf("launch failed: %s\n", what);
            fails++;
        } else {
            auto tok = drv::to_host(dt, rows);
            auto p = drv::to_host(dp, ref_p.size());
            bool same = true;
            for (int r = 0; r < rows; r++)
                if (tok[r] != ref_tok[r]) {
                    std::printf("MISMATCH %s row %d: token %d, reference %d\n", what, r, tok[r], ref_tok[r]);
                    same = false;
                }
            if (!same || !drv::close(what, p.data(), ref_p.data(), p.size(), 1e-7f, 1e-6f))
                fails++;
            else if (rows * V >= 5000)
                drv::report_time(what, drv::time_us([&] { mgk_choose(1, dt, dp, dz, rows, V, dg, dgl, ng, db, nb); }));
        }
        for (void *q : {(void *)dz, (void *)dp, (void *)dg, (void *)dgl, (void *)db, (void *)dt})
            cudaFree(q);
    }
    /* the data must exercise both outcomes of the grouped choice */
    std::printf("grouped rows: the group won %d, another token %d\n", won_group, won_other);
    if (!won_group || !won_other) {
        std::printf("MISMATCH: the test data did not exercise both outcomes of the grouped choice\n");
        fails++;
    }
    return drv::finish(fails);
}
#endif

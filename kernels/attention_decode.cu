/*
 * attention_decode.cu - one query row per sequence attending to its cached keys/values
 * (decoding), split along the keys (flash-decoding): the keys of a long sequence are spread over
 * n_split blocks so that a small batch still fills the GPU, each block producing a partial
 * softmax (running max m, sum l, unnormalised output acc[hd]), and a second kernel combines the
 * splits.  Causal by construction (row r reads keys 0..pos[r]); grouped-query heads read KV head
 * h / (H / KV).  The cache has the engine's layout, one layer: [slot][S][KV * hd].
 * Reference: mg_attention (csrc/model/layers.c) with len = pos[r] + 1, row by row.
 *
 *   kernel 1 (split): 128 threads = 4 warps; warp w takes keys w, w + 4, ... of the block's
 *     range; a key's score is a warp-wide dot product (lanes stride the head dimension, then a
 *     shuffle butterfly), folded into the warp's online softmax; lanes hold output elements
 *     lane + 32c.  The 4 warps' partials are merged through shared memory.
 *   combine: one block per (row, head), thread i < hd merges element i over the splits.
 */
#include "common.cuh"

#define DEC_WARPS 4
#define DEC_CHUNKS (MGK_MAX_HEAD_DIM / 32)

static int pick_split(int max_len)
{
    int s = (max_len + 127) / 128;
    return s < 1 ? 1 : s > 64 ? 64 : s;
}

__global__ void attention_decode_split(float *work, const float *q, const float *kc, const float *vc, const int *slot,
                                       const int *pos, int S, int H, int KV, int hd, int chunk, int n_split)
{
    MGK_SHARED(float, qs, MGK_MAX_HEAD_DIM);
    MGK_SHARED(float, wm, DEC_WARPS);
    MGK_SHARED(float, wl, DEC_WARPS);
    MGK_SHARED(float, wacc, DEC_WARPS * MGK_MAX_HEAD_DIM);
    int s = blockIdx.x, h = blockIdx.y, r = blockIdx.z;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int kvd = KV * hd, kh = h / (H / KV), len = pos[r] + 1;
    float scale = 1.0f / sqrtf((float)hd);
    for (int i = threadIdx.x; i < hd; i += blockDim.x)
        qs[i] = q[(long)r * H * hd + (long)h * hd + i];
    __syncthreads();
    const float *K = kc + (long)slot[r] * S * kvd + (long)kh * hd, *V = vc + (long)slot[r] * S * kvd + (long)kh * hd;
    int t0 = s * chunk, t1 = t0 + chunk < len ? t0 + chunk : len;
    float m = -INFINITY, l = 0.0f, acc[DEC_CHUNKS];
    for (int c = 0; c < DEC_CHUNKS; c++)
        acc[c] = 0.0f;
    for (int t = t0 + warp; t < t1; t += DEC_WARPS) {
        const float *kt = K + (long)t * kvd, *vt = V + (long)t * kvd;
        float d = 0.0f;
        for (int i = lane; i < hd; i += 32)
            d += qs[i] * kt[i];
        float sc = mgk_warp_sum(d) * scale;
        float mn = fmaxf(m, sc), alpha = expf(m - mn), p = expf(sc - mn);
        l = l * alpha + p;
        for (int c = 0; c < DEC_CHUNKS; c++) {
            int i = lane + 32 * c;
            if (i < hd)
                acc[c] = acc[c] * alpha + p * vt[i];
        }
        m = mn;
    }
    if (lane == 0) {
        wm[warp] = m;
        wl[warp] = l;
    }
    for (int c = 0; c < DEC_CHUNKS; c++) {
        int i = lane + 32 * c;
        if (i < hd)
            wacc[warp * MGK_MAX_HEAD_DIM + i] = acc[c];
    }
    __syncthreads();
    float M = -INFINITY;
    for (int w = 0; w < DEC_WARPS; w++)
        if (wl[w] > 0.0f)
            M = fmaxf(M, wm[w]);
    float *dst = work + (((long)r * H + h) * n_split + s) * (hd + 2);
    for (int i = threadIdx.x; i < hd; i += blockDim.x) {
        float a = 0.0f;
        for (int w = 0; w < DEC_WARPS; w++)
            if (wl[w] > 0.0f)
                a += wacc[w * MGK_MAX_HEAD_DIM + i] * expf(wm[w] - M);
        dst[i] = a;
    }
    if (threadIdx.x == 0) {
        float L = 0.0f;
        for (int w = 0; w < DEC_WARPS; w++)
            if (wl[w] > 0.0f)
                L += wl[w] * expf(wm[w] - M);
        dst[hd] = M;
        dst[hd + 1] = L;
    }
}

__global__ void attention_decode_combine(float *out, const float *work, int H, int hd, int n_split)
{
    int h = blockIdx.x, r = blockIdx.y;
    const float *src = work + ((long)r * H + h) * n_split * (hd + 2);
    float M = -INFINITY;
    for (int s = 0; s < n_split; s++)
        if (src[s * (hd + 2) + hd + 1] > 0.0f)
            M = fmaxf(M, src[s * (hd + 2) + hd]);
    float L = 0.0f;
    for (int s = 0; s < n_split; s++) {
        const float *p = src + s * (hd + 2);
        if (p[hd + 1] > 0.0f)
            L += p[hd + 1] * expf(p[hd] - M);
    }
    for (int i = threadIdx.x; i < hd; i += blockDim.x) {
        float a = 0.0f;
        for (int s = 0; s < n_split; s++) {
            const float *p = src + s * (hd + 2);
            if (p[hd + 1] > 0.0f)
                a += p[i] * expf(p[hd] - M);
        }
        out[(long)r * H * hd + (long)h * hd + i] = a / L;
    }
}

extern "C" long mgk_attention_decode_work(int rows, int H, int hd, int max_len, int n_split)
{
    if (n_split <= 0)
        n_split = pick_split(max_len);
    return (long)rows * H * n_split * (hd + 2);
}

extern "C" int mgk_attention_decode(float *out, const float *q, const float *kc, const float *vc, const int *slot,
                                    const int *pos, int rows, int S, int H, int KV, int hd, int max_len, int n_split,
                                    float *work)
{
    if (rows < 0 || H < 1 || KV < 1 || H % KV || hd < 1 || hd > MGK_MAX_HEAD_DIM || max_len < 1 || max_len > S ||
        rows > 65535 || H > 65535)
        return MGK_ERR_ARG;
    if (rows == 0)
        return MGK_OK;
    if (n_split <= 0)
        n_split = pick_split(max_len);
    int chunk = (max_len + n_split - 1) / n_split;
    MGK_LAUNCH(attention_decode_split, dim3(n_split, H, rows), dim3(32 * DEC_WARPS), 0, work, q, kc, vc, slot, pos, S,
               H, KV, hd, chunk, n_split);
    MGK_LAUNCH(attention_decode_combine, dim3(H, rows), dim3(MGK_MAX_HEAD_DIM), 0, out, work, H, hd, n_split);
    return mgk_status();
}

#ifdef MGK_MAIN
#include "driver.h"
#include "model/layers.h"

int main(int argc, char **argv)
{
    drv::Rng rng(drv::seed_arg(argc, argv));
    int fails = 0;
    /* rows, H, KV, hd, S, n_split (0: the launcher's choice) */
    std::vector<std::vector<int>> shapes = {{1, 1, 1, 1, 1, 1},     {1, 2, 1, 24, 40, 3},   {3, 4, 2, 64, 200, 0},
                             {2, 8, 2, 128, 150, 7}, {2, 3, 3, 72, 90, 40}, {4, 6, 1, 32, 129, 2},
                             {1 + rng.below(6), 4, 1 + rng.below(2) * 3, 8 * (1 + rng.below(16)), 1 + rng.below(200),
                              rng.below(9)}};
    if (drv::bench_arg(argc, argv))
        shapes.insert(shapes.end(), {{32, 16, 16, 128, 1024, 0}, {64, 16, 4, 128, 2048, 0}});
    for (auto &sh : shapes) {
        int rows = sh[0], H = sh[1], KV = sh[2], hd = sh[3], S = sh[4], ns = sh[5];
        if (H % KV)
            H = KV * (1 + H / KV);
        int kvd = KV * hd, slots = rows + 1;
        std::vector<int> slot(rows), pos(rows);
        int max_len = 1;
        for (int r = 0; r < rows; r++) {
            slot[r] = (r * 7 + 3) % slots;
            pos[r] = r == 0 ? S - 1 : rng.below(S); /* one row at the longest length */
            max_len = std::max(max_len, pos[r] + 1);
        }
        /* the keys/values a row may read are random, the ones past its position NaN */
        std::vector<float> kc((size_t)slots * S * kvd, NAN), vc(kc.size(), NAN);
        for (int r = 0; r < rows; r++)
            for (long i = 0; i < (long)(pos[r] + 1) * kvd; i++) {
                kc[(size_t)slot[r] * S * kvd + i] = rng.uniform(-2, 2);
                vc[(size_t)slot[r] * S * kvd + i] = rng.uniform(-1, 1);
            }
        auto q = drv::randv(rng, (size_t)rows * H * hd, -2, 2);
        std::vector<float> ref(q.size()), scores(S);
        for (int r = 0; r < rows; r++)
            mg_attention(&ref[(size_t)r * H * hd], &q[(size_t)r * H * hd], &kc[(size_t)slot[r] * S * kvd],
                         &vc[(size_t)slot[r] * S * kvd], pos[r] + 1, H, KV, hd, scores.data());
        long nw = mgk_attention_decode_work(rows, H, hd, max_len, ns);
        float *dq = drv::to_dev(q), *dk = drv::to_dev(kc), *dv = drv::to_dev(vc), *dout = drv::dev_alloc<float>(q.size());
        float *dwork = drv::dev_alloc<float>((size_t)nw);
        int *dslot = drv::to_dev(slot), *dpos = drv::to_dev(pos);
        char what[128];
        std::snprintf(what, sizeof what, "attention_decode rows=%d H=%d KV=%d hd=%d max_len=%d n_split=%d", rows, H, KV,
                      hd, max_len, ns);
        if (mgk_attention_decode(dout, dq, dk, dv, dslot, dpos, rows, S, H, KV, hd, max_len, ns, dwork) != MGK_OK) {
            std::printf("launch failed: %s\n", what);
            fails++;
        } else {
            auto got = drv::to_host(dout, q.size());
            if (!drv::close(what, got.data(), ref.data(), got.size(), 2e-6f, 2e-5f))
                fails++;
            else if (max_len >= 100)
                drv::report_time(what, drv::time_us([&] {
                                     mgk_attention_decode(dout, dq, dk, dv, dslot, dpos, rows, S, H, KV, hd, max_len, ns,
                                                          dwork);
                                 }));
        }
        for (void *p : {(void *)dq, (void *)dk, (void *)dv, (void *)dout, (void *)dwork, (void *)dslot, (void *)dpos})
            cudaFree(p);
    }
    /* shapes the launcher refuses */
    if (mgk_attention_decode(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1, 10, 3, 2, 8, 5, 1, nullptr) !=
            MGK_ERR_ARG ||
        mgk_attention_decode(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1, 10, 2, 2, 129, 5, 1, nullptr) !=
            MGK_ERR_ARG) {
        std::printf("MISMATCH: a bad shape was accepted\n");
        fails++;
    }
    return drv::finish(fails);
}
#endif

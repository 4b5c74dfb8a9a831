/*
 * attention_prefill.cu - causal attention of the prompt rows of a pass (prefill), FlashAttention
 * style: a block takes a tile of BQ consecutive query rows of one sequence and one query head,
 * streams that sequence's cached keys/values through shared memory in tiles of BK, and keeps an
 * online softmax per row, so the scores are never written out.  Ragged batches: sequences of
 * any lengths and starting positions, described like FlashAttention's varlen API (row offsets
 * seq_start, plus the cache slot and first position of each); no padding is computed.
 * Grouped-query heads read KV head h / (H / KV).  The cache has the engine's layout, one layer:
 * [slot][S][KV * hd], with this pass's own keys/values already written (as the engine does).
 * Reference: mg_attention (csrc/model/layers.c) with len = pos + 1, row by row.
 *
 *   kernel 1: BQ = 16 rows, BK = 32 keys, 128 threads = 4 warps of 4 rows each.  Per key tile:
 *     the block loads K (rows padded to hd + 1 floats: lane j reading key j's element i hits
 *     bank (j * (hd + 1) + i) % 32, all distinct) and V; for each of its rows a warp computes the
 *     32 scores with lane j = key j, masks keys after the row's position, updates the row's max
 *     and sum with warp shuffles, and adds p_j * V[j] to the row's output, lane i holding output
 *     elements i + 32c in registers.  Key tiles past the tile's last position are not loaded.
 */
#include "common.cuh"

#define PF_BQ 16
#define PF_BK 32
#define PF_WARPS 4
#define PF_ROWS_PER_WARP (PF_BQ / PF_WARPS)
#define PF_CHUNKS (MGK_MAX_HEAD_DIM / 32)

__global__ void attention_prefill_kernel1(float *out, const float *q, const float *kc, const float *vc,
                                          const int *seq_start, const int *seq_slot, const int *seq_pos0, int S, int H,
                                          int KV, int hd)
{
    MGK_SHARED(float, qs, PF_BQ * MGK_MAX_HEAD_DIM);
    MGK_SHARED(float, ks, PF_BK * (MGK_MAX_HEAD_DIM + 1));
    MGK_SHARED(float, vs, PF_BK * MGK_MAX_HEAD_DIM);
    int seq = blockIdx.z, h = blockIdx.y;
    int rs = seq_start[seq], re = seq_start[seq + 1];
    int q0 = rs + blockIdx.x * PF_BQ;
    if (q0 >= re) /* the whole block: this sequence has fewer tiles than the longest */
        return;
    int nq = re - q0 < PF_BQ ? re - q0 : PF_BQ;
    int pos_first = seq_pos0[seq] + (q0 - rs), pos_last = pos_first + nq - 1;
    int kvd = KV * hd, kh = h / (H / KV), qd = H * hd, kp = hd + 1;
    const float *K = kc + (long)seq_slot[seq] * S * kvd + (long)kh * hd;
    const float *V = vc + (long)seq_slot[seq] * S * kvd + (long)kh * hd;
    float scale = 1.0f / sqrtf((float)hd);
    for (int e = threadIdx.x; e < PF_BQ * hd; e += blockDim.x) {
        int rr = e / hd, i = e % hd;
        qs[rr * MGK_MAX_HEAD_DIM + i] = rr < nq ? q[(long)(q0 + rr) * qd + (long)h * hd + i] * scale : 0.0f;
    }
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float m[PF_ROWS_PER_WARP], l[PF_ROWS_PER_WARP], acc[PF_ROWS_PER_WARP][PF_CHUNKS];
    MGK_UNROLL
    for (int a = 0; a < PF_ROWS_PER_WARP; a++) {
        m[a] = -INFINITY;
        l[a] = 0.0f;
        MGK_UNROLL
        for (int c = 0; c < PF_CHUNKS; c++)
            acc[a][c] = 0.0f;
    }
    for (int k0 = 0; k0 <= pos_last; k0 += PF_BK) {
        __syncthreads(); /* the previous tile's readers are done (and, first time, qs is written) */
        for (int e = threadIdx.x; e < PF_BK * hd; e += blockDim.x) {
            int j = e / hd, i = e % hd, t = k0 + j;
            bool ok = t <= pos_last;
            ks[j * kp + i] = ok ? K[(long)t * kvd + i] : 0.0f;
            vs[j * MGK_MAX_HEAD_DIM + i] = ok ? V[(long)t * kvd + i] : 0.0f;
        }
        __syncthreads();
        MGK_UNROLL /* m, l and acc are indexed by a and c: unrolled, they stay in registers */
        for (int a = 0; a < PF_ROWS_PER_WARP; a++) {
            int rr = warp * PF_ROWS_PER_WARP + a; /* warp-uniform: the shuffles below are safe */
            int p = pos_first + rr;
            if (rr >= nq || k0 > p)
                continue;
            const float *qr = qs + rr * MGK_MAX_HEAD_DIM;
            float sc = -INFINITY;
            if (k0 + lane <= p) {
                float d = 0.0f;
                for (int i = 0; i < hd; i++)
                    d += qr[i] * ks[lane * kp + i];
                sc = d;
            }
            float mn = fmaxf(m[a], mgk_warp_max(sc)); /* finite: key k0 <= p is in the tile */
            float pj = sc == -INFINITY ? 0.0f : expf(sc - mn), alpha = expf(m[a] - mn);
            l[a] = l[a] * alpha + mgk_warp_sum(pj);
            m[a] = mn;
            MGK_UNROLL
            for (int c = 0; c < PF_CHUNKS; c++)
                acc[a][c] *= alpha;
            int nk = p - k0 + 1 < PF_BK ? p - k0 + 1 : PF_BK;
            for (int j = 0; j < nk; j++) {
                float pb = __shfl_sync(MGK_FULL_MASK, pj, j);
                MGK_UNROLL
                for (int c = 0; c < PF_CHUNKS; c++) {
                    int i = lane + 32 * c;
                    if (i < hd)
                        acc[a][c] += pb * vs[j * MGK_MAX_HEAD_DIM + i];
                }
            }
        }
    }
    MGK_UNROLL
    for (int a = 0; a < PF_ROWS_PER_WARP; a++) {
        int rr = warp * PF_ROWS_PER_WARP + a;
        if (rr >= nq)
            continue;
        MGK_UNROLL
        for (int c = 0; c < PF_CHUNKS; c++) {
            int i = lane + 32 * c;
            if (i < hd)
                out[(long)(q0 + rr) * qd + (long)h * hd + i] = acc[a][c] / l[a];
        }
    }
}

extern "C" int mgk_attention_prefill(int variant, float *out, const float *q, const float *kc, const float *vc,
                                     const int *seq_start, const int *seq_slot, const int *seq_pos0, int n_seq,
                                     int max_rows, int S, int H, int KV, int hd)
{
    if (variant != 1 || n_seq < 0 || max_rows < 0 || H < 1 || KV < 1 || H % KV || hd < 1 ||
        hd > MGK_MAX_HEAD_DIM || S < 1 || n_seq > 65535 || H > 65535)
        return MGK_ERR_ARG;
    if (n_seq == 0 || max_rows == 0)
        return MGK_OK;
    MGK_LAUNCH(attention_prefill_kernel1, dim3((max_rows + PF_BQ - 1) / PF_BQ, H, n_seq), dim3(32 * PF_WARPS), 0, out,
               q, kc, vc, seq_start, seq_slot, seq_pos0, S, H, KV, hd);
    return mgk_status();
}

#ifdef MGK_MAIN
#include "driver.h"
#include "model/layers.h"

int main(int argc, char **argv)
{
    drv::Rng rng(drv::seed_arg(argc, argv));
    int fails = 0;
    /* sequences, most rows, H, KV, hd, S, whether sequences start after a cached prefix */
    std::vector<std::vector<int>> shapes = {{1, 1, 1, 1, 1, 1, 0},   {1, 5, 2, 1, 24, 8, 0},   {3, 40, 4, 2, 64, 64, 1},
                             {2, 17, 2, 2, 128, 48, 1}, {4, 33, 6, 3, 40, 70, 1}, {1, 70, 2, 1, 32, 80, 0},
                             {1 + rng.below(4), 1 + rng.below(50), 4, 1 + rng.below(2), 8 * (1 + rng.below(16)), 60, 1}};
    if (drv::bench_arg(argc, argv))
        shapes.insert(shapes.end(), {{8, 512, 16, 16, 128, 1024, 0}, {4, 1024, 16, 4, 128, 2048, 1}});
    for (auto &sh : shapes) {
        int n_seq = sh[0], most = sh[1], H = sh[2], KV = sh[3], hd = sh[4], S = sh[5], prefix = sh[6];
        if (H % KV)
            H = KV * (1 + H / KV);
        if (most > S)
            most = S;
        int kvd = KV * hd, slots = n_seq + 2, qd = H * hd;
        std::vector<int> start(1, 0), slot(n_seq), pos0(n_seq);
        int max_rows = 0;
        for (int s = 0; s < n_seq; s++) {
            int nr = s == 0 ? most : 1 + rng.below(most); /* ragged */
            pos0[s] = prefix ? rng.below(S - nr + 1) : 0;
            slot[s] = (s * 5 + 1) % slots;
            start.push_back(start.back() + nr);
            max_rows = std::max(max_rows, nr);
        }
        int rows = start.back();
        std::vector<float> kc((size_t)slots * S * kvd, NAN), vc(kc.size(), NAN); /* past a row: NaN */
        for (int s = 0; s < n_seq; s++)
            for (long i = 0; i < (long)(pos0[s] + start[s + 1] - start[s]) * kvd; i++) {
                kc[(size_t)slot[s] * S * kvd + i] = rng.uniform(-2, 2);
                vc[(size_t)slot[s] * S * kvd + i] = rng.uniform(-1, 1);
            }
        auto q = drv::randv(rng, (size_t)rows * qd, -2, 2);
        std::vector<float> ref(q.size()), scores(S);
        for (int s = 0; s < n_seq; s++)
            for (int r = start[s]; r < start[s + 1]; r++)
                mg_attention(&ref[(size_t)r * qd], &q[(size_t)r * qd], &kc[(size_t)slot[s] * S * kvd],
                             &vc[(size_t)slot[s] * S * kvd], pos0[s] + (r - start[s]) + 1, H, KV, hd, scores.data());
        float *dq = drv::to_dev(q), *dk = drv::to_dev(kc), *dv = drv::to_dev(vc), *dout = drv::dev_alloc<float>(q.size());
        int *dstart = drv::to_dev(start), *dslot = drv::to_dev(slot), *dpos0 = drv::to_dev(pos0);
        char what[128];
        std::snprintf(what, sizeof what, "attention_prefill1 seqs=%d rows=%d max_rows=%d H=%d KV=%d hd=%d prefix=%d",
                      n_seq, rows, max_rows, H, KV, hd, prefix);
        if (mgk_attention_prefill(1, dout, dq, dk, dv, dstart, dslot, dpos0, n_seq, max_rows, S, H, KV, hd) != MGK_OK) {
            std::printf("launch failed: %s\n", what);
            fails++;
        } else {
            auto got = drv::to_host(dout, q.size());
            if (!drv::close(what, got.data(), ref.data(), got.size(), 2e-6f, 2e-5f))
                fails++;
            else if (rows >= 40)
                drv::report_time(what, drv::time_us([&] {
                                     mgk_attention_prefill(1, dout, dq, dk, dv, dstart, dslot, dpos0, n_seq, max_rows, S,
                                                           H, KV, hd);
                                 }));
        }
        for (void *p : {(void *)dq, (void *)dk, (void *)dv, (void *)dout, (void *)dstart, (void *)dslot, (void *)dpos0})
            cudaFree(p);
    }
    if (mgk_attention_prefill(1, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1, 1, 4, 2, 2, 200) !=
        MGK_ERR_ARG) {
        std::printf("MISMATCH: a bad shape was accepted\n");
        fails++;
    }
    return drv::finish(fails);
}
#endif

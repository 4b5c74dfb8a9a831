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
 *
 * Variant 2, cascade (shared-prefix) decoding (mgk_attention_decode_shared): rows grouped by a
 * shared prefix (the prefix cache's / prefix tree's shared blocks, kept in one slot) read that
 * prefix once for the whole group instead of once per row.
 *   kernel 2a (prefix): one block per (prefix split, KV head and chunk of 16 query pairs, group); it
 *     loads the split's keys and values in tiles of 32 into shared memory and scores them for its
 *     16 query (row, head) pairs of the group (query heads of the KV head times rows of the group;
 *     4 per warp, lane j scores key j of the tile, online softmax per query), writing one partial
 *     per (row, head, prefix split).  The chunks of a group read the same tiles (from L2 after the
 *     first); until 2026-11-27 one block looped over them, which left an H100 nearly idle: 20 blocks
 *     for 64 rows of 16 heads over a 545-token prefix, 2.3 ms against variant 1's 0.18 ms.
 *   kernel 2b (suffix): kernel 1 over each row's own positions prefix_len..pos[r] in its own slot.
 *   combine: as variant 1, over the prefix partials (grouped rows) and the suffix partials.
 */
#include "common.cuh"

#define DEC_WARPS 4
#define DEC_CHUNKS (MGK_MAX_HEAD_DIM / 32)

static int pick_split(int max_len)
{
    int s = (max_len + 127) / 128;
    return s < 1 ? 1 : s > 64 ? 64 : s;
}

/* keys begin..pos[r] of row r in n_split ranges of chunk keys, begin = 0 or (variant 2) the row's
 * group's prefix length; the partial of split s goes to partial s_off + s of n_total per (row, head) */
__global__ void attention_decode_split(float *work, const float *q, const float *kc, const float *vc, const int *slot,
                                       const int *pos, const int *group_of_row, const int *group_prefix_len, int S,
                                       int H, int KV, int hd, int chunk, int s_off, int n_total)
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
    int begin = group_of_row && group_of_row[r] >= 0 ? group_prefix_len[group_of_row[r]] : 0;
    int t0 = begin + s * chunk, t1 = t0 + chunk < len ? t0 + chunk : len;
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
    float *dst = work + (((long)r * H + h) * n_total + s_off + s) * (hd + 2);
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

/* merges partials s0..n_split-1 of each (row, head): s0 = n_pref for a row without a group
 * (variant 2: its prefix partials are never written), else 0 */
__global__ void attention_decode_combine(float *out, const float *work, const int *group_of_row, int n_pref, int H,
                                         int hd, int n_split)
{
    int h = blockIdx.x, r = blockIdx.y;
    int s0 = group_of_row && group_of_row[r] < 0 ? n_pref : 0;
    const float *src = work + ((long)r * H + h) * n_split * (hd + 2) + (long)s0 * (hd + 2);
    n_split -= s0;
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
    MGK_LAUNCH(attention_decode_split, dim3(n_split, H, rows), dim3(32 * DEC_WARPS), 0, work, q, kc, vc, slot, pos,
               (const int *)nullptr, (const int *)nullptr, S, H, KV, hd, chunk, 0, n_split);
    MGK_LAUNCH(attention_decode_combine, dim3(H, rows), dim3(MGK_MAX_HEAD_DIM), 0, out, work, (const int *)nullptr, 0,
               H, hd, n_split);
    return mgk_status();
}

/* ---- variant 2: cascade decoding over shared prefixes ------------------------------------------ */

#define CAS_TILE 32                 /* prefix keys per shared-memory tile (lane j scores key j) */
#define CAS_PER_WARP 4              /* query (row, head) pairs per warp */
#define CAS_Q (DEC_WARPS * CAS_PER_WARP) /* query pairs served by one pass over the prefix */

__global__ void attention_decode_prefix(float *work, const float *q, const float *kc, const float *vc,
                                        mgk_prefix_groups pg, int S, int H, int KV, int hd, int chunk, int n_total)
{
    MGK_SHARED(float, ks, CAS_TILE * (MGK_MAX_HEAD_DIM + 1)); /* padded rows: lane j reads key j conflict-free */
    MGK_SHARED(float, vs, CAS_TILE * MGK_MAX_HEAD_DIM);
    MGK_SHARED(float, qs, CAS_Q * MGK_MAX_HEAD_DIM);
    int s = blockIdx.x, kh = blockIdx.y % KV, gi = blockIdx.z;
    int q0 = (blockIdx.y / KV) * CAS_Q; /* this block's query pairs of the group: q0 .. q0 + CAS_Q - 1 */
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int kvd = KV * hd, rep = H / KV;
    int r0 = pg.start[gi], nq = (pg.start[gi + 1] - r0) * rep;
    int plen = pg.prefix_len[gi];
    int t0 = s * chunk, t1 = t0 + chunk < plen ? t0 + chunk : plen;
    float scale = 1.0f / sqrtf((float)hd);
    const float *K = kc + (long)pg.prefix_slot[gi] * S * kvd + (long)kh * hd;
    const float *V = vc + (long)pg.prefix_slot[gi] * S * kvd + (long)kh * hd;
    if (q0 >= nq) /* the launch is sized for the largest group */
        return;
    {
        int nqc = nq - q0 < CAS_Q ? nq - q0 : CAS_Q;
        for (int i = threadIdx.x; i < nqc * hd; i += blockDim.x) {
            int j = i / hd, e = i % hd, qi = q0 + j;
            int r = pg.rows[r0 + qi / rep], h = kh * rep + qi % rep;
            qs[j * MGK_MAX_HEAD_DIM + e] = q[(long)r * H * hd + (long)h * hd + e];
        }
        float m[CAS_PER_WARP], l[CAS_PER_WARP], acc[CAS_PER_WARP][DEC_CHUNKS];
        for (int a = 0; a < CAS_PER_WARP; a++) {
            m[a] = -INFINITY;
            l[a] = 0.0f;
            for (int c = 0; c < DEC_CHUNKS; c++)
                acc[a][c] = 0.0f;
        }
        for (int tt = t0; tt < t1; tt += CAS_TILE) {
            int nt = t1 - tt < CAS_TILE ? t1 - tt : CAS_TILE;
            __syncthreads(); /* the previous tile is consumed (and qs is written) */
            for (int i = threadIdx.x; i < nt * hd; i += blockDim.x) {
                int j = i / hd, e = i % hd;
                ks[j * (MGK_MAX_HEAD_DIM + 1) + e] = K[(long)(tt + j) * kvd + e];
                vs[j * MGK_MAX_HEAD_DIM + e] = V[(long)(tt + j) * kvd + e];
            }
            __syncthreads();
            for (int a = 0; a < CAS_PER_WARP; a++) {
                int j = warp + DEC_WARPS * a; /* warp-uniform */
                if (j >= nqc)
                    continue;
                float sc = -INFINITY;
                if (lane < nt) {
                    float d = 0.0f;
                    for (int e = 0; e < hd; e++)
                        d += qs[j * MGK_MAX_HEAD_DIM + e] * ks[lane * (MGK_MAX_HEAD_DIM + 1) + e];
                    sc = d * scale;
                }
                float mn = fmaxf(m[a], mgk_warp_max(sc)), alpha = expf(m[a] - mn);
                float p = lane < nt ? expf(sc - mn) : 0.0f;
                l[a] = l[a] * alpha + mgk_warp_sum(p);
                for (int c = 0; c < DEC_CHUNKS; c++)
                    acc[a][c] *= alpha;
                for (int t = 0; t < nt; t++) {
                    float pt = __shfl_sync(MGK_FULL_MASK, p, t);
                    for (int c = 0; c < DEC_CHUNKS; c++) {
                        int i = lane + 32 * c;
                        if (i < hd)
                            acc[a][c] += pt * vs[t * MGK_MAX_HEAD_DIM + i];
                    }
                }
                m[a] = mn;
            }
        }
        /* one partial per (row, head) of this pass, empty (l = 0) where the split has no key */
        for (int a = 0; a < CAS_PER_WARP; a++) {
            int j = warp + DEC_WARPS * a;
            if (j >= nqc)
                continue;
            int qi = q0 + j, r = pg.rows[r0 + qi / rep], h = kh * rep + qi % rep;
            float *dst = work + (((long)r * H + h) * n_total + s) * (hd + 2);
            for (int c = 0; c < DEC_CHUNKS; c++) {
                int i = lane + 32 * c;
                if (i < hd)
                    dst[i] = acc[a][c];
            }
            if (lane == 0) {
                dst[hd] = m[a];
                dst[hd + 1] = l[a];
            }
        }
    }
}

static void shared_splits(int max_len, int max_prefix_len, int n_groups, int n_split, int *n_pref, int *n_suf)
{
    *n_suf = n_split > 0 ? n_split : pick_split(max_len);
    *n_pref = n_groups > 0 && max_prefix_len > 0 ? (n_split > 0 ? n_split : pick_split(max_prefix_len)) : 0;
}

extern "C" long mgk_attention_decode_shared_work(int rows, int H, int hd, int max_len, int max_prefix_len,
                                                 int n_groups, int n_split)
{
    int n_pref, n_suf;
    shared_splits(max_len, max_prefix_len, n_groups, n_split, &n_pref, &n_suf);
    return (long)rows * H * (n_pref + n_suf) * (hd + 2);
}

extern "C" int mgk_attention_decode_shared(float *out, const float *q, const float *kc, const float *vc,
                                           const int *slot, const int *pos, int rows, int S, int H, int KV, int hd,
                                           int max_len, const mgk_prefix_groups *groups, int n_split, float *work)
{
    if (rows < 0 || H < 1 || KV < 1 || H % KV || hd < 1 || hd > MGK_MAX_HEAD_DIM || max_len < 1 || max_len > S ||
        rows > 65535 || H > 65535 || !groups || groups->n_groups < 0 || groups->n_groups > 65535 ||
        groups->max_prefix_len < 0 || groups->max_prefix_len >= max_len)
        return MGK_ERR_ARG;
    if (rows == 0)
        return MGK_OK;
    mgk_prefix_groups pg = *groups;
    int n_pref, n_suf;
    shared_splits(max_len, pg.max_prefix_len, pg.n_groups, n_split, &n_pref, &n_suf);
    int n_total = n_pref + n_suf;
    if (n_pref > 0) {
        int chunk = (pg.max_prefix_len + n_pref - 1) / n_pref;
        long grp_rows = pg.max_group_rows > 0 && pg.max_group_rows < rows ? pg.max_group_rows : rows;
        long q_chunks = (grp_rows * (H / KV) + CAS_Q - 1) / CAS_Q;
        if (q_chunks * KV > 65535)
            return MGK_ERR_ARG;
        MGK_LAUNCH(attention_decode_prefix, dim3(n_pref, (unsigned)(KV * q_chunks), pg.n_groups), dim3(32 * DEC_WARPS),
                   0, work, q, kc, vc, pg, S, H, KV, hd, chunk, n_total);
    }
    int chunk = (max_len + n_suf - 1) / n_suf;
    const int *of_row = pg.n_groups > 0 ? pg.group_of_row : nullptr;
    MGK_LAUNCH(attention_decode_split, dim3(n_suf, H, rows), dim3(32 * DEC_WARPS), 0, work, q, kc, vc, slot, pos,
               of_row, pg.prefix_len, S, H, KV, hd, chunk, n_pref, n_total);
    MGK_LAUNCH(attention_decode_combine, dim3(H, rows), dim3(MGK_MAX_HEAD_DIM), 0, out, work,
               n_pref > 0 ? of_row : nullptr, n_pref, H, hd, n_total);
    return mgk_status();
}

#ifdef MGK_MAIN
#include "driver.h"
#include "model/layers.h"

/* Variant 2 against mg_attention over each row's un-shared keys (its group's prefix, then its own
 * positions, copied into one contiguous buffer).  mode: 0 random groups (some rows without one,
 * empty groups, random prefix lengths), 1 one group of every row whose prefix slot is its first row's
 * own slot and whose prefix covers everything but the shortest row's last token, 2 groups of one row
 * covering everything but its last token, 3 prefixes of length 0, 4 no group at all (mode 0: row 1 has no group). */
static int check_shared(drv::Rng &rng, int rows, int H, int KV, int hd, int S, int ns, int mode, bool bench)
{
    if (H % KV)
        H = KV * (1 + H / KV);
    int G = mode == 1 ? 1 : mode == 2 ? rows : mode == 4 ? 0 : 1 + rows / 2;
    int kvd = KV * hd, slots = rows + G + 1;
    std::vector<int> slot(rows), pos(rows), of_row(rows, -1), pslot(G), plen(G, 0), start(G + 1, 0), members;
    int max_len = 1;
    for (int r = 0; r < rows; r++) /* distinct slots in a random order */
        slot[r] = r;
    for (int r = rows - 1; r > 0; r--)
        std::swap(slot[r], slot[rng.below(r + 1)]);
    for (int r = 0; r < rows; r++) {
        pos[r] = r == 0 ? S - 1 : S / 2 + rng.below(S - S / 2); /* long enough for several prefix tiles */
        max_len = std::max(max_len, pos[r] + 1);
        of_row[r] = mode == 1 ? 0 : mode == 2 ? r : mode == 4 ? -1 : rng.below(4) == 0 || r == 1 ? -1 : rng.below(G);
    }
    for (int g = 0; g < G; g++) {
        start[g] = (int)members.size();
        int lo = S;
        for (int r = 0; r < rows; r++)
            if (of_row[r] == g) {
                members.push_back(r);
                lo = std::min(lo, pos[r]);
            }
        pslot[g] = mode == 1 ? slot[members[0]] : rows + g;
        plen[g] = mode == 3 || lo == S ? 0 : mode == 0 ? rng.below(lo + 1) : lo;
    }
    start[G] = (int)members.size();
    int max_prefix = 0;
    for (int g = 0; g < G; g++)
        max_prefix = std::max(max_prefix, plen[g]);
    /* what a row may read is random, everything else NaN */
    std::vector<float> kc((size_t)slots * S * kvd, NAN), vc(kc.size(), NAN);
    auto fill = [&](int sl, int t0, int t1) {
        for (long i = (long)t0 * kvd; i < (long)t1 * kvd; i++) {
            kc[(size_t)sl * S * kvd + i] = rng.uniform(-2, 2);
            vc[(size_t)sl * S * kvd + i] = rng.uniform(-1, 1);
        }
    };
    for (int g = 0; g < G; g++)
        fill(pslot[g], 0, plen[g]);
    for (int r = 0; r < rows; r++) {
        int p0 = of_row[r] >= 0 ? plen[of_row[r]] : 0;
        fill(slot[r], p0, pos[r] + 1); /* (mode 1: the first row's slot is the prefix's, so it holds all of them) */
    }
    auto q = drv::randv(rng, (size_t)rows * H * hd, -2, 2);
    std::vector<float> ref(q.size()), scores(S), rk((size_t)S * kvd), rv(rk.size());
    for (int r = 0; r < rows; r++) {
        int p0 = of_row[r] >= 0 ? plen[of_row[r]] : 0;
        for (int t = 0; t <= pos[r]; t++) {
            int sl = t < p0 ? pslot[of_row[r]] : slot[r];
            for (int i = 0; i < kvd; i++) {
                rk[(size_t)t * kvd + i] = kc[((size_t)sl * S + t) * kvd + i];
                rv[(size_t)t * kvd + i] = vc[((size_t)sl * S + t) * kvd + i];
            }
        }
        mg_attention(&ref[(size_t)r * H * hd], &q[(size_t)r * H * hd], rk.data(), rv.data(), pos[r] + 1, H, KV, hd,
                     scores.data());
    }
    long nw = mgk_attention_decode_shared_work(rows, H, hd, max_len, max_prefix, G, ns);
    float *dq = drv::to_dev(q), *dk = drv::to_dev(kc), *dv = drv::to_dev(vc), *dout = drv::dev_alloc<float>(q.size());
    float *dwork = drv::dev_alloc<float>((size_t)nw);
    int *dslot = drv::to_dev(slot), *dpos = drv::to_dev(pos), *dof = drv::to_dev(of_row), *dstart = drv::to_dev(start);
    int *dmem = drv::to_dev(members), *dps = drv::to_dev(pslot), *dpl = drv::to_dev(plen);
    int max_group = 0;
    for (int g = 0; g < G; g++)
        max_group = start[g + 1] - start[g] > max_group ? start[g + 1] - start[g] : max_group;
    mgk_prefix_groups pg = {dof, dstart, dmem, dps, dpl, G, max_prefix, (mode + G) % 3 == 0 ? 0 : max_group};
    char what[160];
    std::snprintf(what, sizeof what, "attention_decode2 (shared prefix, mode %d) rows=%d H=%d KV=%d hd=%d groups=%d "
                  "max_prefix=%d max_len=%d n_split=%d", mode, rows, H, KV, hd, G, max_prefix, max_len, ns);
    int fails = 0;
    if (mgk_attention_decode_shared(dout, dq, dk, dv, dslot, dpos, rows, S, H, KV, hd, max_len, &pg, ns, dwork) !=
        MGK_OK) {
        std::printf("launch failed: %s\n", what);
        fails++;
    } else {
        auto got = drv::to_host(dout, q.size());
        if (!drv::close(what, got.data(), ref.data(), got.size(), 2e-6f, 2e-5f))
            fails++;
        else if (bench) {
            drv::report_time(what, drv::time_us([&] {
                                 mgk_attention_decode_shared(dout, dq, dk, dv, dslot, dpos, rows, S, H, KV, hd, max_len,
                                                             &pg, ns, dwork);
                             }));
        }
    }
    for (void *p : {(void *)dq, (void *)dk, (void *)dv, (void *)dout, (void *)dwork, (void *)dslot, (void *)dpos,
                    (void *)dof, (void *)dstart, (void *)dmem, (void *)dps, (void *)dpl})
        cudaFree(p);
    return fails;
}

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
    /* variant 2: rows, H, KV, hd, S, n_split, mode (check_shared) */
    std::vector<std::vector<int>> shared = {
        {5, 4, 2, 24, 70, 0, 0}, {6, 8, 2, 40, 80, 3, 1}, {3, 2, 1, 16, 45, 2, 2}, {4, 4, 4, 8, 40, 0, 3},
        {3, 3, 1, 33, 30, 0, 4}, {1, 1, 1, 1, 1, 1, 1},   {7, 4, 1, 8 * (1 + rng.below(8)), 2 + rng.below(90),
                                                             rng.below(5), rng.below(5)}};
    for (auto &sh : shared)
        fails += check_shared(rng, sh[0], sh[1], sh[2], sh[3], sh[4], sh[5], sh[6], false);
    if (drv::bench_arg(argc, argv))
        for (int mode : {1, 4}) /* 64 rows sharing a prefix of 520+ tokens, and the same rows without sharing */
            fails += check_shared(rng, 64, 16, 4, 128, 1040, 0, mode, true);
    /* shapes the launcher refuses */
    if (mgk_attention_decode(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1, 10, 3, 2, 8, 5, 1, nullptr) !=
            MGK_ERR_ARG ||
        mgk_attention_decode(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1, 10, 2, 2, 129, 5, 1, nullptr) !=
            MGK_ERR_ARG) {
        std::printf("MISMATCH: a bad shape was accepted\n");
        fails++;
    }
    mgk_prefix_groups bad = {nullptr, nullptr, nullptr, nullptr, nullptr, 1, 5, 0}; /* a prefix as long as max_len */
    if (mgk_attention_decode_shared(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1, 10, 2, 2, 8, 5, &bad, 1,
                                    nullptr) != MGK_ERR_ARG ||
        mgk_attention_decode_shared(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 1, 10, 2, 2, 8, 5, nullptr, 1,
                                    nullptr) != MGK_ERR_ARG) {
        std::printf("MISMATCH: a bad prefix grouping was accepted\n");
        fails++;
    }
    return drv::finish(fails);
}
#endif

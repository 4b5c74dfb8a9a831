/*
 * prefix_cache.c - the cross-batch prefix cache of KV blocks (prefix_cache.h).
 */
#include "prefix_cache.h"

#include <stdlib.h>
#include <string.h>

static uint64_t block_hash(uint64_t h, const int32_t *t)
{
    for (int i = 0; i < MG_PC_BLOCK; i++) {
        h ^= (uint64_t)(uint32_t)t[i] + 0x9E3779B97F4A7C15ull;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h;
}

int mg_pc_init(mg_prefix_cache *pc, int tokens, int layers, int kvd)
{
    memset(pc, 0, sizeof *pc);
    int nb = tokens / MG_PC_BLOCK;
    if (nb <= 0)
        return 0;
    int buckets = 1;
    while (buckets < 2 * nb)
        buckets *= 2;
    size_t n = (size_t)nb, kv = n * (size_t)layers * MG_PC_BLOCK * (size_t)kvd;
    pc->n_blocks = nb;
    pc->mask = buckets - 1;
    pc->layers = layers;
    pc->kvd = kvd;
    pc->tok = malloc(n * MG_PC_BLOCK * sizeof *pc->tok);
    pc->key = malloc(n * sizeof *pc->key);
    pc->parent = malloc(n * sizeof *pc->parent);
    pc->pgen = malloc(n * sizeof *pc->pgen);
    pc->gen = calloc(n, sizeof *pc->gen);
    pc->next = malloc(n * sizeof *pc->next);
    pc->head = malloc((size_t)buckets * sizeof *pc->head);
    pc->used = calloc(n, sizeof *pc->used);
    pc->k = malloc(kv * sizeof *pc->k);
    pc->v = malloc(kv * sizeof *pc->v);
    if (!pc->tok || !pc->key || !pc->parent || !pc->pgen || !pc->gen || !pc->next || !pc->head || !pc->used ||
        !pc->k || !pc->v) {
        mg_pc_free(pc);
        return -1;
    }
    for (int i = 0; i < buckets; i++)
        pc->head[i] = -1;
    return 0;
}

void mg_pc_free(mg_prefix_cache *pc)
{
    void *bufs[] = {pc->tok, pc->key, pc->parent, pc->pgen, pc->gen, pc->next, pc->head, pc->used, pc->k, pc->v};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    memset(pc, 0, sizeof *pc);
}

/* The cached block holding tokens t after block `prev` (-1: the first block) with prefix hash h, or -1. */
static int find(const mg_prefix_cache *pc, uint64_t h, int prev, const int32_t *t)
{
    for (int c = pc->head[h & (uint64_t)pc->mask]; c >= 0; c = pc->next[c])
        if (pc->key[c] == h && pc->parent[c] == prev && (prev < 0 || pc->pgen[c] == pc->gen[prev]) &&
            memcmp(pc->tok + (size_t)c * MG_PC_BLOCK, t, MG_PC_BLOCK * sizeof *t) == 0)
            return c;
    return -1;
}

/* Copy block c of the pool to block blk of a slot (dk, dv), or, with dk NULL, block blk of a slot
 * (sk, sv) to block c of the pool. */
static void copy_block(const mg_prefix_cache *pc, int c, int blk, float *dk, float *dv, const float *sk,
                       const float *sv, size_t stride)
{
    size_t n = (size_t)MG_PC_BLOCK * (size_t)pc->kvd;
    for (int l = 0; l < pc->layers; l++) {
        float *pk = pc->k + ((size_t)c * (size_t)pc->layers + (size_t)l) * n;
        float *pv = pc->v + ((size_t)c * (size_t)pc->layers + (size_t)l) * n;
        size_t at = (size_t)l * stride + (size_t)blk * n;
        if (dk) {
            memcpy(dk + at, pk, n * sizeof(float));
            memcpy(dv + at, pv, n * sizeof(float));
        } else {
            memcpy(pk, sk + at, n * sizeof(float));
            memcpy(pv, sv + at, n * sizeof(float));
        }
    }
}

int mg_pc_lookup(mg_prefix_cache *pc, const int32_t *p, int max_blocks, float *dst_k, float *dst_v,
                 size_t layer_stride)
{
    if (pc->n_blocks == 0)
        return 0;
    uint64_t h = 0x243F6A8885A308D3ull;
    int prev = -1, i = 0;
    for (; i < max_blocks; i++) {
        const int32_t *t = p + (size_t)i * MG_PC_BLOCK;
        h = block_hash(h, t);
        int c = find(pc, h, prev, t);
        if (c < 0)
            break;
        if (dst_k) {
            copy_block(pc, c, i, dst_k, dst_v, NULL, NULL, layer_stride);
            pc->used[c] = ++pc->clock;
        }
        prev = c;
    }
    return i;
}

/* Take block c out of its hash chain and make it a new incarnation. */
static void unlink_block(mg_prefix_cache *pc, int c)
{
    int *at = &pc->head[pc->key[c] & (uint64_t)pc->mask];
    while (*at != c)
        at = &pc->next[*at];
    *at = pc->next[c];
    pc->gen[c]++;
}

void mg_pc_insert(mg_prefix_cache *pc, const int32_t *p, int n_blocks, const float *src_k, const float *src_v,
                  size_t layer_stride)
{
    if (pc->n_blocks == 0)
        return;
    uint64_t h = 0x243F6A8885A308D3ull, start = pc->clock;
    int prev = -1;
    for (int i = 0; i < n_blocks; i++) {
        const int32_t *t = p + (size_t)i * MG_PC_BLOCK;
        h = block_hash(h, t);
        int c = find(pc, h, prev, t);
        if (c < 0) { /* a free block, else the least recently used one not of this chain */
            for (int b = 0; b < pc->n_blocks; b++)
                if (pc->used[b] <= start && (c < 0 || pc->used[b] < pc->used[c]))
                    c = b;
            if (c < 0)
                return; /* the budget is smaller than this prompt's chain */
            if (pc->used[c])
                unlink_block(pc, c);
            memcpy(pc->tok + (size_t)c * MG_PC_BLOCK, t, MG_PC_BLOCK * sizeof *t);
            pc->key[c] = h;
            pc->parent[c] = prev;
            pc->pgen[c] = prev >= 0 ? pc->gen[prev] : 0;
            int *hd = &pc->head[h & (uint64_t)pc->mask];
            pc->next[c] = *hd;
            *hd = c;
            copy_block(pc, c, i, NULL, NULL, src_k, src_v, layer_stride);
        }
        pc->used[c] = ++pc->clock;
        prev = c;
    }
}

/*
 * prefix_cache.h - the engine's cross-batch prefix cache (private to csrc/model): keys and values of
 * prompt prefixes kept between requests, in blocks of MG_PC_BLOCK tokens, as vLLM's automatic prefix
 * caching does.  A block is found by the hash of the whole prefix through it and verified exactly: its
 * tokens, and its parent block (the block of the 16 tokens before, in the same incarnation: a generation
 * counter per block), so a hit is the same token prefix, never a hash collision.  A bounded pool
 * allocated when the budget is set; least recently used blocks are reused; nothing is allocated while
 * generating.
 */
#ifndef MG_MODEL_PREFIX_CACHE_H
#define MG_MODEL_PREFIX_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define MG_PC_BLOCK 16

typedef struct mg_prefix_cache {
    int n_blocks, mask;   /* mask: hash buckets - 1 */
    int layers, kvd;
    int32_t *tok;         /* [n_blocks][MG_PC_BLOCK] */
    uint64_t *key;        /* [n_blocks] hash of the prefix through the block */
    int32_t *parent;      /* [n_blocks] parent block or -1 */
    uint32_t *pgen;       /* [n_blocks] the parent's generation when this block was stored */
    uint32_t *gen;        /* [n_blocks] incarnation, bumped when the block is reused */
    int32_t *next, *head; /* hash chains: [n_blocks], [mask + 1] (-1 ends) */
    uint64_t *used;       /* [n_blocks] last use (0: free) */
    uint64_t clock;
    float *k, *v;         /* [n_blocks][layers][MG_PC_BLOCK][kvd] */
} mg_prefix_cache;

/* Allocate a cache of `tokens` tokens (rounded down to whole blocks; 0: none).  0, or -1 out of memory. */
int mg_pc_init(mg_prefix_cache *pc, int tokens, int layers, int kvd);
void mg_pc_free(mg_prefix_cache *pc);

/* The cached blocks of prompt p: how many leading whole blocks (at most max_blocks) are cached.  With
 * dst_k/dst_v (a slot of the engine's cache: [layers] of stride layer_stride floats, positions of kvd
 * floats) their keys and values are copied there and the blocks marked used. */
int mg_pc_lookup(mg_prefix_cache *pc, const int32_t *p, int max_blocks, float *dst_k, float *dst_v,
                 size_t layer_stride);

/* Store the first n_blocks whole blocks of prompt p, whose keys and values are in the slot src_k/src_v
 * (as above): blocks already cached are marked used, others take free or least recently used blocks
 * (never one of this prompt's own chain). */
void mg_pc_insert(mg_prefix_cache *pc, const int32_t *p, int n_blocks, const float *src_k, const float *src_v,
                  size_t layer_stride);

#endif

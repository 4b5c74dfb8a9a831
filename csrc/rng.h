/*
 * rng.h - small, fast, seedable random numbers (xoshiro256** seeded by splitmix64).
 * The generator state is owned by the caller: no global state.
 */
#ifndef MG_RNG_H
#define MG_RNG_H
#include <stdint.h>

typedef struct mg_rng {
    uint64_t s[4];
} mg_rng;

static inline uint64_t mg_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void mg_rng_seed(mg_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = mg_splitmix64(&seed);
}

static inline uint64_t mg_rng_next(mg_rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5;
    uint64_t result = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias < n / 2^64). */
static inline uint32_t mg_rng_below(mg_rng *r, uint32_t n)
{
    return (uint32_t)(((mg_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform double in [0, 1). */
static inline double mg_rng_double(mg_rng *r)
{
    return (double)(mg_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif

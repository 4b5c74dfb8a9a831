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

/* splitmix64: the counter's increment (the golden gamma) and the three steps of its finaliser
 * (Stafford's Mix13), as constant expressions for tables computed at compile time (each step
 * evaluates its argument twice).  Everything else uses the functions below. */
#define MG_SPLITMIX64_GAMMA 0x9e3779b97f4a7c15ULL
#define MG_MIX64_S1(z) (((z) ^ ((z) >> 30)) * 0xbf58476d1ce4e5b9ULL)
#define MG_MIX64_S2(z) (((z) ^ ((z) >> 27)) * 0x94d049bb133111ebULL)
#define MG_MIX64_S3(z) ((z) ^ ((z) >> 31))
/* mg_mix64(x) as a constant expression. */
#define MG_MIX64_CONST(x) MG_MIX64_S3(MG_MIX64_S2(MG_MIX64_S1((uint64_t)(x) + MG_SPLITMIX64_GAMMA)))

/* splitmix64's output for the counter value x: x plus the golden gamma, through the finaliser.
 * A bijection of 64-bit words, so distinct keys get distinct hashes (the games' position
 * hashes and Zobrist keys use it). */
static inline uint64_t mg_mix64(uint64_t x)
{
    uint64_t z = x + MG_SPLITMIX64_GAMMA;
    z = MG_MIX64_S1(z);
    z = MG_MIX64_S2(z);
    return MG_MIX64_S3(z);
}

/* The next output of the splitmix64 generator with state *x. */
static inline uint64_t mg_splitmix64(uint64_t *x)
{
    uint64_t z = *x;
    *x += MG_SPLITMIX64_GAMMA;
    return mg_mix64(z);
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

/*
 * bitboard.h - 64-bit boards for the 8x8 chess family: square helpers and attack
 * tables (fancy magic bitboards for the sliders, and the same attacks indexed by PEXT for
 * the code that runs on BMI2 CPUs: see mg_bb_rook_px).
 *
 * Squares are a1 = 0, b1 = 1, ..., h1 = 7, a2 = 8, ..., h8 = 63; bit `sq` of a
 * bitboard is that square.  The tables live in one read-only struct that
 * mg_bb_init() fills once (from mg_games_init()); nothing writes them afterwards.
 */
#ifndef MG_BITBOARD_H
#define MG_BITBOARD_H
#include <stdint.h>

#if defined(__GNUC__)
#define MG_BB_INLINE static inline __attribute__((always_inline))
#else
#define MG_BB_INLINE static inline
#endif

#define MG_BB_FILE_A 0x0101010101010101ULL
#define MG_BB_FILE_H (MG_BB_FILE_A << 7)
#define MG_BB_RANK_1 0xFFULL
#define MG_BB_RANK_8 (MG_BB_RANK_1 << 56)

/* One slider square: attacks = table[offset + ((occ & mask) * magic >> shift)]. */
typedef struct mg_bb_magic {
    uint64_t mask;
    uint64_t magic;
    uint32_t offset;
    uint32_t shift;
} mg_bb_magic;

#define MG_BB_SLIDER_ENTRIES 107648 /* 102400 rook + 5248 bishop */

typedef struct mg_bb_tables {
    uint64_t knight[64];
    uint64_t king[64];
    uint64_t pawn[2][64];         /* squares a pawn of that colour on sq attacks */
    uint64_t between[64][64];     /* squares strictly between two aligned squares, else 0 */
    uint64_t line[64][64];        /* the whole line through two aligned squares, else 0 */
    uint64_t rook_empty[64];      /* rook attacks on an empty board */
    uint64_t bishop_empty[64];
    mg_bb_magic rook[64];
    mg_bb_magic bishop[64];
    uint64_t slider[MG_BB_SLIDER_ENTRIES];
    /* The same attacks at offset + pext(occ, mask) (same offsets: a square's block has
     * 2^popcount(mask) entries either way). */
    uint64_t slider_pext[MG_BB_SLIDER_ENTRIES];
} mg_bb_tables;

/* Read-only after mg_bb_init(). */
extern mg_bb_tables mg_bb;

/* Fill mg_bb (idempotent; called once at start-up). */
void mg_bb_init(void);

MG_BB_INLINE uint64_t mg_bb_sq(int sq) { return 1ULL << sq; }
MG_BB_INLINE int mg_bb_lsb(uint64_t b) { return __builtin_ctzll(b); }
MG_BB_INLINE int mg_bb_msb(uint64_t b) { return 63 - __builtin_clzll(b); }
MG_BB_INLINE int mg_bb_count(uint64_t b) { return __builtin_popcountll(b); }
MG_BB_INLINE int mg_bb_pop(uint64_t *b)
{
    int s = __builtin_ctzll(*b);
    *b &= *b - 1;
    return s;
}
MG_BB_INLINE int mg_bb_many(uint64_t b) { return (b & (b - 1)) != 0; }

MG_BB_INLINE uint64_t mg_bb_rook(int sq, uint64_t occ)
{
    const mg_bb_magic *m = &mg_bb.rook[sq];
    return mg_bb.slider[m->offset + (uint32_t)(((occ & m->mask) * m->magic) >> m->shift)];
}

MG_BB_INLINE uint64_t mg_bb_bishop(int sq, uint64_t occ)
{
    const mg_bb_magic *m = &mg_bb.bishop[sq];
    return mg_bb.slider[m->offset + (uint32_t)(((occ & m->mask) * m->magic) >> m->shift)];
}

/* PEXT (BMI2) where the compiler targets x86-64 with GNU inline assembly: an instruction of the x86-64-v3 level,
 * so only code compiled for it (or run after a run-time check) may reach it; callers pass px = 1 only there, and
 * with px = 0 (a compile-time constant) mg_bb_rook_px / mg_bb_bishop_px are the magic lookups and no PEXT is
 * emitted.  Written as inline assembly so that it can sit in inline functions that baseline code also inlines
 * (a target-specific builtin could not). */
#if defined(__x86_64__) && defined(__GNUC__)
#define MG_BB_HAVE_PEXT 1
MG_BB_INLINE uint64_t mg_bb_pext(uint64_t x, uint64_t mask)
{
    uint64_t r;
    __asm__("pextq %2, %1, %0" : "=r"(r) : "r"(x), "rm"(mask));
    return r;
}
#else
#define MG_BB_HAVE_PEXT 0
MG_BB_INLINE uint64_t mg_bb_pext(uint64_t x, uint64_t mask)
{
    uint64_t r = 0;
    for (uint64_t bit = 1; mask; mask &= mask - 1, bit <<= 1)
        if (x & mask & (0 - mask))
            r |= bit;
    return r;
}
#endif

/* Slider attacks by the magic tables (px = 0) or by PEXT (px = 1: BMI2 code only, see above). */
MG_BB_INLINE uint64_t mg_bb_rook_px(int sq, uint64_t occ, const int px)
{
    if (!px)
        return mg_bb_rook(sq, occ);
    const mg_bb_magic *m = &mg_bb.rook[sq];
    return mg_bb.slider_pext[m->offset + (uint32_t)mg_bb_pext(occ, m->mask)];
}

MG_BB_INLINE uint64_t mg_bb_bishop_px(int sq, uint64_t occ, const int px)
{
    if (!px)
        return mg_bb_bishop(sq, occ);
    const mg_bb_magic *m = &mg_bb.bishop[sq];
    return mg_bb.slider_pext[m->offset + (uint32_t)mg_bb_pext(occ, m->mask)];
}

/* Shift a bitboard one rank towards the opponent of `color` (0 white: north). */
MG_BB_INLINE uint64_t mg_bb_forward(uint64_t b, int color) { return color ? b >> 8 : b << 8; }

#endif

/*
 * c4_book.h - opening book of the Connect Four solver: exact scores (c4_solver.h's
 * convention) of every non-terminal position with `min_ply`..`max_ply` stones, a position
 * and its mirror image sharing one entry.
 *
 * File format (little-endian; docs/format.md):
 *   bytes 0..7    magic "MGC4BOOK"
 *   bytes 8..11   uint32 version (1)
 *   bytes 12..13  uint16 min_ply, bytes 14..15 uint16 max_ply (min_ply <= max_ply <= 42)
 *   bytes 16..23  uint64 count of entries
 *   then `count` uint64 entries, strictly increasing: key << 8 | (score + 64), where key is
 *   the solver's position key (stones of the side to move + all stones, < 2^49) of
 *   the canonical image (the smaller key of the position and its mirror image) and score
 *   lies in [MG_C4_MIN_SCORE, MG_C4_MAX_SCORE].
 * Nothing else: the file is exactly 24 + 8 * count bytes.  The reader checks every entry against
 * what the header claims: a reachable position (per column at most 6 stones, floor(n / 2) of its n
 * stones the side to move's, neither side with four in a row: non-terminal) of min_ply..max_ply
 * stones, with a score such a position can have (-(42 - n) / 2 .. (43 - n) / 2).
 *
 * The book reads in place: mg_c4_book_open checks a caller-owned buffer (which must stay
 * alive and unchanged while the book is used) and never allocates; lookups are binary
 * searches.  Every defect names the offending value.
 */
#ifndef MG_C4_BOOK_H
#define MG_C4_BOOK_H
#include "connect_four.h"

#define MG_C4_BOOK_MAGIC "MGC4BOOK"
#define MG_C4_BOOK_VERSION 1
#define MG_C4_BOOK_HEADER 24

typedef struct mg_c4_book {
    const unsigned char *entries; /* count * 8 bytes, little-endian uint64 */
    uint64_t count;
    int min_ply, max_ply;
} mg_c4_book;

/* The key of the mirrored position (columns reversed; the per-column sums do not carry). */
static inline uint64_t mg_c4_mirror_key(uint64_t k)
{
    const uint64_t c = 0x7f;
    return ((k & c) << 42) | ((k & (c << 7)) << 28) | ((k & (c << 14)) << 14) | (k & (c << 21)) |
           ((k >> 14) & (c << 14)) | ((k >> 28) & (c << 7)) | (k >> 42);
}

/* Check `len` bytes at `data` and describe them in `b`.  MG_OK, or MG_ERR naming the defect. */
int mg_c4_book_open(mg_c4_book *b, const void *data, size_t len, char *err, size_t errlen);
/* The canonical key of a position (what the book stores). */
uint64_t mg_c4_book_key(const mg_c4_state *s);
/* The key for (stones of the side to move, mask) bitboards, and its canonical form. */
uint64_t mg_c4_book_canonical(uint64_t cur, uint64_t mask);
/* 1 and *score if the book holds `key` (canonical), else 0. */
int mg_c4_book_lookup(const mg_c4_book *b, uint64_t key, int *score);
/* Score of `s` from the book: 1 if found (stones within the book's plies and present). */
int mg_c4_book_probe(const mg_c4_book *b, const mg_c4_state *s, int *score);

#endif

/* c4_book.c - the Connect Four solver's opening book (see c4_book.h). */
#include "c4_book.h"
#include "c4_solver.h" /* the score range */

#include <stdio.h>
#include <string.h>

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int rd16(const unsigned char *p) { return (int)p[0] | (int)p[1] << 8; }

#define KEY_LIMIT (1ULL << 49)

static int popcount64(uint64_t x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* The position of a key (cur + mask, 7 bits a column): each column's value v is 2^h - 1 + (its
 * stones of the side to move), h its height, so h is the bit length of v + 1 less one.  0, or -1
 * for a column value no position has (127: a seventh stone). */
static int key_position(uint64_t key, uint64_t *cur, uint64_t *mask)
{
    *cur = *mask = 0;
    for (int c = 0; c < MG_C4_WIDTH; c++) {
        uint64_t v = (key >> (7 * c)) & 0x7f;
        int h = 0;
        while (h < 7 && ((2ULL << h) - 1) <= v) /* 2^(h+1) - 1 <= v: the column is higher */
            h++;
        if (h > MG_C4_HEIGHT)
            return -1;
        uint64_t m = (1ULL << h) - 1;
        *mask |= m << (7 * c);
        *cur |= (v - m) << (7 * c);
    }
    return 0;
}

int mg_c4_book_open(mg_c4_book *b, const void *data, size_t len, char *err, size_t errlen)
{
#define BAD(...)                              \
    do {                                      \
        snprintf(err, errlen, __VA_ARGS__);   \
        return MG_ERR;                        \
    } while (0)
    const unsigned char *d = data;
    memset(b, 0, sizeof *b);
    if (!d || len < MG_C4_BOOK_HEADER)
        BAD("Connect Four book: %zu bytes, shorter than the %d-byte header", len, MG_C4_BOOK_HEADER);
    if (memcmp(d, MG_C4_BOOK_MAGIC, 8) != 0)
        BAD("Connect Four book: bad magic (not a file written by mavgame book build)");
    uint32_t version = rd32(d + 8);
    if (version != MG_C4_BOOK_VERSION)
        BAD("Connect Four book: version %u, this reader knows version %d", version, MG_C4_BOOK_VERSION);
    int lo = rd16(d + 12), hi = rd16(d + 14);
    if (lo > hi || hi > MG_C4_CELLS)
        BAD("Connect Four book: plies %d..%d are not a range within 0..%d", lo, hi, MG_C4_CELLS);
    uint64_t count = rd64(d + 16);
    if (count > (len - MG_C4_BOOK_HEADER) / 8 || len != MG_C4_BOOK_HEADER + 8 * count)
        BAD("Connect Four book: %llu entries need %llu bytes, the file has %zu", (unsigned long long)count,
            (unsigned long long)(MG_C4_BOOK_HEADER + 8 * (count < (1ULL << 60) ? count : 0)), len);
    const unsigned char *e = d + MG_C4_BOOK_HEADER;
    uint64_t prev = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t v = rd64(e + 8 * i);
        uint64_t key = v >> 8;
        int score = (int)(v & 0xff) - 64;
        if (key >= KEY_LIMIT)
            BAD("Connect Four book: entry %llu has key %#llx, not a position key (< 2^49)",
                (unsigned long long)i, (unsigned long long)key);
        if (score < MG_C4_MIN_SCORE || score > MG_C4_MAX_SCORE)
            BAD("Connect Four book: entry %llu has score %d, outside [%d, %d]", (unsigned long long)i, score,
                MG_C4_MIN_SCORE, MG_C4_MAX_SCORE);
        if (mg_c4_mirror_key(key) < key)
            BAD("Connect Four book: entry %llu has key %#llx, not the smaller of its mirror pair",
                (unsigned long long)i, (unsigned long long)key);
        if (i > 0 && v <= prev)
            BAD("Connect Four book: entry %llu is not after entry %llu (entries must be sorted and distinct)",
                (unsigned long long)i, (unsigned long long)(i - 1));
        if (i > 0 && key == prev >> 8)
            BAD("Connect Four book: key %#llx appears twice (entries %llu and %llu)", (unsigned long long)key,
                (unsigned long long)(i - 1), (unsigned long long)i);
        /* what the header claims of each entry: a reachable non-terminal position of min_ply..max_ply
         * stones, with a score such a position can have */
        uint64_t cur, mask;
        if (key_position(key, &cur, &mask) < 0)
            BAD("Connect Four book: entry %llu has key %#llx, not a position (a column of 7 stones)",
                (unsigned long long)i, (unsigned long long)key);
        int n = popcount64(mask), own = popcount64(cur);
        if (own != n / 2)
            BAD("Connect Four book: entry %llu has key %#llx, not a position: %d of its %d stones belong to the "
                "side to move, %d expected", (unsigned long long)i, (unsigned long long)key, own, n, n / 2);
        if (mg_c4_has_four(cur))
            BAD("Connect Four book: entry %llu has key %#llx, not a position: the side to move has four in a row",
                (unsigned long long)i, (unsigned long long)key);
        if (mg_c4_has_four(cur ^ mask))
            BAD("Connect Four book: entry %llu has key %#llx, a terminal position (four in a row): a book holds "
                "non-terminal positions only", (unsigned long long)i, (unsigned long long)key);
        if (n < lo || n > hi)
            BAD("Connect Four book: entry %llu (key %#llx) has %d stones, outside the header's plies %d..%d",
                (unsigned long long)i, (unsigned long long)key, n, lo, hi);
        /* the fastest win of the side to move (its next stone) and of the opponent (the one after) */
        int smax = (43 - n) / 2, smin = -((42 - n) / 2);
        if (score < smin || score > smax)
            BAD("Connect Four book: entry %llu (key %#llx) has score %d, outside [%d, %d] (the scores a position "
                "of %d stones can have)", (unsigned long long)i, (unsigned long long)key, score, smin, smax, n);
        prev = v;
    }
    b->entries = e;
    b->count = count;
    b->min_ply = lo;
    b->max_ply = hi;
    return MG_OK;
#undef BAD
}

uint64_t mg_c4_book_canonical(uint64_t cur, uint64_t mask)
{
    uint64_t k = cur + mask, m = mg_c4_mirror_key(k);
    return m < k ? m : k;
}

uint64_t mg_c4_book_key(const mg_c4_state *s) { return mg_c4_book_canonical(s->cur, s->mask); }

int mg_c4_book_lookup(const mg_c4_book *b, uint64_t key, int *score)
{
    uint64_t lo = 0, hi = b->count;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        uint64_t k = rd64(b->entries + 8 * mid) >> 8;
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < b->count) {
        uint64_t v = rd64(b->entries + 8 * lo);
        if (v >> 8 == key) {
            *score = (int)(v & 0xff) - 64;
            return 1;
        }
    }
    return 0;
}

int mg_c4_book_probe(const mg_c4_book *b, const mg_c4_state *s, int *score)
{
    if ((int)s->nmoves < b->min_ply || (int)s->nmoves > b->max_ply || s->won)
        return 0;
    return mg_c4_book_lookup(b, mg_c4_book_key(s), score);
}

/* bitboard.c - attack tables for the 8x8 chess family (see bitboard.h). */
#include "bitboard.h"

mg_bb_tables mg_bb;

/* Fancy magic multipliers, found once offline by a brute-force search with a fixed
 * seed (any collision-free multiplier works; mg_bb_init checks each one). */
static const uint64_t ROOK_MAGIC[64] = {
    0x0180006140041080ULL, 0x2180200080c00030ULL, 0x0880081000802000ULL, 0x8880100004080080ULL,
    0x1001008040081020ULL, 0x0100080100040002ULL, 0x4100010004008200ULL, 0x0100084020810012ULL,
    0x0000800080204001ULL, 0x1002004222008b00ULL, 0x4002002080401a00ULL, 0x4099000921011000ULL,
    0x0804800800040080ULL, 0x4244010820100400ULL, 0x1802808001000200ULL, 0x0082000058810204ULL,
    0x0008268000400080ULL, 0x1881010020804001ULL, 0x0000420022008010ULL, 0xc142848008001001ULL,
    0x0000808008000400ULL, 0x0004808004000200ULL, 0x8028040010416208ULL, 0x2075020000440091ULL,
    0x0218400280248004ULL, 0x1000200040401000ULL, 0x0001200480100481ULL, 0x0120401200220008ULL,
    0x0006002200100408ULL, 0x2002000a00144830ULL, 0x0008010400825810ULL, 0x4040008200004104ULL,
    0x0810804008800020ULL, 0x0040004103002080ULL, 0x0090008010802002ULL, 0x1300801000800800ULL,
    0x0050080005001100ULL, 0x0100800200800400ULL, 0xa082480104001002ULL, 0x0140800040800100ULL,
    0x0080400080028020ULL, 0x2200400020008080ULL, 0x9218802200120040ULL, 0x0020100100090023ULL,
    0x0004080004008080ULL, 0x0a01000400090002ULL, 0x8c00020170040008ULL, 0x0020404084020001ULL,
    0x0042002041108200ULL, 0x0000310200804200ULL, 0x8060080010004040ULL, 0x105500200a100100ULL,
    0x4044080080040080ULL, 0x0002009028341200ULL, 0x0020820108100400ULL, 0x0000410088440a00ULL,
    0x0222210034800441ULL, 0x0003804000250019ULL, 0x1040084020010011ULL, 0x8020082004100101ULL,
    0x0045000800421045ULL, 0x0002000804108102ULL, 0x0084051058048204ULL, 0x82610506a0c08402ULL,
};

static const uint64_t BISHOP_MAGIC[64] = {
    0x00421004080041caULL, 0x0412104b02108800ULL, 0x2041040080890022ULL, 0x0004104208000105ULL,
    0x0004042080821008ULL, 0x4441042004808000ULL, 0x8003040a20060040ULL, 0xe804104404044102ULL,
    0x4804a00510020040ULL, 0x011ca08801150020ULL, 0x20410408008d0000ULL, 0x000020a100420200ULL,
    0x0004040420094880ULL, 0x0020009004200000ULL, 0x4024004802082000ULL, 0x0000b90080900800ULL,
    0x54d0002032308903ULL, 0x00219064040c0040ULL, 0x0882014400240100ULL, 0xd00800040c155000ULL,
    0x0002000404a20000ULL, 0x0025000020884000ULL, 0x0809004044226005ULL, 0x0008200201016803ULL,
    0x3048051420045024ULL, 0x0002210428011420ULL, 0x0128120004040010ULL, 0x003c080140202040ULL,
    0x0801001001004000ULL, 0x0202460001030105ULL, 0x04108403010c4202ULL, 0x100606008c944102ULL,
    0x8010081508214c80ULL, 0x0001081340204408ULL, 0x2c02005001411100ULL, 0xc610400a00002200ULL,
    0x0001060200040104ULL, 0x1010009020020200ULL, 0x2004088400108c40ULL, 0x0008010052050042ULL,
    0x011108a010040448ULL, 0x0402021004488280ULL, 0x0922840402006103ULL, 0x0000104010400200ULL,
    0x960022220a004c02ULL, 0x0001101008810840ULL, 0x280811015400020cULL, 0x00068a2042044100ULL,
    0x0202022144400105ULL, 0x000a022501481120ULL, 0x0004010401440800ULL, 0x8200000020881001ULL,
    0x2010507002021440ULL, 0x1010082004042180ULL, 0x0041040104010000ULL, 0x0004014e02020210ULL,
    0x9802002404020800ULL, 0x0004022a01100800ULL, 0x0008010210840400ULL, 0x10080080860a0200ULL,
    0x0510500010420200ULL, 0x1000024088218100ULL, 0x0008040810042080ULL, 0x202c88220800a105ULL,
};

static const int ROOK_DIRS[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
static const int BISHOP_DIRS[4][2] = {{1, 1}, {-1, 1}, {1, -1}, {-1, -1}};

/* Slow reference slider attacks (table construction only). */
static uint64_t slide(int sq, uint64_t occ, const int dirs[4][2])
{
    uint64_t a = 0;
    for (int k = 0; k < 4; k++) {
        int f = sq % 8 + dirs[k][0], r = sq / 8 + dirs[k][1];
        while (f >= 0 && f < 8 && r >= 0 && r < 8) {
            a |= 1ULL << (r * 8 + f);
            if (occ >> (r * 8 + f) & 1)
                break;
            f += dirs[k][0];
            r += dirs[k][1];
        }
    }
    return a;
}

static uint64_t steps(int sq, const int (*d)[2], int n)
{
    uint64_t a = 0;
    for (int k = 0; k < n; k++) {
        int f = sq % 8 + d[k][0], r = sq / 8 + d[k][1];
        if (f >= 0 && f < 8 && r >= 0 && r < 8)
            a |= 1ULL << (r * 8 + f);
    }
    return a;
}

/* Returns 0 if the magic maps two occupancies with different attacks to one entry. */
static int init_magic(mg_bb_magic *m, int sq, uint64_t magic, uint32_t offset, const int dirs[4][2])
{
    uint64_t edges = ((MG_BB_RANK_1 | MG_BB_RANK_8) & ~(MG_BB_RANK_1 << (8 * (sq / 8)))) |
                     ((MG_BB_FILE_A | MG_BB_FILE_H) & ~(MG_BB_FILE_A << (sq % 8)));
    m->mask = slide(sq, 0, dirs) & ~edges;
    m->magic = magic;
    m->shift = (uint32_t)(64 - mg_bb_count(m->mask));
    m->offset = offset;
    uint32_t size = 1u << (64 - m->shift);
    for (uint32_t i = 0; i < size; i++)
        mg_bb.slider[offset + i] = 0;
    uint64_t sub = 0;
    uint32_t index = 0; /* the carry-rippler below visits the subsets in the order of pext(sub, mask) */
    do {
        uint64_t att = slide(sq, sub, dirs);
        uint64_t *e = &mg_bb.slider[offset + (uint32_t)((sub * magic) >> m->shift)];
        if (*e && *e != att)
            return 0;
        *e = att; /* never 0: a slider always attacks some square */
        mg_bb.slider_pext[offset + index++] = att;
        sub = (sub - m->mask) & m->mask;
    } while (sub);
    return 1;
}

void mg_bb_init(void)
{
    static const int KN[8][2] = {{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}};
    static const int KG[8][2] = {{1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}};
    static const int WP[2][2] = {{-1, 1}, {1, 1}};
    static const int BP[2][2] = {{-1, -1}, {1, -1}};
    uint32_t offset = 0;
    for (int sq = 0; sq < 64; sq++) {
        mg_bb.knight[sq] = steps(sq, KN, 8);
        mg_bb.king[sq] = steps(sq, KG, 8);
        mg_bb.pawn[0][sq] = steps(sq, WP, 2);
        mg_bb.pawn[1][sq] = steps(sq, BP, 2);
        mg_bb.rook_empty[sq] = slide(sq, 0, ROOK_DIRS);
        mg_bb.bishop_empty[sq] = slide(sq, 0, BISHOP_DIRS);
    }
    for (int sq = 0; sq < 64; sq++) {
        if (!init_magic(&mg_bb.rook[sq], sq, ROOK_MAGIC[sq], offset, ROOK_DIRS))
            __builtin_trap(); /* a wrong constant in this file: caught by every test */
        offset += 1u << (64 - mg_bb.rook[sq].shift);
    }
    for (int sq = 0; sq < 64; sq++) {
        if (!init_magic(&mg_bb.bishop[sq], sq, BISHOP_MAGIC[sq], offset, BISHOP_DIRS))
            __builtin_trap();
        offset += 1u << (64 - mg_bb.bishop[sq].shift);
    }
    for (int a = 0; a < 64; a++) {
        for (int b = 0; b < 64; b++) {
            mg_bb.between[a][b] = 0;
            mg_bb.line[a][b] = 0;
            if (a == b)
                continue;
            uint64_t bb = 1ULL << b;
            if (mg_bb.rook_empty[a] & bb) {
                mg_bb.line[a][b] = (mg_bb.rook_empty[a] & mg_bb.rook_empty[b]) | (1ULL << a) | bb;
                mg_bb.between[a][b] = slide(a, bb, ROOK_DIRS) & slide(b, 1ULL << a, ROOK_DIRS);
            } else if (mg_bb.bishop_empty[a] & bb) {
                mg_bb.line[a][b] = (mg_bb.bishop_empty[a] & mg_bb.bishop_empty[b]) | (1ULL << a) | bb;
                mg_bb.between[a][b] = slide(a, bb, BISHOP_DIRS) & slide(b, 1ULL << a, BISHOP_DIRS);
            }
        }
    }
}

/*
 * tokenizer.h - the fixed, versioned MAV vocabulary and its encoder/decoder.
 *
 * Vocabulary v1, in id order (mavgame/data/vocab_v1.json is its written form):
 *   control   <pad> <bos> <eos>                 (never produced by encode; decode to "")
 *   value     <ctrl0> .. <ctrl63>               (the 64 value buckets, ids 3..66)
 *   char      the 95 printable ASCII characters, '\n' and '\t'
 *   markup    <mav </mav> %prev_state %prev_fen %prev_action %state %fen %top_ %top_all %best_action
 *   word      game, the game names, invalid, the squares a1..h8
 *   move      every move of every game that is not already a token: UCI moves of chess and
 *             Chess960 (queen-like and knight-like from-to pairs, promotions), Gardner moves,
 *             Connect Four columns, Hex cells and swap, tic-tac-toe cells
 *   byte      <0xNN> for every other byte value (decodes to that byte)
 *
 * Encoding (deterministic, exact round trip for any byte string):
 *   - at '<' or '%': the longest value or markup token that matches, if any;
 *   - a maximal run of [A-Za-z0-9_]: one token if the whole run is a word or move token,
 *     else one char token per character (so board fields stay one token each);
 *   - any other byte: its char token, or its byte token.
 *
 * The tokenizer is a caller-owned, read-only-after-init object (no global state).
 */
#ifndef MG_TOKENIZER_H
#define MG_TOKENIZER_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MG_TOK_VERSION 1
#define MG_TOK_MAX_TOKENS 4096
#define MG_TOK_POOL 40960
#define MG_TOK_HASH 8192
#define MG_TOK_MAX_LEN 16   /* longest token text */
#define MG_TOK_MAX_MARKUP 16

enum mg_tok_kind {
    MG_TOK_CONTROL = 0,
    MG_TOK_VALUE,
    MG_TOK_CHAR,
    MG_TOK_MARKUP,
    MG_TOK_WORD,
    MG_TOK_MOVE,
    MG_TOK_BYTE,
    MG_TOK_NKINDS
};

#define MG_TOK_PAD 0
#define MG_TOK_BOS 1
#define MG_TOK_EOS 2
#define MG_TOK_CTRL0 3

typedef struct mg_tokenizer {
    int version;
    int n;                               /* vocabulary size */
    uint32_t off[MG_TOK_MAX_TOKENS];     /* token i is pool[off[i] .. off[i] + len[i]) */
    uint8_t len[MG_TOK_MAX_TOKENS];
    uint8_t kind[MG_TOK_MAX_TOKENS];
    uint32_t pool_used;
    char pool[MG_TOK_POOL];
    int16_t hash[MG_TOK_HASH];           /* markup, value, word and move tokens by text */
    int16_t byte_tok[256];               /* token for a single byte (char or byte kind) */
    int max_markup_len;
    int n_markup;                        /* markup token ids, longest first */
    int16_t markup[MG_TOK_MAX_MARKUP];
} mg_tokenizer;

/* Build vocabulary `version` (only 1 exists) into t; MG_OK or MG_ERR with a message. */
int mg_tok_init(mg_tokenizer *t, int version, char *err, size_t errlen);

/* Name of a kind ("control", "value", ...). */
const char *mg_tok_kind_name(int kind);

/* Token text as stored: for byte tokens the name "<0xNN>".  Returns NULL for a bad id. */
const char *mg_tok_text(const mg_tokenizer *t, int id, size_t *len);

/* Id of the token whose stored text is s[0..n) (any kind), -1 if none. */
int mg_tok_lookup(const mg_tokenizer *t, const char *s, size_t n);

/* Encode s[0..n) into ids (room for cap ids; n ids always suffice).  Returns the number of
 * tokens (only the first cap are written if more). */
size_t mg_tok_encode(const mg_tokenizer *t, const char *s, size_t n, int32_t *ids, size_t cap);

/* Decode ids[0..n) into out (room for outlen bytes, not NUL-terminated; MG_TOK_MAX_LEN * n
 * always suffice).  Returns the number of bytes, or -1 - i for the first bad id ids[i]. */
long mg_tok_decode(const mg_tokenizer *t, const int32_t *ids, size_t n, char *out, size_t outlen);

#ifdef __cplusplus
}
#endif
#endif

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
 * Vocabulary v2 (mavgame/data/vocab_v2.json) is v1 with the same ids, followed by
 *   phrase    the keywords of search traces (format/mav_search.h): "Minimax breadth=", " depth=",
 *             "Evaluation for node: ", "Expand from node ", "Decision for node: ", "Selecting ",
 *             "Playing ", "<root>", "<root "  (no phrase holds a newline, so line positions stay)
 *
 * Encoding (deterministic, exact round trip for any byte string):
 *   - (v2) the longest phrase token that starts here, if any;
 *   - at '<' or '%': the longest value or markup token that matches, if any;
 *   - a maximal run of [A-Za-z0-9_]: one token if the whole run is a word or move token,
 *     else one char token per character (so board fields stay one token each);
 *   - any other byte: its char token, or its byte token.
 * No phrase occurs in a MAV text, so v2 encodes every MAV text to the same ids as v1.
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

#define MG_TOK_VERSION 1     /* the default vocabulary (MAV text; the shipped models) */
#define MG_TOK_MAX_VERSION 2 /* the newest: v2 adds the search-trace phrases */
#define MG_TOK_SIZE_V1 2723
#define MG_TOK_SIZE_V2 2732
#define MG_TOK_MAX_TOKENS 4096
#define MG_TOK_POOL 40960
#define MG_TOK_HASH 8192
#define MG_TOK_MAX_LEN 24   /* longest token text */
#define MG_TOK_MAX_MARKUP 16
#define MG_TOK_MAX_PHRASE 16

enum mg_tok_kind {
    MG_TOK_CONTROL = 0,
    MG_TOK_VALUE,
    MG_TOK_CHAR,
    MG_TOK_MARKUP,
    MG_TOK_WORD,
    MG_TOK_MOVE,
    MG_TOK_BYTE,
    MG_TOK_PHRASE,
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
    int n_phrase;                        /* phrase token ids (v2), longest first */
    int16_t phrase[MG_TOK_MAX_PHRASE];
    uint8_t phrase_first[256];           /* 1 for a byte that starts a phrase */
} mg_tokenizer;

/* Build vocabulary `version` (1 or 2) into t; MG_OK or MG_ERR with a message. */
int mg_tok_init(mg_tokenizer *t, int version, char *err, size_t errlen);

/* Number of tokens of vocabulary `version`, -1 for a version that does not exist. */
int mg_tok_size(int version);

/* Check the vocabulary a model file declares (its "vocab_version" metadata) against its
 * vocabulary size.  "" (no MAV vocabulary: a model over other token ids) gives *version = 0;
 * a known version ("1", "2") whose size is vocab_size gives that version.  MG_ERR with a message
 * naming the value for an unknown version and for a size that does not match the version. */
int mg_tok_check_model(const char *vocab_version, int vocab_size, int *version, char *err, size_t errlen);

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

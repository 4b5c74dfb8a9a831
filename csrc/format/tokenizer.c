/* tokenizer.c - the MAV vocabulary and its encoder/decoder (see tokenizer.h). */
#include "tokenizer.h"

#include <string.h>

#include "../game.h"
#include "mav.h"
#include "mav_search.h"
#include "mav_util.h"
#include "values.h"

static const char *const KIND_NAMES[MG_TOK_NKINDS] = {"control", "value", "char", "markup", "word", "move", "byte",
                                                       "phrase"};

/* The phrase tokens of vocabulary v2, in id order: the keywords of search traces. */
static const char *const PHRASES_V2[] = {MG_TRACE_PREAMBLE, MG_TRACE_DEPTH,    MG_TRACE_EVAL,
                                         MG_TRACE_EXPAND,   MG_TRACE_DECISION, MG_TRACE_SELECT,
                                         MG_TRACE_PLAY,     MG_TRACE_ROOT,     MG_TRACE_NODE_PREFIX};

int mg_tok_size(int version)
{
    return version == 1 ? MG_TOK_SIZE_V1 : version == 2 ? MG_TOK_SIZE_V2 : -1;
}

int mg_tok_check_model(const char *vocab_version, int vocab_size, int *version, char *err, size_t errlen)
{
    *version = 0;
    if (!vocab_version || !vocab_version[0])
        return MG_OK;
    /* a version is a decimal number without leading zeros */
    int v = 0;
    size_t n = strlen(vocab_version);
    for (size_t i = 0; i < n && i < 4 && v >= 0; i++)
        v = (vocab_version[i] >= '0' && vocab_version[i] <= '9') ? v * 10 + (vocab_version[i] - '0') : -1;
    if (n > 3 || v < 1 || v > MG_TOK_MAX_VERSION || vocab_version[0] == '0') {
        mg_errf(err, errlen, "unknown MAV vocabulary v%.40s (vocab_version '%.40s'; this mavgame knows v1..v%d)",
                vocab_version, vocab_version, MG_TOK_MAX_VERSION);
        return MG_ERR;
    }
    if (vocab_size != mg_tok_size(v)) {
        mg_errf(err, errlen, "vocabulary size %d does not match MAV vocabulary v%d (%d tokens)", vocab_size, v,
                mg_tok_size(v));
        return MG_ERR;
    }
    *version = v;
    return MG_OK;
}

const char *mg_tok_kind_name(int kind) { return (kind >= 0 && kind < MG_TOK_NKINDS) ? KIND_NAMES[kind] : "?"; }

static uint32_t tok_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

int mg_tok_lookup(const mg_tokenizer *t, const char *s, size_t n)
{
    if (n == 0 || n > MG_TOK_MAX_LEN)
        return -1;
    if (n == 1)
        return t->byte_tok[(unsigned char)s[0]];
    uint32_t h = tok_hash(s, n) & (MG_TOK_HASH - 1);
    for (;;) {
        int id = t->hash[h];
        if (id < 0)
            return -1;
        if (t->len[id] == n && memcmp(t->pool + t->off[id], s, n) == 0)
            return id;
        h = (h + 1) & (MG_TOK_HASH - 1);
    }
}

/* Add a token; returns its id, the existing id for a duplicate text, or -1 when full. */
static int add(mg_tokenizer *t, const char *s, size_t n, int kind, int hashed)
{
    if (n == 0 || n > MG_TOK_MAX_LEN)
        return -1;
    if (hashed) {
        int id = mg_tok_lookup(t, s, n);
        if (id >= 0 && t->kind[id] != MG_TOK_BYTE)
            return id;
    }
    if (t->n >= MG_TOK_MAX_TOKENS || t->pool_used + n > MG_TOK_POOL)
        return -1;
    int id = t->n++;
    t->off[id] = t->pool_used;
    t->len[id] = (uint8_t)n;
    t->kind[id] = (uint8_t)kind;
    memcpy(t->pool + t->pool_used, s, n);
    t->pool_used += (uint32_t)n;
    if (hashed) {
        uint32_t h = tok_hash(s, n) & (MG_TOK_HASH - 1);
        while (t->hash[h] >= 0)
            h = (h + 1) & (MG_TOK_HASH - 1);
        t->hash[h] = (int16_t)id;
    }
    return id;
}

static int is_word_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

int mg_tok_init(mg_tokenizer *t, int version, char *err, size_t errlen)
{
    if (mg_tok_size(version) < 0) {
        mg_errf(err, errlen, "unknown MAV vocabulary version %d (this mavgame knows 1..%d)", version,
                MG_TOK_MAX_VERSION);
        return MG_ERR;
    }
    t->version = version;
    t->n = 0;
    t->pool_used = 0;
    t->max_markup_len = 0;
    t->n_phrase = 0;
    memset(t->phrase_first, 0, sizeof t->phrase_first);
    for (int i = 0; i < MG_TOK_HASH; i++)
        t->hash[i] = -1;
    for (int i = 0; i < 256; i++)
        t->byte_tok[i] = -1;
    int ok = 1;
    /* control */
    ok &= add(t, "<pad>", 5, MG_TOK_CONTROL, 0) == MG_TOK_PAD;
    ok &= add(t, "<bos>", 5, MG_TOK_CONTROL, 0) == MG_TOK_BOS;
    ok &= add(t, "<eos>", 5, MG_TOK_CONTROL, 0) == MG_TOK_EOS;
    /* value buckets */
    for (int b = 0; b < 64; b++) {
        char s[16];
        int n = snprintf(s, sizeof s, "<ctrl%d>", b);
        ok &= add(t, s, (size_t)n, MG_TOK_VALUE, 1) == MG_TOK_CTRL0 + b;
    }
    /* single characters */
    for (int c = 0x20; c < 0x7f; c++) {
        char s = (char)c;
        int id = add(t, &s, 1, MG_TOK_CHAR, 0);
        ok &= id >= 0;
        if (id >= 0)
            t->byte_tok[c] = (int16_t)id;
    }
    {
        int id = add(t, "\n", 1, MG_TOK_CHAR, 0);
        ok &= id >= 0;
        if (id >= 0)
            t->byte_tok['\n'] = (int16_t)id;
        id = add(t, "\t", 1, MG_TOK_CHAR, 0);
        ok &= id >= 0;
        if (id >= 0)
            t->byte_tok['\t'] = (int16_t)id;
    }
    /* markup */
    static const char *const markup[] = {"<mav",     "</mav>", "%prev_state", "%prev_fen", "%prev_action",
                                         "%state",   "%fen",   "%top_",       "%top_all",  "%best_action"};
    t->n_markup = 0;
    for (size_t i = 0; i < sizeof markup / sizeof markup[0]; i++) {
        size_t n = strlen(markup[i]);
        int id = add(t, markup[i], n, MG_TOK_MARKUP, 1);
        ok &= id >= 0;
        if (id >= 0 && t->n_markup < MG_TOK_MAX_MARKUP)
            t->markup[t->n_markup++] = (int16_t)id;
        if ((int)n > t->max_markup_len)
            t->max_markup_len = (int)n;
    }
    /* longest first, so that %top_all wins over %top_ */
    for (int a = 1; a < t->n_markup; a++)
        for (int b = a; b > 0 && t->len[t->markup[b]] > t->len[t->markup[b - 1]]; b--) {
            int16_t tmp = t->markup[b];
            t->markup[b] = t->markup[b - 1];
            t->markup[b - 1] = tmp;
        }
    /* words */
    static const char *const words[] = {"game", "chess", "chess960", "gardner", "connect_four",
                                        "hex",  "tictactoe", "invalid"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        ok &= add(t, words[i], strlen(words[i]), MG_TOK_WORD, 1) >= 0;
    /* the squares of the chess family (en passant fields, and Hex / tic-tac-toe cells) */
    for (int r = 1; r <= 8; r++)
        for (int f = 0; f < 8; f++) {
            char sq[3] = {(char)('a' + f), (char)('0' + r), 0};
            ok &= add(t, sq, 2, MG_TOK_WORD, 1) >= 0;
        }
    /* moves of every game (duplicates across games share the token) */
    static const char *const games[] = {"chess", "chess960", "gardner", "connect_four", "hex", "tictactoe"};
    for (size_t gi = 0; gi < sizeof games / sizeof games[0]; gi++) {
        char mv[2600][MG_MAV_MOVE_TOKEN_LEN];
        int total = mg_mav_move_tokens(games[gi], mv, 2600);
        if (total > 2600) {
            mg_errf(err, errlen, "too many move tokens for %s (%d)", games[gi], total);
            return MG_ERR;
        }
        for (int i = 0; i < total; i++) {
            size_t n = strlen(mv[i]);
            if (n == 1 && t->byte_tok[(unsigned char)mv[i][0]] >= 0)
                continue; /* already a char token */
            ok &= add(t, mv[i], n, MG_TOK_MOVE, 1) >= 0;
        }
    }
    /* bytes without a char token */
    for (int c = 0; c < 256; c++) {
        if (t->byte_tok[c] >= 0)
            continue;
        char s[8];
        snprintf(s, sizeof s, "<0x%02X>", c);
        int id = add(t, s, 6, MG_TOK_BYTE, 0);
        ok &= id >= 0;
        if (id >= 0)
            t->byte_tok[c] = (int16_t)id;
    }
    /* v2: the phrases of search traces, after every v1 token (v1 ids stay) */
    if (version >= 2) {
        for (size_t i = 0; i < sizeof PHRASES_V2 / sizeof PHRASES_V2[0]; i++) {
            size_t n = strlen(PHRASES_V2[i]);
            int id = add(t, PHRASES_V2[i], n, MG_TOK_PHRASE, 1);
            ok &= id >= 0 && t->kind[id] == MG_TOK_PHRASE && t->n_phrase < MG_TOK_MAX_PHRASE;
            if (ok) {
                t->phrase[t->n_phrase++] = (int16_t)id;
                t->phrase_first[(unsigned char)PHRASES_V2[i][0]] = 1;
            }
        }
        /* longest first, so that "<root>" and "<root " are tried before shorter phrases */
        for (int a = 1; a < t->n_phrase; a++)
            for (int b = a; b > 0 && t->len[t->phrase[b]] > t->len[t->phrase[b - 1]]; b--) {
                int16_t tmp = t->phrase[b];
                t->phrase[b] = t->phrase[b - 1];
                t->phrase[b - 1] = tmp;
            }
    }
    if (!ok || t->n != mg_tok_size(version)) {
        mg_errf(err, errlen, "MAV vocabulary v%d does not fit the tokenizer tables (%d tokens, %d expected)",
                version, t->n, mg_tok_size(version));
        return MG_ERR;
    }
    return MG_OK;
}

const char *mg_tok_text(const mg_tokenizer *t, int id, size_t *len)
{
    if (id < 0 || id >= t->n)
        return NULL;
    if (len)
        *len = t->len[id];
    return t->pool + t->off[id];
}

size_t mg_tok_encode(const mg_tokenizer *t, const char *s, size_t n, int32_t *ids, size_t cap)
{
    size_t k = 0, i = 0;
#define EMIT(id)                                                                               \
    do {                                                                                       \
        if (k < cap)                                                                           \
            ids[k] = (id);                                                                     \
        k++;                                                                                   \
    } while (0)
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (t->phrase_first[c]) {
            int found = -1;
            for (int m = 0; m < t->n_phrase; m++) {
                int id = t->phrase[m];
                size_t l = t->len[id];
                if (l <= n - i && memcmp(s + i, t->pool + t->off[id], l) == 0) {
                    found = id;
                    break;
                }
            }
            if (found >= 0) {
                EMIT(found);
                i += t->len[found];
                continue;
            }
        }
        if (c == '<' || c == '%') {
            size_t rest = n - i;
            const char *p = s + i;
            int found = -1;
            size_t fl = 0;
            if (c == '<' && rest >= 7 && memcmp(p, "<ctrl", 5) == 0) {
                /* <ctrlN> as the format spells it (values.c); other spellings are plain bytes */
                int v = mg_mav_value_token(p, rest, &fl);
                if (v >= 0)
                    found = MG_TOK_CTRL0 + v;
            } else {
                /* markup tokens, longest first */
                for (int m = 0; m < t->n_markup; m++) {
                    int id = t->markup[m];
                    size_t l = t->len[id];
                    if (l <= rest && memcmp(p, t->pool + t->off[id], l) == 0) {
                        found = id;
                        fl = l;
                        break;
                    }
                }
            }
            if (found >= 0) {
                EMIT(found);
                i += fl;
                continue;
            }
            EMIT(t->byte_tok[c]);
            i++;
            continue;
        }
        if (is_word_char(c)) {
            size_t j = i + 1;
            while (j < n && is_word_char((unsigned char)s[j]))
                j++;
            int id = j - i > 1 ? mg_tok_lookup(t, s + i, j - i) : -1;
            if (id >= 0 && (t->kind[id] == MG_TOK_WORD || t->kind[id] == MG_TOK_MOVE)) {
                EMIT(id);
            } else {
                for (size_t m = i; m < j; m++)
                    EMIT(t->byte_tok[(unsigned char)s[m]]);
            }
            i = j;
            continue;
        }
        EMIT(t->byte_tok[c]);
        i++;
    }
#undef EMIT
    return k;
}

long mg_tok_decode(const mg_tokenizer *t, const int32_t *ids, size_t n, char *out, size_t outlen)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t id = ids[i];
        if (id < 0 || id >= t->n)
            return -1 - (long)i;
        int kind = t->kind[id];
        if (kind == MG_TOK_CONTROL)
            continue;
        if (kind == MG_TOK_BYTE) {
            const char *p = t->pool + t->off[id];
            unsigned v = 0;
            for (int d = 3; d < 5; d++) {
                char h = p[d];
                v = v * 16 + (unsigned)(h <= '9' ? h - '0' : h - 'A' + 10);
            }
            if (k < outlen)
                out[k] = (char)v;
            k++;
            continue;
        }
        size_t l = t->len[id];
        if (k + l <= outlen)
            memcpy(out + k, t->pool + t->off[id], l);
        k += l;
    }
    return (long)k;
}

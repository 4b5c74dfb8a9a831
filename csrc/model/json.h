/*
 * json.h - a small, strict JSON reader for the safetensors header and the model configuration.
 *
 * mg_json_parse checks the whole text against the JSON grammar (RFC 8259: objects, arrays, strings
 * with escapes, numbers, true/false/null; nesting at most MG_JSON_MAX_DEPTH) and writes a flat
 * token array in document order (jsmn style): every value is one token; an object token is
 * followed by its key and value tokens, an array token by its elements.  Nothing is allocated:
 * the caller passes the token array (call once with toks == NULL to count the tokens needed).
 * Strings are kept as spans of the source; mg_json_str_copy unescapes one.
 */
#ifndef MG_MODEL_JSON_H
#define MG_MODEL_JSON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MG_JSON_MAX_DEPTH 32

enum mg_json_type { MG_JSON_NULL = 0, MG_JSON_BOOL, MG_JSON_NUMBER, MG_JSON_STRING, MG_JSON_ARRAY, MG_JSON_OBJECT };

typedef struct mg_json_tok {
    int type;     /* enum mg_json_type */
    size_t start; /* source span: for strings the text between the quotes (still escaped) */
    size_t end;
    int size;     /* objects: number of keys; arrays: number of elements */
    int next;     /* index of the first token after this value (skips its children) */
} mg_json_tok;

/* Parse s[0..n) (one value, surrounded by optional whitespace).  toks may be NULL (count only).
 * Returns the number of tokens, or -1 with a message naming the byte offset in err. */
int mg_json_parse(const char *s, size_t n, mg_json_tok *toks, int cap, char *err, size_t errlen);

/* Parse s[0..n), which must be one JSON object of at most `cap` tokens, into toks (a configuration
 * object held in a caller's fixed array).  Returns the number of tokens, or -1 with a message in err
 * that starts with `what` ("MAV model configuration", ...). */
int mg_json_parse_object(const char *s, size_t n, mg_json_tok *toks, int cap, const char *what, char *err,
                         size_t errlen);

/* Unescape string token t into out (NUL-terminated, room for cap bytes); its length, or -1 if
 * it does not fit or contains an escaped NUL. */
long mg_json_str_copy(const char *s, const mg_json_tok *t, char *out, size_t cap);

/* Non-zero if string token t equals the NUL-terminated key (compared unescaped). */
int mg_json_str_eq(const char *s, const mg_json_tok *t, const char *key);

/* The value token of `key` in object token `obj` (the last one if repeated), or -1. */
int mg_json_find(const char *s, const mg_json_tok *toks, int obj, const char *key);

/* An integer number token (no fraction or exponent) into *v; 0, or -1 if it is not one or
 * does not fit int64. */
int mg_json_int(const char *s, const mg_json_tok *t, int64_t *v);

/* A number token into *v; 0, or -1. */
int mg_json_double(const char *s, const mg_json_tok *t, double *v);

#ifdef __cplusplus
}
#endif
#endif

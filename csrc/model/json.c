/*
 * json.c - the strict JSON reader of json.h (recursive descent, bounded depth, no allocation).
 */
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jp {
    const char *s;
    size_t n, i;
    mg_json_tok *toks;
    int cap, count;
    char *err;
    size_t errlen;
} jp;

static int fail(jp *p, const char *what)
{
    if (p->err && p->errlen)
        snprintf(p->err, p->errlen, "invalid JSON at byte %zu: %s", p->i, what);
    return -1;
}

static void ws(jp *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r'))
        p->i++;
}

static int new_tok(jp *p, int type, size_t start)
{
    if (p->count == 0x7fffffff)
        return fail(p, "too many values");
    int k = p->count++;
    if (p->toks) {
        if (k >= p->cap)
            return fail(p, "more values than the token array holds");
        p->toks[k].type = type;
        p->toks[k].start = start;
        p->toks[k].end = start;
        p->toks[k].size = 0;
        p->toks[k].next = k + 1;
    }
    return k;
}

static int hex4(const char *s, unsigned *v)
{
    *v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = (unsigned)(c - 'A' + 10);
        else
            return -1;
        *v = *v * 16 + d;
    }
    return 0;
}

static int parse_string(jp *p)
{
    /* at '"' */
    p->i++;
    int k = new_tok(p, MG_JSON_STRING, p->i);
    if (k < 0)
        return -1;
    while (p->i < p->n) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            if (p->toks)
                p->toks[k].end = p->i;
            p->i++;
            return k;
        }
        if (c < 0x20)
            return fail(p, "control character in a string");
        if (c == '\\') {
            if (p->i + 1 >= p->n)
                return fail(p, "unterminated escape");
            char e = p->s[p->i + 1];
            if (e == 'u') {
                unsigned v;
                if (p->i + 6 > p->n || hex4(p->s + p->i + 2, &v) < 0)
                    return fail(p, "bad \\u escape");
                p->i += 6;
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || e == '\0')
                return fail(p, "bad escape");
            p->i += 2;
            continue;
        }
        p->i++;
    }
    return fail(p, "unterminated string");
}

static int parse_number(jp *p)
{
    size_t b = p->i;
    int k = new_tok(p, MG_JSON_NUMBER, b);
    if (k < 0)
        return -1;
    const char *s = p->s;
    size_t i = p->i, n = p->n;
    if (i < n && s[i] == '-')
        i++;
    if (i >= n || s[i] < '0' || s[i] > '9')
        return fail(p, "bad number");
    if (s[i] == '0')
        i++;
    else
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return fail(p, "bad number fraction");
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return fail(p, "bad number exponent");
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    p->i = i;
    if (p->toks)
        p->toks[k].end = i;
    return k;
}

static int parse_value(jp *p, int depth);

static int parse_container(jp *p, int depth, int obj)
{
    if (depth >= MG_JSON_MAX_DEPTH)
        return fail(p, "nested too deeply");
    int k = new_tok(p, obj ? MG_JSON_OBJECT : MG_JSON_ARRAY, p->i);
    if (k < 0)
        return -1;
    p->i++;
    ws(p);
    char close = obj ? '}' : ']';
    int size = 0;
    if (p->i < p->n && p->s[p->i] == close) {
        p->i++;
    } else {
        for (;;) {
            ws(p);
            if (obj) {
                if (p->i >= p->n || p->s[p->i] != '"')
                    return fail(p, "expected a string key");
                if (parse_string(p) < 0)
                    return -1;
                ws(p);
                if (p->i >= p->n || p->s[p->i] != ':')
                    return fail(p, "expected ':'");
                p->i++;
            }
            if (parse_value(p, depth + 1) < 0)
                return -1;
            size++;
            ws(p);
            if (p->i < p->n && p->s[p->i] == ',') {
                p->i++;
                continue;
            }
            if (p->i < p->n && p->s[p->i] == close) {
                p->i++;
                break;
            }
            return fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
    if (p->toks) {
        p->toks[k].size = size;
        p->toks[k].end = p->i;
        p->toks[k].next = p->count;
    }
    return k;
}

static int literal(jp *p, const char *word, int type)
{
    size_t l = strlen(word);
    if (p->n - p->i < l || memcmp(p->s + p->i, word, l) != 0)
        return fail(p, "unexpected character");
    int k = new_tok(p, type, p->i);
    if (k < 0)
        return -1;
    p->i += l;
    if (p->toks)
        p->toks[k].end = p->i;
    return k;
}

static int parse_value(jp *p, int depth)
{
    ws(p);
    if (p->i >= p->n)
        return fail(p, "unexpected end");
    char c = p->s[p->i];
    switch (c) {
    case '{':
        return parse_container(p, depth, 1);
    case '[':
        return parse_container(p, depth, 0);
    case '"':
        return parse_string(p);
    case 't':
        return literal(p, "true", MG_JSON_BOOL);
    case 'f':
        return literal(p, "false", MG_JSON_BOOL);
    case 'n':
        return literal(p, "null", MG_JSON_NULL);
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return parse_number(p);
        return fail(p, "unexpected character");
    }
}

int mg_json_parse(const char *s, size_t n, mg_json_tok *toks, int cap, char *err, size_t errlen)
{
    jp p = {s, n, 0, toks, cap, 0, err, errlen};
    if (parse_value(&p, 0) < 0)
        return -1;
    ws(&p);
    if (p.i != n)
        return fail(&p, "trailing characters after the value");
    return p.count;
}

int mg_json_parse_object(const char *s, size_t n, mg_json_tok *toks, int cap, const char *what, char *err,
                         size_t errlen)
{
    char jerr[256];
    int nt = mg_json_parse(s, n, NULL, 0, jerr, sizeof jerr);
    if (nt < 0) {
        snprintf(err, errlen, "invalid %s JSON: %s", what, jerr);
        return -1;
    }
    if (nt > cap) {
        snprintf(err, errlen, "%s has %d JSON values (at most %d expected)", what, nt, cap);
        return -1;
    }
    mg_json_parse(s, n, toks, nt, jerr, sizeof jerr);
    if (toks[0].type != MG_JSON_OBJECT) {
        snprintf(err, errlen, "the %s must be a JSON object", what);
        return -1;
    }
    return nt;
}

/* Append code point cp as UTF-8; -1 if it does not fit. */
static int put_utf8(char *out, size_t cap, size_t *at, unsigned cp)
{
    char b[4];
    int l;
    if (cp < 0x80) {
        b[0] = (char)cp;
        l = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        l = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        l = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        l = 4;
    }
    if (*at + (size_t)l >= cap)
        return -1;
    memcpy(out + *at, b, (size_t)l);
    *at += (size_t)l;
    return 0;
}

long mg_json_str_copy(const char *s, const mg_json_tok *t, char *out, size_t cap)
{
    if (t->type != MG_JSON_STRING || cap == 0)
        return -1;
    size_t at = 0;
    for (size_t i = t->start; i < t->end;) {
        char c = s[i];
        if (c != '\\') {
            if (at + 1 >= cap)
                return -1;
            out[at++] = c;
            i++;
            continue;
        }
        char e = s[i + 1];
        if (e == 'u') {
            unsigned cp;
            hex4(s + i + 2, &cp); /* checked by the parser */
            i += 6;
            if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= t->end && s[i] == '\\' && s[i + 1] == 'u') {
                unsigned lo;
                if (hex4(s + i + 2, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
            }
            if (cp == 0)
                return -1;
            if (put_utf8(out, cap, &at, cp) < 0)
                return -1;
            continue;
        }
        char r = e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
        if (at + 1 >= cap)
            return -1;
        out[at++] = r;
        i += 2;
    }
    out[at] = '\0';
    return (long)at;
}

int mg_json_str_eq(const char *s, const mg_json_tok *t, const char *key)
{
    if (t->type != MG_JSON_STRING)
        return 0;
    size_t kl = strlen(key);
    if (t->end - t->start == kl && memcmp(s + t->start, key, kl) == 0)
        return 1;
    if (!memchr(s + t->start, '\\', t->end - t->start) || kl > 255)
        return 0;
    char buf[256];
    long l = mg_json_str_copy(s, t, buf, sizeof buf);
    return l == (long)kl && memcmp(buf, key, kl) == 0;
}

int mg_json_find(const char *s, const mg_json_tok *toks, int obj, const char *key)
{
    if (toks[obj].type != MG_JSON_OBJECT)
        return -1;
    int found = -1, k = obj + 1;
    for (int i = 0; i < toks[obj].size; i++) {
        int v = k + 1;
        if (mg_json_str_eq(s, &toks[k], key))
            found = v;
        k = toks[v].next;
    }
    return found;
}

int mg_json_int(const char *s, const mg_json_tok *t, int64_t *v)
{
    if (t->type != MG_JSON_NUMBER)
        return -1;
    size_t l = t->end - t->start;
    if (l == 0 || l > 20)
        return -1;
    char buf[24];
    memcpy(buf, s + t->start, l);
    buf[l] = '\0';
    if (strpbrk(buf, ".eE"))
        return -1;
    errno = 0;
    char *end;
    long long x = strtoll(buf, &end, 10);
    if (errno || *end)
        return -1;
    *v = (int64_t)x;
    return 0;
}

int mg_json_double(const char *s, const mg_json_tok *t, double *v)
{
    if (t->type != MG_JSON_NUMBER)
        return -1;
    size_t l = t->end - t->start;
    if (l == 0 || l > 63)
        return -1;
    char buf[64];
    memcpy(buf, s + t->start, l);
    buf[l] = '\0';
    char *end;
    *v = strtod(buf, &end);
    return *end ? -1 : 0;
}

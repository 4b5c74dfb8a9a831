/*
 * mav_util.h - small helpers shared by the MAV format files (csrc/format) and, through
 * mav_codec.h, the games' %state codecs.
 */
#ifndef MG_MAV_UTIL_H
#define MG_MAV_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "mav.h"

/* Appends an issue to a parser's bounded list (counted past the bound, not stored). */
static inline void mg_issue_vadd(mg_mav_issue *issues, int cap, int *n, int line, int col, const char *fmt,
                                 va_list ap)
{
    if (*n < cap) {
        issues[*n].line = line;
        issues[*n].col = col;
        vsnprintf(issues[*n].msg, sizeof issues[*n].msg, fmt, ap);
    }
    (*n)++;
}

/* A bounded output buffer: writes past the end are dropped and flagged. */
typedef struct mg_sbuf {
    char *p;
    size_t cap, len;
    int over;
} mg_sbuf;

static inline void mg_sb_init(mg_sbuf *b, char *p, size_t cap)
{
    b->p = p;
    b->cap = cap;
    b->len = 0;
    b->over = cap == 0;
    if (cap)
        p[0] = '\0';
}

static inline void mg_sb_putc(mg_sbuf *b, char c)
{
    if (b->len + 1 < b->cap)
        b->p[b->len++] = c;
    else
        b->over = 1;
}

static inline void mg_sb_put(mg_sbuf *b, const char *s, size_t n)
{
    if (b->len + n < b->cap) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    } else {
        b->over = 1;
    }
}

static inline void mg_sb_puts(mg_sbuf *b, const char *s) { mg_sb_put(b, s, strlen(s)); }

/* Non-negative integer in decimal. */
static inline void mg_sb_putu(mg_sbuf *b, unsigned long v)
{
    char tmp[24];
    int k = 0;
    do {
        tmp[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k)
        mg_sb_putc(b, tmp[--k]);
}

/* Terminate; returns the length, 0 when the buffer was too small. */
static inline size_t mg_sb_finish(mg_sbuf *b)
{
    if (b->cap == 0)
        return 0;
    b->p[b->len < b->cap ? b->len : b->cap - 1] = '\0';
    return b->over ? 0 : b->len;
}

/* printf into an error buffer (errlen may be 0 / err NULL). */
static inline void mg_errf(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static inline void mg_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Copy s[0..n) into a printable, quoted form for messages ("e2e4", "\x01"), at most
 * `max` source bytes; returns out. */
static inline const char *mg_quote(const char *s, size_t n, char *out, size_t outlen, size_t max)
{
    size_t k = 0;
    if (outlen < 8) {
        if (outlen)
            out[0] = '\0';
        return out;
    }
    out[k++] = '\'';
    size_t i;
    for (i = 0; i < n && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (k + 8 >= outlen)
            break;
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
            out[k++] = (char)c;
        } else {
            static const char hex[] = "0123456789abcdef";
            out[k++] = '\\';
            if (c == '\n') {
                out[k++] = 'n';
            } else if (c == '\'' || c == '\\') {
                out[k++] = (char)c;
            } else {
                out[k++] = 'x';
                out[k++] = hex[c >> 4];
                out[k++] = hex[c & 15];
            }
        }
    }
    out[k++] = '\'';
    if (i < n && k + 4 < outlen) {
        out[k++] = '.';
        out[k++] = '.';
        out[k++] = '.';
    }
    out[k] = '\0';
    return out;
}

/* mav_write.c: match a command name ("%state", "%top_5", ...) at the start of s[0..n); returns
 * the length matched (0: none), the command and k (0 for %top_all). */
size_t mg_mav_match_cmd(const char *s, size_t n, int *cmd, int *k);

#endif

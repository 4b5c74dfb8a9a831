/*
 * mav_codec.h - what a game gives the MAV format (mav.h): its %state codec and its move tokens.
 *
 * Each game with MAV text defines one const mg_mav_codec in its folder (games/<game>/<game>_mav.c)
 * and points its mg_game.mav at it; format/mav_state.c reaches it only through g->mav.  The
 * helpers below are the generic parts of the %state layout (docs/format.md): fixed-width groups
 * separated by single spaces, row grids of cells, fixed-width decimal fields.
 */
#ifndef MG_MAV_CODEC_H
#define MG_MAV_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "mav.h"
#include "mav_util.h"

typedef char mg_mav_token[MG_MAV_MOVE_TOKEN_LEN];

typedef struct mg_mav_codec {
    /* Non-zero if %fen / %prev_fen apply (the game's own text is a FEN). */
    int has_fen;
    /* %state value for a state given by the game's own text (NUL-terminated); returns its length
     * (> 0), or 0 with a message naming the offending part. */
    size_t (*to_state)(const char *text, char *out, size_t outlen, char *err, size_t errlen);
    /* The game's own text for a %state value of n bytes (not NUL-terminated) under `cfg` (may be
     * NULL); returns its length (> 0), or 0 with a message naming the offending field.  A pure
     * text conversion: the game's from_text checks the position. */
    size_t (*from_state)(const mg_config *cfg, const char *s, size_t n, char *out, size_t outlen, char *err,
                         size_t errlen);
    /* Every move string of the game at its largest configuration: writes up to `cap` into out[]
     * and returns the total count (which may exceed cap). */
    int (*tokens)(mg_mav_token *out, int cap);
    /* Non-zero if s[0..n) is a syntactically valid move under `cfg` (may be NULL). */
    int (*syntax)(const mg_config *cfg, const char *s, size_t n);
    /* Optional (NULL: through the game's text): the %state straight from the state bytes, equal
     * to to_state(to_text(st)); returns the length or 0 with err. */
    size_t (*direct)(const void *st, char *out, size_t outlen, char *err, size_t errlen);
    /* Optional (NULL: every state can be written): MG_OK if the format can write `st` under this
     * game's name, else MG_ERR with the reason. */
    int (*check)(const void *st, char *err, size_t errlen);
} mg_mav_codec;

/* ---- the generic %state layout (format/mav_state.c) ---------------------------------------- */

enum mg_mav_group_kind {
    MG_MAV_G_CHARS = 0, /* `width` characters, each one of `allowed` */
    MG_MAV_G_EP,        /* '.' or a square a1..h8 */
    MG_MAV_G_DIGITS     /* `width` decimal digits */
};

typedef struct mg_mav_group {
    uint8_t kind;         /* enum mg_mav_group_kind */
    uint16_t width;       /* characters (MG_MAV_G_CHARS, MG_MAV_G_DIGITS) */
    uint8_t files;        /* board groups: files per rank (for square names in messages); 0 otherwise */
    const char *allowed;  /* MG_MAV_G_CHARS */
    const char *name;     /* in messages: "board", "side to move", ... */
} mg_mav_group;

/* Split the %state s[0..n) into the ng groups g[]: pos[i] = offset of group i, len[i] its length.
 * MG_OK, or MG_ERR with a message naming the group, character and square at fault. */
int mg_mav_read_groups(const char *s, size_t n, const mg_mav_group *g, int ng, size_t *pos, size_t *len, char *err,
                       size_t errlen);
/* Square name ("a1") of index idx on a board `files` wide. */
void mg_mav_square_name(int idx, int files, char out[16]);
/* Start a %state output buffer with the side-to-move group and its separating space. */
void mg_mav_sb_begin(mg_sbuf *b, char *out, size_t outlen, char side);
/* Finish an output buffer; its length, or 0 with a message if it was too small. */
size_t mg_mav_sb_done(mg_sbuf *b, size_t outlen, char *err, size_t errlen);
/* Game text of a row grid: `rows` rows of `cols` cells, '/' separated (row 0 first when
 * top_first, else the last row first), then a space and the side to move. */
size_t mg_mav_grid_text(const char *cells, int rows, int cols, int top_first, char side, char *out, size_t outlen,
                        char *err, size_t errlen);
/* Game text from a row-grid %state (groups[0] the side, groups[1] rows x cols cells from the
 * bottom row up): the rows top row first, '/' separated, then a space and the side to move. */
size_t mg_mav_grid_from_state(const mg_mav_group *groups, int rows, int cols, const char *s, size_t n, char *out,
                              size_t outlen, char *err, size_t errlen);
/* Fixed-width decimal with leading zeros; 0 if v does not fit. */
int mg_mav_put_fixed(mg_sbuf *b, unsigned long v, int width);
/* The same into o[0..width) (no NUL); width, or 0 if v does not fit. */
static inline size_t mg_mav_put_fixed_raw(char *o, unsigned long v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        o[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return v ? 0 : (size_t)width;
}
/* Value of the n decimal digits at s. */
unsigned long mg_mav_read_fixed(const char *s, size_t n);
/* Append move token s (cut at MG_MAV_MOVE_TOKEN_LEN - 1 characters) to out[] if *n < cap; counts it. */
void mg_mav_add_token(mg_mav_token *out, int cap, int *n, const char *s);

#endif /* MG_MAV_CODEC_H */

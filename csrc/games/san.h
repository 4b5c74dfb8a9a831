/*
 * san.h - Standard Algebraic Notation for the chess family (chess, Chess960, Gardner),
 * written once over a few per-game hooks (mg_san_ops, which a game names in its mg_game.san).
 *
 * Squares are indexed file + rank * files (a1 = 0).  Castling is written O-O / O-O-O.
 * Writing adds '+' for check and '#' for mate; parsing accepts them, optional
 * 'x', '=', and the common variants (e.g. "0-0", "e8Q"), and rejects ambiguous or
 * illegal moves with a message naming the input.
 */
#ifndef MG_SAN_H
#define MG_SAN_H
#include "../game.h"

typedef struct mg_move_info {
    int from, to;     /* square indices */
    char piece;       /* mover: 'P', 'N', 'B', 'R', 'Q', 'K' */
    int capture;      /* non-zero if the move captures (en passant included) */
    char promotion;   /* 0 or 'N', 'B', 'R', 'Q' */
    int castle;       /* 0, 1 = king side (O-O), 2 = queen side (O-O-O) */
} mg_move_info;

typedef struct mg_san_ops {
    const mg_game *game;
    int files, ranks;
    /* Describe legal action `a` in `st`. */
    void (*move_info)(const void *st, int32_t a, mg_move_info *out);
    /* Non-zero if the side to move is in check. */
    int (*in_check)(const void *st);
} mg_san_ops;

/* SAN of legal action `a`; returns the length written (0 on failure). */
size_t mg_san_write(const mg_san_ops *ops, const void *st, int32_t a, char *buf, size_t buflen);
/* Parse SAN into a legal action; MG_ERR with a message on malformed, illegal or ambiguous input. */
int mg_san_parse(const mg_san_ops *ops, const void *st, const char *san, int32_t *a, char *err, size_t errlen);
/* The SAN hooks of a game by registry name (its mg_game.san: chess, chess960, gardner), else NULL. */
const mg_san_ops *mg_san_ops_for(const char *game_name);

#endif

/*
 * mav.h - the MAV text format (multi-action-value model of the MAV paper): headers,
 * prompts and targets, the per-game %state text, and a robust parser for model output.
 * The full specification with examples for every game is docs/format.md.
 *
 * A MAV text is a header line and one line per command, in header order:
 *
 *   <mav game=chess> %prev_fen %prev_action %state %top_all %best_action </mav>
 *   [%prev_fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]
 *   [%prev_action e2e4]
 *   [%state b RNBQKBNRPPPP.PPP............P...................pppppppprnbqkbnr KQkq . 000 0001]
 *   [%top_all e7e5:<ctrl31> c7c5:<ctrl32> ...]
 *   [%best_action c7c5]
 *
 * Commands (enum mg_mav_cmd): %prev_state, %prev_fen, %prev_action, %state, %fen, %top_K
 * (K >= 1) or %top_all, %best_action.  Grammar of the command list:
 *
 *   [ {%prev_state,%prev_fen}+ %prev_action ]  {%state,%fen}+  [%top_*]  [%best_action [{%state,%fen}+]]
 *
 * each state command at most once per group, %fen only for games with a FEN (chess, chess960,
 * gardner).  The inputs (the prompt) are the previous-state group and %prev_action when
 * present (transition form: the model outputs the current state), else the first
 * {%state,%fen} group.  Everything after the inputs is output (the target).  A state group
 * after %best_action is the position after the best action.
 *
 * Every line ends with '\n'.  A prompt is the header line plus the input lines; a target is
 * the output lines.  Values are the win probability of the side to move after the move, as
 * bucket tokens <ctrl0>..<ctrl63> (values.h).  In a terminal state %top_* is written
 * `[%top_K invalid : "1-0"]` (the result string) and %best_action `[%best_action invalid]`.
 *
 * All functions write into caller-owned buffers, never allocate, and report bad input with a
 * one-line message naming the offending part.
 */
#ifndef MG_MAV_H
#define MG_MAV_H

#include <stddef.h>
#include <stdint.h>

#include "../game.h"

#ifdef __cplusplus
extern "C" {
#endif

enum mg_mav_cmd {
    MG_MAV_PREV_STATE = 0,
    MG_MAV_PREV_FEN,
    MG_MAV_PREV_ACTION,
    MG_MAV_STATE,
    MG_MAV_FEN,
    MG_MAV_TOP,
    MG_MAV_BEST_ACTION,
    MG_MAV_NCMD
};

/* Name of a command as written in the header ("%prev_state", ...; "%top_" for MG_MAV_TOP). */
const char *mg_mav_cmd_name(int cmd);

#define MG_MAV_MAX_CMDS 12
#define MG_MAV_MAX_K 9999   /* largest k of %top_k */
/* Longest %state text of any game (19x19 Hex: 361 fields plus a few). */
#define MG_MAV_MAX_STATE_TEXT 512

typedef struct mg_mav_spec {
    int n;                          /* number of commands */
    uint8_t cmd[MG_MAV_MAX_CMDS];   /* enum mg_mav_cmd, in header order */
    int top_k;                      /* k of %top_k (>= 1); 0 for %top_all; unused without MG_MAV_TOP */
    /* Filled by mg_mav_spec_check: */
    int n_inputs;                   /* cmd[0 .. n_inputs) are inputs, the rest outputs */
    int transition;                 /* the inputs are a previous state and %prev_action */
    int top_pos, best_pos;          /* index of %top / %best_action in cmd, -1 if absent */
} mg_mav_spec;

/* Validate the command list for game `g` and fill n_inputs, transition, top_pos, best_pos. */
int mg_mav_spec_check(const mg_game *g, mg_mav_spec *spec, char *err, size_t errlen);
/* Parse a command list such as "%state %top_5 %best_action" (no header brackets) and check it. */
int mg_mav_spec_parse(const mg_game *g, const char *cmds, mg_mav_spec *spec, char *err, size_t errlen);
/* The header line "<mav game=...> ... </mav>\n"; returns its length, or 0 if buflen is too small. */
size_t mg_mav_header(const mg_game *g, const mg_mav_spec *spec, char *buf, size_t buflen);

/* ---- per-game %state text (mav_state.c, over each game's codec: mg_game.mav, mav_codec.h) -- */

/* Non-zero if the game has a %state format; non-zero has_fen if %fen/%prev_fen apply. */
int mg_mav_game_supported(const mg_game *g, int *has_fen);
/* %state value for a state given by the game's own text; returns the length (>0) or 0 with
 * a message in err. */
size_t mg_mav_state_from_game_text(const mg_game *g, const char *text, char *out, size_t outlen, char *err,
                                   size_t errlen);
/* The game's own text for a %state value of `len` bytes (not necessarily NUL-terminated);
 * returns the length (>0) or 0 with a message naming the offending field.  This is a pure
 * text conversion: mg_mav_state_read also checks the position with the game. */
size_t mg_mav_state_to_game_text(const mg_game *g, const mg_config *cfg, const char *st, size_t len, char *out,
                                 size_t outlen, char *err, size_t errlen);
/* %state value of a state; returns the length or 0 with err.  Chess, Chess960 and Gardner are
 * written straight from the state bytes; mg_mav_state_write_via_text always goes through the
 * game's own text (the reference the fast paths are tested against). */
size_t mg_mav_state_write(const mg_game *g, const void *state, char *out, size_t outlen, char *err, size_t errlen);
size_t mg_mav_state_write_via_text(const mg_game *g, const void *state, char *out, size_t outlen, char *err,
                                   size_t errlen);
/* MG_OK if the format can write `state` under g's name; MG_ERR with the reason otherwise (a chess
 * state with Chess960 castling rights that standard chess cannot spell: it is a chess960 state). */
int mg_mav_state_check(const mg_game *g, const void *state, char *err, size_t errlen);
/* Non-zero if mg_mav_state_write has a fast path for the game. */
int mg_mav_has_direct_state(const mg_game *g);
/* Read a %state value into `state` (game->state_size bytes); MG_OK or MG_ERR with err. */
int mg_mav_state_read(const mg_game *g, const mg_config *cfg, const char *st, size_t len, void *state, char *err,
                      size_t errlen);

/* Move tokens: every move string of the game (at its largest configuration).  Writes up to
 * `cap` NUL-terminated strings of at most MG_MAV_MOVE_TOKEN_LEN - 1 characters into out[] and
 * returns the total count (which may exceed cap). */
#define MG_MAV_MOVE_TOKEN_LEN 8
int mg_mav_move_tokens(const char *game_name, char (*out)[MG_MAV_MOVE_TOKEN_LEN], int cap);
/* Non-zero if s[0..n) is a syntactically valid move of the game (for config `cfg`, may be
 * NULL), legal or not in any particular state. */
int mg_mav_move_syntax(const mg_game *g, const mg_config *cfg, const char *s, size_t n);

/* ---- prompts and targets (mav_write.c) ----------------------------------------------------- */

/* The data behind one MAV example. */
typedef struct mg_mav_input {
    const void *state;        /* the current state (required) */
    const void *prev;         /* previous state (transition specs); prev + prev_action = state */
    int32_t prev_action;
    /* Annotation, needed for %top / %best_action outputs unless the state is terminal: */
    int n;                    /* number of annotated moves, each legal in `state`, no duplicates */
    const int32_t *actions;   /* [n] */
    const double *values;     /* [n] win probability in [0, 1] of the side to move after the move */
    int32_t best;             /* the annotator's move; -1: the first move of the reference order */
    /* Display order of the %top moves: a permutation of 0..m-1 (m = moves written) applied to
     * the reference order (value descending, ties: best first then annotation order); NULL
     * for the reference order. */
    const int32_t *order;
    int norder;
} mg_mav_input;

#define MG_MAV_PART_PROMPT 1
#define MG_MAV_PART_TARGET 2
#define MG_MAV_PART_ALL 3

/* Write the prompt (header + input lines), the target (output lines) or both into buf
 * (NUL-terminated).  Returns the length, or -1 with a message in err (bad input, or buflen
 * too small).  The current state is in->state; with a transition spec in->prev and
 * in->prev_action are written as inputs (they must lead to in->state). */
long mg_mav_write(const mg_game *g, const mg_mav_spec *spec, const mg_mav_input *in, int parts, char *buf,
                  size_t buflen, char *err, size_t errlen);

/* The annotation of in->state (in->n, in->actions, in->values, in->best) in the reference order
 * of %top lines (value descending; among equal values the best action first, then annotation
 * order): writes in->n indices into in->actions to idx[]; returns in->n, or -1 with err. */
int mg_mav_reference_order(const mg_game *g, const mg_mav_input *in, int32_t *idx, char *err, size_t errlen);

/* Number of moves the %top line of `spec` lists for a state with n_legal legal moves. */
int mg_mav_top_count(const mg_mav_spec *spec, int n_legal);

/* ---- parser (mav_parse.c) -------------------------------------------------------------- */

#define MG_MAV_MAX_ISSUES 24
#define MG_MAV_MAX_TOP MG_MAX_MOVES
#define MG_MAV_MSGLEN 200

typedef struct mg_mav_issue {
    int line;                     /* 1-based line of the text (0: the text as a whole) */
    int col;                      /* 1-based byte column (0: the line as a whole) */
    char msg[MG_MAV_MSGLEN];
} mg_mav_issue;

/* Status of one %top entry. */
enum mg_mav_move_status {
    MG_MAV_MOVE_LEGAL = 0,        /* legal in the reference state */
    MG_MAV_MOVE_ILLEGAL,          /* a move of the game, not legal there */
    MG_MAV_MOVE_MALFORMED,        /* not a move string of the game */
    MG_MAV_MOVE_UNCHECKED         /* well formed; no reference state to check it against */
};

typedef struct mg_mav_move {
    char move[MG_MAX_MOVE_STR];   /* the move text (cut at MG_MAX_MOVE_STR - 1 bytes; may hold NUL bytes) */
    uint8_t len;                  /* bytes of move[] (NUL bytes of the text included) */
    int32_t action;               /* the legal action, or -1 */
    int16_t bucket;               /* 0..63, or -1 if the value token is malformed */
    uint8_t status;               /* enum mg_mav_move_status */
    uint8_t duplicate;            /* the same move appeared earlier in the list */
    int line, col;
} mg_mav_move;

/* A state slot: previous, current, after the best action. */
enum { MG_MAV_SLOT_PREV = 0, MG_MAV_SLOT_CUR, MG_MAV_SLOT_AFTER, MG_MAV_NSLOTS };

typedef struct mg_mav_slot {
    int present;                  /* at least one %state/%fen line for it was found */
    int valid;                    /* it parsed to a valid state (and %state/%fen agree) */
    int is_input;                 /* given in the prompt */
    int correct;                  /* -1 unknown (no reference), 0 wrong, 1 equals the reference */
    char text[MG_MAX_TEXT];       /* game text of the parsed state (when valid) */
    char ref_text[MG_MAX_TEXT];   /* game text of the reference state ("" if unknown) */
    _Alignas(16) unsigned char state[MG_MAX_STATE];
} mg_mav_slot;

typedef struct mg_mav_result {
    const mg_game *game;
    mg_config cfg;
    int header_ok;                /* the header line parsed */
    mg_mav_spec spec;
    int complete;                 /* every header command had its line */
    int ok;                       /* no format errors (issues) at all */

    mg_mav_slot slot[MG_MAV_NSLOTS];

    /* %prev_action */
    char prev_action[MG_MAX_MOVE_STR];
    int32_t prev_action_id;       /* legal action in the previous state, or -1 */

    /* %top */
    int top_present;
    int top_k;                    /* as in the header (0 = all) */
    int top_outcome;              /* the line is `invalid : "<result>"` */
    int outcome;                  /* enum mg_result named by it (MG_ONGOING if not an outcome line) */
    int n_moves;                  /* entries parsed (at most MG_MAV_MAX_TOP kept) */
    mg_mav_move moves[MG_MAV_MAX_TOP];

    /* %best_action */
    int best_present;
    int best_invalid;             /* written as `invalid` (terminal state) */
    char best[MG_MAX_MOVE_STR];
    int32_t best_id;              /* legal action in the reference state, or -1 */
    int best_status;              /* enum mg_mav_move_status */

    /* Reference (true) current state and the hallucination report. */
    int has_ref;
    _Alignas(16) unsigned char ref[MG_MAX_STATE];
    int ref_n_legal;
    int ref_outcome;              /* enum mg_result of the reference state */
    int n_illegal, n_malformed, n_duplicate, n_missing;
    int32_t missing[MG_MAX_MOVES]; /* legal actions the %top line should have listed but did not */
    int n_missing_listed;         /* entries in missing[]: n_missing when the line should list every legal
                                     move of a non-terminal state (count_expected == ref_n_legal), else 0 */
    int n_correct;                /* distinct legal moves listed */
    int count_expected;           /* moves the %top line should list: min(k, legal) (0 terminal) */
    int outcome_correct;          /* -1 unknown, else whether the terminal/outcome claim is right */

    int n_issues;                 /* format errors found (may exceed MG_MAV_MAX_ISSUES) */
    mg_mav_issue issues[MG_MAV_MAX_ISSUES];
} mg_mav_result;

/* Parse a whole MAV text (header line, input lines and model output) of `len` bytes (need
 * not be NUL-terminated; any bytes are accepted).  `g` and `cfg` (may be NULL) name the game
 * expected; the header must agree.  `ref` (may be NULL) is the true current state: without
 * it the reference is derived from the input lines when they are valid.  Never fails: all
 * problems are recorded in out->issues (format) and the hallucination counters. */
void mg_mav_parse(const mg_game *g, const mg_config *cfg, const char *text, size_t len, const void *ref,
                  mg_mav_result *out);

/* Batch accuracy metrics of the paper (Table 2), accumulated over parse results. */
typedef struct mg_mav_metrics {
    long examples;                /* results added */
    long parsed_ok;               /* results without format errors */
    long best_total, best_legal;  /* %best_action lines with a reference; legal ones */
    long top_all_examples;        /* %top_all lines with a reference, non-terminal */
    long top_listed, top_correct, top_legal; /* moves listed (with repeats), distinct legal listed, legal */
    long state_total, state_correct;         /* output state slots with a reference; equal ones */
    long outcome_total, outcome_correct;     /* terminal references or outcome claims; right ones */
} mg_mav_metrics;

void mg_mav_metrics_add(mg_mav_metrics *m, const mg_mav_result *r);

#ifdef __cplusplus
}
#endif
#endif /* MG_MAV_H */

/*
 * mav_search.h - internal search (MAV-IS): linearized minimax traces (the MAV paper, section 4
 * and Figure 4).  The full specification is docs/format.md, section 10.
 *
 * A trace prompt is the preamble line and a plain MAV prompt; the target is the depth-first
 * linearization of a minimax tree of the requested breadth B and depth D:
 *
 *   Minimax breadth=2 depth=1
 *   <mav game=connect_four> %state %top_all %best_action </mav>
 *   [%state x ...]
 *   Evaluation for node: <root>
 *   [%top_all 4:<ctrl40> 3:<ctrl33> ...]
 *   [%best_action 4]
 *   Expand from node <root>: <root 4> <root 3>
 *   Evaluation for node: <root 4>
 *   [%state o ...]
 *   [%top_all 4:<ctrl30> ...]
 *   [%best_action 4]
 *   Decision for node: <root 4>
 *   Selecting 4 : "<ctrl30>"
 *   Evaluation for node: <root 3>
 *   ...
 *   Decision for node: <root>
 *   4:<ctrl33> 3:<ctrl20>
 *   Selecting 4 : "<ctrl33>"
 *   Playing 4!
 *
 * Values are bucket tokens; a node's value is its mover's win probability bucket; a child's
 * value seen by its parent is 63 - b (exact: the midpoints of b and 63 - b add up to 1).
 *
 * The writer linearizes an annotated tree (every node annotated with the values of its legal
 * moves); the parser reads a model's trace back into a tree with the metrics of the issue
 * (shape, legality, states, the model's own minimax arithmetic, the final move).  Both write
 * into caller-owned memory and never allocate; the parser accepts any bytes.
 */
#ifndef MG_MAV_SEARCH_H
#define MG_MAV_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "mav.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MG_TRACE_MAX_DEPTH 4      /* largest depth D (the paper: 1..3) */
#define MG_TRACE_MAX_BREADTH 8    /* largest breadth B (the paper: 2..5) */
#define MG_TRACE_MAX_NODES 256    /* nodes a parsed trace may hold */
#define MG_TRACE_MAX_ENTRIES 8192 /* %top_all entries over all nodes of a parsed trace */
#define MG_TRACE_MAX_ISSUES 16
/* The MAV command list of every node evaluation (the root: plain form, others: transition form). */
#define MG_TRACE_ROOT_COMMANDS "%state %top_all %best_action"
#define MG_TRACE_CHILD_COMMANDS "%prev_state %prev_action %state %top_all %best_action"
/* How a child's evaluation is written (docs/format.md, section 10):
 *   short: only the transition form's outputs (%state, %top_all, %best_action); the previous
 *          state and the action are the parent's %state line and the last move of the name;
 *   full:  the transition form's input lines too ([%prev_state <parent's state>] and
 *          [%prev_action <move>], as mg_mav_write writes them) before its outputs. */
enum mg_trace_form { MG_TRACE_FORM_SHORT = 0, MG_TRACE_FORM_FULL = 1 };
/* The keywords of a trace (one copy: the writer, the parser and the phrase tokens of MAV
 * vocabulary v2, format/tokenizer.c, use these). */
#define MG_TRACE_PREAMBLE "Minimax breadth="
#define MG_TRACE_DEPTH " depth="
#define MG_TRACE_EVAL "Evaluation for node: "
#define MG_TRACE_EXPAND "Expand from node "
#define MG_TRACE_DECISION "Decision for node: "
#define MG_TRACE_SELECT "Selecting "
#define MG_TRACE_PLAY "Playing "
#define MG_TRACE_ROOT "<root>"        /* the root's name */
#define MG_TRACE_NODE_PREFIX "<root " /* every other node's name starts so: <root m1 m2> */

/* ---- annotated trees (writer input) -------------------------------------------------------- */

/* One node of an annotated tree.  Node 0 is the root (parent -1); every other node names its
 * parent (an earlier node) and the move from it.  The annotation covers the legal moves of the
 * node's state (as for mg_mav_write: win probabilities of the mover, best -1 for the first of
 * the reference order); a terminal node needs none. */
typedef struct mg_trace_tree_node {
    int parent;
    int32_t action;
    int n;
    const int32_t *actions;
    const double *values;
    int32_t best;
} mg_trace_tree_node;

/* Root moves a minimax over the written tree may choose (all ties), for the parser's
 * final_minimax check. */
typedef struct mg_trace_choice {
    int value;                      /* the root's backed-up bucket */
    int n;
    int32_t actions[MG_TRACE_MAX_BREADTH];
} mg_trace_choice;

/* Write the trace of breadth B and depth D of the tree rooted at `root` (the root's state) in
 * child form `form` (enum mg_trace_form):
 * the prompt, the target or both (MG_MAV_PART_*) into buf, NUL-terminated.  Every node that
 * the trace expands must have its top min(B, legal) children in the tree.  Returns the length,
 * or -1 with a message in err.  `choice` (may be NULL) receives the minimax choice. */
long mg_trace_write(const mg_game *g, const void *root, const mg_trace_tree_node *nodes, int n_nodes, int breadth,
                    int depth, int form, int parts, char *buf, size_t buflen, mg_trace_choice *choice, char *err,
                    size_t errlen);

/* ---- parser ------------------------------------------------------------------------------- */

typedef struct mg_trace_entry {
    char move[MG_MAX_MOVE_STR];
    int32_t action;   /* legal action in the node's true state, or -1 */
    int16_t bucket;   /* 0..63, -1 malformed */
    uint8_t status;   /* enum mg_mav_move_status */
} mg_trace_entry;

typedef struct mg_trace_node {
    int parent;                          /* -1 for the root */
    int depth;
    char move[MG_MAX_MOVE_STR];          /* the move from the parent ("" for the root) */
    int32_t action;                      /* legal action in the parent's true state, or -1 */
    int line;                            /* line of "Evaluation for node" */
    int has_true;                        /* the node's true state is known */
    int state_valid, state_correct;      /* its %state line parsed; equals the true state (-1 unknown) */
    char state_text[MG_MAX_TEXT];        /* game text of the %state it wrote (the prompt's at the root) */
    int n_legal;                         /* legal moves of the true state (or of the written one) */
    int true_terminal;                   /* the true (or written) state is finished */
    int terminal;                        /* evaluated as finished: `invalid : "<result>"` */
    int outcome;                         /* enum mg_result claimed when terminal */
    int top_off, n_top;                  /* %top_all entries in result->entries */
    int mav_ok;                          /* its MAV lines parsed without issues, every move legal */
    char best[MG_MAX_MOVE_STR];          /* %best_action */
    int n_children;
    int child[MG_TRACE_MAX_BREADTH];
    int has_decision;
    int dec_n;                           /* entries of the decision's value line (internal nodes) */
    char dec_move[MG_TRACE_MAX_BREADTH][MG_MAX_MOVE_STR];
    int dec_bucket[MG_TRACE_MAX_BREADTH];
    char selected[MG_MAX_MOVE_STR];      /* the Selecting line's move */
    int selected_bucket;                 /* its value, -1 if absent or malformed */
    int value;                           /* the node's value for its mover: selected bucket, or the
                                            terminal bucket; -1 unknown */
    int consistent;                      /* its decision agrees with its own lines and children */
    int prev_agrees;                     /* full form, non-root: its %prev_state is the parent's %state
                                            and its %prev_action the last move of its name (0/1);
                                            -1 in the short form and at the root */
} mg_trace_node;

typedef struct mg_trace_result {
    const mg_game *game;
    mg_config cfg;
    int ok;                       /* no format issues anywhere */
    int form;                     /* enum mg_trace_form the text was read in */
    int breadth, depth;           /* from the preamble (0 if unreadable) */
    int complete;                 /* the text reached its `Playing` line */
    int n_nodes;
    mg_trace_node nodes[MG_TRACE_MAX_NODES];
    int n_entries;
    mg_trace_entry entries[MG_TRACE_MAX_ENTRIES];
    char final_move[MG_MAX_MOVE_STR];
    int32_t final_action;         /* legal in the true root state, or -1 */
    /* metrics (0/1; final_minimax -1 when no choice was given) */
    int shape_ok;                 /* min(B, legal) children at every non-terminal node above depth D */
    int moves_legal;              /* every listed, expanded and selected move legal */
    int states_correct;           /* every %state a child wrote equals its true state */
    int values_consistent;        /* every decision is the minimax of the model's own values */
    int expand_consistent;        /* every node expanded the best-valued moves of its own %top_all */
    int final_legal;
    int final_minimax;            /* the final move is a minimax choice of the true tree */
    int n_issues;                 /* issue lines found; the first MG_TRACE_MAX_ISSUES are in issues[], in order
                                   * (a node's MAV answer gives at most three: its first two and a count) */
    mg_mav_issue issues[MG_TRACE_MAX_ISSUES];
    /* scratch space of the parser (one node's MAV text and its parse) */
    mg_mav_result scratch;
    char scratch_text[16384];
} mg_trace_result;

/* Parse a whole trace text (prompt and model output, `len` bytes, any bytes) of game `g`,
 * written in child form `form` (enum mg_trace_form; in the full form a %prev_state or
 * %prev_action that disagrees with the parent's %state or the node's name is an issue).
 * `root` (may be NULL) is the true root state, else the prompt's %state is taken; `choice`
 * (may be NULL) the true tree's minimax choice.  Never fails: problems are issues and metrics. */
void mg_trace_parse(const mg_game *g, const mg_config *cfg, int form, const char *text, size_t len,
                    const void *root, const mg_trace_choice *choice, mg_trace_result *out);

#ifdef __cplusplus
}
#endif
#endif /* MG_MAV_SEARCH_H */

/*
 * gardner_prover.h - proofs of bounded mates in Gardner minichess.
 *
 * The prover answers two questions about a position, each proven, refuted or left unknown
 * within a node and a time budget:
 *
 *   MG_GPROVE_MATE     "side X mates in at most n moves": X gives checkmate with its n-th move
 *                      at the latest, whatever the other side does (n >= 1; X may or may not be
 *                      the side to move: within 2n - 1 plies if X is to move, else 2n).
 *   MG_GPROVE_NO_LOSS  "side X cannot lose within n plies": the other side has no forced
 *                      checkmate within the next n plies (n >= 0).  Proven exactly when the
 *                      other side's mate within n plies is refuted.
 *
 * Both reduce to one AND/OR search, "the attacker mates within d plies", run by iterative
 * deepening on d (so the first d that succeeds is the exact distance to mate, a mate-distance
 * bound), depth-first with a transposition table that stores, per (position, attacker), the
 * largest d known to fail and the smallest d known to succeed; both bounds serve every later
 * iteration and every later call on the same prover.  At the attacker's nodes the moves are
 * ordered table move first, then checks, then captures and promotions; the attacker's last
 * ply only tries moves that mate.
 *
 * Rules in the search: checkmate wins for the attacker; stalemate and insufficient material
 * (see gardner.h) end the line without a mate.  Repetition and the fifty-move rule are not
 * applied below the root (as in chess problems and the paper's #x leaves), so the table holds
 * results that depend on the position alone.  Consequences, both in the game's full rules:
 *   - a refuted mate (a proven NO_LOSS) stands: those rules only add draws, never mates;
 *   - a proven mate stands when the root's halfmove clock plus the mate's plies stays below 100
 *     and no position of the line occurred twice before the root: along the returned line the
 *     attacker always plays a move of least distance to mate, so no position repeats inside it.
 *   mg_gprove_result.rule50_safe reports the first condition.
 *
 * The returned line (pv) for a mate is the attacker's fastest mate against the defender's
 * longest resistance (each defender move maximises the distance to mate), ending with mate.
 *
 * Memory: the prover owns its table (2^tt_log2 entries of 16 bytes), allocated once by
 * mg_gprover_new; a search allocates nothing.  One prover serves one search at a time.
 */
#ifndef MG_GARDNER_PROVER_H
#define MG_GARDNER_PROVER_H

#include "../../cancel.h"
#include "../../clock.h"
#include "gardner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest mate a query may ask for, in plies (n <= 60 moves for MATE, n <= 120 plies for NO_LOSS). */
#define MG_GPROVE_MAX_PLIES 120
/* Table sizes: 2^tt_log2 entries, tt_log2 in [MG_GPROVE_TT_MIN, MG_GPROVE_TT_MAX]; 0 picks the default. */
#define MG_GPROVE_TT_MIN 10
#define MG_GPROVE_TT_MAX 30
#define MG_GPROVE_TT_DEFAULT 20

enum mg_gprove_goal { MG_GPROVE_MATE = 0, MG_GPROVE_NO_LOSS = 1 };
enum mg_gprove_status { MG_GPROVE_UNKNOWN = 0, MG_GPROVE_PROVEN = 1, MG_GPROVE_REFUTED = 2 };
/* Why a search ended. */
enum mg_gprove_stop { MG_GPROVE_DONE = 0, MG_GPROVE_NODE_LIMIT, MG_GPROVE_TIME_LIMIT, MG_GPROVE_CANCELLED };

typedef struct mg_gprove_query {
    int goal;            /* enum mg_gprove_goal */
    int side;            /* X: 0 White, 1 Black */
    int n;               /* moves (MATE, >= 1) or plies (NO_LOSS, >= 0) */
    uint64_t max_nodes;  /* 0: no limit (nodes = moves made, the line's reconstruction included) */
    double max_seconds;  /* 0: no limit */
    mg_cancel *cancel;   /* may be NULL */
} mg_gprove_query;

typedef struct mg_gprove_result {
    int status;          /* enum mg_gprove_status */
    int stop;            /* enum mg_gprove_stop */
    int mate_plies;      /* the mate found (X's for MATE, the other side's for a refuted NO_LOSS):
                            plies from the root to the mating move; -1 when none was found */
    int depth_done;      /* plies fully searched without a mate by the attacker (-1: none) */
    int rule50_safe;     /* 0 if a mate was found and halfmove + mate_plies >= 100 (the fifty-move rule
                            may cut it), else 1 */
    uint64_t nodes;
    double seconds;
    int pv_len;          /* the mating line (0 when there is none; shorter if the budget ran out in its reconstruction) */
    int32_t pv[MG_GPROVE_MAX_PLIES];
} mg_gprove_result;

typedef struct mg_gprover mg_gprover;

/* A prover with a table of 2^tt_log2 entries (0: MG_GPROVE_TT_DEFAULT); NULL with a message
 * for a size out of range or when memory runs out. */
mg_gprover *mg_gprover_new(int tt_log2, char *err, size_t errlen);
void mg_gprover_free(mg_gprover *p);
/* Forget everything the table learned (for cold timings). */
void mg_gprover_clear(mg_gprover *p);
size_t mg_gprover_tt_bytes(const mg_gprover *p);

/* Answer `q` about `root` (not changed).  MG_ERR with a message for a bad query (goal, side,
 * n out of range); otherwise MG_OK and `out` filled (status UNKNOWN when a budget or the
 * cancel stopped the search: out->stop says which, out->depth_done how far it got). */
int mg_gprove(mg_gprover *p, const mg_gardner_state *root, const mg_gprove_query *q, mg_gprove_result *out,
              char *err, size_t errlen);

/* ---- what both provers share (this file's prover and gardner_pns.h's) ------------------------ */

/* A table of 2^*tt_log2 entries of entry_bytes each (malloc'ed, not initialised; *tt_log2 0 becomes
 * MG_GPROVE_TT_DEFAULT), or NULL with a message: the range [MG_GPROVE_TT_MIN, MG_GPROVE_TT_MAX] for a size
 * outside it, the table's size when memory runs out. */
void *mg_gprove_table_new(int *tt_log2, size_t entry_bytes, char *err, size_t errlen);

/* A search under way: the position, the attacker, the claim's span and the budgets. */
typedef struct mg_gprove_run {
    mg_gardner_state st;  /* the position searched, changed by make/unmake and restored */
    int attacker;         /* the side that must mate (MATE), or the opponent of the protected side (NO_LOSS) */
    int plies;            /* the plies the claim spans */
    uint64_t key_extra;   /* mixed into the position hash: the prover's salt, the attacker, the rule flags */
    uint64_t nodes, max_nodes;
    double t0;            /* start (mg_now_seconds) */
    double deadline;      /* monotonic seconds; 0: none */
    mg_cancel *cancel;
    int stop;             /* enum mg_gprove_stop */
} mg_gprove_run;

/* The set-up of both provers: checks the arguments and the query (MG_ERR with a message naming the bad
 * value: "<fn>: a NULL argument" for a NULL searcher, root, q or out; goal, side, n, max_seconds),
 * resets *out, fills *r from root and q (`salt` keeps the two provers' hash keys apart) and starts the
 * clock.  MG_OK or MG_ERR. */
int mg_gprove_begin(const void *searcher, const char *fn, const mg_gardner_state *root, const mg_gprove_query *q,
                    uint64_t salt, mg_gprove_result *out, mg_gprove_run *r, char *err, size_t errlen);

/* Counts `moves` nodes; non-zero (and r->stop set) once the node budget is spent, the deadline passed
 * (the clock read when nodes & clock_mask is 0: 0 reads it every time) or the cancel fired. */
static inline int mg_gprove_spent(mg_gprove_run *r, uint64_t moves, uint64_t clock_mask)
{
    r->nodes += moves;
    if (r->max_nodes && r->nodes > r->max_nodes) {
        r->stop = MG_GPROVE_NODE_LIMIT;
        return 1;
    }
    if (r->deadline > 0.0 && (r->nodes & clock_mask) == 0 && mg_now_seconds() >= r->deadline) {
        r->stop = MG_GPROVE_TIME_LIMIT;
        return 1;
    }
    if (mg_cancel_tick(r->cancel)) {
        r->stop = MG_GPROVE_CANCELLED;
        return 1;
    }
    return 0;
}

/* Fills out's status from the search's conclusion: `attacker_plies` >= 0 when the attacker's claim
 * was proven at that depth (the line is the caller's), `exhausted` when it was refuted within the
 * bound; neither: unknown.  Also stop, nodes and seconds (from r). */
void mg_gprove_conclude(mg_gprove_result *out, const mg_gardner_state *root, const mg_gprove_query *q,
                        const mg_gprove_run *r, int attacker_plies, int exhausted);

#ifdef __cplusplus
}
#endif
#endif /* MG_GARDNER_PROVER_H */

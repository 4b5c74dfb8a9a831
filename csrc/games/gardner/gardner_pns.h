/*
 * gardner_pns.h - depth-bounded proof-number search (df-pn) for Gardner minichess mates.
 *
 * Answers the same queries as the exhaustive prover (gardner_prover.h: MG_GPROVE_MATE "side X
 * mates in at most n moves", MG_GPROVE_NO_LOSS "side X cannot lose within n plies", both reduced
 * to "the attacker mates within D plies") with Nagai's depth-first proof-number search instead of
 * alpha-beta.  Proof-number search expands the most proving node first (where the defender has
 * the fewest replies, where the attacker has the most forcing moves), so it reaches deep forced
 * mates that iterative deepening cannot; it gives up exactness of the distance.
 *
 * What a result means:
 *   - nodes are (position, remaining plies d): a node is proven when the attacker mates within d
 *     plies, so the search is depth-bounded and a proof of the root is a proof of "mate within D
 *     plies", exactly the query (not merely "a mate exists").  Since d strictly decreases, the
 *     search graph is acyclic: no graph-history interaction, no cycle handling;
 *   - PROVEN: mate_plies is the depth of the proof tree found (mate within mate_plies <= D plies
 *     against every defence: an upper bound on the distance to mate, not necessarily the exact
 *     distance, which the exhaustive prover gives); pv is the line of the proof tree that reaches
 *     that depth (the attacker's shallowest proven move, the defender's deepest reply) and ends in
 *     checkmate;
 *   - REFUTED: no mate within D plies (every line searched to its bound), depth_done = D;
 *   - UNKNOWN: a budget ran out (stop says which).
 * Rules in the search are those of the exhaustive prover (checkmate, stalemate, insufficient
 * material; no repetition or fifty-move rule below the root), and so are the consequences for the
 * game's full rules (rule50_safe is computed from mate_plies).
 *
 * Children are evaluated when their parent is first expanded: terminal positions (mate,
 * stalemate, insufficient material, depth spent, the attacker's last ply: a mating move or not)
 * are solved at once; others start with the mobility heuristic (a defender node: pn = number of
 * replies, dn = 1; an attacker node: pn = 1, dn = number of moves).  Thresholds use the 1 + 1/4
 * trick (Pawlewicz & Lew) at the node's second-best child.
 *
 * Memory: the searcher owns its transposition table (2^tt_log2 entries of 24 bytes in buckets of
 * 4, replacement by least subtree work) and its per-ply move and child-value buffers, all
 * allocated once by mg_gpns_new; a search allocates nothing.  One searcher serves one search at a
 * time.  nodes counts the moves made (child evaluations and expansions).
 */
#ifndef MG_GARDNER_PNS_H
#define MG_GARDNER_PNS_H

#include "gardner_prover.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mg_gpns mg_gpns;

/* A searcher with a table of 2^tt_log2 entries, tt_log2 in the exhaustive prover's range
 * [MG_GPROVE_TT_MIN, MG_GPROVE_TT_MAX] (0: MG_GPROVE_TT_DEFAULT); NULL with a message for a size out
 * of range or when memory runs out. */
mg_gpns *mg_gpns_new(int tt_log2, char *err, size_t errlen);
void mg_gpns_free(mg_gpns *p);
/* Forget everything the table learned. */
void mg_gpns_clear(mg_gpns *p);
size_t mg_gpns_tt_bytes(const mg_gpns *p);

/* Answer `q` about `root` (not changed), as mg_gprove does (same query checks and messages),
 * with the meaning of the result given above. */
int mg_gpns_prove(mg_gpns *p, const mg_gardner_state *root, const mg_gprove_query *q, mg_gprove_result *out,
                  char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* MG_GARDNER_PNS_H */

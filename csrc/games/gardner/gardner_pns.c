/*
 * gardner_pns.c - depth-bounded df-pn for Gardner minichess mates (see gardner_pns.h).
 *
 * mid(c, d, ply, thpn, thdn) is Nagai's multiple iterative deepening: it expands the current
 * node (the attacker mates within d plies?) until its proof number reaches thpn or its disproof
 * number reaches thdn, always descending into the most proving child with thresholds that keep
 * it there only while it stays the best (the 1 + 1/4 trick widens them).  The children's values
 * live in per-ply arrays of the searcher during the expansion (evaluated once when the node is
 * entered, updated when a child returns), and the node's values go to the table when it returns.
 * Values only reach 0 from an actual proof or disproof below, so a stale child value costs work,
 * never soundness.  A proven node also records the depth of its proof tree (1 + the shallowest
 * proven child at the attacker's nodes, 1 + the deepest child at the defender's).
 */
#include "gardner_pns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../rng.h"

#define PN_INF 0x40000000u   /* a proof (or disproof) number of "impossible" */
#define BUCKET 4
#define ROWS (MG_GPROVE_MAX_PLIES + 3)

typedef struct pns_entry {
    uint64_t key;      /* position hash ^ attacker/flags ^ remaining plies; 0: empty */
    uint32_t pn, dn;
    uint32_t work;     /* nodes spent below this entry (saturated): replacement keeps the largest */
    int16_t pdepth;    /* pn == 0: depth of the proof tree in plies */
    int16_t pad;
} pns_entry;

struct mg_gpns {
    pns_entry *tt;
    uint64_t bucket_mask;
    int32_t (*moves)[MG_GARDNER_MAX_MOVES];    /* [ROWS]: a node's moves at its ply, scratch below */
    uint32_t (*cpn)[MG_GARDNER_MAX_MOVES];     /* [ROWS]: the children's values during an expansion */
    uint32_t (*cdn)[MG_GARDNER_MAX_MOVES];
    int16_t (*cpd)[MG_GARDNER_MAX_MOVES];
};

typedef struct ctx {
    mg_gprove_run r;
    mg_gpns *p;
} ctx;

typedef struct val {
    uint32_t pn, dn;
    int16_t pd;
} val;

mg_gpns *mg_gpns_new(int tt_log2, char *err, size_t errlen)
{
    pns_entry *tt = mg_gprove_table_new(&tt_log2, sizeof *tt, err, errlen);
    if (!tt)
        return NULL;
    mg_gpns *p = calloc(1, sizeof *p);
    if (!p) {
        free(tt);
        snprintf(err, errlen, "out of memory for the proof-number searcher");
        return NULL;
    }
    p->tt = tt;
    p->moves = malloc(ROWS * sizeof *p->moves);
    p->cpn = malloc(ROWS * sizeof *p->cpn);
    p->cdn = malloc(ROWS * sizeof *p->cdn);
    p->cpd = malloc(ROWS * sizeof *p->cpd);
    if (!p->moves || !p->cpn || !p->cdn || !p->cpd) {
        snprintf(err, errlen, "out of memory for the proof-number searcher");
        mg_gpns_free(p);
        return NULL;
    }
    p->bucket_mask = (((uint64_t)1 << tt_log2) / BUCKET) - 1;
    mg_gpns_clear(p);
    return p;
}

void mg_gpns_free(mg_gpns *p)
{
    if (!p)
        return;
    free(p->tt);
    free(p->moves);
    free(p->cpn);
    free(p->cdn);
    free(p->cpd);
    free(p);
}

void mg_gpns_clear(mg_gpns *p) { memset(p->tt, 0, (size_t)(p->bucket_mask + 1) * BUCKET * sizeof *p->tt); }

size_t mg_gpns_tt_bytes(const mg_gpns *p) { return (size_t)(p->bucket_mask + 1) * BUCKET * sizeof(pns_entry); }

/* ---- table -------------------------------------------------------------------------------- */

static inline uint64_t node_key(const ctx *c, int d)
{
    uint64_t k = c->r.st.hash ^ c->r.key_extra ^ mg_mix64(0x706e7364657074ULL + (uint64_t)d);
    return k ? k : 1;
}

static inline const pns_entry *tt_find(const ctx *c, uint64_t key)
{
    const pns_entry *b = &c->p->tt[(key & c->p->bucket_mask) * BUCKET];
    for (int i = 0; i < BUCKET; i++)
        if (b[i].key == key)
            return &b[i];
    return NULL;
}

static void tt_store(ctx *c, uint64_t key, val v, uint64_t work)
{
    pns_entry *b = &c->p->tt[(key & c->p->bucket_mask) * BUCKET];
    pns_entry *e = NULL;
    for (int i = 0; i < BUCKET && !e; i++)
        if (b[i].key == key)
            e = &b[i];
    if (!e) {   /* replace the entry with the least work (empty entries have none) */
        e = &b[0];
        for (int i = 1; i < BUCKET; i++)
            if (b[i].work < e->work)
                e = &b[i];
    }
    e->key = key;
    e->pn = v.pn;
    e->dn = v.dn;
    e->work = work > UINT32_MAX ? UINT32_MAX : (uint32_t)work;
    e->pdepth = v.pd;
    e->pad = 0;
}

/* ---- search ------------------------------------------------------------------------------- */

/* Counts `moves` nodes; non-zero (and the stop set) once a budget is spent or the cancel fires. */
static inline int budget_spent(ctx *c, uint64_t moves) { return mg_gprove_spent(&c->r, moves, 0); }

static const val PROVEN0 = {0, PN_INF, 0};
static const val DISPROVEN = {PN_INF, 0, -1};

static inline int norm_depth(int att, int d) { return (att ? d % 2 == 0 : d % 2 != 0) ? d - 1 : d; }

/* The value of the current position with d plies left (d normalised to the attacker's parity),
 * its moves left in moves[ply] (scratch: moves[ply + 1]): solved at once when terminal or on the
 * attacker's last ply, else from the table or the mobility heuristic.  Counts the moves it makes. */
static val evaluate(ctx *c, int d, int ply)
{
    mg_gardner_state *st = &c->r.st;
    const int att = st->side == c->r.attacker;
    if (mg_gardner_insufficient_material(st))
        return DISPROVEN;
    int32_t *moves = c->p->moves[ply];
    int n = mg_gardner.legal_actions(st, moves);
    if (n == 0)
        return !att && mg_gardner_in_check(st) ? PROVEN0 : DISPROVEN;
    if (d <= 0)
        return DISPROVEN;
    const uint64_t key = node_key(c, d);
    const pns_entry *e = tt_find(c, key);
    if (e) {
        val v = {e->pn, e->dn, e->pdepth};
        return v;
    }
    if (att && d == 1) {   /* the attacker's last ply: a mating move or nothing */
        int32_t *reply = c->p->moves[ply + 1];
        mg_gardner_undo u;
        val v = DISPROVEN;
        c->r.nodes += (uint64_t)n;
        for (int i = 0; i < n; i++) {
            mg_gardner.make(st, moves[i], &u);
            int mate = mg_gardner_in_check(st) && mg_gardner.legal_actions(st, reply) == 0;
            mg_gardner.unmake(st, moves[i], &u);
            if (mate) {
                v.pn = 0;
                v.dn = PN_INF;
                v.pd = 1;
                break;
            }
        }
        tt_store(c, key, v, 1);
        return v;
    }
    val v = {att ? 1u : (uint32_t)n, att ? (uint32_t)n : 1u, -1};
    return v;
}

static inline uint32_t sat_add(uint32_t a, uint32_t b)
{
    if (a >= PN_INF || b >= PN_INF)
        return PN_INF;
    uint32_t s = a + b;
    return s >= PN_INF ? PN_INF - 1 : s;
}

/* Expands the current (non-terminal) position with d plies left (normalised, at least 2) at
 * `ply` until pn >= thpn or dn >= thdn; its values in *out.  0, or -1 when stopped. */
static int mid(ctx *c, int d, int ply, uint32_t thpn, uint32_t thdn, val *out)
{
    mg_gardner_state *st = &c->r.st;
    mg_gpns *p = c->p;
    const int att = st->side == c->r.attacker;
    int32_t *moves = p->moves[ply];
    uint32_t *cpn = p->cpn[ply], *cdn = p->cdn[ply];
    int16_t *cpd = p->cpd[ply];
    const int n = mg_gardner.legal_actions(st, moves);
    const uint64_t key = node_key(c, d);
    const uint64_t start = c->r.nodes;
    const int cd = norm_depth(!att, d - 1);
    mg_gardner_undo u;
    if (budget_spent(c, (uint64_t)n))
        return -1;
    for (int i = 0; i < n; i++) {
        mg_gardner.make(st, moves[i], &u);
        val v = evaluate(c, cd, ply + 1);
        mg_gardner.unmake(st, moves[i], &u);
        cpn[i] = v.pn;
        cdn[i] = v.dn;
        cpd[i] = v.pd;
    }
    val me;
    for (;;) {
        /* the node's values, its best child and the runner-up's number */
        uint32_t best = PN_INF + 1, second = PN_INF;
        int b = 0;
        uint32_t pn = att ? PN_INF : 0, dn = att ? 0 : PN_INF;
        int pd = att ? INT16_MAX : -1;
        for (int i = 0; i < n; i++) {
            uint32_t x = att ? cpn[i] : cdn[i];
            if (att) {
                if (cpn[i] < pn)
                    pn = cpn[i];
                dn = sat_add(dn, cdn[i]);
                if (cpn[i] == 0 && cpd[i] < pd)
                    pd = cpd[i];
            } else {
                pn = sat_add(pn, cpn[i]);
                if (cdn[i] < dn)
                    dn = cdn[i];
                if (cpd[i] > pd)
                    pd = cpd[i];
            }
            if (x < best) {
                second = best;
                best = x;
                b = i;
            } else if (x < second) {
                second = x;
            }
        }
        me.pn = pn;
        me.dn = dn;
        me.pd = (int16_t)(pn == 0 ? pd + 1 : -1);
        if (pn == 0 || dn == 0 || pn >= thpn || dn >= thdn)
            break;
        if (second > PN_INF)
            second = PN_INF;
        uint64_t widened = (uint64_t)second + second / 4 + 1;
        uint32_t tpn, tdn;
        if (att) {
            tpn = (uint32_t)(widened < thpn ? widened : thpn);
            uint64_t t = (uint64_t)thdn - dn + cdn[b];
            tdn = (uint32_t)(t > PN_INF ? PN_INF : t);
        } else {
            tdn = (uint32_t)(widened < thdn ? widened : thdn);
            uint64_t t = (uint64_t)thpn - pn + cpn[b];
            tpn = (uint32_t)(t > PN_INF ? PN_INF : t);
        }
        if (budget_spent(c, 1))
            return -1;
        mg_gardner.make(st, moves[b], &u);
        val v;
        int r = mid(c, cd, ply + 1, tpn, tdn, &v);
        mg_gardner.unmake(st, moves[b], &u);
        if (r < 0)
            return -1;
        cpn[b] = v.pn;
        cdn[b] = v.dn;
        cpd[b] = v.pd;
    }
    tt_store(c, key, me, c->r.nodes - start);
    *out = me;
    return 0;
}

/* The proof depth of the current position with d plies left if it is known proven (terminal, the
 * attacker's last ply, or the table), else -1.  Scratch rows ply and ply + 1. */
static int known_proof_depth(ctx *c, int d, int ply)
{
    const int att = c->r.st.side == c->r.attacker;
    d = norm_depth(att, d);
    val v = evaluate(c, d, ply);
    return v.pn == 0 ? v.pd : -1;
}

/* The line of the proof tree from the root (proof depth `pd`, d plies): the attacker's
 * shallowest proven move, the defender's deepest reply.  Leaves the position unchanged. */
static int build_pv(ctx *c, int d, int pd, int32_t *pv)
{
    mg_gardner_state *st = &c->r.st;
    mg_gardner_undo undo[MG_GPROVE_MAX_PLIES];
    int32_t moves[MG_GARDNER_MAX_MOVES];
    int len = 0;
    while (pd > 0 && len < MG_GPROVE_MAX_PLIES && d > 0) {
        const int att = st->side == c->r.attacker;
        int n = mg_gardner.legal_actions(st, moves);
        int32_t pick = -1;
        int pick_pd = att ? INT16_MAX : -1;
        mg_gardner_undo u;
        for (int i = 0; i < n; i++) {
            mg_gardner.make(st, moves[i], &u);
            int e = known_proof_depth(c, d - 1, 0);
            mg_gardner.unmake(st, moves[i], &u);
            if (att ? (e >= 0 && e < pick_pd) : e > pick_pd) {
                pick = moves[i];
                pick_pd = e;
            }
            if (!att && e < 0) {   /* a defence not known refuted: the table lost it */
                pick = -1;
                break;
            }
        }
        if (pick < 0)
            break;
        mg_gardner.make(st, pick, &undo[len]);
        pv[len++] = pick;
        pd = pick_pd;
        d--;
    }
    for (int i = len - 1; i >= 0; i--)
        mg_gardner.unmake(st, pv[i], &undo[i]);
    return len;
}

int mg_gpns_prove(mg_gpns *p, const mg_gardner_state *root, const mg_gprove_query *q, mg_gprove_result *out,
                  char *err, size_t errlen)
{
    ctx c;
    c.p = p;
    if (mg_gprove_begin(p, "mg_gpns_prove", root, q, 0x676172647066ULL, out, &c.r, err, errlen) != MG_OK)
        return MG_ERR;
    const int plies = c.r.plies;
    const int d = norm_depth(root->side == c.r.attacker, plies);

    val v = evaluate(&c, d, 0);
    if (v.pn != 0 && v.dn != 0 && mid(&c, d, 0, PN_INF, PN_INF, &v) < 0)
        v.pn = v.dn = 1;   /* stopped */
    if (v.pn == 0)
        out->pv_len = build_pv(&c, d, v.pd, out->pv);
    else if (v.dn == 0)
        out->depth_done = plies;
    mg_gprove_conclude(out, root, q, &c.r, v.pn == 0 ? (int)v.pd : -1, v.pn != 0 && v.dn == 0);
    return MG_OK;
}

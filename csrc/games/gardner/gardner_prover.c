/*
 * gardner_prover.c - bounded mate proofs for Gardner minichess (see gardner_prover.h).
 *
 * search(c, d) answers "the attacker mates within d plies" for the prover's current position
 * by a depth-first AND/OR search: at the attacker's nodes one mating move suffices, at the
 * defender's nodes every move must lose.  d is first reduced to the parity at which a mate
 * can happen (the attacker mates on odd distances from its own turn), so that equivalent
 * depths share table entries.  The table keeps per (position, attacker, rule flags) the
 * largest depth known to fail (lo) and the smallest known to succeed (hi): a probe answers at
 * once unless lo < d < hi.
 */
#include "gardner_prover.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../clock.h"
#include "../../rng.h"

#define NO_HI INT16_MAX

typedef struct tt_entry {
    uint64_t key;
    int16_t lo;     /* largest depth known: no mate within lo plies (-1: none known) */
    int16_t hi;     /* smallest depth known: mate within hi plies (NO_HI: none known) */
    int32_t move;   /* the attacker's mating move, or the defender's refutation (-1: none) */
} tt_entry;

struct mg_gprover {
    tt_entry *tt;
    uint64_t mask;
};

typedef struct ctx {
    mg_gprove_run r;
    mg_gprover *p;
} ctx;

static void tt_clear(mg_gprover *p)
{
    for (uint64_t i = 0; i <= p->mask; i++) {
        p->tt[i].key = 0;
        p->tt[i].lo = -1;
        p->tt[i].hi = NO_HI;
        p->tt[i].move = -1;
    }
}

mg_gprover *mg_gprover_new(int tt_log2, char *err, size_t errlen)
{
    tt_entry *tt = mg_gprove_table_new(&tt_log2, sizeof *tt, err, errlen);
    if (!tt)
        return NULL;
    mg_gprover *p = malloc(sizeof *p);
    if (!p) {
        free(tt);
        snprintf(err, errlen, "out of memory for the prover");
        return NULL;
    }
    p->tt = tt;
    p->mask = ((uint64_t)1 << tt_log2) - 1;
    tt_clear(p);
    return p;
}

void mg_gprover_free(mg_gprover *p)
{
    if (!p)
        return;
    free(p->tt);
    free(p);
}

void mg_gprover_clear(mg_gprover *p) { tt_clear(p); }

size_t mg_gprover_tt_bytes(const mg_gprover *p) { return (size_t)(p->mask + 1) * sizeof(tt_entry); }

/* ---- the search ------------------------------------------------------------------------- */

/* Counts a node; non-zero (and the stop set) once a budget is spent or the cancel fires. */
static inline int budget_spent(ctx *c) { return mg_gprove_spent(&c->r, 1, 1023); }

static inline tt_entry *tt_find(ctx *c, uint64_t key)
{
    tt_entry *e = &c->p->tt[key & c->p->mask];
    return e->key == key ? e : NULL;
}

static void tt_store(ctx *c, uint64_t key, int win, int d, int32_t move)
{
    tt_entry *e = &c->p->tt[key & c->p->mask];
    if (e->key != key) {   /* always replace */
        e->key = key;
        e->lo = -1;
        e->hi = NO_HI;
        e->move = -1;
    }
    if (win) {
        if (d < e->hi)
            e->hi = (int16_t)d;
    } else if (d > e->lo) {
        e->lo = (int16_t)d;
    }
    if (move >= 0)
        e->move = move;
}

static inline int is_capture_or_promo(const mg_gardner_state *st, int32_t a)
{
    return st->board[(a / 25) % 25] != 0 || a >= 625;
}

/* Moves `moves[0..n)` sorted by descending score (stable insertion sort; n <= 256). */
static void sort_moves(int32_t *moves, int *score, int n)
{
    for (int i = 1; i < n; i++) {
        int32_t m = moves[i];
        int s = score[i], j = i - 1;
        while (j >= 0 && score[j] < s) {
            moves[j + 1] = moves[j];
            score[j + 1] = score[j];
            j--;
        }
        moves[j + 1] = m;
        score[j + 1] = s;
    }
}

/* 1: the attacker mates within d plies; 0: it does not; -1: stopped (c->r.stop). */
static int search(ctx *c, int d)
{
    mg_gardner_state *st = &c->r.st;
    const int att = st->side == c->r.attacker;
    if (att ? d % 2 == 0 : d % 2 != 0)
        d--;
    if (mg_gardner_insufficient_material(st))
        return 0;
    int32_t moves[MG_GARDNER_MAX_MOVES];
    int n = mg_gardner.legal_actions(st, moves);
    if (n == 0)
        return !att && mg_gardner_in_check(st);
    if (d <= 0)
        return 0;
    const uint64_t key = st->hash ^ c->r.key_extra;
    int32_t ttmove = -1;
    const tt_entry *e = tt_find(c, key);
    if (e) {
        if (e->hi <= d)
            return 1;
        if (e->lo >= d)
            return 0;
        ttmove = e->move;
    }
    mg_gardner_undo u;
    if (att && d == 1) {   /* the last ply: only a mating move will do */
        int32_t reply[MG_GARDNER_MAX_MOVES];
        for (int i = 0; i < n; i++) {
            if (budget_spent(c))
                return -1;
            mg_gardner.make(st, moves[i], &u);
            int mate = mg_gardner_in_check(st) && mg_gardner.legal_actions(st, reply) == 0;
            mg_gardner.unmake(st, moves[i], &u);
            if (mate) {
                tt_store(c, key, 1, 1, moves[i]);
                return 1;
            }
        }
        tt_store(c, key, 0, 1, -1);
        return 0;
    }
    int score[MG_GARDNER_MAX_MOVES];
    for (int i = 0; i < n; i++) {
        int s = 0;
        if (moves[i] == ttmove)
            s = 1000;
        else if (att) {
            mg_gardner.make(st, moves[i], &u);
            s = mg_gardner_in_check(st) ? 100 : 0;
            mg_gardner.unmake(st, moves[i], &u);
        }
        if (is_capture_or_promo(st, moves[i]))
            s += 10;
        score[i] = s;
    }
    sort_moves(moves, score, n);
    for (int i = 0; i < n; i++) {
        if (budget_spent(c))
            return -1;
        mg_gardner.make(st, moves[i], &u);
        int r = search(c, d - 1);
        mg_gardner.unmake(st, moves[i], &u);
        if (r < 0)
            return -1;
        if (att && r == 1) {
            tt_store(c, key, 1, d, moves[i]);
            return 1;
        }
        if (!att && r == 0) {
            tt_store(c, key, 0, d, moves[i]);
            return 0;
        }
    }
    tt_store(c, key, att ? 0 : 1, d, -1);
    return att ? 0 : 1;
}

/* The least d' in [from, d] with a mate within d' plies (none within from - 1 is known): -1 if
 * none, -2 if stopped. */
static int mate_distance(ctx *c, int from, int d)
{
    for (int e = from; e <= d; e++) {
        int r = search(c, e);
        if (r < 0)
            return -2;
        if (r)
            return e;
    }
    return -1;
}

/* The mating line from the current position, whose distance to mate is exactly `dist`:
 * fastest mate for the attacker, longest resistance for the defender.  Leaves the position
 * as it found it; stops early (a shorter line) if the budget runs out. */
static int build_pv(ctx *c, int dist, int32_t *pv, int maxlen)
{
    mg_gardner_state *st = &c->r.st;
    mg_gardner_undo undo[MG_GPROVE_MAX_PLIES];
    int32_t moves[MG_GARDNER_MAX_MOVES];
    int len = 0;
    while (dist > 0 && len < maxlen && len < MG_GPROVE_MAX_PLIES) {
        const int att = st->side == c->r.attacker;
        int n = mg_gardner.legal_actions(st, moves);
        int32_t pick = -1;
        int pick_d = -1;
        mg_gardner_undo u;
        for (int i = 0; i < n; i++) {
            if (budget_spent(c))
                goto out;
            mg_gardner.make(st, moves[i], &u);
            int e;
            if (att)
                e = search(c, dist - 1);
            else if (pick_d < 0)
                e = mate_distance(c, 0, dist - 1);
            else {   /* only a longer resistance than the best so far matters: one search decides */
                e = search(c, pick_d);
                e = e < 0 ? -2 : e == 1 ? pick_d : mate_distance(c, pick_d + 1, dist - 1);
            }
            mg_gardner.unmake(st, moves[i], &u);
            if (e < 0 && (att || e == -2))
                goto out;   /* stopped (an attacker's -1 is a stop; a defender's -1 cannot happen) */
            if (att && e == 1) {
                pick = moves[i];
                pick_d = dist - 1;
                break;
            }
            if (!att && e > pick_d) {
                pick = moves[i];
                pick_d = e;
            }
        }
        if (pick < 0)
            break;
        mg_gardner.make(st, pick, &undo[len]);
        pv[len++] = pick;
        dist = pick_d;
    }
out:
    for (int i = len - 1; i >= 0; i--)
        mg_gardner.unmake(st, pv[i], &undo[i]);
    return len;
}

/* ---- what both provers share ------------------------------------------------------------ */

void *mg_gprove_table_new(int *tt_log2, size_t entry_bytes, char *err, size_t errlen)
{
    if (*tt_log2 == 0)
        *tt_log2 = MG_GPROVE_TT_DEFAULT;
    if (*tt_log2 < MG_GPROVE_TT_MIN || *tt_log2 > MG_GPROVE_TT_MAX) {
        snprintf(err, errlen, "table size 2^%d is out of range (tt_log2 must lie in %d..%d, or 0 for %d)", *tt_log2,
                 MG_GPROVE_TT_MIN, MG_GPROVE_TT_MAX, MG_GPROVE_TT_DEFAULT);
        return NULL;
    }
    size_t bytes = ((size_t)1 << *tt_log2) * entry_bytes;
    void *t = malloc(bytes);
    if (!t)
        snprintf(err, errlen, "out of memory for a table of 2^%d entries (%zu MiB)", *tt_log2, bytes >> 20);
    return t;
}

static int check_query(const void *searcher, const char *fn, const mg_gardner_state *root, const mg_gprove_query *q,
                       const mg_gprove_result *out, char *err, size_t errlen)
{
    if (!searcher || !root || !q || !out) {
        snprintf(err, errlen, "%s: a NULL argument", fn);
        return MG_ERR;
    }
    if (q->goal != MG_GPROVE_MATE && q->goal != MG_GPROVE_NO_LOSS) {
        snprintf(err, errlen, "unknown goal %d (0 mate, 1 no loss)", q->goal);
        return MG_ERR;
    }
    if (q->side != 0 && q->side != 1) {
        snprintf(err, errlen, "side must be 0 (White) or 1 (Black), not %d", q->side);
        return MG_ERR;
    }
    if (q->goal == MG_GPROVE_MATE && (q->n < 1 || q->n > MG_GPROVE_MAX_PLIES / 2)) {
        snprintf(err, errlen, "a mate in n moves needs 1 <= n <= %d, not %d", MG_GPROVE_MAX_PLIES / 2, q->n);
        return MG_ERR;
    }
    if (q->goal == MG_GPROVE_NO_LOSS && (q->n < 0 || q->n > MG_GPROVE_MAX_PLIES)) {
        snprintf(err, errlen, "'cannot lose within n plies' needs 0 <= n <= %d, not %d", MG_GPROVE_MAX_PLIES, q->n);
        return MG_ERR;
    }
    if (!(q->max_seconds >= 0.0) || isinf(q->max_seconds)) {
        snprintf(err, errlen, "max_seconds must be a finite number >= 0 (0: no limit), not %g", q->max_seconds);
        return MG_ERR;
    }
    return MG_OK;
}

int mg_gprove_begin(const void *searcher, const char *fn, const mg_gardner_state *root, const mg_gprove_query *q,
                    uint64_t salt, mg_gprove_result *out, mg_gprove_run *r, char *err, size_t errlen)
{
    if (check_query(searcher, fn, root, q, out, err, errlen) != MG_OK)
        return MG_ERR;
    memset(out, 0, sizeof *out);
    out->mate_plies = -1;
    out->depth_done = -1;
    out->rule50_safe = 1;
    memcpy(&r->st, root, sizeof r->st);
    r->attacker = q->goal == MG_GPROVE_MATE ? q->side : 1 - q->side;
    r->plies = q->goal == MG_GPROVE_MATE ? 2 * q->n - (root->side == q->side ? 1 : 0) : q->n;
    r->key_extra = mg_mix64(salt + (uint64_t)r->attacker) ^ mg_mix64((uint64_t)root->flags << 8);
    r->nodes = 0;
    r->max_nodes = q->max_nodes;
    r->cancel = q->cancel;
    r->stop = MG_GPROVE_DONE;
    r->t0 = mg_now_seconds();
    r->deadline = q->max_seconds > 0.0 ? r->t0 + q->max_seconds : 0.0;
    return MG_OK;
}

void mg_gprove_conclude(mg_gprove_result *out, const mg_gardner_state *root, const mg_gprove_query *q,
                        const mg_gprove_run *r, int attacker_plies, int exhausted)
{
    const int mate = q->goal == MG_GPROVE_MATE;
    if (attacker_plies >= 0) {
        out->status = mate ? MG_GPROVE_PROVEN : MG_GPROVE_REFUTED;
        out->mate_plies = attacker_plies;
        out->rule50_safe = root->halfmove + (uint32_t)attacker_plies < 100;
    } else if (exhausted) {
        out->status = mate ? MG_GPROVE_REFUTED : MG_GPROVE_PROVEN;
    } else {
        out->status = MG_GPROVE_UNKNOWN;
    }
    out->stop = r->stop;
    out->nodes = r->nodes;
    out->seconds = mg_now_seconds() - r->t0;
}

/* ---- the exhaustive prover -------------------------------------------------------------- */

int mg_gprove(mg_gprover *p, const mg_gardner_state *root, const mg_gprove_query *q, mg_gprove_result *out,
              char *err, size_t errlen)
{
    ctx c;
    c.p = p;
    if (mg_gprove_begin(p, "mg_gprove", root, q, 0x6761726470726f76ULL, out, &c.r, err, errlen) != MG_OK)
        return MG_ERR;
    int found = -1;
    for (int d = 0; d <= c.r.plies; d++) {
        int r = search(&c, d);
        if (r < 0)
            break;
        if (r) {
            found = d;
            break;
        }
        out->depth_done = d;
    }
    if (found >= 0)
        out->pv_len = build_pv(&c, found, out->pv, MG_GPROVE_MAX_PLIES);
    mg_gprove_conclude(out, root, q, &c.r, found, found < 0 && c.r.stop == MG_GPROVE_DONE);
    return MG_OK;
}

/* test_mav_search.c - internal-search traces: writer from annotated trees (random values), parser
 * round trips with every check, cut and mutated traces (no crash, the checks fall), bad trees. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../format/mav_search.h"
#include "../format/tokenizer.h"
#include "../game.h"
#include "../rng.h"
#include "mgtest.h"

static mg_test_counts T;

#define MAXN 1200
#define MAXA 40000

typedef struct tree {
    int n, na;
    mg_trace_tree_node nodes[MAXN];
    int32_t acts[MAXA];
    double vals[MAXA];
} tree;

/* A tree of depth `depth` expanding every legal move up to `breadth` (random values; the writer picks
 * the top ones, so the tree holds children for all moves of the top-`breadth`: expand all moves here). */
static int build(tree *t, const mg_game *g, unsigned char *st, int parent, int32_t action, int depth, mg_rng *r)
{
    if (t->n >= MAXN)
        return -1;
    int idx = t->n++;
    mg_trace_tree_node *nd = &t->nodes[idx];
    nd->parent = parent;
    nd->action = action;
    nd->n = 0;
    nd->best = -1;
    if (g->outcome(st, NULL) != MG_ONGOING)
        return idx;
    int32_t legal[MG_MAX_MOVES];
    int nl = g->legal_actions(st, legal);
    if (t->na + nl > MAXA)
        return -1;
    nd->actions = t->acts + t->na;
    nd->values = t->vals + t->na;
    for (int i = 0; i < nl; i++) {
        t->acts[t->na + i] = legal[i];
        t->vals[t->na + i] = mg_rng_double(r);
    }
    nd->n = nl;
    t->na += nl;
    if (depth == 0)
        return idx;
    for (int i = 0; i < nl; i++) {
        unsigned char undo[MG_MAX_UNDO];
        g->make(st, legal[i], undo);
        int c = build(t, g, st, idx, legal[i], depth - 1, r);
        g->unmake(st, legal[i], undo);
        if (c < 0)
            return -1;
    }
    return idx;
}

static char TEXT[1 << 18];
static mg_trace_result R;
static mg_tokenizer TOK1, TOK2;
static int32_t IDS1[1 << 18], IDS2[1 << 18];
static char BACK[1 << 18];

/* Vocabulary v2 on a trace: an exact round trip, every phrase used, fewer tokens than v1, and each
 * line without a keyword (the MAV lines) encoded to the same ids as v1. */
static void check_trace_tokens(const char *text, size_t n)
{
    size_t k1 = mg_tok_encode(&TOK1, text, n, IDS1, sizeof IDS1 / sizeof IDS1[0]);
    size_t k2 = mg_tok_encode(&TOK2, text, n, IDS2, sizeof IDS2 / sizeof IDS2[0]);
    MG_CHECK(k2 < k1 && k1 <= n);
    long m = mg_tok_decode(&TOK2, IDS2, k2, BACK, sizeof BACK);
    MG_CHECK(m == (long)n && memcmp(BACK, text, n) == 0);
    int used[MG_TOK_MAX_PHRASE] = {0};
    for (size_t i = 0; i < k2; i++) {
        MG_CHECK(IDS2[i] >= 0 && IDS2[i] < TOK2.n);
        if (IDS2[i] >= MG_TOK_SIZE_V1)
            used[IDS2[i] - MG_TOK_SIZE_V1] = 1;
    }
    for (int p = 0; p < TOK2.n_phrase; p++)
        MG_CHECK(used[p]);
    for (size_t a = 0; a < n;) {
        size_t b = a;
        while (b < n && text[b] != '\n')
            b++;
        if (b - a > 0 && text[a] == '[') { /* a MAV line */
            size_t l1 = mg_tok_encode(&TOK1, text + a, b - a, IDS1, 4096);
            size_t l2 = mg_tok_encode(&TOK2, text + a, b - a, IDS2, 4096);
            MG_CHECK(l1 == l2 && memcmp(IDS1, IDS2, l1 * sizeof IDS1[0]) == 0);
        }
        a = b + 1;
    }
}

/* The full form: a %prev_action that is not the move of the name, or a %prev_state that is not the
 * parent's %state, is a reported issue on that node only (the rest of the trace still reads). */
static void test_full_disagreements(const mg_game *g, const unsigned char *st, const tree *t)
{
    char err[MG_ERRLEN];
    mg_trace_choice ch;
    long n = mg_trace_write(g, st, t->nodes, t->n, 2, 1, MG_TRACE_FORM_FULL, MG_MAV_PART_ALL, TEXT, sizeof TEXT, &ch,
                            err, sizeof err);
    MG_CHECK(n > 0);
    if (n <= 0)
        return;
    /* the first child's %prev_action: the second child's move */
    char *pa = strstr(TEXT, "[%prev_action ");
    char *exp = strstr(TEXT, "Expand from node <root>: <root ");
    MG_CHECK(pa && exp);
    if (!pa || !exp)
        return;
    const char *m2 = strstr(exp + 31, " <root ");
    MG_CHECK(m2 != NULL);
    if (!m2)
        return;
    m2 += 7;
    size_t l2 = strcspn(m2, ">");
    static char MUT[1 << 18];
    size_t head = (size_t)(pa - TEXT) + 14;
    size_t l1 = strcspn(pa + 14, "]");
    memcpy(MUT, TEXT, head);
    memcpy(MUT + head, m2, l2);
    size_t tail = (size_t)n - head - l1;
    memcpy(MUT + head + l2, pa + 14 + l1, tail);
    size_t mn = head + l2 + tail;
    mg_trace_parse(g, NULL, MG_TRACE_FORM_FULL, MUT, mn, st, &ch, &R);
    MG_CHECK(!R.ok && R.complete && R.shape_ok && R.states_correct && R.final_minimax == 1);
    MG_CHECK(R.n_nodes == 3 && R.nodes[1].prev_agrees == 0 && R.nodes[2].prev_agrees == 1);
    int named = 0;
    for (int i = 0; i < R.n_issues && i < MG_TRACE_MAX_ISSUES; i++)
        named |= strstr(R.issues[i].msg, "%prev_action") != NULL;
    MG_CHECK(named);
    /* the second child's %prev_state: the first child's state (a valid board, not its parent's) */
    char *ps1 = strstr(TEXT, "[%prev_state ");
    char *ps2 = ps1 ? strstr(ps1 + 1, "[%prev_state ") : NULL;
    char *s1 = ps1 ? strstr(ps1, "[%state ") : NULL;
    MG_CHECK(ps2 && s1);
    if (!ps2 || !s1)
        return;
    size_t ls1 = strcspn(s1 + 8, "]"), lp2 = strcspn(ps2 + 13, "]");
    head = (size_t)(ps2 - TEXT) + 13;
    memcpy(MUT, TEXT, head);
    memcpy(MUT + head, s1 + 8, ls1);
    tail = (size_t)n - head - lp2;
    memcpy(MUT + head + ls1, ps2 + 13 + lp2, tail);
    mn = head + ls1 + tail;
    mg_trace_parse(g, NULL, MG_TRACE_FORM_FULL, MUT, mn, st, &ch, &R);
    MG_CHECK(!R.ok && R.complete && R.shape_ok && R.final_minimax == 1);
    MG_CHECK(R.n_nodes == 3 && R.nodes[1].prev_agrees == 1 && R.nodes[2].prev_agrees == 0);
    named = 0;
    for (int i = 0; i < R.n_issues && i < MG_TRACE_MAX_ISSUES; i++)
        named |= strstr(R.issues[i].msg, "%prev_state is not") != NULL;
    MG_CHECK(named);
}

static void test_round_trips(const char *game, const char *const *moves, int nmoves)
{
    const mg_game *g = mg_game_by_name(game);
    MG_CHECK(g != NULL);
    if (!g)
        return;
    char err[MG_ERRLEN];
    _Alignas(16) unsigned char st[MG_MAX_STATE];
    MG_CHECK(g->init(st, NULL, err, sizeof err) == MG_OK);
    for (int i = 0; i < nmoves; i++) {
        int32_t a;
        MG_CHECK(g->action_from_str(st, moves[i], &a, err, sizeof err) == MG_OK);
        unsigned char undo[MG_MAX_UNDO];
        g->make(st, a, undo);
    }
    static tree t;
    mg_rng r;
    mg_rng_seed(&r, 7);
    memset(&t, 0, sizeof t);
    MG_CHECK(build(&t, g, st, -1, -1, 2, &r) == 0);
    for (int form = MG_TRACE_FORM_SHORT; form <= MG_TRACE_FORM_FULL; form++)
        for (int b = 1; b <= 3; b++)
            for (int d = 1; d <= 2; d++) {
                mg_trace_choice ch;
                long n = mg_trace_write(g, st, t.nodes, t.n, b, d, form, MG_MAV_PART_ALL, TEXT, sizeof TEXT, &ch, err,
                                        sizeof err);
                MG_CHECK(n > 0 && (size_t)n == strlen(TEXT));
                if (n <= 0) {
                    fprintf(stderr, "    %s b=%d d=%d: %s\n", game, b, d, err);
                    continue;
                }
                check_trace_tokens(TEXT, (size_t)n);
                mg_trace_parse(g, NULL, form, TEXT, (size_t)n, st, &ch, &R);
                MG_CHECK(R.ok && R.complete && R.shape_ok && R.moves_legal && R.states_correct &&
                         R.values_consistent && R.expand_consistent && R.final_legal && R.final_minimax == 1);
                MG_CHECK(R.breadth == b && R.depth == d && R.nodes[0].value == ch.value && R.form == form);
                /* the full form repeats the inputs (agreeing), the short one does not */
                MG_CHECK((strstr(TEXT, "[%prev_state ") != NULL) == (form == MG_TRACE_FORM_FULL));
                MG_CHECK(R.nodes[0].prev_agrees == -1);
                for (int q = 1; q < R.n_nodes; q++)
                    MG_CHECK(R.nodes[q].prev_agrees == (form == MG_TRACE_FORM_FULL ? 1 : -1));
                /* read in the other form, the text is defective (never a crash) */
                mg_trace_parse(g, NULL, !form, TEXT, (size_t)n, st, &ch, &R);
                MG_CHECK(!R.ok && R.n_issues > 0);
                /* without the true root the prompt's state is used */
                mg_trace_parse(g, NULL, form, TEXT, (size_t)n, NULL, NULL, &R);
                MG_CHECK(R.ok && R.shape_ok && R.states_correct && R.final_minimax == -1);
                /* every cut is read without a crash, and only the whole text is complete */
                for (long k = 0; k < n - 1; k += 7) { /* the last newline may be missing */
                    mg_trace_parse(g, NULL, form, TEXT, (size_t)k, st, &ch, &R);
                    MG_CHECK(!R.complete && !R.shape_ok && R.final_minimax == 0);
                }
                /* random byte mutations: no crash, the counters in range */
                for (int k = 0; k < 300; k++) {
                    char save[4];
                    long pos[4];
                    for (int q = 0; q < 4; q++) {
                        pos[q] = (long)mg_rng_below(&r, (uint32_t)n);
                        save[q] = TEXT[pos[q]];
                        TEXT[pos[q]] = (char)mg_rng_below(&r, 256);
                    }
                    mg_trace_parse(g, NULL, form, TEXT, (size_t)n, st, &ch, &R);
                    MG_CHECK(R.n_nodes >= 0 && R.n_nodes <= MG_TRACE_MAX_NODES && (R.ok == (R.n_issues == 0)));
                    for (int q = 3; q >= 0; q--)
                        TEXT[pos[q]] = save[q];
                }
            }
    /* a wrong child value in the root decision: only the arithmetic check falls */
    mg_trace_choice ch;
    long n = mg_trace_write(g, st, t.nodes, t.n, 2, 1, MG_TRACE_FORM_SHORT, MG_MAV_PART_ALL, TEXT, sizeof TEXT, &ch,
                            err, sizeof err);
    char *dec = strstr(TEXT, "Decision for node: <root>\n");
    MG_CHECK(n > 0 && dec != NULL);
    if (dec) {
        char *v = strstr(dec, ":<ctrl") + 6;
        char old = *v;
        *v = *v == '1' ? '2' : '1';
        mg_trace_parse(g, NULL, MG_TRACE_FORM_SHORT, TEXT, (size_t)n, st, &ch, &R);
        MG_CHECK(R.ok && R.shape_ok && R.moves_legal && !R.values_consistent);
        *v = old;
    }
    test_full_disagreements(g, st, &t);
    /* bad trees */
    MG_CHECK(mg_trace_write(g, st, t.nodes, t.n, 0, 1, 0, MG_MAV_PART_ALL, TEXT, sizeof TEXT, NULL, err,
                            sizeof err) < 0 && strstr(err, "breadth"));
    MG_CHECK(mg_trace_write(g, st, t.nodes, 1, 2, 1, 0, MG_MAV_PART_ALL, TEXT, sizeof TEXT, NULL, err,
                            sizeof err) < 0 && strstr(err, "no child"));
    MG_CHECK(mg_trace_write(g, st, t.nodes, t.n, 2, 1, 1, MG_MAV_PART_ALL, TEXT, 64, NULL, err, sizeof err) < 0 &&
             strstr(err, "too small"));
    MG_CHECK(mg_trace_write(g, st, t.nodes, t.n, 2, 1, 2, MG_MAV_PART_ALL, TEXT, sizeof TEXT, NULL, err,
                            sizeof err) < 0 && strstr(err, "form 2"));
}

int main(void)
{
    mg_games_init();
    char err[MG_ERRLEN];
    if (mg_tok_init(&TOK1, 1, err, sizeof err) != MG_OK || mg_tok_init(&TOK2, 2, err, sizeof err) != MG_OK) {
        fprintf(stderr, "tokenizer: %s\n", err);
        return 1;
    }
    static const char *const c4[] = {"4", "4", "3", "5", "3", "3", "2", "6", "5", "4", "4", "1", "1", "7"};
    static const char *const ttt[] = {"a1", "b1", "a2", "b2"};
    static const char *const chess[] = {"e2e4", "e7e5"};
    test_round_trips("connect_four", c4, 14);
    test_round_trips("tictactoe", ttt, 4);
    test_round_trips("chess", chess, 2);
    mg_trace_parse(NULL, NULL, MG_TRACE_FORM_SHORT, "x", 1, NULL, NULL, &R);
    MG_CHECK(!R.ok && R.n_issues == 1);
    MG_TEST_MAIN_END("test_mav_search");
}

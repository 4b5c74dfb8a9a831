/* test_tictactoe.c - tic-tac-toe and the generic game algorithms. */
#include <string.h>

#include "../game.h"
#include "mgtest.h"

/* Exhaustive walk: make/unmake restore the bytes, hash agrees with text, terminal states have no moves. */
static void walk(mg_test_counts *t, const mg_game *g, void *st, long *terminals, long *x_wins)
{
    int32_t moves[MG_MAX_MOVES];
    unsigned char before[MG_MAX_STATE];
    memcpy(before, st, g->state_size);
    int reason = 0;
    int res = g->outcome(st, &reason);
    int n = g->legal_actions(st, moves);
    if (res != MG_ONGOING) {
        MG_CHECK_T(t, n == 0);
        (*terminals)++;
        *x_wins += res == MG_P0_WINS;
        return;
    }
    MG_CHECK_T(t, n > 0);
    for (int i = 0; i < n; i++) {
        unsigned char undo[MG_MAX_UNDO];
        MG_CHECK_T(t, g->is_legal(st, moves[i]));
        g->make(st, moves[i], undo);
        walk(t, g, st, terminals, x_wins);
        g->unmake(st, moves[i], undo);
        MG_CHECK_T(t, memcmp(before, st, g->state_size) == 0);
    }
}

int main(void)
{
    mg_test_counts T = {0, 0};
    mg_games_init();
    const mg_game *g = mg_game_by_name("tictactoe");
    MG_CHECK(g != NULL);
    if (!g)
        MG_TEST_MAIN_END("test_tictactoe");
    unsigned char st[MG_MAX_STATE];
    char err[MG_ERRLEN], buf[MG_MAX_TEXT];
    MG_CHECK(g->init(st, NULL, err, sizeof err) == MG_OK);
    g->to_text(st, buf, sizeof buf);
    MG_CHECK(strcmp(buf, ".../.../... x") == 0);

    /* Known counts: 255168 games, 131184 won by X; perft 9 = 9! minus early terminations. */
    long terminals = 0, x_wins = 0;
    walk(&T, g, st, &terminals, &x_wins);
    MG_CHECK_EQ_U64(terminals, 255168);
    MG_CHECK_EQ_U64(x_wins, 131184);
    MG_CHECK_EQ_U64(mg_perft(g, st, 1), 9);
    MG_CHECK_EQ_U64(mg_perft(g, st, 2), 72);
    MG_CHECK_EQ_U64(mg_perft(g, st, 9), 127872);

    int32_t moves[MG_MAX_MOVES];
    uint64_t counts[MG_MAX_MOVES];
    int n = mg_perft_divide(g, st, 3, moves, counts, NULL);
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += counts[i];
    MG_CHECK_EQ_U64(sum, mg_perft(g, st, 3));

    /* Text round trip and bad inputs. */
    const char *good = "x.o/.x./..o x";
    MG_CHECK(g->from_text(st, NULL, good, err, sizeof err) == MG_OK);
    g->to_text(st, buf, sizeof buf);
    MG_CHECK(strcmp(buf, good) == 0);
    const char *bad[] = {"", "x.o/.x./..o", "xxx/.../... o", "xxx/ooo/... x", "x.o/.x./..q x", "abc", "x.o.x./..o x",
                         "xxx/oo./... x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        MG_CHECK(g->from_text(st, NULL, bad[i], err, sizeof err) == MG_ERR);
        MG_CHECK(err[0] != '\0');
    }
    int32_t a;
    MG_CHECK(g->init(st, NULL, err, sizeof err) == MG_OK);
    MG_CHECK(g->action_from_str(st, "b2", &a, err, sizeof err) == MG_OK && a == 4);
    MG_CHECK(g->action_from_str(st, "d4", &a, err, sizeof err) == MG_ERR);
    MG_CHECK(g->action_from_str(st, "b", &a, err, sizeof err) == MG_ERR);
    MG_CHECK(strstr(err, "move 'b':") != NULL);

    /* mg_quote_str, the move parsers' quoting: whole, or cut on a UTF-8 boundary and marked */
    char q[MG_QUOTE_BUF];
    MG_CHECK(strcmp(mg_quote_str(q, sizeof q, "e2e4", MG_QUOTE_MAX), "'e2e4'") == 0);
    MG_CHECK(strcmp(mg_quote_str(q, sizeof q, "", MG_QUOTE_MAX), "''") == 0);
    MG_CHECK(strcmp(mg_quote_str(q, sizeof q, "abcdef", 6), "'abcdef'") == 0);
    MG_CHECK(strcmp(mg_quote_str(q, sizeof q, "abcdefg", 6), "'abcdef...'") == 0);
    /* "a" then U+00E9 (2 bytes) and U+20AC (3 bytes): a cut inside a character leaves all of it out */
    MG_CHECK(strcmp(mg_quote_str(q, sizeof q, "a\xc3\xa9\xc3\xa9", 4), "'a\xc3\xa9...'") == 0);
    MG_CHECK(strcmp(mg_quote_str(q, sizeof q, "a\xe2\x82\xac\xe2\x82\xac", 5), "'a\xe2\x82\xac...'") == 0);
    MG_CHECK(strcmp(mg_quote_str(q, sizeof q, "a\xe2\x82\xac\xe2\x82\xac", 6), "'a\xe2\x82\xac...'") == 0);
    MG_CHECK(strcmp(mg_quote_str(q, sizeof q, "\xf0\x9f\x98\x80x", 2), "'...'") == 0);
    /* stray continuation bytes are characters of their own */
    MG_CHECK(strcmp(mg_quote_str(q, sizeof q, "\x80\x80\x80\x80\x80\x80", 5), "'\x80\x80\x80\x80\x80...'") == 0);
    MG_CHECK(strcmp(mg_quote_span(q, sizeof q, "a/b c", 3, MG_QUOTE_MAX), "'a/b'") == 0);   /* a field: n bytes */
    MG_CHECK(strcmp(MG_QUOTE_SPAN("a\xc3\xa9\xc3\xa9/x", 5, 4), "'a\xc3\xa9...'") == 0);
    MG_CHECK(strcmp(MG_QUOTE("abcdefg", 6), "'abcdef...'") == 0);
    char small[9];   /* a small buffer lowers max to 3 */
    MG_CHECK(strcmp(mg_quote_str(small, sizeof small, "abcdef", 20), "'abc...'") == 0);
    MG_CHECK(strcmp(mg_quote_str(small, 3, "abcdef", 20), "") == 0);
    char longmove[80];
    memset(longmove, 'a', sizeof longmove - 1);
    longmove[sizeof longmove - 1] = '\0';
    longmove[MG_QUOTE_MAX - 1] = '\xc3';     /* a 2-byte character across the cut */
    longmove[MG_QUOTE_MAX] = '\xa9';
    MG_CHECK(g->action_from_str(st, longmove, &a, err, sizeof err) == MG_ERR);
    MG_CHECK(strstr(err, "aa...': expected") != NULL && strstr(err, "\xc3") == NULL);
    MG_TEST_MAIN_END("test_tictactoe");
}

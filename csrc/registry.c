/* registry.c - the table of all games.  Add a game here with one line. */
#include <string.h>

#include "game.h"
#include "games/tictactoe/tictactoe.h"
#include "games/gardner/gardner.h"
#include "games/chess/chess.h"
#include "games/connect_four/connect_four.h"
#include "games/hex/hex.h"

static const mg_game *const GAMES[] = {
    &mg_tictactoe,
    &mg_gardner,
    &mg_chess, &mg_chess960,
    &mg_connect_four,
    &mg_hex,
};

#define NGAMES ((int)(sizeof GAMES / sizeof GAMES[0]))

int mg_game_count(void) { return NGAMES; }

const mg_game *mg_game_at(int i) { return (i >= 0 && i < NGAMES) ? GAMES[i] : NULL; }

void mg_games_init(void)
{
    /* One call per game that has tables to fill, e.g. mg_chess_init_tables(). */
    mg_chess_init_tables();
}

const mg_game *mg_game_by_name(const char *name)
{
    for (int i = 0; i < NGAMES; i++)
        if (strcmp(GAMES[i]->name, name) == 0)
            return GAMES[i];
    return NULL;
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "game.h"
#include "games/chess/chess.h"
int main(int argc, char **argv)
{
    mg_games_init();
    const char *fen = argc > 1 ? argv[1] : "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    int depth = argc > 2 ? atoi(argv[2]) : 5;
    int reps = argc > 3 ? atoi(argv[3]) : 1;
    mg_chess_state s; char err[200];
    if (mg_chess_from_fen(&s, 0, fen, err, sizeof err)) { fprintf(stderr, "fen: %s\n", err); return 1; }
    uint64_t n = 0;
    struct timespec a, b; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (int r = 0; r < reps; r++) n = mg_perft_cancel(&mg_chess, &s, depth, NULL);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double t = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
    printf("%llu %.4f s/run\n", (unsigned long long)n, t / reps);
    return 0;
}

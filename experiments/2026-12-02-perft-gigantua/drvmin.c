#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "game.h"
#include "games/chess/chess.h"
static double now(void) { struct timespec a; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a); return a.tv_sec + a.tv_nsec * 1e-9; }
int main(int argc, char **argv)
{
    mg_games_init();
    int reps = atoi(argv[1]);
    const char *fens[2] = {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"};
    int depth[2] = {6, 5}; uint64_t want[2] = {119060324ULL, 193690690ULL};
    for (int p = 0; p < 2; p++) {
        mg_chess_state s; char err[200];
        mg_chess_from_fen(&s, 0, fens[p], err, sizeof err);
        double best = 1e9;
        for (int r = 0; r < reps; r++) {
            double t = now();
            uint64_t n = mg_perft_cancel(&mg_chess, &s, depth[p], NULL);
            t = now() - t;
            if (n != want[p]) { printf("WRONG %llu\n", (unsigned long long)n); return 1; }
            if (t < best) best = t;
        }
        printf("%s %.4f\n", p ? "kiwi" : "start", best);
    }
    return 0;
}

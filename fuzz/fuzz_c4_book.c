/*
 * fuzz_c4_book.c - libFuzzer target: the Connect Four opening book reader (csrc/games/connect_four/c4_book.c).
 *
 * Input: the bytes of a book file, copied to an exact-size heap buffer (ASan catches any read
 * past its end).  Checks: no crash; a book the reader accepts finds every one of its entries
 * with the stored score, and a solver that uses it answers a short search without a fault.
 */
#include "fuzz_common.h"

#include "../csrc/games/connect_four/c4_solver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 16))
        return 0;
    uint8_t *buf = fuzz_bytes(data, size);
    char err[MG_ERRLEN];
    mg_c4_book b;
    if (mg_c4_book_open(&b, buf, size, err, sizeof err) == MG_OK) {
        for (uint64_t i = 0; i < b.count; i++) {
            uint64_t v = 0;
            for (int j = 7; j >= 0; j--)
                v = v << 8 | b.entries[8 * i + (uint64_t)j];
            int score = 1000;
            if (!mg_c4_book_lookup(&b, v >> 8, &score) || score != (int)(v & 0xff) - 64)
                abort();
        }
        mg_c4_solver *sv = mg_c4_solver_new(12, err, sizeof err);
        if (sv) {
            mg_c4_solver_set_book(sv, &b);
            mg_c4_state s;
            mg_c4_init(&s);
            mg_c4_limits lim = {2000, 0, 0};
            mg_c4_solution so;
            mg_c4_solve_moves(sv, &s, &lim, &so);
            mg_c4_solver_free(sv);
        }
    } else if (!err[0]) {
        abort(); /* a refusal must say why */
    }
    free(buf);
    return 0;
}

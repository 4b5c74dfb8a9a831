/*
 * values.h - action values of the MAV format: win probabilities and the 64 value buckets.
 *
 * A value is the win probability in [0, 1] of the player who makes the move (the side to
 * move in the position the move is played from), draws counting one half.
 *
 *  - Chess from centipawns (the lichess formula the MAV paper uses, with cp from the mover's
 *    point of view):  Win% = 50 + 50 * (2 / (1 + exp(-0.00368208 * cp)) - 1), as p = Win% / 100.
 *  - Mate scores: "mate in n" for the mover (n > 0) is a certain win, p = 1; being mated
 *    (n < 0, and n = 0: the mover is already mated) is a certain loss, p = 0.
 *  - Game-theoretic results (solvers, Connect Four): win 1, draw 0.5, loss 0.
 *
 * Buckets: 64 uniform buckets over [0, 1], written <ctrl0> .. <ctrl63>.  A value p goes to
 * bucket min(63, floor(p * 64)); bucket b stands for its midpoint (b + 0.5) / 64.  From a
 * 64-way distribution over the buckets (a model's output) a move gets a score by max scoring
 * (the midpoint of the most probable bucket, the lowest on ties) or mean scoring (the
 * expectation of the midpoints).
 */
#ifndef MG_VALUES_H
#define MG_VALUES_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MG_MAV_BUCKETS 64
#define MG_MAV_LICHESS_K 0.00368208

/* Win probability for centipawns from the mover's point of view. */
double mg_mav_win_prob_cp(double cp);
/* Win probability for "mate in n" from the mover's point of view (see above). */
double mg_mav_win_prob_mate(int n);
/* Bucket of a win probability: values below 0 go to bucket 0, above 1 to 63; NaN gives -1. */
int mg_mav_bucket(double p);
/* Midpoint of bucket b (0..63); NaN for a bad index. */
double mg_mav_bucket_value(int b);
/* The value token at the start of s[0..n): "<ctrlN>" with N in 0..63 written in decimal without
 * leading zeros (the only spelling the writer uses, so text and tokens round-trip).  Returns N
 * and sets *len to the token's length, or -1 when s does not start with such a token.  The one
 * reader of value tokens: the tokenizer and the parser both use it. */
int mg_mav_value_token(const char *s, size_t n, size_t *len);

enum { MG_MAV_SCORE_MAX = 0, MG_MAV_SCORE_MEAN = 1 };

/* Score n distributions of 64 entries each (row-major, `stride` doubles between rows, stride
 * >= 64): probabilities (any non-negative weights, normalised here) or, with `logits`
 * non-zero, logits (a softmax is applied).  Writes n scores to out.  Returns 0, or -1 - i
 * for the first bad row i (negative or non-finite weights, all-zero row), with a message. */
long mg_mav_score(const double *dist, size_t n, size_t stride, int method, int logits, double *out, char *err,
                  size_t errlen);
/* The same for float32 input. */
long mg_mav_score_f32(const float *dist, size_t n, size_t stride, int method, int logits, double *out, char *err,
                      size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

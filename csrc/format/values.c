/* values.c - win probabilities and value buckets of the MAV format (see values.h). */
#include "values.h"

#include <string.h>

#include <math.h>

#include "mav_util.h"

double mg_mav_win_prob_cp(double cp)
{
    if (isnan(cp))
        return NAN;
    double win = 50.0 + 50.0 * (2.0 / (1.0 + exp(-MG_MAV_LICHESS_K * cp)) - 1.0);
    return win / 100.0;
}

double mg_mav_win_prob_mate(int n) { return n > 0 ? 1.0 : 0.0; }

int mg_mav_bucket(double p)
{
    if (isnan(p))
        return -1;
    if (p <= 0.0)
        return 0;
    if (p >= 1.0)
        return MG_MAV_BUCKETS - 1;
    int b = (int)floor(p * MG_MAV_BUCKETS);
    return b > MG_MAV_BUCKETS - 1 ? MG_MAV_BUCKETS - 1 : b;
}

int mg_mav_value_token(const char *s, size_t n, size_t *len)
{
    if (n < 7 || memcmp(s, "<ctrl", 5) != 0)
        return -1;
    size_t d = 5;
    int v = 0;
    while (d < n && d < 7 && s[d] >= '0' && s[d] <= '9')
        v = v * 10 + (s[d++] - '0');
    if (d == 5 || d >= n || s[d] != '>' || (d == 7 && s[5] == '0') || v >= MG_MAV_BUCKETS)
        return -1;
    *len = d + 1;
    return v;
}

double mg_mav_bucket_value(int b)
{
    if (b < 0 || b >= MG_MAV_BUCKETS)
        return NAN;
    return (b + 0.5) / MG_MAV_BUCKETS;
}

/* One row; returns 0 or -1 with err. */
static int score_row(const double *x, int method, int logits, double *out, char *err, size_t errlen, size_t row)
{
    double w[MG_MAV_BUCKETS];
    double total = 0.0;
    if (logits) {
        double mx = -INFINITY;
        for (int i = 0; i < MG_MAV_BUCKETS; i++) {
            if (isnan(x[i]) || x[i] == INFINITY) {
                mg_errf(err, errlen, "row %zu: logit %d is %g", row, i, x[i]);
                return -1;
            }
            if (x[i] > mx)
                mx = x[i];
        }
        if (mx == -INFINITY) {
            mg_errf(err, errlen, "row %zu: all logits are -inf", row);
            return -1;
        }
        for (int i = 0; i < MG_MAV_BUCKETS; i++) {
            w[i] = exp(x[i] - mx);
            total += w[i];
        }
    } else {
        double mx = 0.0;
        for (int i = 0; i < MG_MAV_BUCKETS; i++) {
            if (!(x[i] >= 0.0) || isinf(x[i])) {
                mg_errf(err, errlen, "row %zu: probability %d is %g (must be finite and >= 0)", row, i, x[i]);
                return -1;
            }
            w[i] = x[i];
            total += w[i];
            if (x[i] > mx)
                mx = x[i];
        }
        if (!(total > 0.0)) {
            mg_errf(err, errlen, "row %zu: the probabilities sum to 0", row);
            return -1;
        }
        if (isinf(total) || mx < 1e-290) {
            /* Huge finite weights (64 of 1e308): their sum overflows and the mean would be inf / inf = NaN;
             * tiny ones (a lone 5e-324): weight * bucket value underflows and the mean would be 0, below
             * bucket 0's value.  Weights relative to the largest, in [0, 1], sum to 1..64.  (Only then: the
             * scores of every other row stay the same to the last bit.) */
            total = 0.0;
            for (int i = 0; i < MG_MAV_BUCKETS; i++) {
                w[i] = x[i] / mx;
                total += w[i];
            }
        }
    }
    if (method == MG_MAV_SCORE_MAX) {
        int best = 0;
        for (int i = 1; i < MG_MAV_BUCKETS; i++)
            if (w[i] > w[best])
                best = i;
        *out = mg_mav_bucket_value(best);
    } else {
        double s = 0.0;
        for (int i = 0; i < MG_MAV_BUCKETS; i++)
            s += w[i] * ((i + 0.5) / MG_MAV_BUCKETS);
        *out = s / total;
    }
    return 0;
}

long mg_mav_score(const double *dist, size_t n, size_t stride, int method, int logits, double *out, char *err,
                  size_t errlen)
{
    if (stride < MG_MAV_BUCKETS || (method != MG_MAV_SCORE_MAX && method != MG_MAV_SCORE_MEAN)) {
        mg_errf(err, errlen, "bad scoring arguments (stride %zu, method %d)", stride, method);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if (score_row(dist + i * stride, method, logits, &out[i], err, errlen, i) < 0)
            return -1 - (long)i;
    return 0;
}

long mg_mav_score_f32(const float *dist, size_t n, size_t stride, int method, int logits, double *out, char *err,
                      size_t errlen)
{
    if (stride < MG_MAV_BUCKETS || (method != MG_MAV_SCORE_MAX && method != MG_MAV_SCORE_MEAN)) {
        mg_errf(err, errlen, "bad scoring arguments (stride %zu, method %d)", stride, method);
        return -1;
    }
    double row[MG_MAV_BUCKETS];
    for (size_t i = 0; i < n; i++) {
        for (int j = 0; j < MG_MAV_BUCKETS; j++)
            row[j] = dist[i * stride + (size_t)j];
        if (score_row(row, method, logits, &out[i], err, errlen, i) < 0)
            return -1 - (long)i;
    }
    return 0;
}

/*
 * model_load.c - load time and memory of the native engine's model loader (csrc/model/model_file.c):
 * wall time of mg_model_load_file, resident set after loading and the peak resident set during it,
 * both above the process's before the load (Linux: /proc/self/status, getrusage).
 *
 *   S=$(find csrc -name "*.c" -not -path "csrc/bind*" -not -path "csrc/tests*")   # the loader checks the
 *   gcc -std=c11 -O2 -march=x86-64-v2 -fno-strict-aliasing -D_POSIX_C_SOURCE=200809L -Icsrc/model \
 *       bench/model_load.c $S -lm -lpthread -o /tmp/model_load                    # tokenizer, which needs the games
 *   /tmp/model_load mavgame/data/mav_connect_four.safetensors
 *
 * One load per process (the peak resident set only grows): run it several times.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

#include "model.h"

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODEL.safetensors\n", argv[0]);
        return 2;
    }
    char err[512];
    struct timespec a, b;
    struct rusage u;
    mg_model m;
    getrusage(RUSAGE_SELF, &u);
    long peak0 = u.ru_maxrss, rss0 = rss_kb();
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (mg_model_load_file(&m, argv[1], err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    getrusage(RUSAGE_SELF, &u);
    printf("%s: load %.1f ms, resident +%.1f MiB after, peak +%.1f MiB\n", argv[1],
           (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6,
           (double)(rss_kb() - rss0) / 1024.0, (double)(u.ru_maxrss - peak0) / 1024.0);
    mg_model_free(&m);
    return 0;
}

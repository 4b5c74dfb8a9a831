#!/usr/bin/env bash
# Build and run the libFuzzer targets: the MAV format (FEN reader, %state reader, output parser,
# search-trace parser), the model-file readers of the native inference engine (csrc/model: the MAV
# model and the chess policy network) and the Connect Four opening book reader.
#
#   bash fuzz/run.sh              # 10 seconds per target (CI: bash fuzz/run.sh 5)
#   bash fuzz/run.sh 600          # longer local runs
#   FUZZ_JOBS=2 bash fuzz/run.sh  # libFuzzer -jobs/-workers
#
# Needs clang with libFuzzer (Debian/Ubuntu: apt-get install clang).  Without it the script says so
# and exits 0, unless FUZZ_REQUIRE=1.  Targets run with AddressSanitizer (leak detection on) and
# UndefinedBehaviorSanitizer; any crash, leak or sanitizer report fails the script and leaves the
# reproducer in build/fuzz/.  The seed corpora in fuzz/corpus are copied, never modified.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-10}"
CC="${FUZZ_CC:-clang}"
BUILD=build/fuzz
if ! command -v "$CC" >/dev/null 2>&1 || ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n){(void)d;(void)n;return 0;}' \
        | "$CC" -x c -fsanitize=fuzzer - -o /tmp/mg_fuzz_probe_$$ >/dev/null 2>&1; then
    rm -f /tmp/mg_fuzz_probe_$$
    echo "fuzz: skipped: $CC with libFuzzer not found (apt-get install clang)"
    [ "${FUZZ_REQUIRE:-0}" = 1 ] && exit 1
    exit 0
fi
rm -f /tmp/mg_fuzz_probe_$$
mkdir -p "$BUILD"
SRCS="csrc/game.c csrc/cancel.c csrc/registry.c $(ls csrc/games/*.c csrc/games/*/*.c) $(ls csrc/format/*.c) $(ls csrc/model/*.c)"
FLAGS="-std=c11 -g -O1 -D_POSIX_C_SOURCE=200809L -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all"
# the library objects once, without the fuzzer main
LIBFLAGS="-std=c11 -g -O1 -D_POSIX_C_SOURCE=200809L -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"
objs=()
for s in $SRCS; do
    o="$BUILD/$(echo "$s" | tr / _).o"
    # rebuilt when the source or any header changed (a struct layout change must reach every object)
    if [ ! -f "$o" ] || [ "$s" -nt "$o" ] || [ -n "$(find csrc -name '*.h' -newer "$o" -print -quit)" ]; then
        "$CC" $LIBFLAGS -c "$s" -o "$o"
    fi
    objs+=("$o")
done
status=0
for t in fen state parse trace model policy_net c4_book; do
    "$CC" $FLAGS "fuzz/fuzz_$t.c" "${objs[@]}" -lm -lpthread -o "$BUILD/fuzz_$t"
    work="$BUILD/corpus_$t"
    rm -rf "$work"
    mkdir -p "$work"
    cp fuzz/corpus/"$t"/* "$work"/ 2>/dev/null || true
    log="$BUILD/fuzz_$t.log"
    maxlen=4096
    [ "$t" = parse ] || [ "$t" = trace ] && maxlen=16384
    [ "$t" = model ] && maxlen=16384
    [ "$t" = policy_net ] && maxlen=80000  # the smallest network's dense layer is 16 x 1968 weights
    if (cd "$BUILD" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
            "./fuzz_$t" -max_total_time="$SECONDS_PER_TARGET" -max_len=$maxlen -print_final_stats=1 \
            ${FUZZ_JOBS:+-jobs=$FUZZ_JOBS -workers=$FUZZ_JOBS} "corpus_$t" >"fuzz_$t.log" 2>&1); then
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
        echo "fuzz_$t: ok, ${runs:-?} inputs in ${SECONDS_PER_TARGET}s"
    else
        echo "fuzz_$t: FAILED (see $log)"
        tail -30 "$log"
        status=1
    fi
done
exit $status

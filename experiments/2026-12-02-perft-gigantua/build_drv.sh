#!/bin/bash
# Build the perft driver ($D/drv, default D=/tmp/perftdrv) from the current csrc with setup.py's flags (+ -g).
# usage: bash experiments/2026-12-02-perft-gigantua/build_drv.sh   (from the repository root)
set -e
here=$(cd "$(dirname "$0")" && pwd)
export D=${D:-/tmp/perftdrv}
cd "$here/../../csrc"
mkdir -p "$D/obj"
objs=""
for f in game.c registry.c cancel.c games/*.c games/*/*.c search/*.c format/*.c model/*.c; do
    o="$D/obj/$(echo "$f" | tr / _).o"
    objs="$objs $o"
    if [ ! -f "$o" ] || [ "$f" -nt "$o" ]; then echo "$f"; fi
done > "$D/todo"
xargs -P 2 -I{} sh -c 'gcc -std=c11 -O3 -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -fno-strict-aliasing \
    -march=x86-64-v2 -fPIC -I. -c {} -o "$D/obj/$(echo {} | tr / _).o"' < "$D/todo"
gcc -std=c11 -D_POSIX_C_SOURCE=200809L -O3 -g -march=x86-64-v2 -I. "$here/perft_drv.c" $objs -lm -lpthread -o "$D/drv"

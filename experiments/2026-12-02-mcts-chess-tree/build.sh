#!/bin/bash
# usage: SRC=<tree root> D=<outdir> build.sh  -> $D/mcts_tree
set -e
export D=${D:-/tmp/Mx/new}
cd ${SRC:-/work/main}/csrc
mkdir -p "$D/obj"
objs=""
hdr_new=$(ls -t $(find . -name '*.h') | head -1)
for f in game.c registry.c cancel.c games/*.c games/*/*.c search/*.c format/*.c model/*.c; do
    o="$D/obj/$(echo "$f" | tr / _).o"
    objs="$objs $o"
    if [ ! -f "$o" ] || [ "$f" -nt "$o" ] || [ "$hdr_new" -nt "$o" ]; then echo "$f"; fi
done > "$D/todo"
xargs -P 2 -I{} sh -c 'gcc -std=c11 -O3 -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -fno-strict-aliasing \
    -march=x86-64-v2 -fPIC -I. -c {} -o "$D/obj/$(echo {} | tr / _).o"' < "$D/todo"
gcc -std=c11 -D_POSIX_C_SOURCE=200809L -O3 -g -march=x86-64-v2 -fno-strict-aliasing -I. ../bench/mcts_tree.c $objs -lm -lpthread -o "$D/mcts_tree"

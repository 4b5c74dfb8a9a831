#!/bin/bash
# mk_variant.sh NAME CHESS_C: /tmp/ab/NAME, drvmin.c linked with a variant chess.c and the objects of build_drv.sh
# (D=/tmp/perftdrv); drvmin.c must be in /tmp/ab
set -e
C=/work/main/csrc
objs=$(ls /tmp/perftdrv/obj/*.o | grep -v games_chess_chess.c.o)
mkdir -p /tmp/ab/src; cp "$2" $C/games/chess/.ab_$1.c
gcc -std=c11 -O3 -g -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -fno-strict-aliasing -march=x86-64-v2 -fPIC -I$C -c $C/games/chess/.ab_$1.c -o /tmp/ab/$1.o
rm -f $C/games/chess/.ab_$1.c
gcc -std=c11 -D_POSIX_C_SOURCE=200809L -O3 -march=x86-64-v2 -I$C /tmp/ab/drvmin.c /tmp/ab/$1.o $objs -lm -lpthread -o /tmp/ab/$1

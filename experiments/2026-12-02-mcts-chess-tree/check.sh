#!/bin/bash
B=${1:-/tmp/Mx/new/mcts_tree}
r() { printf "%-28s %s\n" "$*" "$($B "$@" check | awk '{print $NF}')"; }
r chess 1000 3
r chess 1000 3 reuse
r chess 1000 3 hash
r chess 1000 3 policy noise
r chess 300 3 batch=8
r chess 300 3 static uct
r connect_four 1000 3
r connect_four 1000 3 hash
r connect_four 1000 3 reuse

#!/bin/bash
B=$1; G=$2; shift 2
t=${TMPDIR:-/tmp}/cg.$$
a=$(valgrind --tool=callgrind --callgrind-out-file=$t $B $G 2000 3 "$@" 2>&1 | awk '/refs/{gsub(",","",$NF); print $NF}')
b=$(valgrind --tool=callgrind --callgrind-out-file=$t $B $G 1000 3 "$@" 2>&1 | awk '/refs/{gsub(",","",$NF); print $NF}')
rm -f $t
echo "$(basename $(dirname $B)) $G $* : $(( (a-b)/3000 ))"

"""Nodes to prove or refute a few oracle #x leaves with PNS (deterministic, load-independent):
    python bench_pns_nodes.py NODES "oracle:[label],..."
"""
import sys, time
import mavgame
from mavgame.games.gardner_push import oracle_leaves
from mavgame.games.gardner_oracle import load_oracles
from mavgame.games.gardner_prover import Prover
labels = sys.argv[2].split(",")
budget = int(sys.argv[1])
ls = {(l.oracle, l.label): l for l in oracle_leaves(load_oracles()) if l.is_mate}
p = Prover(23, method="pns")
print(mavgame.__file__)
for lab in labels:
    o, l = lab.split(":")
    lf = ls[(o, l)]
    p.clear(); t = time.process_time()
    r = p.mates_in(lf.fen, lf.x, side=lf.mate_side, max_nodes=budget)
    print(f"{lab} {lf.leaf}: {r.status.value} depth {r.mate_plies} nodes {r.nodes} cpu {time.process_time()-t:.2f}", flush=True)

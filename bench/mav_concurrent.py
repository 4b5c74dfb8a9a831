"""MAV-MCTS over many concurrent games (League(concurrent=N), one batched model call per round): leaf evaluations
per second and games per hour with the shipped Connect Four model at N = 1, 8, 32 games at once, the same
simulations per move, one engine thread; ratios to N = 1.

    python bench/mav_concurrent.py                 # N = 1, 8, 32; 32 sims, batch 16; 32 games each
    python bench/mav_concurrent.py --quick         # N = 1, 4; 8 sims, batch 4; 8 games, 8 plies (seconds)

Each run plays the same games (MAV-MCTS against a random player from the shipped openings, both colours, fixed
seeds), so the leaves are the same at every N and only the batching differs; the native evaluator's output cache
is off so that every leaf is generated. Leaf evaluations/s counts the model's requests over the wall time of the
league (the search, the random player and the bookkeeping included).
"""
from __future__ import annotations

import argparse
import time
from typing import Dict, List

from mavgame.agents.mav import mav_mcts_agent
from mavgame.model.inference import MAVModel, shipped_model_path
from mavgame.play.league import League


def run(n: int, sims: int, batch: int, games: int, max_plies, threads: int) -> Dict[str, float]:
    model = MAVModel.load(shipped_model_path("connect_four"), backend="native", threads=threads)
    ag = mav_mcts_agent(model, sims, batch_size=batch, name="mm", cache_size=0)
    ag.evaluator.threads = threads
    lg = League({"mm": ag, "rnd": "random"}, "connect_four", openings=max(1, games // 2), max_plies=max_plies,
                seed=7, concurrent=n)
    t = time.perf_counter()
    res = lg.run(progress=False)
    dt = time.perf_counter() - t
    st = ag.evaluator.stats()
    return {"n": n, "games": len(res.games), "seconds": dt, "leaves": st["requests"], "calls": st["calls"],
            "leaves_per_s": st["requests"] / dt, "games_per_h": 3600.0 * len(res.games) / dt,
            "moves": {g.key: (g.moves, g.result) for g in res.games}}


def main(argv: List[str] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="a small run (N = 1, 4; 8 sims; 8 games of 8 plies)")
    p.add_argument("--n", default=None, help="comma-separated concurrent game counts (default 1,8,32)")
    p.add_argument("--sims", type=int, default=None, help="simulations per move (default 32)")
    p.add_argument("--batch", type=int, default=None, help="leaves per search batch (default 16)")
    p.add_argument("--games", type=int, default=None, help="games per run (default 32)")
    p.add_argument("--threads", type=int, default=1, help="engine threads (default 1)")
    a = p.parse_args(argv)
    ns = [int(x) for x in (a.n or ("1,4" if a.quick else "1,8,32")).split(",")]
    sims = a.sims or (8 if a.quick else 32)
    batch = a.batch or (4 if a.quick else 16)
    games = a.games or (8 if a.quick else 32)
    max_plies = 8 if a.quick else None
    rows = [run(n, sims, batch, games, max_plies, a.threads) for n in ns]
    base = rows[0]
    print(f"MAV-MCTS, shipped Connect Four model, {sims} sims/move, batch {batch}, {games} games, "
          f"{a.threads} thread(s)")
    print(f"{'N':>4} {'games':>6} {'seconds':>8} {'leaves':>7} {'calls':>6} {'leaves/s':>9} {'games/h':>9} "
          f"{'x leaves/s':>10}")
    for r in rows:
        print(f"{r['n']:>4} {r['games']:>6} {r['seconds']:>8.1f} {r['leaves']:>7} {r['calls']:>6} "
              f"{r['leaves_per_s']:>9.1f} {r['games_per_h']:>9.0f} {r['leaves_per_s'] / base['leaves_per_s']:>10.2f}")
    same = all(r["moves"] == base["moves"] for r in rows)
    print(f"same games at every N: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())

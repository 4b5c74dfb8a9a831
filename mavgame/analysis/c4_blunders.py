"""The mistakes an agent made in stored Connect Four games, by the perfect solver (issue 13).

For every move of AGENT in the games of a league or match store (``mavgame match ... --out FILE.sqlite``):
the solver's win / draw / loss value of each legal move; a move whose value is below the best is a mistake
(it turns a win into a draw or a loss, or a draw into a loss).  Mistakes are counted by phase (plies 0-13,
14-27, 28-42) and by kind: a missed immediate win (a four was on the board), an immediate loss allowed (the
opponent can make four at once after the move), or deeper.

    python -m mavgame.analysis.c4_blunders runs/h2h_long5.sqlite mav
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from ..games.connect_four import ConnectFour
from .c4_play_positions import stored_games   # the same checked reading of a results store

PHASES = ((14, "opening"), (28, "middle"), (99, "end"))


def _wins_at_once(st: ConnectFour) -> bool:
    """Can the side to move make four in a row with its next move?"""
    for m in st.legal_moves:
        t = st.copy()
        t.push(m)
        if t.is_terminal() and t.outcome().winner is not None:
            return True
    return False


def mistakes(store: str, agent: str) -> dict:
    """{"moves", "mistakes", by kind, by value change, by phase: [moves, mistakes]} of ``agent``'s moves."""
    out: Counter = Counter()
    phases = {name: [0, 0] for _, name in PHASES}
    for g in stored_games(store, "c4_blunders.py"):
        first, second = g.first, g.second
        if agent not in (first, second):
            continue
        st = ConnectFour()
        for m in g.opening_moves:
            st.push(m)
        for m in g.moves:
            if (first if st.ply % 2 == 0 else second) == agent:
                scores = st.solve(weak=True).move_scores
                best, got = max(scores.values()), scores[m]
                phase = next(name for end, name in PHASES if st.ply < end)
                phases[phase][0] += 1
                out["moves"] += 1
                if got < best:
                    phases[phase][1] += 1
                    out["mistakes"] += 1
                    out[f"value {best:+d} to {got:+d}"] += 1
                    after = st.copy()
                    after.push(m)
                    kind = ("missed immediate win" if _wins_at_once(st) else
                            "immediate loss allowed" if _wins_at_once(after) else "deeper")
                    out[kind] += 1
            st.push(m)
    return dict(out, by_phase=phases)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavgame.analysis.c4_blunders",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("store", help="league / match SQLite store of Connect Four games")
    ap.add_argument("agent", help="the agent's name in the store")
    args = ap.parse_args(argv)
    if not Path(args.store).is_file():
        ap.error(f"no such store: {args.store!r}")
    res = mistakes(args.store, args.agent)
    if not res.get("moves"):
        ap.error(f"no moves of agent {args.agent!r} in {args.store}")
    print(json.dumps(res))
    n, k = res["moves"], res["mistakes"]
    print(f"{args.agent}: {k} mistakes in {n} moves ({k / n:.3f}); " + ", ".join(
        f"{name} {m}/{c} ({m / max(c, 1):.3f})" for name, (c, m) in res["by_phase"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

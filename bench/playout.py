"""Random-playout throughput (games per second, one core): mavgame against OpenSpiel, same run.

    python bench/playout.py                      # every game in the table
    python bench/playout.py --games connect_four --seconds 3

For each game three figures are measured on the same machine in the same run:
  - mavgame C: ``mavgame._core.random_playouts(state, n, seed)``, uniformly random legal moves to
    the end of the game in C (the kind of playout MCTS uses), one thread;
  - mavgame Python loop: the same playouts driven from Python (``legal_actions`` + ``push``), for
    a like-for-like comparison with the OpenSpiel loop;
  - OpenSpiel: ``pyspiel`` (``pip install open_spiel``), ``state.legal_actions()`` +
    ``state.apply_action(...)`` from Python (pyspiel has no bulk playout call).
The ratio printed is mavgame C / OpenSpiel (goal: > 100x) and Python loop / OpenSpiel.  Each figure is the
median of --reps repetitions of about --seconds each, the three sides interleaved, rates from thread CPU time
(every side runs in this thread).  Peer version: open_spiel as installed (printed).

To add a game, add one entry to GAMES: a factory for the mavgame start state, and the
pyspiel.load_game() string of the same game; an optional third element replaces
``random_playouts`` for the mavgame C figure by another bulk playout function of the same
signature.  ``hex_fill`` uses ``mavgame._core.hex_random_playouts``: each playout fills the board
at random and reads the winner off the full board, which has exactly the outcome distribution of
move-by-move random play (the connected player stays connected; a full Hex board has one winner)
but does not stop at the first connection; ``hex`` is the move-by-move playout.  ``connect_four``
uses Connect Four's specialised bitboard playout (``random_playouts(..., specialised=True)``): each
move is a column drawn uniformly among the open ones, so the games have the distribution of
move-by-move play (checked statistically in csrc/tests and tests/).
"""
from __future__ import annotations

import argparse
import functools
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mavgame import _core  # noqa: E402


def _connect_four():
    from mavgame.games.connect_four import ConnectFour
    return ConnectFour()


def _hex11():
    from mavgame.games.hex import Hex
    return Hex(11)


# name: (mavgame start-state factory, pyspiel.load_game string[, C bulk playout function])
GAMES = {
    "connect_four": (_connect_four, "connect_four", functools.partial(_core.random_playouts, specialised=True)),
    "hex": (_hex11, "hex(board_size=11)"),
    "hex_fill": (_hex11, "hex(board_size=11)", _core.hex_random_playouts),
}


def timed(fn, seconds: float):
    """Calls fn() (returning games played) until `seconds` of thread CPU time have passed; returns games/s."""
    games, t0 = 0, time.thread_time()
    while True:
        games += fn()
        dt = time.thread_time() - t0
        if dt >= seconds:
            return games / dt


def mavgame_c(factory, seconds: float, playouts=_core.random_playouts) -> float:
    state = factory()
    seed = [0]
    batch = [1000]

    def run():
        seed[0] += 1
        t = time.perf_counter()
        w0, w1, d, _ = playouts(state, batch[0], seed=seed[0])
        n = batch[0]
        if time.perf_counter() - t < 0.05:
            batch[0] *= 2
        assert w0 + w1 + d == n
        return n

    return timed(run, seconds)


def mavgame_python(factory, seconds: float) -> float:
    rng = random.Random(1)
    start = factory()

    def run():
        s = start.copy()
        while not s.is_terminal():
            acts = s.legal_actions()
            s.push(int(acts[rng.randrange(len(acts))]))
        return 1

    return timed(run, seconds)


def openspiel(name: str, seconds: float):
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game(name)
    rng = random.Random(1)

    def run():
        s = game.new_initial_state()
        while not s.is_terminal():
            acts = s.legal_actions()
            s.apply_action(acts[rng.randrange(len(acts))])
        return 1

    return timed(run, seconds)


def peer_version() -> str:
    try:
        from importlib.metadata import version
        return f"open_spiel {version('open_spiel')} (pyspiel, C++ games driven from Python)"
    except Exception:
        return "open_spiel not installed"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default=",".join(GAMES), help="comma-separated games (default: all)")
    ap.add_argument("--seconds", type=float, default=1.0, help="measuring time per repetition")
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions (median reported)")
    ap.add_argument("--quick", action="store_true", help="0.3 s per repetition, 3 repetitions")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    seconds = 0.3 if args.quick else args.seconds
    print(f"peer: {peer_version()}; median of {args.reps} interleaved repetitions, thread CPU time")
    print(f"{'game':<14} {'mavgame C':>14} {'mavgame py':>14} {'OpenSpiel':>14} {'C/OpenSpiel':>12} "
          f"{'py/OpenSpiel':>13}   (games/s, one core)")
    rows = []
    for name in [g for g in args.games.split(",") if g]:
        if name not in GAMES:
            ap.error(f"unknown game {name!r} (expected some of {', '.join(GAMES)})")
        factory, spiel_name, *playouts = GAMES[name]
        rates = {"c": [], "py": [], "os": []}
        for r in range(max(1, args.reps)):
            order = ("c", "py", "os") if r % 2 == 0 else ("os", "py", "c")
            for side in order:
                if side == "c":
                    rates["c"].append(mavgame_c(factory, seconds, *playouts))
                elif side == "py":
                    rates["py"].append(mavgame_python(factory, seconds))
                else:
                    v = openspiel(spiel_name, seconds)
                    if v is not None:
                        rates["os"].append(v)
        c, py = statistics.median(rates["c"]), statistics.median(rates["py"])
        os_rate = statistics.median(rates["os"]) if rates["os"] else None
        rows.append({"game": name, "mavgame_c": c, "mavgame_python": py, "openspiel": os_rate,
                     "ratio_c": c / os_rate if os_rate else None, "ratio_python": py / os_rate if os_rate else None})
        if os_rate is None:
            print(f"{name:<14} {c:>14,.0f} {py:>14,.0f} {'(no pyspiel)':>14}")
            continue
        print(f"{name:<14} {c:>14,.0f} {py:>14,.0f} {os_rate:>14,.0f} {c / os_rate:>11.0f}x {py / os_rate:>12.1f}x",
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

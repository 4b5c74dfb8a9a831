"""MCTS speed: simulations per second on one core, mavgame against OpenSpiel's C++ MCTSBot, same work.

    python bench/mcts.py                      # Connect Four and chess, both settings
    python bench/mcts.py --games chess --sims 1000 --reps 5
    python bench/mcts.py --quick              # fewer repetitions (the `mavgame bench` default)

Both sides search from the start position with the same number of simulations per search (--sims),
UCT with c = 1.4 (mavgame: its default PUCT-free UCT tree with a uniform prior), no solver, one thread:

- playout: uniform prior and ONE random playout per leaf.  mavgame: ``mcts_playout_evaluator(1,
  specialised=False)``, the generic move-by-move playout over ``legal_actions``/``make`` (the kind
  OpenSpiel runs); the row ``playout*`` repeats mavgame with ``specialised=True`` (Connect Four's bitboard
  playout, which draws a column uniformly among the open ones: same game distribution, faster), labelled as
  such.  Peer: the C++ ``pyspiel.MCTSBot`` with the C++ ``pyspiel.RandomRolloutEvaluator(n_rollouts=1)``.
- constant: an evaluator of constant cost (mavgame: every action valued 0.5, in C), so the time is the
  tree's own.  pyspiel exposes no C++ evaluator of constant cost (RandomRolloutEvaluator(0) crashes, and
  pyspiel.Evaluator cannot be subclassed from Python), so the peer column of this row is OpenSpiel's
  Python MCTSBot with a constant Python evaluator, and the row says so; the like-for-like C++ figure is
  the playout row.

Repetitions of one search each are interleaved (mavgame, OpenSpiel, OpenSpiel, mavgame, ...); the table
gives medians of wall time and of thread CPU time (time.thread_time), the rate from the CPU-time median
and the ratio mavgame / peer of the CPU-time rates.  Two more columns give mavgame's own rate from its median
and from its fastest search; in the constant rows, where the Python peer allows few interleaved repetitions and a
search takes under a millisecond, both come from 15x --reps searches of mavgame's alone.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import mavgame  # noqa: E402
from mavgame import _core  # noqa: E402
from _timing import fmt_rate, interleaved  # noqa: E402

UCT_C = 1.4


def peer_version() -> str:
    try:
        from importlib.metadata import version
        return f"open_spiel {version('open_spiel')} (pyspiel C++ MCTSBot)"
    except Exception:
        return "open_spiel not installed"


def mavgame_search(game: str, evaluator: str, sims: int):
    tree = _core.MCTSTree(game)
    st = mavgame.State(game)
    if evaluator == "constant":
        ev = _core.mcts_constant_evaluator(0.5)
    else:
        ev = _core.mcts_playout_evaluator(1, 0, 1, specialised=(evaluator == "playout*"))

    def one():
        tree.set_root(st)
        tree.search(ev, sims)
        return sims

    return one


def openspiel_cpp_search(game: str, sims: int):
    try:
        import pyspiel
    except ImportError:
        return None
    g = pyspiel.load_game(game)
    ev = pyspiel.RandomRolloutEvaluator(1, 1)
    bot = pyspiel.MCTSBot(g, ev, UCT_C, sims, 1000, False, 1, False)
    st = g.new_initial_state()

    def one():
        bot.mcts_search(st)
        return sims

    return one


def openspiel_python_search(game: str, sims: int):
    try:
        import pyspiel
        from open_spiel.python.algorithms import mcts
    except ImportError:
        return None
    g = pyspiel.load_game(game)

    class Constant(mcts.Evaluator):
        def evaluate(self, state):
            return np.zeros(g.num_players())

        def prior(self, state):
            legal = state.legal_actions()
            return [(a, 1.0 / len(legal)) for a in legal]

    bot = mcts.MCTSBot(g, uct_c=UCT_C, max_simulations=sims, evaluator=Constant(), solve=False,
                       random_state=np.random.RandomState(1))
    st = g.new_initial_state()

    def one():
        bot.mcts_search(st)
        return sims

    return one


def run(games, sims: int, reps: int, quiet: bool = False):
    """Rows of dicts: game, setting, peer, sims, medians and rates; prints the table unless quiet."""
    rows = []
    if not quiet:
        print(f"MCTS, one thread, {sims} simulations per search, median of {reps} interleaved searches; "
              f"peer: {peer_version()}")
        print(f"{'game':13s} {'setting':10s} {'sims':>5s} {'mavgame sims/s':>15s} {'peer':>22s} "
              f"{'peer sims/s':>12s} {'ratio':>8s} {'own median':>11s} {'fastest':>11s}  (rates from thread CPU "
              f"time; wall medians in --json)")
    for game in games:
        settings = ["playout", "playout*", "constant"] if game == "connect_four" else ["playout", "constant"]
        for setting in settings:
            n = sims
            if setting == "constant":
                peer_name, peer = "OpenSpiel Python bot", openspiel_python_search(game, n)
            else:
                peer_name, peer = "OpenSpiel C++ MCTSBot", openspiel_cpp_search(game, n)
            fns = {"mavgame": mavgame_search(game, setting, n)}
            if peer is not None:
                fns["peer"] = peer
            # the Python peer is ~1000x slower: fewer of its repetitions would not change the median much
            res = interleaved(fns, reps if setting != "constant" else max(3, reps // 2))
            ours = n / res["mavgame"][1]
            if setting == "constant":
                # the constant searches take under a millisecond: many more of mavgame's alone (not interleaved)
                # give its own median and fastest search, which short bursts of another tenant's load do not move
                alone = interleaved({"mavgame": fns["mavgame"]}, 15 * reps, warmup=False)["mavgame"]
                own_median, own_best = n / alone[1], n / alone[3]
            else:
                own_median, own_best = ours, n / res["mavgame"][3]
            theirs = n / res["peer"][1] if "peer" in res else None
            row = {"game": game, "setting": setting, "sims": n, "peer": peer_name,
                   "mavgame_wall_s": res["mavgame"][0], "mavgame_cpu_s": res["mavgame"][1],
                   "mavgame_sims_per_s": ours, "peer_sims_per_s": theirs,
                   "peer_wall_s": res["peer"][0] if "peer" in res else None,
                   "peer_cpu_s": res["peer"][1] if "peer" in res else None,
                   "ratio": ours / theirs if theirs else None,
                   "mavgame_own_median_sims_per_s": own_median, "mavgame_best_sims_per_s": own_best}
            rows.append(row)
            if not quiet:
                ratio = f"{row['ratio']:,.1f}x" if theirs else "n/a"
                print(f"{game:13s} {setting:10s} {n:5d} {fmt_rate(ours, ''):>15s} {peer_name:>22s} "
                      f"{fmt_rate(theirs, ''):>12s} {ratio:>8s} {fmt_rate(own_median, ''):>11s} "
                      f"{fmt_rate(own_best, ''):>11s}", flush=True)
    if not quiet:
        print("playout: generic move-by-move playout on both sides; playout*: mavgame's specialised Connect Four "
              "playout against the same OpenSpiel figure; constant: tree overhead, Python peer (pyspiel has no C++ "
              "constant evaluator); own median, fastest: mavgame's median and fastest search (constant rows: "
              "15x --reps of its searches alone)")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default="connect_four,chess")
    ap.add_argument("--sims", type=int, default=1000, help="simulations per search (both sides)")
    ap.add_argument("--reps", type=int, default=9, help="interleaved searches per side (median reported)")
    ap.add_argument("--quick", action="store_true", help="5 repetitions instead of --reps")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args(argv)
    if args.sims < 1 or args.reps < 1:
        ap.error(f"--sims and --reps must be >= 1, got {args.sims} and {args.reps}")
    reps = 5 if args.quick else args.reps
    rows = run([g for g in args.games.split(",") if g], args.sims, reps)
    if args.json:
        import json
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()

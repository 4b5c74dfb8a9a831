"""The AZdb paper's diagnostic plots for this project's checkpoints (matplotlib; needs torch):

- ``openings`` (the paper's Figure 3 and its count of distinct moves): each player's move in each of a set
  of openings at several simulation budgets (1 simulation: the prior's argmax; more: the LCB move,
  :func:`mavgame.az.azdb.lcb_action`, or the most visited), a grid of the moves per opening and player, and
  the mean number of distinct moves the team plays per opening with its 95 % interval (the paper: 1.26,
  2.45 and 1.65 moves at 1, 400 and 100k simulations over 3,233 openings);
- ``puzzle`` (Figures 4 and 19): for one position and each player (or a single AlphaZero), bar plots of
  the prior p over the legal moves, the raw value v of the position after each move (the network's, from
  the mover's view) and the MCTS value Q of each root move, correct moves (the puzzle's solutions) in blue,
  the others in red;
- ``graphs`` (Figures 9 and 10): the interaction graphs Sigma_w, Sigma_b that each run's matchmaker draws
  opponents from at the end of training.

Commands::

    python -m mavgame.analysis.azdb_plots openings --checkpoint runs/team/checkpoint.pt --openings random:3:30 \\
        --sims 1 40 200 --out figs/openings
    python -m mavgame.analysis.azdb_plots puzzle --checkpoint runs/team/checkpoint.pt \\
        --puzzles bench/data/c4_puzzles_300.csv --index 0 --sims 200 --out figs/puzzle0
    python -m mavgame.analysis.azdb_plots graphs --runs runs/mm/psro_s1 runs/mm/psro-cycle_s1 --out figs/graphs

Each writes OUT.png and OUT.json (the numbers drawn).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

__all__ = ["Players", "opening_moves", "puzzle_bars", "main"]


class Players:
    """The players of a checkpoint for the plots: an AZdb team's players (their latents) or one AlphaZero.
    :meth:`prior_value` gives the network's prior over the legal moves and raw value, :meth:`search` the
    MCTS root statistics (actions, visits, Q, U) at ``sims`` simulations."""

    def __init__(self, checkpoint: str, device: str = "cpu"):
        from ..az.train import load_checkpoint
        cfg = load_checkpoint(checkpoint)["config"]
        self.checkpoint, self.device = checkpoint, device
        self.team = int(cfg.get("players", 1)) > 1
        self.count = int(cfg["players"]) if self.team else 1
        self.game = cfg["game"]
        self._searchers: Dict[int, Any] = {}
        if self.team:
            from ..agents.alphazero import AZdbTeam
            self._team = AZdbTeam(checkpoint, 2, device=device)
            self.net = self._team.net
        else:
            from ..agents.alphazero import load_network
            self.net = load_network(checkpoint, device)

    def names(self) -> List[str]:
        return [f"player {j}" for j in range(self.count)] if self.team else ["AlphaZero"]

    def prior_value(self, states: Sequence, player: int = 0):
        """(priors: one array over each state's legal actions, raw values for each state's mover)."""
        import torch

        from .. import _core
        from ..az.azdb import latent_planes
        obs = _core.observation_tensors(list(states))
        if self.team:
            obs = latent_planes(obs, player, self.count)
        with torch.no_grad():
            out = self.net(torch.from_numpy(obs).to(torch.device(self.device)))
        logits, v = out[0].float().cpu().numpy(), out[1].float().cpu().numpy()
        pri = []
        for i, s in enumerate(states):
            lg = logits[i, np.asarray(s.legal_actions(), np.int64)]
            p = np.exp(lg - lg.max())
            pri.append(p / p.sum())
        return pri, v

    def search(self, state, player: int, sims: int):
        """(actions, visits, q, u) of the player's search of ``state`` with ``sims`` simulations."""
        from ..search.mcts import MCTS
        if self.team:
            from ..agents.alphazero import TeamEvaluator
            t = self._team
            ev = TeamEvaluator(self.net, player, self.count, t.lambdas[player], self.device, weights=t.weights[player])
        else:
            from ..agents.alphazero import AZEvaluator
            ev = AZEvaluator(self.net, self.device)
        m = MCTS(ev, num_simulations=int(sims), prior="policy", eps=0.0, fpu=0.0, value_range=(-1.0, 1.0), seed=player)
        r = m.search(state)
        return np.asarray(r.actions), np.asarray(r.visits), np.asarray(r.q), np.asarray(r.u)


def _move(players: Players, state, j: int, sims: int, rule: str) -> int:
    from ..az.azdb import lcb_action
    from ..az.subadditive import PlayerSearch
    if sims <= 1:
        pri, _ = players.prior_value([state], j)
        return int(np.asarray(state.legal_actions())[int(np.argmax(pri[0]))])
    a, n, q, u = players.search(state, j, sims)
    if rule == "lcb":
        return lcb_action(a, n, q, u)
    return PlayerSearch(a, n, q, u).best_action()


def opening_moves(players: Players, openings, sims: Sequence[int], rule: str = "lcb") -> Dict[str, Any]:
    """Each player's move (the game's move string) per opening and simulation budget, and the number of
    distinct moves per opening: mean, 95 % half-width, per budget."""
    out: Dict[str, Any] = {"openings": [o.name for o in openings], "players": players.names(), "rule": rule,
                           "sims": [int(s) for s in sims], "moves": {}, "distinct": {}}
    for s in sims:
        grid = []
        for o in openings:
            st = o.state(players.game)
            grid.append([st.action_to_str(_move(players, st.copy(), j, int(s), rule)) for j in range(players.count)])
        d = np.array([len(set(row)) for row in grid], np.float64)
        half = 1.96 * d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
        out["moves"][str(s)] = grid
        out["distinct"][str(s)] = {"mean": round(float(d.mean()), 3), "ci95": round(float(half), 3)}
    return out


def puzzle_bars(players: Players, state, solutions: Sequence[str], sims: int) -> Dict[str, Any]:
    """Per player: the legal moves, prior, raw value after each move (mover's view) and MCTS Q per move."""
    acts = [int(a) for a in state.legal_actions()]
    children = []
    for a in acts:
        c = state.copy()
        c.push(a)
        children.append(c)
    rows = []
    for j in range(players.count):
        pri, _ = players.prior_value([state], j)
        live = [k for k, c in enumerate(children) if not c.is_terminal()]
        raw = np.full(len(acts), np.nan)
        if live:
            _, v = players.prior_value([children[k] for k in live], j)
            raw[live] = -v                       # the child's mover is the opponent
        for k, c in enumerate(children):
            if c.is_terminal():
                r = c.returns()
                raw[k] = float(r[state.to_move])
        a, n, q, _u = players.search(state.copy(), j, sims)
        qa = {int(x): (float(y) if np.isfinite(y) else None) for x, y in zip(a, q)}
        rows.append({"player": players.names()[j], "prior": [round(float(x), 4) for x in pri[0]],
                     "raw_value": [round(float(x), 4) for x in raw], "q": [qa.get(x) for x in acts],
                     "visits": [int(dict(zip(a.tolist(), n.tolist())).get(x, 0)) for x in acts]})
    return {"position": state.text(), "moves": [state.action_to_str(a) for a in acts],
            "correct": [state.action_to_str(a) in set(solutions) for a in acts], "sims": int(sims), "players": rows}


def _plot_openings(res: Dict[str, Any], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sims = res["sims"]
    fig, axes = plt.subplots(1, len(sims) + 1, figsize=(3.2 * (len(sims) + 1), 0.28 * len(res["openings"]) + 2))
    for ax, s in zip(axes, sims):
        grid = res["moves"][str(s)]
        labels = sorted({m for row in grid for m in row})
        idx = np.array([[labels.index(m) for m in row] for row in grid])
        ax.imshow(idx, aspect="auto", cmap="tab20", interpolation="nearest")
        for i, row in enumerate(grid):
            for j, m in enumerate(row):
                ax.text(j, i, m, ha="center", va="center", fontsize=7)
        ax.set_xticks(range(len(res["players"])), [p.replace("player ", "p") for p in res["players"]])
        ax.set_yticks(range(len(res["openings"])), res["openings"], fontsize=6)
        ax.set_title(f"{s} sim{'s' if s > 1 else ''} ({res['rule'] if s > 1 else 'prior'})", fontsize=9)
    ax = axes[-1]
    means = [res["distinct"][str(s)]["mean"] for s in sims]
    errs = [res["distinct"][str(s)]["ci95"] for s in sims]
    ax.bar(range(len(sims)), means, yerr=errs, color="tab:green", capsize=4)
    ax.set_xticks(range(len(sims)), [str(s) for s in sims])
    ax.set_xlabel("simulations")
    ax.set_ylabel("distinct moves per opening")
    ax.set_ylim(1, len(res["players"]))
    ax.set_title("opening diversity", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_puzzle(res: Dict[str, Any], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = res["players"]
    fig, axes = plt.subplots(3, len(rows), figsize=(3.0 * len(rows) + 0.5, 6.5), squeeze=False)
    colours = ["tab:blue" if c else "tab:red" for c in res["correct"]]
    x = np.arange(len(res["moves"]))
    for j, r in enumerate(rows):
        for i, (key, label) in enumerate((("prior", "prior p"), ("raw_value", "raw value v"), ("q", "MCTS value Q"))):
            ax = axes[i, j]
            vals = np.array([np.nan if v is None else v for v in r[key]], np.float64)
            ax.bar(x, np.nan_to_num(vals), color=colours)
            ax.set_xticks(x, res["moves"], fontsize=7)
            if key != "prior":
                ax.set_ylim(-1.05, 1.05)
                ax.axhline(0, color="k", lw=0.5)
            if j == 0:
                ax.set_ylabel(label)
            if i == 0:
                ax.set_title(r["player"], fontsize=9)
    fig.suptitle(f"{res['position']}  ({res['sims']} simulations; blue: solutions)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_graphs(res: Dict[str, Any], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(res)
    fig, axes = plt.subplots(2, len(names), figsize=(2.3 * len(names) + 0.5, 4.6), squeeze=False)
    for k, name in enumerate(names):
        for i, key in enumerate(("sigma_white", "sigma_black")):
            ax = axes[i, k]
            g = np.asarray(res[name][key])
            ax.imshow(g, vmin=0, vmax=1, cmap="gray")
            for (a, b), v in np.ndenumerate(g):
                ax.text(b, a, f"{v:.2f}", ha="center", va="center", fontsize=6, color="red")
            ax.set_xticks(range(len(g)))
            ax.set_yticks(range(len(g)))
            if i == 0:
                ax.set_title(res[name]["matchmaking"], fontsize=8)
            if k == 0:
                ax.set_ylabel("as white" if i == 0 else "as black")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _write(out: str, res: Dict[str, Any], plot) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out + ".json", "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)
    plot(res, out + ".png")
    print(f"{out}.png, {out}.json")


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mavgame.analysis.azdb_plots", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    o = sub.add_parser("openings", help="each player's move per opening and budget; distinct moves")
    o.add_argument("--checkpoint", required=True)
    o.add_argument("--openings", default="random:3:30", help="random:PLIES:N or a file (default random:3:30)")
    o.add_argument("--opening-seed", type=int, default=0)
    o.add_argument("--sims", type=int, nargs="+", default=[1, 40, 200])
    o.add_argument("--rule", choices=("lcb", "visits"), default="lcb", help="the move of a search (default lcb)")
    z = sub.add_parser("puzzle", help="prior, raw value and Q per move of one puzzle, per player")
    z.add_argument("--checkpoint", required=True)
    z.add_argument("--puzzles", required=True, help="a puzzle file (mavgame.az.puzzles.load_puzzles)")
    z.add_argument("--index", type=int, default=0, help="which puzzle (default 0)")
    z.add_argument("--sims", type=int, default=200)
    g = sub.add_parser("graphs", help="the matchmakers' interaction graphs of AZdb runs")
    g.add_argument("--runs", nargs="+", required=True, help="run folders (OUT of mavgame az --players N)")
    for q in (o, z, g):
        q.add_argument("--out", required=True, help="OUT.png and OUT.json")
        q.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    a = p.parse_args(argv)
    if a.threads:
        import torch
        torch.set_num_threads(int(a.threads))
    if a.what == "graphs":
        from ..az.matchmaking import Matchmaker
        from ..az.train import load_checkpoint
        res = {}
        for run in a.runs:
            d = load_checkpoint(os.path.join(run, "checkpoint.pt"))
            if "matchmaker" not in d:
                raise ValueError(f"{run!r} is not an AZdb team run (no matchmaker in its checkpoint)")
            w, b = Matchmaker.from_state_dict(d["matchmaker"]).interaction_graphs()
            res[os.path.basename(os.path.normpath(run))] = {"matchmaking": d["config"]["matchmaking"],
                                                            "sigma_white": w.round(3).tolist(),
                                                            "sigma_black": b.round(3).tolist()}
        _write(a.out, res, _plot_graphs)
        return 0
    players = Players(a.checkpoint)
    if a.what == "openings":
        if any(s < 1 for s in a.sims):
            raise ValueError(f"--sims must be >= 1, not {a.sims}")
        from .azdb_lookup import openings_arg
        res = opening_moves(players, openings_arg(a.openings, players.game, a.opening_seed), a.sims, a.rule)
        _write(a.out, res, _plot_openings)
        for s in a.sims:
            d = res["distinct"][str(s)]
            print(f"{s} sims: {d['mean']:.2f} +- {d['ci95']:.2f} distinct moves per opening")
        return 0
    from ..az.puzzles import load_puzzles
    ps = load_puzzles(a.puzzles)
    if not 0 <= a.index < len(ps):
        raise ValueError(f"--index {a.index} is not a puzzle of {a.puzzles!r} (it has {len(ps)})")
    pz = ps[a.index]
    if pz.game != players.game:
        raise ValueError(f"puzzle {a.index} is {pz.game}, the checkpoint plays {players.game}")
    _write(a.out, puzzle_bars(players, pz.state(), pz.solutions, a.sims), _plot_puzzle)
    return 0


if __name__ == "__main__":
    sys.exit(main())

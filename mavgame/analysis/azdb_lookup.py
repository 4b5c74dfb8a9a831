"""Build the AZdb per-opening player lookup table (the paper's appendix C.5, Table 3; :mod:`mavgame.az.lookup`):
every player of a team plays every opening, as the first and as the second player, against a reference
opponent, for SEEDS seeds; writes the table (JSON) that ``azdb:...,select=lookup,table=PATH`` plays with,
and prints the leave-one-seed-out evaluation (each player, max-over-latents, the lookup).

    python -m mavgame.analysis.azdb_lookup --team runs/team/checkpoint.pt --sims 40 \\
        --opponent mcts:sims=200 --openings random:4:12 --seeds 4 --out lookup.json

Resumable: each game's result is appended to OUT.games.jsonl as it finishes and a rerun plays only the
games missing there.  The games' seeds are the seed index (the team's searches have no root noise, so a
deterministic opponent plays the same game for every seed: give it randomness, e.g. ``mcts`` playouts).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Dict, Optional, Sequence, Tuple

import numpy as np

__all__ = ["build_table", "openings_arg", "main"]


def openings_arg(arg: str, game: str, seed: int = 0):
    """--openings: random:PLIES:N (N random openings, seeded by ``seed``) or an openings file of ``game``."""
    from ..play.openings import load_openings, random_openings
    if arg.startswith("random:"):
        parts = arg.split(":")
        if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
            raise ValueError(f"--openings random:PLIES:N expected, not {arg!r}")
        return random_openings(game, int(parts[1]), int(parts[2]), seed=seed)
    if os.path.exists(arg):
        return load_openings(game, path=arg)
    raise ValueError(f"--openings must be random:PLIES:N or an openings file, not {arg!r}")


def _done(path: str) -> Dict[Tuple[int, int, int, int], float]:
    out: Dict[Tuple[int, int, int, int], float] = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue          # a torn last line: that game is played again
            out[(int(r["opening"]), int(r["colour"]), int(r["player"]), int(r["seed"]))] = float(r["score"])
    return out


def build_table(team: str, opponent: str, openings, seeds: int, *, sims: int = 40, move: str = "visits",
                games_log: Optional[str] = None, progress: bool = True, max_plies: Optional[int] = None):
    """Play the games and return the :class:`mavgame.az.lookup.LookupTable`: for each opening, colour
    (0: the team's player moves first), player and seed one game of ``azdb:checkpoint=team,player=K`` against
    the agent spec ``opponent``; ``games_log`` (JSONL) keeps finished games for a rerun."""
    from .._progress import tqdm
    from ..agents import make_agent
    from ..agents.alphazero import AZdbAgent
    from ..az.lookup import LookupTable
    from ..play.game_loop import play_game
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ValueError(f"seeds must be an int >= 1, not {seeds!r}")
    from ..az.train import load_checkpoint
    players = int(load_checkpoint(team)["config"].get("players", 1))
    if players < 2:
        raise ValueError(f"{team!r} is a single AlphaZero (players {players}), not an AZdb team")
    agents = [AZdbAgent(team, sims, player=k, move=move, name=f"player{k}") for k in range(players)]
    opp = make_agent(opponent)
    game = agents[0].team.game
    done = _done(games_log) if games_log else {}
    scores = np.full((len(openings), 2, players, seeds), np.nan)
    jobs = [(o, c, k, s) for s in range(seeds) for o in range(len(openings)) for c in (0, 1) for k in range(players)]
    bar = tqdm(total=len(jobs), desc="lookup games", unit="game", disable=not progress)
    log = open(games_log, "a", encoding="utf-8") if games_log else None
    try:
        for (o, c, k, s) in jobs:
            if (o, c, k, s) not in done:
                first, second = (agents[k], opp) if c == 0 else (opp, agents[k])
                rec = play_game(first, second, game, openings[o], seed=s, max_plies=max_plies)
                white = {"1-0": 1.0, "0-1": -1.0, "1/2-1/2": 0.0}[rec.result]
                done[(o, c, k, s)] = white if c == 0 else -white
                if log is not None:
                    log.write(json.dumps({"opening": o, "colour": c, "player": k, "seed": s,
                                          "score": done[(o, c, k, s)], "moves": rec.moves}) + "\n")
                    log.flush()
            scores[o, c, k, s] = done[(o, c, k, s)]
            bar.update(1)
    finally:
        bar.close()
        if log is not None:
            log.close()
    return LookupTable(game, [(op.text, tuple(op.moves)) for op in openings], [op.name for op in openings], scores,
                       {"team": team, "sims": sims, "move": move, "opponent": opponent})


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mavgame.analysis.azdb_lookup", description=__doc__.split("\n\n")[0])
    p.add_argument("--team", required=True, help="an AZdb checkpoint (mavgame az --players N)")
    p.add_argument("--opponent", required=True, help="the reference opponent, an agent spec (the paper: AlphaZero)")
    p.add_argument("--openings", required=True, help="random:PLIES:N or an openings file of the team's game")
    p.add_argument("--opening-seed", type=int, default=0, help="seed of random:PLIES:N (default 0)")
    p.add_argument("--seeds", type=int, default=4, help="games per opening, colour and player (default 4)")
    p.add_argument("--sims", type=int, default=40, help="simulations per move of the team's player (default 40)")
    p.add_argument("--move", default="visits", choices=("visits", "lcb"), help="the player's move rule")
    p.add_argument("--max-plies", type=int, default=None, help="a game reaching this many moves is a draw")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--out", required=True, help="the table (JSON); OUT.games.jsonl keeps the games")
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)
    if a.threads:
        import torch
        torch.set_num_threads(int(a.threads))
    from ..az.lookup import leave_one_seed_out
    from ..az.train import load_checkpoint
    game = load_checkpoint(a.team)["config"]["game"]
    ops = openings_arg(a.openings, game, a.opening_seed)
    table = build_table(a.team, a.opponent, ops, a.seeds, sims=a.sims, move=a.move, games_log=a.out + ".games.jsonl",
                        progress=not a.no_progress, max_plies=a.max_plies)
    if a.seeds >= 2:
        table.meta["leave_one_seed_out"] = leave_one_seed_out(table)
    table.save(a.out)
    ev = table.meta.get("leave_one_seed_out")
    print(f"{a.out}: {len(ops)} openings x 2 colours x {table.players} players x {a.seeds} seeds")
    if ev:
        for k, r in enumerate(ev["players"]):
            print(f"  player {k}: score {r['score']:+.3f} +- {r['score_95']:.3f} (win rate {r['win_rate']:.3f})")
        for name in ("max_over_latents", "lookup"):
            r = ev[name]
            print(f"  {name}: score {r['score']:+.3f} +- {r['score_95']:.3f} (win rate {r['win_rate']:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

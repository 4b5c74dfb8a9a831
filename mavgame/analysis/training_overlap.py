"""How often the positions of a model's games occur in its training data, by move number (the MAV paper's
Figure 8, appendix D: "10 % of the positions played by MAV in evaluation appear in its training data, while
between moves 20 and 50, virtually no position has been seen").

Reads the games of league or match stores (``mavgame league|match ... --out FILE.sqlite``, or their
JSON-lines exports, ``--export FILE.jsonl``), replays each from its start position through the opening and
the agents' moves, and looks every position up in one or more position sets (``mavgame train
--generate-only`` data, ``mavgame.analysis.c4_play_positions`` sets, ...: a split directory with a
``manifest.json``, or a set's root, whose ``train`` split, the positions a model trains on, is read)::

    python -m mavgame.analysis.training_overlap runs/c4-overlap/*.sqlite \\
        --data empty-board=runs/h54-c4data-full --out overlap.json --plot overlap.png

Positions are compared by a canonical key, the state text (for the chess family the FEN's first four fields,
without the move clocks), hashed to 64 bits; with ``mirror`` the key of a position is the smaller of its own
and its mirror image's (Connect Four, tic-tac-toe: ``mavgame.datasets.symmetry``), which is what a model
trained with ``--mirror P`` has seen.  A position counts once per game it occurs in, at its ply (stones
placed, or half-moves, from the start position); positions of the opening (before the agents' first move)
are counted apart, since the agents did not choose them.  Intervals: Wilson 95 % per ply; for the overall
fractions a bootstrap over games (positions of one game are not independent).

The JSON holds the totals, the fractions by ply and by the game's phases (``GameInfo.phases``), per data set
and per agent (the positions where it was to move); the PNG draws the fraction by ply.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import numpy as np

__all__ = ["DataSource", "canonical_key", "key_hash", "load_data", "read_games", "game_positions",
           "overlap", "plot", "main"]

_Z95 = 1.959963984540054


def canonical_key(game: str, text: str, mirror: bool = False) -> str:
    """The key a position is compared by: its state text (chess family: the FEN without its two clocks);
    with ``mirror`` the smaller of its key and its mirror image's. ValueError naming the game when
    ``mirror`` is asked for a game without a mirror symmetry, or the text when it is not a state text."""
    from ..games import registry
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"not a {game} state text: {text!r}")
    if registry.in_family(game, "chess"):
        fields = text.split()
        if len(fields) < 4:
            raise ValueError(f"not a FEN of {game}: {text!r}")
        return " ".join(fields[:4])
    if not mirror:
        return text
    from ..datasets.symmetry import mirror_state_text
    return min(text, mirror_state_text(game, text))


def key_hash(key: str) -> int:
    """64-bit hash of a canonical key (BLAKE2b; collisions among a few million keys are ~1e-7 likely)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little")


@dataclass
class DataSource:
    """One position set's keys: ``exact`` (state keys) and ``mirror`` (mirror-canonical keys, or None for a
    game without a mirror), with the records read and their plies' distinct counts."""

    name: str
    path: str
    game: str
    records: int = 0
    exact: Set[int] = field(default_factory=set)
    mirror: Optional[Set[int]] = None
    distinct_by_ply: Dict[int, int] = field(default_factory=dict)

    def summary(self) -> dict:
        return {"name": self.name, "path": self.path, "records": self.records, "distinct": len(self.exact),
                "distinct_mirror": None if self.mirror is None else len(self.mirror),
                "distinct_by_ply": {str(k): v for k, v in sorted(self.distinct_by_ply.items())}}


def _has_mirror(game: str) -> bool:
    from ..datasets.symmetry import mirror_games
    return game in mirror_games()


def _split_dirs(path: Path) -> List[Path]:
    """The split directories of ``path``: itself when it has a manifest, else its ``train`` split."""
    from ..datasets.records import MANIFEST
    if (path / MANIFEST).is_file():
        return [path]
    if (path / "train" / MANIFEST).is_file():
        return [path / "train"]
    raise ValueError(f"--data {str(path)!r}: not a position set (no {MANIFEST} in it nor in its train/)")


def load_data(spec: str, game: Optional[str] = None) -> DataSource:
    """The keys of the position set ``spec`` (``PATH`` or ``NAME=PATH``; a set root stands for its train
    split). ValueError naming the path when it is not a position set or holds another game than ``game``."""
    from ..datasets.store import PositionStore
    name, sep, path = spec.partition("=")
    if not sep:
        name, path = Path(spec).name, spec
    if not name or not path:
        raise ValueError(f"--data {spec!r}: expected PATH or NAME=PATH")
    src: Optional[DataSource] = None
    for d in _split_dirs(Path(path)):
        store = PositionStore(d)
        if game is not None and store.game != game:
            raise ValueError(f"--data {str(d)!r}: a {store.game!r} position set, the games are {game!r}")
        if src is None:
            src = DataSource(name, path, store.game, mirror=set() if _has_mirror(store.game) else None)
        seen_ply: Dict[int, Set[int]] = {}
        for rec in store:
            src.records += 1
            h = key_hash(canonical_key(store.game, rec["state"]))
            if h not in src.exact:
                src.exact.add(h)
                ply = rec.get("ply")
                if isinstance(ply, int):
                    seen_ply.setdefault(ply, set()).add(h)
            if src.mirror is not None:
                src.mirror.add(key_hash(canonical_key(store.game, rec["state"], mirror=True)))
        for ply, keys in seen_ply.items():
            src.distinct_by_ply[ply] = src.distinct_by_ply.get(ply, 0) + len(keys)
    assert src is not None
    return src


def read_games(paths: Sequence[str]):
    """The games (:class:`mavgame.play.records.GameRecord`) of league / match stores (``.sqlite``) and
    JSON-lines results files (``.jsonl``), in file then key order. ValueError naming the file when it is
    missing, not a store, or holds a refused record."""
    from ..play.store import ResultStore, StoreError, read_jsonl
    out = []
    for p in paths:
        if not Path(p).is_file():
            raise ValueError(f"no such games file: {p!r}")
        if p.endswith(".jsonl"):
            _header, recs, _errors, refused = read_jsonl(p)
            if refused:
                line, why = refused[0]
                raise ValueError(f"{p}: line {line} refused: {why}")
            out.extend(sorted((r for _, r in recs), key=lambda r: r.key))
            continue
        try:
            with ResultStore(p, create=False) as st:
                recs, refused = st.games()
        except StoreError as e:
            raise ValueError(str(e)) from None
        if refused:
            raise ValueError(refused[0])
        out.extend(sorted(recs, key=lambda r: r.key))
    if not out:
        raise ValueError(f"no games in {', '.join(map(repr, paths))}")
    games = {r.game for r in out}
    if len(games) > 1:
        raise ValueError(f"games of several kinds ({', '.join(sorted(games))}) in {', '.join(paths)}")
    return out


def game_positions(rec) -> Iterator[Tuple[int, str, Optional[str], bool]]:
    """(ply, state text, agent to move or None at the end, opening?) for every position of a game, from its
    start position to its last (the finished position included)."""
    from .. import _core
    s = _core.State(rec.game, rec.start, rec.board_size, rec.flags)
    n_open = len(rec.opening_moves)
    moves = list(rec.opening_moves) + list(rec.moves)
    for i in range(len(moves) + 1):
        live = not s.is_terminal() and i < len(moves)
        mover = None
        if live and i >= n_open:
            mover = (rec.first, rec.second)[s.to_move]
        yield s.ply, s.text(), mover, i < n_open
        if not live:
            break
        s.push(moves[i])


def _wilson(k: int, n: int) -> Tuple[Optional[float], Optional[float]]:
    if n == 0:
        return None, None
    p = k / n
    d = 1 + _Z95 ** 2 / n
    c = (p + _Z95 ** 2 / (2 * n)) / d
    h = _Z95 * math.sqrt(p * (1 - p) / n + _Z95 ** 2 / (4 * n * n)) / d
    return round(max(0.0, c - h), 4), round(min(1.0, c + h), 4)


def _bootstrap(hits: np.ndarray, totals: np.ndarray, n_boot: int, seed: int) -> Tuple[Optional[float], ...]:
    """(fraction, low, high): sum(hits) / sum(totals) with a 95 % bootstrap interval over the rows (games)."""
    tot = int(totals.sum())
    if tot == 0:
        return None, None, None
    frac = float(hits.sum()) / tot
    if len(totals) < 2 or n_boot <= 0:
        return round(frac, 4), None, None
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(totals), size=(n_boot, len(totals)))
    h, t = hits[idx].sum(axis=1), totals[idx].sum(axis=1)
    fr = h[t > 0] / t[t > 0]
    lo, hi = np.quantile(fr, [0.025, 0.975])
    return round(frac, 4), round(float(lo), 4), round(float(hi), 4)


def _cell(k: int, n: int) -> dict:
    lo, hi = _wilson(k, n)
    return {"in_data": k, "fraction": None if n == 0 else round(k / n, 4), "low": lo, "high": hi}


def overlap(games: Sequence, sources: Sequence[DataSource], *, n_boot: int = 2000, seed: int = 0) -> dict:
    """The overlap report (see the module docstring) of ``games`` against the union of ``sources``."""
    from ..games import registry
    if not games:
        raise ValueError("no games to analyse")
    if not sources:
        raise ValueError("no position set to compare with (give at least one --data)")
    game = games[0].game
    for s in sources:
        if s.game != game:
            raise ValueError(f"--data {s.path!r}: a {s.game!r} position set, the games are {game!r}")
    mirror = all(s.mirror is not None for s in sources)
    exact_all = set().union(*(s.exact for s in sources))
    mirror_all = set().union(*(s.mirror for s in sources)) if mirror else set()
    kinds = ["exact"] + (["mirror"] if mirror else [])
    phases = list(registry.get(game).phases or ())
    # per game and category (all positions, played positions, one per phase): [positions, exact, mirror]
    cats = ["all", "played"] + [f"phase:{name}" for name, _, _ in phases]
    per_game = np.zeros((len(games), len(cats), 3), dtype=np.int64)
    by_ply: Dict[int, Dict[str, int]] = {}
    agents: Dict[str, Dict[int, List[int]]] = {}
    distinct: Dict[int, Tuple[bool, bool]] = {}
    for g, rec in enumerate(games):
        for ply, text, mover, opening in game_positions(rec):
            k = key_hash(canonical_key(game, text))
            hit = np.array([1, k in exact_all,
                            mirror and key_hash(canonical_key(game, text, mirror=True)) in mirror_all],
                           dtype=np.int64)
            distinct[k] = (bool(hit[1]), bool(hit[2]))
            c = by_ply.setdefault(ply, {"positions": 0, "opening": 0, "exact": 0, "mirror": 0,
                                        **{f"src:{s.name}": 0 for s in sources}})
            c["positions"] += 1
            c["opening"] += opening
            c["exact"] += int(hit[1])
            c["mirror"] += int(hit[2])
            for s in sources:
                c[f"src:{s.name}"] += k in s.exact
            per_game[g, 0] += hit
            if not opening:
                per_game[g, 1] += hit
                for j, (_, lo, hi) in enumerate(phases):
                    if lo <= ply <= hi:
                        per_game[g, 2 + j] += hit
            if mover is not None:
                a = agents.setdefault(mover, {}).setdefault(ply, [0, 0, 0])
                for j in range(3):
                    a[j] += int(hit[j])

    def boot(cat: int) -> dict:
        out = {"positions": int(per_game[:, cat, 0].sum())}
        for j, kind in enumerate(kinds, 1):
            f, lo, hi = _bootstrap(per_game[:, cat, j], per_game[:, cat, 0], n_boot, seed + 10 * cat + j)
            out[kind] = {"fraction": f, "low": lo, "high": hi}
        return out

    n_distinct = max(1, len(distinct))
    overall = {"all": boot(0), "played": boot(1),
               "distinct": {"positions": len(distinct),
                            **{kind: round(sum(v[j] for v in distinct.values()) / n_distinct, 4)
                               for j, kind in enumerate(kinds)}}}
    phase_rows = [{"phase": name, "first_ply": lo, "last_ply": hi, **boot(2 + j)}
                  for j, (name, lo, hi) in enumerate(phases)]
    plies = []
    for ply in sorted(by_ply):
        c = by_ply[ply]
        row = {"ply": ply, "positions": c["positions"], "opening": c["opening"]}
        for kind in kinds:
            row[kind] = _cell(c[kind], c["positions"])
        row["by_source"] = {s.name: c[f"src:{s.name}"] for s in sources}
        plies.append(row)
    agent_rows = {}
    for name, d in sorted(agents.items()):
        n = sum(v[0] for v in d.values())
        row = {"positions_to_move": n}
        for j, kind in enumerate(kinds, 1):
            row[kind] = _cell(sum(v[j] for v in d.values()), n)
        row["by_ply"] = [{"ply": p, "positions": v[0], **{kind: v[j] for j, kind in enumerate(kinds, 1)}}
                         for p, v in sorted(d.items())]
        agent_rows[name] = row
    return {"game": game, "games": len(games), "mirror": mirror,
            "agents_in_games": sorted({r.first for r in games} | {r.second for r in games}),
            "data": [s.summary() for s in sources],
            "data_distinct": len(exact_all), "data_distinct_mirror": len(mirror_all) if mirror else None,
            "overall": overall, "phases": phase_rows, "by_ply": plies, "by_agent": agent_rows,
            "interval": "per ply: Wilson 95 %; overall and phases: bootstrap over games, 95 %"}


def plot(report: dict, path: str, title: Optional[str] = None) -> None:
    """The fraction of positions in the training data by ply (exact and, where the game has one, with its
    mirror), with Wilson 95 % bands (plies of at least 10 positions), one thin line per agent (positions it
    was to move), and the positions per ply below. Needs matplotlib (``pip install mavgame[plot]``)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("training_overlap: --plot needs matplotlib (pip install matplotlib)") from None
    rows = report["by_ply"]
    x = [r["ply"] for r in rows]
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    styles = {"exact": ("C0", "-", "state as played"), "mirror": ("C1", "--", "state or its mirror image")}
    for kind in ("exact", "mirror") if report["mirror"] else ("exact",):
        color, ls, label = styles[kind]
        ax.plot(x, [r[kind]["fraction"] for r in rows], color=color, ls=ls, lw=2, label=label)
        band = [r for r in rows if r["positions"] >= 10]     # Wilson bands where a ply has 10 positions
        ax.fill_between([r["ply"] for r in band], [r[kind]["low"] for r in band],
                        [r[kind]["high"] for r in band], color=color, alpha=0.18, lw=0)
    kind = "mirror" if report["mirror"] else "exact"
    for i, (name, a) in enumerate(report["by_agent"].items()):
        pts = [(p["ply"], p[kind] / p["positions"]) for p in a["by_ply"] if p["positions"] >= 5]
        if pts:
            ax.plot(*zip(*pts), color=f"C{i + 2}", lw=0.9, marker=".", ms=3,
                    label=f"{name} to move ({'mirror' if kind == 'mirror' else 'exact'})")
    n_open = max((r["ply"] for r in rows if r["opening"]), default=None)
    if n_open is not None:
        ax.axvspan(min(x) - 0.5, n_open + 0.5, color="0.9", lw=0, zorder=0, label="opening (not chosen)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("fraction in the training data")
    ov = report["overall"]["played"]
    ax.set_title(title or f"{report['game']}: {report['games']} games; positions played in the data: "
                          f"{ov['exact']['fraction']:.3f}" + (f" ({ov['mirror']['fraction']:.3f} with mirror)"
                                                               if report["mirror"] else ""), fontsize=10)
    ax.legend(fontsize=7, loc="center right")
    ax.grid(alpha=0.3)
    ax2.bar(x, [r["positions"] for r in rows], color="0.5")
    ax2.set_xlabel("ply (stones on the board / half-moves played)")
    ax2.set_ylabel("positions")
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _print_summary(rep: dict) -> None:
    ov = rep["overall"]
    kinds = ["exact"] + (["mirror"] if rep["mirror"] else [])

    def fmt(d: dict) -> str:
        return "  ".join(f"{k} {d[k]['fraction']:.4f} [{d[k]['low']}, {d[k]['high']}]" for k in kinds
                         if d[k]["fraction"] is not None)
    print(f"{rep['games']} games, {ov['all']['positions']} positions ({ov['played']['positions']} after the "
          f"openings, {ov['distinct']['positions']} distinct); data: {rep['data_distinct']} distinct positions")
    print(f"in the data, positions played: {fmt(ov['played'])}")
    print(f"in the data, all positions:    {fmt(ov['all'])}")
    for ph in rep["phases"]:
        if ph["positions"]:
            print(f"  {ph['phase']:>8} (plies {ph['first_ply']}-{ph['last_ply']}, {ph['positions']} played): "
                  f"{fmt(ph)}")
    print("ply  positions  " + "  ".join(f"{k:>7}" for k in kinds))
    for r in rep["by_ply"]:
        print(f"{r['ply']:>3}  {r['positions']:>9}  " + "  ".join(f"{r[k]['fraction']:7.4f}" for k in kinds))


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavgame.analysis.training_overlap",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("games", nargs="+", help="league / match stores (.sqlite) or their JSON-lines exports (.jsonl)")
    ap.add_argument("--data", action="append", required=True, metavar="[NAME=]PATH",
                    help="a position set the model trained on (a split directory, or a set root: its train "
                         "split); repeat for each part of the training data")
    ap.add_argument("--out", required=True, help="the JSON report to write")
    ap.add_argument("--plot", help="also draw the fraction by ply to this PNG (needs matplotlib)")
    ap.add_argument("--title", help="the plot's title (default: the overall figures)")
    ap.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples over games (default 2000)")
    ap.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    args = ap.parse_args(argv)
    if args.bootstrap < 0:
        ap.error(f"--bootstrap {args.bootstrap}: must be >= 0")
    try:
        games = read_games(args.games)
        sources = [load_data(spec, games[0].game) for spec in args.data]
        names = [s.name for s in sources]
        if len(set(names)) != len(names):
            raise ValueError(f"--data: two sets named alike ({', '.join(names)}); name them NAME=PATH")
        rep = overlap(games, sources, n_boot=args.bootstrap, seed=args.seed)
    except (ValueError, FileNotFoundError) as e:
        print(f"training_overlap: {e}", file=sys.stderr)
        return 2
    rep["games_files"] = list(args.games)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(rep, indent=1) + "\n", encoding="utf-8")
    _print_summary(rep)
    if args.plot:
        plot(rep, args.plot, args.title)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The MAV paper's Stockfish protocol: skill levels 0-20 at 2 s per move, and external ratings of the
levels to calibrate a league's Elo against.

    >>> from mavgame.engines.stockfish_levels import paper_stockfish_agents, stockfish_anchors
    >>> agents = paper_stockfish_agents([0, 5, 10])     # {"sf-skill0": "stockfish:skill=0,movetime=2000", ...}
    >>> stockfish_anchors(agents, "sf-2023")            # {"sf-skill5": 2203.7, "sf-skill10": 2788.3}

``mavgame league --stockfish-levels 0-20`` adds those agents; one such agent is also the spec
``stockfish:preset=paper,level=L`` (:class:`mavgame.agents.engines.StockfishAgent`).  ``--anchor-stockfish
TABLE`` calibrates the Elo table on the levels that TABLE rates (a least-squares line, see
:func:`mavgame.play.elo.calibrate`; the table footer names the anchors and the fitted line).

The tables are published measurements, each under its own conditions, not ratings of 2 s per move
on this machine: use them to put a league on a familiar scale, and say which table you used.

- ``"sf-2023"``: Stockfish master of January 2023 at skill levels 5-19, rated with Ordo against
  versions of the Stash engine ranked at CCRL (Stockfish pull request #4341, "Update UCI_Elo
  parameterization", which fitted the UCI_Elo formula of Stockfish 16 to them).  Levels 0-4 of that
  table are not transcribed here.
  The same fit is in Stockfish's source since (``Skill``: UCI_Elo 1320-3190 mapped to levels 0-19 by
  ``((37.2473 e - 40.8525) e + 22.2943) e - 0.311438``); inverted, it puts levels 5-19 within 28 Elo of
  the values here (tested).
- ``"sf7-2016"``: Stockfish 7 at every level 0-20, 500 games per level at 4 min + 2 s against
  engines of known CCRL rating (Stockfish pull request #758, "Add support for UCI_LimitStrength": a
  contributor's measurement, posted in the pull request, which was closed unmerged; rounded, about
  +-22 Elo per level).  Stockfish has changed much since version 7: an old, approximate scale.
"""
from __future__ import annotations

from typing import Dict, Iterable, Mapping, Optional

__all__ = ["PAPER_MOVETIME_MS", "PAPER_LEVELS", "EXTERNAL_RATINGS", "TABLE_SOURCES", "paper_stockfish_agents",
           "stockfish_anchors", "parse_levels"]

PAPER_MOVETIME_MS = 2000
PAPER_LEVELS = tuple(range(21))

EXTERNAL_RATINGS: Dict[str, Dict[int, float]] = {
    "sf-2023": {5: 2203.7, 6: 2363.2, 7: 2499.5, 8: 2596.2, 9: 2702.8, 10: 2788.3, 11: 2855.5, 12: 2923.1,
                13: 2972.9, 14: 3024.8, 15: 3069.5, 16: 3111.2, 17: 3141.3, 18: 3170.3, 19: 3191.1},
    "sf7-2016": {0: 1264, 1: 1384, 2: 1513, 3: 1633, 4: 1746, 5: 1830, 6: 1893, 7: 1966, 8: 2058, 9: 2150,
                 10: 2204, 11: 2265, 12: 2311, 13: 2381, 14: 2454, 15: 2504, 16: 2578, 17: 2655, 18: 2714,
                 19: 2775, 20: 3367},
}
TABLE_SOURCES = {
    "sf-2023": "https://github.com/official-stockfish/Stockfish/pull/4341 (Stockfish master, Jan 2023; "
               "Ordo vs CCRL-ranked Stash versions)",
    "sf7-2016": "https://github.com/official-stockfish/Stockfish/pull/758 (Stockfish 7; 4 min + 2 s, "
                "500 games per level)",
}


def parse_levels(text: str) -> list:
    """"0-20", "0,5,10" or "0-4,10" -> sorted distinct levels in 0..20 (ValueError naming a bad one)."""
    out = set()
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if lo > hi:
                    raise ValueError
                rng: Iterable[int] = range(lo, hi + 1)
            else:
                rng = [int(part)]
        except ValueError:
            raise ValueError(f"Stockfish levels {text!r}: {part!r} is not a level or a range like 0-20") from None
        for v in rng:
            if not 0 <= v <= 20:
                raise ValueError(f"Stockfish levels {text!r}: level {v} is not in 0..20")
            out.add(v)
    return sorted(out)


def paper_stockfish_agents(levels: Iterable[int] = PAPER_LEVELS, movetime_ms: int = PAPER_MOVETIME_MS,
                           path: Optional[str] = None) -> Dict[str, str]:
    """{``sf-skillL``: agent spec} for each level: Stockfish at Skill Level L, ``movetime_ms`` per move
    (the paper: 2000)."""
    if int(movetime_ms) < 1:
        raise ValueError(f"movetime must be >= 1 ms, not {movetime_ms}")
    out = {}
    for lv in levels:
        if not 0 <= int(lv) <= 20:
            raise ValueError(f"Stockfish skill level must lie in 0..20, not {lv}")
        spec = f"stockfish:skill={int(lv)},movetime={int(movetime_ms)}"
        out[f"sf-skill{int(lv)}"] = spec + (f",path={path}" if path else "")
    return out


def stockfish_anchors(agents: Mapping[str, str], table: str = "sf-2023") -> Dict[str, float]:
    """{agent name: external rating} for the Stockfish agents (spec ``stockfish:skill=L``, or
    ``level=L`` as in ``stockfish:preset=paper,level=L``, without an ``elo`` or depth/nodes limit) whose
    level ``table`` rates."""
    if table not in EXTERNAL_RATINGS:
        raise ValueError(f"unknown Stockfish rating table {table!r} (have {', '.join(EXTERNAL_RATINGS)})")
    from ..agents.spec import parse_spec
    ratings = EXTERNAL_RATINGS[table]
    out = {}
    for name, spec in agents.items():
        if not isinstance(spec, str):
            continue
        kind, kw = parse_spec(spec)
        skill = kw.get("skill", kw.get("level"))
        if kind != "stockfish" or skill is None or kw.get("elo") is not None:
            continue
        if kw.get("nodes") is not None or kw.get("depth") is not None:
            continue
        lv = int(skill)
        if lv in ratings:
            out[name] = float(ratings[lv])
    return out

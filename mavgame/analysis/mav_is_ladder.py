"""The MAV-IS ladder: every search shape against the same model's searchless MAV, pooled over match stores.

    python -m mavgame.analysis.mav_is_ladder --series 'r17=runs/ladder17/m47_*.sqlite,runs/ladder17/g53/league.sqlite' \
        --tokens r17=runs/ladder17/g53/results.json --out experiments/2026-11-29-c4-mav-is-r17/mav_is_ladder.png

Each --series LABEL=STORE[,STORE...] (globs allowed) names result stores of `mavgame match` / `mavgame league`
/ `bench/mav_is_league.py`. From each store's header it reads the agents' specs: every game between the
reference agent (--ref, default "mav") and a `mav_is:breadth=B,depth=D,...` agent counts for that agent's
shape, keyed by breadth, depth and `copy_names` (written "2x2+names"); other games are left out. Shapes pool
their games over the stores (e.g. two opening sets). For each shape: wins / draws / losses against the
reference, the score, and the Elo difference -400 log10(1/s - 1) with a 95 % interval from the score's
standard error (draws as half wins). --tokens LABEL=results.json takes each shape's prompt + response tokens
a move (and the MAV's) from a `bench/mav_is_league.py` results file. Prints one markdown table per series;
--out draws Elo over the reference against tokens a move, one line per series.
"""
from __future__ import annotations

import argparse
import glob
import json
import math
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

Shape = Tuple[int, int, bool]   # breadth, depth, copy_names


def shape_of(spec: str) -> Optional[Shape]:
    """(breadth, depth, copy_names) of a `mav_is:` spec, with the agent's own defaults; None for any other
    agent."""
    from ..agents import agent_kind, parse_spec

    kind, kv = parse_spec(spec)
    if kind != "mav_is":
        return None
    default = {k: o.default for k, o in agent_kind("mav_is").options.items()}
    try:
        b, d = int(kv.get("breadth", default["breadth"])), int(kv.get("depth", default["depth"]))
    except ValueError:
        raise ValueError(f"agent spec {spec!r}: breadth and depth must be integers") from None
    return b, d, str(kv.get("copy_names", default["copy_names"])).lower() in ("1", "true")


def shape_name(s: Shape) -> str:
    return f"{s[0]}x{s[1]}" + ("+names" if s[2] else "")


def score_elo(w: int, d: int, l: int, z: float = 1.96) -> Dict[str, float]:
    """Score and Elo difference with a z-interval from the score's standard error (draws as half wins)."""
    n = w + d + l
    if n == 0:
        raise ValueError("no games")
    s = (w + 0.5 * d) / n
    se = math.sqrt(max((w + 0.25 * d) / n - s * s, 0.0) / n)

    def elo(x: float) -> float:
        x = min(max(x, 1e-6), 1 - 1e-6)
        return -400.0 * math.log10(1.0 / x - 1.0) + 0.0      # + 0.0: no "-0" in the tables

    return {"games": n, "score": s, "elo": elo(s), "low": elo(s - z * se), "high": elo(s + z * se)}


def expand(stores: str) -> List[str]:
    out: List[str] = []
    for part in (p.strip() for p in stores.split(",")):
        if not part:
            continue
        hits = sorted(glob.glob(part)) if any(c in part for c in "*?[") else [part]
        if not hits:
            raise ValueError(f"{part!r}: no store matches")
        out += hits
    return out


def ladder(stores: List[str], ref: str = "mav") -> Dict[Shape, Dict[str, float]]:
    """{shape: {"wins", "draws", "losses", "games", "score", "elo", "low", "high", "stores"}} over the stores."""
    from ..play.store import read_league_store

    counts: Dict[Shape, List[int]] = {}
    for path in stores:
        header, games = read_league_store(path)
        agents: Dict[str, str] = header["agents"]
        if ref not in agents:
            raise ValueError(f"{path}: no agent {ref!r} (agents: {', '.join(agents)})")
        shapes = {name: shape_of(spec) for name, spec in agents.items()}
        seen = set()
        for g in games:
            if ref not in (g.first, g.second):
                continue
            other = g.second if g.first == ref else g.first
            sh = shapes.get(other)
            if sh is None:
                continue
            seen.add(sh)
            c = counts.setdefault(sh, [0, 0, 0, 0])
            if g.result == "1/2-1/2":
                c[1] += 1
            elif (g.result == "1-0") == (g.first == other):
                c[0] += 1
            else:
                c[2] += 1
        for sh in seen:
            counts[sh][3] += 1
    rows = {}
    for sh in sorted(counts, key=lambda s: (s[1], s[0], s[2])):
        w, d, l, k = counts[sh]
        rows[sh] = {"wins": w, "draws": d, "losses": l, "stores": k, **score_elo(w, d, l)}
    return rows


def token_costs(path: str) -> Tuple[Dict[Tuple[int, int], float], Optional[float]]:
    """({(breadth, depth): tokens a move}, the MAV's tokens a move) from a bench/mav_is_league.py results file."""
    res = json.loads(Path(path).read_text())
    agents = res.get("agents", {})
    out: Dict[Tuple[int, int], float] = {}
    mav = None
    for row in res.get("rows", []):
        if "tokens" not in row:
            continue
        sh = shape_of(row.get("spec") or agents.get(row["agent"], ""))
        if sh is not None:
            out[(sh[0], sh[1])] = float(row["tokens"])
        elif row["agent"] == res.get("anchor", "mav"):
            mav = float(row["tokens"])
    return out, mav


def markdown(label: str, rows: Dict[Shape, Dict[str, float]], tokens: Dict[Tuple[int, int], float]) -> str:
    lines = [f"| {label}: shape | tokens a move | W / D / L | score | Elo over the reference [95 %] |",
             "| --- | --- | --- | --- | --- |"]
    for sh, r in rows.items():
        tk = tokens.get((sh[0], sh[1]))
        lines.append(f"| {shape_name(sh)} | {tk:,.0f} | " if tk is not None else f"| {shape_name(sh)} | – | ")
        lines[-1] += (f"{r['wins']} / {r['draws']} / {r['losses']} | {100 * r['score']:.1f} % | "
                      f"{r['elo']:+.0f} [{r['low']:+.0f}, {r['high']:+.0f}] |")
    return "\n".join(lines)


def plot(series: Dict[str, Tuple[Dict[Shape, Dict[str, float]], Dict[Tuple[int, int], float], Optional[float]]],
         path: str, ref: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    n = len(series)
    mav_drawn = False
    for k, (label, (rows, tokens, mav_tokens)) in enumerate(series.items()):
        shift = 1.0 + 0.025 * (k - (n - 1) / 2)          # keep the error bars of the series apart
        pts = [(tokens[(s[0], s[1])] * shift, r, s) for s, r in rows.items() if (s[0], s[1]) in tokens]
        if not pts:
            continue
        pts.sort(key=lambda p: (p[0], p[2][2]))
        x = [p[0] for p in pts]
        y = [p[1]["elo"] for p in pts]
        err = [[p[1]["elo"] - p[1]["low"] for p in pts], [p[1]["high"] - p[1]["elo"] for p in pts]]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=label, color=f"C{k}")
        for xi, yi, (_, _, s) in zip(x, y, pts):
            ax.annotate(shape_name(s), (xi, yi), textcoords="offset points", xytext=(4, 4), fontsize=7,
                        color=f"C{k}")
        if mav_tokens and not mav_drawn:
            ax.plot([mav_tokens], [0.0], marker="D", color="black", ls="none", label=f"{ref} (0 by definition)")
            mav_drawn = True
    ax.axhline(0.0, color="grey", lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("prompt + response tokens a move")
    ax.set_ylabel(f"Elo over {ref} (the same model, searchless)")
    ax.set_title("MAV-IS against its own searchless MAV, Connect Four")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavgame.analysis.mav_is_ladder",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--series", action="append", required=True, metavar="LABEL=STORE[,STORE...]",
                    help="a series' result stores (globs allowed); repeat for more series")
    ap.add_argument("--tokens", action="append", default=[], metavar="LABEL=RESULTS_JSON",
                    help="token costs of a series, from bench/mav_is_league.py's results.json")
    ap.add_argument("--ref", default="mav", help="the reference agent's name in every store (default: mav)")
    ap.add_argument("--out", default=None, help="PNG of Elo against tokens (needs --tokens)")
    args = ap.parse_args(argv)
    try:
        series = {}
        for item in args.series:
            label, eq, stores = item.partition("=")
            if not eq or not label or not stores:
                raise ValueError(f"--series {item!r}: expected LABEL=STORE[,STORE...]")
            series[label] = (ladder(expand(stores), args.ref), {}, None)
        for item in args.tokens:
            label, eq, path = item.partition("=")
            if not eq or label not in series:
                raise ValueError(f"--tokens {item!r}: expected LABEL=RESULTS_JSON with a LABEL of --series "
                                 f"({', '.join(series)})")
            toks, mav = token_costs(path)
            series[label] = (series[label][0], toks, mav)
        for label, (rows, toks, _) in series.items():
            if not rows:
                raise ValueError(f"series {label!r}: no game between {args.ref!r} and a mav_is agent")
            print(markdown(label, rows, toks))
            print()
        if args.out:
            if not any(toks for _, toks, _ in series.values()):
                raise ValueError(f"--out {args.out}: the plot is against tokens a move; give --tokens for a series")
            plot(series, args.out, args.ref)
            print(f"wrote {args.out}")
    except (ValueError, OSError) as e:
        print(f"mav_is_ladder: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

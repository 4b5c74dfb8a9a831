"""Elo against simulations from a league store (the MAV paper's Table 1 / Figure 7 view of a league).

    python -m mavgame.analysis.elo_vs_sims runs/c4-table1-real4.sqlite \
        experiments/2026-11-27-c4-table1-league/mav_c4_table1_real4_sims.png --zero mcts-100

Reads the league's agents (their specs) and games from a `mavgame league --out STORE` file, fits maximum-
likelihood Elo (draws as half wins, one virtual draw a pair, the --zero agent at 0) and draws every agent
whose spec has `sims=N` as a point at N with its 95 % interval, one line per family (the spec without
`sims=`: MAV-MCTS with mean scoring, with max scoring, state tracking, the basic MCTS...); agents without a
simulation count (the searchless MAV, the perfect player) are horizontal lines with their intervals as
bands. Prints the table it plots.
"""
from __future__ import annotations

import argparse
import re
import sys
from typing import Dict, List, Optional, Tuple


def family(spec: str) -> Tuple[str, Optional[int]]:
    """(spec without its sims= option, N) for an agent spec; N is None without sims=."""
    kind, _, opts = spec.partition(":")
    parts = [p for p in opts.split(",") if p]
    sims = [p for p in parts if re.fullmatch(r"sims=\d+", p)]
    rest = [p for p in parts if p not in sims and not p.startswith(("model=", "batch="))]
    n = int(sims[0].split("=")[1]) if sims else None
    return kind + (":" + ",".join(rest) if rest else ""), n


def table(store: str, zero: Optional[str]) -> Tuple[List[dict], int]:
    """Rows (agent, spec, family, sims, elo, low, high, games) and the number of games of a league store."""
    from ..play.results import LeagueResults
    from ..play.store import read_league_store
    header, games = read_league_store(store)
    agents: Dict[str, str] = header["agents"]
    res = LeagueResults(list(agents), games, header.get("game", ""))
    if zero is not None and zero not in agents:
        raise ValueError(f"--zero {zero}: not an agent of {store} (agents: {', '.join(agents)})")
    elo = res.elo(anchor=None if zero is None else (zero, 0.0))
    rows = []
    for i, name in enumerate(elo.names):
        fam, n = family(agents[name])
        rows.append({"agent": name, "spec": agents[name], "family": fam, "sims": n, "elo": float(elo.elo[i]),
                     "low": float(elo.low[i]), "high": float(elo.high[i]), "games": int(elo.games[i])})
    return rows, len(games)


def plot(rows: List[dict], path: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    fams: Dict[str, List[dict]] = {}
    for r in rows:
        if r["sims"] is not None:
            fams.setdefault(r["family"], []).append(r)
    sims_all = sorted({r["sims"] for r in rows if r["sims"] is not None}) or [1]
    lo_x, hi_x = sims_all[0] / 1.5, sims_all[-1] * 1.5
    for k, r in enumerate(r for r in rows if r["sims"] is None):
        c = f"C{(k + 5) % 10}"
        ax.axhline(r["elo"], color=c, ls="--", lw=1)
        ax.axhspan(r["low"], r["high"], color=c, alpha=0.08)
        ax.text(lo_x * 1.05, r["elo"], f" {r['agent']}", color=c, va="bottom", fontsize=8)
    for k, (fam, rs) in enumerate(sorted(fams.items(), key=lambda kv: (-len(kv[1]), kv[0]))):
        rs = sorted(rs, key=lambda r: r["sims"])
        x = [r["sims"] for r in rs]
        y = [r["elo"] for r in rs]
        err = [[r["elo"] - r["low"] for r in rs], [r["high"] - r["elo"] for r in rs]]
        off = 1.0 + 0.03 * k  # a small horizontal shift so that intervals at one budget do not hide each other
        ax.errorbar([v * off for v in x], y, yerr=err, marker="o", capsize=3, label=fam, color=f"C{k}",
                    ls="-" if len(rs) > 1 else "none")
    ax.set_xscale("log", base=2)
    ax.set_xlim(lo_x, hi_x)
    ax.set_xticks(sims_all)
    ax.set_xticklabels([str(s) for s in sims_all])
    ax.set_xlabel("simulations per move")
    ax.set_ylabel("Elo (95 % interval)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mavgame.analysis.elo_vs_sims",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("store", help="a league store (mavgame league --out STORE)")
    ap.add_argument("out", help="the plot to write (.png)")
    ap.add_argument("--zero", default=None, help="the agent at Elo 0 (the paper: basic MCTS); default: mean 0")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    try:
        rows, n = table(args.store, args.zero)
    except (OSError, ValueError) as e:
        raise SystemExit(f"elo_vs_sims: {e}") from None
    print(f"{'agent':<20}{'sims':>6}{'Elo':>7}{'95% interval':>16}{'games':>7}  family")
    for r in sorted(rows, key=lambda r: -r["elo"]):
        s = "-" if r["sims"] is None else str(r["sims"])
        ci = f"[{r['low']:.0f}, {r['high']:.0f}]"
        print(f"{r['agent']:<20}{s:>6}{r['elo']:>7.0f}{ci:>16}{r['games']:>7}  {r['family']}")
    plot(rows, args.out, args.title or f"Elo against simulations ({n} games"
         + (f", {args.zero} = 0)" if args.zero else ")"))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

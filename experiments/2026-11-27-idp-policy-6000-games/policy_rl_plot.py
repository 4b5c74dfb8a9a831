"""The IDP report's RL figures 6-8 from a `mavgame policy rl` run: the current network's score against the
fixed opponent as white and as black (over windows of --window opponent games) and the aborted games, against
the games played; a table of the same windows on stdout.

    python experiments/2026-11-27-idp-policy-6000-games/policy_rl_plot.py runs/idp-rl                 # writes runs/idp-rl/rl_curves.png
    python experiments/2026-11-27-idp-policy-6000-games/policy_rl_plot.py runs/idp-rl --window 100 \
        --out experiments/2026-11-27-idp-policy-6000-games/policy_rl.png
"""
import argparse
import json
import sys
from pathlib import Path


def windows(log, window: int):
    """[(games so far, white points, white games, black points, black games, aborted games)] a window of
    at least ``window`` games against the opponent (aborted: all the window's steps' games)."""
    out, acc = [], [0.0, 0, 0.0, 0, 0]
    for rec in log:
        w, b = rec.get("vs_opponent_white"), rec.get("vs_opponent_black")
        if w is None or b is None:
            continue
        acc[0] += w[0]
        acc[1] += w[1]
        acc[2] += b[0]
        acc[3] += b[1]
        acc[4] += rec.get("aborted", 0)
        if acc[1] + acc[3] >= window:
            out.append((rec["games"], *acc))
            acc = [0.0, 0, 0.0, 0, 0]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="the --out folder of `mavgame policy rl`")
    ap.add_argument("--window", type=int, default=40, help="opponent games a point")
    ap.add_argument("--out", default=None, help="the plot (default RUN/rl_curves.png)")
    args = ap.parse_args()
    path = Path(args.run) / "rl_log.jsonl"
    if not path.exists():
        print(f"no {path}", file=sys.stderr)
        return 2
    log = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    pts = windows(log, args.window)
    if not pts:
        print(f"{path}: no step with per-colour scores (a run older than the per-colour log?)", file=sys.stderr)
        return 1
    print(f"{'games':>7} {'as white':>10} {'as black':>10} {'aborted':>8}")
    for g, wp, wn, bp, bn, ab in pts:
        print(f"{g:>7} {wp / max(wn, 1):>10.3f} {bp / max(bn, 1):>10.3f} {ab:>8}")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    x = [p[0] for p in pts]
    a1.plot(x, [p[1] / max(p[2], 1) for p in pts], "o-", label="as white")
    a1.plot(x, [p[3] / max(p[4], 1) for p in pts], "s-", label="as black")
    a1.axhline(0.5, color="grey", linestyle=":")
    a1.set_xlabel("games played (all)")
    a1.set_ylabel("score against the fixed opponent")
    a1.set_title(f"windows of {args.window}+ games against it", fontsize=9)
    a1.set_ylim(0, 1)
    a1.legend()
    a2.plot(x, [p[5] for p in pts], "o-", color="C3")
    a2.set_xlabel("games played (all)")
    a2.set_ylabel("aborted games (move cap)")
    a2.set_title("in the same windows (all games)", fontsize=9)
    fig.suptitle(f"policy RL: {Path(args.run).name} ({log[-1]['step']} steps, {log[-1]['games']} games, "
                 f"{log[-1]['opponents_replaced']} opponents replaced)", fontsize=10)
    fig.tight_layout()
    out = Path(args.out) if args.out else Path(args.run) / "rl_curves.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

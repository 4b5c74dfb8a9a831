"""The AZdb experiment's report (docs/alphazero.md, "The team experiment"; experiments/2026-11-24-azdb-c4-team):
plots and a JSON summary from
a team run and a single AlphaZero run of ``mavgame az``, a puzzle score file of ``mavgame az-puzzles score``.

    python experiments/2026-11-24-azdb-c4-team/azdb_report.py --team runs/team --single runs/single --scores scores.json --out runs/azdb

Writes OUT_training.png (loss and intrinsic loss per iteration), OUT_occupancy.png (each player's psi:
where its stones stand, minus the team's mean), OUT_openings.png (each player's first-move visit
distribution at the empty board and after the replies), OUT_puzzles.png (solve rates) and OUT.json.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import numpy as np  # noqa: E402


def read_log(run):
    with open(os.path.join(run, "log.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--team", required=True)
    ap.add_argument("--single", required=True)
    ap.add_argument("--scores", default=None)
    ap.add_argument("--sims", type=int, default=100, help="simulations per player for the opening statistics")
    ap.add_argument("--out", required=True, help="prefix of the output files")
    a = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch
    torch.set_num_threads(1)
    import mavgame
    from mavgame.agents.alphazero import AZdbTeam
    from mavgame.az.train import load_checkpoint

    summary = {}
    lt, ls = read_log(a.team), read_log(a.single)
    fig, ax = plt.subplots(1, 2, figsize=(8, 3))
    ax[0].plot([r["loss"] for r in ls], label="single AZ")
    ax[0].plot([r["loss"] for r in lt], label="team (AZdb)")
    ax[0].set_xlabel("iteration")
    ax[0].set_ylabel("training loss")
    ax[0].legend()
    ax[1].plot([r.get("intrinsic", 0) for r in lt], color="C1")
    ax[1].set_xlabel("iteration")
    ax[1].set_ylabel("team: intrinsic value loss")
    fig.tight_layout()
    fig.savefig(a.out + "_training.png", dpi=80)
    plt.close(fig)

    d = load_checkpoint(os.path.join(a.team, "checkpoint.pt"))
    psi = d["features"]["psi"]
    players = len(psi)
    occ = psi[:, :84].reshape(players, 2, 6, 7).sum(1)     # stones of either colour per cell
    dev = occ - occ.mean(0)
    lim = float(np.abs(dev).max()) or 1.0
    fig, ax = plt.subplots(1, players, figsize=(2.0 * players, 2.0))
    for i in range(players):
        ax[i].imshow(dev[i], cmap="coolwarm", vmin=-lim, vmax=lim)
        ax[i].set_title(f"player {i}", fontsize=9)
        ax[i].set_xticks([])
        ax[i].set_yticks([])
    fig.suptitle(f"psi: occupancy minus team mean (+-{lim:.3f})", fontsize=9)
    fig.tight_layout()
    fig.savefig(a.out + "_occupancy.png", dpi=80)
    plt.close(fig)
    dist = np.sqrt(((psi[:, None] - psi[None]) ** 2).sum(-1))
    summary["psi_distances"] = np.round(dist, 4).tolist()
    summary["payoff_white_black"] = np.round(d["matchmaker"]["score"] / np.maximum(d["matchmaker"]["count"], 1),
                                             3).tolist()
    summary["games_white_black"] = d["matchmaker"]["count"].tolist()

    team = AZdbTeam(os.path.join(a.team, "checkpoint.pt"), a.sims)
    st = mavgame.State("connect_four")
    first = np.zeros((players, 7))
    for i, s in enumerate(team.searches(st)):
        first[i, s.actions] = s.visits / s.visits.sum()
    fig, ax = plt.subplots(figsize=(5, 2.6))
    for i in range(players):
        ax.bar(np.arange(7) + (i - players / 2) * 0.15, first[i], width=0.15, label=f"player {i}")
    ax.set_xticks(range(7))
    ax.set_xticklabels([str(c + 1) for c in range(7)])
    ax.set_xlabel("first move (column)")
    ax.set_ylabel("visit share")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(a.out + "_openings.png", dpi=80)
    plt.close(fig)
    summary["first_move_visits"] = np.round(first, 3).tolist()
    summary["first_move"] = [int(np.argmax(f)) + 1 for f in first]

    if a.scores:
        with open(a.scores, encoding="utf-8") as f:
            sc = json.load(f)
        rates = {k: float(np.mean(v)) for k, v in sc.items() if isinstance(v, list) and not k.startswith("team:chosen")}
        summary["puzzle_rates"] = rates
        summary["puzzles"] = sc["puzzles"]
        chosen = {k[len("team:chosen_"):]: np.bincount(v, minlength=players).tolist() for k, v in sc.items()
                  if k.startswith("team:chosen_")}
        summary["chosen_players"] = chosen
        names = list(rates)
        fig, ax = plt.subplots(figsize=(7, 2.8))
        ax.bar(range(len(names)), [rates[n] for n in names], color="C0")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([n.replace("team:", "").split(",")[0].replace("az:checkpoint=", "single ")[:18]
                            for n in names], rotation=40, ha="right", fontsize=7)
        ax.set_ylabel(f"solved ({sc['puzzles']} puzzles)")
        fig.tight_layout()
        fig.savefig(a.out + "_puzzles.png", dpi=80)
        plt.close(fig)
    with open(a.out + ".json", "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()

"""The AZdb experiment over seeds (docs/alphazero.md, "The team experiment"): puzzle solve rates and
team-vs-single matches of several seeds of
``experiments/2026-11-24-azdb-c4-team/azdb_c4_experiment.sh``, with 95% confidence
intervals, plots and a JSON summary.

    python experiments/2026-11-24-azdb-c4-team/azdb_seeds.py --eval runs/eval --seeds 1 2 3 --out experiments/2026-11-24-azdb-c4-team/azdb_c4_seeds

Reads EVAL/score_s{seed}.json (and score_vd_s*, score_extrinsic_s*: the ablations of the play-time
search value), EVAL/report_s{seed}.json (players' first moves, psi distances) and
EVAL/match_{rule}_s{seed}.jsonl (and x5_{rule}_s{seed}.jsonl: the team against the single at one
player's search).  Writes OUT_puzzles.png, OUT_ablation.png (the play-time search value's
ablation), OUT_match.png, OUT_occupancy.png (with --runs) and OUT.json.

Intervals: per seed, a puzzle rate's Wilson interval over the puzzles; over seeds, the mean of the
seeds' rates with a t interval (seed-to-seed spread) and the pooled rate's Wilson interval (puzzle
noise only); paired differences (solver A - solver B on the same puzzles, all seeds pooled) with a
normal interval; a match score (wins + draws / 2 per game) with a normal interval over its games.
"""
import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import numpy as np  # noqa: E402

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def wilson(k, n, z=1.96):
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (float(c - h), float(c + h))


def solvers(sc, sc_vd, sc_ext, players):
    """name -> 0/1 array per puzzle."""
    out = {}
    for i in range(players):
        out[f"player {i}"] = sc[f"team:player{i}"]
    out["max-over-latents"] = sc["team:max_over_latents"]
    for r in ("visits", "value", "lcb", "gap"):
        out[f"team {r}"] = sc[f"team:{r}"]
    for tag, s in (("vd", sc_vd), ("extrinsic", sc_ext)):
        if s is None:
            continue
        out[f"max-over-latents ({tag})"] = s["team:max_over_latents"]
        for r in ("visits", "lcb", "gap"):
            out[f"team {r} ({tag})"] = s[f"team:{r}"]
    for k, v in sc.items():
        if k.startswith("az:"):
            sims = k.split("sims=")[-1].split(",")[0]
            out[f"single AZ {sims} sims"] = v
    return {k: np.asarray(v, np.int64) for k, v in out.items()}


def match_score(path):
    w = d = lo = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if "result" not in r:
                continue
            team_first = r["first"] == "team"
            if r["result"] == "1/2-1/2":
                d += 1
            elif (r["result"] == "1-0") == team_first:
                w += 1
            else:
                lo += 1
    return w, d, lo


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--eval", required=True, help="folder of the per-seed files")
    ap.add_argument("--seeds", type=int, nargs="+", required=True)
    ap.add_argument("--out", required=True, help="prefix of the output files")
    ap.add_argument("--runs", default=None, help="folder of the runs (team_s{seed}/checkpoint.pt): also plot "
                    "each seed's players' psi (OUT_occupancy.png)")
    a = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def load(name):
        p = os.path.join(a.eval, name)
        if not os.path.exists(p):
            return None
        with open(p, encoding="utf-8") as f:
            return json.load(f)

    per_seed = {}
    reports = {}
    for s in a.seeds:
        sc = load(f"score_s{s}.json")
        if sc is None:
            sys.exit(f"no {a.eval}/score_s{s}.json")
        players = sum(1 for k in sc if k.startswith("team:player"))
        per_seed[s] = solvers(sc, load(f"score_vd_s{s}.json"), load(f"score_extrinsic_s{s}.json"), players)
        reports[s] = load(f"report_s{s}.json")
    names = [n for n in per_seed[a.seeds[0]] if all(n in per_seed[s] for s in a.seeds)]
    npz = len(per_seed[a.seeds[0]][names[0]])
    summary = {"seeds": a.seeds, "puzzles": npz, "solvers": {}, "paired": {}, "matches": {}, "players": {}}
    for n in names:
        rates = np.array([per_seed[s][n].mean() for s in a.seeds])
        k = int(sum(per_seed[s][n].sum() for s in a.seeds))
        tot = npz * len(a.seeds)
        m = float(rates.mean())
        h = T975.get(len(rates) - 1, 1.96) * float(rates.std(ddof=1)) / np.sqrt(len(rates)) if len(rates) > 1 else None
        summary["solvers"][n] = {"per_seed": [round(float(r), 4) for r in rates],
                                 "per_seed_wilson": [[round(x, 4) for x in wilson(int(per_seed[s][n].sum()), npz)]
                                                     for s in a.seeds],
                                 "mean": round(m, 4), "seed_t95": None if h is None else [round(m - h, 4), round(m + h, 4)],
                                 "pooled_wilson95": [round(x, 4) for x in wilson(k, tot)]}

    def paired(x, y):
        d = np.concatenate([per_seed[s][x] - per_seed[s][y] for s in a.seeds]).astype(np.float64)
        se = d.std(ddof=1) / np.sqrt(len(d))
        return {"diff": round(float(d.mean()), 4), "ci95": [round(float(d.mean() - 1.96 * se), 4),
                                                            round(float(d.mean() + 1.96 * se), 4)]}
    players = sum(1 for n in names if n.startswith("player "))
    best = []
    for s in a.seeds:
        rs = [per_seed[s][f"player {i}"].mean() for i in range(players)]
        best.append(int(np.argmax(rs)))
    summary["best_player_per_seed"] = best
    for s, b in zip(a.seeds, best):
        per_seed[s]["best player"] = per_seed[s][f"player {b}"]
    single_total = [n for n in names if n.startswith("single AZ")]
    single_total = max(single_total, key=lambda n: int(n.split()[2])) if single_total else None
    for x in ["max-over-latents", "team visits", "team value", "team lcb", "team gap"]:
        summary["paired"][f"{x} - player 0"] = paired(x, "player 0")
        summary["paired"][f"{x} - best player"] = paired(x, "best player")
        if single_total:
            summary["paired"][f"{x} - {single_total}"] = paired(x, single_total)
    if single_total:
        summary["paired"][f"player 0 - {single_total}"] = paired("player 0", single_total)
    for x in ["max-over-latents", "team lcb", "team gap", "team visits"]:
        for tag in ("vd", "extrinsic"):
            if f"{x} ({tag})" in names:
                summary["paired"][f"{x} (path) - {x} ({tag})"] = paired(x, f"{x} ({tag})")

    # match_<rule>_s<seed>: equal total search; x5_<rule>_s<seed>: the single at one player's search
    for prefix, key in (("match_", "matches"), ("x5_", "matches_team_5x_search")):
        for f in sorted(glob.glob(os.path.join(a.eval, f"{prefix}*_s*.jsonl"))):
            base = os.path.basename(f)[len(prefix):-len(".jsonl")]
            rule, seed = base.rsplit("_s", 1)
            if int(seed) not in a.seeds:
                continue
            summary.setdefault(key, {}).setdefault(rule, {})[seed] = list(match_score(f))
    for rule, by in list(summary["matches"].items()) + list(summary.get("matches_team_5x_search", {}).items()):
        res = np.concatenate([[1.0] * w + [0.5] * d + [0.0] * lo for w, d, lo in by.values()])
        se = res.std(ddof=1) / np.sqrt(len(res)) if len(res) > 1 else 0.0
        by["pooled"] = {"games": int(len(res)), "score": round(float(res.mean()), 4),
                        "ci95": [round(float(res.mean() - 1.96 * se), 4), round(float(res.mean() + 1.96 * se), 4)]}
    for s in a.seeds:
        r = reports[s]
        if r:
            d = np.asarray(r["psi_distances"])
            np.fill_diagonal(d, np.inf)
            summary["players"][str(s)] = {"first_move": r["first_move"],
                                          "nearest_psi_distance": np.round(d.min(1), 3).tolist(),
                                          "chosen_players": r.get("chosen_players")}

    # plots
    show = [n for n in names if not n.endswith(")")]
    fig, ax = plt.subplots(figsize=(9, 3.4))
    for j, n in enumerate(show):
        st = summary["solvers"][n]
        ci = st["seed_t95"] or st["pooled_wilson95"]
        color = "C3" if n.startswith("single") else ("C2" if n.startswith("max") else
                                                     ("C1" if n.startswith("team") else "C0"))
        ax.bar(j, st["mean"], color=color, alpha=0.6)
        ax.errorbar(j, st["mean"], yerr=[[st["mean"] - ci[0]], [ci[1] - st["mean"]]], color="k", capsize=3)
        ax.plot([j] * len(a.seeds), st["per_seed"], "k.", ms=4)
    ax.set_xticks(range(len(show)))
    ax.set_xticklabels(show, rotation=40, ha="right", fontsize=7)
    ax.set_ylabel(f"solved ({npz} puzzles)")
    ax.set_title(f"Connect Four puzzles, {len(a.seeds)} seeds (bars: mean, dots: seeds, 95% t interval)", fontsize=9)
    fig.tight_layout()
    fig.savefig(a.out + "_puzzles.png", dpi=80)
    plt.close(fig)
    groups = ["max-over-latents", "team visits", "team lcb", "team gap"]
    modes = [("path", ""), ("vd", " (vd)"), ("extrinsic", " (extrinsic)")]
    if all(g + m in summary["solvers"] for g in groups for _t, m in modes):
        fig, ax = plt.subplots(figsize=(6, 2.8))
        for k, (tag, m) in enumerate(modes):
            st = [summary["solvers"][g + m] for g in groups]
            mean = np.array([x["mean"] for x in st])
            ci = np.array([x["seed_t95"] or x["pooled_wilson95"] for x in st])
            ax.bar(np.arange(len(groups)) + (k - 1) * 0.27, mean, width=0.27, label=tag,
                   yerr=[mean - ci[:, 0], ci[:, 1] - mean], capsize=2)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, fontsize=8)
        ax.set_ylabel(f"solved ({npz} puzzles)")
        ax.set_title("play-time search value: path (R + v_d), vd, extrinsic (v)", fontsize=9)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(a.out + "_ablation.png", dpi=80)
        plt.close(fig)
    if summary["matches"]:
        fig, ax = plt.subplots(figsize=(5, 2.8))
        x = 0
        ticks = []
        for rule, by in summary["matches"].items():
            for seed in [k for k in by if k != "pooled"] + ["pooled"]:
                if seed == "pooled":
                    sc, ci = by[seed]["score"], by[seed]["ci95"]
                else:
                    w, d, lo = by[seed]
                    res = np.array([1.0] * w + [0.5] * d + [0.0] * lo)
                    sc = res.mean()
                    se = res.std(ddof=1) / np.sqrt(len(res))
                    ci = [sc - 1.96 * se, sc + 1.96 * se]
                ax.errorbar(x, sc, yerr=[[sc - ci[0]], [ci[1] - sc]], fmt="o", color="C1" if seed == "pooled" else "C0",
                            capsize=3)
                ticks.append(f"{rule} s{seed}" if seed != "pooled" else f"{rule} all")
                x += 1
        ax.axhline(0.5, color="gray", lw=0.8)
        ax.set_xticks(range(len(ticks)))
        ax.set_xticklabels(ticks, rotation=40, ha="right", fontsize=7)
        ax.set_ylabel("team score vs single")
        ax.set_title("team (5 x sims) vs single AZ (same total sims)", fontsize=9)
        fig.tight_layout()
        fig.savefig(a.out + "_match.png", dpi=80)
        plt.close(fig)
    if a.runs:
        from mavgame.az.train import load_checkpoint
        fig, ax = plt.subplots(len(a.seeds), players, figsize=(1.7 * players, 1.5 * len(a.seeds)), squeeze=False)
        for r, s in enumerate(a.seeds):
            d = load_checkpoint(os.path.join(a.runs, f"team_s{s}", "checkpoint.pt"))
            psi = np.asarray(d["features"]["psi"])
            occ = psi[:, :84].reshape(len(psi), 2, 6, 7).sum(1)     # stones of either colour per cell
            dev = occ - occ.mean(0)
            lim = float(np.abs(dev).max()) or 1.0
            summary["players"].setdefault(str(s), {})["occupancy_minus_team_mean_max"] = round(lim, 4)
            for i in range(len(psi)):
                ax[r, i].imshow(dev[i], cmap="coolwarm", vmin=-lim, vmax=lim)
                ax[r, i].set_xticks([])
                ax[r, i].set_yticks([])
                if r == 0:
                    ax[r, i].set_title(f"player {i}", fontsize=8)
            ax[r, 0].set_ylabel(f"seed {s}\n(+-{lim:.2f})", fontsize=7)
        fig.suptitle("psi: where each player's stones stand, minus the team's mean (red: more)", fontsize=8)
        fig.tight_layout()
        fig.savefig(a.out + "_occupancy.png", dpi=80)
        plt.close(fig)
    with open(a.out + ".json", "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1)
    for n, st in summary["solvers"].items():
        ci = st["seed_t95"] or st["pooled_wilson95"]
        print(f"{n:32s} {st['mean']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]  seeds {st['per_seed']}  "
              f"pooled Wilson {st['pooled_wilson95']}")
    for n, st in summary["paired"].items():
        print(f"{n:48s} {st['diff']:+.3f} {st['ci95']}")
    for rule, by in list(summary["matches"].items()) + [("5x " + r, b) for r, b in
                                                         summary.get("matches_team_5x_search", {}).items()]:
        print(f"match {rule}: " + ", ".join(f"s{k} {v}" for k, v in by.items() if k != "pooled")
              + f"; pooled {by['pooled']}")
    print("best player per seed", summary["best_player_per_seed"])
    for s, r in summary["players"].items():
        print(f"seed {s}: first moves {r['first_move']}, nearest psi distance {r['nearest_psi_distance']}")


if __name__ == "__main__":
    main()

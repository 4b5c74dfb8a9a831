"""The IDP report's Table 1 (architecture / input / loss ablations), Figure 9 (learning-rate sweep) and Figure 5
(move matching by game progression, the shipped network) at reduced scale: a resumable driver.

    python experiments/2026-12-02-idp-ablations/run.py --work runs/idp54 [--stage all|pgn|fig5|train|report]

Stages (each skips what is already done, so the same command resumes):

- ``pgn``: the games of the league store WORK/sf54.sqlite (made by the league command of the README, which
  resumes too) written to WORK/sf54.pgn, cut to whole openings (every pair of agents, both colours).
- ``fig5``: ``mavgame policy accuracy --model shipped`` on all those games (none was in the shipped network's
  training data: other random openings), by fullmove bins and by phase -> WORK/fig5_move.json, fig5_phase.json.
- ``train``: one ``mavgame policy train`` a variant (same data, split, seed, steps), ``--jobs`` at a time, each
  on one thread under ``nice``; a run stopped half-way continues from its train_state.pt.
- ``report``: held-out move matching of every variant with games-bootstrap intervals and paired differences
  against the base network -> WORK/results.json, the README's tables (printed) and the PNG figures beside this
  file.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

BASE = ["--channels", "32", "--blocks", "3"]          # the shipped network's shape
#: name -> (extra `mavgame policy train` arguments, what the report calls it)
VARIANTS: Dict[str, tuple] = {
    "ours": ([], "Ours (residual 32 x 3, pool head, loss on legal moves, lr 1e-3)"),
    "dense": (["--arch", "dense", "--hidden", "512"], "Dense layers (4 dense layers, 512 wide)"),
    "plain": (["--arch", "plain"], "Convolution layers (no residual connections)"),
    "pool4": (["--pool", "4"], "Ours + smaller pooling layer (4x4 window, 2x2 cells)"),
    "loss_all": (["--loss", "all"], "Ours + loss on all moves"),
    "signed": (["--inputs", "signed"], "inputs: 6 planes a position, +1 White / -1 Black"),
    "values": (["--inputs", "values"], "inputs: + a piece-value plane"),
    "occupancy": (["--inputs", "occupancy"], "inputs: + a plane of each side's pieces"),
    "c16": (["--channels", "16"], "16 channels x 3 blocks"),
    "b1": (["--blocks", "1"], "32 channels x 1 block"),
    "lr1e-2": (["--lr", "1e-2"], "learning rate 1e-2"),
    "lr1e-4": (["--lr", "1e-4"], "learning rate 1e-4"),
    "lr1e-5": (["--lr", "1e-5"], "learning rate 1e-5"),
}
LR_RUNS = {"lr1e-2": 1e-2, "ours": 1e-3, "lr1e-4": 1e-4, "lr1e-5": 1e-5}


def stage_pgn(work: Path, openings: int) -> Path:
    """WORK/sf54.pgn: the stored games of the first ``openings`` random openings that are complete."""
    from mavgame.play.pgn import to_pgn
    from mavgame.play.store import ResultStore

    out = work / "sf54.pgn"
    st = ResultStore(str(work / "sf54.sqlite"), create=False)
    recs, refused = st.games()
    st.close()
    if refused:
        raise SystemExit("\n".join(refused))
    by_opening: Dict[int, list] = {}
    for r in recs:
        by_opening.setdefault(int(r.opening.split("-")[1]), []).append(r)
    full = sorted(k for k, v in by_opening.items() if len(v) == 30)     # 15 pairs x 2 colours
    keep = [k for k in full if k <= openings]
    if len(keep) < openings:
        print(f"only {len(keep)} of {openings} openings complete in the store; writing those", file=sys.stderr)
    games = [r for k in keep for r in by_opening[k]]
    text = "\n".join(to_pgn(r) for r in games) + "\n"
    if not out.exists() or out.read_text() != text:
        out.write_text(text)
    print(f"{out}: {len(games)} games ({len(keep)} openings x 30)")
    return out


def _run(cmd: List[str], log: Path) -> int:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        return subprocess.run(["nice", "-n", "10"] + cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                              cwd=ROOT).returncode


def stage_fig5(work: Path, pgn: Path) -> None:
    for by, extra in (("move", ["--bins", "5,11,21,31,41,61"]), ("phase", [])):
        out = work / f"fig5_{by}.json"
        if out.exists():
            continue
        rc = _run(["mavgame", "policy", "accuracy", "--model", "shipped", "--pgn", str(pgn), "--skip-moves", "4",
                   "--by", by, "--out", str(out)] + extra, work / "fig5.log")
        if rc:
            raise SystemExit(f"fig5 ({by}) failed, see {work / 'fig5.log'}")


def train_cmd(work: Path, pgn: Path, name: str, steps: int) -> List[str]:
    return (["mavgame", "policy", "train", "--pgn", str(pgn), "--out", str(work / "runs" / name), "--steps",
             str(steps), "--threads", "1", "--seed", "0", "--split-seed", "0", "--log-every", "50",
             "--eval-every", "200", "--checkpoint-every", "200", "--no-progress"] + BASE + VARIANTS[name][0])


def stage_train(work: Path, pgn: Path, steps: int, jobs: int, names: List[str]) -> None:
    (work / "runs").mkdir(parents=True, exist_ok=True)

    def one(name: str) -> str:
        m = work / "runs" / name / "metrics.json"
        if m.exists() and json.loads(m.read_text()).get("steps") == steps:
            return f"{name}: done"
        (work / "runs" / name).mkdir(parents=True, exist_ok=True)
        rc = _run(train_cmd(work, pgn, name, steps), work / "runs" / name / "stdout.log")
        return f"{name}: rc {rc}"

    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for line in ex.map(one, names):
            print(line, flush=True)


def stage_report(work: Path, pgn: Path, names: List[str]) -> None:
    import numpy as np
    import torch

    from mavgame.analysis.policy_accuracy import clustered_interval, paired_difference
    from mavgame.policy import network as P

    torch.set_num_threads(1)
    _, val, info = P.load_pgn_positions([str(pgn)], skip_moves=10, val_fraction=0.1, seed=0)
    hits, rows = {}, []
    for name in names:
        got = network_of(work, pgn, name)
        if got is None:
            print(f"{name}: no network yet", file=sys.stderr)
            continue
        net, step = got
        hits[name] = P.move_hits(net, val)
        acc, lo, hi = clustered_interval(hits[name], val.game)
        log = _log(work, name)
        rows.append({"name": name, "what": VARIANTS[name][1], "step": step,
                     "params": sum(p.numel() for p in net.parameters()), "accuracy": acc, "low": lo, "high": hi,
                     "train_accuracy": float(np.mean([x["train_accuracy"] for x in log if x["step"] > step - 200
                                                      and x["step"] <= step])) if log else float("nan"),
                     "val_loss": P.held_out_loss(net, val)})
    for r in rows:
        if "ours" in hits and r["name"] != "ours":
            r["diff"] = paired_difference(hits[r["name"]], hits["ours"], val.game)
    res = {"data": info, "rows": rows}
    for by in ("move", "phase"):
        f = work / f"fig5_{by}.json"
        if f.exists():
            res[f"fig5_{by}"] = json.loads(f.read_text())
    (work / "results.json").write_text(json.dumps(res, indent=1))
    print(f"held out: {info['val_games']} games, {info['val_positions']} positions; train {info['train_positions']}")
    print("| variant | steps | weights | held-out move matching [95 % CI] | minus Ours [95 % CI] | train acc. |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        d = r.get("diff")
        ds = f"{d[0]:+.3f} [{d[1]:+.3f}, {d[2]:+.3f}]" if d else "–"
        print(f"| {r['what']} | {r['step']} | {r['params'] / 1e6:.2f} M | {r['accuracy']:.3f} [{r['low']:.3f}, {r['high']:.3f}] | "
              f"{ds} | {r['train_accuracy']:.3f} |")
    plots(work, res)


def network_of(work: Path, pgn: Path, name: str):
    """(network, step) of a variant: its finished policy.pt, else the last state of its run (a run stopped
    part-way); None before its first checkpoint."""
    from mavgame._checkpoint import load_state
    from mavgame.cli.policy import add_arguments
    from mavgame.policy import network as P

    d = work / "runs" / name
    if (d / "policy.pt").exists():
        return P.PolicyModel.load(d / "policy.pt").net, json.loads((d / "metrics.json").read_text())["steps"]
    if not (d / "train_state.pt").exists():
        return None
    ap = argparse.ArgumentParser()
    add_arguments(ap)
    a = ap.parse_args(train_cmd(work, pgn, name, 1)[2:])     # the run's own options give its shape
    net = P.PolicyNet(P.PolicyConfig(channels=a.channels, blocks=a.blocks, head=a.head, arch=a.arch, pool=a.pool,
                                     inputs=a.inputs, hidden=a.hidden))
    st = load_state(d / "train_state.pt", "policy training state")
    net.load_state_dict(st["net"])
    return net.eval(), int(st["step"])


def _log(work: Path, name: str) -> List[dict]:
    f = work / "runs" / name / "train_log.jsonl"
    return [json.loads(x) for x in f.read_text().splitlines()] if f.exists() else []


def plots(work: Path, res: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    for name, lr in LR_RUNS.items():
        log = _log(work, name)
        if not log:
            continue
        ax[0].plot([x["step"] for x in log], [x["train_accuracy"] for x in log], label=f"lr {lr:g}")
        ev = [x for x in log if "val_accuracy" in x]
        ax[1].plot([x["step"] for x in ev], [x["val_accuracy"] for x in ev], "o-", label=f"lr {lr:g}")
        ax[2].plot([x["step"] for x in log], [x["loss"] for x in log], label=f"lr {lr:g}")
    for a, t in zip(ax, ("training accuracy (batches, mean of 50 steps)", "held-out move matching",
                         "training loss (BCE over legal moves)")):
        a.set_xlabel("step (100 positions)")
        a.set_title(t)
        a.legend()
    ax[2].set_yscale("log")
    fig.tight_layout()
    fig.savefig(HERE / "fig9_lr_sweep.png", dpi=110)
    plt.close(fig)
    if "fig5_move" in res:
        fig, ax = plt.subplots(1, 2, figsize=(11, 4))
        rows = res["fig5_move"]["by_move"]
        lab = [f"{r['lo']}-{r['hi'] - 1}" if r["hi"] else f"{r['lo']}+" for r in rows]
        acc = [r["accuracy"] for r in rows]
        err = [[a - r["low"] for a, r in zip(acc, rows)], [r["high"] - a for a, r in zip(acc, rows)]]
        ax[0].bar(lab, acc, yerr=err, capsize=4)
        ax[0].set_xlabel("fullmove")
        ax[0].set_ylabel("move matching (95 % CI, games bootstrap)")
        ax[0].set_title("shipped network, by move number")
        if "fig5_phase" in res:
            rows = res["fig5_phase"]["by_phase"]
            acc = [r["accuracy"] for r in rows]
            err = [[a - r["low"] for a, r in zip(acc, rows)], [r["high"] - a for a, r in zip(acc, rows)]]
            ax[1].bar([r["phase"] for r in rows], acc, yerr=err, capsize=4, color="tab:orange")
            ax[1].set_title("shipped network, by phase")
        fig.tight_layout()
        fig.savefig(HERE / "fig5_by_move.png", dpi=110)
        plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="runs/idp54", help="folder of the league store, the PGN and the runs")
    ap.add_argument("--stage", default="all", choices=("all", "pgn", "fig5", "train", "report"))
    ap.add_argument("--openings", type=int, default=22, help="complete openings of the store to use (30 games each)")
    ap.add_argument("--steps", type=int, default=800, help="training steps of every variant")
    ap.add_argument("--jobs", type=int, default=6, help="variants trained at a time (one thread each)")
    ap.add_argument("--only", default="", help="comma-separated variants (default: all)")
    a = ap.parse_args(argv)
    work = (ROOT / a.work).resolve()
    names = [n for n in a.only.split(",") if n] or list(VARIANTS)
    bad = [n for n in names if n not in VARIANTS]
    if bad:
        raise SystemExit(f"unknown variants {bad}; known: {', '.join(VARIANTS)}")
    pgn = stage_pgn(work, a.openings) if a.stage in ("all", "pgn") else work / "sf54.pgn"
    if a.stage in ("all", "fig5"):
        stage_fig5(work, pgn)
    if a.stage in ("all", "train"):
        stage_train(work, pgn, a.steps, a.jobs, names)
    if a.stage in ("all", "report"):
        stage_report(work, pgn, names)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How sure is a Connect Four MAV model that a game is finished?  P('invalid') at the answer's first token
(the token after ``%top_all`` / ``%top_k`` and its space: 'invalid' in a finished position, a move otherwise),
teacher-forced, on a position set's finished positions and on live positions of the same plies; by the kind
of four on the board; and, with ``%top_k`` headers, by k (a model that reads k instead of the board shows it:
see docs/model.md, "Finished games").

    python experiments/2026-11-27-c4-mav-finished-games/c4_outcome_probe.py --data c4data-full/val [--model runs/x/model.safetensors] [--by-k]
"""
import argparse
import collections
import json
import random
from pathlib import Path

import numpy as np
import torch

from mavgame.datasets.dataset import mav_encoder
from mavgame.model.export import load_exported
from mavgame.model.transformer import MAVTransformer

SHIPPED = Path(__file__).resolve().parents[2] / "mavgame" / "data" / "mav_connect_four.safetensors"


def four_kinds(state: str) -> set:
    rows = state.split()[0].split("/")[::-1]  # bottom row first
    out = set()
    for r in range(6):
        for c in range(7):
            p = rows[r][c]
            if p == ".":
                continue
            for name, dr, dc in (("h", 0, 1), ("v", 1, 0), ("d1", 1, 1), ("d2", 1, -1)):
                if all(0 <= r + k * dr < 6 and 0 <= c + k * dc < 7 and rows[r + k * dr][c + k * dc] == p
                       for k in range(4)):
                    out.add(name)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="a split folder of a Connect Four position set (shard-*.jsonl)")
    ap.add_argument("--model", default=str(SHIPPED), help="an exported model (default: the shipped one)")
    ap.add_argument("--live-per-finished", type=int, default=3, help="live positions drawn per finished one")
    ap.add_argument("--by-k", action="store_true", help="also %%top_k headers, P('invalid') by k")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    recs = [json.loads(line) for f in sorted(Path(a.data).glob("shard-*.jsonl")) for line in open(f)]
    w, cfg, _, _ = load_exported(a.model)
    model = MAVTransformer(cfg)
    model.load_state_dict({k: torch.tensor(np.asarray(v, np.float32)) for k, v in w.items()})
    model.eval()
    rng = random.Random(a.seed)
    fin = [r for r in recs if r["result"] != "*"]
    by_ply = collections.defaultdict(list)
    for r in recs:
        if r["result"] == "*":
            by_ply[r["ply"]].append(r)
    live = [rng.choice(by_ply.get(r["ply"]) or by_ply[max(by_ply)]) for r in fin for _ in range(a.live_per_finished)]

    def probs(rs, p_top_all):
        enc, _ = mav_encoder("connect_four", p_transition=0.0, p_after=0.0, p_top_all=p_top_all)
        tok = enc.tokenizer()
        inv, top_k = tok.token_to_id("invalid"), tok.token_to_id("%top_")
        out = []
        with torch.no_grad():
            for r, (ids, mask) in zip(rs, enc(rs, a.seed)):
                d = enc.outcome_token(ids, mask)  # ids[d - 1] is the space after %top_all / %top_k
                head = max(i for i in range(d) if mask[i] and int(ids[i]) in (top_k, tok.token_to_id("%top_all")))
                kk = "".join(tok.id_to_token(int(t)) for t in ids[head + 1:d - 1]) or "all"
                z = model(torch.tensor([[int(t) for t in ids[:d]]]))[0, -1].float()
                out.append((torch.softmax(z, -1)[inv].item(), kk, r))
        return out

    def summary(ps):
        ps = np.array(ps)
        q = np.quantile(ps, [0.05, 0.5, 0.95])
        return {"n": len(ps), "above_0.5": round(float((ps > 0.5).mean()), 3),
                "q05_median_q95": [round(float(x), 4) for x in q], "max": round(float(ps.max()), 4)}

    pf, pl = probs(fin, 1.0), probs(live, 1.0)
    print(json.dumps({"model": a.model, "prompts": "%top_all", "finished": summary([p for p, _, _ in pf]),
                      "live_same_plies": summary([p for p, _, _ in pl])}))
    kinds = collections.defaultdict(list)
    for p, _, r in pf:
        ks = four_kinds(r["state"])
        kinds["+".join(sorted(ks)) or "full board"].append(p)
    print(json.dumps({"finished_by_kind_of_four": {k: [len(v), round(float(np.median(v)), 3)]
                                                   for k, v in sorted(kinds.items(), key=lambda x: -len(x[1]))}}))
    if a.by_k:
        for name, rs in (("finished", fin), ("live", live)):
            by = collections.defaultdict(list)
            for p, kk, _ in probs(rs, 0.0):
                by[kk].append(p)
            print(json.dumps({f"{name}_by_k": {k: [len(v), round(float(np.median(v)), 3)]
                                               for k, v in sorted(by.items(), key=lambda x: int(x[0]))}}))


if __name__ == "__main__":
    main()

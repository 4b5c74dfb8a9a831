"""The paper's metrics (Table 2) of a MAV model on annotated positions, and those of a training run's model."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from ...datasets.records import is_best_move
from .mav_model import MAVModel


PLAIN = "%state %top_all %best_action"
TRANSITION = "%prev_state %prev_action %state %top_all %best_action"


def evaluate_records(model: MAVModel, game: str, records: Sequence[Dict[str, Any]], batch_size: int = 64,
                     board_size: int = 0, max_new_tokens: int = 384) -> Dict[str, Any]:
    """The paper's metrics (Table 2) on annotated positions (records of mavgame.model.records).

    Every position is asked in the plain form (``%state %top_all %best_action``) and, when it has a
    previous position, in the transition form (``%prev_state %prev_action %state %top_all %best_action``).
    Returns the mavgame.mav.metrics rates over all of them (best_action_legal, top_all_precision /
    recall / f1, next_state_accuracy, outcome_accuracy, parsed_ok_rate) plus value quality against the
    annotation: ``best_action_optimal`` (the %best_action has the annotation's best value) and
    ``value_mae_mean`` / ``value_mae_max`` (mean absolute error of mean / max scored values of the legal
    moves listed). Where the records have plies and the game has phases (``GameInfo.phases``),
    ``by_phase`` holds the same rates for each phase's positions (with ``positions``, their count).
    """
    from ... import _core, mav
    prompts, states, recs = [], [], []
    for r in records:
        st = _core.State(game, r["state"], board_size, 0)
        prompts.append(mav.prompt(st, PLAIN))
        states.append(st)
        recs.append(r)
        if r.get("prev_state") is not None:
            prev = _core.State(game, r["prev_state"], board_size, 0)
            prompts.append(mav.prompt(st, TRANSITION, prev_state=prev, prev_action=r["prev_action"]))
            states.append(st)
            recs.append(r)
    outs = model.generate(prompts, max_new_tokens=max_new_tokens, batch_size=batch_size)
    texts = [p + o.text for p, o in zip(prompts, outs)]
    m = mav.metrics(game, texts, states)
    parsed = [mav.parse(game, t, true_state=st) if r.get("values") else None
              for st, r, t in zip(states, recs, texts)]

    def value_metrics(idx: Sequence[int]) -> Dict[str, float]:
        opt_n = opt_ok = 0
        err: Dict[str, List[float]] = {"mean": [], "max": []}
        for i in idx:
            vals, pr = recs[i].get("values") or {}, parsed[i]
            if pr is None:
                continue
            if pr.best_present:
                opt_n += 1
                opt_ok += int(is_best_move(vals, pr.best))
            for scoring in ("mean", "max"):
                for mv, v in outs[i].values(scoring).items():
                    if mv in vals:
                        err[scoring].append(abs(v - vals[mv]))
        return {"best_action_optimal": opt_ok / opt_n if opt_n else float("nan"),
                "value_mae_mean": float(np.mean(err["mean"])) if err["mean"] else float("nan"),
                "value_mae_max": float(np.mean(err["max"])) if err["max"] else float("nan")}

    m.update(value_metrics(range(len(recs))))
    from ...games import registry
    phases = registry.get(game).phases if game in registry.names() else ()
    if phases and all("ply" in r for r in records):
        m["by_phase"] = {}
        for name, lo, hi in phases:
            idx = [i for i, r in enumerate(recs) if lo <= int(r["ply"]) <= hi]
            if not idx:
                continue
            pm = mav.metrics(game, [texts[i] for i in idx], [states[i] for i in idx])
            pm.update(value_metrics(idx))
            pm["positions"] = sum(1 for r in records if lo <= int(r["ply"]) <= hi)
            m["by_phase"][name] = pm
    m["positions"] = len(records)
    m["prompts"] = len(prompts)
    return m


def trainer_metrics(trainer, n_positions: Optional[int] = None, full: bool = False) -> Dict[str, Any]:
    """Generation metrics of a training run's current model on its first held-out positions (the main
    rates; ``full``: everything :func:`evaluate_records` returns)."""
    n = trainer.cfg.gen_eval_positions if n_positions is None else n_positions
    store = trainer.val_store
    if store is None or n <= 0:
        return {}
    recs = [store.record(i) for i in range(min(n, len(store)))]
    model = MAVModel.from_module(trainer.model, trainer.game, backend="auto")
    was_training = trainer.model.training
    trainer.model.eval()
    try:
        m = evaluate_records(model, trainer.game, recs)
    finally:
        trainer.model.train(was_training)
    if full:
        return m
    keys = ("parsed_ok_rate", "best_action_legal", "top_all_precision", "top_all_recall", "top_all_f1",
            "next_state_accuracy", "outcome_accuracy", "best_action_optimal", "value_mae_mean")
    return {k: float(m[k]) for k in keys if k in m}


__all__ = ["PLAIN", "TRANSITION", "evaluate_records", "trainer_metrics"]

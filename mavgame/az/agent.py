"""The AlphaZero agent (needs ``torch``): the C MCTS guided by a trained network's policy (prior) and
value, registered as the agent kind ``az``::

    az:checkpoint=runs/c4/checkpoint.pt,sims=200

Options: ``checkpoint`` (a file written by ``mavgame az``; required), ``sims`` (simulations per move,
default 100), ``batch`` (leaves per network call, default 1: AlphaZero's sequential search; more use
the MCTS's virtual counts), ``c_base``/``c_init`` (AlphaZero's c(s), defaults 19652 / 1.25),
``device`` (cpu, cuda), ``movetime`` (ms per move; ``sims`` then caps the search), ``seed``.
Play is deterministic for a seed: no root noise, the most visited move.
"""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np
import torch

from .. import _core
from ..play.agents import MCTSAgent, register_agent
from .network import AZNet
from .train import load_checkpoint

__all__ = ["AZEvaluator", "AZAgent", "load_network"]


def load_network(path: str, device: str = "cpu") -> AZNet:
    """The network of an AlphaZero checkpoint, in eval mode on ``device``."""
    d = load_checkpoint(path)
    cfg = d["config"]
    net = AZNet(tuple(d["obs_shape"]), int(d["num_actions"]), blocks=int(cfg["blocks"]),
                channels=int(cfg["channels"]), value_hidden=int(cfg["value_hidden"]))
    net.load_state_dict(d["model"])
    net.game = cfg["game"]
    return net.to(torch.device(device)).eval()


class AZEvaluator:
    """An MCTS evaluator (a Python callable, one network call per batch of leaves): the leaves'
    observation tensors batched in C, the policy softmaxed over each leaf's legal actions, the value
    in [-1, 1] (use ``MCTS(value_range=(-1, 1))``)."""

    def __init__(self, net: AZNet, device: str = "cpu"):
        self.net = net
        self.device = torch.device(device)
        self.name = "az"

    def __call__(self, requests: List[Any]) -> List[dict]:
        obs = _core.observation_tensors([r.state for r in requests])
        with torch.no_grad():
            logits, v = self.net(torch.from_numpy(obs).to(self.device))
        logits = logits.float().cpu().numpy()
        v = v.float().cpu().numpy()
        out = []
        for i, r in enumerate(requests):
            lg = logits[i, np.asarray(r.legal_actions, np.int64)]
            p = np.exp(lg - lg.max())
            out.append({"policy": p / p.sum(), "value": float(v[i])})
        return out


class AZAgent(MCTSAgent):
    """:class:`mavgame.play.agents.MCTSAgent` with the AlphaZero search settings (policy prior without
    uniform mixing, first-play urgency 0, c(s)) and an :class:`AZEvaluator`."""

    def __init__(self, checkpoint: Optional[str] = None, sims: Optional[int] = 100, *, batch: int = 1,
                 device: str = "cpu", c_base: float = 19652.0, c_init: float = 1.25, name: Optional[str] = None,
                 **kw):
        if not checkpoint:
            raise ValueError("the az agent needs checkpoint=PATH (a file written by `mavgame az`)")
        net = load_network(str(checkpoint), device)
        ev = AZEvaluator(net, device)
        super().__init__(ev, sims, name=name or f"az-{sims}", games=(net.game,), batch_size=int(batch),
                         prior="policy", eps=0.0, fpu=0.0, c_base=float(c_base), c_init=float(c_init),
                         value_range=(-1.0, 1.0), **kw)
        self.checkpoint = str(checkpoint)


register_agent("az", lambda **kw: AZAgent(**kw))

"""The AlphaZero network (needs ``torch``): a residual tower over the observation planes with a policy
head (logits over the game's action ids) and a value head (tanh, the expected result for the player
to move), as in Silver et al. (2018), scaled down by ``blocks`` and ``channels``."""
from __future__ import annotations

from typing import Callable, Tuple

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["AZNet", "torch_evaluator"]


class _Block(nn.Module):
    def __init__(self, c: int):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(x + y)


class AZNet(nn.Module):
    """(p, v) = f(s): ``obs_shape`` (planes, rows, cols) in; policy logits (``num_actions``) and a
    value in [-1, 1] out.  Stem: 3x3 convolution, batch norm, ReLU; ``blocks`` residual blocks of two
    3x3 convolutions; policy head: 1x1 convolution to 2 planes, batch norm, ReLU, linear; value head:
    1x1 convolution to 1 plane, batch norm, ReLU, linear to ``value_hidden``, ReLU, linear, tanh.

    AZdb (``intrinsic=True``): a third head of the value head's shape without the tanh, the intrinsic
    value v_d (sums of diversity rewards are not bounded); ``forward`` then returns (logits, v, v_d).
    The team's latent enters as input planes (``obs_shape`` counts them; :func:`mavgame.az.azdb.latent_planes`)."""

    def __init__(self, obs_shape: Tuple[int, int, int], num_actions: int, *, blocks: int = 4, channels: int = 64,
                 value_hidden: int = 64, intrinsic: bool = False):
        super().__init__()
        planes, rows, cols = (int(x) for x in obs_shape)
        if blocks < 0 or channels < 1 or value_hidden < 1:
            raise ValueError(f"network: blocks {blocks} must be >= 0, channels {channels} and value_hidden "
                             f"{value_hidden} >= 1")
        self.obs_shape = (planes, rows, cols)
        self.num_actions = int(num_actions)
        cells = rows * cols
        self.stem = nn.Sequential(nn.Conv2d(planes, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels),
                                  nn.ReLU())
        self.tower = nn.Sequential(*[_Block(channels) for _ in range(blocks)])
        self.p_conv = nn.Sequential(nn.Conv2d(channels, 2, 1, bias=False), nn.BatchNorm2d(2), nn.ReLU())
        self.p_fc = nn.Linear(2 * cells, self.num_actions)
        self.v_conv = nn.Sequential(nn.Conv2d(channels, 1, 1, bias=False), nn.BatchNorm2d(1), nn.ReLU())
        self.v_fc = nn.Sequential(nn.Linear(cells, value_hidden), nn.ReLU(), nn.Linear(value_hidden, 1))
        self.intrinsic = bool(intrinsic)
        if self.intrinsic:
            self.d_conv = nn.Sequential(nn.Conv2d(channels, 1, 1, bias=False), nn.BatchNorm2d(1), nn.ReLU())
            self.d_fc = nn.Sequential(nn.Linear(cells, value_hidden), nn.ReLU(), nn.Linear(value_hidden, 1))

    def forward(self, x: torch.Tensor):
        h = self.tower(self.stem(x))
        logits = self.p_fc(self.p_conv(h).flatten(1))
        v = torch.tanh(self.v_fc(self.v_conv(h).flatten(1))).squeeze(1)
        if self.intrinsic:
            return logits, v, self.d_fc(self.d_conv(h).flatten(1)).squeeze(1)
        return logits, v


def torch_evaluator(net: nn.Module, device: str = "cpu") -> Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray]]:
    """``evaluate(obs) -> (logits, values)`` for :func:`mavgame.az.play_games`: the network in eval
    mode, without gradients, on ``device``; NumPy float32 in and out."""
    dev = torch.device(device)

    def evaluate(obs: np.ndarray):
        net.eval()
        with torch.no_grad():
            x = torch.from_numpy(np.ascontiguousarray(obs, np.float32)).to(dev)
            out = net(x)
            return out[0].float().cpu().numpy(), out[1].float().cpu().numpy()
    return evaluate

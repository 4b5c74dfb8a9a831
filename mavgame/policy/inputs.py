"""Input representations of the IDP report's section 3.1, computed from the 41 planes of
:func:`mavgame._core.policy_planes` inside the network (so every caller keeps passing the 41 planes).

The 41 planes are three positions of 13 planes (White P N B R Q K, Black P N B R Q K, empty squares: the
current position, then the positions one and two plies back), then the colour plane and the move-number plane
(docs/policy.md). The representations (``PolicyConfig(inputs=...)``, ``mavgame policy train --inputs``):

- ``planes``: the 41 planes as they are (the report's representation, the default).
- ``signed``: "6 planes per position ... 1 for white pieces and -1 for black pieces": per position the six
  piece-type planes White minus Black, then its empty-square plane (7 a position, 23 in all). The report does
  not say whether the empty plane stays; it is kept here.
- ``values``: the 41 planes and "a plane with the board description using pieces values (positive for white
  and negative for black)" of the current position: P 1, N 3, B 3, R 5, Q 9, K 0, divided by 9 (42 planes;
  the report gives neither the values nor a scale).
- ``occupancy``: the 41 planes and "planes describing all pieces each player has on the board": one plane of
  all White pieces and one of all Black pieces of the current position (43 planes).

PyTorch is needed (this module is imported by :mod:`mavgame.policy.network`).
"""
from __future__ import annotations

from typing import Dict

import torch
from torch import nn

from .. import _core

#: planes the network's first layer sees, by representation
INPUT_PLANES: Dict[str, int] = {"planes": _core.POLICY_PLANES, "signed": 23, "values": _core.POLICY_PLANES + 1,
                                "occupancy": _core.POLICY_PLANES + 2}

#: piece values of the ``values`` plane (P N B R Q K), before the division by 9
PIECE_VALUES = (1.0, 3.0, 3.0, 5.0, 9.0, 0.0)


class InputPlanes(nn.Module):
    """The 41 planes (n, 41, 8, 8) -> the representation ``kind`` (n, INPUT_PLANES[kind], 8, 8). No weights
    (the ``values`` weights are a constant, not saved in the state_dict)."""

    def __init__(self, kind: str = "planes"):
        super().__init__()
        if kind not in INPUT_PLANES:
            raise ValueError(f"policy network inputs must be one of {', '.join(INPUT_PLANES)}, got {kind!r}")
        self.kind = kind
        self.register_buffer("values", torch.tensor(PIECE_VALUES).view(1, 6, 1, 1) / 9.0, persistent=False)

    @property
    def planes(self) -> int:
        """Planes of the representation."""
        return INPUT_PLANES[self.kind]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kind == "planes":
            return x
        if self.kind == "signed":
            parts = []
            for k in range(3):
                p = x[:, 13 * k:13 * k + 13]
                parts += [p[:, 0:6] - p[:, 6:12], p[:, 12:13]]
            return torch.cat(parts + [x[:, 39:41]], 1)
        if self.kind == "values":
            v = (x[:, 0:6] * self.values).sum(1, keepdim=True) - (x[:, 6:12] * self.values).sum(1, keepdim=True)
            return torch.cat([x, v], 1)
        return torch.cat([x, x[:, 0:6].sum(1, keepdim=True), x[:, 6:12].sum(1, keepdim=True)], 1)

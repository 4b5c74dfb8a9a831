"""The AlphaZero replay buffer: a ring of the latest ``capacity`` positions in NumPy arrays."""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np

__all__ = ["ReplayBuffer"]


class ReplayBuffer:
    """The most recent ``capacity`` training positions: observations ``obs`` (float32, one
    observation tensor each), visit-count policies ``pi`` (float32, ``num_actions`` each) and
    outcomes ``z`` (float32, the game result from the mover's view).  Older positions are
    overwritten first.  With ``intrinsic=True`` (AZdb) each position also has ``zd``, its intrinsic
    value target."""

    def __init__(self, capacity: int, obs_shape: Tuple[int, ...], num_actions: int, intrinsic: bool = False):
        if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
            raise ValueError(f"replay capacity must be an int >= 1, not {capacity!r}")
        self.capacity = int(capacity)
        self.obs_shape = tuple(int(x) for x in obs_shape)
        self.num_actions = int(num_actions)
        self.obs = np.zeros((self.capacity,) + self.obs_shape, np.float32)
        self.pi = np.zeros((self.capacity, self.num_actions), np.float32)
        self.z = np.zeros(self.capacity, np.float32)
        self.zd = np.zeros(self.capacity, np.float32) if intrinsic else None
        self.size = 0      # positions held
        self.next = 0      # ring index of the next write
        self.added = 0     # positions ever added

    def __len__(self) -> int:
        return self.size

    def add(self, obs: np.ndarray, pi: np.ndarray, z: np.ndarray, zd: Optional[np.ndarray] = None) -> None:
        """Append a batch of positions (the oldest go when full); ``zd`` exactly when the buffer is intrinsic."""
        if (zd is None) != (self.zd is None):
            raise ValueError("replay add: zd (intrinsic value targets) must be given exactly for an intrinsic buffer")
        zd = None if zd is None else np.asarray(zd, np.float32)
        if zd is not None and zd.shape != np.shape(z):
            raise ValueError(f"replay add: zd of shape {zd.shape} does not fit z of shape {np.shape(z)}")
        obs = np.asarray(obs, np.float32)
        pi = np.asarray(pi, np.float32)
        z = np.asarray(z, np.float32)
        n = len(z)
        if obs.shape != (n,) + self.obs_shape or pi.shape != (n, self.num_actions) or z.shape != (n,):
            raise ValueError(f"replay add: shapes obs {obs.shape}, pi {pi.shape}, z {z.shape} do not fit "
                             f"obs {self.obs_shape} and {self.num_actions} actions for {n} positions")
        if n > self.capacity:  # only the newest fit
            obs, pi, z = obs[-self.capacity:], pi[-self.capacity:], z[-self.capacity:]
            zd = None if zd is None else zd[-self.capacity:]
            self.added += n - self.capacity
            n = self.capacity
        idx = (self.next + np.arange(n)) % self.capacity
        self.obs[idx], self.pi[idx], self.z[idx] = obs, pi, z
        if zd is not None:
            self.zd[idx] = zd
        self.next = int((self.next + n) % self.capacity)
        self.size = min(self.capacity, self.size + n)
        self.added += n

    def sample(self, rng: np.random.Generator, batch_size: int) -> Tuple[np.ndarray, ...]:
        """``batch_size`` positions drawn uniformly with replacement with ``rng``: (obs, pi, z), and zd
        for an intrinsic buffer."""
        if self.size == 0:
            raise ValueError("replay buffer is empty")
        idx = rng.integers(0, self.size, size=int(batch_size))
        if self.zd is not None:
            return self.obs[idx], self.pi[idx], self.z[idx], self.zd[idx]
        return self.obs[idx], self.pi[idx], self.z[idx]

    def state_dict(self) -> Dict[str, object]:
        """Everything needed to restore the buffer exactly (only the filled part of the arrays)."""
        return {"capacity": self.capacity, "obs_shape": self.obs_shape, "num_actions": self.num_actions,
                "size": self.size, "next": self.next, "added": self.added,
                "obs": self.obs[:self.size].copy(), "pi": self.pi[:self.size].copy(), "z": self.z[:self.size].copy(),
                "zd": None if self.zd is None else self.zd[:self.size].copy()}

    @classmethod
    def from_state_dict(cls, d: Dict[str, object]) -> "ReplayBuffer":
        try:
            buf = cls(int(d["capacity"]), tuple(d["obs_shape"]), int(d["num_actions"]),
                      intrinsic=d.get("zd") is not None)
            size = int(d["size"])
            buf.obs[:size], buf.pi[:size], buf.z[:size] = d["obs"], d["pi"], d["z"]
            if buf.zd is not None:
                buf.zd[:size] = d["zd"]
            buf.size, buf.next, buf.added = size, int(d["next"]), int(d["added"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"not a replay buffer state: {e}") from None
        return buf

"""AZdb matchmaking (the paper's appendix B, Figure 9): which teammate each player of the team meets in
self-play.  NumPy only.

The results of every (white i, black j) pairing are kept in an empirical payoff matrix M (the mean
result for white, +1 win, 0 draw, -1 loss; pairings never played count 0).  Player i's opponents are
drawn from one distribution when i plays white (over black players) and one when it plays black (over
white players): row i of the interaction graphs Sigma_w and Sigma_b (:meth:`Matchmaker.interaction_graphs`).
The matchmakers (:data:`MATCHMAKERS`), as the paper lists them:

- ``selfplay``: j = i (each player plays only itself).
- ``uniform``: j uniform over the whole team.
- ``psro`` (PSRO-Nash): i playing white meets a black opponent drawn from the column player's Nash
  strategy of the zero-sum game M[0..i, 0..i], playing black a white opponent drawn from the row
  player's; the population includes i itself (the paper's variant), so player 0 plays plain self-play.
- ``psro-uniform`` (PSRO-Uniform, fictitious play): j uniform over the population 0..i.
- ``psro-rectified`` (PSRO-Rectified, Balduzzi et al. 2019): the PSRO-Nash mixture restricted to the
  players that i beats or ties (M[i, j] >= 0 as white, M[j, i] <= 0 as black; unplayed pairings are
  ties) and renormalised; when that leaves no mass, i plays itself.
- ``psro-cycle`` (PSRO-Cycle): the first n - 1 players form a strategic cycle, player i < n - 1
  responding to player (i - 1) mod (n - 1) (so player 0 to player n - 2; with 2 players player 0 plays
  itself); the last player responds to the Nash equilibrium of the whole team (PSRO-Nash over 0..n-1).
  The paper's text does not say which way the cycle turns; this is our reading.

Only the exploiter's (player i's) moves are learnt from; when i meets itself both sides are i's.
The exploiters take turns (game k's exploiter is k mod players) and play white or black with
probability 1/2.
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np

__all__ = ["MATCHMAKERS", "nash_equilibrium", "Matchmaker"]

MATCHMAKERS = ("selfplay", "uniform", "psro", "psro-uniform", "psro-rectified", "psro-cycle")


def nash_equilibrium(payoff: np.ndarray, iterations: int = 3000) -> Tuple[np.ndarray, np.ndarray, float]:
    """A Nash equilibrium (x, y, value) of the zero-sum matrix game ``payoff`` (the row player gets
    payoff[r, c] and maximises, the column player minimises), by regret matching+ with linearly
    weighted averages (converges to an equilibrium; for the small team matrices here (5 x 5) the
    exploitability after 3000 iterations is about 2e-3 of the payoff range; NumPy only, no LP solver)."""
    a = np.asarray(payoff, np.float64)
    if a.ndim != 2 or a.size == 0 or not np.all(np.isfinite(a)):
        raise ValueError(f"payoff must be a non-empty finite 2-d matrix, not shape {a.shape}")
    m, n = a.shape
    rx, ry = np.zeros(m), np.zeros(n)
    sx, sy = np.zeros(m), np.zeros(n)
    x, y = np.full(m, 1.0 / m), np.full(n, 1.0 / n)
    for t in range(1, int(iterations) + 1):
        ux = a @ y
        uy = -(x @ a)
        rx = np.maximum(rx + ux - x @ ux, 0.0)
        ry = np.maximum(ry + uy - y @ uy, 0.0)
        x = rx / rx.sum() if rx.sum() > 0 else np.full(m, 1.0 / m)
        y = ry / ry.sum() if ry.sum() > 0 else np.full(n, 1.0 / n)
        sx += t * x
        sy += t * y
    x, y = sx / sx.sum(), sy / sy.sum()
    return x, y, float(x @ a @ y)


class Matchmaker:
    """Pairs the team's players for self-play games and keeps the payoff matrix (white x black)."""

    def __init__(self, players: int, kind: str = "psro"):
        if kind not in MATCHMAKERS:
            raise ValueError(f"matchmaking must be one of {', '.join(MATCHMAKERS)}, not {kind!r}")
        if isinstance(players, bool) or not isinstance(players, (int, np.integer)) or players < 1:
            raise ValueError(f"players must be an int >= 1, not {players!r}")
        self.players = int(players)
        self.kind = kind
        self.score = np.zeros((self.players, self.players))   # sum of white's results
        self.count = np.zeros((self.players, self.players), np.int64)

    def payoff(self) -> np.ndarray:
        """The empirical payoff matrix: mean result for white of each (white, black) pairing (0 if unplayed)."""
        return np.divide(self.score, self.count, out=np.zeros_like(self.score), where=self.count > 0)

    def _nash(self, k: int) -> Tuple[np.ndarray, np.ndarray]:
        """(row player's x, column player's y) of the Nash equilibrium of M[0..k, 0..k]."""
        x, y, _ = nash_equilibrium(self.payoff()[:k + 1, :k + 1])
        return x, y

    def mixtures(self, i: int) -> Tuple[np.ndarray, np.ndarray]:
        """(opponents of i as white: a distribution over black players, of i as black: over white
        players), each over the whole team (zero outside the population i responds to)."""
        p = self.players
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < p:
            raise ValueError(f"player {i!r} is not in [0, {p})")
        i = int(i)
        vs_white, vs_black = np.zeros(p), np.zeros(p)
        kind = self.kind
        if kind == "selfplay":
            vs_white[i] = vs_black[i] = 1.0
        elif kind == "uniform":
            vs_white[:] = vs_black[:] = 1.0 / p
        elif kind == "psro-uniform":
            vs_white[:i + 1] = vs_black[:i + 1] = 1.0 / (i + 1)
        elif kind == "psro-cycle" and i < p - 1:
            vs_white[(i - 1) % (p - 1)] = vs_black[(i - 1) % (p - 1)] = 1.0
        else:   # psro, psro-rectified, and the last player of psro-cycle (Nash over the whole team)
            k = p - 1 if kind == "psro-cycle" else i
            x, y = self._nash(k)
            vs_white[:k + 1] = y      # i plays white: the opponent is black, the column player's strategy
            vs_black[:k + 1] = x      # i plays black: the opponent is white, the row player's strategy
            if kind == "psro-rectified":
                m = self.payoff()
                vs_white[:k + 1] *= m[i, :k + 1] >= 0      # black opponents i (white) beats or ties
                vs_black[:k + 1] *= m[:k + 1, i] <= 0      # white opponents i (black) beats or ties
                for q in (vs_white, vs_black):
                    s = q.sum()
                    if s > 1e-12:
                        q /= s
                    else:
                        q[:] = 0.0
                        q[i] = 1.0
        return vs_white, vs_black

    def interaction_graphs(self) -> Tuple[np.ndarray, np.ndarray]:
        """(Sigma_w, Sigma_b), each (players, players): row i is the distribution of i's opponents when
        i plays white (over black players) and when it plays black (over white players); the paper's
        Figures 9 and 10."""
        rows = [self.mixtures(i) for i in range(self.players)]
        return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])

    def pairings(self, num_games: int, rng: np.random.Generator, first_game: int = 0
                 ) -> Tuple[np.ndarray, np.ndarray]:
        """latents int32 (num_games, 2) (white's, black's player) and the exploiter's side (0 white,
        1 black) per game; game k's exploiter is (first_game + k) mod players."""
        if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 0:
            raise ValueError(f"num_games must be an int >= 0, not {num_games!r}")
        mix = {i: self.mixtures(i) for i in range(self.players)}
        lat = np.zeros((num_games, 2), np.int32)
        side = rng.integers(0, 2, size=num_games).astype(np.int8)
        for k in range(num_games):
            i = (first_game + k) % self.players
            q = mix[i][int(side[k])]
            j = int(rng.choice(self.players, p=q / q.sum()))
            lat[k, side[k]] = i
            lat[k, 1 - side[k]] = j
        return lat, side

    def record(self, white: np.ndarray, black: np.ndarray, result: np.ndarray) -> None:
        """Add games' results (for white: +1, 0, -1)."""
        np.add.at(self.score, (np.asarray(white), np.asarray(black)), np.asarray(result, np.float64))
        np.add.at(self.count, (np.asarray(white), np.asarray(black)), 1)

    def state_dict(self) -> Dict[str, object]:
        return {"players": self.players, "kind": self.kind, "score": self.score.copy(), "count": self.count.copy()}

    @classmethod
    def from_state_dict(cls, d: Dict[str, object]) -> "Matchmaker":
        m = cls(int(d["players"]), str(d["kind"]))
        m.score[:] = d["score"]
        m.count[:] = d["count"]
        return m

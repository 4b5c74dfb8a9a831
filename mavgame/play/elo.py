"""Elo ratings by maximum likelihood, with confidence intervals and calibration to an external scale.

The model is the logistic Elo model: agent i scores against agent j with expectation
``p_ij = 1 / (1 + 10 ** ((r_j - r_i) / 400))``.  A game scores 1, 1/2 (draw) or 0, and the
log-likelihood ``sum over games of s log p + (1 - s) log (1 - p)`` treats a draw as half a win.
Ratings are fixed up to a constant: by default their mean is 0 (or an ``anchor`` agent has a given
rating, as the paper's basic MCTS at 0; ``EloResult.origin`` and the table's footer say which).  Newton's method finds the maximum; the Hessian at the maximum gives standard errors.

An agent that won (or lost) every game has no finite maximum-likelihood rating.  ``prior_draws``
adds that many virtual drawn games to every pair that played (BayesElo's device; default 1), which
keeps every rating finite and shrinks small samples slightly towards equality.  Use
``prior_draws=0`` for the plain maximum-likelihood fit (an error names the agents that then have no
finite rating).

    >>> from mavgame.play.elo import fit_elo, calibrate
    >>> r = fit_elo(["a", "b", "c"], wins, draws)            # wins[i][j]: games i won against j
    >>> print(r.table())
    >>> r2 = calibrate(r, {"a": 1500, "c": 2100})            # linear fit onto an external scale
    >>> r2.plot("elo.png")

Confidence intervals: ``ci="hessian"`` (normal approximation, fast) or ``ci="bootstrap"`` (refit on
game results resampled within each pair; percentile intervals).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

__all__ = ["EloResult", "fit_elo", "calibrate", "expected_score", "elo_from_results"]

_K = math.log(10.0) / 400.0


def expected_score(r_a: float, r_b: float) -> float:
    """Expected score of a player rated r_a against one rated r_b."""
    return 1.0 / (1.0 + 10.0 ** ((r_b - r_a) / 400.0))


def _z(level: float) -> float:
    """Two-sided normal quantile for a confidence level (e.g. 0.95 -> 1.96)."""
    from statistics import NormalDist
    return NormalDist().inv_cdf(0.5 + level / 2.0)


@dataclass
class EloResult:
    """Ratings of a set of agents.

    ``elo`` are the internal ratings; ``low``/``high`` the confidence interval bounds at ``level``;
    ``stderr`` standard errors (Hessian) or bootstrap standard deviations.  After
    :func:`calibrate`, ``external`` holds ratings on the external scale (with ``ext_low``/``ext_high``)
    and ``slope``/``intercept`` the fit."""

    names: List[str]
    elo: np.ndarray
    stderr: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    games: np.ndarray          # games played by each agent
    score: np.ndarray          # points scored by each agent (draws as 1/2)
    wins: np.ndarray           # the matrices the fit used (without the prior)
    draws: np.ndarray
    prior_draws: float = 1.0
    ci_method: str = "hessian"
    external: Optional[np.ndarray] = None
    ext_low: Optional[np.ndarray] = None
    ext_high: Optional[np.ndarray] = None
    slope: Optional[float] = None
    intercept: Optional[float] = None
    anchors: Dict[str, float] = field(default_factory=dict)
    # How the internal scale was fixed: None (mean 0) or (agent, rating) of fit_elo's ``anchor``.
    origin: Optional[Tuple[str, float]] = None

    @property
    def zero(self) -> str:
        """What fixes the scale, in words: 'mean 0' or 'AGENT = RATING'."""
        return "mean 0" if self.origin is None else f"{self.origin[0]} = {self.origin[1]:g}"

    def describe(self) -> str:
        """How the ratings were made: the origin of the scale and the prior (as the table's footer says)."""
        zero = self.zero
        prior = (f"{self.prior_draws:g} virtual draw(s) per pair" if self.prior_draws
                 else "no prior (plain maximum likelihood)")
        return f"Elo: maximum likelihood, draws as half wins, {zero}, {prior}"

    def __getitem__(self, name: str) -> float:
        return float(self.elo[self.names.index(name)])

    def to_dict(self) -> Dict[str, Any]:
        """The table as JSON-ready data, with how it was made: ``method`` (:meth:`describe`), ``origin``
        (``{"agent", "rating"}`` or None for mean 0), ``prior_draws``, ``ci``, ``level``, ``rows`` (as
        :meth:`rows`) and ``calibration`` (slope, intercept, anchors; None without).  Non-finite numbers
        are None (JSON has no NaN)."""
        def clean(v):
            if isinstance(v, float) and not math.isfinite(v):
                return None
            return v
        cal = None
        if self.external is not None:
            cal = {"slope": clean(float(self.slope)), "intercept": clean(float(self.intercept)),
                   "anchors": {k: float(v) for k, v in self.anchors.items()}}
        return {"method": self.describe(),
                "origin": None if self.origin is None else {"agent": self.origin[0], "rating": float(self.origin[1])},
                "prior_draws": float(self.prior_draws), "ci": self.ci_method, "level": float(self.level),
                "rows": [{k: clean(v) for k, v in r.items()} for r in self.rows()], "calibration": cal}

    def as_dict(self) -> Dict[str, float]:
        return {n: float(e) for n, e in zip(self.names, self.elo)}

    def order(self) -> List[int]:
        key = self.external if self.external is not None else self.elo
        return sorted(range(len(self.names)), key=lambda i: -key[i])

    def rows(self) -> List[dict]:
        """One dict per agent, best first."""
        out = []
        n = len(self.names)
        for rank, i in enumerate(self.order(), 1):
            w = int(self.wins[i].sum())
            l_ = int(self.wins[:, i].sum())
            d = int(self.draws[i].sum())
            row = {"rank": rank, "agent": self.names[i], "elo": float(self.elo[i]),
                   "low": float(self.low[i]), "high": float(self.high[i]), "stderr": float(self.stderr[i]),
                   "games": int(self.games[i]), "wins": w, "draws": d, "losses": l_,
                   "score": float(self.score[i] / self.games[i]) if self.games[i] else float("nan")}
            if self.external is not None:
                row["external"] = float(self.external[i])
                row["ext_low"] = float(self.ext_low[i])  # type: ignore[index]
                row["ext_high"] = float(self.ext_high[i])  # type: ignore[index]
                row["anchor"] = self.anchors.get(self.names[i])
            out.append(row)
        assert len(out) == n
        return out

    def table(self) -> str:
        """A text table, best first: rank, agent, Elo with its interval, games, W/D/L and score."""
        rows = self.rows()
        width = max([5] + [len(r["agent"]) for r in rows])
        pct = int(round(self.level * 100))
        head = f"{'#':>3}  {'agent':<{width}}  {'Elo':>6}  {f'{pct}% CI':>15}"
        if self.external is not None:
            head += f"  {'ext. Elo':>8}  {f'ext. {pct}% CI':>15}  {'anchor':>6}"
        head += f"  {'games':>6}  {'W':>5} {'D':>5} {'L':>5}  {'score':>6}"
        lines = [head, "-" * len(head)]
        for r in rows:
            ci = f"[{r['low']:.0f}, {r['high']:.0f}]"
            s = f"{r['rank']:>3}  {r['agent']:<{width}}  {r['elo']:>6.0f}  {ci:>15}"
            if self.external is not None:
                eci = f"[{r['ext_low']:.0f}, {r['ext_high']:.0f}]"
                anc = "" if r["anchor"] is None else f"{r['anchor']:.0f}"
                s += f"  {r['external']:>8.0f}  {eci:>15}  {anc:>6}"
            s += f"  {r['games']:>6}  {r['wins']:>5} {r['draws']:>5} {r['losses']:>5}  {100 * r['score']:>5.1f}%"
            lines.append(s)
        foot = self.describe() + f"; CI: {self.ci_method}"
        if self.external is not None:
            foot += f"; external = {self.slope:.3f} * Elo + {self.intercept:.1f} (fit over {len(self.anchors)} anchor(s))"
        lines.append(foot)
        return "\n".join(lines)

    def to_pandas(self):
        """The table as a pandas DataFrame, one row per agent best first (needs pandas)."""
        from .._tables import pandas
        return pandas().DataFrame(self.rows()).set_index("agent")

    to_dataframe = to_pandas

    def _repr_html_(self) -> str:
        """The table as HTML (Jupyter shows it as a table)."""
        from .._tables import html_table
        rows = self.rows()
        cols = [c for c in (rows[0] if rows else {}) if c != "agent"]
        caption = f"Elo, {self.level:.0%} intervals ({self.ci_method})"
        return html_table(cols, [[r[c] for c in cols] for r in rows], caption, index=[r["agent"] for r in rows])

    def __str__(self) -> str:
        return self.table()

    def plot(self, path: Optional[str] = None, ax=None, external: Optional[bool] = None, title: Optional[str] = None):
        """Horizontal error-bar chart of the ratings (best on top); saved to ``path`` if given.

        Returns the matplotlib Axes.  ``external`` picks the calibrated scale (default: when present)."""
        import matplotlib
        if ax is None and path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
        use_ext = self.external is not None if external is None else external
        if use_ext and self.external is None:
            raise ValueError("no external ratings: call calibrate() first")
        vals = self.external if use_ext else self.elo
        lo = self.ext_low if use_ext else self.low
        hi = self.ext_high if use_ext else self.high
        order = self.order()[::-1]
        created = ax is None
        if created:
            fig, ax = plt.subplots(figsize=(7, 0.35 * len(order) + 1.2))
        y = np.arange(len(order))
        v = np.asarray([vals[i] for i in order])
        err = np.vstack([v - np.asarray([lo[i] for i in order]), np.asarray([hi[i] for i in order]) - v])
        colors = ["tab:red" if self.names[i] in self.anchors else "tab:blue" for i in order]
        ax.errorbar(v, y, xerr=err, fmt="none", ecolor="0.5", capsize=3)
        ax.scatter(v, y, c=colors, zorder=3)
        ax.set_yticks(y)
        ax.set_yticklabels([self.names[i] for i in order])
        ax.set_xlabel(("external Elo" if use_ext else f"Elo ({self.zero})") + f", {int(round(self.level * 100))}% CI")
        if title:
            ax.set_title(title)
        ax.grid(axis="x", alpha=0.3)
        if created:
            ax.figure.tight_layout()
            if path is not None:
                ax.figure.savefig(path, dpi=120)
                plt.close(ax.figure)
        return ax


# ---------------------------------------------------------------------------------------------
# the fit


def _components(n_games: np.ndarray) -> List[List[int]]:
    n = n_games.shape[0]
    seen = [False] * n
    comps = []
    for s in range(n):
        if seen[s]:
            continue
        stack, comp = [s], []
        seen[s] = True
        while stack:
            u = stack.pop()
            comp.append(u)
            for v in np.nonzero(n_games[u] > 0)[0]:
                if not seen[v]:
                    seen[v] = True
                    stack.append(int(v))
        comps.append(sorted(comp))
    return comps


def _newton(S: np.ndarray, N: np.ndarray, r0: Optional[np.ndarray] = None, max_iter: int = 200,
            tol: float = 1e-9) -> Tuple[np.ndarray, np.ndarray, bool]:
    """Maximise the likelihood with r[0] fixed at 0. S[i,j]: score of i against j; N: games.

    Returns (ratings with r[0] = 0, reduced Fisher information (n-1)x(n-1), converged)."""
    n = S.shape[0]
    r = np.zeros(n) if r0 is None else r0 - r0[0]
    converged = False
    info = np.zeros((n - 1, n - 1))
    for _ in range(max_iter):
        d = r[:, None] - r[None, :]
        p = 1.0 / (1.0 + np.exp(-_K * d))
        g = _K * (S - N * p).sum(axis=1)
        w = _K * _K * N * p * (1.0 - p)
        F = -w
        np.fill_diagonal(F, w.sum(axis=1))  # Fisher information (= -Hessian), a weighted Laplacian
        info = F[1:, 1:]
        try:
            step = np.linalg.solve(info, g[1:])
        except np.linalg.LinAlgError:
            return r, info, False
        # damp huge steps (far from the optimum the quadratic model overshoots)
        big = np.abs(step).max() if step.size else 0.0
        if big > 400.0:
            step *= 400.0 / big
        r[1:] += step
        if big < tol:
            converged = True
            break
    d = r[:, None] - r[None, :]
    p = 1.0 / (1.0 + np.exp(-_K * d))
    w = _K * _K * N * p * (1.0 - p)
    F = -w
    np.fill_diagonal(F, w.sum(axis=1))
    return r, F[1:, 1:], converged


def _fit_core(S: np.ndarray, N: np.ndarray) -> Tuple[np.ndarray, np.ndarray, bool]:
    """Mean-zero ratings and their covariance matrix."""
    n = S.shape[0]
    if n == 1:
        return np.zeros(1), np.zeros((1, 1)), True
    r, info, ok = _newton(S, N)
    # covariance of r[1:] given r[0] = 0, then mapped to the mean-zero parametrisation
    cov_red = np.linalg.pinv(info)
    J = np.zeros((n, n - 1))
    J[1:, :] = np.eye(n - 1)
    A = np.eye(n) - np.full((n, n), 1.0 / n)
    T = A @ J
    cov = T @ cov_red @ T.T
    return r - r.mean(), cov, ok


def fit_elo(names: Sequence[str], wins, draws=None, *, prior_draws: float = 1.0, ci: str = "hessian",
            level: float = 0.95, n_boot: int = 1000, seed: Optional[int] = 0,
            anchor: Optional[Tuple[str, float]] = None) -> EloResult:
    """Fit Elo ratings.

    Parameters
    ----------
    names:
        The agents, in the order of the matrices' rows.
    wins:
        ``wins[i][j]``: games agent i won against agent j (either colour).
    draws:
        ``draws[i][j]``: drawn games between i and j (symmetric; if only one triangle is filled it is
        mirrored).
    prior_draws:
        Virtual draws added to each pair that played (0: plain maximum likelihood).
    ci:
        "hessian" (normal approximation from the observed information) or "bootstrap".
    level:
        Confidence level of the intervals.
    anchor:
        (name, rating): shift the scale so that this agent has this rating (default: mean 0); the paper
        anchors its basic MCTS at 0.  The result's ``origin`` and table footer name it.
    """
    names = list(names)
    n = len(names)
    if n == 0:
        raise ValueError("no agents to rate")
    if len(set(names)) != n:
        raise ValueError(f"agent names are not unique: {names}")
    W = np.asarray(wins, dtype=float)
    D = np.zeros((n, n)) if draws is None else np.asarray(draws, dtype=float)
    if W.shape != (n, n) or D.shape != (n, n):
        raise ValueError(f"wins and draws must be {n}x{n} matrices, got {W.shape} and {D.shape}")
    if (W < 0).any() or (D < 0).any() or not np.isfinite(W).all() or not np.isfinite(D).all():
        raise ValueError("wins and draws must be finite and non-negative")
    if np.any(np.diag(W)) or np.any(np.diag(D)):
        raise ValueError("an agent cannot play itself (non-zero diagonal in wins or draws)")
    if not np.allclose(D, D.T):
        if np.allclose(np.tril(D), 0) or np.allclose(np.triu(D), 0):
            D = D + D.T
        else:
            raise ValueError("the draws matrix must be symmetric")
    if ci not in ("hessian", "bootstrap"):
        raise ValueError(f"ci must be 'hessian' or 'bootstrap', not {ci!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), not {level}")
    if prior_draws < 0:
        raise ValueError(f"prior_draws must be >= 0, not {prior_draws}")
    N = W + W.T + D
    comps = _components(N)
    if len(comps) > 1:
        groups = "; ".join(", ".join(names[i] for i in c) for c in comps)
        raise ValueError(f"the agents fall into {len(comps)} groups that never played each other ({groups}): "
                         "their ratings cannot be compared")
    played = N > 0
    S = W + 0.5 * D + 0.5 * prior_draws * played
    Np = N + prior_draws * played
    if prior_draws == 0 and n > 1:
        _check_finite_mle(names, S, Np)
    elo, cov, ok = _fit_core(S, Np)
    if not ok:
        raise ValueError("the Elo fit did not converge (try prior_draws > 0)")
    games = N.sum(axis=1)
    score = (W + 0.5 * D).sum(axis=1)
    if ci == "hessian" or n == 1:
        se = np.sqrt(np.maximum(np.diag(cov), 0.0))
        z = _z(level)
        low, high = elo - z * se, elo + z * se
        method = "hessian"
    else:
        low, high, se = _bootstrap(W, D, prior_draws, elo, level, n_boot, seed)
        method = f"bootstrap ({n_boot})"
    res = EloResult(names=names, elo=elo, stderr=se, low=low, high=high, level=level, games=games, score=score,
                    wins=W, draws=D, prior_draws=prior_draws, ci_method=method)
    if anchor is not None:
        name, value = anchor
        if name not in names:
            raise ValueError(f"anchor {name!r} is not one of the agents {names}")
        shift = float(value) - res[name]
        res.elo = res.elo + shift
        res.low = res.low + shift
        res.high = res.high + shift
        res.origin = (name, float(value))
    return res


def _check_finite_mle(names, S, N) -> None:
    """Without a prior, an agent set that scored everything (or nothing) against the rest has no
    finite maximum: detect it for each single agent and name it."""
    bad = []
    for i, nm in enumerate(names):
        if N[i].sum() > 0 and (np.isclose(S[i].sum(), N[i].sum()) or np.isclose(S[i].sum(), 0.0)):
            bad.append(nm)
    if bad:
        raise ValueError(f"no finite maximum-likelihood rating for {bad} (all games won or all lost); "
                         "use prior_draws > 0")


def _bootstrap(W, D, prior_draws, elo, level, n_boot, seed):
    rng = np.random.default_rng(seed)
    n = W.shape[0]
    samples = np.empty((n_boot, n))
    iu = [(i, j) for i in range(n) for j in range(i + 1, n) if W[i, j] + W[j, i] + D[i, j] > 0]
    for b in range(n_boot):
        Wb = np.zeros_like(W)
        Db = np.zeros_like(D)
        for i, j in iu:
            tot = int(round(W[i, j] + W[j, i] + D[i, j]))
            probs = np.array([W[i, j], W[j, i], D[i, j]], dtype=float)
            probs /= probs.sum()
            a, c, d = rng.multinomial(tot, probs)
            Wb[i, j], Wb[j, i], Db[i, j], Db[j, i] = a, c, d, d
        N = Wb + Wb.T + Db
        played = N > 0
        S = Wb + 0.5 * Db + 0.5 * prior_draws * played
        Np = N + prior_draws * played
        if prior_draws == 0:
            # resampled all-win records have no finite MLE: a tiny prior keeps them finite
            S = S + 0.005 * played
            Np = Np + 0.01 * played
        r, _, _ = _fit_core(S, Np)
        samples[b] = r
    a = (1.0 - level) / 2.0
    low = elo + np.quantile(samples - samples.mean(axis=0), a, axis=0)
    high = elo + np.quantile(samples - samples.mean(axis=0), 1.0 - a, axis=0)
    se = samples.std(axis=0, ddof=1)
    return low, high, se


def calibrate(result: EloResult, anchors: Mapping[str, float], slope: Optional[float] = None) -> EloResult:
    """Map internal ratings onto an external scale by a least-squares line over anchor agents.

    ``anchors`` maps agent names to their known external ratings.  With one anchor (or a given
    ``slope``) only the offset is fitted (slope 1 by default); with two or more both slope and
    offset are.  Returns a copy of ``result`` with ``external``, ``ext_low``, ``ext_high``,
    ``slope`` and ``intercept`` set."""
    if not anchors:
        raise ValueError("calibration needs at least one anchor agent with a known rating")
    missing = [a for a in anchors if a not in result.names]
    if missing:
        raise ValueError(f"anchor agent(s) {missing} not among the rated agents {result.names}")
    x = np.array([result[a] for a in anchors], dtype=float)
    y = np.array([float(anchors[a]) for a in anchors], dtype=float)
    if slope is None and len(anchors) >= 2:
        if np.ptp(x) < 1e-9:
            raise ValueError("the anchors have equal internal ratings: the slope cannot be fitted")
        a, b = np.polyfit(x, y, 1)
        if a <= 0:
            raise ValueError(f"calibration gives a non-positive slope ({a:.3f}): the anchors' internal order "
                             f"contradicts their external ratings {dict(anchors)}")
    else:
        a = 1.0 if slope is None else float(slope)
        b = float(np.mean(y - a * x))
    out = EloResult(**{k: getattr(result, k) for k in result.__dataclass_fields__})
    out.external = a * result.elo + b
    out.ext_low = a * result.low + b
    out.ext_high = a * result.high + b
    out.slope = float(a)
    out.intercept = float(b)
    out.anchors = {k: float(v) for k, v in anchors.items()}
    return out


def elo_from_results(results: Sequence[Tuple[str, str, float]], names: Optional[Sequence[str]] = None,
                     **kwargs) -> EloResult:
    """Fit from a list of games ``(first, second, score_of_first)`` with scores 1, 0.5 or 0."""
    if names is None:
        seen: Dict[str, None] = {}
        for a, b, _ in results:
            seen.setdefault(a)
            seen.setdefault(b)
        names = list(seen)
    idx = {n: i for i, n in enumerate(names)}
    n = len(names)
    W = np.zeros((n, n))
    D = np.zeros((n, n))
    for a, b, s in results:
        if a not in idx or b not in idx:
            raise ValueError(f"game between {a!r} and {b!r}: agent not in {list(names)}")
        i, j = idx[a], idx[b]
        if s == 1:
            W[i, j] += 1
        elif s == 0:
            W[j, i] += 1
        elif s == 0.5:
            D[i, j] += 1
            D[j, i] += 1
        else:
            raise ValueError(f"game between {a!r} and {b!r}: score {s!r} is not 1, 0.5 or 0")
    return fit_elo(names, W, D, **kwargs)

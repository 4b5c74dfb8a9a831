"""Agents of the IDP report (shared/papers/002, section 5; docs/policy.md), registered as the kinds ``alphabeta``
(the report's baseline "AB": alpha-beta with piece values and piece-square tables, in C), ``guided_ab`` ("AB
with prob": probability-threshold alpha-beta guided by a policy, in C), ``policy`` (the policy network alone,
between its two best moves) and ``policy_rollouts`` (the report's "MCTS": policy games from each legal move,
the move with the most wins). Their options: :func:`mavgame.agents.spec.describe_kinds`.

A policy is a callable ``policy(planes, mask) -> (n, 1968)`` over the move index
(:func:`mavgame._core.policy_planes`); :func:`load_policy` makes one from a spec value (a policy file,
``shipped``, ``uniform``; ``guided_ab`` also takes ``mav``, a MAV model's values). A network runs
in the native engine by default (``backend=native``: ``mavgame._core.PolicyNet``, which
:func:`mavgame._core.guided_alphabeta` calls from C without the GIL); an exported file such as the
shipped one needs no PyTorch, a ``policy.pt`` (and ``backend=torch``) does. Chess and Chess960 only.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from .. import _core
from .base import Agent, AgentError, mix_seeds
from .spec import options_of, register_agent

PolicyFn = Callable[..., np.ndarray]
CHESS = ("chess", "chess960")

_POLICIES: Dict[str, Any] = {}


def uniform_policy(planes: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Every legal move equally likely."""
    m = mask.astype(np.float32)
    return m / np.maximum(m.sum(-1, keepdims=True), 1.0)


SHIPPED_POLICY = Path(__file__).resolve().parents[1] / "data" / "policy_chess.safetensors"
BACKENDS = ("native", "torch")


def load_policy(policy: Any = "uniform", backend: str = "native", threads: int = 1) -> PolicyFn:
    """A policy callable from ``"uniform"``, ``"shipped"`` (the small network trained here and shipped in
    the package, docs/policy.md), a policy file, or a callable (returned as is).

    ``backend="native"`` (the default): the network runs in C (``mavgame._core.PolicyNet``, no PyTorch for an
    exported file such as the shipped one; a ``policy.pt`` is converted in memory, which needs PyTorch);
    ``"torch"``: :class:`mavgame.policy.network.PolicyModel` (needs PyTorch; reads both kinds of file). ``threads``
    (native): a batch is split over that many threads (the same probabilities bit for bit; PyTorch uses its own
    thread setting). A file is loaded once per path, backend and thread count."""
    if callable(policy):
        return policy
    if policy in (None, "uniform"):
        return uniform_policy
    if backend not in BACKENDS:
        raise AgentError(f"policy backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if int(threads) < 1:
        raise AgentError(f"policy threads must be >= 1, got {threads}")
    path = str(SHIPPED_POLICY) if policy == "shipped" else str(policy)
    key = (path, backend, int(threads) if backend == "native" else 1)
    if key not in _POLICIES:
        if backend == "native":
            from ..policy.export import load_native_policy
            try:
                _POLICIES[key] = load_native_policy(path, threads=int(threads))
            except ImportError as e:
                raise AgentError(f"policy {path!r}: {e}") from None
        else:
            try:
                from ..policy.network import PolicyModel
            except ImportError as e:
                raise AgentError(f"policy {path!r}: backend 'torch' needs PyTorch ({e})") from None
            _POLICIES[key] = PolicyModel.load(path).policy
    return _POLICIES[key]


def mav_policy(model=None, *, temperature: float = 0.05, scoring: str = "mean", backend: str = "auto") -> PolicyFn:
    """A MAV model's move values turned into a policy: weight exp((v - max v) / temperature) for each legal
    move the model gives a value (win probabilities in [0, 1]), 0 for the others (the search falls back to
    uniform when a position gets no value at all). Call with ``fens=True`` in ``guided_alphabeta``:
    ``policy(planes, mask, fens)``. ``model``: a MAVModel, a path, or an object with the same ``analyse``."""
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if hasattr(model, "analyse"):
        m = model
    else:
        from .mav import get_model
        m = get_model(model, backend)
    from .mav import PLAIN

    def policy(planes: np.ndarray, mask: np.ndarray, fens: List[str]) -> np.ndarray:
        out = np.zeros(mask.shape, np.float32)
        states = [_core.State("chess", f) for f in fens]
        for i, (st, (_, o)) in enumerate(zip(states, m.analyse(states, PLAIN))):
            vals = {mv: v for mv, v in o.values(scoring).items() if mv in set(st.legal_moves)}
            if not vals:
                continue
            top = max(vals.values())
            for mv, v in vals.items():
                out[i, _core.policy_index(st, mv)] = np.exp((v - top) / temperature)
        return out

    policy.wants_fens = True  # type: ignore[attr-defined]
    return policy


def _seconds(movetime) -> float:
    if movetime is None:
        return 0.0
    if float(movetime) <= 0:
        raise ValueError(f"movetime must be > 0 ms, got {movetime}")
    return float(movetime) / 1000.0


class AlphaBetaAgent(Agent):
    """The report's baseline alpha-beta (:func:`mavgame._core.alphabeta`)."""

    games = CHESS

    def __init__(self, depth: int = 4, *, movetime: Optional[float] = None, nodes: int = 0, tt: bool = True,
                 name: Optional[str] = None):
        self.depth, self.max_seconds, self.nodes, self.tt = int(depth), _seconds(movetime), int(nodes), bool(tt)
        self.name = name or f"alphabeta-{self.depth}"
        self.last = None

    def act(self, state) -> int:
        self.check_game(state.game)
        r = _core.alphabeta(state, self.depth, max_nodes=self.nodes, max_seconds=self.max_seconds, tt=self.tt)
        if r.best_move < 0:
            raise AgentError(f"{self.name}: no legal move in {state.text()!r}")
        self.last = r
        return r.best_move


class GuidedAlphaBetaAgent(Agent):
    """The report's probability-threshold alpha-beta (:func:`mavgame._core.guided_alphabeta`)."""

    games = CHESS

    def __init__(self, policy: Any = "uniform", *, threshold: float = 0.001, depth: int = 8, batch: int = 32,
                 movetime: Optional[float] = None, nodes: int = 0, mav_model: Optional[str] = None,
                 temperature: float = 0.05, backend: str = "native", threads: int = 1, name: Optional[str] = None):
        self.policy = (mav_policy(mav_model, temperature=temperature) if policy == "mav"
                       else load_policy(policy, backend, threads))
        self.fens = bool(getattr(self.policy, "wants_fens", False))
        self.threshold, self.depth, self.batch = float(threshold), int(depth), int(batch)
        self.max_seconds, self.nodes = _seconds(movetime), int(nodes)
        self.name = name or f"guided-ab-{self.threshold:g}"
        self.last = None

    def act(self, state) -> int:
        self.check_game(state.game)
        pol = None if self.policy is uniform_policy else self.policy
        r = _core.guided_alphabeta(state, pol, threshold=self.threshold, max_depth=self.depth, batch=self.batch,
                                   max_nodes=self.nodes, max_seconds=self.max_seconds, fens=self.fens)
        if r.best_move < 0:
            raise AgentError(f"{self.name}: no legal move in {state.text()!r}")
        self.last = r
        return r.best_move


class PolicyAgent(Agent):
    """The policy alone: one of its ``top`` most probable legal moves, drawn in proportion to their
    probabilities (the report plays "between the two best propositions")."""

    games = CHESS

    def __init__(self, policy: Any = "uniform", *, top: int = 2, seed: Optional[int] = None, backend: str = "native",
                 name: Optional[str] = None):
        if int(top) < 1:
            raise ValueError(f"top must be >= 1, got {top}")
        self.policy = load_policy(policy, backend)
        self.top = int(top)
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self.name = name or "policy"

    def setup(self, game, *, seed=None, player=None):
        self.check_game(game)
        self._rng = np.random.default_rng(mix_seeds(self._seed, seed))

    def act(self, state) -> int:
        self.check_game(state.game)
        mask = _core.policy_legal_mask([state])
        p = np.where(mask[0], np.asarray(self.policy(_core.policy_planes([state]), mask), np.float64)[0], 0.0)
        legal = np.flatnonzero(mask[0])
        if legal.size == 0:
            raise AgentError(f"{self.name}: no legal move in {state.text()!r}")
        best = legal[np.argsort(-p[legal], kind="stable")[: self.top]]
        w = p[best]
        w = w / w.sum() if w.sum() > 0 else np.full(len(best), 1.0 / len(best))
        return _core.policy_action(state, int(self._rng.choice(best, p=w)))


def sample_moves(probs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One move index a row, drawn from the policy's probabilities over the legal moves (uniform over the
    legal moves where the policy gives them no weight)."""
    p = np.where(mask, np.clip(np.nan_to_num(np.asarray(probs, np.float64)), 0.0, None), 0.0)
    s = p.sum(-1, keepdims=True)
    p = np.where(s > 0, p / np.where(s > 0, s, 1.0), mask / np.maximum(mask.sum(-1, keepdims=True), 1))
    c = p.cumsum(-1)
    u = rng.random((len(p), 1)) * c[:, -1:]
    return np.minimum((c < u).sum(-1), p.shape[1] - 1)


class PolicyRolloutAgent(Agent):
    """The report's "MCTS": from each legal move, ``games`` games played to the end by the policy (moves
    drawn from its probabilities; a game still running after ``max_plies`` counts as a draw); the move
    with the most wins for the side to move is played (the report's rule), draws breaking ties, then
    chance. All the rollouts of a move decision advance together: one policy call a ply for every running
    game. ``last_scores``: (wins, draws) of each root move of the last decision."""

    games = CHESS

    def __init__(self, policy: Any = "uniform", *, games: int = 3, max_plies: int = 200, seed: Optional[int] = None,
                 backend: str = "native", threads: int = 1, name: Optional[str] = None):
        if int(games) < 1 or int(max_plies) < 1:
            raise ValueError(f"games and max_plies must be >= 1, got {games}, {max_plies}")
        self.policy = load_policy(policy, backend, threads)
        self.n, self.max_plies = int(games), int(max_plies)
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self.name = name or f"rollouts-{self.n}"
        self.last_scores: Dict[str, float] = {}

    def setup(self, game, *, seed=None, player=None):
        self.check_game(game)
        self._rng = np.random.default_rng(mix_seeds(self._seed, seed))

    def act(self, state) -> int:
        self.check_game(state.game)
        me = state.to_move
        legal = [int(a) for a in state.legal_actions()]
        if not legal:
            raise AgentError(f"{self.name}: no legal move in {state.text()!r}")
        runs, first = [], []
        for a in legal:
            for _ in range(self.n):
                s = state.copy()
                s.push(a)
                runs.append(s)
                first.append(a)
        wins = np.zeros(len(runs))
        draws = np.zeros(len(runs))
        live = [i for i, s in enumerate(runs) if not s.is_terminal()]
        for _ in range(self.max_plies):
            if not live:
                break
            states = [runs[i] for i in live]
            mask = _core.policy_legal_mask(states)
            planes = _core.policy_planes(states)
            if isinstance(self.policy, _core.PolicyNet):  # the native network draws the moves in C
                picks = self.policy.sample(planes, mask, self._rng.random(len(states)))
            else:
                picks = sample_moves(self.policy(planes, mask), mask, self._rng)
            for s, k in zip(states, picks):
                s.push(_core.policy_action(s, int(k)))
            live = [i for i in live if not runs[i].is_terminal()]
        for i, s in enumerate(runs):
            r = _core.State.result(s) if s.is_terminal() else "1/2-1/2"
            draws[i] = r == "1/2-1/2"
            wins[i] = r == ("1-0" if me == 0 else "0-1")
        first_arr = np.array(first)
        totals = {a: (int(wins[first_arr == a].sum()), int(draws[first_arr == a].sum())) for a in legal}
        self.last_scores = {state.action_to_str(a): v for a, v in totals.items()}
        best = max(totals.values())
        cands = [a for a in legal if totals[a] == best]
        return cands[int(self._rng.integers(len(cands)))]


_POLICY = {"policy": "a policy file, shipped or uniform"}
register_agent("alphabeta", AlphaBetaAgent, options=options_of(AlphaBetaAgent, help={"movetime": "ms"}),
               help="chess: the IDP report's baseline alpha-beta (piece values and piece-square tables)")
register_agent("guided_ab", GuidedAlphaBetaAgent,
               options=options_of(GuidedAlphaBetaAgent, choices={"backend": BACKENDS},
                                  help={"policy": "a policy file, shipped, uniform, or mav for a MAV model's values",
                                        "depth": "max depth", "movetime": "ms", "mav_model": "policy=mav",
                                        "temperature": "policy=mav"}),
               help="chess: probability-threshold alpha-beta guided by a policy")
register_agent("policy", PolicyAgent, options=options_of(PolicyAgent, choices={"backend": BACKENDS}, help=_POLICY),
               help="chess: the policy network alone, one of its top moves drawn by their probabilities")
register_agent("policy_rollouts", PolicyRolloutAgent,
               options=options_of(PolicyRolloutAgent, choices={"backend": BACKENDS},
                                  help={**_POLICY, "games": "games a legal move"}),
               help="chess: games policy games from each legal move, the move with the most wins")

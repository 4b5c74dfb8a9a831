"""The IDP report's reinforcement-learning stage (shared/papers/002, sections 3.3 and 4.3) for the policy
network of :mod:`mavgame.policy.network`.

- Start positions: a random position of a decisive game of the PGN (the report: games that do not end
  in a draw, or only those ending in checkmate); the network plays on from there, moves drawn from its
  probabilities (exploration).
- Opponents: a game is either the current network against itself (both sides learn) or against a fixed
  copy, colours alternating (only the current network's moves are learned). The fixed copy is replaced
  by the current network when the current network scores more than 50 % over a block of ``rule.games``
  (200) games against it (:class:`OpponentRule`).
- A game still running ``max_plies`` (350) plies after its start position is aborted: a draw for the
  opponent rule, and the table's "aborted" reward.
- Labels (section 4.3): for every position where the learning network moved, y(t, i) = r for the move
  played and the network's own probability p(t, i) for the other legal moves; loss: the same binary
  cross-entropy over the legal moves as the supervised stage (:func:`mavgame.policy.network.policy_loss`).
  The reward r is :func:`move_reward` (table ``"human"``: the report's table that uses the game's real
  result; ``"plain"``: the table it tried without it). The human moves from the start of the game to the
  start position are labelled as best moves (r = 1), as in the report.
- :func:`run_rl`: the loop, resumable (``OUT/rl_state.pt`` holds both networks, the optimiser, the rule's
  tally, the counters and the random state), with a tqdm bar and one JSON line a step in
  ``OUT/rl_log.jsonl``; ``OUT/policy.pt`` is the current network, usable by every policy agent.

PyTorch is optional for mavgame: importing this module needs it.
"""
from __future__ import annotations

import copy
import dataclasses
import json
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from .. import _core
from .._checkpoint import UnsafeCheckpointError, load_state, save_state
from ..agents.policy import sample_moves
from .network import (PolicyConfig, PolicyModel, PolicyNet, masked_policy, policy_loss, read_pgn_games,
                     replay_pgn_game)

RL_FORMAT = "mavgame-policy-rl-1"
TABLES = ("human", "plain")
OUTCOMES = ("win", "draw", "loss", "aborted")


def move_reward(outcome: str, color: int, human_winner: int, n_legal, table: str = "human"):
    """The reward of every move colour ``color`` played in a self-play game (the report's section 4.3),
    or None when those moves are ignored.

    ``outcome``: ``win`` / ``draw`` / ``loss`` for ``color``, or ``aborted`` (the move cap);
    ``human_winner``: the colour (0 White, 1 Black) that won the real game; ``n_legal``: the number of
    legal moves in the position (a number or an array: the result has its shape).

    Table ``human``: won 1; drew as the real game's loser 1; drew as its winner 1/n; lost as its winner 0;
    aborted 1/n; lost as its loser: ignored (None). Table ``plain``: won 1; drew 1/n; lost or aborted 0."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
    if table not in TABLES:
        raise ValueError(f"reward table must be one of {TABLES}, got {table!r}")
    if color not in (0, 1) or human_winner not in (0, 1):
        raise ValueError(f"colours are 0 (White) or 1 (Black), got {color}, {human_winner}")
    n = np.asarray(n_legal, np.float64)
    if np.any(n < 1):
        raise ValueError(f"a position where a move was played has at least one legal move, got {n_legal}")
    one, zero, inv = np.ones_like(n), np.zeros_like(n), 1.0 / n
    if table == "plain":
        r = {"win": one, "draw": inv, "loss": zero, "aborted": zero}[outcome]
    elif outcome == "win":
        r = one
    elif outcome == "aborted":
        r = inv
    elif outcome == "draw":
        r = inv if color == human_winner else one
    elif color == human_winner:
        r = zero
    else:
        return None
    return r if r.ndim else float(r)


def rl_labels(probs: np.ndarray, moves: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """The report's labels y(t, i): the network's probabilities ``probs`` (n, 1968) with the played move
    ``moves[t]`` set to ``rewards[t]``."""
    probs = np.asarray(probs, np.float32)
    moves = np.asarray(moves, np.int64)
    if probs.ndim != 2 or len(probs) != len(moves) or len(moves) != len(rewards):
        raise ValueError(f"labels need probs (n, {_core.POLICY_MOVES}), n moves and n rewards, got "
                         f"{probs.shape}, {len(moves)}, {len(rewards)}")
    y = probs.copy()
    y[np.arange(len(moves)), moves] = np.asarray(rewards, np.float32)
    return y


@dataclasses.dataclass
class OpponentRule:
    """The fixed opponent is replaced when the current network scores more than half the points over a
    block of ``games`` games against it (200 in the report); a block that is not won starts a new one."""

    games: int = 200
    played: int = 0
    points: float = 0.0
    replaced: int = 0
    blocks: int = 0

    def __post_init__(self):
        if self.games < 1:
            raise ValueError(f"the opponent rule needs games >= 1, got {self.games}")

    def record(self, score: float) -> bool:
        """Count one game's score for the current network (1, 0.5 or 0); True when this game completes a
        block the current network won (the caller then replaces the opponent)."""
        if score not in (0.0, 0.5, 1.0):
            raise ValueError(f"a game scores 0, 0.5 or 1, got {score}")
        self.played += 1
        self.points += score
        if self.played < self.games:
            return False
        beaten = self.points > self.games / 2
        self.blocks += 1
        self.replaced += beaten
        self.played, self.points = 0, 0.0
        return beaten


@dataclasses.dataclass
class StartGame:
    """A decisive PGN game: its headers, SAN moves and the colour that won (0 White, 1 Black)."""

    headers: Dict[str, str]
    sans: List[str]
    winner: int


def decisive_games(pgn_paths: Sequence[str], *, mate_only: bool = False, max_games: int = 0) -> List[StartGame]:
    """The games of the PGN files won by one side (``mate_only``: ended by checkmate on the board), whose
    moves all parse."""
    out = []
    for headers, sans in read_pgn_games(pgn_paths, max_games=max_games):
        res = headers.get("Result", "*")
        if res not in ("1-0", "0-1") or len(sans) < 1:
            continue
        if mate_only:
            st, ok = replay_pgn_game(headers, sans)
            if not ok or not st.is_terminal() or _core.State.result(st) != res:
                continue
        out.append(StartGame(headers, list(sans), 0 if res == "1-0" else 1))
    if not out:
        raise ValueError(f"no decisive{' checkmate' if mate_only else ''} games in {', '.join(map(str, pgn_paths))}")
    return out


@dataclasses.dataclass
class SelfPlayGame:
    """One game of the RL stage: the state (it keeps the PGN moves before ``start_ply``), the colours the
    learning network plays, the real game's winner, and how it ended."""

    state: object
    start_ply: int
    human_winner: int
    learner_colors: Tuple[int, ...]
    vs_opponent: bool
    aborted: bool = False

    def outcome(self, color: int) -> str:
        if self.aborted:
            return "aborted"
        r = _core.State.result(self.state)   # the search's rule (a claimable draw ends the game)
        if r == "1/2-1/2":
            return "draw"
        return "win" if (r == "1-0") == (color == 0) else "loss"

    def score(self, color: int) -> float:
        """Points of ``color``: an aborted game is a draw."""
        o = self.outcome(color)
        return {"win": 1.0, "loss": 0.0}.get(o, 0.5)


def start_game(game: StartGame, rng: np.random.Generator, *, learner_colors: Tuple[int, ...],
               vs_opponent: bool) -> SelfPlayGame:
    """A :class:`SelfPlayGame` from a uniformly random non-final position of a decisive game."""
    st, ok = replay_pgn_game(game.headers, game.sans)
    last = st.ply - (1 if st.is_terminal() else 0)
    k = int(rng.integers(0, last + 1)) if last > 0 else 0
    st, _ = replay_pgn_game(game.headers, game.sans[:k])
    return SelfPlayGame(st, st.ply, game.winner, learner_colors, vs_opponent)


PolicyFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


def play_games(games: List[SelfPlayGame], learner: PolicyFn, opponent: PolicyFn, rng: np.random.Generator, *,
               max_plies: int = 350) -> None:
    """Play the games to the end together (one batched call a ply for each network), moves drawn from the
    probabilities; a game reaching ``max_plies`` plies after its start position is aborted."""
    if max_plies < 1:
        raise ValueError(f"max_plies must be >= 1, got {max_plies}")
    live = [g for g in games if not g.state.is_terminal()]
    while live:
        parts = {who: [g for g in live if (g.state.to_move in g.learner_colors) == who] for who in (True, False)}
        for who, fn in ((True, learner), (False, opponent)):   # each live game makes one move
            part = parts[who]
            if not part:
                continue
            states = [g.state for g in part]
            mask = _core.policy_legal_mask(states)
            picks = sample_moves(fn(_core.policy_planes(states), mask), mask, rng)
            for g, k in zip(part, picks):
                g.state.push(_core.policy_action(g.state, int(k)))
        nxt = []
        for g in live:
            if g.state.is_terminal():
                continue
            if g.state.ply - g.start_ply >= max_plies:
                g.aborted = True
                continue
            nxt.append(g)
        live = nxt


def game_examples(g: SelfPlayGame, *, table: str = "human", human_prefix: bool = True
                  ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(planes, masks, moves, rewards) of the positions a finished game teaches: the learning network's
    moves after the start position with :func:`move_reward` (colours whose moves the table ignores left
    out), and with ``human_prefix`` the real game's moves before it with reward 1."""
    planes, masks, moves = _core.policy_game(g.state)
    planes, masks = planes[:-1], masks[:-1]
    n = len(moves)
    white = planes[:, 39, 0, 0] > 0.5
    keep = np.zeros(n, bool)
    rewards = np.zeros(n, np.float32)
    if human_prefix:
        keep[: g.start_ply] = True
        rewards[: g.start_ply] = 1.0
    nlegal = masks.sum(-1)
    for color in g.learner_colors:
        sel = np.zeros(n, bool)
        sel[g.start_ply:] = True
        sel &= white if color == 0 else ~white
        if not sel.any():
            continue
        r = move_reward(g.outcome(color), color, g.human_winner, nlegal[sel], table)
        if r is None:
            continue
        keep |= sel
        rewards[sel] = r
    return planes[keep], masks[keep], moves[keep], rewards[keep]


def rl_update(net: PolicyNet, opt: torch.optim.Optimizer, planes: np.ndarray, masks: np.ndarray, moves: np.ndarray,
              rewards: np.ndarray, *, batch: int = 100, rng: Optional[np.random.Generator] = None,
              device="cpu") -> float:
    """One pass over the examples in shuffled batches of ``batch``: labels y from the network's own
    probabilities (detached) with the played move set to its reward, BCE over the legal moves. Returns
    the mean loss (NaN without examples)."""
    n = len(moves)
    if n == 0:
        return float("nan")
    order = (rng or np.random.default_rng()).permutation(n)
    net.train()
    total = 0.0
    for s in range(0, n, batch):
        idx = order[s:s + batch]
        x = torch.from_numpy(np.ascontiguousarray(planes[idx], np.float32)).to(device)
        m = torch.from_numpy(masks[idx]).to(device)
        logits = net(x)
        with torch.no_grad():
            p = masked_policy(logits, m).cpu().numpy()
        y = torch.from_numpy(rl_labels(p, moves[idx], rewards[idx])).to(device)
        loss = policy_loss(logits, m, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * len(idx)
    net.eval()
    return total / n


@dataclasses.dataclass
class RLSettings:
    """Settings of :func:`run_rl` (stored in the checkpoint; a resumed run keeps its own)."""

    steps: int = 100
    games: int = 8
    vs_opponent: float = 0.5
    opponent_games: int = 200
    max_plies: int = 350
    lr: float = 1e-4
    batch: int = 100
    table: str = "human"
    human_prefix: bool = True
    mate_only: bool = False
    seed: int = 0

    def __post_init__(self):
        if self.steps < 1 or self.games < 1 or self.batch < 1 or self.max_plies < 1 or self.opponent_games < 1:
            raise ValueError("steps, games, batch, max_plies and opponent_games must be >= 1, got "
                             f"{self.steps}, {self.games}, {self.batch}, {self.max_plies}, {self.opponent_games}")
        if not 0.0 <= self.vs_opponent <= 1.0:
            raise ValueError(f"vs_opponent must be in [0, 1], got {self.vs_opponent}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if self.table not in TABLES:
            raise ValueError(f"reward table must be one of {TABLES}, got {self.table!r}")


def _policy_of(net: PolicyNet, device) -> PolicyFn:
    @torch.no_grad()
    def fn(planes: np.ndarray, mask: np.ndarray) -> np.ndarray:
        x = torch.from_numpy(np.ascontiguousarray(planes, np.float32)).to(device)
        return masked_policy(net(x), torch.from_numpy(mask).to(device)).cpu().numpy()
    return fn


def _native_of(net: PolicyNet) -> PolicyFn:
    """The network in the native engine (a float32 export of its current weights): the self-play moves' policy."""
    from .export import policy_file_bytes

    return _core.PolicyNet(policy_file_bytes(net.state_dict(), dataclasses.asdict(net.config), dtype="float32"))


INFERENCE = ("auto", "native", "torch")


def _init_net(init: Optional[str], config: Optional[PolicyConfig], head: Optional[str]) -> PolicyNet:
    """The starting network: ``init`` (a supervised policy.pt) or a fresh one of ``config``; with ``head``
    different from the init's, the stem and residual tower are kept and a new head is made (the report
    trains its self-play head on the supervised tower)."""
    if init is None:
        cfg = config or PolicyConfig()
        if head:
            cfg = dataclasses.replace(cfg, head=head)
        return PolicyNet(cfg)
    net = PolicyModel.load(init).net
    if head and head != net.config.head:
        if net.config.arch == "dense":
            raise ValueError(f"{init}: a dense network (arch='dense') has no convolution tower to put a {head!r} "
                             f"head on")
        fresh = PolicyNet(dataclasses.replace(net.config, head=head))
        fresh.stem.load_state_dict(net.stem.state_dict())
        fresh.tower.load_state_dict(net.tower.state_dict())
        net = fresh
    return net


def run_rl(pgn: Sequence[str], out, *, init: Optional[str] = None, config: Optional[PolicyConfig] = None,
           head: Optional[str] = None, settings: Optional[RLSettings] = None, fresh: bool = False, device="cpu",
           progress: bool = True, max_seconds: float = 0.0, inference: str = "auto") -> Dict:
    """Run (or resume) the RL stage into directory ``out`` until ``settings.steps`` steps are done (each
    step: ``settings.games`` games played together, then one pass of updates on their positions), or
    ``max_seconds`` of wall clock have passed (0: no limit). Writes ``rl_state.pt`` (every step),
    ``policy.pt`` (the current network), ``opponent.pt`` and ``rl_log.jsonl``; returns a summary.
    ``inference``: what plays the self-play moves: ``native`` (the C engine, re-exported from the current
    weights every step), ``torch``, or ``auto`` (native on the CPU, torch on another device); the updates
    run in PyTorch either way."""
    if inference not in INFERENCE:
        raise ValueError(f"inference must be one of {', '.join(INFERENCE)}, got {inference!r}")
    native = inference == "native" or (inference == "auto" and str(device) == "cpu")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ckpt = out / "rl_state.pt"
    if ckpt.exists() and not fresh:
        try:
            d = load_state(ckpt, "policy RL checkpoint", map_location=device)
        except UnsafeCheckpointError:
            raise
        except ValueError as e:
            raise ValueError(f"{e} (--fresh starts over)") from None
        if not isinstance(d, dict) or d.get("format") != RL_FORMAT:
            raise ValueError(f"{ckpt} is not an RL checkpoint (format {RL_FORMAT!r} expected)")
        s = RLSettings(**d["settings"])
        if settings is not None and settings.steps != s.steps:
            s = dataclasses.replace(s, steps=settings.steps)
        net = PolicyNet(PolicyConfig(**d["config"]))
        net.load_state_dict(d["current"])
        opp = PolicyNet(PolicyConfig(**d["config"]))
        opp.load_state_dict(d["opponent"])
        opt = torch.optim.Adam(net.parameters(), lr=s.lr)
        opt.load_state_dict(d["optimizer"])
        rule = OpponentRule(**d["rule"])
        rng = np.random.default_rng()
        rng.bit_generator.state = d["rng"]
        torch.set_rng_state(d["torch_rng"])
        counters = d["counters"]
        resumed = True
    else:
        s = settings or RLSettings()
        torch.manual_seed(s.seed)
        rng = np.random.default_rng(s.seed)
        net = _init_net(init, config, head)
        opp = copy.deepcopy(net)
        opt = torch.optim.Adam(net.parameters(), lr=s.lr)
        rule = OpponentRule(games=s.opponent_games)
        counters = {"step": 0, "games": 0, "opponent_games": 0, "aborted": 0, "positions": 0, "seconds": 0.0}
        resumed = False
        (out / "rl_log.jsonl").write_text("")
    starts = decisive_games(pgn, mate_only=s.mate_only)
    net.to(device).eval()
    opp.to(device).eval()
    learner, opponent = _policy_of(net, device), _policy_of(opp, device)

    def save():
        save_state({"format": RL_FORMAT, "config": dataclasses.asdict(net.config), "settings": dataclasses.asdict(s),
                    "current": net.state_dict(), "opponent": opp.state_dict(), "optimizer": opt.state_dict(),
                    "rule": dataclasses.asdict(rule), "rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                    "counters": counters}, ckpt)
        PolicyModel(net, device).save(out / "policy.pt")
        PolicyModel(opp, device).save(out / "opponent.pt")

    bar = None
    if progress:
        from .._progress import tqdm
        bar = tqdm(total=s.steps, initial=counters["step"], desc="policy RL", unit="step")
    t_start = time.perf_counter()
    try:
        while counters["step"] < s.steps:
            if max_seconds and time.perf_counter() - t_start >= max_seconds:
                break
            t0 = time.perf_counter()
            n_opp = int(round(s.vs_opponent * s.games))
            games = []
            for j in range(s.games):
                src = starts[int(rng.integers(len(starts)))]
                if j < n_opp:
                    color = (counters["opponent_games"] + j) % 2
                    games.append(start_game(src, rng, learner_colors=(color,), vs_opponent=True))
                else:
                    games.append(start_game(src, rng, learner_colors=(0, 1), vs_opponent=False))
            if native:  # this step's weights of both networks, in C
                learner, opponent = _native_of(net), _native_of(opp)
            play_games(games, learner, opponent, rng, max_plies=s.max_plies)
            ex = [game_examples(g, table=s.table, human_prefix=s.human_prefix) for g in games]
            planes, masks, moves, rewards = (np.concatenate([e[k] for e in ex]) for k in range(4))
            loss = rl_update(net, opt, planes, masks, moves, rewards, batch=s.batch, rng=rng, device=device)
            replaced = 0
            scores = []
            by_color: Dict[str, List[float]] = {"white": [], "black": []}
            for g in games:
                if g.vs_opponent:
                    sc = g.score(g.learner_colors[0])
                    scores.append(sc)
                    by_color["white" if g.learner_colors[0] == 0 else "black"].append(sc)
                    counters["opponent_games"] += 1
                    if rule.record(sc):
                        opp.load_state_dict(net.state_dict())
                        replaced += 1
            counters["step"] += 1
            counters["games"] += len(games)
            counters["aborted"] += sum(g.aborted for g in games)
            counters["positions"] += len(moves)
            counters["seconds"] += time.perf_counter() - t0
            rec = {"step": counters["step"], "games": counters["games"], "loss": None if np.isnan(loss) else loss,
                   "positions": int(len(moves)), "vs_opponent_score": float(np.mean(scores)) if scores else None,
                   "vs_opponent_white": [sum(by_color["white"]), len(by_color["white"])],
                   "vs_opponent_black": [sum(by_color["black"]), len(by_color["black"])],
                   "block_played": rule.played, "block_points": rule.points, "replaced": replaced,
                   "opponents_replaced": rule.replaced, "aborted": sum(g.aborted for g in games),
                   "mean_plies": float(np.mean([g.state.ply - g.start_ply for g in games])),
                   "seconds": round(time.perf_counter() - t0, 3)}
            with open(out / "rl_log.jsonl", "a") as f:
                f.write(json.dumps(rec) + "\n")
            save()
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{loss:.4f}", block=f"{rule.points:g}/{rule.played}", replaced=rule.replaced)
    finally:
        if bar is not None:
            bar.close()
    save()
    return {"resumed": resumed, "step": counters["step"], "steps": s.steps, "games": counters["games"],
            "opponent_games": counters["opponent_games"], "aborted": counters["aborted"],
            "positions": counters["positions"], "opponents_replaced": rule.replaced, "blocks": rule.blocks,
            "block_played": rule.played, "block_points": rule.points, "seconds": round(counters["seconds"], 1),
            "start_games": len(starts)}

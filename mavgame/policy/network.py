"""The IDP report's chess policy network (shared/papers/002, sections 3-4) in PyTorch.

- :class:`PolicyNet`: the 41 input planes of :func:`mavgame._core.policy_planes` -> a 1x1 convolution
  to ``channels`` x 8 x 8 (256 in the report) -> ``blocks`` residual blocks of two 3x3 convolutions
  (3 in the report) -> a head -> one logit per entry of the 1968-move index. Head ``"pool"`` is the
  report's move-matching head (2x2 max-pooling and a dense layer), ``"conv"`` its self-play head (a 1x1
  convolution to 32 channels and a dense layer). ReLU after every layer; no batch normalisation (the
  report mentions none).
- :func:`masked_policy`: illegal moves masked, the rest renormalised (softmax over the legal moves).
- :func:`policy_loss`: the report's binary cross-entropy computed on the legal moves only (the played
  move is the positive, every other legal move a negative), averaged per position.
- :func:`load_pgn_positions` / :func:`train_policy` / :func:`move_matching_accuracy`: supervised
  training from PGN (positions of the first ``skip_moves`` moves skipped, Adam at 1e-3, batches of 100
  positions as the report) with the move-matching accuracy on held-out games.
- :class:`PolicyModel`: a trained network with its file (``save`` / ``load``) and a ``policy(planes,
  mask)`` method that :func:`mavgame._core.guided_alphabeta` and the agents call.

PyTorch is optional for mavgame: importing this module needs it.
"""
from __future__ import annotations

import dataclasses
import json
import math
import random
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .. import _core
from .._atomic import write_json_atomic
from .._checkpoint import load_state, save_state
from .export import POLICY_PT_FORMAT, is_exported, read_policy_file
from .inputs import INPUT_PLANES, InputPlanes

FORMAT = POLICY_PT_FORMAT   # the format field of a policy.pt


ARCHS = ("residual", "plain", "dense")
LOSSES = ("legal", "all")


@dataclasses.dataclass
class PolicyConfig:
    """Shape of a :class:`PolicyNet` (the report's: 256 channels, 3 residual blocks, pooling head).

    The report's Table 1 variants (its section 5.1) and input representations (section 3.1):
    ``arch`` ``"residual"`` (the report's network), ``"plain"`` (the same without the skip connections, its
    "convolution layers") or ``"dense"`` (its "4 dense layers": planes -> ``hidden`` -> ``hidden`` ->
    ``hidden`` -> moves, ReLU between; ``channels``, ``blocks``, ``head`` and ``pool`` unused); ``pool``:
    the pooling head's max-pooling window (2: 4 x 4 cells; 4: 2 x 2 cells, the "smaller pooling layer";
    8: one cell); ``inputs``: the representation (:mod:`mavgame.policy.inputs`). Only the default arch,
    pool and inputs have a native engine (``mavgame policy export`` refuses the others)."""

    channels: int = 256
    blocks: int = 3
    head: str = "pool"
    arch: str = "residual"
    pool: int = 2
    inputs: str = "planes"
    hidden: int = 512

    def __post_init__(self):
        if self.channels < 1 or self.blocks < 0:
            raise ValueError(f"policy network needs channels >= 1 and blocks >= 0, got {self.channels}, {self.blocks}")
        if self.head not in ("pool", "conv"):
            raise ValueError(f"policy network head must be 'pool' or 'conv', got {self.head!r}")
        if self.arch not in ARCHS:
            raise ValueError(f"policy network arch must be one of {', '.join(ARCHS)}, got {self.arch!r}")
        if self.pool not in (1, 2, 4, 8):
            raise ValueError(f"policy network pool must be 1, 2, 4 or 8 (a window dividing 8), got {self.pool!r}")
        if self.inputs not in INPUT_PLANES:
            raise ValueError(f"policy network inputs must be one of {', '.join(INPUT_PLANES)}, got {self.inputs!r}")
        if self.hidden < 1:
            raise ValueError(f"policy network hidden width must be >= 1, got {self.hidden}")


class _Residual(nn.Module):
    def __init__(self, c: int, skip: bool = True):
        super().__init__()
        self.a = nn.Conv2d(c, c, 3, padding=1)
        self.b = nn.Conv2d(c, c, 3, padding=1)
        self.skip = skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.b(F.relu(self.a(x)))
        return F.relu(x + y if self.skip else y)


class PolicyNet(nn.Module):
    """Planes (n, 41, 8, 8) -> logits (n, 1968) over the move index (see the module docstring)."""

    def __init__(self, config: Optional[PolicyConfig] = None):
        super().__init__()
        self.config = cfg = config or PolicyConfig()
        self.inputs = InputPlanes(cfg.inputs)
        c = cfg.channels
        if cfg.arch == "dense":
            h = cfg.hidden
            self.dense = nn.Sequential(nn.Linear(self.inputs.planes * 64, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU(),
                                       nn.Linear(h, h), nn.ReLU(), nn.Linear(h, _core.POLICY_MOVES))
            return
        self.dense = None
        self.stem = nn.Conv2d(self.inputs.planes, c, 1)
        self.tower = nn.Sequential(*[_Residual(c, cfg.arch == "residual") for _ in range(cfg.blocks)])
        if cfg.head == "pool":
            self.head_conv = None
            self.fc = nn.Linear(c * (8 // cfg.pool) ** 2, _core.POLICY_MOVES)
        else:
            self.head_conv = nn.Conv2d(c, 32, 1)
            self.fc = nn.Linear(32 * 64, _core.POLICY_MOVES)

    def forward(self, planes: torch.Tensor) -> torch.Tensor:
        if planes.dim() != 4 or tuple(planes.shape[1:]) != (_core.POLICY_PLANES, 8, 8):
            raise ValueError(f"policy network input must be (n, {_core.POLICY_PLANES}, 8, 8), got {tuple(planes.shape)}")
        x = self.inputs(planes)
        if self.dense is not None:
            return self.dense(x.flatten(1))
        x = self.tower(F.relu(self.stem(x)))
        if self.head_conv is None:
            x = F.max_pool2d(x, self.config.pool) if self.config.pool > 1 else x
        else:
            x = F.relu(self.head_conv(x))
        return self.fc(x.flatten(1))


def masked_policy(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Probabilities over the index with illegal moves at 0 and the legal ones renormalised (softmax
    over the legal logits). A row without legal moves is all zero."""
    neg = torch.finfo(logits.dtype).min
    p = torch.softmax(logits.masked_fill(~mask, neg), dim=-1)
    return torch.where(mask, p, torch.zeros_like(p))


def policy_loss(logits: torch.Tensor, mask: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The report's loss: binary cross-entropy between the masked policy and the target over the legal
    moves only, averaged per position then over the batch. ``target``: the played move's index (n,) (a
    one-hot target, the supervised stage) or labels in [0, 1] (n, 1968) (the self-play stage's
    y(t, i) of its section 4.3)."""
    p = masked_policy(logits, mask).clamp(1e-7, 1 - 1e-7)
    if target.dim() == 1:
        y = F.one_hot(target.long(), _core.POLICY_MOVES).to(p.dtype)
    elif tuple(target.shape) == tuple(logits.shape):
        y = target.to(p.dtype)
    else:
        raise ValueError(f"policy_loss target must be (n,) move indices or (n, {_core.POLICY_MOVES}) labels, "
                         f"got {tuple(target.shape)}")
    bce = -(y * torch.log(p) + (1 - y) * torch.log1p(-p))
    m = mask.to(p.dtype)
    return ((bce * m).sum(-1) / m.sum(-1).clamp_min(1)).mean()


def policy_loss_all(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The report's Table 1 variant "loss on all": binary cross-entropy between the softmax over all 1968
    outputs (no mask) and the one-hot played move ``target`` (n,), averaged over the 1968 outputs, then over
    the batch. The report found it 2 points worse than :func:`policy_loss`."""
    if target.dim() != 1 or target.shape[0] != logits.shape[0]:
        raise ValueError(f"policy_loss_all target must be ({logits.shape[0]},) move indices, got {tuple(target.shape)}")
    p = torch.softmax(logits, dim=-1).clamp(1e-7, 1 - 1e-7)
    y = F.one_hot(target.long(), _core.POLICY_MOVES).to(p.dtype)
    return (-(y * torch.log(p) + (1 - y) * torch.log1p(-p))).mean()


@dataclasses.dataclass
class PolicyData:
    """Positions for supervised training: planes (float16, n x 41 x 8 x 8), legal masks (bool, n x 1968),
    the played move's index (int16), and the game each position comes from."""

    planes: np.ndarray
    masks: np.ndarray
    moves: np.ndarray
    game: np.ndarray

    def __len__(self) -> int:
        return len(self.moves)


def _empty_data() -> PolicyData:
    return PolicyData(np.zeros((0, _core.POLICY_PLANES, 8, 8), np.float16), np.zeros((0, _core.POLICY_MOVES), bool),
                      np.zeros(0, np.int16), np.zeros(0, np.int32))


def read_pgn_games(pgn_paths: Sequence[str], *, max_games: int = 0) -> List[Tuple[Dict[str, str], List[str]]]:
    """(headers, SAN moves) of the games of PGN files, at most ``max_games`` (0: all)."""
    from ..datasets.pgn import read_pgn

    games: List[Tuple[Dict[str, str], List[str]]] = []
    for p in pgn_paths:
        with open(p, encoding="utf-8", errors="replace") as f:
            games.extend(read_pgn(f.read()))
        if max_games and len(games) >= max_games:
            games = games[:max_games]
            break
    if not games:
        raise ValueError(f"no games in {', '.join(map(str, pgn_paths))}")
    return games


def replay_pgn_game(headers: Dict[str, str], sans: Sequence[str]):
    """(state, ok): the chess State after the game's moves (Chess960 and set-up positions read from the
    Variant / FEN tags) and whether every move parsed; a game whose move does not parse keeps the moves
    before it; (None, False) when the start position does not parse."""
    from ..games.chess import Chess, Chess960

    variant = headers.get("Variant", "").lower()
    try:
        st = Chess960(fen=headers.get("FEN")) if ("960" in variant or "fischer" in variant) else Chess(headers.get("FEN"))
    except ValueError:
        return None, False
    for san in sans:
        if st.is_terminal():
            break
        try:
            st.push_san(san)
        except ValueError:
            return st, False
    return st, True


def load_pgn_positions(pgn_paths: Sequence[str], *, skip_moves: int = 10, val_fraction: float = 0.1,
                       max_games: int = 0, seed: int = 0, progress: bool = False) -> Tuple[PolicyData, PolicyData, Dict]:
    """(train, held-out, info) positions of the chess games of PGN files, split by game (``val_fraction``
    of the games, at random with ``seed``). Positions before fullmove ``skip_moves + 1`` are skipped (the
    report skips the first 10 moves). A game whose move does not parse keeps the positions before it;
    Chess960 and non-standard starts are read from the Variant / FEN tags."""
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction}")
    games = read_pgn_games(pgn_paths, max_games=max_games)
    rng = random.Random(seed)
    order = list(range(len(games)))
    rng.shuffle(order)
    n_val = int(round(val_fraction * len(games))) if len(games) > 1 else 0
    val_ids = set(order[:n_val])
    parts: Dict[bool, List[Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = {False: [], True: []}
    bad = 0
    it = enumerate(games)
    if progress:
        from .._progress import tqdm
        it = tqdm(it, total=len(games), desc="PGN games", unit="game")
    for gi, (headers, sans) in it:
        st, ok = replay_pgn_game(headers, sans)
        bad += not ok
        if st is None or st.ply == 0:
            continue
        planes, masks, moves = _core.policy_game(st)
        fullmove = np.rint(planes[:-1, 40, 0, 0] * 100).astype(np.int64)
        keep = fullmove > skip_moves
        if keep.any():
            parts[gi in val_ids].append((planes[:-1][keep].astype(np.float16), masks[:-1][keep], moves[keep],
                                         np.full(int(keep.sum()), gi, np.int32)))

    def cat(chunks) -> PolicyData:
        if not chunks:
            return _empty_data()
        return PolicyData(*(np.concatenate([c[k] for c in chunks]) for k in range(4)))

    train, val = cat(parts[False]), cat(parts[True])
    info = {"games": len(games), "val_games": n_val, "unparsed_games": bad, "train_positions": len(train),
            "val_positions": len(val), "skip_moves": skip_moves}
    return train, val, info


def _batch(data: PolicyData, idx: np.ndarray, device) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (torch.from_numpy(data.planes[idx].astype(np.float32)).to(device), torch.from_numpy(data.masks[idx]).to(device),
            torch.from_numpy(data.moves[idx].astype(np.int64)).to(device))


@torch.no_grad()
def move_hits(net: PolicyNet, data: PolicyData, *, batch: int = 512, device="cpu") -> np.ndarray:
    """Bool (n,): whether the network's most probable legal move is the move played, position by position."""
    was_training = net.training
    net.eval()
    out = np.zeros(len(data), bool)
    for s in range(0, len(data), batch):
        idx = np.arange(s, min(s + batch, len(data)))
        x, m, y = _batch(data, idx, device)
        out[idx] = (masked_policy(net(x), m).argmax(-1) == y).cpu().numpy()
    net.train(was_training)
    return out


def move_matching_accuracy(net: PolicyNet, data: PolicyData, *, batch: int = 512, device="cpu") -> float:
    """Share of positions where the network's most probable legal move is the move played (NaN if none)."""
    if len(data) == 0:
        return float("nan")
    return float(move_hits(net, data, batch=batch, device=device).mean())


@torch.no_grad()
def held_out_loss(net: PolicyNet, data: PolicyData, *, batch: int = 512, device="cpu") -> float:
    """The supervised loss (:func:`policy_loss`, over the legal moves) averaged over ``data`` (NaN if empty)."""
    if len(data) == 0:
        return float("nan")
    was_training = net.training
    net.eval()
    total = 0.0
    for s in range(0, len(data), batch):
        idx = np.arange(s, min(s + batch, len(data)))
        x, m, y = _batch(data, idx, device)
        total += float(policy_loss(net(x), m, y)) * len(idx)
    net.train(was_training)
    return total / len(data)


def train_policy(net: PolicyNet, train: PolicyData, *, steps: int, batch: int = 100, lr: float = 1e-3, seed: int = 0,
                 device="cpu", progress: bool = False, log_every: int = 0, checkpoint: Optional[Path] = None,
                 checkpoint_every: int = 500, max_seconds: float = 0.0, log_path: Optional[Path] = None,
                 loss: str = "legal", val: Optional[PolicyData] = None, eval_every: int = 0) -> List[float]:
    """Adam (``lr``, 1e-3 in the report) on batches of ``batch`` positions drawn at random (100 in the
    report) for ``steps`` steps; returns the loss of every step (those of a resumed run included).

    ``checkpoint``: a file that holds the run's state (network, optimiser, random states, losses), written
    every ``checkpoint_every`` steps and at the end; if it exists the run continues from it (the same
    batches as an uninterrupted run, so the same network: a resumed run must use the same data and seed).
    ``max_seconds`` > 0 stops cleanly after that long (state written). ``log_path``: one JSON line every
    ``log_every`` steps (step, mean loss and mean batch move-matching accuracy of those steps) for the training
    curve; with ``val`` and ``eval_every`` (a multiple of ``log_every``) the lines of every ``eval_every``-th
    step also hold the held-out accuracy and loss (``val_accuracy``, ``val_loss``).

    ``loss``: ``"legal"`` (:func:`policy_loss`, the report's) or ``"all"`` (:func:`policy_loss_all`, its
    Table 1 variant)."""
    if len(train) == 0:
        raise ValueError("no training positions (are all games shorter than the skipped moves?)")
    if steps < 1 or batch < 1:
        raise ValueError(f"steps and batch must be >= 1, got {steps}, {batch}")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")
    if eval_every and (val is None or len(val) == 0 or not log_every or eval_every % log_every):
        raise ValueError(f"eval_every={eval_every} needs held-out positions and a log_every that divides it "
                         f"(log_every={log_every})")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net.to(device).train()
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    losses: List[float] = []
    hits: List[float] = []   # batch move-matching accuracy since the last log line (not part of the state)
    start = 0
    if checkpoint is not None and Path(checkpoint).exists():
        st = load_state(checkpoint, "policy training state", map_location=device)
        try:
            net.load_state_dict(st["net"])
            opt.load_state_dict(st["opt"])
            rng.bit_generator.state = st["rng"]
            torch.set_rng_state(st["torch_rng"])
            losses, start = list(st["losses"]), int(st["step"])
        except Exception as e:  # noqa: BLE001 - a damaged or foreign file
            raise ValueError(f"{checkpoint}: cannot resume the policy training from it: "
                             f"{type(e).__name__}: {e}") from None

    def save(step: int) -> None:
        if checkpoint is None:
            return
        save_state({"net": net.state_dict(), "opt": opt.state_dict(), "rng": rng.bit_generator.state,
                    "torch_rng": torch.get_rng_state(), "losses": losses, "step": step}, checkpoint)

    t0 = time.monotonic()
    it = range(start, steps)
    bar = None
    if progress:
        from .._progress import tqdm
        it = bar = tqdm(it, desc="policy training", unit="step", initial=start, total=steps)
    for step in it:
        x, m, y = _batch(train, rng.integers(0, len(train), size=batch), device)
        logits = net(x)
        value = policy_loss(logits, m, y) if loss == "legal" else policy_loss_all(logits, y)
        opt.zero_grad()
        value.backward()
        opt.step()
        losses.append(value.item())
        with torch.no_grad():
            hits.append(float((masked_policy(logits, m).argmax(-1) == y).float().mean()))
        done = step + 1
        if bar is not None and (step % 10 == 0 or done == steps):
            bar.set_postfix(loss=f"{np.mean(losses[-50:]):.4f}")
        if log_every and done % log_every == 0:
            line = {"step": done, "loss": float(np.mean(losses[-log_every:])), "train_accuracy": float(np.mean(hits))}
            hits = []
            if eval_every and done % eval_every == 0:
                line.update(val_accuracy=move_matching_accuracy(net, val, device=device),
                            val_loss=held_out_loss(net, val, device=device))
            if log_path is not None:
                with open(log_path, "a") as f:
                    f.write(json.dumps(line) + "\n")
            elif bar is None:
                print(" ".join(f"{k} {v:.5f}" if isinstance(v, float) else f"{k} {v}" for k, v in line.items()))
        if checkpoint is not None and checkpoint_every and done % checkpoint_every == 0 and done < steps:
            save(done)
        if max_seconds and time.monotonic() - t0 >= max_seconds and done < steps:
            save(done)
            break
    else:
        save(steps)
    net.eval()
    return losses


class PolicyModel:
    """A policy network ready to play: ``policy(planes, mask)`` gives masked probabilities (n, 1968),
    the callable :func:`mavgame._core.guided_alphabeta` takes."""

    def __init__(self, net: PolicyNet, device="cpu"):
        self.net = net.to(device).eval()
        self.device = device
        self.calls = 0
        self.positions = 0

    @torch.no_grad()
    def policy(self, planes: np.ndarray, mask: np.ndarray) -> np.ndarray:
        self.calls += 1
        self.positions += len(planes)
        x = torch.from_numpy(np.ascontiguousarray(planes, dtype=np.float32)).to(self.device)
        m = torch.from_numpy(np.ascontiguousarray(mask, dtype=bool)).to(self.device)
        return masked_policy(self.net(x), m).cpu().numpy()

    __call__ = policy

    def probabilities(self, states) -> np.ndarray:
        """Masked probabilities (n, 1968) of chess states (planes from each state's history)."""
        return self.policy(_core.policy_planes(states), _core.policy_legal_mask(states))

    def save(self, path, *, half: bool = False) -> None:
        """Write the network (format ``mavgame-policy-1``); ``half``: weights stored as float16 (half the
        file; :meth:`load` turns them back into float32)."""
        sd = self.net.state_dict()
        if half:
            sd = {k: v.half() if v.is_floating_point() else v for k, v in sd.items()}
        save_state({"format": FORMAT, "config": dataclasses.asdict(self.net.config), "state_dict": sd}, path)

    @classmethod
    def load(cls, path, device="cpu") -> "PolicyModel":
        """A ``policy.pt`` (format ``mavgame-policy-1``) or an exported file (:mod:`mavgame.policy.export`)."""
        if Path(path).is_file() and is_exported(path):
            cfg, sd = read_policy_file(path)
            try:
                net = PolicyNet(PolicyConfig(**cfg))
                net.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()})
            except (TypeError, RuntimeError) as e:
                raise ValueError(f"{path}: the weights do not match the policy network config {cfg}: {e}") from None
            return cls(net, device)
        d = load_state(path, "policy model", map_location=device)
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ValueError(f"{path} is not a policy model file (format {FORMAT!r} expected)")
        net = PolicyNet(PolicyConfig(**d["config"]))
        net.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in d["state_dict"].items()})
        return cls(net, device)


#: positions of the training set (drawn at random) that ``train_accuracy`` of metrics.json is measured on
TRAIN_ACCURACY_POSITIONS = 20000


def _sample(data: PolicyData, n: int, seed: int) -> PolicyData:
    """At most ``n`` positions of ``data`` drawn without replacement (all of them if there are fewer)."""
    if len(data) <= n:
        return data
    idx = np.sort(np.random.default_rng(seed).choice(len(data), n, replace=False))
    return PolicyData(data.planes[idx], data.masks[idx], data.moves[idx], data.game[idx])


def train_from_pgn(pgn: Sequence[str], out, *, steps: int = 1000, batch: int = 100, lr: float = 1e-3,
                   skip_moves: int = 10, val_fraction: float = 0.1, max_games: int = 0, config: Optional[PolicyConfig] = None,
                   seed: int = 0, device="cpu", progress: bool = True, init: Optional[str] = None,
                   checkpoint_every: int = 500, max_seconds: float = 0.0, fresh: bool = False,
                   log_every: int = 100, loss: str = "legal", eval_every: int = 0,
                   split_seed: Optional[int] = None) -> Dict:
    """Read the PGN, train a network, save OUT/policy.pt and OUT/metrics.json; returns the metrics.

    ``init``: start from that network (a policy.pt or an exported file, such as the shipped one; its shape
    replaces ``config``) instead of a fresh one. Resumable: the state is kept in OUT/train_state.pt (every
    ``checkpoint_every`` steps) and the same call continues it (``fresh``: start over); with ``max_seconds``
    it stops cleanly after that long and returns ``{"stopped_at": step}`` without the final files.
    OUT/train_log.jsonl: the mean loss and batch accuracy every ``log_every`` steps, and the held-out accuracy
    and loss every ``eval_every`` steps (0: none). ``loss``: see :func:`train_policy`. ``split_seed``: the
    seed of the train / held-out split (default ``seed``; fix it to compare training seeds on one split).
    ``val_accuracy_ci``: a 95 % interval of the held-out accuracy, bootstrapped over held-out games;
    ``train_accuracy`` is measured on at most :data:`TRAIN_ACCURACY_POSITIONS` training positions."""
    from ..analysis.policy_accuracy import clustered_interval

    train, val, info = load_pgn_positions(pgn, skip_moves=skip_moves, val_fraction=val_fraction, max_games=max_games,
                                          seed=seed if split_seed is None else split_seed, progress=progress)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state, log = out / "train_state.pt", out / "train_log.jsonl"
    if fresh:
        for f in (state, log):
            f.unlink(missing_ok=True)
    elif not state.exists():
        log.unlink(missing_ok=True)
    torch.manual_seed(seed)   # a fresh network's initial weights are the seed's
    net = PolicyModel.load(init).net if init else PolicyNet(config)
    losses = train_policy(net, train, steps=steps, batch=batch, lr=lr, seed=seed, device=device, progress=progress,
                          checkpoint=state, checkpoint_every=checkpoint_every, max_seconds=max_seconds,
                          log_every=log_every, log_path=log, loss=loss, val=val, eval_every=eval_every)
    if len(losses) < steps:
        return dict(info, stopped_at=len(losses), steps=steps)
    k = max(1, min(50, len(losses) // 5))
    val_hits = move_hits(net, val, device=device)
    metrics = dict(info, steps=steps, batch=batch, lr=lr, loss=loss, seed=seed,
                   split_seed=seed if split_seed is None else split_seed, config=dataclasses.asdict(net.config),
                   params=sum(p.numel() for p in net.parameters()), init=init,
                   first_loss=float(np.mean(losses[:k])), last_loss=float(np.mean(losses[-k:])),
                   train_accuracy=move_matching_accuracy(net, _sample(train, TRAIN_ACCURACY_POSITIONS, seed), device=device),
                   val_accuracy=float(val_hits.mean()) if len(val) else float("nan"),
                   val_accuracy_ci=list(clustered_interval(val_hits, val.game)[1:]) if len(val) else None,
                   val_loss=held_out_loss(net, val, device=device))
    if init:
        metrics["init_val_accuracy"] = move_matching_accuracy(PolicyModel.load(init).net, val, device=device)
    PolicyModel(net, device).save(out / "policy.pt")
    write_json_atomic(out / "metrics.json", {k: (None if isinstance(v, float) and math.isnan(v) else v)
                                             for k, v in metrics.items()}, indent=1, sort_keys=False)
    return metrics

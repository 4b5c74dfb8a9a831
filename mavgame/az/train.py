"""AlphaZero training (needs ``torch``): self-play with the current network, a replay buffer, and SGD
on l = (z - v)^2 - pi . log p + c ||theta||^2 (Silver et al. 2018).

One iteration: ``games_per_iteration`` self-play games (``parallel_games`` at once, seeded by
(seed, iteration); with ``selfplay_shards`` K >= 1 in K fixed shards seeded by (seed, iteration, shard),
played here or on Ray actors, :mod:`mavgame.az.shards`), their positions into the replay buffer, then
``steps_per_iteration`` training steps on batches of ``batch_size`` positions drawn uniformly from the
buffer.  A checkpoint holds the network, the optimiser, the replay buffer, the NumPy and torch random
states, the iteration and the step, so :meth:`AZTrainer.load` continues a run exactly where it
stopped (bit-identically on the same machine and torch build).
"""
from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import numpy as np
import torch
from torch.nn import functional as F

from .. import State
from .._atomic import write_bytes_atomic
from .._checkpoint import load_state, save_state
from .azdb import PHI_PLANES, FeatureMeans, diversity_features, player_lambdas, reward_weights
from .matchmaking import MATCHMAKERS, Matchmaker
from .network import AZNet, torch_evaluator
from .replay import ReplayBuffer
from .selfplay import play_games

__all__ = ["AZConfig", "AZTrainer", "CHECKPOINT_FORMAT"]

CHECKPOINT_FORMAT = "mavgame-az-1"


@dataclass
class AZConfig:
    """Every setting of a run (stored in its checkpoints).  Defaults: AlphaZero's search constants
    (c_base 19652, c_init 1.25, Dirichlet noise alpha 0.3 at fraction 0.25, temperature 1 for the
    first 30 plies, L2 c = 1e-4, SGD with momentum 0.9) at a size that trains on a CPU."""
    game: str = "connect_four"
    board_size: int = 0
    # network
    blocks: int = 4
    channels: int = 64
    value_hidden: int = 64
    # self-play
    iterations: int = 10
    games_per_iteration: int = 64
    parallel_games: int = 32
    num_simulations: int = 100
    temperature_plies: int = 30
    temperature: float = 1.0
    c_base: float = 19652.0
    c_init: float = 1.25
    dirichlet_alpha: float = 0.3
    dirichlet_frac: float = 0.25
    fpu: float = 0.0
    leaves_per_game: int = 1
    max_plies: int = 0
    cache_log2: int = 0             # > 0: self-play evaluation cache of 2^cache_log2 positions
    selfplay_shards: int = 0        # >= 1: the games in this many fixed shards (Ray actors); 0: one call
    # training
    replay_capacity: int = 100_000
    batch_size: int = 256
    steps_per_iteration: int = 100
    optimizer: str = "sgd"          # sgd (momentum) or adam
    lr: float = 0.02
    momentum: float = 0.9
    l2: float = 1e-4                # c of c ||theta||^2, on every weight
    seed: int = 0
    device: str = "cpu"
    # AZdb (players > 1): one network for a team, diversity rewards, matchmaking (docs/alphazero.md)
    players: int = 1
    matchmaking: str = "psro"       # psro (PSRO-Nash) or another of matchmaking.MATCHMAKERS
    l0: float = 1.0                 # eq. 8's length scale (not in the paper's text; our choice)
    lam: float = 0.5                # lambda_i for players i > 0 (lambda_0 = 1; not in the paper's text)
    n_td: int = 8                   # TD steps of the intrinsic value target (even; not in the paper's text)
    psi_window: int = 100_000       # psi_i: running mean over about this many moves

    def check(self) -> None:
        if self.optimizer not in ("sgd", "adam"):
            raise ValueError(f"optimizer must be 'sgd' or 'adam', not {self.optimizer!r}")
        for name in ("iterations", "games_per_iteration", "parallel_games", "num_simulations", "replay_capacity",
                     "batch_size", "channels", "value_hidden", "leaves_per_game"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an int >= 1, not {v!r}")
        for name in ("blocks", "steps_per_iteration", "temperature_plies", "max_plies", "cache_log2",
                     "selfplay_shards"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be an int >= 0, not {v!r}")
        if self.selfplay_shards > self.games_per_iteration:
            raise ValueError(f"selfplay_shards ({self.selfplay_shards}) must not exceed games_per_iteration "
                             f"({self.games_per_iteration})")
        if isinstance(self.players, bool) or not isinstance(self.players, int) or self.players < 1:
            raise ValueError(f"players must be an int >= 1, not {self.players!r}")
        if self.matchmaking not in MATCHMAKERS:
            raise ValueError(f"matchmaking must be one of {', '.join(MATCHMAKERS)}, not {self.matchmaking!r}")
        if self.players > 1:
            if not (self.l0 > 0) or not (0 <= self.lam <= 1):
                raise ValueError(f"need l0 > 0 and 0 <= lam <= 1 (l0 {self.l0}, lam {self.lam})")
            if self.n_td < 2 or self.n_td % 2:
                raise ValueError(f"n_td must be an even number >= 2, not {self.n_td!r}")
            if self.cache_log2:
                raise ValueError(f"a team (players {self.players}) needs cache_log2 0, not {self.cache_log2} "
                                 "(the cache keys positions, not players)")
            if self.game not in PHI_PLANES:
                raise ValueError(f"no diversity features for game {self.game!r}")
        if not (self.lr > 0) or not (self.l2 >= 0) or not (0 <= self.momentum < 1):
            raise ValueError(f"need lr > 0, l2 >= 0 and 0 <= momentum < 1 (lr {self.lr}, l2 {self.l2}, "
                             f"momentum {self.momentum})")

    def selfplay_settings(self) -> Dict[str, Any]:
        return dict(num_simulations=self.num_simulations, temperature_plies=self.temperature_plies,
                    temperature=self.temperature, c_base=self.c_base, c_init=self.c_init,
                    dirichlet_alpha=self.dirichlet_alpha, dirichlet_frac=self.dirichlet_frac, fpu=self.fpu,
                    batch_size=self.leaves_per_game, max_plies=self.max_plies, cache_log2=self.cache_log2)


def _start_state(cfg: AZConfig) -> State:
    return State(cfg.game, board_size=cfg.board_size) if cfg.board_size else State(cfg.game)


def _seed_of(seed: int, iteration: int) -> int:
    return (int(seed) * 1_000_003 + int(iteration) * 7_919 + 17) & 0x7FFFFFFFFFFFFFFF


class AZTrainer:
    """A training run: ``AZTrainer(config)`` starts one, :meth:`load` resumes one;
    :meth:`run_iteration` plays and trains once, :meth:`save` writes a checkpoint.

    ``executor="ray"`` (``ray_address`` for ``ray.init``, e.g. "auto"; or a
    :class:`mavgame.distributed_ray.RayJobs`) plays the self-play shards on Ray actors (needs
    ``selfplay_shards`` >= 1): the same examples as the shards played here on a CPU trainer.  Where the
    shards play is not part of the run (not in the checkpoint)."""

    def __init__(self, config: AZConfig, executor: Any = None, ray_address: Optional[str] = None):
        config.check()
        self.config = config
        self.executor: Any = None
        self.use_executor(executor, ray_address)
        self.device = torch.device(config.device)
        start = _start_state(config)
        self.game_obs_shape = tuple(start.observation_shape)
        self.num_actions = int(start.num_actions)
        team = config.players > 1
        # the network's input: the game's planes, then one latent plane per player (AZdb)
        self.obs_shape = (self.game_obs_shape[0] + (config.players if team else 0),) + self.game_obs_shape[1:]
        torch.manual_seed(config.seed)
        self.net = AZNet(self.obs_shape, self.num_actions, blocks=config.blocks, channels=config.channels,
                         value_hidden=config.value_hidden, intrinsic=team).to(self.device)
        self.lambdas = player_lambdas(config.players, config.lam) if team else np.ones(1)
        if team:
            nfeat = diversity_features(np.zeros((1,) + self.game_obs_shape, np.float32), config.game).shape[1]
            self.features = FeatureMeans(config.players, nfeat, config.psi_window)
            self.matchmaker = Matchmaker(config.players, config.matchmaking)
        else:
            self.features = self.matchmaker = None
        if config.optimizer == "sgd":
            self.opt = torch.optim.SGD(self.net.parameters(), lr=config.lr, momentum=config.momentum)
        else:
            self.opt = torch.optim.Adam(self.net.parameters(), lr=config.lr)
        self.buffer = ReplayBuffer(config.replay_capacity, self.obs_shape, self.num_actions, intrinsic=team)
        self.rng = np.random.Generator(np.random.PCG64(config.seed))
        self.iteration = 0
        self.step = 0
        self.history: List[Dict[str, Any]] = []

    def use_executor(self, executor: Any = None, ray_address: Optional[str] = None) -> None:
        """Play the self-play shards on ``executor`` from now on (None: in this process; ``"ray"`` with
        ``ray_address``, or a :class:`mavgame.distributed_ray.RayJobs`); needs ``selfplay_shards`` >= 1."""
        from .shards import make_executor
        ex = make_executor(executor, ray_address)
        if ex is not None and self.config.selfplay_shards < 1:
            raise ValueError("Ray self-play needs selfplay_shards >= 1 (the games' fixed shards; this run has "
                             f"{self.config.selfplay_shards})")
        self.executor = ex

    # ---- training ------------------------------------------------------------------------

    def losses(self, obs: np.ndarray, pi: np.ndarray, z: np.ndarray, zd: Optional[np.ndarray] = None
               ) -> Dict[str, torch.Tensor]:
        """value (z - v)^2, policy -pi . log p (means over the batch), l2 c ||theta||^2 and their sum;
        for a team also intrinsic (z_d - v_d)^2 (added to the sum, as the paper adds it to eq. 3)."""
        x = torch.from_numpy(obs).to(self.device)
        out = self.net(x)
        logits, v = out[0], out[1]
        tpi = torch.from_numpy(pi).to(self.device)
        tz = torch.from_numpy(z).to(self.device)
        value = ((tz - v) ** 2).mean()
        policy = -(tpi * F.log_softmax(logits, dim=1)).sum(1).mean()
        l2 = self.config.l2 * sum((p ** 2).sum() for n, p in self.net.named_parameters() if n.endswith("weight"))
        d = {"loss": value + policy + l2, "value": value, "policy": policy, "l2": l2}
        if zd is not None:
            d["intrinsic"] = ((torch.from_numpy(zd).to(self.device) - out[2]) ** 2).mean()
            d["loss"] = d["loss"] + d["intrinsic"]
        return d

    def train_step(self) -> Dict[str, float]:
        """One SGD step on a batch from the replay buffer."""
        batch = self.buffer.sample(self.rng, self.config.batch_size)
        self.net.train()
        ls = self.losses(*batch)
        self.opt.zero_grad(set_to_none=True)
        ls["loss"].backward()
        self.opt.step()
        self.step += 1
        return {k: float(v.detach()) for k, v in ls.items()}

    def _sharded(self, latents: Optional[np.ndarray] = None, reward_w: Optional[np.ndarray] = None, progress=None):
        """This iteration's games in ``selfplay_shards`` shards (:func:`mavgame.az.shards.sharded_play`)."""
        from .shards import shard_bounds, shard_seed, sharded_play
        c = self.config
        bounds = shard_bounds(c.games_per_iteration, c.selfplay_shards)
        seeds = [shard_seed(c.seed, self.iteration, k) for k in range(len(bounds))]
        team = None if latents is None else {"players": c.players, "lambdas": np.asarray(self.lambdas),
                                             "reward_weights": reward_w}
        plan = {"game": c.game, "board_size": c.board_size, "parallel_games": c.parallel_games,
                "settings": c.selfplay_settings(), "team": team}
        spec = {"obs_shape": tuple(self.obs_shape), "num_actions": self.num_actions, "blocks": c.blocks,
                "channels": c.channels, "value_hidden": c.value_hidden, "intrinsic": latents is not None}
        return sharded_play(self.net, spec, plan, bounds, seeds, latents, self.executor, c.device, progress)

    def selfplay(self, progress=None):
        """This iteration's self-play games with the current network (no gradients)."""
        c = self.config
        if c.selfplay_shards:
            return self._sharded(progress=progress)
        return play_games(torch_evaluator(self.net, c.device), _start_state(c), num_games=c.games_per_iteration,
                          parallel_games=c.parallel_games, seed=_seed_of(c.seed, self.iteration), progress=progress,
                          **c.selfplay_settings())

    def team_selfplay(self, progress=None):
        """AZdb: this iteration's games between the team's players (matchmaking), each search with its
        root player's latent and intrinsic rewards; returns the self-play result and the training
        positions of :func:`mavgame.az.team.team_examples`."""
        from .team import team_evaluator, team_examples
        c = self.config
        latents, side = self.matchmaker.pairings(c.games_per_iteration, self.rng,
                                                 first_game=self.iteration * c.games_per_iteration)
        w = reward_weights(self.features.psi, c.game, self.game_obs_shape, self.lambdas, c.l0)
        if c.selfplay_shards:
            sp = self._sharded(latents, w, progress)
        else:
            sp = play_games(team_evaluator(self.net, c.players, self.lambdas, c.device), _start_state(c),
                            num_games=c.games_per_iteration, parallel_games=c.parallel_games,
                            seed=_seed_of(c.seed, self.iteration), progress=progress, latents=latents,
                            reward_weights=w, **c.selfplay_settings())
        ex = team_examples(sp, latents, side, self.features, c.game, self.lambdas, c.l0, c.n_td, self.net, c.device)
        self.matchmaker.record(ex["white"], ex["black"], ex["white_result"])
        return sp, ex

    def run_iteration(self, progress=None) -> Dict[str, Any]:
        """Self-play, then training; returns (and appends to ``history``) the iteration's log record."""
        team = self.config.players > 1
        if team:
            sp, ex = self.team_selfplay(progress)
            self.buffer.add(ex["obs"], ex["pi"], ex["z"], ex["zd"])
        else:
            sp = self.selfplay(progress)
            self.buffer.add(sp.obs, sp.pi, sp.z)
        t0 = time.perf_counter()
        steps = [self.train_step() for _ in range(self.config.steps_per_iteration)]
        train_s = time.perf_counter() - t0
        mean = {k: float(np.mean([s[k] for s in steps])) if steps else float("nan") for k in
                ("loss", "value", "policy", "l2") + (("intrinsic",) if team else ())}
        st = sp.stats
        rec = {"iteration": self.iteration, "step": self.step, "games": int(st["games_finished"]),
               "positions": int(len(sp.z)), "p0_wins": int(st["p0_wins"]), "p1_wins": int(st["p1_wins"]),
               "draws": int(st["draws"]), "evaluations": int(st["evaluations"]), "buffer": len(self.buffer),
               "selfplay_seconds": round(sp.seconds, 4), "search_seconds": round(sp.search_seconds, 4),
               "network_seconds": round(sp.network_seconds, 4), "train_seconds": round(train_s, 4),
               "positions_per_second": round(sp.positions_per_second, 2),
               "first_loss": steps[0]["loss"] if steps else float("nan"),
               "last_loss": steps[-1]["loss"] if steps else float("nan"), **mean}
        if team:
            psi = self.features.psi
            near = [float(np.sqrt(((psi - psi[i]) ** 2).sum(1)[np.arange(len(psi)) != i].min()))
                    for i in range(len(psi))]
            rec.update(kept=ex["kept"], mean_rd=[round(x, 5) for x in ex["mean_rd"]],
                       psi_nearest=[round(x, 4) for x in near],
                       payoff=np.round(self.matchmaker.payoff(), 3).tolist())
        self.iteration += 1
        self.history.append(rec)
        return rec

    # ---- checkpoints ---------------------------------------------------------------------

    def state_dict(self) -> Dict[str, Any]:
        d = {"format": CHECKPOINT_FORMAT, "config": dataclasses.asdict(self.config), "iteration": self.iteration,
             "step": self.step, "model": self.net.state_dict(), "optimizer": self.opt.state_dict(),
             "replay": self.buffer.state_dict(), "numpy_rng": self.rng.bit_generator.state,
             "torch_rng": torch.get_rng_state(), "history": list(self.history),
             "obs_shape": self.obs_shape, "num_actions": self.num_actions}
        if self.features is not None:
            d["features"] = self.features.state_dict()
            d["matchmaker"] = self.matchmaker.state_dict()
        if torch.cuda.is_available() and self.device.type == "cuda":
            d["cuda_rng"] = torch.cuda.get_rng_state(self.device)
        return d

    def save(self, path: str) -> str:
        """Write the checkpoint atomically (a temporary file renamed over ``path``)."""
        return save_state(self.state_dict(), path)

    @classmethod
    def load(cls, path: str, *, device: Optional[str] = None, executor: Any = None, ray_address: Optional[str] = None,
             **overrides) -> "AZTrainer":
        """Resume the run saved in ``path``; ``device`` and ``overrides`` (e.g. ``iterations``) replace
        settings that do not change what was learnt; ``executor`` and ``ray_address`` as for the
        constructor (a run may move between this machine and Ray)."""
        d = load_checkpoint(path)
        cfg = dict(d["config"])
        if device is not None:
            cfg["device"] = device
        cfg.update(overrides)
        try:
            config = AZConfig(**cfg)
        except TypeError as e:
            raise ValueError(f"{path}: checkpoint config does not fit this mavgame: {e}") from None
        t = cls(config, executor=executor, ray_address=ray_address)
        try:
            t.net.load_state_dict(d["model"])
            t.opt.load_state_dict(d["optimizer"])
        except (RuntimeError, ValueError, KeyError) as e:
            raise ValueError(f"{path}: network or optimiser state does not fit the config: {e}") from None
        t.buffer = ReplayBuffer.from_state_dict(d["replay"])
        t.rng.bit_generator.state = d["numpy_rng"]
        torch.set_rng_state(d["torch_rng"])
        if "cuda_rng" in d and t.device.type == "cuda":
            torch.cuda.set_rng_state(d["cuda_rng"], t.device)
        if t.features is not None:
            t.features = FeatureMeans.from_state_dict(d["features"])
            t.matchmaker = Matchmaker.from_state_dict(d["matchmaker"])
        t.iteration, t.step = int(d["iteration"]), int(d["step"])
        t.history = list(d.get("history", []))
        return t


def load_checkpoint(path: str) -> Dict[str, Any]:
    """The dict of an AlphaZero checkpoint; FileNotFoundError or ValueError naming ``path``."""
    d = load_state(path, "AlphaZero checkpoint")
    if not isinstance(d, dict) or d.get("format") != CHECKPOINT_FORMAT:
        got = d.get("format") if isinstance(d, dict) else type(d).__name__
        raise ValueError(f"{path!r} is not an AlphaZero checkpoint (format {got!r}, expected {CHECKPOINT_FORMAT!r})")
    return d


def write_log(path: str, rec: Dict[str, Any]) -> None:
    """Append one JSON line to the run's log."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec, sort_keys=True) + "\n")


def sync_log(path: str, history: List[Dict[str, Any]]) -> bool:
    """Make the run's log hold exactly the checkpoint's ``history``, one JSON line per iteration (the
    checkpoint is written first, so a kill before the log line, or a torn line, is mended here); returns
    whether the log was rewritten."""
    want = "".join(json.dumps(rec, sort_keys=True) + "\n" for rec in history)
    try:
        with open(path, encoding="utf-8") as f:
            have = f.read()
    except FileNotFoundError:
        have = None
    if have == want:
        return False
    write_bytes_atomic(path, want.encode("utf-8"))
    return True


__all__ += ["load_checkpoint", "write_log", "sync_log"]

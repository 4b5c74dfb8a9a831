"""The AlphaZero agents, registered as the kinds ``az`` and ``azdb`` (they need PyTorch to be built; this
module imports without it, so their options are known everywhere).

``az`` (:class:`AZAgent`): the C MCTS guided by a trained network's policy (prior) and value::

    az:checkpoint=runs/c4/checkpoint.pt,sims=200

``checkpoint`` is a file written by ``mavgame az`` (required); ``batch`` leaves per network call (default 1:
AlphaZero's sequential search; more use the MCTS's virtual counts), ``c_base``/``c_init`` AlphaZero's c(s)
(defaults 19652 / 1.25), ``movetime`` ms per move (``sims`` then caps the search). Play is deterministic
for a seed: no root noise, the most visited move, or with ``move=lcb`` the largest lower confidence bound
Q - U (the AZdb paper's play rule, :func:`mavgame.az.azdb.lcb_action`).

``azdb`` (:class:`AZdbAgent`): an AZdb team as one player::

    azdb:checkpoint=runs/team/checkpoint.pt,sims=20,select=lcb,rewards=path

``sims`` per player, ``select`` (visits, value, lcb, gap: whose move; lookup with ``table=PATH``: the
player a per-opening table names, :mod:`mavgame.az.lookup`) or ``player=K``, ``move`` (visits or lcb: which
move of that player), ``gap``, ``rewards`` (path:
the paper's play-time search value with the intrinsic rewards summed root to leaf; vd; extrinsic).
The team's searches (:class:`AZdbTeam`) also serve ``mavgame az-puzzles``. All options:
:func:`mavgame.agents.spec.describe_kinds`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional

import numpy as np

from .. import _core
from ..az.azdb import MOVE_RULES, SEARCH_REWARDS, lcb_action
from ..az.subadditive import RULES

#: the azdb agent's select: the sub-additive rules of equation 9, or ``lookup`` (the per-opening table of
#: the paper's appendix C.5, :mod:`mavgame.az.lookup`)
SELECT_RULES = RULES + ("lookup",)
from ..search.mcts import MCTS
from .base import Agent
from .mcts import MCTS_CHOICES, MCTSAgent
from .spec import options_of, register_agent

if TYPE_CHECKING:
    from ..az.network import AZNet

__all__ = ["AZEvaluator", "AZAgent", "load_network", "TeamEvaluator", "AZdbTeam", "AZdbAgent"]


def load_network(path: str, device: str = "cpu") -> AZNet:
    """The network of an AlphaZero checkpoint, in eval mode on ``device``."""
    import torch

    from ..az.network import AZNet
    from ..az.train import load_checkpoint
    d = load_checkpoint(path)
    cfg = d["config"]
    if int(cfg.get("players", 1)) > 1:
        raise ValueError(f"{path!r} is an AZdb team of {cfg['players']} players: play it with azdb:checkpoint=...")
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
        import torch
        self.net = net
        self.device = torch.device(device)
        self.name = "az"

    def __call__(self, requests: List[Any]) -> List[dict]:
        import torch
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
    """:class:`mavgame.agents.mcts.MCTSAgent` with the AlphaZero search settings (policy prior without
    uniform mixing, first-play urgency 0, c(s)) and an :class:`AZEvaluator`."""

    _label = "az agent"

    def __init__(self, checkpoint: Optional[str] = None, sims: Optional[int] = 100, *, batch: int = 1,
                 device: str = "cpu", c_base: float = 19652.0, c_init: float = 1.25, move: str = "visits",
                 name: Optional[str] = None, **kw):
        if not checkpoint:
            raise ValueError("the az agent needs checkpoint=PATH (a file written by `mavgame az`)")
        if move not in MOVE_RULES:
            raise ValueError(f"az: move must be one of {', '.join(MOVE_RULES)}, not {move!r}")
        self.move = str(move)
        net = load_network(str(checkpoint), device)
        ev = AZEvaluator(net, device)
        super().__init__(ev, sims, name=name or f"az-{sims}", games=(net.game,), batch_size=int(batch),
                         prior="policy", eps=0.0, fpu=0.0, c_base=float(c_base), c_init=float(c_init),
                         value_range=(-1.0, 1.0), **kw)
        self.checkpoint = str(checkpoint)

    def act(self, state):
        """The most visited root action (``move=visits``) or the largest Q - U (``move=lcb``)."""
        if self.move == "visits":
            return super().act(state)
        res = self._search(state)
        return lcb_action(res.actions, res.visits, res.q, res.u)


# ---- AZdb: the team ----------------------------------------------------------------------------

class TeamEvaluator:
    """The MCTS evaluator of one player of an AZdb team: latent planes for ``latent`` on every leaf
    (the searching player's latent conditions the whole search, both sides) and the search value of
    :func:`mavgame.az.azdb.search_value`: with ``rewards="path"`` (the default, the paper's play-time
    search) lambda v + (1 - lambda) s (R + own v_d), R the player's intrinsic rewards (``weights`` .
    observation after each of its moves, :func:`mavgame.az.azdb.reward_weights`) summed from the
    search root to the leaf in C (``_core.az_path_rewards``, as in self-play); ``"vd"`` leaves R out,
    ``"extrinsic"`` uses v alone (the paper's ablation)."""

    def __init__(self, net: AZNet, latent: int, players: int, lam: float, device: str = "cpu", *,
                 weights: Optional[np.ndarray] = None, rewards: str = "path"):
        import torch
        if rewards not in SEARCH_REWARDS:
            raise ValueError(f"rewards must be one of {', '.join(SEARCH_REWARDS)}, not {rewards!r}")
        self.net, self.latent, self.players, self.lam = net, int(latent), int(players), float(lam)
        self.device = torch.device(device)
        self.rewards = rewards
        self.weights = None if weights is None else np.ascontiguousarray(weights, np.float32)
        self.name = f"azdb-{latent}"

    def __call__(self, requests: List[Any]) -> List[dict]:
        import torch

        from ..az.azdb import latent_planes, search_value
        obs = latent_planes(_core.observation_tensors([r.state for r in requests]), self.latent, self.players)
        with torch.no_grad():
            logits, v, vd = self.net(torch.from_numpy(obs).to(self.device))
        logits = logits.float().cpu().numpy()
        own = np.array([r.depth % 2 == 0 for r in requests])
        reward = np.zeros(len(requests))
        if self.rewards == "path" and self.weights is not None and self.lam < 1.0:
            reward = _core.az_path_rewards(requests[0].root, [r.path for r in requests], self.weights)
        val = search_value(v.double().cpu().numpy(), vd.double().cpu().numpy(), reward, own, self.lam, self.rewards)
        out = []
        for i, r in enumerate(requests):
            lg = logits[i, np.asarray(r.legal_actions, np.int64)]
            p = np.exp(lg - lg.max())
            out.append({"policy": p / p.sum(), "value": float(val[i])})
        return out


class AZdbTeam:
    """An AZdb checkpoint's team: one MCTS per player (its latent), :meth:`searches` runs them all on
    a position and returns each player's N, Q, U per root action (:class:`mavgame.az.subadditive.PlayerSearch`).
    ``rewards`` (``path``, ``vd``, ``extrinsic``): the players' search value (:class:`TeamEvaluator`); the
    intrinsic rewards use the players' psi saved in the checkpoint."""

    def __init__(self, checkpoint: str, sims: int = 100, *, device: str = "cpu", c_base: float = 19652.0,
                 c_init: float = 1.25, seed: int = 0, rewards: str = "path"):
        import torch

        from ..az.azdb import FeatureMeans, player_lambdas, reward_weights
        from ..az.network import AZNet
        from ..az.train import load_checkpoint
        d = load_checkpoint(checkpoint)
        cfg = d["config"]
        self.players = int(cfg.get("players", 1))
        if self.players < 2:
            raise ValueError(f"{checkpoint!r} is a single AlphaZero (players 1), not an AZdb team; use az:")
        if "features" not in d:
            raise ValueError(f"{checkpoint!r} has no players' psi (features): not a team checkpoint of this mavgame")
        net = AZNet(tuple(d["obs_shape"]), int(d["num_actions"]), blocks=int(cfg["blocks"]),
                    channels=int(cfg["channels"]), value_hidden=int(cfg["value_hidden"]), intrinsic=True)
        net.load_state_dict(d["model"])
        self.net = net.to(torch.device(device)).eval()
        self.game = cfg["game"]
        self.lambdas = player_lambdas(self.players, float(cfg["lam"]))
        self.psi = FeatureMeans.from_state_dict(d["features"]).psi
        game_shape = (int(d["obs_shape"][0]) - self.players,) + tuple(int(x) for x in d["obs_shape"][1:])
        #: w_i (players, planes, rows, cols): player i's intrinsic reward of a move is w_i . observation after it
        self.weights = reward_weights(self.psi, self.game, game_shape, self.lambdas, float(cfg["l0"]))
        self.sims = int(sims)
        self.rewards = rewards
        self.mcts = [MCTS(TeamEvaluator(self.net, i, self.players, self.lambdas[i], device, weights=self.weights[i],
                                        rewards=rewards),
                          num_simulations=self.sims, prior="policy", eps=0.0, fpu=0.0, c_base=float(c_base),
                          c_init=float(c_init), value_range=(-1.0, 1.0), seed=int(seed) + i)
                     for i in range(self.players)]

    def search(self, player: int, state):
        """Player ``player``'s search of ``state``: its :class:`mavgame.az.subadditive.PlayerSearch`."""
        from ..az.subadditive import PlayerSearch
        r = self.mcts[player].search(state)
        return PlayerSearch(np.asarray(r.actions), np.asarray(r.visits), np.asarray(r.q), np.asarray(r.u))

    def searches(self, state) -> list:
        return [self.search(i, state) for i in range(self.players)]


class AZdbAgent(Agent):
    """The team as one player: every player searches (``sims`` each: the team's move costs players x
    sims simulations), ``select`` picks whose move to play (visits, value, lcb, gap: equation 9 of the
    paper) or ``player=K`` always plays player K's move.  ``rewards``: the players' search value,
    ``path`` (default: the paper's, intrinsic rewards summed root to leaf and v_d), ``vd`` or ``extrinsic``
    (:class:`TeamEvaluator`)::

        azdb:checkpoint=runs/team/checkpoint.pt,sims=20,select=lcb,rewards=path
    """

    def __init__(self, checkpoint: Optional[str] = None, sims: Optional[int] = 100, *, select: str = "lcb",
                 player: Optional[int] = None, gap: Optional[float] = None, rewards: str = "path",
                 move: str = "visits", table: Optional[str] = None, device: str = "cpu", c_base: float = 19652.0,
                 c_init: float = 1.25, seed: int = 0, name: Optional[str] = None):
        if not checkpoint:
            raise ValueError("the azdb agent needs checkpoint=PATH (a team written by `mavgame az --players N`)")
        if player is None and select not in SELECT_RULES:
            raise ValueError(f"azdb: select must be one of {', '.join(SELECT_RULES)}, not {select!r}")
        if select == "lookup" and player is None and not table:
            raise ValueError("azdb: select=lookup needs table=PATH (built by python -m mavgame.analysis.azdb_lookup)")
        if move not in MOVE_RULES:
            raise ValueError(f"azdb: move must be one of {', '.join(MOVE_RULES)}, not {move!r}")
        self.move = str(move)
        self.team = AZdbTeam(str(checkpoint), int(sims), device=device, c_base=c_base, c_init=c_init, seed=int(seed),
                             rewards=str(rewards))
        if player is not None and not 0 <= int(player) < self.team.players:
            raise ValueError(f"azdb: player {player!r} is not in [0, {self.team.players})")
        self.player = None if player is None else int(player)
        self.select, self.gap = select, gap
        self.table = None
        if self.player is None and select == "lookup":
            from ..az.lookup import LookupTable
            self.table = LookupTable.load(str(table))
            if self.table.game != self.team.game or self.table.players != self.team.players:
                raise ValueError(f"azdb: table {table!r} is for {self.table.players} players of {self.table.game}, "
                                 f"the team has {self.team.players} players of {self.team.game}")
        self._game_player: Optional[int] = None
        self.games = (self.team.game,)
        self.name = name or (f"azdb-p{player}-{sims}" if player is not None else f"azdb-{select}-{sims}")
        self.chosen: List[int] = []

    def _move_of(self, s) -> int:
        """The move of one player's search: most visited, or the largest Q - U (``move=lcb``)."""
        return s.best_action() if self.move == "visits" else lcb_action(s.actions, s.visits, s.q, s.u)

    def setup(self, game, *, seed=None, player=None) -> None:
        self._game_player = None       # select=lookup: chosen again at the game's first move

    def _lookup_player(self, state) -> int:
        """select=lookup: the table's player for this game's opening and colour (kept for the whole game);
        for a game that began with none of the table's openings, the player with the best mean score over
        all the table's openings in that colour."""
        if self._game_player is None:
            colour = int(state.to_move)
            j = self.table.player_for(state, colour)
            if j is None:
                with np.errstate(invalid="ignore"):
                    j = int(np.argmax(np.nan_to_num(np.nanmean(self.table.means()[:, colour], axis=0), nan=-np.inf)))
            self._game_player = int(j)
        return self._game_player

    def act(self, state) -> int:
        from ..az.subadditive import select_player
        self.check_game(state.game)
        if self.player is not None:
            return self._move_of(self.team.search(self.player, state))
        if self.table is not None:
            j = self._lookup_player(state)
            self.chosen.append(j)
            return self._move_of(self.team.search(j, state))
        searches = self.team.searches(state)
        j, _ = select_player(searches, self.select, self.gap)
        self.chosen.append(j)
        return self._move_of(searches[j])


_CHECKPOINT = {"checkpoint": "a file written by `mavgame az`", "device": "cpu, cuda", "movetime": "ms a move"}
register_agent("az", AZAgent,
               options=options_of(AZAgent, MCTSAgent, MCTS, required=("checkpoint",), help=_CHECKPOINT,
                                  choices={**{k: v for k, v in MCTS_CHOICES.items() if k != "prior"},
                                           "move": MOVE_RULES},
                                  skip=("games", "num_simulations", "batch_size", "prior", "eps", "fpu", "value_range",
                                        "evaluator")),
               help="AlphaZero: the MCTS guided by a network trained with `mavgame az` (needs PyTorch; "
                    "docs/alphazero.md); the other options are those of mavgame.MCTS")
register_agent("azdb", AZdbAgent,
               options=options_of(AZdbAgent, required=("checkpoint",), choices={"select": SELECT_RULES,
                                                                                "rewards": SEARCH_REWARDS,
                                                                                "move": MOVE_RULES},
                                  help={"checkpoint": "a team written by `mavgame az --players N`",
                                        "sims": "per player", "player": "always play player K's move",
                                        "table": "select=lookup: a table of python -m mavgame.analysis.azdb_lookup",
                                        "device": "cpu, cuda"}),
               help="an AZdb team as one player: every player searches, select picks whose move to play "
                    "(needs PyTorch; docs/alphazero.md)")

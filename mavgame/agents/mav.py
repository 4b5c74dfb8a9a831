"""The agents that play with a MAV model, registered as the kinds ``mav``, ``mav_mcts`` and ``mav_is``, and the
model as an MCTS evaluator.

- :class:`MAVGreedyAgent` ("MAV" in the paper, kind ``mav``): one model call per move with
  ``%state %top_all %best_action``; plays the legal move with the highest value by mean scoring (the
  expectation of the 64-way bucket distribution) or max scoring (its mode). When several moves are
  within ``tie`` of the best value, the model's ``%best_action`` decides if it is one of them (the
  paper's reason for %best_action: finishing won games instead of wandering among equally winning moves).
  ``mirror=True`` asks about the position and its mirror image in one batch and averages the two views'
  values (test-time symmetry averaging, not in the paper: two prompts a move; Connect Four, tic-tac-toe).
- :class:`MAVEvaluator`: the model as the evaluator of :class:`mavgame.search.mcts.MCTS` (prior and values
  from its action values, mean or max scoring), in engine mode or in the paper's engine-free state
  tracking mode (the model also predicts the child states, legal moves and terminal results);
  :class:`NativeMAVEvaluator` the same in C.
- :func:`mav_mcts_agent` ("MAV-MCTS", kind ``mav_mcts``): :class:`mavgame.agents.mcts.MCTSAgent` with that
  evaluator.
- :class:`MAVISAgent` (MAV-IS, kind ``mav_is``): the move of the model's own minimax trace
  (:mod:`mavgame.model.mav_is` generates and reads the traces).

Specs: ``mav:scoring=max``, ``mav_mcts:sims=64,batch=16``, ``mav_is:breadth=3,depth=1`` (``model=PATH`` for
another model than the shipped one). The native and NumPy backends need no PyTorch; ``backend=torch`` does.
"""
from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..mav.search_trace import TRACE_DECISION, TRACE_EVAL, TRACE_FORMS, parse_trace
from ..model.inference import MAVModel, game_of_prompt, shipped_model_path
from ..model.mav_is import DECISION_RULES, generate_traces, trace_value_choice
from ..search.mcts import MCTS
from .base import Agent, AgentError, mix_seeds
from .mav_batching import MCTSBatching
from .mcts import MCTS_CHOICES, MCTSAgent
from .spec import options_of, register_agent

__all__ = ["MAVGreedyAgent", "MAVEvaluator", "NativeMAVEvaluator", "MAVMCTSAgent", "mav_mcts_agent", "MAVISAgent",
           "get_model", "choose_move", "PLAIN", "MAV_TAU_SCHEDULE"]

PLAIN = "%state %top_all %best_action"

_MODELS: Dict[Any, MAVModel] = {}


def get_model(model=None, backend: str = "auto") -> MAVModel:
    """A MAVModel from an instance, a path, or None (the shipped Connect Four model); loaded once per path."""
    if isinstance(model, MAVModel):
        return model
    key = (str(model) if model is not None else None, backend)
    if key not in _MODELS:
        _MODELS[key] = MAVModel.load(model, backend=backend)
    return _MODELS[key]


def choose_move(values: Dict[str, float], best: Optional[str], tie: float, use_best: bool) -> Optional[str]:
    """The move with the highest value; ``best`` wins among moves within ``tie`` of the top value."""
    if not values:
        return None
    top = max(values.values())
    near = sorted(m for m, v in values.items() if v >= top - tie)
    if use_best and best in near:
        return best
    return max(near, key=lambda m: values[m])


class MAVGreedyAgent(Agent):
    """Searchless play from the model's action values (see the module docstring).

    If the model's output lists no legal move with a value (a hallucination), the agent plays its
    ``%best_action`` when legal, else a random legal move; ``stats`` counts how often.

    ``mirror``: also prompt the mirror image of the position (:mod:`mavgame.datasets.symmetry`) in the same
    batch and play by the mean of the two views' values for each legal move (a move valued in one view only
    keeps that value); ``%best_action`` is the plain view's, else the mirrored view's mapped back. The model
    errs differently on the two views, so the average picks a best move more often (docs/model.md, "Both
    views of the board"); it costs a second prompt a move.
    """

    def __init__(self, model=None, *, scoring: str = "mean", use_best_action: bool = True, tie: float = 0.02,
                 commands: str = PLAIN, backend: str = "auto", seed: Optional[int] = None,
                 name: Optional[str] = None, mirror: bool = False):
        if scoring not in ("mean", "max"):
            raise ValueError(f"scoring must be 'mean' or 'max', not {scoring!r}")
        self.model = get_model(model, backend)
        self.scoring = scoring
        self.use_best_action = bool(use_best_action)
        self.tie = float(tie)
        self.commands = commands
        self.mirror = bool(mirror)
        game = self.model.game
        if self.mirror and game:
            from ..datasets.symmetry import require_mirror
            require_mirror(game, "mirror=1 (the model's game)")
        self.name = name or "mav" + ("" if scoring == "mean" else f"-{scoring}") + ("-mirror" if self.mirror else "")
        self.games = (game,) if game else None
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self.stats = {"moves": 0, "from_values": 0, "from_best_action": 0, "random_fallback": 0}

    def setup(self, game, *, seed=None, player=None):
        self.check_game(game)
        self._rng = np.random.default_rng(mix_seeds(self._seed, seed))

    def decide(self, state):
        """(move, parse result, output) for a state (AgentError if the model was trained on another game)."""
        return self.decide_many([state])[0]

    def decide_many(self, states: Sequence[Any]) -> List[Tuple[Optional[str], Any, Any]]:
        """:meth:`decide` for many states, the model asked about all of them in one batch."""
        if self.mirror:
            from ..datasets.symmetry import mirror_move, mirror_state_text
            from .. import State
        batch = []
        for state in states:
            self.check_game(state.game)
            batch.append(state)
            if self.mirror:
                batch.append(State(state.game, mirror_state_text(state.game, state.text())))
        answers = self.model.analyse(batch, self.commands)
        step = 2 if self.mirror else 1
        out_list = []
        for i, state in enumerate(states):
            pr, out = answers[step * i]
            legal = set(state.legal_moves)
            vals = {m: v for m, v in out.values(self.scoring).items() if m in legal}
            best = pr.best if pr.best_present and pr.best in legal else None
            if self.mirror:
                image = batch[step * i + 1]
                mpr, mout = answers[step * i + 1]
                mtext = image.text()
                back = {}
                for m, v in mout.values(self.scoring).items():
                    try:
                        back[mirror_move(state.game, m, mtext)] = v
                    except ValueError:      # a move the model wrote that is no move of this board
                        continue
                back = {m: v for m, v in back.items() if m in legal}
                vals = {m: (vals[m] + back[m]) / 2 if m in vals and m in back else vals.get(m, back.get(m))
                        for m in set(vals) | set(back)}
                if best is None and mpr.best_present and mpr.best:
                    try:
                        mb = mirror_move(state.game, mpr.best, mtext)
                    except ValueError:
                        mb = None
                    best = mb if mb in legal else None
            out_list.append((choose_move(vals, best, self.tie, self.use_best_action), pr, out))
        return out_list

    def act(self, state):
        return self._play(state, None)

    def _play(self, state, decision):
        """The move from a decision (:meth:`decide`; None: decide now), with the fallbacks and counters."""
        if state.is_terminal():
            raise AgentError(f"{self.name}: asked to move in a finished game {state.text()!r}")
        mv, pr, out = self.decide(state) if decision is None else decision
        self.stats["moves"] += 1
        if mv is not None:
            self.stats["from_values"] += 1
            return mv
        legal = list(state.legal_moves)
        if pr.best_present and pr.best in legal:
            self.stats["from_best_action"] += 1
            return pr.best
        self.stats["random_fallback"] += 1
        return legal[int(self._rng.integers(len(legal)))]

    # ---- many games at once (mavgame.play.concurrent) -------------------------------------------------

    def batches_across_games(self) -> bool:
        """The model's calls for several games' positions go in one batch."""
        return True

    def batch_key(self):
        """Agents with equal keys decide together (:meth:`act_many`): the same model and settings."""
        return (id(self.model), self.commands, self.scoring, self.tie, self.use_best_action, self.mirror)

    def fork(self) -> "MAVGreedyAgent":
        """Another player of this agent for a concurrent game: the same model, its own generator."""
        twin = copy.copy(self)
        twin._rng = np.random.default_rng(self._seed)
        return twin

    @classmethod
    def act_many(cls, agents: Sequence["MAVGreedyAgent"], states: Sequence[Any]) -> List[Any]:
        """The moves of ``agents[i]`` (equal :meth:`batch_key`) in ``states[i]``, one model batch for all: each
        the move ``agents[i].act(states[i])`` plays."""
        for ag, st in zip(agents, states):
            if st.is_terminal():
                raise AgentError(f"{ag.name}: asked to move in a finished game {st.text()!r}")
        decisions = agents[0].decide_many(states)
        return [ag._play(st, d) for ag, st, d in zip(agents, states, decisions)]


class MAVEvaluator:
    """MCTS evaluator: one batched model call per batch of leaves.

    Engine mode: returns each leaf's legal-move values (mean or max scored); output with no usable value
    is handed to the search as text, whose parser marks the leaf hallucinated. State tracking: returns
    the predicted state (converted to the game's text), the predicted moves with values and the
    predicted result of terminal states; unusable output marks the leaf hallucinated.
    """

    def __init__(self, model=None, *, scoring: str = "mean", backend: str = "auto", batch_size: int = 64,
                 cache_size: int = 100_000):
        if scoring not in ("mean", "max"):
            raise ValueError(f"scoring must be 'mean' or 'max', not {scoring!r}")
        if cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, got {cache_size}")
        self.model = get_model(model, backend)
        self.scoring = scoring
        self.batch_size = batch_size
        self.cache_size = int(cache_size)
        self._cache: "OrderedDict[str, Any]" = OrderedDict()
        self.name = f"mav-{scoring}"
        self.calls = 0
        self.evaluations = 0
        self.generated = 0
        self.cache_hits = 0

    def _outputs(self, prompts: List[str]) -> List[Any]:
        """Model outputs for the prompts. Greedy decoding is deterministic, so outputs are cached by prompt
        (an LRU of ``cache_size`` entries): transpositions and the positions a reused tree or a repeated
        opening meets again cost nothing, and equal prompts within a batch are generated once."""
        cache = self._cache
        todo = list(dict.fromkeys(p for p in prompts if p not in cache))
        self.cache_hits += len(prompts) - len(todo)
        if todo:
            self.generated += len(todo)
            for p, o in zip(todo, self.model.generate(todo, batch_size=self.batch_size)):
                cache[p] = o
        outs = []
        for p in prompts:
            cache.move_to_end(p)
            outs.append(cache[p])
        while len(cache) > self.cache_size:
            cache.popitem(last=False)
        return outs

    def __call__(self, requests: Sequence[Any]) -> List[Any]:
        from .. import mav
        prompts = [r.prompt for r in requests]
        if any(p is None for p in prompts):
            raise ValueError("the MAV evaluator needs MAV prompts (this game has no MAV format)")
        if self.model.game and prompts:
            asked = game_of_prompt(prompts[0])
            if asked != self.model.game:
                raise ValueError(f"the MAV evaluator's model plays {self.model.game}, not {asked} "
                                 f"(request {requests[0]!r})")
        outs = self._outputs(prompts)
        self.calls += 1
        self.evaluations += len(requests)
        results: List[Any] = []
        for r, p, o in zip(requests, prompts, outs):
            vals = o.values(self.scoring)
            if r.parent_text is None and r.legal_actions is not None:   # engine mode
                legal = set(r.legal_moves)
                vals = {m: v for m, v in vals.items() if m in legal}
                results.append({"values": vals} if vals else o.text)
                continue
            game = self.model.game or game_of_prompt(p)
            pr = mav.parse(game, p + o.text)
            if pr.outcome is not None:
                results.append({"result": pr.outcome, "state": pr.cur.text or r.parent_text or "", "moves": []})
                continue
            if not pr.cur.valid or not pr.top:
                results.append(False)
                continue
            moves = [m.move for m in pr.top if m.status != "malformed" and not m.duplicate]
            results.append({"state": pr.cur.text, "moves": moves,
                            "values": {m: vals[m] for m in moves if m in vals}})
        return results


class NativeMAVEvaluator:
    """MCTS evaluator that runs entirely in C (search/mcts_eval_model.c): prompts, tokenization, generation
    with the native engine and reading the values happen without Python, with the GIL released for the
    whole search. Engine mode, or state tracking (``state_tracking=True``: the model is the world model);
    picks the same moves as :class:`MAVEvaluator` over the same model (it reads the answers the same way).
    ``cache_size``: engine mode keeps the answers of that many prompts across searches (a direct-mapped
    C table, checked against the prompt's tokens; 0: none); state tracking has no cache.
    ``prefix_cache``: the engine's cross-batch prefix cache in tokens (keys and values of prompt prefixes
    kept between batches in 16-token blocks, least recently used replaced; 0: none): a prefix met in an
    earlier batch (a ``%prev_state`` expanded again, the header) is copied instead of computed, with
    identical results.

    The search's ``timeout`` holds per chunk of ``batch_size`` leaves (generation is synchronous): a chunk
    generated after the deadline is dropped, the chunks after it are not generated, and cache hits are never
    late (docs/mcts.md, "Where the timeout applies").

    ``threads``: the evaluator's engine threads (default: the model's); ``batch_size``: leaves generated at
    once (the search's batch size); ``spec``: the MAV prompt form (default ``%state %top_all %best_action``,
    with state tracking ``%prev_state %prev_action %state %top_all %best_action``).
    """

    def __init__(self, model=None, *, scoring: str = "mean", batch_size: int = 16, threads: Optional[int] = None,
                 prefix_sharing: bool = True, spec: Optional[str] = None, state_tracking: bool = False,
                 cache_size: int = 16384, prefix_cache: int = 0):
        from ..model.inference import NativeBackend
        if scoring not in ("mean", "max"):
            raise ValueError(f"scoring must be 'mean' or 'max', not {scoring!r}")
        self.model = get_model(model, "native")
        if not isinstance(self.model.backend, NativeBackend):
            raise ValueError("NativeMAVEvaluator needs a model on the native backend")
        if not self.model.game:
            raise ValueError("NativeMAVEvaluator needs a model whose file names its game")
        self.scoring = scoring
        self.batch_size = max(int(batch_size), 1)
        self.threads = int(threads) if threads else self.model.backend.threads
        self.prefix_sharing = bool(prefix_sharing)
        self.spec = spec
        self.state_tracking = bool(state_tracking)
        if not 0 <= int(cache_size) <= 1 << 24:
            raise ValueError(f"cache_size must be in [0, 2**24], got {cache_size}")
        self.cache_size = int(cache_size)
        if not 0 <= int(prefix_cache) <= 1 << 24:
            raise ValueError(f"prefix_cache must be in [0, 2**24] tokens, got {prefix_cache}")
        self.prefix_cache = int(prefix_cache)
        self.name = f"mav-native-{scoring}"
        self._cap = None

    def capsule(self):
        """The C evaluator (made once; one search at a time uses it)."""
        if self._cap is None:
            from .. import _core
            game = self.model.game
            self._cap = _core.mcts_mav_evaluator(
                self.model.backend.engine, game, threads=self.threads, max_batch=self.batch_size,
                spec=self.spec, scoring=self.scoring, group_ids=self.model.move_tokens(game),
                prefix_sharing=self.prefix_sharing, state_tracking=self.state_tracking, cache_size=self.cache_size,
                prefix_cache=self.prefix_cache)
        return self._cap

    def widen(self, max_batch: int) -> None:
        """Generate up to ``max_batch`` leaves at once (at most 1024), for searches of many games evaluated in one
        call (:func:`mavgame.search.multi.search_many`). Answers do not depend on how leaves are chunked, so only
        speed changes; a C evaluator already made is remade (its output cache starts empty)."""
        n = min(max(int(max_batch), 1), 1024)
        if n > self.batch_size:
            self.batch_size = n
            self._cap = None

    def stats(self) -> Dict[str, int]:
        """Counters: calls, requests, cache hits, invalid answers, text fallbacks, prompt tokens, tokens saved
        by prefix sharing, tokens generated."""
        from .. import _core
        return _core.mcts_mav_evaluator_stats(self.capsule())

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_cap"] = None
        return d


class MAVMCTSAgent(MCTSBatching, MCTSAgent):
    """MCTSAgent whose search may find no move when the model never answers usably for the root (an
    untrained or badly hallucinating model): it then plays a random legal move and counts it in
    ``stats['random_fallback']``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stats = {"moves": 0, "random_fallback": 0}
        self._rng = np.random.default_rng(self._seed)

    def setup(self, game, *, seed=None, player=None):
        super().setup(game, seed=seed, player=player)
        self._rng = np.random.default_rng(mix_seeds(self._seed, seed))

    def act(self, state):
        from ..search.results import SearchError
        self.check_game(state.game)
        self.stats["moves"] += 1
        try:
            return super().act(state)
        except AgentError as e:
            if not isinstance(e.__cause__, SearchError):
                raise
            self.stats["random_fallback"] += 1
            legal = list(state.legal_moves)
            if self._mcts is not None:
                self._mcts.reset()
            return legal[int(self._rng.integers(len(legal)))]


#: The prior's temperature (equation 1) of the MAV-MCTS agents by move number, ``(from_ply, tau)`` steps: the
#: paper adapts tau "as a function of the number of moves played" without printing the schedule, so this one is
#: ours (docs/mcts.md, "The temperature by move number"): 0.2 in the opening, where the model's values lie close
#: together and the search should look at all of its top k; halved every 10 plies as the values separate and
#: grow reliable, down to 0.05 from ply 20; the constant 0.1 of the search (``tau=0.1``) sits at plies 10-19.
MAV_TAU_SCHEDULE = ((0, 0.2), (10, 0.1), (20, 0.05))


def mav_mcts_agent(model=None, sims: int = 64, *, scoring: str = "mean", batch_size: int = 16,
                   state_tracking: bool = False, backend: str = "auto", name: Optional[str] = None,
                   cache_size: int = 100_000, native: Optional[bool] = None,
                   tau: Union[None, float, Sequence[Tuple[int, float]]] = None, **mcts_kwargs) -> MAVMCTSAgent:
    """MAV-MCTS: MCTS with the model as prior, value function (and, with state_tracking, world model).
    ``cache_size``: model outputs kept by prompt across searches (see :class:`MAVEvaluator`).
    ``native``: evaluate in C (:class:`NativeMAVEvaluator`: no Python in the search loop, no output cache);
    default: when the model runs on the native backend. ``tau``: the prior's temperature, a number (constant, as
    :class:`mavgame.search.mcts.MCTS`'s default 0.1) or a ``(from_ply, tau)`` schedule; None (the default):
    :data:`MAV_TAU_SCHEDULE`, the temperature adapted to the move number as the paper plays MAV-MCTS."""
    ev = MAVEvaluator(model, scoring=scoring, backend=backend, batch_size=max(batch_size, 1),
                      cache_size=cache_size)
    game = ev.model.game
    if native is None:
        from ..model.inference import NativeBackend
        native = isinstance(ev.model.backend, NativeBackend) and bool(game)
    if native:
        ev = NativeMAVEvaluator(ev.model, scoring=scoring, batch_size=max(batch_size, 1),
                                state_tracking=bool(state_tracking), cache_size=min(cache_size, 1 << 16))
    kw = dict(batch_size=batch_size, state_tracking=bool(state_tracking),
              tau=[tuple(step) for step in MAV_TAU_SCHEDULE] if tau is None else tau)
    if state_tracking and game:
        kw["game"] = game
    kw.update(mcts_kwargs)
    st = "-st" if state_tracking else ""
    sc = "" if scoring == "mean" else f"-{scoring}"     # the default scoring unnamed, as in the mav kind's names
    return MAVMCTSAgent(ev, sims, name=name or f"mav-mcts{st}{sc}-{sims}", games=(game,) if game else None,
                        **kw)


class MAVISAgent(Agent):
    """Plays the move of the model's own minimax trace: prompts the model for a trace of breadth B and depth D
    (:func:`mavgame.model.mav_is.generate_traces`), parses it against the true position and plays the move it
    chose (``Playing m!``), in the child form the model was trained with (``MAVModel.trace_form``). When the
    trace is unusable (cut off, malformed, its final move illegal) it falls back to searchless MAV on the same
    model (:class:`MAVGreedyAgent`); ``stats`` counts both. ``model``: a MAVModel or
    a path; None: the Connect Four MAV-IS shipped in ``mavgame/data`` (``mav_is_connect_four.safetensors``).
    ``form`` (None: the model's ``trace_form``) is the child form the trace is parsed in. ``decide``
    (:data:`DECISION_RULES`): "trace" plays the trace's ``Playing m!`` (the paper); "mean" / "max" the minimax
    choice over the trace's leaves scored from the model's value distributions (:func:`trace_value_choice`),
    on the same usable traces (a trace the rule cannot decide from plays its own final move). ``copy_prev``
    (full child form): every ``%prev_state`` line is completed with the parent's state as the trace wrote it
    rather than decoded (:func:`generate_traces_copy_prev`; a decoding constraint, no outside knowledge).
    ``copy_names`` (vocabulary v2): the node name after each ``Evaluation for node:`` / ``Decision for node:``
    is the one the format puts there given the trace's own ``Expand`` lines (:func:`next_node_name`)."""

    def __init__(self, model=None, *, breadth: int = 2, depth: int = 1, backend: str = "auto",
                 seed: Optional[int] = None, name: Optional[str] = None, form: Optional[str] = None,
                 decide: str = "trace", copy_prev: bool = False, copy_names: bool = False):
        if not (1 <= breadth <= 8 and 1 <= depth <= 4):
            raise ValueError(f"mav_is needs breadth 1..8 and depth 1..4, got breadth={breadth} depth={depth}")
        if decide not in DECISION_RULES:
            raise ValueError(f"mav_is: decide must be one of {DECISION_RULES}, not {decide!r}")
        self.decide = decide
        self.copy_prev = bool(copy_prev)
        self.copy_names = bool(copy_names)
        self.model = get_model(shipped_model_path("connect_four", "mav_is") if model is None else model, backend)
        if self.copy_names:   # refused now, not at the first move's trace
            tok = self.model.tokenizer
            for kw in (TRACE_EVAL, TRACE_DECISION):
                if len(tok.encode(kw)) != 1:
                    raise ValueError(f"mav_is: copy_names needs {kw!r} as one token: vocabulary v2 (the model's "
                                     f"is v{tok.version})")
        if form is not None and form not in TRACE_FORMS:
            raise ValueError(f"mav_is: trace form must be one of {TRACE_FORMS}, not {form!r}")
        self._form = form
        self.breadth, self.depth = int(breadth), int(depth)
        self.name = name or f"mav-is-b{breadth}d{depth}"
        self.fallback = MAVGreedyAgent(self.model, seed=seed, name=self.name + "-fallback")
        game = self.model.game
        self.games = (game,) if game else None
        self.stats = {"moves": 0, "from_trace": 0, "fallback": 0, "shape_ok": 0, "tokens": 0, "overruled": 0}
        self.last: Optional[Any] = None  # the last TraceResult

    @property
    def form(self) -> str:
        """The child form traces are parsed in: the one given, else the model's (short for an old model)."""
        return self._form or getattr(self.model, "trace_form", "short")

    def setup(self, game, *, seed=None, player=None):
        self.check_game(game)
        self.fallback.setup(game, seed=seed, player=player)

    def act(self, state):
        if state.is_terminal():
            raise AgentError(f"{self.name}: asked to move in a finished game {state.text()!r}")
        (trace,) = generate_traces(self.model, [state], self.breadth, self.depth, copy_prev=self.copy_prev,
                                   copy_names=self.copy_names)
        return self._play(state, trace)

    # ---- many games at once (mavgame.play.concurrent) -------------------------------------------------

    def batches_across_games(self) -> bool:
        """The traces of several games' positions are generated in one batch."""
        return True

    def batch_key(self):
        """Agents with equal keys generate their traces together (:meth:`act_many`)."""
        return (id(self.model), self.breadth, self.depth, self.copy_prev, self.copy_names)

    def fork(self) -> "MAVISAgent":
        """Another player of this agent for a concurrent game (the same model; its own fallback player)."""
        twin = copy.copy(self)
        twin.fallback = self.fallback.fork()
        return twin

    @classmethod
    def act_many(cls, agents: Sequence["MAVISAgent"], states: Sequence[Any]) -> List[Any]:
        """The moves of ``agents[i]`` (equal :meth:`batch_key`) in ``states[i]``, their traces generated in one
        batch: each the move ``agents[i].act(states[i])`` plays."""
        for ag, st in zip(agents, states):
            if st.is_terminal():
                raise AgentError(f"{ag.name}: asked to move in a finished game {st.text()!r}")
        a0 = agents[0]
        traces = generate_traces(a0.model, list(states), a0.breadth, a0.depth, copy_prev=a0.copy_prev,
                                 copy_names=a0.copy_names)
        return [ag._play(st, tr) for ag, st, tr in zip(agents, states, traces)]

    def _play(self, state, trace):
        """The move of a generated trace ``(prompt, output)`` for ``state``, with the fallback and counters."""
        prompt, out = trace
        res = parse_trace(prompt + out.text, state, form=self.form)
        self.last = res
        self.stats["moves"] += 1
        self.stats["tokens"] += len(out.ids)
        self.stats["shape_ok"] += int(res.shape_ok)
        if res.final_legal:
            self.stats["from_trace"] += 1
            if self.decide != "trace":
                a = trace_value_choice(res, out, prompt, self.model.tokenizer.token_to_id("\n"), self.decide)
                if a is not None and a != res.final_action:
                    self.stats["overruled"] += 1
                    return int(a)
            return res.final_move
        self.stats["fallback"] += 1
        return self.fallback.act(state)


_BACKENDS = ("auto", "native", "numpy", "torch")
_MODEL = "a .safetensors file; default: the shipped Connect Four model"


def _make_mav(model: Optional[str] = None, scoring: str = "mean", best: bool = True, tie: float = 0.02,
              backend: str = "auto", mirror: bool = False, **kw) -> MAVGreedyAgent:
    return MAVGreedyAgent(model, scoring=scoring, use_best_action=bool(best), tie=tie, backend=backend,
                          mirror=bool(mirror), **kw)


def _make_mav_mcts(model: Optional[str] = None, sims: int = 64, scoring: str = "mean", batch: int = 16,
                   state_tracking: bool = False, backend: str = "auto", cache: int = 100_000,
                   tau: Optional[float] = None, **kw) -> MCTSAgent:
    return mav_mcts_agent(model, sims, scoring=scoring, batch_size=batch, state_tracking=bool(state_tracking),
                          backend=backend, cache_size=cache, tau=tau, **kw)


def _make_mav_is(model: Optional[str] = None, breadth: int = 2, depth: int = 1, backend: str = "auto",
                 form: Optional[str] = None, decide: str = "trace", copy_prev: bool = False, copy_names: bool = False,
                 **kw) -> MAVISAgent:
    return MAVISAgent(model, breadth=int(breadth), depth=int(depth), backend=backend, form=form, decide=decide,
                      copy_prev=bool(copy_prev), copy_names=bool(copy_names), **kw)


register_agent("mav", _make_mav,
               options=options_of(_make_mav, MAVGreedyAgent, skip=("use_best_action",),
                                  choices={"scoring": ("mean", "max"), "backend": _BACKENDS},
                                  help={"model": _MODEL, "best": "%best_action breaks near ties",
                                        "mirror": "average with the mirror image's values"}),
               help="the MAV model, searchless: the legal move with the best value (mirror=1: averaged with the "
                    "mirror image's values; Connect Four, tic-tac-toe)")
register_agent("mav_mcts", _make_mav_mcts,
               options=options_of(_make_mav_mcts, mav_mcts_agent, MCTSAgent, MCTS,
                                  skip=("batch_size", "cache_size", "games", "num_simulations", "evaluator"),
                                  choices={"scoring": ("mean", "max"), "backend": _BACKENDS, **MCTS_CHOICES},
                                  help={"model": _MODEL, "state_tracking": "engine-free", "movetime": "ms a move",
                                        "cache": "model outputs kept", "native": "default: on the native backend",
                                        "tau": "none: by move number, 0.2 / 0.1 from ply 10 / 0.05 from 20; "
                                               "a number: constant"}),
               help="MAV-MCTS: the model guiding MCTS (state_tracking=1: the model is also the world model); "
                    "the other options are those of mavgame.MCTS")
register_agent("mav_is", _make_mav_is,
               options=options_of(_make_mav_is, MAVISAgent,
                                  choices={"backend": _BACKENDS, "form": TRACE_FORMS, "decide": DECISION_RULES},
                                  help={"model": "a .safetensors file; default: the shipped Connect Four MAV-IS",
                                        "breadth": "1..8", "depth": "1..4"}),
               help="MAV-IS: the move of the model's own minimax trace of breadth x depth (decide=mean|max: "
                    "minimax over the trace's value distributions)")

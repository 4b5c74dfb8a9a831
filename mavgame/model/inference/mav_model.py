"""``MAVModel``: a trained MAV model on MAV text, and the reading of its outputs (value entries, the game of a
prompt).

``MAVModel.load(path)`` reads a model exported by :mod:`mavgame.model.export` (safetensors) and runs it with
the native C engine (``backend="native"``, csrc/model: the default where the extension has it), with PyTorch,
or with the NumPy implementation (:mod:`.reference`; the references: all agree to float32 rounding; tests check
it). Generation (:mod:`.decode`) is greedy, batched over prompts of different lengths
(left padding), with a key/value cache; at every generated value token (the 64 bucket tokens ``<ctrl0>`` ..
``<ctrl63>``) the model's 64-way distribution over the buckets is kept, so that both max scoring (the mode)
and mean scoring (the expectation over bucket midpoints) are available to agents.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...mav import vocab_fingerprint
from ..config import MAVConfig
from ..export import load_exported
from .backends import NativeBackend, _torch_auto_device, _TorchBackend, native_available, native_device_error
from .decode import _size_arg, generate_ids
from .reference import NumpyTransformer
from .scoring import value_scorer
from .shipped import shipped_model_path


@dataclass
class MAVOutput:
    """One generated MAV output: ``text`` (the output lines), its token ids, ``finished`` (ended with
    <eos>), and ``value_dists``: {move: 64-way bucket distribution} for every ``move:<ctrlN>`` entry the
    model wrote (first occurrence of a move). ``value_entries`` lists every such entry in the order written,
    repeats included, as (index in ``ids`` of the move's token, move, distribution): a search trace writes one
    ``%top_all`` line per node, and the entries' positions say which node each belongs to."""

    text: str
    ids: List[int]
    finished: bool
    value_dists: Dict[str, np.ndarray] = field(default_factory=dict)
    value_entries: List[Tuple[int, str, np.ndarray]] = field(default_factory=list)

    def values(self, scoring: str = "mean") -> Dict[str, float]:
        """{move: win probability} by mean scoring (expectation) or max scoring (the mode's midpoint)."""
        f = value_scorer(scoring)
        return {m: float(f(p)) for m, p in self.value_dists.items()}


class MAVModel:
    """A trained MAV model on MAV text: ``MAVModel.load(path)`` then :meth:`generate` / :meth:`analyse`.

    ``backend``: ``"native"`` (the C engine of csrc/model), ``"torch"``, ``"numpy"`` or ``"auto"`` (native when the
    extension has it and can run on ``device``, else torch when installed, else NumPy). ``device``: ``"cpu"``,
    ``"cuda"`` (the native engine's CUDA forward pass where the build has the kernels and a GPU is usable, else a
    ValueError saying which is missing) or ``"auto"`` (the GPU when usable, else the CPU). The file's vocabulary
    version picks the tokenizer (``mavgame.mav.Tokenizer(version)``: v1 for the shipped models, v2 for MAV-IS models
    with the trace keyword tokens); an unknown version, a vocabulary size that does not match the version, a file
    that declares none and a fingerprint that differs from the installed vocabulary's are refused.

    Threads, by backend (the weights are read-only everywhere; what differs is the working state):

    - ``native``: the engine (:class:`NativeBackend`) holds the KV cache and scratch of one generation: a call
      from a second thread while one runs raises RuntimeError ("MavEngine is in use by another thread").
      Share a native model between threads behind a lock, or load one per thread; the MCTS evaluators made
      from one engine (``mcts_mav_evaluator``) have their own buffers and may run concurrently, one search each.
    - ``torch`` and ``numpy``: each generation builds its own KV cache, so concurrent calls are safe and give
      the results each would alone; the intra-op thread count they set while generating (torch's, OpenBLAS's)
      is process-wide, so concurrent calls race on that setting (the count restored after may be another
      call's). One call with a bigger batch is faster anyway.
    """

    def __init__(self, backend, cfg: MAVConfig, vocab_version: str = "", info: Optional[dict] = None,
                 tokenizer=None, path: Optional[str] = None):
        from ... import mav
        self.backend = backend
        self.cfg = cfg
        self.info = dict(info or {})
        self.path = path
        where = f"model {path}" if path else "model"
        # the vocabulary: the one the file declares (a known version of the model's size), else the given
        # tokenizer's, else (a model made in memory) the version of the model's size
        if vocab_version:
            try:
                version = mav.check_model_vocab(vocab_version, cfg.vocab_size)
            except ValueError as e:
                raise ValueError(f"{where}: {e}") from None
        elif path is not None:
            raise ValueError(f"{where} declares no MAV vocabulary (metadata vocab_version is empty)")
        else:
            version = tokenizer.version if tokenizer is not None else mav.version_of_size(cfg.vocab_size)
        if tokenizer is not None and tokenizer.version != version:
            raise ValueError(f"{where} uses MAV vocabulary v{version}, the tokenizer given is v{tokenizer.version}")
        self.tokenizer = tokenizer or mav.Tokenizer(version)
        self.vocab_version = version
        tok = self.tokenizer
        fp = self.info.get("vocab_fingerprint")
        if fp and fp != vocab_fingerprint(tok):
            raise ValueError(f"{where} was trained with a different MAV vocabulary v{tok.version} "
                             f"(fingerprint {fp}, installed {vocab_fingerprint(tok)})")
        if cfg.vocab_size != tok.size:
            raise ValueError(f"model vocabulary size {cfg.vocab_size} != tokenizer size {tok.size}")
        self.game = self.info.get("game")
        # the child form of the search traces it was trained on (MAV-IS); a model without the field: short
        self.trace_form = self.info.get("trace_form") or "short"
        if self.trace_form not in ("short", "full"):
            raise ValueError(f"{where}: unknown trace_form {self.trace_form!r} in its metadata (short or full)")
        self.decoding = "grouped"
        self._move_tokens: Dict[str, List[int]] = {}
        self._tok_ids = _top_tok_ids(tok)

    def __getstate__(self):
        d = dict(self.__dict__)
        d["tokenizer"] = None   # a C object: rebuilt on unpickling (the version was checked at load)
        return d

    def __setstate__(self, d):
        from ... import mav
        self.__dict__.update(d)
        self.tokenizer = mav.Tokenizer(self.__dict__.get("vocab_version", mav.VOCAB_VERSION))

    @classmethod
    def load(cls, path=None, backend: str = "auto", device: str = "cpu", threads: int = 0,
             weights: str = "float32") -> "MAVModel":
        """Load an exported model (``path``; None: the Connect Four model shipped in ``mavgame/data``).

        Every backend refuses a file whose weights hold NaN or inf (ValueError naming the file and the tensor):
        such a model answers nothing usable. ``threads``: an integer >= 0 (0: the backend's default).
        ``weights="bf16"``: the native CUDA engine's weight matrices in bfloat16 on the GPU (half their memory,
        float32 accumulation; :class:`NativeBackend`); ValueError on another backend or device."""
        threads = _size_arg("threads", threads, 0)
        if path is None:
            path = shipped_model_path("connect_four")
        if backend not in ("auto", "native", "torch", "numpy"):
            raise ValueError(f"backend must be 'auto', 'native', 'torch' or 'numpy', not {backend!r}")
        if weights != "float32":  # an option of the native CUDA engine only (NativeBackend checks the device)
            if backend in ("torch", "numpy"):
                raise ValueError(f"weights={weights!r} is an option of the native CUDA engine (backend='native', "
                                 f"device='cuda'), not of backend={backend!r}")
            backend = "native"
        if backend == "auto":
            if native_available() and (device == "auto" or native_device_error(device) is None):
                backend = "native"
            else:
                try:
                    import torch
                    backend = "torch"
                except ImportError:
                    backend = "numpy"
                if str(device).startswith("cuda") and (backend == "numpy" or not torch.cuda.is_available()):
                    # neither the native engine nor torch can run there: say why, as the native backend would
                    raise ValueError(native_device_error(device) or f"device={device!r}: no CUDA device usable")
        if backend == "native":
            be = NativeBackend(path, threads=threads, device=device, weights=weights)
            try:
                info = json.loads(be.engine.info)
            except json.JSONDecodeError:
                raise ValueError(f"{path}: metadata 'info' is not valid JSON") from None
            return cls(be, be.cfg, be.engine.vocab_version, info, path=str(path))
        weights, cfg, vv, info = load_exported(path)
        if device == "auto":
            device = "cpu" if backend == "numpy" else _torch_auto_device()
        if backend == "torch":
            be = _TorchBackend(weights, cfg, device, threads)
        else:
            be = NumpyTransformer(weights, cfg, threads=threads or 1)
        return cls(be, cfg, vv, info, path=str(path))

    @classmethod
    def from_module(cls, module, game: Optional[str] = None, tokenizer=None, backend: str = "torch",
                    threads: int = 0) -> "MAVModel":
        """A MAVModel of a torch MAVTransformer (e.g. during training). ``backend="torch"`` wraps the module
        itself; ``"native"`` exports its current weights (float32, to a temporary file) into the native
        engine, much faster for generating many answers; ``"auto"``: native where the extension has it."""
        if backend == "auto":
            backend = "native" if native_available() else "torch"
        from ... import mav
        tok = tokenizer or mav.Tokenizer(mav.version_of_size(module.cfg.vocab_size))
        if backend == "torch":
            return cls(_TorchBackend.from_module(module), module.cfg, str(tok.version), {"game": game}, tok)
        if backend != "native":
            raise ValueError(f"backend must be 'auto', 'native' or 'torch', not {backend!r}")
        import os
        import tempfile

        from ..export import export_model
        fd, path = tempfile.mkstemp(suffix=".safetensors", prefix="mavgame-")
        os.close(fd)
        try:
            export_model(path, module.state_dict(), module.cfg, str(tok.version), info={"game": game})
            be = NativeBackend(path, threads=threads)      # the engine reads the whole file: it can go
        finally:
            os.unlink(path)
        return cls(be, be.cfg, str(tok.version), {"game": game}, tok)

    def encode_prompt(self, prompt: str) -> List[int]:
        """The token ids the model reads for ``prompt`` (``<bos>`` first), after :meth:`check_prompt`."""
        self.check_prompt(prompt)
        return [self.tokenizer.bos_id] + self.tokenizer.encode(prompt).tolist()

    def check_prompt(self, prompt: str) -> None:
        """Refuse a prompt whose MAV header names a game the model was not trained on (its file's metadata
        names the game, ``info["game"]``): the model would answer it with moves of its own game, without a
        word. ValueError naming both games; a model without a game in its metadata, or a prompt whose header
        names no game, is not checked."""
        if not self.game:
            return
        try:
            game = game_of_prompt(prompt)
        except ValueError:
            return
        if game != self.game:
            where = f"model {self.path}" if self.path else "this model"
            raise ValueError(f"a {game!r} prompt for {where}, trained on {self.game!r} only (the game its metadata "
                             f"names): it would answer with {self.game} moves")

    def move_tokens(self, game: str) -> List[int]:
        """Token ids that can start a move of ``game`` (every move of the game, not only the legal ones:
        the first token of each of the core's move tokens, ``mavgame.mav.move_tokens``, which Hex's
        ``swap`` is one of)."""
        if game not in self._move_tokens:
            from ... import mav
            tok = self.tokenizer
            self._move_tokens[game] = sorted({int(enc[0]) for enc in map(tok.encode, mav.move_tokens(game))
                                              if len(enc)})
        return self._move_tokens[game]

    def generate(self, prompts: Sequence[str], max_new_tokens: int = 0, batch_size: int = 64,
                 decoding: Optional[str] = None) -> List[MAVOutput]:
        """Outputs for MAV prompts (header + input lines), in batches of ``batch_size``.

        ``decoding`` (default: the model's ``decoding`` attribute, ``"grouped"``): ``"greedy"`` is plain
        greedy decoding; ``"grouped"`` is greedy with the game's move tokens grouped (:func:`grouped_argmax`):
        a model trained on shuffled move lists spreads the probability of "a move comes next" over every
        move it could list next, so plain greedy lets a single other token (``invalid``, the outcome marker
        of a finished game, or ``]``) win with as little as 1/8 of the probability against seven moves.
        Grouping compares "some move" with each alternative as the MAV format means it.

        ``max_new_tokens``: an integer >= 0 (0: as many as the model's ``max_seq_len`` leaves); ``batch_size``: an
        integer >= 1. Anything else raises (TypeError / ValueError naming the parameter and the value).
        """
        if isinstance(prompts, (str, bytes)):
            raise TypeError("MAVModel.generate takes a list of prompts, not a single "
                            f"{type(prompts).__name__} (wrap it: generate([prompt]))")
        decoding = decoding or self.decoding
        if decoding not in ("greedy", "grouped"):
            raise ValueError(f"decoding must be 'greedy' or 'grouped', not {decoding!r}")
        batch_size = _size_arg("batch_size", batch_size, 1)
        max_new_tokens = _size_arg("max_new_tokens", max_new_tokens, 0)   # 0: up to the model's max_seq_len
        outs: List[MAVOutput] = []
        tok = self.tokenizer
        bucket_ids = tok.bucket_ids.tolist()
        for s in range(0, len(prompts), batch_size):
            chunk = [self.encode_prompt(p) for p in prompts[s:s + batch_size]]
            group = self.group_ids(prompts[s:s + batch_size]) if decoding == "grouped" else None
            longest = max(len(c) for c in chunk)
            budget = max_new_tokens or (self.cfg.max_seq_len - longest)
            budget = min(budget, self.cfg.max_seq_len - longest)
            if budget <= 0:
                raise ValueError(f"a prompt of {longest} tokens leaves no room in max_seq_len {self.cfg.max_seq_len}")
            gens = generate_ids(self.backend, chunk, budget, stop_ids=[tok.eos_id], pad_id=tok.pad_id,
                                bucket_ids=bucket_ids, group_ids=group)
            outs += [self.output(g.ids[:-1] if g.finished else g.ids, g.finished, g.value_steps, g.value_probs)
                     for g in gens]
        return outs

    def group_ids(self, prompts: Sequence[str]) -> List[int]:
        """The move tokens grouped by ``"grouped"`` decoding for these prompts (their games' move tokens)."""
        games = {self.game or game_of_prompt(p) for p in prompts}
        return sorted({t for g in games for t in self.move_tokens(g)})

    def output(self, ids: Sequence[int], finished: bool, value_steps: Sequence[int], value_probs: np.ndarray
               ) -> MAVOutput:
        """The MAVOutput of generated ``ids`` (without the end token): its text and value entries, from the
        bucket distributions ``value_probs`` kept at the positions ``value_steps`` of ``ids``."""
        entries = value_entries(self.tokenizer, ids, value_steps, value_probs, self._tok_ids)
        dists: Dict[str, np.ndarray] = {}
        for _at, move, p in entries:
            dists.setdefault(move, p)
        return MAVOutput(self.tokenizer.decode(ids), list(ids), finished, dists, entries)

    def analyse(self, states: Sequence[Any], commands: str = "%state %top_all %best_action",
                batch_size: int = 64) -> List[Tuple[Any, MAVOutput]]:
        """Prompt the model with each state; returns (mavgame.mav.ParseResult, MAVOutput) pairs."""
        from ... import mav
        prompts = [mav.prompt(s, commands) for s in states]
        outs = self.generate(prompts, batch_size=batch_size)
        return [(mav.parse(s.game, p + o.text, true_state=s), o) for s, p, o in zip(states, prompts, outs)]


def _top_tok_ids(tok) -> Tuple[int, ...]:
    """The token ids the C reader of value entries needs (mg_mav_tok_ids)."""
    return (tok.token_to_id(":"), tok.token_to_id(" "), tok.token_to_id("["), tok.token_to_id("]"),
            tok.token_to_id("\n"), tok.token_to_id("%top_all"), tok.token_to_id("%top_"), int(tok.bucket_ids[0]),
            len(tok.bucket_ids))


def value_entries(tokenizer, ids: Sequence[int], value_steps: Sequence[int], value_probs: np.ndarray,
                  tok_ids: Optional[Tuple[int, ...]] = None) -> List[Tuple[int, str, np.ndarray]]:
    """(index of the move token, move, bucket distribution) of every well-formed ``move:<ctrlN>`` entry of
    the %top lines in ``ids``, in order, as mavgame.mav.parse reads them: `` move:<ctrlN>`` followed by a
    space, ``]`` or the end of the output, on a line that starts with ``[%top_all`` or ``[%top_k`` (the C
    reader csrc/format/mav_tokens.c, shared with the native MCTS evaluator). ``value_steps``: the indices in
    ``ids`` of the generated bucket tokens, ``value_probs`` their distributions (rows); steps past ``ids`` are
    ignored."""
    from ... import _core
    ids = list(ids)
    keep = [k for k, s in enumerate(value_steps) if s < len(ids)]
    if not keep:
        return []
    steps = [value_steps[k] for k in keep]
    moves = _core.mav_value_moves(ids, steps, tok_ids or _top_tok_ids(tokenizer)).tolist()
    return [(at, tokenizer.decode([ids[at]]), value_probs[keep[j]]) for j, at in enumerate(moves) if at >= 0]


def game_of_prompt(prompt: str) -> str:
    """The game named in a MAV prompt's header (``<mav game=NAME> ...``; a search-trace prompt's preamble
    line before it is skipped), read by the core's MAV parser (ValueError naming the problem if the
    header names no known game)."""
    from ... import _core
    lines = prompt.split("\n", 3)[:3]
    head = next((ln for ln in lines if ln.startswith("<mav")), lines[0])
    return _core.mav_header_game(head)


__all__ = ["MAVModel", "MAVOutput", "value_entries", "game_of_prompt"]

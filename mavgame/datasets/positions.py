"""Position generation: epsilon-greedy games played and annotated by the game's engine, written to a
position store, resumable, the same for any number of worker processes.

The worker functions (``_gen_init``, ``_gen_games``, and :mod:`mavgame.datasets.pgn`'s ``_pgn_job``) are
module-level so that spawn and forkserver workers can import them.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ..annotators import DEFAULT_ANNOTATOR_OPTIONS, make_annotator
from .records import MANIFEST, _new_state
from .._atomic import write_json_atomic
from .store import PositionWriter


def play_annotated_game(game: str, annotate, rng: np.random.Generator, epsilon: float, max_plies: int = 0,
                        board_size: int = 0, cache: Optional[Dict[str, Any]] = None, random_opening: int = 0,
                        persistent: Optional[Dict[str, Any]] = None):
    """One epsilon-greedy game: every position annotated; greedy moves are drawn uniformly among the moves
    of maximal value, a uniformly random legal move with probability epsilon. The first ``random_opening``
    plies are random moves, neither annotated nor recorded. Returns the records from there on, terminal
    position included (unless the game ended by a rule its text does not show, a threefold repetition),
    with ``{"skipped": True, "ply": n}`` for positions the annotator gave up on
    (``annotate`` returned None; a random move is played there).

    Each annotated record carries ``"_seconds"`` (the annotation's time, 0 when a cache answered it) for the
    caller to take off.  ``persistent`` ({state text: [values, best, seconds]}, e.g. an
    :class:`AnnotationCache`) answers the positions that ``annotate.cacheable(state)`` marks (annotations
    that depend on the position alone); a fresh one of those is added to it (an AnnotationCache writes it
    to its file at once) and its record carries ``"_new_cache": [values, best, seconds]``."""
    import time
    cacheable = getattr(annotate, "cacheable", None)
    st = _new_state(game, board_size)
    recs: List[Optional[Dict[str, Any]]] = []
    prev: Optional[Tuple[str, str]] = None
    while st.ply < random_opening and not st.is_terminal():
        moves = list(st.legal_moves)
        mv = moves[int(rng.integers(len(moves)))]
        prev = (st.text(), mv)
        st.push(mv)
    while True:
        text = st.text()
        rec: Dict[str, Any] = {"state": text, "prev_state": prev[0] if prev else None,
                               "prev_action": prev[1] if prev else None, "ply": st.ply}
        if st.is_terminal() or (max_plies and st.ply >= max_plies):
            # A game ended by its history (threefold repetition in chess or Gardner) is not recorded
            # as finished: its text alone shows an ongoing position, which a MAV example cannot call
            # finished (and the example builder refuses a non-terminal state with no annotation).
            if st.is_terminal() and _new_state(game, board_size, text).is_terminal():
                rec.update(values={}, best=None, result=st.result())
                recs.append(rec)
            break
        seconds, new_entry = 0.0, None
        keep = persistent is not None and cacheable is not None and cacheable(st)
        if keep and text in persistent:
            values, best, _ = persistent[text]
            ann = (values, best)
        elif cache is not None and text in cache:
            ann = cache[text]
        else:
            t0 = time.perf_counter()
            ann = annotate(st)
            seconds = time.perf_counter() - t0
            if cache is not None:
                cache[text] = ann
            if keep and ann is not None:
                new_entry = [ann[0], ann[1], round(seconds, 4)]
                if isinstance(persistent, AnnotationCache):
                    persistent.record(text, new_entry)
                else:
                    persistent[text] = new_entry
        moves = list(st.legal_moves)
        if ann is None:  # the engine could not annotate it within its budget: left out, random move
            recs.append({"skipped": True, "ply": st.ply})
            mv = moves[int(rng.integers(len(moves)))]
            prev = (text, mv)
            st.push(mv)
            continue
        values, best = ann
        rec.update(values=values, best=best, result="*", _seconds=seconds)
        if new_entry is not None:
            rec["_new_cache"] = new_entry
        recs.append(rec)
        if rng.random() < epsilon:
            mv = moves[int(rng.integers(len(moves)))]
        else:
            top = max(values.values())
            greedy = sorted(m for m, v in values.items() if v >= top - 1e-12)
            mv = greedy[int(rng.integers(len(greedy)))]
        prev = (text, mv)
        st.push(mv)
    return recs


class AnnotationCache(dict):
    """{state text: [values, best, seconds]}, backed by an append-only JSON-lines file (``CACHE`` in the
    data directory; :func:`load_annotation_cache` reads it): :meth:`record` writes and flushes each new
    entry at once, so a run killed in the middle of a chunk of games keeps every solve it finished.
    Several worker processes may append to the same file (one short line a write); a position two of them
    solved is read once."""

    def __init__(self, path=None, entries: Optional[Dict[str, list]] = None):
        super().__init__(entries or {})
        self.path = None if path is None else str(path)
        self._file = None

    def record(self, text: str, entry: list) -> None:
        self[text] = entry
        if self.path is None:
            return
        if self._file is None:
            self._file = open(self.path, "a", encoding="utf-8")
        self._file.write(json.dumps({"state": text, "values": entry[0], "best": entry[1], "seconds": entry[2]},
                                    sort_keys=True) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __reduce__(self):  # to a worker process: the entries and the path, never the open file
        return (AnnotationCache, (self.path, dict(self)))


_WORKER: Dict[str, Any] = {}


def _gen_init(game, options, in_pool=False, persistent=None):
    ann = make_annotator(game, options)
    _WORKER["annotate"] = ann
    _WORKER["cache"] = {}
    # the annotations that depend on the position alone (annotate.cacheable): kept across chunks, seeded
    # with the data directory's annotation cache
    _WORKER["persistent"] = persistent if persistent is not None else {}
    if in_pool and hasattr(ann, "close"):
        from ..workers import close_at_exit
        close_at_exit(ann)


def _gen_games(job):
    game, seed, first, count, epsilon, max_plies, board_size, random_opening = job
    # Each chunk of games starts from a fresh engine state and cache, so that budgeted annotations (which
    # depend on what the engine's tables hold) do not depend on which worker ran which chunk before.
    ann = _WORKER["annotate"]
    if hasattr(ann, "reset"):
        ann.reset()
    _WORKER["cache"].clear()
    out = []
    for i in range(first, first + count):
        rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, 0x67616D65, i])
        out.append(play_annotated_game(game, _WORKER["annotate"], rng, epsilon, max_plies, board_size,
                                       _WORKER["cache"], random_opening, _WORKER.get("persistent")))
    return out


def _gen_close() -> None:
    """Close the worker's annotator (a Ray actor's end)."""
    ann = _WORKER.pop("annotate", None)
    if hasattr(ann, "close"):
        ann.close()


def _gen_init_remote(game: str, options: Dict[str, Any], entries: Dict[str, list]) -> None:
    """``_gen_init`` in a Ray actor: the cache's entries without its file (the driver writes the actors'
    new solves to it, from the records' ``_new_cache``; the actors may run on other machines)."""
    _gen_init(game, options, False, AnnotationCache(None, entries))


def _run_jobs(game: str, opts, jobs, workers: int, job_fn, consume, persistent=None, executor=None) -> None:
    """Run job_fn over jobs, in this process (workers <= 1) or a pool of annotating workers, passing
    each job's result to consume() in job order (so the output does not depend on the worker count).
    A caller resuming an interrupted run passes only the jobs still to do; with none, no engine starts.
    ``persistent`` seeds the workers' cache of position-only annotations (``play_annotated_game``).
    ``executor`` (an object with :class:`mavgame.distributed_ray.RayJobs`'s ``put`` and ``map``) runs the
    jobs on its actors instead, ``workers`` aside; their new solves are not written to ``persistent``'s file
    there, the caller records them."""
    jobs = list(jobs)
    if not jobs:
        return
    if executor is not None:
        entries = executor.put(dict(persistent or {}))   # sent once, to every actor
        for res in executor.map(_gen_init_remote, (game, opts, entries), job_fn, jobs, close=_gen_close):
            consume(res)
        return
    workers = min(int(workers), len(jobs))   # never more processes than jobs (--gen-workers 1000000)
    if workers <= 1:
        _gen_init(game, opts, False, persistent)
        try:
            for job in jobs:
                consume(job_fn(job))
        finally:
            _gen_close()
        return
    from ..workers import pool as worker_pool
    pool = worker_pool(workers, _gen_init, (game, opts, True, persistent))
    try:
        for res in pool.imap(job_fn, jobs):
            consume(res)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()


def _executor(executor: Any, ray_address: Optional[str], workers: int) -> Any:
    """The Ray job runner that ``generate_positions``' ``executor`` names (None: this machine's processes)."""
    from ..distributed_ray import job_runner
    return job_runner(executor, ray_address, local=(None, "process"), num_workers=workers if workers > 1 else None)


PROGRESS = "progress.json"
PROGRESS_FORMAT = "mavgame-generation-progress-1"
CACHE = "annotation_cache.jsonl"
TIMING = "timing.json"


def load_annotation_cache(path) -> Dict[str, list]:
    """{state text: [values, best, seconds]} from an annotation cache file (JSON lines of state, values,
    best, seconds: the annotations that depend on the position alone, with the time each took).  A torn
    last line (a run killed mid-write) is cut off the file; a damaged line elsewhere is a ValueError."""
    path = Path(path)
    out: Dict[str, list] = {}
    if not path.exists():
        return out
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with open(path, "r+b") as f:
            f.truncate(end)
    for i, line in enumerate(data[:end].decode("utf-8").splitlines()):
        try:
            e = json.loads(line)
            out[e["state"]] = [e["values"], e["best"], float(e["seconds"])]
        except (json.JSONDecodeError, KeyError, TypeError) as err:
            raise ValueError(f"{path}, line {i + 1}: not an annotation cache entry ({err}); remove the file "
                             "to solve those positions again") from None
    return out


def _load_progress(root: Path, signature: Dict[str, Any], n_games: int, chunk: int) -> Optional[Dict[str, Any]]:
    """The progress record of an interrupted generation into ``root`` (None: none), checked against this
    call's arguments."""
    path = root / PROGRESS
    if not path.exists():
        return None
    try:
        prog = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: invalid JSON: {e} (remove {root} to start over)") from None
    if not isinstance(prog, dict) or prog.get("format") != PROGRESS_FORMAT:
        raise ValueError(f"{path}: not a mavgame generation progress record (remove {root} to start over)")
    theirs = prog.get("signature", {})
    ours = json.loads(json.dumps(signature))
    diff = [f"{k} {theirs.get(k)!r} there, {ours.get(k)!r} here" for k in sorted(set(ours) | set(theirs))
            if theirs.get(k) != ours.get(k)]
    if diff:
        raise ValueError(f"{root} holds an interrupted generation with other arguments ({'; '.join(diff)}): "
                         f"rerun with its arguments to resume it, or remove {root} to start over")
    done = int(prog["games_done"])
    if done > n_games or (done % chunk and done != n_games):
        raise ValueError(f"{root} holds an interrupted generation with {done} games done, which a run of "
                         f"{n_games} games cannot continue (rerun with its --games, or remove {root})")
    return prog


def generate_positions(game: str, out, n_games: int, seed: int = 0, epsilon: float = 0.2, workers: int = 1,
                       val_fraction: float = 0.02, shard_size: int = 100_000, max_plies: int = 0,
                       board_size: int = 0, random_opening: int = 0, annotator_options: Optional[Dict] = None,
                       progress: bool = True, chunk: int = 16, executor: Any = None,
                       ray_address: Optional[str] = None) -> Dict[str, Any]:
    """Play ``n_games`` epsilon-greedy games with the game's annotating engine, keep every distinct position
    once (its first occurrence in game order), and write them to ``out/train`` and ``out/val`` (split by
    position). Deterministic for a seed and chunk size whatever the number of workers (with a node budget,
    not a time budget, for budgeted annotators). Returns the data statistics (also stored in both
    manifests).

    Resumable: after each chunk of games the shards are flushed and ``out/progress.json`` records the
    arguments, the games done, the shards' record counts and the statistics; calling again with the same
    arguments after an interruption continues from there (ValueError if they differ), and the result is
    the same, byte for byte, as an uninterrupted run's (but for the ``seconds`` statistic, which adds up the
    runs). The progress file is removed once the manifests are written.

    ``executor="ray"`` plays the chunks on Ray actors (``pip install ray``; ``workers`` > 1 of them, else one
    per CPU of the cluster; ``ray_address`` for ``ray.init``, e.g. "auto"), or pass a
    :class:`mavgame.distributed_ray.RayJobs`: the same bytes as on one machine, and the same resume (this
    process writes the store, the progress record and the annotation cache; docs/cluster.md)."""
    import time
    if n_games <= 0:
        raise ValueError(f"n_games must be positive, got {n_games}")
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1], got {epsilon}")
    if chunk <= 0:
        raise ValueError(f"chunk must be positive, got {chunk}")
    opts = dict(annotator_options or DEFAULT_ANNOTATOR_OPTIONS.get(game, {}))
    remote = _executor(executor, ray_address, int(workers))
    root = Path(out)
    signature = {"game": game, "seed": seed, "epsilon": epsilon, "random_opening": random_opening,
                 "max_plies": max_plies, "board_size": board_size, "annotator_options": opts,
                 "val_fraction": val_fraction, "shard_size": shard_size, "chunk": chunk}
    prog = _load_progress(root, signature, n_games, chunk)
    jobs = [(game, seed, s, min(chunk, n_games - s), epsilon, max_plies, board_size, random_opening)
            for s in range(0, n_games, chunk)]
    seen = set()
    stats: Dict[str, Any] = {"game": game, "games": n_games, "seed": seed, "epsilon": epsilon,
                             "random_opening": random_opening, "max_plies": max_plies,
                             "annotator": opts, "positions_seen": 0, "results": {},
                             "unique_by_ply": {}, "unannotated_by_ply": {}, "terminal": 0, "moves_annotated": 0,
                             "value_histogram": [0] * 8}
    done, lengths, seconds_before = 0, 0, 0.0
    if prog is not None:
        # manifests beside a progress record are from a finish that was cut short: it is done again
        for split in ("train", "val"):
            (root / split / MANIFEST).unlink(missing_ok=True)
        done, lengths = int(prog["games_done"]), int(prog["lengths"])
        seconds_before = float(prog.get("seconds", 0.0))
        stats = dict(prog["stats"], games=n_games)
    t0 = time.perf_counter()
    writer = PositionWriter(out, game, shard_size=shard_size, val_fraction=val_fraction,
                            resume=prog["shards"] if prog is not None else None)
    # annotations that depend on the position alone (annotate.cacheable), kept across runs, and the
    # annotation time per ply (count, from the cache, seconds, slowest); neither is part of the set
    persistent = AnnotationCache(root / CACHE, load_annotation_cache(root / CACHE))
    cached = set(persistent)
    timing: Dict[str, Any] = {"by_ply": {}}
    if (root / TIMING).exists():
        timing = json.loads((root / TIMING).read_text(encoding="utf-8"))
    seen.update(writer.states())
    counts = {split: sum(c) for split, c in writer.shard_counts().items()}
    bar = None
    if progress:
        from .._progress import tqdm
        bar = tqdm(total=n_games, initial=done, desc=f"{game} games", unit="game", dynamic_ncols=True)

    def save_progress():
        writer.flush()
        timing["cache_entries"] = len(cached)
        write_json_atomic(root / TIMING, timing)
        write_json_atomic(root / PROGRESS, {
            "format": PROGRESS_FORMAT, "signature": signature, "games_done": done, "lengths": lengths,
            "shards": writer.shard_counts(), "stats": stats,
            "seconds": round(seconds_before + time.perf_counter() - t0, 1)})

    def consume(games):
        nonlocal lengths, done
        for recs in games:
            res = recs[-1].get("result", "*")
            stats["results"][res] = stats["results"].get(res, 0) + 1
            lengths += len(recs) - (1 if res != "*" else 0)
            for r in recs:
                stats["positions_seen"] += 1
                if "_seconds" in r:
                    secs = r.pop("_seconds")
                    entry = r.pop("_new_cache", None)
                    t = timing["by_ply"].setdefault(str(r["ply"]), [0, 0, 0.0, 0.0])
                    t[0] += 1
                    t[1] += secs == 0.0
                    t[2] = round(t[2] + secs, 6)
                    t[3] = max(t[3], round(secs, 6))
                    if entry is not None:   # the worker wrote it to the cache file (a Ray actor: we do)
                        if remote is not None and r["state"] not in persistent:
                            persistent.record(r["state"], entry)
                        cached.add(r["state"])
                if r.get("skipped"):
                    ply = str(r["ply"])
                    stats["unannotated_by_ply"][ply] = stats["unannotated_by_ply"].get(ply, 0) + 1
                    continue
                key = r["state"]
                if key in seen:
                    continue
                seen.add(key)
                ply = str(r["ply"])
                stats["unique_by_ply"][ply] = stats["unique_by_ply"].get(ply, 0) + 1
                if not r["values"]:
                    stats["terminal"] += 1
                for v in r["values"].values():
                    stats["value_histogram"][min(7, int(v * 8))] += 1
                stats["moves_annotated"] += len(r["values"])
                counts[writer.add(r)] += 1
            if bar is not None:
                bar.update(1)
        done += len(games)
        save_progress()

    try:
        _run_jobs(game, opts, jobs[done // chunk:] if done < n_games else [], workers, _gen_games, consume,
                  persistent, remote)
    finally:
        if bar is not None:
            bar.close()
        persistent.close()
    stats["positions_unique"] = len(seen)
    stats["train"], stats["val"] = counts["train"], counts["val"]
    stats["recorded_plies_per_game"] = lengths / n_games
    stats["seconds"] = round(seconds_before + time.perf_counter() - t0, 1)
    writer.info = {"stats": stats}
    writer.close()
    (root / PROGRESS).unlink(missing_ok=True)
    return stats


__all__ = ["play_annotated_game", "generate_positions", "load_annotation_cache", "AnnotationCache", "PROGRESS",
           "PROGRESS_FORMAT", "CACHE", "TIMING"]

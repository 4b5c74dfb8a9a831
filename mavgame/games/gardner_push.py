"""A resumable push of the Gardner oracle proofs: the open ``#x`` leaves with growing budgets, the
drawn leaves to deeper horizons (docs/gardner.md, "Pushing the proofs").

    >>> from mavgame.games.gardner_push import Schedule, push, load_state, report_text
    >>> state = push("push.json", Schedule(mate_nodes=200_000, rounds=1), budget_seconds=60)
    >>> print(report_text(state))

The work is a sequence of rounds r = 0, 1, ...; in round r

- every drawn or hopeless leaf (``=``, ``+-``, ``-+``) gets one exhaustive (alpha-beta) query "the
  protected side cannot lose within ``max_draw_plies`` plies" with ``draw_nodes * growth**r`` nodes;
  iterative deepening searches 1, 2, ... plies, and the horizon reached is the depth searched
  completely without a mate for the other side (``depth_done``; the bound itself when proven, and a
  leaf whose protected side is mated within the bound is *refuted*, the end of that leaf);
- every ``#x`` leaf not yet decided gets "the side mates in at most x moves" by proof-number search
  with ``mate_nodes * growth**r`` nodes; a refuted leaf is then retried with the bounds x+1 .. x +
  ``retry_moves`` (the bound that holds instead, as :func:`~mavgame.games.gardner_oracle.check` does).

Each query starts from a cleared table, so its result depends only on the position, the claim and
the budget: a rerun gives the same answers.  After every query the state file is rewritten
atomically (a temporary file, fsync, rename), so a kill loses at most the query under way and a rerun
continues there; a query already in the state is never run again.  A query cut short by the wall
clock (``budget_seconds``) is not recorded (its answer would depend on the machine's speed).
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from .gardner_oracle import OracleLine, load_oracles, replay

__all__ = ["Schedule", "Leaf", "oracle_leaves", "load_state", "save_state", "push", "report", "report_text",
           "STATE_VERSION"]

STATE_VERSION = 1


@dataclass(frozen=True)
class Schedule:
    """The budgets of a push (fixed when its state file is created).

    ``mate_nodes``: proof-number nodes per ``#x`` leaf in round 0; ``draw_nodes``: alpha-beta nodes
    per drawn leaf in round 0; both are multiplied by ``growth`` each round, for ``rounds`` rounds;
    ``max_draw_plies``: the deepest horizon asked of a drawn leaf; ``retry_moves``: bounds tried
    above a refuted ``#x``; ``tt_log2``: the provers' tables (2^N entries)."""

    mate_nodes: int = 10_000_000
    draw_nodes: int = 2_000_000
    growth: int = 4
    rounds: int = 6
    max_draw_plies: int = 40
    retry_moves: int = 3
    tt_log2: int = 23

    def __post_init__(self) -> None:
        for f, lo, hi in (("mate_nodes", 1, 10 ** 13), ("draw_nodes", 1, 10 ** 13), ("growth", 1, 1000),
                          ("rounds", 1, 40), ("max_draw_plies", 1, 120), ("retry_moves", 0, 20),
                          ("tt_log2", 10, 30)):
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise ValueError(f"Schedule.{f} must be an integer in {lo}..{hi}, not {v!r}")

    def mate_budget(self, r: int) -> int:
        return self.mate_nodes * self.growth ** r

    def draw_budget(self, r: int) -> int:
        return self.draw_nodes * self.growth ** r


@dataclass(frozen=True)
class Leaf:
    """One leaf of the transcribed oracles: ``key`` (oracle and moves, the state file's key), the
    paper's ``label``, the verdict ``leaf`` (``#x w`` ...), the position's ``fen``; for ``#x``
    ``mate_side`` and ``x``, for the others the ``protect``-ed side; ``plies_needed`` (``#x``: the
    plies from the leaf to the mating move at the paper's bound)."""

    key: str
    oracle: str
    label: str
    leaf: str
    fen: str
    mate_side: Optional[str] = None
    x: Optional[int] = None
    protect: Optional[str] = None
    plies_needed: Optional[int] = None

    @property
    def is_mate(self) -> bool:
        return self.x is not None


def oracle_leaves(lines: Sequence[OracleLine]) -> List[Leaf]:
    """The distinct leaves of the lines that replay legally (one per oracle and position of the tree,
    labelled by the first line that reaches it, with the last line's verdict, as
    :func:`~mavgame.games.gardner_oracle.check` has them), in file order."""
    from .gardner import Gardner
    seen: Dict[str, Leaf] = {}
    for ln in lines:
        if not ln.leaf:
            continue
        r = replay(ln)
        if not r.ok:
            continue
        key = f"{ln.side}: {' '.join(r.moves)}"
        label = seen[key].label if key in seen else ln.label
        b = Gardner()
        for m in r.moves:
            b.push(m)
        if ln.leaf.startswith("#"):
            xs, who = ln.leaf[1:].split()
            x = int(xs)
            plies = 2 * x - (1 if (b.to_move == 0) == (who == "w") else 0)
            seen[key] = Leaf(key, ln.side, label, ln.leaf, b.fen(), mate_side="white" if who == "w" else "black",
                             x=x, plies_needed=plies)
        else:
            protect = "white" if ln.leaf == "+-" else "black" if ln.leaf == "-+" else ln.side
            seen[key] = Leaf(key, ln.side, label, ln.leaf, b.fen(), protect=protect)
    return list(seen.values())


# ---------------------------------------------------------------------------------------------
# the state file


def _new_state(schedule: Schedule, oracles: Optional[str]) -> dict:
    return {"version": STATE_VERSION, "schedule": asdict(schedule), "oracles": oracles, "runs": 0, "leaves": {}}


def load_state(path) -> Optional[dict]:
    """The state in ``path`` (None when the file does not exist); ValueError naming the file when it is
    not a push state."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        with open(path, encoding="utf-8") as f:
            state = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"state file {path}: not JSON ({e})") from None
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION or "leaves" not in state:
        raise ValueError(f"state file {path}: not a gardner-push state of version {STATE_VERSION}")
    return state


def save_state(path, state: dict) -> None:
    """Writes ``state`` to ``path`` atomically (a temporary file in the same folder, fsync, rename)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(state, f, indent=1, sort_keys=True)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _schedule_of(state: dict) -> Schedule:
    known = {f.name for f in fields(Schedule)}
    return Schedule(**{k: v for k, v in state["schedule"].items() if k in known})


def _find(attempts: List[dict], kind: str, bound: int, budget: int) -> Optional[dict]:
    for a in attempts:
        if a["kind"] == kind and a["bound"] == bound and a["budget"] == budget:
            return a
    return None


def _status(entry: dict) -> dict:
    """A leaf's standing from its attempts: ``status`` and, for drawn leaves, ``horizon``."""
    att = entry["attempts"]
    if entry["x"] is not None:
        main = [a for a in att if a["kind"] == "mate" and a["bound"] == entry["x"]]
        decided = [a for a in main if a["status"] != "unknown"]
        out = {"status": decided[0]["status"] if decided else "unknown",
               "budget": max((a["budget"] for a in main), default=0)}
        if decided and decided[0]["status"] == "proven":
            out["mate_plies"] = decided[0]["mate_plies"]
        held = [a for a in att if a["kind"] == "mate" and a["bound"] > entry["x"] and a["status"] == "proven"]
        if held:
            best = min(held, key=lambda a: a["bound"])
            out["holds_with"], out["holds_with_plies"] = best["bound"], best["mate_plies"]
        return out
    lost = [a for a in att if a["status"] == "refuted"]
    horizon = max([a["bound"] if a["status"] == "proven" else a["depth_done"] for a in att] + [-1])
    if lost:
        return {"status": "refuted", "horizon": horizon, "lost_within": min(a["mate_plies"] for a in lost)}
    return {"status": "proven" if horizon >= 0 else "unknown", "horizon": horizon,
            "budget": max((a["budget"] for a in att), default=0)}


# ---------------------------------------------------------------------------------------------
# the push


class _Clock:
    def __init__(self, budget_seconds: float):
        self.t0 = time.monotonic()
        self.budget = budget_seconds

    def left(self) -> float:
        """Seconds left (inf without a budget)."""
        return float("inf") if self.budget <= 0 else self.budget - (time.monotonic() - self.t0)


def _tasks(state: dict, sched: Schedule, r: int) -> List[tuple]:
    """The queries of round ``r`` not yet in the state, known before running any: (key, kind, bound).
    (The retries above a refuted ``#x`` are decided as they come, inside :func:`push`.)"""
    out = []
    leaves = state["leaves"]
    for key, e in leaves.items():   # drawn leaves first: few and cheap
        if e["x"] is None and _status(e)["status"] != "refuted" and \
                _find(e["attempts"], "noloss", sched.max_draw_plies, sched.draw_budget(r)) is None and \
                _status(e)["horizon"] < sched.max_draw_plies:
            out.append((key, "noloss", sched.max_draw_plies))
    mates = [(e["plies_needed"], key) for key, e in leaves.items() if e["x"] is not None]
    for _, key in sorted(mates):    # the shortest mates first
        e = leaves[key]
        st = _status(e)
        if st["status"] == "unknown" and _find(e["attempts"], "mate", e["x"], sched.mate_budget(r)) is None:
            out.append((key, "mate", e["x"]))
        elif st["status"] == "refuted" and "holds_with" not in st and sched.retry_moves > 0:
            out.append((key, "retry", e["x"]))
    return out


def push(state_path, schedule: Optional[Schedule] = None, *, oracles=None, budget_seconds: float = 0.0,
         max_queries: int = 0, progress: bool = False, log: Optional[Callable[[str], None]] = None) -> dict:
    """Runs (or continues) the push whose state is in ``state_path`` and returns the state.

    ``schedule``: the budgets of a new state (None: the defaults); for an existing state it must be
    None or the state's own (ValueError naming the differences).  ``oracles``: the oracle file (None:
    the shipped transcription; a new state records it, an existing one must match).
    ``budget_seconds``: wall-clock budget of this run (0: none); ``max_queries``: stop after this many
    new queries (0: no limit).  ``log`` gets one line per finished query."""
    from .gardner_prover import Prover
    from .. import _core
    if isinstance(max_queries, bool) or not isinstance(max_queries, int) or max_queries < 0:
        raise ValueError(f"max_queries must be an integer >= 0 (0: no limit), not {max_queries!r}")
    if not isinstance(budget_seconds, (int, float)) or budget_seconds < 0:
        raise ValueError(f"budget_seconds must be >= 0 (0: no limit), not {budget_seconds!r}")
    oracles = None if oracles is None else str(oracles)
    state = load_state(state_path)
    if state is None:
        state = _new_state(schedule or Schedule(), oracles)
    else:
        have = _schedule_of(state)
        if schedule is not None and schedule != have:
            diff = ", ".join(f"{k}: {v} in the state, {getattr(schedule, k)} asked"
                             for k, v in asdict(have).items() if getattr(schedule, k) != v)
            raise ValueError(f"state file {state_path} was started with another schedule ({diff}); "
                             "use a new state file or the state's own budgets")
        if state.get("oracles") != oracles:
            raise ValueError(f"state file {state_path} was started with oracles {state.get('oracles')!r}, "
                             f"not {oracles!r}")
    sched = _schedule_of(state)
    for lf in oracle_leaves(load_oracles(oracles)):
        e = state["leaves"].get(lf.key)
        if e is None:
            state["leaves"][lf.key] = {**asdict(lf), "attempts": []}
        elif e["fen"] != lf.fen or e["leaf"] != lf.leaf:
            raise ValueError(f"state file {state_path}: leaf {lf.key!r} is {e['leaf']} at {e['fen']} there but "
                             f"{lf.leaf} at {lf.fen} in the oracles")
    state["runs"] = state.get("runs", 0) + 1
    run = state["runs"]
    save_state(state_path, state)
    clock = _Clock(float(budget_seconds))
    mater = Prover(sched.tt_log2, method="pns")
    drawer = Prover(sched.tt_log2)
    done = 0

    def query(e: dict, kind: str, bound: int, budget: int) -> Optional[dict]:
        nonlocal done
        left = clock.left()
        if left <= 0 or (max_queries and done >= max_queries):
            return None
        board = _core.State("gardner", e["fen"])
        p = drawer if kind == "noloss" else mater
        p.clear()
        secs = 0.0 if left == float("inf") else max(left, 1e-3)
        if kind == "noloss":
            res = p.cannot_lose(board, bound, side=e["protect"], max_nodes=budget, max_seconds=secs)
        else:
            res = p.mates_in(board, bound, side=e["mate_side"], max_nodes=budget, max_seconds=secs)
        if res.stop not in ("done", "node limit"):
            return None   # cut by the wall clock: not a result of the budget
        a = {"kind": "noloss" if kind == "noloss" else "mate", "bound": bound, "budget": budget,
             "status": res.status.value, "mate_plies": res.mate_plies, "depth_done": res.depth_done,
             "nodes": res.nodes, "seconds": round(res.seconds, 3), "run": run,
             "line": res.line if res.mate_plies is not None else []}
        e["attempts"].append(a)
        save_state(state_path, state)
        done += 1
        if log:
            log(f"{e['label']} ({e['oracle']}) {res.claim} [{budget} nodes]: {res.status.value}"
                + (f" (depth {res.mate_plies})" if res.mate_plies is not None else "")
                + (f", horizon {res.depth_done}" if kind == "noloss" and res.unknown else ""))
        return a

    stopped = False
    for r in range(sched.rounds):
        tasks = _tasks(state, sched, r)
        if not tasks:
            continue
        bar = None
        if progress:
            from .._progress import tqdm
            bar = tqdm(total=len(tasks), desc=f"round {r} ({sched.mate_budget(r):,} / {sched.draw_budget(r):,} nodes)",
                       unit="leaf")
        for key, kind, bound in tasks:
            e = state["leaves"][key]
            if kind == "noloss":
                a = query(e, "noloss", bound, sched.draw_budget(r))
                stopped = a is None
            elif kind == "mate":
                a = query(e, "mate", bound, sched.mate_budget(r))
                stopped = a is None
                if a is not None and a["status"] == "refuted":
                    kind = "retry"
            if kind == "retry" and not stopped:
                for y in range(e["x"] + 1, min(e["x"] + sched.retry_moves, 60) + 1):
                    a = next((b for b in e["attempts"] if b["kind"] == "mate" and b["bound"] == y and
                              b["status"] == "refuted"), None)   # refuted at any budget: refuted
                    a = a or _find(e["attempts"], "mate", y, sched.mate_budget(r)) or \
                        query(e, "mate", y, sched.mate_budget(r))
                    if a is None:
                        stopped = True
                    if a is None or a["status"] != "refuted":
                        break
            if bar:
                bar.update(1)
            if stopped:
                break
        if bar:
            bar.close()
        if stopped:
            break
    for e in state["leaves"].values():
        e.update(_status(e))
    save_state(state_path, state)
    return state


# ---------------------------------------------------------------------------------------------
# the report


def report(state: dict) -> dict:
    """Counts of a push state: ``mate`` (status -> count; the least and largest budget an unknown leaf
    was tried with, 0 for ``mate_untried`` leaves not tried yet; the refuted leaves' bounds that hold), ``draw`` (status -> count, the horizon reached: least and greatest over the
    leaves, leaves per horizon), the queries, nodes and seconds spent."""
    mate: Dict[str, int] = {}
    draw: Dict[str, int] = {}
    horizons: Dict[int, int] = {}
    holds, budgets, queries, nodes, secs = [], [], 0, 0, 0.0
    for e in state["leaves"].values():
        st = _status(e)
        queries += len(e["attempts"])
        nodes += sum(a["nodes"] for a in e["attempts"])
        secs += sum(a["seconds"] for a in e["attempts"])
        if e["x"] is not None:
            mate[st["status"]] = mate.get(st["status"], 0) + 1
            if st["status"] == "unknown":
                budgets.append(st["budget"])
            if "holds_with" in st:
                holds.append(f"{e['label']} #{st['holds_with']}")
        else:
            draw[st["status"]] = draw.get(st["status"], 0) + 1
            horizons[st["horizon"]] = horizons.get(st["horizon"], 0) + 1
    return {"schedule": state["schedule"], "runs": state.get("runs", 0), "mate": dict(sorted(mate.items())),
            "mate_budget_max": max(budgets, default=0), "mate_budget_min": min(budgets, default=0),
            "mate_untried": budgets.count(0),
            "holds_with": holds, "draw": dict(sorted(draw.items())),
            "horizon_min": min(horizons, default=None), "horizon_max": max(horizons, default=None),
            "horizons": dict(sorted(horizons.items())), "queries": queries, "nodes": nodes,
            "seconds": round(secs, 1)}


def report_text(state: dict, details: bool = False) -> str:
    """The report of :func:`report` as text; ``details``: one line per leaf as well."""
    s = report(state)
    sch = s["schedule"]
    fmt = lambda d: ", ".join(f"{k} {v}" for k, v in d.items()) or "none"   # noqa: E731
    out = [f"#x leaves: {sum(s['mate'].values())}: {fmt(s['mate'])} (proof-number search; the unknown ones tried "
           f"with {s['mate_budget_min']:,} to {s['mate_budget_max']:,} nodes, {s['mate_untried']} not yet tried)"]
    if s["holds_with"]:
        out.append("refuted #x leaves whose mate holds with a larger bound: " + ", ".join(s["holds_with"]))
    out.append(f"drawn/hopeless leaves: {sum(s['draw'].values())}: {fmt(s['draw'])}; horizon reached (the protected "
               f"side cannot lose within H plies): min {s['horizon_min']}, max {s['horizon_max']}; leaves by H: "
               + ", ".join(f"{h}: {n}" for h, n in s["horizons"].items()))
    out.append(f"queries: {s['queries']}, prover nodes: {s['nodes']:,}, prover time: {s['seconds']:.0f} s, "
               f"runs: {s['runs']}; schedule: #x {sch['mate_nodes']:,} and drawn {sch['draw_nodes']:,} nodes, "
               f"x{sch['growth']} per round, {sch['rounds']} rounds, horizons up to {sch['max_draw_plies']} plies")
    if details:
        for e in state["leaves"].values():
            st = _status(e)
            if e["x"] is not None:
                tries = {}
                for a in e["attempts"]:   # the retries above the bound: the last answer per bound
                    if a["bound"] > e["x"]:
                        tries[a["bound"]] = a["status"]
                extra = (f" (proof depth {st['mate_plies']})" if "mate_plies" in st else "") + \
                        (f"; holds with #{st['holds_with']}" if "holds_with" in st else "") + \
                        ("; retries: " + ", ".join(f"#{y} {v}" for y, v in sorted(tries.items())) if tries else "")
                out.append(f"  {e['oracle']} {e['label']} {e['leaf']}: {st['status']}{extra} [{st['budget']:,} nodes]")
            else:
                extra = f"; lost within {st['lost_within']} plies" if "lost_within" in st else ""
                out.append(f"  {e['oracle']} {e['label']} {e['leaf']}: horizon {st['horizon']} plies{extra}")
    return "\n".join(out)

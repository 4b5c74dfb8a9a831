"""The drawing oracles of Mhalla & Prost for Gardner minichess as data, and their machine check.

The paper (``shared/papers/003_*.txt``) proves Gardner's minichess a draw with two "oracles": trees of
lines in which one side's moves are given and every reasonable reply of the other side is answered,
down to leaves that are forced mates (``#x``) or positions judged drawn or hopeless.  Part of both
trees is transcribed in ``mavgame/data/gardner_oracles.txt`` (format in that file's header and in
docs/gardner.md); :func:`check` replays and verifies it::

    >>> from mavgame.games.gardner_oracle import load_oracles, check
    >>> report = check(load_oracles(), mate_nodes=200_000)
    >>> print(report.text())

What is checked:

- every line is replayed for legality after shifting the paper's coordinates (its lower-left square
  is b2) to mavgame's, recovering each piece glyph lost in the text from the position (the one piece
  or pawn that can make the move; when several can, the one with which the rest of the line is
  legal); every recovery, ambiguity and error is reported;
- each ``#x`` leaf: the prover (:mod:`mavgame.games.gardner_prover`) tries to prove the mate in at most x
  moves within a node budget (proven / refuted / unknown), by default with depth-bounded proof-number
  search (``mate_method="pns"``: a proof is a proof of "mate within x moves", and ``mate_plies`` is the
  depth of the proof tree found, an upper bound on the exact distance); a refuted leaf is retried with
  bounds x + 1 .. x + ``retry_moves`` to find the bound that holds (``holds_with``);
- each drawn or hopeless leaf (``=``, ``+-``, ``-+``): a bounded "cannot lose within K plies" proof
  for the side the verdict protects;
- coverage: at every inner node where the oracle's opponent moves, each legal reply is in the tree,
  or proven hopeless (the oracle's side mates within R moves, by the prover within a budget), or
  judged hopeless by Fairy-Stockfish (optional: a score of at least ``engine_cp`` centipawns or a
  mate for the oracle's side within ``engine_nodes`` nodes: evidence, not proof), or reported as not
  covered.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from .gardner import Gardner

__all__ = ["ORACLE_FILE", "OracleLine", "Replay", "load_oracles", "paper_to_mavgame", "replay", "check",
           "CheckReport"]

ORACLE_FILE = Path(__file__).parent.parent / "data" / "gardner_oracles.txt"
_LEAF_RE = re.compile(r"^(?:#(\d+)\s+([wb])|=|\+-|-\+)$")
_TOKEN_RE = re.compile(r"^([NBRQK]?)(\?)?([a-f1-6x=NBRQ+#]+)$")


@dataclass
class OracleLine:
    """One line of an oracle file: the oracle's side, the paper's label, the moves as printed (paper
    coordinates), the leaf verdict (None: an inner node) and the transcriber's note."""

    side: str
    label: str
    tokens: List[str]
    leaf: Optional[str]
    note: str
    lineno: int
    root: Tuple[str, ...] = ()   # the oracle's first moves ("oracle black after b4"): coverage starts there


def load_oracles(path=None) -> List[OracleLine]:
    """The lines of an oracle file (default: the shipped transcription); ValueError naming the file
    and line for malformed text."""
    path = Path(path) if path is not None else ORACLE_FILE
    out: List[OracleLine] = []
    side = None
    root: Tuple[str, ...] = ()
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            where = f"{path}, line {n}"
            if text.startswith("oracle"):
                parts = text.split()
                if len(parts) < 2 or parts[1] not in ("white", "black") or (len(parts) > 2 and (
                        parts[2] != "after" or len(parts) == 3)):
                    raise ValueError(f"{where}: expected 'oracle white|black [after MOVES]', got {text!r}")
                side = parts[1]
                root = tuple(parts[3:])
                continue
            if side is None:
                raise ValueError(f"{where}: a line before any 'oracle' header")
            body, _, note = text.partition(" -- ")
            body, colon, leaf = body.partition(":")
            leaf = leaf.strip() if colon else None
            if leaf is not None and not _LEAF_RE.match(leaf):
                raise ValueError(f"{where}: unknown leaf {leaf!r} (#x w, #x b, =, +-, -+)")
            parts = body.split()
            if len(parts) < 2:
                raise ValueError(f"{where}: expected a label and at least one move, got {body!r}")
            for t in parts[1:]:
                if not _TOKEN_RE.match(t):
                    raise ValueError(f"{where}: malformed move {t!r}")
            if tuple(parts[1:1 + len(root)]) != root:
                raise ValueError(f"{where}: the line does not start with the oracle's first moves {' '.join(root)}")
            out.append(OracleLine(side, parts[0], parts[1:], leaf, note.strip(), n, root))
    return out


def paper_to_mavgame(token: str) -> str:
    """A move as printed in the paper (files b..f, ranks 2..6) in mavgame's coordinates (a..e, 1..5)."""
    out = []
    for ch in token:
        if ch in "bcdef":
            out.append(chr(ord(ch) - 1))
        elif ch in "23456":
            out.append(str(int(ch) - 1))
        elif ch in "a1":
            raise ValueError(f"move {token!r}: square off the paper's board (files b..f, ranks 2..6)")
        else:
            out.append(ch)
    return "".join(out)


@dataclass
class Replay:
    """A line replayed on mavgame's board: ``moves`` (UCI, mavgame coordinates) and ``sans`` (mavgame
    SAN) as far as it got, ``recoveries`` (glyphs recovered or chosen), ``problems`` (illegal,
    ambiguous, check marks that differ); ``ok`` when every move was played."""

    line: OracleLine
    moves: List[str] = field(default_factory=list)
    sans: List[str] = field(default_factory=list)
    recoveries: List[str] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)
    ok: bool = False


def _strip_checks(s: str) -> Tuple[str, bool]:
    return s.rstrip("+#"), s.endswith(("+", "#"))


def _candidates(board: Gardner, rest: str, check: bool) -> List[int]:
    """Legal actions whose SAN is a piece letter + ``rest`` (mavgame coordinates); pawn moves only when
    no piece can make the move (the text sometimes prints a glyph on a pawn capture)."""
    capture = "x" in rest

    def legal(tries):
        found = []
        for t in tries:
            try:
                a = int(board.parse_san(t))
            except ValueError:
                continue
            san = board.san(a)   # mavgame's SAN reader forgives a wrong 'x' or '+': the paper's must match
            if a not in found and ("x" in san) == capture and (not check or san.endswith(("+", "#"))):
                found.append(a)
        return found
    return legal([p + rest for p in "NBRQK"]) or legal([f + rest for f in "abcde"] if rest.startswith("x") else [rest])


def _play(board: Gardner, tokens: Sequence[str], i: int, rep: Replay, label: str, dry: bool) -> bool:
    """Plays tokens[i:] (pushing onto ``board``, popping them again when ``dry``); True if all are legal.
    A dry run (the look-ahead that picks among several candidates) asks only whether some way of
    reading the remaining tokens is legal."""
    pushed = 0
    ok = True
    while i < len(tokens):
        tok = tokens[i]
        m = _TOKEN_RE.match(tok)
        chosen, lost, rest = m.group(1), m.group(2), m.group(3)
        try:
            rest = paper_to_mavgame(rest)
        except ValueError as e:
            if not dry:
                rep.problems.append(f"{label} move {i + 1} {tok!r}: {e}")
            ok = False
            break
        rest, check = _strip_checks(rest)
        if lost:
            cands = _candidates(board, rest, check)
            if chosen:
                pick = [a for a in cands if board.san(a).startswith(chosen)]
                if len(pick) != 1:
                    if not dry:
                        rep.problems.append(f"{label} move {i + 1} {tok!r}: the chosen piece {chosen} cannot make "
                                            f"the move (candidates: {[board.san(a) for a in cands]})")
                    ok = False
                    break
                a = pick[0]
                if not dry:
                    others = [board.san(b) for b in cands if b != a]
                    rep.recoveries.append(f"{label} move {i + 1} {tok!r} -> {board.san(a)} (transcriber's choice"
                                          + (f"; also possible: {', '.join(others)})" if others else ")"))
            elif len(cands) == 1:
                a = cands[0]
                if not dry:
                    rep.recoveries.append(f"{label} move {i + 1} {tok!r} -> {board.san(a)} (the only candidate)")
            else:
                viable = []
                for a in cands:
                    board.push(a)
                    if _play(board, tokens, i + 1, rep, label, True):
                        viable.append(a)
                    board.pop()
                if dry:   # a look-ahead only asks whether some continuation is legal
                    ok = bool(viable)
                    break
                if len(viable) != 1:
                    if not dry:
                        if not cands:
                            why = "no piece or pawn can make the move"
                        elif not viable:
                            why = f"the line fails after every candidate ({', '.join(board.san(a) for a in cands)})"
                        else:
                            why = f"ambiguous: {', '.join(board.san(a) for a in viable)} all fit the rest of the line"
                        rep.problems.append(f"{label} move {i + 1} {tok!r} in {board.fen()}: {why}")
                    ok = False
                    break
                a = viable[0]
                rep.recoveries.append(f"{label} move {i + 1} {tok!r} -> {board.san(a)} (the rest of the line "
                                      f"rules out {', '.join(board.san(b) for b in cands if b != a)})")
        else:
            rest = chosen + rest   # a piece letter as printed
            try:
                a = int(board.parse_san(rest))
            except ValueError:
                if not dry:
                    rep.problems.append(f"{label} move {i + 1} {tok!r} ({rest} on mavgame's board) is illegal in "
                                        f"{board.fen()}")
                ok = False
                break
            san = board.san(a)
            if ("x" in san) != ("x" in rest):
                if not dry:
                    rep.problems.append(f"{label} move {i + 1} {tok!r} ({rest}): a capture mark where the move "
                                        f"{san} {'captures' if 'x' in san else 'captures nothing'}, in {board.fen()}")
                ok = False
                break
            if not dry and check != san.endswith(("+", "#")):
                rep.problems.append(f"{label} move {i + 1} {tok!r}: check mark differs from the position ({san})")
        if not dry:
            rep.sans.append(board.san(a))
            rep.moves.append(board.action_to_str(a))
        board.push(a)
        pushed += 1
        i += 1
    if dry:
        for _ in range(pushed):
            board.pop()
    return ok


def replay(line: OracleLine) -> Replay:
    """Replays one oracle line from the start position (see :class:`Replay`)."""
    rep = Replay(line)
    rep.ok = _play(Gardner(), line.tokens, 0, rep, line.label, False)
    return rep


# ---------------------------------------------------------------------------------------------
# the check


@dataclass
class _Node:
    moves: Tuple[str, ...]
    children: Dict[str, "_Node"] = field(default_factory=dict)
    leaf: Optional[str] = None
    labels: List[str] = field(default_factory=list)


@dataclass
class CheckReport:
    """The result of :func:`check` (see :meth:`text`)."""

    budgets: Dict[str, int]
    lines: int = 0
    lines_ok: int = 0
    recoveries: List[str] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)
    nodes: Dict[str, int] = field(default_factory=dict)          # per oracle: tree nodes
    leaves: Dict[str, Dict[str, int]] = field(default_factory=dict)   # per oracle: leaves by kind
    mate_leaves: List[dict] = field(default_factory=list)
    draw_leaves: List[dict] = field(default_factory=list)
    coverage: List[dict] = field(default_factory=list)
    prover_nodes: int = 0
    seconds: float = 0.0

    def _count(self, rows: List[dict], key: str = "status") -> Dict[str, int]:
        out: Dict[str, int] = {}
        for r in rows:
            out[r[key]] = out.get(r[key], 0) + 1
        return out

    def summary(self) -> dict:
        cov = self._count(self.coverage)
        return {"lines": self.lines, "lines_replayed": self.lines_ok, "recoveries": len(self.recoveries),
                "problems": len(self.problems), "tree_nodes": self.nodes, "leaves": self.leaves,
                "mate_leaves": self._count(self.mate_leaves), "draw_leaves": self._count(self.draw_leaves),
                "replies": cov, "budgets": self.budgets, "prover_nodes": self.prover_nodes,
                "seconds": round(self.seconds, 2)}

    def text(self) -> str:
        s = self.summary()
        b = self.budgets
        out = [f"lines: {s['lines']} transcribed, {s['lines_replayed']} replayed legally; "
               f"{s['recoveries']} glyph recoveries, {s['problems']} problems in the text"]
        for side in self.nodes:
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.leaves.get(side, {}).items()))
            out.append(f"oracle {side}: {self.nodes[side]} tree nodes; leaves: {kinds or 'none'}")
        out.append(f"#x leaves ({b['mate_method']}, {b['mate_nodes']} nodes each): " + _fmt(s["mate_leaves"]))
        out.append(f"drawn/hopeless leaves (cannot lose within {b['draw_plies']} plies, {b['draw_nodes']} nodes): "
                   + _fmt(s["draw_leaves"]))
        out.append("opponent replies at inner nodes: " + _fmt(s["replies"]) +
                   f" (mate proven: the oracle's side mates within {b['cover_moves']} moves, {b['cover_nodes']} nodes"
                   + (f"; engine: Fairy-Stockfish {b['engine_nodes']} nodes, >= {b['engine_cp']} cp or a mate for the "
                      "oracle's side" if b["engine_nodes"] else "") + ")")
        out.append(f"prover: {self.prover_nodes} nodes, {self.seconds:.1f} s in all")
        unknown = [r for r in self.mate_leaves if r["status"] == "unknown"]
        if unknown:
            need = sorted(r["plies_needed"] for r in unknown)
            if b["mate_method"] == "alphabeta":
                done = max(r["depth_done"] for r in unknown)
                out.append(f"to close the rest: {len(unknown)} #x leaves are unknown: they need mates of {need[0]} to "
                           f"{need[-1]} plies; the budget searched at most {done} plies completely (about 10x the "
                           "nodes per extra move)")
            else:
                out.append(f"to close the rest: {len(unknown)} #x leaves are unknown: they need mates of {need[0]} to "
                           f"{need[-1]} plies, beyond what proof-number search proves in {b['mate_nodes']} nodes")
        held = [r for r in self.mate_leaves if r.get("holds_with")]
        if held:
            out.append("refuted leaves whose mate holds with a larger bound: " +
                       ", ".join(f"{r['label']} #{r['holds_with']}" for r in held))
        out.append("")
        out.append("recoveries:")
        out += ["  " + r for r in self.recoveries]
        out.append("problems:")
        out += ["  " + p for p in self.problems]
        out.append("#x leaves:")
        within = "mate in" if b["mate_method"] == "alphabeta" else "proof tree depth"
        out += [f"  {r['label']} {r['claim']}: {r['status']}" +
                (f" ({within} {r['mate_plies']} plies)" if r['mate_plies'] is not None else "") +
                (f"; holds with #{r['holds_with']} ({within} {r['holds_with_plies']} plies)"
                 if r.get("holds_with") else "") + ("" if r.get("rule50_safe", True) else
                                                     " (the fifty-move rule may cut it)")
                for r in self.mate_leaves]
        out.append("drawn/hopeless leaves:")
        out += [f"  {r['label']} {r['leaf']}: {r['claim']}: {r['status']}" for r in self.draw_leaves]
        nc = [r for r in self.coverage if r["status"] == "not covered"]
        out.append(f"replies not covered ({len(nc)}):")
        out += [f"  after {r['after']}: {r['move']}" + (f" (engine {r['engine']})" if r.get("engine") else "")
                for r in nc]
        return "\n".join(out)


def _fmt(counts: Dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def _board_after(moves: Sequence[str]) -> Gardner:
    b = Gardner()
    for m in moves:
        b.push(m)
    return b


def check(lines: Sequence[OracleLine], *, mate_nodes: int = 2_000_000, draw_plies: int = 8,
          draw_nodes: int = 500_000, cover_moves: int = 3, cover_nodes: int = 200_000, tt_log2: int = 20,
          engine=None, engine_nodes: int = 20_000, engine_cp: int = 300, progress: bool = False,
          mate_method: str = "pns", retry_moves: int = 3) -> CheckReport:
    """Replay, verify and measure the coverage of oracle lines (see the module docstring).

    ``mate_method``: the prover's method for the ``#x`` leaves and the uncovered replies ("pns", the
    default, or "alphabeta": exhaustive, exact distances, shallow).  Budgets: ``mate_nodes`` per ``#x``
    leaf (and per retry of a refuted leaf, ``retry_moves`` of them), ``draw_plies`` / ``draw_nodes`` per drawn leaf,
    ``cover_moves`` / ``cover_nodes`` per uncovered opponent reply; ``engine`` (a Fairy-Stockfish UCI engine,
    or None: anything with ``go(fen, nodes=..., searchmoves=...)`` returning a result with ``.score``) then judges
    the replies the prover left open with ``engine_nodes`` nodes each."""
    import time

    from .gardner_prover import Prover
    t0 = time.perf_counter()
    from .gardner_prover import METHODS
    if mate_method not in METHODS:
        raise ValueError(f"mate_method must be one of {METHODS}, not {mate_method!r}")
    if isinstance(retry_moves, bool) or not isinstance(retry_moves, int) or retry_moves < 0:
        raise ValueError(f"retry_moves must be an integer >= 0, not {retry_moves!r}")
    prover = Prover(tt_log2)
    mater = prover if mate_method == "alphabeta" else Prover(tt_log2, method=mate_method)
    rep = CheckReport(budgets={"mate_method": mate_method, "retry_moves": retry_moves, "mate_nodes": mate_nodes, "draw_plies": draw_plies, "draw_nodes": draw_nodes,
                               "cover_moves": cover_moves, "cover_nodes": cover_nodes,
                               "engine_nodes": engine_nodes if engine is not None else 0, "engine_cp": engine_cp})
    roots: Dict[str, _Node] = {}
    cover_from: Dict[str, int] = {}   # per oracle: the depth at which its coverage starts
    for ln in lines:
        cover_from[ln.side] = len(ln.root)
        rep.lines += 1
        r = replay(ln)
        rep.recoveries += r.recoveries
        rep.problems += r.problems
        if not r.ok:
            continue
        rep.lines_ok += 1
        node = roots.setdefault(ln.side, _Node(()))
        for m in r.moves:
            node = node.children.setdefault(m, _Node(node.moves + (m,)))
        node.labels.append(ln.label)
        if ln.leaf:
            if node.leaf and node.leaf != ln.leaf:
                rep.problems.append(f"{ln.label}: leaf {ln.leaf!r} where another line has {node.leaf!r}")
            node.leaf = ln.leaf
    work = []
    for side, root in roots.items():
        stack = [root]
        count = 0
        while stack:
            nd = stack.pop()
            count += 1
            stack.extend(nd.children.values())
            work.append((side, nd))
        rep.nodes[side] = count
    bar = None
    if progress:
        from .._progress import tqdm
        bar = tqdm(total=len(work), desc="gardner-proof", unit="node")
    for side, nd in work:
        board = _board_after(nd.moves)
        me = 0 if side == "white" else 1
        label = nd.labels[0] if nd.labels else " ".join(nd.moves) or "start"
        if nd.leaf:
            kinds = rep.leaves.setdefault(side, {})
            kind = "#x" if nd.leaf.startswith("#") else nd.leaf
            kinds[kind] = kinds.get(kind, 0) + 1
            if nd.leaf.startswith("#"):
                x, who = nd.leaf[1:].split()
                x = int(x)
                mside = "white" if who == "w" else "black"
                res = mater.mates_in(board, x, side=mside, max_nodes=mate_nodes)
                plies = 2 * x - (1 if (board.to_move == 0) == (who == "w") else 0)
                row = {"label": label, "claim": res.claim, "status": res.status.value,
                       "mate_plies": res.mate_plies, "depth_done": res.depth_done,
                       "plies_needed": plies, "nodes": res.nodes, "line": res.line,
                       "rule50_safe": res.rule50_safe, "fen": board.fen()}
                if res.refuted:   # the bound that holds instead, if one does within the retries
                    for y in range(x + 1, min(x + retry_moves, 60) + 1):
                        r2 = mater.mates_in(board, y, side=mside, max_nodes=mate_nodes)
                        rep.prover_nodes += r2.nodes
                        if r2.proven:
                            row["holds_with"] = y
                            row["holds_with_plies"] = r2.mate_plies
                            break
                        if r2.unknown:
                            break
                rep.mate_leaves.append(row)
            else:
                protect = "white" if nd.leaf == "+-" else "black" if nd.leaf == "-+" else side
                res = prover.cannot_lose(board, draw_plies, side=protect, max_nodes=draw_nodes)
                rep.draw_leaves.append({"label": label, "leaf": nd.leaf, "claim": res.claim,
                                        "status": res.status.value, "nodes": res.nodes, "fen": board.fen()})
            rep.prover_nodes += res.nodes
        elif nd.children and board.to_move != me and not board.is_terminal() and \
                len(nd.moves) >= cover_from.get(side, 0):
            for a in board.legal_actions().tolist():
                mv = board.action_to_str(int(a))
                row = {"after": " ".join(nd.moves) or "start", "move": board.san(int(a)), "uci": mv}
                if mv in nd.children:
                    row["status"] = "in the tree"
                else:
                    board.push(int(a))
                    res = mater.mates_in(board, cover_moves, side=side, max_nodes=cover_nodes)
                    board.pop()
                    rep.prover_nodes += res.nodes
                    row["status"] = "hopeless (mate proven)" if res.proven else "not covered"
                    row["mate_plies"] = res.mate_plies
                    if not res.proven and engine is not None:
                        from .gardner import paper_moves
                        board.push(int(a))
                        sc = engine.go(board.fen(), nodes=engine_nodes, searchmoves=paper_moves(board)).score
                        board.pop()
                        row["engine"] = str(sc) if sc is not None else None
                        if sc is not None and ((sc.mate is not None and sc.mate > 0) or
                                               (sc.cp is not None and sc.cp >= engine_cp)):
                            row["status"] = "hopeless (engine)"
                rep.coverage.append(row)
        elif board.to_move == me and len(nd.children) > 1:
            rep.problems.append(f"{label}: the oracle gives {len(nd.children)} moves for its own side after "
                                f"{' '.join(nd.moves)}")
        if bar:
            bar.update(1)
    if bar:
        bar.close()
    rep.seconds = time.perf_counter() - t0
    return rep

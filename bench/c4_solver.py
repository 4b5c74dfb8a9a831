"""Connect Four solver benchmark: mean time per position by game phase, and the empty board.

    python bench/c4_solver.py                    # all sets, then the empty board (weak, all moves)
    python bench/c4_solver.py --sets end_easy,middle_easy --limit 200
    python bench/c4_solver.py --empty strong      # exact score of the empty board and of each move
    python bench/c4_solver.py --generate --count 1000 --seed 1   # rebuild bench/data/connect_four/*.txt
    python bench/c4_solver.py --quick --pons ~/connect4/c4solver   # same run against Pons' solver
    python bench/c4_solver.py --annotate 8 --stones 9,10,11,12   # the annotator's solves: exact vs weak=1
    python bench/c4_solver.py --book-effect 8 --stones 0,1,2,4,6,8,9,10,12,14   # the opening book's effect

Position sets (bench/data/connect_four/<set>.txt, one "moves score" line each, moves in the
column convention "4453") follow the categories of the well-known public Connect Four solver
test sets: the number of stones already played (End: 29..41, Middle: 15..28, Begin: 8..14) and the
number of moves left to the end of the game under perfect play (Easy: < 14, Medium: 14..27,
Hard: >= 28; a drawn game ends with the 42nd stone).  Those data sets cannot be downloaded here, so
the positions are generated (``--generate``): a game of uniformly random legal moves is stopped after
a number of stones drawn uniformly from the phase's range; positions where the game is over or the
side to move can win at once are skipped, as are repeats; the position is solved exactly and kept if
its distance to the end falls in the set's range, until the set has ``--count`` positions.  Begin
positions start at 8 stones: earlier ones take from seconds to minutes each (the empty board is
timed on its own).  The stored score is checked on every run.

Timing: each position is solved for its score only (as the public benchmark does) by
``C4Solver.solve_sequences``, timed in C around the solve (CPU time of the solving thread), with the transposition table (2^23
entries, 64 MiB) emptied before each position outside the timing (``--warm`` keeps it).  The
"published" column gives the figures Pascal Pons published for his solver without opening book,
measured on another machine (4.6 us, 37 us, 3.2 ms, 255 us, 97 ms, 5.5 s per position): a hint only.

Same-run comparison with Pons' solver: ``--pons PATH`` names a ``c4solver`` binary you built yourself
from https://github.com/PascalPons/connect4 (``make c4solver``; neither its source nor a build script is
part of mavgame).  For each set both solvers get the same positions, score only, no opening book on either
side (Pons runs in an empty directory, so its ``7x6.book`` is not found), each keeping its transposition
table across the positions of the set as Pons' ``main`` does (mavgame: ``solve_sequences(clear=False)``
after emptying the table once); ``--pons-analyze`` adds Pons' ``-a`` (the score of every column) against
``ConnectFour.solve()`` on a few positions.  The repetitions are interleaved (mavgame, Pons, Pons, mavgame,
...); Pons' time per position is the median of (process CPU time with the positions - CPU time of a run with
no input) / positions, so its start-up (table allocation) is not counted; mavgame's is thread CPU time around
the call.  Scores are compared position by position.

The annotator's solves (``--annotate N``, instead of the sets): N random positions per stone count
(``--stones``; uniformly random moves, seeded, finished games skipped), each valued column by column as the data
generator's annotator does, in three ways from an emptied table: exact (``ConnectFour.solve()``, what
``weak=0`` uses), ``ConnectFour.solve(weak=True, exact_best=True)`` (``weak=1``: win/draw/loss columns, perfect
play's best move) and a plain weak solve (``weak=True``: win/draw/loss only, for scale: the cost of its values
without the best move).  Interleaved position by position (the order rotating), thread CPU time around each
call; mean and median per stone count and the ratio of the means.  The weak=1 answers are checked against
the exact ones (values and best move).

Python per-call overhead (always printed, on the End-Easy positions, table warm so that the solves are trivial):
the time per call of ``ConnectFour.solve`` (what users call) against the binding's raw ``C4Solver.solve``, for
score-only and all-column solves.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mavgame import _core  # noqa: E402
from mavgame.games.connect_four import ConnectFour, moves_to_end  # noqa: E402

DATA = ROOT / "bench" / "data" / "connect_four"

# name: (label, stones played (lo, hi), moves left (lo, hi) inclusive, reference seconds)
SETS = {
    "end_easy": ("End-Easy", (29, 41), (1, 13), 4.6e-6),
    "middle_easy": ("Middle-Easy", (15, 28), (1, 13), 37e-6),
    "middle_medium": ("Middle-Medium", (15, 28), (14, 27), 3.2e-3),
    "begin_easy": ("Begin-Easy", (8, 14), (1, 13), 255e-6),
    "begin_medium": ("Begin-Medium", (8, 14), (14, 27), 97e-3),
    "begin_hard": ("Begin-Hard", (8, 14), (28, 42), 5.5),
}


def fmt_time(s: float) -> str:
    if s < 1e-5:
        return f"{s * 1e6:.2f} us"
    if s < 1e-3:
        return f"{s * 1e6:.1f} us"
    if s < 1.0:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def random_candidate(rng: random.Random, stones: int):
    """A random game stopped after `stones` stones, or None if it ended earlier, the side to move
    can win at once, or a column filled such that the game cannot go on."""
    b = ConnectFour()
    moves = []
    for _ in range(stones):
        legal = b.legal_moves
        if not legal:
            return None
        m = rng.choice(legal)
        b.push(m)
        moves.append(m)
        if b.is_terminal():
            return None
    for m in b.legal_moves:
        c = b.copy()
        c.push(m)
        if c.is_terminal() and c.outcome().winner is not None:
            return None          # the side to move wins at once: trivial
    return "".join(moves)


def generate(names, count: int, seed: int, tt_log2: int, max_minutes: float) -> None:
    """Builds the sets phase by phase: each candidate of a phase is solved once and goes to
    whichever of the phase's sets its distance to the end selects (until that set is full)."""
    DATA.mkdir(parents=True, exist_ok=True)
    sv = _core.C4Solver(tt_log2)
    phases = {}
    for name in names:
        phases.setdefault(SETS[name][1], []).append(name)
    for (slo, shi), members in phases.items():
        rng = random.Random(f"{seed}-{slo}-{shi}")
        kept = {name: [] for name in members}
        seen = set()
        tried = 0
        t0 = time.time()
        while any(len(v) < count for v in kept.values()) and time.time() - t0 < max_minutes * 60:
            moves = random_candidate(rng, rng.randint(slo, shi))
            if moves is None or moves in seen:
                continue
            seen.add(moves)
            tried += 1
            scores, _, _ = sv.solve_sequences([moves], clear=False)
            score = int(scores[0])
            left = moves_to_end(len(moves), score)
            for name in members:
                rlo, rhi = SETS[name][2]
                if rlo <= left <= rhi and len(kept[name]) < count:
                    kept[name].append((moves, score))
        for name in members:
            path = DATA / f"{name}.txt"
            with path.open("w") as f:
                for moves, score in kept[name]:
                    f.write(f"{moves} {score}\n")
            print(f"{SETS[name][0]}: {len(kept[name])} positions (from {tried} solved candidates of "
                  f"{slo}..{shi} stones, {time.time() - t0:.0f} s) -> {path.relative_to(ROOT)}", flush=True)


def load(name: str, limit: int):
    path = DATA / f"{name}.txt"
    if not path.exists():
        return None
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    if limit:
        rows = rows[:limit]
    return [r[0] for r in rows], np.array([int(r[1]) for r in rows], dtype=np.int32)


def run_sets(names, limit: int, tt_log2: int, warm: bool, out: dict) -> bool:
    sv = _core.C4Solver(tt_log2)
    ok = True
    print(f"{'set':<14} {'positions':>9} {'mean time':>10} {'mean nodes':>11} {'Mnodes/s':>8} "
          f"{'published':>10} {'ratio':>6}  (published: Pons' figures from another machine, not this run)")
    for name in names:
        label, _, _, ref = SETS[name]
        got = load(name, limit)
        if got is None:
            print(f"{label:<14} (no data: run with --generate)")
            continue
        seqs, expect = got
        sv.clear()
        scores, nodes, secs = sv.solve_sequences(seqs, clear=not warm)
        bad = np.nonzero(scores != expect)[0]
        if len(bad):
            ok = False
            for i in bad[:5]:
                print(f"  MISMATCH {seqs[i]}: solver {scores[i]}, stored {expect[i]}")
        mean = float(secs.mean())
        rate = float(nodes.sum()) / max(float(secs.sum()), 1e-12) / 1e6
        out.setdefault("sets", []).append({"set": name, "positions": len(seqs), "mean_s": mean, "published_s": ref})
        print(f"{label:<14} {len(seqs):>9} {fmt_time(mean):>10} {float(nodes.mean()):>11.0f} {rate:>8.2f} "
              f"{fmt_time(ref):>10} {mean / ref:>6.2f}", flush=True)
    return ok


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def pons_run(binary: str, lines, analyze: bool = False):
    """(child CPU seconds, wall seconds, output lines) of one run of Pons' c4solver on `lines`, in an empty
    directory (no opening book)."""
    with tempfile.TemporaryDirectory(prefix="pons-") as d:
        c0, t0 = _child_cpu(), time.perf_counter()
        p = subprocess.run([binary] + (["-a"] if analyze else []), input="".join(x + "\n" for x in lines),
                           capture_output=True, text=True, cwd=d, check=False)
        t1, c1 = time.perf_counter(), _child_cpu()
    if p.returncode != 0:
        raise SystemExit(f"--pons {binary}: exit status {p.returncode}: {p.stderr.strip()[:300]}")
    return c1 - c0, t1 - t0, p.stdout.splitlines()


def pons_version(binary: str) -> str:
    """What can be told about the binary: its path, size and the compiler named in its .comment section."""
    desc = f"{binary} ({os.path.getsize(binary):,} bytes"
    try:
        out = subprocess.run(["readelf", "-p", ".comment", binary], capture_output=True, text=True).stdout
        comp = [ln.split("]", 1)[1].strip() for ln in out.splitlines() if "]" in ln]
        if comp:
            desc += ", built with " + "; ".join(dict.fromkeys(comp))
    except OSError:
        pass
    return desc + ")"


def run_pons(names, limit: int, tt_log2: int, binary: str, reps: int, out: dict) -> bool:
    """mavgame against Pons' solver on the same positions, interleaved; prints the table; False on a score
    mismatch."""
    print(f"\nsame run against Pascal Pons' solver: {pons_version(binary)}")
    print("  score only, no opening book, each solver's table kept across a set's positions; "
          f"median of {reps} interleaved runs, CPU time")
    print(f"  {'set':<14} {'positions':>9} {'mavgame':>10} {'Pons':>10} {'Pons/mavgame':>12}")
    empty = statistics.median(pons_run(binary, [])[0] for _ in range(3))
    print(f"  Pons' start-up (a run with no input, subtracted): {fmt_time(empty)} CPU")
    sv = _core.C4Solver(tt_log2)
    ok = True
    for name in names:
        got = load(name, limit)
        if got is None:
            continue
        seqs, expect = got
        ours, theirs = [], []
        pons_lines = []
        for r in range(reps):
            for side in (("m", "p") if r % 2 == 0 else ("p", "m")):
                if side == "m":
                    sv.clear()
                    c0 = time.thread_time()
                    scores, _, _ = sv.solve_sequences(seqs, clear=False)
                    ours.append(time.thread_time() - c0)
                else:
                    cpu, _, pons_lines = pons_run(binary, seqs)
                    theirs.append(max(cpu - empty, 0.0))
        pons_scores = [int(ln.split()[1]) for ln in pons_lines]
        if len(pons_scores) != len(seqs) or any(a != int(b) for a, b in zip(pons_scores, expect)) \
                or (scores != expect).any():
            ok = False
            print(f"  {SETS[name][0]}: SCORES DIFFER between Pons, mavgame and the stored set")
        m, p = statistics.median(ours) / len(seqs), statistics.median(theirs) / len(seqs)
        out.setdefault("pons", []).append({"set": name, "positions": len(seqs), "mavgame_s": m, "pons_s": p,
                                           "resolved": p * len(seqs) > empty})
        note = "" if p * len(seqs) > empty else "  (Pons' solves take less than its start-up: not resolved, use more positions)"
        print(f"  {SETS[name][0]:<14} {len(seqs):>9} {fmt_time(m):>10} {fmt_time(p):>10} {p / m:>11.2f}x{note}",
              flush=True)
    return ok


def run_pons_analyze(binary: str, count: int) -> bool:
    """Pons' -a (every column's score) against ConnectFour.solve() on `count` Middle-Easy positions."""
    got = load("middle_easy", count)
    if got is None:
        return True
    seqs = got[0]
    sv = _core.C4Solver(23)
    c0 = time.thread_time()
    ours = [ConnectFour.from_moves(s).solve(solver=sv).move_scores for s in seqs]
    t_m = time.thread_time() - c0
    empty = statistics.median(pons_run(binary, [], analyze=True)[0] for _ in range(3))
    cpu, _, out = pons_run(binary, seqs, analyze=True)
    t_p = max(cpu - empty, 0.0)
    ok = True
    for line, mine in zip(out, ours):
        cols = [int(x) for x in line.split()[1:]]
        theirs = {str(c + 1): v for c, v in enumerate(cols) if v > -1000}
        ok = ok and theirs == mine
    print(f"  all-column scores, {len(seqs)} Middle-Easy positions: mavgame ConnectFour.solve "
          f"{fmt_time(t_m / len(seqs))}, Pons -a {fmt_time(t_p / len(seqs))} ({t_p / t_m:.2f}x)"
          f"{'' if ok else '  SCORES DIFFER'}")
    return ok


def run_overhead(n: int = 200, reps: int = 7):
    """Per-call cost on easy positions (table warm): ConnectFour.solve, the binding's raw call, the C solve."""
    got = load("end_easy", n)
    if got is None:
        return None
    seqs = got[0]
    sv = _core.C4Solver(20)
    boards = [ConnectFour.from_moves(s) for s in seqs]
    sv.solve_sequences(seqs, clear=False)  # warm the table: the solves become trivial

    def med(fn):
        ts = []
        for _ in range(reps):
            c = time.thread_time()
            fn()
            ts.append(time.thread_time() - c)
        return statistics.median(ts) / len(seqs)

    rows = {
        "score only": (med(lambda: [b.solve(moves=False, solver=sv) for b in boards]),
                       med(lambda: [sv.solve(b, moves=False) for b in boards]), None),
        "all columns": (med(lambda: [b.solve(solver=sv) for b in boards]),
                        med(lambda: [sv.solve(b) for b in boards]), None),
    }
    print(f"\nPython per-call overhead, {len(seqs)} End-Easy positions, table warm (median of {reps}, thread CPU): "
          "ConnectFour.solve (-> SolveResult) against the binding's raw C4Solver.solve (-> tuple and NumPy array)")
    print(f"  {'solve':<12} {'ConnectFour.solve':>18} {'C4Solver.solve (raw)':>21} {'solve/raw':>10}")
    for k, (py, raw, _) in rows.items():
        print(f"  {k:<12} {fmt_time(py):>18} {fmt_time(raw):>21} {py / raw:>9.2f}x")
    return rows


def run_annotate(count: int, stones, tt_log2: int, seed: int, out: dict) -> bool:
    """The annotator's all-column solves (module docstring): exact against weak=1 against plain weak."""
    from mavgame.games.connect_four import central_best
    from mavgame.play.openings import random_openings
    sv = _core.C4Solver(tt_log2)
    ways = {"exact": {}, "weak=1": {"weak": True, "exact_best": True}, "weak only": {"weak": True}}
    ok = True
    print(f"annotator solves, {count} random positions per stone count, table emptied before each solve, "
          f"thread CPU time (2^{tt_log2} entries)")
    print(f"{'stones':>6} {'exact mean':>11} {'weak=1 mean':>12} {'weak only':>10} {'exact/weak=1':>13} "
          f"{'median ratio':>13} {'won/drawn/lost':>15}")
    for n in stones:
        boards = [ConnectFour(moves="".join(o.moves)) for o in random_openings("connect_four", n, count, seed=seed + n)]
        secs = {w: [] for w in ways}
        kinds = [0, 0, 0]
        for i, b in enumerate(boards):
            order = list(ways)[i % 3:] + list(ways)[:i % 3]
            res = {}
            for w in order:
                sv.clear()
                c = time.thread_time()
                res[w] = b.solve(solver=sv, **ways[w])
                secs[w].append(time.thread_time() - c)
            e, k = res["exact"], res["weak=1"]
            kinds[0 if e.score > 0 else 1 if e.score == 0 else 2] += 1
            if (k.move_scores != {m: (v > 0) - (v < 0) for m, v in e.move_scores.items()}
                    or k.best != central_best(e.move_scores) or k.score != e.score):
                ok = False
                print(f"  MISMATCH {b.text()}: exact {e}, weak=1 {k}")
        mean = {w: statistics.fmean(v) for w, v in secs.items()}
        med_ratio = statistics.median(a / max(b, 1e-9) for a, b in zip(secs["exact"], secs["weak=1"]))
        out.setdefault("annotate", []).append({"stones": n, "positions": count, **{f"{w}_mean_s": v
                                                                                    for w, v in mean.items()},
                                                "median_ratio": med_ratio, "won_drawn_lost": kinds})
        print(f"{n:>6} {fmt_time(mean['exact']):>11} {fmt_time(mean['weak=1']):>12} {fmt_time(mean['weak only']):>10} "
              f"{mean['exact'] / mean['weak=1']:>12.2f}x {med_ratio:>12.2f}x {'/'.join(map(str, kinds)):>15}",
              flush=True)
    return ok


def run_book_effect(count: int, stones, tt_log2: int, seed: int, no_book_from: int, out: dict) -> bool:
    """The annotator's all-column solves (exact, and weak=1) with the shipped opening book against none, on
    `count` random positions per stone count (the empty board for 0 stones), cold table; without the book
    only from `no_book_from` stones (earlier positions take minutes each without it)."""
    from mavgame.games import c4_book
    from mavgame.play.openings import random_openings
    data = c4_book.shipped_book()
    if data is None:
        print("no opening book shipped (mavgame/data/c4_book.bin): nothing to compare")
        return True
    lo, hi, n_entries = _core.c4_book_info(data)
    with_book, bare = _core.C4Solver(tt_log2), _core.C4Solver(tt_log2)
    with_book.set_book(data)
    print(f"opening book: plies {lo}..{hi}, {n_entries:,} positions, {len(data):,} bytes; {count} random positions "
          f"per stone count, every column solved, table (2^{tt_log2}) emptied before each solve, thread CPU time")
    print(f"{'stones':>6} {'book exact':>11} {'book weak=1':>12} {'no book exact':>14} {'speed-up':>9} {'max (book)':>11}")
    ok = True
    for n in stones:
        distinct = 7 ** n  # fewer positions than that at 0-1 stones
        boards = [ConnectFour()] if n == 0 else [ConnectFour(moves="".join(o.moves)) for o in
                                                 random_openings("connect_four", n, min(count, distinct), seed=seed + n)]
        secs = {"book": [], "weak": [], "bare": []}
        for b in boards:
            runs = [("book", with_book, {}), ("weak", with_book, {"weak": True, "exact_best": True})]
            if n >= no_book_from:
                runs.append(("bare", bare, {}))
            res = {}
            for key, sv, kw in runs:
                sv.clear()
                c = time.thread_time()
                res[key] = b.solve(solver=sv, **kw)
                secs[key].append(time.thread_time() - c)
            if "bare" in res and (res["bare"].move_scores != res["book"].move_scores
                                  or res["bare"].score != res["book"].score):
                ok = False
                print(f"  MISMATCH {b.text()}: book {res['book']}, no book {res['bare']}")
        mean = {k: statistics.fmean(v) if v else None for k, v in secs.items()}
        row = {"stones": n, "positions": len(boards), "book_exact_s": mean["book"], "book_weak1_s": mean["weak"],
               "no_book_exact_s": mean["bare"], "book_exact_max_s": max(secs["book"])}
        out.setdefault("book_effect", []).append(row)
        bare_s = fmt_time(mean["bare"]) if mean["bare"] is not None else "-"
        speed = f"{mean['bare'] / mean['book']:.0f}x" if mean["bare"] is not None else "-"
        print(f"{n:>6} {fmt_time(mean['book']):>11} {fmt_time(mean['weak']):>12} {bare_s:>14} {speed:>9} "
              f"{fmt_time(row['book_exact_max_s']):>11}", flush=True)
    return ok


def run_empty(mode: str, tt_log2: int) -> bool:
    sv = _core.C4Solver(tt_log2)
    b = ConnectFour()
    t0 = time.perf_counter()
    if mode == "root":
        r = b.solve(moves=False, solver=sv)
    else:
        r = b.solve(weak=(mode == "weak"), solver=sv)
    dt = time.perf_counter() - t0
    what = {"root": "exact score", "weak": "win/draw/loss of every first move",
            "strong": "exact score of every first move"}[mode]
    print(f"empty board ({what}): score {r.score}, moves {r.move_scores}, {r.nodes} nodes, {dt:.1f} s")
    good = r.complete and r.score == 1
    if r.move_scores:
        good = good and r.best_moves() == ["4"]
    print("empty board: first-player win, only the centre column wins" if good else "empty board: UNEXPECTED")
    return good


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join(SETS), help="comma-separated set names (default: all)")
    ap.add_argument("--limit", type=int, default=0, help="positions per set (0: all)")
    ap.add_argument("--tt-log2", type=int, default=23, help="transposition table size (2^n entries of 8 bytes)")
    ap.add_argument("--warm", action="store_true", help="keep the table between positions")
    ap.add_argument("--empty", choices=["none", "root", "weak", "strong"], default="weak",
                    help="solve the empty board: root = exact score only, weak = win/draw/loss of every "
                         "move, strong = exact score of every move (long)")
    ap.add_argument("--pons", metavar="PATH", help="a c4solver binary built from Pascal Pons' connect4 sources: "
                    "compare in the same run")
    ap.add_argument("--pons-analyze", type=int, default=0, metavar="N",
                    help="with --pons: also compare all-column scores (Pons -a) on N Middle-Easy positions")
    ap.add_argument("--reps", type=int, default=3, help="interleaved repetitions for --pons (median reported)")
    ap.add_argument("--quick", action="store_true",
                    help="End/Middle-Easy and Middle-Medium, 100 positions each, no empty board")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--generate", action="store_true", help="(re)build the position sets")
    ap.add_argument("--count", type=int, default=1000, help="positions per generated set")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-minutes", type=float, default=60.0, help="generation time limit per phase")
    ap.add_argument("--annotate", type=int, default=0, metavar="N",
                    help="instead of the sets: the annotator's solves (exact, weak=1, weak only) on N random "
                         "positions per stone count")
    ap.add_argument("--stones", default="8,9,10,11,12,13,14", help="stone counts for --annotate and --book-effect")
    ap.add_argument("--book-effect", type=int, default=0, metavar="N",
                    help="N random positions per stone count solved with the shipped opening book and without")
    ap.add_argument("--no-book-from", type=int, default=8,
                    help="with --book-effect: solve without the book only from this many stones on")
    args = ap.parse_args(argv)
    if args.quick:
        args.sets, args.limit, args.empty = "end_easy,middle_easy,middle_medium", args.limit or 100, "none"
    if args.pons and not (os.path.isfile(args.pons) and os.access(args.pons, os.X_OK)):
        ap.error(f"--pons {args.pons!r} is not an executable file")
    names = [n for n in args.sets.split(",") if n]
    for n in names:
        if n not in SETS:
            ap.error(f"unknown set {n!r} (expected some of {', '.join(SETS)})")
    if args.generate:
        generate(names, args.count, args.seed, args.tt_log2, args.max_minutes)
        return 0
    out = {}
    if args.annotate or args.book_effect:
        try:
            stones = [int(x) for x in args.stones.split(",") if x]
        except ValueError:
            ap.error(f"--stones {args.stones!r}: expected comma-separated stone counts such as 9,10,11")
        bad = [x for x in stones if not 0 <= x <= 41]
        if bad:
            ap.error(f"--stones: {bad[0]} is not a stone count of an unfinished game (0..41)")
        if args.book_effect:
            ok = run_book_effect(args.book_effect, stones, args.tt_log2, args.seed, args.no_book_from, out)
        else:
            ok = run_annotate(args.annotate, stones, args.tt_log2, args.seed, out)
        if args.json:
            import json
            Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
        return 0 if ok else 1
    ok = run_sets(names, args.limit, args.tt_log2, args.warm, out)
    over = run_overhead()
    if over:
        out["overhead"] = {k: {"solve_s": a, "raw_s": b, "c_s": c} for k, (a, b, c) in over.items()}
    if args.pons:
        out["pons_build"] = pons_version(os.path.abspath(args.pons))
        ok = run_pons(names, args.limit, args.tt_log2, os.path.abspath(args.pons), max(1, args.reps), out) and ok
        if args.pons_analyze:
            ok = run_pons_analyze(os.path.abspath(args.pons), args.pons_analyze) and ok
    if args.empty != "none":
        ok = run_empty(args.empty, max(args.tt_log2, 24)) and ok
    if args.json:
        import json
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

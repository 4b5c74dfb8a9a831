"""Speed of the MAV format in C against a straightforward pure-Python implementation (same run).

    python bench/mav_format.py             # 20000 chess positions, median of 5 interleaved runs
    python bench/mav_format.py --quick     # 1000 positions, 3 runs
    python bench/mav_format.py --json out.json

The peer is the pure-Python implementation below (there is no other MAV implementation); both sides run in
the same process, their repetitions interleaved, and the medians of thread CPU time (time.thread_time) are
reported.  Measured on chess, single thread:
  prompts   "%state %fen %top_all %best_action" prompts (header, %state line, %fen line):
            C: mav.prompts(states) -> list[str] (FEN written by the C game, %state derived from it);
               _core.mav_prompt_tokens(...) -> token ids directly (prompt + tokenizer, no Python str);
            Python: the same text from the FEN strings (given for free, precomputed).
  parse     full texts (prompt + "%top_all" with every legal move + "%best_action"):
            like for like (the headline ratio): Python objects on both sides, one per text and one per %top
               entry: C: mav.parse(...).top (a ParseResult and its MoveEntry list); Python: a dict with the
               FEN and a (move, bucket, legal, duplicate) tuple per entry;
            also shown: mav.parse(...) without touching .top (the entries stay in the result's NumPy table
               until read), and mav.metrics(texts, true_states) (parse + legality + hallucination counts in C,
               no Python object per result: not like for like);
            Python: header and line structure, %state -> FEN, entries and bucket tokens checked with
               regular expressions, legality against the set of legal moves (given for free, precomputed;
               mavgame computes the legal moves of the reference state itself).
The two implementations' outputs are compared before timing.
"""
import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mavgame import _core, mav  # noqa: E402
from _timing import interleaved  # noqa: E402

PROMPT_CMDS = "%state %fen %top_all %best_action"
PARSE_CMDS = "%state %top_all %best_action"


# ---- the pure-Python reference implementation ------------------------------------------------------------------

def py_state_from_fen(fen: str) -> str:
    parts = fen.split()
    board, side, castling, ep = parts[:4]
    hm = int(parts[4]) if len(parts) > 4 else 0
    fm = int(parts[5]) if len(parts) > 5 else 1
    squares = []
    for row in reversed(board.split("/")):
        for ch in row:
            if ch.isdigit():
                squares.append("." * int(ch))
            else:
                squares.append(ch)
    cast = "".join(c if c in castling else "." for c in "KQkq")
    return f"{side} {''.join(squares)} {cast} {'.' if ep == '-' else ep} {hm:03d} {fm:04d}"


def py_fen_from_state(st: str) -> str:
    side, board, cast, ep, hm, fm = st.split(" ")
    if len(board) != 64 or len(cast) != 4 or len(hm) != 3 or len(fm) != 4:
        raise ValueError("bad %state")
    rows = []
    for r in range(7, -1, -1):
        row, empty = "", 0
        for c in board[8 * r:8 * r + 8]:
            if c == ".":
                empty += 1
            else:
                if empty:
                    row += str(empty)
                empty = 0
                row += c
        rows.append(row + (str(empty) if empty else ""))
    castling = "".join(c for c in cast if c != ".") or "-"
    return f"{'/'.join(rows)} {side} {castling} {'-' if ep == '.' else ep} {int(hm)} {int(fm)}"


def py_prompt(fen: str, cmds: str) -> str:
    out = [f"<mav game=chess> {cmds} </mav>"]
    for c in cmds.split():
        if c == "%state":
            out.append(f"[%state {py_state_from_fen(fen)}]")
        elif c == "%fen":
            out.append(f"[%fen {fen}]")
        else:
            break
    return "\n".join(out) + "\n"


LINE = re.compile(r"\[(%[a-z_0-9]+) (.*)\]$")
ENTRY = re.compile(r"([a-h][1-8][a-h][1-8][nbrq]?):<ctrl(\d{1,2})>$")


def py_parse(text: str, legal: frozenset) -> dict:
    """Structure, states and moves of a chess MAV text; issues as strings."""
    lines = text.split("\n")
    issues = []
    head = lines[0]
    if not (head.startswith("<mav game=chess> ") and head.endswith(" </mav>")):
        return {"issues": ["line 1: bad header"]}
    cmds = head[len("<mav game=chess> "):-len(" </mav>")].split()
    body = [ln for ln in lines[1:] if ln.strip()]
    res = {"moves": [], "best": None, "state": None, "issues": issues}
    seen = set()
    for i, cmd in enumerate(cmds):
        if i >= len(body):
            issues.append(f"missing {cmd}")
            continue
        m = LINE.match(body[i])
        if not m or m.group(1) != cmd:
            issues.append(f"line {i + 2}: expected {cmd}")
            continue
        val = m.group(2)
        if cmd == "%state":
            try:
                res["state"] = py_fen_from_state(val)
            except ValueError as e:
                issues.append(f"line {i + 2}: {e}")
        elif cmd.startswith("%top_"):
            for e in val.split(" "):
                em = ENTRY.match(e)
                if not em or int(em.group(2)) > 63:
                    issues.append(f"line {i + 2}: bad entry {e}")
                    continue
                mv = em.group(1)
                res["moves"].append((mv, int(em.group(2)), mv in legal, mv in seen))
                seen.add(mv)
        elif cmd == "%best_action":
            res["best"] = (val, val in legal)
    return res


# ---- timing -----------------------------------------------------------------------------------------------------

def positions(n, seed=1):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = _core.State("chess")
        for _ in range(int(rng.integers(0, 80))):
            if s.is_terminal():
                break
            s.push(int(rng.choice(s.legal_actions())))
        if not s.is_terminal():
            out.append(s.copy(stack=False))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20000, help="chess positions")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    n = 1000 if args.quick else args.n
    runs = 3 if args.quick else args.runs

    states = positions(n)
    fens = [s.text() for s in states]
    tok = mav.Tokenizer()
    rng = np.random.default_rng(2)
    texts, legal_sets = [], []
    for s in states:
        vals = {m: float(rng.random()) for m in s.legal_moves}
        texts.append(mav.prompt(s, PARSE_CMDS) + mav.target(s, vals, PARSE_CMDS))
        legal_sets.append(frozenset(s.legal_moves))

    # same outputs
    c_prompts = mav.prompts(states, PROMPT_CMDS)
    assert c_prompts == [py_prompt(f, PROMPT_CMDS) for f in fens], "C and Python prompts differ"
    for t, s, lg in zip(texts[:500], states, legal_sets):
        pr, cr = py_parse(t, lg), mav.parse("chess", t, true_state=s)
        assert not pr["issues"] and cr.ok
        assert [(m.move, m.bucket) for m in cr.top] == [(m, b) for m, b, _, _ in pr["moves"]]
        assert pr["state"] == s.text() == cr.cur.text

    res = {"positions": n, "runs": runs}
    r = interleaved({
        "c_str": lambda: mav.prompts(states, PROMPT_CMDS),
        "c_tok": lambda: _core.mav_prompt_tokens(tok._tok, states, PROMPT_CMDS),
        "py": lambda: [py_prompt(f, PROMPT_CMDS) for f in fens],
    }, runs)
    res["prompts_per_s_c_str"] = n / r["c_str"][1]
    res["prompts_per_s_c_tokens"] = n / r["c_tok"][1]
    res["prompts_per_s_python"] = n / r["py"][1]
    r = interleaved({
        "c_entries": lambda: [mav.parse("chess", t, true_state=s).top for t, s in zip(texts, states)],
        "py": lambda: [py_parse(t, lg) for t, lg in zip(texts, legal_sets)],
        "c_objects": lambda: [mav.parse("chess", t, true_state=s) for t, s in zip(texts, states)],
        "c_batch": lambda: mav.metrics("chess", texts, states),
    }, runs)
    m = r["c_batch"][2]
    assert m["parsed_ok"] == n and m["top_all_f1"] == 1.0
    res["parses_per_s_c_entries"] = n / r["c_entries"][1]
    res["parses_per_s_c_objects"] = n / r["c_objects"][1]
    res["parses_per_s_c_batch"] = n / r["c_batch"][1]
    res["parses_per_s_python"] = n / r["py"][1]
    res["parse_ratio_like_for_like"] = res["parses_per_s_c_entries"] / res["parses_per_s_python"]
    res["mean_text_bytes"] = sum(map(len, texts)) / n

    py = res["parses_per_s_python"]
    print(f"MAV format, chess, {n} positions, single thread, median of {runs} interleaved run(s), thread CPU time; "
          f"peer: the pure-Python implementation in this file (Python {sys.version.split()[0]})")
    print(f"  prompts '{PROMPT_CMDS}'")
    print(f"    C  -> list[str]     {res['prompts_per_s_c_str']:12,.0f} /s   "
          f"({res['prompts_per_s_c_str'] / res['prompts_per_s_python']:.1f}x Python, like for like)")
    print(f"    C  -> token ids     {res['prompts_per_s_c_tokens']:12,.0f} /s")
    print(f"    pure Python         {res['prompts_per_s_python']:12,.0f} /s")
    print(f"  parse '{PARSE_CMDS}' outputs (%top_all: every legal move), mean {res['mean_text_bytes']:.0f} bytes")
    print(f"    C  mav.parse + .top {res['parses_per_s_c_entries']:12,.0f} /s   ({res['parse_ratio_like_for_like']:.1f}x "
          f"Python, like for like: an object per text and per entry on both sides)")
    print(f"    C  mav.parse        {res['parses_per_s_c_objects']:12,.0f} /s   ({res['parses_per_s_c_objects'] / py:.1f}x;"
          f" entries left in the NumPy table)")
    print(f"    C  batch metrics    {res['parses_per_s_c_batch']:12,.0f} /s   ({res['parses_per_s_c_batch'] / py:.1f}x;"
          f" no per-text object: not like for like)")
    print(f"    pure Python         {py:12,.0f} /s")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

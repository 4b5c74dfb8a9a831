"""The one exact negamax (mavgame.games.negamax) against an independent tic-tac-toe oracle, and its two users."""
from functools import lru_cache

import numpy as np
import pytest

from mavgame import _core
from mavgame.agents import AgentError
from mavgame.agents.basic import MinimaxAgent
from mavgame.games.negamax import WIN, NegamaxSolver, NodeLimitError

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]


def cells_of(text):
    rows = text.split()[0].split("/")          # row 3 first
    return tuple(rows[2 - a // 3][a % 3] for a in range(9)), text.split()[1]


@lru_cache(maxsize=None)
def oracle(cells, side):
    """(result, plies): result +1/0/-1 for the side to move, plies to the end under play that wins
    fastest and loses slowest."""
    if any(cells[a] != "." and cells[a] == cells[b] == cells[c] for a, b, c in LINES):
        return -1, 0
    empty = [i for i in range(9) if cells[i] == "."]
    if not empty:
        return 0, 0
    other = "o" if side == "x" else "x"
    best = None
    for a in empty:
        r, d = oracle(tuple(side if i == a else c for i, c in enumerate(cells)), other)
        cand = (-r, d + 1)
        key = (cand[0], -cand[1] if cand[0] > 0 else cand[1])
        if best is None or key > best[0]:
            best = (key, cand)
    return best[1]


def expected_score(cells, side, a):
    other = "o" if side == "x" else "x"
    r, d = oracle(tuple(side if i == a else c for i, c in enumerate(cells)), other)
    return 0 if r == 0 else -r * (WIN - d)


def test_scores_match_the_oracle_on_random_positions():
    rng = np.random.default_rng(5)
    solver = NegamaxSolver()
    for _ in range(60):
        s = _core.State("tictactoe")
        for _ in range(int(rng.integers(0, 7))):
            if s.is_terminal():
                break
            s.push(int(rng.choice(s.legal_actions())))
        if s.is_terminal():
            continue
        cells, side = cells_of(s.text())
        got = solver.action_values(s)
        assert list(got) == s.legal_actions().tolist()
        assert got == {a: expected_score(cells, side, a) for a in got}, s.text()


def test_known_values_and_limits():
    s = _core.State("tictactoe", "xx./oo./... x")
    v = NegamaxSolver().action_values(s)
    assert v[s.action_from_str("c3")] == WIN              # wins at once (0 plies after the move)
    assert all(v[s.action_from_str(m)] == -(WIN - 1) for m in ("a1", "b1", "c1"))   # o wins at c2 next
    assert set(NegamaxSolver().action_values(_core.State("tictactoe")).values()) == {0}
    with pytest.raises(NodeLimitError, match="too large"):
        NegamaxSolver(max_nodes=50).action_values(_core.State("tictactoe"))
    with pytest.raises(AgentError, match="minimax agent 'minimax'.*too large"):
        MinimaxAgent(max_nodes=50).act(_core.State("tictactoe"))


def test_exhaustive_annotator_uses_the_same_values():
    from mavgame.annotators.exhaustive import exhaustive_annotator
    ann = exhaustive_annotator({})
    s = _core.State("tictactoe", "xx./oo./x.. o")
    vals, best = ann(s)
    assert best == "c2" and vals["c2"] == 1.0
    assert vals == {s.action_to_str(a): (1.0 if c > 0 else 0.0 if c < 0 else 0.5)
                    for a, c in MinimaxAgent().action_values(s).items()}

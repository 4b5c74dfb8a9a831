"""Internal-search traces (MAV-IS): writer from annotated trees, parser of model output, metrics."""
import numpy as np
import pytest

from mavgame import _core, mav
from mavgame.mav.search_trace import (
    TRACE_METRICS,
    SearchTree,
    build_search_tree,
    parse_trace,
    reference_order,
    trace_metrics,
    trace_prompt,
    write_trace,
)
from mavgame.datasets import make_annotator

C4_GAME = "4 4 3 5 3 3 2 6 5 4 4 1 1 7".split()


def c4_state(moves=C4_GAME):
    s = _core.State("connect_four")
    for m in moves:
        s.push(m)
    return s


@pytest.fixture(scope="module")
def c4_tree():
    return build_search_tree(c4_state(), make_annotator("connect_four", {"max_nodes": 1_000_000}), 3, 5)


def random_annotate(seed):
    rng = np.random.default_rng(seed)

    def annotate(st):
        return {m: float(rng.random()) for m in st.legal_moves}, None
    return annotate


def expected_paths(tree, breadth, depth):
    """The node paths a trace of (breadth, depth) holds, in depth-first order (from the tree's own links)."""
    kids = {}
    for i, (parent, action, _a, _v, _b) in enumerate(tree.nodes):
        kids.setdefault(parent, []).append((action, i))
    out = []

    def visit(i, st, path, d):
        out.append(path)
        _p, _a, acts, vals, best = tree.nodes[i]
        if acts is None or d == depth:
            return
        for j in reference_order(st, acts, vals, best)[:breadth]:
            a = int(acts[j])
            move = st.action_to_str(a)
            st.push(a)
            visit(dict(kids[i])[a], st, path + (move,), d + 1)
            st.pop()
    visit(0, tree.root.copy(), (), 0)
    return out


def all_true(res):
    return {k: getattr(res, k) for k in TRACE_METRICS}


def test_connect_four_round_trip_every_shape(c4_tree):
    assert len(c4_tree) == 156  # 1 + 5 + 25 + 125: no finished node in this position
    for depth in (1, 2, 3):
        for breadth in (1, 2, 3, 4, 5):
            tr = write_trace(c4_tree, breadth, depth)
            assert tr.prompt == trace_prompt(c4_tree.root, breadth, depth)
            assert tr.prompt.startswith(f"Minimax breadth={breadth} depth={depth}\n<mav game=connect_four>")
            assert tr.target.endswith(f"Playing {c4_tree.root.action_to_str(tr.choice[0])}!\n") or \
                len(tr.choice) > 1
            res = parse_trace(tr.text, c4_tree.root, choice=tr.choice)
            assert res.errors == []
            assert all(all_true(res).values()), all_true(res)
            assert (res.breadth, res.depth) == (breadth, depth)
            assert res.paths() == expected_paths(c4_tree, breadth, depth)
            assert len(res.nodes) == sum(breadth ** d for d in range(depth + 1))
            assert res.nodes[0].value == tr.value
            # the prompt's state is the truth when no state is given
            assert all_true(parse_trace(tr.text, game="connect_four", choice=tr.choice)) == all_true(res)


def test_parsed_tree_holds_the_annotation(c4_tree):
    tr = write_trace(c4_tree, 3, 2)
    res = parse_trace(tr.text, c4_tree.root)
    by_path = dict(zip(res.paths(), res.nodes))
    root = c4_tree.root
    _p, _a, acts, vals, best = c4_tree.nodes[0]
    order = reference_order(root, acts, vals, best)
    node = by_path[()]
    assert [e[0] for e in node.top] == [root.action_to_str(int(acts[i])) for i in order]
    assert [e[2] for e in node.top] == [int(mav.bucket(vals[i])) for i in order]
    assert all(e[3] == "legal" for e in node.top)
    for path, n in by_path.items():
        st = root.copy()
        for m in path:
            st.push(m)
        assert n.state_text == st.text() and n.state_correct is not False and n.mav_ok and n.consistent


def test_values_flip_and_decisions(c4_tree):
    tr = write_trace(c4_tree, 2, 2)
    res = parse_trace(tr.text, c4_tree.root)
    for n in res.nodes:
        if n.children:
            assert [b for _m, b in n.decision] == [63 - res.nodes[c].value for c in n.children]
            assert n.value == max(b for _m, b in n.decision)
        else:
            assert n.value == max(e[2] for e in n.top)


def test_model_mistakes_are_measured(c4_tree):
    tr = write_trace(c4_tree, 2, 2)
    text = tr.text
    # a wrong backed-up value: the root decision's first value changed
    lines = text.split("\n")
    i = max(k for k, ln in enumerate(lines) if ln == "Decision for node: <root>")
    m, v = lines[i + 1].split(" ")[0].split(":")
    wrong = "<ctrl5>" if v != "<ctrl5>" else "<ctrl6>"
    bad = "\n".join(lines[:i + 1] + [lines[i + 1].replace(f"{m}:{v}", f"{m}:{wrong}", 1)] + lines[i + 2:])
    res = parse_trace(bad, c4_tree.root, choice=tr.choice)
    assert res.ok and res.shape_ok and res.moves_legal and res.states_correct and not res.values_consistent
    # a wrong predicted state (one field changed in the first child's %state)
    j = text.index("Evaluation for node: <root ")
    k = text.index("[%state ", j) + len("[%state x ")
    field = text[k + 20]
    bad = text[:k + 20] + ("x" if field != "x" else "o") + text[k + 21:]
    res = parse_trace(bad, c4_tree.root, choice=tr.choice)
    assert not res.states_correct and res.shape_ok and res.values_consistent
    # the final move replaced by another legal move that no minimax picks
    root = c4_tree.root
    others = [m for m in root.legal_moves if root.parse_move(m) not in tr.choice]
    final = text.rsplit("Playing ", 1)[1].split("!")[0]
    res = parse_trace(text.replace(f"Playing {final}!", f"Playing {others[0]}!"), root, choice=tr.choice)
    assert res.final_legal and res.final_minimax is False and not res.values_consistent
    # a trace cut short
    res = parse_trace(text[: len(text) // 2], root, choice=tr.choice)
    assert not res.complete and not res.shape_ok and res.final_minimax is False and res.errors
    # a trace of breadth 2 where the prompt asked for 3: the shape is wrong, the rest right
    res = parse_trace(text.replace("breadth=2", "breadth=3", 1), root, choice=tr.choice)
    assert res.ok and not res.shape_ok and res.moves_legal and res.values_consistent and res.final_minimax


def test_illegal_expansion_and_garbage_never_crash(c4_tree):
    tr = write_trace(c4_tree, 2, 1)
    root = c4_tree.root
    full = [m for m in ("1", "2", "3", "4", "5", "6", "7") if m not in root.legal_moves]
    text = tr.text
    first = parse_trace(text, root).nodes[1].move
    if full:
        bad = text.replace(f"<root {first}>", f"<root {full[0]}>")
        res = parse_trace(bad, root)
        assert not res.moves_legal
    res = parse_trace(text.replace(f"<root {first}>", "<root 9>"), root)
    assert not res.moves_legal
    rng = np.random.default_rng(0)
    raw = text.encode()
    for _ in range(300):
        b = bytearray(raw)
        for _ in range(int(rng.integers(1, 6))):
            b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        cut = bytes(b[: int(rng.integers(0, len(b) + 1))])
        r = parse_trace(cut, root, choice=tr.choice)
        assert isinstance(r.ok, bool) and r.final_minimax in (True, False)
    assert not parse_trace(b"", root).complete
    assert not parse_trace(bytes(range(256)) * 4, game="connect_four").ok


def test_terminal_children_and_few_moves():
    # tic-tac-toe: x wins at once with the top move (a finished child), 5 legal moves for breadth 8
    s = _core.State("tictactoe")
    for m in ("a1", "b1", "a2", "b2"):
        s.push(m)
    tree = build_search_tree(s, make_annotator("tictactoe"), 3, 8)
    tr = write_trace(tree, 8, 2)
    assert "[%top_all invalid : \"1-0\"]" in tr.target
    res = parse_trace(tr.text, s, choice=tr.choice)
    assert all(all_true(res).values()), (all_true(res), res.errors)
    assert len(res.nodes[0].children) == len(s.legal_moves)
    finished = [n for n in res.nodes if n.terminal]
    assert finished and all(not n.children and n.value == 0 for n in finished)
    assert res.final_move == "a3" and res.nodes[0].value == 63


def test_writer_refuses_bad_trees(c4_tree):
    with pytest.raises(ValueError, match="breadth"):
        write_trace(c4_tree, 0, 1)
    with pytest.raises(ValueError, match="depth"):
        write_trace(c4_tree, 2, 5)
    with pytest.raises(ValueError, match="no child"):
        write_trace(c4_tree, 6, 1)
    nodes = list(c4_tree.nodes)
    nodes[1] = (7, *nodes[1][1:])
    with pytest.raises(ValueError, match="parent 7"):
        write_trace(SearchTree(c4_tree.root, nodes), 2, 1)
    parent, action, off, acts, vals, best = c4_tree.packed()
    with pytest.raises(ValueError, match="'values' has the wrong length"):
        _core.mav_trace_write(c4_tree.root, (parent, action, off, acts, vals[:-1], best), 2, 1)
    with pytest.raises(ValueError, match="offset"):
        _core.mav_trace_write(c4_tree.root, (parent, action, off[::-1].copy(), acts, vals, best), 2, 1)
    with pytest.raises(TypeError, match="packed"):
        _core.mav_trace_write(c4_tree.root, c4_tree.nodes, 2, 1)
    with pytest.raises(ValueError, match="breadth"):
        trace_prompt(_core.State("tictactoe"), 0, 1)
    finished = _core.State("tictactoe")
    for m in ("a1", "b1", "a2", "b2", "a3"):
        finished.push(m)
    assert finished.is_terminal() and build_search_tree(finished, make_annotator("tictactoe")) is None
    with pytest.raises(ValueError, match="finished"):
        write_trace(SearchTree(finished, [(-1, -1, None, None, -1)]), 2, 1)


def test_metrics_aggregate(c4_tree):
    good = parse_trace(write_trace(c4_tree, 2, 1).text, c4_tree.root)
    bad = parse_trace("Minimax breadth=2 depth=1\n", c4_tree.root)
    m = trace_metrics([good, bad])
    assert m["traces"] == 2 and m["shape_ok"] == 0.5 and m["parsed_ok"] == 0.5


@pytest.mark.parametrize("game", ["chess", "hex", "gardner", "chess960"])
def test_other_games_round_trip(game):
    s = _core.State(game)
    tree = build_search_tree(s, random_annotate(1), 2, 3)
    for b, d in ((2, 1), (3, 2)):
        tr = write_trace(tree, b, d)
        res = parse_trace(tr.text, s, choice=tr.choice)
        assert res.errors == [] and all(all_true(res).values())


@pytest.mark.slow
def test_chess_stockfish_traces_parse_back_into_the_tree():
    from mavgame.engines.uci import find_stockfish
    path = find_stockfish()
    if not path:
        pytest.skip("stockfish is not installed")
    ann = make_annotator("chess", {"engine": path, "nodes": 2000})
    try:
        for moves in ((), ("e2e4", "e7e5", "g1f3"), ("d2d4", "g8f6", "c2c4", "e7e6", "b1c3", "f8b4")):
            s = _core.State("chess")
            for m in moves:
                s.push(m)
            tree = build_search_tree(s, ann, depth=2, breadth=3)
            assert tree is not None and len(tree) == 13
            tr = write_trace(tree, 3, 2)
            res = parse_trace(tr.text, s, choice=tr.choice)
            assert res.errors == [] and all(all_true(res).values())
            assert res.paths() == expected_paths(tree, 3, 2)
            for path, node in zip(res.paths(), res.nodes):
                i = 0
                st = s.copy()
                for m in path:  # follow the tree's own links to the node of this path
                    a = st.parse_move(m)
                    i = next(j for j, n in enumerate(tree.nodes) if n[0] == i and n[1] == a)
                    st.push(a)
                _p, _a, acts, vals, best = tree.nodes[i]
                want = {st.action_to_str(int(a)): int(mav.bucket(v)) for a, v in zip(acts, vals)}
                assert {e[0]: e[2] for e in node.top} == want
    finally:
        getattr(ann, "close", lambda: None)()


# ---- the full child form: each child repeats %prev_state and %prev_action -------------------------

def test_full_form_round_trip_every_game(c4_tree):
    """Every game (chess at breadth 3 depth 2): the full form reads back with every check true, each
    child's input lines are its parent's %state and the move of its name, exactly as MAV writes them."""
    trees = [(c4_tree, "connect_four")]
    for game in ("chess", "hex", "gardner", "chess960", "tictactoe"):
        trees.append((build_search_tree(_core.State(game), random_annotate(2), 2, 3), game))
    for tree, game in trees:
        for b, d in ((1, 1), (2, 1), (3, 2)):
            short, full = write_trace(tree, b, d), write_trace(tree, b, d, form="full")
            assert full.prompt == short.prompt and (full.value, full.choice) == (short.value, short.choice)
            res = parse_trace(full.text, tree.root, choice=full.choice, form="full")
            assert res.errors == [] and all(all_true(res).values()), (game, b, d, res.errors)
            assert res.paths() == expected_paths(tree, b, d)
            assert [n.prev_agrees for n in res.nodes] == [None] + [True] * (len(res.nodes) - 1)
            lines = full.text.splitlines()
            state_line = {0: lines[2]}  # the root's: the prompt's
            for i, node in enumerate(res.nodes[1:], 1):
                k = node.line - 1  # the node's "Evaluation for node" line, 0-based
                assert lines[k + 1] == "[%prev_state " + state_line[node.parent][len("[%state "):]
                assert lines[k + 2] == f"[%prev_action {node.move}]"
                assert lines[k + 3].startswith("[%state ")
                state_line[i] = lines[k + 3]
            lines = full.target.splitlines()
            # removing the repeated lines gives the short form
            assert "\n".join(x for x in lines if not x.startswith(("[%prev_state", "[%prev_action"))) + "\n" == \
                short.target
            # a text read in the other form is defective (never an exception)
            assert not parse_trace(full.text, tree.root, form="short").ok
            assert not parse_trace(short.text, tree.root, form="full").ok
    with pytest.raises(ValueError, match="'long'"):
        write_trace(c4_tree, 2, 1, form="long")
    with pytest.raises(ValueError, match="'long'"):
        parse_trace("", c4_tree.root, form="long")


def test_full_form_disagreements_are_reported(c4_tree):
    tr = write_trace(c4_tree, 2, 1, form="full")
    res = parse_trace(tr.text, c4_tree.root, choice=tr.choice, form="full")
    a, b = res.nodes[1], res.nodes[2]
    # the first child names the second child's move as its action
    bad = tr.text.replace(f"[%prev_action {a.move}]", f"[%prev_action {b.move}]", 1)
    r = parse_trace(bad, c4_tree.root, choice=tr.choice, form="full")
    assert not r.ok and r.complete and r.shape_ok and r.final_minimax
    assert [n.prev_agrees for n in r.nodes] == [None, False, True]
    assert any("%prev_action" in e and f"'{b.move}'" in e for e in r.errors), r.errors
    # the second child repeats the first child's state as its previous state
    i = bad.index("[%prev_state ", bad.index(f"Evaluation for node: <root {b.move}>"))
    j = bad.index("]", i)
    bad2 = tr.text[:i] + f"[%prev_state {a.state_text}" + tr.text[j:]
    r = parse_trace(bad2, c4_tree.root, choice=tr.choice, form="full")
    assert not r.ok and [n.prev_agrees for n in r.nodes] == [None, True, False]
    assert any("%prev_state is not its parent's %state" in e for e in r.errors), r.errors
    # garbage and cuts in the full form: never an exception
    for cut in range(0, len(tr.text), 37):
        r = parse_trace(tr.text[:cut], c4_tree.root, choice=tr.choice, form="full")
        assert not r.complete
    rng = np.random.default_rng(3)
    raw = bytearray(tr.text.encode())
    for _ in range(200):
        m = bytearray(raw)
        for p in rng.integers(0, len(m), 4):
            m[p] = int(rng.integers(0, 256))
        parse_trace(bytes(m), c4_tree.root, form="full")
    assert not parse_trace(bytes(range(256)) * 4, game="connect_four", form="full").ok


def _issues_are_whole(r):
    """Every kept issue was written: a line number, a message (a hole in the list read unwritten memory)."""
    assert len(r.issues) == min(r.n_issues, 16)
    for line, col, msg in r.issues:
        assert msg and msg.isprintable() and 0 <= line < 10_000 and 0 <= col < 100_000, (line, col, msg)


def test_issue_lists_have_no_holes(c4_tree):
    """A node whose MAV answer has more than two issues (here: a child's board with impossible counts, then its
    %prev_action unreadable, its %state and its listed values off) adds one line counting the rest; the count
    of the trace's issues never runs ahead of the list (it did: the third entry was unwritten memory)."""
    tr = write_trace(c4_tree, 2, 1, form="full")
    res = parse_trace(tr.text, c4_tree.root, choice=tr.choice, form="full")
    child = res.nodes[1]
    i = tr.text.index("[%prev_state ", tr.text.index(f"Evaluation for node: <root {child.move}>"))
    j = tr.text.index("]", i)
    board = "x" * 42   # 42 stones of one side: impossible counts
    bad = tr.text[:i] + f"[%prev_state x {board}" + tr.text[j:]
    bad = bad.replace("[%top_all ", "[%top_all 9:<ctrl99> ", 2)
    r = parse_trace(bad, c4_tree.root, choice=tr.choice, form="full")
    assert r.n_issues >= 3 and any("more issue(s) in its MAV lines" in e for e in r.errors), r.errors
    _issues_are_whole(r)
    rng = np.random.default_rng(5)
    raw = bytearray(tr.text.encode())
    for form in ("full", "short"):
        for _ in range(300):
            m = bytearray(raw)
            for p in rng.integers(0, len(m), int(rng.integers(1, 12))):
                m[p] = int(rng.integers(32, 127))
            _issues_are_whole(parse_trace(bytes(m), c4_tree.root, form=form))


def test_keyword_constants_are_the_writers_text(c4_tree):
    """TRACE_EVAL, TRACE_EXPAND, TRACE_DECISION, TRACE_PLAY and TRACE_ROOT (read by the agent and the data
    code) open the lines the C writer writes, in the order of a depth-1 trace."""
    from mavgame.mav.search_trace import TRACE_DECISION, TRACE_EVAL, TRACE_EXPAND, TRACE_PLAY, TRACE_ROOT
    t = write_trace(c4_tree, 2, 1)
    lines = t.target.splitlines()
    assert lines[0] == TRACE_EVAL + TRACE_ROOT
    expand = [ln for ln in lines if ln.startswith(TRACE_EXPAND)]
    assert len(expand) == 1 and expand[0].startswith(TRACE_EXPAND + TRACE_ROOT + ": ")
    assert sum(ln.startswith(TRACE_EVAL + TRACE_ROOT[:-1] + " ") for ln in lines) == 2
    assert any(ln.startswith(TRACE_DECISION + TRACE_ROOT) for ln in lines)
    assert lines[-1].startswith(TRACE_PLAY) and lines[-1].endswith("!")

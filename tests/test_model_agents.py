"""MAV agents (greedy, MAV-MCTS) and the MAV evaluator, driven by a stand-in model that knows the answers.

``OracleModel`` is a :class:`mavgame.model.inference.MAVModel` whose ``generate`` reads the state out of each
prompt (plain form, or the transition form that state-tracking MCTS sends) and writes the exact MAV target
for it (``mavgame.mav.target``), with a 64-bucket distribution for every listed move, as ``MAVOutput``. With
the perfect tic-tac-toe oracle (exact negamax values, one-hot buckets) the agents must play perfectly; with
hand-made distributions they must follow the scoring rules (mean / max, %best_action among near ties).
The agent specs are also exercised with a real exported (random-weight) model through a short match.
"""
from types import SimpleNamespace

import numpy as np
import pytest

import mavgame
from mavgame import mav
from mavgame.agents import make_agent
from mavgame.play.league import Opening, match
from mavgame.search.mcts import MCTS
from mavgame.search.results import SearchError
from mavgame.agents.mav import MAVEvaluator, MAVGreedyAgent, MAVMCTSAgent, choose_move, mav_mcts_agent
from mavgame.model.config import MAVConfig
from mavgame.datasets.symmetry import mirror_state_text
from mavgame.datasets import make_annotator
from mavgame.model.export import expected_shapes, export_model
from mavgame.mav import vocab_fingerprint
from mavgame.model.inference import MAVModel, MAVOutput, bucket_midpoints

GAME = "tictactoe"
MIDS = bucket_midpoints()
TOK = mav.Tokenizer()

# Positions where exactly one move wins and it is not an immediate win (a fork), with that move.
FORCED_WINS = [
    ("o../.../xox x", "c3"),   # c3 wins; b2, b3, c2 draw, a2 loses
    (".o./.../xox x", "b2"),   # b2 wins; every other move loses
    ("x../o../xox o", "b2"),   # o to move; b2 wins, every other move loses
]


def one_hot(b: int) -> np.ndarray:
    d = np.zeros(64, np.float32)
    d[int(b)] = 1.0
    return d


def perfect_oracle():
    """state -> ({move: one-hot distribution at the bucket of its exact value}, best move)."""
    annotate = make_annotator(GAME)

    def oracle(state):
        vals, best = annotate(state)
        return {m: one_hot(mav.bucket(v)) for m, v in vals.items()}, best
    return oracle


def fixed_oracle(dists_by_text, fallback=None):
    """Hand-made distributions for some positions (by state text), the perfect oracle elsewhere."""
    fallback = fallback or perfect_oracle()

    def oracle(state):
        if state.text() in dists_by_text:
            return dists_by_text[state.text()]
        return fallback(state)
    return oracle


class OracleModel(MAVModel):
    """A MAV model that answers every prompt with the exact target of ``oracle`` (see the module doc)."""

    def __init__(self, oracle=None, game: str = GAME):
        cfg = MAVConfig(vocab_size=TOK.size, d_model=8, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=8,
                        max_seq_len=512)
        super().__init__(None, cfg, str(TOK.version), {"game": game, "vocab_fingerprint": vocab_fingerprint(TOK)},
                         TOK)
        self.oracle = oracle or perfect_oracle()
        self.prompts_seen = []

    def answer(self, prompt: str) -> MAVOutput:
        pr = mav.parse(self.game, prompt)
        assert pr.header is not None, prompt
        commands = " ".join(pr.header.split()[2:-1])
        kw = {}
        if pr.transition:
            assert pr.prev.valid, prompt
            prev = mavgame.State(self.game, pr.prev.text)
            state = prev.copy()
            state.push(pr.prev_action)
            kw = dict(prev_state=prev, prev_action=pr.prev_action)
        else:
            assert pr.cur.valid and pr.cur.is_input, prompt
            state = mavgame.State(self.game, pr.cur.text)
        dists, ann = {}, None
        if not state.is_terminal():
            dists, best = self.oracle(state)
            # the written bucket is the mode of the distribution (what greedy decoding writes)
            ann = {"values": {m: float(MIDS[int(np.argmax(d))]) for m, d in dists.items()}, "best": best}
        text = mav.target(state, ann, commands, **kw)
        check = mav.parse(self.game, prompt + text, true_state=state)
        assert check.ok and check.complete, (prompt, text, check.errors)
        value_dists = {}
        for e in check.top:
            if e.move in dists and e.move not in value_dists:
                value_dists[e.move] = dists[e.move]
        return MAVOutput(text, TOK.encode(text).tolist(), True, value_dists)

    def generate(self, prompts, max_new_tokens=0, batch_size=64):
        self.prompts_seen.extend(prompts)
        return [self.answer(p) for p in prompts]


def move_str(state, mv) -> str:
    return state.action_to_str(int(mv)) if not isinstance(mv, str) else mv


@pytest.fixture(scope="module")
def perfect():
    return OracleModel()


# ---- the stand-in itself ---------------------------------------------------------------------------------

def test_oracle_model_answers_exactly(perfect):
    annotate = make_annotator(GAME)
    for text, win in FORCED_WINS:
        st = mavgame.State(GAME, text)
        vals, best = annotate(st)
        (pr, out), = perfect.analyse([st])
        assert out.text == mav.target(st, {"values": vals, "best": best}) and out.finished
        assert TOK.decode(out.ids) == out.text
        assert pr.ok and pr.best == best == win and pr.n_correct == len(vals) == pr.ref_n_legal
        for scoring in ("mean", "max"):
            got = out.values(scoring)
            assert got.keys() == vals.keys()
            for m, v in vals.items():
                assert got[m] == pytest.approx(MIDS[mav.bucket(v)])
    # a transition prompt (what state-tracking MCTS sends) is answered with the state after the move
    prev = mavgame.State(GAME, "o../.../xox x")
    after = prev.copy()
    after.push("c3")
    p = mav.prompt(after, "%prev_state %prev_action %state %top_all %best_action", prev_state=prev,
                   prev_action="c3")
    out = perfect.generate([p])[0]
    pr = mav.parse(GAME, p + out.text, true_state=after)
    assert pr.ok and pr.cur.correct is True and pr.best in after.legal_moves


# ---- MAV-MCTS ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tracking", [False, True], ids=["engine", "state_tracking"])
@pytest.mark.parametrize("text,win", FORCED_WINS)
def test_mav_mcts_finds_the_forced_win(text, win, tracking):
    model = OracleModel()
    agent = mav_mcts_agent(model, sims=32, batch_size=4, state_tracking=tracking)
    assert isinstance(agent, MAVMCTSAgent)
    agent.setup(GAME, seed=7)
    st = mavgame.State(GAME, text)
    mv = agent.act(st)
    assert move_str(st, mv) == win and st.text() == text
    assert agent.stats == {"moves": 1, "random_fallback": 0}
    res = agent._mcts.last_result
    agent._mcts.check()
    assert res.best_move == win and not res.hallucinated.any()
    assert res.visits[res.moves.index(win)] == res.visits.max()
    # the evaluator's value of the winning edge is the top bucket's midpoint, the others lower
    assert res.values[res.moves.index(win)] == pytest.approx(MIDS[63])
    assert all(v < 0.6 for m, v in zip(res.moves, res.values) if m != win)
    ev = agent.evaluator
    assert ev.evaluations >= 2 and ev.generated == len(model.prompts_seen)
    transition = [p for p in model.prompts_seen if "%prev_state" in p]
    if tracking:   # the model was the world model: child states came from its answers
        assert transition
    else:
        assert not transition


def test_mav_mcts_never_loses_with_perfect_values():
    model = OracleModel()
    agent = mav_mcts_agent(model, sims=24, batch_size=4, name="mav-mcts")
    res = match(agent, "random", GAME, openings=None, rounds=2, progress=False)
    assert len(res) == 12
    for g in res.games:
        mine_first = g.first == "mav-mcts"
        assert g.result in ("1/2-1/2", "1-0" if mine_first else "0-1"), g
    assert agent.stats["random_fallback"] == 0 and agent.stats["moves"] > 0


# ---- MAV greedy ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("scoring", ["mean", "max"])
def test_greedy_plays_the_best_move(perfect, scoring):
    agent = MAVGreedyAgent(perfect, scoring=scoring, seed=0)
    agent.setup(GAME, seed=1)
    for text, win in FORCED_WINS:
        st = mavgame.State(GAME, text)
        assert move_str(st, agent.act(st)) == win and st.text() == text
    assert agent.stats == {"moves": 3, "from_values": 3, "from_best_action": 0, "random_fallback": 0}


def test_greedy_perfect_draws_against_minimax(perfect):
    res = match(MAVGreedyAgent(perfect, name="mav"), "minimax", GAME, openings=None, progress=False)
    assert len(res) == 6 and all(g.result == "1/2-1/2" for g in res.games)


def test_choose_move_rules():
    vals = {"a1": 0.70, "b2": 0.69, "c3": 0.60}
    assert choose_move(vals, None, 0.02, True) == "a1"
    assert choose_move(vals, "b2", 0.02, True) == "b2"        # within the tie window: %best_action decides
    assert choose_move(vals, "b2", 0.02, False) == "a1"       # ... unless it is switched off
    assert choose_move(vals, "c3", 0.02, True) == "a1"        # outside the window: the values decide
    assert choose_move(vals, "c3", 0.2, True) == "c3"         # a wider window takes it in
    assert choose_move(vals, "zz", 0.02, True) == "a1"        # an unknown best move is ignored
    assert choose_move({}, "a1", 0.02, True) is None


def _empty_board_dists(buckets):
    s = mavgame.State(GAME)
    d = {m: one_hot(20) for m in s.legal_moves}
    d.update({m: (one_hot(b) if np.isscalar(b) else b) for m, b in buckets.items()})
    return s, d


@pytest.mark.parametrize("best,tie,use_best,expected", [
    ("b2", 0.02, True, "b2"),    # b2 is one bucket (1/64 < 0.02) below a1: near-tied, %best_action wins
    ("b2", 0.02, False, "a1"),
    ("b2", 0.01, True, "a1"),    # a narrower window leaves b2 out
    ("c3", 0.02, True, "a1"),    # c3 (bucket 20) is far outside the window
    ("a1", 0.02, True, "a1"),
])
def test_greedy_uses_best_action_among_near_ties(best, tie, use_best, expected):
    s, d = _empty_board_dists({"a1": 40, "b2": 39})
    model = OracleModel(fixed_oracle({s.text(): (d, best)}))
    agent = MAVGreedyAgent(model, tie=tie, use_best_action=use_best)
    mv, pr, out = agent.decide(s)
    assert pr.best == best and out.values()["a1"] == pytest.approx(MIDS[40])
    assert mv == expected and move_str(s, agent.act(s)) == expected


def _bimodal():
    """a1: 40% at the top bucket, 60% near zero (mode: a win, mean: about 0.41); b2: surely 0.633."""
    p = np.zeros(64, np.float32)
    p[63], p[0], p[1] = 0.4, 0.3, 0.3
    return p, (0.4 * MIDS[63] + 0.3 * MIDS[0] + 0.3 * MIDS[1])


def test_mean_and_max_scoring_differ_on_a_bimodal_distribution():
    p, mean_a1 = _bimodal()
    s, d = _empty_board_dists({"a1": p, "b2": 40})
    model = OracleModel(fixed_oracle({s.text(): (d, "a1")}))
    (pr, out), = model.analyse([s])
    assert out.values("mean")["a1"] == pytest.approx(mean_a1) and mean_a1 < MIDS[40]
    assert out.values("max")["a1"] == pytest.approx(MIDS[63])
    assert out.values("mean")["b2"] == pytest.approx(MIDS[40]) == out.values("max")["b2"]
    assert move_str(s, MAVGreedyAgent(model, scoring="max").act(s)) == "a1"
    assert move_str(s, MAVGreedyAgent(model, scoring="mean").act(s)) == "b2"
    with pytest.raises(ValueError, match="scoring"):
        MAVGreedyAgent(model, scoring="median")


class ScriptedModel(OracleModel):
    """Answers every prompt with the same (possibly wrong) output: a text and value distributions."""

    def __init__(self, text, dists=None):
        super().__init__()
        self.text = text
        self.dists = dists or {}

    def generate(self, prompts, max_new_tokens=0, batch_size=64):
        self.prompts_seen.extend(prompts)
        return [MAVOutput(self.text, TOK.encode(self.text).tolist(), True, dict(self.dists)) for _ in prompts]


def test_greedy_falls_back_on_unusable_output():
    s = mavgame.State(GAME, "o../.../xox x")
    agent = MAVGreedyAgent(ScriptedModel("[%top_all]\n[%best_action b3]\n"), seed=0)
    assert move_str(s, agent.act(s)) == "b3"
    assert agent.stats["from_best_action"] == 1 and agent.stats["random_fallback"] == 0
    agent = MAVGreedyAgent(ScriptedModel("[%top_all a1:<ctrl63>]\n[%best_action a1]\n"), seed=0)  # a1 is taken
    moves = {move_str(s, agent.act(s)) for _ in range(20)}
    assert moves <= set(s.legal_moves) and len(moves) > 1
    assert agent.stats["random_fallback"] == 20 and agent.stats["from_values"] == 0


def test_greedy_mirror_plays_perfectly_with_perfect_values(perfect):
    agent = MAVGreedyAgent(perfect, mirror=True, seed=0)
    assert agent.name == "mav-mirror"
    for text, win in FORCED_WINS:
        st = mavgame.State(GAME, text)
        perfect.prompts_seen.clear()
        assert move_str(st, agent.act(st)) == win and st.text() == text
        images = [mav.parse(GAME, p).cur.text for p in perfect.prompts_seen]
        assert images == [text, mirror_state_text(GAME, text)]        # one position is its own image
    assert agent.stats == {"moves": 3, "from_values": 3, "from_best_action": 0, "random_fallback": 0}


def test_greedy_mirror_averages_the_two_views():
    """c3 leads in the plain view (bucket 40 against b2's 38) but its image a3 is worth bucket 30 in the
    mirrored view: the average (about 0.555) falls under b2 (0.602 in both views), so mirror=1 plays b2."""
    s = mavgame.State(GAME, "o../.../xox x")
    m = mavgame.State(GAME, mirror_state_text(GAME, s.text()))
    assert m.text() == "..o/.../xox x"
    plain = {mv: one_hot(10) for mv in s.legal_moves}
    plain.update({"c3": one_hot(40), "b2": one_hot(38)})
    image = {mv: one_hot(10) for mv in m.legal_moves}
    image.update({"a3": one_hot(30), "b2": one_hot(38)})
    model = OracleModel(fixed_oracle({s.text(): (plain, "c3"), m.text(): (image, "a3")}))
    assert move_str(s, MAVGreedyAgent(model).act(s)) == "c3"
    mv, pr, out = MAVGreedyAgent(model, mirror=True).decide(s)
    assert mv == "b2" and pr.best == "c3" and out.values()["c3"] == pytest.approx(MIDS[40])   # plain view's
    with pytest.raises(ValueError, match="'hex'"):
        MAVGreedyAgent(OracleModel(game="hex"), mirror=True)


def _solved_positions(seed: int, n: int):
    """(the solver annotator, n records of live 14-stone positions of random games whose moves differ in value)."""
    annotate = make_annotator("connect_four", {"max_nodes": 200_000})
    rng = np.random.default_rng(seed)
    recs = []
    while len(recs) < n:
        s = mavgame.State("connect_four")
        for _ in range(14):
            if not s.is_terminal():
                s.push(int(rng.choice(s.legal_actions())))
        ann = None if s.is_terminal() else annotate(s)
        if ann and len(set(ann[0].values())) > 1:
            recs.append({"state": s.text(), "values": ann[0], "best": ann[1], "result": "*", "ply": 14})
    return annotate, recs


def _solver_oracle(annotate, flip):
    """An OracleModel oracle with the solver's values, turned upside down (1 - v) in the states where flip(state)."""
    def oracle(state):
        vals, _best = annotate(state)
        if flip(state):
            vals = {m: 1.0 - v for m, v in vals.items()}
        return {m: one_hot(mav.bucket(v)) for m, v in vals.items()}, max(vals, key=vals.get)
    return oracle


def test_mav_eval_greedy_table_scores_the_agents_moves(capsys):
    """mavgame.analysis.mav_eval --greedy: a model with the solver's values plays a best move everywhere, in both
    views and both scorings; one whose values are turned upside down does not."""
    annotate, recs = _solved_positions(seed=3, n=6)
    from mavgame.analysis import mav_eval as tool
    good = tool.greedy_table(OracleModel(_solver_oracle(annotate, lambda st: False), game="connect_four"), recs)
    assert set(good) == {"mav", "mav-mirror", "mav-max", "mav-max-mirror"}
    assert all(r["all"] == 1.0 for r in good.values())
    bad = tool.greedy_table(OracleModel(_solver_oracle(annotate, lambda st: True), game="connect_four"), recs)
    assert all(r["all"] == 0.0 for r in bad.values())          # it plays a worst move, never a best one
    assert "mav-mirror | 1.000" in capsys.readouterr().out


def test_mav_eval_lookahead_table_searches_the_children(capsys):
    """mavgame.analysis.mav_eval --lookahead: with the solver's values everywhere every breadth plays a best move; with
    the root's values turned upside down but the children's exact, the greedy move (top 1) is never a best move
    and the two-ply minimax over all moves always is: the table reads the children's answers."""
    annotate, recs = _solved_positions(seed=5, n=5)
    from mavgame.analysis import mav_eval as tool
    good = tool.lookahead_table(OracleModel(_solver_oracle(annotate, lambda st: False), game="connect_four"), recs)
    assert set(good) == {"top1", "top2", "top4", "all"}
    assert all(r["all"] == 1.0 for r in good.values())
    roots_flipped = _solver_oracle(annotate, lambda st: sum(ch in "xo" for ch in st.text().split()[0]) == 14)
    flipped = tool.lookahead_table(OracleModel(roots_flipped, game="connect_four"), recs)
    assert flipped["top1"]["all"] == 0.0 and flipped["all"]["all"] == 1.0
    assert "two-ply over | all (5)" in capsys.readouterr().out


# ---- the evaluator -------------------------------------------------------------------------------------

def _request(state):
    """An engine-mode request as the MAV evaluator reads it."""
    return SimpleNamespace(prompt=mav.prompt(state), parent_text=None, legal_actions=state.legal_actions(),
                           legal_moves=state.legal_moves)


@pytest.mark.parametrize("scoring", ["mean", "max"])
def test_evaluator_scoring_reaches_the_search(scoring):
    p, mean_a1 = _bimodal()
    s, d = _empty_board_dists({"a1": p, "b2": 40})
    model = OracleModel(fixed_oracle({s.text(): (d, "a1")}))
    ev = MAVEvaluator(model, scoring=scoring)
    (out,) = ev([_request(s)])
    want_a1 = MIDS[63] if scoring == "max" else mean_a1
    assert out["values"]["a1"] == pytest.approx(want_a1) and out["values"]["b2"] == pytest.approx(MIDS[40])
    assert set(out["values"]) == set(s.legal_moves)
    res = MCTS(ev, num_simulations=8, batch_size=2, seed=3).search(s)
    assert res.values[res.moves.index("a1")] == pytest.approx(want_a1, abs=1e-6)
    # state tracking: the same values, from the parsed output
    res = MCTS(MAVEvaluator(model, scoring=scoring), num_simulations=8, batch_size=2, seed=3,
               state_tracking=True, game=GAME).search(s)
    assert res.values[res.moves.index("a1")] == pytest.approx(want_a1, abs=1e-6)


def test_evaluator_engine_mode_keeps_legal_moves_only():
    s = mavgame.State(GAME, "o../.../xox x")
    text = "[%top_all a1:<ctrl63> c3:<ctrl10>]\n[%best_action a1]\n"     # a1 is taken
    ev = MAVEvaluator(ScriptedModel(text, {"a1": one_hot(63), "c3": one_hot(10)}))
    (out,) = ev([_request(s)])
    assert out == {"values": {"c3": pytest.approx(MIDS[10])}}
    bad = "[%top_all a1:<ctrl63>]\n[%best_action a1]\n"
    ev = MAVEvaluator(ScriptedModel(bad, {"a1": one_hot(63)}))
    assert ev([_request(s)]) == [bad]      # no legal value: the text goes to the search, which marks it
    with pytest.raises(SearchError, match="found no move.*4 invalid") as e:
        MCTS(ev, num_simulations=4).search(s)
    assert e.value.stats["invalid"] == 4


def test_evaluator_cache_counts_and_evicts():
    model = OracleModel()
    a, b, c = (mavgame.State(GAME, t) for t, _ in FORCED_WINS)
    ev = MAVEvaluator(model, cache_size=2)
    first = ev([_request(a), _request(b)])
    assert ev.generated == 2 and ev.cache_hits == 0 and ev.evaluations == 2 and len(model.prompts_seen) == 2
    assert first[0] != first[1]
    again = ev([_request(b), _request(a)])
    assert again == first[::-1]
    assert ev.generated == 2 and ev.cache_hits == 2 and len(model.prompts_seen) == 2
    ev([_request(c)])                       # evicts the least recently used (b)
    assert ev.generated == 3 and len(ev._cache) == 2
    ev([_request(a)])
    assert ev.generated == 3 and ev.cache_hits == 3
    ev([_request(b)])
    assert ev.generated == 4 and ev.cache_hits == 3 and len(ev._cache) == 2
    assert ev.generated + ev.cache_hits == ev.evaluations == 7
    plain = MAVEvaluator(model, cache_size=0)
    plain([_request(a)])
    plain([_request(a)])
    assert plain.generated == 2 and plain.cache_hits == 0 and not plain._cache
    with pytest.raises(ValueError, match="cache_size"):
        MAVEvaluator(model, cache_size=-1)


@pytest.mark.parametrize("cache_size", [0, 10])
def test_evaluator_generates_a_repeated_prompt_once_per_batch(cache_size):
    model = OracleModel()
    a, b = (mavgame.State(GAME, t) for t, _ in FORCED_WINS[:2])
    ev = MAVEvaluator(model, cache_size=cache_size)
    out = ev([_request(a), _request(a), _request(b)])
    assert out[0] == out[1] != out[2] and len(model.prompts_seen) == 2 and ev.generated == 2
    assert ev.cache_hits == 1 and ev.generated + ev.cache_hits == ev.evaluations


@pytest.mark.parametrize("tracking", [False, True], ids=["engine", "state_tracking"])
def test_evaluator_cache_changes_no_search(tracking):
    st = mavgame.State(GAME)
    kw = dict(num_simulations=100, batch_size=4, seed=5, state_tracking=tracking, game=GAME)
    cached_model, plain_model = OracleModel(), OracleModel()
    cached = MAVEvaluator(cached_model, batch_size=4)
    plain = MAVEvaluator(plain_model, batch_size=4, cache_size=0)
    r1 = MCTS(cached, **kw).search(st)
    r2 = MCTS(plain, **kw).search(st)
    assert r1.moves == r2.moves and r1.visits.tolist() == r2.visits.tolist()
    assert np.array_equal(r1.q, r2.q, equal_nan=True) and r1.pv == r2.pv
    assert cached.evaluations == plain.evaluations == plain.generated
    assert cached.generated + cached.cache_hits == cached.evaluations
    assert cached.generated == len(set(cached_model.prompts_seen)) == len(cached_model.prompts_seen)
    if not tracking:   # tic-tac-toe transposes: some leaves are the same position (same prompt)
        assert cached.cache_hits > 0
    first = cached.generated
    r3 = MCTS(cached, **kw).search(st)
    assert r3.visits.tolist() == r1.visits.tolist() and cached.generated == first


# ---- agent specs with an exported model ----------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_export(tmp_path_factory):
    """A real exported tic-tac-toe MAV model (random weights: it plays, badly, through every code path)."""
    cfg = MAVConfig(vocab_size=TOK.size, d_model=16, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=32, max_seq_len=64)
    rng = np.random.default_rng(0)
    w = {k: rng.normal(0, 0.3, size=s).astype(np.float32) for k, s in expected_shapes(cfg).items()}
    path = tmp_path_factory.mktemp("mav") / "ttt.safetensors"
    export_model(path, w, cfg, str(TOK.version), info={"game": GAME, "vocab_fingerprint": vocab_fingerprint(TOK)})
    return path


def test_agent_specs_build_and_play_a_match(tiny_export):
    spec = f"mav_mcts:sims=16,batch=4,state_tracking=1,model={tiny_export},backend=numpy"
    agent = make_agent(spec)
    assert isinstance(agent, MAVMCTSAgent) and agent.spec == spec
    assert agent.sims == 16 and agent.kwargs["batch_size"] == 4 and agent.kwargs["state_tracking"] is True
    assert agent.kwargs["game"] == GAME and agent.games == (GAME,) and agent.name == "mav-mcts-st-16"
    assert agent.evaluator.model.path == str(tiny_export) and agent.evaluator.model.game == GAME
    greedy = make_agent(f"mav:scoring=max,best=0,tie=0.05,model={tiny_export},backend=numpy")
    assert isinstance(greedy, MAVGreedyAgent) and greedy.scoring == "max" and greedy.tie == 0.05
    assert not greedy.use_best_action and greedy.model is agent.evaluator.model   # loaded once per path
    assert make_agent(f"mav:mirror=1,model={tiny_export},backend=numpy").mirror
    with pytest.raises(ValueError, match="mirror must be 0 or 1, not 2"):
        make_agent(f"mav:mirror=2,model={tiny_export},backend=numpy")
    engine = make_agent(f"mav_mcts:sims=8,batch=2,scoring=max,cache=0,model={tiny_export},backend=numpy")
    assert engine.kwargs["state_tracking"] is False and engine.evaluator.scoring == "max"
    assert engine.evaluator.cache_size == 0

    greedy = make_agent(f"mav:mirror=1,scoring=max,model={tiny_export},backend=numpy")
    res = match(spec, greedy, GAME, openings=[Opening("corner", ("a1",))], progress=False, max_plies=8)
    assert len(res) == 2
    for g in res.games:
        s = Opening("corner", ("a1",)).state(GAME)
        for m in g.moves:
            s.push(m)        # every move was legal
        assert g.result in ("1-0", "0-1", "1/2-1/2") and (s.is_terminal() or len(g.moves) == 8)
    with pytest.raises(ValueError, match="scoring"):
        make_agent(f"mav:scoring=median,model={tiny_export}")
    with pytest.raises(FileNotFoundError):
        make_agent(f"mav_mcts:model={tiny_export.parent / 'none.safetensors'}")
    with pytest.raises(ValueError, match="tictactoe"):
        match(spec, "random", "connect_four", openings=1, progress=False)



class CenterlessModel(OracleModel):
    """The perfect oracle, except that every answer for a position after b2 is unusable text."""

    def generate(self, prompts, max_new_tokens=0, batch_size=64):
        outs = super().generate(prompts, max_new_tokens, batch_size)
        return [MAVOutput("[%top_all zz", TOK.encode("[%top_all zz").tolist(), True, {})
                if p.split("[%state ")[-1].split("]")[0].split()[-1] == "....x...." else o
                for p, o in zip(prompts, outs)]


@pytest.mark.parametrize("invalid", [None, "exclude", "loss"])
def test_agent_invalid_option_reaches_the_search(invalid):
    """``invalid`` given to a MAV-MCTS agent (spec ``mav_mcts:...,invalid=loss``) reaches the tree: the
    unusable answer after b2 makes b2 hallucinated; by default (the paper's minus infinity) it has no visit
    and Q -inf, with invalid=loss one visit valued -1 (issue 13)."""
    s = mavgame.State(GAME)
    agent = mav_mcts_agent(CenterlessModel(), 64, batch_size=1, **({"invalid": invalid} if invalid else {}))
    agent.act(s)
    assert agent._mcts.params["invalid"] == (invalid or "exclude")
    r = agent._mcts.last_result
    i = r.moves.index("b2")
    assert r.hallucinated[i] and r.stats["invalid"] == 1 and r.best_move != "b2"
    if invalid == "loss":
        assert r.visits[i] == 1 and r.q[i] == -1.0
    else:
        assert r.visits[i] == 0 and r.q[i] == -np.inf and r.stats["dropped"] >= 1
    with pytest.raises(ValueError, match="invalid must be one of"):
        mav_mcts_agent(CenterlessModel(), 8, invalid="minus_infinity").act(s)


# ---- a model for one game refuses another (issue 21) ---------------------------------------------------

@pytest.mark.parametrize("game", ["connect_four", "chess", "hex"])
def test_agents_on_a_tictactoe_model_refuse_another_game(perfect, game):
    """Through the Python API (act without setup) as well as through setup: an error naming both games,
    never a random fallback move."""
    state = mavgame.State(game)
    greedy = MAVGreedyAgent(perfect)
    with pytest.raises(mavgame.agents.AgentError, match=f"cannot play '{game}'.*tictactoe"):
        greedy.act(state)
    assert greedy.stats["random_fallback"] == 0
    agent = mav_mcts_agent(perfect, 8)
    with pytest.raises(mavgame.agents.AgentError, match=f"cannot play '{game}'.*tictactoe"):
        agent.act(state)
    assert agent.stats["random_fallback"] == 0


def test_evaluator_on_a_tictactoe_model_refuses_another_game(perfect):
    with pytest.raises(ValueError, match="plays tictactoe, not connect_four"):
        MCTS(MAVEvaluator(perfect), num_simulations=4).search(mavgame.State("connect_four"))


def test_generate_refuses_a_single_string(tiny_export):
    model = MAVModel.load(tiny_export, backend="numpy")
    with pytest.raises(TypeError, match="list of prompts"):
        model.generate("<mav game=tictactoe> %state %top_all %best_action </mav>\n")

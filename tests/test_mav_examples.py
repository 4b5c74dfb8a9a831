"""Randomised MAV training examples: reproducibility, loss masks, the paper's variations, errors."""
import numpy as np
import pytest

from mavgame import _core, mav
from conftest import scaled


def positions(game, n, seed, max_plies=40):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        s = _core.State(game)
        for _ in range(int(rng.integers(1, max_plies))):
            if s.is_terminal():
                break
            s.push(int(rng.choice(s.legal_actions())))
        ann = None if s.is_terminal() else {m: float(rng.random()) for m in s.legal_moves}
        out.append((s, ann))
    return out


def test_reproducible_and_seed_dependent():
    items = positions("chess", 16, 1)
    a = mav.ExampleBuilder(seed=7).build(items)
    b = mav.ExampleBuilder(seed=7).build(items)
    c = mav.ExampleBuilder(seed=8).build(items)
    assert (a.tokens == b.tokens).all() and (a.loss_mask == b.loss_mask).all() and (a.lengths == b.lengths).all()
    assert a.tokens.shape != c.tokens.shape or not (a.tokens == c.tokens).all()
    # resuming from a saved generator state continues the same stream
    x = mav.ExampleBuilder(seed=3)
    x.build(items[:4])
    st = x.get_state()
    nxt = x.build(items)
    y = mav.ExampleBuilder(seed=99)
    y.set_state(st)
    assert (y.build(items).tokens == nxt.tokens).all()


def test_masks_and_texts():
    tok = mav.Tokenizer()
    items = positions("chess", scaled(40), 2)
    batch = mav.ExampleBuilder(seed=1, p_after=0.3).build(items, return_text=True)
    B, L = batch.tokens.shape
    assert batch.tokens.dtype == np.int32 and batch.loss_mask.dtype == bool and L == batch.lengths.max()
    for i, (p, t) in enumerate(batch.texts):
        n = batch.lengths[i]
        ids, m = batch.tokens[i, :n], batch.loss_mask[i, :n]
        assert ids[0] == tok.bos_id and not m[0] and ids[-1] == tok.eos_id and m[-1]
        assert (batch.tokens[i, n:] == tok.pad_id).all() and not batch.loss_mask[i, n:].any()
        k = int(np.argmax(m))  # first target token
        assert not m[:k].any() and m[k:].all()
        assert tok.decode(ids[:k]) == p and tok.decode(ids[k:]) == t
        r = mav.parse("chess", p + t, true_state=items[i][0])
        assert r.ok and r.n_illegal == 0 and r.n_missing == 0, r.errors
        assert p.startswith("<mav game=chess>") and not t.startswith("<mav")


def test_the_papers_variations_occur():
    items = positions("chess", 1, 5, max_plies=10) * 400  # cheap: not scaled
    batch = mav.ExampleBuilder(seed=11).build(items, return_text=True)
    headers = [p.splitlines()[0].split()[2:-1] for p, _ in batch.texts]
    n_legal = len(items[0][0].legal_moves)
    tops = [c for h in headers for c in h if c.startswith("%top_")]
    ks = [int(c[5:]) for c in tops if c != "%top_all"]
    assert 0.15 < tops.count("%top_all") / len(tops) < 0.35
    assert min(ks) == 1 and max(ks) > n_legal  # k beyond the number of legal moves occurs
    trans = sum(h[0].startswith("%prev_") for h in headers) / len(headers)
    assert 0.4 < trans < 0.6
    first = [h[0] for h in headers if not h[0].startswith("%prev_")]
    assert {"%state", "%fen"} <= set(first)
    both = [h for h in headers if "%state" in h and "%fen" in h]
    assert both and {h.index("%state") < h.index("%fen") for h in both} == {True, False}
    # shuffled %top order: not always value-descending
    orders = set()
    for _, t in batch.texts:
        line = [x for x in t.splitlines() if x.startswith("[%top_")][0]
        vals = [int(e.split("<ctrl")[1][:-1]) for e in line.rstrip("]").split(" ")[1:]]
        orders.add(vals == sorted(vals, reverse=True))
    assert orders == {True, False}
    # no shuffling: always value-descending
    b2 = mav.ExampleBuilder(seed=11, p_shuffle=0.0).build(items[:50], return_text=True)
    for _, t in b2.texts:
        line = [x for x in t.splitlines() if x.startswith("[%top_")][0]
        vals = [int(e.split("<ctrl")[1][:-1]) for e in line.rstrip("]").split(" ")[1:]]
        assert vals == sorted(vals, reverse=True)


@pytest.mark.parametrize("game", [g for g in _core.games()
                                  if g in ("chess960", "gardner", "connect_four", "hex", "tictactoe")])
def test_other_games(game):
    items = positions(game, scaled(20), 3)
    batch = mav.ExampleBuilder(seed=2).build(items, return_text=True)
    for (s, _), (p, t) in zip(items, batch.texts):
        r = mav.parse(game, p + t, true_state=s)
        assert r.ok and r.complete, r.errors
        if game not in ("chess960", "gardner"):
            assert "%fen" not in p and "%fen" not in t


def test_item_forms_and_errors():
    s = _core.State("chess")
    prev = s.copy()
    s.push("e2e4")
    vals = {m: 0.5 for m in s.legal_moves}
    b = mav.ExampleBuilder(seed=0, p_transition=1.0)
    r1 = b.build([(s, vals)], return_text=True)
    assert r1.texts[0][0].splitlines()[0].split()[2].startswith("%prev_")
    s_nohist = _core.State("chess", s.text())
    r2 = mav.ExampleBuilder(seed=0, p_transition=1.0).build([(s_nohist, vals, prev, "e2e4")], return_text=True)
    assert r2.texts[0] == r1.texts[0]
    r3 = mav.ExampleBuilder(seed=0, p_transition=1.0).build(
        [{"state": s_nohist, "annotation": vals, "prev_state": prev, "prev_action": "e2e4"}], return_text=True)
    assert r3.texts[0] == r1.texts[0]
    # no history, no prev: the plain form
    r4 = mav.ExampleBuilder(seed=0, p_transition=1.0).build([(s_nohist, vals)], return_text=True)
    assert not r4.texts[0][0].splitlines()[0].split()[2].startswith("%prev_")
    with pytest.raises(ValueError, match=r"items\[0\]: the example has \d+ tokens, more than max_len=10"):
        b.build([(s, vals)], max_len=10)
    with pytest.raises(ValueError, match=r"items\[1\].*not a win probability"):
        b.build([(s, vals), (s, {"e7e5": 2.0})])
    with pytest.raises(ValueError, match=r"items\[0\].*nothing to output"):
        mav.ExampleBuilder(seed=0, p_transition=0.0).build([(s, None)])
    with pytest.raises(TypeError, match=r"items\[0\] must be"):
        b.build([s])
    with pytest.raises(ValueError, match="p_top_all must be a probability"):
        mav.ExampleBuilder(p_top_all=1.5)
    with pytest.raises(ValueError, match="k_slack"):
        mav.ExampleBuilder(k_slack=-1)
    padded = b.build([(s, vals)], max_len=2000)
    assert padded.tokens.shape == (1, 2000)


def test_k_of_a_finished_position_gives_nothing_away_with_k_terminal_prev():
    """A finished position has no legal moves, so by default its %top_k asks for k <= k_slack, a hint a small
    model learns instead of the board (docs/model.md, "Finished games"); with k_terminal_prev its k is drawn
    from the previous position's range, as a live position with that many moves would draw it."""
    import collections
    import re
    fin = _core.State("connect_four")
    for m in "1212121":            # x has four in column 1; the previous position had 7 legal moves
        fin.push(m)
    assert fin.is_terminal()
    live = _core.State("connect_four")
    for m in "121212":
        live.push(m)
    ann = {m: 0.5 for m in live.legal_moves}
    assert len(ann) == 7

    def ks(item, **opts):
        texts = mav.ExampleBuilder(seed=5, p_top_all=0.0, **opts).build([item] * 3000, return_text=True).texts
        return collections.Counter(int(re.search(r"%top_(\d+)", p).group(1)) for p, _ in texts)
    old, new, lv = ks((fin, None)), ks((fin, None), k_terminal_prev=True), ks((live, ann), k_terminal_prev=True)
    assert set(old) == {1, 2, 3, 4}                            # 0 legal moves + k_slack 4
    assert set(new) == set(lv) == set(range(1, 12))            # 7 + 4, as the live position
    assert all(abs(new[k] - lv[k]) < 120 for k in lv)          # about 273 each
    assert ks((live, ann)) == lv                               # live positions are unchanged

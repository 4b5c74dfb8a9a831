"""Issue 53, items 4 and 7: the last silent wrong results refused, and every refusal naming the parameter
and the offending value (bad float parameters of the search, non-finite weights, a Connect Four book whose
header disagrees with its entries, NaN centipawns, complex evaluator values; out-of-range ints and seeds,
MAVModel.generate's sizes, and the "in use by another thread" messages)."""
import json
import math
import re
import struct
import threading
from pathlib import Path

import numpy as np
import pytest

import mavgame
from mavgame import _core
from mavgame.mav import values as mav_values
from mavgame.search.evaluator_io import EvaluatorError
from mavgame.search.mcts import MCTS
from mavgame.search.uct import playout_uct

DATA = Path(mavgame.__file__).parent / "data"
MAV_FILE = DATA / "mav_connect_four.safetensors"
POLICY_FILE = DATA / "policy_chess.safetensors"
BOOK_FILE = DATA / "c4_book.bin"
NAN, INF = float("nan"), float("inf")


def _names(exc_info, *parts):
    """The exception's message holds every part (str() of each)."""
    msg = str(exc_info.value)
    for p in parts:
        assert str(p) in msg, f"{p!r} not in {msg!r}"


# ---- item 4: bad float parameters of the search -----------------------------------------------------

@pytest.mark.parametrize("kw", [
    {"c_base": 0}, {"c_base": -1.0}, {"c_base": NAN}, {"c_base": INF},
    {"c_init": NAN}, {"c_init": -1.0}, {"c_init": INF},
    {"c_puct": NAN}, {"c_puct": -0.5}, {"c_puct": INF},
    {"eps": NAN}, {"eps": 1.5}, {"eps": -0.1},
    {"tau": NAN}, {"tau": INF}, {"tau": 0.0}, {"tau": [(0, 1.0), (10, NAN)]},
    {"fpu": NAN}, {"fpu": 1.5}, {"fpu": -INF},
    {"timeout": NAN}, {"timeout": INF}, {"timeout": -1.0},
    {"max_seconds": NAN}, {"max_seconds": -1.0},
])
def test_mcts_refuses_bad_float_parameters_at_construction(kw):
    (name, value), = kw.items()
    with pytest.raises(ValueError) as e:
        MCTS("playout", **kw)
    shown = "nan" if isinstance(value, float) and math.isnan(value) else value
    _names(e, name, shown if not isinstance(shown, list) else "nan")


def test_mcts_tree_refuses_nan_and_negative_c_base():
    for cb in (NAN, -1.0):
        with pytest.raises(ValueError, match="c_base"):
            _core.MCTSTree(None, state_tracking=True, c_base=cb)
    _core.MCTSTree(None, state_tracking=True, c_base=0.0)       # 0: the constant c_puct (the core's switch)
    with pytest.raises(ValueError, match="dirichlet_alpha"):
        _core.AZSelfPlay(mavgame.State("tictactoe"), dirichlet_alpha=NAN)
    with pytest.raises(ValueError, match="temperature"):
        _core.AZSelfPlay(mavgame.State("tictactoe"), temperature=INF)


def test_c_base_zero_no_longer_gives_nan_q_and_piled_visits():
    with pytest.raises(ValueError, match=r"c_base.*\b0\b"):
        MCTS("playout", c_base=0, num_simulations=200, seed=1).search(mavgame.State("tictactoe"))
    # the constant exploration of c_puct is still there for who asks for it
    r = MCTS("playout", c_puct=1.0, num_simulations=200, seed=1).search(mavgame.State("tictactoe"))
    assert r.best_move is not None


# ---- item 4: non-finite weights -----------------------------------------------------------------------

def _poke(src: Path, dst: Path, tensor: str, value: float) -> Path:
    """A copy of a safetensors file with element 0 of `tensor` set to `value` (in the tensor's dtype)."""
    raw = bytearray(src.read_bytes())
    (hlen,) = struct.unpack("<Q", raw[:8])
    info = json.loads(raw[8:8 + hlen])[tensor]
    at = 8 + hlen + info["data_offsets"][0]
    if info["dtype"] == "F32":
        raw[at:at + 4] = struct.pack("<f", value)
    elif info["dtype"] == "F16":
        raw[at:at + 2] = np.float16(value).tobytes()
    else:  # BF16: the high half of the float32
        raw[at:at + 2] = struct.pack("<I", struct.unpack("<I", struct.pack("<f", value))[0])[2:]
    dst.write_bytes(bytes(raw))
    return dst


@pytest.mark.parametrize("value", [NAN, INF, -INF])
def test_model_with_non_finite_weights_is_refused(tmp_path, value):
    from mavgame.model.inference import MAVModel
    bad = _poke(MAV_FILE, tmp_path / "bad.safetensors", "blocks.1.mlp.up.weight", value)
    backends = ["numpy"] + (["native"] if hasattr(_core, "MavEngine") else [])
    for backend in backends:
        with pytest.raises(ValueError) as e:
            MAVModel.load(bad, backend=backend)
        _names(e, bad, "blocks.1.mlp.up.weight")
        assert re.search("nan|inf|finite", str(e.value), re.I)


@pytest.mark.parametrize("value", [NAN, INF])
def test_policy_net_with_non_finite_weights_is_refused(tmp_path, value):
    from mavgame.policy.export import read_policy_file
    bad = _poke(POLICY_FILE, tmp_path / "bad_policy.safetensors", "tower.1.a.bias", value)
    with pytest.raises(ValueError) as e:
        _core.PolicyNet(str(bad))
    _names(e, bad, "tower.1.a.bias")
    with pytest.raises(ValueError) as e:
        _core.PolicyNet(bad.read_bytes())          # from bytes: no file to name, the tensor still named
    _names(e, "tower.1.a.bias")
    with pytest.raises(ValueError) as e:
        read_policy_file(bad)
    _names(e, bad, "tower.1.a.bias")


# ---- item 4: a Connect Four book whose header disagrees with its entries --------------------------------

def _book(lo, hi, entries):
    return struct.pack("<8sIHHQ", b"MGC4BOOK", 1, lo, hi, len(entries)) + np.asarray(entries, "<u8").tobytes()


def _key(moves: str) -> int:
    s = mavgame.State("connect_four")
    for c in moves:
        s.push(int(c) - 1)
    return int(_core.c4_book_key(s))


def test_book_header_must_agree_with_entries():
    good = BOOK_FILE.read_bytes()
    lo, hi, count = _core.c4_book_info(good)
    e = np.frombuffer(good, "<u8", offset=24).copy()
    cases = []
    # the header's plies leave out entries that are there
    cases.append((_book(lo, hi - 1, e), rf"{hi} stones.*plies {lo}\.\.{hi - 1}"))
    cases.append((_book(lo + 1, hi, e), rf"{lo} stones.*plies {lo + 1}\.\.{hi}"))
    # a score no position of its stones can have: at 8 stones the fastest win scores (43 - 8) / 2 = 17
    k8 = _key("44444433")                                   # 8 stones
    assert int(k8) in set(int(v) >> 8 for v in e)
    i8 = int(np.flatnonzero((e >> np.uint64(8)) == np.uint64(k8))[0])
    bad_score = e.copy()
    bad_score[i8] = (bad_score[i8] & ~np.uint64(0xFF)) | np.uint64(64 + 18)
    cases.append((_book(lo, hi, bad_score), r"score 18.*8 stones"))
    # a position that cannot occur: one stone, and it belongs to the side to move
    cases.append((_book(lo, hi, np.sort(np.append(e, np.uint64(2 << 8 | 64)))), r"key 0x2\b.*side to move"))
    # a terminal position (the first player's four in column 1 after 7 stones)
    kt = _key("1212121")
    cases.append((_book(lo, hi, np.sort(np.append(e, np.uint64(kt << 8 | 64)))), r"terminal|four in a row"))
    for data, msg in cases:
        with pytest.raises(ValueError, match=msg):
            _core.c4_book_info(data)
        with pytest.raises(ValueError, match=msg):
            _core.C4Solver(10).set_book(data)
    _core.C4Solver(10).set_book(good)


# ---- item 4: NaN centipawns, complex evaluator values -------------------------------------------------------

def test_win_prob_from_cp_refuses_nan_keeps_infinite():
    with pytest.raises(ValueError, match="nan"):
        mav_values.win_prob_from_cp(NAN)
    with pytest.raises(ValueError, match=r"nan.*index 1"):
        mav_values.win_prob_from_cp(np.array([10.0, NAN]))
    assert mav_values.win_prob_from_cp(INF) == 1.0 and mav_values.win_prob_from_cp(-INF) == 0.0
    with pytest.raises(TypeError, match="complex"):
        mav_values.win_prob_from_cp(np.array([1 + 2j]))


@pytest.mark.parametrize("make, shown", [
    (lambda r: np.complex128(0.5 + 0.1j), "complex"),
    (lambda r: {"value": np.complex64(0.5)}, "complex"),
    (lambda r: {"values": np.full(len(r.legal_actions), 0.5 + 0.2j)}, "complex"),
    (lambda r: {"values": {int(a): np.complex64(0.5) for a in r.legal_actions}}, "complex"),
    (lambda r: {"values": [0.5] * len(r.legal_actions), "policy": np.ones(len(r.legal_actions), np.complex64)},
     "complex"),
])
def test_complex_evaluator_values_are_refused(make, shown):
    s = mavgame.State("tictactoe")
    with pytest.raises(EvaluatorError, match=shown):
        MCTS(lambda reqs: [make(r) for r in reqs], num_simulations=4).search(s)


def test_complex_values_refused_by_the_c_bridge():
    """A callable given to the C tree directly (not through MCTS's checks)."""
    tree = _core.MCTSTree("tictactoe")
    tree.set_root(mavgame.State("tictactoe"))
    bad = [{"value": np.complex128(0.5 + 1j)}, {"values": [np.complex128(0.5)] * 9}]
    for out in bad:
        with pytest.raises((TypeError, ValueError), match="complex"):
            tree.search(lambda batch, timeout: ([out for _ in batch], None), 2)


# ---- item 7: ints that do not fit, seeds --------------------------------------------------------------------

def _int_cases():
    s = mavgame.State("tictactoe")
    big = 2 ** 31
    cases = [
        (lambda: MCTS("playout", batch_size=big), "batch_size"),
        (lambda: MCTS("playout", num_simulations=big), "num_simulations"),
        (lambda: MCTS("playout", n_max=big), "n_max"),
        (lambda: MCTS("playout", k=big), "k"),
        (lambda: MCTS("playout", playouts=big), "playouts"),
        (lambda: MCTS("playout", num_simulations=10).search(s, num_simulations=big), "num_simulations"),
        (lambda: _core.MCTSTree(None, state_tracking=True, batch_size=big), "batch_size"),
        (lambda: _core.MCTSTree(None, state_tracking=True, virtual_loss=-big - 1), "virtual_loss"),
        (lambda: _core.MCTSTree("hex", board_size=big), "board_size"),
        (lambda: _core.mcts_playout_evaluator(playouts=big), "playouts"),
        (lambda: _core.C4Solver(big), "tt_log2"),
        (lambda: mavgame.State("hex", board_size=big), "board_size"),
        (lambda: playout_uct(s, 2 ** 64), "simulations"),
        (lambda: _core.PolicyNet(str(POLICY_FILE), threads=big), "threads"),
        (lambda: _core.PolicyNet(str(POLICY_FILE), max_batch=big), "max_batch"),
        (lambda: _core.AZSelfPlay(s, num_simulations=big), "num_simulations"),
    ]
    if hasattr(_core, "MavEngine"):
        from mavgame.model.inference import MAVModel
        cases += [
            (lambda: _core.MavEngine(str(MAV_FILE), threads=big), "threads"),
            (lambda: _core.MavEngine(str(MAV_FILE), max_batch=big), "max_batch"),
            (lambda: _core.MavEngine(str(MAV_FILE), prefix_cache=big), "prefix_cache"),
            (lambda: MAVModel.load(MAV_FILE, backend="native", threads=big), "threads"),
        ]
    return cases


@pytest.mark.parametrize("i", range(len(_int_cases())))
def test_ints_that_do_not_fit_name_the_parameter(i):
    fn, name = _int_cases()[i]
    with pytest.raises((OverflowError, ValueError)) as e:
        fn()
    msg = str(e.value)
    assert re.search(rf"\b{name}\b", msg), msg
    assert re.search(r"-?\d{6,}", msg), msg                      # and the value


def test_non_integers_name_the_parameter():
    with pytest.raises(TypeError, match="batch_size"):
        _core.MCTSTree(None, state_tracking=True, batch_size=2.5)
    with pytest.raises(TypeError, match="tt_log2"):
        _core.C4Solver("20")


@pytest.mark.parametrize("seed", [-1, 2 ** 64, -(2 ** 70)])
def test_seeds_outside_0_to_2_64_are_refused(seed):
    s = mavgame.State("tictactoe")
    for fn in (lambda: MCTS("playout", seed=seed),
               lambda: _core.MCTSTree(None, state_tracking=True, seed=seed),
               lambda: playout_uct(s, 10, seed=seed),
               lambda: _core.mcts_playout_evaluator(seed=seed),
               lambda: _core.random_playouts(s, 10, seed=seed),
               lambda: _core.AZSelfPlay(s, seed=seed)):
        with pytest.raises((ValueError, OverflowError)) as e:
            fn()
        _names(e, "seed", seed)


def test_largest_seed_is_accepted():
    s = mavgame.State("tictactoe")
    top = 2 ** 64 - 1
    assert MCTS("playout", seed=top, num_simulations=20).search(s).best_move is not None
    assert playout_uct(s, 20, seed=top).best is not None
    _core.random_playouts(s, 5, seed=top)


# ---- item 7: MAVModel.generate's sizes ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def models():
    from mavgame.model.inference import MAVModel
    out = [MAVModel.load(MAV_FILE, backend="numpy")]
    if hasattr(_core, "MavEngine"):
        out.append(MAVModel.load(MAV_FILE, backend="native"))
    return out


@pytest.mark.parametrize("kw", [{"batch_size": 0}, {"batch_size": -1}, {"batch_size": 2.5},
                                {"max_new_tokens": -1}, {"max_new_tokens": 1.5}])
def test_generate_names_bad_sizes(models, kw):
    (name, value), = kw.items()
    prompt = mavgame.mav.prompt(mavgame.State("connect_four"), "%state %top_all")
    for m in models:
        with pytest.raises((ValueError, TypeError)) as e:
            m.generate([prompt], **kw)
        _names(e, name, value)


# ---- item 7: "in use by another thread" --------------------------------------------------------------------

def test_a_tree_used_from_two_threads_says_another_thread():
    tree = _core.MCTSTree("tictactoe")
    tree.set_root(mavgame.State("tictactoe"))
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def evaluator(batch, timeout):
        try:
            tree.root_visits                       # the searching thread itself, from its evaluator
        except RuntimeError as e:
            seen["own"] = str(e)
        inside.set()
        release.wait(20)
        return [None] * len(batch), None

    t = threading.Thread(target=lambda: tree.search(evaluator, 1))
    t.start()
    try:
        assert inside.wait(20)
        with pytest.raises(RuntimeError, match="another thread"):
            tree.root_visits
        with pytest.raises(RuntimeError, match="another thread"):
            tree.search(evaluator, 1)
    finally:
        release.set()
        t.join(20)
    assert "another thread" not in seen["own"] and "evaluator" in seen["own"]
    assert tree.root_visits == 0                     # usable again once the search is over

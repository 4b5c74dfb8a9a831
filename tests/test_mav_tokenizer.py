"""The MAV tokenizer: the checked-in vocabulary file, exact round trips, token boundaries, batches."""
import importlib.util
import json

import numpy as np
import pytest

from mavgame import _core, mav
from conftest import REPO, scaled


@pytest.fixture(scope="module")
def tok():
    return mav.Tokenizer()


@pytest.mark.parametrize("version", [1, 2])
def test_vocab_file_equals_c_vocabulary(version):
    tok = mav.Tokenizer(version)
    path = mav.vocab_path(version)
    assert path.exists(), "run tools/gen_vocab.py"
    data = json.loads(path.read_text())
    assert data["version"] == version and data["size"] == tok.size
    assert data["tokens"] == tok.vocab
    assert data["kinds"] == tok.kinds
    assert data["special"] == {"pad": 0, "bos": 1, "eos": 2, "ctrl0": 3}
    # byte-exact: the file is what tools/gen_vocab.py writes
    spec = importlib.util.spec_from_file_location("gen_vocab", REPO / "tools" / "gen_vocab.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert path.read_text() == gen.render(version), f"{path.name} is stale: run tools/gen_vocab.py"


def test_vocabulary_contents(tok):
    v = tok.vocab
    assert len(set(v)) == len(v), "token texts are unique"
    assert v[:3] == ["<pad>", "<bos>", "<eos>"]
    assert v[3:67] == [f"<ctrl{b}>" for b in range(64)]
    assert (tok.bucket_ids == np.arange(3, 67)).all()
    for w in ["<mav", "</mav>", "%prev_state", "%prev_fen", "%prev_action", "%state", "%fen", "%top_", "%top_all",
              "%best_action", "game", "chess", "chess960", "gardner", "connect_four", "hex", "tictactoe", "invalid"]:
        assert tok.token_to_id(w) >= 0
    # every UCI move (1968 of them, computed independently here) is one token
    files = "abcdefgh"
    uci = set()
    for f1 in range(8):
        for r1 in range(8):
            for f2 in range(8):
                for r2 in range(8):
                    if (f1, r1) == (f2, r2):
                        continue
                    df, dr = abs(f1 - f2), abs(r1 - r2)
                    if df == 0 or dr == 0 or df == dr or {df, dr} == {1, 2}:
                        uci.add(f"{files[f1]}{r1 + 1}{files[f2]}{r2 + 1}")
                    if df <= 1 and ((r1, r2) == (6, 7) or (r1, r2) == (1, 0)):
                        for p in "nbrq":
                            uci.add(f"{files[f1]}{r1 + 1}{files[f2]}{r2 + 1}{p}")
    assert len(uci) == 1968
    assert set(mav.move_tokens("chess")) == uci
    for m in uci:
        assert len(tok.encode(m)) == 1, m
    # every byte is covered: 256 single-byte tokens (char or byte kind)
    single = [i for i, k in enumerate(tok.kinds) if k in ("char", "byte")]
    assert len(single) == 256


@pytest.mark.parametrize("game", [g for g in _core.games()
                                  if g in ("chess", "chess960", "gardner", "connect_four", "hex", "tictactoe")])
def test_every_played_move_is_one_token(tok, game):
    rng = np.random.default_rng(2)
    for _ in range(scaled(10)):
        s = _core.State(game)
        for _ in range(80):
            if s.is_terminal():
                break
            for m in s.legal_moves:
                ids = tok.encode(m)
                assert len(ids) == 1 and tok.vocab[ids[0]] == m, (game, m)
            acts = s.legal_actions()
            s.push(int(acts[rng.integers(len(acts))]))


def test_state_fields_are_one_token_each(tok):
    s = _core.State("chess")
    for m in ["e2e4", "c7c5", "e4e5", "d7d5"]:
        s.push(m)
    st = mav.state_text(s)
    ids = tok.encode(st)
    # side, 64 squares, castling 4, en passant 1 (a square token), 3 + 4 clock digits, 5 spaces
    assert len(ids) == 1 + 64 + 4 + 1 + 3 + 4 + 5
    assert tok.vocab[ids[2 + 64 + 1 + 4 + 1]] == "d6"
    line = "[%top_3 e5d6:<ctrl40> g1f3:<ctrl33> a2a3:<ctrl20>]"
    assert [tok.vocab[i] for i in tok.encode(line)] == [
        "[", "%top_", "3", " ", "e5d6", ":", "<ctrl40>", " ", "g1f3", ":", "<ctrl33>", " ", "a2a3", ":", "<ctrl20>",
        "]"]
    assert [tok.vocab[i] for i in tok.encode("<mav game=connect_four> %state %top_all </mav>")] == [
        "<mav", " ", "game", "=", "connect_four", ">", " ", "%state", " ", "%top_all", " ", "</mav>"]


def test_round_trip_any_text(tok):
    rng = np.random.default_rng(8)
    alphabet = list("<ctrl>%top_all e2e4 a1 [] \"1-0\" x.o/\n") + ["é", "\x00", "\x7f", "☃"]
    for _ in range(scaled(300)):
        n = int(rng.integers(0, 80))
        s = "".join(alphabet[int(i)] for i in rng.integers(0, len(alphabet), n))
        ids = tok.encode(s)
        assert ids.dtype == np.int32
        assert tok.decode(ids) == s
    raw = bytes(range(256)) * 2
    assert tok.decode_bytes(tok.encode(raw)) == raw
    # a whole MAV text
    st = _core.State("chess")
    text = mav.prompt(st, "%fen %state %top_all %best_action") + mav.target(
        st, {m: 0.5 for m in st.legal_moves}, "%fen %state %top_all %best_action")
    assert tok.decode(tok.encode(text)) == text


def test_control_tokens_and_bad_ids(tok):
    assert tok.decode([tok.bos_id, tok.token_to_id("e2e4"), tok.eos_id, tok.pad_id]) == "e2e4"
    assert tok.encode("<bos>").tolist() == [tok.token_to_id(c) for c in "<bos>"]
    with pytest.raises(ValueError, match=r"token id 999999 at position 1"):
        tok.decode([5, 999999])
    with pytest.raises(ValueError, match=r"token id -1"):
        tok.decode(np.array([-1], np.int64))
    with pytest.raises(ValueError):
        tok.decode([2**40])
    with pytest.raises(TypeError, match="str or bytes"):
        tok.encode(12)
    with pytest.raises(KeyError, match="zzz"):
        tok.token_to_id("zzz")
    with pytest.raises(ValueError, match="unknown MAV vocabulary version 3"):
        mav.Tokenizer(3)


def test_batches(tok):
    texts = ["[%best_action e2e4]", "", "a much longer text with words and e7e8q moves"]
    ids, lens = tok.encode_batch(texts)
    assert ids.dtype == np.int32 and ids.shape == (3, lens.max())
    for i, t in enumerate(texts):
        assert (ids[i, :lens[i]] == tok.encode(t)).all() and (ids[i, lens[i]:] == tok.pad_id).all()
    assert tok.decode_batch(ids, lens) == texts
    assert tok.decode_batch(ids) == texts  # padding decodes to nothing
    ids2, _ = tok.encode_batch(texts, max_len=60)
    assert ids2.shape == (3, 60)
    with pytest.raises(ValueError, match=r"texts\[2\] has \d+ tokens, more than max_len=5"):
        tok.encode_batch(texts, max_len=5)
    with pytest.raises(ValueError, match="lengths"):
        tok.decode_batch(ids, [1, 2])
    with pytest.raises(ValueError, match=r"lengths\[0\]"):
        tok.decode_batch(ids, [99, 0, 0])


def test_value_token_spellings_round_trip(tok):
    # only <ctrl0>..<ctrl63> without leading zeros are value tokens; <ctrl049> used to decode as <ctrl49>
    for text in ["<ctrl049>", "<ctrl007>", "<ctrl00>", "<ctrl063>", "<ctrl64>", "x<ctrl049>:<ctrl49>"]:
        assert tok.decode(tok.encode(text)) == text
    assert len(tok.encode("<ctrl49>")) == 1 and len(tok.encode("<ctrl049>")) == len("<ctrl049>")
    # the parser agrees: a value spelled with a leading zero is not a value
    text = ("<mav game=chess> %state %top_all </mav>\n[%state w RNBQKBNRPPPPPPPP................................"
            "pppppppprnbqkbnr KQkq . 000 0001]\n[%top_all e2e4:<ctrl049> d2d4:<ctrl49>]\n")
    r = mav.parse("chess", text)
    assert any("expected a value token <ctrl0>..<ctrl63> after 'e2e4:', got '<ctrl049>'" in i.message
               for i in r.issues), r.issues


# ---- vocabulary v2: the search-trace phrases -------------------------------------------------------------

PHRASES = ["Minimax breadth=", " depth=", "Evaluation for node: ", "Expand from node ", "Decision for node: ",
           "Selecting ", "Playing ", "<root>", "<root "]
MAV_GAMES = [g for g in _core.games() if g in ("chess", "chess960", "gardner", "connect_four", "hex", "tictactoe")]


@pytest.fixture(scope="module")
def tok2():
    return mav.Tokenizer(2)


def test_v2_is_v1_then_the_phrases(tok, tok2):
    assert tok2.version == 2 and tok2.size == tok.size + len(PHRASES) == 2732
    assert tok2.vocab[:tok.size] == tok.vocab and tok2.kinds[:tok.size] == tok.kinds
    assert tok2.vocab[tok.size:] == PHRASES and set(tok2.kinds[tok.size:]) == {"phrase"}
    assert all("\n" not in p for p in PHRASES)  # line positions count newline tokens
    assert mav.VOCAB_VERSION == 1 and mav.VOCAB_VERSIONS == (1, 2)
    assert [mav.version_of_size(n) for n in (2723, 2732)] == [1, 2]
    with pytest.raises(ValueError, match="no MAV vocabulary has 97 tokens"):
        mav.version_of_size(97)
    # longest match, and a phrase starts only where a token may start (not inside a word)
    assert [tok2.vocab[i] for i in tok2.encode("Expand from node <root>: <root 4>")] == [
        "Expand from node ", "<root>", ":", " ", "<root ", "4", ">"]
    assert tok2.encode("xPlaying 4").tolist() == tok.encode("xPlaying 4").tolist()


def _trace_texts(game, seed):
    from mavgame.mav.search_trace import build_search_tree, write_trace
    rng = np.random.default_rng(seed)
    s = _core.State(game)
    for _ in range(int(rng.integers(0, 6))):
        s.push(int(rng.choice(s.legal_actions())))

    def annotate(st):
        return {m: float(rng.random()) for m in st.legal_moves}, None
    tree = build_search_tree(s, annotate, depth=2, breadth=3)
    return s, [write_trace(tree, b, d) for b, d in ((1, 1), (2, 1), (3, 1), (2, 2), (3, 2))]


@pytest.mark.parametrize("game", MAV_GAMES)
def test_v2_round_trips_traces_of_every_game(tok, tok2, game):
    from mavgame.mav.search_trace import parse_trace
    for seed in range(scaled(2)):
        root, traces = _trace_texts(game, seed)
        for tr in traces:
            ids = tok2.encode(tr.text)
            back = tok2.decode(ids)
            assert back == tr.text
            res = parse_trace(back, root, choice=tr.choice)
            assert res.errors == [] and res.shape_ok and res.final_minimax
            v1 = tok.encode(tr.text)
            # the keywords are some 40% of a Connect Four trace, less where boards are long (hex 11x11)
            assert len(ids) < (0.7 if game in ("connect_four", "tictactoe") else 0.95) * len(v1), (len(ids), len(v1))
            assert set(tok2.vocab[i] for i in ids if i >= tok.size) == set(PHRASES)
            # the MAV lines are the same ids in both vocabularies
            for line in tr.text.splitlines():
                if line.startswith("[") or line.startswith("<mav"):
                    assert tok2.encode(line).tolist() == tok.encode(line).tolist()


@pytest.mark.parametrize("game", MAV_GAMES)
def test_v2_encodes_mav_text_as_v1(tok, tok2, game):
    rng = np.random.default_rng(5)
    cmds = ["%state %top_all %best_action", "%prev_state %prev_action %state %top_all %best_action",
            "%state %top_3 %best_action"]
    for _ in range(scaled(20)):
        s = _core.State(game)
        for _ in range(int(rng.integers(0, 40))):
            if s.is_terminal():
                break
            s.push(int(rng.choice(s.legal_actions())))
        c = cmds[int(rng.integers(len(cmds)))]
        prev = None
        if "%prev_state" in c:
            if s.is_terminal():
                continue
            prev, s = s, s.copy()
            a = int(rng.choice(prev.legal_actions()))
            s.push(a)
            text = mav.prompt(s, c, prev_state=prev, prev_action=a)
        else:
            text = mav.prompt(s, c)
        ann = None if s.is_terminal() else {m: float(rng.random()) for m in s.legal_moves}
        text += mav.target(s, ann, c)
        assert tok2.encode(text).tolist() == tok.encode(text).tolist()
        ids, _ = tok2.encode_batch([text])
        assert ids[0].tolist() == tok.encode(text).tolist()


def test_v2_round_trip_any_text(tok2):
    rng = np.random.default_rng(9)
    alphabet = PHRASES + ["<root", "Evaluation", " ", "\n", ">", "x", "<ctrl7>", "%top_all", "e2e4", "é", "\x00"]
    for _ in range(scaled(300)):
        n = int(rng.integers(0, 40))
        text = "".join(alphabet[int(i)] for i in rng.integers(0, len(alphabet), n))
        assert tok2.decode(tok2.encode(text)) == text
    raw = bytes(range(256)) * 2
    assert tok2.decode_bytes(tok2.encode(raw)) == raw


def test_model_vocab_check_names_the_value():
    assert mav.check_model_vocab("1", 2723) == 1 and mav.check_model_vocab("2", 2732) == 2
    assert mav.check_model_vocab("", 40) == 0  # a model over other token ids
    with pytest.raises(ValueError, match=r"unknown MAV vocabulary v3 \(vocab_version '3'"):
        mav.check_model_vocab("3", 2723)
    with pytest.raises(ValueError, match="vocab_version 'toy'"):
        mav.check_model_vocab("toy", 24)
    with pytest.raises(ValueError, match=r"vocabulary size 2723 does not match MAV vocabulary v2 \(2732 tokens\)"):
        mav.check_model_vocab("2", 2723)
    with pytest.raises(ValueError, match="vocabulary size 2732 does not match MAV vocabulary v1"):
        mav.check_model_vocab("1", 2732)

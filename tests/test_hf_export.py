"""MAV models in the Hugging Face ecosystem (mavgame.model.hf, docs/huggingface.md): the tokenizer gives
mavgame's ids, the exported shipped model gives the native engine's logits and greedy text through
``AutoModelForCausalLM`` / ``generate``, stock Llama for plain configurations, the registered ``mavgame_mav``
class for the line_pos / abs_pos variants, and export -> import round trips exactly.

Skipped without transformers and tokenizers (the ``hf`` extra); the model tests also need torch."""
import json
import random
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("transformers", reason="the Hugging Face export needs transformers (pip install -e '.[hf]')")
pytest.importorskip("tokenizers", reason="the Hugging Face export needs tokenizers (pip install -e '.[hf]')")

import mavgame  # noqa: E402
from mavgame import mav  # noqa: E402
from mavgame.model import MAVConfig, hf  # noqa: E402
from mavgame.model.export import export_model, load_exported  # noqa: E402
from mavgame.model.inference import shipped_model_path  # noqa: E402
from mavgame.model.hf.tokenizer import build_tokenizer  # noqa: E402

GAMES = ("chess", "chess960", "gardner", "connect_four", "hex", "tictactoe")
COMMANDS = ("%state %top_all %best_action", "%state %top_3 %best_action", "%state %best_action",
            "%prev_state %prev_action %state %top_all %best_action", "%fen %top_5 %best_action",
            "%prev_fen %prev_action %state %fen %top_1 %best_action %state")


def random_state(game, rng, plies):
    s = mavgame.State(game)
    for _ in range(plies):
        if s.is_terminal():
            break
        s.push(rng.choice(s.legal_moves))
    return s


def mav_texts(n_per_game=12, seed=0, games=GAMES):
    """MAV prompts and whole examples (prompt + target, random values) of every game, every command form."""
    rng = random.Random(seed)
    out = []
    for game in games:
        for i in range(n_per_game):
            s = random_state(game, rng, rng.randrange(1, 40))
            for cmds in COMMANDS:
                if "fen" in cmds and game not in ("chess", "chess960", "gardner"):
                    continue
                if cmds.startswith("%prev") and not len(s.history()):
                    continue
                values = None if s.is_terminal() else {m: rng.random() for m in s.legal_moves}
                try:
                    p, t = mav.prompt(s, cmds), mav.target(s, values, cmds)
                except ValueError:      # a terminal position has no state after the best action
                    continue
                out += [p, p + t]
    return out


def c4_prompts(n=10, seed=1):
    rng = random.Random(seed)
    cmds = ("%state %top_all %best_action", "%state %top_1 %best_action", "%state %best_action",
            "%prev_state %prev_action %state %top_all %best_action")
    out = []
    while len(out) < n:
        s = random_state("connect_four", rng, rng.randrange(1, 24))
        c = cmds[len(out) % len(cmds)]
        if c.startswith("%prev") and not len(s.history()):
            continue
        out.append(mav.prompt(s, c))
    return out


# ---------------------------------------------------------------------------------------------- tokenizer

EDGE_TEXTS = [
    "", "<eos><bos><pad>", "<ctrl0><ctrl63><ctrl64><ctrl00><ctrl07><ctrl5<ctrl", "%top_all%top_alls%top_5%top_%states",
    "<mav</mav><mavx <mav game=chess>", "e2e4e5 e2e4 a1a a1 _a1 a1_ connect_four connect_fours 10 11 k11 swap",
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4", "h\u00e9llo \u2654 \x00\x01\r\x7f\t\n",
    "Minimax breadth=3 depth=2\nEvaluation for node: <root>\nExpand from node <root 4>\nDecision for node: x",
    "xSelecting Selecting %top_Selecting Playing 4\n<root><root <0x41> <0xZZ>", "%%%<<<>>>[[]]::  \n\n",
]


def random_texts(n, seed):
    """Random strings over the characters and fragments where the encoder's rules meet."""
    rng = random.Random(seed)
    frags = ["<", "%", "ctrl", "<ctrl", "1", "63", ">", "top_", "all", "state", "mav", "/", "e2", "e4", "a", "_",
             " ", "\n", "\t", ":", "Selecting ", "<root", " depth=", "Minimax breadth=", "\u00e9", "\x00", "q",
             "game", "connect_four", "swap", "k11", "invalid", "\"", "0x", "<0x", "]"]
    return ["".join(rng.choice(frags) for _ in range(rng.randrange(1, 30))) for _ in range(n)]


@pytest.mark.parametrize("version", mav.VOCAB_VERSIONS)
def test_tokenizer_gives_mavgame_ids(version):
    """The ``tokenizers`` tokenizer encodes MAV prompts, whole examples, search-trace keywords and random
    strings over the tricky fragments to exactly the MAV tokenizer's ids, and decodes them back alike."""
    t = mav.Tokenizer(version)
    tk = build_tokenizer(version)
    assert tk.get_vocab_size() == t.size == len(t.vocab)
    assert all(tk.token_to_id(s) == i for i, s in enumerate(t.vocab))
    texts = mav_texts(4 if version == 2 else 12) + EDGE_TEXTS + random_texts(400, version)
    assert len(texts) > 500
    bad = []
    for s in texts:
        want = t.encode(s).tolist()
        got = tk.encode(s, add_special_tokens=False).ids
        if got != want:
            bad.append((s, want, got))
        elif tk.decode(got, skip_special_tokens=True) != t.decode(want):
            bad.append((s, "decode", tk.decode(got, skip_special_tokens=True)))
    assert not bad, bad[:3]
    # <bos> first with special tokens on, as MAVModel.encode_prompt reads a prompt
    p = mav_texts(1, games=("tictactoe",))[0]
    assert tk.encode(p).ids == [t.bos_id] + t.encode(p).tolist()


def test_v2_phrases_are_single_tokens():
    t = mav.Tokenizer(2)
    tk = build_tokenizer(2)
    for phrase in [s for s, k in zip(t.vocab, t.kinds) if k == "phrase"]:
        assert tk.encode(phrase, add_special_tokens=False).ids == [t.token_to_id(phrase)]


# ------------------------------------------------------------------------------ the shipped model via the Auto classes

@pytest.fixture(scope="module")
def shipped_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("hf") / "mav_connect_four"
    summary = hf.export_hf(shipped_model_path("connect_four"), out)
    assert summary["model_type"] == hf.MODEL_TYPE and summary["architecture"] == "MAVLlamaForCausalLM"
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
            "generation_config.json"} <= set(summary["files"])
    return out


@pytest.fixture(scope="module")
def shipped_hf(shipped_folder):
    pytest.importorskip("torch")
    from transformers import AutoModelForCausalLM, AutoTokenizer
    hf.register()
    model, info = AutoModelForCausalLM.from_pretrained(str(shipped_folder), output_loading_info=True)
    assert not info["missing_keys"] and not info["unexpected_keys"], info
    return model.eval(), AutoTokenizer.from_pretrained(str(shipped_folder))


@pytest.fixture(scope="module")
def native_model():
    from mavgame.model import MAVModel
    from mavgame.model.inference import native_available
    if not native_available():
        pytest.skip("the C extension has no native inference engine")
    return MAVModel.load(backend="native")


def test_auto_tokenizer_of_the_export_gives_the_prompt_ids(shipped_folder, native_model):
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(str(shipped_folder))
    prompts = c4_prompts(20)
    for p in prompts:
        assert tok(p)["input_ids"] == native_model.encode_prompt(p)
    assert tok("<eos>")["input_ids"] == native_model.encode_prompt("<eos>")   # control texts stay text
    assert (tok.bos_token_id, tok.eos_token_id, tok.pad_token_id, tok.padding_side) == (1, 2, 0, "left")


def test_shipped_model_logits_match_the_native_engine(shipped_hf, native_model):
    import torch
    model, tok = shipped_hf
    assert type(model).__name__ == "MAVLlamaForCausalLM" and model.config.line_pos == 64
    worst = 0.0
    for p in c4_prompts(10):
        ids = native_model.encode_prompt(p)
        want = native_model.backend.logits(ids)
        with torch.no_grad():
            got = model(torch.tensor([ids])).logits[0, -1].numpy()
        assert int(got.argmax()) == int(want.argmax())
        worst = max(worst, float(np.abs(got - want).max()))
    assert worst < 1e-4, worst


def test_shipped_model_greedy_generate_gives_the_same_text(shipped_hf, native_model):
    """A left-padded batch through ``generate`` (KV cache, line positions carried by the model class) writes
    what MAVModel's plain greedy decoding writes."""
    import torch
    model, tok = shipped_hf
    prompts = c4_prompts(6, seed=3)
    want = native_model.generate(prompts, decoding="greedy", max_new_tokens=100)
    enc = tok(prompts, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=100, do_sample=False)
    texts = tok.batch_decode(out[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    assert [w.text for w in want] == texts
    assert sum(w.finished for w in want) >= 4 and all("[%" in t for t in texts)


def test_grouped_decoding_and_bucket_values_through_generate(shipped_hf, native_model):
    """With mavgame's logits processor ``generate`` does grouped greedy decoding (MAVModel's default) and
    writes the same text; :func:`hf.bucket_distributions` of its raw logits gives MAVModel's value
    distributions."""
    import torch
    from transformers import LogitsProcessorList
    from mavgame.model.hf.modeling import GroupedMovesLogitsProcessor
    model, tok = shipped_hf
    prompts = c4_prompts(6, seed=7)
    want = native_model.generate(prompts, max_new_tokens=100)
    assert native_model.decoding == "grouped"
    enc = tok(prompts, return_tensors="pt", padding=True)
    procs = LogitsProcessorList([GroupedMovesLogitsProcessor(hf.move_token_ids("connect_four"))])
    with torch.no_grad():
        out = model.generate(**enc, max_new_tokens=100, do_sample=False, logits_processor=procs,
                             output_logits=True, return_dict_in_generate=True)
    gen = out.sequences[:, enc["input_ids"].shape[1]:]
    assert [w.text for w in want] == tok.batch_decode(gen, skip_special_tokens=True)
    dists = hf.bucket_distributions(out.logits, gen)
    n = 0
    for w, d in zip(want, dists):
        assert len(w.value_entries) == len(d)
        for (at, _move, p), (step, q) in zip(w.value_entries, d):
            assert step == at + 2 and np.abs(p - q).max() < 1e-4      # move, ':', bucket
            n += 1
    assert n >= 5


def test_shipped_round_trip_gives_identical_weights(shipped_folder, tmp_path):
    w0, c0, v0, i0 = load_exported(shipped_model_path("connect_four"))
    back = tmp_path / "back.safetensors"
    summary = hf.import_hf(shipped_folder, back)
    assert summary["vocab_version"] == "1"
    w1, c1, v1, i1 = load_exported(back)
    assert c1 == c0 and v1 == v0 and i1 == i0
    assert sorted(w1) == sorted(w0)
    for k in w0:
        assert np.array_equal(w0[k], w1[k]), k


def test_fine_tuned_save_pretrained_imports_back(shipped_hf, tmp_path):
    """A training step through transformers (labels: its own loss), ``save_pretrained``, then import: the
    imported file holds the changed weights and the native engine loads it."""
    import torch
    from transformers import AutoModelForCausalLM
    src, tok = shipped_hf
    model = AutoModelForCausalLM.from_pretrained(src.name_or_path)
    model.train()
    p = c4_prompts(1)[0]
    enc = tok([p], return_tensors="pt")
    loss = model(**enc, labels=enc["input_ids"]).loss
    assert torch.isfinite(loss)
    loss.backward()
    assert model.model.line_embed.weight.grad.abs().sum() > 0
    with torch.no_grad():
        for prm in model.parameters():
            if prm.grad is not None:
                prm -= 1e-3 * prm.grad
    model.save_pretrained(tmp_path / "tuned")
    out = tmp_path / "tuned.safetensors"
    hf.import_hf(tmp_path / "tuned", out)
    w, cfg, vv, _info = load_exported(out)
    assert vv == "1" and cfg.line_pos == 64
    assert np.allclose(w["line_embed.weight"], model.model.line_embed.weight.detach().numpy())
    w0, *_ = load_exported(shipped_model_path("connect_four"))
    assert not np.array_equal(w["embed.weight"], w0["embed.weight"])
    from mavgame.model import MAVModel
    assert MAVModel.load(out, backend="numpy").generate([p], max_new_tokens=4)[0].ids


def test_peft_lora_adapters_merge_and_import(shipped_hf, tmp_path):
    peft = pytest.importorskip("peft")
    import torch
    from transformers import AutoModelForCausalLM
    src, tok = shipped_hf
    base = AutoModelForCausalLM.from_pretrained(src.name_or_path)
    lora = peft.get_peft_model(base, peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                     init_lora_weights=False))
    trainable = [n for n, p_ in lora.named_parameters() if p_.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    enc = tok(c4_prompts(1)[0], return_tensors="pt")
    with torch.no_grad():
        tuned = lora(**enc).logits
    merged = lora.merge_and_unload()
    merged.save_pretrained(tmp_path / "merged")
    out = tmp_path / "merged.safetensors"
    hf.import_hf(tmp_path / "merged", out)
    from mavgame.model import MAVModel
    m = MAVModel.load(out, backend="torch")
    ids = enc["input_ids"][0].tolist()
    got = m.backend.forward(np.array([ids]), np.arange(len(ids))[None], np.ones((1, len(ids)), bool),
                            m.backend.new_cache(1, len(ids)))
    assert np.abs(got[0] - tuned[0, -1].numpy()).max() < 1e-4


# --------------------------------------------------------------------- tiny random models against the reference

def _tiny(**kw):
    base = dict(vocab_size=mav.Tokenizer(1).size, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64,
                max_seq_len=160, init_std=0.3)
    base.update(kw)
    return MAVConfig(**base)


def _export_tiny(tmp_path, cfg, seed=0):
    torch = pytest.importorskip("torch")
    from mavgame.model.transformer import MAVTransformer
    torch.manual_seed(seed)
    ref = MAVTransformer(cfg).eval()
    src = tmp_path / "tiny.safetensors"
    export_model(src, ref.state_dict(), cfg, "1", info={"game": "tictactoe", "note": "tiny"})
    folder = tmp_path / "tiny_hf"
    summary = hf.export_hf(src, folder)
    return ref, src, folder, summary


NEWLINE = mav.Tokenizer(1).token_to_id("\n")
VARIANTS = {
    "plain": dict(),
    "geglu_untied_mha": dict(mlp="geglu", tie_embeddings=False, n_kv_heads=4, rope_theta=500.0),
    "line_pos": dict(line_pos=12, newline_id=NEWLINE),
    "abs_pos": dict(abs_pos=True),
    "both": dict(abs_pos=True, line_pos=8, newline_id=NEWLINE, mlp="geglu", n_kv_heads=1),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_tiny_models_match_the_reference_and_round_trip(name, tmp_path):
    """Plain configurations are stock ``LlamaForCausalLM`` folders (model_type llama); the variants are
    ``mavgame_mav``. Either way: every position's logits within 1e-4 of the reference transformer, greedy
    ``generate`` over a left-padded batch equals the reference's greedy decoding, and export -> import gives
    the same configuration and bit-identical weights."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaForCausalLM
    from mavgame.model.transformer import greedy_generate
    cfg = _tiny(**VARIANTS[name])
    ref, src, folder, summary = _export_tiny(tmp_path, cfg)
    d = json.loads((folder / "config.json").read_text())
    variant = hf.is_variant(cfg)
    assert d["model_type"] == (hf.MODEL_TYPE if variant else "llama")
    assert d["tie_word_embeddings"] == cfg.tie_embeddings and d["hidden_act"] == hf.hf_config_kwargs(cfg)["hidden_act"]
    hf.register()
    model = AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    assert (type(model) is LlamaForCausalLM) == (not variant)
    tok = AutoTokenizer.from_pretrained(str(folder))
    prompts = mav_texts(2, seed=5, games=("tictactoe", "connect_four"))[:6]
    ids = [tok(p)["input_ids"][:cfg.max_seq_len - 20] for p in prompts]
    for row in ids:
        with torch.no_grad():
            want = ref(torch.tensor([row]))[0].numpy()
            got = model(torch.tensor([row])).logits[0].numpy()
        assert np.abs(got - want).max() < 1e-4, np.abs(got - want).max()
    # batched greedy generation with left padding and a KV cache
    batch = [r[:40 + 9 * i] for i, r in enumerate(ids[:4])]
    want, _ = greedy_generate(ref, batch, max_new_tokens=16, stop_id=2, pad_id=0)
    T = max(len(r) for r in batch)
    inp = torch.tensor([[0] * (T - len(r)) + r for r in batch])
    mask = torch.tensor([[0] * (T - len(r)) + [1] * len(r) for r in batch])
    with torch.no_grad():
        out = model.generate(input_ids=inp, attention_mask=mask, max_new_tokens=16, do_sample=False)
    for w, row in zip(want, out[:, T:].tolist()):
        n = len(w)
        assert row[:n] == w, (row, w)
        assert all(t == 0 for t in row[n:])          # finished rows are padded
    # export -> import: the same file contents
    back = tmp_path / "back.safetensors"
    hf.import_hf(folder, back)
    w0, c0, v0, i0 = load_exported(src)
    w1, c1, v1, i1 = load_exported(back)
    assert (c1, v1, i1) == (c0, v0, i0)
    assert sorted(w0) == sorted(w1) and all(np.array_equal(w0[k], w1[k]) for k in w0)


def test_the_loss_transformers_computes_is_the_next_token_cross_entropy(tmp_path):
    """Fine-tuning through transformers (``labels``) optimises the reference training objective: the mean
    next-token cross-entropy, ignoring padded positions (-100)."""
    import torch
    import torch.nn.functional as F
    from transformers import AutoModelForCausalLM
    cfg = _tiny(line_pos=12, newline_id=NEWLINE)
    ref, _src, folder, _ = _export_tiny(tmp_path, cfg, seed=2)
    hf.register()
    model = AutoModelForCausalLM.from_pretrained(str(folder))
    t = mav.Tokenizer(1)
    ids = [t.bos_id] + t.encode(mav_texts(1, games=("tictactoe",))[1]).tolist()
    x = torch.tensor([ids])
    labels = x.clone()
    labels[0, :5] = -100
    with torch.no_grad():
        logits = ref(x)[0]
        want = F.cross_entropy(logits[:-1], labels[0, 1:], ignore_index=-100)
        got = model(input_ids=x, labels=labels).loss
    assert abs(float(got) - float(want)) < 1e-5


def test_bfloat16_export_imports_the_rounded_weights(tmp_path):
    from mavgame.model.export import bf16_bits_to_float32, float32_to_bf16_bits
    cfg = _tiny(line_pos=12, newline_id=NEWLINE)
    _ref, src, _folder, _ = _export_tiny(tmp_path, cfg)
    hf.export_hf(src, tmp_path / "bf16", dtype="bfloat16")
    assert json.loads((tmp_path / "bf16" / "config.json").read_text())["dtype"] == "bfloat16"
    hf.import_hf(tmp_path / "bf16", tmp_path / "back.safetensors")
    w0, *_ = load_exported(src)
    w1, *_ = load_exported(tmp_path / "back.safetensors")
    for k in w0:
        assert np.array_equal(w1[k], bf16_bits_to_float32(float32_to_bf16_bits(w0[k]))), k


# ------------------------------------------------------------------------------------ refusals, names, command line

def test_import_refuses_what_the_mav_transformer_cannot_express(tmp_path):
    cfg = _tiny()
    _ref, _src, folder, _ = _export_tiny(tmp_path, cfg)
    base = json.loads((folder / "config.json").read_text())
    for change, word in [({"attention_bias": True}, "attention_bias"), ({"hidden_act": "gelu"}, "hidden_act"),
                         ({"model_type": "gpt2"}, "model_type"),
                         ({"rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e4}}, "linear"),
                         ({"head_dim": 16}, "head_dim")]:
        (folder / "config.json").write_text(json.dumps({**base, **change}))
        with pytest.raises(ValueError, match=word):
            hf.import_hf(folder, tmp_path / "x.safetensors")
    (folder / "config.json").write_text(json.dumps({**base, "num_hidden_layers": 3}))
    with pytest.raises(ValueError, match="missing"):
        hf.import_hf(folder, tmp_path / "x.safetensors")


def test_weight_names_map_both_ways():
    cfg = _tiny(abs_pos=True, line_pos=4, newline_id=NEWLINE, tie_embeddings=False)
    from mavgame.model.export import expected_shapes
    names = sorted(expected_shapes(cfg))
    hf_names = [hf.hf_name(n) for n in names]
    assert len(set(hf_names)) == len(names) and [hf.mav_name(n) for n in hf_names] == names
    assert hf.hf_name("blocks.1.attn.wq.weight") == "model.layers.1.self_attn.q_proj.weight"
    with pytest.raises(ValueError):
        hf.mav_name("model.layers.0.self_attn.q_proj.bias")
    from mavgame.model.hf.configuration import MODEL_TYPE, MAVLlamaConfig
    assert MODEL_TYPE == hf.MODEL_TYPE == MAVLlamaConfig.model_type


def test_command_line_exports_and_imports(tmp_path, capsys):
    from mavgame.cli.main import main
    out = tmp_path / "c4"
    assert main(["hf", "export", str(shipped_model_path("connect_four")), str(out), "--dtype", "float16"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["dtype"] == "float16" and (out / "tokenizer.json").is_file()
    back = tmp_path / "back.safetensors"
    assert main(["hf", "import", str(out), str(back)]) == 0
    assert json.loads(capsys.readouterr().out)["vocab_version"] == "1"
    w, cfg, _vv, _info = load_exported(back)
    w0, *_ = load_exported(shipped_model_path("connect_four"))
    # the shipped file is float16 already: a float16 export and import changes nothing
    assert all(np.array_equal(w[k], w0[k]) for k in w0)
    with pytest.raises(SystemExit) as e:             # a folder without config.json: one line naming it
        main(["hf", "import", str(tmp_path), str(back)])
    assert str(e.value.code).startswith("mavgame: hf import:") and "config.json" in str(e.value.code)
    r = subprocess.run([sys.executable, "-m", "mavgame.model.hf", "import", str(out), str(tmp_path / "m.safetensors")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and (tmp_path / "m.safetensors").is_file(), r.stderr


def test_importing_the_module_imports_no_heavy_package():
    code = ("import sys\nimport mavgame.model.hf, mavgame.model.hf.tokenizer, mavgame.cli.hf\n"
            "heavy = [m for m in ('torch', 'transformers', 'tokenizers') if m in sys.modules]\n"
            "assert not heavy, heavy\nprint('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_the_docs_recipes_run_as_written(tmp_path, monkeypatch, native_model):
    """docs/huggingface.md's Python blocks (load and generate, grouped decoding, the fine-tuning loss, PEFT
    where installed) run in order as written, and print what MAVModel would write."""
    import contextlib
    import importlib.util
    import io
    import re
    from pathlib import Path
    pytest.importorskip("torch")
    doc = (Path(__file__).resolve().parents[1] / "docs" / "huggingface.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", doc, re.S)
    assert len(blocks) == 4
    if importlib.util.find_spec("peft") is None:
        blocks = blocks[:3]
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    env = {"__name__": "__main__"}
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        for i, code in enumerate(blocks):
            exec(compile(code, f"docs/huggingface.md (block {i + 1})", "exec"), env)
    printed = out.getvalue()
    want = native_model.generate(env["prompts"], decoding="greedy", max_new_tokens=100)[0].text
    assert printed.startswith(want)
    assert np.isfinite(float(printed.strip().splitlines()[-1]))
    if len(blocks) == 4:
        assert (tmp_path / "out" / "mav-c4-tuned" / "config.json").is_file()

"""Speed of the MAV model on CPU: training throughput and batched evaluation throughput.

    python bench/train.py                 # both parts, the shipped Connect Four model's shape
    python bench/train.py --quick         # fewer steps / repetitions
    python bench/train.py --preset small --threads 1 --json out.json

1. Training: tokens per second (all tokens of the padded batches, and target tokens, the ones in the
   loss) of optimiser steps on real Connect Four MAV examples (ExampleBuilder randomisation), fp32.
2. Evaluation: leaf evaluations per second, i.e. MAV prompts ``%state %top_all %best_action`` answered by
   ``MAVModel.generate`` (what users call: prompt encoding, grouped greedy decoding with the KV cache, output
   decoding and value distributions) in batches of 1..64, for the native (C), NumPy and torch backends, their
   repetitions interleaved, medians of thread CPU time (torch runs one thread here); and inside MAV-MCTS
   (batch 16): simulations per second with the model as evaluator.  The torch backend is the peer: the
   ratio printed is native / torch.

The model is the shipped one (mavgame/data/mav_connect_four.safetensors) when present, else a randomly
initialised model of the same configuration forced to write as many tokens as the shipped one does
(timings then depend on the shape only). These figures are the baseline the native inference engine must
beat. The machine is shared: run it when it is quiet, and read the ratios more than the absolutes.
"""
import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mavgame  # noqa: E402
from mavgame import mav  # noqa: E402
from mavgame.datasets import PositionStore, generate_positions, mav_encoder, pad_batch  # noqa: E402
from mavgame.model.inference import MAVModel, shipped_model_path  # noqa: E402
from _timing import interleaved  # noqa: E402


def c4_positions(n_games: int, seed: int = 0):
    d = Path(tempfile.mkdtemp(prefix="mavbench-"))
    generate_positions("connect_four", d, n_games, seed=seed, epsilon=0.2, val_fraction=0.0, random_opening=12,
                       annotator_options={"max_seconds": 0.2}, progress=False)
    return list(PositionStore(d / "train"))


def bench_training(torch, cfg_model, records, batch_size, steps, threads):
    from mavgame.model.train import masked_loss
    from mavgame.model.transformer import MAVTransformer
    torch.set_num_threads(threads)
    enc, tok = mav_encoder("connect_four")
    torch.manual_seed(0)
    model = MAVTransformer(cfg_model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = []
    for j in range(steps):
        recs = [records[(j * batch_size + i) % len(records)] for i in range(batch_size)]
        t, m = pad_batch(enc(recs, j), 0, cfg_model.max_seq_len + 1)
        batches.append((torch.from_numpy(t), torch.from_numpy(m)))
    # warm-up step
    loss, _, _ = masked_loss(model, *batches[0])
    loss.backward()
    opt.step()
    opt.zero_grad()
    tokens = targets = 0
    t0 = time.perf_counter()
    for toks, mask in batches:
        loss, n, _ = masked_loss(model, toks, mask)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        tokens += toks.numel()
        targets += n
    dt = time.perf_counter() - t0
    return {"threads": threads, "batch_size": batch_size, "steps": steps, "seconds": dt,
            "tokens_per_s": tokens / dt, "target_tokens_per_s": targets / dt,
            "examples_per_s": steps * batch_size / dt, "mean_example_tokens": tokens / (steps * batch_size)}


def bench_generation(models, prompts, batch, reps):
    """{backend: row} for MAVModel.generate over `prompts` in batches of `batch`, backends interleaved."""
    fns = {name: (lambda m=m: m.generate(prompts, batch_size=batch)) for name, m in models.items()}
    res = interleaved(fns, reps)
    rows = {}
    for name, (wall, cpu, outs) in res.items():
        rows[name] = {"backend": name, "batch": batch, "evals_per_s": len(prompts) / cpu,
                      "evals_per_s_wall": len(prompts) / wall,
                      "out_tokens_per_eval": sum(len(o.ids) for o in outs) / len(prompts)}
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--preset", default=None, help="model preset instead of the shipped model's shape")
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    import torch
    from mavgame.model.config import MAVConfig
    from mavgame.model.train_config import PRESETS
    from mavgame.model.transformer import MAVTransformer

    tok = mav.Tokenizer()
    shipped = None
    try:
        shipped = MAVModel.load(shipped_model_path("connect_four"), backend="numpy")
    except FileNotFoundError:
        pass
    if args.preset or shipped is None:
        preset = PRESETS[args.preset or "small"]
        cfg = MAVConfig(vocab_size=tok.size, max_seq_len=512, **preset)
        weights = None
    else:
        cfg = shipped.cfg
        weights = shipped.backend.w
    print(f"model: {cfg.num_parameters():,} parameters, d_model {cfg.d_model}, {cfg.n_layers} layers, "
          f"{cfg.n_heads} heads / {cfg.n_kv_heads} kv, d_ff {cfg.d_ff} ({'shipped' if weights else 'random'})")

    records = c4_positions(8 if args.quick else 30)
    results = {"model": cfg.to_dict(), "shipped": weights is not None, "training": [], "generation": []}
    steps = 5 if args.quick else 20
    for th in args.threads:
        r = bench_training(torch, cfg, records, 32, steps, th)
        results["training"].append(r)
        print(f"train  threads={th} batch=32: {r['tokens_per_s']:,.0f} tokens/s "
              f"({r['target_tokens_per_s']:,.0f} target tokens/s, {r['examples_per_s']:.1f} examples/s)")

    torch.set_num_threads(1)
    if shipped is None or args.preset:
        print("eval: MAVModel.generate needs the shipped model (mavgame/data/mav_connect_four.safetensors): skipped")
    else:
        live = [r for r in records if r["values"]]
        n_prompts = 32 if args.quick else 128
        prompts = [mav.prompt(mavgame.State("connect_four", live[i % len(live)]["state"])) for i in range(n_prompts)]
        models = {}
        for name in ("native", "numpy", "torch"):
            try:
                models[name] = MAVModel.load(shipped_model_path("connect_four"), backend=name, threads=1)
            except Exception as e:  # a backend that cannot load is reported, not fatal
                print(f"eval   {name}: not available ({e})")
        reps = 3 if args.quick else 5
        print(f"eval: MAVModel.generate, one thread, median of {reps} interleaved runs (thread CPU time); "
              f"peer: torch {torch.__version__} backend")
        for b in ((1, 32) if args.quick else (1, 8, 32, 64)):
            sub = prompts[: (8 if b == 1 else n_prompts)]
            rows = bench_generation(models, sub, b, reps)
            results["generation"].extend(rows.values())
            for name, r in rows.items():
                ratio = ""
                if name == "native" and "torch" in rows:
                    ratio = f"   native/torch {r['evals_per_s'] / rows['torch']['evals_per_s']:.2f}x"
                print(f"eval   {name:6s} batch={b:2d}: {r['evals_per_s']:8.1f} leaf evaluations/s "
                      f"({r['out_tokens_per_eval']:.0f} output tokens each){ratio}")

    if shipped is not None and not args.preset:
        from mavgame.agents.mav import MAVEvaluator
        from mavgame.search.mcts import MCTS
        for name in ("numpy", "torch"):
            model = MAVModel.load(shipped_model_path("connect_four"), backend=name)
            # no output cache for the baseline: every leaf costs one model evaluation
            ev = MAVEvaluator(model, cache_size=0)
            m = MCTS(ev, num_simulations=64 if args.quick else 256, batch_size=16, seed=0)
            s = mavgame.State("connect_four")
            t0 = time.perf_counter()
            res = m.search(s)
            dt = time.perf_counter() - t0
            r = {"backend": name, "sims": res.root_visits, "seconds": dt, "evals": ev.generated,
                 "evals_per_s": ev.generated / dt}
            results["mcts"] = results.get("mcts", []) + [r]
            print(f"mcts   {name:5s} batch=16: {ev.generated / dt:8.1f} leaf evaluations/s "
                  f"({res.root_visits} root visits in {dt:.1f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

"""The native engine's CUDA path on a GPU against PyTorch on the same GPU and the CPU engine (issue 17's
engine, docs/kernels.md): MAV generation and native MAV-MCTS.

In one run, interleaved (each repetition times every backend at every batch size in turn; medians):

- generation: ``%state %top_all %best_action`` prompts of random Connect Four positions (about 60 tokens),
  grouped greedy decoding, up to 48 new tokens (the shipped model stops at <eos>; the random models, whose
  answers are noise, run all 48), at batch 1, 16, 64 and 256; prompts per second and generated tokens per
  second. Models: the shipped 1.1M-parameter Connect Four MAV and two random models in the same format
  (``medium`` 24M and ``large`` 183M parameters, float32). Backends: ``native-cuda`` (the engine's CUDA
  forward pass, ``device="cuda"``), ``torch-cuda`` (mavgame's PyTorch reference transformer on the GPU with
  its KV cache, the choice on the host: ``backend="torch", device="cuda"``), ``native-cpu`` (the CPU engine,
  ``--cpu-threads`` threads; the shipped model only). Answers are compared with native-cuda's.
- native MAV-MCTS with the shipped model (engine mode, no output cache), time per move at 1,000 simulations
  in batches of 16 and 64 leaves, leaves evaluated on the GPU and on the CPU.

Without a usable GPU (or without torch) it says why and measures nothing.

    python bench/inference_gpu.py [--reps 3] [--json out.json]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import mavgame  # noqa: E402
from mavgame import _core, mav  # noqa: E402
from mavgame.mav import vocab_fingerprint  # noqa: E402
from mavgame.model.inference import MAVModel, generate_ids, shipped_model_path  # noqa: E402
from inference import prompts_of_random_games  # noqa: E402  (bench/inference.py: the same prompts)

RANDOM = {"medium": dict(d_model=512, n_layers=8, n_heads=8, n_kv_heads=2, d_ff=1408),
          "large": dict(d_model=1024, n_layers=16, n_heads=16, n_kv_heads=4, d_ff=2816)}


def random_model(path, spec, seed=0):
    from mavgame.model.config import MAVConfig
    from mavgame.model.export import expected_shapes, export_model
    tok = mav.Tokenizer()
    cfg = MAVConfig(vocab_size=tok.size, max_seq_len=256, **spec)
    rng = np.random.default_rng(seed)
    w = {}
    for k, s in expected_shapes(cfg).items():
        fan_in = s[0] if len(s) > 1 else 1
        w[k] = (rng.standard_normal(size=s, dtype=np.float32) / np.sqrt(max(fan_in, 1))).astype(np.float32)
        if k.endswith("norm.weight"):
            w[k] = np.ones(s, np.float32)
    export_model(path, w, cfg, str(tok.version), info={"game": "connect_four", "vocab_fingerprint":
                                                        vocab_fingerprint(tok)})
    return cfg


def sync():
    try:
        import torch
        torch.cuda.synchronize()
    except Exception:
        pass


def run_gen(model, ids, batch, max_new, group):
    tok = model.tokenizer
    outs = []
    for s in range(0, len(ids), batch):
        outs += generate_ids(model.backend, ids[s:s + batch], max_new, [tok.eos_id],
                             bucket_ids=tok.bucket_ids.tolist(), group_ids=group)
    sync()
    return outs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--cpu-threads", type=int, default=1)
    ap.add_argument("--models", default="shipped,medium,large")
    ap.add_argument("--batches", default="1,16,64,256")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    n, why = _core.cuda_status()
    if n == 0:
        print(f"bench/inference_gpu.py: nothing measured: {why}")
        return 0
    try:
        import torch
        assert torch.cuda.is_available()
    except Exception:
        print("bench/inference_gpu.py: nothing measured: no torch with CUDA (the peer)")
        return 0
    print(f"device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; cpu threads {args.cpu_threads}")
    batches = [int(b) for b in args.batches.split(",")]
    prompts = prompts_of_random_games(max(max(batches), 64))
    results = {"device": torch.cuda.get_device_name(0), "generation": [], "mcts": []}
    tmp = tempfile.mkdtemp()
    for name in args.models.split(","):
        if name == "shipped":
            path, max_new = shipped_model_path("connect_four"), 48
        else:
            path, max_new = os.path.join(tmp, name + ".safetensors"), 48
            random_model(path, RANDOM[name])
        models = {"native-cuda": MAVModel.load(path, backend="native", device="cuda"),
                  "torch-cuda": MAVModel.load(path, backend="torch", device="cuda")}
        if name == "shipped":   # the CPU engine is far behind on the larger models: only where it competes
            models["native-cpu"] = MAVModel.load(path, backend="native", device="cpu", threads=args.cpu_threads)
        ref_model = models["native-cuda"]
        ids = [ref_model.encode_prompt(p) for p in prompts]
        group = sorted(ref_model.move_tokens("connect_four"))
        nparams = ref_model.cfg.num_parameters()
        subsets = {b: ids[:8] if b == 1 else ids[:max(b, 64)] for b in batches}   # batch 1: 8 prompts, else >= 64
        for m in models.values():   # warm-up: module load, handles, first allocations
            run_gen(m, ids[:4], 4, 4, group)
        times = {(k, b): [] for k in models for b in batches}
        toks, agree = {}, {}
        ref = {}
        for _ in range(args.reps):
            for b in batches:
                for k, m in models.items():
                    t0 = time.perf_counter()
                    outs = run_gen(m, subsets[b], b, max_new, group)
                    times[(k, b)].append(time.perf_counter() - t0)
                    got = [o.ids for o in outs]
                    if k == "native-cuda":
                        ref[b] = got
                        toks[b] = sum(len(o.ids) for o in outs)
                    else:
                        agree[(k, b)] = sum(x == y for x, y in zip(got, ref[b])) / len(got)
        print(f"\nmodel {name}: {nparams:,} parameters; prompts of {np.mean([len(i) for i in ids]):.0f} tokens; "
              f"up to {max_new} new tokens")
        print(f"  {'backend':12s} {'batch':>5s} {'prompts/s':>10s} {'new tok/s':>10s} {'vs torch-cuda':>13s} "
              f"{'same answers':>12s}")
        for b in batches:
            base = statistics.median(times[("torch-cuda", b)])
            for k in models:
                dt = statistics.median(times[(k, b)])
                row = {"model": name, "params": nparams, "backend": k, "batch": b, "prompts": len(subsets[b]),
                       "seconds": dt, "prompts_per_s": len(subsets[b]) / dt, "new_tokens_per_s": toks[b] / dt,
                       "speedup_vs_torch_cuda": base / dt, "agree": agree.get((k, b), 1.0)}
                results["generation"].append(row)
                print(f"  {k:12s} {b:5d} {row['prompts_per_s']:10.1f} {row['new_tokens_per_s']:10.0f} "
                      f"{row['speedup_vs_torch_cuda']:12.2f}x {row['agree']:12.3f}")
        del models
        torch.cuda.empty_cache()
        if args.json:   # after every model: a run cut short keeps what it measured
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)

    from mavgame.agents.mav import NativeMAVEvaluator
    from mavgame.search.mcts import MCTS
    print("\nnative MAV-MCTS, shipped model, 1,000 simulations from the empty board (engine mode, no output cache):")
    for bs in (16, 64):
        per = {}
        for _ in range(args.reps):
            for device in ("cuda", "cpu"):
                model = MAVModel.load(shipped_model_path("connect_four"), backend="native", device=device,
                                      threads=args.cpu_threads)
                ev = NativeMAVEvaluator(model, batch_size=bs, threads=args.cpu_threads, cache_size=0)
                t0 = time.perf_counter()
                MCTS(ev, num_simulations=1000, batch_size=bs, seed=0).search(mavgame.State("connect_four"))
                per.setdefault(device, []).append(time.perf_counter() - t0)
        g, c = statistics.median(per["cuda"]), statistics.median(per["cpu"])
        results["mcts"].append({"batch": bs, "cuda_s": g, "cpu_s": c})
        print(f"  batch {bs:3d}: cuda {g:6.2f} s/move, cpu ({args.cpu_threads} thread) {c:6.2f} s/move: {c / g:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

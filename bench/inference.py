"""Leaf-evaluation speed of the MAV inference backends (issue 12): the native C engine against torch
(one thread, and the native engine's thread count) and NumPy, on the shipped Connect Four model.

In one run, interleaved (every repetition times every backend at every batch size in turn; medians):

- leaf evaluations per second at batch 1, 8, 32 and 64: ``%state %top_all %best_action`` prompts of
  positions from random games, answered by grouped greedy decoding until <eos> (``MAVModel.generate``);
  every backend's answers are checked to be the native engine's;
- the FLOP rate this is: matrix products and attention of every prompt and generated token (counted by the
  native engine with prefix sharing off, so the same work for every backend), against a one-thread
  ``torch.matmul`` ceiling of the same shapes at the same row counts (prefill rows and decode rows
  weighted by their FLOPs), measured in the same run;
- prompt tokens saved by prefix sharing (a prefix tree of each batch): over the generation batches, and
  inside MAV-MCTS in engine mode and in state-tracking mode (where siblings share their ``%prev_state``),
  per batch and with the engine's cross-batch prefix cache;
- inside MAV-MCTS (256 simulations, batches of 16 leaves, output cache off): leaf evaluations per second of
  the Python evaluator over each backend and of the native C evaluator, and the time per move of native
  MAV-MCTS at 100, 256 and 1000 simulations.

    python bench/inference.py             # about 2-3 minutes on 2 cores
    python bench/inference.py --quick     # under a minute
    python bench/inference.py --prefix-only   # only the prefix-sharing figures inside MAV-MCTS (seconds)
    python bench/inference.py --threads 1 --clock cpu   # times in process CPU time (a shared, loaded machine)

``--clock cpu`` times every figure in CPU time of the measuring thread (``time.thread_time``) instead of wall
time: on a machine shared with other jobs a time slice taken by them no longer counts, for both sides of every
ratio, nor do helper threads of the process (OpenBLAS's, spinning after the NumPy backend's products).  It is
for one-thread runs (``--threads 1``: the native engine and torch then compute in the calling thread).

The header names the native matmul kernel that ran ("native kernel avx512", "avx2-fma" or "portable"): the best
the CPU runs, or the one the environment variable ``MAVGAME_SIMD=avx512|avx2|portable`` picks, e.g.
``MAVGAME_SIMD=avx2 python bench/inference.py --threads 1`` to time the AVX2 kernel on an AVX-512 machine.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import mavgame  # noqa: E402
from mavgame import mav  # noqa: E402
from mavgame.model.inference import MAVModel, shipped_model_path  # noqa: E402


def prompts_of_random_games(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        s = mavgame.State("connect_four")
        for _ in range(int(rng.integers(2, 18))):
            if s.is_terminal():
                break
            s.push(str(rng.choice(list(s.legal_moves))))
        if not s.is_terminal():
            out.append(mav.prompt(s))
    return out


def layer_shapes(cfg):
    """(in, out, count per token) of the model's matrix products."""
    d, hd = cfg.d_model, cfg.head_dim
    L = cfg.n_layers
    return [(d, cfg.n_heads * hd, L), (d, cfg.n_kv_heads * hd, 2 * L), (cfg.n_heads * hd, d, L),
            (d, cfg.d_ff, 2 * L), (cfg.d_ff, d, L)]


def matmul_rate(torch, shapes, rows, seconds=0.15, clock=time.perf_counter):
    """GFLOP/s of one-thread torch.matmul over the shapes at `rows` rows (weighted by their FLOPs), timed by
    ``clock``."""
    total_f, total_t = 0.0, 0.0
    for i, o, cnt in shapes:
        x, w = torch.randn(rows, i), torch.randn(i, o)
        f = 2.0 * rows * i * o
        torch.matmul(x, w)
        reps, t0 = 0, clock()
        while clock() - t0 < seconds / len(shapes):
            torch.matmul(x, w)
            reps += 1
        dt = (clock() - t0) / reps
        total_f += f * cnt
        total_t += dt * cnt
    return total_f / total_t / 1e9


def mcts_prefix_sharing(model, sims, prefix_cache=4096, clock=time.perf_counter):
    """Prompt tokens prefix sharing saves inside native MAV-MCTS (batch 16, no output cache), engine mode and
    state tracking: off, per batch (the prefix tree of each batch), and with the engine's cross-batch prefix
    cache of ``prefix_cache`` tokens too; the search times; the searches are checked to be identical."""
    from mavgame.search.mcts import MCTS
    from mavgame.agents.mav import NativeMAVEvaluator
    out = []
    print(f"\nprefix sharing inside native MAV-MCTS ({sims} simulations, batch 16, 1 thread, no output cache):")
    settings = (("off", False, 0), ("batch", True, 0), (f"batch+cache {prefix_cache}", True, prefix_cache))
    for tracking in (False, True):
        mode = "state tracking" if tracking else "engine"
        searches = []
        for name, sharing, cache in settings:
            ev = NativeMAVEvaluator(model, batch_size=16, threads=1, cache_size=0, prefix_sharing=sharing,
                                    state_tracking=tracking, prefix_cache=cache)
            kw = dict(state_tracking=True, game="connect_four") if tracking else {}
            t0 = clock()
            res = MCTS(ev, num_simulations=sims, batch_size=16, seed=0, **kw).search(mavgame.State("connect_four"))
            dt = clock() - t0
            searches.append((res.moves, res.visits.tolist(), res.values.tolist()))
            st = ev.stats()
            row = {"mode": mode, "sharing": name, "sims": sims, "seconds": dt, "prompt_tokens": st["prompt_tokens"],
                   "saved": st["shared_saved"], "cache_saved": st["cache_saved"]}
            frac = row["saved"] / max(row["prompt_tokens"], 1)
            print(f"  {mode:15s} {name:18s} {row['saved']:7,} of {row['prompt_tokens']:7,} prompt tokens not "
                  f"computed ({100 * frac:4.1f}%; {row['cache_saved']:,} from the cache); search {dt:.2f} s")
            out.append(row)
        if any(x != searches[0] for x in searches[1:]):
            raise SystemExit("prefix sharing changed the search")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=2, help="native engine threads of the second native row")
    ap.add_argument("--json", default=None)
    ap.add_argument("--prefix-only", action="store_true", help="only the prefix-sharing figures inside MAV-MCTS")
    ap.add_argument("--sims", type=int, default=256, help="simulations of the --prefix-only searches")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="time in wall-clock seconds or in CPU seconds of the measuring thread (for --threads 1 "
                         "on a shared machine)")
    args = ap.parse_args()
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    if args.prefix_only:
        model = MAVModel.load(shipped_model_path("connect_four"), backend="native", threads=1)
        rows = mcts_prefix_sharing(model, args.sims, clock=clock)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"mcts_prefix_sharing": rows}, f, indent=1)
        return
    try:
        import torch
    except ImportError:
        torch = None
    path = shipped_model_path("connect_four")
    models = {"native-1": MAVModel.load(path, backend="native", threads=1),
              f"native-{args.threads}": MAVModel.load(path, backend="native", threads=args.threads),
              "numpy": MAVModel.load(path, backend="numpy")}
    if torch is not None:
        models["torch-1"] = MAVModel.load(path, backend="torch", threads=1)
        models[f"torch-{args.threads}"] = MAVModel.load(path, backend="torch", threads=args.threads)
    counter = MAVModel.load(path, backend="native", threads=1)
    counter.backend.prefix_sharing = False
    cfg = counter.cfg
    n_prompts = 32 if args.quick else 64
    reps = 1 if args.quick else 3
    prompts = prompts_of_random_games(n_prompts)
    batches = (1, 8, 32, 64)
    subsets = {b: prompts[:8] if b == 1 else prompts for b in batches}
    print(f"model: {cfg.num_parameters():,} parameters; {n_prompts} prompts; {reps} repetitions; "
          f"native kernel {counter.backend.engine.kernel}; {args.clock} clock")

    # FLOPs of the work (prefix sharing off) and the reference answers
    work = {}
    ref = {}
    for b in batches:
        counter.backend.engine.reset_stats()
        ref[b] = [o.text for o in counter.generate(subsets[b], batch_size=b)]
        st = counter.backend.stats()
        work[b] = {"flops_per_eval": st["flops"] / len(subsets[b]),
                   "prefill_rows": st["prefill_tokens"] / len(subsets[b]), "decode_tokens": st["decode_tokens"]}
    times = {(n, b): [] for n in models for b in batches}
    for _ in range(reps):
        for b in batches:
            for name, m in models.items():
                t0 = clock()
                outs = m.generate(subsets[b], batch_size=b)
                times[(name, b)].append(clock() - t0)
                if [o.text for o in outs] != ref[b]:
                    print(f"warning: {name} answers differ from the native engine's at batch {b}")
    results = {"model": cfg.to_dict(), "prompts": n_prompts, "reps": reps, "clock": args.clock, "generation": [],
               "mcts": [],
               "kernel": counter.backend.engine.kernel}
    print(f"\n{'backend':10s} " + " ".join(f"{'batch ' + str(b):>16s}" for b in batches)
          + "    (leaf evaluations/s, GFLOP/s)")
    rate = {}
    for name in models:
        row = []
        for b in batches:
            dt = statistics.median(times[(name, b)])
            eps = len(subsets[b]) / dt
            gf = eps * work[b]["flops_per_eval"] / 1e9
            rate[(name, b)] = eps
            row.append(f"{eps:8.1f} {gf:6.2f}")
            results["generation"].append({"backend": name, "batch": b, "evals_per_s": eps, "gflops": gf})
        print(f"{name:10s} " + " ".join(f"{r:>16s}" for r in row))
    if torch is not None:
        torch.set_num_threads(1)
        shapes = layer_shapes(cfg)
        print("\none-thread torch.matmul ceiling of the same shapes (GFLOP/s) and native-1 against it:")
        for b in batches:
            w = work[b]
            prefill_rows = int(w["prefill_rows"] * min(b, len(subsets[b])))
            r_pre = matmul_rate(torch, shapes + [(cfg.d_model, cfg.vocab_size, 0)], max(prefill_rows, 1), clock=clock)
            r_dec = matmul_rate(torch, shapes + [(cfg.d_model, cfg.vocab_size, 1)], b, clock=clock)
            f_pre = w["prefill_rows"]
            f_dec = (w["decode_tokens"] / len(subsets[b])) + 1
            ceiling = (f_pre + f_dec) / (f_pre / r_pre + f_dec / r_dec)
            nat = rate[("native-1", b)] * w["flops_per_eval"] / 1e9
            ratio_t = rate[("native-1", b)] / rate[("torch-1", b)]
            ratio_n = rate[("native-1", b)] / rate[("numpy", b)]
            ratio_2 = rate[(f"native-{args.threads}", b)] / rate[("native-1", b)]
            print(f"  batch {b:2d}: ceiling {ceiling:6.1f}, native-1 {nat:6.2f} ({100 * nat / ceiling:4.1f}%); "
                  f"native-1 / torch-1 {ratio_t:5.2f}x, native-1 / numpy {ratio_n:5.2f}x, "
                  f"native-{args.threads} / native-1 {ratio_2:4.2f}x")
            results["generation"].append({"batch": b, "ceiling_gflops": ceiling, "native_gflops": nat,
                                          "native_vs_torch1": ratio_t, "native_vs_numpy": ratio_n,
                                          "threads_gain": ratio_2})
    sh = models["native-1"].backend.stats()
    saved = sh["shared_saved"] / max(sh["prompt_tokens"], 1)
    print(f"\nprefix sharing: {sh['shared_saved']:,} of {sh['prompt_tokens']:,} prompt tokens not computed "
          f"({100 * saved:.1f}%)")
    results["prefix_saved_fraction"] = saved

    # inside MAV-MCTS
    from mavgame.search.mcts import MCTS
    from mavgame.agents.mav import MAVEvaluator, NativeMAVEvaluator
    sims = 64 if args.quick else 256
    s = mavgame.State("connect_four")
    variants = [("python/numpy", lambda: MAVEvaluator(models["numpy"], cache_size=0)),
                ("python/native", lambda: MAVEvaluator(models["native-1"], cache_size=0)),
                ("C/native-1", lambda: NativeMAVEvaluator(models["native-1"], batch_size=16, threads=1,
                                                          cache_size=0)),
                (f"C/native-{args.threads}",
                 lambda: NativeMAVEvaluator(models["native-1"], batch_size=16, threads=args.threads, cache_size=0))]
    if torch is not None:
        variants.insert(1, ("python/torch-1", lambda: MAVEvaluator(models["torch-1"], cache_size=0)))
    mt = {name: [] for name, _ in variants}
    for _ in range(1 if args.quick else 2):
        for name, make in variants:
            ev = make()
            m = MCTS(ev, num_simulations=sims, batch_size=16, seed=0)
            t0 = clock()
            m.search(s)
            dt = clock() - t0
            n = ev.stats()["requests"] if isinstance(ev, NativeMAVEvaluator) else ev.generated
            mt[name].append(n / dt)
    print(f"\ninside MAV-MCTS ({sims} simulations, batch 16, no output cache): leaf evaluations/s")
    base = statistics.median(mt["python/torch-1"]) if "python/torch-1" in mt else statistics.median(mt["python/numpy"])
    for name, v in mt.items():
        r = statistics.median(v)
        results["mcts"].append({"evaluator": name, "evals_per_s": r})
        print(f"  {name:16s} {r:8.1f}   ({r / base:5.2f}x the Python evaluator over torch-1)")
    results["mcts_prefix_sharing"] = mcts_prefix_sharing(models["native-1"], sims, clock=clock)
    print("\nnative MAV-MCTS time per move (batch 16, 1 thread):")
    ev = NativeMAVEvaluator(models["native-1"], batch_size=16, threads=1, cache_size=0)
    for n in ((64, 100) if args.quick else (100, 256, 1000)):
        m = MCTS(ev, num_simulations=n, batch_size=16, seed=0)
        t0 = clock()
        m.search(s)
        dt = clock() - t0
        results["mcts"].append({"sims": n, "seconds_per_move": dt})
        print(f"  {n:5d} simulations: {dt:6.2f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

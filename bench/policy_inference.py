"""The chess policy network (docs/policy.md): the native engine (``mavgame._core.PolicyNet``, C) against PyTorch
on the same weights, policy evaluations (positions) per second at batch 1 and batch 16.

    python bench/policy_inference.py                 # the shipped 32 x 3 network and the report's 256 x 3
    python bench/policy_inference.py --quick         # the shipped network only, fewer rounds
    python bench/policy_inference.py --model P.pt    # another trained network (or an exported file)
    python bench/policy_inference.py --threads 2     # both sides on 2 threads (PolicyNet(threads=2) against
                                                     # torch.set_num_threads(2)), ratio by wall clock, batch 64 too

Both sides compute the masked policy (logits, softmax over the legal moves) of the same planes of positions
from random games, one thread (torch.set_num_threads(1)); calls interleaved (bench/_timing.py), medians of the
thread CPU time and of the wall clock; the ratio is native / torch on CPU time. The report-sized network has
random weights (torch's initialisation), exported as float32. The largest difference between the two sides'
probabilities is printed as a check.
"""
import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mavgame  # noqa: E402
from mavgame import _core  # noqa: E402
from _timing import fmt_rate, interleaved  # noqa: E402


def positions(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        st = mavgame.State("chess")
        for _ in range(int(rng.integers(4, 60))):
            if st.is_terminal():
                break
            acts = st.legal_actions()
            st.push(int(acts[rng.integers(len(acts))]))
        if not st.is_terminal():
            out.append(st)
    return _core.policy_planes(out), _core.policy_legal_mask(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="a policy.pt or exported file instead of the shipped network")
    ap.add_argument("--quick", action="store_true", help="the shipped (or --model) network only, 5 rounds")
    ap.add_argument("--rounds", type=int, default=0, help="interleaved rounds (default 9, 5 with --quick)")
    ap.add_argument("--min-seconds", type=float, default=0.05, help="each timed call repeats to at least this")
    ap.add_argument("--threads", type=int, default=1, help="threads on both sides (ratio by wall clock when > 1)")
    args = ap.parse_args()
    if args.threads < 1:
        ap.error(f"--threads must be >= 1, got {args.threads}")
    try:
        import torch
    except ImportError:
        print("torch is not installed: nothing to compare the native engine with")
        return 0
    torch.set_num_threads(args.threads)
    from mavgame.policy.network import PolicyConfig, PolicyModel, PolicyNet
    from mavgame.policy.export import policy_file_bytes
    from mavgame.agents.policy import SHIPPED_POLICY

    rounds = args.rounds or (5 if args.quick else 9)
    nets = []
    src = args.model or SHIPPED_POLICY
    tm = PolicyModel.load(src)
    nets.append((f"{'trained' if args.model else 'shipped'} {tm.net.config.channels}x{tm.net.config.blocks}", tm))
    if not args.quick:
        torch.manual_seed(0)
        nets.append(("report-sized 256x3 (random)", PolicyModel(PolicyNet(PolicyConfig(channels=256, blocks=3)))))
    planes_all, mask_all = positions(64)
    wall = args.threads > 1
    batches = (1, 16, 64) if wall else (1, 16)
    if wall:
        print(f"{args.threads} threads a side; {rounds} interleaved rounds; medians of the wall clock "
              f"(the calling thread's CPU time in brackets); ratio by wall clock")
    else:
        print(f"one thread; {rounds} interleaved rounds; medians of thread CPU time (wall clock in brackets)")
    print(f"{'network':30s} {'batch':>5s} {'torch pos/s':>22s} {'native pos/s':>22s} {'native/torch':>12s} "
          f"{'max |dp|':>9s}")
    for name, model in nets:
        nat = _core.PolicyNet(policy_file_bytes(model.net.state_dict(), dataclasses.asdict(model.net.config),
                                                dtype="float32"), threads=args.threads)
        for batch in batches:
            planes, mask = planes_all[:batch].copy(), mask_all[:batch].copy()
            diff = float(np.abs(nat.policy(planes, mask) - model.policy(planes, mask)).max())
            reps = {}
            for side, fn in (("torch", model.policy), ("native", nat.policy)):
                k, t = 1, 0.0
                while True:  # calls per timed block: at least --min-seconds
                    t0 = time.perf_counter()
                    for _ in range(k):
                        fn(planes, mask)
                    t = time.perf_counter() - t0
                    if t >= args.min_seconds or k >= 1 << 16:
                        break
                    k *= 2
                reps[side] = k

            def block(fn, k):
                return lambda: [fn(planes, mask) for _ in range(k)]

            res = interleaved({"torch": block(model.policy, reps["torch"]),
                               "native": block(nat.policy, reps["native"])}, rounds)
            rate = {s: (batch * reps[s] / res[s][1], batch * reps[s] / res[s][0]) for s in res}
            if wall:  # the headline figure is the wall clock's
                rate = {s: (r[1], r[0]) for s, r in rate.items()}
            print(f"{name:30s} {batch:5d} {fmt_rate(rate['torch'][0]):>12s} [{fmt_rate(rate['torch'][1], ''):>7s}] "
                  f"{fmt_rate(rate['native'][0]):>12s} [{fmt_rate(rate['native'][1], ''):>7s}] "
                  f"{rate['native'][0] / rate['torch'][0]:11.2f}x {diff:9.1e}")
    print(f"native kernel: {nat.kernel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

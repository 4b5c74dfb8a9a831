"""CPU seconds (of the measuring thread) of one native MAV-MCTS move at 100 simulations, batch 16, one thread,
no output cache, on the shipped Connect Four model, from the start position; the sorted times of N searches.

    python experiments/2026-12-02-native-engine-speed/mcts_move_time.py 5 [REPO]   # REPO: a checkout to import
"""
import sys
import time

sys.path.insert(0, sys.argv[2] if len(sys.argv) > 2 else ".")

import mavgame  # noqa: E402
from mavgame.agents.mav import NativeMAVEvaluator  # noqa: E402
from mavgame.model.inference import MAVModel, shipped_model_path  # noqa: E402
from mavgame.search.mcts import MCTS  # noqa: E402


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    m = MAVModel.load(shipped_model_path("connect_four"), backend="native", threads=1)
    ev = NativeMAVEvaluator(m, batch_size=16, threads=1, cache_size=0)
    ts = []
    for _ in range(n):
        t0 = time.thread_time()
        res = MCTS(ev, num_simulations=100, batch_size=16, seed=0).search(mavgame.State("connect_four"))
        ts.append(time.thread_time() - t0)
    print(f"{mavgame.__file__}: 100 simulations, CPU s per move {sorted(round(t, 3) for t in ts)}; "
          f"visits {res.visits.tolist()}")


if __name__ == "__main__":
    main()

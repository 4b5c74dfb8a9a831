"""MCTS speed: simulations per second on one core, mavgame vs OpenSpiel's MCTSBot (and mctx).

Two settings, for Connect Four and chess from the start position:

- tree overhead: an evaluator of constant cost (mavgame: every action valued 0.5, in C;
  OpenSpiel: an Evaluator returning a uniform prior and value 0), so the time is the tree's own;
- playouts: uniform prior and one random playout per leaf (the paper's basic MCTS baseline;
  OpenSpiel: RandomRolloutEvaluator(n_rollouts=1)).

Each engine runs searches of --sims simulations (the paper's budgets are 100-2000) until
--seconds have passed, and we report simulations per second and the ratio mavgame / OpenSpiel.
mctx (DeepMind's JAX MCTS) is timed too when it is installed (CPU, batch 1, a constant-cost
recurrent function with the game's branching factor; JAX compilation excluded).

    python bench/mcts.py                 # both games, both settings
    python bench/mcts.py --games connect_four --sims 1000 --seconds 2
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import mavgame  # noqa: E402
from mavgame import _core  # noqa: E402


def timed(fn, sims, seconds):
    """Run fn() (one search of `sims` simulations) repeatedly for about `seconds`; sims/s."""
    fn()  # warm-up
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += sims
        dt = time.perf_counter() - t0
        if dt >= seconds:
            return n / dt


def mavgame_rate(game, evaluator, sims, seconds):
    tree = _core.MCTSTree(game)
    st = mavgame.State(game)
    ev = _core.mcts_constant_evaluator(0.5) if evaluator == "constant" else _core.mcts_playout_evaluator(1, 0, 1)

    def one():
        tree.set_root(st)
        tree.search(ev, sims)

    return timed(one, sims, seconds)


def openspiel_rate(game, evaluator, sims, seconds):
    try:
        import pyspiel
        from open_spiel.python.algorithms import mcts
    except ImportError:
        return None
    g = pyspiel.load_game(game)

    class Constant(mcts.Evaluator):
        def evaluate(self, state):
            return np.zeros(g.num_players())

        def prior(self, state):
            legal = state.legal_actions()
            return [(a, 1.0 / len(legal)) for a in legal]

    ev = Constant() if evaluator == "constant" else mcts.RandomRolloutEvaluator(n_rollouts=1,
                                                                                random_state=np.random.RandomState(1))
    bot = mcts.MCTSBot(g, uct_c=1.4, max_simulations=sims, evaluator=ev, solve=False,
                       random_state=np.random.RandomState(1))
    st = g.new_initial_state()
    return timed(lambda: bot.mcts_search(st), sims, seconds)


def mctx_rate(game, sims, seconds):
    try:
        import jax
        import jax.numpy as jnp
        import mctx
    except ImportError:
        return None
    num_actions = {"connect_four": 7, "chess": 4672}.get(game, 7)
    jax.config.update("jax_platform_name", "cpu")

    def recurrent_fn(params, rng, action, embedding):
        out = mctx.RecurrentFnOutput(reward=jnp.zeros(1), discount=-jnp.ones(1),
                                     prior_logits=jnp.zeros((1, num_actions)), value=jnp.zeros(1))
        return out, embedding

    root = mctx.RootFnOutput(prior_logits=jnp.zeros((1, num_actions)), value=jnp.zeros(1),
                             embedding=jnp.zeros(1))

    @jax.jit
    def search(key):
        return mctx.muzero_policy(params=(), rng_key=key, root=root, recurrent_fn=recurrent_fn,
                                  num_simulations=sims).action

    key = jax.random.PRNGKey(0)
    search(key).block_until_ready()
    return timed(lambda: search(key).block_until_ready(), sims, seconds)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default="connect_four,chess")
    ap.add_argument("--sims", type=int, default=1000, help="simulations per search")
    ap.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    args = ap.parse_args()
    rows = []
    for game in args.games.split(","):
        for evaluator in ("constant", "playout"):
            sims = args.sims
            ours = mavgame_rate(game, evaluator, sims, args.seconds)
            osp = openspiel_rate(game, evaluator, min(sims, 200 if game == "chess" else sims), args.seconds)
            mx = mctx_rate(game, sims, args.seconds) if evaluator == "constant" else None
            rows.append((game, evaluator, ours, osp, mx))
            fmt = lambda x: "n/a" if x is None else f"{x:,.0f}"  # noqa: E731
            ratio = "n/a" if not osp else f"{ours / osp:,.1f}x"
            ratio_mx = "" if not mx else f"  mctx {fmt(mx)} ({ours / mx:,.1f}x)"
            print(f"{game:13s} {evaluator:9s} mavgame {fmt(ours):>12s} sims/s   OpenSpiel MCTSBot {fmt(osp):>9s} "
                  f"sims/s   ratio {ratio}{ratio_mx}", flush=True)
    try:
        import mctx  # noqa: F401
    except ImportError:
        print("mctx: not installed (pip install mctx pulls in jax); skipped")
    return rows


if __name__ == "__main__":
    main()

"""AlphaZero self-play speed on Connect Four: positions per second, search and network time apart,
mavgame against OpenSpiel's AlphaZero-style MCTS on the same settings and the same network.

- mavgame: ``mavgame.az.play_games`` - the C MCTS of every game in flight; C gathers the leaves of all
  games into one batch, the network runs once per batch, C backs up (``--games`` games at once).
  Also timed with an evaluation cache of 2^16 positions (``cache``: like the peer's evaluator) and with
  one game at a time (``parallel 1``: one leaf per network call, like the peer), and as an AZdb team of
  ``--team`` players (latent planes, intrinsic head, rewards summed from root to leaf in C).
- OpenSpiel: ``pyspiel`` Connect Four with ``open_spiel.python.algorithms.mcts.MCTSBot`` (PUCT child
  selection ``SearchNode.puct_value``, ``solve=False``, Dirichlet noise at the root) and an evaluator
  written like OpenSpiel's ``alpha_zero.evaluator.AlphaZeroEvaluator`` (observation tensor and legal
  mask per state, one network call per leaf, its LRU cache as a dict) around the same torch network;
  the game loop of OpenSpiel's ``alpha_zero._play_game`` (visit-count policy, temperature for the
  first plies, then the most visited move).  OpenSpiel's own evaluator needs JAX, which is not
  installed here; the network is identical in both, so only the search and batching differ.

Settings (both): --sims simulations per move, c = 1.25 (OpenSpiel's constant uct_c; mavgame's c(s)
with c_base 19652 is 1.25 + log((1 + N + 19652) / 19652) <= 1.256 at these N), Dirichlet alpha 1 at
fraction 0.25, temperature 1 for the first --temperature-plies plies, the AZNet of --blocks residual
blocks x --channels channels with random weights (seeded; the same weights for both), torch on one
thread.  Rounds are interleaved; medians are printed with the ratio mavgame / OpenSpiel.

    python bench/az_selfplay.py                      # about a minute on an idle core
    python bench/az_selfplay.py --games 64 --peer-games 4 --rounds 3 --sims 100
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import mavgame  # noqa: E402


def make_net(blocks, channels, seed):
    import torch
    from mavgame.az.network import AZNet
    torch.manual_seed(seed)
    return AZNet((4, 6, 7), 7, blocks=blocks, channels=channels).eval()


def mavgame_round(net, games, parallel, sims, temp_plies, seed, cache_log2=0):
    from mavgame.az.network import torch_evaluator
    from mavgame.az.selfplay import play_games
    r = play_games(torch_evaluator(net), mavgame.State("connect_four"), num_games=games, parallel_games=parallel,
                   seed=seed, num_simulations=sims, temperature_plies=temp_plies, dirichlet_alpha=1.0,
                   dirichlet_frac=0.25, cache_log2=cache_log2)
    return len(r.z), r.seconds, r.search_seconds, r.network_seconds, r.stats["evaluations"]


def mavgame_team_round(players, blocks, channels, games, parallel, sims, temp_plies, seed):
    """AZdb self-play of a team of ``players`` (one network with latent planes and the intrinsic head,
    random weights; random pairings and random diversity weights): the C search also replays every
    leaf's path for the intrinsic rewards, Python appends the latent planes and combines the values."""
    import torch
    from mavgame.az.azdb import player_lambdas
    from mavgame.az.network import AZNet
    from mavgame.az.selfplay import play_games
    from mavgame.az.team import team_evaluator
    torch.manual_seed(seed)
    net = AZNet((4 + players, 6, 7), 7, blocks=blocks, channels=channels, intrinsic=True).eval()
    rng = np.random.default_rng(seed)
    latents = rng.integers(0, players, size=(games, 2))
    w = (rng.normal(size=(players, 4, 6, 7)) * 0.01).astype(np.float32)
    r = play_games(team_evaluator(net, players, player_lambdas(players)), mavgame.State("connect_four"),
                   num_games=games, parallel_games=parallel, seed=seed, num_simulations=sims,
                   temperature_plies=temp_plies, dirichlet_alpha=1.0, dirichlet_frac=0.25, latents=latents,
                   reward_weights=w)
    return len(r.z), r.seconds, r.search_seconds, r.network_seconds, r.stats["evaluations"]


def openspiel_obs(state):
    """OpenSpiel's Connect Four planes (first player's stones, second's, empty; bottom row first) as
    mavgame's observation tensor (the same three, top row first, and the side to move)."""
    obs = np.asarray(state.observation_tensor(), np.float32)
    return np.concatenate([obs.reshape(3, 6, 7)[:, ::-1, :], np.full((1, 6, 7), state.current_player(), np.float32)])


def check_observations(plies=20, seed=1):
    """Both engines show the network the same tensor (and share action ids) along a random game."""
    import pyspiel
    s, m = pyspiel.load_game("connect_four").new_initial_state(), mavgame.State("connect_four")
    rng = np.random.RandomState(seed)
    for _ in range(plies):
        if s.is_terminal():
            break
        a = int(rng.choice(s.legal_actions()))
        s.apply_action(a)
        m.push(a)
        if s.is_terminal():
            break
        assert np.array_equal(openspiel_obs(s), m.observation_tensor()), "observation mapping differs"


def openspiel_round(net, games, sims, temp_plies, seed):
    import pyspiel
    import torch
    from open_spiel.python.algorithms import mcts

    game = pyspiel.load_game("connect_four")
    clock = {"net": 0.0, "calls": 0}

    class Evaluator(mcts.Evaluator):
        """OpenSpiel's AlphaZeroEvaluator with the torch network (one leaf per call, cached)."""

        def __init__(self):
            self.cache = {}

        def _inference(self, state):
            obs = np.asarray(state.observation_tensor(), np.float32)
            mask = np.asarray(state.legal_actions_mask(), bool)
            key = obs.tobytes() + mask.tobytes()
            hit = self.cache.get(key)
            if hit is not None:
                return hit
            t = time.perf_counter()
            x = openspiel_obs(state)
            with torch.no_grad():
                logits, v = net(torch.from_numpy(x[None]))
            lg = logits[0].numpy()
            lg = np.where(mask, lg, -np.inf)
            p = np.exp(lg - lg.max())
            out = (float(v[0]), p / p.sum())
            clock["net"] += time.perf_counter() - t
            clock["calls"] += 1
            if len(self.cache) < 2 ** 16:
                self.cache[key] = out
            return out

        def evaluate(self, state):
            value, _ = self._inference(state)
            return np.array([value, -value])

        def prior(self, state):
            _, policy = self._inference(state)
            return [(a, policy[a]) for a in state.legal_actions()]

    rng = np.random.RandomState(seed)
    ev = Evaluator()
    bot = mcts.MCTSBot(game, 1.25, sims, ev, solve=False, random_state=rng,
                       child_selection_fn=mcts.SearchNode.puct_value, dirichlet_noise=(0.25, 1.0))
    positions = 0
    t0 = time.perf_counter()
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            root = bot.mcts_search(state)
            policy = np.zeros(game.num_distinct_actions())
            for c in root.children:
                policy[c.action] = c.explore_count
            policy /= policy.sum()
            if len(state.history()) < temp_plies:
                action = rng.choice(len(policy), p=policy)
            else:
                action = root.best_child().action
            state.apply_action(action)
            positions += 1
    seconds = time.perf_counter() - t0
    return positions, seconds, seconds - clock["net"], clock["net"], clock["calls"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=32, help="mavgame games per round, all at once (default 32)")
    ap.add_argument("--peer-games", type=int, default=2,
                    help="games per round played one at a time: OpenSpiel and mavgame parallel 1 (default 2)")
    ap.add_argument("--sims", type=int, default=100)
    ap.add_argument("--temperature-plies", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--channels", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--team", type=int, default=5, help="AZdb team row: players (0: none; default 5)")
    a = ap.parse_args(argv)
    import torch
    torch.set_num_threads(1)
    net = make_net(a.blocks, a.channels, a.seed)
    parallel = a.games
    try:
        import pyspiel  # noqa: F401
        have_os = True
        check_observations()
    except ImportError:
        have_os = False
    runs = {"mavgame": [], "mavgame_cache": [], "mavgame_p1": [], "mavgame_team": [], "openspiel": []}
    for r in range(a.rounds):
        runs["mavgame"].append(mavgame_round(net, a.games, parallel, a.sims, a.temperature_plies, a.seed + r))
        runs["mavgame_cache"].append(mavgame_round(net, a.games, parallel, a.sims, a.temperature_plies, a.seed + r,
                                                   cache_log2=16))
        runs["mavgame_p1"].append(mavgame_round(net, a.peer_games, 1, a.sims, a.temperature_plies, a.seed + r))
        if a.team > 1:
            runs["mavgame_team"].append(mavgame_team_round(a.team, a.blocks, a.channels, a.games, parallel, a.sims,
                                                           a.temperature_plies, a.seed + r))
        if have_os:
            runs["openspiel"].append(openspiel_round(net, a.peer_games, a.sims, a.temperature_plies, a.seed + r))
    print(f"Connect Four self-play, {a.rounds} rounds of {a.games} games (mavgame, all at once) and {a.peer_games} "
          f"games (one at a time), {a.sims} simulations/move, AZNet {a.blocks}x{a.channels}, torch threads 1 "
          "(medians)")
    print(f"{'engine':<36}{'positions/s':>12}{'search s/pos':>14}{'network s/pos':>15}{'net calls/pos':>15}")
    med = {}
    labels = {"mavgame": f"mavgame (parallel {parallel})", "mavgame_cache": f"mavgame (parallel {parallel}, cache)",
              "mavgame_p1": "mavgame (parallel 1)", "mavgame_team": f"mavgame AZdb team {a.team} (parallel {parallel})",
              "openspiel": "OpenSpiel MCTSBot"}
    for k, rows in runs.items():
        if not rows:
            continue
        pps = statistics.median(p / s for p, s, _, _, _ in rows)
        srch = statistics.median(sr / p for p, _, sr, _, _ in rows)
        netw = statistics.median(nt / p for p, _, _, nt, _ in rows)
        calls = statistics.median(c / p for p, _, _, _, c in rows)
        med[k] = (pps, srch, netw)
        print(f"{labels[k]:<36}{pps:>12.1f}{srch * 1e3:>12.2f}ms{netw * 1e3:>13.2f}ms{calls:>15.1f}")
    if "openspiel" in med:
        for k in [k for k in ("mavgame", "mavgame_cache", "mavgame_p1", "mavgame_team") if k in med]:
            print(f"ratio {labels[k]} / OpenSpiel: positions/s {med[k][0] / med['openspiel'][0]:.1f}x, "
                  f"search time per position {med['openspiel'][1] / max(med[k][1], 1e-12):.0f}x less")
    else:
        print("OpenSpiel (pyspiel) is not installed: no peer run")


if __name__ == "__main__":
    main()
